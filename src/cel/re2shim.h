/* re2shim.h - the few RE2 calls the CEL evaluator needs, callable from C. */
#ifndef CEL_RE2SHIM_H
#define CEL_RE2SHIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Compiles pat with Go-compatible options; NULL on failure with *code (RE2's ErrorCode, -1
 * out of memory) and the offending fragment copied into arg (at most argsize bytes, *argn of
 * them). */
void *cel_re2_new(const char *pat, size_t n, int *code, char *arg, size_t argsize, size_t *argn);
void cel_re2_free(void *re);
/* Unanchored search of s[pos:n) with s as context; 1 and the match's [*b, *e) or 0. */
int cel_re2_match(const void *re, const char *s, size_t n, size_t pos, size_t *b, size_t *e);

#ifdef __cplusplus
}
#endif

#endif
