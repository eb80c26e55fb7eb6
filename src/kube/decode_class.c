/* decode_class.c - the scheduling classes and the objects around pods: PriorityClass,
 * RuntimeClass, PodDisruptionBudget, Namespace. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/decode-int.h"

/* The Go types of the fields (decode-int.h) */
static const struct dec_type dec_t_overhead;
static const struct dec_type dec_t_scheduling;
static const struct dec_type dec_t_pod_disruption_budget_spec;
static const struct dec_type dec_t_pod_disruption_budget_status;
static const struct dec_type dec_t_service_spec;

static const struct dec_field dec_t_priority_class_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"description", DEC_STR, 0, "string", NULL},
    {"globalDefault", DEC_BOOL, 0, "bool", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"preemptionPolicy", DEC_STR, 0, "v1.PreemptionPolicy", NULL},
    {"value", DEC_INT32, 0, "int32", NULL},
};
const struct dec_type dec_t_priority_class = DEC_TYPE("PriorityClass", dec_t_priority_class_fields);

static const struct dec_field dec_t_runtime_class_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"handler", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"overhead", DEC_OBJ, 0, "v1.Overhead", &dec_t_overhead},
    {"scheduling", DEC_OBJ, 0, "v1.Scheduling", &dec_t_scheduling},
};
const struct dec_type dec_t_runtime_class = DEC_TYPE("RuntimeClass", dec_t_runtime_class_fields);

static const struct dec_field dec_t_overhead_fields[] = {
    {"podFixed", DEC_MAP, DEC_QTY, "v1.ResourceList", NULL},
};
static const struct dec_type dec_t_overhead = DEC_TYPE("Overhead", dec_t_overhead_fields);

static const struct dec_field dec_t_scheduling_fields[] = {
    {"nodeSelector", DEC_MAP, DEC_STR, "map[string]string", NULL},
    {"tolerations", DEC_ARR, DEC_OBJ, "[]v1.Toleration", &dec_t_toleration},
};
static const struct dec_type dec_t_scheduling = DEC_TYPE("Scheduling", dec_t_scheduling_fields);

static const struct dec_field dec_t_pod_disruption_budget_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.PodDisruptionBudgetSpec", &dec_t_pod_disruption_budget_spec},
    {"status", DEC_OBJ, 0, "v1.PodDisruptionBudgetStatus", &dec_t_pod_disruption_budget_status},
};
const struct dec_type dec_t_pod_disruption_budget =
    DEC_TYPE("PodDisruptionBudget", dec_t_pod_disruption_budget_fields);

static const struct dec_field dec_t_pod_disruption_budget_spec_fields[] = {
    {"maxUnavailable", DEC_INTSTR, 0, "intstr.IntOrString", NULL},
    {"minAvailable", DEC_INTSTR, 0, "intstr.IntOrString", NULL},
    {"selector", DEC_OBJ, 0, "v1.LabelSelector", &dec_t_label_selector},
    {"unhealthyPodEvictionPolicy", DEC_STR, 0, "v1.UnhealthyPodEvictionPolicyType", NULL},
};
static const struct dec_type dec_t_pod_disruption_budget_spec =
    DEC_TYPE("PodDisruptionBudgetSpec", dec_t_pod_disruption_budget_spec_fields);

static const struct dec_field dec_t_pod_disruption_budget_status_fields[] = {
    {"conditions", DEC_ARR, DEC_OBJ, "[]v1.Condition", NULL},
    {"currentHealthy", DEC_INT32, 0, "int32", NULL},
    {"desiredHealthy", DEC_INT32, 0, "int32", NULL},
    {"disruptedPods", DEC_MAP, DEC_STR, "map[string]v1.Time", NULL},
    {"disruptionsAllowed", DEC_INT32, 0, "int32", NULL},
    {"expectedPods", DEC_INT32, 0, "int32", NULL},
    {"observedGeneration", DEC_INT64, 0, "int64", NULL},
};
static const struct dec_type dec_t_pod_disruption_budget_status =
    DEC_TYPE("PodDisruptionBudgetStatus", dec_t_pod_disruption_budget_status_fields);

static const struct dec_field dec_t_namespace_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.NamespaceSpec", NULL},
    {"status", DEC_OBJ, 0, "v1.NamespaceStatus", NULL},
};
const struct dec_type dec_t_namespace = DEC_TYPE("Namespace", dec_t_namespace_fields);

static const struct dec_field dec_t_service_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.ServiceSpec", &dec_t_service_spec},
    {"status", DEC_OBJ, 0, "v1.ServiceStatus", NULL},
};
const struct dec_type dec_t_service = DEC_TYPE("Service", dec_t_service_fields);

static const struct dec_field dec_t_service_spec_fields[] = {
    {"allocateLoadBalancerNodePorts", DEC_BOOL, 0, "bool", NULL},
    {"clusterIP", DEC_STR, 0, "string", NULL},
    {"clusterIPs", DEC_ARR, DEC_STR, "[]string", NULL},
    {"externalIPs", DEC_ARR, DEC_STR, "[]string", NULL},
    {"externalName", DEC_STR, 0, "string", NULL},
    {"externalTrafficPolicy", DEC_STR, 0, "v1.ServiceExternalTrafficPolicy", NULL},
    {"healthCheckNodePort", DEC_INT32, 0, "int32", NULL},
    {"internalTrafficPolicy", DEC_STR, 0, "v1.ServiceInternalTrafficPolicy", NULL},
    {"ipFamilies", DEC_ARR, DEC_STR, "[]v1.IPFamily", NULL},
    {"ipFamilyPolicy", DEC_STR, 0, "v1.IPFamilyPolicy", NULL},
    {"loadBalancerClass", DEC_STR, 0, "string", NULL},
    {"loadBalancerIP", DEC_STR, 0, "string", NULL},
    {"loadBalancerSourceRanges", DEC_ARR, DEC_STR, "[]string", NULL},
    {"ports", DEC_ARR, DEC_OBJ, "[]v1.ServicePort", NULL},
    {"publishNotReadyAddresses", DEC_BOOL, 0, "bool", NULL},
    {"selector", DEC_MAP, DEC_STR, "map[string]string", NULL},
    {"sessionAffinity", DEC_STR, 0, "v1.ServiceAffinity", NULL},
    {"sessionAffinityConfig", DEC_OBJ, 0, "v1.SessionAffinityConfig", NULL},
    {"trafficDistribution", DEC_STR, 0, "string", NULL},
    {"type", DEC_STR, 0, "v1.ServiceType", NULL},
};
static const struct dec_type dec_t_service_spec =
    DEC_TYPE("ServiceSpec", dec_t_service_spec_fields);

int kube_runtime_class_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                              struct kube_runtime_class *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *ov, *sch;
    const char *uid, *rv;
    struct kube_labels labels;
    struct dec_res_list fixed = {NULL, 0, NULL, {{0}}};
    size_t old;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_begin(&d, obj, &dec_t_runtime_class, NULL, NULL)))
        return rc;
    rc = dec_metadata(&d, obj, &meta, &out->name, &uid, &rv, &labels);
    if (rc)
        return rc;
    if ((rc = dec_name_required(&d, obj, meta, out->name, "name is required")))
        return rc;
    ov = json_object_get(obj, "overhead");
    if (ov && !json_is_null(ov)) {
        if (!json_is_object(ov))
            return dec_type_error(&d, obj, "overhead", ov, "v1.Overhead");
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

int kube_namespace_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                          struct kube_namespace *out, struct err *err)
{
    struct dec d;
    const json_t *meta;
    const char *uid, *rv;
    struct kube_labels l;
    size_t i;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_begin(&d, obj, &dec_t_namespace, NULL, NULL)))
        return rc;
    rc = dec_metadata(&d, obj, &meta, &out->name, &uid, &rv, &l);
    if (rc)
        return rc;
    if ((rc = dec_name_required(&d, obj, meta, out->name, "name or generateName is required")))
        return rc;
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

int kube_priority_class_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                               struct kube_priority_class *out, struct err *err)
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

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_begin(&d, obj, &dec_t_priority_class, NULL, NULL)))
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
    if ((rc = dec_name_required(&d, obj, meta, out->name, "name or generateName is required")))
        return rc;
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

int kube_pdb_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                    struct kube_pdb *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *spec = NULL, *status = NULL, *disrupted;
    const char *uid, *rv;
    struct kube_labels labels;
    int64_t allowed = 0;
    bool has_allowed;
    size_t old;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_begin(&d, obj, &dec_t_pod_disruption_budget, &out->source_line,
                        &out->source_file)))
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
        rc = dec_label_selector(&d, json_object_get(spec, "selector"), &out->selector);
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

int kube_service_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                        struct kube_service *out, struct err *err)
{
    const json_t *meta, *spec;
    const char *uid, *rv;
    struct kube_labels labels;
    struct dec d;
    size_t old;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_begin(&d, obj, &dec_t_service, NULL, NULL)) ||
        (rc = dec_metadata(&d, obj, &meta, &out->name, &uid, &rv, &labels)))
        return rc;
    old = dec_push(&d, "metadata");
    rc = dec_string(&d, meta, "namespace", &out->namespace_, "");
    dec_pop(&d, old);
    if (!rc)
        rc = dec_object(&d, obj, "spec", &spec);
    if (rc || !spec)
        return rc;
    old = dec_push(&d, "spec");
    rc = dec_spec_selector(&d, spec, true, true, &out->selector);
    dec_pop(&d, old);
    return rc;
}
