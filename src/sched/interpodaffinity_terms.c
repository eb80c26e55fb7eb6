/* interpodaffinity_terms.c - pod affinity and anti-affinity terms (fwk.AffinityTerm) compiled
 * to interned ids once, and matched against a pod's namespace and labels; the copies, hashes
 * and equality InterPodAffinity's index keys its counters and groups by. */
#include "sched/interpodaffinity-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/intern-int.h"
#include "sched/plugins-int.h"
#include "sched/sched-int.h"

bool sched_ipa_lsel_matches(const struct sched_lsel *sel, const struct sched_idlabel *l, uint32_t n)
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

bool sched_ipa_term_matches(const struct sched_pterm *t, uint32_t nsid,
                            const struct sched_idlabel *labels, uint32_t nlabels,
                            const struct sched_ns *ns)
{
    bool ns_ok = false;
    uint32_t i;

    for (i = 0; i < t->nns && !ns_ok; i++)
        ns_ok = t->ns[i] == nsid;
    if (!ns_ok)
        ns_ok = sched_ipa_lsel_matches(&t->nssel, ns ? ns->labels : NULL, ns ? ns->nlabels : 0);
    return ns_ok && sched_ipa_lsel_matches(&t->sel, labels, nlabels);
}

/* all_match is podMatchesAllAffinityTerms: false for no terms; namespace labels nil */
bool sched_ipa_all_match(const struct sched_pterm *t, uint32_t n, uint32_t nsid,
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

bool sched_ipa_pod_has_terms(const struct kube_pod *pod)
{
    const struct kube_pod_extra *x = kube_pod_ext(pod);

    return x->pod_affinity.nrequired || x->pod_affinity.npreferred ||
           x->pod_anti_affinity.nrequired || x->pod_anti_affinity.npreferred;
}

/* terms_build compiles every pod affinity term of pod into one malloc'ed block */
struct sched_pterms *sched_ipa_terms_build(struct sched_cluster *c, const struct kube_pod *pod,
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
struct sched_pterm *sched_ipa_terms_copy(const struct sched_pterm *t, uint32_t n)
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
uint32_t sched_ipa_terms_hash(const struct sched_pterm *t, uint32_t n, bool weighted)
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

bool sched_ipa_terms_equal(const struct sched_pterm *a, const struct sched_pterm *b, uint32_t n,
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
bool sched_ipa_term_never(const struct sched_pterm *t)
{
    return !t->sel.present || (!t->nns && !t->nssel.present);
}

/* term_anchor: a label every pod t selects carries, key In values (the first such requirement),
 * when there is one: *n = 0 otherwise */
void sched_ipa_term_anchor(const struct sched_pterm *t, uint32_t *key, const uint32_t **values,
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
