/* devices.h - the GPUs the device plugin advertises, their IDs and health, and the two pure
 * decisions the kubelet asks for: which devices to prefer for a request (NVLink, then one PCIe
 * switch, then one NUMA node) and what a container gets for the devices it was given.
 *
 * Nothing here talks to NVML, gRPC or the kubelet: the plugin fills a struct dp_inventory from
 * NVML and sysfs, tests fill it by hand. Device IDs are GPU UUIDs; with replicas (time-slicing)
 * each GPU is advertised replicas times as "UUID::0" ... "UUID::N-1", as NVIDIA's plugin does. */
#ifndef DEVICEPLUGIN_DEVICES_H
#define DEVICEPLUGIN_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

#define DP_ID_MAX 128       /* a device ID, "GPU-<uuid>::<replica>" and its NUL */
#define DP_MAX_GPUS 256     /* as gpu/gpu.h GPU_MAX_DEVICES */
#define DP_MAX_REPLICAS 256 /* --replicas */

/* Weights of a pair score (dp_pair_score): NVLink links dominate any PCIe relation. */
#define DP_SCORE_NVLINK (1u << 20) /* per NVLink link between the two GPUs */
#define DP_SCORE_PCIE_SWITCH 3     /* behind one PCIe switch (NVML SINGLE or MULTIPLE) */
#define DP_SCORE_HOSTBRIDGE 2      /* behind one host bridge */
#define DP_SCORE_NUMA 1            /* on one NUMA node */

struct dp_gpu {
    char uuid[96];       /* "GPU-..." */
    char pci_bus_id[32]; /* NVML's "00000000:00:08.0"; "" unknown */
    unsigned index;      /* NVML index */
    int numa_node;       /* from sysfs; -1 unknown */
    bool healthy;
    char unhealthy_reason[128]; /* why not, e.g. "XID 79"; "" when healthy */
};

/* Device list strategies (--device-list-strategy), as bits: several may be combined. */
enum {
    DP_LIST_ENVVAR = 1u << 0,          /* NVIDIA_VISIBLE_DEVICES=<uuid>,<uuid> */
    DP_LIST_CDI_ANNOTATIONS = 1u << 1, /* cdi.k8s.io/gpulabel_<n>: <CDI names> */
    DP_LIST_CDI_CRI = 1u << 2,         /* ContainerAllocateResponse.cdi_devices */
};

#define DP_CDI_KIND "k8s.device-plugin.nvidia.com/gpu" /* NVIDIA's CDI kind for its plugin */
#define DP_CDI_ANNOTATION_PREFIX "cdi.k8s.io/"

struct dp_inventory {
    struct dp_gpu *gpus; /* ngpus entries; owned */
    size_t ngpus;
    unsigned replicas; /* 1: no sharing; N > 1: time-slicing, N devices per GPU */
    /* score[i * ngpus + j]: how closely GPUs i and j are joined (see DP_SCORE_*); owned,
     * NULL = no topology known (every pair 0) */
    uint32_t *score;
};

/* dp_inventory_release frees the arrays; safe on NULL or zeroed. */
void dp_inventory_release(struct dp_inventory *inv);

/* dp_pair_score returns score[a][b] (0 without topology or for a == b). */
uint32_t dp_pair_score(const struct dp_inventory *inv, size_t a, size_t b);

/* dp_ndevices is the number of advertised devices: ngpus * replicas. */
size_t dp_ndevices(const struct dp_inventory *inv);

/* dp_device_id writes the ID of device k (0 <= k < dp_ndevices) into out[DP_ID_MAX] and
 * returns the GPU it belongs to. */
size_t dp_device_id(const struct dp_inventory *inv, size_t k, char *out);

/* dp_id_gpu maps a device ID to its GPU index, or -1 when no device has that ID. */
long dp_id_gpu(const struct dp_inventory *inv, const char *id);

/* dp_list_strategy_parse reads "envvar", "cdi-annotations", "cdi-cri" or a comma list of
 * them into DP_LIST_* bits; -EINVAL with err naming the unknown one. */
int dp_list_strategy_parse(const char *s, unsigned *out, struct err *err);

/* dp_visible_devices appends the UUIDs of the GPUs behind ids[0..n), comma-separated, each
 * once, in the order first seen. Fails with -ENOENT and err naming the first ID that is no
 * device of inv, or -EINVAL when a device's GPU is unhealthy (the kubelet must not get it). */
int dp_visible_devices(const struct dp_inventory *inv, const char *const *ids, size_t n,
                       struct buf *out, struct err *err);

/* dp_preferred picks size device IDs from available[0..navail), including every one of
 * must[0..nmust), into out[0..size) (pointers into available/must, borrowed). Without
 * replicas it compares choices by, in order: the NVLink links it keeps whole (links inside
 * the chosen set or inside the GPUs left over, so that an odd request takes a lone GPU rather
 * than split a pair), the NVLink links inside the chosen set, the PCIe switch / host bridge /
 * NUMA closeness of the chosen set, then of the rest, and last the lower indices; it tries
 * every combination when there are at most 200000, else adds GPUs greedily by the same
 * order. With replicas it spreads the request over the GPUs this request uses least, then
 * those with the most available replicas. Returns the number chosen (less than size only when
 * available is too short), or a negative code with err saying why (an unknown or repeated ID,
 * a must ID not available). */
long dp_preferred(const struct dp_inventory *inv, const char *const *available, size_t navail,
                  const char *const *must, size_t nmust, size_t size, const char **out,
                  struct err *err);

#endif
