/* test_sync.c - node-sync reconcile (labeler_sync_plan_compute), backoff and the deploy/
 * manifests that run it.
 *
 * Each row is a Node as the API server would return it, the labels gpulabel wants now and the
 * exact merge patch expected (compact JSON, sorted keys) or NULL for "nothing to write". The
 * manifest cases load deploy/gpulabel/ YAML files with our YAML loader and check what node sync
 * relies on (RBAC verbs, NODE_NAME, priority class, service account wiring). */
#include "test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "kube/buf.h"
#include "kube/yaml.h"
#include "labeler/backoff.h"
#include "labeler/duration.h"
#include "labeler/sync.h"

#define ACK LABELER_SCHEMA_ACK
#define GFD LABELER_SCHEMA_GFD

#define A_COUNT "aliyun.accelerator/nvidia_count"
#define A_MEM "aliyun.accelerator/nvidia_mem"
#define A_NAME "aliyun.accelerator/nvidia_name"
#define G_COUNT "nvidia.com/gpu.count"
#define G_PRODUCT "nvidia.com/gpu.product"
#define OWNED LABELER_OWNED_ANNOTATION

/* The three ack labels of one Tesla M40, as JSON members and as a desired set. */
#define M40_LABELS "\"" A_COUNT "\":\"1\",\"" A_MEM "\":\"12209MiB\",\"" A_NAME "\":\"Tesla-M40\""
#define M40_DESIRED A_COUNT "=1\n" A_MEM "=12209MiB\n" A_NAME "=Tesla-M40\n"
#define M40_OWNED A_COUNT "," A_MEM "," A_NAME
#define FOREIGN "\"kubernetes.io/hostname\":\"gpu-1\",\"team.example.com/owner\":\"ml\""

struct sync_row {
    const char *node;    /* JSON */
    const char *desired; /* "key=value\n" lines, sorted */
    unsigned schemas;
    int pin;
    int rc;
    const char *patch; /* expected body, NULL: nothing to write */
    size_t nset, nremoved;
};

static const struct sync_row rows[] = {
    /* 0: first labelling of a bare node */
    {"{\"metadata\":{\"name\":\"gpu-1\",\"resourceVersion\":\"41\"}}", M40_DESIRED, ACK, 1, 0,
     "{\"metadata\":{\"annotations\":{\"" OWNED "\":\"" M40_OWNED "\"},\"labels\":{" M40_LABELS
     "},\"resourceVersion\":\"41\"}}",
     3, 0},
    /* 1: steady state: right labels and annotation, nothing to write */
    {"{\"metadata\":{\"resourceVersion\":\"42\",\"labels\":{" M40_LABELS
     "},\"annotations\":{\"" OWNED "\":\"" M40_OWNED "\"}}}",
     M40_DESIRED, ACK, 1, 0, NULL, 0, 0},
    /* 2: steady state among foreign labels and annotations */
    {"{\"metadata\":{\"resourceVersion\":\"42\",\"labels\":{" FOREIGN "," M40_LABELS
     "},\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"0\",\"" OWNED "\":\"" M40_OWNED
     "\"}}}",
     M40_DESIRED, ACK, 1, 0, NULL, 0, 0},
    /* 3: one value changed: only that label, annotation untouched */
    {"{\"metadata\":{\"resourceVersion\":\"7\",\"labels\":{" M40_LABELS
     "},\"annotations\":{\"" OWNED "\":\"" M40_OWNED "\"}}}",
     A_COUNT "=2\n" A_MEM "=12209MiB\n" A_NAME "=Tesla-M40\n", ACK, 1, 0,
     "{\"metadata\":{\"labels\":{\"" A_COUNT "\":\"2\"},\"resourceVersion\":\"7\"}}", 1, 0},
    /* 4: GPU count dropped to zero: owned labels and the annotation go, foreign ones stay */
    {"{\"metadata\":{\"resourceVersion\":\"8\",\"labels\":{" FOREIGN "," M40_LABELS
     "},\"annotations\":{\"" OWNED "\":\"" M40_OWNED "\"}}}",
     "", ACK, 1, 0,
     "{\"metadata\":{\"annotations\":{\"" OWNED "\":null},\"labels\":{\"" A_COUNT "\":null,\"" A_MEM
     "\":null,\"" A_NAME "\":null},\"resourceVersion\":\"8\"}}",
     0, 3},
    /* 5: schema gfd switched off: its keys go, ack stays */
    {"{\"metadata\":{\"resourceVersion\":\"9\",\"labels\":{" M40_LABELS ",\"" G_COUNT "\":\"1\",\"" G_PRODUCT
     "\":\"Tesla-M40\"},\"annotations\":{\"" OWNED "\":\"" M40_OWNED "," G_COUNT "," G_PRODUCT "\"}}}",
     M40_DESIRED, ACK, 1, 0,
     "{\"metadata\":{\"annotations\":{\"" OWNED "\":\"" M40_OWNED "\"},\"labels\":{\"" G_COUNT
     "\":null,\"" G_PRODUCT "\":null},\"resourceVersion\":\"9\"}}",
     0, 2},
    /* 6: schema gfd switched on */
    {"{\"metadata\":{\"resourceVersion\":\"10\",\"labels\":{" M40_LABELS
     "},\"annotations\":{\"" OWNED "\":\"" M40_OWNED "\"}}}",
     M40_DESIRED G_COUNT "=1\n" G_PRODUCT "=Tesla-M40\n", ACK | GFD, 1, 0,
     "{\"metadata\":{\"annotations\":{\"" OWNED "\":\"" M40_OWNED "," G_COUNT "," G_PRODUCT
     "\"},\"labels\":{\"" G_COUNT "\":\"1\",\"" G_PRODUCT "\":\"Tesla-M40\"},\"resourceVersion\":\"10\"}}",
     2, 0},
    /* 7: an annotation edited to list foreign keys never removes them */
    {"{\"metadata\":{\"resourceVersion\":\"11\",\"labels\":{" FOREIGN
     "},\"annotations\":{\"" OWNED "\":\"kubernetes.io/hostname,team.example.com/owner\"}}}",
     "", ACK, 1, 0,
     "{\"metadata\":{\"annotations\":{\"" OWNED "\":null},\"resourceVersion\":\"11\"}}", 0, 0},
    /* 8: labels already right but not yet recorded (adoption): annotation only */
    {"{\"metadata\":{\"resourceVersion\":\"12\",\"labels\":{" M40_LABELS "}}}", M40_DESIRED, ACK, 1, 0,
     "{\"metadata\":{\"annotations\":{\"" OWNED "\":\"" M40_OWNED "\"},\"resourceVersion\":\"12\"}}",
     0, 0},
    /* 9: ack labels someone else set are not ours to remove when no GPU is found */
    {"{\"metadata\":{\"resourceVersion\":\"13\",\"labels\":{" M40_LABELS "}}}", "", ACK, 1, 0, NULL, 0,
     0},
    /* 10: owned key already removed by someone: no null for it, annotation fixed */
    {"{\"metadata\":{\"resourceVersion\":\"14\",\"labels\":{\"" A_COUNT
     "\":\"1\"},\"annotations\":{\"" OWNED "\":\"" M40_OWNED "\"}}}",
     "", ACK, 1, 0,
     "{\"metadata\":{\"annotations\":{\"" OWNED "\":null},\"labels\":{\"" A_COUNT
     "\":null},\"resourceVersion\":\"14\"}}",
     0, 1},
    /* 11: non-canonical annotation (spaces, order, duplicates) is rewritten, labels kept */
    {"{\"metadata\":{\"resourceVersion\":\"15\",\"labels\":{" M40_LABELS "},\"annotations\":{\"" OWNED
     "\":\" " A_NAME " ,," A_COUNT "," A_MEM "," A_COUNT "\"}}}",
     M40_DESIRED, ACK, 1, 0,
     "{\"metadata\":{\"annotations\":{\"" OWNED "\":\"" M40_OWNED "\"},\"resourceVersion\":\"15\"}}",
     0, 0},
    /* 12: GPU-less node never labelled: nothing at all */
    {"{\"metadata\":{\"resourceVersion\":\"16\",\"labels\":{" FOREIGN "}}}", "", ACK, 1, 0, NULL, 0, 0},
    /* 13: no pinning asked: no resourceVersion in the body */
    {"{\"metadata\":{\"resourceVersion\":\"17\"}}", A_COUNT "=1\n", ACK, 0, 0,
     "{\"metadata\":{\"annotations\":{\"" OWNED "\":\"" A_COUNT "\"},\"labels\":{\"" A_COUNT
     "\":\"1\"}}}",
     1, 0},
    /* 14: a label of ours holding a non-string value (broken object) is overwritten */
    {"{\"metadata\":{\"labels\":{\"" A_COUNT "\":1},\"annotations\":{\"" OWNED "\":\"" A_COUNT "\"}}}",
     A_COUNT "=1\n", ACK, 1, 0, "{\"metadata\":{\"labels\":{\"" A_COUNT "\":\"1\"}}}", 1, 0},
    /* 15: empty annotation with nothing desired is removed */
    {"{\"metadata\":{\"annotations\":{\"" OWNED "\":\"\"}}}", "", ACK, 1, 0,
     "{\"metadata\":{\"annotations\":{\"" OWNED "\":null}}}", 0, 0},
    /* 16: a desired key outside the enabled schemas is refused */
    {"{\"metadata\":{}}", G_COUNT "=1\n", ACK, 1, -EINVAL, NULL, 0, 0},
    /* 17: desired not sorted is refused */
    {"{\"metadata\":{}}", A_NAME "=x\n" A_COUNT "=1\n", ACK, 1, -EINVAL, NULL, 0, 0},
    /* 18: a node that is not an object is refused */
    {"[]", "", ACK, 1, -EINVAL, NULL, 0, 0},
    /* 19: a foreign value under one of our keys is replaced and then owned */
    {"{\"metadata\":{\"labels\":{\"" A_NAME "\":\"Tesla-K80\"}}}", A_NAME "=Tesla-M40\n", ACK, 1, 0,
     "{\"metadata\":{\"annotations\":{\"" OWNED "\":\"" A_NAME "\"},\"labels\":{\"" A_NAME
     "\":\"Tesla-M40\"}}}",
     1, 0},
};

/* Builds a label set from "key=value\n" lines; the caller frees l->v. */
static void desired_parse(const char *text, struct labeler_labels *l)
{
    const char *p = text;

    memset(l, 0, sizeof(*l));
    l->alloc = 16;
    l->v = calloc(l->alloc, sizeof(*l->v));
    while (*p && l->n < l->alloc) {
        const char *eq = strchr(p, '='), *nl = strchr(p, '\n');
        struct labeler_label *lab = &l->v[l->n++];

        snprintf(lab->key, sizeof(lab->key), "%.*s", (int)(eq - p), p);
        snprintf(lab->value, sizeof(lab->value), "%.*s", (int)(nl - eq - 1), eq + 1);
        p = nl + 1;
    }
}

static void run_row(size_t i)
{
    const struct sync_row *r = &rows[i];
    struct labeler_sync_plan plan;
    struct labeler_labels desired;
    struct kube_err err;
    json_t *node;
    char *got;
    int rc;

    kube_err_clear(&err);
    node = json_loads(r->node, 0, NULL);
    CHECK(node != NULL);
    desired_parse(r->desired, &desired);
    rc = labeler_sync_plan_compute(node, &desired, r->schemas, r->pin, &plan, &err);
    if (rc != r->rc)
        test_fail(__FILE__, __LINE__, "row %zu: rc %d, want %d (%s)", i, rc, r->rc, err.msg);
    if (r->rc)
        CHECK(err.msg[0] != '\0');
    got = labeler_sync_patch_dump(&plan);
    if (!r->patch != !got || (got && strcmp(got, r->patch)))
        test_fail(__FILE__, __LINE__, "row %zu: patch\n  got  %s\n  want %s", i,
                  got ? got : "(nothing)", r->patch ? r->patch : "(nothing)");
    if (!r->rc && (plan.nset != r->nset || plan.nremoved != r->nremoved))
        test_fail(__FILE__, __LINE__, "row %zu: set %zu removed %zu, want %zu %zu", i, plan.nset,
                  plan.nremoved, r->nset, r->nremoved);
    free(got);
    labeler_sync_plan_release(&plan);
    free(desired.v);
    json_decref(node);
}

#define ROW(n)                                                                             \
    static void sync_row_##n(void) { run_row(n); }
ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6) ROW(7) ROW(8) ROW(9)
ROW(10) ROW(11) ROW(12) ROW(13) ROW(14) ROW(15) ROW(16) ROW(17) ROW(18) ROW(19)

/* Applying the plan's patch (RFC 7386 on metadata) and planning again yields nothing:
 * one write always reaches the steady state. */
static void sync_patch_converges(void)
{
    size_t i;

    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct labeler_sync_plan plan, again;
        struct labeler_labels desired;
        json_t *node = json_loads(rows[i].node, 0, NULL);
        json_t *meta, *pmeta;
        const char *section;
        json_t *v;

        if (rows[i].rc || !rows[i].patch) {
            json_decref(node);
            continue;
        }
        desired_parse(rows[i].desired, &desired);
        CHECK_INT_EQ(labeler_sync_plan_compute(node, &desired, rows[i].schemas, 1, &plan, NULL), 0);
        meta = json_object_get(node, "metadata");
        pmeta = json_object_get(plan.patch, "metadata");
        json_object_foreach(pmeta, section, v) {
            const char *k;
            json_t *val, *dst;

            if (!json_is_object(v))
                continue;
            dst = json_object_get(meta, section);
            if (!dst) {
                dst = json_object();
                json_object_set_new(meta, section, dst);
            }
            json_object_foreach(v, k, val) {
                if (json_is_null(val))
                    json_object_del(dst, k);
                else
                    json_object_set(dst, k, val);
            }
        }
        CHECK_INT_EQ(labeler_sync_plan_compute(node, &desired, rows[i].schemas, 1, &again, NULL), 0);
        if (again.patch) {
            char *s = labeler_sync_patch_dump(&again);

            test_fail(__FILE__, __LINE__, "row %zu: second plan not empty: %s", i, s);
            free(s);
        }
        labeler_sync_plan_release(&again);
        labeler_sync_plan_release(&plan);
        free(desired.v);
        json_decref(node);
    }
}

static void sync_owned_join(void)
{
    struct labeler_labels l;
    char buf[64];

    desired_parse(A_COUNT "=1\n" A_NAME "=x\n", &l);
    CHECK_STR_EQ(labeler_sync_owned_join(&l, buf, sizeof(buf)), A_COUNT "," A_NAME);
    CHECK(labeler_sync_owned_join(&l, buf, 40) == NULL);
    l.n = 0;
    CHECK_STR_EQ(labeler_sync_owned_join(&l, buf, sizeof(buf)), "");
    free(l.v);
}

static void backoff_doubles_to_cap(void)
{
    struct labeler_backoff b;
    long want[] = {1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000};
    size_t i;

    labeler_backoff_init(&b, 1000, 60000, 12345);
    for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        long d = labeler_backoff_next(&b);

        if (d > want[i] || d < want[i] - want[i] / 4)
            test_fail(__FILE__, __LINE__, "step %zu: delay %ld outside [%ld, %ld]", i, d,
                      want[i] - want[i] / 4, want[i]);
    }
    labeler_backoff_reset(&b);
    CHECK(labeler_backoff_next(&b) <= 1000);
}

static void backoff_jitter_spreads(void)
{
    struct labeler_backoff a, b;
    int differ = 0, i;

    labeler_backoff_init(&a, 1000, 60000, 1);
    labeler_backoff_init(&b, 1000, 60000, 2);
    for (i = 0; i < 6; i++)
        differ += labeler_backoff_next(&a) != labeler_backoff_next(&b);
    CHECK(differ > 0);
}

static void backoff_small_base(void)
{
    struct labeler_backoff b;

    labeler_backoff_init(&b, 0, 0, 0);
    CHECK_INT_EQ(labeler_backoff_next(&b), 1);
    CHECK_INT_EQ(labeler_backoff_next(&b), 1);
}

#define JSTR(v) (json_string_value(v) ? json_string_value(v) : "(none)")
#define JGET(o, k) json_object_get((o), (k))

/* Loads deploy/gpulabel/NAME; returns the array of documents (caller decrefs) or NULL. */
static json_t *deploy_load(const char *name)
{
    struct kube_buf b = KUBE_BUF_INIT(1 << 20);
    struct kube_err err;
    char rel[128];
    json_t *docs = NULL;

    kube_err_clear(&err);
    snprintf(rel, sizeof(rel), "../deploy/gpulabel/%s", name);
    if (kube_read_file(test_fixture_path(rel), &b)) {
        test_fail(__FILE__, __LINE__, "cannot read %s", test_fixture_path(rel));
        return NULL;
    }
    if (kube_yaml_load(b.data, b.len, name, &docs, NULL, &err))
        test_fail(__FILE__, __LINE__, "%s: line %d: %s", name, err.line, err.msg);
    kube_buf_release(&b);
    return docs;
}

static json_t *doc_of_kind(json_t *docs, const char *api_version, const char *kind)
{
    size_t i;
    json_t *d;

    json_array_foreach(docs, i, d) {
        if (!strcmp(JSTR(json_object_get(d, "apiVersion")), api_version) &&
            !strcmp(JSTR(json_object_get(d, "kind")), kind))
            return d;
    }
    test_fail(__FILE__, __LINE__, "no %s %s", api_version, kind);
    return NULL;
}

static void deploy_rbac_nodes_get_patch_only(void)
{
    json_t *docs = deploy_load("rbac.yaml"), *sa, *role, *bind, *rule, *subj;

    if (!docs)
        return;
    CHECK_INT_EQ(json_array_size(docs), 3);
    sa = doc_of_kind(docs, "v1", "ServiceAccount");
    role = doc_of_kind(docs, "rbac.authorization.k8s.io/v1", "ClusterRole");
    bind = doc_of_kind(docs, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding");
    if (sa && role && bind) {
        CHECK_INT_EQ(json_array_size(JGET(role, "rules")), 1);
        rule = json_array_get(JGET(role, "rules"), 0);
        CHECK_INT_EQ(json_array_size(JGET(rule, "apiGroups")), 1);
        CHECK_STR_EQ(JSTR(json_array_get(JGET(rule, "apiGroups"), 0)), "");
        CHECK_INT_EQ(json_array_size(JGET(rule, "resources")), 1);
        CHECK_STR_EQ(JSTR(json_array_get(JGET(rule, "resources"), 0)), "nodes");
        CHECK_INT_EQ(json_array_size(JGET(rule, "verbs")), 2);
        CHECK_STR_EQ(JSTR(json_array_get(JGET(rule, "verbs"), 0)), "get");
        CHECK_STR_EQ(JSTR(json_array_get(JGET(rule, "verbs"), 1)), "patch");
        CHECK_STR_EQ(JSTR(JGET(JGET(bind, "roleRef"), "kind")), "ClusterRole");
        CHECK_STR_EQ(JSTR(JGET(JGET(bind, "roleRef"), "name")),
                     JSTR(JGET(JGET(role, "metadata"), "name")));
        CHECK_STR_EQ(JSTR(JGET(JGET(bind, "roleRef"), "apiGroup")), "rbac.authorization.k8s.io");
        subj = json_array_get(JGET(bind, "subjects"), 0);
        CHECK_STR_EQ(JSTR(JGET(subj, "kind")), "ServiceAccount");
        CHECK_STR_EQ(JSTR(JGET(subj, "name")), JSTR(JGET(JGET(sa, "metadata"), "name")));
        CHECK_STR_EQ(JSTR(JGET(subj, "namespace")), JSTR(JGET(JGET(sa, "metadata"), "namespace")));
    }
    json_decref(docs);
}

static void deploy_daemonset_wiring(void)
{
    json_t *docs = deploy_load("daemonset.yaml"), *rbac = deploy_load("rbac.yaml");
    json_t *ds, *sa, *spec, *pod, *c, *env, *e, *tol, *terms, *v;
    bool node_name = false, interval = false, gpu_toleration = false;
    size_t i;
    const char *k;

    if (!docs || !rbac)
        goto out;
    ds = doc_of_kind(docs, "apps/v1", "DaemonSet");
    sa = doc_of_kind(rbac, "v1", "ServiceAccount");
    if (!ds || !sa)
        goto out;
    spec = JGET(ds, "spec");
    pod = JGET(JGET(spec, "template"), "spec");
    CHECK_STR_EQ(JSTR(JGET(JGET(ds, "metadata"), "namespace")),
                 JSTR(JGET(JGET(sa, "metadata"), "namespace")));
    CHECK_STR_EQ(JSTR(JGET(pod, "serviceAccountName")), JSTR(JGET(JGET(sa, "metadata"), "name")));
    CHECK_STR_EQ(JSTR(JGET(pod, "priorityClassName")), "system-node-critical");
    /* the selector must match the template's labels, or the API server rejects the DaemonSet */
    json_object_foreach(JGET(JGET(spec, "selector"), "matchLabels"), k, v)
        CHECK_STR_EQ(JSTR(JGET(JGET(JGET(JGET(spec, "template"), "metadata"), "labels"), k)), JSTR(v));
    terms = JGET(JGET(JGET(JGET(pod, "affinity"), "nodeAffinity"),
                      "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms");
    CHECK(json_array_size(terms) >= 2);
    json_array_foreach(JGET(pod, "tolerations"), i, tol)
        gpu_toleration |= !strcmp(JSTR(JGET(tol, "key")), "nvidia.com/gpu") &&
                          !strcmp(JSTR(JGET(tol, "operator")), "Exists");
    CHECK(gpu_toleration);
    CHECK_INT_EQ(json_array_size(JGET(pod, "containers")), 1);
    c = json_array_get(JGET(pod, "containers"), 0);
    env = JGET(c, "env");
    json_array_foreach(env, i, e) {
        const char *name = JSTR(JGET(e, "name"));

        if (!strcmp(name, "NODE_NAME")) {
            node_name = true;
            CHECK_STR_EQ(JSTR(JGET(JGET(JGET(e, "valueFrom"), "fieldRef"), "fieldPath")),
                         "spec.nodeName");
        }
        if (!strcmp(name, "GPULABEL_SCHEMA")) {
            unsigned bits = 0;

            CHECK_INT_EQ(labeler_schemas_parse(JSTR(JGET(e, "value")), &bits, NULL), 0);
            CHECK(bits & LABELER_SCHEMA_ACK);
        }
        if (!strcmp(name, "GPULABEL_SLEEP_INTERVAL")) {
            long ms = 0;

            interval = true;
            CHECK_INT_EQ(labeler_duration_parse(JSTR(JGET(e, "value")), &ms, NULL), 0);
            CHECK(ms >= 1000);
        }
    }
    CHECK(node_name);
    CHECK(interval);
    CHECK_STR_EQ(JSTR(JGET(JGET(JGET(c, "resources"), "requests"), "cpu")), "5m");
    CHECK_STR_EQ(JSTR(JGET(JGET(JGET(c, "resources"), "requests"), "memory")), "16Mi");
    CHECK(json_is_string(JGET(JGET(JGET(c, "resources"), "limits"), "memory")));
    CHECK(json_is_true(JGET(JGET(c, "securityContext"), "readOnlyRootFilesystem")));
    CHECK(json_is_false(JGET(JGET(c, "securityContext"), "allowPrivilegeEscalation")));
out:
    json_decref(docs);
    json_decref(rbac);
}

static const struct test_case cases[] = {
    {"first labelling sets labels and annotation", sync_row_0},
    {"steady state writes nothing", sync_row_1},
    {"steady state among foreign labels writes nothing", sync_row_2},
    {"changed value patches only that label", sync_row_3},
    {"gpu count to zero removes owned labels only", sync_row_4},
    {"schema switched off removes its keys", sync_row_5},
    {"schema switched on adds its keys", sync_row_6},
    {"edited annotation never removes foreign labels", sync_row_7},
    {"right labels without annotation are adopted", sync_row_8},
    {"unowned ack labels are not removed", sync_row_9},
    {"owned key already gone is not nulled", sync_row_10},
    {"non-canonical annotation is rewritten", sync_row_11},
    {"gpu-less unlabelled node writes nothing", sync_row_12},
    {"no resourceVersion when not pinned", sync_row_13},
    {"non-string label value is overwritten", sync_row_14},
    {"empty annotation is removed", sync_row_15},
    {"desired key outside schemas is refused", sync_row_16},
    {"unsorted desired is refused", sync_row_17},
    {"non-object node is refused", sync_row_18},
    {"foreign value under our key is replaced", sync_row_19},
    {"applying the patch converges", sync_patch_converges},
    {"owned annotation join", sync_owned_join},
    {"backoff doubles to the cap", backoff_doubles_to_cap},
    {"backoff jitter spreads nodes", backoff_jitter_spreads},
    {"backoff clamps a zero base", backoff_small_base},
    {"deploy rbac grants get and patch on nodes only", deploy_rbac_nodes_get_patch_only},
    {"deploy daemonset wiring", deploy_daemonset_wiring},
};
TEST_SUITE(sync, cases)
