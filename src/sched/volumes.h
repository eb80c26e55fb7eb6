/* volumes.h - the volume objects the volume plugins (VolumeRestrictions, NodeVolumeLimits,
 * VolumeBinding, VolumeZone) read, fed into the cluster (volumes.c). */
#ifndef SCHED_VOLUMES_H
#define SCHED_VOLUMES_H

#include "base/err.h"
#include "kube/object.h"

struct sched_cluster;

/* The volume objects the volume plugins read (see docs/scheduling.md, "Volumes").
 * They are kept by reference (shallow copies whose strings and arrays must outlive c);
 * VolumeBinding's Reserve (sched_simulate) changes the cluster's copies only. A second object
 * of the same (namespace/)name replaces the first. 0 or -ENOMEM with err set.
 * PersistentVolumeClaims, PersistentVolumes and StorageClasses; CSINodes (NodeVolumeLimits'
 * attach limits and CSI migration), CSIDrivers (storageCapacity,
 * preventPodSchedulingIfMissing), CSIStorageCapacities (VolumeBinding's capacity check and
 * score) and VolumeAttachments (NodeVolumeLimits counts the volumes attached to a node). */
int sched_cluster_set_pvc(struct sched_cluster *c, const struct kube_pvc *pvc, struct err *err);
int sched_cluster_set_pv(struct sched_cluster *c, const struct kube_pv *pv, struct err *err);
int sched_cluster_set_storage_class(struct sched_cluster *c, const struct kube_storage_class *sc,
                                    struct err *err);
int sched_cluster_set_csi_node(struct sched_cluster *c, const struct kube_csi_node *n,
                               struct err *err);
int sched_cluster_set_csi_driver(struct sched_cluster *c, const struct kube_csi_driver *d,
                                 struct err *err);
int sched_cluster_set_csi_capacity(struct sched_cluster *c, const struct kube_csi_capacity *cap,
                                   struct err *err);
int sched_cluster_set_volume_attachment(struct sched_cluster *c,
                                        const struct kube_volume_attachment *va, struct err *err);

#endif
