/* nodeaffinity.c - kube-scheduler's NodeAffinity (pkg/scheduler/framework/plugins/
 * nodeaffinity) on compiled pods (compile.c compiles the terms and the PreFilter's name pin):
 * the Filter (nodeSelector, then the required terms, ORed) and the Score (the preferred terms'
 * weights, normalised). Label expressions read only a node's labels, so they run once per
 * node class; matchFields on metadata.name run per node. */
#include "sched/plugins-int.h"

#include "sched/intern-int.h"
#include "sched/sched-int.h"

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

bool sched_nodeaffinity_class(const struct sched_cluster *c, const struct sched_cpod *cp,
                              const struct sched_class *cl, uint64_t *term_mask, int32_t *score)
{
    uint32_t i;
    bool ok = true;

    *term_mask = 0;
    *score = 0;
    for (i = 0; i < cp->nsel && ok; i++) {
        const struct sched_idlabel *x =
            cp->sel[i].key == SCHED_NOID
                ? NULL
                : sched_label_find(cl->labels, cl->nlabels, cp->sel[i].key);
        ok = x && x->value == cp->sel[i].value;
    }
    for (i = 0; ok && i < cp->nreq_terms; i++)
        if (term_exprs_match(c, &cp->req_terms[i], cl->labels, cl->nlabels))
            *term_mask |= 1ull << i;
    /* with matchFields the mask is refined per node (sched_nodeaffinity_filter_name) */
    ok = ok && (!cp->has_required || *term_mask != 0);
    for (i = 0; i < cp->npref_terms; i++) {
        const struct sched_cterm *t = &cp->pref_terms[i];
        if (!t->nfields && term_exprs_match(c, t, cl->labels, cl->nlabels))
            *score += t->weight;
    }
    return ok;
}

bool sched_nodeaffinity_filter_name(const struct sched_cpod *cp, uint64_t term_mask, uint32_t name)
{
    uint32_t i;

    for (i = 0; i < cp->nreq_terms; i++)
        if ((term_mask >> i & 1) && term_fields_match(&cp->req_terms[i], name))
            return true;
    return false;
}

int32_t sched_nodeaffinity_score_name(const struct sched_cluster *c, const struct sched_cpod *cp,
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

bool sched_nodeaffinity_filter_node(const struct sched_cluster *c, const struct sched_cpod *cp,
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
