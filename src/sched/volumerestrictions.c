/* volumerestrictions.c - kube-scheduler's VolumeRestrictions on PersistentVolumeClaims, as
 * v1.37 runs it (pkg/scheduler/framework/plugins/volumerestrictions): PreFilter fails a pod
 * whose claim does not exist; a ReadWriteOncePod claim of the pod that a pod on some node
 * already uses fails every node, Unschedulable (preemption may evict that pod). */
#include "sched/plugins-int.h"

#include <string.h>

#include "sched/intern-int.h"
#include "sched/sched-int.h"
#include "sched/volumes-int.h"

#define RWOP_REASON                                                                                \
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "  \
    "in-use by another pod"

/* claim_in_use: a pod on a present node (assumed ones too) mounts ns/claim (the snapshot's
 * used PVC set of kube-scheduler) */
static bool claim_in_use(const struct sched_cluster *c, const char *ns, const char *claim)
{
    uint32_t i, k, j;

    for (i = 0; i < c->norder; i++) {
        const struct sched_slot *s = &c->slots[c->order[i]];
        for (k = 0; k < s->npods; k++) {
            const struct sched_pod *p = s->pods[k];
            if (!p->nclaims || strcmp(p->ns, ns))
                continue;
            for (j = 0; j < p->nclaims; j++)
                if (!strcmp(p->claims[j], claim))
                    return true;
        }
    }
    return false;
}

int sched_volumerestrictions_prefilter(struct sched_cluster *c, struct sched_cpod *cp,
                                       struct sched_vpod *vp)
{
    const struct kube_pod *pod = vp->pod;
    uint32_t i, j;

    /* every persistentVolumeClaim volume's claim is read first */
    for (i = 0; i < vp->nclaimv; i++)
        if (!sched_pod_ephemeral(pod, i) && !vp->claimv[i])
            return sched_volumes_reject(cp, SCHED_PL_VOLUME_RESTRICTIONS,
                                        "persistentvolumeclaim \"%s\" not found", vp->names[i]);
    /* the state: its ReadWriteOncePod claims (a set), and how many of them are in use */
    for (i = 0; i < vp->nclaimv; i++) {
        const struct kube_pvc *p = vp->claimv[i];
        if (sched_pod_ephemeral(pod, i) || !(p->access & KUBE_ACCESS_RWOP))
            continue;
        for (j = 0; j < vp->nrwop && strcmp(vp->rwop[j], p->name); j++)
            ;
        if (j < vp->nrwop)
            continue;
        vp->rwop[vp->nrwop++] = p->name;
        if (claim_in_use(c, p->namespace_, p->name))
            vp->rwop_used++;
    }
    return 0;
}

/* rwop_refs: the volumes of p (a pod of the cluster) that mount one of the incoming pod's
 * ReadWriteOncePod claims (updateWithPod) */
static int32_t rwop_refs(const struct sched_cpod *cp, const struct sched_pod *p)
{
    const struct sched_vpod *vp = cp->vol;
    int32_t n = 0;
    uint32_t i, j;

    if (!p->nclaims || strcmp(p->ns, cp->src->namespace_))
        return 0;
    for (i = 0; i < p->nclaims; i++)
        for (j = 0; j < vp->nrwop; j++)
            if (!strcmp(p->claims[i], vp->rwop[j]))
                n++;
    return n;
}

uint32_t sched_volumerestrictions_filter(struct sched_cluster *c, const struct sched_cpod *cp,
                                         uint32_t slot, struct sched_pod *const *on, uint32_t non,
                                         bool dry)
{
    const struct sched_vpod *vp = cp->vol;
    const struct sched_slot *s = &c->slots[slot];
    int32_t count = vp->rwop_used;
    uint32_t i;

    if (dry) {
        /* RemovePod of every pod the dry run took off the node */
        for (i = 0; vp->nrwop && i < s->npods; i++)
            count -= rwop_refs(cp, s->pods[i]);
        for (i = 0; vp->nrwop && i < non; i++)
            count += rwop_refs(cp, on[i]);
    }
    if (count <= 0)
        return 0;
    if (c->vol->r_rwop == 0 || c->vol->r_rwop == SCHED_NOID)
        c->vol->r_rwop = sched_intern_add(&c->reasons, RWOP_REASON);
    return c->vol->r_rwop;
}
