/* decode_path.c - where the decoder stands and what it says: the state of one decode, the field
 * path ("spec.containers[0].resources"), the error that names path and line, and the small
 * readings of JSON every other decoder file shares (Go's name of a JSON type, an integer as Go
 * reads one, Go's %q). Below decode_check.c and decode.c; it calls neither. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/quote.h"
#include "kube/decode-int.h"
#include "kube/yaml.h"

/* ---------------------------------------------------------------------------------------- */
/* Decoder state: arena, error report, field path                                            */

void dec_init(struct dec *d, struct arena *a, const struct kube_decode_opts *o, struct err *err)
{
    memset(d, 0, sizeof(*d));
    d->a = a;
    d->err = err;
    d->opts = o;
    if (o) {
        d->lines = o->lines;
        d->file = o->file;
    }
}

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

int dec_fail_at(struct dec *d, const json_t *v, const json_t *parent, const char *field,
                const char *msg)
{
    if (!d->err)
        return -EINVAL;
    err_set(d->err, -EINVAL, "%s", msg);
    d->err->file[0] = '\0';
    err_at(d->err, d->file, dec_line(d, v, parent), 0);
    err_field(d->err, field);
    return -EINVAL;
}

int dec_fail(struct dec *d, const json_t *v, const json_t *parent, const char *fmt, ...)
{
    char msg[ERR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return dec_fail_at(d, v, parent, d->path, msg);
}

int dec_nomem(struct dec *d)
{
    return err_set(d->err, -ENOMEM, "out of memory");
}

const char *dec_json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "bool";
    case JSON_NULL:
        return "null";
    }
    return "unknown";
}

const char *dec_quote(const char *s, char *buf, size_t size)
{
    return quote_go_to(buf, size, s, strlen(s));
}

bool dec_json_int64(const json_t *v, int64_t *out)
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
