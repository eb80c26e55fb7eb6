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

/* sched_sampling_on: p samples nodes (percentage_of_nodes_to_score below 100). */
bool sched_sampling_on(const struct sched_profile *p);

/* ---------------------------------------------------------------------------------------
 * Tie-break generator
 * ------------------------------------------------------------------------------------- */

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

void sched_rng_seed(struct sched_rng *r, uint64_t seed);
/* sched_rng_below returns a value uniform in [0, n), n > 0. */
uint64_t sched_rng_below(struct sched_rng *r, uint64_t n);

#endif
