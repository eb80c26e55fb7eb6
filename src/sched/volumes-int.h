/* volumes-int.h - what the four volume plugins (volumerestrictions.c, nodevolumelimits.c,
 * volumebinding.c, volumezone.c) share: the volume objects the cluster keeps and their
 * lookups (volumes.c), a pod's claims as their PreFilters compile them (struct sched_vpod),
 * and csi-translation-lib's view of in-tree volumes (csitranslation.c). Their hooks are in
 * plugins-int.h. */
#ifndef SCHED_VOLUMES_INT_H
#define SCHED_VOLUMES_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/keymap.h"
#include "kube/object.h"
#include "sched/sched-int.h"

/* The volume objects, by reference (sched_cluster_set_pvc and the others, cluster.h). */
struct sched_volumes {
    struct kube_pvc *pvcs;
    uint32_t npvcs, cpvcs;
    struct kube_pv *pvs;
    uint32_t npvs, cpvs;
    struct kube_storage_class *scs;
    uint32_t nscs, cscs;
    struct kube_csi_node *csinodes;
    uint32_t ncsinodes, ccsinodes;
    struct kube_csi_driver *drivers;
    uint32_t ndrivers, cdrivers;
    struct kube_csi_capacity *caps;
    uint32_t ncaps, ccaps;
    struct kube_volume_attachment *vas;
    uint32_t nvas, cvas;
    struct keymap pvc_at, pv_at; /* "namespace/name" and name -> index + 1 (keys in arena) */
    struct arena
        arena; /* names written by sched_volumes_assume, ephemeral claims, the maps' keys */
    struct kube_label *labels; /* scratch: a node's labels as strings */
    uint32_t clabels;
    uint32_t r_zone, r_rwop, r_limit; /* reason ids, 0 until needed */
};

/* a pod's claims, compiled by sched_volumes_prefilter and the four PreFilters (cp->vol) */
struct sched_vpod {
    uint32_t *bound; /* pvc indices: fully bound claims */
    uint32_t nbound;
    const struct kube_pv **bound_pv; /* their volumes (NULL: none of that name), found once */
    uint32_t *delay; /* unbound WaitForFirstConsumer claims, by increasing request */
    uint32_t ndelay;
    const struct kube_pv **zone_pvs; /* bound volumes that carry topology labels */
    uint32_t nzone_pvs;
    const char **rwop; /* its ReadWriteOncePod claims' names (VolumeRestrictions) */
    uint32_t nrwop;
    int32_t rwop_used; /* how many of them a pod on a node mounts (the PreFilter's count) */
    bool limits;       /* NodeVolumeLimits' PreFilter did not skip the pod */
    const struct kube_pvc **claimv; /* its claims, volume order; NULL for a claim the cluster
                                       does not have (the PreFilters reject the pod) */
    uint32_t nclaimv;
    const struct kube_pod *pod;
    const char **names; /* its claims' names (nclaimv), the ephemeral volumes' made up */
};

/* ---------------------------------------------------------------- volumes.c */

/* sched_volumes_of returns the cluster's volume objects, made empty when there are none yet;
 * NULL (err set) when out of memory. */
struct sched_volumes *sched_volumes_of(struct sched_cluster *c, struct err *err);

/* Lookups (v may be NULL: nothing found). sched_volumes_find_pvc returns the index of the
 * claim ns/name in v->pvcs, or -1. */
long sched_volumes_find_pvc(const struct sched_volumes *v, const char *ns, const char *name);
struct kube_pv *sched_volumes_find_pv(const struct sched_volumes *v, const char *name);
const struct kube_storage_class *sched_volumes_find_sc(const struct sched_volumes *v,
                                                       const char *name);
const struct kube_csi_node *sched_volumes_find_csinode(const struct sched_volumes *v,
                                                       const char *name);
const struct kube_csi_driver *sched_volumes_find_driver(const struct sched_volumes *v,
                                                        const char *name);

/* sched_pvc_class is GetPersistentVolumeClaimClass: the annotation, else
 * spec.storageClassName, else "". sched_pvc_fully_bound: bound to a volume and the bind
 * completed. sched_pvc_delay_binding is IsDelayBindingMode: the claim's class exists and
 * waits for the first consumer. */
const char *sched_pvc_class(const struct kube_pvc *p);
bool sched_pvc_fully_bound(const struct kube_pvc *p);
bool sched_pvc_delay_binding(const struct sched_volumes *v, const struct kube_pvc *p);

/* sched_pod_ephemeral returns the ephemeral volume whose claim is pod->claims[i], or NULL;
 * sched_pod_claim_name the name of pod's i-th claim (written into buf, size bytes, for an
 * ephemeral volume: ephemeral.VolumeClaimName, "<pod>-<volume>"). */
const struct kube_ephemeral_volume *sched_pod_ephemeral(const struct kube_pod *pod, size_t i);
const char *sched_pod_claim_name(const struct kube_pod *pod, size_t i, char *buf, size_t size);

/* sched_volumes_reject is plugin's PreFilter rejecting the pod (UnschedulableAndUnresolvable):
 * cp->prefilter_conflict with the text (arena) as cp->prefilter_msg, every node carrying that
 * plugin and text; 0 or -ENOMEM. */
int sched_volumes_reject(struct sched_cpod *cp, uint8_t plugin, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---------------------------------------------------------------- csitranslation.c */

/* sched_csi_intree_driver is the CSI driver an in-tree plugin migrates to, when
 * NodeVolumeLimits counts it (isCSIMigrationOn: AWS EBS, GCE PD, Azure Disk, Cinder,
 * Portworx), else NULL. sched_csi_intree_provisioner_driver is the same for a StorageClass's
 * in-tree provisioner name; *migratable tells whether it is one of CSI migration's (then NULL
 * means it is not counted). sched_csi_intree_handle writes the CSI volume handle
 * csi-translation-lib gives the in-tree volume iv into buf (pv_labels: a PersistentVolume's
 * labels, NULL for a pod's inline volume); false when the translation fails (the volume is
 * not counted). */
const char *sched_csi_intree_driver(enum kube_intree plugin);
const char *sched_csi_intree_provisioner_driver(const char *prov, bool *migratable);
bool sched_csi_intree_handle(const struct kube_inline_volume *iv,
                             const struct kube_labels *pv_labels, char *buf, size_t size);

#endif
