/* relay.h - the front door of rpc.c's servers (used by rpc.c only): one thread accepts the
 * unix socket's connections, at most RPC_MAX_CONNECTIONS at a time, and relays each to gRPC
 * core through a socketpair, judging the client's bytes with h2guard.h on the way in. A
 * connection that breaks a bound, or sends no preface within RPC_HANDSHAKE_MS, is closed;
 * one over the limit is closed as soon as it is accepted. Buffers are RELAY_BUF bytes a
 * direction: a client that sends faster than gRPC reads is slowed by the socket, never
 * buffered without bound. */
#ifndef RPC_RELAY_H
#define RPC_RELAY_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "rpc/grpc_dl.h"
#include "rpc/rpc.h"

struct rpc_relay;

/* rpc_relay_start takes the listening sockets lfds[0..n) (n <= RPC_MAX_SOCKETS; closed by
 * rpc_relay_stop, also when this fails) and starts the thread that feeds server's
 * connections from all of them (RPC_MAX_CONNECTIONS in all). */
int rpc_relay_start(const int *lfds, size_t n, grpc_server *server, struct rpc_relay **out,
                    struct err *err);

/* rpc_relay_stats copies the counters (thread-safe). */
void rpc_relay_stats(struct rpc_relay *r, struct rpc_conn_stats *st);

/* rpc_relay_stop stops accepting and relaying, closes every connection (gRPC sees them end)
 * and frees r. Safe on NULL. */
void rpc_relay_stop(struct rpc_relay *r);

#endif
