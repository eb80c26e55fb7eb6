/* h2guard.h - the bounds a client's HTTP/2 byte stream must keep before it reaches gRPC core.
 *
 * Debian 12's gRPC core (1.51) has no defence against HTTP/2 rapid reset (a stream opened and
 * cancelled at once, over and over: each leaves a call queued in the core, gigabytes in
 * seconds) and none against a client that opens streams faster than the server serves them.
 * The server therefore relays every connection through a guard that reads the frame headers
 * (RFC 9113 section 4.1; nothing of HPACK) before gRPC does. Rates are kept by holding a frame
 * back until its token is there: new streams, and control frames (RST_STREAM, PING, SETTINGS,
 * PRIORITY), each per connection from a token bucket, so a rapid reset is slowed to the rate
 * gRPC serves at and a kubelet's burst is only delayed. What no peer does is a fault that
 * closes the connection: a wrong preface, a header block longer than H2GUARD_HEADER_BLOCK_MAX
 * bytes (a CONTINUATION flood), a frame inside a header block, PUSH_PROMISE, HEADERS on an
 * even stream. Pure: no I/O, no clock of its own (the caller passes the time), so it is
 * unit-tested and fuzzed. */
#ifndef RPC_H2GUARD_H
#define RPC_H2GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define H2GUARD_HEADER_BLOCK_MAX 16384 /* bytes of one header block, encoded */
#define H2GUARD_STREAM_RATE 200        /* new streams a second, per connection */
#define H2GUARD_STREAM_BURST 400       /* and as many at once (a node starting its pods) */
#define H2GUARD_CONTROL_RATE 50        /* RST_STREAM, PING, SETTINGS, PRIORITY a second */
#define H2GUARD_CONTROL_BURST 200

struct h2guard_bucket {
    double tokens;
    int64_t at_ms; /* when tokens was last filled */
};

struct h2guard {
    size_t preface_seen;   /* bytes of the client preface matched so far (24 in all) */
    uint32_t payload_left; /* bytes of the current frame's payload still to pass */
    bool in_block;         /* inside a header block: only CONTINUATION of block_stream may come */
    uint32_t block_stream;
    size_t block_bytes;
    uint32_t last_stream; /* the highest stream the client opened */
    struct h2guard_bucket streams, control;
    uint64_t frames;    /* frames admitted */
    uint64_t throttles; /* times a frame was held back for its token */
    bool throttled;     /* the last feed stopped at a frame waiting for its token */
    char why[160];      /* why the connection was judged bad */
};

/* h2guard_init makes a guard for a new connection at time now_ms (buckets full). */
void h2guard_init(struct h2guard *g, int64_t now_ms);

/* h2guard_feed judges the client's bytes that were not admitted yet, data[0..len) (after a
 * call, the caller keeps the bytes past *admitted and passes them first next time). Sets
 * *admitted to how many may go on to the server: fewer than len when the rest ends inside a
 * frame header, or when a frame waits for its token (g->throttled; h2guard_wait_ms says for
 * how long). Returns 0, or -EPROTO with g->why saying which bound was broken (the connection
 * must be closed; later calls keep returning -EPROTO). */
int h2guard_feed(struct h2guard *g, const uint8_t *data, size_t len, int64_t now_ms,
                 size_t *admitted);

/* h2guard_wait_ms is how long a throttled connection waits for its next token (>= 1), 0 when
 * it is not throttled. */
int64_t h2guard_wait_ms(const struct h2guard *g, int64_t now_ms);

#endif
