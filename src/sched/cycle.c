/* cycle.c - one scheduling cycle over every node: PreFilter (NodeAffinity's name pin),
 * filters in kube-scheduler's order stopping at the first failure, scores of the feasible
 * nodes, normalisation and the tie-break. The fast path evaluates static filters once per
 * node class; the reference path (reference.c) evaluates each node from scratch, and both
 * must fill identical sched_nodeout rows. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched-int.h"

void sched_ref_node(struct sched_cluster *c, const struct sched_profile *p,
                    const struct sched_cpod *cp, uint32_t slot, struct sched_nodeout *o);

static void score_dynamic(const struct sched_cluster *c, const struct sched_profile *p,
                          const struct sched_cpod *cp, uint32_t slot, bool bal_skip,
                          struct sched_nodeout *o)
{
    const struct sched_hot *h = &c->hot[slot];

    o->fit_raw = (int32_t)sched_score_least_allocated(h->alloc_cpu, h->nz_cpu + cp->nz_cpu,
                                                      h->alloc_mem, h->nz_mem + cp->nz_mem);
    o->bal_raw = bal_skip ? 0
                          : (int32_t)sched_score_balanced(h->alloc_cpu, h->req_cpu + cp->cpu,
                                                          h->alloc_mem, h->req_mem + cp->mem);
    o->gpu_raw = p && p->gpu_aware ? (int32_t)sched_score_gpu(p, h->alloc_gpu, h->req_gpu, cp->gpu)
                                   : 0;
}

/* fast path for one node, with the class verdicts computed lazily */
static void fast_node(struct sched_cluster *c, const struct sched_profile *p,
                      const struct sched_cpod *cp, uint32_t slot, struct sched_cverdict *vc,
                      uint8_t *vc_done, bool bal_skip, struct sched_nodeout *o)
{
    const struct sched_hot *h = &c->hot[slot];
    const struct sched_cverdict *v;
    struct sched_nodeuse use;
    bool un;
    uint32_t m;

    if (!vc_done[h->cls]) {
        sched_filter_class(c, p, cp, h->cls, &vc[h->cls]);
        vc_done[h->cls] = 1;
    }
    v = &vc[h->cls];
    o->unresolvable = true;
    if (v->plugin == SCHED_PL_UNSCHEDULABLE) {
        o->plugin = SCHED_PL_UNSCHEDULABLE;
        o->reason = v->reason;
        return;
    }
    if (cp->has_node_name && h->name != cp->node_name) {
        o->plugin = SCHED_PL_NODE_NAME;
        o->reason = SCHED_R_NODE_NAME;
        return;
    }
    if (v->plugin) {
        o->plugin = v->plugin;
        o->reason = v->reason;
        return;
    }
    if (cp->affinity_by_name && !sched_filter_affinity_by_name(cp, v->term_mask, h->name)) {
        o->plugin = SCHED_PL_AFFINITY;
        o->reason = SCHED_R_AFFINITY;
        return;
    }
    o->unresolvable = false;
    if (cp->nports && h->nports &&
        !sched_filter_ports(c, c->slots[slot].ports, c->slots[slot].cports, cp)) {
        o->plugin = SCHED_PL_PORTS;
        o->reason = SCHED_R_PORTS;
        return;
    }
    use.req_cpu = h->req_cpu;
    use.req_mem = h->req_mem;
    use.req_eph = h->req_eph;
    use.req_gpu = h->req_gpu;
    use.npods = h->npods;
    if ((m = sched_filter_fit(c, slot, cp, &use, NULL, &un))) {
        o->plugin = SCHED_PL_FIT;
        o->reason = m;
        o->unresolvable = un;
        return;
    }
    o->taint_raw = v->taint_score;
    o->aff_raw = v->affinity_score;
    if (cp->preferred_by_name)
        o->aff_raw += sched_score_preferred_by_name(c, cp, h->cls, h->name);
    score_dynamic(c, p, cp, slot, bal_skip, o);
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
        c->s_out = malloc(cap * sizeof(*c->s_out));
        c->s_ties = malloc(cap * sizeof(*c->s_ties));
        c->s_inset = malloc(cap);
        c->s_cap = c->s_out && c->s_ties && c->s_inset ? cap : 0;
        if (!c->s_cap)
            return -ENOMEM;
    }
    if (ncls + 1 > c->s_vccap) {
        uint32_t cap = (ncls + 1) * 2;
        free(c->s_vc);
        free(c->s_vc_done);
        c->s_vc = malloc(cap * sizeof(*c->s_vc));
        c->s_vc_done = malloc(cap);
        c->s_vccap = c->s_vc && c->s_vc_done ? cap : 0;
        if (!c->s_vccap)
            return -ENOMEM;
    }
    return 0;
}

int sched_cycle_run(struct sched_cluster *c, const struct sched_profile *p,
                    const struct sched_cpod *cp, struct sched_rng *rng, bool ref,
                    struct sched_cycle *cy, struct kube_err *err)
{
    struct sched_cverdict *vc = NULL;
    uint8_t *vc_done = NULL, *inset = NULL;
    uint32_t i, n = c->norder, nties = 0, *ties = NULL;
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
    cy->out = c->s_out;
    memset(cy->out, 0, n * sizeof(*cy->out));
    vc = c->s_vc;
    vc_done = c->s_vc_done;
    memset(vc_done, 0, c->nclasses);
    ties = c->s_ties;
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
    for (i = 0; i < n; i++) {
        uint32_t slot = c->order[i];
        struct sched_nodeout *o = &cy->out[i];

        if (inset && !inset[i]) {
            o->plugin = SCHED_PL_AFFINITY;
            o->reason = SCHED_R_AFFINITY_PREFILTER;
            o->unresolvable = true;
            continue;
        }
        if (ref)
            sched_ref_node(c, p, cp, slot, o);
        else
            fast_node(c, p, cp, slot, vc, vc_done, cy->bal_skip, o);
        if (!o->plugin) {
            cy->nfeasible++;
            if (o->taint_raw > cy->max_taint)
                cy->max_taint = o->taint_raw;
            if (o->aff_raw > cy->max_aff)
                cy->max_aff = o->aff_raw;
        }
    }
    if (cp->prefilter_conflict) {
        /* PreFilter rejected the pod: every node carries its status (reported through the
         * PreFilter message, not the histogram) */
        cy->nfeasible = 0;
        for (i = 0; i < n; i++) {
            cy->out[i].plugin = SCHED_PL_AFFINITY;
            cy->out[i].reason = SCHED_R_AFFINITY_CONFLICT;
            cy->out[i].unresolvable = true;
        }
    }
    for (i = 0; i < n && cy->nfeasible; i++) {
        struct sched_nodeout *o = &cy->out[i];
        if (o->plugin)
            continue;
        o->total = 3 * sched_normalize(o->taint_raw, cy->max_taint, true) +
                   2 * sched_normalize(o->aff_raw, cy->max_aff, false) + o->fit_raw + o->bal_raw +
                   (int64_t)gw * o->gpu_raw;
        if (!nties || o->total > best) {
            best = o->total;
            nties = 0;
        }
        if (o->total == best)
            ties[nties++] = i;
    }
    if (nties)
        cy->chosen = (int32_t)ties[nties > 1 && rng ? sched_rng_below(rng, nties) : 0];
    rc = 0;
out:
    if (rc) {
        sched_cycle_release(cy);
        kube_err_set(err, rc, "out of memory in a scheduling cycle");
    }
    return rc;
}
