/* inventory.c - what the device plugin advertises, read once at start: full GPUs or MIG devices
 * by the MIG strategy, each with its UUID, PCI address and NUMA node (sysfs), and how closely
 * each pair is joined (NVLink links, then the PCIe relation NVML reports, else sysfs NUMA).
 * Also the MIG profiles a node shows, for --mig-strategy mixed's one plugin per profile. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "deviceplugin/plugin-int.h"
#include "gpu/gpu.h"
#include "gpu/nvml.h"

/* NVML's "00000000:00:08.0" as sysfs names it: "0000:00:08.0". */
static int sysfs_bdf(const char *bus_id, char *out, size_t size)
{
    unsigned dom, bus, dev, fn;

    if (sscanf(bus_id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
        return -EINVAL;
    snprintf(out, size, "%04x:%02x:%02x.%x", dom & 0xffff, bus & 0xff, dev & 0x1f, fn & 7);
    return 0;
}

static int numa_node_of(const char *sysfs, const char *bus_id)
{
    char bdf[32], path[4200];
    struct buf b = BUF_INIT(64);
    long v;
    char *end;

    if (sysfs_bdf(bus_id, bdf, sizeof(bdf)))
        return -1;
    snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/numa_node", sysfs, bdf);
    if (buf_read_file(path, &b) || !b.data) {
        buf_release(&b);
        return -1;
    }
    v = strtol(b.data, &end, 10);
    if (end == b.data || v < 0 || v > INT_MAX)
        v = -1;
    buf_release(&b);
    return (int)v;
}

const char *dp_sysfs_root(const struct dp_plugin *p)
{
    return p->cfg.sysfs_root && *p->cfg.sysfs_root ? p->cfg.sysfs_root : "/sys";
}

int dp_inventory_fill(struct dp_plugin *p, struct dp_gpu *g, nvmlDevice_t h, nvmlDevice_t parent)
{
    const struct gpu_nvml *n = &p->nvml;
    char uuid[sizeof(g->uuid)];
    nvmlPciInfo_t pci;
    nvmlReturn_t rc;

    memset(uuid, 0, sizeof(uuid));
    rc = n->device_get_uuid(h, uuid, sizeof(uuid) - 1);
    if (rc)
        return (int)rc;
    memcpy(g->uuid, uuid, sizeof(uuid));
    g->pci_bus_id[0] = '\0';
    g->numa_node = -1;
    memset(&pci, 0, sizeof(pci));
    if (n->device_get_pci_info && !n->device_get_pci_info(parent, &pci)) {
        pci.busId[sizeof(pci.busId) - 1] = '\0';
        snprintf(g->pci_bus_id, sizeof(g->pci_bus_id), "%s", pci.busId);
        g->numa_node = numa_node_of(dp_sysfs_root(p), g->pci_bus_id);
    }
    return 0;
}

/* One device this plugin advertises: a full GPU, or a MIG device by the MIG strategy. A full
 * GPU NVML cannot read (no handle: h NULL, or no UUID) is advertised all the same, Unhealthy,
 * under the ID "lost-gpu-<index>" until it answers again (health.c reads it then), so that a
 * lost GPU never hides the others; a MIG device that cannot be read is left out. */
static void inventory_entry(struct dp_plugin *p, nvmlDevice_t h, nvmlDevice_t parent,
                            unsigned index, const char *why)
{
    const struct gpu_nvml *n = &p->nvml;
    size_t k = p->inv.ngpus;
    struct dp_gpu *g;
    int rc = -1;

    if (k >= DP_MAX_GPUS)
        return;
    g = &p->inv.gpus[k];
    memset(g, 0, sizeof(*g));
    g->index = index;
    g->healthy = true;
    g->numa_node = -1;
    if (h)
        rc = dp_inventory_fill(p, g, h, parent);
    if (rc && h != parent)
        return;
    if (rc) {
        snprintf(g->uuid, sizeof(g->uuid), "lost-gpu-%u", index);
        g->healthy = false;
        if (why)
            snprintf(g->unhealthy_reason, sizeof(g->unhealthy_reason), "%s", why);
        else if (rc == NVML_ERROR_GPU_IS_LOST)
            snprintf(g->unhealthy_reason, sizeof(g->unhealthy_reason), "GPU is lost");
        else
            snprintf(g->unhealthy_reason, sizeof(g->unhealthy_reason), "nvmlDeviceGetUUID: %s",
                     gpu_nvml_error_string(n, (nvmlReturn_t)rc));
        p->unread[k] = true;
        h = parent = NULL;
    }
    p->handles[k] = h;
    p->parents[k] = parent;
    p->inv.ngpus++;
}

int dp_inventory_read(struct dp_plugin *p, struct err *err)
{
    const struct gpu_nvml *n = &p->nvml;
    struct dp_inventory *inv = &p->inv;
    unsigned count = 0, i, j, l;
    size_t a, b;
    nvmlReturn_t rc;

    rc = n->device_get_count(&count);
    if (rc)
        return err_set(err, -EIO, "nvmlDeviceGetCount_v2: %s", gpu_nvml_error_string(n, rc));
    if (!n->device_get_uuid)
        return err_set(err, -EIO, "the NVML library has no nvmlDeviceGetUUID");
    if (count > DP_MAX_GPUS)
        count = DP_MAX_GPUS;
    inv->gpus = calloc(DP_MAX_GPUS, sizeof(*inv->gpus));
    if (!inv->gpus)
        return err_set(err, -ENOMEM, "out of memory");
    inv->replicas = p->cfg.replicas > 1 ? p->cfg.replicas : 1;
    for (i = 0; i < count; i++) {
        nvmlDevice_t h;
        unsigned cur = 0, pend = 0, max = 0;
        bool mig = false;

        rc = n->device_get_handle_by_index(i, &h);
        if (rc) {
            char why[128];

            /* not known to be split: with mixed it belongs to nvidia.com/gpu's plugin */
            if (!p->cfg.mig_profile) {
                snprintf(why, sizeof(why), "nvmlDeviceGetHandleByIndex_v2: %s",
                         gpu_nvml_error_string(n, rc));
                inventory_entry(p, NULL, NULL, i, why);
            }
            continue;
        }
        if (p->cfg.mig_strategy && n->device_get_mig_mode &&
            !n->device_get_mig_mode(h, &cur, &pend))
            mig = cur == NVML_DEVICE_MIG_ENABLE;
        if (!mig) {
            /* mixed: full GPUs are nvidia.com/gpu, served by the plugin without a profile */
            if (p->cfg.mig_profile)
                continue;
            inventory_entry(p, h, h, i, NULL);
            continue;
        }
        if (p->cfg.mig_strategy == DP_MIG_MIXED && !p->cfg.mig_profile)
            continue;
        if (!n->device_get_max_mig_device_count || !n->device_get_mig_device_handle_by_index ||
            n->device_get_max_mig_device_count(h, &max))
            continue;
        for (j = 0; j < max; j++) {
            nvmlDeviceAttributes_t at;
            nvmlDevice_t mh;
            char prof[GPU_MIG_PROFILE_NAME_MAX];

            if (n->device_get_mig_device_handle_by_index(h, j, &mh))
                continue;
            memset(&at, 0, sizeof(at));
            if (p->cfg.mig_profile) {
                if (!n->device_get_attributes || n->device_get_attributes(mh, &at))
                    continue;
                gpu_mig_profile_name(at.computeInstanceSliceCount, at.gpuInstanceSliceCount,
                                     at.memorySizeMB, prof, sizeof(prof));
                if (strcmp(prof, p->cfg.mig_profile))
                    continue;
            }
            inventory_entry(p, mh, h, i, NULL);
        }
    }
    if (!inv->ngpus)
        return err_set(err, -ENODEV, "NVML reports no %s on this node",
                       p->cfg.mig_profile ? "MIG device of this profile" : "GPU");
    inv->score = calloc(inv->ngpus * inv->ngpus, sizeof(*inv->score));
    if (!inv->score)
        return err_set(err, -ENOMEM, "out of memory");
    /* pair scores: NVLink links, then the PCIe relation NVML reports, else sysfs NUMA; MIG
     * devices are placed by their GPUs, and two on one GPU are as close as it gets */
    for (a = 0; a < inv->ngpus; a++) {
        for (b = 0; b < inv->ngpus; b++) {
            int level = -1;
            uint32_t sc = 0;

            if (a == b || p->unread[a] || p->unread[b])
                continue; /* a GPU NVML cannot read is placed nowhere */
            if (p->parents[a] == p->parents[b])
                level = NVML_TOPOLOGY_INTERNAL;
            else if (n->device_get_topology_common_ancestor &&
                     n->device_get_topology_common_ancestor(p->parents[a], p->parents[b], &level))
                level = -1;
            if (level >= 0 && level <= NVML_TOPOLOGY_MULTIPLE)
                sc = DP_SCORE_PCIE_SWITCH;
            else if (level == NVML_TOPOLOGY_HOSTBRIDGE)
                sc = DP_SCORE_HOSTBRIDGE;
            else if (level == NVML_TOPOLOGY_NODE)
                sc = DP_SCORE_NUMA;
            else if (level < 0 && inv->gpus[a].numa_node >= 0 &&
                     inv->gpus[a].numa_node == inv->gpus[b].numa_node)
                sc = DP_SCORE_NUMA;
            inv->score[a * inv->ngpus + b] = sc;
        }
        if (p->unread[a] || p->handles[a] != p->parents[a] || !n->device_get_nvlink_state ||
            !n->device_get_nvlink_remote_pci_info)
            continue;
        for (l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
            nvmlPciInfo_t remote;
            int active = 0;

            if (n->device_get_nvlink_state(p->handles[a], l, &active) ||
                active != NVML_FEATURE_ENABLED)
                continue;
            memset(&remote, 0, sizeof(remote));
            if (n->device_get_nvlink_remote_pci_info(p->handles[a], l, &remote))
                continue;
            remote.busId[sizeof(remote.busId) - 1] = '\0';
            for (b = 0; b < inv->ngpus; b++)
                if (b != a && !p->unread[b] && p->handles[b] == p->parents[b] &&
                    !strcasecmp(remote.busId, inv->gpus[b].pci_bus_id))
                    inv->score[a * inv->ngpus + b] += DP_SCORE_NVLINK;
        }
    }
    return 0;
}

int dp_mig_profiles(const char *nvml_lib, char (*out)[32], size_t max, size_t *n, struct err *err)
{
    struct gpu_inventory inv;
    size_t i, j, k;
    int rc;

    *n = 0;
    rc = gpu_detect(nvml_lib, &inv, err);
    for (i = 0; !rc && i < inv.ndevices; i++)
        for (j = 0; j < inv.devices[i].nmig; j++) {
            const char *prof = inv.devices[i].migs[j].profile;

            for (k = 0; k < *n && strcmp(out[k], prof); k++)
                ;
            if (k == *n && *n < max)
                snprintf(out[(*n)++], sizeof(out[0]), "%s", prof);
        }
    gpu_inventory_release(&inv);
    /* sorted, so that the plugins start in a stable order */
    for (i = 0; i < *n; i++)
        for (j = i + 1; j < *n; j++)
            if (strcmp(out[j], out[i]) < 0) {
                char t[32];

                memcpy(t, out[i], sizeof(t));
                memcpy(out[i], out[j], sizeof(t));
                memcpy(out[j], t, sizeof(t));
            }
    return rc;
}
