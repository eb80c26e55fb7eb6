/* framework-int.h - the extension points that run several plugins in kube-scheduler's order
 * (framework.c): the PreFilters after a pod's compilation, the Filters once per node class,
 * the Filters with the nominated pods, the Filters that come after NodeResourcesFit (and the
 * same in preemption's dry run), Reserve. Internal to the scheduling
 * core; the plugins' own hooks are in plugins-int.h. */
#ifndef SCHED_FRAMEWORK_INT_H
#define SCHED_FRAMEWORK_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "kube/object.h"
#include "sched/sched-int.h"

/* sched_framework_prefilter runs the PreFilters sched_pod_compile has not run, after it: the
 * volume plugins' (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone), then
 * PodTopologySpread's. A rejection sets cp->prefilter_conflict and cp->prefilter_msg. 0 or
 * -ENOMEM. */
int sched_framework_prefilter(struct sched_cluster *c, struct sched_cpod *cp);

/* sched_framework_filter_class runs the Filters that read only a node's labels, taints and
 * unschedulable flag on node class cls, in order (NodeUnschedulable, TaintToleration,
 * NodeAffinity's expressions; NodeName comes between the first two in kube-scheduler's list
 * but reads the name: cycle.c checks it per node), and the class part of their Scores: v's
 * plugin and reason when one fails, NodeAffinity's term mask, the raw taint and affinity
 * scores. */
void sched_framework_filter_class(struct sched_cluster *c, const struct sched_profile *p,
                                  const struct sched_cpod *cp, uint32_t cls,
                                  struct sched_cverdict *v);

/* sched_framework_filter_nominated is the first pass of RunFilterPluginsWithNominatedPods for
 * the Filters that read a node's pods (NodePorts, NodeResourcesFit; the others do not look at
 * pods) on the node at slot: false when no nominated pod holds room there (priority >= the
 * pod's, not the pod itself) or the pod fits with them, else true with o's plugin, reason and
 * unresolvable set. The second pass (without them) cannot fail where the first passed: these
 * filters only get stricter as pods are added. */
bool sched_framework_filter_nominated(const struct sched_cluster *c, uint32_t slot,
                                      const struct sched_cpod *cp, struct sched_nodeout *o);

/* sched_framework_filter_late runs, on the node at slot whose row o the other filters have
 * filled, the Filters they leave out: the volume plugins' and PodTopologySpread's (ref: the
 * reference path's counts). Of the filters gpusched models only InterPodAffinity comes after
 * them in kube-scheduler's order, and that one runs inside cycle.c's and reference.c's node
 * pass: a node it rejected is looked at here too, and the earlier plugin's reason wins when
 * both say no. */
void sched_framework_filter_late(const struct sched_cluster *c, const struct sched_cpod *cp,
                                 uint32_t slot, bool ref, struct sched_nodeout *o);

/* sched_framework_filter_late_dry is the same in preemption's dry run on the node at slot,
 * where only the pods on[0..non) remain: false with *plugin and *reason set when one fails. */
bool sched_framework_filter_late_dry(const struct sched_cluster *c, const struct sched_cpod *cp,
                                     uint32_t slot, struct sched_pod *const *on, uint32_t non,
                                     uint32_t *plugin, uint32_t *reason);

/* sched_framework_reserve runs the Reserve plugins for pod, placed on node by a simulation
 * (VolumeBinding: its claims bound for the pods that follow). 0 or -ENOMEM with err set. */
int sched_framework_reserve(struct sched_cluster *c, const struct kube_pod *pod, const char *node,
                            struct err *err);

#endif
