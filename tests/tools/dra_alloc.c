/* dra_alloc.c - the structured allocator (src/sched/dra_alloc.c) as a command, for the
 * differential test against the real one (tests/k8s/cmd/dra-alloc-diff, internal/dradiff).
 *
 * Reads one problem per line on stdin (JSON: id, node, slices, classes, claims as the API
 * objects, the devices other claims hold, and the answers of every CEL selector on every device
 * and of every node selector on the node, computed by the Go side with the real libraries) and
 * writes one answer per line: {"id","status":"allocated"|"unallocated"|"node-failed"|"error",
 * "message","claims":[{"results":[{"request","device","adminAccess","shared","consumed"}],
 * "nodeSelector":"none"|"node"|"selector"}]}. A line it cannot read gets status
 * "tool-error". An optional "kubeVersion" ("1.36") takes that release's default features
 * (dra_features_for). With --cel the selectors are compiled and evaluated by the CEL library
 * (src/cel) instead of read from the answers, so the two together are judged. Test tooling
 * only. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/keymap.h"
#include "cel/cel.h"
#include "sched/dra_alloc.h"

/* --cel: the library's programs (expression -> struct celprog, kept across problems) */
static bool use_cel;
static struct keymap programs;
static struct cel_scratch *cel_scratch;

struct celprog {
    struct cel_program *p;
    char *error; /* the compile error's detail, or NULL */
};

/* --cel: a device's view, or the error every selector meets on it */
struct celview {
    struct cel_device_view *v;
    const char *error;
};

struct ctx {
    struct arena *a;
    struct cel_device_view **views; /* --cel: freed after the problem */
    size_t nviews, cviews;
    json_t *cel;       /* expression -> device -> answer */
    json_t *nodesel;   /* slice or slice/device -> bool */
    struct keymap ids; /* driver/pool/device -> id + 1 */
    char **idnames;
    size_t nids, cids;
    char err[256];
};

/* the opaque node selector handed to the allocator: the key of its answer */
struct selkey {
    const char *key;
};

static const char *jstr(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);

    return json_is_string(v) ? json_string_value(v) : NULL;
}

static const char *dup(struct ctx *c, const char *s)
{
    return s ? arena_strdup(c->a, s) : NULL;
}

static uint32_t device_id(struct ctx *c, const char *driver, const char *pool, const char *name)
{
    char buf[800];
    void *v;

    snprintf(buf, sizeof(buf), "%s/%s/%s", driver, pool, name);
    v = keymap_get(&c->ids, buf);
    if (v)
        return (uint32_t)((uintptr_t)v - 1);
    if (c->nids == c->cids) {
        size_t nc = c->cids ? c->cids * 2 : 64;
        char **n = realloc(c->idnames, nc * sizeof(*n));

        if (!n)
            abort();
        c->idnames = n;
        c->cids = nc;
    }
    c->idnames[c->nids] = arena_strdup(c->a, buf);
    keymap_put(&c->ids, c->idnames[c->nids], (void *)(uintptr_t)(c->nids + 1), NULL);
    return (uint32_t)c->nids++;
}

static int qty(struct ctx *c, const json_t *v, kube_nano *out)
{
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;

    if (!s) {
        if (json_is_integer(v)) {
            *out = (kube_nano)json_integer_value(v) * KUBE_NANO_PER_UNIT;
            return 0;
        }
        snprintf(c->err, sizeof(c->err), "not a quantity");
        return -1;
    }
    if (kube_quantity_parse_nano(s, out, NULL)) {
        snprintf(c->err, sizeof(c->err), "bad quantity %s", s);
        return -1;
    }
    return 0;
}

static void node_sel(struct ctx *c, const json_t *o, const char *key, struct dra_node_sel *sel)
{
    memset(sel, 0, sizeof(*sel));
    sel->node_name = dup(c, jstr(o, "nodeName"));
    sel->all_nodes = json_is_true(json_object_get(o, "allNodes"));
    if (json_is_object(json_object_get(o, "nodeSelector"))) {
        struct selkey *k = arena_alloc(c->a, sizeof(*k));

        k->key = dup(c, key);
        sel->selector = k;
    }
}

static int counters(struct ctx *c, const json_t *m, const struct dra_counter **out, size_t *n)
{
    const char *k;
    json_t *v;
    struct dra_counter *cs = arena_alloc(c->a, (json_object_size(m) + 1) * sizeof(*cs));
    size_t i = 0;

    json_object_foreach((json_t *)m, k, v)
    {
        cs[i].name = dup(c, k);
        if (qty(c, json_object_get(v, "value"), &cs[i].value))
            return -1;
        i++;
    }
    *out = cs;
    *n = i;
    return 0;
}

/* --cel: the device as cel.Device carries it (driver, attributes, capacity) */
static struct celview *cel_view(struct ctx *c, const json_t *o, const char *driver)
{
    const json_t *attrs = json_object_get(o, "attributes"), *caps = json_object_get(o, "capacity");
    const json_t *amm = json_object_get(o, "allowMultipleAllocations");
    struct celview *cv = arena_alloc(c->a, sizeof(*cv));
    struct cel_device_attr *a = arena_alloc(c->a, (json_object_size(attrs) + 1) * sizeof(*a));
    struct cel_device_capacity *cp = arena_alloc(c->a, (json_object_size(caps) + 1) * sizeof(*cp));
    struct cel_device dev = {0};
    struct err err = {0};
    const char *k;
    json_t *v;
    size_t i = 0;
    char buf[600];

    json_object_foreach((json_t *)attrs, k, v)
    {
        a[i].name = k;
        a[i].name_len = strlen(k);
        if (json_is_integer(json_object_get(v, "int"))) {
            a[i].kind = CEL_ATTR_INT;
            a[i].i = json_integer_value(json_object_get(v, "int"));
        } else if (json_is_boolean(json_object_get(v, "bool"))) {
            a[i].kind = CEL_ATTR_BOOL;
            a[i].b = json_is_true(json_object_get(v, "bool"));
        } else if (jstr(v, "string") || jstr(v, "version")) {
            a[i].kind = jstr(v, "string") ? CEL_ATTR_STRING : CEL_ATTR_VERSION;
            a[i].s = jstr(v, "string") ? jstr(v, "string") : jstr(v, "version");
            a[i].s_len = strlen(a[i].s);
        } else {
            snprintf(buf, sizeof(buf), "attribute %s: unsupported attribute value", k);
            cv->error = dup(c, buf);
            return cv;
        }
        i++;
    }
    dev.attrs = a;
    dev.nattrs = i;
    i = 0;
    json_object_foreach((json_t *)caps, k, v)
    {
        const char *q = jstr(v, "value");

        cp[i].name = k;
        cp[i].name_len = strlen(k);
        cp[i].quantity = q ? q : "0";
        cp[i].quantity_len = strlen(cp[i].quantity);
        i++;
    }
    dev.capacity = cp;
    dev.ncapacity = i;
    dev.driver = driver;
    dev.driver_len = strlen(driver);
    dev.allow_multiple_allocations = json_is_boolean(amm) ? json_is_true(amm) : -1;
    if (cel_device_prepare(&dev, &cv->v, &err) < 0) {
        cv->v = NULL;
        cv->error = dup(c, err.msg);
        return cv;
    }
    if (c->nviews == c->cviews) {
        size_t nc = c->cviews ? c->cviews * 2 : 64;
        struct cel_device_view **n = realloc(c->views, nc * sizeof(*n));

        if (!n)
            abort();
        c->views = n;
        c->cviews = nc;
    }
    c->views[c->nviews++] = cv->v;
    return cv;
}

/* --cel: the compiled selector, as kube-scheduler's cache compiles it */
static const struct celprog *cel_program(const char *expr)
{
    struct celprog *p = keymap_get(&programs, expr);
    struct cel_compile_error cerr = {0};
    char *key;

    if (p)
        return p;
    p = calloc(1, sizeof(*p));
    key = strdup(expr);
    if (!p || !key)
        abort();
    if (cel_compile(expr, strlen(expr), NULL, &p->p, &cerr) < 0) {
        p->p = NULL;
        p->error = strdup(cerr.detail ? cerr.detail : "compilation failed");
    }
    cel_compile_error_release(&cerr);
    if (keymap_put(&programs, key, p, NULL))
        abort();
    return p;
}

static int device(struct ctx *c, const json_t *o, const char *driver, const char *pool,
                  const char *slice, struct dra_device *d)
{
    const char *k;
    json_t *v;
    size_t i;
    char key[600];

    memset(d, 0, sizeof(*d));
    d->name = dup(c, jstr(o, "name"));
    d->id = device_id(c, driver, pool, d->name);
    {
        const json_t *attrs = json_object_get(o, "attributes");
        struct dra_attr *a = arena_alloc(c->a, (json_object_size(attrs) + 1) * sizeof(*a));

        i = 0;
        json_object_foreach((json_t *)attrs, k, v)
        {
            a[i].name = dup(c, k);
            if (json_is_integer(json_object_get(v, "int"))) {
                a[i].type = DRA_ATTR_INT;
                a[i].i = json_integer_value(json_object_get(v, "int"));
            } else if (json_is_boolean(json_object_get(v, "bool"))) {
                a[i].type = DRA_ATTR_BOOL;
                a[i].b = json_is_true(json_object_get(v, "bool"));
            } else if (jstr(v, "string")) {
                a[i].type = DRA_ATTR_STRING;
                a[i].s = dup(c, jstr(v, "string"));
            } else if (jstr(v, "version")) {
                a[i].type = DRA_ATTR_VERSION;
                a[i].s = dup(c, jstr(v, "version"));
            } else {
                a[i].type = DRA_ATTR_OTHER;
            }
            i++;
        }
        d->attrs = a;
        d->nattrs = i;
    }
    {
        const json_t *caps = json_object_get(o, "capacity");
        struct dra_capacity *cp = arena_alloc(c->a, (json_object_size(caps) + 1) * sizeof(*cp));

        i = 0;
        json_object_foreach((json_t *)caps, k, v)
        {
            const json_t *pol = json_object_get(v, "requestPolicy");

            cp[i].name = dup(c, k);
            if (qty(c, json_object_get(v, "value"), &cp[i].value))
                return -1;
            if (json_is_object(pol)) {
                struct dra_cap_policy *p = arena_alloc(c->a, sizeof(*p));
                const json_t *vv = json_object_get(pol, "validValues");
                const json_t *rg = json_object_get(pol, "validRange");

                if (json_object_get(pol, "default")) {
                    p->has_default = true;
                    if (qty(c, json_object_get(pol, "default"), &p->def))
                        return -1;
                }
                if (json_is_array(vv)) {
                    kube_nano *vals = arena_alloc(c->a, (json_array_size(vv) + 1) * sizeof(*vals));
                    size_t j;

                    for (j = 0; j < json_array_size(vv); j++)
                        if (qty(c, json_array_get(vv, j), &vals[j]))
                            return -1;
                    p->valid = vals;
                    p->nvalid = j;
                }
                if (json_is_object(rg)) {
                    p->has_range = true;
                    if (json_object_get(rg, "min")) {
                        p->has_min = true;
                        if (qty(c, json_object_get(rg, "min"), &p->min))
                            return -1;
                    }
                    if (json_object_get(rg, "max")) {
                        p->has_max = true;
                        if (qty(c, json_object_get(rg, "max"), &p->max))
                            return -1;
                    }
                    if (json_object_get(rg, "step")) {
                        p->has_step = true;
                        if (qty(c, json_object_get(rg, "step"), &p->step))
                            return -1;
                    }
                }
                cp[i].policy = p;
            }
            i++;
        }
        d->caps = cp;
        d->ncaps = i;
    }
    {
        const json_t *cc = json_object_get(o, "consumesCounters");
        struct dra_consumption *cs = arena_alloc(c->a, (json_array_size(cc) + 1) * sizeof(*cs));

        for (i = 0; i < json_array_size(cc); i++) {
            const json_t *e = json_array_get(cc, i);

            cs[i].counter_set = dup(c, jstr(e, "counterSet"));
            if (counters(c, json_object_get(e, "counters"), &cs[i].counters, &cs[i].ncounters))
                return -1;
            if (json_array_size(json_object_get(e, "compatibilityGroups")))
                d->compat_groups = true;
        }
        d->consumes = cs;
        d->nconsumes = i;
    }
    {
        const json_t *ts = json_object_get(o, "taints");
        struct dra_taint *t = arena_alloc(c->a, (json_array_size(ts) + 1) * sizeof(*t));

        for (i = 0; i < json_array_size(ts); i++) {
            const json_t *e = json_array_get(ts, i);

            t[i].key = dup(c, jstr(e, "key"));
            t[i].value = dup(c, jstr(e, "value") ? jstr(e, "value") : "");
            t[i].effect = dup(c, jstr(e, "effect"));
        }
        d->taints = t;
        d->ntaints = i;
    }
    snprintf(key, sizeof(key), "%s/%s", slice, d->name);
    node_sel(c, o, key, &d->sel);
    if (json_is_boolean(json_object_get(o, "allowMultipleAllocations"))) {
        d->has_allow_multiple = true;
        d->allow_multiple = json_is_true(json_object_get(o, "allowMultipleAllocations"));
    }
    d->binds_to_node = json_is_true(json_object_get(o, "bindsToNode"));
    d->nbinding_conditions = json_array_size(json_object_get(o, "bindingConditions"));
    snprintf(key, sizeof(key), "%s/%s/%s", driver, pool, d->name);
    d->view = use_cel ? (const void *)cel_view(c, o, driver) : (const void *)dup(c, key);
    return 0;
}

static int slices(struct ctx *c, const json_t *arr, struct dra_slice **out, size_t *n)
{
    struct dra_slice *sl = arena_alloc(c->a, (json_array_size(arr) + 1) * sizeof(*sl));
    size_t i, j;

    for (i = 0; i < json_array_size(arr); i++) {
        const json_t *o = json_array_get(arr, i), *spec = json_object_get(o, "spec");
        const json_t *pool = json_object_get(spec, "pool"),
                     *devs = json_object_get(spec, "devices");
        const json_t *sets = json_object_get(spec, "sharedCounters");
        struct dra_device *d = arena_alloc(c->a, (json_array_size(devs) + 1) * sizeof(*d));
        struct dra_counter_set *cs = arena_alloc(c->a, (json_array_size(sets) + 1) * sizeof(*cs));

        sl[i].name = dup(c, jstr(json_object_get(o, "metadata"), "name"));
        sl[i].driver = dup(c, jstr(spec, "driver"));
        sl[i].pool = dup(c, jstr(pool, "name"));
        sl[i].generation = json_integer_value(json_object_get(pool, "generation"));
        sl[i].count = json_integer_value(json_object_get(pool, "resourceSliceCount"));
        node_sel(c, spec, sl[i].name, &sl[i].sel);
        sl[i].per_device = json_is_true(json_object_get(spec, "perDeviceNodeSelection"));
        for (j = 0; j < json_array_size(devs); j++)
            if (device(c, json_array_get(devs, j), sl[i].driver, sl[i].pool, sl[i].name, &d[j]))
                return -1;
        sl[i].devices = d;
        sl[i].ndevices = j;
        for (j = 0; j < json_array_size(sets); j++) {
            cs[j].name = dup(c, jstr(json_array_get(sets, j), "name"));
            if (counters(c, json_object_get(json_array_get(sets, j), "counters"), &cs[j].counters,
                         &cs[j].ncounters))
                return -1;
        }
        sl[i].counter_sets = cs;
        sl[i].ncounter_sets = j;
    }
    *out = sl;
    *n = i;
    return 0;
}

static void selectors(struct ctx *c, const json_t *arr, const struct dra_selector **out, size_t *n)
{
    struct dra_selector *s = arena_alloc(c->a, (json_array_size(arr) + 1) * sizeof(*s));
    size_t i;

    for (i = 0; i < json_array_size(arr); i++) {
        const json_t *cel = json_object_get(json_array_get(arr, i), "cel");
        const json_t *ans;

        s[i].expr = dup(c, jstr(cel, "expression"));
        if (use_cel && s[i].expr) {
            const struct celprog *p = cel_program(s[i].expr);

            s[i].compile_error = p->error;
            s[i].program = p->p;
            continue;
        }
        ans = s[i].expr ? json_object_get(c->cel, s[i].expr) : NULL;
        if (jstr(ans, "compile"))
            s[i].compile_error = dup(c, jstr(ans, "compile"));
        s[i].program = ans;
    }
    *out = s;
    *n = i;
}

static const struct dra_class *find_class(const struct dra_class *cl, size_t n, const char *name)
{
    size_t i;

    for (i = 0; name && i < n; i++)
        if (!strcmp(cl[i].name, name))
            return &cl[i];
    return NULL;
}

static int request(struct ctx *c, const json_t *o, const struct dra_class *cl, size_t ncl,
                   struct dra_request *r)
{
    const char *mode = jstr(o, "allocationMode");
    const json_t *cap = json_object_get(o, "capacity");
    const json_t *tols = json_object_get(o, "tolerations");
    size_t i;

    memset(r, 0, sizeof(*r));
    r->name = dup(c, jstr(o, "name"));
    r->class_name = dup(c, jstr(o, "deviceClassName") ? jstr(o, "deviceClassName") : "");
    r->class = find_class(cl, ncl, r->class_name);
    selectors(c, json_object_get(o, "selectors"), &r->sels, &r->nsels);
    r->mode_str = dup(c, mode);
    if (!mode || !*mode || !strcmp(mode, "ExactCount"))
        r->mode = DRA_MODE_EXACT;
    else if (!strcmp(mode, "All"))
        r->mode = DRA_MODE_ALL;
    else
        r->mode = DRA_MODE_OTHER;
    r->count = json_is_integer(json_object_get(o, "count"))
                   ? json_integer_value(json_object_get(o, "count"))
                   : 1;
    if (r->mode == DRA_MODE_EXACT && !json_object_get(o, "count"))
        r->count = 1;
    if (json_is_boolean(json_object_get(o, "adminAccess"))) {
        r->has_admin_access = true;
        r->admin_access = json_is_true(json_object_get(o, "adminAccess"));
    }
    {
        struct dra_toleration *t = arena_alloc(c->a, (json_array_size(tols) + 1) * sizeof(*t));

        for (i = 0; i < json_array_size(tols); i++) {
            const json_t *e = json_array_get(tols, i);

            t[i].key = dup(c, jstr(e, "key"));
            t[i].op = dup(c, jstr(e, "operator"));
            t[i].value = dup(c, jstr(e, "value"));
            t[i].effect = dup(c, jstr(e, "effect"));
        }
        r->tols = t;
        r->ntols = i;
    }
    if (json_is_object(cap)) {
        const json_t *reqs = json_object_get(cap, "requests");
        struct dra_capreq *q = arena_alloc(c->a, (json_object_size(reqs) + 1) * sizeof(*q));
        const char *k;
        json_t *v;

        r->has_capacity = true;
        i = 0;
        json_object_foreach((json_t *)reqs, k, v)
        {
            q[i].name = dup(c, k);
            if (qty(c, v, &q[i].q))
                return -1;
            i++;
        }
        r->caps = q;
        r->ncaps = i;
    }
    r->has_derived = json_array_size(json_object_get(o, "derivedAttributes")) > 0;
    return 0;
}

static int claims(struct ctx *c, const json_t *arr, const struct dra_class *cl, size_t ncl,
                  struct dra_claim **out, size_t *n)
{
    struct dra_claim *cs = arena_alloc(c->a, (json_array_size(arr) + 1) * sizeof(*cs));
    size_t i, j, k;

    for (i = 0; i < json_array_size(arr); i++) {
        const json_t *o = json_array_get(arr, i);
        const json_t *devs = json_object_get(json_object_get(o, "spec"), "devices");
        const json_t *reqs = json_object_get(devs, "requests");
        const json_t *cons = json_object_get(devs, "constraints");
        struct dra_claim_request *cr = arena_alloc(c->a, (json_array_size(reqs) + 1) * sizeof(*cr));
        struct dra_constraint *ct = arena_alloc(c->a, (json_array_size(cons) + 1) * sizeof(*ct));

        cs[i].ns = dup(c, jstr(json_object_get(o, "metadata"), "namespace"));
        cs[i].name = dup(c, jstr(json_object_get(o, "metadata"), "name"));
        for (j = 0; j < json_array_size(reqs); j++) {
            const json_t *rq = json_array_get(reqs, j);
            const json_t *fa = json_object_get(rq, "firstAvailable");
            struct dra_request *subs;

            cr[j].name = dup(c, jstr(rq, "name"));
            if (json_array_size(fa)) {
                cr[j].first_available = true;
                subs = arena_alloc(c->a, json_array_size(fa) * sizeof(*subs));
                for (k = 0; k < json_array_size(fa); k++)
                    if (request(c, json_array_get(fa, k), cl, ncl, &subs[k]))
                        return -1;
                cr[j].nsubs = k;
            } else {
                json_t *ex = json_deep_copy(json_object_get(rq, "exactly"));

                if (!ex)
                    ex = json_object();
                json_object_set_new(ex, "name", json_string(cr[j].name));
                subs = arena_alloc(c->a, sizeof(*subs));
                k = request(c, ex, cl, ncl, subs);
                json_decref(ex);
                if (k)
                    return -1;
                cr[j].nsubs = 1;
            }
            cr[j].subs = subs;
        }
        cs[i].requests = cr;
        cs[i].nrequests = j;
        for (j = 0; j < json_array_size(cons); j++) {
            const json_t *e = json_array_get(cons, j), *rs = json_object_get(e, "requests");
            const char **names = arena_alloc(c->a, (json_array_size(rs) + 1) * sizeof(*names));

            if (jstr(e, "matchAttribute")) {
                ct[j].kind = DRA_MATCH;
                ct[j].attr = dup(c, jstr(e, "matchAttribute"));
            } else if (jstr(e, "distinctAttribute")) {
                ct[j].kind = DRA_DISTINCT;
                ct[j].attr = dup(c, jstr(e, "distinctAttribute"));
            } else {
                ct[j].kind = DRA_CONSTRAINT_OTHER;
            }
            for (k = 0; k < json_array_size(rs); k++)
                names[k] = dup(c, json_string_value(json_array_get(rs, k)));
            ct[j].requests = names;
            ct[j].nrequests = k;
        }
        cs[i].constraints = ct;
        cs[i].nconstraints = j;
    }
    *out = cs;
    *n = i;
    return 0;
}

static int eval(void *vctx, const struct dra_selector *sel, const struct dra_device *d,
                const char *driver, char *msg, size_t size)
{
    const json_t *ans;
    const char *s;

    (void)vctx;
    (void)driver;
    if (use_cel) {
        const struct celview *cv = d->view;
        struct cel_result r;

        if (!cv->v) {
            snprintf(msg, size, "%s", cv->error);
            return -1;
        }
        if (cel_eval(sel->program, cv->v, cel_scratch, &r) < 0)
            abort();
        if (r.error) {
            snprintf(msg, size, "%.*s", (int)r.error_len, r.error);
            return -1;
        }
        return r.match;
    }
    ans = json_object_get(sel->program, d->view);
    s = json_is_string(ans) ? json_string_value(ans) : NULL;
    if (!s) {
        snprintf(msg, size, "no CEL answer for %s on %s", sel->expr, (const char *)d->view);
        return -1;
    }
    if (!strcmp(s, "true"))
        return 1;
    if (!strcmp(s, "false"))
        return 0;
    snprintf(msg, size, "%s", strncmp(s, "error: ", 7) ? s : s + 7);
    return -1;
}

static int nodesel(void *vctx, const void *selector, char *msg, size_t size)
{
    struct ctx *c = vctx;
    const struct selkey *k = selector;
    const json_t *v = json_object_get(c->nodesel, k->key);

    if (!json_is_boolean(v)) {
        snprintf(msg, size, "no node selector answer for %s", k->key);
        return -1;
    }
    return json_is_true(v);
}

static const char *decimal(kube_nano q, char *buf, size_t size)
{
    char digits[64];
    int n = 0;
    kube_nano m = q < 0 ? -q : q, ip = m / KUBE_NANO_PER_UNIT;
    long long frac = (long long)(m % KUBE_NANO_PER_UNIT);
    char fb[16];
    int len;

    do {
        digits[n++] = (char)('0' + (int)(ip % 10));
        ip /= 10;
    } while (ip);
    len = snprintf(buf, size, "%s", q < 0 ? "-" : "");
    while (n && (size_t)len + 1 < size)
        buf[len++] = digits[--n];
    buf[len] = '\0';
    if (frac) {
        snprintf(fb, sizeof(fb), "%09lld", frac);
        for (n = 8; n >= 0 && fb[n] == '0'; n--)
            fb[n] = '\0';
        snprintf(buf + len, size - (size_t)len, ".%s", fb);
    }
    return buf;
}

/* the minor version of "1.36" */
static int minor_of(const char *v)
{
    const char *dot = strchr(v, '.');

    return dot ? atoi(dot + 1) : 0;
}

static json_t *solve(json_t *in, struct dra_scratch *scratch)
{
    struct arena a = ARENA_INIT;
    struct ctx c;
    struct dra_slice *sl = NULL;
    struct dra_claim *cl = NULL;
    struct dra_class *classes;
    size_t nsl = 0, ncl = 0, ncls, i, j;
    struct dra_inventory inv;
    struct dra_features f = dra_features_default();
    struct dra_ops ops;
    struct dra_pools pools;
    struct dra_claim_result *res = NULL;
    uint8_t *allocated = NULL;
    uint32_t *shares = NULL, *ncons = NULL;
    const struct dra_consumed **cons = NULL;
    struct dra_state state;
    char msg[2048];
    const char *node = jstr(in, "node");
    json_t *out = json_object();
    int rc;

    if (jstr(in, "kubeVersion")) /* "1.36": that release's default features */
        f = dra_features_for(minor_of(jstr(in, "kubeVersion")));
    memset(&c, 0, sizeof(c));
    c.a = &a;
    c.cel = json_object_get(in, "cel");
    c.nodesel = json_object_get(in, "nodeSelectors");
    json_object_set(out, "id", json_object_get(in, "id"));
    {
        const json_t *arr = json_object_get(in, "classes");

        ncls = json_array_size(arr);
        classes = arena_alloc(&a, (ncls + 1) * sizeof(*classes));
        for (i = 0; i < ncls; i++) {
            classes[i].name =
                dup(&c, jstr(json_object_get(json_array_get(arr, i), "metadata"), "name"));
            selectors(&c,
                      json_object_get(json_object_get(json_array_get(arr, i), "spec"), "selectors"),
                      &classes[i].sels, &classes[i].nsels);
        }
    }
    if (slices(&c, json_object_get(in, "slices"), &sl, &nsl) ||
        claims(&c, json_object_get(in, "claims"), classes, ncls, &cl, &ncl)) {
        json_object_set_new(out, "status", json_string("tool-error"));
        json_object_set_new(out, "message", json_string(c.err));
        goto done;
    }
    /* the devices other claims hold (ids known to the slices or new) */
    {
        const json_t *al = json_object_get(in, "allocated"), *sh = json_object_get(in, "shares");
        size_t n;

        n = c.nids + json_array_size(al) + json_array_size(sh) + 1;
        allocated = calloc(n, 1);
        shares = calloc(n, sizeof(*shares));
        ncons = calloc(n, sizeof(*ncons));
        cons = calloc(n, sizeof(*cons));
        for (i = 0; i < json_array_size(al); i++) {
            void *v = keymap_get(&c.ids, json_string_value(json_array_get(al, i)));

            if (v)
                allocated[(uintptr_t)v - 1] = 1;
        }
        for (i = 0; i < json_array_size(sh); i++) {
            const json_t *e = json_array_get(sh, i), *m = json_object_get(e, "consumed");
            void *v = keymap_get(&c.ids, jstr(e, "device"));
            size_t id;

            if (!v)
                continue;
            id = (uintptr_t)v - 1;
            shares[id]++;
            if (json_is_object(m)) {
                const char *k;
                json_t *q;
                struct dra_consumed *items =
                    arena_alloc(&a, (ncons[id] + json_object_size(m) + 1) * sizeof(*items));

                if (ncons[id])
                    memcpy(items, cons[id], ncons[id] * sizeof(*items));
                json_object_foreach((json_t *)m, k, q)
                {
                    kube_nano val = 0;
                    size_t x;

                    qty(&c, q, &val);
                    for (x = 0; x < ncons[id]; x++)
                        if (!strcmp(items[x].name, k)) {
                            items[x].q += val;
                            break;
                        }
                    if (x == ncons[id]) {
                        items[x].name = dup(&c, k);
                        items[x].q = val;
                        ncons[id]++;
                    }
                }
                cons[id] = items;
            }
        }
    }
    inv.slices = sl;
    inv.nslices = nsl;
    inv.ndevice_ids = c.nids;
    ops.eval = eval;
    ops.node_selector_matches = nodesel;
    ops.ctx = &c;
    msg[0] = '\0';
    if (dra_pools_gather(&inv, NULL, 0, node, &f, &ops, &pools, msg, sizeof(msg))) {
        char full[2200];

        snprintf(full, sizeof(full), "gather pool information: %s", msg);
        json_object_set_new(out, "status", json_string("error"));
        json_object_set_new(out, "message", json_string(full));
        goto done;
    }
    state.allocated = allocated;
    state.shares = shares;
    state.consumed = cons;
    state.nconsumed = ncons;
    res = calloc(ncl + 1, sizeof(*res));
    rc = dra_allocate(&f, node, &pools, &state, cl, ncl, &ops, scratch, res, msg, sizeof(msg));
    switch (rc) {
    case DRA_ALLOCATED: {
        json_t *arr = json_array();

        json_object_set_new(out, "status", json_string("allocated"));
        for (i = 0; i < ncl; i++) {
            json_t *o = json_object(), *rs = json_array();

            for (j = 0; j < res[i].n; j++) {
                const struct dra_result *r = &res[i].results[j];
                json_t *e = json_object();
                char buf[800];

                if (r->parent_request)
                    snprintf(buf, sizeof(buf), "%s/%s", r->parent_request, r->request);
                else
                    snprintf(buf, sizeof(buf), "%s", r->request);
                json_object_set_new(e, "request", json_string(buf));
                snprintf(buf, sizeof(buf), "%s/%s/%s", r->pool->driver, r->pool->pool,
                         r->device->name);
                json_object_set_new(e, "device", json_string(buf));
                if (r->admin_access)
                    json_object_set_new(e, "adminAccess", json_true());
                if (r->shared)
                    json_object_set_new(e, "shared", json_true());
                if (r->nconsumed) {
                    json_t *m = json_object();
                    size_t k;

                    for (k = 0; k < r->nconsumed; k++)
                        json_object_set_new(
                            m, r->consumed[k].name,
                            json_string(decimal(r->consumed[k].q, buf, sizeof(buf))));
                    json_object_set_new(e, "consumed", m);
                }
                json_array_append_new(rs, e);
            }
            json_object_set_new(o, "results", rs);
            json_object_set_new(o, "nodeSelector",
                                json_string(res[i].node_local ? "node"
                                            : res[i].nsels    ? "selector"
                                                              : "none"));
            json_array_append_new(arr, o);
        }
        json_object_set_new(out, "claims", arr);
        break;
    }
    case DRA_NOT_ALLOCATED:
        json_object_set_new(out, "status", json_string("unallocated"));
        break;
    case DRA_NODE_FAILED:
        json_object_set_new(out, "status", json_string("node-failed"));
        json_object_set_new(out, "message", json_string(msg));
        break;
    case DRA_FAILED:
        json_object_set_new(out, "status", json_string("error"));
        json_object_set_new(out, "message", json_string(msg));
        break;
    default:
        json_object_set_new(out, "status", json_string("tool-error"));
        json_object_set_new(out, "message", json_string(strerror(-rc)));
    }
    dra_pools_free(&pools);
done:
    free(res);
    free(allocated);
    free(shares);
    free(ncons);
    free(cons);
    free(c.idnames);
    for (i = 0; i < c.nviews; i++)
        cel_device_view_free(c.views[i]);
    free(c.views);
    keymap_release(&c.ids);
    arena_release(&a);
    return out;
}

int main(int argc, char **argv)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    struct dra_scratch *scratch = dra_scratch_new();

    if (argc == 2 && !strcmp(argv[1], "--cel")) {
        use_cel = true;
    } else if (argc != 1) {
        fprintf(stderr, "usage: dra-alloc [--cel] < problems\n");
        return 2;
    }
    cel_scratch = cel_scratch_new();
    if (!scratch || !cel_scratch)
        return 1;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        json_error_t jerr;
        json_t *in = json_loadb(line, (size_t)n, 0, &jerr), *out;
        char *s;

        if (!in) {
            out = json_pack("{s:s,s:s}", "status", "tool-error", "message", jerr.text);
        } else {
            out = solve(in, scratch);
            json_decref(in);
        }
        s = json_dumps(out, JSON_COMPACT);
        json_decref(out);
        if (s) {
            fputs(s, stdout);
            free(s);
        }
        fputc('\n', stdout);
        fflush(stdout);
    }
    free(line);
    dra_scratch_free(scratch);
    cel_scratch_free(cel_scratch);
    return 0;
}
