/* schedule.c - the public entry points of one scheduling attempt: sched_schedule_one and
 * sched_explain (one shared driver: compile the pod, run the cycle, on failure build the
 * FailedScheduling message and run preemption), plus profiles and the tie-break generator. */
#include "sched/schedule.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "sched/cluster-int.h"
#include "sched/compile-int.h"
#include "sched/cycle-int.h"
#include "sched/framework-int.h"
#include "sched/message-int.h"
#include "sched/plugins-int.h"
#include "sched/profile-int.h"
#include "sched/sched-int.h"
#include "sched/schedule-int.h"

void sched_result_release(struct sched_result *r)
{
    size_t i;

    if (!r)
        return;
    for (i = 0; i < r->nvictims; i++) {
        free(r->victims[i].namespace_);
        free(r->victims[i].name);
    }
    free(r->victims);
    free(r->node);
    free(r->prebind_node);
    free(r->message);
    free(r->nominated_node);
    memset(r, 0, sizeof(*r));
}

void sched_explanation_release(struct sched_explanation *x)
{
    if (!x)
        return;
    sched_result_release(&x->result);
    arena_release(&x->arena);
    memset(x, 0, sizeof(*x));
}

/* reasons of a node status as strings */
static size_t node_reasons(struct sched_cluster *c, const struct sched_cpod *cp, uint32_t plugin,
                           uint32_t reason, const char **out)
{
    size_t n = 0;
    unsigned b;

    if (cp->prefilter_conflict) {
        /* a PreFilter rejected the pod: every node has that plugin's one text */
        out[n++] = cp->prefilter_msg ? cp->prefilter_msg : c->reasons.strs[reason];
        return n;
    }
    if (plugin == SCHED_PL_VOLUME_BINDING)
        return sched_volumebinding_reasons(reason, out);
    if (plugin != SCHED_PL_FIT) {
        out[n++] = c->reasons.strs[reason];
        return n;
    }
    for (b = 0; b < 32; b++)
        if (reason >> b & 1) {
            uint32_t r = sched_fit_reason(c, cp, b);
            out[n++] = r == SCHED_NOID ? "?" : c->reasons.strs[r];
        }
    return n;
}

/* the preemption column of a node's verdict: its victims, or why it is no candidate (arena
 * text, NULL when out of memory) */
static const char *preemption_text(struct sched_cluster *c, const struct sched_cpod *cp,
                                   const struct sched_preempt_node *pn, struct arena *a)
{
    struct buf t = BUF_INIT(0);
    const char *tmp[40], *s = NULL;
    size_t k, n;
    int rc = 0;

    if (pn->reason_plugin == SCHED_PL_NONE) {
        rc = buf_puts(&t, "victims:");
        for (k = 0; !rc && k < pn->nvictims; k++)
            rc =
                buf_printf(&t, "%s%s/%s", k ? ", " : " ", pn->victims[k]->ns, pn->victims[k]->name);
        if (!rc && pn->npdb_violations)
            rc = buf_printf(&t, " (PDB violations: %u)", pn->npdb_violations);
    } else {
        n = node_reasons(c, cp,
                         pn->reason_plugin == SCHED_PL_FIT ||
                                 pn->reason_plugin == SCHED_PL_VOLUME_BINDING
                             ? pn->reason_plugin
                             : 0,
                         pn->reason, tmp);
        for (k = 0; !rc && k < n; k++)
            rc = buf_printf(&t, "%s%s", k ? ", " : "", tmp[k]);
    }
    if (!rc)
        s = arena_strdup(a, t.data ? t.data : "");
    buf_release(&t);
    return s;
}

static int fill_explanation(struct sched_cluster *c, const struct sched_profile *p,
                            const struct sched_cpod *cp, const struct sched_cycle *cy,
                            const struct sched_preemption *pr, struct sched_explanation *x)
{
    struct arena *a = &x->arena;
    const char *tmp[40];
    uint32_t i, k;

    x->nnodes = cy->n;
    x->nfeasible = cy->nfeasible;
    x->nskipped = cy->nskipped;
    if (cy->n && !(x->nodes = arena_alloc(a, cy->n * sizeof(*x->nodes))))
        return -ENOMEM;
    for (i = 0; i < cy->n; i++) {
        const struct sched_nodeout *o = &cy->out[i];
        struct sched_node_verdict *v = &x->nodes[i];
        if (!(v->node = arena_strdup(a, c->slots[c->order[i]].name)))
            return -ENOMEM;
        v->selected = (int32_t)i == cy->chosen;
        if (o->plugin == SCHED_PL_SKIPPED) {
            v->skipped = true;
        } else if (o->plugin) {
            v->plugin = sched_plugin_name(o->plugin);
            v->unresolvable = o->unresolvable;
            v->nreasons = node_reasons(c, cp, o->plugin, o->reason, tmp);
            if (!(v->reasons = arena_alloc(a, v->nreasons * sizeof(*v->reasons))))
                return -ENOMEM;
            for (k = 0; k < v->nreasons; k++)
                if (!(v->reasons[k] = arena_strdup(a, tmp[k])))
                    return -ENOMEM;
            if (o->plugin == SCHED_PL_DRA && cp->dra) {
                const char *why = sched_dra_why(cp->dra, v->node);

                if (why && !(v->dra_why = arena_strdup(a, why)))
                    return -ENOMEM;
            }
        } else {
            struct sched_score *s = v->scores;
            const struct sched_profile *w = p ? p : &sched_profile_default;
            v->nscores = 0;
            if (w->w_taint)
                s[v->nscores++] = (struct sched_score){
                    "TaintToleration", o->taint_raw,
                    sched_normalize(o->taint_raw, cy->max_taint, true), w->w_taint, 0};
            if (w->w_affinity)
                s[v->nscores++] = (struct sched_score){
                    "NodeAffinity", o->aff_raw, sched_normalize(o->aff_raw, cy->max_aff, false),
                    w->w_affinity, 0};
            if (w->w_fit)
                s[v->nscores++] =
                    (struct sched_score){"NodeResourcesFit", o->fit_raw, o->fit_raw, w->w_fit, 0};
            if (w->w_balanced)
                s[v->nscores++] = (struct sched_score){"NodeResourcesBalancedAllocation",
                                                       o->bal_raw, o->bal_raw, w->w_balanced, 0};
            if (cp->vol && cp->src && cp->src->nclaims)
                s[v->nscores++] =
                    (struct sched_score){"VolumeBinding", o->vol_raw, o->vol_raw, 1, 0};
            if (cp->spread && cy->spread_scored && w->w_spread)
                s[v->nscores++] = (struct sched_score){"PodTopologySpread", o->spread_raw,
                                                       o->spread_norm, w->w_spread, 0};
            if (w->w_interpod)
                s[v->nscores++] = (struct sched_score){
                    "InterPodAffinity", o->ipa_raw,
                    sched_ipa_normalize(o->ipa_raw, cy->min_ipa, cy->max_ipa), w->w_interpod, 0};
            if (w->w_image)
                s[v->nscores++] =
                    (struct sched_score){"ImageLocality", o->img_raw, o->img_raw, w->w_image, 0};
            if (cp->dra)
                s[v->nscores++] = (struct sched_score){
                    "DynamicResources", o->dra_raw, sched_normalize(o->dra_raw, cy->max_dra, false),
                    SCHED_DRA_SCORE_WEIGHT, 0};
            if (p && p->gpu_aware)
                s[v->nscores++] =
                    (struct sched_score){"GPUPlacement", o->gpu_raw, o->gpu_raw, p->gpu_weight, 0};
            for (k = 0; k < v->nscores; k++)
                s[k].weighted = s[k].normalized * s[k].weight;
            v->total = o->total;
        }
        if (pr && pr->nodes && !(v->preemption = preemption_text(c, cp, &pr->nodes[i], a)))
            return -ENOMEM;
    }
    return 0;
}

/* next_start_advance moves kube-scheduler's nextStartNodeIndex past the nodes a sampled cycle
 * filtered. */
static void next_start_advance(struct sched_cluster *c, const struct sched_profile *p,
                               uint32_t processed)
{
    if (sched_sampling_on(p) && c->norder)
        c->next_start = (uint32_t)(((uint64_t)c->next_start + processed) % c->norder);
}

int sched_run(struct sched_cluster *c, const struct sched_profile *p, const struct kube_pod *pod,
              struct sched_rng *rng, bool ref, struct sched_result *out,
              struct sched_explanation *x, struct err *err)
{
    struct sched_cpod cp;
    struct sched_cycle cy;
    struct sched_preemption pr;
    struct sched_hist h = {0};
    struct kube_pod nominated;
    char dra_post[64] = "";
    uint32_t i, npotential = UINT32_MAX;
    int rc;

    memset(out, 0, sizeof(*out));
    memset(&cy, 0, sizeof(cy));
    memset(&pr, 0, sizeof(pr));
    if (!p)
        p = &sched_profile_default;
    if (pod->nscheduling_gates) {
        out->outcome = SCHED_GATED;
        return 0;
    }
    if (pod->nresource_claims && !c->dra) {
        /* no resource.k8s.io objects were given (serve does not read them yet): no pod with
         * claims is placed (the callers warn) */
        out->outcome = SCHED_NOT_MODELLED;
        return 0;
    }
    if (c->dra && sched_dra_cycle_preenqueue(c, pod)) {
        /* DynamicResources' PreEnqueue: its claim does not exist yet, ... */
        out->outcome = SCHED_GATED;
        return 0;
    }
    if (!c->norder) {
        out->outcome = SCHED_UNSCHEDULABLE;
        if (!(out->message = strdup("no nodes available to schedule pods")))
            return err_set(err, -ENOMEM, "out of memory");
        return 0;
    }
    {
        /* the cluster's nomination of the pod is newer than its status */
        const char *nn = sched_cluster_nominated_node(c, pod->namespace_, pod->name);

        if (nn && (!pod->nominated_node_name || strcmp(pod->nominated_node_name, nn))) {
            nominated = *pod;
            nominated.nominated_node_name = nn;
            pod = &nominated;
        }
    }
    if ((rc = sched_pod_compile(c, p, pod, &cp, err)))
        return rc;
    cp.ref = ref;
    if (sched_framework_prefilter(c, &cp)) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out_cp;
    }
    if (cp.dra_error) {
        /* a PreFilter error fails the attempt */
        out->outcome = SCHED_UNSCHEDULABLE;
        out->error = true;
        if (!(out->message = strdup(cp.dra_error)))
            rc = err_set(err, -ENOMEM, "out of memory");
        goto out_cp;
    }
    if (!ref && !x && !cp.prescore_error && !sched_cycle_needs_rows(&cp)) {
        int32_t chosen;
        uint32_t processed;
        if ((rc = sched_cycle_choose(c, p, &cp, rng, &chosen, &processed, err)))
            goto out_cp;
        if (chosen >= 0) {
            next_start_advance(c, p, processed);
            out->outcome = SCHED_SCHEDULED;
            if (!(out->node = strdup(c->slots[c->order[chosen]].name)))
                rc = err_set(err, -ENOMEM, "out of memory");
            goto out_cp;
        }
    }
    if ((rc = sched_cycle_run(c, p, &cp, rng, ref, &cy, err)))
        goto out_cp;
    next_start_advance(c, p, cy.processed);
    rc = -ENOMEM;
    if (cp.dra_error) {
        /* a Filter error (DynamicResources': a CEL runtime error) fails the attempt */
        out->outcome = SCHED_UNSCHEDULABLE;
        out->error = true;
        if (!(out->message = strdup(cp.dra_error)))
            goto out;
    } else if (cy.chosen >= 0 && cp.prescore_error && cy.nfeasible >= 2) {
        /* the attempt had to score, and PreScore failed: a scheduler error */
        out->outcome = SCHED_UNSCHEDULABLE;
        out->error = true;
        if (!(out->message =
                  buf_fmt("running PreScore plugin \"NodeAffinity\": %s", cp.prescore_error)))
            goto out;
    } else if (cy.chosen >= 0) {
        const char *node = c->slots[c->order[cy.chosen]].name;
        char *pberr = NULL;

        if (cp.dra && c->dra_commit) {
            /* Reserve and PreBind: the claims allocated for the pods that follow */
            if ((rc = sched_dra_cycle_prebind(c, &cp, node, &pberr)))
                goto out_cp;
            rc = -ENOMEM;
        }
        if (pberr) {
            out->outcome = SCHED_UNSCHEDULABLE;
            out->error = true;
            out->message = pberr;
            if (!(out->prebind_node = strdup(node)))
                goto out;
        } else {
            out->outcome = SCHED_SCHEDULED;
            if (!(out->node = strdup(node)))
                goto out;
        }
    } else {
        out->outcome = SCHED_UNSCHEDULABLE;
        if (!cp.prefilter_conflict &&
            (rc = sched_hist_add_nodes(&h, c, &cp, cy.out, cy.n, &npotential)))
            goto out;
        rc = -ENOMEM;
        if (!(out->message = sched_fit_error(c, cy.n, &h,
                                             cp.prefilter_msg ? cp.prefilter_msg
                                             : cp.prefilter_conflict
                                                 ? c->reasons.strs[SCHED_R_AFFINITY_CONFLICT]
                                                 : NULL)))
            goto out;
        if (cp.dra && (rc = sched_dra_cycle_postfilter(c, &cp, dra_post, sizeof(dra_post))))
            goto out_cp;
        rc = -ENOMEM;
        if (cp.prefilter_conflict && !p->dra_off && cp.prefilter_plugin != SCHED_PL_DRA) {
            /* a PreFilter rejected the pod as UnschedulableAndUnresolvable (NodeAffinity's
             * conflicting metadata.name pins, a volume plugin's claim checks): the framework
             * stops there, before DynamicResources' PreFilter (later in the profile) writes its
             * cycle state. PostFilter plugins run in profile order, DynamicResources before
             * DefaultPreemption; its PostFilter fails reading that state (ErrNotFound), and an
             * error ends the PostFilter phase: kube-scheduler v1.34+ appends the error's text,
             * "not found", to the FitError's message and does not preempt (DynamicResources'
             * own rejection comes after its state is written: its PostFilter finds no claims
             * and preemption runs) */
            char *m = buf_fmt("%s not found", out->message);
            if (!m)
                goto out;
            free(out->message);
            out->message = m;
            goto done;
        }
        if ((rc = sched_preempt(c, p, &cp, &cy, npotential, rng, ref, x != NULL, &pr, err)))
            goto out_cp;
        rc = -ENOMEM;
        if (pr.chosen >= 0) {
            const struct sched_preempt_node *pn = sched_preemption_chosen(&pr);
            if (!(out->nominated_node = strdup(c->slots[c->order[pr.chosen]].name)) ||
                !(out->victims = calloc(pn->nvictims, sizeof(*out->victims))))
                goto out;
            for (i = 0; i < pn->nvictims; i++) {
                struct sched_victim *v = &out->victims[i];
                v->namespace_ = strdup(pn->victims[i]->ns);
                v->name = strdup(pn->victims[i]->name);
                v->priority = pn->victims[i]->priority;
                v->terminating = pn->victims[i]->terminating;
                out->nvictims++;
                if (!v->namespace_ || !v->name)
                    goto out;
            }
        } else if (pr.attempted) {
            /* a FitError of the dry run: kube-scheduler clears the pod's nomination */
            out->clear_nomination = true;
        }
        if (cp.dra_error && pr.chosen < 0) {
            /* a Filter error in the dry run, and no candidate: preemption fails with it */
            char *m = buf_fmt("%s preemption: %s", out->message, cp.dra_error);

            if (!m)
                goto out;
            free(out->message);
            out->message = m;
            out->clear_nomination = false;
        } else if (pr.message || (dra_post[0] && pr.chosen < 0)) {
            /* the PostFilter plugins' reasons, joined: DynamicResources' first (a success
             * of DefaultPreemption, or its error, drops them) */
            char *m = buf_fmt("%s %s%s%s", out->message, dra_post,
                              dra_post[0] && pr.message ? ", " : "", pr.message ? pr.message : "");
            if (!m)
                goto out;
            free(out->message);
            out->message = m;
            out->requeued = dra_post[0] != '\0';
        }
    }
done:
    if (x) {
        memset(x, 0, sizeof(*x));
        if (fill_explanation(c, p, &cp, &cy, &pr, x))
            goto out;
        if (cp.prescore_error && cy.nfeasible &&
            !(x->score_error =
                  arena_strdup(&x->arena, out->error ? out->message : cp.prescore_error)))
            goto out;
    }
    rc = 0;
out:
    if (rc)
        err_set(err, rc, "out of memory");
out_cp:
    if (rc) {
        sched_result_release(out);
        if (x)
            sched_explanation_release(x);
    }
    sched_hist_release(&h);
    sched_preemption_release(&pr);
    sched_cycle_release(&cy);
    sched_cpod_release(&cp);
    return rc;
}

int sched_schedule_one(struct sched_cluster *c, const struct sched_profile *p,
                       const struct kube_pod *pod, struct sched_rng *rng, struct sched_result *out,
                       struct err *err)
{
    return sched_run(c, p, pod, rng, false, out, NULL, err);
}

int sched_explain(struct sched_cluster *c, const struct sched_profile *p,
                  const struct kube_pod *pod, struct sched_rng *rng, struct sched_explanation *out,
                  struct err *err)
{
    struct sched_result r;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = sched_run(c, p, pod, rng, false, &r, out, err);
    if (!rc)
        out->result = r;
    return rc;
}
