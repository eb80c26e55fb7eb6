/* rpc.h - gRPC on unix sockets for the kubelet's plugins (the device plugin, the DRA plugin
 * and its registration), on gRPC core's C API (Debian's libgrpc 1.51): a server whose unary
 * methods and one server-streaming method are handed to callbacks as raw protobuf bytes, and
 * a one-call client.
 *
 * The server is one completion queue driven by rpc_server_poll from one thread: every call is
 * a small state machine advanced by its tags, so a long-lived stream (ListAndWatch) and any
 * number of unary calls are served at the same time without more threads. Every server has
 * the same bounds (RPC_* below, docs/device-plugin.md "Limits"): its socket is mode 0600, its
 * connections come through relay.c (at most RPC_MAX_CONNECTIONS, each judged by h2guard.h:
 * rapid reset, CONTINUATION floods, slow prefaces), and gRPC core gets the channel arguments
 * for streams, metadata, message sizes, idle connections and keepalive. Messages are never
 * larger than RPC_MSG_MAX. Nothing here prints. */
#ifndef RPC_RPC_H
#define RPC_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

#define RPC_MSG_MAX (4u << 20) /* gRPC's default receive limit */

/* The server's bounds, the same for every socket (docs/device-plugin.md, "Limits"). */
#define RPC_SOCKET_MODE 0600           /* the kubelet (root) only */
#define RPC_MAX_CONNECTIONS 16         /* more are closed as soon as they are accepted */
#define RPC_HANDSHAKE_MS 10000         /* a connection must send its preface within this */
#define RPC_MAX_SOCKETS 4              /* sockets one server listens on */
#define RPC_MAX_STREAMS 16             /* concurrent calls per connection */
#define RPC_MAX_HEADER_LIST 8192       /* bytes of metadata a call may send */
#define RPC_IDLE_MS (5 * 60 * 1000)    /* a connection without calls is closed (GOAWAY) */
#define RPC_KEEPALIVE_MS (60 * 1000)   /* the server pings an idle connection this often */
#define RPC_KEEPALIVE_TIMEOUT_MS 20000 /* and drops it when no answer comes in time */

/* gRPC status codes the handlers answer with. */
enum {
    RPC_OK = 0,
    RPC_INVALID_ARGUMENT = 3,
    RPC_NOT_FOUND = 5,
    RPC_UNIMPLEMENTED = 12,
    RPC_INTERNAL = 13,
    RPC_UNAVAILABLE = 14,
};

struct rpc_handlers {
    void *ctx;
    /* The streaming method's full name ("/v1beta1.DevicePlugin/ListAndWatch"). */
    const char *stream_method;
    /* unary answers a call of method (full name) with request bytes req[0..len): fills resp
     * and returns RPC_OK, or another status with msg[0..msgsz) saying why. */
    int (*unary)(void *ctx, const char *method, const uint8_t *req, size_t len, struct buf *resp,
                 char *msg, size_t msgsz);
    /* stream_state fills resp with the stream's current message and returns its generation;
     * a stream is sent a new message whenever the generation differs from the last sent. */
    uint64_t (*stream_state)(void *ctx, struct buf *resp);
};

struct rpc_server;

/* rpc_server_new listens on the unix socket at path with mode RPC_SOCKET_MODE (a stale socket
 * there is removed first; any other kind of file is an error; -ENOENT when the directory is
 * missing) and starts serving through h (borrowed; it must outlive the server). *out is
 * owned by the caller: rpc_server_free. */
int rpc_server_new(const char *path, const struct rpc_handlers *h, struct rpc_server **out,
                   struct err *err);

/* rpc_server_new_paths is rpc_server_new on several sockets paths[0..n) (1 to
 * RPC_MAX_SOCKETS) that one server, one queue and one relay thread serve: the DRA plugin's
 * registration and DRA sockets. */
int rpc_server_new_paths(const char *const *paths, size_t n, const struct rpc_handlers *h,
                         struct rpc_server **out, struct err *err);

/* rpc_server_sockets_there tells whether every socket s made is still at its path (the same
 * socket, not one made again by someone else); false for NULL. */
bool rpc_server_sockets_there(const struct rpc_server *s);

/* rpc_server_poll serves for up to timeout_ms, then sends the streams a new message when
 * the state's generation moved on. Returns 0. */
int rpc_server_poll(struct rpc_server *s, int timeout_ms);

struct rpc_conn_stats {
    size_t open;         /* connections relayed now */
    uint64_t accepted;   /* connections handed to gRPC */
    uint64_t refused;    /* closed at once: RPC_MAX_CONNECTIONS were open */
    uint64_t dropped;    /* closed for breaking a bound (h2guard.h) */
    uint64_t slowed;     /* held back for opening streams or sending control frames too fast */
    char last_drop[200]; /* why the last one was dropped */
};

/* rpc_server_conns copies the counters of the server's connections (thread-safe; zeroes for
 * NULL). */
void rpc_server_conns(struct rpc_server *s, struct rpc_conn_stats *st);

/* rpc_server_conns_news writes into line[0..size) one sentence on the connections dropped or
 * refused since the counts in *seen (updated), e.g. "closed 1 connection that broke a bound
 * (streams opened faster than 200 a second)"; returns false when there is nothing new. */
bool rpc_server_conns_news(struct rpc_server *s, struct rpc_conn_stats *seen, char *line,
                           size_t size);

/* rpc_server_streams counts the open streams (kubelets watching). */
size_t rpc_server_streams(const struct rpc_server *s);

/* rpc_server_free cancels every call, stops the server, removes its socket (when it is
 * still the one it created) and frees it. Safe on NULL. */
void rpc_server_free(struct rpc_server *s);

/* rpc_call makes one unary call of method on the server at the unix socket path, with
 * request bytes req[0..len), waiting at most timeout_ms; the answer goes to resp (may be
 * NULL). Fails with -ECONNREFUSED (cannot reach it), -ETIMEDOUT, or -EPROTO for a non-OK
 * status, err carrying the gRPC status text. */
int rpc_call(const char *path, const char *method, const uint8_t *req, size_t len, int timeout_ms,
             struct buf *resp, struct err *err);

#endif
