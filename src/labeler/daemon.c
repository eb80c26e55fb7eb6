/* daemon.c - gpulabel's node-sync loop: detect, write outputs, reconcile the Node, sleep.
 *
 * This is the program's loop, kept out of main.c so tests and main share it; unlike the other
 * library modules it logs, to stderr, one klog-style line per event (base/log.h: severity,
 * UTC time, pid, "gpulabel]", message), as Kubernetes components log. Labels are never
 * removed on exit or when detection fails: only a successful detection can change what the
 * node carries. */
#include "labeler/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/httpd.h"
#include "base/log.h"
#include "deviceplugin/plugin.h"
#include "kube/client.h"
#include "labeler/backoff.h"
#include "labeler/dra.h"
#include "labeler/healthev.h"
#include "labeler/node.h"
#include "labeler/sync.h"

#define SYNC_CONFLICT_RETRIES 3 /* re-GET and re-plan after a 409 this many times */
#define BACKOFF_BASE_MS 1000
#define BACKOFF_CAP_MS 60000

struct sync_result {
    bool wrote;
    size_t nset, nremoved;
    char summary[512]; /* "key=value, -key" of what changed, truncated */
};

/* ---- logging ---------------------------------------------------------------------- */

/* klog-style lines on stderr (base/log.h): severity, time, pid, "gpulabel]", message */
#define log_line(sev, level, ...) log_printf((sev), (level), __VA_ARGS__)

static const char *fmt_ms(long ms, char *buf, size_t size)
{
    if (ms >= 1000 && ms % 1000 == 0)
        snprintf(buf, size, "%lds", ms / 1000);
    else if (ms >= 1000)
        snprintf(buf, size, "%.1fs", (double)ms / 1000.0);
    else
        snprintf(buf, size, "%ldms", ms);
    return buf;
}

static const char *fmt_schemas(unsigned schemas, char *buf, size_t size)
{
    snprintf(buf, size, "%s%s%s", schemas & LABELER_SCHEMA_ACK ? "ack" : "",
             (schemas & LABELER_SCHEMA_ACK) && (schemas & LABELER_SCHEMA_GFD) ? "," : "",
             schemas & LABELER_SCHEMA_GFD ? "gfd" : "");
    if (!buf[0])
        snprintf(buf, size, "none");
    return buf;
}

/* ---- talking to the API server ---------------------------------------------------- */

/* Rewrites err->msg as "cannot VERB node "NAME": CAUSE: MESSAGE (HINT)". */
static void sync_err_describe(struct err *err, const char *verb, const char *node)
{
    const char *cause = NULL, *hint = "";
    char cause_buf[32], old[ERR_MSG_MAX];
    int st = err->http_status;

    switch (st) {
    case 0:
        break;
    case 401:
        cause = "unauthorized";
        hint = " (check the service account token or the kubeconfig credentials)";
        break;
    case 403:
        cause = "forbidden";
        hint = " (check the ClusterRole allows get,patch on nodes)";
        break;
    case 404:
        cause = "not found";
        hint = " (check that --node-name or NODE_NAME names this node)";
        break;
    case 409:
        cause = "conflict";
        break;
    case 422:
        cause = "invalid";
        break;
    case 429:
        cause = "too many requests";
        break;
    default:
        snprintf(cause_buf, sizeof(cause_buf), st >= 500 ? "server error %d" : "HTTP %d", st);
        cause = cause_buf;
    }
    memcpy(old, err->msg, sizeof(old));
    /* the Status message may end in a full stop; a hint or "; retrying" follows it */
    if (old[0] && old[strlen(old) - 1] == '.')
        old[strlen(old) - 1] = '\0';
    if (cause)
        snprintf(err->msg, sizeof(err->msg), "cannot %s node \"%s\": %s: %s%s", verb, node, cause,
                 old[0] ? old : "(no message)", hint);
    else
        snprintf(err->msg, sizeof(err->msg), "cannot %s node \"%s\": %s", verb, node, old);
}

/* Fills res->summary from the patch's labels: "key=value" for a set, "-key" for a removal. */
static void sync_summarize(const json_t *patch, struct sync_result *res)
{
    const json_t *labels = json_object_get(json_object_get(patch, "metadata"), "labels");
    const char *key;
    json_t *v;
    size_t n = 0;

    res->summary[0] = '\0';
    json_object_foreach((json_t *)labels, key, v)
    {
        int w = json_is_string(v) ? snprintf(res->summary + n, sizeof(res->summary) - n, "%s%s=%s",
                                             n ? ", " : "", key, json_string_value(v))
                                  : snprintf(res->summary + n, sizeof(res->summary) - n, "%s-%s",
                                             n ? ", " : "", key);

        if (w < 0 || (size_t)w >= sizeof(res->summary) - n) {
            res->summary[sizeof(res->summary) - 1] = '\0';
            break;
        }
        n += (size_t)w;
    }
    if (!n)
        snprintf(res->summary, sizeof(res->summary), "ownership annotation only");
}

/* One reconcile: GET the node, plan, PATCH when needed. The patch pins the resourceVersion
 * read, so a node changed in between answers 409 and is read again (a few times) rather than
 * being patched from a stale ownership list. */
static int sync_node(struct kube_client *c, const char *node, unsigned schemas,
                     const struct labeler_labels *desired, struct sync_result *res, struct err *err)
{
    char esc[1024], path[1100];
    int attempt, rc;

    memset(res, 0, sizeof(*res));
    if (!schemas) /* as labeler_detect: no schema given means the default */
        schemas = LABELER_SCHEMA_ACK;
    if (!kube_path_escape(node, esc, sizeof(esc)))
        return err_set(err, -ENAMETOOLONG, "node name \"%.64s...\" is too long", node);
    snprintf(path, sizeof(path), "/api/v1/nodes/%s", esc);

    for (attempt = 0;; attempt++) {
        struct kube_response resp;
        struct labeler_sync_plan plan;
        char *body;

        memset(&resp, 0, sizeof(resp));
        err_clear(err);
        rc = kube_client_request(c, "GET", path, NULL, NULL, 0, &resp, err);
        if (!rc && !json_is_object(resp.json))
            rc = err_set(err, -EPROTO, "the API server's answer is not a JSON object");
        if (rc) {
            kube_response_release(&resp);
            sync_err_describe(err, "get", node);
            return rc;
        }
        rc = labeler_sync_plan_compute(resp.json, desired, schemas, true, &plan, err);
        kube_response_release(&resp);
        if (rc) {
            labeler_sync_plan_release(&plan);
            err_prefix(err, "cannot label node \"%s\"", node);
            return rc;
        }
        if (!plan.patch)
            return 0;
        body = labeler_sync_patch_dump(&plan);
        if (!body) {
            labeler_sync_plan_release(&plan);
            return err_set(err, -ENOMEM, "out of memory writing the node patch");
        }
        log_line('I', 2, "PATCH %s %s", path, body);
        rc = kube_client_request(c, "PATCH", path, "application/merge-patch+json", body,
                                 strlen(body), &resp, err);
        kube_response_release(&resp);
        free(body);
        if (!rc) {
            res->wrote = true;
            res->nset = plan.nset;
            res->nremoved = plan.nremoved;
            sync_summarize(plan.patch, res);
        }
        labeler_sync_plan_release(&plan);
        if (!rc)
            return 0;
        if (err->http_status == 409 && attempt < SYNC_CONFLICT_RETRIES) {
            log_line('I', 2, "node \"%s\" changed since it was read (409); reading it again", node);
            continue;
        }
        sync_err_describe(err, "patch", node);
        return rc;
    }
}

static int need_node_name(const struct labeler_config *cfg, struct err *err)
{
    if (cfg->node_name && cfg->node_name[0])
        return 0;
    return err_set(err, -EINVAL,
                   "no node name: pass --node-name or set NODE_NAME (the DaemonSet sets it "
                   "from spec.nodeName), or use --no-sync");
}

int labeler_sync_once(const struct labeler_config *cfg, const struct labeler_labels *desired,
                      double deadline, struct err *err)
{
    struct kube_client *c = NULL;
    struct sync_result res;
    int rc;

    rc = need_node_name(cfg, err);
    if (rc)
        goto out;
    rc = labeler_client_open_until(cfg, deadline, &c, err);
    if (rc) {
        err_prefix(err, "cannot set up the API client");
        goto out;
    }
    rc = sync_node(c, cfg->node_name, cfg->schemas, desired, &res, err);
out:
    kube_client_free(c);
    return rc;
}

/* ---- the loop ----------------------------------------------------------------------- */

static volatile sig_atomic_t daemon_stop;
/* Set while the loop only detects or talks to the API server: nothing half-written can be
 * left behind then (a PATCH is atomic on the server), so a signal ends the process at once
 * instead of waiting for a request timeout. Clear while output files are written. */
static volatile sig_atomic_t daemon_abandonable;
static int daemon_pipe[2] = {-1, -1};
/* Set (from the GPU monitor's thread) when a GPU's health changed: the DRA mode publishes its
 * taints at once instead of at the next cycle. */
static volatile sig_atomic_t daemon_kicked;

static void daemon_kick(void)
{
    ssize_t w;

    daemon_kicked = 1;
    if (daemon_pipe[1] >= 0) {
        w = write(daemon_pipe[1], "k", 1);
        (void)w;
    }
}
/* The device plugin's socket, removed when a signal ends the process at once, so that the
 * kubelet does not dial a dead plugin. */
static char daemon_plugin_sock[1 + 8][4400];

static void daemon_on_signal(int sig)
{
    static const char term[] = "gpulabel: stopping on SIGTERM; the labels stay on the node\n";
    static const char intr[] = "gpulabel: stopping on SIGINT; the labels stay on the node\n";
    int saved = errno;
    ssize_t w;

    daemon_stop = sig;
    if (daemon_abandonable) {
        for (size_t i = 0; i < sizeof(daemon_plugin_sock) / sizeof(daemon_plugin_sock[0]); i++)
            if (daemon_plugin_sock[i][0])
                unlink(daemon_plugin_sock[i]);
        w = write(STDERR_FILENO, sig == SIGINT ? intr : term,
                  sig == SIGINT ? sizeof(intr) - 1 : sizeof(term) - 1);
        (void)w;
        _exit(0);
    }
    if (daemon_pipe[1] >= 0) {
        w = write(daemon_pipe[1], "x", 1);
        (void)w;
    }
    errno = saved;
}

static int daemon_signals_install(void)
{
    struct sigaction sa;
    int i;

    if (pipe(daemon_pipe))
        return -errno;
    for (i = 0; i < 2; i++) {
        int fl = fcntl(daemon_pipe[i], F_GETFL);

        if (fl < 0 || fcntl(daemon_pipe[i], F_SETFL, fl | O_NONBLOCK) < 0 ||
            fcntl(daemon_pipe[i], F_SETFD, FD_CLOEXEC) < 0)
            return -errno;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = daemon_on_signal;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL))
        return -errno;
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

/* Sleeps ms, returning early when a stop signal arrives. */
/* Sleeps until end (mono ms), returning early when a stop signal arrives or a kick. */
static void daemon_wait_until(long end)
{
    while (!daemon_stop && !daemon_kicked) {
        struct pollfd p;
        long left = end - mono_ms();
        char drain[16];

        if (left <= 0)
            break;
        p.fd = daemon_pipe[0];
        p.events = POLLIN;
        p.revents = 0;
        if (poll(&p, 1, left > 1000 ? 1000 : (int)left) > 0) {
            ssize_t r = read(daemon_pipe[0], drain, sizeof(drain));

            (void)r;
        }
    }
}

static bool labels_equal(const struct labeler_labels *a, const struct labeler_labels *b)
{
    size_t i;

    if (a->n != b->n)
        return false;
    for (i = 0; i < a->n; i++)
        if (strcmp(a->v[i].key, b->v[i].key) || strcmp(a->v[i].value, b->v[i].value))
            return false;
    return true;
}

static int labels_copy(struct labeler_labels *dst, const struct labeler_labels *src)
{
    struct labeler_label *v = NULL;

    if (src->n) {
        v = malloc(src->n * sizeof(*v));
        if (!v)
            return -ENOMEM;
        memcpy(v, src->v, src->n * sizeof(*v));
    }
    labeler_labels_release(dst);
    dst->v = v;
    dst->n = dst->alloc = src->n;
    return 0;
}

/* Remembers what kind of error was logged last, so a failure repeating every cycle is logged
 * at default verbosity once, and again only when it changes kind. The key is the message for
 * detection and output errors, and code/status/reason/verb for API errors, whose text may
 * differ in details from one attempt to the next ("after 1 ms"). */
struct daemon_errlog {
    char last[ERR_MSG_MAX];
};

/* Logs msg+suffix at level 0 when key differs from the last one, else at level 1. Returns
 * true when it was new. */
static bool errlog_report(struct daemon_errlog *l, const char *key, const char *msg,
                          const char *suffix)
{
    /* keys are compared as far as one is kept: a longer key is kept cut at the cap */
    size_t n = strnlen(key, sizeof(l->last) - 1);
    bool fresh = strncmp(l->last, key, sizeof(l->last) - 1) != 0;

    log_line('E', fresh ? 0 : 1, "%s%s", msg, suffix);
    memcpy(l->last, key, n);
    l->last[n] = '\0';
    return fresh;
}

static bool errlog_clear(struct daemon_errlog *l)
{
    bool had = l->last[0] != '\0';

    l->last[0] = '\0';
    return had;
}

#define DAEMON_MIG_PROFILES 8

struct daemon {
    const struct labeler_config *cfg;
    struct kube_client *client;
    struct labeler_labels written; /* last content written to the outputs */
    bool have_written;
    bool detect_failing;
    bool simulated_logged;
    struct daemon_errlog detect_log, output_log, sync_log;
    struct labeler_backoff backoff;
    long interval_ms;
    /* the device plugins, once NVML showed GPUs: nvidia.com/gpu, and with --mig-strategy
     * mixed one per MIG profile */
    struct dp_plugin *plugins[1 + DAEMON_MIG_PROFILES];
    size_t nplugins;
    bool plugins_started;
    struct daemon_errlog plugin_log;
    struct dp_config dp; /* cfg->dp with our log and event callbacks */
    char profiles[DAEMON_MIG_PROFILES][32];
    bool lost[GPU_MAX_DEVICES];        /* GPUs the last detection could not read */
    int mode;                          /* the mode in force: LABELER_MODE_DEVICE_PLUGIN or _DRA */
    struct labeler_dra *dra;           /* DRA mode: monitor, kubelet plugin, slices */
    struct labeler_healthev *healthev; /* device-plugin mode without the plugin: Events */
    char resources[DAEMON_MIG_PROFILES][64];

    /* what /healthz, /readyz and /metrics report, under mu (the HTTP thread reads it; the
     * plugins array changes under it too) */
    pthread_mutex_t mu;
    struct httpd *httpd;
    bool cycled, nvml_up;
    size_t gpus;
    uint64_t label_writes, api_errors, detect_errors;
    char nvml_err[256];
};

/* /healthz fails while NVML is down or a started device plugin is not registered; /readyz
 * holds once a detection cycle is over; /metrics is Prometheus text. */
static int daemon_on_http(void *ud, const struct httpd_req *req, struct buf *body,
                          const char **ctype)
{
    const char *path = req->path;
    struct daemon *d = ud;
    struct dp_status st, sum;
    struct labeler_dra_status dra;
    size_t i, registered = 0;
    int code = 200;

    memset(&sum, 0, sizeof(sum));
    pthread_mutex_lock(&d->mu);
    for (i = 0; i < d->nplugins; i++) {
        dp_plugin_status(d->plugins[i], &st);
        registered += st.registered;
        sum.gpus += st.gpus;
        sum.healthy += st.healthy;
        sum.allocations += st.allocations;
        sum.registrations += st.registrations;
    }
    labeler_dra_status(d->dra, &dra);
    if (!strcmp(path, "/healthz") || !strcmp(path, "/livez")) {
        if (!d->nvml_up && d->cycled)
            code = 503, buf_printf(body, "NVML is down: %s\n", d->nvml_err);
        else if (registered < d->nplugins)
            code = 503, buf_printf(body, "the device plugin is not registered with the kubelet\n");
        else if (d->dra && !dra.registered)
            code = 503, buf_printf(body, "the DRA plugin is not registered with the kubelet\n");
        else
            buf_puts(body, "ok\n");
    } else if (!strcmp(path, "/readyz")) {
        if (d->cycled)
            buf_puts(body, "ok\n");
        else
            code = 503, buf_puts(body, "the first detection cycle is not over\n");
    } else if (!strcmp(path, "/metrics")) {
        *ctype = "text/plain; version=0.0.4; charset=utf-8";
        buf_printf(
            body,
            "# HELP gpulabel_gpus GPUs NVML showed at the last detection.\n"
            "# TYPE gpulabel_gpus gauge\ngpulabel_gpus %zu\n"
            "# HELP gpulabel_gpus_healthy Devices the device plugin reports Healthy.\n"
            "# TYPE gpulabel_gpus_healthy gauge\ngpulabel_gpus_healthy %zu\n"
            "# HELP gpulabel_nvml_up Whether the last detection could use NVML.\n"
            "# TYPE gpulabel_nvml_up gauge\ngpulabel_nvml_up %d\n"
            "# HELP gpulabel_label_writes_total Node patches sent.\n"
            "# TYPE gpulabel_label_writes_total counter\ngpulabel_label_writes_total %llu\n"
            "# HELP gpulabel_api_errors_total Node syncs that failed.\n"
            "# TYPE gpulabel_api_errors_total counter\ngpulabel_api_errors_total %llu\n"
            "# HELP gpulabel_detect_errors_total Detections that failed.\n"
            "# TYPE gpulabel_detect_errors_total counter\ngpulabel_detect_errors_total %llu\n"
            "# HELP gpulabel_device_plugin_registered Plugins the kubelet accepted.\n"
            "# TYPE gpulabel_device_plugin_registered gauge\n"
            "gpulabel_device_plugin_registered %zu\n"
            "# HELP gpulabel_device_plugin_registrations_total Successful registrations.\n"
            "# TYPE gpulabel_device_plugin_registrations_total counter\n"
            "gpulabel_device_plugin_registrations_total %llu\n"
            "# HELP gpulabel_allocations_total Allocate calls answered with devices.\n"
            "# TYPE gpulabel_allocations_total counter\ngpulabel_allocations_total %llu\n"
            "# HELP gpulabel_dra_slice_writes_total ResourceSlices created, updated or deleted.\n"
            "# TYPE gpulabel_dra_slice_writes_total counter\n"
            "gpulabel_dra_slice_writes_total %llu\n"
            "# HELP gpulabel_dra_prepares_total Claims the DRA plugin prepared.\n"
            "# TYPE gpulabel_dra_prepares_total counter\ngpulabel_dra_prepares_total %llu\n",
            d->gpus,
            d->dra        ? dra.healthy
            : d->nplugins ? sum.healthy
                          : d->gpus,
            d->nvml_up ? 1 : 0, (unsigned long long)d->label_writes,
            (unsigned long long)d->api_errors, (unsigned long long)d->detect_errors, registered,
            (unsigned long long)sum.registrations, (unsigned long long)sum.allocations,
            (unsigned long long)dra.slice_writes, (unsigned long long)dra.prepares);
    } else {
        code = 404;
        buf_puts(body, "not found\n");
    }
    pthread_mutex_unlock(&d->mu);
    return code;
}

/* ---- the device plugin ------------------------------------------------------------------ */

static void plugin_log_line(void *ctx, char sev, int level, const char *line)
{
    (void)ctx;
    log_line(sev, level, "%s", line);
}

/* A GPU the device plugin reports Unhealthy: a Warning Event on the Node. Runs on the
 * plugin's health thread. */
static void plugin_unhealthy(void *ctx, const char *uuid, unsigned index, const char *why)
{
    char msg[512];

    snprintf(msg, sizeof(msg),
             "GPU %u (%s) is unhealthy: %s; the device plugin reports it Unhealthy to the "
             "kubelet",
             index, uuid, why);
    labeler_node_event(ctx, "Warning", "GPUUnhealthy", msg);
}

/* A GPU the device plugin reports Healthy again: a Normal Event on the Node. */
static void plugin_healthy(void *ctx, const char *uuid, unsigned index, const char *why)
{
    char msg[512];

    snprintf(msg, sizeof(msg),
             "GPU %u (%s) is healthy again: %s; the device plugin reports it Healthy to the "
             "kubelet",
             index, uuid, why);
    labeler_node_event(ctx, "Normal", "GPUHealthy", msg);
}

/* Starts one plugin; -ENODEV (nothing of its kind to advertise) is no failure. */
static int daemon_plugin_one(struct daemon *d, const struct dp_config *dp, struct err *err)
{
    struct dp_plugin *p = NULL;
    int rc = dp_plugin_start(dp, &p, err);

    if (rc == -ENODEV && dp->mig_strategy == DP_MIG_MIXED) {
        log_line('I', 1, "device plugin: nothing to advertise as %s",
                 dp->resource_name ? dp->resource_name : DP_DEFAULT_RESOURCE);
        return 0;
    }
    if (rc)
        return rc;
    snprintf(daemon_plugin_sock[d->nplugins], sizeof(daemon_plugin_sock[0]), "%s",
             dp_plugin_socket(p));
    pthread_mutex_lock(&d->mu);
    d->plugins[d->nplugins++] = p;
    pthread_mutex_unlock(&d->mu);
    return 0;
}

static void daemon_plugins_stop(struct daemon *d)
{
    pthread_mutex_lock(&d->mu);
    while (d->nplugins) {
        dp_plugin_stop(d->plugins[--d->nplugins]);
        daemon_plugin_sock[d->nplugins][0] = '\0';
    }
    pthread_mutex_unlock(&d->mu);
}

/* Starts the device plugins once detection has seen GPUs; a failure is logged once per kind
 * and tried again next cycle. */
/* Whether this process posts the GPU health Events of a device plugin that runs elsewhere (the
 * labels container beside a device-plugin container without a token): labeler/healthev.c. */
static bool daemon_health_watch(const struct daemon *d)
{
    return !d->cfg->device_plugin && d->mode == LABELER_MODE_DEVICE_PLUGIN && d->client;
}

static void daemon_plugin(struct daemon *d, const struct labeler_labels *desired)
{
    struct dp_config dp = d->dp;
    struct err err;
    size_t nprof = 0, i;
    int rc;

    if (daemon_health_watch(d) && !d->healthev && desired->n) {
        /* the device plugin runs in a container without a token: its Events are posted here */
        char msg[ERR_MSG_MAX + 64];

        err_clear(&err);
        if (labeler_healthev_start(d->cfg, &d->healthev, &err)) {
            snprintf(msg, sizeof(msg), "cannot watch GPU health for Events: %s", err.msg);
            errlog_report(&d->plugin_log, msg, msg, "; trying again next cycle");
        } else {
            errlog_clear(&d->plugin_log);
            log_line('I', 1,
                     "watching GPU health for the Node's Events (the device plugin "
                     "runs without an API token)");
        }
    }
    if (!d->cfg->device_plugin || d->mode == LABELER_MODE_DRA || d->plugins_started || !desired->n)
        return;
    err_clear(&err);
    dp.mig_strategy = d->cfg->mig_strategy;
    rc = daemon_plugin_one(d, &dp, &err);
    if (!rc && dp.mig_strategy == DP_MIG_MIXED)
        rc = dp_mig_profiles(d->cfg->nvml_lib, d->profiles, DAEMON_MIG_PROFILES, &nprof, &err);
    for (i = 0; !rc && i < nprof; i++) {
        snprintf(d->resources[i], sizeof(d->resources[i]), "nvidia.com/mig-%s", d->profiles[i]);
        dp.mig_profile = d->profiles[i];
        dp.resource_name = d->resources[i];
        rc = daemon_plugin_one(d, &dp, &err);
    }
    if (rc) {
        char msg[ERR_MSG_MAX + 64];

        snprintf(msg, sizeof(msg), "device plugin: cannot start: %s", err.msg);
        errlog_report(&d->plugin_log, msg, msg, "; trying again next cycle");
        daemon_plugins_stop(d);
        return;
    }
    d->plugins_started = true;
    errlog_clear(&d->plugin_log);
}

/* Writes the outputs when their content changed since the last successful write. */
static void daemon_outputs(struct daemon *d, const struct labeler_labels *l)
{
    struct err err;

    if (!d->cfg->output && !d->cfg->feature_file)
        return;
    if (d->have_written && labels_equal(&d->written, l))
        return;
    err_clear(&err);
    if (labeler_write_outputs(d->cfg, l, &err)) {
        char line[ERR_MSG_MAX + 64];

        err_format(&err, line, sizeof(line));
        errlog_report(&d->output_log, line, line, "");
        return;
    }
    fflush(stdout);
    if (errlog_clear(&d->output_log))
        log_line('I', 0, "outputs written again");
    if (!labels_copy(&d->written, l))
        d->have_written = true;
}

/* Says once when a GPU cannot be read any more and once when it answers again; without a
 * device plugin (whose health thread posts its own) or a health watch (healthev.c, which
 * does) a Warning Event goes to the Node too. */
static void daemon_lost(struct daemon *d, const struct gpu_inventory *inv)
{
    size_t i;

    for (i = 0; i < inv->ndevices && i < GPU_MAX_DEVICES; i++) {
        const struct gpu_device *g = &inv->devices[i];
        char msg[256];

        if (g->lost == d->lost[i])
            continue;
        d->lost[i] = g->lost;
        if (!g->lost) {
            log_line('I', 0, "GPU %zu answers again", i);
            continue;
        }
        snprintf(msg, sizeof(msg), "GPU %zu cannot be read: %s; the other GPUs are labelled%s", i,
                 g->error,
                 d->mode == LABELER_MODE_DRA ? " and published"
                 : d->cfg->device_plugin     ? " and advertised"
                                             : "");
        log_line('W', 0, "%s", msg);
        if (!d->plugins_started && !d->dra && !daemon_health_watch(d))
            labeler_node_event(d->cfg, "Warning", "GPUUnhealthy", msg);
    }
}

/* One cycle; returns how long to wait before the next one. */
static long daemon_cycle(struct daemon *d)
{
    const struct labeler_config *cfg = d->cfg;
    struct labeler_labels desired;
    struct gpu_inventory inv;
    struct sync_result res;
    struct err err;
    char ival[32], cause[ERR_MSG_MAX], msg[ERR_MSG_MAX + 32], tail[128];
    long wait = d->interval_ms;
    int rc;

    memset(&desired, 0, sizeof(desired));
    err_clear(&err);
    daemon_abandonable = 1;
    rc = labeler_detect_inventory(cfg, &desired, &inv, &err);
    daemon_abandonable = 0;
    if (d->dra && !daemon_stop)
        labeler_dra_cycle(d->dra, &inv, rc);
    if (rc) {
        snprintf(msg, sizeof(msg), "cannot detect GPUs: %s",
                 err_format(&err, cause, sizeof(cause)));
        snprintf(tail, sizeof(tail), "; keeping the labels already published, retrying every %s",
                 fmt_ms(d->interval_ms, ival, sizeof(ival)));
        errlog_report(&d->detect_log, msg, msg, tail);
        d->detect_failing = true;
        pthread_mutex_lock(&d->mu);
        d->cycled = true;
        d->nvml_up = false;
        d->detect_errors++;
        err_cut_mark(d->nvml_err, sizeof(d->nvml_err),
                     snprintf(d->nvml_err, sizeof(d->nvml_err), "%s", err.msg));
        pthread_mutex_unlock(&d->mu);
        /* sysfs still shows the GPUs: nvidia.com/gpu.present goes on, nothing comes off */
        if (!desired.partial || !desired.n || !d->client || daemon_stop)
            goto out;
        goto sync;
    }
    pthread_mutex_lock(&d->mu);
    d->cycled = true;
    d->nvml_up = true;
    d->gpus = desired.ngpus;
    pthread_mutex_unlock(&d->mu);
    if (desired.nvml_simulated && !d->simulated_logged) {
        log_line('W', 0, "using a simulated NVML (test double), not a real GPU driver");
        d->simulated_logged = true;
    }
    if (d->detect_failing) {
        errlog_clear(&d->detect_log);
        log_line('I', 0, "GPU detection works again: %zu labels", desired.n);
        d->detect_failing = false;
    }
    if (daemon_stop)
        goto out;
    daemon_plugin(d, &desired);
    daemon_lost(d, &inv);
    daemon_outputs(d, &desired);
    if (!d->client || daemon_stop)
        goto out;

sync:
    daemon_abandonable = 1;
    rc = sync_node(d->client, cfg->node_name, cfg->schemas, &desired, &res, &err);
    daemon_abandonable = 0;
    pthread_mutex_lock(&d->mu);
    if (rc)
        d->api_errors++;
    else if (res.wrote)
        d->label_writes++;
    pthread_mutex_unlock(&d->mu);
    if (!rc) {
        labeler_backoff_reset(&d->backoff);
        if (errlog_clear(&d->sync_log))
            log_line('I', 0, "node \"%s\" in sync again", cfg->node_name);
        if (res.wrote)
            log_line('I', 0, "labelled node \"%s\": %s", cfg->node_name, res.summary);
        else
            log_line('I', 1, "node \"%s\" already carries its %zu labels; nothing written",
                     cfg->node_name, desired.n);
        goto out;
    }
    if (kube_err_transient(&err)) {
        wait = labeler_backoff_next(&d->backoff);
        if (err.retry_after > 0 && (long)err.retry_after * 1000 > wait)
            wait = (long)err.retry_after * 1000;
        snprintf(tail, sizeof(tail), "; retrying in %s", fmt_ms(wait, ival, sizeof(ival)));
    } else {
        labeler_backoff_reset(&d->backoff);
        snprintf(tail, sizeof(tail), "; retrying every %s", fmt_ms(wait, ival, sizeof(ival)));
    }
    /* "cannot get node" / "cannot patch node" tells the verb apart */
    snprintf(cause, sizeof(cause), "%d/%d/%s/%.17s", err.code, err.http_status, err.reason,
             err.msg);
    errlog_report(&d->sync_log, cause, err.msg, tail);
out:
    labeler_labels_release(&desired);
    gpu_inventory_release(&inv);
    return wait;
}

/* Picks the mode (--mode, or with auto the Node's LABELER_MODE_LABEL, as the GPU Operator
 * picks the DRA driver or the device plugin for a node) and starts the DRA side; in
 * device-plugin mode it removes this node's slices, so that no GPU is offered both ways.
 * Returns 0, or the exit status. */
static int daemon_mode(struct daemon *d)
{
    const struct labeler_config *cfg = d->cfg;
    const char *why = "--mode";
    struct err err;
    int rc;

    err_clear(&err);
    d->mode = cfg->mode;
    if (d->mode == LABELER_MODE_AUTO) {
        char value[64] = "";

        d->mode = LABELER_MODE_DEVICE_PLUGIN;
        why = "--mode auto: no API server";
        if (d->client) {
            rc = labeler_node_label(d->client, cfg->node_name, LABELER_MODE_LABEL, value,
                                    sizeof(value), &err);
            if (rc)
                log_line('W', 0, "--mode auto: %s; using the device plugin", err.msg);
            why = value[0] ? "--mode auto: the node's label " LABELER_MODE_LABEL
                           : "--mode auto: no label " LABELER_MODE_LABEL " on the node";
            if (!strcmp(value, "true"))
                d->mode = LABELER_MODE_DRA;
        }
    }
    if (d->mode == LABELER_MODE_DRA && !d->client) {
        log_line('E', 0,
                 "--mode dra needs the API server (ResourceSlices, ResourceClaims): "
                 "drop --no-sync");
        return 2;
    }
    log_line('I', 0, "offering the GPUs %s (%s)",
             d->mode == LABELER_MODE_DRA
                 ? "as DRA devices: ResourceSlices and the kubelet's DRA plugin"
             : cfg->device_plugin ? "through the device plugin"
                                  : "to no one: --device-plugin=false",
             why);
    if (d->mode == LABELER_MODE_DRA) {
        rc = labeler_dra_start(cfg, d->client, daemon_kick, &d->dra, &err);
        if (rc) {
            log_line('E', 0, "%s", err.msg);
            return 1;
        }
        return 0;
    }
    if (d->client) {
        rc = labeler_dra_clear(cfg, d->client, &err);
        if (rc > 0)
            log_line('I', 0,
                     "removed %d ResourceSlices of this node: its GPUs go through the "
                     "device plugin now",
                     rc);
        else if (rc < 0)
            log_line('I', 1, "cannot look for ResourceSlices of this node: %s", err.msg);
    }
    return 0;
}

int labeler_daemon_run(const struct labeler_config *cfg)
{
    struct daemon d;
    struct err err;
    char ival[32], schemas[16], msg[ERR_MSG_MAX + 64];
    int rc;

    memset(&d, 0, sizeof(d));
    d.cfg = cfg;
    d.dp = cfg->dp;
    d.dp.log = plugin_log_line;
    d.dp.on_unhealthy = plugin_unhealthy;
    d.dp.on_healthy = plugin_healthy;
    d.dp.ctx = (void *)cfg;
    pthread_mutex_init(&d.mu, NULL);
    d.interval_ms = cfg->sleep_interval_ms > 0 ? cfg->sleep_interval_ms : 60000;
    log_setup("gpulabel", cfg->verbosity);
    log_set_format(cfg->log_json ? LOG_FMT_JSON : LOG_FMT_TEXT);
    labeler_backoff_init(&d.backoff,
                         d.interval_ms < BACKOFF_BASE_MS ? d.interval_ms : BACKOFF_BASE_MS,
                         BACKOFF_CAP_MS, (unsigned long)getpid() ^ (unsigned long)time(NULL));
    err_clear(&err);
    /* first, so that a SIGTERM arriving while the client is set up still ends us cleanly */
    rc = daemon_signals_install();
    if (rc) {
        log_line('E', 0, "cannot install signal handlers: %s", strerror(-rc));
        return 1;
    }
    if (!cfg->no_sync) {
        rc = need_node_name(cfg, &err);
        if (rc) {
            log_line('E', 0, "%s", err.msg);
            return 2;
        }
        rc = labeler_client_open(cfg, &d.client, &err);
        if (rc) {
            log_line('E', 0, "cannot set up the API client: %s",
                     err_format(&err, msg, sizeof(msg)));
            return 1;
        }
    }
    if (cfg->metrics_addr) {
        rc = httpd_start(cfg->metrics_addr, daemon_on_http, &d, &d.httpd, &err);
        if (rc) {
            log_line('E', 0, "cannot serve --metrics-addr %s: %s", cfg->metrics_addr, err.msg);
            kube_client_free(d.client);
            return 1;
        }
        log_line('I', 0, "serving /healthz, /readyz and /metrics on port %d", httpd_port(d.httpd));
    }
    fmt_ms(d.interval_ms, ival, sizeof(ival));
    fmt_schemas(cfg->schemas, schemas, sizeof(schemas));
    if (d.client)
        log_line('I', 0, "keeping node \"%s\" labelled through %s (schemas %s, every %s)",
                 cfg->node_name, kube_client_server(d.client), schemas, ival);
    else
        log_line('I', 0, "detecting GPUs every %s (schemas %s, no API sync)", ival, schemas);

    labeler_node_event_client(d.client);
    rc = daemon_mode(&d);
    if (rc) {
        httpd_stop(d.httpd);
        labeler_node_event_client(NULL);
        kube_client_free(d.client);
        return rc;
    }
    while (!daemon_stop) {
        long wait = daemon_cycle(&d), end = mono_ms() + wait;

        log_line('I', 2, "next cycle in %s", fmt_ms(wait, ival, sizeof(ival)));
        for (;;) {
            daemon_wait_until(end);
            if (!daemon_kicked || daemon_stop)
                break;
            daemon_kicked = 0; /* a GPU's health changed: its taints go out now */
            labeler_dra_publish(d.dra);
        }
    }
    log_line('I', 0, "stopping on %s; the labels stay on the node",
             daemon_stop == SIGINT ? "SIGINT" : "SIGTERM");
    httpd_stop(d.httpd);
    daemon_plugins_stop(&d);
    labeler_dra_stop(d.dra);
    labeler_healthev_stop(d.healthev);
    labeler_labels_release(&d.written);
    labeler_node_event_client(NULL);
    kube_client_free(d.client);
    return 0;
}
