/* decode_dra_class.c - resource.k8s.io/v1's cluster-scoped kinds that are not inventory:
 * DeviceClass (selectors, config, extendedResourceName, the creation time that decides which
 * class serves an extended resource) and DeviceTaintRule (a device selector and a taint). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/decode_dra-int.h"
#include "kube/exec.h"
#include "kube/labels.h"

static const struct dec_type dec_t_device_class_spec, dec_t_device_class_configuration,
    dec_t_device_taint_rule_spec, dec_t_device_taint_selector;

static const struct dec_field dec_t_device_class_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.DeviceClassSpec", &dec_t_device_class_spec},
};
const struct dec_type dec_t_device_class = DEC_TYPE("DeviceClass", dec_t_device_class_fields);

static const struct dec_field dec_t_device_class_spec_fields[] = {
    {"config", DEC_ARR, DEC_OBJ, "[]v1.DeviceClassConfiguration",
     &dec_t_device_class_configuration},
    {"extendedResourceName", DEC_STR, 0, "string", NULL},
    {"selectors", DEC_ARR, DEC_OBJ, "[]v1.DeviceSelector", &dec_t_device_selector},
};
static const struct dec_type dec_t_device_class_spec =
    DEC_TYPE("DeviceClassSpec", dec_t_device_class_spec_fields);

static const struct dec_field dec_t_device_class_configuration_fields[] = {
    {"opaque", DEC_OBJ, 0, "v1.OpaqueDeviceConfiguration", &dec_t_opaque_config},
};
static const struct dec_type dec_t_device_class_configuration =
    DEC_TYPE("DeviceClassConfiguration", dec_t_device_class_configuration_fields);

static const struct dec_field dec_t_device_taint_rule_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.DeviceTaintRuleSpec", &dec_t_device_taint_rule_spec},
    {"status", DEC_OBJ, 0, "v1.DeviceTaintRuleStatus", NULL},
};
const struct dec_type dec_t_device_taint_rule =
    DEC_TYPE("DeviceTaintRule", dec_t_device_taint_rule_fields);

static const struct dec_field dec_t_device_taint_rule_spec_fields[] = {
    {"deviceSelector", DEC_OBJ, 0, "v1.DeviceTaintSelector", &dec_t_device_taint_selector},
    {"taint", DEC_OBJ, 0, "v1.DeviceTaint", &dec_t_device_taint},
};
static const struct dec_type dec_t_device_taint_rule_spec =
    DEC_TYPE("DeviceTaintRuleSpec", dec_t_device_taint_rule_spec_fields);

static const struct dec_field dec_t_device_taint_selector_fields[] = {
    {"device", DEC_STR, 0, "string", NULL},
    {"driver", DEC_STR, 0, "string", NULL},
    {"pool", DEC_STR, 0, "string", NULL},
};
static const struct dec_type dec_t_device_taint_selector =
    DEC_TYPE("DeviceTaintSelector", dec_t_device_taint_selector_fields);

/* ---- DeviceClass ---- */

int kube_device_class_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                             struct kube_device_class *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *spec;
    const char *ts = NULL;
    size_t old;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_begin(&d, obj, &dec_t_device_class, &out->source_line, &out->source_file)) ||
        (rc = dec_named(&d, obj, &meta, &out->name, NULL)))
        return rc;
    if (meta && (rc = dec_string(&d, meta, "uid", &out->uid, "")))
        return rc;
    if (meta && (rc = dec_string(&d, meta, "creationTimestamp", &ts, NULL)))
        return rc;
    if (ts) {
        time_t t;

        if (!kube_rfc3339_parse(ts, &t))
            out->creation_unix_nano = (int64_t)t * 1000000000;
    }
    if ((rc = dec_object(&d, obj, "spec", &spec)) || !spec)
        return rc;
    old = dec_push(&d, "spec");
    rc = dec_dra_selectors(&d, spec, o == NULL, &out->selectors, &out->nselectors);
    out->nconfig = json_array_size(json_object_get(spec, "config"));
    if (!rc)
        rc = dec_string(&d, spec, "extendedResourceName", &out->extended_resource_name, NULL);
    if (!rc && out->extended_resource_name) {
        const char *n = out->extended_resource_name;
        struct err e;

        err_clear(&e);
        /* IsExtendedResourceName: a domain-prefixed name outside kubernetes.io, not
         * requests.*, and valid as a quota resource name */
        if (!strchr(n, '/') || !strncmp(n, "kubernetes.io/", 14) || strstr(n, ".kubernetes.io/") ||
            !strncmp(n, "requests.", 9) || kube_label_key_validate(n, &e))
            rc = dec_dra_invalid(&d, spec, "extendedResourceName", n,
                                 "must be a valid extended resource name");
    }
    dec_pop(&d, old);
    return rc;
}

/* ---- DeviceTaintRule ---- */

int kube_device_taint_rule_decode(const json_t *obj, struct arena *a,
                                  const struct kube_decode_opts *o,
                                  struct kube_device_taint_rule *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *spec, *sel, *taint;
    size_t old, o2;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_begin(&d, obj, &dec_t_device_taint_rule, &out->source_line, &out->source_file)) ||
        (rc = dec_named(&d, obj, &meta, &out->name, NULL)) ||
        (rc = dec_object(&d, obj, "spec", &spec)))
        return rc;
    if (!spec)
        spec = json_object_get(obj, "spec");
    old = dec_push(&d, "spec");
    rc = dec_object(&d, spec, "deviceSelector", &sel);
    if (!rc && sel) {
        out->has_selector = true;
        o2 = dec_push(&d, "deviceSelector");
        rc = dec_string(&d, sel, "driver", &out->driver, NULL);
        if (!rc)
            rc = dec_string(&d, sel, "pool", &out->pool, NULL);
        if (!rc)
            rc = dec_string(&d, sel, "device", &out->device, NULL);
        if (!rc && out->driver)
            rc = dec_dra_driver(&d, sel, "driver", out->driver);
        if (!rc && out->pool)
            rc = dec_dra_pool_name(&d, sel, "pool", out->pool);
        if (!rc && out->device)
            rc = dec_dra_label(&d, sel, "device", out->device);
        dec_pop(&d, o2);
    }
    if (!rc)
        rc = dec_object(&d, spec, "taint", &taint);
    if (!rc) {
        o2 = dec_push(&d, "taint");
        if (!taint)
            rc = dec_fail(&d, NULL, spec, "Required value");
        else
            rc = dec_dra_taint(&d, taint, &out->taint);
        dec_pop(&d, o2);
    }
    dec_pop(&d, old);
    return rc;
}
