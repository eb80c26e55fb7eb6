/* decode_resources.c - ResourceLists: quantities by resource name, a container's requests and
 * limits with the API server's defaulting and ValidateResourceRequirements' rules, the
 * pod-level resources, a claim's storage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/quote.h"
#include "kube/decode-int.h"
#include "kube/labels.h"
#include "kube/quantity.h"

/* The Go types of the fields (decode-int.h) */

static const struct dec_field dec_t_resource_requirements_fields[] = {
    {"claims", DEC_ARR, DEC_OBJ, "[]v1.ResourceClaim", NULL},
    {"limits", DEC_MAP, DEC_QTY, "v1.ResourceList", NULL},
    {"requests", DEC_MAP, DEC_QTY, "v1.ResourceList", NULL},
};
const struct dec_type dec_t_resource_requirements =
    DEC_TYPE("ResourceRequirements", dec_t_resource_requirements_fields);

static const struct dec_field dec_t_volume_resource_requirements_fields[] = {
    {"limits", DEC_MAP, DEC_QTY, "v1.ResourceList", NULL},
    {"requests", DEC_MAP, DEC_QTY, "v1.ResourceList", NULL},
};
const struct dec_type dec_t_volume_resource_requirements =
    DEC_TYPE("VolumeResourceRequirements", dec_t_volume_resource_requirements_fields);

/* ---------------------------------------------------------------------------------------- */
/* Resources                                                                                  */

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

int dec_quantity(struct dec *d, const json_t *parent, const json_t *v, bool milli,
                 struct dec_res_entry *e)
{
    struct err qerr;
    int rc;

    e->text = kube_quantity_json_text(v, e->num, &e->tlen);
    if (!e->text)
        return dec_type_error(d, parent, NULL, v, "resource.Quantity");
    /* qerr is read only when the parse fills it (clearing 1 KiB a quantity showed) */
    rc = kube_quantity_parsen(e->text, e->tlen, &e->value, &e->milli, &qerr);
    if (rc == -ERANGE && !milli) {
        /* only the milli value overflowed: the amount is far beyond any fraction */
        rc = kube_quantity_parsen(e->text, e->tlen, &e->value, NULL, &qerr);
        e->milli = 0;
        e->whole = true;
    } else if (!rc) {
        e->whole = e->milli % 1000 == 0;
    }
    if (rc)
        return dec_fail(d, v, parent, "%s", qerr.msg);
    return 0;
}

/* quote_text writes Go's %q of e's text into buf */
static const char *quote_text(const struct dec_res_entry *e, char *buf, size_t size)
{
    return quote_go_to(buf, size, e->text, e->tlen);
}

/* dec_res_list parses obj[key] (a ResourceList) into l; container says whether the
 * container resource-name and value rules apply. */
int dec_res_list(struct dec *d, const json_t *obj, const char *key, bool container,
                 struct dec_res_list *l)
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
    rc = dec_object(d, obj, key, &m);
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
    old = dec_push(d, key);
    o2 = old;
    json_object_foreach((json_t *)m, k, v)
    {
        struct dec_res_entry *e = &l->e[l->n];
        bool cpu = !strcmp(k, "cpu");

        memset(e, 0, sizeof(*e));
        o2 = dec_push(d, k);
        /* cpu and memory pass both checks (the common case: skipped) */
        if (container && !cpu && strcmp(k, "memory")) {
            if (kube_label_key_validate(k, &qerr)) {
                rc = dec_fail(d, v, m, "Invalid value: %s: %s", dec_quote(k, q, sizeof(q)),
                              qerr.msg);
                goto out;
            }
            if (!strchr(k, '/') && strcmp(k, "cpu") && strcmp(k, "memory") &&
                strcmp(k, "ephemeral-storage") && !res_is_hugepages(k)) {
                rc = dec_fail(d, v, m,
                              "Invalid value: %s: must be a standard resource for containers",
                              dec_quote(k, q, sizeof(q)));
                goto out;
            }
        }
        if ((rc = dec_quantity(d, m, v, cpu, e)))
            goto out;
        if (cpu)
            e->value = e->milli;
        if (e->value < 0 || e->milli < 0) {
            rc = dec_fail(d, v, m, "Invalid value: %s: must be greater than or equal to 0",
                          quote_text(e, q, sizeof(q)));
            goto out;
        }
        if (container && res_is_integer(k) && !e->whole) {
            rc = dec_fail(d, v, m, "Invalid value: %s: must be an integer",
                          quote_text(e, q, sizeof(q)));
            goto out;
        }
        e->name = k;
        e->v = v;
        dec_pop(d, o2);
        l->n++;
    }
    rc = 0;
    o2 = old;
out:
    dec_pop(d, o2);
    dec_pop(d, old);
    return rc;
}

/* dec_res_list_release frees what dec_res_list allocated; l may be zeroed or half-filled. */
void dec_res_list_release(struct dec_res_list *l)
{
    if (l->e != l->small)
        free(l->e);
    l->e = NULL;
    l->n = 0;
}

static const struct dec_res_entry *res_find(const struct dec_res_list *l, const char *name)
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
static int res_build(struct dec *d, const struct dec_res_entry *const *e, size_t n,
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

int dec_res_list_build(struct dec *d, const struct dec_res_list *l, struct kube_resources *r)
{
    const struct dec_res_entry **p;
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

/* dec_container_resources: requests and limits with API defaulting (request = limit when
 * only the limit is given) and ValidateResourceRequirements' rules. */
int dec_container_resources(struct dec *d, const json_t *c, struct kube_container *out)
{
    const json_t *res;
    struct dec_res_list req, lim;
    const struct dec_res_entry **all = NULL;
    size_t old, o2, o3, i, n = 0;
    char q[128];
    int rc;

    memset(&out->requests, 0, sizeof(out->requests));
    memset(&req, 0, sizeof(req));
    memset(&lim, 0, sizeof(lim));
    rc = dec_object(d, c, "resources", &res);
    if (rc || !res)
        return rc;
    old = dec_push(d, "resources");
    rc = dec_res_list(d, res, "limits", true, &lim);
    if (!rc)
        rc = dec_res_list(d, res, "requests", true, &req);
    if (rc)
        goto out;
    for (i = 0; i < req.n; i++) {
        const struct dec_res_entry *e = &req.e[i], *l = res_find(&lim, e->name);

        o2 = dec_push(d, "requests");
        o3 = dec_push(d, e->name);
        if (l && res_no_overcommit(e->name) && e->value != l->value) {
            rc = dec_fail(d, e->v, req.obj, "Invalid value: %s: must be equal to %s limit of %.*s",
                          quote_text(e, q, sizeof(q)), e->name, (int)l->tlen, l->text);
        } else if (l && (e->value > l->value ||
                         (e->value == l->value && e->milli > l->milli && strcmp(e->name, "cpu")))) {
            rc = dec_fail(d, e->v, req.obj,
                          "Invalid value: %s: must be less than or equal to %s limit of %.*s",
                          quote_text(e, q, sizeof(q)), e->name, (int)l->tlen, l->text);
        } else if (!l && res_no_overcommit(e->name)) {
            dec_pop(d, o2);
            o2 = dec_push(d, "limits");
            rc = dec_fail(d, NULL, res,
                          "Required value: Limit must be set for non overcommitable "
                          "resources");
        }
        dec_pop(d, o3);
        dec_pop(d, o2);
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
    dec_res_list_release(&req);
    dec_res_list_release(&lim);
    dec_pop(d, old);
    return rc;
}

/* the pod's spec.resources: requests and limits of cpu, memory and hugepages-* */
int dec_pod_resources(struct dec *d, const json_t *spec, struct kube_pod *p)
{
    const json_t *res;
    struct dec_res_list req, lim;
    size_t old;
    int rc;

    memset(&req, 0, sizeof(req));
    memset(&lim, 0, sizeof(lim));
    rc = dec_object(d, spec, "resources", &res);
    if (rc || !res)
        return rc;
    old = dec_push(d, "resources");
    rc = dec_res_list(d, res, "requests", true, &req);
    if (!rc)
        rc = dec_res_list(d, res, "limits", true, &lim);
    if (!rc)
        rc = dec_res_list_build(d, &req, &p->extra->pod_requests);
    if (!rc)
        rc = dec_res_list_build(d, &lim, &p->extra->pod_limits);
    dec_pop(d, old);
    dec_res_list_release(&req);
    dec_res_list_release(&lim);
    return rc;
}

/* dec_storage reads list[key], a quantity, into bytes (*has: it was given) */
int dec_storage(struct dec *d, const json_t *list, const char *key, bool nonneg, int64_t *out,
                bool *has)
{
    const json_t *v = json_object_get(list, key);
    struct dec_res_entry e;
    char q[128];
    size_t old;
    int rc;

    *out = 0;
    *has = false;
    if (!v)
        return 0;
    memset(&e, 0, sizeof(e));
    old = dec_push(d, key);
    rc = dec_quantity(d, list, v, false, &e);
    if (!rc && nonneg && e.value < 0)
        rc = dec_fail(d, v, list, "Invalid value: %s: must be greater than or equal to 0",
                      quote_text(&e, q, sizeof(q)));
    dec_pop(d, old);
    *out = e.value;
    *has = !rc;
    return rc;
}
