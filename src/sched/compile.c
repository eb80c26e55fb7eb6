/* compile.c - a pod's scheduling constraints turned into interned integer form, once per
 * scheduling cycle: node selector, required and preferred node affinity, tolerations, host
 * ports, and its requests as kube-scheduler counts them (kube_pod_requests, with and without
 * the 100m / 200MiB non-zero defaults). */
#include "sched/compile-int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/goparse.h"
#include "base/quote.h"
#include "kube/rules.h"
#include "sched/cluster-int.h"
#include "sched/intern-int.h"
#include "sched/plugins-int.h"
#include "sched/sched-int.h"
#include "sched/usage-int.h"

/* ---------------------------------------------------------------- constraints */

static int compile_term(struct sched_cluster *c, const struct kube_node_selector_term *t,
                        struct arena *a, struct sched_cterm *out, bool *by_name)
{
    size_t i, j;
    int rc;

    memset(out, 0, sizeof(*out));
    out->nexprs = (uint32_t)t->nexprs;
    out->nfields = (uint32_t)t->nfields;
    if (t->nexprs && !(out->exprs = arena_alloc(a, t->nexprs * sizeof(*out->exprs))))
        return -ENOMEM;
    if (t->nfields && !(out->fields = arena_alloc(a, t->nfields * sizeof(*out->fields))))
        return -ENOMEM;
    for (i = 0; i < t->nexprs; i++) {
        const struct kube_requirement *r = &t->exprs[i];
        struct sched_creq *e = &out->exprs[i];
        e->key = sched_intern_find(&c->strs, r->key);
        if ((rc = sched_cluster_mark_interesting(c, e->key)))
            return rc;
        e->op = (uint8_t)r->op;
        e->invalid = r->invalid;
        switch (r->op) {
        case KUBE_OP_IN:
        case KUBE_OP_NOT_IN:
        case KUBE_OP_EQUALS:
        case KUBE_OP_DOUBLE_EQUALS:
        case KUBE_OP_NOT_EQUALS:
            if (!r->nvalues)
                e->invalid = true;
            break;
        case KUBE_OP_EXISTS:
        case KUBE_OP_DOES_NOT_EXIST:
            if (r->nvalues)
                e->invalid = true;
            break;
        case KUBE_OP_GT:
        case KUBE_OP_LT:
            if (r->nvalues != 1 ||
                go_parse_int(r->values[0], strlen(r->values[0]), 10, 64, &e->num, NULL))
                e->invalid = true;
            break;
        default:
            e->invalid = true;
        }
        e->nvalues = (uint32_t)r->nvalues;
        if (r->nvalues && !(e->values = arena_alloc(a, r->nvalues * sizeof(*e->values))))
            return -ENOMEM;
        for (j = 0; j < r->nvalues; j++)
            e->values[j] = sched_intern_find(&c->strs, r->values[j]);
    }
    for (i = 0; i < t->nfields; i++) {
        const struct kube_requirement *r = &t->fields[i];
        struct sched_cfield *f = &out->fields[i];
        f->in = r->op == KUBE_OP_IN;
        f->invalid = r->invalid || strcmp(r->key, "metadata.name") != 0 || r->nvalues != 1 ||
                     (r->op != KUBE_OP_IN && r->op != KUBE_OP_NOT_IN);
        f->name = r->nvalues ? sched_intern_find(&c->strs, r->values[0]) : SCHED_NOID;
        *by_name = true;
    }
    return 0;
}

static int add_pin(struct sched_cpod *cp, uint32_t *buf, uint32_t *n, uint32_t id)
{
    uint32_t i;

    (void)cp;
    for (i = 0; i < *n; i++)
        if (buf[i] == id)
            return 0;
    buf[(*n)++] = id;
    return 0;
}

/* NodeAffinity PreFilter: required terms that all pin metadata.name In [...] give a node set:
 * intersection inside a term, union across terms. Unknown names are SCHED_NOID-free here:
 * they are interned so that sets compare by id. */
static int compile_prefilter(struct sched_cluster *c, const struct kube_pod *pod,
                             struct sched_cpod *cp)
{
    const struct kube_node_selector *s = &pod->required;
    uint32_t *all, nall = 0, *term, nterm, *tmp, ntmp, cap = 0;
    size_t i, j, k, v;

    if (!pod->has_required_affinity || !s->nterms)
        return 0;
    for (i = 0; i < s->nterms; i++) {
        bool pinned = false;
        for (j = 0; j < s->terms[i].nfields; j++) {
            const struct kube_requirement *r = &s->terms[i].fields[j];
            if (!strcmp(r->key, "metadata.name") && r->op == KUBE_OP_IN)
                pinned = true;
            cap += (uint32_t)r->nvalues;
        }
        if (!pinned)
            return 0; /* a term without a name pin keeps every node */
    }
    all = arena_alloc(cp->arena, (cap + 1) * sizeof(*all));
    term = arena_alloc(cp->arena, (cap + 1) * sizeof(*term));
    tmp = arena_alloc(cp->arena, (cap + 1) * sizeof(*tmp));
    if (!all || !term || !tmp)
        return -ENOMEM;
    for (i = 0; i < s->nterms; i++) {
        bool first = true;
        nterm = 0;
        for (j = 0; j < s->terms[i].nfields; j++) {
            const struct kube_requirement *r = &s->terms[i].fields[j];
            if (strcmp(r->key, "metadata.name") || r->op != KUBE_OP_IN)
                continue;
            ntmp = 0;
            for (v = 0; v < r->nvalues; v++) {
                uint32_t id = sched_intern_add(&c->strs, r->values[v]);
                if (id == SCHED_NOID)
                    return -ENOMEM;
                if (first) {
                    add_pin(cp, tmp, &ntmp, id);
                } else {
                    for (k = 0; k < nterm; k++)
                        if (term[k] == id)
                            add_pin(cp, tmp, &ntmp, id);
                }
            }
            memcpy(term, tmp, ntmp * sizeof(*tmp));
            nterm = ntmp;
            first = false;
        }
        for (k = 0; k < nterm; k++)
            add_pin(cp, all, &nall, term[k]);
    }
    cp->prefilter_names = true;
    cp->pin_names = all;
    cp->npin_names = nall;
    cp->prefilter_conflict = nall == 0;
    return 0;
}

void sched_cpod_release(struct sched_cpod *cp)
{
    sched_ipa_release(cp);
    sched_dra_cycle_release(cp);
    /* the memory stays in the cluster's compile arena for the next pods */
    memset(cp, 0, sizeof(*cp));
}

/* prescore_error is what NodeAffinity's PreScore (NewPreferredSchedulingTerms) says of the
 * pod's preferred terms: for each Gt/Lt value that is not an integer, one field error; one
 * error alone as it is, several (each once) as "[e1, e2]". Sets cp->prescore_error (arena);
 * -ENOMEM. */
static int prescore_error(const struct kube_pod *pod, struct sched_cpod *cp)
{
    struct buf b, one;
    size_t i, j, k, n = 0;
    int64_t v;
    int rc = 0;

    buf_init(&b, 1 << 16);
    buf_init(&one, 1 << 12);
    for (i = 0; i < pod->npreferred; i++) {
        const struct kube_preferred_term *t = &pod->preferred[i];

        if (t->weight == 0 || (!t->term.nexprs && !t->term.nfields))
            continue;
        for (j = 0; j < t->term.nexprs; j++) {
            const struct kube_requirement *r = &t->term.exprs[j];

            if (r->op != KUBE_OP_GT && r->op != KUBE_OP_LT)
                continue;
            for (k = 0; k < r->nvalues; k++) {
                if (!go_parse_int(r->values[k], strlen(r->values[k]), 10, 64, &v, NULL))
                    continue;
                buf_reset(&one);
                if ((rc = buf_printf(&one,
                                     "[%zu].matchExpressions[%zu].values[%zu]: Invalid value: ", i,
                                     j, k)) ||
                    (rc = quote_go(&one, r->values[k], strlen(r->values[k]))) ||
                    (rc = buf_puts(&one,
                                   ": for 'Gt', 'Lt' operators, the value must be an integer")))
                    goto out;
                /* an aggregate prints each message once */
                if (n && strstr(b.data, one.data))
                    continue;
                if ((n && (rc = buf_puts(&b, ", "))) || (rc = buf_puts(&b, one.data)))
                    goto out;
                n++;
            }
        }
    }
    if (n) {
        char *m = arena_alloc(cp->arena, b.len + 3);

        if (!m)
            rc = -ENOMEM;
        else {
            snprintf(m, b.len + 3, n > 1 ? "[%s]" : "%s", b.data);
            cp->prescore_error = m;
        }
    }
out:
    buf_release(&b);
    buf_release(&one);
    return rc;
}

int sched_pod_compile(struct sched_cluster *c, const struct sched_profile *p,
                      const struct kube_pod *pod, struct sched_cpod *cp, struct err *err)
{
    struct sched_usage u;
    size_t i, np = 0;
    uint32_t rid_gpu;
    int rc;

    memset(cp, 0, sizeof(*cp));
    /* compiled pods live in one arena reused across cycles, dropped once it holds 64 KiB
     * (a hundred pods or so: a few frees per thousand cycles, and at most ~128 KiB held) */
    if (c->cp_arena.used > ((size_t)64 << 10))
        arena_release(&c->cp_arena);
    cp->arena = &c->cp_arena;
    cp->src = pod;
    cp->priority = pod->priority;
    cp->preempt_never = pod->preempt_never;
    cp->node_name = SCHED_NOID;
    if (pod->node_name && *pod->node_name) {
        cp->has_node_name = true;
        cp->node_name = sched_intern_find(&c->strs, pod->node_name);
    }
    rc = -ENOMEM;
    if (pod->node_selector.n &&
        !(cp->sel = arena_alloc(cp->arena, pod->node_selector.n * sizeof(*cp->sel))))
        goto out;
    cp->nsel = (uint32_t)pod->node_selector.n;
    for (i = 0; i < pod->node_selector.n; i++) {
        cp->sel[i].key = sched_intern_find(&c->strs, pod->node_selector.v[i].key);
        cp->sel[i].value = sched_intern_find(&c->strs, pod->node_selector.v[i].value);
        if ((rc = sched_cluster_mark_interesting(c, cp->sel[i].key)))
            goto out;
    }
    cp->has_required = pod->has_required_affinity;
    if (cp->has_required) {
        if (pod->required.nterms > 64) {
            rc = err_set(err, -EINVAL, "pod %s/%s: more than 64 node selector terms",
                         pod->namespace_, pod->name);
            goto out_noerr;
        }
        cp->nreq_terms = (uint32_t)pod->required.nterms;
        if (cp->nreq_terms &&
            !(cp->req_terms = arena_alloc(cp->arena, cp->nreq_terms * sizeof(*cp->req_terms))))
            goto out;
        for (i = 0; i < pod->required.nterms; i++)
            if ((rc = compile_term(c, &pod->required.terms[i], cp->arena, &cp->req_terms[i],
                                   &cp->affinity_by_name)))
                goto out;
    }
    if (pod->npreferred &&
        !(cp->pref_terms = arena_alloc(cp->arena, pod->npreferred * sizeof(*cp->pref_terms))))
        goto out;
    for (i = 0; i < pod->npreferred; i++) {
        const struct kube_preferred_term *t = &pod->preferred[i];
        /* a zero weight or an empty preference is skipped, as NewPreferredSchedulingTerms does */
        if (t->weight == 0 || (!t->term.nexprs && !t->term.nfields))
            continue;
        if ((rc = compile_term(c, &t->term, cp->arena, &cp->pref_terms[cp->npref_terms],
                               &cp->preferred_by_name)))
            goto out;
        cp->pref_terms[cp->npref_terms++].weight = t->weight;
    }
    if (prescore_error(pod, cp))
        goto out;
    if (pod->ntolerations &&
        !(cp->tols = arena_alloc(cp->arena, pod->ntolerations * sizeof(*cp->tols))))
        goto out;
    for (i = 0; i < pod->ntolerations; i++) {
        const struct kube_toleration *t = &pod->tolerations[i];
        struct sched_ctol *ct = &cp->tols[cp->ntols];
        if (t->key && *t->key) {
            ct->key = sched_intern_find(&c->strs, t->key);
            if (ct->key == SCHED_NOID)
                continue; /* no taint anywhere has this key */
        } else {
            ct->key = SCHED_NOID;
        }
        ct->exists = t->op == KUBE_TOL_EXISTS;
        ct->value = sched_intern_find(&c->strs, t->value ? t->value : "");
        ct->effect = (uint8_t)t->effect;
        cp->ntols++;
    }
    if ((rc = sched_pod_usage(c, pod, &u))) {
        if (rc == -E2BIG) {
            rc = err_set(err, rc, "pod %s/%s: more than %d extended resources", pod->namespace_,
                         pod->name, SCHED_MAX_POD_SCALARS);
            goto out_noerr;
        }
        goto out;
    }
    cp->cpu = u.cpu;
    cp->mem = u.mem;
    cp->eph = u.eph;
    cp->nz_cpu = u.score_nz_cpu; /* LeastAllocated only (usage.c) */
    cp->nz_mem = u.score_nz_mem;
    memcpy(cp->scalars, u.scalars, u.nscalars * sizeof(u.scalars[0]));
    cp->nscalars = u.nscalars;
    cp->all_zero = !u.cpu && !u.mem && !u.eph && !u.nscalars;
    rid_gpu = p && p->gpu_resource ? sched_intern_find(&c->strs, p->gpu_resource) : c->rid_gpu;
    cp->gpu_rid = rid_gpu;
    for (i = 0; i < u.nscalars; i++)
        if (u.scalars[i].rid == rid_gpu)
            cp->gpu = u.scalars[i].req;
    sched_noderesources_gpu_prepare(c, p, pod, cp);
    np = sched_pod_count_host_ports(pod);
    if (np && !(cp->ports = arena_alloc(cp->arena, np * sizeof(*cp->ports))))
        goto out;
    if (sched_pod_host_ports(c, pod, cp->ports, &cp->nports))
        goto out;
    for (i = 0; i < cp->nports; i++)
        cp->portmask |= SCHED_PORT_BIT(cp->ports[i].port, cp->ports[i].proto);
    if ((rc = compile_prefilter(c, pod, cp)) || (rc = sched_image_compile(c, pod, cp)))
        goto out;
    if ((rc = sched_ipa_compile(c, pod, cp, err)))
        goto out_noerr;
    if (c->classes_dirty && (rc = sched_cluster_refresh_classes(c)))
        goto out;
    return 0;
out:
    if (!rc)
        rc = -ENOMEM;
    err_set(err, rc, "out of memory compiling pod %s/%s", pod->namespace_, pod->name);
out_noerr:
    sched_cpod_release(cp);
    return rc;
}
