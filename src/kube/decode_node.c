/* decode_node.c - Nodes: taints, unschedulable, capacity and allocatable (defaulted from
 * capacity), the Ready condition and the images. */
#include <errno.h>
#include <string.h>

#include "kube/decode-int.h"
#include "kube/labels.h"

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
        out->names = dec_list(d, im, "names", JSON_STRING, "string", sizeof(*out->names),
                              dec_str_elem, NULL, &out->nnames, &rc);
    out->size_bytes = size;
    return rc;
}

int kube_node_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                     const char *file, struct kube_node *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *spec = NULL, *status = NULL;
    struct dec_res_list cap = {NULL, 0, NULL, {{0}}}, alloc = {NULL, 0, NULL, {{0}}};
    size_t old;
    int rc;

    dec_init(&d, a, lines, file, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_source(&d, obj, &out->source_line, &out->source_file)))
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
            out->taints = dec_list(&d, spec, "taints", JSON_OBJECT, "object", sizeof(*out->taints),
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
            dec_list(&d, status, "conditions", JSON_OBJECT, "object", 0, decode_condition,
                     &out->ready, &nconds, &rc);
        }
        if (!rc)
            out->images = dec_list(&d, status, "images", JSON_OBJECT, "object",
                                   sizeof(*out->images), decode_image, NULL, &out->nimages, &rc);
        dec_pop(&d, old);
    }
    return rc;
}
