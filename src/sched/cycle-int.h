/* cycle-int.h - one scheduling cycle over the nodes: filters, scores, the tie-break; internal to
 * the scheduling core. */
#ifndef SCHED_CYCLE_INT_H
#define SCHED_CYCLE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "base/err.h"
#include "sched/sched-int.h"

/* sched_cycle_choose is the fast path of a cycle that only wants the chosen node: *chosen is
 * the order index, or -1 when no node fits (run sched_cycle_run for the statuses). Makes the
 * same tie-break draws as sched_cycle_run and visits the same nodes; *processed is
 * sched_cycle's processed. */
int sched_cycle_choose(struct sched_cluster *c, const struct sched_profile *p,
                       const struct sched_cpod *cp, struct sched_rng *rng, int32_t *chosen,
                       uint32_t *processed, struct err *err);

/* sched_cycle_run evaluates every node, or with node sampling the nodes sched_cycle_choose
 * visits (the others get SCHED_PL_SKIPPED); ref selects the straightforward reference path.
 * sched_cycle_release forgets cy (its rows are the cluster's scratch). */
int sched_cycle_run(struct sched_cluster *c, const struct sched_profile *p,
                    const struct sched_cpod *cp, struct sched_rng *rng, bool ref,
                    struct sched_cycle *cy, struct err *err);
void sched_cycle_release(struct sched_cycle *cy);

/* sched_cycle_needs_rows: the pod has per-node rules sched_cycle_choose does not evaluate
 * (InterPodAffinity's filter or score, ImageLocality on some node): run sched_cycle_run. */
bool sched_cycle_needs_rows(const struct sched_cpod *cp);

#endif
