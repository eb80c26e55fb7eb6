/* profile-int.h - what the scheduling core reads of a profile beyond its members (profile.c):
 * the fast path's score key, node sampling's arithmetic, the tie-break draw. Not for callers
 * outside src/sched/. */
#ifndef SCHED_PROFILE_INT_H
#define SCHED_PROFILE_INT_H

#include <stdbool.h>
#include <stdint.h>

struct sched_profile;
struct sched_rng;

/* sched_profile_fit_default: p scores NodeResourcesFit as the built-ins do (LeastAllocated,
 * cpu:1 memory:1), the fast path's specialised case. */
bool sched_profile_fit_default(const struct sched_profile *p);

/* sched_profile_score_key is a 64-bit digest of the members that change a node's resource
 * scores (weights of Fit, BalancedAllocation and GPUPlacement, the strategy, its resources
 * and shape): the fast path's cache of those scores is kept per pod shape and key. */
uint64_t sched_profile_score_key(const struct sched_profile *p);

/* sched_num_feasible_nodes_to_find is kube-scheduler's numFeasibleNodesToFind: nnodes when
 * nnodes < 100 or percentage >= 100; else nnodes * pct / 100 but at least 100, where pct is
 * percentage, or for 0 (adaptive) 50 - nnodes / 125 but at least 5. E.g. 1,000 nodes -> 420,
 * 5,000 -> 500, 10,000 -> 500. */
uint32_t sched_num_feasible_nodes_to_find(int32_t percentage, uint32_t nnodes);

/* sched_sampling_on: p samples nodes (percentage_of_nodes_to_score below 100). */
bool sched_sampling_on(const struct sched_profile *p);

/* sched_rng_below returns a value uniform in [0, n), n > 0. */
uint64_t sched_rng_below(struct sched_rng *r, uint64_t n);

#endif
