/* ext.c - cel-go's extension libraries in this environment: strings (v2), lists (v3), sets,
 * optional types, two-variable comprehensions' map insert. */
#include <string.h>

#include "cel/eval.h"
#include "cel/lib.h"

struct cel_val cel_list_concat(struct ev *ev, const struct cel_val *x, const struct cel_val *y)
{
    struct cel_list *l;
    struct cel_val r = {.k = CV_LIST};

    if (y->k != CV_LIST)
        return cel_maybe_no_such_overload(y);
    if (x->v.l->mut) {
        /* the comprehension accumulator grows in place (cel-go's mutableList.Add) */
        struct cel_list *m = (struct cel_list *)x->v.l;
        uint32_t need = m->n + y->v.l->n;
        if (need > m->cap) {
            uint32_t nc = m->cap ? m->cap * 2 : 8;
            struct cel_val *v;
            while (nc < need)
                nc *= 2;
            v = arena_alloc(ev->a, (size_t)nc * sizeof(*v));
            if (!v)
                return cel_err_static("out of memory");
            if (m->n)
                memcpy(v, m->v, (size_t)m->n * sizeof(*v));
            m->v = v;
            m->cap = nc;
        }
        if (y->v.l->n)
            memcpy(m->v + m->n, y->v.l->v, (size_t)y->v.l->n * sizeof(*m->v));
        m->n = need;
        return *x;
    }
    if (x->v.l->n == 0)
        return *y;
    if (y->v.l->n == 0)
        return *x;
    l = cel_list_new(ev->a, x->v.l->n + y->v.l->n);
    if (!l)
        return cel_err_static("out of memory");
    memcpy(l->v, x->v.l->v, (size_t)x->v.l->n * sizeof(*l->v));
    memcpy(l->v + x->v.l->n, y->v.l->v, (size_t)y->v.l->n * sizeof(*l->v));
    l->n = x->v.l->n + y->v.l->n;
    l->concat = true;
    r.v.l = l;
    return r;
}

static const struct cel_impl ext_impls[] = {
    {"@none", NULL, 0, false},
};

const struct cel_impl *cel_ext_impls(size_t *n)
{
    *n = 0;
    return ext_impls;
}
