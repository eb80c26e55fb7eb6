/* binder-int.h - the thread sending the scheduler's API writes, many at once.
 *
 * Binds go first; events, status patches and deletions queue behind them (a status update
 * must never hold up a bind). One thread keeps up to N requests in flight over a kube_async
 * set (kept-alive connections, one poll for all of them): N is --bind-workers. Every request
 * passes through its client's rate limiter (qps/burst), waiting without holding the thread.
 * A request answered 429 or 5xx with Retry-After is retried after that many seconds, up to 10
 * times, as client-go does; tasks marked retry_transient (status patches, events) are also
 * retried on other transient errors with a short backoff. A task keeps its slot while it
 * waits to be retried. The outcome goes to the task's callback on the binder's thread. */
#ifndef SERVE_BINDER_INT_H
#define SERVE_BINDER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "kube/async.h"
#include "kube/client.h"

enum serve_task_kind {
    SERVE_TASK_BIND = 0, /* high priority */
    SERVE_TASK_STATUS,   /* condition patch */
    SERVE_TASK_EVENT,
    SERVE_TASK_DELETE,  /* preemption victim */
    SERVE_TASK_DISRUPT, /* a victim's DisruptionTarget condition, then its DELETE */
};

struct serve_task {
    enum serve_task_kind kind;
    char *method, *path, *content_type, *body; /* part of the task's allocation */
    bool retry_transient;
    struct kube_client *client; /* borrowed; NULL: the binder's client. Events use their own
                                   client, so they have their own rate limit, as in
                                   kube-scheduler, and never take a bind's token */
    /* Caller's context, owned by the task (freed with it). */
    char *key;       /* "namespace/name" of the pod */
    char *node;      /* the chosen node, binds only */
    char *uid;       /* binds: the pod's; preemptions: the preemptor's */
    char *rv;        /* binds: the pod's resourceVersion when scheduled (its Scheduled event's
                   regarding); preemptions: the victim's uid, a space, its resourceVersion */
    char *preemptor; /* preemptions: "namespace/name resourceVersion" of the preemptor */
    /* events: the recorder's write (recorder.h), freed with the task by job_free */
    void *job;
    void (*job_free)(void *job);
    /* borrowed, lives as long as the process: the schedulerName of the profile that scheduled
     * the pod (events' reportingController, the DisruptionTarget writer); NULL: the first */
    const char *controller;
    /* binds: what the metrics of a bound pod need (metrics.h, serve_metrics_bound) */
    double cycle_start;      /* mono_now() when its scheduling cycle began */
    int64_t first_active_ms; /* when it first became active (-1: unknown) */
    int sched_attempts;      /* scheduling attempts, this one included */
    bool flushed;            /* it last left the unschedulable pods by the flush */
    bool reported;           /* binds: the failure was reported already (PreBind's error) */
    int64_t bind_start_ms;
    void *ud; /* borrowed */
    /* Outcome, filled before the callback */
    int rc;
    struct err *err; /* while in flight: the binder's, valid until the callback returns
                             (a queued task carries none: a err is 1.6 KiB) */
    int attempts;
    /* the binder's own */
    struct kube_async_req req;
    int64_t backoff_ms;
    struct serve_task *next; /* queue link */
};

/* The callback owns t and frees it with serve_task_free. */
typedef void (*serve_task_done_fn)(void *ud, struct serve_task *t);

struct serve_binder;

/* serve_binder_new starts the binder's thread, which keeps up to nworkers (1..64) requests
 * in flight. c is borrowed. */
int serve_binder_new(struct kube_client *c, int nworkers, serve_task_done_fn done, void *ud,
                     struct serve_binder **out, struct err *err);

/* serve_task_new allocates a task with copies of method, path, content type (may be NULL)
 * and body (may be NULL). Returns NULL when out of memory. */
struct serve_task *serve_task_new(enum serve_task_kind kind, const char *method, const char *path,
                                  const char *content_type, const char *body);
void serve_task_free(struct serve_task *t);

/* serve_binder_submit queues t (ownership moves to the binder). Safe from any thread,
 * the callback included. */
void serve_binder_submit(struct serve_binder *b, struct serve_task *t);

/* serve_binder_pending returns queued + running tasks (binds_only: only binds). */
int serve_binder_pending(struct serve_binder *b, bool binds_only);

/* serve_binder_drain waits until no bind (and, with all, no task at all) is queued or running,
 * or timeout_ms passes. Returns 0 when drained, -ETIMEDOUT otherwise. */
int serve_binder_drain(struct serve_binder *b, bool all, int64_t timeout_ms);

/* serve_binder_free stops the thread and frees b; tasks still queued or in flight are
 * freed without callbacks (a request in flight is abandoned). NULL is fine. */
void serve_binder_free(struct serve_binder *b);

#endif
