/* preempt.h - DefaultPreemption (PostFilter) for a pod that fits nowhere; internal to the
 * scheduling core. */
#ifndef SCHED_PREEMPT_H
#define SCHED_PREEMPT_H

#include "base/err.h"
#include "sched/sched-int.h"

/* sched_preempt runs preemption for cp after the failed cycle cy: eligibility, victims per
 * candidate node, the candidate chosen (the first best in node order, or rng->follow_preempt
 * when it is as good; rng may be NULL). Fills pr (release with sched_preemption_release);
 * 0 or -ENOMEM with err set. all_nodes: pr->nodes gets every node's verdict (explanations);
 * otherwise only the chosen candidate is kept (sched_preemption_chosen). ref: every node
 * through the dry run of every filter, never the summaries' fast path (the reference of
 * tests/unit/test_sched_equiv.c). npotential: how many rows of cy failed and not as unresolvable
 * (sched_hist_add_nodes counts them), UINT32_MAX to count them here. */
int sched_preempt(struct sched_cluster *c, const struct sched_profile *p,
                  const struct sched_cpod *cp, const struct sched_cycle *cy, uint32_t npotential,
                  const struct sched_rng *rng, bool ref, bool all_nodes,
                  struct sched_preemption *pr, struct err *err);
void sched_preemption_release(struct sched_preemption *pr);

/* sched_preemption_chosen is the chosen candidate's verdict (its victims, most important
 * first), NULL when there is none. */
const struct sched_preempt_node *sched_preemption_chosen(const struct sched_preemption *pr);

/* sched_preempt_fast_nodes counts the nodes the summaries' fast path judged so far (tests). */
uint64_t sched_preempt_fast_nodes(const struct sched_cluster *c);

/* DefaultPreemptionArgs' defaults */
#define SCHED_MIN_CANDIDATE_NODES_PERCENTAGE 10
#define SCHED_MIN_CANDIDATE_NODES_ABSOLUTE 100

/* sched_preempt_num_candidates is calculateNumCandidates: how many candidates the dry run
 * looks for among npotential nodes (10% of them, at least 100, at most all). */
uint32_t sched_preempt_num_candidates(uint32_t npotential);

/* sched_preempt_cmp_candidates is pickOneNodeForPreemption's order: fewer PDB violations,
 * lower highest-victim priority, lower sum of priorities, fewer victims, later start of the
 * highest-priority victims (victims are most important first). <0 when a is better, >0 when
 * b is, 0 on a tie (kube-scheduler then takes whichever its map gives first; we keep node
 * order). */
int sched_preempt_cmp_candidates(const struct sched_preempt_node *a,
                                 const struct sched_preempt_node *b);

/* sched_pdb_violations sets violating[i] (n entries) for the victims whose eviction a
 * PodDisruptionBudget forbids, counting them in order against each budget's
 * disruptionsAllowed (FilterVictimsWithPDBViolation); victims are in importance order, as
 * kube-scheduler passes them. 0 or -ENOMEM. */
int sched_pdb_violations(const struct sched_cluster *c, struct sched_pod *const *victims,
                         uint32_t n, uint8_t *violating);

#endif
