/* cel_eval.c - build/cel-eval: the C CEL behind the JSON-lines protocol of
 * /work/coord/cel-contract.md (docs/cel-testing.md), so a driver can compare it line by line
 * with the real k8s.io/dynamic-resource-allocation/cel.
 *
 * One request per input line, exactly one answer line per request, flushed. A line that is
 * not a request gets "tool-error" and the tool goes on. Test tooling: it prints, the library
 * does not. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <jansson.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/arena.h"
#include "base/buf.h"
#include "cel/cel.h"
#include "cel/celtest.h"
#include "cel/eval.h"
#include "cel/lib.h"

static struct cel_scratch *scratch;

/* "maxCost" of the answer being built: a uint64, which jansson's integers cannot hold */
static bool has_max_cost;
static uint64_t max_cost;

static void answer(json_t *o)
{
    char *s = json_dumps(o, JSON_COMPACT);
    if (s) {
        size_t n = strlen(s);
        if (has_max_cost && n > 0 && s[n - 1] == '}') {
            s[n - 1] = 0;
            printf("%s,\"maxCost\":%llu}", s, (unsigned long long)max_cost);
        } else {
            fputs(s, stdout);
        }
        has_max_cost = false;
        fputc('\n', stdout);
        free(s);
    } else {
        fputs("{\"result\":\"tool-error\",\"error\":\"cannot encode the answer\"}\n", stdout);
    }
    fflush(stdout);
}

static void tool_error(json_t *id, const char *msg)
{
    json_t *o = json_object();
    json_object_set(o, "id", id ? id : json_null());
    json_object_set_new(o, "result", json_string("tool-error"));
    json_object_set_new(o, "error", json_string(msg));
    answer(o);
    json_decref(o);
}

/* A device from its JSON form. Returns 0 or -1 with msg set. "attribute NAME: unsupported
 * attribute value" is not a tool error: the device answers it at evaluation. */
struct devbuf {
    struct cel_device d;
    struct cel_device_attr *attrs;
    struct cel_device_capacity *caps;
    const char *bad_attr; /* an attribute without a value */
};

/* the length of a Unicode white space rune (Go's unicode.IsSpace) at s, or 0 */
static size_t space_len(const unsigned char *s, size_t n)
{
    if (n >= 1 && (s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r')))
        return 1;
    if (n >= 2 && s[0] == 0xC2 && (s[1] == 0x85 || s[1] == 0xA0))
        return 2;
    if (n >= 3) {
        unsigned c = (unsigned)(s[0] & 0x0F) << 12 | (unsigned)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
        if ((s[0] & 0xF0) == 0xE0 && (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80 &&
            (c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
             c == 0x202F || c == 0x205F || c == 0x3000))
            return 3;
    }
    return 0;
}

/* strings.TrimSpace */
static void trim_space(const char **s, size_t *n)
{
    const unsigned char *p = (const unsigned char *)*s;
    size_t l = *n, k;
    while (l && (k = space_len(p, l))) {
        p += k;
        l -= k;
    }
    for (;;) {
        size_t cut = 0;
        for (size_t back = 1; back <= 3 && back <= l; back++)
            if (space_len(p + l - back, back) == back) {
                cut = back;
                break;
            }
        if (!cut)
            break;
        l -= cut;
    }
    *s = (const char *)p;
    *n = l;
}

static int device_from_json(json_t *j, struct devbuf *b, char *msg, size_t msz)
{
    json_t *attrs, *caps, *drv, *multi;
    const char *key;
    json_t *val;
    size_t i = 0;

    memset(b, 0, sizeof(*b));
    if (!json_is_object(j)) {
        snprintf(msg, msz, "device is not an object");
        return -1;
    }
    drv = json_object_get(j, "driver");
    if (drv && !json_is_string(drv)) {
        snprintf(msg, msz, "driver is not a string");
        return -1;
    }
    b->d.driver = drv ? json_string_value(drv) : "";
    b->d.driver_len = drv ? json_string_length(drv) : 0;
    multi = json_object_get(j, "allowMultipleAllocations");
    b->d.allow_multiple_allocations = !multi || json_is_null(multi) ? -1 : json_is_true(multi);
    attrs = json_object_get(j, "attributes");
    caps = json_object_get(j, "capacity");
    if (attrs && json_is_object(attrs)) {
        b->attrs = calloc(json_object_size(attrs) + 1, sizeof(*b->attrs));
        if (!b->attrs)
            return -1;
        json_object_foreach(attrs, key, val)
        {
            struct cel_device_attr *a = &b->attrs[i];
            json_t *v;
            a->name = key;
            a->name_len = strlen(key);
            if ((v = json_object_get(val, "int")) && json_is_integer(v)) {
                a->kind = CEL_ATTR_INT;
                a->i = json_integer_value(v);
            } else if ((v = json_object_get(val, "bool")) && json_is_boolean(v)) {
                a->kind = CEL_ATTR_BOOL;
                a->b = json_is_true(v);
            } else if ((v = json_object_get(val, "string")) && json_is_string(v)) {
                a->kind = CEL_ATTR_STRING;
                a->s = json_string_value(v);
                a->s_len = json_string_length(v);
            } else if ((v = json_object_get(val, "version")) && json_is_string(v)) {
                a->kind = CEL_ATTR_VERSION;
                a->s = json_string_value(v);
                a->s_len = json_string_length(v);
            } else {
                if (!b->bad_attr)
                    b->bad_attr = key;
                continue;
            }
            i++;
        }
    }
    b->d.attrs = b->attrs;
    b->d.nattrs = i;
    i = 0;
    if (caps && json_is_object(caps)) {
        b->caps = calloc(json_object_size(caps) + 1, sizeof(*b->caps));
        if (!b->caps)
            return -1;
        json_object_foreach(caps, key, val)
        {
            json_t *v = json_object_get(val, "value");
            if (!v || !json_is_string(v)) {
                snprintf(msg, msz, "capacity %s has no value", key);
                return -1;
            }
            b->caps[i].name = key;
            b->caps[i].name_len = strlen(key);
            b->caps[i].quantity = json_string_value(v);
            b->caps[i].quantity_len = json_string_length(v);
            /* Quantity.UnmarshalJSON trims white space first */
            trim_space(&b->caps[i].quantity, &b->caps[i].quantity_len);
            i++;
        }
    }
    b->d.capacity = b->caps;
    b->d.ncapacity = i;
    return 0;
}

static void devbuf_free(struct devbuf *b)
{
    free(b->attrs);
    free(b->caps);
}

/* evaluates one device; fills result/error into o */
static void eval_device(struct cel_program *p, json_t *dj, json_t *o)
{
    struct devbuf b;
    char msg[512];
    struct cel_device_view *v;
    struct err e = {0};
    struct cel_result r;

    if (device_from_json(dj, &b, msg, sizeof(msg)) < 0) {
        json_object_set_new(o, "result", json_string("tool-error"));
        json_object_set_new(o, "error", json_string(msg));
        devbuf_free(&b);
        return;
    }
    if (b.bad_attr) {
        snprintf(msg, sizeof(msg), "attribute %s: unsupported attribute value", b.bad_attr);
        json_object_set_new(o, "result", json_string("runtime-error"));
        json_object_set_new(o, "error", json_string(msg));
        devbuf_free(&b);
        return;
    }
    if (cel_device_prepare(&b.d, &v, &e) < 0) {
        json_object_set_new(o, "result", json_string("tool-error"));
        json_object_set_new(o, "error", json_string(e.msg));
        devbuf_free(&b);
        return;
    }
    if (cel_eval(p, v, scratch, &r) < 0) {
        json_object_set_new(o, "result", json_string("tool-error"));
        json_object_set_new(o, "error", json_string("out of memory"));
    } else if (r.error) {
        json_object_set_new(o, "result", json_string("runtime-error"));
        json_object_set_new(o, "error", json_stringn(r.error, r.error_len));
    } else {
        json_object_set_new(o, "result", json_string(r.match ? "true" : "false"));
    }
    cel_device_view_free(v);
    devbuf_free(&b);
}

static void handle(const char *line, size_t len)
{
    json_error_t jerr;
    json_t *req = json_loadb(line, len, JSON_ALLOW_NUL, &jerr), *id, *expr, *env, *limit, *dev,
           *devs, *o;
    struct cel_compile_opts opts = {0};
    struct cel_program *p = NULL;
    struct cel_compile_error cerr;
    int rc;

    if (!req || !json_is_object(req)) {
        char msg[300];
        snprintf(msg, sizeof(msg), "not a JSON object: %s", req ? "" : jerr.text);
        tool_error(NULL, msg);
        json_decref(req);
        return;
    }
    id = json_object_get(req, "id");
    expr = json_object_get(req, "expr");
    env = json_object_get(req, "env");
    limit = json_object_get(req, "costLimit");
    dev = json_object_get(req, "device");
    devs = json_object_get(req, "devices");
    if (!expr || !json_is_string(expr)) {
        tool_error(id, "no \"expr\" string");
        goto out;
    }
    if (env && !json_is_null(env)) {
        if (!json_is_string(env) ||
            (strcmp(json_string_value(env), "stored") && strcmp(json_string_value(env), "new"))) {
            tool_error(id, "\"env\" is neither \"stored\" nor \"new\"");
            goto out;
        }
        if (!strcmp(json_string_value(env), "new"))
            opts.env = CEL_ENV_NEW;
    }
    if (limit && !json_is_null(limit)) {
        if (!json_is_integer(limit) || json_integer_value(limit) < 0) {
            tool_error(id, "\"costLimit\" is not a non-negative integer");
            goto out;
        }
        opts.cost_limit = (uint64_t)json_integer_value(limit);
        opts.cost_limit_set = true;
    }
    if (dev && devs && !json_is_null(dev) && !json_is_null(devs)) {
        tool_error(id, "both \"device\" and \"devices\"");
        goto out;
    }
    o = json_object();
    json_object_set(o, "id", id ? id : json_null());
    if (opts.env == CEL_ENV_NEW && !cel_selector_length_ok(json_string_length(expr))) {
        json_object_set_new(o, "result", json_string("compile-error"));
        json_object_set_new(o, "error", json_string("Too long: may not be more than 10240 bytes"));
        answer(o);
        json_decref(o);
        goto out;
    }
    rc = cel_compile(json_string_value(expr), json_string_length(expr), &opts, &p, &cerr);
    if (rc == 0 && opts.env == CEL_ENV_NEW) {
        has_max_cost = true;
        max_cost = cel_program_max_cost(p);
    }
    if (rc == -EINVAL) {
        json_object_set_new(o, "result", json_string("compile-error"));
        json_object_set_new(
            o, "error", cerr.detail ? json_stringn(cerr.detail, cerr.detail_len) : json_string(""));
        if (cerr.has_max_cost) {
            has_max_cost = true;
            max_cost = cerr.max_cost;
        }
        cel_compile_error_release(&cerr);
    } else if (rc < 0) {
        json_object_set_new(o, "result", json_string("tool-error"));
        json_object_set_new(o, "error", json_string("out of memory"));
    } else if (devs && json_is_array(devs)) {
        json_t *arr = json_array(), *d;
        size_t i;
        json_array_foreach(devs, i, d)
        {
            json_t *r = json_object();
            eval_device(p, d, r);
            json_array_append_new(arr, r);
        }
        json_object_set_new(o, "results", arr);
    } else {
        json_t *empty = NULL;
        if (!dev || json_is_null(dev))
            dev = empty = json_object();
        eval_device(p, dev, o);
        json_decref(empty);
    }
    cel_program_free(p);
    answer(o);
    json_decref(o);
out:
    json_decref(req);
}

/* ---- --conformance: declared variables, bound values, results of any type ---- */

static bool b64_decode(const char *s, size_t n, struct buf *out)
{
    uint32_t acc = 0;
    int bits = 0;
    size_t pad = 0;
    if (n % 4)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int v;
        if (c == '=') {
            pad++;
            continue;
        }
        if (pad)
            return false;
        if (c >= 'A' && c <= 'Z')
            v = c - 'A';
        else if (c >= 'a' && c <= 'z')
            v = c - 'a' + 26;
        else if (c >= '0' && c <= '9')
            v = c - '0' + 52;
        else if (c == '+')
            v = 62;
        else if (c == '/')
            v = 63;
        else
            return false;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            char ch = (char)(acc >> (bits - 8));
            buf_append(out, &ch, 1);
            bits -= 8;
        }
    }
    return pad <= 2;
}

static bool decode_value(struct arena *a, json_t *j, struct cel_val *out);

static char *dup_json_str(struct arena *a, json_t *j, size_t *n)
{
    *n = json_string_length(j);
    char *p = arena_alloc(a, *n + 1);
    if (p && *n)
        memcpy(p, json_string_value(j), *n);
    return p;
}

static bool decode_value(struct arena *a, json_t *j, struct cel_val *out)
{
    const char *k;
    json_t *v;
    size_t n;

    if (!json_is_object(j) || json_object_size(j) != 1)
        return false;
    json_object_foreach(j, k, v)
    {
        memset(out, 0, sizeof(*out));
        if (!strcmp(k, "int") && json_is_string(v)) {
            char *end;
            errno = 0;
            out->k = CV_INT;
            out->v.i = strtoll(json_string_value(v), &end, 10);
            return !errno && !*end;
        }
        if (!strcmp(k, "uint") && json_is_string(v)) {
            char *end;
            errno = 0;
            out->k = CV_UINT;
            out->v.u = strtoull(json_string_value(v), &end, 10);
            return !errno && !*end && json_string_value(v)[0] != '-';
        }
        if (!strcmp(k, "double")) {
            out->k = CV_DOUBLE;
            if (json_is_number(v)) {
                out->v.d = json_number_value(v);
                return true;
            }
            if (!json_is_string(v))
                return false;
            const char *t = json_string_value(v);
            if (!strcmp(t, "NaN"))
                out->v.d = NAN;
            else if (!strcmp(t, "Infinity"))
                out->v.d = INFINITY;
            else if (!strcmp(t, "-Infinity"))
                out->v.d = -INFINITY;
            else if (!strcmp(t, "-0"))
                out->v.d = -0.0;
            else
                return false;
            return true;
        }
        if (!strcmp(k, "bool") && json_is_boolean(v)) {
            *out = cel_bool(json_is_true(v));
            return true;
        }
        if (!strcmp(k, "string") && json_is_string(v)) {
            char *p = dup_json_str(a, v, &n);
            *out = cel_str(p, (uint32_t)n);
            return p != NULL;
        }
        if (!strcmp(k, "bytes") && json_is_string(v)) {
            struct buf b = BUF_INIT(0);
            bool ok = b64_decode(json_string_value(v), json_string_length(v), &b);
            char *p = arena_alloc(a, b.len + 1);
            if (p && b.len)
                memcpy(p, b.data, b.len);
            out->k = CV_BYTES;
            out->n = (uint32_t)b.len;
            out->v.s = p;
            buf_release(&b);
            return ok && p;
        }
        if (!strcmp(k, "null")) {
            *out = cel_null();
            return true;
        }
        if (!strcmp(k, "duration") && json_is_string(v)) {
            int64_t ns;
            out->k = CV_DURATION;
            if (!cel_duration_parse(json_string_value(v), json_string_length(v), &ns))
                return false;
            out->v.i = ns;
            return true;
        }
        if (!strcmp(k, "timestamp") && json_is_string(v)) {
            int64_t sec;
            int32_t nsec;
            out->k = CV_TIMESTAMP;
            if (!cel_timestamp_parse(json_string_value(v), json_string_length(v), &sec, &nsec))
                return false;
            out->v.i = sec;
            out->n = (uint32_t)nsec;
            return true;
        }
        if (!strcmp(k, "type") && json_is_string(v)) {
            char *p = dup_json_str(a, v, &n);
            *out = cel_type_val(p ? p : "dyn");
            return p != NULL;
        }
        if (!strcmp(k, "optional")) {
            out->k = CV_OPTIONAL;
            if (json_is_null(v))
                return true;
            struct cel_val *box = arena_alloc(a, sizeof(*box));
            out->v.o = box;
            return box && decode_value(a, v, box);
        }
        if (!strcmp(k, "list") && json_is_array(v)) {
            struct cel_list *l = cel_list_new(a, (uint32_t)json_array_size(v));
            json_t *e;
            size_t i;
            if (!l)
                return false;
            json_array_foreach(v, i, e)
            {
                if (!decode_value(a, e, &l->v[i]))
                    return false;
            }
            l->n = (uint32_t)json_array_size(v);
            out->k = CV_LIST;
            out->v.l = l;
            return true;
        }
        if (!strcmp(k, "map") && json_is_array(v)) {
            struct cel_map *m = cel_map_new(a, (uint32_t)json_array_size(v));
            json_t *e;
            size_t i;
            if (!m)
                return false;
            json_array_foreach(v, i, e)
            {
                if (!json_is_array(e) || json_array_size(e) != 2 ||
                    !decode_value(a, json_array_get(e, 0), &m->keys[i]) ||
                    !decode_value(a, json_array_get(e, 1), &m->vals[i]))
                    return false;
            }
            m->n = (uint32_t)json_array_size(v);
            out->k = CV_MAP;
            out->v.m = m;
            return true;
        }
        return false;
    }
    return false;
}

static void handle_conformance(const char *line, size_t len)
{
    json_error_t jerr;
    json_t *req = json_loadb(line, len, JSON_ALLOW_NUL, &jerr), *id, *expr, *env, *decls, *binds,
           *o;
    struct cel_compile_opts opts = {0};
    struct cel_program *p = NULL;
    struct cel_compile_error cerr;
    struct arena a = ARENA_INIT;
    struct cel_decl *dv = NULL;
    struct cel_val *vals = NULL;
    int nd = 0, rc;
    const char *k;
    json_t *v;

    if (!req || !json_is_object(req)) {
        tool_error(NULL, "not a JSON object");
        json_decref(req);
        return;
    }
    id = json_object_get(req, "id");
    expr = json_object_get(req, "expr");
    env = json_object_get(req, "env");
    decls = json_object_get(req, "decls");
    binds = json_object_get(req, "bindings");
    if (!expr || !json_is_string(expr)) {
        tool_error(id, "no \"expr\" string");
        goto out;
    }
    if (env && json_is_string(env) && !strcmp(json_string_value(env), "new"))
        opts.env = CEL_ENV_NEW;
    if (decls && json_is_object(decls)) {
        dv = arena_alloc(&a, (json_object_size(decls) + 1) * sizeof(*dv));
        vals = arena_alloc(&a, (json_object_size(decls) + 1) * sizeof(*vals));
        if (!dv || !vals) {
            tool_error(id, "out of memory");
            goto out;
        }
        json_object_foreach(decls, k, v)
        {
            dv[nd].name = k;
            dv[nd].type = json_is_string(v) ? cel_test_type(json_string_value(v)) : NULL;
            if (!dv[nd].type) {
                char msg[300];
                snprintf(msg, sizeof(msg), "declaration %s: type not understood", k);
                tool_error(id, msg);
                goto out;
            }
            vals[nd] = cel_err_static("no such attribute(s): unbound");
            json_t *b = binds ? json_object_get(binds, k) : NULL;
            if (b && !decode_value(&a, b, &vals[nd])) {
                char msg[300];
                snprintf(msg, sizeof(msg), "binding %s: value not understood", k);
                tool_error(id, msg);
                goto out;
            }
            nd++;
        }
    }
    o = json_object();
    json_object_set(o, "id", id ? id : json_null());
    rc = cel_test_compile(json_string_value(expr), json_string_length(expr), &opts, dv, nd, &p,
                          &cerr);
    if (rc == -EINVAL) {
        json_object_set_new(o, "result", json_string("compile-error"));
        json_object_set_new(
            o, "error", cerr.detail ? json_stringn(cerr.detail, cerr.detail_len) : json_string(""));
        cel_compile_error_release(&cerr);
    } else if (rc < 0) {
        json_object_set_new(o, "result", json_string("tool-error"));
        json_object_set_new(o, "error", json_string("out of memory"));
    } else {
        struct cel_val r;
        cel_test_eval(p, vals, scratch, &r);
        if (r.k == CV_ERROR) {
            json_object_set_new(o, "result", json_string("runtime-error"));
            json_object_set_new(o, "error", json_stringn(r.v.s, cel_err_len(&r)));
        } else {
            struct buf b = BUF_INIT(0);
            json_error_t je;
            cel_test_encode(&b, &r);
            json_t *jv = json_loadb(b.data ? b.data : "", b.len, JSON_ALLOW_NUL, &je);
            json_object_set_new(o, "result", json_string(jv ? "value" : "tool-error"));
            if (jv)
                json_object_set_new(o, "value", jv);
            else
                json_object_set_new(o, "error", json_string(je.text));
            buf_release(&b);
        }
        arena_release(cel_test_scratch_arena(scratch));
    }
    cel_program_free(p);
    answer(o);
    json_decref(o);
out:
    arena_release(&a);
    json_decref(req);
}

/* ---- --bench: bench/cel_bench.sh's C side ---- */

static double now_ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Each selector: compile time (mean of 200), then evaluation per device over all devices
 * (median of runs), on device views prepared once (as a scheduler keeps them per
 * ResourceSlice). "prepareNs" is what building a view costs per device. */
static int bench(const char *selpath, const char *devpath, int runs)
{
    json_error_t jerr;
    json_t *doc = json_load_file(devpath, 0, &jerr), *devs;
    FILE *sf = fopen(selpath, "r");
    struct cel_device_view **views;
    struct devbuf *bufs;
    size_t nd, i;
    char *line = NULL;
    size_t cap = 0;
    double prep_ns, view_bytes;

    if (!doc || !sf || !(devs = json_object_get(doc, "devices")) || !json_is_array(devs)) {
        fprintf(stderr, "cel-eval: cannot read %s or %s\n", selpath, devpath);
        return 1;
    }
    nd = json_array_size(devs);
    views = calloc(nd ? nd : 1, sizeof(*views));
    bufs = calloc(nd ? nd : 1, sizeof(*bufs));
    if (!views || !bufs)
        return 1;
    for (i = 0; i < nd; i++) {
        char msg[256];
        if (device_from_json(json_array_get(devs, i), &bufs[i], msg, sizeof(msg)) < 0) {
            fprintf(stderr, "cel-eval: device %zu: %s\n", i, msg);
            return 1;
        }
    }
    prep_ns = now_ns(CLOCK_MONOTONIC);
    view_bytes = (double)mallinfo2().uordblks;
    for (i = 0; i < nd; i++) {
        struct err e = {0};
        if (cel_device_prepare(&bufs[i].d, &views[i], &e) < 0) {
            fprintf(stderr, "cel-eval: device %zu: %s\n", i, e.msg);
            return 1;
        }
    }
    prep_ns = (now_ns(CLOCK_MONOTONIC) - prep_ns) / (double)(nd ? nd : 1);
    view_bytes = ((double)mallinfo2().uordblks - view_bytes) / (double)(nd ? nd : 1);
    while (getline(&line, &cap, sf) > 0) {
        json_t *s = json_loads(line, 0, &jerr), *id, *expr;
        struct cel_program *p;
        struct cel_compile_error cerr;
        double t, *per = calloc((size_t)runs, sizeof(double)),
                  *cpu = calloc((size_t)runs, sizeof(double));
        int matches = 0, errors = 0;
        const int compiles = 200;

        if (!s)
            continue;
        id = json_object_get(s, "id");
        expr = json_object_get(s, "expr");
        if (!json_is_string(expr) || !per || !cpu) {
            json_decref(s);
            continue;
        }
        if (cel_compile(json_string_value(expr), json_string_length(expr), NULL, &p, &cerr) < 0) {
            fprintf(stderr, "cel-eval: %s: %s\n", json_string_value(id), cerr.detail);
            return 1;
        }
        cel_program_free(p);
        t = now_ns(CLOCK_MONOTONIC);
        for (int k = 0; k < compiles; k++) {
            cel_compile(json_string_value(expr), json_string_length(expr), NULL, &p, NULL);
            cel_program_free(p);
        }
        t = (now_ns(CLOCK_MONOTONIC) - t) / compiles;
        cel_compile(json_string_value(expr), json_string_length(expr), NULL, &p, NULL);
        for (int r = 0; r < runs; r++) {
            double w = now_ns(CLOCK_MONOTONIC), c = now_ns(CLOCK_PROCESS_CPUTIME_ID);
            matches = errors = 0;
            for (i = 0; i < nd; i++) {
                struct cel_result res;
                cel_eval(p, views[i], scratch, &res);
                if (res.error)
                    errors++;
                else if (res.match)
                    matches++;
            }
            per[r] = (now_ns(CLOCK_MONOTONIC) - w) / (double)(nd ? nd : 1);
            cpu[r] = (now_ns(CLOCK_PROCESS_CPUTIME_ID) - c) / (double)(nd ? nd : 1);
        }
        qsort(per, (size_t)runs, sizeof(double), cmp_double);
        qsort(cpu, (size_t)runs, sizeof(double), cmp_double);
        printf("{\"id\":\"%s\",\"compileNs\":%.1f,\"evalNs\":%.2f,\"evalCpuNs\":%.2f,"
               "\"prepareNs\":%.1f,\"viewBytes\":%.0f,\"matches\":%d,\"errors\":%d}\n",
               json_string_value(id), t, per[runs / 2], cpu[runs / 2], prep_ns, view_bytes, matches,
               errors);
        fflush(stdout);
        cel_program_free(p);
        free(per);
        free(cpu);
        json_decref(s);
    }
    free(line);
    fclose(sf);
    for (i = 0; i < nd; i++) {
        cel_device_view_free(views[i]);
        devbuf_free(&bufs[i]);
    }
    free(views);
    free(bufs);
    json_decref(doc);
    return 0;
}

int main(int argc, char **argv)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;

    bool conformance = argc > 1 && !strcmp(argv[1], "--conformance");
    bool do_bench = argc > 1 && !strcmp(argv[1], "--bench");
    const char *sel = NULL, *dev = NULL;
    int runs = 5;

    for (int i = 2; do_bench && i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--selectors"))
            sel = argv[i + 1];
        else if (!strcmp(argv[i], "--devices"))
            dev = argv[i + 1];
        else if (!strcmp(argv[i], "--runs"))
            runs = atoi(argv[i + 1]);
    }
    if ((argc > 1 && !conformance && !do_bench) || (do_bench && (!sel || !dev || runs < 1))) {
        fprintf(stderr, "usage: cel-eval [--conformance] < requests\n"
                        "       cel-eval --bench --selectors FILE --devices FILE [--runs N]\n");
        return 2;
    }
    scratch = cel_scratch_new();
    if (scratch && do_bench) {
        int rc = bench(sel, dev, runs);
        cel_scratch_free(scratch);
        return rc;
    }
    if (!scratch) {
        fprintf(stderr, "cel-eval: out of memory\n");
        return 1;
    }
    while ((n = getline(&line, &cap, stdin)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            n--;
        if (conformance)
            handle_conformance(line, (size_t)n);
        else
            handle(line, (size_t)n);
    }
    free(line);
    cel_scratch_free(scratch);
    return 0;
}
