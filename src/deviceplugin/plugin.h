/* plugin.h - gpulabel as the kubelet's device plugin for NVIDIA GPUs (API v1beta1).
 *
 * dp_plugin_start reads the GPUs once through NVML (UUIDs, PCI addresses, NVLink and PCIe
 * topology) and sysfs (NUMA nodes), then runs two threads until dp_plugin_stop:
 *   - serve: the gRPC server on DIR/gpulabel-<name>.sock (ListAndWatch, Allocate,
 *     GetPreferredAllocation, GetDevicePluginOptions, PreStartContainer), registration with
 *     DIR/kubelet.sock, and inotify on DIR: when the kubelet re-creates kubelet.sock (it
 *     restarted and removed every socket) or the plugin's own socket disappears, the server
 *     is started again and registers again;
 *   - health: NVML's event set (XID critical errors, double-bit ECC) and a GPU_IS_LOST probe
 *     twice a second; an unhealthy GPU is sent to the kubelet at once and reported through
 *     cfg->on_unhealthy (gpulabel posts a Warning Event on its Node); after cfg->recovery_ms
 *     with no new critical event, and NVML answering for it with no recovery action pending,
 *     it is Healthy again and reported through cfg->on_healthy (gpu/health.h; 0 = never).
 * Logging goes through cfg->log; nothing here prints. */
#ifndef DEVICEPLUGIN_PLUGIN_H
#define DEVICEPLUGIN_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define DP_DEFAULT_DIR "/var/lib/kubelet/device-plugins"
#define DP_DEFAULT_RESOURCE "nvidia.com/gpu"
#define DP_DEFAULT_IGNORED_XIDS "13,31,43,45,68,109" /* NVIDIA's application XIDs */
#define DP_XID_MAX 1024                              /* XIDs above are never ignored */

enum { DP_MIG_NONE = 0, DP_MIG_SINGLE = 1, DP_MIG_MIXED = 2 }; /* as labeler_mig_strategy */

struct dp_config {
    const char *dir;               /* where kubelet.sock lives; default DP_DEFAULT_DIR */
    const char *resource_name;     /* default DP_DEFAULT_RESOURCE */
    const char *nvml_lib;          /* NULL: libnvidia-ml.so.1 */
    const char *sysfs_root;        /* NULL: "/sys" */
    unsigned list_strategy;        /* DP_LIST_* bits (devices.h); 0 = envvar */
    unsigned replicas;             /* time-slicing: devices per GPU; 0 or 1 = none */
    bool ignored_xids[DP_XID_MAX]; /* XIDs that do not make a GPU unhealthy */
    /* MIG: none advertises GPUs; single the MIG devices of MIG-enabled GPUs (with the full
     * GPUs that are not split); mixed with mig_profile the MIG devices of that profile
     * ("1g.5gb"; the resource is then nvidia.com/mig-<profile>), without it the GPUs that are
     * not split. */
    int mig_strategy;
    const char *mig_profile;
    /* log receives one line (no newline) of severity sev ('I', 'W', 'E', as base/log.h) at a
     * verbosity level; may be NULL */
    void (*log)(void *ctx, char sev, int level, const char *line);
    /* on_unhealthy is called from the health thread once per GPU that became unhealthy, after
     * the kubelet's stream was told: uuid, NVML index, and why ("XID 79", ...) */
    void (*on_unhealthy)(void *ctx, const char *uuid, unsigned index, const char *why);
    /* on_healthy: the same for a GPU that became healthy again (why: what was checked) */
    void (*on_healthy)(void *ctx, const char *uuid, unsigned index, const char *why);
    /* the quiet period after which an unhealthy GPU may recover (--health-recovery-period;
     * doubled per relapse, gpu/health.h); 0 = unhealthy until the agent restarts */
    long recovery_ms;
    void *ctx;
};

/* dp_xids_parse reads a comma list of XIDs ("13,31,43") into ignored[DP_XID_MAX] (cleared
 * first); "" or "none" ignores nothing. -EINVAL with err naming the bad item. */
int dp_xids_parse(const char *s, bool *ignored, struct err *err);

struct dp_plugin;

/* dp_mig_profiles lists the MIG profiles of the MIG devices NVML shows (sorted, unique) into
 * out[0..max), setting *n; 0 or an NVML error. */
int dp_mig_profiles(const char *nvml_lib, char (*out)[32], size_t max, size_t *n, struct err *err);

/* dp_plugin_start opens NVML, reads the GPUs and starts serving (see above). Fails when NVML
 * cannot start or reports no GPU, or a thread cannot start; err says why. A kubelet that is
 * not there yet is no failure: the plugin registers when kubelet.sock appears. */
int dp_plugin_start(const struct dp_config *cfg, struct dp_plugin **out, struct err *err);

struct dp_status {
    bool registered; /* the kubelet accepted the last registration */
    size_t gpus, healthy;
    size_t streams;         /* ListAndWatch streams open */
    uint64_t allocations;   /* Allocate calls answered with devices */
    uint64_t registrations; /* successful registrations since start */
};

/* dp_plugin_status copies the plugin's counters (thread-safe). */
void dp_plugin_status(struct dp_plugin *p, struct dp_status *st);

struct dp_inventory;
struct buf;

/* dp_plugin_new_offline makes a plugin around a ready inventory, which it takes (inv is
 * emptied), with no NVML and no thread: for tests and the fuzzer of the request decoding.
 * Free with dp_plugin_stop. */
int dp_plugin_new_offline(const struct dp_config *cfg, struct dp_inventory *inv,
                          struct dp_plugin **out, struct err *err);

/* dp_plugin_handle answers one unary call of method (a full gRPC name such as
 * "/v1beta1.DevicePlugin/Allocate") with the request bytes req[0..len), as the server does:
 * returns a gRPC status (0 OK, with the answer in resp) or another one with msg saying why.
 * dp_plugin_list fills resp with the current ListAndWatchResponse and returns its
 * generation. Both are thread-safe. */
int dp_plugin_handle(struct dp_plugin *p, const char *method, const uint8_t *req, size_t len,
                     struct buf *resp, char *msg, size_t msgsz);
uint64_t dp_plugin_list(struct dp_plugin *p, struct buf *resp);

/* dp_plugin_socket is the path of the plugin's socket (borrowed, lives as long as p). */
const char *dp_plugin_socket(const struct dp_plugin *p);

/* dp_plugin_stop stops both threads, removes the plugin's socket and frees p. Safe on NULL. */
void dp_plugin_stop(struct dp_plugin *p);

#endif
