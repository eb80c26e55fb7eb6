/* reference.h - the straightforward evaluation of one pod on one node, the oracle of the
 * fast path (tests/unit/test_sched_equiv.c); internal to the scheduling core. */
#ifndef SCHED_REFERENCE_H
#define SCHED_REFERENCE_H

#include <stdint.h>
#include "sched/sched-int.h"

/* sched_ref_node fills o for pod cp on the node at slot from scratch: the node's full label
 * set instead of its class, strings instead of ids, its usage summed from its pods. It must
 * give the row the fast path gives. */
void sched_ref_node(struct sched_cluster *c, const struct sched_profile *p,
                    const struct sched_cpod *cp, uint32_t slot, struct sched_nodeout *o);

#endif
