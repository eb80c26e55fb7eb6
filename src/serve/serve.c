/* serve.c - gpusched serve: flags, wiring, and the scheduling loop of the secondary scheduler.
 *
 * Threads: one informer per resource (nodes, pods) applies watch events straight into the
 * cluster state and the queue under one mutex (serve.mu); the main thread is the scheduling
 * loop (pop, schedule_one, assume, hand the bind to the binder) under the same mutex; a pool
 * of bind workers sends binds, events, status patches and deletions and reports back under
 * the mutex; a signal thread turns SIGTERM/SIGINT into a graceful stop; the leader elector
 * and the metrics server have a thread each. Design notes: docs/serve.md. */
#include "serve/serve.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/arena.h"
#include "base/clock.h"
#include "base/flag.h"
#include "base/goparse.h"
#include "base/keymap.h"
#include "kube/client.h"
#include "kube/decode.h"
#include "kube/informer.h"
#include "kube/object.h"
#include "kube/rules.h"
#include "sched/sched.h"
#include "serve/binder.h"
#include "serve/events.h"
#include "serve/httpd.h"
#include "serve/leader.h"
#include "serve/metrics.h"
#include "serve/queue.h"

#define SERVE_VERSION "0.1"
#define SERVE_POD_JSON_MAX (1 << 20)

struct serve_opts {
    const char *scheduler_name;
    const char *profile;
    const char *kubeconfig;
    const char *context;
    double qps;
    int burst;
    bool leader_elect;
    int64_t lease_duration_ms, renew_deadline_ms, retry_period_ms;
    const char *lease_name, *lease_namespace;
    const char *metrics_addr;
    int verbosity;
    int bind_workers;
    int64_t max_unschedulable_ms;
    int64_t initial_backoff_ms, max_backoff_ms;
    int percentage_of_nodes_to_score; /* 0..100, 0 adaptive */
};

/* A pending pod of ours, as kept in the queue: its JSON (decoded again at each attempt, which
 * keeps the resident size of a large backlog small) and what was last reported about it. */
struct pending_pod {
    char *json;
    char *namespace_, *name, *uid;
    char *last_message;  /* last FailedScheduling text written to the status, NULL if none */
    char *last_nominated;
};

/* A pod assumed on a node: its bind is in flight, or done and not yet seen by the informer. */
struct assumed_pod {
    char *uid; /* points into key's allocation */
    char key[];
};

struct node_fp {
    uint64_t fp;
    char name[];
};

struct serve {
    struct serve_opts o;
    const struct sched_profile *profile; /* &profile_buf */
    struct sched_profile profile_buf;    /* the built-in profile with the node sampling flag */
    char instance[320];
    struct kube_client *client;
    struct kube_client *event_client; /* events only: a rate limit of their own */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_int waiters; /* threads blocked in serve_lock: the loop steps aside for them */
    /* under mu */
    struct sched_cluster *cluster;
    struct serve_queue *queue;
    struct keymap node_fps; /* name -> struct node_fp */
    struct keymap assumed;  /* key -> struct assumed_pod: binds in flight or unconfirmed */
    struct sched_rng rng;
    bool nodes_synced, pods_synced;
    bool stopping, lost_leadership;
    bool yielding; /* the loop waits in serve_yield for the other threads' turn */
    /* threads */
    volatile sig_atomic_t informer_stop;
    struct kube_informer *nodes_inf, *pods_inf;
    /* the pod informer thread's: a watch event's pod is decoded here and the arena rewound
     * after it, so its first block serves every event (no malloc/free per event) */
    struct arena pod_arena;
    struct arena_mark pod_arena_empty;
    struct serve_binder *binder;
    struct serve_leader *leader;
    struct serve_httpd *httpd;
    struct serve_metrics metrics;
    pthread_t signal_thread;
};

/* ---------------------------------------------------------------------------------------
 * Logging: klog-like lines on stderr, "-v N" decides how chatty. Level 0 always prints.
 * ------------------------------------------------------------------------------------- */

static int serve_verbosity;

static void serve_log(char sev, int v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void serve_log(char sev, int v, const char *fmt, ...)
{
    char line[4096];
    struct timespec ts;
    struct tm tm;
    va_list ap;
    int n;

    if (v > serve_verbosity)
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = snprintf(line, sizeof(line), "%c%02d%02d %02d:%02d:%02d.%06ld %7d serve] ", sev,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000,
                 (int)getpid());
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    n = (int)strlen(line);
    line[n] = '\n';
    fwrite(line, 1, (size_t)n + 1, stderr);
}

/* serve_lock takes mu for a thread other than the scheduling loop. The loop holds mu for
 * each cycle and takes it straight back, and mutexes are not fair: so the others announce
 * themselves and the loop yields between two pods until they have had their turn. */
static void serve_lock(struct serve *s)
{
    atomic_fetch_add(&s->waiters, 1);
    pthread_mutex_lock(&s->mu);
    atomic_fetch_sub(&s->waiters, 1);
}

/* serve_unlock releases mu for a thread other than the loop, waking the loop (it may be
 * stepping aside in serve_yield, or waiting for work). */
static void serve_unlock(struct serve *s)
{
    /* Only a loop that stepped aside is woken here; work for the loop (a queued or moved
     * pod, a sync, leadership, a stop) broadcasts explicitly. Waking it for every bound
     * pod's watch event and every answered write would cost a context switch each. */
    if (s->yielding)
        pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void serve_wait(struct serve *s, int64_t ms);

static void serve_yield(struct serve *s)
{
    int rounds = 0;

    /* the condition wait releases mu, so the waiters get it; each wakes us on its way out */
    s->yielding = true;
    while (atomic_load(&s->waiters) > 0 && rounds++ < 20)
        serve_wait(s, 5);
    s->yielding = false;
}

/* ---------------------------------------------------------------------------------------
 * Small JSON helpers
 * ------------------------------------------------------------------------------------- */

static const char *jstr(json_t *obj, const char *a, const char *b)
{
    json_t *v = json_object_get(obj, a);

    if (b)
        v = json_object_get(v, b);
    return json_string_value(v);
}

static const char *pod_node_name(json_t *pod)
{
    const char *n = jstr(pod, "spec", "nodeName");

    return n ? n : "";
}

static const char *pod_scheduler_name(json_t *pod)
{
    const char *n = jstr(pod, "spec", "schedulerName");

    return n && *n ? n : "default-scheduler";
}

static void pending_free(void *p)
{
    struct pending_pod *pp = p;

    if (!pp)
        return;
    free(pp->json);
    free(pp->namespace_);
    free(pp->name);
    free(pp->uid);
    free(pp->last_message);
    free(pp->last_nominated);
    free(pp);
}

/* pending_new keeps what scheduling needs from a pod: the JSON without managedFields and
 * status (except status.nominatedNodeName). */
static struct pending_pod *pending_new(json_t *obj)
{
    struct pending_pod *pp = calloc(1, sizeof(*pp));
    json_t *copy = json_copy(obj), *md = json_copy(json_object_get(obj, "metadata"));
    const char *ns = jstr(obj, "metadata", "namespace"), *name = jstr(obj, "metadata", "name");
    const char *uid = jstr(obj, "metadata", "uid"), *nom = jstr(obj, "status", "nominatedNodeName");

    if (!pp || !copy || !md)
        goto fail;
    json_object_del(md, "managedFields");
    json_object_set_new(copy, "metadata", md);
    md = NULL;
    json_object_del(copy, "status");
    if (nom && *nom)
        json_object_set_new(copy, "status", json_pack("{s:s}", "nominatedNodeName", nom));
    pp->json = json_dumps(copy, JSON_COMPACT);
    pp->namespace_ = strdup(ns && *ns ? ns : "default");
    pp->name = strdup(name ? name : "");
    pp->uid = strdup(uid ? uid : "");
    if (!pp->json || !pp->namespace_ || !pp->name || !pp->uid)
        goto fail;
    json_decref(copy);
    return pp;
fail:
    json_decref(md);
    json_decref(copy);
    pending_free(pp);
    return NULL;
}

/* node_fingerprint hashes what can change a node's fitness: labels, taints, unschedulable,
 * allocatable (status heartbeats change none of them). */
static uint64_t node_fingerprint(json_t *node)
{
    json_t *parts = json_pack("[O?,O?,O?,O?]", json_object_get(json_object_get(node, "metadata"), "labels"),
                              json_object_get(json_object_get(node, "spec"), "taints"),
                              json_object_get(json_object_get(node, "spec"), "unschedulable"),
                              json_object_get(json_object_get(node, "status"), "allocatable"));
    char *s = parts ? json_dumps(parts, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    uint64_t h = 1469598103934665603ULL;
    const char *p;

    for (p = s; p && *p; p++) {
        h ^= (unsigned char)*p;
        h *= 1099511628211ULL;
    }
    free(s);
    json_decref(parts);
    return h;
}

/* ---------------------------------------------------------------------------------------
 * Informer handlers (informer threads)
 * ------------------------------------------------------------------------------------- */

static void informer_log_cb(void *ud, int level, const char *resource, const char *msg)
{
    (void)ud;
    serve_log(level == 0 ? 'W' : 'I', level, "\"informer\" resource=\"%s\" msg=\"%s\"", resource,
              msg);
}

static void serve_update_gauges(struct serve *s)
{
    pthread_mutex_lock(&s->metrics.mu);
    s->metrics.pending_active = serve_queue_count(s->queue, SERVE_QUEUE_ACTIVE);
    s->metrics.pending_backoff = serve_queue_count(s->queue, SERVE_QUEUE_BACKOFF);
    s->metrics.pending_unschedulable = serve_queue_count(s->queue, SERVE_QUEUE_UNSCHEDULABLE);
    s->metrics.cache_nodes = sched_cluster_node_count(s->cluster);
    s->metrics.ready = s->nodes_synced && s->pods_synced;
    pthread_mutex_unlock(&s->metrics.mu);
}

static void on_node(void *ud, enum kube_informer_op op, const char *key, json_t *obj)
{
    struct serve *s = ud;
    struct arena a = ARENA_INIT;
    struct kube_node node;
    struct err err;
    char msg[1200];
    uint64_t fp = 0;
    int rc = 0;

    err_clear(&err);
    if (op == KUBE_INFORMER_ADD || op == KUBE_INFORMER_UPDATE) {
        fp = node_fingerprint(obj);
        rc = kube_node_decode(obj, &a, NULL, NULL, &node, &err);
        if (rc) {
            serve_log('E', 0, "\"Cannot decode node\" node=\"%s\" err=\"%s\"", key,
                      err_format(&err, msg, sizeof(msg)));
            goto out;
        }
    }
    serve_lock(s);
    switch (op) {
    case KUBE_INFORMER_ADD:
    case KUBE_INFORMER_UPDATE: {
        struct node_fp *f = keymap_get(&s->node_fps, key);

        rc = sched_cluster_update_node(s->cluster, &node, &err);
        if (rc) {
            serve_log('E', 0, "\"Cannot add node to the cache\" node=\"%s\" err=\"%s\"", key,
                      err_format(&err, msg, sizeof(msg)));
            break;
        }
        if (!f) {
            f = malloc(sizeof(*f) + strlen(key) + 1);
            if (f) {
                strcpy(f->name, key);
                f->fp = fp;
                if (keymap_put(&s->node_fps, f->name, f, NULL))
                    free(f);
            }
            serve_queue_move_all(s->queue, mono_ms());
        } else if (f->fp != fp) {
            f->fp = fp;
            serve_queue_move_all(s->queue, mono_ms());
        }
        serve_log('I', 4, "\"Node %s\" node=\"%s\"", op == KUBE_INFORMER_ADD ? "added" : "updated",
                  key);
        break;
    }
    case KUBE_INFORMER_DELETE:
        sched_cluster_remove_node(s->cluster, key);
        free(keymap_del(&s->node_fps, key));
        serve_log('I', 4, "\"Node deleted\" node=\"%s\"", key);
        break;
    case KUBE_INFORMER_SYNCED:
        if (!s->nodes_synced)
            serve_log('I', 0, "\"Node cache synced\" nodes=%zu", sched_cluster_node_count(s->cluster));
        s->nodes_synced = true;
        break;
    }
    pthread_cond_broadcast(&s->cv);
    serve_unlock(s);
out:
    arena_free(&a);
}

static bool pod_filter(void *ud, json_t *obj)
{
    struct serve *s = ud;

    if (kube_pod_phase_terminal(jstr(obj, "status", "phase")))
        return false;
    if (*pod_node_name(obj))
        return true;
    return !strcmp(pod_scheduler_name(obj), s->o.scheduler_name);
}

/* serve_unassume drops key from the assumed set (caller holds mu). */
static void serve_unassume(struct serve *s, const char *key)
{
    free(keymap_del(&s->assumed, key));
}

static void on_pod(void *ud, enum kube_informer_op op, const char *key, json_t *obj)
{
    struct serve *s = ud;
    struct kube_pod pod;
    struct err err;
    struct pending_pod *pp = NULL;
    char msg[1200], ns[256], name[256];
    const char *slash;
    int rc;

    err_clear(&err);
    if (op == KUBE_INFORMER_SYNCED) {
        serve_lock(s);
        if (!s->pods_synced)
            serve_log('I', 0, "\"Pod cache synced\" pending=%zu",
                      serve_queue_count(s->queue, SERVE_QUEUE_ACTIVE));
        s->pods_synced = true;
        pthread_cond_broadcast(&s->cv);
        serve_unlock(s);
        return;
    }
    slash = strchr(key, '/');
    if (!slash || (size_t)(slash - key) >= sizeof(ns) || strlen(slash + 1) >= sizeof(name))
        return;
    memcpy(ns, key, (size_t)(slash - key));
    ns[slash - key] = '\0';
    strcpy(name, slash + 1);

    if (op == KUBE_INFORMER_DELETE) {
        serve_lock(s);
        pending_free(serve_queue_delete(s->queue, key));
        serve_unassume(s, key);
        if (!sched_cluster_remove_pod(s->cluster, ns, name))
            serve_queue_move_all(s->queue, mono_ms()); /* its resources are free again */
        pthread_cond_broadcast(&s->cv);
        serve_unlock(s);
        serve_log('I', 4, "\"Pod deleted\" pod=\"%s\"", key);
        return;
    }
    if (*pod_node_name(obj)) {
        if (!s->pod_arena.head) {
            arena_alloc(&s->pod_arena, 1); /* the block every event reuses */
            arena_mark(&s->pod_arena, &s->pod_arena_empty);
        }
        rc = kube_pod_decode(obj, &s->pod_arena, NULL, NULL, &pod, &err);
        if (rc) {
            serve_log('E', 0, "\"Cannot decode pod\" pod=\"%s\" err=\"%s\"", key,
                      err_format(&err, msg, sizeof(msg)));
            goto out;
        }
        serve_lock(s);
        rc = sched_cluster_add_pod(s->cluster, &pod, &err);
        if (rc)
            serve_log('E', 0, "\"Cannot add pod to the cache\" pod=\"%s\" err=\"%s\"", key,
                      err_format(&err, msg, sizeof(msg)));
        /* bound: by us (this confirms the assumed pod) or by someone else */
        pending_free(serve_queue_delete(s->queue, key));
        serve_unassume(s, key);
        serve_unlock(s);
        goto out;
    }
    /* one of ours, pending */
    if (json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp")) {
        serve_lock(s);
        pending_free(serve_queue_delete(s->queue, key));
        serve_unlock(s);
        serve_log('I', 2, "\"Skip schedule deleting pod\" pod=\"%s\"", key);
        goto out;
    }
    pp = pending_new(obj);
    if (!pp) {
        serve_log('E', 0, "\"Out of memory queueing pod\" pod=\"%s\"", key);
        goto out;
    }
    serve_lock(s);
    if (keymap_get(&s->assumed, key)) {
        /* its bind is in flight or done: the update is our own status write or the bind */
        serve_unlock(s);
        pending_free(pp);
        goto out;
    }
    {
        void *old = NULL;
        json_t *prio = json_object_get(json_object_get(obj, "spec"), "priority");

        rc = serve_queue_add(s->queue, key, (int32_t)json_integer_value(prio), pp, mono_ms(), &old);
        if (rc) {
            serve_log('E', 0, "\"Out of memory queueing pod\" pod=\"%s\"", key);
            pending_free(pp);
        } else if (old) {
            struct pending_pod *op_ = old;

            /* keep what was reported, so an unchanged message is not written again */
            pp->last_message = op_->last_message;
            pp->last_nominated = op_->last_nominated;
            op_->last_message = op_->last_nominated = NULL;
            pending_free(op_);
        }
    }
    pthread_cond_broadcast(&s->cv);
    serve_unlock(s);
    serve_log('I', 4, "\"Pod queued\" pod=\"%s\"", key);
out:
    if (s->pod_arena.head)
        arena_rewind(&s->pod_arena, &s->pod_arena_empty);
}

/* ---------------------------------------------------------------------------------------
 * API writes (bind workers)
 * ------------------------------------------------------------------------------------- */

static void serve_write_submit(struct serve *s, struct serve_task *t, const char *key)
{
    if (!t) {
        serve_log('E', 0, "\"Out of memory building a request\" pod=\"%s\"", key);
        return;
    }
    t->ud = s;
    t->key = strdup(key);
    serve_binder_submit(s->binder, t);
}

static void serve_write_event(struct serve *s, const char *ns, const char *name, const char *uid,
                        const char *type, const char *reason, const char *action, const char *note)
{
    struct serve_event ev = {ns, name, uid, type, reason, action, note, s->o.scheduler_name,
                             s->instance};
    struct timespec now;
    char path[600], nsesc[300], key[600];
    char *body;

    clock_gettime(CLOCK_REALTIME, &now);
    body = serve_event_json(&ev, &now);
    snprintf(path, sizeof(path), "/apis/events.k8s.io/v1/namespaces/%s/events",
             kube_path_escape(ns, nsesc, sizeof(nsesc)));
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    {
        struct serve_task *t =
            body ? serve_task_new(SERVE_TASK_EVENT, "POST", path, "application/json", body) : NULL;

        if (t)
            t->client = s->event_client;
        serve_write_submit(s, t, key);
    }
    free(body);
}

static void pod_path(char *buf, size_t size, const char *ns, const char *name, const char *sub)
{
    char e1[300], e2[300];

    snprintf(buf, size, "/api/v1/namespaces/%s/pods/%s%s%s", kube_path_escape(ns, e1, sizeof(e1)),
             kube_path_escape(name, e2, sizeof(e2)), sub ? "/" : "", sub ? sub : "");
}

static void serve_write_status(struct serve *s, const char *ns, const char *name,
                               const char *reason, const char *message, const char *nominated)
{
    struct timespec now;
    char path[700], key[600];
    char *body;

    clock_gettime(CLOCK_REALTIME, &now);
    body = serve_condition_patch_json(reason, message, nominated, &now);
    pod_path(path, sizeof(path), ns, name, "status");
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    if (body) {
        struct serve_task *t = serve_task_new(SERVE_TASK_STATUS, "PATCH", path,
                                              "application/strategic-merge-patch+json", body);

        if (t)
            t->retry_transient = true;
        serve_write_submit(s, t, key);
    } else {
        serve_write_submit(s, NULL, key);
    }
    free(body);
}

static void split_key(const char *key, char *ns, size_t nsz, char *name, size_t namesz)
{
    const char *slash = strchr(key, '/');

    if (!slash) {
        snprintf(ns, nsz, "default");
        snprintf(name, namesz, "%s", key);
        return;
    }
    snprintf(ns, nsz, "%.*s", (int)(slash - key), key);
    snprintf(name, namesz, "%s", slash + 1);
}

/* queued_same_pod: the queue holds key, and for the same pod (uid) the task was made for, not
 * a pod re-created under that name since. */
static bool queued_same_pod(struct serve *s, const struct serve_task *t)
{
    const struct serve_queue_item *it = serve_queue_get(s->queue, t->key);
    const struct pending_pod *pp = it ? it->data : NULL;

    return pp && !strcmp(pp->uid, t->uid ? t->uid : "");
}

static void on_task_done(void *ud, struct serve_task *t)
{
    struct serve *s = ud;
    char msg[1200], ns[256], name[256];
    const char *what = "";

    split_key(t->key ? t->key : "", ns, sizeof(ns), name, sizeof(name));
    if (t->kind == SERVE_TASK_BIND) {
        double took = (double)(mono_ms() - t->bind_start_ms) / 1000.0;
        char bound_here[400];

        /* A 409 saying the pod is already on the node we chose means an earlier attempt of
         * this bind landed (its answer was lost): that is a success. */
        snprintf(bound_here, sizeof(bound_here), "is already assigned to node \"%s\"",
                 t->node ? t->node : "");
        if (t->rc && t->err->http_status == 409 && strstr(t->err->msg, bound_here))
            t->rc = 0;

        serve_lock(s);
        pthread_mutex_lock(&s->metrics.mu);
        serve_histogram_observe(&s->metrics.bind_duration, took);
        s->metrics.in_flight_binds--;
        if (!t->rc) {
            s->metrics.binds_total++;
            serve_histogram_observe(&s->metrics.e2e_duration,
                                    (double)(mono_ms() - t->queued_ms) / 1000.0);
        } else {
            s->metrics.bind_errors++;
            if (t->err->http_status == 409)
                s->metrics.bind_conflicts++;
            if (t->err->http_status == 404)
                s->metrics.bind_not_found++;
        }
        pthread_mutex_unlock(&s->metrics.mu);
        if (!t->rc) {
            if (queued_same_pod(s, t))
                pending_free(serve_queue_done(s->queue, t->key));
            serve_unlock(s);
            serve_log('I', 2, "\"Successfully bound pod to node\" pod=\"%s\" node=\"%s\"", t->key,
                      t->node);
            {
                char note[1200];

                snprintf(note, sizeof(note), "Successfully assigned %s/%s to %s", ns, name, t->node);
                serve_write_event(s, ns, name, t->uid, "Normal", "Scheduled", "Binding", note);
            }
        } else {
            const struct assumed_pod *ap = keymap_get(&s->assumed, t->key);

            /* forget our assumption only: a pod re-created under this name may have its own.
             * When the bind got no answer at all (connection lost, API server restarting) it
             * may have landed: keep the node's room reserved until the informer shows the pod
             * bound, or until the pod is taken from the queue again (serve_schedule_one). */
            if (ap && !strcmp(ap->uid, t->uid ? t->uid : "") && t->err->http_status != 0) {
                sched_cluster_forget_pod(s->cluster, ns, name);
                serve_unassume(s, t->key);
            }
            if (!queued_same_pod(s, t)) {
                /* gone from the queue already, or re-created under the same name */
            } else if (t->err->http_status == 404) {
                /* the pod is gone; the informer will say so too */
                pending_free(serve_queue_delete(s->queue, t->key));
            } else {
                /* 409 included: if the pod really is bound, the informer removes it from the
                 * queue before the backoff ends; otherwise it is tried again. */
                serve_queue_backoff(s->queue, t->key, mono_ms());
            }
            pthread_cond_broadcast(&s->cv);
            serve_unlock(s);
            serve_log(t->err->http_status == 409 || t->err->http_status == 404 ? 'I' : 'E',
                      t->err->http_status == 409 || t->err->http_status == 404 ? 2 : 0,
                      "\"Failed to bind pod\" pod=\"%s\" node=\"%s\" err=\"%s\"", t->key, t->node,
                      err_format(t->err, msg, sizeof(msg)));
        }
        serve_task_free(t);
        return;
    }
    switch (t->kind) {
    case SERVE_TASK_STATUS:
        serve_metrics_add(&s->metrics, t->rc ? &s->metrics.status_patch_errors
                                              : &s->metrics.status_patches, 1);
        what = "patch pod status";
        break;
    case SERVE_TASK_EVENT:
        serve_metrics_add(&s->metrics, t->rc ? &s->metrics.event_errors : &s->metrics.events_sent,
                          1);
        what = "write event";
        break;
    case SERVE_TASK_DELETE:
        if (!t->rc)
            serve_metrics_add(&s->metrics, &s->metrics.preemption_victims, 1);
        what = "delete preemption victim";
        break;
    case SERVE_TASK_BIND:
        break;
    }
    if (t->rc)
        serve_log(t->err->http_status == 404 ? 'I' : 'E', t->err->http_status == 404 ? 2 : 0,
                  "\"Cannot %s\" pod=\"%s\" err=\"%s\"", what, t->key,
                  err_format(t->err, msg, sizeof(msg)));
    serve_task_free(t);
}

/* ---------------------------------------------------------------------------------------
 * The scheduling loop (main thread, holds mu except while waiting)
 * ------------------------------------------------------------------------------------- */

static bool str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* serve_report_failure writes the FailedScheduling event every time and the PodScheduled
 * condition when its message or the nomination changed (kube-scheduler skips unchanged
 * status updates too). */
static void serve_report_failure(struct serve *s, struct pending_pod *pp, const char *reason,
                                 const char *message, const char *nominated)
{
    if (strcmp(reason, "SchedulingGated"))
        serve_write_event(s, pp->namespace_, pp->name, pp->uid, "Warning", "FailedScheduling",
                    "Scheduling", message);
    if (!str_eq(pp->last_message, message) || (nominated && !str_eq(pp->last_nominated, nominated))) {
        free(pp->last_message);
        pp->last_message = strdup(message);
        if (nominated) {
            free(pp->last_nominated);
            pp->last_nominated = strdup(nominated);
        }
        serve_write_status(s, pp->namespace_, pp->name, reason, message, nominated);
    }
}

static void serve_schedule_one(struct serve *s, const struct serve_queue_item *it)
{
    struct pending_pod *pp = it->data;
    struct arena a = ARENA_INIT;
    struct sched_result res;
    struct kube_pod pod;
    struct err err;
    json_error_t jerr;
    json_t *obj = NULL;
    char msg[1200], key[600], ns_buf[256], name_buf[256];
    double t0, t1;
    size_t i;
    int rc;

    memset(&res, 0, sizeof(res));
    err_clear(&err);
    snprintf(key, sizeof(key), "%s", it->key);
    t0 = mono_now();
    {
        /* a reservation left by a bind whose outcome was unknown: drop it before trying
         * again; if the pod turned out bound meanwhile, it is done */
        const struct assumed_pod *ap = keymap_get(&s->assumed, key);

        if (ap && !strcmp(ap->uid, pp->uid)) {
            split_key(key, ns_buf, sizeof(ns_buf), name_buf, sizeof(name_buf));
            if (sched_cluster_forget_pod(s->cluster, ns_buf, name_buf) == -EINVAL) {
                serve_unassume(s, key);
                pending_free(serve_queue_done(s->queue, key));
                goto out;
            }
            serve_unassume(s, key);
        }
    }
    obj = json_loads(pp->json, 0, &jerr);
    if (!obj || kube_pod_decode(obj, &a, NULL, NULL, &pod, &err)) {
        serve_log('E', 0, "\"Cannot decode pending pod\" pod=\"%s\" err=\"%s\"", key,
                  obj ? err_format(&err, msg, sizeof(msg)) : jerr.text);
        serve_metrics_add(&s->metrics, &s->metrics.attempts[SERVE_RESULT_ERROR], 1);
        serve_queue_unschedulable(s->queue, key, mono_ms());
        goto out;
    }
    rc = sched_schedule_one(s->cluster, s->profile, &pod, &s->rng, &res, &err);
    t1 = mono_now();
    serve_metrics_observe(&s->metrics, &s->metrics.algorithm_duration, t1 - t0);
    if (rc) {
        serve_log('E', 0, "\"Error scheduling pod; retrying\" pod=\"%s\" err=\"%s\"", key,
                  err_format(&err, msg, sizeof(msg)));
        serve_metrics_add(&s->metrics, &s->metrics.attempts[SERVE_RESULT_ERROR], 1);
        serve_queue_backoff(s->queue, key, mono_ms());
        goto out;
    }
    switch (res.outcome) {
    case SCHED_SCHEDULED: {
        struct serve_task *t;
        struct assumed_pod *ap;
        void *old_ap = NULL;
        char path[700], *body;

        rc = sched_cluster_assume_pod(s->cluster, &pod, res.node, &err);
        if (rc == -EEXIST) {
            /* already in the cache: bound meanwhile */
            pending_free(serve_queue_done(s->queue, key));
            break;
        }
        if (rc) {
            serve_log('E', 0, "\"Cannot assume pod\" pod=\"%s\" err=\"%s\"", key,
                      err_format(&err, msg, sizeof(msg)));
            serve_metrics_add(&s->metrics, &s->metrics.attempts[SERVE_RESULT_ERROR], 1);
            serve_queue_backoff(s->queue, key, mono_ms());
            break;
        }
        ap = malloc(sizeof(*ap) + strlen(key) + strlen(pp->uid) + 2);
        if (ap) {
            strcpy(ap->key, key);
            ap->uid = ap->key + strlen(key) + 1;
            strcpy(ap->uid, pp->uid);
            if (keymap_put(&s->assumed, ap->key, ap, &old_ap))
                free(ap);
            free(old_ap);
        }
        body = serve_binding_json(pp->namespace_, pp->name, pp->uid, res.node);
        pod_path(path, sizeof(path), pp->namespace_, pp->name, "binding");
        t = body ? serve_task_new(SERVE_TASK_BIND, "POST", path, "application/json", body) : NULL;
        free(body);
        if (!t || !(t->node = strdup(res.node)) || !(t->uid = strdup(pp->uid))) {
            serve_task_free(t);
            sched_cluster_forget_pod(s->cluster, pp->namespace_, pp->name);
            serve_unassume(s, key);
            serve_queue_backoff(s->queue, key, mono_ms());
            break;
        }
        t->queued_ms = it->added_ms;
        pthread_mutex_lock(&s->metrics.mu);
        s->metrics.attempts[SERVE_RESULT_SCHEDULED]++;
        s->metrics.in_flight_binds++;
        serve_histogram_observe(&s->metrics.attempt_duration, mono_now() - t0);
        pthread_mutex_unlock(&s->metrics.mu);
        serve_log('I', 3, "\"Attempting to bind pod to node\" pod=\"%s\" node=\"%s\"", key, res.node);
        serve_write_submit(s, t, key);
        break;
    }
    case SCHED_UNSCHEDULABLE:
        pthread_mutex_lock(&s->metrics.mu);
        s->metrics.attempts[SERVE_RESULT_UNSCHEDULABLE]++;
        serve_histogram_observe(&s->metrics.attempt_duration, mono_now() - t0);
        if (res.nvictims)
            s->metrics.preemption_attempts++;
        pthread_mutex_unlock(&s->metrics.mu);
        for (i = 0; i < res.nvictims; i++) {
            const struct sched_victim *v = &res.victims[i];
            char path[700], vkey[600], note[1200];

            pod_path(path, sizeof(path), v->namespace_, v->name, NULL);
            snprintf(vkey, sizeof(vkey), "%s/%s", v->namespace_, v->name);
            serve_write_submit(s, serve_task_new(SERVE_TASK_DELETE, "DELETE", path, NULL, NULL), vkey);
            snprintf(note, sizeof(note), "Preempted by pod %s on node %s", pp->uid,
                     res.nominated_node ? res.nominated_node : "");
            serve_write_event(s, v->namespace_, v->name, NULL, "Normal", "Preempted", "Preempting", note);
            serve_log('I', 2, "\"Preempting pod\" victim=\"%s\" preemptor=\"%s\" node=\"%s\"",
                      vkey, key, res.nominated_node ? res.nominated_node : "");
        }
        serve_log('I', 2, "\"Unable to schedule pod; no fit; waiting\" pod=\"%s\" err=\"%s\"", key,
                  res.message ? res.message : "");
        serve_report_failure(s, pp, "Unschedulable", res.message ? res.message : "",
                             res.nominated_node);
        serve_queue_unschedulable(s->queue, key, mono_ms());
        break;
    case SCHED_GATED:
        serve_report_failure(s, pp, "SchedulingGated",
                             "Scheduling is blocked due to non-empty scheduling gates", NULL);
        serve_queue_unschedulable(s->queue, key, mono_ms());
        break;
    }
out:
    sched_result_release(&res);
    json_decref(obj);
    arena_free(&a);
}

static bool serve_leading(struct serve *s)
{
    return !s->leader || serve_leader_is_leader(s->leader);
}

static void serve_wait(struct serve *s, int64_t ms)
{
    mono_cond_wait_until(&s->cv, &s->mu, mono_ms() + ms);
}

static void serve_loop(struct serve *s)
{
    int64_t last_flush = mono_ms();

    pthread_mutex_lock(&s->mu);
    while (!s->stopping) {
        const struct serve_queue_item *it;
        int64_t t = mono_ms(), next;

        serve_update_gauges(s);
        if (!s->nodes_synced || !s->pods_synced || !serve_leading(s)) {
            serve_wait(s, 200);
            continue;
        }
        if (t - last_flush >= 1000) {
            serve_queue_flush(s->queue, t);
            last_flush = t;
        }
        it = serve_queue_pop(s->queue, t);
        if (!it) {
            next = serve_queue_next_ms(s->queue, t);
            serve_wait(s, next < 0 || next > 1000 ? 1000 : next + 1);
            continue;
        }
        serve_schedule_one(s, it);
        serve_yield(s);
    }
    pthread_mutex_unlock(&s->mu);
}

/* ---------------------------------------------------------------------------------------
 * Probes and metrics
 * ------------------------------------------------------------------------------------- */

static int serve_http(void *ud, const char *path, struct buf *body, const char **ctype)
{
    struct serve *s = ud;
    bool ready;

    if (!strcmp(path, "/healthz") || !strcmp(path, "/livez")) {
        buf_puts(body, "ok");
        return 200;
    }
    if (!strcmp(path, "/readyz")) {
        serve_lock(s);
        ready = s->nodes_synced && s->pods_synced && !s->stopping;
        serve_unlock(s);
        buf_puts(body, ready ? "ok" : "informers not synced");
        return ready ? 200 : 503;
    }
    if (!strcmp(path, "/metrics")) {
        serve_lock(s);
        serve_update_gauges(s);
        serve_unlock(s);
        pthread_mutex_lock(&s->metrics.mu);
        s->metrics.leader = serve_leading(s);
        if (s->nodes_inf && s->pods_inf) {
            s->metrics.relists_nodes = kube_informer_lists(s->nodes_inf);
            s->metrics.relists_pods = kube_informer_lists(s->pods_inf);
        }
        pthread_mutex_unlock(&s->metrics.mu);
        *ctype = "text/plain; version=0.0.4; charset=utf-8";
        return serve_metrics_render(&s->metrics, body) ? 500 : 200;
    }
    buf_puts(body, "404 page not found\n");
    return 404;
}

/* ---------------------------------------------------------------------------------------
 * Leadership and signals
 * ------------------------------------------------------------------------------------- */

static void on_leader_change(void *ud, bool leading)
{
    struct serve *s = ud;

    serve_lock(s);
    if (!leading) {
        s->lost_leadership = true;
        s->stopping = true;
    }
    pthread_cond_broadcast(&s->cv);
    serve_unlock(s);
}

static void on_leader_log(void *ud, int level, const char *msg)
{
    (void)ud;
    serve_log(level == 0 ? 'E' : 'I', level, "\"leaderelection\" msg=\"%s\"", msg);
}

static void *signal_thread(void *arg)
{
    struct serve *s = arg;
    sigset_t set;
    int sig = 0;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1); /* internal: wakes this thread at exit */
    sigwait(&set, &sig);
    serve_lock(s);
    if (sig != SIGUSR1 && !s->stopping)
        serve_log('I', 0, "\"Received %s; shutting down\"", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    s->stopping = true;
    pthread_cond_broadcast(&s->cv);
    serve_unlock(s);
    return NULL;
}

/* ---------------------------------------------------------------------------------------
 * Flags
 * ------------------------------------------------------------------------------------- */

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;

    fputs("gpusched serve: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (see gpusched serve --help)\n", stderr);
    return 2;
}

static const char serve_intro[] =
    "Usage: gpusched serve [flags]\n"
    "\n"
    "Run as a secondary Kubernetes scheduler: schedule the pending pods whose\n"
    "spec.schedulerName is --scheduler-name, with kube-scheduler's filters and scores, and\n"
    "bind them through the API.\n"
    "\n";

static const char serve_outro[] =
    "\n"
    "Durations: 1h, 5m, 15s, 500ms. SIGTERM stops taking pods, finishes the binds in flight,\n"
    "releases the lease and exits 0.\n";

/* Flag values. Each setter words why a value is refused; the caller puts the flag's name in
 * front. */

static int set_name(void *dest, const char *v, struct err *err)
{
    if (!*v)
        return err_set(err, -EINVAL, "must not be empty");
    *(const char **)dest = v;
    return 0;
}

static int set_profile(void *dest, const char *v, struct err *err)
{
    if (!sched_profile_find(v))
        return err_set(err, -EINVAL, "unknown profile '%s' (want default or gpu)", v);
    *(const char **)dest = v;
    return 0;
}

static int set_qps(void *dest, const char *v, struct err *err)
{
    char *end;
    double q = strtod(v, &end);

    if (end == v || *end || !(q >= 0))
        return err_set(err, -EINVAL, "'%s' is not a non-negative number", v);
    *(double *)dest = q;
    return 0;
}

/* set_int_in reads a pflag integer (strconv.ParseInt(v, 0, 64)) within [lo, hi]. */
static int set_int_in(int *dest, const char *v, long lo, long hi)
{
    int64_t n;

    if (go_parse_int(v, strlen(v), 0, 64, &n, NULL) || n < lo || n > hi)
        return -EINVAL;
    *dest = (int)n;
    return 0;
}

static int set_burst(void *dest, const char *v, struct err *err)
{
    if (set_int_in(dest, v, 0, 1000000))
        return err_set(err, -EINVAL, "'%s' is not a non-negative integer", v);
    return 0;
}

static int set_workers(void *dest, const char *v, struct err *err)
{
    if (set_int_in(dest, v, 1, 64))
        return err_set(err, -EINVAL, "'%s' is not an integer in 1..64", v);
    return 0;
}

static int set_percentage(void *dest, const char *v, struct err *err)
{
    if (set_int_in(dest, v, 0, 100))
        return err_set(err, -EINVAL, "'%s' is not an integer in 0..100", v);
    return 0;
}

static int set_level(void *dest, const char *v, struct err *err)
{
    if (set_int_in(dest, v, 0, 10))
        return err_set(err, -EINVAL, "'%s' is not a level 0..10", v);
    return 0;
}

/* set_duration reads a Go duration (time.ParseDuration) into positive whole milliseconds. */
static int set_duration(void *dest, const char *v, struct err *err)
{
    int64_t ns;

    if (go_parse_duration(v, &ns, NULL) || ns / 1000000 <= 0)
        return err_set(err, -EINVAL, "'%s' is not a positive duration such as 15s or 500ms", v);
    *(int64_t *)dest = ns / 1000000;
    return 0;
}

/* serve_parse_flags returns -1 to go on, else the exit status. */
static int serve_parse_flags(int argc, char **argv, struct serve_opts *o)
{
    const struct flag flags[] = {
        {"scheduler-name", 0, FLAG_FUNC, &o->scheduler_name, set_name, NULL, "NAME",
         "pods to schedule and event reportingController (default gpusched)"},
        {"profile", 0, FLAG_FUNC, &o->profile, set_profile, NULL, "default|gpu",
         "scoring profile (default \"default\")"},
        {"kubeconfig", 0, FLAG_STRING, &o->kubeconfig, NULL, NULL, "FILE",
         "kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)"},
        {"context", 0, FLAG_STRING, &o->context, NULL, NULL, "NAME",
         "kubeconfig context (default: current-context)"},
        {"kube-api-qps", 0, FLAG_FUNC, &o->qps, set_qps, NULL, "N",
         "client rate limit, requests/s; 0 = unlimited (default 50)"},
        {"kube-api-burst", 0, FLAG_FUNC, &o->burst, set_burst, NULL, "N",
         "client burst (default 100)"},
        {"bind-workers", 0, FLAG_FUNC, &o->bind_workers, set_workers, NULL, "N",
         "concurrent API writes (default 16)"},
        {"leader-elect", 0, FLAG_BOOL, &o->leader_elect, NULL, NULL, NULL,
         "elect a leader with a Lease before scheduling (default false)"},
        {"leader-elect-lease-duration", 0, FLAG_FUNC, &o->lease_duration_ms, set_duration, NULL,
         "D", "how long a lease holds without renewal (default 15s)"},
        {"leader-elect-renew-deadline", 0, FLAG_FUNC, &o->renew_deadline_ms, set_duration, NULL,
         "D", "how long the leader tries to renew before it gives up\n(default 10s)"},
        {"leader-elect-retry-period", 0, FLAG_FUNC, &o->retry_period_ms, set_duration, NULL, "D",
         "time between two tries to take or renew the lease\n(default 2s)"},
        {"leader-elect-resource-name", 0, FLAG_STRING, &o->lease_name, NULL, NULL, "NAME",
         "Lease name (default gpusched)"},
        {"leader-elect-resource-namespace", 0, FLAG_STRING, &o->lease_namespace, NULL, NULL, "NS",
         "Lease namespace (default kube-system)"},
        {"metrics-addr", 0, FLAG_STRING, &o->metrics_addr, NULL, NULL, "HOST:PORT",
         "/healthz, /readyz, /metrics; \"\" or 0 disables\n(default 0.0.0.0:10251)"},
        {"pod-max-in-unschedulable-pods-duration", 0, FLAG_FUNC, &o->max_unschedulable_ms,
         set_duration, NULL, "D", "periodic retry of unschedulable pods (default 5m)"},
        {"percentage-of-nodes-to-score", 0, FLAG_FUNC, &o->percentage_of_nodes_to_score,
         set_percentage, NULL, "N",
         "stop filtering once N% of the nodes (at least 100)\n"
         "fit; 0 = kube-scheduler's adaptive share, 100 = every\nnode (default 0)"},
        {"v", 'v', FLAG_FUNC, &o->verbosity, set_level, NULL, "N",
         "log verbosity: 0 errors and lifecycle, 2 every pod, 4 debug"},
    };
    size_t nflags = sizeof(flags) / sizeof(flags[0]);
    struct flag_fault ff;
    struct buf help = BUF_INIT(0);

    switch (flag_parse(flags, nflags, argc, argv, NULL, &ff)) {
    case FLAG_OK:
        return -1;
    case FLAG_HELP:
        if (flag_usage(flags, nflags, "show this help", 37, &help))
            return usage_error("out of memory");
        printf("%sFlags:\n%s%s", serve_intro, help.data, serve_outro);
        buf_release(&help);
        return 0;
    case FLAG_UNKNOWN:
        return usage_error("unknown flag %s", ff.name);
    case FLAG_NO_VALUE:
        return usage_error("%s: needs a value", ff.name);
    case FLAG_BAD_VALUE:
        if (ff.flag->type == FLAG_BOOL)
            return usage_error("%s: '%s' is not true or false", ff.name, ff.value);
        return usage_error("%s: %s", ff.name, ff.err.msg);
    case FLAG_EXTRA:
        return usage_error("unexpected argument '%s'", ff.word);
    case FLAG_NOMEM:
        break;
    }
    fprintf(stderr, "gpusched serve: out of memory\n");
    return 1;
}

/* ---------------------------------------------------------------------------------------
 * Main
 * ------------------------------------------------------------------------------------- */

int serve_main(int argc, char **argv)
{
    struct serve_opts o = {
        .scheduler_name = "gpusched",
        .profile = "default",
        .qps = 50,
        .burst = 100,
        .lease_duration_ms = 15000,
        .renew_deadline_ms = 10000,
        .retry_period_ms = 2000,
        .lease_name = "gpusched",
        .lease_namespace = "kube-system",
        .metrics_addr = "0.0.0.0:10251",
        .bind_workers = 16,
        .max_unschedulable_ms = 300000,
        .percentage_of_nodes_to_score = 0, /* kube-scheduler's default: adaptive */
    };
    struct kube_client_opts co;
    struct serve_queue_opts qo;
    struct kube_informer_opts io;
    struct err err;
    struct serve *s = NULL;
    char msg[1400], host[256] = "unknown", identity[320];
    sigset_t sigs;
    int rc, status = 1;
    bool signal_started = false;

    rc = serve_parse_flags(argc, argv, &o);
    if (rc >= 0)
        return rc;
    serve_verbosity = o.verbosity;
    err_clear(&err);
    /* One malloc arena: with a thread per informer, the binder and the others, glibc would
     * otherwise keep a heap per thread and the resident size grows by half for nothing. */
    mallopt(M_ARENA_MAX, 1);

    s = calloc(1, sizeof(*s));
    if (!s) {
        fprintf(stderr, "gpusched serve: out of memory\n");
        return 1;
    }
    s->o = o;
    s->profile_buf = *sched_profile_find(o.profile);
    s->profile_buf.percentage_of_nodes_to_score = o.percentage_of_nodes_to_score;
    s->profile = &s->profile_buf;
    gethostname(host, sizeof(host) - 1);
    snprintf(s->instance, sizeof(s->instance), "%s-%s", o.scheduler_name, host);
    pthread_mutex_init(&s->mu, NULL);
    if (mono_cond_init(&s->cv)) {
        fprintf(stderr, "gpusched serve: cannot create a condition variable\n");
        pthread_mutex_destroy(&s->mu);
        free(s);
        return 1;
    }
    serve_metrics_init(&s->metrics, s->profile->name);
    sched_rng_seed(&s->rng, (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32));

    if (o.leader_elect) {
        struct serve_leader_opts lo = {o.lease_namespace, o.lease_name, "", o.lease_duration_ms,
                                       o.renew_deadline_ms, o.retry_period_ms, NULL, NULL, NULL};

        if (serve_leader_check(&lo, &err)) {
            fprintf(stderr, "gpusched serve: %s\n", err.msg);
            status = 2;
            goto out;
        }
    }

    /* Every thread started from here on inherits the blocked signals; only the signal
     * thread receives them. */
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (pthread_create(&s->signal_thread, NULL, signal_thread, s)) {
        fprintf(stderr, "gpusched serve: cannot start the signal thread\n");
        goto out;
    }
    signal_started = true;
    pthread_setname_np(s->signal_thread, "signals");

    memset(&co, 0, sizeof(co));
    co.kubeconfig = o.kubeconfig;
    co.context = o.context;
    co.qps = o.qps;
    co.burst = o.burst;
    co.user_agent = "gpusched/" SERVE_VERSION " (linux)";
    if (kube_client_new(&co, &s->client, &err) || kube_client_new(&co, &s->event_client, &err)) {
        fprintf(stderr, "gpusched serve: %s\n", err_format(&err, msg, sizeof(msg)));
        goto out;
    }

    s->cluster = sched_cluster_new();
    memset(&qo, 0, sizeof(qo));
    qo.max_unschedulable_ms = o.max_unschedulable_ms;
    s->queue = serve_queue_new(&qo);
    if (!s->cluster || !s->queue) {
        fprintf(stderr, "gpusched serve: out of memory\n");
        goto out;
    }

    if (o.metrics_addr && *o.metrics_addr && strcmp(o.metrics_addr, "0")) {
        if (serve_httpd_start(o.metrics_addr, serve_http, s, &s->httpd, &err)) {
            fprintf(stderr, "gpusched serve: --metrics-addr: %s\n", err.msg);
            goto out;
        }
    }
    if (serve_binder_new(s->client, o.bind_workers, on_task_done, s, &s->binder, &err)) {
        fprintf(stderr, "gpusched serve: %s\n", err.msg);
        goto out;
    }
    serve_log('I', 0,
              "\"Starting gpusched\" version=\"%s\" schedulerName=\"%s\" profile=\"%s\" "
              "percentageOfNodesToScore=%d server=\"%s\" qps=%g burst=%d metricsPort=%d",
              SERVE_VERSION, o.scheduler_name, s->profile->name, o.percentage_of_nodes_to_score,
              kube_client_server(s->client), o.qps, o.burst,
              s->httpd ? serve_httpd_port(s->httpd) : 0);

    memset(&io, 0, sizeof(io));
    io.resource = "nodes";
    io.path = "/api/v1/nodes";
    io.fn = on_node;
    io.log = informer_log_cb;
    io.ud = s;
    io.stop = &s->informer_stop;
    if (kube_informer_start(s->client, &io, &s->nodes_inf, &err)) {
        fprintf(stderr, "gpusched serve: %s\n", err.msg);
        goto out;
    }
    io.resource = "pods";
    io.path = "/api/v1/pods";
    io.fn = on_pod;
    io.filter = pod_filter;
    if (kube_informer_start(s->client, &io, &s->pods_inf, &err)) {
        fprintf(stderr, "gpusched serve: %s\n", err.msg);
        goto out;
    }
    if (o.leader_elect) {
        struct serve_leader_opts lo = {o.lease_namespace, o.lease_name,
                                       serve_leader_identity(identity, sizeof(identity)),
                                       o.lease_duration_ms, o.renew_deadline_ms,
                                       o.retry_period_ms, on_leader_change, on_leader_log, s};

        serve_log('I', 0, "\"Leader election\" lease=\"%s/%s\" identity=\"%s\"", o.lease_namespace,
                  o.lease_name, identity);
        if (serve_leader_start(s->client, &lo, &s->leader, &err)) {
            fprintf(stderr, "gpusched serve: %s\n", err.msg);
            goto out;
        }
    }

    serve_loop(s);

    /* Graceful stop: no new pods are taken; binds in flight finish, then the rest of the
     * writes get a short grace period. */
    serve_log('I', 0, "\"Stopping\" bindsInFlight=%d", serve_binder_pending(s->binder, true));
    if (serve_binder_drain(s->binder, false, 30000))
        serve_log('W', 0, "\"Binds still in flight after 30s; exiting anyway\"");
    serve_binder_drain(s->binder, true, 5000);
    status = s->lost_leadership ? 1 : 0;
out:
    if (s) {
        s->informer_stop = 1;
        kube_informer_free(s->nodes_inf);
        kube_informer_free(s->pods_inf);
        serve_leader_stop(s->leader);
        serve_binder_free(s->binder);
        serve_httpd_stop(s->httpd);
        if (signal_started) {
            pthread_kill(s->signal_thread, SIGUSR1);
            pthread_join(s->signal_thread, NULL);
        }
        if (s->queue)
            serve_queue_free(s->queue, pending_free);
        {
            size_t i;

            for (i = 0; i < s->node_fps.cap; i++)
                if (s->node_fps.slots[i].key)
                    free(s->node_fps.slots[i].value);
            for (i = 0; i < s->assumed.cap; i++)
                if (s->assumed.slots[i].key)
                    free(s->assumed.slots[i].value);
        }
        keymap_release(&s->node_fps);
        keymap_release(&s->assumed);
        sched_cluster_free(s->cluster);
        arena_free(&s->pod_arena);
        kube_client_free(s->client);
        kube_client_free(s->event_client);
        serve_metrics_destroy(&s->metrics);
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv);
        if (status == 0)
            serve_log('I', 0, "\"Stopped\"");
        free(s);
    }
    return status;
}
