/* buf.c - growable byte buffer with a cap. */
#include "base/buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t buf_cap(const struct buf *b)
{
    return b->cap ? b->cap : BUF_DEFAULT_CAP;
}

void buf_init(struct buf *b, size_t cap)
{
    b->data = NULL;
    b->len = 0;
    b->alloc = 0;
    b->cap = cap;
}

void buf_release(struct buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->alloc = 0;
}

void buf_reset(struct buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

static int buf_grow(struct buf *b, size_t extra)
{
    size_t need, na;
    char *p;

    if (extra > buf_cap(b) || b->len > buf_cap(b) - extra)
        return -E2BIG;
    need = b->len + extra + 1;
    if (need <= b->alloc)
        return 0;
    na = b->alloc ? b->alloc : 256;
    while (na < need)
        na = na * 2;
    p = realloc(b->data, na);
    if (!p)
        return -ENOMEM;
    b->data = p;
    b->alloc = na;
    return 0;
}

int buf_append(struct buf *b, const void *p, size_t n)
{
    int rc = buf_grow(b, n);

    if (rc)
        return rc;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int buf_puts(struct buf *b, const char *s)
{
    return buf_append(b, s, strlen(s));
}

int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
    va_list cp;
    int n, rc;

    va_copy(cp, ap);
    n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0)
        return -EINVAL;
    rc = buf_grow(b, (size_t)n);
    if (rc)
        return rc;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

char *buf_fmt(const char *fmt, ...)
{
    struct buf b = BUF_INIT(0);
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = buf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (rc) {
        buf_release(&b);
        return NULL;
    }
    return buf_take(&b);
}

void buf_consume(struct buf *b, size_t n)
{
    if (n >= b->len) {
        buf_reset(b);
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    b->data[b->len] = '\0';
}

char *buf_take(struct buf *b)
{
    char *p = b->data;

    if (!p)
        p = calloc(1, 1);
    b->data = NULL;
    b->len = 0;
    b->alloc = 0;
    return p;
}

int buf_read_file(const char *path, struct buf *b)
{
    char chunk[65536];
    FILE *f;
    size_t n;
    int rc = 0;

    buf_reset(b);
    f = fopen(path, "rb");
    if (!f)
        return -errno;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        rc = buf_append(b, chunk, n);
        if (rc)
            break;
    }
    if (!rc && ferror(f))
        rc = -EIO;
    fclose(f);
    if (rc)
        buf_reset(b);
    else if (!b->data)
        rc = buf_append(b, "", 0);
    return rc;
}
