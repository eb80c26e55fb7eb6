/* h2guard.c - the frame-header judge of h2guard.h: the preface, then frames of 9-byte headers
 * and payloads passed through uncounted except for the length of header blocks. */
#include "rpc/h2guard.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"; /* 24 bytes */

enum {
    F_DATA = 0,
    F_HEADERS = 1,
    F_PRIORITY = 2,
    F_RST_STREAM = 3,
    F_SETTINGS = 4,
    F_PUSH_PROMISE = 5,
    F_PING = 6,
    F_GOAWAY = 7,
    F_WINDOW_UPDATE = 8,
    F_CONTINUATION = 9,
};
#define END_HEADERS 0x4

void h2guard_init(struct h2guard *g, int64_t now_ms)
{
    memset(g, 0, sizeof(*g));
    g->streams.tokens = H2GUARD_STREAM_BURST;
    g->streams.at_ms = now_ms;
    g->control.tokens = H2GUARD_CONTROL_BURST;
    g->control.at_ms = now_ms;
}

/* Takes one token; false when the bucket is empty. */
static bool take(struct h2guard_bucket *b, double rate, double burst, int64_t now_ms)
{
    if (now_ms > b->at_ms) {
        b->tokens += (double)(now_ms - b->at_ms) * rate / 1000.0;
        if (b->tokens > burst)
            b->tokens = burst;
        b->at_ms = now_ms;
    }
    if (b->tokens < 1.0)
        return false;
    b->tokens -= 1.0;
    return true;
}

static int bad(struct h2guard *g, const char *why)
{
    if (!g->why[0])
        snprintf(g->why, sizeof(g->why), "%s", why);
    return -EPROTO;
}

#define THROTTLE 1 /* frame(): no token now; the frame waits */

/* Judges the frame whose 9-byte header is h: 0 admitted (the guard's state moves on),
 * THROTTLE (nothing changed: the same header is judged again later), -EPROTO bad. */
static int frame(struct h2guard *g, const uint8_t *h, int64_t now_ms)
{
    uint32_t len = (uint32_t)h[0] << 16 | (uint32_t)h[1] << 8 | h[2];
    uint8_t type = h[3], flags = h[4];
    uint32_t stream =
        ((uint32_t)h[5] << 24 | (uint32_t)h[6] << 16 | (uint32_t)h[7] << 8 | h[8]) & 0x7fffffffu;

    if (g->in_block && (type != F_CONTINUATION || stream != g->block_stream))
        return bad(g, "a frame inside a header block that is not its CONTINUATION");
    switch (type) {
    case F_HEADERS:
        if (!stream || !(stream & 1))
            return bad(g, "HEADERS on a stream a client cannot open");
        if (stream > g->last_stream) {
            if (!take(&g->streams, H2GUARD_STREAM_RATE, H2GUARD_STREAM_BURST, now_ms))
                return THROTTLE;
            g->last_stream = stream;
        }
        g->block_stream = stream;
        g->block_bytes = len;
        g->in_block = !(flags & END_HEADERS);
        break;
    case F_CONTINUATION:
        if (!g->in_block)
            return bad(g, "CONTINUATION outside a header block");
        g->block_bytes += len;
        g->in_block = !(flags & END_HEADERS);
        break;
    case F_RST_STREAM:
    case F_PING:
    case F_SETTINGS:
    case F_PRIORITY:
        if (!take(&g->control, H2GUARD_CONTROL_RATE, H2GUARD_CONTROL_BURST, now_ms))
            return THROTTLE;
        break;
    case F_PUSH_PROMISE:
        return bad(g, "PUSH_PROMISE from a client");
    default: /* DATA, GOAWAY, WINDOW_UPDATE and unknown types (ignored by HTTP/2) */
        break;
    }
    if (g->block_bytes > H2GUARD_HEADER_BLOCK_MAX)
        return bad(g, "a header block longer than 16384 bytes");
    if (!g->in_block)
        g->block_bytes = 0;
    g->frames++;
    g->payload_left = len;
    return 0;
}

int h2guard_feed(struct h2guard *g, const uint8_t *data, size_t len, int64_t now_ms,
                 size_t *admitted)
{
    size_t i = 0;
    int rc;

    *admitted = 0;
    g->throttled = false;
    if (g->why[0])
        return -EPROTO;
    while (i < len) {
        if (g->preface_seen < sizeof(preface) - 1) {
            if (data[i] != (uint8_t)preface[g->preface_seen])
                return bad(g, "not an HTTP/2 client preface");
            g->preface_seen++;
            i++;
        } else if (g->payload_left) {
            size_t n = len - i < g->payload_left ? len - i : g->payload_left;

            g->payload_left -= (uint32_t)n;
            i += n;
        } else if (len - i < 9) {
            break; /* half a frame header: judged when the rest is there */
        } else {
            rc = frame(g, data + i, now_ms);
            if (rc < 0)
                return rc;
            if (rc == THROTTLE) {
                g->throttled = true;
                g->throttles++;
                break;
            }
            i += 9;
        }
        *admitted = i;
    }
    return 0;
}

int64_t h2guard_wait_ms(const struct h2guard *g, int64_t now_ms)
{
    const struct h2guard_bucket *b[2] = {&g->streams, &g->control};
    const double rate[2] = {H2GUARD_STREAM_RATE, H2GUARD_CONTROL_RATE};
    int64_t wait = 0;
    int i;

    if (!g->throttled)
        return 0;
    for (i = 0; i < 2; i++) {
        double have = b[i]->tokens + (double)(now_ms - b[i]->at_ms) * rate[i] / 1000.0;

        if (have < 1.0) {
            int64_t w = (int64_t)((1.0 - have) * 1000.0 / rate[i]) + 1;

            if (w > wait)
                wait = w;
        }
    }
    return wait ? wait : 1;
}
