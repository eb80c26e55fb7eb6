/* score.h - the score plugins' formulas, in kube-scheduler's arithmetic; internal to the
 * scheduling core. */
#ifndef SCHED_SCORE_H
#define SCHED_SCORE_H

#include <stdbool.h>
#include <stdint.h>
#include "sched/profile.h"

/* NodeResourcesFit LeastAllocated and NodeResourcesBalancedAllocation (cpu and memory, weight
 * 1 each), GPUPlacement of the "gpu" profile, and NormalizeScore to 0..100 (reverse: the
 * lowest raw score gets 100). */
int64_t sched_score_least_allocated(int64_t alloc_cpu, int64_t req_cpu, int64_t alloc_mem,
                                    int64_t req_mem);
int64_t sched_score_balanced(int64_t alloc_cpu, int64_t node_cpu, int64_t pod_cpu,
                             int64_t alloc_mem, int64_t node_mem, int64_t pod_mem);
int64_t sched_score_gpu(const struct sched_profile *p, int64_t alloc_gpu, int64_t req_gpu,
                        int64_t pod_gpu);
/* sched_score_fit is NodeResourcesFit's score under p's scoringStrategy, given for each of
 * p->fit_resources the node's allocatable (0: the resource is left out, as kube-scheduler
 * leaves out a resource the node lacks or an extended resource the pod does not request) and
 * requested-with-the-pod: the weighted mean of leastRequestedScore / mostRequestedScore
 * (integer division), or of the broken-linear shape (scores x10, a 0 left out of the mean,
 * rounded half away from zero) for RequestedToCapacityRatio. */
int64_t sched_score_fit(const struct sched_profile *p, const int64_t *alloc, const int64_t *req);

/* sched_fit_resource_kind: 0 cpu, 1 memory, 2 ephemeral-storage, 3 any other (scalar) */
int sched_fit_resource_kind(const char *name);

int64_t sched_normalize(int64_t score, int64_t max, bool reverse);

#endif
