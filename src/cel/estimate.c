/* estimate.c - the static cost estimate the API server compares with the selector cost limit
 * (CompileCELExpression with cost estimation on: cel-go's checker.Cost with the Kubernetes
 * library.CostEstimator, the DRA sizeEstimator over the device's declared maximum sizes, the
 * ext libraries' overload estimators and PresenceTestHasCost(false)).
 *
 * Follows checker/cost.go: every expression gets a path (device.attributes.@values...) from
 * which the size estimator answers, sizes computed along the way (literals, list and map
 * literals, results of calls), entry sizes of containers for comprehension variables, and the
 * Go arithmetic that saturates at 2^64-1. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cel/ast.h"
#include "cel/check.h"
#include "cel/estimate.h"
#include "cel/utf8.h"

#define U64MAX UINT64_MAX

struct est {
    uint64_t min, max;
};

static const struct est unknown = {0, U64MAX};

static uint64_t add_sat(uint64_t x, uint64_t y)
{
    if (y > 0 && x > U64MAX - y)
        return U64MAX;
    return x + y;
}

static uint64_t mul_sat(uint64_t x, uint64_t y)
{
    if (y != 0 && x > U64MAX / y)
        return U64MAX;
    return x * y;
}

/* multiplyByCostFactor */
static uint64_t mul_factor(uint64_t x, double y)
{
    double xf = (double)x;
    if (xf > 0 && y > 0 && xf > 18446744073709551615.0 / y)
        return U64MAX;
    double c = ceil(xf * y);
    if (c >= 18446744073709551616.0)
        return U64MAX;
    return (uint64_t)c;
}

static struct est e_add(struct est a, struct est b)
{
    struct est r = {add_sat(a.min, b.min), add_sat(a.max, b.max)};
    return r;
}

static struct est e_mul(struct est a, struct est b)
{
    struct est r = {mul_sat(a.min, b.min), mul_sat(a.max, b.max)};
    return r;
}

static struct est e_factor(struct est a, double f)
{
    struct est r = {mul_factor(a.min, f), mul_factor(a.max, f)};
    return r;
}

static struct est e_union(struct est a, struct est b)
{
    if (b.min < a.min)
        a.min = b.min;
    if (b.max > a.max)
        a.max = b.max;
    return a;
}

static struct est fixed(uint64_t v)
{
    struct est r = {v, v};
    return r;
}

/* ---- the DRA device's declared sizes (NewExpressions: the v1.34 device with
 * allowMultipleAllocations, attributes of type any) ---- */

struct decl {
    uint64_t max;
    const struct decl *key, *elem;
    const char *const *field_names;
    const struct decl *const *fields;
    int nfields;
};

static const struct decl d_domain = {63, NULL, NULL, NULL, NULL, 0};
static const struct decl d_id = {32, NULL, NULL, NULL, NULL, 0};
static const struct decl d_driver = {63, NULL, NULL, NULL, NULL, 0};
static const struct decl d_multi = {1, NULL, NULL, NULL, NULL, 0};
static const struct decl d_attr = {64, NULL, NULL, NULL, NULL, 0};
static const struct decl d_quantity = {0, NULL, NULL, NULL, NULL, 0};
static const struct decl d_inner_attrs = {32, &d_id, &d_attr, NULL, NULL, 0};
static const struct decl d_outer_attrs = {32, &d_domain, &d_inner_attrs, NULL, NULL, 0};
static const struct decl d_inner_cap = {32, &d_id, &d_quantity, NULL, NULL, 0};
static const struct decl d_outer_cap = {32, &d_domain, &d_inner_cap, NULL, NULL, 0};
static const char *const dev_names[] = {"allowMultipleAllocations", "driver", "attributes",
                                        "capacity"};
static const struct decl *const dev_fields[] = {&d_multi, &d_driver, &d_outer_attrs, &d_outer_cap};
static const struct decl d_device = {0, NULL, NULL, dev_names, dev_fields, 4};

/* paths: Go []string slices of names. cel-go builds them with append() and never copies, so
 * two appends to one path share its backing array when it has room: pushIterKey's
 * path+"@keys" becomes path+"@values" once pushIterValue appends to the same range path.
 * p is the shared backing array (cap names), n the slice's length. */
struct path {
    const char **p;
    int n, cap;
};

/* sizeEstimator.EstimateSize */
static bool dra_size(const struct path *path, struct est *out)
{
    const struct decl *cur;
    if (!path || path->n == 0)
        return false;
    if (strcmp(path->p[0], "device"))
        return false;
    cur = &d_device;
    for (int i = 1; i < path->n; i++) {
        const char *name = path->p[i];
        if (!strcmp(name, "@items") || !strcmp(name, "@values")) {
            if (!cur->elem)
                return false;
            cur = cur->elem;
        } else if (!strcmp(name, "@keys")) {
            if (!cur->key)
                return false;
            cur = cur->key;
        } else {
            const struct decl *f = NULL;
            for (int k = 0; k < cur->nfields; k++)
                if (!strcmp(cur->field_names[k], name))
                    f = cur->fields[k];
            if (!f) {
                if (cur->elem == &d_attr) {
                    cur = &d_attr;
                    continue;
                }
                return false;
            }
            cur = f;
        }
    }
    out->min = 0;
    out->max = cur->max;
    return true;
}

/* ---- the coster ---- */

struct entry_size {
    bool set;
    enum cel_kind kind; /* CK_LIST or CK_MAP */
    struct est key, val;
};

struct local {
    const char *name;
    struct path path;
    bool has_size;
    struct est size;
    bool has_entry;
    struct entry_size entry;
};

struct coster {
    struct arena *a;
    const struct cel_checked *chk;
    struct path *paths; /* by id */
    bool *has_size;     /* computedSizes */
    struct est *sizes;
    struct entry_size *entries; /* computedEntrySizes */
    struct local *locals;
    int nlocals, alocals;
    bool oom;
};

/* an AstNode */
struct node {
    struct path path; /* n == 0 and p == NULL: nil */
    const struct cel_type *t;
    struct cel_expr *e; /* NULL for an items node */
    bool has_size;
    struct est size;
};

static const struct cel_type *type_of(struct coster *c, const struct cel_expr *e)
{
    if (e && e->id > 0 && e->id < c->chk->n && c->chk->types[e->id])
        return c->chk->types[e->id];
    return &cel_t_dyn;
}

static struct local *peek_local(struct coster *c, const char *name)
{
    for (int i = c->nlocals - 1; i >= 0; i--)
        if (!strcmp(c->locals[i].name, name))
            return &c->locals[i];
    return NULL;
}

static struct path get_path(struct coster *c, const struct cel_expr *e)
{
    struct path none = {NULL, 0, 0};
    if (e->kind == CEL_E_IDENT) {
        struct local *l = peek_local(c, e->u.ident);
        if (l)
            return l->path;
    }
    if (e->id > 0 && e->id < c->chk->n)
        return c->paths[e->id];
    return none;
}

static struct path path_plus(struct coster *c, struct path base, const char *last);

/* c.addPath(e, append(base, last)), or c.addPath(e, base) when last is NULL */
static void add_path(struct coster *c, const struct cel_expr *e, struct path base, const char *last)
{
    if (e->id <= 0 || e->id >= c->chk->n)
        return;
    c->paths[e->id] = last ? path_plus(c, base, last) : base;
}

static bool is_scalar(const struct cel_type *t)
{
    switch (t->kind) {
    case CK_BOOL:
    case CK_DOUBLE:
    case CK_DURATION:
    case CK_INT:
    case CK_TIMESTAMP:
    case CK_UINT:
        return true;
    case CK_OPAQUE:
        if (t->name && !strcmp(t->name, "optional_type") && t->np > 0)
            return is_scalar(t->p[0]);
        return false;
    default:
        return false;
    }
}

/* computeSize */
static bool compute_size(struct coster *c, const struct cel_expr *e, struct est *out)
{
    if (e->id > 0 && e->id < c->chk->n && c->has_size[e->id]) {
        *out = c->sizes[e->id];
        return true;
    }
    /* computeExprSize */
    switch (e->kind) {
    case CEL_E_LIT:
        switch (e->u.lit.kind) {
        case CEL_LIT_STRING:
            *out = fixed((uint64_t)cel_utf8_count(e->u.lit.v.s.p, e->u.lit.v.s.len));
            return true;
        case CEL_LIT_BYTES:
            *out = fixed(e->u.lit.v.s.len);
            return true;
        default:
            *out = fixed(1);
            return true;
        }
    case CEL_E_LIST:
        *out = fixed((uint64_t)e->u.list.n);
        return true;
    case CEL_E_MAP:
        *out = fixed((uint64_t)e->u.map.n);
        return true;
    default:
        break;
    }
    {
        struct path p = get_path(c, e);
        if (dra_size(&p, out)) {
            if (e->id > 0 && e->id < c->chk->n) {
                c->has_size[e->id] = true;
                c->sizes[e->id] = *out;
            }
            return true;
        }
    }
    if (is_scalar(type_of(c, e))) {
        *out = fixed(1);
        return true;
    }
    if (e->kind == CEL_E_IDENT) {
        struct local *l = peek_local(c, e->u.ident);
        if (l && l->has_size) {
            *out = l->size;
            return true;
        }
    }
    return false;
}

static void set_size(struct coster *c, const struct cel_expr *e, const struct est *s)
{
    if (!s || e->id <= 0 || e->id >= c->chk->n)
        return;
    c->has_size[e->id] = true;
    c->sizes[e->id] = *s;
}

static struct est size_or_unknown(struct coster *c, const struct cel_expr *e)
{
    struct est s;
    return compute_size(c, e, &s) ? s : unknown;
}

static bool entry_size(struct coster *c, const struct cel_expr *e, struct entry_size *out)
{
    if (e->id > 0 && e->id < c->chk->n && c->entries[e->id].set) {
        *out = c->entries[e->id];
        return true;
    }
    if (e->kind == CEL_E_IDENT) {
        struct local *l = peek_local(c, e->u.ident);
        if (l && l->has_entry) {
            *out = l->entry;
            return true;
        }
    }
    return false;
}

static void set_entry(struct coster *c, const struct cel_expr *e, const struct entry_size *s)
{
    if (!s || !s->set || e->id <= 0 || e->id >= c->chk->n)
        return;
    c->entries[e->id] = *s;
}

static bool is_accu(const char *name)
{
    return !strcmp(name, "__result__") || !strcmp(name, "@result");
}

static struct node new_node(struct coster *c, struct cel_expr *e)
{
    struct node n;
    memset(&n, 0, sizeof(n));
    n.path = get_path(c, e);
    if (n.path.n > 0 && is_accu(n.path.p[0])) {
        n.path.p = NULL;
        n.path.n = n.path.cap = 0;
    }
    n.t = type_of(c, e);
    n.e = e;
    n.has_size = compute_size(c, e, &n.size);
    return n;
}

static void push_local(struct coster *c, const char *name, struct path path, const struct est *size,
                       const struct entry_size *entry)
{
    struct local *l;
    if (c->nlocals == c->alocals) {
        int na = c->alocals ? c->alocals * 2 : 8;
        struct local *nl = arena_alloc(c->a, (size_t)na * sizeof(*nl));
        if (!nl) {
            c->oom = true;
            return;
        }
        if (c->nlocals)
            memcpy(nl, c->locals, (size_t)c->nlocals * sizeof(*nl));
        c->locals = nl;
        c->alocals = na;
    }
    l = &c->locals[c->nlocals++];
    memset(l, 0, sizeof(*l));
    l->name = name;
    l->path = path;
    if (size) {
        l->has_size = true;
        l->size = *size;
    }
    if (entry && entry->set) {
        l->has_entry = true;
        l->entry = *entry;
    }
}

static void pop_local(struct coster *c, const char *name)
{
    /* scopes.pop: the innermost variable of that name */
    for (int i = c->nlocals - 1; i >= 0; i--)
        if (!strcmp(c->locals[i].name, name)) {
            memmove(&c->locals[i], &c->locals[i + 1],
                    (size_t)(c->nlocals - i - 1) * sizeof(c->locals[0]));
            c->nlocals--;
            return;
        }
}

/* growslice's new capacity for a []string (16-byte elements, not noscan) of cap old grown
 * to len want: nextslicecap, then the allocation rounded up to its size class (with a malloc
 * header above 512 bytes) or to whole 8 KiB pages */
static int go_grow_cap(int old, int want)
{
    static const uint16_t classes[] = {
        8,     16,    24,    32,    48,    64,    80,    96,    112,   128,   144,   160,
        176,   192,   208,   224,   240,   256,   288,   320,   352,   384,   416,   448,
        480,   512,   576,   640,   704,   768,   896,   1024,  1152,  1280,  1408,  1536,
        1792,  2048,  2304,  2688,  3072,  3200,  3456,  4096,  4864,  5376,  6144,  6528,
        6784,  6912,  8192,  9472,  9728,  10240, 10880, 12288, 13568, 14336, 16384, 18432,
        19072, 20480, 21760, 24576, 27264, 28672, 32768};
    int64_t nc = old, mem, req;

    if (want > 2 * old) {
        nc = want;
    } else if (old < 256) {
        nc = 2 * (int64_t)old;
    } else {
        while (nc < want)
            nc += (nc + 3 * 256) >> 2;
    }
    mem = nc * 16;
    req = mem;
    if (req <= 32768 - 8) {
        if (req > 512)
            req += 8;
        for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
            if (classes[i] >= req) {
                mem = classes[i] - (req - mem);
                break;
            }
    } else {
        mem = (req + 8191) & ~(int64_t)8191;
    }
    return (int)(mem / 16);
}

/* Go's append(base, last): in place when base has room (the backing array is shared) */
static struct path path_plus(struct coster *c, struct path base, const char *last)
{
    struct path p;
    if (base.p && base.n < base.cap) {
        base.p[base.n] = last;
        base.n++;
        return base;
    }
    p.cap = go_grow_cap(base.cap, base.n + 1);
    p.n = base.n + 1;
    p.p = arena_alloc(c->a, (size_t)p.cap * sizeof(char *));
    if (!p.p) {
        c->oom = true;
        p.n = p.cap = 0;
        return p;
    }
    for (int i = 0; i < base.n; i++)
        p.p[i] = base.p[i];
    p.p[base.n] = last;
    return p;
}

/* pushIterKey / pushIterValue / pushIterSingle: which = 0 key, 1 value, 2 single */
static void push_iter(struct coster *c, const char *name, struct cel_expr *range, int which)
{
    struct entry_size es;
    bool has = entry_size(c, range, &es);
    enum cel_kind container = has ? es.kind : type_of(c, range)->kind;
    const struct est *size = NULL;
    const char *sub;

    if (which == 0) {
        size = has ? &es.key : NULL;
        sub = container == CK_LIST ? "@indices" : "@keys";
    } else if (which == 1) {
        size = has ? &es.val : NULL;
        sub = container == CK_LIST ? "@items" : "@values";
    } else {
        size = has ? &es.key : NULL;
        sub = "@keys";
        if (container == CK_LIST) {
            size = has ? &es.val : NULL;
            sub = "@items";
        }
    }
    push_local(c, name, path_plus(c, get_path(c, range), sub), size, NULL);
}

static void push_local_var(struct coster *c, const char *name, struct cel_expr *e)
{
    struct est s;
    struct entry_size es;
    bool hs = compute_size(c, e, &s), he = entry_size(c, e, &es);
    push_local(c, name, get_path(c, e), hs ? &s : NULL, he ? &es : NULL);
}

static struct est cost(struct coster *c, struct cel_expr *e);

/* the k8s estimator's and ext's sizeEstimate: computed size, else the size estimator */
static struct est node_size(const struct node *n)
{
    struct est s;
    if (n->has_size)
        return n->size;
    if (dra_size(&n->path, &s))
        return s;
    return unknown;
}

/* listElementNode: an items node of the list's element type */
static bool list_element(struct coster *c, const struct node *list, struct node *out)
{
    if (list->t->np == 0)
        return false;
    memset(out, 0, sizeof(*out));
    out->t = list->t->p[0];
    if (list->path.p) { /* listElementNode copies the path */
        struct path copy = list->path;
        copy.cap = copy.n;
        out->path = path_plus(c, copy, "@items");
    }
    return true;
}

static uint64_t node_uint(const struct node *n, uint64_t dflt)
{
    if (!n->e || n->e->kind != CEL_E_LIT || n->e->u.lit.kind != CEL_LIT_INT)
        return dflt;
    if (n->e->u.lit.v.i < 0)
        return 0;
    return (uint64_t)n->e->u.lit.v.i;
}

struct call_est {
    struct est cost;
    bool has_size;
    struct est size;
};

static bool ret(struct call_est *r, struct est cost, const struct est *size)
{
    r->cost = cost;
    r->has_size = size != NULL;
    if (size)
        r->size = *size;
    return true;
}

/* estimateAllocatingListCall */
static bool list_call(struct call_est *r, double factor, struct est size)
{
    struct est cost = e_add(e_add(e_factor(size, factor), fixed(1)), fixed(10));
    return ret(r, cost, &size);
}

/* the ext libraries' overload estimators */
static bool ext_estimate(struct coster *c, const char *ov, const struct node *target,
                         const struct node *args, int nargs, struct call_est *r)
{
    (void)c;
    if (!strcmp(ov, "list_slice")) {
        if (!target || nargs != 2)
            return false;
        struct est sz = node_size(target);
        uint64_t start = node_uint(&args[0], 0), end = node_uint(&args[1], sz.max);
        return list_call(r, 1, fixed(end - start));
    }
    if (!strcmp(ov, "list_flatten") || !strcmp(ov, "list_flatten_int")) {
        if (!target || nargs > 1)
            return false;
        uint64_t depth = nargs == 1 ? node_uint(&args[0], U64MAX) : 1;
        return list_call(r, (double)depth, node_size(target));
    }
    if (!strcmp(ov, "lists_range")) {
        if (target || nargs != 1)
            return false;
        return list_call(r, 1, fixed(node_uint(&args[0], U64MAX)));
    }
    if (!strcmp(ov, "list_reverse")) {
        if (!target || nargs != 0)
            return false;
        return list_call(r, 1, node_size(target));
    }
    if (!strcmp(ov, "list_distinct")) {
        if (!target || nargs != 0)
            return false;
        struct est sz = node_size(target);
        return list_call(r, 2.0, e_mul(sz, sz));
    }
    {
        static const char *const types[] = {"int",
                                            "uint",
                                            "double",
                                            "bool",
                                            "google.protobuf.Duration",
                                            "google.protobuf.Timestamp",
                                            "string",
                                            "bytes"};
        size_t ol = strlen(ov);
        for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
            size_t tl = strlen(types[t]);
            if (ol < 5 + tl || strncmp(ov, "list_", 5) || strncmp(ov + 5, types[t], tl))
                continue;
            const char *rest = ov + 5 + tl;
            double factor = 2.0 + (t >= 6 ? 0.1 : 0);
            if (!strcmp(rest, "_sort")) {
                if (!target || nargs != 0)
                    return false;
                struct est sz = node_size(target);
                return list_call(r, factor, e_mul(sz, sz));
            }
            if (!strcmp(rest, "_sortByAssociatedKeys")) {
                if (!target || nargs != 1)
                    return false;
                struct est sz = node_size(&args[0]);
                return list_call(r, factor, e_mul(sz, sz));
            }
        }
    }
    if (!strcmp(ov, "list_sets_contains_list") || !strcmp(ov, "list_sets_intersects_list") ||
        !strcmp(ov, "list_sets_equivalent_list")) {
        if (nargs != 2)
            return false;
        double f = strcmp(ov, "list_sets_equivalent_list") ? 1 : 2;
        struct est cost =
            e_add(e_factor(e_mul(node_size(&args[0]), node_size(&args[1])), f), fixed(1));
        return ret(r, cost, NULL);
    }
    return false;
}

static bool type_named(const struct cel_type *t, const char *name)
{
    return t->name && !strcmp(t->name, name);
}

/* library.CostEstimator.EstimateCallCost */
static bool k8s_estimate(struct coster *c, const char *fn, const char *ov,
                         const struct node *target, const struct node *args, int nargs,
                         struct call_est *r)
{
    static const char *const list_fns[] = {"isSorted", "sum",         "max",     "min",
                                           "indexOf",  "lastIndexOf", "includes"};
    for (size_t i = 0; i < sizeof(list_fns) / sizeof(list_fns[0]); i++) {
        if (strcmp(fn, list_fns[i]))
            continue;
        if (!target)
            return false;
        struct est el = fixed(1);
        struct node en;
        if (list_element(c, target, &en)) {
            if (en.t->kind == CK_STRING || en.t->kind == CK_BYTES)
                el = e_add(el, e_factor(node_size(&en), 0.1));
            return ret(r, e_mul(node_size(target), el), NULL);
        }
        if (!strcmp(fn, "includes"))
            return ret(r, e_mul(node_size(target), el), NULL);
        return ret(r, e_factor(node_size(target), 0.1), NULL);
    }
    if (!strcmp(fn, "url")) {
        if (nargs != 1)
            return false;
        struct est sz = node_size(&args[0]);
        return ret(r, e_factor(sz, 0.1), &sz);
    }
    if (!strcmp(fn, "lowerAscii") || !strcmp(fn, "upperAscii") || !strcmp(fn, "substring") ||
        !strcmp(fn, "trim")) {
        if (!target)
            return false;
        struct est sz = node_size(target);
        return ret(r, e_factor(sz, 0.1), &sz);
    }
    if (!strcmp(fn, "replace")) {
        if (!target || nargs < 2)
            return false;
        struct est sz = node_size(target), to = node_size(&args[0]), with = node_size(&args[1]);
        struct est count = {0, 0}, retained = {0, 0};
        if (to.min == 0) {
            count.max = sz.max < U64MAX ? sz.max + 1 : sz.max;
            retained.max = sz.max;
        } else if (with.max <= to.min) {
            count.max = 0;
            retained.max = sz.max;
        } else {
            double q = ceil((double)sz.max / (double)to.min);
            count.max = q >= 18446744073709551616.0 ? U64MAX : (uint64_t)q;
        }
        if (to.max == 0) {
            count.min = sz.min < U64MAX ? sz.min + 1 : sz.min;
            retained.min = sz.min;
        } else if (to.max <= with.min) {
            count.min = 0;
            retained.min = sz.min;
        } else {
            double q = ceil((double)sz.min / (double)to.max);
            count.min = q >= 18446744073709551616.0 ? U64MAX : (uint64_t)q;
        }
        struct est size = e_add(e_mul(count, with), retained);
        return ret(r, e_factor(sz, 0.2), &size);
    }
    if (!strcmp(fn, "split")) {
        if (!target)
            return false;
        struct est sz = node_size(target);
        uint64_t max = sz.max;
        if (nargs > 1 && args[1].e && args[1].e->kind == CEL_E_LIT &&
            args[1].e->u.lit.kind == CEL_LIT_INT)
            max = (uint64_t)args[1].e->u.lit.v.i;
        struct est size = {0, max};
        return ret(r, e_factor(sz, 0.2), &size);
    }
    if (!strcmp(fn, "join")) {
        if (!target)
            return false;
        struct est sz = {0, 0}, list = node_size(target);
        struct node en;
        if (list_element(c, target, &en))
            sz = e_mul(list, node_size(&en));
        if (nargs > 0) {
            struct est sep = node_size(&args[0]);
            struct est n = {list.min > 0 ? list.min - 1 : 0, list.max > 0 ? list.max - 1 : 0};
            sz = e_add(sz, e_mul(sep, n));
        }
        return ret(r, e_factor(sz, 0.1), &sz);
    }
    if (!strcmp(fn, "find") || !strcmp(fn, "findAll")) {
        if (!target || nargs < 1)
            return false;
        struct est sz = node_size(target);
        struct est str = e_factor(e_add(sz, fixed(1)), 0.1);
        struct est re = e_factor(node_size(&args[0]), 0.25);
        struct est size = {0, sz.max};
        return ret(r, e_mul(str, re), &size);
    }
    if (!strcmp(fn, "cidr") || !strcmp(fn, "isIP") || !strcmp(fn, "isCIDR")) {
        if (nargs < 1)
            return false;
        return ret(r, e_factor(node_size(&args[0]), 0.1), NULL);
    }
    if (!strcmp(fn, "ip")) {
        if (!strcmp(ov, "cidr_ip"))
            return ret(r, fixed(1), NULL);
        if (nargs < 1)
            return false;
        return ret(r, e_factor(node_size(&args[0]), 0.1), NULL);
    }
    if (!strcmp(fn, "ip.isCanonical")) {
        if (nargs < 1)
            return false;
        return ret(r, e_factor(node_size(&args[0]), 0.2), NULL);
    }
    {
        static const char *const one[] = {"masked",
                                          "prefixLength",
                                          "family",
                                          "isUnspecified",
                                          "isLoopback",
                                          "isLinkLocalMulticast",
                                          "isLinkLocalUnicast",
                                          "isGlobalUnicast",
                                          "format.named",
                                          "sign",
                                          "asInteger",
                                          "isInteger",
                                          "asApproximateFloat",
                                          "isGreaterThan",
                                          "isLessThan",
                                          "compareTo",
                                          "add",
                                          "sub",
                                          "major",
                                          "minor",
                                          "patch",
                                          "getScheme",
                                          "getHostname",
                                          "getHost",
                                          "getPort",
                                          "getEscapedPath",
                                          "getQuery"};
        for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++)
            if (!strcmp(fn, one[i]))
                return ret(r, fixed(1), NULL);
    }
    if (!strcmp(fn, "containsIP") || !strcmp(fn, "containsCIDR")) {
        if (nargs < 1)
            return false;
        struct est sz = {4, 16};
        struct est cost = e_factor(e_add(sz, sz), 0.1);
        if (!strcmp(fn, "containsIP")) {
            if (!strcmp(ov, "cidr_contains_ip_string"))
                cost = e_add(cost, e_factor(node_size(&args[0]), 0.1));
        } else {
            cost = e_add(cost, e_factor(sz, 0.1));
            cost = e_add(cost, fixed(1));
            if (!strcmp(ov, "cidr_contains_cidr_string"))
                cost = e_add(cost, e_factor(node_size(&args[0]), 0.1));
        }
        return ret(r, cost, NULL);
    }
    if (!strcmp(fn, "quantity") || !strcmp(fn, "isQuantity") || !strcmp(fn, "semver") ||
        !strcmp(fn, "isSemver")) {
        if (nargs < 1)
            return false;
        return ret(r, e_factor(node_size(&args[0]), 0.1), NULL);
    }
    if (!strcmp(fn, "validate")) {
        if (nargs < 1)
            return false;
        return ret(r, e_factor(e_factor(node_size(&args[0]), 0.1), 128 * 0.25), NULL);
    }
    if (!strcmp(fn, "_==_") && nargs == 2) {
        const struct cel_type *t = args[0].t;
        if (!cel_type_exact(t, args[1].t))
            return false;
        if (t->kind == CK_OPAQUE && (type_named(t, "net.IP") || type_named(t, "net.CIDR")))
            return ret(r, fixed(1), NULL);
        if (t->kind == CK_STRUCT) {
            if (type_named(t, "kubernetes.Quantity") || type_named(t, "kubernetes.Semver"))
                return ret(r, fixed(1), NULL);
            if (type_named(t, "kubernetes.NamedFormat")) {
                struct est e = {1, 64};
                return ret(r, e_factor(e, 0.1), NULL);
            }
            if (type_named(t, "kubernetes.URL")) {
                struct est size = {1, 1};
                if (args[1].has_size)
                    size = e_union(args[1].size, args[1].size);
                struct est e = {1, size.max};
                return ret(r, e_factor(e, 0.1), NULL);
            }
        }
    }
    return false;
}

static struct est arg_sum(const struct est *costs, int n)
{
    struct est s = {0, 0};
    for (int i = 0; i < n; i++)
        s = e_add(s, costs[i]);
    return s;
}

/* functionCost */
static struct call_est function_cost(struct coster *c, struct cel_expr *e, const char *fn,
                                     const char *ov, const struct node *target,
                                     const struct node *args, int nargs, const struct est *costs)
{
    struct call_est r = {{0, 0}, false, {0, 0}};
    struct est sum = arg_sum(costs, nargs);

    if (ext_estimate(c, ov, target, args, nargs, &r) ||
        k8s_estimate(c, fn, ov, target, args, nargs, &r)) {
        r.cost = e_add(r.cost, sum);
        return r;
    }
    if (!strcmp(ov, "string_format") && target) {
        r.cost = e_add(e_factor(target->has_size ? target->size : unknown, 0.1), sum);
        return r;
    }
    if ((!strcmp(ov, "string_to_bytes") || !strcmp(ov, "bytes_to_string")) && nargs == 1) {
        struct est sz = args[0].has_size ? args[0].size : unknown;
        r.cost = e_add(e_factor(sz, 0.1), sum);
        r.has_size = true;
        if (!strcmp(ov, "string_to_bytes")) {
            r.size.min = sz.min;
            r.size.max = sz.max * 4;
        } else {
            r.size.min = sz.min / 4;
            r.size.max = sz.max;
        }
        return r;
    }
    if (!strcmp(ov, "strings_quote") && nargs == 1) {
        struct est sz = args[0].has_size ? args[0].size : unknown;
        r.cost = e_add(e_factor(sz, 0.1), sum);
        r.has_size = true;
        r.size.min = sz.min + 2;
        r.size.max = sz.max * 2 + 2;
        return r;
    }
    if ((!strcmp(ov, "starts_with_string") || !strcmp(ov, "ends_with_string")) && nargs == 1) {
        r.cost = e_add(e_factor(args[0].has_size ? args[0].size : unknown, 0.1), sum);
        return r;
    }
    if (!strcmp(ov, "in_list") && nargs == 2) {
        r.cost = e_add(e_factor(args[1].has_size ? args[1].size : unknown, 1), sum);
        return r;
    }
    if (!strcmp(ov, "matches") || !strcmp(ov, "matches_string")) {
        const struct node *str = NULL, *re = NULL;
        if (!strcmp(ov, "matches_string") && target && nargs == 1) {
            str = target;
            re = &args[0];
        } else if (!strcmp(ov, "matches") && !target && nargs == 2) {
            str = &args[0];
            re = &args[1];
        }
        if (str && re) {
            struct est sc = e_factor(e_add(str->has_size ? str->size : unknown, fixed(1)), 0.1);
            struct est rc = e_factor(re->has_size ? re->size : unknown, 0.25);
            r.cost = e_add(e_mul(sc, rc), sum);
            return r;
        }
    }
    if (!strcmp(ov, "contains_string") && target && nargs == 1) {
        struct est sc = e_factor(target->has_size ? target->size : unknown, 0.1);
        struct est subc = e_factor(args[0].has_size ? args[0].size : unknown, 0.1);
        r.cost = e_add(e_mul(sc, subc), sum);
        return r;
    }
    if (!strcmp(ov, "logical_or") || !strcmp(ov, "logical_and")) {
        struct est l = costs[0], rr = costs[1];
        r.cost.min = l.min;
        r.cost.max = e_add(l, rr).max;
        return r;
    }
    if (!strcmp(ov, "conditional")) {
        struct est size = e_union(args[1].has_size ? args[1].size : unknown,
                                  args[2].has_size ? args[2].size : unknown);
        struct entry_size a, b;
        if (entry_size(c, args[1].e, &a) && entry_size(c, args[2].e, &b)) {
            struct entry_size u = {true, a.kind, e_union(a.key, b.key), e_union(a.val, b.val)};
            set_entry(c, e, &u);
        }
        r.cost = e_add(costs[0], e_union(costs[1], costs[2]));
        r.has_size = true;
        r.size = size;
        return r;
    }
    if ((!strcmp(ov, "add_string") || !strcmp(ov, "add_bytes") || !strcmp(ov, "add_list")) &&
        nargs == 2) {
        struct est ls = args[0].has_size ? args[0].size : unknown;
        struct est rs = args[1].has_size ? args[1].size : unknown;
        struct est size = e_add(ls, rs);
        struct entry_size a, b;
        if (entry_size(c, args[0].e, &a) && entry_size(c, args[1].e, &b)) {
            struct entry_size u = {true, a.kind, e_union(a.key, b.key), e_union(a.val, b.val)};
            set_entry(c, e, &u);
        }
        r.has_size = true;
        r.size = size;
        if (!strcmp(ov, "add_list"))
            r.cost = e_add(fixed(1), sum);
        else
            r.cost = e_add(e_factor(size, 0.1), sum);
        return r;
    }
    {
        static const char *const cmp[] = {
            "less_string", "greater_string", "less_equals_string", "greater_equals_string",
            "less_bytes",  "greater_bytes",  "less_equals_bytes",  "greater_equals_bytes",
            "equals",      "not_equals"};
        for (size_t i = 0; i < sizeof(cmp) / sizeof(cmp[0]); i++) {
            if (strcmp(ov, cmp[i]))
                continue;
            struct est l = args[0].has_size ? args[0].size : unknown;
            struct est rr = args[1].has_size ? args[1].size : unknown;
            uint64_t smallest = l.max < rr.max ? l.max : rr.max;
            struct est e2 = {smallest > 0 ? 1 : 0, smallest};
            r.cost = e_add(e_factor(e2, 0.1), sum);
            return r;
        }
    }
    r.cost = e_add(fixed(1), sum);
    return r;
}

static struct est cost_call(struct coster *c, struct cel_expr *e)
{
    struct est sum = {0, 0};
    int n = e->u.call.nargs;
    const struct cel_ref *ref = e->id > 0 && e->id < c->chk->n ? c->chk->refs[e->id] : NULL;

    if (!strcmp(e->u.call.fn, "dyn") && n == 1) {
        struct est ac = cost(c, e->u.call.args[0]);
        struct est s;
        struct entry_size es;
        if (compute_size(c, e->u.call.args[0], &s))
            set_size(c, e, &s);
        if (entry_size(c, e->u.call.args[0], &es))
            set_entry(c, e, &es);
        return e_add(fixed(1), ac);
    }
    struct est *costs = arena_alloc(c->a, (size_t)(n ? n : 1) * sizeof(*costs));
    struct node *nodes = arena_alloc(c->a, (size_t)(n ? n : 1) * sizeof(*nodes));
    if (!costs || !nodes) {
        c->oom = true;
        return sum;
    }
    for (int i = 0; i < n; i++) {
        costs[i] = cost(c, e->u.call.args[i]);
        nodes[i] = new_node(c, e->u.call.args[i]);
    }
    if (!ref || ref->nov == 0)
        return sum;
    struct node tnode;
    const struct node *target = NULL;
    if (e->u.call.target) {
        sum = e_add(sum, cost(c, e->u.call.target));
        tnode = new_node(c, e->u.call.target);
        target = &tnode;
    }
    struct est fn = {U64MAX, 0};
    bool has_result = false;
    struct est result = {0, 0};
    for (int k = 0; k < ref->nov; k++) {
        const char *ov = ref->ov[k]->id;
        struct call_est oc = function_cost(c, e, e->u.call.fn, ov, target, nodes, n, costs);
        fn = e_union(fn, oc.cost);
        if (oc.has_size) {
            result = has_result ? e_union(result, oc.size) : oc.size;
            has_result = true;
        }
        if ((!strcmp(ov, "index_list") || !strcmp(ov, "index_map")) && n > 0) {
            struct entry_size es;
            if (entry_size(c, e->u.call.args[0], &es)) {
                result = es.val;
                has_result = true;
            } else {
                has_result = false;
            }
            add_path(c, e, get_path(c, e->u.call.args[0]),
                     !strcmp(ov, "index_list") ? "@items" : "@values");
        }
        if (!has_result)
            has_result = compute_size(c, e, &result);
    }
    if (has_result)
        set_size(c, e, &result);
    return e_add(sum, fn);
}

static bool is_bind(const struct cel_expr *e)
{
    const struct cel_expr *r = e->u.comp.range, *cond = e->u.comp.cond;
    return r->kind == CEL_E_LIST && r->u.list.n == 0 && cond->kind == CEL_E_LIT &&
           cond->u.lit.kind == CEL_LIT_BOOL && !cond->u.lit.v.b &&
           strcmp(e->u.comp.accu, "__result__");
}

static struct est cost(struct coster *c, struct cel_expr *e)
{
    struct est sum = {0, 0};
    if (!e || c->oom)
        return sum;
    switch (e->kind) {
    case CEL_E_LIT:
        return sum;
    case CEL_E_IDENT: {
        struct local *l = peek_local(c, e->u.ident);
        if (l) {
            add_path(c, e, l->path, NULL);
        } else {
            /* the checker rewrote the identifier to the name it resolved (".device") */
            struct path none = {NULL, 0, 0};
            const struct cel_ref *r = e->id > 0 && e->id < c->chk->n ? c->chk->refs[e->id] : NULL;
            add_path(c, e, none, r && r->name ? r->name : e->u.ident);
        }
        return fixed(1);
    }
    case CEL_E_SELECT: {
        const struct cel_type *t;
        if (e->u.sel.test_only)
            return cost(c, e->u.sel.operand); /* PresenceTestHasCost(false) */
        sum = cost(c, e->u.sel.operand);
        t = type_of(c, e->u.sel.operand);
        if (t->kind == CK_MAP || t->kind == CK_STRUCT || t->kind == CK_TYPEPARAM)
            sum = e_add(sum, fixed(1));
        add_path(c, e, get_path(c, e->u.sel.operand), e->u.sel.field);
        return sum;
    }
    case CEL_E_CALL:
        return cost_call(c, e);
    case CEL_E_LIST: {
        struct est item = {U64MAX, 0};
        if (e->u.list.n == 0)
            item.min = 0;
        for (int i = 0; i < e->u.list.n; i++) {
            sum = e_add(sum, cost(c, e->u.list.elems[i]));
            item = e_union(item, size_or_unknown(c, e->u.list.elems[i]));
        }
        struct entry_size es = {true, CK_LIST, fixed(1), item};
        set_entry(c, e, &es);
        return e_add(sum, fixed(10));
    }
    case CEL_E_MAP: {
        struct est ks = {U64MAX, 0}, vs = {U64MAX, 0};
        if (e->u.map.n == 0)
            ks.min = vs.min = 0;
        for (int i = 0; i < e->u.map.n; i++) {
            sum = e_add(sum, cost(c, e->u.map.entries[i].key));
            sum = e_add(sum, cost(c, e->u.map.entries[i].value));
            ks = e_union(ks, size_or_unknown(c, e->u.map.entries[i].key));
            vs = e_union(vs, size_or_unknown(c, e->u.map.entries[i].value));
        }
        struct entry_size es = {true, CK_MAP, ks, vs};
        set_entry(c, e, &es);
        return e_add(sum, fixed(30));
    }
    case CEL_E_STRUCT:
        for (int i = 0; i < e->u.map.n; i++)
            sum = e_add(sum, cost(c, e->u.map.entries[i].value));
        return e_add(sum, fixed(40));
    case CEL_E_COMP: {
        if (is_bind(e)) {
            struct est s;
            struct entry_size es;
            sum = e_add(sum, cost(c, e->u.comp.range));
            sum = e_add(sum, cost(c, e->u.comp.init));
            push_local_var(c, e->u.comp.accu, e->u.comp.init);
            sum = e_add(sum, cost(c, e->u.comp.result));
            pop_local(c, e->u.comp.accu);
            if (compute_size(c, e->u.comp.result, &s))
                set_size(c, e, &s);
            if (entry_size(c, e->u.comp.result, &es))
                set_entry(c, e, &es);
            return sum;
        }
        sum = e_add(sum, cost(c, e->u.comp.range));
        sum = e_add(sum, cost(c, e->u.comp.init));
        push_local_var(c, e->u.comp.accu, e->u.comp.init);
        if (e->u.comp.iter2) {
            push_iter(c, e->u.comp.iter, e->u.comp.range, 0);
            push_iter(c, e->u.comp.iter2, e->u.comp.range, 1);
        } else {
            push_iter(c, e->u.comp.iter, e->u.comp.range, 2);
        }
        struct est loop = cost(c, e->u.comp.cond);
        struct est step = cost(c, e->u.comp.step);
        pop_local(c, e->u.comp.iter);
        if (e->u.comp.iter2)
            pop_local(c, e->u.comp.iter2);
        sum = e_add(sum, cost(c, e->u.comp.result));
        pop_local(c, e->u.comp.accu);
        struct est range = size_or_unknown(c, e->u.comp.range);
        sum = e_add(sum, e_mul(range, e_add(step, loop)));
        switch (e->u.comp.init->kind) {
        case CEL_E_LIT: {
            struct est s;
            if (compute_size(c, e->u.comp.init, &s))
                set_size(c, e, &s);
            break;
        }
        case CEL_E_LIST:
        case CEL_E_MAP: {
            struct entry_size es;
            set_size(c, e, &range);
            if (entry_size(c, e->u.comp.step, &es))
                set_entry(c, e, &es);
            break;
        }
        default:
            break;
        }
        return sum;
    }
    default:
        return sum;
    }
}

int cel_estimate_cost(struct arena *a, struct cel_expr *root, const struct cel_checked *chk,
                      uint64_t *min, uint64_t *max)
{
    struct coster c;
    struct est r;
    size_t n = chk->n > 0 ? (size_t)chk->n : 1;

    memset(&c, 0, sizeof(c));
    c.a = a;
    c.chk = chk;
    c.paths = arena_alloc(a, n * sizeof(*c.paths));
    c.has_size = arena_alloc(a, n * sizeof(*c.has_size));
    c.sizes = arena_alloc(a, n * sizeof(*c.sizes));
    c.entries = arena_alloc(a, n * sizeof(*c.entries));
    if (!c.paths || !c.has_size || !c.sizes || !c.entries)
        return -1;
    r = cost(&c, root);
    if (c.oom)
        return -1;
    *min = r.min;
    *max = r.max;
    return 0;
}
