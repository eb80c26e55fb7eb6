/* defaultpreemption.c - DefaultPreemption (PostFilter) for a pod that fits nowhere.
 *
 * Eligibility (preemptionPolicy; a lower-priority pod terminating by preemption on the
 * nominated node), then kube-scheduler's DryRunPreemption over the nodes whose filter status
 * was Unschedulable (not ...AndUnresolvable), from offset 0 in node order (kube-scheduler's
 * offset is random) until enough candidates are found (calculateNumCandidates): on each,
 * SelectVictimsOnNode removes every lower-priority pod, checks the pod fits (with the pods
 * nominated there that hold room), then reprieves the removed pods, the ones a
 * PodDisruptionBudget protects first, most important first, while it still fits. Candidates
 * are ranked by pickOneNodeForPreemption. Nothing here changes the cluster.
 *
 * Two ways to run SelectVictimsOnNode, with the same answer (tests/unit/test_sched_equiv.c
 * holds them to it): select_victims, every filter on the dry-run state, and fast_victims,
 * for pods only NodeResourcesFit (and NodePorts on a node whose pods declare no host port)
 * can reject, on a node without nominated pods. fast_victims reads a summary of the node's
 * pods kept in importance order with their requests and the budgets that cover them (struct
 * pc_slot, refilled when the node changed), so a dry run over hundreds of nodes touches no
 * pod record.
 * Fit only gets harder as pods are added, so the reprieve is a walk over that list. */
#include "sched/plugins-int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "kube/labels.h"
#include "sched/cluster-int.h"
#include "sched/framework-int.h"
#include "sched/intern-int.h"
#include "sched/message-int.h"
#include "sched/reference-int.h"
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
    struct sched_pod **on; /* pods counted, the nominated ones among them */
    uint32_t non;
    /* the node's HostPortInfo as RemovePod and AddPodInfo leave it (only for a pod with host
     * ports): a set, so it is not the ports of the pods in on */
    struct sched_port *ports;
    uint32_t nports;
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

/* HostPortInfo.Add for p's ports: each is in the set once */
static void dry_ports_add(struct dry *d, const struct sched_pod *p)
{
    uint32_t i;

    for (i = 0; i < p->nports; i++)
        if (sched_port_find(d->ports, d->nports, &p->ports[i]) == d->nports) {
            d->ports[d->nports] = p->ports[i];
            d->ports[d->nports++].used = true;
        }
}

/* HostPortInfo.Remove for p's ports: they leave the set even when a pod still on the node
 * holds one of them, so NodePorts finds it free for the rest of the dry run */
static void dry_ports_remove(struct dry *d, const struct sched_pod *p)
{
    uint32_t i, j;

    for (i = 0; i < p->nports; i++)
        if ((j = sched_port_find(d->ports, d->nports, &p->ports[i])) < d->nports)
            d->ports[j] = d->ports[--d->nports];
}

/* the dynamic filters (NodePorts, NodeResourcesFit) on the dry-run state; 0 when it fits */
static int dry_fits(const struct sched_cluster *c, uint32_t slot, const struct sched_cpod *cp,
                    struct dry *d, uint32_t *plugin, uint32_t *reason)
{
    uint32_t i, m;
    bool un;

    /* NodePorts reads the node's set; the nominated pods are added to a copy of the node
     * for the filters (addNominatedPods), so their ports count without entering the set */
    if (cp->nports) {
        bool conflict = !sched_nodeports_filter(c, d->ports, d->nports, cp);
        for (i = 0; !conflict && i < d->non; i++)
            conflict = d->on[i]->nominated && sched_nodeports_pod_conflict(c, d->on[i], cp);
        if (conflict) {
            *plugin = SCHED_PL_PORTS;
            *reason = SCHED_R_PORTS;
            return 1;
        }
    }
    if ((m = sched_noderesources_filter(c, slot, cp, &d->use, d->sreq, &un))) {
        *plugin = SCHED_PL_FIT;
        *reason = m;
        return 1;
    }
    if (!sched_framework_filter_late_dry(c, cp, slot, d->on, d->non, plugin, reason))
        return 1;
    if ((m = cp->ref ? sched_ref_ipa_dry_filter(c, cp, slot, d->on, d->non)
                     : sched_ipa_dry_filter(c, cp, d->ipa, slot))) {
        *plugin = SCHED_PL_INTERPOD;
        *reason = m;
        return 1;
    }
    /* DynamicResources, last: its state does not see the victims go (the plugin has no
     * PreFilterExtensions), so it says what it said in the cycle */
    if (cp->dra) {
        int32_t score;
        bool unres;

        if ((m = sched_dra_cycle_filter(c, cp, slot, &score, &unres))) {
            *plugin = SCHED_PL_DRA;
            *reason = m;
            return 1;
        }
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
    uint32_t i, nlower = 0, pass, cports;
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
    cports = c->lite[slot].nports;
    for (i = 0; cp->nports && i < s->npods; i++)
        cports += s->pods[i]->nports;
    if (cp->nports && !(d.ports = malloc((cports + 1) * sizeof(*d.ports))))
        goto out;
    for (i = 0; cp->nports && i < s->cports; i++)
        if (s->ports[i].used)
            d.ports[d.nports++] = s->ports[i];
    for (i = 0; i < s->npods; i++) {
        if (s->pods[i]->priority < cp->priority) {
            lower[nlower++] = s->pods[i];
            if (d.ports)
                dry_ports_remove(&d, s->pods[i]);
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
            if (d.ports)
                dry_ports_add(&d, lower[i]);
            if (sched_ipa_dry_update(c, cp, d.ipa, lower[i], +1))
                goto out;
            if (dry_fits(c, slot, cp, &d, &pl, &r)) {
                /* back to the usage before the add (a copy: no subtraction from a saturated
                 * sum) */
                d.use = keep.use;
                memcpy(d.sreq, keep.sreq, sizeof(d.sreq));
                dry_remove_on(&d, lower[i]);
                if (d.ports)
                    dry_ports_remove(&d, lower[i]);
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
    free(d.ports);
    sched_ipa_dry_free(d.ipa);
    return rc;
}

/* what pickOneNodeForPreemption ranks a candidate by */
struct pkey {
    uint32_t npdb_violations;
    int32_t top; /* the highest victim priority */
    int64_t sum; /* of (priority + 2^31) over the victims */
    uint32_t nvictims;
    uint64_t earliest; /* the earliest start (seq) among the victims of priority top */
};

/* key_of reads the key of a candidate whose victims (most important first) are vs */
static void key_of(uint32_t npdb_violations, struct sched_pod *const *vs, uint32_t n,
                   struct pkey *k)
{
    uint32_t i;

    k->npdb_violations = npdb_violations;
    k->top = vs[0]->priority;
    k->sum = 0;
    k->nvictims = n;
    k->earliest = UINT64_MAX;
    for (i = 0; i < n; i++)
        k->sum += (int64_t)vs[i]->priority + (int64_t)INT32_MAX + 1;
    /* GetEarliestPodStartTime: the earliest start among the highest-priority victims */
    for (i = 0; i < n && vs[i]->priority == k->top; i++)
        if (vs[i]->seq < k->earliest)
            k->earliest = vs[i]->seq;
}

static int key_cmp(const struct pkey *a, const struct pkey *b)
{
    if (a->npdb_violations != b->npdb_violations)
        return a->npdb_violations < b->npdb_violations ? -1 : 1;
    if (a->top != b->top)
        return a->top < b->top ? -1 : 1;
    if (a->sum != b->sum)
        return a->sum < b->sum ? -1 : 1;
    if (a->nvictims != b->nvictims)
        return a->nvictims < b->nvictims ? -1 : 1;
    if (a->earliest != b->earliest)
        return a->earliest > b->earliest ? -1 : 1;
    return 0;
}

int sched_preempt_cmp_candidates(const struct sched_preempt_node *a,
                                 const struct sched_preempt_node *b)
{
    struct pkey ka, kb;

    key_of(a->npdb_violations, a->victims, a->nvictims, &ka);
    key_of(b->npdb_violations, b->victims, b->nvictims, &kb);
    return key_cmp(&ka, &kb);
}

/* pdb_selects: b's selector matches p's labels. A requirement reads only its own key's
 * label, so each is matched against that one label of p (or none), looked up by id. */
static bool pdb_selects(const struct sched_cluster *c, const struct sched_pdb *b,
                        const struct sched_pod *p)
{
    size_t i;

    for (i = 0; i < b->selector.nreqs; i++) {
        const struct kube_requirement *r = &b->selector.reqs[i];
        uint32_t key = sched_intern_find(&c->strs, r->key);
        const struct sched_idlabel *l =
            key == SCHED_NOID ? NULL : sched_label_find(p->labels, p->nlabels, key);
        struct kube_label one;
        struct kube_labels ls = {&one, 0};

        if (l) {
            one.key = c->strs.strs[l->key];
            one.value = c->strs.strs[l->value];
            ls.n = 1;
        }
        if (!kube_requirement_matches(r, &ls))
            return false;
    }
    return true;
}

/* pdb_covers: budget b counts the eviction of p (podIsViolating's test before the count) */
static bool pdb_covers(const struct sched_cluster *c, const struct sched_pdb *b,
                       const struct sched_pod *p)
{
    size_t k;

    if (!p->nlabels || strcmp(b->ns, p->ns) || !b->selector.present || !b->selector.nreqs ||
        !pdb_selects(c, b, p))
        return false;
    /* in disruptedPods: the API server has processed its eviction already */
    for (k = 0; k < b->ndisrupted_pods && strcmp(b->disrupted_pods[k], p->name); k++)
        ;
    return k == b->ndisrupted_pods;
}

/* ---- the summaries fast_victims reads ---- */

/* one pod of a node, in importance order */
struct pc_ent {
    struct sched_pod *pod;
    int64_t cpu, mem, eph, gpu; /* gpu: the pod's request of c->rid_gpu */
    uint64_t seq;
    int32_t priority;
    uint32_t pdbs; /* bit i: c->pdbs[i] covers the pod (pdb_covers) */
};

struct pc_slot {
    uint32_t gen; /* c->lite[slot].gen when filled; 0: never filled */
    uint64_t pdbs_version;
    bool fast;     /* fast_victims may use it: no negative amount, at most 32 budgets */
    bool ports;    /* some pod of the node has host ports */
    uint32_t pdbs; /* the budgets covering some pod of the node (or of their bits) */
    uint32_t n, cap;
    struct pc_ent *e;
};

struct sched_preempt_cache {
    struct pc_slot *slots;
    uint32_t nslots;
    struct sched_pod **vbuf; /* fast_victims' victims */
    uint8_t *flags;          /* per entry of the node at hand: violating, victim */
    uint32_t cbuf;
    uint64_t fast_nodes; /* nodes fast_victims answered, for the tests */
};

static void pc_free(struct sched_preempt_cache *pc)
{
    uint32_t i;

    if (!pc)
        return;
    for (i = 0; i < pc->nslots; i++)
        free(pc->slots[i].e);
    free(pc->slots);
    free(pc->vbuf);
    free(pc->flags);
    free(pc);
}

static struct sched_preempt_cache *pc_of(struct sched_cluster *c)
{
    if (!c->pcache) {
        if (!(c->pcache = calloc(1, sizeof(*c->pcache))))
            return NULL;
        c->pcache_free = pc_free;
    }
    return c->pcache;
}

uint64_t sched_preempt_fast_nodes(const struct sched_cluster *c)
{
    return c->pcache ? c->pcache->fast_nodes : 0;
}

static int cmp_ent(const void *a, const void *b)
{
    const struct pc_ent *x = a, *y = b;

    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* pc_get returns the summary of slot, refilled if the node changed since; NULL on ENOMEM */
static struct pc_slot *pc_get(struct sched_cluster *c, struct sched_preempt_cache *pc,
                              uint32_t slot)
{
    const struct sched_slot *s = &c->slots[slot];
    struct pc_slot *ps;
    uint32_t i, j;

    if (slot >= pc->nslots) {
        uint32_t n = c->nslots > slot ? c->nslots : slot + 1;
        struct pc_slot *ns = realloc(pc->slots, n * sizeof(*ns));
        if (!ns)
            return NULL;
        memset(ns + pc->nslots, 0, (n - pc->nslots) * sizeof(*ns));
        pc->slots = ns;
        pc->nslots = n;
    }
    ps = &pc->slots[slot];
    if (ps->gen == c->lite[slot].gen && ps->pdbs_version == c->pdbs_version)
        return ps;
    if (s->npods > ps->cap) {
        struct pc_ent *ne = realloc(ps->e, s->npods * sizeof(*ne));
        if (!ne)
            return NULL;
        ps->e = ne;
        ps->cap = s->npods;
    }
    ps->fast = c->npdbs <= 32;
    ps->pdbs = 0;
    ps->ports = false;
    for (i = 0; i < s->npods; i++) {
        struct sched_pod *p = s->pods[i];
        struct pc_ent *e = &ps->e[i];
        e->pod = p;
        e->cpu = p->cpu;
        e->mem = p->mem;
        e->eph = p->eph;
        e->gpu = 0;
        for (j = 0; j < p->nscalars; j++)
            if (p->scalars[j].rid == c->rid_gpu)
                e->gpu = p->scalars[j].req;
        e->seq = p->seq;
        e->priority = p->priority;
        e->pdbs = 0;
        for (j = 0; ps->fast && j < c->npdbs; j++)
            if (pdb_covers(c, &c->pdbs[j], p))
                e->pdbs |= 1u << j;
        ps->pdbs |= e->pdbs;
        ps->ports |= p->nports > 0;
        /* sums of non-negative amounts saturate alike in any order (sched_sat_add) */
        if (e->cpu < 0 || e->mem < 0 || e->eph < 0 || e->gpu < 0)
            ps->fast = false;
    }
    ps->n = s->npods;
    qsort(ps->e, ps->n, sizeof(*ps->e), cmp_ent);
    ps->gen = c->lite[slot].gen;
    ps->pdbs_version = c->pdbs_version;
    return ps;
}

/* fast_pod: cp is a pod fast_victims can judge: no volume, spread, inter-pod affinity or
 * DynamicResources filter would run in the dry run, and its extended resources are only
 * c->rid_gpu */
static bool fast_pod(const struct sched_cluster *c, const struct sched_cpod *cp)
{
    uint32_t j;

    if (cp->vol || cp->spread || sched_ipa_filter_on(cp) || cp->dra)
        return false;
    for (j = 0; j < cp->nscalars; j++)
        if (cp->scalars[j].rid != c->rid_gpu || c->rid_gpu == SCHED_NOID)
            return false;
    return true;
}

static inline void use_add(struct sched_nodeuse *u, const struct pc_ent *e)
{
    u->req_cpu = sched_sat_add(u->req_cpu, e->cpu);
    u->req_mem = sched_sat_add(u->req_mem, e->mem);
    u->req_eph = sched_sat_add(u->req_eph, e->eph);
    u->req_gpu = sched_sat_add(u->req_gpu, e->gpu);
    u->npods++;
}

static uint32_t use_fit(const struct sched_cluster *c, uint32_t slot, const struct sched_cpod *cp,
                        const struct sched_nodeuse *u)
{
    int64_t sreq[SCHED_MAX_POD_SCALARS];
    uint32_t j;
    bool un;

    /* every scalar of the pod is c->rid_gpu (fast_pod) */
    for (j = 0; j < cp->nscalars; j++)
        sreq[j] = u->req_gpu;
    return sched_noderesources_filter(c, slot, cp, u, sreq, &un);
}

/* use_fits is use_fit() == 0 without the reasons, for the reprieve's many checks: the same
 * tests as sched_noderesources_filter's, every scalar of the pod being c->rid_gpu (fast_pod) */
static inline bool use_fits(const struct sched_hot *h, const struct sched_cpod *cp,
                            const struct sched_nodeuse *u)
{
    uint32_t j;

    if (u->npods + 1 > h->alloc_pods)
        return false;
    if (cp->all_zero)
        return true;
    if ((cp->cpu > 0 && cp->cpu > h->alloc_cpu - u->req_cpu) ||
        (cp->mem > 0 && cp->mem > h->alloc_mem - u->req_mem) ||
        (cp->eph > 0 && cp->eph > h->alloc_eph - u->req_eph))
        return false;
    for (j = 0; j < cp->nscalars; j++)
        if (cp->scalars[j].req > h->alloc_gpu - u->req_gpu)
            return false;
    return true;
}

/* fast_victims is select_victims for a pod fast_pod accepts, from the node's summary:
 * 0 with pn filled (its victims in pc->vbuf, most important first) and, for a candidate, *k;
 * 1 when the node is not for it (nominated pods, host ports, no summary): select_victims
 * decides; -ENOMEM. */
static int fast_victims(struct sched_cluster *c, struct sched_preempt_cache *pc,
                        const struct sched_cpod *cp, uint32_t slot, struct sched_preempt_node *pn,
                        struct pkey *k)
{
    const struct pc_slot *ps;
    struct sched_nodeuse use = {0};
    int32_t allowed[32];
    uint32_t i, j, nhigh, m, pass;

    if (c->lite[slot].nnom || (cp->nports && c->lite[slot].nports))
        return 1;
    if (c->hot[slot].min_prio >= cp->priority) {
        pn->reason_plugin = SCHED_PN_NO_VICTIMS;
        pn->reason = SCHED_R_NO_VICTIMS;
        pc->fast_nodes++;
        return 0;
    }
    if (!(ps = pc_get(c, pc, slot)))
        return -ENOMEM;
    /* a node whose HostPortInfo lost a port some pod still declares (a pod that shared it was
     * removed) gets it back when that pod is reprieved: select_victims follows the set */
    if (!ps->fast || (cp->nports && ps->ports))
        return 1;
    if (ps->n > pc->cbuf) {
        struct sched_pod **nv = realloc(pc->vbuf, ps->n * sizeof(*nv));
        uint8_t *nf;
        if (!nv)
            return -ENOMEM;
        pc->vbuf = nv;
        if (!(nf = realloc(pc->flags, ps->n)))
            return -ENOMEM;
        pc->flags = nf;
        pc->cbuf = ps->n;
    }
    pc->fast_nodes++;
    /* the pods that stay: priority >= the pod's, a prefix in importance order */
    for (nhigh = 0; nhigh < ps->n && ps->e[nhigh].priority >= cp->priority; nhigh++)
        use_add(&use, &ps->e[nhigh]);
    if ((m = use_fit(c, slot, cp, &use))) {
        pn->reason_plugin = SCHED_PL_FIT;
        pn->reason = m;
        return 0;
    }
    pn->victims = pc->vbuf;
    pn->reason_plugin = SCHED_PL_NONE;
    if (!ps->pdbs) {
        /* no budget covers a pod of the node: one reprieve pass, most important first, the
         * victims found in that order (the key as they come) */
        for (i = nhigh; i < ps->n; i++) {
            const struct pc_ent *e = &ps->e[i];
            struct sched_nodeuse t = use;
            use_add(&t, e);
            if (use_fits(&c->hot[slot], cp, &t)) {
                use = t;
                continue;
            }
            if (!pn->nvictims) {
                k->top = e->priority;
                k->earliest = e->seq;
                k->sum = 0;
            }
            k->sum += (int64_t)e->priority + (int64_t)INT32_MAX + 1;
            pc->vbuf[pn->nvictims++] = e->pod;
        }
        k->npdb_violations = 0;
        k->nvictims = pn->nvictims;
        return 0;
    }
    /* FilterVictimsWithPDBViolation over the rest, most important first */
    for (j = 0; j < c->npdbs; j++)
        allowed[j] = c->pdbs[j].disruptions_allowed;
    for (i = nhigh; i < ps->n; i++) {
        uint32_t b = ps->e[i].pdbs;
        pc->flags[i] = 0;
        for (j = 0; b; j++, b >>= 1)
            if ((b & 1) && --allowed[j] < 0) {
                pc->flags[i] = 1;
                break;
            }
    }
    /* reprieve the violating ones first, then the others; a pod that no longer fits is a
     * victim */
    for (pass = 0; pass < 2; pass++)
        for (i = nhigh; i < ps->n; i++) {
            struct sched_nodeuse t = use;
            if ((pc->flags[i] & 1) != !pass)
                continue;
            use_add(&t, &ps->e[i]);
            if (!use_fits(&c->hot[slot], cp, &t)) {
                pc->flags[i] |= 2;
                pn->npdb_violations += pc->flags[i] & 1;
            } else {
                use = t;
            }
        }
    for (i = nhigh; i < ps->n; i++)
        if (pc->flags[i] & 2)
            pc->vbuf[pn->nvictims++] = ps->e[i].pod;
    if (pn->nvictims) {
        const struct pc_ent *e = NULL;
        for (i = nhigh; i < ps->n; i++) {
            if (!(pc->flags[i] & 2))
                continue;
            if (!e) {
                e = &ps->e[i];
                k->top = e->priority;
                k->earliest = e->seq;
                k->sum = 0;
            }
            k->sum += (int64_t)ps->e[i].priority + (int64_t)INT32_MAX + 1;
        }
        k->npdb_violations = pn->npdb_violations;
        k->nvictims = pn->nvictims;
    }
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

    for (i = 0; i < c->npdbs; i++)
        if (pdb_covers(c, &c->pdbs[i], p) && --allowed[i] < 0)
            return true;
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
    if (!pr->nodes)
        free(pr->best.victims);
    free(pr->nodes);
    free(pr->message);
    memset(pr, 0, sizeof(*pr));
}

/* the plugin a node's verdict is counted under: Fit's mask and VolumeBinding's SCHED_VB_* bits
 * are several reasons; any other verdict is one interned reason */
static uint32_t status_plugin(uint32_t plugin)
{
    return plugin == SCHED_PL_FIT || plugin == SCHED_PL_VOLUME_BINDING ? plugin : 0;
}

/* a lean run's count of the nodes' statuses, for the message when no node is a candidate */
struct racc {
    struct {
        uint32_t plugin, reason, n;
    } * v;
    uint32_t n, cap, last;
};

static int racc_add(struct racc *a, uint32_t plugin, uint32_t reason)
{
    uint32_t k;

    if (a->n && a->v[a->last].plugin == plugin && a->v[a->last].reason == reason) {
        a->v[a->last].n++;
        return 0;
    }
    for (k = 0; k < a->n && (a->v[k].plugin != plugin || a->v[k].reason != reason); k++)
        ;
    if (k == a->n) {
        if (a->n == a->cap) {
            uint32_t cap = a->cap ? a->cap * 2 : 16;
            void *nv = realloc(a->v, cap * sizeof(*a->v));
            if (!nv)
                return -ENOMEM;
            a->v = nv;
            a->cap = cap;
        }
        a->v[k].plugin = plugin;
        a->v[k].reason = reason;
        a->v[k].n = 0;
        a->n++;
    }
    a->v[k].n++;
    a->last = k;
    return 0;
}

/* keep_victims copies the n victims vs into *dst (grown as needed); 0 or -ENOMEM */
static int keep_victims(struct sched_pod ***dst, uint32_t *cap, struct sched_pod *const *vs,
                        uint32_t n)
{
    if (n > *cap || !*dst) {
        struct sched_pod **nv = realloc(*dst, (n + 1) * sizeof(*nv));
        if (!nv)
            return -ENOMEM;
        *dst = nv;
        *cap = n + 1;
    }
    memcpy(*dst, vs, n * sizeof(*vs));
    return 0;
}

const struct sched_preempt_node *sched_preemption_chosen(const struct sched_preemption *pr)
{
    if (pr->chosen < 0)
        return NULL;
    return pr->nodes ? &pr->nodes[pr->chosen] : &pr->best;
}

int sched_preempt(struct sched_cluster *c, const struct sched_profile *p,
                  const struct sched_cpod *cp, const struct sched_cycle *cy, uint32_t npotential,
                  const struct sched_rng *rng, bool ref, bool all_nodes,
                  struct sched_preemption *pr, struct err *err)
{
    struct sched_hist h = {0};
    struct sched_preempt_cache *pc = NULL;
    struct racc acc = {0};
    struct sched_preempt_node one; /* the node at hand, when all_nodes is off */
    bool one_owned = false;        /* one.victims is select_victims' (malloc'ed) */
    struct sched_pod **bestv = NULL, **followv = NULL;
    struct pkey best_key, follow_key;
    uint32_t i, want, nonviolating = 0, violating = 0, bestcap = 0, followcap = 0;
    int32_t follow = -1;
    char *inner = NULL;
    int rc = -ENOMEM;

    (void)p;
    memset(pr, 0, sizeof(*pr));
    memset(&best_key, 0, sizeof(best_key));
    memset(&follow_key, 0, sizeof(follow_key));
    memset(&one, 0, sizeof(one));
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
    if (all_nodes && !(pr->nodes = calloc(cy->n + 1, sizeof(*pr->nodes))))
        goto out;
    if (!ref && fast_pod(c, cp) && !(pc = pc_of(c)))
        goto out;
    if (npotential == UINT32_MAX)
        for (i = npotential = 0; i < cy->n; i++)
            npotential += cy->out[i].plugin && !cy->out[i].unresolvable;
    want = sched_preempt_num_candidates(npotential);
    for (i = 0; i < cy->n; i++) {
        struct sched_preempt_node *pn = all_nodes ? &pr->nodes[i] : &one;
        const struct sched_nodeout *o = &cy->out[i];
        struct pkey key;
        int slow = 1; /* select_victims answered (its victims malloc'ed) */

        if (!all_nodes) {
            if (one_owned)
                free(one.victims);
            one_owned = false;
            memset(&one, 0, sizeof(one));
        }
        if (!o->plugin || o->unresolvable) {
            pn->reason_plugin = SCHED_PN_NOT_HELPFUL;
            pn->reason = SCHED_R_NOT_HELPFUL;
        } else if (nonviolating && nonviolating + violating >= want) {
            /* DryRunPreemption stopped: enough candidates (so one is chosen, and only an
             * explanation needs the other nodes' verdicts) */
            if (!all_nodes)
                break;
            pn->reason_plugin = SCHED_PN_NOT_CHECKED;
            pn->reason = SCHED_R_NOT_CHECKED;
        } else {
            if (pc && (slow = fast_victims(c, pc, cp, c->order[i], pn, &key)) < 0)
                goto out;
            if (slow) {
                rc = select_victims(c, cp, c->order[i], pn);
                one_owned = !all_nodes;
                if (rc)
                    goto out;
            }
            rc = -ENOMEM;
            if (pn->reason_plugin == SCHED_PL_NONE && pn->nvictims) {
                if (slow)
                    key_of(pn->npdb_violations, pn->victims, pn->nvictims, &key);
                if (pn->npdb_violations)
                    violating++;
                else
                    nonviolating++;
                if (pr->chosen < 0 || key_cmp(&key, &best_key) < 0) {
                    pr->chosen = (int32_t)i;
                    best_key = key;
                    if (!all_nodes && keep_victims(&bestv, &bestcap, pn->victims, pn->nvictims))
                        goto out;
                    pr->best = *pn;
                }
                if (rng && rng->follow_preempt &&
                    !strcmp(c->slots[c->order[i]].name, rng->follow_preempt)) {
                    follow = (int32_t)i;
                    follow_key = key;
                    if (!all_nodes && keep_victims(&followv, &followcap, pn->victims, pn->nvictims))
                        goto out;
                }
            }
            if (all_nodes && !slow && pn->victims) {
                /* the victims are in the summary's scratch: the node keeps a copy */
                struct sched_pod **v = malloc((pn->nvictims + 1) * sizeof(*v));
                if (!v)
                    goto out;
                memcpy(v, pn->victims, pn->nvictims * sizeof(*v));
                pn->victims = v;
            }
        }
        /* every node's status counts in the message when none is a candidate */
        if (!all_nodes && (pn->reason_plugin != SCHED_PL_NONE || !pn->nvictims) &&
            racc_add(&acc, pn->reason_plugin, pn->reason))
            goto out;
    }
    if (pr->chosen >= 0 && follow >= 0 && follow != pr->chosen &&
        !key_cmp(&follow_key, &best_key)) {
        /* a tie on every criterion: the node the caller follows */
        pr->chosen = follow;
        if (!all_nodes) {
            struct sched_pod **t = bestv;
            uint32_t tc = bestcap;
            bestv = followv;
            bestcap = followcap;
            followv = t;
            followcap = tc;
            pr->best.nvictims = follow_key.nvictims;
            pr->best.npdb_violations = follow_key.npdb_violations;
        }
    }
    if (!all_nodes && pr->chosen >= 0) {
        pr->best.reason_plugin = SCHED_PL_NONE;
        pr->best.reason = 0;
        pr->best.victims = bestv;
        bestv = NULL;
    } else {
        memset(&pr->best, 0, sizeof(pr->best));
    }
message:
    if (pr->chosen >= 0) {
        const struct sched_preempt_node *pn = sched_preemption_chosen(pr);
        if (!(pr->message =
                  sched_msg_preemption_found(c->slots[c->order[pr->chosen]].name, pn->nvictims)))
            goto out;
        rc = 0;
        goto out;
    }
    if (pr->ineligible) {
        if (!(pr->message = buf_fmt("preemption: %s", pr->ineligible)))
            goto out;
        rc = 0;
        goto out;
    }
    if (all_nodes) {
        for (i = 0; i < cy->n; i++) {
            const struct sched_preempt_node *pn = &pr->nodes[i];
            if ((rc = sched_hist_add_status(&h, c, cp, status_plugin(pn->reason_plugin), pn->reason,
                                            1)))
                goto out;
        }
    } else {
        for (i = 0; i < acc.n; i++)
            if ((rc = sched_hist_add_status(&h, c, cp, status_plugin(acc.v[i].plugin),
                                            acc.v[i].reason, acc.v[i].n)))
                goto out;
    }
    rc = -ENOMEM;
    if (!(inner = sched_fit_error(c, cy->n, &h, NULL)))
        goto out;
    if (!(pr->message = buf_fmt("preemption: %s", inner)))
        goto out;
    rc = 0;
out:
    if (one_owned)
        free(one.victims);
    free(inner);
    free(bestv);
    free(followv);
    free(acc.v);
    sched_hist_release(&h);
    if (rc)
        err_set(err, rc, "out of memory during preemption");
    return rc;
}
