/* node.c - the client and the Node's Events (node.h). */
#include "labeler/node.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "base/log.h"

/* The daemon's client, when it gave one: Events go through it (it is thread-safe) instead of
 * a client of their own each (a kubeconfig read and a TLS setup per Event). Set once before
 * the threads start. */
static struct kube_client *event_client;

void labeler_node_event_client(struct kube_client *c)
{
    event_client = c;
}

int labeler_client_open_until(const struct labeler_config *cfg, double deadline,
                              struct kube_client **out, struct err *err)
{
    struct kube_client_opts o;

    memset(&o, 0, sizeof(o));
    o.deadline = deadline;
    o.max_body = kube_client_max_body(cfg->memory_limit);
    o.kubeconfig = cfg->kubeconfig;
    o.user_agent = LABELER_USER_AGENT;
    o.timeout_ms = LABELER_REQUEST_TIMEOUT_MS;
    /* the daemon's threads (labels and slices, the DRA plugin's GETs, the Events) share one
     * TLS connection: a second one cost 0.1-0.2 MiB of the agent's peak RSS (the handshake
     * in the thread that met another's request), a wait of one request's time (ms) was the
     * price when two meet, once a cycle at most (docs/benchmarks-dra.md) */
    o.max_connections = 1;
    return kube_client_new(&o, out, err);
}

int labeler_client_open(const struct labeler_config *cfg, struct kube_client **out, struct err *err)
{
    return labeler_client_open_until(cfg, 0, out, err);
}

void labeler_node_event(const struct labeler_config *cfg, const char *type, const char *reason,
                        const char *msg)
{
    struct kube_client *c = NULL;
    struct kube_response resp;
    char now[32], *body = NULL;
    struct err err;
    time_t t = time(NULL);
    struct tm tm;
    json_t *ev;

    if (cfg->no_sync || !cfg->node_name)
        return;
    gmtime_r(&t, &tm);
    strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
    ev = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s,s:s},s:s,s:s,s:s,s:{s:s,s:s},"
                   "s:s,s:s,s:i,s:s,s:s}",
                   "apiVersion", "v1", "kind", "Event", "metadata", "generateName",
                   "gpulabel-gpu-health-", "namespace", "default", "involvedObject", "apiVersion",
                   "v1", "kind", "Node", "name", cfg->node_name, "uid", cfg->node_name, "reason",
                   reason, "message", msg, "type", type, "source", "component", "gpulabel", "host",
                   cfg->node_name, "firstTimestamp", now, "lastTimestamp", now, "count", 1,
                   "reportingComponent", "gpulabel", "reportingInstance", cfg->node_name);
    body = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
    json_decref(ev);
    err_clear(&err);
    memset(&resp, 0, sizeof(resp));
    if (!body || (!event_client && labeler_client_open(cfg, &c, &err)) ||
        kube_client_request(c ? c : event_client, "POST", "/api/v1/namespaces/default/events",
                            "application/json", body, strlen(body), &resp, &err))
        log_printf('E', 0, "cannot post the %s event %s on node \"%s\": %s", type, reason,
                   cfg->node_name, body ? err.msg : "out of memory");
    else
        log_printf('I', 1, "posted a %s event on node \"%s\": %s", type, cfg->node_name, msg);
    kube_response_release(&resp);
    kube_client_free(c);
    free(body);
}

int labeler_node_label(struct kube_client *c, const char *node, const char *key, char *out,
                       size_t size, struct err *err)
{
    struct kube_response resp;
    char esc[1024], path[1100];
    const char *v;
    int rc;

    out[0] = '\0';
    if (!kube_path_escape(node, esc, sizeof(esc)))
        return err_set(err, -ENAMETOOLONG, "node name \"%.64s...\" is too long", node);
    snprintf(path, sizeof(path), "/api/v1/nodes/%s", esc);
    memset(&resp, 0, sizeof(resp));
    rc = kube_client_request(c, "GET", path, NULL, NULL, 0, &resp, err);
    if (rc)
        err_prefix(err, "cannot get node \"%s\"", node);
    v = json_string_value(
        json_object_get(json_object_get(json_object_get(resp.json, "metadata"), "labels"), key));
    if (!rc && v)
        snprintf(out, size, "%s", v);
    kube_response_release(&resp);
    return rc;
}
