/* std.c - CEL's standard functions (cel-go's common/stdlib and common/types methods).
 *
 * Arithmetic checks int64/uint64 overflow and division by zero with cel-go's messages;
 * comparisons order int, uint and double across types; conversions parse with Go's strconv
 * rules; a type's own method decides the error when a dyn operand has another type ("no such
 * overload" from the method, "no such overload: _+_" when the type lacks the trait). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cel/eval.h"
#include "cel/lib.h"
#include "cel/utf8.h"

#define NSO cel_err_static("no such overload")

/* list + list: a new list, or the comprehension accumulator grown in place */
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

static struct cel_val maybe_nso(const struct cel_val *v)
{
    return cel_maybe_no_such_overload(v);
}

static struct cel_val int_overflow(void)
{
    return cel_err_static("integer overflow");
}
static struct cel_val uint_overflow(void)
{
    return cel_err_static("unsigned integer overflow");
}

/* ---- arithmetic (trait singletons: args[0] has the trait) ---- */

static struct cel_val f_add(struct ev *ev, const struct cel_val *a, int n);

struct cel_val cel_add(struct ev *ev, const struct cel_val *a)
{
    return f_add(ev, a, 2);
}

static struct cel_val f_add(struct ev *ev, const struct cel_val *a, int n)
{
    const struct cel_val *x = &a[0], *y = &a[1];
    (void)n;
    switch (x->k) {
    case CV_INT: {
        int64_t r;
        if (y->k != CV_INT)
            return maybe_nso(y);
        if (__builtin_add_overflow(x->v.i, y->v.i, &r))
            return int_overflow();
        return cel_int(r);
    }
    case CV_UINT: {
        uint64_t r;
        if (y->k != CV_UINT)
            return maybe_nso(y);
        if (__builtin_add_overflow(x->v.u, y->v.u, &r))
            return uint_overflow();
        return cel_uint(r);
    }
    case CV_DOUBLE:
        if (y->k != CV_DOUBLE)
            return maybe_nso(y);
        return cel_double(x->v.d + y->v.d);
    case CV_STRING:
    case CV_BYTES: {
        struct cel_val r = {.k = x->k};
        char *p;
        if (y->k != x->k)
            return maybe_nso(y);
        if (y->n == 0)
            return *x;
        if (x->n == 0)
            return *y;
        p = arena_alloc(ev->a, (size_t)x->n + y->n + 1);
        if (!p)
            return cel_err_static("out of memory");
        memcpy(p, x->v.s, x->n);
        memcpy(p + x->n, y->v.s, y->n);
        r.v.s = p;
        r.n = x->n + y->n;
        return r;
    }
    case CV_LIST:
        return cel_list_concat(ev, x, y);
    case CV_DURATION:
    case CV_TIMESTAMP:
        return cel_time_add(ev, x, y, false);
    default:
        return NSO;
    }
}

static struct cel_val f_sub(struct ev *ev, const struct cel_val *a, int n)
{
    const struct cel_val *x = &a[0], *y = &a[1];
    (void)n;
    switch (x->k) {
    case CV_INT: {
        int64_t r;
        if (y->k != CV_INT)
            return maybe_nso(y);
        if (__builtin_sub_overflow(x->v.i, y->v.i, &r))
            return int_overflow();
        return cel_int(r);
    }
    case CV_UINT:
        if (y->k != CV_UINT)
            return maybe_nso(y);
        if (y->v.u > x->v.u)
            return uint_overflow();
        return cel_uint(x->v.u - y->v.u);
    case CV_DOUBLE:
        if (y->k != CV_DOUBLE)
            return maybe_nso(y);
        return cel_double(x->v.d - y->v.d);
    case CV_DURATION:
    case CV_TIMESTAMP:
        return cel_time_add(ev, x, y, true);
    default:
        return NSO;
    }
}

static struct cel_val f_mul(struct ev *ev, const struct cel_val *a, int n)
{
    const struct cel_val *x = &a[0], *y = &a[1];
    (void)ev;
    (void)n;
    switch (x->k) {
    case CV_INT: {
        int64_t r;
        if (y->k != CV_INT)
            return maybe_nso(y);
        if (__builtin_mul_overflow(x->v.i, y->v.i, &r))
            return int_overflow();
        return cel_int(r);
    }
    case CV_UINT: {
        uint64_t r;
        if (y->k != CV_UINT)
            return maybe_nso(y);
        if (__builtin_mul_overflow(x->v.u, y->v.u, &r))
            return uint_overflow();
        return cel_uint(r);
    }
    case CV_DOUBLE:
        if (y->k != CV_DOUBLE)
            return maybe_nso(y);
        return cel_double(x->v.d * y->v.d);
    default:
        return NSO;
    }
}

static struct cel_val f_div(struct ev *ev, const struct cel_val *a, int n)
{
    const struct cel_val *x = &a[0], *y = &a[1];
    (void)ev;
    (void)n;
    switch (x->k) {
    case CV_INT:
        if (y->k != CV_INT)
            return maybe_nso(y);
        if (y->v.i == 0)
            return cel_err_static("division by zero");
        if (x->v.i == INT64_MIN && y->v.i == -1)
            return int_overflow();
        return cel_int(x->v.i / y->v.i);
    case CV_UINT:
        if (y->k != CV_UINT)
            return maybe_nso(y);
        if (y->v.u == 0)
            return cel_err_static("division by zero");
        return cel_uint(x->v.u / y->v.u);
    case CV_DOUBLE:
        if (y->k != CV_DOUBLE)
            return maybe_nso(y);
        return cel_double(x->v.d / y->v.d);
    default:
        return NSO;
    }
}

static struct cel_val f_mod(struct ev *ev, const struct cel_val *a, int n)
{
    const struct cel_val *x = &a[0], *y = &a[1];
    (void)ev;
    (void)n;
    switch (x->k) {
    case CV_INT:
        if (y->k != CV_INT)
            return maybe_nso(y);
        if (y->v.i == 0)
            return cel_err_static("modulus by zero");
        if (x->v.i == INT64_MIN && y->v.i == -1)
            return int_overflow();
        return cel_int(x->v.i % y->v.i);
    case CV_UINT:
        if (y->k != CV_UINT)
            return maybe_nso(y);
        if (y->v.u == 0)
            return cel_err_static("modulus by zero");
        return cel_uint(x->v.u % y->v.u);
    default:
        return NSO;
    }
}

static struct cel_val f_neg(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    switch (a[0].k) {
    case CV_BOOL:
        return NSO;
    case CV_INT:
        if (a[0].v.i == INT64_MIN)
            return int_overflow();
        return cel_int(-a[0].v.i);
    case CV_DOUBLE:
        return cel_double(-a[0].v.d);
    case CV_DURATION: {
        struct cel_val r = a[0];
        if (r.v.i == INT64_MIN)
            return int_overflow();
        r.v.i = -r.v.i;
        return r;
    }
    default:
        return NSO;
    }
}

static struct cel_val f_not(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    if (a[0].k != CV_BOOL)
        return maybe_nso(&a[0]);
    return cel_bool(!a[0].v.b);
}

static struct cel_val f_not_strictly_false(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    if (a[0].k == CV_BOOL)
        return a[0];
    return cel_bool(true);
}

/* ---- comparison ---- */

static int cmp3(double a, double b)
{
    return a < b ? -1 : a > b ? 1 : 0;
}

/* Compare: sets *c to -1/0/1, or returns an error value (k == CV_ERROR). */
struct cel_val cel_compare(struct ev *ev, const struct cel_val *x, const struct cel_val *y, int *c)
{
    (void)ev;
    switch (x->k) {
    case CV_INT:
        if (y->k == CV_INT)
            *c = x->v.i < y->v.i ? -1 : x->v.i > y->v.i;
        else if (y->k == CV_UINT)
            *c = (x->v.i < 0 || y->v.u > (uint64_t)INT64_MAX) ? -1
                 : (uint64_t)x->v.i < y->v.u                  ? -1
                                                              : (uint64_t)x->v.i > y->v.u;
        else if (y->k == CV_DOUBLE) {
            double d = y->v.d;
            if (isnan(d))
                return cel_err_static("NaN values cannot be ordered");
            *c = d < -9223372036854775808.0  ? 1
                 : d > 9223372036854775807.0 ? -1
                                             : -cmp3(d, (double)x->v.i);
        } else
            return maybe_nso(y);
        return cel_bool(true);
    case CV_UINT:
        if (y->k == CV_UINT)
            *c = x->v.u < y->v.u ? -1 : x->v.u > y->v.u;
        else if (y->k == CV_INT)
            *c = (y->v.i < 0 || x->v.u > (uint64_t)INT64_MAX) ? 1
                 : x->v.u < (uint64_t)y->v.i                  ? -1
                                                              : x->v.u > (uint64_t)y->v.i;
        else if (y->k == CV_DOUBLE) {
            double d = y->v.d;
            if (isnan(d))
                return cel_err_static("NaN values cannot be ordered");
            *c = d < 0 ? 1 : d > 18446744073709551615.0 ? -1 : -cmp3(d, (double)x->v.u);
        } else
            return maybe_nso(y);
        return cel_bool(true);
    case CV_DOUBLE:
        if (isnan(x->v.d))
            return cel_err_static("NaN values cannot be ordered");
        if (y->k == CV_DOUBLE) {
            if (isnan(y->v.d))
                return cel_err_static("NaN values cannot be ordered");
            *c = cmp3(x->v.d, y->v.d);
        } else if (y->k == CV_INT) {
            double d = x->v.d;
            *c = d < -9223372036854775808.0  ? -1
                 : d > 9223372036854775807.0 ? 1
                                             : cmp3(d, (double)y->v.i);
        } else if (y->k == CV_UINT) {
            double d = x->v.d;
            *c = d < 0 ? -1 : d > 18446744073709551615.0 ? 1 : cmp3(d, (double)y->v.u);
        } else
            return maybe_nso(y);
        return cel_bool(true);
    case CV_STRING:
    case CV_BYTES: {
        size_t m;
        int r;
        if (y->k != x->k)
            return x->k == CV_STRING ? maybe_nso(y) : (y->k == CV_ERROR ? *y : NSO);
        m = x->n < y->n ? x->n : y->n;
        r = m ? memcmp(x->v.s, y->v.s, m) : 0;
        *c = r < 0 ? -1 : r > 0 ? 1 : x->n < y->n ? -1 : x->n > y->n;
        return cel_bool(true);
    }
    case CV_BOOL:
        if (y->k != CV_BOOL)
            return y->k == CV_ERROR ? *y : NSO;
        *c = x->v.b == y->v.b ? 0 : !x->v.b ? -1 : 1;
        return cel_bool(true);
    case CV_DURATION:
        if (y->k != CV_DURATION)
            return maybe_nso(y);
        *c = x->v.i < y->v.i ? -1 : x->v.i > y->v.i;
        return cel_bool(true);
    case CV_TIMESTAMP:
        if (y->k != CV_TIMESTAMP)
            return maybe_nso(y);
        *c = x->v.i < y->v.i ? -1 : x->v.i > y->v.i ? 1 : x->n < y->n ? -1 : x->n > y->n;
        return cel_bool(true);
    default:
        return NSO;
    }
}

static struct cel_val cmp_op(struct ev *ev, const struct cel_val *a, int which)
{
    int c = 0;
    struct cel_val r = cel_compare(ev, &a[0], &a[1], &c);
    if (r.k == CV_ERROR)
        return r;
    switch (which) {
    case 0:
        return cel_bool(c < 0);
    case 1:
        return cel_bool(c <= 0);
    case 2:
        return cel_bool(c > 0);
    default:
        return cel_bool(c >= 0);
    }
}

static struct cel_val f_lt(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return cmp_op(ev, a, 0);
}
static struct cel_val f_le(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return cmp_op(ev, a, 1);
}
static struct cel_val f_gt(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return cmp_op(ev, a, 2);
}
static struct cel_val f_ge(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return cmp_op(ev, a, 3);
}

/* ---- size, in, type, dyn ---- */

static struct cel_val f_size(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    switch (a[0].k) {
    case CV_STRING:
        return cel_int(cel_utf8_count(a[0].v.s, a[0].n));
    case CV_BYTES:
        return cel_int(a[0].n);
    case CV_LIST:
        return cel_int(a[0].v.l->n);
    case CV_MAP:
        return cel_int(a[0].v.m->n);
    default:
        return NSO;
    }
}

bool cel_in_list(const struct cel_list *l, const struct cel_val *v);
bool cel_in_map(const struct cel_map *m, const struct cel_val *v);

static struct cel_val f_in(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    if (a[1].k == CV_LIST)
        return cel_bool(cel_in_list(a[1].v.l, &a[0]));
    if (a[1].k == CV_MAP) {
        cel_map_key_check(ev, a[1].v.m, &a[0]);
        return cel_bool(cel_in_map(a[1].v.m, &a[0]));
    }
    return a[1].k == CV_ERROR ? a[1] : NSO;
}

static struct cel_val f_type(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    return cel_type_val(cel_val_type_name(&a[0]));
}

static struct cel_val f_identity(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    return a[0];
}

/* ---- conversions ---- */

static struct cel_val conv_err(struct ev *ev, const char *from, const char *to)
{
    return cel_err(ev->a, "type conversion error from '%s' to '%s'", from, to);
}

/* Go's strconv.ParseInt(s, 10, 64) / ParseUint */
static bool go_parse_int(const char *s, size_t n, bool is_unsigned, int64_t *iv, uint64_t *uv)
{
    size_t i = 0;
    bool neg = false;
    uint64_t v = 0;

    if (n == 0)
        return false;
    if (!is_unsigned && (s[0] == '+' || s[0] == '-')) {
        neg = s[0] == '-';
        i = 1;
        if (n == 1)
            return false;
    }
    for (; i < n; i++) {
        unsigned d;
        if (s[i] < '0' || s[i] > '9')
            return false;
        d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (is_unsigned) {
        *uv = v;
        return true;
    }
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1)
            return false;
        *iv = (int64_t)(0 - v);
    } else {
        if (v > (uint64_t)INT64_MAX)
            return false;
        *iv = (int64_t)v;
    }
    return true;
}

/* Go's underscoreOK: underscores only between digits or after a base prefix. */
static bool underscore_ok(const char *s, size_t n)
{
    char saw = '^';
    size_t i = 0;
    bool hex = false;

    if (n >= 1 && (s[0] == '-' || s[0] == '+')) {
        s++;
        n--;
    }
    if (n >= 2 && s[0] == '0' && s[1] && strchr("bBoOxX", s[1])) {
        i = 2;
        saw = '0';
        hex = s[1] == 'x' || s[1] == 'X';
    }
    for (; i < n; i++) {
        char c = s[i], l = (char)(c | 0x20);
        if ((c >= '0' && c <= '9') || (hex && l >= 'a' && l <= 'f')) {
            saw = '0';
            continue;
        }
        if (c == '_') {
            if (saw != '0')
                return false;
            saw = '_';
            continue;
        }
        if (saw == '_')
            return false;
        saw = '!';
    }
    return saw != '_';
}

static size_t prefix_ci(const char *s, size_t n, const char *word)
{
    size_t i = 0;
    while (i < n && word[i] && (char)(s[i] | 0x20) == word[i])
        i++;
    return i;
}

/* Go's strconv.ParseFloat(s, 64): decimal and hex ('p' exponent required) literals,
 * underscores as Go allows them, inf/infinity/nan, an error on overflow to infinity. */
bool cel_go_parse_float(const char *s, size_t n, double *out)
{
    char buf[512];
    size_t i = 0, k = 0;
    bool hex = false, underscores = false, digits = false, dot = false;

    if (n == 0 || n >= sizeof(buf))
        return false;
    {
        /* special(): [+-]inf, [+-]infinity, nan */
        size_t j = 0, m;
        int sign = 1;
        if (s[0] == '+' || s[0] == '-') {
            sign = s[0] == '-' ? -1 : 1;
            j = 1;
        }
        m = prefix_ci(s + j, n - j, "infinity");
        if (m > 3 && m < 8)
            m = 3;
        if ((m == 3 || m == 8) && (s[j] == 'i' || s[j] == 'I')) {
            if (j + m != n)
                return false;
            *out = sign * INFINITY;
            return true;
        }
        if (j == 0 && prefix_ci(s, n, "nan") == 3) {
            if (n != 3)
                return false;
            *out = NAN;
            return true;
        }
    }
    if (s[0] == '+' || s[0] == '-')
        buf[k++] = s[i++];
    if (i + 1 < n && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        hex = true;
        buf[k++] = s[i++];
        buf[k++] = s[i++];
    }
    for (; i < n; i++) {
        char c = s[i];
        if (c == '_') {
            underscores = true;
            continue;
        }
        if (c == '.') {
            if (dot)
                return false;
            dot = true;
            buf[k++] = c;
            continue;
        }
        if ((c >= '0' && c <= '9') || (hex && ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'))) {
            digits = true;
            buf[k++] = c;
            continue;
        }
        break;
    }
    if (!digits)
        return false;
    if (i < n &&
        ((!hex && (s[i] == 'e' || s[i] == 'E')) || (hex && (s[i] == 'p' || s[i] == 'P')))) {
        bool ed = false;
        buf[k++] = s[i++];
        if (i < n && (s[i] == '+' || s[i] == '-'))
            buf[k++] = s[i++];
        for (; i < n; i++) {
            if (s[i] == '_') {
                underscores = true;
                continue;
            }
            if (s[i] < '0' || s[i] > '9')
                break;
            ed = true;
            buf[k++] = s[i];
        }
        if (!ed)
            return false;
    } else if (hex) {
        return false;
    }
    if (i != n)
        return false;
    if (underscores && !underscore_ok(s, n))
        return false;
    buf[k] = 0;
    errno = 0;
    *out = strtod(buf, NULL);
    if (errno == ERANGE && isinf(*out))
        return false;
    return true;
}

static const char *type_display(const char *rt)
{
    /* Type.String() of runtime types as cel-go prints them in conversion errors */
    return rt;
}

static struct cel_val to_int(struct ev *ev, const struct cel_val *v)
{
    switch (v->k) {
    case CV_INT:
        return *v;
    case CV_UINT:
        if (v->v.u > (uint64_t)INT64_MAX)
            return int_overflow();
        return cel_int((int64_t)v->v.u);
    case CV_DOUBLE: {
        double d = v->v.d;
        if (isinf(d) || isnan(d) || d <= -9223372036854775808.0 || d >= 9223372036854775807.0)
            return int_overflow();
        return cel_int((int64_t)d);
    }
    case CV_STRING: {
        int64_t i;
        if (go_parse_int(v->v.s, v->n, false, &i, NULL))
            return cel_int(i);
        return conv_err(ev, "string", "int");
    }
    case CV_DURATION:
        return cel_int(v->v.i);
    case CV_TIMESTAMP:
        return cel_int(v->v.i);
    default:
        return conv_err(ev, type_display(cel_val_type_name(v)), "int");
    }
}

static struct cel_val to_uint(struct ev *ev, const struct cel_val *v)
{
    switch (v->k) {
    case CV_UINT:
        return *v;
    case CV_INT:
        if (v->v.i < 0)
            return uint_overflow();
        return cel_uint((uint64_t)v->v.i);
    case CV_DOUBLE: {
        double d = v->v.d;
        if (isinf(d) || isnan(d) || d < 0 || d >= 18446744073709551616.0)
            return uint_overflow();
        return cel_uint((uint64_t)d);
    }
    case CV_STRING: {
        uint64_t u;
        if (go_parse_int(v->v.s, v->n, true, NULL, &u))
            return cel_uint(u);
        return conv_err(ev, "string", "uint");
    }
    default:
        return conv_err(ev, cel_val_type_name(v), "uint");
    }
}

static struct cel_val to_double(struct ev *ev, const struct cel_val *v)
{
    switch (v->k) {
    case CV_DOUBLE:
        return *v;
    case CV_INT:
        return cel_double((double)v->v.i);
    case CV_UINT:
        return cel_double((double)v->v.u);
    case CV_STRING: {
        double d;
        if (cel_go_parse_float(v->v.s, v->n, &d))
            return cel_double(d);
        return conv_err(ev, "string", "double");
    }
    default:
        return conv_err(ev, cel_val_type_name(v), "double");
    }
}

static struct cel_val str_of_buf(struct ev *ev, struct buf *b)
{
    char *s = cel_ev_strdup(ev, b->data ? b->data : "", b->len);
    struct cel_val r = cel_str(s ? s : "", s ? (uint32_t)b->len : 0);
    buf_release(b);
    return r;
}

struct cel_val cel_to_string(struct ev *ev, const struct cel_val *v)
{
    struct buf b = BUF_INIT(0);
    switch (v->k) {
    case CV_STRING:
        return *v;
    case CV_BOOL:
        return v->v.b ? cel_str("true", 4) : cel_str("false", 5);
    case CV_INT:
        buf_printf(&b, "%lld", (long long)v->v.i);
        return str_of_buf(ev, &b);
    case CV_UINT:
        buf_printf(&b, "%llu", (unsigned long long)v->v.u);
        return str_of_buf(ev, &b);
    case CV_DOUBLE:
        cel_format_float(&b, v->v.d, 'g');
        return str_of_buf(ev, &b);
    case CV_BYTES: {
        /* utf8.Valid */
        size_t i = 0;
        while (i < v->n) {
            uint32_t r;
            size_t w = cel_utf8_decode(v->v.s + i, v->n - i, &r);
            if (r == 0xfffd && w == 1)
                return cel_err_static("invalid UTF-8 in bytes, cannot convert to string");
            i += w;
        }
        return cel_str(v->v.s, v->n);
    }
    case CV_NULL:
        return cel_str("null", 4);
    case CV_TYPE:
        return cel_str(v->v.s, (uint32_t)strlen(v->v.s));
    case CV_DURATION:
    case CV_TIMESTAMP:
        return cel_time_to_string(ev, v);
    case CV_IP:
    case CV_CIDR:
        return cel_ip_to_string(ev, v);
    default:
        return conv_err(ev, cel_val_type_name(v), "string");
    }
}

static struct cel_val to_bytes(struct ev *ev, const struct cel_val *v)
{
    struct cel_val r = *v;
    if (v->k == CV_BYTES)
        return *v;
    if (v->k == CV_STRING) {
        r.k = CV_BYTES;
        return r;
    }
    return conv_err(ev, cel_val_type_name(v), "bytes");
}

static struct cel_val to_bool(struct ev *ev, const struct cel_val *v)
{
    if (v->k == CV_BOOL)
        return *v;
    if (v->k == CV_STRING) {
        static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
        static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};
        for (int i = 0; i < 6; i++) {
            if (strlen(t[i]) == v->n && !memcmp(t[i], v->v.s, v->n))
                return cel_bool(true);
            if (strlen(f[i]) == v->n && !memcmp(f[i], v->v.s, v->n))
                return cel_bool(false);
        }
        return conv_err(ev, "string", "bool");
    }
    return conv_err(ev, cel_val_type_name(v), "bool");
}

static struct cel_val f_int(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return to_int(ev, &a[0]);
}
static struct cel_val f_uint(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return to_uint(ev, &a[0]);
}
static struct cel_val f_double(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return to_double(ev, &a[0]);
}
static struct cel_val f_string(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return cel_to_string(ev, &a[0]);
}
static struct cel_val f_bytes(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return to_bytes(ev, &a[0]);
}
static struct cel_val f_bool(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return to_bool(ev, &a[0]);
}

/* ---- strings ---- */

static bool str_args(const struct cel_val *a, struct cel_val *err)
{
    if (a[0].k != CV_STRING) {
        *err = maybe_nso(&a[0]);
        return false;
    }
    if (a[1].k != CV_STRING) {
        *err = maybe_nso(&a[1]);
        return false;
    }
    return true;
}

static struct cel_val f_contains(struct ev *ev, const struct cel_val *a, int n)
{
    struct cel_val e;
    (void)ev;
    (void)n;
    if (!str_args(a, &e))
        return e;
    if (a[1].n == 0)
        return cel_bool(true);
    if (a[1].n > a[0].n)
        return cel_bool(false);
    return cel_bool(memmem(a[0].v.s, a[0].n, a[1].v.s, a[1].n) != NULL);
}

static struct cel_val f_starts(struct ev *ev, const struct cel_val *a, int n)
{
    struct cel_val e;
    (void)ev;
    (void)n;
    if (!str_args(a, &e))
        return e;
    return cel_bool(a[1].n <= a[0].n && !memcmp(a[0].v.s, a[1].v.s, a[1].n));
}

static struct cel_val f_ends(struct ev *ev, const struct cel_val *a, int n)
{
    struct cel_val e;
    (void)ev;
    (void)n;
    if (!str_args(a, &e))
        return e;
    return cel_bool(a[1].n <= a[0].n && !memcmp(a[0].v.s + a[0].n - a[1].n, a[1].v.s, a[1].n));
}

static struct cel_val f_matches(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    if (a[0].k != CV_STRING)
        return NSO;
    if (a[1].k != CV_STRING)
        return maybe_nso(&a[1]);
    return cel_regex_matches(ev, &a[0], &a[1]);
}

static const struct cel_impl std_impls[] = {
    /* singletons with operand traits */
    {"_+_", f_add, TR_ADDER, false},
    {"_-_", f_sub, TR_SUBTRACTOR, false},
    {"_*_", f_mul, TR_MULTIPLIER, false},
    {"_/_", f_div, TR_DIVIDER, false},
    {"_%_", f_mod, TR_MODDER, false},
    {"-_", f_neg, TR_NEGATOR, false},
    {"!_", f_not, 0, true},
    {"_<_", f_lt, TR_COMPARER, false},
    {"_<=_", f_le, TR_COMPARER, false},
    {"_>_", f_gt, TR_COMPARER, false},
    {"_>=_", f_ge, TR_COMPARER, false},
    {"size", f_size, TR_SIZER, false},
    {"@in", f_in, 0, true},
    {"type", f_type, 0, true},
    {"dyn", f_identity, 0, true},
    {"matches", f_matches, TR_MATCHER, false},
    /* overloads */
    {"not_strictly_false", f_not_strictly_false, 0, false},
    {"int64_to_int64", f_identity, 0, false},
    {"double_to_int64", f_int, 0, false},
    {"duration_to_int64", f_int, 0, false},
    {"string_to_int64", f_int, 0, false},
    {"timestamp_to_int64", f_int, 0, false},
    {"uint64_to_int64", f_int, 0, false},
    {"uint64_to_uint64", f_identity, 0, false},
    {"double_to_uint64", f_uint, 0, false},
    {"int64_to_uint64", f_uint, 0, false},
    {"string_to_uint64", f_uint, 0, false},
    {"double_to_double", f_identity, 0, false},
    {"int64_to_double", f_double, 0, false},
    {"string_to_double", f_double, 0, false},
    {"uint64_to_double", f_double, 0, false},
    {"string_to_string", f_identity, 0, false},
    {"bool_to_string", f_string, 0, false},
    {"bytes_to_string", f_string, 0, false},
    {"double_to_string", f_string, 0, false},
    {"duration_to_string", f_string, 0, false},
    {"int64_to_string", f_string, 0, false},
    {"timestamp_to_string", f_string, 0, false},
    {"uint64_to_string", f_string, 0, false},
    {"bytes_to_bytes", f_identity, 0, false},
    {"string_to_bytes", f_bytes, 0, false},
    {"bool_to_bool", f_identity, 0, false},
    {"string_to_bool", f_bool, 0, false},
    {"contains_string", f_contains, 0, true},
    {"starts_with_string", f_starts, 0, true},
    {"ends_with_string", f_ends, 0, true},
};

const struct cel_impl *cel_std_impls(size_t *n)
{
    *n = sizeof(std_impls) / sizeof(std_impls[0]);
    return std_impls;
}
