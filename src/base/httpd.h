/* httpd.h - a tiny HTTP/1.0-style server for /healthz, /readyz and /metrics.
 *
 * One thread serves up to 128 connections at once (poll), answering GET and HEAD and closing
 * each connection after its answer. A request head is capped at 8 KiB and must arrive within
 * 1 s of the connect (else 408), an answer must be taken within 5 s; a malformed request gets
 * 400. A client that idles holds only its own slot, and under a flood of connects the accept
 * queue (4,096 deep) is emptied at each wakeup and the idlest clients make room: probes are
 * answered meanwhile. Enough for probes and a Prometheus scraper; not a general web server.
 *
 * The connections may go through a transport (TLS: base/tls.h), and paths whose handler
 * must wait for someone else (a TokenReview and a SubjectAccessReview for /metrics on
 * gpusched's secure port) are handled on a worker thread of their own, one at a time, so that
 * a probe never waits behind them. */
#ifndef BASE_HTTPD_H
#define BASE_HTTPD_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"

struct httpd;

#define HTTPD_REQ_MAX 8192 /* a request's line and headers */

/* httpd_parse_request looks at the first len bytes a client sent (pure, for tests and
 * the fuzzer). Returns 1 when they hold a whole request head "METHOD /path[?query]
 * [HTTP/1.x]" and headers up to the blank line: the method and the path (query stripped)
 * are copied out; 0 when more bytes are needed; -1 when it is no request we answer (a NUL
 * or control character, no path, a method or path too long, no blank line in
 * HTTPD_REQ_MAX bytes). */
int httpd_parse_request(const char *req, size_t len, char *method, size_t method_size, char *path,
                        size_t path_size);

/* httpd_request_header copies the value of header name (case-insensitive, its first
 * occurrence) of a whole request head into out (cut to size); returns whether it is there. */
bool httpd_request_header(const char *req, size_t len, const char *name, char *out, size_t size);

/* What the handler is given: the method (GET or HEAD), the path (query string stripped), and
 * the Authorization header's value (NULL when absent). */
struct httpd_req {
    const char *method;
    const char *path;
    const char *authorization;
};

/* The handler fills body (and *content_type, default "text/plain; charset=utf-8") and returns
 * the HTTP status. Called on the server thread, or on the worker thread for the paths opts.slow
 * names (never on both at once for those). */
typedef int (*httpd_fn)(void *ud, const struct httpd_req *req, struct buf *body,
                        const char **content_type);

/* A connection's transport. open makes the state of a connection accepted on fd (NULL: drop
 * it); handshake returns 1 once the connection is ready, HTTPD_IO_WANT_READ or _WRITE while it
 * waits, -1 when it failed; read and write return bytes moved (> 0), 0 (read: the peer ended),
 * HTTPD_IO_WANT_*, or -1; close frees the state (httpd closes fd). */
#define HTTPD_IO_WANT_READ (-1001)
#define HTTPD_IO_WANT_WRITE (-1002)
struct httpd_transport {
    void *ctx;
    void *(*open)(void *ctx, int fd);
    int (*handshake)(void *conn);
    long (*read)(void *conn, void *buf, size_t n);
    long (*write)(void *conn, const void *buf, size_t n);
    void (*close)(void *conn);
};

struct httpd_opts {
    const char *addr; /* "HOST:PORT", ":PORT", "[V6]:PORT"; port 0 picks a free one */
    httpd_fn fn;
    void *ud;
    const struct httpd_transport *transport; /* copied; NULL: plain TCP */
    /* slow(ud, path, authorization): the handler may block on this request (authorization: the
     * Authorization header's value or NULL); it then runs on the worker thread, the request
     * waiting up to 15 s, at most HTTPD_SLOW_MAX requests queued (more get 503). NULL: none */
    bool (*slow)(void *ud, const char *path, const char *authorization);
};
#define HTTPD_SLOW_MAX 16

/* httpd_start_opts listens and starts the server thread (and the worker when o->slow).
 * Free with httpd_stop(). */
int httpd_start_opts(const struct httpd_opts *o, struct httpd **out, struct err *err);

/* httpd_start is httpd_start_opts over plain TCP, every path on the server thread. */
int httpd_start(const char *addr, httpd_fn fn, void *ud, struct httpd **out, struct err *err);

/* httpd_port returns the port actually bound. */
int httpd_port(const struct httpd *h);

/* httpd_stop stops the thread, closes the socket and frees h; NULL is fine. */
void httpd_stop(struct httpd *h);

#endif
