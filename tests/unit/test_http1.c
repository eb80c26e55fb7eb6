/* test_http1.c - the incremental HTTP/1.1 answer parser (kube/http1.h), each case fed whole
 * and one byte at a time, and the header-value rule. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/http1.h"
#include "test.h"

/* run parses text fed in pieces of `step` bytes (0: whole) and writes what it saw into out:
 * "<status>[k]:<body>|" per answer (k when the connection is kept), "E(<why>)" on an error,
 * "C" when the close ended an answer. */
static void run(const char *text, size_t step, char *out, size_t cap)
{
    size_t n = strlen(text), have = 0, fed = 0, off = 0, o = 0;
    char *buf = malloc(n + 1);
    struct http1_answer a;

    out[0] = '\0';
    if (!buf)
        return;
    http1_answer_init(&a);
    while (fed < n) {
        size_t piece = step && step < n - fed ? step : n - fed;

        memcpy(buf + have, text + fed, piece);
        have += piece;
        fed += piece;
        for (;;) {
            const char *d;
            size_t used, len;
            enum http1_event ev = http1_step(&a, buf + off, have - off, &used, &d, &len);

            off += used;
            if (ev == HTTP1_HEAD)
                o += (size_t)snprintf(out + o, cap - o, "%ld%s:", a.status, a.keep ? "k" : "");
            else if (ev == HTTP1_BODY)
                o += (size_t)snprintf(out + o, cap - o, "%.*s", (int)len, d);
            else if (ev == HTTP1_DONE)
                o += (size_t)snprintf(out + o, cap - o, "|");
            else if (ev == HTTP1_ERROR) {
                snprintf(out + o, cap - o, "E(%s)", a.why);
                free(buf);
                return;
            } else if (!used)
                break;
        }
        memmove(buf, buf + off, have - off);
        have -= off;
        off = 0;
    }
    if (http1_eof(&a) == HTTP1_DONE)
        snprintf(out + o, cap - o, "|C");
    free(buf);
}

static void check_case(const char *text, const char *want, int line)
{
    char got[512];
    size_t step;

    for (step = 0; step < 4; step++) {
        run(text, step, got, sizeof(got));
        if (strcmp(got, want))
            test_fail(__FILE__, line, "fed in pieces of %zu: got \"%s\", expected \"%s\"", step,
                      got, want);
    }
}

#define CASE(text, want) check_case((text), (want), __LINE__)

static void http1_lengths_and_pipelining(void)
{
    CASE("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
         "HTTP/1.1 404 Not Found\r\ncontent-length:2\r\n\r\n{}",
         "200k:hello|404k:{}|");
    CASE("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
         "204k:|200k:|");
    CASE("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx",
         "201k:x|");
    CASE("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", "200:x|");
    CASE("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", "200:x|");
    CASE("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx", "200k:x|");
    CASE("HTTP/1.1 200 OK\r\n\r\nuntil the close", "200:until the close|C");
    CASE("HTTP/1.1 200 OK\r\nConnection: notclose\r\nContent-Length: 1\r\n\r\nx", "200k:x|");
}

static void http1_chunked(void)
{
    CASE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
         "5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n"
         "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
         "200k:hello world|200k:ok|");
    CASE("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n",
         "200k:0123456789|");
}

static void http1_malformed(void)
{
    CASE("HTTP/2 200\r\n\r\n", "E(bad status line)");
    CASE("HTTP/1.1 20 OK\r\n\r\n", "E(bad status line)");
    CASE("HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n", "E(bad Content-Length)");
    CASE("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
         "E(bad Content-Length)");
    CASE("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
         "E(Content-Length too large)");
    CASE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "200k:E(bad chunk size)");
    CASE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n",
         "200k:aE(chunk not followed by CRLF)");
    CASE("HTTP/1.1 101 Switching Protocols\r\n\r\n", "E(unexpected 101 Switching Protocols)");
}

static void http1_retry_after_and_eof(void)
{
    struct http1_answer a;
    const char *t =
        "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: 10\r\n\r\nabc";
    const char *d;
    size_t used, len;

    http1_answer_init(&a);
    CHECK_INT_EQ(http1_eof(&a), HTTP1_NEED); /* closed before any answer began */
    CHECK_INT_EQ(http1_step(&a, t, strlen(t), &used, &d, &len), HTTP1_HEAD);
    CHECK_INT_EQ(a.retry_after, 7);
    CHECK_INT_EQ(http1_step(&a, t + used, strlen(t) - used, &used, &d, &len), HTTP1_BODY);
    CHECK_INT_EQ(len, 3);
    CHECK(a.begun);
    CHECK_INT_EQ(http1_eof(&a), HTTP1_ERROR); /* cut short */
}

static void http1_header_values(void)
{
    CHECK(http1_value_bad("Bearer abc.def-ghi_jkl") == NULL);
    CHECK(http1_value_bad("gpulabel/1.0 (linux; ÿ)") == NULL);
    CHECK_STR_EQ(http1_value_bad("abc\r\nX-Evil: 1"), "\r\nX-Evil: 1");
    CHECK(http1_value_bad("a\nb") != NULL);
    CHECK(http1_value_bad("a\tb") != NULL);
    CHECK(http1_value_bad("a\x7f") != NULL);
}

static const struct test_case cases[] = {
    {"lengths and pipelining", http1_lengths_and_pipelining},
    {"chunked", http1_chunked},
    {"malformed answers", http1_malformed},
    {"Retry-After and the close", http1_retry_after_and_eof},
    {"header values refuse control characters", http1_header_values},
};

TEST_SUITE(http1, cases)
