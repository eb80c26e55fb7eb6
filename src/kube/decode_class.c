/* decode_class.c - the scheduling classes and the objects around pods: PriorityClass,
 * RuntimeClass, PodDisruptionBudget, Namespace. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/decode-int.h"

int kube_runtime_class_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                              const char *file, struct kube_runtime_class *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *ov, *sch;
    const char *uid, *rv;
    struct kube_labels labels;
    struct dec_res_list fixed = {NULL, 0, NULL, {{0}}};
    size_t old;
    int rc;

    dec_init(&d, a, lines, file, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_source(&d, obj, NULL, NULL)))
        return rc;
    rc = dec_metadata(&d, obj, &meta, &out->name, &uid, &rv, &labels);
    if (rc)
        return rc;
    if (!out->name[0]) {
        old = dec_push(&d, "metadata.name");
        rc = dec_fail(&d, NULL, meta ? meta : obj, "Required value: name is required");
        dec_pop(&d, old);
        return rc;
    }
    ov = json_object_get(obj, "overhead");
    if (ov && !json_is_null(ov)) {
        if (!json_is_object(ov)) {
            old = dec_push(&d, "overhead");
            rc = dec_fail(&d, ov, obj, "Invalid value: expected an object");
            dec_pop(&d, old);
            return rc;
        }
        old = dec_push(&d, "overhead");
        rc = dec_res_list(&d, ov, "podFixed", false, &fixed);
        if (!rc)
            rc = dec_res_list_build(&d, &fixed, &out->overhead);
        dec_res_list_release(&fixed);
        dec_pop(&d, old);
        if (rc)
            return rc;
        out->has_overhead = json_object_get(ov, "podFixed") != NULL;
    }
    sch = json_object_get(obj, "scheduling");
    out->has_scheduling =
        json_is_object(sch) && (json_object_size(json_object_get(sch, "nodeSelector")) ||
                                json_array_size(json_object_get(sch, "tolerations")));
    return 0;
}

int kube_namespace_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                          const char *file, struct kube_namespace *out, struct err *err)
{
    struct dec d;
    const json_t *meta;
    const char *uid, *rv;
    struct kube_labels l;
    size_t old, i;
    int rc;

    dec_init(&d, a, lines, file, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_source(&d, obj, NULL, NULL)))
        return rc;
    rc = dec_metadata(&d, obj, &meta, &out->name, &uid, &rv, &l);
    if (rc)
        return rc;
    if (!out->name[0]) {
        old = dec_push(&d, "metadata.name");
        rc = dec_fail(&d, NULL, meta ? meta : obj,
                      "Required value: name or generateName is required");
        dec_pop(&d, old);
        return rc;
    }
    /* SetDefaults_Namespace: kubernetes.io/metadata.name is always the name */
    if (!(out->labels.v = arena_alloc(a, (l.n + 1) * sizeof(*out->labels.v))))
        return dec_nomem(&d);
    for (i = 0; i < l.n; i++)
        if (strcmp(l.v[i].key, "kubernetes.io/metadata.name"))
            out->labels.v[out->labels.n++] = l.v[i];
    out->labels.v[out->labels.n].key = "kubernetes.io/metadata.name";
    out->labels.v[out->labels.n++].value = out->name;
    qsort(out->labels.v, out->labels.n, sizeof(*out->labels.v), dec_cmp_label);
    return 0;
}

int kube_priority_class_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                               const char *file, struct kube_priority_class *out, struct err *err)
{
    struct dec d;
    const json_t *meta;
    const char *uid, *rv, *policy;
    struct kube_labels labels;
    int64_t value = 0;
    bool has_value;
    char q[128];
    size_t old;
    int rc;

    dec_init(&d, a, lines, file, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_source(&d, obj, NULL, NULL)))
        return rc;
    rc = dec_metadata(&d, obj, &meta, &out->name, &uid, &rv, &labels);
    if (!rc)
        rc = dec_int(&d, obj, "value", INT32_MIN, INT32_MAX, &value, &has_value);
    if (!rc)
        rc = dec_bool(&d, obj, "globalDefault", &out->global_default);
    if (!rc)
        rc = dec_string(&d, obj, "preemptionPolicy", &policy, "");
    if (rc)
        return rc;
    if (!out->name[0]) {
        old = dec_push(&d, "metadata.name");
        rc = dec_fail(&d, NULL, meta ? meta : obj,
                      "Required value: name or generateName is required");
        dec_pop(&d, old);
        return rc;
    }
    if (!has_value) {
        old = dec_push(&d, "value");
        rc = dec_fail(&d, NULL, obj, "Required value");
        dec_pop(&d, old);
        return rc;
    }
    if (policy[0] && strcmp(policy, "Never") && strcmp(policy, "PreemptLowerPriority")) {
        old = dec_push(&d, "preemptionPolicy");
        rc =
            dec_fail(&d, json_object_get(obj, "preemptionPolicy"), obj,
                     "Unsupported value: %s: supported values: \"Never\", \"PreemptLowerPriority\"",
                     dec_quote(policy, q, sizeof(q)));
        dec_pop(&d, old);
        return rc;
    }
    out->value = (int32_t)value;
    out->preempt_never = !strcmp(policy, "Never");
    return 0;
}

int kube_pdb_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                    const char *file, struct kube_pdb *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *spec = NULL, *status = NULL, *disrupted;
    const char *uid, *rv;
    struct kube_labels labels;
    int64_t allowed = 0;
    bool has_allowed;
    size_t old;
    int rc;

    dec_init(&d, a, lines, file, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_source(&d, obj, &out->source_line, &out->source_file)))
        return rc;
    rc = dec_metadata(&d, obj, &meta, &out->name, &uid, &rv, &labels);
    if (rc)
        return rc;
    out->namespace_ = "default";
    if (meta) {
        old = dec_push(&d, "metadata");
        rc = dec_string(&d, meta, "namespace", &out->namespace_, "default");
        if (!rc && !out->namespace_[0])
            out->namespace_ = "default";
        dec_pop(&d, old);
        if (rc)
            return rc;
    }
    rc = dec_object(&d, obj, "spec", &spec);
    if (!rc)
        rc = dec_object(&d, obj, "status", &status);
    if (rc)
        return rc;
    if (spec) {
        old = dec_push(&d, "spec.selector");
        rc = kube_label_selector_decode(json_object_get(spec, "selector"), a, lines, file,
                                        &out->selector, err);
        dec_pop(&d, old);
        if (rc)
            return rc;
    }
    if (status) {
        old = dec_push(&d, "status");
        rc =
            dec_int(&d, status, "disruptionsAllowed", INT32_MIN, INT32_MAX, &allowed, &has_allowed);
        if (!rc)
            rc = dec_object(&d, status, "disruptedPods", &disrupted);
        if (!rc && disrupted && json_object_size(disrupted)) {
            const char *k;
            json_t *v;
            out->disrupted_pods = arena_alloc(a, json_object_size(disrupted) * sizeof(char *));
            if (!out->disrupted_pods)
                rc = dec_nomem(&d);
            json_object_foreach((json_t *)disrupted, k, v)
            {
                if (rc)
                    break;
                if (!(out->disrupted_pods[out->ndisrupted_pods++] = arena_strdup(a, k)))
                    rc = dec_nomem(&d);
            }
        }
        dec_pop(&d, old);
        if (rc)
            return rc;
    }
    out->disruptions_allowed = (int32_t)allowed;
    return 0;
}
