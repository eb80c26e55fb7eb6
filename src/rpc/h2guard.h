/* h2guard.h - the bounds a client's HTTP/2 byte stream must keep before it reaches gRPC core.
 *
 * Debian 12's gRPC core (1.51) has no defence against HTTP/2 rapid reset (a stream opened and
 * cancelled at once, over and over: each leaves a call queued in the core, gigabytes in
 * seconds) and none against a client that opens streams faster than the server serves them.
 * The server therefore relays every connection through a guard that reads the frame headers
 * (RFC 9113 section 4.1; nothing of HPACK) and judges them: the client's preface first, a
 * header block (HEADERS and its CONTINUATIONs) no longer than H2GUARD_HEADER_BLOCK_MAX bytes,
 * new streams and control frames (RST_STREAM, PING, SETTINGS, PRIORITY) within token buckets.
 * A connection that breaks a bound is closed with the reason. Pure: no I/O, no clock of its
 * own (the caller passes the time), so it is unit-tested and fuzzed. */
#ifndef RPC_H2GUARD_H
#define RPC_H2GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define H2GUARD_HEADER_BLOCK_MAX 16384 /* bytes of one header block, encoded */
#define H2GUARD_STREAM_RATE 20         /* new streams a second, per connection */
#define H2GUARD_STREAM_BURST 64        /* and as many at once */
#define H2GUARD_CONTROL_RATE 50        /* RST_STREAM, PING, SETTINGS, PRIORITY a second */
#define H2GUARD_CONTROL_BURST 200

struct h2guard_bucket {
    double tokens;
    int64_t at_ms; /* when tokens was last filled */
};

struct h2guard {
    size_t preface_seen;   /* bytes of the client preface matched so far (24 in all) */
    uint8_t hdr[9];        /* a frame header being read */
    size_t hdr_len;        /* bytes of it read */
    uint32_t payload_left; /* bytes of the current frame's payload still to pass */
    bool in_block;         /* inside a header block: only CONTINUATION of block_stream may come */
    uint32_t block_stream;
    size_t block_bytes;
    uint32_t last_stream; /* the highest stream the client opened */
    struct h2guard_bucket streams, control;
    uint64_t frames; /* frames seen, for tests */
    char why[160];   /* why the connection was judged bad */
};

/* h2guard_init makes a guard for a new connection at time now_ms (buckets full). */
void h2guard_init(struct h2guard *g, int64_t now_ms);

/* h2guard_feed judges the next len bytes the client sent (any split is fine). Returns 0 when
 * they may go on to the server, or -EPROTO with g->why saying which bound was broken (the
 * connection must be closed; later calls keep returning -EPROTO). */
int h2guard_feed(struct h2guard *g, const uint8_t *data, size_t len, int64_t now_ms);

#endif
