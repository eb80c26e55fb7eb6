/* compile-int.h - a pod's constraints in interned form, once per cycle; internal to the
 * scheduling core. */
#ifndef SCHED_COMPILE_INT_H
#define SCHED_COMPILE_INT_H

#include "base/err.h"
#include "kube/object.h"
#include "sched/sched-int.h"

/* sched_pod_compile fills cp for pod under profile p (node selector, affinity terms,
 * tolerations, requests, host ports, NodeAffinity's PreFilter) from the cluster's compile
 * arena; 0, or -ENOMEM / -EINVAL / -E2BIG with err set. sched_cpod_release forgets cp (the
 * memory stays in the arena for the next pods). */
int sched_pod_compile(struct sched_cluster *c, const struct sched_profile *p,
                      const struct kube_pod *pod, struct sched_cpod *out, struct err *err);
void sched_cpod_release(struct sched_cpod *cp);

#endif
