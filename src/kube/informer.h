/* informer.h - list-then-watch of one resource (nodes or pods), keeping a cache in sync.
 *
 * One thread per informer: a paginated list (limit 500) gives a resourceVersion, a watch with
 * bookmarks continues from it. A watch ending cleanly is resumed from the last seen
 * resourceVersion; an ERROR event (410 Expired/Gone or anything else) or a broken stream
 * leads to a fresh list. A relist is diffed against the informer's store (key ->
 * resourceVersion), so the handler sees exactly the adds, updates and deletes that happened,
 * never a duplicate and never a loss. Failures back off from 800 ms doubling to 30 s. */
#ifndef KUBE_INFORMER_H
#define KUBE_INFORMER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "kube/client.h"

struct kube_informer;

enum kube_informer_op {
    KUBE_INFORMER_ADD = 0,
    KUBE_INFORMER_UPDATE,
    KUBE_INFORMER_DELETE, /* obj is the last state, or NULL when found missing at a relist */
    KUBE_INFORMER_SYNCED, /* a list finished: every object in it was delivered (key NULL) */
};

/* The handler runs on the informer's thread. key is "namespace/name" (or "name" for
 * cluster-scoped objects); obj is borrowed for the call and must not be kept past it, not
 * even with json_incref: a watch event's objects live in an arena rewound after the call
 * (kube_watch_fn); json_deep_copy what must stay. */
typedef void (*kube_informer_fn)(void *ud, enum kube_informer_op op, const char *key, json_t *obj);

/* The filter says whether the cache wants an object. An object that stops passing (a pod
 * that finished) is delivered as a DELETE. NULL: every object passes. */
typedef bool (*kube_informer_filter_fn)(void *ud, json_t *obj);

/* Diagnostics for the program's log (the library never prints). level 0 = error, 2 = info,
 * 4 = debug. */
typedef void (*kube_informer_log_fn)(void *ud, int level, const char *resource, const char *msg);

struct kube_informer_opts {
    const char *resource;       /* "nodes", "pods": for messages */
    const char *path;           /* "/api/v1/nodes" */
    const char *field_selector; /* optional, e.g. "status.phase!=Succeeded" (unescaped) */
    int page_size;              /* 500 when 0 */
    int watch_timeout_s;        /* 0: random in [300, 600) as client-go's reflector */
    int64_t backoff_initial_ms; /* 800 when 0 */
    int64_t backoff_max_ms;     /* 30000 when 0 */
    kube_informer_fn fn;
    kube_informer_filter_fn filter;
    kube_informer_log_fn log;
    void *ud;
    volatile sig_atomic_t *stop; /* the informer ends soon after *stop becomes non-zero */
};

/* kube_informer_start starts the thread. The client is borrowed and must outlive the
 * informer. Free with kube_informer_free(), which joins the thread (set *stop first). */
int kube_informer_start(struct kube_client *c, const struct kube_informer_opts *o,
                        struct kube_informer **out, struct err *err);
void kube_informer_free(struct kube_informer *inf);

/* kube_informer_synced: a first list has been delivered completely. */
bool kube_informer_synced(const struct kube_informer *inf);

/* Counters for metrics: full lists done, watches started. */
uint64_t kube_informer_lists(const struct kube_informer *inf);
uint64_t kube_informer_watches(const struct kube_informer *inf);

#endif
