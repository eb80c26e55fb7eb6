/* value.c - CEL runtime values: type names, equality, Go-style rendering.
 *
 * Equality is cel-go's types.Equal: null equals only null; int, uint and double compare by
 * numeric value (NaN equals nothing); lists element by element; maps key by key with the
 * numeric key lookup of cel-go's maps. Rendering follows Go's fmt %v, which cel-go's error
 * messages use ("no such key: 1.5", "no such overload"). */
#include "cel/value.h"

#include "cel/eval.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cel/quantity.h"
#include "cel/semver.h"

const char *cel_val_type_name(const struct cel_val *v)
{
    switch (v->k) {
    case CV_NULL:
        return "null_type";
    case CV_BOOL:
        return "bool";
    case CV_INT:
        return "int";
    case CV_UINT:
        return "uint";
    case CV_DOUBLE:
        return "double";
    case CV_STRING:
        return "string";
    case CV_BYTES:
        return "bytes";
    case CV_LIST:
        return "list";
    case CV_MAP:
        return "map";
    case CV_TYPE:
        return "type";
    case CV_OPTIONAL:
        return "optional_type";
    case CV_ERROR:
        return "error";
    case CV_DURATION:
        return "google.protobuf.Duration";
    case CV_TIMESTAMP:
        return "google.protobuf.Timestamp";
    case CV_QUANTITY:
        return "kubernetes.Quantity";
    case CV_SEMVER:
        return "kubernetes.Semver";
    case CV_IP:
        return "net.IP";
    case CV_CIDR:
        return "net.CIDR";
    case CV_URL:
        return "kubernetes.URL";
    case CV_FORMAT:
        return "kubernetes.NamedFormat";
    }
    return "unknown";
}

struct cel_val cel_err_buf(struct arena *a, const struct buf *b)
{
    struct cel_val v = {.k = CV_ERROR};
    char *s = a ? arena_alloc(a, b->len + 1) : NULL;
    if (!s) {
        v.v.s = "out of memory";
        return v;
    }
    if (b->len)
        memcpy(s, b->data, b->len);
    s[b->len] = 0;
    v.v.s = s;
    v.n = (uint32_t)b->len;
    return v;
}

struct cel_val cel_err(struct arena *a, const char *fmt, ...)
{
    struct cel_val v = {.k = CV_ERROR};
    char tmp[512];
    va_list ap;
    int n;
    char *s;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    s = a ? arena_alloc(a, (size_t)n + 1) : NULL;
    if (!s) {
        v.v.s = "out of memory";
        return v;
    }
    if ((size_t)n < sizeof(tmp)) {
        memcpy(s, tmp, (size_t)n + 1);
    } else {
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    v.v.s = s;
    return v;
}

/* compareDoubleInt and friends (common/types/compare.go) */
static int cmp_double_int(double d, int64_t i)
{
    if (d < -9223372036854775808.0)
        return -1;
    if (d > 9223372036854775807.0)
        return 1;
    if (d < (double)i)
        return -1;
    if (d > (double)i)
        return 1;
    return 0;
}

static int cmp_double_uint(double d, uint64_t u)
{
    if (d < 0)
        return -1;
    if (d > 18446744073709551615.0)
        return 1;
    if (d < (double)u)
        return -1;
    if (d > (double)u)
        return 1;
    return 0;
}

static int cmp_int_uint(int64_t i, uint64_t u)
{
    if (i < 0 || u > (uint64_t)INT64_MAX)
        return -1;
    if ((uint64_t)i < u)
        return -1;
    if ((uint64_t)i > u)
        return 1;
    return 0;
}

/* A map lookup with cel-go's key rules; returns the value or NULL. */
const struct cel_val *cel_map_find(const struct cel_map *m, const struct cel_val *key);

static bool bytes_eq(const struct cel_val *a, const struct cel_val *b)
{
    return a->n == b->n && (a->n == 0 || !memcmp(a->v.s, b->v.s, a->n));
}

bool cel_val_equal(const struct cel_val *a, const struct cel_val *b)
{
    if (a->k == CV_NULL || b->k == CV_NULL)
        return a->k == b->k;
    switch (a->k) {
    case CV_BOOL:
        return b->k == CV_BOOL && a->v.b == b->v.b;
    case CV_INT:
        if (b->k == CV_INT)
            return a->v.i == b->v.i;
        if (b->k == CV_UINT)
            return cmp_int_uint(a->v.i, b->v.u) == 0;
        if (b->k == CV_DOUBLE)
            return !isnan(b->v.d) && cmp_double_int(b->v.d, a->v.i) == 0;
        return false;
    case CV_UINT:
        if (b->k == CV_UINT)
            return a->v.u == b->v.u;
        if (b->k == CV_INT)
            return cmp_int_uint(b->v.i, a->v.u) == 0;
        if (b->k == CV_DOUBLE)
            return !isnan(b->v.d) && cmp_double_uint(b->v.d, a->v.u) == 0;
        return false;
    case CV_DOUBLE:
        if (isnan(a->v.d))
            return false;
        if (b->k == CV_DOUBLE)
            return !isnan(b->v.d) && a->v.d == b->v.d;
        if (b->k == CV_INT)
            return cmp_double_int(a->v.d, b->v.i) == 0;
        if (b->k == CV_UINT)
            return cmp_double_uint(a->v.d, b->v.u) == 0;
        return false;
    case CV_STRING:
    case CV_BYTES:
        return b->k == a->k && bytes_eq(a, b);
    case CV_TYPE:
        return b->k == CV_TYPE && !strcmp(a->v.s, b->v.s);
    case CV_LIST:
        if (b->k != CV_LIST || a->v.l->n != b->v.l->n)
            return false;
        for (uint32_t i = 0; i < a->v.l->n; i++)
            if (!cel_val_equal(&a->v.l->v[i], &b->v.l->v[i]))
                return false;
        return true;
    case CV_MAP:
        if (b->k != CV_MAP || a->v.m->n != b->v.m->n)
            return false;
        for (uint32_t i = 0; i < a->v.m->n; i++) {
            const struct cel_val *o = cel_map_find(b->v.m, &a->v.m->keys[i]);
            if (!o || !cel_val_equal(&a->v.m->vals[i], o))
                return false;
        }
        return true;
    case CV_OPTIONAL:
        if (b->k != CV_OPTIONAL)
            return false;
        if (!a->v.o || !b->v.o)
            return !a->v.o && !b->v.o;
        return cel_val_equal(a->v.o, b->v.o);
    case CV_DURATION:
        return b->k == CV_DURATION && a->v.i == b->v.i;
    case CV_TIMESTAMP:
        return b->k == CV_TIMESTAMP && a->v.i == b->v.i && a->n == b->n;
    case CV_QUANTITY:
        return b->k == CV_QUANTITY && cel_quantity_cmp(a->v.q, b->v.q) == 0;
    case CV_SEMVER:
        return b->k == CV_SEMVER && cel_semver_cmp(a->v.sv, b->v.sv) == 0;
    case CV_IP:
        return b->k == CV_IP && a->v.ip->v4 == b->v.ip->v4 && !memcmp(a->v.ip->a, b->v.ip->a, 16);
    case CV_CIDR:
        return b->k == CV_CIDR && a->v.ip->v4 == b->v.ip->v4 &&
               a->v.ip->prefix == b->v.ip->prefix && !memcmp(a->v.ip->a, b->v.ip->a, 16);
    case CV_FORMAT:
        return b->k == CV_FORMAT && !strcmp(a->v.s, b->v.s);
    case CV_URL:
        return b->k == CV_URL && a->v.url->str.n == b->v.url->str.n &&
               !memcmp(a->v.url->str.s, b->v.url->str.s, a->v.url->str.n);
    default:
        return false;
    }
}

/* Go's strconv.FormatFloat(d, c, -1, 64): the shortest digits that read back as d. */
void cel_format_float(struct buf *b, double d, char c)
{
    char digits[32], tmp[40];
    int nd = 0, exp10 = 0;

    if (isnan(d)) {
        buf_puts(b, "NaN");
        return;
    }
    if (isinf(d)) {
        buf_puts(b, d > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (signbit(d)) {
        buf_puts(b, "-");
        d = -d;
    }
    if (d == 0) {
        digits[0] = '0';
        nd = 1;
        exp10 = 0;
    } else {
        for (int prec = 1; prec <= 17; prec++) {
            char *e;
            snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, d);
            if (strtod(tmp, NULL) == d || prec == 17) {
                /* tmp: d.ddddde[+-]xx */
                nd = 0;
                for (char *p = tmp; *p && *p != 'e'; p++)
                    if (*p >= '0' && *p <= '9')
                        digits[nd++] = *p;
                e = strchr(tmp, 'e');
                exp10 = atoi(e + 1);
                break;
            }
        }
        while (nd > 1 && digits[nd - 1] == '0')
            nd--;
    }
    /* digits d1 d2 ... with value 0.d1d2.. x 10^(exp10+1) */
    if (c == 'g') /* shortest %g: %e when the exponent is < -4 or >= 6 */
        c = (exp10 < -4 || exp10 >= 6) ? 'e' : 'f';
    if (c == 'e') {
        buf_append(b, digits, 1);
        if (nd > 1) {
            buf_puts(b, ".");
            buf_append(b, digits + 1, (size_t)nd - 1);
        }
        buf_printf(b, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
        return;
    }
    /* 'f' */
    if (exp10 < 0) {
        buf_puts(b, "0.");
        for (int i = 0; i < -exp10 - 1; i++)
            buf_puts(b, "0");
        buf_append(b, digits, (size_t)nd);
    } else {
        int intd = exp10 + 1;
        for (int i = 0; i < intd; i++)
            buf_append(b, i < nd ? &digits[i] : "0", 1);
        if (nd > intd) {
            buf_puts(b, ".");
            buf_append(b, digits + intd, (size_t)(nd - intd));
        }
    }
}

void cel_val_format_v(struct buf *b, const struct cel_val *v)
{
    switch (v->k) {
    case CV_NULL:
        buf_puts(b, "NULL_VALUE");
        break;
    case CV_BOOL:
        buf_puts(b, v->v.b ? "true" : "false");
        break;
    case CV_INT:
        buf_printf(b, "%lld", (long long)v->v.i);
        break;
    case CV_UINT:
        buf_printf(b, "%llu", (unsigned long long)v->v.u);
        break;
    case CV_DOUBLE:
        cel_format_float(b, v->v.d, 'g');
        break;
    case CV_STRING:
        buf_append(b, v->v.s, v->n);
        break;
    case CV_BYTES:
        buf_puts(b, "[");
        for (uint32_t i = 0; i < v->n; i++)
            buf_printf(b, i ? " %u" : "%u", (unsigned)(unsigned char)v->v.s[i]);
        buf_puts(b, "]");
        break;
    case CV_TYPE:
        buf_puts(b, v->v.s);
        break;
    case CV_ERROR:
        buf_puts(b, v->v.s);
        break;
    case CV_LIST:
        buf_puts(b, "[");
        for (uint32_t i = 0; i < v->v.l->n; i++) {
            if (i)
                buf_puts(b, ", ");
            cel_val_format_v(b, &v->v.l->v[i]);
        }
        buf_puts(b, "]");
        break;
    case CV_MAP:
        buf_puts(b, "{");
        for (uint32_t i = 0; i < v->v.m->n; i++) {
            if (i)
                buf_puts(b, ", ");
            cel_val_format_v(b, &v->v.m->keys[i]);
            buf_puts(b, ": ");
            cel_val_format_v(b, &v->v.m->vals[i]);
        }
        buf_puts(b, "}");
        break;
    case CV_OPTIONAL:
        if (v->v.o) {
            buf_puts(b, "optional(");
            cel_val_format_v(b, v->v.o);
            buf_puts(b, ")");
        } else {
            buf_puts(b, "optional.none()");
        }
        break;
    default:
        buf_printf(b, "<%s>", cel_val_type_name(v));
        break;
    }
}

/* ---- what the evaluator and the libraries share: traits, map lookups, equality ---- */

int cel_val_traits(const struct cel_val *v)
{
    switch (v->k) {
    case CV_BOOL:
        return TR_COMPARER | TR_NEGATOR;
    case CV_BYTES:
        return TR_ADDER | TR_COMPARER | TR_SIZER;
    case CV_DOUBLE:
        return TR_ADDER | TR_COMPARER | TR_DIVIDER | TR_MULTIPLIER | TR_NEGATOR | TR_SUBTRACTOR;
    case CV_DURATION:
        return TR_ADDER | TR_COMPARER | TR_NEGATOR | TR_RECEIVER | TR_SUBTRACTOR;
    case CV_INT:
        return TR_ADDER | TR_COMPARER | TR_DIVIDER | TR_MODDER | TR_MULTIPLIER | TR_NEGATOR |
               TR_SUBTRACTOR;
    case CV_UINT:
        return TR_ADDER | TR_COMPARER | TR_DIVIDER | TR_MODDER | TR_MULTIPLIER | TR_SUBTRACTOR;
    case CV_STRING:
        return TR_ADDER | TR_COMPARER | TR_MATCHER | TR_RECEIVER | TR_SIZER;
    case CV_TIMESTAMP:
        return TR_ADDER | TR_COMPARER | TR_RECEIVER | TR_SUBTRACTOR;
    case CV_LIST:
        return TR_ADDER | TR_CONTAINER | TR_INDEXER | TR_ITERABLE | TR_SIZER;
    case CV_MAP:
        return TR_CONTAINER | TR_INDEXER | TR_ITERABLE | TR_SIZER;
    case CV_SEMVER:
    case CV_URL:
    case CV_FORMAT:
        return TR_FIELD_TESTER | TR_INDEXER;
    default:
        return 0;
    }
}

/* ---- maps ---- */

bool cel_key_identical(const struct cel_val *a, const struct cel_val *b)
{
    /* Go map keys: same dynamic type and == */
    if (a->k != b->k)
        return false;
    switch (a->k) {
    case CV_NULL:
        return true;
    case CV_BOOL:
        return a->v.b == b->v.b;
    case CV_INT:
        return a->v.i == b->v.i;
    case CV_UINT:
        return a->v.u == b->v.u;
    case CV_DOUBLE:
        return a->v.d == b->v.d;
    case CV_STRING:
        return a->n == b->n && (a->n == 0 || !memcmp(a->v.s, b->v.s, a->n));
    case CV_TYPE:
        return !strcmp(a->v.s, b->v.s);
    case CV_IP:
    case CV_CIDR: {
        /* netip.Addr (and Prefix) compare by value, the zone included */
        const struct cel_ipaddr *x = a->v.ip, *y = b->v.ip;
        const char *zx = x->zone ? x->zone : "", *zy = y->zone ? y->zone : "";
        return x->v4 == y->v4 && !memcmp(x->a, y->a, sizeof(x->a)) && !strcmp(zx, zy) &&
               (a->k == CV_IP || x->prefix == y->prefix);
    }
    default:
        /* pointer types (quantities, URLs) compare by identity */
        return a->v.l == b->v.l;
    }
}

static const struct cel_val *map_find_exact(const struct cel_map *m, const struct cel_val *key)
{
    if (key->k == CV_STRING) {
        /* the common case (device maps): length, first byte, then the bytes */
        uint32_t n = key->n;
        const char *s = key->v.s;
        if (m->khash) {
            /* device views: the key hashes first, so that only the key found is read */
            uint32_t h = 2166136261u;
            for (uint32_t i = 0; i < n; i++)
                h = (h ^ (uint8_t)s[i]) * 16777619u;
            for (uint32_t i = 0; i < m->n; i++)
                if (m->khash[i] == h && m->keys[i].n == n && !memcmp(m->keys[i].v.s, s, n))
                    return &m->vals[i];
            return NULL;
        }
        for (uint32_t i = 0; i < m->n; i++) {
            const struct cel_val *k = &m->keys[i];
            if (k->k == CV_STRING && k->n == n &&
                (n == 0 || (k->v.s[0] == s[0] && !memcmp(k->v.s, s, n))))
                return &m->vals[i];
        }
        return NULL;
    }
    if (m->strkeys)
        return NULL;
    for (uint32_t i = 0; i < m->n; i++)
        if (cel_key_identical(&m->keys[i], key))
            return &m->vals[i];
    return NULL;
}

static const struct cel_val empty_map_val = {.k = CV_MAP,
                                             .v.m = &(const struct cel_map){.strkeys = true}};

/* Find with cel-go's numeric key rules (refValMapAccessor) and DRA's default. */
const struct cel_val *cel_map_find(const struct cel_map *m, const struct cel_val *key)
{
    const struct cel_val *v = map_find_exact(m, key);

    if (v)
        return v;
    if (!m->strkeys) {
        struct cel_val k2;
        if (key->k == CV_DOUBLE) {
            double d = key->v.d;
            if (!isnan(d) && !isinf(d) && d > -9223372036854775808.0 && d < 9223372036854775807.0 &&
                (double)(int64_t)d == d) {
                k2 = cel_int((int64_t)d);
                if ((v = map_find_exact(m, &k2)))
                    return v;
            }
            if (!isnan(d) && !isinf(d) && d >= 0 && d < 18446744073709551616.0 &&
                (double)(uint64_t)d == d) {
                k2 = cel_uint((uint64_t)d);
                return map_find_exact(m, &k2);
            }
        } else if (key->k == CV_INT && key->v.i >= 0) {
            k2 = cel_uint((uint64_t)key->v.i);
            return map_find_exact(m, &k2);
        } else if (key->k == CV_UINT && key->v.u <= (uint64_t)INT64_MAX) {
            k2 = cel_int((int64_t)key->v.u);
            return map_find_exact(m, &k2);
        }
    }
    if (m->default_empty)
        return &empty_map_val;
    return NULL;
}

/* Contains ignores DRA's default (the embedded map answers). */
bool cel_map_contains(const struct cel_map *m, const struct cel_val *key)
{
    struct cel_map tmp = *m;
    tmp.default_empty = false;
    return cel_map_find(&tmp, key) != NULL;
}

/* ---- equality with cel-go's error cases ---- */

int cel_val_eq(const struct cel_val *a, const struct cel_val *b)
{
    if (a->k == CV_NULL || b->k == CV_NULL)
        return a->k == b->k;
    switch (a->k) {
    case CV_QUANTITY:
        /* apiservercel.Quantity.Equal wants a Quantity value; add/sub return pointers */
        if (b->k != CV_QUANTITY || b->v.q->ptr)
            return -1;
        return cel_val_equal(a, b);
    case CV_SEMVER:
    case CV_URL:
    case CV_FORMAT:
    case CV_IP:
    case CV_CIDR:
        if (b->k != a->k)
            return -1;
        return cel_val_equal(a, b);
    case CV_LIST: {
        int err = 0;
        if (b->k != CV_LIST || a->v.l->n != b->v.l->n)
            return 0;
        for (uint32_t i = 0; i < a->v.l->n; i++) {
            int r = cel_val_eq(&a->v.l->v[i], &b->v.l->v[i]);
            if (r == 0)
                return 0;
            if (r < 0)
                err = 1;
        }
        /* a concatenated list reports the element error; others ignore it */
        return err && a->v.l->concat ? -1 : 1;
    }
    case CV_MAP:
        if (b->k != CV_MAP || a->v.m->n != b->v.m->n)
            return 0;
        for (uint32_t i = 0; i < a->v.m->n; i++) {
            const struct cel_val *o = cel_map_find(b->v.m, &a->v.m->keys[i]);
            if (!o || cel_val_eq(&a->v.m->vals[i], o) == 0)
                return 0;
        }
        return 1;
    case CV_OPTIONAL:
        if (b->k != CV_OPTIONAL)
            return 0;
        if (!a->v.o)
            return !b->v.o;
        if (!b->v.o)
            return 0;
        if (a->v.o->k == CV_NULL)
            return b->v.o->k == CV_NULL;
        return cel_val_eq(a->v.o, b->v.o);
    default:
        return cel_val_equal(a, b);
    }
}

const char *cel_go_type_name(const struct cel_val *v)
{
    switch (v->k) {
    case CV_NULL:
        return "types.Null";
    case CV_BOOL:
        return "types.Bool";
    case CV_INT:
        return "types.Int";
    case CV_UINT:
        return "types.Uint";
    case CV_DOUBLE:
        return "types.Double";
    case CV_STRING:
        return "types.String";
    case CV_ERROR:
        return "*types.Err";
    case CV_BYTES:
        return "types.Bytes";
    case CV_LIST:
        return v->v.l->concat ? "*types.concatList" : "*types.baseList";
    case CV_MAP:
        return v->v.m->default_empty ? "cel.mapper" : "*types.baseMap";
    case CV_TYPE:
        return "*types.Type";
    case CV_OPTIONAL:
        return "*types.Optional";
    case CV_DURATION:
        return "types.Duration";
    case CV_TIMESTAMP:
        return "types.Timestamp";
    case CV_QUANTITY:
        return v->v.q->ptr ? "*cel.Quantity" : "cel.Quantity";
    case CV_SEMVER:
        return "cel.Semver";
    case CV_IP:
        return "cel.IP";
    case CV_CIDR:
        return "cel.CIDR";
    case CV_URL:
        return "cel.URL";
    case CV_FORMAT:
        return "cel.Format";
    default:
        return "unknown";
    }
}
