/* cel_eval.c - build/cel-eval: the C CEL behind the JSON-lines protocol of
 * /work/coord/cel-contract.md (docs/cel-testing.md), so a driver can compare it line by line
 * with the real k8s.io/dynamic-resource-allocation/cel.
 *
 * One request per input line, exactly one answer line per request, flushed. A line that is
 * not a request gets "tool-error" and the tool goes on. Test tooling: it prints, the library
 * does not. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel.h"

static struct cel_scratch *scratch;

static void answer(json_t *o)
{
    char *s = json_dumps(o, JSON_COMPACT);
    if (s) {
        fputs(s, stdout);
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
        json_object_set_new(o, "error", json_string(r.error));
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
        json_object_set_new(o, "error",
                            json_string("Too long: may not be more than 10240 bytes"));
        answer(o);
        json_decref(o);
        goto out;
    }
    rc = cel_compile(json_string_value(expr), json_string_length(expr), &opts, &p, &cerr);
    if (rc == -EINVAL) {
        json_object_set_new(o, "result", json_string("compile-error"));
        json_object_set_new(o, "error", json_string(cerr.detail ? cerr.detail : ""));
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

int main(int argc, char **argv)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;

    (void)argc;
    (void)argv;
    scratch = cel_scratch_new();
    if (!scratch) {
        fprintf(stderr, "cel-eval: out of memory\n");
        return 1;
    }
    while ((n = getline(&line, &cap, stdin)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            n--;
        handle(line, (size_t)n);
    }
    free(line);
    cel_scratch_free(scratch);
    return 0;
}
