/* plugin.c - the device plugin's lifetime: start (NVML, the inventory, the health and serve
 * threads), the counters, and stop; the shared log and sleep helpers. The work itself is in
 * inventory.c, handlers.c, serve.c and health.c (plugin-int.h). */
#include "deviceplugin/plugin.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "deviceplugin/plugin-int.h"
#include "gpu/nvml.h"

static void plugin_free(struct dp_plugin *p)
{
    if (p->events && p->nvml.event_set_free)
        p->nvml.event_set_free(p->events);
    if (p->nvml_inited)
        p->nvml.shutdown();
    gpu_nvml_close(&p->nvml);
    dp_inventory_release(&p->inv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

int dp_plugin_start(const struct dp_config *cfg, struct dp_plugin **out, struct err *err)
{
    struct dp_plugin *p;
    const char *res, *slash;
    nvmlReturn_t nrc;
    size_t i;
    int rc;

    *out = NULL;
    p = calloc(1, sizeof(*p));
    if (!p)
        return err_set(err, -ENOMEM, "out of memory");
    pthread_mutex_init(&p->mu, NULL);
    p->cfg = *cfg;
    snprintf(p->dir, sizeof(p->dir), "%s", cfg->dir && *cfg->dir ? cfg->dir : DP_DEFAULT_DIR);
    while (strlen(p->dir) > 1 && p->dir[strlen(p->dir) - 1] == '/')
        p->dir[strlen(p->dir) - 1] = '\0';
    res = cfg->resource_name && *cfg->resource_name ? cfg->resource_name : DP_DEFAULT_RESOURCE;
    snprintf(p->resource, sizeof(p->resource), "%s", res);
    slash = strrchr(res, '/');
    snprintf(p->sock_name, sizeof(p->sock_name), "gpulabel-%s.sock", slash ? slash + 1 : res);
    for (i = 0; p->sock_name[i]; i++)
        if (p->sock_name[i] == '/')
            p->sock_name[i] = '-';
    snprintf(p->sock_path, sizeof(p->sock_path), "%s/%s", p->dir, p->sock_name);
    snprintf(p->kubelet_path, sizeof(p->kubelet_path), "%s/kubelet.sock", p->dir);

    rc = gpu_nvml_open(cfg->nvml_lib, &p->nvml, err);
    if (rc)
        goto fail;
    nrc = p->nvml.init();
    if (nrc) {
        rc = err_set(err, nrc == NVML_ERROR_DRIVER_NOT_LOADED ? -ENODEV : -EIO, "nvmlInit_v2: %s",
                     gpu_nvml_error_string(&p->nvml, nrc));
        goto fail;
    }
    p->nvml_inited = true;
    rc = dp_inventory_read(p, err);
    if (rc)
        goto fail;
    dp_health_setup(p);
    if (pthread_create(&p->health_thread, NULL, dp_health_main, p)) {
        rc = err_set(err, -EAGAIN, "cannot start the health thread");
        goto fail;
    }
    p->health_started = true;
    if (pthread_create(&p->serve_thread, NULL, dp_serve_main, p)) {
        rc = err_set(err, -EAGAIN, "cannot start the plugin thread");
        goto fail;
    }
    p->serve_started = true;
    p->st.gpus = p->inv.ngpus;
    *out = p;
    return 0;
fail:
    if (p->health_started) {
        p->stop = 1;
        pthread_join(p->health_thread, NULL);
    }
    plugin_free(p);
    return rc;
}

void dp_plugin_status(struct dp_plugin *p, struct dp_status *st)
{
    size_t g;

    memset(st, 0, sizeof(*st));
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    *st = p->st;
    st->gpus = p->inv.ngpus;
    for (g = 0; g < p->inv.ngpus; g++)
        st->healthy += p->inv.gpus[g].healthy;
    pthread_mutex_unlock(&p->mu);
}

int dp_plugin_new_offline(const struct dp_config *cfg, struct dp_inventory *inv,
                          struct dp_plugin **out, struct err *err)
{
    struct dp_plugin *p = calloc(1, sizeof(*p));

    *out = NULL;
    if (!p)
        return err_set(err, -ENOMEM, "out of memory");
    pthread_mutex_init(&p->mu, NULL);
    p->cfg = *cfg;
    p->inv = *inv;
    memset(inv, 0, sizeof(*inv));
    *out = p;
    return 0;
}

int dp_plugin_handle(struct dp_plugin *p, const char *method, const uint8_t *req, size_t len,
                     struct buf *resp, char *msg, size_t msgsz)
{
    return dp_handle_unary(p, method, req, len, resp, msg, msgsz);
}

uint64_t dp_plugin_list(struct dp_plugin *p, struct buf *resp)
{
    return dp_list_state(p, resp);
}

const char *dp_plugin_socket(const struct dp_plugin *p)
{
    return p->sock_path;
}

void dp_plugin_stop(struct dp_plugin *p)
{
    if (!p)
        return;
    p->stop = 1;
    if (p->serve_started)
        pthread_join(p->serve_thread, NULL);
    if (p->health_started)
        pthread_join(p->health_thread, NULL);
    plugin_free(p);
}
