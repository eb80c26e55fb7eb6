/* preempt.c - DefaultPreemption (PostFilter) for a pod that fits nowhere.
 *
 * Eligibility (preemptionPolicy, terminating pods on the nominated node), then on every node
 * whose filter status was Unschedulable (not ...AndUnresolvable) kube-scheduler's
 * SelectVictimsOnNode: remove every lower-priority pod, check the pod fits, then reprieve the
 * removed pods most important first while it still fits. Candidates are ranked by
 * pickOneNodeForPreemption's criteria without PDBs. Nothing here changes the cluster. */
#include "sched/preempt.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/cluster.h"
#include "sched/filter.h"
#include "sched/intern.h"
#include "sched/interpod.h"
#include "sched/message.h"
#include "sched/sched-int.h"


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

static void dry_apply(const struct sched_cluster *c, const struct sched_cpod *cp, struct dry *d,
                      const struct sched_pod *p, int sign)
{
    uint32_t i, j;

    d->use.req_cpu += sign * p->cpu;
    d->use.req_mem += sign * p->mem;
    d->use.req_eph += sign * p->eph;
    d->use.npods += sign;
    for (i = 0; i < p->nscalars; i++) {
        if (p->scalars[i].rid == c->rid_gpu)
            d->use.req_gpu += sign * p->scalars[i].req;
        for (j = 0; j < cp->nscalars; j++)
            if (cp->scalars[j].rid == p->scalars[i].rid)
                d->sreq[j] += sign * p->scalars[i].req;
    }
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
    if ((m = sched_ipa_dry_filter(c, cp, d->ipa, slot))) {
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
    struct dry d;
    uint32_t i, j, nlower = 0;
    int rc = -ENOMEM;

    memset(&d, 0, sizeof(d));
    if (h->min_prio >= cp->priority) {
        pn->reason_plugin = SCHED_PN_NO_VICTIMS;
        pn->reason = SCHED_R_NO_VICTIMS;
        return 0;
    }
    if (!(lower = malloc(s->npods * sizeof(*lower))) || !(d.on = malloc(s->npods * sizeof(*d.on))))
        goto out;
    if (sched_ipa_filter_on(cp) && !(d.ipa = sched_ipa_dry_new(cp)))
        goto out;
    d.use = sched_nodeuse_of(h);
    for (j = 0; j < cp->nscalars; j++) {
        const struct sched_scalar *x = sched_slot_scalar(s, cp->scalars[j].rid);
        d.sreq[j] = x ? x->req : 0;
    }
    for (i = 0; i < s->npods; i++) {
        if (s->pods[i]->priority < cp->priority) {
            lower[nlower++] = s->pods[i];
            dry_apply(c, cp, &d, s->pods[i], -1);
            if (sched_ipa_dry_update(c, cp, d.ipa, s->pods[i], -1))
                goto out;
        } else {
            d.on[d.non++] = s->pods[i];
        }
    }
    if (dry_fits(c, slot, cp, &d, &pn->reason_plugin, &pn->reason)) {
        rc = 0;
        goto out;
    }
    qsort(lower, nlower, sizeof(*lower), cmp_importance);
    if (!(pn->victims = malloc((nlower + 1) * sizeof(*pn->victims))))
        goto out;
    for (i = 0; i < nlower; i++) {
        uint32_t pl, r;
        dry_apply(c, cp, &d, lower[i], +1);
        d.on[d.non++] = lower[i];
        if (sched_ipa_dry_update(c, cp, d.ipa, lower[i], +1))
            goto out;
        if (dry_fits(c, slot, cp, &d, &pl, &r)) {
            dry_apply(c, cp, &d, lower[i], -1);
            dry_remove_on(&d, lower[i]);
            if (sched_ipa_dry_update(c, cp, d.ipa, lower[i], -1))
                goto out;
            pn->victims[pn->nvictims++] = lower[i];
        }
    }
    pn->reason_plugin = SCHED_PL_NONE;
    rc = 0;
out:
    free(lower);
    free(d.on);
    sched_ipa_dry_free(d.ipa);
    return rc;
}

/* pickOneNodeForPreemption without PDBs: lowest highest-victim priority, lowest priority sum,
 * fewest victims, latest start of the most important victims, then node order. Returns <0
 * when a is better, >0 when b is. */
static int cmp_candidates(const struct sched_preempt_node *a, const struct sched_preempt_node *b)
{
    int64_t sa = 0, sb = 0;
    uint64_t ea = UINT64_MAX, eb = UINT64_MAX;
    uint32_t i;

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
                  struct sched_preemption *pr, struct err *err)
{
    struct sched_hist h = {0};
    uint32_t i, npotential = 0;
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
                if (q->terminating && q->priority < cp->priority) {
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
    for (i = 0; i < cy->n; i++) {
        struct sched_preempt_node *pn = &pr->nodes[i];
        const struct sched_nodeout *o = &cy->out[i];
        if (!o->plugin || o->unresolvable) {
            pn->reason_plugin = SCHED_PN_NOT_HELPFUL;
            pn->reason = SCHED_R_NOT_HELPFUL;
            continue;
        }
        npotential++;
        if ((rc = select_victims(c, cp, c->order[i], pn)))
            goto out;
        if (pn->reason_plugin == SCHED_PL_NONE && pn->nvictims &&
            (pr->chosen < 0 || cmp_candidates(pn, &pr->nodes[pr->chosen]) < 0))
            pr->chosen = (int32_t)i;
    }
message:
    if (pr->chosen >= 0) {
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
        if (pn->reason_plugin == SCHED_PL_FIT) {
            struct sched_nodeout o = {.plugin = SCHED_PL_FIT, .reason = pn->reason};
            rc = sched_hist_add_node(&h, c, cp, &o);
        } else {
            rc = sched_hist_add(&h, pn->reason, 1);
        }
        if (rc)
            goto out;
    }
    (void)npotential;
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
