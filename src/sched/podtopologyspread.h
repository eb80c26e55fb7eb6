/* podtopologyspread.h - the objects PodTopologySpread's system default constraints read,
 * fed into the cluster (podtopologyspread.c): Services and controllers. */
#ifndef SCHED_PODTOPOLOGYSPREAD_H
#define SCHED_PODTOPOLOGYSPREAD_H

#include "base/err.h"
#include "kube/object.h"

struct sched_cluster;

/* sched_cluster_add_spread_source records an object whose selector makes the system default constraints
 * (kubernetes.io/hostname maxSkew 3, topology.kubernetes.io/zone maxSkew 5, both
 * ScheduleAnyway) apply to the pods it selects, as helper.DefaultSelector reads them:
 * - owner_kind NULL: a Service in namespace ns with spec.selector sel (matchLabels form;
 *   sel->present false for a nil selector, which selects nothing); it selects the pods of ns
 *   whose labels it matches.
 * - owner_kind "ReplicationController", "ReplicaSet", "StatefulSet" (or "Deployment", for the
 *   ReplicaSet the Deployment would create: sel then includes pod-template-hash): it selects
 *   the pods whose controller owner reference is that kind and name in ns (and, when the pod
 *   came from the API, apiVersion v1 for a ReplicationController, apps/v1 for the others).
 * An object of the same kind, namespace and name recorded before is replaced (a watch's
 * update). Strings are copied. Returns 0 or -ENOMEM with err set.
 * sched_cluster_remove_spread_source forgets the object recorded under that kind (NULL: a
 * Service), namespace and name (a watch's delete). 0, or -ENOENT when there is none. */
int sched_cluster_add_spread_source(struct sched_cluster *c, const char *owner_kind, const char *ns,
                                    const char *name, const struct kube_label_selector *sel,
                                    struct err *err);
int sched_cluster_remove_spread_source(struct sched_cluster *c, const char *owner_kind,
                                       const char *ns, const char *name);

#endif
