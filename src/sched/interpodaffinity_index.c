/* interpodaffinity_index.c - InterPodAffinity's counts kept as pods and nodes come and go (the
 * index below), so that a cycle costs the number of distinct terms it looks at, not the number
 * of pods; the cluster's hooks that feed it; the topology pair map the counts are kept in.
 * Pods count only on nodes present in the cluster, as in kube-scheduler's snapshot. */
#include "sched/interpodaffinity-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/intern-int.h"
#include "sched/plugins-int.h"
#include "sched/sched-int.h"

/* ---------------------------------------------------------------- topology pair maps */

void sched_tmap_release(struct tmap *m)
{
    free(m->e);
    memset(m, 0, sizeof(*m));
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
        for (j = sched_tmap_hash(m->e[i].key) & (cap - 1); e[j].key != TMAP_EMPTY;
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
int sched_tmap_add(struct tmap *m, uint32_t key, uint32_t value, int64_t d)
{
    uint64_t k = (uint64_t)key << 32 | value;
    uint32_t i = 0;
    int64_t before;

    if (m->cap)
        for (i = sched_tmap_hash(k) & (m->cap - 1); m->e[i].key != TMAP_EMPTY && m->e[i].key != k;
             i = (i + 1) & (m->cap - 1))
            ;
    if (!m->cap || m->e[i].key == TMAP_EMPTY) {
        if ((m->n + 1) * 2 > m->cap) {
            if (tmap_grow(m))
                return -ENOMEM;
            for (i = sched_tmap_hash(k) & (m->cap - 1); m->e[i].key != TMAP_EMPTY;
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
    return sched_tmap_hash((uint64_t)key << 32 | value);
}

struct ipa_anchor *sched_ipa_anchor_find(struct sched_ipa_index *x, uint32_t key, uint32_t value,
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
    struct ipa_anchor *a = sched_ipa_anchor_find(x, l->key, l->value, sign > 0);
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
        struct ipa_anchor *a = sched_ipa_anchor_find(x, key, vals[i], true);
        if (!a || pvec_push(group ? &a->grps : &a->ctrs, item)) {
            while (i--) {
                a = sched_ipa_anchor_find(x, key, vals[i], false);
                pvec_remove(group ? &a->grps : &a->ctrs, item);
                anchor_drop(x, a);
            }
            if ((a = sched_ipa_anchor_find(x, key, vals[i], false)))
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
        struct ipa_anchor *a = sched_ipa_anchor_find(x, key, vals[i], false);
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

    if (!sched_ipa_all_match(k->cl, k->ncl, q->nsid, q->labels, q->nlabels))
        return;
    for (i = 0; i < k->ncl; i++)
        if ((v = sched_ipa_node_label(c, slot, k->cl[i].tkey)) != SCHED_NOID &&
            sched_tmap_add(&k->counts, k->cl[i].tkey, v, sign))
            x->broken = true;
}

static void group_count(const struct sched_cluster *c, struct sched_ipa_index *x,
                        struct ipa_group *g, uint32_t slot, int sign)
{
    uint32_t v = sched_ipa_node_label(c, slot, g->t->tkey);

    if (v != SCHED_NOID && sched_tmap_add(&g->counts, g->t->tkey, v, sign))
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
    sched_tmap_release(&k->counts);
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
    sched_tmap_release(&g->counts);
    free(g->t);
    free(g);
}

static uint32_t group_hash(uint8_t kind, const struct sched_pterm *t)
{
    return sched_hash_bytes(&kind, 1, sched_ipa_terms_hash(t, 1, true));
}

/* group_find returns the group of term t of kind, creating it (empty) when create; NULL when
 * absent or out of memory */
static struct ipa_group *group_find(struct sched_ipa_index *x, uint8_t kind,
                                    const struct sched_pterm *t, bool create)
{
    uint32_t h = group_hash(kind, t);
    struct ipa_group *g;

    for (g = x->gtab[h & x->gmask]; g; g = g->hnext)
        if (g->hash == h && g->kind == kind && sched_ipa_terms_equal(g->t, t, 1, true))
            return g;
    if (!create || !(g = calloc(1, sizeof(*g))))
        return NULL;
    g->hash = h;
    g->kind = kind;
    if (!(g->t = sched_ipa_terms_copy(t, 1)) || pvec_push(&x->groups, g)) {
        free(g->t);
        free(g);
        return NULL;
    }
    g->pos = x->groups.n - 1;
    g->never = sched_ipa_term_never(g->t);
    sched_ipa_term_anchor(g->t, &g->akey, &g->avals, &g->navals);
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
        const struct ipa_anchor *a =
            sched_ipa_anchor_find(x, q->labels[i].key, q->labels[i].value, false);
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
struct sched_ipa_index *sched_ipa_index_ready(struct sched_cluster *c)
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
struct ipa_counter *sched_ipa_counter_get(struct sched_cluster *c, struct sched_ipa_index *x,
                                          const struct sched_pterm *t, uint32_t n)
{
    uint32_t h = sched_ipa_terms_hash(t, n, false), i, k;
    struct ipa_counter *e;

    for (e = x->ctab[h & x->cmask]; e; e = e->hnext)
        if (e->hash == h && e->ncl == n && sched_ipa_terms_equal(e->cl, t, n, false))
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
    if (!(e->cl = sched_ipa_terms_copy(t, n)) || pvec_push(&x->counters, e)) {
        free(e->cl);
        free(e);
        return NULL;
    }
    e->pos = x->counters.n - 1;
    for (i = 0; i < n; i++)
        e->never |= sched_ipa_term_never(&e->cl[i]);
    sched_ipa_term_anchor(&e->cl[0], &e->akey, &e->avals, &e->navals);
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
        const struct ipa_anchor *a = sched_ipa_anchor_find(x, e->akey, e->avals[k], false);
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
void sched_ipa_groups_sweep(struct sched_ipa_index *x)
{
    uint32_t i;

    for (i = x->groups.n; x->nempty && i-- > 0;) {
        struct ipa_group *g = x->groups.v[i];
        if (!g->members)
            group_free(x, g);
    }
}

/* ---------------------------------------------------------------- pods and nodes */

int sched_ipa_pod_build(struct sched_cluster *c, const struct kube_pod *pod, struct sched_pod *p)
{
    int rc;

    /* p->nsid and p->labels are the cluster's (pod_build): only the terms are ours */
    p->terms = NULL;
    if (sched_ipa_pod_has_terms(pod) && !(p->terms = sched_ipa_terms_build(c, pod, &rc)))
        return rc;
    return 0;
}

void sched_ipa_pod_release(struct sched_pod *p)
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
    struct sched_ipa_index *x = sched_ipa_index_ready(c);
    const struct ipa_anchor *a;

    *pods = NULL;
    *n = 0;
    if (!x || track_key(c, x, key)) {
        if (x)
            x->broken = true;
        return -ENOMEM;
    }
    if ((a = sched_ipa_anchor_find(x, key, value, false))) {
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

void sched_ipa_cluster_release(struct sched_cluster *c)
{
    free(c->aff_pods);
    index_free(c->ipa_idx);
    c->ipa_idx = NULL;
}
