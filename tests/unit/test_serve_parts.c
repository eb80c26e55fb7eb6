/* test_serve_parts.c - the request bodies (events.c), the metrics text and the probe server
 * of gpusched serve. */
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "serve/events.h"
#include "base/httpd.h"
#include "serve/metrics.h"
#include "test.h"

static void events_note_truncates_like_kube_scheduler(void)
{
    char big[2000], *n;

    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    n = serve_event_note(big);
    CHECK_INT_EQ(strlen(n), 1024);
    CHECK_STR_EQ(n + 1020, " ...");
    CHECK(n[1019] == 'x');
    free(n);
    big[1024] = '\0';
    n = serve_event_note(big);
    CHECK_INT_EQ(strlen(n), 1024);
    CHECK(n[1023] == 'x');
    free(n);
}

static void events_binding_body(void)
{
    char *b = serve_binding_json("default", "job-0", "u-1", "gpu-1");

    CHECK_STR_EQ(b, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"job-0\","
                    "\"namespace\":\"default\",\"uid\":\"u-1\"},\"target\":{\"apiVersion\":\"v1\","
                    "\"kind\":\"Node\",\"name\":\"gpu-1\"}}");
    free(b);
}

static void events_event_body(void)
{
    struct serve_event ev = {"default",
                             "job-0",
                             "u-1",
                             "Warning",
                             "FailedScheduling",
                             "Scheduling",
                             "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
                             "gpusched",
                             "gpusched-host1"};
    struct timespec t = {1787140800, 123456789}; /* 2026-08-19T12:00:00.123456Z */
    char *b = serve_event_json(&ev, &t);
    json_t *j = json_loads(b, 0, NULL);

    CHECK(j != NULL);
    CHECK_STR_EQ(json_string_value(json_object_get(j, "apiVersion")), "events.k8s.io/v1");
    CHECK_STR_EQ(json_string_value(json_object_get(json_object_get(j, "metadata"), "name")),
                 "job-0.18cd3316caf74d15");
    CHECK_STR_EQ(json_string_value(json_object_get(j, "eventTime")), "2026-08-19T12:00:00.123456Z");
    CHECK_STR_EQ(json_string_value(json_object_get(j, "reportingController")), "gpusched");
    CHECK_STR_EQ(json_string_value(json_object_get(j, "reportingInstance")), "gpusched-host1");
    CHECK_STR_EQ(json_string_value(json_object_get(j, "reason")), "FailedScheduling");
    CHECK_STR_EQ(json_string_value(json_object_get(j, "action")), "Scheduling");
    CHECK_STR_EQ(json_string_value(json_object_get(j, "type")), "Warning");
    CHECK_STR_EQ(json_string_value(json_object_get(j, "note")), ev.note);
    CHECK_STR_EQ(json_string_value(json_object_get(json_object_get(j, "regarding"), "uid")), "u-1");
    CHECK_STR_EQ(json_string_value(json_object_get(json_object_get(j, "regarding"), "kind")),
                 "Pod");
    json_decref(j);
    free(b);
}

static void events_strings_are_escaped(void)
{
    struct serve_event ev = {"ns",
                             "p",
                             NULL,
                             "Warning",
                             "FailedScheduling",
                             "Scheduling",
                             "quote \" backslash \\ newline \n tab \t bell \a caf\xc3\xa9 {x: }",
                             "gpusched",
                             "gpusched-h"};
    struct timespec t = {0, 0};
    char *b = serve_event_json(&ev, &t);
    json_t *j = json_loads(b, 0, NULL);

    CHECK(j != NULL);
    CHECK_STR_EQ(json_string_value(json_object_get(j, "note")), ev.note);
    CHECK(json_object_get(json_object_get(j, "regarding"), "uid") == NULL);
    CHECK(strstr(b, "\\u0007") != NULL);
    json_decref(j);
    free(b);
    b = serve_binding_json("d\"ns", "n", "", "node");
    CHECK_STR_EQ(b, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"n\","
                    "\"namespace\":\"d\\\"ns\"},\"target\":{\"apiVersion\":\"v1\","
                    "\"kind\":\"Node\",\"name\":\"node\"}}");
    free(b);
}

static void events_condition_patch(void)
{
    struct timespec t = {1787140800, 0};
    char *b = serve_condition_patch_json("Unschedulable", "0/1 nodes are available: x.", "n1", &t);

    CHECK_STR_EQ(b, "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
                    "\"reason\":\"Unschedulable\",\"message\":\"0/1 nodes are available: x.\","
                    "\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-08-19T12:00:00Z\"}],"
                    "\"nominatedNodeName\":\"n1\"}}");
    free(b);
}

static void events_lease_body(void)
{
    struct serve_lease l = {"kube-system",   "gpusched",           "812", "host1_ab", 15,
                            {1787140800, 0}, {1787140808, 500000}, 3};
    char *b = serve_lease_json(&l);

    CHECK_STR_EQ(
        b, "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":"
           "{\"name\":\"gpusched\",\"namespace\":\"kube-system\",\"resourceVersion\":\"812\"},"
           "\"spec\":{\"holderIdentity\":\"host1_ab\",\"leaseDurationSeconds\":15,"
           "\"acquireTime\":\"2026-08-19T12:00:00.000000Z\",\"renewTime\":"
           "\"2026-08-19T12:00:08.000500Z\",\"leaseTransitions\":3}}");
    free(b);
}

static void metrics_render_has_families(void)
{
    struct serve_metrics m;
    struct buf out = BUF_INIT(0);

    serve_metrics_init(&m, "gpu");
    m.attempts[SERVE_RESULT_SCHEDULED] = 7;
    serve_metrics_observe(&m, &m.algorithm_duration, 0.00015);
    serve_metrics_observe(&m, &m.algorithm_duration, 0.5);
    CHECK_INT_EQ(serve_metrics_render(&m, &out), 0);
    CHECK(strstr(out.data,
                 "scheduler_schedule_attempts_total{profile=\"gpu\",result=\"scheduled\"} 7\n"));
    CHECK(strstr(out.data,
                 "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.0001\"} 0\n"));
    CHECK(strstr(out.data,
                 "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.0002\"} 1\n"));
    CHECK(strstr(out.data,
                 "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"+Inf\"} 2\n"));
    CHECK(strstr(out.data, "scheduler_scheduling_algorithm_duration_seconds_count{} 2\n"));
    CHECK(strstr(out.data, "scheduler_pending_pods{queue=\"unschedulable\"} 0\n"));
    CHECK(strstr(out.data, "process_resident_memory_bytes "));
    CHECK(serve_histogram_quantile(&m.algorithm_duration, 0.5) < 0.00021);
    buf_release(&out);
    serve_metrics_destroy(&m);
}

static int probe_handler(void *ud, const char *path, struct buf *body, const char **ctype)
{
    (void)ud;
    (void)ctype;
    if (!strcmp(path, "/healthz")) {
        buf_puts(body, "ok");
        return 200;
    }
    buf_puts(body, "nope");
    return 404;
}

static int http_get(int port, const char *req, char *out, size_t size)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    size_t len = 0;
    ssize_t r;

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (write(fd, req, strlen(req)) < 0) {
        close(fd);
        return -1;
    }
    while (len < size - 1 && (r = read(fd, out + len, size - 1 - len)) > 0)
        len += (size_t)r;
    out[len] = '\0';
    close(fd);
    return 0;
}

static void httpd_answers_probes(void)
{
    struct httpd *h = NULL;
    struct err err;
    char buf[4096];

    err_clear(&err);
    CHECK_INT_EQ(httpd_start("127.0.0.1:0", probe_handler, NULL, &h, &err), 0);
    if (!h)
        return;
    CHECK(httpd_port(h) > 0);
    CHECK_INT_EQ(
        http_get(httpd_port(h), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", buf, sizeof(buf)), 0);
    CHECK(!strncmp(buf, "HTTP/1.1 200 OK\r\n", 17));
    CHECK(strstr(buf, "\r\n\r\nok") != NULL);
    CHECK_INT_EQ(http_get(httpd_port(h), "GET /other?x=1 HTTP/1.1\r\n\r\n", buf, sizeof(buf)), 0);
    CHECK(!strncmp(buf, "HTTP/1.1 404", 12));
    CHECK_INT_EQ(http_get(httpd_port(h), "POST /healthz HTTP/1.1\r\n\r\n", buf, sizeof(buf)), 0);
    CHECK(!strncmp(buf, "HTTP/1.1 405", 12));
    httpd_stop(h);
    CHECK(httpd_start("nonsense", probe_handler, NULL, &h, &err) < 0);
    CHECK(strstr(err.msg, "not HOST:PORT") != NULL);
}

static int tcp_connect(int port)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Clients that connect and say nothing (or half a request) must not hold up a probe: the
 * kubelet gives /healthz 1 s by default. The probe is answered while they are still open. */
static void httpd_idle_clients_do_not_delay_probes(void)
{
    struct httpd *h = NULL;
    struct err err;
    int idle[3], i, fd;
    char buf[4096];
    size_t len = 0;
    ssize_t r;
    struct timeval tv = {1, 0};
    const char *req = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";

    err_clear(&err);
    CHECK_INT_EQ(httpd_start("127.0.0.1:0", probe_handler, NULL, &h, &err), 0);
    if (!h)
        return;
    for (i = 0; i < 3; i++) {
        idle[i] = tcp_connect(httpd_port(h));
        CHECK(idle[i] >= 0);
    }
    if (idle[1] >= 0 && write(idle[1], "GET /hea", 8) != 8)
        CHECK(0);
    usleep(50000); /* let the server take the idle ones first */
    fd = tcp_connect(httpd_port(h));
    CHECK(fd >= 0);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (fd >= 0 && write(fd, req, strlen(req)) == (ssize_t)strlen(req))
        while (len < sizeof(buf) - 1 && (r = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
            len += (size_t)r;
    buf[len] = '\0';
    CHECK(strstr(buf, "HTTP/1.1 200 OK\r\n") == buf);
    if (fd >= 0)
        close(fd);
    for (i = 0; i < 3; i++)
        if (idle[i] >= 0)
            close(idle[i]);
    httpd_stop(h);
}

static void httpd_request_parser(void)
{
    static const struct {
        const char *req;
        int rc;
        const char *method, *path;
    } cases[] = {
        {"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 1, "GET", "/healthz"},
        {"HEAD /metrics?x=1 HTTP/1.0\n\n", 1, "HEAD", "/metrics"},
        {"GET /readyz\r\n\r\n", 1, "GET", "/readyz"},
        {"GET /healthz HTTP/1.1\r\nHost: x\r\n", 0, NULL, NULL},
        {"GET /healthz HTTP/2\r\n\r\n", -1, NULL, NULL},
        {"GET healthz HTTP/1.1\r\n\r\n", -1, NULL, NULL},
        {"get /healthz HTTP/1.1\r\n\r\n", -1, NULL, NULL},
        {"GET /a\tb HTTP/1.1\r\n\r\n", -1, NULL, NULL},
        {"VERYLONGMETHODNAME / HTTP/1.1\r\n\r\n", -1, NULL, NULL},
        {"\r\n\r\n", -1, NULL, NULL},
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char method[16] = "", path[1024] = "";
        int rc = httpd_parse_request(cases[i].req, strlen(cases[i].req), method, sizeof(method),
                                     path, sizeof(path));

        if (rc != cases[i].rc)
            test_fail(__FILE__, __LINE__, "case %zu: rc %d, expected %d", i, rc, cases[i].rc);
        if (rc == 1 && (strcmp(method, cases[i].method) || strcmp(path, cases[i].path)))
            test_fail(__FILE__, __LINE__, "case %zu: %s %s", i, method, path);
    }
    CHECK_INT_EQ(
        httpd_parse_request("GET /\0 HTTP/1.1\r\n\r\n", 20, (char[16]){0}, 16, (char[64]){0}, 64),
        -1);
}

static const struct test_case cases[] = {
    {"event note truncated at 1024 bytes with ' ...'", events_note_truncates_like_kube_scheduler},
    {"binding body", events_binding_body},
    {"events.k8s.io/v1 event body", events_event_body},
    {"JSON strings escaped", events_strings_are_escaped},
    {"PodScheduled condition patch", events_condition_patch},
    {"lease body", events_lease_body},
    {"metrics text exposition", metrics_render_has_families},
    {"probe server answers GET", httpd_answers_probes},
    {"idle clients do not delay probes", httpd_idle_clients_do_not_delay_probes},
    {"request parser", httpd_request_parser},
};

TEST_SUITE(sched_serve_parts, cases)
