/* strfmt.c - <string>.format(<list>) of cel-go's strings extension at version 2, as the
 * Kubernetes environment has it: the format string parser (shared with the compile-time check
 * in check.c) and the clauses, with the en_US locale's number printing for %f and %e
 * (golang.org/x/text/message: grouped thousands, "×10⁰³", "∞"; %e's precision taken as its
 * width, as cel-go's "%%%de" does). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cel/eval.h"
#include "cel/lib.h"
#include "cel/semver.h"
#include "cel/strfmt.h"
#include "cel/utf8.h"

static void put_rune(struct buf *b, uint32_t r)
{
    char t[4];
    size_t n = cel_utf8_encode(r, t);
    buf_append(b, t, n);
}

int cel_fmt_parse(const char *f, size_t n, const struct cel_fmt_ops *ops, void *ctx,
                  struct buf *out, struct buf *err, int64_t *err_id)
{
    size_t i = 0;
    int64_t arg = 0;

    *err_id = 0;
    while (i < n) {
        if (f[i] != '%') {
            buf_append(out, f + i, 1);
            i++;
            continue;
        }
        if (i + 1 < n && f[i + 1] == '%') {
            buf_append(out, "%", 1);
            i += 2;
            continue;
        }
        if (!ops->arg(ctx, arg, err))
            return -1;
        if (i + 1 >= n) {
            buf_puts(err, "unexpected end of string");
            return -1;
        }
        if (arg >= ops->size(ctx)) {
            buf_printf(err, "index %" PRId64 " out of range", arg);
            return -1;
        }
        /* parseAndFormatClause on f[i+1:] */
        {
            const char *c = f + i + 1;
            size_t cn = n - i - 1, k = 0;
            int prec = -1;
            char verb;
            if (c[0] == '.') {
                size_t ds = 1;
                k = 1;
                for (;;) {
                    if (k >= cn) {
                        buf_puts(err, "could not parse formatting clause: error while parsing "
                                      "precision: could not find end of precision specifier");
                        return -1;
                    }
                    if (c[k] < '0' || c[k] > '9')
                        break;
                    k++;
                }
                /* strconv.Atoi */
                if (k == ds) {
                    buf_puts(err, "could not parse formatting clause: error while parsing "
                                  "precision: error while converting precision to integer: "
                                  "strconv.Atoi: parsing \"\": invalid syntax");
                    return -1;
                }
                {
                    uint64_t v = 0;
                    bool range = false;
                    for (size_t q = ds; q < k; q++) {
                        v = v * 10 + (uint64_t)(c[q] - '0');
                        if (v > (uint64_t)INT64_MAX) {
                            range = true;
                            v = (uint64_t)INT64_MAX;
                        }
                    }
                    if (range) {
                        buf_puts(err, "could not parse formatting clause: error while parsing "
                                      "precision: error while converting precision to integer: "
                                      "strconv.Atoi: parsing ");
                        cel_go_quote(err, c + ds, k - ds);
                        buf_puts(err, ": value out of range");
                        return -1;
                    }
                    if (v > CEL_FMT_MAX_PRECISION) {
                        buf_printf(err,
                                   "could not parse formatting clause: precision %" PRIu64
                                   " is past what this evaluator prints (%d)",
                                   v, CEL_FMT_MAX_PRECISION);
                        return -1;
                    }
                    prec = (int)v;
                }
            }
            verb = c[k];
            k++;
            switch (verb) {
            case 's':
            case 'd':
            case 'f':
            case 'e':
            case 'b':
            case 'x':
            case 'X':
            case 'o':
                break;
            default:
                buf_puts(err,
                         "could not parse formatting clause: unrecognized formatting clause \"");
                put_rune(err, (unsigned char)verb);
                buf_puts(err, "\"");
                return -1;
            }
            {
                size_t mark = err->len;
                if (!ops->clause(ctx, arg, verb, prec, out, err, err_id)) {
                    /* prefix the clause's message */
                    struct buf m = BUF_INIT(0);
                    buf_puts(&m, "error during formatting: ");
                    buf_append(&m, err->data + mark, err->len - mark);
                    err->len = mark;
                    if (err->data)
                        err->data[mark] = 0;
                    buf_append(err, m.data, m.len);
                    buf_release(&m);
                    return -1;
                }
            }
            i += 1 + k;
            arg++;
        }
    }
    return 0;
}

/* ---- the runtime clauses ---- */

struct rctx {
    struct ev *ev;
    const struct cel_list *args;
};

static bool r_arg(void *ctx, int64_t i, struct buf *err)
{
    struct rctx *r = ctx;
    if (i >= (int64_t)r->args->n) {
        buf_printf(err, "index %" PRId64 " out of range", i);
        return false;
    }
    return true;
}

static int64_t r_size(void *ctx)
{
    return ((struct rctx *)ctx)->args->n;
}

static bool fmt_value(struct ev *ev, const struct cel_val *v, struct buf *out, struct buf *err);

static void type_name(struct buf *b, const struct cel_val *v)
{
    buf_puts(b, cel_val_type_name(v));
}

/* FormatString */
static bool fmt_string(struct ev *ev, const struct cel_val *v, struct buf *out, struct buf *err)
{
    switch (v->k) {
    case CV_LIST:
    case CV_MAP:
        return fmt_value(ev, v, out, err);
    case CV_NULL:
        buf_puts(out, "null");
        return true;
    case CV_INT:
    case CV_UINT:
    case CV_DOUBLE:
    case CV_BOOL:
    case CV_STRING:
    case CV_TIMESTAMP:
    case CV_BYTES:
    case CV_DURATION:
    case CV_TYPE: {
        struct cel_val s = cel_to_string(ev, v);
        if (s.k != CV_STRING) {
            buf_puts(err, "could not convert argument ");
            cel_go_quote(err, s.k == CV_ERROR ? s.v.s : "", s.k == CV_ERROR ? strlen(s.v.s) : 0);
            buf_puts(err, " to string");
            return false;
        }
        buf_append(out, s.v.s, s.n);
        return true;
    }
    default:
        buf_puts(err, "string clause can only be used on strings, bools, bytes, ints, doubles, "
                      "maps, lists, types, durations, and timestamps, was given ");
        type_name(err, v);
        return false;
    }
}

static bool fmt_decimal(const struct cel_val *v, struct buf *out, struct buf *err)
{
    if (v->k == CV_INT) {
        buf_printf(out, "%" PRId64, v->v.i);
        return true;
    }
    if (v->k == CV_UINT) {
        buf_printf(out, "%" PRIu64, v->v.u);
        return true;
    }
    buf_puts(err, "decimal clause can only be used on integers, was given ");
    type_name(err, v);
    return false;
}

/* Go's fmt %.6f (NaN, +Inf, -Inf spelled as Go does) */
static void go_fixed6(struct buf *out, double d)
{
    if (isnan(d))
        buf_puts(out, "NaN");
    else if (isinf(d))
        buf_puts(out, d > 0 ? "+Inf" : "-Inf");
    else
        buf_printf(out, "%.6f", d);
}

/* quoteForCEL around an already formatted member */
static bool fmt_member(struct ev *ev, const struct cel_val *v, bool key, struct buf *out,
                       struct buf *err)
{
    struct buf s = BUF_INIT(0);
    bool ok = true;

    switch (v->k) {
    case CV_INT:
    case CV_UINT:
        ok = fmt_decimal(v, &s, err);
        break;
    case CV_STRING:
    case CV_BOOL:
        ok = fmt_string(ev, v, &s, err);
        break;
    case CV_BYTES:
    case CV_NULL:
    case CV_TYPE:
        if (key)
            goto nokey;
        ok = fmt_string(ev, v, &s, err);
        break;
    case CV_TIMESTAMP:
    case CV_DURATION: {
        struct cel_val t;
        if (key)
            goto nokey;
        t = cel_to_string(ev, v);
        buf_puts(&s, v->k == CV_TIMESTAMP ? "timestamp(" : "duration(");
        cel_go_quote(&s, t.k == CV_STRING ? t.v.s : "", t.k == CV_STRING ? t.n : 0);
        buf_puts(&s, ")");
        break;
    }
    case CV_LIST:
    case CV_MAP:
        if (key)
            goto nokey;
        ok = fmt_value(ev, v, &s, err);
        break;
    case CV_DOUBLE:
        if (key)
            goto nokey;
        go_fixed6(&s, v->v.d);
        break;
    default:
        if (key)
            goto nokey;
        buf_puts(err, "no formatting function for ");
        type_name(err, v);
        ok = false;
        break;
    }
    if (ok) {
        const char *p = s.data ? s.data : "";
        if (v->k == CV_STRING) {
            cel_go_quote(out, p, s.len);
        } else if (v->k == CV_BYTES) {
            buf_puts(out, "b");
            cel_go_quote(out, p, s.len);
        } else if (v->k == CV_DOUBLE && (isnan(v->v.d) || isinf(v->v.d))) {
            cel_go_quote(out, p, s.len);
        } else {
            buf_append(out, p, s.len);
        }
    }
    buf_release(&s);
    return ok;
nokey:
    buf_puts(err, "no formatting function for map key of type ");
    type_name(err, v);
    buf_release(&s);
    return false;
}

struct pair {
    char *key, *val;
    size_t kn, vn;
};

static int pair_cmp(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;
    size_t n = x->kn < y->kn ? x->kn : y->kn;
    int c = memcmp(x->key, y->key, n);
    if (c)
        return c;
    return x->kn < y->kn ? -1 : x->kn > y->kn ? 1 : 0;
}

/* formatList / formatMap */
static bool fmt_value(struct ev *ev, const struct cel_val *v, struct buf *out, struct buf *err)
{
    if (v->k == CV_LIST) {
        buf_puts(out, "[");
        for (uint32_t i = 0; i < v->v.l->n; i++) {
            if (!fmt_member(ev, &v->v.l->v[i], false, out, err))
                return false;
            if (i + 1 < v->v.l->n)
                buf_puts(out, ", ");
        }
        buf_puts(out, "]");
        return true;
    }
    {
        const struct cel_map *m = v->v.m;
        struct pair *pairs = calloc(m->n ? m->n : 1, sizeof(*pairs));
        bool ok = true;
        uint32_t i;
        if (!pairs) {
            buf_puts(err, "out of memory");
            return false;
        }
        for (i = 0; i < m->n && ok; i++) {
            struct buf k = BUF_INIT(0), val = BUF_INIT(0);
            ok = fmt_member(ev, &m->keys[i], true, &k, err) &&
                 fmt_member(ev, &m->vals[i], false, &val, err);
            pairs[i].kn = k.len;
            pairs[i].key = buf_take(&k);
            pairs[i].vn = val.len;
            pairs[i].val = buf_take(&val);
            buf_release(&k);
            buf_release(&val);
            if (!pairs[i].key || !pairs[i].val)
                ok = false;
        }
        if (ok) {
            /* sort.SliceStable by key: a merge-free stable insertion sort (maps are small) */
            for (uint32_t a = 1; a < m->n; a++) {
                struct pair t = pairs[a];
                uint32_t b = a;
                while (b > 0 && pair_cmp(&pairs[b - 1], &t) > 0) {
                    pairs[b] = pairs[b - 1];
                    b--;
                }
                pairs[b] = t;
            }
            buf_puts(out, "{");
            for (uint32_t a = 0; a < m->n; a++) {
                buf_append(out, pairs[a].key, pairs[a].kn);
                buf_puts(out, ":");
                buf_append(out, pairs[a].val, pairs[a].vn);
                if (a + 1 < m->n)
                    buf_puts(out, ", ");
            }
            buf_puts(out, "}");
        }
        for (uint32_t a = 0; a < i; a++) {
            free(pairs[a].key);
            free(pairs[a].val);
        }
        free(pairs);
        return ok;
    }
}

/* the argument of %f / %e as a double: a double, or the strings NaN, Infinity, -Infinity */
static bool float_arg(const struct cel_val *v, double *d)
{
    if (v->k == CV_DOUBLE) {
        *d = v->v.d;
        return true;
    }
    if (v->k == CV_STRING) {
        if (v->n == 3 && !memcmp(v->v.s, "NaN", 3)) {
            *d = NAN;
            return true;
        }
        if (v->n == 8 && !memcmp(v->v.s, "Infinity", 8)) {
            *d = INFINITY;
            return true;
        }
        if (v->n == 9 && !memcmp(v->v.s, "-Infinity", 9)) {
            *d = -INFINITY;
            return true;
        }
    }
    return false;
}

/* en_US %.Nf: the digits of Go's strconv (exact, ties to even: as glibc's), thousands grouped */
static void locale_fixed(struct buf *out, double d, int prec)
{
    if (isnan(d)) {
        buf_puts(out, "NaN");
        return;
    }
    if (isinf(d)) {
        buf_puts(out, d > 0 ? "∞" : "-∞");
        return;
    }
    {
        int n = snprintf(NULL, 0, "%.*f", prec, fabs(d));
        char *s = malloc((size_t)n + 1);
        size_t ip;
        if (!s)
            return;
        snprintf(s, (size_t)n + 1, "%.*f", prec, fabs(d));
        if (d < 0)
            buf_puts(out, "-");
        for (ip = 0; s[ip] && s[ip] != '.'; ip++)
            ;
        for (size_t i = 0; i < ip; i++) {
            if (i > 0 && (ip - i) % 3 == 0)
                buf_puts(out, ",");
            buf_append(out, s + i, 1);
        }
        buf_puts(out, s + ip);
        free(s);
    }
}

static const char *const superscript[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};

/* en_US "%We": six digits after the point, "×10" and a superscript exponent of two digits
 * or more, padded on the left with spaces to W runes */
static void locale_sci(struct buf *out, double d, int width)
{
    struct buf s = BUF_INIT(0);
    size_t runes = 0;

    if (isnan(d)) {
        buf_puts(&s, "NaN");
        runes = 3;
    } else if (isinf(d)) {
        buf_puts(&s, d > 0 ? "∞" : "-∞");
        runes = d > 0 ? 1 : 2;
    } else {
        char t[64], *e;
        int exp10;
        snprintf(t, sizeof(t), "%.6e", fabs(d));
        e = strchr(t, 'e');
        exp10 = atoi(e + 1);
        *e = 0;
        if (d < 0) {
            buf_puts(&s, "-");
            runes++;
        }
        buf_puts(&s, t);
        runes += strlen(t);
        buf_puts(&s, "×10");
        runes += 3;
        if (exp10 < 0) {
            buf_puts(&s, "⁻");
            runes++;
            exp10 = -exp10;
        }
        {
            char ds[8];
            int nd = snprintf(ds, sizeof(ds), "%02d", exp10);
            for (int i = 0; i < nd; i++)
                buf_puts(&s, superscript[ds[i] - '0']);
            runes += (size_t)nd;
        }
    }
    for (size_t i = runes; width > 0 && i < (size_t)width; i++)
        buf_puts(out, " ");
    buf_append(out, s.data, s.len);
    buf_release(&s);
}

static void go_base(struct buf *out, bool neg, uint64_t u, int base, bool upper)
{
    char t[72];
    int n = 0;
    const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
        t[n++] = dig[u % (unsigned)base];
        u /= (unsigned)base;
    } while (u);
    if (neg)
        buf_puts(out, "-");
    while (n > 0)
        buf_append(out, &t[--n], 1);
}

static bool r_clause(void *ctx, int64_t i, char verb, int prec, struct buf *out, struct buf *err,
                     int64_t *err_id)
{
    struct rctx *r = ctx;
    const struct cel_val *v = &r->args->v[i];
    double d;

    (void)err_id;
    switch (verb) {
    case 's':
        return fmt_string(r->ev, v, out, err);
    case 'd':
        return fmt_decimal(v, out, err);
    case 'f':
        if (!float_arg(v, &d)) {
            buf_puts(err, "fixed-point clause can only be used on doubles, was given ");
            type_name(err, v);
            return false;
        }
        locale_fixed(out, d, prec < 0 ? 6 : prec);
        return true;
    case 'e':
        if (!float_arg(v, &d)) {
            buf_puts(err, "scientific clause can only be used on doubles, was given ");
            type_name(err, v);
            return false;
        }
        locale_sci(out, d, prec < 0 ? 6 : prec);
        return true;
    case 'b':
        if (v->k == CV_INT) {
            go_base(out, v->v.i < 0, v->v.i < 0 ? 0 - (uint64_t)v->v.i : (uint64_t)v->v.i, 2,
                    false);
        } else if (v->k == CV_UINT) {
            go_base(out, false, v->v.u, 2, false);
        } else if (v->k == CV_BOOL) {
            buf_puts(out, v->v.b ? "1" : "0");
        } else {
            buf_puts(err, "only integers and bools can be formatted as binary, was given ");
            type_name(err, v);
            return false;
        }
        return true;
    case 'x':
    case 'X':
        if (v->k == CV_STRING || v->k == CV_BYTES) {
            const char *dig = verb == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
            for (uint32_t k = 0; k < v->n; k++) {
                unsigned char c = (unsigned char)v->v.s[k];
                char t[2] = {dig[c >> 4], dig[c & 15]};
                buf_append(out, t, 2);
            }
        } else if (v->k == CV_INT) {
            go_base(out, v->v.i < 0, v->v.i < 0 ? 0 - (uint64_t)v->v.i : (uint64_t)v->v.i, 16,
                    verb == 'X');
        } else if (v->k == CV_UINT) {
            go_base(out, false, v->v.u, 16, verb == 'X');
        } else {
            buf_puts(err, "only integers, byte buffers, and strings can be formatted as hex, was "
                          "given ");
            type_name(err, v);
            return false;
        }
        return true;
    case 'o':
        if (v->k == CV_INT) {
            go_base(out, v->v.i < 0, v->v.i < 0 ? 0 - (uint64_t)v->v.i : (uint64_t)v->v.i, 8,
                    false);
        } else if (v->k == CV_UINT) {
            go_base(out, false, v->v.u, 8, false);
        } else {
            buf_puts(err, "octal clause can only be used on integers, was given ");
            type_name(err, v);
            return false;
        }
        return true;
    }
    return false;
}

struct cel_val cel_string_format(struct ev *ev, const struct cel_val *f, const struct cel_list *l)
{
    static const struct cel_fmt_ops ops = {r_arg, r_size, r_clause};
    struct rctx ctx = {ev, l};
    struct buf out = BUF_INIT(0), err = BUF_INIT(0);
    int64_t id;
    struct cel_val r;

    if (cel_fmt_parse(f->v.s, f->n, &ops, &ctx, &out, &err, &id) < 0) {
        r = cel_err(ev->a, "%s", err.data ? err.data : "format error");
    } else {
        char *s = cel_ev_strdup(ev, out.data ? out.data : "", out.len);
        r = s ? cel_str(s, (uint32_t)out.len) : cel_err_static("out of memory");
    }
    buf_release(&out);
    buf_release(&err);
    return r;
}
