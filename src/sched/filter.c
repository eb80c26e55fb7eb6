/* filter.c - kube-scheduler's filters on compiled pods: the static ones (NodeUnschedulable,
 * TaintToleration, NodeAffinity) evaluated once per node class, and the dynamic ones
 * (NodePorts, NodeResourcesFit) per node. Reason strings come from cluster.c. */
#include "sched/filter-int.h"

#include <string.h>

#include "sched/cluster-int.h"
#include "sched/intern-int.h"
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

static bool tolerated(const struct sched_cpod *cp, uint32_t key, uint32_t value, uint8_t effect,
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

static bool in_values(const struct sched_creq *e, uint32_t v)
{
    uint32_t i;

    for (i = 0; i < e->nvalues; i++)
        if (e->values[i] == v)
            return true;
    return false;
}

/* labels.Requirement.Matches */
static bool req_matches(const struct sched_cluster *c, const struct sched_creq *e,
                        const struct sched_idlabel *l, uint32_t n)
{
    const struct sched_idlabel *x = e->key == SCHED_NOID ? NULL : sched_label_find(l, n, e->key);
    int64_t v;

    if (e->invalid)
        return false;
    switch (e->op) {
    case KUBE_OP_IN:
    case KUBE_OP_EQUALS:
    case KUBE_OP_DOUBLE_EQUALS:
        return x && in_values(e, x->value);
    case KUBE_OP_NOT_IN:
    case KUBE_OP_NOT_EQUALS:
        return !x || !in_values(e, x->value);
    case KUBE_OP_EXISTS:
        return x != NULL;
    case KUBE_OP_DOES_NOT_EXIST:
        return x == NULL;
    case KUBE_OP_GT:
        return x && sched_intern_int(&c->strs, x->value, &v) && v > e->num;
    case KUBE_OP_LT:
        return x && sched_intern_int(&c->strs, x->value, &v) && v < e->num;
    }
    return false;
}

/* the label part of a term; a term with neither expressions nor fields matches nothing */
static bool term_exprs_match(const struct sched_cluster *c, const struct sched_cterm *t,
                             const struct sched_idlabel *l, uint32_t n)
{
    uint32_t i;

    if (!t->nexprs && !t->nfields)
        return false;
    for (i = 0; i < t->nexprs; i++)
        if (!req_matches(c, &t->exprs[i], l, n))
            return false;
    return true;
}

static bool term_fields_match(const struct sched_cterm *t, uint32_t name)
{
    uint32_t i;

    for (i = 0; i < t->nfields; i++) {
        const struct sched_cfield *f = &t->fields[i];
        if (f->invalid)
            return false;
        if (f->in != (f->name == name))
            return false;
    }
    return true;
}

void sched_filter_class(struct sched_cluster *c, const struct sched_profile *p,
                        const struct sched_cpod *cp, uint32_t cls, struct sched_cverdict *v)
{
    struct sched_class *cl = &c->classes[cls];
    uint32_t i;
    bool sel_ok = true;

    memset(v, 0, sizeof(*v));
    if (cl->unschedulable &&
        !tolerated(cp, c->key_unschedulable_taint, c->id_empty, KUBE_EFFECT_NO_SCHEDULE, false)) {
        v->plugin = SCHED_PL_UNSCHEDULABLE;
        v->reason = SCHED_R_UNSCHEDULABLE;
    }
    for (i = 0; i < cl->ntaints && !v->plugin; i++) {
        const struct sched_idtaint *t = &cl->taints[i];
        if (t->effect != KUBE_EFFECT_NO_SCHEDULE && t->effect != KUBE_EFFECT_NO_EXECUTE)
            continue;
        if (!tolerated(cp, t->key, t->value, t->effect, false)) {
            v->plugin = SCHED_PL_TAINT;
            v->reason = sched_reason_taint(c, cl, i, p ? p->taint_wording : 0);
        }
    }
    for (i = 0; i < cp->nsel; i++) {
        const struct sched_idlabel *x =
            cp->sel[i].key == SCHED_NOID
                ? NULL
                : sched_label_find(cl->labels, cl->nlabels, cp->sel[i].key);
        if (!x || x->value != cp->sel[i].value) {
            sel_ok = false;
            break;
        }
    }
    for (i = 0; i < cp->nreq_terms; i++)
        if (term_exprs_match(c, &cp->req_terms[i], cl->labels, cl->nlabels))
            v->term_mask |= 1ull << i;
    if (!v->plugin) {
        bool ok = sel_ok;
        if (ok && cp->has_required) {
            if (cp->affinity_by_name)
                ok = v->term_mask != 0; /* refined per node */
            else
                ok = v->term_mask != 0;
        }
        if (!ok) {
            v->plugin = SCHED_PL_AFFINITY;
            v->reason = SCHED_R_AFFINITY;
        }
    }
    if (!sel_ok)
        v->term_mask = 0;
    for (i = 0; i < cl->ntaints; i++) {
        const struct sched_idtaint *t = &cl->taints[i];
        if (t->effect == KUBE_EFFECT_PREFER_NO_SCHEDULE &&
            !tolerated(cp, t->key, t->value, t->effect, true))
            v->taint_score++;
    }
    for (i = 0; i < cp->npref_terms; i++) {
        const struct sched_cterm *t = &cp->pref_terms[i];
        if (!t->nfields && term_exprs_match(c, t, cl->labels, cl->nlabels))
            v->affinity_score += t->weight;
    }
}

bool sched_filter_affinity_by_name(const struct sched_cpod *cp, uint64_t term_mask, uint32_t name)
{
    uint32_t i;

    for (i = 0; i < cp->nreq_terms; i++)
        if ((term_mask >> i & 1) && term_fields_match(&cp->req_terms[i], name))
            return true;
    return false;
}

int32_t sched_score_preferred_by_name(const struct sched_cluster *c, const struct sched_cpod *cp,
                                      uint32_t cls, uint32_t name)
{
    const struct sched_class *cl = &c->classes[cls];
    int32_t s = 0;
    uint32_t i;

    for (i = 0; i < cp->npref_terms; i++) {
        const struct sched_cterm *t = &cp->pref_terms[i];
        if (t->nfields && term_exprs_match(c, t, cl->labels, cl->nlabels) &&
            term_fields_match(t, name))
            s += t->weight;
    }
    return s;
}

/* NodeResourcesFit's fitsRequest. scalar_req[j] is the node's requested amount of the pod's
 * scalar j (NULL: read the node's current usage). */
uint32_t sched_filter_fit(const struct sched_cluster *c, uint32_t slot, const struct sched_cpod *cp,
                          const struct sched_nodeuse *use, const int64_t *scalar_req,
                          bool *unresolvable)
{
    const struct sched_hot *h = &c->hot[slot];
    uint32_t m = 0, j;
    bool un = false;

    if (use->npods + 1 > h->alloc_pods)
        m |= SCHED_FIT_PODS;
    if (!cp->all_zero) {
        if (cp->cpu > 0 && cp->cpu > h->alloc_cpu - use->req_cpu) {
            m |= SCHED_FIT_CPU;
            un |= cp->cpu > h->alloc_cpu;
        }
        if (cp->mem > 0 && cp->mem > h->alloc_mem - use->req_mem) {
            m |= SCHED_FIT_MEM;
            un |= cp->mem > h->alloc_mem;
        }
        if (cp->eph > 0 && cp->eph > h->alloc_eph - use->req_eph) {
            m |= SCHED_FIT_EPH;
            un |= cp->eph > h->alloc_eph;
        }
        for (j = 0; j < cp->nscalars; j++) {
            int64_t alloc, req;
            if (cp->scalars[j].rid == c->rid_gpu) {
                alloc = h->alloc_gpu;
                req = scalar_req ? scalar_req[j] : use->req_gpu;
            } else {
                const struct sched_scalar *x =
                    sched_slot_scalar(&c->slots[slot], cp->scalars[j].rid);
                alloc = x ? x->alloc : 0;
                req = scalar_req ? scalar_req[j] : x ? x->req : 0;
            }
            if (cp->scalars[j].req > alloc - req) {
                m |= 1u << (SCHED_FIT_SCALAR0 + j);
                un |= cp->scalars[j].req > alloc;
            }
        }
    }
    *unresolvable = un;
    return m;
}

/* HostPortInfo.CheckConflict for each wanted port */
bool sched_filter_ports(const struct sched_cluster *c, const struct sched_port *np, uint32_t nnp,
                        const struct sched_cpod *cp)
{
    uint32_t i, j;

    for (i = 0; i < cp->nports; i++) {
        const struct sched_port *w = &cp->ports[i];
        for (j = 0; j < nnp; j++) {
            if (!np[j].used || np[j].port != w->port || np[j].proto != w->proto)
                continue;
            if (w->ip == c->id_bind_all || np[j].ip == c->id_bind_all || np[j].ip == w->ip)
                return false;
        }
    }
    return true;
}

/* the nominated pods that hold room against cp: priority >= cp's, and not cp's own pod */
static bool nominated_counts(const struct sched_pod *n, const struct sched_cpod *cp)
{
    if (n->priority < cp->priority)
        return false;
    return !cp->src || strcmp(n->name, cp->src->name) || strcmp(n->ns, cp->src->namespace_);
}

static bool pod_ports_conflict(const struct sched_cluster *c, const struct sched_pod *p,
                               const struct sched_cpod *cp)
{
    uint32_t j;

    for (j = 0; j < p->nports; j++) {
        struct sched_port x = p->ports[j];
        x.used = true;
        if (!sched_filter_ports(c, &x, 1, cp))
            return true;
    }
    return false;
}

uint32_t sched_filter_nominated_add(const struct sched_cluster *c, uint32_t slot,
                                    const struct sched_cpod *cp, struct sched_nodeuse *use,
                                    int64_t *sreq, bool *ports_conflict)
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
        if (cp->nports && p->nports && pod_ports_conflict(c, p, cp))
            *ports_conflict = true;
    }
    return n;
}

bool sched_filter_nominated(const struct sched_cluster *c, uint32_t slot,
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
    if (!sched_filter_nominated_add(c, slot, cp, &use, sreq, &conflict))
        return false;
    if (conflict) {
        o->plugin = SCHED_PL_PORTS;
        o->reason = SCHED_R_PORTS;
        o->unresolvable = false;
        return true;
    }
    if ((m = sched_filter_fit(c, slot, cp, &use, sreq, &un))) {
        o->plugin = SCHED_PL_FIT;
        o->reason = m;
        o->unresolvable = un;
        return true;
    }
    return false;
}

bool sched_filter_affinity_slot(const struct sched_cluster *c, const struct sched_cpod *cp,
                                uint32_t slot)
{
    const struct sched_slot *s = &c->slots[slot];
    uint32_t i;

    for (i = 0; i < cp->nsel; i++) {
        const struct sched_idlabel *x =
            cp->sel[i].key == SCHED_NOID ? NULL
                                         : sched_label_find(s->labels, s->nlabels, cp->sel[i].key);
        if (!x || x->value != cp->sel[i].value)
            return false;
    }
    if (!cp->has_required)
        return true;
    for (i = 0; i < cp->nreq_terms; i++)
        if (term_exprs_match(c, &cp->req_terms[i], s->labels, s->nlabels) &&
            term_fields_match(&cp->req_terms[i], c->lite[slot].name))
            return true;
    return false;
}

bool sched_filter_taints_slot(const struct sched_cluster *c, const struct sched_cpod *cp,
                              uint32_t slot)
{
    const struct sched_slot *s = &c->slots[slot];
    uint32_t i;

    for (i = 0; i < s->ntaints; i++) {
        const struct sched_idtaint *t = &s->taints[i];
        if ((t->effect == KUBE_EFFECT_NO_SCHEDULE || t->effect == KUBE_EFFECT_NO_EXECUTE) &&
            !tolerated(cp, t->key, t->value, t->effect, false))
            return false;
    }
    return true;
}
