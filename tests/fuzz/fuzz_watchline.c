/* fuzz_watchline.c - libFuzzer target for the watch stream reader (kube_watch_lines_feed and
 * kube_watch_event_decode in kube/client-int.h). The input's first byte seeds how the rest is
 * cut, as reads from the network would cut it; the events seen (their types, or the first
 * error) must be the same whether the stream is fed whole or in pieces, a decoded event has a
 * string type and an object, and a rejected line has a message. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/client-int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
    char log[4096];
    size_t n;
    int events;
};

static void seen_put(struct seen *s, const char *p, size_t n)
{
    if (n > sizeof(s->log) - s->n)
        n = sizeof(s->log) - s->n;
    memcpy(s->log + s->n, p, n);
    s->n += n;
}

static int on_line(void *ud, const char *p, size_t n)
{
    struct seen *s = ud;
    json_t *ev, *obj;
    const char *type;
    struct err err;
    int rc;

    err_clear(&err);
    rc = kube_watch_event_decode(p, n, &ev, &type, &obj, &err);
    if (rc == 1)
        return 0;
    if (rc < 0) {
        if (ev || !err.msg[0] || err.code != -EPROTO)
            abort();
        seen_put(s, "!", 1);
        return -1;
    }
    if (!ev || !type || !json_is_object(obj))
        abort();
    seen_put(s, type, strlen(type) + 1);
    json_decref(ev);
    return ++s->events > 1000 ? -1 : 0;
}

/* run feeds in[0..n) in pieces drawn from seed (0: whole), with a 4 KiB line cap */
static void run(const uint8_t *in, size_t n, unsigned seed, struct seen *s)
{
    struct buf line = BUF_INIT(4096);
    unsigned x = seed * 2654435761u + 7;
    size_t off = 0;
    int rc = 0;

    memset(s, 0, sizeof(*s));
    while (off < n && !rc) {
        size_t piece = seed ? (x >> 16) % 23 + 1 : n;

        x = x * 1103515245u + 12345u;
        if (piece > n - off)
            piece = n - off;
        rc = kube_watch_lines_feed(&line, (const char *)in + off, piece, on_line, s);
        off += piece;
    }
    if (!rc && line.len) /* a last event without its newline still counts */
        rc = on_line(s, line.data, line.len);
    if (rc == -E2BIG)
        seen_put(s, "BIG", 3);
    buf_release(&line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct seen whole, cut;

    if (size < 1 || size > 65536)
        return 0;
    run(data + 1, size - 1, 0, &whole);
    run(data + 1, size - 1, data[0] | 1u, &cut);
    if (whole.n != cut.n || memcmp(whole.log, cut.log, whole.n) || whole.events != cut.events)
        abort();
    return 0;
}
