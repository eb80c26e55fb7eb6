/* interpod.c - kube-scheduler's InterPodAffinity (pkg/scheduler/framework/plugins/
 * interpodaffinity, v1.37 with InterPodAffinityHostnameFastPath off, its default): pods' terms
 * compiled to interned ids once, PreFilter's three counts by topology pair (existing pods
 * matching the incoming pod's required affinity, its required anti-affinity, and existing pods
 * whose required anti-affinity matches it), the Filter on those counts, PreScore's score by
 * topology pair and NormalizeScore. Pods count only on nodes present in the cluster, as in
 * kube-scheduler's snapshot.
 *
 * kube-scheduler walks every pod (or every pod with terms) in PreFilter and PreScore, once per
 * cycle. Here the counts are kept as pods and nodes come and go (the index below), so a cycle
 * costs the number of distinct terms it looks at, not the number of pods. The reference path
 * (reference.c) evaluates the same rules by scanning every pod for every node instead. */
#include "sched/plugins-int.h"
#include "sched/cluster.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/intern-int.h"
#include "sched/sched-int.h"

#define HARD_POD_AFFINITY_WEIGHT 1 /* InterPodAffinityArgs default */

/* ---------------------------------------------------------------- topology pair maps */

/* counts by (topology key id, value id), open addressing; entries that come back to 0 stay as
 * keys, and live counts the non-zero ones (kube-scheduler deletes them: len(map) == live). A
 * pair and its count sit together: a lookup touches one cache line. */
struct tmap_e {
    uint64_t key; /* TMAP_EMPTY when free */
    int64_t val;
};

struct tmap {
    struct tmap_e *e;
    uint32_t cap, n, live;
};

#define TMAP_EMPTY UINT64_MAX

static uint32_t tmap_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (uint32_t)k;
}

static void tmap_free(struct tmap *m)
{
    free(m->e);
    memset(m, 0, sizeof(*m));
}

static int64_t tmap_get(const struct tmap *m, uint32_t key, uint32_t value)
{
    uint64_t k = (uint64_t)key << 32 | value;
    uint32_t i;

    if (!m->n)
        return 0;
    for (i = tmap_hash(k) & (m->cap - 1); m->e[i].key != TMAP_EMPTY; i = (i + 1) & (m->cap - 1))
        if (m->e[i].key == k)
            return m->e[i].val;
    return 0;
}

static int tmap_grow(struct tmap *m)
{
    uint32_t cap = m->cap ? m->cap * 2 : 16, i, j;
    struct tmap_e *e = malloc(cap * sizeof(*e));

    if (!e)
        return -ENOMEM;
    for (i = 0; i < cap; i++)
        e[i].key = TMAP_EMPTY;
    for (i = 0; i < m->cap; i++) {
        if (m->e[i].key == TMAP_EMPTY)
            continue;
        for (j = tmap_hash(m->e[i].key) & (cap - 1); e[j].key != TMAP_EMPTY;
             j = (j + 1) & (cap - 1))
            ;
        e[j] = m->e[i];
    }
    free(m->e);
    m->e = e;
    m->cap = cap;
    return 0;
}

/* tmap_add adds d to the count of (key, value); it allocates only for a pair it has not held
 * before, so taking back what was added never fails. 0 or -ENOMEM. */
static int tmap_add(struct tmap *m, uint32_t key, uint32_t value, int64_t d)
{
    uint64_t k = (uint64_t)key << 32 | value;
    uint32_t i = 0;
    int64_t before;

    if (m->cap)
        for (i = tmap_hash(k) & (m->cap - 1); m->e[i].key != TMAP_EMPTY && m->e[i].key != k;
             i = (i + 1) & (m->cap - 1))
            ;
    if (!m->cap || m->e[i].key == TMAP_EMPTY) {
        if ((m->n + 1) * 2 > m->cap) {
            if (tmap_grow(m))
                return -ENOMEM;
            for (i = tmap_hash(k) & (m->cap - 1); m->e[i].key != TMAP_EMPTY;
                 i = (i + 1) & (m->cap - 1))
                ;
        }
        m->e[i].key = k;
        m->e[i].val = 0;
        m->n++;
    }
    before = m->e[i].val;
    m->e[i].val += d;
    if (before == 0 && m->e[i].val != 0)
        m->live++;
    else if (before != 0 && m->e[i].val == 0)
        m->live--;
    return 0;
}

/* ---------------------------------------------------------------- labels and terms */

static uint32_t node_label(const struct sched_cluster *c, uint32_t slot, uint32_t key)
{
    const struct sched_slot *s = &c->slots[slot];
    const struct sched_idlabel *x = sched_label_find(s->labels, s->nlabels, key);

    return x ? x->value : SCHED_NOID;
}

static bool lsel_matches(const struct sched_lsel *sel, const struct sched_idlabel *l, uint32_t n)
{
    uint32_t i, j;

    if (!sel->present)
        return false;
    for (i = 0; i < sel->nreqs; i++) {
        const struct sched_creq *r = &sel->reqs[i];
        const struct sched_idlabel *x = sched_label_find(l, n, r->key);
        bool in = false;

        if (x)
            for (j = 0; j < r->nvalues && !in; j++)
                in = r->values[j] == x->value;
        switch (r->op) {
        case KUBE_OP_IN:
            if (!in)
                return false;
            break;
        case KUBE_OP_NOT_IN:
            if (in)
                return false;
            break;
        case KUBE_OP_EXISTS:
            if (!x)
                return false;
            break;
        case KUBE_OP_DOES_NOT_EXIST:
            if (x)
                return false;
            break;
        default:
            return false;
        }
    }
    return true;
}

const struct sched_ns *sched_ipa_ns_find(const struct sched_cluster *c, uint32_t nsid)
{
    uint32_t i;

    for (i = 0; i < c->nnss; i++)
        if (c->nss[i].name == nsid)
            return &c->nss[i];
    return NULL;
}

bool sched_ipa_term_matches(const struct sched_pterm *t, uint32_t nsid,
                            const struct sched_idlabel *labels, uint32_t nlabels,
                            const struct sched_ns *ns)
{
    bool ns_ok = false;
    uint32_t i;

    for (i = 0; i < t->nns && !ns_ok; i++)
        ns_ok = t->ns[i] == nsid;
    if (!ns_ok)
        ns_ok = lsel_matches(&t->nssel, ns ? ns->labels : NULL, ns ? ns->nlabels : 0);
    return ns_ok && lsel_matches(&t->sel, labels, nlabels);
}

/* all_match is podMatchesAllAffinityTerms: false for no terms; namespace labels nil */
static bool all_match(const struct sched_pterm *t, uint32_t n, uint32_t nsid,
                      const struct sched_idlabel *l, uint32_t nl)
{
    uint32_t i;

    if (!n)
        return false;
    for (i = 0; i < n; i++)
        if (!sched_ipa_term_matches(&t[i], nsid, l, nl, NULL))
            return false;
    return true;
}

/* ---------------------------------------------------------------- compiling terms */

/* A term lives in one block with its arrays; every piece is taken 8-aligned, and the sizes
 * below count that rounding. */
#define R8(n) (((size_t)(n) + 7) & ~(size_t)7)

static size_t lsel_size(const struct kube_label_selector *s)
{
    size_t n = R8(s->nreqs * sizeof(struct sched_creq)), i;

    for (i = 0; i < s->nreqs; i++)
        n += R8(s->reqs[i].nvalues * sizeof(uint32_t));
    return n;
}

struct block {
    char *p, *end;
};

static void *take(struct block *b, size_t n)
{
    void *p = b->p;

    b->p += R8(n);
    return p;
}
static int lsel_compile(struct sched_cluster *c, const struct kube_label_selector *s,
                        struct block *b, struct sched_lsel *out)
{
    size_t i, j;

    memset(out, 0, sizeof(*out));
    out->present = s->present;
    if (!s->nreqs)
        return 0;
    out->reqs = take(b, s->nreqs * sizeof(*out->reqs));
    out->nreqs = (uint32_t)s->nreqs;
    for (i = 0; i < s->nreqs; i++) {
        const struct kube_requirement *r = &s->reqs[i];
        struct sched_creq *e = &out->reqs[i];
        memset(e, 0, sizeof(*e));
        e->op = (uint8_t)r->op;
        e->invalid = r->invalid;
        if ((e->key = sched_intern_add(&c->strs, r->key)) == SCHED_NOID)
            return -ENOMEM;
        e->nvalues = (uint32_t)r->nvalues;
        e->values = take(b, r->nvalues * sizeof(*e->values));
        for (j = 0; j < r->nvalues; j++)
            if ((e->values[j] = sched_intern_add(&c->strs, r->values[j])) == SCHED_NOID)
                return -ENOMEM;
    }
    return 0;
}

static size_t term_size(const struct kube_pod_affinity_term *t)
{
    return R8(sizeof(struct sched_pterm)) + lsel_size(&t->label_selector) +
           lsel_size(&t->namespace_selector) + R8((t->nnamespaces + 1) * sizeof(uint32_t));
}

/* term_compile is newAffinityTerm: namespaces given, or the pod's own when there are none
 * and no namespace selector */
static int term_compile(struct sched_cluster *c, const struct kube_pod *pod,
                        const struct kube_pod_affinity_term *t, struct block *b,
                        struct sched_pterm *out)
{
    size_t i;
    int rc;

    memset(out, 0, sizeof(*out));
    out->weight = t->weight;
    if ((out->tkey = sched_intern_add(&c->strs, t->topology_key)) == SCHED_NOID)
        return -ENOMEM;
    if ((rc = lsel_compile(c, &t->label_selector, b, &out->sel)) ||
        (rc = lsel_compile(c, &t->namespace_selector, b, &out->nssel)))
        return rc;
    out->ns = take(b, (t->nnamespaces + 1) * sizeof(*out->ns));
    if (!t->nnamespaces && !t->namespace_selector.present) {
        if ((out->ns[0] = sched_intern_add(&c->strs, pod->namespace_)) == SCHED_NOID)
            return -ENOMEM;
        out->nns = 1;
        return 0;
    }
    for (i = 0; i < t->nnamespaces; i++)
        if ((out->ns[out->nns++] = sched_intern_add(&c->strs, t->namespaces[i])) == SCHED_NOID)
            return -ENOMEM;
    return 0;
}

static bool pod_has_terms(const struct kube_pod *pod)
{
    const struct kube_pod_extra *x = kube_pod_ext(pod);

    return x->pod_affinity.nrequired || x->pod_affinity.npreferred ||
           x->pod_anti_affinity.nrequired || x->pod_anti_affinity.npreferred;
}

/* terms_build compiles every pod affinity term of pod into one malloc'ed block */
static struct sched_pterms *terms_build(struct sched_cluster *c, const struct kube_pod *pod,
                                        int *rc)
{
    const struct kube_pod_extra *x = kube_pod_ext(pod);
    const struct kube_pod_affinity_term *lists[4] = {
        x->pod_affinity.required, x->pod_anti_affinity.required, x->pod_affinity.preferred,
        x->pod_anti_affinity.preferred};
    size_t counts[4] = {x->pod_affinity.nrequired, x->pod_anti_affinity.nrequired,
                        x->pod_affinity.npreferred, x->pod_anti_affinity.npreferred};
    struct sched_pterm **outs[4];
    uint32_t *nouts[4];
    struct sched_pterms *pt;
    struct block b;
    size_t size = R8(sizeof(*pt)) + 4 * 8, i, k; /* (each list array rounded up) */

    *rc = 0;
    for (k = 0; k < 4; k++)
        for (i = 0; i < counts[k]; i++)
            size += term_size(&lists[k][i]);
    *rc = -ENOMEM;
    if (!(b.p = calloc(1, size)))
        return NULL;
    b.end = b.p + size;
    pt = take(&b, sizeof(*pt));
    outs[0] = &pt->aff_req;
    outs[1] = &pt->anti_req;
    outs[2] = &pt->aff_pref;
    outs[3] = &pt->anti_pref;
    nouts[0] = &pt->naff_req;
    nouts[1] = &pt->nanti_req;
    nouts[2] = &pt->naff_pref;
    nouts[3] = &pt->nanti_pref;
    for (k = 0; k < 4; k++) {
        *outs[k] = take(&b, counts[k] * sizeof(**outs[k]));
        *nouts[k] = (uint32_t)counts[k];
        for (i = 0; i < counts[k]; i++)
            if ((*rc = term_compile(c, pod, &lists[k][i], &b, &(*outs[k])[i]))) {
                free(pt);
                return NULL;
            }
    }
    *rc = 0;
    return pt;
}

/* ---------------------------------------------------------------- term copies */

/* the size of a copy of selector s's arrays */
static size_t lsel_copy_size(const struct sched_lsel *s)
{
    size_t n = R8(s->nreqs * sizeof(*s->reqs));
    uint32_t i;

    for (i = 0; i < s->nreqs; i++)
        n += R8(s->reqs[i].nvalues * sizeof(uint32_t));
    return n;
}

static void lsel_copy(struct sched_lsel *d, const struct sched_lsel *s, struct block *b)
{
    uint32_t i;

    *d = *s;
    d->reqs = NULL;
    if (!s->nreqs)
        return;
    d->reqs = take(b, s->nreqs * sizeof(*d->reqs));
    for (i = 0; i < s->nreqs; i++) {
        d->reqs[i] = s->reqs[i];
        d->reqs[i].values = take(b, s->reqs[i].nvalues * sizeof(uint32_t));
        memcpy(d->reqs[i].values, s->reqs[i].values, s->reqs[i].nvalues * sizeof(uint32_t));
    }
}

/* terms_copy returns the n terms t in one malloc'ed block (free() it), or NULL */
static struct sched_pterm *terms_copy(const struct sched_pterm *t, uint32_t n)
{
    size_t size = R8(n * sizeof(*t));
    struct sched_pterm *out;
    struct block b;
    uint32_t i;

    for (i = 0; i < n; i++)
        size += lsel_copy_size(&t[i].sel) + lsel_copy_size(&t[i].nssel) +
                R8(t[i].nns * sizeof(uint32_t));
    if (!(b.p = malloc(size)))
        return NULL;
    b.end = b.p + size;
    out = take(&b, n * sizeof(*t));
    for (i = 0; i < n; i++) {
        out[i] = t[i];
        lsel_copy(&out[i].sel, &t[i].sel, &b);
        lsel_copy(&out[i].nssel, &t[i].nssel, &b);
        out[i].ns = take(&b, t[i].nns * sizeof(uint32_t));
        memcpy(out[i].ns, t[i].ns, t[i].nns * sizeof(uint32_t));
    }
    return out;
}

static uint32_t lsel_hash(const struct sched_lsel *s, uint32_t h)
{
    uint32_t i;

    h = sched_hash_bytes(&s->present, sizeof(s->present), h);
    h = sched_hash_bytes(&s->nreqs, sizeof(s->nreqs), h);
    for (i = 0; i < s->nreqs; i++) {
        const struct sched_creq *r = &s->reqs[i];
        h = sched_hash_bytes(&r->key, sizeof(r->key), h);
        h = sched_hash_bytes(&r->op, sizeof(r->op), h);
        h = sched_hash_bytes(&r->invalid, sizeof(r->invalid), h);
        h = sched_hash_bytes(&r->nvalues, sizeof(r->nvalues), h);
        h = sched_hash_bytes(r->values, r->nvalues * sizeof(uint32_t), h);
    }
    return h;
}

/* terms_hash: the n terms with their weights (weighted) or without */
static uint32_t terms_hash(const struct sched_pterm *t, uint32_t n, bool weighted)
{
    uint32_t h = sched_hash_bytes(&n, sizeof(n), 2166136261u), i;

    for (i = 0; i < n; i++) {
        h = lsel_hash(&t[i].sel, h);
        h = lsel_hash(&t[i].nssel, h);
        h = sched_hash_bytes(&t[i].nns, sizeof(t[i].nns), h);
        h = sched_hash_bytes(t[i].ns, t[i].nns * sizeof(uint32_t), h);
        h = sched_hash_bytes(&t[i].tkey, sizeof(t[i].tkey), h);
        if (weighted)
            h = sched_hash_bytes(&t[i].weight, sizeof(t[i].weight), h);
    }
    return h;
}

static bool lsel_equal(const struct sched_lsel *a, const struct sched_lsel *b)
{
    uint32_t i;

    if (a->present != b->present || a->nreqs != b->nreqs)
        return false;
    for (i = 0; i < a->nreqs; i++) {
        const struct sched_creq *x = &a->reqs[i], *y = &b->reqs[i];
        if (x->key != y->key || x->op != y->op || x->invalid != y->invalid ||
            x->nvalues != y->nvalues ||
            (x->nvalues && memcmp(x->values, y->values, x->nvalues * sizeof(uint32_t))))
            return false;
    }
    return true;
}

static bool terms_equal(const struct sched_pterm *a, const struct sched_pterm *b, uint32_t n,
                        bool weighted)
{
    uint32_t i;

    for (i = 0; i < n; i++)
        if (a[i].tkey != b[i].tkey || a[i].nns != b[i].nns ||
            (weighted && a[i].weight != b[i].weight) ||
            (a[i].nns && memcmp(a[i].ns, b[i].ns, a[i].nns * sizeof(uint32_t))) ||
            !lsel_equal(&a[i].sel, &b[i].sel) || !lsel_equal(&a[i].nssel, &b[i].nssel))
            return false;
    return true;
}

/* term_never: t selects no pod at all (a nil label selector, or no namespace) */
static bool term_never(const struct sched_pterm *t)
{
    return !t->sel.present || (!t->nns && !t->nssel.present);
}

/* term_anchor: a label every pod t selects carries, key In values (the first such requirement),
 * when there is one: *n = 0 otherwise */
static void term_anchor(const struct sched_pterm *t, uint32_t *key, const uint32_t **values,
                        uint32_t *n)
{
    uint32_t i;

    *key = SCHED_NOID;
    *values = NULL;
    *n = 0;
    for (i = 0; i < t->sel.nreqs; i++)
        if (t->sel.reqs[i].op == KUBE_OP_IN && t->sel.reqs[i].nvalues) {
            *key = t->sel.reqs[i].key;
            *values = t->sel.reqs[i].values;
            *n = t->sel.reqs[i].nvalues;
            return;
        }
}

/* ---------------------------------------------------------------- the index
 *
 * Kept in step with every pod added or removed and every node whose labels or presence
 * change (the hooks below), built at the first cycle that needs it:
 * - a counter counts, for a list of terms (an incoming pod's required affinity terms, or one
 *   of its other terms, namespaceSelector merged), the pods on present nodes that match every
 *   term, by topology pair of each term's key: PreFilter's affinityCounts and
 *   antiAffinityCounts, PreScore's sums over the incoming pod's preferred terms. A counter is
 *   counted the first time its terms are seen, from the pods carrying its anchor label (below;
 *   from every pod, what kube-scheduler does in every cycle, when it has none), then kept;
 *   beyond COUNTER_CAP the least recently used is dropped.
 * - a group gathers the identical terms of existing pods (same kind, weight, selectors,
 *   namespaces and key) and counts them by topology pair of the key, over the pods on present
 *   nodes: PreFilter's existingAntiAffinityCounts and PreScore's sums over the existing pods'
 *   terms are the sums of the groups whose term matches the incoming pod.
 * - both are registered under their anchor label (term_anchor): a pod added or removed
 *   updates only the counters anchored at one of its labels, and a cycle looks only at the
 *   groups anchored at one of the incoming pod's labels (and, in both cases, at the few
 *   without an anchor). For the label keys anchors use (tracked), an anchor also lists the
 *   pods carrying its label (sched_pod.ipa_lpos: their positions in the lists).
 * A cycle state refers to counters and groups rather than copying them: it pins its counters,
 * and nothing is freed while a state lives (the cluster does not change during a cycle). */

#define COUNTER_CAP 4096

enum { G_AFF_REQ, G_ANTI_REQ, G_AFF_PREF, G_ANTI_PREF };

struct ipa_counter {
    struct ipa_counter *hnext;
    uint32_t hash;
    struct sched_pterm *cl; /* the terms (terms_copy) */
    uint32_t ncl;
    bool never;
    uint32_t akey; /* anchor of the first term (term_anchor); navals 0: none */
    const uint32_t *avals;
    uint32_t navals;
    struct tmap counts;
    uint32_t pins;
    uint64_t last_use;
    uint32_t pos; /* in idx->counters */
};

struct ipa_group {
    struct ipa_group *hnext;
    uint32_t hash;
    uint8_t kind;          /* G_* */
    struct sched_pterm *t; /* terms_copy of one term */
    bool never;
    uint32_t akey;
    const uint32_t *avals;
    uint32_t navals;
    struct tmap counts;
    uint32_t members; /* pods carrying the term (present node or not) */
    uint32_t pos;     /* in idx->groups */
};

struct pvec {
    void **v;
    uint32_t n, cap;
};

/* the counters and groups anchored at one label (key, value), and, when the key is tracked,
 * the pods that carry the label (present node or not; sched_pod.ipa_lpos: their positions) */
struct ipa_anchor {
    struct ipa_anchor *hnext;
    uint32_t key, value;
    struct pvec ctrs, grps, pods;
};

struct sched_ipa_index {
    struct ipa_counter **ctab; /* chained hash tables, mask + 1 buckets */
    uint32_t cmask;
    struct ipa_group **gtab;
    uint32_t gmask;
    struct ipa_anchor **atab;
    uint32_t amask, nanchors;
    struct pvec counters, groups; /* every counter, every group */
    struct pvec loose_c, loose_g; /* those without an anchor */
    bool *tracked;                /* by key id: the anchors of the key list their pods */
    uint32_t ntracked;
    uint64_t clock;
    uint32_t states; /* cycle states alive */
    uint32_t nempty; /* groups without members, freed between cycles */
    bool broken;     /* an update ran out of memory: rebuilt before the next cycle */
};

static int pvec_push(struct pvec *a, void *x)
{
    if (a->n == a->cap) {
        uint32_t cap = a->cap ? a->cap * 2 : 4;
        void **v = realloc(a->v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return 0;
}

static void pvec_remove(struct pvec *a, const void *x)
{
    uint32_t i;

    for (i = 0; i < a->n; i++)
        if (a->v[i] == x) {
            a->v[i] = a->v[--a->n];
            return;
        }
}

static uint32_t anchor_hash(uint32_t key, uint32_t value)
{
    return tmap_hash((uint64_t)key << 32 | value);
}

static struct ipa_anchor *anchor_find(struct sched_ipa_index *x, uint32_t key, uint32_t value,
                                      bool create)
{
    uint32_t b = anchor_hash(key, value) & x->amask;
    struct ipa_anchor *a;

    for (a = x->atab[b]; a; a = a->hnext)
        if (a->key == key && a->value == value)
            return a;
    if (!create || !(a = calloc(1, sizeof(*a))))
        return NULL;
    if (x->nanchors > 2 * (x->amask + 1)) {
        /* grow the table */
        uint32_t n = (x->amask + 1) * 4, i;
        struct ipa_anchor **t = calloc(n, sizeof(*t)), *e, *next;
        if (t) {
            for (i = 0; i <= x->amask; i++)
                for (e = x->atab[i]; e; e = next) {
                    next = e->hnext;
                    e->hnext = t[anchor_hash(e->key, e->value) & (n - 1)];
                    t[anchor_hash(e->key, e->value) & (n - 1)] = e;
                }
            free(x->atab);
            x->atab = t;
            x->amask = n - 1;
            b = anchor_hash(key, value) & x->amask;
        }
    }
    a->key = key;
    a->value = value;
    a->hnext = x->atab[b];
    x->atab[b] = a;
    x->nanchors++;
    return a;
}

/* anchor_drop frees the anchor (key, value) once nothing is registered there */
static void anchor_drop(struct sched_ipa_index *x, struct ipa_anchor *a)
{
    struct ipa_anchor **p = &x->atab[anchor_hash(a->key, a->value) & x->amask];

    if (a->ctrs.n || a->grps.n || a->pods.n)
        return;
    while (*p != a)
        p = &(*p)->hnext;
    *p = a->hnext;
    free(a->ctrs.v);
    free(a->grps.v);
    free(a->pods.v);
    free(a);
    x->nanchors--;
}

static bool key_tracked(const struct sched_ipa_index *x, uint32_t key)
{
    return key < x->ntracked && x->tracked[key];
}

/* track_label adds (sign +1) or removes (-1) pod p, whose i-th label's key is tracked, to or
 * from that label's list of pods; 0 or -ENOMEM */
static int track_label(struct sched_ipa_index *x, struct sched_pod *p, uint32_t i, int sign)
{
    const struct sched_idlabel *l = &p->labels[i];
    struct ipa_anchor *a = anchor_find(x, l->key, l->value, sign > 0);
    uint32_t pos;

    if (sign > 0) {
        if (!a || (!p->ipa_lpos && !(p->ipa_lpos = malloc(p->nlabels * sizeof(*p->ipa_lpos))))) {
            if (a)
                anchor_drop(x, a);
            return -ENOMEM;
        }
        if (pvec_push(&a->pods, p)) {
            anchor_drop(x, a);
            return -ENOMEM;
        }
        p->ipa_lpos[i] = a->pods.n - 1;
        return 0;
    }
    if (!a || !p->ipa_lpos)
        return 0;
    pos = p->ipa_lpos[i];
    if (pos >= a->pods.n || a->pods.v[pos] != p)
        return 0; /* (not listed) */
    a->pods.v[pos] = a->pods.v[--a->pods.n];
    if (pos < a->pods.n) {
        struct sched_pod *q = a->pods.v[pos];
        q->ipa_lpos[sched_label_find(q->labels, q->nlabels, l->key) - q->labels] = pos;
    }
    anchor_drop(x, a);
    return 0;
}

/* track_key makes the anchors of key list their pods, from every pod of the cluster when it
 * was not tracked yet: once per key, so that a counter of a new term is counted from the
 * pods carrying its anchor label instead of from every pod; 0 or -ENOMEM */
static int track_key(const struct sched_cluster *c, struct sched_ipa_index *x, uint32_t key)
{
    uint32_t i;

    if (key_tracked(x, key))
        return 0;
    if (key >= x->ntracked) {
        uint32_t n = x->ntracked ? x->ntracked : 64;
        bool *t;
        while (n <= key)
            n *= 2;
        if (!(t = realloc(x->tracked, n * sizeof(*t))))
            return -ENOMEM;
        memset(t + x->ntracked, 0, (n - x->ntracked) * sizeof(*t));
        x->tracked = t;
        x->ntracked = n;
    }
    x->tracked[key] = true;
    for (i = 0; i < c->nbuckets; i++) {
        struct sched_pod *q;
        for (q = c->pod_buckets[i]; q; q = q->hnext) {
            const struct sched_idlabel *l = sched_label_find(q->labels, q->nlabels, key);
            if (l && track_label(x, q, (uint32_t)(l - q->labels), +1))
                return -ENOMEM;
        }
    }
    return 0;
}

/* anchors_add registers item (a counter, or a group when group) under each anchor label;
 * 0 or -ENOMEM (then registered nowhere) */
static int anchors_add(struct sched_ipa_index *x, uint32_t key, const uint32_t *vals, uint32_t n,
                       bool group, void *item)
{
    uint32_t i;

    if (!n)
        return pvec_push(group ? &x->loose_g : &x->loose_c, item);
    for (i = 0; i < n; i++) {
        struct ipa_anchor *a = anchor_find(x, key, vals[i], true);
        if (!a || pvec_push(group ? &a->grps : &a->ctrs, item)) {
            while (i--) {
                a = anchor_find(x, key, vals[i], false);
                pvec_remove(group ? &a->grps : &a->ctrs, item);
                anchor_drop(x, a);
            }
            if ((a = anchor_find(x, key, vals[i], false)))
                anchor_drop(x, a);
            return -ENOMEM;
        }
    }
    return 0;
}

static void anchors_remove(struct sched_ipa_index *x, uint32_t key, const uint32_t *vals,
                           uint32_t n, bool group, void *item)
{
    uint32_t i;

    if (!n) {
        pvec_remove(group ? &x->loose_g : &x->loose_c, item);
        return;
    }
    for (i = 0; i < n; i++) {
        struct ipa_anchor *a = anchor_find(x, key, vals[i], false);
        if (a) {
            pvec_remove(group ? &a->grps : &a->ctrs, item);
            anchor_drop(x, a);
        }
    }
}

/* counter_count adds (sign +1) or takes (-1) pod q, on the present node at slot, to the
 * counter when q matches all its terms */
static void counter_count(const struct sched_cluster *c, struct sched_ipa_index *x,
                          struct ipa_counter *k, const struct sched_pod *q, uint32_t slot, int sign)
{
    uint32_t i, v;

    if (!all_match(k->cl, k->ncl, q->nsid, q->labels, q->nlabels))
        return;
    for (i = 0; i < k->ncl; i++)
        if ((v = node_label(c, slot, k->cl[i].tkey)) != SCHED_NOID &&
            tmap_add(&k->counts, k->cl[i].tkey, v, sign))
            x->broken = true;
}

static void group_count(const struct sched_cluster *c, struct sched_ipa_index *x,
                        struct ipa_group *g, uint32_t slot, int sign)
{
    uint32_t v = node_label(c, slot, g->t->tkey);

    if (v != SCHED_NOID && tmap_add(&g->counts, g->t->tkey, v, sign))
        x->broken = true;
}

static void counter_free(struct sched_ipa_index *x, struct ipa_counter *k)
{
    struct ipa_counter **p = &x->ctab[k->hash & x->cmask];

    while (*p != k)
        p = &(*p)->hnext;
    *p = k->hnext;
    if (!k->never)
        anchors_remove(x, k->akey, k->avals, k->navals, false, k);
    x->counters.v[k->pos] = x->counters.v[--x->counters.n];
    ((struct ipa_counter *)x->counters.v[k->pos])->pos = k->pos;
    tmap_free(&k->counts);
    free(k->cl);
    free(k);
}

static void group_free(struct sched_ipa_index *x, struct ipa_group *g)
{
    struct ipa_group **p = &x->gtab[g->hash & x->gmask];

    while (*p != g)
        p = &(*p)->hnext;
    *p = g->hnext;
    if (!g->never)
        anchors_remove(x, g->akey, g->avals, g->navals, true, g);
    x->groups.v[g->pos] = x->groups.v[--x->groups.n];
    ((struct ipa_group *)x->groups.v[g->pos])->pos = g->pos;
    if (!g->members)
        x->nempty--;
    tmap_free(&g->counts);
    free(g->t);
    free(g);
}

static uint32_t group_hash(uint8_t kind, const struct sched_pterm *t)
{
    return sched_hash_bytes(&kind, 1, terms_hash(t, 1, true));
}

/* group_find returns the group of term t of kind, creating it (empty) when create; NULL when
 * absent or out of memory */
static struct ipa_group *group_find(struct sched_ipa_index *x, uint8_t kind,
                                    const struct sched_pterm *t, bool create)
{
    uint32_t h = group_hash(kind, t);
    struct ipa_group *g;

    for (g = x->gtab[h & x->gmask]; g; g = g->hnext)
        if (g->hash == h && g->kind == kind && terms_equal(g->t, t, 1, true))
            return g;
    if (!create || !(g = calloc(1, sizeof(*g))))
        return NULL;
    g->hash = h;
    g->kind = kind;
    if (!(g->t = terms_copy(t, 1)) || pvec_push(&x->groups, g)) {
        free(g->t);
        free(g);
        return NULL;
    }
    g->pos = x->groups.n - 1;
    g->never = term_never(g->t);
    term_anchor(g->t, &g->akey, &g->avals, &g->navals);
    if (!g->never && anchors_add(x, g->akey, g->avals, g->navals, true, g)) {
        x->groups.n--;
        free(g->t);
        free(g);
        return NULL;
    }
    g->hnext = x->gtab[h & x->gmask];
    x->gtab[h & x->gmask] = g;
    x->nempty++; /* until its first member */
    if (x->groups.n > 2 * (x->gmask + 1)) {
        uint32_t n = (x->gmask + 1) * 4, i;
        struct ipa_group **tab = calloc(n, sizeof(*tab)), *e, *next;
        if (tab) {
            for (i = 0; i <= x->gmask; i++)
                for (e = x->gtab[i]; e; e = next) {
                    next = e->hnext;
                    e->hnext = tab[e->hash & (n - 1)];
                    tab[e->hash & (n - 1)] = e;
                }
            free(x->gtab);
            x->gtab = tab;
            x->gmask = n - 1;
        }
    }
    return g;
}

static const struct sched_pterm *pterms_list(const struct sched_pterms *pt, int kind, uint32_t *n)
{
    switch (kind) {
    case G_AFF_REQ:
        *n = pt->naff_req;
        return pt->aff_req;
    case G_ANTI_REQ:
        *n = pt->nanti_req;
        return pt->anti_req;
    case G_AFF_PREF:
        *n = pt->naff_pref;
        return pt->aff_pref;
    default:
        *n = pt->nanti_pref;
        return pt->anti_pref;
    }
}

/* index_pod adds (+1) or takes (-1) pod q to or from the index: its terms' groups and the
 * lists of pods of its tracked labels (membership, when members) and, on a present node, its
 * counts in the groups and in the counters anchored at its labels */
static void index_pod(const struct sched_cluster *c, struct sched_ipa_index *x, struct sched_pod *q,
                      int sign, bool members)
{
    bool present = c->slots[q->slot].present;
    uint32_t i, j, n;
    int kind;

    for (i = 0; members && x->ntracked && i < q->nlabels; i++)
        if (key_tracked(x, q->labels[i].key) && track_label(x, q, i, sign))
            x->broken = true;
    for (kind = G_AFF_REQ; q->terms && kind <= G_ANTI_PREF; kind++) {
        const struct sched_pterm *t = pterms_list(q->terms, kind, &n);
        for (i = 0; i < n; i++) {
            struct ipa_group *g = group_find(x, (uint8_t)kind, &t[i], sign > 0 && members);
            if (!g) {
                x->broken = true;
                continue;
            }
            if (members) {
                if (sign > 0 && !g->members++)
                    x->nempty--;
                else if (sign < 0 && g->members && !--g->members)
                    x->nempty++;
            }
            if (present)
                group_count(c, x, g, q->slot, sign);
        }
    }
    if (!present)
        return;
    for (i = 0; i < x->loose_c.n; i++)
        counter_count(c, x, x->loose_c.v[i], q, q->slot, sign);
    for (i = 0; i < q->nlabels && x->nanchors; i++) {
        const struct ipa_anchor *a = anchor_find(x, q->labels[i].key, q->labels[i].value, false);
        for (j = 0; a && j < a->ctrs.n; j++)
            counter_count(c, x, a->ctrs.v[j], q, q->slot, sign);
    }
}

static void index_clear(struct sched_ipa_index *x)
{
    uint32_t i;

    while (x->counters.n)
        counter_free(x, x->counters.v[x->counters.n - 1]);
    while (x->groups.n)
        group_free(x, x->groups.v[x->groups.n - 1]);
    x->nempty = 0;
    /* what is left are lists of pods */
    for (i = 0; i <= x->amask; i++)
        while (x->atab[i]) {
            struct ipa_anchor *a = x->atab[i];
            x->atab[i] = a->hnext;
            free(a->ctrs.v);
            free(a->grps.v);
            free(a->pods.v);
            free(a);
        }
    x->nanchors = 0;
    if (x->tracked)
        memset(x->tracked, 0, x->ntracked * sizeof(*x->tracked));
}

static void index_free(struct sched_ipa_index *x)
{
    if (!x)
        return;
    index_clear(x);
    free(x->ctab);
    free(x->gtab);
    free(x->atab);
    free(x->counters.v);
    free(x->groups.v);
    free(x->loose_c.v);
    free(x->loose_g.v);
    free(x->tracked);
    free(x);
}

/* index_ready returns the cluster's index, built (or rebuilt after a failed update) from every
 * pod when needed; NULL when out of memory */
static struct sched_ipa_index *index_ready(struct sched_cluster *c)
{
    struct sched_ipa_index *x = c->ipa_idx;
    uint32_t i;

    if (x && !x->broken)
        return x;
    if (x && x->states)
        return NULL; /* (a cycle is using it: cannot happen, the cluster does not change) */
    if (!x) {
        if (!(x = calloc(1, sizeof(*x))))
            return NULL;
        x->cmask = x->gmask = x->amask = 255;
        x->ctab = calloc(256, sizeof(*x->ctab));
        x->gtab = calloc(256, sizeof(*x->gtab));
        x->atab = calloc(256, sizeof(*x->atab));
        if (!x->ctab || !x->gtab || !x->atab) {
            index_free(x);
            return NULL;
        }
        c->ipa_idx = x;
    }
    index_clear(x);
    x->broken = false;
    for (i = 0; i < c->nbuckets; i++) {
        struct sched_pod *q;
        for (q = c->pod_buckets[i]; q; q = q->hnext)
            if (q->terms)
                index_pod(c, x, q, +1, true);
    }
    return x->broken ? NULL : x;
}

/* counter_get returns the counter of the n terms t, pinned, built when new; NULL when out of
 * memory */
static struct ipa_counter *counter_get(struct sched_cluster *c, struct sched_ipa_index *x,
                                       const struct sched_pterm *t, uint32_t n)
{
    uint32_t h = terms_hash(t, n, false), i, k;
    struct ipa_counter *e;

    for (e = x->ctab[h & x->cmask]; e; e = e->hnext)
        if (e->hash == h && e->ncl == n && terms_equal(e->cl, t, n, false))
            goto found;
    if (x->counters.n >= COUNTER_CAP) {
        /* drop the least recently used counter no cycle holds */
        struct ipa_counter *old = NULL;
        for (i = 0; i < x->counters.n; i++) {
            struct ipa_counter *o = x->counters.v[i];
            if (!o->pins && (!old || o->last_use < old->last_use))
                old = o;
        }
        if (old)
            counter_free(x, old);
    }
    if (!(e = calloc(1, sizeof(*e))))
        return NULL;
    e->hash = h;
    e->ncl = n;
    if (!(e->cl = terms_copy(t, n)) || pvec_push(&x->counters, e)) {
        free(e->cl);
        free(e);
        return NULL;
    }
    e->pos = x->counters.n - 1;
    for (i = 0; i < n; i++)
        e->never |= term_never(&e->cl[i]);
    term_anchor(&e->cl[0], &e->akey, &e->avals, &e->navals);
    if (!e->never && anchors_add(x, e->akey, e->avals, e->navals, false, e)) {
        x->counters.n--;
        free(e->cl);
        free(e);
        return NULL;
    }
    e->hnext = x->ctab[h & x->cmask];
    x->ctab[h & x->cmask] = e;
    /* the first count: the pods carrying the anchor label, or every pod without one */
    if (!e->never && e->navals && track_key(c, x, e->akey))
        x->broken = true;
    for (k = 0; !x->broken && !e->never && e->navals && k < e->navals; k++) {
        const struct ipa_anchor *a = anchor_find(x, e->akey, e->avals[k], false);
        for (i = 0; a && i < a->pods.n; i++) {
            const struct sched_pod *q = a->pods.v[i];
            if (c->slots[q->slot].present)
                counter_count(c, x, e, q, q->slot, +1);
        }
    }
    for (k = 0; !e->never && !e->navals && k < c->norder; k++) {
        const struct sched_slot *s = &c->slots[c->order[k]];
        for (i = 0; i < s->npods; i++)
            counter_count(c, x, e, s->pods[i], c->order[k], +1);
    }
    if (x->broken) {
        counter_free(x, e);
        return NULL;
    }
    if (x->counters.n > 2 * (x->cmask + 1)) {
        uint32_t nb = (x->cmask + 1) * 4;
        struct ipa_counter **tab = calloc(nb, sizeof(*tab)), *o, *next;
        if (tab) {
            for (i = 0; i <= x->cmask; i++)
                for (o = x->ctab[i]; o; o = next) {
                    next = o->hnext;
                    o->hnext = tab[o->hash & (nb - 1)];
                    tab[o->hash & (nb - 1)] = o;
                }
            free(x->ctab);
            x->ctab = tab;
            x->cmask = nb - 1;
        }
    }
found:
    e->pins++;
    e->last_use = ++x->clock;
    return e;
}

/* the groups no pod carries any more, freed between cycles */
static void groups_sweep(struct sched_ipa_index *x)
{
    uint32_t i;

    for (i = x->groups.n; x->nempty && i-- > 0;) {
        struct ipa_group *g = x->groups.v[i];
        if (!g->members)
            group_free(x, g);
    }
}

/* ---------------------------------------------------------------- pods and nodes */

static int labels_build(struct sched_cluster *c, const struct kube_labels *l,
                        struct sched_idlabel **out, uint32_t *n);

int sched_ipa_pod_build(struct sched_cluster *c, const struct kube_pod *pod, struct sched_pod *p)
{
    int rc;

    /* p->nsid and p->labels are the cluster's (pod_build): only the terms are ours */
    p->terms = NULL;
    if (pod_has_terms(pod) && !(p->terms = terms_build(c, pod, &rc)))
        return rc;
    return 0;
}

void sched_ipa_pod_free(struct sched_pod *p)
{
    free(p->terms);
    free(p->ipa_lpos);
}

int sched_ipa_pod_attach(struct sched_cluster *c, struct sched_pod *p)
{
    if (p->terms) {
        if (c->naff_pods == c->caff_pods) {
            uint32_t cap = c->caff_pods ? c->caff_pods * 2 : 16;
            struct sched_pod **a = realloc(c->aff_pods, cap * sizeof(*a));
            if (!a)
                return -ENOMEM;
            c->aff_pods = a;
            c->caff_pods = cap;
        }
        p->aff_index = c->naff_pods;
        c->aff_pods[c->naff_pods++] = p;
    }
    /* (an update that runs out of memory marks the index for a rebuild: not the caller's
     * failure) */
    if (c->ipa_idx && !c->ipa_idx->broken)
        index_pod(c, c->ipa_idx, p, +1, true);
    return 0;
}

void sched_ipa_pod_detach(struct sched_cluster *c, struct sched_pod *p)
{
    uint32_t i = p->aff_index;

    if (c->ipa_idx && !c->ipa_idx->broken)
        index_pod(c, c->ipa_idx, p, -1, true);
    if (!p->terms || i >= c->naff_pods || c->aff_pods[i] != p)
        return;
    c->aff_pods[i] = c->aff_pods[--c->naff_pods];
    c->aff_pods[i]->aff_index = i;
}

int sched_ipa_label_pods(struct sched_cluster *c, uint32_t key, uint32_t value,
                         struct sched_pod *const **pods, uint32_t *n)
{
    struct sched_ipa_index *x = index_ready(c);
    const struct ipa_anchor *a;

    *pods = NULL;
    *n = 0;
    if (!x || track_key(c, x, key)) {
        if (x)
            x->broken = true;
        return -ENOMEM;
    }
    if ((a = anchor_find(x, key, value, false))) {
        *pods = (struct sched_pod *const *)a->pods.v;
        *n = a->pods.n;
    }
    return 0;
}

void sched_ipa_node_unindex(struct sched_cluster *c, uint32_t slot)
{
    const struct sched_slot *s = &c->slots[slot];
    uint32_t i;

    if (!c->ipa_idx || c->ipa_idx->broken || !s->present)
        return;
    for (i = 0; i < s->npods; i++)
        index_pod(c, c->ipa_idx, s->pods[i], -1, false);
}

void sched_ipa_node_index(struct sched_cluster *c, uint32_t slot)
{
    const struct sched_slot *s = &c->slots[slot];
    uint32_t i;

    if (!c->ipa_idx || c->ipa_idx->broken || !s->present)
        return;
    for (i = 0; i < s->npods; i++)
        index_pod(c, c->ipa_idx, s->pods[i], +1, false);
}

/* ---------------------------------------------------------------- namespaces */

static int cmp_idlabel(const void *a, const void *b)
{
    const struct sched_idlabel *x = a, *y = b;

    return x->key < y->key ? -1 : x->key > y->key;
}

static int labels_build(struct sched_cluster *c, const struct kube_labels *l,
                        struct sched_idlabel **out, uint32_t *n)
{
    size_t i;

    *out = NULL;
    *n = 0;
    if (!l->n)
        return 0;
    if (!(*out = malloc(l->n * sizeof(**out))))
        return -ENOMEM;
    for (i = 0; i < l->n; i++) {
        (*out)[i].key = sched_intern_add(&c->strs, l->v[i].key);
        (*out)[i].value = sched_intern_add(&c->strs, l->v[i].value);
        if ((*out)[i].key == SCHED_NOID || (*out)[i].value == SCHED_NOID) {
            free(*out);
            *out = NULL;
            return -ENOMEM;
        }
    }
    qsort(*out, l->n, sizeof(**out), cmp_idlabel);
    *n = (uint32_t)l->n;
    return 0;
}

int sched_cluster_set_namespace(struct sched_cluster *c, const struct kube_namespace *ns,
                                struct err *err)
{
    struct sched_idlabel *l;
    uint32_t id, nl, i;

    if (!ns->name || !*ns->name)
        return err_set(err, -EINVAL, "namespace without a name");
    if ((id = sched_intern_add(&c->strs, ns->name)) == SCHED_NOID ||
        labels_build(c, &ns->labels, &l, &nl))
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

void sched_ipa_cluster_free(struct sched_cluster *c)
{
    uint32_t i;

    for (i = 0; i < c->nnss; i++)
        free(c->nss[i].labels);
    free(c->nss);
    free(c->aff_pods);
    index_free(c->ipa_idx);
    c->ipa_idx = NULL;
}

/* ---------------------------------------------------------------- the cycle's state */

/* one term's contribution to the score: weight w for each count at (tkey, the node's value) */
struct ipa_sref {
    const struct tmap *m;
    uint32_t tkey;
    int64_t w;
};

struct sched_ipa {
    struct sched_pterms *own; /* the incoming pod's terms, namespaceSelector merged */
    uint32_t nsid;
    struct sched_idlabel *labels;
    uint32_t nlabels;
    const struct sched_ns *ns; /* the incoming pod's namespace, NULL when unknown */
    bool filter_on, score_on, self_match;
    /* PreFilter: the counter of the required affinity terms (NULL when none), one per
     * required anti-affinity term, the groups of existing pods' required anti-affinity terms
     * that match the pod (their sum is existingAntiAffinityCounts) */
    struct ipa_counter *aff;
    struct ipa_counter **anti;
    const struct ipa_group **ex;
    uint32_t nex;
    /* PreScore: the topologyScore as a sum of weighted counts */
    struct ipa_sref *score;
    uint32_t nscore, cscore, cex;
    struct sched_ipa_index *idx; /* pinned counters, states */
    struct ipa_counter **pinned;
    uint32_t npinned;
};

bool sched_ipa_filter_on(const struct sched_cpod *cp)
{
    return cp->ipa && cp->ipa->filter_on;
}

bool sched_ipa_score_on(const struct sched_cpod *cp)
{
    return cp->ipa && cp->ipa->score_on;
}

const struct sched_pterms *sched_ipa_own_terms(const struct sched_cpod *cp)
{
    return cp->ipa ? cp->ipa->own : NULL;
}

uint32_t sched_ipa_own_nsid(const struct sched_cpod *cp)
{
    return cp->ipa ? cp->ipa->nsid : SCHED_NOID;
}

const struct sched_idlabel *sched_ipa_own_labels(const struct sched_cpod *cp, uint32_t *n)
{
    *n = cp->ipa ? cp->ipa->nlabels : 0;
    return cp->ipa ? cp->ipa->labels : NULL;
}

/* merge_namespaces is mergeAffinityTermNamespacesIfNotEmpty: a namespace selector with
 * requirements becomes the names of the namespaces it selects (then matches nothing by
 * itself); an empty one (every namespace) stays. The namespaces array was sized for the term's
 * own list plus one; the merged list is allocated anew when longer. */
static int merge_namespaces(const struct sched_cluster *c, struct sched_pterm *t)
{
    uint32_t i, n = 0, *ns;

    if (!t->nssel.present || !t->nssel.nreqs)
        return 0;
    for (i = 0; i < c->nnss; i++)
        n += lsel_matches(&t->nssel, c->nss[i].labels, c->nss[i].nlabels);
    if (!(ns = malloc((t->nns + n + 1) * sizeof(*ns))))
        return -ENOMEM;
    memcpy(ns, t->ns, t->nns * sizeof(*ns));
    n = t->nns;
    for (i = 0; i < c->nnss; i++)
        if (lsel_matches(&t->nssel, c->nss[i].labels, c->nss[i].nlabels))
            ns[n++] = c->nss[i].name;
    t->ns = ns; /* freed by sched_ipa_release (ipa_block.merged) */
    t->nns = n;
    t->nssel.present = false;
    return 1;
}

/* the namespace arrays merged at compile time, freed with the state: kept after the state */
struct ipa_block {
    struct sched_ipa s;
    uint32_t *merged[64];
    uint32_t nmerged;
};

void sched_ipa_release(struct sched_cpod *cp)
{
    struct ipa_block *b = (struct ipa_block *)cp->ipa;
    uint32_t i;

    if (!b)
        return;
    for (i = 0; i < b->s.npinned; i++)
        b->s.pinned[i]->pins--;
    if (b->s.idx)
        b->s.idx->states--;
    free(b->s.pinned);
    free(b->s.anti);
    free(b->s.ex);
    free(b->s.score);
    for (i = 0; i < b->nmerged; i++)
        free(b->merged[i]);
    free(b->s.own);
    free(b->s.labels);
    free(b);
    cp->ipa = NULL;
}

/* pin returns the pinned counter of the n terms t, kept in s->pinned; NULL on ENOMEM */
static struct ipa_counter *pin(struct sched_cluster *c, struct sched_ipa *s,
                               const struct sched_pterm *t, uint32_t n)
{
    struct ipa_counter *k = counter_get(c, s->idx, t, n);

    if (k)
        s->pinned[s->npinned++] = k;
    return k;
}

static int add_score(struct sched_ipa *s, const struct tmap *m, uint32_t tkey, int64_t w)
{
    if (!m->live)
        return 0; /* nothing counted: no pair in topologyScore */
    if (s->nscore == s->cscore) {
        uint32_t n = s->cscore ? s->cscore * 2 : 8;
        struct ipa_sref *v = realloc(s->score, n * sizeof(*v));
        if (!v)
            return -ENOMEM;
        s->score = v;
        s->cscore = n;
    }
    s->score[s->nscore++] = (struct ipa_sref){m, tkey, w};
    s->score_on = true;
    return 0;
}

/* match_group files group g, whose term matches the incoming pod, where the cycle uses it */
static int match_group(struct sched_ipa *s, const struct ipa_group *g)
{
    switch (g->kind) {
    case G_ANTI_REQ:
        if (s->nex == s->cex) {
            uint32_t n = s->cex ? s->cex * 2 : 8;
            const struct ipa_group **v = realloc(s->ex, n * sizeof(*v));
            if (!v)
                return -ENOMEM;
            s->ex = v;
            s->cex = n;
        }
        s->ex[s->nex++] = g;
        return 0;
    case G_AFF_REQ:
        return add_score(s, &g->counts, g->t->tkey, HARD_POD_AFFINITY_WEIGHT);
    case G_AFF_PREF:
        return add_score(s, &g->counts, g->t->tkey, g->t->weight);
    default:
        return add_score(s, &g->counts, g->t->tkey, -(int64_t)g->t->weight);
    }
}

/* the groups whose term matches the incoming pod, among those anchored at one of its labels
 * and those without an anchor */
static int match_groups(const struct sched_cluster *c, struct sched_ipa *s)
{
    const struct sched_ipa_index *x = s->idx;
    uint32_t i, j;
    int rc;

    (void)c;
    for (i = 0; i <= s->nlabels; i++) {
        const struct pvec *v = &x->loose_g;
        if (i < s->nlabels) {
            const struct ipa_anchor *a = anchor_find((struct sched_ipa_index *)x, s->labels[i].key,
                                                     s->labels[i].value, false);
            if (!a)
                continue;
            v = &a->grps;
        }
        for (j = 0; j < v->n; j++) {
            const struct ipa_group *g = v->v[j];
            if (!g->counts.live ||
                !sched_ipa_term_matches(g->t, s->nsid, s->labels, s->nlabels, s->ns))
                continue;
            if ((rc = match_group(s, g)))
                return rc;
        }
    }
    return 0;
}

int sched_ipa_compile(struct sched_cluster *c, const struct kube_pod *pod, struct sched_cpod *cp,
                      struct err *err)
{
    struct ipa_block *b;
    struct sched_ipa *s;
    struct sched_pterms *own;
    bool has_terms = pod_has_terms(pod);
    uint32_t i, k;
    int rc = 0;

    cp->ipa = NULL;
    if (!has_terms && !c->naff_pods)
        return 0; /* PreFilter and PreScore both skip */
    if (!(b = calloc(1, sizeof(*b))))
        goto nomem;
    s = &b->s;
    cp->ipa = (struct sched_ipa *)b;
    if (!(s->idx = index_ready(c)))
        goto nomem;
    if (!s->idx->states && s->idx->nempty)
        groups_sweep(s->idx);
    s->idx->states++;
    if ((s->nsid = sched_intern_add(&c->strs, pod->namespace_)) == SCHED_NOID ||
        labels_build(c, &pod->labels, &s->labels, &s->nlabels))
        goto nomem;
    s->ns = sched_ipa_ns_find(c, s->nsid);
    if (has_terms) {
        struct sched_pterm *lists[4];
        uint32_t counts[4];

        if (!(s->own = own = terms_build(c, pod, &rc)))
            goto nomem;
        lists[0] = own->aff_req;
        lists[1] = own->anti_req;
        lists[2] = own->aff_pref;
        lists[3] = own->anti_pref;
        counts[0] = own->naff_req;
        counts[1] = own->nanti_req;
        counts[2] = own->naff_pref;
        counts[3] = own->nanti_pref;
        for (k = 0; k < 4; k++)
            for (i = 0; i < counts[k]; i++) {
                if (b->nmerged == 64 && lists[k][i].nssel.present && lists[k][i].nssel.nreqs) {
                    rc = -E2BIG;
                    goto out;
                }
                rc = merge_namespaces(c, &lists[k][i]);
                if (rc < 0)
                    goto nomem;
                if (rc)
                    b->merged[b->nmerged++] = lists[k][i].ns;
                rc = 0;
            }
        s->self_match = all_match(own->aff_req, own->naff_req, s->nsid, s->labels, s->nlabels);
        /* PreFilter's and PreScore's counts of the existing pods matching the pod's terms */
        if (!(s->pinned = malloc((1 + own->nanti_req + own->naff_pref + own->nanti_pref) *
                                 sizeof(*s->pinned))) ||
            (own->nanti_req && !(s->anti = malloc(own->nanti_req * sizeof(*s->anti)))))
            goto nomem;
        if (own->naff_req && !(s->aff = pin(c, s, own->aff_req, own->naff_req)))
            goto nomem;
        for (i = 0; i < own->nanti_req; i++)
            if (!(s->anti[i] = pin(c, s, &own->anti_req[i], 1)))
                goto nomem;
        for (i = 0; i < own->naff_pref; i++) {
            const struct ipa_counter *e = pin(c, s, &own->aff_pref[i], 1);
            if (!e || add_score(s, &e->counts, own->aff_pref[i].tkey, own->aff_pref[i].weight))
                goto nomem;
        }
        for (i = 0; i < own->nanti_pref; i++) {
            const struct ipa_counter *e = pin(c, s, &own->anti_pref[i], 1);
            if (!e || add_score(s, &e->counts, own->anti_pref[i].tkey,
                                -(int64_t)own->anti_pref[i].weight))
                goto nomem;
        }
    }
    own = s->own;
    /* the existing pods' terms that match the pod: their groups */
    if (c->naff_pods && match_groups(c, s))
        goto nomem;
    s->filter_on = s->nex || (own && (own->naff_req || own->nanti_req));
    /* (the state stays when neither runs: the reference path reads the pod's terms from it) */
    return 0;
nomem:
    rc = -ENOMEM;
out:
    sched_ipa_release(cp);
    return err_set(err, rc,
                   rc == -E2BIG ? "pod %s/%s: too many namespaceSelector terms"
                                : "out of memory compiling pod %s/%s",
                   pod->namespace_, pod->name);
}

/* ---------------------------------------------------------------- Filter and Score */

/* The counts the Filter reads are the index's, plus, in preemption's dry run, nd maps of
 * changes by topology pair (struct sched_ipa_dry). */
static int64_t dsum(const struct tmap *const *d, uint32_t nd, uint32_t key, uint32_t value)
{
    int64_t n = 0;
    uint32_t i;

    for (i = 0; i < nd; i++)
        n += tmap_get(d[i], key, value);
    return n;
}

/* tmap_holds: the pair was ever added to m */
static bool tmap_holds(const struct tmap *m, uint64_t k)
{
    uint32_t i;

    if (!m->n)
        return false;
    for (i = tmap_hash(k) & (m->cap - 1); m->e[i].key != TMAP_EMPTY; i = (i + 1) & (m->cap - 1))
        if (m->e[i].key == k)
            return true;
    return false;
}

/* live_with is base's number of non-zero pairs once the changes d are added */
static int64_t live_with(const struct tmap *base, const struct tmap *const *d, uint32_t nd)
{
    int64_t live = base->live;
    uint32_t i, j, f;

    for (i = 0; i < nd; i++)
        for (f = 0; f < d[i]->cap; f++) {
            uint64_t k = d[i]->e[f].key;
            uint32_t key = (uint32_t)(k >> 32), value = (uint32_t)k;
            int64_t was;
            bool seen = false;
            if (k == TMAP_EMPTY)
                continue;
            for (j = 0; j < i && !seen; j++)
                seen = tmap_holds(d[j], k); /* handled with the earlier map */
            if (seen)
                continue;
            was = tmap_get(base, key, value);
            live += (was + dsum(d, nd, key, value) != 0) - (was != 0);
        }
    return live;
}

static uint32_t filter_with(const struct sched_cluster *c, const struct sched_ipa *s,
                            const struct tmap *const *dex, const struct tmap *const *daff,
                            const struct tmap *const *danti, uint32_t nd, uint32_t slot,
                            bool *unresolvable)
{
    const struct sched_pterms *own = s->own;
    uint32_t i, j, f, v;

    *unresolvable = false;
    if (own && own->naff_req) {
        /* nodeTopologyMatchesAffinity */
        bool exist = true;
        for (i = 0; i < own->naff_req; i++) {
            uint32_t key = own->aff_req[i].tkey;
            if ((v = node_label(c, slot, key)) == SCHED_NOID) {
                *unresolvable = true;
                return c->r_ipa_aff;
            }
            if (tmap_get(&s->aff->counts, key, v) + dsum(daff, nd, key, v) <= 0)
                exist = false;
        }
        if (!exist && !(live_with(&s->aff->counts, daff, nd) == 0 && s->self_match)) {
            *unresolvable = true;
            return c->r_ipa_aff;
        }
    }
    for (i = 0; own && i < own->nanti_req; i++) {
        uint32_t key = own->anti_req[i].tkey;
        int64_t n;
        if ((v = node_label(c, slot, key)) == SCHED_NOID)
            continue;
        /* (the terms with the same key share their counts: antiAffinityCounts is one map) */
        for (n = dsum(danti, nd, key, v), j = 0; j < own->nanti_req; j++)
            n += tmap_get(&s->anti[j]->counts, key, v);
        if (n > 0)
            return c->r_ipa_anti;
    }
    for (i = 0; i < s->nex; i++) {
        uint32_t key = s->ex[i]->t->tkey;
        int64_t n;
        if ((v = node_label(c, slot, key)) == SCHED_NOID)
            continue;
        if (!nd) {
            if (tmap_get(&s->ex[i]->counts, key, v) > 0)
                return c->r_ipa_existing;
            continue;
        }
        for (n = dsum(dex, nd, key, v), j = 0; j < s->nex; j++)
            n += tmap_get(&s->ex[j]->counts, key, v);
        if (n > 0)
            return c->r_ipa_existing;
    }
    /* the dry run's pairs: the nominated pods' terms have no group among those above */
    for (i = 0; i < nd; i++)
        for (f = 0; f < dex[i]->cap; f++) {
            uint64_t k = dex[i]->e[f].key;
            uint32_t key = (uint32_t)(k >> 32);
            int64_t n;
            if (k == TMAP_EMPTY || (v = node_label(c, slot, key)) != (uint32_t)k)
                continue;
            for (n = dsum(dex, nd, key, v), j = 0; j < s->nex; j++)
                n += tmap_get(&s->ex[j]->counts, key, v);
            if (n > 0)
                return c->r_ipa_existing;
        }
    return 0;
}

uint32_t sched_ipa_filter(const struct sched_cluster *c, const struct sched_cpod *cp, uint32_t slot,
                          bool *unresolvable)
{
    const struct sched_ipa *s = cp->ipa;

    *unresolvable = false;
    if (!s || !s->filter_on)
        return 0;
    return filter_with(c, s, NULL, NULL, NULL, 0, slot, unresolvable);
}

int64_t sched_ipa_score(const struct sched_cluster *c, const struct sched_cpod *cp, uint32_t slot)
{
    const struct sched_ipa *s = cp->ipa;
    int64_t score = 0;
    uint32_t i, v;

    if (!s || !s->score_on)
        return 0;
    for (i = 0; i < s->nscore; i++)
        if ((v = node_label(c, slot, s->score[i].tkey)) != SCHED_NOID)
            score += s->score[i].w * tmap_get(s->score[i].m, s->score[i].tkey, v);
    return score;
}

int64_t sched_ipa_normalize(int64_t raw, int64_t min, int64_t max)
{
    double f = 0;

    if (max - min > 0)
        f = 100.0 * ((double)(raw - min) / (double)(max - min));
    return (int64_t)f;
}

/* ---------------------------------------------------------------- preemption */

/* The dry run's changes to the PreFilter counts, by topology pair: [0] the pods taken out of
 * the node and put back (RemovePod / AddPod), [1] the pods nominated to it that are added for
 * RunFilterPluginsWithNominatedPods' first pass. */
struct sched_ipa_dry {
    struct tmap ex[2], aff[2], anti[2];
    uint32_t nnom;
};

struct sched_ipa_dry *sched_ipa_dry_new(const struct sched_cpod *cp)
{
    const struct sched_ipa *s = cp->ipa;

    if (!s || !s->filter_on)
        return NULL;
    return calloc(1, sizeof(struct sched_ipa_dry));
}

void sched_ipa_dry_free(struct sched_ipa_dry *d)
{
    int i;

    if (!d)
        return;
    for (i = 0; i < 2; i++) {
        tmap_free(&d->ex[i]);
        tmap_free(&d->aff[i]);
        tmap_free(&d->anti[i]);
    }
    free(d);
}

/* updateWithPod on the changes of set k */
static int dry_count(const struct sched_cluster *c, const struct sched_ipa *s,
                     struct sched_ipa_dry *d, int k, const struct sched_pod *q, int sign)
{
    const struct sched_pterms *own = s->own;
    uint32_t i, v, slot = q->slot;
    int rc = 0;

    /* existing pods' required anti-affinity against the incoming pod */
    for (i = 0; q->terms && i < q->terms->nanti_req; i++) {
        const struct sched_pterm *t = &q->terms->anti_req[i];
        if (sched_ipa_term_matches(t, s->nsid, s->labels, s->nlabels, s->ns) &&
            (v = node_label(c, slot, t->tkey)) != SCHED_NOID)
            rc |= tmap_add(&d->ex[k], t->tkey, v, sign);
    }
    if (!own)
        return rc;
    if (all_match(own->aff_req, own->naff_req, q->nsid, q->labels, q->nlabels))
        for (i = 0; i < own->naff_req; i++)
            if ((v = node_label(c, slot, own->aff_req[i].tkey)) != SCHED_NOID)
                rc |= tmap_add(&d->aff[k], own->aff_req[i].tkey, v, sign);
    for (i = 0; i < own->nanti_req; i++)
        if (sched_ipa_term_matches(&own->anti_req[i], q->nsid, q->labels, q->nlabels, NULL) &&
            (v = node_label(c, slot, own->anti_req[i].tkey)) != SCHED_NOID)
            rc |= tmap_add(&d->anti[k], own->anti_req[i].tkey, v, sign);
    return rc;
}

int sched_ipa_dry_update(const struct sched_cluster *c, const struct sched_cpod *cp,
                         struct sched_ipa_dry *d, const struct sched_pod *p, int sign)
{
    if (!d)
        return 0;
    return dry_count(c, cp->ipa, d, 0, p, sign) ? -ENOMEM : 0;
}

int sched_ipa_dry_nominate(const struct sched_cluster *c, const struct sched_cpod *cp,
                           struct sched_ipa_dry *d, const struct sched_pod *p)
{
    if (!d)
        return 0;
    d->nnom++;
    return dry_count(c, cp->ipa, d, 1, p, +1) ? -ENOMEM : 0;
}

uint32_t sched_ipa_dry_filter(const struct sched_cluster *c, const struct sched_cpod *cp,
                              const struct sched_ipa_dry *d, uint32_t slot)
{
    const struct tmap *ex[2], *aff[2], *anti[2];
    uint32_t r;
    bool un;
    int i;

    if (!d)
        return 0;
    for (i = 0; i < 2; i++) {
        ex[i] = &d->ex[i];
        aff[i] = &d->aff[i];
        anti[i] = &d->anti[i];
    }
    /* with the nominated pods first, then (when that passed) without them */
    if (d->nnom && (r = filter_with(c, cp->ipa, ex, aff, anti, 2, slot, &un)))
        return r;
    return filter_with(c, cp->ipa, ex, aff, anti, 1, slot, &un);
}
