/* httpd.h - a tiny HTTP/1.0-style server for /healthz, /readyz and /metrics.
 *
 * One thread serves up to 128 connections at once (poll), answering GET and HEAD and closing
 * each connection after its answer. A request head is capped at 8 KiB and must arrive within
 * 1 s of the connect (else 408), an answer must be taken within 5 s; a malformed request gets
 * 400. A client that idles holds only its own slot, and under a flood of connects the accept
 * queue (4,096 deep) is emptied at each wakeup and the idlest clients make room: probes are
 * answered meanwhile. Enough for probes and a Prometheus scraper; not a general web server. */
#ifndef BASE_HTTPD_H
#define BASE_HTTPD_H

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

/* The handler fills body (and *content_type, default "text/plain; charset=utf-8") for a GET
 * of path (query string stripped) and returns the HTTP status. Called on the server thread. */
typedef int (*httpd_fn)(void *ud, const char *path, struct buf *body, const char **content_type);

/* httpd_start listens on addr ("HOST:PORT", ":PORT", "[V6]:PORT"; port 0 picks a free
 * one) and starts the thread. Free with httpd_stop(). */
int httpd_start(const char *addr, httpd_fn fn, void *ud, struct httpd **out, struct err *err);

/* httpd_port returns the port actually bound. */
int httpd_port(const struct httpd *h);

/* httpd_stop stops the thread, closes the socket and frees h; NULL is fine. */
void httpd_stop(struct httpd *h);

#endif
