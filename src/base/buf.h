/* buf.h - growable byte buffer with an explicit size cap.
 *
 * Every buffer that holds network or file input is a buf with a cap: appending past the
 * cap fails with -E2BIG and leaves the buffer as it was. The data is always NUL-terminated so
 * it can be used as a C string. */
#ifndef BASE_BUF_H
#define BASE_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
    char *data;   /* NUL-terminated; NULL until the first append */
    size_t len;   /* bytes used, not counting the NUL */
    size_t alloc; /* bytes allocated */
    size_t cap;   /* most bytes len may reach; 0 means the default (64 MiB) */
};

#define BUF_INIT(cap_)                                                                             \
    {                                                                                              \
        NULL, 0, 0, (cap_)                                                                         \
    }
#define BUF_DEFAULT_CAP ((size_t)64 << 20)

/* buf_init sets an empty buffer with the given cap (0 = default). */
void buf_init(struct buf *b, size_t cap);
/* buf_release frees the data and leaves an empty buffer with the same cap. */
void buf_release(struct buf *b);
/* buf_reset empties the buffer but keeps its memory. */
void buf_reset(struct buf *b);
/* buf_append adds n bytes; -E2BIG past the cap, -ENOMEM when out of memory. */
int buf_append(struct buf *b, const void *p, size_t n);
/* buf_puts appends a C string. */
int buf_puts(struct buf *b, const char *s);
/* buf_printf appends formatted text; buf_vprintf is the same with a va_list. */
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int buf_vprintf(struct buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* buf_fmt returns the formatted text as a new string (the caller frees it; capped at the
 * default cap), or NULL when out of memory: the one way to a malloc'ed formatted string. */
char *buf_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* buf_consume drops the first n bytes (n <= len). */
void buf_consume(struct buf *b, size_t n);
/* buf_take returns the data (caller frees; never NULL on success: "" for empty) and
 * leaves the buffer empty. Returns NULL when out of memory. */
char *buf_take(struct buf *b);

/* buf_read_file reads a whole file into b, failing with -E2BIG past b's cap. errno-style
 * code on failure; b is left empty then. */
int buf_read_file(const char *path, struct buf *b);

#endif
