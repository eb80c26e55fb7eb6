/* decode_check.c - the walk of an object over its Go type's tables (decode-int.h): every field
 * of a manifest checked once, by name and JSON type, before it is decoded; and, for a getter
 * that meets a value of the wrong type, the field's Go struct and type named as the API
 * server's decoder names them. */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/quote.h"
#include "kube/decode-int.h"
#include "kube/quantity.h"

/* ---------------------------------------------------------------------------------------- */
/* JSON types as Go's decoder reads them                                                      */

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

/* kind_done is the set of JSON types (bit 1 << json_type) a value of kind k (a field's f->kind
 * or f->elem) may have with nothing more to check or walk into: most values, found without a
 * call (an int32 is checked for its range, a struct with a table walked into). */
static unsigned kind_done(enum dec_kind k, const struct dec_field *f)
{
    unsigned null = 1u << JSON_NULL, num = 1u << JSON_INTEGER | 1u << JSON_REAL;

    switch (k) {
    case DEC_STR:
    case DEC_INTSTR:
        return null | 1u << JSON_STRING;
    case DEC_BOOL:
        return null | 1u << JSON_TRUE | 1u << JSON_FALSE;
    case DEC_INT64:
        return null | 1u << JSON_INTEGER;
    case DEC_NUM:
        return null | num;
    case DEC_QTY:
        return null | num | 1u << JSON_STRING;
    case DEC_OBJ:
        return null | (f->type ? 0 : 1u << JSON_OBJECT);
    case DEC_ARR:
        return null | (f->elem == DEC_ANY ? 1u << JSON_ARRAY : 0);
    case DEC_MAP:
        return null | (f->elem == DEC_ANY ? 1u << JSON_OBJECT : 0);
    case DEC_ANY:
        return ~0u;
    case DEC_INT32:
        break;
    }
    return null;
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
        char num[KUBE_JSON_NUMBER_MAX];

        snprintf(got, sizeof(got), "number %s", kube_json_number_text(v, num));
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

/* ---------------------------------------------------------------------------------------- */
/* The tables' indexes                                                                        */

/* A manifest's every key is looked up in its struct's table. Each table reached from a kind's
 * root is indexed once for the process, when that kind is first checked: its fields hashed by
 * their name's length and first and last bytes into an open-addressed array at most half
 * full, so a key costs a probe or two and one memcmp of its length (no strlen, no strcmp),
 * and each field links the index of its own struct, so the walk never looks one up. Indexes
 * live in a static pool (no allocation, nothing to free) and never change once published. A
 * table that cannot be indexed (the pool is full, 255 fields or more) is searched as before
 * (find_field); so are the tables of messages' walks, which may live on the stack. */
struct dec_ifield {
    const struct dec_field *f;
    const struct dec_index *child; /* the index of f->type; NULL: none */
    unsigned len;                  /* strlen(f->name) */
    unsigned done;                 /* kind_done(f->kind, f) */
};

struct dec_index {
    const struct dec_type *t;
    const struct dec_ifield *fields;
    const unsigned char *slot; /* field number + 1, 0: empty; mask + 1 of them */
    unsigned mask;
    struct dec_index *next; /* every index built */
};

/* 64 KiB hold the indexes of 300 tables of 2,000 fields (today: 90 tables, 593 fields) */
#define INDEX_POOL ((size_t)64 << 10)

static pthread_mutex_t index_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dec_index *index_all;
static _Alignas(max_align_t) unsigned char index_pool[INDEX_POOL];
static size_t index_used;

/* index_alloc takes n zeroed bytes of the pool (index_lock held); NULL when it is full */
static void *index_alloc(size_t n)
{
    size_t at = (index_used + _Alignof(max_align_t) - 1) & ~(_Alignof(max_align_t) - 1);

    if (n > INDEX_POOL - at || at > INDEX_POOL)
        return NULL;
    index_used = at + n;
    return index_pool + at;
}

static unsigned index_hash(const char *key, size_t len)
{
    return (unsigned)len * 11u + (unsigned char)key[0] * 3u + (unsigned char)key[len - 1];
}

/* index_build indexes t and the tables its fields reach (index_lock held); NULL when it
 * cannot, and then its fields' tables are left to find_field too */
static struct dec_index *index_build(const struct dec_type *t)
{
    struct dec_ifield *fields;
    unsigned char *slot;
    struct dec_index *x;
    unsigned cap = 8, h;
    size_t i;

    for (x = index_all; x; x = x->next)
        if (x->t == t)
            return x;
    if (t->nfields >= 255)
        return NULL;
    while (cap < 2 * t->nfields)
        cap *= 2;
    if (!(x = index_alloc(sizeof(*x) + t->nfields * sizeof(*fields) + cap)))
        return NULL;
    fields = (struct dec_ifield *)(x + 1);
    slot = (unsigned char *)(fields + t->nfields);
    for (i = 0; i < t->nfields; i++) {
        fields[i].f = &t->fields[i];
        fields[i].len = (unsigned)strlen(t->fields[i].name);
        fields[i].done = kind_done(t->fields[i].kind, &t->fields[i]);
        for (h = index_hash(t->fields[i].name, fields[i].len) & (cap - 1); slot[h];
             h = (h + 1) & (cap - 1))
            ;
        slot[h] = (unsigned char)(i + 1);
    }
    x->t = t;
    x->fields = fields;
    x->slot = slot;
    x->mask = cap - 1;
    /* in the list before its fields' tables: a table reached again is found, not rebuilt */
    x->next = index_all;
    index_all = x;
    for (i = 0; i < t->nfields; i++)
        if (t->fields[i].type)
            fields[i].child = index_build(t->fields[i].type);
    return x;
}

/* index_of is the index of root t (a kind's table, of static storage), built at its first
 * use; NULL when it cannot be */
static const struct dec_index *index_of(const struct dec_type *t)
{
    static struct {
        const struct dec_type *t;
        const struct dec_index *x;
    } roots[64];
    static size_t nroots;
    const struct dec_index *x = NULL;
    size_t i;

    pthread_mutex_lock(&index_lock);
    for (i = 0; i < nroots && !x; i++)
        if (roots[i].t == t)
            x = roots[i].x;
    if (!x && (x = index_build(t)) && nroots < sizeof(roots) / sizeof(roots[0])) {
        roots[nroots].t = t;
        roots[nroots++].x = x;
    }
    pthread_mutex_unlock(&index_lock);
    return x;
}

/* eq_bytes compares the n bytes at a and b a word at a time (the last word overlapping the
 * one before it), without a call: a field name is a few words long */
static bool eq_bytes(const char *a, const char *b, size_t n)
{
    uint64_t x, y;
    uint32_t p, q;

    if (n >= 8) {
        for (; n > 8; a += 8, b += 8, n -= 8) {
            memcpy(&x, a, 8);
            memcpy(&y, b, 8);
            if (x != y)
                return false;
        }
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return x == y;
    }
    if (n >= 4) {
        memcpy(&p, a, 4);
        memcpy(&q, b, 4);
        if (p != q)
            return false;
        memcpy(&p, a + n - 4, 4);
        memcpy(&q, b + n - 4, 4);
        return p == q;
    }
    for (; n; n--)
        if (*a++ != *b++)
            return false;
    return true;
}

/* index_find: the field called key (len bytes) of x's table, or NULL */
static const struct dec_ifield *index_find(const struct dec_index *x, const char *key, size_t len)
{
    unsigned h;

    if (!len)
        return NULL;
    for (h = index_hash(key, len) & x->mask; x->slot[h]; h = (h + 1) & x->mask) {
        const struct dec_ifield *f = &x->fields[x->slot[h] - 1];

        /* a key with a NUL inside is longer than the name it starts with: no match */
        if (f->len == len && eq_bytes(f->f->name, key, len))
            return f;
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

static int walk_object(struct walk *w, const json_t *obj, const struct dec_type *t,
                       const struct dec_index *x);

/* walk_value checks v, the value of field f of st (or, kind being f->elem, one of its
 * elements); fn as for type_error; x is the index of f->type (NULL: none). */
static int walk_value(struct walk *w, const json_t *v, const json_t *parent,
                      const struct dec_type *st, const struct dec_field *f, enum dec_kind k,
                      size_t fn, const struct dec_index *x)
{
    enum dec_kind ek = f->elem;
    unsigned done = kind_done(ek, f);
    const json_t *e;
    size_t i;
    int rc = 0;

    if (json_is_null(v))
        return 0;
    if (!kind_ok(k, v))
        return type_error(w, v, parent, st, f, k, fn);
    if (w->n >= WALK_DEPTH)
        return 0;
    if (k == DEC_OBJ && f->type)
        return walk_object(w, v, f->type, x);
    if (k == DEC_ARR && ek != DEC_ANY) {
        json_array_foreach(v, i, e)
        {
            /* an element of the right type with nothing inside: nothing to walk into */
            if (done >> json_typeof(e) & 1)
                continue;
            w->f[w->n].key = NULL;
            w->f[w->n++].index = i;
            rc = walk_value(w, e, v, st, f, ek, fn, x);
            w->n--;
            if (rc)
                return rc;
        }
    } else if (k == DEC_MAP) {
        void *it;

        for (it = json_object_iter((json_t *)v); it; it = json_object_iter_next((json_t *)v, it)) {
            e = json_object_iter_value(it);
            if (done >> json_typeof(e) & 1)
                continue;
            w->f[w->n++].key = json_object_iter_key(it);
            rc = walk_value(w, e, v, st, f, ek, fn, x);
            w->n--;
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* walk_object checks every field of obj against t (x: its index, NULL to search t): its type,
 * and (names) its name */
static int walk_object(struct walk *w, const json_t *obj, const struct dec_type *t,
                       const struct dec_index *x)
{
    void *it;
    int rc;

    for (it = json_object_iter((json_t *)obj); it; it = json_object_iter_next((json_t *)obj, it)) {
        const char *key = json_object_iter_key(it);
        size_t len = json_object_iter_key_len(it);
        const json_t *v = json_object_iter_value(it);
        const struct dec_ifield *xf = NULL;
        const struct dec_field *f;

        if (x)
            f = (xf = index_find(x, key, len)) ? xf->f : NULL;
        else
            f = find_field(t, key, len);
        if (!f) {
            if (w->names && (rc = unknown(w, key, len, v, obj)))
                return rc;
            continue;
        }
        /* most fields are a string or a number of the right type: nothing to walk into */
        if ((xf ? xf->done : kind_done(f->kind, f)) >> json_typeof(v) & 1)
            continue;
        w->f[w->n++].key = f->name;
        rc = walk_value(w, v, obj, t, f, f->kind, w->n, xf ? xf->child : NULL);
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
    /* the check of dec_begin starts at a kind's table; a message's walk may start at a table
     * on the stack, which is searched */
    rc = walk_object(&w, d->root, d->root_type, names ? index_of(d->root_type) : NULL);
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
