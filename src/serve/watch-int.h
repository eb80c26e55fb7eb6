/* watch-int.h - the informers' handlers: watch events of nodes, pods, PodDisruptionBudgets,
 * Namespaces, Services and controllers applied to the cluster state, the queue and the
 * assumed set (each on its informer's thread, under serve_lock). */
#ifndef SERVE_WATCH_INT_H
#define SERVE_WATCH_INT_H

#include <stdbool.h>

#include <jansson.h>

#include "kube/informer.h"

/* serve_on_node and serve_on_pod are kube_informer_fn (ud is the struct serve);
 * serve_pod_filter keeps the pods serve cares about: not finished, and bound (to anyone) or
 * for this scheduler; serve_on_informer_log is kube_informer_log_fn. */
void serve_on_node(void *ud, enum kube_informer_op op, const char *key, json_t *obj);
void serve_on_pod(void *ud, enum kube_informer_op op, const char *key, json_t *obj);
/* serve_on_pdb: policy/v1 PodDisruptionBudgets into the cluster (preemption reads them). */
void serve_on_pdb(void *ud, enum kube_informer_op op, const char *key, json_t *obj);

/* serve_on_namespace keeps the cluster's Namespace labels (pod affinity's namespaceSelector)
 * current; a change moves the unschedulable pods back to the active queue. */
void serve_on_namespace(void *ud, enum kube_informer_op op, const char *key, json_t *obj);

/* serve_on_service, serve_on_replication_controller, serve_on_replica_set and
 * serve_on_stateful_set keep the core's record of the objects whose selectors give a pod
 * PodTopologySpread's system default constraints (sched_cluster_add_spread_source). */
void serve_on_service(void *ud, enum kube_informer_op op, const char *key, json_t *obj);
void serve_on_replication_controller(void *ud, enum kube_informer_op op, const char *key,
                                     json_t *obj);
void serve_on_replica_set(void *ud, enum kube_informer_op op, const char *key, json_t *obj);
void serve_on_stateful_set(void *ud, enum kube_informer_op op, const char *key, json_t *obj);
bool serve_pod_filter(void *ud, json_t *obj);
void serve_on_informer_log(void *ud, int level, const char *resource, const char *msg);

#endif
