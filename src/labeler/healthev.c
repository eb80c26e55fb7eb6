/* healthev.c - GPU health Events without a device plugin in the process (healthev.h). */
#include "labeler/healthev.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "gpu/monitor.h"
#include "labeler/node.h"

struct labeler_healthev {
    const struct labeler_config *cfg;
    struct gpu_monitor *mon;
};

static void log_cb(void *ctx, char sev, int level, const char *line)
{
    (void)ctx;
    log_printf(sev, level, "health: %s", line);
}

/* The monitor's thread. Neutral words: this process does not know which device plugin serves
 * the GPUs (gpulabel's in the device-plugin container, or NVIDIA's with the Helm value
 * devicePlugin.enabled=false), so unlike daemon.c's Events these say nothing of what the
 * kubelet is told. */
static void on_change(void *ctx, unsigned index, const struct gpu_monitor_state *st)
{
    struct labeler_healthev *h = ctx;
    char msg[600], id[128];

    /* the device's ID as the plugin advertises it: a GPU never read is lost-gpu-N there */
    if (st->uuid[0])
        snprintf(id, sizeof(id), "%s", st->uuid);
    else
        snprintf(id, sizeof(id), "lost-gpu-%u", index);
    if (!st->h.healthy) {
        snprintf(msg, sizeof(msg), "GPU %u (%s) is unhealthy: %s", index, id, st->h.reason);
        labeler_node_event(h->cfg, "Warning", "GPUUnhealthy", msg);
    } else {
        snprintf(msg, sizeof(msg),
                 "GPU %u (%s) is healthy again: no critical event for the recovery period and "
                 "NVML answers",
                 index, id);
        labeler_node_event(h->cfg, "Normal", "GPUHealthy", msg);
    }
}

int labeler_healthev_start(const struct labeler_config *cfg, struct labeler_healthev **out,
                           struct err *err)
{
    struct labeler_healthev *h = calloc(1, sizeof(*h));
    struct gpu_monitor_config mc;
    int rc;

    *out = NULL;
    if (!h)
        return err_set(err, -ENOMEM, "out of memory");
    h->cfg = cfg;
    memset(&mc, 0, sizeof(mc));
    mc.nvml_lib = cfg->nvml_lib;
    mc.ignored_xids = cfg->dp.ignored_xids;
    mc.recovery_ms = cfg->dp.recovery_ms;
    mc.on_change = on_change;
    mc.log = log_cb;
    mc.ctx = h;
    rc = gpu_monitor_start(&mc, &h->mon, err);
    if (rc) {
        free(h);
        return rc;
    }
    *out = h;
    return 0;
}

void labeler_healthev_stop(struct labeler_healthev *h)
{
    if (!h)
        return;
    gpu_monitor_stop(h->mon);
    free(h);
}
