/* probes.c - /healthz, /readyz and /metrics (see probes-int.h). */
#include "serve/probes-int.h"

#include <string.h>

#include "kube/informer.h"
#include "serve/state-int.h"

int serve_on_http(void *ud, const struct httpd_req *req, struct buf *body, const char **ctype)
{
    const char *path = req->path;
    struct serve *s = ud;
    bool ready;

    if (!strcmp(path, "/healthz") || !strcmp(path, "/livez")) {
        buf_puts(body, "ok");
        return 200;
    }
    if (!strcmp(path, "/readyz")) {
        serve_lock(s);
        ready = serve_synced(s) && !s->stopping;
        serve_unlock(s);
        buf_puts(body, ready ? "ok" : "informers not synced");
        return ready ? 200 : 503;
    }
    if (!strcmp(path, "/metrics")) {
        uint64_t pods;

        serve_lock(s);
        serve_update_gauges(s);
        pods = serve_cache_pod_count(s);
        serve_unlock(s);
        pthread_mutex_lock(&s->metrics.mu);
        s->metrics.leader = serve_leading(s);
        s->metrics.cache_pods = pods;
        if (s->nodes_inf && s->pods_inf) {
            s->metrics.relists_nodes = kube_informer_lists(s->nodes_inf);
            s->metrics.relists_pods = kube_informer_lists(s->pods_inf);
        }
        pthread_mutex_unlock(&s->metrics.mu);
        *ctype = "text/plain; version=0.0.4; charset=utf-8";
        return serve_metrics_render(&s->metrics, body) ? 500 : 200;
    }
    buf_puts(body, "404 page not found\n");
    return 404;
}
