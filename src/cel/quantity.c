/* quantity.c - resource.Quantity's parse, compare, add and sub, in both of its forms.
 *
 * Follows apimachinery's ParseQuantity (the int64 fast path when at most 18 digits fit,
 * else an inf.Dec rounded up to nano and, for binary suffixes, capped at 2^63-1),
 * int64Amount.Add (falling back to inf.Dec on overflow) and inf.Dec's exact arithmetic, on a
 * small bignum of 32-bit limbs. Go's int64 arithmetic wraps; so does this file's. */
#include "cel/quantity.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"

static const char ERR_FORMAT[] =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
static const char ERR_NUMERIC[] = "unable to parse numeric part of quantity";
static const char ERR_SUFFIX[] = "unable to parse quantity's suffix";
static const char ERR_BIG[] = "quantity is too large for this evaluator";

/* ---- bignum magnitudes ---- */

struct big {
    int n;
    uint32_t l[CEL_QUANTITY_MAX_LIMBS + 2];
};

static void big_norm(struct big *b)
{
    while (b->n > 0 && b->l[b->n - 1] == 0)
        b->n--;
}

static bool big_mul_add(struct big *b, uint32_t m, uint32_t add)
{
    uint64_t carry = add;
    for (int i = 0; i < b->n; i++) {
        uint64_t t = (uint64_t)b->l[i] * m + carry;
        b->l[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry) {
        if (b->n >= CEL_QUANTITY_MAX_LIMBS)
            return false;
        b->l[b->n++] = (uint32_t)carry;
    }
    return true;
}

static bool big_mul_pow10(struct big *b, int64_t k)
{
    while (k > 0) {
        int step = k >= 9 ? 9 : (int)k;
        static const uint32_t p10[] = {1,      10,      100,      1000,      10000,
                                       100000, 1000000, 10000000, 100000000, 1000000000};
        if (b->n == 0)
            return true;
        if (!big_mul_add(b, p10[step], 0))
            return false;
        k -= step;
    }
    return true;
}

static bool big_shl(struct big *b, int k)
{
    while (k > 0) {
        int s = k >= 31 ? 31 : k;
        if (!big_mul_add(b, (uint32_t)1 << s, 0))
            return false;
        k -= s;
    }
    return true;
}

/* divides by d, returns the remainder */
static uint32_t big_divmod(struct big *b, uint32_t d)
{
    uint64_t r = 0;
    for (int i = b->n - 1; i >= 0; i--) {
        uint64_t t = (r << 32) | b->l[i];
        b->l[i] = (uint32_t)(t / d);
        r = t % d;
    }
    big_norm(b);
    return (uint32_t)r;
}

static int big_cmp(const struct big *a, const struct big *b)
{
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    for (int i = a->n - 1; i >= 0; i--)
        if (a->l[i] != b->l[i])
            return a->l[i] < b->l[i] ? -1 : 1;
    return 0;
}

static bool big_add(struct big *a, const struct big *b)
{
    uint64_t carry = 0;
    int n = a->n > b->n ? a->n : b->n;
    for (int i = 0; i < n; i++) {
        uint64_t t = carry + (i < a->n ? a->l[i] : 0) + (i < b->n ? b->l[i] : 0);
        a->l[i] = (uint32_t)t;
        carry = t >> 32;
    }
    a->n = n;
    if (carry) {
        if (n >= CEL_QUANTITY_MAX_LIMBS)
            return false;
        a->l[a->n++] = (uint32_t)carry;
    }
    return true;
}

/* a -= b, |a| >= |b| */
static void big_sub(struct big *a, const struct big *b)
{
    int64_t borrow = 0;
    for (int i = 0; i < a->n; i++) {
        int64_t t = (int64_t)a->l[i] - (i < b->n ? b->l[i] : 0) - borrow;
        borrow = t < 0;
        a->l[i] = (uint32_t)(t + (borrow ? ((int64_t)1 << 32) : 0));
    }
    big_norm(a);
}

static void big_from_u64(struct big *b, uint64_t v)
{
    b->n = 0;
    while (v) {
        b->l[b->n++] = (uint32_t)v;
        v >>= 32;
    }
}

static int big_bits(const struct big *b)
{
    if (b->n == 0)
        return 0;
    return (b->n - 1) * 32 + (32 - __builtin_clz(b->l[b->n - 1]));
}

/* nearest-even conversion to double (big.Float at 53 bits, then Float64) */
static double big_to_double(const struct big *b)
{
    int bits = big_bits(b);
    uint64_t top = 0;
    bool sticky = false;
    int shift;

    if (bits <= 64) {
        for (int i = b->n - 1; i >= 0; i--)
            top = (top << 32) | b->l[i];
        return (double)top;
    }
    shift = bits - 64;
    for (int i = 0; i < 64; i++) {
        int bit = shift + i;
        if ((b->l[bit / 32] >> (bit % 32)) & 1)
            top |= (uint64_t)1 << i;
    }
    for (int bit = 0; bit < shift && !sticky; bit++)
        if ((b->l[bit / 32] >> (bit % 32)) & 1)
            sticky = true;
    if (sticky)
        top |= 1;
    return ldexp((double)top, shift);
}

/* ---- quantities ---- */

static struct cel_quantity *q_new(struct arena *a)
{
    return arena_alloc(a, sizeof(struct cel_quantity));
}

static const struct cel_quantity *q_dec(struct arena *a, int sign, const struct big *m,
                                        int32_t dscale, const char **err)
{
    struct cel_quantity *q = q_new(a);
    uint32_t *l;

    if (!q) {
        *err = "out of memory";
        return NULL;
    }
    q->dec = true;
    q->fmt = CEL_QF_DECIMAL_SI;
    q->sign = m->n ? sign : 0;
    q->dscale = dscale;
    q->nl = m->n;
    if (m->n) {
        l = arena_alloc(a, (size_t)m->n * sizeof(uint32_t));
        if (!l) {
            *err = "out of memory";
            return NULL;
        }
        memcpy(l, m->l, (size_t)m->n * sizeof(uint32_t));
        q->l = l;
    }
    return q;
}

static const struct cel_quantity *q_int(struct arena *a, int64_t value, int32_t scale)
{
    struct cel_quantity *q = q_new(a);
    if (q) {
        q->value = value;
        q->scale = scale;
        q->fmt = CEL_QF_DECIMAL_SI;
    }
    return q;
}

static const struct cel_quantity *q_fmt(const struct cel_quantity *q, int fmt, bool canon)
{
    if (q) {
        ((struct cel_quantity *)q)->fmt = (uint8_t)fmt;
        ((struct cel_quantity *)q)->canon = canon;
    }
    return q;
}

static bool mul_ovf(int64_t a, int64_t b, int64_t *c)
{
    return __builtin_mul_overflow(a, b, c);
}

/* positiveScaleInt64: base x 10^scale, false on overflow */
static bool pos_scale(int64_t base, int32_t scale, int64_t *out)
{
    int64_t v = base;
    for (int32_t i = 0; i < scale; i++) {
        if (v == 0)
            break;
        if (mul_ovf(v, 10, &v))
            return false;
    }
    *out = v;
    return true;
}

/* strings.HasSuffix(num+denom, "000") */
static bool ends_000(const char *num, size_t nl, const char *den, size_t dl)
{
    char t[3];
    for (int k = 0; k < 3; k++) {
        size_t back = (size_t)(3 - k); /* position from the end */
        t[k] = back <= dl ? den[dl - back] : num[nl - (back - dl)];
    }
    return t[0] == '0' && t[1] == '0' && t[2] == '0';
}

static const struct cel_quantity *parse(struct arena *a, const char *str, size_t end,
                                        const char **err);

const struct cel_quantity *cel_quantity_parse(struct arena *a, const char *str, size_t end,
                                              const char **err)
{
    struct cel_quantity *q = (struct cel_quantity *)parse(a, str, end, err);
    if (q && q->canon) { /* ParseQuantity kept the string: String() returns it as written */
        char *t = arena_alloc(a, end + 1);
        if (!t) {
            *err = "out of memory";
            return NULL;
        }
        memcpy(t, str, end);
        t[end] = 0;
        q->text = t;
        q->text_len = (uint32_t)end;
    }
    return q;
}

static const struct cel_quantity *parse(struct arena *a, const char *str, size_t end,
                                        const char **err)
{
    size_t pos = 0, i, num_s, num_e, den_s = 0, den_e = 0, val_e, suf_s, suf_e;
    bool positive = true;
    const char *num = "0";
    size_t num_len = 1, den_len = 0;
    int32_t base = 10, exponent = 0, fmt; /* fmt: 0 DecimalExponent, 1 BinarySI, 2 DecimalSI */
    int32_t precision = 0, scale = 0;
    int64_t mantissa = 1;

    *err = NULL;
    if (end == 0) {
        *err = ERR_FORMAT;
        return NULL;
    }
    if (end == 1 && str[0] == '0')
        return q_fmt(q_int(a, 0, 0), CEL_QF_DECIMAL_SI, true);
    /* parseQuantityString */
    if (str[0] == '-') {
        positive = false;
        pos++;
    } else if (str[0] == '+') {
        pos++;
    }
    for (i = pos;; i++) {
        if (i >= end) {
            val_e = 0; /* value = "0" */
            suf_s = suf_e = end;
            goto parsed_zero;
        }
        if (str[i] != '0')
            break;
        pos++;
    }
    num_s = pos;
    for (i = pos;; i++) {
        if (i >= end) {
            num = str + num_s;
            num_len = end - num_s;
            val_e = end;
            suf_s = suf_e = end;
            goto parsed;
        }
        if (str[i] < '0' || str[i] > '9')
            break;
    }
    num_e = i;
    pos = i;
    num = str + num_s;
    num_len = num_e - num_s;
    if (num_len == 0) {
        num = "0";
        num_len = 1;
    }
    if (pos < end && str[pos] == '.') {
        pos++;
        den_s = pos;
        for (i = pos;; i++) {
            if (i >= end) {
                den_e = end;
                den_len = den_e - den_s;
                val_e = end;
                suf_s = suf_e = end;
                goto parsed;
            }
            if (str[i] < '0' || str[i] > '9')
                break;
        }
        den_e = i;
        den_len = den_e - den_s;
        pos = i;
    }
    val_e = pos;
    suf_s = pos;
    for (i = pos;; i++) {
        if (i >= end) {
            suf_e = end;
            goto parsed;
        }
        if (!str[i] || !strchr("eEinumkKMGTP", str[i]))
            break;
    }
    pos = i;
    if (pos < end && (str[pos] == '-' || str[pos] == '+'))
        pos++;
    for (i = pos;; i++) {
        if (i >= end) {
            suf_e = end;
            goto parsed;
        }
        if (str[i] < '0' || str[i] > '9')
            break;
    }
    *err = ERR_FORMAT;
    return NULL;
parsed_zero:
    num = "0";
    num_len = 1;
    den_len = 0;
    {
        /* value is "0" */
        static const char zero[] = "0";
        (void)zero;
    }
parsed : {
    const char *suf = str + suf_s;
    size_t sl = suf_e - suf_s;
    const char *value = str;
    size_t value_len = val_e;
    bool value_is_zero_text = false;

    if (val_e == 0 && suf_s == end && num_len == 1 && num[0] == '0') {
        /* every digit was a zero (or there were none): cel sees value "0" */
        value_is_zero_text = true;
    }
    /* quantitySuffixer.interpret */
    if (sl == 0) {
        base = 10;
        exponent = 0;
        fmt = 2;
    } else if (sl == 1 && suf[0] && strchr("numkMGTPE", suf[0])) {
        static const struct {
            char c;
            int e;
        } dec[] = {{'n', -9}, {'u', -6}, {'m', -3}, {'k', 3}, {'M', 6},
                   {'G', 9},  {'T', 12}, {'P', 15}, {'E', 18}};
        for (size_t k = 0; k < sizeof(dec) / sizeof(dec[0]); k++)
            if (dec[k].c == suf[0])
                exponent = dec[k].e;
        base = 10;
        fmt = 2;
    } else if (sl == 2 && suf[1] == 'i' && suf[0] && strchr("KMGTPE", suf[0])) {
        base = 2;
        exponent = (int32_t)(strchr("KMGTPE", suf[0]) - "KMGTPE" + 1) * 10;
        fmt = 1;
    } else if (sl > 1 && (suf[0] == 'e' || suf[0] == 'E')) {
        /* strconv.ParseInt(suffix[1:], 10, 64), then int32() */
        const char *p = suf + 1;
        size_t k = 0, pl = sl - 1;
        bool neg = false;
        uint64_t v = 0;
        if (pl > 0 && (p[0] == '+' || p[0] == '-')) {
            neg = p[0] == '-';
            k = 1;
        }
        if (k >= pl) {
            *err = ERR_SUFFIX;
            return NULL;
        }
        for (; k < pl; k++) {
            if (p[k] < '0' || p[k] > '9') {
                *err = ERR_SUFFIX;
                return NULL;
            }
            if (v > (UINT64_MAX - 9) / 10) {
                *err = ERR_SUFFIX;
                return NULL;
            }
            v = v * 10 + (uint64_t)(p[k] - '0');
        }
        if ((!neg && v > (uint64_t)INT64_MAX) || (neg && v > (uint64_t)INT64_MAX + 1)) {
            *err = ERR_SUFFIX;
            return NULL;
        }
        exponent = (int32_t)(uint32_t)(neg ? (0 - v) : v);
        base = 10;
        fmt = 0;
    } else {
        *err = ERR_SUFFIX;
        return NULL;
    }

    switch (fmt) {
    case 0:
    case 2:
        scale = exponent;
        precision = 18 - (int32_t)(num_len + den_len);
        break;
    case 1:
        scale = 0;
        if (exponent >= 0 && den_len == 0) {
            mantissa = (int64_t)((uint64_t)mantissa << exponent);
            precision = 15 - (int32_t)num_len - (int32_t)((float)exponent * 3 / 10) - 1;
        } else {
            precision = -1;
        }
        break;
    }
    if (precision >= 0) {
        scale -= (int32_t)den_len;
        if (scale >= -9) {
            int64_t v = 0, result;
            for (size_t k = 0; k < num_len; k++)
                v = v * 10 + (num[k] - '0');
            for (size_t k = 0; k < den_len; k++)
                v = v * 10 + (str[den_s + k] - '0');
            /* int64Multiply */
            if (v == 0 || mantissa == 0 || v == 1 || mantissa == 1) {
                result = (int64_t)((uint64_t)v * (uint64_t)mantissa);
                goto fast;
            }
            if (!mul_ovf(v, mantissa, &result))
                goto fast;
            goto slow;
        fast:
            if (!positive)
                result = (int64_t)(0 - (uint64_t)result);
            {
                /* "if the number is in canonical form, reuse the string" */
                bool canon;
                if (fmt == 1)
                    canon = exponent % 10 == 0 && (v & 7) != 0;
                else
                    canon =
                        scale % 3 == 0 && num[0] != '0' &&
                        !(num_len + den_len >= 3 && ends_000(num, num_len, str + den_s, den_len));
                return q_fmt(q_int(a, result, scale), fmt, canon);
            }
        }
    }
slow : {
    /* inf.Dec.SetString(value), then the suffix, rounding and caps */
    struct big m = {0};
    int32_t dscale = 0;
    int sign = positive ? 1 : -1;
    bool seen_digit = false, seen_dot = false;
    int32_t frac = 0;

    if (value_is_zero_text) {
        value = "0";
        value_len = 1;
        sign = 1;
    }
    for (size_t k = 0; k < value_len; k++) {
        char c = value[k];
        if ((c == '+' || c == '-') && k == 0)
            continue;
        if (c == '.') {
            seen_dot = true;
            continue;
        }
        if (c < '0' || c > '9') {
            *err = ERR_NUMERIC;
            return NULL;
        }
        seen_digit = true;
        if (seen_dot)
            frac++;
        if (!big_mul_add(&m, 10, (uint32_t)(c - '0'))) {
            *err = ERR_BIG;
            return NULL;
        }
        big_norm(&m);
    }
    if (!seen_digit) {
        *err = ERR_NUMERIC;
        return NULL;
    }
    dscale = frac;
    if (base == 10) {
        dscale = (int32_t)((int64_t)dscale - exponent);
    } else if (!big_shl(&m, exponent)) {
        *err = ERR_BIG;
        return NULL;
    }
    big_norm(&m);
    if (m.n != 0) {
        /* Round(amount, 9, RoundUp): ceil of the magnitude at nine decimals */
        if (dscale <= 9) {
            if (!big_mul_pow10(&m, (int64_t)9 - dscale)) {
                *err = ERR_BIG;
                return NULL;
            }
        } else {
            bool rem = false;
            int64_t k = (int64_t)dscale - 9;
            while (k > 0 && m.n) {
                int step = k >= 9 ? 9 : (int)k;
                static const uint32_t p10[] = {1,      10,      100,      1000,      10000,
                                               100000, 1000000, 10000000, 100000000, 1000000000};
                if (big_divmod(&m, p10[step]))
                    rem = true;
                k -= step;
            }
            if (k > 0)
                rem = true; /* everything shifted out */
            if (rem) {
                struct big one;
                big_from_u64(&one, 1);
                if (!big_add(&m, &one)) {
                    *err = ERR_BIG;
                    return NULL;
                }
            }
        }
        dscale = 9;
    }
    if (fmt == 1) {
        struct big max;
        big_from_u64(&max, (uint64_t)INT64_MAX);
        /* compare m x 10^-9 with 2^63-1 */
        {
            struct big mx = max;
            int32_t ms = dscale;
            int c;
            if (!big_mul_pow10(&mx, ms)) {
                *err = ERR_BIG;
                return NULL;
            }
            c = big_cmp(&m, &mx);
            if (c > 0) {
                m = max;
                dscale = 0;
            }
        }
        /* BinarySI between 0 and 1 (exclusive) prints as DecimalSI */
        if (m.n) {
            struct big one;
            big_from_u64(&one, 1);
            if (dscale > 0 && big_mul_pow10(&one, dscale) && big_cmp(&m, &one) < 0)
                fmt = 2;
        }
    }
    return q_fmt(q_dec(a, sign, &m, dscale, err), fmt, false);
}
}
}

/* ---- Quantity.String() ---- */

static void q_to_big(const struct cel_quantity *q, int *sign, struct big *m, int64_t *exp10);
static int mag_cmp(const struct big *a, int64_t ea, const struct big *b, int64_t eb);

static bool big_is_zero(const struct big *b)
{
    return b->n == 0;
}

/* removes factors of f (f < 2^32) while the magnitude divides; returns how many */
static int32_t big_remove_factors(struct big *b, uint32_t f)
{
    int32_t times = 0;
    while (!big_is_zero(b)) {
        struct big t = *b;
        if (big_divmod(&t, f) != 0)
            break;
        big_norm(&t);
        *b = t;
        times++;
    }
    return times;
}

static void big_append_decimal(struct buf *out, int sign, const struct big *m)
{
    struct big t = *m;
    char digits[CEL_QUANTITY_MAX_LIMBS * 10 + 16];
    int nd = 0;

    if (big_is_zero(&t)) {
        buf_append(out, "0", 1);
        return;
    }
    while (!big_is_zero(&t)) {
        uint32_t r = big_divmod(&t, 1000000000u);
        big_norm(&t);
        for (int k = 0; k < 9; k++) {
            digits[nd++] = (char)('0' + r % 10);
            r /= 10;
            if (big_is_zero(&t) && r == 0)
                break;
        }
    }
    if (sign < 0)
        buf_append(out, "-", 1);
    for (int k = nd - 1; k >= 0; k--)
        buf_append(out, &digits[k], 1);
}

/* negativeScaleInt64: base / 10^scale rounded away from zero; exact says no digit was lost */
static int64_t neg_scale(int64_t base, int32_t scale, bool *exact)
{
    int64_t value = base;
    bool fraction = false;
    for (int32_t i = 0; i < scale; i++) {
        if (!fraction && value % 10 != 0)
            fraction = true;
        value /= 10;
        if (value == 0) {
            *exact = !fraction;
            return fraction ? (base > 0 ? 1 : -1) : 0;
        }
    }
    if (fraction)
        value += base > 0 ? 1 : -1;
    *exact = !fraction;
    return value;
}

/* removeInt64Factors */
static int64_t remove_i64_factors(int64_t v, int64_t base, int32_t *times)
{
    bool neg = v < 0;
    int64_t r = neg ? (int64_t)(0 - (uint64_t)v) : v;
    *times = 0;
    while (r >= base && r % base == 0) {
        (*times)++;
        r /= base;
    }
    return neg ? (int64_t)(0 - (uint64_t)r) : r;
}

static void dec_suffix(struct buf *out, int32_t exponent, int fmt)
{
    static const char *const si[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
    if (fmt == CEL_QF_DECIMAL_EXPONENT) {
        if (exponent)
            buf_printf(out, "e%d", exponent);
        return;
    }
    if (exponent % 3 == 0 && exponent >= -9 && exponent <= 18)
        buf_puts(out, si[(exponent + 9) / 3]);
}

/* infDecAmount.AsCanonicalBytes and the decimal suffix */
bool cel_quantity_string(const struct cel_quantity *q, struct buf *out)
{
    return cel_quantity_canonical(q, NULL, 0, out);
}

static void dec_canonical(struct buf *out, int sign, struct big *m, int64_t exp10, int fmt)
{
    int32_t exponent = (int32_t)exp10;
    exponent += big_remove_factors(m, 10);
    while (exponent % 3 != 0) {
        big_mul_add(m, 10, 0);
        exponent--;
    }
    big_append_decimal(out, sign, m);
    dec_suffix(out, exponent, fmt);
}

bool cel_quantity_canonical(const struct cel_quantity *q, const char *text, size_t n,
                            struct buf *out)
{
    int fmt = q->fmt;
    int sign;
    struct big m = {0};
    int64_t exp10;

    if (q->canon) {
        if (!text) {
            text = q->text ? q->text : "";
            n = q->text_len;
        }
        buf_append(out, text, n);
        return out->data != NULL || n == 0;
    }
    q_to_big(q, &sign, &m, &exp10);
    if (sign == 0) {
        buf_append(out, "0", 1);
        return out->data != NULL;
    }
    if (fmt == CEL_QF_BINARY_SI) {
        /* -1024 < q < 1024: DecimalSI; else AsScale(0) must be exact */
        struct big k1024;
        big_from_u64(&k1024, 1024);
        if (mag_cmp(&m, exp10, &k1024, 0) < 0) {
            fmt = CEL_QF_DECIMAL_SI;
        } else if (q->dec) {
            if (exp10 < 0) {
                struct big t = m;
                int64_t k = -exp10;
                bool rem = false;
                while (k > 0 && !big_is_zero(&t)) {
                    if (big_divmod(&t, 10))
                        rem = true;
                    big_norm(&t);
                    k--;
                }
                if (rem || k > 0)
                    fmt = CEL_QF_DECIMAL_SI;
            }
        } else if (q->scale < 0) {
            bool exact;
            neg_scale(q->value, -q->scale, &exact);
            if (!exact)
                fmt = CEL_QF_DECIMAL_SI;
        }
    }
    if (fmt != CEL_QF_BINARY_SI) {
        if (!q->dec) {
            int32_t times;
            int64_t amount = remove_i64_factors(q->value, 10, &times);
            int32_t exponent = q->scale + times;
            int64_t c;
            bool ok = true;
            switch (exponent % 3) {
            case 1:
            case -2:
                ok = !(amount == INT64_MIN) && !__builtin_mul_overflow(amount, 10, &c);
                if (ok) {
                    amount = c;
                    exponent -= 1;
                }
                break;
            case 2:
            case -1:
                ok = !(amount == INT64_MIN) && !__builtin_mul_overflow(amount, 100, &c);
                if (ok) {
                    amount = c;
                    exponent -= 2;
                }
                break;
            }
            if (ok) {
                buf_printf(out, "%lld", (long long)amount);
                dec_suffix(out, exponent, fmt);
                return out->data != NULL;
            }
        }
        dec_canonical(out, sign, &m, exp10, fmt);
        return out->data != NULL;
    }
    /* BinarySI: the integer value in units of 1024^k */
    {
        int32_t times;
        if (!q->dec) {
            int64_t v;
            bool exact;
            bool ok = true;
            if (q->scale < 0)
                v = neg_scale(q->value, -q->scale, &exact);
            else
                ok = pos_scale(q->value, q->scale, &v);
            if (ok) {
                int64_t amount = remove_i64_factors(v, 1024, &times);
                buf_printf(out, "%lld", (long long)amount);
                if (times > 0 && times <= 6)
                    buf_printf(out, "%ci", "KMGTPE"[times - 1]);
                return out->data != NULL;
            }
        }
        /* round to an integer (exact here) and remove factors of 1024 */
        if (exp10 < 0) {
            for (int64_t k = -exp10; k > 0; k--) {
                big_divmod(&m, 10);
                big_norm(&m);
            }
        } else {
            big_mul_pow10(&m, exp10);
        }
        times = big_remove_factors(&m, 1024);
        big_append_decimal(out, sign, &m);
        if (times > 0 && times <= 6)
            buf_printf(out, "%ci", "KMGTPE"[times - 1]);
        return out->data != NULL;
    }
}

static void q_to_big(const struct cel_quantity *q, int *sign, struct big *m, int64_t *exp10)
{
    if (q->dec) {
        *sign = q->sign;
        m->n = q->nl;
        if (q->nl)
            memcpy(m->l, q->l, (size_t)q->nl * sizeof(uint32_t));
        *exp10 = -(int64_t)q->dscale;
    } else {
        *sign = q->value > 0 ? 1 : q->value < 0 ? -1 : 0;
        big_from_u64(m, q->value < 0 ? (uint64_t)0 - (uint64_t)q->value : (uint64_t)q->value);
        *exp10 = q->scale;
    }
}

/* compares magnitudes a x 10^ea and b x 10^eb; 2 on overflow */
static int mag_cmp(const struct big *a, int64_t ea, const struct big *b, int64_t eb)
{
    double oa, ob;
    struct big t;

    if (a->n == 0 || b->n == 0)
        return a->n == b->n ? 0 : a->n == 0 ? -1 : 1;
    oa = big_bits(a) * 0.30102999566398120 + (double)ea;
    ob = big_bits(b) * 0.30102999566398120 + (double)eb;
    if (oa > ob + 3)
        return 1;
    if (ob > oa + 3)
        return -1;
    if (ea >= eb) {
        t = *a;
        if (!big_mul_pow10(&t, ea - eb))
            return 2;
        return big_cmp(&t, b);
    }
    t = *b;
    if (!big_mul_pow10(&t, eb - ea))
        return 2;
    return big_cmp(a, &t);
}

int cel_quantity_cmp(const struct cel_quantity *x, const struct cel_quantity *y)
{
    struct big a, b;
    int sa, sb, c;
    int64_t ea, eb;

    if (!x->dec && !y->dec && x->scale == y->scale)
        return x->value < y->value ? -1 : x->value > y->value; /* int64Amount.Cmp's fast path */
    q_to_big(x, &sa, &a, &ea);
    q_to_big(y, &sb, &b, &eb);
    if (sa != sb)
        return sa < sb ? -1 : 1;
    if (sa == 0)
        return 0;
    c = mag_cmp(&a, ea, &b, eb);
    if (c == 2)
        c = 0;
    return sa > 0 ? c : -c;
}

/* int64Amount.Add with Go's wrapping int64 */
static bool i64_add(int64_t *av, int32_t *as, int64_t bv, int32_t bs)
{
    int64_t c;
    if (bv == 0)
        return true;
    if (*av == 0) {
        *av = bv;
        *as = bs;
        return true;
    }
    if (*as == bs) {
        if (__builtin_add_overflow(*av, bv, &c))
            return false;
        *av = c;
        return true;
    }
    if (*as > bs) {
        int64_t s;
        if (!pos_scale(*av, *as - bs, &s))
            return false;
        if (__builtin_add_overflow(s, bv, &c))
            return false;
        *as = bs;
        *av = c;
        return true;
    }
    {
        int64_t s;
        if (!pos_scale(bv, bs - *as, &s))
            return false;
        if (__builtin_add_overflow(*av, s, &c))
            return false;
        *av = c;
        return true;
    }
}

const struct cel_quantity *cel_quantity_add(struct arena *ar, const struct cel_quantity *x,
                                            const struct cel_quantity *y, bool sub,
                                            const char **err)
{
    struct cel_quantity *r;

    *err = NULL;
    if (!x->dec && !y->dec) {
        int64_t v = x->value;
        int32_t s = x->scale;
        /* Sub adds {-value, scale}, negated with wrap-around as in Go */
        int64_t yv = sub ? (int64_t)(0 - (uint64_t)y->value) : y->value;
        if (i64_add(&v, &s, yv, y->scale)) {
            r = q_new(ar);
            if (!r) {
                *err = "out of memory";
                return NULL;
            }
            r->value = v;
            r->scale = s;
            r->ptr = true;
            r->fmt = x->value == 0 ? y->fmt : x->fmt; /* a zero receiver takes y's Format */
            return r;
        }
    }
    {
        /* inf.Dec: scale max(sx, sy), exact */
        struct big a, b;
        int sa, sb;
        int64_t ea, eb, e;
        const struct cel_quantity *res;
        q_to_big(x, &sa, &a, &ea);
        q_to_big(y, &sb, &b, &eb);
        if (sub)
            sb = -sb;
        e = ea < eb ? ea : eb;
        if ((a.n && !big_mul_pow10(&a, ea - e)) || (b.n && !big_mul_pow10(&b, eb - e))) {
            *err = ERR_BIG;
            return NULL;
        }
        if (sa == 0 || a.n == 0) {
            a = b;
            sa = sb;
        } else if (sb != 0 && b.n != 0) {
            if (sa == sb) {
                if (!big_add(&a, &b)) {
                    *err = ERR_BIG;
                    return NULL;
                }
            } else if (big_cmp(&a, &b) >= 0) {
                big_sub(&a, &b);
            } else {
                big_sub(&b, &a);
                a = b;
                sa = sb;
            }
        }
        if (e < INT32_MIN || e > INT32_MAX) {
            *err = ERR_BIG;
            return NULL;
        }
        res = q_dec(ar, sa, &a, (int32_t)-e, err);
        if (res) {
            ((struct cel_quantity *)res)->ptr = true;
            ((struct cel_quantity *)res)->fmt = cel_quantity_sign(x) == 0 ? y->fmt : x->fmt;
        }
        return res;
    }
}

const struct cel_quantity *cel_quantity_to_dec(struct arena *a, const struct cel_quantity *q)
{
    struct big m;
    int sign;
    int64_t e;
    const char *err;
    struct cel_quantity *d;

    if (q->dec)
        return q;
    /* int64Amount.AsDec: unscaled value, scale -scale; Format and the cached text stay */
    q_to_big(q, &sign, &m, &e);
    d = (struct cel_quantity *)q_dec(a, sign, &m, (int32_t)-e, &err);
    if (!d)
        return NULL;
    d->fmt = q->fmt;
    d->canon = q->canon;
    d->text = q->text;
    d->text_len = q->text_len;
    d->ptr = q->ptr;
    return d;
}

const struct cel_quantity *cel_quantity_from_int(struct arena *a, int64_t v)
{
    return q_int(a, v, 0);
}

bool cel_quantity_as_int64(const struct cel_quantity *q, int64_t *out)
{
    if (q->dec)
        return false;
    if (q->scale == 0) {
        *out = q->value;
        return true;
    }
    if (q->scale < 0)
        return false;
    return pos_scale(q->value, q->scale, out);
}

double cel_go_pow10(int n)
{
    static const double tab[32] = {
        1e00, 1e01, 1e02, 1e03, 1e04, 1e05, 1e06, 1e07, 1e08, 1e09, 1e10,
        1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21,
        1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31,
    };
    static const double postab32[] = {1e00,  1e32,  1e64,  1e96,  1e128,
                                      1e160, 1e192, 1e224, 1e256, 1e288};
    static const double negtab32[] = {1e-00,  1e-32,  1e-64,  1e-96,  1e-128, 1e-160,
                                      1e-192, 1e-224, 1e-256, 1e-288, 1e-320};

    if (0 <= n && n <= 308)
        return postab32[n / 32] * tab[n % 32];
    if (-323 <= n && n <= 0)
        return negtab32[-n / 32] / tab[-n % 32];
    if (n > 0)
        return INFINITY;
    return 0;
}

double cel_quantity_approx_float(const struct cel_quantity *q)
{
    double base;
    int64_t e;

    if (q->dec) {
        struct big m = {0};
        m.n = q->nl;
        if (q->nl)
            memcpy(m.l, q->l, (size_t)q->nl * sizeof(uint32_t));
        base = big_to_double(&m);
        if (q->sign < 0)
            base = -base;
        e = -(int64_t)q->dscale;
    } else {
        base = (double)q->value;
        e = q->scale;
    }
    if (e == 0)
        return base;
    return base * cel_go_pow10(e > INT32_MAX ? INT32_MAX : e < INT32_MIN ? INT32_MIN : (int)e);
}

int cel_quantity_sign(const struct cel_quantity *q)
{
    if (q->dec)
        return q->sign;
    return q->value > 0 ? 1 : q->value < 0 ? -1 : 0;
}
