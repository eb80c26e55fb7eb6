/* serve.c - gpusched serve: its flags, and the wiring of the secondary scheduler's parts.
 *
 * The parts: the informers (kube/informer.c) with their handlers (watch.c), the scheduling
 * loop (loop.c), the binder and the answers to its writes (binder.c, writes.c), leader
 * election (leader.c), the probe and metrics server (base/httpd.c, probes.c) and the signal
 * thread (signals.c), sharing one struct serve (state-int.h). Design notes: docs/serve.md. */
#include "serve/serve.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/flag.h"
#include "base/goparse.h"
#include "base/memlimit.h"
#include "base/tls.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/quantity.h"
#include "sched/sched.h"
#include "serve/auth-int.h"
#include "serve/log-int.h"
#include "serve/loop-int.h"
#include "serve/objects-int.h"
#include "serve/probes-int.h"
#include "serve/signals-int.h"
#include "serve/state-int.h"
#include "serve/watch-int.h"
#include "serve/writes-int.h"
#include "serve/dra-int.h"

#define SERVE_VERSION "0.1"
#define SERVE_EVENT_CACHE_MAX 8192 /* Events remembered for series (recorder.h) */

/* ---------------------------------------------------------------------------------------
 * Flags
 * ------------------------------------------------------------------------------------- */

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;

    fputs("gpusched serve: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (see gpusched serve --help)\n", stderr);
    return 2;
}

static const char serve_intro[] =
    "Usage: gpusched serve [flags]\n"
    "\n"
    "Run as a secondary Kubernetes scheduler: schedule the pending pods whose\n"
    "spec.schedulerName is --scheduler-name, with kube-scheduler's filters and scores, and\n"
    "bind them through the API.\n"
    "\n";

static const char serve_outro[] =
    "\n"
    "Durations: 1h, 5m, 15s, 500ms. SIGTERM stops taking pods, finishes the binds in flight,\n"
    "releases the lease and exits 0.\n";

/* Flag values. Each setter words why a value is refused; the caller puts the flag's name in
 * front. */

static int set_name(void *dest, const char *v, struct err *err)
{
    if (!*v)
        return err_set(err, -EINVAL, "must not be empty");
    *(const char **)dest = v;
    return 0;
}

static int set_profile(void *dest, const char *v, struct err *err)
{
    if (!sched_profile_find(v))
        return err_set(err, -EINVAL, "unknown profile '%s' (want default or gpu)", v);
    *(const char **)dest = v;
    return 0;
}

static int set_kube_version(void *dest, const char *v, struct err *err)
{
    if (!sched_kube_version_find(v))
        return err_set(err, -EINVAL, "'%s' is not one of " SCHED_KUBE_VERSIONS, v);
    *(const struct sched_kube_version **)dest = sched_kube_version_find(v);
    return 0;
}

static int set_qps(void *dest, const char *v, struct err *err)
{
    char *end;
    double q = strtod(v, &end);

    if (end == v || *end || !(q >= 0))
        return err_set(err, -EINVAL, "'%s' is not a non-negative number", v);
    *(double *)dest = q;
    return 0;
}

/* set_int_in reads a pflag integer (strconv.ParseInt(v, 0, 64)) within [lo, hi] into *dest;
 * what says what it must be when it is not. */
static int set_int_in(int *dest, const char *v, long lo, long hi, const char *what, struct err *err)
{
    int64_t n;

    if (go_parse_int(v, strlen(v), 0, 64, &n, NULL) || n < lo || n > hi)
        return err_set(err, -EINVAL, "'%s' is not %s", v, what);
    *dest = (int)n;
    return 0;
}

static int set_burst(void *dest, const char *v, struct err *err)
{
    return set_int_in(dest, v, 0, 1000000, "a non-negative integer", err);
}

static int set_workers(void *dest, const char *v, struct err *err)
{
    return set_int_in(dest, v, 1, 64, "an integer in 1..64", err);
}

static int set_percentage(void *dest, const char *v, struct err *err)
{
    return set_int_in(dest, v, 0, 100, "an integer in 0..100", err);
}

static int set_logging_format(void *dest, const char *v, struct err *err)
{
    enum log_fmt f;

    if (log_fmt_parse(v, &f))
        return err_set(err, -EINVAL, "unsupported log format '%s' (want text or json)", v);
    *(bool *)dest = f == LOG_FMT_JSON;
    return 0;
}

static int set_level(void *dest, const char *v, struct err *err)
{
    return set_int_in(dest, v, 0, 10, "a level 0..10", err);
}

/* set_duration reads a Go duration (time.ParseDuration) into positive whole milliseconds. */
static int set_duration(void *dest, const char *v, struct err *err)
{
    int64_t ns;

    if (go_parse_duration(v, &ns, NULL) || ns / 1000000 <= 0)
        return err_set(err, -EINVAL, "'%s' is not a positive duration such as 15s or 500ms", v);
    *(int64_t *)dest = ns / 1000000;
    return 0;
}

static int set_port(void *dest, const char *v, struct err *err)
{
    return set_int_in(dest, v, 0, 65535, "a port number 0..65535", err);
}

/* set_memory_limit reads a quantity of bytes ("64Mi", "67108864"), as the Downward API's
 * resourceFieldRef limits.memory gives it */
static int set_memory_limit(void *dest, const char *v, struct err *err)
{
    int64_t n;

    if (kube_quantity_parse(v, &n, NULL, NULL) || n <= 0)
        return err_set(err, -EINVAL, "'%s' is not a positive quantity of bytes such as 256Mi", v);
    *(uint64_t *)dest = (uint64_t)n;
    return 0;
}

/* on_pod: the pod informer's handler (watch.c), after noting the uid and resourceVersion of
 * an assigned pod, which a Preempted event names when it is a victim. */
static void on_pod(void *ud, enum kube_informer_op op, const char *key, json_t *obj)
{
    struct serve *s = ud;

    if (op == KUBE_INFORMER_DELETE)
        serve_podref_delete(s, key);
    else if (op != KUBE_INFORMER_SYNCED && obj && *serve_pod_node_name(obj))
        serve_podref_set(s, key, serve_jstr(obj, "metadata", "uid"),
                         serve_jstr(obj, "metadata", "resourceVersion"));
    serve_on_pod(ud, op, key, obj);
}

/* serve_parse_flags returns -1 to go on, else the exit status. */
static int serve_parse_flags(int argc, char **argv, struct serve_opts *o)
{
    const struct flag flags[] = {
        {"scheduler-name", 0, FLAG_FUNC, &o->scheduler_name, set_name, NULL, "NAME",
         "pods to schedule and event reportingController (default gpusched)"},
        {"profile", 0, FLAG_FUNC, &o->profile, set_profile, NULL, "default|gpu",
         "scoring profile (default \"default\")"},
        {"config", 0, FLAG_STRING, &o->config, NULL, NULL, "FILE",
         "a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1):\n"
         "its profiles' schedulerNames, plugins, weights, scoring\n"
         "strategy, percentageOfNodesToScore and leaderElection\n"
         "(instead of --profile and --scheduler-name; docs/serve.md)"},
        {"kubeconfig", 0, FLAG_STRING, &o->kubeconfig, NULL, NULL, "FILE",
         "kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)"},
        {"context", 0, FLAG_STRING, &o->context, NULL, NULL, "NAME",
         "kubeconfig context (default: current-context)"},
        {"kube-api-qps", 0, FLAG_FUNC, &o->qps, set_qps, NULL, "N",
         "client rate limit, requests/s; 0 = unlimited (default 50)"},
        {"kube-api-burst", 0, FLAG_FUNC, &o->burst, set_burst, NULL, "N",
         "client burst (default 100)"},
        {"bind-workers", 0, FLAG_FUNC, &o->bind_workers, set_workers, NULL, "N",
         "concurrent API writes (default 16)"},
        {"leader-elect", 0, FLAG_BOOL, &o->leader_elect, NULL, NULL, NULL,
         "elect a leader with a Lease before scheduling (default false)"},
        {"leader-elect-lease-duration", 0, FLAG_FUNC, &o->lease_duration_ms, set_duration, NULL,
         "D", "how long a lease holds without renewal (default 15s)"},
        {"leader-elect-renew-deadline", 0, FLAG_FUNC, &o->renew_deadline_ms, set_duration, NULL,
         "D", "how long the leader tries to renew before it gives up\n(default 10s)"},
        {"leader-elect-retry-period", 0, FLAG_FUNC, &o->retry_period_ms, set_duration, NULL, "D",
         "time between two tries to take or renew the lease\n(default 2s)"},
        {"leader-elect-resource-name", 0, FLAG_STRING, &o->lease_name, NULL, NULL, "NAME",
         "Lease name (default gpusched)"},
        {"leader-elect-resource-namespace", 0, FLAG_STRING, &o->lease_namespace, NULL, NULL, "NS",
         "Lease namespace (default kube-system)"},
        {"secure-port", 0, FLAG_FUNC, &o->secure_port, set_port, NULL, "PORT",
         "HTTPS /healthz, /readyz, /livez and /metrics, with\n"
         "authentication and authorization delegated to the API\n"
         "server as kube-scheduler's; 0 disables (default 10259)"},
        {"bind-address", 0, FLAG_STRING, &o->bind_address, NULL, NULL, "IP",
         "the secure port's address (default 0.0.0.0)"},
        {"tls-cert-file", 0, FLAG_STRING, &o->tls_cert_file, NULL, NULL, "FILE",
         "the secure port's certificate (PEM, with its chain);\n"
         "without it and --tls-private-key-file, a self-signed one\n"
         "is made at start, as kube-scheduler's"},
        {"tls-private-key-file", 0, FLAG_STRING, &o->tls_key_file, NULL, NULL, "FILE",
         "the key of --tls-cert-file"},
        {"authorization-always-allow-paths", 0, FLAG_STRING, &o->always_allow, NULL, NULL, "LIST",
         "paths of the secure port anyone may read (default\n"
         "/healthz,/readyz,/livez); others need a\n"
         "SubjectAccessReview's yes"},
        {"metrics-addr", 0, FLAG_STRING, &o->metrics_addr, NULL, NULL, "HOST:PORT",
         "also serve them over plain HTTP there, with no\n"
         "authentication (default: not at all)"},
        {"pod-max-in-unschedulable-pods-duration", 0, FLAG_FUNC, &o->max_unschedulable_ms,
         set_duration, NULL, "D", "periodic retry of unschedulable pods (default 5m)"},
        {"percentage-of-nodes-to-score", 0, FLAG_FUNC, &o->percentage_of_nodes_to_score,
         set_percentage, NULL, "N",
         "stop filtering once N% of the nodes (at least 100)\n"
         "fit; 0 = kube-scheduler's adaptive share, 100 = every\nnode (default 0)"},
        {"kube-version", 0, FLAG_FUNC, &o->kube_version, set_kube_version, NULL, "VERSION",
         "the kube-scheduler whose texts and rules to follow:\n" SCHED_KUBE_VERSIONS
         " (default " SCHED_KUBE_VERSION_DEFAULT ")"},
        {"v", 'v', FLAG_FUNC, &o->verbosity, set_level, NULL, "N",
         "log verbosity: 0 errors and lifecycle, 2 every pod, 4 debug"},
        {"logging-format", 0, FLAG_FUNC, &o->log_json, set_logging_format, NULL, "text|json",
         "log line format: klog text or component-base's JSON,\n"
         "as kube-scheduler's --logging-format (default \"text\")"},
        {"memory-limit", 0, FLAG_FUNC, &o->memory_limit, set_memory_limit, NULL, "QUANTITY",
         "the memory this process may use (default: its cgroup's\n"
         "limit): one API answer may have a quarter of it, a\n"
         "list's pages all of it (at most 256Mi and 1Gi)"},
        FLAG_END,
    };
    struct flag_fault ff;
    struct buf help = BUF_INIT(0);

    switch (flag_parse(flags, argc, argv, NULL, &ff)) {
    case FLAG_OK:
        return -1;
    case FLAG_HELP:
        if (flag_usage(flags, "show this help", 37, &help))
            return usage_error("out of memory");
        printf("%sFlags:\n%s%s", serve_intro, help.data, serve_outro);
        buf_release(&help);
        return 0;
    case FLAG_UNKNOWN:
        return usage_error("unknown flag %s", ff.name);
    case FLAG_NO_VALUE:
        return usage_error("%s: needs a value", ff.name);
    case FLAG_BAD_VALUE:
        if (ff.flag->type == FLAG_BOOL)
            return usage_error("%s: '%s' is not true or false", ff.name, ff.value);
        return usage_error("%s: %s", ff.name, ff.err.msg);
    case FLAG_EXTRA:
        return usage_error("unexpected argument '%s'", ff.word);
    case FLAG_NOMEM:
        break;
    }
    fprintf(stderr, "gpusched serve: out of memory\n");
    return 1;
}

/* The secure port's handler, on httpd's server thread for a request without a bearer token
 * to an always-allowed path, else on its worker: the delegated checks, then the answers of
 * the plain port. */
static int serve_on_https(void *ud, const struct httpd_req *req, struct buf *body,
                          const char **ctype)
{
    struct serve *s = ud;
    int rc = serve_auth_check(s->auth, req->method, req->path, req->authorization, body, ctype);

    return rc ? rc : serve_on_http(ud, req, body, ctype);
}

static bool serve_https_slow(void *ud, const char *path, const char *authorization)
{
    struct serve *s = ud;

    return authorization || !serve_auth_always_allowed(s->auth, path);
}

/* serve_secure_start: the certificate (or a self-signed one), the delegated checks and the
 * HTTPS server on --bind-address:--secure-port */
static int serve_secure_start(struct serve *s, const struct serve_opts *o, struct err *err)
{
    struct httpd_transport tr;
    struct httpd_opts ho;
    char addr[300], host[256] = "";
    const char *hosts[3] = {NULL, NULL, NULL};
    size_t n = 0;
    int rc;

    if (strcmp(o->bind_address, "0.0.0.0") && strcmp(o->bind_address, "::"))
        hosts[n++] = o->bind_address;
    if (!gethostname(host, sizeof(host) - 1) && *host)
        hosts[n++] = host;
    rc = tls_server_new(o->tls_cert_file, o->tls_key_file, hosts, &s->tls, err);
    if (!rc)
        rc = serve_auth_new(s->client, o->always_allow, &s->auth, err);
    if (rc)
        return rc;
    tls_server_transport(s->tls, &tr);
    snprintf(addr, sizeof(addr), strchr(o->bind_address, ':') ? "[%s]:%d" : "%s:%d",
             o->bind_address, o->secure_port);
    memset(&ho, 0, sizeof(ho));
    ho.addr = addr;
    ho.fn = serve_on_https;
    ho.ud = s;
    ho.transport = &tr;
    ho.slow = serve_https_slow;
    return httpd_start_opts(&ho, &s->https, err);
}

int serve_main(int argc, char **argv)
{
    struct serve_opts o = {
        .scheduler_name = NULL, /* "gpusched" */
        .profile = NULL,        /* "default" */
        .qps = 50,
        .burst = 100,
        .lease_duration_ms = 15000,
        .renew_deadline_ms = 10000,
        .retry_period_ms = 2000,
        .lease_name = "gpusched",
        .lease_namespace = "kube-system",
        .metrics_addr = NULL,
        .secure_port = 10259,
        .bind_address = "0.0.0.0",
        .always_allow = "/healthz,/readyz,/livez",
        .bind_workers = 16,
        .max_unschedulable_ms = 300000,
        .percentage_of_nodes_to_score = 0, /* kube-scheduler's default: adaptive */
    };
    struct kube_client_opts co;
    struct serve_queue_opts qo;
    struct kube_informer_opts io;
    struct err err;
    struct serve *s = NULL;
    char msg[1400], host[256] = "unknown", identity[320];
    int rc, status = 1;

    rc = serve_parse_flags(argc, argv, &o);
    if (rc >= 0)
        return rc;
    serve_log_verbosity(o.verbosity);
    log_set_format(o.log_json ? LOG_FMT_JSON : LOG_FMT_TEXT);
    err_clear(&err);
    /* One malloc arena: with a thread per informer, the binder and the others, glibc would
     * otherwise keep a heap per thread and the resident size grows by half for nothing. */
    mallopt(M_ARENA_MAX, 1);

    s = calloc(1, sizeof(*s));
    if (!s) {
        fprintf(stderr, "gpusched serve: out of memory\n");
        return 1;
    }
    if (o.config && (o.profile || o.scheduler_name)) {
        fprintf(stderr,
                "gpusched serve: --config cannot be used with %s (set the profiles' "
                "schedulerName and plugins in the file)\n",
                o.profile ? "--profile" : "--scheduler-name");
        free(s);
        return 2;
    }
    if (!o.profile)
        o.profile = "default";
    if (!o.scheduler_name)
        o.scheduler_name = "gpusched";
    s->profile_buf = *sched_profile_find(o.profile);
    s->profile_buf.percentage_of_nodes_to_score = o.percentage_of_nodes_to_score;
    sched_profile_set_version(&s->profile_buf,
                              o.kube_version ? o.kube_version : sched_kube_version_find(NULL));
    s->profile = &s->profile_buf;
    if (o.config) {
        if (sched_config_load(o.config, &s->profile_buf, &s->cfg, &err)) {
            fprintf(stderr, "gpusched serve: %s\n", err_format(&err, msg, sizeof(msg)));
            free(s);
            return 2;
        }
        /* the first profile names the events and the lease holder */
        s->profile = &s->cfg.profiles[0];
        o.scheduler_name = s->cfg.profiles[0].name;
        if (s->cfg.has_leader_elect)
            o.leader_elect = s->cfg.leader_elect;
        if (s->cfg.has_lease_duration)
            o.lease_duration_ms = s->cfg.lease_duration_ms;
        if (s->cfg.has_renew_deadline)
            o.renew_deadline_ms = s->cfg.renew_deadline_ms;
        if (s->cfg.has_retry_period)
            o.retry_period_ms = s->cfg.retry_period_ms;
        if (s->cfg.lease_name)
            o.lease_name = s->cfg.lease_name;
        if (s->cfg.lease_namespace)
            o.lease_namespace = s->cfg.lease_namespace;
        if (s->cfg.has_initial_backoff)
            o.initial_backoff_ms = s->cfg.initial_backoff_ms;
        if (s->cfg.has_max_backoff)
            o.max_backoff_ms = s->cfg.max_backoff_ms;
    }
    s->o = o;
    gethostname(host, sizeof(host) - 1);
    snprintf(s->instance, sizeof(s->instance), "%s-%s", o.scheduler_name, host);
    pthread_mutex_init(&s->mu, NULL);
    if (mono_cond_init(&s->cv)) {
        fprintf(stderr, "gpusched serve: cannot create a condition variable\n");
        pthread_mutex_destroy(&s->mu);
        sched_config_release(&s->cfg);
        free(s);
        return 1;
    }
    {
        const char *names[64];
        size_t i, n = 0;

        for (i = 0; i < s->cfg.nprofiles && n < 64; i++)
            names[n++] = s->cfg.profiles[i].name;
        if (!n)
            names[n++] = o.scheduler_name;
        pthread_mutex_init(&s->refs_mu, NULL);
        s->recorder =
            serve_recorder_new(SERVE_EVENT_CACHE_MAX, (unsigned)time(NULL) ^ (unsigned)getpid());
        if (serve_metrics_init(&s->metrics, names, n) || !s->recorder) {
            fprintf(stderr, "gpusched serve: out of memory\n");
            serve_recorder_free(s->recorder);
            pthread_mutex_destroy(&s->refs_mu);
            pthread_mutex_destroy(&s->mu);
            pthread_cond_destroy(&s->cv);
            sched_config_release(&s->cfg);
            free(s);
            return 1;
        }
        s->metrics.elect = o.leader_elect;
        s->metrics.lease_name = s->o.lease_name;
    }
    sched_rng_seed(&s->rng, (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32));

    if (o.leader_elect) {
        struct serve_leader_opts lo = {o.lease_namespace,
                                       o.lease_name,
                                       "",
                                       o.lease_duration_ms,
                                       o.renew_deadline_ms,
                                       o.retry_period_ms,
                                       NULL,
                                       NULL,
                                       NULL};

        if (serve_leader_check(&lo, &err)) {
            fprintf(stderr, "gpusched serve: %s\n", err.msg);
            status = 2;
            goto out;
        }
    }

    /* Every thread started from here on inherits the blocked signals; only the signal
     * thread receives them. */
    if (serve_signals_start(s)) {
        fprintf(stderr, "gpusched serve: cannot start the signal thread\n");
        goto out;
    }

    memset(&co, 0, sizeof(co));
    co.kubeconfig = o.kubeconfig;
    co.context = o.context;
    co.qps = o.qps;
    co.burst = o.burst;
    co.user_agent = "gpusched/" SERVE_VERSION " (linux)";
    if (!o.memory_limit)
        o.memory_limit = memlimit_cgroup(NULL);
    co.max_body = kube_client_max_body(o.memory_limit);
    /* three clients, each with its own rate limiter, as kube-scheduler's createClients and
     * its resource lock make them: scheduling (binds, status), events, the Lease */
    if (kube_client_new(&co, &s->client, &err) || kube_client_new(&co, &s->event_client, &err) ||
        (o.leader_elect && kube_client_new(&co, &s->leader_client, &err))) {
        fprintf(stderr, "gpusched serve: %s\n", err_format(&err, msg, sizeof(msg)));
        goto out;
    }

    s->cluster = sched_cluster_new();
    memset(&qo, 0, sizeof(qo));
    qo.max_unschedulable_ms = o.max_unschedulable_ms;
    qo.initial_backoff_ms = o.initial_backoff_ms;
    qo.max_backoff_ms = o.max_backoff_ms;
    qo.same = serve_pending_same; /* our own status writes do not move a pod back */
    {
        struct timespec wall;

        clock_gettime(CLOCK_REALTIME, &wall);
        qo.wall_offset_ms = (int64_t)wall.tv_sec * 1000 + wall.tv_nsec / 1000000 - mono_ms();
    }
    s->queue = serve_queue_new(&qo);
    if (!s->cluster || !s->queue) {
        fprintf(stderr, "gpusched serve: out of memory\n");
        goto out;
    }

    if (o.metrics_addr && *o.metrics_addr && strcmp(o.metrics_addr, "0")) {
        if (httpd_start(o.metrics_addr, serve_on_http, s, &s->httpd, &err)) {
            fprintf(stderr, "gpusched serve: --metrics-addr: %s\n", err.msg);
            goto out;
        }
    }
    if (o.secure_port && serve_secure_start(s, &o, &err)) {
        fprintf(stderr, "gpusched serve: --secure-port: %s\n", err.msg);
        goto out;
    }
    if (serve_binder_new(s->client, o.bind_workers, serve_on_task_done, s, &s->binder, &err)) {
        fprintf(stderr, "gpusched serve: %s\n", err.msg);
        goto out;
    }
    serve_log(
        'I', 0,
        "\"Starting gpusched\" version=%s schedulerName=%s profile=%s percentageOfNodesToScore=%d kubeVersion=%s server=%s qps=%g burst=%d metricsPort=%d securePort=%d",
        log_quote(SERVE_VERSION), log_quote(o.scheduler_name), log_quote(s->profile->name),
        (int)s->profile->percentage_of_nodes_to_score,
        log_quote((o.kube_version ? o.kube_version : sched_kube_version_find(NULL))->name),
        log_quote(kube_client_server(s->client)), o.qps, o.burst,
        s->httpd ? httpd_port(s->httpd) : 0, s->https ? httpd_port(s->https) : 0);

    /* Dynamic Resource Allocation: DeviceClasses, ResourceSlices, ResourceClaims,
     * ResourceClaimTemplates, DeviceTaintRules, and the claims' writes (before the nodes'
     * informer: the world keeps the nodes too) */
    if (serve_dra_start(s))
        goto out;
    memset(&io, 0, sizeof(io));
    io.resource = "nodes";
    io.path = "/api/v1/nodes";
    io.fn = serve_on_node;
    io.log = serve_on_informer_log;
    io.ud = s;
    io.stop = &s->informer_stop;
    if (kube_informer_start(s->client, &io, &s->nodes_inf, &err)) {
        fprintf(stderr, "gpusched serve: %s\n", err.msg);
        goto out;
    }
    io.resource = "namespaces";
    io.path = "/api/v1/namespaces";
    io.fn = serve_on_namespace;
    if (kube_informer_start(s->client, &io, &s->ns_inf, &err)) {
        fprintf(stderr, "gpusched serve: %s\n", err.msg);
        goto out;
    }
    io.resource = "pods";
    io.path = "/api/v1/pods";
    io.fn = on_pod;
    io.filter = serve_pod_filter;
    if (kube_informer_start(s->client, &io, &s->pods_inf, &err)) {
        fprintf(stderr, "gpusched serve: %s\n", err.msg);
        goto out;
    }
    /* preemption avoids violating PodDisruptionBudgets, as DefaultPreemption does */
    io.resource = "poddisruptionbudgets";
    io.path = "/apis/policy/v1/poddisruptionbudgets";
    io.fn = serve_on_pdb;
    io.filter = NULL;
    if (kube_informer_start(s->client, &io, &s->pdbs_inf, &err)) {
        fprintf(stderr, "gpusched serve: %s\n", err.msg);
        goto out;
    }
    /* PodTopologySpread's system defaults: the selectors of the Services and controllers
     * that select a pod (helper.DefaultSelector) */
    {
        static const struct {
            const char *resource, *path;
            kube_informer_fn fn;
        } src[SERVE_SRC_COUNT] = {
            [SERVE_SRC_SERVICE] = {"services", "/api/v1/services", serve_on_service},
            [SERVE_SRC_RC] = {"replicationcontrollers", "/api/v1/replicationcontrollers",
                              serve_on_replication_controller},
            [SERVE_SRC_RS] = {"replicasets", "/apis/apps/v1/replicasets", serve_on_replica_set},
            [SERVE_SRC_STS] = {"statefulsets", "/apis/apps/v1/statefulsets", serve_on_stateful_set},
        };
        size_t i;

        for (i = 0; i < SERVE_SRC_COUNT; i++) {
            io.resource = src[i].resource;
            io.path = src[i].path;
            io.fn = src[i].fn;
            if (kube_informer_start(s->client, &io, &s->src_inf[i], &err)) {
                fprintf(stderr, "gpusched serve: %s\n", err.msg);
                goto out;
            }
        }
    }
    if (o.leader_elect) {
        struct serve_leader_opts lo = {o.lease_namespace,
                                       o.lease_name,
                                       serve_leader_identity(identity, sizeof(identity)),
                                       o.lease_duration_ms,
                                       o.renew_deadline_ms,
                                       o.retry_period_ms,
                                       serve_on_leader_change,
                                       serve_on_leader_log,
                                       s};

        snprintf(msg, sizeof(msg), "%s/%s", o.lease_namespace, o.lease_name);
        serve_log('I', 0, "\"Leader election\" lease=%s identity=%s", log_quote(msg),
                  log_quote(identity));
        if (serve_leader_start(s->leader_client, &lo, &s->leader, &err)) {
            fprintf(stderr, "gpusched serve: %s\n", err.msg);
            goto out;
        }
    }

    serve_loop(s);

    /* Graceful stop: no new pods are taken; binds in flight finish, then the rest of the
     * writes get a short grace period. */
    serve_log('I', 0, "\"Stopping\" bindsInFlight=%d", serve_binder_pending(s->binder, true));
    if (serve_binder_drain(s->binder, false, 30000))
        serve_log('W', 0, "\"Binds still in flight after 30s; exiting anyway\"");
    serve_binder_drain(s->binder, true, 5000);
    status = s->lost_leadership ? 1 : 0;
out:
    if (s) {
        s->informer_stop = 1;
        kube_informer_free(s->nodes_inf);
        kube_informer_free(s->pods_inf);
        kube_informer_free(s->pdbs_inf);
        kube_informer_free(s->ns_inf);
        for (size_t i = 0; i < SERVE_SRC_COUNT; i++)
            kube_informer_free(s->src_inf[i]);
        serve_leader_stop(s->leader);
        serve_dra_stop(s); /* (its writer submits to the binder) */
        serve_binder_free(s->binder);
        httpd_stop(s->httpd);
        httpd_stop(s->https);
        serve_auth_free(s->auth);
        tls_server_free(s->tls);
        serve_signals_stop(s);
        serve_dra_free(s); /* (after the binder, whose answers may queue an Unreserve, and the
                              probe servers, whose readiness reads it) */
        if (s->queue)
            serve_queue_free(s->queue, serve_pending_free);
        {
            size_t i;

            for (i = 0; i < s->node_fps.cap; i++)
                if (s->node_fps.slots[i].key)
                    free(s->node_fps.slots[i].value);
            for (i = 0; i < s->assumed.cap; i++)
                if (s->assumed.slots[i].key)
                    free(s->assumed.slots[i].value);
        }
        keymap_release(&s->node_fps);
        keymap_release(&s->assumed);
        sched_cluster_free(s->cluster);
        arena_release(&s->pod_arena);
        kube_client_free(s->client);
        kube_client_free(s->event_client);
        kube_client_free(s->leader_client);
        serve_recorder_free(s->recorder);
        serve_podrefs_release(s);
        pthread_mutex_destroy(&s->refs_mu);
        serve_metrics_release(&s->metrics);
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv);
        if (status == 0)
            serve_log('I', 0, "\"Stopped\"");
        sched_config_release(&s->cfg);
        free(s);
    }
    return status;
}
