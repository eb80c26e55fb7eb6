/* binder.c - the thread sending the scheduler's writes (see binder-int.h). Two FIFO lists, binds
 * and the rest, filled by any thread under mu; the binder's thread moves tasks from them into
 * its kube_async set while fewer than max are in flight (a bind whenever one waits, except
 * that a quarter of the slots stay for the others while any of them waits), runs the
 * set, and decides on each answer: retry (back into the set after a delay, keeping its slot)
 * or report (the callback, then the slot is free). */
#include "serve/binder-int.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"

#define BINDER_MAX_WORKERS 64
#define BINDER_MAX_RETRIES 10
#define BINDER_IDLE_WAIT_MS 1000
/* With this many writes in flight, answers are handled in batches at most once per window:
 * one wakeup per batch instead of one per answer cut the scheduler's CPU per pod by a fifth
 * (docs/benchmarks-serve.md); a write's answer is seen at most 2 ms late, and only then. */
#define BINDER_COALESCE_US 2000
#define BINDER_COALESCE_BUSY 4
/* Events on their own client go over at most this many connections, pipelined past them:
 * kube-scheduler's event recorder sends them one after the other, and nothing waits on them;
 * binds keep a connection each, since the API server answers a connection's requests in turn. */
#define BINDER_EVENT_CONNS 2

struct task_list {
    struct serve_task *head, *tail;
    int n;
};

struct serve_binder {
    struct kube_client *c;
    serve_task_done_fn done;
    void *ud;
    struct kube_async *async; /* the binder thread's own */
    pthread_mutex_t mu;       /* guards everything below */
    pthread_cond_t idle;
    struct task_list binds, rest;
    int running_binds, running_rest; /* taken from the lists and not reported yet */
    int max;                         /* requests in flight at once */
    /* the binder thread's own: one error report per slot in flight */
    struct err errs[BINDER_MAX_WORKERS];
    uint64_t errs_used;
    bool stop;
    bool started;
    pthread_t thread;
};

struct serve_task *serve_task_new(enum serve_task_kind kind, const char *method, const char *path,
                                  const char *content_type, const char *body)
{
    size_t lm = strlen(method) + 1, lp = strlen(path) + 1;
    size_t lc = content_type ? strlen(content_type) + 1 : 0, lb = body ? strlen(body) + 1 : 0;
    struct serve_task *t = calloc(1, sizeof(*t) + lm + lp + lc + lb);
    char *p;

    if (!t)
        return NULL;
    /* one allocation: the strings follow the task (a queue of thousands stays compact) */
    p = (char *)(t + 1);
    t->kind = kind;
    t->method = memcpy(p, method, lm);
    t->path = memcpy(p += lm, path, lp);
    p += lp;
    if (content_type) {
        t->content_type = memcpy(p, content_type, lc);
        p += lc;
    }
    if (body)
        t->body = memcpy(p, body, lb);
    return t;
}

void serve_task_free(struct serve_task *t)
{
    if (!t)
        return;
    free(t->key);
    free(t->node);
    free(t->uid);
    free(t->rv);
    if (t->job && t->job_free)
        t->job_free(t->job);
    free(t);
}

static void list_push(struct task_list *l, struct serve_task *n)
{
    n->next = NULL;
    if (l->tail)
        l->tail->next = n;
    else
        l->head = n;
    l->tail = n;
    l->n++;
}

static struct serve_task *list_pop(struct task_list *l)
{
    struct serve_task *n = l->head;

    if (!n)
        return NULL;
    l->head = n->next;
    if (!l->head)
        l->tail = NULL;
    l->n--;
    return n;
}

static struct kube_client *task_client(struct serve_binder *b, struct serve_task *t)
{
    return t->client ? t->client : b->c;
}

/* binder_send hands t to the set, after delay_ms. */
static void binder_send(struct serve_binder *b, struct serve_task *t, int64_t delay_ms)
{
    t->req.method = t->method;
    t->req.path = t->path;
    t->req.content_type = t->content_type;
    t->req.body = t->body;
    t->req.len = t->body ? strlen(t->body) : 0;
    t->req.ud = t;
    t->req.err = t->err;
    if (t->kind == SERVE_TASK_EVENT && t->client && t->client != b->c)
        kube_async_conns(b->async, t->client, BINDER_EVENT_CONNS);
    kube_async_add(b->async, task_client(b, t), &t->req, delay_ms);
}

/* binder_on_answer runs on the binder's thread for every answered (or failed) request: a
 * retry goes back into the set with the delay binder-int.h describes, anything else is reported
 * and frees its slot. */
static void binder_on_answer(void *ud, struct kube_async_req *r)
{
    struct serve_binder *b = ud;
    struct serve_task *t = r->ud;
    bool is_bind = t->kind == SERVE_TASK_BIND;
    int slot;

    t->attempts++;
    t->rc = r->rc;
    if (t->rc && t->attempts <= BINDER_MAX_RETRIES) {
        int wait_s = t->err->retry_after;

        if ((t->err->http_status == 429 || t->err->http_status >= 500) && wait_s >= 0) {
            binder_send(b, t, wait_s > 0 ? (int64_t)wait_s * 1000 : 1000);
            return;
        }
        if (t->retry_transient && kube_err_transient(t->err) && t->attempts < 4) {
            t->backoff_ms = t->backoff_ms ? t->backoff_ms * 2 : 100;
            binder_send(b, t, t->backoff_ms);
            return;
        }
    }
    slot = (int)(t->err - b->errs);
    b->done(b->ud, t); /* t is the callback's now */
    b->errs_used &= ~((uint64_t)1 << slot);
    pthread_mutex_lock(&b->mu);
    if (is_bind)
        b->running_binds--;
    else
        b->running_rest--;
    pthread_cond_broadcast(&b->idle);
    pthread_mutex_unlock(&b->mu);
}

static void binder_drop(void *ud, struct kube_async_req *r)
{
    struct serve_task *t = r->ud;

    (void)ud;
    t->err = NULL;
    serve_task_free(t);
}

static void *binder_thread(void *arg)
{
    struct serve_binder *b = arg;

    for (;;) {
        struct serve_task *start = NULL, **tail = &start, *t;
        int slot;

        pthread_mutex_lock(&b->mu);
        if (b->stop) {
            pthread_mutex_unlock(&b->mu);
            return NULL;
        }
        while (b->running_binds + b->running_rest < b->max) {
            /* binds first, but neither kind may hold every slot while the other waits: under
             * a rate limit each write holds its slot until it gets a token, and the events
             * (tokens of their own, as kube-scheduler's event client) would otherwise only
             * start after the last bind */
            int reserve = b->max >= 4 ? b->max / 4 : b->max > 1;

            if (b->binds.n && (!b->rest.n || b->running_binds < b->max - reserve)) {
                t = list_pop(&b->binds);
                b->running_binds++;
            } else if (b->rest.n && (!b->binds.n || b->running_rest < b->max - reserve)) {
                t = list_pop(&b->rest);
                b->running_rest++;
            } else {
                break;
            }
            *tail = t;
            tail = &t->next;
        }
        *tail = NULL;
        pthread_mutex_unlock(&b->mu);
        while ((t = start)) {
            start = t->next;
            if (t->kind == SERVE_TASK_BIND)
                t->bind_start_ms = mono_ms();
            /* fewer than max are in flight, so a slot is free */
            slot = __builtin_ctzll(~b->errs_used);
            b->errs_used |= (uint64_t)1 << slot;
            t->err = &b->errs[slot];
            binder_send(b, t, 0);
        }
        kube_async_run(b->async, BINDER_IDLE_WAIT_MS, binder_on_answer, b);
    }
}

int serve_binder_new(struct kube_client *c, int nworkers, serve_task_done_fn done, void *ud,
                     struct serve_binder **out, struct err *err)
{
    struct serve_binder *b = calloc(1, sizeof(*b));
    int rc;

    *out = NULL;
    if (!b)
        return err_set(err, -ENOMEM, "out of memory");
    if (nworkers < 1)
        nworkers = 1;
    if (nworkers > BINDER_MAX_WORKERS)
        nworkers = BINDER_MAX_WORKERS;
    b->c = c;
    b->done = done;
    b->ud = ud;
    b->max = nworkers;
    if ((rc = mono_cond_init(&b->idle))) {
        free(b);
        return err_set(err, rc, "cannot create a condition variable");
    }
    pthread_mutex_init(&b->mu, NULL);
    rc = kube_async_new(nworkers, &b->async, err);
    if (rc) {
        serve_binder_free(b);
        return rc;
    }
    kube_async_coalesce(b->async, BINDER_COALESCE_US, BINDER_COALESCE_BUSY);
    if (pthread_create(&b->thread, NULL, binder_thread, b)) {
        serve_binder_free(b);
        return err_set(err, -EAGAIN, "cannot start the binder thread");
    }
    pthread_setname_np(b->thread, "binder");
    b->started = true;
    *out = b;
    return 0;
}

void serve_binder_submit(struct serve_binder *b, struct serve_task *t)
{
    bool wake;

    pthread_mutex_lock(&b->mu);
    list_push(t->kind == SERVE_TASK_BIND ? &b->binds : &b->rest, t);
    /* with every slot taken, the thread looks at the lists when an answer frees one */
    wake = b->running_binds + b->running_rest < b->max;
    pthread_mutex_unlock(&b->mu);
    if (wake)
        kube_async_wakeup(b->async);
}

int serve_binder_pending(struct serve_binder *b, bool binds_only)
{
    int n;

    pthread_mutex_lock(&b->mu);
    n = b->binds.n + b->running_binds;
    if (!binds_only)
        n += b->rest.n + b->running_rest;
    pthread_mutex_unlock(&b->mu);
    return n;
}

int serve_binder_drain(struct serve_binder *b, bool all, int64_t timeout_ms)
{
    int64_t end = mono_ms() + timeout_ms;
    int rc = 0;

    pthread_mutex_lock(&b->mu);
    while (b->binds.n + b->running_binds + (all ? b->rest.n + b->running_rest : 0) > 0) {
        if (mono_ms() >= end) {
            rc = -ETIMEDOUT;
            break;
        }
        mono_cond_wait_until(&b->idle, &b->mu, end);
    }
    pthread_mutex_unlock(&b->mu);
    return rc;
}

void serve_binder_free(struct serve_binder *b)
{
    struct serve_task *n;

    if (!b)
        return;
    if (b->started) {
        pthread_mutex_lock(&b->mu);
        b->stop = true;
        pthread_mutex_unlock(&b->mu);
        kube_async_wakeup(b->async);
        pthread_join(b->thread, NULL);
    }
    kube_async_free(b->async, binder_drop, NULL);
    while ((n = list_pop(&b->binds)) || (n = list_pop(&b->rest)))
        serve_task_free(n);
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->idle);
    free(b);
}
