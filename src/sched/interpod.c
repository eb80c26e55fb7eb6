/* interpod.c - kube-scheduler's InterPodAffinity (pkg/scheduler/framework/plugins/
 * interpodaffinity, v1.37 with InterPodAffinityHostnameFastPath off, its default): pods' terms
 * compiled to interned ids once, PreFilter's three counts by topology pair (existing pods
 * matching the incoming pod's required affinity, its required anti-affinity, and existing pods
 * whose required anti-affinity matches it), the Filter on those counts, PreScore's score by
 * topology pair and NormalizeScore. Pods count only on nodes present in the cluster, as in
 * kube-scheduler's snapshot. The reference path (reference.c) evaluates the same rules by
 * scanning every pod for every node instead of counting. */
#include "sched/interpod.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/intern.h"
#include "sched/sched-int.h"

#define HARD_POD_AFFINITY_WEIGHT 1 /* InterPodAffinityArgs default */

/* ---------------------------------------------------------------- topology pair maps */

/* counts by (topology key id, value id), open addressing; entries that come back to 0 stay as
 * keys, and live counts the non-zero ones (kube-scheduler deletes them: len(map) == live) */
struct tmap {
    uint64_t *keys; /* TMAP_EMPTY when free */
    int64_t *vals;
    uint32_t cap, n, live;
    uint32_t *dkeys; /* the distinct topology keys seen */
    uint32_t ndkeys, cdkeys;
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
    free(m->keys);
    free(m->vals);
    free(m->dkeys);
    memset(m, 0, sizeof(*m));
}

static int64_t tmap_get(const struct tmap *m, uint32_t key, uint32_t value)
{
    uint64_t k = (uint64_t)key << 32 | value;
    uint32_t i;

    if (!m->cap)
        return 0;
    for (i = tmap_hash(k) & (m->cap - 1); m->keys[i] != TMAP_EMPTY; i = (i + 1) & (m->cap - 1))
        if (m->keys[i] == k)
            return m->vals[i];
    return 0;
}

static int tmap_grow(struct tmap *m)
{
    uint32_t cap = m->cap ? m->cap * 2 : 16, i, j;
    uint64_t *keys = malloc(cap * sizeof(*keys));
    int64_t *vals = malloc(cap * sizeof(*vals));

    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -ENOMEM;
    }
    for (i = 0; i < cap; i++)
        keys[i] = TMAP_EMPTY;
    for (i = 0; i < m->cap; i++) {
        if (m->keys[i] == TMAP_EMPTY)
            continue;
        for (j = tmap_hash(m->keys[i]) & (cap - 1); keys[j] != TMAP_EMPTY; j = (j + 1) & (cap - 1))
            ;
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

static int tmap_add(struct tmap *m, uint32_t key, uint32_t value, int64_t d)
{
    uint64_t k = (uint64_t)key << 32 | value;
    uint32_t i;
    int64_t before;

    if ((m->n + 1) * 2 > m->cap && tmap_grow(m))
        return -ENOMEM;
    for (i = tmap_hash(k) & (m->cap - 1); m->keys[i] != TMAP_EMPTY && m->keys[i] != k;
         i = (i + 1) & (m->cap - 1))
        ;
    if (m->keys[i] == TMAP_EMPTY) {
        uint32_t j;
        m->keys[i] = k;
        m->vals[i] = 0;
        m->n++;
        for (j = 0; j < m->ndkeys && m->dkeys[j] != key; j++)
            ;
        if (j == m->ndkeys) {
            if (m->ndkeys == m->cdkeys) {
                uint32_t c = m->cdkeys ? m->cdkeys * 2 : 4;
                uint32_t *p = realloc(m->dkeys, c * sizeof(*p));
                if (!p)
                    return -ENOMEM;
                m->dkeys = p;
                m->cdkeys = c;
            }
            m->dkeys[m->ndkeys++] = key;
        }
    }
    before = m->vals[i];
    m->vals[i] += d;
    if (before == 0 && m->vals[i] != 0)
        m->live++;
    else if (before != 0 && m->vals[i] == 0)
        m->live--;
    return 0;
}

static int tmap_copy(struct tmap *dst, const struct tmap *src)
{
    memset(dst, 0, sizeof(*dst));
    if (src->cap) {
        dst->keys = malloc(src->cap * sizeof(*dst->keys));
        dst->vals = malloc(src->cap * sizeof(*dst->vals));
        if (!dst->keys || !dst->vals)
            goto fail;
        memcpy(dst->keys, src->keys, src->cap * sizeof(*dst->keys));
        memcpy(dst->vals, src->vals, src->cap * sizeof(*dst->vals));
    }
    if (src->cdkeys) {
        if (!(dst->dkeys = malloc(src->cdkeys * sizeof(*dst->dkeys))))
            goto fail;
        memcpy(dst->dkeys, src->dkeys, src->ndkeys * sizeof(*dst->dkeys));
    }
    dst->cap = src->cap;
    dst->n = src->n;
    dst->live = src->live;
    dst->ndkeys = src->ndkeys;
    dst->cdkeys = src->cdkeys;
    return 0;
fail:
    tmap_free(dst);
    return -ENOMEM;
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

/* sizes of what compiling terms allocates, for one block */
static size_t lsel_size(const struct kube_label_selector *s)
{
    size_t n = s->nreqs * sizeof(struct sched_creq), i;

    for (i = 0; i < s->nreqs; i++)
        n += s->reqs[i].nvalues * sizeof(uint32_t);
    return n;
}

struct block {
    char *p, *end;
};

static void *take(struct block *b, size_t n)
{
    void *p = b->p;

    n = (n + 7) & ~(size_t)7;
    b->p += n;
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
    return sizeof(struct sched_pterm) + lsel_size(&t->label_selector) +
           lsel_size(&t->namespace_selector) + (t->nnamespaces + 1) * sizeof(uint32_t) + 8 * 4;
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
    return pod->pod_affinity.nrequired || pod->pod_affinity.npreferred ||
           pod->pod_anti_affinity.nrequired || pod->pod_anti_affinity.npreferred;
}

/* terms_build compiles every pod affinity term of pod into one malloc'ed block */
static struct sched_pterms *terms_build(struct sched_cluster *c, const struct kube_pod *pod,
                                        int *rc)
{
    const struct kube_pod_affinity_term *lists[4] = {
        pod->pod_affinity.required, pod->pod_anti_affinity.required, pod->pod_affinity.preferred,
        pod->pod_anti_affinity.preferred};
    size_t counts[4] = {pod->pod_affinity.nrequired, pod->pod_anti_affinity.nrequired,
                        pod->pod_affinity.npreferred, pod->pod_anti_affinity.npreferred};
    struct sched_pterm **outs[4];
    uint32_t *nouts[4];
    struct sched_pterms *pt;
    struct block b;
    size_t size = sizeof(*pt) + 64, i, k;

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
}

int sched_ipa_pod_attach(struct sched_cluster *c, struct sched_pod *p)
{
    if (!p->terms)
        return 0;
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
    return 0;
}

void sched_ipa_pod_detach(struct sched_cluster *c, struct sched_pod *p)
{
    uint32_t i = p->aff_index;

    if (!p->terms || i >= c->naff_pods || c->aff_pods[i] != p)
        return;
    c->aff_pods[i] = c->aff_pods[--c->naff_pods];
    c->aff_pods[i]->aff_index = i;
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
}

/* ---------------------------------------------------------------- the cycle's state */

struct sched_ipa {
    struct sched_pterms *own; /* the incoming pod's terms, namespaceSelector merged */
    uint32_t nsid;
    struct sched_idlabel *labels;
    uint32_t nlabels;
    const struct sched_ns *ns; /* the incoming pod's namespace, NULL when unknown */
    bool filter_on, score_on, self_match;
    struct tmap existing, aff, anti; /* PreFilter */
    struct tmap score;               /* PreScore */
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

static void add_pod_counts(const struct sched_cluster *c, struct sched_ipa *s,
                           const struct sched_pod *q, uint32_t slot, int sign, int *rc)
{
    const struct sched_pterms *own = s->own;
    uint32_t i, v;

    /* existing pods' required anti-affinity against the incoming pod */
    if (q->terms)
        for (i = 0; i < q->terms->nanti_req; i++) {
            const struct sched_pterm *t = &q->terms->anti_req[i];
            if (sched_ipa_term_matches(t, s->nsid, s->labels, s->nlabels, s->ns) &&
                (v = node_label(c, slot, t->tkey)) != SCHED_NOID)
                *rc |= tmap_add(&s->existing, t->tkey, v, sign);
        }
    if (!own)
        return;
    if (all_match(own->aff_req, own->naff_req, q->nsid, q->labels, q->nlabels))
        for (i = 0; i < own->naff_req; i++)
            if ((v = node_label(c, slot, own->aff_req[i].tkey)) != SCHED_NOID)
                *rc |= tmap_add(&s->aff, own->aff_req[i].tkey, v, sign);
    for (i = 0; i < own->nanti_req; i++)
        if (sched_ipa_term_matches(&own->anti_req[i], q->nsid, q->labels, q->nlabels, NULL) &&
            (v = node_label(c, slot, own->anti_req[i].tkey)) != SCHED_NOID)
            *rc |= tmap_add(&s->anti, own->anti_req[i].tkey, v, sign);
}

static void score_term(const struct sched_cluster *c, struct sched_ipa *s,
                       const struct sched_pterm *t, int32_t weight, uint32_t nsid,
                       const struct sched_idlabel *l, uint32_t nl, const struct sched_ns *ns,
                       uint32_t slot, int *rc)
{
    uint32_t v;

    if (sched_ipa_term_matches(t, nsid, l, nl, ns) &&
        (v = node_label(c, slot, t->tkey)) != SCHED_NOID) {
        *rc |= tmap_add(&s->score, t->tkey, v, weight);
        s->score_on = true;
    }
}

/* processExistingPod */
static void score_pod(const struct sched_cluster *c, struct sched_ipa *s, const struct sched_pod *q,
                      uint32_t slot, int *rc)
{
    const struct sched_pterms *own = s->own;
    uint32_t i;

    if (!c->slots[slot].nlabels)
        return;
    if (own) {
        for (i = 0; i < own->naff_pref; i++)
            score_term(c, s, &own->aff_pref[i], own->aff_pref[i].weight, q->nsid, q->labels,
                       q->nlabels, NULL, slot, rc);
        for (i = 0; i < own->nanti_pref; i++)
            score_term(c, s, &own->anti_pref[i], -own->anti_pref[i].weight, q->nsid, q->labels,
                       q->nlabels, NULL, slot, rc);
    }
    if (!q->terms)
        return;
    for (i = 0; i < q->terms->naff_req; i++)
        score_term(c, s, &q->terms->aff_req[i], HARD_POD_AFFINITY_WEIGHT, s->nsid, s->labels,
                   s->nlabels, s->ns, slot, rc);
    for (i = 0; i < q->terms->naff_pref; i++)
        score_term(c, s, &q->terms->aff_pref[i], q->terms->aff_pref[i].weight, s->nsid, s->labels,
                   s->nlabels, s->ns, slot, rc);
    for (i = 0; i < q->terms->nanti_pref; i++)
        score_term(c, s, &q->terms->anti_pref[i], -q->terms->anti_pref[i].weight, s->nsid,
                   s->labels, s->nlabels, s->ns, slot, rc);
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
    tmap_free(&b->s.existing);
    tmap_free(&b->s.aff);
    tmap_free(&b->s.anti);
    tmap_free(&b->s.score);
    for (i = 0; i < b->nmerged; i++)
        free(b->merged[i]);
    free(b->s.own);
    free(b->s.labels);
    free(b);
    cp->ipa = NULL;
}

int sched_ipa_compile(struct sched_cluster *c, const struct kube_pod *pod, struct sched_cpod *cp,
                      struct err *err)
{
    struct ipa_block *b;
    struct sched_ipa *s;
    struct sched_pterms *own;
    bool has_terms = pod_has_terms(pod), pref;
    uint32_t i, k, slot;
    int rc = 0;

    cp->ipa = NULL;
    if (!has_terms && !c->naff_pods)
        return 0; /* PreFilter and PreScore both skip */
    if (!(b = calloc(1, sizeof(*b))))
        goto nomem;
    s = &b->s;
    cp->ipa = (struct sched_ipa *)b;
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
    }
    own = s->own;
    /* PreFilter: existing anti-affinity from the pods with terms; the incoming pod's terms
     * against every pod */
    if (own && (own->naff_req || own->nanti_req)) {
        for (k = 0; k < c->norder; k++) {
            const struct sched_slot *sl = &c->slots[slot = c->order[k]];
            for (i = 0; i < sl->npods; i++)
                add_pod_counts(c, s, sl->pods[i], slot, +1, &rc);
        }
    } else {
        for (i = 0; i < c->naff_pods; i++) {
            const struct sched_pod *q = c->aff_pods[i];
            if (c->slots[q->slot].present)
                add_pod_counts(c, s, q, q->slot, +1, &rc);
        }
    }
    s->filter_on = s->existing.live || (own && (own->naff_req || own->nanti_req));
    /* PreScore: every pod when the incoming pod has preferred terms, else those with terms */
    pref = pod->pod_affinity.npreferred || pod->pod_anti_affinity.npreferred;
    if (pref) {
        for (k = 0; k < c->norder; k++) {
            const struct sched_slot *sl = &c->slots[slot = c->order[k]];
            for (i = 0; i < sl->npods; i++)
                score_pod(c, s, sl->pods[i], slot, &rc);
        }
    } else {
        for (i = 0; i < c->naff_pods; i++) {
            const struct sched_pod *q = c->aff_pods[i];
            if (c->slots[q->slot].present)
                score_pod(c, s, q, q->slot, &rc);
        }
    }
    if (rc)
        goto nomem;
    if (!s->filter_on && !s->score_on)
        sched_ipa_release(cp);
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

static uint32_t filter_on_maps(const struct sched_cluster *c, const struct sched_ipa *s,
                               const struct tmap *existing, const struct tmap *aff,
                               const struct tmap *anti, uint32_t slot, bool *unresolvable)
{
    const struct sched_pterms *own = s->own;
    const struct sched_slot *sl = &c->slots[slot];
    uint32_t i, v;

    *unresolvable = false;
    if (own && own->naff_req) {
        /* nodeTopologyMatchesAffinity */
        bool exist = true;
        for (i = 0; i < own->naff_req; i++) {
            if ((v = node_label(c, slot, own->aff_req[i].tkey)) == SCHED_NOID) {
                *unresolvable = true;
                return c->r_ipa_aff;
            }
            if (tmap_get(aff, own->aff_req[i].tkey, v) <= 0)
                exist = false;
        }
        if (!exist && !(aff->live == 0 && s->self_match)) {
            *unresolvable = true;
            return c->r_ipa_aff;
        }
    }
    if (own && anti->live)
        for (i = 0; i < own->nanti_req; i++)
            if ((v = node_label(c, slot, own->anti_req[i].tkey)) != SCHED_NOID &&
                tmap_get(anti, own->anti_req[i].tkey, v) > 0)
                return c->r_ipa_anti;
    if (existing->live)
        for (i = 0; i < existing->ndkeys; i++) {
            const struct sched_idlabel *x =
                sched_label_find(sl->labels, sl->nlabels, existing->dkeys[i]);
            if (x && tmap_get(existing, x->key, x->value) > 0)
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
    return filter_on_maps(c, s, &s->existing, &s->aff, &s->anti, slot, unresolvable);
}

int64_t sched_ipa_score(const struct sched_cluster *c, const struct sched_cpod *cp, uint32_t slot)
{
    const struct sched_ipa *s = cp->ipa;
    const struct sched_slot *sl = &c->slots[slot];
    int64_t score = 0;
    uint32_t i;

    if (!s || !s->score_on)
        return 0;
    for (i = 0; i < s->score.ndkeys; i++) {
        const struct sched_idlabel *x =
            sched_label_find(sl->labels, sl->nlabels, s->score.dkeys[i]);
        if (x)
            score += tmap_get(&s->score, x->key, x->value);
    }
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

struct sched_ipa_dry {
    struct tmap existing, aff, anti;
};

struct sched_ipa_dry *sched_ipa_dry_new(const struct sched_cpod *cp)
{
    const struct sched_ipa *s = cp->ipa;
    struct sched_ipa_dry *d;

    if (!s || !s->filter_on || !(d = calloc(1, sizeof(*d))))
        return NULL;
    if (tmap_copy(&d->existing, &s->existing) || tmap_copy(&d->aff, &s->aff) ||
        tmap_copy(&d->anti, &s->anti)) {
        sched_ipa_dry_free(d);
        return NULL;
    }
    return d;
}

void sched_ipa_dry_free(struct sched_ipa_dry *d)
{
    if (!d)
        return;
    tmap_free(&d->existing);
    tmap_free(&d->aff);
    tmap_free(&d->anti);
    free(d);
}

int sched_ipa_dry_update(const struct sched_cluster *c, const struct sched_cpod *cp,
                         struct sched_ipa_dry *d, const struct sched_pod *p, int sign)
{
    struct sched_ipa tmp;
    int rc = 0;

    if (!d)
        return 0;
    /* updateWithPod on the copies: the same counting as PreFilter, with a sign */
    tmp = *cp->ipa;
    tmp.existing = d->existing;
    tmp.aff = d->aff;
    tmp.anti = d->anti;
    add_pod_counts(c, &tmp, p, p->slot, sign, &rc);
    d->existing = tmp.existing;
    d->aff = tmp.aff;
    d->anti = tmp.anti;
    return rc ? -ENOMEM : 0;
}

uint32_t sched_ipa_dry_filter(const struct sched_cluster *c, const struct sched_cpod *cp,
                              const struct sched_ipa_dry *d, uint32_t slot)
{
    bool un;

    if (!d)
        return 0;
    return filter_on_maps(c, cp->ipa, &d->existing, &d->aff, &d->anti, slot, &un);
}
