/* test_sched_config.c - `--config`: a KubeSchedulerConfiguration read into profiles with
 * kube-scheduler v1.37's defaults (score weights, 0 -> 1, "*", multiPoint; NodeResourcesFit's
 * resources and weights; percentageOfNodesToScore; leaderElection), its refusals as one line
 * naming file, line and field, and NodeResourcesFit's three scoring strategies checked against
 * values computed by hand from pkg/scheduler/framework/plugins/noderesources. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sched/config.h"
#include "sched/plugins-int.h"
#include "sched/profile-int.h"
#include "test.h"

static char cfg_path[64];

/* load writes text to a temporary file and reads it; returns the rc, err filled */
static int load(const char *text, struct sched_config *cfg, struct err *err)
{
    FILE *f;
    int fd, rc;

    snprintf(cfg_path, sizeof(cfg_path), "/tmp/gpusched-config-XXXXXX");
    fd = mkstemp(cfg_path);
    if (fd < 0 || !(f = fdopen(fd, "w"))) {
        test_fail(__FILE__, __LINE__, "cannot create a temporary file");
        return -1;
    }
    fputs(text, f);
    fclose(f);
    err_clear(err);
    rc = sched_config_load(cfg_path, NULL, cfg, err);
    unlink(cfg_path);
    return rc;
}

#define HEAD "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

static void defaults_without_profiles(void)
{
    struct sched_config cfg;
    struct err err;

    CHECK_INT_EQ(load(HEAD, &cfg, &err), 0);
    CHECK_INT_EQ(cfg.nprofiles, 1);
    if (cfg.nprofiles == 1) {
        const struct sched_profile *p = &cfg.profiles[0];
        CHECK_STR_EQ(p->name, "default-scheduler");
        CHECK_INT_EQ(p->w_taint, 3);
        CHECK_INT_EQ(p->w_affinity, 2);
        CHECK_INT_EQ(p->w_fit, 1);
        CHECK_INT_EQ(p->w_balanced, 1);
        CHECK_INT_EQ(p->w_spread, 2);
        CHECK(!p->gpu_aware);
        CHECK(sched_profile_fit_default(p));
        /* kube-scheduler's default: adaptive */
        CHECK_INT_EQ(p->percentage_of_nodes_to_score, 0);
    }
    CHECK(!cfg.has_leader_elect);
    sched_config_release(&cfg);
}

static void profiles_weights_and_strategies(void)
{
    static const char text[] =
        HEAD "percentageOfNodesToScore: 30\n"
             "leaderElection:\n"
             "  leaderElect: true\n"
             "  leaseDuration: 20s\n"
             "  renewDeadline: 15s\n"
             "  retryPeriod: 3s\n"
             "  resourceName: gpu-sched\n"
             "  resourceNamespace: sched\n"
             "profiles:\n"
             "- schedulerName: binpack\n"
             "  percentageOfNodesToScore: 100\n"
             "  plugins:\n"
             "    multiPoint:\n"
             "      enabled:\n"
             "      - {name: TaintToleration, weight: 6}\n"
             "      - {name: NodeAffinity, weight: 4}\n"
             "    score:\n"
             "      disabled: [{name: NodeResourcesBalancedAllocation}, {name: ImageLocality}]\n"
             "      enabled:\n"
             "      - {name: NodeResourcesFit, weight: 0}\n"
             "      - {name: NodeAffinity, weight: 9}\n"
             "      - {name: GPUPlacement, weight: 4}\n"
             "  pluginConfig:\n"
             "  - name: NodeResourcesFit\n"
             "    args:\n"
             "      scoringStrategy:\n"
             "        type: MostAllocated\n"
             "        resources: [{name: nvidia.com/gpu, weight: 10}, {name: cpu}]\n"
             "- schedulerName: ratio\n"
             "  plugins:\n"
             "    score:\n"
             "      disabled: [{name: '*'}]\n"
             "      enabled: [{name: NodeResourcesFit, weight: 2}]\n"
             "  pluginConfig:\n"
             "  - name: NodeResourcesFit\n"
             "    args:\n"
             "      scoringStrategy:\n"
             "        type: RequestedToCapacityRatio\n"
             "        requestedToCapacityRatio:\n"
             "          shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]\n";
    struct sched_config cfg;
    const struct sched_profile *b, *r;
    struct err err;
    char msg[1400];

    if (load(text, &cfg, &err)) {
        test_fail(__FILE__, __LINE__, "load: %s", err_format(&err, msg, sizeof(msg)));
        return;
    }
    CHECK_INT_EQ(cfg.nprofiles, 2);
    b = sched_config_find(&cfg, "binpack");
    r = sched_config_find(&cfg, "ratio");
    CHECK(sched_config_find(&cfg, "default-scheduler") == NULL);
    if (!b || !r) {
        test_fail(__FILE__, __LINE__, "profiles not found");
        sched_config_release(&cfg);
        return;
    }
    CHECK_INT_EQ(b->percentage_of_nodes_to_score, 100);
    CHECK_INT_EQ(r->percentage_of_nodes_to_score, 30);
    /* multiPoint's weight; the Score weight wins over multiPoint's; 0 is 1 */
    CHECK_INT_EQ(b->w_taint, 6);
    CHECK_INT_EQ(b->w_affinity, 9);
    CHECK_INT_EQ(b->w_fit, 1);
    CHECK_INT_EQ(b->w_balanced, 0);
    CHECK_INT_EQ(b->w_spread, 2);
    CHECK(b->gpu_aware);
    CHECK_INT_EQ(b->gpu_weight, 4);
    CHECK_INT_EQ(b->fit_strategy, SCHED_FIT_MOST_ALLOCATED);
    CHECK_INT_EQ(b->nfit_resources, 2);
    CHECK_STR_EQ(b->fit_resources[0].name, "nvidia.com/gpu");
    CHECK_INT_EQ(b->fit_resources[0].weight, 10);
    CHECK_STR_EQ(b->fit_resources[1].name, "cpu");
    CHECK_INT_EQ(b->fit_resources[1].weight, 1);
    /* "*" turns every default score plugin off; NodeResourcesFit comes back with its weight */
    CHECK_INT_EQ(r->w_taint, 0);
    CHECK_INT_EQ(r->w_affinity, 0);
    CHECK_INT_EQ(r->w_balanced, 0);
    CHECK_INT_EQ(r->w_spread, 0);
    CHECK_INT_EQ(r->w_fit, 2);
    CHECK_INT_EQ(r->fit_strategy, SCHED_FIT_REQUESTED_TO_CAPACITY_RATIO);
    CHECK_INT_EQ(r->nfit_resources, 2); /* defaulted: cpu, memory */
    CHECK_INT_EQ(r->nshape, 2);
    CHECK_INT_EQ(r->shape[1].utilization, 100);
    CHECK_INT_EQ(r->shape[1].score, 10);
    CHECK(cfg.has_leader_elect && cfg.leader_elect);
    CHECK_INT_EQ(cfg.lease_duration_ms, 20000);
    CHECK_INT_EQ(cfg.renew_deadline_ms, 15000);
    CHECK_INT_EQ(cfg.retry_period_ms, 3000);
    CHECK_STR_EQ(cfg.lease_name, "gpu-sched");
    CHECK_STR_EQ(cfg.lease_namespace, "sched");
    /* the score cache key tells the profiles apart */
    CHECK(sched_profile_score_key(b) != sched_profile_score_key(r));
    CHECK(sched_profile_score_key(&sched_profile_default) !=
          sched_profile_score_key(&sched_profile_gpu));
    sched_config_release(&cfg);
}

static void refusals_name_line_and_field(void)
{
    static const struct {
        const char *text, *want;
    } rows[] = {
        {"apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
         "line 1: apiVersion: want kubescheduler.config.k8s.io/v1, not \"kubescheduler.config.k8s.io/v1beta3\""},
        {HEAD "extenders: []\n", "line 3: extenders: unknown or unsupported field \"extenders\""},
        {HEAD "percentageOfNodesToScore: 101\n",
         "line 3: percentageOfNodesToScore: 101 is not in the range [0, 100]"},
        {HEAD "profiles:\n- schedulerName: a\n- schedulerName: a\n",
         "line 5: profiles[1].schedulerName: Duplicate value: \"a\""},
        {HEAD "profiles:\n- plugins:\n    score:\n      enabled: [{name: Foo}]\n",
         "line 6: profiles[0].plugins.score.enabled[0].name: unknown or unsupported score plugin \"Foo\""},
        {HEAD "profiles:\n- plugins:\n    filter:\n      disabled: [{name: NodePorts}]\n",
         "profiles[0].plugins.filter.disabled[0].name: disabling the filter \"NodePorts\" is not supported by gpusched"},
        {HEAD "profiles:\n- plugins:\n    bind:\n      enabled: []\n",
         "profiles[0].plugins.bind: configuring the bind extension point is not supported by gpusched"},
        {HEAD
         "profiles:\n- plugins:\n    score:\n      enabled: [{name: NodeAffinity, weight: -1}]\n",
         "profiles[0].plugins.score.enabled[0].weight: -1 is not in the range [0, 10000]"},
        {HEAD "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
              "      scoringStrategy: {type: Packed}\n",
         "line 7: profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: \"Packed\""},
        {HEAD "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
              "      scoringStrategy: {type: RequestedToCapacityRatio}\n",
         "requestedToCapacityRatio: Required value: must be specified when type is RequestedToCapacityRatio"},
        {HEAD "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
              "      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
              "        requestedToCapacityRatio:\n"
              "          shape: [{utilization: 50, score: 1}, {utilization: 50, score: 2}]\n",
         "line 10: profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 50: values must be sorted in increasing order"},
        {HEAD "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
              "      scoringStrategy:\n        type: LeastAllocated\n"
              "        resources: [{name: cpu, weight: 101}]\n",
         "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: 101 is not in the range [0, 100]"},
        {HEAD "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args: {}\n",
         "line 5: profiles[0].pluginConfig[0].name: args of plugin \"PodTopologySpread\" are not supported by gpusched"},
        {HEAD "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args:\n"
              "      bindingTimeout: 500ms\n",
         "line 7: profiles[0].pluginConfig[0].args.bindingTimeout: Invalid value: 500ms: must be at least 1 second"},
        {HEAD "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args:\n"
              "      filterTimeout: 10s\n",
         "profiles[0].pluginConfig[0].args.filterTimeout: not supported by gpusched"},
        {HEAD "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args:\n"
              "      scoring: 1\n",
         "line 7: profiles[0].pluginConfig[0].args.scoring: unknown field \"scoring\""},
        {HEAD "leaderElection:\n  resourceLock: endpoints\n",
         "line 4: leaderElection.resourceLock: only \"leases\" is supported"},
        {HEAD "leaderElection:\n  leaseDuration: 10s\n  renewDeadline: 10s\n",
         "leaderElection.renewDeadline: must be less than leaseDuration"},
        {HEAD "profiles: [\n", "line "},
    };
    size_t i;

    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct sched_config cfg;
        struct err err;
        char msg[1400];
        int rc = load(rows[i].text, &cfg, &err);
        err_format(&err, msg, sizeof(msg));
        if (!rc || !strstr(msg, rows[i].want) || !strstr(msg, cfg_path) || strchr(msg, '\n'))
            test_fail(__FILE__, __LINE__, "row %zu: rc %d, %s; want %s", i, rc, msg, rows[i].want);
        if (!rc)
            sched_config_release(&cfg);
    }
}

/* DynamicResourcesArgs.bindingTimeout per profile (0: the default); filterTimeout 0 accepted */
static void dynamic_resources_args(void)
{
    struct sched_config cfg;
    struct err err;
    int rc = load(HEAD "profiles:\n- schedulerName: a\n  pluginConfig:\n"
                       "  - name: DynamicResources\n    args:\n      kind: DynamicResourcesArgs\n"
                       "      bindingTimeout: 1m30s\n      filterTimeout: 0s\n- schedulerName: b\n",
                  &cfg, &err);

    CHECK_INT_EQ(rc, 0);
    if (rc)
        return;
    CHECK_INT_EQ(sched_config_find(&cfg, "a")->dra_binding_timeout_ms, 90000);
    CHECK_INT_EQ(sched_config_find(&cfg, "b")->dra_binding_timeout_ms, 0);
    sched_config_release(&cfg);
}

/* sched_noderesources_score against kube-scheduler's formulas worked by hand */
static void fit_strategies(void)
{
    struct sched_profile p = sched_profile_default;
    int64_t alloc[3] = {4000, 10000, 0}, req[3] = {3000, 5000, 7};

    p.nfit_resources = 3;
    p.fit_resources[0] = (struct sched_fit_resource){"cpu", 1};
    p.fit_resources[1] = (struct sched_fit_resource){"memory", 1};
    p.fit_resources[2] = (struct sched_fit_resource){"nvidia.com/gpu", 5}; /* allocatable 0: out */
    /* MostAllocated: (75 + 50) / 2 */
    p.fit_strategy = SCHED_FIT_MOST_ALLOCATED;
    CHECK_INT_EQ(sched_noderesources_score(&p, alloc, req), 62);
    /* LeastAllocated with cpu:2: (2 x 25 + 50) / 3 */
    p.fit_strategy = SCHED_FIT_LEAST_ALLOCATED;
    p.fit_resources[0].weight = 2;
    CHECK_INT_EQ(sched_noderesources_score(&p, alloc, req), 33);
    p.fit_resources[0].weight = 1;
    /* requested over capacity: Least gives 0, Most caps at 100 */
    req[0] = 5000;
    CHECK_INT_EQ(sched_noderesources_score(&p, alloc, req), 25);
    p.fit_strategy = SCHED_FIT_MOST_ALLOCATED;
    CHECK_INT_EQ(sched_noderesources_score(&p, alloc, req), 75);
    /* RequestedToCapacityRatio 0->0, 100->10 (x10): round((75 + 50) / 2) = 63, where
     * MostAllocated's integer division gives 62 */
    req[0] = 3000;
    p.fit_strategy = SCHED_FIT_REQUESTED_TO_CAPACITY_RATIO;
    p.nshape = 2;
    p.shape[0] = (struct sched_shape_point){0, 0};
    p.shape[1] = (struct sched_shape_point){100, 10};
    CHECK_INT_EQ(sched_noderesources_score(&p, alloc, req), 63);
    /* a resource scoring 0 is left out of the mean: cpu unused -> only memory's 50 */
    req[0] = 0;
    CHECK_INT_EQ(sched_noderesources_score(&p, alloc, req), 50);
    /* over capacity takes the shape at 100%; a broken line 0->10, 50->0, 100->6:
     * cpu 125% -> 60, memory 50% -> 0 (left out) */
    req[0] = 5000;
    p.nshape = 3;
    p.shape[0] = (struct sched_shape_point){0, 10};
    p.shape[1] = (struct sched_shape_point){50, 0};
    p.shape[2] = (struct sched_shape_point){100, 6};
    CHECK_INT_EQ(sched_noderesources_score(&p, alloc, req), 60);
    /* memory 25%: 100 + (0 - 100) x 25 / 50 = 50; cpu 60: round((60 + 50) / 2) = 55 */
    req[1] = 2500;
    CHECK_INT_EQ(sched_noderesources_score(&p, alloc, req), 55);
    /* below the first point: its score */
    p.shape[0] = (struct sched_shape_point){30, 10};
    req[0] = 0;
    req[1] = 0;
    CHECK_INT_EQ(sched_noderesources_score(&p, alloc, req), 100);
    /* nothing allocatable: 0 */
    alloc[0] = alloc[1] = 0;
    CHECK_INT_EQ(sched_noderesources_score(&p, alloc, req), 0);
}

/* GPUPlacement's formula (sched_noderesources_gpu) on a node's GPUs of both kinds
 * (sched_noderesources_gpu_node): the same fill, the same score */
static void gpu_placement_dra(void)
{
    const struct sched_profile *p = &sched_profile_gpu;
    int64_t a, r;

    /* a device-plugin node, 4 GPUs, 1 requested; a DRA node, 4 devices, 1 held: 3/4 after */
    CHECK_INT_EQ(sched_noderesources_gpu(p, 4, 1, 2), 75);
    a = 0;
    r = 1; /* (the DRA-served pod's request of nvidia.com/gpu: its device is among the held) */
    sched_noderesources_gpu_node(4, 1, &a, &r);
    CHECK(a == 4 && r == 1);
    CHECK_INT_EQ(sched_noderesources_gpu(p, a, r, 2), 75);
    /* a pod without GPUs: 0 on either kind of GPU node, 100 on a node with neither */
    CHECK_INT_EQ(sched_noderesources_gpu(p, a, r, 0), 0);
    a = r = 0;
    sched_noderesources_gpu_node(0, 0, &a, &r);
    CHECK(a == 0 && r == 0);
    CHECK_INT_EQ(sched_noderesources_gpu(p, a, r, 0), 100);
    /* both kinds on one node: their sum (2 + 1 of 4 + 4 in use, a pod of 1: 4/8) */
    a = 4;
    r = 2;
    sched_noderesources_gpu_node(4, 1, &a, &r);
    CHECK(a == 8 && r == 3);
    CHECK_INT_EQ(sched_noderesources_gpu(p, a, r, 1), 50);
    /* a claim of every device (All): full wherever it fits */
    CHECK_INT_EQ(sched_noderesources_gpu(p, a, r, INT64_MAX), 100);
    /* saturation */
    a = INT64_MAX;
    r = INT64_MAX;
    sched_noderesources_gpu_node(INT64_MAX, INT64_MAX, &a, &r);
    CHECK(a == INT64_MAX && r == INT64_MAX);
}

static const struct test_case cases[] = {
    {"DynamicResources args: bindingTimeout per profile", dynamic_resources_args},
    {"defaults without profiles", defaults_without_profiles},
    {"profiles, weights and strategies", profiles_weights_and_strategies},
    {"refusals name file, line and field", refusals_name_line_and_field},
    {"NodeResourcesFit strategies", fit_strategies},
    {"GPUPlacement on device-plugin and DRA GPUs", gpu_placement_dra},
};
TEST_SUITE(sched_config, cases)
