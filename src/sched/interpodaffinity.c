/* interpodaffinity.c - kube-scheduler's InterPodAffinity (pkg/scheduler/framework/plugins/
 * interpodaffinity, v1.37 with InterPodAffinityHostnameFastPath off, its default): pods' terms
 * compiled to interned ids once, PreFilter's three counts by topology pair (existing pods
 * matching the incoming pod's required affinity, its required anti-affinity, and existing pods
 * whose required anti-affinity matches it), the Filter on those counts, PreScore's score by
 * topology pair and NormalizeScore. Pods count only on nodes present in the cluster, as in
 * kube-scheduler's snapshot.
 *
 * kube-scheduler walks every pod (or every pod with terms) in PreFilter and PreScore, once per
 * cycle. Here the counts are kept as pods and nodes come and go (interpodaffinity_index.c; the
 * terms are interpodaffinity_terms.c's), so a cycle
 * costs the number of distinct terms it looks at, not the number of pods. The reference path
 * (reference.c) evaluates the same rules by scanning every pod for every node instead. */
#include "sched/plugins-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/cluster-int.h"
#include "sched/intern-int.h"
#include "sched/interpodaffinity-int.h"
#include "sched/sched-int.h"

#define HARD_POD_AFFINITY_WEIGHT 1 /* InterPodAffinityArgs default */

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
        n += sched_ipa_lsel_matches(&t->nssel, c->nss[i].labels, c->nss[i].nlabels);
    if (!(ns = malloc((t->nns + n + 1) * sizeof(*ns))))
        return -ENOMEM;
    memcpy(ns, t->ns, t->nns * sizeof(*ns));
    n = t->nns;
    for (i = 0; i < c->nnss; i++)
        if (sched_ipa_lsel_matches(&t->nssel, c->nss[i].labels, c->nss[i].nlabels))
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
    struct ipa_counter *k = sched_ipa_counter_get(c, s->idx, t, n);

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
            const struct ipa_anchor *a = sched_ipa_anchor_find(
                (struct sched_ipa_index *)x, s->labels[i].key, s->labels[i].value, false);
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
    bool has_terms = sched_ipa_pod_has_terms(pod);
    uint32_t i, k;
    int rc = 0;

    cp->ipa = NULL;
    if (!has_terms && !c->naff_pods)
        return 0; /* PreFilter and PreScore both skip */
    if (!(b = calloc(1, sizeof(*b))))
        goto nomem;
    s = &b->s;
    cp->ipa = (struct sched_ipa *)b;
    if (!(s->idx = sched_ipa_index_ready(c)))
        goto nomem;
    if (!s->idx->states && s->idx->nempty)
        sched_ipa_groups_sweep(s->idx);
    s->idx->states++;
    if ((s->nsid = sched_intern_add(&c->strs, pod->namespace_)) == SCHED_NOID ||
        sched_intern_labels_dup(&c->strs, &pod->labels, &s->labels, &s->nlabels))
        goto nomem;
    s->ns = sched_cluster_find_namespace(c, s->nsid);
    if (has_terms) {
        struct sched_pterm *lists[4];
        uint32_t counts[4];

        if (!(s->own = own = sched_ipa_terms_build(c, pod, &rc)))
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
        s->self_match =
            sched_ipa_all_match(own->aff_req, own->naff_req, s->nsid, s->labels, s->nlabels);
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
        n += sched_tmap_get(d[i], key, value);
    return n;
}

/* tmap_holds: the pair was ever added to m */
static bool tmap_holds(const struct tmap *m, uint64_t k)
{
    uint32_t i;

    if (!m->n)
        return false;
    for (i = sched_tmap_hash(k) & (m->cap - 1); m->e[i].key != TMAP_EMPTY;
         i = (i + 1) & (m->cap - 1))
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
            was = sched_tmap_get(base, key, value);
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
            if ((v = sched_ipa_node_label(c, slot, key)) == SCHED_NOID) {
                *unresolvable = true;
                return c->r_ipa_aff;
            }
            if (sched_tmap_get(&s->aff->counts, key, v) + dsum(daff, nd, key, v) <= 0)
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
        if ((v = sched_ipa_node_label(c, slot, key)) == SCHED_NOID)
            continue;
        /* (the terms with the same key share their counts: antiAffinityCounts is one map) */
        for (n = dsum(danti, nd, key, v), j = 0; j < own->nanti_req; j++)
            n += sched_tmap_get(&s->anti[j]->counts, key, v);
        if (n > 0)
            return c->r_ipa_anti;
    }
    for (i = 0; i < s->nex; i++) {
        uint32_t key = s->ex[i]->t->tkey;
        int64_t n;
        if ((v = sched_ipa_node_label(c, slot, key)) == SCHED_NOID)
            continue;
        if (!nd) {
            if (sched_tmap_get(&s->ex[i]->counts, key, v) > 0)
                return c->r_ipa_existing;
            continue;
        }
        for (n = dsum(dex, nd, key, v), j = 0; j < s->nex; j++)
            n += sched_tmap_get(&s->ex[j]->counts, key, v);
        if (n > 0)
            return c->r_ipa_existing;
    }
    /* the dry run's pairs: the nominated pods' terms have no group among those above */
    for (i = 0; i < nd; i++)
        for (f = 0; f < dex[i]->cap; f++) {
            uint64_t k = dex[i]->e[f].key;
            uint32_t key = (uint32_t)(k >> 32);
            int64_t n;
            if (k == TMAP_EMPTY || (v = sched_ipa_node_label(c, slot, key)) != (uint32_t)k)
                continue;
            for (n = dsum(dex, nd, key, v), j = 0; j < s->nex; j++)
                n += sched_tmap_get(&s->ex[j]->counts, key, v);
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
        if ((v = sched_ipa_node_label(c, slot, s->score[i].tkey)) != SCHED_NOID)
            score += s->score[i].w * sched_tmap_get(s->score[i].m, s->score[i].tkey, v);
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
        sched_tmap_release(&d->ex[i]);
        sched_tmap_release(&d->aff[i]);
        sched_tmap_release(&d->anti[i]);
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
            (v = sched_ipa_node_label(c, slot, t->tkey)) != SCHED_NOID)
            rc |= sched_tmap_add(&d->ex[k], t->tkey, v, sign);
    }
    if (!own)
        return rc;
    if (sched_ipa_all_match(own->aff_req, own->naff_req, q->nsid, q->labels, q->nlabels))
        for (i = 0; i < own->naff_req; i++)
            if ((v = sched_ipa_node_label(c, slot, own->aff_req[i].tkey)) != SCHED_NOID)
                rc |= sched_tmap_add(&d->aff[k], own->aff_req[i].tkey, v, sign);
    for (i = 0; i < own->nanti_req; i++)
        if (sched_ipa_term_matches(&own->anti_req[i], q->nsid, q->labels, q->nlabels, NULL) &&
            (v = sched_ipa_node_label(c, slot, own->anti_req[i].tkey)) != SCHED_NOID)
            rc |= sched_tmap_add(&d->anti[k], own->anti_req[i].tkey, v, sign);
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
