/* strfmt.h - the parser of <string>.format()'s format strings (cel-go's parseFormatString),
 * shared by the evaluator (strfmt.c) and the compile-time check of constant format strings
 * (check.c), each with its own clauses. */
#ifndef CEL_STRFMT_H
#define CEL_STRFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "cel/value.h"

/* Go takes any precision that fits an int; past this one the evaluator refuses the clause
 * (a string that long would not be a selector's business). */
#define CEL_FMT_MAX_PRECISION 1000000

struct cel_fmt_ops {
    /* the argument at index is about to be used: false with err set to refuse it */
    bool (*arg)(void *ctx, int64_t index, struct buf *err);
    int64_t (*size)(void *ctx);
    /* formats argument index with verb (s d f e b x X o) and precision (-1: none) into out;
     * false with err set (and *err_id, for the check, the expression to blame) */
    bool (*clause)(void *ctx, int64_t index, char verb, int prec, struct buf *out, struct buf *err,
                   int64_t *err_id);
};

/* Returns 0, or -1 with err holding cel-go's message (and *err_id the expression a clause
 * blamed, 0 when none). */
int cel_fmt_parse(const char *f, size_t n, const struct cel_fmt_ops *ops, void *ctx,
                  struct buf *out, struct buf *err, int64_t *err_id);

struct ev;
struct cel_list;
/* the evaluator's string_format */
struct cel_val cel_string_format(struct ev *ev, const struct cel_val *f, const struct cel_list *l);

#endif
