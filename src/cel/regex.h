/* regex.h - regular expressions with Go's regexp semantics (RE2 syntax, leftmost-first),
 * through Debian's libre2 and a small extern "C" shim (re2shim.cc). */
#ifndef CEL_REGEX_H
#define CEL_REGEX_H

#include <stdbool.h>
#include <stddef.h>

#include "base/arena.h"
#include "base/buf.h"

struct cel_regex;

/* Compiles pat; NULL with Go's "error parsing regexp: ..." message appended to err on
 * failure (it may hold NUL bytes). The struct lives in a; the compiled RE2 is linked into
 * *list and freed by cel_regex_free_list. */
const struct cel_regex *cel_regex_compile(struct arena *a, const char *pat, size_t n,
                                          struct cel_regex **list, struct buf *err);
void cel_regex_free_list(struct cel_regex *list);
/* MatchString: whether s contains a match. */
bool cel_regex_search(const struct cel_regex *re, const char *s, size_t n);
/* The leftmost-first match at or after pos: returns true and sets [*b, *e). */
bool cel_regex_find_at(const struct cel_regex *re, const char *s, size_t n, size_t pos, size_t *b,
                       size_t *e);

#endif
