/* kube_request.c - a tiny kubectl-get-raw over src/kube/client.c, for integration tests.
 *
 *   kube-request [opts] METHOD PATH [BODY]      print "STATUS n" then the body
 *   kube-request [opts] --watch PATH            print one "EVENT TYPE NAME RV" line per event
 *   kube-request [opts] --stream BATCH PATH     a list through kube_client_get_stream (without
 *                                               managedFields): "PART n" and the part's JSON
 *                                               on one line, per part
 *   kube-request [opts] --async N METHOD PATH [BODY] [--and METHOD PATH [BODY]]...
 *                                               the requests through a kube_async set, up to N
 *                                               in flight; "STATUS n" per answer (no body)
 *
 * Errors print "ERROR code=C http=H reason=R retry_after=A transient=T msg=M" on stdout (so
 * tests can parse them) and the formatted error on stderr; exit 1. Usage errors exit 2. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/async.h"
#include "kube/client-int.h"
#include "kube/client.h"

static volatile sig_atomic_t stop_flag;
static int discard;     /* --discard: pass no response struct (the answer is dropped) */
static int async_conns; /* --conns: kube_async_conns for the client (0: as many as INFLIGHT) */
static long max_events = -1;
static int count_waits; /* --count-waits: print how often the watch waited for events to gather */

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kube-request [--kubeconfig F] [--context C] [--qps Q] [--burst B]\n"
            "                    [--timeout-ms MS] [--max-body BYTES] [--content-type T]\n"
            "                    [--repeat N]\n"
            "                    [--token-refresh-ms MS] [--ca-refresh-ms MS]\n"
            "                    [--max-connections N] [--max-retries N]\n"
            "                    [--threads T] [--wait-stdin] [--discard] METHOD PATH [BODY]\n"
            "       kube-request [opts] [--repeat N] [--wait-stdin] [--conns C] --async INFLIGHT\n"
            "                    METHOD PATH [BODY] [--and METHOD PATH [BODY]]...\n"
            "       kube-request [--kubeconfig F] --watch PATH [--max-events N] [--count-waits]\n"
            "       kube-request [--kubeconfig F] --stream BATCH PATH\n"
            "       kube-request [--kubeconfig F] --print-config   (server and namespace)\n"
            "--repeat sends the request N times (spread over --threads); --wait-stdin reads one\n"
            "line from stdin before every request after the first. --async sends the requests\n"
            "(each --repeat times, in order) through one kube_async set, up to INFLIGHT at once,\n"
            "and prints STATUS or ERROR per answer, in the order they come (--conns caps the\n"
            "connections, pipelining the requests past them); with --wait-stdin\n"
            "every request waits for the answers before it. A watch stops on SIGTERM,\n"
            "SIGINT or after --max-events events and then prints STOPPED; --count-waits then\n"
            "prints WAITS n, the times it waited for events to gather. --max-connections and\n"
            "--max-retries set kube_client_opts' max_connections and max_retries.\n");
}

static void print_err(const struct err *e)
{
    char buf[2048];

    printf("ERROR code=%d http=%d reason=%s retry_after=%d transient=%d msg=%s\n", e->code,
           e->http_status, e->reason[0] ? e->reason : "-", e->retry_after,
           kube_err_transient(e) ? 1 : 0, e->msg);
    fprintf(stderr, "kube-request: %s\n", err_format(e, buf, sizeof(buf)));
}

static int on_event(void *ud, const char *type, json_t *obj)
{
    json_t *md = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(md, "name"));
    const char *rv = json_string_value(json_object_get(md, "resourceVersion"));
    long *n = ud;

    if (!strcmp(type, "ERROR"))
        printf("EVENT ERROR %lld %s\n", json_integer_value(json_object_get(obj, "code")),
               json_string_value(json_object_get(obj, "reason")));
    else
        printf("EVENT %s %s %s\n", type, name ? name : "-", rv ? rv : "-");
    fflush(stdout);
    (*n)++;
    return max_events >= 0 && *n >= max_events ? 7 : 0;
}

struct job {
    struct kube_client *c;
    const char *method, *path, *ctype, *body;
    int count;
    int failures;
    pthread_mutex_t *out_lock;
};

static void *run_job(void *arg)
{
    struct job *j = arg;
    int i;

    for (i = 0; i < j->count; i++) {
        struct kube_response r = {0};
        struct err e;
        int rc = kube_client_request(j->c, j->method, j->path, j->ctype, j->body,
                                     j->body ? strlen(j->body) : 0, discard ? NULL : &r, &e);

        pthread_mutex_lock(j->out_lock);
        if (rc) {
            j->failures++;
            print_err(&e);
        } else if (discard) {
            printf("DONE\n");
        } else {
            printf("STATUS %ld\n", r.status);
        }
        fflush(stdout);
        pthread_mutex_unlock(j->out_lock);
        kube_response_release(&r);
    }
    return NULL;
}

struct async_run {
    size_t done;
    int failures;
};

static void on_async_done(void *ud, struct kube_async_req *r)
{
    struct async_run *run = ud;

    if (r->rc) {
        run->failures++;
        print_err(r->err);
    } else {
        printf("STATUS %ld\n", r->status);
    }
    fflush(stdout);
    run->done++;
}

/* run_async sends args (METHOD PATH [BODY], separated by "--and"), each one `repeat` times,
 * through a kube_async set with up to inflight requests at once. */
static int run_async(struct kube_client *c, int inflight, int repeat, int wait_stdin,
                     const char *ctype_flag, char **args, int nargs)
{
    struct async_run run = {0, 0};
    struct kube_async_req *reqs;
    struct err *errs, e;
    struct kube_async *a;
    size_t n = 0, total, sent = 0;
    int i, k;
    char line[256];

    for (i = 0; i < nargs; i++)
        n += !strcmp(args[i], "--and");
    total = (n + 1) * (size_t)repeat;
    reqs = calloc(total, sizeof(*reqs));
    errs = calloc(total, sizeof(*errs));
    if (!reqs || !errs || kube_async_new(inflight, &a, &e) ||
        (async_conns && kube_async_conns(a, c, (size_t)async_conns))) {
        fprintf(stderr, "kube-request: cannot set up the async requests\n");
        free(reqs);
        free(errs);
        return 1;
    }
    n = 0;
    for (i = 0; i < nargs;) {
        int j = i, m;

        while (j < nargs && strcmp(args[j], "--and"))
            j++;
        m = j - i;
        if (m < 2 || m > 3) {
            fprintf(stderr, "kube-request: --async wants METHOD PATH [BODY] per request\n");
            kube_async_free(a, NULL, NULL);
            free(reqs);
            free(errs);
            return 2;
        }
        for (k = 0; k < repeat; k++, n++) {
            struct kube_async_req *r = &reqs[n];

            r->method = args[i];
            r->path = args[i + 1];
            r->body = m == 3 ? args[i + 2] : NULL;
            r->len = r->body ? strlen(r->body) : 0;
            r->content_type = ctype_flag                   ? ctype_flag
                              : !r->body                   ? NULL
                              : strcmp(r->method, "PATCH") ? "application/json"
                                                           : "application/merge-patch+json";
            r->err = &errs[n];
        }
        i = j + 1;
    }
    while (run.done < total) {
        while (sent < total && sent - run.done < (size_t)inflight) {
            if (sent && wait_stdin) {
                if (run.done < sent)
                    break;
                if (!fgets(line, sizeof(line), stdin)) {
                    total = sent;
                    break;
                }
            }
            kube_async_add(a, c, &reqs[sent++], 0);
        }
        if (run.done >= total)
            break;
        kube_async_run(a, 1000, on_async_done, &run);
    }
    kube_async_free(a, NULL, NULL);
    free(reqs);
    free(errs);
    return run.failures ? 1 : 0;
}

struct parts {
    long n;
};

static int on_part(void *ud, json_t *doc)
{
    struct parts *p = ud;
    char *s = json_dumps(doc, JSON_COMPACT | JSON_ENSURE_ASCII);

    printf("PART %ld\n%s\n", ++p->n, s ? s : "null");
    free(s);
    return 0;
}

int main(int argc, char **argv)
{
    struct kube_client_opts o = {0};
    struct kube_client *c = NULL;
    struct err e;
    const char *watch = NULL, *ctype = NULL, *pos[3] = {0};
    int npos = 0, repeat = 1, threads = 1, wait_stdin = 0, print_config = 0, i, rc = 0;
    int async = 0, async_at = 0;
    long stream = 0;
    struct sigaction sa;

    o.user_agent = "kube-request/test";
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--wait-stdin")) {
            wait_stdin = 1;
            continue;
        }
        if (!strcmp(a, "--discard")) {
            discard = 1;
            continue;
        }
        if (!strcmp(a, "--count-waits")) {
            count_waits = 1;
            continue;
        }
        if (!strcmp(a, "--print-config")) {
            print_config = 1;
            continue;
        }
        if (a[0] == '-' && a[1] == '-') {
            if (!v) {
                usage(stderr);
                return 2;
            }
            i++;
            if (!strcmp(a, "--kubeconfig"))
                o.kubeconfig = v;
            else if (!strcmp(a, "--context"))
                o.context = v;
            else if (!strcmp(a, "--qps"))
                o.qps = atof(v);
            else if (!strcmp(a, "--burst"))
                o.burst = atoi(v);
            else if (!strcmp(a, "--timeout-ms"))
                o.timeout_ms = atol(v);
            else if (!strcmp(a, "--max-body"))
                o.max_body = (size_t)atol(v);
            else if (!strcmp(a, "--token-refresh-ms"))
                o.token_refresh_ms = atol(v);
            else if (!strcmp(a, "--ca-refresh-ms"))
                o.ca_refresh_ms = atol(v);
            else if (!strcmp(a, "--max-connections"))
                o.max_connections = atoi(v);
            else if (!strcmp(a, "--max-retries"))
                o.max_retries = atoi(v);
            else if (!strcmp(a, "--content-type"))
                ctype = v;
            else if (!strcmp(a, "--repeat"))
                repeat = atoi(v);
            else if (!strcmp(a, "--threads"))
                threads = atoi(v);
            else if (!strcmp(a, "--watch"))
                watch = v;
            else if (!strcmp(a, "--stream"))
                stream = atol(v);
            else if (!strcmp(a, "--max-events"))
                max_events = atol(v);
            else if (!strcmp(a, "--conns"))
                async_conns = atoi(v);
            else if (!strcmp(a, "--async")) {
                async = atoi(v);
                async_at = i + 1;
                break; /* the rest are requests */
            } else {
                fprintf(stderr, "kube-request: unknown flag %s\n", a);
                return 2;
            }
            continue;
        }
        if (npos == 3) {
            usage(stderr);
            return 2;
        }
        pos[npos++] = a;
    }
    if (stream && npos == 1) {
        /* --stream BATCH PATH: PATH is the one positional argument */
        pos[1] = pos[0];
        pos[0] = "GET";
        npos = 2;
    }
    if ((!watch && !print_config && !async && npos < 2) || (watch && npos) || repeat < 1 ||
        threads < 1 || threads > 64 || (async_at && (async < 1 || npos || async_at >= argc))) {
        usage(stderr);
        return 2;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* see client.h: TLS writes to a closed socket */

    if (kube_client_new(&o, &c, &e)) {
        print_err(&e);
        return 1;
    }
    if (print_config) {
        printf("SERVER %s\nNAMESPACE %s\n", kube_client_server(c), kube_client_namespace(c));
        kube_client_free(c);
        return 0;
    }
    if (async) {
        rc = run_async(c, async, repeat, wait_stdin, ctype, argv + async_at, argc - async_at);
        kube_client_free(c);
        return rc;
    }
    if (watch) {
        long n = 0;

        printf("WATCHING\n");
        fflush(stdout);
        rc = kube_client_watch(c, watch, on_event, &n, &stop_flag, &e);
        if (rc < 0)
            print_err(&e);
        else
            printf("%s rc=%d events=%ld\n", stop_flag || rc ? "STOPPED" : "ENDED", rc, n);
        if (count_waits)
            printf("WAITS %lu\n", kube_client_watch_waits());
        kube_client_free(c);
        return rc < 0 ? 1 : 0;
    }
    if (stream) {
        static const char *const strip[] = {"managedFields", NULL};
        struct parts parts = {0};

        rc = kube_client_get_stream(c, pos[1], strip, (size_t)stream, on_part, &parts, NULL, &e);
        if (rc)
            print_err(&e);
        else
            printf("END parts=%ld\n", parts.n);
        kube_client_free(c);
        return rc ? 1 : 0;
    }
    if (!ctype && pos[2] && strcmp(pos[0], "PATCH"))
        ctype = "application/json";
    if (!ctype && pos[2])
        ctype = "application/merge-patch+json";
    if (repeat == 1 && threads == 1) {
        struct kube_response r;

        rc = kube_client_request(c, pos[0], pos[1], ctype, pos[2], pos[2] ? strlen(pos[2]) : 0, &r,
                                 &e);
        if (rc)
            print_err(&e);
        printf("STATUS %ld\n", r.status);
        if (r.body.len)
            printf("%s\n", r.body.data);
        kube_response_release(&r);
    } else if (threads == 1 || discard) {
        pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
        struct job j = {c, pos[0], pos[1], ctype, pos[2], 1, 0, &lock};
        char line[256];

        for (i = 0; i < repeat; i++) {
            if (i && wait_stdin && !fgets(line, sizeof(line), stdin))
                break;
            run_job(&j);
        }
        rc = j.failures;
    } else {
        pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
        struct job jobs[64];
        pthread_t tids[64];

        for (i = 0; i < threads; i++) {
            jobs[i] = (struct job){c,     pos[0], pos[1],
                                   ctype, pos[2], repeat / threads + (i < repeat % threads),
                                   0,     &lock};
            pthread_create(&tids[i], NULL, run_job, &jobs[i]);
        }
        for (i = 0; i < threads; i++) {
            pthread_join(tids[i], NULL);
            rc += jobs[i].failures;
        }
    }
    kube_client_free(c);
    return rc ? 1 : 0;
}
