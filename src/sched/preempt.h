/* preempt.h - DefaultPreemption (PostFilter) for a pod that fits nowhere; internal to the
 * scheduling core. */
#ifndef SCHED_PREEMPT_H
#define SCHED_PREEMPT_H

#include "base/err.h"
#include "sched/sched-int.h"

/* sched_preempt runs preemption for cp after the failed cycle cy: eligibility, victims per
 * candidate node, the candidate chosen (the first best in node order, or rng->follow_preempt
 * when it is as good; rng may be NULL). Fills pr (release with sched_preemption_release);
 * 0 or -ENOMEM with err set. */
int sched_preempt(struct sched_cluster *c, const struct sched_profile *p,
                  const struct sched_cpod *cp, const struct sched_cycle *cy,
                  const struct sched_rng *rng, struct sched_preemption *pr, struct err *err);
void sched_preemption_release(struct sched_preemption *pr);

#endif
