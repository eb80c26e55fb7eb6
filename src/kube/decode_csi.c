/* decode_csi.c - the storage.k8s.io/v1 objects of CSI drivers the volume plugins read:
 * CSINode (attach limits), CSIDriver, CSIStorageCapacity and VolumeAttachment, with the API
 * server's validation of the fields read. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kube/decode-int.h"
#include "kube/labels.h"

/* The Go types of the fields (decode-int.h) */
static const struct dec_type dec_t_csi_node_spec;
static const struct dec_type dec_t_csi_node_driver;
static const struct dec_type dec_t_volume_node_resources;
static const struct dec_type dec_t_csi_driver_spec;
static const struct dec_type dec_t_volume_attachment_spec;
static const struct dec_type dec_t_volume_attachment_source;

static const struct dec_field dec_t_csi_node_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.CSINodeSpec", &dec_t_csi_node_spec},
    {"status", DEC_OBJ, 0, "v1.CSINodeStatus", NULL},
};
const struct dec_type dec_t_csi_node = DEC_TYPE("CSINode", dec_t_csi_node_fields);

static const struct dec_field dec_t_csi_node_spec_fields[] = {
    {"drivers", DEC_ARR, DEC_OBJ, "[]v1.CSINodeDriver", &dec_t_csi_node_driver},
};
static const struct dec_type dec_t_csi_node_spec =
    DEC_TYPE("CSINodeSpec", dec_t_csi_node_spec_fields);

static const struct dec_field dec_t_csi_node_driver_fields[] = {
    {"allocatable", DEC_OBJ, 0, "v1.VolumeNodeResources", &dec_t_volume_node_resources},
    {"name", DEC_STR, 0, "string", NULL},
    {"nodeID", DEC_STR, 0, "string", NULL},
    {"topologyKeys", DEC_ARR, DEC_STR, "[]string", NULL},
};
static const struct dec_type dec_t_csi_node_driver =
    DEC_TYPE("CSINodeDriver", dec_t_csi_node_driver_fields);

static const struct dec_field dec_t_volume_node_resources_fields[] = {
    {"count", DEC_INT32, 0, "int32", NULL},
};
static const struct dec_type dec_t_volume_node_resources =
    DEC_TYPE("VolumeNodeResources", dec_t_volume_node_resources_fields);

static const struct dec_field dec_t_csi_driver_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.CSIDriverSpec", &dec_t_csi_driver_spec},
};
const struct dec_type dec_t_csi_driver = DEC_TYPE("CSIDriver", dec_t_csi_driver_fields);

static const struct dec_field dec_t_csi_driver_spec_fields[] = {
    {"attachRequired", DEC_BOOL, 0, "bool", NULL},
    {"fsGroupPolicy", DEC_STR, 0, "v1.FSGroupPolicy", NULL},
    {"nodeAllocatableUpdatePeriodSeconds", DEC_INT64, 0, "int64", NULL},
    {"podInfoOnMount", DEC_BOOL, 0, "bool", NULL},
    {"preventPodSchedulingIfMissing", DEC_BOOL, 0, "bool", NULL},
    {"requiresRepublish", DEC_BOOL, 0, "bool", NULL},
    {"seLinuxMount", DEC_BOOL, 0, "bool", NULL},
    {"serviceAccountTokenInSecrets", DEC_BOOL, 0, "bool", NULL},
    {"storageCapacity", DEC_BOOL, 0, "bool", NULL},
    {"tokenRequests", DEC_ARR, DEC_OBJ, "[]v1.TokenRequest", NULL},
    {"volumeLifecycleModes", DEC_ARR, DEC_STR, "[]v1.VolumeLifecycleMode", NULL},
};
static const struct dec_type dec_t_csi_driver_spec =
    DEC_TYPE("CSIDriverSpec", dec_t_csi_driver_spec_fields);

static const struct dec_field dec_t_csi_storage_capacity_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"capacity", DEC_QTY, 0, "resource.Quantity", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"maximumVolumeSize", DEC_QTY, 0, "resource.Quantity", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"nodeTopology", DEC_OBJ, 0, "v1.LabelSelector", &dec_t_label_selector},
    {"storageClassName", DEC_STR, 0, "string", NULL},
};
const struct dec_type dec_t_csi_storage_capacity =
    DEC_TYPE("CSIStorageCapacity", dec_t_csi_storage_capacity_fields);

static const struct dec_field dec_t_volume_attachment_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.VolumeAttachmentSpec", &dec_t_volume_attachment_spec},
    {"status", DEC_OBJ, 0, "v1.VolumeAttachmentStatus", NULL},
};
const struct dec_type dec_t_volume_attachment =
    DEC_TYPE("VolumeAttachment", dec_t_volume_attachment_fields);

static const struct dec_field dec_t_volume_attachment_spec_fields[] = {
    {"attacher", DEC_STR, 0, "string", NULL},
    {"nodeName", DEC_STR, 0, "string", NULL},
    {"source", DEC_OBJ, 0, "v1.VolumeAttachmentSource", &dec_t_volume_attachment_source},
};
static const struct dec_type dec_t_volume_attachment_spec =
    DEC_TYPE("VolumeAttachmentSpec", dec_t_volume_attachment_spec_fields);

static const struct dec_field dec_t_volume_attachment_source_fields[] = {
    {"inlineVolumeSpec", DEC_OBJ, 0, "v1.PersistentVolumeSpec", &dec_t_persistent_volume_spec},
    {"persistentVolumeName", DEC_STR, 0, "string", NULL},
};
static const struct dec_type dec_t_volume_attachment_source =
    DEC_TYPE("VolumeAttachmentSource", dec_t_volume_attachment_source_fields);

/* ---------------------------------------------------------------------------------------- */
/* storage.k8s.io/v1: CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment                */

/* csi_name_check: ValidateCSIDriverName on the string at the current path */
static int csi_name_check(struct dec *d, const char *name, const json_t *v, const json_t *parent)
{
    struct err e;
    char q[512];

    err_clear(&e);
    if (!name[0])
        return dec_fail(d, v, parent, "Required value");
    if (strlen(name) > 63)
        return dec_fail(d, v, parent, "Too long: may not be more than 63 bytes");
    {
        /* IsDNS1123Subdomain(strings.ToLower(name)) */
        char low[64];
        size_t i;
        for (i = 0; name[i]; i++)
            low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i]);
        low[i] = '\0';
        if (kube_dns_subdomain_validate(low, &e))
            return dec_fail(d, v, parent, "Invalid value: %s: %s", dec_quote(name, q, sizeof(q)),
                            e.msg);
    }
    return 0;
}

static int decode_csi_node_driver(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    struct kube_csi_node_driver *out = slot;
    size_t *seen = ctx; /* the drivers decoded before this one: out[-*seen..-1] */
    const json_t *alloc;
    const char *node_id;
    int64_t count;
    size_t old, i;
    char q[512];
    int rc;

    memset(out, 0, sizeof(*out));
    rc = dec_string(d, v, "name", &out->name, "");
    if (!rc) {
        old = dec_push(d, "name");
        rc = csi_name_check(d, out->name, json_object_get(v, "name"), v);
        for (i = 1; !rc && i <= *seen; i++)
            if (!strcmp(out[-(ptrdiff_t)i].name, out->name))
                rc = dec_fail(d, json_object_get(v, "name"), v, "Duplicate value: %s",
                              dec_quote(out->name, q, sizeof(q)));
        dec_pop(d, old);
    }
    if (!rc)
        rc = dec_peek(d, v, "nodeID", &node_id);
    if (!rc && !node_id[0]) {
        old = dec_push(d, "nodeID");
        rc = dec_fail(d, NULL, v, "Required value");
        dec_pop(d, old);
    }
    if (!rc)
        rc = dec_object(d, v, "allocatable", &alloc);
    if (!rc && alloc) {
        old = dec_push(d, "allocatable");
        rc = dec_int(d, alloc, "count", INT32_MIN, INT32_MAX, &count, &out->has_count);
        if (!rc && out->has_count && count < 0) {
            size_t o2 = dec_push(d, "count");
            rc = dec_fail(d, json_object_get(alloc, "count"), alloc,
                          "Invalid value: %lld: must be greater than or equal to 0",
                          (long long)count);
            dec_pop(d, o2);
        }
        out->count = (int32_t)count;
        dec_pop(d, old);
    }
    (*seen)++;
    return rc;
}

int kube_csi_node_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                         struct kube_csi_node *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *spec, *ann;
    size_t old, seen = 0;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    out->migrated_plugins = "";
    if ((rc = dec_begin(&d, obj, &dec_t_csi_node, &out->source_line, &out->source_file)) ||
        (rc = dec_named(&d, obj, &meta, &out->name, NULL)))
        return rc;
    old = dec_push(&d, "metadata");
    rc = dec_object(&d, meta, "annotations", &ann);
    if (!rc && ann) {
        size_t o2 = dec_push(&d, "annotations");
        rc = dec_string(&d, ann, "storage.alpha.kubernetes.io/migrated-plugins",
                        &out->migrated_plugins, "");
        dec_pop(&d, o2);
    }
    dec_pop(&d, old);
    if (!rc)
        rc = dec_object(&d, obj, "spec", &spec);
    if (rc || !spec)
        return rc;
    old = dec_push(&d, "spec");
    out->drivers = dec_list(&d, spec, "drivers", JSON_OBJECT, sizeof(*out->drivers),
                            decode_csi_node_driver, &seen, &out->ndrivers, &rc);
    dec_pop(&d, old);
    return rc;
}

int kube_csi_driver_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                           struct kube_csi_driver *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *spec;
    size_t old;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_begin(&d, obj, &dec_t_csi_driver, &out->source_line, &out->source_file)) ||
        (rc = dec_named(&d, obj, &meta, &out->name, NULL)))
        return rc;
    old = dec_push(&d, "metadata.name");
    rc = csi_name_check(&d, out->name, json_object_get(meta, "name"), meta);
    dec_pop(&d, old);
    if (!rc)
        rc = dec_object(&d, obj, "spec", &spec);
    if (rc || !spec)
        return rc;
    old = dec_push(&d, "spec");
    rc = dec_bool(&d, spec, "storageCapacity", &out->storage_capacity);
    if (!rc)
        rc = dec_bool(&d, spec, "preventPodSchedulingIfMissing", &out->prevent_if_missing);
    dec_pop(&d, old);
    return rc;
}

/* capacity_field reads a *resource.Quantity field of a CSIStorageCapacity: null leaves the
 * pointer nil (absent); below 0 refused when nonneg (capacity: maximumVolumeSize is not
 * validated by the API server, and a negative one is below every request) */
static int capacity_field(struct dec *d, const json_t *obj, const char *key, bool nonneg,
                          int64_t *out, bool *has)
{
    const json_t *v = json_object_get(obj, key);

    if (!v || json_is_null(v)) {
        *out = 0;
        *has = false;
        return 0;
    }
    return dec_storage(d, obj, key, nonneg, out, has);
}

int kube_csi_capacity_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                             struct kube_csi_capacity *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *topo;
    struct err e;
    char q[512];
    size_t old;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_begin(&d, obj, &dec_t_csi_storage_capacity, &out->source_line,
                        &out->source_file)) ||
        (rc = dec_named(&d, obj, &meta, &out->name, &out->namespace_)) ||
        (rc = dec_string(&d, obj, "storageClassName", &out->storage_class, "")))
        return rc;
    err_clear(&e);
    if (kube_dns_subdomain_validate(out->storage_class, &e)) {
        old = dec_push(&d, "storageClassName");
        rc = dec_fail(&d, json_object_get(obj, "storageClassName"), obj, "Invalid value: %s: %s",
                      dec_quote(out->storage_class, q, sizeof(q)), e.msg);
        dec_pop(&d, old);
        return rc;
    }
    topo = json_object_get(obj, "nodeTopology");
    if (topo && !json_is_null(topo)) {
        old = dec_push(&d, "nodeTopology");
        out->has_topology = true;
        rc = dec_label_selector(&d, topo, &out->topology);
        dec_pop(&d, old);
        if (rc)
            return rc;
    }
    if ((rc = capacity_field(&d, obj, "capacity", true, &out->capacity, &out->has_capacity)))
        return rc;
    return capacity_field(&d, obj, "maximumVolumeSize", false, &out->max_size, &out->has_max);
}

int kube_volume_attachment_decode(const json_t *obj, struct arena *a,
                                  const struct kube_decode_opts *o,
                                  struct kube_volume_attachment *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *spec, *src = NULL;
    const char *pv = NULL;
    size_t old, o2;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_begin(&d, obj, &dec_t_volume_attachment, &out->source_line, &out->source_file)) ||
        (rc = dec_named(&d, obj, &meta, &out->name, NULL)) ||
        (rc = dec_object(&d, obj, "spec", &spec)))
        return rc;
    old = dec_push(&d, "spec");
    rc = dec_string(&d, spec, "attacher", &out->attacher, "");
    if (!rc) {
        o2 = dec_push(&d, "attacher");
        rc = csi_name_check(&d, out->attacher, json_object_get(spec, "attacher"), spec);
        dec_pop(&d, o2);
    }
    if (!rc)
        rc = dec_object(&d, spec, "source", &src);
    if (!rc) {
        o2 = dec_push(&d, "source");
        rc = dec_string(&d, src, "persistentVolumeName", &pv, NULL);
        if (!rc && !pv && !json_is_object(json_object_get(src, "inlineVolumeSpec")))
            rc = dec_fail(&d, src, spec,
                          "Required value: must specify exactly one of inlineVolumeSpec and "
                          "persistentVolumeName");
        else if (!rc && pv && json_is_object(json_object_get(src, "inlineVolumeSpec")))
            rc = dec_fail(&d, src, spec,
                          "Forbidden: must specify exactly one of inlineVolumeSpec and "
                          "persistentVolumeName");
        else if (!rc && pv && !pv[0]) {
            size_t o3 = dec_push(&d, "persistentVolumeName");
            rc = dec_fail(&d, json_object_get(src, "persistentVolumeName"), src,
                          "Required value: must specify non empty persistentVolumeName");
            dec_pop(&d, o3);
        }
        dec_pop(&d, o2);
    }
    out->pv_name = pv;
    if (!rc)
        rc = dec_string(&d, spec, "nodeName", &out->node_name, "");
    if (!rc) {
        struct err e;
        char q[512];
        err_clear(&e);
        if (kube_dns_subdomain_validate(out->node_name, &e)) {
            o2 = dec_push(&d, "nodeName");
            rc = dec_fail(&d, json_object_get(spec, "nodeName"), spec, "Invalid value: %s: %s",
                          dec_quote(out->node_name, q, sizeof(q)), e.msg);
            dec_pop(&d, o2);
        }
    }
    dec_pop(&d, old);
    return rc;
}
