/* decode.c - the decoder's core (see decode-int.h): its state, the field path, the error that
 * names path and line, the typed getters and what every kind has (metadata, labels).
 *
 * Decoding is one pass over the JSON tree; everything kept is copied into the caller's arena.
 * Every list of the object model is read by dec_list, so a list's element type, path and
 * length are handled in one place. */
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
/* Decoder state: arena, error report, field path                                            */

/* dec_push appends ".name" (or "name" at the root) and returns the length to pop back to. */
size_t dec_push(struct dec *d, const char *name)
{
    size_t old = d->plen, n = strlen(name), dot = old ? 1 : 0;

    /* a path that no longer fits is cut short; messages stay readable */
    if (old + dot + n >= DEC_PATH_MAX)
        return old;
    if (dot)
        d->path[old] = '.';
    memcpy(d->path + old + dot, name, n + 1);
    d->plen = old + dot + n;
    return old;
}

/* dec_index appends "[i]" (what snprintf would, cut short as it would: one array element per
 * decoded pod's container, toleration, term, ... made snprintf show in profiles) */
size_t dec_index(struct dec *d, size_t i)
{
    size_t old = d->plen, len = 0, nd = 0, w;
    char tmp[24], rev[24];

    if (old >= DEC_PATH_MAX)
        return old;
    do
        rev[nd++] = (char)('0' + i % 10);
    while (i /= 10);
    tmp[len++] = '[';
    while (nd)
        tmp[len++] = rev[--nd];
    tmp[len++] = ']';
    w = len < DEC_PATH_MAX - old - 1 ? len : DEC_PATH_MAX - old - 1;
    memcpy(d->path + old, tmp, w);
    d->path[old + w] = '\0';
    d->plen = old + len >= DEC_PATH_MAX ? DEC_PATH_MAX - 1 : old + len;
    return old;
}

void dec_pop(struct dec *d, size_t old)
{
    d->plen = old;
    d->path[old] = '\0';
}

/* dec_line: the line of v, else of its container. true/false/null are shared singletons in
 * jansson, so their recorded line is meaningless and the container's is used. */
int dec_line(const struct dec *d, const json_t *v, const json_t *parent)
{
    int l = 0;

    if (v && !json_is_boolean(v) && !json_is_null(v))
        l = kube_lines_find(d->lines, v);
    if (!l && parent)
        l = kube_lines_find(d->lines, parent);
    return l;
}

int dec_fail(struct dec *d, const json_t *v, const json_t *parent, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int dec_fail(struct dec *d, const json_t *v, const json_t *parent, const char *fmt, ...)
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
    err_at(d->err, d->file, dec_line(d, v, parent), 0);
    err_field(d->err, d->path);
    return -EINVAL;
}

int dec_nomem(struct dec *d)
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

const char *dec_quote(const char *s, char *buf, size_t size)
{
    return quote_go_to(buf, size, s, strlen(s));
}

/* ---------------------------------------------------------------------------------------- */
/* Typed field getters. Absent and null both mean "unset", as in Go's decoder.                */

/* the decoded objects' strings are never written to: repeats may share one copy */
const char *dec_strdup(struct dec *d, const json_t *v)
{
    return arena_strndup_shared(d->a, json_string_value(v), json_string_length(v));
}

/* dec_check_type fails with "KEY: expected WANT, got TYPE" unless ok (v is obj[key]). */
int dec_check_type(struct dec *d, const json_t *obj, const char *key, const json_t *v, bool ok,
                   const char *want_name)
{
    size_t old;
    int rc;

    if (ok)
        return 0;
    old = dec_push(d, key);
    rc = dec_fail(d, v, obj, "expected %s, got %s", want_name, kube_json_type_name(v));
    dec_pop(d, old);
    return rc;
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
    if ((rc = dec_check_type(d, obj, key, v, json_is_string(v), "string")))
        return rc;
    *out = dec_strdup(d, v);
    return *out ? 0 : dec_nomem(d);
}

int dec_typed(struct dec *d, const json_t *obj, const char *key, json_type want,
              const char *want_name, const json_t **out)
{
    const json_t *v = json_object_get(obj, key);
    int rc;

    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if ((rc = dec_check_type(d, obj, key, v, json_typeof(v) == want, want_name)))
        return rc;
    *out = v;
    return 0;
}

/* dec_peek: obj[key] as a string borrowed from the JSON ("" when unset), not copied. */
int dec_peek(struct dec *d, const json_t *obj, const char *key, const char **out)
{
    const json_t *v;
    int rc = dec_typed(d, obj, key, JSON_STRING, "string", &v);

    *out = v ? json_string_value(v) : "";
    return rc;
}

int dec_object(struct dec *d, const json_t *obj, const char *key, const json_t **out)
{
    return dec_typed(d, obj, key, JSON_OBJECT, "object", out);
}

int dec_array(struct dec *d, const json_t *obj, const char *key, const json_t **out)
{
    return dec_typed(d, obj, key, JSON_ARRAY, "array", out);
}

int dec_bool(struct dec *d, const json_t *obj, const char *key, bool *out)
{
    const json_t *v = json_object_get(obj, key);
    int rc;

    *out = false;
    if (!v || json_is_null(v))
        return 0;
    if ((rc = dec_check_type(d, obj, key, v, json_is_boolean(v), "boolean")))
        return rc;
    *out = json_is_true(v);
    return 0;
}

/* dec_list reads obj[key], a list whose elements must be of JSON type want (want_name in
 * the message), decoding each with fn into an array of elem-sized slots allocated from the
 * arena (none when elem is 0). Returns the array (NULL when the list is absent, null or
 * empty) with *n the elements decoded; on failure *rc is the error and *n counts the
 * elements decoded before it. */
void *dec_list(struct dec *d, const json_t *obj, const char *key, json_type want,
               const char *want_name, size_t elem, dec_elem_fn fn, void *ctx, size_t *n, int *rc)
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
            *rc = dec_fail(d, v, arr, "expected %s, got %s", want_name, kube_json_type_name(v));
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

/* dec_int: an integer field within [min, max]; *present tells whether it was set. */
int dec_int(struct dec *d, const json_t *obj, const char *key, int64_t min, int64_t max,
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
    old = dec_push(d, key);
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
    dec_pop(d, old);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Labels                                                                                     */

int dec_cmp_label(const void *x, const void *y)
{
    return strcmp(((const struct kube_label *)x)->key, ((const struct kube_label *)y)->key);
}

/* dec_labels reads a map of strings (metadata.labels, spec.nodeSelector) at obj[key],
 * validating keys and values like ValidateLabels when validate is set. Sorted by key. */
int dec_labels(struct dec *d, const json_t *obj, const char *key, bool validate,
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
    rc = dec_object(d, obj, key, &m);
    if (rc || !m || !json_object_size(m))
        return rc;
    out->v = arena_alloc(d->a, json_object_size(m) * sizeof(*out->v));
    if (!out->v)
        return dec_nomem(d);
    old = dec_push(d, key);
    json_object_foreach((json_t *)m, k, v)
    {
        const char *val = "";

        if (json_is_string(v)) {
            val = json_string_value(v);
        } else if (!json_is_null(v)) {
            size_t o2 = dec_push(d, k);

            rc = dec_fail(d, v, m, "expected string, got %s", kube_json_type_name(v));
            dec_pop(d, o2);
            goto out;
        }
        if (validate && kube_label_key_validate(k, &lerr)) {
            rc = dec_fail(d, v, m, "Invalid value: %s: %s", dec_quote(k, q, sizeof(q)), lerr.msg);
            goto out;
        }
        if (validate && kube_label_value_validate(val, &lerr)) {
            rc = dec_fail(d, v, m, "Invalid value: %s: %s", dec_quote(val, q, sizeof(q)), lerr.msg);
            goto out;
        }
        out->v[n].key = arena_strndup_shared(d->a, k, strlen(k));
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

    if (ctx && kube_label_key_validate(json_string_value(v), &lerr))
        return dec_fail(d, v, NULL, "Invalid value: %s: %s",
                        dec_quote(json_string_value(v), q, sizeof(q)), lerr.msg);
    *out = dec_strdup(d, v);
    return *out ? 0 : dec_nomem(d);
}

/* ---------------------------------------------------------------------------------------- */
/* What every object has: its source, metadata                                               */

/* dec_source starts every decoder: obj must be an object; its line and the file (copied
 * into the arena) are noted when line and file are not NULL. */
int dec_source(struct dec *d, const json_t *obj, int *line, const char **file)
{
    if (!json_is_object(obj))
        return dec_fail(d, obj, NULL, "expected object, got %s",
                        obj ? kube_json_type_name(obj) : "nothing");
    if (line)
        *line = dec_line(d, obj, NULL);
    if (file && d->file && !(*file = arena_strdup(d->a, d->file)))
        return dec_nomem(d);
    return 0;
}

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

void dec_init(struct dec *d, struct arena *a, const struct kube_lines *lines, const char *file,
              struct err *err)
{
    memset(d, 0, sizeof(*d));
    d->a = a;
    d->lines = lines;
    d->file = file;
    d->err = err;
}
