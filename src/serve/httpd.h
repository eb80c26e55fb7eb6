/* httpd.h - a tiny HTTP/1.0-style server for /healthz, /readyz and /metrics.
 *
 * One thread accepts connections and answers GET requests one at a time, closing each
 * connection after the answer. Requests are capped at 8 KiB and 2 s; anything else gets 400.
 * Enough for probes and a Prometheus scraper; not a general web server. */
#ifndef SERVE_HTTPD_H
#define SERVE_HTTPD_H

#include "base/buf.h"
#include "base/err.h"

struct serve_httpd;

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
