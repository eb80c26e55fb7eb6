/* decode_workload.c - the controllers of pods (Deployment, ReplicaSet, StatefulSet, DaemonSet,
 * Job, ReplicationController): replicas, selector and Job settings with the API server's
 * validation, and the pod template read as the pod the controller creates. What the
 * controllers then do with them (the pods they create, their names) is the loader's
 * (manifest/workload.c). */
#include <errno.h>
#include <string.h>

#include "kube/decode-int.h"
#include "kube/labels.h"

/* The Go types of the fields (decode-int.h) */
static const struct dec_type dec_t_deployment_spec;
static const struct dec_type dec_t_replica_set_spec;
static const struct dec_type dec_t_stateful_set_spec;
static const struct dec_type dec_t_daemon_set_spec;
static const struct dec_type dec_t_job_spec;
static const struct dec_type dec_t_replication_controller_spec;
static const struct dec_type dec_t_pod_template_spec;

static const struct dec_field dec_t_deployment_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.DeploymentSpec", &dec_t_deployment_spec},
    {"status", DEC_OBJ, 0, "v1.DeploymentStatus", NULL},
};
const struct dec_type dec_t_deployment = DEC_TYPE("Deployment", dec_t_deployment_fields);

static const struct dec_field dec_t_deployment_spec_fields[] = {
    {"minReadySeconds", DEC_INT32, 0, "int32", NULL},
    {"paused", DEC_BOOL, 0, "bool", NULL},
    {"progressDeadlineSeconds", DEC_INT32, 0, "int32", NULL},
    {"replicas", DEC_INT32, 0, "int32", NULL},
    {"revisionHistoryLimit", DEC_INT32, 0, "int32", NULL},
    {"selector", DEC_OBJ, 0, "v1.LabelSelector", &dec_t_label_selector},
    {"strategy", DEC_OBJ, 0, "v1.DeploymentStrategy", NULL},
    {"template", DEC_OBJ, 0, "v1.PodTemplateSpec", &dec_t_pod_template_spec},
};
static const struct dec_type dec_t_deployment_spec =
    DEC_TYPE("DeploymentSpec", dec_t_deployment_spec_fields);

static const struct dec_field dec_t_replica_set_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.ReplicaSetSpec", &dec_t_replica_set_spec},
    {"status", DEC_OBJ, 0, "v1.ReplicaSetStatus", NULL},
};
const struct dec_type dec_t_replica_set = DEC_TYPE("ReplicaSet", dec_t_replica_set_fields);

static const struct dec_field dec_t_replica_set_spec_fields[] = {
    {"minReadySeconds", DEC_INT32, 0, "int32", NULL},
    {"replicas", DEC_INT32, 0, "int32", NULL},
    {"selector", DEC_OBJ, 0, "v1.LabelSelector", &dec_t_label_selector},
    {"template", DEC_OBJ, 0, "v1.PodTemplateSpec", &dec_t_pod_template_spec},
};
static const struct dec_type dec_t_replica_set_spec =
    DEC_TYPE("ReplicaSetSpec", dec_t_replica_set_spec_fields);

static const struct dec_field dec_t_stateful_set_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.StatefulSetSpec", &dec_t_stateful_set_spec},
    {"status", DEC_OBJ, 0, "v1.StatefulSetStatus", NULL},
};
const struct dec_type dec_t_stateful_set = DEC_TYPE("StatefulSet", dec_t_stateful_set_fields);

static const struct dec_field dec_t_stateful_set_spec_fields[] = {
    {"minReadySeconds", DEC_INT32, 0, "int32", NULL},
    {"ordinals", DEC_OBJ, 0, "v1.StatefulSetOrdinals", NULL},
    {"persistentVolumeClaimRetentionPolicy", DEC_OBJ, 0,
     "v1.StatefulSetPersistentVolumeClaimRetentionPolicy", NULL},
    {"podManagementPolicy", DEC_STR, 0, "v1.PodManagementPolicyType", NULL},
    {"replicas", DEC_INT32, 0, "int32", NULL},
    {"revisionHistoryLimit", DEC_INT32, 0, "int32", NULL},
    {"selector", DEC_OBJ, 0, "v1.LabelSelector", &dec_t_label_selector},
    {"serviceName", DEC_STR, 0, "string", NULL},
    {"template", DEC_OBJ, 0, "v1.PodTemplateSpec", &dec_t_pod_template_spec},
    {"updateStrategy", DEC_OBJ, 0, "v1.StatefulSetUpdateStrategy", NULL},
    {"volumeClaimTemplates", DEC_ARR, DEC_OBJ, "[]v1.PersistentVolumeClaim",
     &dec_t_persistent_volume_claim},
};
static const struct dec_type dec_t_stateful_set_spec =
    DEC_TYPE("StatefulSetSpec", dec_t_stateful_set_spec_fields);

static const struct dec_field dec_t_daemon_set_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.DaemonSetSpec", &dec_t_daemon_set_spec},
    {"status", DEC_OBJ, 0, "v1.DaemonSetStatus", NULL},
};
const struct dec_type dec_t_daemon_set = DEC_TYPE("DaemonSet", dec_t_daemon_set_fields);

static const struct dec_field dec_t_daemon_set_spec_fields[] = {
    {"minReadySeconds", DEC_INT32, 0, "int32", NULL},
    {"revisionHistoryLimit", DEC_INT32, 0, "int32", NULL},
    {"selector", DEC_OBJ, 0, "v1.LabelSelector", &dec_t_label_selector},
    {"template", DEC_OBJ, 0, "v1.PodTemplateSpec", &dec_t_pod_template_spec},
    {"updateStrategy", DEC_OBJ, 0, "v1.DaemonSetUpdateStrategy", NULL},
};
static const struct dec_type dec_t_daemon_set_spec =
    DEC_TYPE("DaemonSetSpec", dec_t_daemon_set_spec_fields);

static const struct dec_field dec_t_job_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.JobSpec", &dec_t_job_spec},
    {"status", DEC_OBJ, 0, "v1.JobStatus", NULL},
};
const struct dec_type dec_t_job = DEC_TYPE("Job", dec_t_job_fields);

static const struct dec_field dec_t_job_spec_fields[] = {
    {"activeDeadlineSeconds", DEC_INT64, 0, "int64", NULL},
    {"backoffLimit", DEC_INT32, 0, "int32", NULL},
    {"backoffLimitPerIndex", DEC_INT32, 0, "int32", NULL},
    {"completionMode", DEC_STR, 0, "v1.CompletionMode", NULL},
    {"completions", DEC_INT32, 0, "int32", NULL},
    {"managedBy", DEC_STR, 0, "string", NULL},
    {"manualSelector", DEC_BOOL, 0, "bool", NULL},
    {"maxFailedIndexes", DEC_INT32, 0, "int32", NULL},
    {"parallelism", DEC_INT32, 0, "int32", NULL},
    {"podFailurePolicy", DEC_OBJ, 0, "v1.PodFailurePolicy", NULL},
    {"podReplacementPolicy", DEC_STR, 0, "v1.PodReplacementPolicy", NULL},
    {"scheduling", DEC_OBJ, 0, "v1.JobSchedulingConfiguration", NULL},
    {"selector", DEC_OBJ, 0, "v1.LabelSelector", &dec_t_label_selector},
    {"successPolicy", DEC_OBJ, 0, "v1.SuccessPolicy", NULL},
    {"suspend", DEC_BOOL, 0, "bool", NULL},
    {"template", DEC_OBJ, 0, "v1.PodTemplateSpec", &dec_t_pod_template_spec},
    {"ttlSecondsAfterFinished", DEC_INT32, 0, "int32", NULL},
};
static const struct dec_type dec_t_job_spec = DEC_TYPE("JobSpec", dec_t_job_spec_fields);

static const struct dec_field dec_t_replication_controller_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.ReplicationControllerSpec", &dec_t_replication_controller_spec},
    {"status", DEC_OBJ, 0, "v1.ReplicationControllerStatus", NULL},
};
const struct dec_type dec_t_replication_controller =
    DEC_TYPE("ReplicationController", dec_t_replication_controller_fields);

static const struct dec_field dec_t_replication_controller_spec_fields[] = {
    {"minReadySeconds", DEC_INT32, 0, "int32", NULL},
    {"replicas", DEC_INT32, 0, "int32", NULL},
    {"selector", DEC_MAP, DEC_STR, "map[string]string", NULL},
    {"template", DEC_OBJ, 0, "v1.PodTemplateSpec", &dec_t_pod_template_spec},
};
static const struct dec_type dec_t_replication_controller_spec =
    DEC_TYPE("ReplicationControllerSpec", dec_t_replication_controller_spec_fields);

static const struct dec_field dec_t_pod_template_spec_fields[] = {
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.PodSpec", &dec_t_pod_spec},
};
static const struct dec_type dec_t_pod_template_spec =
    DEC_TYPE("PodTemplateSpec", dec_t_pod_template_spec_fields);

/* The kinds, with their Go types and where their selector is required */
static const struct {
    const char *kind;
    const struct dec_type *type;
    bool set_form; /* spec.selector is a label set (map), else a metav1.LabelSelector */
    bool replicas; /* spec.replicas is read */
    bool apps;     /* in the apps/ group: the selector is required, not empty, and selects
                       the template's labels */
} workloads[] = {
    {"Deployment", &dec_t_deployment, false, true, true},
    {"ReplicaSet", &dec_t_replica_set, false, true, true},
    {"StatefulSet", &dec_t_stateful_set, false, true, true},
    {"DaemonSet", &dec_t_daemon_set, false, false, true},
    {"Job", &dec_t_job, false, false, false},
    {"ReplicationController", &dec_t_replication_controller, true, true, false},
    {"Service", &dec_t_service, true, false, false}, /* kube_spec_selector_decode only */
};

static size_t workload_find(const char *kind)
{
    size_t i;

    for (i = 0; i < sizeof(workloads) / sizeof(workloads[0]) - 1; i++)
        if (!strcmp(workloads[i].kind, kind))
            break;
    return i; /* the last (Service) for any other kind */
}

/* spec_int reads a non-negative int32 of spec (*out keeps its default when unset) */
static int spec_int(struct dec *d, const json_t *spec, const char *key, int64_t *out)
{
    bool present;
    int64_t v;
    int rc = dec_int(d, spec, key, 0, INT32_MAX, &v, &present);

    if (!rc && present)
        *out = v;
    return rc;
}

int dec_spec_selector(struct dec *d, const json_t *spec, bool set_form, bool validate,
                      struct kube_label_selector *out)
{
    const json_t *sel = json_object_get(spec, "selector");
    struct kube_labels set;
    size_t old, i;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!set_form) {
        old = dec_push(d, "selector");
        rc = dec_label_selector(d, sel, out);
        dec_pop(d, old);
        return rc;
    }
    if (!sel || json_is_null(sel))
        return 0;
    if ((rc = dec_labels(d, spec, "selector", validate, &set)))
        return rc;
    out->present = true;
    if (!set.n)
        return 0;
    if (!(out->reqs = arena_alloc(d->a, set.n * sizeof(*out->reqs))))
        return dec_nomem(d);
    for (i = 0; i < set.n; i++) {
        const char **v = arena_alloc(d->a, sizeof(*v));

        if (!v)
            return dec_nomem(d);
        v[0] = set.v[i].value;
        out->reqs[i].key = set.v[i].key;
        out->reqs[i].op = KUBE_OP_IN;
        out->reqs[i].values = v;
        out->reqs[i].nvalues = 1;
    }
    out->nreqs = set.n;
    return 0;
}

int kube_spec_selector_decode(const json_t *obj, const char *kind, struct arena *a,
                              const struct kube_decode_opts *o, struct kube_label_selector *out,
                              struct err *err)
{
    size_t k = workload_find(kind);
    const json_t *spec;
    struct dec d;
    size_t old;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_begin(&d, obj, workloads[k].type, NULL, NULL)) ||
        (rc = dec_object(&d, obj, "spec", &spec)) || !spec)
        return rc;
    old = dec_push(&d, "spec");
    rc = dec_spec_selector(&d, spec, workloads[k].set_form, true, out);
    dec_pop(&d, old);
    return rc;
}

/* required fails on the missing field key of obj (at the current path) */
static int required(struct dec *d, const json_t *obj, const char *key, const char *what)
{
    size_t old = dec_push(d, key);
    int rc = dec_fail(d, NULL, obj, "Required value%s%s", what ? ": " : "", what ? what : "");

    dec_pop(d, old);
    return rc;
}

/* job reads a Job's parallelism (into replicas), completions, completionMode and suspend */
static int job(struct dec *d, const json_t *spec, struct kube_workload *out)
{
    const char *mode;
    int rc;

    if ((rc = spec_int(d, spec, "parallelism", &out->replicas)) ||
        (rc = spec_int(d, spec, "completions", &out->completions)) ||
        (rc = dec_peek(d, spec, "completionMode", &mode)) ||
        (rc = dec_bool(d, spec, "suspend", &out->suspend)))
        return rc;
    out->indexed = !strcmp(mode, "Indexed");
    if (out->indexed && out->completions < 0)
        return required(d, spec, "completions", "when completion mode is Indexed");
    return 0;
}

int kube_workload_decode(const json_t *obj, const char *kind, const char *api_version,
                         struct arena *a, const struct kube_decode_opts *o,
                         struct kube_workload *out, struct err *err)
{
    size_t k = workload_find(kind);
    bool apps = workloads[k].apps && !strncmp(api_version, "apps/", 5);
    const json_t *meta, *spec, *tmpl, *sel, *labels;
    const char *uid, *rv;
    struct kube_labels ml;
    struct dec d;
    size_t old, o2;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    out->replicas = 1;
    out->completions = -1;
    out->namespace_ = "";
    if ((rc = dec_begin(&d, obj, workloads[k].type, NULL, NULL)) ||
        (rc = dec_metadata(&d, obj, &meta, &out->name, &uid, &rv, &ml)))
        return rc;
    old = dec_push(&d, "metadata");
    rc = dec_string(&d, meta, "namespace", &out->namespace_, "");
    if (!rc)
        rc = dec_controller(&d, meta, &out->controller, NULL);
    dec_pop(&d, old);
    if (!rc)
        rc = dec_object(&d, obj, "spec", &spec);
    if (rc)
        return rc;
    if (!spec)
        return required(&d, obj, "spec", NULL);
    old = dec_push(&d, "spec");
    if ((rc = dec_object(&d, spec, "template", &tmpl)))
        goto out;
    if (!tmpl) {
        rc = required(&d, spec, "template", NULL);
        goto out;
    }
    if (workloads[k].replicas)
        rc = spec_int(&d, spec, "replicas", &out->replicas);
    else if (!strcmp(kind, "Job"))
        rc = job(&d, spec, out);
    sel = json_object_get(spec, "selector");
    if (!rc && apps && (!sel || json_is_null(sel)))
        rc = required(&d, spec, "selector", NULL);
    else if (!rc && apps && json_is_object(sel) &&
             !json_object_size(json_object_get(sel, "matchLabels")) &&
             !json_array_size(json_object_get(sel, "matchExpressions"))) {
        o2 = dec_push(&d, "selector");
        rc = dec_fail(&d, sel, spec, "Invalid value: empty selector is invalid for %s", kind);
        dec_pop(&d, o2);
    }
    if (!rc && (apps || workloads[k].set_form))
        rc = dec_spec_selector(&d, spec, workloads[k].set_form, false, &out->selector);
    /* a ReplicationController's empty set: the API server takes the template's labels */
    if (!rc && workloads[k].set_form && !out->selector.nreqs)
        out->selector.present = false;
    if (!rc) {
        o2 = dec_push(&d, "template");
        rc = dec_pod(&d, tmpl, &dec_t_pod_template_spec, out->name, &out->tmpl);
        dec_pop(&d, o2);
    }
    if (!rc && out->selector.present &&
        !kube_label_selector_matches(&out->selector, &out->tmpl.labels)) {
        labels = json_object_get(json_object_get(tmpl, "metadata"), "labels");
        o2 = dec_push(&d, "template.metadata.labels");
        rc = dec_fail(&d, labels, tmpl,
                      "Invalid value: `selector` does not match template `labels`");
        dec_pop(&d, o2);
    }
out:
    dec_pop(&d, old);
    return rc;
}
