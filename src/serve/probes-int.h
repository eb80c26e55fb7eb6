/* probes-int.h - the answers of serve's probe and metrics endpoints. */
#ifndef SERVE_PROBES_INT_H
#define SERVE_PROBES_INT_H

#include "base/buf.h"
#include "base/httpd.h"

/* serve_on_http is the httpd_fn (ud is the struct serve): /healthz and /livez (always
 * ok), /readyz (ok once both informers synced and while not stopping), /metrics
 * (Prometheus text), 404 otherwise. */
int serve_on_http(void *ud, const struct httpd_req *req, struct buf *body, const char **ctype);

#endif
