/* output.h - kubectl-like output for the gpusched commands: aligned tables and JSON.
 *
 * A table is filled row by row (cells are copied) and printed the way kubectl's tabwriter
 * prints `kubectl get`: every column but the last is padded to max(10, widest cell + 3)
 * characters, the last column is not padded. Widths count UTF-8 characters, not bytes. */
#ifndef GPUSCHED_OUTPUT_H
#define GPUSCHED_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "base/err.h"
#include "base/flag.h"

#define OUT_TABLE_MAX_COLS 16

struct out_table {
    size_t ncols;
    char *headers[OUT_TABLE_MAX_COLS]; /* owned copies */
    char **cells;                      /* nrows * ncols owned copies, row-major */
    size_t nrows;
    size_t cap; /* rows allocated */
};

/* Output formats shared by the commands (-o). */
enum out_format {
    OUT_TABLE = 0, /* default */
    OUT_WIDE,
    OUT_JSON,
    OUT_NAME,
};

/* out_format_parse maps "table" (or ""), "wide", "json" and "name" to *fmt. allowed is a
 * bitmask of (1u << OUT_*) the command accepts. Returns 0, or -EINVAL with a kubectl-like
 * message in err ("unable to match a printer suitable for the output format \"x\", allowed
 * formats are: json,name,wide"). */
int out_format_parse(const char *s, unsigned allowed, enum out_format *fmt, struct err *err);

/* out_table_init prepares an empty table with ncols (1..OUT_TABLE_MAX_COLS) headers, which
 * are copied. -EINVAL for a bad ncols, -ENOMEM. Release with out_table_release(). */
int out_table_init(struct out_table *t, size_t ncols, const char *const *headers);

/* out_table_add_row copies ncols cells (a NULL cell prints as "<none>"). -ENOMEM. */
int out_table_add_row(struct out_table *t, const char *const *cells);

/* out_no_headers: kubectl's --no-headers was given (set once, before any output).
 * out_table_flags is its flag, the table (flag.h) every command that prints a table includes
 * in its own. */
extern bool out_no_headers;
extern const struct flag out_table_flags[];

/* out_table_print writes the header line (unless out_no_headers) and every row
 * to f; the columns are as wide as the header would need either way. */
void out_table_print(const struct out_table *t, FILE *f);

/* out_table_release frees every copy; the table is empty afterwards. NULL is fine. */
void out_table_release(struct out_table *t);

/* out_table_finish ends a command's table built with rc (0, or out_table_init's or
 * out_table_add_row's failure): printed on stdout when rc is 0, released either way. The
 * exit status: 0, or 1 after "gpusched: out of memory" on stderr. */
int out_table_finish(struct out_table *t, int rc);

/* out_text_width is the number of UTF-8 characters in s (what a terminal column counts). */
size_t out_text_width(const char *s);

/* out_json_print writes v to f followed by a newline: compact (no spaces, one line, keys in
 * insertion order) when indent is 0, else indented by that many spaces. Returns 0 or -EIO. */
int out_json_print(const json_t *v, int indent, FILE *f);

#endif
