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

/* Feeds buf whole, then byte by byte, then in 7-byte pieces: each split must judge alike. */
static int feed_all_ways(const uint8_t *buf, size_t n, int64_t now, char *why, size_t whysz)
{
    struct h2guard g;
    int rc[3];
    size_t i;

    h2guard_init(&g, now);
    rc[0] = h2guard_feed(&g, buf, n, now);
    snprintf(why, whysz, "%s", g.why);
    h2guard_init(&g, now);
    rc[1] = 0;
    for (i = 0; i < n && !rc[1]; i++)
        rc[1] = h2guard_feed(&g, buf + i, 1, now);
    h2guard_init(&g, now);
    rc[2] = 0;
    for (i = 0; i < n && !rc[2]; i += 7)
        rc[2] = h2guard_feed(&g, buf + i, n - i < 7 ? n - i : 7, now);
    CHECK_INT_EQ(rc[1], rc[0]);
    CHECK_INT_EQ(rc[2], rc[0]);
    return rc[0];
}

static void normal_calls_pass(void)
{
    static uint8_t buf[4096];
    size_t n = preface(buf);
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
    CHECK_INT_EQ(feed_all_ways(buf, n, 1000, why, sizeof(why)), 0);
    CHECK_STR_EQ(why, "");
}

static void bad_preface(void)
{
    const char *http1 = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    char why[200];

    CHECK_INT_EQ(feed_all_ways((const uint8_t *)http1, strlen(http1), 0, why, sizeof(why)),
                 -EPROTO);
    CHECK_STR_EQ(why, "not an HTTP/2 client preface");
}

/* HEADERS then RST_STREAM, over and over: stopped by the stream rate within the burst. */
static void rapid_reset(void)
{
    static uint8_t buf[65536];
    size_t n = preface(buf);
    struct h2guard g;
    char why[200];
    uint32_t s;
    int bad_at = 0;

    for (s = 1; s < 2 * 300; s += 2) {
        frame(buf, &n, 40, 1, 0x4, s);
        frame(buf, &n, 4, 3, 0, s);
    }
    CHECK_INT_EQ(feed_all_ways(buf, n, 5000, why, sizeof(why)), -EPROTO);
    CHECK(strstr(why, "faster than") != NULL);
    /* the first H2GUARD_STREAM_BURST streams pass, the next one does not */
    h2guard_init(&g, 0);
    h2guard_feed(&g, buf, 24, 0);
    for (s = 0; s < 300 && !bad_at; s++)
        if (h2guard_feed(&g, buf + 24 + s * (49 + 13), 49, 0))
            bad_at = (int)s + 1;
    CHECK_INT_EQ(bad_at, H2GUARD_STREAM_BURST + 1);
}

/* The same streams spread over time pass: the bucket refills. */
static void streams_at_the_rate_pass(void)
{
    static uint8_t buf[256];
    struct h2guard g;
    uint32_t s;
    int rc = 0;

    h2guard_init(&g, 0);
    rc |= h2guard_feed(&g, (const uint8_t *)PREFACE, 24, 0);
    for (s = 1; s < 2 * 1000 && !rc; s += 2) {
        size_t n = 0;

        frame(buf, &n, 40, 1, 0x4, s);
        frame(buf, &n, 4, 3, 0, s);
        /* 1000 streams over 100 s: 10 a second, half the rate */
        rc |= h2guard_feed(&g, buf, n, (int64_t)s * 50);
    }
    CHECK_INT_EQ(rc, 0);
    CHECK_STR_EQ(g.why, "");
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
    CHECK_INT_EQ(feed_all_ways(buf, n, 0, why, sizeof(why)), -EPROTO);
    CHECK_STR_EQ(why, "a header block longer than 16384 bytes");
}

static void headers_too_large_and_interleaved(void)
{
    static uint8_t buf[65536];
    size_t n = preface(buf);
    char why[200];

    frame(buf, &n, 20000, 1, 0x4, 1);
    CHECK_INT_EQ(feed_all_ways(buf, n, 0, why, sizeof(why)), -EPROTO);
    CHECK_STR_EQ(why, "a header block longer than 16384 bytes");
    n = preface(buf);
    frame(buf, &n, 10, 1, 0, 1);
    frame(buf, &n, 10, 0, 0, 1); /* DATA inside the header block */
    CHECK_INT_EQ(feed_all_ways(buf, n, 0, why, sizeof(why)), -EPROTO);
    CHECK_STR_EQ(why, "a frame inside a header block that is not its CONTINUATION");
    n = preface(buf);
    frame(buf, &n, 10, 9, 0x4, 1);
    CHECK_INT_EQ(feed_all_ways(buf, n, 0, why, sizeof(why)), -EPROTO);
    CHECK_STR_EQ(why, "CONTINUATION outside a header block");
    n = preface(buf);
    frame(buf, &n, 10, 1, 0x4, 2);
    CHECK_INT_EQ(feed_all_ways(buf, n, 0, why, sizeof(why)), -EPROTO);
    CHECK_STR_EQ(why, "HEADERS on a stream a client cannot open");
}

static void control_flood(void)
{
    static uint8_t buf[65536];
    size_t n = preface(buf);
    char why[200];
    int i;

    for (i = 0; i < 1000; i++)
        frame(buf, &n, 8, 6, 0, 0); /* PING */
    CHECK_INT_EQ(feed_all_ways(buf, n, 0, why, sizeof(why)), -EPROTO);
    CHECK_STR_EQ(why, "RST_STREAM, PING, SETTINGS or PRIORITY frames faster than 50 a second");
}

static const struct test_case cases[] = {
    {"h2guard passes normal calls", normal_calls_pass},
    {"h2guard bad preface", bad_preface},
    {"h2guard rapid reset", rapid_reset},
    {"h2guard streams at the rate pass", streams_at_the_rate_pass},
    {"h2guard CONTINUATION flood", continuation_flood},
    {"h2guard header block bounds", headers_too_large_and_interleaved},
    {"h2guard control frame flood", control_flood},
};
TEST_SUITE(rpc, cases)
