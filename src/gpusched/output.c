/* output.c - kubectl-like tables and JSON for the gpusched commands.
 *
 * kubectl prints `get` tables through Go's text/tabwriter with minwidth 10, padding 3 and
 * blanks as padding; the same rule is applied here so columns line up exactly like kubectl's.
 * Cells are copied into the table, so callers may pass temporary strings. */
#include "gpusched/output.h"
#include "gpusched/output-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

#define OUT_MIN_WIDTH 10
#define OUT_PADDING 3

static const char *const out_format_names[] = {"table", "wide", "json", "name"};
static const unsigned out_format_order[] = {OUT_JSON, OUT_NAME, OUT_WIDE};

int out_format_parse(const char *s, unsigned allowed, enum out_format *fmt, struct err *err)
{
    struct buf list = BUF_INIT(0);
    size_t i;

    if (!s || !*s)
        s = "table";
    for (i = 0; i < sizeof(out_format_names) / sizeof(out_format_names[0]); i++) {
        if ((allowed & (1u << i)) && !strcmp(s, out_format_names[i])) {
            *fmt = (enum out_format)i;
            return 0;
        }
    }
    /* kubectl lists the allowed formats sorted; the default table has no name there. */
    for (i = 0; i < sizeof(out_format_order) / sizeof(out_format_order[0]); i++) {
        /* -o name and -o yaml are made from -o json for every command (kubectl.c) */
        if (!(allowed & (1u << out_format_order[i])) &&
            !(out_format_order[i] == OUT_NAME && (allowed & (1u << OUT_JSON))))
            continue;
        buf_printf(&list, "%s%s", list.len ? "," : "", out_format_names[out_format_order[i]]);
    }
    if (allowed & (1u << OUT_JSON))
        buf_puts(&list, ",yaml");
    err_set(err, -EINVAL,
            "unable to match a printer suitable for the output format \"%s\", "
            "allowed formats are: %s",
            s, list.data ? list.data : "");
    buf_release(&list);
    return -EINVAL;
}

int out_table_init(struct out_table *t, size_t ncols, const char *const *headers)
{
    size_t i;

    memset(t, 0, sizeof(*t));
    if (ncols == 0 || ncols > OUT_TABLE_MAX_COLS)
        return -EINVAL;
    for (i = 0; i < ncols; i++) {
        t->headers[i] = strdup(headers[i] ? headers[i] : "");
        if (!t->headers[i]) {
            t->ncols = i;
            out_table_release(t);
            return -ENOMEM;
        }
    }
    t->ncols = ncols;
    return 0;
}

int out_table_add_row(struct out_table *t, const char *const *cells)
{
    size_t i, base;

    if (t->nrows == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 16;
        char **n = realloc(t->cells, ncap * t->ncols * sizeof(*n));
        if (!n)
            return -ENOMEM;
        t->cells = n;
        t->cap = ncap;
    }
    base = t->nrows * t->ncols;
    for (i = 0; i < t->ncols; i++) {
        t->cells[base + i] = strdup(cells[i] ? cells[i] : "<none>");
        if (!t->cells[base + i]) {
            while (i--)
                free(t->cells[base + i]);
            return -ENOMEM;
        }
    }
    t->nrows++;
    return 0;
}

size_t out_text_width(const char *s)
{
    size_t n = 0;

    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            n++;
    return n;
}

static void out_table_print_row(char *const *cells, size_t ncols, const size_t *width, FILE *f)
{
    size_t i, w, last = ncols;

    /* trailing empty cells add no padding, so no line ends in blanks */
    while (last > 1 && !cells[last - 1][0])
        last--;
    for (i = 0; i < last; i++) {
        fputs(cells[i], f);
        if (i + 1 == last)
            break;
        for (w = out_text_width(cells[i]); w < width[i]; w++)
            fputc(' ', f);
    }
    fputc('\n', f);
}

bool out_no_headers;

const struct flag out_table_flags[] = {
    {"no-headers", 0, FLAG_BOOL, &out_no_headers, NULL, NULL, NULL,
     "print tables without their header line (as kubectl's)"},
    FLAG_END,
};

void out_table_print(const struct out_table *t, FILE *f)
{
    size_t width[OUT_TABLE_MAX_COLS];
    size_t r, c;

    for (c = 0; c < t->ncols; c++) {
        size_t w = out_text_width(t->headers[c]);
        for (r = 0; r < t->nrows; r++) {
            size_t cw = out_text_width(t->cells[r * t->ncols + c]);
            if (cw > w)
                w = cw;
        }
        w += OUT_PADDING;
        width[c] = w < OUT_MIN_WIDTH ? OUT_MIN_WIDTH : w;
    }
    if (!out_no_headers)
        out_table_print_row(t->headers, t->ncols, width, f);
    for (r = 0; r < t->nrows; r++)
        out_table_print_row(t->cells + r * t->ncols, t->ncols, width, f);
}

int out_table_finish(struct out_table *t, int rc)
{
    if (!rc)
        out_table_print(t, stdout);
    out_table_release(t);
    if (!rc)
        return 0;
    fprintf(stderr, "gpusched: out of memory\n");
    return 1;
}

void out_table_release(struct out_table *t)
{
    size_t i;

    if (!t)
        return;
    for (i = 0; i < t->ncols; i++)
        free(t->headers[i]);
    for (i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof(*t));
}

int out_json_print(const json_t *v, int indent, FILE *f)
{
    size_t flags = indent > 0 ? JSON_INDENT(indent) : JSON_COMPACT;

    if (json_dumpf(v, f, flags | JSON_PRESERVE_ORDER) != 0)
        return -EIO;
    if (fputc('\n', f) == EOF)
        return -EIO;
    return 0;
}

void out_json_string_raw(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *run = p;

    for (; *p; p++) {
        const char *esc = NULL;
        char u[8];

        switch (*p) {
        case '"':
            esc = "\\\"";
            break;
        case '\\':
            esc = "\\\\";
            break;
        case '\b':
            esc = "\\b";
            break;
        case '\f':
            esc = "\\f";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        default:
            if (*p >= 0x20)
                continue;
            snprintf(u, sizeof(u), "\\u%04X", *p);
            esc = u;
        }
        fwrite(run, 1, (size_t)(p - run), f);
        fputs(esc, f);
        run = p + 1;
    }
    fwrite(run, 1, (size_t)(p - run), f);
}

void out_json_string(FILE *f, const char *s)
{
    putc('"', f);
    out_json_string_raw(f, s);
    putc('"', f);
}
