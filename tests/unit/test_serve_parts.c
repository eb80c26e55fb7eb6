/* test_serve_parts.c - the request bodies (events.c), the metrics text and the probe server
 * of gpusched serve. */
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "serve/events.h"
#include "base/clock.h"
#include "base/httpd.h"
#include "base/goparse.h"
#include "serve/drashare.h"
#include "serve/metrics.h"
#include "serve/objects-int.h"
#include "serve/recorder.h"
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
    struct serve_objref pre = {"default", "big", "u-9", "77"};
    struct serve_event ev = {{"default", "job-0", "u-1", "812"},
                             NULL,
                             "Warning",
                             "FailedScheduling",
                             "Scheduling",
                             "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
                             "gpusched",
                             "gpusched-host1"};
    struct timespec t = {1787140800, 123456789}; /* 2026-08-19T12:00:00.123456Z */
    char name[300], *b;
    json_t *j, *reg;

    serve_event_name("job-0", &t, name, sizeof(name));
    CHECK_STR_EQ(name, "job-0.18cd3316caf74d15");
    b = serve_event_json(&ev, name, &t, NULL);
    j = json_loads(b, 0, NULL);
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
    CHECK(json_object_get(j, "series") == NULL && json_object_get(j, "related") == NULL);
    reg = json_object_get(j, "regarding");
    CHECK_STR_EQ(json_string_value(json_object_get(reg, "uid")), "u-1");
    CHECK_STR_EQ(json_string_value(json_object_get(reg, "resourceVersion")), "812");
    CHECK_STR_EQ(json_string_value(json_object_get(reg, "kind")), "Pod");
    CHECK_STR_EQ(json_string_value(json_object_get(reg, "apiVersion")), "v1");
    json_decref(j);
    free(b);

    /* a series and a related object (a Preempted event names its preemptor) */
    {
        struct serve_event_series ser = {3, {1787140860, 5000}};

        ev.related = &pre;
        b = serve_event_json(&ev, name, &t, &ser);
        j = json_loads(b, 0, NULL);
        CHECK(j != NULL);
        CHECK_INT_EQ(json_integer_value(json_object_get(json_object_get(j, "series"), "count")), 3);
        CHECK_STR_EQ(
            json_string_value(json_object_get(json_object_get(j, "series"), "lastObservedTime")),
            "2026-08-19T12:01:00.000005Z");
        CHECK_STR_EQ(json_string_value(json_object_get(json_object_get(j, "related"), "uid")),
                     "u-9");
        CHECK_STR_EQ(
            json_string_value(json_object_get(json_object_get(j, "related"), "resourceVersion")),
            "77");
        json_decref(j);
        free(b);
        b = serve_event_series_patch_json(&ser);
        CHECK_STR_EQ(
            b, "{\"series\":{\"count\":3,\"lastObservedTime\":\"2026-08-19T12:01:00.000005Z\"}}");
        free(b);
    }
    /* a name that would not be a DNS subdomain becomes a UUID, as GenerateEventName does */
    {
        char longname[260];

        memset(longname, 'a', 250);
        longname[250] = '\0';
        serve_event_name(longname, &t, name, sizeof(name));
        CHECK_INT_EQ(strlen(name), 36);
        CHECK(name[8] == '-' && name[14] == '4');
    }
}

static void events_strings_are_escaped(void)
{
    struct serve_event ev = {{"ns", "p", NULL, NULL},
                             NULL,
                             "Warning",
                             "FailedScheduling",
                             "Scheduling",
                             "quote \" backslash \\ newline \n tab \t bell \a caf\xc3\xa9 {x: }",
                             "gpusched",
                             "gpusched-h"};
    struct timespec t = {0, 0};
    char *b = serve_event_json(&ev, "p.0", &t, NULL);
    json_t *j = json_loads(b, 0, NULL);

    CHECK(j != NULL);
    CHECK_STR_EQ(json_string_value(json_object_get(j, "note")), ev.note);
    CHECK(json_object_get(json_object_get(j, "regarding"), "uid") == NULL);
    CHECK(json_object_get(json_object_get(j, "regarding"), "resourceVersion") == NULL);
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

/* metric_line: out has exactly this line */
static bool metric_line(const char *out, const char *line)
{
    size_t n = strlen(line);
    const char *p;

    for (p = out; (p = strstr(p, line)); p++)
        if ((p == out || p[-1] == '\n') && p[n] == '\n')
            return true;
    return false;
}

static void metrics_render_has_families(void)
{
    const char *names[] = {"gpusched", "gpu-binpack"};
    struct serve_metrics m;
    struct serve_profile_metrics *p;
    struct buf out = BUF_INIT(0);

    CHECK_INT_EQ(serve_metrics_init(&m, names, 2), 0);
    p = serve_metrics_profile(&m, "gpu-binpack");
    CHECK(p == &m.profiles[1]);
    CHECK(serve_metrics_profile(&m, "other") == &m.profiles[0]);
    serve_metrics_attempt(&m, p, SERVE_RESULT_UNSCHEDULABLE, 0.0015);
    serve_metrics_bound(&m, p, 0.003, 2, 0.5, true);
    serve_metrics_bound(&m, p, 0.003, 20, 100, false);
    serve_metrics_bind(&m, p, true, 0.00015);
    serve_metrics_observe(&m, &m.algorithm_duration, 0.0015);
    serve_metrics_observe(&m, &m.algorithm_duration, 0.5);
    serve_metrics_observe(&m, &m.preemption_victims, 3);
    serve_metrics_set_pending(&m, SERVE_PENDING_GATED, 4);
    m.elect = true;
    m.lease_name = "gpusched";
    m.leader = 1;
    CHECK_INT_EQ(serve_metrics_render(&m, &out), 0);
    /* kube-scheduler's names, HELP texts, label order and buckets */
    CHECK(metric_line(out.data, "# HELP scheduler_schedule_attempts_total [STABLE] Number of "
                                "attempts to schedule pods, by the result. 'unschedulable' means a "
                                "pod could not be scheduled, while 'error' means an internal "
                                "scheduler problem."));
    CHECK(metric_line(out.data, "# TYPE scheduler_schedule_attempts_total counter"));
    CHECK(metric_line(
        out.data,
        "scheduler_schedule_attempts_total{profile=\"gpu-binpack\",result=\"scheduled\"} 2"));
    CHECK(metric_line(
        out.data,
        "scheduler_schedule_attempts_total{profile=\"gpu-binpack\",result=\"unschedulable\"} 1"));
    /* a label value never observed is not shown, as a Vec's child before first use */
    CHECK(!strstr(out.data, "result=\"error\""));
    CHECK(!strstr(out.data, "profile=\"gpusched\""));
    CHECK(metric_line(out.data,
                      "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"gpu-"
                      "binpack\",result=\"unschedulable\",le=\"0.001\"} 0"));
    CHECK(metric_line(out.data,
                      "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"gpu-"
                      "binpack\",result=\"unschedulable\",le=\"0.002\"} 1"));
    CHECK(metric_line(out.data,
                      "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"gpu-"
                      "binpack\",result=\"unschedulable\",le=\"16.384\"} 1"));
    CHECK(metric_line(out.data,
                      "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"+Inf\"} 2"));
    CHECK(metric_line(out.data, "scheduler_scheduling_algorithm_duration_seconds_count 2"));
    CHECK(metric_line(out.data, "scheduler_scheduling_algorithm_duration_seconds_sum 0.5015"));
    CHECK(metric_line(out.data, "scheduler_pod_scheduling_attempts_bucket{le=\"1\"} 0"));
    CHECK(metric_line(out.data, "scheduler_pod_scheduling_attempts_bucket{le=\"2\"} 1"));
    CHECK(metric_line(out.data, "scheduler_pod_scheduling_attempts_bucket{le=\"16\"} 1"));
    CHECK(metric_line(out.data, "scheduler_pod_scheduling_attempts_bucket{le=\"+Inf\"} 2"));
    CHECK(metric_line(
        out.data,
        "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"2\",le=\"0.64\"} 1"));
    CHECK(metric_line(out.data, "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="
                                "\"15+\",le=\"5242.88\"} 1"));
    CHECK(metric_line(out.data, "scheduler_pod_scheduled_after_flush_total 1"));
    CHECK(metric_line(out.data, "scheduler_preemption_victims_bucket{le=\"2\"} 0"));
    CHECK(metric_line(out.data, "scheduler_preemption_victims_bucket{le=\"4\"} 1"));
    CHECK(metric_line(out.data, "scheduler_preemption_victims_bucket{le=\"64\"} 1"));
    CHECK(metric_line(out.data, "scheduler_framework_extension_point_duration_seconds_bucket{"
                                "extension_point=\"Bind\",profile=\"gpu-binpack\",status="
                                "\"Success\",le=\"0.0002\"} 1"));
    CHECK(metric_line(out.data, "scheduler_pending_pods{queue=\"gated\"} 4"));
    CHECK(metric_line(out.data, "scheduler_queued_entities{queue=\"gated\",type=\"pod\"} 4"));
    /* a queue that never held a pod has no queued_entities child yet; pending_pods has all */
    CHECK(!strstr(out.data, "scheduler_queued_entities{queue=\"active\""));
    CHECK(metric_line(out.data, "scheduler_pending_pods{queue=\"active\"} 0"));
    CHECK(metric_line(out.data, "scheduler_cache_size{type=\"assumed_pods\"} 0"));
    CHECK(metric_line(out.data, "leader_election_master_status{name=\"gpusched\"} 1"));
    CHECK(metric_line(out.data, "# TYPE process_resident_memory_bytes gauge"));
    CHECK(metric_line(out.data, "# TYPE process_start_time_seconds gauge"));
    CHECK(serve_histogram_quantile(&m.algorithm_duration, 0.25) <= 0.002);
    buf_release(&out);
    serve_metrics_release(&m);
}

static void metrics_binding_conditions_families(void)
{
    const char *names[] = {"gpusched", "other"};
    struct serve_metrics m;
    struct buf out = BUF_INIT(0);

    CHECK_INT_EQ(serve_metrics_init(&m, names, 2), 0);
    CHECK_INT_EQ(serve_metrics_render(&m, &out), 0);
    /* a Vec without children is not shown */
    CHECK(!strstr(out.data, "bindingconditions"));
    buf_reset(&out);
    /* one pod: a result with binding conditions and one without, of two drivers */
    serve_metrics_binding_conditions(&m, &m.profiles[0], "z.example.com", SERVE_BC_SUCCESS, true,
                                     0.15);
    serve_metrics_binding_conditions(&m, &m.profiles[0], "a.example.com", SERVE_BC_SUCCESS, false,
                                     0.15);
    serve_metrics_binding_conditions(&m, &m.profiles[1], "z.example.com", SERVE_BC_TIMEOUT, true,
                                     600);
    serve_metrics_binding_conditions(&m, &m.profiles[0], "z.example.com", SERVE_BC_FAILURE, true,
                                     5);
    serve_metrics_binding_conditions(&m, &m.profiles[0], "z.example.com", SERVE_BC_SUCCESS, true,
                                     0.05);
    CHECK_INT_EQ(serve_metrics_render(&m, &out), 0);
    CHECK(metric_line(out.data, "# HELP scheduler_dra_bindingconditions_allocations_total [ALPHA] "
                                "Number of allocations using devices with BindingConditions, "
                                "counted per driver per scheduling attempt"));
    CHECK(
        metric_line(out.data, "# TYPE scheduler_dra_bindingconditions_allocations_total counter"));
    CHECK(metric_line(out.data, "scheduler_dra_bindingconditions_allocations_total{driver=\"z."
                                "example.com\",profile=\"gpusched\",status=\"success\"} 2"));
    CHECK(metric_line(out.data, "scheduler_dra_bindingconditions_allocations_total{driver=\"z."
                                "example.com\",profile=\"other\",status=\"timeout\"} 1"));
    /* a result without binding conditions is timed, not counted */
    CHECK(!strstr(out.data, "allocations_total{driver=\"a.example.com\""));
    CHECK(metric_line(out.data, "# HELP scheduler_dra_bindingconditions_wait_duration_seconds "
                                "[ALPHA] Time in seconds spent waiting for BindingConditions to "
                                "be satisfied during PreBind."));
    CHECK(metric_line(out.data, "scheduler_dra_bindingconditions_wait_duration_seconds_bucket{"
                                "driver=\"a.example.com\",profile=\"gpusched\",status=\"success\","
                                "le=\"0.2\"} 1"));
    CHECK(metric_line(out.data, "scheduler_dra_bindingconditions_wait_duration_seconds_bucket{"
                                "driver=\"z.example.com\",profile=\"gpusched\",status=\"success\","
                                "le=\"0.1\"} 1"));
    CHECK(metric_line(out.data, "scheduler_dra_bindingconditions_wait_duration_seconds_bucket{"
                                "driver=\"z.example.com\",profile=\"other\",status=\"timeout\","
                                "le=\"819.2\"} 1"));
    CHECK(metric_line(out.data, "scheduler_dra_bindingconditions_wait_duration_seconds_count{"
                                "driver=\"z.example.com\",profile=\"gpusched\",status=\"success\"} "
                                "2"));
    /* children in label-value order: driver, then profile, then status */
    {
        const char *a = strstr(out.data, "_count{driver=\"a.example.com\"");
        const char *f = strstr(out.data, "_count{driver=\"z.example.com\",profile=\"gpusched\","
                                         "status=\"failure\"");
        const char *sc = strstr(out.data, "_count{driver=\"z.example.com\",profile=\"gpusched\","
                                          "status=\"success\"");
        const char *t = strstr(out.data, "_count{driver=\"z.example.com\",profile=\"other\"");

        CHECK(a && f && sc && t && a < f && f < sc && sc < t);
    }
    /* the families sit in name order */
    CHECK(strstr(out.data, "# HELP scheduler_cache_size") <
          strstr(out.data, "# HELP scheduler_dra_bindingconditions_allocations_total"));
    CHECK(strstr(out.data, "# HELP scheduler_dra_bindingconditions_wait_duration_seconds") <
          strstr(out.data, "# HELP scheduler_pending_pods"));
    buf_release(&out);
    serve_metrics_release(&m);
}

static void metrics_numbers_as_go_writes_them(void)
{
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {0.001, "0.001"},    {16.384, "16.384"}, {1e-05, "1e-05"},     {0.0001, "0.0001"},
        {1000000, "1e+06"},  {123456, "123456"}, {5242.88, "5242.88"}, {0.5015, "0.5015"},
        {1.0 / 0.0, "+Inf"}, {0, "0"},           {-2.5, "-2.5"},
    };
    char buf[64];
    size_t i;
    double b = 0.00001;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        CHECK_STR_EQ(serve_metrics_format_float(cases[i].v, buf, sizeof(buf)), cases[i].want);
    /* ExponentialBuckets(0.00001, 1.5, 20)'s third bound, computed by repeated products */
    b *= 1.5;
    b *= 1.5;
    CHECK_STR_EQ(serve_metrics_format_float(b, buf, sizeof(buf)), "2.2500000000000005e-05");
    CHECK_STR_EQ(go_format_float(1764771234567.1235, 'f', buf, sizeof(buf)), "1764771234567.1235");
    CHECK_STR_EQ(go_format_float(1e21, 'f', buf, sizeof(buf)), "1000000000000000000000");
}

/* ---- the event recorder: client-go's series ---------------------------------------------- */

static struct serve_event rec_event(const char *pod, const char *rv)
{
    struct serve_event ev = {{"ns", pod, "uid-1", rv},
                             NULL,
                             "Warning",
                             "FailedScheduling",
                             "Scheduling",
                             "0/1 nodes are available: 1 Insufficient cpu.",
                             "gpusched",
                             "gpusched-h"};
    return ev;
}

static void recorder_aggregates_into_a_series(void)
{
    struct serve_recorder *r = serve_recorder_new(100, 1);
    struct serve_event ev = rec_event("p", "5");
    struct timespec t0 = {1787140800, 0}, t = t0;
    struct serve_event_job *j, *next;
    json_t *body;
    bool nomem;

    /* the first tick runs finish and refresh on an empty cache */
    CHECK(serve_recorder_tick(r, &t) == NULL);
    j = serve_recorder_event(r, &ev, &t, &nomem);
    CHECK(j && !nomem && j->verb == SERVE_EVENT_CREATE && !j->series);
    CHECK_STR_EQ(j->name, "p.18cd3316c39b8000");
    CHECK_INT_EQ(serve_recorder_done(r, j, 201, &t, &next), SERVE_EVENT_WRITTEN);
    /* the second occurrence: a patch of the series, count 2 */
    t.tv_sec += 10;
    j = serve_recorder_event(r, &ev, &t, &nomem);
    CHECK(j && j->verb == SERVE_EVENT_PATCH && j->series);
    CHECK_STR_EQ(j->name, "p.18cd3316c39b8000");
    CHECK_STR_EQ(j->body,
                 "{\"series\":{\"count\":2,\"lastObservedTime\":\"2026-08-19T12:00:10.000000Z\"}}");
    /* the create it falls back on after a 404: the whole Event, its series included, under
     * its first name and time */
    body = json_loads(j->create_body, 0, NULL);
    CHECK(body != NULL);
    CHECK_INT_EQ(json_integer_value(json_object_get(json_object_get(body, "series"), "count")), 2);
    CHECK_STR_EQ(json_string_value(json_object_get(body, "eventTime")),
                 "2026-08-19T12:00:00.000000Z");
    CHECK_STR_EQ(
        json_string_value(json_object_get(json_object_get(body, "regarding"), "resourceVersion")),
        "5");
    json_decref(body);
    CHECK_INT_EQ(serve_recorder_done(r, j, 200, &t, &next), SERVE_EVENT_WRITTEN);
    /* later occurrences only count */
    t.tv_sec += 10;
    CHECK(serve_recorder_event(r, &ev, &t, &nomem) == NULL && !nomem);
    t.tv_sec += 10;
    CHECK(serve_recorder_event(r, &ev, &t, &nomem) == NULL && !nomem);
    /* another resourceVersion of the pod is another Event (the key has the reference) */
    ev = rec_event("p", "6");
    j = serve_recorder_event(r, &ev, &t, &nomem);
    CHECK(j && j->verb == SERVE_EVENT_CREATE);
    CHECK_INT_EQ(serve_recorder_done(r, j, 201, &t, &next), SERVE_EVENT_WRITTEN);
    CHECK_INT_EQ(serve_recorder_size(r), 2);
    /* 6 minutes after the first tick: the series seen 5.5 min ago is not finished yet */
    t = t0;
    t.tv_sec += 360;
    CHECK(serve_recorder_tick(r, &t) == NULL);
    /* 12 minutes: its final count goes out and it leaves the cache; the single Event (6 min
     * old by then) leaves quietly */
    t.tv_sec += 360;
    j = serve_recorder_tick(r, &t);
    CHECK(j && !j->next && j->verb == SERVE_EVENT_PATCH && j->periodic && j->finish);
    CHECK_STR_EQ(j->body,
                 "{\"series\":{\"count\":4,\"lastObservedTime\":\"2026-08-19T12:00:30.000000Z\"}}");
    CHECK_INT_EQ(serve_recorder_size(r), 1);
    CHECK_INT_EQ(serve_recorder_done(r, j, 200, &t, &next), SERVE_EVENT_WRITTEN);
    CHECK_INT_EQ(serve_recorder_size(r), 0);
    serve_recorder_free(r);
}

static void recorder_recreates_an_expired_event(void)
{
    struct serve_recorder *r = serve_recorder_new(100, 1);
    struct serve_event ev = rec_event("p", "5");
    struct timespec t = {1787140800, 0};
    struct serve_event_job *j, *next;
    bool nomem;

    /* the first tick (finish and refresh on an empty cache): the next periodic writes are
     * 6 and 30 minutes away */
    CHECK(serve_recorder_tick(r, &t) == NULL);
    j = serve_recorder_event(r, &ev, &t, &nomem);
    CHECK_INT_EQ(serve_recorder_done(r, j, 201, &t, &next), SERVE_EVENT_WRITTEN);
    j = serve_recorder_event(r, &ev, &t, &nomem);
    /* the Event expired on the server: the patch gets 404, the Event is created again */
    CHECK_INT_EQ(serve_recorder_done(r, j, 404, &t, &next), SERVE_EVENT_CREATE_NEXT);
    CHECK(next == j && next->verb == SERVE_EVENT_CREATE && strstr(next->body, "\"series\":"));
    /* that create answered 409 (it exists after all): a series retries, after 10-12.5 s */
    CHECK_INT_EQ(serve_recorder_done(r, next, 409, &t, &next), SERVE_EVENT_RETRY);
    t.tv_sec += 9;
    CHECK(serve_recorder_tick(r, &t) == NULL); /* not before 10 s */
    {
        struct timespec later = t;
        struct serve_event_job *due;

        later.tv_sec += 4;
        due = serve_recorder_tick(r, &later);
        CHECK(due && due->verb == SERVE_EVENT_CREATE && due->tries == 1);
        /* a refusal that is not AlreadyExists drops it */
        CHECK_INT_EQ(serve_recorder_done(r, due, 422, &later, &next), SERVE_EVENT_REJECTED);
    }
    serve_recorder_free(r);
}

static void recorder_retries_twelve_times(void)
{
    struct serve_recorder *r = serve_recorder_new(100, 7);
    struct serve_event ev = rec_event("q", "1");
    struct timespec t = {1787140800, 0};
    struct serve_event_job *j, *next;
    bool nomem;
    int i;

    CHECK(serve_recorder_tick(r, &t) == NULL);
    j = serve_recorder_event(r, &ev, &t, &nomem);
    for (i = 1; i < 12; i++) {
        struct serve_event_job *due;

        CHECK_INT_EQ(serve_recorder_done(r, j, 0, &t, &next), SERVE_EVENT_RETRY);
        t.tv_sec += 9; /* never before 10 s */
        CHECK(serve_recorder_tick(r, &t) == NULL);
        t.tv_sec += 4; /* always by 12.5 s */
        due = serve_recorder_tick(r, &t);
        CHECK(due != NULL);
        if (!due)
            break;
        j = due;
    }
    CHECK_INT_EQ(serve_recorder_done(r, j, 0, &t, &next), SERVE_EVENT_GAVE_UP);
    /* a single Event's create answered 409 is dropped quietly */
    ev = rec_event("q", "2");
    j = serve_recorder_event(r, &ev, &t, &nomem);
    CHECK_INT_EQ(serve_recorder_done(r, j, 409, &t, &next), SERVE_EVENT_ALREADY_EXISTS);
    serve_recorder_free(r);
}

static void recorder_keeps_at_most_cap(void)
{
    struct serve_recorder *r = serve_recorder_new(3, 1);
    struct timespec t = {1787140800, 0};
    struct serve_event_job *j, *next;
    char name[16];
    bool nomem;
    int i;

    for (i = 0; i < 5; i++) {
        struct serve_event ev;

        snprintf(name, sizeof(name), "p%d", i);
        ev = rec_event(name, "1");
        j = serve_recorder_event(r, &ev, &t, &nomem);
        CHECK(j != NULL);
        serve_recorder_done(r, j, 201, &t, &next);
    }
    CHECK_INT_EQ(serve_recorder_size(r), 3);
    {
        /* p0 was the least recently seen: forgotten, so it is created again */
        struct serve_event ev = rec_event("p0", "1");

        j = serve_recorder_event(r, &ev, &t, &nomem);
        CHECK(j && j->verb == SERVE_EVENT_CREATE);
        serve_event_job_free(j);
        /* p4 is still known: its second occurrence makes a series */
        ev = rec_event("p4", "1");
        j = serve_recorder_event(r, &ev, &t, &nomem);
        CHECK(j && j->verb == SERVE_EVENT_PATCH);
        serve_event_job_free(j);
    }
    serve_recorder_free(r);
}

static int probe_handler(void *ud, const struct httpd_req *req, struct buf *body,
                         const char **ctype)
{
    (void)ud;
    (void)ctype;
    if (!strcmp(req->path, "/healthz")) {
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
    mono_sleep_ms(50); /* let the server take the idle ones first */
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

/* the Authorization header of a request head: any case, spaces trimmed, the first one, never
 * past the blank line */
static void httpd_request_headers(void)
{
    static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nauthorization:   Bearer abc \r\n"
                              "Authorization: Bearer second\r\n\r\nAuthorization: Bearer body\r\n";
    static const char none[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nAuthorization: x\r\n";
    char v[64];

    CHECK(httpd_request_header(req, strlen(req), "Authorization", v, sizeof(v)));
    CHECK_STR_EQ(v, "Bearer abc");
    CHECK(httpd_request_header(req, strlen(req), "host", v, sizeof(v)));
    CHECK_STR_EQ(v, "x");
    CHECK(!httpd_request_header(none, strlen(none), "Authorization", v, sizeof(v)));
    CHECK(!httpd_request_header(req, strlen(req), "Cookie", v, sizeof(v)));
    CHECK(httpd_request_header(req, strlen(req), "Authorization", v, 4));
    CHECK_STR_EQ(v, "Bea");
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

/* NewMilliQuantity(m, format).String(), as apimachinery v0.37.2 writes them */
static void drashare_quantities_canonical(void)
{
    static const struct {
        int64_t milli;
        enum serve_qformat f;
        const char *want;
    } cases[] = {
        {2147483648000LL, SERVE_QF_BINARY_SI, "2Gi"},
        {1536000, SERVE_QF_BINARY_SI, "1536"},
        {1000000, SERVE_QF_BINARY_SI, "1k"},
        {1500000, SERVE_QF_DECIMAL_SI, "1500"},
        {2000000000, SERVE_QF_DECIMAL_SI, "2M"},
        {1500, SERVE_QF_DECIMAL_SI, "1500m"},
        {500, SERVE_QF_BINARY_SI, "500m"},
        {10000000, SERVE_QF_DECIMAL_EXPONENT, "10e3"},
        {5000, SERVE_QF_DECIMAL_EXPONENT, "5"},
        {100, SERVE_QF_DECIMAL_EXPONENT, "100e-3"},
        {1025500, SERVE_QF_BINARY_SI, "1025500m"},
        {3072000, SERVE_QF_BINARY_SI, "3Ki"},
        {0, SERVE_QF_BINARY_SI, "0"},
    };
    size_t i;
    char buf[64];

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        CHECK_STR_EQ(serve_quantity_canonical((kube_nano)cases[i].milli * 1000000, cases[i].f, buf,
                                              sizeof(buf)),
                     cases[i].want);
    CHECK_INT_EQ(serve_quantity_format("1E"), SERVE_QF_DECIMAL_SI);
    CHECK_INT_EQ(serve_quantity_format("1e3"), SERVE_QF_DECIMAL_EXPONENT);
    CHECK_INT_EQ(serve_quantity_format("1Ki"), SERVE_QF_BINARY_SI);
    CHECK_INT_EQ(serve_quantity_format("1.5"), SERVE_QF_DECIMAL_SI);
}

/* GetConsumedCapacityFromRequest's sources: default, value, request, min, valid values, a
 * step rounding in the step's format */
static void drashare_consumed_capacity_texts(void)
{
    json_t *dev = json_loads(
        "{\"capacity\":{"
        "\"a\":{\"value\":\"16Gi\",\"requestPolicy\":{\"default\":\"1Gi\",\"validRange\":"
        "{\"min\":\"1Gi\",\"step\":\"1Gi\"}}},"
        "\"b\":{\"value\":\"8\"},"
        "\"c\":{\"value\":\"100\",\"requestPolicy\":{\"validValues\":[\"10\",\"50\"]}},"
        "\"d\":{\"value\":\"4Gi\",\"requestPolicy\":{\"validRange\":{\"min\":\"2Gi\"}}}}}",
        0, NULL);
    json_t *req = json_loads("{\"capacity\":{\"requests\":{\"a\":\"1500Mi\",\"c\":\"20\","
                             "\"d\":\"1Gi\"}}}",
                             0, NULL);
    const kube_nano G = (kube_nano)1073741824 * KUBE_NANO_PER_UNIT;
    struct dra_consumed c[] = {
        {"a", 2 * G}, {"b", 8 * KUBE_NANO_PER_UNIT}, {"c", 50 * KUBE_NANO_PER_UNIT}, {"d", 2 * G}};
    json_t *out = serve_dra_consumed_capacity(dev, req, c, 4), *none;
    char *text = out ? json_dumps(out, JSON_SORT_KEYS | JSON_COMPACT) : NULL;

    CHECK_STR_EQ(text, "{\"a\":\"2Gi\",\"b\":\"8\",\"c\":\"50\",\"d\":\"2Gi\"}");
    free(text);
    json_decref(out);
    /* no request: the default, else the capacity's value */
    none = json_object();
    out = serve_dra_consumed_capacity(dev, none, c, 2);
    text = out ? json_dumps(out, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
    CHECK_STR_EQ(text, "{\"a\":\"1Gi\",\"b\":\"8\"}");
    free(text);
    json_decref(out);
    CHECK(serve_dra_consumed_capacity(dev, none, c, 0) == NULL);
    json_decref(none);
    json_decref(dev);
    json_decref(req);
}

static void drashare_share_id_is_a_random_uuid(void)
{
    char a[37], b[37];
    size_t i;

    CHECK_INT_EQ(serve_dra_share_id(a), 0);
    CHECK_INT_EQ(serve_dra_share_id(b), 0);
    CHECK(strcmp(a, b) != 0);
    CHECK_INT_EQ(strlen(a), 36);
    CHECK(a[8] == '-' && a[13] == '-' && a[18] == '-' && a[23] == '-');
    CHECK(a[14] == '4' && strchr("89ab", a[19]));
    for (i = 0; i < 36; i++)
        CHECK(a[i] == '-' || strchr("0123456789abcdef", a[i]));
}

static void pending_condition_changes_with_reason_or_message(void)
{
    json_t *obj =
        json_loads("{\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\",\"uid\":\"u\"},"
                   "\"spec\":{\"containers\":[]},\"status\":{\"conditions\":["
                   "{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"X\",\"message\":\"m\"},"
                   "{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\","
                   "\"message\":\"0/1 nodes are available\"}]}}",
                   0, NULL);
    struct serve_pending *pp = serve_pending_new(obj);

    /* kube-scheduler's podutil.UpdatePodCondition against the informer's pod: status,
     * reason and message compared */
    CHECK(pp != NULL);
    CHECK(!serve_pending_condition_changed(pp, "Unschedulable", "0/1 nodes are available"));
    CHECK(serve_pending_condition_changed(pp, "SchedulerError", "0/1 nodes are available"));
    CHECK(serve_pending_condition_changed(pp, "Unschedulable", "other"));
    serve_pending_free(pp);
    /* PodScheduled True (or none): any False condition is a change */
    json_object_set_new(
        json_array_get(json_object_get(json_object_get(obj, "status"), "conditions"), 1), "status",
        json_string("True"));
    pp = serve_pending_new(obj);
    CHECK(pp && serve_pending_condition_changed(pp, "Unschedulable", "0/1 nodes are available"));
    serve_pending_free(pp);
    json_decref(obj);
}

static const struct test_case cases[] = {
    {"event note truncated at 1024 bytes with ' ...'", events_note_truncates_like_kube_scheduler},
    {"binding body", events_binding_body},
    {"events.k8s.io/v1 event body", events_event_body},
    {"JSON strings escaped", events_strings_are_escaped},
    {"PodScheduled condition patch", events_condition_patch},
    {"lease body", events_lease_body},
    {"metrics text exposition", metrics_render_has_families},
    {"metric numbers as Go writes them", metrics_numbers_as_go_writes_them},
    {"binding-conditions metrics", metrics_binding_conditions_families},
    {"recorder aggregates repeated events into a series", recorder_aggregates_into_a_series},
    {"recorder creates an expired series again", recorder_recreates_an_expired_event},
    {"recorder retries a write 12 times", recorder_retries_twelve_times},
    {"recorder keeps at most its cap", recorder_keeps_at_most_cap},
    {"probe server answers GET", httpd_answers_probes},
    {"idle clients do not delay probes", httpd_idle_clients_do_not_delay_probes},
    {"request parser", httpd_request_parser},
    {"request headers", httpd_request_headers},
    {"consumed capacity quantities canonical", drashare_quantities_canonical},
    {"consumed capacity texts as the allocator copies them", drashare_consumed_capacity_texts},
    {"shareID is a random UUID", drashare_share_id_is_a_random_uuid},
    {"a PodScheduled condition changes with its reason or its message",
     pending_condition_changes_with_reason_or_message},
};

TEST_SUITE(sched_serve_parts, cases)
