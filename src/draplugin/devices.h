/* devices.h - the node's GPUs as DRA devices, the way NVIDIA's DRA driver (gpu.nvidia.com)
 * names and describes them, so that DeviceClasses and claims written for it select the same
 * GPUs (docs/dra-driver.md):
 *
 *   - a GPU is "gpu-<minor>"; a MIG device "gpu-<minor>-mig-<profile without dots>-<GPU
 *     instance profile ID>-<first memory slice>" (gpu-0-mig-1g5gb-19-0);
 *   - attributes in the driver's domain: type ("gpu", "mig"), uuid, productName (NVML's name),
 *     brand, architecture (strings), cudaComputeCapability, driverVersion, cudaDriverVersion
 *     (semantic versions); MIG devices add parentUUID and profile ("1g.5gb"); the standard
 *     resource.kubernetes.io/pciBusID, pcieRoot (from sysfs) and numaNode;
 *   - capacity memory (bytes); a MIG device also multiprocessors, copyEngines, decoders,
 *     encoders, jpegEngines, ofaEngines, and consumes them, with its memory slices, from its
 *     GPU's counter set "gpu-<minor>-counter-set" (partitionable devices).
 *
 * Pure: from a gpu/gpu.h inventory and sysfs to plain structs and JSON (jansson); nothing here
 * talks to NVML or the API server. */
#ifndef DRAPLUGIN_DEVICES_H
#define DRAPLUGIN_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "gpu/gpu.h"
#include "gpu/health.h"

#define DRA_DEFAULT_DRIVER "gpu.nvidia.com"
#define DRA_NAME_MAX 64 /* a device name: a DNS label */

struct dra_device {
    char name[DRA_NAME_MAX];
    bool mig;
    size_t gpu;   /* its GPU: an index into devices (the inventory's order) */
    size_t mig_k; /* with mig: which of the GPU's MIG devices */
    char uuid[96];
};

/* A GPU as the slice shows it, kept between detections: a GPU that NVML cannot read any more
 * is still described by what was read of it last (and tainted gpu-lost). */
struct dra_gpu {
    struct gpu_device dev; /* as NVML read it (lost: the last good read) */
    bool lost;             /* this detection could not read it */
    int minor;             /* dev.minor, or its NVML index when NVML has no minor numbers */
    char pci_bus_id[16];   /* "0000:00:08.0" (sysfs and the standard attribute's form) */
    char pcie_root[64];    /* "pci0000:00"; "" when sysfs does not say */
    int numa_node;         /* -1 unknown */
};

/* The node's devices: GPUs that NVML showed (and those lost since), and the devices to
 * publish. */
struct dra_devices {
    struct dra_gpu *gpus; /* ngpus, NVML index order; owned */
    size_t ngpus;
    struct dra_device *v; /* n devices; owned */
    size_t n;
    char driver_version[80];
    int cuda_driver_version;
};

/* One GPU's health as the slice shows it: taints on its devices (NULL or healthy: none). */
struct dra_health {
    bool healthy;
    enum gpu_health_kind kind;
    unsigned long long xid;
    int64_t since_wall; /* Unix seconds: the taint's timeAdded */
};

/* dra_devices_update makes d the devices of inv (a successful or partly lost detection),
 * keeping what was known of a GPU that is lost now (same NVML index) from d's previous
 * contents. sysfs ("/sys" when NULL) gives the PCIe root and NUMA node. 0 or -ENOMEM. */
int dra_devices_update(struct dra_devices *d, const struct gpu_inventory *inv, const char *sysfs,
                       struct err *err);

/* dra_devices_find returns the device named name, or NULL. */
const struct dra_device *dra_devices_find(const struct dra_devices *d, const char *name);

/* dra_devices_release frees d's arrays; d is empty afterwards. */
void dra_devices_release(struct dra_devices *d);

/* dra_version_normalize writes a version NVML gives ("550.107.02", "12.4", "8.0") as the
 * semantic version a version attribute must hold ("550.107.2", "12.4.0", "8.0.0"); false
 * when it is not one to two dots between decimal numbers. */
bool dra_version_normalize(const char *in, char *out, size_t size);

/* dra_device_json returns device k of d as a resource.k8s.io/v1 Device object, with the
 * taint of health (NULL: none) of its GPU under driver's domain (<driver>/xid = the XID,
 * <driver>/gpu-lost; a double-bit ECC error is XID 48, as the driver reports it; effect
 * NoSchedule); NULL when out of memory. The caller decrefs. */
json_t *dra_device_json(const struct dra_devices *d, size_t k, const char *driver,
                        const struct dra_health *health);

/* dra_counter_sets_json returns the CounterSet objects of d's MIG-enabled GPUs (one per GPU
 * with MIG devices: their capacities summed, one counter per memory slice they hold), an
 * empty array when there is none; NULL when out of memory. */
json_t *dra_counter_sets_json(const struct dra_devices *d);

/* dra_cdi_name writes the CDI device name of device k prepared for claim uid:
 * "k8s.<driver>/claim=<uid>-<device name>", as NVIDIA's driver names them. */
void dra_cdi_name(const char *driver, const char *uid, const char *device, char *out, size_t size);

#endif
