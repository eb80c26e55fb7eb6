/* decode.c - JSON (from the API or from YAML manifests) to struct kube_pod, kube_node,
 * kube_priority_class and kube_label_selector, with the API server's defaulting and
 * validation.
 *
 * Decoding is one pass over the JSON tree; everything kept is copied into the caller's arena.
 * Errors name the field path (spec.containers[0].resources.limits.cpu) and, with a line table,
 * the source line. Unknown fields are ignored, as kubectl does without --validate=strict.
 * Every list of the object model is read by decode_array, so a list's element type, path and
 * length are handled in one place. */
#include "kube/decode.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/goparse.h"
#include "kube/labels.h"
#include "kube/quantity.h"
#include "kube/rules.h"
#include "kube/yaml.h"

/* ---------------------------------------------------------------------------------------- */
/* Decoder state: arena, error report, field path                                            */

#define PATH_MAX_LEN 240

struct dec {
    struct arena *a;
    const struct kube_lines *lines;
    const char *file;
    struct err *err;
    char path[PATH_MAX_LEN + 16];
    size_t plen;
};

/* path_push appends ".name" (or "name" at the root) and returns the length to pop back to. */
static size_t path_push(struct dec *d, const char *name)
{
    size_t old = d->plen, n = strlen(name), dot = old ? 1 : 0;

    /* a path that no longer fits is cut short; messages stay readable */
    if (old + dot + n >= PATH_MAX_LEN)
        return old;
    if (dot)
        d->path[old] = '.';
    memcpy(d->path + old + dot, name, n + 1);
    d->plen = old + dot + n;
    return old;
}

/* path_index appends "[i]" (what snprintf would, cut short as it would: one array element per
 * decoded pod's container, toleration, term, ... made snprintf show in profiles) */
static size_t path_index(struct dec *d, size_t i)
{
    size_t old = d->plen, len = 0, nd = 0, w;
    char tmp[24], rev[24];

    if (old >= PATH_MAX_LEN)
        return old;
    do
        rev[nd++] = (char)('0' + i % 10);
    while (i /= 10);
    tmp[len++] = '[';
    while (nd)
        tmp[len++] = rev[--nd];
    tmp[len++] = ']';
    w = len < PATH_MAX_LEN - old - 1 ? len : PATH_MAX_LEN - old - 1;
    memcpy(d->path + old, tmp, w);
    d->path[old + w] = '\0';
    d->plen = old + len >= PATH_MAX_LEN ? PATH_MAX_LEN - 1 : old + len;
    return old;
}

static void path_pop(struct dec *d, size_t old)
{
    d->plen = old;
    d->path[old] = '\0';
}

/* line_of: the line of v, else of its container. true/false/null are shared singletons in
 * jansson, so their recorded line is meaningless and the container's is used. */
static int line_of(const struct dec *d, const json_t *v, const json_t *parent)
{
    int l = 0;

    if (v && !json_is_boolean(v) && !json_is_null(v))
        l = kube_lines_find(d->lines, v);
    if (!l && parent)
        l = kube_lines_find(d->lines, parent);
    return l;
}

static int dec_fail(struct dec *d, const json_t *v, const json_t *parent, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int dec_fail(struct dec *d, const json_t *v, const json_t *parent, const char *fmt, ...)
{
    char msg[ERR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (!d->err)
        return -EINVAL;
    err_set(d->err, -EINVAL, "%s", msg);
    d->err->file[0] = '\0';
    err_at(d->err, d->file, line_of(d, v, parent), 0);
    err_field(d->err, d->path);
    return -EINVAL;
}

static int dec_nomem(struct dec *d)
{
    return err_set(d->err, -ENOMEM, "out of memory");
}

const char *kube_json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "integer";
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "boolean";
    case JSON_NULL:
        return "null";
    }
    return "unknown";
}

/* quote writes Go's %q of s (what field.Invalid prints for a string value) into buf. */
static const char *quote(const char *s, char *buf, size_t size)
{
    size_t n = 0;
    const unsigned char *p = (const unsigned char *)s;

    if (size < 8)
        return "\"\"";
    buf[n++] = '"';
    for (; *p && n + 6 < size; p++) {
        const char *esc = NULL;

        switch (*p) {
        case '"':
            esc = "\\\"";
            break;
        case '\\':
            esc = "\\\\";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\t':
            esc = "\\t";
            break;
        case '\r':
            esc = "\\r";
            break;
        default:
            break;
        }
        if (esc) {
            memcpy(buf + n, esc, 2);
            n += 2;
        } else if (*p < 0x20 || *p == 0x7f) {
            n += (size_t)snprintf(buf + n, size - n, "\\x%02x", *p);
        } else {
            buf[n++] = (char)*p;
        }
    }
    buf[n++] = '"';
    buf[n] = '\0';
    return buf;
}

/* ---------------------------------------------------------------------------------------- */
/* Typed field getters. Absent and null both mean "unset", as in Go's decoder.                */

/* the decoded objects' strings are never written to: repeats may share one copy */
static const char *dup_json_string(struct dec *d, const json_t *v)
{
    return arena_strndup_shared(d->a, json_string_value(v), json_string_length(v));
}

/* check_type fails with "KEY: expected WANT, got TYPE" unless ok (v is obj[key]). */
static int check_type(struct dec *d, const json_t *obj, const char *key, const json_t *v, bool ok,
                      const char *want_name)
{
    size_t old;
    int rc;

    if (ok)
        return 0;
    old = path_push(d, key);
    rc = dec_fail(d, v, obj, "expected %s, got %s", want_name, kube_json_type_name(v));
    path_pop(d, old);
    return rc;
}

/* get_string: obj[key] as a string copied into the arena, dflt when unset. */
static int get_string(struct dec *d, const json_t *obj, const char *key, const char **out,
                      const char *dflt)
{
    const json_t *v = json_object_get(obj, key);
    int rc;

    *out = dflt;
    if (!v || json_is_null(v))
        return 0;
    if ((rc = check_type(d, obj, key, v, json_is_string(v), "string")))
        return rc;
    *out = dup_json_string(d, v);
    return *out ? 0 : dec_nomem(d);
}

static int get_typed(struct dec *d, const json_t *obj, const char *key, json_type want,
                     const char *want_name, const json_t **out)
{
    const json_t *v = json_object_get(obj, key);
    int rc;

    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if ((rc = check_type(d, obj, key, v, json_typeof(v) == want, want_name)))
        return rc;
    *out = v;
    return 0;
}

/* peek_string: obj[key] as a string borrowed from the JSON ("" when unset), not copied. */
static int peek_string(struct dec *d, const json_t *obj, const char *key, const char **out)
{
    const json_t *v;
    int rc = get_typed(d, obj, key, JSON_STRING, "string", &v);

    *out = v ? json_string_value(v) : "";
    return rc;
}

static int get_object(struct dec *d, const json_t *obj, const char *key, const json_t **out)
{
    return get_typed(d, obj, key, JSON_OBJECT, "object", out);
}

static int get_array(struct dec *d, const json_t *obj, const char *key, const json_t **out)
{
    return get_typed(d, obj, key, JSON_ARRAY, "array", out);
}

static int get_bool(struct dec *d, const json_t *obj, const char *key, bool *out)
{
    const json_t *v = json_object_get(obj, key);
    int rc;

    *out = false;
    if (!v || json_is_null(v))
        return 0;
    if ((rc = check_type(d, obj, key, v, json_is_boolean(v), "boolean")))
        return rc;
    *out = json_is_true(v);
    return 0;
}

/* An element decoder of decode_array: v is the element (already of the wanted JSON type), out
 * its slot in the array (NULL when the elements are not kept), ctx the caller's. The path
 * names the element ("spec.tolerations[2]"). */
typedef int (*dec_elem_fn)(struct dec *d, const json_t *v, void *out, void *ctx);

/* decode_array reads obj[key], a list whose elements must be of JSON type want (want_name in
 * the message), decoding each with fn into an array of elem-sized slots allocated from the
 * arena (none when elem is 0). Returns the array (NULL when the list is absent, null or
 * empty) with *n the elements decoded; on failure *rc is the error and *n counts the
 * elements decoded before it. */
static void *decode_array(struct dec *d, const json_t *obj, const char *key, json_type want,
                          const char *want_name, size_t elem, dec_elem_fn fn, void *ctx, size_t *n,
                          int *rc)
{
    const json_t *arr;
    char *out = NULL;
    size_t i, old;

    *n = 0;
    *rc = get_array(d, obj, key, &arr);
    if (*rc || !arr || !json_array_size(arr))
        return NULL;
    if (elem && !(out = arena_alloc(d->a, json_array_size(arr) * elem))) {
        *rc = dec_nomem(d);
        return NULL;
    }
    old = path_push(d, key);
    for (i = 0; i < json_array_size(arr); i++) {
        const json_t *v = json_array_get(arr, i);
        size_t o2 = path_index(d, i);

        if (json_typeof(v) != want)
            *rc = dec_fail(d, v, arr, "expected %s, got %s", want_name, kube_json_type_name(v));
        else
            *rc = fn(d, v, elem ? out + i * elem : NULL, ctx);
        path_pop(d, o2);
        if (*rc)
            break;
        (*n)++;
    }
    path_pop(d, old);
    return out;
}

bool kube_json_int64(const json_t *v, int64_t *out)
{
    double r;

    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return true;
    }
    if (!json_is_real(v))
        return false;
    r = json_real_value(v);
    /* range first: converting an out-of-range double to int64 is undefined */
    if (!(r >= -9e18 && r <= 9e18) || r != (double)(int64_t)r)
        return false;
    *out = (int64_t)r;
    return true;
}

/* get_int: an integer field within [min, max]; *present tells whether it was set. */
static int get_int(struct dec *d, const json_t *obj, const char *key, int64_t min, int64_t max,
                   int64_t *out, bool *present)
{
    const json_t *v = json_object_get(obj, key);
    size_t old;
    int rc = 0;

    *out = 0;
    if (present)
        *present = false;
    if (!v || json_is_null(v))
        return 0;
    old = path_push(d, key);
    if (!kube_json_int64(v, out)) {
        rc = dec_fail(d, v, obj, "expected integer, got %s", kube_json_type_name(v));
        goto out;
    }
    if (*out < min || *out > max) {
        rc = dec_fail(d, v, obj, "integer %lld out of range [%lld, %lld]", (long long)*out,
                      (long long)min, (long long)max);
        goto out;
    }
    if (present)
        *present = true;
out:
    path_pop(d, old);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Labels                                                                                     */

static int cmp_label(const void *x, const void *y)
{
    return strcmp(((const struct kube_label *)x)->key, ((const struct kube_label *)y)->key);
}

/* decode_labels reads a map of strings (metadata.labels, spec.nodeSelector) at obj[key],
 * validating keys and values like ValidateLabels when validate is set. Sorted by key. */
static int decode_labels(struct dec *d, const json_t *obj, const char *key, bool validate,
                         struct kube_labels *out)
{
    const json_t *m, *v;
    const char *k;
    size_t old, n = 0;
    struct err lerr;
    char q[512];
    int rc;

    out->v = NULL;
    out->n = 0;
    rc = get_object(d, obj, key, &m);
    if (rc || !m || !json_object_size(m))
        return rc;
    out->v = arena_alloc(d->a, json_object_size(m) * sizeof(*out->v));
    if (!out->v)
        return dec_nomem(d);
    old = path_push(d, key);
    json_object_foreach((json_t *)m, k, v)
    {
        const char *val = "";

        if (json_is_string(v)) {
            val = json_string_value(v);
        } else if (!json_is_null(v)) {
            size_t o2 = path_push(d, k);

            rc = dec_fail(d, v, m, "expected string, got %s", kube_json_type_name(v));
            path_pop(d, o2);
            goto out;
        }
        if (validate && kube_label_key_validate(k, &lerr)) {
            rc = dec_fail(d, v, m, "Invalid value: %s: %s", quote(k, q, sizeof(q)), lerr.msg);
            goto out;
        }
        if (validate && kube_label_value_validate(val, &lerr)) {
            rc = dec_fail(d, v, m, "Invalid value: %s: %s", quote(val, q, sizeof(q)), lerr.msg);
            goto out;
        }
        out->v[n].key = arena_strndup_shared(d->a, k, strlen(k));
        out->v[n].value = json_is_string(v) ? dup_json_string(d, v) : "";
        if (!out->v[n].key || !out->v[n].value) {
            rc = dec_nomem(d);
            goto out;
        }
        n++;
    }
    qsort(out->v, n, sizeof(*out->v), cmp_label);
    out->n = n;
out:
    path_pop(d, old);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Resources                                                                                  */

/* One parsed entry of a ResourceList, kept until the container's rules are checked. */
struct res_entry {
    const char *name; /* points into the JSON tree */
    const json_t *v;
    const char *text; /* the quantity as written: the JSON string, or num */
    char num[40];     /* a JSON number printed back */
    int64_t value;    /* base units; millicores for cpu */
    int64_t milli;
    bool whole; /* a whole number of base units */
};

struct res_list {
    struct res_entry *e; /* small, or a heap array for a longer list */
    size_t n;
    const json_t *obj; /* the JSON map, NULL when absent */
    struct res_entry small[4];
};

static bool res_is_native(const char *name)
{
    return !strchr(name, '/') || strstr(name, "kubernetes.io/");
}

static bool res_is_hugepages(const char *name)
{
    return !strncmp(name, "hugepages-", 10);
}

/* Requests of these may not differ from their limits (IsOvercommitAllowed is false). */
static bool res_no_overcommit(const char *name)
{
    return !res_is_native(name) || res_is_hugepages(name);
}

static bool res_is_integer(const char *name)
{
    return !res_is_native(name) || !strcmp(name, "pods");
}

/* quantity_text points e->text at the quantity as written: the JSON string itself, or the
 * JSON number printed back into e->num. */
static int quantity_text(const json_t *v, struct res_entry *e)
{
    if (json_is_string(v)) {
        e->text = json_string_value(v);
        return 0;
    }
    e->text = e->num;
    if (json_is_integer(v)) {
        snprintf(e->num, sizeof(e->num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return 0;
    }
    if (json_is_real(v)) {
        /* the shortest text that reads back as the same double: 0.1 stays "0.1" */
        int prec;

        for (prec = 1; prec <= 17; prec++) {
            snprintf(e->num, sizeof(e->num), "%.*g", prec, json_real_value(v));
            if (strtod(e->num, NULL) == json_real_value(v))
                break;
        }
        return 0;
    }
    return -EINVAL;
}

/* decode_res_list parses obj[key] (a ResourceList) into l; container says whether the
 * container resource-name and value rules apply. */
static int decode_res_list(struct dec *d, const json_t *obj, const char *key, bool container,
                           struct res_list *l)
{
    const json_t *m, *v;
    const char *k;
    size_t old, o2;
    struct err qerr;
    char q[512];
    int rc;

    l->e = NULL;
    l->n = 0;
    l->obj = NULL;
    rc = get_object(d, obj, key, &m);
    if (rc || !m)
        return rc;
    l->obj = m;
    if (!json_object_size(m))
        return 0;
    /* entries are scratch for this decode: in the list itself (a container's few requests) or
     * on the heap, not in the object's arena */
    l->e = json_object_size(m) <= sizeof(l->small) / sizeof(l->small[0])
               ? l->small
               : calloc(json_object_size(m), sizeof(*l->e));
    if (!l->e)
        return dec_nomem(d);
    old = path_push(d, key);
    o2 = old;
    json_object_foreach((json_t *)m, k, v)
    {
        struct res_entry *e = &l->e[l->n];
        bool cpu = !strcmp(k, "cpu");

        if (json_is_null(v))
            continue;
        memset(e, 0, sizeof(*e));
        o2 = path_push(d, k);
        /* cpu and memory pass both checks (the common case: skipped) */
        if (container && !cpu && strcmp(k, "memory")) {
            if (kube_label_key_validate(k, &qerr)) {
                rc = dec_fail(d, v, m, "Invalid value: %s: %s", quote(k, q, sizeof(q)), qerr.msg);
                goto out;
            }
            if (!strchr(k, '/') && strcmp(k, "cpu") && strcmp(k, "memory") &&
                strcmp(k, "ephemeral-storage") && !res_is_hugepages(k)) {
                rc = dec_fail(d, v, m,
                              "Invalid value: %s: must be a standard resource for containers",
                              quote(k, q, sizeof(q)));
                goto out;
            }
        }
        if (quantity_text(v, e)) {
            rc = dec_fail(d, v, m, "expected quantity (string or number), got %s",
                          kube_json_type_name(v));
            goto out;
        }
        rc = kube_quantity_parse(e->text, &e->value, &e->milli, &qerr);
        if (rc == -ERANGE && !cpu) {
            /* only the milli value overflowed: the amount is far beyond any fraction */
            rc = kube_quantity_parse(e->text, &e->value, NULL, &qerr);
            e->milli = 0;
            e->whole = true;
        } else if (!rc) {
            e->whole = e->milli % 1000 == 0;
        }
        if (rc) {
            rc = dec_fail(d, v, m, "%s", qerr.msg);
            goto out;
        }
        if (cpu)
            e->value = e->milli;
        if (e->value < 0 || e->milli < 0) {
            rc = dec_fail(d, v, m, "Invalid value: %s: must be greater than or equal to 0",
                          quote(e->text, q, sizeof(q)));
            goto out;
        }
        if (container && res_is_integer(k) && !e->whole) {
            rc = dec_fail(d, v, m, "Invalid value: %s: must be an integer",
                          quote(e->text, q, sizeof(q)));
            goto out;
        }
        e->name = k;
        e->v = v;
        path_pop(d, o2);
        l->n++;
    }
    rc = 0;
    o2 = old;
out:
    path_pop(d, o2);
    path_pop(d, old);
    return rc;
}

/* res_list_release frees what decode_res_list allocated; l may be zeroed or half-filled. */
static void res_list_release(struct res_list *l)
{
    if (l->e != l->small)
        free(l->e);
    l->e = NULL;
    l->n = 0;
}

static const struct res_entry *res_find(const struct res_list *l, const char *name)
{
    size_t i;

    for (i = 0; i < l->n; i++)
        if (!strcmp(l->e[i].name, name))
            return &l->e[i];
    return NULL;
}

static int cmp_scalar(const void *x, const void *y)
{
    return strcmp(((const struct kube_scalar *)x)->name, ((const struct kube_scalar *)y)->name);
}

/* res_build turns entries into a struct kube_resources (scalars sorted by name). */
static int res_build(struct dec *d, const struct res_entry *const *e, size_t n,
                     struct kube_resources *r)
{
    size_t i, ns = 0;

    memset(r, 0, sizeof(*r));
    for (i = 0; i < n; i++) {
        const char *k = e[i]->name;

        if (!strcmp(k, "cpu")) {
            r->cpu_milli = e[i]->value;
            r->set |= KUBE_RES_CPU;
        } else if (!strcmp(k, "memory")) {
            r->memory = e[i]->value;
            r->set |= KUBE_RES_MEMORY;
        } else if (!strcmp(k, "ephemeral-storage")) {
            r->ephemeral = e[i]->value;
            r->set |= KUBE_RES_EPHEMERAL;
        } else if (!strcmp(k, "pods")) {
            r->pods = e[i]->value;
            r->set |= KUBE_RES_PODS;
        } else {
            ns++;
        }
    }
    if (!ns)
        return 0;
    r->scalars = arena_alloc(d->a, ns * sizeof(*r->scalars));
    if (!r->scalars)
        return dec_nomem(d);
    for (i = 0; i < n; i++) {
        const char *k = e[i]->name;

        if (!strcmp(k, "cpu") || !strcmp(k, "memory") || !strcmp(k, "ephemeral-storage") ||
            !strcmp(k, "pods"))
            continue;
        r->scalars[r->nscalars].name = arena_strdup(d->a, k);
        if (!r->scalars[r->nscalars].name)
            return dec_nomem(d);
        r->scalars[r->nscalars++].value = e[i]->value;
    }
    qsort(r->scalars, r->nscalars, sizeof(*r->scalars), cmp_scalar);
    return 0;
}

static int res_list_build(struct dec *d, const struct res_list *l, struct kube_resources *r)
{
    const struct res_entry **p;
    size_t i;
    int rc;

    if (!l->n) {
        memset(r, 0, sizeof(*r));
        return 0;
    }
    p = malloc(l->n * sizeof(*p));
    if (!p)
        return dec_nomem(d);
    for (i = 0; i < l->n; i++)
        p[i] = &l->e[i];
    rc = res_build(d, p, l->n, r);
    free(p);
    return rc;
}

/* decode_container_resources: requests and limits with API defaulting (request = limit when
 * only the limit is given) and ValidateResourceRequirements' rules. */
static int decode_container_resources(struct dec *d, const json_t *c, struct kube_container *out)
{
    const json_t *res;
    struct res_list req, lim;
    const struct res_entry **all = NULL;
    size_t old, o2, o3, i, n = 0;
    char q[128];
    int rc;

    memset(&out->requests, 0, sizeof(out->requests));
    memset(&req, 0, sizeof(req));
    memset(&lim, 0, sizeof(lim));
    rc = get_object(d, c, "resources", &res);
    if (rc || !res)
        return rc;
    old = path_push(d, "resources");
    rc = decode_res_list(d, res, "limits", true, &lim);
    if (!rc)
        rc = decode_res_list(d, res, "requests", true, &req);
    if (rc)
        goto out;
    for (i = 0; i < req.n; i++) {
        const struct res_entry *e = &req.e[i], *l = res_find(&lim, e->name);

        o2 = path_push(d, "requests");
        o3 = path_push(d, e->name);
        if (l && res_no_overcommit(e->name) && e->value != l->value) {
            rc = dec_fail(d, e->v, req.obj, "Invalid value: %s: must be equal to %s limit of %s",
                          quote(e->text, q, sizeof(q)), e->name, l->text);
        } else if (l && (e->value > l->value ||
                         (e->value == l->value && e->milli > l->milli && strcmp(e->name, "cpu")))) {
            rc = dec_fail(d, e->v, req.obj,
                          "Invalid value: %s: must be less than or equal to %s limit of %s",
                          quote(e->text, q, sizeof(q)), e->name, l->text);
        } else if (!l && res_no_overcommit(e->name)) {
            path_pop(d, o2);
            o2 = path_push(d, "limits");
            rc = dec_fail(d, NULL, res,
                          "Required value: Limit must be set for non overcommitable "
                          "resources");
        }
        path_pop(d, o3);
        path_pop(d, o2);
        if (rc)
            goto out;
    }
    /* requests, then every limit without a request (SetDefaults_Pod) */
    all = malloc((req.n + lim.n + 1) * sizeof(*all));
    if (!all) {
        rc = dec_nomem(d);
        goto out;
    }
    for (i = 0; i < req.n; i++)
        all[n++] = &req.e[i];
    for (i = 0; i < lim.n; i++)
        if (!res_find(&req, lim.e[i].name))
            all[n++] = &lim.e[i];
    rc = res_build(d, all, n, &out->requests);
out:
    free(all);
    res_list_release(&req);
    res_list_release(&lim);
    path_pop(d, old);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Containers                                                                                 */

static int decode_port(struct dec *d, const json_t *p, void *slot, void *ctx)
{
    struct kube_port *out = slot;
    bool host_network = *(const bool *)ctx;
    const char *proto, *ip;
    int64_t cp, hp;
    bool has_cp;
    char q[128];
    int rc;

    rc = get_int(d, p, "containerPort", INT32_MIN, INT32_MAX, &cp, &has_cp);
    if (!rc)
        rc = get_int(d, p, "hostPort", INT32_MIN, INT32_MAX, &hp, NULL);
    if (!rc)
        rc = get_string(d, p, "protocol", &proto, "TCP");
    if (!rc)
        rc = get_string(d, p, "hostIP", &ip, "");
    if (rc)
        return rc;
    if (!has_cp || cp == 0) {
        size_t old = path_push(d, "containerPort");

        rc = dec_fail(d, json_object_get(p, "containerPort"), p, "Required value");
        path_pop(d, old);
        return rc;
    }
    if (cp < 1 || cp > 65535 || hp < 0 || hp > 65535) {
        bool bad_cp = cp < 1 || cp > 65535;
        size_t old = path_push(d, bad_cp ? "containerPort" : "hostPort");

        rc = dec_fail(d, json_object_get(p, bad_cp ? "containerPort" : "hostPort"), p,
                      "Invalid value: %lld: must be between 1 and 65535, inclusive",
                      (long long)(bad_cp ? cp : hp));
        path_pop(d, old);
        return rc;
    }
    /* SetDefaults_PodSpec: hostNetwork pods listen on the container port of the host */
    if (host_network && hp == 0)
        hp = cp;
    if (host_network && hp != cp) {
        size_t old = path_push(d, "hostPort");

        rc = dec_fail(d, json_object_get(p, "hostPort"), p,
                      "Invalid value: %lld: must match `containerPort` when `hostNetwork` is true",
                      (long long)hp);
        path_pop(d, old);
        return rc;
    }
    if (!strcmp(proto, "TCP") || !proto[0])
        out->protocol = KUBE_PROTO_TCP;
    else if (!strcmp(proto, "UDP"))
        out->protocol = KUBE_PROTO_UDP;
    else if (!strcmp(proto, "SCTP"))
        out->protocol = KUBE_PROTO_SCTP;
    else {
        size_t old = path_push(d, "protocol");

        rc = dec_fail(d, json_object_get(p, "protocol"), p,
                      "Unsupported value: %s: supported values: \"SCTP\", \"TCP\", \"UDP\"",
                      quote(proto, q, sizeof(q)));
        path_pop(d, old);
        return rc;
    }
    out->container_port = (int32_t)cp;
    out->host_port = (int32_t)hp;
    out->host_ip = ip[0] ? ip : "0.0.0.0";
    return 0;
}

/* How decode_container reads the containers of one list. */
struct container_ctx {
    bool init;
    bool host_network;
};

static int decode_container(struct dec *d, const json_t *c, void *slot, void *ctx)
{
    const struct container_ctx *cc = ctx;
    struct kube_container *out = slot;
    bool init = cc->init, host_network = cc->host_network;
    const char *restart;
    size_t old;
    char q[128];
    int rc;

    memset(out, 0, sizeof(*out));
    rc = get_string(d, c, "name", &out->name, "");
    if (rc)
        return rc;
    if (!out->name[0]) {
        old = path_push(d, "name");
        rc = dec_fail(d, json_object_get(c, "name"), c, "Required value");
        path_pop(d, old);
        return rc;
    }
    rc = get_string(d, c, "image", &out->image, "");
    if (!rc)
        rc = decode_container_resources(d, c, out);
    if (!rc && init)
        rc = get_string(d, c, "restartPolicy", &restart, "");
    if (rc)
        return rc;
    if (init && restart[0]) {
        if (strcmp(restart, "Always")) {
            old = path_push(d, "restartPolicy");
            rc = dec_fail(d, json_object_get(c, "restartPolicy"), c,
                          "Unsupported value: %s: supported values: \"Always\"",
                          quote(restart, q, sizeof(q)));
            path_pop(d, old);
            return rc;
        }
        out->restart_always = true;
    }
    out->ports = decode_array(d, c, "ports", JSON_OBJECT, "object", sizeof(*out->ports),
                              decode_port, &host_network, &out->nports, &rc);
    return rc;
}

static int decode_containers(struct dec *d, const json_t *spec, const char *key, bool init,
                             bool host_network, struct kube_container **out, size_t *n)
{
    struct container_ctx cc = {init, host_network};
    int rc;

    *out = decode_array(d, spec, key, JSON_OBJECT, "object", sizeof(**out), decode_container, &cc,
                        n, &rc);
    if (!rc && !*n && !init) {
        size_t old = path_push(d, key);

        rc = dec_fail(d, json_object_get(spec, key), spec, "Required value");
        path_pop(d, old);
    }
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Tolerations                                                                                */

static int parse_effect(const char *s, enum kube_taint_effect *e)
{
    if (!s[0])
        *e = KUBE_EFFECT_ANY;
    else if (!strcmp(s, "NoSchedule"))
        *e = KUBE_EFFECT_NO_SCHEDULE;
    else if (!strcmp(s, "PreferNoSchedule"))
        *e = KUBE_EFFECT_PREFER_NO_SCHEDULE;
    else if (!strcmp(s, "NoExecute"))
        *e = KUBE_EFFECT_NO_EXECUTE;
    else
        return -EINVAL;
    return 0;
}

#define EFFECTS_SUPPORTED "supported values: \"NoExecute\", \"NoSchedule\", \"PreferNoSchedule\""

static int decode_toleration(struct dec *d, const json_t *t, void *slot, void *ctx)
{
    struct kube_toleration *out = slot;
    const char *op, *effect;
    struct err lerr;
    char q[512];
    size_t old;
    int rc;

    (void)ctx;
    memset(out, 0, sizeof(*out));
    rc = get_string(d, t, "key", &out->key, "");
    if (!rc)
        rc = get_string(d, t, "operator", &op, "");
    if (!rc)
        rc = get_string(d, t, "value", &out->value, "");
    if (!rc)
        rc = get_string(d, t, "effect", &effect, "");
    if (!rc)
        rc = get_int(d, t, "tolerationSeconds", INT64_MIN, INT64_MAX, &out->seconds,
                     &out->has_seconds);
    if (rc)
        return rc;
    if (out->key[0] && kube_label_key_validate(out->key, &lerr)) {
        old = path_push(d, "key");
        rc = dec_fail(d, json_object_get(t, "key"), t, "Invalid value: %s: %s",
                      quote(out->key, q, sizeof(q)), lerr.msg);
        path_pop(d, old);
        return rc;
    }
    if (!strcmp(op, "Exists")) {
        out->op = KUBE_TOL_EXISTS;
    } else if (!op[0] || !strcmp(op, "Equal")) {
        out->op = KUBE_TOL_EQUAL;
    } else {
        old = path_push(d, "operator");
        rc = dec_fail(d, json_object_get(t, "operator"), t,
                      "Unsupported value: %s: supported values: \"Equal\", \"Exists\"",
                      quote(op, q, sizeof(q)));
        path_pop(d, old);
        return rc;
    }
    if (!out->key[0] && out->op != KUBE_TOL_EXISTS) {
        old = path_push(d, "operator");
        rc = dec_fail(d, json_object_get(t, "operator"), t,
                      "Invalid value: %s: operator must be Exists when `key` is empty, which "
                      "means \"match all values and all keys\"",
                      quote(op, q, sizeof(q)));
        path_pop(d, old);
        return rc;
    }
    if (out->op == KUBE_TOL_EXISTS && out->value[0]) {
        old = path_push(d, "operator");
        rc = dec_fail(d, json_object_get(t, "value"), t,
                      "Invalid value: %s: value must be empty when `operator` is 'Exists'",
                      quote(out->value, q, sizeof(q)));
        path_pop(d, old);
        return rc;
    }
    if (out->op == KUBE_TOL_EQUAL && kube_label_value_validate(out->value, &lerr)) {
        old = path_push(d, "value");
        rc = dec_fail(d, json_object_get(t, "value"), t, "Invalid value: %s: %s",
                      quote(out->value, q, sizeof(q)), lerr.msg);
        path_pop(d, old);
        return rc;
    }
    if (parse_effect(effect, &out->effect)) {
        old = path_push(d, "effect");
        rc = dec_fail(d, json_object_get(t, "effect"), t,
                      "Unsupported value: %s: " EFFECTS_SUPPORTED, quote(effect, q, sizeof(q)));
        path_pop(d, old);
        return rc;
    }
    if (out->has_seconds && out->effect != KUBE_EFFECT_NO_EXECUTE) {
        old = path_push(d, "effect");
        rc = dec_fail(
            d, json_object_get(t, "effect"), t,
            "Invalid value: %s: effect must be 'NoExecute' when `tolerationSeconds` is set",
            quote(effect, q, sizeof(q)));
        path_pop(d, old);
        return rc;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Node selector terms                                                                        */

static int cmp_cstr(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The three kinds of requirement: a node selector term's matchExpressions (on labels) and
 * matchFields (on metadata.name), and a metav1.LabelSelector's matchExpressions. */
enum req_kind { REQ_NODE_LABEL, REQ_NODE_FIELD, REQ_LABEL_SELECTOR };

/* decode_value reads one value of a requirement: a label value unless a field's. */
static int decode_value(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    const char **out = slot;
    struct err lerr;
    char q[512];

    if (*(const enum req_kind *)ctx != REQ_NODE_FIELD &&
        kube_label_value_validate(json_string_value(v), &lerr))
        return dec_fail(d, v, NULL, "Invalid value: %s: %s",
                        quote(json_string_value(v), q, sizeof(q)), lerr.msg);
    *out = dup_json_string(d, v);
    return *out ? 0 : dec_nomem(d);
}

static int decode_requirement(struct dec *d, const json_t *r, void *slot, void *ctx)
{
    struct kube_requirement *out = slot;
    enum req_kind kind = *(const enum req_kind *)ctx;
    bool field = kind == REQ_NODE_FIELD, node = kind == REQ_NODE_LABEL;
    const char *op;
    const json_t *vals;
    struct err lerr;
    char q[512];
    size_t i, old, n;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = get_string(d, r, "key", &out->key, "");
    if (!rc)
        rc = get_string(d, r, "operator", &op, "");
    if (!rc)
        rc = get_array(d, r, "values", &vals);
    if (rc)
        return rc;
    n = vals ? json_array_size(vals) : 0;
    if (!strcmp(op, "In"))
        out->op = KUBE_OP_IN;
    else if (!strcmp(op, "NotIn"))
        out->op = KUBE_OP_NOT_IN;
    else if (!field && !strcmp(op, "Exists"))
        out->op = KUBE_OP_EXISTS;
    else if (!field && !strcmp(op, "DoesNotExist"))
        out->op = KUBE_OP_DOES_NOT_EXIST;
    else if (node && !strcmp(op, "Gt"))
        out->op = KUBE_OP_GT;
    else if (node && !strcmp(op, "Lt"))
        out->op = KUBE_OP_LT;
    else {
        old = path_push(d, "operator");
        rc = dec_fail(d, json_object_get(r, "operator"), r,
                      "Invalid value: %s: not a valid selector operator", quote(op, q, sizeof(q)));
        path_pop(d, old);
        return rc;
    }
    old = path_push(d, "values");
    if (field && n != 1)
        rc = dec_fail(d, vals, r,
                      "Required value: must be only one value when `operator` is 'In' "
                      "or 'NotIn' for node field selector");
    else if ((out->op == KUBE_OP_IN || out->op == KUBE_OP_NOT_IN) && n == 0)
        rc = dec_fail(d, vals, r,
                      "Required value: must be specified when `operator` is 'In' or "
                      "'NotIn'");
    else if ((out->op == KUBE_OP_EXISTS || out->op == KUBE_OP_DOES_NOT_EXIST) && n > 0)
        rc = dec_fail(d, vals, r,
                      "Forbidden: may not be specified when `operator` is 'Exists' "
                      "or 'DoesNotExist'");
    else if ((out->op == KUBE_OP_GT || out->op == KUBE_OP_LT) && n != 1)
        rc = dec_fail(d, vals, r,
                      "Required value: must be specified single value when "
                      "`operator` is 'Lt' or 'Gt'");
    path_pop(d, old);
    if (rc)
        return rc;
    if (field && strcmp(out->key, "metadata.name")) {
        old = path_push(d, "key");
        rc = dec_fail(d, json_object_get(r, "key"), r,
                      "Invalid value: %s: not a valid field selector key",
                      quote(out->key, q, sizeof(q)));
        path_pop(d, old);
        return rc;
    }
    if (!field && kube_label_key_validate(out->key, &lerr)) {
        old = path_push(d, "key");
        rc = dec_fail(d, json_object_get(r, "key"), r, "Invalid value: %s: %s",
                      quote(out->key, q, sizeof(q)), lerr.msg);
        path_pop(d, old);
        return rc;
    }
    if (!n)
        return 0;
    out->values = decode_array(d, r, "values", JSON_STRING, "string", sizeof(*out->values),
                               decode_value, &kind, &out->nvalues, &rc);
    if (rc)
        return rc;
    if (n > 1) {
        size_t w = 1;

        qsort(out->values, n, sizeof(*out->values), cmp_cstr);
        for (i = 1; i < n; i++)
            if (strcmp(out->values[i], out->values[w - 1]))
                out->values[w++] = out->values[i];
        out->nvalues = w;
    }
    /* the API accepts a non-integer Gt/Lt value; at match time NewRequirement fails, so the
     * term holding it never matches */
    if (out->op == KUBE_OP_GT || out->op == KUBE_OP_LT) {
        int64_t num;

        out->invalid = go_parse_int(out->values[0], strlen(out->values[0]), 10, 64, &num, NULL);
    }
    return 0;
}

static int decode_term(struct dec *d, const json_t *t, void *slot, void *ctx)
{
    struct kube_node_selector_term *out = slot;
    enum req_kind labels = REQ_NODE_LABEL, fields = REQ_NODE_FIELD;
    int rc;

    (void)ctx;
    memset(out, 0, sizeof(*out));
    out->exprs = decode_array(d, t, "matchExpressions", JSON_OBJECT, "object", sizeof(*out->exprs),
                              decode_requirement, &labels, &out->nexprs, &rc);
    if (!rc)
        out->fields = decode_array(d, t, "matchFields", JSON_OBJECT, "object", sizeof(*out->fields),
                                   decode_requirement, &fields, &out->nfields, &rc);
    return rc;
}

/* decode_preferred reads one preferredDuringSchedulingIgnoredDuringExecution entry. */
static int decode_preferred(struct dec *d, const json_t *t, void *slot, void *ctx)
{
    struct kube_preferred_term *pt = slot;
    const json_t *prefterm = NULL;
    int64_t w = 0;
    int rc;

    (void)ctx;
    rc = get_int(d, t, "weight", INT32_MIN, INT32_MAX, &w, NULL);
    if (!rc && (w < 1 || w > 100)) {
        size_t old = path_push(d, "weight");

        rc = dec_fail(d, json_object_get(t, "weight"), t,
                      "Invalid value: %lld: must be in the range 1-100", (long long)w);
        path_pop(d, old);
    }
    if (!rc)
        rc = get_object(d, t, "preference", &prefterm);
    if (!rc) {
        size_t old = path_push(d, "preference");

        if (prefterm)
            rc = decode_term(d, prefterm, &pt->term, NULL);
        else
            memset(&pt->term, 0, sizeof(pt->term));
        path_pop(d, old);
    }
    pt->weight = (int32_t)w;
    return rc;
}

static int decode_label_selector(struct dec *d, const json_t *obj, struct kube_label_selector *out);

/* decode_str_elem reads one string of a list (namespaces, label keys). */
static int decode_str_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    const char **out = slot;
    struct err lerr;
    char q[512];

    if (ctx && kube_label_key_validate(json_string_value(v), &lerr))
        return dec_fail(d, v, NULL, "Invalid value: %s: %s",
                        quote(json_string_value(v), q, sizeof(q)), lerr.msg);
    *out = dup_json_string(d, v);
    return *out ? 0 : dec_nomem(d);
}

/* decode_pod_term reads one v1.PodAffinityTerm (ctx != NULL: a WeightedPodAffinityTerm, whose
 * weight is read from the parent object ctx points at being t itself). */
static int decode_pod_term(struct dec *d, const json_t *t, struct kube_pod_affinity_term *out)
{
    static const bool label_key = true;
    size_t old;
    char q[512];
    struct err lerr;
    int rc;

    memset(out, 0, sizeof(*out));
    old = path_push(d, "labelSelector");
    rc = decode_label_selector(d, json_object_get(t, "labelSelector"), &out->label_selector);
    path_pop(d, old);
    if (rc)
        return rc;
    old = path_push(d, "namespaceSelector");
    rc =
        decode_label_selector(d, json_object_get(t, "namespaceSelector"), &out->namespace_selector);
    path_pop(d, old);
    if (rc)
        return rc;
    out->namespaces =
        decode_array(d, t, "namespaces", JSON_STRING, "string", sizeof(*out->namespaces),
                     decode_str_elem, NULL, &out->nnamespaces, &rc);
    if (!rc)
        out->match_label_keys = decode_array(d, t, "matchLabelKeys", JSON_STRING, "string",
                                             sizeof(*out->match_label_keys), decode_str_elem,
                                             (void *)&label_key, &out->nmatch_label_keys, &rc);
    if (!rc)
        out->mismatch_label_keys = decode_array(
            d, t, "mismatchLabelKeys", JSON_STRING, "string", sizeof(*out->mismatch_label_keys),
            decode_str_elem, (void *)&label_key, &out->nmismatch_label_keys, &rc);
    if (!rc)
        rc = get_string(d, t, "topologyKey", &out->topology_key, "");
    if (rc)
        return rc;
    if (!out->label_selector.present && (out->nmatch_label_keys || out->nmismatch_label_keys)) {
        const char *k = out->nmatch_label_keys ? "matchLabelKeys" : "mismatchLabelKeys";
        old = path_push(d, k);
        rc = dec_fail(d, json_object_get(t, k), t,
                      "Forbidden: must not be specified when labelSelector is not set");
        path_pop(d, old);
        return rc;
    }
    old = path_push(d, "topologyKey");
    if (!out->topology_key[0])
        rc = dec_fail(d, json_object_get(t, "topologyKey"), t, "Required value: can not be empty");
    else if (kube_label_key_validate(out->topology_key, &lerr))
        rc = dec_fail(d, json_object_get(t, "topologyKey"), t, "Invalid value: %s: %s",
                      quote(out->topology_key, q, sizeof(q)), lerr.msg);
    path_pop(d, old);
    return rc;
}

static int decode_pod_term_elem(struct dec *d, const json_t *t, void *slot, void *ctx)
{
    (void)ctx;
    return decode_pod_term(d, t, slot);
}

static int decode_weighted_pod_term(struct dec *d, const json_t *t, void *slot, void *ctx)
{
    struct kube_pod_affinity_term *out = slot;
    const json_t *term = NULL;
    int64_t w = 0;
    size_t old;
    int rc;

    (void)ctx;
    rc = get_int(d, t, "weight", INT32_MIN, INT32_MAX, &w, NULL);
    if (!rc && (w < 1 || w > 100)) {
        old = path_push(d, "weight");
        rc = dec_fail(d, json_object_get(t, "weight"), t,
                      "Invalid value: %lld: must be in the range 1-100", (long long)w);
        path_pop(d, old);
    }
    if (!rc)
        rc = get_object(d, t, "podAffinityTerm", &term);
    if (rc)
        return rc;
    old = path_push(d, "podAffinityTerm");
    if (term) {
        rc = decode_pod_term(d, term, out);
    } else {
        rc = dec_fail(d, NULL, t, "Required value");
    }
    path_pop(d, old);
    out->weight = (int32_t)w;
    return rc;
}

/* decode_pod_affinity reads spec.affinity.podAffinity or podAntiAffinity (key). */
static int decode_pod_affinity(struct dec *d, const json_t *aff, const char *key,
                               struct kube_pod_affinity *out)
{
    const json_t *pa;
    size_t old;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = get_object(d, aff, key, &pa);
    if (rc || !pa)
        return rc;
    old = path_push(d, key);
    out->required =
        decode_array(d, pa, "requiredDuringSchedulingIgnoredDuringExecution", JSON_OBJECT, "object",
                     sizeof(*out->required), decode_pod_term_elem, NULL, &out->nrequired, &rc);
    if (!rc)
        out->preferred = decode_array(d, pa, "preferredDuringSchedulingIgnoredDuringExecution",
                                      JSON_OBJECT, "object", sizeof(*out->preferred),
                                      decode_weighted_pod_term, NULL, &out->npreferred, &rc);
    path_pop(d, old);
    return rc;
}

static int decode_node_affinity(struct dec *d, const json_t *spec, struct kube_pod *p)
{
    const json_t *aff, *na, *req, *terms;
    size_t o1, o2, o3, o4;
    int rc;

    rc = get_object(d, spec, "affinity", &aff);
    if (rc || !aff)
        return rc;
    o1 = path_push(d, "affinity");
    rc = decode_pod_affinity(d, aff, "podAffinity", &p->extra->pod_affinity);
    if (!rc)
        rc = decode_pod_affinity(d, aff, "podAntiAffinity", &p->extra->pod_anti_affinity);
    if (!rc)
        rc = get_object(d, aff, "nodeAffinity", &na);
    if (rc || !na)
        goto out1;
    o2 = path_push(d, "nodeAffinity");
    rc = get_object(d, na, "requiredDuringSchedulingIgnoredDuringExecution", &req);
    if (rc)
        goto out2;
    if (req) {
        o3 = path_push(d, "requiredDuringSchedulingIgnoredDuringExecution");
        rc = get_array(d, req, "nodeSelectorTerms", &terms);
        if (!rc && (!terms || !json_array_size(terms))) {
            o4 = path_push(d, "nodeSelectorTerms");
            rc = dec_fail(d, terms, req,
                          "Required value: must have at least one node selector term");
            path_pop(d, o4);
        }
        if (!rc) {
            p->has_required_affinity = true;
            p->required.terms = decode_array(d, req, "nodeSelectorTerms", JSON_OBJECT, "object",
                                             sizeof(*p->required.terms), decode_term, NULL,
                                             &p->required.nterms, &rc);
        }
        path_pop(d, o3);
        if (rc)
            goto out2;
    }
    p->preferred =
        decode_array(d, na, "preferredDuringSchedulingIgnoredDuringExecution", JSON_OBJECT,
                     "object", sizeof(*p->preferred), decode_preferred, NULL, &p->npreferred, &rc);
out2:
    path_pop(d, o2);
out1:
    path_pop(d, o1);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Pod                                                                                        */

/* decode_source starts every decoder: obj must be an object; its line and the file (copied
 * into the arena) are noted when line and file are not NULL. */
static int decode_source(struct dec *d, const json_t *obj, int *line, const char **file)
{
    if (!json_is_object(obj))
        return dec_fail(d, obj, NULL, "expected object, got %s",
                        obj ? kube_json_type_name(obj) : "nothing");
    if (line)
        *line = line_of(d, obj, NULL);
    if (file && d->file && !(*file = arena_strdup(d->a, d->file)))
        return dec_nomem(d);
    return 0;
}

static int decode_metadata(struct dec *d, const json_t *obj, const json_t **meta_out,
                           const char **name, const char **uid, const char **rv,
                           struct kube_labels *labels)
{
    const json_t *meta;
    size_t old;
    int rc;

    rc = get_object(d, obj, "metadata", &meta);
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
    old = path_push(d, "metadata");
    rc = get_string(d, meta, "name", name, "");
    if (!rc)
        rc = get_string(d, meta, "uid", uid, "");
    if (!rc)
        rc = get_string(d, meta, "resourceVersion", rv, "");
    if (!rc)
        rc = decode_labels(d, meta, "labels", true, labels);
    path_pop(d, old);
    return rc;
}

static void dec_init(struct dec *d, struct arena *a, const struct kube_lines *lines,
                     const char *file, struct err *err)
{
    memset(d, 0, sizeof(*d));
    d->a = a;
    d->lines = lines;
    d->file = file;
    d->err = err;
}

static int decode_owner(struct dec *d, const json_t *meta, struct kube_pod *p)
{
    const json_t *refs;
    size_t i;
    int rc;

    rc = get_array(d, meta, "ownerReferences", &refs);
    if (rc || !refs)
        return rc;
    for (i = 0; i < json_array_size(refs); i++) {
        const json_t *r = json_array_get(refs, i);

        if (!json_is_object(r) || !json_is_true(json_object_get(r, "controller")))
            continue;
        if (json_is_string(json_object_get(r, "kind")) &&
            json_is_string(json_object_get(r, "name"))) {
            p->owner.kind = dup_json_string(d, json_object_get(r, "kind"));
            p->owner.name = dup_json_string(d, json_object_get(r, "name"));
            p->owner.api_version = json_is_string(json_object_get(r, "apiVersion"))
                                       ? dup_json_string(d, json_object_get(r, "apiVersion"))
                                       : "";
            if (!p->owner.kind || !p->owner.name || !p->owner.api_version)
                return dec_nomem(d);
        }
        break;
    }
    return 0;
}

/* pod_condition returns the first status.conditions[] entry of type, or NULL (malformed
 * entries are skipped: the scheduler reads conditions, it does not validate them) */
static const json_t *pod_condition(const json_t *status, const char *type)
{
    const json_t *conds = json_object_get(status, "conditions");
    size_t i;

    for (i = 0; i < json_array_size(conds); i++) {
        const json_t *c = json_array_get(conds, i);
        const char *t = json_string_value(json_object_get(c, "type"));

        if (t && !strcmp(t, type))
            return c;
    }
    return NULL;
}

/* a condition's member key is the string want */
static bool condition_is(const json_t *c, const char *key, const char *want)
{
    const char *v = json_string_value(json_object_get(c, key));

    return v && !strcmp(v, want);
}

/* PodTerminatingByPreemption's condition: the first DisruptionTarget condition is True with
 * reason PreemptionByScheduler */
static bool disruption_by_preemption(const json_t *status)
{
    const json_t *c = pod_condition(status, "DisruptionTarget");

    return c && condition_is(c, "status", "True") &&
           condition_is(c, "reason", "PreemptionByScheduler");
}

/* ---- topology spread constraints, pod-level resources, what is not modelled ---- */

static int decode_label_selector(struct dec *d, const json_t *obj, struct kube_label_selector *out);

static int decode_string_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    const char **out = slot;

    (void)ctx;
    *out = dup_json_string(d, v);
    return *out ? 0 : dec_nomem(d);
}

/* decode_policy: a NodeInclusionPolicy ("Honor" or "Ignore", dflt when unset) */
static int decode_policy(struct dec *d, const json_t *t, const char *key, bool dflt_honor,
                         bool *honor)
{
    const char *v;
    char q[128];
    size_t old;
    int rc;

    *honor = dflt_honor;
    if ((rc = peek_string(d, t, key, &v)) || !*v)
        return rc;
    if (!strcmp(v, "Honor") || !strcmp(v, "Ignore")) {
        *honor = !strcmp(v, "Honor");
        return 0;
    }
    old = path_push(d, key);
    rc = dec_fail(d, json_object_get(t, key), t,
                  "Unsupported value: %s: supported values: \"Honor\", \"Ignore\"",
                  quote(v, q, sizeof(q)));
    path_pop(d, old);
    return rc;
}

/* one spec.topologySpreadConstraints entry, with ValidateTopologySpreadConstraints' rules
 * on the fields the scheduler reads */
static int decode_spread(struct dec *d, const json_t *t, void *slot, void *ctx)
{
    struct kube_spread_constraint *out = slot;
    const char *when;
    int64_t skew = 0, mind = 0;
    bool has_skew, has_mind, honor = true;
    struct err lerr;
    char q[512];
    size_t old;
    int rc;

    (void)ctx;
    memset(out, 0, sizeof(*out));
    rc = get_int(d, t, "maxSkew", INT32_MIN, INT32_MAX, &skew, &has_skew);
    if (!rc)
        rc = get_int(d, t, "minDomains", INT32_MIN, INT32_MAX, &mind, &has_mind);
    if (!rc)
        rc = get_string(d, t, "topologyKey", &out->topology_key, "");
    if (!rc)
        rc = peek_string(d, t, "whenUnsatisfiable", &when);
    if (rc)
        return rc;
    if (skew <= 0) {
        old = path_push(d, "maxSkew");
        rc = dec_fail(d, json_object_get(t, "maxSkew"), t,
                      "Invalid value: %lld: must be greater than zero", (long long)skew);
        path_pop(d, old);
        return rc;
    }
    out->max_skew = (int32_t)skew;
    old = path_push(d, "topologyKey");
    if (!out->topology_key[0])
        rc = dec_fail(d, NULL, t, "Required value: can not be empty");
    else if (kube_label_key_validate(out->topology_key, &lerr))
        rc = dec_fail(d, json_object_get(t, "topologyKey"), t, "Invalid value: %s: %s",
                      quote(out->topology_key, q, sizeof(q)), lerr.msg);
    path_pop(d, old);
    if (rc)
        return rc;
    old = path_push(d, "whenUnsatisfiable");
    if (!strcmp(when, "DoNotSchedule"))
        out->when_unsatisfiable = KUBE_SPREAD_DO_NOT_SCHEDULE;
    else if (!strcmp(when, "ScheduleAnyway"))
        out->when_unsatisfiable = KUBE_SPREAD_SCHEDULE_ANYWAY;
    else
        rc = dec_fail(d, json_object_get(t, "whenUnsatisfiable"), t,
                      !*when ? "Unsupported value: \"\": supported values: \"DoNotSchedule\", "
                               "\"ScheduleAnyway\""
                             : "Unsupported value: %s: supported values: \"DoNotSchedule\", "
                               "\"ScheduleAnyway\"",
                      quote(when, q, sizeof(q)));
    path_pop(d, old);
    if (rc)
        return rc;
    out->min_domains = 1;
    if (has_mind) {
        old = path_push(d, "minDomains");
        if (mind <= 0)
            rc = dec_fail(d, json_object_get(t, "minDomains"), t,
                          "Invalid value: %lld: must be greater than zero", (long long)mind);
        else if (out->when_unsatisfiable != KUBE_SPREAD_DO_NOT_SCHEDULE)
            rc = dec_fail(d, json_object_get(t, "minDomains"), t,
                          "Invalid value: %lld: can only use minDomains if "
                          "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
                          (long long)mind);
        path_pop(d, old);
        if (rc)
            return rc;
        out->min_domains = (int32_t)mind;
    }
    old = path_push(d, "labelSelector");
    rc = decode_label_selector(d, json_object_get(t, "labelSelector"), &out->selector);
    path_pop(d, old);
    if (!rc)
        rc = decode_policy(d, t, "nodeAffinityPolicy", true, &honor);
    out->affinity_ignore = !honor;
    if (!rc)
        rc = decode_policy(d, t, "nodeTaintsPolicy", false, &out->taints_honor);
    if (!rc)
        out->match_label_keys = decode_array(d, t, "matchLabelKeys", JSON_STRING, "string",
                                             sizeof(*out->match_label_keys), decode_string_elem,
                                             NULL, &out->nmatch_label_keys, &rc);
    if (!rc && out->nmatch_label_keys && !out->selector.present) {
        old = path_push(d, "matchLabelKeys");
        rc = dec_fail(d, json_object_get(t, "matchLabelKeys"), t,
                      "Forbidden: must not be specified when labelSelector is not set");
        path_pop(d, old);
    }
    return rc;
}

/* the pod's spec.resources: requests and limits of cpu, memory and hugepages-* */
static int decode_pod_resources(struct dec *d, const json_t *spec, struct kube_pod *p)
{
    const json_t *res;
    struct res_list req, lim;
    size_t old;
    int rc;

    memset(&req, 0, sizeof(req));
    memset(&lim, 0, sizeof(lim));
    rc = get_object(d, spec, "resources", &res);
    if (rc || !res)
        return rc;
    old = path_push(d, "resources");
    rc = decode_res_list(d, res, "requests", true, &req);
    if (!rc)
        rc = decode_res_list(d, res, "limits", true, &lim);
    if (!rc)
        rc = res_list_build(d, &req, &p->extra->pod_requests);
    if (!rc)
        rc = res_list_build(d, &lim, &p->extra->pod_limits);
    path_pop(d, old);
    res_list_release(&req);
    res_list_release(&lim);
    return rc;
}

/* note_unmodelled records a field gpusched does not model (at most a few per pod) */
static int note_unmodelled(struct dec *d, struct kube_pod *p, const char *field, const char *what)
{
    struct kube_unmodelled *n;

    if (p->extra->nunmodelled >= 8)
        return 0;
    n = arena_alloc(d->a, (p->extra->nunmodelled + 1) * sizeof(*n));
    if (!n || !(field = arena_strdup(d->a, field)))
        return dec_nomem(d);
    if (p->extra->nunmodelled)
        memcpy(n, p->extra->unmodelled, p->extra->nunmodelled * sizeof(*n));
    n[p->extra->nunmodelled].field = field;
    n[p->extra->nunmodelled].what = what;
    p->extra->unmodelled = n;
    p->extra->nunmodelled++;
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Pod volumes: generic ephemeral volumes and in-tree volumes CSI migration translates        */

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

/* decode_intree reads the in-tree source of v (a pod volume or a PersistentVolume's spec), if
 * it has one CSI migration knows; out->plugin stays KUBE_INTREE_NONE otherwise */
static int decode_intree(struct dec *d, const json_t *v, struct kube_inline_volume *out)
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
        old = path_push(d, intree_sources[k].source);
        rc = get_string(d, src, intree_sources[k].id, &out->id, "");
        if (!rc && out->plugin == KUBE_INTREE_AZURE_DISK) {
            /* translation accepts kind Managed (the default) only */
            rc = peek_string(d, src, "kind", &kind);
            out->azure_unmanaged = !rc && kind[0] && strcasecmp(kind, "Managed");
        }
        path_pop(d, old);
        break;
    }
    return rc;
}

int kube_intree_decode(const json_t *v, struct arena *a, const struct kube_lines *lines,
                       const char *file, struct kube_inline_volume *out, struct err *err)
{
    struct dec d;

    dec_init(&d, a, lines, file, err);
    return decode_intree(&d, v, out);
}

/* decode_storage reads list["storage"], a quantity, into bytes (*has: it was given) */
static int decode_storage(struct dec *d, const json_t *list, const char *key, int64_t *out,
                          bool *has)
{
    const json_t *v = json_object_get(list, key);
    char buf[64];
    struct err e;
    size_t old;
    int rc = 0;

    *out = 0;
    *has = false;
    if (!v || json_is_null(v))
        return 0;
    old = path_push(d, key);
    if (json_is_integer(v))
        snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
    else if (json_is_string(v))
        snprintf(buf, sizeof(buf), "%s", json_string_value(v));
    else
        buf[0] = '\0';
    err_clear(&e);
    if (!buf[0])
        rc = dec_fail(d, v, list, "expected quantity, got %s", kube_json_type_name(v));
    else if (kube_quantity_parse(buf, out, NULL, &e))
        rc = dec_fail(d, v, list, "%s", e.msg);
    else if (*out < 0)
        rc = dec_fail(d, v, list, "Invalid value: \"%s\": must be greater than or equal to 0", buf);
    path_pop(d, old);
    *has = !rc;
    return rc;
}

/* decode_claim_template reads an ephemeral volume's volumeClaimTemplate into a claim (the
 * fields VolumeBinding reads), with the API server's validation of the spec */
static int decode_claim_template(struct dec *d, const json_t *t, struct kube_pvc *c)
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
    rc = get_object(d, t, "metadata", &meta);
    if (!rc && meta)
        rc = get_object(d, meta, "annotations", &ann);
    else
        ann = NULL;
    if (!rc)
        rc = get_object(d, t, "spec", &spec);
    if (rc)
        return rc;
    old = path_push(d, "spec");
    if (!spec) {
        rc = dec_fail(d, NULL, t, "Required value");
        goto out;
    }
    rc = get_string(d, spec, "storageClassName", &cls, NULL);
    if (!rc)
        rc = get_string(d, spec, "volumeName", &c->volume_name, "");
    if (!rc)
        rc = get_string(d, spec, "volumeMode", &mode, "Filesystem");
    if (!rc && strcmp(mode, "Filesystem") && strcmp(mode, "Block")) {
        o2 = path_push(d, "volumeMode");
        rc = dec_fail(d, json_object_get(spec, "volumeMode"), spec,
                      "Unsupported value: %s: supported values: \"Block\", \"Filesystem\"",
                      quote(mode, q, sizeof(q)));
        path_pop(d, o2);
    }
    if (!rc)
        rc = get_array(d, spec, "accessModes", &am);
    if (rc)
        goto out;
    c->block = !strcmp(mode, "Block");
    o2 = path_push(d, "accessModes");
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
                          json_is_string(m) ? quote(json_string_value(m), q, sizeof(q)) : "\"\"");
        else
            c->access |= 1u << k;
    }
    path_pop(d, o2);
    if (!rc)
        rc = get_object(d, spec, "resources", &res);
    if (!rc && res) {
        o2 = path_push(d, "resources");
        rc = get_object(d, res, "requests", &req);
        if (!rc && req) {
            size_t o3 = path_push(d, "requests");
            rc = decode_storage(d, req, "storage", &c->request, &has);
            path_pop(d, o3);
        }
        path_pop(d, o2);
    }
    if (!rc && !has) {
        o2 = path_push(d, "resources[storage]");
        rc = dec_fail(d, NULL, spec, "Required value");
        path_pop(d, o2);
    }
    sel = json_object_get(spec, "selector");
    if (!rc && sel && !json_is_null(sel)) {
        o2 = path_push(d, "selector");
        c->has_selector = true;
        rc = decode_label_selector(d, sel, &c->selector);
        path_pop(d, o2);
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
    path_pop(d, old);
    return rc;
}

/* decode_pod_volume reads what the volume plugins need of spec.volumes[i] beyond its claim: a
 * generic ephemeral volume (its claim named later, kube_pod_ephemeral_names) or an in-tree
 * volume CSI migration translates */
static int decode_pod_volume(struct dec *d, const json_t *v, size_t i, struct kube_pod *p)
{
    const json_t *eph = json_object_get(v, "ephemeral"), *t;
    struct kube_inline_volume iv;
    const char *vname;
    char field[64];
    size_t old;
    int rc;

    snprintf(field, sizeof(field), "volumes[%zu]", i);
    old = path_push(d, field);
    rc = get_string(d, v, "name", &vname, "");
    if (rc)
        goto out;
    if (json_is_object(eph)) {
        struct kube_ephemeral_volume *ne;
        struct kube_pvc *tmpl;
        const char **nc;
        size_t o2 = path_push(d, "ephemeral");
        rc = get_object(d, eph, "volumeClaimTemplate", &t);
        if (!rc && !t) {
            size_t o3 = path_push(d, "volumeClaimTemplate");
            rc = dec_fail(d, NULL, eph, "Required value");
            path_pop(d, o3);
        }
        if (!rc) {
            size_t o3 = path_push(d, "volumeClaimTemplate");
            if (!(tmpl = arena_alloc(d->a, sizeof(*tmpl))))
                rc = dec_nomem(d);
            else {
                memset(tmpl, 0, sizeof(*tmpl));
                rc = decode_claim_template(d, t, tmpl);
            }
            path_pop(d, o3);
        }
        path_pop(d, o2);
        if (rc)
            goto out;
        if (!(ne = arena_alloc(d->a, (p->extra->nephemeral + 1) * sizeof(*ne))) ||
            !(nc = arena_alloc(d->a, (p->nclaims + 1) * sizeof(*nc)))) {
            rc = dec_nomem(d);
            goto out;
        }
        if (p->extra->nephemeral)
            memcpy(ne, p->extra->ephemeral, p->extra->nephemeral * sizeof(*ne));
        if (p->nclaims)
            memcpy(nc, p->claims, p->nclaims * sizeof(*nc));
        ne[p->extra->nephemeral].claim = p->nclaims;
        ne[p->extra->nephemeral].volume = vname;
        ne[p->extra->nephemeral].tmpl = tmpl;
        nc[p->nclaims] = vname; /* until the pod's name is known */
        p->extra->ephemeral = ne;
        p->extra->nephemeral++;
        p->claims = nc;
        p->nclaims++;
        goto out;
    }
    if ((rc = decode_intree(d, v, &iv)) || iv.plugin == KUBE_INTREE_NONE)
        goto out;
    {
        struct kube_inline_volume *n =
            arena_alloc(d->a, (p->extra->ninline_volumes + 1) * sizeof(*n));
        if (!n) {
            rc = dec_nomem(d);
            goto out;
        }
        if (p->extra->ninline_volumes)
            memcpy(n, p->extra->inline_volumes, p->extra->ninline_volumes * sizeof(*n));
        n[p->extra->ninline_volumes++] = iv;
        p->extra->inline_volumes = n;
    }
out:
    path_pop(d, old);
    return rc;
}

int kube_pod_ephemeral_names(struct kube_pod *p, struct arena *a)
{
    const char **nc;
    size_t i;

    if (!kube_pod_ext(p)->nephemeral)
        return 0;
    /* the claims array may be shared with the template the pod was copied from */
    if (!(nc = arena_alloc(a, p->nclaims * sizeof(*nc))))
        return -ENOMEM;
    memcpy(nc, p->claims, p->nclaims * sizeof(*nc));
    for (i = 0; i < kube_pod_ext(p)->nephemeral; i++) {
        const struct kube_ephemeral_volume *e = &kube_pod_ext(p)->ephemeral[i];
        size_t n = strlen(p->name) + strlen(e->volume) + 2;
        char *s = arena_alloc(a, n);
        if (!s)
            return -ENOMEM;
        snprintf(s, n, "%s-%s", p->name, e->volume);
        nc[e->claim] = s;
    }
    p->claims = nc;
    return 0;
}

/* The pod fields that change kube-scheduler's answer through plugins gpusched does not model
 * (docs/scheduling.md, "What gpusched models, what it refuses"). */
static int decode_unmodelled(struct dec *d, const json_t *spec, struct kube_pod *p)
{
    static const struct {
        const char *source, *what;
    } vols[] = {
        {"gcePersistentDisk", "VolumeRestrictions (disk conflicts) is not modelled"},
        {"awsElasticBlockStore", "VolumeRestrictions (disk conflicts) is not modelled"},
        {"rbd", "VolumeRestrictions (disk conflicts) is not modelled"},
        {"iscsi", "VolumeRestrictions (disk conflicts) is not modelled"},
    };
    const json_t *vv, *claims;
    char field[96];
    size_t i, k;
    int rc;

    vv = json_object_get(spec, "volumes");
    for (i = 0; json_is_array(vv) && i < json_array_size(vv); i++) {
        const json_t *v = json_array_get(vv, i);
        const json_t *pvc = json_object_get(v, "persistentVolumeClaim");
        if (json_is_object(pvc)) {
            /* VolumeBinding, VolumeZone and VolumeRestrictions read the claim (sched/volumes.c) */
            const json_t *cn = json_object_get(pvc, "claimName");
            const char **nc;
            if (!json_is_string(cn) || !json_string_length(cn)) {
                snprintf(field, sizeof(field), "volumes[%zu].persistentVolumeClaim.claimName", i);
                path_push(d, field);
                return dec_fail(d, cn, pvc, "Required value");
            }
            if (!(nc = arena_alloc(d->a, (p->nclaims + 1) * sizeof(*nc))))
                return dec_nomem(d);
            if (p->nclaims)
                memcpy(nc, p->claims, p->nclaims * sizeof(*nc));
            if (!(nc[p->nclaims] = arena_strdup(d->a, json_string_value(cn))))
                return dec_nomem(d);
            p->claims = nc;
            p->nclaims++;
        }
        if ((rc = decode_pod_volume(d, v, i, p)))
            return rc;
        for (k = 0; k < sizeof(vols) / sizeof(vols[0]); k++) {
            if (!json_is_object(json_object_get(v, vols[k].source)))
                continue;
            snprintf(field, sizeof(field), "spec.volumes[%zu].%s", i, vols[k].source);
            if ((rc = note_unmodelled(d, p, field, vols[k].what)))
                return rc;
        }
    }
    claims = json_object_get(spec, "resourceClaims");
    if (json_is_array(claims) && json_array_size(claims)) {
        p->nresource_claims = json_array_size(claims);
        if ((rc = note_unmodelled(d, p, "spec.resourceClaims",
                                  "DynamicResources is not modelled: the pod is left pending")))
            return rc;
    }
    /* spec.runtimeClassName: the RuntimeClass admission of the manifest loader gives its
     * overhead (src/manifest/objects.c) */
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Status resources of a pod resized in place                                                */

/* What decode_container_status fills: per container of p (containers, then init
 * containers) the lists its status gives, each container read from its first entry. */
struct status_ctx {
    const struct kube_pod *p;
    struct kube_container_status *cs;
    bool *taken;
    char first[PATH_MAX_LEN + 16]; /* the path of the first list given, "" when none */
};

/* container_index returns the index of p's container (containers, then init containers)
 * named name, or their count when none is. */
static size_t container_index(const struct kube_pod *p, const char *name)
{
    size_t i;

    for (i = 0; i < p->ncontainers; i++)
        if (!strcmp(p->containers[i].name, name))
            return i;
    for (i = 0; i < p->ninit_containers; i++)
        if (!strcmp(p->init_containers[i].name, name))
            return p->ncontainers + i;
    return p->ncontainers + p->ninit_containers;
}

static bool res_equal(const struct kube_resources *x, const struct kube_resources *y)
{
    size_t i;

    if (x->set != y->set || x->cpu_milli != y->cpu_milli || x->memory != y->memory ||
        x->ephemeral != y->ephemeral || x->pods != y->pods || x->nscalars != y->nscalars)
        return false;
    for (i = 0; i < x->nscalars; i++)
        if (strcmp(x->scalars[i].name, y->scalars[i].name) ||
            x->scalars[i].value != y->scalars[i].value)
            return false;
    return true;
}

/* decode_status_list reads obj[key], a ResourceList of the status (quantities only: the
 * API server does not hold the status to the spec's resource-name rules), into out. first
 * gets the list's path when it is the first one given that differs from spec (a container's
 * requests; NULL for the pod-level lists), the one a warning names. */
static int decode_status_list(struct dec *d, const json_t *obj, const char *key,
                              const struct kube_resources *spec, struct kube_resources *out,
                              char *first)
{
    struct res_list l;
    int rc = decode_res_list(d, obj, key, false, &l);

    if (!rc)
        rc = res_list_build(d, &l, out);
    res_list_release(&l);
    if (!rc && !first[0] && (out->set || out->nscalars) && !(spec && res_equal(spec, out))) {
        size_t old = path_push(d, key);

        memcpy(first, d->path, d->plen + 1);
        path_pop(d, old);
    }
    return rc;
}

/* decode_container_status reads one entry of containerStatuses or initContainerStatuses:
 * allocatedResources and resources.requests, for the container of its name. Only the first
 * entry of a name is read (resourcehelper's findContainerStatus looks in containerStatuses,
 * then in initContainerStatuses); the others, and entries naming no container, are skipped. */
static int decode_container_status(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    struct status_ctx *sc = ctx;
    const struct kube_resources *spec;
    const json_t *res;
    const char *name;
    size_t k, old;
    int rc;

    (void)slot;
    if ((rc = peek_string(d, v, "name", &name)))
        return rc;
    k = container_index(sc->p, name);
    if (k == sc->p->ncontainers + sc->p->ninit_containers || sc->taken[k])
        return 0;
    sc->taken[k] = true;
    spec = k < sc->p->ncontainers ? &sc->p->containers[k].requests
                                  : &sc->p->init_containers[k - sc->p->ncontainers].requests;
    rc = decode_status_list(d, v, "allocatedResources", spec, &sc->cs[k].allocated, sc->first);
    if (!rc)
        rc = get_object(d, v, "resources", &res);
    if (!rc && res) {
        old = path_push(d, "resources");
        rc = decode_status_list(d, res, "requests", spec, &sc->cs[k].actuated, sc->first);
        path_pop(d, old);
    }
    return rc;
}

/* resize_infeasible: the first PodResizePending condition has reason Infeasible
 * (IsPodResizeInfeasible) */
static bool resize_infeasible(const json_t *status)
{
    const json_t *c = pod_condition(status, "PodResizePending");

    return c && condition_is(c, "reason", "Infeasible");
}

/* decode_status_resources reads the resources p's status reports into a block from the
 * arena (*out; NULL when the status gives none): the containers' lists, matched by name,
 * status.resources and status.allocatedResources, and whether a resize is infeasible.
 * first gets the path of the first list given that differs from its container's spec ("" when
 * none does). */
static int decode_status_resources(struct dec *d, const json_t *status, const struct kube_pod *p,
                                   struct kube_pod_status_resources **out, char *first)
{
    static const char *const keys[] = {"containerStatuses", "initContainerStatuses"};
    size_t nc = p->ncontainers + p->ninit_containers, n, i, old;
    struct kube_pod_status_resources *st;
    struct status_ctx sc;
    const json_t *res;
    int rc = 0;

    *out = NULL;
    /* an infeasible resize counts without any list: containers the status does not report
     * then count nothing */
    if (!json_object_get(status, keys[0]) && !json_object_get(status, keys[1]) &&
        !json_object_get(status, "resources") && !json_object_get(status, "allocatedResources") &&
        !resize_infeasible(status))
        return 0;
    memset(&sc, 0, sizeof(sc));
    sc.p = p;
    if (!(st = arena_alloc(d->a, sizeof(*st))) ||
        !(st->containers = arena_alloc(d->a, nc * sizeof(*st->containers))) ||
        !(sc.taken = calloc(nc, sizeof(*sc.taken))))
        return dec_nomem(d);
    sc.cs = st->containers;
    old = path_push(d, "status");
    for (i = 0; i < 2 && !rc; i++)
        decode_array(d, status, keys[i], JSON_OBJECT, "object", 0, decode_container_status, &sc, &n,
                     &rc);
    if (!rc)
        rc = get_object(d, status, "resources", &res);
    if (!rc && res) {
        size_t o2 = path_push(d, "resources");

        st->has_pod_resources = true;
        rc = decode_status_list(d, res, "requests", NULL, &st->pod_actuated, sc.first);
        path_pop(d, o2);
    }
    if (!rc)
        rc =
            decode_status_list(d, status, "allocatedResources", NULL, &st->pod_allocated, sc.first);
    path_pop(d, old);
    free(sc.taken);
    if (rc)
        return rc;
    st->resize_infeasible = resize_infeasible(status);
    memcpy(first, sc.first, sizeof(sc.first));
    *out = st;
    return 0;
}

/* status_changes sets *out when p's requests as kube-scheduler counts them differ with st
 * from those of its spec alone, for any of the ways kube_pod_requests is asked (plain; with
 * kube-scheduler's defaults for a missing cpu (100m) or memory (200Mi) request, the scoring's;
 * for a pod being scheduled, also without its pod-level resources). Scratch from a; 0 or
 * -ENOMEM. */
static int status_changes(struct kube_pod *p, const struct kube_pod_status_resources *st,
                          struct arena *a, bool *out)
{
    static const struct kube_requests_opts opts[] = {
        {0, 0, false}, {100, 200LL << 20, false}, {100, 200LL << 20, true}};
    size_t i, n = p->node_name[0] ? 2 : 3;
    struct kube_resources with, without;
    int rc = 0;

    *out = false;
    for (i = 0; i < n && !*out && !rc; i++) {
        p->extra->status = st;
        rc = kube_pod_requests(p, &opts[i], a, &with);
        p->extra->status = NULL;
        if (!rc)
            rc = kube_pod_requests(p, &opts[i], a, &without);
        *out = !rc && !res_equal(&with, &without);
    }
    return rc;
}

/* decode_resized keeps the status resources of a bound pod when they change what
 * kube-scheduler counts for it; otherwise (most pods: the kubelet reports what the spec
 * asks) their memory goes back to the arena. A pod without a node is counted on its spec:
 * kube-scheduler's filter reads only the spec of the pod it schedules while its scoring reads
 * the status too, so a status that would change the sums is recorded as not modelled. */
static int decode_resized(struct dec *d, const json_t *status, struct kube_pod *p)
{
    struct kube_pod_status_resources *st;
    struct arena_mark m;
    char first[PATH_MAX_LEN + 16];
    bool changes = false;
    int rc;

    if (!status || kube_pod_phase_terminal(p->phase))
        return 0;
    arena_mark(d->a, &m);
    rc = decode_status_resources(d, status, p, &st, first);
    if (!rc && st && status_changes(p, st, d->a, &changes))
        rc = dec_nomem(d);
    if (rc || !st)
        return rc;
    if (changes && p->node_name[0]) {
        p->extra->status = st;
        return 0;
    }
    arena_rewind(d->a, &m);
    if (!changes)
        return 0;
    if (!first[0]) /* no list differs from the spec: the infeasible resize drops containers */
        snprintf(first, sizeof(first), "status.conditions");
    return note_unmodelled(d, p, first,
                           "resources reported by the status of a pod without a node are not "
                           "counted (kube-scheduler's filter reads the spec, its scoring the "
                           "larger status)");
}

/* pod_decode is kube_pod_decode with the rarely set members decoded into *x (zeroed) */
static int pod_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                      const char *file, struct kube_pod *out, struct kube_pod_extra *x,
                      struct err *err)
{
    struct dec d;
    const json_t *meta = NULL, *spec = NULL, *status = NULL, *gates = NULL, *dt;
    const char *policy = "";
    struct res_list overhead = {NULL, 0, NULL, {{0}}};
    int64_t prio = 0;
    size_t old;
    char q[128];
    int rc;

    dec_init(&d, a, lines, file, err);
    memset(out, 0, sizeof(*out));
    out->extra = x;
    if ((rc = decode_source(&d, obj, &out->source_line, &out->source_file)))
        return rc;
    rc = decode_metadata(&d, obj, &meta, &out->name, &out->uid, &out->resource_version,
                         &out->labels);
    if (rc)
        return rc;
    out->namespace_ = "default";
    if (meta) {
        old = path_push(&d, "metadata");
        rc = get_string(&d, meta, "namespace", &out->namespace_, "default");
        if (!rc && !out->namespace_[0])
            out->namespace_ = "default";
        dt = json_object_get(meta, "deletionTimestamp");
        out->terminating = dt && !json_is_null(dt);
        if (!rc)
            rc = decode_owner(&d, meta, out);
        path_pop(&d, old);
        if (rc)
            return rc;
    }
    rc = get_object(&d, obj, "spec", &spec);
    if (!rc)
        rc = get_object(&d, obj, "status", &status);
    if (rc)
        return rc;
    out->node_name = "";
    out->scheduler_name = "default-scheduler";
    out->priority_class_name = "";
    out->nominated_node_name = "";
    out->phase = "";
    if (status) {
        old = path_push(&d, "status");
        rc = get_string(&d, status, "nominatedNodeName", &out->nominated_node_name, "");
        if (!rc)
            rc = get_string(&d, status, "phase", &out->phase, "");
        if (!rc)
            out->disruption_by_preemption = disruption_by_preemption(status);
        path_pop(&d, old);
        if (rc)
            return rc;
    }
    if (!spec) {
        old = path_push(&d, "spec");
        rc = dec_fail(&d, NULL, obj, "Required value");
        path_pop(&d, old);
        return rc;
    }
    old = path_push(&d, "spec");
    rc = get_string(&d, spec, "nodeName", &out->node_name, "");
    if (!rc)
        rc = get_string(&d, spec, "schedulerName", &out->scheduler_name, "default-scheduler");
    if (!rc && !out->scheduler_name[0])
        out->scheduler_name = "default-scheduler";
    if (!rc)
        rc = get_int(&d, spec, "priority", INT32_MIN, INT32_MAX, &prio, &out->has_priority);
    out->priority = (int32_t)prio;
    if (!rc)
        rc = get_string(&d, spec, "priorityClassName", &out->priority_class_name, "");
    if (!rc)
        rc = get_string(&d, spec, "runtimeClassName", &out->runtime_class_name, "");
    if (!rc)
        rc = get_string(&d, spec, "preemptionPolicy", &policy, "");
    if (rc)
        goto out;
    out->has_preemption_policy = policy[0] != '\0';
    {
        const json_t *pr = json_object_get(spec, "resources");

        out->has_pod_resources =
            json_is_object(pr) && (json_object_size(json_object_get(pr, "requests")) ||
                                   json_object_size(json_object_get(pr, "limits")));
    }
    if (!strcmp(policy, "Never")) {
        out->preempt_never = true;
    } else if (policy[0] && strcmp(policy, "PreemptLowerPriority")) {
        size_t o2 = path_push(&d, "preemptionPolicy");

        rc =
            dec_fail(&d, json_object_get(spec, "preemptionPolicy"), spec,
                     "Unsupported value: %s: supported values: \"Never\", \"PreemptLowerPriority\"",
                     quote(policy, q, sizeof(q)));
        path_pop(&d, o2);
        goto out;
    }
    rc = get_bool(&d, spec, "hostNetwork", &out->host_network);
    if (!rc)
        rc = decode_labels(&d, spec, "nodeSelector", true, &out->node_selector);
    if (!rc)
        rc = decode_node_affinity(&d, spec, out);
    if (!rc)
        out->tolerations =
            decode_array(&d, spec, "tolerations", JSON_OBJECT, "object", sizeof(*out->tolerations),
                         decode_toleration, NULL, &out->ntolerations, &rc);
    if (!rc)
        rc = decode_containers(&d, spec, "containers", false, out->host_network, &out->containers,
                               &out->ncontainers);
    if (!rc)
        rc = decode_containers(&d, spec, "initContainers", true, out->host_network,
                               &out->init_containers, &out->ninit_containers);
    if (!rc)
        rc = decode_res_list(&d, spec, "overhead", false, &overhead);
    if (!rc)
        rc = res_list_build(&d, &overhead, &out->extra->overhead);
    res_list_release(&overhead);
    if (!rc)
        rc = decode_pod_resources(&d, spec, out);
    if (!rc)
        out->extra->spread = decode_array(&d, spec, "topologySpreadConstraints", JSON_OBJECT,
                                          "object", sizeof(*out->extra->spread), decode_spread,
                                          NULL, &out->extra->nspread, &rc);
    if (!rc)
        rc = decode_unmodelled(&d, spec, out);
    if (!rc)
        rc = get_array(&d, spec, "schedulingGates", &gates);
    if (!rc && gates)
        out->nscheduling_gates = json_array_size(gates);
    if (!rc && out->name[0] && kube_pod_ephemeral_names(out, a))
        rc = dec_nomem(&d);
out:
    path_pop(&d, old);
    if (!rc)
        rc = decode_resized(&d, status, out);
    return rc;
}

static bool extra_empty(const struct kube_pod_extra *x)
{
    const struct kube_resources *r[3] = {&x->overhead, &x->pod_requests, &x->pod_limits};
    size_t i;

    for (i = 0; i < 3; i++)
        if (r[i]->set || r[i]->nscalars)
            return false;
    return !x->pod_affinity.nrequired && !x->pod_affinity.npreferred &&
           !x->pod_anti_affinity.nrequired && !x->pod_anti_affinity.npreferred && !x->nspread &&
           !x->nephemeral && !x->ninline_volumes && !x->nunmodelled && !x->status;
}

int kube_pod_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                    const char *file, struct kube_pod *out, struct err *err)
{
    struct kube_pod_extra x;
    int rc;

    memset(&x, 0, sizeof(x));
    rc = pod_decode(obj, a, lines, file, out, &x, err);
    out->extra = NULL;
    if (rc || extra_empty(&x))
        return rc;
    /* most pods have none of these: they share no block, they have none */
    if (!(out->extra = arena_alloc(a, sizeof(*out->extra))))
        return err_set(err, -ENOMEM, "out of memory");
    *out->extra = x;
    return 0;
}

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
    rc = get_string(d, t, "key", &out->key, "");
    if (!rc)
        rc = get_string(d, t, "value", &out->value, "");
    if (!rc)
        rc = get_string(d, t, "effect", &effect, "");
    if (rc)
        return rc;
    if (kube_label_key_validate(out->key, &lerr)) {
        old = path_push(d, "key");
        if (!out->key[0])
            rc = dec_fail(d, NULL, t, "Required value");
        else
            rc = dec_fail(d, json_object_get(t, "key"), t, "Invalid value: %s: %s",
                          quote(out->key, q, sizeof(q)), lerr.msg);
        path_pop(d, old);
        return rc;
    }
    if (kube_label_value_validate(out->value, &lerr)) {
        old = path_push(d, "value");
        rc = dec_fail(d, json_object_get(t, "value"), t, "Invalid value: %s: %s",
                      quote(out->value, q, sizeof(q)), lerr.msg);
        path_pop(d, old);
        return rc;
    }
    if (!effect[0] || parse_effect(effect, &out->effect)) {
        old = path_push(d, "effect");
        if (!effect[0])
            rc = dec_fail(d, NULL, t, "Required value");
        else
            rc = dec_fail(d, json_object_get(t, "effect"), t,
                          "Unsupported value: %s: " EFFECTS_SUPPORTED, quote(effect, q, sizeof(q)));
        path_pop(d, old);
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
    rc = peek_string(d, c, "type", &type);
    if (!rc)
        rc = peek_string(d, c, "status", &st);
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
    rc = get_int(d, im, "sizeBytes", 0, INT64_MAX, &size, NULL);
    if (!rc)
        out->names = decode_array(d, im, "names", JSON_STRING, "string", sizeof(*out->names),
                                  decode_str_elem, NULL, &out->nnames, &rc);
    out->size_bytes = size;
    return rc;
}

int kube_node_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                     const char *file, struct kube_node *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *spec = NULL, *status = NULL;
    struct res_list cap = {NULL, 0, NULL, {{0}}}, alloc = {NULL, 0, NULL, {{0}}};
    size_t old;
    int rc;

    dec_init(&d, a, lines, file, err);
    memset(out, 0, sizeof(*out));
    if ((rc = decode_source(&d, obj, &out->source_line, &out->source_file)))
        return rc;
    rc = decode_metadata(&d, obj, &meta, &out->name, &out->uid, &out->resource_version,
                         &out->labels);
    if (!rc)
        rc = get_object(&d, obj, "spec", &spec);
    if (!rc)
        rc = get_object(&d, obj, "status", &status);
    if (rc)
        return rc;
    if (spec) {
        old = path_push(&d, "spec");
        rc = get_bool(&d, spec, "unschedulable", &out->unschedulable);
        if (!rc)
            out->taints =
                decode_array(&d, spec, "taints", JSON_OBJECT, "object", sizeof(*out->taints),
                             decode_taint, NULL, &out->ntaints, &rc);
        path_pop(&d, old);
        if (rc)
            return rc;
    }
    if (status) {
        old = path_push(&d, "status");
        rc = decode_res_list(&d, status, "capacity", false, &cap);
        if (!rc)
            rc = decode_res_list(&d, status, "allocatable", false, &alloc);
        if (!rc)
            rc = res_list_build(&d, &cap, &out->capacity);
        /* SetDefaults_NodeStatus: no allocatable means allocatable = capacity */
        if (!rc && alloc.obj)
            rc = res_list_build(&d, &alloc, &out->allocatable);
        else if (!rc)
            out->allocatable = out->capacity;
        res_list_release(&cap);
        res_list_release(&alloc);
        if (!rc) {
            size_t nconds;

            out->ready = KUBE_READY_UNKNOWN;
            decode_array(&d, status, "conditions", JSON_OBJECT, "object", 0, decode_condition,
                         &out->ready, &nconds, &rc);
        }
        if (!rc)
            out->images =
                decode_array(&d, status, "images", JSON_OBJECT, "object", sizeof(*out->images),
                             decode_image, NULL, &out->nimages, &rc);
        path_pop(&d, old);
    }
    return rc;
}

int kube_runtime_class_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                              const char *file, struct kube_runtime_class *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *ov, *sch;
    const char *uid, *rv;
    struct kube_labels labels;
    struct res_list fixed = {NULL, 0, NULL, {{0}}};
    size_t old;
    int rc;

    dec_init(&d, a, lines, file, err);
    memset(out, 0, sizeof(*out));
    if ((rc = decode_source(&d, obj, NULL, NULL)))
        return rc;
    rc = decode_metadata(&d, obj, &meta, &out->name, &uid, &rv, &labels);
    if (rc)
        return rc;
    if (!out->name[0]) {
        old = path_push(&d, "metadata.name");
        rc = dec_fail(&d, NULL, meta ? meta : obj, "Required value: name is required");
        path_pop(&d, old);
        return rc;
    }
    ov = json_object_get(obj, "overhead");
    if (ov && !json_is_null(ov)) {
        if (!json_is_object(ov)) {
            old = path_push(&d, "overhead");
            rc = dec_fail(&d, ov, obj, "Invalid value: expected an object");
            path_pop(&d, old);
            return rc;
        }
        old = path_push(&d, "overhead");
        rc = decode_res_list(&d, ov, "podFixed", false, &fixed);
        if (!rc)
            rc = res_list_build(&d, &fixed, &out->overhead);
        res_list_release(&fixed);
        path_pop(&d, old);
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
    if ((rc = decode_source(&d, obj, NULL, NULL)))
        return rc;
    rc = decode_metadata(&d, obj, &meta, &out->name, &uid, &rv, &l);
    if (rc)
        return rc;
    if (!out->name[0]) {
        old = path_push(&d, "metadata.name");
        rc = dec_fail(&d, NULL, meta ? meta : obj,
                      "Required value: name or generateName is required");
        path_pop(&d, old);
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
    qsort(out->labels.v, out->labels.n, sizeof(*out->labels.v), cmp_label);
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
    if ((rc = decode_source(&d, obj, NULL, NULL)))
        return rc;
    rc = decode_metadata(&d, obj, &meta, &out->name, &uid, &rv, &labels);
    if (!rc)
        rc = get_int(&d, obj, "value", INT32_MIN, INT32_MAX, &value, &has_value);
    if (!rc)
        rc = get_bool(&d, obj, "globalDefault", &out->global_default);
    if (!rc)
        rc = get_string(&d, obj, "preemptionPolicy", &policy, "");
    if (rc)
        return rc;
    if (!out->name[0]) {
        old = path_push(&d, "metadata.name");
        rc = dec_fail(&d, NULL, meta ? meta : obj,
                      "Required value: name or generateName is required");
        path_pop(&d, old);
        return rc;
    }
    if (!has_value) {
        old = path_push(&d, "value");
        rc = dec_fail(&d, NULL, obj, "Required value");
        path_pop(&d, old);
        return rc;
    }
    if (policy[0] && strcmp(policy, "Never") && strcmp(policy, "PreemptLowerPriority")) {
        old = path_push(&d, "preemptionPolicy");
        rc =
            dec_fail(&d, json_object_get(obj, "preemptionPolicy"), obj,
                     "Unsupported value: %s: supported values: \"Never\", \"PreemptLowerPriority\"",
                     quote(policy, q, sizeof(q)));
        path_pop(&d, old);
        return rc;
    }
    out->value = (int32_t)value;
    out->preempt_never = !strcmp(policy, "Never");
    return 0;
}

/* decode_label_selector: a metav1.LabelSelector at obj (NULL or null: absent). */
static int decode_label_selector(struct dec *d, const json_t *obj, struct kube_label_selector *out)
{
    enum req_kind kind = REQ_LABEL_SELECTOR;
    struct kube_requirement *exprs;
    struct kube_labels ml;
    size_t i, nexprs;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!obj || json_is_null(obj))
        return 0;
    if (!json_is_object(obj))
        return dec_fail(d, obj, NULL, "expected object, got %s", kube_json_type_name(obj));
    rc = decode_labels(d, obj, "matchLabels", true, &ml);
    if (rc)
        return rc;
    exprs = decode_array(d, obj, "matchExpressions", JSON_OBJECT, "object", sizeof(*exprs),
                         decode_requirement, &kind, &nexprs, &rc);
    if (rc)
        return rc;
    out->present = true;
    if (!ml.n && !nexprs)
        return 0;
    /* matchLabels as In with one value each, then matchExpressions (LabelSelectorAsSelector) */
    if (!(out->reqs = arena_alloc(d->a, (ml.n + nexprs) * sizeof(*out->reqs))))
        return dec_nomem(d);
    for (i = 0; i < ml.n; i++) {
        struct kube_requirement *r = &out->reqs[i];
        const char **v = arena_alloc(d->a, sizeof(*v));

        if (!v)
            return dec_nomem(d);
        v[0] = ml.v[i].value;
        r->key = ml.v[i].key;
        r->op = KUBE_OP_IN;
        r->values = v;
        r->nvalues = 1;
    }
    if (nexprs)
        memcpy(out->reqs + ml.n, exprs, nexprs * sizeof(*exprs));
    out->nreqs = ml.n + nexprs;
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
    if ((rc = decode_source(&d, obj, &out->source_line, &out->source_file)))
        return rc;
    rc = decode_metadata(&d, obj, &meta, &out->name, &uid, &rv, &labels);
    if (rc)
        return rc;
    out->namespace_ = "default";
    if (meta) {
        old = path_push(&d, "metadata");
        rc = get_string(&d, meta, "namespace", &out->namespace_, "default");
        if (!rc && !out->namespace_[0])
            out->namespace_ = "default";
        path_pop(&d, old);
        if (rc)
            return rc;
    }
    rc = get_object(&d, obj, "spec", &spec);
    if (!rc)
        rc = get_object(&d, obj, "status", &status);
    if (rc)
        return rc;
    if (spec) {
        old = path_push(&d, "spec.selector");
        rc = kube_label_selector_decode(json_object_get(spec, "selector"), a, lines, file,
                                        &out->selector, err);
        path_pop(&d, old);
        if (rc)
            return rc;
    }
    if (status) {
        old = path_push(&d, "status");
        rc =
            get_int(&d, status, "disruptionsAllowed", INT32_MIN, INT32_MAX, &allowed, &has_allowed);
        if (!rc)
            rc = get_object(&d, status, "disruptedPods", &disrupted);
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
        path_pop(&d, old);
        if (rc)
            return rc;
    }
    out->disruptions_allowed = (int32_t)allowed;
    return 0;
}

int kube_label_selector_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                               const char *file, struct kube_label_selector *out, struct err *err)
{
    struct dec d;

    dec_init(&d, a, lines, file, err);
    return decode_label_selector(&d, obj, out);
}

int kube_node_selector_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                              const char *file, struct kube_node_selector *out, struct err *err)
{
    struct dec d;
    const json_t *terms;
    int rc;

    dec_init(&d, a, lines, file, err);
    memset(out, 0, sizeof(*out));
    if (!json_is_object(obj))
        return dec_fail(&d, obj, NULL, "Invalid value: must be an object");
    rc = get_array(&d, obj, "nodeSelectorTerms", &terms);
    if (!rc && (!terms || !json_array_size(terms))) {
        size_t o = path_push(&d, "nodeSelectorTerms");
        rc = dec_fail(&d, terms, obj, "Required value: must have at least one node selector term");
        path_pop(&d, o);
    }
    if (!rc)
        out->terms = decode_array(&d, obj, "nodeSelectorTerms", JSON_OBJECT, "object",
                                  sizeof(*out->terms), decode_term, NULL, &out->nterms, &rc);
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
            return dec_fail(d, v, parent, "Invalid value: %s: %s", quote(name, q, sizeof(q)),
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
    rc = get_string(d, v, "name", &out->name, "");
    if (!rc) {
        old = path_push(d, "name");
        rc = csi_name_check(d, out->name, json_object_get(v, "name"), v);
        for (i = 1; !rc && i <= *seen; i++)
            if (!strcmp(out[-(ptrdiff_t)i].name, out->name))
                rc = dec_fail(d, json_object_get(v, "name"), v, "Duplicate value: %s",
                              quote(out->name, q, sizeof(q)));
        path_pop(d, old);
    }
    if (!rc)
        rc = peek_string(d, v, "nodeID", &node_id);
    if (!rc && !node_id[0]) {
        old = path_push(d, "nodeID");
        rc = dec_fail(d, NULL, v, "Required value");
        path_pop(d, old);
    }
    if (!rc)
        rc = get_object(d, v, "allocatable", &alloc);
    if (!rc && alloc) {
        old = path_push(d, "allocatable");
        rc = get_int(d, alloc, "count", INT32_MIN, INT32_MAX, &count, &out->has_count);
        if (!rc && out->has_count && count < 0) {
            size_t o2 = path_push(d, "count");
            rc = dec_fail(d, json_object_get(alloc, "count"), alloc,
                          "Invalid value: %lld: must be greater than or equal to 0",
                          (long long)count);
            path_pop(d, o2);
        }
        out->count = (int32_t)count;
        path_pop(d, old);
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

    if ((rc = decode_metadata(d, obj, meta, name, &uid, &rv, &labels)))
        return rc;
    if (!(*name)[0]) {
        old = path_push(d, "metadata.name");
        rc = dec_fail(d, NULL, obj, "Required value: name or generateName is required");
        path_pop(d, old);
        return rc;
    }
    if (ns) {
        old = path_push(d, "metadata");
        rc = get_string(d, *meta, "namespace", ns, "default");
        if (!rc && !(*ns)[0])
            *ns = "default";
        path_pop(d, old);
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
    if ((rc = decode_source(&d, obj, &out->source_line, &out->source_file)) ||
        (rc = storage_meta(&d, obj, &meta, &out->name, NULL)))
        return rc;
    old = path_push(&d, "metadata");
    rc = get_object(&d, meta, "annotations", &ann);
    if (!rc && ann) {
        size_t o2 = path_push(&d, "annotations");
        rc = get_string(&d, ann, "storage.alpha.kubernetes.io/migrated-plugins",
                        &out->migrated_plugins, "");
        path_pop(&d, o2);
    }
    path_pop(&d, old);
    if (!rc)
        rc = get_object(&d, obj, "spec", &spec);
    if (rc || !spec)
        return rc;
    old = path_push(&d, "spec");
    out->drivers = decode_array(&d, spec, "drivers", JSON_OBJECT, "object", sizeof(*out->drivers),
                                decode_csi_node_driver, &seen, &out->ndrivers, &rc);
    path_pop(&d, old);
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
    if ((rc = decode_source(&d, obj, &out->source_line, &out->source_file)) ||
        (rc = storage_meta(&d, obj, &meta, &out->name, NULL)))
        return rc;
    old = path_push(&d, "metadata.name");
    rc = csi_name_check(&d, out->name, json_object_get(meta, "name"), meta);
    path_pop(&d, old);
    if (!rc)
        rc = get_object(&d, obj, "spec", &spec);
    if (rc || !spec)
        return rc;
    old = path_push(&d, "spec");
    rc = get_bool(&d, spec, "storageCapacity", &out->storage_capacity);
    if (!rc)
        rc = get_bool(&d, spec, "preventPodSchedulingIfMissing", &out->prevent_if_missing);
    path_pop(&d, old);
    return rc;
}

/* capacity_field reads a quantity field of a CSIStorageCapacity */
static int capacity_field(struct dec *d, const json_t *obj, const char *key, bool nonneg,
                          int64_t *out, bool *has)
{
    int rc = decode_storage(d, obj, key, out, has);

    /* decode_storage refuses a negative quantity for capacity; maximumVolumeSize is not
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
    if ((rc = decode_source(&d, obj, &out->source_line, &out->source_file)) ||
        (rc = storage_meta(&d, obj, &meta, &out->name, &out->namespace_)) ||
        (rc = get_string(&d, obj, "storageClassName", &out->storage_class, "")))
        return rc;
    err_clear(&e);
    if (kube_dns_subdomain_validate(out->storage_class, &e)) {
        old = path_push(&d, "storageClassName");
        rc = dec_fail(&d, json_object_get(obj, "storageClassName"), obj, "Invalid value: %s: %s",
                      quote(out->storage_class, q, sizeof(q)), e.msg);
        path_pop(&d, old);
        return rc;
    }
    topo = json_object_get(obj, "nodeTopology");
    if (topo && !json_is_null(topo)) {
        old = path_push(&d, "nodeTopology");
        out->has_topology = true;
        rc = decode_label_selector(&d, topo, &out->topology);
        path_pop(&d, old);
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
    if ((rc = decode_source(&d, obj, &out->source_line, &out->source_file)) ||
        (rc = storage_meta(&d, obj, &meta, &out->name, NULL)) ||
        (rc = get_object(&d, obj, "spec", &spec)))
        return rc;
    old = path_push(&d, "spec");
    rc = get_string(&d, spec, "attacher", &out->attacher, "");
    if (!rc) {
        o2 = path_push(&d, "attacher");
        rc = csi_name_check(&d, out->attacher, json_object_get(spec, "attacher"), spec);
        path_pop(&d, o2);
    }
    if (!rc)
        rc = get_object(&d, spec, "source", &src);
    if (!rc) {
        o2 = path_push(&d, "source");
        rc = get_string(&d, src, "persistentVolumeName", &pv, NULL);
        if (!rc && !pv && !json_is_object(json_object_get(src, "inlineVolumeSpec")))
            rc = dec_fail(&d, src, spec,
                          "Required value: must specify exactly one of inlineVolumeSpec and "
                          "persistentVolumeName");
        else if (!rc && pv && json_is_object(json_object_get(src, "inlineVolumeSpec")))
            rc = dec_fail(&d, src, spec,
                          "Forbidden: must specify exactly one of inlineVolumeSpec and "
                          "persistentVolumeName");
        else if (!rc && pv && !pv[0]) {
            size_t o3 = path_push(&d, "persistentVolumeName");
            rc = dec_fail(&d, json_object_get(src, "persistentVolumeName"), src,
                          "Required value: must specify non empty persistentVolumeName");
            path_pop(&d, o3);
        }
        path_pop(&d, o2);
    }
    out->pv_name = pv;
    if (!rc)
        rc = get_string(&d, spec, "nodeName", &out->node_name, "");
    if (!rc) {
        struct err e;
        char q[512];
        err_clear(&e);
        if (kube_dns_subdomain_validate(out->node_name, &e)) {
            o2 = path_push(&d, "nodeName");
            rc = dec_fail(&d, json_object_get(spec, "nodeName"), spec, "Invalid value: %s: %s",
                          quote(out->node_name, q, sizeof(q)), e.msg);
            path_pop(&d, o2);
        }
    }
    path_pop(&d, old);
    return rc;
}
