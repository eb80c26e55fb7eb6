/* cycle.c - one scheduling cycle: PreFilter (NodeAffinity's name pin), filters in
 * kube-scheduler's order stopping at the first failure, on every node or, with node sampling,
 * from a rotating start until enough feasible nodes are found; scores of the feasible nodes,
 * normalisation and the tie-break. The fast path evaluates static filters once per node
 * class; the reference path (reference.c) evaluates each node from scratch, and both must
 * fill identical sched_nodeout rows. */
#include "sched/cycle-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/cluster-int.h"
#include "sched/framework-int.h"
#include "sched/intern-int.h"
#include "sched/plugins-int.h"
#include "sched/profile-int.h"
#include "sched/reference-int.h"
#include "sched/sched-int.h"

/* a score plugin's weight in p (NULL: the default profile's) */
#define WEIGHT(p, member) ((p) ? (p)->member : sched_profile_default.member)

/* ---------------------------------------------------------------- shape cache */

static bool shape_matches(const struct sched_shape *sh, const struct sched_profile *p,
                          const struct sched_cpod *cp, uint64_t key)
{
    uint32_t i;

    if (!sh->used || sh->score_key != key || sh->cpu != cp->cpu || sh->mem != cp->mem ||
        sh->eph != cp->eph || sh->nz_cpu != cp->nz_cpu || sh->nz_mem != cp->nz_mem ||
        sh->nsc != cp->nscalars || sh->gpu_aware != (p && p->gpu_aware) ||
        sh->gpu_rid != cp->gpu_rid)
        return false;
    for (i = 0; i < sh->nsc; i++)
        if (sh->sc[i].rid != cp->scalars[i].rid || sh->sc[i].req != cp->scalars[i].req)
            return false;
    return true;
}

/* shape_get returns the cache column for the pod's requests, reusing the least recently used
 * one when all are taken; NULL on ENOMEM. */
static struct sched_shape *shape_get(struct sched_cluster *c, const struct sched_profile *p,
                                     const struct sched_cpod *cp)
{
    struct sched_shape *sh, *victim = NULL;
    uint64_t key = sched_profile_score_key(p);
    uint32_t i;

    if (c->shape_slots < c->nslots) {
        /* more slots than the columns hold: they are rebuilt at the new size, with room for
         * an eighth more nodes (sized by slots in use, not by the slot arrays' capacity,
         * which may be twice as large) */
        for (i = 0; i < SCHED_MAX_SHAPES; i++) {
            free(c->shapes[i].dyn);
            memset(&c->shapes[i], 0, sizeof(c->shapes[i]));
        }
        c->shape_slots = c->nslots + c->nslots / 8 + 64;
    }
    for (i = 0; i < SCHED_MAX_SHAPES; i++) {
        sh = &c->shapes[i];
        if (shape_matches(sh, p, cp, key)) {
            sh->last_use = ++c->shape_clock;
            return sh;
        }
        if (!victim || (victim->used && (!sh->used || sh->last_use < victim->last_use)))
            victim = sh;
    }
    sh = victim;
    if (!sh->dyn && !(sh->dyn = malloc((size_t)c->shape_slots * sizeof(*sh->dyn))))
        return NULL;
    memset(sh->dyn, 0, (size_t)c->shape_slots * sizeof(*sh->dyn));
    sh->used = true;
    sh->last_use = ++c->shape_clock;
    sh->cpu = cp->cpu;
    sh->mem = cp->mem;
    sh->eph = cp->eph;
    sh->nz_cpu = cp->nz_cpu;
    sh->nz_mem = cp->nz_mem;
    sh->nsc = cp->nscalars;
    memcpy(sh->sc, cp->scalars, cp->nscalars * sizeof(cp->scalars[0]));
    sh->gpu_aware = p && p->gpu_aware;
    sh->gpu_rid = cp->gpu_rid;
    sh->score_key = key;
    return sh;
}

/* NodeResourcesFit's reasons and the resource scores of one node for one pod */
struct dyn {
    uint32_t mask; /* SCHED_FIT_* */
    bool unres;
    int32_t fit, bal, gpu;
};

static __attribute__((noinline)) void dyn_fill(const struct sched_cluster *c,
                                               const struct sched_profile *p,
                                               const struct sched_cpod *cp, struct dyn *d,
                                               uint32_t slot, bool bal_skip)
{
    const struct sched_hot *h = &c->hot[slot];
    struct sched_nodeuse use = sched_nodeuse_of(h);

    d->mask = sched_noderesources_filter(c, slot, cp, &use, NULL, &d->unres);
    d->fit = d->bal = d->gpu = 0;
    if (d->mask)
        return;
    if (sched_profile_fit_default(p))
        d->fit = (int32_t)sched_noderesources_least_allocated(
            h->alloc_cpu, sched_sat_add(h->nz_cpu, cp->nz_cpu), h->alloc_mem,
            sched_sat_add(h->nz_mem, cp->nz_mem));
    else
        d->fit = sched_noderesources_score_node(c, p, cp, slot);
    d->bal = bal_skip ? 0
                      : (int32_t)sched_noderesources_balanced(h->alloc_cpu, h->req_cpu, cp->cpu,
                                                              h->alloc_mem, h->req_mem, cp->mem);
    if (p && p->gpu_aware) {
        int64_t ga = h->alloc_gpu, gr = h->req_gpu;
        if (cp->gpu_rid != c->rid_gpu) {
            /* a profile naming another GPU resource than nvidia.com/gpu */
            const struct sched_scalar *x =
                cp->gpu_rid == SCHED_NOID ? NULL : sched_slot_scalar(&c->slots[slot], cp->gpu_rid);
            ga = x ? x->alloc : 0;
            gr = x ? x->req : 0;
        }
        if (cp->gpu_dra)
            sched_noderesources_gpu_dra(c, p, slot, &ga, &gr);
        d->gpu = (int32_t)sched_noderesources_gpu(p, ga, gr, cp->gpu);
    }
}

/* dyn_refill computes and caches the entry dyn_score wants */
static __attribute__((noinline)) int32_t dyn_refill(const struct sched_cluster *c,
                                                    const struct sched_profile *p,
                                                    const struct sched_cpod *cp,
                                                    struct sched_shape *sh, uint32_t slot,
                                                    bool bal_skip, int32_t gw)
{
    uint32_t gen = c->lite[slot].gen & SCHED_DYN_GEN_MASK;
    struct dyn d;
    int32_t score;

    dyn_fill(c, p, cp, &d, slot, bal_skip);
    if (d.mask) {
        sh->dyn[slot] = gen;
        return -1;
    }
    score = WEIGHT(p, w_fit) * d.fit + WEIGHT(p, w_balanced) * d.bal + gw * d.gpu;
    /* a score the entry cannot hold (a profile weighting GPUs far more) is not cached */
    sh->dyn[slot] = score <= SCHED_DYN_SCORE_MAX
                        ? gen | SCHED_DYN_FITS | (uint32_t)score << SCHED_DYN_SCORE_SHIFT
                        : 0;
    return score;
}

/* dyn_score is the fast path's view of the node: -1 when the pod's requests do not fit, else
 * the sum of its resource scores (gw = GPUPlacement's weight, 0 when off) */
static inline int32_t dyn_score(const struct sched_cluster *c, const struct sched_profile *p,
                                const struct sched_cpod *cp, struct sched_shape *sh, uint32_t slot,
                                bool bal_skip, int32_t gw)
{
    uint32_t e = sh->dyn[slot];

    if ((e & SCHED_DYN_GEN_MASK) != (c->lite[slot].gen & SCHED_DYN_GEN_MASK))
        return dyn_refill(c, p, cp, sh, slot, bal_skip, gw);
    return e & SCHED_DYN_FITS ? (int32_t)(e >> SCHED_DYN_SCORE_SHIFT) : -1;
}

/* ---------------------------------------------------------------- detailed cycle */

/* fast path for one node, with the class verdicts computed lazily */
static void fast_node(struct sched_cluster *c, const struct sched_profile *p,
                      const struct sched_cpod *cp, uint32_t slot, struct sched_cverdict *vc,
                      uint8_t *vc_done, bool bal_skip, struct sched_nodeout *o)
{
    const struct sched_lite *l = &c->lite[slot];
    const struct sched_cverdict *v;
    struct dyn d;

    if (!vc_done[l->cls]) {
        sched_framework_filter_class(c, p, cp, l->cls, &vc[l->cls]);
        vc_done[l->cls] = 1;
    }
    v = &vc[l->cls];
    o->unresolvable = true;
    if (v->plugin == SCHED_PL_UNSCHEDULABLE) {
        o->plugin = SCHED_PL_UNSCHEDULABLE;
        o->reason = v->reason;
        return;
    }
    if (cp->has_node_name && l->name != cp->node_name) {
        o->plugin = SCHED_PL_NODE_NAME;
        o->reason = SCHED_R_NODE_NAME;
        return;
    }
    if (v->plugin) {
        o->plugin = v->plugin;
        o->reason = v->reason;
        return;
    }
    if (cp->affinity_by_name && !sched_nodeaffinity_filter_name(cp, v->term_mask, l->name)) {
        o->plugin = SCHED_PL_AFFINITY;
        o->reason = SCHED_R_AFFINITY;
        return;
    }
    o->unresolvable = false;
    if ((cp->portmask & l->portmask) &&
        !sched_nodeports_filter(c, c->slots[slot].ports, c->slots[slot].cports, cp)) {
        o->plugin = SCHED_PL_PORTS;
        o->reason = SCHED_R_PORTS;
        return;
    }
    if (l->nnom && sched_framework_filter_nominated(c, slot, cp, o))
        return;
    /* not from the fast path's cache, which keeps only what choosing a node needs */
    dyn_fill(c, p, cp, &d, slot, bal_skip);
    if (d.mask) {
        o->plugin = SCHED_PL_FIT;
        o->reason = d.mask;
        o->unresolvable = d.unres;
        return;
    }
    if (sched_ipa_filter_on(cp) && (o->reason = sched_ipa_filter(c, cp, slot, &o->unresolvable))) {
        o->plugin = SCHED_PL_INTERPOD;
        return;
    }
    o->ipa_raw = sched_ipa_score(c, cp, slot);
    o->img_raw = sched_image_score(c, cp, slot);
    o->taint_raw = v->taint_score;
    o->aff_raw = v->affinity_score;
    if (cp->preferred_by_name)
        o->aff_raw += sched_nodeaffinity_score_name(c, cp, l->cls, l->name);
    o->fit_raw = d.fit;
    o->bal_raw = d.bal;
    o->gpu_raw = d.gpu;
}

void sched_cycle_release(struct sched_cycle *cy)
{
    memset(cy, 0, sizeof(*cy));
}

static int scratch_reserve(struct sched_cluster *c, uint32_t n, uint32_t ncls)
{
    if (n + 1 > c->s_cap) {
        uint32_t cap = (n + 1) * 2;
        free(c->s_out);
        free(c->s_ties);
        free(c->s_inset);
        free(c->s_feas);
        free(c->s_feas_cls);
        free(c->s_feas_score);
        free(c->s_feas_aff);
        c->s_out = malloc(cap * sizeof(*c->s_out));
        c->s_ties = malloc(cap * sizeof(*c->s_ties));
        c->s_inset = malloc(cap);
        c->s_feas = malloc(cap * sizeof(*c->s_feas));
        c->s_feas_cls = malloc(cap * sizeof(*c->s_feas_cls));
        c->s_feas_score = malloc(cap * sizeof(*c->s_feas_score));
        c->s_feas_aff = malloc(cap * sizeof(*c->s_feas_aff));
        c->s_cap = c->s_out && c->s_ties && c->s_inset && c->s_feas && c->s_feas_cls &&
                           c->s_feas_score && c->s_feas_aff
                       ? cap
                       : 0;
        if (!c->s_cap)
            return -ENOMEM;
    }
    if (ncls + 1 > c->s_vccap) {
        uint32_t cap = (ncls + 1) * 2;
        free(c->s_vc);
        free(c->s_vc_done);
        free(c->s_cls_total);
        free(c->s_cls_stamp);
        c->s_vc = malloc(cap * sizeof(*c->s_vc));
        c->s_vc_done = malloc(cap);
        c->s_cls_total = malloc(cap * sizeof(*c->s_cls_total));
        c->s_cls_stamp = calloc(cap, sizeof(*c->s_cls_stamp));
        c->s_vccap = c->s_vc && c->s_vc_done && c->s_cls_total && c->s_cls_stamp ? cap : 0;
        if (!c->s_vccap)
            return -ENOMEM;
    }
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return x < y ? -1 : x > y;
}

/* sample_plan: a cycle over m candidate nodes starts at position *start of them and stops
 * once *limit feasible nodes are found; without sampling, position 0 and no early stop. */
static void sample_plan(const struct sched_cluster *c, const struct sched_profile *p, uint32_t m,
                        uint32_t *start, uint32_t *limit)
{
    *start = 0;
    *limit = m;
    if (!sched_sampling_on(p) || !m)
        return;
    *start = c->next_start % m;
    *limit = sched_num_feasible_nodes_to_find(p->percentage_of_nodes_to_score, m);
}

/* nominated_first returns the order index of the node named by the pod's
 * status.nominatedNodeName, which kube-scheduler filters before the others (PreferNominatedNode,
 * whatever percentageOfNodesToScore says) when the node exists and NodeAffinity's PreFilter
 * keeps it. SCHED_NOID otherwise. */
static uint32_t nominated_first(const struct sched_cluster *c, const struct sched_cpod *cp)
{
    const char *name = cp->src ? cp->src->nominated_node_name : NULL;
    uint32_t id, slot, i;

    if (!name || !*name || cp->prefilter_conflict)
        return SCHED_NOID;
    id = sched_intern_find(&c->strs, name);
    if (id == SCHED_NOID || id >= c->nslot_of_name)
        return SCHED_NOID;
    slot = c->slot_of_name[id];
    if (slot == SCHED_NOID || !c->slots[slot].present)
        return SCHED_NOID;
    if (cp->prefilter_names) {
        for (i = 0; i < cp->npin_names && cp->pin_names[i] != id; i++)
            ;
        if (i == cp->npin_names)
            return SCHED_NOID;
    }
    return c->slots[slot].order_index;
}

/* tie_pick chooses among the nties best nodes (order indexes): the seeded draw, or the node
 * the caller follows when it is one of them */
static int32_t tie_pick(const struct sched_cluster *c, struct sched_rng *rng, const uint32_t *ties,
                        uint32_t nties)
{
    uint32_t i, pick = nties > 1 && rng ? (uint32_t)sched_rng_below(rng, nties) : 0;

    if (nties > 1 && rng && rng->follow_node)
        for (i = 0; i < nties; i++)
            if (!strcmp(c->slots[c->order[ties[i]]].name, rng->follow_node))
                pick = i;
    return (int32_t)ties[pick];
}

/* ---------------------------------------------------------------- the cycle */

int sched_cycle_choose(struct sched_cluster *c, const struct sched_profile *p,
                       const struct sched_cpod *cp, struct sched_rng *rng, int32_t *chosen,
                       uint32_t *processed, struct err *err)
{
    struct sched_shape *sh;
    struct sched_cverdict *vc;
    uint8_t *vc_done;
    uint32_t n = c->norder, nf = 0, i, k, npins = 0, *pins = NULL, nties = 0;
    uint32_t m, start, limit, nom, done;
    uint32_t *feas, *fcls;
    int32_t *fscore, *faff;
    int64_t max_taint = 0, max_aff = 0, best = 0;
    int32_t gw = p && p->gpu_aware ? p->gpu_weight : 0;
    bool bal_skip = cp->cpu == 0 && cp->mem == 0;
    struct sched_nodeout nout; /* a nominated pod's verdict, not kept */

    *chosen = -1;
    *processed = 0;
    if (cp->prefilter_conflict)
        return 0;
    if (scratch_reserve(c, n, c->nclasses) || !(sh = shape_get(c, p, cp)))
        return err_set(err, -ENOMEM, "out of memory in a scheduling cycle");
    vc = c->s_vc;
    vc_done = c->s_vc_done;
    memset(vc_done, 0, c->nclasses);
    feas = c->s_feas;
    fcls = c->s_feas_cls;
    fscore = c->s_feas_score;
    faff = c->s_feas_aff;
    if ((nom = nominated_first(c, cp)) != SCHED_NOID) {
        /* the node a preemption nominated: when it passes, it is the only feasible node and
         * is taken without scoring (and the rotating start does not move) */
        struct sched_nodeout o;

        memset(&o, 0, sizeof(o));
        fast_node(c, p, cp, c->order[nom], vc, vc_done, bal_skip, &o);
        sched_framework_filter_late(c, cp, c->order[nom], false, &o);
        if (!o.plugin) {
            *chosen = (int32_t)nom;
            return 0;
        }
        memset(vc_done, 0, c->nclasses);
    }
    if (cp->prefilter_names) {
        /* only the pinned nodes can fit: visit them in node order */
        pins = c->s_ties;
        for (i = 0; i < cp->npin_names; i++) {
            uint32_t id = cp->pin_names[i];
            uint32_t s = id < c->nslot_of_name ? c->slot_of_name[id] : SCHED_NOID;
            if (s != SCHED_NOID && c->slots[s].present)
                pins[npins++] = c->slots[s].order_index;
        }
        qsort(pins, npins, sizeof(*pins), cmp_u32);
    }
    /* static filters once per live class; vc_done[cls] = 1 when the class passes them */
    for (i = 0; i < c->nclasses; i++) {
        if (!c->classes[i].refs)
            continue;
        sched_framework_filter_class(c, p, cp, i, &vc[i]);
        vc_done[i] = !vc[i].plugin;
    }
    m = pins ? npins : n;
    sample_plan(c, p, m, &start, &limit);
    done = m;
    if (!pins && !cp->has_node_name && !cp->affinity_by_name && !cp->preferred_by_name &&
        !cp->spread) {
        /* the common case, unswitched: no per-node name checks; nodes [start, n) then
         * [0, start) */
        const uint32_t *order = c->order;
        const struct sched_lite *lite = c->lite;
        const uint32_t portmask = cp->portmask;
        uint32_t lo = start, hi = n;

        for (;;) {
            for (k = lo; k < hi; k++) {
                uint32_t slot = order[k];
                const struct sched_lite *l = &lite[slot];
                const uint32_t cls = l->cls;
                int32_t score;

                if (!vc_done[cls])
                    continue;
                if ((portmask & l->portmask) &&
                    !sched_nodeports_filter(c, c->slots[slot].ports, c->slots[slot].cports, cp))
                    continue;
                score = dyn_score(c, p, cp, sh, slot, bal_skip, gw);
                if (score < 0)
                    continue;
                if (l->nnom && sched_framework_filter_nominated(c, slot, cp, &nout))
                    continue;
                if (vc[cls].taint_score > max_taint)
                    max_taint = vc[cls].taint_score;
                if (vc[cls].affinity_score > max_aff)
                    max_aff = vc[cls].affinity_score;
                feas[nf] = k;
                fcls[nf] = cls;
                fscore[nf++] = score;
                if (nf == limit) {
                    done = (k >= start ? k - start : n - start + k) + 1;
                    goto scanned;
                }
            }
            if (!lo)
                break;
            hi = lo;
            lo = 0;
        }
    } else {
        for (k = 0; k < m; k++) {
            uint32_t j = start + k < m ? start + k : start + k - m;
            uint32_t oi = pins ? pins[j] : j, slot = c->order[oi];
            const struct sched_lite *l = &c->lite[slot];
            const struct sched_cverdict *v;
            int32_t aff, score;

            if (!vc_done[l->cls])
                continue; /* its class failed a static filter */
            v = &vc[l->cls];
            if (cp->has_node_name && l->name != cp->node_name)
                continue;
            if (cp->affinity_by_name && !sched_nodeaffinity_filter_name(cp, v->term_mask, l->name))
                continue;
            if ((cp->portmask & l->portmask) &&
                !sched_nodeports_filter(c, c->slots[slot].ports, c->slots[slot].cports, cp))
                continue;
            score = dyn_score(c, p, cp, sh, slot, bal_skip, gw);
            if (score < 0)
                continue;
            if (l->nnom && sched_framework_filter_nominated(c, slot, cp, &nout))
                continue;
            if (cp->spread) {
                bool unres;
                if (sched_spread_filter(c, cp, slot, false, &unres))
                    continue;
            }
            aff = v->affinity_score;
            if (cp->preferred_by_name)
                aff += sched_nodeaffinity_score_name(c, cp, l->cls, l->name);
            if (v->taint_score > max_taint)
                max_taint = v->taint_score;
            if (aff > max_aff)
                max_aff = aff;
            feas[nf] = oi;
            fcls[nf] = l->cls;
            faff[nf] = aff;
            fscore[nf++] = score;
            if (nf == limit) {
                done = k + 1;
                break;
            }
        }
    }
scanned:
    *processed = done;
    if (!nf)
        return 0;
    if (nf == 1) {
        /* exactly one feasible node: chosen without scoring */
        *chosen = (int32_t)feas[0];
        return 0;
    }
    if (cp->spread) {
        /* PodTopologySpread's scores of the feasible nodes, added to their totals */
        int32_t *raw = arena_alloc(cp->arena, nf * sizeof(*raw));
        int32_t *norm = arena_alloc(cp->arena, nf * sizeof(*norm));
        if (!raw || !norm)
            return err_set(err, -ENOMEM, "out of memory in a scheduling cycle");
        if (sched_spread_scores(c, cp, feas, nf, raw, norm))
            for (i = 0; i < nf; i++)
                fscore[i] += WEIGHT(p, w_spread) * norm[i];
    }
    /* per class: the normalised static scores, computed once */
    if (++c->s_stamp == 0) {
        memset(c->s_cls_stamp, 0, c->s_vccap * sizeof(*c->s_cls_stamp));
        c->s_stamp = 1;
    }
    for (i = 0; i < nf; i++) {
        uint32_t cls = fcls[i];
        int64_t total;
        if (cp->preferred_by_name) {
            total = WEIGHT(p, w_taint) * sched_normalize(vc[cls].taint_score, max_taint, true) +
                    WEIGHT(p, w_affinity) * sched_normalize(faff[i], max_aff, false);
        } else {
            if (c->s_cls_stamp[cls] != c->s_stamp) {
                c->s_cls_stamp[cls] = c->s_stamp;
                c->s_cls_total[cls] =
                    WEIGHT(p, w_taint) * sched_normalize(vc[cls].taint_score, max_taint, true) +
                    WEIGHT(p, w_affinity) * sched_normalize(vc[cls].affinity_score, max_aff, false);
            }
            total = c->s_cls_total[cls];
        }
        total += fscore[i];
        if (!nties || total > best) {
            best = total;
            nties = 0;
        }
        if (total == best)
            c->s_ties[nties++] = feas[i];
    }
    *chosen = tie_pick(c, rng, c->s_ties, nties);
    return 0;
}

bool sched_cycle_needs_rows(const struct sched_cpod *cp)
{
    /* dra_delegated, gpu_dra: a device another node's pod takes may count on this one
     * (NodeResourcesFit's, GPUPlacement's scores) */
    return sched_ipa_filter_on(cp) || sched_ipa_score_on(cp) || cp->nimages || cp->vol || cp->dra ||
           cp->dra_delegated || cp->gpu_dra;
}

static int64_t row_total(const struct sched_profile *p, const struct sched_cycle *cy,
                         const struct sched_nodeout *o, int32_t gw)
{
    return (int64_t)WEIGHT(p, w_taint) * sched_normalize(o->taint_raw, cy->max_taint, true) +
           (int64_t)WEIGHT(p, w_affinity) * sched_normalize(o->aff_raw, cy->max_aff, false) +
           (int64_t)WEIGHT(p, w_fit) * o->fit_raw + (int64_t)WEIGHT(p, w_balanced) * o->bal_raw +
           (int64_t)gw * o->gpu_raw + (int64_t)WEIGHT(p, w_spread) * o->spread_norm +
           (int64_t)WEIGHT(p, w_interpod) *
               sched_ipa_normalize(o->ipa_raw, cy->min_ipa, cy->max_ipa) +
           (int64_t)WEIGHT(p, w_image) * o->img_raw + o->vol_raw +
           (int64_t)SCHED_DRA_SCORE_WEIGHT * sched_normalize(o->dra_raw, cy->max_dra, false);
}

/* spread_scores fills the rows' PodTopologySpread scores over the filtered feasible nodes */
static int spread_scores(struct sched_cluster *c, const struct sched_cpod *cp,
                         struct sched_cycle *cy, const uint32_t *cand, uint32_t m, uint32_t start)
{
    uint32_t *feas, nf = 0, k;
    int32_t *raw, *norm;

    /* (with one feasible node kube-scheduler skips scoring; the rows still show the score,
     * as they do for the other plugins, and the choice is the same) */
    if (!cp->spread || !cy->nfeasible)
        return 0;
    feas = arena_alloc(cp->arena, cy->nfeasible * sizeof(*feas));
    raw = arena_alloc(cp->arena, cy->nfeasible * sizeof(*raw));
    norm = arena_alloc(cp->arena, cy->nfeasible * sizeof(*norm));
    if (!feas || !raw || !norm)
        return -ENOMEM;
    for (k = 0; k < cy->processed; k++) {
        uint32_t j = start + k < m ? start + k : start + k - m;
        if (!cy->out[cand[j]].plugin)
            feas[nf++] = cand[j];
    }
    if (!sched_spread_scores(c, cp, feas, nf, raw, norm))
        return 0;
    cy->spread_scored = true;
    for (k = 0; k < nf; k++) {
        cy->out[feas[k]].spread_raw = raw[k];
        cy->out[feas[k]].spread_norm = norm[k];
    }
    return 0;
}

int sched_cycle_run(struct sched_cluster *c, const struct sched_profile *p,
                    const struct sched_cpod *cp, struct sched_rng *rng, bool ref,
                    struct sched_cycle *cy, struct err *err)
{
    struct sched_cverdict *vc = NULL;
    uint8_t *vc_done = NULL, *inset = NULL;
    uint32_t i, k, n = c->norder, m = 0, start, limit, nom, nties = 0, *ties = NULL, *cand;
    int64_t best = 0;
    int32_t gw = p && p->gpu_aware ? p->gpu_weight : 0;
    int rc = -ENOMEM;

    memset(cy, 0, sizeof(*cy));
    cy->n = n;
    cy->chosen = -1;
    /* BalancedAllocation skips best-effort pods (cpu and memory requests both zero) */
    cy->bal_skip = cp->cpu == 0 && cp->mem == 0;
    if (scratch_reserve(c, n, c->nclasses))
        goto out;
    /* (each row is cleared where it is first written: with node sampling most are only marked
     * skipped, and nothing reads more of a skipped row than its plugin) */
    cy->out = c->s_out;
    vc = c->s_vc;
    vc_done = c->s_vc_done;
    memset(vc_done, 0, c->nclasses);
    ties = c->s_ties;
    cand = c->s_feas;
    rc = 0;
    if (cp->prefilter_conflict) {
        /* PreFilter rejected the pod: every node carries its status (reported through the
         * PreFilter message, not the histogram) */
        for (i = 0; i < n; i++) {
            memset(&cy->out[i], 0, sizeof(cy->out[i]));
            cy->out[i].plugin = cp->prefilter_plugin ? cp->prefilter_plugin : SCHED_PL_AFFINITY;
            cy->out[i].reason = SCHED_R_AFFINITY_CONFLICT;
            if (cp->prefilter_plugin == SCHED_PL_DRA) {
                /* its reason, interned by its PreFilter */
                uint32_t r = sched_intern_find(&c->reasons, cp->prefilter_msg);

                cy->out[i].reason = r == SCHED_NOID ? SCHED_R_AFFINITY_CONFLICT : r;
            }
            cy->out[i].unresolvable = true;
        }
        goto out;
    }
    if (cp->prefilter_names) {
        inset = c->s_inset;
        memset(inset, 0, n);
        for (i = 0; i < cp->npin_names; i++) {
            uint32_t id = cp->pin_names[i];
            uint32_t s = id < c->nslot_of_name ? c->slot_of_name[id] : SCHED_NOID;
            if (s != SCHED_NOID && c->slots[s].present)
                inset[c->slots[s].order_index] = 1;
        }
    }
    /* the candidates, in node order: every node, or the ones the PreFilter keeps */
    for (i = 0; i < n; i++) {
        struct sched_nodeout *o = &cy->out[i];

        if (inset && !inset[i]) {
            memset(o, 0, sizeof(*o));
            o->plugin = SCHED_PL_AFFINITY;
            o->reason = SCHED_R_AFFINITY_PREFILTER;
            o->unresolvable = true;
            continue;
        }
        cand[m++] = i;
    }
    if ((nom = nominated_first(c, cp)) != SCHED_NOID) {
        struct sched_nodeout *o = &cy->out[nom];

        memset(o, 0, sizeof(*o));
        if (ref)
            sched_ref_node(c, p, cp, c->order[nom], o);
        else
            fast_node(c, p, cp, c->order[nom], vc, vc_done, cy->bal_skip, o);
        sched_framework_filter_late(c, cp, c->order[nom], ref, o);
        if (!o->plugin) {
            /* taken without filtering the others (see sched_cycle_choose) */
            for (k = 0; k < m; k++)
                if (cand[k] != nom) {
                    cy->out[cand[k]].plugin = SCHED_PL_SKIPPED;
                    cy->nskipped++;
                }
            cy->nfeasible = 1;
            cy->max_taint = o->taint_raw;
            cy->max_aff = o->aff_raw;
            cy->min_ipa = cy->max_ipa = o->ipa_raw;
            cy->max_dra = o->dra_raw;
            cy->processed = 1;
            if ((rc = spread_scores(c, cp, cy, &nom, 1, 0)))
                goto out;
            cy->processed = 0;
            o->total = row_total(p, cy, o, gw);
            cy->chosen = (int32_t)nom;
            goto out;
        }
        memset(o, 0, sizeof(*o));
    }
    sample_plan(c, p, m, &start, &limit);
    cy->processed = m;
    for (k = 0; k < m; k++) {
        uint32_t j = start + k < m ? start + k : start + k - m;
        struct sched_nodeout *o = &cy->out[cand[j]];

        memset(o, 0, sizeof(*o));
        if (ref)
            sched_ref_node(c, p, cp, c->order[cand[j]], o);
        else
            fast_node(c, p, cp, c->order[cand[j]], vc, vc_done, cy->bal_skip, o);
        sched_framework_filter_late(c, cp, c->order[cand[j]], ref, o);
        if (!o->plugin) {
            if (!cy->nfeasible || o->ipa_raw < cy->min_ipa)
                cy->min_ipa = o->ipa_raw;
            if (!cy->nfeasible || o->ipa_raw > cy->max_ipa)
                cy->max_ipa = o->ipa_raw;
            cy->nfeasible++;
            if (o->taint_raw > cy->max_taint)
                cy->max_taint = o->taint_raw;
            if (o->aff_raw > cy->max_aff)
                cy->max_aff = o->aff_raw;
            if (o->dra_raw > cy->max_dra)
                cy->max_dra = o->dra_raw;
            if (cy->nfeasible == limit) {
                cy->processed = k + 1;
                break;
            }
        }
    }
    for (k = cy->processed; k < m; k++) {
        uint32_t j = start + k < m ? start + k : start + k - m;
        cy->out[cand[j]].plugin = SCHED_PL_SKIPPED;
        cy->nskipped++;
    }
    if ((rc = spread_scores(c, cp, cy, cand, m, start)))
        goto out;
    /* scores, in the order the nodes were filtered: sched_cycle_choose's tie order */
    for (k = 0; k < cy->processed && cy->nfeasible; k++) {
        uint32_t j = start + k < m ? start + k : start + k - m;
        struct sched_nodeout *o = &cy->out[cand[j]];

        if (o->plugin)
            continue;
        o->total = row_total(p, cy, o, gw);
        if (!nties || o->total > best) {
            best = o->total;
            nties = 0;
        }
        if (o->total == best)
            ties[nties++] = cand[j];
    }
    if (nties)
        cy->chosen = tie_pick(c, rng, ties, nties);
out:
    if (rc) {
        sched_cycle_release(cy);
        err_set(err, rc, "out of memory in a scheduling cycle");
    }
    return rc;
}
