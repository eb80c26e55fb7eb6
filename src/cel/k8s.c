/* k8s.c - Kubernetes' CEL libraries (k8s.io/apiserver/pkg/cel/library v0.37.2) as the DRA
 * environment enables them: quantity, semver, lists (isSorted, sum, min, max, indexOf,
 * lastIndexOf, includes), regex find/findAll; ip, cidr, url and format are in k8snet.c. */
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "cel/eval.h"
#include "cel/lib.h"
#include "cel/quantity.h"
#include "cel/regex.h"
#include "cel/semver.h"

#define NSO cel_err_static("no such overload")

static struct cel_val oom(void)
{
    return cel_err_static("out of memory");
}

/* ---- quantity ---- */

static struct cel_val qval(const struct cel_quantity *q)
{
    struct cel_val v = {.k = CV_QUANTITY};
    v.v.q = q;
    return v;
}

static struct cel_val f_quantity(struct ev *ev, const struct cel_val *a, int n)
{
    const char *err;
    const struct cel_quantity *q = cel_quantity_parse(ev->a, a[0].v.s, a[0].n, &err);
    (void)n;
    if (!q)
        return cel_err(ev->a, "%s", err);
    return qval(q);
}

static struct cel_val f_is_quantity(struct ev *ev, const struct cel_val *a, int n)
{
    const char *err;
    (void)n;
    return cel_bool(cel_quantity_parse(ev->a, a[0].v.s, a[0].n, &err) != NULL);
}

/* the quantity of a[i] as it is now in this evaluation */
static const struct cel_quantity *qcur(struct ev *ev, const struct cel_val *a, int i)
{
    return ev->nqpromo ? cel_quantity_current(ev, a[i].v.q) : a[i].v.q;
}

static struct cel_val f_q_sign(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return cel_int(cel_quantity_sign(qcur(ev, a, 0)));
}

/* Quantity.Cmp: the receiver takes the decimal form when the other side has it */
static int q_cmp(struct ev *ev, const struct cel_val *a, bool *oom_)
{
    const struct cel_quantity *x = qcur(ev, a, 0), *y = qcur(ev, a, 1);
    int c = cel_quantity_cmp(x, y);
    *oom_ = false;
    if (!x->dec && y->dec) {
        const struct cel_quantity *d = cel_quantity_to_dec(ev->a, x);
        if (!d || !cel_quantity_promote(ev, a[0].v.q, d))
            *oom_ = true;
    }
    return c;
}

static struct cel_val f_q_cmp(struct ev *ev, const struct cel_val *a, int n)
{
    bool o;
    int c = q_cmp(ev, a, &o);
    (void)n;
    return o ? oom() : cel_int(c);
}

static struct cel_val f_q_gt(struct ev *ev, const struct cel_val *a, int n)
{
    bool o;
    int c = q_cmp(ev, a, &o);
    (void)n;
    return o ? oom() : cel_bool(c == 1);
}

static struct cel_val f_q_lt(struct ev *ev, const struct cel_val *a, int n)
{
    bool o;
    int c = q_cmp(ev, a, &o);
    (void)n;
    return o ? oom() : cel_bool(c == -1);
}

static struct cel_val f_q_float(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return cel_double(cel_quantity_approx_float(qcur(ev, a, 0)));
}

static struct cel_val f_q_int(struct ev *ev, const struct cel_val *a, int n)
{
    int64_t v;
    (void)n;
    if (!cel_quantity_as_int64(qcur(ev, a, 0), &v))
        return cel_err_static("cannot convert value to integer");
    return cel_int(v);
}

static struct cel_val f_q_is_int(struct ev *ev, const struct cel_val *a, int n)
{
    int64_t v;
    (void)n;
    return cel_bool(cel_quantity_as_int64(qcur(ev, a, 0), &v));
}

static struct cel_val q_addsub(struct ev *ev, const struct cel_val *a, bool sub)
{
    const char *err;
    const struct cel_quantity *y =
        a[1].k == CV_INT ? cel_quantity_from_int(ev->a, a[1].v.i) : qcur(ev, a, 1);
    const struct cel_quantity *r;
    if (!y)
        return oom();
    r = cel_quantity_add(ev->a, qcur(ev, a, 0), y, sub, &err);
    if (!r)
        return cel_err(ev->a, "%s", err);
    return qval(r);
}

static struct cel_val f_q_add(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return q_addsub(ev, a, false);
}

static struct cel_val f_q_sub(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return q_addsub(ev, a, true);
}

/* ---- semver ---- */

static struct cel_val f_semver(struct ev *ev, const struct cel_val *a, int n)
{
    char err[400];
    const struct cel_semver *v =
        cel_semver_parse(ev->a, a[0].v.s, a[0].n, n == 2 && a[1].v.b, err, sizeof(err));
    struct cel_val r = {.k = CV_SEMVER};
    if (!v)
        return cel_err(ev->a, "%s", err);
    r.v.sv = v;
    return r;
}

static struct cel_val f_is_semver(struct ev *ev, const struct cel_val *a, int n)
{
    char err[400];
    return cel_bool(
        cel_semver_parse(ev->a, a[0].v.s, a[0].n, n == 2 && a[1].v.b, err, sizeof(err)) != NULL);
}

static struct cel_val f_sv_major(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    return cel_int((int64_t)a[0].v.sv->major);
}

static struct cel_val f_sv_minor(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    return cel_int((int64_t)a[0].v.sv->minor);
}

static struct cel_val f_sv_patch(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    return cel_int((int64_t)a[0].v.sv->patch);
}

static struct cel_val f_sv_cmp(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    return cel_int(cel_semver_cmp(a[0].v.sv, a[1].v.sv));
}

static struct cel_val f_sv_gt(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    return cel_bool(cel_semver_cmp(a[0].v.sv, a[1].v.sv) == 1);
}

static struct cel_val f_sv_lt(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    return cel_bool(cel_semver_cmp(a[0].v.sv, a[1].v.sv) == -1);
}

/* ---- lists ---- */

static bool comparer(const struct cel_val *v)
{
    return (cel_val_traits(v) & TR_COMPARER) != 0;
}

static struct cel_val f_is_sorted(struct ev *ev, const struct cel_val *a, int n)
{
    const struct cel_list *l = a[0].v.l;
    (void)n;
    for (uint32_t i = 0; i < l->n; i++) {
        int c = 0;
        struct cel_val e;
        if (!comparer(&l->v[i]))
            return cel_maybe_no_such_overload(&l->v[i]);
        if (i == 0)
            continue;
        e = cel_compare(ev, &l->v[i - 1], &l->v[i], &c);
        if (e.k != CV_ERROR && c == 1)
            return cel_bool(false);
    }
    return cel_bool(true);
}

static struct cel_val list_sum(struct ev *ev, const struct cel_val *a, struct cel_val acc)
{
    const struct cel_list *l = a[0].v.l;
    for (uint32_t i = 0; i < l->n; i++) {
        struct cel_val args[2];
        if (!(cel_val_traits(&l->v[i]) & TR_ADDER))
            return cel_maybe_no_such_overload(&l->v[i]);
        args[0] = acc;
        args[1] = l->v[i];
        acc = cel_add(ev, args);
        if (acc.k == CV_ERROR)
            return acc;
        if (!(cel_val_traits(&acc) & TR_ADDER))
            return NSO;
    }
    return acc;
}

static struct cel_val f_sum_int(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return list_sum(ev, a, cel_int(0));
}

static struct cel_val f_sum_uint(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return list_sum(ev, a, cel_uint(0));
}

static struct cel_val f_sum_double(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return list_sum(ev, a, cel_double(0));
}

static struct cel_val f_sum_duration(struct ev *ev, const struct cel_val *a, int n)
{
    struct cel_val z = {.k = CV_DURATION};
    (void)n;
    return list_sum(ev, a, z);
}

static struct cel_val list_minmax(struct ev *ev, const struct cel_val *a, int prefer,
                                  const char *op)
{
    const struct cel_list *l = a[0].v.l;
    const struct cel_val *res = NULL;
    for (uint32_t i = 0; i < l->n; i++) {
        if (!comparer(&l->v[i]))
            return cel_maybe_no_such_overload(&l->v[i]);
        if (!res) {
            res = &l->v[i];
        } else {
            int c = 0;
            struct cel_val e = cel_compare(ev, res, &l->v[i], &c);
            if (e.k != CV_ERROR && c == prefer)
                res = &l->v[i];
        }
    }
    if (!res)
        return cel_err(ev->a, "%s called on empty list", op);
    return *res;
}

static struct cel_val f_min(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return list_minmax(ev, a, 1, "min");
}

static struct cel_val f_max(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return list_minmax(ev, a, -1, "max");
}

static struct cel_val f_list_index_of(struct ev *ev, const struct cel_val *a, int n)
{
    const struct cel_list *l = a[0].v.l;
    (void)ev;
    (void)n;
    for (uint32_t i = 0; i < l->n; i++)
        if (cel_val_eq(&l->v[i], &a[1]) == 1)
            return cel_int(i);
    return cel_int(-1);
}

static struct cel_val f_list_last_index_of(struct ev *ev, const struct cel_val *a, int n)
{
    const struct cel_list *l = a[0].v.l;
    (void)ev;
    (void)n;
    for (uint32_t i = l->n; i > 0; i--)
        if (cel_val_eq(&l->v[i - 1], &a[1]) == 1)
            return cel_int(i - 1);
    return cel_int(-1);
}

static struct cel_val f_includes(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    if (a[0].k == CV_LIST) {
        for (uint32_t i = 0; i < a[0].v.l->n; i++)
            if (cel_val_eq(&a[0].v.l->v[i], &a[1]) == 1)
                return cel_bool(true);
        return cel_bool(false);
    }
    return cel_bool(cel_val_eq(&a[0], &a[1]) == 1);
}

/* ---- regex find / findAll with a pattern known at run time ---- */

static struct cel_val f_find(struct ev *ev, const struct cel_val *a, int n)
{
    struct buf err = BUF_INIT(0);
    struct cel_regex *list = NULL;
    const struct cel_regex *re;
    size_t b, e;
    struct cel_val r;
    (void)n;
    buf_puts(&err, "Illegal regex: ");
    re = cel_regex_compile(ev->a, a[1].v.s, a[1].n, &list, &err);
    if (!re) {
        r = cel_err_buf(ev->a, &err);
        buf_release(&err);
        return r;
    }
    if (cel_regex_find_at(re, a[0].v.s, a[0].n, 0, &b, &e))
        r = cel_str(a[0].v.s + b, (uint32_t)(e - b));
    else
        r = cel_str("", 0);
    cel_regex_free_list(list);
    return r;
}

static struct cel_val f_find_all(struct ev *ev, const struct cel_val *a, int n)
{
    struct buf err = BUF_INIT(0);
    struct cel_regex *list = NULL;
    const struct cel_regex *re;
    struct cel_val r;
    buf_puts(&err, "Illegal regex: ");
    re = cel_regex_compile(ev->a, a[1].v.s, a[1].n, &list, &err);
    if (!re) {
        r = cel_err_buf(ev->a, &err);
        buf_release(&err);
        return r;
    }
    r = cel_regex_find_all(ev, re, &a[0], n == 3 ? a[2].v.i : -1);
    cel_regex_free_list(list);
    return r;
}

static const struct cel_impl k8s_impls[] = {
    {"string_to_quantity", f_quantity, 0, false},
    {"is_quantity_string", f_is_quantity, 0, false},
    {"quantity_sign", f_q_sign, 0, false},
    {"quantity_is_greater_than", f_q_gt, 0, false},
    {"quantity_is_less_than", f_q_lt, 0, false},
    {"quantity_compare_to", f_q_cmp, 0, false},
    {"quantity_get_float", f_q_float, 0, false},
    {"quantity_get_int", f_q_int, 0, false},
    {"quantity_is_integer", f_q_is_int, 0, false},
    {"quantity_add", f_q_add, 0, false},
    {"quantity_add_int", f_q_add, 0, false},
    {"quantity_sub", f_q_sub, 0, false},
    {"quantity_sub_int", f_q_sub, 0, false},
    {"string_to_semver", f_semver, 0, false},
    {"string_bool_to_semver", f_semver, 0, false},
    {"is_semver_string", f_is_semver, 0, false},
    {"is_semver_string_bool", f_is_semver, 0, false},
    {"semver_major", f_sv_major, 0, false},
    {"semver_minor", f_sv_minor, 0, false},
    {"semver_patch", f_sv_patch, 0, false},
    {"semver_compare_to", f_sv_cmp, 0, false},
    {"semver_is_greater_than", f_sv_gt, 0, false},
    {"semver_is_less_than", f_sv_lt, 0, false},
    {"list_int_is_sorted_bool", f_is_sorted, 0, false},
    {"list_uint_is_sorted_bool", f_is_sorted, 0, false},
    {"list_double_is_sorted_bool", f_is_sorted, 0, false},
    {"list_bool_is_sorted_bool", f_is_sorted, 0, false},
    {"list_duration_is_sorted_bool", f_is_sorted, 0, false},
    {"list_timestamp_is_sorted_bool", f_is_sorted, 0, false},
    {"list_string_is_sorted_bool", f_is_sorted, 0, false},
    {"list_bytes_is_sorted_bool", f_is_sorted, 0, false},
    {"list_int_sum_int", f_sum_int, 0, false},
    {"list_uint_sum_uint", f_sum_uint, 0, false},
    {"list_double_sum_double", f_sum_double, 0, false},
    {"list_duration_sum_duration", f_sum_duration, 0, false},
    {"list_int_max_int", f_max, 0, false},
    {"list_uint_max_uint", f_max, 0, false},
    {"list_double_max_double", f_max, 0, false},
    {"list_bool_max_bool", f_max, 0, false},
    {"list_duration_max_duration", f_max, 0, false},
    {"list_timestamp_max_timestamp", f_max, 0, false},
    {"list_string_max_string", f_max, 0, false},
    {"list_bytes_max_bytes", f_max, 0, false},
    {"list_int_min_int", f_min, 0, false},
    {"list_uint_min_uint", f_min, 0, false},
    {"list_double_min_double", f_min, 0, false},
    {"list_bool_min_bool", f_min, 0, false},
    {"list_duration_min_duration", f_min, 0, false},
    {"list_timestamp_min_timestamp", f_min, 0, false},
    {"list_string_min_string", f_min, 0, false},
    {"list_bytes_min_bytes", f_min, 0, false},
    {"list_a_index_of_int", f_list_index_of, 0, false},
    {"list_a_last_index_of_int", f_list_last_index_of, 0, false},
    {"list_includes_dyn_dyn", f_includes, 0, false},
    {"string_find_string", f_find, 0, false},
    {"string_find_all_string", f_find_all, 0, false},
    {"string_find_all_string_int", f_find_all, 0, false},
};

const struct cel_impl *cel_k8s_impls(size_t *n)
{
    *n = sizeof(k8s_impls) / sizeof(k8s_impls[0]);
    return k8s_impls;
}
