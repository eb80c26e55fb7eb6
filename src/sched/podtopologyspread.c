/* podtopologyspread.c - PodTopologySpread as kube-scheduler v1.37 runs it (podtopologyspread/): the
 * DoNotSchedule constraints filter (PreFilter counts the matching pods per topology domain
 * once per cycle; Filter compares a node's domain with the smallest one), the ScheduleAnyway
 * constraints score (PreScore over the feasible nodes, NormalizeScore so fewer matching pods
 * scores higher), and the system default constraints for pods selected by a Service,
 * ReplicationController, ReplicaSet or StatefulSet. Selectors work on interned labels. */
#include "sched/podtopologyspread.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/keymap.h"
#include "kube/labels.h"
#include "sched/intern-int.h"
#include "sched/plugins-int.h"
#include "sched/sched-int.h"

#define HOSTNAME_KEY "kubernetes.io/hostname"
#define ZONE_KEY "topology.kubernetes.io/zone"

/* ---------------------------------------------------------------- sources */

enum src_kind { SRC_SERVICE, SRC_RC, SRC_CONTROLLER };

/* a Service or controller, in one allocation: the header, the requirements, their value
 * arrays, then the strings (the key first) */
struct sched_spread_src {
    uint8_t kind;    /* enum src_kind */
    uint32_t nsid;   /* a Service's namespace, interned */
    uint32_t at;     /* a Service's index in svc */
    const char *key; /* "KIND/NS/NAME", "/NS/NAME" for a Service */
    struct kube_label_selector sel;
};

/* a topology column: the value id of one label key on every node slot (SCHED_NOID: the node
 * lacks the key), rebuilt when the nodes change */
#define SPREAD_COLS 8
struct topo_col {
    uint32_t key;
    uint32_t *val;
    uint32_t nslots;
    uint64_t version;
    uint64_t last_use;
};

/* The matching pods of every node slot for one (namespace, selector), kept as pods come and
 * go (the cluster's spread_pod_hook), so that a cycle does not count every pod of the
 * cluster: countPodsMatchSelector per node, counted the first time the selector is seen from
 * the pods carrying the label of its first In requirement (sched_ipa_label_pods), or from
 * every pod when it has none. The least recently used is dropped beyond SPREAD_COUNTERS,
 * never one the current cycle uses. */
#define SPREAD_COUNTERS 256
struct slot_counter {
    bool used;
    uint32_t ns;
    struct sreq *reqs; /* one malloc'ed block with the values */
    uint32_t nreqs;
    int32_t *cnt; /* by slot */
    uint32_t ncnt;
    uint64_t last_use, cycle;
};

struct sched_spread_sources {
    struct sched_spread_src **svc; /* the Services (DefaultSelector lists them per cycle) */
    uint32_t nsvc, csvc;
    struct keymap by_key; /* key -> every Service and controller */
    struct topo_col cols[SPREAD_COLS];
    uint64_t clock;
    struct slot_counter ctrs[SPREAD_COUNTERS];
    uint64_t cycle; /* sched_spread_prefilter calls */
};

static void counter_drop(struct slot_counter *k)
{
    free(k->reqs);
    free(k->cnt);
    memset(k, 0, sizeof(*k));
}

void sched_spread_sources_free(struct sched_spread_sources *s)
{
    size_t i;

    if (!s)
        return;
    for (i = 0; i < SPREAD_COLS; i++)
        free(s->cols[i].val);
    for (i = 0; i < SPREAD_COUNTERS; i++)
        counter_drop(&s->ctrs[i]);
    for (i = 0; i < s->by_key.cap; i++)
        if (s->by_key.slots[i].key)
            free(s->by_key.slots[i].value);
    keymap_release(&s->by_key);
    free(s->svc);
    free(s);
}

/* src_key writes "KIND/NS/NAME" into buf; NULL when it does not fit (no such object) */
static const char *src_key(char *buf, size_t size, const char *owner_kind, const char *ns,
                           const char *name)
{
    int n = snprintf(buf, size, "%s/%s/%s", owner_kind ? owner_kind : "", ns, name ? name : "");

    return n < 0 || (size_t)n >= size ? NULL : buf;
}

/* put_str copies s with its NUL to *p (room made by the caller) and moves *p past it */
static char *put_str(char **p, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = memcpy(*p, s, n);

    *p += n;
    return d;
}

/* src_new copies the key and selector into one allocation; NULL on ENOMEM */
static struct sched_spread_src *src_new(const char *key, const struct kube_label_selector *sel)
{
    size_t nreqs = sel && sel->present ? sel->nreqs : 0, nvals = 0, strs = strlen(key) + 1, i, j;
    struct sched_spread_src *e;
    const char **vals;
    char *p;

    for (i = 0; i < nreqs; i++) {
        strs += strlen(sel->reqs[i].key) + 1;
        nvals += sel->reqs[i].nvalues;
        for (j = 0; j < sel->reqs[i].nvalues; j++)
            strs += strlen(sel->reqs[i].values[j]) + 1;
    }
    e = malloc(sizeof(*e) + nreqs * sizeof(*e->sel.reqs) + nvals * sizeof(*vals) + strs);
    if (!e)
        return NULL;
    memset(e, 0, sizeof(*e));
    e->sel.reqs = (struct kube_requirement *)(e + 1);
    vals = (const char **)(e->sel.reqs + nreqs);
    p = (char *)(vals + nvals);
    e->key = put_str(&p, key);
    e->sel.present = sel && sel->present;
    e->sel.nreqs = nreqs;
    for (i = 0; i < nreqs; i++) {
        struct kube_requirement *r = &e->sel.reqs[i];
        *r = sel->reqs[i];
        r->key = put_str(&p, sel->reqs[i].key);
        r->values = vals;
        for (j = 0; j < r->nvalues; j++) {
            vals[j] = put_str(&p, sel->reqs[i].values[j]);
        }
        vals += r->nvalues;
    }
    if (!nreqs)
        e->sel.reqs = NULL;
    return e;
}

/* src_unlink takes a Service out of svc (the last one moves into its place) */
static void src_unlink(struct sched_spread_sources *s, struct sched_spread_src *e)
{
    if (e->kind != SRC_SERVICE)
        return;
    s->svc[e->at] = s->svc[--s->nsvc];
    s->svc[e->at]->at = e->at;
}

int sched_cluster_add_spread_source(struct sched_cluster *c, const char *owner_kind, const char *ns,
                                    const char *name, const struct kube_label_selector *sel,
                                    struct err *err)
{
    struct sched_spread_sources *s = c->spread_src;
    struct sched_spread_src *e, *old;
    char kb[1024];
    const char *key = src_key(kb, sizeof(kb), owner_kind, ns, name);

    if (!key)
        return err_set(err, -EINVAL, "%s %s/%s: name too long", owner_kind ? owner_kind : "Service",
                       ns, name ? name : "");
    if (!s && !(s = c->spread_src = calloc(1, sizeof(*s))))
        goto nomem;
    c->spread_src_free = sched_spread_sources_free;
    if (!(e = src_new(key, sel)))
        goto nomem;
    e->kind = !owner_kind                                    ? SRC_SERVICE
              : !strcmp(owner_kind, "ReplicationController") ? SRC_RC
                                                             : SRC_CONTROLLER;
    if (e->kind == SRC_SERVICE) {
        if ((e->nsid = sched_intern_add(&c->strs, ns)) == SCHED_NOID)
            goto nomem_e;
        if (s->nsvc == s->csvc) {
            uint32_t cap = s->csvc ? s->csvc * 2 : 16;
            void *v = realloc(s->svc, cap * sizeof(*s->svc));
            if (!v)
                goto nomem_e;
            s->svc = v;
            s->csvc = cap;
        }
    }
    if (keymap_put(&s->by_key, e->key, e, (void **)&old))
        goto nomem_e;
    if (old) {
        src_unlink(s, old);
        free(old);
    }
    if (e->kind == SRC_SERVICE) {
        e->at = s->nsvc;
        s->svc[s->nsvc++] = e;
    }
    return 0;
nomem_e:
    free(e);
nomem:
    return err_set(err, -ENOMEM, "out of memory");
}

int sched_cluster_remove_spread_source(struct sched_cluster *c, const char *owner_kind,
                                       const char *ns, const char *name)
{
    struct sched_spread_sources *s = c->spread_src;
    struct sched_spread_src *e;
    char kb[1024];
    const char *key = src_key(kb, sizeof(kb), owner_kind, ns, name);

    if (!s || !key || !(e = keymap_del(&s->by_key, key)))
        return -ENOENT;
    src_unlink(s, e);
    free(e);
    return 0;
}

/* ---------------------------------------------------------------- selectors */

/* one requirement of a label selector, on interned ids */
struct sreq {
    uint32_t key;
    uint8_t op; /* KUBE_OP_IN, NOT_IN, EXISTS, DOES_NOT_EXIST */
    bool invalid;
    uint32_t *vals;
    uint32_t nvals;
};

/* a labels.Selector: nothing (a nil LabelSelector), or every requirement (none: everything) */
struct ssel {
    bool nothing;
    struct sreq *reqs;
    uint32_t n, cap;
};

static int ssel_add(struct sched_cluster *c, struct arena *a, struct ssel *s,
                    const struct kube_requirement *r)
{
    struct sreq *q;
    size_t j;

    if (s->n == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 4;
        struct sreq *v = arena_alloc(a, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        if (s->n)
            memcpy(v, s->reqs, s->n * sizeof(*v));
        s->reqs = v;
        s->cap = cap;
    }
    q = &s->reqs[s->n];
    memset(q, 0, sizeof(*q));
    q->op = (uint8_t)(r->op == KUBE_OP_EQUALS || r->op == KUBE_OP_DOUBLE_EQUALS ? KUBE_OP_IN
                      : r->op == KUBE_OP_NOT_EQUALS                             ? KUBE_OP_NOT_IN
                                                                                : r->op);
    q->invalid = r->invalid || q->op > KUBE_OP_DOES_NOT_EXIST;
    if ((q->key = sched_intern_add(&c->strs, r->key)) == SCHED_NOID)
        return -ENOMEM;
    if (r->nvalues && !(q->vals = arena_alloc(a, r->nvalues * sizeof(*q->vals))))
        return -ENOMEM;
    for (j = 0; j < r->nvalues; j++)
        if ((q->vals[j] = sched_intern_add(&c->strs, r->values[j])) == SCHED_NOID)
            return -ENOMEM;
    q->nvals = (uint32_t)r->nvalues;
    s->n++;
    return 0;
}

static bool sreq_matches(const struct sreq *q, const struct sched_idlabel *l, uint32_t n)
{
    const struct sched_idlabel *x = sched_label_find(l, n, q->key);
    uint32_t i;
    bool in = false;

    if (q->invalid)
        return false;
    if (x)
        for (i = 0; i < q->nvals && !in; i++)
            in = q->vals[i] == x->value;
    switch (q->op) {
    case KUBE_OP_IN:
        return x && in;
    case KUBE_OP_NOT_IN:
        return !x || !in;
    case KUBE_OP_EXISTS:
        return x != NULL;
    case KUBE_OP_DOES_NOT_EXIST:
        return x == NULL;
    }
    return false;
}

static bool ssel_matches(const struct ssel *s, const struct sched_idlabel *l, uint32_t n)
{
    uint32_t i;

    if (s->nothing)
        return false;
    for (i = 0; i < s->n; i++)
        if (!sreq_matches(&s->reqs[i], l, n))
            return false;
    return true;
}

/* ---------------------------------------------------------------- constraints */

struct dom {
    uint32_t value; /* interned topology value */
    int64_t count;
};

struct sc {
    uint32_t key;
    bool hostname;
    bool hard;
    bool aff_honor, taints_honor;
    int32_t max_skew, min_domains;
    struct ssel sel;
    bool self_match;
    /* matching pods per domain (PreFilter; PreScore for non-hostname keys), found through an
     * open-addressing table of domain index + 1 by topology value */
    struct dom *doms;
    uint32_t ndoms;
    uint32_t *dom_tab;
    uint32_t dom_mask;
    /* the matching pods of each node slot, counted once per cycle (shared by constraints
     * with the same selector, as the two system defaults are) */
    const int32_t *slot_count;
    const uint32_t *col; /* the topology key's value on every slot (topo_column) */
    int64_t min;         /* smallest count (PreFilter) */
    double weight;       /* PreScore: log(domains + 2) */
};

struct sched_spread {
    struct sc *v;
    uint32_t n, nhard, nsoft;
    bool system_default; /* the constraints are the system defaults (requireAllTopologies off) */
    uint32_t ns;
};

/* countPodsMatchSelector: the node's pods of namespace ns, not terminating, that the selector
 * matches; an empty selector counts none */
static int64_t count_pods(const struct ssel *s, uint32_t ns, struct sched_pod *const *pods,
                          uint32_t npods)
{
    int64_t n = 0;
    uint32_t i;

    if (s->nothing || !s->n)
        return 0; /* (a nil selector matches no pod) */
    for (i = 0; i < npods; i++) {
        const struct sched_pod *p = pods[i];
        if (p->terminating || p->nsid != ns)
            continue;
        if (ssel_matches(s, p->labels, p->nlabels))
            n++;
    }
    return n;
}

static const struct sched_idlabel *node_label(const struct sched_cluster *c, uint32_t slot,
                                              uint32_t key)
{
    const struct sched_slot *s = &c->slots[slot];

    return sched_label_find(s->labels, s->nlabels, key);
}

/* nodeLabelsMatchSpreadConstraints over the hard (hard) or soft constraints; ref reads the
 * labels instead of the columns */
static bool has_all_keys_at(const struct sched_cluster *c, const struct sched_spread *sp,
                            uint32_t slot, bool hard, bool ref)
{
    uint32_t i;

    for (i = 0; i < sp->n; i++)
        if (sp->v[i].hard == hard &&
            (ref ? !node_label(c, slot, sp->v[i].key) : sp->v[i].col[slot] == SCHED_NOID))
            return false;
    return true;
}

static bool has_all_keys(const struct sched_cluster *c, const struct sched_spread *sp,
                         uint32_t slot, bool hard)
{
    return has_all_keys_at(c, sp, slot, hard, false);
}

/* topo_column returns the column of key, (re)built when the nodes changed; NULL on ENOMEM */
static const uint32_t *topo_column(struct sched_cluster *c, uint32_t key)
{
    struct sched_spread_sources *s = c->spread_src;
    struct topo_col *t = NULL;
    uint32_t i, oi;

    if (!s && !(s = c->spread_src = calloc(1, sizeof(*s))))
        return NULL;
    c->spread_src_free = sched_spread_sources_free;
    for (i = 0; i < SPREAD_COLS; i++) {
        if (s->cols[i].val && s->cols[i].key == key) {
            t = &s->cols[i];
            break;
        }
        if (!t || (t->val && (!s->cols[i].val || s->cols[i].last_use < t->last_use)))
            t = &s->cols[i];
    }
    t->last_use = ++s->clock;
    if (t->val && t->key == key && t->version == c->nodes_version && t->nslots >= c->nslots)
        return t->val;
    free(t->val);
    if (!(t->val = malloc((c->nslots + 1) * sizeof(*t->val))))
        return NULL;
    t->key = key;
    t->nslots = c->nslots;
    t->version = c->nodes_version;
    for (i = 0; i < c->nslots; i++)
        t->val[i] = SCHED_NOID;
    for (oi = 0; oi < c->norder; oi++) {
        const struct sched_idlabel *l = node_label(c, c->order[oi], key);
        if (l)
            t->val[c->order[oi]] = l->value;
    }
    return t->val;
}

static bool policies_ok(const struct sched_cluster *c, const struct sched_cpod *cp,
                        const struct sc *k, uint32_t slot)
{
    if (k->aff_honor && !sched_nodeaffinity_filter_node(c, cp, slot))
        return false;
    if (k->taints_honor && !sched_tainttoleration_filter_node(c, cp, slot))
        return false;
    return true;
}

static uint32_t dom_hash(uint32_t v)
{
    return v * 2654435761u;
}

static struct dom *dom_find(const struct sc *k, uint32_t value)
{
    uint32_t h;

    if (!k->dom_tab)
        return NULL;
    for (h = dom_hash(value) & k->dom_mask; k->dom_tab[h]; h = (h + 1) & k->dom_mask)
        if (k->doms[k->dom_tab[h] - 1].value == value)
            return &k->doms[k->dom_tab[h] - 1];
    return NULL;
}

/* doms_build merges the n (value, count) pairs of d, in place, into k's domains */
static int doms_build(struct arena *a, struct sc *k, struct dom *d, uint32_t n)
{
    uint32_t i, m = 0, cap = 16;

    while (cap < 2 * n)
        cap *= 2;
    if (!(k->dom_tab = arena_alloc(a, cap * sizeof(*k->dom_tab))))
        return -ENOMEM;
    k->dom_mask = cap - 1;
    k->doms = d;
    for (i = 0; i < n; i++) {
        uint32_t h = dom_hash(d[i].value) & k->dom_mask;
        while (k->dom_tab[h] && d[k->dom_tab[h] - 1].value != d[i].value)
            h = (h + 1) & k->dom_mask;
        if (k->dom_tab[h]) {
            d[k->dom_tab[h] - 1].count += d[i].count;
        } else {
            d[m] = d[i];
            k->dom_tab[h] = ++m;
        }
    }
    k->ndoms = m;
    return 0;
}

/* ---------------------------------------------------------------- counts per node slot */

static bool counter_matches(const struct slot_counter *k, const struct sched_pod *p)
{
    struct ssel sel = {false, k->reqs, k->nreqs, k->nreqs};

    return !p->terminating && p->nsid == k->ns && ssel_matches(&sel, p->labels, p->nlabels);
}

/* counter_cover makes k's counts cover n slots (the new ones 0); 0 or -ENOMEM */
static int counter_cover(struct slot_counter *k, uint32_t n)
{
    int32_t *v;

    if (n <= k->ncnt)
        return 0;
    if (!(v = realloc(k->cnt, n * sizeof(*v))))
        return -ENOMEM;
    memset(v + k->ncnt, 0, (n - k->ncnt) * sizeof(*v));
    k->cnt = v;
    k->ncnt = n;
    return 0;
}

/* the cluster's hook: pod p joins (+1) or leaves (-1) its slot, or stops counting
 * (terminating) */
static void pod_hook(struct sched_cluster *c, const struct sched_pod *p, int sign)
{
    struct sched_spread_sources *s = c->spread_src;
    uint32_t i;

    for (i = 0; s && i < SPREAD_COUNTERS; i++) {
        struct slot_counter *k = &s->ctrs[i];
        if (!k->used || !counter_matches(k, p))
            continue;
        if (counter_cover(k, (p->slot < c->nslots ? c->nslots : p->slot + 1))) {
            counter_drop(k); /* counted again from the pods when next needed */
            continue;
        }
        k->cnt[p->slot] += sign;
    }
}

static bool reqs_equal(const struct sreq *a, const struct sreq *b, uint32_t n)
{
    uint32_t i;

    for (i = 0; i < n; i++)
        if (a[i].key != b[i].key || a[i].op != b[i].op || a[i].invalid != b[i].invalid ||
            a[i].nvals != b[i].nvals ||
            (a[i].nvals && memcmp(a[i].vals, b[i].vals, a[i].nvals * sizeof(uint32_t))))
            return false;
    return true;
}

/* slot_counter_get returns the counts by slot of the pods of namespace ns that sel (with
 * requirements) matches, covering every slot; NULL when out of memory or when every counter
 * is in use by this cycle */
static const int32_t *slot_counter_get(struct sched_cluster *c, const struct ssel *sel, uint32_t ns)
{
    struct sched_spread_sources *s = c->spread_src;
    struct slot_counter *k = NULL, *free_k = NULL;
    uint32_t i, j;
    size_t size;
    char *b;

    if (!s)
        return NULL;
    for (i = 0; i < SPREAD_COUNTERS; i++) {
        struct slot_counter *e = &s->ctrs[i];
        if (e->used && e->ns == ns && e->nreqs == sel->n &&
            reqs_equal(e->reqs, sel->reqs, sel->n)) {
            k = e;
            break;
        }
        if (!e->used) {
            if (!free_k || free_k->used)
                free_k = e;
        } else if (e->cycle != s->cycle &&
                   (!free_k || (free_k->used && e->last_use < free_k->last_use))) {
            free_k = e;
        }
    }
    if (!k) {
        if (!(k = free_k))
            return NULL;
        counter_drop(k);
        size = sel->n * sizeof(*k->reqs);
        for (i = 0; i < sel->n; i++)
            size += sel->reqs[i].nvals * sizeof(uint32_t);
        if (!(b = malloc(size + 1)))
            return NULL;
        k->reqs = (struct sreq *)b;
        b += sel->n * sizeof(*k->reqs);
        for (i = 0; i < sel->n; i++) {
            k->reqs[i] = sel->reqs[i];
            k->reqs[i].vals = (uint32_t *)b;
            memcpy(b, sel->reqs[i].vals, sel->reqs[i].nvals * sizeof(uint32_t));
            b += sel->reqs[i].nvals * sizeof(uint32_t);
        }
        k->nreqs = sel->n;
        k->ns = ns;
        k->used = true;
        if (counter_cover(k, c->nslots + 1)) {
            counter_drop(k);
            return NULL;
        }
        /* the first count: the pods carrying the first In requirement's label, or every pod */
        for (i = 0; i < sel->n && (sel->reqs[i].op != KUBE_OP_IN || !sel->reqs[i].nvals); i++)
            ;
        if (i < sel->n) {
            const struct sreq *r = &sel->reqs[i];
            for (j = 0; j < r->nvals; j++) {
                struct sched_pod *const *pods;
                uint32_t np, m;
                if (sched_ipa_label_pods(c, r->key, r->vals[j], &pods, &np)) {
                    counter_drop(k);
                    return NULL;
                }
                for (m = 0; m < np; m++)
                    k->cnt[pods[m]->slot] += counter_matches(k, pods[m]);
            }
        } else {
            for (i = 0; i < c->nslots; i++)
                for (j = 0; j < c->slots[i].npods; j++)
                    k->cnt[i] += counter_matches(k, c->slots[i].pods[j]);
        }
        c->spread_pod_hook = pod_hook;
    }
    if (counter_cover(k, c->nslots + 1)) {
        counter_drop(k);
        return NULL;
    }
    k->last_use = ++s->clock;
    k->cycle = s->cycle;
    return k->cnt;
}

/* slot_counts fills sp->v[i].slot_count: the matching pods of every present node, from the
 * counts the cluster keeps or, on the reference path, by looking at every pod */
static int slot_counts(struct sched_cluster *c, const struct sched_cpod *cp,
                       struct sched_spread *sp, uint32_t i)
{
    struct sc *q = &sp->v[i];
    uint32_t j, oi;
    int32_t *counts;

    if (q->slot_count)
        return 0;
    for (j = 0; j < sp->n; j++) {
        const struct sc *o = &sp->v[j];
        if (j != i && o->slot_count && o->sel.nothing == q->sel.nothing && o->sel.n == q->sel.n &&
            o->sel.reqs == q->sel.reqs) {
            q->slot_count = o->slot_count;
            return 0;
        }
    }
    if (!cp->ref && !q->sel.nothing && q->sel.n &&
        (q->slot_count = slot_counter_get(c, &q->sel, sp->ns)))
        return 0;
    if (!(counts = arena_alloc(cp->arena, (c->nslots + 1) * sizeof(*counts))))
        return -ENOMEM;
    for (oi = 0; oi < c->norder; oi++) {
        const struct sched_slot *s = &c->slots[c->order[oi]];
        counts[c->order[oi]] = (int32_t)count_pods(&q->sel, sp->ns, s->pods, s->npods);
    }
    q->slot_count = counts;
    return 0;
}

static int add_constraint(struct sched_cluster *c, struct sched_cpod *cp, struct sched_spread *sp,
                          const struct kube_spread_constraint *t, const struct ssel *base)
{
    const struct kube_pod *pod = cp->src;
    struct sc *k = &sp->v[sp->n];
    size_t i;
    int rc;

    memset(k, 0, sizeof(*k));
    if ((k->key = sched_intern_add(&c->strs, t->topology_key)) == SCHED_NOID)
        return -ENOMEM;
    k->hostname = !strcmp(t->topology_key, HOSTNAME_KEY);
    k->hard = t->when_unsatisfiable == KUBE_SPREAD_DO_NOT_SCHEDULE;
    k->aff_honor = !t->affinity_ignore;
    k->taints_honor = t->taints_honor;
    k->max_skew = t->max_skew;
    k->min_domains = t->min_domains > 0 ? t->min_domains : 1;
    if (base) {
        k->sel = *base;
    } else {
        k->sel.nothing = !t->selector.present;
        for (i = 0; !k->sel.nothing && i < t->selector.nreqs; i++)
            if ((rc = ssel_add(c, cp->arena, &k->sel, &t->selector.reqs[i])))
                return rc;
        /* matchLabelKeys: the pod's values of those keys join the selector (not a nil one) */
        for (i = 0; !k->sel.nothing && i < t->nmatch_label_keys; i++) {
            const char *v = kube_labels_get(&pod->labels, t->match_label_keys[i]);
            struct kube_requirement r = {t->match_label_keys[i], KUBE_OP_IN, &v, 1, false};
            if (v && (rc = ssel_add(c, cp->arena, &k->sel, &r)))
                return rc;
        }
    }
    sp->n++;
    if (k->hard)
        sp->nhard++;
    else
        sp->nsoft++;
    return 0;
}

/* owner_source: the ReplicationController, ReplicaSet or StatefulSet that controls the pod
 * (its ownerReference with controller true), when recorded; for a pod from the API the
 * reference's apiVersion must be the kind's (v1, apps/v1), as DefaultSelector compares
 * group, version and kind */
static const struct sched_spread_src *owner_source(const struct sched_spread_sources *s,
                                                   const struct kube_pod *pod)
{
    const struct kube_owner *o = &pod->owner;
    char kb[1024];
    const char *key;

    if (!o->kind || !o->name)
        return NULL;
    if (o->api_version &&
        strcmp(o->api_version, !strcmp(o->kind, "ReplicationController") ? "v1" : "apps/v1"))
        return NULL;
    if (!(key = src_key(kb, sizeof(kb), o->kind, pod->namespace_, o->name)))
        return NULL;
    return keymap_get(&s->by_key, key);
}

static bool sel_has_key(const struct kube_label_selector *sel, const char *key)
{
    size_t i;

    for (i = 0; i < sel->nreqs; i++)
        if (!strcmp(sel->reqs[i].key, key))
            return true;
    return false;
}

/* default_selector: helper.DefaultSelector for a pod of namespace nsid; *empty when nothing
 * selects the pod. The Services' selectors are merged as a label set, a
 * ReplicationController's selector overriding a value of the same key (labels.Merge); a
 * ReplicaSet's or StatefulSet's requirements are added to them. */
static int default_selector(struct sched_cluster *c, struct sched_cpod *cp, uint32_t nsid,
                            struct ssel *out)
{
    const struct sched_spread_sources *s = c->spread_src;
    const struct kube_pod *pod = cp->src;
    const struct sched_spread_src *own;
    const struct kube_label_selector *rc_sel;
    uint32_t i;
    size_t j;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!s)
        return 0;
    own = owner_source(s, pod);
    if (own && !own->sel.present)
        own = NULL;
    rc_sel = own && own->kind == SRC_RC ? &own->sel : NULL;
    for (i = 0; i < s->nsvc; i++) {
        const struct sched_spread_src *e = s->svc[i];
        if (e->nsid != nsid || !e->sel.present || !e->sel.nreqs ||
            !kube_label_selector_matches(&e->sel, &pod->labels))
            continue;
        for (j = 0; j < e->sel.nreqs; j++)
            if ((!rc_sel || !sel_has_key(rc_sel, e->sel.reqs[j].key)) &&
                (rc = ssel_add(c, cp->arena, out, &e->sel.reqs[j])))
                return rc;
    }
    for (j = 0; own && j < own->sel.nreqs; j++)
        if ((rc = ssel_add(c, cp->arena, out, &own->sel.reqs[j])))
            return rc;
    return 0;
}

int sched_spread_prefilter(struct sched_cluster *c, struct sched_cpod *cp)
{
    static const struct kube_spread_constraint defaults[2] = {
        {3, HOSTNAME_KEY, KUBE_SPREAD_SCHEDULE_ANYWAY, {false, NULL, 0}, 1, false, false, NULL, 0},
        {5, ZONE_KEY, KUBE_SPREAD_SCHEDULE_ANYWAY, {false, NULL, 0}, 1, false, false, NULL, 0},
    };
    const struct kube_pod *pod = cp->src;
    struct sched_spread *sp;
    struct ssel dsel;
    struct dom *d;
    uint32_t i, k, oi, nd;
    int rc;

    cp->spread = NULL;
    if (!pod)
        return 0;
    if (!(sp = arena_alloc(cp->arena, sizeof(*sp))))
        return -ENOMEM;
    if ((sp->ns = sched_intern_add(&c->strs, pod->namespace_)) == SCHED_NOID)
        return -ENOMEM;
    if (kube_pod_ext(pod)->nspread) {
        if (!(sp->v = arena_alloc(cp->arena, kube_pod_ext(pod)->nspread * sizeof(*sp->v))))
            return -ENOMEM;
        for (i = 0; i < kube_pod_ext(pod)->nspread; i++)
            if ((rc = add_constraint(c, cp, sp, &kube_pod_ext(pod)->spread[i], NULL)))
                return rc;
    } else {
        if ((rc = default_selector(c, cp, sp->ns, &dsel)))
            return rc;
        if (!dsel.n)
            return 0;
        if (!(sp->v = arena_alloc(cp->arena, 2 * sizeof(*sp->v))))
            return -ENOMEM;
        sp->system_default = true;
        for (i = 0; i < 2; i++)
            if ((rc = add_constraint(c, cp, sp, &defaults[i], &dsel)))
                return rc;
    }
    if (!sp->n)
        return 0;
    for (i = 0; i < sp->n; i++)
        if (!(sp->v[i].col = topo_column(c, sp->v[i].key)))
            return -ENOMEM;
    cp->spread = sp;
    c->spread_src->cycle++; /* (the counters this cycle reads stay) */
    /* selfMatch needs the pod's labels interned */
    {
        struct sched_idlabel *pl = NULL;
        uint32_t npl = (uint32_t)pod->labels.n;
        if (npl && !(pl = arena_alloc(cp->arena, npl * sizeof(*pl))))
            return -ENOMEM;
        for (i = 0; i < npl; i++) {
            pl[i].key = sched_intern_add(&c->strs, pod->labels.v[i].key);
            pl[i].value = sched_intern_add(&c->strs, pod->labels.v[i].value);
            if (pl[i].key == SCHED_NOID || pl[i].value == SCHED_NOID)
                return -ENOMEM;
        }
        /* sort by key id (insertion: few labels) */
        for (i = 1; i < npl; i++)
            for (k = i; k > 0 && pl[k - 1].key > pl[k].key; k--) {
                struct sched_idlabel t = pl[k];
                pl[k] = pl[k - 1];
                pl[k - 1] = t;
            }
        for (i = 0; i < sp->n; i++)
            sp->v[i].self_match = ssel_matches(&sp->v[i].sel, pl, npl);
    }
    if (!sp->nhard)
        return 0;
    /* PreFilter: per hard constraint, the matching pods per domain over the nodes that have
     * every hard constraint's key and pass its inclusion policies */
    for (i = 0; i < sp->n; i++) {
        struct sc *q = &sp->v[i];
        if (!q->hard)
            continue;
        if (!(d = arena_alloc(cp->arena, (c->norder + 1) * sizeof(*d))) ||
            slot_counts(c, cp, sp, i))
            return -ENOMEM;
        nd = 0;
        for (oi = 0; oi < c->norder; oi++) {
            uint32_t slot = c->order[oi];
            if (!has_all_keys(c, sp, slot, true) || !policies_ok(c, cp, q, slot))
                continue;
            d[nd].value = q->col[slot];
            d[nd++].count = q->slot_count[slot];
        }
        if (doms_build(cp->arena, q, d, nd))
            return -ENOMEM;
        q->min = INT64_MAX;
        for (k = 0; k < q->ndoms; k++)
            if (q->doms[k].count < q->min)
                q->min = q->doms[k].count;
    }
    return 0;
}

/* the reference path's count of one domain, from scratch */
static int64_t ref_count(const struct sched_cluster *c, const struct sched_cpod *cp,
                         const struct sched_spread *sp, const struct sc *q, uint32_t value,
                         bool *exists)
{
    int64_t n = 0;
    uint32_t oi;

    *exists = false;
    for (oi = 0; oi < c->norder; oi++) {
        uint32_t slot = c->order[oi];
        const struct sched_slot *s = &c->slots[slot];
        const struct sched_idlabel *l = node_label(c, slot, q->key);
        if (!l || l->value != value || !has_all_keys_at(c, sp, slot, true, true) ||
            !policies_ok(c, cp, q, slot))
            continue;
        *exists = true;
        n += count_pods(&q->sel, sp->ns, s->pods, s->npods);
    }
    return n;
}

static int64_t min_match(const struct sc *q, int64_t min)
{
    return (int64_t)q->ndoms < q->min_domains ? 0 : min;
}

uint32_t sched_spread_filter(const struct sched_cluster *c, const struct sched_cpod *cp,
                             uint32_t slot, bool ref, bool *unresolvable)
{
    const struct sched_spread *sp = cp->spread;
    uint32_t i;

    *unresolvable = false;
    if (!sp || !sp->nhard)
        return 0;
    for (i = 0; i < sp->n; i++) {
        const struct sc *q = &sp->v[i];
        const struct sched_idlabel *l = NULL;
        uint32_t value;
        int64_t count = 0, min = q->min;
        if (!q->hard)
            continue;
        if (ref ? !(l = node_label(c, slot, q->key)) : q->col[slot] == SCHED_NOID) {
            *unresolvable = true;
            return SCHED_R_SPREAD_LABEL;
        }
        value = ref ? l->value : q->col[slot];
        if (ref) {
            /* from scratch: every eligible node's domain, its count, the minimum */
            uint32_t oi, ndom = 0;
            bool ex;
            min = INT64_MAX;
            for (oi = 0; oi < c->norder; oi++) {
                uint32_t s2 = c->order[oi], oj;
                const struct sched_idlabel *l2 = node_label(c, s2, q->key);
                int64_t n;
                if (!l2 || !has_all_keys_at(c, sp, s2, true, true) || !policies_ok(c, cp, q, s2))
                    continue;
                for (oj = 0; oj < oi; oj++) { /* first eligible node of its domain only */
                    const struct sched_idlabel *l3 = node_label(c, c->order[oj], q->key);
                    if (l3 && l3->value == l2->value &&
                        has_all_keys_at(c, sp, c->order[oj], true, true) &&
                        policies_ok(c, cp, q, c->order[oj]))
                        break;
                }
                if (oj < oi)
                    continue;
                ndom++;
                n = ref_count(c, cp, sp, q, l2->value, &ex);
                if (n < min)
                    min = n;
            }
            count = ref_count(c, cp, sp, q, value, &ex);
            if ((int64_t)ndom < q->min_domains)
                min = 0;
        } else {
            const struct dom *dm = dom_find(q, value);
            count = dm ? dm->count : 0;
        }
        if (!ref)
            min = min_match(q, min);
        if (count + q->self_match - min > q->max_skew)
            return SCHED_R_SPREAD;
    }
    return 0;
}

bool sched_spread_filter_dry(const struct sched_cluster *c, const struct sched_cpod *cp,
                             uint32_t slot, struct sched_pod *const *on, uint32_t non,
                             uint32_t *reason)
{
    const struct sched_spread *sp = cp->spread;
    uint32_t i, k;

    if (!sp || !sp->nhard)
        return true;
    for (i = 0; i < sp->n; i++) {
        const struct sc *q = &sp->v[i];
        uint32_t value = q->col[slot];
        int64_t count, min = INT64_MAX, delta = 0;
        if (!q->hard)
            continue;
        if (value == SCHED_NOID) {
            *reason = SCHED_R_SPREAD_LABEL;
            return false;
        }
        *reason = SCHED_R_SPREAD;
        /* RemovePod: the pods gone from this node leave its domain when the node counts */
        if (has_all_keys(c, sp, slot, true) && policies_ok(c, cp, q, slot))
            delta = count_pods(&q->sel, sp->ns, on, non) - q->slot_count[slot];
        for (k = 0; k < q->ndoms; k++) {
            int64_t n = q->doms[k].count + (q->doms[k].value == value ? delta : 0);
            if (n < min)
                min = n;
        }
        {
            const struct dom *dm = dom_find(q, value);
            count = (dm ? dm->count : 0) + (dm ? delta : 0);
        }
        if (count + q->self_match - min_match(q, min) > q->max_skew)
            return false;
    }
    return true;
}

bool sched_spread_scores(struct sched_cluster *c, const struct sched_cpod *cp, const uint32_t *feas,
                         uint32_t nfeas, int32_t *raw, int32_t *norm)
{
    struct sched_spread *sp = cp->spread;
    bool require_all;
    uint32_t i, k, oi, nignored = 0;
    uint8_t *ignored;
    int64_t minv = INT64_MAX, maxv = 0;
    struct dom *d;

    memset(raw, 0, nfeas * sizeof(*raw));
    memset(norm, 0, nfeas * sizeof(*norm));
    if (!sp || !sp->nsoft || !c->norder || !nfeas)
        return false;
    require_all = !sp->system_default;
    if (!(ignored = arena_alloc(cp->arena, nfeas)))
        return false;
    for (i = 0; i < nfeas; i++)
        if (require_all && !has_all_keys(c, sp, c->order[feas[i]], false)) {
            ignored[i] = 1;
            nignored++;
        }
    for (k = 0; k < sp->n; k++) {
        struct sc *q = &sp->v[k];
        uint32_t nd = 0;
        if (q->hard)
            continue;
        if (q->hostname) {
            q->weight = log((double)(nfeas - nignored) + 2);
            if (slot_counts(c, cp, sp, k))
                return false;
            continue;
        }
        if (slot_counts(c, cp, sp, k))
            return false;
        /* the domains of the feasible nodes (a node without the key counts as value "") */
        if (!(d = arena_alloc(cp->arena, nfeas * sizeof(*d))))
            return false;
        for (i = 0; i < nfeas; i++) {
            uint32_t v;
            if (ignored[i])
                continue;
            v = q->col[c->order[feas[i]]];
            d[nd].value = v != SCHED_NOID ? v : c->id_empty;
            d[nd++].count = 0;
        }
        if (doms_build(cp->arena, q, d, nd))
            return false;
        q->weight = log((double)q->ndoms + 2);
        /* every node's matching pods join its domain, when the domain is one of those */
        for (oi = 0; oi < c->norder; oi++) {
            uint32_t slot = c->order[oi], v;
            struct dom *dm;
            if (!q->slot_count[slot])
                continue; /* adds nothing */
            if (require_all && !has_all_keys(c, sp, slot, false))
                continue;
            if (!policies_ok(c, cp, q, slot))
                continue;
            v = q->col[slot];
            if (!(dm = dom_find(q, v != SCHED_NOID ? v : c->id_empty)))
                continue;
            dm->count += q->slot_count[slot];
        }
    }
    for (i = 0; i < nfeas; i++) {
        uint32_t slot = c->order[feas[i]];
        double score = 0;
        if (ignored[i])
            continue;
        for (k = 0; k < sp->n; k++) {
            const struct sc *q = &sp->v[k];
            int64_t cnt;
            if (q->hard || q->col[slot] == SCHED_NOID)
                continue;
            if (q->hostname) {
                cnt = q->slot_count[slot];
            } else {
                const struct dom *dm = dom_find(q, q->col[slot]);
                cnt = dm ? dm->count : 0;
            }
            score += (double)cnt * q->weight + (double)(q->max_skew - 1);
        }
        raw[i] = (int32_t)(score + 0.5); /* math.Round: the score is never negative */
        if (raw[i] < minv)
            minv = raw[i];
        if (raw[i] > maxv)
            maxv = raw[i];
    }
    for (i = 0; i < nfeas; i++) {
        if (ignored[i])
            norm[i] = 0;
        else if (maxv == 0)
            norm[i] = 100;
        else
            norm[i] = (int32_t)(100 * (maxv + minv - raw[i]) / maxv);
    }
    return true;
}
