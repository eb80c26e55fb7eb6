/* semver.c - semantic versions exactly as github.com/blang/semver/v4 parses and orders them
 * (the library behind Kubernetes' semver() and DRA version attributes). */
#include "cel/semver.h"

#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "cel/utf8.h"

static const char NUMBERS[] = "0123456789";
static const char ALPHANUM[] = "-ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

static bool only(const char *s, size_t n, const char *set)
{
    for (size_t i = 0; i < n; i++)
        if (!s[i] || !strchr(set, s[i]))
            return false;
    return true;
}

static bool leading_zero(const char *s, size_t n)
{
    return n > 1 && s[0] == '0';
}

/* strconv.Quote */
void cel_go_quote(struct buf *b, const char *s, size_t n)
{
    buf_puts(b, "\"");
    for (size_t i = 0; i < n;) {
        uint32_t r;
        size_t w = cel_utf8_decode(s + i, n - i, &r);
        if (r == 0xfffd && w == 1 && !((unsigned char)s[i] == 0xef)) {
            buf_printf(b, "\\x%02x", (unsigned char)s[i]);
            i += w;
            continue;
        }
        i += w;
        switch (r) {
        case '\a':
            buf_puts(b, "\\a");
            continue;
        case '\b':
            buf_puts(b, "\\b");
            continue;
        case '\f':
            buf_puts(b, "\\f");
            continue;
        case '\n':
            buf_puts(b, "\\n");
            continue;
        case '\r':
            buf_puts(b, "\\r");
            continue;
        case '\t':
            buf_puts(b, "\\t");
            continue;
        case '\v':
            buf_puts(b, "\\v");
            continue;
        case '\\':
            buf_puts(b, "\\\\");
            continue;
        case '"':
            buf_puts(b, "\\\"");
            continue;
        }
        if (r < 0x20 || r == 0x7f)
            buf_printf(b, "\\x%02x", r);
        else if (r >= 0x80 && r < 0xa0)
            buf_printf(b, "\\u%04x", r);
        else {
            char tmp[4];
            buf_append(b, tmp, cel_utf8_encode(r, tmp));
        }
    }
    buf_puts(b, "\"");
}

/* err = prefix + %q of s */
static void qerr(char *err, size_t es, const char *prefix, const char *s, size_t n)
{
    struct buf b = BUF_INIT(0);
    buf_puts(&b, prefix);
    cel_go_quote(&b, s, n);
    snprintf(err, es, "%s", b.data);
    buf_release(&b);
}

/* strconv.ParseUint(s, 10, 64) */
static bool parse_u64(const char *s, size_t n, uint64_t *out, char *err, size_t es)
{
    uint64_t v = 0;
    struct buf b = BUF_INIT(0);

    if (n == 0)
        goto syntax;
    for (size_t i = 0; i < n; i++) {
        unsigned d;
        if (s[i] < '0' || s[i] > '9')
            goto syntax;
        d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) {
            cel_go_quote(&b, s, n);
            snprintf(err, es, "strconv.ParseUint: parsing %s: value out of range", b.data);
            buf_release(&b);
            return false;
        }
        v = v * 10 + d;
    }
    *out = v;
    return true;
syntax:
    cel_go_quote(&b, s, n);
    snprintf(err, es, "strconv.ParseUint: parsing %s: invalid syntax", b.data);
    buf_release(&b);
    return false;
}

static const struct cel_semver *parse(struct arena *a, const char *s, size_t n, char *err,
                                      size_t es)
{
    struct cel_semver *v;
    const char *p1, *p2, *patch, *pre = NULL, *build = NULL;
    size_t l0, l1, lp, lpre = 0, lbuild = 0;
    const char *dot1, *dot2;

    if (n == 0) {
        snprintf(err, es, "Version string empty");
        return NULL;
    }
    dot1 = memchr(s, '.', n);
    dot2 = dot1 ? memchr(dot1 + 1, '.', n - (size_t)(dot1 + 1 - s)) : NULL;
    if (!dot1 || !dot2) {
        snprintf(err, es, "No Major.Minor.Patch elements found");
        return NULL;
    }
    v = arena_alloc(a, sizeof(*v));
    if (!v) {
        snprintf(err, es, "out of memory");
        return NULL;
    }
    l0 = (size_t)(dot1 - s);
    p1 = dot1 + 1;
    l1 = (size_t)(dot2 - p1);
    p2 = dot2 + 1;
    if (!only(s, l0, NUMBERS)) {
        qerr(err, es, "Invalid character(s) found in major number ", s, l0);
        return NULL;
    }
    if (leading_zero(s, l0)) {
        qerr(err, es, "Major number must not contain leading zeroes ", s, l0);
        return NULL;
    }
    if (!parse_u64(s, l0, &v->major, err, es))
        return NULL;
    if (!only(p1, l1, NUMBERS)) {
        qerr(err, es, "Invalid character(s) found in minor number ", p1, l1);
        return NULL;
    }
    if (leading_zero(p1, l1)) {
        qerr(err, es, "Minor number must not contain leading zeroes ", p1, l1);
        return NULL;
    }
    if (!parse_u64(p1, l1, &v->minor, err, es))
        return NULL;
    patch = p2;
    lp = n - (size_t)(p2 - s);
    {
        const char *plus = memchr(patch, '+', lp);
        if (plus) {
            build = plus + 1;
            lbuild = lp - (size_t)(build - patch);
            lp = (size_t)(plus - patch);
        }
    }
    {
        const char *minus = memchr(patch, '-', lp);
        if (minus) {
            pre = minus + 1;
            lpre = lp - (size_t)(pre - patch);
            lp = (size_t)(minus - patch);
        }
    }
    if (!only(patch, lp, NUMBERS)) {
        qerr(err, es, "Invalid character(s) found in patch number ", patch, lp);
        return NULL;
    }
    if (leading_zero(patch, lp)) {
        qerr(err, es, "Patch number must not contain leading zeroes ", patch, lp);
        return NULL;
    }
    if (!parse_u64(patch, lp, &v->patch, err, es))
        return NULL;
    if (pre) {
        int cnt = 1;
        size_t i, start = 0;
        for (i = 0; i < lpre; i++)
            if (pre[i] == '.')
                cnt++;
        v->pre = arena_alloc(a, (size_t)cnt * sizeof(*v->pre));
        if (!v->pre) {
            snprintf(err, es, "out of memory");
            return NULL;
        }
        for (i = 0; i <= lpre; i++) {
            if (i < lpre && pre[i] != '.')
                continue;
            {
                const char *ps = pre + start;
                size_t pl = i - start;
                struct cel_semver_pr *pr = &v->pre[v->npre];
                if (pl == 0) {
                    snprintf(err, es, "Prerelease is empty");
                    return NULL;
                }
                if (only(ps, pl, NUMBERS)) {
                    if (leading_zero(ps, pl)) {
                        qerr(err, es, "Numeric PreRelease version must not contain leading zeroes ",
                             ps, pl);
                        return NULL;
                    }
                    if (!parse_u64(ps, pl, &pr->num, err, es))
                        return NULL;
                    pr->numeric = true;
                } else if (only(ps, pl, ALPHANUM)) {
                    pr->numeric = false;
                } else {
                    qerr(err, es, "Invalid character(s) found in prerelease ", ps, pl);
                    return NULL;
                }
                pr->s = ps;
                pr->n = (uint32_t)pl;
                v->npre++;
            }
            start = i + 1;
        }
    }
    if (build) {
        size_t i, start = 0;
        for (i = 0; i <= lbuild; i++) {
            if (i < lbuild && build[i] != '.')
                continue;
            if (i == start) {
                snprintf(err, es, "Build meta data is empty");
                return NULL;
            }
            if (!only(build + start, i - start, ALPHANUM)) {
                qerr(err, es, "Invalid character(s) found in build meta data ", build + start,
                     i - start);
                return NULL;
            }
            v->nbuild++;
            start = i + 1;
        }
    }
    return v;
}

const struct cel_semver *cel_semver_parse(struct arena *a, const char *s, size_t n, bool normalize,
                                          char *err, size_t es)
{
    struct buf b = BUF_INIT(0);
    const struct cel_semver *v;
    const char *parts[3];
    size_t lens[3];
    int np = 0;
    size_t i, start;

    if (!normalize)
        return parse(a, s, n, err, es);
    /* normalizeAndParse */
    if (n > 0 && s[0] == 'v') {
        s++;
        n--;
    }
    start = 0;
    for (i = 0; i <= n && np < 3; i++) {
        if (np == 2) {
            parts[np] = s + start;
            lens[np++] = n - start;
            break;
        }
        if (i == n || s[i] == '.') {
            parts[np] = s + start;
            lens[np++] = i - start;
            start = i + 1;
        }
    }
    for (int k = 0; k < np; k++) {
        const char *p = parts[k];
        size_t l = lens[k];
        if (k)
            buf_puts(&b, ".");
        if (l > 1) {
            while (l > 0 && p[0] == '0') {
                p++;
                l--;
            }
            if (l == 0 || !p[0] || !strchr(NUMBERS, p[0]))
                buf_puts(&b, "0");
        }
        buf_append(&b, p, l);
    }
    if (np < 3) {
        const char *last = parts[np - 1];
        size_t ll = lens[np - 1];
        for (size_t k = 0; k < ll; k++)
            if (last[k] == '+' || last[k] == '-') {
                snprintf(err, es, "short version cannot contain PreRelease/Build meta data");
                buf_release(&b);
                return NULL;
            }
        for (; np < 3; np++)
            buf_puts(&b, ".0");
    }
    {
        char *copy = arena_alloc(a, b.len + 1);
        if (!copy) {
            buf_release(&b);
            snprintf(err, es, "out of memory");
            return NULL;
        }
        memcpy(copy, b.data ? b.data : "", b.len);
        v = parse(a, copy, b.len, err, es);
    }
    buf_release(&b);
    return v;
}

static int pr_cmp(const struct cel_semver_pr *a, const struct cel_semver_pr *b)
{
    if (a->numeric && !b->numeric)
        return -1;
    if (!a->numeric && b->numeric)
        return 1;
    if (a->numeric)
        return a->num == b->num ? 0 : a->num > b->num ? 1 : -1;
    {
        size_t n = a->n < b->n ? a->n : b->n;
        int c = memcmp(a->s, b->s, n);
        if (c)
            return c > 0 ? 1 : -1;
        return a->n == b->n ? 0 : a->n > b->n ? 1 : -1;
    }
}

int cel_semver_cmp(const struct cel_semver *v, const struct cel_semver *o)
{
    int i;

    if (v->major != o->major)
        return v->major > o->major ? 1 : -1;
    if (v->minor != o->minor)
        return v->minor > o->minor ? 1 : -1;
    if (v->patch != o->patch)
        return v->patch > o->patch ? 1 : -1;
    if (!v->npre && !o->npre)
        return 0;
    if (!v->npre)
        return 1;
    if (!o->npre)
        return -1;
    for (i = 0; i < v->npre && i < o->npre; i++) {
        int c = pr_cmp(&v->pre[i], &o->pre[i]);
        if (c)
            return c;
    }
    if (i == v->npre && i == o->npre)
        return 0;
    return i == v->npre ? -1 : 1;
}
