/* cluster.h - the scheduler's view of the cluster, the API its callers feed: nodes and the
 * pods counted on them, PodDisruptionBudgets, the nominator, Namespaces. Updated
 * incrementally. The other objects the plugins read are fed through volumes.h (the volume
 * objects) and podtopologyspread.h (PodTopologySpread's Services and controllers); the core's
 * own view of the cluster is cluster-int.h. */
#ifndef SCHED_CLUSTER_H
#define SCHED_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "kube/object.h"
#include "sched/profile.h"

/* The scheduler's view of the cluster: nodes and the pods assigned to them (bound pods and
 * "assumed" pods whose bind is in flight). Every update is incremental, O(labels + taints)
 * for a node and O(containers) for a pod; nothing is rebuilt per scheduling cycle. The
 * cluster copies what it keeps: the objects passed in are borrowed for the call only.
 *
 * Node order (the order of sched_explain's rows and of the tie-break scan) is insertion
 * order; removing a node moves the last node into its place. Pods are keyed by
 * namespace/name. Pods of a node that is not (or no longer) in the cluster are kept and count
 * again when a node of that name is added, as kube-scheduler's cache does. */
struct sched_cluster;

/* sched_cluster_new returns an empty cluster, or NULL when out of memory. Free it with
 * sched_cluster_free (accepts NULL). */
struct sched_cluster *sched_cluster_new(void);
void sched_cluster_free(struct sched_cluster *c);

/* sched_cluster_add_node adds a node, or replaces the node of the same name (labels, taints,
 * unschedulable, allocatable) keeping its pods. Returns 0, or -ENOMEM / -EINVAL (empty name)
 * with err set. sched_cluster_update_node is the same call under the name serve uses. */
int sched_cluster_add_node(struct sched_cluster *c, const struct kube_node *node, struct err *err);
int sched_cluster_update_node(struct sched_cluster *c, const struct kube_node *node,
                              struct err *err);

/* sched_cluster_remove_node removes the node called name. Returns 0, or -ENOENT. */
int sched_cluster_remove_node(struct sched_cluster *c, const char *name);

/* sched_cluster_add_pod records an assigned pod (pod->node_name set): its requests, host
 * ports and priority count on that node. An existing entry with the same namespace/name is
 * replaced, which is how a bound pod confirms an assumed one. A pod with an empty node_name or
 * phase Succeeded/Failed removes a bound entry of that name but leaves an assumed entry in
 * place (its bind is still in flight). Returns 0 or -ENOMEM with err set. */
int sched_cluster_add_pod(struct sched_cluster *c, const struct kube_pod *pod, struct err *err);

/* sched_cluster_pod_shrinks: pod, an update of a bound pod c counts (same namespace/name),
 * requests less of some resource than the entry counted for it: kube-scheduler's
 * UpdatePodScaleDown event of an assigned pod (extractPodScaleDown), after which its Fit
 * plugin sends back to the queue the pods it rejected (a resize in place, or its status
 * catching up). false when c counts no bound pod of that name. Call it before
 * sched_cluster_add_pod replaces the entry. */
bool sched_cluster_pod_shrinks(struct sched_cluster *c, const struct kube_pod *pod);

/* sched_cluster_remove_pod removes the pod namespace/name (bound or assumed). Returns 0, or
 * -ENOENT. */
int sched_cluster_remove_pod(struct sched_cluster *c, const char *namespace_, const char *name);

/* sched_cluster_assume_pod records pod as running on node_name before its bind completes, so
 * the next scheduling cycles see its resources and ports (pod->node_name is ignored). Returns
 * 0, -EEXIST when the pod is already in the cluster, or -ENOMEM. */
int sched_cluster_assume_pod(struct sched_cluster *c, const struct kube_pod *pod,
                             const char *node_name, struct err *err);

/* sched_cluster_forget_pod drops an assumed pod whose bind failed. Returns 0, -ENOENT when
 * absent, or -EINVAL when the pod is bound (confirmed) rather than assumed. */
int sched_cluster_forget_pod(struct sched_cluster *c, const char *namespace_, const char *name);

/* sched_cluster_mark_preempted (on) records that our own preemption is evicting the pod
 * namespace/name: it counts as terminating by preemption (deletionTimestamp set and
 * DisruptionTarget=True, reason PreemptionByScheduler) at once, before the watch says so, and
 * stays so through updates of the pod until it is removed; it keeps counting on its node
 * until then, as in kube-scheduler. on = false drops the mark (the eviction failed). Returns 0
 * or -ENOENT. */
int sched_cluster_mark_preempted(struct sched_cluster *c, const char *namespace_, const char *name,
                                 bool on);

/* PodDisruptionBudgets, which preemption avoids violating (see docs/scheduling.md,
 * "Preemption"): sched_cluster_set_pdb adds pdb or replaces the one of the same
 * namespace/name (copied); 0 or -ENOMEM with err set. sched_cluster_remove_pdb: 0 or
 * -ENOENT. */
int sched_cluster_set_pdb(struct sched_cluster *c, const struct kube_pdb *pdb, struct err *err);
int sched_cluster_remove_pdb(struct sched_cluster *c, const char *namespace_, const char *name);

/* The nominator: pending pods nominated to a node (status.nominatedNodeName, or a preemption
 * just decided). A nominated pod holds its room: filtering another pod on that node counts
 * the nominated pods of priority >= its own (not itself) as if they ran there
 * (kube-scheduler's RunFilterPluginsWithNominatedPods), in every cycle and in the preemption
 * dry run; scores do not see them. sched_cluster_nominate records pod (its requests and host
 * ports) as nominated to node_name, replacing an earlier nomination (an empty node_name only
 * removes it); 0, -ENOMEM or -E2BIG with err set. Assuming or adding the pod as assigned
 * removes its nomination. sched_cluster_unnominate: 0 or -ENOENT. sched_cluster_nominated_node
 * returns the node namespace/name is nominated to (borrowed), or NULL. */
int sched_cluster_nominate(struct sched_cluster *c, const struct kube_pod *pod,
                           const char *node_name, struct err *err);
int sched_cluster_unnominate(struct sched_cluster *c, const char *namespace_, const char *name);
const char *sched_cluster_nominated_node(const struct sched_cluster *c, const char *namespace_,
                                         const char *name);

/* One nominated pod, the strings borrowed from the cluster (valid until it changes). */
struct sched_nominated_pod {
    const char *namespace_, *name, *node;
    int32_t priority;
};

/* sched_cluster_nominated_at fills out with the i-th nominated pod (any order); 0 or -ENOENT
 * past the end. sched_cluster_nominated_count is how many there are. */
int sched_cluster_nominated_at(const struct sched_cluster *c, size_t i,
                               struct sched_nominated_pod *out);
size_t sched_cluster_nominated_count(const struct sched_cluster *c);

/* sched_cluster_node_count returns the number of nodes (N of "0/N nodes are available"). */
size_t sched_cluster_node_count(const struct sched_cluster *c);

/* What a node has and what its pods request, for `gpusched nodes`. */
struct sched_node_usage {
    const char *name; /* borrowed from the cluster; valid until the node changes */
    size_t npods;     /* pods counted on the node (bound + assumed) */
    int64_t allocatable_pods;
    int64_t allocatable_cpu_milli, requested_cpu_milli;
    int64_t allocatable_memory, requested_memory;
    int64_t allocatable_ephemeral, requested_ephemeral;
    int64_t allocatable_gpu, requested_gpu; /* nvidia.com/gpu */
    bool unschedulable;
};

/* sched_cluster_node_usage fills u for the node called name. Returns 0 or -ENOENT. */
int sched_cluster_node_usage(const struct sched_cluster *c, const char *name,
                             struct sched_node_usage *u);

/* sched_cluster_node_at fills u for the node at index i (< sched_cluster_node_count), in node
 * order. Returns 0 or -ENOENT. */
int sched_cluster_node_at(const struct sched_cluster *c, size_t i, struct sched_node_usage *u);

/* Namespaces (InterPodAffinity's namespaceSelector reads them): sched_cluster_set_namespace
 * adds the Namespace ns, or replaces the labels of the one of that name: pod affinity terms'
 * namespaceSelector match these labels, and a pod's own namespace labels are what existing
 * pods' namespaceSelector see. A namespace the cluster has not been given has no labels, as
 * kube-scheduler's lister answers for one it has not seen. Returns 0 or -ENOMEM / -EINVAL
 * (empty name) with err set. sched_cluster_remove_namespace forgets the namespace called
 * name; 0 or -ENOENT. */
int sched_cluster_set_namespace(struct sched_cluster *c, const struct kube_namespace *ns,
                                struct err *err);
int sched_cluster_remove_namespace(struct sched_cluster *c, const char *name);

#endif
