/* test_sched_score.c - score plugins, normalisation, weights, the GPU-aware profile and the
 * seeded tie-break, checked through sched_explain's per-node scores against hand-computed
 * values of kube-scheduler's formulas (research/scheduling.md §3-5). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sched_tb.h"
#include "test.h"

struct ex {
    struct arena a;
    struct sched_cluster *c;
    struct sched_explanation x;
};

static void ex_run(struct ex *e, const char *const *nodes, const char *const *bound,
                   struct kube_pod *pod, const struct sched_profile *p)
{
    struct err err = {0};
    struct sched_rng rng;

    e->c = tb_cluster(&e->a, nodes, bound);
    sched_rng_seed(&rng, 0);
    CHECK_INT_EQ(sched_explain(e->c, p, pod, &rng, &e->x, &err), 0);
}

static void ex_done(struct ex *e)
{
    sched_explanation_release(&e->x);
    sched_cluster_free(e->c);
    arena_release(&e->a);
}

/* score of plugin on node i: which = 0 raw, 1 normalized, 2 weighted */
static long long sc(const struct ex *e, size_t i, const char *plugin, int which)
{
    size_t k;

    if (i >= e->x.nnodes)
        return -1000;
    for (k = 0; k < e->x.nodes[i].nscores; k++)
        if (!strcmp(e->x.nodes[i].scores[k].plugin, plugin))
            return which == 0   ? e->x.nodes[i].scores[k].raw
                   : which == 1 ? e->x.nodes[i].scores[k].normalized
                                : e->x.nodes[i].scores[k].weighted;
    return -1000;
}

static void least_allocated(void)
{
    struct ex e;

    memset(&e, 0, sizeof(e));
    const char *nodes[] = {"n1: cpu=4000 mem=8192", NULL};

    ex_run(&e, nodes, NULL, tb_pod(&e.a, "cpu=1000 mem=2048"), NULL);
    CHECK_INT_EQ(sc(&e, 0, "NodeResourcesFit", 0), 75);
    /* balanced before (0, 0) and after (0.25, 0.25): no change, 50 + (50 + 100 - 100) / 2 */
    CHECK_INT_EQ(sc(&e, 0, "NodeResourcesBalancedAllocation", 0), 75);
    /* TaintToleration: no taints anywhere, every node gets 100 x 3 */
    CHECK_INT_EQ(sc(&e, 0, "TaintToleration", 2), 300);
    CHECK_INT_EQ(sc(&e, 0, "NodeAffinity", 2), 0);
    CHECK_INT_EQ(e.x.nodes[0].total, 300 + 0 + 75 + 75);
    ex_done(&e);
}

static void nonzero_defaults(void)
{
    struct ex e;

    memset(&e, 0, sizeof(e));
    const char *nodes[] = {"n1: cpu=1000 mem=1000", NULL};
    /* a bound pod without requests counts 100m / 200MiB for scoring only */
    const char *bound[] = {"name=x/a node=n1", NULL};

    ex_run(&e, nodes, bound, tb_pod(&e.a, ""), NULL);
    /* cpu (1000-200)*100/1000 = 80, memory (1000-400)*100/1000 = 60 -> 70 */
    CHECK_INT_EQ(sc(&e, 0, "NodeResourcesFit", 0), 70);
    /* best-effort pod: BalancedAllocation is skipped */
    CHECK_INT_EQ(sc(&e, 0, "NodeResourcesBalancedAllocation", 0), 0);
    ex_done(&e);
}

static void explicit_zero_is_not_defaulted(void)
{
    struct ex e;

    memset(&e, 0, sizeof(e));
    const char *nodes[] = {"n1: cpu=1000 mem=1000", NULL};

    ex_run(&e, nodes, NULL, tb_pod(&e.a, "cpu=0 mem=100"), NULL);
    /* cpu 0 stays 0: 100; memory 100: 90 -> 95 */
    CHECK_INT_EQ(sc(&e, 0, "NodeResourcesFit", 0), 95);
    ex_done(&e);
}

static void balanced(void)
{
    struct ex e;

    memset(&e, 0, sizeof(e));
    const char *nodes[] = {"n1: cpu=4000 mem=4096", NULL};

    ex_run(&e, nodes, NULL, tb_pod(&e.a, "cpu=2000 mem=1024"), NULL);
    /* with the pod, fractions 0.5 and 0.25: std 0.125, (1-0.125)*100 = 87.5 -> 87; without,
     * 100 (an empty node); v1.37 scores the change: 50 + (50 + 87 - 100) / 2 = 68 */
    CHECK_INT_EQ(sc(&e, 0, "NodeResourcesBalancedAllocation", 0), 68);
    /* LeastAllocated (50 + 75) / 2 = 62 */
    CHECK_INT_EQ(sc(&e, 0, "NodeResourcesFit", 0), 62);
    ex_done(&e);
}

static void taint_score(void)
{
    struct ex e;

    memset(&e, 0, sizeof(e));
    const char *nodes[] = {
        "n1: cpu=4000 mem=8192", "n2: cpu=4000 mem=8192 taint:a:PreferNoSchedule",
        "n3: cpu=4000 mem=8192 taint:a:PreferNoSchedule taint:b=1:PreferNoSchedule", NULL};

    /* a toleration with effect NoSchedule does not count for the score */
    ex_run(&e, nodes, NULL, tb_pod(&e.a, "cpu=100 tol:b:Exists:NoSchedule"), NULL);
    CHECK_INT_EQ(sc(&e, 0, "TaintToleration", 0), 0);
    CHECK_INT_EQ(sc(&e, 1, "TaintToleration", 0), 1);
    CHECK_INT_EQ(sc(&e, 2, "TaintToleration", 0), 2);
    CHECK_INT_EQ(sc(&e, 0, "TaintToleration", 2), 300);
    CHECK_INT_EQ(sc(&e, 1, "TaintToleration", 2), 150);
    CHECK_INT_EQ(sc(&e, 2, "TaintToleration", 2), 0);
    CHECK(e.x.nodes[0].selected);
    ex_done(&e);
}

static void taint_score_tolerated(void)
{
    struct ex e;

    memset(&e, 0, sizeof(e));
    const char *nodes[] = {"n1: cpu=4000 mem=8192 taint:a:PreferNoSchedule", NULL};

    ex_run(&e, nodes, NULL, tb_pod(&e.a, "cpu=100 tol:a:Exists:PreferNoSchedule"), NULL);
    CHECK_INT_EQ(sc(&e, 0, "TaintToleration", 0), 0);
    ex_done(&e);
}

static void affinity_score(void)
{
    struct ex e;

    memset(&e, 0, sizeof(e));
    const char *nodes[] = {"n1: cpu=4000 mem=8192 label:zone=a",
                           "n2: cpu=4000 mem=8192 label:gpu=1",
                           "n3: cpu=4000 mem=8192 label:zone=a label:gpu=1", NULL};
    struct kube_pod *p;

    e.c = NULL;
    p = tb_pod(&e.a, "cpu=100");
    tb_pref_term(&e.a, p, 30, "zone In a", (const char *)NULL);
    tb_pref_term(&e.a, p, 70, "gpu Exists", (const char *)NULL);
    ex_run(&e, nodes, NULL, p, NULL);
    CHECK_INT_EQ(sc(&e, 0, "NodeAffinity", 0), 30);
    CHECK_INT_EQ(sc(&e, 1, "NodeAffinity", 0), 70);
    CHECK_INT_EQ(sc(&e, 2, "NodeAffinity", 0), 100);
    CHECK_INT_EQ(sc(&e, 0, "NodeAffinity", 2), 60);
    CHECK_INT_EQ(sc(&e, 2, "NodeAffinity", 2), 200);
    CHECK(e.x.nodes[2].selected);
    ex_done(&e);
}

static void affinity_normalized_integer_division(void)
{
    struct ex e;

    memset(&e, 0, sizeof(e));
    const char *nodes[] = {"n1: cpu=4000 mem=8192 label:zone=a",
                           "n2: cpu=4000 mem=8192 label:gpu=1", NULL};
    struct kube_pod *p = tb_pod(&e.a, "cpu=100");

    tb_pref_term(&e.a, p, 30, "zone In a", (const char *)NULL);
    tb_pref_term(&e.a, p, 70, "gpu Exists", (const char *)NULL);
    /* a zero weight is skipped */
    tb_pref_term(&e.a, p, 0, "zone Exists", (const char *)NULL);
    ex_run(&e, nodes, NULL, p, NULL);
    /* max 70: 100*30/70 = 42 */
    CHECK_INT_EQ(sc(&e, 0, "NodeAffinity", 1), 42);
    CHECK_INT_EQ(sc(&e, 1, "NodeAffinity", 1), 100);
    ex_done(&e);
}

static void infeasible_nodes_do_not_normalize(void)
{
    struct ex e;

    memset(&e, 0, sizeof(e));
    /* n2 has the most preferred weight but does not fit: the max is taken over n1 only */
    const char *nodes[] = {"n1: cpu=4000 mem=8192 label:zone=a",
                           "n2: cpu=10 mem=8192 label:zone=a label:gpu=1", NULL};
    struct kube_pod *p = tb_pod(&e.a, "cpu=100");

    tb_pref_term(&e.a, p, 30, "zone In a", (const char *)NULL);
    tb_pref_term(&e.a, p, 70, "gpu Exists", (const char *)NULL);
    ex_run(&e, nodes, NULL, p, NULL);
    CHECK_INT_EQ(sc(&e, 0, "NodeAffinity", 1), 100);
    CHECK_STR_EQ(e.x.nodes[1].plugin, "NodeResourcesFit");
    CHECK_INT_EQ(e.x.nfeasible, 1);
    ex_done(&e);
}

static const char *choose(const char *const *nodes, const char *const *bound, const char *pod,
                          const struct sched_profile *p)
{
    static char buf[256];
    struct arena a = ARENA_INIT;
    struct sched_cluster *c = tb_cluster(&a, nodes, bound);

    snprintf(buf, sizeof(buf), "%s", tb_schedule(c, p, tb_pod(&a, pod)));
    sched_cluster_free(c);
    arena_release(&a);
    return buf;
}

static void gpu_profile_bin_packs(void)
{
    const char *nodes[] = {"a: cpu=16000 mem=65536 gpu=4", "b: cpu=16000 mem=65536 gpu=4", NULL};
    const char *bound[] = {"name=x/g1 node=a cpu=4000 mem=8192 gpu=1",
                           "name=x/g2 node=a cpu=4000 mem=8192 gpu=1", NULL};

    /* default spreads to the emptier node, gpu packs onto the node already in use */
    CHECK_STR_EQ(choose(nodes, bound, "cpu=1000 mem=1024 gpu=1", &sched_profile_default), "node:b");
    CHECK_STR_EQ(choose(nodes, bound, "cpu=1000 mem=1024 gpu=1", &sched_profile_gpu), "node:a");
}

static void gpu_profile_keeps_cpu_pods_off_gpu_nodes(void)
{
    const char *nodes[] = {"g: cpu=64000 mem=262144 gpu=8", "c: cpu=8000 mem=16384", NULL};
    const char *bound[] = {"name=x/w node=c cpu=4000 mem=8192", NULL};
    const char *full[] = {"name=x/w node=c cpu=8000 mem=8192", NULL};

    CHECK_STR_EQ(choose(nodes, bound, "cpu=1000 mem=1024", &sched_profile_default), "node:g");
    CHECK_STR_EQ(choose(nodes, bound, "cpu=1000 mem=1024", &sched_profile_gpu), "node:c");
    /* a penalty, not a filter: with no room elsewhere the GPU node takes it */
    CHECK_STR_EQ(choose(nodes, full, "cpu=1000 mem=1024", &sched_profile_gpu), "node:g");
}

static void gpu_profile_scores_in_explain(void)
{
    struct ex e;

    memset(&e, 0, sizeof(e));
    const char *nodes[] = {"a: cpu=16000 mem=65536 gpu=4", "b: cpu=16000 mem=65536", NULL};
    const char *bound[] = {"name=x/g1 node=a gpu=2", NULL};

    ex_run(&e, nodes, bound, tb_pod(&e.a, "cpu=100 gpu=1"), &sched_profile_gpu);
    /* (2+1)*100/4 = 75, weight 10 */
    CHECK_INT_EQ(sc(&e, 0, "GPUPlacement", 0), 75);
    CHECK_INT_EQ(sc(&e, 0, "GPUPlacement", 2), 750);
    CHECK_STR_EQ(e.x.nodes[1].plugin, "NodeResourcesFit");
    ex_done(&e);
}

static void tie_break_is_seeded(void)
{
    const char *nodes[] = {"n1: cpu=4000 mem=8192", "n2: cpu=4000 mem=8192",
                           "n3: cpu=4000 mem=8192", NULL};
    struct arena a = ARENA_INIT;
    struct sched_cluster *c = tb_cluster(&a, nodes, NULL);
    struct kube_pod *pod = tb_pod(&a, "cpu=100");
    struct err err = {0};
    bool seen[3] = {false, false, false};
    uint64_t seed;

    for (seed = 0; seed < 32; seed++) {
        struct sched_rng r1, r2;
        struct sched_result x, y;
        sched_rng_seed(&r1, seed);
        sched_rng_seed(&r2, seed);
        CHECK_INT_EQ(sched_schedule_one(c, NULL, pod, &r1, &x, &err), 0);
        CHECK_INT_EQ(sched_schedule_one(c, NULL, pod, &r2, &y, &err), 0);
        CHECK_STR_EQ(x.node, y.node);
        if (x.node)
            seen[x.node[1] - '1'] = true;
        sched_result_release(&x);
        sched_result_release(&y);
    }
    CHECK(seen[0] && seen[1] && seen[2]);
    /* without a generator the first of the tied nodes wins */
    {
        struct sched_result x;
        CHECK_INT_EQ(sched_schedule_one(c, NULL, pod, NULL, &x, &err), 0);
        CHECK_STR_EQ(x.node, "n1");
        sched_result_release(&x);
    }
    sched_cluster_free(c);
    arena_release(&a);
}

/* spread_norm: PodTopologySpread's normalized score on nodes n1..n3 ("-" when it does not
 * score), for pod on a cluster where n1 (zone a) runs two pods labelled app=web, tier=y */
static const char *spread_norm(struct sched_cluster *c, const struct kube_pod *pod)
{
    static char buf[64];
    struct sched_explanation x;
    struct sched_rng rng;
    struct err err = {0};
    struct ex e;

    memset(&x, 0, sizeof(x));
    sched_rng_seed(&rng, 0);
    CHECK_INT_EQ(sched_explain(c, NULL, pod, &rng, &x, &err), 0);
    e.x = x;
    if (sc(&e, 0, "PodTopologySpread", 1) == -1000)
        snprintf(buf, sizeof(buf), "-");
    else
        snprintf(buf, sizeof(buf), "%lld %lld %lld", sc(&e, 0, "PodTopologySpread", 1),
                 sc(&e, 1, "PodTopologySpread", 1), sc(&e, 2, "PodTopologySpread", 1));
    sched_explanation_release(&x);
    return buf;
}

/* The system defaults' Services and controllers as serve's watch feeds them: added, replaced
 * (a Service's selector changed), removed; a controller found through the pod's controller
 * ownerReference only with its kind's apiVersion; a ReplicationController's selector
 * overriding a Service's value of the same key (labels.Merge in helper.DefaultSelector). */
static void spread_sources_follow_the_watch(void)
{
    const char *nodes[] = {"n1: cpu=4000 mem=8192 label:kubernetes.io/hostname=n1 "
                           "label:topology.kubernetes.io/zone=a",
                           "n2: cpu=4000 mem=8192 label:kubernetes.io/hostname=n2 "
                           "label:topology.kubernetes.io/zone=a",
                           "n3: cpu=4000 mem=8192 label:kubernetes.io/hostname=n3 "
                           "label:topology.kubernetes.io/zone=b",
                           NULL};
    const char *bound[] = {"name=ns/w1 node=n1 label:app=web label:tier=y",
                           "name=ns/w2 node=n1 label:app=web label:tier=y", NULL};
    static const char *web[] = {"web"}, *other[] = {"other"}, *x[] = {"x"}, *y[] = {"y"};
    struct kube_requirement r_web[2] = {{"app", KUBE_OP_IN, web, 1, false},
                                        {"tier", KUBE_OP_IN, x, 1, false}};
    struct kube_requirement r_other = {"app", KUBE_OP_IN, other, 1, false};
    struct kube_requirement r_y = {"tier", KUBE_OP_IN, y, 1, false};
    struct kube_label_selector s_web = {true, r_web, 1}, s_other = {true, &r_other, 1};
    struct kube_label_selector s_webx = {true, r_web, 2}, s_y = {true, &r_y, 1};
    struct arena a = ARENA_INIT;
    struct sched_cluster *c = tb_cluster(&a, nodes, bound);
    struct kube_pod *p = tb_pod(&a, "name=ns/p cpu=100 mem=100 label:app=web label:tier=x");
    struct err err = {0};
    const char *spread;

    CHECK_STR_EQ(spread_norm(c, p), "-");
    CHECK_INT_EQ(sched_cluster_add_spread_source(c, NULL, "ns", "web", &s_web, &err), 0);
    spread = spread_norm(c, p);
    CHECK_STR_EQ(spread, "50 75 100");
    /* the same Service in another namespace, or one whose selector no longer matches */
    CHECK_INT_EQ(sched_cluster_add_spread_source(c, NULL, "ns", "web", &s_other, &err), 0);
    CHECK_INT_EQ(sched_cluster_add_spread_source(c, NULL, "other", "web", &s_web, &err), 0);
    CHECK_STR_EQ(spread_norm(c, p), "-");
    CHECK_INT_EQ(sched_cluster_add_spread_source(c, NULL, "ns", "web", &s_web, &err), 0);
    CHECK_STR_EQ(spread_norm(c, p), spread);
    CHECK_INT_EQ(sched_cluster_remove_spread_source(c, NULL, "ns", "web"), 0);
    CHECK_INT_EQ(sched_cluster_remove_spread_source(c, NULL, "ns", "web"), -ENOENT);
    CHECK_STR_EQ(spread_norm(c, p), "-");

    /* a ReplicaSet, through the controller reference */
    p->owner.kind = "ReplicaSet";
    p->owner.name = "rs";
    p->owner.api_version = "apps/v1";
    CHECK_INT_EQ(sched_cluster_add_spread_source(c, "ReplicaSet", "ns", "rs", &s_web, &err), 0);
    CHECK_STR_EQ(spread_norm(c, p), spread);
    p->owner.api_version = "extensions/v1beta1";
    CHECK_STR_EQ(spread_norm(c, p), "-");
    p->owner.api_version = NULL; /* the manifest loader's own owners */
    CHECK_STR_EQ(spread_norm(c, p), spread);
    CHECK_INT_EQ(sched_cluster_remove_spread_source(c, "ReplicaSet", "ns", "rs"), 0);
    CHECK_STR_EQ(spread_norm(c, p), "-");

    /* Service app=web,tier=x and the pod's ReplicationController tier=y: tier=y wins, so the
     * two pods on n1 count (both requirements kept would match no pod: all nodes equal) */
    p->owner.kind = "ReplicationController";
    p->owner.name = "rc";
    p->owner.api_version = "v1";
    CHECK_INT_EQ(sched_cluster_add_spread_source(c, NULL, "ns", "webx", &s_webx, &err), 0);
    CHECK_STR_EQ(spread_norm(c, p), "100 100 100");
    CHECK_INT_EQ(
        sched_cluster_add_spread_source(c, "ReplicationController", "ns", "rc", &s_y, &err), 0);
    CHECK_STR_EQ(spread_norm(c, p), spread);
    sched_cluster_free(c);
    arena_release(&a);
}

static const struct test_case cases[] = {
    {"LeastAllocated and weights", least_allocated},
    {"non-zero defaults 100m/200MiB, best-effort skips BalancedAllocation", nonzero_defaults},
    {"an explicit zero request is not defaulted", explicit_zero_is_not_defaulted},
    {"BalancedAllocation float formula", balanced},
    {"TaintToleration counts untolerated PreferNoSchedule, reversed", taint_score},
    {"TaintToleration with a PreferNoSchedule toleration", taint_score_tolerated},
    {"NodeAffinity preferred weights", affinity_score},
    {"NodeAffinity normalisation uses integer division", affinity_normalized_integer_division},
    {"normalisation only over feasible nodes", infeasible_nodes_do_not_normalize},
    {"gpu profile bin-packs GPU pods", gpu_profile_bin_packs},
    {"gpu profile keeps CPU pods off GPU nodes (penalty only)",
     gpu_profile_keeps_cpu_pods_off_gpu_nodes},
    {"gpu profile scores in explain", gpu_profile_scores_in_explain},
    {"tie-break follows the seed", tie_break_is_seeded},
    {"system default spreading follows Services and controllers added, replaced, removed",
     spread_sources_follow_the_watch},
};
TEST_SUITE(sched_score, cases)
