/* dra_cel.c - the DRA world's selector interface on the CEL library: compile, a device's view
 * (its attributes and capacity as cel.Device carries them) and evaluation. */
#include "sched/dra_cel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel.h"

static int compile(void *ctx, const char *expr, void **program, char **error)
{
    struct cel_program *p = NULL;
    struct cel_compile_error cerr = {0};
    int rc;

    (void)ctx;
    *program = NULL;
    *error = NULL;
    rc = cel_compile(expr, strlen(expr), NULL, &p, &cerr);
    if (rc == -EINVAL) {
        /* the compile error's Detail is what the allocator wraps */
        *error = strdup(cerr.detail ? cerr.detail : "compilation failed");
        cel_compile_error_release(&cerr);
        return *error ? -EINVAL : -ENOMEM;
    }
    cel_compile_error_release(&cerr);
    if (rc < 0)
        return rc;
    *program = p;
    return 0;
}

static void program_free(void *ctx, void *program)
{
    (void)ctx;
    cel_program_free(program);
}

/* DeviceMatches' error for an attribute it cannot read */
static char *attribute_error(const char *name, const char *what)
{
    char buf[512];

    snprintf(buf, sizeof(buf), "attribute %s: %s", name, what);
    return strdup(buf);
}

static int prepare(void *ctx, const char *driver, const struct kube_dra_device *d, void **view,
                   char **error)
{
    struct cel_device dev = {0};
    struct cel_device_attr *attrs = NULL;
    struct cel_device_capacity *caps = NULL;
    struct cel_device_view *v = NULL;
    struct err err = {0};
    size_t i;
    int rc;

    (void)ctx;
    *view = NULL;
    *error = NULL;
    for (i = 0; i < d->nattributes; i++)
        if (d->attributes[i].type == KUBE_DRA_LIST) {
            /* DeviceMatches reads every attribute: a value it cannot take (a list, which the
             * API server drops while DRAListTypeAttributes is off) fails every selector */
            *error = attribute_error(d->attributes[i].name, "unsupported attribute value");
            return *error ? -EINVAL : -ENOMEM;
        }
    if (d->nattributes && !(attrs = calloc(d->nattributes, sizeof(*attrs))))
        return -ENOMEM;
    if (d->ncapacity && !(caps = calloc(d->ncapacity, sizeof(*caps)))) {
        free(attrs);
        return -ENOMEM;
    }
    for (i = 0; i < d->nattributes; i++) {
        const struct kube_dra_attribute *a = &d->attributes[i];
        struct cel_device_attr *o = &attrs[i];

        o->name = a->name;
        o->name_len = strlen(a->name);
        o->i = a->i;
        o->b = a->b;
        o->s = a->s ? a->s : "";
        o->s_len = strlen(o->s);
        switch (a->type) {
        case KUBE_DRA_INT:
            o->kind = CEL_ATTR_INT;
            break;
        case KUBE_DRA_BOOL:
            o->kind = CEL_ATTR_BOOL;
            break;
        case KUBE_DRA_STRING:
            o->kind = CEL_ATTR_STRING;
            break;
        default:
            o->kind = CEL_ATTR_VERSION;
            break;
        }
    }
    for (i = 0; i < d->ncapacity; i++) {
        caps[i].name = d->capacity[i].name;
        caps[i].name_len = strlen(d->capacity[i].name);
        caps[i].quantity = d->capacity[i].value.text ? d->capacity[i].value.text : "0";
        caps[i].quantity_len = strlen(caps[i].quantity);
    }
    dev.driver = driver;
    dev.driver_len = strlen(driver);
    dev.allow_multiple_allocations = d->allow_multiple_allocations;
    dev.attrs = attrs;
    dev.nattrs = d->nattributes;
    dev.capacity = caps;
    dev.ncapacity = d->ncapacity;
    rc = cel_device_prepare(&dev, &v, &err);
    free(attrs);
    free(caps);
    if (rc == -EINVAL) {
        *error = strdup(err.msg);
        return *error ? -EINVAL : -ENOMEM;
    }
    if (rc < 0)
        return rc;
    *view = v;
    return 0;
}

static void view_free(void *ctx, void *view)
{
    (void)ctx;
    cel_device_view_free(view);
}

static int eval(void *ctx, const void *program, const void *view, char *msg, size_t msgsize)
{
    struct cel_result r;

    if (cel_eval(program, view, ctx, &r) < 0) {
        snprintf(msg, msgsize, "out of memory");
        return -1;
    }
    if (r.error) {
        size_t n = r.error_len < msgsize ? r.error_len : msgsize - 1;

        memcpy(msg, r.error, n);
        msg[n] = '\0';
        return -1;
    }
    return r.match ? 1 : 0;
}

int sched_dra_cel_init(struct sched_dra_cel *out)
{
    struct cel_scratch *s = cel_scratch_new();

    if (!s)
        return -ENOMEM;
    *out = (struct sched_dra_cel){.compile = compile,
                                  .program_free = program_free,
                                  .prepare = prepare,
                                  .view_free = view_free,
                                  .eval = eval,
                                  .ctx = s};
    return 0;
}

void sched_dra_cel_release(struct sched_dra_cel *c)
{
    if (c && c->ctx) {
        cel_scratch_free(c->ctx);
        c->ctx = NULL;
    }
}
