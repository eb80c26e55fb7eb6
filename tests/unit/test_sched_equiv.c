/* test_sched_equiv.c - the fast path (node classes, interned ids, running totals) must give
 * exactly what the reference path (every node from scratch, strings) gives: per node verdicts,
 * reasons, every plugin score, the choice, the message and the preemption victims, on
 * randomized clusters that are also changed incrementally between pods; with node sampling,
 * also which nodes were filtered and where the next cycle starts. */
#include <stdio.h>
#include <string.h>

#include "kube/rules.h"
#include "sched/plugins-int.h"
#include "sched/sched-int.h"
#include "sched/schedule-int.h"
#include "sched_tb.h"
#include "test.h"

static uint64_t rs;

static unsigned rnd(unsigned n)
{
    rs = rs * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((rs >> 33) % n);
}

static const char *pick(const char *const *v, unsigned n)
{
    return v[rnd(n)];
}

#define PICK(arr) pick(arr, sizeof(arr) / sizeof(arr[0]))

static const char *const zones[] = {"a", "b", "c"};
static const char *const gpus[] = {"Tesla-M40", "Tesla-P100", "A100"};
static const char *const cores[] = {"4", "8", "16", "x", "-3"};
static const char *const taints[] = {"dedicated=gpu:NoSchedule", "a:PreferNoSchedule",
                                     "b=1:PreferNoSchedule", "c:NoExecute",
                                     "node-role.kubernetes.io/control-plane:NoSchedule"};
static const char *const tols[] = {"dedicated=gpu:NoSchedule",
                                   "dedicated:Exists:",
                                   "a:Exists:PreferNoSchedule",
                                   "b=1:",
                                   "c:Exists:NoExecute",
                                   ":Exists:",
                                   "node.kubernetes.io/unschedulable:Exists:NoSchedule",
                                   ":Exists:PreferNoSchedule"};
static const char *const exprs[] = {
    "zone In a b", "zone NotIn c", "gpu Exists", "gpu DoesNotExist",     "cores Gt 4",
    "cores Lt 16", "cores Gt x",   "zone In q",  "gpuname In Tesla-M40", "gpuname NotIn A100"};

/* ---- inter-pod affinity and images, built directly in the object model */
static const char *const apps[] = {"web", "db", "cache"};
static const char *const tkeys[] = {"hostname", "zone", "gpu"};
static const char *const images[] = {"app", "app:latest", "db:1", "big:v2"};

static void *zalloc(struct arena *a, size_t n)
{
    void *p = arena_alloc(a, n);

    memset(p, 0, n);
    return p;
}

static void rand_selector(struct arena *a, struct kube_label_selector *s)
{
    struct kube_requirement *r;

    memset(s, 0, sizeof(*s));
    if (rnd(8) == 0)
        return; /* nil: no pod */
    s->present = true;
    if (rnd(8) == 0)
        return; /* {}: every pod */
    r = zalloc(a, sizeof(*r));
    r->key = "app";
    switch (rnd(3)) {
    case 0:
        r->op = KUBE_OP_NOT_IN;
        break;
    case 1:
        r->op = KUBE_OP_EXISTS;
        break;
    default:
        r->op = KUBE_OP_IN;
    }
    if (r->op != KUBE_OP_EXISTS) {
        r->values = zalloc(a, sizeof(*r->values));
        r->values[0] = PICK(apps);
        r->nvalues = 1;
    }
    s->reqs = r;
    s->nreqs = 1;
}

static void rand_terms(struct arena *a, struct kube_pod_affinity_term **out, size_t *n,
                       bool weighted)
{
    size_t i;

    *n = rnd(3) == 0 ? 1 + rnd(2) : 0;
    *out = *n ? zalloc(a, *n * sizeof(**out)) : NULL;
    for (i = 0; i < *n; i++) {
        struct kube_pod_affinity_term *t = &(*out)[i];
        rand_selector(a, &t->label_selector);
        t->topology_key = PICK(tkeys);
        t->weight = weighted ? 1 + (int32_t)rnd(100) : 0;
        switch (rnd(5)) {
        case 0:
            t->namespaces = zalloc(a, sizeof(*t->namespaces));
            t->namespaces[0] = rnd(2) ? "ns" : "other";
            t->nnamespaces = 1;
            break;
        case 1:
            t->namespace_selector.present = true; /* every namespace */
            break;
        case 2: {
            struct kube_requirement *r = zalloc(a, sizeof(*r));
            r->key = "team";
            r->op = KUBE_OP_IN;
            r->values = zalloc(a, sizeof(*r->values));
            r->values[0] = "a";
            r->nvalues = 1;
            t->namespace_selector.present = true;
            t->namespace_selector.reqs = r;
            t->namespace_selector.nreqs = 1;
            break;
        }
        default:
            break;
        }
    }
}

static unsigned terms_one_in = 2; /* pods with pod affinity terms: one in this many */
static unsigned noms_per_round;   /* pending pods nominated to random nodes after each pod */
static unsigned ipa_dry_rejects;  /* preemption texts with an InterPodAffinity reason */

static void rand_pod_affinity(struct arena *a, struct kube_pod *p)
{
    struct kube_label *l = zalloc(a, sizeof(*l));
    size_t i;

    if (rnd(5)) {
        l->key = "app";
        l->value = PICK(apps);
        p->labels.v = l;
        p->labels.n = 1;
    }
    if (rnd(terms_one_in) == 0) {
        struct kube_pod_extra *x = kube_pod_extra_own(p, a);

        rand_terms(a, &x->pod_affinity.required, &x->pod_affinity.nrequired, false);
        rand_terms(a, &x->pod_affinity.preferred, &x->pod_affinity.npreferred, true);
        rand_terms(a, &x->pod_anti_affinity.required, &x->pod_anti_affinity.nrequired, false);
        rand_terms(a, &x->pod_anti_affinity.preferred, &x->pod_anti_affinity.npreferred, true);
    }
    for (i = 0; i < p->ncontainers; i++)
        if (rnd(2))
            p->containers[i].image = PICK(images);
}

static struct kube_node *rand_node_images(struct kube_node *n, struct arena *a)
{
    static const char *const names_app[] = {"app:latest"}, *const names_db[] = {"db:1", "db:2"},
                             *const names_big[] = {"big:v2"};
    static const struct kube_image pool[] = {{(const char **)names_app, 1, 60 << 20},
                                             {(const char **)names_db, 2, 300 << 20},
                                             {(const char **)names_big, 1, 1500 << 20}};
    size_t k;

    n->images = zalloc(a, 3 * sizeof(*n->images));
    for (k = 0; k < 3; k++)
        if (rnd(2))
            n->images[n->nimages++] = pool[k];
    return n;
}

static struct kube_node *rand_node(struct arena *a, unsigned i)
{
    char name[32], spec[1024];
    int n = 0;
    unsigned g = rnd(3), k;

    snprintf(name, sizeof(name), "n%u", i);
    n += snprintf(spec + n, sizeof(spec) - (size_t)n, "cpu=%u mem=%u pods=%u label:hostname=%s",
                  2000 * (1 + rnd(3)), 4096 * (1 + rnd(3)), rnd(4) ? 110 : 2 + rnd(3), name);
    n += snprintf(spec + n, sizeof(spec) - (size_t)n, " label:zone=%s", PICK(zones));
    if (rnd(4))
        n += snprintf(spec + n, sizeof(spec) - (size_t)n,
                      " label:kubernetes.io/hostname=%s label:topology.kubernetes.io/zone=%s", name,
                      PICK(zones));
    if (rnd(3))
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " label:cores=%s", PICK(cores));
    if (g)
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " gpu=%u label:gpu=%u label:gpuname=%s",
                      1u << rnd(3), g, PICK(gpus));
    if (rnd(5) == 0)
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " eph=%u", 100 * (1 + rnd(3)));
    if (rnd(4) == 0)
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " scalar:example.com/foo=%u", 1 + rnd(3));
    for (k = rnd(3); k > 0 && rnd(2); k--)
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " taint:%s", PICK(taints));
    if (rnd(12) == 0)
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " unschedulable");
    return rand_node_images(tb_node(a, name, spec), a);
}

static struct kube_pod *rand_pod(struct arena *a, unsigned i, unsigned nnodes, bool nominate)
{
    char spec[1024], pin[64], e1[64];
    int n = 0;
    unsigned k;
    struct kube_pod *p;

    n +=
        snprintf(spec + n, sizeof(spec) - (size_t)n, "name=ns/p%u prio=%d", i, (int)rnd(3) * 5 - 5);
    if (rnd(4))
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " cpu=%u", 100 * rnd(30));
    if (rnd(4))
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " mem=%u", 256 * rnd(20));
    if (rnd(3) == 0)
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " gpu=%u", 1 + rnd(2));
    if (rnd(6) == 0)
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " eph=%u", 50 * rnd(4));
    if (rnd(8) == 0)
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " scalar:example.com/foo=1");
    if (rnd(5) == 0)
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " port:%u%s", 80 + rnd(3),
                      rnd(2) ? "" : "@10.0.0.1");
    if (rnd(8) == 0)
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " init:cpu=%u", 500 * rnd(6));
    if (rnd(8) == 0)
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " sidecar:cpu=%u,mem=64", 100 * rnd(6));
    if (rnd(4) == 0)
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " sel:zone=%s", PICK(zones));
    for (k = rnd(4); k > 0; k--)
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " tol:%s", PICK(tols));
    if (rnd(10) == 0)
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " never");
    if (nominate && rnd(3) == 0)
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " nominated=n%u", rnd(nnodes + 2));
    /* labels the spread selectors (and the Service of run_sized) look at, constraints */
    if (rnd(4))
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " label:app=%s", PICK(apps));
    if (rnd(3) == 0)
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " label:v=%u", rnd(2));
    for (k = rnd(3) == 0 ? 1 + rnd(2) : 0; k > 0; k--) {
        static const char *const keys[] = {"zone", "hostname", "gpu",
                                           "topology.kubernetes.io/zone"};
        static const char *const sels[] = {"app=web", "app=db", "app=web", "{}", "nil"};
        static const char *const extra[] = {
            "", "", "", ",minD=4", ",ignoreaff", ",honortaints", ",mlk=v"};
        bool hard = rnd(2);
        n += snprintf(spec + n, sizeof(spec) - (size_t)n, " spread:%s,%u,%s,%s%s",
                      k == 2 ? "hostname" : PICK(keys), 1 + rnd(3),
                      hard ? "DoNotSchedule" : "ScheduleAnyway", PICK(sels),
                      hard ? PICK(extra) : (rnd(2) ? ",ignoreaff" : ""));
    }
    p = tb_pod(a, spec);
    if (rnd(3) == 0)
        tb_req_term(a, p, PICK(exprs), rnd(2) ? PICK(exprs) : NULL, (const char *)NULL);
    if (rnd(5) == 0)
        tb_req_term(a, p, PICK(exprs), (const char *)NULL);
    if (rnd(10) == 0) {
        snprintf(pin, sizeof(pin), "field:metadata.name In n%u", rnd(nnodes + 2));
        snprintf(e1, sizeof(e1), "field:metadata.name %s n%u", rnd(2) ? "In" : "NotIn",
                 rnd(nnodes));
        tb_req_term(a, p, pin, rnd(2) ? e1 : NULL, (const char *)NULL);
    }
    if (rnd(3) == 0)
        tb_pref_term(a, p, 1 + (int)rnd(100), PICK(exprs), (const char *)NULL);
    if (rnd(4) == 0)
        tb_pref_term(a, p, 1 + (int)rnd(100), PICK(exprs), rnd(2) ? PICK(exprs) : NULL,
                     (const char *)NULL);
    if (rnd(15) == 0) {
        snprintf(pin, sizeof(pin), "field:metadata.name In n%u", rnd(nnodes));
        tb_pref_term(a, p, 50, pin, (const char *)NULL);
    }
    rand_pod_affinity(a, p);
    return p;
}

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static void compare(const char *what, const struct sched_result *f,
                    const struct sched_explanation *xf, const struct sched_result *r,
                    const struct sched_explanation *xr)
{
    size_t i, k;

    if (f->outcome != r->outcome || !same_str(f->node, r->node) ||
        !same_str(f->message, r->message) || !same_str(f->nominated_node, r->nominated_node) ||
        f->nvictims != r->nvictims) {
        test_fail(__FILE__, __LINE__, "%s: fast %d %s [%s] vs ref %d %s [%s]", what, f->outcome,
                  f->node ? f->node : "-", f->message ? f->message : "-", r->outcome,
                  r->node ? r->node : "-", r->message ? r->message : "-");
        return;
    }
    for (i = 0; i < f->nvictims; i++)
        if (strcmp(f->victims[i].name, r->victims[i].name))
            test_fail(__FILE__, __LINE__, "%s: victim %zu differs", what, i);
    if (xf->nnodes != xr->nnodes || xf->nfeasible != xr->nfeasible ||
        xf->nskipped != xr->nskipped) {
        test_fail(__FILE__, __LINE__, "%s: node counts differ", what);
        return;
    }
    for (i = 0; i < xf->nnodes; i++) {
        const struct sched_node_verdict *a = &xf->nodes[i], *b = &xr->nodes[i];
        int bad = !same_str(a->node, b->node) || !same_str(a->plugin, b->plugin) ||
                  a->nreasons != b->nreasons || a->unresolvable != b->unresolvable ||
                  a->nscores != b->nscores || a->total != b->total || a->selected != b->selected ||
                  a->skipped != b->skipped || !same_str(a->preemption, b->preemption);
        for (k = 0; !bad && k < a->nreasons; k++)
            bad = strcmp(a->reasons[k], b->reasons[k]) != 0;
        for (k = 0; !bad && k < a->nscores; k++)
            bad = a->scores[k].raw != b->scores[k].raw ||
                  a->scores[k].normalized != b->scores[k].normalized;
        if (bad) {
            test_fail(__FILE__, __LINE__, "%s: node %s: fast %s/%s/%lld vs ref %s/%s/%lld", what,
                      a->node, a->plugin ? a->plugin : "ok", a->nreasons ? a->reasons[0] : "",
                      (long long)a->total, b->plugin ? b->plugin : "ok",
                      b->nreasons ? b->reasons[0] : "", (long long)b->total);
            return;
        }
    }
}

static unsigned stopped_early, nominated_taken; /* sampled cycles seen, for equiv_sampling */
static unsigned spread_rejected, spread_scored; /* nodes PodTopologySpread rejected / scored */

/* run_sized: rounds random pods on a random cluster of nnodes nodes; nominate gives some pods
 * a status.nominatedNodeName */
static void run_sized(uint64_t seed, const struct sched_profile *prof, unsigned rounds,
                      unsigned nnodes, bool nominate)
{
    struct arena a = ARENA_INIT;
    struct sched_cluster *c = sched_cluster_new();
    struct err err = {0};
    unsigned i, next_node;
    char what[64];

    rs = seed;
    {
        /* namespace "ns" carries team=a half of the time; "other" has no object */
        struct kube_label l[2] = {{"kubernetes.io/metadata.name", "ns"}, {"team", "a"}};
        struct kube_namespace ns = {"ns", {l, rnd(2) ? 2u : 1u}};
        CHECK_INT_EQ(sched_cluster_set_namespace(c, &ns, &err), 0);
    }
    for (i = 0; i < nnodes; i++)
        CHECK_INT_EQ(sched_cluster_add_node(c, rand_node(&a, i), &err), 0);
    {
        /* a Service selecting app=web: the system default spreading for such pods */
        static const char *web[] = {"web"};
        struct kube_requirement r = {"app", KUBE_OP_IN, web, 1, false};
        struct kube_label_selector svc = {true, &r, 1};
        CHECK_INT_EQ(sched_cluster_add_spread_source(c, NULL, "ns", "web", &svc, &err), 0);
    }
    next_node = nnodes;
    for (i = 0; i < rounds; i++) {
        struct kube_pod *p = rand_pod(&a, i, next_node, nominate);
        struct sched_result rf, rr, rq;
        struct sched_explanation xf, xr;
        struct sched_rng g1, g2, g3;
        uint32_t start = c->next_start, after_fast, after_ref;

        sched_rng_seed(&g1, i);
        sched_rng_seed(&g2, i);
        sched_rng_seed(&g3, i);
        snprintf(what, sizeof(what), "seed %llu pod %u", (unsigned long long)seed, i);
        memset(&xf, 0, sizeof(xf));
        memset(&xr, 0, sizeof(xr));
        CHECK_INT_EQ(sched_run(c, prof, p, &g1, false, &rf, &xf, &err), 0);
        after_fast = c->next_start;
        c->next_start = start;
        CHECK_INT_EQ(sched_run(c, prof, p, &g2, true, &rr, &xr, &err), 0);
        after_ref = c->next_start;
        c->next_start = start;
        compare(what, &rf, &xf, &rr, &xr);
        if (rf.message && strstr(rf.message, "preemption: 0/") &&
            strstr(strstr(rf.message, "preemption: 0/"), "pod"))
            ipa_dry_rejects +=
                strstr(strstr(rf.message, "preemption: 0/"), "affinity rules") != NULL;
        for (size_t v = 0; v < xf.nnodes; v++) {
            spread_rejected +=
                xf.nodes[v].plugin && !strcmp(xf.nodes[v].plugin, "PodTopologySpread");
            for (size_t k = 0; k < xf.nodes[v].nscores; k++)
                spread_scored += !strcmp(xf.nodes[v].scores[k].plugin, "PodTopologySpread") &&
                                 xf.nodes[v].scores[k].normalized < 100;
        }
        stopped_early += xf.nskipped > 0;
        nominated_taken += xf.nskipped > 0 && xf.nfeasible == 1 && p->nominated_node_name[0] &&
                           rf.node && !strcmp(rf.node, p->nominated_node_name);
        /* the choose-only fast path of sched_schedule_one */
        CHECK_INT_EQ(sched_run(c, prof, p, &g3, false, &rq, NULL, &err), 0);
        if (after_fast != after_ref || after_ref != c->next_start)
            test_fail(__FILE__, __LINE__, "%s: next start %u (fast) %u (ref) %u (choose)", what,
                      (unsigned)after_fast, (unsigned)after_ref, (unsigned)c->next_start);
        if (rq.outcome != rr.outcome || !same_str(rq.node, rr.node) ||
            !same_str(rq.message, rr.message) || rq.nvictims != rr.nvictims)
            test_fail(__FILE__, __LINE__, "%s: schedule_one %s [%s] vs ref %s [%s]", what,
                      rq.node ? rq.node : "-", rq.message ? rq.message : "-",
                      rr.node ? rr.node : "-", rr.message ? rr.message : "-");
        sched_result_release(&rq);
        if (rf.outcome == SCHED_SCHEDULED)
            CHECK_INT_EQ(sched_cluster_assume_pod(c, p, rf.node, &err), 0);
        else if (rf.nominated_node && rnd(2))
            for (size_t v = 0; v < rf.nvictims; v++)
                sched_cluster_remove_pod(c, rf.victims[v].namespace_, rf.victims[v].name);
        sched_result_release(&rf);
        sched_result_release(&rr);
        sched_explanation_release(&xf);
        sched_explanation_release(&xr);
        /* incremental changes between pods */
        switch (rnd(12)) {
        case 0: /* relabel / retaint an existing node */
            sched_cluster_update_node(c, rand_node(&a, rnd(next_node)), &err);
            break;
        case 1: {
            char name[32];
            snprintf(name, sizeof(name), "n%u", rnd(next_node));
            sched_cluster_remove_node(c, name);
            break;
        }
        case 2:
            sched_cluster_add_node(c, rand_node(&a, next_node++), &err);
            break;
        case 3: {
            char name[32];
            snprintf(name, sizeof(name), "p%u", rnd(i + 1));
            sched_cluster_remove_pod(c, "ns", name);
            break;
        }
        case 4: { /* a pending pod the nominator holds on a node (filters, the dry run) */
            char name[32];
            snprintf(name, sizeof(name), "n%u", rnd(next_node));
            sched_cluster_nominate(c, rand_pod(&a, 100000 + i, next_node, false), name, &err);
            break;
        }
        case 5: {
            char name[32];
            snprintf(name, sizeof(name), "p%u", 100000 + rnd(i + 1));
            sched_cluster_unnominate(c, "ns", name);
            break;
        }
        case 6: { /* our own preemption evicts a pod: it is terminating at once */
            char name[32];
            snprintf(name, sizeof(name), "p%u", rnd(i + 1));
            sched_cluster_mark_preempted(c, "ns", name, rnd(4) != 0);
            break;
        }
        default:
            break;
        }
        for (unsigned k = 0; k < noms_per_round; k++) {
            char name[32];
            snprintf(name, sizeof(name), "n%u", rnd(next_node));
            sched_cluster_nominate(c, rand_pod(&a, 200000 + i * 8 + k, next_node, false), name,
                                   &err);
        }
    }
    sched_cluster_free(c);
    arena_release(&a);
}

/* run_preempt: full nodes, pods of mixed priorities under PodDisruptionBudgets, and pending
 * pods of higher priority, mostly with requests only (the dry run's fast path: summaries of
 * the nodes' pods) and some with host ports, extended resources, a spread constraint or a
 * nomination (select_victims): the reference path (every node through select_victims) must
 * pick the same node and victims, give every node the same preemption verdict and the same
 * message, while nodes, pods and budgets change between pods. */
static unsigned preempt_found;
static uint64_t preempt_fast_nodes;

static void random_pdb(struct sched_cluster *c, unsigned k)
{
    static const char *apps_a[] = {"web"}, *apps_b[] = {"db"}, *apps_c[] = {"cache", "db"};
    static const char *disrupted[] = {"q3"};
    static struct kube_requirement reqs[3] = {{"app", KUBE_OP_IN, apps_a, 1, false},
                                              {"app", KUBE_OP_IN, apps_b, 1, false},
                                              {"app", KUBE_OP_IN, apps_c, 2, false}};
    struct kube_pdb pdb;
    struct err err = {0};
    char name[16];

    memset(&pdb, 0, sizeof(pdb));
    snprintf(name, sizeof(name), "b%u", k);
    pdb.namespace_ = rnd(4) ? "ns" : "other";
    pdb.name = name;
    pdb.selector.present = rnd(8) != 0;
    pdb.selector.reqs = &reqs[rnd(3)];
    pdb.selector.nreqs = rnd(8) ? 1 : 0;
    pdb.disruptions_allowed = (int32_t)rnd(4) - 1;
    if (rnd(4) == 0) {
        pdb.disrupted_pods = disrupted;
        pdb.ndisrupted_pods = 1;
    }
    CHECK_INT_EQ(sched_cluster_set_pdb(c, &pdb, &err), 0);
}

static void run_preempt(uint64_t seed, unsigned rounds)
{
    struct arena a = ARENA_INIT;
    struct sched_cluster *c = sched_cluster_new();
    struct err err = {0};
    unsigned i, k, nnodes = 3 + (unsigned)(seed % 40), next_pod = 0;
    char spec[512], what[64];

    rs = seed;
    for (i = 0; i < nnodes; i++) {
        char name[16];
        snprintf(name, sizeof(name), "n%u", i);
        snprintf(spec, sizeof(spec), "cpu=%u mem=%u pods=%u label:zone=%s%s%s", 2000 * (1 + rnd(3)),
                 4096 * (1 + rnd(2)), rnd(5) ? 110 : 3 + rnd(4), PICK(zones),
                 rnd(3) ? "" : " gpu=4", rnd(6) ? "" : " scalar:example.com/foo=2");
        CHECK_INT_EQ(sched_cluster_add_node(c, tb_node(&a, name, spec), &err), 0);
    }
    for (k = 0; k < 1 + rnd(4); k++)
        random_pdb(c, k);
    /* fill the nodes with pods of low and mixed priorities */
    for (i = 0; i < nnodes * 4; i++) {
        snprintf(
            spec, sizeof(spec), "name=%s/q%u node=n%u prio=%d cpu=%u mem=%u%s%s%s label:app=%s",
            rnd(5) ? "ns" : "other", next_pod++, rnd(nnodes), (int)rnd(4) * 10 - 10,
            500 * (1 + rnd(4)), 512 * rnd(4), rnd(4) ? "" : " gpu=1", rnd(10) ? "" : " port:8080",
            rnd(40) ? "" : " gpu=9223372036854775807", PICK(apps));
        CHECK_INT_EQ(sched_cluster_add_pod(c, tb_pod(&a, spec), &err), 0);
    }
    for (i = 0; i < rounds; i++) {
        struct kube_pod *p;
        struct sched_result rf, rr, rq;
        struct sched_explanation xf, xr;
        struct sched_rng g1, g2, g3;
        int n = 0;

        n += snprintf(spec + n, sizeof(spec) - (size_t)n, "name=ns/u%u prio=%d cpu=%u mem=%u", i,
                      (int)rnd(4) * 10, 500 * (1 + rnd(6)), 512 * rnd(6));
        if (rnd(4) == 0)
            n += snprintf(spec + n, sizeof(spec) - (size_t)n, " gpu=%u", 1 + rnd(3));
        if (rnd(12) == 0)
            n += snprintf(spec + n, sizeof(spec) - (size_t)n, " port:8080");
        if (rnd(12) == 0)
            n += snprintf(spec + n, sizeof(spec) - (size_t)n, " scalar:example.com/foo=1");
        if (rnd(12) == 0)
            n += snprintf(spec + n, sizeof(spec) - (size_t)n,
                          " label:app=web spread:zone,1,DoNotSchedule,app=web");
        if (rnd(10) == 0)
            n += snprintf(spec + n, sizeof(spec) - (size_t)n, " nominated=n%u", rnd(nnodes));
        if (rnd(15) == 0)
            n += snprintf(spec + n, sizeof(spec) - (size_t)n, " never");
        p = tb_pod(&a, spec);
        sched_rng_seed(&g1, i);
        sched_rng_seed(&g2, i);
        sched_rng_seed(&g3, i);
        snprintf(what, sizeof(what), "preempt seed %llu pod %u", (unsigned long long)seed, i);
        CHECK_INT_EQ(sched_run(c, NULL, p, &g1, false, &rf, &xf, &err), 0);
        CHECK_INT_EQ(sched_run(c, NULL, p, &g2, true, &rr, &xr, &err), 0);
        compare(what, &rf, &xf, &rr, &xr);
        CHECK_INT_EQ(sched_run(c, NULL, p, &g3, false, &rq, NULL, &err), 0);
        if (rq.outcome != rr.outcome || !same_str(rq.node, rr.node) ||
            !same_str(rq.message, rr.message) || !same_str(rq.nominated_node, rr.nominated_node) ||
            rq.nvictims != rr.nvictims)
            test_fail(__FILE__, __LINE__, "%s: schedule_one %s [%s] vs ref %s [%s]", what,
                      rq.nominated_node ? rq.nominated_node : "-", rq.message ? rq.message : "-",
                      rr.nominated_node ? rr.nominated_node : "-", rr.message ? rr.message : "-");
        for (k = 0; k < rq.nvictims && k < rr.nvictims; k++)
            if (strcmp(rq.victims[k].name, rr.victims[k].name) ||
                strcmp(rq.victims[k].namespace_, rr.victims[k].namespace_))
                test_fail(__FILE__, __LINE__, "%s: schedule_one victim %u differs", what, k);
        preempt_found += rr.nvictims > 0;
        /* as the scheduler goes on: the victims go, the pod takes the room */
        if (rf.outcome == SCHED_SCHEDULED) {
            CHECK_INT_EQ(sched_cluster_assume_pod(c, p, rf.node, &err), 0);
        } else if (rf.nominated_node) {
            for (k = 0; k < rf.nvictims; k++)
                sched_cluster_remove_pod(c, rf.victims[k].namespace_, rf.victims[k].name);
            if (rnd(2))
                CHECK_INT_EQ(sched_cluster_assume_pod(c, p, rf.nominated_node, &err), 0);
        }
        sched_result_release(&rf);
        sched_result_release(&rr);
        sched_result_release(&rq);
        sched_explanation_release(&xf);
        sched_explanation_release(&xr);
        switch (rnd(10)) {
        case 0: /* new low-priority pods somewhere */
            for (k = 0; k < 3; k++) {
                snprintf(spec, sizeof(spec), "name=ns/q%u node=n%u prio=%d cpu=%u label:app=%s",
                         next_pod++, rnd(nnodes), (int)rnd(3) * 10 - 10, 500 * (1 + rnd(2)),
                         PICK(apps));
                CHECK_INT_EQ(sched_cluster_add_pod(c, tb_pod(&a, spec), &err), 0);
            }
            break;
        case 1: /* a budget changes or goes */
            if (rnd(2))
                random_pdb(c, rnd(5));
            else {
                char name[16];
                snprintf(name, sizeof(name), "b%u", rnd(5));
                sched_cluster_remove_pdb(c, rnd(4) ? "ns" : "other", name);
            }
            break;
        case 2: { /* a node's allocatable changes */
            char name[16];
            snprintf(name, sizeof(name), "n%u", rnd(nnodes));
            snprintf(spec, sizeof(spec), "cpu=%u mem=8192 gpu=%u label:zone=a", 2000 * (1 + rnd(4)),
                     rnd(5));
            CHECK_INT_EQ(sched_cluster_update_node(c, tb_node(&a, name, spec), &err), 0);
            break;
        }
        case 3: { /* a pod goes */
            char name[16];
            snprintf(name, sizeof(name), "q%u", rnd(next_pod));
            sched_cluster_remove_pod(c, "ns", name);
            break;
        }
        default:
            break;
        }
    }
    preempt_fast_nodes += sched_preempt_fast_nodes(c);
    sched_cluster_free(c);
    arena_release(&a);
}

static void equiv_preempt(void)
{
    uint64_t s;

    preempt_found = 0;
    preempt_fast_nodes = 0;
    for (s = 500; s < 560; s++)
        run_preempt(s, 40);
    /* both ways of the dry run were taken, and preemption found victims often */
    CHECK(preempt_found > 300);
    CHECK(preempt_fast_nodes > 5000);
}

static void run_random(uint64_t seed, const struct sched_profile *prof, unsigned rounds)
{
    run_sized(seed, prof, rounds, 5 + (unsigned)(seed % 30), false);
}

static void equiv_default(void)
{
    uint64_t s;

    for (s = 1; s <= 40; s++)
        run_random(s, &sched_profile_default, 60);
    /* the random pods reach PodTopologySpread's filter and score */
    CHECK(spread_rejected > 50);
    CHECK(spread_scored > 50);
}

/* many pods nominated to the nodes, many with terms: the preemption dry run counts them in
 * InterPodAffinity's first pass */
static void equiv_nominated_dry_run(void)
{
    uint64_t s;

    noms_per_round = 2;
    terms_one_in = 1;
    ipa_dry_rejects = 0;
    for (s = 300; s <= 360; s++)
        run_sized(s, &sched_profile_default, 40, 3 + (unsigned)(s % 6), false);
    noms_per_round = 0;
    terms_one_in = 2;
    CHECK(ipa_dry_rejects > 10);
}

/* more distinct terms than the counters InterPodAffinity keeps (4,096): the least recently
 * used are dropped and counted again from the pods when they come back */
static void equiv_many_terms(void)
{
    struct arena a = ARENA_INIT;
    struct sched_cluster *c = sched_cluster_new();
    struct err err = {0};
    unsigned i, k;
    char what[64], spec[96], val[32];

    rs = 7;
    for (i = 0; i < 6; i++)
        CHECK_INT_EQ(sched_cluster_add_node(c, rand_node(&a, i), &err), 0);
    for (i = 0; i < 4500; i++) {
        struct kube_pod *p;
        struct kube_pod_affinity_term *t = zalloc(&a, sizeof(*t));
        struct kube_requirement *r = zalloc(&a, sizeof(*r));
        const char **v = zalloc(&a, 2 * sizeof(*v));
        struct sched_result rf, rr;
        struct sched_explanation xf, xr;

        /* terms app In (v<j>, w<i>): 4,300 distinct ones, then the first ones again */
        snprintf(spec, sizeof(spec), "name=ns/m%u cpu=10 label:app=v%u", i, i % 37);
        p = tb_pod(&a, spec);
        for (k = 0; k < 2; k++) {
            snprintf(val, sizeof(val), "v%u", (i % 4300 + k) % 40);
            v[k] = arena_strdup(&a, val);
        }
        snprintf(val, sizeof(val), "w%u", i % 4300);
        v[1] = arena_strdup(&a, val);
        *r = (struct kube_requirement){"app", KUBE_OP_IN, v, 2, false};
        t->label_selector = (struct kube_label_selector){true, r, 1};
        t->topology_key = PICK(tkeys);
        if (i % 2) {
            kube_pod_extra_own(p, &a)->pod_anti_affinity.required = t;
            p->extra->pod_anti_affinity.nrequired = 1;
        } else {
            t->weight = 1 + (int32_t)(i % 7);
            kube_pod_extra_own(p, &a)->pod_affinity.preferred = t;
            p->extra->pod_affinity.npreferred = 1;
        }
        snprintf(what, sizeof(what), "many terms pod %u", i);
        memset(&xf, 0, sizeof(xf));
        memset(&xr, 0, sizeof(xr));
        CHECK_INT_EQ(sched_run(c, NULL, p, NULL, false, &rf, &xf, &err), 0);
        CHECK_INT_EQ(sched_run(c, NULL, p, NULL, true, &rr, &xr, &err), 0);
        compare(what, &rf, &xf, &rr, &xr);
        if (rf.outcome == SCHED_SCHEDULED && i % 50 == 0)
            CHECK_INT_EQ(sched_cluster_assume_pod(c, p, rf.node, &err), 0);
        if (i % 100 == 75) { /* and one in two leaves again */
            snprintf(val, sizeof(val), "m%u", i - 75);
            sched_cluster_remove_pod(c, "ns", val);
        }
        sched_result_release(&rf);
        sched_result_release(&rr);
        sched_explanation_release(&xf);
        sched_explanation_release(&xr);
    }
    sched_cluster_free(c);
    arena_release(&a);
}

static void equiv_gpu(void)
{
    uint64_t s;

    for (s = 100; s <= 130; s++)
        run_random(s, &sched_profile_gpu, 60);
}

static void equiv_key_value_taint_wording(void)
{
    struct sched_profile p = sched_profile_default;
    uint64_t s;

    p.taint_wording = SCHED_TAINT_WORDING_KEY_VALUE;
    for (s = 200; s <= 210; s++)
        run_random(s, &p, 40);
}

static void equiv_other_gpu_resource(void)
{
    struct sched_profile p = sched_profile_gpu;
    uint64_t s;

    p.gpu_resource = "example.com/foo";
    for (s = 300; s <= 305; s++)
        run_random(s, &p, 40);
}

/* --config profiles: other weights, a plugin off, and each NodeResourcesFit strategy over
 * cpu, memory, ephemeral-storage and nvidia.com/gpu */
static void equiv_config_strategies(void)
{
    struct sched_profile p = sched_profile_default;
    uint64_t s;

    p.w_taint = 1;
    p.w_affinity = 7;
    p.w_fit = 5;
    p.w_balanced = 0;
    p.w_spread = 3;
    p.nfit_resources = 4;
    p.fit_resources[0] = (struct sched_fit_resource){"nvidia.com/gpu", 10};
    p.fit_resources[1] = (struct sched_fit_resource){"cpu", 2};
    p.fit_resources[2] = (struct sched_fit_resource){"memory", 1};
    p.fit_resources[3] = (struct sched_fit_resource){"ephemeral-storage", 3};
    p.fit_strategy = SCHED_FIT_MOST_ALLOCATED;
    for (s = 400; s <= 410; s++)
        run_random(s, &p, 40);
    p.fit_strategy = SCHED_FIT_LEAST_ALLOCATED;
    for (s = 420; s <= 425; s++)
        run_random(s, &p, 40);
    p.fit_strategy = SCHED_FIT_REQUESTED_TO_CAPACITY_RATIO;
    p.nshape = 3;
    p.shape[0] = (struct sched_shape_point){0, 0};
    p.shape[1] = (struct sched_shape_point){50, 10};
    p.shape[2] = (struct sched_shape_point){100, 2};
    for (s = 430; s <= 440; s++)
        run_random(s, &p, 40);
}

/* The fast path caches each node's fit under the low bits of the node's generation; when they
 * come round again the stale entry must not answer for the node's new state. */
static void cache_survives_generation_wrap(void)
{
    static const char *const nodes[] = {"n1: cpu=1000 mem=1024 pods=110", NULL};
    struct arena a = ARENA_INIT;
    struct sched_cluster *c = tb_cluster(&a, nodes, NULL);
    struct kube_pod *big = tb_pod(&a, "name=default/big cpu=1000 mem=10");
    struct kube_pod *filler = tb_pod(&a, "name=default/filler cpu=600 mem=10 node=n1");
    struct kube_pod *blip = tb_pod(&a, "name=default/blip cpu=1 mem=1 node=n1");
    struct err err;
    uint32_t slot = c->order[0], g0;
    unsigned long i;

    err_clear(&err);
    /* the empty node fits, and the fast path caches that */
    CHECK_STR_EQ(tb_schedule(c, NULL, big), "node:n1");
    g0 = c->lite[slot].gen & SCHED_DYN_GEN_MASK;
    CHECK_INT_EQ(sched_cluster_add_pod(c, filler, &err), 0);
    /* change the node until its generation's low bits are back where the entry was made */
    for (i = 0;
         i < (1ul << (SCHED_DYN_GEN_BITS + 1)) && (c->lite[slot].gen & SCHED_DYN_GEN_MASK) != g0;
         i++) {
        if (i & 1)
            (void)sched_cluster_remove_pod(c, "default", "blip");
        else
            (void)sched_cluster_add_pod(c, blip, &err);
    }
    CHECK_INT_EQ(c->lite[slot].gen & SCHED_DYN_GEN_MASK, g0);
    /* 600m of the 1000m are taken: the 1000m pod fits no more */
    CHECK(!strncmp(tb_schedule(c, NULL, big), "0/1 nodes are available: 1 Insufficient cpu.", 44));
    sched_cluster_free(c);
    arena_release(&a);
}

/* node sampling on clusters over 100 nodes, where a cycle stops early: the same nodes are
 * filtered, skipped and chosen on every path, and the start moves the same */
static void equiv_sampling(void)
{
    static const int32_t pcts[] = {0, 10, 40, 99};
    struct sched_profile p;
    uint64_t s;

    stopped_early = nominated_taken = 0;
    terms_one_in = 8; /* terms make most nodes infeasible, and sampling stops on feasible ones */
    for (s = 400; s < 412; s++) {
        p = s % 2 ? sched_profile_gpu : sched_profile_default;
        p.percentage_of_nodes_to_score = pcts[s % 4];
        run_sized(s, &p, 40, 100 + (unsigned)(s % 5) * 40, true);
    }
    /* the random cases did exercise both shortcuts */
    terms_one_in = 2;
    CHECK(stopped_early > 50);
    CHECK(nominated_taken > 5);
    /* under 100 nodes every node is filtered, but the start rotates and nominations count */
    p = sched_profile_default;
    p.percentage_of_nodes_to_score = 0;
    for (s = 420; s < 430; s++)
        run_sized(s, &p, 40, 5 + (unsigned)(s % 30), true);
}

static const struct test_case cases[] = {
    {"fit cache survives a generation wrap", cache_survives_generation_wrap},
    {"fast equals reference, default profile", equiv_default},
    {"fast equals reference, node sampling", equiv_sampling},
    {"fast equals reference, gpu profile on another resource", equiv_other_gpu_resource},
    {"fast equals reference, gpu profile", equiv_gpu},
    {"fast equals reference, nominated pods in the dry run", equiv_nominated_dry_run},
    {"fast equals reference, more terms than counters kept", equiv_many_terms},
    {"fast equals reference, v1.25-v1.34 taint wording", equiv_key_value_taint_wording},
    {"fast equals reference, --config weights and fit strategies", equiv_config_strategies},
    {"fast equals reference, preemption with budgets", equiv_preempt},
};
TEST_SUITE(sched_equiv, cases)
