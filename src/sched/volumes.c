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

/* one CSI volume NodeVolumeLimits counts: its driver and "driver/handle" */
struct lim_vol {
    const char *driver;
    const char *unique;
    bool intree; /* from an in-tree volume: counted only where the node has a CSINode */
};

/* a pod's claims, compiled by the PreFilter */
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
    const struct kube_pvc **claimv; /* its claims, volume order (NodeVolumeLimits) */
    uint32_t nclaimv;
    const struct kube_pod *pod;
};

static const char *const vb_reason[] = {
    "node(s) didn't match PersistentVolume's node affinity",
    "node(s) didn't find available persistent volumes to bind",
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",
    "node(s) did not have enough free storage",
};

#define LIMIT_REASON "node(s) exceed max volume count"
/* getCSIDriverInfoFromSC's volume handle of an unbound claim: kube-scheduler draws a random
 * prefix so that it never equals a real handle; a byte no name holds does the same */
#define SC_HANDLE_PREFIX "\001"

#define ZONE_REASON "node(s) had no available volume zone"
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
    free(v->csinodes);
    free(v->drivers);
    free(v->caps);
    free(v->vas);
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

/* ---------------------------------------------------------------- CSI objects */

#define SET_BY_NAME(arr, n, cap, obj, same)                                                        \
    do {                                                                                           \
        uint32_t i_;                                                                               \
        for (i_ = 0; i_ < (n); i_++)                                                               \
            if (same) {                                                                            \
                (arr)[i_] = *(obj);                                                                \
                return 0;                                                                          \
            }                                                                                      \
        if (grow((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr))))                                \
            return err_set(err, -ENOMEM, "out of memory");                                         \
        (arr)[(n)++] = *(obj);                                                                     \
    } while (0)

int sched_cluster_set_csi_node(struct sched_cluster *c, const struct kube_csi_node *n,
                               struct err *err)
{
    struct sched_volumes *v = vols(c, err);

    if (!v)
        return -ENOMEM;
    SET_BY_NAME(v->csinodes, v->ncsinodes, v->ccsinodes, n, !strcmp(v->csinodes[i_].name, n->name));
    return 0;
}

int sched_cluster_set_csi_driver(struct sched_cluster *c, const struct kube_csi_driver *d,
                                 struct err *err)
{
    struct sched_volumes *v = vols(c, err);

    if (!v)
        return -ENOMEM;
    SET_BY_NAME(v->drivers, v->ndrivers, v->cdrivers, d, !strcmp(v->drivers[i_].name, d->name));
    return 0;
}

int sched_cluster_set_csi_capacity(struct sched_cluster *c, const struct kube_csi_capacity *cap,
                                   struct err *err)
{
    struct sched_volumes *v = vols(c, err);

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
    struct sched_volumes *v = vols(c, err);

    if (!v)
        return -ENOMEM;
    SET_BY_NAME(v->vas, v->nvas, v->cvas, va, !strcmp(v->vas[i_].name, va->name));
    return 0;
}

static const struct kube_csi_node *find_csinode(const struct sched_volumes *v, const char *name)
{
    uint32_t i;

    for (i = 0; v && i < v->ncsinodes; i++)
        if (!strcmp(v->csinodes[i].name, name))
            return &v->csinodes[i];
    return NULL;
}

static const struct kube_csi_driver *find_driver(const struct sched_volumes *v, const char *name)
{
    uint32_t i;

    for (i = 0; v && i < v->ndrivers; i++)
        if (!strcmp(v->drivers[i].name, name))
            return &v->drivers[i];
    return NULL;
}

/* ---------------------------------------------------------------- generic ephemeral volumes */

/* pod_ephemeral: the ephemeral volume whose claim is pod->claims[i], or NULL */
static const struct kube_ephemeral_volume *pod_ephemeral(const struct kube_pod *pod, size_t i)
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
static const char *claim_name(const struct kube_pod *pod, size_t i, char *buf, size_t size)
{
    const struct kube_ephemeral_volume *e = pod_ephemeral(pod, i);

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
    struct sched_volumes *v = vols(c, NULL);
    struct kube_pvc pvc;

    if (!v)
        return -ENOMEM;
    if (find_pvc(v, pod->namespace_, name) >= 0)
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

/* ---------------------------------------------------------------- CSI migration */

/* the CSI driver an in-tree plugin migrates to, when NodeVolumeLimits counts it
 * (isCSIMigrationOn: AWS EBS, GCE PD, Azure Disk, Cinder, Portworx) */
static const char *intree_driver(enum kube_intree plugin)
{
    switch (plugin) {
    case KUBE_INTREE_AWS_EBS:
        return "ebs.csi.aws.com";
    case KUBE_INTREE_GCE_PD:
        return "pd.csi.storage.gke.io";
    case KUBE_INTREE_AZURE_DISK:
        return "disk.csi.azure.com";
    case KUBE_INTREE_CINDER:
        return "cinder.csi.openstack.org";
    case KUBE_INTREE_PORTWORX:
        return "pxd.portworx.com";
    default:
        return NULL;
    }
}

/* the same for a StorageClass's in-tree provisioner name; *migratable tells whether it is
 * one of CSI migration's (then NULL means it is not counted) */
static const char *intree_provisioner_driver(const char *prov, bool *migratable)
{
    static const struct {
        const char *name;
        enum kube_intree plugin;
    } p[] = {
        {"kubernetes.io/aws-ebs", KUBE_INTREE_AWS_EBS},
        {"kubernetes.io/gce-pd", KUBE_INTREE_GCE_PD},
        {"kubernetes.io/azure-disk", KUBE_INTREE_AZURE_DISK},
        {"kubernetes.io/cinder", KUBE_INTREE_CINDER},
        {"kubernetes.io/portworx-volume", KUBE_INTREE_PORTWORX},
        {"kubernetes.io/azure-file", KUBE_INTREE_AZURE_FILE},
        {"kubernetes.io/vsphere-volume", KUBE_INTREE_VSPHERE},
    };
    size_t i;

    for (i = 0; i < sizeof(p) / sizeof(p[0]); i++)
        if (!strcmp(p[i].name, prov)) {
            *migratable = true;
            return intree_driver(p[i].plugin);
        }
    *migratable = false;
    return NULL;
}

/* intree_handle writes the CSI volume handle csi-translation-lib gives the in-tree volume iv
 * (pv_labels: a PersistentVolume's labels, NULL for a pod's inline volume); false when the
 * translation fails (the volume is not counted) */
static bool intree_handle(const struct kube_inline_volume *iv, const struct kube_labels *pv_labels,
                          char *buf, size_t size)
{
    const char *id = iv->id;

    switch (iv->plugin) {
    case KUBE_INTREE_AWS_EBS:
        /* KubernetesVolumeIDToEBSVolumeID: "aws://ZONE/vol-..." to "vol-..." */
        if (!strncmp(id, "aws://", 6)) {
            const char *path = strchr(id + 6, '/');
            size_t n;
            if (!path)
                return false;
            while (*path == '/')
                path++;
            n = strlen(path);
            while (n && path[n - 1] == '/')
                n--;
            if (n < 4 || strncmp(path, "vol-", 4) || memchr(path, '/', n))
                return false;
            snprintf(buf, size, "%.*s", (int)n, path);
            return true;
        }
        snprintf(buf, size, "%s", id);
        return true;
    case KUBE_INTREE_GCE_PD: {
        const char *zones = NULL, *sep;
        if (pv_labels) {
            zones = kube_labels_get(pv_labels, "failure-domain.beta.kubernetes.io/zone");
            if (!zones || !zones[0])
                zones = kube_labels_get(pv_labels, "topology.kubernetes.io/zone");
        }
        if (!zones || !zones[0]) {
            snprintf(buf, size, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/%s", id);
            return true;
        }
        if (!(sep = strstr(zones, "__"))) {
            snprintf(buf, size, "projects/UNSPECIFIED/zones/%s/disks/%s", zones, id);
            return true;
        }
        {
            /* a regional disk: every zone {locale}-{region}-{zone} of one region */
            char region[256] = "";
            const char *z = zones;
            for (;;) {
                const char *e = strstr(z, "__");
                size_t n = e ? (size_t)(e - z) : strlen(z), dashes = 0, k, cut = 0;
                for (k = 0; k < n; k++)
                    if (z[k] == '-' && ++dashes == 2)
                        cut = k;
                if (dashes != 2 || cut >= sizeof(region))
                    return false;
                if (!region[0])
                    snprintf(region, sizeof(region), "%.*s", (int)cut, z);
                else if (strlen(region) != cut || strncmp(region, z, cut))
                    return false;
                if (!e)
                    break;
                z = e + 2;
            }
            snprintf(buf, size, "projects/UNSPECIFIED/regions/%s/disks/%s", region, id);
            return true;
        }
    }
    case KUBE_INTREE_AZURE_DISK:
        if (iv->azure_unmanaged)
            return false;
        snprintf(buf, size, "%s", id);
        return true;
    case KUBE_INTREE_CINDER:
    case KUBE_INTREE_PORTWORX:
        snprintf(buf, size, "%s", id);
        return true;
    default:
        return false;
    }
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
        if (!(drv[nin] = intree_driver(iv->plugin)) ||
            !intree_handle(iv, NULL, handle, sizeof(handle)))
            continue;
        snprintf(uniq[nin], sizeof(uniq[nin]), "%s/%s", drv[nin], handle);
        size += strlen(drv[nin]) + strlen(uniq[nin]) + 2;
        nin++;
    }
    for (i = 0; i < pod->nclaims; i++)
        size += strlen(claim_name(pod, i, name, sizeof(name))) + 1;
    if (!pod->nclaims && !nin)
        goto out;
    size += (pod->nclaims + 2 * nin) * sizeof(char *);
    if (!(p->claims = malloc(size))) {
        rc = -ENOMEM;
        goto out;
    }
    s = (char *)(p->claims + pod->nclaims + 2 * nin);
    for (i = 0; i < pod->nclaims; i++) {
        const char *cn = claim_name(pod, i, name, sizeof(name));
        size_t n = strlen(cn) + 1;
        const struct kube_ephemeral_volume *e = pod_ephemeral(pod, i);
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

/* ---------------------------------------------------------------- NodeVolumeLimits */

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
    if (grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
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
    const struct kube_pv *pv = p->volume_name[0] ? find_pv(v, p->volume_name) : NULL;
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
        if (!have_csinode || !(drv = intree_driver(pv->intree.plugin)) ||
            !intree_handle(&pv->intree, &pv->labels, handle, sizeof(handle)) || !handle[0])
            return NULL;
        snprintf(buf, size, "%s/%s", drv, handle);
        return drv;
    }
    /* getCSIDriverInfoFromSC: no volume name, or the volume is not in the input */
    if (!claim_class(p)[0] || !(sc = find_sc(v, claim_class(p))))
        return NULL;
    drv = intree_provisioner_driver(sc->provisioner, &mig);
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
        if ((k = find_pvc(v, p->ns, p->claims[i])) < 0)
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

/* limits_filter is NodeVolumeLimits' Filter on the node at slot with the pods on[0..non) on
 * it: 0 when it passes, else a reason id (Unschedulable) */
static uint32_t limits_filter(struct sched_cluster *c, const struct sched_vpod *vp, uint32_t slot,
                              struct sched_pod *const *on, uint32_t non)
{
    struct sched_volumes *v = c->vol;
    const struct kube_csi_node *cn = find_csinode(v, c->slots[slot].name);
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
        const char *drv = intree_driver(iv->plugin);
        char handle[512];
        if (!drv || !intree_handle(iv, NULL, handle, sizeof(handle)))
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
        const struct kube_csi_driver *dr = find_driver(v, newv.v[i].driver);
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
                !(pv = find_pv(v, va->pv_name)) || !pv->csi_driver)
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

/* ---------------------------------------------------------------- PreFilter */

static int cmp_request(const void *a, const void *b, void *ctx)
{
    const struct sched_volumes *v = ctx;
    int64_t x = v->pvcs[*(const uint32_t *)a].request, y = v->pvcs[*(const uint32_t *)b].request;

    return x < y ? -1 : x > y;
}

/* prefilter_fail records that plugin's PreFilter rejected the pod (UnschedulableAndUnresolvable)
 * with the text fmt makes: every node carries that plugin and text. */
static int prefilter_fail(struct sched_cpod *cp, uint8_t plugin, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int prefilter_fail(struct sched_cpod *cp, uint8_t plugin, const char *fmt, ...)
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

int sched_volumes_prefilter(struct sched_cluster *c, struct sched_cpod *cp)
{
    const struct kube_pod *pod = cp->src;
    struct sched_volumes *v;
    struct sched_vpod *vp;
    const char **names;
    char buf[512];
    size_t i, n;
    long k;
    int rc;

    cp->vol = NULL;
    if (!pod || (!pod->nclaims && !kube_pod_ext(pod)->ninline_volumes) || cp->prefilter_conflict)
        return 0;
    n = pod->nclaims;
    if (!(names = arena_alloc(cp->arena, (n + 1) * sizeof(*names))))
        return -ENOMEM;
    /* the ephemeral volume controller has made the claims of the pod's ephemeral volumes */
    for (i = 0; i < n; i++) {
        const struct kube_ephemeral_volume *e = pod_ephemeral(pod, i);
        if (!(names[i] = arena_strdup(cp->arena, claim_name(pod, i, buf, sizeof(buf)))))
            return -ENOMEM;
        if (e && (rc = ephemeral_claim(c, pod, e, names[i])))
            return rc;
    }
    if (!(v = vols(c, NULL))) /* (the filters need the state, with or without objects) */
        return -ENOMEM;
    /* VolumeRestrictions' PreFilter reads every persistentVolumeClaim volume's claim first */
    for (i = 0; i < n; i++)
        if (!pod_ephemeral(pod, i) && find_pvc(v, pod->namespace_, names[i]) < 0)
            return prefilter_fail(cp, SCHED_PL_VOLUME_RESTRICTIONS,
                                  "persistentvolumeclaim \"%s\" not found", names[i]);
    /* VolumeBinding: podHasPVCs, then GetPodVolumeClaims */
    for (i = 0; i < n; i++) {
        const struct kube_pvc *p;
        if ((k = find_pvc(v, pod->namespace_, names[i])) < 0)
            return prefilter_fail(cp, SCHED_PL_VOLUME_BINDING,
                                  "waiting for ephemeral volume controller to create the "
                                  "persistentvolumeclaim \"%s\"",
                                  names[i]);
        p = &v->pvcs[k];
        if (p->lost)
            return prefilter_fail(cp, SCHED_PL_VOLUME_BINDING,
                                  "persistentvolumeclaim \"%s\" bound to non-existent "
                                  "persistentvolume \"%s\"",
                                  p->name, p->volume_name);
        if (p->terminating)
            return prefilter_fail(cp, SCHED_PL_VOLUME_BINDING,
                                  "persistentvolumeclaim \"%s\" is being deleted", p->name);
        if (pod_ephemeral(pod, i) && !claim_for_pod(p, pod))
            return prefilter_fail(cp, SCHED_PL_VOLUME_BINDING,
                                  "PVC %s/%s was not created for pod %s/%s (pod is not owner)",
                                  p->namespace_, p->name, pod->namespace_, pod->name);
    }
    if (!(vp = arena_alloc(cp->arena, sizeof(*vp))))
        return -ENOMEM;
    memset(vp, 0, sizeof(*vp));
    vp->pod = pod;
    /* NodeVolumeLimits' PreFilter: a claim or an in-tree volume CSI migration knows */
    vp->limits = true;
    if (!(vp->bound = arena_alloc(cp->arena, (n + 1) * sizeof(*vp->bound))) ||
        !(vp->bound_pv = arena_alloc(cp->arena, (n + 1) * sizeof(*vp->bound_pv))) ||
        !(vp->delay = arena_alloc(cp->arena, (n + 1) * sizeof(*vp->delay))) ||
        !(vp->zone_pvs = arena_alloc(cp->arena, (n + 1) * sizeof(*vp->zone_pvs))) ||
        !(vp->claimv = arena_alloc(cp->arena, (n + 1) * sizeof(*vp->claimv))))
        return -ENOMEM;
    for (i = 0; i < n; i++) {
        const struct kube_pvc *p;
        k = find_pvc(v, pod->namespace_, names[i]);
        p = &v->pvcs[k];
        vp->claimv[vp->nclaimv++] = p;
        if (fully_bound(p)) {
            vp->bound_pv[vp->nbound] = find_pv(v, p->volume_name);
            vp->bound[vp->nbound++] = (uint32_t)k;
        } else if (delay_binding(v, p) && !p->volume_name[0])
            vp->delay[vp->ndelay++] = (uint32_t)k;
        else
            return prefilter_fail(cp, SCHED_PL_VOLUME_BINDING,
                                  "pod has unbound immediate PersistentVolumeClaims");
    }
    qsort_r(vp->delay, vp->ndelay, sizeof(*vp->delay), cmp_request, v);
    /* VolumeRestrictions' PreFilter state: its ReadWriteOncePod claims (a set), and how
     * many of them are in use */
    if (!(vp->rwop = arena_alloc(cp->arena, (n + 1) * sizeof(*vp->rwop))))
        return -ENOMEM;
    for (i = 0; i < n; i++) {
        const struct kube_pvc *p = vp->claimv[i];
        uint32_t j;
        if (pod_ephemeral(pod, i) || !(p->access & KUBE_ACCESS_RWOP))
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
        const struct kube_pvc *p = vp->claimv[i];
        const struct kube_pv *pv;
        if (!p->volume_name[0])
            continue; /* (WaitForFirstConsumer: the others were rejected above) */
        if (!(pv = find_pv(v, p->volume_name)))
            return prefilter_fail(cp, SCHED_PL_VOLUME_ZONE, "persistentvolume \"%s\" not found",
                                  p->volume_name);
        if (pv_has_topology(pv))
            vp->zone_pvs[vp->nzone_pvs++] = pv;
    }
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

/* hasEnoughCapacity: a CSIDriver named after the provisioner with storageCapacity true
 * needs a CSIStorageCapacity of the class whose nodeTopology selects the node and whose
 * maximumVolumeSize (else capacity) holds the request; *cap is the first such one (NULL when
 * none is needed) */
static bool enough_capacity(const struct sched_volumes *v, const struct kube_pvc *p,
                            const struct kube_storage_class *sc, const struct kube_node *node,
                            const struct kube_csi_capacity **cap)
{
    const struct kube_csi_driver *d = find_driver(v, sc->provisioner);
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
    const struct kube_storage_class *sc = find_sc(v, claim_class(p));

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
                            int32_t rwop_count, struct sched_pod *const *on, uint32_t non,
                            uint8_t *plugin, int32_t *score);

uint32_t sched_volumes_filter(struct sched_cluster *c, const struct sched_cpod *cp, uint32_t slot,
                              uint8_t *plugin, int32_t *score)
{
    *score = 0;
    if (!cp->vol)
        return 0;
    return filter_with(c, cp, slot, cp->vol->rwop_used, c->slots[slot].pods, c->slots[slot].npods,
                       plugin, score);
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
    if (!(r = filter_with(c, cp, slot, count, on, non, &pl, &score)))
        return true;
    *plugin = pl;
    *reason = r;
    return false;
}

static uint32_t filter_with(struct sched_cluster *c, const struct sched_cpod *cp, uint32_t slot,
                            int32_t rwop_count, struct sched_pod *const *on, uint32_t non,
                            uint8_t *plugin, int32_t *score)
{
    const struct sched_vpod *vp = cp->vol;
    struct kube_pv *local[16], **chosen = local;
    const struct kube_csi_capacity *clocal[16], **caps = clocal;
    struct kube_node node;
    uint32_t bits;

    *score = 0;
    if (rwop_count > 0) {
        if (c->vol->r_rwop == 0 || c->vol->r_rwop == SCHED_NOID)
            c->vol->r_rwop = sched_intern_add(&c->reasons, RWOP_REASON);
        *plugin = SCHED_PL_VOLUME_RESTRICTIONS;
        return c->vol->r_rwop;
    }
    if ((bits = limits_filter(c, vp, slot, on, non))) {
        *plugin = SCHED_PL_VOLUME_LIMITS;
        return bits;
    }
    if (vp->ndelay > 16) {
        chosen = calloc(vp->ndelay, sizeof(*chosen));
        caps = calloc(vp->ndelay, sizeof(*caps));
    } else {
        memset(clocal, 0, sizeof(clocal));
    }
    if (!chosen || !caps || !node_view(c, slot, &node)) {
        if (chosen != local)
            free(chosen);
        if (caps != clocal)
            free(caps);
        *plugin = SCHED_PL_VOLUME_BINDING;
        return SCHED_VB_BIND_CONFLICT; /* (out of memory: no placement) */
    }
    bits = find_pod_volumes(c, vp, &node, chosen, caps);
    if (!bits)
        *score = binding_score(c->vol, vp, chosen, caps);
    if (chosen != local)
        free(chosen);
    if (caps != clocal)
        free(caps);
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

    /* in kube-scheduler's order: node affinity, bind conflict, storage, missing volume */
    static const unsigned order[] = {0, 1, 3, 2};

    for (b = 0; b < 4; b++)
        if (bits >> order[b] & 1)
            out[n++] = vb_reason[order[b]];
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
        if ((x = find_pvc(v, pod->namespace_, claim_name(pod, k, name, sizeof(name)))) >= 0 &&
            !fully_bound(&v->pvcs[x]) && !v->pvcs[x].volume_name[0] &&
            delay_binding(v, &v->pvcs[x]))
            delay[vp.ndelay++] = (uint32_t)x;
    qsort_r(delay, vp.ndelay, sizeof(*delay), cmp_request, v);
    id = sched_intern_find(&c->strs, node);
    slot = id != SCHED_NOID && id < c->nslot_of_name ? c->slot_of_name[id] : SCHED_NOID;
    if (vp.ndelay && slot != SCHED_NOID && node_view(c, slot, &nv)) {
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
