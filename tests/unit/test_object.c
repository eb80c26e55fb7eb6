/* test_object.c - object decoders (defaulting, validation messages with field paths and the
 * source line through kube_yaml_load) and the shared matching rules: tolerations, node
 * selector terms, pod requests with init containers, sidecars, overhead and the status of a
 * pod resized in place. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/buf.h"
#include "kube/decode.h"
#include "kube/labels.h"
#include "kube/object.h"
#include "kube/quantity.h"
#include "kube/rules.h"
#include "kube/yaml.h"
#include "test.h"

/* A decoded manifest: the JSON, its line table and the arena, released together. */
struct loaded {
    json_t *docs;
    struct kube_lines *lines;
    struct arena a;
    struct err err;
    char msg[2048];
};

static void loaded_free(struct loaded *l)
{
    json_decref(l->docs);
    kube_lines_free(l->lines);
    arena_release(&l->a);
}

enum kind { POD, NODE, PCLASS };

/* decode parses yaml (first document) as kind; returns the decoder's rc and leaves the
 * formatted error ("f.yaml: line N: FIELD: MSG") in l->msg. */
static int decode(struct loaded *l, enum kind k, const char *yaml, void *out)
{
    struct kube_decode_opts o = {0};
    int rc;

    memset(l, 0, sizeof(*l));
    err_clear(&l->err);
    rc = kube_yaml_load(yaml, strlen(yaml), "f.yaml", &l->docs, &l->lines, &l->err);
    if (rc) {
        test_fail(__FILE__, __LINE__, "yaml: %s", err_format(&l->err, l->msg, sizeof(l->msg)));
        return rc;
    }
    o.lines = l->lines;
    o.file = "f.yaml";
    if (k == POD)
        rc = kube_pod_decode(json_array_get(l->docs, 0), &l->a, &o, out, &l->err);
    else if (k == NODE)
        rc = kube_node_decode(json_array_get(l->docs, 0), &l->a, &o, out, &l->err);
    else
        rc = kube_priority_class_decode(json_array_get(l->docs, 0), &l->a, &o, out, &l->err);
    err_format(&l->err, l->msg, sizeof(l->msg));
    return rc;
}

/* expect_pod_error decodes a pod and checks the whole formatted error line. */
#define EXPECT_POD_ERROR(yaml, want)                                                               \
    do {                                                                                           \
        struct loaded l_;                                                                          \
        struct kube_pod p_;                                                                        \
        int rc_ = decode(&l_, POD, yaml, &p_);                                                     \
        CHECK_INT_EQ(rc_, -EINVAL);                                                                \
        CHECK_STR_EQ(l_.msg, want);                                                                \
        loaded_free(&l_);                                                                          \
    } while (0)

#define POD_HEAD "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n"
#define ONE_CONTAINER "  containers:\n  - name: c\n"

static void object_pod_defaults(void)
{
    struct loaded l;
    struct kube_pod p;
    const char *y = "apiVersion: v1\n"
                    "kind: Pod\n"
                    "metadata:\n"
                    "  name: tf-notebook\n"
                    "  labels:\n"
                    "    zeta: z\n"
                    "    app: tf\n"
                    "spec:\n"
                    "  hostNetwork: true\n"
                    "  nodeSelector:\n"
                    "    aliyun.accelerator/nvidia_name: Tesla-M40\n"
                    "  containers:\n"
                    "  - name: c\n"
                    "    ports:\n"
                    "    - containerPort: 8888\n"
                    "    resources:\n"
                    "      limits:\n"
                    "        nvidia.com/gpu: 1\n"
                    "        cpu: 0.1\n"
                    "        memory: 1Gi\n"
                    "      requests:\n"
                    "        cpu: 50m\n";

    CHECK_INT_EQ(decode(&l, POD, y, &p), 0);
    CHECK_STR_EQ(p.name, "tf-notebook");
    CHECK_STR_EQ(p.namespace_, "default");
    CHECK_STR_EQ(p.scheduler_name, "default-scheduler");
    CHECK_STR_EQ(p.node_name, "");
    CHECK_STR_EQ(p.source_file, "f.yaml");
    CHECK_INT_EQ(p.source_line, 1);
    CHECK_INT_EQ(p.labels.n, 2);
    CHECK_STR_EQ(p.labels.v[0].key, "app");
    CHECK_STR_EQ(kube_labels_get(&p.labels, "zeta"), "z");
    CHECK_STR_EQ(kube_labels_get(&p.node_selector, "aliyun.accelerator/nvidia_name"), "Tesla-M40");
    CHECK_INT_EQ(p.ncontainers, 1);
    CHECK_INT_EQ(p.containers[0].nports, 1);
    CHECK_INT_EQ(p.containers[0].ports[0].host_port, 8888);
    CHECK_STR_EQ(p.containers[0].ports[0].host_ip, "0.0.0.0");
    CHECK_INT_EQ(p.containers[0].ports[0].protocol, KUBE_PROTO_TCP);
    CHECK_INT_EQ(p.containers[0].requests.cpu_milli, 50);
    CHECK_INT_EQ(p.containers[0].requests.memory, 1 << 30); /* defaulted from the limit */
    CHECK_INT_EQ(p.containers[0].requests.set, KUBE_RES_CPU | KUBE_RES_MEMORY);
    CHECK_INT_EQ(kube_resources_scalar(&p.containers[0].requests, "nvidia.com/gpu"), 1);
    CHECK_INT_EQ(kube_resources_scalar(&p.containers[0].requests, "example.com/foo"), 0);
    CHECK(!p.has_required_affinity);
    loaded_free(&l);
}

static void object_pod_fields(void)
{
    struct loaded l;
    struct kube_pod p;
    const char *y = "metadata:\n"
                    "  name: p\n"
                    "  namespace: ml\n"
                    "  uid: u1\n"
                    "  resourceVersion: '7'\n"
                    "  deletionTimestamp: '2024-01-01T00:00:00Z'\n"
                    "  ownerReferences:\n"
                    "  - {kind: ReplicaSet, name: rs, controller: true}\n"
                    "spec:\n"
                    "  nodeName: n1\n"
                    "  schedulerName: gpusched\n"
                    "  priority: 1000\n"
                    "  priorityClassName: high\n"
                    "  preemptionPolicy: Never\n"
                    "  schedulingGates: [{name: a}, {name: b}]\n"
                    "  overhead: {cpu: 250m, memory: 120Mi}\n"
                    "  containers:\n"
                    "  - name: c\n"
                    "    ports:\n"
                    "    - {containerPort: 53, hostPort: 53, protocol: UDP, hostIP: 10.0.0.1}\n"
                    "status:\n"
                    "  phase: Running\n"
                    "  nominatedNodeName: n2\n";

    CHECK_INT_EQ(decode(&l, POD, y, &p), 0);
    CHECK_STR_EQ(p.namespace_, "ml");
    CHECK_STR_EQ(p.uid, "u1");
    CHECK_STR_EQ(p.resource_version, "7");
    CHECK(p.terminating);
    CHECK_STR_EQ(p.owner.kind, "ReplicaSet");
    CHECK_STR_EQ(p.node_name, "n1");
    CHECK_STR_EQ(p.scheduler_name, "gpusched");
    CHECK(p.has_priority);
    CHECK_INT_EQ(p.priority, 1000);
    CHECK_STR_EQ(p.priority_class_name, "high");
    CHECK(p.preempt_never);
    CHECK_INT_EQ(p.nscheduling_gates, 2);
    CHECK_INT_EQ(kube_pod_ext(&p)->overhead.cpu_milli, 250);
    CHECK_INT_EQ(kube_pod_ext(&p)->overhead.memory, 120 << 20);
    CHECK_INT_EQ(p.containers[0].ports[0].protocol, KUBE_PROTO_UDP);
    CHECK_STR_EQ(p.containers[0].ports[0].host_ip, "10.0.0.1");
    CHECK_STR_EQ(p.phase, "Running");
    CHECK_STR_EQ(p.nominated_node_name, "n2");
    loaded_free(&l);
}

static void object_type_errors(void)
{
    /* the boolean's own line is unknown (jansson shares true/false), its map's line is used */
    EXPECT_POD_ERROR(POD_HEAD
                     "  nodeSelector:\n    aliyun.accelerator/nvidia_name: true\n" ONE_CONTAINER,
                     "f.yaml: line 7: json: cannot unmarshal bool into Go struct field "
                     "PodSpec.spec.nodeSelector of type string");
    EXPECT_POD_ERROR(
        POD_HEAD ONE_CONTAINER "  nodeName: 7\n",
        "f.yaml: line 8: json: cannot unmarshal number into Go struct field PodSpec.spec.nodeName of type string");
    EXPECT_POD_ERROR(
        POD_HEAD ONE_CONTAINER "  hostNetwork: 'yes'\n",
        "f.yaml: line 8: json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool");
    EXPECT_POD_ERROR(
        POD_HEAD "  containers: {name: c}\n",
        "f.yaml: line 6: json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container");
    EXPECT_POD_ERROR(POD_HEAD "  containers:\n  - name: c\n    ports:\n    - containerPort: 1.5\n",
                     "f.yaml: line 9: json: cannot unmarshal number 1.5 into Go struct field "
                     "ContainerPort.spec.containers.ports.containerPort of type int32");
    EXPECT_POD_ERROR(POD_HEAD ONE_CONTAINER "  priority: 3000000000\n",
                     "f.yaml: line 8: json: cannot unmarshal number 3000000000 into Go struct "
                     "field PodSpec.spec.priority of type int32");
    EXPECT_POD_ERROR(
        "metadata:\n  name: p\n  labels:\n    a: 1\nspec:\n" ONE_CONTAINER,
        "f.yaml: line 4: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string");
    EXPECT_POD_ERROR("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n",
                     "f.yaml: line 1: spec: Required value");
    EXPECT_POD_ERROR(POD_HEAD "  containers: []\n",
                     "f.yaml: line 6: spec.containers: Required value");
    EXPECT_POD_ERROR(POD_HEAD "  containers:\n  - image: x\n",
                     "f.yaml: line 7: spec.containers[0].name: Required value");
}

static void object_api_json_without_lines(void)
{
    struct arena a = ARENA_INIT;
    struct err err;
    struct kube_pod p;
    char buf[512];
    json_t *obj =
        json_loads("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\","
                   "\"resources\":{\"limits\":{\"cpu\":\"1 Gi\"}}}]}}",
                   0, NULL);

    err_clear(&err);
    CHECK(obj != NULL);
    CHECK_INT_EQ(kube_pod_decode(obj, &a, NULL, &p, &err), -EINVAL);
    CHECK_STR_EQ(err_format(&err, buf, sizeof(buf)),
                 "spec.containers[0].resources.limits.cpu: quantities must match the regular "
                 "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    CHECK_INT_EQ(err.line, 0);
    json_decref(obj);
    obj = json_loads("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}",
                     0, NULL);
    CHECK_INT_EQ(kube_pod_decode(obj, &a, NULL, &p, NULL), 0);
    CHECK(p.source_file == NULL);
    CHECK_INT_EQ(p.source_line, 0);
    json_decref(obj);
    CHECK_INT_EQ(kube_pod_decode(NULL, &a, NULL, &p, NULL), -EINVAL);
    arena_release(&a);
}

static void object_disruption_and_pdb(void)
{
    struct arena a = ARENA_INIT;
    struct kube_pod p;
    struct kube_pdb b;
    struct kube_labels l = {0};
    struct kube_label lv[] = {{"app", "db"}, {"tier", "a"}};
    json_t *obj;

    /* DisruptionTarget True with PreemptionByScheduler: terminating by preemption */
    obj = json_loads("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]},"
                     "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},"
                     "{\"type\":\"DisruptionTarget\",\"status\":\"True\","
                     "\"reason\":\"PreemptionByScheduler\"}]}}",
                     0, NULL);
    CHECK_INT_EQ(kube_pod_decode(obj, &a, NULL, &p, NULL), 0);
    CHECK(p.disruption_by_preemption);
    json_decref(obj);
    /* another reason (an eviction by the taint manager) or False: not by preemption */
    obj =
        json_loads("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]},"
                   "\"status\":{\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\","
                   "\"reason\":\"DeletionByTaintManager\"}]}}",
                   0, NULL);
    CHECK_INT_EQ(kube_pod_decode(obj, &a, NULL, &p, NULL), 0);
    CHECK(!p.disruption_by_preemption);
    json_decref(obj);
    obj = json_loads(
        "{\"metadata\":{\"name\":\"db\",\"namespace\":\"team\"},"
        "\"spec\":{\"minAvailable\":1,\"selector\":{\"matchLabels\":{\"app\":\"db\"},"
        "\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"In\",\"values\":[\"a\"]}]}},"
        "\"status\":{\"disruptionsAllowed\":2,\"disruptedPods\":{\"db-0\":\"2026-01-01T00:00:00Z\"}}}",
        0, NULL);
    CHECK_INT_EQ(kube_pdb_decode(obj, &a, NULL, &b, NULL), 0);
    CHECK_STR_EQ(b.namespace_, "team");
    CHECK_STR_EQ(b.name, "db");
    CHECK_INT_EQ(b.disruptions_allowed, 2);
    CHECK_INT_EQ(b.ndisrupted_pods, 1);
    if (b.ndisrupted_pods)
        CHECK_STR_EQ(b.disrupted_pods[0], "db-0");
    CHECK(b.selector.present);
    CHECK_INT_EQ(b.selector.nreqs, 2);
    l.v = lv;
    l.n = 2;
    CHECK(kube_label_selector_matches(&b.selector, &l));
    lv[1].value = "b";
    CHECK(!kube_label_selector_matches(&b.selector, &l));
    json_decref(obj);
    /* no selector, no status: matches nothing, no disruption allowed */
    obj = json_loads("{\"metadata\":{\"name\":\"x\"},\"spec\":{}}", 0, NULL);
    CHECK_INT_EQ(kube_pdb_decode(obj, &a, NULL, &b, NULL), 0);
    CHECK_STR_EQ(b.namespace_, "default");
    CHECK(!b.selector.present);
    CHECK_INT_EQ(b.disruptions_allowed, 0);
    json_decref(obj);
    arena_release(&a);
}

#define RES(lines) POD_HEAD "  containers:\n  - name: c\n    resources:\n" lines
#define QUANTITY_RE "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

static void object_resource_rules(void)
{
    EXPECT_POD_ERROR(RES("      limits:\n        cpu: 1 Gi\n"),
                     "f.yaml: line 10: spec.containers[0].resources.limits.cpu: quantities must "
                     "match the regular expression " QUANTITY_RE);
    EXPECT_POD_ERROR(RES("      requests:\n        memory: 1K\n"),
                     "f.yaml: line 10: spec.containers[0].resources.requests.memory: unable to "
                     "parse quantity's suffix");
    EXPECT_POD_ERROR(RES("      limits:\n        cpu: [1]\n"),
                     "f.yaml: line 10: spec.containers[0].resources.limits.cpu: quantities must "
                     "match the regular expression " QUANTITY_RE);
    EXPECT_POD_ERROR(RES("      limits:\n        nvidia.com/gpu: 1\n      requests:\n        "
                         "nvidia.com/gpu: 2\n"),
                     "f.yaml: line 12: spec.containers[0].resources.requests.nvidia.com/gpu: "
                     "Invalid value: \"2\": must be equal to nvidia.com/gpu limit of 1");
    EXPECT_POD_ERROR(RES("      limits:\n        nvidia.com/gpu: 0.5\n"),
                     "f.yaml: line 10: spec.containers[0].resources.limits.nvidia.com/gpu: Invalid "
                     "value: \"0.5\": must be an integer");
    EXPECT_POD_ERROR(RES("      requests:\n        nvidia.com/gpu: 1\n"),
                     "f.yaml: line 9: spec.containers[0].resources.limits: Required value: Limit "
                     "must be set for non overcommitable resources");
    EXPECT_POD_ERROR(RES("      limits:\n        cpu: 1\n      requests:\n        cpu: 1500m\n"),
                     "f.yaml: line 12: spec.containers[0].resources.requests.cpu: Invalid value: "
                     "\"1500m\": must be less than or equal to cpu limit of 1");
    EXPECT_POD_ERROR(
        RES("      requests:\n        memory: -1Mi\n"),
        "f.yaml: line 10: spec.containers[0].resources.requests.memory: Invalid value: "
        "\"-1Mi\": must be greater than or equal to 0");
    EXPECT_POD_ERROR(RES("      requests:\n        gpu: 1\n"),
                     "f.yaml: line 10: spec.containers[0].resources.requests.gpu: Invalid value: "
                     "\"gpu\": must be a standard resource for containers");
    EXPECT_POD_ERROR(
        RES("      limits:\n        hugepages-2Mi: 4Mi\n      requests:\n        "
            "hugepages-2Mi: 2Mi\n"),
        "f.yaml: line 12: spec.containers[0].resources.requests.hugepages-2Mi: Invalid "
        "value: \"2Mi\": must be equal to hugepages-2Mi limit of 4Mi");
}

#define LV_MSG                                                                                     \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "       \
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "          \
    "'my_value',  or '12345', regex used for validation is "                                       \
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
#define QN_MSG                                                                                     \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "    \
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "         \
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

static void object_label_rules(void)
{
    EXPECT_POD_ERROR("metadata:\n  name: p\n  labels:\n    -bad: x\nspec:\n" ONE_CONTAINER,
                     "f.yaml: line 4: metadata.labels: Invalid value: \"-bad\": name part " QN_MSG);
    EXPECT_POD_ERROR(POD_HEAD "  nodeSelector:\n    gpu: Tesla M40\n" ONE_CONTAINER,
                     "f.yaml: line 7: spec.nodeSelector: Invalid value: \"Tesla M40\": " LV_MSG);
    EXPECT_POD_ERROR(
        POD_HEAD "  nodeSelector:\n    a/b/c: x\n" ONE_CONTAINER,
        "f.yaml: line 7: spec.nodeSelector: Invalid value: \"a/b/c\": a qualified name " QN_MSG
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
}

#define TOL(lines) POD_HEAD ONE_CONTAINER "  tolerations:\n" lines

static void object_toleration_rules(void)
{
    struct loaded l;
    struct kube_pod p;

    EXPECT_POD_ERROR(TOL("  - key: k\n    operator: Exists\n    value: v\n"),
                     "f.yaml: line 11: spec.tolerations[0].operator: Invalid value: \"v\": value "
                     "must be empty when `operator` is 'Exists'");
    EXPECT_POD_ERROR(TOL("  - operator: Equal\n    value: v\n"),
                     "f.yaml: line 9: spec.tolerations[0].operator: Invalid value: \"Equal\": "
                     "operator must be Exists when `key` is empty, which means \"match all values "
                     "and all keys\"");
    EXPECT_POD_ERROR(TOL("  - key: k\n    operator: Gte\n"),
                     "f.yaml: line 10: spec.tolerations[0].operator: Unsupported value: \"Gte\": "
                     "supported values: \"Equal\", \"Exists\"");
    EXPECT_POD_ERROR(TOL("  - key: k\n    effect: NoExec\n"),
                     "f.yaml: line 10: spec.tolerations[0].effect: Unsupported value: \"NoExec\": "
                     "supported values: \"NoExecute\", \"NoSchedule\", \"PreferNoSchedule\"");
    EXPECT_POD_ERROR(TOL("  - key: k\n    effect: NoSchedule\n    tolerationSeconds: 5\n"),
                     "f.yaml: line 10: spec.tolerations[0].effect: Invalid value: \"NoSchedule\": "
                     "effect must be 'NoExecute' when `tolerationSeconds` is set");
    EXPECT_POD_ERROR(TOL("  - key: k\n    value: a b\n"),
                     "f.yaml: line 10: spec.tolerations[0].value: Invalid value: \"a b\": " LV_MSG);
    CHECK_INT_EQ(decode(&l, POD,
                        TOL("  - operator: Exists\n  - key: k\n    value: v\n    effect: "
                            "NoExecute\n    tolerationSeconds: 300\n"),
                        &p),
                 0);
    CHECK_INT_EQ(p.ntolerations, 2);
    CHECK_INT_EQ(p.tolerations[0].op, KUBE_TOL_EXISTS);
    CHECK_STR_EQ(p.tolerations[0].key, "");
    CHECK_INT_EQ(p.tolerations[0].effect, KUBE_EFFECT_ANY);
    CHECK_INT_EQ(p.tolerations[1].op, KUBE_TOL_EQUAL);
    CHECK(p.tolerations[1].has_seconds);
    CHECK_INT_EQ(p.tolerations[1].seconds, 300);
    CHECK_INT_EQ(p.tolerations[1].effect, KUBE_EFFECT_NO_EXECUTE);
    loaded_free(&l);
}

#define AFF(lines)                                                                                 \
    POD_HEAD ONE_CONTAINER "  affinity:\n    nodeAffinity:\n"                                      \
                           "      requiredDuringSchedulingIgnoredDuringExecution:\n" lines
#define REQ_PATH "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"

static void object_affinity_rules(void)
{
    struct loaded l;
    struct kube_pod p;

    EXPECT_POD_ERROR(AFF("        nodeSelectorTerms: []\n"),
                     "f.yaml: line 11: " REQ_PATH
                     ".nodeSelectorTerms: Required value: must have at "
                     "least one node selector term");
    EXPECT_POD_ERROR(
        AFF("        nodeSelectorTerms:\n        - matchExpressions:\n          - {key: "
            "num, operator: Gt, values: ['1', '2']}\n"),
        "f.yaml: line 13: " REQ_PATH ".nodeSelectorTerms[0].matchExpressions[0].values: "
        "Required value: must be specified single value when "
        "`operator` is 'Lt' or 'Gt'");
    EXPECT_POD_ERROR(
        AFF("        nodeSelectorTerms:\n        - matchExpressions:\n          - {key: "
            "num, operator: In}\n"),
        "f.yaml: line 13: " REQ_PATH ".nodeSelectorTerms[0].matchExpressions[0].values: "
        "Required value: must be specified when `operator` is 'In' "
        "or 'NotIn'");
    EXPECT_POD_ERROR(
        AFF("        nodeSelectorTerms:\n        - matchExpressions:\n          - key: "
            "num\n            operator: DoesNotExist\n            values: [x]\n"),
        "f.yaml: line 15: " REQ_PATH ".nodeSelectorTerms[0].matchExpressions[0].values: "
        "Forbidden: may not be specified when `operator` is 'Exists' "
        "or 'DoesNotExist'");
    EXPECT_POD_ERROR(
        AFF("        nodeSelectorTerms:\n        - matchExpressions:\n          - key: "
            "num\n            operator: Equals\n"),
        "f.yaml: line 14: " REQ_PATH ".nodeSelectorTerms[0].matchExpressions[0].operator: "
        "Invalid value: \"Equals\": not a valid selector operator");
    EXPECT_POD_ERROR(AFF("        nodeSelectorTerms:\n        - matchFields:\n          - key: "
                         "metadata.labels\n            operator: In\n            values: [a]\n"),
                     "f.yaml: line 13: " REQ_PATH
                     ".nodeSelectorTerms[0].matchFields[0].key: Invalid "
                     "value: \"metadata.labels\": not a valid field selector key");
    EXPECT_POD_ERROR(AFF("        nodeSelectorTerms:\n        - matchFields:\n          - key: "
                         "metadata.name\n            operator: In\n            values: [a, b]\n"),
                     "f.yaml: line 15: " REQ_PATH ".nodeSelectorTerms[0].matchFields[0].values: "
                     "Required value: must be only one value when `operator` is "
                     "'In' or 'NotIn' for node field selector");
    EXPECT_POD_ERROR(AFF("        nodeSelectorTerms:\n        - matchFields:\n          - key: "
                         "metadata.name\n            operator: Exists\n"),
                     "f.yaml: line 14: " REQ_PATH ".nodeSelectorTerms[0].matchFields[0].operator: "
                     "Invalid value: \"Exists\": not a valid selector operator");
    EXPECT_POD_ERROR(POD_HEAD ONE_CONTAINER
                     "  affinity:\n    nodeAffinity:\n"
                     "      preferredDuringSchedulingIgnoredDuringExecution:\n"
                     "      - weight: 0\n        preference: {}\n",
                     "f.yaml: line 11: spec.affinity.nodeAffinity."
                     "preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: "
                     "must be in the range 1-100");

    /* a non-integer Gt value is accepted and marks the requirement invalid */
    CHECK_INT_EQ(decode(&l, POD,
                        AFF("        nodeSelectorTerms:\n"
                            "        - matchExpressions:\n"
                            "          - {key: num, operator: Gt, values: [abc]}\n"
                            "        - matchExpressions:\n"
                            "          - {key: g, operator: In, values: [b, a, b]}\n"
                            "          - {key: x, operator: DoesNotExist}\n"
                            "          matchFields:\n"
                            "          - {key: metadata.name, operator: NotIn, values: [n9]}\n"),
                        &p),
                 0);
    if (!p.has_required_affinity || l.err.code) {
        test_fail(__FILE__, __LINE__, "%s", l.msg);
        loaded_free(&l);
        return;
    }
    CHECK_INT_EQ(p.required.nterms, 2);
    CHECK(p.required.terms[0].exprs[0].invalid);
    CHECK_INT_EQ(p.required.terms[1].exprs[0].nvalues, 2);
    CHECK_STR_EQ(p.required.terms[1].exprs[0].values[0], "a");
    CHECK_STR_EQ(p.required.terms[1].exprs[0].values[1], "b");
    CHECK_INT_EQ(p.required.terms[1].exprs[1].op, KUBE_OP_DOES_NOT_EXIST);
    CHECK_INT_EQ(p.required.terms[1].nfields, 1);
    {
        struct kube_label nl[] = {{"g", "a"}, {"num", "5"}};
        struct kube_node n = {0};

        n.name = "n1";
        n.labels.v = nl;
        n.labels.n = 2;
        CHECK(!kube_node_selector_term_matches(&p.required.terms[0], &n));
        CHECK(kube_node_selector_term_matches(&p.required.terms[1], &n));
        CHECK(kube_node_selector_matches(&p.required, &n));
        n.name = "n9";
        CHECK(!kube_node_selector_matches(&p.required, &n));
    }
    loaded_free(&l);
}

static void object_ports(void)
{
    EXPECT_POD_ERROR(POD_HEAD "  containers:\n  - name: c\n    ports:\n    - {containerPort: 80, "
                              "protocol: HTTP}\n",
                     "f.yaml: line 9: spec.containers[0].ports[0].protocol: Unsupported value: "
                     "\"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"");
    EXPECT_POD_ERROR(POD_HEAD "  containers:\n  - name: c\n    ports:\n    - hostPort: 80\n",
                     "f.yaml: line 9: spec.containers[0].ports[0].containerPort: Required value");
    EXPECT_POD_ERROR(POD_HEAD
                     "  containers:\n  - name: c\n    ports:\n    - containerPort: 70000\n",
                     "f.yaml: line 9: spec.containers[0].ports[0].containerPort: Invalid value: "
                     "70000: must be between 1 and 65535, inclusive");
    EXPECT_POD_ERROR(
        POD_HEAD "  hostNetwork: true\n  containers:\n  - name: c\n    ports:\n    - "
                 "{containerPort: 80, hostPort: 81}\n",
        "f.yaml: line 10: spec.containers[0].ports[0].hostPort: Invalid value: 81: must "
        "match `containerPort` when `hostNetwork` is true");
}

static void object_node(void)
{
    struct loaded l;
    struct kube_node n;
    const char *y = "apiVersion: v1\n"
                    "kind: Node\n"
                    "metadata:\n"
                    "  name: gpu-1\n"
                    "  labels:\n"
                    "    aliyun.accelerator/nvidia_name: Tesla-M40\n"
                    "    aliyun.accelerator/nvidia_count: '1'\n"
                    "spec:\n"
                    "  unschedulable: true\n"
                    "  taints:\n"
                    "  - {key: node-role.kubernetes.io/master, effect: NoSchedule}\n"
                    "  - {key: k, value: v, effect: PreferNoSchedule}\n"
                    "status:\n"
                    "  capacity: {cpu: '4', memory: 16Gi, pods: '110', nvidia.com/gpu: '1'}\n";

    CHECK_INT_EQ(decode(&l, NODE, y, &n), 0);
    CHECK_STR_EQ(n.name, "gpu-1");
    CHECK_STR_EQ(n.labels.v[0].key, "aliyun.accelerator/nvidia_count");
    CHECK(n.unschedulable);
    CHECK_INT_EQ(n.ntaints, 2);
    CHECK_STR_EQ(n.taints[0].key, "node-role.kubernetes.io/master");
    CHECK_STR_EQ(n.taints[0].value, "");
    CHECK_INT_EQ(n.taints[0].effect, KUBE_EFFECT_NO_SCHEDULE);
    CHECK_INT_EQ(n.taints[1].effect, KUBE_EFFECT_PREFER_NO_SCHEDULE);
    CHECK_INT_EQ(n.allocatable.cpu_milli, 4000);
    CHECK_INT_EQ(n.allocatable.memory, (int64_t)16 << 30);
    CHECK_INT_EQ(n.allocatable.pods, 110);
    CHECK_INT_EQ(kube_resources_scalar(&n.allocatable, "nvidia.com/gpu"), 1);
    CHECK_INT_EQ(n.source_line, 1);
    loaded_free(&l);

    CHECK_INT_EQ(decode(&l, NODE,
                        "metadata: {name: a}\nstatus:\n  capacity: {cpu: '4'}\n"
                        "  allocatable: {cpu: 3800m}\n",
                        &n),
                 0);
    CHECK_INT_EQ(n.allocatable.cpu_milli, 3800);
    CHECK_INT_EQ(n.capacity.cpu_milli, 4000);
    loaded_free(&l);

    CHECK_INT_EQ(decode(&l, NODE, "metadata: {name: a}\nspec:\n  taints:\n  - key: k\n", &n),
                 -EINVAL);
    CHECK_STR_EQ(l.msg, "f.yaml: line 4: spec.taints[0].effect: Required value");
    loaded_free(&l);
    CHECK_INT_EQ(decode(&l, NODE, "metadata: {name: a}\nstatus:\n  allocatable:\n    cpu: x\n", &n),
                 -EINVAL);
    CHECK_STR_EQ(l.msg, "f.yaml: line 4: status.allocatable.cpu: quantities must match the regular "
                        "expression " QUANTITY_RE);
    loaded_free(&l);
}

static void object_priority_class(void)
{
    struct loaded l;
    struct kube_priority_class pc;

    CHECK_INT_EQ(decode(&l, PCLASS,
                        "kind: PriorityClass\nmetadata: {name: high}\nvalue: 1000000\n"
                        "globalDefault: true\npreemptionPolicy: Never\n",
                        &pc),
                 0);
    CHECK_STR_EQ(pc.name, "high");
    CHECK_INT_EQ(pc.value, 1000000);
    CHECK(pc.global_default);
    CHECK(pc.preempt_never);
    loaded_free(&l);
    CHECK_INT_EQ(decode(&l, PCLASS, "kind: PriorityClass\nmetadata: {name: high}\n", &pc), -EINVAL);
    CHECK_STR_EQ(l.msg, "f.yaml: line 1: value: Required value");
    loaded_free(&l);
}

static void object_tolerates(void)
{
    struct kube_taint master = {"node-role.kubernetes.io/master", "", KUBE_EFFECT_NO_SCHEDULE};
    struct kube_taint gpu = {"nvidia.com/gpu", "present", KUBE_EFFECT_NO_EXECUTE};
    struct kube_toleration all = {"", KUBE_TOL_EXISTS, "", KUBE_EFFECT_ANY, false, 0};
    struct kube_toleration key_exists = {"nvidia.com/gpu", KUBE_TOL_EXISTS, "",
                                         KUBE_EFFECT_ANY,  false,           0};
    struct kube_toleration eq = {"nvidia.com/gpu",       KUBE_TOL_EQUAL, "present",
                                 KUBE_EFFECT_NO_EXECUTE, false,          0};
    struct kube_toleration eq_wrong = {"nvidia.com/gpu", KUBE_TOL_EQUAL, "absent",
                                       KUBE_EFFECT_ANY,  false,          0};
    struct kube_toleration wrong_effect = {"nvidia.com/gpu",        KUBE_TOL_EXISTS, "",
                                           KUBE_EFFECT_NO_SCHEDULE, false,           0};
    struct kube_toleration master_eq = {"node-role.kubernetes.io/master", KUBE_TOL_EQUAL, "",
                                        KUBE_EFFECT_NO_SCHEDULE,          false,          0};

    CHECK(kube_toleration_tolerates(&all, &master));
    CHECK(kube_toleration_tolerates(&all, &gpu));
    CHECK(kube_toleration_tolerates(&key_exists, &gpu));
    CHECK(!kube_toleration_tolerates(&key_exists, &master));
    CHECK(kube_toleration_tolerates(&eq, &gpu));
    CHECK(!kube_toleration_tolerates(&eq_wrong, &gpu));
    CHECK(!kube_toleration_tolerates(&wrong_effect, &gpu));
    CHECK(kube_toleration_tolerates(&master_eq, &master));
}

static void object_term_matching(void)
{
    const char *one[] = {"n1"};
    struct kube_requirement fin = {"metadata.name", KUBE_OP_IN, one, 1, false};
    struct kube_node_selector_term empty = {NULL, 0, NULL, 0}, byname = {NULL, 0, &fin, 1};
    struct kube_node_selector none = {NULL, 0};
    struct kube_node n = {0};

    n.name = "n1";
    CHECK(!kube_node_selector_term_matches(&empty, &n));
    CHECK(!kube_node_selector_matches(&none, &n));
    CHECK(kube_node_selector_term_matches(&byname, &n));
    n.name = "n2";
    CHECK(!kube_node_selector_term_matches(&byname, &n));
    n.name = ""; /* nodeaffinity skips matchFields for a node without a name */
    CHECK(kube_node_selector_term_matches(&byname, &n));
}

static void object_pod_requests(void)
{
    struct loaded l;
    struct kube_pod p;
    struct kube_resources r;
    struct arena a = ARENA_INIT;
    /* containers: 100m + 200m = 300m. Init: sidecar 50m (sum 350m), then a plain init of 500m
     * needs 500 + 50 = 550m, then another sidecar 10m (sum 360m, sidecars 60m). max = 550m,
     * plus 250m overhead = 800m. GPUs: containers 1, init 2 -> 2. */
    const char *y = POD_HEAD
        "  overhead: {cpu: 250m}\n"
        "  containers:\n"
        "  - {name: a, resources: {requests: {cpu: 100m, memory: 1Gi}, limits: {nvidia.com/gpu: 1}}}\n"
        "  - {name: b, resources: {requests: {cpu: 200m, example.com/x: 3}, limits: {example.com/x: 3}}}\n"
        "  initContainers:\n"
        "  - {name: s1, restartPolicy: Always, resources: {requests: {cpu: 50m, memory: 1Gi}}}\n"
        "  - {name: i1, resources: {requests: {cpu: 500m}, limits: {nvidia.com/gpu: 2}}}\n"
        "  - {name: s2, restartPolicy: Always, resources: {requests: {cpu: 10m}}}\n";

    CHECK_INT_EQ(decode(&l, POD, y, &p), 0);
    CHECK(p.init_containers[0].restart_always);
    CHECK(!p.init_containers[1].restart_always);
    CHECK_INT_EQ(kube_pod_requests(&p, NULL, &a, &r), 0);
    CHECK_INT_EQ(r.cpu_milli, 800);
    CHECK_INT_EQ(r.memory, (int64_t)2 << 30);
    CHECK_INT_EQ(kube_resources_scalar(&r, "nvidia.com/gpu"), 2);
    CHECK_INT_EQ(kube_resources_scalar(&r, "example.com/x"), 3);
    CHECK_INT_EQ(r.nscalars, 2);
    CHECK(r.set & KUBE_RES_CPU);
    CHECK(!(r.set & KUBE_RES_EPHEMERAL));
    loaded_free(&l);
    EXPECT_POD_ERROR(POD_HEAD ONE_CONTAINER
                     "  initContainers:\n  - {name: i, restartPolicy: Never}\n",
                     "f.yaml: line 9: spec.initContainers[0].restartPolicy: Unsupported value: "
                     "\"Never\": supported values: \"Always\"");
    /* each request fits in int64 (8Ei is capped at 2^63-1), their sum does not: it saturates
     * instead of overflowing (signed overflow was undefined behaviour) */
    CHECK_INT_EQ(decode(&l, POD,
                        POD_HEAD
                        "  overhead: {memory: 8Ei, example.com/x: 9e18}\n  containers:\n"
                        "  - {name: a, resources: {requests: {memory: 8Ei}}}\n"
                        "  - {name: b, resources: {requests: {memory: 8Ei, example.com/x: 9e18}, "
                        "limits: {example.com/x: 9e18}}}\n",
                        &p),
                 0);
    CHECK_INT_EQ(kube_pod_requests(&p, NULL, &a, &r), 0);
    CHECK_INT_EQ(r.memory, INT64_MAX);
    CHECK_INT_EQ(kube_resources_scalar(&r, "example.com/x"), INT64_MAX);
    loaded_free(&l);
    arena_release(&a);
}

/* pod-level spec.resources (resourcehelper.PodRequests with the PodLevelResources gate) */
static void object_pod_level_requests(void)
{
    static const struct kube_requests_opts nz = {100, 200LL << 20, false},
                                           containers = {100, 200LL << 20, true};
    struct loaded l;
    struct kube_pod p;
    struct kube_resources r;
    struct arena a = ARENA_INIT;

    /* cpu from the pod (replaces 2 x 500m), memory from the containers, overhead on top */
    CHECK_INT_EQ(decode(&l, POD,
                        POD_HEAD "  overhead: {cpu: 100m, memory: 64Mi}\n"
                                 "  resources: {requests: {cpu: \"3\"}}\n  containers:\n"
                                 "  - {name: a, resources: {requests: {cpu: 500m, memory: 1Gi}}}\n"
                                 "  - {name: b, resources: {requests: {cpu: 500m}}}\n",
                        &p),
                 0);
    CHECK(kube_pod_level_requests_set(&p));
    CHECK_INT_EQ(kube_pod_requests(&p, NULL, &a, &r), 0);
    CHECK_INT_EQ(r.cpu_milli, 3100);
    CHECK_INT_EQ(r.memory, (int64_t)(1024 + 64) << 20);
    /* non-zero: a container names memory, so b's missing memory gets no default
     * (getNonMissingContainerRequests); the overhead still adds, once */
    CHECK_INT_EQ(kube_pod_requests(&p, &nz, &a, &r), 0);
    CHECK_INT_EQ(r.cpu_milli, 3100);
    CHECK_INT_EQ(r.memory, (int64_t)(1024 + 64) << 20);
    /* without pod-level resources (LeastAllocated on the incoming pod): 500m + 500m + 100m */
    CHECK_INT_EQ(kube_pod_requests(&p, &containers, &a, &r), 0);
    CHECK_INT_EQ(r.cpu_milli, 1100);
    loaded_free(&l);
    /* nothing names memory anywhere: the default fills it; a limit alone defaults the
     * request when no container names the resource (the API server's defaultPodRequests) */
    CHECK_INT_EQ(
        decode(&l, POD, POD_HEAD "  resources: {limits: {cpu: \"2\"}}\n" ONE_CONTAINER, &p), 0);
    CHECK_INT_EQ(kube_pod_requests(&p, &nz, &a, &r), 0);
    CHECK_INT_EQ(r.cpu_milli, 2000);
    CHECK_INT_EQ(r.memory, 200LL << 20);
    loaded_free(&l);
    arena_release(&a);
}

/* requests_of decodes yaml (a pod) and returns its requests as kube-scheduler counts them
 * (o: NULL, or the scoring's defaults); -1 cpu when the decoding fails. */
static struct kube_resources requests_of(const char *yaml, const struct kube_requests_opts *o,
                                         struct arena *a)
{
    struct loaded l;
    struct kube_pod p;
    struct kube_resources r;

    memset(&r, 0, sizeof(r));
    r.cpu_milli = -1;
    if (decode(&l, POD, yaml, &p) == 0 && kube_pod_requests(&p, o, a, &r))
        r.cpu_milli = -1;
    loaded_free(&l);
    /* the scalars' names point into the freed pod: only the natives are read */
    r.scalars = NULL;
    r.nscalars = 0;
    return r;
}

#define BOUND_HEAD POD_HEAD "  nodeName: n1\n"

/* The status of a bound pod resized in place (resourcehelper.PodRequests with
 * UseStatusResources): per resource, the larger of the spec's sum and the sums of the
 * containers' allocated and actuated lists. */
static void object_pod_status_requests(void)
{
    static const struct kube_requests_opts nz = {100, 200LL << 20, false};
    struct arena a = ARENA_INIT;
    struct loaded l;
    struct kube_pod p;
    struct kube_resources r;

    /* actuated larger than the spec (a downsize not applied yet): it counts; memory from the
     * spec, the larger there */
    r = requests_of(BOUND_HEAD "  containers:\n"
                               "  - {name: c, resources: {requests: {cpu: \"1\", memory: 2Gi}}}\n"
                               "status:\n  containerStatuses:\n"
                               "  - {name: c, allocatedResources: {cpu: \"1\", memory: 2Gi},\n"
                               "     resources: {requests: {cpu: \"3\", memory: 1Gi}}}\n",
                    NULL, &a);
    CHECK_INT_EQ(r.cpu_milli, 3000);
    CHECK_INT_EQ(r.memory, 2LL << 30);
    /* allocatedResources larger than the spec, no actuated list: allocated counts */
    r = requests_of(BOUND_HEAD "  containers:\n"
                               "  - {name: c, resources: {requests: {cpu: 500m}}}\n"
                               "status:\n  containerStatuses:\n"
                               "  - {name: c, allocatedResources: {cpu: 1500m}}\n",
                    NULL, &a);
    CHECK_INT_EQ(r.cpu_milli, 1500);
    /* status smaller than the spec (an upsize not applied yet): the spec wins, and a status
     * that changes nothing is not kept */
    CHECK_INT_EQ(decode(&l, POD,
                        BOUND_HEAD "  containers:\n"
                                   "  - {name: c, resources: {requests: {cpu: \"2\"}}}\n"
                                   "status:\n  containerStatuses:\n"
                                   "  - {name: c, allocatedResources: {cpu: \"1\"},\n"
                                   "     resources: {requests: {cpu: \"1\"}}}\n",
                        &p),
                 0);
    CHECK(p.extra == NULL);
    CHECK_INT_EQ(kube_pod_requests(&p, NULL, &a, &r), 0);
    CHECK_INT_EQ(r.cpu_milli, 2000);
    loaded_free(&l);
    /* the larger of the sums, not of each container: a takes 2 in the status, b 2 in the
     * spec, and the sums are 3 and 3 (not 4) */
    r = requests_of(BOUND_HEAD "  containers:\n"
                               "  - {name: a, resources: {requests: {cpu: \"1\"}}}\n"
                               "  - {name: b, resources: {requests: {cpu: \"2\"}}}\n"
                               "status:\n  containerStatuses:\n"
                               "  - {name: b, resources: {requests: {cpu: \"1\"}}}\n"
                               "  - {name: a, resources: {requests: {cpu: \"2\"}}}\n",
                    NULL, &a);
    CHECK_INT_EQ(r.cpu_milli, 3000);
    /* PodResizePending Infeasible: the desired 6 CPUs are not counted, only what the status
     * reports (actuated 1, allocated 2: the larger) */
    r = requests_of(BOUND_HEAD "  containers:\n"
                               "  - {name: c, resources: {requests: {cpu: \"6\"}}}\n"
                               "status:\n"
                               "  conditions: [{type: PodResizePending, status: \"True\", "
                               "reason: Infeasible}]\n"
                               "  containerStatuses:\n"
                               "  - {name: c, allocatedResources: {cpu: \"2\"},\n"
                               "     resources: {requests: {cpu: \"1\"}}}\n",
                    NULL, &a);
    CHECK_INT_EQ(r.cpu_milli, 2000);
    /* a Deferred resize counts the spec as usual */
    r = requests_of(BOUND_HEAD "  containers:\n"
                               "  - {name: c, resources: {requests: {cpu: \"6\"}}}\n"
                               "status:\n"
                               "  conditions: [{type: PodResizePending, status: \"True\", "
                               "reason: Deferred}]\n"
                               "  containerStatuses:\n"
                               "  - {name: c, allocatedResources: {cpu: \"2\"}}\n",
                    NULL, &a);
    CHECK_INT_EQ(r.cpu_milli, 6000);
    /* a container with no status entry counts its spec; after an infeasible resize it
     * counts nothing (containerAllocatedRequests gives no list) */
    r = requests_of(BOUND_HEAD "  containers:\n"
                               "  - {name: a, resources: {requests: {cpu: \"1\"}}}\n"
                               "  - {name: b, resources: {requests: {cpu: \"1\"}}}\n"
                               "status:\n  containerStatuses:\n"
                               "  - {name: a, resources: {requests: {cpu: \"2\"}}}\n",
                    NULL, &a);
    CHECK_INT_EQ(r.cpu_milli, 3000);
    r = requests_of(BOUND_HEAD "  containers:\n"
                               "  - {name: a, resources: {requests: {cpu: \"3\"}}}\n"
                               "  - {name: b, resources: {requests: {cpu: \"1\"}}}\n"
                               "status:\n"
                               "  conditions: [{type: PodResizePending, reason: Infeasible}]\n"
                               "  containerStatuses:\n"
                               "  - {name: a, allocatedResources: {cpu: \"2\"}}\n",
                    NULL, &a);
    CHECK_INT_EQ(r.cpu_milli, 2000);
    /* the condition alone: no container reports anything, so the pod counts nothing but
     * the scoring's defaults (found by the differential test) */
    {
        const char *y = BOUND_HEAD "  containers:\n"
                                   "  - {name: c, resources: {requests: {cpu: 500m, memory: "
                                   "512Mi}}}\n"
                                   "status:\n"
                                   "  conditions: [{type: PodResizePending, reason: Infeasible}]\n";
        CHECK_INT_EQ(requests_of(y, NULL, &a).cpu_milli, 0);
        CHECK_INT_EQ(requests_of(y, NULL, &a).memory, 0);
        CHECK_INT_EQ(requests_of(y, &nz, &a).cpu_milli, 100);
        CHECK_INT_EQ(requests_of(y, &nz, &a).memory, 200LL << 20);
    }
    /* a sidecar's status in initContainerStatuses: it runs with 1500m, so the containers and
     * sidecars take 1 + 1.5; the plain init container (100m + the sidecar before it) less */
    r = requests_of(BOUND_HEAD "  initContainers:\n"
                               "  - {name: proxy, restartPolicy: Always, resources: {requests: "
                               "{cpu: 100m}}}\n"
                               "  - {name: setup, resources: {requests: {cpu: 100m}}}\n"
                               "  containers:\n"
                               "  - {name: c, resources: {requests: {cpu: \"1\"}}}\n"
                               "status:\n"
                               "  initContainerStatuses:\n"
                               "  - {name: proxy, allocatedResources: {cpu: 100m},\n"
                               "     resources: {requests: {cpu: 1500m}}}\n"
                               "  containerStatuses:\n"
                               "  - {name: c, allocatedResources: {cpu: \"1\"}}\n",
                    NULL, &a);
    CHECK_INT_EQ(r.cpu_milli, 2500);
    /* the scoring's defaults apply to each list: the actuated list names no cpu, so it
     * counts 100m, more than the spec's 50m (without defaults: the spec's 50m) */
    {
        const char *y = BOUND_HEAD "  containers:\n"
                                   "  - {name: c, resources: {requests: {cpu: 50m, memory: "
                                   "1Gi}}}\n"
                                   "status:\n  containerStatuses:\n"
                                   "  - {name: c, resources: {requests: {memory: 1Gi}}}\n";
        CHECK_INT_EQ(requests_of(y, &nz, &a).cpu_milli, 100);
        CHECK_INT_EQ(requests_of(y, NULL, &a).cpu_milli, 50);
    }
    /* with both pod-level lists (InPlacePodLevelResourcesVerticalScaling) they stand for the
     * containers' status, read as they are */
    r = requests_of(BOUND_HEAD "  containers:\n"
                               "  - {name: c, resources: {requests: {cpu: \"1\"}}}\n"
                               "status:\n"
                               "  allocatedResources: {cpu: \"3\"}\n"
                               "  resources: {requests: {cpu: \"2\"}}\n"
                               "  containerStatuses:\n"
                               "  - {name: c, resources: {requests: {cpu: \"5\"}}}\n",
                    NULL, &a);
    CHECK_INT_EQ(r.cpu_milli, 3000);
    /* pod-level spec.resources: the larger of them and status.resources.requests */
    r = requests_of(BOUND_HEAD "  resources: {requests: {cpu: \"1\"}}\n"
                               "  containers:\n"
                               "  - {name: c, resources: {requests: {cpu: 500m}}}\n"
                               "status:\n  resources: {requests: {cpu: 2500m}}\n",
                    NULL, &a);
    CHECK_INT_EQ(r.cpu_milli, 2500);
    /* ... not counted after an infeasible resize: status.resources without requests leaves
     * the containers' sum (500m) */
    r = requests_of(BOUND_HEAD "  resources: {requests: {cpu: \"3\"}}\n"
                               "  containers:\n"
                               "  - {name: c, resources: {requests: {cpu: 500m}}}\n"
                               "status:\n"
                               "  conditions: [{type: PodResizePending, reason: Infeasible}]\n"
                               "  resources: {limits: {cpu: \"8\"}}\n"
                               "  containerStatuses:\n"
                               "  - {name: c, allocatedResources: {cpu: 500m}}\n",
                    NULL, &a);
    CHECK_INT_EQ(r.cpu_milli, 500);
    /* a Succeeded pod's status is not read */
    CHECK_INT_EQ(decode(&l, POD,
                        BOUND_HEAD "  containers:\n"
                                   "  - {name: c, resources: {requests: {cpu: \"1\"}}}\n"
                                   "status:\n  phase: Succeeded\n  containerStatuses:\n"
                                   "  - {name: c, allocatedResources: {cpu: \"4\"}}\n",
                        &p),
                 0);
    CHECK(p.extra == NULL);
    loaded_free(&l);
    arena_release(&a);
}

/* A pod without a node is counted on its spec; a status that would change its sums is a
 * field gpusched does not model (kube-scheduler's filter reads the spec, its scoring the
 * status). Bad quantities in the status fail with the field and line. */
static void object_pod_status_unbound_and_errors(void)
{
    struct arena a = ARENA_INIT;
    struct loaded l;
    struct kube_pod p;
    struct kube_resources r;

    CHECK_INT_EQ(decode(&l, POD,
                        POD_HEAD "  containers:\n"
                                 "  - {name: c, resources: {requests: {cpu: \"1\"}}}\n"
                                 "status:\n  containerStatuses:\n"
                                 "  - {name: c, allocatedResources: {cpu: \"1\"},\n"
                                 "     resources: {requests: {cpu: \"3\"}}}\n",
                        &p),
                 0);
    CHECK(kube_pod_ext(&p)->status == NULL);
    CHECK_INT_EQ(kube_pod_ext(&p)->nunmodelled, 1);
    if (kube_pod_ext(&p)->nunmodelled)
        CHECK_STR_EQ(kube_pod_ext(&p)->unmodelled[0].field,
                     "status.containerStatuses[0].resources.requests");
    CHECK_INT_EQ(kube_pod_requests(&p, NULL, &a, &r), 0);
    CHECK_INT_EQ(r.cpu_milli, 1000);
    loaded_free(&l);
    /* the same status as the spec: nothing to say */
    CHECK_INT_EQ(decode(&l, POD,
                        POD_HEAD "  containers:\n"
                                 "  - {name: c, resources: {requests: {cpu: \"1\"}}}\n"
                                 "status:\n  containerStatuses:\n"
                                 "  - {name: c, allocatedResources: {cpu: \"1\"}}\n",
                        &p),
                 0);
    CHECK(p.extra == NULL);
    loaded_free(&l);
    /* a bound pod keeps its status through kube_pod_extra_own (copies share it) */
    CHECK_INT_EQ(decode(&l, POD,
                        BOUND_HEAD "  containers:\n"
                                   "  - {name: c, resources: {requests: {cpu: \"1\"}}}\n"
                                   "status:\n  containerStatuses:\n"
                                   "  - {name: c, allocatedResources: {cpu: \"2\"}}\n",
                        &p),
                 0);
    CHECK(kube_pod_ext(&p)->status != NULL);
    CHECK(kube_pod_extra_own(&p, &l.a) != NULL);
    CHECK_INT_EQ(kube_pod_requests(&p, NULL, &a, &r), 0);
    CHECK_INT_EQ(r.cpu_milli, 2000);
    loaded_free(&l);
    EXPECT_POD_ERROR(BOUND_HEAD ONE_CONTAINER "status:\n  containerStatuses:\n"
                                              "  - name: c\n"
                                              "    resources: {requests: {cpu: -1}}\n",
                     "f.yaml: line 12: status.containerStatuses[0].resources.requests.cpu: "
                     "Invalid value: \"-1\": must be greater than or equal to 0");
    EXPECT_POD_ERROR(
        BOUND_HEAD ONE_CONTAINER "status:\n  initContainerStatuses: {}\n",
        "f.yaml: line 10: json: cannot unmarshal object into Go struct field PodStatus.status.initContainerStatuses of type []v1.ContainerStatus");
    EXPECT_POD_ERROR(BOUND_HEAD ONE_CONTAINER "status:\n  allocatedResources: {memory: 1Gx}\n",
                     "f.yaml: line 10: status.allocatedResources.memory: quantities must match "
                     "the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    arena_release(&a);
}

/* One file of tests/fixtures/objects: every document decoded by its kind; the first error (or
 * "ok") must equal the file's "# expect: " line. */
static void object_fixture_file(const char *dir, const char *name)
{
    char path[4096], want[2048], got[2048] = "ok", *nl;
    struct buf b = BUF_INIT(1 << 20);
    struct arena a = ARENA_INIT;
    struct kube_lines *lines = NULL;
    struct err err;
    json_t *docs = NULL;
    size_t i;

    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
        test_fail(__FILE__, __LINE__, "path too long: %s", name);
        return;
    }
    if (buf_read_file(path, &b)) {
        test_fail(__FILE__, __LINE__, "cannot read %s", path);
        return;
    }
    if (strncmp(b.data, "# expect: ", 10)) {
        test_fail(__FILE__, __LINE__, "%s: first line is not '# expect: ...'", name);
        goto out;
    }
    snprintf(want, sizeof(want), "%s", b.data + 10);
    nl = strchr(want, '\n');
    if (nl)
        *nl = '\0';
    err_clear(&err);
    if (kube_yaml_load(b.data, b.len, name, &docs, &lines, &err)) {
        err_format(&err, got, sizeof(got));
    } else {
        for (i = 0; i < json_array_size(docs); i++) {
            json_t *o = json_array_get(docs, i);
            const char *kind = json_string_value(json_object_get(o, "kind"));
            struct kube_pod p;
            struct kube_node n;
            struct kube_priority_class pc;
            int rc;

            struct kube_decode_opts dopts = {0};

            dopts.lines = lines;
            dopts.file = name;
            if (kind && !strcmp(kind, "Node"))
                rc = kube_node_decode(o, &a, &dopts, &n, &err);
            else if (kind && !strcmp(kind, "PriorityClass"))
                rc = kube_priority_class_decode(o, &a, &dopts, &pc, &err);
            else
                rc = kube_pod_decode(o, &a, &dopts, &p, &err);
            if (rc) {
                err_format(&err, got, sizeof(got));
                break;
            }
        }
    }
    if (strcmp(got, want))
        test_fail(__FILE__, __LINE__, "%s: got \"%s\", want \"%s\"", name, got, want);
out:
    json_decref(docs);
    kube_lines_free(lines);
    arena_release(&a);
    buf_release(&b);
}

/* The arena holds only what the decoded object keeps: the per-entry scratch of resource
 * lists (quantity text, JSON pointers) is not part of it. A pod with 4 requests, 4 limits and
 * an overhead once used >1 KiB of scratch from the arena; what it keeps is ~300 bytes. */
static void object_arena_holds_only_the_object(void)
{
    struct loaded l;
    struct kube_pod p;
    struct kube_node n;

    CHECK_INT_EQ(
        decode(&l, POD,
               "kind: Pod\nmetadata: {name: p}\nspec:\n  overhead: {cpu: 10m, memory: 1Mi}\n"
               "  containers:\n  - name: c\n    resources:\n"
               "      requests: {cpu: 1, memory: 1Gi, ephemeral-storage: 1Gi, example.com/a: 1}\n"
               "      limits: {cpu: 2, memory: 2Gi, ephemeral-storage: 2Gi, example.com/a: 1}\n",
               &p),
        0);
    CHECK_INT_EQ(p.containers[0].requests.cpu_milli, 1000);
    CHECK_INT_EQ(p.containers[0].requests.memory, 1LL << 30); /* the limit is not kept */
    CHECK_INT_EQ(kube_pod_ext(&p)->overhead.cpu_milli, 10);
    CHECK(l.a.used <= 512);
    loaded_free(&l);
    CHECK_INT_EQ(decode(&l, NODE,
                        "kind: Node\nmetadata: {name: node1}\nstatus:\n"
                        "  capacity: {cpu: 4, memory: 8Gi, pods: 110, nvidia.com/gpu: 1}\n"
                        "  allocatable: {cpu: 3, memory: 7Gi, pods: 110, nvidia.com/gpu: 1}\n",
                        &n),
                 0);
    CHECK_INT_EQ(n.allocatable.cpu_milli, 3000);
    CHECK_INT_EQ(n.capacity.cpu_milli, 4000);
    CHECK(l.a.used <= 256);
    loaded_free(&l);
}

static void object_fixtures(void)
{
    char dir[4096];
    DIR *d;
    struct dirent *de;
    int n = 0;

    snprintf(dir, sizeof(dir), "%s", test_fixture_path("fixtures/objects"));
    d = opendir(dir);
    if (!d) {
        test_fail(__FILE__, __LINE__, "cannot open %s", dir);
        return;
    }
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);

        if (len < 6 || strcmp(de->d_name + len - 5, ".yaml"))
            continue;
        object_fixture_file(dir, de->d_name);
        n++;
    }
    closedir(d);
    CHECK(n >= 10);
}

/* Quantities as the API server's Quantity.UnmarshalJSON reads them: numbers as kubectl sends
 * them, strings trimmed of white space, null the zero Quantity in a ResourceList (the key is
 * there) and a nil pointer for a *Quantity field (absent). */
static void object_quantities_as_the_api_server(void)
{
    struct loaded l;
    struct kube_pod p;
    struct kube_csi_capacity c;
    const char *csc = "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\n"
                      "metadata: {name: c, namespace: kube-system}\n"
                      "storageClassName: fast\ncapacity: null\nmaximumVolumeSize: -5\n";
    const char *slice = "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
                        "metadata: {name: s}\n"
                        "spec:\n  driver: gpu.example.com\n  nodeName: n1\n"
                        "  pool: {name: p, generation: 1, resourceSliceCount: 1}\n"
                        "  devices:\n  - name: d0\n"
                        "    capacity: {memory: {value: 1e3}, cores: {value: \" 8 \"}}\n";
    struct kube_resource_slice rs;
    size_t i;
    int rc;

    rc = decode(&l, POD,
                RES("      requests:\n        cpu: \" 1.5\\t\"\n        memory: 1e9\n"
                    "        ephemeral-storage: null\n"),
                &p);
    if (rc) {
        test_fail(__FILE__, __LINE__, "%s", l.msg);
    } else {
        CHECK_INT_EQ(p.containers[0].requests.cpu_milli, 1500);
        CHECK_INT_EQ(p.containers[0].requests.memory, 1000000000);
        CHECK(p.containers[0].requests.set & KUBE_RES_EPHEMERAL);
        CHECK_INT_EQ(p.containers[0].requests.ephemeral, 0);
    }
    loaded_free(&l);
    EXPECT_POD_ERROR(RES("      limits:\n        nvidia.com/gpu: 1\n      requests:\n        "
                         "nvidia.com/gpu: null\n"),
                     "f.yaml: line 12: spec.containers[0].resources.requests.nvidia.com/gpu: "
                     "Invalid value: \"0\": must be equal to nvidia.com/gpu limit of 1");
    EXPECT_POD_ERROR(RES("      limits:\n        nvidia.com/gpu: 1e-7\n"),
                     "f.yaml: line 10: spec.containers[0].resources.limits.nvidia.com/gpu: Invalid "
                     "value: \"1e-7\": must be an integer");

    memset(&l, 0, sizeof(l));
    err_clear(&l.err);
    CHECK_INT_EQ(kube_yaml_load(csc, strlen(csc), "f.yaml", &l.docs, &l.lines, &l.err), 0);
    rc = kube_csi_capacity_decode(json_array_get(l.docs, 0), &l.a, NULL, &c, &l.err);
    CHECK_INT_EQ(rc, 0);
    CHECK(!c.has_capacity);
    CHECK(c.has_max);
    CHECK_INT_EQ(c.max_size, -5);
    loaded_free(&l);

    /* resource.k8s.io's quantities take the same text: a device's capacity */
    memset(&l, 0, sizeof(l));
    err_clear(&l.err);
    CHECK_INT_EQ(kube_yaml_load(slice, strlen(slice), "f.yaml", &l.docs, &l.lines, &l.err), 0);
    rc = kube_resource_slice_decode(json_array_get(l.docs, 0), &l.a, NULL, &rs, &l.err);
    if (rc) {
        test_fail(__FILE__, __LINE__, "%s", err_format(&l.err, l.msg, sizeof(l.msg)));
    } else if (rs.ndevices != 1 || rs.devices[0].ncapacity != 2) {
        test_fail(__FILE__, __LINE__, "%zu devices", rs.ndevices);
    } else {
        for (i = 0; i < 2; i++) {
            const struct kube_dra_capacity *cap = &rs.devices[0].capacity[i];

            if (!strcmp(cap->name, "memory")) {
                CHECK_STR_EQ(cap->value.text, "1000");
                CHECK(cap->value.nano == (kube_nano)1000 * KUBE_NANO_PER_UNIT);
            } else {
                CHECK_STR_EQ(cap->value.text, "8");
                CHECK(cap->value.nano == (kube_nano)8 * KUBE_NANO_PER_UNIT);
            }
        }
    }
    loaded_free(&l);
}

static const struct test_case object_cases[] = {
    {"pod defaults", object_pod_defaults},
    {"quantities as the API server reads them", object_quantities_as_the_api_server},
    {"pod fields", object_pod_fields},
    {"type errors name field and line", object_type_errors},
    {"API JSON without lines", object_api_json_without_lines},
    {"DisruptionTarget and PodDisruptionBudget", object_disruption_and_pdb},
    {"resource rules", object_resource_rules},
    {"label rules", object_label_rules},
    {"toleration rules", object_toleration_rules},
    {"node affinity rules", object_affinity_rules},
    {"ports", object_ports},
    {"node", object_node},
    {"priority class", object_priority_class},
    {"toleration matching", object_tolerates},
    {"node selector term matching", object_term_matching},
    {"pod requests: init, sidecars, overhead", object_pod_requests},
    {"pod requests: pod-level resources", object_pod_level_requests},
    {"pod requests: status of a pod resized in place", object_pod_status_requests},
    {"pod requests: status of a pod without a node, errors", object_pod_status_unbound_and_errors},
    {"arena holds only the object", object_arena_holds_only_the_object},
    {"fixtures/objects/*.yaml", object_fixtures},
};
TEST_SUITE(object, object_cases)
