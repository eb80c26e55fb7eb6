/* httpd.h - a tiny HTTP/1.0-style server for /healthz, /readyz and /metrics.
 *
 * One thread accepts connections and answers GET requests one at a time, closing each
 * connection after the answer. Requests are capped at 8 KiB and 2 s; anything else gets 400.
 * Enough for probes and a Prometheus scraper; not a general web server. */
#ifndef BASE_HTTPD_H
#define BASE_HTTPD_H

#include "base/buf.h"
#include "base/err.h"

struct httpd;

/* The handler fills body (and *content_type, default "text/plain; charset=utf-8") for a GET
 * of path (query string stripped) and returns the HTTP status. Called on the server thread. */
typedef int (*httpd_fn)(void *ud, const char *path, struct buf *body,
                              const char **content_type);

/* httpd_start listens on addr ("HOST:PORT", ":PORT", "[V6]:PORT"; port 0 picks a free
 * one) and starts the thread. Free with httpd_stop(). */
int httpd_start(const char *addr, httpd_fn fn, void *ud, struct httpd **out,
                      struct err *err);

/* httpd_port returns the port actually bound. */
int httpd_port(const struct httpd *h);

/* httpd_stop stops the thread, closes the socket and frees h; NULL is fine. */
void httpd_stop(struct httpd *h);

#endif
