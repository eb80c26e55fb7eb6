/* check.c - CEL's type checker, as cel-go's checker package does it.
 *
 * Walks the parsed tree once, giving each expression a type and each name or call a
 * reference. Overload resolution substitutes fresh type variables (_var0, _var1, ...) for an
 * overload's type parameters and unifies them through a substitution map that only grows when
 * an assignment succeeds; the result type of several matching overloads is dyn unless they
 * agree. Messages and their order are cel-go's. */
#include "cel/check.h"

#include "cel/strfmt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cel/lib.h"

const struct cel_type cel_t_dyn = {CK_DYN, "dyn", 0, {0}};
const struct cel_type cel_t_any = {CK_ANY, "google.protobuf.Any", 0, {0}};
const struct cel_type cel_t_bool = {CK_BOOL, "bool", 0, {0}};
const struct cel_type cel_t_bytes = {CK_BYTES, "bytes", 0, {0}};
const struct cel_type cel_t_double = {CK_DOUBLE, "double", 0, {0}};
const struct cel_type cel_t_duration = {CK_DURATION, "google.protobuf.Duration", 0, {0}};
const struct cel_type cel_t_error = {CK_ERROR, "error", 0, {0}};
const struct cel_type cel_t_int = {CK_INT, "int", 0, {0}};
const struct cel_type cel_t_null = {CK_NULL, "null_type", 0, {0}};
const struct cel_type cel_t_string = {CK_STRING, "string", 0, {0}};
const struct cel_type cel_t_timestamp = {CK_TIMESTAMP, "google.protobuf.Timestamp", 0, {0}};
const struct cel_type cel_t_type = {CK_TYPE, "type", 0, {0}};
const struct cel_type cel_t_uint = {CK_UINT, "uint", 0, {0}};
const struct cel_type cel_t_quantity = {CK_STRUCT, "kubernetes.Quantity", 0, {0}};
const struct cel_type cel_t_semver = {CK_STRUCT, "kubernetes.Semver", 0, {0}};
const struct cel_type cel_t_ip = {CK_OPAQUE, "net.IP", 0, {0}};
const struct cel_type cel_t_cidr = {CK_OPAQUE, "net.CIDR", 0, {0}};
const struct cel_type cel_t_url = {CK_STRUCT, "kubernetes.URL", 0, {0}};
const struct cel_type cel_t_format = {CK_STRUCT, "kubernetes.NamedFormat", 0, {0}};
const struct cel_type cel_t_list_dyn = {CK_LIST, "list", 1, {&cel_t_dyn}};
const struct cel_type cel_t_map_dyn = {CK_MAP, "map", 2, {&cel_t_dyn, &cel_t_dyn}};

/* ---- formatting ---- */

static void fmt_type(struct buf *b, const struct cel_type *t)
{
    switch (t ? t->kind : CK_UNSPEC) {
    case CK_ANY:
        buf_puts(b, "any");
        return;
    case CK_DURATION:
        buf_puts(b, "duration");
        return;
    case CK_ERROR:
        buf_puts(b, "!error!");
        return;
    case CK_NULL:
        buf_puts(b, "null");
        return;
    case CK_TIMESTAMP:
        buf_puts(b, "timestamp");
        return;
    case CK_TYPEPARAM:
        buf_puts(b, t->name);
        return;
    case CK_UNSPEC:
        return;
    default:
        break;
    }
    buf_puts(b, t->name);
    if (t->np) {
        buf_puts(b, "(");
        for (int i = 0; i < t->np; i++) {
            if (i)
                buf_puts(b, ", ");
            fmt_type(b, t->p[i]);
        }
        buf_puts(b, ")");
    }
}

const char *cel_type_format(const struct cel_type *t, char *out, size_t size)
{
    struct buf b = BUF_INIT(0);

    fmt_type(&b, t);
    snprintf(out, size, "%s", b.data ? b.data : "");
    buf_release(&b);
    return out;
}

static void str_type(struct buf *b, const struct cel_type *t)
{
    if (t->kind == CK_TYPEPARAM) {
        buf_printf(b, "<%s>", t->name);
        return;
    }
    buf_puts(b, t->name);
    if (t->np) {
        buf_puts(b, "(");
        for (int i = 0; i < t->np; i++) {
            if (i)
                buf_puts(b, ", ");
            str_type(b, t->p[i]);
        }
        buf_puts(b, ")");
    }
}

const char *cel_type_string(const struct cel_type *t, char *out, size_t size)
{
    struct buf b = BUF_INIT(0);

    str_type(&b, t);
    snprintf(out, size, "%s", b.data ? b.data : "");
    buf_release(&b);
    return out;
}

/* ---- type relations (cel-go common/types and checker/types.go) ---- */

static bool type_internal(const struct cel_type *a, const struct cel_type *b, bool check_names)
{
    if (a == b)
        return true;
    if (!a || !b)
        return false;
    if (a->kind != b->kind || a->np != b->np)
        return false;
    if ((check_names || a->kind != CK_TYPEPARAM) && strcmp(a->name, b->name))
        return false;
    for (int i = 0; i < a->np; i++)
        if (!type_internal(a->p[i], b->p[i], check_names))
            return false;
    return true;
}

bool cel_type_exact(const struct cel_type *a, const struct cel_type *b)
{
    return type_internal(a, b, true);
}

static bool is_dyn(const struct cel_type *t)
{
    return t->kind == CK_DYN || t->kind == CK_ANY;
}

static bool is_dyn_or_error(const struct cel_type *t)
{
    return is_dyn(t) || t->kind == CK_ERROR;
}

/* Type.IsAssignableType (default): dyn-ish (including type params) accepts anything. */
static bool type_assignable_default(const struct cel_type *t, const struct cel_type *from)
{
    if (t == from || t->kind == CK_DYN || t->kind == CK_ANY || t->kind == CK_TYPEPARAM)
        return true;
    if (t->kind != from->kind || strcmp(t->name, from->name) || t->np != from->np)
        return false;
    for (int i = 0; i < t->np; i++)
        if (!type_assignable_default(t->p[i], from->p[i]))
            return false;
    return true;
}

struct subst {
    const char *name;
    const struct cel_type *t;
};

struct mapping {
    struct subst *v;
    int n, alloc;
};

struct checker {
    struct arena *a;
    const struct cel_env *env;
    const struct cel_ids *ids;
    struct cel_diags *diags;
    struct cel_checked *out;
    struct mapping m;
    int tvars;
    /* comprehension scopes: a stack of (name, type), scope marks */
    struct {
        const char *name;
        const struct cel_type *t;
        int scope;
    } locals[512];
    int nlocals, scope;
    int depth;
    bool nomem;
};

static const struct cel_type *m_find(const struct mapping *m, const struct cel_type *t)
{
    if (t->kind != CK_TYPEPARAM)
        return NULL;
    for (int i = m->n - 1; i >= 0; i--)
        if (!strcmp(m->v[i].name, t->name))
            return m->v[i].t;
    return NULL;
}

static int m_add(struct mapping *m, const struct cel_type *from, const struct cel_type *to)
{
    for (int i = 0; i < m->n; i++)
        if (!strcmp(m->v[i].name, from->name)) {
            m->v[i].t = to;
            return 0;
        }
    if (m->n == m->alloc) {
        int na = m->alloc ? m->alloc * 2 : 16;
        struct subst *v = realloc(m->v, (size_t)na * sizeof(*v));
        if (!v)
            return -ENOMEM;
        m->v = v;
        m->alloc = na;
    }
    m->v[m->n].name = from->name;
    m->v[m->n].t = to;
    m->n++;
    return 0;
}

static int m_copy(struct mapping *dst, const struct mapping *src)
{
    if (dst->alloc < src->n) {
        struct subst *v = realloc(dst->v, (size_t)(src->n + 16) * sizeof(*v));
        if (!v)
            return -ENOMEM;
        dst->v = v;
        dst->alloc = src->n + 16;
    }
    if (src->n)
        memcpy(dst->v, src->v, (size_t)src->n * sizeof(*dst->v));
    dst->n = src->n;
    return 0;
}

static bool equal_or_less_specific(const struct cel_type *t1, const struct cel_type *t2)
{
    if (is_dyn(t1) || t1->kind == CK_TYPEPARAM)
        return true;
    if (is_dyn(t2) || t2->kind == CK_TYPEPARAM)
        return false;
    if (t1->kind != t2->kind)
        return false;
    switch (t1->kind) {
    case CK_OPAQUE:
        if (strcmp(t1->name, t2->name) || t1->np != t2->np)
            return false;
        for (int i = 0; i < t1->np; i++)
            if (!equal_or_less_specific(t1->p[i], t2->p[i]))
                return false;
        return true;
    case CK_LIST:
        return equal_or_less_specific(t1->p[0], t2->p[0]);
    case CK_MAP:
        return equal_or_less_specific(t1->p[0], t2->p[0]) &&
               equal_or_less_specific(t1->p[1], t2->p[1]);
    case CK_TYPE:
        return true;
    default:
        return cel_type_exact(t1, t2);
    }
}

static const struct cel_type *most_general(const struct cel_type *t1, const struct cel_type *t2)
{
    return equal_or_less_specific(t1, t2) ? t1 : t2;
}

static bool not_referenced_in(const struct mapping *m, const struct cel_type *t,
                              const struct cel_type *within)
{
    if (cel_type_exact(t, within))
        return false;
    switch (within->kind) {
    case CK_TYPEPARAM: {
        const struct cel_type *s = m_find(m, within);
        if (!s)
            return true;
        return not_referenced_in(m, t, s);
    }
    case CK_OPAQUE:
    case CK_LIST:
    case CK_MAP:
    case CK_TYPE:
        for (int i = 0; i < within->np; i++)
            if (!not_referenced_in(m, t, within->p[i]))
                return false;
        return true;
    default:
        return true;
    }
}

static bool assignable_internal(struct mapping *m, const struct cel_type *t1,
                                const struct cel_type *t2);

static bool valid_subst(struct mapping *m, const struct cel_type *t1, const struct cel_type *t2,
                        bool *has_sub)
{
    const struct cel_type *sub;

    *has_sub = false;
    if (t1->kind == t2->kind && cel_type_exact(t1, t2)) {
        *has_sub = true;
        return true;
    }
    if ((sub = m_find(m, t2))) {
        *has_sub = true;
        if (t1->kind == sub->kind && cel_type_exact(t1, sub))
            return true;
        if (assignable_internal(m, t1, sub)) {
            const struct cel_type *nt = most_general(t1, sub);
            if (not_referenced_in(m, t2, nt))
                m_add(m, t2, nt);
            return true;
        }
        return false;
    }
    if (not_referenced_in(m, t2, t1)) {
        m_add(m, t2, t1);
        return true;
    }
    return false;
}

static bool legacy_nullable(const struct cel_type *t)
{
    switch (t->kind) {
    case CK_OPAQUE:
    case CK_STRUCT:
    case CK_ANY:
    case CK_DURATION:
    case CK_TIMESTAMP:
        return true;
    default:
        return false;
    }
}

static bool assignable_null(const struct cel_type *t)
{
    return legacy_nullable(t) || type_assignable_default(t, &cel_t_null);
}

static bool assignable_internal(struct mapping *m, const struct cel_type *t1,
                                const struct cel_type *t2)
{
    if (t2->kind == CK_TYPEPARAM) {
        bool has_sub;
        bool valid = valid_subst(m, t1, t2, &has_sub);
        if (valid)
            return true;
        if (has_sub)
            return false;
    }
    if (t1->kind == CK_TYPEPARAM) {
        bool has_sub;
        return valid_subst(m, t2, t1, &has_sub);
    }
    if (is_dyn_or_error(t1) || is_dyn_or_error(t2))
        return true;
    if (t1->kind == CK_NULL)
        return assignable_null(t2);
    if (t2->kind == CK_NULL)
        return assignable_null(t1);
    switch (t1->kind) {
    case CK_BOOL:
    case CK_BYTES:
    case CK_DOUBLE:
    case CK_INT:
    case CK_STRING:
    case CK_UINT:
    case CK_ANY:
    case CK_DURATION:
    case CK_TIMESTAMP:
    case CK_STRUCT:
        return type_assignable_default(t2, t1);
    case CK_TYPE:
        return t2->kind == CK_TYPE;
    case CK_OPAQUE:
    case CK_LIST:
    case CK_MAP:
        if (t1->kind != t2->kind || strcmp(t1->name, t2->name) || t1->np != t2->np)
            return false;
        for (int i = 0; i < t1->np; i++)
            if (!assignable_internal(m, t1->p[i], t2->p[i]))
                return false;
        return true;
    default:
        return false;
    }
}

/* isAssignable: tries on a copy of the mapping and keeps it on success. */
static bool c_assignable(struct checker *c, const struct cel_type *t1, const struct cel_type *t2)
{
    struct mapping cp = {0};
    bool ok;

    if (m_copy(&cp, &c->m) < 0) {
        c->nomem = true;
        return false;
    }
    ok = assignable_internal(&cp, t1, t2);
    if (ok) {
        free(c->m.v);
        c->m = cp;
    } else {
        free(cp.v);
    }
    return ok;
}

static bool c_assignable_list(struct checker *c, const struct cel_type *const *l1,
                              const struct cel_type *const *l2, int n1, int n2)
{
    struct mapping cp = {0};
    bool ok = true;

    if (n1 != n2)
        return false;
    if (m_copy(&cp, &c->m) < 0) {
        c->nomem = true;
        return false;
    }
    for (int i = 0; i < n1 && ok; i++)
        ok = assignable_internal(&cp, l1[i], l2[i]);
    if (ok) {
        free(c->m.v);
        c->m = cp;
    } else {
        free(cp.v);
    }
    return ok;
}

static const struct cel_type *new_type(struct checker *c, enum cel_kind k, const char *name, int np,
                                       const struct cel_type *p0, const struct cel_type *p1)
{
    struct cel_type *t = arena_alloc(c->a, sizeof(*t));

    if (!t) {
        c->nomem = true;
        return &cel_t_error;
    }
    t->kind = k;
    t->name = name;
    t->np = np;
    t->p[0] = p0;
    t->p[1] = p1;
    return t;
}

static const struct cel_type *list_of(struct checker *c, const struct cel_type *e)
{
    return new_type(c, CK_LIST, "list", 1, e, NULL);
}

static const struct cel_type *map_of(struct checker *c, const struct cel_type *k,
                                     const struct cel_type *v)
{
    return new_type(c, CK_MAP, "map", 2, k, v);
}

static const struct cel_type *optional_of(struct checker *c, const struct cel_type *e)
{
    return new_type(c, CK_OPAQUE, "optional_type", 1, e, NULL);
}

static const struct cel_type *substitute(struct checker *c, const struct mapping *m,
                                         const struct cel_type *t, bool to_dyn)
{
    const struct cel_type *s = m_find(m, t);

    if (s)
        return substitute(c, m, s, to_dyn);
    if (to_dyn && t->kind == CK_TYPEPARAM)
        return &cel_t_dyn;
    switch (t->kind) {
    case CK_OPAQUE:
    case CK_LIST:
    case CK_MAP:
    case CK_TYPE: {
        const struct cel_type *p0 = NULL, *p1 = NULL;
        if (t->np == 0)
            return t;
        p0 = substitute(c, m, t->p[0], to_dyn);
        if (t->np > 1)
            p1 = substitute(c, m, t->p[1], to_dyn);
        if (p0 == t->p[0] && (t->np < 2 || p1 == t->p[1]))
            return t;
        return new_type(c, t->kind, t->name, t->np, p0, p1);
    }
    default:
        return t;
    }
}

static const struct cel_type *new_type_var(struct checker *c)
{
    char name[24];
    char *s;

    snprintf(name, sizeof(name), "_var%d", c->tvars++);
    s = arena_strdup(c->a, name);
    if (!s) {
        c->nomem = true;
        return &cel_t_dyn;
    }
    return new_type(c, CK_TYPEPARAM, s, 0, NULL, NULL);
}

/* ---- errors ---- */

static int32_t loc(struct checker *c, int32_t id)
{
    return cel_ids_offset(c->ids, id);
}

static void err_type_mismatch(struct checker *c, int32_t id, const struct cel_type *exp,
                              const struct cel_type *act)
{
    char a[256], b[256];
    cel_diags_add(c->diags, id, loc(c, id), "expected type '%s' but found '%s'",
                  cel_type_format(exp, a, sizeof(a)), cel_type_format(act, b, sizeof(b)));
}

static void err_undeclared(struct checker *c, int32_t id, const char *name)
{
    cel_diags_add(c->diags, id, loc(c, id), "undeclared reference to '%s' (in container '')", name);
}

/* ---- results ---- */

static void set_type(struct checker *c, struct cel_expr *e, const struct cel_type *t)
{
    if (e->id > 0 && e->id < c->out->n)
        c->out->types[e->id] = t;
}

static const struct cel_type *get_type(struct checker *c, const struct cel_expr *e)
{
    if (e->id > 0 && e->id < c->out->n && c->out->types[e->id])
        return c->out->types[e->id];
    return &cel_t_error;
}

static struct cel_ref *new_ref(struct checker *c, struct cel_expr *e)
{
    struct cel_ref *r;

    if (e->id <= 0 || e->id >= c->out->n)
        return NULL;
    r = arena_alloc(c->a, sizeof(*r));
    if (!r) {
        c->nomem = true;
        return NULL;
    }
    c->out->refs[e->id] = r;
    return r;
}

/* ---- environment lookups ---- */

const struct cel_function *cel_env_function(const struct cel_env *env, const char *name)
{
    if (name[0] == '.')
        name++;
    for (int i = 0; i < env->nfns; i++)
        if (!strcmp(env->fns[i].name, name))
            return &env->fns[i];
    return NULL;
}

static const struct cel_type *find_local(struct checker *c, const char *name)
{
    for (int i = c->nlocals - 1; i >= 0; i--)
        if (!strcmp(c->locals[i].name, name))
            return c->locals[i].t;
    return NULL;
}

/* The types identifiers name, as the base environment declares and provides them. */
static const struct cel_type *type_ident(struct checker *c, const char *name)
{
    static const struct {
        const char *name;
        const struct cel_type *t;
    } simple[] = {
        {"bool", &cel_t_bool},     {"bytes", &cel_t_bytes},
        {"double", &cel_t_double}, {"google.protobuf.Duration", &cel_t_duration},
        {"int", &cel_t_int},       {"null_type", &cel_t_null},
        {"string", &cel_t_string}, {"google.protobuf.Timestamp", &cel_t_timestamp},
        {"type", &cel_t_type},     {"uint", &cel_t_uint},
        {"net.IP", &cel_t_ip},     {"net.CIDR", &cel_t_cidr},
    };
    const struct cel_type *t = NULL;

    for (size_t i = 0; i < sizeof(simple) / sizeof(simple[0]); i++)
        if (!strcmp(simple[i].name, name))
            t = simple[i].t;
    if (!t && !strcmp(name, "list"))
        t = list_of(c, &cel_t_dyn);
    if (!t && !strcmp(name, "map"))
        t = map_of(c, &cel_t_dyn, &cel_t_dyn);
    if (!t && !strcmp(name, "optional_type"))
        t = optional_of(c, &cel_t_dyn);
    if (!t)
        return NULL;
    return new_type(c, CK_TYPE, "type", 1, t, NULL);
}

/* resolveSimpleIdent / lookupGlobalIdent */
static bool resolve_ident(struct checker *c, const char *name, bool allow_local,
                          const struct cel_type **type, const char **resolved,
                          const struct cel_type **type_val)
{
    const struct cel_type *lt = NULL;
    const char *g = name;

    *type_val = NULL;
    if (allow_local && name[0] != '.' && (lt = find_local(c, name))) {
        *type = lt;
        *resolved = name;
        return true;
    }
    if (g[0] == '.')
        g++;
    if (!strcmp(g, c->env->var_name)) {
        *type = c->env->var_type;
        *resolved = c->env->var_name;
        return true;
    }
    for (int i = 0; i < c->env->nextra; i++)
        if (!strcmp(g, c->env->extra[i].name)) {
            *type = c->env->extra[i].type;
            *resolved = c->env->extra[i].name;
            return true;
        }
    if ((lt = type_ident(c, g))) {
        *type = lt;
        *resolved = g;
        *type_val = lt->p[0];
        return true;
    }
    /* the standard environment declares duration and timestamp as variables of type type
     * (no value: a program that reads one cannot be built) */
    if (!strcmp(g, "duration") || !strcmp(g, "timestamp")) {
        lt =
            new_type(c, CK_TYPE, "type", 1, g[0] == 'd' ? &cel_t_duration : &cel_t_timestamp, NULL);
        if (!lt)
            return false;
        *type = lt;
        *resolved = g;
        return true;
    }
    return false;
}

/* ---- the walk ---- */

static void check(struct checker *c, struct cel_expr *e);

static void check_ident(struct checker *c, struct cel_expr *e)
{
    const struct cel_type *t, *tv;
    const char *name;

    if (resolve_ident(c, e->u.ident, true, &t, &name, &tv)) {
        struct cel_ref *r = new_ref(c, e);
        set_type(c, e, t);
        if (r) {
            r->name = name;
            r->type_val = tv;
        }
        return;
    }
    set_type(c, e, &cel_t_error);
    err_undeclared(c, e->id, e->u.ident);
}

/* A select chain on an identifier that names a declared qualified identifier
 * (google.protobuf.Duration, net.IP): returns the dotted name, else NULL. */
static const char *qualified_name(struct checker *c, const struct cel_expr *e)
{
    struct buf b = BUF_INIT(0);
    const struct cel_expr *parts[64];
    int n = 0;
    char *s;

    while (e->kind == CEL_E_SELECT && !e->u.sel.test_only && n < 63) {
        parts[n++] = e;
        e = e->u.sel.operand;
    }
    if (e->kind != CEL_E_IDENT || n == 0)
        return NULL;
    buf_puts(&b, e->u.ident);
    for (int i = n - 1; i >= 0; i--) {
        buf_puts(&b, ".");
        buf_puts(&b, parts[i]->u.sel.field);
    }
    s = arena_strdup(c->a, b.data ? b.data : "");
    buf_release(&b);
    return s;
}

static const struct cel_type *check_select_field(struct checker *c, struct cel_expr *e,
                                                 struct cel_expr *operand, const char *field,
                                                 bool optional)
{
    const struct cel_type *ot, *target, *result = &cel_t_error;
    bool is_opt = false;

    check(c, operand);
    ot = substitute(c, &c->m, get_type(c, operand), false);
    target = ot;
    if (ot->kind == CK_OPAQUE && !strcmp(ot->name, "optional_type")) {
        target = ot->p[0];
        is_opt = true;
    }
    switch (target->kind) {
    case CK_MAP:
        result = target->p[1];
        break;
    case CK_STRUCT:
        if (!strcmp(target->name, c->env->var_type->name)) {
            bool found = false;
            for (int i = 0; i < c->env->nfields; i++)
                if (!strcmp(c->env->fields[i].name, field)) {
                    result = c->env->fields[i].type;
                    found = true;
                }
            if (!found)
                cel_diags_add(c->diags, e->id, loc(c, e->id), "undefined field '%s'", field);
        } else {
            cel_diags_add(c->diags, e->id, loc(c, e->id), "unexpected failed resolution of '%s'",
                          target->name);
        }
        break;
    case CK_TYPEPARAM:
        c_assignable(c, &cel_t_dyn, target);
        result = &cel_t_dyn;
        break;
    default:
        if (!is_dyn_or_error(target)) {
            char buf[256];
            cel_diags_add(c->diags, e->id, loc(c, e->id),
                          "type '%s' does not support field selection",
                          cel_type_format(target, buf, sizeof(buf)));
        }
        result = &cel_t_dyn;
        break;
    }
    if (is_opt || optional)
        return optional_of(c, result);
    return result;
}

static void check_select(struct checker *c, struct cel_expr *e)
{
    const struct cel_type *rt;

    if (!e->u.sel.test_only) {
        /* resolveQualifiedIdent: not when the first name is a comprehension variable */
        const struct cel_expr *root = e;
        while (root->kind == CEL_E_SELECT && !root->u.sel.test_only)
            root = root->u.sel.operand;
        if (root->kind == CEL_E_IDENT &&
            !(root->u.ident[0] != '.' && find_local(c, root->u.ident))) {
            const char *q = qualified_name(c, e);
            const struct cel_type *t, *tv;
            const char *name;
            if (q && resolve_ident(c, q, false, &t, &name, &tv)) {
                struct cel_ref *r = new_ref(c, e);
                set_type(c, e, t);
                if (r) {
                    r->name = name;
                    r->type_val = tv;
                }
                e->kind = CEL_E_IDENT;
                e->u.ident = name;
                return;
            }
        }
    }
    rt = check_select_field(c, e, e->u.sel.operand, e->u.sel.field, false);
    if (e->u.sel.test_only)
        rt = &cel_t_bool;
    set_type(c, e, substitute(c, &c->m, rt, false));
}

static void check_opt_select(struct checker *c, struct cel_expr *e)
{
    struct cel_expr *operand, *field;
    const struct cel_type *rt;
    struct cel_ref *r;

    if (e->u.call.nargs != 2 || e->u.call.target) {
        cel_diags_add(c->diags, e->id, loc(c, e->id),
                      "unsupported optional field selection: incorrect signature.%s argument "
                      "count: %d",
                      e->u.call.target ? " member call with" : "", e->u.call.nargs);
        return;
    }
    operand = e->u.call.args[0];
    field = e->u.call.args[1];
    if (field->kind != CEL_E_LIT || field->u.lit.kind != CEL_LIT_STRING) {
        cel_diags_add(c->diags, field->id, loc(c, field->id),
                      "unsupported optional field selection: %s", "<expr>");
        return;
    }
    rt = check_select_field(c, e, operand, field->u.lit.v.s.p, true);
    set_type(c, e, substitute(c, &c->m, rt, false));
    r = new_ref(c, e);
    if (r) {
        static const struct cel_overload sel = {.id = "select_optional_field"};
        r->nov = 1;
        r->ov[0] = &sel;
    }
}

/* Instantiates an overload's declared types with fresh type variables. */
static const struct cel_type *instantiate(struct checker *c, const struct cel_type *t,
                                          const struct mapping *fresh)
{
    return substitute(c, fresh, t, false);
}

static void collect_params(const struct cel_type *t, const char **names, int *n)
{
    if (t->kind == CK_TYPEPARAM) {
        for (int i = 0; i < *n; i++)
            if (!strcmp(names[i], t->name))
                return;
        if (*n < 8)
            names[(*n)++] = t->name;
        return;
    }
    for (int i = 0; i < t->np; i++)
        collect_params(t->p[i], names, n);
}

static void no_matching_overload(struct checker *c, struct cel_expr *e, const char *fn,
                                 const struct cel_type **args, int nargs, bool member)
{
    struct buf b = BUF_INIT(0);
    int i = 0;

    if (member) {
        fmt_type(&b, substitute(c, &c->m, args[0], true));
        buf_puts(&b, ".");
        i = 1;
    }
    buf_puts(&b, "(");
    for (int k = i; k < nargs; k++) {
        if (k > i)
            buf_puts(&b, ", ");
        fmt_type(&b, substitute(c, &c->m, args[k], true));
    }
    buf_puts(&b, ")");
    cel_diags_add(c->diags, e->id, loc(c, e->id),
                  "found no matching overload for '%s' applied to '%s'", fn, b.data ? b.data : "");
    buf_release(&b);
}

static void resolve_overload(struct checker *c, struct cel_expr *e, const struct cel_function *fn,
                             struct cel_expr *target, struct cel_expr **args, int nargs)
{
    const struct cel_type *argt[8];
    int n = 0;
    const struct cel_type *result = NULL;
    struct cel_ref *ref = NULL;

    if (target)
        argt[n++] = get_type(c, target);
    for (int i = 0; i < nargs && n < 8; i++)
        argt[n++] = get_type(c, args[i]);
    if (nargs + (target ? 1 : 0) > 8) {
        no_matching_overload(c, e, fn->name, argt, n, target != NULL);
        set_type(c, e, &cel_t_error);
        return;
    }
    for (int k = 0; k < fn->n; k++) {
        const struct cel_overload *o = &fn->ov[k];
        const struct cel_type *inst[5];
        const char *params[8];
        int np = 0;
        struct mapping fresh = {0};

        if ((target == NULL) == o->member)
            continue;
        if (!strcmp(fn->name, "_&&_") || !strcmp(fn->name, "_||_")) {
            bool bad = false;
            ref = new_ref(c, e);
            if (ref) {
                ref->nov = 1;
                ref->ov[0] = o;
            }
            for (int i = 0; i < n; i++) {
                if (!c_assignable(c, argt[i], &cel_t_bool)) {
                    err_type_mismatch(c, args[i]->id, &cel_t_bool, argt[i]);
                    bad = true;
                }
            }
            set_type(c, e, bad ? &cel_t_error : &cel_t_bool);
            if (bad && ref)
                c->out->refs[e->id] = NULL;
            return;
        }
        collect_params(o->result, params, &np);
        for (int i = 0; i < o->nargs; i++)
            collect_params(o->args[i], params, &np);
        inst[0] = o->result;
        for (int i = 0; i < o->nargs; i++)
            inst[i + 1] = o->args[i];
        if (np) {
            for (int i = 0; i < np; i++) {
                struct cel_type pt = {CK_TYPEPARAM, params[i], 0, {0}};
                if (m_add(&fresh, &pt, new_type_var(c)) < 0)
                    c->nomem = true;
                /* m_add keeps the name pointer, which lives in the static table */
            }
            for (int i = 0; i <= o->nargs; i++)
                inst[i] = instantiate(c, inst[i], &fresh);
            free(fresh.v);
        }
        if (c_assignable_list(c, argt, inst + 1, n, o->nargs)) {
            const struct cel_type *rt;
            if (!ref) {
                ref = new_ref(c, e);
                if (ref)
                    ref->nov = 0;
            }
            if (ref && ref->nov < (int)(sizeof(ref->ov) / sizeof(ref->ov[0])))
                ref->ov[ref->nov++] = o;
            rt = substitute(c, &c->m, inst[0], false);
            if (!result)
                result = rt;
            else if (!is_dyn(result) && !cel_type_exact(rt, result))
                result = &cel_t_dyn;
        }
    }
    if (!result) {
        no_matching_overload(c, e, fn->name, argt, n, target != NULL);
        if (ref)
            c->out->refs[e->id] = NULL;
        set_type(c, e, &cel_t_error);
        return;
    }
    set_type(c, e, result);
}

static void check_call(struct checker *c, struct cel_expr *e)
{
    const char *fname = e->u.call.fn;
    const struct cel_function *fn;
    struct cel_expr *target = e->u.call.target;

    if (!strcmp(fname, "_?._")) {
        check_opt_select(c, e);
        return;
    }
    for (int i = 0; i < e->u.call.nargs; i++)
        check(c, e->u.call.args[i]);
    if (!target) {
        fn = cel_env_function(c->env, fname);
        if (!fn) {
            err_undeclared(c, e->id, fname);
            set_type(c, e, &cel_t_error);
            return;
        }
        e->u.call.fn = fn->name;
        resolve_overload(c, e, fn, NULL, e->u.call.args, e->u.call.nargs);
        return;
    }
    /* a qualified function name (sets.contains, optional.of, lists.range, ...) */
    {
        const struct cel_expr *t = target;
        bool qual = true;
        while (t->kind == CEL_E_SELECT) {
            if (t->u.sel.test_only) {
                qual = false;
                break;
            }
            t = t->u.sel.operand;
        }
        if (qual && t->kind == CEL_E_IDENT) {
            const char *q =
                target->kind == CEL_E_IDENT ? target->u.ident : qualified_name(c, target);
            if (q) {
                size_t fl = strlen(q) + strlen(fname) + 2;
                char *full = arena_alloc(c->a, fl);
                if (full) {
                    snprintf(full, fl, "%s.%s", q, fname);
                    fn = cel_env_function(c->env, full);
                    if (fn) {
                        e->u.call.target = NULL;
                        e->u.call.fn = fn->name;
                        resolve_overload(c, e, fn, NULL, e->u.call.args, e->u.call.nargs);
                        return;
                    }
                }
            }
        }
    }
    check(c, target);
    fn = cel_env_function(c->env, fname);
    if (fn) {
        resolve_overload(c, e, fn, target, e->u.call.args, e->u.call.nargs);
        return;
    }
    set_type(c, e, &cel_t_error);
    err_undeclared(c, e->id, fname);
}

static const struct cel_type *join_types(struct checker *c, struct cel_expr *e,
                                         const struct cel_type *prev, const struct cel_type *cur)
{
    if (!prev)
        return cur;
    if (c_assignable(c, prev, cur))
        return most_general(prev, cur);
    if (!c->env->homogeneous_literals)
        return &cel_t_dyn;
    err_type_mismatch(c, e->id, prev, cur);
    return &cel_t_error;
}

static bool is_optional_type(const struct cel_type *t)
{
    return t->kind == CK_OPAQUE && !strcmp(t->name, "optional_type");
}

static void check_list(struct checker *c, struct cel_expr *e)
{
    const struct cel_type *elems = NULL;

    for (int i = 0; i < e->u.list.n; i++) {
        struct cel_expr *el = e->u.list.elems[i];
        const struct cel_type *t;
        bool opt = false;
        check(c, el);
        t = get_type(c, el);
        for (int k = 0; k < e->u.list.nopt; k++)
            if (e->u.list.optional[k] == i)
                opt = true;
        if (opt) {
            if (is_optional_type(t)) {
                t = t->p[0];
            } else if (!is_dyn(t)) {
                err_type_mismatch(c, el->id, optional_of(c, t), t);
            }
        }
        elems = join_types(c, el, elems, t);
    }
    if (!elems)
        elems = new_type_var(c);
    set_type(c, e, list_of(c, elems));
}

static void check_map(struct checker *c, struct cel_expr *e)
{
    const struct cel_type *kt = NULL, *vt = NULL;

    for (int i = 0; i < e->u.map.n; i++) {
        struct cel_entry *en = &e->u.map.entries[i];
        const struct cel_type *t;
        check(c, en->key);
        kt = join_types(c, en->key, kt, get_type(c, en->key));
        check(c, en->value);
        t = get_type(c, en->value);
        if (en->optional) {
            if (is_optional_type(t))
                t = t->p[0];
            else if (!is_dyn(t))
                err_type_mismatch(c, en->value->id, optional_of(c, t), t);
        }
        vt = join_types(c, en->value, vt, t);
    }
    if (!kt) {
        kt = new_type_var(c);
        vt = new_type_var(c);
    }
    set_type(c, e, map_of(c, kt, vt));
}

static void check_struct(struct checker *c, struct cel_expr *e)
{
    /* Message construction: the environment declares no message type of its own; cel-go
     * knows protobuf's well-known types, which this evaluator does not implement. */
    const char *tn = e->u.map.type_name;
    if (tn[0] == '.')
        tn++;
    if (!strncmp(tn, "google.protobuf.", 16))
        cel_diags_add(c->diags, e->id, cel_ids_offset(c->ids, e->id),
                      "unsupported by this evaluator: creating the protobuf message %s", tn);
    else
        err_undeclared(c, e->id, e->u.map.type_name);
    set_type(c, e, &cel_t_error);
    for (int i = 0; i < e->u.map.n; i++)
        check(c, e->u.map.entries[i].value);
}

static int push_local(struct checker *c, const char *name, const struct cel_type *t)
{
    if (c->nlocals >= (int)(sizeof(c->locals) / sizeof(c->locals[0]))) {
        c->nomem = true;
        return -1;
    }
    c->locals[c->nlocals].name = name;
    c->locals[c->nlocals].t = t;
    c->locals[c->nlocals].scope = c->scope;
    c->nlocals++;
    return 0;
}

static void pop_scope(struct checker *c)
{
    while (c->nlocals > 0 && c->locals[c->nlocals - 1].scope == c->scope)
        c->nlocals--;
    c->scope--;
}

static void check_comp(struct checker *c, struct cel_expr *e)
{
    const struct cel_type *rt, *at, *vt, *v2t = NULL;
    bool two = e->u.comp.iter2 != NULL;

    check(c, e->u.comp.range);
    check(c, e->u.comp.init);
    rt = substitute(c, &c->m, get_type(c, e->u.comp.range), false);
    at = get_type(c, e->u.comp.init);
    c->scope++;
    push_local(c, e->u.comp.accu, at);
    switch (rt->kind) {
    case CK_LIST:
        vt = rt->p[0];
        if (two) {
            v2t = vt;
            vt = &cel_t_int;
        }
        break;
    case CK_MAP:
        vt = rt->p[0];
        if (two)
            v2t = rt->p[1];
        break;
    case CK_DYN:
    case CK_ERROR:
    case CK_TYPEPARAM:
        c_assignable(c, &cel_t_dyn, rt);
        vt = &cel_t_dyn;
        if (two)
            v2t = &cel_t_dyn;
        break;
    default: {
        char buf[256];
        cel_diags_add(c->diags, e->u.comp.range->id, loc(c, e->u.comp.range->id),
                      "expression of type '%s' cannot be range of a comprehension (must be list, "
                      "map, or dynamic)",
                      cel_type_format(rt, buf, sizeof(buf)));
        vt = &cel_t_error;
        if (two)
            v2t = &cel_t_error;
        break;
    }
    }
    c->scope++;
    push_local(c, e->u.comp.iter, vt);
    if (two)
        push_local(c, e->u.comp.iter2, v2t);
    check(c, e->u.comp.cond);
    if (!c_assignable(c, &cel_t_bool, get_type(c, e->u.comp.cond)))
        err_type_mismatch(c, e->u.comp.cond->id, &cel_t_bool, get_type(c, e->u.comp.cond));
    check(c, e->u.comp.step);
    if (!c_assignable(c, at, get_type(c, e->u.comp.step)))
        err_type_mismatch(c, e->u.comp.step->id, at, get_type(c, e->u.comp.step));
    pop_scope(c);
    check(c, e->u.comp.result);
    pop_scope(c);
    set_type(c, e, substitute(c, &c->m, get_type(c, e->u.comp.result), false));
}

static void check(struct checker *c, struct cel_expr *e)
{
    if (!e || c->nomem)
        return;
    if (++c->depth > 4000) {
        c->nomem = true;
        c->depth--;
        return;
    }
    switch (e->kind) {
    case CEL_E_LIT:
        switch (e->u.lit.kind) {
        case CEL_LIT_NULL:
            set_type(c, e, &cel_t_null);
            break;
        case CEL_LIT_BOOL:
            set_type(c, e, &cel_t_bool);
            break;
        case CEL_LIT_INT:
            set_type(c, e, &cel_t_int);
            break;
        case CEL_LIT_UINT:
            set_type(c, e, &cel_t_uint);
            break;
        case CEL_LIT_DOUBLE:
            set_type(c, e, &cel_t_double);
            break;
        case CEL_LIT_STRING:
            set_type(c, e, &cel_t_string);
            break;
        case CEL_LIT_BYTES:
            set_type(c, e, &cel_t_bytes);
            break;
        }
        break;
    case CEL_E_IDENT:
        check_ident(c, e);
        break;
    case CEL_E_SELECT:
        check_select(c, e);
        break;
    case CEL_E_CALL:
        check_call(c, e);
        break;
    case CEL_E_LIST:
        check_list(c, e);
        break;
    case CEL_E_MAP:
        check_map(c, e);
        break;
    case CEL_E_STRUCT:
        check_struct(c, e);
        break;
    case CEL_E_COMP:
        check_comp(c, e);
        break;
    default:
        cel_diags_add(c->diags, e->id, loc(c, e->id), "unexpected unspecified type: Expr");
        break;
    }
    c->depth--;
}

int cel_check(struct arena *a, const struct cel_env *env, struct cel_expr *root,
              const struct cel_ids *ids, struct cel_diags *diags, struct cel_checked *out)
{
    struct checker c = {.a = a, .env = env, .ids = ids, .diags = diags, .out = out};

    out->n = ids->n;
    out->types = arena_alloc(a, (size_t)ids->n * sizeof(*out->types));
    out->refs = arena_alloc(a, (size_t)ids->n * sizeof(*out->refs));
    if (!out->types || !out->refs)
        return -ENOMEM;
    check(&c, root);
    if (!c.nomem) {
        for (int32_t i = 0; i < out->n; i++)
            if (out->types[i])
                out->types[i] = substitute(&c, &c.m, out->types[i], true);
    }
    free(c.m.v);
    if (c.nomem)
        return -ENOMEM;
    out->result = get_type(&c, root);
    return 0;
}

/* ---- AST validators (cel.ASTValidators of the base environment) ---- */

struct validator {
    const struct cel_env *env;
    const struct cel_ids *ids;
    const struct cel_checked *chk;
    struct cel_diags *diags;
    int pass;   /* 0 duration, 1 timestamp, 2 regex, 3 homogeneous lists, 4 maps, 5 format */
    int exempt; /* inside a call of "format" (HomogeneousAggregateLiteralExemptFunctions) */
};

static const struct cel_type *vtype(struct validator *v, const struct cel_expr *e)
{
    if (e->id > 0 && e->id < v->chk->n && v->chk->types[e->id])
        return v->chk->types[e->id];
    return &cel_t_dyn;
}

static void vmismatch(struct validator *v, int32_t id, const struct cel_type *a,
                      const struct cel_type *b)
{
    char x[256], y[256];
    cel_diags_add(v->diags, id, cel_ids_offset(v->ids, id), "expected type '%s' but found '%s'",
                  cel_type_format(a, x, sizeof(x)), cel_type_format(b, y, sizeof(y)));
}

/* ext's stringFormatValidator: a constant format string applied to a list literal is
 * checked against the types of the list's elements */
struct fmtcheck {
    struct validator *v;
    struct cel_expr *list;
    int requested;
};

static bool fc_arg(void *ctx, int64_t index, struct buf *err)
{
    struct fmtcheck *f = ctx;
    (void)index;
    (void)err;
    f->requested++;
    return true;
}

static int64_t fc_size(void *ctx)
{
    return ((struct fmtcheck *)ctx)->list->u.list.n;
}

/* verifyTypeOneOf: dyn, or a kind in kinds */
static bool fc_kind_ok(const struct cel_type *t, const enum cel_kind *kinds, int n)
{
    if (t->kind == CK_DYN)
        return true;
    for (int i = 0; i < n; i++)
        if (t->kind == kinds[i])
            return true;
    return false;
}

/* verifyString: returns the id of the offending expression, or 0 */
static int32_t fc_verify_string(struct validator *v, struct cel_expr *e)
{
    static const enum cel_kind ok[] = {CK_LIST,   CK_MAP,      CK_INT,    CK_UINT,
                                       CK_DOUBLE, CK_BOOL,     CK_STRING, CK_TIMESTAMP,
                                       CK_BYTES,  CK_DURATION, CK_TYPE,   CK_NULL};
    if (!fc_kind_ok(vtype(v, e), ok, (int)(sizeof(ok) / sizeof(ok[0]))))
        return e->id;
    if (e->kind == CEL_E_LIST) {
        for (int i = 0; i < e->u.list.n; i++) {
            int32_t bad = fc_verify_string(v, e->u.list.elems[i]);
            if (bad)
                return bad;
        }
    } else if (e->kind == CEL_E_MAP) {
        for (int i = 0; i < e->u.map.n; i++) {
            int32_t bad = fc_verify_string(v, e->u.map.entries[i].key);
            if (!bad)
                bad = fc_verify_string(v, e->u.map.entries[i].value);
            if (bad)
                return bad;
        }
    }
    return 0;
}

static const char *fc_type_name(struct validator *v, int32_t id)
{
    const struct cel_type *t = &cel_t_dyn;
    if (id > 0 && id < v->chk->n && v->chk->types[id])
        t = v->chk->types[id];
    return t->name ? t->name : "dyn";
}

static bool fc_clause(void *ctx, int64_t index, char verb, int prec, struct buf *out,
                      struct buf *err, int64_t *err_id)
{
    struct fmtcheck *f = ctx;
    struct cel_expr *arg = f->list->u.list.elems[index];
    const struct cel_type *t = vtype(f->v, arg);
    int32_t bad = 0;
    const char *msg = NULL;
    (void)prec;
    (void)out;

    switch (verb) {
    case 's':
        bad = fc_verify_string(f->v, arg);
        msg = "string clause can only be used on strings, bools, bytes, ints, doubles, maps, "
              "lists, types, durations, and timestamps, was given ";
        break;
    case 'd': {
        static const enum cel_kind k[] = {CK_INT, CK_UINT};
        bad = fc_kind_ok(t, k, 2) ? 0 : arg->id;
        msg = "decimal clause can only be used on integers, was given ";
        break;
    }
    case 'f':
    case 'e': {
        static const enum cel_kind k[] = {CK_DOUBLE, CK_STRING};
        bad = fc_kind_ok(t, k, 2) ? 0 : arg->id;
        msg = verb == 'f' ? "fixed-point clause can only be used on doubles, was given "
                          : "scientific clause can only be used on doubles, was given ";
        break;
    }
    case 'b': {
        static const enum cel_kind k[] = {CK_INT, CK_UINT, CK_BOOL};
        bad = fc_kind_ok(t, k, 3) ? 0 : arg->id;
        msg = "only integers and bools can be formatted as binary, was given ";
        break;
    }
    case 'x':
    case 'X': {
        static const enum cel_kind k[] = {CK_INT, CK_UINT, CK_STRING, CK_BYTES};
        bad = fc_kind_ok(t, k, 4) ? 0 : arg->id;
        msg = "only integers, byte buffers, and strings can be formatted as hex, was given ";
        break;
    }
    case 'o': {
        static const enum cel_kind k[] = {CK_INT, CK_UINT};
        bad = fc_kind_ok(t, k, 2) ? 0 : arg->id;
        msg = "octal clause can only be used on integers, was given ";
        break;
    }
    }
    if (!bad)
        return true;
    buf_puts(err, msg);
    buf_puts(err, fc_type_name(f->v, bad));
    *err_id = bad;
    return false;
}

static void check_format_call(struct validator *v, struct cel_expr *e)
{
    static const struct cel_fmt_ops ops = {fc_arg, fc_size, fc_clause};
    struct cel_expr *t = e->u.call.target;
    struct fmtcheck f = {v, NULL, 0};
    struct buf out = BUF_INIT(0), err = BUF_INIT(0);
    int64_t bad_id = 0;

    if (!t || strcmp(e->u.call.fn, "format") || e->u.call.nargs != 1)
        return;
    if (e->id > 0 && e->id < v->chk->n && v->chk->refs[e->id] && v->chk->refs[e->id]->nov) {
        const struct cel_ref *r = v->chk->refs[e->id];
        bool found = false;
        for (int i = 0; i < r->nov; i++)
            if (!strcmp(r->ov[i]->id, "string_format"))
                found = true;
        if (!found)
            return;
    }
    if (t->kind != CEL_E_LIT || t->u.lit.kind != CEL_LIT_STRING ||
        e->u.call.args[0]->kind != CEL_E_LIST)
        return;
    f.list = e->u.call.args[0];
    if (cel_fmt_parse(t->u.lit.v.s.p, t->u.lit.v.s.len, &ops, &f, &out, &err, &bad_id) < 0) {
        int32_t id = bad_id ? (int32_t)bad_id : e->id;
        cel_diags_add(v->diags, id, cel_ids_offset(v->ids, id), "%s", err.data ? err.data : "");
    } else if (f.list->u.list.n > f.requested) {
        cel_diags_add(v->diags, e->id, cel_ids_offset(v->ids, e->id),
                      "too many arguments supplied to string.format (expected %d, got %d)",
                      f.requested, f.list->u.list.n);
    }
    buf_release(&out);
    buf_release(&err);
}

static void visit(struct validator *v, struct cel_expr *e);

static void visit_node(struct validator *v, struct cel_expr *e)
{
    if (v->pass <= 2 && e->kind == CEL_E_CALL && e->u.call.nargs > 0) {
        const char *fn = v->pass == 0 ? "duration" : v->pass == 1 ? "timestamp" : "matches";
        struct cel_expr *arg = e->u.call.args[0];
        if (!strcmp(e->u.call.fn, fn) && arg->kind == CEL_E_LIT) {
            bool bad = false;
            if (v->pass == 2) {
                struct buf err = BUF_INIT(0);
                bad = arg->u.lit.kind != CEL_LIT_STRING ||
                      !cel_regex_check(arg->u.lit.v.s.p, arg->u.lit.v.s.len, &err);
                buf_release(&err);
            } else if (arg->u.lit.kind == CEL_LIT_STRING) {
                int64_t a;
                int32_t b;
                bad = v->pass == 0
                          ? !cel_duration_parse(arg->u.lit.v.s.p, arg->u.lit.v.s.len, &a)
                          : !cel_timestamp_parse(arg->u.lit.v.s.p, arg->u.lit.v.s.len, &a, &b);
            } else if (v->pass == 1 && arg->u.lit.kind == CEL_LIT_INT) {
                bad = arg->u.lit.v.i < -62135596800LL || arg->u.lit.v.i > 253402300799LL;
            } else if (arg->u.lit.kind != CEL_LIT_STRING && arg->u.lit.kind != CEL_LIT_INT) {
                bad = true;
            }
            if (bad)
                cel_diags_add(v->diags, arg->id, cel_ids_offset(v->ids, arg->id),
                              "invalid %s argument", fn);
        }
    }
    if (v->pass == 5 && e->kind == CEL_E_CALL)
        check_format_call(v, e);
    if (v->pass == 3 && e->kind == CEL_E_LIST && !v->exempt) {
        const struct cel_type *et = NULL;
        for (int i = 0; i < e->u.list.n; i++) {
            const struct cel_type *t = vtype(v, e->u.list.elems[i]);
            for (int k = 0; k < e->u.list.nopt; k++)
                if (e->u.list.optional[k] == i && t->np > 0)
                    t = t->p[0];
            if (!et) {
                et = t;
                continue;
            }
            if (!type_internal(et, t, false)) {
                vmismatch(v, e->u.list.elems[i]->id, et, t);
                break;
            }
        }
    }
    if (v->pass == 4 && e->kind == CEL_E_MAP && !v->exempt) {
        const struct cel_type *kt = NULL, *vt = NULL;
        for (int i = 0; i < e->u.map.n; i++) {
            struct cel_entry *en = &e->u.map.entries[i];
            const struct cel_type *k = vtype(v, en->key), *t = vtype(v, en->value);
            if (en->optional && t->np > 0)
                t = t->p[0];
            if (!kt && !vt) {
                kt = k;
                vt = t;
                continue;
            }
            if (!type_internal(kt, k, false))
                vmismatch(v, en->key->id, kt, k);
            if (!type_internal(vt, t, false))
                vmismatch(v, en->value->id, vt, t);
        }
    }
}

/* post-order, as ast.MatchDescendants visits */
static void visit(struct validator *v, struct cel_expr *e)
{
    if (!e)
        return;
    switch (e->kind) {
    case CEL_E_SELECT:
        visit(v, e->u.sel.operand);
        break;
    case CEL_E_CALL: {
        bool ex = !strcmp(e->u.call.fn, "format");
        v->exempt += ex;
        if (e->u.call.target)
            visit(v, e->u.call.target);
        for (int i = 0; i < e->u.call.nargs; i++)
            visit(v, e->u.call.args[i]);
        v->exempt -= ex;
        break;
    }
    case CEL_E_LIST:
        for (int i = 0; i < e->u.list.n; i++)
            visit(v, e->u.list.elems[i]);
        break;
    case CEL_E_MAP:
    case CEL_E_STRUCT:
        for (int i = 0; i < e->u.map.n; i++) {
            visit(v, e->u.map.entries[i].key);
            visit(v, e->u.map.entries[i].value);
        }
        break;
    case CEL_E_COMP:
        visit(v, e->u.comp.range);
        visit(v, e->u.comp.init);
        visit(v, e->u.comp.cond);
        visit(v, e->u.comp.step);
        visit(v, e->u.comp.result);
        break;
    default:
        break;
    }
    visit_node(v, e);
}

void cel_validate(const struct cel_env *env, struct cel_expr *root, const struct cel_ids *ids,
                  const struct cel_checked *chk, struct cel_diags *diags)
{
    struct validator v = {.env = env, .ids = ids, .chk = chk, .diags = diags};

    for (v.pass = 0; v.pass < 6; v.pass++)
        visit(&v, root);
}
