/* test_strict.c - input as strict as kubectl's: unknown fields and duplicate keys warned of in
 * kubectl's and the API server's words (errors with --strict), never for what the API server
 * itself writes (a dump of a cluster, a cluster's objects), and strings holding a NUL refused. */
#include "test.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "manifest/manifest.h"

/* load reads text as the manifest "m.yaml" (strict or not) and finishes the input; returns
 * the rc, with the warnings joined by "|" in warns and the formatted error in msg */
static int load(const char *text, bool strict, char *warns, size_t nw, char *msg, size_t nm)
{
    struct manifest_input_opts o = {0};
    struct manifest_input in;
    struct err err;
    size_t i, n = 0;
    int rc;

    o.strict = strict;
    err_clear(&err);
    manifest_input_init(&in, &o);
    rc = manifest_input_load_buffer(&in, "m.yaml", text, strlen(text), &err);
    if (!rc)
        rc = manifest_input_finish(&in, &err);
    warns[0] = msg[0] = '\0';
    for (i = 0; i < in.nwarnings && n < nw; i++)
        n += (size_t)snprintf(warns + n, nw - n, "%s%s", i ? "|" : "", in.warnings[i]);
    if (rc)
        err_format(&err, msg, nm);
    manifest_input_release(&in);
    return rc;
}

#define POD "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"

static void unknown_fields_warn_like_kubectl(void)
{
    char w[2048], m[1024];

    CHECK_INT_EQ(load(POD "spec:\n  nodeSelectr: {gpu: \"true\"}\n  containers:\n  - name: c\n"
                          "    image: x\n    imagePullPolicyy: Always\n",
                      false, w, sizeof(w), m, sizeof(m)),
                 0);
    CHECK_STR_EQ(w, "m.yaml: line 6: unknown field \"spec.nodeSelectr\"|"
                    "m.yaml: line 10: unknown field \"spec.containers[0].imagePullPolicyy\"");
    /* a workload's template is read where it stands */
    CHECK_INT_EQ(load("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n"
                      "  replicas: 1\n  selector: {matchLabels: {app: d}}\n  template:\n"
                      "    metadata: {labels: {app: d}, lables: {x: y}}\n"
                      "    spec:\n      containers: [{name: c, image: x}]\n"
                      "      tolerations: [{key: k, operator: Exists, efect: NoSchedule}]\n",
                      false, w, sizeof(w), m, sizeof(m)),
                 0);
    CHECK_STR_EQ(w, "m.yaml: line 8: unknown field \"spec.template.metadata.lables\"|"
                    "m.yaml: line 11: unknown field \"spec.template.spec.tolerations[0].efect\"");
}

static void strict_makes_them_errors(void)
{
    char w[2048], m[1024];

    CHECK_INT_EQ(load(POD "spec:\n  nodeSelectr: {gpu: \"true\"}\n  containers: [{name: c}]\n",
                      true, w, sizeof(w), m, sizeof(m)),
                 -EINVAL);
    CHECK_STR_EQ(m, "m.yaml: line 6: strict decoding error: unknown field \"spec.nodeSelectr\"");
    CHECK_STR_EQ(w, "");
}

/* what `kubectl get -o yaml` writes of a pod and a node: nothing is unknown */
static void a_dump_of_a_cluster_is_known(void)
{
    char w[2048], m[1024];
    const char *dump =
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: default\n"
        "  uid: 0f6c\n  resourceVersion: \"12\"\n  creationTimestamp: \"2026-01-01T00:00:00Z\"\n"
        "  generateName: p-\n  labels: {app: p}\n  annotations: {a: b}\n"
        "  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: r, uid: u,\n"
        "    controller: true, blockOwnerDeletion: true}]\n"
        "  managedFields: [{manager: kube-controller-manager, operation: Update,\n"
        "    apiVersion: v1, time: \"2026-01-01T00:00:00Z\", fieldsType: FieldsV1,\n"
        "    fieldsV1: {\"f:metadata\": {}}}]\n"
        "spec:\n  containers:\n  - name: c\n    image: x\n    imagePullPolicy: Always\n"
        "    resources: {requests: {cpu: 100m}}\n    terminationMessagePath: /dev/log\n"
        "    terminationMessagePolicy: File\n    ports: [{containerPort: 80, protocol: TCP}]\n"
        "    livenessProbe: {httpGet: {path: /, port: 80}}\n"
        "    volumeMounts: [{name: v, mountPath: /v}]\n"
        "  dnsPolicy: ClusterFirst\n  enableServiceLinks: true\n  nodeName: n1\n"
        "  preemptionPolicy: PreemptLowerPriority\n  priority: 0\n  restartPolicy: Always\n"
        "  schedulerName: default-scheduler\n  securityContext: {}\n"
        "  serviceAccount: default\n  serviceAccountName: default\n"
        "  terminationGracePeriodSeconds: 30\n"
        "  tolerations: [{key: node.kubernetes.io/not-ready, operator: Exists,\n"
        "    effect: NoExecute, tolerationSeconds: 300}]\n"
        "  volumes: [{name: v, projected: {sources: [{serviceAccountToken: {path: t}}]}}]\n"
        "status:\n  phase: Running\n  qosClass: Burstable\n  hostIP: 10.0.0.1\n"
        "  podIP: 10.1.0.1\n  podIPs: [{ip: 10.1.0.1}]\n  startTime: \"2026-01-01T00:00:00Z\"\n"
        "  conditions: [{type: Ready, status: \"True\", lastProbeTime: null}]\n"
        "  containerStatuses: [{name: c, ready: true, restartCount: 0, image: x,\n"
        "    imageID: x@sha256:0, containerID: containerd://0, started: true,\n"
        "    state: {running: {startedAt: \"2026-01-01T00:00:00Z\"}}}]\n"
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {a: b}}\n"
        "spec: {podCIDR: 10.1.0.0/24, podCIDRs: [10.1.0.0/24], providerID: x}\n"
        "status:\n  capacity: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n"
        "  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n"
        "  addresses: [{type: InternalIP, address: 10.0.0.1}]\n"
        "  conditions: [{type: Ready, status: \"True\", reason: KubeletReady}]\n"
        "  daemonEndpoints: {kubeletEndpoint: {Port: 10250}}\n"
        "  nodeInfo: {kubeletVersion: v1.37.2}\n  images: [{names: [x], sizeBytes: 10}]\n";

    CHECK_INT_EQ(load(dump, true, w, sizeof(w), m, sizeof(m)), 0);
    CHECK_STR_EQ(m, "");
    CHECK_STR_EQ(w, "");
}

static void a_clusters_objects_are_not_checked(void)
{
    struct manifest_input in;
    struct err err;
    json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s}], s:s}}", "apiVersion", "v1",
                            "kind", "Pod", "metadata", "name", "p", "namespace", "default", "spec",
                            "containers", "name", "c", "aFieldOfANewerServer", "x");

    err_clear(&err);
    manifest_input_init(&in, NULL);
    CHECK_INT_EQ(manifest_input_load_cluster_object(&in, "cluster", obj, &err), 0);
    CHECK_INT_EQ(in.nwarnings, 0);
    manifest_input_release(&in);
    json_decref(obj);
}

static void duplicate_keys_like_the_api_server(void)
{
    char w[2048], m[1024];

    CHECK_INT_EQ(load(POD "  labels:\n    app: a\n    app: b\nspec:\n  containers: [{name: c}]\n",
                      false, w, sizeof(w), m, sizeof(m)),
                 0);
    CHECK_STR_EQ(w, "m.yaml: line 7: key \"app\" already set in map");
    /* JSON too, where the reader of plain JSON reads it */
    CHECK_INT_EQ(
        load("{\"apiVersion\": \"v1\", \"kind\": \"Pod\",\n \"metadata\": {\"name\": \"p\","
             " \"name\": \"q\"},\n \"spec\": {\"containers\": [{\"name\": \"c\"}]}}\n",
             false, w, sizeof(w), m, sizeof(m)),
        0);
    CHECK_STR_EQ(w, "m.yaml: line 2: key \"name\" already set in map");
    /* a key that overrides a merged one is no duplicate */
    CHECK_INT_EQ(load(POD "  labels: &l {app: a}\n  annotations:\n    <<: *l\n    app: b\n"
                          "spec:\n  containers: [{name: c}]\n",
                      false, w, sizeof(w), m, sizeof(m)),
                 0);
    CHECK_STR_EQ(w, "");
    CHECK_INT_EQ(load(POD "  labels:\n    app: a\n    app: b\nspec:\n  containers: [{name: c}]\n",
                      true, w, sizeof(w), m, sizeof(m)),
                 -EINVAL);
    CHECK_STR_EQ(m, "m.yaml: line 7: key \"app\" already set in map");
}

static void nul_in_a_string_is_refused(void)
{
    char w[2048], m[1024];

    /* accepted, then taken as "app" before: the API server refuses such a label */
    CHECK_INT_EQ(load(POD "  labels: {app: \"app\\u0000evil\"}\nspec:\n  containers: [{name: c}]\n",
                      false, w, sizeof(w), m, sizeof(m)),
                 -EINVAL);
    CHECK(strstr(m, "m.yaml: line 5: metadata.labels: Invalid value: \"app\\x00evil\": a valid "
                    "label must be an empty string") == m);
    CHECK_INT_EQ(load(POD "  labels: {\"app\\u0000evil\": x}\nspec:\n  containers: [{name: c}]\n",
                      false, w, sizeof(w), m, sizeof(m)),
                 -EINVAL);
    CHECK(strstr(m, "m.yaml: line 5: metadata.labels: Invalid value: \"app\\x00evil\": name part "
                    "must consist of") == m);
    CHECK_INT_EQ(load(POD "spec:\n  nodeName: \"n\\0x\"\n  containers: [{name: c}]\n", false, w,
                      sizeof(w), m, sizeof(m)),
                 -EINVAL);
    CHECK_STR_EQ(m, "m.yaml: line 6: spec.nodeName: Invalid value: \"n\\x00x\": must not contain "
                    "a NUL character");
    CHECK_INT_EQ(load(POD "spec:\n  nodeSelector: {\"a\\0b\": x}\n  containers: [{name: c}]\n",
                      false, w, sizeof(w), m, sizeof(m)),
                 -EINVAL);
    CHECK(strstr(m, "m.yaml: line 6: spec.nodeSelector: Invalid value: \"a\\x00b\"") == m);
}

static const struct test_case cases[] = {
    {"unknown fields warn like kubectl", unknown_fields_warn_like_kubectl},
    {"--strict makes them errors", strict_makes_them_errors},
    {"a dump of a cluster is known", a_dump_of_a_cluster_is_known},
    {"a cluster's objects are not checked", a_clusters_objects_are_not_checked},
    {"duplicate keys like the API server", duplicate_keys_like_the_api_server},
    {"NUL in a string is refused", nul_in_a_string_is_refused},
};

TEST_SUITE(strict, cases)
