/* volumezone.c - kube-scheduler's VolumeZone (pkg/scheduler/framework/plugins/volumezone,
 * v1.37): the zone and region labels of the volumes a pod's claims are bound to must hold on
 * the node (a volume's value may be a set, "a__b"); a node with neither label passes.
 * UnschedulableAndUnresolvable. */
#include "sched/plugins-int.h"

#include <string.h>

#include "kube/labels.h"
#include "sched/intern-int.h"
#include "sched/sched-int.h"
#include "sched/volumes-int.h"

#define ZONE_REASON "node(s) had no available volume zone"

/* the zone and region labels VolumeZone reads, and their GA names */
static const char *const topo_keys[] = {
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
};

static bool pv_has_topology(const struct kube_pv *pv)
{
    size_t k;

    for (k = 0; k < 4; k++)
        if (kube_labels_get(&pv->labels, topo_keys[k]))
            return true;
    return false;
}

int sched_volumezone_prefilter(struct sched_cluster *c, struct sched_cpod *cp,
                               struct sched_vpod *vp)
{
    uint32_t i;

    /* the volumes of the claims that name one */
    for (i = 0; i < vp->nclaimv; i++) {
        const struct kube_pvc *p = vp->claimv[i];
        const struct kube_pv *pv;
        if (!p->volume_name[0])
            continue; /* (WaitForFirstConsumer: the others were rejected by VolumeBinding) */
        if (!(pv = sched_volumes_find_pv(c->vol, p->volume_name)))
            return sched_volumes_reject(cp, SCHED_PL_VOLUME_ZONE,
                                        "persistentvolume \"%s\" not found", p->volume_name);
        if (pv_has_topology(pv))
            vp->zone_pvs[vp->nzone_pvs++] = pv;
    }
    return 0;
}

/* VolumeZone on one node */
static bool zone_ok(const struct sched_vpod *vp, const struct kube_node *node)
{
    uint32_t i, k;

    for (k = 0; k < 4 && !kube_labels_get(&node->labels, topo_keys[k]); k++)
        ;
    if (k == 4)
        return true; /* the node has no zone or region label */
    for (i = 0; i < vp->nzone_pvs; i++) {
        const struct kube_pv *pv = vp->zone_pvs[i];
        for (k = 0; k < 4; k++) {
            const char *want = kube_labels_get(&pv->labels, topo_keys[k]), *have, *s;
            size_t len;
            bool found = false;
            if (!want)
                continue;
            have = kube_labels_get(&node->labels, topo_keys[k]);
            if (!have && k < 2)
                have = kube_labels_get(&node->labels, topo_keys[k + 2]);
            if (!have)
                return false;
            /* the volume's value is a set "a__b__c" (LabelZonesToSet) */
            len = strlen(have);
            for (s = want; !found;) {
                const char *e = strstr(s, "__");
                size_t n = e ? (size_t)(e - s) : strlen(s);
                found = n == len && !strncmp(s, have, n);
                if (!e)
                    break;
                s = e + 2;
            }
            if (!found)
                return false;
        }
    }
    return true;
}

uint32_t sched_volumezone_filter(struct sched_cluster *c, const struct sched_cpod *cp,
                                 const struct kube_node *node)
{
    if (zone_ok(cp->vol, node))
        return 0;
    if (c->vol->r_zone == 0 || c->vol->r_zone == SCHED_NOID)
        c->vol->r_zone = sched_intern_add(&c->reasons, ZONE_REASON);
    return c->vol->r_zone;
}
