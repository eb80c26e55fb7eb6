/* test_sched_preempt.c - DefaultPreemption: eligibility, the minimal victim set of
 * SelectVictimsOnNode (reprieve most important first), candidate ordering, the
 * "preemption: ..." text, and sched_simulate's evict-and-retry. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sched_tb.h"
#include "test.h"

#define NH "Preemption is not helpful for scheduling"
#define NV "No preemption victims found for incoming pod"

static const struct tb_row rows[] = {
    {.name = "reprieve the most important pods first",
     .nodes = {"n1: cpu=4000 mem=8192"},
     .bound = {"name=x/low1 node=n1 prio=1 cpu=1000", "name=x/low2 node=n1 prio=2 cpu=1000",
               "name=x/low3 node=n1 prio=3 cpu=2000"},
     .pod = "prio=10 cpu=2000",
     .want = "nominated:n1 victims:x/low2,x/low1 | 0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement for pod on node n1, preempting 2 victims"},
    {.name = "pods of equal priority are never victims",
     .nodes = {"n1: cpu=4000 mem=8192"},
     .bound = {"name=x/a node=n1 prio=10 cpu=4000"},
     .pod = "prio=10 cpu=1000",
     .want =
         "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 " NV
         "."},
    {.name = "preemptionPolicy Never",
     .nodes = {"n1: cpu=4000 mem=8192"},
     .bound = {"name=x/a node=n1 prio=0 cpu=4000"},
     .pod = "prio=10 cpu=1000 never",
     .want = "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to "
             "preemptionPolicy=Never."},
    {.name = "a terminating lower-priority pod on the nominated node",
     .nodes = {"n1: cpu=4000 mem=8192"},
     .bound = {"name=x/a node=n1 prio=0 cpu=4000 terminating"},
     .pod = "prio=10 cpu=1000 nominated=n1",
     .want = "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to a "
             "terminating pod on the nominated node."},
    {.name = "the node with the lowest highest-priority victim",
     .nodes = {"n1: cpu=4000 mem=8192", "n2: cpu=4000 mem=8192"},
     .bound = {"name=x/a node=n1 prio=5 cpu=4000", "name=x/b node=n2 prio=1 cpu=4000"},
     .pod = "prio=10 cpu=1000",
     .want = "nominated:n2 victims:x/b | 0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential placement for pod on node n2, preempting 1 victims"},
    {.name = "then the smallest sum of priorities",
     .nodes = {"n1: cpu=4000 mem=8192", "n2: cpu=4000 mem=8192"},
     .bound = {"name=x/a node=n1 prio=3 cpu=2000", "name=x/a2 node=n1 prio=-100 cpu=2000",
               "name=x/b node=n2 prio=3 cpu=4000"},
     .pod = "prio=10 cpu=3000",
     .want = "nominated:n2 victims:x/b | 0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential placement for pod on node n2, preempting 1 victims"},
    {.name = "then the latest start of the most important victims",
     .nodes = {"n1: cpu=4000 mem=8192", "n2: cpu=4000 mem=8192"},
     .bound = {"name=x/early node=n1 prio=1 cpu=4000", "name=x/late node=n2 prio=1 cpu=4000"},
     .pod = "prio=10 cpu=1000",
     .want = "nominated:n2 victims:x/late | 0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential placement for pod on node n2, preempting 1 victims"},
    {.name = "still no fit after removing every lower-priority pod: the filter's reason",
     .nodes = {"n1: cpu=4000 mem=8192"},
     .bound = {"name=x/hi node=n1 prio=100 cpu=3500", "name=x/lo node=n1 prio=0 cpu=500"},
     .pod = "prio=10 cpu=1000",
     .want = "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 "
             "Insufficient cpu."},
    {.name = "more than the node's allocatable is not helpful",
     .nodes = {"n1: cpu=4000 mem=8192"},
     .bound = {"name=x/lo node=n1 prio=0 cpu=500"},
     .pod = "prio=10 cpu=5000",
     .want =
         "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 " NH
         "."},
    {.name = "Too many pods is resolved by evicting one pod",
     .nodes = {"n1: cpu=4000 mem=8192 pods=2"},
     .bound = {"name=x/a node=n1 prio=0", "name=x/b node=n1 prio=5"},
     .pod = "prio=10",
     .want = "nominated:n1 victims:x/a | 0/1 nodes are available: 1 Too many pods. preemption: found a potential placement for pod on node n1, preempting 1 victims"},
    {.name = "GPU victims",
     .nodes = {"g1: cpu=8000 mem=8192 gpu=1", "g2: cpu=8000 mem=8192 gpu=1",
               "m: cpu=8000 mem=8192 taint:node-role.kubernetes.io/master:NoSchedule"},
     .bound = {"name=ml/train node=g1 prio=100 gpu=1", "name=ml/batch node=g2 prio=-10 gpu=1"},
     .pod = "prio=0 gpu=1",
     .want = "nominated:g2 victims:ml/batch | 0/3 nodes are available: 1 node(s) had untolerated "
             "taint {node-role.kubernetes.io/master: }, 2 Insufficient nvidia.com/gpu. "
             "preemption: found a potential placement for pod on node g2, preempting 1 victims"},
    {.name = "canonical GPU + control-plane message",
     .nodes = {"g1: cpu=8000 mem=8192 gpu=1", "g2: cpu=8000 mem=8192 gpu=1",
               "g3: cpu=8000 mem=8192 gpu=1",
               "c1: cpu=8000 mem=8192 taint:node-role.kubernetes.io/control-plane:NoSchedule",
               "c2: cpu=8000 mem=8192 taint:node-role.kubernetes.io/control-plane:NoSchedule",
               "c3: cpu=8000 mem=8192 taint:node-role.kubernetes.io/control-plane:NoSchedule"},
     .bound = {"name=a/x node=g1 gpu=1", "name=a/y node=g2 gpu=1", "name=a/z node=g3 gpu=1"},
     .pod = "gpu=1",
     .want =
         "0/6 nodes are available: 3 Insufficient nvidia.com/gpu, 3 node(s) had untolerated taint "
         "{node-role.kubernetes.io/control-plane: }. preemption: 0/6 nodes are available: 3 " NV
         ", 3 " NH "."},
};

static void table(void)
{
    TB_RUN(rows);
}

static void simulate_evicts_and_retries(void)
{
    struct arena a = ARENA_INIT;
    const char *nodes[] = {"n1: cpu=2000 mem=8192", NULL};
    const char *bound[] = {"name=x/low node=n1 prio=0 cpu=2000", NULL};
    struct sched_cluster *c = tb_cluster(&a, nodes, bound);
    const struct kube_pod *pods[2];
    struct sched_result res[2];
    struct sched_sim_opts o = {0};
    struct err err = {0};
    struct sched_node_usage u;

    pods[0] = tb_pod(&a, "name=y/small prio=0 cpu=500");
    pods[1] = tb_pod(&a, "name=y/high prio=100 cpu=1000");
    CHECK_INT_EQ(sched_simulate(c, NULL, pods, 2, &o, res, &err), 0);
    /* the queue takes the high-priority pod first */
    CHECK_INT_EQ(res[1].attempt, 0);
    CHECK_INT_EQ(res[1].outcome, SCHED_SCHEDULED);
    CHECK_STR_EQ(res[1].node, "n1");
    CHECK_STR_EQ(res[1].nominated_node, "n1");
    CHECK_INT_EQ(res[1].nvictims, 1);
    if (res[1].nvictims)
        CHECK_STR_EQ(res[1].victims[0].name, "low");
    CHECK_STR_EQ(res[1].message, "0/1 nodes are available: 1 Insufficient cpu. preemption: found a "
                                 "potential placement for pod on node n1, preempting 1 victims");
    /* then the small pod fits next to it */
    CHECK_INT_EQ(res[0].attempt, 1);
    CHECK_STR_EQ(res[0].node, "n1");
    CHECK_INT_EQ(sched_cluster_node_usage(c, "n1", &u), 0);
    CHECK_INT_EQ(u.requested_cpu_milli, 1500);
    CHECK_INT_EQ(u.npods, 2);
    sched_result_release(&res[0]);
    sched_result_release(&res[1]);
    sched_cluster_free(c);
    arena_free(&a);
}

static void simulate_twice_on_one_cluster(void)
{
    struct arena a = ARENA_INIT;
    const char *nodes[] = {"n1: cpu=2000 mem=8192", NULL};
    struct sched_cluster *c = tb_cluster(&a, nodes, NULL);
    const struct kube_pod *first[3], *second[1];
    struct sched_result r1[3], r2[1];
    struct err err = {0};
    size_t i;

    first[0] = tb_pod(&a, "name=y/a prio=0 cpu=100");
    first[1] = tb_pod(&a, "name=y/b prio=0 cpu=100");
    first[2] = tb_pod(&a, "name=y/low prio=-1 cpu=1800");
    CHECK_INT_EQ(sched_simulate(c, NULL, first, 3, NULL, r1, &err), 0);
    CHECK_STR_EQ(r1[2].node, "n1");
    /* a later run evicts a pod placed by the earlier one: reported, not marked in r2 */
    second[0] = tb_pod(&a, "name=y/high prio=5 cpu=1000");
    CHECK_INT_EQ(sched_simulate(c, NULL, second, 1, NULL, r2, &err), 0);
    CHECK_STR_EQ(r2[0].node, "n1");
    CHECK_INT_EQ(r2[0].nvictims, 1);
    if (r2[0].nvictims) {
        CHECK_STR_EQ(r2[0].victims[0].name, "low");
        CHECK(!r2[0].victims[0].from_input);
    }
    CHECK(!r2[0].preempted);
    for (i = 0; i < 3; i++)
        sched_result_release(&r1[i]);
    sched_result_release(&r2[0]);
    sched_cluster_free(c);
    arena_free(&a);
}

static void simulate_same_seed_same_output(void)
{
    const char *nodes[] = {"n1: cpu=4000 mem=8192", "n2: cpu=4000 mem=8192",
                           "n3: cpu=4000 mem=8192", "n4: cpu=4000 mem=8192", NULL};
    char first[64][32];
    int run, i;

    for (run = 0; run < 2; run++) {
        struct arena a = ARENA_INIT;
        struct sched_cluster *c = tb_cluster(&a, nodes, NULL);
        const struct kube_pod *pods[64];
        struct sched_result res[64];
        struct sched_sim_opts o = {.seed = 42};
        struct err err = {0};

        for (i = 0; i < 64; i++) {
            char spec[64];
            snprintf(spec, sizeof(spec), "name=d/p%d cpu=%d", i, 100 + (i % 3) * 100);
            pods[i] = tb_pod(&a, spec);
        }
        CHECK_INT_EQ(sched_simulate(c, NULL, pods, 64, &o, res, &err), 0);
        for (i = 0; i < 64; i++) {
            if (run == 0)
                snprintf(first[i], sizeof(first[i]), "%s", res[i].node ? res[i].node : "-");
            else
                CHECK_STR_EQ(res[i].node ? res[i].node : "-", first[i]);
            sched_result_release(&res[i]);
        }
        sched_cluster_free(c);
        arena_free(&a);
    }
}

static void assume_and_forget(void)
{
    struct arena a = ARENA_INIT;
    const char *nodes[] = {"n1: cpu=2000 mem=8192", NULL};
    struct sched_cluster *c = tb_cluster(&a, nodes, NULL);
    struct kube_pod *p = tb_pod(&a, "name=x/p cpu=1500");
    struct kube_pod *bound = tb_pod(&a, "name=x/p cpu=1500 node=n1");
    struct kube_pod *unbound_update = tb_pod(&a, "name=x/p cpu=1500");
    struct err err = {0};

    CHECK_STR_EQ(tb_schedule(c, NULL, p), "node:n1");
    CHECK_INT_EQ(sched_cluster_assume_pod(c, p, "n1", &err), 0);
    CHECK_INT_EQ(sched_cluster_assume_pod(c, p, "n1", &err), -EEXIST);
    /* an assumed pod keeps its place while its bind is in flight */
    CHECK_INT_EQ(sched_cluster_add_pod(c, unbound_update, &err), 0);
    CHECK_STR_EQ(tb_schedule(c, NULL, tb_pod(&a, "name=x/q cpu=1000")),
                 "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are "
                 "available: 1 No preemption victims found for incoming pod.");
    CHECK_INT_EQ(sched_cluster_forget_pod(c, "x", "p"), 0);
    CHECK_STR_EQ(tb_schedule(c, NULL, tb_pod(&a, "name=x/q cpu=1000")), "node:n1");
    /* a confirmed pod cannot be forgotten */
    CHECK_INT_EQ(sched_cluster_add_pod(c, bound, &err), 0);
    CHECK_INT_EQ(sched_cluster_forget_pod(c, "x", "p"), -EINVAL);
    CHECK_INT_EQ(sched_cluster_remove_pod(c, "x", "p"), 0);
    CHECK_INT_EQ(sched_cluster_remove_pod(c, "x", "p"), -ENOENT);
    sched_cluster_free(c);
    arena_free(&a);
}

static void node_updates(void)
{
    struct arena a = ARENA_INIT;
    const char *nodes[] = {"n1: cpu=2000 mem=8192", NULL};
    struct sched_cluster *c = tb_cluster(&a, nodes, NULL);
    struct err err = {0};
    struct kube_pod *p = tb_pod(&a, "cpu=100 sel:gpu=yes");

    CHECK_STR_EQ(
        tb_schedule(c, NULL, p),
        "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
    CHECK_INT_EQ(
        sched_cluster_update_node(c, tb_node(&a, "n1", "cpu=2000 mem=8192 label:gpu=yes"), &err),
        0);
    CHECK_STR_EQ(tb_schedule(c, NULL, p), "node:n1");
    /* pods of a removed node come back with it */
    CHECK_INT_EQ(sched_cluster_add_pod(c, tb_pod(&a, "name=x/big node=n1 cpu=2000"), &err), 0);
    CHECK_INT_EQ(sched_cluster_remove_node(c, "n1"), 0);
    CHECK_INT_EQ(sched_cluster_node_count(c), 0);
    CHECK_STR_EQ(tb_schedule(c, NULL, p), "no nodes available to schedule pods");
    CHECK_INT_EQ(
        sched_cluster_add_node(c, tb_node(&a, "n1", "cpu=2000 mem=8192 label:gpu=yes"), &err), 0);
    CHECK_STR_EQ(
        tb_schedule(c, NULL, p),
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod.");
    sched_cluster_free(c);
    arena_free(&a);
}

static const struct test_case cases[] = {
    {"victims, candidates and messages", table},
    {"simulate evicts the victims and retries the preemptor", simulate_evicts_and_retries},
    {"simulate: same seed, same output", simulate_same_seed_same_output},
    {"simulate twice on one cluster", simulate_twice_on_one_cluster},
    {"assume, confirm and forget", assume_and_forget},
    {"node updates, removal and return", node_updates},
};
TEST_SUITE(sched_preempt, cases)
