/* filter-int.h - kube-scheduler's filters on compiled pods: the static ones once per node class,
 * the dynamic ones per node; internal to the scheduling core. */
#ifndef SCHED_FILTER_INT_H
#define SCHED_FILTER_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "sched/sched-int.h"

/* sched_filter_class runs NodeUnschedulable, TaintToleration and NodeAffinity (the parts
 * that depend on labels only) for class cls, and the class part of the static scores. */
void sched_filter_class(struct sched_cluster *c, const struct sched_profile *p,
                        const struct sched_cpod *cp, uint32_t cls, struct sched_cverdict *v);

/* NodeAffinity's name-dependent parts: the required terms (term_mask: those whose
 * expressions matched) on node name, and the preferred terms' weights on it. */
bool sched_filter_affinity_by_name(const struct sched_cpod *cp, uint64_t term_mask, uint32_t name);
int32_t sched_score_preferred_by_name(const struct sched_cluster *c, const struct sched_cpod *cp,
                                      uint32_t cls, uint32_t name);

/* sched_filter_fit is NodeResourcesFit on the node at slot with usage use (scalar_req: the
 * node's scalar requests, or NULL for the live ones): 0 when the pod fits, else the
 * SCHED_FIT_* mask of what is insufficient; *unresolvable when a request exceeds the node's
 * allocatable outright. */
uint32_t sched_filter_fit(const struct sched_cluster *c, uint32_t slot, const struct sched_cpod *cp,
                          const struct sched_nodeuse *use, const int64_t *scalar_req,
                          bool *unresolvable);

/* sched_filter_ports is NodePorts: true when none of the pod's host ports is in use. */
bool sched_filter_ports(const struct sched_cluster *c, const struct sched_port *node_ports,
                        uint32_t nnode_ports, const struct sched_cpod *cp);

/* sched_filter_nominated_add adds the requests of the pods nominated to slot that hold room
 * against cp (priority >= cp's, not cp's own pod) to *use and to sreq[j] (the node's request
 * of cp's scalar j, filled by the caller); returns how many there are, with *ports_conflict
 * when a host port of one of them conflicts with cp's. */
uint32_t sched_filter_nominated_add(const struct sched_cluster *c, uint32_t slot,
                                    const struct sched_cpod *cp, struct sched_nodeuse *use,
                                    int64_t *sreq, bool *ports_conflict);

/* sched_filter_nominated is the first pass of RunFilterPluginsWithNominatedPods for the
 * dynamic filters (NodePorts, NodeResourcesFit; the others do not look at pods): false when no
 * nominated pod holds room on slot or the pod fits with them, else true with o's plugin,
 * reason and unresolvable set. The second pass (without them) cannot fail where the first
 * passed: these filters only get stricter as pods are added. */
bool sched_filter_nominated(const struct sched_cluster *c, uint32_t slot,
                            const struct sched_cpod *cp, struct sched_nodeout *o);
/* The node inclusion policies of PodTopologySpread on one node: the pod's nodeSelector and
 * required node affinity (matchFields too) hold on it; it has no NoSchedule or NoExecute
 * taint the pod does not tolerate. */
bool sched_filter_affinity_slot(const struct sched_cluster *c, const struct sched_cpod *cp,
                                uint32_t slot);
bool sched_filter_taints_slot(const struct sched_cluster *c, const struct sched_cpod *cp,
                              uint32_t slot);

#endif
