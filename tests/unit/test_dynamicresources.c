/* test_dynamicresources.c - the DynamicResources plugin over a world of DRA objects
 * (src/sched/dynamicresources.c): the seed's walkthrough on DRA as the oracle runs it
 * (tests/k8s/internal/oracle/testdata/dra.yaml: the same claim names, devices and messages),
 * PreEnqueue's reasons, a victim's claims released, the generated names of the contract.
 * Each case runs twice: with a stand-in CEL that knows the two expressions used, and with the
 * CEL library (src/cel through sched/dra_cel.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/dra_cel.h"
#include "sched/dynamicresources.h"
#include "test.h"

static int t_compile(void *ctx, const char *expr, void **program, char **error)
{
    (void)ctx;
    *error = NULL;
    if (!strcmp(expr, "bad")) {
        *program = NULL;
        *error = strdup("ERROR: <input>:1:1: undeclared reference to 'bad' (in container '')");
        return -EINVAL;
    }
    *program = strdup(expr);
    return *program ? 0 : -ENOMEM;
}

static void t_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static int t_prepare(void *ctx, const char *driver, const struct kube_dra_device *d, void **view,
                     char **error)
{
    (void)ctx;
    (void)driver;
    *error = NULL;
    *view = (void *)d;
    return 0;
}

static void t_view_free(void *ctx, void *v)
{
    (void)ctx;
    (void)v;
}

/* device.driver == "gpu.nvidia.com" matches all; productName == "Tesla-M40" by attribute */
static int t_eval(void *ctx, const void *program, const void *view, char *msg, size_t size)
{
    const struct kube_dra_device *d = view;
    size_t i;

    (void)ctx;
    (void)msg;
    (void)size;
    if (strstr(program, "productName")) {
        for (i = 0; i < d->nattributes; i++)
            if (!strcmp(d->attributes[i].name, "productName"))
                return !strcmp(d->attributes[i].s, "Tesla-M40");
        snprintf(msg, size, "no such key: productName");
        return -1;
    }
    return 1;
}

static const struct sched_dra_cel stand_in = {t_compile,   t_free, t_prepare,
                                              t_view_free, t_eval, NULL};
/* the CEL of the running case */
static struct sched_dra_cel cel;

/* the objects of testdata/dra.yaml */
static struct kube_dra_attribute m40 = {"productName", KUBE_DRA_STRING, 0, false, "Tesla-M40"};
static struct kube_dra_attribute t4 = {"productName", KUBE_DRA_STRING, 0, false, "Tesla-T4"};
static struct kube_dra_device gpus[2];
static struct kube_resource_slice slice;
static struct kube_dra_selector sel_driver = {"device.driver == \"gpu.nvidia.com\"", 0};
static struct kube_dra_selector sel_m40 = {
    "device.attributes[\"gpu.nvidia.com\"].productName == \"Tesla-M40\"", 0};
static struct kube_device_class gpu_class;
static struct kube_dra_request m40_req;
static struct kube_dra_device_request m40_dreq;
static struct kube_resource_claim_template tmpl;
static struct kube_scalar one_gpu = {"nvidia.com/gpu", 1};
static struct kube_container notebook_c, claim_c;
static struct kube_pod notebook_pod, claim_pod;
static struct kube_pod_resource_claim gpu_claim = {"gpu", NULL, "m40", NULL};
static struct kube_pod_resource_claim missing_claim = {"gpu", NULL, "missing", NULL};
static struct kube_resources notebook_req, no_req;
static struct kube_node gpu_node, cpu_node;

static void objects(void)
{
    memset(gpus, 0, sizeof(gpus));
    gpus[0].name = "gpu-0";
    gpus[0].attributes = &m40;
    gpus[0].nattributes = 1;
    gpus[0].allow_multiple_allocations = -1;
    gpus[1].name = "gpu-1";
    gpus[1].attributes = &t4;
    gpus[1].nattributes = 1;
    gpus[1].allow_multiple_allocations = -1;
    memset(&slice, 0, sizeof(slice));
    slice.name = "gpu-1-gpu";
    slice.driver = "gpu.nvidia.com";
    slice.pool = "gpu-1";
    slice.generation = 1;
    slice.resource_slice_count = 1;
    slice.node_name = "gpu-1";
    slice.devices = gpus;
    slice.ndevices = 2;
    memset(&gpu_class, 0, sizeof(gpu_class));
    gpu_class.name = "gpu.nvidia.com";
    gpu_class.selectors = &sel_driver;
    gpu_class.nselectors = 1;
    gpu_class.extended_resource_name = "nvidia.com/gpu";
    memset(&m40_req, 0, sizeof(m40_req));
    m40_req.name = "gpu";
    m40_req.device_class_name = "gpu.nvidia.com";
    m40_req.selectors = &sel_m40;
    m40_req.nselectors = 1;
    m40_req.allocation_mode = "ExactCount";
    m40_req.count = 1;
    m40_req.admin_access = -1;
    m40_dreq = (struct kube_dra_device_request){"gpu", &m40_req, NULL, 0};
    memset(&tmpl, 0, sizeof(tmpl));
    tmpl.namespace_ = "default";
    tmpl.name = "m40";
    tmpl.spec.requests = &m40_dreq;
    tmpl.spec.nrequests = 1;
    memset(&notebook_c, 0, sizeof(notebook_c));
    notebook_c.name = "c";
    notebook_c.requests.scalars = &one_gpu;
    notebook_c.requests.nscalars = 1;
    memset(&notebook_pod, 0, sizeof(notebook_pod));
    notebook_pod.containers = &notebook_c;
    notebook_pod.ncontainers = 1;
    memset(&claim_c, 0, sizeof(claim_c));
    claim_c.name = "c";
    memset(&claim_pod, 0, sizeof(claim_pod));
    claim_pod.containers = &claim_c;
    claim_pod.ncontainers = 1;
    notebook_req = (struct kube_resources){0};
    notebook_req.scalars = &one_gpu;
    notebook_req.nscalars = 1;
    no_req = (struct kube_resources){0};
    memset(&gpu_node, 0, sizeof(gpu_node));
    gpu_node.name = "gpu-1";
    memset(&cpu_node, 0, sizeof(cpu_node));
    cpu_node.name = "cpu-1";
}

struct outcome {
    char node[32];
    char msg[512];
};

/* one pod through PreEnqueue, PreFilter, Filter on both nodes (gpu-1 first), Reserve on the
 * first that fits */
static void schedule(struct sched_dra *w, const struct sched_dra_pod_in *p, struct outcome *o)
{
    struct sched_dra_pod *ps = NULL;
    const struct kube_node *nodes[2] = {&gpu_node, &cpu_node};
    const char *why = sched_dra_preenqueue(w, p);
    size_t i;
    int rc;

    memset(o, 0, sizeof(*o));
    if (why) {
        snprintf(o->msg, sizeof(o->msg), "gated: %s", why);
        return;
    }
    rc = sched_dra_prefilter(w, p, &ps, o->msg, sizeof(o->msg));
    if (rc == SCHED_DRA_SKIP) {
        snprintf(o->node, sizeof(o->node), "any");
        return;
    }
    if (rc)
        return;
    for (i = 0; i < 2; i++) {
        char msg[512];

        rc = sched_dra_filter(ps, nodes[i], msg, sizeof(msg));
        if (rc == SCHED_DRA_OK) {
            snprintf(o->node, sizeof(o->node), "%s", nodes[i]->name);
            rc = sched_dra_reserve(ps, nodes[i], o->msg, sizeof(o->msg));
            CHECK_INT_EQ(rc, SCHED_DRA_OK);
            break;
        }
        snprintf(o->msg + strlen(o->msg), sizeof(o->msg) - strlen(o->msg), "%s%s: %s",
                 o->msg[0] ? "; " : "", nodes[i]->name, msg);
    }
    sched_dra_pod_free(ps);
}

static const char *devices(struct sched_dra *w, const struct sched_dra_pod_in *p, char *buf,
                           size_t size)
{
    const struct sched_dra_device_out *d;
    size_t n = 0, i, len = 0;

    buf[0] = '\0';
    CHECK_INT_EQ(sched_dra_pod_devices(w, p, &d, &n), 0);
    for (i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s/%s %s %s/%s/%s", i ? "; " : "",
                                d[i].claim_namespace, d[i].claim_name, d[i].request, d[i].driver,
                                d[i].pool, d[i].device);
    return buf;
}

static void seed_walkthrough(void)
{
    struct dra_features f = dra_features_default();
    struct sched_dra *w = sched_dra_new(&cel, &f);
    struct sched_dra_pod_in tf_claim = {"default",  "tf-claim", "uid-1", &gpu_claim, 1,
                                        &claim_pod, &no_req,    NULL,    false};
    struct sched_dra_pod_in tf_notebook = {"default",     "tf-notebook", "uid-2", NULL, 0,
                                           &notebook_pod, &notebook_req, NULL,    false};
    struct sched_dra_pod_in late = {"default",     "late",        "uid-3", NULL, 0,
                                    &notebook_pod, &notebook_req, NULL,    false};
    struct sched_dra_pod_in no_template = {"default",  "no-template", "uid-4", &missing_claim, 1,
                                           &claim_pod, &no_req,       NULL,    false};
    struct outcome o;
    char buf[512];

    objects();
    CHECK(w != NULL);
    CHECK_INT_EQ(sched_dra_add_class(w, &gpu_class), 0);
    CHECK_INT_EQ(sched_dra_add_slice(w, &slice), 0);
    CHECK_INT_EQ(sched_dra_add_template(w, &tmpl), 0);
    CHECK_INT_EQ(sched_dra_add_pod(w, &tf_claim), 0);
    CHECK_INT_EQ(sched_dra_add_pod(w, &tf_notebook), 0);
    CHECK_INT_EQ(sched_dra_add_pod(w, &late), 0);
    CHECK_INT_EQ(sched_dra_add_pod(w, &no_template), 0);
    CHECK_INT_EQ(sched_dra_commit(w, NULL), 0);

    schedule(w, &tf_claim, &o);
    CHECK_STR_EQ(o.node, "gpu-1");
    CHECK_STR_EQ(devices(w, &tf_claim, buf, sizeof(buf)),
                 "default/tf-claim-gpu-fvt5p gpu gpu.nvidia.com/gpu-1/gpu-0");
    schedule(w, &tf_notebook, &o);
    CHECK_STR_EQ(o.node, "gpu-1");
    CHECK_STR_EQ(devices(w, &tf_notebook, buf, sizeof(buf)),
                 "default/tf-notebook-extended-resources-j4g8b container-0-request-0 "
                 "gpu.nvidia.com/gpu-1/gpu-1");
    schedule(w, &late, &o);
    CHECK_STR_EQ(o.node, "");
    CHECK_STR_EQ(o.msg, "gpu-1: cannot allocate all claims; cpu-1: cannot allocate all claims");
    schedule(w, &no_template, &o);
    CHECK_STR_EQ(o.msg, "gated: pod \"default/no-template\": ResourceClaim not created yet");

    /* the claim pod goes (preempted): its template claim is deleted, the M40 free again */
    sched_dra_release_pod(w, "default", "tf-claim", "uid-1");
    schedule(w, &late, &o);
    CHECK_STR_EQ(o.node, "gpu-1");
    CHECK_STR_EQ(devices(w, &late, buf, sizeof(buf)),
                 "default/late-extended-resources-fkvd5 container-0-request-0 "
                 "gpu.nvidia.com/gpu-1/gpu-0");
    sched_dra_free(w);
}

/* a template's class that does not exist, a compile error, a runtime error */
static void prefilter_and_filter_errors(void)
{
    struct dra_features f = dra_features_default();
    struct sched_dra *w = sched_dra_new(&cel, &f);
    struct sched_dra_pod_in tf_claim = {"default",  "tf-claim", "uid-1", &gpu_claim, 1,
                                        &claim_pod, &no_req,    NULL,    false};
    struct kube_dra_attribute none = {"other", KUBE_DRA_INT, 1, false, NULL};
    struct outcome o;

    objects();
    gpus[0].attributes = &none; /* the M40 selector meets a device without productName */
    CHECK_INT_EQ(sched_dra_add_class(w, &gpu_class), 0);
    CHECK_INT_EQ(sched_dra_add_slice(w, &slice), 0);
    CHECK_INT_EQ(sched_dra_add_template(w, &tmpl), 0);
    CHECK_INT_EQ(sched_dra_add_pod(w, &tf_claim), 0);
    CHECK_INT_EQ(sched_dra_commit(w, NULL), 0);
    schedule(w, &tf_claim, &o);
    CHECK_STR_EQ(o.msg, "gpu-1: claim default/tf-claim-gpu-fvt5p: selector #0 on device "
                        "gpu.nvidia.com/gpu-1/gpu-0: CEL runtime error: no such key: "
                        "productName. consider using CEL optional chaining (.? followed by "
                        "orValue()) or guarding the check with has() for optional fields; "
                        "cpu-1: cannot allocate all claims");
    sched_dra_free(w);

    w = sched_dra_new(&cel, &f);
    objects();
    m40_req.device_class_name = "nope";
    CHECK_INT_EQ(sched_dra_add_slice(w, &slice), 0);
    CHECK_INT_EQ(sched_dra_add_template(w, &tmpl), 0);
    CHECK_INT_EQ(sched_dra_add_pod(w, &tf_claim), 0);
    CHECK_INT_EQ(sched_dra_commit(w, NULL), 0);
    schedule(w, &tf_claim, &o);
    CHECK_STR_EQ(o.msg, "request gpu: device class nope does not exist");
    sched_dra_free(w);
}

/* GPUPlacement's demand (sched_dra_pod_class_demand): a template claim's ExactCount request
 * on the class serving nvidia.com/gpu counts until the claim is allocated; All is every
 * device; admin access, another class, a resource no class serves count nothing */
static void class_demand(void)
{
    struct dra_features f = dra_features_default();
    struct sched_dra *w = sched_dra_new(&cel, &f);
    struct sched_dra_pod_in tf_claim = {"default",  "tf-claim", "uid-1", &gpu_claim, 1,
                                        &claim_pod, &no_req,    NULL,    false};
    struct kube_device_class other;
    struct outcome o;
    int64_t total, used;

    objects();
    m40_req.count = 2;
    CHECK_INT_EQ(sched_dra_add_class(w, &gpu_class), 0);
    CHECK_INT_EQ(sched_dra_add_slice(w, &slice), 0);
    CHECK_INT_EQ(sched_dra_add_template(w, &tmpl), 0);
    CHECK_INT_EQ(sched_dra_add_pod(w, &tf_claim), 0);
    CHECK_INT_EQ(sched_dra_commit(w, NULL), 0);
    CHECK_INT_EQ(sched_dra_pod_class_demand(w, &tf_claim, "nvidia.com/gpu"), 2);
    CHECK_INT_EQ(sched_dra_pod_class_demand(w, &tf_claim, "example.com/fpga"), 0);
    CHECK_INT_EQ(sched_dra_pod_class_demand(w, &tf_claim, "cpu"), 0);
    CHECK_INT_EQ(sched_dra_pod_class_demand(w, &tf_claim,
                                            "deviceclass.resource.kubernetes.io/gpu.nvidia.com"),
                 2);
    m40_req.count = 1;
    sched_dra_free(w);

    /* allocated: its devices are the node's held ones, the pod asks nothing more */
    w = sched_dra_new(&cel, &f);
    CHECK_INT_EQ(sched_dra_add_class(w, &gpu_class), 0);
    CHECK_INT_EQ(sched_dra_add_slice(w, &slice), 0);
    CHECK_INT_EQ(sched_dra_add_template(w, &tmpl), 0);
    CHECK_INT_EQ(sched_dra_add_pod(w, &tf_claim), 0);
    CHECK_INT_EQ(sched_dra_commit(w, NULL), 0);
    CHECK_INT_EQ(sched_dra_pod_class_demand(w, &tf_claim, "nvidia.com/gpu"), 1);
    /* the node's devices of the class, selected once (kept until the next commit), their
     * use counted each time */
    CHECK_INT_EQ(sched_dra_extended_totals(w, "nvidia.com/gpu", &gpu_node, &total, &used), 0);
    CHECK(total == 2 && used == 0);
    schedule(w, &tf_claim, &o);
    CHECK_STR_EQ(o.node, "gpu-1");
    CHECK_INT_EQ(sched_dra_pod_class_demand(w, &tf_claim, "nvidia.com/gpu"), 0);
    CHECK_INT_EQ(sched_dra_extended_totals(w, "nvidia.com/gpu", &gpu_node, &total, &used), 0);
    CHECK(total == 2 && used == 1);
    CHECK_INT_EQ(sched_dra_extended_totals(w, "nvidia.com/gpu", &cpu_node, &total, &used), 0);
    CHECK(total == 0 && used == 0);
    sched_dra_free(w);

    /* All; then admin access; then a class that serves no resource of that name */
    w = sched_dra_new(&cel, &f);
    objects();
    m40_req.allocation_mode = "All";
    m40_req.count = 0;
    CHECK_INT_EQ(sched_dra_add_class(w, &gpu_class), 0);
    CHECK_INT_EQ(sched_dra_add_slice(w, &slice), 0);
    CHECK_INT_EQ(sched_dra_add_template(w, &tmpl), 0);
    CHECK_INT_EQ(sched_dra_add_pod(w, &tf_claim), 0);
    CHECK_INT_EQ(sched_dra_commit(w, NULL), 0);
    CHECK(sched_dra_pod_class_demand(w, &tf_claim, "nvidia.com/gpu") == INT64_MAX);
    sched_dra_free(w);

    w = sched_dra_new(&cel, &f);
    objects();
    m40_req.admin_access = 1;
    CHECK_INT_EQ(sched_dra_add_class(w, &gpu_class), 0);
    CHECK_INT_EQ(sched_dra_add_slice(w, &slice), 0);
    CHECK_INT_EQ(sched_dra_add_template(w, &tmpl), 0);
    CHECK_INT_EQ(sched_dra_add_pod(w, &tf_claim), 0);
    CHECK_INT_EQ(sched_dra_commit(w, NULL), 0);
    CHECK_INT_EQ(sched_dra_pod_class_demand(w, &tf_claim, "nvidia.com/gpu"), 0);
    sched_dra_free(w);

    w = sched_dra_new(&cel, &f);
    objects();
    other = gpu_class;
    other.name = "any-gpu";
    other.extended_resource_name = NULL;
    m40_req.device_class_name = "any-gpu";
    CHECK_INT_EQ(sched_dra_add_class(w, &gpu_class), 0);
    CHECK_INT_EQ(sched_dra_add_class(w, &other), 0);
    CHECK_INT_EQ(sched_dra_add_slice(w, &slice), 0);
    CHECK_INT_EQ(sched_dra_add_template(w, &tmpl), 0);
    CHECK_INT_EQ(sched_dra_add_pod(w, &tf_claim), 0);
    CHECK_INT_EQ(sched_dra_commit(w, NULL), 0);
    CHECK_INT_EQ(sched_dra_pod_class_demand(w, &tf_claim, "nvidia.com/gpu"), 0);
    CHECK_INT_EQ(
        sched_dra_pod_class_demand(w, &tf_claim, "deviceclass.resource.kubernetes.io/any-gpu"), 1);
    sched_dra_free(w);
}

/* what `gpusched devices` asks the world: a device matched by a class and selectors as a
 * request's would be, the allocator's error for one that cannot be evaluated, a class's
 * compile error, the inventory with the DeviceTaintRule's taint */
static void device_matches(void)
{
    struct dra_features f = dra_features_default();
    struct sched_dra *w = sched_dra_new(&cel, &f);
    struct kube_dra_attribute none = {"other", KUBE_DRA_INT, 1, false, NULL};
    struct kube_dra_selector bad = {"bad", 0};
    struct kube_device_class bad_class;
    struct kube_device_taint_rule rule;
    const struct dra_inventory *inv;
    const struct dra_selector *want, *sel_bad;
    const struct dra_class *c;
    char msg[1024];

    objects();
    gpus[1].attributes = &none;
    memset(&bad_class, 0, sizeof(bad_class));
    bad_class.name = "broken";
    bad_class.selectors = &bad;
    bad_class.nselectors = 1;
    memset(&rule, 0, sizeof(rule));
    rule.name = "taint-gpu-0";
    rule.has_selector = true;
    rule.device = "gpu-0";
    rule.taint.key = "example.com/hot";
    rule.taint.effect = "NoSchedule";
    CHECK_INT_EQ(sched_dra_add_class(w, &gpu_class), 0);
    CHECK_INT_EQ(sched_dra_add_class(w, &bad_class), 0);
    CHECK_INT_EQ(sched_dra_add_slice(w, &slice), 0);
    CHECK_INT_EQ(sched_dra_add_taint_rule(w, &rule), 0);
    CHECK_INT_EQ(sched_dra_commit(w, NULL), 0);
    inv = sched_dra_inventory(w);
    CHECK_INT_EQ(inv->nslices, 1);
    CHECK_INT_EQ(inv->slices[0].ndevices, 2);
    CHECK_INT_EQ(inv->slices[0].devices[0].ntaints, 1);
    CHECK_STR_EQ(inv->slices[0].devices[0].taints[0].key, "example.com/hot");
    CHECK(sched_dra_class(w, "nope") == NULL);
    c = sched_dra_class(w, "gpu.nvidia.com");
    CHECK(c != NULL);
    want = sched_dra_selector(w, sel_m40.expression);
    CHECK(want != NULL && !want->compile_error);
    /* the class alone matches both; with the M40 selector the first, an error on the second */
    CHECK_INT_EQ(sched_dra_device_matches(w, c, NULL, 0, &inv->slices[0],
                                          &inv->slices[0].devices[1], msg, sizeof(msg)),
                 1);
    CHECK_INT_EQ(sched_dra_device_matches(w, c, want, 1, &inv->slices[0],
                                          &inv->slices[0].devices[0], msg, sizeof(msg)),
                 1);
    CHECK_INT_EQ(sched_dra_device_matches(w, c, want, 1, &inv->slices[0],
                                          &inv->slices[0].devices[1], msg, sizeof(msg)),
                 -1);
    CHECK_STR_EQ(msg, "selector #0 on device gpu.nvidia.com/gpu-1/gpu-1: CEL runtime error: no "
                      "such key: productName. consider using CEL optional chaining (.? followed "
                      "by orValue()) or guarding the check with has() for optional fields");
    /* a class whose selector does not compile: the allocator's words, naming the class */
    CHECK_INT_EQ(sched_dra_device_matches(w, sched_dra_class(w, "broken"), NULL, 0, &inv->slices[0],
                                          &inv->slices[0].devices[0], msg, sizeof(msg)),
                 -1);
    CHECK(!strncmp(msg, "class broken: selector #0: CEL compile error: ", 46));
    sel_bad = sched_dra_selector(w, "bad");
    CHECK(sel_bad != NULL && sel_bad->compile_error != NULL);
    sched_dra_free(w);
}

static bool taken_x(void *ctx, const char *name)
{
    return !strcmp(name, (const char *)ctx);
}

/* the names of the differential test's contract (docs/testing.md) */
static void generated_names(void)
{
    char out[64], base[64];

    sched_dra_generated_name("default", "tf-claim-gpu-", NULL, NULL, out);
    CHECK_STR_EQ(out, "tf-claim-gpu-fvt5p");
    sched_dra_generated_name("default", "tf-claim-gpu-", taken_x, "tf-claim-gpu-fvt5p", out);
    CHECK(strcmp(out, "tf-claim-gpu-fvt5p") != 0 && strlen(out) == 18);
    sched_dra_template_claim_base("pod", "claim", base);
    CHECK_STR_EQ(base, "pod-claim-");
    sched_dra_template_claim_base("a-pod-name-that-is-rather-long-indeed-0123456789",
                                  "gpu-claim-0123456789", base);
    CHECK_STR_EQ(base, "a-pod-name-that-is-rather-long-indeed-0-gpu-claim-012345");
    sched_dra_generated_name("default",
                             "x123456789x123456789x123456789x123456789x123456789x123456789x", NULL,
                             NULL, out);
    CHECK_INT_EQ(strlen(out), 63);
}

static void with_stand_in(void (*f)(void))
{
    cel = stand_in;
    f();
}

static void with_cel(void (*f)(void))
{
    CHECK_INT_EQ(sched_dra_cel_init(&cel), 0);
    f();
    sched_dra_cel_release(&cel);
}

static void seed_walkthrough_stand_in(void)
{
    with_stand_in(seed_walkthrough);
}

static void seed_walkthrough_cel(void)
{
    with_cel(seed_walkthrough);
}

static void errors_stand_in(void)
{
    with_stand_in(prefilter_and_filter_errors);
}

static void errors_cel(void)
{
    with_cel(prefilter_and_filter_errors);
}

static void class_demand_stand_in(void)
{
    with_stand_in(class_demand);
}

static void device_matches_cel(void)
{
    with_cel(device_matches);
}

static const struct test_case dynamicresources_cases[] = {
    {"the seed's walkthrough on DRA (stand-in CEL)", seed_walkthrough_stand_in},
    {"the seed's walkthrough on DRA (CEL library)", seed_walkthrough_cel},
    {"PreFilter and Filter errors (stand-in CEL)", errors_stand_in},
    {"PreFilter and Filter errors (CEL library)", errors_cel},
    {"generated names", generated_names},
    {"devices matched as a request's (gpusched devices)", device_matches_cel},
    {"a pod's devices of the class serving nvidia.com/gpu (GPUPlacement)", class_demand_stand_in},
};
TEST_SUITE(dynamicresources, dynamicresources_cases)
