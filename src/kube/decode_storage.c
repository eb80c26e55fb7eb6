/* decode_storage.c - storage: the in-tree volume sources CSI migration translates, claim
 * templates, and the storage.k8s.io objects (CSINode, CSIDriver, CSIStorageCapacity,
 * VolumeAttachment). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kube/decode-int.h"
#include "kube/labels.h"

/* ---------------------------------------------------------------------------------------- */
/* In-tree volumes CSI migration translates, generic ephemeral volumes' claims               */

static const struct {
    const char *source;
    enum kube_intree plugin;
    const char *id; /* the field naming the volume */
} intree_sources[] = {
    {"awsElasticBlockStore", KUBE_INTREE_AWS_EBS, "volumeID"},
    {"gcePersistentDisk", KUBE_INTREE_GCE_PD, "pdName"},
    {"azureDisk", KUBE_INTREE_AZURE_DISK, "diskURI"},
    {"cinder", KUBE_INTREE_CINDER, "volumeID"},
    {"portworxVolume", KUBE_INTREE_PORTWORX, "volumeID"},
    {"azureFile", KUBE_INTREE_AZURE_FILE, "shareName"},
    {"vsphereVolume", KUBE_INTREE_VSPHERE, "volumePath"},
};

/* dec_intree reads the in-tree source of v (a pod volume or a PersistentVolume's spec), if
 * it has one CSI migration knows; out->plugin stays KUBE_INTREE_NONE otherwise */
int dec_intree(struct dec *d, const json_t *v, struct kube_inline_volume *out)
{
    size_t k, old;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    out->id = "";
    for (k = 0; k < sizeof(intree_sources) / sizeof(intree_sources[0]); k++) {
        const json_t *src = json_object_get(v, intree_sources[k].source);
        const char *kind;
        if (!json_is_object(src))
            continue;
        out->plugin = intree_sources[k].plugin;
        old = dec_push(d, intree_sources[k].source);
        rc = dec_string(d, src, intree_sources[k].id, &out->id, "");
        if (!rc && out->plugin == KUBE_INTREE_AZURE_DISK) {
            /* translation accepts kind Managed (the default) only */
            rc = dec_peek(d, src, "kind", &kind);
            out->azure_unmanaged = !rc && kind[0] && strcasecmp(kind, "Managed");
        }
        dec_pop(d, old);
        break;
    }
    return rc;
}

int kube_intree_decode(const json_t *v, struct arena *a, const struct kube_lines *lines,
                       const char *file, struct kube_inline_volume *out, struct err *err)
{
    struct dec d;

    dec_init(&d, a, lines, file, err);
    return dec_intree(&d, v, out);
}

/* dec_claim_template reads an ephemeral volume's volumeClaimTemplate into a claim (the
 * fields VolumeBinding reads), with the API server's validation of the spec */
int dec_claim_template(struct dec *d, const json_t *t, struct kube_pvc *c)
{
    static const char *const modes[] = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany",
                                        "ReadWriteOncePod"};
    const json_t *meta, *ann, *spec, *res = NULL, *req = NULL, *am, *m, *sel;
    const char *cls = NULL, *mode = "Filesystem", *beta;
    size_t old, o2, i, k;
    bool has = false;
    char q[256];
    int rc;

    c->volume_name = "";
    rc = dec_object(d, t, "metadata", &meta);
    if (!rc && meta)
        rc = dec_object(d, meta, "annotations", &ann);
    else
        ann = NULL;
    if (!rc)
        rc = dec_object(d, t, "spec", &spec);
    if (rc)
        return rc;
    old = dec_push(d, "spec");
    if (!spec) {
        rc = dec_fail(d, NULL, t, "Required value");
        goto out;
    }
    rc = dec_string(d, spec, "storageClassName", &cls, NULL);
    if (!rc)
        rc = dec_string(d, spec, "volumeName", &c->volume_name, "");
    if (!rc)
        rc = dec_string(d, spec, "volumeMode", &mode, "Filesystem");
    if (!rc && strcmp(mode, "Filesystem") && strcmp(mode, "Block")) {
        o2 = dec_push(d, "volumeMode");
        rc = dec_fail(d, json_object_get(spec, "volumeMode"), spec,
                      "Unsupported value: %s: supported values: \"Block\", \"Filesystem\"",
                      dec_quote(mode, q, sizeof(q)));
        dec_pop(d, o2);
    }
    if (!rc)
        rc = dec_array(d, spec, "accessModes", &am);
    if (rc)
        goto out;
    c->block = !strcmp(mode, "Block");
    o2 = dec_push(d, "accessModes");
    if (!am || !json_array_size(am))
        rc = dec_fail(d, am, spec, "Required value: at least 1 access mode is required");
    json_array_foreach(am, i, m)
    {
        if (rc)
            break;
        for (k = 0; k < 4 && !(json_is_string(m) && !strcmp(json_string_value(m), modes[k])); k++)
            ;
        if (k == 4)
            rc = dec_fail(d, m, am,
                          "Unsupported value: %s: supported values: \"ReadOnlyMany\", "
                          "\"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"",
                          json_is_string(m) ? dec_quote(json_string_value(m), q, sizeof(q))
                                            : "\"\"");
        else
            c->access |= 1u << k;
    }
    dec_pop(d, o2);
    if (!rc)
        rc = dec_object(d, spec, "resources", &res);
    if (!rc && res) {
        o2 = dec_push(d, "resources");
        rc = dec_object(d, res, "requests", &req);
        if (!rc && req) {
            size_t o3 = dec_push(d, "requests");
            rc = dec_storage(d, req, "storage", &c->request, &has);
            dec_pop(d, o3);
        }
        dec_pop(d, o2);
    }
    if (!rc && !has) {
        o2 = dec_push(d, "resources[storage]");
        rc = dec_fail(d, NULL, spec, "Required value");
        dec_pop(d, o2);
    }
    sel = json_object_get(spec, "selector");
    if (!rc && sel && !json_is_null(sel)) {
        o2 = dec_push(d, "selector");
        c->has_selector = true;
        rc = dec_label_selector(d, sel, &c->selector);
        dec_pop(d, o2);
    }
    if (rc)
        goto out;
    c->spec_class = cls;
    beta = json_string_value(json_object_get(ann, "volume.beta.kubernetes.io/storage-class"));
    if (beta && !(c->storage_class = arena_strdup(d->a, beta)))
        rc = dec_nomem(d);
    else if (!beta)
        c->storage_class = cls;
out:
    dec_pop(d, old);
    return rc;
}

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

/* storage_meta: metadata.name (required) and, for a namespaced kind, metadata.namespace */
static int storage_meta(struct dec *d, const json_t *obj, const json_t **meta, const char **name,
                        const char **ns)
{
    const char *uid, *rv;
    struct kube_labels labels;
    size_t old;
    int rc;

    if ((rc = dec_metadata(d, obj, meta, name, &uid, &rv, &labels)))
        return rc;
    if (!(*name)[0]) {
        old = dec_push(d, "metadata.name");
        rc = dec_fail(d, NULL, obj, "Required value: name or generateName is required");
        dec_pop(d, old);
        return rc;
    }
    if (ns) {
        old = dec_push(d, "metadata");
        rc = dec_string(d, *meta, "namespace", ns, "default");
        if (!rc && !(*ns)[0])
            *ns = "default";
        dec_pop(d, old);
    }
    return rc;
}

int kube_csi_node_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                         const char *file, struct kube_csi_node *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *spec, *ann;
    size_t old, seen = 0;
    int rc;

    dec_init(&d, a, lines, file, err);
    memset(out, 0, sizeof(*out));
    out->migrated_plugins = "";
    if ((rc = dec_source(&d, obj, &out->source_line, &out->source_file)) ||
        (rc = storage_meta(&d, obj, &meta, &out->name, NULL)))
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
    out->drivers = dec_list(&d, spec, "drivers", JSON_OBJECT, "object", sizeof(*out->drivers),
                            decode_csi_node_driver, &seen, &out->ndrivers, &rc);
    dec_pop(&d, old);
    return rc;
}

int kube_csi_driver_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                           const char *file, struct kube_csi_driver *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *spec;
    size_t old;
    int rc;

    dec_init(&d, a, lines, file, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_source(&d, obj, &out->source_line, &out->source_file)) ||
        (rc = storage_meta(&d, obj, &meta, &out->name, NULL)))
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

/* capacity_field reads a quantity field of a CSIStorageCapacity */
static int capacity_field(struct dec *d, const json_t *obj, const char *key, bool nonneg,
                          int64_t *out, bool *has)
{
    int rc = dec_storage(d, obj, key, out, has);

    /* dec_storage refuses a negative quantity for capacity; maximumVolumeSize is not
     * validated by the API server, and a negative one is below every request */
    (void)nonneg;
    return rc;
}

int kube_csi_capacity_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                             const char *file, struct kube_csi_capacity *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *topo;
    struct err e;
    char q[512];
    size_t old;
    int rc;

    dec_init(&d, a, lines, file, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_source(&d, obj, &out->source_line, &out->source_file)) ||
        (rc = storage_meta(&d, obj, &meta, &out->name, &out->namespace_)) ||
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
                                  const struct kube_lines *lines, const char *file,
                                  struct kube_volume_attachment *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *spec, *src = NULL;
    const char *pv = NULL;
    size_t old, o2;
    int rc;

    dec_init(&d, a, lines, file, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_source(&d, obj, &out->source_line, &out->source_file)) ||
        (rc = storage_meta(&d, obj, &meta, &out->name, NULL)) ||
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
