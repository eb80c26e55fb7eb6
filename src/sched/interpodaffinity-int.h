/* interpodaffinity-int.h - what InterPodAffinity's three files share: the topology pair map
 * and the index that keeps the counts as pods and nodes change (interpodaffinity_index.c),
 * pod affinity terms compiled to interned ids (interpodaffinity_terms.c); the plugin itself,
 * interpodaffinity.c, reads both. Its hooks are in plugins-int.h. */
#ifndef SCHED_INTERPODAFFINITY_INT_H
#define SCHED_INTERPODAFFINITY_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "kube/object.h"
#include "sched/sched-int.h"

/* ---------------------------------------------------------------- topology pair maps */

/* Counts by (topology key id, value id), open addressing; entries that come back to 0 stay as
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

static inline uint32_t sched_tmap_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (uint32_t)k;
}

/* sched_tmap_get is the count of (key, value), 0 when m does not hold it */
static inline int64_t sched_tmap_get(const struct tmap *m, uint32_t key, uint32_t value)
{
    uint64_t k = (uint64_t)key << 32 | value;
    uint32_t i;

    if (!m->n)
        return 0;
    for (i = sched_tmap_hash(k) & (m->cap - 1); m->e[i].key != TMAP_EMPTY;
         i = (i + 1) & (m->cap - 1))
        if (m->e[i].key == k)
            return m->e[i].val;
    return 0;
}

/* sched_tmap_add adds d to the count of (key, value); it allocates only for a pair it has not
 * held before, so taking back what was added never fails. 0 or -ENOMEM. sched_tmap_release
 * frees m's entries and leaves it empty. */
int sched_tmap_add(struct tmap *m, uint32_t key, uint32_t value, int64_t d);
void sched_tmap_release(struct tmap *m);

/* ---------------------------------------------------------------- terms */

/* sched_ipa_node_label is the value id of key on the node at slot, SCHED_NOID when absent */
static inline uint32_t sched_ipa_node_label(const struct sched_cluster *c, uint32_t slot,
                                            uint32_t key)
{
    const struct sched_slot *s = &c->slots[slot];
    const struct sched_idlabel *x = sched_label_find(s->labels, s->nlabels, key);

    return x ? x->value : SCHED_NOID;
}

/* sched_ipa_lsel_matches: the selector matches the labels l (n, sorted by key id); a nil one
 * matches nothing. sched_ipa_all_match is podMatchesAllAffinityTerms: pod (nsid, l) matches
 * each of the n terms t (false for none; namespace labels nil). */
bool sched_ipa_lsel_matches(const struct sched_lsel *sel, const struct sched_idlabel *l,
                            uint32_t n);
bool sched_ipa_all_match(const struct sched_pterm *t, uint32_t n, uint32_t nsid,
                         const struct sched_idlabel *l, uint32_t nl);

/* sched_ipa_pod_has_terms: pod has pod affinity or anti-affinity terms. sched_ipa_terms_build
 * compiles every one of them into one malloc'ed block (free() it), NULL with *rc set when
 * out of memory. */
bool sched_ipa_pod_has_terms(const struct kube_pod *pod);
struct sched_pterms *sched_ipa_terms_build(struct sched_cluster *c, const struct kube_pod *pod,
                                           int *rc);

/* The index's keys: sched_ipa_terms_copy returns the n terms t in one malloc'ed block (free()
 * it), or NULL; sched_ipa_terms_hash and sched_ipa_terms_equal compare n terms with their
 * weights (weighted) or without; sched_ipa_term_never: t selects no pod at all (a nil label
 * selector, or no namespace); sched_ipa_term_anchor: a label every pod t selects carries, key
 * In values (the first such requirement), *n = 0 when there is none. */
struct sched_pterm *sched_ipa_terms_copy(const struct sched_pterm *t, uint32_t n);
uint32_t sched_ipa_terms_hash(const struct sched_pterm *t, uint32_t n, bool weighted);
bool sched_ipa_terms_equal(const struct sched_pterm *a, const struct sched_pterm *b, uint32_t n,
                           bool weighted);
bool sched_ipa_term_never(const struct sched_pterm *t);
void sched_ipa_term_anchor(const struct sched_pterm *t, uint32_t *key, const uint32_t **values,
                           uint32_t *n);

/* ---------------------------------------------------------------- the index (its file
 * says how it works) */

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

/* sched_ipa_index_ready returns the cluster's index, built (or rebuilt after a failed update)
 * from every pod when needed; NULL when out of memory. sched_ipa_counter_get returns the
 * counter of the n terms t, pinned (a cycle state unpins it), counted when new; NULL when out
 * of memory. sched_ipa_groups_sweep frees the groups no pod carries any more (between
 * cycles). sched_ipa_anchor_find returns the anchor of the label (key, value), made when
 * create; NULL when absent or out of memory. */
struct sched_ipa_index *sched_ipa_index_ready(struct sched_cluster *c);
struct ipa_counter *sched_ipa_counter_get(struct sched_cluster *c, struct sched_ipa_index *x,
                                          const struct sched_pterm *t, uint32_t n);
void sched_ipa_groups_sweep(struct sched_ipa_index *x);
struct ipa_anchor *sched_ipa_anchor_find(struct sched_ipa_index *x, uint32_t key, uint32_t value,
                                         bool create);

#endif
