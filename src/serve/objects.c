/* objects.c - pending pods, node fingerprints and JSON accessors (see objects-int.h). */
#include "serve/objects-int.h"

#include <stdlib.h>
#include <string.h>

const char *serve_jstr(json_t *obj, const char *a, const char *b)
{
    json_t *v = json_object_get(obj, a);

    if (b)
        v = json_object_get(v, b);
    return json_string_value(v);
}

const char *serve_pod_node_name(json_t *pod)
{
    const char *n = serve_jstr(pod, "spec", "nodeName");

    return n ? n : "";
}

const char *serve_pod_scheduler_name(json_t *pod)
{
    const char *n = serve_jstr(pod, "spec", "schedulerName");

    return n && *n ? n : "default-scheduler";
}

void serve_pending_free(void *p)
{
    struct serve_pending *pp = p;

    if (!pp)
        return;
    free(pp->json);
    free(pp->namespace_);
    free(pp->name);
    free(pp->uid);
    free(pp->resource_version);
    free(pp->scheduler_name);
    free(pp->last_message);
    free(pp->last_reason);
    free(pp->last_nominated);
    free(pp->watch_nominated);
    free(pp);
}

bool serve_pending_condition_changed(const struct serve_pending *pp, const char *reason,
                                     const char *message)
{
    return !pp->last_message || !pp->last_reason || strcmp(pp->last_message, message) ||
           strcmp(pp->last_reason, reason);
}

bool serve_pending_waits_for_pods(const void *pp)
{
    return ((const struct serve_pending *)pp)->waits_for_pods;
}

/* waits_for_pods: spec.affinity.podAffinity has required terms, or a topology spread
 * constraint is DoNotSchedule (its default) */
static bool waits_for_pods(json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec"), *tsc, *c;
    json_t *req = json_object_get(json_object_get(json_object_get(spec, "affinity"), "podAffinity"),
                                  "requiredDuringSchedulingIgnoredDuringExecution");
    size_t i;

    if (json_array_size(req))
        return true;
    tsc = json_object_get(spec, "topologySpreadConstraints");
    json_array_foreach(tsc, i, c)
    {
        const char *w = serve_jstr(c, "whenUnsatisfiable", NULL);
        if (!w || strcmp(w, "ScheduleAnyway"))
            return true;
    }
    return false;
}

/* serve_pending_new keeps what scheduling needs from a pod: the JSON without apiVersion, kind,
 * managedFields, resourceVersion and status (except status.nominatedNodeName,
 * resourceClaimStatuses and extendedResourceClaimStatus), and the hash
 * of what kube-scheduler's isPodUpdated compares. */
struct serve_pending *serve_pending_new(json_t *obj)
{
    struct serve_pending *pp = calloc(1, sizeof(*pp));
    json_t *copy = json_copy(obj), *md = json_copy(json_object_get(obj, "metadata"));
    const char *ns = serve_jstr(obj, "metadata", "namespace"),
               *name = serve_jstr(obj, "metadata", "name");
    const char *uid = serve_jstr(obj, "metadata", "uid"),
               *rv = serve_jstr(obj, "metadata", "resourceVersion"),
               *nom = serve_jstr(obj, "status", "nominatedNodeName");

    if (!pp || !copy || !md)
        goto fail;
    {
        /* the PodScheduled condition as this version shows it (what kube-scheduler's failure
         * handler compares with: the informer's pod) */
        json_t *c;
        size_t i;

        json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, c)
        {
            const char *type = serve_jstr(c, "type", NULL), *st = serve_jstr(c, "status", NULL);
            const char *reason = serve_jstr(c, "reason", NULL),
                       *msg = serve_jstr(c, "message", NULL);

            if (!type || strcmp(type, "PodScheduled"))
                continue;
            if (st && !strcmp(st, "False") &&
                (!(pp->last_reason = strdup(reason ? reason : "")) ||
                 !(pp->last_message = strdup(msg ? msg : ""))))
                goto fail;
            break;
        }
    }
    json_object_del(md, "managedFields");
    json_object_del(md, "resourceVersion"); /* kept apart: pp->resource_version */
    json_object_set_new(copy, "metadata", md);
    md = NULL;
    json_object_del(copy, "apiVersion"); /* a list's items have none, a watch event's have */
    json_object_del(copy, "kind");
    {
        /* of the status: the nomination, and the claims the resource-claim controller made
         * for the pod's templates (DynamicResources reads them) */
        json_t *st = json_object(), *old = json_object_get(obj, "status");
        static const char *const keep[] = {"resourceClaimStatuses", "extendedResourceClaimStatus"};
        size_t i;

        if (!st)
            goto fail;
        for (i = 0; i < 2; i++)
            if (json_object_get(old, keep[i]))
                json_object_set(st, keep[i], json_object_get(old, keep[i]));
        if (nom && *nom) {
            json_object_set_new(st, "nominatedNodeName", json_string(nom));
            if (!(pp->watch_nominated = strdup(nom))) {
                json_decref(st);
                goto fail;
            }
        }
        if (json_object_size(st))
            json_object_set_new(copy, "status", st);
        else {
            json_object_del(copy, "status");
            json_decref(st);
        }
    }
    pp->json = json_dumps(copy, JSON_COMPACT);
    {
        /* what kube-scheduler's isPodUpdated compares: no resourceVersion, generation,
         * managedFields, finalizers or status, but the claims made for the pod (a claim's
         * name in resourceClaimStatuses moves it: DynamicResources' pod update event) */
        char *bare;
        const char *p;

        json_object_del(json_object_get(copy, "metadata"), "generation");
        json_object_del(json_object_get(copy, "metadata"), "finalizers");
        json_object_del(json_object_get(copy, "status"), "nominatedNodeName");
        if (!json_object_size(json_object_get(copy, "status")))
            json_object_del(copy, "status"); /* (a nomination alone is no update) */
        bare = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
        if (!bare)
            goto fail;
        pp->sched_hash = 1469598103934665603ULL;
        for (p = bare; *p; p++) {
            pp->sched_hash ^= (unsigned char)*p;
            pp->sched_hash *= 1099511628211ULL;
        }
        free(bare);
    }
    pp->namespace_ = strdup(ns && *ns ? ns : "default");
    pp->name = strdup(name ? name : "");
    pp->uid = strdup(uid ? uid : "");
    pp->resource_version = strdup(rv ? rv : "");
    pp->scheduler_name = strdup(serve_pod_scheduler_name(obj));
    pp->waits_for_pods = waits_for_pods(obj);
    if (!pp->json || !pp->namespace_ || !pp->name || !pp->uid || !pp->resource_version ||
        !pp->scheduler_name)
        goto fail;
    json_decref(copy);
    return pp;
fail:
    json_decref(md);
    json_decref(copy);
    serve_pending_free(pp);
    return NULL;
}

bool serve_pending_same(const void *old_data, const void *new_data)
{
    const struct serve_pending *a = old_data, *b = new_data;

    return a && b && a->sched_hash == b->sched_hash;
}

/* serve_node_fingerprint hashes what can change a node's fitness: labels, taints, unschedulable,
 * allocatable (status heartbeats change none of them). */
uint64_t serve_node_fingerprint(json_t *node)
{
    json_t *parts =
        json_pack("[O?,O?,O?,O?]", json_object_get(json_object_get(node, "metadata"), "labels"),
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
