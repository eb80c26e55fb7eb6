/* test_rpc.c - the HTTP/2 guard in front of the gRPC servers (src/rpc/h2guard.c): what a
 * client's byte stream may hold, fed in every split. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rpc/h2guard.h"
#include "test.h"

#define PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

/* Appends a frame header (and len bytes of payload, all 'x') to out at *n. */
static void frame(uint8_t *out, size_t *n, uint32_t len, uint8_t type, uint8_t flags,
                  uint32_t stream)
{
    uint8_t *p = out + *n;

    p[0] = (uint8_t)(len >> 16);
    p[1] = (uint8_t)(len >> 8);
    p[2] = (uint8_t)len;
    p[3] = type;
    p[4] = flags;
    p[5] = (uint8_t)(stream >> 24);
    p[6] = (uint8_t)(stream >> 16);
    p[7] = (uint8_t)(stream >> 8);
    p[8] = (uint8_t)stream;
    memset(p + 9, 'x', len);
    *n += 9 + len;
}

static size_t preface(uint8_t *out)
{
    memcpy(out, PREFACE, 24);
    return 24;
}

/* What the relay does: bytes come in pieces of `piece` (0: all at once); what the guard does
 * not admit yet waits in front of the next piece; feeding stops at a held-back frame.
 * Returns the guard's result; *admitted says how much went through. */
static int relay_like(const uint8_t *buf, size_t n, size_t piece, int64_t now, size_t *admitted,
                      struct h2guard *g)
{
    size_t at = 0, sent = 0;
    int rc = 0;

    h2guard_init(g, now);
    while (!rc && at < n) {
        size_t end = piece && n - at > piece ? at + piece : n, adm;

        rc = h2guard_feed(g, buf + sent, end - sent, now, &adm);
        sent += adm;
        at = end;
        if (g->throttled)
            break;
    }
    *admitted = sent;
    return rc;
}

/* Feeds buf whole, byte by byte and in 7-byte pieces: each split must judge alike. */
static int feed_all_ways(const uint8_t *buf, size_t n, int64_t now, char *why, size_t whysz,
                         size_t *admitted)
{
    static const size_t pieces[] = {0, 1, 7};
    struct h2guard g;
    size_t adm[3], i;
    int rc[3];

    for (i = 0; i < 3; i++) {
        rc[i] = relay_like(buf, n, pieces[i], now, &adm[i], &g);
        if (!i)
            snprintf(why, whysz, "%s", g.why);
    }
    CHECK_INT_EQ(rc[1], rc[0]);
    CHECK_INT_EQ(rc[2], rc[0]);
    if (!rc[0]) {
        CHECK_INT_EQ(adm[1], adm[0]);
        CHECK_INT_EQ(adm[2], adm[0]);
    }
    if (admitted)
        *admitted = adm[0];
    return rc[0];
}

static void normal_calls_pass(void)
{
    static uint8_t buf[4096];
    size_t n = preface(buf), adm;
    char why[200];
    uint32_t s;

    frame(buf, &n, 12, 4, 0, 0);  /* SETTINGS */
    frame(buf, &n, 4, 8, 0, 0);   /* WINDOW_UPDATE */
    frame(buf, &n, 0, 4, 1, 0);   /* SETTINGS ACK */
    for (s = 1; s < 40; s += 2) { /* 20 calls: HEADERS, DATA, a few in two blocks */
        if (s % 3) {
            frame(buf, &n, 60, 1, 0x4, s);
        } else {
            frame(buf, &n, 30, 1, 0, s);
            frame(buf, &n, 30, 9, 0x4, s);
        }
        frame(buf, &n, 20, 0, 0x1, s);
    }
    frame(buf, &n, 8, 6, 0, 0); /* PING */
    CHECK_INT_EQ(feed_all_ways(buf, n, 1000, why, sizeof(why), &adm), 0);
    CHECK_STR_EQ(why, "");
    CHECK_INT_EQ(adm, n);
}

static void bad_preface(void)
{
    const char *http1 = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    char why[200];

    CHECK_INT_EQ(feed_all_ways((const uint8_t *)http1, strlen(http1), 0, why, sizeof(why), NULL),
                 -EPROTO);
    CHECK_STR_EQ(why, "not an HTTP/2 client preface");
}

/* HEADERS then RST_STREAM, over and over: held back once the resets' burst is spent (the
 * control frames' bucket is the smaller), one more reset a token later; nothing is dropped. */
static void rapid_reset(void)
{
    static uint8_t buf[65536];
    size_t n = preface(buf), adm, more;
    struct h2guard g;
    char why[200];
    uint32_t s;

    for (s = 1; s < 2 * 300; s += 2) {
        frame(buf, &n, 40, 1, 0x4, s);
        frame(buf, &n, 4, 3, 0, s);
    }
    CHECK_INT_EQ(feed_all_ways(buf, n, 5000, why, sizeof(why), &adm), 0);
    CHECK_STR_EQ(why, "");
    /* H2GUARD_CONTROL_BURST streams and their resets pass, and the next stream (its bucket is
     * larger); that stream's reset waits */
    CHECK_INT_EQ(adm, 24 + H2GUARD_CONTROL_BURST * (49 + 13) + 49);
    CHECK_INT_EQ(relay_like(buf, n, 0, 5000, &adm, &g), 0);
    CHECK(g.throttled);
    /* the control bucket is empty: a reset every 20 ms */
    CHECK_INT_EQ(h2guard_wait_ms(&g, 5000), 21);
    CHECK_INT_EQ(h2guard_feed(&g, buf + adm, n - adm, 5010, &more), 0);
    CHECK_INT_EQ(more, 0);
    /* 20 ms later the reset goes, and the next stream on the stream bucket's tokens */
    CHECK_INT_EQ(h2guard_feed(&g, buf + adm, n - adm, 5020, &more), 0);
    CHECK_INT_EQ(more, 13 + 49);
    CHECK(g.throttled);
    CHECK_INT_EQ(g.throttles, 3);
}

/* The same streams spread over time pass: the bucket refills. */
static void streams_at_the_rate_pass(void)
{
    static uint8_t buf[256];
    struct h2guard g;
    size_t adm;
    uint32_t s;
    int rc = 0;

    h2guard_init(&g, 0);
    rc |= h2guard_feed(&g, (const uint8_t *)PREFACE, 24, 0, &adm);
    for (s = 1; s < 2 * 1000 && !rc; s += 2) {
        size_t n = 0;

        frame(buf, &n, 40, 1, 0x4, s);
        frame(buf, &n, 4, 3, 0, s);
        /* 1000 streams over 100 s: 10 a second, a tenth of the rate */
        rc |= h2guard_feed(&g, buf, n, (int64_t)s * 50, &adm);
        CHECK_INT_EQ(adm, n);
    }
    CHECK_INT_EQ(rc, 0);
    CHECK(!g.throttled);
    CHECK_INT_EQ(g.throttles, 0);
}

static void continuation_flood(void)
{
    static uint8_t buf[65536];
    size_t n = preface(buf);
    char why[200];
    int i;

    frame(buf, &n, 100, 1, 0, 1); /* HEADERS without END_HEADERS */
    for (i = 0; i < 20; i++)
        frame(buf, &n, 1000, 9, 0, 1);
    CHECK_INT_EQ(feed_all_ways(buf, n, 0, why, sizeof(why), NULL), -EPROTO);
    CHECK_STR_EQ(why, "a header block longer than 16384 bytes");
}

static void headers_too_large_and_interleaved(void)
{
    static uint8_t buf[65536];
    size_t n = preface(buf);
    char why[200];

    frame(buf, &n, 20000, 1, 0x4, 1);
    CHECK_INT_EQ(feed_all_ways(buf, n, 0, why, sizeof(why), NULL), -EPROTO);
    CHECK_STR_EQ(why, "a header block longer than 16384 bytes");
    n = preface(buf);
    frame(buf, &n, 10, 1, 0, 1);
    frame(buf, &n, 10, 0, 0, 1); /* DATA inside the header block */
    CHECK_INT_EQ(feed_all_ways(buf, n, 0, why, sizeof(why), NULL), -EPROTO);
    CHECK_STR_EQ(why, "a frame inside a header block that is not its CONTINUATION");
    n = preface(buf);
    frame(buf, &n, 10, 9, 0x4, 1);
    CHECK_INT_EQ(feed_all_ways(buf, n, 0, why, sizeof(why), NULL), -EPROTO);
    CHECK_STR_EQ(why, "CONTINUATION outside a header block");
    n = preface(buf);
    frame(buf, &n, 10, 1, 0x4, 2);
    CHECK_INT_EQ(feed_all_ways(buf, n, 0, why, sizeof(why), NULL), -EPROTO);
    CHECK_STR_EQ(why, "HEADERS on a stream a client cannot open");
}

/* PINGs faster than the control rate: held back after the burst, not dropped. */
static void control_flood(void)
{
    static uint8_t buf[65536];
    size_t n = preface(buf), adm;
    char why[200];
    int i;

    for (i = 0; i < 1000; i++)
        frame(buf, &n, 8, 6, 0, 0); /* PING */
    CHECK_INT_EQ(feed_all_ways(buf, n, 0, why, sizeof(why), &adm), 0);
    CHECK_INT_EQ(adm, 24 + H2GUARD_CONTROL_BURST * 17);
}

static const struct test_case cases[] = {
    {"h2guard passes normal calls", normal_calls_pass},
    {"h2guard bad preface", bad_preface},
    {"h2guard rapid reset held back", rapid_reset},
    {"h2guard streams at the rate pass", streams_at_the_rate_pass},
    {"h2guard CONTINUATION flood", continuation_flood},
    {"h2guard header block bounds", headers_too_large_and_interleaved},
    {"h2guard control frame flood held back", control_flood},
};
TEST_SUITE(rpc, cases)
