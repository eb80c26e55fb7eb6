/* test_manifest.c - the manifest loader: kinds, lists, expansion of workloads and DaemonSets,
 * priority resolution, warnings and errors. Fixtures are in tests/fixtures/manifests/; each
 * file of errors/ names the error it must produce in its first line ("# expect: ..." for
 * manifest_input_load_file, "# expect-finish: ..." for manifest_input_finish), so a new error case
 * needs no C. */
#include "test.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/buf.h"
#include "kube/labels.h"
#include "kube/yaml.h"
#include "manifest/manifest.h"
#include "manifest/podhash-int.h"

static int load_fixture(struct manifest_input *in, const char *rel, struct err *err)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s", test_fixture_path(rel));
    return manifest_input_load_file(in, path, err);
}

static const struct kube_pod *pod(const struct manifest_input *in, const char *ns, const char *name)
{
    return manifest_input_find_pod(in, ns, name);
}

static size_t count_owned(const struct manifest_input *in, const char *kind, const char *name)
{
    size_t i, n = 0;

    for (i = 0; i < in->npods; i++)
        if (in->pods[i].owner.kind && !strcmp(in->pods[i].owner.kind, kind) &&
            !strcmp(in->pods[i].owner.name, name))
            n++;
    return n;
}

/* name_is: prefix followed by n characters of the safe alphabet, then rest. */
static int safe_chars(const char *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (!s[i] || !strchr("bcdfghjklmnpqrstvwxz2456789", s[i]))
            return 0;
    return 1;
}

static void loads_every_kind(void)
{
    struct manifest_input in;
    struct err err;
    const struct kube_pod *p;
    size_t i;

    err_clear(&err);
    manifest_input_init(&in, NULL);
    CHECK_INT_EQ(load_fixture(&in, "fixtures/manifests/kinds.yaml", &err), 0);
    CHECK_INT_EQ(manifest_input_finish(&in, &err), 0);
    CHECK_INT_EQ(in.nnodes, 1);
    CHECK_STR_EQ(in.nodes[0].name, "node-a");
    CHECK_INT_EQ(in.nodes[0].source_line, 2);
    CHECK_INT_EQ(in.nclasses, 1);
    CHECK_STR_EQ(in.classes[0].name, "high");
    CHECK_INT_EQ(in.classes[0].value, 1000);
    /* 1 bare + 3 Deployment + 2 ReplicaSet + 3 StatefulSet + 2 Job(min(2,5)) + 1 Job + 2 RC */
    CHECK_INT_EQ(in.npods, 14);
    p = pod(&in, "team", "bare");
    CHECK(p != NULL);
    if (p) {
        CHECK(p->owner.kind == NULL);
        CHECK_INT_EQ(p->source_line, 9);
        CHECK(strstr(p->source_file, "kinds.yaml") != NULL);
    }
    CHECK_INT_EQ(count_owned(&in, "Deployment", "web"), 3);
    CHECK_INT_EQ(count_owned(&in, "ReplicaSet", "rs"), 2);
    CHECK_INT_EQ(count_owned(&in, "StatefulSet", "db"), 3);
    CHECK_INT_EQ(count_owned(&in, "Job", "train"), 2);
    CHECK_INT_EQ(count_owned(&in, "Job", "once"), 1);
    CHECK_INT_EQ(count_owned(&in, "ReplicationController", "rc"), 2);
    /* input order: bare pod first, then the Deployment's pods */
    CHECK_STR_EQ(in.pods[0].name, "bare");
    CHECK_STR_EQ(in.pods[1].owner.name, "web");
    for (i = 0; i < in.npods; i++) {
        CHECK(in.pods[i].has_priority);
        CHECK_INT_EQ(in.pods[i].priority, 0);
    }
    /* a ConfigMap is skipped with a warning naming file and line; the Service is kept for
     * its selector, with those of the Deployment, ReplicaSet, StatefulSet and RC */
    CHECK_INT_EQ(in.nwarnings, 1);
    if (in.nwarnings == 1)
        CHECK(strstr(in.warnings[0], "kinds.yaml: line 127: skipping kind ConfigMap") != NULL);
    CHECK_INT_EQ(in.nselectors, 5);
    for (i = 0; i < in.nselectors; i++) {
        const struct manifest_selector *s = &in.selectors[i];
        if (!s->owner_kind) /* the fixture's Service has no selector: it selects nothing */
            CHECK(!s->sel.present);
        if (s->owner_kind && !strcmp(s->owner_kind, "Deployment")) {
            /* the ReplicaSet's selector: the Deployment's plus pod-template-hash */
            CHECK(s->sel.nreqs >= 2);
            if (s->sel.nreqs >= 2)
                CHECK_STR_EQ(s->sel.reqs[s->sel.nreqs - 1].key, "pod-template-hash");
        }
    }
    manifest_input_release(&in);
}

static void names_like_controllers(void)
{
    struct manifest_input in;
    struct err err;
    char hash[16] = "";
    size_t i, ndep = 0;

    err_clear(&err);
    manifest_input_init(&in, NULL);
    CHECK_INT_EQ(load_fixture(&in, "fixtures/manifests/kinds.yaml", &err), 0);
    CHECK_INT_EQ(manifest_input_finish(&in, &err), 0);
    for (i = 0; i < in.npods; i++) {
        const struct kube_pod *p = &in.pods[i];
        const char *kind = p->owner.kind ? p->owner.kind : "";

        if (!strcmp(kind, "Deployment")) {
            /* web-<10>-<5>, the same pod-template-hash for every replica, also as a label */
            CHECK_INT_EQ(strlen(p->name), strlen("web-") + 10 + 1 + 5);
            CHECK(!strncmp(p->name, "web-", 4) && safe_chars(p->name + 4, 10) &&
                  p->name[14] == '-' && safe_chars(p->name + 15, 5));
            if (!ndep++)
                snprintf(hash, sizeof(hash), "%.10s", p->name + 4);
            CHECK(!strncmp(p->name + 4, hash, 10));
            CHECK_STR_EQ(kube_labels_get(&p->labels, "pod-template-hash"), hash);
            CHECK_STR_EQ(kube_labels_get(&p->labels, "app"), "web");
            CHECK_STR_EQ(p->namespace_, "default");
        } else if (!strcmp(kind, "ReplicaSet") || !strcmp(kind, "ReplicationController")) {
            size_t bl = strlen(p->owner.name) + 1;

            CHECK_INT_EQ(strlen(p->name), bl + 5);
            CHECK(safe_chars(p->name + bl, 5));
        } else if (!strcmp(kind, "Job")) {
            size_t bl = strlen(p->owner.name) + 1;

            CHECK_INT_EQ(strlen(p->name), bl + 5);
            CHECK(safe_chars(p->name + bl, 5));
            CHECK_STR_EQ(kube_labels_get(&p->labels, "job-name"), p->owner.name);
            CHECK_STR_EQ(kube_labels_get(&p->labels, "batch.kubernetes.io/job-name"),
                         p->owner.name);
        }
    }
    CHECK_STR_EQ(pod(&in, NULL, "db-0") ? "db-0" : NULL, "db-0");
    CHECK(pod(&in, NULL, "db-2") != NULL);
    CHECK(pod(&in, NULL, "db-3") == NULL);
    if (pod(&in, NULL, "db-1")) {
        CHECK_STR_EQ(
            kube_labels_get(&pod(&in, NULL, "db-1")->labels, "statefulset.kubernetes.io/pod-name"),
            "db-1");
        CHECK_STR_EQ(
            kube_labels_get(&pod(&in, NULL, "db-1")->labels, "apps.kubernetes.io/pod-index"), "1");
    }
    /* the ReplicaSet's pods live in its namespace, whatever the template says */
    for (i = 0; i < in.npods; i++)
        if (in.pods[i].owner.kind && !strcmp(in.pods[i].owner.kind, "ReplicaSet"))
            CHECK_STR_EQ(in.pods[i].namespace_, "team");
    manifest_input_release(&in);
}

static void names_are_deterministic_and_unique(void)
{
    static const char doc[] = "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r}\n"
                              "spec:\n  replicas: 3000\n  selector: {matchLabels: {a: b}}\n"
                              "  template:\n    metadata: {labels: {a: b}}\n"
                              "    spec: {containers: [{name: c, image: x}]}\n";
    struct manifest_input a, b;
    struct err err;
    size_t i, same = 1;

    err_clear(&err);
    manifest_input_init(&a, NULL);
    manifest_input_init(&b, NULL);
    CHECK_INT_EQ(manifest_input_load_buffer(&a, "r.yaml", doc, sizeof(doc) - 1, &err), 0);
    CHECK_INT_EQ(manifest_input_load_buffer(&b, "other-name.yaml", doc, sizeof(doc) - 1, &err), 0);
    CHECK_INT_EQ(manifest_input_finish(&a, &err), 0);
    CHECK_INT_EQ(manifest_input_finish(&b, &err), 0);
    CHECK_INT_EQ(a.npods, 3000);
    CHECK_INT_EQ(b.npods, 3000);
    for (i = 0; i < a.npods && i < b.npods; i++)
        same &= !strcmp(a.pods[i].name, b.pods[i].name);
    CHECK(same);
    /* 3000 names drawn from 27^5: collisions are resolved, every pod is findable */
    for (i = 0; i < a.npods; i++)
        CHECK(manifest_input_find_pod(&a, "default", a.pods[i].name) == &a.pods[i]);
    manifest_input_release(&a);
    manifest_input_release(&b);
}

static void long_names_are_cut_like_generate_name(void)
{
    static const char doc[] =
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n"
        "  name: a-very-long-job-name-that-goes-on-and-on-beyond-fifty-eight-chars\n"
        "spec:\n  template:\n    spec: {restartPolicy: Never, containers: [{name: c, image: x}]}\n";
    struct manifest_input in;
    struct err err;

    err_clear(&err);
    manifest_input_init(&in, NULL);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "j.yaml", doc, sizeof(doc) - 1, &err), 0);
    CHECK_INT_EQ(manifest_input_finish(&in, &err), 0);
    CHECK_INT_EQ(in.npods, 1);
    if (in.npods == 1) {
        CHECK_INT_EQ(strlen(in.pods[0].name), 63);
        CHECK(!strncmp(in.pods[0].name,
                       "a-very-long-job-name-that-goes-on-and-on-beyond-fifty-eigh", 58));
    }
    manifest_input_release(&in);
}

static void job_counts(void)
{
    static const struct {
        const char *spec;
        size_t pods;
    } cases[] = {
        {"parallelism: 3", 3},
        {"completions: 2", 1},
        {"{parallelism: 4, completions: 2}", 2},
        {"{parallelism: 4, completions: 0}", 0},
        {"{parallelism: 0}", 0},
        {"{parallelism: 2, suspend: true}", 0},
        {"{parallelism: 3, completions: 5, completionMode: Indexed}", 3},
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char doc[512];
        struct manifest_input in;
        struct err err;
        int n;

        n = snprintf(doc, sizeof(doc),
                     "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n"
                     "  %s\n",
                     cases[i].spec);
        /* flow-style specs are merged into a block spec with the template */
        if (cases[i].spec[0] == '{')
            n = snprintf(doc, sizeof(doc),
                         "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: "
                         "%.*s, template: {spec: {containers: [{name: c, image: x}]}}}\n",
                         (int)strlen(cases[i].spec) - 1, cases[i].spec);
        else
            n += snprintf(doc + n, sizeof(doc) - (size_t)n,
                          "  template: {spec: {containers: [{name: c, image: x}]}}\n");
        err_clear(&err);
        manifest_input_init(&in, NULL);
        CHECK_INT_EQ(manifest_input_load_buffer(&in, "j.yaml", doc, strlen(doc), &err), 0);
        CHECK_INT_EQ(manifest_input_finish(&in, &err), 0);
        if (in.npods != cases[i].pods)
            test_fail(__FILE__, __LINE__, "spec %s: %zu pods, expected %zu (%s)", cases[i].spec,
                      in.npods, cases[i].pods, err.msg);
        if (strstr(cases[i].spec, "Indexed") && in.npods == 3) {
            CHECK(!strncmp(in.pods[2].name, "j-2-", 4));
            CHECK_STR_EQ(
                kube_labels_get(&in.pods[2].labels, "batch.kubernetes.io/job-completion-index"),
                "2");
        }
        manifest_input_release(&in);
    }
}

static void lists_and_json(void)
{
    struct manifest_input in;
    struct err err;
    const struct kube_pod *p;

    err_clear(&err);
    manifest_input_init(&in, NULL);
    CHECK_INT_EQ(load_fixture(&in, "fixtures/manifests/list.yaml", &err), 0);
    CHECK_INT_EQ(load_fixture(&in, "fixtures/manifests/nodelist.json", &err), 0);
    CHECK_INT_EQ(manifest_input_finish(&in, &err), 0);
    CHECK_INT_EQ(in.nnodes, 3);
    CHECK(manifest_input_find_node(&in, "list-node") != NULL);
    CHECK(manifest_input_find_node(&in, "json-node-1") != NULL);
    CHECK(manifest_input_find_node(&in, "json-node-2") != NULL);
    if (manifest_input_find_node(&in, "json-node-2")) {
        CHECK(manifest_input_find_node(&in, "json-node-2")->unschedulable);
        CHECK_INT_EQ(manifest_input_find_node(&in, "json-node-2")->source_line, 7);
    }
    CHECK_INT_EQ(in.npods, 3);
    CHECK(pod(&in, "default", "list-pod") != NULL);
    CHECK(pod(&in, "default", "nested-pod") != NULL);
    p = pod(&in, "default", "json-pod");
    CHECK(p != NULL);
    if (p)
        CHECK_STR_EQ(p->node_name, "json-node-1");
    CHECK_INT_EQ(in.nwarnings, 1);
    if (in.nwarnings)
        CHECK(strstr(in.warnings[0], "list.yaml: line 17: skipping kind Secret") != NULL);
    manifest_input_release(&in);
}

static void directory_in_name_order(void)
{
    struct manifest_input in;
    struct err err;

    err_clear(&err);
    manifest_input_init(&in, NULL);
    CHECK_INT_EQ(load_fixture(&in, "fixtures/manifests/dir", &err), 0);
    CHECK_INT_EQ(in.npods, 2);
    CHECK_INT_EQ(in.nnodes, 1);
    if (in.npods == 2) {
        CHECK_STR_EQ(in.pods[0].name, "a-json");
        CHECK_STR_EQ(in.pods[1].name, "b-yaml");
        CHECK(strstr(in.pods[1].source_file, "dir/b.yaml") != NULL);
    }
    manifest_input_release(&in);
}

static void missing_file_and_empty_dir(void)
{
    struct manifest_input in;
    struct err err;
    char buf[1024];

    err_clear(&err);
    manifest_input_init(&in, NULL);
    CHECK_INT_EQ(manifest_input_load_file(&in, "/nonexistent/x.yaml", &err), -ENOENT);
    CHECK_STR_EQ(err_format(&err, buf, sizeof(buf)),
                 "/nonexistent/x.yaml: cannot read: No such file or directory");
    err_clear(&err);
    CHECK(manifest_input_load_file(&in, test_fixture_path("unit"), &err) < 0);
    CHECK(strstr(err.msg, "recognized file extensions are [.json .yaml .yml]") != NULL);
    manifest_input_release(&in);
}

static const struct kube_pod *ds_pod_on(const struct manifest_input *in, const char *ds,
                                        const char *node)
{
    size_t i;

    for (i = 0; i < in->npods; i++) {
        const struct kube_pod *p = &in->pods[i];

        if (p->owner.kind && !strcmp(p->owner.kind, "DaemonSet") && !strcmp(p->owner.name, ds) &&
            p->has_required_affinity && p->required.nterms == 1 &&
            p->required.terms[0].nfields == 1 && p->required.terms[0].nexprs == 0 &&
            p->required.terms[0].fields[0].nvalues == 1 &&
            !strcmp(p->required.terms[0].fields[0].values[0], node))
            return p;
    }
    return NULL;
}

static void daemonset_one_pod_per_eligible_node(void)
{
    static const struct {
        const char *ds, *nodes;
    } want[] = {
        {"agent", "plain gpu cordoned not-ready"},
        {"gpulabel", "gpu"},
        {"net", "plain no-network"},
        {"everywhere", "plain master gpu cordoned not-ready no-network evicting"},
    };
    static const char *const all[] = {"plain",     "master",     "gpu",     "cordoned",
                                      "not-ready", "no-network", "evicting"};
    struct manifest_input in;
    struct err err;
    size_t i, j, total = 0;

    err_clear(&err);
    manifest_input_init(&in, NULL);
    CHECK_INT_EQ(load_fixture(&in, "fixtures/manifests/daemonset.yaml", &err), 0);
    CHECK_INT_EQ(in.npods, 2); /* DaemonSets wait for every node */
    CHECK_INT_EQ(manifest_input_finish(&in, &err), 0);
    for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        for (j = 0; j < sizeof(all) / sizeof(all[0]); j++) {
            char padded[128];
            int expect, got;

            snprintf(padded, sizeof(padded), " %s ", want[i].nodes);
            {
                char needle[64];

                snprintf(needle, sizeof(needle), " %s ", all[j]);
                expect = strstr(padded, needle) != NULL;
            }
            got = ds_pod_on(&in, want[i].ds, all[j]) != NULL;
            total += (size_t)got;
            if (expect != got)
                test_fail(__FILE__, __LINE__, "DaemonSet %s on node %s: %s, expected %s",
                          want[i].ds, all[j], got ? "pod" : "no pod", expect ? "pod" : "no pod");
        }
    }
    CHECK_INT_EQ(total, 14);
    CHECK_INT_EQ(in.npods, 16);
    /* each DaemonSet's pods sit where the DaemonSet appeared */
    if (in.npods == 16) {
        CHECK_STR_EQ(in.pods[0].name, "before");
        CHECK_STR_EQ(in.pods[1].owner.name, "agent");
        CHECK_STR_EQ(in.pods[4].owner.name, "agent");
        CHECK_STR_EQ(in.pods[5].owner.name, "gpulabel");
        CHECK_STR_EQ(in.pods[6].name, "after");
        CHECK_STR_EQ(in.pods[7].owner.name, "net");
        CHECK_STR_EQ(in.pods[9].owner.name, "everywhere");
        CHECK_STR_EQ(in.pods[1].namespace_, "kube-system");
        CHECK(!strncmp(in.pods[1].name, "agent-", 6) && strlen(in.pods[1].name) == 11);
    }
    /* the controller's tolerations: the template's not-ready one is replaced, not doubled,
     * and loses its tolerationSeconds; network-unavailable only with hostNetwork */
    {
        const struct kube_pod *p = ds_pod_on(&in, "agent", "plain");
        const struct kube_pod *q = ds_pod_on(&in, "net", "plain");

        CHECK(p != NULL && q != NULL);
        if (p) {
            int notready = 0, netun = 0;

            CHECK_INT_EQ(p->ntolerations, 6);
            for (j = 0; j < p->ntolerations; j++) {
                if (!strcmp(p->tolerations[j].key, "node.kubernetes.io/not-ready")) {
                    notready++;
                    CHECK(!p->tolerations[j].has_seconds);
                    CHECK(p->tolerations[j].effect == KUBE_EFFECT_NO_EXECUTE);
                }
                netun += !strcmp(p->tolerations[j].key, "node.kubernetes.io/network-unavailable");
            }
            CHECK_INT_EQ(notready, 1);
            CHECK_INT_EQ(netun, 0);
        }
        if (q)
            CHECK_INT_EQ(q->ntolerations, 7);
        p = ds_pod_on(&in, "gpulabel", "gpu");
        /* the template's required terms are replaced by the node pin */
        if (p)
            CHECK_STR_EQ(p->required.terms[0].fields[0].key, "metadata.name");
    }
    manifest_input_release(&in);
}

static void priority_resolution(void)
{
    struct manifest_input in;
    struct err err;
    const struct kube_pod *p;
    size_t i;

    err_clear(&err);
    manifest_input_init(&in, NULL);
    CHECK_INT_EQ(load_fixture(&in, "fixtures/manifests/priority.yaml", &err), 0);
    CHECK_INT_EQ(manifest_input_finish(&in, &err), 0);
    p = pod(&in, NULL, "with-class");
    CHECK(p && p->priority == 1000 && p->preempt_never);
    p = pod(&in, NULL, "without-class");
    CHECK(p && p->priority == 10 && !p->preempt_never);
    if (p)
        CHECK_STR_EQ(p->priority_class_name, "low-default");
    p = pod(&in, NULL, "explicit");
    CHECK(p && p->priority == 5);
    p = pod(&in, "kube-system", "critical");
    CHECK(p && p->priority == 2000001000);
    for (i = 0; i < in.npods; i++)
        if (in.pods[i].owner.kind)
            CHECK_INT_EQ(in.pods[i].priority, 2000000000);
    manifest_input_release(&in);
}

static void generate_name_and_default_namespace(void)
{
    static const char doc[] =
        "apiVersion: v1\nkind: Pod\nmetadata: {generateName: worker-}\n"
        "spec: {containers: [{name: c, image: x}]}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: pinned, namespace: ns1}\n"
        "spec: {containers: [{name: c, image: x}]}\n";
    struct manifest_input_opts o = {.default_namespace = "team"};
    struct manifest_input in;
    struct err err;

    err_clear(&err);
    manifest_input_init(&in, &o);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "g.yaml", doc, sizeof(doc) - 1, &err), 0);
    CHECK_INT_EQ(in.npods, 2);
    if (in.npods == 2) {
        CHECK(!strncmp(in.pods[0].name, "worker-", 7) && safe_chars(in.pods[0].name + 7, 5));
        CHECK_INT_EQ(strlen(in.pods[0].name), 12);
        CHECK_STR_EQ(in.pods[0].namespace_, "team");
        CHECK_STR_EQ(in.pods[1].namespace_, "ns1");
    }
    CHECK(manifest_input_find_pod(&in, NULL, in.npods ? in.pods[0].name : "") != NULL);
    manifest_input_release(&in);
}

/* the take_bound consumer of the hand-off tests: records "ns/name@node:priority" */
struct taken {
    char keys[8][64];
    size_t n;
    int fail_on; /* 1-based pod to refuse, 0: none */
};

static int take_rec(void *arg, const struct kube_pod *p, struct err *err)
{
    struct taken *t = arg;

    if (t->fail_on && (size_t)t->fail_on == t->n + 1)
        return err_set(err, -ENOMEM, "out of memory");
    if (t->n < 8)
        snprintf(t->keys[t->n], sizeof(t->keys[0]), "%s/%s@%s:%d", p->namespace_, p->name,
                 p->node_name, (int)p->priority);
    t->n++;
    return 0;
}

#define POD(name, extra)                                                                           \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name                                       \
    "}\nspec: {containers: [{name: c}]" extra "}\n"

static void bound_pods_handed_off(void)
{
    static const char doc[] =
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
        "metadata: {name: early}\nvalue: 5\n" POD("a", ", nodeName: n1, priority: 0") POD(
            "pending", "") POD("b", ", nodeName: n9, priority: 7, priorityClassName: early")
            POD("c", ", nodeName: n1, priority: 1, priorityClassName: system-node-critical") POD(
                "from-class", ", nodeName: n1, priorityClassName: early")
                POD("later-class", ", nodeName: n1, priority: 3, priorityClassName: late") POD(
                    "after-kept",
                    ", nodeName: n1, priority: 0") "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
                                                   "metadata: {name: late}\nvalue: 3\n"
                                                   "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n";
    struct taken t = {0};
    struct manifest_input_opts o = {.take_bound = take_rec, .take_arg = &t};
    struct manifest_input in;
    struct err err;

    err_clear(&err);
    manifest_input_init(&in, &o);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "h.yaml", doc, sizeof(doc) - 1, &err), 0);
    CHECK_INT_EQ(manifest_input_finish(&in, &err), 0);
    /* bound with a final priority: handed off; a class not loaded yet keeps its pod, and
     * every bound pod after it, in pods[] */
    CHECK_INT_EQ(t.n, 4);
    CHECK_INT_EQ(in.ntaken, 4);
    CHECK_STR_EQ(t.keys[0], "default/a@n1:0");
    CHECK_STR_EQ(t.keys[1], "default/b@n9:7");
    CHECK_STR_EQ(t.keys[2], "default/c@n1:1");
    CHECK_STR_EQ(t.keys[3], "default/from-class@n1:5"); /* the class's value */
    CHECK_INT_EQ(in.npods, 3);
    if (in.npods == 3) {
        CHECK_STR_EQ(in.pods[0].name, "pending");
        CHECK_STR_EQ(in.pods[1].name, "later-class");
        CHECK_INT_EQ(in.pods[1].priority, 3);
        CHECK_STR_EQ(in.pods[2].name, "after-kept");
    }
    CHECK(manifest_input_find_pod(&in, NULL, "a") == NULL);
    CHECK(manifest_input_find_pod(&in, NULL, "after-kept") != NULL);
    /* a handed-off pod still gets the missing-node warning, with its own file and line */
    CHECK_INT_EQ(in.nwarnings, 1);
    if (in.nwarnings)
        CHECK_STR_EQ(
            in.warnings[0],
            "h.yaml: line 16: pod default/b is bound to node n9, which is not in the input");
    manifest_input_release(&in);
}

static void handed_off_pods_keep_names_taken(void)
{
    static const char first[] = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n"
                                "spec: {containers: [{name: c}], nodeName: n1, priority: 0}\n";
    static const char dup[] = POD("b", "") POD("a", "");
    static const char list_late_kind[] =
        "apiVersion: v1\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: x}, spec: "
        "{containers: [{name: c}], nodeName: n1, priority: 0}}\nkind: List\n";
    static const char not_a_list[] =
        "apiVersion: v1\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: yy}, spec: "
        "{containers: [{name: c}], nodeName: n1, priority: 0}}\nkind: Service\n";
    struct taken t = {0};
    struct manifest_input_opts o = {.take_bound = take_rec, .take_arg = &t};
    struct manifest_input in;
    struct err err;
    char buf[512];

    err_clear(&err);
    manifest_input_init(&in, &o);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "one.yaml", first, sizeof(first) - 1, &err), 0);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "two.yaml", dup, sizeof(dup) - 1, &err), -EEXIST);
    CHECK_STR_EQ(err_format(&err, buf, sizeof(buf)),
                 "two.yaml: line 7: metadata.name: pods \"a\" already exists in namespace "
                 "\"default\" (defined at one.yaml: line 1)");
    /* the failed load is rolled back: b is free again, a is still taken */
    CHECK_INT_EQ(in.npods, 0);
    CHECK(manifest_input_find_pod(&in, NULL, "b") == NULL);
    /* a List's items are handed off even when its kind comes last, as kubectl writes it */
    err_clear(&err);
    CHECK_INT_EQ(
        manifest_input_load_buffer(&in, "l.yaml", list_late_kind, sizeof(list_late_kind) - 1, &err),
        0);
    CHECK_INT_EQ(t.n, 2);
    /* ... and a document that is not a List after all cannot give them back */
    CHECK(manifest_input_load_buffer(&in, "s.yaml", not_a_list, sizeof(not_a_list) - 1, &err) < 0);
    CHECK_STR_EQ(err_format(&err, buf, sizeof(buf)),
                 "s.yaml: line 1: items: only a List may have items (kind \"Service\")");
    manifest_input_release(&in);

    /* a consumer's error fails the load at the pod's line */
    memset(&t, 0, sizeof(t));
    t.fail_on = 1;
    err_clear(&err);
    manifest_input_init(&in, &o);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "one.yaml", first, sizeof(first) - 1, &err),
                 -ENOMEM);
    CHECK_STR_EQ(err_format(&err, buf, sizeof(buf)), "one.yaml: line 1: out of memory");
    manifest_input_release(&in);
}

static void trim_keeps_pods(void)
{
    static const char doc[] = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
                              "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\n"
                              "spec: {selector: {matchLabels: {a: b}}, template: "
                              "{metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n";
    struct manifest_input in;
    struct err err;
    char *copy;

    err_clear(&err);
    manifest_input_init(&in, NULL);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "t.yaml", doc, sizeof(doc) - 1, &err), 0);
    manifest_input_trim(&in); /* not finished: nothing happens */
    CHECK_INT_EQ(in.nnodes, 1);
    CHECK_INT_EQ(manifest_input_finish(&in, &err), 0);
    CHECK(manifest_input_find_node(&in, "n1") != NULL);
    manifest_input_trim(&in);
    CHECK_INT_EQ(in.nnodes, 0);
    CHECK(manifest_input_find_node(&in, "n1") == NULL);
    CHECK(manifest_input_find_pod(&in, NULL, in.npods ? in.pods[0].name : "x") == NULL);
    /* the DaemonSet's pod keeps its own copy of the node it is pinned to; scribble over
     * freed memory first so a dangling pointer would show even without ASan */
    copy = malloc(1 << 16);
    if (copy)
        memset(copy, 'x', 1 << 16);
    CHECK_INT_EQ(in.npods, 1);
    if (in.npods == 1 && in.pods[0].required.nterms == 1)
        CHECK_STR_EQ(in.pods[0].required.terms[0].fields[0].values[0], "n1");
    free(copy);
    manifest_input_release(&in);
}

static void failed_load_leaves_input_unchanged(void)
{
    static const char good[] = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n";
    static const char bad[] = "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n---\n"
                              "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\n"
                              "spec: {containers: [{name: c, image: x}]}\n---\n"
                              "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\n"
                              "spec: {selector: {matchLabels: {a: b}}, template: "
                              "{metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n"
                              "---\nkind: Pod\n";
    static const char again[] = "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n---\n"
                                "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\n"
                                "spec: {containers: [{name: c, image: x}]}\n";
    struct manifest_input in;
    struct err err;

    err_clear(&err);
    manifest_input_init(&in, NULL);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "good.yaml", good, sizeof(good) - 1, &err), 0);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "bad.yaml", bad, sizeof(bad) - 1, &err), -EINVAL);
    CHECK_INT_EQ(err.line, 15);
    CHECK_INT_EQ(in.nnodes, 1);
    CHECK_INT_EQ(in.npods, 0);
    CHECK(manifest_input_find_node(&in, "n2") == NULL);
    /* the names of the failed load are free again */
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "again.yaml", again, sizeof(again) - 1, &err), 0);
    CHECK_INT_EQ(manifest_input_finish(&in, &err), 0);
    CHECK_INT_EQ(in.nnodes, 2);
    CHECK_INT_EQ(in.npods, 1); /* the DaemonSet of the failed load is gone too */
    manifest_input_release(&in);
}

/* claims and volumes are found by name through an index a failed load does not clean: what
 * the load cut off is free again, what stays is still taken */
static void failed_load_frees_volume_names(void)
{
    static const char good[] = "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v1}\n";
    static const char bad[] = "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v2}\n---\n"
                              "apiVersion: v1\nkind: PersistentVolumeClaim\n"
                              "metadata: {name: c, namespace: a}\n---\nkind: Pod\n";
    static const char again[] =
        "apiVersion: v1\nkind: PersistentVolumeClaim\n"
        "metadata: {name: d, namespace: a}\n---\n"
        "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v3}\n---\n"
        "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v2}\n---\n"
        "apiVersion: v1\nkind: PersistentVolumeClaim\n"
        "metadata: {name: c, namespace: a}\n";
    static const char dup[] = "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v3}\n";
    struct manifest_input in;
    struct err err;

    err_clear(&err);
    manifest_input_init(&in, NULL);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "good.yaml", good, sizeof(good) - 1, &err), 0);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "bad.yaml", bad, sizeof(bad) - 1, &err), -EINVAL);
    CHECK_INT_EQ((int)in.npvs, 1);
    CHECK_INT_EQ((int)in.npvcs, 0);
    /* d and v3 now sit where c and v2 were; c and v2 are free */
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "again.yaml", again, sizeof(again) - 1, &err), 0);
    CHECK_INT_EQ((int)in.npvs, 3);
    CHECK_INT_EQ((int)in.npvcs, 2);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "dup.yaml", dup, sizeof(dup) - 1, &err), -EEXIST);
    CHECK(strstr(err.msg, "persistentvolumes \"v3\" already exists") != NULL);
    manifest_input_release(&in);
}

static void empty_input_and_empty_documents(void)
{
    static const char doc[] = "---\n# only a comment\n---\n---\n";
    struct manifest_input in;
    struct err err;

    err_clear(&err);
    manifest_input_init(&in, NULL);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "e.yaml", doc, sizeof(doc) - 1, &err), 0);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "z.yaml", "", 0, &err), 0);
    CHECK_INT_EQ(manifest_input_finish(&in, &err), 0);
    CHECK_INT_EQ(in.npods + in.nnodes + in.nwarnings, 0);
    CHECK(manifest_input_finish(&in, &err) < 0); /* only once */
    manifest_input_release(&in);
}

static void seed_example_loads(void)
{
    struct manifest_input in;
    struct err err;
    const struct kube_node *n;
    char path[4096];
    size_t i, masters = 0, gpus = 0;

    err_clear(&err);
    manifest_input_init(&in, NULL);
    snprintf(path, sizeof(path), "%s/../examples/seed", test_fixture_path(""));
    CHECK_INT_EQ(manifest_input_load_file(&in, path, &err), 0);
    CHECK_INT_EQ(manifest_input_finish(&in, &err), 0);
    CHECK_INT_EQ(in.nnodes, 6);
    for (i = 0; i < in.nnodes; i++) {
        n = &in.nodes[i];
        if (kube_labels_get(&n->labels, "node-role.kubernetes.io/master")) {
            masters++;
            CHECK_INT_EQ(n->ntaints, 1);
            if (n->ntaints)
                CHECK_STR_EQ(n->taints[0].key, "node-role.kubernetes.io/master");
        }
        if (kube_labels_get(&n->labels, "aliyun.accelerator/nvidia_name")) {
            gpus++;
            CHECK_STR_EQ(kube_labels_get(&n->labels, "aliyun.accelerator/nvidia_name"),
                         "Tesla-M40");
            CHECK_STR_EQ(kube_labels_get(&n->labels, "aliyun.accelerator/nvidia_mem"), "12209MiB");
            CHECK_STR_EQ(kube_labels_get(&n->labels, "aliyun.accelerator/nvidia_count"), "1");
        }
    }
    CHECK_INT_EQ(masters, 3);
    CHECK_INT_EQ(gpus, 2);
    CHECK(manifest_input_find_node(&in, "cn-beijing.i-2zej9s0zijykp9pwf7lu") != NULL);
    CHECK_INT_EQ(in.npods, 2);
    CHECK(pod(&in, NULL, "not-in-gpu-node") != NULL);
    CHECK_INT_EQ(count_owned(&in, "Deployment", "tf-notebook"), 1);
    CHECK_INT_EQ(in.nwarnings, 0);
    manifest_input_release(&in);
}

/* Every errors/ fixture: the formatted error must start with "<path>: <expectation>". */
static void error_fixtures(void)
{
    char dir[4096];
    DIR *d;
    struct dirent *de;
    int n = 0;

    snprintf(dir, sizeof(dir), "%s", test_fixture_path("fixtures/manifests/errors"));
    d = opendir(dir);
    CHECK(d != NULL);
    while (d && (de = readdir(d))) {
        char path[4096], want[1024], got[2048];
        struct buf b = BUF_INIT(0);
        struct manifest_input_opts o = {.max_pods = 1000};
        struct manifest_input in;
        struct err err;
        const char *exp;
        char *nl;
        int finish, rc;

        if (de->d_name[0] == '.')
            continue;
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= sizeof(path)) {
            test_fail(__FILE__, __LINE__, "path too long: %s", de->d_name);
            continue;
        }
        if (buf_read_file(path, &b)) {
            test_fail(__FILE__, __LINE__, "cannot read %s", path);
            continue;
        }
        finish = !strncmp(b.data, "# expect-finish: ", 17);
        exp = finish ? b.data + 17 : !strncmp(b.data, "# expect: ", 10) ? b.data + 10 : NULL;
        if (!exp) {
            test_fail(__FILE__, __LINE__, "%s: no '# expect:' line", de->d_name);
            buf_release(&b);
            continue;
        }
        nl = strchr(exp, '\n');
        err_cut_mark(want, sizeof(want),
                     snprintf(want, sizeof(want), "%s: %.*s", path,
                              nl ? (int)(nl - exp) : (int)strlen(exp), exp));
        buf_release(&b);
        err_clear(&err);
        manifest_input_init(&in, &o);
        rc = manifest_input_load_file(&in, path, &err);
        if (finish) {
            if (rc)
                test_fail(__FILE__, __LINE__, "%s: load failed: %s", de->d_name,
                          err_format(&err, got, sizeof(got)));
            else
                rc = manifest_input_finish(&in, &err);
        } else if (!rc) {
            CHECK_INT_EQ(in.npods + in.nnodes + in.nclasses, 0);
        }
        err_format(&err, got, sizeof(got));
        if (rc >= 0 || strncmp(got, want, strlen(want)))
            test_fail(__FILE__, __LINE__, "%s: rc %d, error \"%s\", expected \"%s...\"", de->d_name,
                      rc, got, want);
        manifest_input_release(&in);
        n++;
    }
    if (d)
        closedir(d);
    CHECK(n >= 20);
}

static void many_pods_share_a_generate_name(void)
{
    struct buf b = BUF_INIT(0);
    struct manifest_input in;
    struct err err;
    int i;

    for (i = 0; i < 300; i++)
        buf_puts(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {generateName: w-}\n"
                     "spec: {containers: [{name: c, image: x}]}\n");
    err_clear(&err);
    manifest_input_init(&in, NULL);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "g.yaml", b.data, b.len, &err), 0);
    CHECK_INT_EQ(in.npods, 300);
    manifest_input_release(&in);
    buf_release(&b);
}

struct each_seen {
    int docs;
    int lines[4];
};

static int each_doc(json_t *doc, struct kube_lines *lines, json_t *list, void *ctx)
{
    struct each_seen *s = ctx;

    (void)list;
    if (s->docs < 4)
        s->lines[s->docs] = kube_lines_find(lines, json_object_get(doc, "b"));
    s->docs++;
    return s->docs == 3 ? -ECANCELED : 0;
}

/* kube_yaml_each, which the loader uses to keep one document in memory at a time: lines are
 * per document, anchors end with their document, the callback can stop the parse. */
static void yaml_each_document(void)
{
    static const char doc[] = "a: &x 1\nb: 2\n---\n\n---\nc: 2\nb: 3\n---\nb: *x\n---\nb: 4\n";
    struct each_seen s = {0, {0}};
    struct err err;

    err_clear(&err);
    CHECK_INT_EQ(kube_yaml_each(doc, sizeof(doc) - 1, "e.yaml", 0, each_doc, &s, &err), -22);
    CHECK_INT_EQ(s.docs, 2);
    CHECK_INT_EQ(s.lines[0], 2);
    CHECK_INT_EQ(s.lines[1], 7);
    CHECK_INT_EQ(err.line, 9); /* *x of the first document is unknown in the third */
    s.docs = 0;
    CHECK_INT_EQ(kube_yaml_each("b: 1\n---\nb: 2\n---\nb: 3\n---\nb: 4\n", 32, "f.yaml", 0,
                                each_doc, &s, &err),
                 -ECANCELED);
    CHECK_INT_EQ(s.docs, 3);
}

struct items_seen {
    int items, roots, kind_known, root_items, lines[3];
};

static int items_doc(json_t *doc, struct kube_lines *lines, json_t *list, void *ctx)
{
    struct items_seen *s = ctx;

    if (list) {
        if (s->items < 3)
            s->lines[s->items] = kube_lines_find(lines, doc);
        s->items++;
        s->kind_known += json_object_get(list, "kind") != NULL;
    } else {
        s->roots++;
        s->root_items = (int)json_array_size(json_object_get(doc, "items"));
    }
    return 0;
}

/* KUBE_YAML_SPLIT_ITEMS hands a List's items over one by one, with their own lines. */
static void yaml_each_splits_items(void)
{
    static const char doc[] = "apiVersion: v1\nitems:\n- a: 1\n- b: 2\n-\n  c: 3\nkind: List\n";
    struct items_seen s;
    struct err err;

    memset(&s, 0, sizeof(s));
    err_clear(&err);
    CHECK_INT_EQ(
        kube_yaml_each(doc, sizeof(doc) - 1, "l.yaml", KUBE_YAML_SPLIT_ITEMS, items_doc, &s, &err),
        0);
    CHECK_INT_EQ(s.items, 3);
    CHECK_INT_EQ(s.roots, 1);
    CHECK_INT_EQ(s.root_items, 0);
    CHECK_INT_EQ(s.kind_known, 0); /* kind comes after items here */
    CHECK_INT_EQ(s.lines[0], 3);
    CHECK_INT_EQ(s.lines[1], 4);
    CHECK_INT_EQ(s.lines[2], 6);
}

/* kubectl get -o json puts "items" before "kind"; a root with items that is no list drops
 * them; concatenated JSON values on one line are separate objects. */
static void list_items_streamed(void)
{
    static const char kubectl[] =
        "{\"apiVersion\": \"v1\", \"items\": [\n"
        "  {\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n1\"}},\n"
        "  {\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"p1\"},\n"
        "   \"spec\": {\"containers\": [{\"name\": \"c\", \"image\": \"x\"}]}}\n"
        "], \"kind\": \"List\", \"metadata\": {\"resourceVersion\": \"\"}}"
        "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n2\"}}\n";
    static const char notlist[] =
        "apiVersion: example.com/v1\nitems:\n- apiVersion: v1\n  kind: Node\n"
        "  metadata: {name: fake}\nkind: Inventory\n";
    struct manifest_input in;
    struct err err;

    err_clear(&err);
    manifest_input_init(&in, NULL);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "k.json", kubectl, sizeof(kubectl) - 1, &err), 0);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "i.yaml", notlist, sizeof(notlist) - 1, &err), 0);
    CHECK_INT_EQ(manifest_input_finish(&in, &err), 0);
    CHECK_INT_EQ(in.nnodes, 2);
    CHECK(manifest_input_find_node(&in, "n1") != NULL);
    CHECK(manifest_input_find_node(&in, "n2") != NULL);
    CHECK(manifest_input_find_node(&in, "fake") == NULL);
    if (manifest_input_find_node(&in, "n1"))
        CHECK_INT_EQ(manifest_input_find_node(&in, "n1")->source_line, 2);
    if (manifest_input_find_node(&in, "n2"))
        CHECK_INT_EQ(manifest_input_find_node(&in, "n2")->source_line, 6);
    CHECK(pod(&in, NULL, "p1") != NULL);
    CHECK_INT_EQ(in.nwarnings, 1);
    if (in.nwarnings)
        CHECK(strstr(in.warnings[0], "i.yaml: line 6: skipping kind Inventory") != NULL);
    manifest_input_release(&in);
}

/* "-" reads standard input, named STDIN in messages. */
static void reads_stdin(void)
{
    static const char doc[] = "apiVersion: v1\nkind: Node\nmetadata: {name: from-stdin}\n---\n"
                              "apiVersion: v1\nkind: Node\nmetadata: {name: from-stdin}\n";
    struct manifest_input in;
    struct err err;
    int fds[2], saved;
    char buf[512];

    if (pipe(fds)) {
        test_fail(__FILE__, __LINE__, "pipe failed");
        return;
    }
    CHECK_INT_EQ(write(fds[1], doc, sizeof(doc) - 1), (long)sizeof(doc) - 1);
    close(fds[1]);
    saved = dup(STDIN_FILENO);
    dup2(fds[0], STDIN_FILENO);
    close(fds[0]);
    err_clear(&err);
    manifest_input_init(&in, NULL);
    CHECK_INT_EQ(manifest_input_load_file(&in, "-", &err), -EEXIST);
    CHECK(strncmp(err_format(&err, buf, sizeof(buf)), "STDIN: line 5: metadata.name: ", 30) == 0);
    dup2(saved, STDIN_FILENO);
    close(saved);
    manifest_input_release(&in);
}

/* A long stream of JSON values crossing the reader's 64 KiB chunks, with braces, quotes and
 * backslashes inside strings: every value is an object, lines stay right. */
static void json_stream_across_chunks(void)
{
    struct buf b = BUF_INIT(0);
    struct manifest_input in;
    struct err err;
    const struct kube_node *n;
    int i, j;

    for (i = 0; i < 300; i++) {
        buf_printf(&b,
                   "%s{\"apiVersion\": \"v1\", \"kind\": \"Node\",\n \"metadata\": {"
                   "\"name\": \"n%d\", \"annotations\": {\"x\": \"",
                   i % 3 ? "  " : "", i);
        for (j = 0; j < 60; j++)
            buf_puts(&b, "}{][ \\\" \\\\");
        buf_puts(&b, "\"}}}\n");
    }
    err_clear(&err);
    manifest_input_init(&in, NULL);
    CHECK(b.len > 3 * 65536);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "s.json", b.data, b.len, &err), 0);
    CHECK_INT_EQ(in.nnodes, 300);
    n = manifest_input_find_node(&in, "n299");
    CHECK(n != NULL);
    if (n)
        CHECK_INT_EQ(n->source_line, 2 * 299 + 1);
    manifest_input_release(&in);
    buf_release(&b);
}

static void warns_about_pods_on_unknown_nodes(void)
{
    static const char doc[] = "apiVersion: v1\nkind: Node\nmetadata: {name: real}\n---\n"
                              "apiVersion: v1\nkind: Pod\nmetadata: {name: here}\n"
                              "spec: {nodeName: real, containers: [{name: c, image: x}]}\n---\n"
                              "apiVersion: v1\nkind: Pod\nmetadata: {name: lost, namespace: ns}\n"
                              "spec: {nodeName: ghost, containers: [{name: c, image: x}]}\n";
    struct manifest_input in;
    struct err err;

    err_clear(&err);
    manifest_input_init(&in, NULL);
    CHECK_INT_EQ(manifest_input_load_buffer(&in, "b.yaml", doc, sizeof(doc) - 1, &err), 0);
    CHECK_INT_EQ(manifest_input_finish(&in, &err), 0);
    CHECK_INT_EQ(in.npods, 2);
    CHECK_INT_EQ(in.nwarnings, 1);
    if (in.nwarnings)
        CHECK_STR_EQ(
            in.warnings[0],
            "b.yaml: line 10: pod ns/lost is bound to node ghost, which is not in the input");
    manifest_input_release(&in);
}

/* name_matches: want is "ns/name", or "ns/prefix*" for a generated name (prefix + 5 chars) */
static bool name_matches(const struct kube_pod *p, const char *want, size_t wlen)
{
    char got[512];
    int n = snprintf(got, sizeof(got), "%s/%s", p->namespace_, p->name);

    if (wlen && want[wlen - 1] == '*')
        return (size_t)n == wlen - 1 + 5 && !strncmp(got, want, wlen - 1);
    return (size_t)n == wlen && !strncmp(got, want, wlen);
}

/* check_pods compares pods[] with the words of list (skipping those in skip, the handed-off
 * pods' "ns/name@..." keys) */
static void check_pods(const char *file, const struct manifest_input *in, const char *list,
                       const struct taken *skip)
{
    const char *w = list;
    size_t i = 0, k;

    while (*w && *w != '\n') {
        size_t len = strcspn(w, " \n");
        bool taken = false;

        for (k = 0; skip && k < skip->n && k < 8; k++)
            if (!strncmp(skip->keys[k], w, len) && skip->keys[k][len] == '@')
                taken = true;
        if (!taken) {
            if (i >= in->npods)
                test_fail(__FILE__, __LINE__, "%s%s: no pod %zu, want %.*s", file,
                          skip ? " (bound pods handed off)" : "", i, (int)len, w);
            else if (!name_matches(&in->pods[i], w, len))
                test_fail(__FILE__, __LINE__, "%s%s: pod %zu is %s/%s, want %.*s", file,
                          skip ? " (bound pods handed off)" : "", i, in->pods[i].namespace_,
                          in->pods[i].name, (int)len, w);
            i++;
        }
        w += len;
        w += strspn(w, " ");
    }
    if (i != in->npods)
        test_fail(__FILE__, __LINE__, "%s%s: %zu pods, want %zu", file,
                  skip ? " (bound pods handed off)" : "", in->npods, i);
}

/* Workloads beside their own pods (the YAML files of tests/fixtures/manifests/existing, first line
 * "# pods: ns/name ..." in pods[] order, "ns/prefix*" for a generated name): each creates only
 * what its active pods do not stand for, whether those stay in pods[] or are handed off. */
static void workloads_count_their_pods(void)
{
    char dir[4096];
    DIR *d;
    struct dirent *de;

    snprintf(dir, sizeof(dir), "%s", test_fixture_path("fixtures/manifests/existing"));
    d = opendir(dir);
    CHECK(d != NULL);
    while (d && (de = readdir(d))) {
        char path[4096 + 256];
        struct buf b = BUF_INIT(0);
        int take;

        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if (buf_read_file(path, &b) || strncmp(b.data, "# pods: ", 8)) {
            test_fail(__FILE__, __LINE__, "%s: no '# pods:' line", de->d_name);
            buf_release(&b);
            continue;
        }
        for (take = 0; take < 2; take++) {
            struct taken t = {0};
            struct manifest_input_opts o = {.take_bound = take ? take_rec : NULL, .take_arg = &t};
            struct manifest_input in;
            struct err err;

            err_clear(&err);
            manifest_input_init(&in, &o);
            if (manifest_input_load_file(&in, path, &err) || manifest_input_finish(&in, &err))
                test_fail(__FILE__, __LINE__, "%s: %s", de->d_name, err.msg);
            else
                check_pods(de->d_name, &in, b.data + 8, take ? &t : NULL);
            manifest_input_release(&in);
        }
        buf_release(&b);
    }
    if (d)
        closedir(d);
}

/* The Deployment controller's pod-template-hash (podhash.c), values computed by
 * kube-controller-manager v1.37.2 (the first two by the real controller on a real API server,
 * test_k8s_podhash.py; the others by its ComputeHash, tests/k8s/internal/podhash): the
 * defaults the API server adds, quantities made canonical, the collision count's bytes. */
static void pod_template_hash_is_the_controllers(void)
{
    static const struct {
        const char *tmpl;
        int32_t collisions; /* INT32_MIN: none */
        const char *want;
    } rows[] = {
        {"{\"metadata\":{\"labels\":{\"app\":\"d1\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
         "\"image\":\"registry.k8s.io/pause:3.10\"}]}}",
         INT32_MIN, "766d8c799d"},
        {"{\"metadata\":{\"labels\":{\"app\":\"d1\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
         "\"image\":\"registry.k8s.io/pause:3.10\"}]}}",
         1, "7c5957bbf9"},
        {"{\"metadata\":{\"labels\":{\"app\":\"d1\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
         "\"image\":\"registry.k8s.io/pause:3.10\"}]}}",
         -7, "66d5f98b48"},
        {"{\"metadata\":{\"labels\":{\"app\":\"r\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
         "\"image\":\"nginx\",\"resources\":{\"limits\":{\"cpu\":\"1.5\",\"memory\":\"1536Mi\","
         "\"nvidia.com/gpu\":1},\"requests\":{\"cpu\":\"100n\",\"memory\":\"2000M\"}}}]}}",
         INT32_MIN, "786cfdcc5d"},
    };
    size_t i;

    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        json_t *t = json_loads(rows[i].tmpl, 0, NULL);
        char out[11] = "";
        struct err err;
        int rc;

        err_clear(&err);
        rc = manifest_pod_template_hash(
            t, rows[i].collisions == INT32_MIN ? NULL : &rows[i].collisions, out, &err);
        CHECK_INT_EQ(rc, 0);
        CHECK_STR_EQ(out, rows[i].want);
        json_decref(t);
    }
}

/* A quantity written as a number is the text kubectl sends (Go's float64: 0.1 is "0.1", not
 * 0.10000000000000001, which ParseQuantity would round up to 101m) and a string's white space
 * is trimmed: the template hashes as with the canonical strings. */
static void pod_template_hash_reads_quantities_as_the_api_server(void)
{
    static const char *const forms[] = {
        "{\"cpu\":\"100m\",\"memory\":\"1k\"}",
        "{\"cpu\":0.1,\"memory\":1e3}",
        "{\"cpu\":\" 0.1\\t\",\"memory\":1000}",
    };
    char first[11] = "", out[11];
    size_t i;

    for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        char tmpl[512];
        struct err err;
        json_t *t;

        snprintf(tmpl, sizeof(tmpl),
                 "{\"metadata\":{\"labels\":{\"app\":\"q\"}},\"spec\":{\"containers\":[{"
                 "\"name\":\"c\",\"image\":\"nginx\",\"resources\":{\"requests\":%s}}]}}",
                 forms[i]);
        t = json_loads(tmpl, 0, NULL);
        CHECK(t != NULL);
        err_clear(&err);
        memset(out, 0, sizeof(out));
        CHECK_INT_EQ(manifest_pod_template_hash(t, NULL, out, &err), 0);
        if (!i)
            memcpy(first, out, sizeof(out));
        else
            CHECK_STR_EQ(out, first);
        json_decref(t);
    }
}

static const struct test_case cases[] = {
    {"pod-template-hash is the controller's", pod_template_hash_is_the_controllers},
    {"pod-template-hash reads quantities as the API server",
     pod_template_hash_reads_quantities_as_the_api_server},
    {"loads every kind", loads_every_kind},
    {"names like controllers", names_like_controllers},
    {"names are deterministic and unique", names_are_deterministic_and_unique},
    {"long names are cut like generateName", long_names_are_cut_like_generate_name},
    {"job pod counts", job_counts},
    {"lists and json", lists_and_json},
    {"directory in name order", directory_in_name_order},
    {"missing file and empty dir", missing_file_and_empty_dir},
    {"daemonset one pod per eligible node", daemonset_one_pod_per_eligible_node},
    {"priority resolution", priority_resolution},
    {"generateName and default namespace", generate_name_and_default_namespace},
    {"bound pods handed off", bound_pods_handed_off},
    {"handed-off pods keep their names taken", handed_off_pods_keep_names_taken},
    {"trim keeps the pods", trim_keeps_pods},
    {"failed load leaves input unchanged", failed_load_leaves_input_unchanged},
    {"failed load frees volume names", failed_load_frees_volume_names},
    {"empty input and empty documents", empty_input_and_empty_documents},
    {"seed example loads", seed_example_loads},
    {"error fixtures", error_fixtures},
    {"many pods share a generateName", many_pods_share_a_generate_name},
    {"yaml each document", yaml_each_document},
    {"yaml each splits items", yaml_each_splits_items},
    {"list items streamed", list_items_streamed},
    {"reads stdin", reads_stdin},
    {"json stream across chunks", json_stream_across_chunks},
    {"warns about pods on unknown nodes", warns_about_pods_on_unknown_nodes},
    {"workloads count their pods", workloads_count_their_pods},
};

TEST_SUITE(manifest, cases)
