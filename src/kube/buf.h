/* buf.h - growable byte buffer with an explicit size cap.
 *
 * Every buffer that holds network or file input is a kube_buf with a cap: appending past the
 * cap fails with -E2BIG and leaves the buffer as it was. The data is always NUL-terminated so
 * it can be used as a C string. */
#ifndef KUBE_BUF_H
#define KUBE_BUF_H

#include <stddef.h>

struct kube_buf {
    char *data;   /* NUL-terminated; NULL until the first append */
    size_t len;   /* bytes used, not counting the NUL */
    size_t alloc; /* bytes allocated */
    size_t cap;   /* most bytes len may reach; 0 means the default (64 MiB) */
};

#define KUBE_BUF_INIT(cap_) { NULL, 0, 0, (cap_) }
#define KUBE_BUF_DEFAULT_CAP ((size_t)64 << 20)

/* kube_buf_init sets an empty buffer with the given cap (0 = default). */
void kube_buf_init(struct kube_buf *b, size_t cap);
/* kube_buf_release frees the data and leaves an empty buffer with the same cap. */
void kube_buf_release(struct kube_buf *b);
/* kube_buf_reset empties the buffer but keeps its memory. */
void kube_buf_reset(struct kube_buf *b);
/* kube_buf_append adds n bytes; -E2BIG past the cap, -ENOMEM when out of memory. */
int kube_buf_append(struct kube_buf *b, const void *p, size_t n);
/* kube_buf_puts appends a C string. */
int kube_buf_puts(struct kube_buf *b, const char *s);
/* kube_buf_printf appends formatted text. */
int kube_buf_printf(struct kube_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* kube_buf_consume drops the first n bytes (n <= len). */
void kube_buf_consume(struct kube_buf *b, size_t n);
/* kube_buf_take returns the data (caller frees; never NULL on success: "" for empty) and
 * leaves the buffer empty. Returns NULL when out of memory. */
char *kube_buf_take(struct kube_buf *b);

/* kube_read_file reads a whole file into b, failing with -E2BIG past b's cap. errno-style
 * code on failure; b is left empty then. */
int kube_read_file(const char *path, struct kube_buf *b);

#endif
