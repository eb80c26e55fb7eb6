/* plugin-int.h - what the device plugin's files share; not for callers (plugin.h is the API).
 *
 * plugin.c starts and stops a struct dp_plugin; inventory.c fills it from NVML and sysfs;
 * handlers.c answers the kubelet's calls; serve.c runs the gRPC server, registration and the
 * socket watch on the serve thread; health.c runs the health thread. One mutex (mu) guards
 * the inventory's health, the generation and the counters; everything else is written before
 * the threads start or only by the thread that owns it. */
#ifndef DEVICEPLUGIN_PLUGIN_INT_H
#define DEVICEPLUGIN_PLUGIN_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "deviceplugin/devices.h"
#include "deviceplugin/plugin.h"
#include "gpu/health.h"
#include "gpu/nvml.h"

struct dp_plugin {
    struct dp_config cfg;
    char dir[4096];
    char sock_name[256];  /* gpulabel-<name>.sock */
    char sock_path[4400]; /* dir/sock_name */
    char kubelet_path[4400];
    char resource[256];

    struct gpu_nvml nvml;
    bool nvml_inited;
    nvmlDevice_t handles[DP_MAX_GPUS]; /* per advertised GPU or MIG device */
    nvmlDevice_t parents[DP_MAX_GPUS]; /* its GPU (itself for a full GPU): events come from it */
    /* unread[g]: NVML could not read GPU g at start; its ID is "lost-gpu-<index>" and its
     * handles NULL until health.c reads it (both under mu once the threads run) */
    bool unread[DP_MAX_GPUS];
    struct gpu_health health[DP_MAX_GPUS]; /* the health thread's own (health.c) */
    nvmlEventSet_t events;

    pthread_mutex_t mu; /* guards inv (health), gen, st */
    struct dp_inventory inv;
    uint64_t gen;
    struct dp_status st;
    unsigned cdi_seq;

    volatile int stop; /* read by both threads; written once by dp_plugin_stop */
    pthread_t serve_thread, health_thread;
    bool serve_started, health_started;

    /* the registration runs in its own short thread, since the kubelet calls back into our
     * server before it answers */
    pthread_t reg_thread;
    bool reg_running;
    volatile int reg_done;
    int reg_rc;
    struct err reg_err;
};

/* dp_log formats one line to p->cfg.log (nothing when it is NULL). */
void dp_log(struct dp_plugin *p, char sev, int level, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* inventory.c: dp_inventory_read fills p->inv, p->handles and p->parents from NVML (already
 * initialised) and sysfs, with the pair scores; -ENODEV when there is nothing to advertise. */
int dp_inventory_read(struct dp_plugin *p, struct err *err);

/* dp_inventory_fill reads device h's UUID, and the PCI address and NUMA node of its GPU
 * parent, into g; returns 0 or the NVML code of the UUID query (g untouched then). */
int dp_inventory_fill(struct dp_plugin *p, struct dp_gpu *g, nvmlDevice_t h, nvmlDevice_t parent);

/* dp_sysfs_root is cfg.sysfs_root or "/sys". */
const char *dp_sysfs_root(const struct dp_plugin *p);

/* handlers.c: the gRPC handlers (struct rpc_handlers' callbacks, ctx = p) and the
 * protobuf packing they share with the registration. dp_pack appends m's bytes to out:
 * 0, -E2BIG over RPC_MSG_MAX, -ENOMEM. */
int dp_handle_unary(void *ctx, const char *method, const uint8_t *req, size_t len, struct buf *resp,
                    char *msg, size_t msgsz);
uint64_t dp_list_state(void *ctx, struct buf *out);
struct ProtobufCMessage;
int dp_pack(const struct ProtobufCMessage *m, struct buf *out);

#define DP_METHOD_LIST "/v1beta1.DevicePlugin/ListAndWatch"

/* serve.c: the serve thread's body (arg = p), until p->stop. */
void *dp_serve_main(void *arg);

/* health.c: dp_health_setup registers p's GPUs for NVML's health events (a warning is logged
 * for what cannot be watched); dp_health_main is the health thread's body (arg = p). */
void dp_health_setup(struct dp_plugin *p);
void *dp_health_main(void *arg);

#endif
