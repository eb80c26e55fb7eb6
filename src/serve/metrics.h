/* metrics.h - the counters, gauges and histograms gpusched serve exposes on /metrics.
 *
 * One struct serve_metrics per process, written by the scheduling loop and the bind workers
 * (every update takes the struct's mutex, so any thread may call) and rendered in the
 * Prometheus text format (version 0.0.4). Metric names follow kube-scheduler's where one
 * exists (scheduler_schedule_attempts_total, scheduler_pending_pods, ...). */
#ifndef SERVE_METRICS_H
#define SERVE_METRICS_H

#include <pthread.h>
#include <stdint.h>

#include "base/buf.h"

#define SERVE_HIST_BUCKETS 24 /* 100 us doubling: 0.0001 .. 838.9 s, then +Inf */

struct serve_histogram {
    uint64_t counts[SERVE_HIST_BUCKETS + 1]; /* per bucket, not cumulative; last is +Inf */
    uint64_t count;
    double sum;
};

enum serve_attempt_result {
    SERVE_RESULT_SCHEDULED = 0,
    SERVE_RESULT_UNSCHEDULABLE,
    SERVE_RESULT_ERROR,
    SERVE_RESULT_COUNT,
};

struct serve_metrics {
    pthread_mutex_t mu;
    const char *profile; /* label value, borrowed */
    uint64_t attempts[SERVE_RESULT_COUNT];
    struct serve_histogram attempt_duration;   /* one scheduling cycle, pop to decision */
    struct serve_histogram algorithm_duration; /* filter + score only */
    struct serve_histogram e2e_duration;       /* first enqueue to successful bind */
    struct serve_histogram bind_duration;      /* the binding POST */
    uint64_t pending_active, pending_backoff, pending_unschedulable, in_flight_binds;
    uint64_t binds_total, bind_errors, bind_conflicts, bind_not_found;
    uint64_t preemption_attempts, preemption_victims;
    uint64_t events_sent, event_errors, status_patches, status_patch_errors;
    uint64_t relists_nodes, relists_pods, watch_restarts;
    uint64_t cache_nodes, cache_pods;
    int leader; /* 1 when this replica holds the lease (or leader election is off) */
    int ready;  /* informers synced */
};

/* serve_metrics_init zeroes m and sets the profile label; _destroy frees the mutex. */
void serve_metrics_init(struct serve_metrics *m, const char *profile);
void serve_metrics_destroy(struct serve_metrics *m);

/* serve_histogram_observe adds one sample (seconds) to h; the caller holds m->mu. */
void serve_histogram_observe(struct serve_histogram *h, double seconds);

/* serve_metrics_observe takes the mutex and adds one sample to the histogram *h of m. */
void serve_metrics_observe(struct serve_metrics *m, struct serve_histogram *h, double seconds);

/* serve_metrics_add takes the mutex and adds delta to one counter of m. */
void serve_metrics_add(struct serve_metrics *m, uint64_t *counter, uint64_t delta);

/* serve_metrics_set takes the mutex and sets one gauge of m. */
void serve_metrics_set(struct serve_metrics *m, uint64_t *gauge, uint64_t value);

/* serve_metrics_render appends the Prometheus text exposition of m (and process metrics:
 * CPU seconds, resident memory) to out. Returns 0 or a negative buffer error. */
int serve_metrics_render(struct serve_metrics *m, struct buf *out);

/* serve_histogram_quantile estimates quantile q (0..1) from the buckets, interpolating
 * linearly inside the bucket that holds it (as Prometheus does). 0 when empty. */
double serve_histogram_quantile(const struct serve_histogram *h, double q);

#endif
