/* dra_alloc_constraint.c - a claim's constraints as the search adds and removes devices
 * (matchAttributeConstraint, constraint.go's distinctAttributeConstraint): matchAttribute keeps
 * the first device's value, distinctAttribute the values so far (1.36: one per request). */
#include "sched/dra_alloc-int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* lookupAttribute: the qualified name, or the bare id when the domain is the driver */
static const struct dra_attr *lookup_attr(const struct dra_device *d, const char *driver,
                                          const char *name)
{
    const char *slash = strchr(name, '/');
    size_t i;

    for (i = 0; i < d->nattrs; i++)
        if (!strcmp(d->attrs[i].name, name))
            return &d->attrs[i];
    if (!slash || strlen(driver) != (size_t)(slash - name) ||
        strncmp(name, driver, (size_t)(slash - name)))
        return NULL;
    for (i = 0; i < d->nattrs; i++)
        if (!strcmp(d->attrs[i].name, slash + 1))
            return &d->attrs[i];
    return NULL;
}

static bool constraint_applies(const struct dra_constraint *c, const char *base, const char *sub)
{
    size_t i;
    char full[300];

    if (!c->nrequests)
        return true;
    if (sub)
        snprintf(full, sizeof(full), "%s/%s", base, sub);
    for (i = 0; i < c->nrequests; i++) {
        if (!strcmp(c->requests[i], base))
            return true;
        if (sub && !strcmp(c->requests[i], full))
            return true;
    }
    return false;
}

static bool attr_same(const struct dra_attr *x, const struct dra_attr *y)
{
    if (x->type != y->type)
        return false;
    switch (x->type) {
    case DRA_ATTR_INT:
        return x->i == y->i;
    case DRA_ATTR_BOOL:
        return x->b == y->b;
    case DRA_ATTR_STRING:
    case DRA_ATTR_VERSION:
        return !strcmp(x->s, y->s);
    default:
        return false;
    }
}

static int values_grow(struct cstate *st)
{
    if (st->nvalues == st->cvalues) {
        size_t nc = st->cvalues ? st->cvalues * 2 : 8;
        const struct dra_attr **v = realloc((void *)st->values, nc * sizeof(*v));
        const char **k;

        if (!v)
            return -ENOMEM;
        st->values = v;
        k = realloc((void *)st->keys, nc * sizeof(*k));
        if (!k)
            return -ENOMEM;
        st->keys = k;
        st->cvalues = nc;
    }
    return 0;
}

/* 1.36's distinctAttribute: one value kept per request name (a map), a count of devices
 * beside it, so a request's earlier devices are forgotten as the next one is added */
static int distinct_by_request_add(struct cstate *st, const char *base, const struct dra_attr *attr)
{
    size_t i;

    if (st->num > 0)
        for (i = 0; i < st->nvalues; i++)
            if (attr->type == DRA_ATTR_OTHER || attr_same(attr, st->values[i]))
                return 0;
    for (i = 0; i < st->nvalues; i++)
        if (!strcmp(st->keys[i], base)) {
            st->values[i] = attr;
            st->num++;
            return 1;
        }
    if (values_grow(st))
        return -ENOMEM;
    st->keys[st->nvalues] = base;
    st->values[st->nvalues++] = attr;
    st->num++;
    return 1;
}

/* constraint add: true when the device may join */
int dra_constraint_add(struct cstate *st, const char *base, const char *sub,
                       const struct dra_device *d, const char *driver, bool by_request)
{
    const struct dra_attr *attr;
    size_t i;

    if (!constraint_applies(st->c, base, sub))
        return 1;
    attr = lookup_attr(d, driver, st->c->attr);
    if (!attr)
        return 0;
    if (st->c->kind == DRA_MATCH) {
        if (st->num == 0) {
            st->first = attr;
            st->num = 1;
            return 1;
        }
        if (attr->type == DRA_ATTR_OTHER || !attr_same(attr, st->first))
            return 0;
        st->num++;
        return 1;
    }
    if (by_request)
        return distinct_by_request_add(st, base, attr);
    if (attr->type == DRA_ATTR_OTHER)
        return 0;
    for (i = 0; i < st->nvalues; i++)
        if (attr_same(attr, st->values[i]))
            return 0;
    if (values_grow(st))
        return -ENOMEM;
    st->values[st->nvalues++] = attr;
    return 1;
}

void dra_constraint_remove(struct cstate *st, const char *base, const char *sub, bool by_request)
{
    size_t i;

    if (!constraint_applies(st->c, base, sub))
        return;
    if (st->c->kind == DRA_MATCH) {
        st->num--;
    } else if (by_request) {
        /* 1.36: the request's value goes, whichever device of it is removed */
        for (i = 0; i < st->nvalues; i++)
            if (!strcmp(st->keys[i], base)) {
                st->values[i] = st->values[st->nvalues - 1];
                st->keys[i] = st->keys[st->nvalues - 1];
                st->nvalues--;
                break;
            }
        st->num--;
    } else {
        st->nvalues--;
    }
}
