/* volumes.c - VolumeRestrictions, VolumeBinding and VolumeZone on PersistentVolumeClaims, as
 * kube-scheduler v1.37 runs them (pkg/scheduler/framework/plugins/volumebinding, volumezone,
 * volumerestrictions; component-helpers/storage/volume for the matching rules). */
#include "sched/volumes.h"

#include <errno.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/keymap.h"
#include "kube/labels.h"
#include "kube/rules.h"
#include "sched/intern.h"
#include "sched/sched-int.h"

#define NO_PROVISIONER "kubernetes.io/no-provisioner"

struct sched_volumes {
    struct kube_pvc *pvcs;
    uint32_t npvcs, cpvcs;
    struct kube_pv *pvs;
    uint32_t npvs, cpvs;
    struct kube_storage_class *scs;
    uint32_t nscs, cscs;
    struct keymap pvc_at, pv_at; /* "namespace/name" and name -> index + 1 (keys in arena) */
    struct arena arena;          /* names written by sched_volumes_assume, the maps' keys */
    struct kube_label *labels;   /* scratch: a node's labels as strings */
    uint32_t clabels;
    uint32_t r_zone, r_rwop; /* reason ids, 0 until needed */
};

/* a pod's claims, compiled by the PreFilter */
struct sched_vpod {
    uint32_t *bound; /* pvc indices: fully bound claims */
    uint32_t nbound;
    const struct kube_pv **bound_pv; /* their volumes (NULL: none of that name), looked up once */
    bool any_node;   /* no claim to bind, no volume zone, no volume node affinity: VolumeBinding
                      and VolumeZone pass every node (VolumeRestrictions may still not) */
    uint32_t *delay; /* unbound WaitForFirstConsumer claims, by increasing request */
    uint32_t ndelay;
    const struct kube_pv **zone_pvs; /* bound volumes that carry topology labels */
    uint32_t nzone_pvs;
    const char **rwop; /* its ReadWriteOncePod claims' names (VolumeRestrictions) */
    uint32_t nrwop;
    int32_t rwop_used; /* how many of them a pod on a node mounts (the PreFilter's count) */
};

static const char *const vb_reason[] = {
    "node(s) didn't match PersistentVolume's node affinity",
    "node(s) didn't find available persistent volumes to bind",
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",
};

#define ZONE_REASON "node(s) had no available volume zone"
#define RWOP_REASON                                                                                \
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "  \
    "in-use by another pod"

int sched_volumes_pod_claims(struct sched_pod *p, const struct kube_pod *pod)
{
    size_t i, size = pod->nclaims * sizeof(char *);
    char *s;

    p->claims = NULL;
    p->nclaims = 0;
    if (!pod->nclaims)
        return 0;
    for (i = 0; i < pod->nclaims; i++)
        size += strlen(pod->claims[i]) + 1;
    if (!(p->claims = malloc(size)))
        return -ENOMEM;
    s = (char *)(p->claims + pod->nclaims);
    for (i = 0; i < pod->nclaims; i++) {
        size_t n = strlen(pod->claims[i]) + 1;
        memcpy(s, pod->claims[i], n);
        p->claims[i] = s;
        s += n;
    }
    p->nclaims = (uint32_t)pod->nclaims;
    return 0;
}

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

static struct sched_volumes *vols(struct sched_cluster *c, struct err *err)
{
    if (!c->vol && !(c->vol = calloc(1, sizeof(*c->vol))))
        err_set(err, -ENOMEM, "out of memory");
    return c->vol;
}

void sched_volumes_free(struct sched_volumes *v)
{
    if (!v)
        return;
    free(v->pvcs);
    free(v->pvs);
    free(v->scs);
    free(v->labels);
    keymap_release(&v->pvc_at);
    keymap_release(&v->pv_at);
    arena_free(&v->arena);
    free(v);
}

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
    void *n;
    uint32_t nc;

    if (need <= *cap)
        return 0;
    nc = *cap ? *cap * 2 : 16;
    while (nc < need)
        nc *= 2;
    if (!(n = realloc(*arr, (size_t)nc * elem)))
        return -ENOMEM;
    *arr = n;
    *cap = nc;
    return 0;
}

/* pvc_key writes "namespace/name" into buf (size n); false when it does not fit */
static bool pvc_key(char *buf, size_t n, const char *ns, const char *name)
{
    int k = snprintf(buf, n, "%s/%s", ns, name);

    return k >= 0 && (size_t)k < n;
}

/* the index + 1 of the entry of key in m (0: none) */
static uint32_t index_of(const struct keymap *m, const char *key)
{
    return (uint32_t)(uintptr_t)keymap_get(m, key);
}

/* index_put records key (copied) -> i in m; 0 or -ENOMEM */
static int index_put(struct sched_volumes *v, struct keymap *m, const char *key, uint32_t i)
{
    char *k = arena_strdup(&v->arena, key);

    return k ? keymap_put(m, k, (void *)(uintptr_t)(i + 1), NULL) : -ENOMEM;
}

int sched_cluster_set_pvc(struct sched_cluster *c, const struct kube_pvc *pvc, struct err *err)
{
    struct sched_volumes *v = vols(c, err);
    char key[1024];
    uint32_t i;

    if (!v)
        return -ENOMEM;
    if (!pvc_key(key, sizeof(key), pvc->namespace_, pvc->name))
        return err_set(err, -EINVAL, "persistentvolumeclaim %s/%s: name too long", pvc->namespace_,
                       pvc->name);
    if ((i = index_of(&v->pvc_at, key))) {
        v->pvcs[i - 1] = *pvc;
        return 0;
    }
    if (grow((void **)&v->pvcs, &v->cpvcs, v->npvcs + 1, sizeof(*v->pvcs)) ||
        index_put(v, &v->pvc_at, key, v->npvcs))
        return err_set(err, -ENOMEM, "out of memory");
    v->pvcs[v->npvcs++] = *pvc;
    return 0;
}

int sched_cluster_set_pv(struct sched_cluster *c, const struct kube_pv *pv, struct err *err)
{
    struct sched_volumes *v = vols(c, err);
    uint32_t i;

    if (!v)
        return -ENOMEM;
    if ((i = index_of(&v->pv_at, pv->name))) {
        v->pvs[i - 1] = *pv;
        return 0;
    }
    if (grow((void **)&v->pvs, &v->cpvs, v->npvs + 1, sizeof(*v->pvs)) ||
        index_put(v, &v->pv_at, pv->name, v->npvs))
        return err_set(err, -ENOMEM, "out of memory");
    v->pvs[v->npvs++] = *pv;
    return 0;
}

int sched_cluster_set_storage_class(struct sched_cluster *c, const struct kube_storage_class *sc,
                                    struct err *err)
{
    struct sched_volumes *v = vols(c, err);
    uint32_t i;

    if (!v)
        return -ENOMEM;
    for (i = 0; i < v->nscs; i++)
        if (!strcmp(v->scs[i].name, sc->name)) {
            v->scs[i] = *sc;
            return 0;
        }
    if (grow((void **)&v->scs, &v->cscs, v->nscs + 1, sizeof(*v->scs)))
        return err_set(err, -ENOMEM, "out of memory");
    v->scs[v->nscs++] = *sc;
    return 0;
}

/* ---------------------------------------------------------------- lookups */

static long find_pvc(const struct sched_volumes *v, const char *ns, const char *name)
{
    char key[1024];

    if (!v || !pvc_key(key, sizeof(key), ns, name))
        return -1;
    return (long)index_of(&v->pvc_at, key) - 1;
}

static struct kube_pv *find_pv(const struct sched_volumes *v, const char *name)
{
    uint32_t i = v ? index_of(&v->pv_at, name) : 0;

    return i ? &v->pvs[i - 1] : NULL;
}

static const struct kube_storage_class *find_sc(const struct sched_volumes *v, const char *name)
{
    uint32_t i;

    for (i = 0; v && i < v->nscs; i++)
        if (!strcmp(v->scs[i].name, name))
            return &v->scs[i];
    return NULL;
}

/* GetPersistentVolumeClaimClass: the annotation, else spec.storageClassName, else "" */
static const char *claim_class(const struct kube_pvc *p)
{
    return p->storage_class ? p->storage_class : "";
}

static bool fully_bound(const struct kube_pvc *p)
{
    return p->volume_name[0] && p->bind_completed;
}

/* IsDelayBindingMode: the claim's class exists and waits for the first consumer */
static bool delay_binding(const struct sched_volumes *v, const struct kube_pvc *p)
{
    const struct kube_storage_class *sc;

    if (!claim_class(p)[0])
        return false;
    sc = find_sc(v, claim_class(p));
    return sc && sc->wait_for_first_consumer;
}

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

/* ---------------------------------------------------------------- PreFilter */

static int cmp_request(const void *a, const void *b, void *ctx)
{
    const struct sched_volumes *v = ctx;
    int64_t x = v->pvcs[*(const uint32_t *)a].request, y = v->pvcs[*(const uint32_t *)b].request;

    return x < y ? -1 : x > y;
}

static int prefilter_fail(struct sched_cpod *cp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int prefilter_fail(struct sched_cpod *cp, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (!(cp->prefilter_msg = arena_strdup(cp->arena, buf)))
        return -ENOMEM;
    cp->prefilter_conflict = true;
    cp->prefilter_plugin = SCHED_PL_VOLUME_BINDING;
    return 0;
}

int sched_volumes_prefilter(struct sched_cluster *c, struct sched_cpod *cp)
{
    const struct kube_pod *pod = cp->src;
    struct sched_volumes *v = c->vol;
    struct sched_vpod *vp;
    size_t i, n;
    long k, *at;

    cp->vol = NULL;
    if (!pod || !pod->nclaims || cp->prefilter_conflict)
        return 0;
    n = pod->nclaims;
    /* VolumeRestrictions' PreFilter reads every claim first (each looked up once: at[i]) */
    if (!(at = arena_alloc(cp->arena, n * sizeof(*at))))
        return -ENOMEM;
    for (i = 0; i < n; i++)
        if ((at[i] = find_pvc(v, pod->namespace_, pod->claims[i])) < 0)
            return prefilter_fail(cp, "persistentvolumeclaim \"%s\" not found", pod->claims[i]);
    /* VolumeBinding: podHasPVCs, then GetPodVolumeClaims */
    for (i = 0; i < n; i++) {
        const struct kube_pvc *p = &v->pvcs[at[i]];
        if (p->lost)
            return prefilter_fail(cp,
                                  "persistentvolumeclaim \"%s\" bound to non-existent "
                                  "persistentvolume \"%s\"",
                                  p->name, p->volume_name);
        if (p->terminating)
            return prefilter_fail(cp, "persistentvolumeclaim \"%s\" is being deleted", p->name);
    }
    if (!(vp = arena_alloc(cp->arena, sizeof(*vp))) ||
        !(vp->bound = arena_alloc(cp->arena, n * sizeof(*vp->bound))) ||
        !(vp->bound_pv = arena_alloc(cp->arena, n * sizeof(*vp->bound_pv))) ||
        !(vp->delay = arena_alloc(cp->arena, n * sizeof(*vp->delay))) ||
        !(vp->zone_pvs = arena_alloc(cp->arena, n * sizeof(*vp->zone_pvs))))
        return -ENOMEM;
    for (i = 0; i < n; i++) {
        const struct kube_pvc *p;
        k = at[i];
        p = &v->pvcs[k];
        if (fully_bound(p)) {
            vp->bound_pv[vp->nbound] = find_pv(v, p->volume_name);
            vp->bound[vp->nbound++] = (uint32_t)k;
        } else if (delay_binding(v, p) && !p->volume_name[0])
            vp->delay[vp->ndelay++] = (uint32_t)k;
        else
            return prefilter_fail(cp, "pod has unbound immediate PersistentVolumeClaims");
    }
    qsort_r(vp->delay, vp->ndelay, sizeof(*vp->delay), cmp_request, v);
    /* VolumeRestrictions' PreFilter state: its ReadWriteOncePod claims (a set), and how
     * many of them are in use */
    if (!(vp->rwop = arena_alloc(cp->arena, n * sizeof(*vp->rwop))))
        return -ENOMEM;
    for (i = 0; i < n; i++) {
        const struct kube_pvc *p = &v->pvcs[at[i]];
        uint32_t j;
        if (!(p->access & KUBE_ACCESS_RWOP))
            continue;
        for (j = 0; j < vp->nrwop && strcmp(vp->rwop[j], p->name); j++)
            ;
        if (j < vp->nrwop)
            continue;
        vp->rwop[vp->nrwop++] = p->name;
        if (claim_in_use(c, p->namespace_, p->name))
            vp->rwop_used++;
    }
    /* VolumeZone: the volumes of the claims that name one */
    for (i = 0; i < n; i++) {
        const struct kube_pvc *p = &v->pvcs[at[i]];
        const struct kube_pv *pv;
        if (!p->volume_name[0])
            continue; /* (WaitForFirstConsumer: the others were rejected above) */
        if (!(pv = find_pv(v, p->volume_name)))
            return prefilter_fail(cp, "persistentvolume \"%s\" not found", p->volume_name);
        if (pv_has_topology(pv))
            vp->zone_pvs[vp->nzone_pvs++] = pv;
    }
    vp->any_node = !vp->ndelay && !vp->nzone_pvs;
    for (i = 0; i < vp->nbound; i++)
        vp->any_node &= vp->bound_pv[i] && !vp->bound_pv[i]->has_affinity;
    cp->vol = vp;
    return 0;
}

/* ---------------------------------------------------------------- Filter */

static int cmp_label_key(const void *a, const void *b)
{
    return strcmp(((const struct kube_label *)a)->key, ((const struct kube_label *)b)->key);
}

/* node_view fills node with the slot's name and labels as strings (the volumes' selectors are
 * matched with the kube/ rules); false when out of memory */
static bool node_view(struct sched_cluster *c, uint32_t slot, struct kube_node *node)
{
    struct sched_volumes *v = c->vol;
    const struct sched_slot *s = &c->slots[slot];
    uint32_t i;

    memset(node, 0, sizeof(*node));
    node->name = s->name;
    if (grow((void **)&v->labels, &v->clabels, s->nlabels + 1, sizeof(*v->labels)))
        return false;
    for (i = 0; i < s->nlabels; i++) {
        v->labels[i].key = c->strs.strs[s->labels[i].key];
        v->labels[i].value = c->strs.strs[s->labels[i].value];
    }
    qsort(v->labels, s->nlabels, sizeof(*v->labels), cmp_label_key);
    node->labels.v = v->labels;
    node->labels.n = s->nlabels;
    return true;
}

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
    const char *cls = claim_class(p);
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

/* the claim can be provisioned for the node (checkVolumeProvisions; CSIStorageCapacity is not
 * read: no CSIDriver in the input asks for capacity tracking) */
static bool provisionable(const struct sched_volumes *v, const struct kube_pvc *p,
                          const struct kube_node *node)
{
    const struct kube_storage_class *sc = find_sc(v, claim_class(p));

    return sc && sc->provisioner[0] && strcmp(sc->provisioner, NO_PROVISIONER) &&
           topology_matches(sc, node);
}

/* FindPodVolumes: the SCHED_VB_* bits for the node (0: fits), with the static bindings it
 * chose in chosen[] (ndelay entries, NULL for a claim to provision) when chosen is given */
static uint32_t find_pod_volumes(struct sched_cluster *c, const struct sched_vpod *vp,
                                 const struct kube_node *node, struct kube_pv **chosen)
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
        /* checkVolumeProvisions decides for the claims left over */
        unbound_ok = true;
        for (i = 0; i < vp->ndelay && unbound_ok; i++)
            if (!taken[i] && !provisionable(v, &v->pvcs[vp->delay[i]], node))
                unbound_ok = false;
    }
    if (taken != local && taken != chosen)
        free(taken);
    return unbound_ok ? bits : bits | SCHED_VB_BIND_CONFLICT;
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

/* the Score of VolumeBinding with the static bindings chosen[0..n) (NULL: to provision):
 * per class of the bound volumes, requested and capacity summed; 100 - requested * 100 /
 * capacity (0 when over or no capacity); the classes' mean, rounded */
static int32_t binding_score(const struct sched_volumes *v, const struct sched_vpod *vp,
                             struct kube_pv *const *chosen)
{
    uint32_t i, j, ncls = 0;
    int64_t sum = 0;

    for (i = 0; i < vp->ndelay; i++) {
        int64_t req = 0, cap = 0, util;
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
        util = cap == 0 || req > cap    ? 100
               : req <= INT64_MAX / 100 ? req * 100 / cap
                                        : (int64_t)((long double)req * 100 / (long double)cap);
        sum += 100 - util;
        ncls++;
    }
    return ncls ? (int32_t)((sum * 2 + ncls) / (2 * ncls)) : 0;
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

static uint32_t filter_with(struct sched_cluster *c, const struct sched_cpod *cp, uint32_t slot,
                            int32_t rwop_count, uint8_t *plugin, int32_t *score);

uint32_t sched_volumes_filter(struct sched_cluster *c, const struct sched_cpod *cp, uint32_t slot,
                              uint8_t *plugin, int32_t *score)
{
    *score = 0;
    if (!cp->vol)
        return 0;
    return filter_with(c, cp, slot, cp->vol->rwop_used, plugin, score);
}

bool sched_volumes_any_node(const struct sched_cpod *cp)
{
    return cp->vol && cp->vol->any_node && !cp->vol->rwop_used;
}

bool sched_volumes_filter_dry(struct sched_cluster *c, const struct sched_cpod *cp, uint32_t slot,
                              struct sched_pod *const *on, uint32_t non, uint32_t *plugin,
                              uint32_t *reason)
{
    const struct sched_slot *s = &c->slots[slot];
    int32_t count, score;
    uint32_t i, r;
    uint8_t pl;

    if (!cp->vol)
        return true;
    /* RemovePod of every pod the dry run took off the node */
    count = cp->vol->rwop_used;
    for (i = 0; cp->vol->nrwop && i < s->npods; i++)
        count -= rwop_refs(cp, s->pods[i]);
    for (i = 0; cp->vol->nrwop && i < non; i++)
        count += rwop_refs(cp, on[i]);
    if (!(r = filter_with(c, cp, slot, count, &pl, &score)))
        return true;
    *plugin = pl;
    *reason = r;
    return false;
}

static uint32_t filter_with(struct sched_cluster *c, const struct sched_cpod *cp, uint32_t slot,
                            int32_t rwop_count, uint8_t *plugin, int32_t *score)
{
    const struct sched_vpod *vp = cp->vol;
    struct kube_pv *local[16], **chosen = local;
    struct kube_node node;
    uint32_t bits;

    *score = 0;
    if (rwop_count > 0) {
        if (c->vol->r_rwop == 0 || c->vol->r_rwop == SCHED_NOID)
            c->vol->r_rwop = sched_intern_add(&c->reasons, RWOP_REASON);
        *plugin = SCHED_PL_VOLUME_RESTRICTIONS;
        return c->vol->r_rwop;
    }
    if (vp->any_node)
        return 0; /* (what follows would look at the node for nothing) */
    if (vp->ndelay > 16 && !(chosen = calloc(vp->ndelay, sizeof(*chosen))))
        chosen = NULL;
    if (!chosen || !node_view(c, slot, &node)) {
        if (chosen != local)
            free(chosen);
        *plugin = SCHED_PL_VOLUME_BINDING;
        return SCHED_VB_BIND_CONFLICT; /* (out of memory: no placement) */
    }
    bits = find_pod_volumes(c, vp, &node, chosen);
    if (!bits)
        *score = binding_score(c->vol, vp, chosen);
    if (chosen != local)
        free(chosen);
    if (bits) {
        *plugin = SCHED_PL_VOLUME_BINDING;
        return bits;
    }
    if (!zone_ok(vp, &node)) {
        if (c->vol->r_zone == 0 || c->vol->r_zone == SCHED_NOID)
            c->vol->r_zone = sched_intern_add(&c->reasons, ZONE_REASON);
        *plugin = SCHED_PL_VOLUME_ZONE;
        return c->vol->r_zone;
    }
    return 0;
}

size_t sched_volumes_reasons(uint32_t bits, const char **out)
{
    size_t n = 0, b;

    for (b = 0; b < 3; b++)
        if (bits >> b & 1)
            out[n++] = vb_reason[b];
    return n;
}

/* ---------------------------------------------------------------- Reserve / PreBind */

int sched_volumes_assume(struct sched_cluster *c, const struct kube_pod *pod, const char *node,
                         struct err *err)
{
    struct sched_volumes *v = c->vol;
    struct sched_vpod vp;
    struct kube_node nv;
    struct kube_pv **chosen;
    uint32_t *delay, i, slot, id;
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
        if ((x = find_pvc(v, pod->namespace_, pod->claims[k])) >= 0 && !fully_bound(&v->pvcs[x]) &&
            !v->pvcs[x].volume_name[0] && delay_binding(v, &v->pvcs[x]))
            delay[vp.ndelay++] = (uint32_t)x;
    qsort_r(delay, vp.ndelay, sizeof(*delay), cmp_request, v);
    id = sched_intern_find(&c->strs, node);
    slot = id != SCHED_NOID && id < c->nslot_of_name ? c->slot_of_name[id] : SCHED_NOID;
    if (vp.ndelay && slot != SCHED_NOID && node_view(c, slot, &nv)) {
        find_pod_volumes(c, &vp, &nv, chosen);
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
