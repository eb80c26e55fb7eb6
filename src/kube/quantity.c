/* quantity.c - resource.Quantity parsing, following k8s.io/apimachinery's ParseQuantity, and
 * the text its UnmarshalJSON parses for a JSON value.
 *
 * The scanner reproduces the Go one step by step (including what it quietly accepts, such as
 * "-" or "Mi" meaning 0); the value is then computed exactly on a decimal digit string, so
 * there is no floating point anywhere, and rounded up like Quantity.Value()/MilliValue(). */
#include "kube/quantity.h"

#include <errno.h>
#include <math.h>
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

/* quantity_interpret is the suffixer's interpret(): base 10 or 2, exponent and format. */
static bool quantity_interpret(const struct quantity_parts *q, int *base, int32_t *exponent,
                               enum quantity_format *fmt)
{
    static const struct {
        char s[3]; /* the suffix: one or two characters, or none */
        int base;
        int exp;
    } table[] = {
        {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3}, {"", 10, 0},   {"k", 10, 3},  {"M", 10, 6},
        {"G", 10, 9},  {"T", 10, 12}, {"P", 10, 15}, {"E", 10, 18}, {"Ki", 2, 10}, {"Mi", 2, 20},
        {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60},
    };
    size_t i;
    int64_t v;

    for (i = 0; q->nsuffix <= 2 && i < sizeof(table) / sizeof(table[0]); i++) {
        const char *t = table[i].s;

        if (q->nsuffix == (size_t)(!t[0]   ? 0
                                   : !t[1] ? 1
                                           : 2) &&
            (!q->nsuffix || (q->suffix[0] == t[0] && (q->nsuffix == 1 || q->suffix[1] == t[1])))) {
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

/* quantity_whole computes a quantity with no sign, no fraction and at most 18 digits in int64
 * arithmetic: *v rounded up and, when want_milli, *mv (1000 times it, rounded up); -ERANGE
 * when a step would not fit (the caller then computes it digit by digit) */
static int quantity_whole(const struct quantity_parts *q, int base, int32_t exponent,
                          bool want_milli, int64_t *v, int64_t *mv)
{
    static const int64_t pow10[] = {1,
                                    10,
                                    100,
                                    1000,
                                    10000,
                                    100000,
                                    1000000,
                                    10000000,
                                    100000000,
                                    1000000000,
                                    10000000000LL,
                                    100000000000LL,
                                    1000000000000LL,
                                    10000000000000LL,
                                    100000000000000LL,
                                    1000000000000000LL,
                                    10000000000000000LL,
                                    100000000000000000LL,
                                    1000000000000000000LL};
    int64_t n = 0, p;
    size_t i;

    for (i = 0; i < q->nnum; i++)
        n = n * 10 + (q->num[i] - '0');
    if (base == 2) {
        if (n > (INT64_MAX >> exponent))
            return -ERANGE;
        *v = n << exponent;
    } else if (exponent >= 0) {
        if (exponent > 18 || __builtin_mul_overflow(n, pow10[exponent], v))
            return -ERANGE;
    } else {
        if (exponent < -18)
            return -ERANGE;
        p = pow10[-exponent];
        *v = n / p + (n % p != 0);
        if (want_milli) {
            if (exponent >= -3)
                return __builtin_mul_overflow(n, pow10[3 + exponent], mv) ? -ERANGE : 0;
            p = pow10[-exponent - 3];
            *mv = n / p + (n % p != 0);
        }
        return 0;
    }
    if (want_milli && __builtin_mul_overflow(*v, (int64_t)1000, mv))
        return -ERANGE;
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

/* quantity_head scans and interprets the len bytes at s (what both parsers do first): its
 * parts, base, exponent and format, and whether Go's int64 fast path takes it. */
static int quantity_head(const char *s, size_t len, struct quantity_parts *q, int *base,
                         int32_t *exponent, enum quantity_format *fmt, bool *fast, struct err *err)
{
    if (!len)
        return quantity_fail(err, QUANTITY_FORMAT_MSG);
    if (quantity_scan(s, len, q))
        return quantity_fail(err, QUANTITY_FORMAT_MSG);
    if (!quantity_interpret(q, base, exponent, fmt))
        return quantity_fail(err, QUANTITY_SUFFIX_MSG);
    /* Go takes an int64 fast path when the digits are few enough; outside it, a numeric
     * part without any digit ("-e-20", "Ei") fails inf.Dec's parser. */
    if (*fmt == FMT_BINARY_SI)
        *fast =
            q->ndenom == 0 && 15 - (int64_t)q->nnum - (int64_t)((float)*exponent * 3 / 10) - 1 >= 0;
    else
        *fast = 18 - (int64_t)(q->nnum + q->ndenom) >= 0 &&
                (int64_t)*exponent - (int64_t)q->ndenom >= -9;
    if (!*fast && !q->has_digit)
        return quantity_fail(err, QUANTITY_NUMERIC_MSG);
    return 0;
}

/* quantity_digits makes q (quantity_head's) the exact digit string d[*off..cap) with the
 * decimal point after *point digits (what both parsers compute); the caller frees *d when it
 * is not stack. */
static int quantity_digits(const struct quantity_parts *q, int32_t exponent,
                           enum quantity_format fmt, bool fast, unsigned char *stackbuf,
                           size_t stackcap, unsigned char **dp, size_t *offp, size_t *capp,
                           int64_t *pointp, bool *binary_slow, struct err *err)
{
    size_t ndig, cap, off, i;
    unsigned char *d = stackbuf;
    int64_t point;

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
    enum quantity_format fmt;
    int32_t exponent;
    size_t off, cap;
    int64_t point, v;
    bool binary_slow, fast;
    int base;
    kube_nano n = 0;
    int rc;

    rc = quantity_head(s, s ? strlen(s) : 0, &q, &base, &exponent, &fmt, &fast, err);
    if (!rc)
        rc = quantity_digits(&q, exponent, fmt, fast, stackbuf, sizeof(stackbuf), &d, &off, &cap,
                             &point, &binary_slow, err);
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
    return kube_quantity_parsen(s, s ? strlen(s) : 0, value, milli, err);
}

int kube_quantity_parsen(const char *s, size_t len, int64_t *value, int64_t *milli, struct err *err)
{
    struct quantity_parts q;
    unsigned char stackbuf[QUANTITY_STACK_DIGITS], *d = NULL;
    enum quantity_format fmt;
    int32_t exponent;
    size_t off, cap;
    int64_t point, v = 0, mv = 0;
    bool binary_slow, fast;
    int base, rc;

    rc = quantity_head(s, len, &q, &base, &exponent, &fmt, &fast, err);
    if (rc)
        return rc;
    /* most quantities are a whole number of at most 18 digits and a suffix ("500m", "4",
     * "16Gi"): exact in int64 arithmetic, anything it cannot hold goes the long way below */
    if (!q.negative && !q.ndenom && q.nnum <= 18 &&
        !quantity_whole(&q, base, exponent, milli != NULL, &v, &mv)) {
        if (value)
            *value = v;
        if (milli)
            *milli = mv;
        return 0;
    }
    rc = quantity_digits(&q, exponent, fmt, fast, stackbuf, sizeof(stackbuf), &d, &off, &cap,
                         &point, &binary_slow, err);
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
    /* the message holds at most ERR_MSG_MAX bytes of it anyway */
    rc = err_set(err, -ERANGE, "quantity '%.*s' is too large",
                 len > ERR_MSG_MAX ? ERR_MSG_MAX : (int)len, s);
out:
    if (d != stackbuf)
        free(d);
    return rc;
}

/* go_shortest writes into digits the shortest decimal digits of f (finite, not 0) that read
 * back as f (NUL-ended, no leading zero: "15" for 1.5) and returns the decimal exponent of the
 * first: f = 0.d1d2... * 10^(exp + 1). */
static int go_shortest(double f, char *digits, size_t size)
{
    char e[40];
    size_t n = 0;
    const char *p;
    int prec;

    /* "%.*e" rounds correctly: the first precision that reads back is the shortest */
    for (prec = 0; prec < 17; prec++) {
        snprintf(e, sizeof(e), "%.*e", prec, f);
        if (strtod(e, NULL) == f)
            break;
    }
    for (p = e; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && n + 1 < size)
            digits[n++] = *p;
    /* "%.16e" may end in zeros the shortest form does not have */
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    return *p == 'e' ? atoi(p + 1) : 0;
}

const char *kube_json_number_text(const json_t *v, char *buf)
{
    char digits[24];
    double f, a;
    size_t n, o = 0;
    int exp, i;

    if (json_is_integer(v)) {
        snprintf(buf, KUBE_JSON_NUMBER_MAX, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return buf;
    }
    f = json_real_value(v);
    a = f < 0 ? -f : f;
    if (a == 0 || !isfinite(f)) {
        /* jansson holds no NaN or infinity; Go writes -0 as "-0" */
        snprintf(buf, KUBE_JSON_NUMBER_MAX, "%s", signbit(f) ? "-0" : "0");
        return buf;
    }
    if (a < 1e-6 || a >= 1e21) {
        /* strconv's 'e' format is C's, shortest; Go's encoder then writes "e-9" for "e-09" */
        exp = go_shortest(f, digits, sizeof(digits));
        n = strlen(digits);
        snprintf(buf, KUBE_JSON_NUMBER_MAX, "%s%c%s%se%c%02d", f < 0 ? "-" : "", digits[0],
                 n > 1 ? "." : "", digits + 1, exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
        n = strlen(buf);
        if (n >= 4 && buf[n - 4] == 'e' && buf[n - 3] == '-' && buf[n - 2] == '0') {
            buf[n - 2] = buf[n - 1];
            buf[n - 1] = '\0';
        }
        return buf;
    }
    /* 'f' format: the shortest digits, then as many zeros as the exponent asks */
    exp = go_shortest(f, digits, sizeof(digits));
    n = strlen(digits);
    if (f < 0)
        buf[o++] = '-';
    if (exp < 0) {
        buf[o++] = '0';
        buf[o++] = '.';
        for (i = -1; i > exp; i--)
            buf[o++] = '0';
        memcpy(buf + o, digits, n);
        o += n;
    } else {
        for (i = 0; i <= exp || (size_t)i < n; i++) {
            if (i == exp + 1)
                buf[o++] = '.';
            buf[o++] = (size_t)i < n ? digits[i] : '0';
        }
    }
    buf[o] = '\0';
    return buf;
}

/* space_rune: the length of the Unicode white space rune (unicode.IsSpace) that the n bytes at
 * s begin with, or 0 (utf8_space); utf8_space_before the same for the rune s[n - 1] ends. */
static size_t space_rune(const unsigned char *s, size_t n)
{
    uint32_t r;

    if (!n)
        return 0;
    if (s[0] < 0x80)
        return s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r');
    if (n >= 2 && s[0] == 0xc2)
        return s[1] == 0x85 || s[1] == 0xa0 ? 2 : 0;
    if (n < 3 || (s[0] != 0xe1 && s[0] != 0xe2 && s[0] != 0xe3))
        return 0;
    r = (uint32_t)(s[0] & 0x0f) << 12 | (uint32_t)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
    return r == 0x1680 || (r >= 0x2000 && r <= 0x200a) || r == 0x2028 || r == 0x2029 ||
                   r == 0x202f || r == 0x205f || r == 0x3000
               ? 3
               : 0;
}

static size_t utf8_space(const char *s, size_t n)
{
    return space_rune((const unsigned char *)s, n);
}

static size_t utf8_space_before(const char *s, size_t n)
{
    size_t k;

    /* a white space rune is 1 to 3 bytes; try each start (continuation bytes are 10xxxxxx) */
    for (k = 1; k <= 3 && k <= n; k++) {
        unsigned char c = (unsigned char)s[n - k];

        if ((c & 0xc0) == 0x80)
            continue;
        return space_rune((const unsigned char *)s + n - k, k) == k ? k : 0;
    }
    return 0;
}

const char *kube_quantity_json_text(const json_t *v, char *buf, size_t *len)
{
    const char *s;
    size_t n, k;

    if (!v || json_is_null(v)) {
        *len = 1;
        return "0";
    }
    if (json_is_number(v)) {
        kube_json_number_text(v, buf);
        *len = strlen(buf);
        return buf;
    }
    if (!json_is_string(v))
        return NULL;
    s = json_string_value(v);
    n = json_string_length(v);
    while ((k = utf8_space(s, n))) {
        s += k;
        n -= k;
    }
    while ((k = utf8_space_before(s, n)))
        n -= k;
    *len = n;
    return s;
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
