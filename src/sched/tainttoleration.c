/* tainttoleration.c - kube-scheduler's TaintToleration (pkg/scheduler/framework/plugins/
 * tainttoleration): the Filter fails a node with a NoSchedule or NoExecute taint the pod does
 * not tolerate; the Score counts the PreferNoSchedule taints it does not tolerate (normalised
 * in reverse). Both read only a node's taints, so the framework runs them once per node class
 * (framework.c). The toleration rule is also NodeUnschedulable's. */
#include "sched/plugins-int.h"

#include "sched/cluster-int.h"
#include "sched/sched-int.h"

/* v1.Toleration.ToleratesTaint on interned ids */
static bool tol_matches(const struct sched_ctol *t, uint32_t key, uint32_t value, uint8_t effect)
{
    if (t->effect != KUBE_EFFECT_ANY && t->effect != effect)
        return false;
    if (t->key != SCHED_NOID && t->key != key)
        return false;
    return t->exists || t->value == value;
}

bool sched_tolerates(const struct sched_cpod *cp, uint32_t key, uint32_t value, uint8_t effect,
                     bool prefer_only)
{
    uint32_t i;

    for (i = 0; i < cp->ntols; i++) {
        /* TaintToleration's score only counts tolerations with an empty or PreferNoSchedule
         * effect */
        if (prefer_only && cp->tols[i].effect != KUBE_EFFECT_ANY &&
            cp->tols[i].effect != KUBE_EFFECT_PREFER_NO_SCHEDULE)
            continue;
        if (tol_matches(&cp->tols[i], key, value, effect))
            return true;
    }
    return false;
}

bool sched_tainttoleration_class(struct sched_cluster *c, const struct sched_profile *p,
                                 const struct sched_cpod *cp, struct sched_class *cl, bool filter,
                                 uint32_t *reason, int32_t *score)
{
    bool ok = true;
    uint32_t i;

    *score = 0;
    for (i = 0; i < cl->ntaints; i++) {
        const struct sched_idtaint *t = &cl->taints[i];
        if (t->effect == KUBE_EFFECT_PREFER_NO_SCHEDULE) {
            if (!sched_tolerates(cp, t->key, t->value, t->effect, true))
                ++*score;
        } else if (filter && ok &&
                   (t->effect == KUBE_EFFECT_NO_SCHEDULE || t->effect == KUBE_EFFECT_NO_EXECUTE) &&
                   !sched_tolerates(cp, t->key, t->value, t->effect, false)) {
            /* the first untolerated taint is the reason */
            *reason = sched_reason_taint(c, cl, i, p ? p->taint_wording : 0);
            ok = false;
        }
    }
    return ok;
}

bool sched_tainttoleration_filter_node(const struct sched_cluster *c, const struct sched_cpod *cp,
                                       uint32_t slot)
{
    const struct sched_slot *s = &c->slots[slot];
    uint32_t i;

    for (i = 0; i < s->ntaints; i++) {
        const struct sched_idtaint *t = &s->taints[i];
        if ((t->effect == KUBE_EFFECT_NO_SCHEDULE || t->effect == KUBE_EFFECT_NO_EXECUTE) &&
            !sched_tolerates(cp, t->key, t->value, t->effect, false))
            return false;
    }
    return true;
}
