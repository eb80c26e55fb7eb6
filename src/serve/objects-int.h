/* objects-int.h - what serve keeps of the API's objects between events: a pending pod as its
 * JSON (decoded again at each attempt, which keeps a large backlog small), a node's
 * fingerprint, and the few fields read straight from the JSON of a watch event. */
#ifndef SERVE_OBJECTS_INT_H
#define SERVE_OBJECTS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

/* A pending pod of ours, as kept in the queue: its JSON (decoded again at each attempt, which
 * keeps the resident size of a large backlog small) and what was last reported about it. */
struct serve_pending {
    char *json;
    char *namespace_, *name, *uid;
    char *resource_version; /* metadata.resourceVersion of this version ("" when unset) */
    char *scheduler_name;   /* spec.schedulerName (default-scheduler when unset) */
    /* the PodScheduled condition of this version of the pod when its status is False: its
     * message and reason ("" when unset); NULL when it has none */
    char *last_message, *last_reason;
    char *last_nominated;
    char *watch_nominated; /* status.nominatedNodeName of this watch event, NULL when unset */
    /* the pod has required pod affinity terms or DoNotSchedule topology spread constraints:
     * a pod added to a node may make it fit (InterPodAffinity's and PodTopologySpread's
     * AssignedPod/Add events) */
    bool waits_for_pods;
    uint64_t sched_hash; /* the pod without resourceVersion, generation, managedFields,
                            finalizers and status: what kube-scheduler calls an update */
};

/* serve_pending_waits_for_pods: pp->waits_for_pods (a serve_queue_move_if predicate). */
bool serve_pending_waits_for_pods(const void *pp);

/* serve_pending_condition_changed: whether a PodScheduled=False condition with reason and
 * message differs from the pod's as the watch last showed it (kube-scheduler's failure handler
 * compares with the informer's pod, podutil.UpdatePodCondition: status, reason and message;
 * a new reason with the same message is a change, and a condition the API server or an
 * earlier scheduler wrote counts as well as one of ours). */
bool serve_pending_condition_changed(const struct serve_pending *pp, const char *reason,
                                     const char *message);

/* serve_pending_new keeps what scheduling needs from a pod: its JSON without apiVersion, kind,
 * managedFields, resourceVersion and status (except status.nominatedNodeName and the claims
 * made for the pod: resourceClaimStatuses, extendedResourceClaimStatus), its
 * namespace, name, uid and resourceVersion, and sched_hash (serve_pending_same). NULL when
 * out of memory. serve_pending_free frees one (NULL is fine; the void * suits the queue). */
struct serve_pending *serve_pending_new(json_t *obj);
void serve_pending_free(void *p);

/* serve_pending_same: two versions of a pending pod differ only where kube-scheduler's
 * isPodUpdated does not look (its own status writes, a resourceVersion): such an update does
 * not move an unschedulable pod back to be tried (serve_queue_opts.same). */
bool serve_pending_same(const void *old_data, const void *new_data);

/* serve_node_fingerprint hashes what can change a node's fitness: labels, taints,
 * unschedulable, allocatable (status heartbeats change none of them). */
uint64_t serve_node_fingerprint(json_t *node);

/* serve_jstr returns obj[a] (or obj[a][b]) when it is a string, else NULL. */
const char *serve_jstr(json_t *obj, const char *a, const char *b);

/* A pod's spec.nodeName ("" when unbound) and spec.schedulerName (default-scheduler when
 * unset). */
const char *serve_pod_node_name(json_t *pod);
const char *serve_pod_scheduler_name(json_t *pod);

#endif
