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

static void *compile(const char *pat, size_t n, char *err, size_t errsize)
{
    int code = 0;
    char arg[256];
    void *re = cel_re2_new(pat, n, &code, arg, sizeof(arg));

    if (!re) {
        if (code == 8)
            snprintf(err, errsize, "error parsing regexp: %s: ``", go_code(code));
        else
            snprintf(err, errsize, "error parsing regexp: %s: `%s`", go_code(code), arg);
    }
    return re;
}

bool cel_regex_check(const char *pat, size_t n, char *err, size_t errsize)
{
    void *re = compile(pat, n, err, errsize);
    if (!re)
        return false;
    cel_re2_free(re);
    return true;
}

const struct cel_regex *cel_regex_compile(struct arena *a, const char *pat, size_t n,
                                          struct cel_regex **list, char *err, size_t errsize)
{
    struct cel_regex *r = arena_alloc(a, sizeof(*r));
    if (!r) {
        snprintf(err, errsize, "out of memory");
        return NULL;
    }
    r->re = compile(pat, n, err, errsize);
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
    char err[400];
    void *re = compile(pat->v.s, pat->n, err, sizeof(err));
    size_t b, e;
    bool m;

    if (!re)
        return cel_err(ev->a, "%s", err);
    m = cel_re2_match(re, s->v.s, s->n, 0, &b, &e) != 0;
    cel_re2_free(re);
    return cel_bool(m);
}
