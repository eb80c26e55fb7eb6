/* plan.c - turns a checked tree into the interpreter's plan, as cel-go's planner and its
 * decorators do when a program is built.
 *
 * Selects and indexes become qualifiers of an attribute; ?: becomes a conditional attribute;
 * calls are bound to the one overload the checker found or to the function's dispatcher.
 * Then cel-go's OptOptimize: a type conversion of a constant is evaluated now (its error fails
 * the program: int('x') is a compile-time error here), literal lists and maps of constants
 * become constants, `x in [constants]` becomes a set lookup, and constant regular expressions
 * of matches/find/findAll are compiled (an invalid one fails the program). */
#include "cel/plan.h"
#include "cel/cost.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/lib.h"
#include "cel/regex.h"

struct planner {
    struct arena *a;
    const struct cel_env *env;
    const struct cel_checked *chk;
    struct {
        const char *name;
        int level, which;
    } scope[512];
    int nscope;
    int slot, max_slot;
    struct cel_regex **regexes;
    bool failed;
    bool fresh; /* see cel_plan: a quantity comparison, a map literal or a map insertion */
    struct buf err;
};

static void pfail(struct planner *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pfail(struct planner *p, const char *fmt, ...)
{
    va_list ap;
    if (p->failed)
        return;
    p->failed = true;
    va_start(ap, fmt);
    buf_vprintf(&p->err, fmt, ap);
    va_end(ap);
}

/* pfail with a message that may hold NUL bytes */
static void pfail_buf(struct planner *p, const struct buf *b)
{
    if (p->failed)
        return;
    p->failed = true;
    buf_append(&p->err, b->data, b->len);
}

static struct pnode *node(struct planner *p, enum pnode_kind k, int32_t id)
{
    struct pnode *n = arena_alloc(p->a, sizeof(*n));
    if (!n) {
        pfail(p, "out of memory");
        return NULL;
    }
    n->kind = k;
    n->id = id;
    return n;
}

static struct pattr *attr_new(struct planner *p, enum pattr_kind k, int32_t id)
{
    struct pattr *a = arena_alloc(p->a, sizeof(*a));
    if (!a) {
        pfail(p, "out of memory");
        return NULL;
    }
    a->kind = k;
    a->id = id;
    return a;
}

static struct pqual *add_qual(struct planner *p, struct pattr *a)
{
    if (a->nquals == a->qalloc) {
        int na = a->qalloc ? a->qalloc * 2 : 4;
        struct pqual *v = arena_alloc(p->a, (size_t)na * sizeof(*v));
        if (!v) {
            pfail(p, "out of memory");
            return NULL;
        }
        if (a->nquals)
            memcpy(v, a->quals, (size_t)a->nquals * sizeof(*v));
        a->quals = v;
        a->qalloc = na;
    }
    memset(&a->quals[a->nquals], 0, sizeof(a->quals[0]));
    return &a->quals[a->nquals++];
}

/* Adds qualifier q to attribute a (both branches of a conditional). */
static void qualify_attr(struct planner *p, struct pattr *a, const struct pqual *q)
{
    if (a->kind == A_COND) {
        qualify_attr(p, a->t, q);
        qualify_attr(p, a->f, q);
        return;
    }
    {
        struct pqual *s = add_qual(p, a);
        if (s)
            *s = *q;
    }
}

static struct pattr *rel_attr(struct planner *p, struct pnode *op, bool optional)
{
    struct pattr *a = attr_new(p, A_REL, op ? op->id : 0);
    if (a) {
        a->operand = op;
        a->optional = optional;
    }
    return a;
}

/* the attribute of an operand node (InterpretableAttribute) or a relative one around it */
static struct pattr *as_attr(struct planner *p, struct pnode *op)
{
    if (op && (op->kind == P_ATTR || op->kind == P_TESTONLY))
        return op->u.attr;
    return rel_attr(p, op, false);
}

static struct pnode *attr_node(struct planner *p, struct pattr *a, int32_t id)
{
    struct pnode *n = node(p, P_ATTR, id);
    if (n)
        n->u.attr = a;
    return n;
}

static const struct cel_type *type_of(struct planner *p, int32_t id)
{
    if (id > 0 && id < p->chk->n && p->chk->types[id])
        return p->chk->types[id];
    return &cel_t_dyn;
}

static const struct cel_ref *ref_of(struct planner *p, int32_t id)
{
    if (id > 0 && id < p->chk->n)
        return p->chk->refs[id];
    return NULL;
}

static struct pnode *plan(struct planner *p, struct cel_expr *e);

static struct cel_val lit_val(const struct cel_lit *l)
{
    struct cel_val v = {0};
    switch (l->kind) {
    case CEL_LIT_NULL:
        v.k = CV_NULL;
        break;
    case CEL_LIT_BOOL:
        v = cel_bool(l->v.b);
        break;
    case CEL_LIT_INT:
        v = cel_int(l->v.i);
        break;
    case CEL_LIT_UINT:
        v = cel_uint(l->v.u);
        break;
    case CEL_LIT_DOUBLE:
        v = cel_double(l->v.d);
        break;
    case CEL_LIT_STRING:
        v = cel_str(l->v.s.p, l->v.s.len);
        break;
    case CEL_LIT_BYTES:
        v = cel_str(l->v.s.p, l->v.s.len);
        v.k = CV_BYTES;
        break;
    }
    return v;
}

static struct pnode *const_node(struct planner *p, int32_t id, struct cel_val v)
{
    struct pnode *n = node(p, P_CONST, id);
    if (n)
        n->u.cval = v;
    return n;
}

/* The runtime type value an identifier names. */
static const char *type_value_name(const struct cel_type *t)
{
    return t->name;
}

static struct pnode *plan_ident(struct planner *p, struct cel_expr *e, const char *name)
{
    const struct cel_ref *r = ref_of(p, e->id);
    struct pattr *a;

    if (r && r->type_val)
        return const_node(p, e->id, cel_type_val(type_value_name(r->type_val)));
    for (int i = p->nscope - 1; i >= 0; i--) {
        if (!strcmp(p->scope[i].name, name)) {
            /* planCheckedIdent: an identifier of type `type` must name a type */
            if (type_of(p, e->id)->kind == CK_TYPE) {
                pfail(p, "reference to undefined type: %s", name);
                return NULL;
            }
            a = attr_new(p, A_FOLD, e->id);
            if (!a)
                return NULL;
            a->level = p->scope[i].level;
            a->which = p->scope[i].which;
            return attr_node(p, a, e->id);
        }
    }
    if (!strcmp(name, p->env->var_name) ||
        (name[0] == '.' && !strcmp(name + 1, p->env->var_name))) {
        a = attr_new(p, A_VAR, e->id);
        return a ? attr_node(p, a, e->id) : NULL;
    }
    for (int i = 0; i < p->env->nextra; i++) {
        const char *g = name[0] == '.' ? name + 1 : name;
        if (!strcmp(g, p->env->extra[i].name)) {
            a = attr_new(p, A_VAR, e->id);
            if (!a)
                return NULL;
            a->which = i + 1;
            return attr_node(p, a, e->id);
        }
    }
    if (type_of(p, e->id)->kind == CK_TYPE) {
        pfail(p, "reference to undefined type: %s", name[0] == '.' ? name + 1 : name);
        return NULL;
    }
    pfail(p, "no such attribute(s): %s", name);
    return NULL;
}

/* Evaluates a node that has no variables (constant folding at build time). */
static struct cel_val fold_eval(struct planner *p, struct pnode *n)
{
    struct ev *ev = calloc(1, sizeof(*ev));
    struct cel_val r, dev = cel_null();

    if (!ev)
        return cel_err_static("out of memory");
    ev->a = p->a;
    ev->device = &dev;
    ev->limit = UINT64_MAX;
    if (setjmp(ev->abort)) {
        /* a library panic while folding constants: cel-go's planner would not recover it
         * (the process would crash); the panic's text is the error here */
        r = ev->abort_msg ? cel_err(p->a, "%s", ev->abort_msg)
                          : cel_err_static("cost limit exceeded");
        free(ev);
        return r;
    }
    r = cel_eval_node(ev, n);
    free(ev);
    return r;
}

static bool is_type_conversion(const char *fn)
{
    static const char *const v[] = {"bool", "bytes",  "double",    "duration", "dyn",
                                    "int",  "string", "timestamp", "type",     "uint"};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        if (!strcmp(fn, v[i]))
            return true;
    return false;
}

static bool is_primitive(const struct cel_val *v)
{
    return v->k == CV_BOOL || v->k == CV_DOUBLE || v->k == CV_INT || v->k == CV_STRING ||
           v->k == CV_UINT;
}

/* maybeOptimizeSetMembership */
static struct pnode *set_membership(struct planner *p, struct pnode *call)
{
    struct pnode *lhs = call->u.call.args[0], *rhs = call->u.call.args[1], *n;
    const struct cel_list *l;
    int cnt = 0;

    if (rhs->kind != P_CONST || rhs->u.cval.k != CV_LIST)
        return call;
    l = rhs->u.cval.v.l;
    if (l->n == 0)
        return const_node(p, call->id, cel_bool(false));
    for (uint32_t i = 0; i < l->n; i++)
        if (!is_primitive(&l->v[i]))
            return call;
    n = node(p, P_SETMEM, call->id);
    if (!n)
        return NULL;
    n->u.setmem.arg = lhs;
    n->u.setmem.set = arena_alloc(p->a, (size_t)l->n * 3 * sizeof(struct cel_val));
    if (!n->u.setmem.set) {
        pfail(p, "out of memory");
        return NULL;
    }
    for (uint32_t i = 0; i < l->n; i++) {
        const struct cel_val *v = &l->v[i];
        n->u.setmem.set[cnt++] = *v;
        if (v->k == CV_DOUBLE) {
            double d = v->v.d;
            if (d > -9223372036854775808.0 && d < 9223372036854775807.0 && (double)(int64_t)d == d)
                n->u.setmem.set[cnt++] = cel_int((int64_t)d);
            if (d >= 0 && d < 18446744073709551616.0 && (double)(uint64_t)d == d)
                n->u.setmem.set[cnt++] = cel_uint((uint64_t)d);
        } else if (v->k == CV_INT) {
            n->u.setmem.set[cnt++] = cel_double((double)v->v.i);
            if (v->v.i >= 0)
                n->u.setmem.set[cnt++] = cel_uint((uint64_t)v->v.i);
        } else if (v->k == CV_UINT) {
            n->u.setmem.set[cnt++] = cel_double((double)v->v.u);
            if (v->v.u <= (uint64_t)INT64_MAX)
                n->u.setmem.set[cnt++] = cel_int((int64_t)v->v.u);
        }
    }
    n->u.setmem.n = cnt;
    return n;
}

static struct pnode *plan_index(struct planner *p, struct cel_expr *e, bool optional)
{
    struct pnode *op = plan(p, e->u.call.args[0]);
    struct pnode *ind = plan(p, e->u.call.args[1]);
    struct pattr *a;
    struct pqual q = {0};

    if (!op || !ind)
        return NULL;
    a = as_attr(p, op);
    if (!a)
        return NULL;
    q.id = e->id;
    q.optional = optional;
    if (ind->kind == P_CONST) {
        const struct cel_val *v = &ind->u.cval;
        if (v->k != CV_STRING && v->k != CV_INT && v->k != CV_UINT && v->k != CV_BOOL &&
            v->k != CV_DOUBLE) {
            static const char *const names[] = {
                [CV_NULL] = "types.Null",         [CV_BYTES] = "types.Bytes",
                [CV_LIST] = "*types.baseList",    [CV_MAP] = "*types.baseMap",
                [CV_TYPE] = "*types.Type",        [CV_OPTIONAL] = "*types.Optional",
                [CV_DURATION] = "types.Duration", [CV_TIMESTAMP] = "types.Timestamp",
                [CV_QUANTITY] = "cel.Quantity",   [CV_SEMVER] = "cel.Semver",
            };
            const char *nm =
                v->k < sizeof(names) / sizeof(names[0]) && names[v->k] ? names[v->k] : "unknown";
            pfail(p, "invalid qualifier type: %s", nm);
            return NULL;
        }
        q.cval = *v;
    } else if (ind->kind == P_ATTR || ind->kind == P_TESTONLY) {
        q.attr = ind->u.attr;
    } else {
        q.attr = rel_attr(p, ind, optional);
    }
    qualify_attr(p, a, &q);
    if (op->kind == P_ATTR) {
        op->id = e->id;
        return op;
    }
    return attr_node(p, a, e->id);
}

static struct pnode *plan_call(struct planner *p, struct cel_expr *e)
{
    const char *fn = e->u.call.fn;
    const struct cel_ref *r = ref_of(p, e->id);
    struct cel_expr *target = e->u.call.target;
    int na = e->u.call.nargs + (target ? 1 : 0);
    struct pnode *n, **args;
    const struct cel_function *decl;

    if (!strcmp(fn, "_[_]"))
        return plan_index(p, e, false);
    if (!strcmp(fn, "_[?_]") || !strcmp(fn, "_?._"))
        return plan_index(p, e, true);
    args = arena_alloc(p->a, (size_t)(na ? na : 1) * sizeof(*args));
    if (!args) {
        pfail(p, "out of memory");
        return NULL;
    }
    {
        int k = 0;
        if (target)
            args[k++] = plan(p, target);
        for (int i = 0; i < e->u.call.nargs; i++)
            args[k++] = plan(p, e->u.call.args[i]);
        for (int i = 0; i < na; i++)
            if (!args[i])
                return NULL;
    }
    if (!strcmp(fn, "_&&_") || !strcmp(fn, "_||_")) {
        n = node(p, fn[2] == '&' ? P_AND : P_OR, e->id);
        if (n) {
            n->u.bin.a = args[0];
            n->u.bin.b = args[1];
        }
        return n;
    }
    if (!strcmp(fn, "_==_") || !strcmp(fn, "_!=_")) {
        n = node(p, fn[1] == '=' ? P_EQ : P_NE, e->id);
        if (n) {
            n->u.bin.a = args[0];
            n->u.bin.b = args[1];
        }
        return n;
    }
    if (!strcmp(fn, "_?_:_")) {
        struct pattr *a = attr_new(p, A_COND, e->id);
        if (!a)
            return NULL;
        a->cond = args[0];
        a->t = as_attr(p, args[1]);
        a->f = as_attr(p, args[2]);
        return attr_node(p, a, e->id);
    }
    if ((!strcmp(fn, "or") || !strcmp(fn, "orValue")) && na == 2 &&
        (!r || r->nov != 1 ||
         !strcmp(r->ov[0]->id, fn[2] ? "optional_orValue_value" : "optional_or_optional"))) {
        n = node(p, fn[2] ? P_OPTORVALUE : P_OPTOR, e->id);
        if (n) {
            n->u.bin.a = args[0];
            n->u.bin.b = args[1];
        }
        return n;
    }
    n = node(p, P_CALL, e->id);
    if (!n)
        return NULL;
    n->u.call.fname = fn;
    n->u.call.cost_kind = cel_cost_kind(fn, NULL);
    if (!strcmp(fn, "compareTo") || !strcmp(fn, "isGreaterThan") || !strcmp(fn, "isLessThan"))
        p->fresh = true;
    if (!strcmp(fn, "cel.@mapInsert"))
        p->fresh = true;
    n->u.call.args = args;
    n->u.call.nargs = na;
    n->u.call.arity = na <= 2 ? na : 3;
    decl = cel_env_function(p->env, fn);
    if (r && r->nov == 1) {
        const struct cel_impl *oi = cel_impl_find(r->ov[0]->id);
        n->u.call.ovid = r->ov[0]->id;
        n->u.call.cost_kind = cel_cost_kind(fn, n->u.call.ovid);
        if (oi) {
            n->u.call.impl = oi;
            n->u.call.decl = r->ov[0];
            n->u.call.nonstrict = r->ov[0]->nonstrict;
        } else {
            n->u.call.impl = cel_impl_find(fn); /* a singleton */
        }
    } else {
        const struct cel_impl *si = cel_impl_find(fn);
        if (si) {
            n->u.call.impl = si;
        } else if (decl && decl->n == 1) {
            n->u.call.impl = cel_impl_find(decl->ov[0].id);
            n->u.call.decl = &decl->ov[0];
            n->u.call.nonstrict = decl->ov[0].nonstrict;
        } else if (decl) {
            n->u.call.dispatch = decl;
            for (int k = 0; k < decl->n; k++)
                if (decl->ov[k].nonstrict)
                    n->u.call.nonstrict = true;
            /* funcDispatch has only a varargs form */
            n->u.call.arity = 3;
        }
    }
    if (!n->u.call.impl && !n->u.call.dispatch) {
        pfail(p, "no implementation of %s in this evaluator", fn);
        return NULL;
    }
    /* decorators: constant folding of type conversions */
    if (is_type_conversion(fn) && na == 1 && args[0]->kind == P_CONST) {
        struct cel_val v = fold_eval(p, n);
        if (v.k == CV_ERROR) {
            pfail(p, "%s", v.v.s);
            return NULL;
        }
        return const_node(p, e->id, v);
    }
    if (n->u.call.ovid && !strcmp(n->u.call.ovid, "in_list"))
        return set_membership(p, n);
    /* quantity("40Gi"), semver("1.2.3"), ...: computed once here; each evaluation still
     * evaluates the (constant) arguments and charges the call as cel-go would */
    {
        static const char *const pure[] = {"quantity", "isQuantity", "semver", "isSemver",
                                           "ip",       "isIP",       "cidr",   "isCIDR",
                                           "url",      "isURL",      NULL};
        bool all_const = true, listed = false;
        for (int k = 0; k < na; k++)
            all_const = all_const && args[k]->kind == P_CONST;
        for (int k = 0; pure[k]; k++)
            listed = listed || !strcmp(fn, pure[k]);
        if (listed && all_const && na >= 1 && !e->u.call.target) {
            struct cel_val *c = arena_alloc(p->a, sizeof(*c));
            if (!c) {
                pfail(p, "out of memory");
                return NULL;
            }
            *c = fold_eval(p, n);
            n->u.call.cached = c;
        }
    }
    /* constant regexes */
    if ((!strcmp(fn, "matches") || !strcmp(fn, "find") || !strcmp(fn, "findAll")) && na >= 2 &&
        args[1]->kind == P_CONST && args[1]->u.cval.k == CV_STRING) {
        struct buf err = BUF_INIT(0);
        const struct cel_regex *re =
            cel_regex_compile(p->a, args[1]->u.cval.v.s, args[1]->u.cval.n, p->regexes, &err);
        if (!re) {
            pfail_buf(p, &err);
            buf_release(&err);
            return NULL;
        }
        n->u.call.regex = re;
        n->u.call.arity = 3;
        n->u.call.impl = cel_impl_find(!strcmp(fn, "matches") ? "@matches_compiled"
                                       : !strcmp(fn, "find")  ? "@find_compiled"
                                                              : "@findAll_compiled");
        n->u.call.decl = NULL;
        n->u.call.dispatch = NULL;
    }
    return n;
}

static struct pnode *plan_list(struct planner *p, struct cel_expr *e)
{
    struct pnode *n = node(p, P_LIST, e->id);
    bool all_const = true;

    if (!n)
        return NULL;
    n->u.list.n = e->u.list.n;
    if (e->u.list.n) {
        n->u.list.elems = arena_alloc(p->a, (size_t)e->u.list.n * sizeof(struct pnode *));
        n->u.list.opt = arena_alloc(p->a, (size_t)e->u.list.n * sizeof(bool));
        if (!n->u.list.elems || !n->u.list.opt) {
            pfail(p, "out of memory");
            return NULL;
        }
    }
    for (int i = 0; i < e->u.list.nopt; i++) {
        int32_t k = e->u.list.optional[i];
        if (k < 0 || k >= e->u.list.n) {
            pfail(p, "optional index %d out of element bounds [0, %d]", k, e->u.list.n);
            return NULL;
        }
        n->u.list.opt[k] = true;
    }
    for (int i = 0; i < e->u.list.n; i++) {
        n->u.list.elems[i] = plan(p, e->u.list.elems[i]);
        if (!n->u.list.elems[i])
            return NULL;
        if (n->u.list.elems[i]->kind != P_CONST)
            all_const = false;
    }
    if (all_const) {
        struct cel_val v = fold_eval(p, n);
        return const_node(p, e->id, v);
    }
    return n;
}

static struct pnode *plan_map(struct planner *p, struct cel_expr *e)
{
    struct pnode *n = node(p, P_MAP, e->id);
    bool all_const = true;
    int cnt = e->u.map.n;

    if (!n)
        return NULL;
    n->u.map.n = cnt;
    if (cnt) {
        n->u.map.keys = arena_alloc(p->a, (size_t)cnt * sizeof(struct pnode *));
        n->u.map.vals = arena_alloc(p->a, (size_t)cnt * sizeof(struct pnode *));
        n->u.map.opt = arena_alloc(p->a, (size_t)cnt * sizeof(bool));
        if (!n->u.map.keys || !n->u.map.vals || !n->u.map.opt) {
            pfail(p, "out of memory");
            return NULL;
        }
    }
    for (int i = 0; i < cnt; i++) {
        n->u.map.keys[i] = plan(p, e->u.map.entries[i].key);
        n->u.map.vals[i] = plan(p, e->u.map.entries[i].value);
        if (!n->u.map.keys[i] || !n->u.map.vals[i])
            return NULL;
        n->u.map.opt[i] = e->u.map.entries[i].optional;
        if (n->u.map.keys[i]->kind != P_CONST || n->u.map.vals[i]->kind != P_CONST)
            all_const = false;
    }
    if (all_const) {
        struct cel_val v = fold_eval(p, n);
        return const_node(p, e->id, v);
    }
    return n;
}

static bool push_scope(struct planner *p, const char *name, int level, int which)
{
    if (!name)
        return true;
    if (p->nscope >= (int)(sizeof(p->scope) / sizeof(p->scope[0]))) {
        pfail(p, "comprehensions nested too deep");
        return false;
    }
    p->scope[p->nscope].name = name;
    p->scope[p->nscope].level = level;
    p->scope[p->nscope].which = which;
    p->nscope++;
    return true;
}

static struct pnode *plan_comp(struct planner *p, struct cel_expr *e)
{
    struct pnode *n = node(p, P_FOLD, e->id);
    int level = p->slot, saved_scope = p->nscope;

    if (!n)
        return NULL;
    if (level >= CEL_MAX_FOLD_DEPTH) {
        pfail(p, "comprehensions nested more than %d deep", CEL_MAX_FOLD_DEPTH);
        return NULL;
    }
    n->u.fold.level = level;
    n->u.fold.two = e->u.comp.iter2 != NULL;
    /* the range runs before this fold is active; everything else while it is. Planned in
     * cel-go's order (init, range, ...), which decides the first planning error. */
    p->slot = level + 1;
    {
        /* the initializer runs lazily, when the accumulator is first read, maybe inside a
         * deeper fold of the body: the evaluator saves the slots its own folds use */
        int saved_max = p->max_slot;
        p->max_slot = p->slot;
        n->u.fold.init = plan(p, e->u.comp.init);
        n->u.fold.init_slots = p->max_slot - (level + 1);
        if (saved_max > p->max_slot)
            p->max_slot = saved_max;
    }
    p->slot = level;
    n->u.fold.range = plan(p, e->u.comp.range);
    p->slot = level + 1;
    if (!push_scope(p, e->u.comp.accu, level, 0) || !push_scope(p, e->u.comp.iter, level, 1) ||
        !push_scope(p, e->u.comp.iter2, level, 2))
        return NULL;
    n->u.fold.cond = plan(p, e->u.comp.cond);
    n->u.fold.step = plan(p, e->u.comp.step);
    p->nscope = saved_scope;
    push_scope(p, e->u.comp.accu, level, 0);
    n->u.fold.result = plan(p, e->u.comp.result);
    p->nscope = saved_scope;
    p->slot = level;
    if (!n->u.fold.range || !n->u.fold.init || !n->u.fold.cond || !n->u.fold.step ||
        !n->u.fold.result)
        return NULL;
    return n;
}

static struct pnode *plan(struct planner *p, struct cel_expr *e)
{
    if (p->failed || !e)
        return NULL;
    switch (e->kind) {
    case CEL_E_LIT:
        return const_node(p, e->id, lit_val(&e->u.lit));
    case CEL_E_IDENT:
        return plan_ident(p, e, e->u.ident);
    case CEL_E_SELECT: {
        struct pnode *op;
        struct pattr *a;
        struct pqual q = {0};
        op = plan(p, e->u.sel.operand);
        if (!op)
            return NULL;
        a = as_attr(p, op);
        if (!a)
            return NULL;
        q.id = e->id;
        q.cval = cel_str(e->u.sel.field, (uint32_t)strlen(e->u.sel.field));
        q.test_only = e->u.sel.test_only;
        qualify_attr(p, a, &q);
        if (e->u.sel.test_only) {
            struct pnode *n = node(p, P_TESTONLY, e->id);
            if (n)
                n->u.attr = a;
            return n;
        }
        if (op->kind == P_ATTR) {
            op->id = e->id;
            return op;
        }
        return attr_node(p, a, e->id);
    }
    case CEL_E_CALL:
        return plan_call(p, e);
    case CEL_E_LIST:
        return plan_list(p, e);
    case CEL_E_MAP:
        p->fresh = true;
        return plan_map(p, e);
    case CEL_E_COMP:
        return plan_comp(p, e);
    case CEL_E_STRUCT:
        pfail(p, "unknown type: %s", e->u.map.type_name);
        return NULL;
    default:
        pfail(p, "unsupported expr");
        return NULL;
    }
}

struct pnode *cel_plan(struct arena *a, const struct cel_env *env, const struct cel_checked *chk,
                       struct cel_expr *root, struct cel_regex **regexes, struct buf *err,
                       int *max_depth, bool *fresh)
{
    struct planner *p = calloc(1, sizeof(*p));
    struct pnode *n;

    if (!p) {
        buf_puts(err, "out of memory");
        return NULL;
    }
    buf_init(&p->err, 0);
    p->a = a;
    p->env = env;
    p->chk = chk;
    p->regexes = regexes;
    n = plan(p, root);
    if (p->failed || !n) {
        if (p->failed)
            buf_append(err, p->err.data, p->err.len);
        else
            buf_puts(err, "planning failed");
        buf_release(&p->err);
        free(p);
        return NULL;
    }
    *max_depth = p->max_slot;
    *fresh = p->fresh;
    (void)type_of;
    buf_release(&p->err);
    free(p);
    return n;
}
