/* schedule.h - one scheduling attempt for one pod: sched_schedule_one (the answer) and
 * sched_explain (the answer with every node's verdict, scores and preemption outcome). */
#ifndef SCHED_SCHEDULE_H
#define SCHED_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/err.h"
#include "kube/object.h"
#include "sched/cluster.h"
#include "sched/profile.h"

enum sched_outcome {
    SCHED_SCHEDULED = 0, /* node set */
    SCHED_UNSCHEDULABLE, /* message set: the FailedScheduling text */
    SCHED_GATED,         /* the pod has schedulingGates: not attempted (PodScheduled=False,
                            reason SchedulingGated); message NULL */
    SCHED_NOT_MODELLED,  /* not attempted: the pod has spec.resourceClaims, and gpusched does
                            not model DynamicResources (kube-scheduler's PreEnqueue holds a pod
                            whose claim does not exist; allocating existing ones is not
                            modelled); message NULL. Never a silent placement */
};

struct sched_victim {
    char *namespace_;
    char *name;
    int32_t priority;
    bool terminating;   /* it has a deletionTimestamp already: kube-scheduler sends no
                           DELETE (and no DisruptionTarget patch) for it */
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
 *   victims, the message ends with v1.37's " preemption: found a potential placement for pod
 *   on node N, preempting K victims", nominated_node names the node and victims lists the
 *   pods to evict, most important first (kube-scheduler's MoreImportantPod order). The caller
 *   evicts them and records the nomination (sched_cluster_nominate); sched_schedule_one does
 *   not change the cluster. When preemption ran and found no candidate, clear_nomination is
 *   set: kube-scheduler then clears the pod's status.nominatedNodeName. */
struct sched_result {
    enum sched_outcome outcome;
    /* with SCHED_UNSCHEDULABLE: the attempt failed with a plugin error, not a FitError
     * (message "running PreScore plugin ...": kube-scheduler's SchedulerError); no
     * preemption was tried */
    bool error;
    bool clear_nomination;
    bool preempted; /* sched_simulate only: the pod was scheduled and later evicted by a
                       preemptor (the flags together: no padding holes, one per pending pod) */
    /* the FitError's message says DynamicResources' PostFilter deallocated a claim of the
     * pod (or deleted its extended-resource claim): the claim's update requeues the pod
     * (sched_simulate tries it again at once, as after a preemption) */
    bool requeued;
    char *node;
    /* with error: DynamicResources' PreBind failed on this node (the chosen one); the world
     * holds what PreBind wrote before it stopped and what Unreserve then took back (serve
     * writes the same); NULL for any other outcome */
    char *prebind_node;
    char *message;
    char *nominated_node;
    struct sched_victim *victims;
    size_t nvictims;
    /* sched_simulate only */
    size_t attempt;      /* 0-based position in the scheduling order (priority, input order) */
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
 * Pods nominated to a node (sched_cluster_nominate) with priority >= the pod's hold their
 * room there (RunFilterPluginsWithNominatedPods). The pod's nominated node is its
 * status.nominatedNodeName, or the cluster's nomination of it when it has one.
 * Returns 0 with *out filled (release it with sched_result_release), or -ENOMEM with err set
 * and *out zeroed. */
int sched_schedule_one(struct sched_cluster *c, const struct sched_profile *p,
                       const struct kube_pod *pod, struct sched_rng *rng, struct sched_result *out,
                       struct err *err);

/* ---------------------------------------------------------------------------------------
 * Explaining one pod
 * ------------------------------------------------------------------------------------- */

#define SCHED_MAX_SCORES 12

/* One score plugin on one node. */
struct sched_score {
    const char *plugin; /* "TaintToleration", "NodeAffinity", "NodeResourcesFit",
                           "NodeResourcesBalancedAllocation", "VolumeBinding" (for a pod
                           with claims), "PodTopologySpread" (when it scores),
                           "InterPodAffinity", "ImageLocality", "GPUPlacement"
                           (static) */
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
     * "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity"); reasons are its status reasons exactly as counted in the message
     * (NodeResourcesFit may give several). Nodes cut out by NodeAffinity's PreFilter name pin
     * have plugin "NodeAffinity" and reason "node(s) didn't satisfy plugin(s) [NodeAffinity]". */
    const char *plugin;
    const char **reasons;
    size_t nreasons;
    bool unresolvable; /* status UnschedulableAndUnresolvable: preemption cannot help here */
    /* DynamicResources' "cannot allocate all claims" (and "invalid resource pools were
     * encountered") only, when the cluster's DRA world
     * records why (sched_dra_set_why): what each request found on the node, lines ending in
     * '\n' (sched_dra_why_text); NULL otherwise */
    const char *dra_why;
    /* Node sampling only: the node was not filtered because the cycle had found enough
     * feasible nodes first (plugin NULL, no reasons, no scores). Never set at 100%. */
    bool skipped;
    /* Scoring (feasible nodes only) */
    struct sched_score scores[SCHED_MAX_SCORES];
    size_t nscores;
    int64_t total;
    bool selected; /* the node the result chose */
    /* Preemption (only when the pod fitted nowhere and may preempt; NULL otherwise):
     * "victims: ns/a, ns/b" for a candidate node (with " (PDB violations: N)" when some of
     * them are protected by a PodDisruptionBudget), else the node's preemption reason
     * ("Preemption is not helpful for scheduling", "No preemption victims found for incoming
     * pod", or the filter's reason after removing all lower-priority pods). */
    const char *preemption;
};

struct sched_explanation {
    struct sched_node_verdict *nodes; /* one per node, in node order */
    size_t nnodes;
    size_t nfeasible;
    size_t nskipped; /* nodes with skipped set (node sampling) */
    /* NodeAffinity's PreScore error when some node is feasible (the result is that error
     * when two or more are), NULL otherwise; owned by arena */
    const char *score_error;
    struct sched_result result; /* what sched_schedule_one gives with the same rng */
    struct arena arena;         /* owns every string and array above except result's */
};

/* sched_explain runs the same cycle as sched_schedule_one and keeps every node's filter
 * verdict, plugin scores and preemption outcome. Returns 0 with *out filled (release with
 * sched_explanation_release), or -ENOMEM with err set. */
int sched_explain(struct sched_cluster *c, const struct sched_profile *p,
                  const struct kube_pod *pod, struct sched_rng *rng, struct sched_explanation *out,
                  struct err *err);

/* sched_explanation_release frees what x owns and zeroes it; safe on a zeroed value. */
void sched_explanation_release(struct sched_explanation *x);

#endif
