/* metrics.h - the counters, gauges and histograms gpusched serve exposes on /metrics.
 *
 * One struct sched_metrics per process, written by the scheduling loop and the bind workers
 * (every update takes the struct's mutex, so any thread may call) and rendered in the
 * Prometheus text format (version 0.0.4). Metric names follow kube-scheduler's where one
 * exists (scheduler_schedule_attempts_total, scheduler_pending_pods, ...). */
#ifndef SCHED_METRICS_H
#define SCHED_METRICS_H

#include <pthread.h>
#include <stdint.h>

#include "base/buf.h"

#define SCHED_HIST_BUCKETS 24 /* 100 us doubling: 0.0001 .. 838.9 s, then +Inf */

struct sched_histogram {
    uint64_t counts[SCHED_HIST_BUCKETS + 1]; /* per bucket, not cumulative; last is +Inf */
    uint64_t count;
    double sum;
};

enum sched_attempt_result {
    SCHED_RESULT_SCHEDULED = 0,
    SCHED_RESULT_UNSCHEDULABLE,
    SCHED_RESULT_ERROR,
    SCHED_RESULT_COUNT,
};

struct sched_metrics {
    pthread_mutex_t mu;
    const char *profile; /* label value, borrowed */
    uint64_t attempts[SCHED_RESULT_COUNT];
    struct sched_histogram attempt_duration;   /* one scheduling cycle, pop to decision */
    struct sched_histogram algorithm_duration; /* filter + score only */
    struct sched_histogram e2e_duration;       /* first enqueue to successful bind */
    struct sched_histogram bind_duration;      /* the binding POST */
    uint64_t pending_active, pending_backoff, pending_unschedulable, in_flight_binds;
    uint64_t binds_total, bind_errors, bind_conflicts, bind_not_found;
    uint64_t preemption_attempts, preemption_victims;
    uint64_t events_sent, event_errors, status_patches, status_patch_errors;
    uint64_t relists_nodes, relists_pods, watch_restarts;
    uint64_t cache_nodes, cache_pods;
    int leader;     /* 1 when this replica holds the lease (or leader election is off) */
    int ready;      /* informers synced */
};

/* sched_metrics_init zeroes m and sets the profile label; _destroy frees the mutex. */
void sched_metrics_init(struct sched_metrics *m, const char *profile);
void sched_metrics_destroy(struct sched_metrics *m);

/* sched_histogram_observe adds one sample (seconds) to h; the caller holds m->mu. */
void sched_histogram_observe(struct sched_histogram *h, double seconds);

/* sched_metrics_observe takes the mutex and adds one sample to the histogram *h of m. */
void sched_metrics_observe(struct sched_metrics *m, struct sched_histogram *h, double seconds);

/* sched_metrics_add takes the mutex and adds delta to one counter of m. */
void sched_metrics_add(struct sched_metrics *m, uint64_t *counter, uint64_t delta);

/* sched_metrics_set takes the mutex and sets one gauge of m. */
void sched_metrics_set(struct sched_metrics *m, uint64_t *gauge, uint64_t value);

/* sched_metrics_render appends the Prometheus text exposition of m (and process metrics:
 * CPU seconds, resident memory) to out. Returns 0 or a negative buffer error. */
int sched_metrics_render(struct sched_metrics *m, struct buf *out);

/* sched_histogram_quantile estimates quantile q (0..1) from the buckets, interpolating
 * linearly inside the bucket that holds it (as Prometheus does). 0 when empty. */
double sched_histogram_quantile(const struct sched_histogram *h, double q);

#endif
