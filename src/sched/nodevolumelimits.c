/* nodevolumelimits.c - kube-scheduler's NodeVolumeLimits (pkg/scheduler/framework/plugins/
 * nodevolumelimits, the CSI limits of v1.37): the CSI volumes a node has attached (its pods'
 * claims and in-tree volumes CSI migration translates, then VolumeAttachments no pod uses)
 * plus the pod's new ones must stay within each driver's count in the node's CSINode; a
 * CSIDriver with preventPodSchedulingIfMissing fails a node whose CSINode lacks it. */
#include "sched/plugins-int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "sched/intern-int.h"
#include "sched/sched-int.h"
#include "sched/volumes-int.h"

#define LIMIT_REASON "node(s) exceed max volume count"
/* getCSIDriverInfoFromSC's volume handle of an unbound claim: kube-scheduler draws a random
 * prefix so that it never equals a real handle; a byte no name holds does the same */
#define SC_HANDLE_PREFIX "\001"

/* one CSI volume NodeVolumeLimits counts: its driver and "driver/handle" */
struct lim_vol {
    const char *driver;
    const char *unique;
    bool intree; /* from an in-tree volume: counted only where the node has a CSINode */
};

/* a set of counted volumes: unique name -> driver */
struct lim_set {
    struct lim_vol *v;
    uint32_t n, cap;
    struct arena *a;
};

static int lim_add(struct lim_set *s, const char *driver, const char *unique, bool intree)
{
    uint32_t i;

    for (i = 0; i < s->n; i++)
        if (!strcmp(s->v[i].unique, unique)) {
            s->v[i].driver = driver; /* (a map: the last one stays) */
            return 0;
        }
    if (sched_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
        return -ENOMEM;
    s->v[s->n].driver = driver;
    s->v[s->n].intree = intree;
    if (!(s->v[s->n].unique = arena_strdup(s->a, unique)))
        return -ENOMEM;
    s->n++;
    return 0;
}

static bool lim_has(const struct lim_set *s, const char *unique)
{
    uint32_t i;

    for (i = 0; i < s->n; i++)
        if (!strcmp(s->v[i].unique, unique))
            return true;
    return false;
}

/* claim_csi is getCSIDriverInfo: the CSI driver of the claim p's volume and its unique name
 * "driver/handle" in buf, or NULL when it is not counted; *intree when the answer came from
 * an in-tree volume or provisioner (counted only with a CSINode) */
static const char *claim_csi(const struct sched_volumes *v, bool have_csinode,
                             const struct kube_pvc *p, char *buf, size_t size, bool *intree)
{
    const struct kube_pv *pv = p->volume_name[0] ? sched_volumes_find_pv(v, p->volume_name) : NULL;
    const struct kube_storage_class *sc;
    const char *drv;
    char handle[512];
    bool mig;

    *intree = false;
    if (pv) {
        if (pv->csi_driver) {
            if (!pv->csi_driver[0] || !pv->csi_handle || !pv->csi_handle[0])
                return NULL;
            snprintf(buf, size, "%s/%s", pv->csi_driver, pv->csi_handle);
            return pv->csi_driver;
        }
        *intree = true;
        if (!have_csinode || !(drv = sched_csi_intree_driver(pv->intree.plugin)) ||
            !sched_csi_intree_handle(&pv->intree, &pv->labels, handle, sizeof(handle)) ||
            !handle[0])
            return NULL;
        snprintf(buf, size, "%s/%s", drv, handle);
        return drv;
    }
    /* getCSIDriverInfoFromSC: no volume name, or the volume is not in the input */
    if (!sched_pvc_class(p)[0] || !(sc = sched_volumes_find_sc(v, sched_pvc_class(p))))
        return NULL;
    drv = sched_csi_intree_provisioner_driver(sc->provisioner, &mig);
    if (mig) {
        *intree = true;
        if (!have_csinode || !drv)
            return NULL;
    } else {
        drv = sc->provisioner;
    }
    if (!drv[0])
        return NULL;
    snprintf(buf, size, "%s/" SC_HANDLE_PREFIX "-%s/%s", drv, p->namespace_, p->name);
    return drv;
}

/* pod_volumes adds the CSI volumes of a pod on the node (its claims by name, then its
 * in-tree inline volumes) to s (filterAttachableVolumes for an existing pod: a claim not in
 * the input is not counted) */
static int pod_volumes(const struct sched_volumes *v, bool have_csinode, const struct sched_pod *p,
                       struct lim_set *s)
{
    char unique[1024];
    uint32_t i;
    long k;
    bool intree;
    int rc;

    for (i = 0; i < p->nclaims; i++) {
        const char *drv;
        if ((k = sched_volumes_find_pvc(v, p->ns, p->claims[i])) < 0)
            continue;
        if ((drv = claim_csi(v, have_csinode, &v->pvcs[k], unique, sizeof(unique), &intree)) &&
            (rc = lim_add(s, drv, unique, intree)))
            return rc;
    }
    for (i = 0; have_csinode && i < p->ninline; i++)
        if ((rc = lim_add(s, p->claims[p->nclaims + 2 * i], p->claims[p->nclaims + 2 * i + 1],
                          true)))
            return rc;
    return 0;
}

static bool csinode_has_driver(const struct kube_csi_node *n, const char *driver)
{
    size_t i;

    for (i = 0; n && i < n->ndrivers; i++)
        if (!strcmp(n->drivers[i].name, driver))
            return true;
    return false;
}

int sched_nodevolumelimits_prefilter(struct sched_cluster *c, struct sched_cpod *cp,
                                     struct sched_vpod *vp)
{
    (void)c;
    (void)cp;
    /* a claim or an in-tree volume CSI migration knows: the Filter runs */
    vp->limits = true;
    return 0;
}

uint32_t sched_nodevolumelimits_filter(struct sched_cluster *c, const struct sched_cpod *cp,
                                       uint32_t slot, struct sched_pod *const *on, uint32_t non)
{
    const struct sched_vpod *vp = cp->vol;
    struct sched_volumes *v = c->vol;
    const struct kube_csi_node *cn = sched_volumes_find_csinode(v, c->slots[slot].name);
    struct lim_set newv = {NULL, 0, 0, NULL}, att = {NULL, 0, 0, NULL};
    struct arena_mark mark;
    char unique[1024], msg[512];
    uint32_t i, j, r = 0;
    bool intree;
    size_t d;

    if (!vp->limits || (!vp->nclaimv && !kube_pod_ext(vp->pod)->ninline_volumes))
        return 0;
    arena_mark(&v->arena, &mark);
    newv.a = att.a = &v->arena;
    /* the pod's own volumes (the PreFilter made sure its claims exist) */
    for (i = 0; i < vp->nclaimv; i++) {
        const char *drv = claim_csi(v, cn != NULL, vp->claimv[i], unique, sizeof(unique), &intree);
        if (drv && lim_add(&newv, drv, unique, intree))
            goto nomem;
    }
    for (i = 0; cn && i < kube_pod_ext(vp->pod)->ninline_volumes; i++) {
        const struct kube_inline_volume *iv = &kube_pod_ext(vp->pod)->inline_volumes[i];
        const char *drv = sched_csi_intree_driver(iv->plugin);
        char handle[512];
        if (!drv || !sched_csi_intree_handle(iv, NULL, handle, sizeof(handle)))
            continue;
        snprintf(unique, sizeof(unique), "%s/%s", drv, handle);
        if (lim_add(&newv, drv, unique, true))
            goto nomem;
    }
    if (!newv.n)
        goto out;
    /* VolumeLimitScaling (beta, on in v1.37): a CSIDriver that prevents scheduling where it
     * is missing */
    for (i = 0; i < newv.n; i++) {
        const struct kube_csi_driver *dr = sched_volumes_find_driver(v, newv.v[i].driver);
        if (dr && dr->prevent_if_missing && !csinode_has_driver(cn, newv.v[i].driver)) {
            snprintf(msg, sizeof(msg), "%s CSI driver is not installed on the node",
                     newv.v[i].driver);
            r = sched_intern_add(&c->reasons, msg);
            goto out;
        }
    }
    if (!cn)
        goto out;
    for (d = 0; d < cn->ndrivers && !cn->drivers[d].has_count; d++)
        ;
    if (d == cn->ndrivers)
        goto out; /* no limits on the node */
    for (i = 0; i < non; i++)
        if ((on[i]->nclaims || on[i]->ninline) && pod_volumes(v, true, on[i], &att))
            goto nomem;
    /* each driver: volumes attached (pods', then VolumeAttachments' not used by a pod) plus
     * the pod's new ones */
    for (d = 0; d < cn->ndrivers; d++) {
        const char *drv = cn->drivers[d].name;
        int64_t attached = 0, added = 0;
        struct lim_set vas = {NULL, 0, 0, &v->arena};
        if (!cn->drivers[d].has_count)
            continue;
        for (i = 0; i < att.n; i++)
            if (!strcmp(att.v[i].driver, drv))
                attached++;
        for (i = 0; i < v->nvas; i++) {
            const struct kube_volume_attachment *va = &v->vas[i];
            const struct kube_pv *pv;
            if (strcmp(va->node_name, c->slots[slot].name) || !va->attacher[0] || !va->pv_name ||
                !(pv = sched_volumes_find_pv(v, va->pv_name)) || !pv->csi_driver)
                continue;
            snprintf(unique, sizeof(unique), "%s/%s", va->attacher, pv->csi_handle);
            if (lim_add(&vas, va->attacher, unique, false)) {
                free(vas.v);
                goto nomem;
            }
        }
        for (i = 0; i < vas.n; i++)
            if (!strcmp(vas.v[i].driver, drv) && !lim_has(&att, vas.v[i].unique))
                attached++;
        free(vas.v);
        for (j = 0; j < newv.n; j++)
            if (!strcmp(newv.v[j].driver, drv) && !lim_has(&att, newv.v[j].unique))
                added++;
        if (added && attached + added > cn->drivers[d].count) {
            if (v->r_limit == 0 || v->r_limit == SCHED_NOID)
                v->r_limit = sched_intern_add(&c->reasons, LIMIT_REASON);
            r = v->r_limit;
            goto out;
        }
    }
out:
    free(newv.v);
    free(att.v);
    arena_rewind(&v->arena, &mark);
    return r;
nomem:
    r = sched_intern_add(&c->reasons, "out of memory");
    goto out;
}
