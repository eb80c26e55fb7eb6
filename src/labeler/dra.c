/* dra.c - the daemon's DRA mode (dra.h): monitor, kubelet plugin, and the pool's publication.
 *
 * The daemon's thread detects and publishes; the monitor's thread only records a change and
 * kicks the daemon, which publishes at once (XID to taint on the API within a second). mu
 * guards what the HTTP thread reads (the status). */
#include "labeler/dra.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "draplugin/devices.h"
#include "draplugin/plugin.h"
#include "draplugin/slices.h"
#include "gpu/monitor.h"
#include "labeler/node.h"

struct labeler_dra {
    const struct labeler_config *cfg;
    const char *driver;
    struct kube_client *client; /* the daemon's, borrowed; the DRA plugin GETs claims with it
                                 * from its thread too (the client is thread-safe) */
    struct gpu_monitor *mon;
    struct dra_plugin *plugin;
    void (*kick)(void);

    struct dra_devices devs; /* the daemon thread's */
    bool have_devs;
    int64_t lost_since[GPU_MAX_DEVICES]; /* when detection first found GPU i lost; 0 not lost */
    char node_uid[128];
    char last_err[ERR_MSG_MAX];

    pthread_mutex_t mu; /* guards st */
    struct labeler_dra_status st;
};

static void log_line_cb(void *ctx, char sev, int level, const char *line)
{
    (void)ctx;
    log_printf(sev, level, "%s", line);
}

/* A GPU's health changed (the monitor's thread): an Event on the Node, then a publish. */
static void on_change(void *ctx, unsigned index, const struct gpu_monitor_state *st)
{
    struct labeler_dra *x = ctx;
    char msg[600];

    if (!st->h.healthy) {
        char taint[300];

        if (st->h.kind == GPU_HEALTH_LOST)
            snprintf(taint, sizeof(taint), "%s/gpu-lost", x->driver);
        else
            snprintf(taint, sizeof(taint), "%s/xid=%llu", x->driver,
                     st->h.kind == GPU_HEALTH_ECC ? 48ull : st->h.xid);
        snprintf(msg, sizeof(msg), "GPU %u (%s) is unhealthy: %s; its DRA devices are tainted %s",
                 index, st->uuid[0] ? st->uuid : "?", st->h.reason, taint);
        labeler_node_event(x->cfg, "Warning", "GPUUnhealthy", msg);
    } else {
        snprintf(msg, sizeof(msg),
                 "GPU %u (%s) is healthy again: no critical event for the recovery period and "
                 "NVML answers; its DRA devices' taints are removed",
                 index, st->uuid);
        labeler_node_event(x->cfg, "Normal", "GPUHealthy", msg);
    }
    if (x->kick)
        x->kick();
}

int labeler_dra_start(const struct labeler_config *cfg, struct kube_client *client,
                      void (*kick)(void), struct labeler_dra **out, struct err *err)
{
    struct labeler_dra *x = calloc(1, sizeof(*x));
    struct gpu_monitor_config mc;
    struct dra_config dc;
    int rc;

    *out = NULL;
    if (!x)
        return err_set(err, -ENOMEM, "out of memory");
    x->cfg = cfg;
    x->driver = cfg->dra.driver && *cfg->dra.driver ? cfg->dra.driver : DRA_DEFAULT_DRIVER;
    x->client = client;
    x->kick = kick;
    pthread_mutex_init(&x->mu, NULL);
    dc = cfg->dra;
    dc.driver = x->driver;
    dc.node = cfg->node_name;
    dc.client = client;
    dc.log = log_line_cb;
    dc.ctx = x;
    rc = dra_plugin_start(&dc, &x->plugin, err);
    if (rc) {
        err_prefix(err, "cannot start the DRA plugin");
        goto fail;
    }
    memset(&mc, 0, sizeof(mc));
    mc.nvml_lib = cfg->nvml_lib;
    mc.ignored_xids = cfg->dp.ignored_xids;
    mc.recovery_ms = cfg->dp.recovery_ms;
    mc.on_change = on_change;
    mc.log = log_line_cb;
    mc.ctx = x;
    rc = gpu_monitor_start(&mc, &x->mon, err);
    if (rc) {
        /* NVML down: the slices still say what the last detection saw; health is not watched
         * until the agent restarts with NVML up */
        log_printf('E', 0, "DRA: cannot watch GPU health: %s", err->msg);
        x->mon = NULL;
        err_clear(err);
    }
    *out = x;
    return 0;
fail:
    labeler_dra_stop(x);
    return rc;
}

/* Publishes the pool: the devices known, each GPU's taint from the monitor (or from the last
 * detection, for a GPU it could not read). */
void labeler_dra_publish(struct labeler_dra *x)
{
    struct gpu_monitor_state *ms = NULL;
    struct dra_health *health = NULL;
    struct dra_slices_result res;
    struct err err;
    json_t *desired = NULL;
    size_t i, nms, nmon = 0, healthy = 0;
    int rc;

    if (!x || !x->have_devs || !x->client)
        return;
    err_clear(&err);
    /* the monitor's state of this node's GPUs only (1.5 KiB each): sized for GPU_MAX_DEVICES it
     * was 96 KiB live at the peak of every publish, beside the listed slices */
    nms = x->devs.ngpus < GPU_MAX_DEVICES ? x->devs.ngpus : GPU_MAX_DEVICES;
    health = calloc(x->devs.ngpus + 1, sizeof(*health));
    ms = calloc(nms + 1, sizeof(*ms));
    if (!health || !ms) {
        rc = err_set(&err, -ENOMEM, "out of memory");
        goto out;
    }
    nmon = gpu_monitor_snapshot(x->mon, ms, nms);
    if (nmon > nms)
        nmon = nms; /* what was copied */
    for (i = 0; i < x->devs.ngpus; i++) {
        health[i].healthy = true;
        if (i < nmon && !ms[i].h.healthy) {
            health[i].healthy = false;
            health[i].kind = ms[i].h.kind;
            health[i].xid = ms[i].h.xid;
            health[i].since_wall = ms[i].since_wall;
        } else if (x->devs.gpus[i].lost && i < GPU_MAX_DEVICES) {
            health[i].healthy = false;
            health[i].kind = GPU_HEALTH_LOST;
            health[i].since_wall = x->lost_since[i];
        }
    }
    for (i = 0; i < x->devs.n; i++)
        healthy += health[x->devs.v[i].gpu].healthy;
    desired = dra_slices_desired(&x->devs, x->driver, health);
    if (!desired) {
        rc = err_set(&err, -ENOMEM, "out of memory");
        goto out;
    }
    rc = 0;
    if (!x->node_uid[0])
        rc = dra_node_uid(x->client, x->cfg->node_name, x->node_uid, sizeof(x->node_uid), &err);
    if (!rc)
        rc = dra_slices_sync(x->client, x->driver, x->cfg->node_name, x->node_uid, desired, &res,
                             &err);
    if (!rc) {
        unsigned writes = res.created + res.updated + res.deleted;

        pthread_mutex_lock(&x->mu);
        x->st.devices = x->devs.n;
        x->st.healthy = healthy;
        x->st.slice_writes += writes;
        pthread_mutex_unlock(&x->mu);
        if (x->last_err[0])
            log_printf('I', 0, "DRA: ResourceSlices published again");
        x->last_err[0] = '\0';
        if (writes)
            log_printf('I', 0,
                       "DRA: published %zu devices (%zu untainted) of %s in %zu slices of pool "
                       "\"%s\", generation %lld (%u created, %u updated, %u deleted)",
                       x->devs.n, healthy, x->driver, json_array_size(desired), x->cfg->node_name,
                       (long long)res.generation, res.created, res.updated, res.deleted);
        else
            log_printf('I', 2, "DRA: the pool \"%s\" is up to date; nothing written",
                       x->cfg->node_name);
    }
out:
    if (rc) {
        if (strcmp(x->last_err, err.msg))
            log_printf('E', 0,
                       "DRA: cannot publish the ResourceSlices: %s; trying again next "
                       "cycle",
                       err.msg);
        else
            log_printf('E', 1, "DRA: cannot publish the ResourceSlices: %s", err.msg);
        snprintf(x->last_err, sizeof(x->last_err), "%s", err.msg);
    }
    json_decref(desired);
    free(health);
    free(ms);
    /* give the heap's free pages back: a publish's transient documents (the listed slices, the
     * pool, the writes) otherwise leave the heap's pages touched for good, 0.2 MiB of the
     * DRA mode's RSS after a few cycles (docs/benchmarks-dra.md); a cycle or a GPU's health
     * change apart, so its cost (tens of µs) does not count */
    malloc_trim(0);
}

void labeler_dra_cycle(struct labeler_dra *x, const struct gpu_inventory *inv, int rc)
{
    struct err err;
    size_t i;

    if (!x)
        return;
    /* NVML cannot start (not a lost GPU): keep what was published */
    if (rc && !inv->nlost)
        return;
    err_clear(&err);
    if (dra_devices_update(&x->devs, inv, x->cfg->dp.sysfs_root, &err) ||
        dra_plugin_set_devices(x->plugin, &x->devs, &err)) {
        log_printf('E', 0, "DRA: %s", err.msg);
        return;
    }
    for (i = 0; i < x->devs.ngpus && i < GPU_MAX_DEVICES; i++) {
        if (!x->devs.gpus[i].lost)
            x->lost_since[i] = 0;
        else if (!x->lost_since[i])
            x->lost_since[i] = (int64_t)time(NULL);
    }
    x->have_devs = true;
    labeler_dra_publish(x);
}

void labeler_dra_status(struct labeler_dra *x, struct labeler_dra_status *st)
{
    struct dra_status ps;

    memset(st, 0, sizeof(*st));
    if (!x)
        return;
    pthread_mutex_lock(&x->mu);
    *st = x->st;
    pthread_mutex_unlock(&x->mu);
    dra_plugin_status(x->plugin, &ps);
    st->registered = ps.registered;
    st->prepares = ps.prepares;
}

void labeler_dra_stop(struct labeler_dra *x)
{
    if (!x)
        return;
    gpu_monitor_stop(x->mon);
    dra_plugin_stop(x->plugin);
    dra_devices_release(&x->devs);
    pthread_mutex_destroy(&x->mu);
    free(x);
}

int labeler_dra_clear(const struct labeler_config *cfg, struct kube_client *client, struct err *err)
{
    struct dra_slices_result res;
    json_t *none = json_array();
    int rc;

    if (!none)
        return err_set(err, -ENOMEM, "out of memory");
    rc = dra_slices_sync(client,
                         cfg->dra.driver && *cfg->dra.driver ? cfg->dra.driver : DRA_DEFAULT_DRIVER,
                         cfg->node_name, "", none, &res, err);
    json_decref(none);
    return rc ? rc : (int)res.deleted;
}
