/* decode_node.c - Nodes: taints, unschedulable, capacity and allocatable (defaulted from
 * capacity), the Ready condition and the images. */
#include <errno.h>
#include <string.h>

#include "kube/decode-int.h"
#include "kube/labels.h"

/* The Go types of the fields (decode-int.h) */
static const struct dec_type dec_t_node_spec;
static const struct dec_type dec_t_taint;
static const struct dec_type dec_t_node_status;
static const struct dec_type dec_t_node_condition;
static const struct dec_type dec_t_container_image;

static const struct dec_field dec_t_node_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.NodeSpec", &dec_t_node_spec},
    {"status", DEC_OBJ, 0, "v1.NodeStatus", &dec_t_node_status},
};
const struct dec_type dec_t_node = DEC_TYPE("Node", dec_t_node_fields);

static const struct dec_field dec_t_node_spec_fields[] = {
    {"configSource", DEC_OBJ, 0, "v1.NodeConfigSource", NULL},
    {"externalID", DEC_STR, 0, "string", NULL},
    {"podCIDR", DEC_STR, 0, "string", NULL},
    {"podCIDRs", DEC_ARR, DEC_STR, "[]string", NULL},
    {"podPreemptionPolicy", DEC_OBJ, 0, "v1.NodePodPreemptionPolicy", NULL},
    {"providerID", DEC_STR, 0, "string", NULL},
    {"taints", DEC_ARR, DEC_OBJ, "[]v1.Taint", &dec_t_taint},
    {"unschedulable", DEC_BOOL, 0, "bool", NULL},
};
static const struct dec_type dec_t_node_spec = DEC_TYPE("NodeSpec", dec_t_node_spec_fields);

static const struct dec_field dec_t_taint_fields[] = {
    {"effect", DEC_STR, 0, "v1.TaintEffect", NULL},
    {"key", DEC_STR, 0, "string", NULL},
    {"timeAdded", DEC_STR, 0, "v1.Time", NULL},
    {"value", DEC_STR, 0, "string", NULL},
};
static const struct dec_type dec_t_taint = DEC_TYPE("Taint", dec_t_taint_fields);

static const struct dec_field dec_t_node_status_fields[] = {
    {"addresses", DEC_ARR, DEC_OBJ, "[]v1.NodeAddress", NULL},
    {"allocatable", DEC_MAP, DEC_QTY, "v1.ResourceList", NULL},
    {"capacity", DEC_MAP, DEC_QTY, "v1.ResourceList", NULL},
    {"conditions", DEC_ARR, DEC_OBJ, "[]v1.NodeCondition", &dec_t_node_condition},
    {"config", DEC_OBJ, 0, "v1.NodeConfigStatus", NULL},
    {"daemonEndpoints", DEC_OBJ, 0, "v1.NodeDaemonEndpoints", NULL},
    {"declaredFeatures", DEC_ARR, DEC_STR, "[]string", NULL},
    {"features", DEC_OBJ, 0, "v1.NodeFeatures", NULL},
    {"images", DEC_ARR, DEC_OBJ, "[]v1.ContainerImage", &dec_t_container_image},
    {"nodeInfo", DEC_OBJ, 0, "v1.NodeSystemInfo", NULL},
    {"phase", DEC_STR, 0, "v1.NodePhase", NULL},
    {"runtimeHandlers", DEC_ARR, DEC_OBJ, "[]v1.NodeRuntimeHandler", NULL},
    {"volumesAttached", DEC_ARR, DEC_OBJ, "[]v1.AttachedVolume", NULL},
    {"volumesInUse", DEC_ARR, DEC_STR, "[]v1.UniqueVolumeName", NULL},
};
static const struct dec_type dec_t_node_status = DEC_TYPE("NodeStatus", dec_t_node_status_fields);

static const struct dec_field dec_t_node_condition_fields[] = {
    {"lastHeartbeatTime", DEC_STR, 0, "v1.Time", NULL},
    {"lastTransitionTime", DEC_STR, 0, "v1.Time", NULL},
    {"message", DEC_STR, 0, "string", NULL},
    {"reason", DEC_STR, 0, "string", NULL},
    {"status", DEC_STR, 0, "v1.ConditionStatus", NULL},
    {"type", DEC_STR, 0, "v1.NodeConditionType", NULL},
};
static const struct dec_type dec_t_node_condition =
    DEC_TYPE("NodeCondition", dec_t_node_condition_fields);

static const struct dec_field dec_t_container_image_fields[] = {
    {"names", DEC_ARR, DEC_STR, "[]string", NULL},
    {"sizeBytes", DEC_INT64, 0, "int64", NULL},
};
static const struct dec_type dec_t_container_image =
    DEC_TYPE("ContainerImage", dec_t_container_image_fields);

/* ---------------------------------------------------------------------------------------- */
/* Node                                                                                       */

static int decode_taint(struct dec *d, const json_t *t, void *slot, void *ctx)
{
    struct kube_taint *out = slot;
    const char *effect;
    struct err lerr;
    char q[512];
    size_t old;
    int rc;

    (void)ctx;
    rc = dec_string(d, t, "key", &out->key, "");
    if (!rc)
        rc = dec_string(d, t, "value", &out->value, "");
    if (!rc)
        rc = dec_string(d, t, "effect", &effect, "");
    if (rc)
        return rc;
    if (kube_label_key_validate(out->key, &lerr)) {
        old = dec_push(d, "key");
        if (!out->key[0])
            rc = dec_fail(d, NULL, t, "Required value");
        else
            rc = dec_fail(d, json_object_get(t, "key"), t, "Invalid value: %s: %s",
                          dec_quote(out->key, q, sizeof(q)), lerr.msg);
        dec_pop(d, old);
        return rc;
    }
    if (kube_label_value_validate(out->value, &lerr)) {
        old = dec_push(d, "value");
        rc = dec_fail(d, json_object_get(t, "value"), t, "Invalid value: %s: %s",
                      dec_quote(out->value, q, sizeof(q)), lerr.msg);
        dec_pop(d, old);
        return rc;
    }
    if (!effect[0] || dec_taint_effect(effect, &out->effect)) {
        old = dec_push(d, "effect");
        if (!effect[0])
            rc = dec_fail(d, NULL, t, "Required value");
        else
            rc = dec_fail(d, json_object_get(t, "effect"), t,
                          "Unsupported value: %s: " DEC_EFFECTS_SUPPORTED,
                          dec_quote(effect, q, sizeof(q)));
        dec_pop(d, old);
        return rc;
    }
    return 0;
}

/* decode_condition reads one of status.conditions in place (nothing of a condition is kept)
 * and, for the Ready one, sets the verdict ctx points at: the last Ready entry wins. */
static int decode_condition(struct dec *d, const json_t *c, void *slot, void *ctx)
{
    enum kube_node_ready *ready = ctx;
    const char *type = NULL, *st = NULL;
    int rc;

    (void)slot;
    rc = dec_peek(d, c, "type", &type);
    if (!rc)
        rc = dec_peek(d, c, "status", &st);
    if (!rc && !strcmp(type, "Ready"))
        *ready = !strcmp(st, "True") ? KUBE_READY_TRUE : KUBE_READY_NOT;
    return rc;
}

/* decode_image reads one entry of status.images. */
static int decode_image(struct dec *d, const json_t *im, void *slot, void *ctx)
{
    struct kube_image *out = slot;
    int64_t size = 0;
    int rc;

    (void)ctx;
    memset(out, 0, sizeof(*out));
    rc = dec_int(d, im, "sizeBytes", 0, INT64_MAX, &size, NULL);
    if (!rc)
        out->names = dec_list(d, im, "names", JSON_STRING, sizeof(*out->names), dec_str_elem, NULL,
                              &out->nnames, &rc);
    out->size_bytes = size;
    return rc;
}

int kube_node_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                     struct kube_node *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *spec = NULL, *status = NULL;
    struct dec_res_list cap = {NULL, 0, NULL, {{0}}}, alloc = {NULL, 0, NULL, {{0}}};
    size_t old;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_begin(&d, obj, &dec_t_node, &out->source_line, &out->source_file)))
        return rc;
    rc = dec_metadata(&d, obj, &meta, &out->name, &out->uid, &out->resource_version, &out->labels);
    if (!rc)
        rc = dec_object(&d, obj, "spec", &spec);
    if (!rc)
        rc = dec_object(&d, obj, "status", &status);
    if (rc)
        return rc;
    if (spec) {
        old = dec_push(&d, "spec");
        rc = dec_bool(&d, spec, "unschedulable", &out->unschedulable);
        if (!rc)
            out->taints = dec_list(&d, spec, "taints", JSON_OBJECT, sizeof(*out->taints),
                                   decode_taint, NULL, &out->ntaints, &rc);
        dec_pop(&d, old);
        if (rc)
            return rc;
    }
    if (status) {
        old = dec_push(&d, "status");
        rc = dec_res_list(&d, status, "capacity", false, &cap);
        if (!rc)
            rc = dec_res_list(&d, status, "allocatable", false, &alloc);
        if (!rc)
            rc = dec_res_list_build(&d, &cap, &out->capacity);
        /* SetDefaults_NodeStatus: no allocatable means allocatable = capacity */
        if (!rc && alloc.obj)
            rc = dec_res_list_build(&d, &alloc, &out->allocatable);
        else if (!rc)
            out->allocatable = out->capacity;
        dec_res_list_release(&cap);
        dec_res_list_release(&alloc);
        if (!rc) {
            size_t nconds;

            out->ready = KUBE_READY_UNKNOWN;
            dec_list(&d, status, "conditions", JSON_OBJECT, 0, decode_condition, &out->ready,
                     &nconds, &rc);
        }
        if (!rc)
            out->images = dec_list(&d, status, "images", JSON_OBJECT, sizeof(*out->images),
                                   decode_image, NULL, &out->nimages, &rc);
        dec_pop(&d, old);
    }
    return rc;
}
