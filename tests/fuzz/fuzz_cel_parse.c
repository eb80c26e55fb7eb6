/* fuzz_cel_parse.c - libFuzzer target for the CEL compiler (src/cel/: lexer, parser, macros,
 * checker, validators, planner, cost estimate), in both environments.
 * Invariants: compiling never crashes or reads past the input; a failure is -EINVAL with a
 * non-empty message (or -ENOMEM); a syntax or type error's location lies inside the input;
 * compiling the same text twice gives the same answer. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int compile_once(const char *s, size_t n, enum cel_env_type env, char **detail)
{
    struct cel_compile_opts o = {env, false, 0};
    struct cel_program *p = NULL;
    struct cel_compile_error e;
    int rc = cel_compile(s, n, &o, &p, &e);

    *detail = NULL;
    if (rc == 0) {
        if (!p)
            abort();
        cel_program_free(p);
        return 0;
    }
    if (rc == -ENOMEM)
        return rc;
    if (rc != -EINVAL || !e.detail || !e.detail[0])
        abort();
    /* a located error sits on one of the input's lines */
    if (e.line < 0 || e.column < 0 || (size_t)e.line > n + 1)
        abort();
    *detail = e.detail;
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* an exact-size copy, so ASan sees any read past the end */
    char *s = malloc(size ? size : 1);
    if (!s || size > 20000) {
        free(s);
        return 0;
    }
    memcpy(s, data, size);
    for (int env = 0; env < 2; env++) {
        char *d1, *d2;
        int r1 = compile_once(s, size, env ? CEL_ENV_NEW : CEL_ENV_STORED, &d1);
        int r2 = compile_once(s, size, env ? CEL_ENV_NEW : CEL_ENV_STORED, &d2);
        if (r1 != r2 || (d1 && d2 && strcmp(d1, d2)))
            abort();
        free(d1);
        free(d2);
    }
    free(s);
    return 0;
}
