/* framework.c - the extension points that run several plugins, each in kube-scheduler's
 * default order (pkg/scheduler/apis/config/v1/default_plugins.go): the PreFilters after a
 * pod's compilation, the Filters once per node class, RunFilterPluginsWithNominatedPods, the
 * Filters after NodeResourcesFit (live and in preemption's dry run), Reserve. The place a new
 * plugin's PreFilter, Filter and Reserve are added (docs/design.md, "Adding a plugin"). */
#include "sched/framework-int.h"

#include <stddef.h>
#include <string.h>

#include "sched/cluster-int.h"
#include "sched/plugins-int.h"
#include "sched/sched-int.h"

/* ---------------------------------------------------------------- PreFilter */

/* the volume plugins' PreFilters, in order */
static int (*const volume_prefilters[])(struct sched_cluster *, struct sched_cpod *,
                                        struct sched_vpod *) = {
    sched_volumerestrictions_prefilter,
    sched_nodevolumelimits_prefilter,
    sched_volumebinding_prefilter,
    sched_volumezone_prefilter,
};

int sched_framework_prefilter(struct sched_cluster *c, struct sched_cpod *cp)
{
    struct sched_vpod *vp;
    size_t i;
    int rc;

    if ((rc = sched_volumes_prefilter(c, cp, &vp)))
        return rc;
    for (i = 0; vp && !cp->prefilter_conflict &&
                i < sizeof(volume_prefilters) / sizeof(volume_prefilters[0]);
         i++)
        if ((rc = volume_prefilters[i](c, cp, vp)))
            return rc;
    if (vp && !cp->prefilter_conflict)
        cp->vol = vp;
    if ((rc = sched_spread_prefilter(c, cp)))
        return rc;
    /* InterPodAffinity's PreFilter ran in compile; DynamicResources' is the last */
    return sched_dra_cycle_prefilter(c, cp);
}

/* ---------------------------------------------------------------- Filter */

void sched_framework_filter_class(struct sched_cluster *c, const struct sched_profile *p,
                                  const struct sched_cpod *cp, uint32_t cls,
                                  struct sched_cverdict *v)
{
    struct sched_class *cl = &c->classes[cls];

    memset(v, 0, sizeof(*v));
    if (cl->unschedulable && !sched_nodeunschedulable_filter_class(c, cp, cl)) {
        v->plugin = SCHED_PL_UNSCHEDULABLE;
        v->reason = SCHED_R_UNSCHEDULABLE;
    }
    /* (run for every live class in every cycle: skipped where the plugin has nothing to look
     * at, a node without taints, a pod without node affinity) */
    if (cl->ntaints &&
        !sched_tainttoleration_class(c, p, cp, cl, !v->plugin, &v->reason, &v->taint_score))
        v->plugin = SCHED_PL_TAINT;
    if ((cp->nsel || cp->has_required || cp->npref_terms) &&
        !sched_nodeaffinity_class(c, cp, cl, &v->term_mask, &v->affinity_score) && !v->plugin) {
        v->plugin = SCHED_PL_AFFINITY;
        v->reason = SCHED_R_AFFINITY;
    }
}

/* ---------------------------------------------------------------- with nominated pods */

/* the nominated pods that hold room against cp: priority >= cp's, and not cp's own pod */
static bool nominated_counts(const struct sched_pod *n, const struct sched_cpod *cp)
{
    if (n->priority < cp->priority)
        return false;
    return !cp->src || strcmp(n->name, cp->src->name) || strcmp(n->ns, cp->src->namespace_);
}

static uint32_t nominated_add(const struct sched_cluster *c, uint32_t slot,
                              const struct sched_cpod *cp, struct sched_nodeuse *use, int64_t *sreq,
                              bool *ports_conflict)
{
    uint32_t i, j, k, n = 0;

    *ports_conflict = false;
    if (!c->lite[slot].nnom)
        return 0;
    for (i = 0; i < c->nnoms; i++) {
        const struct sched_pod *p = c->noms[i];
        if (p->slot != slot || !nominated_counts(p, cp))
            continue;
        n++;
        use->req_cpu += p->cpu;
        use->req_mem += p->mem;
        use->req_eph += p->eph;
        use->npods++;
        for (j = 0; j < p->nscalars; j++) {
            if (p->scalars[j].rid == c->rid_gpu)
                use->req_gpu += p->scalars[j].req;
            for (k = 0; k < cp->nscalars; k++)
                if (cp->scalars[k].rid == p->scalars[j].rid)
                    sreq[k] += p->scalars[j].req;
        }
        if (cp->nports && p->nports && sched_nodeports_pod_conflict(c, p, cp))
            *ports_conflict = true;
    }
    return n;
}

bool sched_framework_filter_nominated(const struct sched_cluster *c, uint32_t slot,
                                      const struct sched_cpod *cp, struct sched_nodeout *o)
{
    struct sched_nodeuse use;
    int64_t sreq[SCHED_MAX_POD_SCALARS];
    uint32_t j, m;
    bool conflict, un;

    if (!c->lite[slot].nnom)
        return false;
    use = sched_nodeuse_of(&c->hot[slot]);
    for (j = 0; j < cp->nscalars; j++) {
        const struct sched_scalar *x = sched_slot_scalar(&c->slots[slot], cp->scalars[j].rid);
        sreq[j] = x ? x->req : 0;
    }
    if (!nominated_add(c, slot, cp, &use, sreq, &conflict))
        return false;
    if (conflict) {
        o->plugin = SCHED_PL_PORTS;
        o->reason = SCHED_R_PORTS;
        o->unresolvable = false;
        return true;
    }
    if ((m = sched_noderesources_filter(c, slot, cp, &use, sreq, &un))) {
        o->plugin = SCHED_PL_FIT;
        o->reason = m;
        o->unresolvable = un;
        return true;
    }
    return false;
}

/* ---------------------------------------------------------------- the late Filters */

/* volume_filters runs the volume plugins' Filters on the node at slot, whose pods are
 * on[0..non) (dry: a preemption dry run's): 0 when they pass, with *score VolumeBinding's,
 * else the reason and *plugin */
static uint32_t volume_filters(struct sched_cluster *c, const struct sched_cpod *cp, uint32_t slot,
                               struct sched_pod *const *on, uint32_t non, bool dry, uint8_t *plugin,
                               int32_t *score)
{
    struct kube_node node;
    uint32_t r;

    *score = 0;
    if ((r = sched_volumerestrictions_filter(c, cp, slot, on, non, dry))) {
        *plugin = SCHED_PL_VOLUME_RESTRICTIONS;
        return r;
    }
    if ((r = sched_nodevolumelimits_filter(c, cp, slot, on, non))) {
        *plugin = SCHED_PL_VOLUME_LIMITS;
        return r;
    }
    *plugin = SCHED_PL_VOLUME_BINDING;
    if (!sched_volumes_node_view(c, slot, &node))
        return SCHED_VB_BIND_CONFLICT; /* (out of memory: no placement) */
    if ((r = sched_volumebinding_filter(c, cp, &node, score)))
        return r;
    if ((r = sched_volumezone_filter(c, cp, &node))) {
        *plugin = SCHED_PL_VOLUME_ZONE;
        return r;
    }
    return 0;
}

void sched_framework_filter_late(const struct sched_cluster *c, const struct sched_cpod *cp,
                                 uint32_t slot, bool ref, struct sched_nodeout *o)
{
    struct sched_cluster *w = (struct sched_cluster *)c; /* (the volume plugins' scratch) */
    const struct sched_slot *s = &c->slots[slot];
    bool unres;
    uint32_t r;
    uint8_t vpl;

    if ((!o->plugin || o->plugin == SCHED_PL_INTERPOD) && cp->vol &&
        (r = volume_filters(w, cp, slot, s->pods, s->npods, false, &vpl, &o->vol_raw))) {
        /* the volume plugins run before PodTopologySpread and InterPodAffinity */
        o->plugin = vpl;
        o->reason = r;
        o->unresolvable = vpl != SCHED_PL_VOLUME_RESTRICTIONS && vpl != SCHED_PL_VOLUME_LIMITS;
        return;
    }
    if (cp->spread && (!o->plugin || o->plugin == SCHED_PL_INTERPOD) &&
        (r = sched_spread_filter(c, cp, slot, ref, &unres))) {
        o->plugin = SCHED_PL_SPREAD;
        o->reason = r;
        o->unresolvable = unres;
        return;
    }
    /* DynamicResources comes after InterPodAffinity */
    if (!o->plugin && cp->dra && (r = sched_dra_cycle_filter(c, cp, slot, &o->dra_raw, &unres))) {
        o->plugin = SCHED_PL_DRA;
        o->reason = r;
        o->unresolvable = unres;
    }
}

bool sched_framework_filter_late_dry(const struct sched_cluster *c, const struct sched_cpod *cp,
                                     uint32_t slot, struct sched_pod *const *on, uint32_t non,
                                     uint32_t *plugin, uint32_t *reason)
{
    int32_t score;
    uint32_t r;
    uint8_t pl;

    if (cp->vol &&
        (r = volume_filters((struct sched_cluster *)c, cp, slot, on, non, true, &pl, &score))) {
        *plugin = pl;
        *reason = r;
        return false;
    }
    if (cp->spread && !sched_spread_filter_dry(c, cp, slot, on, non, reason)) {
        *plugin = SCHED_PL_SPREAD;
        return false;
    }
    return true;
}

/* ---------------------------------------------------------------- Reserve */

int sched_framework_reserve(struct sched_cluster *c, const struct kube_pod *pod, const char *node,
                            struct err *err)
{
    return sched_volumebinding_reserve(c, pod, node, err);
}
