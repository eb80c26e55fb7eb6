/* regex.c - Go regexp semantics on RE2: compile with Go's error texts, MatchString, and the
 * leftmost-first searches find() and findAll() need. The compiled RE2 objects are freed with
 * the arena that owns them (a cleanup list). */
#include "cel/regex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cel/eval.h"
#include "cel/lib.h"
#include "cel/re2shim.h"

struct cel_regex {
    void *re;
    struct cel_regex *next;
};

/* RE2's error codes in Go's words (regexp/syntax.ErrorCode) */
static const char *go_code(int code)
{
    switch (code) {
    case 2:
        return "invalid escape sequence";
    case 3:
        return "invalid character class";
    case 4:
        return "invalid character class range";
    case 5:
        return "missing closing ]";
    case 6:
        return "missing closing )";
    case 7:
        return "unexpected )";
    case 8:
        return "trailing backslash at end of expression";
    case 9:
        return "missing argument to repetition operator";
    case 10:
        return "invalid repeat count";
    case 11:
        return "invalid nested repetition operator";
    case 12:
        return "invalid or unsupported Perl syntax";
    case 13:
        return "invalid UTF-8";
    case 14:
        return "invalid named capture";
    case 15:
        return "expression too large";
    default:
        return "regexp/syntax: internal error";
    }
}

/* Go's isValidCaptureName: one or more of [0-9A-Za-z_] */
static bool valid_capture_name(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!(c == '_' || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
              (c >= 'a' && c <= 'z')))
            return false;
    }
    return true;
}

/* Go accepts (?<name>re) besides (?P<name>re), and repeated names; this RE2 knows neither.
 * CEL needs no group names (matches, find and findAll use the whole match), so each valid
 * named group's opening is rewritten in place, keeping its length, into "(" and groups that
 * match the empty string ("()", "(|)"): error fragments then map back by offset. Escapes,
 * \Q...\E and character classes are skipped as Go's parser reads them. Returns the offset of
 * the first "(?<" group Go rejects (no '>' or a bad name), or n. */
static size_t rewrite_named(const char *p, size_t n, char *out)
{
    size_t i = 0;

    memcpy(out, p, n);
    while (i < n) {
        char c = p[i];
        if (c == '\\') {
            if (i + 1 < n && p[i + 1] == 'Q') {
                const char *e = memmem(p + i + 2, n - i - 2, "\\E", 2);
                i = e ? (size_t)(e - p) + 2 : n;
            } else {
                i += 2;
            }
            continue;
        }
        if (c == '[') {
            size_t j = i + 1;
            if (j < n && p[j] == '^')
                j++;
            if (j < n && p[j] == ']')
                j++;
            while (j < n && p[j] != ']') {
                if (p[j] == '\\') {
                    j += 2;
                } else if (p[j] == '[' && j + 1 < n && p[j + 1] == ':') {
                    const char *e = memmem(p + j + 2, n - j - 2, ":]", 2);
                    j = e ? (size_t)(e - p) + 2 : j + 1;
                } else {
                    j++;
                }
            }
            i = j + 1;
            continue;
        }
        if (c == '(' && i + 2 < n && p[i + 1] == '?') {
            size_t t = n - i, name_at;
            bool with_p = t > 4 && p[i + 2] == 'P' && p[i + 3] == '<';
            bool with_lt = t > 3 && p[i + 2] == '<';
            if (with_p || with_lt) {
                const char *gt = memchr(p + i, '>', t);
                size_t end, fill;
                name_at = i + (with_p ? 4 : 3);
                if (!gt || !valid_capture_name(p + name_at, (size_t)(gt - p) - name_at)) {
                    if (with_lt)
                        return i;
                    i += 1; /* RE2 reports a bad (?P< group as Go does */
                    continue;
                }
                end = (size_t)(gt - p) + 1;
                fill = end - i - 1;
                out[i] = '(';
                for (size_t k = i + 1; k < end;) {
                    if (fill % 2) {
                        memcpy(out + k, "(|)", 3);
                        k += 3;
                        fill -= 3;
                    } else {
                        memcpy(out + k, "()", 2);
                        k += 2;
                        fill -= 2;
                    }
                }
                i = end;
                continue;
            }
        }
        i++;
    }
    return n;
}

/* "error parsing regexp: CODE: `ARG`", ARG taken from the original pattern at the offset of
 * RE2's fragment in the rewritten one */
static void re2_error(struct buf *err, const char *pat, const char *rew, size_t n, int code,
                      const char *arg, size_t argn)
{
    const char *at = argn ? memmem(rew, n, arg, argn) : NULL;
    buf_printf(err, "error parsing regexp: %s: `", go_code(code));
    if (code != 8)
        buf_append(err, at ? pat + (at - rew) : arg, argn);
    buf_puts(err, "`");
}

static void *compile(const char *pat, size_t n, struct buf *err)
{
    int code = 0;
    size_t argn = 0, bad;
    char *rew = malloc(n ? n : 1), *arg = malloc(n + 1);
    void *re = NULL;

    if (!rew || !arg) {
        buf_puts(err, "out of memory");
        goto out;
    }
    bad = rewrite_named(pat, n, rew);
    re = cel_re2_new(rew, bad, &code, arg, n + 1, &argn);
    if (re && bad < n) {
        /* Go stops at the bad (?< group: only what precedes it was parsed */
        cel_re2_free(re);
        re = NULL;
        code = 6;
    }
    if (!re) {
        if (bad < n && code == 6) {
            const char *t = pat + bad, *gt = memchr(t, '>', n - bad);
            buf_puts(err, "error parsing regexp: invalid named capture: `");
            buf_append(err, t, gt ? (size_t)(gt - t) + 1 : n - bad);
            buf_puts(err, "`");
        } else if (code < 0) {
            buf_puts(err, "out of memory");
        } else if (code == 7) {
            /* unexpected ): Go shows the whole pattern, not the prefix RE2 saw */
            buf_printf(err, "error parsing regexp: %s: `", go_code(code));
            buf_append(err, pat, n);
            buf_puts(err, "`");
        } else {
            re2_error(err, pat, rew, n, code, arg, argn);
        }
    }
out:
    free(rew);
    free(arg);
    return re;
}

bool cel_regex_check(const char *pat, size_t n, struct buf *err)
{
    void *re = compile(pat, n, err);
    if (!re)
        return false;
    cel_re2_free(re);
    return true;
}

const struct cel_regex *cel_regex_compile(struct arena *a, const char *pat, size_t n,
                                          struct cel_regex **list, struct buf *err)
{
    struct cel_regex *r = arena_alloc(a, sizeof(*r));
    if (!r) {
        buf_puts(err, "out of memory");
        return NULL;
    }
    r->re = compile(pat, n, err);
    if (!r->re)
        return NULL;
    r->next = *list;
    *list = r;
    return r;
}

void cel_regex_free_list(struct cel_regex *list)
{
    while (list) {
        cel_re2_free(list->re);
        list = list->next;
    }
}

bool cel_regex_search(const struct cel_regex *re, const char *s, size_t n)
{
    size_t b, e;
    return cel_re2_match(re->re, s, n, 0, &b, &e) != 0;
}

bool cel_regex_find_at(const struct cel_regex *re, const char *s, size_t n, size_t pos, size_t *b,
                       size_t *e)
{
    return cel_re2_match(re->re, s, n, pos, b, e) != 0;
}

/* matches() with a pattern known only at run time: compiled per call, as cel-go does. */
struct cel_val cel_regex_matches(struct ev *ev, const struct cel_val *s, const struct cel_val *pat)
{
    struct buf err = BUF_INIT(0);
    void *re = compile(pat->v.s, pat->n, &err);
    size_t b, e;
    bool m;

    if (!re) {
        struct cel_val r = cel_err_buf(ev->a, &err);
        buf_release(&err);
        return r;
    }
    m = cel_re2_match(re, s->v.s, s->n, 0, &b, &e) != 0;
    cel_re2_free(re);
    return cel_bool(m);
}
