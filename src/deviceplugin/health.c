/* health.c - the health thread: NVML's event set (XID critical errors, double-bit ECC) and a
 * GPU_IS_LOST probe at every wait's timeout; each device's state is a gpu/health.h machine
 * (the thread's own), published under p->mu when it changes (the generation moves, so every
 * ListAndWatch stream gets the new list) and reported through cfg->on_unhealthy and
 * cfg->on_healthy. An unhealthy device is re-probed once its quiet period has passed and
 * becomes Healthy again when NVML answers for it with no recovery action pending. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "deviceplugin/plugin-int.h"
#include "gpu/health.h"
#include "gpu/nvml.h"

#define HEALTH_WAIT_MS 500 /* nvmlEventSetWait_v2 timeout; the lost-GPU probe runs as often */

int dp_xids_parse(const char *s, bool *ignored, struct err *err)
{
    const char *q = s ? s : "";

    memset(ignored, 0, DP_XID_MAX * sizeof(*ignored));
    if (!*q || !strcmp(q, "none"))
        return 0;
    for (;;) {
        size_t n = strcspn(q, ",");
        char item[32], *end;
        long v;

        if (n == 0 || n >= sizeof(item))
            return err_set(err, -EINVAL, "invalid XID '%.*s' (want a comma list of numbers)",
                           (int)(n > 20 ? 20 : n), q);
        memcpy(item, q, n);
        item[n] = '\0';
        errno = 0;
        v = strtol(item, &end, 10);
        if (*end || errno || v < 0 || v >= DP_XID_MAX || item[0] == '+' || item[0] == '-')
            return err_set(err, -EINVAL, "invalid XID '%s' (want a number from 0 to %d)", item,
                           DP_XID_MAX - 1);
        ignored[v] = true;
        if (!q[n])
            break;
        q += n + 1;
    }
    return 0;
}

/* Publishes device g's health under mu when it differs from what the kubelet was told. */
static void publish(struct dp_plugin *p, size_t g)
{
    const struct gpu_health *h = &p->health[g];

    pthread_mutex_lock(&p->mu);
    if (p->inv.gpus[g].healthy != h->healthy) {
        p->inv.gpus[g].healthy = h->healthy;
        snprintf(p->inv.gpus[g].unhealthy_reason, sizeof(p->inv.gpus[g].unhealthy_reason), "%s",
                 h->reason);
        p->gen++;
    }
    pthread_mutex_unlock(&p->mu);
}

/* A critical event on device g (or a probe that found it lost). */
static void mark_unhealthy(struct dp_plugin *p, size_t g, enum gpu_health_kind kind,
                           unsigned long long xid)
{
    const struct dp_gpu *d = &p->inv.gpus[g];
    struct gpu_health *h = &p->health[g];

    if (!gpu_health_fail(h, p->cfg.recovery_ms, kind, xid, NULL, mono_ms()))
        return; /* already unhealthy: its quiet period starts again */
    publish(p, g);
    dp_log(p, 'W', 0, "device plugin: GPU %u (%s) is unhealthy: %s", d->index, d->uuid, h->reason);
    if (p->cfg.on_unhealthy)
        p->cfg.on_unhealthy(p->cfg.ctx, d->uuid, d->index, h->reason);
}

/* Asks NVML for the events of device g's GPU (once per GPU); true when they are watched. */
static bool watch_gpu(struct dp_plugin *p, size_t g)
{
    const struct gpu_nvml *n = &p->nvml;
    unsigned long long want =
        NVML_EVENT_TYPE_XID_CRITICAL_ERROR | NVML_EVENT_TYPE_DOUBLE_BIT_ECC_ERROR;
    unsigned long long supported = want;
    nvmlReturn_t rc;

    if (!p->events || !p->parents[g])
        return false;
    if (n->device_get_supported_event_types &&
        !n->device_get_supported_event_types(p->parents[g], &supported))
        want &= supported;
    rc =
        want ? n->device_register_events(p->parents[g], want, p->events) : NVML_ERROR_NOT_SUPPORTED;
    if (rc)
        dp_log(p, 'W', 0, "device plugin: GPU %u: no health events: %s", p->inv.gpus[g].index,
               gpu_nvml_error_string(n, rc));
    return !rc;
}

/* A GPU NVML could not read at start: when it answers now, it gets its real ID and its events
 * are watched; it stays Unhealthy until its quiet period has passed. */
static bool read_again(struct dp_plugin *p, size_t g)
{
    const struct gpu_nvml *n = &p->nvml;
    struct dp_gpu got = p->inv.gpus[g];
    nvmlDevice_t h;
    char was[96];

    if (n->device_get_handle_by_index(got.index, &h) || dp_inventory_fill(p, &got, h, h))
        return false;
    pthread_mutex_lock(&p->mu);
    snprintf(was, sizeof(was), "%s", p->inv.gpus[g].uuid);
    memcpy(p->inv.gpus[g].uuid, got.uuid, sizeof(got.uuid));
    memcpy(p->inv.gpus[g].pci_bus_id, got.pci_bus_id, sizeof(got.pci_bus_id));
    p->inv.gpus[g].numa_node = got.numa_node;
    p->handles[g] = p->parents[g] = h;
    p->unread[g] = false;
    p->gen++;
    pthread_mutex_unlock(&p->mu);
    dp_log(p, 'I', 0, "device plugin: GPU %u (%s until now) answers again as %s", got.index, was,
           got.uuid);
    watch_gpu(p, g);
    return true;
}

static void probe_lost(struct dp_plugin *p)
{
    size_t g;

    for (g = 0; g < p->inv.ngpus; g++) {
        char uuid[96];

        if (p->unread[g]) {
            if (!read_again(p, g))
                mark_unhealthy(p, g, GPU_HEALTH_LOST, 0); /* still lost: the period restarts */
        } else if (p->nvml.device_get_uuid(p->handles[g], uuid, sizeof(uuid)) ==
                   NVML_ERROR_GPU_IS_LOST)
            mark_unhealthy(p, g, GPU_HEALTH_LOST, 0);
    }
}

/* The devices already unhealthy when the plugin starts (NVML could not read them) are
 * reported as any that becomes so. */
static void report_at_start(struct dp_plugin *p)
{
    size_t g;

    for (g = 0; g < p->inv.ngpus; g++) {
        gpu_health_init(&p->health[g]);
        if (!p->inv.gpus[g].healthy)
            mark_unhealthy(p, g, GPU_HEALTH_LOST, 0);
    }
}

/* Re-probes the unhealthy devices whose quiet period has passed: Healthy again when NVML
 * answers for them with no recovery action pending, else they wait (said once). */
static void recover(struct dp_plugin *p)
{
    int64_t now = mono_ms();
    size_t g;

    for (g = 0; g < p->inv.ngpus; g++) {
        struct gpu_health *h = &p->health[g];
        const struct dp_gpu *d = &p->inv.gpus[g];
        char why[256], was[96];

        if (!gpu_health_due(h, p->cfg.recovery_ms, now) || p->unread[g])
            continue;
        if (gpu_health_probe(&p->nvml, p->handles[g], p->parents[g], why, sizeof(why))) {
            if (strncmp(h->blocked, why, sizeof(h->blocked) - 1))
                dp_log(p, 'I', 0, "device plugin: GPU %u (%s) stays unhealthy: %s", d->index,
                       d->uuid, why);
            snprintf(h->blocked, sizeof(h->blocked), "%.127s", why);
            continue;
        }
        snprintf(was, sizeof(was), "%s", h->reason);
        gpu_health_recover(h, now);
        publish(p, g);
        snprintf(why, sizeof(why), "no critical event for %llds after %s, and NVML answers",
                 (long long)(now - h->last_bad_ms) / 1000, was);
        dp_log(p, 'I', 0, "device plugin: GPU %u (%s) is healthy again: %s", d->index, d->uuid,
               why);
        watch_gpu(p, g); /* a GPU that was lost may have left the event set */
        if (p->cfg.on_healthy)
            p->cfg.on_healthy(p->cfg.ctx, d->uuid, d->index, why);
    }
}

void *dp_health_main(void *arg)
{
    struct dp_plugin *p = arg;
    const struct gpu_nvml *n = &p->nvml;
    bool wait_err_logged = false;
    int64_t next_probe = 0;

    report_at_start(p);
    while (!p->stop) {
        nvmlEventData_t ev;
        nvmlReturn_t rc;
        size_t g;

        /* the probes run every HEALTH_WAIT_MS, also while events keep coming */
        if (mono_ms() >= next_probe) {
            probe_lost(p);
            recover(p);
            next_probe = mono_ms() + HEALTH_WAIT_MS;
        }
        if (!p->events) {
            mono_sleep_ms(HEALTH_WAIT_MS);
            continue;
        }
        memset(&ev, 0, sizeof(ev));
        rc = n->event_set_wait(p->events, &ev, HEALTH_WAIT_MS);
        if (rc == NVML_ERROR_TIMEOUT)
            continue;
        if (rc == NVML_ERROR_GPU_IS_LOST) {
            probe_lost(p);
            mono_sleep_ms(HEALTH_WAIT_MS); /* the wait may fail at once while the GPU stays lost */
            continue;
        }
        if (rc != NVML_SUCCESS) {
            if (!wait_err_logged)
                dp_log(p, 'E', 0, "device plugin: nvmlEventSetWait_v2: %s",
                       gpu_nvml_error_string(n, rc));
            wait_err_logged = true;
            mono_sleep_ms(HEALTH_WAIT_MS);
            continue;
        }
        /* the event names a GPU: every device advertised on it (its MIG devices too) */
        for (g = 0; g < p->inv.ngpus; g++) {
            if (p->parents[g] != ev.device)
                continue;
            if (ev.eventType & NVML_EVENT_TYPE_XID_CRITICAL_ERROR) {
                if (ev.eventData < DP_XID_MAX && p->cfg.ignored_xids[ev.eventData]) {
                    dp_log(p, 'I', 1,
                           "device plugin: GPU %u: XID %llu is ignored "
                           "(--health-ignore-xids)",
                           p->inv.gpus[g].index, ev.eventData);
                    continue;
                }
                mark_unhealthy(p, g, GPU_HEALTH_XID, ev.eventData);
            } else if (ev.eventType & NVML_EVENT_TYPE_DOUBLE_BIT_ECC_ERROR) {
                mark_unhealthy(p, g, GPU_HEALTH_ECC, 0);
            }
        }
    }
    return NULL;
}

void dp_health_setup(struct dp_plugin *p)
{
    const struct gpu_nvml *n = &p->nvml;
    size_t g, registered = 0;

    if (!n->event_set_create || !n->device_register_events || !n->event_set_wait) {
        dp_log(p, 'W', 0, "device plugin: this NVML has no event API; only lost GPUs are detected");
        return;
    }
    if (n->event_set_create(&p->events)) {
        p->events = NULL;
        dp_log(p, 'W', 0, "device plugin: nvmlEventSetCreate failed; only lost GPUs are detected");
        return;
    }
    for (g = 0; g < p->inv.ngpus; g++) {
        size_t k;

        for (k = 0; k < g && p->parents[k] != p->parents[g]; k++)
            ;
        if (k == g && watch_gpu(p, g)) /* one registration per GPU */
            registered++;
    }
    dp_log(p, 'I', 1, "device plugin: health events registered on %zu of %zu GPUs", registered,
           p->inv.ngpus);
}
