/* decode_dra.c - what the decoders of resource.k8s.io/v1 share (decode_dra-int.h): the Go
 * types more than one of its kinds uses (DeviceSelector, OpaqueDeviceConfiguration,
 * DeviceTaint, SkipNodeOperation), the checks of the API server's validation in its words
 * (names, drivers, pools, qualified names, quantities, optional bools) and the CEL selectors,
 * compiled as a new object's are (the stored-expression environment's superset, the cost
 * limit). The kinds are in decode_dra_class.c, decode_dra_slice.c and decode_dra_claim.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel.h"
#include "kube/decode_dra-int.h"
#include "kube/labels.h"
#include "kube/quantity.h"

const char dec_dra_group[] = "resource.k8s.io";

/* ---- The Go types of the fields several kinds share (k8s.io/api v0.37.2 resource/v1) ---- */

static const struct dec_type dec_t_cel_device_selector;

static const struct dec_field dec_t_device_selector_fields[] = {
    {"cel", DEC_OBJ, 0, "v1.CELDeviceSelector", &dec_t_cel_device_selector},
};
const struct dec_type dec_t_device_selector =
    DEC_TYPE("DeviceSelector", dec_t_device_selector_fields);

static const struct dec_field dec_t_cel_device_selector_fields[] = {
    {"expression", DEC_STR, 0, "string", NULL},
};
static const struct dec_type dec_t_cel_device_selector =
    DEC_TYPE("CELDeviceSelector", dec_t_cel_device_selector_fields);

static const struct dec_field dec_t_opaque_config_fields[] = {
    {"driver", DEC_STR, 0, "string", NULL},
    {"parameters", DEC_ANY, 0, "runtime.RawExtension", NULL},
};
const struct dec_type dec_t_opaque_config =
    DEC_TYPE("OpaqueDeviceConfiguration", dec_t_opaque_config_fields);

static const struct dec_field dec_t_skip_node_operation_fields[] = {
    {"operation", DEC_STR, 0, "v1.NodeOperation", NULL},
};
const struct dec_type dec_t_skip_node_operation =
    DEC_TYPE("SkipNodeOperation", dec_t_skip_node_operation_fields);

static const struct dec_field dec_t_device_taint_fields[] = {
    {"effect", DEC_STR, 0, "v1.DeviceTaintEffect", NULL},
    {"key", DEC_STR, 0, "string", NULL},
    {"timeAdded", DEC_STR, 0, "v1.Time", NULL},
    {"value", DEC_STR, 0, "string", NULL},
};
const struct dec_type dec_t_device_taint = DEC_TYPE("DeviceTaint", dec_t_device_taint_fields);

/* ---- helpers ---- */

int dec_dra_fail_key(struct dec *d, const json_t *obj, const char *key, const char *fmt, ...)
{
    char msg[ERR_MSG_MAX];
    size_t old = dec_push(d, key);
    va_list ap;
    int rc;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    rc = dec_fail(d, json_object_get(obj, key), obj, "%s", msg);
    dec_pop(d, old);
    return rc;
}

/* field.TooMany's words for a list of n items over max */
int dec_dra_too_many(struct dec *d, const json_t *obj, const char *key, int max)
{
    return dec_dra_fail_key(d, obj, key, "Too many: %zu: must have at most %d items",
                            json_array_size(json_object_get(obj, key)), max);
}

/* an "Invalid value: "X": msg" of obj[key] */
int dec_dra_invalid(struct dec *d, const json_t *obj, const char *key, const char *value,
                    const char *msg)
{
    char q[600];

    return dec_dra_fail_key(d, obj, key, "Invalid value: %s: %s", dec_quote(value, q, sizeof(q)),
                            msg);
}

/* a required string obj[key] ("Required value" when unset or empty), copied */
int dec_dra_required(struct dec *d, const json_t *obj, const char *key, const char **out)
{
    int rc = dec_string(d, obj, key, out, "");

    if (!rc && !**out)
        rc = dec_dra_fail_key(d, obj, key, "Required value");
    return rc;
}

/* name checks by kube/labels: DNS label or subdomain; 0 or the failure at obj[key] */
int dec_dra_label(struct dec *d, const json_t *obj, const char *key, const char *s)
{
    struct err e;

    err_clear(&e);
    if (kube_dns_label_validate(s, &e))
        return dec_dra_invalid(d, obj, key, s, e.msg);
    return 0;
}

int dec_dra_subdomain(struct dec *d, const json_t *obj, const char *key, const char *s)
{
    struct err e;

    err_clear(&e);
    if (kube_dns_subdomain_validate(s, &e))
        return dec_dra_invalid(d, obj, key, s, e.msg);
    return 0;
}

/* ValidateCSIDriverName: the driver names of slices, results and opaque configurations */
int dec_dra_driver(struct dec *d, const json_t *obj, const char *key, const char *s)
{
    if (!*s)
        return dec_dra_fail_key(d, obj, key, "Required value");
    if (strlen(s) > DRA_DRIVER_NAME_MAX) {
        return dec_dra_fail_key(d, obj, key, "Too long: must be no more than %d characters",
                                DRA_DRIVER_NAME_MAX);
    }
    return dec_dra_subdomain(d, obj, key, s);
}

/* validatePoolName: DNS subdomains separated by '/', at most 253 characters */
int dec_dra_pool_name(struct dec *d, const json_t *obj, const char *key, const char *s)
{
    const char *p = s;
    char part[DRA_POOL_NAME_MAX + 2];
    int rc;

    if (!*s)
        return dec_dra_fail_key(d, obj, key, "Required value");
    if (strlen(s) > DRA_POOL_NAME_MAX)
        return dec_dra_fail_key(d, obj, key, "Too long: may not be more than 253 bytes");
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);

        memcpy(part, p, n);
        part[n] = '\0';
        if ((rc = dec_dra_subdomain(d, obj, key, part)))
            return rc;
        if (!slash)
            return 0;
        p = slash + 1;
    }
}

/* the text the API server's Quantity parses for v (kube_quantity_json_text: a number as
 * kubectl sends it, a string trimmed, null "0"), copied into the arena; NULL for another
 * JSON type or out of memory */
static const char *qty_text(struct dec *d, const json_t *v)
{
    char num[KUBE_JSON_NUMBER_MAX];
    const char *t;
    size_t n;

    if (!(t = kube_quantity_json_text(v, num, &n)))
        return NULL;
    return arena_strndup_shared(d->a, t, n);
}

/* the quantity v (parent[key], key NULL: an element at the current path) into out */
int dec_dra_quantity(struct dec *d, const json_t *parent, const char *key, const json_t *v,
                     struct kube_dra_quantity *out)
{
    struct err qerr;
    size_t old = key ? dec_push(d, key) : d->plen;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    /* null is the zero Quantity in a map or a list (a pointer field's null is skipped) */
    if (!json_is_string(v) && !json_is_number(v) && !json_is_null(v)) {
        rc = dec_type_error(d, parent, key, v, "resource.Quantity");
    } else if (!(out->text = qty_text(d, v))) {
        rc = dec_nomem(d);
    } else if (kube_quantity_parse_nano(out->text, &out->nano, &qerr)) {
        rc = dec_fail(d, v, parent, "%s", qerr.msg);
    }
    if (key)
        dec_pop(d, old);
    return rc;
}

/* a required quantity parent[key] */
int dec_dra_quantity_required(struct dec *d, const json_t *parent, const char *key,
                              struct kube_dra_quantity *out)
{
    const json_t *v = json_object_get(parent, key);

    if (!v || json_is_null(v)) {
        /* the zero Quantity: "0" */
        memset(out, 0, sizeof(*out));
        out->text = "0";
        return 0;
    }
    return dec_dra_quantity(d, parent, key, v, out);
}

/* an optional bool as -1 unset, 0, 1 */
int dec_dra_tristate(struct dec *d, const json_t *obj, const char *key, int8_t *out)
{
    const json_t *v = json_object_get(obj, key);

    *out = -1;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return dec_type_error(d, obj, key, v, "bool");
    *out = json_is_true(v) ? 1 : 0;
    return 0;
}

/* bindingConditions and bindingFailureConditions of v (a device, or an allocation's result):
 * string lists in the decoder's arena */
int dec_dra_binding_conditions(struct dec *d, const json_t *v, const char ***conds, size_t *nconds,
                               const char ***fails, size_t *nfails)
{
    int rc = 0;

    *conds = dec_list(d, v, "bindingConditions", JSON_STRING, sizeof(char *), dec_str_elem, NULL,
                      nconds, &rc);
    if (rc)
        return rc;
    *fails = dec_list(d, v, "bindingFailureConditions", JSON_STRING, sizeof(char *), dec_str_elem,
                      NULL, nfails, &rc);
    return rc;
}

/* validateQualifiedName of an attribute or capacity name: "id" or "domain/id" */
int dec_dra_qualified(struct dec *d, const json_t *map, const char *name, const json_t *v)
{
    const char *slash = strchr(name, '/');
    const char *id = slash ? slash + 1 : name;
    size_t i, n = strlen(id);
    char q[300];
    bool ok = n > 0 && n <= 64 &&
              ((id[0] >= 'a' && id[0] <= 'z') || (id[0] >= 'A' && id[0] <= 'Z') || id[0] == '_');

    for (i = 1; ok && i < n; i++)
        ok = (id[i] >= 'a' && id[i] <= 'z') || (id[i] >= 'A' && id[i] <= 'Z') ||
             (id[i] >= '0' && id[i] <= '9') || id[i] == '_';
    if (!*name)
        return dec_fail(d, v, map, "Required value: name required");
    if (!ok)
        return dec_fail(d, v, map,
                        "Invalid value: %s: a valid C identifier must start with alphabetic "
                        "character or '_', followed by a string of alphanumeric characters or "
                        "'_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for "
                        "validation is '[A-Za-z_][A-Za-z0-9_]*')",
                        dec_quote(id, q, sizeof(q)));
    if (slash) {
        char dom[256];
        struct err e;
        size_t dn = (size_t)(slash - name);

        if (dn == 0 || dn >= sizeof(dom))
            return dec_fail(d, v, map, "Required value: the domain must not be empty");
        memcpy(dom, name, dn);
        dom[dn] = '\0';
        err_clear(&e);
        if (kube_dns_subdomain_validate(dom, &e))
            return dec_fail(d, v, map, "Invalid value: %s: %s", dec_quote(dom, q, sizeof(q)),
                            e.msg);
    }
    return 0;
}

/* ---- CEL selectors ---- */

struct sel_ctx {
    bool stored; /* from a live cluster: the API server accepted it once */
};

/* one DeviceSelector: cel.expression compiled as a new object's selector is */
static int selector_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    struct kube_dra_selector *out = slot;
    const struct sel_ctx *sc = ctx;
    const json_t *cel;
    const char *expr;
    size_t old;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((rc = dec_object(d, v, "cel", &cel)))
        return rc;
    if (!cel)
        return dec_dra_fail_key(d, v, "cel", "Required value");
    old = dec_push(d, "cel");
    rc = dec_string(d, cel, "expression", &expr, "");
    if (!rc) {
        out->expression = expr;
        out->line = dec_line(d, json_object_get(cel, "expression"), cel);
    }
    if (!rc && !sc->stored && d->opts && d->opts->check) {
        struct cel_compile_opts o = {.env = CEL_ENV_NEW};
        struct cel_compile_error cerr = {0};
        struct cel_program *p = NULL;
        char q[256];

        if (!cel_selector_length_ok(strlen(expr))) {
            rc = dec_dra_fail_key(d, cel, "expression",
                                  "Too long: may not be more than 10240 bytes");
        } else {
            int crc = cel_compile(expr, strlen(expr), &o, &p, &cerr);

            if (crc == -ENOMEM) {
                rc = dec_nomem(d);
            } else if (crc < 0 && cerr.has_max_cost) {
                rc = dec_dra_fail_key(d, cel, "expression",
                                      "Forbidden: too complex, exceeds cost limit");
            } else if (crc < 0 && !*expr) {
                rc = dec_dra_fail_key(d, cel, "expression", "Required value: %s",
                                      cerr.detail ? cerr.detail : "");
            } else if (crc < 0) {
                size_t o2 = dec_push(d, "expression");

                const char *det = cerr.detail ? cerr.detail : "compilation failed";
                const char *nl = strchr(det, '\n');

                /* one line: the API server's text up to its caret display */
                rc = dec_fail(d, json_object_get(cel, "expression"), cel, "Invalid value: %s: %.*s",
                              dec_quote(expr, q, sizeof(q)),
                              (int)(nl ? (size_t)(nl - det) : strlen(det)), det);
                dec_pop(d, o2);
            }
            cel_program_free(p);
            cel_compile_error_release(&cerr);
        }
    }
    dec_pop(d, old);
    return rc;
}

int dec_dra_selectors(struct dec *d, const json_t *obj, bool stored, struct kube_dra_selector **out,
                      size_t *n)
{
    struct sel_ctx sc = {stored};
    const json_t *arr = json_object_get(obj, "selectors");
    int rc = 0;

    if (json_array_size(arr) > DRA_SELECTORS_MAX)
        return dec_dra_too_many(d, obj, "selectors", DRA_SELECTORS_MAX);
    *out = dec_list(d, obj, "selectors", JSON_OBJECT, sizeof(**out), selector_elem, &sc, n, &rc);
    return rc;
}

int dec_dra_taint(struct dec *d, const json_t *v, struct kube_dra_taint *out)
{
    struct err e;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((rc = dec_string(d, v, "key", &out->key, "")) ||
        (rc = dec_string(d, v, "value", &out->value, "")) ||
        (rc = dec_string(d, v, "effect", &out->effect, "")))
        return rc;
    err_clear(&e);
    if (kube_label_key_validate(out->key, &e))
        return *out->key ? dec_dra_invalid(d, v, "key", out->key, e.msg)
                         : dec_dra_fail_key(d, v, "key", "Required value");
    if (*out->value && kube_label_value_validate(out->value, &e))
        return dec_dra_invalid(d, v, "value", out->value, e.msg);
    if (!*out->effect)
        return dec_dra_fail_key(d, v, "effect", "Required value");
    if (strcmp(out->effect, "NoSchedule") && strcmp(out->effect, "NoExecute") &&
        strcmp(out->effect, "None")) {
        char q[200];

        return dec_dra_fail_key(
            d, v, "effect",
            "Unsupported value: %s: supported values: \"NoExecute\", \"NoSchedule\", "
            "\"None\"",
            dec_quote(out->effect, q, sizeof(q)));
    }
    return 0;
}
