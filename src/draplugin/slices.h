/* slices.h - the node's devices published as the ResourceSlices of one pool, the way
 * k8s.io/dynamic-resource-allocation's resourceslice controller (which NVIDIA's driver uses)
 * lays them out and names them:
 *
 *   - one pool per node, named after the node; every slice has spec.nodeName = the node and
 *     an owner reference to the Node (controller: true), so slices go with their node;
 *   - slice names come from generateName "<index, 5 hex digits>-<driver>-<node>-";
 *   - without MIG devices one slice holds every device (64 a slice at most, as the API allows
 *     when devices carry taints or consume counters); with MIG devices the counter sets come
 *     first (8 a slice) and then one slice per GPU (Devices and SharedCounters may not share
 *     a slice since v1.35);
 *   - the pool's generation grows by one whenever anything changes (every slice is then
 *     written with it); nothing is written when nothing changed; a slice the pool no longer
 *     needs, or of an older generation, or with a name that is not ours, is deleted.
 *
 * Reading our own slices back needs only their names, resource versions and specs; the JSON
 * stays inside this file. */
#ifndef DRAPLUGIN_SLICES_H
#define DRAPLUGIN_SLICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "draplugin/devices.h"
#include "kube/client.h"

#define DRA_SLICE_MAX_DEVICES 64     /* with taints or counters (ResourceSliceMaxDevices...) */
#define DRA_SLICE_MAX_COUNTER_SETS 8 /* ResourceSliceMaxCounterSets */

/* dra_slices_desired returns the slices d needs, in order: an array of partial specs, each
 * {"devices": [...]} or {"sharedCounters": [...]}; health[i] (NULL, or d->ngpus entries)
 * taints GPU i's devices. NULL when out of memory. The caller decrefs. */
json_t *dra_slices_desired(const struct dra_devices *d, const char *driver,
                           const struct dra_health *health);

struct dra_slices_result {
    unsigned created, updated, deleted;
    int64_t generation; /* the pool's generation after the sync */
};

/* dra_slices_sync makes the pool of node (driver's slices with spec.nodeName = node) hold
 * exactly desired (from dra_slices_desired): one LIST, then only the writes that differ.
 * node_uid is the Node's UID (the owner reference). On an API error err names the verb and
 * the slice; what was written before stays (the next sync goes on from there). */
int dra_slices_sync(struct kube_client *c, const char *driver, const char *node,
                    const char *node_uid, const json_t *desired, struct dra_slices_result *res,
                    struct err *err);

/* dra_node_uid reads the Node's metadata.uid into out[0..size). */
int dra_node_uid(struct kube_client *c, const char *node, char *out, size_t size, struct err *err);

#endif
