/* monitor.h - a thread that watches the health of every GPU of the node (DRA mode): NVML's
 * event set (XID critical errors, double-bit ECC), a GPU_IS_LOST probe every 500 ms, and the
 * recovery of gpu/health.h. State is kept per GPU (NVML index): an event names a GPU, and a
 * GPU's MIG devices share its fate.
 *
 * NVML stays initialised while the monitor runs (the other users' init/shutdown pairs are
 * counted by NVML). A GPU NVML cannot read at start is lost until it answers. Changes are
 * handed to cfg->on_change from the monitor's thread; gpu_monitor_snapshot copies the state
 * for anyone else. Nothing here prints: lines go to cfg->log. */
#ifndef GPU_MONITOR_H
#define GPU_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "gpu/gpu.h"
#include "gpu/health.h"

struct gpu_monitor_state {
    struct gpu_health h;
    int64_t since_wall; /* Unix seconds when it became unhealthy (for taints' timeAdded) */
    char uuid[96];      /* "" while NVML never answered for it */
};

struct gpu_monitor_config {
    const char *nvml_lib;     /* NULL: libnvidia-ml.so.1 */
    const bool *ignored_xids; /* GPU_XID_MAX entries, borrowed; NULL: none ignored */
    int64_t recovery_ms;      /* 0: an unhealthy GPU stays so */
    /* on_change is called from the monitor's thread after GPU index changed state */
    void (*on_change)(void *ctx, unsigned index, const struct gpu_monitor_state *st);
    /* log receives one line of severity sev ('I', 'W', 'E') at a verbosity level */
    void (*log)(void *ctx, char sev, int level, const char *line);
    void *ctx;
};

struct gpu_monitor;

/* gpu_monitor_start opens NVML and starts the thread; fails when NVML cannot start (err). The
 * caller frees with gpu_monitor_stop. */
int gpu_monitor_start(const struct gpu_monitor_config *cfg, struct gpu_monitor **out,
                      struct err *err);

/* gpu_monitor_snapshot copies the state of the first max GPUs (by NVML index) into out and
 * returns how many GPUs NVML counts (thread-safe). */
size_t gpu_monitor_snapshot(struct gpu_monitor *m, struct gpu_monitor_state *out, size_t max);

/* gpu_monitor_stop stops the thread, shuts NVML down and frees m. Safe on NULL. */
void gpu_monitor_stop(struct gpu_monitor *m);

#endif
