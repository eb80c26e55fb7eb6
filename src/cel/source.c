/* source.c - CEL source text as code points, locations, and cel-go's error display.
 *
 * cel-go decodes the expression into runes (invalid UTF-8 bytes become U+FFFD), records the
 * offset after each newline, and reports errors as "ERROR: <input>:LINE:COL: msg" followed by
 * the source line and a caret line where multi-byte characters take a full-width dot. */
#include "cel/ast.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cel/utf8.h"

int cel_source_init(struct cel_source *src, struct arena *a, const char *text, size_t len)
{
    uint32_t *cp = arena_alloc(a, (len + 1) * sizeof(uint32_t));
    int32_t *offs;
    size_t i = 0;
    int32_t n = 0, nl = 0, k = 0;

    if (!cp)
        return -ENOMEM;
    while (i < len) {
        uint32_t r;
        i += cel_utf8_decode(text + i, len - i, &r);
        cp[n++] = r;
        if (r == '\n')
            nl++;
    }
    offs = arena_alloc(a, (size_t)(nl + 1) * sizeof(int32_t));
    if (!offs)
        return -ENOMEM;
    for (int32_t j = 0; j < n; j++)
        if (cp[j] == '\n')
            offs[k++] = j + 1;
    offs[k++] = n + 1;
    src->cp = cp;
    src->ncp = n;
    src->line_offsets = offs;
    src->nlines = k;
    return 0;
}

void cel_source_location(const struct cel_source *src, int32_t offset, int *line, int *col)
{
    int l = 1;
    int32_t c = offset;

    if (src->ncp == 0) {
        /* an empty source has no location cel-go can find: column -1 */
        *line = 1;
        *col = -1;
        return;
    }
    for (int32_t i = 0; i < src->nlines; i++) {
        if (src->line_offsets[i] > offset)
            break;
        l++;
        c = offset - src->line_offsets[i];
    }
    *line = l;
    *col = (int)c;
}

void cel_diags_init(struct cel_diags *d, struct arena *a, const struct cel_source *src)
{
    d->head = NULL;
    d->tail = &d->head;
    d->count = 0;
    d->a = a;
    d->src = src;
}

void cel_diags_add(struct cel_diags *d, int32_t id, int32_t offset, const char *fmt, ...)
{
    struct cel_diag *g;
    va_list ap;
    char tmp[512], *msg;
    int n;

    d->count++;
    if (d->count > 100)
        return;
    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    msg = arena_alloc(d->a, (size_t)n + 1);
    g = arena_alloc(d->a, sizeof(*g));
    if (!msg || !g)
        return;
    if ((size_t)n < sizeof(tmp)) {
        memcpy(msg, tmp, (size_t)n + 1);
    } else {
        va_start(ap, fmt);
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    g->offset = offset;
    g->id = id;
    g->msg = msg;
    /* an expression at offset -1 (a token ANTLR's recovery conjured) still has a location,
     * line 1 column -1, as GetLocationByOffset computes it; id 0: none */
    if ((offset >= 0 || id > 0) && d->src) {
        cel_source_location(d->src, offset, &g->line, &g->col);
    } else {
        g->line = -1;
        g->col = -1;
    }
    g->next = NULL;
    *d->tail = g;
    d->tail = &g->next;
}

/* The snippet of a line (1-based) as UTF-8 with tabs turned into spaces, and the caret line
 * for col (code points). */
static void diag_snippet(const struct cel_source *src, struct buf *out, int line, int col)
{
    int32_t start, end;
    const int32_t *lo = src->line_offsets;

    if (!src || src->ncp == 0)
        return;
    if (line == 1)
        start = 0;
    else if (line > 1 && line <= src->nlines)
        start = lo[line - 2];
    else
        return;
    if (line + 1 <= src->nlines)
        end = lo[line - 1] - 1;
    else
        end = src->ncp;
    if (end < start)
        end = start;
    /* Go checks the snippet's byte length against 16384. */
    {
        size_t bytes = 0;
        for (int32_t i = start; i < end; i++)
            bytes += cel_utf8_len(src->cp[i]);
        if (bytes > 16384)
            return;
    }
    buf_puts(out, "\n | ");
    for (int32_t i = start; i < end; i++) {
        char tmp[4];
        uint32_t c = src->cp[i] == '\t' ? ' ' : src->cp[i];
        buf_append(out, tmp, cel_utf8_encode(c, tmp));
    }
    buf_puts(out, "\n | ");
    {
        int32_t i = start;
        for (int k = 0; k < col && i < end; k++, i++)
            buf_puts(out, cel_utf8_len(src->cp[i]) > 1 ? "\xef\xbc\x8e" : ".");
        if (i < end && cel_utf8_len(src->cp[i]) > 1)
            buf_puts(out, "\xef\xbc\xbe");
        else
            buf_puts(out, "^");
    }
}

char *cel_diags_format(struct cel_diags *d)
{
    struct buf out = BUF_INIT(0);
    struct cel_diag **v;
    int n = 0, i;

    for (struct cel_diag *g = d->head; g; g = g->next)
        n++;
    v = calloc((size_t)n + 1, sizeof(*v));
    if (!v)
        return NULL;
    i = 0;
    for (struct cel_diag *g = d->head; g; g = g->next)
        v[i++] = g;
    /* stable insertion sort by (line, col) */
    for (i = 1; i < n; i++) {
        struct cel_diag *x = v[i];
        int j = i - 1;
        while (j >= 0 && (v[j]->line > x->line || (v[j]->line == x->line && v[j]->col > x->col))) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
    for (i = 0; i < n; i++) {
        if (i)
            buf_puts(&out, "\n");
        buf_printf(&out, "ERROR: <input>:%d:%d: %s", v[i]->line, v[i]->col + 1, v[i]->msg);
        if (v[i]->line >= 1)
            diag_snippet(d->src, &out, v[i]->line, v[i]->col);
    }
    if (d->count > 100)
        buf_printf(&out, "\n%d more errors were truncated", d->count - 100);
    free(v);
    return buf_take(&out);
}
