/* healthev.h - the GPU health Events of a gpulabel that keeps labels but does not serve the
 * GPUs itself: the labels container of the device-plugin pod (deploy/gpulabel/daemonset.yaml),
 * beside a device-plugin container that has no API token. Both watch the same GPUs with the
 * same rules (gpu/health.h, one set of GPULABEL_HEALTH_* settings). With the Helm value
 * devicePlugin.enabled=false another device plugin (NVIDIA's) serves the GPUs, so the Events
 * posted here say what gpulabel's health rules found, not what the kubelet is told. */
#ifndef LABELER_HEALTHEV_H
#define LABELER_HEALTHEV_H

#include "base/err.h"
#include "labeler/config.h"

struct labeler_healthev;

/* labeler_healthev_start starts a GPU health monitor (gpu/monitor.h) whose changes become
 * Events on cfg's Node (labeler_node_event). Fails when NVML cannot start. */
int labeler_healthev_start(const struct labeler_config *cfg, struct labeler_healthev **out,
                           struct err *err);

/* labeler_healthev_stop stops the monitor. Safe on NULL. */
void labeler_healthev_stop(struct labeler_healthev *h);

#endif
