/* workload.c - workloads expanded to their pods (see workload.h). Each replica is the decoded
 * template with the labels and the name its controller would give it. */
#include "manifest/workload.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/decode.h"
#include "kube/labels.h"
#include "kube/rules.h"
#include "manifest/names.h"
#include "manifest/objects.h"

/* spec_int reads an optional non-negative int32 field of spec; *out keeps its default when
 * the field is absent or null. */
static int spec_int(struct manifest_ctx *c, const json_t *spec, const char *key, int line,
                    int64_t *out)
{
    const json_t *v = json_object_get(spec, key);
    char field[64];
    int vl = manifest_line_of(c, v, line);
    int64_t n;

    snprintf(field, sizeof(field), "spec.%s", key);
    if (!v || json_is_null(v))
        return 0;
    if (!kube_json_int64(v, &n))
        return manifest_fail(c, vl, field, -EINVAL, "Invalid value: expected an integer, got %s",
                             kube_json_type_name(v));
    if (n < 0)
        return manifest_fail(c, vl, field, -EINVAL,
                             "Invalid value: %" PRId64 ": must be greater than or equal to 0", n);
    if (n > INT32_MAX)
        return manifest_fail(c, vl, field, -EINVAL,
                             "Invalid value: %" PRId64 ": must fit in a 32-bit integer", n);
    *out = n;
    return 0;
}

/* check_selector applies the apps/v1 validation to spec.selector: required, not empty and a
 * valid metav1.LabelSelector, decoded into *ls (from the input's arena). Whether it selects
 * the template's labels is checked once the template is decoded (selector_selects). */
static int check_selector(struct manifest_ctx *c, const json_t *spec, const char *kind, int line,
                          struct kube_label_selector *ls)
{
    const json_t *sel = json_object_get(spec, "selector");
    char field[sizeof(c->err->field)];

    if (!sel || json_is_null(sel))
        return manifest_fail(c, manifest_line_of(c, spec, line), "spec.selector", -EINVAL,
                             "Required value");
    if (!json_is_object(sel))
        return manifest_fail(c, manifest_line_of(c, sel, line), "spec.selector", -EINVAL,
                             "Invalid value: expected an object, got %s", kube_json_type_name(sel));
    if (!json_object_size(json_object_get(sel, "matchLabels")) &&
        !json_array_size(json_object_get(sel, "matchExpressions")))
        return manifest_fail(c, manifest_line_of(c, sel, line), "spec.selector", -EINVAL,
                             "Invalid value: empty selector is invalid for %s", kind);
    if (!kube_label_selector_decode(sel, &c->in->arena, c->lines, NULL, ls, c->err))
        return 0;
    if (!c->err)
        return -EINVAL;
    err_cut_mark(field, sizeof(field),
                 snprintf(field, sizeof(field), "spec.selector%s%s", c->err->field[0] ? "." : "",
                          c->err->field));
    err_field(c->err, field);
    if (!c->err->line)
        c->err->line = manifest_line_of(c, sel, line);
    if (!c->err->file[0])
        err_at(c->err, c->file, c->err->line, c->err->column);
    return c->err->code;
}

/* selector_selects fails unless the workload's selector picks its template's labels. */
static int selector_selects(struct manifest_ctx *c, const struct kube_label_selector *ls,
                            const json_t *tmpl, const struct kube_labels *labels, int line)
{
    const json_t *jl = json_object_get(json_object_get(tmpl, "metadata"), "labels");

    if (kube_label_selector_matches(ls, labels))
        return 0;
    return manifest_fail(c, manifest_line_of(c, jl ? jl : tmpl, line),
                         "spec.template.metadata.labels", -EINVAL,
                         "Invalid value: `selector` does not match template `labels`");
}

/* keep_selector records the selector of a ReplicaSet, ReplicationController, StatefulSet or
 * Deployment for PodTopologySpread's system defaults (struct manifest_selector): spec.selector,
 * else (a ReplicationController, or an older API group) the template's labels; a Deployment's
 * ReplicaSet also selects its pod-template-hash. */
static int keep_selector(struct manifest_ctx *c, const struct manifest_kind *k, const char *ns,
                         const char *name, const struct kube_label_selector *sel,
                         const struct kube_labels *tmpl_labels, const char *hash)
{
    struct arena *a = &c->in->arena;
    struct kube_label_selector ls;
    size_t i, n;

    if (k->id != MANIFEST_KIND_DEPLOYMENT && k->id != MANIFEST_KIND_REPLICASET &&
        k->id != MANIFEST_KIND_REPLICATION_CONTROLLER && k->id != MANIFEST_KIND_STATEFULSET)
        return 0;
    memset(&ls, 0, sizeof(ls));
    ls.present = true;
    n = sel->present ? sel->nreqs : tmpl_labels->n;
    if (!(ls.reqs = arena_alloc(a, (n + 1) * sizeof(*ls.reqs))))
        return manifest_nomem(c);
    if (sel->present) {
        if (n)
            memcpy(ls.reqs, sel->reqs, n * sizeof(*ls.reqs));
    } else {
        for (i = 0; i < n; i++) {
            const char **v = arena_alloc(a, sizeof(*v));
            if (!v)
                return manifest_nomem(c);
            v[0] = tmpl_labels->v[i].value;
            ls.reqs[i].key = tmpl_labels->v[i].key;
            ls.reqs[i].op = KUBE_OP_IN;
            ls.reqs[i].values = v;
            ls.reqs[i].nvalues = 1;
        }
    }
    if (k->id == MANIFEST_KIND_DEPLOYMENT) {
        const char **v = arena_alloc(a, sizeof(*v));
        if (!v || !(v[0] = arena_strdup(a, hash)))
            return manifest_nomem(c);
        ls.reqs[n].key = "pod-template-hash";
        ls.reqs[n].op = KUBE_OP_IN;
        ls.reqs[n].values = v;
        ls.reqs[n++].nvalues = 1;
    }
    ls.nreqs = n;
    return manifest_add_selector(c, k->kind, ns, name, &ls);
}

/* decode_template decodes spec.template as the pod a controller would create, in namespace
 * ns. Field paths in errors are made relative to the workload. */
static int decode_template(struct manifest_ctx *c, const json_t *tmpl, const char *ns,
                           const char *owner_kind, const char *owner_name, int line,
                           struct kube_pod *out)
{
    json_t *md = json_object_get(tmpl, "metadata");
    json_t *pod = json_object(), *pmd = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    if (md && !json_is_object(md) && !json_is_null(md)) {
        rc = manifest_fail(c, manifest_line_of(c, md, line), "spec.template.metadata", -EINVAL,
                           "Invalid value: expected an object, got %s", kube_json_type_name(md));
        goto out;
    }
    pmd = json_is_object(md) ? json_copy(md) : json_object();
    if (!pod || !pmd || json_object_set_new(pod, "apiVersion", json_string("v1")) ||
        json_object_set_new(pod, "kind", json_string("Pod")) ||
        json_object_set_new(pmd, "name", json_string(owner_name)) ||
        json_object_set_new(pmd, "namespace", json_string(ns)) ||
        json_object_set(pod, "metadata", pmd) ||
        (json_object_get(tmpl, "spec") &&
         json_object_set(pod, "spec", json_object_get(tmpl, "spec"))) ||
        kube_lines_add(c->lines, pod, manifest_line_of(c, tmpl, line)) ||
        kube_lines_add(c->lines, pmd, manifest_line_of(c, md, manifest_line_of(c, tmpl, line)))) {
        rc = manifest_nomem(c);
        goto out;
    }
    rc = kube_pod_decode(pod, &c->in->arena, c->lines, NULL, out, c->err);
    if (rc) {
        if (c->err) {
            char field[sizeof(c->err->field)];

            err_cut_mark(field, sizeof(field),
                         snprintf(field, sizeof(field), "spec.template%s%s",
                                  c->err->field[0] ? "." : "", c->err->field));
            err_field(c->err, field);
            if (!c->err->line)
                c->err->line = manifest_line_of(c, tmpl, line);
            if (!c->err->file[0])
                err_at(c->err, c->file, c->err->line, c->err->column);
        }
        goto out;
    }
    out->namespace_ = manifest_namespace_intern(c, ns);
    out->owner.kind = owner_kind;
    out->owner.name = arena_strdup(&c->in->arena, owner_name);
    out->owner.api_version = NULL; /* the controller's own reference, not the template's */
    out->source_file = c->file;
    out->source_line = line;
    if (!out->namespace_ || !out->owner.name)
        rc = manifest_nomem(c);
out:
    json_decref(pmd);
    json_decref(pod);
    return rc;
}

/* labels_with returns base plus the extra pairs (replacing equal keys), sorted by key. */
static int labels_with(struct arena *a, const struct kube_labels *base,
                       const struct kube_label *extra, size_t nextra, struct kube_labels *out)
{
    struct kube_label *v = arena_alloc(a, (base->n + nextra) * sizeof(*v));
    size_t i, j, n = 0;

    if (!v)
        return -ENOMEM;
    for (i = 0; i < base->n; i++) {
        for (j = 0; j < nextra; j++)
            if (!strcmp(base->v[i].key, extra[j].key))
                break;
        if (j == nextra)
            v[n++] = base->v[i];
    }
    for (j = 0; j < nextra; j++) {
        /* insertion keeps the array sorted */
        i = n;
        while (i > 0 && strcmp(v[i - 1].key, extra[j].key) > 0) {
            v[i] = v[i - 1];
            i--;
        }
        v[i] = extra[j];
        n++;
    }
    out->v = v;
    out->n = n;
    return 0;
}

int manifest_load_workload(struct manifest_ctx *c, json_t *obj, const struct manifest_kind *k,
                           const char *av, int line)
{
    struct manifest_input *in = c->in;
    const json_t *spec = json_object_get(obj, "spec");
    const json_t *tmpl = json_object_get(spec, "template");
    const char *name = manifest_jstr(json_object_get(obj, "metadata"), "name");
    const char *ns = manifest_object_namespace(c, obj);
    int64_t replicas = 1, completions = -1;
    struct kube_label_selector sel = {0};
    struct kube_pod tp;
    struct kube_labels shared;
    char base[320], hash[11] = "";
    int indexed = 0, rc;
    size_t i;

    if (!json_is_object(spec))
        return manifest_fail(c, manifest_line_of(c, spec, line), "spec", -EINVAL,
                             spec ? "Invalid value: expected an object" : "Required value");
    if (!json_is_object(tmpl))
        return manifest_fail(c, manifest_line_of(c, tmpl, manifest_line_of(c, spec, line)),
                             "spec.template", -EINVAL,
                             tmpl ? "Invalid value: expected an object" : "Required value");
    switch (k->id) {
    case MANIFEST_KIND_DEPLOYMENT:
    case MANIFEST_KIND_REPLICASET:
    case MANIFEST_KIND_STATEFULSET:
        if ((rc = spec_int(c, spec, "replicas", line, &replicas)))
            return rc;
        if (!strncmp(av, "apps/", 5) && (rc = check_selector(c, spec, k->kind, line, &sel)))
            return rc;
        break;
    case MANIFEST_KIND_DAEMONSET:
        if (!strncmp(av, "apps/", 5) && (rc = check_selector(c, spec, k->kind, line, &sel)))
            return rc;
        break;
    case MANIFEST_KIND_REPLICATION_CONTROLLER:
        if ((rc = spec_int(c, spec, "replicas", line, &replicas)))
            return rc;
        break;
    case MANIFEST_KIND_JOB: {
        const char *mode = manifest_jstr(spec, "completionMode");
        const json_t *suspend = json_object_get(spec, "suspend");

        if ((rc = spec_int(c, spec, "parallelism", line, &replicas)) ||
            (rc = spec_int(c, spec, "completions", line, &completions)))
            return rc;
        if (mode && !strcmp(mode, "Indexed")) {
            if (completions < 0)
                return manifest_fail(c, manifest_line_of(c, spec, line), "spec.completions",
                                     -EINVAL, "Required value: when completion mode is Indexed");
            indexed = 1;
        }
        if (completions >= 0 && completions < replicas)
            replicas = completions;
        if (json_is_true(suspend))
            replicas = 0;
        break;
    }
    default:
        break;
    }
    if ((rc = manifest_check_capacity(
             c, line, k->id == MANIFEST_KIND_JOB ? "spec.parallelism" : "spec.replicas",
             (size_t)replicas)))
        return rc;
    rc = decode_template(c, tmpl, ns, k->kind, name, line, &tp);
    if (rc)
        return rc;
    if (sel.present && (rc = selector_selects(c, &sel, tmpl, &tp.labels, line)))
        return rc;
    if (k->id == MANIFEST_KIND_DAEMONSET) {
        struct manifest_input_priv *pv = in->priv;

        if (manifest_grow((void **)&pv->ds, &pv->cap_ds, pv->nds + 1, sizeof(*pv->ds)))
            return manifest_nomem(c);
        pv->ds[pv->nds].tmpl = tp;
        pv->ds[pv->nds].pos = in->npods;
        pv->nds++;
        return 0;
    }

    /* labels the controllers add that are the same for every replica */
    shared = tp.labels;
    if (k->id == MANIFEST_KIND_DEPLOYMENT)
        manifest_template_hash(hash, tmpl);
    if ((rc = keep_selector(c, k, ns, name, &sel, &tp.labels, hash)))
        return rc;
    if (k->id == MANIFEST_KIND_DEPLOYMENT) {
        struct kube_label l;

        l.key = "pod-template-hash";
        l.value = arena_strdup(&in->arena, hash);
        if (!l.value || labels_with(&in->arena, &tp.labels, &l, 1, &shared))
            return manifest_nomem(c);
        snprintf(base, sizeof(base), "%s-%s-", name, hash);
    } else if (k->id == MANIFEST_KIND_JOB && !indexed) {
        struct kube_label l[2] = {{"batch.kubernetes.io/job-name", tp.owner.name},
                                  {"job-name", tp.owner.name}};

        if (labels_with(&in->arena, &tp.labels, l, 2, &shared))
            return manifest_nomem(c);
        snprintf(base, sizeof(base), "%s-", name);
    } else {
        snprintf(base, sizeof(base), "%s-", name);
    }

    for (i = 0; i < (size_t)replicas; i++) {
        struct kube_pod p = tp;
        char buf[352];

        p.labels = shared;
        if (k->id == MANIFEST_KIND_STATEFULSET) {
            char idx[24];
            struct kube_label l[2];

            snprintf(buf, sizeof(buf), "%s-%zu", name, i);
            snprintf(idx, sizeof(idx), "%zu", i);
            p.name = arena_strdup(&in->arena, buf);
            l[0].key = "apps.kubernetes.io/pod-index";
            l[0].value = arena_strdup(&in->arena, idx);
            l[1].key = "statefulset.kubernetes.io/pod-name";
            l[1].value = p.name;
            if (!p.name || !l[0].value || labels_with(&in->arena, &tp.labels, l, 2, &p.labels))
                return manifest_nomem(c);
        } else if (indexed) {
            char idx[24];
            struct kube_label l[3];

            snprintf(idx, sizeof(idx), "%zu", i);
            snprintf(buf, sizeof(buf), "%s-%zu-", name, i);
            p.name = manifest_generated_name(c, ns, buf, i);
            l[0].key = "batch.kubernetes.io/job-completion-index";
            l[0].value = arena_strdup(&in->arena, idx);
            l[1].key = "batch.kubernetes.io/job-name";
            l[1].value = tp.owner.name;
            l[2].key = "job-name";
            l[2].value = tp.owner.name;
            if (!p.name || !l[0].value || labels_with(&in->arena, &tp.labels, l, 3, &p.labels))
                return manifest_nomem(c);
        } else {
            p.name = manifest_generated_name(c, ns, base, i);
            if (!p.name)
                return manifest_fail(c, line, "metadata.name", -EEXIST,
                                     "cannot find a free name for a pod of %s %s", k->kind, name);
        }
        rc = manifest_append_pod(c, &p, line, "metadata.name");
        if (rc)
            return rc;
    }
    return 0;
}

/* ds_may_run: nodeShouldRunDaemonPod's predicates (nodeName, node affinity and selector,
 * taints with the DaemonSet tolerations). */
static bool ds_may_run(const struct kube_pod *p, const struct kube_node *n)
{
    size_t i, j;

    if (p->node_name && *p->node_name && strcmp(p->node_name, n->name))
        return false;
    for (i = 0; i < p->node_selector.n; i++) {
        const char *v = kube_labels_get(&n->labels, p->node_selector.v[i].key);

        if (!v || strcmp(v, p->node_selector.v[i].value))
            return false;
    }
    if (p->has_required_affinity && !kube_node_selector_matches(&p->required, n))
        return false;
    for (i = 0; i < n->ntaints; i++) {
        const struct kube_taint *t = &n->taints[i];

        if (t->effect != KUBE_EFFECT_NO_SCHEDULE && t->effect != KUBE_EFFECT_NO_EXECUTE)
            continue;
        for (j = 0; j < p->ntolerations; j++)
            if (kube_toleration_tolerates(&p->tolerations[j], t))
                break;
        if (j == p->ntolerations)
            return false;
    }
    return true;
}

/* ds_add_tolerations: AddOrUpdateDaemonPodTolerations. A toleration equal in key, operator,
 * value and effect is replaced (losing tolerationSeconds), others are appended. */
static int ds_add_tolerations(struct arena *a, struct kube_pod *p)
{
    static const struct {
        const char *key;
        enum kube_taint_effect effect;
    } defaults[] = {
        {"node.kubernetes.io/not-ready", KUBE_EFFECT_NO_EXECUTE},
        {"node.kubernetes.io/unreachable", KUBE_EFFECT_NO_EXECUTE},
        {"node.kubernetes.io/disk-pressure", KUBE_EFFECT_NO_SCHEDULE},
        {"node.kubernetes.io/memory-pressure", KUBE_EFFECT_NO_SCHEDULE},
        {"node.kubernetes.io/pid-pressure", KUBE_EFFECT_NO_SCHEDULE},
        {"node.kubernetes.io/unschedulable", KUBE_EFFECT_NO_SCHEDULE},
        {"node.kubernetes.io/network-unavailable", KUBE_EFFECT_NO_SCHEDULE},
    };
    size_t nd = sizeof(defaults) / sizeof(defaults[0]) - (p->host_network ? 0 : 1);
    struct kube_toleration *v = arena_alloc(a, (p->ntolerations + nd) * sizeof(*v));
    size_t n = p->ntolerations, i, j;

    if (!v)
        return -ENOMEM;
    if (n)
        memcpy(v, p->tolerations, n * sizeof(*v));
    for (i = 0; i < nd; i++) {
        for (j = 0; j < n; j++)
            if (v[j].op == KUBE_TOL_EXISTS && !strcmp(v[j].key, defaults[i].key) && !*v[j].value &&
                v[j].effect == defaults[i].effect)
                break;
        if (j == n) {
            memset(&v[n], 0, sizeof(v[n]));
            n++;
        }
        v[j].key = defaults[i].key;
        v[j].op = KUBE_TOL_EXISTS;
        v[j].value = "";
        v[j].effect = defaults[i].effect;
        v[j].has_seconds = false;
        v[j].seconds = 0;
    }
    p->tolerations = v;
    p->ntolerations = n;
    return 0;
}

/* ds_pin: ReplaceDaemonSetPodNodeNameNodeAffinity: the required terms become the single term
 * matchFields metadata.name In [node]. */
static int ds_pin(struct arena *a, struct kube_pod *p, const char *node)
{
    struct kube_node_selector_term *t = arena_alloc(a, sizeof(*t));
    struct kube_requirement *r = arena_alloc(a, sizeof(*r));
    const char **vals = arena_alloc(a, sizeof(*vals));

    /* a copy: the nodes may be trimmed away before the pods are used */
    node = arena_strdup(a, node);
    if (!t || !r || !vals || !node)
        return -ENOMEM;
    vals[0] = node;
    r->key = "metadata.name";
    r->op = KUBE_OP_IN;
    r->values = vals;
    r->nvalues = 1;
    t->fields = r;
    t->nfields = 1;
    p->required.terms = t;
    p->required.nterms = 1;
    p->has_required_affinity = true;
    return 0;
}

int manifest_finish_daemonsets(struct manifest_input *in, struct err *err)
{
    struct manifest_input_priv *pv = in->priv;
    struct manifest_ctx c;
    size_t first = in->npods, d, i, k, from;
    struct kube_pod *merged = NULL;
    size_t *count = NULL;
    int rc = 0;

    memset(&c, 0, sizeof(c));
    c.in = in;
    c.err = err;
    count = calloc(pv->nds ? pv->nds : 1, sizeof(*count));
    if (!count)
        return err_set(err, -ENOMEM, "out of memory");
    for (d = 0; d < pv->nds; d++) {
        struct kube_pod *tp = &pv->ds[d].tmpl;
        char base[320];

        c.file = tp->source_file;
        if (ds_add_tolerations(&in->arena, tp)) {
            rc = manifest_nomem(&c);
            goto out;
        }
        snprintf(base, sizeof(base), "%s-", tp->owner.name);
        for (i = 0; i < in->nnodes; i++) {
            struct kube_pod p;

            if (!ds_may_run(tp, &in->nodes[i]))
                continue;
            p = *tp;
            p.name = manifest_generated_name(&c, p.namespace_, base, i);
            if (!p.name || ds_pin(&in->arena, &p, in->nodes[i].name)) {
                rc = manifest_nomem(&c);
                goto out;
            }
            rc = manifest_append_pod(&c, &p, tp->source_line, NULL);
            if (rc)
                goto out;
            count[d]++;
        }
        if (in->opts.keep_objects)
            in->objects[pv->ds[d].object].npods = count[d];
    }
    if (in->npods == first)
        goto out;
    /* move each DaemonSet's pods to where the DaemonSet appeared */
    merged = malloc(in->npods * sizeof(*merged));
    if (!merged) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    k = 0;
    from = first;
    i = 0;
    for (d = 0; d <= pv->nds; d++) {
        size_t pos = d < pv->nds ? pv->ds[d].pos : first;

        while (i < pos)
            merged[k++] = in->pods[i++];
        if (d < pv->nds) {
            memcpy(&merged[k], &in->pods[from], count[d] * sizeof(*merged));
            k += count[d];
            from += count[d];
        }
    }
    memcpy(in->pods, merged, in->npods * sizeof(*merged));
    if (manifest_set_rebuild(in, &pv->pod_set, 1, in->npods, 0))
        rc = err_set(err, -ENOMEM, "out of memory");
out:
    free(merged);
    free(count);
    return rc;
}
