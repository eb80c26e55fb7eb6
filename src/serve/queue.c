/* queue.c - active heap, backoff heaps and unschedulable set of pending pods (see queue.h).
 *
 * Every entry sits in the key map; heap members also record their heap index so that a
 * delete or update is O(log n). Pods of equal priority are tried in the order they were
 * added or last came back from an attempt (kube-scheduler's PrioritySort and its
 * QueuedPodInfo.Timestamp), a sequence number breaking ties. As kube-scheduler
 * v1.37's backoff queue (backoff_queue.go, SchedulerPopFromBackoffQ on by default), a backoff
 * ends at the start of the whole-second window after the one its expiry falls in, pods moved
 * while backing off wait in one heap (popped at once when no pod is active) and pods that
 * failed with an error in another (never popped early). */
#include "serve/queue.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/keymap.h"

struct queue_entry {
    struct serve_queue_item item; /* item.key points at key below */
    uint64_t seq;
    enum serve_queue_state state;
    int64_t backoff_until_ms; /* the backoff is over from then on (0: no backoff) */
    bool error_heap;          /* in (or bound for) the error backoff heap */
    int64_t unsched_since_ms;
    /* kube-scheduler's QueuedPodInfo.Timestamp, which PrioritySort orders equal priorities
     * by: when the pod was added, then when it last came back after an attempt */
    int64_t stamp_ms;
    /* kube-scheduler's UnschedulableCount and ConsecutiveErrorsCount: the backoff counts the
     * errors in a row since the last rejection when there are any, else the rejections */
    int unsched_count, errors;
    size_t idx;                        /* index in its heap */
    struct queue_entry *uprev, *unext; /* unschedulable list, oldest first */
    char key[];
};

struct queue_heap {
    struct queue_entry **v;
    size_t n, cap;
    bool (*less)(const struct queue_entry *, const struct queue_entry *);
};

struct serve_queue {
    struct serve_queue_opts o;
    struct keymap map;
    /* backoff: moved by an event (or an update) while backing off, kube-scheduler's
     * podBackoffQ; errbackoff: failed with an error, its podErrorBackoffQ */
    struct queue_heap active, backoff, errbackoff;
    /* Unschedulable pods in the order they were parked (unsched_since_ms never decreases),
     * so the periodic flush only looks at the head. */
    struct queue_entry *uhead, *utail;
    size_t nunsched;
    size_t ninflight;
    size_t ngated;
    uint64_t seq;
    int64_t now_ms; /* the time of the call that moves entries (first_active_ms) */
};

static bool active_less(const struct queue_entry *a, const struct queue_entry *b)
{
    if (a->item.priority != b->item.priority)
        return a->item.priority > b->item.priority;
    if (a->stamp_ms != b->stamp_ms)
        return a->stamp_ms < b->stamp_ms;
    return a->seq < b->seq;
}

/* kube-scheduler's lessBackoffCompletedWithPriority: by window, then as the active heap */
static bool backoff_less(const struct queue_entry *a, const struct queue_entry *b)
{
    if (a->backoff_until_ms != b->backoff_until_ms)
        return a->backoff_until_ms < b->backoff_until_ms;
    return active_less(a, b);
}

static bool errbackoff_less(const struct queue_entry *a, const struct queue_entry *b)
{
    if (a->backoff_until_ms != b->backoff_until_ms)
        return a->backoff_until_ms < b->backoff_until_ms;
    return a->seq < b->seq;
}

static void heap_swap(struct queue_heap *h, size_t i, size_t j)
{
    struct queue_entry *t = h->v[i];

    h->v[i] = h->v[j];
    h->v[j] = t;
    h->v[i]->idx = i;
    h->v[j]->idx = j;
}

static void heap_up(struct queue_heap *h, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;

        if (!h->less(h->v[i], h->v[p]))
            break;
        heap_swap(h, i, p);
        i = p;
    }
}

static void heap_down(struct queue_heap *h, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;

        if (l < h->n && h->less(h->v[l], h->v[m]))
            m = l;
        if (r < h->n && h->less(h->v[r], h->v[m]))
            m = r;
        if (m == i)
            break;
        heap_swap(h, i, m);
        i = m;
    }
}

static int heap_push(struct queue_heap *h, struct queue_entry *e)
{
    if (h->n == h->cap) {
        size_t ncap = h->cap ? h->cap * 2 : 64;
        struct queue_entry **nv = realloc(h->v, ncap * sizeof(*nv));

        if (!nv)
            return -ENOMEM;
        h->v = nv;
        h->cap = ncap;
    }
    h->v[h->n] = e;
    e->idx = h->n++;
    heap_up(h, e->idx);
    return 0;
}

static void heap_remove(struct queue_heap *h, size_t i)
{
    h->n--;
    if (i != h->n) {
        h->v[i] = h->v[h->n];
        h->v[i]->idx = i;
        heap_down(h, i);
        heap_up(h, i);
    }
}

/* queue_detach takes an entry out of whatever part holds it; it is then "in flight". */
static void queue_detach(struct serve_queue *q, struct queue_entry *e)
{
    switch (e->state) {
    case SERVE_QUEUE_ACTIVE:
        heap_remove(&q->active, e->idx);
        break;
    case SERVE_QUEUE_BACKOFF:
        heap_remove(e->error_heap ? &q->errbackoff : &q->backoff, e->idx);
        break;
    case SERVE_QUEUE_UNSCHEDULABLE:
        q->nunsched--;
        if (e->uprev)
            e->uprev->unext = e->unext;
        else
            q->uhead = e->unext;
        if (e->unext)
            e->unext->uprev = e->uprev;
        else
            q->utail = e->uprev;
        e->uprev = e->unext = NULL;
        break;
    case SERVE_QUEUE_IN_FLIGHT:
        q->ninflight--;
        break;
    case SERVE_QUEUE_GATED:
        q->ngated--;
        break;
    }
    e->state = SERVE_QUEUE_IN_FLIGHT;
    q->ninflight++;
}

/* The attach functions expect a detached (in-flight) entry. Heaps reserve their room ahead
 * (queue_reserve) so that moving an entry between parts cannot fail. */
static void queue_attach(struct serve_queue *q, struct queue_entry *e, enum serve_queue_state s)
{
    q->ninflight--;
    e->state = s;
    switch (s) {
    case SERVE_QUEUE_ACTIVE:
        if (e->item.first_active_ms < 0)
            e->item.first_active_ms = q->now_ms;
        (void)heap_push(&q->active, e);
        break;
    case SERVE_QUEUE_BACKOFF:
        (void)heap_push(e->error_heap ? &q->errbackoff : &q->backoff, e);
        break;
    case SERVE_QUEUE_UNSCHEDULABLE:
        e->uprev = q->utail;
        e->unext = NULL;
        if (q->utail)
            q->utail->unext = e;
        else
            q->uhead = e;
        q->utail = e;
        q->nunsched++;
        break;
    case SERVE_QUEUE_IN_FLIGHT:
        q->ninflight++;
        break;
    case SERVE_QUEUE_GATED:
        q->ngated++;
        break;
    }
}

static int queue_reserve(struct serve_queue *q)
{
    size_t need = q->map.len + 1;
    struct queue_heap *hs[3] = {&q->active, &q->backoff, &q->errbackoff};
    int i;

    for (i = 0; i < 3; i++) {
        struct queue_heap *h = hs[i];

        if (h->cap < need) {
            size_t ncap = h->cap ? h->cap : 64;
            struct queue_entry **nv;

            while (ncap < need)
                ncap *= 2;
            nv = realloc(h->v, ncap * sizeof(*nv));
            if (!nv)
                return -ENOMEM;
            h->v = nv;
            h->cap = ncap;
        }
    }
    return 0;
}

struct serve_queue *serve_queue_new(const struct serve_queue_opts *o)
{
    struct serve_queue *q = calloc(1, sizeof(*q));

    if (!q)
        return NULL;
    if (o)
        q->o = *o;
    if (q->o.initial_backoff_ms <= 0)
        q->o.initial_backoff_ms = 1000;
    if (q->o.max_backoff_ms <= 0)
        q->o.max_backoff_ms = 10000;
    if (q->o.max_unschedulable_ms <= 0)
        q->o.max_unschedulable_ms = 300000;
    q->active.less = active_less;
    q->backoff.less = backoff_less;
    q->errbackoff.less = errbackoff_less;
    return q;
}

void serve_queue_free(struct serve_queue *q, void (*free_data)(void *data))
{
    size_t i;

    if (!q)
        return;
    for (i = 0; i < q->map.cap; i++) {
        struct queue_entry *e = q->map.slots[i].value;

        if (!q->map.slots[i].key)
            continue;
        if (free_data && e->item.data)
            free_data(e->item.data);
        free(e);
    }
    keymap_release(&q->map);
    free(q->active.v);
    free(q->backoff.v);
    free(q->errbackoff.v);
    free(q);
}

int serve_queue_add(struct serve_queue *q, const char *key, int32_t priority, void *data,
                    int64_t now_ms, void **old_data)
{
    struct queue_entry *e = keymap_get(&q->map, key);
    enum serve_queue_state was;
    size_t klen;

    if (old_data)
        *old_data = NULL;
    if (queue_reserve(q))
        return -ENOMEM;
    q->now_ms = now_ms;
    if (e) {
        void *was_data = e->item.data;

        if (old_data)
            *old_data = was_data;
        e->item.data = data;
        if (e->state == SERVE_QUEUE_UNSCHEDULABLE && q->o.same && q->o.same(was_data, data)) {
            e->item.priority = priority; /* (a priority change is a change: not the same) */
            return 0;
        }
        if (e->state == SERVE_QUEUE_IN_FLIGHT) {
            e->item.priority = priority;
            return 0;
        }
        was = e->state;
        queue_detach(q, e);
        e->item.priority = priority;
        /* An updated pod may fit now: an unschedulable one goes back to be tried after its
         * backoff, as after a move (kube-scheduler's Update: the plugins' hints say Queue,
         * queueAfterBackoff), a gated one (it may have lost its gates) at once; one backing
         * off stays in its heap unless its backoff is over. */
        if (was == SERVE_QUEUE_UNSCHEDULABLE)
            e->error_heap = false;
        queue_attach(q, e,
                     was == SERVE_QUEUE_GATED || e->backoff_until_ms <= now_ms
                         ? SERVE_QUEUE_ACTIVE
                         : SERVE_QUEUE_BACKOFF);
        return 0;
    }
    klen = strlen(key);
    e = calloc(1, sizeof(*e) + klen + 1);
    if (!e)
        return -ENOMEM;
    memcpy(e->key, key, klen + 1);
    e->item.key = e->key;
    e->item.priority = priority;
    e->item.added_ms = e->stamp_ms = now_ms;
    e->item.first_active_ms = -1;
    e->item.data = data;
    e->seq = q->seq++;
    if (keymap_put(&q->map, e->key, e, NULL)) {
        free(e);
        return -ENOMEM;
    }
    e->state = SERVE_QUEUE_IN_FLIGHT;
    q->ninflight++;
    queue_attach(q, e, SERVE_QUEUE_ACTIVE);
    return 0;
}

void *serve_queue_delete(struct serve_queue *q, const char *key)
{
    struct queue_entry *e = keymap_get(&q->map, key);
    void *data;

    if (!e)
        return NULL;
    queue_detach(q, e);
    q->ninflight--;
    keymap_del(&q->map, key);
    data = e->item.data;
    free(e);
    return data;
}

void *serve_queue_done(struct serve_queue *q, const char *key)
{
    return serve_queue_delete(q, key);
}

const struct serve_queue_item *serve_queue_get(const struct serve_queue *q, const char *key)
{
    struct queue_entry *e = keymap_get(&q->map, key);

    return e ? &e->item : NULL;
}

static void queue_promote_heap(struct serve_queue *q, struct queue_heap *h, int64_t now_ms)
{
    while (h->n && h->v[0]->backoff_until_ms <= now_ms) {
        struct queue_entry *e = h->v[0];

        queue_detach(q, e);
        queue_attach(q, e, SERVE_QUEUE_ACTIVE);
    }
}

const struct serve_queue_item *serve_queue_pop(struct serve_queue *q, int64_t now_ms)
{
    struct queue_entry *e;

    q->now_ms = now_ms;
    queue_promote_heap(q, &q->backoff, now_ms);
    queue_promote_heap(q, &q->errbackoff, now_ms);
    if (q->active.n)
        e = q->active.v[0];
    else if (q->o.pop_backoff && q->backoff.n)
        e = q->backoff.v[0]; /* kube-scheduler's PopFromBackoffQ: nothing else to do */
    else
        return NULL;
    queue_detach(q, e);
    e->item.pops++;
    return &e->item;
}

int64_t serve_queue_backoff_ms(const struct serve_queue *q, int attempts)
{
    int64_t b = q->o.initial_backoff_ms;
    int i;

    for (i = 1; i < attempts && b < q->o.max_backoff_ms; i++)
        b *= 2;
    return b < q->o.max_backoff_ms ? b : q->o.max_backoff_ms;
}

/* queue_window_start: the start of the whole-second window holding t (kube-scheduler's
 * alignToWindow, time.Truncate to backoffQOrderingWindowDuration: whole seconds of the wall
 * clock, which is o.wall_offset_ms ahead of the clock t is read from) */
static int64_t queue_window_start(const struct serve_queue *q, int64_t t)
{
    int64_t r = (t + q->o.wall_offset_ms) % 1000;

    return t - (r < 0 ? r + 1000 : r);
}

static void queue_fail(struct serve_queue *q, const char *key, int64_t now_ms,
                       enum serve_queue_state to)
{
    struct queue_entry *e = keymap_get(&q->map, key);

    if (!e)
        return;
    queue_detach(q, e);
    e->item.attempts++;
    e->item.flushed = false;
    if (to == SERVE_QUEUE_BACKOFF) {
        e->errors++;
    } else {
        e->unsched_count++;
        e->errors = 0;
    }
    e->error_heap = to == SERVE_QUEUE_BACKOFF;
    /* getBackoffTime aligns the expiry down to its window, and isEntityBackingoff holds the
     * pod while the current window is not past it: the backoff ends at the next window */
    e->stamp_ms = now_ms;
    e->backoff_until_ms =
        queue_window_start(
            q, now_ms + serve_queue_backoff_ms(q, e->errors ? e->errors : e->unsched_count)) +
        1000;
    e->unsched_since_ms = now_ms;
    queue_attach(q, e, to);
}

void serve_queue_unschedulable(struct serve_queue *q, const char *key, int64_t now_ms)
{
    queue_fail(q, key, now_ms, SERVE_QUEUE_UNSCHEDULABLE);
}

void serve_queue_backoff(struct serve_queue *q, const char *key, int64_t now_ms)
{
    queue_fail(q, key, now_ms, SERVE_QUEUE_BACKOFF);
}

void serve_queue_gated(struct serve_queue *q, const char *key)
{
    struct queue_entry *e = keymap_get(&q->map, key);

    if (!e)
        return;
    queue_detach(q, e);
    e->item.first_active_ms = -1;
    e->item.flushed = false;
    queue_attach(q, e, SERVE_QUEUE_GATED);
}

static size_t queue_move(struct serve_queue *q, int64_t now_ms, int64_t older_than_ms)
{
    size_t moved = 0;

    q->now_ms = now_ms;
    while (q->uhead) {
        struct queue_entry *e = q->uhead;

        /* oldest first: the first one young enough ends a flush */
        if (older_than_ms >= 0 && e->unsched_since_ms > older_than_ms)
            break;
        queue_detach(q, e);
        e->item.flushed = older_than_ms >= 0;
        e->error_heap = false;
        queue_attach(q, e,
                     e->backoff_until_ms <= now_ms ? SERVE_QUEUE_ACTIVE : SERVE_QUEUE_BACKOFF);
        moved++;
    }
    return moved;
}

size_t serve_queue_move_all(struct serve_queue *q, int64_t now_ms)
{
    return queue_move(q, now_ms, -1);
}

size_t serve_queue_move_if(struct serve_queue *q, int64_t now_ms, bool (*pred)(const void *data))
{
    struct queue_entry *e = q->uhead, *next;
    size_t moved = 0;

    for (; e; e = next) {
        next = e->unext;
        if (!pred(e->item.data))
            continue;
        queue_detach(q, e);
        e->error_heap = false;
        queue_attach(q, e,
                     e->backoff_until_ms <= now_ms ? SERVE_QUEUE_ACTIVE : SERVE_QUEUE_BACKOFF);
        moved++;
    }
    return moved;
}

size_t serve_queue_flush(struct serve_queue *q, int64_t now_ms)
{
    /* (kube-scheduler: parked for longer than the duration, strictly) */
    int64_t limit = now_ms - q->o.max_unschedulable_ms - 1;

    return limit < 0 ? 0 : queue_move(q, now_ms, limit);
}

int64_t serve_queue_next_ms(const struct serve_queue *q, int64_t now_ms)
{
    int64_t best = -1;

    if (q->active.n || (q->o.pop_backoff && q->backoff.n)) /* (popped when none is active) */
        return 0;
    if (q->errbackoff.n)
        best = q->errbackoff.v[0]->backoff_until_ms - now_ms;
    if (q->backoff.n && (best < 0 || q->backoff.v[0]->backoff_until_ms - now_ms < best))
        best = q->backoff.v[0]->backoff_until_ms - now_ms;
    if (best < 0 && !q->errbackoff.n && !q->backoff.n)
        return -1;
    return best < 0 ? 0 : best;
}

size_t serve_queue_count(const struct serve_queue *q, enum serve_queue_state s)
{
    switch (s) {
    case SERVE_QUEUE_ACTIVE:
        return q->active.n;
    case SERVE_QUEUE_BACKOFF:
        return q->backoff.n + q->errbackoff.n;
    case SERVE_QUEUE_UNSCHEDULABLE:
        return q->nunsched;
    case SERVE_QUEUE_IN_FLIGHT:
        return q->ninflight;
    case SERVE_QUEUE_GATED:
        return q->ngated;
    }
    return 0;
}
