/* test_sync.c - node-sync reconcile (labeler_sync_plan_compute), backoff and the deploy/
 * manifests that run it.
 *
 * The reconcile cases are data: tests/fixtures/sync/cases.json holds, per case, a Node as the
 * API server returns it, the labels gpulabel wants now and the exact merge patch expected (or
 * null for "nothing to write"); a new case needs no C. The
 * manifest cases load deploy/gpulabel/ YAML files with our YAML loader and check what node sync
 * relies on (RBAC verbs, NODE_NAME, priority class, service account wiring). */
#include "test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/buf.h"
#include "kube/yaml.h"
#include "labeler/backoff.h"
#include "labeler/config.h"
#include "labeler/sync.h"

#define CASES_FIXTURE "fixtures/sync/cases.json"

/* Builds a label set from "key=value" strings, in the fixture's order; caller frees l->v. */
static int desired_from_json(const json_t *arr, struct labeler_labels *l)
{
    size_t i;
    json_t *v;

    memset(l, 0, sizeof(*l));
    l->alloc = json_array_size(arr) + 1;
    l->v = calloc(l->alloc, sizeof(*l->v));
    if (!l->v)
        return -1;
    json_array_foreach(arr, i, v)
    {
        const char *kv = json_string_value(v), *eq = kv ? strchr(kv, '=') : NULL;
        struct labeler_label *lab = &l->v[l->n++];

        if (!eq)
            return -1;
        snprintf(lab->key, sizeof(lab->key), "%.*s", (int)(eq - kv), kv);
        snprintf(lab->value, sizeof(lab->value), "%s", eq + 1);
    }
    return 0;
}

static json_t *cases_load(void)
{
    json_error_t jerr;
    json_t *doc = json_load_file(test_fixture_path(CASES_FIXTURE), 0, &jerr);
    json_t *cases = json_object_get(doc, "cases");

    if (!json_is_array(cases) || !json_array_size(cases)) {
        test_fail(__FILE__, __LINE__, "%s: line %d: %s", test_fixture_path(CASES_FIXTURE),
                  jerr.line, doc ? "no \"cases\" array" : jerr.text);
        json_decref(doc);
        return NULL;
    }
    json_incref(cases);
    json_decref(doc);
    return cases;
}

/* Applies a merge patch's metadata maps to node (RFC 7386 on labels and annotations). */
static void merge_metadata(json_t *node, const json_t *patch)
{
    json_t *meta = json_object_get(node, "metadata"), *v, *val, *dst;
    const char *section, *k;

    if (!meta) {
        meta = json_object();
        json_object_set_new(node, "metadata", meta);
    }
    json_object_foreach(json_object_get(patch, "metadata"), section, v)
    {
        if (!json_is_object(v))
            continue;
        dst = json_object_get(meta, section);
        if (!dst) {
            dst = json_object();
            json_object_set_new(meta, section, dst);
        }
        json_object_foreach(v, k, val)
        {
            if (json_is_null(val))
                json_object_del(dst, k);
            else
                json_object_set(dst, k, val);
        }
    }
}

/* Every fixture case: the exact patch (or nothing), the counts, the refusals; then applying
 * the patch and planning again must yield nothing (one write reaches the steady state). */
static void sync_fixture_cases(void)
{
    json_t *cases = cases_load(), *c;
    size_t i;

    if (!cases)
        return;
    json_array_foreach(cases, i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        const json_t *want = json_object_get(c, "patch");
        const json_t *pin_v = json_object_get(c, "pin_resource_version");
        bool refused = json_is_true(json_object_get(c, "error"));
        bool pin = !json_is_false(pin_v);
        struct labeler_sync_plan plan, again;
        struct labeler_labels desired;
        struct err err;
        unsigned schemas = 0;
        char *got = NULL, *exp = NULL;
        json_t *node = json_deep_copy(json_object_get(c, "node"));
        int rc;

        err_clear(&err);
        if (!name || !node || desired_from_json(json_object_get(c, "desired"), &desired) ||
            labeler_schemas_parse(json_string_value(json_object_get(c, "schemas")), &schemas,
                                  NULL)) {
            test_fail(__FILE__, __LINE__, "case %zu (%s): malformed fixture", i, name ? name : "?");
            goto next;
        }
        rc = labeler_sync_plan_compute(node, &desired, schemas, pin, &plan, &err);
        if (refused) {
            if (rc != -EINVAL || !err.msg[0] || plan.patch)
                test_fail(__FILE__, __LINE__, "%s: rc %d (%s), want -EINVAL", name, rc, err.msg);
            labeler_sync_plan_release(&plan);
            goto next;
        }
        if (rc) {
            test_fail(__FILE__, __LINE__, "%s: rc %d: %s", name, rc, err.msg);
            labeler_sync_plan_release(&plan);
            goto next;
        }
        got = labeler_sync_patch_dump(&plan);
        exp = json_is_null(want) ? NULL : json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
        if (!exp != !got || (got && strcmp(got, exp)))
            test_fail(__FILE__, __LINE__, "%s: patch\n  got  %s\n  want %s", name,
                      got ? got : "(nothing)", exp ? exp : "(nothing)");
        if ((long long)plan.nset != json_integer_value(json_object_get(c, "set")) ||
            (long long)plan.nremoved != json_integer_value(json_object_get(c, "removed")))
            test_fail(__FILE__, __LINE__, "%s: set %zu removed %zu, want %lld %lld", name,
                      plan.nset, plan.nremoved, json_integer_value(json_object_get(c, "set")),
                      json_integer_value(json_object_get(c, "removed")));
        if (plan.patch && json_is_object(node)) {
            merge_metadata(node, plan.patch);
            CHECK_INT_EQ(labeler_sync_plan_compute(node, &desired, schemas, pin, &again, NULL), 0);
            if (again.patch) {
                char *s2 = labeler_sync_patch_dump(&again);

                test_fail(__FILE__, __LINE__, "%s: not converged, second patch %s", name, s2);
                free(s2);
            }
            labeler_sync_plan_release(&again);
        }
        labeler_sync_plan_release(&plan);
    next:
        free(got);
        free(exp);
        free(desired.v);
        json_decref(node);
    }
    json_decref(cases);
}

/* The fixture keeps covering what node sync promises: each of these must stay a case. */
static void sync_fixture_covers_the_promises(void)
{
    static const char *const must[] = {
        "first labelling", "steady state writes nothing",
        "count to zero",   "schema switched off",
        "foreign",         "adopted",
        "refused",         "not pinned",
    };
    json_t *cases = cases_load(), *c;
    size_t i, j;

    if (!cases)
        return;
    for (j = 0; j < sizeof(must) / sizeof(must[0]); j++) {
        bool found = false;

        json_array_foreach(cases, i, c)
        {
            const char *name = json_string_value(json_object_get(c, "name"));

            found |= name && strstr(name, must[j]) != NULL;
        }
        if (!found)
            test_fail(__FILE__, __LINE__, "no fixture case named \"...%s...\"", must[j]);
    }
    json_decref(cases);
}

static void sync_owned_join(void)
{
    json_t *arr =
        json_pack("[ss]", "aliyun.accelerator/nvidia_count=1", "aliyun.accelerator/nvidia_name=x");
    struct labeler_labels l;
    char buf[64];

    CHECK_INT_EQ(desired_from_json(arr, &l), 0);
    CHECK_STR_EQ(labeler_sync_owned_join(&l, buf, sizeof(buf)),
                 "aliyun.accelerator/nvidia_count,aliyun.accelerator/nvidia_name");
    CHECK(labeler_sync_owned_join(&l, buf, 40) == NULL);
    l.n = 0;
    CHECK_STR_EQ(labeler_sync_owned_join(&l, buf, sizeof(buf)), "");
    free(l.v);
    json_decref(arr);
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
    struct buf b = BUF_INIT(1 << 20);
    struct err err;
    char rel[128];
    json_t *docs = NULL;

    err_clear(&err);
    snprintf(rel, sizeof(rel), "../deploy/gpulabel/%s", name);
    if (buf_read_file(test_fixture_path(rel), &b)) {
        test_fail(__FILE__, __LINE__, "cannot read %s", test_fixture_path(rel));
        return NULL;
    }
    if (kube_yaml_load(b.data, b.len, name, &docs, NULL, &err))
        test_fail(__FILE__, __LINE__, "%s: line %d: %s", name, err.line, err.msg);
    buf_release(&b);
    return docs;
}

static json_t *doc_of_kind(json_t *docs, const char *api_version, const char *kind)
{
    size_t i;
    json_t *d;

    json_array_foreach(docs, i, d)
    {
        if (!strcmp(JSTR(json_object_get(d, "apiVersion")), api_version) &&
            !strcmp(JSTR(json_object_get(d, "kind")), kind))
            return d;
    }
    test_fail(__FILE__, __LINE__, "no %s %s", api_version, kind);
    return NULL;
}

static void deploy_rbac_nodes_get_patch_only(void)
{
    json_t *docs = deploy_load("rbac.yaml"), *sa, *role, *bind, *rule, *subj, *events;

    if (!docs)
        return;
    CHECK_INT_EQ(json_array_size(docs), 5);
    sa = doc_of_kind(docs, "v1", "ServiceAccount");
    role = doc_of_kind(docs, "rbac.authorization.k8s.io/v1", "ClusterRole");
    bind = doc_of_kind(docs, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding");
    events = doc_of_kind(docs, "rbac.authorization.k8s.io/v1", "Role");
    if (sa && role && bind && events) {
        /* events create for the Warning on its Node: a Role in "default", where Node events
         * live, not cluster-wide */
        CHECK_STR_EQ(JSTR(JGET(JGET(events, "metadata"), "namespace")), "default");
        CHECK_INT_EQ(json_array_size(JGET(events, "rules")), 1);
        rule = json_array_get(JGET(events, "rules"), 0);
        CHECK_STR_EQ(JSTR(json_array_get(JGET(rule, "apiGroups"), 0)), "");
        CHECK_INT_EQ(json_array_size(JGET(rule, "resources")), 1);
        CHECK_STR_EQ(JSTR(json_array_get(JGET(rule, "resources"), 0)), "events");
        CHECK_INT_EQ(json_array_size(JGET(rule, "verbs")), 1);
        CHECK_STR_EQ(JSTR(json_array_get(JGET(rule, "verbs"), 0)), "create");
        /* nodes get/patch and nothing else at the cluster scope */
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
    json_object_foreach(JGET(JGET(spec, "selector"), "matchLabels"), k, v) CHECK_STR_EQ(
        JSTR(JGET(JGET(JGET(JGET(spec, "template"), "metadata"), "labels"), k)), JSTR(v));
    terms = JGET(JGET(JGET(JGET(pod, "affinity"), "nodeAffinity"),
                      "requiredDuringSchedulingIgnoredDuringExecution"),
                 "nodeSelectorTerms");
    CHECK(json_array_size(terms) >= 2);
    json_array_foreach(JGET(pod, "tolerations"), i, tol) gpu_toleration |=
        !strcmp(JSTR(JGET(tol, "key")), "nvidia.com/gpu") &&
        !strcmp(JSTR(JGET(tol, "operator")), "Exists");
    CHECK(gpu_toleration);
    /* the labels (non-root, the token) and the device plugin (root, no token) */
    CHECK_INT_EQ(json_array_size(JGET(pod, "containers")), 2);
    CHECK(json_is_false(JGET(pod, "automountServiceAccountToken")));
    c = json_array_get(JGET(pod, "containers"), 0);
    CHECK(json_is_true(JGET(JGET(c, "securityContext"), "runAsNonRoot")));
    env = JGET(c, "env");
    json_array_foreach(env, i, e)
    {
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
            CHECK_INT_EQ(labeler_interval_parse(JSTR(JGET(e, "value")), &ms, NULL), 0);
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
    /* the device plugin: the kubelet's directory mounted where the agent looks for it */
    c = json_array_get(JGET(pod, "containers"), 1);
    CHECK_STR_EQ(JSTR(JGET(c, "name")), "device-plugin");
    {
        bool mounted = false, volume = false;
        const char *vol = NULL;

        json_array_foreach(
            JGET(c, "volumeMounts"), i,
            v) if (!strcmp(JSTR(JGET(v, "mountPath")), "/var/lib/kubelet/device-plugins"))
        {
            mounted = true;
            vol = JSTR(JGET(v, "name"));
        }
        json_array_foreach(JGET(pod, "volumes"), i, v) volume |=
            vol && !strcmp(JSTR(JGET(v, "name")), vol) &&
            !strcmp(JSTR(JGET(JGET(v, "hostPath"), "path")), "/var/lib/kubelet/device-plugins");
        CHECK(mounted);
        CHECK(volume);
    }
out:
    json_decref(docs);
    json_decref(rbac);
}

static const struct test_case cases[] = {
    {"fixture cases (tests/fixtures/sync/cases.json)", sync_fixture_cases},
    {"fixture covers the promises", sync_fixture_covers_the_promises},
    {"owned annotation join", sync_owned_join},
    {"backoff doubles to the cap", backoff_doubles_to_cap},
    {"backoff jitter spreads nodes", backoff_jitter_spreads},
    {"backoff clamps a zero base", backoff_small_base},
    {"deploy rbac grants get and patch on nodes, create on events only",
     deploy_rbac_nodes_get_patch_only},
    {"deploy daemonset wiring", deploy_daemonset_wiring},
};
TEST_SUITE(sync, cases)
