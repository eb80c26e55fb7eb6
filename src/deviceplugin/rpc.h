/* rpc.h - the gRPC side of the device plugin, on gRPC core's C API (Debian's libgrpc 1.51):
 * a server on a unix socket whose unary methods and one server-streaming method are handed
 * to callbacks as raw protobuf bytes, and the one client call a plugin makes (Register).
 *
 * The server is one completion queue driven by dp_rpc_server_poll from one thread: every
 * call is a small state machine advanced by its tags, so a long-lived stream (ListAndWatch)
 * and any number of unary calls (Allocate) are served at the same time without more
 * threads. Messages are never larger than DP_RPC_MSG_MAX. Nothing here prints. */
#ifndef DEVICEPLUGIN_RPC_H
#define DEVICEPLUGIN_RPC_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

#define DP_RPC_MSG_MAX (4u << 20) /* gRPC's default receive limit */

/* gRPC status codes the handlers answer with. */
enum {
    DP_RPC_OK = 0,
    DP_RPC_INVALID_ARGUMENT = 3,
    DP_RPC_NOT_FOUND = 5,
    DP_RPC_UNIMPLEMENTED = 12,
    DP_RPC_INTERNAL = 13,
    DP_RPC_UNAVAILABLE = 14,
};

struct dp_rpc_handlers {
    void *ctx;
    /* The streaming method's full name ("/v1beta1.DevicePlugin/ListAndWatch"). */
    const char *stream_method;
    /* unary answers a call of method (full name) with request bytes req[0..len): fills resp
     * and returns DP_RPC_OK, or another status with msg[0..msgsz) saying why. */
    int (*unary)(void *ctx, const char *method, const uint8_t *req, size_t len, struct buf *resp,
                 char *msg, size_t msgsz);
    /* stream_state fills resp with the stream's current message and returns its generation;
     * a stream is sent a new message whenever the generation differs from the last sent. */
    uint64_t (*stream_state)(void *ctx, struct buf *resp);
};

struct dp_rpc_server;

/* dp_rpc_server_new listens on the unix socket at path (a stale socket there is removed
 * first; any other kind of file is an error) and starts serving through h (borrowed; it must
 * outlive the server). *out is owned by the caller: dp_rpc_server_free. */
int dp_rpc_server_new(const char *path, const struct dp_rpc_handlers *h, struct dp_rpc_server **out,
                      struct err *err);

/* dp_rpc_server_poll serves for up to timeout_ms, then sends the streams a new message when
 * the state's generation moved on. Returns 0. */
int dp_rpc_server_poll(struct dp_rpc_server *s, int timeout_ms);

/* dp_rpc_server_streams counts the open streams (kubelets watching). */
size_t dp_rpc_server_streams(const struct dp_rpc_server *s);

/* dp_rpc_server_free cancels every call, stops the server, removes its socket (when it is
 * still the one it created) and frees it. Safe on NULL. */
void dp_rpc_server_free(struct dp_rpc_server *s);

/* dp_rpc_call makes one unary call of method on the server at the unix socket path, with
 * request bytes req[0..len), waiting at most timeout_ms; the answer goes to resp (may be
 * NULL). Fails with -ECONNREFUSED (cannot reach it), -ETIMEDOUT, or -EPROTO for a non-OK
 * status, err carrying the gRPC status text. */
int dp_rpc_call(const char *path, const char *method, const uint8_t *req, size_t len,
                int timeout_ms, struct buf *resp, struct err *err);

#endif
