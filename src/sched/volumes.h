/* volumes.h - kube-scheduler's volume plugins on PersistentVolumeClaims: VolumeRestrictions
 * (a missing claim; ReadWriteOncePod claims in use), VolumeBinding (PreFilter: claims that
 * cannot be found, are lost, being deleted or unbound with Immediate binding; Filter: bound
 * volumes' node affinity, WaitForFirstConsumer claims matched to available volumes or
 * provisioned) and VolumeZone (the zone and region labels of bound volumes). The first section
 * is the cluster's API; the last is for the core's own modules. See docs/scheduling.md,
 * "Volumes". */
#ifndef SCHED_VOLUMES_H
#define SCHED_VOLUMES_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "kube/object.h"

struct sched_cluster;

/* The volume objects the plugins read. They are kept by reference (shallow copies whose strings
 * and arrays must outlive c); sched_volumes_assume changes the cluster's copies only. A second
 * object of the same (namespace/)name replaces the first. 0 or -ENOMEM with err set. */
int sched_cluster_set_pvc(struct sched_cluster *c, const struct kube_pvc *pvc, struct err *err);
int sched_cluster_set_pv(struct sched_cluster *c, const struct kube_pv *pv, struct err *err);
int sched_cluster_set_storage_class(struct sched_cluster *c, const struct kube_storage_class *sc,
                                    struct err *err);

/* The same for the storage.k8s.io objects: CSINodes (NodeVolumeLimits' attach limits and
 * CSI migration), CSIDrivers (storageCapacity, preventPodSchedulingIfMissing),
 * CSIStorageCapacities (VolumeBinding's capacity check and score) and VolumeAttachments
 * (NodeVolumeLimits counts the volumes attached to a node). */
int sched_cluster_set_csi_node(struct sched_cluster *c, const struct kube_csi_node *n,
                               struct err *err);
int sched_cluster_set_csi_driver(struct sched_cluster *c, const struct kube_csi_driver *d,
                                 struct err *err);
int sched_cluster_set_csi_capacity(struct sched_cluster *c, const struct kube_csi_capacity *cap,
                                   struct err *err);
int sched_cluster_set_volume_attachment(struct sched_cluster *c,
                                        const struct kube_volume_attachment *va, struct err *err);

/* sched_volumes_assume is VolumeBinding's Reserve/PreBind for a pod placed on node: each of
 * its WaitForFirstConsumer claims that is unbound gets the smallest matching available volume
 * (both then bound to each other) or, when none matches, the annotation selected-node = node
 * (the volume is provisioned there). Later pods see the bindings. 0 or -ENOMEM. */
int sched_volumes_assume(struct sched_cluster *c, const struct kube_pod *pod, const char *node,
                         struct err *err);

/* ---------------------------------------------------------------------------------------
 * Internal to the scheduling core
 * ------------------------------------------------------------------------------------- */

struct sched_cpod;
struct sched_pod;
struct sched_volumes;

/* VolumeBinding's Filter reasons, as bits of a node row's reason (SCHED_PL_VOLUME_BINDING) */
#define SCHED_VB_NODE_CONFLICT 1u    /* a bound volume's node affinity */
#define SCHED_VB_BIND_CONFLICT 2u    /* no volume to bind, no provisioning here */
#define SCHED_VB_PV_NOT_EXIST 4u     /* a bound claim's volume is missing */
#define SCHED_VB_NOT_ENOUGH_SPACE 8u /* CSIStorageCapacity: no room to provision here */

void sched_volumes_free(struct sched_volumes *v);

/* sched_volumes_pod_claims copies the claim names of pod into p (p->claims, one block the
 * caller frees; NULL when none), its generic ephemeral volumes' claims included, and its
 * in-tree volumes CSI migration counts (p->ninline); a claim of an ephemeral volume that c
 * does not have is made from its template, as the ephemeral volume controller does. 0 or
 * -ENOMEM. */
int sched_volumes_pod_claims(struct sched_cluster *c, struct sched_pod *p,
                             const struct kube_pod *pod);

/* sched_volumes_prefilter runs the PreFilters of VolumeRestrictions, VolumeBinding and
 * VolumeZone for a pod with claims: a rejection sets cp->prefilter_conflict with
 * cp->prefilter_msg (arena text); else cp->vol holds what the Filters need (NULL when the pod
 * has no claims). 0 or -ENOMEM. */
int sched_volumes_prefilter(struct sched_cluster *c, struct sched_cpod *cp);

/* sched_volumes_filter runs VolumeRestrictions, VolumeBinding and VolumeZone on the node at
 * slot (VolumeRestrictions: a ReadWriteOncePod claim of the pod that a pod on a node already
 * uses fails every node, Unschedulable: preemption may evict that pod): 0 when they pass, with *score VolumeBinding's Score there (StorageCapacityScoring, on
 * by default from v1.37: 100 - the utilisation of the volumes it would bind, by class,
 * averaged; 0 when it binds none), else *plugin (SCHED_PL_VOLUME_*) and the reason (a reason
 * id, or SCHED_VB_* bits for VolumeBinding); VolumeBinding's and VolumeZone's are
 * UnschedulableAndUnresolvable. */
uint32_t sched_volumes_filter(struct sched_cluster *c, const struct sched_cpod *cp, uint32_t slot,
                              uint8_t *plugin, int32_t *score);

/* sched_volumes_filter_dry is the same during preemption's dry run on the node at slot, where
 * only the pods on[0..non) remain: false with *plugin and *reason set when it fails. */
bool sched_volumes_filter_dry(struct sched_cluster *c, const struct sched_cpod *cp, uint32_t slot,
                              struct sched_pod *const *on, uint32_t non, uint32_t *plugin,
                              uint32_t *reason);

/* sched_volumes_reasons writes the reason texts of VolumeBinding's bits to out (up to 4, in
 * kube-scheduler's order); returns how many. */
size_t sched_volumes_reasons(uint32_t bits, const char **out);

#endif
