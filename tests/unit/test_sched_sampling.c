/* test_sched_sampling.c - node sampling (kube-scheduler's percentageOfNodesToScore):
 * numFeasibleNodesToFind, a cycle stopping once it has that many feasible nodes, the start
 * position rotating by the nodes filtered, the nominated node filtered first, and what must
 * not change: the full "0/N" message of a pod that fits nowhere and every answer at 100%. */
#include <stdio.h>
#include <string.h>

#include "sched/profile-int.h"
#include "sched/sched-int.h"
#include "sched_tb.h"
#include "test.h"

static void num_feasible_nodes_to_find(void)
{
    static const struct {
        int32_t pct;
        uint32_t nodes, want;
    } rows[] = {
        {0, 0, 0},         {0, 50, 50},       {0, 99, 99},     {0, 100, 100},   {0, 150, 100},
        {0, 1000, 420},    {0, 5000, 500},    {0, 5625, 281},  {0, 6000, 300},  {0, 10000, 500},
        {30, 1000, 300},   {5, 1000, 100},    {1, 99, 99},     {50, 150, 100},  {70, 150, 105},
        {100, 5000, 5000}, {101, 5000, 5000}, {-1, 1000, 420}, {99, 1000, 990},
    };
    size_t i;

    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        uint32_t got = sched_num_feasible_nodes_to_find(rows[i].pct, rows[i].nodes);
        if (got != rows[i].want)
            test_fail(__FILE__, __LINE__, "pct %d of %u nodes: %u, want %u", (int)rows[i].pct,
                      (unsigned)rows[i].nodes, (unsigned)got, (unsigned)rows[i].want);
    }
}

/* A cluster of n nodes "n000".."n<n-1>": the first nsmall have 500m cpu (too small for the
 * test pods' 1000m), the rest 4 cpu. */
static struct sched_cluster *cluster_of(struct arena *a, unsigned n, unsigned nsmall,
                                        const char *extra)
{
    struct sched_cluster *c = sched_cluster_new();
    struct err err = {0};
    char name[16], spec[128];
    unsigned i;

    for (i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "n%03u", i);
        snprintf(spec, sizeof(spec), "cpu=%u mem=8192 %s", i < nsmall ? 500 : 4000,
                 extra ? extra : "");
        CHECK_INT_EQ(sched_cluster_add_node(c, tb_node(a, name, spec), &err), 0);
    }
    return c;
}

/* pick returns "node:NAME" or the message, ties going to the first node filtered (no
 * generator), in a static buffer */
static const char *pick(struct sched_cluster *c, const struct sched_profile *p,
                        const struct kube_pod *pod)
{
    static char buf[1024];
    struct sched_result r;
    struct err err = {0};

    if (sched_schedule_one(c, p, pod, NULL, &r, &err))
        return "error";
    if (r.outcome == SCHED_SCHEDULED)
        snprintf(buf, sizeof(buf), "node:%s", r.node);
    else
        snprintf(buf, sizeof(buf), "%s", r.message ? r.message : "?");
    sched_result_release(&r);
    return buf;
}

static struct sched_profile sampled(int32_t pct)
{
    struct sched_profile p = sched_profile_default;

    p.percentage_of_nodes_to_score = pct;
    return p;
}

/* explain pod and check which nodes were filtered: the node-order range [lo, hi) wrapping
 * around (lo > hi) or all of them (lo == hi) */
static void check_evaluated(struct sched_cluster *c, const struct sched_profile *p,
                            const struct kube_pod *pod, unsigned lo, unsigned hi, size_t nfeasible,
                            int line)
{
    struct sched_explanation x;
    struct err err = {0};
    size_t i, nsk = 0;

    if (sched_explain(c, p, pod, NULL, &x, &err)) {
        test_fail(__FILE__, line, "sched_explain failed");
        return;
    }
    for (i = 0; i < x.nnodes; i++) {
        bool in = lo == hi || (lo < hi ? i >= lo && i < hi : i >= lo || i < hi);
        if (x.nodes[i].skipped == in)
            test_fail(__FILE__, line, "node %zu: skipped %d", i, x.nodes[i].skipped);
        if (x.nodes[i].skipped && (x.nodes[i].plugin || x.nodes[i].selected || x.nodes[i].nscores))
            test_fail(__FILE__, line, "node %zu: a skipped node with a verdict", i);
        nsk += x.nodes[i].skipped;
    }
    if (x.nfeasible != nfeasible || x.nskipped != nsk)
        test_fail(__FILE__, line, "nfeasible %zu (want %zu), nskipped %zu (counted %zu)",
                  x.nfeasible, nfeasible, x.nskipped, nsk);
    if (x.result.outcome != SCHED_SCHEDULED)
        test_fail(__FILE__, line, "not scheduled");
    sched_explanation_release(&x);
}

static void stops_at_enough_feasible_and_rotates(void)
{
    struct arena a = ARENA_INIT;
    /* 200 nodes: adaptive 49% is 98, so 100 feasible nodes end a cycle */
    struct sched_cluster *c = cluster_of(&a, 200, 0, NULL);
    struct sched_profile p = sampled(0);
    const struct kube_pod *pod = tb_pod(&a, "cpu=1000");

    check_evaluated(c, &p, pod, 0, 100, 100, __LINE__);
    CHECK_INT_EQ(c->next_start, 100);
    check_evaluated(c, &p, pod, 100, 0, 100, __LINE__);
    CHECK_INT_EQ(c->next_start, 0);
    sched_cluster_free(c);

    /* the first 50 nodes are too small: they are filtered but do not count */
    c = cluster_of(&a, 200, 50, NULL);
    check_evaluated(c, &p, pod, 0, 150, 100, __LINE__);
    CHECK_INT_EQ(c->next_start, 150);
    /* from 150: 50 feasible, the 50 small ones, 50 feasible again */
    check_evaluated(c, &p, pod, 150, 100, 100, __LINE__);
    CHECK_INT_EQ(c->next_start, 100);
    /* an explicit percentage: 60% of 200 = 120 feasible nodes */
    p = sampled(60);
    check_evaluated(c, &p, pod, 100, 70, 120, __LINE__);
    CHECK_INT_EQ(c->next_start, 70);
    sched_cluster_free(c);
    arena_release(&a);
}

/* sched_schedule_one (the choose-only path) filters the same nodes as sched_explain */
static void schedule_one_rotates_like_explain(void)
{
    struct arena a = ARENA_INIT;
    struct sched_cluster *c = cluster_of(&a, 300, 120, NULL);
    struct sched_profile p = sampled(0); /* 300 nodes: 48% = 144 */
    const struct kube_pod *pod = tb_pod(&a, "cpu=1000");
    struct sched_result r;
    struct err err = {0};
    unsigned i, want = 0;

    for (i = 0; i < 5; i++) {
        unsigned k, nf = 0, processed = 0;

        /* where this cycle must stop: 144 nodes of >= 120 from want */
        for (k = 0; nf < 144; k++)
            nf += (want + k) % 300 >= 120;
        processed = k;
        CHECK_INT_EQ(sched_schedule_one(c, &p, pod, NULL, &r, &err), 0);
        CHECK_INT_EQ(r.outcome, SCHED_SCHEDULED);
        /* the first node filtered wins the tie (no generator): the cluster is uniform */
        if (r.node) {
            unsigned first = want;
            char name[16];

            while (first % 300 < 120)
                first++;
            snprintf(name, sizeof(name), "n%03u", first % 300);
            CHECK_STR_EQ(r.node, name);
        }
        sched_result_release(&r);
        want = (want + processed) % 300;
        CHECK_INT_EQ(c->next_start, want);
    }
    sched_cluster_free(c);
    arena_release(&a);
}

static void unschedulable_pod_gets_the_full_message(void)
{
    struct arena a = ARENA_INIT;
    struct sched_cluster *c = cluster_of(&a, 250, 250, NULL);
    struct sched_profile p = sampled(0);
    struct sched_result r0, r100;
    struct err err = {0};
    const struct kube_pod *pod = tb_pod(&a, "cpu=1000");
    struct sched_explanation x;

    c->next_start = 77;
    CHECK_INT_EQ(sched_schedule_one(c, &p, pod, NULL, &r0, &err), 0);
    CHECK_INT_EQ(sched_schedule_one(c, NULL, pod, NULL, &r100, &err), 0);
    CHECK_INT_EQ(r0.outcome, SCHED_UNSCHEDULABLE);
    CHECK_STR_EQ(r0.message, "0/250 nodes are available: 250 Insufficient cpu. preemption: 0/250 "
                             "nodes are available: 250 Preemption is not helpful for scheduling.");
    CHECK_STR_EQ(r0.message, r100.message);
    /* every node filtered: the start moved by all of them, i.e. stayed */
    CHECK_INT_EQ(c->next_start, 77);
    CHECK_INT_EQ(sched_explain(c, &p, pod, NULL, &x, &err), 0);
    CHECK_INT_EQ(x.nskipped, 0);
    CHECK_INT_EQ(x.nfeasible, 0);
    sched_explanation_release(&x);
    sched_result_release(&r0);
    sched_result_release(&r100);
    sched_cluster_free(c);
    arena_release(&a);
}

static void nominated_node_first(void)
{
    struct arena a = ARENA_INIT;
    /* n150 holds a PreferNoSchedule taint, so it never wins on score */
    struct sched_cluster *c = cluster_of(&a, 200, 0, NULL);
    struct sched_profile p = sampled(0);
    struct sched_explanation x;
    struct err err = {0};
    struct kube_node *tainted = tb_node(&a, "n150", "cpu=4000 mem=8192 taint:t:PreferNoSchedule");

    CHECK_INT_EQ(sched_cluster_update_node(c, tainted, &err), 0);
    c->next_start = 3;
    CHECK_STR_EQ(pick(c, &p, tb_pod(&a, "cpu=1000 nominated=n150")), "node:n150");
    CHECK_INT_EQ(c->next_start, 3); /* nothing else filtered: the start stays */
    CHECK_INT_EQ(sched_explain(c, &p, tb_pod(&a, "cpu=1000 nominated=n150"), NULL, &x, &err), 0);
    CHECK_INT_EQ(x.nfeasible, 1);
    CHECK_INT_EQ(x.nskipped, 199);
    CHECK(x.nodes[150].selected && !x.nodes[150].skipped && x.nodes[150].nscores);
    sched_explanation_release(&x);
    /* at 100% too (PreferNominatedNode does not depend on sampling), although the untainted
     * nodes would score higher */
    CHECK_STR_EQ(pick(c, NULL, tb_pod(&a, "cpu=1000 nominated=n150")), "node:n150");
    CHECK_STR_EQ(pick(c, NULL, tb_pod(&a, "cpu=1000")), "node:n000");
    /* a nominated node that does not fit, or does not exist: the usual sampled scan */
    CHECK_STR_EQ(pick(c, &p, tb_pod(&a, "cpu=5000 nominated=n150")),
                 "0/200 nodes are available: 200 Insufficient cpu. preemption: 0/200 nodes are "
                 "available: 200 Preemption is not helpful for scheduling.");
    CHECK_STR_EQ(pick(c, &p, tb_pod(&a, "cpu=1000 nominated=gone")), "node:n003");
    CHECK_INT_EQ(c->next_start, 103);
    /* nominated to a node NodeAffinity's PreFilter cuts out: not taken */
    {
        struct kube_pod *pinned = tb_pod(&a, "cpu=1000 nominated=n150");
        tb_req_term(&a, pinned, "field:metadata.name In n010", (const char *)NULL);
        CHECK_STR_EQ(pick(c, &p, pinned), "node:n010");
        CHECK_INT_EQ(c->next_start, 104); /* one candidate filtered */
    }
    sched_cluster_free(c);
    arena_release(&a);
}

static void one_feasible_node_is_chosen(void)
{
    struct arena a = ARENA_INIT;
    struct sched_cluster *c = cluster_of(&a, 180, 179, NULL);
    struct sched_profile p = sampled(10);

    c->next_start = 179;
    CHECK_STR_EQ(pick(c, &p, tb_pod(&a, "cpu=1000")), "node:n179");
    CHECK_INT_EQ(c->next_start, 179); /* 179 + 180 nodes filtered */
    sched_cluster_free(c);
    arena_release(&a);
}

/* at 100% (the built-in profiles) the start never moves and every node is filtered: the
 * answers are those of the profile without the setting */
static void full_percentage_keeps_answers(void)
{
    struct arena a = ARENA_INIT;
    struct sched_cluster *c = cluster_of(&a, 150, 20, NULL);
    struct sched_profile p = sampled(100);
    struct err err = {0};
    int i;

    for (i = 0; i < 30; i++) {
        char spec[64];
        struct kube_pod *pod;
        struct sched_rng g1, g2;
        struct sched_result r1, r2;

        snprintf(spec, sizeof(spec), "name=ns/p%d cpu=%d", i, 500 + 100 * i);
        pod = tb_pod(&a, spec);
        sched_rng_seed(&g1, (uint64_t)i);
        sched_rng_seed(&g2, (uint64_t)i);
        CHECK_INT_EQ(sched_schedule_one(c, &p, pod, &g1, &r1, &err), 0);
        CHECK_INT_EQ(sched_schedule_one(c, NULL, pod, &g2, &r2, &err), 0);
        CHECK_STR_EQ(r1.node, r2.node);
        CHECK_INT_EQ(c->next_start, 0);
        if (i == 0) {
            struct sched_explanation x;
            CHECK_INT_EQ(sched_explain(c, &p, pod, NULL, &x, &err), 0);
            CHECK_INT_EQ(x.nskipped, 0);
            CHECK_INT_EQ(x.nfeasible, 150); /* 500m fits the small nodes too */
            sched_explanation_release(&x);
        }
        if (r1.node)
            CHECK_INT_EQ(sched_cluster_assume_pod(c, pod, r1.node, &err), 0);
        sched_result_release(&r1);
        sched_result_release(&r2);
    }
    sched_cluster_free(c);
    arena_release(&a);
}

/* sched_simulate with sampling: deterministic for a seed, and every pod placed */
static void simulate_with_sampling(void)
{
    struct arena a = ARENA_INIT;
    struct sched_cluster *c1 = cluster_of(&a, 400, 0, NULL), *c2 = cluster_of(&a, 400, 0, NULL);
    struct sched_profile p = sampled(0);
    const struct kube_pod *pods[60];
    struct sched_result r1[60], r2[60];
    struct sched_sim_opts o = {.seed = 7};
    struct err err = {0};
    char spec[64];
    size_t i;

    for (i = 0; i < 60; i++) {
        snprintf(spec, sizeof(spec), "name=ns/p%zu cpu=%zu", i, 100 + i);
        pods[i] = tb_pod(&a, spec);
    }
    CHECK_INT_EQ(sched_simulate(c1, &p, pods, 60, &o, r1, &err), 0);
    CHECK_INT_EQ(sched_simulate(c2, &p, pods, 60, &o, r2, &err), 0);
    for (i = 0; i < 60; i++) {
        CHECK_INT_EQ(r1[i].outcome, SCHED_SCHEDULED);
        CHECK_STR_EQ(r1[i].node, r2[i].node);
        sched_result_release(&r1[i]);
        sched_result_release(&r2[i]);
    }
    /* 400 nodes: 47% = 188 filtered per pod, every node fitting every pod */
    CHECK_INT_EQ(sched_num_feasible_nodes_to_find(0, 400), 188);
    CHECK_INT_EQ(c1->next_start, (60 * 188) % 400);
    sched_cluster_free(c1);
    sched_cluster_free(c2);
    arena_release(&a);
}

static const struct test_case cases[] = {
    {"numFeasibleNodesToFind", num_feasible_nodes_to_find},
    {"a cycle stops at enough feasible nodes and the start rotates",
     stops_at_enough_feasible_and_rotates},
    {"schedule_one filters what explain filters", schedule_one_rotates_like_explain},
    {"an unschedulable pod gets the full 0/N message", unschedulable_pod_gets_the_full_message},
    {"the nominated node is filtered first", nominated_node_first},
    {"one feasible node is chosen", one_feasible_node_is_chosen},
    {"100 percent keeps the answers", full_percentage_keeps_answers},
    {"simulate with sampling is deterministic", simulate_with_sampling},
};
TEST_SUITE(sched_sampling, cases)
