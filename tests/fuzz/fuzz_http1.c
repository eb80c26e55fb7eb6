/* fuzz_http1.c - libFuzzer target for the incremental HTTP/1.1 answer parser (kube/http1.h).
 * The input's first byte seeds how the rest is cut into pieces; the parser must give the same
 * answers (status, keep, body bytes, error or not) whether fed whole or piece by piece, as a
 * connection reading arbitrary splits would feed it, and must never consume more than it was
 * given. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/http1.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TRACE_MAX 8192

struct trace {
    unsigned char t[TRACE_MAX];
    size_t n;
};

static void trace_put(struct trace *t, const void *p, size_t n)
{
    if (n > TRACE_MAX - t->n)
        n = TRACE_MAX - t->n;
    memcpy(t->t + t->n, p, n);
    t->n += n;
}

/* parse feeds in[0..n) cut at the lengths a small generator draws from seed (0: whole) and
 * records what the parser reports, as a connection buffering unconsumed bytes would. */
static void parse(const uint8_t *in, size_t n, unsigned seed, struct trace *t)
{
    struct http1_answer a;
    char *buf = malloc(n + 1);
    size_t have = 0, off = 0, fed = 0;
    unsigned x = seed * 2654435761u + 1;
    int answers = 0;

    if (!buf)
        abort();
    http1_answer_init(&a);
    t->n = 0;
    while (fed < n || have > off) {
        size_t piece = seed ? (x >> 16) % 17 + 1 : n;
        enum http1_event ev;
        const char *d;
        size_t used, len;

        x = x * 1103515245u + 12345u;
        if (piece > n - fed)
            piece = n - fed;
        memcpy(buf + have, in + fed, piece);
        have += piece;
        fed += piece;
        for (;;) {
            ev = http1_step(&a, buf + off, have - off, &used, &d, &len);
            if (used > have - off)
                abort();
            off += used;
            if (ev == HTTP1_BODY) {
                if (d < buf || d + len > buf + have)
                    abort();
                trace_put(t, d, len);
            } else if (ev == HTTP1_HEAD) {
                char h[16] = {'H', (char)(a.status / 100), (char)(a.status % 100), (char)a.keep};

                trace_put(t, h, 4);
            } else if (ev == HTTP1_DONE) {
                trace_put(t, "D", 1);
                if (++answers > 64 || !a.keep)
                    goto out;
            } else if (ev == HTTP1_ERROR) {
                trace_put(t, "E", 1);
                if (!a.why)
                    abort();
                goto out;
            } else if (!used) {
                break;
            }
        }
        memmove(buf, buf + off, have - off);
        have -= off;
        off = 0;
        if (fed == n)
            break;
    }
    trace_put(t, http1_eof(&a) == HTTP1_DONE ? "C" : "-", 1);
out:
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct trace whole, cut;

    if (size < 1 || size > 65536)
        return 0;
    parse(data + 1, size - 1, 0, &whole);
    parse(data + 1, size - 1, data[0] | 1u, &cut);
    if (whole.n != cut.n || memcmp(whole.t, cut.t, whole.n))
        abort();
    return 0;
}
