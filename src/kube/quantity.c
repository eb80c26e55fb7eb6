/* quantity.c - resource.Quantity parsing, following k8s.io/apimachinery's ParseQuantity.
 *
 * The scanner reproduces the Go one step by step (including what it quietly accepts, such as
 * "-" or "Mi" meaning 0); the value is then computed exactly on a decimal digit string, so
 * there is no floating point anywhere, and rounded up like Quantity.Value()/MilliValue(). */
#include "kube/quantity.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/goparse.h"

#define QUANTITY_FORMAT_MSG                                                                        \
    "quantities must match the regular expression "                                                \
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
#define QUANTITY_SUFFIX_MSG "unable to parse quantity's suffix"
#define QUANTITY_NUMERIC_MSG "unable to parse numeric part of quantity"

/* Digits kept on the stack for the exact computation; longer inputs use the heap. */
#define QUANTITY_STACK_DIGITS 128

enum quantity_format { FMT_DECIMAL_SI, FMT_BINARY_SI, FMT_DECIMAL_EXPONENT };

struct quantity_parts {
    bool negative;
    const char *num; /* numerator digits after leading zeros ("0" when none) */
    size_t nnum;
    const char *denom; /* digits after '.' */
    size_t ndenom;
    bool has_digit; /* the numeric part (sign and '.' aside) holds at least one digit */
    const char *suffix;
    size_t nsuffix;
};

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_suffix_char(char c)
{
    return c && strchr("eEinumkKMGTP", c) != NULL;
}

/* quantity_scan is parseQuantityString: splits s into sign, numerator, denominator and
 * suffix, failing only where the Go scanner fails. */
static int quantity_scan(const char *s, size_t len, struct quantity_parts *q)
{
    size_t pos = 0, i, start;

    memset(q, 0, sizeof(*q));
    q->num = "0";
    q->nnum = 1;
    q->denom = "";
    q->suffix = "";
    if (pos < len && (s[0] == '-' || s[0] == '+')) {
        q->negative = s[0] == '-';
        pos++;
    }
    while (pos < len && s[pos] == '0') {
        pos++;
        q->has_digit = true;
    }
    if (pos >= len)
        return 0;
    for (i = pos; i < len && is_digit(s[i]); i++)
        ;
    if (i > pos) {
        q->num = s + pos;
        q->nnum = i - pos;
        q->has_digit = true;
    }
    if (i >= len)
        return 0;
    pos = i;
    if (s[pos] == '.') {
        pos++;
        for (i = pos; i < len && is_digit(s[i]); i++)
            ;
        q->denom = s + pos;
        q->ndenom = i - pos;
        if (i > pos)
            q->has_digit = true;
        if (i >= len)
            return 0;
        pos = i;
    }
    start = pos;
    for (i = pos; i < len && is_suffix_char(s[i]); i++)
        ;
    if (i < len && (s[i] == '-' || s[i] == '+'))
        i++;
    while (i < len && is_digit(s[i]))
        i++;
    if (i < len)
        return -EINVAL;
    q->suffix = s + start;
    q->nsuffix = len - start;
    return 0;
}

static bool suffix_is(const struct quantity_parts *q, const char *lit)
{
    return q->nsuffix == strlen(lit) && !memcmp(q->suffix, lit, q->nsuffix);
}

/* quantity_interpret is the suffixer's interpret(): base 10 or 2, exponent and format. */
static bool quantity_interpret(const struct quantity_parts *q, int *base, int32_t *exponent,
                               enum quantity_format *fmt)
{
    static const struct {
        const char *s;
        int base;
        int exp;
    } table[] = {
        {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3}, {"", 10, 0},   {"k", 10, 3},  {"M", 10, 6},
        {"G", 10, 9},  {"T", 10, 12}, {"P", 10, 15}, {"E", 10, 18}, {"Ki", 2, 10}, {"Mi", 2, 20},
        {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60},
    };
    size_t i;
    int64_t v;

    for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (suffix_is(q, table[i].s)) {
            *base = table[i].base;
            *exponent = table[i].exp;
            *fmt = table[i].base == 2 ? FMT_BINARY_SI : FMT_DECIMAL_SI;
            return true;
        }
    }
    if (q->nsuffix < 2 || (q->suffix[0] != 'e' && q->suffix[0] != 'E'))
        return false;
    /* strconv.ParseInt(suffix[1:], 10, 64), then Go's int32() conversion (it wraps) */
    if (go_parse_int(q->suffix + 1, q->nsuffix - 1, 10, 64, &v, NULL))
        return false;
    *base = 10;
    *exponent = (int32_t)(uint32_t)(uint64_t)v;
    *fmt = FMT_DECIMAL_EXPONENT;
    return true;
}

/* digits_mul multiplies the decimal digit string d[off..len) (values 0-9) by m (<= 2^20),
 * growing it to the left into d[0..off); returns the new offset. The caller sized d. */
static size_t digits_mul(unsigned char *d, size_t off, size_t len, unsigned m)
{
    unsigned long long carry = 0;
    size_t i = len;

    while (i > off) {
        i--;
        carry += (unsigned long long)d[i] * m;
        d[i] = (unsigned char)(carry % 10);
        carry /= 10;
    }
    while (carry) {
        d[--off] = (unsigned char)(carry % 10);
        carry /= 10;
    }
    return off;
}

/* ceil_scaled returns ceil(|digits| * 10^point_shift) as int64 where the decimal point sits
 * after `point` digits of d[off..len); -ERANGE when it does not fit. */
static int ceil_scaled(const unsigned char *d, size_t off, size_t len, int64_t point, int64_t *out)
{
    int64_t v = 0;
    size_t i, ndig = len - off;
    size_t nint = point <= 0 ? 0 : (uint64_t)point > ndig ? ndig : (size_t)point;
    bool frac = false, nonzero = false;
    int64_t k;

    for (i = 0; i < nint; i++) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, d[off + i], &v))
            return -ERANGE;
    }
    for (i = nint; i < ndig; i++)
        if (d[off + i]) {
            frac = true;
            break;
        }
    for (i = 0; i < ndig; i++)
        nonzero |= d[off + i] != 0;
    if (nonzero && point > (int64_t)ndig) {
        for (k = (int64_t)ndig; k < point; k++)
            if (__builtin_mul_overflow(v, 10, &v))
                return -ERANGE;
    }
    if (frac && __builtin_add_overflow(v, 1, &v))
        return -ERANGE;
    *out = v;
    return 0;
}

static int quantity_fail(struct err *err, const char *msg)
{
    return err_set(err, -EINVAL, "%s", msg);
}

/* ceil_scaled_nano is ceil_scaled into nano units, in 128 bits, bounded at 10^36 nano. */
static int ceil_scaled_nano(const unsigned char *d, size_t off, size_t len, int64_t point,
                            kube_nano *out)
{
    const kube_nano limit = (kube_nano)1000000000000000000LL * 1000000000000000000LL;
    kube_nano v = 0;
    size_t i, ndig = len - off;
    int64_t p = point + 9; /* digits before the point, in nano units */
    size_t nint = p <= 0 ? 0 : (uint64_t)p > ndig ? ndig : (size_t)p;
    bool frac = false, nonzero = false;
    int64_t k;

    for (i = 0; i < nint; i++) {
        v = v * 10 + d[off + i];
        if (v > limit)
            return -ERANGE;
    }
    for (i = nint; i < ndig; i++)
        if (d[off + i]) {
            frac = true;
            break;
        }
    for (i = 0; i < ndig; i++)
        nonzero |= d[off + i] != 0;
    if (nonzero && p > (int64_t)ndig) {
        for (k = (int64_t)ndig; k < p; k++) {
            v *= 10;
            if (v > limit)
                return -ERANGE;
        }
    }
    if (frac)
        v++;
    *out = v;
    return 0;
}

/* quantity_digits scans and interprets s into the exact digit string d[*off..cap) with the
 * decimal point after *point digits (what both parsers compute); the caller frees *d when it
 * is not stack. */
static int quantity_digits(const char *s, struct quantity_parts *q, unsigned char *stackbuf,
                           size_t stackcap, unsigned char **dp, size_t *offp, size_t *capp,
                           int64_t *pointp, bool *binary_slow, struct err *err)
{
    enum quantity_format fmt;
    int base;
    int32_t exponent;
    size_t len = s ? strlen(s) : 0, ndig, cap, off, i;
    unsigned char *d = stackbuf;
    bool fast;
    int64_t point;

    if (!len)
        return quantity_fail(err, QUANTITY_FORMAT_MSG);
    if (quantity_scan(s, len, q))
        return quantity_fail(err, QUANTITY_FORMAT_MSG);
    if (!quantity_interpret(q, &base, &exponent, &fmt))
        return quantity_fail(err, QUANTITY_SUFFIX_MSG);
    if (fmt == FMT_BINARY_SI)
        fast =
            q->ndenom == 0 && 15 - (int64_t)q->nnum - (int64_t)((float)exponent * 3 / 10) - 1 >= 0;
    else
        fast = 18 - (int64_t)(q->nnum + q->ndenom) >= 0 &&
               (int64_t)exponent - (int64_t)q->ndenom >= -9;
    if (!fast && !q->has_digit)
        return quantity_fail(err, QUANTITY_NUMERIC_MSG);
    ndig = q->nnum + q->ndenom;
    cap = ndig + (fmt == FMT_BINARY_SI ? 20 : 0);
    if (cap > stackcap) {
        d = malloc(cap);
        if (!d)
            return err_set(err, -ENOMEM, "out of memory");
    }
    off = cap - ndig;
    for (i = 0; i < q->nnum; i++)
        d[off + i] = (unsigned char)(q->num[i] - '0');
    for (i = 0; i < q->ndenom; i++)
        d[off + q->nnum + i] = (unsigned char)(q->denom[i] - '0');
    point = (int64_t)q->nnum;
    if (fmt == FMT_BINARY_SI) {
        size_t before = off;
        int e;

        for (e = exponent; e > 0; e -= 20)
            off = digits_mul(d, off, cap, 1u << (e > 20 ? 20 : e));
        point += (int64_t)(before - off);
    } else {
        point += exponent;
    }
    *dp = d;
    *offp = off;
    *capp = cap;
    *pointp = point;
    *binary_slow = fmt == FMT_BINARY_SI && !fast;
    return 0;
}

int kube_quantity_parse_nano(const char *s, kube_nano *nano, struct err *err)
{
    struct quantity_parts q;
    unsigned char stackbuf[QUANTITY_STACK_DIGITS], *d = NULL;
    size_t off, cap;
    int64_t point, v;
    bool binary_slow;
    kube_nano n = 0;
    int rc;

    rc = quantity_digits(s, &q, stackbuf, sizeof(stackbuf), &d, &off, &cap, &point, &binary_slow,
                         err);
    if (rc)
        return rc;
    if (binary_slow && ceil_scaled(d, off, cap, point, &v)) {
        /* binary quantities are capped at 2^63-1 (maxAllowed) */
        n = (kube_nano)INT64_MAX * KUBE_NANO_PER_UNIT;
    } else if (ceil_scaled_nano(d, off, cap, point, &n)) {
        rc = err_set(err, -ERANGE, "quantity '%s' is too large", s);
        goto out;
    }
    *nano = q.negative ? -n : n;
out:
    if (d != stackbuf)
        free(d);
    return rc;
}

int64_t kube_nano_value(kube_nano n)
{
    kube_nano mag = n < 0 ? -n : n, v = mag / KUBE_NANO_PER_UNIT;

    if (mag % KUBE_NANO_PER_UNIT)
        v++;
    if (v > INT64_MAX)
        return n < 0 ? INT64_MIN : INT64_MAX;
    return n < 0 ? -(int64_t)v : (int64_t)v;
}

int64_t kube_nano_milli(kube_nano n)
{
    kube_nano mag = n < 0 ? -n : n, v = mag / 1000000;

    if (mag % 1000000)
        v++;
    if (v > INT64_MAX)
        return n < 0 ? INT64_MIN : INT64_MAX;
    return n < 0 ? -(int64_t)v : (int64_t)v;
}

int kube_quantity_parse(const char *s, int64_t *value, int64_t *milli, struct err *err)
{
    struct quantity_parts q;
    unsigned char stackbuf[QUANTITY_STACK_DIGITS], *d = NULL;
    size_t off, cap;
    int64_t point, v = 0, mv = 0;
    bool binary_slow;
    int rc;

    rc = quantity_digits(s, &q, stackbuf, sizeof(stackbuf), &d, &off, &cap, &point, &binary_slow,
                         err);
    if (rc)
        return rc;
    rc = ceil_scaled(d, off, cap, point, &v);
    if (rc && binary_slow) {
        /* binary quantities are capped at 2^63-1 (maxAllowed) */
        v = INT64_MAX;
        rc = 0;
    }
    if (rc)
        goto range;
    if (milli) {
        rc = ceil_scaled(d, off, cap, point + 3, &mv);
        if (rc)
            goto range;
    }
    if (q.negative) {
        v = -v;
        mv = -mv;
    }
    if (value)
        *value = v;
    if (milli)
        *milli = mv;
    goto out;
range:
    rc = err_set(err, -ERANGE, "quantity '%s' is too large", s);
out:
    if (d != stackbuf)
        free(d);
    return rc;
}

const char *kube_quantity_format_milli(int64_t milli, char *buf, int size)
{
    if (size <= 0)
        return buf;
    if (milli % 1000 == 0)
        snprintf(buf, (size_t)size, "%lld", (long long)(milli / 1000));
    else
        snprintf(buf, (size_t)size, "%lldm", (long long)milli);
    return buf;
}

const char *kube_quantity_format_bytes(int64_t bytes, char *buf, int size)
{
    static const char *const suffixes[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int i, best = -1;
    int64_t mag;

    if (size <= 0)
        return buf;
    /* magnitude of INT64_MIN does not fit; it is a multiple of every suffix anyway */
    mag = bytes == INT64_MIN ? INT64_MAX : bytes < 0 ? -bytes : bytes;
    if (bytes != 0 && mag >= 1024) {
        for (i = 0; i < 6; i++) {
            int64_t unit = (int64_t)1 << (10 * (i + 1));

            if (bytes % unit == 0)
                best = i;
            else
                break;
        }
    }
    if (best < 0)
        snprintf(buf, (size_t)size, "%lld", (long long)bytes);
    else
        snprintf(buf, (size_t)size, "%lld%s",
                 (long long)(bytes / ((int64_t)1 << (10 * (best + 1)))), suffixes[best]);
    return buf;
}
