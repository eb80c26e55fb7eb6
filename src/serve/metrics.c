/* metrics.c - Prometheus text rendering of gpusched serve's metrics (see metrics.h). */
#include "serve/metrics.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static double hist_bound(int i)
{
    double b = 0.0001;

    while (i-- > 0)
        b *= 2;
    return b;
}

void serve_metrics_init(struct serve_metrics *m, const char *profile)
{
    memset(m, 0, sizeof(*m));
    pthread_mutex_init(&m->mu, NULL);
    m->profile = profile;
}

void serve_metrics_destroy(struct serve_metrics *m)
{
    pthread_mutex_destroy(&m->mu);
}

void serve_histogram_observe(struct serve_histogram *h, double seconds)
{
    int i;

    for (i = 0; i < SERVE_HIST_BUCKETS; i++)
        if (seconds <= hist_bound(i))
            break;
    h->counts[i]++;
    h->count++;
    h->sum += seconds;
}

void serve_metrics_observe(struct serve_metrics *m, struct serve_histogram *h, double seconds)
{
    pthread_mutex_lock(&m->mu);
    serve_histogram_observe(h, seconds);
    pthread_mutex_unlock(&m->mu);
}

void serve_metrics_add(struct serve_metrics *m, uint64_t *counter, uint64_t delta)
{
    pthread_mutex_lock(&m->mu);
    *counter += delta;
    pthread_mutex_unlock(&m->mu);
}

void serve_metrics_set(struct serve_metrics *m, uint64_t *gauge, uint64_t value)
{
    pthread_mutex_lock(&m->mu);
    *gauge = value;
    pthread_mutex_unlock(&m->mu);
}

double serve_histogram_quantile(const struct serve_histogram *h, double q)
{
    double want, seen = 0;
    int i;

    if (!h->count)
        return 0;
    want = q * (double)h->count;
    for (i = 0; i <= SERVE_HIST_BUCKETS; i++) {
        double lo = i ? hist_bound(i - 1) : 0, hi;

        if (!h->counts[i] || seen + (double)h->counts[i] < want) {
            seen += (double)h->counts[i];
            continue;
        }
        if (i == SERVE_HIST_BUCKETS)
            return lo;
        /* linear inside the bucket, as Prometheus' histogram_quantile */
        hi = hist_bound(i);
        return lo + (hi - lo) * (want - seen) / (double)h->counts[i];
    }
    return hist_bound(SERVE_HIST_BUCKETS - 1);
}

static int render_hist(struct buf *o, const char *name, const char *help, const char *labels,
                       const struct serve_histogram *h)
{
    uint64_t cum = 0;
    int i, r = 0;

    r |= buf_printf(o, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    for (i = 0; i < SERVE_HIST_BUCKETS; i++) {
        cum += h->counts[i];
        r |= buf_printf(o, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, *labels ? "," : "",
                        hist_bound(i), (unsigned long long)cum);
    }
    cum += h->counts[SERVE_HIST_BUCKETS];
    r |= buf_printf(o, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, *labels ? "," : "",
                    (unsigned long long)cum);
    r |= buf_printf(o, "%s_sum{%s} %.9g\n%s_count{%s} %llu\n", name, labels, h->sum, name, labels,
                    (unsigned long long)h->count);
    return r;
}

static int render_one(struct buf *o, const char *type, const char *name, const char *help,
                      uint64_t v)
{
    return buf_printf(o, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", name, help, name, type, name,
                      (unsigned long long)v);
}

/* process_rss_bytes reads the resident set from /proc/self/statm. */
static long long process_rss_bytes(void)
{
    long long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");

    if (!f)
        return 0;
    if (fscanf(f, "%lld %lld", &pages, &rss) != 2)
        rss = 0;
    fclose(f);
    return rss * sysconf(_SC_PAGESIZE);
}

int serve_metrics_render(struct serve_metrics *m, struct buf *o)
{
    static const char *results[SERVE_RESULT_COUNT] = {"scheduled", "unschedulable", "error"};
    char labels[160];
    struct rusage ru;
    int r = 0, i;

    pthread_mutex_lock(&m->mu);
    r |= buf_printf(o, "# HELP scheduler_schedule_attempts_total Number of attempts to "
                       "schedule pods, by the result.\n"
                       "# TYPE scheduler_schedule_attempts_total counter\n");
    for (i = 0; i < SERVE_RESULT_COUNT; i++)
        r |= buf_printf(o, "scheduler_schedule_attempts_total{profile=\"%s\",result=\"%s\"} %llu\n",
                        m->profile, results[i], (unsigned long long)m->attempts[i]);
    snprintf(labels, sizeof(labels), "profile=\"%s\"", m->profile);
    r |= render_hist(o, "scheduler_scheduling_attempt_duration_seconds",
                     "Scheduling attempt latency in seconds (algorithm + assume).", labels,
                     &m->attempt_duration);
    r |= render_hist(o, "scheduler_scheduling_algorithm_duration_seconds",
                     "Scheduling algorithm latency in seconds (filter and score).", "",
                     &m->algorithm_duration);
    r |= render_hist(o, "scheduler_e2e_scheduling_duration_seconds",
                     "From the pod entering the queue to its binding succeeding, in seconds.",
                     labels, &m->e2e_duration);
    r |= render_hist(o, "gpusched_binding_duration_seconds",
                     "Latency of the binding POST in seconds.", "", &m->bind_duration);
    r |= buf_printf(o,
                    "# HELP scheduler_pending_pods Number of pending pods, by the queue "
                    "type.\n# TYPE scheduler_pending_pods gauge\n"
                    "scheduler_pending_pods{queue=\"active\"} %llu\n"
                    "scheduler_pending_pods{queue=\"backoff\"} %llu\n"
                    "scheduler_pending_pods{queue=\"unschedulable\"} %llu\n",
                    (unsigned long long)m->pending_active, (unsigned long long)m->pending_backoff,
                    (unsigned long long)m->pending_unschedulable);
    r |= render_one(o, "gauge", "gpusched_binds_in_flight", "Bindings sent and not yet answered.",
                    m->in_flight_binds);
    r |= render_one(o, "counter", "gpusched_binds_total", "Successful bindings.", m->binds_total);
    r |= render_one(o, "counter", "gpusched_bind_errors_total",
                    "Failed bindings (any cause, 409 and 404 included).", m->bind_errors);
    r |= render_one(o, "counter", "gpusched_bind_conflicts_total",
                    "Bindings answered 409 Conflict (pod already assigned).", m->bind_conflicts);
    r |= render_one(o, "counter", "gpusched_bind_not_found_total",
                    "Bindings answered 404 (pod deleted).", m->bind_not_found);
    r |= render_one(o, "counter", "scheduler_preemption_attempts_total",
                    "Preemption attempts that chose victims.", m->preemption_attempts);
    r |= render_one(o, "counter", "gpusched_preemption_victims_total", "Pods deleted as victims.",
                    m->preemption_victims);
    r |= render_one(o, "counter", "gpusched_events_total", "Events written.", m->events_sent);
    r |= render_one(o, "counter", "gpusched_event_errors_total", "Events the API refused.",
                    m->event_errors);
    r |= render_one(o, "counter", "gpusched_pod_status_patches_total",
                    "PodScheduled condition patches written.", m->status_patches);
    r |= render_one(o, "counter", "gpusched_pod_status_patch_errors_total",
                    "PodScheduled condition patches the API refused.", m->status_patch_errors);
    r |= buf_printf(o,
                    "# HELP gpusched_informer_relists_total Full lists, by resource.\n"
                    "# TYPE gpusched_informer_relists_total counter\n"
                    "gpusched_informer_relists_total{resource=\"nodes\"} %llu\n"
                    "gpusched_informer_relists_total{resource=\"pods\"} %llu\n",
                    (unsigned long long)m->relists_nodes, (unsigned long long)m->relists_pods);
    r |= render_one(o, "gauge", "gpusched_cache_nodes", "Nodes in the scheduler cache.",
                    m->cache_nodes);
    r |= render_one(o, "gauge", "gpusched_cache_pods", "Pods in the scheduler cache.",
                    m->cache_pods);
    r |= render_one(o, "gauge", "gpusched_leader", "1 when this replica is the leader.",
                    (uint64_t)m->leader);
    r |= render_one(o, "gauge", "gpusched_ready", "1 when the informers have synced.",
                    (uint64_t)m->ready);
    pthread_mutex_unlock(&m->mu);
    if (!getrusage(RUSAGE_SELF, &ru)) {
        double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
                     ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;

        r |= buf_printf(o,
                        "# HELP process_cpu_seconds_total Total user and system CPU time "
                        "spent in seconds.\n# TYPE process_cpu_seconds_total counter\n"
                        "process_cpu_seconds_total %.6f\n",
                        cpu);
        r |= buf_printf(o,
                        "# HELP process_max_resident_memory_bytes Peak resident memory "
                        "in bytes.\n# TYPE process_max_resident_memory_bytes gauge\n"
                        "process_max_resident_memory_bytes %lld\n",
                        (long long)ru.ru_maxrss * 1024);
    }
    r |= buf_printf(o,
                    "# HELP process_resident_memory_bytes Resident memory in bytes.\n"
                    "# TYPE process_resident_memory_bytes gauge\n"
                    "process_resident_memory_bytes %lld\n",
                    process_rss_bytes());
    return r ? -1 : 0;
}
