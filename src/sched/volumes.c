/* volumes.c - the volume objects the volume plugins read (PersistentVolumeClaims,
 * PersistentVolumes, StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities,
 * VolumeAttachments) and their lookups; a pod's claims, generic ephemeral volumes' included
 * (their claims made as the ephemeral volume controller makes them); the start every volume
 * PreFilter shares. The plugins are volumerestrictions.c, nodevolumelimits.c, volumebinding.c
 * and volumezone.c (component-helpers/storage/volume for the matching rules). */
#include "sched/volumes.h"

#include <errno.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/keymap.h"
#include "sched/intern-int.h"
#include "sched/plugins-int.h"
#include "sched/sched-int.h"
#include "sched/volumes-int.h"

struct sched_volumes *sched_volumes_of(struct sched_cluster *c, struct err *err)
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
    free(v->csinodes);
    free(v->drivers);
    free(v->caps);
    free(v->vas);
    free(v->labels);
    keymap_release(&v->pvc_at);
    keymap_release(&v->pv_at);
    arena_release(&v->arena);
    free(v);
}

/* pvc_key writes "namespace/name" into buf (size n); false when it does not fit */
static bool pvc_key(char *buf, size_t n, const char *ns, const char *name)
{
    int k = snprintf(buf, n, "%s/%s", ns, name);

    return k >= 0 && (size_t)k < n;
}

/* the index + 1 of the entry of key in m (0: none); claims and volumes are never removed */
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
    struct sched_volumes *v = sched_volumes_of(c, err);
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
    if (sched_grow((void **)&v->pvcs, &v->cpvcs, v->npvcs + 1, sizeof(*v->pvcs)) ||
        index_put(v, &v->pvc_at, key, v->npvcs))
        return err_set(err, -ENOMEM, "out of memory");
    v->pvcs[v->npvcs++] = *pvc;
    return 0;
}

int sched_cluster_set_pv(struct sched_cluster *c, const struct kube_pv *pv, struct err *err)
{
    struct sched_volumes *v = sched_volumes_of(c, err);
    uint32_t i;

    if (!v)
        return -ENOMEM;
    if ((i = index_of(&v->pv_at, pv->name))) {
        v->pvs[i - 1] = *pv;
        return 0;
    }
    if (sched_grow((void **)&v->pvs, &v->cpvs, v->npvs + 1, sizeof(*v->pvs)) ||
        index_put(v, &v->pv_at, pv->name, v->npvs))
        return err_set(err, -ENOMEM, "out of memory");
    v->pvs[v->npvs++] = *pv;
    return 0;
}

int sched_cluster_set_storage_class(struct sched_cluster *c, const struct kube_storage_class *sc,
                                    struct err *err)
{
    struct sched_volumes *v = sched_volumes_of(c, err);
    uint32_t i;

    if (!v)
        return -ENOMEM;
    for (i = 0; i < v->nscs; i++)
        if (!strcmp(v->scs[i].name, sc->name)) {
            v->scs[i] = *sc;
            return 0;
        }
    if (sched_grow((void **)&v->scs, &v->cscs, v->nscs + 1, sizeof(*v->scs)))
        return err_set(err, -ENOMEM, "out of memory");
    v->scs[v->nscs++] = *sc;
    return 0;
}

/* ---------------------------------------------------------------- lookups */

long sched_volumes_find_pvc(const struct sched_volumes *v, const char *ns, const char *name)
{
    char key[1024];

    if (!v || !pvc_key(key, sizeof(key), ns, name))
        return -1;
    return (long)index_of(&v->pvc_at, key) - 1;
}

struct kube_pv *sched_volumes_find_pv(const struct sched_volumes *v, const char *name)
{
    uint32_t i = v ? index_of(&v->pv_at, name) : 0;

    return i ? &v->pvs[i - 1] : NULL;
}

const struct kube_storage_class *sched_volumes_find_sc(const struct sched_volumes *v,
                                                       const char *name)
{
    uint32_t i;

    for (i = 0; v && i < v->nscs; i++)
        if (!strcmp(v->scs[i].name, name))
            return &v->scs[i];
    return NULL;
}

/* GetPersistentVolumeClaimClass: the annotation, else spec.storageClassName, else "" */
const char *sched_pvc_class(const struct kube_pvc *p)
{
    return p->storage_class ? p->storage_class : "";
}

bool sched_pvc_fully_bound(const struct kube_pvc *p)
{
    return p->volume_name[0] && p->bind_completed;
}

/* IsDelayBindingMode: the claim's class exists and waits for the first consumer */
bool sched_pvc_delay_binding(const struct sched_volumes *v, const struct kube_pvc *p)
{
    const struct kube_storage_class *sc;

    if (!sched_pvc_class(p)[0])
        return false;
    sc = sched_volumes_find_sc(v, sched_pvc_class(p));
    return sc && sc->wait_for_first_consumer;
}

/* ---------------------------------------------------------------- CSI objects */

#define SET_BY_NAME(arr, n, cap, obj, same)                                                        \
    do {                                                                                           \
        uint32_t i_;                                                                               \
        for (i_ = 0; i_ < (n); i_++)                                                               \
            if (same) {                                                                            \
                (arr)[i_] = *(obj);                                                                \
                return 0;                                                                          \
            }                                                                                      \
        if (sched_grow((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr))))                          \
            return err_set(err, -ENOMEM, "out of memory");                                         \
        (arr)[(n)++] = *(obj);                                                                     \
    } while (0)

int sched_cluster_set_csi_node(struct sched_cluster *c, const struct kube_csi_node *n,
                               struct err *err)
{
    struct sched_volumes *v = sched_volumes_of(c, err);

    if (!v)
        return -ENOMEM;
    SET_BY_NAME(v->csinodes, v->ncsinodes, v->ccsinodes, n, !strcmp(v->csinodes[i_].name, n->name));
    return 0;
}

int sched_cluster_set_csi_driver(struct sched_cluster *c, const struct kube_csi_driver *d,
                                 struct err *err)
{
    struct sched_volumes *v = sched_volumes_of(c, err);

    if (!v)
        return -ENOMEM;
    SET_BY_NAME(v->drivers, v->ndrivers, v->cdrivers, d, !strcmp(v->drivers[i_].name, d->name));
    return 0;
}

int sched_cluster_set_csi_capacity(struct sched_cluster *c, const struct kube_csi_capacity *cap,
                                   struct err *err)
{
    struct sched_volumes *v = sched_volumes_of(c, err);

    if (!v)
        return -ENOMEM;
    SET_BY_NAME(v->caps, v->ncaps, v->ccaps, cap,
                !strcmp(v->caps[i_].name, cap->name) &&
                    !strcmp(v->caps[i_].namespace_, cap->namespace_));
    return 0;
}

int sched_cluster_set_volume_attachment(struct sched_cluster *c,
                                        const struct kube_volume_attachment *va, struct err *err)
{
    struct sched_volumes *v = sched_volumes_of(c, err);

    if (!v)
        return -ENOMEM;
    SET_BY_NAME(v->vas, v->nvas, v->cvas, va, !strcmp(v->vas[i_].name, va->name));
    return 0;
}

const struct kube_csi_node *sched_volumes_find_csinode(const struct sched_volumes *v,
                                                       const char *name)
{
    uint32_t i;

    for (i = 0; v && i < v->ncsinodes; i++)
        if (!strcmp(v->csinodes[i].name, name))
            return &v->csinodes[i];
    return NULL;
}

const struct kube_csi_driver *sched_volumes_find_driver(const struct sched_volumes *v,
                                                        const char *name)
{
    uint32_t i;

    for (i = 0; v && i < v->ndrivers; i++)
        if (!strcmp(v->drivers[i].name, name))
            return &v->drivers[i];
    return NULL;
}

/* ---------------------------------------------------------------- generic ephemeral volumes */

/* pod_ephemeral: the ephemeral volume whose claim is pod->claims[i], or NULL */
const struct kube_ephemeral_volume *sched_pod_ephemeral(const struct kube_pod *pod, size_t i)
{
    const struct kube_pod_extra *x = kube_pod_ext(pod);
    size_t k;

    for (k = 0; k < x->nephemeral; k++)
        if (x->ephemeral[k].claim == i)
            return &x->ephemeral[k];
    return NULL;
}

/* claim_name: the name of pod's i-th claim into buf (ephemeral.VolumeClaimName for an
 * ephemeral volume: "<pod>-<volume>") */
const char *sched_pod_claim_name(const struct kube_pod *pod, size_t i, char *buf, size_t size)
{
    const struct kube_ephemeral_volume *e = sched_pod_ephemeral(pod, i);

    if (!e)
        return pod->claims[i];
    snprintf(buf, size, "%s-%s", pod->name, e->volume);
    return buf;
}

/* ephemeral_claim makes the claim of pod's ephemeral volume e, as the ephemeral volume
 * controller does when the pod is created, unless the input has one of that name: the
 * template's spec, owned by the pod. 0 or -ENOMEM. */
static int ephemeral_claim(struct sched_cluster *c, const struct kube_pod *pod,
                           const struct kube_ephemeral_volume *e, const char *name)
{
    struct sched_volumes *v = sched_volumes_of(c, NULL);
    struct kube_pvc pvc;

    if (!v)
        return -ENOMEM;
    if (sched_volumes_find_pvc(v, pod->namespace_, name) >= 0)
        return 0;
    pvc = *e->tmpl;
    pvc.source_file = NULL;
    pvc.source_line = 0;
    if (!(pvc.name = arena_strdup(&v->arena, name)) ||
        !(pvc.namespace_ = arena_strdup(&v->arena, pod->namespace_)) ||
        !(pvc.owner_pod = arena_strdup(&v->arena, pod->name)) ||
        !(pvc.owner_uid = arena_strdup(&v->arena, pod->uid ? pod->uid : "")) ||
        (e->tmpl->storage_class &&
         !(pvc.storage_class = arena_strdup(&v->arena, e->tmpl->storage_class))) ||
        (e->tmpl->spec_class && !(pvc.spec_class = arena_strdup(&v->arena, e->tmpl->spec_class))) ||
        !(pvc.volume_name = arena_strdup(&v->arena, e->tmpl->volume_name)))
        return -ENOMEM;
    /* the selector's strings stay the template's: only a pending pod's claim is matched to
     * volumes, while its input lives; a bound pod's may be gone after this call */
    if (pod->node_name && pod->node_name[0]) {
        pvc.has_selector = false;
        memset(&pvc.selector, 0, sizeof(pvc.selector));
    }
    return sched_cluster_set_pvc(c, &pvc, NULL);
}

/* ---------------------------------------------------------------- a pod's claims */

int sched_volumes_pod_claims(struct sched_cluster *c, struct sched_pod *p,
                             const struct kube_pod *pod)
{
    const struct kube_pod_extra *x = kube_pod_ext(pod);
    size_t i, size = 0, nin = 0;
    char name[512], handle[512], (*uniq)[768] = NULL;
    const char **drv = NULL;
    char *s;
    int rc = 0;

    p->claims = NULL;
    p->nclaims = 0;
    p->ninline = 0;
    if (!pod->nclaims && !x->ninline_volumes)
        return 0;
    if (x->ninline_volumes && (!(uniq = calloc(x->ninline_volumes, sizeof(*uniq))) ||
                               !(drv = calloc(x->ninline_volumes, sizeof(*drv))))) {
        rc = -ENOMEM;
        goto out;
    }
    for (i = 0; i < x->ninline_volumes; i++) {
        const struct kube_inline_volume *iv = &x->inline_volumes[i];
        if (!(drv[nin] = sched_csi_intree_driver(iv->plugin)) ||
            !sched_csi_intree_handle(iv, NULL, handle, sizeof(handle)))
            continue;
        snprintf(uniq[nin], sizeof(uniq[nin]), "%s/%s", drv[nin], handle);
        size += strlen(drv[nin]) + strlen(uniq[nin]) + 2;
        nin++;
    }
    for (i = 0; i < pod->nclaims; i++)
        size += strlen(sched_pod_claim_name(pod, i, name, sizeof(name))) + 1;
    if (!pod->nclaims && !nin)
        goto out;
    size += (pod->nclaims + 2 * nin) * sizeof(char *);
    if (!(p->claims = malloc(size))) {
        rc = -ENOMEM;
        goto out;
    }
    s = (char *)(p->claims + pod->nclaims + 2 * nin);
    for (i = 0; i < pod->nclaims; i++) {
        const char *cn = sched_pod_claim_name(pod, i, name, sizeof(name));
        size_t n = strlen(cn) + 1;
        const struct kube_ephemeral_volume *e = sched_pod_ephemeral(pod, i);
        memcpy(s, cn, n);
        p->claims[i] = s;
        s += n;
        if (e && (rc = ephemeral_claim(c, pod, e, cn)))
            goto out;
    }
    for (i = 0; i < nin; i++) {
        size_t a = strlen(drv[i]) + 1, b = strlen(uniq[i]) + 1;
        p->claims[pod->nclaims + 2 * i] = memcpy(s, drv[i], a);
        p->claims[pod->nclaims + 2 * i + 1] = memcpy(s + a, uniq[i], b);
        s += a + b;
    }
    p->nclaims = (uint32_t)pod->nclaims;
    p->ninline = (uint32_t)nin;
out:
    free(uniq);
    free(drv);
    return rc;
}

/* ---------------------------------------------------------------- the PreFilters' start */

int sched_volumes_reject(struct sched_cpod *cp, uint8_t plugin, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (!(cp->prefilter_msg = arena_strdup(cp->arena, buf)))
        return -ENOMEM;
    cp->prefilter_conflict = true;
    cp->prefilter_plugin = plugin;
    return 0;
}

int sched_volumes_prefilter(struct sched_cluster *c, struct sched_cpod *cp, struct sched_vpod **out)
{
    const struct kube_pod *pod = cp->src;
    struct sched_volumes *v;
    struct sched_vpod *vp;
    const char **names;
    char buf[512];
    size_t i, n;
    long k;
    int rc;

    *out = NULL;
    if (!pod || (!pod->nclaims && !kube_pod_ext(pod)->ninline_volumes) || cp->prefilter_conflict)
        return 0;
    n = pod->nclaims;
    if (!(names = arena_alloc(cp->arena, (n + 1) * sizeof(*names))))
        return -ENOMEM;
    /* the ephemeral volume controller has made the claims of the pod's ephemeral volumes */
    for (i = 0; i < n; i++) {
        const struct kube_ephemeral_volume *e = sched_pod_ephemeral(pod, i);
        if (!(names[i] = arena_strdup(cp->arena, sched_pod_claim_name(pod, i, buf, sizeof(buf)))))
            return -ENOMEM;
        if (e && (rc = ephemeral_claim(c, pod, e, names[i])))
            return rc;
    }
    /* (the filters need the state, with or without objects) */
    if (!(v = sched_volumes_of(c, NULL)))
        return -ENOMEM;
    if (!(vp = arena_alloc(cp->arena, sizeof(*vp))))
        return -ENOMEM;
    memset(vp, 0, sizeof(*vp));
    vp->pod = pod;
    vp->names = names;
    if (!(vp->bound = arena_alloc(cp->arena, (n + 1) * sizeof(*vp->bound))) ||
        !(vp->bound_pv = arena_alloc(cp->arena, (n + 1) * sizeof(*vp->bound_pv))) ||
        !(vp->delay = arena_alloc(cp->arena, (n + 1) * sizeof(*vp->delay))) ||
        !(vp->zone_pvs = arena_alloc(cp->arena, (n + 1) * sizeof(*vp->zone_pvs))) ||
        !(vp->claimv = arena_alloc(cp->arena, (n + 1) * sizeof(*vp->claimv))) ||
        !(vp->rwop = arena_alloc(cp->arena, (n + 1) * sizeof(*vp->rwop))))
        return -ENOMEM;
    for (i = 0; i < n; i++)
        vp->claimv[i] =
            (k = sched_volumes_find_pvc(v, pod->namespace_, names[i])) < 0 ? NULL : &v->pvcs[k];
    vp->nclaimv = (uint32_t)n;
    *out = vp;
    return 0;
}

/* ---------------------------------------------------------------- a node as volumes see it */

static int cmp_label_key(const void *a, const void *b)
{
    return strcmp(((const struct kube_label *)a)->key, ((const struct kube_label *)b)->key);
}

/* node_view fills node with the slot's name and labels as strings (the volumes' selectors are
 * matched with the kube/ rules); false when out of memory */
bool sched_volumes_node_view(struct sched_cluster *c, uint32_t slot, struct kube_node *node)
{
    struct sched_volumes *v = c->vol;
    const struct sched_slot *s = &c->slots[slot];
    uint32_t i;

    memset(node, 0, sizeof(*node));
    node->name = s->name;
    if (sched_grow((void **)&v->labels, &v->clabels, s->nlabels + 1, sizeof(*v->labels)))
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
