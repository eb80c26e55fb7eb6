/* volumebinding.c - kube-scheduler's VolumeBinding, as v1.37 runs it
 * (pkg/scheduler/framework/plugins/volumebinding; component-helpers/storage/volume for the
 * matching rules): PreFilter fails a pod whose claims cannot be found, are lost, being
 * deleted, not its own (an ephemeral volume's) or unbound with Immediate binding; Filter
 * checks bound volumes' node affinity and matches WaitForFirstConsumer claims to available
 * volumes or provisioning (StorageClass topology, CSIStorageCapacity); Score is
 * StorageCapacityScoring; Reserve binds for the next pods of a simulation. */
#include "sched/plugins-int.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "kube/labels.h"
#include "kube/rules.h"
#include "sched/intern-int.h"
#include "sched/sched-int.h"
#include "sched/volumes-int.h"

#define NO_PROVISIONER "kubernetes.io/no-provisioner"

static const char *const vb_reason[] = {
    "node(s) didn't match PersistentVolume's node affinity",
    "node(s) didn't find available persistent volumes to bind",
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",
    "node(s) did not have enough free storage",
};

/* VolumeIsForPod: the claim's controller is the pod, by uid (IsControlledBy); a claim this
 * file made for a pod without a uid carries the pod's empty uid and its name */
static bool claim_for_pod(const struct kube_pvc *p, const struct kube_pod *pod)
{
    const char *uid = pod->uid ? pod->uid : "";

    if (!p->owner_pod || !p->owner_uid || strcmp(p->namespace_, pod->namespace_) ||
        strcmp(p->owner_uid, uid))
        return false;
    return uid[0] || !strcmp(p->owner_pod, pod->name);
}

static int cmp_request(const void *a, const void *b, void *ctx)
{
    const struct sched_volumes *v = ctx;
    int64_t x = v->pvcs[*(const uint32_t *)a].request, y = v->pvcs[*(const uint32_t *)b].request;

    return x < y ? -1 : x > y;
}

int sched_volumebinding_prefilter(struct sched_cluster *c, struct sched_cpod *cp,
                                  struct sched_vpod *vp)
{
    struct sched_volumes *v = c->vol;
    const struct kube_pod *pod = vp->pod;
    uint32_t i;

    /* podHasPVCs, then GetPodVolumeClaims */
    for (i = 0; i < vp->nclaimv; i++) {
        const struct kube_pvc *p = vp->claimv[i];
        if (!p)
            return sched_volumes_reject(cp, SCHED_PL_VOLUME_BINDING,
                                        "waiting for ephemeral volume controller to create the "
                                        "persistentvolumeclaim \"%s\"",
                                        vp->names[i]);
        if (p->lost)
            return sched_volumes_reject(cp, SCHED_PL_VOLUME_BINDING,
                                        "persistentvolumeclaim \"%s\" bound to non-existent "
                                        "persistentvolume \"%s\"",
                                        p->name, p->volume_name);
        if (p->terminating)
            return sched_volumes_reject(cp, SCHED_PL_VOLUME_BINDING,
                                        "persistentvolumeclaim \"%s\" is being deleted", p->name);
        if (sched_pod_ephemeral(pod, i) && !claim_for_pod(p, pod))
            return sched_volumes_reject(
                cp, SCHED_PL_VOLUME_BINDING,
                "PVC %s/%s was not created for pod %s/%s (pod is not owner)", p->namespace_,
                p->name, pod->namespace_, pod->name);
    }
    for (i = 0; i < vp->nclaimv; i++) {
        const struct kube_pvc *p = vp->claimv[i];
        uint32_t k = (uint32_t)(p - v->pvcs);
        if (sched_pvc_fully_bound(p)) {
            vp->bound_pv[vp->nbound] = sched_volumes_find_pv(v, p->volume_name);
            vp->bound[vp->nbound++] = k;
        } else if (sched_pvc_delay_binding(v, p) && !p->volume_name[0])
            vp->delay[vp->ndelay++] = k;
        else
            return sched_volumes_reject(cp, SCHED_PL_VOLUME_BINDING,
                                        "pod has unbound immediate PersistentVolumeClaims");
    }
    qsort_r(vp->delay, vp->ndelay, sizeof(*vp->delay), cmp_request, v);
    return 0;
}

/* ---------------------------------------------------------------- Filter */

/* CheckNodeAffinity: the terms on the node's labels only (kube-scheduler builds a node
 * without a name for it, so a matchFields term on metadata.name never matches) */
static bool pv_fits_node(const struct kube_pv *pv, const struct kube_node *node)
{
    struct kube_node anon;

    if (!pv->has_affinity)
        return true;
    anon = *node;
    anon.name = "";
    return kube_node_selector_matches(&pv->affinity, &anon);
}

/* IsVolumeBoundToClaim (without uids: the input's claims have none) */
static bool pv_bound_to(const struct kube_pv *pv, const struct kube_pvc *p)
{
    return pv->claim_name && !strcmp(pv->claim_name, p->name) && pv->claim_ns &&
           !strcmp(pv->claim_ns, p->namespace_);
}

/* FindMatchingVolume on the scheduler path: the volume pre-bound to the claim, else the
 * smallest available one of its class that fits; NULL when none (a pre-bound volume whose
 * node affinity fails the node is none) */
static struct kube_pv *match_volume(struct sched_volumes *v, const struct kube_pvc *p,
                                    const struct kube_node *node, struct kube_pv *const *taken,
                                    uint32_t ntaken)
{
    struct kube_pv *best = NULL;
    const char *cls = sched_pvc_class(p);
    uint32_t i, t;

    for (i = 0; i < v->npvs; i++) {
        struct kube_pv *pv = &v->pvs[i];
        bool fits;
        if (strcmp(pv->storage_class, cls)) /* (ListPVs by the claim's class) */
            continue;
        for (t = 0; t < ntaken && taken[t] != pv; t++)
            ;
        if (t < ntaken)
            continue;
        if (pv->claim_name && !pv_bound_to(pv, p))
            continue;
        if (pv->capacity < p->request || pv->block != p->block || pv->terminating)
            continue;
        fits = pv_fits_node(pv, node);
        if (pv_bound_to(pv, p))
            return fits ? pv : NULL;
        if (!pv->available)
            continue;
        if (p->has_selector && !kube_label_selector_matches(&p->selector, &pv->labels))
            continue;
        if (!fits || (p->access & ~pv->access))
            continue;
        if (!best || best->capacity > pv->capacity)
            best = pv;
    }
    return best;
}

/* MatchTopologySelectorTerms: no terms match every node; else one term whose keys all hold */
static bool topology_matches(const struct kube_storage_class *sc, const struct kube_node *node)
{
    size_t t, e, k;

    if (!sc->ntopologies)
        return true;
    for (t = 0; t < sc->ntopologies; t++) {
        const struct kube_topology_term *term = &sc->topologies[t];
        bool ok = true;
        for (e = 0; e < term->nexprs && ok; e++) {
            const char *val = kube_labels_get(&node->labels, term->exprs[e].key);
            ok = false;
            for (k = 0; val && k < term->exprs[e].nvalues && !ok; k++)
                ok = !strcmp(term->exprs[e].values[k], val);
        }
        if (ok)
            return true;
    }
    return false;
}

/* hasEnoughCapacity: a CSIDriver named after the provisioner with storageCapacity true
 * needs a CSIStorageCapacity of the class whose nodeTopology selects the node and whose
 * maximumVolumeSize (else capacity) holds the request; *cap is the first such one (NULL when
 * none is needed) */
static bool enough_capacity(const struct sched_volumes *v, const struct kube_pvc *p,
                            const struct kube_storage_class *sc, const struct kube_node *node,
                            const struct kube_csi_capacity **cap)
{
    const struct kube_csi_driver *d = sched_volumes_find_driver(v, sc->provisioner);
    uint32_t i;

    *cap = NULL;
    if (!d || !d->storage_capacity)
        return true;
    for (i = 0; i < v->ncaps; i++) {
        const struct kube_csi_capacity *k = &v->caps[i];
        bool has = k->has_max || k->has_capacity;
        int64_t limit = k->has_max ? k->max_size : k->capacity;
        if (strcmp(k->storage_class, sc->name) || !has || limit < p->request || !k->has_topology ||
            !kube_label_selector_matches(&k->topology, &node->labels))
            continue;
        *cap = k;
        return true;
    }
    return false;
}

/* checkVolumeProvisions for one claim: 0 when it can be provisioned for the node,
 * SCHED_VB_BIND_CONFLICT when its class cannot (no provisioner, allowedTopologies), or
 * SCHED_VB_NOT_ENOUGH_SPACE (CSIStorageCapacity); *cap as enough_capacity */
static uint32_t provisionable(const struct sched_volumes *v, const struct kube_pvc *p,
                              const struct kube_node *node, const struct kube_csi_capacity **cap)
{
    const struct kube_storage_class *sc = sched_volumes_find_sc(v, sched_pvc_class(p));

    *cap = NULL;
    if (!sc || !sc->provisioner[0] || !strcmp(sc->provisioner, NO_PROVISIONER) ||
        !topology_matches(sc, node))
        return SCHED_VB_BIND_CONFLICT;
    return enough_capacity(v, p, sc, node, cap) ? 0 : SCHED_VB_NOT_ENOUGH_SPACE;
}

/* FindPodVolumes: the SCHED_VB_* bits for the node (0: fits), with the static bindings it
 * chose in chosen[] (ndelay entries, NULL for a claim to provision) when chosen is given, and
 * the CSIStorageCapacity each claim to provision was checked against in caps[] (when given) */
static uint32_t find_pod_volumes(struct sched_cluster *c, const struct sched_vpod *vp,
                                 const struct kube_node *node, struct kube_pv **chosen,
                                 const struct kube_csi_capacity **caps)
{
    struct sched_volumes *v = c->vol;
    struct kube_pv *local[16], **taken = chosen ? chosen : local;
    uint32_t bits = 0, i, ntaken = 0;
    bool unbound_ok = true, need_provision = false;

    for (i = 0; i < vp->nbound; i++) {
        const struct kube_pv *pv = vp->bound_pv[i];
        if (!pv) {
            bits |= SCHED_VB_PV_NOT_EXIST;
            break;
        }
        if (!pv_fits_node(pv, node)) {
            bits |= SCHED_VB_NODE_CONFLICT;
            break;
        }
    }
    if (!vp->ndelay)
        return bits;
    for (i = 0; i < vp->ndelay; i++) {
        const struct kube_pvc *p = &v->pvcs[vp->delay[i]];
        if (p->selected_node && strcmp(p->selected_node, node->name))
            return bits | SCHED_VB_BIND_CONFLICT;
    }
    if (!chosen && vp->ndelay > 16)
        taken = calloc(vp->ndelay, sizeof(*taken));
    if (!taken)
        return bits | SCHED_VB_BIND_CONFLICT; /* (out of memory: no placement) */
    for (i = 0; i < vp->ndelay; i++) {
        const struct kube_pvc *p = &v->pvcs[vp->delay[i]];
        struct kube_pv *pv = p->selected_node ? NULL : match_volume(v, p, node, taken, ntaken);
        taken[ntaken++] = pv;
        if (!pv) {
            if (!p->selected_node)
                unbound_ok = false;
            need_provision = true;
        }
    }
    if (need_provision) {
        /* checkVolumeProvisions decides for the claims left over, those with a selected node
         * first, and stops at the first that cannot be provisioned */
        uint32_t pass, why = 0;
        unbound_ok = true;
        for (pass = 0; pass < 2 && !why; pass++)
            for (i = 0; i < vp->ndelay && !why; i++) {
                const struct kube_pvc *p = &v->pvcs[vp->delay[i]];
                const struct kube_csi_capacity *cap;
                if (taken[i] || (pass == 0) != (p->selected_node != NULL))
                    continue;
                why = provisionable(v, p, node, &cap);
                if (caps)
                    caps[i] = cap;
            }
        if (why == SCHED_VB_BIND_CONFLICT)
            unbound_ok = false;
        else if (why)
            bits |= why;
    }
    if (taken != local && taken != chosen)
        free(taken);
    return unbound_ok ? bits : bits | SCHED_VB_BIND_CONFLICT;
}

/* ---------------------------------------------------------------- Score */

/* class_score: 100 - requested * 100 / capacity (0 when over or no capacity) */
static int64_t class_score(int64_t req, int64_t cap)
{
    int64_t util = cap == 0 || req > cap    ? 100
                   : req <= INT64_MAX / 100 ? req * 100 / cap
                                            : (int64_t)((long double)req * 100 / (long double)cap);
    return 100 - util;
}

/* dynamic_score: StorageCapacityScoring without static bindings: the claims to provision
 * that were checked against a CSIStorageCapacity, by spec.storageClassName; a class's
 * capacity is the last such object's capacity, its request the claims' sum */
static int32_t dynamic_score(const struct sched_volumes *v, const struct sched_vpod *vp,
                             struct kube_pv *const *chosen,
                             const struct kube_csi_capacity *const *caps)
{
    uint32_t i, j, pass, ncls = 0;
    int64_t sum = 0;

    /* DynamicProvisions are in checkVolumeProvisions' order: selected nodes first */
    for (i = 0; i < vp->ndelay; i++) {
        const struct kube_pvc *p = &v->pvcs[vp->delay[i]];
        int64_t req = 0, cap = 0;
        bool seen = false;
        if (chosen[i] || !caps[i] || !p->spec_class)
            continue;
        for (j = 0; j < i && !seen; j++)
            seen = !chosen[j] && caps[j] && v->pvcs[vp->delay[j]].spec_class &&
                   !strcmp(v->pvcs[vp->delay[j]].spec_class, p->spec_class);
        if (seen)
            continue;
        for (pass = 0; pass < 2; pass++)
            for (j = 0; j < vp->ndelay; j++) {
                const struct kube_pvc *q = &v->pvcs[vp->delay[j]];
                if (chosen[j] || !caps[j] || !q->spec_class ||
                    strcmp(q->spec_class, p->spec_class) ||
                    (pass == 0) != (q->selected_node != NULL))
                    continue;
                req += q->request;
                cap = caps[j]->has_capacity ? caps[j]->capacity : 0;
            }
        sum += class_score(req, cap);
        ncls++;
    }
    /* (the classes in some order; with none the score is 0, as the scorer gives for none) */
    return ncls ? (int32_t)((sum * 2 + ncls) / (2 * ncls)) : 0;
}

/* the Score of VolumeBinding with the static bindings chosen[0..n) (NULL: to provision):
 * per class of the bound volumes, requested and capacity summed; 100 - requested * 100 /
 * capacity (0 when over or no capacity); the classes' mean, rounded */
static int32_t binding_score(const struct sched_volumes *v, const struct sched_vpod *vp,
                             struct kube_pv *const *chosen,
                             const struct kube_csi_capacity *const *caps)
{
    uint32_t i, j, ncls = 0;
    int64_t sum = 0;

    for (i = 0; i < vp->ndelay && !chosen[i]; i++)
        ;
    if (i == vp->ndelay)
        return dynamic_score(v, vp, chosen, caps);
    for (i = 0; i < vp->ndelay; i++) {
        int64_t req = 0, cap = 0;
        if (!chosen[i])
            continue;
        for (j = 0;
             j < i && !(chosen[j] && !strcmp(chosen[j]->storage_class, chosen[i]->storage_class));
             j++)
            ;
        if (j < i)
            continue; /* the class was counted with its first volume */
        for (j = i; j < vp->ndelay; j++)
            if (chosen[j] && !strcmp(chosen[j]->storage_class, chosen[i]->storage_class)) {
                req += v->pvcs[vp->delay[j]].request;
                cap += chosen[j]->capacity;
            }
        sum += class_score(req, cap);
        ncls++;
    }
    return ncls ? (int32_t)((sum * 2 + ncls) / (2 * ncls)) : 0;
}

uint32_t sched_volumebinding_filter(struct sched_cluster *c, const struct sched_cpod *cp,
                                    const struct kube_node *node, int32_t *score)
{
    const struct sched_vpod *vp = cp->vol;
    struct kube_pv *local[16], **chosen = local;
    const struct kube_csi_capacity *clocal[16], **caps = clocal;
    uint32_t bits;

    *score = 0;
    if (vp->ndelay > 16) {
        chosen = calloc(vp->ndelay, sizeof(*chosen));
        caps = calloc(vp->ndelay, sizeof(*caps));
    } else {
        memset(clocal, 0, sizeof(clocal));
    }
    if (!chosen || !caps) {
        if (chosen != local)
            free(chosen);
        if (caps != clocal)
            free(caps);
        return SCHED_VB_BIND_CONFLICT; /* (out of memory: no placement) */
    }
    bits = find_pod_volumes(c, vp, node, chosen, caps);
    if (!bits)
        *score = binding_score(c->vol, vp, chosen, caps);
    if (chosen != local)
        free(chosen);
    if (caps != clocal)
        free(caps);
    return bits;
}

size_t sched_volumebinding_reasons(uint32_t bits, const char **out)
{
    size_t n = 0, b;

    /* in kube-scheduler's order: node affinity, bind conflict, storage, missing volume */
    static const unsigned order[] = {0, 1, 3, 2};

    for (b = 0; b < 4; b++)
        if (bits >> order[b] & 1)
            out[n++] = vb_reason[order[b]];
    return n;
}

/* ---------------------------------------------------------------- Reserve / PreBind */

int sched_volumebinding_reserve(struct sched_cluster *c, const struct kube_pod *pod,
                                const char *node, struct err *err)
{
    struct sched_volumes *v = c->vol;
    struct sched_vpod vp;
    struct kube_node nv;
    struct kube_pv **chosen;
    uint32_t *delay, i, slot, id;
    char name[512];
    size_t k;
    long x;

    if (!v || !pod->nclaims)
        return 0;
    memset(&vp, 0, sizeof(vp));
    if (!(delay = calloc(pod->nclaims, sizeof(*delay))) ||
        !(chosen = calloc(pod->nclaims, sizeof(*chosen)))) {
        free(delay);
        return err_set(err, -ENOMEM, "out of memory");
    }
    vp.delay = delay;
    for (k = 0; k < pod->nclaims; k++)
        if ((x = sched_volumes_find_pvc(v, pod->namespace_,
                                        sched_pod_claim_name(pod, k, name, sizeof(name)))) >= 0 &&
            !sched_pvc_fully_bound(&v->pvcs[x]) && !v->pvcs[x].volume_name[0] &&
            sched_pvc_delay_binding(v, &v->pvcs[x]))
            delay[vp.ndelay++] = (uint32_t)x;
    qsort_r(delay, vp.ndelay, sizeof(*delay), cmp_request, v);
    id = sched_intern_find(&c->strs, node);
    slot = id != SCHED_NOID && id < c->nslot_of_name ? c->slot_of_name[id] : SCHED_NOID;
    if (vp.ndelay && slot != SCHED_NOID && sched_volumes_node_view(c, slot, &nv)) {
        find_pod_volumes(c, &vp, &nv, chosen, NULL);
        for (i = 0; i < vp.ndelay; i++) {
            struct kube_pvc *p = &v->pvcs[delay[i]];
            if (chosen[i]) {
                /* the volume binds to the claim; the claim is fully bound */
                chosen[i]->claim_ns = p->namespace_;
                chosen[i]->claim_name = p->name;
                chosen[i]->available = false;
                p->volume_name = chosen[i]->name;
                p->bind_completed = true;
            } else if (!(p->selected_node = arena_strdup(&v->arena, node))) {
                free(delay);
                free(chosen);
                return err_set(err, -ENOMEM, "out of memory");
            }
        }
    }
    free(delay);
    free(chosen);
    return 0;
}
