/* test_strict.c - input as strict as kubectl's: unknown fields and duplicate keys warned of in
 * kubectl's and the API server's words (errors with --strict), never for what the API server
 * itself writes (a dump of a cluster, a cluster's objects), and strings holding a NUL refused. */
#include "test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/arena.h"
#include "kube/decode-int.h"
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

/* ---- Every field of every table, and every near miss of one ----
 * The check finds a key in its struct's table through an index built once (decode_check.c):
 * a tree holding every field the tables know (structs as objects of their own fields, lists
 * of structs as a list of one, the rest null) must pass without a warning, and each key of it
 * changed in its second byte (same length, first and last byte: the index's slot) must be
 * the one unknown field. */

struct warned {
    int n;
    char last[512];
};

static int count_warning(void *arg, int line, const char *msg)
{
    struct warned *w = arg;

    (void)line;
    w->n++;
    snprintf(w->last, sizeof(w->last), "%s", msg);
    return 0;
}

/* every_field builds an object of table t with each of its fields (to depth 7) */
static json_t *every_field(const struct dec_type *t, int depth)
{
    json_t *o = json_object();
    size_t i;

    for (i = 0; i < t->nfields; i++) {
        const struct dec_field *f = &t->fields[i];
        json_t *v = json_null(), *sub;

        if (f->type && depth < 7 && (sub = every_field(f->type, depth + 1))) {
            if (f->kind == DEC_OBJ) {
                v = sub;
            } else if (f->kind == DEC_ARR) {
                v = json_array();
                json_array_append_new(v, sub);
            } else if (f->kind == DEC_MAP) {
                v = json_object();
                json_object_set_new(v, "k", sub);
            } else {
                json_decref(sub);
            }
        }
        json_object_set_new(o, f->name, v);
    }
    return o;
}

union decoded {
    struct kube_pod pod;
    struct kube_node node;
    struct kube_workload workload;
    struct kube_pvc pvc;
    struct kube_pv pv;
    struct kube_service service;
    struct kube_pdb pdb;
    struct kube_csi_capacity capacity;
};

static const struct {
    const char *kind;
    const struct dec_type *t;
} roots[] = {
    {"Pod", &dec_t_pod},
    {"Node", &dec_t_node},
    {"Deployment", &dec_t_deployment},
    {"StatefulSet", &dec_t_stateful_set},
    {"Job", &dec_t_job},
    {"PersistentVolumeClaim", &dec_t_persistent_volume_claim},
    {"PersistentVolume", &dec_t_persistent_volume},
    {"Service", &dec_t_service},
    {"PodDisruptionBudget", &dec_t_pod_disruption_budget},
    {"CSIStorageCapacity", &dec_t_csi_storage_capacity},
};

/* check_tree runs the check of root r over obj and returns the warnings */
static struct warned check_tree(size_t r, const json_t *obj)
{
    struct kube_decode_opts o = {0};
    struct warned w = {0, ""};
    struct arena a = ARENA_INIT;
    union decoded *out = calloc(1, sizeof(*out));
    struct err err;
    const char *k = roots[r].kind;

    o.check = true;
    o.warn = count_warning;
    o.warn_arg = &w;
    err_clear(&err);
    /* the decode may then refuse the nulls: only the check's warnings count */
    if (!strcmp(k, "Pod"))
        kube_pod_decode(obj, &a, &o, &out->pod, &err);
    else if (!strcmp(k, "Node"))
        kube_node_decode(obj, &a, &o, &out->node, &err);
    else if (!strcmp(k, "Deployment") || !strcmp(k, "StatefulSet"))
        kube_workload_decode(obj, k, "apps/v1", &a, &o, &out->workload, &err);
    else if (!strcmp(k, "Job"))
        kube_workload_decode(obj, k, "batch/v1", &a, &o, &out->workload, &err);
    else if (!strcmp(k, "PersistentVolumeClaim"))
        kube_pvc_decode(obj, &a, &o, &out->pvc, &err);
    else if (!strcmp(k, "PersistentVolume"))
        kube_pv_decode(obj, &a, &o, &out->pv, &err);
    else if (!strcmp(k, "Service"))
        kube_service_decode(obj, &a, &o, &out->service, &err);
    else if (!strcmp(k, "PodDisruptionBudget"))
        kube_pdb_decode(obj, &a, &o, &out->pdb, &err);
    else
        kube_csi_capacity_decode(obj, &a, &o, &out->capacity, &err);
    arena_release(&a);
    free(out);
    return w;
}

/* near_misses renames each key under obj in turn (in root's tree) and checks it is the one
 * unknown field; returns how many keys were tried */
static size_t near_misses(size_t r, json_t *root, json_t *obj, const char *path)
{
    char(*keys)[128];
    const char *key;
    size_t n = 0, i, nkeys = 0;
    json_t *v;

    if (json_is_array(obj)) {
        json_array_foreach(obj, i, v)
        {
            char p[512];

            snprintf(p, sizeof(p), "%s[%zu]", path, i);
            n += near_misses(r, root, v, p);
        }
        return n;
    }
    if (!json_is_object(obj) || !(keys = calloc(json_object_size(obj) + 1, sizeof(*keys))))
        return 0;
    json_object_foreach(obj, key, v)
    {
        snprintf(keys[nkeys++], sizeof(keys[0]), "%s", key);
    }
    for (i = 0; i < nkeys; i++) {
        char miss[128], p[512], want[700];
        size_t len = strlen(keys[i]);
        struct warned w;

        key = keys[i];
        v = json_object_get(obj, key);
        snprintf(p, sizeof(p), "%s%s%s", path, path[0] ? "." : "", key);
        if (strcmp(key, "k")) { /* not the key of a map */
            memcpy(miss, key, len + 1);
            miss[len > 2 ? 1 : len - 1] = '~';
            json_incref(v);
            json_object_del(obj, key);
            json_object_set_new(obj, miss, json_incref(v));
            w = check_tree(r, root);
            snprintf(want, sizeof(want), "unknown field \"%s%s%s\"", path, path[0] ? "." : "",
                     miss);
            if (w.n != 1 || strcmp(w.last, want))
                test_fail(__FILE__, __LINE__, "%s %s: %d warnings, the last \"%s\"", roots[r].kind,
                          p, w.n, w.last);
            json_object_del(obj, miss);
            json_object_set_new(obj, key, v);
            n++;
        }
        if (json_is_object(v) || json_is_array(v))
            n += near_misses(r, root, v, p);
    }
    free(keys);
    return n;
}

static void every_field_found_every_near_miss_not(void)
{
    size_t r, keys = 0;

    for (r = 0; r < sizeof(roots) / sizeof(roots[0]); r++) {
        json_t *tree = every_field(roots[r].t, 0);
        struct warned w = check_tree(r, tree);

        if (w.n)
            test_fail(__FILE__, __LINE__, "%s: %d warnings for its own fields, the last \"%s\"",
                      roots[r].kind, w.n, w.last);
        keys += near_misses(r, tree, tree, "");
        json_decref(tree);
    }
    CHECK(keys > 1000);
}

static const struct test_case cases[] = {
    {"unknown fields warn like kubectl", unknown_fields_warn_like_kubectl},
    {"--strict makes them errors", strict_makes_them_errors},
    {"a dump of a cluster is known", a_dump_of_a_cluster_is_known},
    {"a cluster's objects are not checked", a_clusters_objects_are_not_checked},
    {"duplicate keys like the API server", duplicate_keys_like_the_api_server},
    {"NUL in a string is refused", nul_in_a_string_is_refused},
    {"every field found, every near miss not", every_field_found_every_near_miss_not},
};

TEST_SUITE(strict, cases)
