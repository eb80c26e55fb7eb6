/* goparse.c - Go's strconv.ParseInt/ParseUint/ParseBool and time.ParseDuration (see
 * goparse.h). The rules, including which of two faults is reported first, follow the Go
 * standard library's behaviour. */
#include "base/goparse.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/quote.h"

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static int num_error(struct err *err, const char *fn, const char *s, size_t n, int code)
{
    char q[160];

    /* the YAML reader tries every plain scalar that starts like a number as an int first,
     * without an err: no message to quote then */
    if (!err)
        return code;
    return err_set(err, code, "strconv.%s: parsing %s: %s", fn, quote_go_to(q, sizeof(q), s, n),
                   code == -ERANGE ? "value out of range" : "invalid syntax");
}

/* underscore_ok is Go's underscoreOK: in a base-0 literal, '_' only between digits (a base
 * prefix counts as a digit). */
static bool underscore_ok(const char *s, size_t n)
{
    char saw = '^'; /* ^ start, 0 digit or prefix, _ underscore, ! anything else */
    size_t i = 0;
    bool hex = false;

    if (n >= 1 && (s[0] == '-' || s[0] == '+')) {
        s++;
        n--;
    }
    if (n >= 2 && s[0] == '0' && (lower(s[1]) == 'b' || lower(s[1]) == 'o' || lower(s[1]) == 'x')) {
        i = 2;
        saw = '0';
        hex = lower(s[1]) == 'x';
    }
    for (; i < n; i++) {
        char c = lower(s[i]);

        if ((c >= '0' && c <= '9') || (hex && c >= 'a' && c <= 'f')) {
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

/* parse_uint is ParseUint's body; fn names the Go function in messages. */
static int parse_uint(const char *fn, const char *s0, size_t n0, int base, int bits, uint64_t *out,
                      struct err *err)
{
    const char *s = s0;
    size_t n = n0, i;
    bool base0 = base == 0, underscores = false;
    uint64_t v = 0, cutoff, max;

    *out = 0;
    if (!n)
        return num_error(err, fn, s0, n0, -EINVAL);
    if (base0) {
        base = 10;
        if (s[0] == '0') {
            if (n >= 3 && lower(s[1]) == 'b') {
                base = 2;
                s += 2;
                n -= 2;
            } else if (n >= 3 && lower(s[1]) == 'o') {
                base = 8;
                s += 2;
                n -= 2;
            } else if (n >= 3 && lower(s[1]) == 'x') {
                base = 16;
                s += 2;
                n -= 2;
            } else {
                base = 8;
                s++;
                n--;
            }
        }
    } else if (base < 2 || base > 36) {
        char q[160];

        return err_set(err, -EINVAL, "strconv.%s: parsing %s: invalid base %d", fn,
                       quote_go_to(q, sizeof(q), s0, n0), base);
    }
    if (bits <= 0 || bits > 64)
        bits = 64;
    max = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    cutoff = UINT64_MAX / (uint64_t)base + 1;
    for (i = 0; i < n; i++) {
        char c = s[i];
        unsigned d;
        uint64_t v1;

        if (c == '_' && base0) {
            underscores = true;
            continue;
        }
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (lower(c) >= 'a' && lower(c) <= 'z')
            d = (unsigned)(lower(c) - 'a') + 10;
        else
            return num_error(err, fn, s0, n0, -EINVAL);
        if (d >= (unsigned)base)
            return num_error(err, fn, s0, n0, -EINVAL);
        if (v >= cutoff) {
            *out = max;
            return num_error(err, fn, s0, n0, -ERANGE);
        }
        v *= (uint64_t)base;
        v1 = v + d;
        if (v1 < v || v1 > max) {
            *out = max;
            return num_error(err, fn, s0, n0, -ERANGE);
        }
        v = v1;
    }
    if (underscores && !underscore_ok(s0, n0))
        return num_error(err, fn, s0, n0, -EINVAL);
    *out = v;
    return 0;
}

int go_parse_uint(const char *s, size_t n, int base, int bits, uint64_t *out, struct err *err)
{
    return parse_uint("ParseUint", s, n, base, bits, out, err);
}

int go_parse_int(const char *s, size_t n, int base, int bits, int64_t *out, struct err *err)
{
    const char *p = s;
    size_t pn = n;
    bool neg = false;
    uint64_t u, cutoff;
    int rc;

    *out = 0;
    if (!n)
        return num_error(err, "ParseInt", s, n, -EINVAL);
    if (p[0] == '+' || p[0] == '-') {
        neg = p[0] == '-';
        p++;
        pn--;
    }
    if (bits <= 0 || bits > 64)
        bits = 64;
    rc = parse_uint("ParseInt", p, pn, base, 64, &u, NULL);
    if (rc == -EINVAL)
        return num_error(err, "ParseInt", s, n, -EINVAL);
    cutoff = (uint64_t)1 << (bits - 1);
    if (rc == -ERANGE || (!neg && u >= cutoff) || (neg && u > cutoff)) {
        *out = neg ? (int64_t)(0 - cutoff) : (int64_t)(cutoff - 1);
        return num_error(err, "ParseInt", s, n, -ERANGE);
    }
    *out = neg ? (int64_t)(0 - u) : (int64_t)u;
    return 0;
}

int go_parse_bool(const char *s, bool *out, struct err *err)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
    size_t i;

    for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (!strcmp(s, yes[i])) {
            *out = true;
            return 0;
        }
        if (!strcmp(s, no[i])) {
            *out = false;
            return 0;
        }
    }
    return num_error(err, "ParseBool", s, strlen(s), -EINVAL);
}

/* ---- time.ParseDuration ---- */

#define DUR_LIMIT ((uint64_t)1 << 63)

static const struct {
    const char *name;
    uint64_t ns;
} duration_units[] = {
    {"ns", 1},           {"us", 1000},      {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
    {"\xce\xbcs", 1000},                                         /* U+03BC Greek small letter mu */
    {"ms", 1000000},     {"s", 1000000000}, {"m", 60ULL * 1000000000}, {"h", 3600ULL * 1000000000},
};

static int duration_error(struct err *err, const char *what, const char *unit, size_t ulen,
                          const char *orig)
{
    char q[160], qu[80];

    if (unit)
        return err_set(err, -EINVAL, "time: unknown unit %s in duration %s",
                       quote_go_to(qu, sizeof(qu), unit, ulen),
                       quote_go_to(q, sizeof(q), orig, strlen(orig)));
    return err_set(err, -EINVAL, "time: %s %s", what,
                   quote_go_to(q, sizeof(q), orig, strlen(orig)));
}

int go_parse_duration(const char *orig, int64_t *ns, struct err *err)
{
    const char *s = orig;
    uint64_t d = 0;
    bool neg = false;

    *ns = 0;
    if (*s == '-' || *s == '+') {
        neg = *s == '-';
        s++;
    }
    if (!strcmp(s, "0"))
        return 0;
    if (!*s)
        return duration_error(err, "invalid duration", NULL, 0, orig);
    while (*s) {
        uint64_t v = 0, f = 0, unit = 0;
        double scale = 1;
        bool pre = false, post = false, overflow = false;
        size_t ulen, i;

        if (!(*s == '.' || (*s >= '0' && *s <= '9')))
            return duration_error(err, "invalid duration", NULL, 0, orig);
        for (; *s >= '0' && *s <= '9'; s++) {
            pre = true;
            if (v > DUR_LIMIT / 10)
                return duration_error(err, "invalid duration", NULL, 0, orig);
            v = v * 10 + (uint64_t)(*s - '0');
            if (v > DUR_LIMIT)
                return duration_error(err, "invalid duration", NULL, 0, orig);
        }
        if (*s == '.') {
            for (s++; *s >= '0' && *s <= '9'; s++) {
                uint64_t y;

                post = true;
                if (overflow)
                    continue;
                if (f > (DUR_LIMIT - 1) / 10) {
                    overflow = true;
                    continue;
                }
                y = f * 10 + (uint64_t)(*s - '0');
                if (y > DUR_LIMIT) {
                    overflow = true;
                    continue;
                }
                f = y;
                scale *= 10;
            }
        }
        if (!pre && !post)
            return duration_error(err, "invalid duration", NULL, 0, orig);
        for (ulen = 0; s[ulen] && s[ulen] != '.' && !(s[ulen] >= '0' && s[ulen] <= '9'); ulen++)
            ;
        if (!ulen)
            return duration_error(err, "missing unit in duration", NULL, 0, orig);
        for (i = 0; i < sizeof(duration_units) / sizeof(duration_units[0]); i++)
            if (strlen(duration_units[i].name) == ulen && !memcmp(s, duration_units[i].name, ulen))
                unit = duration_units[i].ns;
        if (!unit)
            return duration_error(err, NULL, s, ulen, orig);
        s += ulen;
        if (v > DUR_LIMIT / unit)
            return duration_error(err, "invalid duration", NULL, 0, orig);
        v *= unit;
        if (f > 0) {
            /* a double is exact enough here: at most 3.6e12 ns come from a fraction */
            v += (uint64_t)((double)f * ((double)unit / scale));
            if (v > DUR_LIMIT)
                return duration_error(err, "invalid duration", NULL, 0, orig);
        }
        d += v;
        if (d > DUR_LIMIT)
            return duration_error(err, "invalid duration", NULL, 0, orig);
    }
    if (neg) {
        *ns = (int64_t)(0 - d);
        return 0;
    }
    if (d > DUR_LIMIT - 1)
        return duration_error(err, "invalid duration", NULL, 0, orig);
    *ns = (int64_t)d;
    return 0;
}

const char *go_format_float(double v, char fmt, char *buf, size_t size)
{
    char e[40];
    int p, exp;

    if (isnan(v) || isinf(v) || v == 0) {
        snprintf(buf, size, "%s", isnan(v) ? "NaN" : isinf(v) ? (v > 0 ? "+Inf" : "-Inf") : "0");
        return buf;
    }
    /* the shortest digits that read back as v */
    for (p = 1; p < 17; p++) {
        snprintf(e, sizeof(e), "%.*e", p - 1, v);
        if (strtod(e, NULL) == v)
            break;
    }
    snprintf(e, sizeof(e), "%.*e", p - 1, v);
    exp = atoi(strchr(e, 'e') + 1);
    /* 'g' takes the exponent form below 1e-4 and from 1e+06 on: for the shortest form Go
     * decides with precision 6 */
    if (fmt == 'g' && (exp < -4 || exp >= 6))
        snprintf(buf, size, "%s", e);
    else
        snprintf(buf, size, "%.*f", p - 1 - exp > 0 ? p - 1 - exp : 0, v);
    return buf;
}
