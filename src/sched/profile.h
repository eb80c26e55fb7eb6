/* profile.h - scheduling profiles: the plugins and weights a cycle uses, node sampling
 * (percentageOfNodesToScore), and the generator that breaks ties between the best nodes. */
#ifndef SCHED_PROFILE_H
#define SCHED_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

/* Which wording the TaintToleration filter uses for an untolerated taint. */
enum sched_taint_wording {
    /* v1.35+ (and late 1.34 patches): "node(s) had untolerated taint(s)" (the default:
     * kube-scheduler v1.37) */
    SCHED_TAINT_WORDING_GENERIC = 0,
    /* v1.25-v1.34: "node(s) had untolerated taint {KEY: VALUE}" */
    SCHED_TAINT_WORDING_KEY_VALUE,
};

/* A scheduling profile. Filters are always kube-scheduler's, in its order:
 * NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit.
 * Scores of the "default" profile: TaintToleration x3, NodeAffinity x2, NodeResourcesFit
 * (LeastAllocated, cpu:1 memory:1) x1, NodeResourcesBalancedAllocation (cpu, memory) x1.
 * The "gpu" profile adds the GPUPlacement score (weight gpu_weight): for a pod requesting
 * GPUs, MostAllocated on the node's GPUs (bin-packing onto the fewest GPU nodes); for a pod
 * requesting none, 0 on nodes with GPUs and 100 elsewhere (a penalty, never a filter). GPUs:
 * allocatable gpu_resource (a device plugin's) and the DRA devices the DeviceClass serving
 * gpu_resource selects; a pod's, its request of gpu_resource and its claims' devices of that
 * class. See docs/scheduling.md, "GPU-aware profile". */
/* NodeResourcesFit's scoringStrategy.type */
enum sched_fit_strategy {
    SCHED_FIT_LEAST_ALLOCATED = 0,
    SCHED_FIT_MOST_ALLOCATED,
    SCHED_FIT_REQUESTED_TO_CAPACITY_RATIO,
};

#define SCHED_MAX_FIT_RESOURCES 8
#define SCHED_MAX_SHAPE_POINTS 11

/* One of scoringStrategy.resources: a resource name ("cpu", "memory", "ephemeral-storage" or
 * an extended resource such as "nvidia.com/gpu") and its weight, 1..100. */
struct sched_fit_resource {
    const char *name; /* borrowed: the built-ins' are static, a --config file's live as long
                       * as the profile */
    int64_t weight;
};

/* One point of RequestedToCapacityRatio's shape: utilization 0..100, score 0..10 (scaled by
 * 10 to MaxNodeScore when scoring, as kube-scheduler does). */
struct sched_shape_point {
    int64_t utilization, score;
};

struct sched_profile {
    const char *name;         /* "default", "gpu", or a --config profile's schedulerName */
    bool gpu_aware;           /* GPUPlacement score on */
    const char *gpu_resource; /* "nvidia.com/gpu" */
    int32_t gpu_weight;       /* 10 in the "gpu" profile */
    enum sched_taint_wording taint_wording;
    /* DynamicResources off, as by default before v1.34 (sched_profile_set_version): a pod
     * that a PreFilter rejects goes on to DefaultPreemption. On (v1.34+, false here), that
     * plugin's PostFilter runs first and fails: see sched_schedule_one. */
    bool dra_off;
    /* percentageOfNodesToScore, 0..100 (see "Node sampling" below): 100, the built-in
     * profiles' value, filters every node; below 100 a cycle stops filtering once it has
     * numFeasibleNodesToFind feasible nodes; 0 is kube-scheduler's adaptive default.
     * Values above 100 act as 100, negative ones as 0. */
    int32_t percentage_of_nodes_to_score;
    /* Score plugin weights (0 = the plugin is disabled at Score): TaintToleration 3,
     * NodeAffinity 2, NodeResourcesFit 1, NodeResourcesBalancedAllocation 1, PodTopologySpread
     * 2 in both built-ins, as in kube-scheduler's default profile. */
    int32_t w_taint, w_affinity, w_fit, w_balanced, w_spread, w_interpod, w_image;
    /* NodeResourcesFit's scoringStrategy: LeastAllocated over cpu:1, memory:1 in the built-ins
     * (kube-scheduler's default); shape used only by RequestedToCapacityRatio. */
    enum sched_fit_strategy fit_strategy;
    uint32_t nfit_resources;
    struct sched_fit_resource fit_resources[SCHED_MAX_FIT_RESOURCES];
    uint32_t nshape;
    struct sched_shape_point shape[SCHED_MAX_SHAPE_POINTS];
    /* DynamicResourcesArgs.bindingTimeout in ms (0: the default, 600 s): how long PreBind
     * waits for devices' binding conditions (gpusched serve), and when an allocation whose
     * conditions are not met counts as timed out */
    int64_t dra_binding_timeout_ms;
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
 *   numFeasibleNodesToFind(percentage, candidates) feasible nodes are found (candidates when
 *   fewer than 100 or percentage >= 100; else candidates * pct / 100 but at least 100, where
 *   pct is percentage, or for 0 (adaptive) 50 - candidates / 125 but at least 5: 1,000 nodes
 *   -> 420, 5,000 -> 500, 10,000 -> 500); only
 *   those are scored. The next cycle starts where this one stopped (kube-scheduler's
 *   nextStartNodeIndex = (start + nodes filtered) % all nodes, kept in the cluster).
 * A pod that fits nowhere has had every node filtered, so its FailedScheduling message ("0/N"
 * with N = all nodes) and preemption are the same as without sampling. At 100 none of this
 * happens: every node is filtered in node order and the nominated node gets no precedence. */

/* The tie-break generator. */
/* A small deterministic generator (splitmix64). Same seed, same choices.
 *
 * follow_node and follow_preempt (NULL unless a caller sets them, borrowed) let a caller
 * replay another scheduler's choices (`gpusched simulate --follow`): when the best nodes of a
 * cycle tie and follow_node is one of them, it is taken (the draw is still made, so later
 * draws do not change); when preemption has several candidates equal on every criterion and
 * follow_preempt is one of them, it is nominated. A node outside the ties changes nothing. */
struct sched_rng {
    uint64_t state;
    const char *follow_node;
    const char *follow_preempt;
};

/* sched_rng_seed starts r at seed (follow_node and follow_preempt NULL). */
void sched_rng_seed(struct sched_rng *r, uint64_t seed);

#endif
