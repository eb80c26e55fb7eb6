/* sched.h - the scheduling core: kube-scheduler's filter, score and preemption semantics
 * (v1.32 and later) over an incrementally maintained cluster state.
 *
 * Used by `gpusched simulate|explain|nodes` (offline, on manifest files) and by `gpusched
 * serve` (live, fed by watch events). With the built-in profiles every node is evaluated for
 * every pod, so answers and explanations are deterministic; a profile with
 * percentage_of_nodes_to_score below 100 samples nodes as kube-scheduler does (serve's
 * default). Ties between the best nodes are broken by a caller-seeded generator. The
 * semantics, the reason strings and the GPU-aware profile are documented in
 * docs/scheduling.md. Nothing here prints, exits or locks: a cluster is used by one thread at
 * a time. */
#ifndef SCHED_SCHED_H
#define SCHED_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/err.h"
#include "kube/object.h"

/* ---------------------------------------------------------------------------------------
 * Profiles
 * ------------------------------------------------------------------------------------- */

/* Which wording the TaintToleration filter uses for an untolerated taint. */
enum sched_taint_wording {
    /* v1.25-v1.34: "node(s) had untolerated taint {KEY: VALUE}" (the default) */
    SCHED_TAINT_WORDING_KEY_VALUE = 0,
    /* v1.35+ (and late 1.34 patches): "node(s) had untolerated taint(s)" */
    SCHED_TAINT_WORDING_GENERIC,
};

/* A scheduling profile. Filters are always kube-scheduler's, in its order:
 * NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit.
 * Scores of the "default" profile: TaintToleration x3, NodeAffinity x2, NodeResourcesFit
 * (LeastAllocated, cpu:1 memory:1) x1, NodeResourcesBalancedAllocation (cpu, memory) x1.
 * The "gpu" profile adds the GPUPlacement score (weight gpu_weight): for a pod requesting
 * gpu_resource, MostAllocated on that resource (bin-packing onto the fewest GPU nodes); for a
 * pod requesting none, 0 on nodes whose allocatable has gpu_resource > 0 and 100 elsewhere
 * (a penalty, never a filter). See docs/scheduling.md, "GPU-aware profile". */
struct sched_profile {
    const char *name;         /* "default" or "gpu" */
    bool gpu_aware;           /* GPUPlacement score on */
    const char *gpu_resource; /* "nvidia.com/gpu" */
    int32_t gpu_weight;       /* 10 in the "gpu" profile */
    enum sched_taint_wording taint_wording;
    /* percentageOfNodesToScore, 0..100 (see "Node sampling" below): 100, the built-in
     * profiles' value, filters every node; below 100 a cycle stops filtering once it has
     * sched_num_feasible_nodes_to_find feasible nodes; 0 is kube-scheduler's adaptive default.
     * Values above 100 act as 100, negative ones as 0. */
    int32_t percentage_of_nodes_to_score;
};

/* The two built-in profiles (static storage, never freed). */
extern const struct sched_profile sched_profile_default;
extern const struct sched_profile sched_profile_gpu;

/* sched_profile_find returns the built-in profile called name ("default" or "gpu"), or NULL.
 * Callers that want another taint wording or node sampling copy the profile and change the
 * member. */
const struct sched_profile *sched_profile_find(const char *name);

/* Node sampling (kube-scheduler's percentageOfNodesToScore, pkg/scheduler/schedule_one.go).
 * When a profile's percentage_of_nodes_to_score is below 100, a cycle of sched_schedule_one or
 * sched_explain:
 * - first filters the node named by the pod's status.nominatedNodeName, if that node exists
 *   (and is not cut out by NodeAffinity's PreFilter); when it passes, it is chosen at once;
 * - otherwise filters the candidate nodes (all nodes, or the ones NodeAffinity's PreFilter
 *   keeps) in node order starting at a position that rotates between cycles, and stops once
 *   sched_num_feasible_nodes_to_find(percentage, candidates) feasible nodes are found; only
 *   those are scored. The next cycle starts where this one stopped (kube-scheduler's
 *   nextStartNodeIndex = (start + nodes filtered) % all nodes, kept in the cluster).
 * A pod that fits nowhere has had every node filtered, so its FailedScheduling message ("0/N"
 * with N = all nodes) and preemption are the same as without sampling. At 100 none of this
 * happens: every node is filtered in node order and the nominated node gets no precedence. */

/* sched_num_feasible_nodes_to_find is kube-scheduler's numFeasibleNodesToFind: nnodes when
 * nnodes < 100 or percentage >= 100; else nnodes * pct / 100 but at least 100, where pct is
 * percentage, or for 0 (adaptive) 50 - nnodes / 125 but at least 5. E.g. 1,000 nodes -> 420,
 * 5,000 -> 500, 10,000 -> 500. */
uint32_t sched_num_feasible_nodes_to_find(int32_t percentage, uint32_t nnodes);

/* ---------------------------------------------------------------------------------------
 * Tie-break generator
 * ------------------------------------------------------------------------------------- */

/* A small deterministic generator (splitmix64). Same seed, same choices. */
struct sched_rng {
    uint64_t state;
};

void sched_rng_seed(struct sched_rng *r, uint64_t seed);
/* sched_rng_below returns a value uniform in [0, n), n > 0. */
uint64_t sched_rng_below(struct sched_rng *r, uint64_t n);

/* ---------------------------------------------------------------------------------------
 * Cluster state
 * ------------------------------------------------------------------------------------- */

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
int sched_cluster_add_node(struct sched_cluster *c, const struct kube_node *node,
                           struct err *err);
int sched_cluster_update_node(struct sched_cluster *c, const struct kube_node *node,
                              struct err *err);

/* sched_cluster_remove_node removes the node called name. Returns 0, or -ENOENT. */
int sched_cluster_remove_node(struct sched_cluster *c, const char *name);

/* sched_cluster_add_pod records an assigned pod (pod->node_name set): its requests, host
 * ports and priority count on that node. An existing entry with the same namespace/name is
 * replaced, which is how a bound pod confirms an assumed one. A pod with an empty node_name or
 * phase Succeeded/Failed removes a bound entry of that name but leaves an assumed entry in
 * place (its bind is still in flight). Returns 0 or -ENOMEM with err set. */
int sched_cluster_add_pod(struct sched_cluster *c, const struct kube_pod *pod,
                          struct err *err);

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

/* ---------------------------------------------------------------------------------------
 * Scheduling one pod
 * ------------------------------------------------------------------------------------- */

enum sched_outcome {
    SCHED_SCHEDULED = 0, /* node set */
    SCHED_UNSCHEDULABLE, /* message set: the FailedScheduling text */
    SCHED_GATED,         /* the pod has schedulingGates: not attempted (PodScheduled=False,
                            reason SchedulingGated); message NULL */
};

struct sched_victim {
    char *namespace_;
    char *name;
    int32_t priority;
    bool from_input;    /* sched_simulate: the victim was one of the pending pods it scheduled */
    size_t input_index; /* when from_input: its index in sched_simulate's pods[] */
};

/* The result of one scheduling attempt. Every pointer is owned by the result and freed by
 * sched_result_release.
 *
 * - Scheduled: node is the chosen node; message is NULL, except in sched_simulate when the pod
 *   only fitted after preemption (then message is the first attempt's FailedScheduling text).
 * - Unschedulable: message is kube-scheduler's FailedScheduling message, e.g.
 *   "0/6 nodes are available: 3 Insufficient nvidia.com/gpu, 3 node(s) had untolerated taint
 *   {node-role.kubernetes.io/control-plane: }. preemption: 0/6 nodes are available: 3 No
 *   preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling."
 *   or "no nodes available to schedule pods" for an empty cluster. When preemption found
 *   victims, the message carries no " preemption: ..." part (PostFilter succeeded),
 *   nominated_node names the node and victims lists the pods to evict, most important first
 *   (kube-scheduler's MoreImportantPod order). The caller evicts them; sched_schedule_one does
 *   not change the cluster. */
struct sched_result {
    enum sched_outcome outcome;
    char *node;
    char *message;
    char *nominated_node;
    struct sched_victim *victims;
    size_t nvictims;
    /* sched_simulate only */
    size_t attempt;      /* 0-based position in the scheduling order (priority, input order) */
    bool preempted;      /* the pod was scheduled and later evicted by a preemptor */
    size_t preempted_by; /* when preempted: input index of the preemptor */
};

/* sched_result_release frees what r owns and zeroes it; safe on a zeroed result. */
void sched_result_release(struct sched_result *r);

/* sched_schedule_one runs one scheduling cycle for pod against the cluster with profile p
 * (NULL = default): filters on every node (or on a sample, see "Node sampling"), scores on
 * the feasible ones, highest total wins;
 * among equal totals one is picked with rng (NULL = the first in node order). When no node
 * fits, DefaultPreemption runs (see docs/scheduling.md, "Preemption"). The pod's own
 * node_name is used only by the NodeName filter; assigned pods never reach a real scheduler.
 * The cluster's nodes and pods are not changed (call sched_cluster_assume_pod to take the
 * node); with sampling, the cycle moves the cluster's rotating start position.
 * Not modelled: PodDisruptionBudgets in victim choice, and room held on a node for a pod
 * nominated there by an earlier preemption (kube-scheduler's RunFilterPluginsWithNominatedPods):
 * a caller that nominates should retry the preemptor soon after its victims are gone.
 * Returns 0 with *out filled (release it with sched_result_release), or -ENOMEM with err set
 * and *out zeroed. */
int sched_schedule_one(struct sched_cluster *c, const struct sched_profile *p,
                       const struct kube_pod *pod, struct sched_rng *rng, struct sched_result *out,
                       struct err *err);

/* ---------------------------------------------------------------------------------------
 * Explaining one pod
 * ------------------------------------------------------------------------------------- */

#define SCHED_MAX_SCORES 5

/* One score plugin on one node. */
struct sched_score {
    const char *plugin; /* "TaintToleration", "NodeAffinity", "NodeResourcesFit",
                           "NodeResourcesBalancedAllocation", "GPUPlacement" (static) */
    int64_t raw;        /* the plugin's Score() */
    int64_t normalized; /* after NormalizeScore, 0-100 */
    int32_t weight;
    int64_t weighted; /* normalized * weight */
};

/* One node's verdict for the pod. */
struct sched_node_verdict {
    const char *node;
    /* Filtering: plugin is NULL when the node is feasible, else the rejecting plugin
     * ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
     * "NodeResourcesFit"); reasons are its status reasons exactly as counted in the message
     * (NodeResourcesFit may give several). Nodes cut out by NodeAffinity's PreFilter name pin
     * have plugin "NodeAffinity" and reason "node(s) didn't satisfy plugin(s) [NodeAffinity]". */
    const char *plugin;
    const char **reasons;
    size_t nreasons;
    bool unresolvable; /* status UnschedulableAndUnresolvable: preemption cannot help here */
    /* Node sampling only: the node was not filtered because the cycle had found enough
     * feasible nodes first (plugin NULL, no reasons, no scores). Never set at 100%. */
    bool skipped;
    /* Scoring (feasible nodes only) */
    struct sched_score scores[SCHED_MAX_SCORES];
    size_t nscores;
    int64_t total;
    bool selected; /* the node the result chose */
    /* Preemption (only when the pod fitted nowhere and may preempt; NULL otherwise):
     * "victims: ns/a, ns/b" for a candidate node, else the node's preemption reason
     * ("Preemption is not helpful for scheduling", "No preemption victims found for incoming
     * pod", or the filter's reason after removing all lower-priority pods). */
    const char *preemption;
};

struct sched_explanation {
    struct sched_node_verdict *nodes; /* one per node, in node order */
    size_t nnodes;
    size_t nfeasible;
    size_t nskipped;            /* nodes with skipped set (node sampling) */
    struct sched_result result; /* what sched_schedule_one gives with the same rng */
    struct arena arena;    /* owns every string and array above except result's */
};

/* sched_explain runs the same cycle as sched_schedule_one and keeps every node's filter
 * verdict, plugin scores and preemption outcome. Returns 0 with *out filled (release with
 * sched_explanation_release), or -ENOMEM with err set. */
int sched_explain(struct sched_cluster *c, const struct sched_profile *p,
                  const struct kube_pod *pod, struct sched_rng *rng, struct sched_explanation *out,
                  struct err *err);

/* sched_explanation_release frees what x owns and zeroes it; safe on a zeroed value. */
void sched_explanation_release(struct sched_explanation *x);

/* ---------------------------------------------------------------------------------------
 * Simulating a queue of pending pods
 * ------------------------------------------------------------------------------------- */

struct sched_sim_opts {
    uint64_t seed; /* tie-break seed; same input and seed, same output */
    /* Called every 256 attempts with the number done so far (may be NULL). */
    void (*progress)(void *arg, size_t done, size_t total);
    void *progress_arg;
};

/* sched_simulate schedules pods[0..n) into c, in kube-scheduler's queue order: priority
 * descending, then input order. Each scheduled pod is assumed onto its node, so later pods
 * see it. When a pod fits nowhere and preemption finds victims, the victims are removed from
 * the cluster (a victim that is one of pods[] gets preempted=true), and the pod is retried
 * once immediately, as nominated to that node (which node sampling filters first):
 * results[i] then has node (or the retry's message), nominated_node, victims and, as message,
 * the first attempt's FailedScheduling text. Pods with scheduling gates get SCHED_GATED.
 * results[] (n entries, caller-allocated, indexed like pods[]) is filled; release each with
 * sched_result_release. Returns 0, or -ENOMEM with err set (the results filled so far are
 * valid and must be released; the rest are zeroed). */
int sched_simulate(struct sched_cluster *c, const struct sched_profile *p,
                   const struct kube_pod *const *pods, size_t n, const struct sched_sim_opts *o,
                   struct sched_result *results, struct err *err);

#endif
