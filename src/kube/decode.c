/* decode.c - the decoder's getters (see decode-int.h) and what every object has: its type,
 * metadata and labels.
 *
 * Decoding is one pass over the JSON tree; everything kept is copied into the caller's arena.
 * (A manifest is walked once more first, by decode_check.c; the path and the errors are
 * decode_path.c's.) Every list of the object model is read by dec_list, so a list's element
 * type, path and length are handled in one place. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/quote.h"
#include "kube/decode-int.h"
#include "kube/labels.h"
#include "kube/yaml.h"

/* ---------------------------------------------------------------------------------------- */
/* Typed field getters. Absent and null both mean "unset", as in Go's decoder.                */

/* dec_no_nul fails on a string v of obj[key] that holds a NUL: C strings cannot */
int dec_no_nul(struct dec *d, const json_t *obj, const char *key, const json_t *v)
{
    char q[512];
    size_t old;
    int rc;

    if (strlen(json_string_value(v)) == json_string_length(v))
        return 0;
    old = key ? dec_push(d, key) : d->plen;
    rc = dec_fail(d, v, obj, "Invalid value: %s: must not contain a NUL character",
                  quote_go_to(q, sizeof(q), json_string_value(v), json_string_length(v)));
    dec_pop(d, old);
    return rc;
}

/* the decoded objects' strings are never written to: repeats may share one copy */
const char *dec_strdup(struct dec *d, const json_t *v)
{
    return arena_strndup_shared(d->a, json_string_value(v), json_string_length(v));
}

/* dec_string: obj[key] as a string copied into the arena, dflt when unset. */
int dec_string(struct dec *d, const json_t *obj, const char *key, const char **out,
               const char *dflt)
{
    const json_t *v = json_object_get(obj, key);
    int rc;

    *out = dflt;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return dec_type_error(d, obj, key, v, "string");
    if ((rc = dec_no_nul(d, obj, key, v)))
        return rc;
    *out = dec_strdup(d, v);
    return *out ? 0 : dec_nomem(d);
}

int dec_typed(struct dec *d, const json_t *obj, const char *key, json_type want, const char *go,
              const json_t **out)
{
    const json_t *v = json_object_get(obj, key);

    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (json_typeof(v) != want)
        return dec_type_error(d, obj, key, v, go);
    *out = v;
    return 0;
}

/* dec_peek: obj[key] as a string borrowed from the JSON ("" when unset), not copied. */
int dec_peek(struct dec *d, const json_t *obj, const char *key, const char **out)
{
    const json_t *v;
    int rc = dec_typed(d, obj, key, JSON_STRING, "string", &v);

    *out = v ? json_string_value(v) : "";
    if (!rc && v)
        rc = dec_no_nul(d, obj, key, v);
    return rc;
}

int dec_object(struct dec *d, const json_t *obj, const char *key, const json_t **out)
{
    return dec_typed(d, obj, key, JSON_OBJECT, "struct", out);
}

int dec_array(struct dec *d, const json_t *obj, const char *key, const json_t **out)
{
    return dec_typed(d, obj, key, JSON_ARRAY, "slice", out);
}

int dec_bool(struct dec *d, const json_t *obj, const char *key, bool *out)
{
    const json_t *v = json_object_get(obj, key);

    *out = false;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return dec_type_error(d, obj, key, v, "bool");
    *out = json_is_true(v);
    return 0;
}

void *dec_list(struct dec *d, const json_t *obj, const char *key, json_type want, size_t elem,
               dec_elem_fn fn, void *ctx, size_t *n, int *rc)
{
    const json_t *arr;
    char *out = NULL;
    size_t i, old;

    *n = 0;
    *rc = dec_array(d, obj, key, &arr);
    if (*rc || !arr || !json_array_size(arr))
        return NULL;
    if (elem && !(out = arena_alloc(d->a, json_array_size(arr) * elem))) {
        *rc = dec_nomem(d);
        return NULL;
    }
    old = dec_push(d, key);
    for (i = 0; i < json_array_size(arr); i++) {
        const json_t *v = json_array_get(arr, i);
        size_t o2 = dec_index(d, i);

        if (json_typeof(v) != want)
            *rc = dec_type_error(d, arr, NULL, v, want == JSON_STRING ? "string" : "struct");
        else
            *rc = fn(d, v, elem ? out + i * elem : NULL, ctx);
        dec_pop(d, o2);
        if (*rc)
            break;
        (*n)++;
    }
    dec_pop(d, old);
    return out;
}

/* dec_int: an integer field of Go type int32 (min INT32_MIN) or int64, at least min; *present
 * tells whether it was set. */
int dec_int(struct dec *d, const json_t *obj, const char *key, int64_t min, int64_t max,
            int64_t *out, bool *present)
{
    const json_t *v = json_object_get(obj, key);
    bool i32 = max == INT32_MAX;
    size_t old;
    int rc;

    *out = 0;
    if (present)
        *present = false;
    if (!v || json_is_null(v))
        return 0;
    if (!dec_json_int64(v, out) || *out > max || (i32 && *out < INT32_MIN)) {
        *out = 0;
        return dec_type_error(d, obj, key, v, i32 ? "int32" : "int64");
    }
    if (*out < min) {
        old = dec_push(d, key);
        rc = dec_fail(d, v, obj, "Invalid value: %lld: must be greater than or equal to %lld",
                      (long long)*out, (long long)min);
        dec_pop(d, old);
        return rc;
    }
    if (present)
        *present = true;
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Labels                                                                                     */

int dec_cmp_label(const void *x, const void *y)
{
    return strcmp(((const struct kube_label *)x)->key, ((const struct kube_label *)y)->key);
}

/* label_invalid validates a label key (key) or value of n bytes, as the API server's
 * ValidateLabels does; a NUL inside makes it invalid as the character it is. On an invalid
 * one, lerr has the message and q the quoted text. */
static bool label_invalid(const char *s, size_t n, bool key, struct err *lerr, char *q, size_t qn)
{
    char tmp[512];
    const char *c = s;
    bool bad;

    if (strlen(s) != n) {
        /* validate a copy whose NULs are another character no label may hold */
        size_t i, m = n < sizeof(tmp) - 1 ? n : sizeof(tmp) - 1;

        for (i = 0; i < m; i++)
            tmp[i] = s[i] ? s[i] : '\x01';
        tmp[m] = '\0';
        c = tmp;
    }
    bad = key ? kube_label_key_validate(c, lerr) != 0 : kube_label_value_validate(c, lerr) != 0;
    if (bad)
        quote_go_to(q, qn, s, n);
    return bad;
}

/* dec_labels reads a map of strings (metadata.labels, spec.nodeSelector) at obj[key],
 * validating keys and values like ValidateLabels when validate is set. Sorted by key. */
int dec_labels(struct dec *d, const json_t *obj, const char *key, bool validate,
               struct kube_labels *out)
{
    const json_t *m, *v;
    const char *k;
    size_t old, klen, n = 0;
    struct err lerr;
    char q[512];
    int rc;

    out->v = NULL;
    out->n = 0;
    rc = dec_object(d, obj, key, &m);
    if (rc || !m || !json_object_size(m))
        return rc;
    out->v = arena_alloc(d->a, json_object_size(m) * sizeof(*out->v));
    if (!out->v)
        return dec_nomem(d);
    old = dec_push(d, key);
    json_object_keylen_foreach((json_t *)m, k, klen, v)
    {
        const char *val = "";
        size_t vlen = 0;

        if (json_is_string(v)) {
            val = json_string_value(v);
            vlen = json_string_length(v);
        } else if (!json_is_null(v)) {
            rc = dec_type_error(d, m, k, v, "string");
            goto out;
        }
        if ((validate || strlen(k) != klen) && label_invalid(k, klen, true, &lerr, q, sizeof(q))) {
            rc = dec_fail(d, v, m, "Invalid value: %s: %s", q, lerr.msg);
            goto out;
        }
        if ((validate || strlen(val) != vlen) &&
            label_invalid(val, vlen, false, &lerr, q, sizeof(q))) {
            rc = dec_fail(d, v, m, "Invalid value: %s: %s", q, lerr.msg);
            goto out;
        }
        out->v[n].key = arena_strndup_shared(d->a, k, klen);
        out->v[n].value = json_is_string(v) ? dec_strdup(d, v) : "";
        if (!out->v[n].key || !out->v[n].value) {
            rc = dec_nomem(d);
            goto out;
        }
        n++;
    }
    qsort(out->v, n, sizeof(*out->v), dec_cmp_label);
    out->n = n;
out:
    dec_pop(d, old);
    return rc;
}

/* dec_str_elem reads one string of a list (namespaces, label keys). */
int dec_str_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    const char **out = slot;
    struct err lerr;
    char q[512];
    int rc;

    if (ctx &&
        label_invalid(json_string_value(v), json_string_length(v), true, &lerr, q, sizeof(q)))
        return dec_fail(d, v, NULL, "Invalid value: %s: %s", q, lerr.msg);
    if ((rc = dec_no_nul(d, NULL, NULL, v)))
        return rc;
    *out = dec_strdup(d, v);
    return *out ? 0 : dec_nomem(d);
}

/* ---------------------------------------------------------------------------------------- */
/* What every object has                                                                      */

static const struct dec_field owner_reference_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL}, {"blockOwnerDeletion", DEC_BOOL, 0, "bool", NULL},
    {"controller", DEC_BOOL, 0, "bool", NULL},  {"kind", DEC_STR, 0, "string", NULL},
    {"name", DEC_STR, 0, "string", NULL},       {"uid", DEC_STR, 0, "types.UID", NULL},
};
static const struct dec_type owner_reference = DEC_TYPE("OwnerReference", owner_reference_fields);

static const struct dec_field object_meta_fields[] = {
    {"annotations", DEC_MAP, DEC_STR, "map[string]string", NULL},
    {"creationTimestamp", DEC_STR, 0, "v1.Time", NULL},
    {"deletionGracePeriodSeconds", DEC_INT64, 0, "int64", NULL},
    {"deletionTimestamp", DEC_STR, 0, "v1.Time", NULL},
    {"finalizers", DEC_ARR, DEC_STR, "[]string", NULL},
    {"generateName", DEC_STR, 0, "string", NULL},
    {"generation", DEC_INT64, 0, "int64", NULL},
    {"labels", DEC_MAP, DEC_STR, "map[string]string", NULL},
    {"managedFields", DEC_ARR, DEC_OBJ, "[]v1.ManagedFieldsEntry", NULL},
    {"name", DEC_STR, 0, "string", NULL},
    {"namespace", DEC_STR, 0, "string", NULL},
    {"ownerReferences", DEC_ARR, DEC_OBJ, "[]v1.OwnerReference", &owner_reference},
    {"resourceVersion", DEC_STR, 0, "string", NULL},
    {"selfLink", DEC_STR, 0, "string", NULL},
    {"uid", DEC_STR, 0, "types.UID", NULL},
};
const struct dec_type dec_t_object_meta = DEC_TYPE("ObjectMeta", object_meta_fields);

int dec_metadata(struct dec *d, const json_t *obj, const json_t **meta_out, const char **name,
                 const char **uid, const char **rv, struct kube_labels *labels)
{
    const json_t *meta;
    size_t old;
    int rc;

    rc = dec_object(d, obj, "metadata", &meta);
    *meta_out = meta;
    if (rc)
        return rc;
    if (!meta) {
        *name = "";
        *uid = "";
        *rv = "";
        memset(labels, 0, sizeof(*labels));
        return 0;
    }
    old = dec_push(d, "metadata");
    rc = dec_string(d, meta, "name", name, "");
    if (!rc)
        rc = dec_string(d, meta, "uid", uid, "");
    if (!rc)
        rc = dec_string(d, meta, "resourceVersion", rv, "");
    if (!rc)
        rc = dec_labels(d, meta, "labels", true, labels);
    dec_pop(d, old);
    return rc;
}

int dec_name_required(struct dec *d, const json_t *obj, const json_t *meta, const char *name,
                      const char *what)
{
    size_t old;
    int rc;

    if (name[0])
        return 0;
    old = dec_push(d, "metadata.name");
    rc = dec_fail(d, NULL, meta ? meta : obj, "Required value: %s", what);
    dec_pop(d, old);
    return rc;
}

int dec_named(struct dec *d, const json_t *obj, const json_t **meta, const char **name,
              const char **ns)
{
    const char *uid, *rv;
    struct kube_labels labels;
    size_t old;
    int rc;

    if ((rc = dec_metadata(d, obj, meta, name, &uid, &rv, &labels)) ||
        (rc = dec_name_required(d, obj, *meta, *name, "name or generateName is required")))
        return rc;
    if (ns) {
        old = dec_push(d, "metadata");
        rc = dec_string(d, *meta, "namespace", ns, "default");
        if (!rc && !(*ns)[0])
            *ns = "default";
        dec_pop(d, old);
    }
    return rc;
}

int dec_controller(struct dec *d, const json_t *meta, struct kube_owner *out, const char **uid)
{
    const json_t *refs;
    size_t i;
    int rc;

    memset(out, 0, sizeof(*out));
    if (uid)
        *uid = "";
    rc = dec_array(d, meta, "ownerReferences", &refs);
    if (rc || !refs)
        return rc;
    for (i = 0; i < json_array_size(refs); i++) {
        const json_t *r = json_array_get(refs, i);

        if (!json_is_object(r) || !json_is_true(json_object_get(r, "controller")))
            continue;
        if (json_is_string(json_object_get(r, "kind")) &&
            json_is_string(json_object_get(r, "name"))) {
            const json_t *av = json_object_get(r, "apiVersion"), *u = json_object_get(r, "uid");

            out->kind = dec_strdup(d, json_object_get(r, "kind"));
            out->name = dec_strdup(d, json_object_get(r, "name"));
            out->api_version = json_is_string(av) ? dec_strdup(d, av) : "";
            if (uid && json_is_string(u))
                *uid = dec_strdup(d, u);
            if (!out->kind || !out->name || !out->api_version || (uid && !*uid))
                return dec_nomem(d);
        }
        break;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* The type of any object: kind and apiVersion, the names of its metadata                    */

/* the struct of TypeMeta kubectl reads first is anonymous: ".kind" */
static const struct dec_field type_meta_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
};
static const struct dec_type type_meta = DEC_TYPE("", type_meta_fields);

int kube_type_meta_decode(const json_t *obj, const struct kube_decode_opts *o, const char **kind,
                          const char **api_version, struct err *err)
{
    const json_t *k, *av;
    struct dec d;
    int rc;

    dec_init(&d, NULL, o, err);
    *kind = *api_version = NULL;
    if (!json_is_object(obj)) {
        /* kubectl's words: the anonymous struct it reads TypeMeta into first */
        char msg[256];

        snprintf(msg, sizeof(msg),
                 "json: cannot unmarshal %s into Go value of type struct { APIVersion string "
                 "\"json:\\\"apiVersion,omitempty\\\"\"; Kind string "
                 "\"json:\\\"kind,omitempty\\\"\" }",
                 obj ? dec_json_type_name(obj) : "nothing");
        return dec_fail_at(&d, obj, NULL, "", msg);
    }
    d.root = obj;
    d.root_type = &type_meta;
    if ((rc = dec_typed(&d, obj, "kind", JSON_STRING, "string", &k)) ||
        (rc = dec_typed(&d, obj, "apiVersion", JSON_STRING, "string", &av)))
        return rc;
    *kind = k ? json_string_value(k) : NULL;
    *api_version = av ? json_string_value(av) : NULL;
    return 0;
}

int kube_list_items_decode(const json_t *obj, const char *kind, const struct kube_decode_opts *o,
                           const json_t **items, struct err *err)
{
    static const struct dec_field fields[] = {
        {"apiVersion", DEC_STR, 0, "string", NULL},
        {"items", DEC_ARR, DEC_ANY, "[]runtime.RawExtension", NULL},
        {"kind", DEC_STR, 0, "string", NULL},
        {"metadata", DEC_OBJ, 0, "v1.ListMeta", NULL},
    };
    struct dec_type list = DEC_TYPE(kind, fields);
    struct dec d;

    dec_init(&d, NULL, o, err);
    d.root = obj;
    d.root_type = &list;
    return dec_typed(&d, obj, "items", JSON_ARRAY, "[]runtime.RawExtension", items);
}

/* The Go struct of every kind the decoder knows, for messages about its metadata. */
static const struct {
    const char *kind;
    const struct dec_type *type;
} kinds[] = {
    {"Pod", &dec_t_pod},
    {"Node", &dec_t_node},
    {"PriorityClass", &dec_t_priority_class},
    {"RuntimeClass", &dec_t_runtime_class},
    {"PodDisruptionBudget", &dec_t_pod_disruption_budget},
    {"Namespace", &dec_t_namespace},
    {"Service", &dec_t_service},
    {"Deployment", &dec_t_deployment},
    {"ReplicaSet", &dec_t_replica_set},
    {"StatefulSet", &dec_t_stateful_set},
    {"DaemonSet", &dec_t_daemon_set},
    {"Job", &dec_t_job},
    {"ReplicationController", &dec_t_replication_controller},
    {"PersistentVolumeClaim", &dec_t_persistent_volume_claim},
    {"PersistentVolume", &dec_t_persistent_volume},
    {"StorageClass", &dec_t_storage_class},
    {"CSINode", &dec_t_csi_node},
    {"CSIDriver", &dec_t_csi_driver},
    {"CSIStorageCapacity", &dec_t_csi_storage_capacity},
    {"VolumeAttachment", &dec_t_volume_attachment},
    {"DeviceClass", &dec_t_device_class},
    {"ResourceSlice", &dec_t_resource_slice},
    {"ResourceClaim", &dec_t_resource_claim},
    {"ResourceClaimTemplate", &dec_t_resource_claim_template},
    {"DeviceTaintRule", &dec_t_device_taint_rule},
};

int kube_object_names_decode(const json_t *obj, const char *kind, const struct kube_decode_opts *o,
                             struct kube_object_names *out, struct err *err)
{
    static const struct dec_field fields[] = {{"metadata", DEC_OBJ, 0, "v1.ObjectMeta", NULL}};
    static const char *const keys[] = {"name", "generateName", "namespace"};
    const char **outs[] = {&out->name, &out->generate_name, &out->namespace_};
    struct dec_type any = DEC_TYPE(kind, fields);
    const json_t *meta, *v;
    struct dec d;
    size_t i, old;
    int rc;

    dec_init(&d, NULL, o, err);
    memset(out, 0, sizeof(*out));
    d.root = obj;
    d.root_type = &any;
    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (!strcmp(kinds[i].kind, kind))
            d.root_type = kinds[i].type;
    if ((rc = dec_object(&d, obj, "metadata", &meta)) || !meta)
        return rc;
    old = dec_push(&d, "metadata");
    for (i = 0; i < 3 && !rc; i++)
        if (!(rc = dec_typed(&d, meta, keys[i], JSON_STRING, "string", &v)) && v)
            *outs[i] = json_string_value(v);
    dec_pop(&d, old);
    return rc;
}
