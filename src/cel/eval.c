/* eval.c - plans a checked CEL tree and interprets the plan (cel-go's interpreter).
 *
 * Errors are values; && and || are commutative over them; a comprehension's accumulator is
 * computed when first read; qualifiers follow cel-go's attribute rules ("no such key: x",
 * "index out of bounds: 2"). Cost is counted as cel-go's cost tracker observes the same plan:
 * constants are free, each attribute and qualifier costs 1, calls cost what the function's
 * estimator says, list and map literals 10 and 30; past the limit the evaluation stops. */
#include "cel/eval.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cel/cost.h"
#include "cel/lib.h"
#include "cel/quantity.h"
#include "cel/utf8.h"

static void observe(struct ev *ev, uint64_t c)
{
    ev->cost += c;
    if (ev->cost > ev->limit)
        longjmp(ev->abort, 1);
}

/* ---- qualification (interpreter/attributes.go) ---- */

static bool qualifier_kind_ok(const struct cel_val *q)
{
    return q->k == CV_STRING || q->k == CV_INT || q->k == CV_UINT || q->k == CV_BOOL ||
           q->k == CV_DOUBLE;
}

static struct cel_val missing_key(struct ev *ev, const struct cel_val *q)
{
    struct buf b = BUF_INIT(0);
    struct cel_val r;

    buf_puts(&b, "no such key: ");
    cel_val_format_v(&b, q);
    r = cel_err_buf(ev->a, &b); /* the key may hold a NUL */
    buf_release(&b);
    return r;
}

/* Qualifies obj by the value q. present: NULL for Qualify (missing is an error), else set to
 * whether it was present (QualifyIfPresent). Returns the value or an error. */
static struct cel_val qualify(struct ev *ev, const struct cel_val *obj, const struct cel_val *q,
                              bool *present)
{
    if (present)
        *present = true;
    switch (obj->k) {
    case CV_MAP: {
        const struct cel_val *v;
        cel_map_key_check(ev, obj->v.m, q);
        v = cel_map_find(obj->v.m, q);
        if (v)
            return *v;
        if (present) {
            *present = false;
            return cel_null();
        }
        return missing_key(ev, q);
    }
    case CV_LIST: {
        int64_t i;
        if (q->k == CV_INT) {
            i = q->v.i;
        } else if (q->k == CV_DOUBLE) {
            double d = q->v.d;
            if (isnan(d) || isinf(d) || d <= -9223372036854775808.0 || d >= 9223372036854775807.0 ||
                (double)(int64_t)d != d) {
                struct buf b = BUF_INIT(0);
                struct cel_val r;
                cel_format_float(&b, d, 'g');
                r = cel_err(ev->a, "unsupported index value %s in list", b.data);
                buf_release(&b);
                return r;
            }
            i = (int64_t)d;
        } else if (q->k == CV_UINT) {
            if (q->v.u > (uint64_t)INT64_MAX)
                return cel_err(ev->a, "unsupported index value %llu in list",
                               (unsigned long long)q->v.u);
            i = (int64_t)q->v.u;
        } else {
            return cel_err(ev->a, "unsupported index type '%s' in list", cel_val_type_name(q));
        }
        if (i >= 0 && i < (int64_t)obj->v.l->n)
            return obj->v.l->v[i];
        if (present) {
            *present = false;
            return cel_null();
        }
        {
            struct buf b = BUF_INIT(0);
            struct cel_val r;
            buf_puts(&b, "index out of bounds: ");
            cel_val_format_v(&b, q);
            r = cel_err_buf(ev->a, &b);
            buf_release(&b);
            return r;
        }
    }
    case CV_ERROR:
        return *obj;
    default:
        if (present) {
            *present = false;
            return cel_null();
        }
        return missing_key(ev, q);
    }
}

static struct cel_val resolve_attr(struct ev *ev, struct pattr *a);

/* A qualifier's value: constant, or an attribute resolved (not executed). */
static struct cel_val qual_value(struct ev *ev, struct pqual *q)
{
    struct cel_val v;

    if (!q->attr)
        return q->cval;
    v = resolve_attr(ev, q->attr);
    if (v.k == CV_ERROR)
        return v;
    if (!qualifier_kind_ok(&v))
        return cel_err(ev->a, "invalid qualifier type: %s", cel_go_type_name(&v));
    return v;
}

/* applyQualifiers; *is_opt says whether the result must be wrapped as an optional. */
static struct cel_val apply_quals(struct ev *ev, struct cel_val obj, struct pattr *a, bool *is_opt)
{
    bool opt = false;

    *is_opt = false;
    if (obj.k == CV_OPTIONAL) {
        if (!obj.v.o)
            return obj;
        obj = *obj.v.o;
        opt = true;
    }
    for (int i = 0; i < a->nquals; i++) {
        struct pqual *q = &a->quals[i];
        struct cel_val qv, r;
        opt = opt || q->optional || (q->attr && q->attr->optional);
        if (q->test_only && !opt) {
            bool present;
            qv = qual_value(ev, q);
            if (qv.k == CV_ERROR) {
                observe(ev, 1); /* evalWatchAttrQual observes its error too */
                return qv;
            }
            r = qualify(ev, &obj, &qv, &present);
            observe(ev, 1);
            if (r.k == CV_ERROR)
                return r;
            obj = cel_bool(present);
            continue;
        }
        qv = qual_value(ev, q);
        if (qv.k == CV_ERROR) {
            /* evalWatchAttrQual.Qualify observes an error; QualifyIfPresent does not */
            if (!opt)
                observe(ev, 1);
            return qv;
        }
        if (opt) {
            bool present;
            r = qualify(ev, &obj, &qv, &present);
            if (r.k == CV_ERROR)
                return r;
            /* QualifyIfPresent's observer sees only what was present */
            if (present)
                observe(ev, 1);
            if (!present) {
                struct cel_val none = {.k = CV_OPTIONAL};
                return none;
            }
        } else {
            r = qualify(ev, &obj, &qv, NULL);
            observe(ev, 1);
            if (r.k == CV_ERROR)
                return r;
        }
        obj = r;
    }
    *is_opt = opt;
    return obj;
}

static struct cel_val fold_var(struct ev *ev, int level, int which);

static struct cel_val resolve_attr(struct ev *ev, struct pattr *a)
{
    struct cel_val obj;
    bool is_opt;

    switch (a->kind) {
    case A_VAR:
        obj = a->which && ev->extra ? ev->extra[a->which - 1] : *ev->device;
        break;
    case A_FOLD:
        obj = fold_var(ev, a->level, a->which);
        if (obj.k == CV_ERROR)
            return obj;
        break;
    case A_REL:
        obj = cel_eval_node(ev, a->operand);
        if (obj.k == CV_ERROR)
            return obj;
        break;
    case A_COND: {
        struct cel_val c = cel_eval_node(ev, a->cond);
        if (c.k == CV_BOOL)
            return resolve_attr(ev, c.v.b ? a->t : a->f);
        return cel_maybe_no_such_overload(&c);
    }
    default:
        return cel_err_static("invalid attribute");
    }
    obj = apply_quals(ev, obj, a, &is_opt);
    if (obj.k != CV_ERROR && is_opt) {
        struct cel_val *box = arena_alloc(ev->a, sizeof(*box));
        struct cel_val o = {.k = CV_OPTIONAL};
        if (!box)
            return cel_err_static("out of memory");
        *box = obj;
        o.v.o = box;
        return o;
    }
    return obj;
}

/* ---- comprehensions ---- */

static struct cel_val fold_var(struct ev *ev, int level, int which)
{
    struct foldframe *f = &ev->frames[level];

    if (which == 0) {
        if (!f->initialized) {
            /* the initializer reads only enclosing frames; folds inside it use the slots
             * above this one, which a fold of the body reading the accumulator may be using:
             * they are saved around it (cel-go gives each fold its own folder) */
            struct cel_val v;
            int ns = f->init_slots;
            struct foldframe *saved = NULL;
            if (ns > 0) {
                if (level + 1 + ns > CEL_MAX_FOLD_DEPTH)
                    return cel_err_static("comprehension nesting too deep");
                saved = arena_alloc(ev->a, (size_t)ns * sizeof(*saved));
                if (!saved)
                    return cel_err_static("out of memory");
                memcpy(saved, &ev->frames[level + 1], (size_t)ns * sizeof(*saved));
            }
            v = cel_eval_node(ev, f->init);
            if (saved)
                memcpy(&ev->frames[level + 1], saved, (size_t)ns * sizeof(*saved));
            f = &ev->frames[level];
            f->initialized = true;
            if (v.k == CV_LIST && v.v.l->n == 0) {
                struct cel_list *l = cel_list_new(ev->a, 0);
                if (l) {
                    l->mut = true;
                    v.v.l = l;
                }
            } else if (v.k == CV_MAP && v.v.m->n == 0) {
                struct cel_map *m = cel_map_new(ev->a, 0);
                if (m) {
                    m->mut = true;
                    v.v.m = m;
                }
            }
            f->accu = v;
        }
        return f->accu;
    }
    return which == 1 ? f->it1 : f->it2;
}

static struct cel_val eval_fold(struct ev *ev, struct pnode *n)
{
    struct foldframe *f;
    struct cel_val range, res;
    int level = n->u.fold.level;

    range = cel_eval_node(ev, n->u.fold.range);
    if (range.k == CV_ERROR)
        return range;
    if (level >= CEL_MAX_FOLD_DEPTH)
        return cel_err_static("comprehension nesting too deep");
    f = &ev->frames[level];
    memset(f, 0, sizeof(*f));
    f->init = n->u.fold.init;
    f->init_slots = n->u.fold.init_slots;
    if (n->u.fold.two) {
        if (range.k != CV_LIST && range.k != CV_MAP) {
            return cel_err(ev->a, "unsupported comprehension range type: %s",
                           cel_go_type_name(&range));
        }
    } else if (range.k != CV_LIST && range.k != CV_MAP) {
        return cel_err(ev->a, "got '%s', expected iterable type", cel_go_type_name(&range));
    }
    {
        uint32_t cnt = range.k == CV_LIST ? range.v.l->n : range.v.m->n;
        for (uint32_t i = 0; i < cnt; i++) {
            struct cel_val c;
            if (range.k == CV_LIST) {
                if (n->u.fold.two) {
                    f->it1 = cel_int(i);
                    f->it2 = range.v.l->v[i];
                } else {
                    f->it1 = range.v.l->v[i];
                }
            } else {
                f->it1 = range.v.m->keys[i];
                if (n->u.fold.two)
                    f->it2 = range.v.m->vals[i];
            }
            c = cel_eval_node(ev, n->u.fold.cond);
            if (c.k == CV_BOOL && !c.v.b)
                break;
            f = &ev->frames[level];
            f->accu = cel_eval_node(ev, n->u.fold.step);
            f->initialized = true;
        }
    }
    f = &ev->frames[level];
    res = cel_eval_node(ev, n->u.fold.result);
    if (res.k == CV_LIST && res.v.l->mut) {
        /* ToImmutableList: the same storage, no longer appended to */
        struct cel_list *l = arena_alloc(ev->a, sizeof(*l));
        if (l) {
            *l = *res.v.l;
            l->mut = false;
            l->concat = false;
            res.v.l = l;
        }
    } else if (res.k == CV_MAP && res.v.m->mut) {
        struct cel_map *m = arena_alloc(ev->a, sizeof(*m));
        if (m) {
            *m = *res.v.m;
            m->mut = false;
            res.v.m = m;
        }
    }
    return res;
}

/* ---- calls ---- */

static struct cel_val call_impl(struct ev *ev, struct pnode *n, const struct cel_val *args, int na)
{
    const struct cel_impl *impl = n->u.call.impl;

    ev->cur_regex = n->u.call.regex;
    if (n->u.call.dispatch && !impl) {
        /* funcDispatch: the first overload whose runtime signature matches */
        const struct cel_function *fn = n->u.call.dispatch;
        for (int k = 0; k < fn->n; k++) {
            const struct cel_overload *o = &fn->ov[k];
            const struct cel_impl *oi = cel_impl_find(o->id);
            bool ok = true;
            if (!oi || o->nargs != na)
                continue;
            for (int i = 0; i < na && ok; i++) {
                if (args[i].k == CV_ERROR) {
                    ok = o->nonstrict;
                    continue;
                }
                if (oi->no_guards)
                    continue;
                ok = cel_type_matches_value(o->args[i], &args[i]);
            }
            if (ok)
                return oi->fn(ev, args, na);
        }
        return cel_no_such_overload(ev, n->u.call.fname, args, na);
    }
    if (!impl)
        goto no_overload;
    if (impl->trait) {
        if ((cel_val_traits(&args[0]) & impl->trait) != impl->trait && /* HasTrait */
            !(n->u.call.nonstrict && args[0].k == CV_ERROR))
            goto receiver;
        return impl->fn(ev, args, na);
    }
    if (n->u.call.decl && !impl->no_guards) {
        const struct cel_overload *o = n->u.call.decl;
        for (int i = 0; i < na && i < o->nargs; i++) {
            if (args[i].k == CV_ERROR) {
                if (o->nonstrict)
                    continue;
                return cel_no_such_overload(ev, n->u.call.fname, args, na);
            }
            if (!cel_type_matches_value(o->args[i], &args[i]))
                return cel_no_such_overload(ev, n->u.call.fname, args, na);
        }
    }
    return impl->fn(ev, args, na);
receiver:
    if (cel_val_traits(&args[0]) & TR_RECEIVER) {
        /* String.Receive handles contains/endsWith/startsWith; the rest: no such overload */
        return cel_err_static("no such overload");
    }
no_overload:
    if (n->u.call.arity >= 3)
        return cel_err(ev->a, "no such overload: %s %d", n->u.call.fname, n->id);
    return cel_err(ev->a, "no such overload: %s", n->u.call.fname);
}

static struct cel_val eval_call(struct ev *ev, struct pnode *n)
{
    struct cel_val argv[8], *args = argv, r;
    int na = n->u.call.nargs;
    bool strict = !n->u.call.nonstrict;

    if (na > 8) {
        args = arena_alloc(ev->a, (size_t)na * sizeof(*args));
        if (!args)
            return cel_err_static("out of memory");
    }
    if (n->u.call.arity >= 3) {
        /* evalVarArgs: stops at the first error; the call is then not costed */
        for (int i = 0; i < na; i++) {
            args[i] = cel_eval_node(ev, n->u.call.args[i]);
            if (strict && args[i].k == CV_ERROR) {
                /* every argument was evaluated only when the last one failed */
                if (i == na - 1)
                    observe(ev, cel_call_cost(ev, n, args, na, &args[i]));
                return args[i];
            }
        }
    } else {
        for (int i = 0; i < na; i++)
            args[i] = cel_eval_node(ev, n->u.call.args[i]);
        if (strict)
            for (int i = 0; i < na; i++)
                if (args[i].k == CV_ERROR) {
                    observe(ev, cel_call_cost(ev, n, args, na, &args[i]));
                    return args[i];
                }
    }
    if (n->u.call.cached) {
        r = *n->u.call.cached;
        if (ev->fresh && r.k == CV_QUANTITY) {
            /* a new *Quantity each time, as cel-go's quantity() makes */
            struct cel_quantity *q = arena_alloc(ev->a, sizeof(*q));
            if (!q)
                return cel_err_static("out of memory");
            *q = *r.v.q;
            r.v.q = q;
        } else if (ev->fresh && r.k == CV_URL) {
            struct cel_url *u = arena_alloc(ev->a, sizeof(*u));
            if (!u)
                return cel_err_static("out of memory");
            *u = *r.v.url;
            r.v.url = u;
        }
    } else {
        r = call_impl(ev, n, args, na);
    }
    observe(ev, cel_call_cost(ev, n, args, na, &r));
    return r;
}

/* ---- nodes ---- */

static struct cel_val eval_list(struct ev *ev, struct pnode *n)
{
    struct cel_list *l = cel_list_new(ev->a, (uint32_t)n->u.list.n);
    struct cel_val r = {.k = CV_LIST};

    if (!l)
        return cel_err_static("out of memory");
    for (int i = 0; i < n->u.list.n; i++) {
        struct cel_val v = cel_eval_node(ev, n->u.list.elems[i]);
        if (v.k == CV_ERROR) {
            observe(ev, 10);
            return v;
        }
        if (n->u.list.opt && n->u.list.opt[i]) {
            if (v.k != CV_OPTIONAL) {
                struct buf b = BUF_INIT(0);
                buf_puts(&b, "cannot initialize optional list element from non-optional value ");
                cel_val_format_v(&b, &v);
                r = cel_err_buf(ev->a, &b);
                buf_release(&b);
                observe(ev, 10);
                return r;
            }
            if (!v.v.o)
                continue;
            v = *v.v.o;
        }
        l->v[l->n++] = v;
    }
    r.v.l = l;
    observe(ev, 10);
    return r;
}

static struct cel_val eval_map(struct ev *ev, struct pnode *n)
{
    struct cel_map *m = cel_map_new(ev->a, (uint32_t)n->u.map.n);
    struct cel_val r = {.k = CV_MAP};

    if (!m)
        return cel_err_static("out of memory");
    for (int i = 0; i < n->u.map.n; i++) {
        struct cel_val k = cel_eval_node(ev, n->u.map.keys[i]), v;
        struct cel_val *slot = NULL;
        if (k.k == CV_ERROR) {
            observe(ev, 30);
            return k;
        }
        v = cel_eval_node(ev, n->u.map.vals[i]);
        if (v.k == CV_ERROR) {
            observe(ev, 30);
            return v;
        }
        if (n->u.map.opt && n->u.map.opt[i] && v.k != CV_OPTIONAL) {
            {
                struct buf b = BUF_INIT(0), c = BUF_INIT(0);
                buf_puts(&b, "cannot initialize optional entry '");
                cel_val_format_v(&b, &k);
                buf_puts(&b, "' from non-optional value ");
                cel_val_format_v(&b, &v);
                r = cel_err_buf(ev->a, &b);
                buf_release(&b);
                buf_release(&c);
                observe(ev, 30);
                return r;
            }
        }
        /* the Go map of the literal hashes the key (delete(), for an absent optional value,
         * panics in its own words) */
        if (n->u.map.opt && n->u.map.opt[i] && !v.v.o && (k.k == CV_SEMVER || k.k == CV_FORMAT))
            cel_ev_panic(ev, "hash of unhashable type: %s", cel_go_type_name(&k));
        cel_map_key_check(ev, NULL, &k);
        for (uint32_t j = 0; j < m->n; j++)
            if (cel_key_identical(&m->keys[j], &k))
                slot = &m->vals[j];
        if (n->u.map.opt && n->u.map.opt[i]) {
            if (!v.v.o) {
                if (slot) {
                    uint32_t j = (uint32_t)(slot - m->vals);
                    memmove(&m->keys[j], &m->keys[j + 1], (m->n - j - 1) * sizeof(*m->keys));
                    memmove(&m->vals[j], &m->vals[j + 1], (m->n - j - 1) * sizeof(*m->vals));
                    m->n--;
                }
                continue;
            }
            v = *v.v.o;
        }
        if (slot) {
            *slot = v;
        } else {
            m->keys[m->n] = k;
            m->vals[m->n] = v;
            m->n++;
        }
    }
    m->strkeys = false;
    r.v.m = m;
    observe(ev, 30);
    return r;
}

static bool logic_val(const struct cel_val *v, bool *b)
{
    if (v->k == CV_BOOL) {
        *b = v->v.b;
        return true;
    }
    return false;
}

struct cel_val cel_eval_node(struct ev *ev, struct pnode *n)
{
    struct cel_val r;

    switch (n->kind) {
    case P_CONST:
        return n->u.cval;
    case P_ATTR:
        r = resolve_attr(ev, n->u.attr);
        if (n->u.attr->kind != A_COND)
            observe(ev, 1);
        return r;
    case P_TESTONLY:
        r = resolve_attr(ev, n->u.attr);
        /* cel-go's tracker takes back the presence test's select cost, which a conditional
         * attribute never added: one less, wrapping below zero (then over any limit) */
        if (n->u.attr->kind == A_COND)
            observe(ev, UINT64_MAX);
        if (r.k == CV_OPTIONAL)
            return cel_bool(r.v.o != NULL);
        return r;
    case P_AND:
    case P_OR: {
        bool want = n->kind == P_OR; /* the absorbing value */
        struct cel_val err = {.k = CV_NULL};
        bool have_err = false;
        struct pnode *terms[2] = {n->u.bin.a, n->u.bin.b};
        for (int i = 0; i < 2; i++) {
            struct cel_val v = cel_eval_node(ev, terms[i]);
            bool b;
            if (logic_val(&v, &b)) {
                if (b == want)
                    return cel_bool(want);
            } else if (!have_err) {
                err = v.k == CV_ERROR ? v : cel_err_static("no such overload");
                have_err = true;
            }
        }
        if (have_err)
            return err;
        return cel_bool(!want);
    }
    case P_EQ:
    case P_NE: {
        struct cel_val a = cel_eval_node(ev, n->u.bin.a), b = cel_eval_node(ev, n->u.bin.b);
        struct cel_val args[2] = {a, b};
        int eq;
        if (a.k == CV_ERROR)
            r = a;
        else if (b.k == CV_ERROR)
            r = b;
        else {
            eq = cel_val_eq(&a, &b);
            if (n->kind == P_EQ)
                r = eq < 0 ? cel_err_static("no such overload") : cel_bool(eq == 1);
            else
                r = cel_bool(eq != 1);
        }
        observe(ev, cel_eq_cost(n->kind == P_EQ, args));
        return r;
    }
    case P_CALL:
        return eval_call(ev, n);
    case P_LIST:
        return eval_list(ev, n);
    case P_MAP:
        return eval_map(ev, n);
    case P_FOLD:
        return eval_fold(ev, n);
    case P_SETMEM: {
        struct cel_val v = cel_eval_node(ev, n->u.setmem.arg);
        if (v.k == CV_ERROR)
            return v;
        cel_map_key_check(ev, NULL, &v); /* the Go map of evalSetMembership hashes v */
        for (int i = 0; i < n->u.setmem.n; i++)
            if (cel_key_identical(&n->u.setmem.set[i], &v))
                return cel_bool(true);
        return cel_bool(false);
    }
    case P_OPTOR:
    case P_OPTORVALUE: {
        struct cel_val l = cel_eval_node(ev, n->u.bin.a);
        if (l.k == CV_ERROR)
            return l;
        if (l.k != CV_OPTIONAL)
            return cel_err_static("no such overload");
        if (l.v.o)
            return n->kind == P_OPTOR ? l : *l.v.o;
        return cel_eval_node(ev, n->u.bin.b);
    }
    case P_ERRNODE:
    default:
        return cel_err_static(n->u.err ? n->u.err : "unsupported expression");
    }
}
