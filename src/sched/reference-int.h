/* reference-int.h - the straightforward evaluation of one pod on one node, the oracle of the
 * fast path (tests/unit/test_sched_equiv.c); internal to the scheduling core. */
#ifndef SCHED_REFERENCE_INT_H
#define SCHED_REFERENCE_INT_H

#include <stdint.h>
#include "sched/sched-int.h"

/* sched_ref_node fills o for pod cp on the node at slot from scratch: the node's full label
 * set instead of its class, strings instead of ids, its usage summed from its pods. It must
 * give the row the fast path gives. */
void sched_ref_node(struct sched_cluster *c, const struct sched_profile *p,
                    const struct sched_cpod *cp, uint32_t slot, struct sched_nodeout *o);

/* sched_ref_ipa_dry_filter is InterPodAffinity's Filter in a preemption dry run on the node at
 * slot, from scratch: the node holds only on[0..non) (its pods left and the pods nominated to
 * it, which count in a first pass and not in the second); 0 or the reason id. It must answer
 * what sched_ipa_dry_filter answers. */
uint32_t sched_ref_ipa_dry_filter(const struct sched_cluster *c, const struct sched_cpod *cp,
                                  uint32_t slot, struct sched_pod *const *on, uint32_t non);

#endif
