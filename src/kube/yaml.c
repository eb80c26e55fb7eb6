/* yaml.c - libyaml event stream to jansson values, each recorded in the line table of
 * yamlvalue.c; plain JSON goes to yamljson.c first, and comes here where that reader stops. */
#include "kube/yaml.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "kube/yaml-int.h"

static json_t *resolve_scalar(const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;

    if (tag && !strcmp(tag, YAML_STR_TAG))
        return json_stringn(s, len);
    if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || strlen(s) != len)
        return json_stringn(s, len);
    return kube_yaml_plain(s, len);
}

static int load_fail(struct loader *ld, int line, const char *msg)
{
    err_set(ld->err, -EINVAL, "%s", msg);
    err_at(ld->err, ld->file, line, 0);
    return -EINVAL;
}

static int parser_fail(struct loader *ld)
{
    yaml_parser_t *p = &ld->parser;
    const yaml_mark_t *m = p->problem ? &p->problem_mark : &p->context_mark;

    if (ld->rd_err) {
        err_set(ld->err, ld->rd_err, "cannot read: %s", strerror(-ld->rd_err));
        err_at(ld->err, ld->file, 0, 0);
        return ld->rd_err;
    }

    err_set(ld->err, -EINVAL, "%s%s%s", p->problem ? p->problem : "invalid YAML",
            p->context ? " " : "", p->context ? p->context : "");
    err_at(ld->err, ld->file, (int)m->line + 1, (int)m->column + 1);
    return -EINVAL;
}

/* remember_anchor names v (nodes: its decode count) until the document ends; a name given
 * again names the new value from then on. One hash lookup, so a document's anchors cost what
 * they hold, not the square of their number. */
static int remember_anchor(struct loader *ld, const yaml_char_t *name, json_t *v,
                           unsigned long nodes)
{
    struct anchor *a;
    void *old;

    if (!name)
        return 0;
    a = malloc(sizeof(*a));
    if (!a || !(a->name = strdup((const char *)name))) {
        free(a);
        return -ENOMEM;
    }
    a->value = json_incref(v);
    a->nodes = nodes;
    if (keymap_put(&ld->anchors, a->name, a, &old)) {
        json_decref(a->value);
        free(a->name);
        free(a);
        return -ENOMEM;
    }
    if (old) {
        json_decref(((struct anchor *)old)->value);
        free(((struct anchor *)old)->name);
        free(old);
    }
    return 0;
}

/* alias_excessive is go-yaml v2's bound on alias expansion (decoder.unmarshal, whose
 * sigs.k8s.io/yaml the API server and kubectl decode manifests with): once more than 100 of
 * over 1,000 decoded nodes come from aliases, their share may not pass 99% up to 400,000
 * nodes, falling evenly to 10% at 4,000,000 and staying there. A bomb of nested aliases
 * stops after ~400,000 nodes, however far it would expand. */
static bool alias_excessive(const struct loader *ld)
{
    double d = (double)ld->decode_count, allowed;

    if (ld->alias_count <= 100 || ld->decode_count <= 1000)
        return false;
    if (d <= 400000)
        allowed = 0.99;
    else if (d >= 4000000)
        allowed = 0.10;
    else
        allowed = 0.99 - 0.89 * ((d - 400000) / 3600000);
    return (double)ld->alias_count / d > allowed;
}

/* format_float_key prints a float mapping key as sigs.k8s.io/yaml does:
 * strconv.FormatFloat(f, 'g', -1, 32), the shortest text that reads back as the same
 * float32, in exponent form when the exponent is < -4 or >= 6 ("1.5", "1000", "1e+06"). */
static void format_float_key(double d, char *buf, size_t size)
{
    float f = (float)d;
    char e[32];
    int prec, exp;

    /* beyond float32's range: Go prints +Inf/-Inf, which sigs.k8s.io/yaml maps to .inf */
    if (isinf(f)) {
        snprintf(buf, size, "%s", f > 0 ? ".inf" : "-.inf");
        return;
    }
    for (prec = 1; prec < 9; prec++) {
        snprintf(e, sizeof(e), "%.*e", prec - 1, (double)f);
        if (strtof(e, NULL) == f)
            break;
    }
    snprintf(e, sizeof(e), "%.*e", prec - 1, (double)f);
    exp = atoi(strchr(e, 'e') + 1);
    if (exp < -4 || exp >= 6)
        snprintf(buf, size, "%s", e);
    else
        snprintf(buf, size, "%.*f", prec - 1 - exp > 0 ? prec - 1 - exp : 0, (double)f);
}

static int load_node(struct loader *ld, yaml_event_t *ev, int depth, json_t **out);

/* load_key is load_node for a mapping key: a scalar key is not recorded in the line table,
 * since it is turned into an object key and freed right away (its line is kline). */
static int load_key(struct loader *ld, yaml_event_t *ev, int depth, json_t **out)
{
    json_t *v;

    if (ev->type != YAML_SCALAR_EVENT)
        return load_node(ld, ev, depth, out);
    *out = NULL;
    ld->decode_count++;
    if (alias_excessive(ld))
        return load_fail(ld, (int)ev->start_mark.line + 1, "document contains excessive aliasing");
    v = resolve_scalar(ev);
    if (!v || remember_anchor(ld, ev->data.scalar.anchor, v, 1)) {
        json_decref(v);
        return err_set(ld->err, -ENOMEM, "out of memory");
    }
    *out = v;
    return 0;
}

/* load_items streams the "items" sequence of a root mapping (ev is its start): each element
 * is built with its own line table, handed to item_fn with the root as parsed so far, and
 * dropped. *out is an empty array that takes the sequence's place in the root. */
static int load_items(struct loader *ld, yaml_event_t *ev, json_t *list, json_t **out)
{
    struct kube_lines *root_lines = ld->lines;
    int line = (int)ev->start_mark.line + 1;
    yaml_event_t sub;
    int rc = 0;

    *out = NULL;
    ld->lines = ld->item_lines;
    for (;;) {
        json_t *item;

        if (!yaml_parser_parse(&ld->parser, &sub)) {
            rc = parser_fail(ld);
            break;
        }
        if (sub.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&sub);
            break;
        }
        rc = load_node(ld, &sub, 2, &item);
        yaml_event_delete(&sub);
        if (rc)
            break;
        rc = ld->item_fn(ld, item, list);
        json_decref(item);
        kube_lines_clear(ld->lines);
        if (rc)
            break;
    }
    ld->lines = root_lines;
    if (rc)
        return rc;
    *out = json_array();
    if (!*out || kube_lines_add(ld->lines, *out, line)) {
        json_decref(*out);
        *out = NULL;
        return err_set(ld->err, -ENOMEM, "out of memory");
    }
    return 0;
}

/* load_node consumes the events of one node (whose first event is ev, already parsed) and
 * returns a new reference in *out. */
static int load_node(struct loader *ld, yaml_event_t *ev, int depth, json_t **out)
{
    int line = (int)ev->start_mark.line + 1;
    unsigned long start = ld->decode_count;
    const struct anchor *a;
    yaml_event_t sub;
    json_t *v = NULL, *merged = NULL; /* a mapping's keys that came from merge keys */
    int rc;

    *out = NULL;
    if (depth > YAML_MAX_DEPTH)
        return load_fail(ld, line, "document nested too deeply");
    /* an alias counts once, then every node of its value again, as an alias's */
    ld->decode_count++;
    if (alias_excessive(ld))
        return load_fail(ld, line, "document contains excessive aliasing");
    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        a = keymap_get(&ld->anchors, (const char *)ev->data.alias.anchor);
        if (!a) {
            err_set(ld->err, -EINVAL, "unknown anchor '%s' referenced",
                    (const char *)ev->data.alias.anchor);
            err_at(ld->err, ld->file, line, 0);
            return -EINVAL;
        }
        ld->decode_count += a->nodes;
        ld->alias_count += a->nodes;
        if (alias_excessive(ld))
            return load_fail(ld, line, "document contains excessive aliasing");
        *out = json_incref(a->value);
        return 0;
    case YAML_SCALAR_EVENT:
        v = resolve_scalar(ev);
        if (!v)
            goto nomem;
        if (remember_anchor(ld, ev->data.scalar.anchor, v, 1))
            goto nomem;
        break;
    case YAML_SEQUENCE_START_EVENT:
        v = json_array();
        if (!v)
            goto nomem;
        for (;;) {
            json_t *item;

            if (!yaml_parser_parse(&ld->parser, &sub)) {
                json_decref(v);
                return parser_fail(ld);
            }
            if (sub.type == YAML_SEQUENCE_END_EVENT) {
                yaml_event_delete(&sub);
                break;
            }
            rc = load_node(ld, &sub, depth + 1, &item);
            yaml_event_delete(&sub);
            if (rc) {
                json_decref(v);
                return rc;
            }
            if (json_array_append_new(v, item))
                goto nomem;
        }
        break;
    case YAML_MAPPING_START_EVENT:
        v = json_object();
        if (!v)
            goto nomem;
        for (;;) {
            json_t *key, *val;
            bool val_seq;
            int kline;

            if (!yaml_parser_parse(&ld->parser, &sub)) {
                json_decref(v);
                json_decref(merged);
                return parser_fail(ld);
            }
            if (sub.type == YAML_MAPPING_END_EVENT) {
                yaml_event_delete(&sub);
                break;
            }
            kline = (int)sub.start_mark.line + 1;
            rc = load_key(ld, &sub, depth + 1, &key);
            yaml_event_delete(&sub);
            if (rc) {
                json_decref(v);
                json_decref(merged);
                return rc;
            }
            if (!yaml_parser_parse(&ld->parser, &sub)) {
                json_decref(key);
                json_decref(v);
                json_decref(merged);
                return parser_fail(ld);
            }
            val_seq = sub.type == YAML_SEQUENCE_START_EVENT;
            if (depth == 0 && ld->item_fn && sub.type == YAML_SEQUENCE_START_EVENT &&
                json_is_string(key) && !strcmp(json_string_value(key), "items"))
                rc = load_items(ld, &sub, v, &val);
            else
                rc = load_node(ld, &sub, depth + 1, &val);
            yaml_event_delete(&sub);
            if (rc) {
                json_decref(key);
                json_decref(v);
                json_decref(merged);
                return rc;
            }
            if (json_is_string(key) && !strcmp(json_string_value(key), "<<") &&
                (json_is_object(val) || json_is_array(val))) {
                /* merge key: fields not already present come from the merged map, or from
                 * each map of a list in turn (so the earlier maps win) */
                size_t i, n = json_is_array(val) ? json_array_size(val) : 1;

                /* go-yaml decodes neither the key nor a list of maps, only the maps */
                ld->decode_count -= 1 + val_seq;
                for (i = 0; i < n; i++)
                    if (!json_is_object(json_is_array(val) ? json_array_get(val, i) : val)) {
                        json_decref(key);
                        json_decref(val);
                        json_decref(v);
                        json_decref(merged);
                        return load_fail(ld, kline,
                                         "merge key '<<' takes a mapping or a list "
                                         "of mappings");
                    }
                for (i = 0; i < n; i++) {
                    json_t *m = json_is_array(val) ? json_array_get(val, i) : val;
                    const char *k;
                    json_t *mv;

                    json_object_foreach(m, k, mv)
                    {
                        if (json_object_get(v, k))
                            continue;
                        if (json_object_set(v, k, mv) || (!merged && !(merged = json_object())) ||
                            json_object_set_new(merged, k, json_null())) {
                            json_decref(key);
                            json_decref(val);
                            goto nomem;
                        }
                    }
                }
                json_decref(key);
                json_decref(val);
                continue;
            }
            if (!json_is_string(key)) {
                /* JSON object keys are strings: sigs.k8s.io/yaml prints non-string keys */
                char kb[64];

                if (json_is_integer(key))
                    snprintf(kb, sizeof(kb), "%" JSON_INTEGER_FORMAT, json_integer_value(key));
                else if (json_is_real(key))
                    format_float_key(json_real_value(key), kb, sizeof(kb));
                else if (json_is_true(key) || json_is_false(key))
                    snprintf(kb, sizeof(kb), "%s", json_is_true(key) ? "true" : "false");
                else {
                    json_decref(key);
                    json_decref(val);
                    json_decref(v);
                    json_decref(merged);
                    return load_fail(ld, kline, "mapping key must be a scalar");
                }
                json_decref(key);
                key = json_string(kb);
                if (!key) {
                    json_decref(val);
                    goto nomem;
                }
            }
            {
                /* a key given twice replaces the value, leaving the size; one that overrides
                 * a merged key is no duplicate (the API server's strict YAML decoder agrees) */
                const char *ks = json_string_value(key);
                size_t kn = json_string_length(key), before = json_object_size(v);

                rc = json_object_setn_new(v, ks, kn, val);
                if (!rc && json_object_size(v) == before) {
                    if (merged && json_object_getn(merged, ks, kn))
                        json_object_deln(merged, ks, kn);
                    else
                        kube_lines_dup_add(ld->lines, ks, kn, kline);
                }
            }
            json_decref(key);
            if (rc)
                goto nomem;
        }
        json_decref(merged);
        merged = NULL;
        break;
    default:
        return load_fail(ld, line, "unexpected YAML event");
    }
    /* A collection's anchor is known only once the collection is complete, so an alias
     * inside it cannot refer to it: a value containing itself would be a reference cycle. */
    if (ev->type == YAML_SEQUENCE_START_EVENT &&
        remember_anchor(ld, ev->data.sequence_start.anchor, v, ld->decode_count - start))
        goto nomem;
    if (ev->type == YAML_MAPPING_START_EVENT &&
        remember_anchor(ld, ev->data.mapping_start.anchor, v, ld->decode_count - start))
        goto nomem;
    if (kube_lines_add(ld->lines, v, line))
        goto nomem;
    *out = v;
    return 0;
nomem:
    json_decref(merged);
    json_decref(v);
    return err_set(ld->err, -ENOMEM, "out of memory");
}

static void anchors_clear(struct loader *ld)
{
    size_t i;

    for (i = 0; i < ld->anchors.cap; i++) {
        struct anchor *a = ld->anchors.slots[i].value;

        if (!ld->anchors.slots[i].key)
            continue;
        json_decref(a->value);
        free(a->name);
        free(a);
    }
    keymap_release(&ld->anchors);
}

/* parse_stream runs the parser over data and hands each non-empty document's root (a new
 * reference) to take(), which owns it from then on. */
static int read_handler(void *data, unsigned char *buffer, size_t size, size_t *size_read)
{
    struct loader *ld = data;
    long n = ld->rd(ld->rd_ctx, (char *)buffer, size);

    if (n < 0) {
        ld->rd_err = (int)n;
        return 0;
    }
    *size_read = (size_t)n;
    return 1;
}

static int parse_stream(struct loader *ld, const char *data, size_t len,
                        int (*take)(struct loader *ld, json_t *doc, void *ctx), void *ctx);

static int restart(struct loader *ld)
{
    int rc;

    kube_lines_clear(ld->lines);
    if (ld->item_lines)
        kube_lines_clear(ld->item_lines);
    if (ld->rd && (rc = ld->rewind(ld->rd_ctx)) < 0) {
        err_set(ld->err, rc, "cannot read: %s", strerror(-rc));
        err_at(ld->err, ld->file, 0, 0);
        return rc;
    }
    return 0;
}

/* json_path runs the JSON reader. When it stops, *libyaml is set: libyaml reads the input
 * from the start (rewound), past the callbacks already made. When a callback fails (the last
 * one made), libyaml reads the input again, making no callback, to see whether it gets that
 * far: it reads ahead, and may fail on something further on before it would have made that
 * callback; its error is then the one to report, as it would have been. */
static int json_path(struct loader *ld, const char *data, size_t len,
                     int (*take)(struct loader *ld, json_t *doc, void *ctx), void *ctx,
                     bool *libyaml)
{
    struct err *err = ld->err, mine;
    bool stopped;
    int rc, cr;

    *libyaml = false;
    ld->fast = false; /* what follows is libyaml's */
    rc = kube_yaml_json(ld, data, len, take, ctx, &stopped);
    if (stopped) {
        ld->skip = ld->delivered;
        ld->delivered = 0;
        *libyaml = true;
        return restart(ld);
    }
    if (!rc || !ld->fn_failed)
        return rc;
    err_clear(&mine);
    ld->err = &mine;
    ld->check_at = ld->delivered;
    ld->delivered = 0;
    if (!(cr = restart(ld)))
        cr = parse_stream(ld, data, len, take, ctx);
    ld->err = err;
    if (cr < 0) {
        /* libyaml failed first */
        if (err)
            *err = mine;
        return cr;
    }
    return rc;
}

static int parse_stream(struct loader *ld, const char *data, size_t len,
                        int (*take)(struct loader *ld, json_t *doc, void *ctx), void *ctx)
{
    yaml_event_t ev;
    int rc = 0, done = 0;

    if (ld->fast) {
        bool libyaml;

        rc = json_path(ld, data, len, take, ctx, &libyaml);
        if (!libyaml || rc)
            return rc;
    }
    if (!yaml_parser_initialize(&ld->parser))
        return err_set(ld->err, -ENOMEM, "out of memory");
    if (ld->rd)
        yaml_parser_set_input(&ld->parser, read_handler, ld);
    else
        yaml_parser_set_input_string(&ld->parser, (const unsigned char *)data, len);
    while (!done) {
        if (!yaml_parser_parse(&ld->parser, &ev)) {
            rc = parser_fail(ld);
            break;
        }
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_SCALAR_EVENT:
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
        case YAML_ALIAS_EVENT: {
            json_t *v;

            ld->decode_count = 1; /* the document node */
            ld->alias_count = 0;
            rc = load_node(ld, &ev, 0, &v);
            if (rc) {
                done = 1;
                break;
            }
            if (json_is_null(v))
                json_decref(v); /* an empty document ("---" alone) */
            else if ((rc = take(ld, v, ctx)))
                done = 1;
            break;
        }
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&ld->parser);
    anchors_clear(ld);
    return rc;
}

static int take_append(struct loader *ld, json_t *doc, void *ctx)
{
    if (json_array_append_new(ctx, doc))
        return err_set(ld->err, -ENOMEM, "out of memory");
    return 0;
}

int kube_yaml_load(const char *data, size_t len, const char *file, json_t **docs,
                   struct kube_lines **lines, struct err *err)
{
    struct loader ld;
    json_t *arr;
    int rc;

    memset(&ld, 0, sizeof(ld));
    ld.file = file;
    ld.err = err;
    *docs = NULL;
    if (lines) {
        *lines = NULL;
        ld.lines = calloc(1, sizeof(*ld.lines));
        if (!ld.lines)
            return err_set(err, -ENOMEM, "out of memory");
    }
    arr = json_array();
    if (!arr) {
        kube_lines_free(ld.lines);
        return err_set(err, -ENOMEM, "out of memory");
    }
    rc = parse_stream(&ld, data, len, take_append, arr);
    if (rc) {
        json_decref(arr);
        kube_lines_free(ld.lines);
        return rc;
    }
    *docs = arr;
    if (lines)
        *lines = ld.lines;
    return 0;
}

struct each_ctx {
    kube_yaml_doc_fn fn;
    void *ctx;
};

/* take_each and take_item make the callbacks, but the ones the JSON reader made already
 * (ld->skip), and none in a check of how far libyaml gets (ld->check_at: the number of the
 * callback to stop at, with JSON_CHECK_REACHED) */
#define JSON_CHECK_REACHED 1

static int take_each(struct loader *ld, json_t *doc, void *ctx)
{
    struct each_ctx *e = ctx;
    int rc = 0;

    ld->delivered++;
    if (ld->check_at)
        rc = ld->delivered == ld->check_at ? JSON_CHECK_REACHED : 0;
    else if (ld->skip)
        ld->skip--;
    else if ((rc = e->fn(doc, ld->lines, NULL, e->ctx)))
        ld->fn_failed = true;

    json_decref(doc);
    /* the next document starts with an empty table and no anchors */
    kube_lines_clear(ld->lines);
    anchors_clear(ld);
    return rc;
}

static int take_item(struct loader *ld, json_t *item, json_t *list)
{
    struct each_ctx *e = ld->each;
    int rc;

    ld->delivered++;
    if (ld->check_at)
        return ld->delivered == ld->check_at ? JSON_CHECK_REACHED : 0;
    if (ld->skip) {
        ld->skip--;
        return 0;
    }
    if ((rc = e->fn(item, ld->lines, list, e->ctx)))
        ld->fn_failed = true;
    return rc;
}

static int each_run(struct loader *ld, const char *data, size_t len, unsigned flags,
                    kube_yaml_doc_fn fn, void *ctx)
{
    struct each_ctx e = {fn, ctx};
    int rc;

    ld->each = &e;
    ld->fast = !(flags & KUBE_YAML_NO_JSON_PATH) && (!ld->rd || ld->rewind);
    ld->transient = flags & KUBE_YAML_TRANSIENT;
    ld->lines = calloc(1, sizeof(*ld->lines));
    if (flags & KUBE_YAML_SPLIT_ITEMS) {
        ld->item_fn = take_item;
        ld->item_lines = calloc(1, sizeof(*ld->item_lines));
    }
    if (!ld->lines || ((flags & KUBE_YAML_SPLIT_ITEMS) && !ld->item_lines))
        rc = err_set(ld->err, -ENOMEM, "out of memory");
    else
        rc = parse_stream(ld, data, len, take_each, &e);
    kube_lines_free(ld->lines);
    kube_lines_free(ld->item_lines);
    return rc;
}

int kube_yaml_each(const char *data, size_t len, const char *file, unsigned flags,
                   kube_yaml_doc_fn fn, void *ctx, struct err *err)
{
    struct loader ld;

    memset(&ld, 0, sizeof(ld));
    ld.file = file;
    ld.err = err;
    return each_run(&ld, data, len, flags, fn, ctx);
}

int kube_yaml_each_read(kube_yaml_read_fn rd, kube_yaml_rewind_fn rewind, void *rd_ctx,
                        const char *file, unsigned flags, kube_yaml_doc_fn fn, void *ctx,
                        struct err *err)
{
    struct loader ld;

    memset(&ld, 0, sizeof(ld));
    ld.file = file;
    ld.err = err;
    ld.rd = rd;
    ld.rewind = rewind;
    ld.rd_ctx = rd_ctx;
    return each_run(&ld, NULL, 0, flags, fn, ctx);
}
