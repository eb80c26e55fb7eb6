/* monitor.c - the GPU health monitor of monitor.h: one thread, one NVML event set, one
 * gpu_health per GPU (written by the thread, read by snapshots under mu). */
#include "gpu/monitor.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "gpu/nvml.h"

#define WAIT_MS 500 /* the event wait's timeout; the probes run as often */

struct gpu_monitor {
    struct gpu_monitor_config cfg;
    struct gpu_nvml nvml;
    bool inited;
    nvmlEventSet_t events;
    unsigned count;
    /* count entries each, allocated once count is known (for GPU_MAX_DEVICES they were
     * 100 KiB of an agent's heap on a node of 8) */
    nvmlDevice_t *handles; /* NULL while NVML never gave one */
    bool *watched;         /* registered in the event set */
    pthread_mutex_t mu;    /* guards st */
    struct gpu_monitor_state *st;
    pthread_t thread;
    bool started;
    volatile int stop;
};

static void mlog(struct gpu_monitor *m, char sev, int level, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void mlog(struct gpu_monitor *m, char sev, int level, const char *fmt, ...)
{
    char line[1024];
    va_list ap;

    if (!m->cfg.log)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    m->cfg.log(m->cfg.ctx, sev, level, line);
}

static void watch(struct gpu_monitor *m, unsigned i)
{
    const struct gpu_nvml *n = &m->nvml;
    unsigned long long want =
        NVML_EVENT_TYPE_XID_CRITICAL_ERROR | NVML_EVENT_TYPE_DOUBLE_BIT_ECC_ERROR;
    unsigned long long supported = want;
    nvmlReturn_t rc;

    if (!m->events || !m->handles[i] || m->watched[i])
        return;
    if (n->device_get_supported_event_types &&
        !n->device_get_supported_event_types(m->handles[i], &supported))
        want &= supported;
    rc =
        want ? n->device_register_events(m->handles[i], want, m->events) : NVML_ERROR_NOT_SUPPORTED;
    if (rc)
        mlog(m, 'W', 0, "GPU %u: no health events: %s", i, gpu_nvml_error_string(n, rc));
    else
        m->watched[i] = true;
}

/* Publishes GPU i's new state and tells cfg->on_change. */
static void changed(struct gpu_monitor *m, unsigned i, const struct gpu_health *h)
{
    struct gpu_monitor_state copy;

    pthread_mutex_lock(&m->mu);
    m->st[i].h = *h;
    if (!h->healthy)
        m->st[i].since_wall = (int64_t)time(NULL);
    copy = m->st[i];
    pthread_mutex_unlock(&m->mu);
    if (m->cfg.on_change)
        m->cfg.on_change(m->cfg.ctx, i, &copy);
}

static void fail(struct gpu_monitor *m, unsigned i, enum gpu_health_kind kind,
                 unsigned long long xid)
{
    struct gpu_health h = m->st[i].h; /* only this thread writes it */

    if (!gpu_health_fail(&h, m->cfg.recovery_ms, kind, xid, NULL, mono_ms())) {
        pthread_mutex_lock(&m->mu);
        m->st[i].h = h; /* the quiet period starts again */
        pthread_mutex_unlock(&m->mu);
        return;
    }
    mlog(m, 'W', 0, "GPU %u (%s) is unhealthy: %s", i, m->st[i].uuid[0] ? m->st[i].uuid : "?",
         h.reason);
    changed(m, i, &h);
}

/* The lost-GPU probe, and the first read of a GPU NVML could not read before. */
static void probe(struct gpu_monitor *m)
{
    const struct gpu_nvml *n = &m->nvml;
    unsigned i;

    for (i = 0; i < m->count; i++) {
        char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        nvmlReturn_t rc;

        memset(uuid, 0, sizeof(uuid));
        if (!m->handles[i] && n->device_get_handle_by_index(i, &m->handles[i]))
            m->handles[i] = NULL;
        rc = m->handles[i] && n->device_get_uuid
                 ? n->device_get_uuid(m->handles[i], uuid, sizeof(uuid) - 1)
                 : NVML_ERROR_GPU_IS_LOST;
        if (rc == NVML_ERROR_GPU_IS_LOST || !m->handles[i]) {
            fail(m, i, GPU_HEALTH_LOST, 0);
            continue;
        }
        if (!rc && strcmp(m->st[i].uuid, uuid)) {
            pthread_mutex_lock(&m->mu);
            memcpy(m->st[i].uuid, uuid, sizeof(m->st[i].uuid));
            pthread_mutex_unlock(&m->mu);
            watch(m, i);
        }
    }
}

static void recover(struct gpu_monitor *m)
{
    int64_t now = mono_ms();
    unsigned i;

    for (i = 0; i < m->count; i++) {
        struct gpu_health h = m->st[i].h;
        char why[160], was[96];

        if (!gpu_health_due(&h, m->cfg.recovery_ms, now))
            continue;
        if (gpu_health_probe(&m->nvml, m->handles[i], m->handles[i], why, sizeof(why))) {
            if (strncmp(h.blocked, why, sizeof(h.blocked) - 1))
                mlog(m, 'I', 0, "GPU %u (%s) stays unhealthy: %s", i, m->st[i].uuid, why);
            snprintf(h.blocked, sizeof(h.blocked), "%.127s", why);
            pthread_mutex_lock(&m->mu);
            m->st[i].h = h;
            pthread_mutex_unlock(&m->mu);
            continue;
        }
        snprintf(was, sizeof(was), "%s", h.reason);
        gpu_health_recover(&h, now);
        mlog(m, 'I', 0,
             "GPU %u (%s) is healthy again: no critical event for %llds after %s, and "
             "NVML answers",
             i, m->st[i].uuid, (long long)(now - m->st[i].h.last_bad_ms) / 1000, was);
        m->watched[i] = false; /* a GPU that was lost may have left the event set */
        watch(m, i);
        changed(m, i, &h);
    }
}

static void *monitor_main(void *arg)
{
    struct gpu_monitor *m = arg;
    const struct gpu_nvml *n = &m->nvml;
    int64_t next_probe = 0;
    bool wait_err_logged = false;

    while (!m->stop) {
        nvmlEventData_t ev;
        nvmlReturn_t rc;
        unsigned i;

        if (mono_ms() >= next_probe) {
            probe(m);
            recover(m);
            next_probe = mono_ms() + WAIT_MS;
        }
        if (!m->events) {
            mono_sleep_ms(WAIT_MS);
            continue;
        }
        memset(&ev, 0, sizeof(ev));
        rc = n->event_set_wait(m->events, &ev, WAIT_MS);
        if (rc == NVML_ERROR_TIMEOUT)
            continue;
        if (rc == NVML_ERROR_GPU_IS_LOST) {
            probe(m);
            mono_sleep_ms(WAIT_MS);
            continue;
        }
        if (rc != NVML_SUCCESS) {
            if (!wait_err_logged)
                mlog(m, 'E', 0, "nvmlEventSetWait_v2: %s", gpu_nvml_error_string(n, rc));
            wait_err_logged = true;
            mono_sleep_ms(WAIT_MS);
            continue;
        }
        for (i = 0; i < m->count && m->handles[i] != ev.device; i++)
            ;
        if (i == m->count)
            continue;
        if (ev.eventType & NVML_EVENT_TYPE_XID_CRITICAL_ERROR) {
            if (m->cfg.ignored_xids && ev.eventData < GPU_XID_MAX &&
                m->cfg.ignored_xids[ev.eventData]) {
                mlog(m, 'I', 1, "GPU %u: XID %llu is ignored (--health-ignore-xids)", i,
                     ev.eventData);
                continue;
            }
            fail(m, i, GPU_HEALTH_XID, ev.eventData);
        } else if (ev.eventType & NVML_EVENT_TYPE_DOUBLE_BIT_ECC_ERROR) {
            fail(m, i, GPU_HEALTH_ECC, 0);
        }
    }
    return NULL;
}

int gpu_monitor_start(const struct gpu_monitor_config *cfg, struct gpu_monitor **out,
                      struct err *err)
{
    struct gpu_monitor *m = calloc(1, sizeof(*m));
    nvmlReturn_t rc;
    unsigned i;
    int ret;

    *out = NULL;
    if (!m)
        return err_set(err, -ENOMEM, "out of memory");
    m->cfg = *cfg;
    pthread_mutex_init(&m->mu, NULL);
    ret = gpu_nvml_open(cfg->nvml_lib, &m->nvml, err);
    if (ret)
        goto fail;
    rc = m->nvml.init();
    if (rc) {
        ret = err_set(err, -EIO, "nvmlInit_v2: %s", gpu_nvml_error_string(&m->nvml, rc));
        goto fail;
    }
    m->inited = true;
    rc = m->nvml.device_get_count(&m->count);
    if (rc) {
        ret = err_set(err, -EIO, "nvmlDeviceGetCount_v2: %s", gpu_nvml_error_string(&m->nvml, rc));
        goto fail;
    }
    if (m->count > GPU_MAX_DEVICES)
        m->count = GPU_MAX_DEVICES;
    m->handles = calloc(m->count + 1, sizeof(*m->handles));
    m->watched = calloc(m->count + 1, sizeof(*m->watched));
    m->st = calloc(m->count + 1, sizeof(*m->st));
    if (!m->handles || !m->watched || !m->st) {
        ret = err_set(err, -ENOMEM, "out of memory");
        goto fail;
    }
    for (i = 0; i < m->count; i++)
        gpu_health_init(&m->st[i].h);
    if (m->nvml.event_set_create && m->nvml.device_register_events && m->nvml.event_set_wait &&
        m->nvml.event_set_create(&m->events))
        m->events = NULL;
    if (!m->events)
        mlog(m, 'W', 0, "no NVML event set: only lost GPUs are seen");
    probe(m); /* handles, UUIDs and event registrations; GPUs NVML cannot read are lost */
    if (pthread_create(&m->thread, NULL, monitor_main, m)) {
        ret = err_set(err, -EAGAIN, "cannot start the GPU health thread");
        goto fail;
    }
    m->started = true;
    *out = m;
    return 0;
fail:
    gpu_monitor_stop(m);
    return ret;
}

size_t gpu_monitor_snapshot(struct gpu_monitor *m, struct gpu_monitor_state *out, size_t max)
{
    size_t n;

    if (!m)
        return 0;
    pthread_mutex_lock(&m->mu);
    n = m->count;
    memcpy(out, m->st, (n < max ? n : max) * sizeof(*out));
    pthread_mutex_unlock(&m->mu);
    return n;
}

void gpu_monitor_stop(struct gpu_monitor *m)
{
    if (!m)
        return;
    m->stop = 1;
    if (m->started)
        pthread_join(m->thread, NULL);
    if (m->events && m->nvml.event_set_free)
        m->nvml.event_set_free(m->events);
    if (m->inited)
        m->nvml.shutdown();
    gpu_nvml_close(&m->nvml);
    pthread_mutex_destroy(&m->mu);
    free(m->handles);
    free(m->watched);
    free(m->st);
    free(m);
}
