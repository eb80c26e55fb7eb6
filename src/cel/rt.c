/* rt.c - what the evaluator and the libraries share at run time: memory from the
 * evaluation's scratch arena, the "no such overload" errors, runtime type matching, panics,
 * membership. Below the evaluator and the libraries, so neither calls back into the other. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cel/eval.h"
#include "cel/lib.h"

char *cel_ev_strdup(struct ev *ev, const char *s, size_t n)
{
    char *p = arena_alloc(ev->a, n + 1);
    if (p) {
        if (n)
            memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

struct cel_list *cel_list_new(struct arena *a, uint32_t n)
{
    struct cel_list *l = arena_alloc(a, sizeof(*l));
    if (!l)
        return NULL;
    if (n) {
        l->v = arena_alloc(a, (size_t)n * sizeof(*l->v));
        if (!l->v)
            return NULL;
    }
    l->cap = n;
    return l;
}

struct cel_map *cel_map_new(struct arena *a, uint32_t n)
{
    struct cel_map *m = arena_alloc(a, sizeof(*m));
    if (!m)
        return NULL;
    if (n) {
        m->keys = arena_alloc(a, (size_t)n * sizeof(*m->keys));
        m->vals = arena_alloc(a, (size_t)n * sizeof(*m->vals));
        if (!m->keys || !m->vals)
            return NULL;
    }
    m->cap = n;
    return m;
}

/* ---- errors ---- */

struct cel_val cel_maybe_no_such_overload(const struct cel_val *v)
{
    if (v->k == CV_ERROR)
        return *v;
    return cel_err_static("no such overload");
}

struct cel_val cel_no_such_overload(struct ev *ev, const char *fname, const struct cel_val *args,
                                    int n)
{
    struct buf b = BUF_INIT(0);
    struct cel_val r;

    for (int i = 0; i < n; i++)
        if (args[i].k == CV_ERROR)
            return args[i];
    for (int i = 0; i < n; i++) {
        if (i)
            buf_puts(&b, ", ");
        buf_puts(&b, cel_val_type_name(&args[i]));
    }
    r = cel_err(ev->a, "no such overload: %s(%s)", fname, b.data ? b.data : "");
    buf_release(&b);
    return r;
}

/* Type.IsAssignableRuntimeType */
bool cel_type_matches_value(const struct cel_type *t, const struct cel_val *v)
{
    if (t->kind == CK_DYN || t->kind == CK_ANY || t->kind == CK_TYPEPARAM)
        return true;
    if (strcmp(t->name, cel_val_type_name(v)))
        return false;
    if (t->kind == CK_LIST) {
        if (v->v.l->n == 0)
            return true;
        return cel_type_matches_value(t->p[0], &v->v.l->v[0]);
    }
    if (t->kind == CK_MAP) {
        if (v->v.m->n == 0)
            return true;
        return cel_type_matches_value(t->p[0], &v->v.m->keys[0]) &&
               cel_type_matches_value(t->p[1], &v->v.m->vals[0]);
    }
    return true;
}

_Noreturn void cel_ev_panic(struct ev *ev, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    int n = snprintf(msg, sizeof(msg), "internal error: ");
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
    va_end(ap);
    ev->abort_msg = cel_ev_strdup(ev, msg, strlen(msg));
    if (!ev->abort_msg)
        ev->abort_msg = "out of memory";
    longjmp(ev->abort, 1);
}

/* in: a list's Contains (Equal with errors ignored) or a map's key */
bool cel_in_list(const struct cel_list *l, const struct cel_val *v)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (cel_val_eq(v, &l->v[i]) == 1)
            return true;
    return false;
}

const struct cel_quantity *cel_quantity_current(const struct ev *ev, const struct cel_quantity *q)
{
    for (int i = ev->nqpromo - 1; i >= 0; i--)
        if (ev->qpromo[i].from == q)
            return ev->qpromo[i].to;
    return q;
}

bool cel_quantity_promote(struct ev *ev, const struct cel_quantity *q, const struct cel_quantity *d)
{
    if (ev->nqpromo == ev->aqpromo) {
        int na = ev->aqpromo ? 2 * ev->aqpromo : 8;
        struct cel_qpromo *n = arena_alloc(ev->a, (size_t)na * sizeof(*n));
        if (!n)
            return false;
        if (ev->nqpromo)
            memcpy(n, ev->qpromo, (size_t)ev->nqpromo * sizeof(*n));
        ev->qpromo = n;
        ev->aqpromo = na;
    }
    ev->qpromo[ev->nqpromo].from = q;
    ev->qpromo[ev->nqpromo].to = d;
    ev->nqpromo++;
    return true;
}

/* A Go map with ref.Val keys (map literals, transformMap results, getQuery) hashes the key
 * it is asked about: cel.Semver (slices), cel.Format (a func) and types.Bytes ([]byte) cannot
 * be hashed, and the runtime panics. Device maps are keyed by strings and do not hash other values. */
void cel_map_key_check(struct ev *ev, const struct cel_map *m, const struct cel_val *key)
{
    if (m && (m->strkeys || m->n == 0)) /* refValMapAccessor.Find skips an empty map */
        return;
    if (key->k == CV_SEMVER || key->k == CV_FORMAT || key->k == CV_BYTES)
        cel_ev_panic(ev, "runtime error: hash of unhashable type %s", cel_go_type_name(key));
}

bool cel_in_map(const struct cel_map *m, const struct cel_val *v)
{
    return cel_map_contains(m, v);
}
