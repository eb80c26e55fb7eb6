/* test_sched_message.c - the FailedScheduling text: histogram entries sorted as whole strings
 * ("10 ..." before "2 ...", uppercase before lowercase), every reason of a node counted,
 * the taint wording kept in one place, and the explain rows carrying the same reasons. */
#include <stdio.h>
#include <string.h>

#include "sched_tb.h"
#include "test.h"

static void sorted_as_strings(void)
{
    struct arena a = ARENA_INIT;
    struct sched_cluster *c = sched_cluster_new();
    struct err err = {0};
    char name[16];
    int i;

    for (i = 0; i < 10; i++) {
        snprintf(name, sizeof(name), "t%d", i);
        sched_cluster_add_node(c, tb_node(&a, name, "cpu=4000 mem=8192 taint:x:NoSchedule"), &err);
    }
    sched_cluster_add_node(c, tb_node(&a, "s1", "cpu=100 mem=8192"), &err);
    sched_cluster_add_node(c, tb_node(&a, "s2", "cpu=100 mem=8192"), &err);
    CHECK_STR_EQ(tb_schedule(c, NULL, tb_pod(&a, "cpu=1000")),
                 "0/12 nodes are available: 10 node(s) had untolerated taint(s), 2 Insufficient "
                 "cpu. preemption: 0/12 nodes are available: 12 Preemption is not helpful for "
                 "scheduling.");
    sched_cluster_free(c);
    arena_release(&a);
}

static void every_reason_counted(void)
{
    const char *nodes[] = {"n1: cpu=1000 mem=100 pods=1", "n2: cpu=1000 mem=8192", NULL};
    const char *bound[] = {"name=x/a node=n1", NULL};
    struct arena a = ARENA_INIT;
    struct sched_cluster *c = tb_cluster(&a, nodes, bound);

    CHECK_STR_EQ(tb_schedule(c, NULL, tb_pod(&a, "cpu=2000 mem=200")),
                 "0/2 nodes are available: 1 Insufficient memory, 1 Too many pods, 2 Insufficient "
                 "cpu. preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
                 "scheduling.");
    sched_cluster_free(c);
    arena_release(&a);
}

static void taint_wordings(void)
{
    const char *nodes[] = {"n1: cpu=1000 mem=1000 taint:a=b:NoSchedule",
                           "n2: cpu=1000 mem=1000 taint:c:NoExecute", NULL};
    struct arena a = ARENA_INIT;
    struct sched_cluster *c = tb_cluster(&a, nodes, NULL);
    struct sched_profile p = sched_profile_default;

    /* the default is v1.35+'s */
    CHECK_STR_EQ(tb_schedule(c, NULL, tb_pod(&a, "cpu=100")),
                 "0/2 nodes are available: 2 node(s) had untolerated taint(s). preemption: 0/2 "
                 "nodes are available: 2 Preemption is not helpful for scheduling.");
    p.taint_wording = SCHED_TAINT_WORDING_KEY_VALUE;
    CHECK_STR_EQ(
        tb_schedule(c, &p, tb_pod(&a, "cpu=100")),
        "0/2 nodes are available: 1 node(s) had untolerated taint {a: b}, 1 node(s) had "
        "untolerated taint {c: }. preemption: 0/2 nodes are available: 2 Preemption is not "
        "helpful for scheduling.");
    sched_cluster_free(c);
    arena_release(&a);
}

static void explain_rows(void)
{
    const char *nodes[] = {"n1: cpu=1000 mem=100", "n2: cpu=1000 mem=8192 unschedulable",
                           "n3: cpu=4000 mem=8192", NULL};
    const char *bound[] = {"name=x/a node=n3 prio=-5 cpu=3500", NULL};
    struct arena a = ARENA_INIT;
    struct sched_cluster *c = tb_cluster(&a, nodes, bound);
    struct sched_explanation x;
    struct err err = {0};

    CHECK_INT_EQ(sched_explain(c, NULL, tb_pod(&a, "cpu=2000 mem=200"), NULL, &x, &err), 0);
    CHECK_INT_EQ(x.nnodes, 3);
    CHECK_INT_EQ(x.nfeasible, 0);
    CHECK_STR_EQ(x.nodes[0].node, "n1");
    CHECK_STR_EQ(x.nodes[0].plugin, "NodeResourcesFit");
    CHECK_INT_EQ(x.nodes[0].nreasons, 2);
    if (x.nodes[0].nreasons == 2) {
        CHECK_STR_EQ(x.nodes[0].reasons[0], "Insufficient cpu");
        CHECK_STR_EQ(x.nodes[0].reasons[1], "Insufficient memory");
    }
    CHECK(x.nodes[0].unresolvable);
    CHECK_STR_EQ(x.nodes[0].preemption, "Preemption is not helpful for scheduling");
    CHECK_STR_EQ(x.nodes[1].plugin, "NodeUnschedulable");
    CHECK_STR_EQ(x.nodes[1].reasons[0], "node(s) were unschedulable");
    CHECK_STR_EQ(x.nodes[2].plugin, "NodeResourcesFit");
    CHECK(!x.nodes[2].unresolvable);
    CHECK_STR_EQ(x.nodes[2].preemption, "victims: x/a");
    CHECK_STR_EQ(x.result.nominated_node, "n3");
    CHECK_STR_EQ(x.result.message,
                 "0/3 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable, 2 "
                 "Insufficient cpu. preemption: found a potential placement for pod on node n3, "
                 "preempting 1 victims");
    sched_explanation_release(&x);
    sched_cluster_free(c);
    arena_release(&a);
}

static const struct test_case cases[] = {
    {"histogram sorted as whole strings (10 before 2)", sorted_as_strings},
    {"every reason of every node is counted", every_reason_counted},
    {"taint wordings: v1.35+ by default, v1.25-v1.34 on request", taint_wordings},
    {"explain rows carry the plugin, reasons and preemption", explain_rows},
};
TEST_SUITE(sched_message, cases)
