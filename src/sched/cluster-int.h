/* cluster-int.h - the scheduling core's own view of the cluster (cluster.c): pods by key,
 * node classes, the reason strings and a slot's usage (the types are in sched-int.h). Not for
 * callers outside src/sched/. */
#ifndef SCHED_CLUSTER_INT_H
#define SCHED_CLUSTER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "sched/sched-int.h"

/* sched_cluster_find_pod returns the pod ns/name counted in the cluster, or NULL. */
struct sched_pod *sched_cluster_find_pod(const struct sched_cluster *c, const char *ns,
                                         const char *name);

/* sched_cluster_find_namespace returns the Namespace object of id nsid (as
 * sched_cluster_set_namespace kept it), or NULL when the cluster has none of that name. */
const struct sched_ns *sched_cluster_find_namespace(const struct sched_cluster *c, uint32_t nsid);

/* sched_cluster_refresh_classes recomputes every present node's class from scratch (after
 * the interesting keys changed, or when too many classes are dead); 0 or -ENOMEM.
 * sched_cluster_mark_interesting makes a label key part of the class key (a pod looked at
 * it); the classes are refreshed before the next cycle when nodes carry it. */
int sched_cluster_refresh_classes(struct sched_cluster *c);
int sched_cluster_mark_interesting(struct sched_cluster *c, uint32_t key);

/* The reason strings counted in the FailedScheduling message, as ids of c->reasons:
 * "Insufficient <resource rid>", and the untolerated-taint wording of class cl's taint ti.
 * SCHED_NOID when out of memory. sched_plugin_name names a SCHED_PL_* plugin (NULL for
 * none). */
uint32_t sched_reason_insufficient(struct sched_cluster *c, uint32_t rid);
uint32_t sched_reason_taint(struct sched_cluster *c, struct sched_class *cl, uint32_t ti,
                            enum sched_taint_wording w);
const char *sched_plugin_name(int plugin);

/* sched_slot_scalar returns the slot's entry for scalar resource rid, or NULL. */
const struct sched_scalar *sched_slot_scalar(const struct sched_slot *s, uint32_t rid);

/* sched_slot_usage_apply removes (sign -1) or re-adds (+1) a pod's usage on its slot
 * (preemption dry runs use their own copies). */
void sched_slot_usage_apply(struct sched_cluster *c, uint32_t slot, const struct sched_pod *p,
                            int sign);

#endif
