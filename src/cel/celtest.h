/* celtest.h - what the test tools need beyond cel.h: variables of any type besides the
 * device, results of any type (cel-eval --conformance, the unit tests). Not for production
 * callers: the values are the library's internal ones (value.h). */
#ifndef CEL_CELTEST_H
#define CEL_CELTEST_H

#include "cel/cel.h"
#include "cel/check.h"
#include "cel/value.h"

/* the type a conformance line declares ("int", "list(string)", "map(string, dyn)",
 * "timestamp", "duration", "type", ...); NULL when not understood */
const struct cel_type *cel_test_type(const char *text);

/* cel_compile with decls declared as variables and no check of the output type */
int cel_test_compile(const char *expr, size_t len, const struct cel_compile_opts *opts,
                     const struct cel_decl *decls, int ndecls, struct cel_program **out,
                     struct cel_compile_error *err);

/* evaluates with vars[i] the value of decls[i]; *out (an error value on failure) lives in s
 * until the next evaluation; call cel_test_reset between evaluations */
int cel_test_eval(const struct cel_program *p, const struct cel_val *vars, struct cel_scratch *s,
                  struct cel_val *out);
struct arena *cel_test_scratch_arena(struct cel_scratch *s);

/* the conformance value encoding of v as JSON text (docs/cel-testing.md) */
void cel_test_encode(struct buf *b, const struct cel_val *v);

#endif
