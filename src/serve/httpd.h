/* httpd.h - a tiny HTTP/1.0-style server for /healthz, /readyz and /metrics.
 *
 * One thread serves up to 32 connections at once (poll), answering GET and HEAD and closing
 * each connection after its answer. A request head is capped at 8 KiB and must arrive within
 * 1 s of the connect (else 408), an answer must be taken within 5 s; a malformed request gets
 * 400. A client that idles holds only its own slot: probes are answered meanwhile. Enough for
 * probes and a Prometheus scraper; not a general web server. */
#ifndef SERVE_HTTPD_H
#define SERVE_HTTPD_H

#include "base/buf.h"
#include "base/err.h"

struct serve_httpd;

#define HTTPD_REQ_MAX 8192 /* a request's line and headers */

/* serve_httpd_parse_request looks at the first len bytes a client sent (pure, for tests and
 * the fuzzer). Returns 1 when they hold a whole request head "METHOD /path[?query]
 * [HTTP/1.x]" and headers up to the blank line: the method and the path (query stripped)
 * are copied out; 0 when more bytes are needed; -1 when it is no request we answer (a NUL
 * or control character, no path, a method or path too long, no blank line in
 * HTTPD_REQ_MAX bytes). */
int serve_httpd_parse_request(const char *req, size_t len, char *method, size_t method_size,
                              char *path, size_t path_size);

/* The handler fills body (and *content_type, default "text/plain; charset=utf-8") for a GET
 * of path (query string stripped) and returns the HTTP status. Called on the server thread. */
typedef int (*serve_httpd_fn)(void *ud, const char *path, struct buf *body,
                              const char **content_type);

/* serve_httpd_start listens on addr ("HOST:PORT", ":PORT", "[V6]:PORT"; port 0 picks a free
 * one) and starts the thread. Free with serve_httpd_stop(). */
int serve_httpd_start(const char *addr, serve_httpd_fn fn, void *ud, struct serve_httpd **out,
                      struct err *err);

/* serve_httpd_port returns the port actually bound. */
int serve_httpd_port(const struct serve_httpd *h);

/* serve_httpd_stop stops the thread, closes the socket and frees h; NULL is fine. */
void serve_httpd_stop(struct serve_httpd *h);

#endif
