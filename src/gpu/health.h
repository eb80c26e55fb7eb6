/* health.h - one device's health with recovery: what the device plugin's Unhealthy and the
 * DRA slice's taints are made from (docs/device-plugin.md, "Health").
 *
 * A critical event (an XID not ignored, a double-bit ECC error, the GPU lost) makes a device
 * unhealthy at once. It becomes healthy again only after a quiet period with no new critical
 * event (each one starts the period again) and a re-probe that finds NVML answering for it
 * with no recovery action pending in the driver (NVML's GPU reset, node reboot, drain); a
 * device that falls again soon after it recovered waits twice as long the next time, up to
 * 8 times (hysteresis: a flapping GPU is out more and more of the time, never back and forth
 * each second). A period of 0 switches recovery off: unhealthy until the agent restarts.
 * The state machine is pure (the caller passes the time); gpu_health_probe is its NVML part.
 * Nothing here locks or prints. */
#ifndef GPU_HEALTH_H
#define GPU_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/nvml.h"

#define GPU_XID_MAX 1024                            /* XIDs above are never ignored */
#define GPU_HEALTH_DEFAULT_RECOVERY_MS (10 * 60000) /* --health-recovery-period 10m */
#define GPU_HEALTH_MAX_BACKOFF 3                    /* the period doubles at most 3 times */

enum gpu_health_kind {
    GPU_HEALTH_OK = 0,
    GPU_HEALTH_XID,  /* an XID critical error (xid says which) */
    GPU_HEALTH_ECC,  /* a double-bit ECC error */
    GPU_HEALTH_LOST, /* GPU_IS_LOST, or no answer from NVML at all */
};

struct gpu_health {
    bool healthy;
    enum gpu_health_kind kind; /* why not, the latest critical event */
    unsigned long long xid;    /* with GPU_HEALTH_XID */
    char reason[96];           /* "XID 79", "double-bit ECC error", "GPU is lost" */
    int64_t since_ms;          /* when it became unhealthy */
    int64_t last_bad_ms;       /* the latest critical event or failed probe */
    int64_t recovered_ms;      /* when it last became healthy again; 0 never */
    unsigned relapses;         /* falls soon after a recovery, 0..GPU_HEALTH_MAX_BACKOFF */
    char blocked[128];         /* why the last re-probe kept it unhealthy; "" none */
};

/* gpu_health_init: healthy, never failed. */
void gpu_health_init(struct gpu_health *h);

/* gpu_health_fail records a critical event at now_ms (why: the reason shown, NULL for the
 * kind's own words). Returns true when the device was healthy until now. A fall within 4
 * quiet periods of the last recovery counts as a relapse (the next period doubles); a later
 * one starts again from one period. */
bool gpu_health_fail(struct gpu_health *h, int64_t recovery_ms, enum gpu_health_kind kind,
                     unsigned long long xid, const char *why, int64_t now_ms);

/* gpu_health_quiet_ms is the quiet period h must pass now: recovery_ms doubled once per
 * relapse. */
int64_t gpu_health_quiet_ms(const struct gpu_health *h, int64_t recovery_ms);

/* gpu_health_due tells whether h is unhealthy, recovery is on (recovery_ms > 0) and its quiet
 * period has passed: time to re-probe it. */
bool gpu_health_due(const struct gpu_health *h, int64_t recovery_ms, int64_t now_ms);

/* gpu_health_recover makes h healthy again at now_ms (after a good re-probe). */
void gpu_health_recover(struct gpu_health *h, int64_t now_ms);

/* gpu_health_probe asks NVML whether dev (a GPU or MIG device) may be used again: it must
 * answer (nvmlDeviceGetUUID) and its GPU parent must have no recovery action pending
 * (nvmlDeviceGetFieldValues NVML_FI_DEV_GET_GPU_RECOVERY_ACTION, when the driver has it).
 * Returns 0, or -EAGAIN with why[0..size) saying what stands in the way ("GPU is lost", "the
 * driver asks for a GPU reset"). */
int gpu_health_probe(const struct gpu_nvml *n, nvmlDevice_t dev, nvmlDevice_t parent, char *why,
                     size_t size);

#endif
