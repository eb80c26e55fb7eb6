/* metrics.c - Prometheus text rendering of gpusched serve's metrics (see metrics.h).
 *
 * Families are written in name order, label pairs in label-name order and numbers as Go
 * formats them, as client_golang's text encoder does, so a scrape reads like kube-scheduler's.
 * A family with labels shows only the label values observed so far (a Vec's children appear
 * on first use), except the gauges kube-scheduler sets at start (pending pods, cache size). */
#include "serve/metrics.h"
#include "serve/metrics-int.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/goparse.h"

/* kube-scheduler v1.37's buckets (pkg/scheduler/metrics/metrics.go) */
static const struct serve_hist_spec spec_attempt = {0.001, 2, 15};    /* attempt, algorithm */
static const struct serve_hist_spec spec_sli = {0.01, 2, 20};         /* pod SLI */
static const struct serve_hist_spec spec_pod_attempts = {1, 2, 5};    /* attempts per pod */
static const struct serve_hist_spec spec_victims = {1, 2, 7};         /* preemption victims */
static const struct serve_hist_spec spec_ext_point = {0.0001, 2, 12}; /* extension points */
static const struct serve_hist_spec spec_bc_wait = {0.1, 2, 14};      /* binding conditions */

static const char *const result_names[SERVE_RESULT_COUNT] = {"scheduled", "unschedulable", "error"};
/* the results in label-value order, as the encoder sorts them */
static const int result_order[SERVE_RESULT_COUNT] = {SERVE_RESULT_ERROR, SERVE_RESULT_SCHEDULED,
                                                     SERVE_RESULT_UNSCHEDULABLE};
static const char *const pending_names[SERVE_PENDING_COUNT] = {"active", "backoff", "unschedulable",
                                                               "gated"};
static const char *const bc_status_names[SERVE_BC_COUNT] = {"error", "failure", "success",
                                                            "timeout"};

/* bounds fills the upper bounds of spec as ExponentialBuckets computes them. */
static void bounds(const struct serve_hist_spec *spec, double *out)
{
    double b = spec->start;
    int i;

    for (i = 0; i < spec->count; i++) {
        out[i] = b;
        b *= spec->factor;
    }
}

static void hist_init(struct serve_histogram *h, const struct serve_hist_spec *spec)
{
    memset(h, 0, sizeof(*h));
    h->spec = spec;
}

int serve_metrics_init(struct serve_metrics *m, const char *const *names, size_t n)
{
    size_t i;
    int r, k;
    struct timespec now;

    memset(m, 0, sizeof(*m));
    if (n < 1)
        return -EINVAL;
    m->profiles = calloc(n, sizeof(*m->profiles));
    if (!m->profiles)
        return -ENOMEM;
    m->nprofiles = n;
    for (i = 0; i < n; i++) {
        m->profiles[i].name = names[i];
        for (r = 0; r < SERVE_RESULT_COUNT; r++)
            hist_init(&m->profiles[i].attempt_duration[r], &spec_attempt);
        hist_init(&m->profiles[i].bind_duration[0], &spec_ext_point);
        hist_init(&m->profiles[i].bind_duration[1], &spec_ext_point);
    }
    hist_init(&m->algorithm_duration, &spec_attempt);
    for (k = 0; k < SERVE_SLI_LABELS; k++)
        hist_init(&m->sli[k], &spec_sli);
    hist_init(&m->pod_attempts, &spec_pod_attempts);
    hist_init(&m->preemption_victims, &spec_victims);
    clock_gettime(CLOCK_REALTIME, &now);
    m->start_time = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
    pthread_mutex_init(&m->mu, NULL);
    return 0;
}

void serve_metrics_release(struct serve_metrics *m)
{
    size_t i;

    if (!m->profiles)
        return;
    for (i = 0; i < m->nbc; i++)
        free(m->bc[i].driver);
    free(m->bc);
    m->bc = NULL;
    m->nbc = 0;
    free(m->profiles);
    m->profiles = NULL;
    pthread_mutex_destroy(&m->mu);
}

struct serve_profile_metrics *serve_metrics_profile(struct serve_metrics *m, const char *name)
{
    size_t i;

    for (i = 0; name && i < m->nprofiles; i++)
        if (!strcmp(m->profiles[i].name, name))
            return &m->profiles[i];
    return &m->profiles[0];
}

void serve_histogram_observe(struct serve_histogram *h, double v)
{
    double b[SERVE_HIST_MAX];
    int i;

    bounds(h->spec, b);
    for (i = 0; i < h->spec->count; i++)
        if (v <= b[i])
            break;
    h->counts[i]++;
    h->count++;
    h->sum += v;
}

void serve_metrics_attempt(struct serve_metrics *m, struct serve_profile_metrics *p,
                           enum serve_attempt_result r, double seconds)
{
    pthread_mutex_lock(&m->mu);
    p->touched[r] = true;
    p->attempts[r]++;
    serve_histogram_observe(&p->attempt_duration[r], seconds);
    pthread_mutex_unlock(&m->mu);
}

void serve_metrics_bound(struct serve_metrics *m, struct serve_profile_metrics *p, double seconds,
                         int attempts, double sli_seconds, bool flushed)
{
    int label = attempts >= SERVE_SLI_LABELS ? SERVE_SLI_LABELS - 1 : attempts - 1;

    if (label < 0)
        label = 0;
    pthread_mutex_lock(&m->mu);
    p->touched[SERVE_RESULT_SCHEDULED] = true;
    p->attempts[SERVE_RESULT_SCHEDULED]++;
    serve_histogram_observe(&p->attempt_duration[SERVE_RESULT_SCHEDULED], seconds);
    serve_histogram_observe(&m->pod_attempts, (double)attempts);
    if (sli_seconds >= 0) {
        m->sli_touched[label] = true;
        serve_histogram_observe(&m->sli[label], sli_seconds);
    }
    if (flushed)
        m->scheduled_after_flush++;
    pthread_mutex_unlock(&m->mu);
}

void serve_metrics_bind(struct serve_metrics *m, struct serve_profile_metrics *p, bool ok,
                        double seconds)
{
    pthread_mutex_lock(&m->mu);
    p->bind_touched[ok ? 0 : 1] = true;
    serve_histogram_observe(&p->bind_duration[ok ? 0 : 1], seconds);
    pthread_mutex_unlock(&m->mu);
}

void serve_metrics_set_pending(struct serve_metrics *m, enum serve_pending_queue q, uint64_t n)
{
    m->pending[q] = n;
    if (n)
        m->entities_touched[q] = true; /* a Vec's child appears on its first Add */
}

void serve_metrics_observe(struct serve_metrics *m, struct serve_histogram *h, double v)
{
    pthread_mutex_lock(&m->mu);
    serve_histogram_observe(h, v);
    pthread_mutex_unlock(&m->mu);
}

/* bc_cmp orders label sets as the text encoder does: by the values in label-name order */
static int bc_cmp(const char *driver, const char *profile, enum serve_bc_status st,
                  const struct serve_bc_child *c)
{
    int r = strcmp(driver, c->driver);

    if (!r)
        r = strcmp(profile, c->profile);
    return r ? r : (int)st - (int)c->status;
}

void serve_metrics_binding_conditions(struct serve_metrics *m, struct serve_profile_metrics *p,
                                      const char *driver, enum serve_bc_status status,
                                      bool with_conditions, double seconds)
{
    struct serve_bc_child *c = NULL;
    size_t i;
    int r = 1;

    pthread_mutex_lock(&m->mu);
    for (i = 0; i < m->nbc && (r = bc_cmp(driver, p->name, status, &m->bc[i])) > 0; i++)
        ;
    if (i < m->nbc && !r) {
        c = &m->bc[i];
    } else if (m->nbc < SERVE_BC_CHILDREN) {
        char *dup = strdup(driver);

        if (!m->bc)
            m->bc = calloc(SERVE_BC_CHILDREN, sizeof(*m->bc));
        if (dup && m->bc) {
            memmove(&m->bc[i + 1], &m->bc[i], (m->nbc - i) * sizeof(*m->bc));
            m->nbc++;
            c = &m->bc[i];
            memset(c, 0, sizeof(*c));
            c->profile = p->name;
            c->driver = dup;
            c->status = status;
            hist_init(&c->wait, &spec_bc_wait);
        } else {
            free(dup);
        }
    }
    if (c) {
        serve_histogram_observe(&c->wait, seconds);
        if (with_conditions) {
            c->counted = true;
            c->allocations++;
        }
    }
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
    double b[SERVE_HIST_MAX], want, seen = 0;
    int i, n = h->spec->count;

    if (!h->count)
        return 0;
    bounds(h->spec, b);
    want = q * (double)h->count;
    for (i = 0; i <= n; i++) {
        double lo = i ? b[i - 1] : 0;

        if (!h->counts[i] || seen + (double)h->counts[i] < want) {
            seen += (double)h->counts[i];
            continue;
        }
        if (i == n)
            return lo;
        /* linear inside the bucket, as Prometheus' histogram_quantile */
        return lo + (b[i] - lo) * (want - seen) / (double)h->counts[i];
    }
    return b[n - 1];
}

const char *serve_metrics_format_float(double v, char *buf, size_t size)
{
    return go_format_float(v, 'g', buf, size);
}

/* ---------------------------------------------------------------------------------------
 * Rendering
 * ------------------------------------------------------------------------------------- */

static int head(struct buf *o, const char *name, const char *type, const char *help)
{
    return buf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* sample writes `name{labels} value` (no braces without labels). */
static int sample(struct buf *o, const char *name, const char *labels, double v)
{
    char num[40];

    serve_metrics_format_float(v, num, sizeof(num));
    if (labels && *labels)
        return buf_printf(o, "%s{%s} %s\n", name, labels, num);
    return buf_printf(o, "%s %s\n", name, num);
}

/* hist writes the samples of one histogram; labels (may be "") come before le. */
static int hist(struct buf *o, const char *name, const char *labels,
                const struct serve_histogram *h)
{
    double b[SERVE_HIST_MAX];
    char nm[160], lb[800], num[40];
    uint64_t cum = 0;
    int i, r = 0;

    bounds(h->spec, b);
    snprintf(nm, sizeof(nm), "%s_bucket", name);
    for (i = 0; i <= h->spec->count; i++) {
        cum += h->counts[i];
        if (i < h->spec->count)
            serve_metrics_format_float(b[i], num, sizeof(num));
        else
            snprintf(num, sizeof(num), "+Inf");
        snprintf(lb, sizeof(lb), "%s%sle=\"%s\"", labels, *labels ? "," : "", num);
        r |= sample(o, nm, lb, (double)cum);
    }
    snprintf(nm, sizeof(nm), "%s_sum", name);
    r |= sample(o, nm, labels, h->sum);
    snprintf(nm, sizeof(nm), "%s_count", name);
    r |= sample(o, nm, labels, (double)h->count);
    return r;
}

/* label_value escapes a label value as the text format wants (backslash, quote, newline). */
static const char *label_value(const char *v, char *buf, size_t size)
{
    size_t n = 0;

    for (; *v && n + 3 < size; v++) {
        if (*v == '\\' || *v == '"') {
            buf[n++] = '\\';
            buf[n++] = *v;
        } else if (*v == '\n') {
            buf[n++] = '\\';
            buf[n++] = 'n';
        } else {
            buf[n++] = *v;
        }
    }
    buf[n] = '\0';
    return buf;
}

/* process_* as client_golang's process collector reads them from /proc. */
static int render_process(struct serve_metrics *m, struct buf *o)
{
    struct rusage ru;
    struct rlimit rl;
    long long pages = 0, rss = 0, fds = 0;
    long page = sysconf(_SC_PAGESIZE);
    FILE *f = fopen("/proc/self/statm", "r");
    DIR *d = opendir("/proc/self/fd");
    int r = 0;

    if (f) {
        if (fscanf(f, "%lld %lld", &pages, &rss) != 2)
            pages = rss = 0;
        fclose(f);
    }
    if (d) {
        struct dirent *de;

        while ((de = readdir(d)))
            if (de->d_name[0] != '.')
                fds++;
        closedir(d);
        fds--; /* the directory stream's own descriptor */
    }
    if (!getrusage(RUSAGE_SELF, &ru)) {
        double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
                     ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;

        r |= head(o, "gpusched_process_max_resident_memory_bytes", "gauge",
                  "Peak resident memory of the process in bytes (getrusage ru_maxrss).");
        r |= sample(o, "gpusched_process_max_resident_memory_bytes", "",
                    (double)ru.ru_maxrss * 1024);
        r |= head(o, "process_cpu_seconds_total", "counter",
                  "Total user and system CPU time spent in seconds.");
        r |= sample(o, "process_cpu_seconds_total", "", cpu);
    }
    if (!getrlimit(RLIMIT_NOFILE, &rl)) {
        r |= head(o, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
        r |= sample(o, "process_max_fds", "",
                    rl.rlim_cur == RLIM_INFINITY ? 18446744073709551615.0 : (double)rl.rlim_cur);
    }
    if (d) {
        r |= head(o, "process_open_fds", "gauge", "Number of open file descriptors.");
        r |= sample(o, "process_open_fds", "", (double)fds);
    }
    r |= head(o, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
    r |= sample(o, "process_resident_memory_bytes", "", (double)rss * (double)page);
    r |= head(o, "process_start_time_seconds", "gauge",
              "Start time of the process since unix epoch in seconds.");
    r |= sample(o, "process_start_time_seconds", "", m->start_time);
    r |= head(o, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
    r |= sample(o, "process_virtual_memory_bytes", "", (double)pages * (double)page);
    if (!getrlimit(RLIMIT_AS, &rl)) {
        r |= head(o, "process_virtual_memory_max_bytes", "gauge",
                  "Maximum amount of virtual memory available in bytes.");
        r |= sample(o, "process_virtual_memory_max_bytes", "",
                    rl.rlim_cur == RLIM_INFINITY ? 18446744073709551615.0 : (double)rl.rlim_cur);
    }
    return r;
}

static int render_counter(struct buf *o, const char *name, const char *help, uint64_t v)
{
    return head(o, name, "counter", help) | sample(o, name, "", (double)v);
}

static int render_gauge(struct buf *o, const char *name, const char *help, uint64_t v)
{
    return head(o, name, "gauge", help) | sample(o, name, "", (double)v);
}

int serve_metrics_render(struct serve_metrics *m, struct buf *o)
{
    char lb[512], pv[300], lease[300];
    size_t i;
    int r = 0, j, k;
    bool any;

    pthread_mutex_lock(&m->mu);
    if (m->claim_creates[0] || m->claim_creates[1]) {
        /* (DRAExtendedResource is on: kube-scheduler registers the family) */
        r |= head(o, "dynamic_resource_allocation_resourceclaim_creates_total", "counter",
                  "[ALPHA] Number of ResourceClaims creation requests, categorized by creation "
                  "status, admin access, and owning API group and kind (either Pod or "
                  "scheduling.k8s.io/PodGroup)");
        for (k = 0; k < 2; k++)
            if (m->claim_creates[k]) {
                snprintf(lb, sizeof(lb),
                         "admin_access=\"false\",owner_api_group=\"\",owner_api_kind=\"Pod\","
                         "status=\"%s\"",
                         k ? "success" : "failure");
                r |= sample(o, "dynamic_resource_allocation_resourceclaim_creates_total", lb,
                            (double)m->claim_creates[k]);
            }
    }
    /* gpusched's own, where kube-scheduler has no equivalent */
    r |= render_counter(o, "gpusched_bind_conflicts_total",
                        "Bindings answered 409 Conflict (the pod is already assigned).",
                        m->bind_conflicts);
    r |=
        render_counter(o, "gpusched_bind_not_found_total",
                       "Bindings answered 404 Not Found (the pod was deleted).", m->bind_not_found);
    r |= render_gauge(o, "gpusched_binds_in_flight", "Bindings sent and not yet answered.",
                      m->in_flight_binds);
    r |= render_counter(o, "gpusched_event_errors_total",
                        "Event writes (create or series patch) the API refused or that failed.",
                        m->event_errors);
    r |= head(o, "gpusched_events_total", "counter",
              "Event writes the API accepted, by verb: create (a new Event) or patch (a "
              "repeated Event's series).");
    r |= sample(o, "gpusched_events_total", "verb=\"create\"", (double)m->events_created);
    r |= sample(o, "gpusched_events_total", "verb=\"patch\"", (double)m->events_patched);
    r |= head(o, "gpusched_informer_relists_total", "counter",
              "Full lists of the informers, by resource.");
    r |= sample(o, "gpusched_informer_relists_total", "resource=\"nodes\"",
                (double)m->relists_nodes);
    r |= sample(o, "gpusched_informer_relists_total", "resource=\"pods\"", (double)m->relists_pods);
    r |= render_counter(o, "gpusched_pod_status_patch_errors_total",
                        "PodScheduled condition patches the API refused or that failed.",
                        m->status_patch_errors);
    r |= render_counter(o, "gpusched_pod_status_patches_total",
                        "PodScheduled condition patches written.", m->status_patches);
    r |= render_gauge(o, "gpusched_ready", "1 once the informers have synced.", (uint64_t)m->ready);

    if (m->elect) {
        label_value(m->lease_name ? m->lease_name : "", lease, sizeof(lease));
        snprintf(lb, sizeof(lb), "name=\"%s\"", lease);
        r |= head(o, "leader_election_master_status", "gauge",
                  "[ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 "
                  "indicates backup, 1 indicates master. 'name' is the string used to identify "
                  "the lease. Please make sure to group by name.");
        r |= sample(o, "leader_election_master_status", lb, m->leader ? 1 : 0);
        if (m->leader_slowpath) {
            r |= head(o, "leader_election_slowpath_total", "counter",
                      "[ALPHA] Total number of slow path exercised in renewing leader leases. "
                      "'name' is the string used to identify the lease. Please make sure to "
                      "group by name.");
            r |= sample(o, "leader_election_slowpath_total", lb, (double)m->leader_slowpath);
        }
    }
    pthread_mutex_unlock(&m->mu);

    r |= render_process(m, o);

    pthread_mutex_lock(&m->mu);
    r |= head(o, "scheduler_cache_size", "gauge",
              "[ALPHA] Number of nodes, pods, and assumed (bound) pods in the scheduler cache.");
    r |= sample(o, "scheduler_cache_size", "type=\"assumed_pods\"", (double)m->cache_assumed);
    r |= sample(o, "scheduler_cache_size", "type=\"nodes\"", (double)m->cache_nodes);
    r |= sample(o, "scheduler_cache_size", "type=\"pods\"", (double)m->cache_pods);

    for (any = false, i = 0; i < m->nbc; i++)
        any |= m->bc[i].counted;
    if (any) {
        r |= head(o, "scheduler_dra_bindingconditions_allocations_total", "counter",
                  "[ALPHA] Number of allocations using devices with BindingConditions, counted "
                  "per driver per scheduling attempt");
        for (i = 0; i < m->nbc; i++) {
            char dv[300], bl[700];

            if (!m->bc[i].counted)
                continue;
            snprintf(bl, sizeof(bl), "driver=\"%s\",profile=\"%s\",status=\"%s\"",
                     label_value(m->bc[i].driver, dv, sizeof(dv)),
                     label_value(m->bc[i].profile, pv, sizeof(pv)),
                     bc_status_names[m->bc[i].status]);
            r |= sample(o, "scheduler_dra_bindingconditions_allocations_total", bl,
                        (double)m->bc[i].allocations);
        }
    }
    if (m->nbc) {
        r |= head(o, "scheduler_dra_bindingconditions_wait_duration_seconds", "histogram",
                  "[ALPHA] Time in seconds spent waiting for BindingConditions to be satisfied "
                  "during PreBind.");
        for (i = 0; i < m->nbc; i++) {
            char dv[300], bl[700];

            snprintf(bl, sizeof(bl), "driver=\"%s\",profile=\"%s\",status=\"%s\"",
                     label_value(m->bc[i].driver, dv, sizeof(dv)),
                     label_value(m->bc[i].profile, pv, sizeof(pv)),
                     bc_status_names[m->bc[i].status]);
            r |= hist(o, "scheduler_dra_bindingconditions_wait_duration_seconds", bl,
                      &m->bc[i].wait);
        }
    }

    for (any = false, i = 0; i < m->nprofiles; i++)
        any |= m->profiles[i].bind_touched[0] || m->profiles[i].bind_touched[1];
    if (any) {
        r |= head(o, "scheduler_framework_extension_point_duration_seconds", "histogram",
                  "[STABLE] Latency for running all plugins of a specific extension point.");
        for (i = 0; i < m->nprofiles; i++)
            for (k = 0; k < 2; k++) {
                if (!m->profiles[i].bind_touched[k])
                    continue;
                snprintf(lb, sizeof(lb), "extension_point=\"Bind\",profile=\"%s\",status=\"%s\"",
                         label_value(m->profiles[i].name, pv, sizeof(pv)), k ? "Error" : "Success");
                r |= hist(o, "scheduler_framework_extension_point_duration_seconds", lb,
                          &m->profiles[i].bind_duration[k]);
            }
    }

    r |= head(o, "scheduler_pending_pods", "gauge",
              "[STABLE] Number of pending pods, by the queue type. 'active' means number of "
              "pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' "
              "means number of pods in unschedulableEntities that the scheduler attempted to "
              "schedule and failed; 'gated' is the number of unschedulable pods that the "
              "scheduler never attempted to schedule because they are gated; 'incomplete' "
              "means number of pods in incompletePodGroupPods; 'pending' means number of pods "
              "in pendingPodGroupPods.");
    for (k = 0; k < SERVE_PENDING_COUNT; k++) {
        snprintf(lb, sizeof(lb), "queue=\"%s\"", pending_names[k]);
        r |= sample(o, "scheduler_pending_pods", lb, (double)m->pending[k]);
    }

    r |= render_counter(o, "scheduler_pod_scheduled_after_flush_total",
                        "[ALPHA] Number of pods that were successfully scheduled after being "
                        "flushed from unschedulableEntities due to timeout. This metric helps "
                        "detect potential queueing hint misconfigurations or event handling "
                        "issues.",
                        m->scheduled_after_flush);
    r |= head(o, "scheduler_pod_scheduling_attempts", "histogram",
              "[STABLE] Number of attempts to successfully schedule a pod.");
    r |= hist(o, "scheduler_pod_scheduling_attempts", "", &m->pod_attempts);

    for (any = false, k = 0; k < SERVE_SLI_LABELS; k++)
        any |= m->sli_touched[k];
    if (any) {
        r |= head(o, "scheduler_pod_scheduling_sli_duration_seconds", "histogram",
                  "[BETA] E2e latency for a pod being scheduled, from the time the pod enters the "
                  "scheduling queue and might involve multiple scheduling attempts.");
        /* label values in string order, as the encoder sorts them: 1, 10..14, 15+, 2..9 */
        {
            static const int order[SERVE_SLI_LABELS] = {0, 9, 10, 11, 12, 13, 14, 1,
                                                        2, 3, 4,  5,  6,  7,  8};
            for (i = 0; i < SERVE_SLI_LABELS; i++) {
                int a = order[i];

                if (!m->sli_touched[a])
                    continue;
                if (a == SERVE_SLI_LABELS - 1)
                    snprintf(lb, sizeof(lb), "attempts=\"%d+\"", SERVE_SLI_LABELS);
                else
                    snprintf(lb, sizeof(lb), "attempts=\"%d\"", a + 1);
                r |= hist(o, "scheduler_pod_scheduling_sli_duration_seconds", lb, &m->sli[a]);
            }
        }
    }

    r |= render_counter(o, "scheduler_preemption_attempts_total",
                        "[STABLE] Total preemption attempts in the cluster till now",
                        m->preemption_attempts);
    r |= head(o, "scheduler_preemption_victims", "histogram",
              "[STABLE] Number of selected preemption victims for preemption initiated by a "
              "single pod");
    r |= hist(o, "scheduler_preemption_victims", "", &m->preemption_victims);

    r |= head(o, "scheduler_queued_entities", "gauge",
              "[ALPHA] Number of queued scheduling entities ('pod' or 'podgroup'; 'pod' stands "
              "for individual pods that are not members of any podgroup) by the queue type. "
              "'active' means number of entities in activeQ; 'backoff' means number of "
              "entities in backoffQ; 'unschedulable' means number of entities in "
              "unschedulableEntities that the scheduler attempted to schedule and failed; "
              "'gated' is the number of unschedulable entities that the scheduler never "
              "attempted to schedule because they are gated.");
    for (k = 0; k < SERVE_PENDING_COUNT; k++) {
        if (!m->entities_touched[k])
            continue;
        snprintf(lb, sizeof(lb), "queue=\"%s\",type=\"pod\"", pending_names[k]);
        r |= sample(o, "scheduler_queued_entities", lb, (double)m->pending[k]);
    }

    for (any = false, i = 0; i < m->nprofiles; i++)
        for (k = 0; k < SERVE_RESULT_COUNT; k++)
            any |= m->profiles[i].touched[k];
    if (any) {
        r |= head(o, "scheduler_schedule_attempts_total", "counter",
                  "[STABLE] Number of attempts to schedule pods, by the result. 'unschedulable' "
                  "means a pod could not be scheduled, while 'error' means an internal scheduler "
                  "problem.");
        for (i = 0; i < m->nprofiles; i++)
            for (j = 0; j < SERVE_RESULT_COUNT; j++) {
                k = result_order[j];
                if (!m->profiles[i].touched[k])
                    continue;
                snprintf(lb, sizeof(lb), "profile=\"%s\",result=\"%s\"",
                         label_value(m->profiles[i].name, pv, sizeof(pv)), result_names[k]);
                r |= sample(o, "scheduler_schedule_attempts_total", lb,
                            (double)m->profiles[i].attempts[k]);
            }
    }

    r |= head(o, "scheduler_scheduling_algorithm_duration_seconds", "histogram",
              "[BETA] Scheduling algorithm latency in seconds");
    r |= hist(o, "scheduler_scheduling_algorithm_duration_seconds", "", &m->algorithm_duration);

    if (any) {
        r |= head(o, "scheduler_scheduling_attempt_duration_seconds", "histogram",
                  "[STABLE] Scheduling attempt latency in seconds (scheduling algorithm + "
                  "binding)");
        for (i = 0; i < m->nprofiles; i++)
            for (j = 0; j < SERVE_RESULT_COUNT; j++) {
                k = result_order[j];
                if (!m->profiles[i].touched[k])
                    continue;
                snprintf(lb, sizeof(lb), "profile=\"%s\",result=\"%s\"",
                         label_value(m->profiles[i].name, pv, sizeof(pv)), result_names[k]);
                r |= hist(o, "scheduler_scheduling_attempt_duration_seconds", lb,
                          &m->profiles[i].attempt_duration[k]);
            }
    }
    pthread_mutex_unlock(&m->mu);
    return r ? -1 : 0;
}
