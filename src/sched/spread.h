/* spread.h - PodTopologySpread (kube-scheduler's podtopologyspread plugin): the pod's
 * topologySpreadConstraints, or the system defaults for a pod that a Service,
 * ReplicationController, ReplicaSet or StatefulSet selects. The first section is the
 * cluster's API (the objects the defaults read); the last is for the core's own modules. */
#ifndef SCHED_SPREAD_H
#define SCHED_SPREAD_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "kube/object.h"

struct sched_cluster;
struct sched_spread_sources;

/* sched_cluster_add_spread_source records an object whose selector makes the system default
 * constraints (kubernetes.io/hostname maxSkew 3, topology.kubernetes.io/zone maxSkew 5, both
 * ScheduleAnyway) apply to the pods it selects, as helper.DefaultSelector reads them:
 * - owner_kind NULL: a Service in namespace ns with spec.selector sel (matchLabels form;
 *   sel->present false for a nil selector, which selects nothing); it selects the pods of ns
 *   whose labels it matches.
 * - owner_kind "ReplicationController", "ReplicaSet", "StatefulSet" (or "Deployment", for the
 *   ReplicaSet the Deployment would create: sel then includes pod-template-hash): it selects
 *   the pods whose controller owner reference is that kind and name in ns (and, when the pod
 *   came from the API, apiVersion v1 for a ReplicationController, apps/v1 for the others).
 * An object of the same kind, namespace and name recorded before is replaced (a watch's
 * update). Strings are copied. Returns 0 or -ENOMEM with err set. */
int sched_cluster_add_spread_source(struct sched_cluster *c, const char *owner_kind, const char *ns,
                                    const char *name, const struct kube_label_selector *sel,
                                    struct err *err);

/* sched_cluster_remove_spread_source forgets the object recorded under that kind (NULL: a
 * Service), namespace and name (a watch's delete). 0, or -ENOENT when there is none. */
int sched_cluster_remove_spread_source(struct sched_cluster *c, const char *owner_kind,
                                       const char *ns, const char *name);

/* ---------------------------------------------------------------------------------------
 * Internal to the scheduling core
 * ------------------------------------------------------------------------------------- */

struct sched_cpod;
struct sched_spread;
struct sched_pod;

/* sched_spread_sources_free frees what sched_cluster_add_spread_source kept (NULL ok). */
void sched_spread_sources_free(struct sched_spread_sources *s);

/* sched_spread_prefilter compiles the pod's constraints (its own, else the system defaults)
 * into cp->spread and counts the pods matching each DoNotSchedule constraint per topology
 * domain (PreFilter). cp->spread stays NULL when the plugin has nothing to do (PreFilter and
 * PreScore would Skip). Memory from cp's arena. 0 or -ENOMEM. */
int sched_spread_prefilter(struct sched_cluster *c, struct sched_cpod *cp);

/* sched_spread_filter is the Filter on the node at slot: 0 when it passes, else the reason
 * (SCHED_R_SPREAD, or SCHED_R_SPREAD_LABEL with *unresolvable set). ref recounts from scratch
 * instead of reading the PreFilter counts (the reference path). */
uint32_t sched_spread_filter(const struct sched_cluster *c, const struct sched_cpod *cp,
                             uint32_t slot, bool ref, bool *unresolvable);

/* sched_spread_filter_dry is the Filter during preemption's dry run on the node at slot,
 * where only the pods on[0..non) remain (RemovePod for the others); false with *reason set
 * when it fails. */
bool sched_spread_filter_dry(const struct sched_cluster *c, const struct sched_cpod *cp,
                             uint32_t slot, struct sched_pod *const *on, uint32_t non,
                             uint32_t *reason);

/* sched_spread_scores: PreScore, Score and NormalizeScore of the ScheduleAnyway constraints
 * over the feasible nodes feas[0..nfeas) (order indices): raw[k] and norm[k] for feas[k]
 * (all 0 when the plugin does not score). Returns false when it does not score. */
bool sched_spread_scores(struct sched_cluster *c, const struct sched_cpod *cp, const uint32_t *feas,
                         uint32_t nfeas, int32_t *raw, int32_t *norm);

#endif
