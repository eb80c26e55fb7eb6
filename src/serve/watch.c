/* watch.c - watch events into the cluster state and the queue (see watch-int.h). */
#include "serve/watch-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "kube/decode.h"
#include "kube/rules.h"
#include "serve/dra-int.h"
#include "serve/log-int.h"
#include "serve/objects-int.h"
#include "serve/state-int.h"
#include "serve/writes-int.h"

void serve_on_informer_log(void *ud, int level, const char *resource, const char *msg)
{
    (void)ud;
    serve_log(level == 0 ? 'W' : 'I', level, "%s resource=%s", log_quote_msg(msg),
              log_quote(resource));
}

void serve_on_node(void *ud, enum kube_informer_op op, const char *key, json_t *obj)
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
        fp = serve_node_fingerprint(obj);
        rc = kube_node_decode(obj, &a, NULL, &node, &err);
        if (rc) {
            serve_log('E', 0, "\"Cannot decode node\" node=%s err=%s", log_quote(key),
                      log_quote(err_format(&err, msg, sizeof(msg))));
            goto out;
        }
    }
    serve_lock(s);
    switch (op) {
    case KUBE_INFORMER_ADD:
    case KUBE_INFORMER_UPDATE: {
        struct serve_node_fp *f = keymap_get(&s->node_fps, key);

        rc = sched_cluster_update_node(s->cluster, &node, &err);
        if (rc) {
            serve_log('E', 0, "\"Cannot add node to the cache\" node=%s err=%s", log_quote(key),
                      log_quote(err_format(&err, msg, sizeof(msg))));
            break;
        }
        serve_dra_node(s, key, obj, !f || f->fp != fp);
        if (!f) {
            f = malloc(sizeof(*f) + strlen(key) + 1);
            if (f) {
                memcpy(f->name, key, strlen(key) + 1);
                f->fp = fp;
                if (keymap_put(&s->node_fps, f->name, f, NULL))
                    free(f);
            }
            serve_queue_move_all(s->queue, mono_ms());
        } else if (f->fp != fp) {
            f->fp = fp;
            serve_queue_move_all(s->queue, mono_ms());
        }
        serve_log('I', 4, "\"Node %s\" node=%s", op == KUBE_INFORMER_ADD ? "added" : "updated",
                  log_quote(key));
        break;
    }
    case KUBE_INFORMER_DELETE:
        sched_cluster_remove_node(s->cluster, key);
        serve_dra_node(s, key, NULL, true);
        free(keymap_del(&s->node_fps, key));
        serve_log('I', 4, "\"Node deleted\" node=%s", log_quote(key));
        break;
    case KUBE_INFORMER_SYNCED:
        if (!s->nodes_synced)
            serve_log('I', 0, "\"Node cache synced\" nodes=%zu",
                      sched_cluster_node_count(s->cluster));
        s->nodes_synced = true;
        break;
    }
    pthread_cond_broadcast(&s->cv);
    serve_unlock(s);
out:
    arena_release(&a);
}

bool serve_pod_filter(void *ud, json_t *obj)
{
    struct serve *s = ud;

    if (kube_pod_phase_terminal(serve_jstr(obj, "status", "phase")))
        return false;
    if (*serve_pod_node_name(obj))
        return true;
    if (s->cfg.nprofiles)
        return sched_config_find(&s->cfg, serve_pod_scheduler_name(obj)) != NULL;
    return !strcmp(serve_pod_scheduler_name(obj), s->o.scheduler_name);
}

/* sync_nomination follows a pending pod's status.nominatedNodeName into the cluster's
 * nominator as kube-scheduler's does: a nomination added, changed or removed by the API is
 * taken; when neither the previous event nor this one carries one, the nomination this
 * scheduler recorded itself (not yet written back by the watch) is kept. mu held. */
static void sync_nomination(struct serve *s, const char *key, const char *ns, const char *name,
                            json_t *obj, const struct serve_pending *pp)
{
    const struct serve_queue_item *it = serve_queue_get(s->queue, key);
    const struct serve_pending *old = it ? it->data : NULL;
    struct kube_pod pod;
    struct err err;
    char msg[1200];

    if (!pp->watch_nominated) {
        if (old && old->watch_nominated)
            sched_cluster_unnominate(s->cluster, ns, name);
        return;
    }
    err_clear(&err);
    if (!s->pod_arena.head) {
        arena_alloc(&s->pod_arena, 1);
        arena_mark(&s->pod_arena, &s->pod_arena_empty);
    }
    if (kube_pod_decode(obj, &s->pod_arena, NULL, &pod, &err) ||
        sched_cluster_nominate(s->cluster, &pod, pp->watch_nominated, &err))
        serve_log('E', 0, "\"Cannot record the nomination\" pod=%s err=%s", log_quote(key),
                  log_quote(err_format(&err, msg, sizeof(msg))));
}

void serve_on_pod(void *ud, enum kube_informer_op op, const char *key, json_t *obj)
{
    struct serve *s = ud;
    struct kube_pod pod;
    struct err err;
    struct serve_pending *pp = NULL;
    char msg[1200], ns[256], name[256];
    const char *slash;
    bool added, shrank;
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
    memcpy(name, slash + 1, strlen(slash + 1) + 1);

    if (op == KUBE_INFORMER_DELETE) {
        serve_lock(s);
        serve_pending_free(serve_queue_delete(s->queue, key));
        serve_unassume(s, key);
        sched_cluster_unnominate(s->cluster, ns, name);
        if (!sched_cluster_remove_pod(s->cluster, ns, name))
            serve_queue_move_all(s->queue, mono_ms()); /* its resources are free again */
        pthread_cond_broadcast(&s->cv);
        serve_unlock(s);
        serve_log('I', 4, "\"Pod deleted\" pod=%s", log_quote(key));
        return;
    }
    if (*serve_pod_node_name(obj)) {
        if (!s->pod_arena.head) {
            arena_alloc(&s->pod_arena, 1); /* the block every event reuses */
            arena_mark(&s->pod_arena, &s->pod_arena_empty);
        }
        rc = kube_pod_decode(obj, &s->pod_arena, NULL, &pod, &err);
        if (rc) {
            serve_log('E', 0, "\"Cannot decode pod\" pod=%s err=%s", log_quote(key),
                      log_quote(err_format(&err, msg, sizeof(msg))));
            goto out;
        }
        serve_lock(s);
        /* newly bound (first seen bound, or pending/assumed by us until now): kube-scheduler's
         * AssignedPod/Add, which may let a parked pod with required pod affinity or
         * DoNotSchedule spreading fit */
        added = op == KUBE_INFORMER_ADD || serve_queue_get(s->queue, key) ||
                keymap_get(&s->assumed, key);
        /* a bound pod that now requests less (resized in place, or its status caught up):
         * kube-scheduler's Fit requeues the pods it rejected (UpdatePodScaleDown) */
        shrank = !added && sched_cluster_pod_shrinks(s->cluster, &pod);
        rc = sched_cluster_add_pod(s->cluster, &pod, &err);
        if (rc)
            serve_log('E', 0, "\"Cannot add pod to the cache\" pod=%s err=%s", log_quote(key),
                      log_quote(err_format(&err, msg, sizeof(msg))));
        /* bound: by us (this confirms the assumed pod) or by someone else */
        serve_pending_free(serve_queue_delete(s->queue, key));
        serve_unassume(s, key);
        if (shrank
                ? serve_queue_move_all(s->queue, mono_ms()) > 0
                : added && serve_queue_move_if(s->queue, mono_ms(), serve_pending_waits_for_pods))
            pthread_cond_broadcast(&s->cv);
        serve_unlock(s);
        goto out;
    }
    /* one of ours, pending */
    if (json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp")) {
        serve_lock(s);
        serve_pending_free(serve_queue_delete(s->queue, key));
        sched_cluster_unnominate(s->cluster, ns, name);
        serve_unlock(s);
        serve_log('I', 2, "\"Skip schedule deleting pod\" pod=%s", log_quote(key));
        goto out;
    }
    pp = serve_pending_new(obj);
    if (!pp) {
        serve_log('E', 0, "\"Out of memory queueing pod\" pod=%s", log_quote(key));
        goto out;
    }
    serve_lock(s);
    if (keymap_get(&s->assumed, key)) {
        /* its bind is in flight or done: the update is our own status write or the bind */
        serve_unlock(s);
        serve_pending_free(pp);
        goto out;
    }
    sync_nomination(s, key, ns, name, obj, pp);
    {
        void *old = NULL;
        json_t *prio = json_object_get(json_object_get(obj, "spec"), "priority");

        rc = serve_queue_add(s->queue, key, (int32_t)json_integer_value(prio), pp, mono_ms(), &old);
        if (rc) {
            serve_log('E', 0, "\"Out of memory queueing pod\" pod=%s", log_quote(key));
            serve_pending_free(pp);
        } else if (old) {
            struct serve_pending *op_ = old;

            /* keep the nomination written (the condition is this version's own) */
            pp->last_nominated = op_->last_nominated;
            op_->last_nominated = NULL;
            serve_pending_free(op_);
        }
    }
    pthread_cond_broadcast(&s->cv);
    serve_unlock(s);
    serve_log('I', 4, "\"Pod queued\" pod=%s", log_quote(key));
out:
    if (s->pod_arena.head)
        arena_rewind(&s->pod_arena, &s->pod_arena_empty);
}

void serve_on_pdb(void *ud, enum kube_informer_op op, const char *key, json_t *obj)
{
    struct serve *s = ud;
    struct arena a = ARENA_INIT;
    struct kube_pdb pdb;
    struct err err;
    char msg[1200], ns[256], name[256];

    err_clear(&err);
    if (op == KUBE_INFORMER_SYNCED) {
        serve_lock(s);
        if (!s->pdbs_synced)
            serve_log('I', 0, "\"PodDisruptionBudget cache synced\"");
        s->pdbs_synced = true;
        pthread_cond_broadcast(&s->cv);
        serve_unlock(s);
        return;
    }
    if (op == KUBE_INFORMER_DELETE) {
        serve_split_key(key, ns, sizeof(ns), name, sizeof(name));
        serve_lock(s);
        sched_cluster_remove_pdb(s->cluster, ns, name);
        serve_unlock(s);
        return;
    }
    if (kube_pdb_decode(obj, &a, NULL, &pdb, &err)) {
        serve_log('E', 0, "\"Cannot decode PodDisruptionBudget\" pdb=%s err=%s", log_quote(key),
                  log_quote(err_format(&err, msg, sizeof(msg))));
    } else {
        serve_lock(s);
        if (sched_cluster_set_pdb(s->cluster, &pdb, &err))
            serve_log('E', 0, "\"Cannot add PodDisruptionBudget to the cache\" pdb=%s err=%s",
                      log_quote(key), log_quote(err_format(&err, msg, sizeof(msg))));
        serve_unlock(s);
    }
    arena_release(&a);
}

void serve_on_namespace(void *ud, enum kube_informer_op op, const char *key, json_t *obj)
{
    struct serve *s = ud;
    struct arena a = ARENA_INIT;
    struct kube_namespace ns;
    struct err err;
    char msg[1200];

    err_clear(&err);
    if ((op == KUBE_INFORMER_ADD || op == KUBE_INFORMER_UPDATE) &&
        kube_namespace_decode(obj, &a, NULL, &ns, &err)) {
        serve_log('E', 0, "\"Cannot decode namespace\" namespace=%s err=%s", log_quote(key),
                  log_quote(err_format(&err, msg, sizeof(msg))));
        goto out;
    }
    serve_lock(s);
    switch (op) {
    case KUBE_INFORMER_ADD:
    case KUBE_INFORMER_UPDATE:
        if (sched_cluster_set_namespace(s->cluster, &ns, &err))
            serve_log('E', 0, "\"Cannot add namespace to the cache\" namespace=%s err=%s",
                      log_quote(key), log_quote(err_format(&err, msg, sizeof(msg))));
        else
            serve_queue_move_all(s->queue, mono_ms());
        break;
    case KUBE_INFORMER_DELETE:
        sched_cluster_remove_namespace(s->cluster, key);
        break;
    case KUBE_INFORMER_SYNCED:
        if (!s->nss_synced)
            serve_log('I', 0, "\"Namespace cache synced\"");
        s->nss_synced = true;
        break;
    }
    pthread_cond_broadcast(&s->cv);
    serve_unlock(s);
out:
    arena_release(&a);
}

/* The objects PodTopologySpread's system defaults read (helper.DefaultSelector): Services and
 * the three controllers, with where each keeps its selector. */
static const struct spread_kind {
    const char *kind;  /* as in an ownerReference; the core's owner_kind (NULL: a Service) */
    const char *owner; /* NULL for a Service */
    unsigned bit;      /* in serve.sources_synced */
} spread_kinds[] = {
    [SERVE_SRC_SERVICE] = {"Service", NULL, 1u << SERVE_SRC_SERVICE},
    [SERVE_SRC_RC] = {"ReplicationController", "ReplicationController", 1u << SERVE_SRC_RC},
    [SERVE_SRC_RS] = {"ReplicaSet", "ReplicaSet", 1u << SERVE_SRC_RS},
    [SERVE_SRC_STS] = {"StatefulSet", "StatefulSet", 1u << SERVE_SRC_STS},
};

/* on_spread_source keeps the core's record of one Service or controller in step with the
 * watch. kube-scheduler does not move pods on these events (the system defaults only score),
 * and neither does serve: the next attempts read the new selector. */
static void on_spread_source(struct serve *s, enum serve_src which, enum kube_informer_op op,
                             const char *key, json_t *obj)
{
    const struct spread_kind *k = &spread_kinds[which];
    struct arena a = ARENA_INIT;
    struct kube_label_selector sel;
    struct err err;
    char msg[1200], ns[256], name[256];
    int rc = 0;

    err_clear(&err);
    if (op == KUBE_INFORMER_SYNCED) {
        serve_lock(s);
        if (!(s->sources_synced & k->bit))
            serve_log('I', 0, "\"%s cache synced\"", k->kind);
        s->sources_synced |= k->bit;
        pthread_cond_broadcast(&s->cv);
        serve_unlock(s);
        return;
    }
    serve_split_key(key, ns, sizeof(ns), name, sizeof(name));
    if (op != KUBE_INFORMER_DELETE &&
        (rc = kube_spec_selector_decode(obj, k->kind, &a, NULL, &sel, &err)))
        serve_log(
            'E', 0,
            "\"Cannot decode the selector; the object no longer selects pods for the default topology spreading\" kind=%s object=%s err=%s",
            log_quote(k->kind), log_quote(key), log_quote(err_format(&err, msg, sizeof(msg))));
    serve_lock(s);
    if (op == KUBE_INFORMER_DELETE || rc) {
        sched_cluster_remove_spread_source(s->cluster, k->owner, ns, name);
    } else if (sched_cluster_add_spread_source(s->cluster, k->owner, ns, name, &sel, &err)) {
        sched_cluster_remove_spread_source(s->cluster, k->owner, ns, name);
        serve_log('E', 0, "\"Cannot add %s to the cache\" object=%s err=%s", k->kind,
                  log_quote(key), log_quote(err_format(&err, msg, sizeof(msg))));
    }
    serve_unlock(s);
    serve_log('I', 4, "\"%s %s\" object=%s", k->kind,
              op == KUBE_INFORMER_ADD      ? "added"
              : op == KUBE_INFORMER_UPDATE ? "updated"
                                           : "deleted",
              log_quote(key));
    arena_release(&a);
}

void serve_on_service(void *ud, enum kube_informer_op op, const char *key, json_t *obj)
{
    on_spread_source(ud, SERVE_SRC_SERVICE, op, key, obj);
}

void serve_on_replication_controller(void *ud, enum kube_informer_op op, const char *key,
                                     json_t *obj)
{
    on_spread_source(ud, SERVE_SRC_RC, op, key, obj);
}

void serve_on_replica_set(void *ud, enum kube_informer_op op, const char *key, json_t *obj)
{
    on_spread_source(ud, SERVE_SRC_RS, op, key, obj);
}

void serve_on_stateful_set(void *ud, enum kube_informer_op op, const char *key, json_t *obj)
{
    on_spread_source(ud, SERVE_SRC_STS, op, key, obj);
}
