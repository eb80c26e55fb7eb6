/* queue.h - the scheduling queue of gpusched serve: pending pods waiting for a placement.
 *
 * Three parts, as in kube-scheduler: the active heap (priority high first, then the time the
 * pod was added or last came back from an attempt: PrioritySort's Timestamp), the backoff heaps (pods waiting 1 s doubling to 10 s, rounded up to a whole
 * second: those that failed with an error, and those moved while backing off, which are
 * popped at once when no pod is active) and the unschedulable set (pods that did not fit,
 * waiting for a cluster event or the periodic flush). A pod is in exactly one part, or "in flight" between serve_queue_pop() and the
 * call that reports the outcome. Not thread-safe: the scheduling loop owns it. */
#ifndef SERVE_QUEUE_H
#define SERVE_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct serve_queue;

enum serve_queue_state {
    SERVE_QUEUE_ACTIVE = 0,
    SERVE_QUEUE_BACKOFF,
    SERVE_QUEUE_UNSCHEDULABLE,
    SERVE_QUEUE_IN_FLIGHT,
    SERVE_QUEUE_GATED, /* has schedulingGates: never attempted, waits for an update */
};

struct serve_queue_opts {
    int64_t initial_backoff_ms;   /* 1000 when 0 */
    int64_t max_backoff_ms;       /* 10000 when 0 */
    int64_t max_unschedulable_ms; /* periodic flush age, 300000 (5 min) when 0 */
    /* same(old, new): an update from old data to new changes nothing scheduling looks at, so
     * an unschedulable pod stays where it is (NULL: every update moves it) */
    bool (*same)(const void *old_data, const void *new_data);
    /* the wall clock minus the clock the now_ms arguments are read from: backoff windows
     * are whole seconds of the wall clock, as kube-scheduler's (0: of that clock itself) */
    int64_t wall_offset_ms;
    /* kube-scheduler's PopFromBackoffQ: with no pod active, pop the first pod moved while
     * backing off at once (off: it waits out its backoff). gpusched serve leaves it off for
     * now: PostFilter's claim deletion is asynchronous (docs/serve.md, Differences). */
    bool pop_backoff;
};

/* One queued pod as seen by the caller. data is the caller's (the queue never frees it). */
struct serve_queue_item {
    const char *key; /* "namespace/name", owned by the queue */
    int32_t priority;
    int64_t added_ms;        /* when the pod first entered the queue */
    int64_t first_active_ms; /* when it first entered the active heap (kube-scheduler's
                                InitialAttemptTimestamp); -1 while it never did (gated) */
    int attempts;            /* scheduling attempts so far */
    unsigned pops;           /* times popped (an attempt that began: in flight or done) */
    bool flushed; /* it last left the unschedulable pods by the periodic flush, not an event
                     (kube-scheduler's WasFlushedFromUnschedulable) */
    void *data;
};

/* serve_queue_new returns an empty queue (NULL when out of memory); free with
 * serve_queue_free(), which hands every remaining item's data to free_data (may be NULL). */
struct serve_queue *serve_queue_new(const struct serve_queue_opts *o);
void serve_queue_free(struct serve_queue *q, void (*free_data)(void *data));

/* serve_queue_add adds a new pending pod to the active heap, or updates the priority and data
 * of a known one (returning the old data through *old_data, else NULL there). An updated pod
 * waiting as unschedulable is moved back as by serve_queue_move_all (its spec may now fit),
 * unless the options' same() says the update changed nothing that matters; a gated one goes
 * to the active heap; one in flight stays in flight.
 * Returns 0, or -ENOMEM. */
int serve_queue_add(struct serve_queue *q, const char *key, int32_t priority, void *data,
                    int64_t now_ms, void **old_data);

/* serve_queue_delete forgets a pod wherever it is and returns its data (NULL if unknown). */
void *serve_queue_delete(struct serve_queue *q, const char *key);

/* serve_queue_get returns the item for key, or NULL. Borrowed until the next call. */
const struct serve_queue_item *serve_queue_get(const struct serve_queue *q, const char *key);

/* serve_queue_pop first moves backoff pods whose time has come to the active heap, then
 * takes the head of the active heap, marks it in flight and returns it (borrowed until the
 * pod is reported with _done/_unschedulable/_backoff/_delete). When none is active it takes
 * the head of the pods moved while backing off instead (kube-scheduler's PopFromBackoffQ:
 * earliest window first, then as the active heap), never one backing off after an error.
 * NULL when there is none of either. */
const struct serve_queue_item *serve_queue_pop(struct serve_queue *q, int64_t now_ms);

/* Outcome of an in-flight pod (also valid for a pod in any other part):
 * _done removes it (bound) and returns its data;
 * _unschedulable counts an attempt and parks it until a move event or the flush;
 * _backoff counts an attempt and puts it in the backoff heap (errors, failed binds).
 * The backoff (when a moved pod may be tried again, or a backed-off one) is kube-scheduler's:
 * after n errors in a row serve_queue_backoff_ms(n), else after n unschedulable attempts
 * serve_queue_backoff_ms(n), from now_ms; it ends at the start of the whole second after the
 * one that time falls in (kube-scheduler's ordering windows: 1.1 to 2 s after a failure for
 * 1 s). */
void *serve_queue_done(struct serve_queue *q, const char *key);
void serve_queue_unschedulable(struct serve_queue *q, const char *key, int64_t now_ms);
void serve_queue_backoff(struct serve_queue *q, const char *key, int64_t now_ms);

/* serve_queue_gated parks a pod that has schedulingGates without counting an attempt, as if
 * kube-scheduler's PreEnqueue had held it: it counts as gated, is not moved by cluster events
 * or the flush, and goes back to the active heap when it is updated (serve_queue_add). Its
 * first_active_ms starts again (-1): it was never really attempted. */
void serve_queue_gated(struct serve_queue *q, const char *key);

/* serve_queue_move_all moves every unschedulable pod back: to the active heap when its
 * backoff is over, else to the backoff heap. Called on cluster events that may make pods
 * fit (node added or changed, assigned pod deleted). Returns how many moved. */
size_t serve_queue_move_all(struct serve_queue *q, int64_t now_ms);

/* serve_queue_move_if moves the unschedulable pods whose data pred accepts, as
 * serve_queue_move_all does (kube-scheduler's queueing hints, coarsely: an assigned pod added
 * moves only the pods it could help). Returns how many moved. */
size_t serve_queue_move_if(struct serve_queue *q, int64_t now_ms, bool (*pred)(const void *data));

/* serve_queue_flush moves unschedulable pods parked for longer than max_unschedulable_ms
 * (kube-scheduler's flushUnschedulableEntitiesLeftover; the caller runs it as kube-scheduler
 * does, at start and then every SERVE_QUEUE_FLUSH_PERIOD_MS). Returns how many moved. */
#define SERVE_QUEUE_FLUSH_PERIOD_MS 30000
size_t serve_queue_flush(struct serve_queue *q, int64_t now_ms);

/* serve_queue_next_ms returns milliseconds until the next backoff ends (0 when a pod can be
 * popped now, -1 when no pod waits for a time; the flush is the caller's). */
int64_t serve_queue_next_ms(const struct serve_queue *q, int64_t now_ms);

/* serve_queue_count returns how many pods are in one part. */
size_t serve_queue_count(const struct serve_queue *q, enum serve_queue_state s);

/* serve_queue_backoff_ms: the backoff after n attempts (1 s doubling, capped). */
int64_t serve_queue_backoff_ms(const struct serve_queue *q, int attempts);

#endif
