/* dra.h - the daemon in DRA mode (docs/dra-driver.md): the GPUs offered as ResourceSlices and
 * through the kubelet's DRA plugin instead of the device plugin.
 *
 * labeler_dra_start starts the GPU health monitor (gpu/monitor.h) and the kubelet plugin
 * (draplugin/plugin.h); after every detection labeler_dra_cycle brings the devices up to date
 * and publishes the pool (draplugin/slices.h: no write when nothing changed); a health change
 * calls cfg's kick at once, and labeler_dra_publish then publishes the new taints without a
 * detection. labeler_dra_clear removes the slices of this node (the device-plugin mode does it
 * at start: a GPU is never offered both ways). Logs through base/log. */
#ifndef LABELER_DRA_H
#define LABELER_DRA_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "gpu/gpu.h"
#include "kube/client.h"
#include "labeler/config.h"

struct labeler_dra;

struct labeler_dra_status {
    bool registered;       /* the kubelet accepted the DRA plugin */
    size_t devices;        /* published */
    size_t healthy;        /* of which untainted */
    uint64_t slice_writes; /* creates, updates and deletes of slices */
    uint64_t prepares;     /* claims prepared */
};

/* labeler_dra_start: kick (may be NULL) is called from the monitor's thread after a GPU's
 * health changed. client (borrowed) is the daemon's, used from the daemon's thread. */
int labeler_dra_start(const struct labeler_config *cfg, struct kube_client *client,
                      void (*kick)(void), struct labeler_dra **out, struct err *err);

/* labeler_dra_cycle takes a detection's inventory (rc: the detection's result; when NVML
 * could not start, the devices published last stay) and publishes. */
void labeler_dra_cycle(struct labeler_dra *x, const struct gpu_inventory *inv, int rc);

/* labeler_dra_publish publishes the pool with the devices known and the health now. */
void labeler_dra_publish(struct labeler_dra *x);

void labeler_dra_status(struct labeler_dra *x, struct labeler_dra_status *st);

/* labeler_dra_stop stops the monitor and the kubelet plugin; the slices stay (they describe
 * the node until the agent is back). Safe on NULL. */
void labeler_dra_stop(struct labeler_dra *x);

/* labeler_dra_clear deletes this node's slices of cfg's driver; returns how many went, or a
 * negative code with err. */
int labeler_dra_clear(const struct labeler_config *cfg, struct kube_client *client,
                      struct err *err);

#endif
