/* reference.c - the straightforward evaluation of one pod on one node, used as the oracle for
 * the fast path (tests/unit/test_sched_equiv.c): strings instead of interned ids, the node's
 * full label set instead of its class, and the node's usage summed from its pods instead of
 * the running totals. Slow on purpose; never used by the commands. */
#include "sched/reference-int.h"

#include <stdio.h>
#include <string.h>

#include "base/goparse.h"
#include "sched/cluster-int.h"
#include "sched/framework-int.h"
#include "sched/intern-int.h"
#include "sched/plugins-int.h"
#include "sched/profile-int.h"
#include "sched/sched-int.h"

static const char *str(const struct sched_cluster *c, uint32_t id)
{
    return c->strs.strs[id];
}

static const char *ref_label(const struct sched_cluster *c, const struct sched_slot *s,
                             const char *key)
{
    uint32_t i;

    for (i = 0; i < s->nlabels; i++)
        if (!strcmp(str(c, s->labels[i].key), key))
            return str(c, s->labels[i].value);
    return NULL;
}

static bool ref_tolerates(const struct kube_pod *pod, const char *key, const char *value,
                          enum kube_taint_effect effect, bool prefer_only)
{
    size_t i;

    for (i = 0; i < pod->ntolerations; i++) {
        const struct kube_toleration *t = &pod->tolerations[i];
        const char *tv = t->value ? t->value : "";
        if (prefer_only && t->effect != KUBE_EFFECT_ANY &&
            t->effect != KUBE_EFFECT_PREFER_NO_SCHEDULE)
            continue;
        if (t->effect != KUBE_EFFECT_ANY && t->effect != effect)
            continue;
        if (t->key && *t->key && strcmp(t->key, key))
            continue;
        if (t->op == KUBE_TOL_EXISTS || !strcmp(tv, value))
            return true;
    }
    return false;
}

static bool ref_in(const struct kube_requirement *r, const char *v)
{
    size_t i;

    for (i = 0; i < r->nvalues; i++)
        if (!strcmp(r->values[i], v))
            return true;
    return false;
}

static bool ref_req(const struct kube_requirement *r, const char *v /* NULL absent */)
{
    int64_t a, b;

    if (r->invalid)
        return false;
    switch (r->op) {
    case KUBE_OP_IN:
    case KUBE_OP_EQUALS:
    case KUBE_OP_DOUBLE_EQUALS:
        return r->nvalues && v && ref_in(r, v);
    case KUBE_OP_NOT_IN:
    case KUBE_OP_NOT_EQUALS:
        return r->nvalues && (!v || !ref_in(r, v));
    case KUBE_OP_EXISTS:
        return !r->nvalues && v;
    case KUBE_OP_DOES_NOT_EXIST:
        return !r->nvalues && !v;
    case KUBE_OP_GT:
    case KUBE_OP_LT:
        if (r->nvalues != 1 || go_parse_int(r->values[0], strlen(r->values[0]), 10, 64, &b, NULL) ||
            !v || go_parse_int(v, strlen(v), 10, 64, &a, NULL))
            return false;
        return r->op == KUBE_OP_GT ? a > b : a < b;
    }
    return false;
}

static bool ref_term(const struct sched_cluster *c, const struct sched_slot *s,
                     const struct kube_node_selector_term *t)
{
    size_t i;

    if (!t->nexprs && !t->nfields)
        return false;
    for (i = 0; i < t->nexprs; i++)
        if (!ref_req(&t->exprs[i], ref_label(c, s, t->exprs[i].key)))
            return false;
    for (i = 0; i < t->nfields; i++) {
        const struct kube_requirement *r = &t->fields[i];
        if (r->invalid || strcmp(r->key, "metadata.name") || r->nvalues != 1)
            return false;
        if (r->op == KUBE_OP_IN && strcmp(r->values[0], s->name))
            return false;
        if (r->op == KUBE_OP_NOT_IN && !strcmp(r->values[0], s->name))
            return false;
        if (r->op != KUBE_OP_IN && r->op != KUBE_OP_NOT_IN)
            return false;
    }
    return true;
}

/* The node's HostPortInfo is not a function of its pods (a removed pod took ports shared
 * with others along, sched_slot_usage_apply), so the reference reads that set too. */
static bool ref_port_conflict(const struct sched_cluster *c, const struct sched_slot *s,
                              const struct sched_port *w)
{
    uint32_t j;

    for (j = 0; j < s->cports; j++) {
        const struct sched_port *x = &s->ports[j];
        if (!x->used || x->port != w->port || x->proto != w->proto)
            continue;
        if (!strcmp(str(c, w->ip), "0.0.0.0") || !strcmp(str(c, x->ip), "0.0.0.0") ||
            !strcmp(str(c, x->ip), str(c, w->ip)))
            return true;
    }
    return false;
}

static int64_t slot_alloc_scalar(const struct sched_cluster *c, const struct sched_slot *s,
                                 const char *name)
{
    uint32_t i;

    for (i = 0; i < s->nscalars; i++)
        if (!strcmp(str(c, s->scalars[i].rid), name))
            return s->scalars[i].alloc;
    return 0;
}

static int64_t slot_req_scalar(const struct sched_cluster *c, const struct sched_slot *s,
                               const char *name)
{
    int64_t sum = 0;
    uint32_t i, j;

    for (i = 0; i < s->npods; i++)
        for (j = 0; j < s->pods[i]->nscalars; j++)
            if (!strcmp(str(c, s->pods[i]->scalars[j].rid), name))
                sum = sched_sat_add(sum, s->pods[i]->scalars[j].req);
    return sum;
}

/* ---------------------------------------------------------------- InterPodAffinity */

/* the node's value of label key (by string), NULL when absent */
static const char *ref_label_id(const struct sched_cluster *c, const struct sched_slot *s,
                                uint32_t key)
{
    return ref_label(c, s, str(c, key));
}

/* nodes a and b are in the same domain of key: both have it, with the same value */
static bool ref_same_domain(const struct sched_cluster *c, const struct sched_slot *a,
                            const struct sched_slot *b, uint32_t key)
{
    const char *va = ref_label_id(c, a, key), *vb = ref_label_id(c, b, key);

    return va && vb && !strcmp(va, vb);
}

static bool ref_all_match(const struct sched_pterm *t, uint32_t n, uint32_t nsid,
                          const struct sched_idlabel *l, uint32_t nl)
{
    uint32_t i;

    for (i = 0; i < n; i++)
        if (!sched_ipa_term_matches(&t[i], nsid, l, nl, NULL))
            return false;
    return n > 0;
}

/* The pods the reference counts on node m: its own, or, for the node of a preemption dry run
 * (dry), the pods left there (on), the nominated ones among them only with noms. */
struct ref_pods {
    const struct sched_slot *dry;
    struct sched_pod *const *on;
    uint32_t non;
    bool noms;
};

static uint32_t ref_npods(const struct ref_pods *rp, const struct sched_slot *m)
{
    return rp && m == rp->dry ? rp->non : m->npods;
}

/* ref_pod is the i-th pod on m, or NULL when the dry run leaves it out */
static const struct sched_pod *ref_pod(const struct ref_pods *rp, const struct sched_slot *m,
                                       uint32_t i)
{
    if (!rp || m != rp->dry)
        return m->pods[i];
    return rp->on[i]->nominated && !rp->noms ? NULL : rp->on[i];
}

/* PreFilter's skip, from scratch: the filter runs when the pod has required terms or an
 * existing pod's required anti-affinity term matches it (on a node with the term's key) */
static bool ref_ipa_filter_on(const struct sched_cluster *c, const struct sched_cpod *cp)
{
    const struct sched_pterms *own = sched_ipa_own_terms(cp);
    uint32_t nsid = sched_ipa_own_nsid(cp), nl, i, j, k;
    const struct sched_idlabel *l = sched_ipa_own_labels(cp, &nl);
    const struct sched_ns *ns = sched_cluster_find_namespace(c, nsid);

    if (nsid == SCHED_NOID)
        return false; /* no pod has terms */
    if (own && (own->naff_req || own->nanti_req))
        return true;
    for (k = 0; k < c->norder; k++) {
        const struct sched_slot *m = &c->slots[c->order[k]];
        for (i = 0; i < m->npods; i++) {
            const struct sched_pod *q = m->pods[i];
            for (j = 0; q->terms && j < q->terms->nanti_req; j++)
                if (sched_ipa_term_matches(&q->terms->anti_req[j], nsid, l, nl, ns) &&
                    ref_label_id(c, m, q->terms->anti_req[j].tkey))
                    return true;
        }
    }
    return false;
}

/* The Filter read straight from its rules, every pod of every present node looked at for
 * this node (rp: a dry run's pods): 0 when it passes, else the reason id. */
static uint32_t ref_ipa_filter(const struct sched_cluster *c, const struct sched_cpod *cp,
                               const struct sched_slot *s, const struct ref_pods *rp, bool *un)
{
    const struct sched_pterms *own = sched_ipa_own_terms(cp);
    uint32_t nsid = sched_ipa_own_nsid(cp), nl, i, j, k, t;
    const struct sched_idlabel *l = sched_ipa_own_labels(cp, &nl);
    const struct sched_ns *ns = sched_cluster_find_namespace(c, nsid);
    const struct sched_pod *q;

    *un = false;
    if (!ref_ipa_filter_on(c, cp))
        return 0;
    if (own && own->naff_req) {
        bool exist = true, any = false;
        for (t = 0; t < own->naff_req; t++)
            if (!ref_label_id(c, s, own->aff_req[t].tkey)) {
                *un = true;
                return c->r_ipa_aff;
            }
        /* every term needs a pod matching all terms in the node's domain of that term */
        for (t = 0; t < own->naff_req; t++) {
            bool found = false;
            for (k = 0; k < c->norder && !found; k++) {
                const struct sched_slot *m = &c->slots[c->order[k]];
                for (i = 0; i < ref_npods(rp, m) && !found; i++)
                    found = (q = ref_pod(rp, m, i)) &&
                            ref_all_match(own->aff_req, own->naff_req, q->nsid, q->labels,
                                          q->nlabels) &&
                            ref_same_domain(c, m, s, own->aff_req[t].tkey);
            }
            exist &= found;
        }
        if (!exist) {
            /* the first pod of a group: no matching pod counted anywhere, and the pod
             * matches its own terms */
            for (k = 0; k < c->norder && !any; k++) {
                const struct sched_slot *m = &c->slots[c->order[k]];
                for (i = 0; i < ref_npods(rp, m) && !any; i++) {
                    if (!(q = ref_pod(rp, m, i)) ||
                        !ref_all_match(own->aff_req, own->naff_req, q->nsid, q->labels, q->nlabels))
                        continue;
                    for (t = 0; t < own->naff_req && !any; t++)
                        any = ref_label_id(c, m, own->aff_req[t].tkey) != NULL;
                }
            }
            if (any || !ref_all_match(own->aff_req, own->naff_req, nsid, l, nl)) {
                *un = true;
                return c->r_ipa_aff;
            }
        }
    }
    for (k = 0; k < c->norder; k++) {
        const struct sched_slot *m = &c->slots[c->order[k]];
        for (i = 0; i < ref_npods(rp, m); i++) {
            if (!(q = ref_pod(rp, m, i)))
                continue;
            for (t = 0; own && t < own->nanti_req; t++)
                if (sched_ipa_term_matches(&own->anti_req[t], q->nsid, q->labels, q->nlabels,
                                           NULL) &&
                    ref_same_domain(c, m, s, own->anti_req[t].tkey))
                    return c->r_ipa_anti;
        }
    }
    for (k = 0; k < c->norder; k++) {
        const struct sched_slot *m = &c->slots[c->order[k]];
        for (i = 0; i < ref_npods(rp, m); i++) {
            if (!(q = ref_pod(rp, m, i)))
                continue;
            for (j = 0; q->terms && j < q->terms->nanti_req; j++)
                if (sched_ipa_term_matches(&q->terms->anti_req[j], nsid, l, nl, ns) &&
                    ref_same_domain(c, m, s, q->terms->anti_req[j].tkey))
                    return c->r_ipa_existing;
        }
    }
    return 0;
}

uint32_t sched_ref_ipa_dry_filter(const struct sched_cluster *c, const struct sched_cpod *cp,
                                  uint32_t slot, struct sched_pod *const *on, uint32_t non)
{
    struct ref_pods rp = {&c->slots[slot], on, non, true};
    uint32_t i, r;
    bool un, noms = false;

    for (i = 0; i < non; i++)
        noms |= on[i]->nominated;
    /* RunFilterPluginsWithNominatedPods: with the nominated pods, then without them */
    if (noms && (r = ref_ipa_filter(c, cp, &c->slots[slot], &rp, &un)))
        return r;
    rp.noms = false;
    return ref_ipa_filter(c, cp, &c->slots[slot], &rp, &un);
}

static int64_t ref_term_score(const struct sched_cluster *c, const struct sched_pterm *t, int64_t w,
                              uint32_t nsid, const struct sched_idlabel *l, uint32_t nl,
                              const struct sched_ns *ns, const struct sched_slot *m,
                              const struct sched_slot *s)
{
    return sched_ipa_term_matches(t, nsid, l, nl, ns) && ref_same_domain(c, m, s, t->tkey) ? w : 0;
}

/* The Score: every term of the pod against every pod, and every pod's terms against it,
 * summed over the pods in the node's domains */
static int64_t ref_ipa_score(const struct sched_cluster *c, const struct sched_cpod *cp,
                             const struct sched_slot *s)
{
    const struct sched_pterms *own = sched_ipa_own_terms(cp);
    uint32_t nsid = sched_ipa_own_nsid(cp), nl, i, k, t;
    const struct sched_idlabel *l = sched_ipa_own_labels(cp, &nl);
    const struct sched_ns *ns = sched_cluster_find_namespace(c, nsid);
    int64_t sum = 0;

    if (nsid == SCHED_NOID)
        return 0; /* no pod has terms */
    for (k = 0; k < c->norder; k++) {
        const struct sched_slot *m = &c->slots[c->order[k]];
        for (i = 0; i < m->npods; i++) {
            const struct sched_pod *q = m->pods[i];
            for (t = 0; own && t < own->naff_pref; t++)
                sum += ref_term_score(c, &own->aff_pref[t], own->aff_pref[t].weight, q->nsid,
                                      q->labels, q->nlabels, NULL, m, s);
            for (t = 0; own && t < own->nanti_pref; t++)
                sum -= ref_term_score(c, &own->anti_pref[t], own->anti_pref[t].weight, q->nsid,
                                      q->labels, q->nlabels, NULL, m, s);
            if (!q->terms)
                continue;
            for (t = 0; t < q->terms->naff_req; t++)
                sum += ref_term_score(c, &q->terms->aff_req[t], 1, nsid, l, nl, ns, m, s);
            for (t = 0; t < q->terms->naff_pref; t++)
                sum += ref_term_score(c, &q->terms->aff_pref[t], q->terms->aff_pref[t].weight, nsid,
                                      l, nl, ns, m, s);
            for (t = 0; t < q->terms->nanti_pref; t++)
                sum -= ref_term_score(c, &q->terms->anti_pref[t], q->terms->anti_pref[t].weight,
                                      nsid, l, nl, ns, m, s);
        }
    }
    return sum;
}

/* ImageLocality from the pod's containers and the nodes' image lists, by name */
static bool ref_has_image(const struct sched_cluster *c, const struct sched_slot *s,
                          const char *name)
{
    uint32_t i;

    for (i = 0; i < s->nimages; i++)
        if (!strcmp(str(c, s->images[i]), name))
            return true;
    return false;
}

static int64_t ref_image_one(const struct sched_cluster *c, const struct sched_slot *s,
                             const char *image)
{
    const char *slash = strrchr(image, '/'), *colon = strrchr(image, ':');
    uint32_t k, have = 0, id;
    char name[1024];

    if (!colon || (slash && colon < slash))
        snprintf(name, sizeof(name), "%s:latest", image);
    else
        snprintf(name, sizeof(name), "%s", image);
    if (!ref_has_image(c, s, name))
        return 0;
    for (k = 0; k < c->norder; k++)
        have += ref_has_image(c, &c->slots[c->order[k]], name);
    id = sched_intern_find(&c->strs, name);
    return (int64_t)((double)c->img_size[id] * ((double)have / (double)c->norder));
}

static int32_t ref_image_score(const struct sched_cluster *c, const struct kube_pod *pod,
                               const struct sched_slot *s)
{
    int64_t sum = 0, n = (int64_t)(pod->ncontainers + pod->ninit_containers), mb = 1024 * 1024;
    size_t i;

    if (!n)
        return 0;
    for (i = 0; i < pod->ninit_containers; i++)
        sum +=
            ref_image_one(c, s, pod->init_containers[i].image ? pod->init_containers[i].image : "");
    for (i = 0; i < pod->ncontainers; i++)
        sum += ref_image_one(c, s, pod->containers[i].image ? pod->containers[i].image : "");
    if (sum < 23 * mb)
        sum = 23 * mb;
    if (sum > 1000 * mb * n)
        sum = 1000 * mb * n;
    return (int32_t)(100 * (sum - 23 * mb) / (1000 * mb * n - 23 * mb));
}

/* NodeResourcesFit's score under a --config scoringStrategy, from the node's pods */
static int32_t ref_fit_custom(const struct sched_cluster *c, const struct sched_profile *p,
                              const struct sched_cpod *cp, const struct sched_slot *s, int64_t nzc,
                              int64_t nzm, int64_t eph)
{
    const struct sched_hot *h = &c->hot[s - c->slots];
    int64_t alloc[SCHED_MAX_FIT_RESOURCES], req[SCHED_MAX_FIT_RESOURCES], podreq;
    uint32_t i, k;

    for (i = 0; i < p->nfit_resources; i++) {
        const char *name = p->fit_resources[i].name;
        alloc[i] = req[i] = 0;
        if (!strcmp(name, "cpu")) {
            alloc[i] = h->alloc_cpu;
            req[i] = sched_sat_add(nzc, cp->nz_cpu);
        } else if (!strcmp(name, "memory")) {
            alloc[i] = h->alloc_mem;
            req[i] = sched_sat_add(nzm, cp->nz_mem);
        } else if (!strcmp(name, "ephemeral-storage")) {
            alloc[i] = h->alloc_eph;
            req[i] = sched_sat_add(eph, cp->eph);
        } else {
            podreq = 0;
            for (k = 0; k < cp->nscalars; k++)
                if (!strcmp(str(c, cp->scalars[k].rid), name))
                    podreq = cp->scalars[k].req;
            if (podreq) {
                int64_t total = 0, used = 0;
                alloc[i] = slot_alloc_scalar(c, s, name);
                req[i] = sched_sat_add(slot_req_scalar(c, s, name), podreq);
                if (!alloc[i] && c->dra)
                    sched_dra_extended_totals(
                        c->dra, name, sched_dra_node_at(c->dra, (uint32_t)(s - c->slots), s->name),
                        &total, &used);
                if (total > 0) {
                    alloc[i] = total;
                    req[i] = sched_sat_add(used, podreq);
                }
            }
        }
    }
    return (int32_t)sched_noderesources_score(p, alloc, req);
}

void sched_ref_node(struct sched_cluster *c, const struct sched_profile *p,
                    const struct sched_cpod *cp, uint32_t slot, struct sched_nodeout *o)
{
    const struct kube_pod *pod = cp->src;
    const struct sched_slot *s = &c->slots[slot];
    const struct sched_hot *h = &c->hot[slot];
    int64_t cpu = 0, mem = 0, eph = 0, nzc = 0, nzm = 0, gpu_alloc, gpu_req;
    const char *gpu_name = p && p->gpu_resource ? p->gpu_resource : "nvidia.com/gpu";
    uint32_t i, mask = 0;
    size_t k;
    bool ok, un = false;
    char buf[1024];

    memset(o, 0, sizeof(*o));
    o->unresolvable = true;
    if (s->unschedulable && !ref_tolerates(pod, "node.kubernetes.io/unschedulable", "",
                                           KUBE_EFFECT_NO_SCHEDULE, false)) {
        o->plugin = SCHED_PL_UNSCHEDULABLE;
        o->reason = SCHED_R_UNSCHEDULABLE;
        return;
    }
    if (pod->node_name && *pod->node_name && strcmp(pod->node_name, s->name)) {
        o->plugin = SCHED_PL_NODE_NAME;
        o->reason = SCHED_R_NODE_NAME;
        return;
    }
    for (i = 0; i < s->ntaints; i++) {
        const struct sched_idtaint *t = &s->taints[i];
        if (t->effect != KUBE_EFFECT_NO_SCHEDULE && t->effect != KUBE_EFFECT_NO_EXECUTE)
            continue;
        if (ref_tolerates(pod, str(c, t->key), str(c, t->value), t->effect, false))
            continue;
        o->plugin = SCHED_PL_TAINT;
        if (!p || p->taint_wording == SCHED_TAINT_WORDING_GENERIC) {
            o->reason = SCHED_R_TAINT_GENERIC;
        } else {
            snprintf(buf, sizeof(buf), "node(s) had untolerated taint {%s: %s}", str(c, t->key),
                     str(c, t->value));
            o->reason = sched_intern_add(&c->reasons, buf);
        }
        return;
    }
    ok = true;
    for (k = 0; k < pod->node_selector.n && ok; k++) {
        const char *v = ref_label(c, s, pod->node_selector.v[k].key);
        ok = v && !strcmp(v, pod->node_selector.v[k].value);
    }
    if (ok && pod->has_required_affinity) {
        ok = false;
        for (k = 0; k < pod->required.nterms && !ok; k++)
            ok = ref_term(c, s, &pod->required.terms[k]);
    }
    if (!ok) {
        o->plugin = SCHED_PL_AFFINITY;
        o->reason = SCHED_R_AFFINITY;
        return;
    }
    o->unresolvable = false;
    for (i = 0; i < cp->nports; i++)
        if (ref_port_conflict(c, s, &cp->ports[i])) {
            o->plugin = SCHED_PL_PORTS;
            o->reason = SCHED_R_PORTS;
            return;
        }
    /* RunFilterPluginsWithNominatedPods: pods nominated here with priority >= the pod's */
    if (sched_framework_filter_nominated(c, slot, cp, o))
        return;
    for (i = 0; i < s->npods; i++) {
        cpu = sched_sat_add(cpu, s->pods[i]->cpu);
        mem = sched_sat_add(mem, s->pods[i]->mem);
        eph = sched_sat_add(eph, s->pods[i]->eph);
        nzc = sched_sat_add(nzc, s->pods[i]->nz_cpu);
        nzm = sched_sat_add(nzm, s->pods[i]->nz_mem);
    }
    if ((int64_t)s->npods + 1 > h->alloc_pods)
        mask |= SCHED_FIT_PODS;
    if (cp->cpu || cp->mem || cp->eph || cp->nscalars) {
        if (cp->cpu > 0 && cp->cpu > h->alloc_cpu - cpu) {
            mask |= SCHED_FIT_CPU;
            un |= cp->cpu > h->alloc_cpu;
        }
        if (cp->mem > 0 && cp->mem > h->alloc_mem - mem) {
            mask |= SCHED_FIT_MEM;
            un |= cp->mem > h->alloc_mem;
        }
        if (cp->eph > 0 && cp->eph > h->alloc_eph - eph) {
            mask |= SCHED_FIT_EPH;
            un |= cp->eph > h->alloc_eph;
        }
        for (i = 0; i < cp->nscalars; i++) {
            const char *name = str(c, cp->scalars[i].rid);
            int64_t a = slot_alloc_scalar(c, s, name), r = slot_req_scalar(c, s, name);
            if (cp->scalars[i].req > a - r) {
                mask |= 1u << (SCHED_FIT_SCALAR0 + i);
                un |= cp->scalars[i].req > a;
            }
        }
    }
    if (mask) {
        o->plugin = SCHED_PL_FIT;
        o->reason = mask;
        o->unresolvable = un;
        return;
    }
    if ((o->reason = ref_ipa_filter(c, cp, s, NULL, &o->unresolvable))) {
        o->plugin = SCHED_PL_INTERPOD;
        return;
    }
    o->ipa_raw = ref_ipa_score(c, cp, s);
    o->img_raw = ref_image_score(c, pod, s);
    for (i = 0; i < s->ntaints; i++) {
        const struct sched_idtaint *t = &s->taints[i];
        if (t->effect == KUBE_EFFECT_PREFER_NO_SCHEDULE &&
            !ref_tolerates(pod, str(c, t->key), str(c, t->value), t->effect, true))
            o->taint_raw++;
    }
    for (k = 0; k < pod->npreferred; k++) {
        const struct kube_preferred_term *t = &pod->preferred[k];
        if (t->weight && ref_term(c, s, &t->term))
            o->aff_raw += t->weight;
    }
    o->fit_raw = p && !sched_profile_fit_default(p)
                     ? ref_fit_custom(c, p, cp, s, nzc, nzm, eph)
                     : (int32_t)sched_noderesources_least_allocated(
                           h->alloc_cpu, sched_sat_add(nzc, cp->nz_cpu), h->alloc_mem,
                           sched_sat_add(nzm, cp->nz_mem));
    o->bal_raw = cp->cpu == 0 && cp->mem == 0
                     ? 0
                     : (int32_t)sched_noderesources_balanced(h->alloc_cpu, cpu, cp->cpu,
                                                             h->alloc_mem, mem, cp->mem);
    gpu_alloc = slot_alloc_scalar(c, s, gpu_name);
    gpu_req = slot_req_scalar(c, s, gpu_name);
    if (cp->gpu_dra)
        sched_noderesources_gpu_dra(c, p, slot, &gpu_alloc, &gpu_req);
    o->gpu_raw =
        p && p->gpu_aware ? (int32_t)sched_noderesources_gpu(p, gpu_alloc, gpu_req, cp->gpu) : 0;
}
