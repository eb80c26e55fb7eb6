/* decode_check.c - the walk of an object over its Go type's tables (decode-int.h): every field
 * of a manifest checked once, by name and JSON type, before it is decoded; and, for a getter
 * that meets a value of the wrong type, the field's Go struct and type named as the API
 * server's decoder names them. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/quote.h"
#include "kube/decode-int.h"
#include "kube/quantity.h"

/* ---------------------------------------------------------------------------------------- */
/* JSON types as Go's decoder reads them                                                      */

/* go_number writes a JSON number as Go's encoder writes a float64 (what a YAML number became
 * on its way to the API server): the shortest text that reads back, with an exponent below
 * 1e-6 and from 1e21 ("1e+300", "1e-7", "3000000000", "1.5"). */
static void go_number(const json_t *v, char *out, size_t size)
{
    double f = json_real_value(v), a = fabs(f);
    size_t n;
    int p;

    if (json_is_integer(v)) {
        snprintf(out, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return;
    }
    if (a != 0 && (a < 1e-6 || a >= 1e21)) {
        for (p = 0; p < 17; p++) {
            snprintf(out, size, "%.*e", p, f);
            if (strtod(out, NULL) == f)
                break;
        }
        /* Go's encoder writes "e-9" where C writes "e-09" */
        n = strlen(out);
        if (n >= 4 && out[n - 4] == 'e' && out[n - 3] == '-' && out[n - 2] == '0') {
            out[n - 2] = out[n - 1];
            out[n - 1] = '\0';
        }
        return;
    }
    for (p = 0; p <= 20; p++) {
        snprintf(out, size, "%.*f", p, f);
        if (strtod(out, NULL) == f)
            return;
    }
}

/* kind_ok: v (not null) is of the JSON type a field of kind k holds */
static bool kind_ok(enum dec_kind k, const json_t *v)
{
    int64_t n;

    switch (k) {
    case DEC_STR:
        return json_is_string(v);
    case DEC_BOOL:
        return json_is_boolean(v);
    case DEC_INT32:
        return dec_json_int64(v, &n) && n >= INT32_MIN && n <= INT32_MAX;
    case DEC_INT64:
        return dec_json_int64(v, &n);
    case DEC_NUM:
        return json_is_number(v);
    case DEC_OBJ:
    case DEC_MAP:
        return json_is_object(v);
    case DEC_ARR:
        return json_is_array(v);
    case DEC_QTY:
        return json_is_string(v) || json_is_number(v);
    case DEC_INTSTR:
        return json_is_string(v) || (dec_json_int64(v, &n) && n >= INT32_MIN && n <= INT32_MAX);
    case DEC_ANY:
        break;
    }
    return true;
}

/* elem_go: the Go type of an element of f's array or map ("[]v1.Container": "v1.Container") */
static const char *elem_go(const struct dec_field *f)
{
    const char *b;

    if (!strncmp(f->go, "[]", 2))
        return f->go + 2;
    if (!strncmp(f->go, "map[", 4) && (b = strchr(f->go, ']')))
        return b + 1;
    return f->go;
}

/* type_message writes the Go decoder's words for v, not of Go type go: in a struct (st and
 * path not NULL; the indexes of path are not part of Go's field path) or alone */
static void type_message(char *msg, size_t size, const json_t *v, const char *st, const char *path,
                         const char *go)
{
    char got[64], gopath[DEC_PATH_MAX + 16];
    size_t i, n = 0;

    /* an integer field names the number it could not hold */
    if (json_is_number(v) && (!strncmp(go, "int", 3) || !strncmp(go, "uint", 4))) {
        memcpy(got, "number ", 7);
        go_number(v, got + 7, sizeof(got) - 7);
    } else {
        snprintf(got, sizeof(got), "%s", dec_json_type_name(v));
    }
    if (!st) {
        snprintf(msg, size, "json: cannot unmarshal %s into Go value of type %s", got, go);
        return;
    }
    for (i = 0; path[i] && n < sizeof(gopath) - 1; i++) {
        if (path[i] == '[') {
            while (path[i + 1] && path[i] != ']')
                i++;
            continue;
        }
        gopath[n++] = path[i];
    }
    gopath[n] = '\0';
    snprintf(msg, size, "json: cannot unmarshal %s into Go struct field %s.%s of type %s", got, st,
             gopath, go);
}

int kube_json_type_error(struct err *err, const json_t *v, const char *st, const char *path,
                         const char *go)
{
    char msg[ERR_MSG_MAX];

    type_message(msg, sizeof(msg), v, st, path, go);
    return err_set(err, -EINVAL, "%s", msg);
}

/* The walk keeps the path as a stack of frames (a key, or an index when key is NULL) and
 * writes it out only for a message: most fields are fine. Deeper than WALK_DEPTH (beyond any
 * real object; the parser allows 128 levels) it stops looking. */
#define WALK_DEPTH 160

struct walk {
    struct dec *d;
    bool names; /* unknown fields are reported too */
    size_t n;
    struct {
        const char *key;
        size_t index;
    } f[WALK_DEPTH];
};

/* path writes the first n frames after the root's path into d->path, the indexes too (the
 * strict decoder's path) or not (Go's field path, keys only) */
static void path(struct walk *w, size_t n, bool indexes)
{
    struct dec *d = w->d;
    size_t i;

    dec_pop(d, d->root_plen);
    for (i = 0; i < n; i++)
        if (w->f[i].key)
            dec_push(d, w->f[i].key);
        else if (indexes)
            dec_index(d, w->f[i].index);
}

/* type_error fails on v, of the wrong JSON type for kind k of field f of struct st, in the
 * words of the API server's decoder. fn frames lead to the field itself (an element's index
 * or a map key after them are not part of Go's field path). */
static int type_error(struct walk *w, const json_t *v, const json_t *parent,
                      const struct dec_type *st, const struct dec_field *f, enum dec_kind k,
                      size_t fn)
{
    struct dec *d = w->d;
    char msg[ERR_MSG_MAX];
    struct err qerr;

    if (k == DEC_QTY) {
        /* Quantity reads its JSON itself: the text of a bool, object or array is no quantity */
        kube_quantity_parse(json_is_boolean(v) ? (json_is_true(v) ? "true" : "false") : "{", NULL,
                            NULL, &qerr);
        path(w, w->n, true);
        return dec_fail_at(d, v, parent, d->path, qerr.msg);
    }
    if (k == DEC_INTSTR) {
        /* IntOrString reads a non-string as an int32 of its own */
        type_message(msg, sizeof(msg), v, NULL, NULL, "int32");
        return dec_fail_at(d, v, parent, "", msg);
    }
    path(w, fn, false);
    type_message(msg, sizeof(msg), v, st->name, d->path, k == f->kind ? f->go : elem_go(f));
    return dec_fail_at(d, v, parent, "", msg);
}

/* find_field: the field called key (len bytes) of t, or NULL (tables are sorted by name) */
static const struct dec_field *find_field(const struct dec_type *t, const char *key, size_t len)
{
    size_t lo = 0, hi = t->nfields;

    if (strlen(key) != len) /* a NUL inside: no field is called that */
        return NULL;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *name = t->fields[mid].name;
        int c =
            key[0] != name[0] ? (unsigned char)key[0] - (unsigned char)name[0] : strcmp(key, name);

        if (!c)
            return &t->fields[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* unknown reports the field key of obj that its type does not have: a warning, or with
 * opts->strict an error, in kubectl's strict field validation's words */
static int unknown(struct walk *w, const char *key, size_t len, const json_t *v, const json_t *obj)
{
    struct dec *d = w->d;
    const struct kube_decode_opts *o = d->opts;
    struct buf b = BUF_INIT(ERR_MSG_MAX - 64);
    char msg[ERR_MSG_MAX];
    int line = dec_line(d, v, obj), rc;

    /* the path as the strict decoder writes it: "spec.containers[0].imagee" */
    path(w, w->n, true);
    if (buf_append(&b, d->path, d->plen) || (d->plen && buf_append(&b, ".", 1)) ||
        buf_append(&b, key, len)) {
        buf_release(&b);
        return dec_nomem(d);
    }
    memcpy(msg, "unknown field ", 14);
    quote_go_to(msg + 14, sizeof(msg) - 14, b.data, b.len);
    buf_release(&b);
    if (o->strict) {
        char smsg[ERR_MSG_MAX + 32];

        snprintf(smsg, sizeof(smsg), "strict decoding error: %s", msg);
        return dec_fail_at(d, v, obj, "", smsg);
    }
    if (!o->warn || !(rc = o->warn(o->warn_arg, line, msg)))
        return 0;
    return err_set(d->err, rc, "%s", rc == -ENOMEM ? "out of memory" : "cannot report a warning");
}

static int walk_object(struct walk *w, const json_t *obj, const struct dec_type *t);

/* walk_value checks v, the value of field f of st (or, kind being f->elem, one of its
 * elements); fn as for type_error. */
static int walk_value(struct walk *w, const json_t *v, const json_t *parent,
                      const struct dec_type *st, const struct dec_field *f, enum dec_kind k,
                      size_t fn)
{
    const json_t *e;
    const char *key;
    size_t i;
    int rc = 0;

    if (json_is_null(v))
        return 0;
    if (!kind_ok(k, v))
        return type_error(w, v, parent, st, f, k, fn);
    if (w->n >= WALK_DEPTH)
        return 0;
    if (k == DEC_OBJ && f->type)
        return walk_object(w, v, f->type);
    if (k == DEC_ARR && f->elem != DEC_ANY) {
        json_array_foreach(v, i, e)
        {
            w->f[w->n].key = NULL;
            w->f[w->n++].index = i;
            rc = walk_value(w, e, v, st, f, f->elem, fn);
            w->n--;
            if (rc)
                return rc;
        }
    } else if (k == DEC_MAP) {
        json_object_foreach((json_t *)v, key, e)
        {
            w->f[w->n++].key = key;
            rc = walk_value(w, e, v, st, f, f->elem, fn);
            w->n--;
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* walk_object checks every field of obj against t: its type, and (names) its name */
static int walk_object(struct walk *w, const json_t *obj, const struct dec_type *t)
{
    const char *key;
    size_t len;
    json_t *v;
    int rc;

    json_object_keylen_foreach((json_t *)obj, key, len, v)
    {
        const struct dec_field *f = find_field(t, key, len);

        if (!f) {
            if (w->names && (rc = unknown(w, key, len, v, obj)))
                return rc;
            continue;
        }
        w->f[w->n++].key = f->name;
        rc = walk_value(w, v, obj, t, f, f->kind, w->n);
        w->n--;
        if (rc)
            return rc;
    }
    return 0;
}

/* walk checks d->root against d->root_type; the path is left as it was */
static int walk(struct dec *d, bool names)
{
    char saved[DEC_PATH_MAX + 16];
    size_t plen = d->plen;
    struct walk w;
    int rc;

    w.d = d;
    w.names = names;
    w.n = 0;
    memcpy(saved, d->path, plen + 1);
    rc = walk_object(&w, d->root, d->root_type);
    /* a message may have written a path out */
    memcpy(d->path, saved, plen + 1);
    d->plen = plen;
    return rc;
}

int dec_begin(struct dec *d, const json_t *obj, const struct dec_type *t, int *line,
              const char **file)
{
    char msg[160];

    if (!json_is_object(obj)) {
        snprintf(msg, sizeof(msg), "json: cannot unmarshal %s into Go value of type v1.%s",
                 obj ? dec_json_type_name(obj) : "nothing", t->name);
        return dec_fail_at(d, obj, NULL, d->path, msg);
    }
    if (d->root) /* a part read as an object of its own (a workload's template) */
        goto noted;
    d->root = obj;
    d->root_type = t;
    d->root_plen = d->plen;
    if (d->opts && d->opts->check) {
        int rc = walk(d, true);

        if (rc)
            return rc;
    }
noted:
    if (line)
        *line = dec_line(d, obj, NULL);
    if (file && d->file && !(*file = arena_strdup(d->a, d->file)))
        return dec_nomem(d);
    return 0;
}

int dec_type_error(struct dec *d, const json_t *obj, const char *key, const json_t *v,
                   const char *go)
{
    char msg[ERR_MSG_MAX];
    size_t old;
    int rc;

    /* the walk over the whole object finds the field and names its Go struct and type */
    if (d->root && (rc = walk(d, false)))
        return rc;
    type_message(msg, sizeof(msg), v, NULL, NULL, go);
    old = key ? dec_push(d, key) : d->plen;
    rc = dec_fail_at(d, v, obj, d->path, msg);
    dec_pop(d, old);
    return rc;
}
