/* cluster.c - the scheduler's cluster state: interned strings, node slots, node classes and
 * the pods counted on each node, all updated incrementally.
 *
 * Invariants: hot[s] mirrors the sum of the pods in slots[s].pods (requests, non-zero
 * requests, count, lowest priority); order[] lists the present slots; every present slot's
 * hot.cls is a live class whose key is (unschedulable, taints, labels on interesting keys). */
#include "sched/cluster.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/goparse.h"
#include "kube/rules.h"
#include "sched/cluster-int.h"
#include "sched/intern-int.h"
#include "sched/plugins-int.h"
#include "sched/sched-int.h"
#include "sched/usage-int.h"

/* ---------------------------------------------------------------- reasons */

static const char *const fixed_reasons[SCHED_R_FIXED_COUNT] = {
    [SCHED_R_UNSCHEDULABLE] = "node(s) were unschedulable",
    [SCHED_R_NODE_NAME] = "node(s) didn't match the requested node name",
    [SCHED_R_AFFINITY] = "node(s) didn't match Pod's node affinity/selector",
    [SCHED_R_AFFINITY_PREFILTER] = "node(s) didn't satisfy plugin(s) [NodeAffinity]",
    [SCHED_R_PORTS] = "node(s) didn't have free ports for the requested pod ports",
    [SCHED_R_TOO_MANY_PODS] = "Too many pods",
    [SCHED_R_CPU] = "Insufficient cpu",
    [SCHED_R_MEMORY] = "Insufficient memory",
    [SCHED_R_EPHEMERAL] = "Insufficient ephemeral-storage",
    [SCHED_R_TAINT_GENERIC] = "node(s) had untolerated taint(s)",
    [SCHED_R_NOT_HELPFUL] = "Preemption is not helpful for scheduling",
    [SCHED_R_NO_VICTIMS] = "No preemption victims found for incoming pod",
    [SCHED_R_AFFINITY_CONFLICT] = "pod affinity terms conflict",
    [SCHED_R_NOT_CHECKED] = "Not evaluated: preemption had found enough candidates",
    [SCHED_R_SPREAD] = "node(s) didn't match pod topology spread constraints",
    [SCHED_R_SPREAD_LABEL] =
        "node(s) didn't match pod topology spread constraints (missing required label)",
};

uint32_t sched_reason_insufficient(struct sched_cluster *c, uint32_t rid)
{
    char buf[512];

    if (rid >= c->nreason_of_rid) {
        uint32_t n = c->strs.cap > rid + 1 ? c->strs.cap : rid + 1, i;
        uint32_t *r = realloc(c->reason_of_rid, n * sizeof(*r));

        if (!r)
            return SCHED_NOID;
        for (i = c->nreason_of_rid; i < n; i++)
            r[i] = SCHED_NOID;
        c->reason_of_rid = r;
        c->nreason_of_rid = n;
    }
    if (c->reason_of_rid[rid] == SCHED_NOID) {
        snprintf(buf, sizeof(buf), "Insufficient %s", c->strs.strs[rid]);
        c->reason_of_rid[rid] = sched_intern_add(&c->reasons, buf);
    }
    return c->reason_of_rid[rid];
}

/* The one place the taint reason is worded (research §4). */
uint32_t sched_reason_taint(struct sched_cluster *c, struct sched_class *cl, uint32_t ti,
                            enum sched_taint_wording w)
{
    char buf[1024];

    if (w == SCHED_TAINT_WORDING_GENERIC)
        return SCHED_R_TAINT_GENERIC;
    if (cl->taint_reason[ti] == SCHED_NOID) {
        snprintf(buf, sizeof(buf), "node(s) had untolerated taint {%s: %s}",
                 c->strs.strs[cl->taints[ti].key], c->strs.strs[cl->taints[ti].value]);
        cl->taint_reason[ti] = sched_intern_add(&c->reasons, buf);
    }
    return cl->taint_reason[ti];
}

const char *sched_plugin_name(int plugin)
{
    static const char *const names[] = {[SCHED_PL_UNSCHEDULABLE] = "NodeUnschedulable",
                                        [SCHED_PL_NODE_NAME] = "NodeName",
                                        [SCHED_PL_TAINT] = "TaintToleration",
                                        [SCHED_PL_AFFINITY] = "NodeAffinity",
                                        [SCHED_PL_PORTS] = "NodePorts",
                                        [SCHED_PL_FIT] = "NodeResourcesFit",
                                        [SCHED_PL_VOLUME_RESTRICTIONS] = "VolumeRestrictions",
                                        [SCHED_PL_VOLUME_LIMITS] = "NodeVolumeLimits",
                                        [SCHED_PL_VOLUME_BINDING] = "VolumeBinding",
                                        [SCHED_PL_VOLUME_ZONE] = "VolumeZone",
                                        [SCHED_PL_SPREAD] = "PodTopologySpread",
                                        [SCHED_PL_INTERPOD] = "InterPodAffinity",
                                        [SCHED_PL_DRA] = "DynamicResources"};

    return plugin > 0 && plugin <= SCHED_PL_DRA ? names[plugin] : NULL;
}

/* ---------------------------------------------------------------- cluster */

struct sched_cluster *sched_cluster_new(void)
{
    struct sched_cluster *c = calloc(1, sizeof(*c));
    uint32_t i;

    if (!c)
        return NULL;
    if (sched_intern_init(&c->strs) || sched_intern_init(&c->reasons))
        goto fail;
    for (i = 0; i < SCHED_R_FIXED_COUNT; i++)
        if (sched_intern_add(&c->reasons, fixed_reasons[i]) != i)
            goto fail;
    c->nbuckets = 1024;
    if (!(c->pod_buckets = calloc(c->nbuckets, sizeof(*c->pod_buckets))))
        goto fail;
    c->nclass_slots = 256;
    if (!(c->class_slots = calloc(c->nclass_slots, sizeof(*c->class_slots))))
        goto fail;
    c->rid_gpu = sched_intern_add(&c->strs, "nvidia.com/gpu");
    c->id_bind_all = sched_intern_add(&c->strs, "0.0.0.0");
    c->id_empty = sched_intern_add(&c->strs, "");
    c->key_unschedulable_taint = sched_intern_add(&c->strs, "node.kubernetes.io/unschedulable");
    c->r_ipa_aff = sched_intern_add(&c->reasons, "node(s) didn't match pod affinity rules");
    c->r_ipa_anti = sched_intern_add(&c->reasons, "node(s) didn't match pod anti-affinity rules");
    c->r_ipa_existing =
        sched_intern_add(&c->reasons, "node(s) didn't satisfy existing pods anti-affinity rules");
    if (c->rid_gpu == SCHED_NOID || c->id_bind_all == SCHED_NOID || c->id_empty == SCHED_NOID ||
        c->key_unschedulable_taint == SCHED_NOID || c->r_ipa_aff == SCHED_NOID ||
        c->r_ipa_anti == SCHED_NOID || c->r_ipa_existing == SCHED_NOID)
        goto fail;
    return c;
fail:
    sched_cluster_free(c);
    return NULL;
}

static void pod_free(struct sched_pod *p)
{
    if (p) {
        sched_ipa_pod_release(p);
        free(p->claims);
    }
    free(p);
}

static void class_clear(struct sched_class *cl)
{
    free(cl->taints);
    free(cl->labels);
    free(cl->taint_reason);
    memset(cl, 0, sizeof(*cl));
}

void sched_cluster_free(struct sched_cluster *c)
{
    uint32_t i;

    if (!c)
        return;
    for (i = 0; i < c->nbuckets && c->pod_buckets; i++) {
        struct sched_pod *p = c->pod_buckets[i], *next;
        for (; p; p = next) {
            next = p->hnext;
            pod_free(p);
        }
    }
    free(c->pod_buckets);
    for (i = 0; i < c->nnoms; i++)
        pod_free(c->noms[i]);
    free(c->noms);
    for (i = 0; i < c->npdbs; i++)
        arena_release(&c->pdbs[i].arena);
    free(c->pdbs);
    if (c->pcache_free)
        c->pcache_free(c->pcache);
    if (c->dra_owner_free)
        c->dra_owner_free(c->dra_owner);
    for (i = 0; i < c->nnss; i++)
        free(c->nss[i].labels);
    free(c->nss);
    sched_ipa_cluster_release(c);
    sched_image_cluster_release(c);
    for (i = 0; i < c->nslots; i++) {
        struct sched_slot *s = &c->slots[i];
        free(s->images);
        free(s->name);
        free(s->labels);
        free(s->taints);
        free(s->scalars);
        free(s->ports);
        free(s->pods);
    }
    free(c->slots);
    free(c->hot);
    free(c->lite);
    arena_release(&c->cp_arena);
    for (i = 0; i < SCHED_MAX_SHAPES; i++)
        free(c->shapes[i].dyn);
    free(c->s_feas);
    free(c->s_feas_cls);
    free(c->s_feas_score);
    free(c->s_feas_aff);
    free(c->s_cls_total);
    free(c->s_cls_stamp);
    free(c->slot_of_name);
    free(c->order);
    for (i = 0; i < c->nclasses; i++)
        class_clear(&c->classes[i]);
    free(c->classes);
    free(c->class_slots);
    free(c->interesting);
    free(c->reason_of_rid);
    free(c->s_out);
    free(c->s_ties);
    free(c->s_inset);
    free(c->s_vc);
    free(c->s_vc_done);
    if (c->spread_src)
        c->spread_src_free(c->spread_src);
    sched_volumes_free(c->vol);
    sched_intern_release(&c->strs);
    sched_intern_release(&c->reasons);
    free(c);
}

size_t sched_cluster_node_count(const struct sched_cluster *c)
{
    return c->norder;
}

/* bump_gen invalidates every cached dynamic verdict of the slot */
static void bump_gen(struct sched_cluster *c, uint32_t slot)
{
    uint32_t g = c->lite[slot].gen + 1, i;

    if (!(g & SCHED_DYN_GEN_MASK)) {
        /* the cache keeps the low bits only: entries from 2^20 changes ago would match */
        g++;
        for (i = 0; i < SCHED_MAX_SHAPES; i++)
            if (c->shapes[i].dyn && slot < c->shape_slots)
                c->shapes[i].dyn[slot] = 0;
    }
    c->lite[slot].gen = g;
}

/* slot_get returns the slot of node name id, creating it (absent) when create. */
static uint32_t slot_get(struct sched_cluster *c, uint32_t name_id, bool create)
{
    uint32_t s;

    if (name_id == SCHED_NOID)
        return SCHED_NOID;
    if (name_id >= c->nslot_of_name) {
        uint32_t n = c->nslot_of_name, i;
        if (!create)
            return SCHED_NOID;
        if (sched_grow((void **)&c->slot_of_name, &n, name_id + 1, sizeof(uint32_t)))
            return SCHED_NOID;
        for (i = c->nslot_of_name; i < n; i++)
            c->slot_of_name[i] = SCHED_NOID;
        c->nslot_of_name = n;
    }
    if (c->slot_of_name[name_id] != SCHED_NOID || !create)
        return c->slot_of_name[name_id];
    if (c->nslots == c->cslots) {
        uint32_t cap = c->cslots, cap2 = c->cslots, cap3 = c->cslots;
        if (sched_grow((void **)&c->slots, &cap, c->nslots + 1, sizeof(*c->slots)) ||
            sched_grow((void **)&c->hot, &cap2, c->nslots + 1, sizeof(*c->hot)) ||
            sched_grow((void **)&c->lite, &cap3, c->nslots + 1, sizeof(*c->lite)))
            return SCHED_NOID;
        c->cslots = cap < cap2 ? cap : cap2;
        c->cslots = c->cslots < cap3 ? c->cslots : cap3;
    }
    s = c->nslots;
    memset(&c->slots[s], 0, sizeof(c->slots[s]));
    memset(&c->hot[s], 0, sizeof(c->hot[s]));
    memset(&c->lite[s], 0, sizeof(c->lite[s]));
    if (!(c->slots[s].name = strdup(c->strs.strs[name_id])))
        return SCHED_NOID;
    c->lite[s].name = name_id;
    c->lite[s].gen = 1;
    c->hot[s].min_prio = INT32_MAX;
    c->lite[s].cls = SCHED_NOID;
    c->nslots++;
    c->slot_of_name[name_id] = s;
    return s;
}

const struct sched_scalar *sched_slot_scalar(const struct sched_slot *s, uint32_t rid)
{
    uint32_t i;

    for (i = 0; i < s->nscalars; i++)
        if (s->scalars[i].rid == rid)
            return &s->scalars[i];
    return NULL;
}

static struct sched_scalar *slot_scalar_add(struct sched_slot *s, uint32_t rid)
{
    struct sched_scalar *x = (struct sched_scalar *)sched_slot_scalar(s, rid), *v;

    if (x)
        return x;
    if (!(v = realloc(s->scalars, (s->nscalars + 1) * sizeof(*v))))
        return NULL;
    s->scalars = v;
    x = &v[s->nscalars++];
    x->rid = rid;
    x->alloc = x->req = 0;
    return x;
}

/* ---------------------------------------------------------------- classes */

static bool key_interesting(const struct sched_cluster *c, uint32_t key)
{
    return key < c->ninteresting && c->interesting[key];
}

/* class_key builds the projected labels of slot s into buf (cap entries) and returns count */
static uint32_t project_labels(const struct sched_cluster *c, const struct sched_slot *s,
                               struct sched_idlabel *buf)
{
    uint32_t i, n = 0;

    for (i = 0; i < s->nlabels; i++)
        if (key_interesting(c, s->labels[i].key))
            buf[n++] = s->labels[i];
    return n;
}

static uint32_t class_hash(bool unsched, const struct sched_idtaint *t, uint32_t nt,
                           const struct sched_idlabel *l, uint32_t nl)
{
    uint32_t h = 2166136261u, i;

    h = sched_hash_bytes(&unsched, 1, h);
    for (i = 0; i < nt; i++) {
        h = sched_hash_bytes(&t[i].key, 4, h);
        h = sched_hash_bytes(&t[i].value, 4, h);
        h = sched_hash_bytes(&t[i].effect, 1, h);
    }
    h ^= 0x9e3779b9u;
    for (i = 0; i < nl; i++) {
        h = sched_hash_bytes(&l[i].key, 4, h);
        h = sched_hash_bytes(&l[i].value, 4, h);
    }
    return h;
}

static bool class_equal(const struct sched_class *cl, bool unsched, const struct sched_idtaint *t,
                        uint32_t nt, const struct sched_idlabel *l, uint32_t nl)
{
    uint32_t i;

    if (cl->unschedulable != unsched || cl->ntaints != nt || cl->nlabels != nl)
        return false;
    for (i = 0; i < nt; i++)
        if (cl->taints[i].key != t[i].key || cl->taints[i].value != t[i].value ||
            cl->taints[i].effect != t[i].effect)
            return false;
    for (i = 0; i < nl; i++)
        if (cl->labels[i].key != l[i].key || cl->labels[i].value != l[i].value)
            return false;
    return true;
}

static int class_table_insert(struct sched_cluster *c, uint32_t idx)
{
    uint32_t m, i;

    if ((c->nclasses + 1) * 2 > c->nclass_slots) {
        uint32_t n = c->nclass_slots * 2, j;
        uint32_t *s = calloc(n, sizeof(*s));
        if (!s)
            return -ENOMEM;
        for (j = 0; j < c->nclasses; j++) {
            if (j == idx)
                continue;
            i = c->classes[j].hash & (n - 1);
            while (s[i])
                i = (i + 1) & (n - 1);
            s[i] = j + 1;
        }
        free(c->class_slots);
        c->class_slots = s;
        c->nclass_slots = n;
    }
    m = c->nclass_slots - 1;
    i = c->classes[idx].hash & m;
    while (c->class_slots[i])
        i = (i + 1) & m;
    c->class_slots[i] = idx + 1;
    return 0;
}

/* class_of returns the class of slot s (taking a reference), or SCHED_NOID on ENOMEM. */
static uint32_t class_of(struct sched_cluster *c, uint32_t slot)
{
    struct sched_slot *s = &c->slots[slot];
    struct sched_idlabel stackbuf[64], *l = stackbuf;
    struct sched_class *cl;
    uint32_t nl, h, i, m, idx = SCHED_NOID, cap;

    if (s->nlabels > 64 && !(l = malloc(s->nlabels * sizeof(*l))))
        return SCHED_NOID;
    nl = project_labels(c, s, l);
    h = class_hash(s->unschedulable, s->taints, s->ntaints, l, nl);
    m = c->nclass_slots - 1;
    for (i = h & m; c->class_slots[i]; i = (i + 1) & m) {
        cl = &c->classes[c->class_slots[i] - 1];
        if (cl->hash == h && class_equal(cl, s->unschedulable, s->taints, s->ntaints, l, nl)) {
            idx = c->class_slots[i] - 1;
            break;
        }
    }
    if (idx == SCHED_NOID) {
        cap = c->cclasses;
        if (sched_grow((void **)&c->classes, &cap, c->nclasses + 1, sizeof(*c->classes)))
            goto out;
        c->cclasses = cap;
        cl = &c->classes[c->nclasses];
        memset(cl, 0, sizeof(*cl));
        cl->hash = h;
        cl->unschedulable = s->unschedulable;
        cl->ntaints = s->ntaints;
        cl->nlabels = nl;
        cl->taints = malloc((s->ntaints + 1) * sizeof(*cl->taints));
        cl->taint_reason = malloc((s->ntaints + 1) * sizeof(*cl->taint_reason));
        cl->labels = malloc((nl + 1) * sizeof(*cl->labels));
        if (!cl->taints || !cl->labels || !cl->taint_reason) {
            class_clear(cl);
            goto out;
        }
        memcpy(cl->taints, s->taints, s->ntaints * sizeof(*cl->taints));
        for (i = 0; i < s->ntaints; i++)
            cl->taint_reason[i] = SCHED_NOID;
        memcpy(cl->labels, l, nl * sizeof(*l));
        if (class_table_insert(c, c->nclasses)) {
            class_clear(cl);
            goto out;
        }
        idx = c->nclasses++;
    }
    c->classes[idx].refs++;
out:
    if (l != stackbuf)
        free(l);
    return idx;
}

static void class_unref(struct sched_cluster *c, uint32_t idx)
{
    if (idx != SCHED_NOID && c->classes[idx].refs)
        c->classes[idx].refs--;
}

/* sched_cluster_refresh_classes recomputes every present node's class from scratch (after
 * the interesting keys changed, or when too many classes are dead). */
int sched_cluster_refresh_classes(struct sched_cluster *c)
{
    uint32_t i;

    for (i = 0; i < c->nclasses; i++)
        class_clear(&c->classes[i]);
    c->nclasses = 0;
    memset(c->class_slots, 0, c->nclass_slots * sizeof(*c->class_slots));
    for (i = 0; i < c->norder; i++) {
        uint32_t s = c->order[i];
        if ((c->lite[s].cls = class_of(c, s)) == SCHED_NOID)
            return -ENOMEM;
    }
    c->classes_dirty = false;
    return 0;
}

int sched_cluster_mark_interesting(struct sched_cluster *c, uint32_t key)
{
    if (key == SCHED_NOID || key_interesting(c, key))
        return 0;
    if (key >= c->ninteresting) {
        uint32_t n = c->ninteresting;
        if (sched_grow((void **)&c->interesting, &n, key + 1, sizeof(bool)))
            return -ENOMEM;
        c->ninteresting = n;
    }
    c->interesting[key] = true;
    /* only nodes that carry the key change class */
    for (uint32_t i = 0; i < c->norder && !c->classes_dirty; i++) {
        const struct sched_slot *s = &c->slots[c->order[i]];
        for (uint32_t j = 0; j < s->nlabels; j++)
            if (s->labels[j].key == key) {
                c->classes_dirty = true;
                break;
            }
    }
    return 0;
}

/* ---------------------------------------------------------------- nodes */

int sched_cluster_add_node(struct sched_cluster *c, const struct kube_node *node, struct err *err)
{
    struct sched_idlabel *labels = NULL;
    struct sched_idtaint *taints = NULL;
    struct sched_slot *s;
    struct sched_hot *h;

    c->nodes_version++; /* (podtopologyspread.c's topology columns) */
    uint32_t id, slot, i, live = 0;
    bool relabel;
    int rc = -ENOMEM;

    if (!node->name || !*node->name)
        return err_set(err, -EINVAL, "node has no name");
    if ((id = sched_intern_add(&c->strs, node->name)) == SCHED_NOID ||
        (slot = slot_get(c, id, true)) == SCHED_NOID)
        goto out;
    labels = malloc((node->labels.n + 1) * sizeof(*labels));
    taints = malloc((node->ntaints + 1) * sizeof(*taints));
    if (!labels || !taints)
        goto out;
    if (sched_intern_labels(&c->strs, &node->labels, labels))
        goto out;
    for (i = 0; i < node->ntaints; i++) {
        taints[i].key = sched_intern_add(&c->strs, node->taints[i].key);
        taints[i].value =
            sched_intern_add(&c->strs, node->taints[i].value ? node->taints[i].value : "");
        taints[i].effect = (uint8_t)node->taints[i].effect;
        if (taints[i].key == SCHED_NOID || taints[i].value == SCHED_NOID)
            goto out;
    }
    s = &c->slots[slot];
    h = &c->hot[slot];
    for (i = 0; i < s->nscalars; i++)
        s->scalars[i].alloc = 0;
    for (i = 0; i < node->allocatable.nscalars; i++) {
        uint32_t rid = sched_intern_add(&c->strs, node->allocatable.scalars[i].name);
        struct sched_scalar *x = rid == SCHED_NOID ? NULL : slot_scalar_add(s, rid);
        if (!x)
            goto out;
        x->alloc = node->allocatable.scalars[i].value;
    }
    /* InterPodAffinity's counts by topology pair follow the node's labels */
    relabel = s->present && (s->nlabels != node->labels.n ||
                             memcmp(s->labels, labels, node->labels.n * sizeof(*labels)));
    if (relabel)
        sched_ipa_node_unindex(c, slot);
    free(s->labels);
    free(s->taints);
    s->labels = labels;
    s->nlabels = (uint32_t)node->labels.n;
    if (relabel)
        sched_ipa_node_index(c, slot);
    s->taints = taints;
    s->ntaints = (uint32_t)node->ntaints;
    labels = NULL;
    taints = NULL;
    if (sched_image_node_set(c, slot, node))
        goto out;
    s->unschedulable = node->unschedulable;
    h->alloc_cpu = node->allocatable.cpu_milli;
    h->alloc_mem = node->allocatable.memory;
    h->alloc_eph = node->allocatable.ephemeral;
    h->alloc_pods =
        node->allocatable.pods > INT32_MAX ? INT32_MAX : (int32_t)node->allocatable.pods;
    {
        const struct sched_scalar *g = sched_slot_scalar(s, c->rid_gpu);
        h->alloc_gpu = g ? g->alloc : 0;
    }
    if (!s->present) {
        /* order[] grows with the slots array */
        uint32_t *o = realloc(c->order, c->cslots * sizeof(*o));
        if (!o)
            goto out;
        c->order = o;
        s->present = true;
        s->order_index = c->norder;
        c->order[c->norder++] = slot;
        c->lite[slot].cls = SCHED_NOID;
        sched_ipa_node_index(c, slot); /* its pods count again */
    }
    bump_gen(c, slot);
    class_unref(c, c->lite[slot].cls);
    c->lite[slot].cls = SCHED_NOID;
    if (!c->classes_dirty && (c->lite[slot].cls = class_of(c, slot)) == SCHED_NOID)
        goto out;
    /* drop dead classes once they outnumber the live ones */
    for (i = 0; i < c->nclasses; i++)
        live += c->classes[i].refs > 0;
    if (c->nclasses > 2 * live + 64)
        c->classes_dirty = true;
    rc = 0;
out:
    free(labels);
    free(taints);
    if (rc)
        err_set(err, rc, "out of memory adding node %s", node->name);
    return rc;
}

int sched_cluster_update_node(struct sched_cluster *c, const struct kube_node *node,
                              struct err *err)
{
    return sched_cluster_add_node(c, node, err);
}

int sched_cluster_remove_node(struct sched_cluster *c, const char *name)
{
    uint32_t slot = slot_get(c, sched_intern_find(&c->strs, name), false), idx, last;

    if (slot == SCHED_NOID || !c->slots[slot].present)
        return -ENOENT;
    c->nodes_version++;
    sched_ipa_node_unindex(c, slot);
    idx = c->slots[slot].order_index;
    last = c->order[--c->norder];
    c->order[idx] = last;
    c->slots[last].order_index = idx;
    c->slots[slot].present = false;
    sched_image_node_clear(c, slot);
    class_unref(c, c->lite[slot].cls);
    c->lite[slot].cls = SCHED_NOID;
    bump_gen(c, slot);
    return 0;
}

static void fill_usage(const struct sched_cluster *c, uint32_t slot, struct sched_node_usage *u)
{
    const struct sched_hot *h = &c->hot[slot];

    memset(u, 0, sizeof(*u));
    u->name = c->slots[slot].name;
    u->npods = (size_t)h->npods;
    u->allocatable_pods = h->alloc_pods;
    u->allocatable_cpu_milli = h->alloc_cpu;
    u->requested_cpu_milli = h->req_cpu;
    u->allocatable_memory = h->alloc_mem;
    u->requested_memory = h->req_mem;
    u->allocatable_ephemeral = h->alloc_eph;
    u->requested_ephemeral = h->req_eph;
    u->allocatable_gpu = h->alloc_gpu;
    u->requested_gpu = h->req_gpu;
    u->unschedulable = c->slots[slot].unschedulable;
}

int sched_cluster_node_usage(const struct sched_cluster *c, const char *name,
                             struct sched_node_usage *u)
{
    uint32_t id = sched_intern_find(&c->strs, name);
    uint32_t slot = id < c->nslot_of_name ? c->slot_of_name[id] : SCHED_NOID;

    if (slot == SCHED_NOID || !c->slots[slot].present)
        return -ENOENT;
    fill_usage(c, slot, u);
    return 0;
}

int sched_cluster_node_at(const struct sched_cluster *c, size_t i, struct sched_node_usage *u)
{
    if (i >= c->norder)
        return -ENOENT;
    fill_usage(c, c->order[i], u);
    return 0;
}

/* ---------------------------------------------------------------- pods */

static uint32_t pod_bucket(const struct sched_cluster *c, const char *ns, const char *name)
{
    uint32_t h = sched_hash_bytes(ns, strlen(ns), 2166136261u);

    h = sched_hash_bytes("/", 1, h);
    return sched_hash_bytes(name, strlen(name), h) & (c->nbuckets - 1);
}

struct sched_pod *sched_cluster_find_pod(const struct sched_cluster *c, const char *ns,
                                         const char *name)
{
    struct sched_pod *p;

    for (p = c->pod_buckets[pod_bucket(c, ns, name)]; p; p = p->hnext)
        if (!strcmp(p->ns, ns) && !strcmp(p->name, name))
            return p;
    return NULL;
}

bool sched_cluster_pod_shrinks(struct sched_cluster *c, const struct kube_pod *pod)
{
    const struct sched_pod *old = sched_cluster_find_pod(c, pod->namespace_, pod->name);
    struct sched_usage u;
    uint32_t i, j;

    if (!old || old->assumed || sched_pod_usage(c, pod, &u))
        return false;
    if (u.cpu < old->cpu || u.mem < old->mem || u.eph < old->eph)
        return true;
    for (i = 0; i < old->nscalars; i++) {
        for (j = 0; j < u.nscalars && u.scalars[j].rid != old->scalars[i].rid; j++)
            ;
        if (j == u.nscalars || u.scalars[j].req < old->scalars[i].req)
            return true;
    }
    return false;
}

/* slot_requests_add adds p's requests to the slot's sums, saturating. */
static void slot_requests_add(struct sched_cluster *c, uint32_t slot, const struct sched_pod *p)
{
    struct sched_slot *s = &c->slots[slot];
    struct sched_hot *h = &c->hot[slot];
    uint32_t i;

    h->req_cpu = sched_sat_add(h->req_cpu, p->cpu);
    h->req_mem = sched_sat_add(h->req_mem, p->mem);
    h->req_eph = sched_sat_add(h->req_eph, p->eph);
    h->nz_cpu = sched_sat_add(h->nz_cpu, p->nz_cpu);
    h->nz_mem = sched_sat_add(h->nz_mem, p->nz_mem);
    for (i = 0; i < p->nscalars; i++) {
        /* the scalar entry was created when the pod was added */
        struct sched_scalar *x = (struct sched_scalar *)sched_slot_scalar(s, p->scalars[i].rid);
        if (x)
            x->req = sched_sat_add(x->req, p->scalars[i].req);
        if (p->scalars[i].rid == c->rid_gpu)
            h->req_gpu = sched_sat_add(h->req_gpu, p->scalars[i].req);
    }
}

/* slot_requests_saturated says whether a sum p takes part in has saturated: taking p away
 * then needs a recount, since the sum no longer says what it held. */
static bool slot_requests_saturated(const struct sched_cluster *c, uint32_t slot,
                                    const struct sched_pod *p)
{
    const struct sched_slot *s = &c->slots[slot];
    const struct sched_hot *h = &c->hot[slot];
    uint32_t i;

    if (h->req_cpu == INT64_MAX || h->req_mem == INT64_MAX || h->req_eph == INT64_MAX ||
        h->nz_cpu == INT64_MAX || h->nz_mem == INT64_MAX || h->req_gpu == INT64_MAX)
        return true;
    for (i = 0; i < p->nscalars; i++) {
        const struct sched_scalar *x = sched_slot_scalar(s, p->scalars[i].rid);
        if (x && x->req == INT64_MAX)
            return true;
    }
    return false;
}

void sched_slot_usage_apply(struct sched_cluster *c, uint32_t slot, const struct sched_pod *p,
                            int sign)
{
    struct sched_slot *s = &c->slots[slot];
    struct sched_hot *h = &c->hot[slot];
    uint32_t i, j;

    if (sign > 0) {
        slot_requests_add(c, slot, p);
    } else if (slot_requests_saturated(c, slot, p)) {
        /* recount from the pods still on the node (p is no longer among them) */
        h->req_cpu = h->req_mem = h->req_eph = h->nz_cpu = h->nz_mem = h->req_gpu = 0;
        for (i = 0; i < s->nscalars; i++)
            s->scalars[i].req = 0;
        for (i = 0; i < s->npods; i++)
            if (s->pods[i] != p)
                slot_requests_add(c, slot, s->pods[i]);
    } else {
        h->req_cpu -= p->cpu;
        h->req_mem -= p->mem;
        h->req_eph -= p->eph;
        h->nz_cpu -= p->nz_cpu;
        h->nz_mem -= p->nz_mem;
        for (i = 0; i < p->nscalars; i++) {
            struct sched_scalar *x = (struct sched_scalar *)sched_slot_scalar(s, p->scalars[i].rid);
            if (x)
                x->req -= p->scalars[i].req;
            if (p->scalars[i].rid == c->rid_gpu)
                h->req_gpu -= p->scalars[i].req;
        }
    }
    h->npods += sign;
    /* HostPortInfo.Add / Remove: a set of (IP, protocol, port), so a removed pod takes a
     * port shared with another pod of the node away with it, as in kube-scheduler's cache */
    for (i = 0; i < p->nports; i++) {
        j = sched_port_find(s->ports, s->cports, &p->ports[i]);
        if (j == s->cports) {
            if (sign < 0)
                continue;
            for (j = 0; j < s->cports && s->ports[j].used; j++)
                ;
            if (j == s->cports)
                continue; /* room was reserved in pod_attach */
            s->ports[j] = p->ports[i];
        }
        s->ports[j].used = sign > 0;
    }
    c->lite[slot].nports = 0;
    c->lite[slot].portmask = 0;
    for (j = 0; j < s->cports; j++)
        if (s->ports[j].used) {
            c->lite[slot].nports++;
            c->lite[slot].portmask |= SCHED_PORT_BIT(s->ports[j].port, s->ports[j].proto);
        }
    bump_gen(c, slot);
}

static void slot_min_prio(struct sched_cluster *c, uint32_t slot)
{
    const struct sched_slot *s = &c->slots[slot];
    int32_t m = INT32_MAX;
    uint32_t i;

    for (i = 0; i < s->npods; i++)
        if (s->pods[i]->priority < m)
            m = s->pods[i]->priority;
    c->hot[slot].min_prio = m;
}

static void pod_detach(struct sched_cluster *c, struct sched_pod *p)
{
    struct sched_slot *s = &c->slots[p->slot];
    struct sched_pod **b = &c->pod_buckets[pod_bucket(c, p->ns, p->name)];
    uint32_t i = p->index_in_slot;

    while (*b != p)
        b = &(*b)->hnext;
    *b = p->hnext;
    c->npods--;
    s->pods[i] = s->pods[--s->npods];
    s->pods[i]->index_in_slot = i;
    sched_ipa_pod_detach(c, p);
    if (c->spread_pod_hook)
        c->spread_pod_hook(c, p, -1);
    sched_slot_usage_apply(c, p->slot, p, -1);
    if (p->priority == c->hot[p->slot].min_prio)
        slot_min_prio(c, p->slot);
}

static int buckets_grow(struct sched_cluster *c)
{
    uint32_t n = c->nbuckets * 2, i;
    struct sched_pod **b = calloc(n, sizeof(*b)), *p, *next;

    if (!b)
        return -ENOMEM;
    for (i = 0; i < c->nbuckets; i++)
        for (p = c->pod_buckets[i]; p; p = next) {
            uint32_t k;
            next = p->hnext;
            c->nbuckets = n; /* pod_bucket reads nbuckets */
            k = pod_bucket(c, p->ns, p->name);
            c->nbuckets = n / 2;
            p->hnext = b[k];
            b[k] = p;
        }
    free(c->pod_buckets);
    c->pod_buckets = b;
    c->nbuckets = n;
    return 0;
}

/* pod_build makes a cluster pod from pod on node name; NULL on ENOMEM (or -E2BIG scalars). */
static struct sched_pod *pod_build(struct sched_cluster *c, const struct kube_pod *pod,
                                   const char *node_name, int *rc)
{
    struct sched_usage u;
    struct sched_pod *p;
    size_t nn = strlen(pod->name), size;
    uint32_t slot, np;
    char *str;

    *rc = sched_pod_usage(c, pod, &u);
    if (*rc)
        return NULL;
    *rc = -ENOMEM;
    if ((slot = slot_get(c, sched_intern_add(&c->strs, node_name), true)) == SCHED_NOID)
        return NULL;
    /* one block: the record, its scalars (8-aligned like it), its ports, its labels as
     * interned ids, then its name; the namespace is strs' copy (kept until the cluster is
     * freed) */
    np = sched_pod_count_host_ports(pod);
    size = sizeof(*p) + u.nscalars * sizeof(*p->scalars) + np * sizeof(*p->ports) +
           pod->labels.n * sizeof(*p->labels) + nn + 1;
    if (!(p = calloc(1, size)))
        return NULL;
    p->scalars = (struct sched_scalar *)(p + 1);
    p->ports = (struct sched_port *)(p->scalars + u.nscalars);
    p->labels = (struct sched_idlabel *)(p->ports + np);
    str = (char *)(p->labels + pod->labels.n);
    /* labels interned, for the selectors of PodTopologySpread (and InterPodAffinity) */
    if (sched_intern_labels(&c->strs, &pod->labels, p->labels)) {
        free(p);
        return NULL;
    }
    p->nlabels = (uint32_t)pod->labels.n;
    if ((p->nsid = sched_intern_add(&c->strs, pod->namespace_)) == SCHED_NOID) {
        free(p);
        return NULL;
    }
    p->ns = c->strs.strs[p->nsid];
    p->name = memcpy(str, pod->name, nn + 1);
    p->slot = slot;
    p->terminating = pod->terminating;
    p->by_preemption = pod->disruption_by_preemption;
    p->priority = pod->priority;
    p->seq = c->next_seq++;
    p->cpu = u.cpu;
    p->mem = u.mem;
    p->eph = u.eph;
    p->nz_cpu = u.nz_cpu;
    p->nz_mem = u.nz_mem;
    memcpy(p->scalars, u.scalars, u.nscalars * sizeof(*p->scalars));
    p->nscalars = u.nscalars;
    if (sched_pod_host_ports(c, pod, p->ports, &p->nports) || sched_ipa_pod_build(c, pod, p) ||
        sched_volumes_pod_claims(c, p, pod)) {
        pod_free(p); /* what the builders allocated, then the block */
        return NULL;
    }
    *rc = 0;
    return p;
}

static int pod_attach(struct sched_cluster *c, struct sched_pod *p)
{
    struct sched_slot *s = &c->slots[p->slot];
    uint32_t i, b;

    if (c->npods + 1 > c->nbuckets && buckets_grow(c))
        return -ENOMEM;
    if (sched_grow((void **)&s->pods, &s->cpods, s->npods + 1, sizeof(*s->pods)))
        return -ENOMEM;
    if (p->nports && sched_grow((void **)&s->ports, &s->cports, c->lite[p->slot].nports + p->nports,
                                sizeof(*s->ports)))
        return -ENOMEM;
    for (i = 0; i < p->nscalars; i++)
        if (!slot_scalar_add(s, p->scalars[i].rid))
            return -ENOMEM;
    if (sched_ipa_pod_attach(c, p))
        return -ENOMEM;
    b = pod_bucket(c, p->ns, p->name);
    p->hnext = c->pod_buckets[b];
    c->pod_buckets[b] = p;
    c->npods++;
    p->index_in_slot = s->npods;
    s->pods[s->npods++] = p;
    if (c->spread_pod_hook)
        c->spread_pod_hook(c, p, +1);
    sched_slot_usage_apply(c, p->slot, p, +1);
    if (p->priority < c->hot[p->slot].min_prio)
        c->hot[p->slot].min_prio = p->priority;
    return 0;
}

int sched_cluster_add_pod(struct sched_cluster *c, const struct kube_pod *pod, struct err *err)
{
    struct sched_pod *old = sched_cluster_find_pod(c, pod->namespace_, pod->name), *p;
    int rc;

    if (!pod->node_name || !*pod->node_name || kube_pod_phase_terminal(pod->phase)) {
        if (old && !old->assumed) {
            pod_detach(c, old);
            pod_free(old);
        }
        return 0;
    }
    if (!(p = pod_build(c, pod, pod->node_name, &rc)))
        goto fail;
    sched_cluster_unnominate(c, pod->namespace_, pod->name);
    if (old) {
        p->seq = old->seq;
        if (old->marked) {
            /* our own preemption is deleting it: an update written before the deletion
             * (its DisruptionTarget patch) must not make it a candidate victim again */
            p->marked = p->terminating = p->by_preemption = true;
        }
        pod_detach(c, old);
        pod_free(old);
    }
    if ((rc = pod_attach(c, p))) {
        pod_free(p);
        goto fail;
    }
    return 0;
fail:
    return err_set(err, rc, "cannot add pod %s/%s: %s", pod->namespace_, pod->name,
                   rc == -E2BIG ? "too many extended resources" : "out of memory");
}

int sched_cluster_remove_pod(struct sched_cluster *c, const char *namespace_, const char *name)
{
    struct sched_pod *p = sched_cluster_find_pod(c, namespace_, name);

    if (!p)
        return -ENOENT;
    pod_detach(c, p);
    pod_free(p);
    return 0;
}

int sched_cluster_assume_pod(struct sched_cluster *c, const struct kube_pod *pod,
                             const char *node_name, struct err *err)
{
    struct sched_pod *p;
    int rc;

    if (sched_cluster_find_pod(c, pod->namespace_, pod->name))
        return err_set(err, -EEXIST, "pod %s/%s is already in the cluster", pod->namespace_,
                       pod->name);
    if (!(p = pod_build(c, pod, node_name, &rc)))
        goto fail;
    p->assumed = true;
    sched_cluster_unnominate(c, pod->namespace_, pod->name);
    if ((rc = pod_attach(c, p))) {
        pod_free(p);
        goto fail;
    }
    return 0;
fail:
    return err_set(err, rc, "cannot assume pod %s/%s: %s", pod->namespace_, pod->name,
                   rc == -E2BIG ? "too many extended resources" : "out of memory");
}

int sched_cluster_forget_pod(struct sched_cluster *c, const char *namespace_, const char *name)
{
    struct sched_pod *p = sched_cluster_find_pod(c, namespace_, name);

    if (!p)
        return -ENOENT;
    if (!p->assumed)
        return -EINVAL;
    pod_detach(c, p);
    pod_free(p);
    return 0;
}

int sched_cluster_mark_preempted(struct sched_cluster *c, const char *namespace_, const char *name,
                                 bool on)
{
    struct sched_pod *p = sched_cluster_find_pod(c, namespace_, name);

    if (!p)
        return -ENOENT;
    if (on) {
        /* a terminating pod leaves PodTopologySpread's counts */
        if (c->spread_pod_hook && !p->terminating)
            c->spread_pod_hook(c, p, -1);
        p->marked = p->terminating = p->by_preemption = true;
    } else if (p->marked) {
        /* the deletion failed: back to what the API last said (a pod the API showed
         * terminating keeps its flags through the next update) */
        p->marked = false;
    }
    return 0;
}

/* ---------------------------------------------------------------- the nominator */

static int32_t nom_find(const struct sched_cluster *c, const char *ns, const char *name)
{
    uint32_t i;

    for (i = 0; i < c->nnoms; i++)
        if (!strcmp(c->noms[i]->name, name) && !strcmp(c->noms[i]->ns, ns))
            return (int32_t)i;
    return -1;
}

int sched_cluster_nominate(struct sched_cluster *c, const struct kube_pod *pod,
                           const char *node_name, struct err *err)
{
    struct sched_pod *p;
    int rc;

    if (!node_name || !*node_name) {
        sched_cluster_unnominate(c, pod->namespace_, pod->name);
        return 0;
    }
    if (!(p = pod_build(c, pod, node_name, &rc)))
        return err_set(err, rc, "cannot nominate pod %s/%s: %s", pod->namespace_, pod->name,
                       rc == -E2BIG ? "too many extended resources" : "out of memory");
    if (sched_grow((void **)&c->noms, &c->cnoms, c->nnoms + 1, sizeof(*c->noms))) {
        pod_free(p);
        return err_set(err, -ENOMEM, "cannot nominate pod %s/%s: out of memory", pod->namespace_,
                       pod->name);
    }
    sched_cluster_unnominate(c, pod->namespace_, pod->name);
    p->nominated = true;
    c->noms[c->nnoms++] = p;
    c->lite[p->slot].nnom++;
    return 0;
}

int sched_cluster_unnominate(struct sched_cluster *c, const char *namespace_, const char *name)
{
    int32_t i = nom_find(c, namespace_, name);
    struct sched_pod *p;

    if (i < 0)
        return -ENOENT;
    p = c->noms[i];
    c->lite[p->slot].nnom--;
    c->noms[i] = c->noms[--c->nnoms];
    pod_free(p);
    return 0;
}

const char *sched_cluster_nominated_node(const struct sched_cluster *c, const char *namespace_,
                                         const char *name)
{
    int32_t i = nom_find(c, namespace_, name);

    return i < 0 ? NULL : c->slots[c->noms[i]->slot].name;
}

int sched_cluster_nominated_at(const struct sched_cluster *c, size_t i,
                               struct sched_nominated_pod *out)
{
    const struct sched_pod *p;

    if (i >= c->nnoms)
        return -ENOENT;
    p = c->noms[i];
    out->namespace_ = p->ns;
    out->name = p->name;
    out->node = c->slots[p->slot].name;
    out->priority = p->priority;
    return 0;
}

size_t sched_cluster_nominated_count(const struct sched_cluster *c)
{
    return c->nnoms;
}

/* ---------------------------------------------------------------- PodDisruptionBudgets */

static int32_t pdb_find(const struct sched_cluster *c, const char *ns, const char *name)
{
    uint32_t i;

    for (i = 0; i < c->npdbs; i++)
        if (!strcmp(c->pdbs[i].name, name) && !strcmp(c->pdbs[i].ns, ns))
            return (int32_t)i;
    return -1;
}

/* pdb_copy fills d (its arena empty) with a deep copy of s; 0 or -ENOMEM */
static int pdb_copy(struct sched_pdb *d, const struct kube_pdb *s)
{
    struct arena *a = &d->arena;
    size_t i, j;

    if (!(d->ns = arena_strdup(a, s->namespace_)) || !(d->name = arena_strdup(a, s->name)))
        return -ENOMEM;
    d->disruptions_allowed = s->disruptions_allowed;
    d->selector.present = s->selector.present;
    d->selector.nreqs = s->selector.nreqs;
    if (s->selector.nreqs &&
        !(d->selector.reqs = arena_alloc(a, s->selector.nreqs * sizeof(*d->selector.reqs))))
        return -ENOMEM;
    for (i = 0; i < s->selector.nreqs; i++) {
        const struct kube_requirement *r = &s->selector.reqs[i];
        struct kube_requirement *q = &d->selector.reqs[i];
        *q = *r;
        if (!(q->key = arena_strdup(a, r->key)))
            return -ENOMEM;
        if (r->nvalues && !(q->values = arena_alloc(a, r->nvalues * sizeof(*q->values))))
            return -ENOMEM;
        for (j = 0; j < r->nvalues; j++)
            if (!(q->values[j] = arena_strdup(a, r->values[j])))
                return -ENOMEM;
    }
    d->ndisrupted_pods = s->ndisrupted_pods;
    if (s->ndisrupted_pods &&
        !(d->disrupted_pods = arena_alloc(a, s->ndisrupted_pods * sizeof(*d->disrupted_pods))))
        return -ENOMEM;
    for (i = 0; i < s->ndisrupted_pods; i++)
        if (!(d->disrupted_pods[i] = arena_strdup(a, s->disrupted_pods[i])))
            return -ENOMEM;
    return 0;
}

int sched_cluster_set_pdb(struct sched_cluster *c, const struct kube_pdb *pdb, struct err *err)
{
    struct sched_pdb n;
    int32_t i;

    memset(&n, 0, sizeof(n));
    n.arena = (struct arena)ARENA_INIT;
    if (pdb_copy(&n, pdb) ||
        ((i = pdb_find(c, pdb->namespace_, pdb->name)) < 0 &&
         sched_grow((void **)&c->pdbs, &c->cpdbs, c->npdbs + 1, sizeof(*c->pdbs)))) {
        arena_release(&n.arena);
        return err_set(err, -ENOMEM, "cannot add PodDisruptionBudget %s/%s: out of memory",
                       pdb->namespace_, pdb->name);
    }
    if (i >= 0)
        arena_release(&c->pdbs[i].arena);
    else
        i = (int32_t)c->npdbs++;
    c->pdbs[i] = n;
    c->pdbs_version++;
    return 0;
}

int sched_cluster_remove_pdb(struct sched_cluster *c, const char *namespace_, const char *name)
{
    int32_t i = pdb_find(c, namespace_, name);

    if (i < 0)
        return -ENOENT;
    arena_release(&c->pdbs[i].arena);
    c->pdbs[i] = c->pdbs[--c->npdbs];
    c->pdbs_version++;
    return 0;
}

/* ---------------------------------------------------------------- namespaces */

int sched_cluster_set_namespace(struct sched_cluster *c, const struct kube_namespace *ns,
                                struct err *err)
{
    struct sched_idlabel *l;
    uint32_t id, nl, i;

    if (!ns->name || !*ns->name)
        return err_set(err, -EINVAL, "namespace without a name");
    if ((id = sched_intern_add(&c->strs, ns->name)) == SCHED_NOID ||
        sched_intern_labels_dup(&c->strs, &ns->labels, &l, &nl))
        return err_set(err, -ENOMEM, "out of memory adding namespace %s", ns->name);
    for (i = 0; i < c->nnss && c->nss[i].name != id; i++)
        ;
    if (i == c->nnss) {
        if (c->nnss == c->cnss) {
            uint32_t cap = c->cnss ? c->cnss * 2 : 8;
            struct sched_ns *a = realloc(c->nss, cap * sizeof(*a));
            if (!a) {
                free(l);
                return err_set(err, -ENOMEM, "out of memory adding namespace %s", ns->name);
            }
            c->nss = a;
            c->cnss = cap;
        }
        c->nss[c->nnss++].labels = NULL;
    }
    free(c->nss[i].labels);
    c->nss[i].name = id;
    c->nss[i].labels = l;
    c->nss[i].nlabels = nl;
    return 0;
}

int sched_cluster_remove_namespace(struct sched_cluster *c, const char *name)
{
    uint32_t id = sched_intern_find(&c->strs, name), i;

    for (i = 0; i < c->nnss; i++)
        if (c->nss[i].name == id) {
            free(c->nss[i].labels);
            c->nss[i] = c->nss[--c->nnss];
            return 0;
        }
    return -ENOENT;
}

const struct sched_ns *sched_cluster_find_namespace(const struct sched_cluster *c, uint32_t nsid)
{
    uint32_t i;

    for (i = 0; i < c->nnss; i++)
        if (c->nss[i].name == nsid)
            return &c->nss[i];
    return NULL;
}
