/* nodeunschedulable.c - kube-scheduler's NodeUnschedulable (pkg/scheduler/framework/plugins/
 * nodeunschedulable): a node with spec.unschedulable fails unless the pod tolerates the
 * node.kubernetes.io/unschedulable:NoSchedule taint. Run once per node class (framework.c). */
#include "sched/plugins-int.h"

#include "sched/sched-int.h"

bool sched_nodeunschedulable_filter_class(const struct sched_cluster *c,
                                          const struct sched_cpod *cp, const struct sched_class *cl)
{
    return !cl->unschedulable || sched_tolerates(cp, c->key_unschedulable_taint, c->id_empty,
                                                 KUBE_EFFECT_NO_SCHEDULE, false);
}
