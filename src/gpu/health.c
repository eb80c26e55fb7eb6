/* health.c - the recovery state machine of health.h and its NVML re-probe. */
#include "gpu/health.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void gpu_health_init(struct gpu_health *h)
{
    memset(h, 0, sizeof(*h));
    h->healthy = true;
}

int64_t gpu_health_quiet_ms(const struct gpu_health *h, int64_t recovery_ms)
{
    return recovery_ms << (h->relapses < GPU_HEALTH_MAX_BACKOFF ? h->relapses
                                                                : GPU_HEALTH_MAX_BACKOFF);
}

bool gpu_health_fail(struct gpu_health *h, int64_t recovery_ms, enum gpu_health_kind kind,
                     unsigned long long xid, const char *why, int64_t now_ms)
{
    bool was = h->healthy;

    if (was) {
        /* a fall soon after a recovery: the next quiet period is longer */
        if (h->recovered_ms && recovery_ms > 0 &&
            now_ms - h->recovered_ms < 4 * gpu_health_quiet_ms(h, recovery_ms))
            h->relapses += h->relapses < GPU_HEALTH_MAX_BACKOFF;
        else
            h->relapses = 0;
        h->healthy = false;
        h->since_ms = now_ms;
    }
    h->kind = kind;
    h->xid = kind == GPU_HEALTH_XID ? xid : 0;
    if (why)
        snprintf(h->reason, sizeof(h->reason), "%s", why);
    else if (kind == GPU_HEALTH_XID)
        snprintf(h->reason, sizeof(h->reason), "XID %llu", xid);
    else if (kind == GPU_HEALTH_ECC)
        snprintf(h->reason, sizeof(h->reason), "double-bit ECC error");
    else
        snprintf(h->reason, sizeof(h->reason), "GPU is lost");
    h->last_bad_ms = now_ms;
    h->blocked[0] = '\0';
    return was;
}

bool gpu_health_due(const struct gpu_health *h, int64_t recovery_ms, int64_t now_ms)
{
    return !h->healthy && recovery_ms > 0 &&
           now_ms - h->last_bad_ms >= gpu_health_quiet_ms(h, recovery_ms);
}

void gpu_health_recover(struct gpu_health *h, int64_t now_ms)
{
    h->healthy = true;
    h->kind = GPU_HEALTH_OK;
    h->xid = 0;
    h->reason[0] = '\0';
    h->blocked[0] = '\0';
    h->recovered_ms = now_ms;
}

/* NVML's field and its values (nvml.h, R550 and later). */
#define FI_GPU_RECOVERY_ACTION 230

static const char *recovery_action(unsigned v)
{
    switch (v) {
    case 1:
        return "the driver asks for a GPU reset";
    case 2:
        return "the driver asks for a node reboot";
    case 3:
        return "the driver asks to drain peer-to-peer traffic";
    case 4:
        return "the driver asks for a drain and a GPU reset";
    default:
        return "the driver asks for a recovery action";
    }
}

int gpu_health_probe(const struct gpu_nvml *n, nvmlDevice_t dev, nvmlDevice_t parent, char *why,
                     size_t size)
{
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    nvmlReturn_t rc;

    if (!dev || !n->device_get_uuid) {
        snprintf(why, size, "NVML cannot be asked about it");
        return -EAGAIN;
    }
    rc = n->device_get_uuid(dev, uuid, sizeof(uuid));
    if (rc) {
        snprintf(why, size, "%s",
                 rc == NVML_ERROR_GPU_IS_LOST ? "GPU is lost" : gpu_nvml_error_string(n, rc));
        return -EAGAIN;
    }
    if (n->device_get_field_values && parent) {
        nvmlFieldValue_t fv;

        memset(&fv, 0, sizeof(fv));
        fv.fieldId = FI_GPU_RECOVERY_ACTION;
        /* an old driver without the field: nothing more to ask */
        if (!n->device_get_field_values(parent, 1, &fv) && !fv.nvmlReturn && fv.value.uiVal) {
            snprintf(why, size, "%s (NVML recovery action %u)", recovery_action(fv.value.uiVal),
                     fv.value.uiVal);
            return -EAGAIN;
        }
    }
    return 0;
}
