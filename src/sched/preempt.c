/* preempt.c - DefaultPreemption (PostFilter) for a pod that fits nowhere.
 *
 * Eligibility (preemptionPolicy; a lower-priority pod terminating by preemption on the
 * nominated node), then kube-scheduler's DryRunPreemption over the nodes whose filter status
 * was Unschedulable (not ...AndUnresolvable), from offset 0 in node order (kube-scheduler's
 * offset is random) until enough candidates are found (calculateNumCandidates): on each,
 * SelectVictimsOnNode removes every lower-priority pod, checks the pod fits (with the pods
 * nominated there that hold room), then reprieves the removed pods, the ones a
 * PodDisruptionBudget protects first, most important first, while it still fits. Candidates
 * are ranked by pickOneNodeForPreemption. Nothing here changes the cluster. */
#include "sched/preempt.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/labels.h"
#include "sched/cluster.h"
#include "sched/filter.h"
#include "sched/intern.h"
#include "sched/interpod.h"
#include "sched/message.h"
#include "sched/reference.h"
#include "sched/sched-int.h"
#include "sched/spread.h"
#include "sched/volumes.h"

/* util.MoreImportantPod: higher priority first, then the earlier start */
static int cmp_importance(const void *a, const void *b)
{
    const struct sched_pod *x = *(struct sched_pod *const *)a, *y = *(struct sched_pod *const *)b;

    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A node's state during the dry run: usage and the pods still on it. */
struct dry {
    struct sched_nodeuse use;
    int64_t sreq[SCHED_MAX_POD_SCALARS];
    struct sched_pod **on; /* pods counted, for ports */
    uint32_t non;
    struct sched_ipa_dry *ipa; /* InterPodAffinity's counts without the removed pods */
};

/* dry_add counts p on the node (sums saturate: sched_sat_add) */
static void dry_add(const struct sched_cluster *c, const struct sched_cpod *cp, struct dry *d,
                    const struct sched_pod *p)
{
    uint32_t i, j;

    d->use.req_cpu = sched_sat_add(d->use.req_cpu, p->cpu);
    d->use.req_mem = sched_sat_add(d->use.req_mem, p->mem);
    d->use.req_eph = sched_sat_add(d->use.req_eph, p->eph);
    d->use.npods++;
    for (i = 0; i < p->nscalars; i++) {
        if (p->scalars[i].rid == c->rid_gpu)
            d->use.req_gpu = sched_sat_add(d->use.req_gpu, p->scalars[i].req);
        for (j = 0; j < cp->nscalars; j++)
            if (cp->scalars[j].rid == p->scalars[i].rid)
                d->sreq[j] = sched_sat_add(d->sreq[j], p->scalars[i].req);
    }
}

/* dry_recount counts the pods of d->on from nothing: the node's usage is theirs alone, and a
 * saturated sum cannot be taken apart by subtraction. */
static void dry_recount(const struct sched_cluster *c, const struct sched_cpod *cp, struct dry *d)
{
    uint32_t i;

    memset(&d->use, 0, sizeof(d->use));
    memset(d->sreq, 0, sizeof(d->sreq));
    for (i = 0; i < d->non; i++)
        dry_add(c, cp, d, d->on[i]);
}

/* the dynamic filters (NodePorts, NodeResourcesFit) on the dry-run state; 0 when it fits */
static int dry_fits(const struct sched_cluster *c, uint32_t slot, const struct sched_cpod *cp,
                    struct dry *d, uint32_t *plugin, uint32_t *reason)
{
    uint32_t i, m;
    bool un;

    if (cp->nports)
        for (i = 0; i < d->non; i++) {
            struct sched_pod *p = d->on[i];
            uint32_t j;
            for (j = 0; j < p->nports; j++) {
                struct sched_port x = p->ports[j];
                x.refs = 1;
                if (!sched_filter_ports(c, &x, 1, cp)) {
                    *plugin = SCHED_PL_PORTS;
                    *reason = SCHED_R_PORTS;
                    return 1;
                }
            }
        }
    if ((m = sched_filter_fit(c, slot, cp, &d->use, d->sreq, &un))) {
        *plugin = SCHED_PL_FIT;
        *reason = m;
        return 1;
    }
    if (cp->vol && !sched_volumes_filter_dry((struct sched_cluster *)c, cp, slot, d->on, d->non,
                                             plugin, reason))
        return 1;
    if (cp->spread && !sched_spread_filter_dry(c, cp, slot, d->on, d->non, reason)) {
        *plugin = SCHED_PL_SPREAD;
        return 1;
    }
    if ((m = cp->ref ? sched_ref_ipa_dry_filter(c, cp, slot, d->on, d->non)
                     : sched_ipa_dry_filter(c, cp, d->ipa, slot))) {
        *plugin = SCHED_PL_INTERPOD;
        *reason = m;
        return 1;
    }
    return 0;
}

static void dry_remove_on(struct dry *d, const struct sched_pod *p)
{
    uint32_t i;

    for (i = 0; i < d->non; i++)
        if (d->on[i] == p) {
            d->on[i] = d->on[--d->non];
            return;
        }
}

/* SelectVictimsOnNode; on success victims (most important first) are in pn */
static int select_victims(struct sched_cluster *c, const struct sched_cpod *cp, uint32_t slot,
                          struct sched_preempt_node *pn)
{
    const struct sched_slot *s = &c->slots[slot];
    const struct sched_hot *h = &c->hot[slot];
    struct sched_pod **lower = NULL;
    uint8_t *violating = NULL;
    struct dry d;
    uint32_t i, nlower = 0, pass;
    int rc = -ENOMEM;

    memset(&d, 0, sizeof(d));
    if (h->min_prio >= cp->priority) {
        pn->reason_plugin = SCHED_PN_NO_VICTIMS;
        pn->reason = SCHED_R_NO_VICTIMS;
        return 0;
    }
    if (!(lower = malloc((s->npods + 1) * sizeof(*lower))) ||
        !(d.on = malloc((s->npods + c->lite[slot].nnom + 1) * sizeof(*d.on))))
        goto out;
    if (sched_ipa_filter_on(cp) && !(d.ipa = sched_ipa_dry_new(cp)))
        goto out;
    for (i = 0; i < s->npods; i++) {
        if (s->pods[i]->priority < cp->priority) {
            lower[nlower++] = s->pods[i];
            /* InterPodAffinity's RemovePod: its counts without the lower-priority pods */
            if (sched_ipa_dry_update(c, cp, d.ipa, s->pods[i], -1))
                goto out;
        } else {
            d.on[d.non++] = s->pods[i];
        }
    }
    /* RunFilterPluginsWithNominatedPods: the pods nominated here with priority >= the pod's
     * hold their room through the dry run (they are never victims) */
    for (i = 0; c->lite[slot].nnom && i < c->nnoms; i++) {
        struct sched_pod *q = c->noms[i];
        if (q->slot == slot && q->priority >= cp->priority &&
            (strcmp(q->name, cp->src->name) || strcmp(q->ns, cp->src->namespace_))) {
            d.on[d.non++] = q;
            if (sched_ipa_dry_nominate(c, cp, d.ipa, q))
                goto out;
        }
    }
    dry_recount(c, cp, &d);
    /* InterPodAffinity's counts (d.ipa) follow the victims through RemovePod / AddPod, and
     * its Filter runs with the nominated pods above and then without them */
    if (dry_fits(c, slot, cp, &d, &pn->reason_plugin, &pn->reason)) {
        rc = 0;
        goto out;
    }
    qsort(lower, nlower, sizeof(*lower), cmp_importance);
    if (!(pn->victims = malloc((nlower + 1) * sizeof(*pn->victims))) ||
        !(violating = calloc(nlower + 1, sizeof(*violating))))
        goto out;
    if (sched_pdb_violations(c, lower, nlower, violating))
        goto out;
    /* reprieve the victims a PodDisruptionBudget protects first, then the others, most
     * important first in both groups */
    for (pass = 0; pass < 2; pass++)
        for (i = 0; i < nlower; i++) {
            uint32_t pl, r;
            struct dry keep = d;

            if (violating[i] != !pass)
                continue;
            dry_add(c, cp, &d, lower[i]);
            d.on[d.non++] = lower[i];
            if (sched_ipa_dry_update(c, cp, d.ipa, lower[i], +1))
                goto out;
            if (dry_fits(c, slot, cp, &d, &pl, &r)) {
                /* back to the usage before the add (a copy: no subtraction from a saturated
                 * sum) */
                d.use = keep.use;
                memcpy(d.sreq, keep.sreq, sizeof(d.sreq));
                dry_remove_on(&d, lower[i]);
                if (sched_ipa_dry_update(c, cp, d.ipa, lower[i], -1))
                    goto out;
                pn->victims[pn->nvictims++] = lower[i];
                pn->npdb_violations += violating[i];
            }
        }
    /* victims are reported most important first */
    qsort(pn->victims, pn->nvictims, sizeof(*pn->victims), cmp_importance);
    pn->reason_plugin = SCHED_PL_NONE;
    rc = 0;
out:
    free(lower);
    free(violating);
    free(d.on);
    sched_ipa_dry_free(d.ipa);
    return rc;
}

int sched_preempt_cmp_candidates(const struct sched_preempt_node *a,
                                 const struct sched_preempt_node *b)
{
    int64_t sa = 0, sb = 0;
    uint64_t ea = UINT64_MAX, eb = UINT64_MAX;
    uint32_t i;

    if (a->npdb_violations != b->npdb_violations)
        return a->npdb_violations < b->npdb_violations ? -1 : 1;
    if (a->victims[0]->priority != b->victims[0]->priority)
        return a->victims[0]->priority < b->victims[0]->priority ? -1 : 1;
    for (i = 0; i < a->nvictims; i++)
        sa += (int64_t)a->victims[i]->priority + (int64_t)INT32_MAX + 1;
    for (i = 0; i < b->nvictims; i++)
        sb += (int64_t)b->victims[i]->priority + (int64_t)INT32_MAX + 1;
    if (sa != sb)
        return sa < sb ? -1 : 1;
    if (a->nvictims != b->nvictims)
        return a->nvictims < b->nvictims ? -1 : 1;
    /* GetEarliestPodStartTime: the earliest start among the highest-priority victims */
    for (i = 0; i < a->nvictims && a->victims[i]->priority == a->victims[0]->priority; i++)
        if (a->victims[i]->seq < ea)
            ea = a->victims[i]->seq;
    for (i = 0; i < b->nvictims && b->victims[i]->priority == b->victims[0]->priority; i++)
        if (b->victims[i]->seq < eb)
            eb = b->victims[i]->seq;
    if (ea != eb)
        return ea > eb ? -1 : 1;
    return 0;
}

uint32_t sched_preempt_num_candidates(uint32_t npotential)
{
    uint32_t n = (uint32_t)((uint64_t)npotential * SCHED_MIN_CANDIDATE_NODES_PERCENTAGE / 100);

    if (n < SCHED_MIN_CANDIDATE_NODES_ABSOLUTE)
        n = SCHED_MIN_CANDIDATE_NODES_ABSOLUTE;
    return n > npotential ? npotential : n;
}

/* podIsViolating: the first budget whose count goes below zero decides */
static bool pdb_violated(const struct sched_cluster *c, const struct sched_pod *p, int32_t *allowed)
{
    uint32_t i;
    size_t k;

    if (!p->klabels.n)
        return false;
    for (i = 0; i < c->npdbs; i++) {
        const struct sched_pdb *b = &c->pdbs[i];
        if (strcmp(b->ns, p->ns) || !b->selector.present || !b->selector.nreqs ||
            !kube_label_selector_matches(&b->selector, &p->klabels))
            continue;
        /* in disruptedPods: the API server has processed its eviction already */
        for (k = 0; k < b->ndisrupted_pods && strcmp(b->disrupted_pods[k], p->name); k++)
            ;
        if (k < b->ndisrupted_pods)
            continue;
        if (--allowed[i] < 0)
            return true;
    }
    return false;
}

int sched_pdb_violations(const struct sched_cluster *c, struct sched_pod *const *victims,
                         uint32_t n, uint8_t *violating)
{
    int32_t *allowed;
    uint32_t i;

    memset(violating, 0, n);
    if (!c->npdbs)
        return 0;
    if (!(allowed = malloc(c->npdbs * sizeof(*allowed))))
        return -ENOMEM;
    for (i = 0; i < c->npdbs; i++)
        allowed[i] = c->pdbs[i].disruptions_allowed;
    for (i = 0; i < n; i++)
        violating[i] = pdb_violated(c, victims[i], allowed);
    free(allowed);
    return 0;
}

void sched_preemption_release(struct sched_preemption *pr)
{
    uint32_t i;

    for (i = 0; pr->nodes && i < pr->n; i++)
        free(pr->nodes[i].victims);
    free(pr->nodes);
    free(pr->message);
    memset(pr, 0, sizeof(*pr));
}

int sched_preempt(struct sched_cluster *c, const struct sched_profile *p,
                  const struct sched_cpod *cp, const struct sched_cycle *cy,
                  const struct sched_rng *rng, struct sched_preemption *pr, struct err *err)
{
    struct sched_hist h = {0};
    uint32_t i, npotential = 0, want, nonviolating = 0, violating = 0;
    char *inner = NULL;
    int rc = -ENOMEM;

    (void)p;
    memset(pr, 0, sizeof(*pr));
    pr->chosen = -1;
    if (cp->preempt_never) {
        pr->ineligible = "not eligible due to preemptionPolicy=Never.";
        goto message;
    }
    if (cp->src->nominated_node_name && *cp->src->nominated_node_name) {
        uint32_t id = sched_intern_find(&c->strs, cp->src->nominated_node_name);
        uint32_t s = id < c->nslot_of_name ? c->slot_of_name[id] : SCHED_NOID;
        if (s != SCHED_NOID && c->slots[s].present &&
            !cy->out[c->slots[s].order_index].unresolvable) {
            for (i = 0; i < c->slots[s].npods; i++) {
                const struct sched_pod *q = c->slots[s].pods[i];
                /* PodTerminatingByPreemption: deletionTimestamp and DisruptionTarget */
                if (q->terminating && q->by_preemption && q->priority < cp->priority) {
                    pr->ineligible = "not eligible due to a terminating pod on the nominated node.";
                    goto message;
                }
            }
        }
    }
    pr->attempted = true;
    pr->n = cy->n;
    if (!(pr->nodes = calloc(cy->n + 1, sizeof(*pr->nodes))))
        goto out;
    for (i = 0; i < cy->n; i++)
        if (cy->out[i].plugin && !cy->out[i].unresolvable)
            npotential++;
    want = sched_preempt_num_candidates(npotential);
    for (i = 0; i < cy->n; i++) {
        struct sched_preempt_node *pn = &pr->nodes[i];
        const struct sched_nodeout *o = &cy->out[i];
        if (!o->plugin || o->unresolvable) {
            pn->reason_plugin = SCHED_PN_NOT_HELPFUL;
            pn->reason = SCHED_R_NOT_HELPFUL;
            continue;
        }
        if (nonviolating && nonviolating + violating >= want) {
            /* DryRunPreemption stopped: enough candidates */
            pn->reason_plugin = SCHED_PN_NOT_CHECKED;
            pn->reason = SCHED_R_NOT_CHECKED;
            continue;
        }
        if ((rc = select_victims(c, cp, c->order[i], pn)))
            goto out;
        if (pn->reason_plugin != SCHED_PL_NONE || !pn->nvictims)
            continue;
        if (pn->npdb_violations)
            violating++;
        else
            nonviolating++;
        if (pr->chosen < 0 || sched_preempt_cmp_candidates(pn, &pr->nodes[pr->chosen]) < 0)
            pr->chosen = (int32_t)i;
    }
    if (pr->chosen >= 0 && rng && rng->follow_preempt) {
        /* a tie on every criterion: the node the caller follows, when it is one of them */
        for (i = 0; i < cy->n; i++) {
            const struct sched_preempt_node *pn = &pr->nodes[i];
            if (pn->reason_plugin == SCHED_PL_NONE && pn->nvictims &&
                !sched_preempt_cmp_candidates(pn, &pr->nodes[pr->chosen]) &&
                !strcmp(c->slots[c->order[i]].name, rng->follow_preempt)) {
                pr->chosen = (int32_t)i;
                break;
            }
        }
    }
message:
    if (pr->chosen >= 0) {
        const struct sched_preempt_node *pn = &pr->nodes[pr->chosen];
        if (!(pr->message =
                  sched_msg_preemption_found(c->slots[c->order[pr->chosen]].name, pn->nvictims)))
            goto out;
        rc = 0;
        goto out;
    }
    if (pr->ineligible) {
        size_t n = strlen(pr->ineligible) + 16;
        if (!(pr->message = malloc(n)))
            goto out;
        snprintf(pr->message, n, "preemption: %s", pr->ineligible);
        rc = 0;
        goto out;
    }
    for (i = 0; i < cy->n; i++) {
        const struct sched_preempt_node *pn = &pr->nodes[i];
        if (pn->reason_plugin == SCHED_PL_FIT || pn->reason_plugin == SCHED_PL_VOLUME_BINDING) {
            /* (VolumeBinding's reason is its SCHED_VB_* bits, like Fit's) */
            struct sched_nodeout o = {.plugin = (uint8_t)pn->reason_plugin, .reason = pn->reason};
            rc = sched_hist_add_node(&h, c, cp, &o);
        } else {
            rc = sched_hist_add(&h, pn->reason, 1);
        }
        if (rc)
            goto out;
    }
    rc = -ENOMEM;
    if (!(inner = sched_fit_error(c, cy->n, &h, NULL)))
        goto out;
    if (!(pr->message = malloc(strlen(inner) + 16)))
        goto out;
    sprintf(pr->message, "preemption: %s", inner);
    rc = 0;
out:
    free(inner);
    sched_hist_release(&h);
    if (rc)
        err_set(err, rc, "out of memory during preemption");
    return rc;
}
