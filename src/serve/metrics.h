/* metrics.h - the counters, gauges and histograms gpusched serve exposes on /metrics.
 *
 * One struct serve_metrics per process, written by the scheduling loop, the binder's thread
 * and the leader elector (every update takes the struct's mutex, so any thread may call) and
 * rendered in the Prometheus text format (version 0.0.4). A family with a kube-scheduler
 * v1.37 equivalent has kube-scheduler's name, type, HELP text (with its stability prefix),
 * labels and bucket boundaries, and the same meaning (docs/serve.md, "Metrics"); gpusched's
 * own extras are named gpusched_*. */
#ifndef SERVE_METRICS_H
#define SERVE_METRICS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

#define SERVE_HIST_MAX 20 /* buckets of the widest histogram (the SLI's), +Inf apart */

/* The bucket boundaries of a histogram: count upper bounds start, start x factor, ...
 * (client_golang's ExponentialBuckets, computed the same way so the doubles are equal). */
struct serve_hist_spec {
    double start, factor;
    int count;
};

struct serve_histogram {
    const struct serve_hist_spec *spec;
    uint64_t counts[SERVE_HIST_MAX + 1]; /* per bucket, not cumulative; [spec->count] is +Inf */
    uint64_t count;
    double sum;
};

enum serve_attempt_result {
    SERVE_RESULT_SCHEDULED = 0,
    SERVE_RESULT_UNSCHEDULABLE,
    SERVE_RESULT_ERROR,
    SERVE_RESULT_COUNT,
};

/* scheduler_pending_pods' queue label */
enum serve_pending_queue {
    SERVE_PENDING_ACTIVE = 0,
    SERVE_PENDING_BACKOFF,
    SERVE_PENDING_UNSCHEDULABLE,
    SERVE_PENDING_GATED,
    SERVE_PENDING_COUNT,
};

#define SERVE_SLI_LABELS 15 /* attempts "1" .. "14", "15+" */

/* scheduler_dra_bindingconditions_*'s status label (in label-value order) */
enum serve_bc_status {
    SERVE_BC_ERROR = 0, /* "error": anything else, e.g. a claim gone */
    SERVE_BC_FAILURE,   /* "failure": a bindingFailureConditions condition True */
    SERVE_BC_SUCCESS,   /* "success" */
    SERVE_BC_TIMEOUT,   /* "timeout": the binding timeout */
    SERVE_BC_COUNT,
};

#define SERVE_BC_CHILDREN 256 /* label sets kept at most (drivers x profiles x statuses) */

/* One label set (profile, driver, status) of the binding-conditions families. */
struct serve_bc_child {
    const char *profile; /* borrowed: a profile's name */
    char *driver;
    enum serve_bc_status status;
    bool counted;                /* the allocations counter has this child */
    uint64_t allocations;        /* scheduler_dra_bindingconditions_allocations_total */
    struct serve_histogram wait; /* scheduler_dra_bindingconditions_wait_duration_seconds */
};

/* What is counted per profile (kube-scheduler's profile label: the pod's schedulerName). */
struct serve_profile_metrics {
    const char *name; /* borrowed */
    bool touched[SERVE_RESULT_COUNT];
    uint64_t attempts[SERVE_RESULT_COUNT];
    struct serve_histogram attempt_duration[SERVE_RESULT_COUNT];
    bool bind_touched[2];
    struct serve_histogram bind_duration[2]; /* status Success, Error */
};

struct serve_metrics {
    pthread_mutex_t mu;
    struct serve_profile_metrics *profiles; /* at least one */
    size_t nprofiles;
    struct serve_histogram algorithm_duration; /* cycle start to decision, preemption included */
    bool sli_touched[SERVE_SLI_LABELS];
    struct serve_histogram sli[SERVE_SLI_LABELS]; /* first active to bound, by attempts */
    struct serve_histogram pod_attempts;          /* attempts of each bound pod */
    struct serve_histogram preemption_victims;    /* victims of each preemption */
    uint64_t preemption_attempts;
    uint64_t scheduled_after_flush;
    uint64_t pending[SERVE_PENDING_COUNT];
    bool entities_touched[SERVE_PENDING_COUNT]; /* queued_entities: a queue that held a pod */
    uint64_t cache_nodes, cache_pods, cache_assumed;
    /* dynamic_resource_allocation_resourceclaim_creates_total (owner a Pod, no admin access):
     * [0] status failure, [1] success; a child appears once counted */
    uint64_t claim_creates[2];
    /* the binding-conditions families' children, sorted by driver, profile, status */
    struct serve_bc_child *bc;
    size_t nbc;
    /* gpusched's own */
    uint64_t in_flight_binds, bind_conflicts, bind_not_found;
    uint64_t events_created, events_patched, event_errors;
    uint64_t status_patches, status_patch_errors;
    uint64_t relists_nodes, relists_pods;
    int ready; /* informers synced */
    /* leader election: rendered only when elect is set */
    bool elect;
    const char *lease_name; /* leader_election_master_status's name label; borrowed */
    int leader;
    uint64_t leader_slowpath;
    double start_time; /* process_start_time_seconds */
};

/* serve_metrics_init zeroes m; the profile label values are names[0..n-1] (borrowed, n >= 1).
 * Returns 0 or -ENOMEM. _destroy frees what m holds. */
int serve_metrics_init(struct serve_metrics *m, const char *const *names, size_t n);
void serve_metrics_release(struct serve_metrics *m);

/* serve_metrics_profile returns the profile metrics for schedulerName name (the first
 * profile's when name is none of them). Its pointer is stable; update under m->mu. */
struct serve_profile_metrics *serve_metrics_profile(struct serve_metrics *m, const char *name);

/* The observations, each taking the mutex:
 * _attempt: one scheduling attempt of profile p ended (scheduler_schedule_attempts_total and
 *   scheduler_scheduling_attempt_duration_seconds; seconds from the cycle's start, the bind
 *   included for a scheduled or failed-bind attempt);
 * _bound: a pod of profile p is bound: its attempt (as _attempt with SCHEDULED), its attempts
 *   (scheduler_pod_scheduling_attempts), the SLI since it first became active, and whether it
 *   left the unschedulable pods by the periodic flush;
 * _bind: the Bind extension point took seconds (ok: status Success, else Error);
 * _observe: one sample into histogram h (_add and _set, metrics-int.h, are serve's own). */
void serve_metrics_attempt(struct serve_metrics *m, struct serve_profile_metrics *p,
                           enum serve_attempt_result r, double seconds);
void serve_metrics_bound(struct serve_metrics *m, struct serve_profile_metrics *p, double seconds,
                         int attempts, double sli_seconds, bool flushed);
void serve_metrics_bind(struct serve_metrics *m, struct serve_profile_metrics *p, bool ok,
                        double seconds);
void serve_metrics_observe(struct serve_metrics *m, struct serve_histogram *h, double v);

/* serve_metrics_binding_conditions: one allocation result (a device of driver) of a pod of
 * profile p whose PreBind waited seconds for binding conditions, ending with status:
 * scheduler_dra_bindingconditions_wait_duration_seconds observes seconds, and
 * scheduler_dra_bindingconditions_allocations_total counts 1 when the result has binding
 * conditions (kube-scheduler's DynamicResources PreBind, after its wait, does both for each
 * result of each allocated claim of the pod). Beyond SERVE_BC_CHILDREN label sets a new
 * one is not recorded. */
void serve_metrics_binding_conditions(struct serve_metrics *m, struct serve_profile_metrics *p,
                                      const char *driver, enum serve_bc_status status,
                                      bool with_conditions, double seconds);

/* serve_metrics_set_pending sets the pods in one part of the queue; the caller holds m->mu. */
void serve_metrics_set_pending(struct serve_metrics *m, enum serve_pending_queue q, uint64_t n);

/* serve_metrics_render appends the Prometheus text exposition of m and the process metrics
 * (process_cpu_seconds_total, process_resident_memory_bytes, ...) to out. Returns 0 or a
 * negative buffer error. */
int serve_metrics_render(struct serve_metrics *m, struct buf *out);

/* serve_metrics_format_float writes v as Go's strconv.FormatFloat(v, 'g', -1, 64) does (the
 * Prometheus text format's numbers: "0.001", "16.384", "1e-05", "1e+06", "+Inf"). */
const char *serve_metrics_format_float(double v, char *buf, size_t size);

/* serve_histogram_quantile estimates quantile q (0..1) from the buckets, interpolating
 * linearly inside the bucket that holds it (as Prometheus does). 0 when empty. */
double serve_histogram_quantile(const struct serve_histogram *h, double q);

#endif
