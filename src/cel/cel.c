/* cel.c - the public API: compile (parse, check, validate, plan) and evaluate.
 *
 * Mirrors CompileCELExpression and DeviceMatches of k8s.io/dynamic-resource-allocation/cel:
 * a parse or type error is "compilation failed: " and cel-go's error display; a selector
 * whose type is neither bool nor the attribute type is "must evaluate to bool or the unknown
 * type, not T"; a program cel-go cannot build (a constant conversion or regex that fails) is
 * "program instantiation failed: ..."; at run time a result that is not a bool is "CEL result
 * of type T could not be converted to bool: ...". */
#include "cel/cel.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/buf.h"
#include "cel/ast.h"
#include "cel/celtest.h"
#include "cel/check.h"
#include "cel/dra.h"
#include "cel/estimate.h"
#include "cel/eval.h"
#include "cel/lib.h"
#include "cel/plan.h"
#include "cel/quantity.h"
#include "cel/regex.h"
#include "cel/semver.h"

struct cel_program {
    struct arena a;
    struct cel_regex *regexes;
    struct pnode *root;
    uint64_t limit;
    uint64_t max_cost; /* the estimate (CEL_ENV_NEW), else UINT64_MAX */
    int max_depth;
    bool fresh; /* see cel_plan */
};

struct cel_device_view {
    struct arena a; /* while it is built; then everything is in the block after the struct */
    struct cel_val device;
    const char *error; /* DeviceMatches fails before evaluating */
    size_t size;       /* of the compact block */
};

struct cel_scratch {
    struct arena a;
    struct ev ev;
    char *error;
    size_t error_cap, error_len;
};

void cel_compile_error_release(struct cel_compile_error *e)
{
    if (!e)
        return;
    free(e->detail);
    e->detail = NULL;
}

static int set_detail_n(struct cel_compile_error *err, const char *prefix, const char *text,
                        size_t tn, int line, int col)
{
    size_t pn;

    if (!err)
        return -EINVAL;
    pn = strlen(prefix);
    err->detail = malloc(pn + tn + 1);
    if (!err->detail)
        return -ENOMEM;
    memcpy(err->detail, prefix, pn);
    if (tn)
        memcpy(err->detail + pn, text, tn);
    err->detail[pn + tn] = 0;
    err->detail_len = pn + tn;
    err->line = line;
    err->column = col;
    return -EINVAL;
}

static int set_detail(struct cel_compile_error *err, const char *prefix, const char *text, int line,
                      int col)
{
    return set_detail_n(err, prefix, text, strlen(text), line, col);
}

static int diags_error(struct cel_diags *d, struct cel_compile_error *err)
{
    char *text = cel_diags_format(d);
    int line = 0, col = 0, rc;

    if (!text)
        return -ENOMEM;
    /* the first error after sorting by location */
    {
        struct cel_diag *best = NULL;
        for (struct cel_diag *g = d->head; g; g = g->next)
            if (!best || g->line < best->line || (g->line == best->line && g->col < best->col))
                best = g;
        if (best && best->line > 0) {
            line = best->line;
            col = best->col + 1;
        }
    }
    rc = set_detail(err, "compilation failed: ", text, line, col);
    free(text);
    return rc;
}

static int compile(const char *expr, size_t len, const struct cel_compile_opts *opts,
                   const struct cel_decl *extra, int nextra, bool any_type,
                   struct cel_program **out, struct cel_compile_error *err)
{
    const struct cel_env *base = cel_dra_env(!opts || opts->env == CEL_ENV_STORED);
    struct cel_env with_extra;
    const struct cel_env *env = base;
    struct cel_program *p;
    struct cel_source src;
    struct cel_ids ids = {0};
    struct cel_diags diags;
    struct cel_checked chk = {0};
    struct cel_expr *root;
    struct buf perr = BUF_INIT(0);
    int rc = -EINVAL;

    *out = NULL;
    if (err) {
        err->detail = NULL;
        err->detail_len = 0;
        err->line = err->column = 0;
        err->has_max_cost = false;
        err->max_cost = 0;
    }
    if (!env)
        return -ENOMEM;
    if (nextra) {
        with_extra = *base;
        with_extra.extra = extra;
        with_extra.nextra = nextra;
        env = &with_extra;
    }
    p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    p->limit = opts && opts->cost_limit_set ? opts->cost_limit : CEL_SELECTOR_MAX_COST;
    if (cel_source_init(&src, &p->a, expr, len) < 0) {
        rc = -ENOMEM;
        goto fail;
    }
    cel_diags_init(&diags, &p->a, &src);
    root = cel_parse(&p->a, &src, &env->parse, &ids, &diags);
    if (!root) {
        rc = -ENOMEM;
        goto fail;
    }
    if (diags.count) {
        rc = diags_error(&diags, err);
        goto fail;
    }
    rc = cel_check(&p->a, env, root, &ids, &diags, &chk);
    if (rc < 0)
        goto fail;
    if (diags.count) {
        rc = diags_error(&diags, err);
        goto fail;
    }
    cel_validate(env, root, &ids, &chk, &diags);
    if (diags.count) {
        rc = diags_error(&diags, err);
        goto fail;
    }
    if (!any_type && !cel_type_exact(chk.result, &cel_t_bool) &&
        !cel_type_exact(chk.result, env->attr_type)) {
        char tb[512], msg[600];
        snprintf(msg, sizeof(msg), "must evaluate to bool or the unknown type, not %s",
                 cel_type_string(chk.result, tb, sizeof(tb)));
        rc = set_detail(err, "", msg, 0, 0);
        goto fail;
    }
    p->root = cel_plan(&p->a, env, &chk, root, &p->regexes, &perr, &p->max_depth, &p->fresh);
    if (!p->root) {
        rc = set_detail_n(err, "program instantiation failed: ", perr.data ? perr.data : "",
                          perr.len, 0, 0);
        goto fail;
    }
    p->max_cost = UINT64_MAX;
    if (opts && opts->env == CEL_ENV_NEW && !any_type) {
        /* the API server's validation of a new selector: the estimated cost */
        uint64_t mn;
        struct arena ea = ARENA_INIT;
        int erc = cel_estimate_cost(&ea, root, &chk, &mn, &p->max_cost);
        arena_release(&ea);
        if (erc < 0) {
            rc = -ENOMEM;
            goto fail;
        }
        if (p->max_cost > CEL_SELECTOR_MAX_COST) {
            rc = set_detail(err, "", "Forbidden: too complex, exceeds cost limit", 0, 0);
            if (err) {
                err->has_max_cost = true;
                err->max_cost = p->max_cost;
            }
            goto fail;
        }
    }
    free(ids.start);
    free(ids.stop);
    buf_release(&perr);
    *out = p;
    return 0;
fail:
    free(ids.start);
    free(ids.stop);
    buf_release(&perr);
    cel_regex_free_list(p->regexes);
    arena_release(&p->a);
    free(p);
    return rc;
}

int cel_compile(const char *expr, size_t len, const struct cel_compile_opts *opts,
                struct cel_program **out, struct cel_compile_error *err)
{
    return compile(expr, len, opts, NULL, 0, false, out, err);
}

int cel_test_compile(const char *expr, size_t len, const struct cel_compile_opts *opts,
                     const struct cel_decl *decls, int ndecls, struct cel_program **out,
                     struct cel_compile_error *err)
{
    return compile(expr, len, opts, decls, ndecls, true, out, err);
}

uint64_t cel_program_max_cost(const struct cel_program *p)
{
    return p->max_cost;
}

void cel_program_free(struct cel_program *p)
{
    if (!p)
        return;
    cel_regex_free_list(p->regexes);
    arena_release(&p->a);
    free(p);
}

/* ---- devices ---- */

static struct cel_map *grow_map(struct arena *a, struct cel_map *m)
{
    if (m->n == m->cap) {
        uint32_t nc = m->cap ? m->cap * 2 : 4;
        struct cel_val *k = arena_alloc(a, nc * sizeof(*k)), *v = arena_alloc(a, nc * sizeof(*v));
        if (!k || !v)
            return NULL;
        if (m->n) {
            memcpy(k, m->keys, m->n * sizeof(*k));
            memcpy(v, m->vals, m->n * sizeof(*v));
        }
        m->keys = k;
        m->vals = v;
        m->cap = nc;
    }
    return m;
}

/* sets key -> val in a string-keyed map (last write wins) */
static int map_put(struct arena *a, struct cel_map *m, const char *k, size_t kn, struct cel_val v)
{
    for (uint32_t i = 0; i < m->n; i++)
        if (m->keys[i].n == kn && !memcmp(m->keys[i].v.s, k, kn)) {
            m->vals[i] = v;
            return 0;
        }
    if (!grow_map(a, m))
        return -ENOMEM;
    m->keys[m->n] = cel_str(k, (uint32_t)kn);
    m->vals[m->n] = v;
    m->n++;
    return 0;
}

/* the inner map of domain (created on first use, with room for hint entries) */
static struct cel_map *domain_map(struct arena *a, struct cel_map *outer, const char *d, size_t dn,
                                  uint32_t hint)
{
    struct cel_val v = {.k = CV_MAP};
    struct cel_map *m;

    for (uint32_t i = 0; i < outer->n; i++)
        if (outer->keys[i].n == dn && !memcmp(outer->keys[i].v.s, d, dn))
            return (struct cel_map *)outer->vals[i].v.m;
    m = arena_alloc(a, sizeof(*m));
    if (!m)
        return NULL;
    if (hint) {
        m->keys = arena_alloc(a, hint * sizeof(*m->keys));
        m->vals = arena_alloc(a, hint * sizeof(*m->vals));
        if (!m->keys || !m->vals)
            return NULL;
        m->cap = hint;
    }
    m->strkeys = true;
    v.v.m = m;
    if (map_put(a, outer, d, dn, v) < 0)
        return NULL;
    return m;
}

/* how many of names[from..n) fall in the domain of names[from] (a map's exact size) */
static uint32_t same_domain(const char *const *names, const size_t *lens, size_t from, size_t n,
                            size_t stride)
{
    const char *a = *(const char *const *)((const char *)names + from * stride);
    size_t al = *(const size_t *)((const char *)lens + from * stride);
    const char *sa = memchr(a, '/', al);
    size_t da = sa ? (size_t)(sa - a) : (size_t)-1;
    uint32_t c = 0;
    for (size_t i = from; i < n; i++) {
        const char *b = *(const char *const *)((const char *)names + i * stride);
        size_t bl = *(const size_t *)((const char *)lens + i * stride);
        const char *sb = memchr(b, '/', bl);
        size_t db = sb ? (size_t)(sb - b) : (size_t)-1;
        if (da == db && (da == (size_t)-1 || !memcmp(a, b, da)))
            c++;
    }
    return c;
}

/* a first guess of the view's size, so that most views are one block */
static size_t view_size_guess(const struct cel_device *d)
{
    size_t n = 1024 + d->driver_len;
    for (size_t i = 0; i < d->nattrs; i++) {
        n += 96 + 2 * d->attrs[i].name_len;
        if (d->attrs[i].kind == CEL_ATTR_STRING)
            n += d->attrs[i].s_len + 16;
        else if (d->attrs[i].kind == CEL_ATTR_VERSION)
            n += 160 + 3 * d->attrs[i].s_len;
    }
    for (size_t i = 0; i < d->ncapacity; i++)
        n += 256 + 2 * d->capacity[i].name_len + d->capacity[i].quantity_len;
    return n;
}

/* parseQualifiedName: "domain/id", or the driver's domain */
static void split_name(const char *name, size_t n, const char *driver, size_t dn, const char **dom,
                       size_t *domn, const char **id, size_t *idn)
{
    const char *slash = memchr(name, '/', n);
    if (!slash) {
        *dom = driver;
        *domn = dn;
        *id = name;
        *idn = n;
    } else {
        *dom = name;
        *domn = (size_t)(slash - name);
        *id = slash + 1;
        *idn = n - *domn - 1;
    }
}

/* ---- compact views ----
 * A view is built in an arena, then copied into one block just large enough: the maps a
 * lookup walks first (each map's struct, keys, key hashes, values and key strings together),
 * then the values' data. 100,000 devices are then 100,000 small contiguous blocks, and
 * finding device.attributes[domain][id] touches a few neighbouring cache lines. */
struct pack {
    char *base; /* NULL: only measure */
    size_t off;
};

static void *pk_alloc(struct pack *k, size_t n, size_t align)
{
    void *r;
    k->off = (k->off + align - 1) & ~(align - 1);
    r = k->base ? k->base + k->off : NULL;
    k->off += n;
    return r;
}

static const char *pk_str(struct pack *k, const char *s, size_t n)
{
    char *d = pk_alloc(k, n + 1, 1);
    if (d) {
        if (n)
            memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

static uint32_t key_hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

static void pk_payload(struct pack *k, struct cel_val *v);

/* a string-keyed map and, below it, the maps it holds; payloads (strings, versions,
 * quantities) come in a second pass (pk_payloads) */
static struct cel_map *pk_map(struct pack *k, const struct cel_map *m)
{
    struct cel_map *d = pk_alloc(k, sizeof(*d), 16);
    struct cel_val *keys = pk_alloc(k, m->n * sizeof(*keys), 16);
    struct cel_val *vals = pk_alloc(k, m->n * sizeof(*vals), 16);
    uint32_t *h = pk_alloc(k, m->n * sizeof(*h), 4);

    if (d) {
        *d = *m;
        d->cap = m->n;
        d->keys = keys;
        d->vals = vals;
        d->khash = h;
        if (m->n) /* an empty map may have no arrays */
            memcpy(vals, m->vals, m->n * sizeof(*vals));
    }
    for (uint32_t i = 0; i < m->n; i++) {
        const char *ks = pk_str(k, m->keys[i].v.s, m->keys[i].n);
        if (d) {
            keys[i] = cel_str(ks, m->keys[i].n);
            h[i] = key_hash(ks, m->keys[i].n);
        }
    }
    for (uint32_t i = 0; i < m->n; i++)
        if (m->vals[i].k == CV_MAP) {
            struct cel_map *c = pk_map(k, m->vals[i].v.m);
            if (d)
                vals[i].v.m = c;
        }
    return d;
}

static void pk_payloads(struct pack *k, struct cel_map *m)
{
    for (uint32_t i = 0; i < m->n; i++) {
        if (m->vals[i].k == CV_MAP)
            pk_payloads(k, (struct cel_map *)m->vals[i].v.m);
        else
            pk_payload(k, &m->vals[i]);
    }
}

/* copies what v points to (measuring only: v is the source and is left alone) */
static void pk_payload(struct pack *k, struct cel_val *v)
{
    switch (v->k) {
    case CV_STRING: {
        const char *s = pk_str(k, v->v.s, v->n);
        if (k->base)
            v->v.s = s;
        break;
    }
    case CV_SEMVER: {
        const struct cel_semver *o = v->v.sv;
        struct cel_semver *n = pk_alloc(k, sizeof(*n), 16);
        struct cel_semver_pr *pre = pk_alloc(k, (size_t)o->npre * sizeof(*pre), 16);
        if (n) {
            *n = *o;
            n->pre = o->npre ? pre : NULL;
            n->build = NULL; /* only counted (nbuild); semver.c keeps no strings */
        }
        for (int i = 0; i < o->npre; i++) {
            const char *ps = pk_str(k, o->pre[i].s, o->pre[i].n);
            if (n) {
                pre[i] = o->pre[i];
                pre[i].s = ps;
            }
        }
        if (n)
            v->v.sv = n;
        break;
    }
    case CV_QUANTITY: {
        const struct cel_quantity *o = v->v.q;
        struct cel_quantity *n = pk_alloc(k, sizeof(*n), 16);
        uint32_t *l = pk_alloc(k, (size_t)o->nl * sizeof(*l), 4);
        const char *text = o->text ? pk_str(k, o->text, o->text_len) : NULL;
        if (n) {
            *n = *o;
            if (o->nl) {
                memcpy(l, o->l, (size_t)o->nl * sizeof(*l));
                n->l = l;
            } else {
                n->l = NULL;
            }
            n->text = text;
            v->v.q = n;
        }
        break;
    }
    default:
        break;
    }
}

/* the built view v (in its arena) copied into one block; NULL when out of memory */
static struct cel_device_view *compact_view(struct cel_device_view *v)
{
    struct pack k = {NULL, sizeof(struct cel_device_view)};
    struct cel_device_view *c;
    struct cel_map *dev;

    pk_map(&k, v->device.v.m);
    {
        /* measuring pk_payloads walks the source maps */
        pk_payloads(&k, (struct cel_map *)v->device.v.m);
    }
    if (v->error)
        pk_str(&k, v->error, strlen(v->error));
    c = malloc(k.off);
    if (!c)
        return NULL;
    memset(c, 0, sizeof(*c));
    c->size = k.off;
    k.base = (char *)c;
    k.off = sizeof(*c);
    dev = pk_map(&k, v->device.v.m);
    pk_payloads(&k, dev);
    c->device.k = CV_MAP;
    c->device.v.m = dev;
    if (v->error)
        c->error = pk_str(&k, v->error, strlen(v->error));
    return c;
}

int cel_device_prepare(const struct cel_device *d, struct cel_device_view **out, struct err *err)
{
    struct cel_device_view *v = calloc(1, sizeof(*v));
    struct cel_map *dev, *attrs, *cap;
    struct cel_val mv = {.k = CV_MAP};
    char *driver;
    size_t dn = d->driver ? d->driver_len : 0;

    *out = NULL;
    if (!v)
        return err_set(err, -ENOMEM, "out of memory");
    {
        /* one block of about the right size, handed to the arena as its spare */
        size_t guess = view_size_guess(d);
        struct arena_mark m0;
        arena_mark(&v->a, &m0);
        if (guess > 4096 && arena_alloc(&v->a, guess))
            arena_rewind(&v->a, &m0);
    }
    driver = arena_strndup(&v->a, d->driver ? d->driver : "", dn);
    dev = arena_alloc(&v->a, sizeof(*dev));
    attrs = arena_alloc(&v->a, sizeof(*attrs));
    cap = arena_alloc(&v->a, sizeof(*cap));
    if (!driver || !dev || !attrs || !cap)
        goto nomem;
    dev->strkeys = attrs->strkeys = cap->strkeys = true;
    attrs->default_empty = cap->default_empty = true;
    for (size_t i = 0; i < d->nattrs; i++) {
        const struct cel_device_attr *at = &d->attrs[i];
        const char *dom, *id;
        size_t domn, idn;
        struct cel_map *m;
        struct cel_val val;
        char *name = arena_strndup(&v->a, at->name, at->name_len);
        if (!name)
            goto nomem;
        split_name(name, at->name_len, driver, dn, &dom, &domn, &id, &idn);
        m = domain_map(&v->a, attrs, dom, domn,
                       same_domain(&d->attrs[0].name, &d->attrs[0].name_len, i, d->nattrs,
                                   sizeof(d->attrs[0])));
        if (!m)
            goto nomem;
        switch (at->kind) {
        case CEL_ATTR_INT:
            val = cel_int(at->i);
            break;
        case CEL_ATTR_BOOL:
            val = cel_bool(at->b);
            break;
        case CEL_ATTR_STRING: {
            char *s = arena_strndup(&v->a, at->s ? at->s : "", at->s_len);
            if (!s)
                goto nomem;
            val = cel_str(s, (uint32_t)at->s_len);
            break;
        }
        case CEL_ATTR_VERSION:
        default: {
            char msg[512];
            const struct cel_semver *sv =
                cel_semver_parse(&v->a, at->s ? at->s : "", at->s_len, false, msg, sizeof(msg));
            if (!sv) {
                if (!v->error) {
                    struct buf b = BUF_INIT(0);
                    buf_printf(&b, "attribute %s: parse semantic version: %s", name, msg);
                    v->error = arena_strdup(&v->a, b.data ? b.data : "");
                    buf_release(&b);
                }
                continue;
            }
            val.k = CV_SEMVER;
            val.n = 0;
            val.v.sv = sv;
            break;
        }
        }
        if (map_put(&v->a, m, id, idn, val) < 0)
            goto nomem;
    }
    for (size_t i = 0; i < d->ncapacity; i++) {
        const struct cel_device_capacity *c = &d->capacity[i];
        const char *dom, *id, *qerr;
        size_t domn, idn;
        struct cel_map *m;
        struct cel_val val = {.k = CV_QUANTITY};
        char *name = arena_strndup(&v->a, c->name, c->name_len);
        if (!name)
            goto nomem;
        val.v.q = cel_quantity_parse(&v->a, c->quantity ? c->quantity : "", c->quantity_len, &qerr);
        if (!val.v.q) {
            err_set(err, -EINVAL, "capacity %s: %s", name, qerr);
            cel_device_view_free(v);
            return -EINVAL;
        }
        if (!val.v.q->canon) {
            /* as the API server stores it: written in its canonical form, read back */
            struct buf cb = BUF_INIT(0);
            if (!cel_quantity_canonical(val.v.q, c->quantity, c->quantity_len, &cb)) {
                buf_release(&cb);
                goto nomem;
            }
            val.v.q = cel_quantity_parse(&v->a, cb.data, cb.len, &qerr);
            buf_release(&cb);
            if (!val.v.q) {
                err_set(err, -EINVAL, "capacity %s: %s", name, qerr);
                cel_device_view_free(v);
                return -EINVAL;
            }
        }
        split_name(name, c->name_len, driver, dn, &dom, &domn, &id, &idn);
        m = domain_map(&v->a, cap, dom, domn,
                       same_domain(&d->capacity[0].name, &d->capacity[0].name_len, i, d->ncapacity,
                                   sizeof(d->capacity[0])));
        if (!m || map_put(&v->a, m, id, idn, val) < 0)
            goto nomem;
    }
    mv.v.m = attrs;
    {
        struct cel_val cv = {.k = CV_MAP};
        cv.v.m = cap;
        if (map_put(&v->a, dev, "driver", 6, cel_str(driver, (uint32_t)dn)) < 0 ||
            map_put(&v->a, dev, "allowMultipleAllocations", 24,
                    cel_bool(d->allow_multiple_allocations > 0)) < 0 ||
            map_put(&v->a, dev, "attributes", 10, mv) < 0 ||
            map_put(&v->a, dev, "capacity", 8, cv) < 0)
            goto nomem;
    }
    v->device.k = CV_MAP;
    v->device.v.m = dev;
    {
        struct cel_device_view *c = compact_view(v);
        if (!c)
            goto nomem;
        cel_device_view_free(v);
        *out = c;
    }
    return 0;
nomem:
    cel_device_view_free(v);
    return err_set(err, -ENOMEM, "out of memory");
}

void cel_device_view_free(struct cel_device_view *v)
{
    if (!v)
        return;
    arena_release(&v->a);
    free(v);
}

/* ---- evaluation ---- */

struct cel_scratch *cel_scratch_new(void)
{
    return calloc(1, sizeof(struct cel_scratch));
}

void cel_scratch_free(struct cel_scratch *s)
{
    if (!s)
        return;
    arena_release(&s->a);
    free(s->error);
    free(s);
}

static const char *keep_error_n(struct cel_scratch *s, const char *msg, size_t len)
{
    size_t n = len + 1;
    if (n > s->error_cap) {
        char *e = realloc(s->error, n);
        if (!e)
            return "out of memory";
        s->error = e;
        s->error_cap = n;
    }
    memcpy(s->error, msg, len);
    s->error[len] = 0;
    s->error_len = len;
    return s->error;
}

static const char *keep_error(struct cel_scratch *s, const char *msg)
{
    return keep_error_n(s, msg, strlen(msg));
}

/* ConvertToNative(reflect.TypeOf(true)) of each value type, as DeviceMatches calls it */
static bool to_native_bool(const struct cel_val *v, bool *out, char *why, size_t n)
{
    switch (v->k) {
    case CV_BOOL:
        *out = v->v.b;
        return true;
    case CV_OPTIONAL:
        if (!v->v.o) {
            snprintf(why, n, "optional.none() dereference");
            return false;
        }
        return to_native_bool(v->v.o, out, why, n);
    case CV_STRING:
        snprintf(why, n, "unsupported native conversion from string to 'bool'");
        return false;
    case CV_INT:
        snprintf(why, n, "unsupported type conversion from 'int' to bool");
        return false;
    case CV_UINT:
        snprintf(why, n, "unsupported type conversion from 'uint' to bool");
        return false;
    case CV_DOUBLE:
        snprintf(why, n, "type conversion error from Double to 'bool'");
        return false;
    case CV_BYTES:
        snprintf(why, n, "type conversion error from Bytes to 'bool'");
        return false;
    case CV_NULL:
        snprintf(why, n, "type conversion error from 'null_type' to 'bool'");
        return false;
    case CV_LIST:
        snprintf(why, n, "type conversion error from list to 'bool'");
        return false;
    case CV_MAP:
        snprintf(why, n, "type conversion error from map to 'bool'");
        return false;
    case CV_TYPE:
        snprintf(why, n, "type conversion not supported for 'type'");
        return false;
    case CV_DURATION:
        snprintf(why, n, "type conversion error from 'Duration' to 'bool'");
        return false;
    case CV_TIMESTAMP:
        snprintf(why, n, "type conversion error from 'Timestamp' to 'bool'");
        return false;
    case CV_QUANTITY:
        snprintf(why, n, "type conversion error from 'Quantity' to 'bool'");
        return false;
    case CV_SEMVER:
        snprintf(why, n, "type conversion error from 'Semver' to 'bool'");
        return false;
    case CV_IP:
        snprintf(why, n, "type conversion error from 'IP' to 'bool'");
        return false;
    case CV_CIDR:
        snprintf(why, n, "type conversion error from 'CIDR' to 'bool'");
        return false;
    case CV_URL:
        snprintf(why, n, "type conversion error from 'URL' to 'bool'");
        return false;
    case CV_FORMAT:
        snprintf(why, n, "type conversion error from 'Format' to 'bool'");
        return false;
    default:
        snprintf(why, n, "unsupported conversion");
        return false;
    }
}

int cel_eval(const struct cel_program *p, const struct cel_device_view *dev, struct cel_scratch *s,
             struct cel_result *r)
{
    struct ev *ev = &s->ev;
    struct cel_val v;
    struct arena_mark mark;

    r->match = false;
    r->error = NULL;
    r->error_len = 0;
    r->cost = 0;
    if (dev->error) {
        r->error = keep_error(s, dev->error);
        r->error_len = s->error_len;
        return 0;
    }
    /* the lookups chase pointers through the view: ask for its lines at once (a cold view
     * costs one memory latency instead of one per map) */
    for (size_t off = 0; off < dev->size && off < 4096; off += 64)
        __builtin_prefetch((const char *)dev + off);
    arena_mark(&s->a, &mark);
    ev->a = &s->a;
    ev->device = &dev->device;
    ev->extra = NULL;
    ev->cost = 0;
    ev->limit = p->limit;
    ev->fresh = p->fresh;
    ev->nqpromo = ev->aqpromo = 0;
    ev->qpromo = NULL;
    if (setjmp(ev->abort)) {
        r->cost = ev->cost;
        r->error = keep_error(s, ev->abort_msg ? ev->abort_msg
                                               : "operation cancelled: actual cost limit exceeded");
        ev->abort_msg = NULL;
        r->error_len = s->error_len;
        arena_rewind(&s->a, &mark);
        return 0;
    }
    v = cel_eval_node(ev, p->root);
    r->cost = ev->cost;
    if (v.k == CV_ERROR) {
        r->error = keep_error_n(s, v.v.s, cel_err_len(&v));
    } else if (v.k == CV_BOOL) {
        r->match = v.v.b;
    } else {
        char msg[600], why[300];
        bool b;
        if (to_native_bool(&v, &b, why, sizeof(why))) {
            r->match = b;
        } else {
            snprintf(msg, sizeof(msg), "CEL result of type %s could not be converted to bool: %s",
                     cel_val_type_name(&v), why);
            r->error = keep_error(s, msg);
        }
    }
    if (r->error)
        r->error_len = s->error_len;
    arena_rewind(&s->a, &mark);
    return 0;
}

int cel_test_eval(const struct cel_program *p, const struct cel_val *vars, struct cel_scratch *s,
                  struct cel_val *out)
{
    struct ev *ev = &s->ev;
    static const struct cel_val none = {.k = CV_NULL};

    ev->a = &s->a;
    ev->device = &none;
    ev->extra = vars;
    ev->cost = 0;
    ev->limit = p->limit;
    ev->fresh = p->fresh;
    ev->nqpromo = ev->aqpromo = 0;
    ev->qpromo = NULL;
    if (setjmp(ev->abort)) {
        *out = cel_err(&s->a, "%s",
                       ev->abort_msg ? ev->abort_msg
                                     : "operation cancelled: actual cost limit exceeded");
        ev->abort_msg = NULL;
        return 0;
    }
    *out = cel_eval_node(ev, p->root);
    return 0;
}

struct arena *cel_test_scratch_arena(struct cel_scratch *s)
{
    return &s->a;
}
