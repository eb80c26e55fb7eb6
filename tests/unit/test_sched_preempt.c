/* test_sched_preempt.c - DefaultPreemption: eligibility, the minimal victim set of
 * SelectVictimsOnNode (reprieve most important first), candidate ordering, the
 * "preemption: ..." text, and sched_simulate's evict-and-retry. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kube/rules.h"
#include "sched/cluster-int.h"
#include "sched/plugins-int.h"
#include "sched/schedule-int.h"
#include "sched/sched-int.h"
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
     .want = "nominated:n1 victims:x/low2,x/low1 | 0/1 nodes are available: 1 Insufficient cpu."
             " preemption: found a potential placement for pod on node n1, preempting 2 victims"},
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
    {.name = "a lower-priority pod terminating by preemption on the nominated node",
     .nodes = {"n1: cpu=4000 mem=8192"},
     .bound = {"name=x/a node=n1 prio=0 cpu=4000 preempted"},
     .pod = "prio=10 cpu=1000 nominated=n1",
     .want = "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to a "
             "terminating pod on the nominated node."},
    {.name = "a pod terminating for another reason does not stop a new preemption",
     .nodes = {"n1: cpu=4000 mem=8192"},
     .bound = {"name=x/a node=n1 prio=0 cpu=4000 terminating"},
     .pod = "prio=10 cpu=1000 nominated=n1",
     .want = "nominated:n1 victims:x/a | 0/1 nodes are available: 1 Insufficient cpu."
             " preemption: found a potential placement for pod on node n1, preempting 1 victims"},
    {.name = "a terminating pod of higher priority does not stop it",
     .nodes = {"n1: cpu=4000 mem=8192"},
     .bound = {"name=x/a node=n1 prio=20 cpu=2000 preempted", "name=x/b node=n1 prio=0 cpu=2000"},
     .pod = "prio=10 cpu=1000 nominated=n1",
     .want = "nominated:n1 victims:x/b | 0/1 nodes are available: 1 Insufficient cpu."
             " preemption: found a potential placement for pod on node n1, preempting 1 victims"},
    {.name = "the node with the lowest highest-priority victim",
     .nodes = {"n1: cpu=4000 mem=8192", "n2: cpu=4000 mem=8192"},
     .bound = {"name=x/a node=n1 prio=5 cpu=4000", "name=x/b node=n2 prio=1 cpu=4000"},
     .pod = "prio=10 cpu=1000",
     .want = "nominated:n2 victims:x/b | 0/2 nodes are available: 2 Insufficient cpu."
             " preemption: found a potential placement for pod on node n2, preempting 1 victims"},
    {.name = "then the smallest sum of priorities",
     .nodes = {"n1: cpu=4000 mem=8192", "n2: cpu=4000 mem=8192"},
     .bound = {"name=x/a node=n1 prio=3 cpu=2000", "name=x/a2 node=n1 prio=-100 cpu=2000",
               "name=x/b node=n2 prio=3 cpu=4000"},
     .pod = "prio=10 cpu=3000",
     .want = "nominated:n2 victims:x/b | 0/2 nodes are available: 2 Insufficient cpu."
             " preemption: found a potential placement for pod on node n2, preempting 1 victims"},
    {.name = "then the latest start of the most important victims",
     .nodes = {"n1: cpu=4000 mem=8192", "n2: cpu=4000 mem=8192"},
     .bound = {"name=x/early node=n1 prio=1 cpu=4000", "name=x/late node=n2 prio=1 cpu=4000"},
     .pod = "prio=10 cpu=1000",
     .want = "nominated:n2 victims:x/late | 0/2 nodes are available: 2 Insufficient cpu."
             " preemption: found a potential placement for pod on node n2, preempting 1 victims"},
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
     .want = "nominated:n1 victims:x/a | 0/1 nodes are available: 1 Too many pods."
             " preemption: found a potential placement for pod on node n1, preempting 1 victims"},
    {.name = "GPU victims",
     .nodes = {"g1: cpu=8000 mem=8192 gpu=1", "g2: cpu=8000 mem=8192 gpu=1",
               "m: cpu=8000 mem=8192 taint:node-role.kubernetes.io/master:NoSchedule"},
     .bound = {"name=ml/train node=g1 prio=100 gpu=1", "name=ml/batch node=g2 prio=-10 gpu=1"},
     .pod = "prio=0 gpu=1",
     .want = "nominated:g2 victims:ml/batch | 0/3 nodes are available: 1 node(s) had untolerated "
             "taint(s), 2 Insufficient nvidia.com/gpu."
             " preemption: found a potential placement for pod on node g2, preempting 1 victims"},
    {.name = "canonical GPU + control-plane message",
     .nodes = {"g1: cpu=8000 mem=8192 gpu=1", "g2: cpu=8000 mem=8192 gpu=1",
               "g3: cpu=8000 mem=8192 gpu=1",
               "c1: cpu=8000 mem=8192 taint:node-role.kubernetes.io/control-plane:NoSchedule",
               "c2: cpu=8000 mem=8192 taint:node-role.kubernetes.io/control-plane:NoSchedule",
               "c3: cpu=8000 mem=8192 taint:node-role.kubernetes.io/control-plane:NoSchedule"},
     .bound = {"name=a/x node=g1 gpu=1", "name=a/y node=g2 gpu=1", "name=a/z node=g3 gpu=1"},
     .pod = "gpu=1",
     .want = "0/6 nodes are available: 3 Insufficient nvidia.com/gpu, 3 node(s) had untolerated "
             "taint(s). preemption: 0/6 nodes are available: 3 " NV ", 3 " NH "."},
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
    arena_release(&a);
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
    arena_release(&a);
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
        arena_release(&a);
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
    arena_release(&a);
}

/* sched_cluster_pod_shrinks: an update of a bound pod that requests less of some resource
 * (serve then requeues the unschedulable pods, as Fit's UpdatePodScaleDown hint does) */
static void bound_pod_shrinks(void)
{
    struct arena a = ARENA_INIT;
    const char *nodes[] = {"n1: cpu=4000 mem=8192 gpu=2", NULL};
    const char *bound[] = {"name=x/b node=n1 cpu=2000 mem=1024 gpu=2", NULL};
    struct sched_cluster *c = tb_cluster(&a, nodes, bound);
    struct err err = {0};

    CHECK(!sched_cluster_pod_shrinks(c, tb_pod(&a, "name=x/b node=n1 cpu=2000 mem=1024 gpu=2")));
    CHECK(!sched_cluster_pod_shrinks(c, tb_pod(&a, "name=x/b node=n1 cpu=3000 mem=1024 gpu=2")));
    CHECK(sched_cluster_pod_shrinks(c, tb_pod(&a, "name=x/b node=n1 cpu=1000 mem=1024 gpu=2")));
    CHECK(sched_cluster_pod_shrinks(c, tb_pod(&a, "name=x/b node=n1 cpu=2000 mem=512 gpu=2")));
    CHECK(sched_cluster_pod_shrinks(c, tb_pod(&a, "name=x/b node=n1 cpu=2000 mem=1024")));
    /* not counted: nothing shrinks */
    CHECK(!sched_cluster_pod_shrinks(c, tb_pod(&a, "name=x/other node=n1 cpu=1")));
    CHECK_INT_EQ(
        sched_cluster_add_pod(c, tb_pod(&a, "name=x/b node=n1 cpu=1000 mem=1024 gpu=2"), &err), 0);
    CHECK(!sched_cluster_pod_shrinks(c, tb_pod(&a, "name=x/b node=n1 cpu=1000 mem=1024 gpu=2")));
    sched_cluster_free(c);
    arena_release(&a);
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
    arena_release(&a);
}

/* what the fast path (sched_schedule_one) and the detailed one (sched_explain) both say */
static void check_both(struct sched_cluster *c, struct arena *a, const char *pod, const char *want,
                       const char *want_first_reason)
{
    struct sched_explanation x;
    struct err err = {0};

    CHECK_STR_EQ(tb_schedule(c, NULL, tb_pod(a, pod)), want);
    CHECK_INT_EQ(sched_explain(c, NULL, tb_pod(a, pod), NULL, &x, &err), 0);
    if (x.nnodes && want_first_reason)
        CHECK_STR_EQ(x.nodes[0].nreasons ? x.nodes[0].reasons[0] : "(feasible)", want_first_reason);
    sched_explanation_release(&x);
}

static void nominated_pods_hold_room(void)
{
    struct arena a = ARENA_INIT;
    const char *nodes[] = {"n1: cpu=4000 mem=8192", "n2: cpu=1000 mem=8192", NULL};
    const char *bound[] = {"name=x/v node=n1 prio=0 cpu=1000", NULL};
    struct sched_cluster *c = tb_cluster(&a, nodes, bound);
    struct err err = {0};

    /* b (priority 100, 3 CPUs) is nominated to n1, where v runs: 4 CPUs in all */
    CHECK_INT_EQ(
        sched_cluster_nominate(c, tb_pod(&a, "name=y/b prio=100 cpu=3000 port:80"), "n1", &err), 0);
    CHECK_STR_EQ(sched_cluster_nominated_node(c, "y", "b"), "n1");
    /* a pod of lower or equal priority sees b's room taken on n1 */
    check_both(c, &a, "name=y/a prio=50 cpu=500", "node:n2", "Insufficient cpu");
    check_both(c, &a, "name=y/a prio=100 cpu=100", "node:n2", "Insufficient cpu");
    /* its host port too (NodePorts comes first) */
    check_both(c, &a, "name=y/a prio=100 cpu=100 mem=10000 port:80",
               "0/2 nodes are available: 1 Insufficient memory, 1 node(s) didn't have free ports "
               "for the requested pod ports. preemption: 0/2 nodes are available: 1 Preemption is "
               "not helpful for scheduling, 1 node(s) didn't have free ports for the requested "
               "pod ports.",
               "node(s) didn't have free ports for the requested pod ports");
    /* a higher-priority pod ignores it, and b does not count against itself */
    check_both(c, &a, "name=y/c prio=200 cpu=2000", "node:n1", "(feasible)");
    check_both(c, &a, "name=y/b prio=100 cpu=3000 port:80", "node:n1", "(feasible)");
    /* the preemption dry run keeps b's room: removing v is not enough for 1.5 CPUs */
    check_both(c, &a, "name=y/a prio=50 cpu=1500",
               "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
               "1 Insufficient cpu, 1 Preemption is not helpful for scheduling.",
               "Insufficient cpu");
    /* binding b (assume) ends the nomination: its pod counts instead */
    CHECK_INT_EQ(sched_cluster_assume_pod(c, tb_pod(&a, "name=y/b prio=100 cpu=3000"), "n1", &err),
                 0);
    CHECK(!sched_cluster_nominated_node(c, "y", "b"));
    CHECK_INT_EQ(sched_cluster_nominated_count(c), 0);
    CHECK_INT_EQ(sched_cluster_unnominate(c, "y", "b"), -ENOENT);
    sched_cluster_free(c);
    arena_release(&a);
}

/* NodeInfo's UsedPorts is a set (HostPortInfo): RemovePod takes a pod's host ports out even
 * when another pod of the node declares the same one, in the preemption dry run and in the
 * cluster, and NodePorts then finds the port free; AddPodInfo puts it back. */
static void shared_host_port(void)
{
    struct arena a = ARENA_INIT;
    const char *nodes[] = {"n1: cpu=4000 mem=8192", NULL};
    const char *bound[] = {"name=x/low node=n1 prio=-1 cpu=100 port:8888",
                           "name=x/high node=n1 prio=0 cpu=100 port:8888", NULL};
    const char *bound2[] = {"name=x/gone node=n1 prio=0 cpu=0 port:8888",
                            "name=x/b node=n1 prio=-1 cpu=100 port:8888",
                            "name=x/c node=n1 prio=-2 cpu=3900", NULL};
    struct sched_cluster *c = tb_cluster(&a, nodes, bound);

    /* the dry run removes low, and with it 8888, though high still declares it; low's
     * reprieve brings 8888 back, so low is the victim */
    check_both(c, &a, "name=y/a cpu=100 port:8888",
               "nominated:n1 victims:x/low | 0/1 nodes are available: 1 node(s) didn't have "
               "free ports for the requested pod ports. preemption: found a potential placement "
               "for pod on node n1, preempting 1 victims",
               "node(s) didn't have free ports for the requested pod ports");
    /* low deleted: 8888 left the node with it */
    CHECK_INT_EQ(sched_cluster_remove_pod(c, "x", "low"), 0);
    check_both(c, &a, "name=y/a cpu=100 port:8888", "node:n1", "(feasible)");
    /* high updated (RemovePod then AddPod): 8888 is back */
    {
        struct err err = {0};
        CHECK_INT_EQ(sched_cluster_add_pod(
                         c, tb_pod(&a, "name=x/high node=n1 prio=0 cpu=100 port:8888"), &err),
                     0);
    }
    check_both(c, &a, "name=y/a prio=-5 cpu=100 port:8888",
               "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod "
               "ports. preemption: 0/1 nodes are available: 1 No preemption victims found for "
               "incoming pod.",
               "node(s) didn't have free ports for the requested pod ports");
    sched_cluster_free(c);

    /* a node whose set lost 8888 (gone deleted) while b still declares it: only Fit rejects
     * the pod, yet reprieving b adds 8888 back, so b is the victim and c stays */
    c = tb_cluster(&a, nodes, bound2);
    CHECK_INT_EQ(sched_cluster_remove_pod(c, "x", "gone"), 0);
    check_both(c, &a, "name=y/a cpu=100 port:8888",
               "nominated:n1 victims:x/b | 0/1 nodes are available: 1 Insufficient cpu. "
               "preemption: found a potential placement for pod on node n1, preempting 1 victims",
               "Insufficient cpu");
    sched_cluster_free(c);
    arena_release(&a);
}

static void nomination_replaced_and_removed(void)
{
    struct arena a = ARENA_INIT;
    const char *nodes[] = {"n1: cpu=1000 mem=8192", "n2: cpu=1000 mem=8192", NULL};
    struct sched_cluster *c = tb_cluster(&a, nodes, NULL);
    struct sched_nominated_pod np;
    struct err err = {0};

    CHECK_INT_EQ(sched_cluster_nominate(c, tb_pod(&a, "name=y/b prio=5 cpu=1000"), "n1", &err), 0);
    CHECK_INT_EQ(sched_cluster_nominate(c, tb_pod(&a, "name=y/b prio=5 cpu=1000"), "n2", &err), 0);
    CHECK_INT_EQ(sched_cluster_nominated_count(c), 1);
    CHECK_INT_EQ(sched_cluster_nominated_at(c, 0, &np), 0);
    CHECK_STR_EQ(np.node, "n2");
    CHECK_INT_EQ(np.priority, 5);
    CHECK_INT_EQ(sched_cluster_nominated_at(c, 1, &np), -ENOENT);
    CHECK_STR_EQ(tb_schedule(c, NULL, tb_pod(&a, "name=y/a prio=0 cpu=1000")), "node:n1");
    /* the pod's own nomination is where its retry looks first: the nominated node */
    CHECK_INT_EQ(sched_cluster_nominate(c, tb_pod(&a, "name=y/b prio=5 cpu=1000"), "", &err), 0);
    CHECK_INT_EQ(sched_cluster_nominated_count(c), 0);
    sched_cluster_free(c);
    arena_release(&a);
}

/* pod_term gives p one required term "app In app" on kubernetes.io/hostname in its own
 * namespace: pod affinity, or anti-affinity when anti */
static struct kube_pod *pod_term(struct arena *a, struct kube_pod *p, bool anti, const char *app)
{
    struct kube_pod_affinity_term *t = arena_alloc(a, sizeof(*t));
    struct kube_requirement *r = arena_alloc(a, sizeof(*r));
    const char **v = arena_alloc(a, sizeof(*v));

    *v = app;
    *r = (struct kube_requirement){"app", KUBE_OP_IN, v, 1, false};
    memset(t, 0, sizeof(*t));
    t->label_selector = (struct kube_label_selector){true, r, 1};
    t->topology_key = "kubernetes.io/hostname";
    if (anti) {
        kube_pod_extra_own(p, a)->pod_anti_affinity.required = t;
        p->extra->pod_anti_affinity.nrequired = 1;
    } else {
        kube_pod_extra_own(p, a)->pod_affinity.required = t;
        p->extra->pod_affinity.nrequired = 1;
    }
    return p;
}

/* the fast path (sched_schedule_one), the detailed cycle and the reference path all say want */
static void check_three(struct sched_cluster *c, const struct kube_pod *pod, const char *want)
{
    struct sched_result r;
    struct sched_explanation x;
    struct err err = {0};

    CHECK_STR_EQ(tb_schedule(c, NULL, pod), want);
    memset(&x, 0, sizeof(x));
    CHECK_INT_EQ(sched_run(c, NULL, pod, NULL, false, &r, &x, &err), 0);
    CHECK_STR_EQ(r.message ? r.message : "-", strchr(want, '|') ? strchr(want, '|') + 2 : want);
    sched_result_release(&r);
    sched_explanation_release(&x);
    memset(&x, 0, sizeof(x));
    CHECK_INT_EQ(sched_run(c, NULL, pod, NULL, true, &r, &x, &err), 0);
    CHECK_STR_EQ(r.message ? r.message : "-", strchr(want, '|') ? strchr(want, '|') + 2 : want);
    sched_result_release(&r);
    sched_explanation_release(&x);
}

/* RunFilterPluginsWithNominatedPods in the dry run: InterPodAffinity sees the pods nominated to
 * the node (priority >= the preemptor's) in a first pass and must pass without them too; its
 * PreFilter skip (nothing to check before the dry run) holds in the dry run */
static void nominated_pods_in_interpod_dry_run(void)
{
    struct arena a = ARENA_INIT;
    const char *nodes[] = {"n1: cpu=2000 mem=8192 label:kubernetes.io/hostname=n1", NULL};
    const char *bound[] = {"name=x/low node=n1 prio=0 cpu=2000", NULL};
    struct sched_cluster *c = tb_cluster(&a, nodes, bound);
    struct err err = {0};

    /* db, nominated to n1, would run there: web avoids app=db */
    CHECK_INT_EQ(
        sched_cluster_nominate(c, tb_pod(&a, "name=x/db prio=100 label:app=db"), "n1", &err), 0);
    check_three(c,
                pod_term(&a, tb_pod(&a, "name=x/web prio=50 cpu=1000 label:app=web"), true, "db"),
                "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
                "1 node(s) didn't match pod anti-affinity rules.");
    /* web wants app=db: with db counted it fits, without it (the second pass) it does not */
    check_three(c,
                pod_term(&a, tb_pod(&a, "name=x/web prio=50 cpu=1000 label:app=web"), false, "db"),
                "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
                "1 node(s) didn't match pod affinity rules.");
    /* a preemptor of higher priority than db does not count it */
    check_three(c,
                pod_term(&a, tb_pod(&a, "name=x/web prio=200 cpu=1000 label:app=web"), true, "db"),
                "nominated:n1 victims:x/low | 0/1 nodes are available: 1 Insufficient cpu. "
                "preemption: found a potential placement for pod on node n1, preempting 1 victims");
    /* db's own anti-affinity to app=web: no pod in the cluster had a term matching web, so
     * PreFilter skipped the plugin and the dry run does not run it either */
    CHECK_INT_EQ(sched_cluster_nominate(
                     c, pod_term(&a, tb_pod(&a, "name=x/db prio=100 label:app=db"), true, "web"),
                     "n1", &err),
                 0);
    check_three(c, tb_pod(&a, "name=x/web prio=50 cpu=1000 label:app=web"),
                "nominated:n1 victims:x/low | 0/1 nodes are available: 1 Insufficient cpu. "
                "preemption: found a potential placement for pod on node n1, preempting 1 victims");
    /* once the filter runs (web has a term of its own), db's anti-affinity counts in the
     * first pass */
    check_three(c, pod_term(&a, tb_pod(&a, "name=x/web prio=50 cpu=1000 label:app=web"), true, "x"),
                "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
                "1 node(s) didn't satisfy existing pods anti-affinity rules.");
    sched_cluster_free(c);
    arena_release(&a);
}

static void ranking(void)
{
    struct sched_pod p[6];
    struct sched_pod *va[3], *vb[3];
    struct sched_preempt_node a, b;

    memset(p, 0, sizeof(p));
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    a.victims = va;
    b.victims = vb;
    /* fewer PDB violations wins over everything else */
    p[0].priority = 1, p[0].seq = 1;
    p[1].priority = 100, p[1].seq = 2;
    va[0] = &p[1], a.nvictims = 1, a.npdb_violations = 0;
    vb[0] = &p[0], b.nvictims = 1, b.npdb_violations = 1;
    CHECK(sched_preempt_cmp_candidates(&a, &b) < 0);
    CHECK(sched_preempt_cmp_candidates(&b, &a) > 0);
    /* then the lower highest-priority victim */
    b.npdb_violations = 0;
    CHECK(sched_preempt_cmp_candidates(&b, &a) < 0);
    /* then the smaller sum (priorities shifted by 2^31, so two negatives cost more than one) */
    p[2].priority = -10, p[3].priority = -10, p[4].priority = -10;
    va[0] = &p[2], va[1] = &p[3], a.nvictims = 2;
    vb[0] = &p[4], b.nvictims = 1;
    CHECK(sched_preempt_cmp_candidates(&b, &a) < 0);
    /* then fewer victims; then the later start of the highest-priority victims */
    p[2].seq = 10, p[4].seq = 20;
    a.nvictims = 1;
    CHECK(sched_preempt_cmp_candidates(&b, &a) < 0);
    p[4].seq = 10;
    CHECK_INT_EQ(sched_preempt_cmp_candidates(&b, &a), 0);
    /* calculateNumCandidates: 10%, at least 100, at most all */
    CHECK_INT_EQ(sched_preempt_num_candidates(50), 50);
    CHECK_INT_EQ(sched_preempt_num_candidates(500), 100);
    CHECK_INT_EQ(sched_preempt_num_candidates(5000), 500);
}

/* a PDB in namespace x selecting app=<app> */
static void add_pdb(struct sched_cluster *c, const char *name, const char *app, int32_t allowed,
                    const char *disrupted)
{
    static const char *vals[8];
    static struct kube_requirement reqs[8];
    static size_t n;
    struct kube_pdb pdb;
    struct err err = {0};

    memset(&pdb, 0, sizeof(pdb));
    vals[n] = app;
    reqs[n] = (struct kube_requirement){"app", KUBE_OP_IN, &vals[n], 1, false};
    pdb.namespace_ = "x";
    pdb.name = name;
    pdb.selector.present = true;
    pdb.selector.reqs = &reqs[n];
    pdb.selector.nreqs = 1;
    pdb.disruptions_allowed = allowed;
    pdb.disrupted_pods = disrupted ? &disrupted : NULL;
    pdb.ndisrupted_pods = disrupted ? 1 : 0;
    CHECK_INT_EQ(sched_cluster_set_pdb(c, &pdb, &err), 0);
    n = (n + 1) % 8;
}

static void pdb_violations(void)
{
    struct arena a = ARENA_INIT;
    const char *nodes[] = {"n1: cpu=10000 mem=8192", NULL};
    const char *bound[] = {"name=x/db-0 node=n1 prio=0 cpu=2000 label:app=db",
                           "name=x/db-1 node=n1 prio=0 cpu=2000 label:app=db",
                           "name=x/db-2 node=n1 prio=0 cpu=2000 label:app=db",
                           "name=y/db node=n1 prio=0 cpu=2000 label:app=db",
                           "name=x/web node=n1 prio=0 cpu=2000 label:app=web",
                           NULL};
    struct sched_cluster *c = tb_cluster(&a, nodes, bound);
    struct sched_pod *v[5];
    uint8_t viol[5];
    const char *names[][2] = {
        {"x", "db-0"}, {"x", "db-1"}, {"x", "db-2"}, {"x", "web"}, {"y", "db"}};
    const char *without, *with;
    int i;

    for (i = 0; i < 5; i++)
        v[i] = sched_cluster_find_pod(c, names[i][0], names[i][1]);
    /* one disruption allowed: the first selected pod uses it, the next ones violate; other
     * labels and other namespaces are not counted */
    add_pdb(c, "db", "db", 1, NULL);
    CHECK_INT_EQ(sched_pdb_violations(c, v, 5, viol), 0);
    CHECK_INT_EQ(viol[0] * 10000 + viol[1] * 1000 + viol[2] * 100 + viol[3] * 10 + viol[4], 1100);
    /* a pod in disruptedPods is being evicted already: it uses nothing */
    add_pdb(c, "db", "db", 1, "db-0");
    CHECK_INT_EQ(sched_pdb_violations(c, v, 5, viol), 0);
    CHECK_INT_EQ(viol[0] * 10000 + viol[1] * 1000 + viol[2] * 100 + viol[3] * 10 + viol[4], 100);
    /* removed, nothing violates; without budgets web (the latest start, least important) is
     * the victim */
    CHECK_INT_EQ(sched_cluster_remove_pdb(c, "x", "db"), 0);
    CHECK_INT_EQ(sched_cluster_remove_pdb(c, "x", "db"), -ENOENT);
    without = "nominated:n1 victims:x/web | 0/1 nodes are available: 1 Insufficient cpu. "
              "preemption: found a potential placement for pod on node n1, preempting 1 victims";
    CHECK_STR_EQ(tb_schedule(c, NULL, tb_pod(&a, "name=z/p prio=10 cpu=2000")), without);
    add_pdb(c, "web", "web", 0, NULL);
    CHECK_INT_EQ(sched_pdb_violations(c, v, 5, viol), 0);
    CHECK_INT_EQ(viol[0] * 10000 + viol[1] * 1000 + viol[2] * 100 + viol[3] * 10 + viol[4], 10);
    /* in preemption the protected web pod is reprieved first: y/db (the least important of
     * the others) goes instead */
    with = "nominated:n1 victims:y/db | 0/1 nodes are available: 1 Insufficient cpu. "
           "preemption: found a potential placement for pod on node n1, preempting 1 victims";
    CHECK_STR_EQ(tb_schedule(c, NULL, tb_pod(&a, "name=z/p prio=10 cpu=2000")), with);
    sched_cluster_free(c);
    arena_release(&a);
}

/* DryRunPreemption stops at calculateNumCandidates candidates: 100 of 150 nodes */
static void candidate_sampling(void)
{
    struct arena a = ARENA_INIT;
    struct sched_cluster *c = sched_cluster_new();
    struct sched_explanation x;
    struct err err = {0};
    char name[32], spec[96];
    int i;

    for (i = 0; i < 150; i++) {
        snprintf(name, sizeof(name), "n%03d", i);
        sched_cluster_add_node(c, tb_node(&a, name, "cpu=1000 mem=8192"), &err);
        snprintf(spec, sizeof(spec), "name=x/v%03d node=%s prio=0 cpu=1000", i, name);
        sched_cluster_add_pod(c, tb_pod(&a, spec), &err);
    }
    CHECK_INT_EQ(sched_explain(c, NULL, tb_pod(&a, "name=y/p prio=10 cpu=1000"), NULL, &x, &err),
                 0);
    CHECK_INT_EQ(x.nnodes, 150);
    if (x.nnodes == 150) {
        CHECK_STR_EQ(x.nodes[0].preemption, "victims: x/v000");
        CHECK_STR_EQ(x.nodes[99].preemption, "victims: x/v099");
        CHECK_STR_EQ(x.nodes[100].preemption,
                     "Not evaluated: preemption had found enough candidates");
        CHECK_STR_EQ(x.nodes[149].preemption,
                     "Not evaluated: preemption had found enough candidates");
    }
    /* every victim started earlier than the next: the latest start among the 100 wins */
    CHECK_STR_EQ(x.result.nominated_node, "n099");
    sched_explanation_release(&x);
    sched_cluster_free(c);
    arena_release(&a);
}

static const struct test_case cases[] = {
    {"victims, candidates and messages", table},
    {"the dry run stops at 10% / 100 candidates", candidate_sampling},
    {"PodDisruptionBudget violations counted, reprieved first", pdb_violations},
    {"nominated pods hold their room (filters and dry run)", nominated_pods_hold_room},
    {"a nomination is replaced, listed and removed", nomination_replaced_and_removed},
    {"a host port shared by two pods leaves with either (HostPortInfo)", shared_host_port},
    {"nominated pods in InterPodAffinity's dry run", nominated_pods_in_interpod_dry_run},
    {"pickOneNodeForPreemption's order and the candidate count", ranking},
    {"simulate evicts the victims and retries the preemptor", simulate_evicts_and_retries},
    {"simulate: same seed, same output", simulate_same_seed_same_output},
    {"simulate twice on one cluster", simulate_twice_on_one_cluster},
    {"assume, confirm and forget", assume_and_forget},
    {"node updates, removal and return", node_updates},
    {"a bound pod that requests less", bound_pod_shrinks},
};
TEST_SUITE(sched_preempt, cases)
