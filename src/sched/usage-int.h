/* usage-int.h - what a pod takes from its node, as kube-scheduler counts it: requests and host
 * ports in the core's interned form; internal to the scheduling core. */
#ifndef SCHED_USAGE_INT_H
#define SCHED_USAGE_INT_H

#include <stdint.h>
#include "kube/object.h"
#include "sched/sched-int.h"

/* sched_pod_usage computes the request (PodRequests) and the non-zero request (missing cpu
 * and memory count 100m and 200Mi) of pod. Scalars with a zero value are left out. Returns
 * 0, -ENOMEM, or -E2BIG with more than SCHED_MAX_POD_SCALARS scalar resources. */
int sched_pod_usage(struct sched_cluster *c, const struct kube_pod *pod, struct sched_usage *u);

/* sched_pod_count_host_ports bounds the host ports of pod: the ports declared by its
 * containers and its restartable (sidecar) init containers. */
uint32_t sched_pod_count_host_ports(const struct kube_pod *pod);

/* sched_pod_host_ports writes pod's host ports into out (room for sched_pod_count_host_ports)
 * as kube-scheduler counts them: hostNetwork uses containerPort when hostPort is unset, ports
 * still <= 0 are skipped, an empty hostIP is "0.0.0.0" (interned in c->strs); refs are 0.
 * Sets *nout. Returns 0 or -ENOMEM (interning failed). */
int sched_pod_host_ports(struct sched_cluster *c, const struct kube_pod *pod,
                         struct sched_port *out, uint32_t *nout);

#endif
