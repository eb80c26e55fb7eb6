/* gpu.c - one detection pass over NVML: init, read every device, shutdown, unload.
 *
 * Optional queries that fail are recorded as unknown; GPU_IS_LOST on any query, or a handle or
 * name NVML cannot give, marks that GPU lost and the pass goes on with the next one (the pass
 * fails only when every GPU is lost). nvmlShutdown always follows a successful init. */
#include "gpu/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/nvml.h"

/* Copies an NVML string buffer, which the driver NUL-terminates, defensively anyway. */
static void copy_nvml_string(char *dst, size_t size, const char *src)
{
    size_t n = strnlen(src, size - 1);

    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* lost_gpu fails the pass for GPU_IS_LOST; every other error of an optional query just leaves
 * the attribute unknown. */
static int lost_gpu(const struct gpu_nvml *n, unsigned idx, const char *what, nvmlReturn_t rc,
                    struct err *err)
{
    if (rc != NVML_ERROR_GPU_IS_LOST)
        return 0;
    return err_set(err, GPU_ERR_NVML, "GPU %u: %s: %s", idx, what, gpu_nvml_error_string(n, rc));
}

void gpu_mig_profile_name(unsigned ci_slices, unsigned gi_slices, unsigned long long memory_mb,
                          char *out, size_t size)
{
    unsigned long long gb = memory_mb / 1024 + (memory_mb % 1024 != 0);
    int n;

    if (ci_slices && ci_slices < gi_slices)
        n = snprintf(out, size, "%uc.%ug.%llugb", ci_slices, gi_slices, gb);
    else
        n = snprintf(out, size, "%ug.%llugb", gi_slices, gb);
    if (size && (n < 0 || (size_t)n >= size))
        out[0] = '\0'; /* never a cut name: GPU_MIG_PROFILE_NAME_MAX holds every one */
}

static int detect_migs(const struct gpu_nvml *n, unsigned idx, nvmlDevice_t h, struct gpu_device *d,
                       struct err *err)
{
    unsigned max = 0, i;
    nvmlReturn_t rc;

    if (!n->device_get_max_mig_device_count || !n->device_get_mig_device_handle_by_index ||
        !n->device_get_attributes || !n->device_get_uuid)
        return 0;
    rc = n->device_get_max_mig_device_count(h, &max);
    if (lost_gpu(n, idx, "nvmlDeviceGetMaxMigDeviceCount", rc, err))
        return err ? err->code : GPU_ERR_NVML;
    if (rc != NVML_SUCCESS)
        return 0;
    for (i = 0; i < max && d->nmig < GPU_MAX_MIG; i++) {
        struct gpu_mig *m = &d->migs[d->nmig];
        nvmlDeviceAttributes_t a;
        nvmlDevice_t mh = NULL;
        char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE + 1];

        rc = n->device_get_mig_device_handle_by_index(h, i, &mh);
        if (lost_gpu(n, idx, "nvmlDeviceGetMigDeviceHandleByIndex", rc, err))
            return err ? err->code : GPU_ERR_NVML;
        if (rc != NVML_SUCCESS)
            continue; /* NOT_FOUND: no MIG device at this index */
        memset(&a, 0, sizeof(a));
        memset(buf, 0, sizeof(buf));
        if (n->device_get_attributes(mh, &a) != NVML_SUCCESS ||
            n->device_get_uuid(mh, buf, NVML_DEVICE_UUID_V2_BUFFER_SIZE) != NVML_SUCCESS)
            continue;
        copy_nvml_string(m->uuid, sizeof(m->uuid), buf);
        gpu_mig_profile_name(a.computeInstanceSliceCount, a.gpuInstanceSliceCount, a.memorySizeMB,
                             m->profile, sizeof(m->profile));
        m->memory_mb = a.memorySizeMB;
        m->multiprocessors = a.multiprocessorCount;
        m->slices_gi = a.gpuInstanceSliceCount;
        m->slices_ci = a.computeInstanceSliceCount;
        m->copy = a.sharedCopyEngineCount;
        m->decoder = a.sharedDecoderCount;
        m->encoder = a.sharedEncoderCount;
        m->jpeg = a.sharedJpegCount;
        m->ofa = a.sharedOfaCount;
        if (n->device_get_gpu_instance_id && n->device_get_gpu_instance_by_id &&
            n->gpu_instance_get_info) {
            nvmlGpuInstance_t gi = NULL;
            nvmlGpuInstanceInfo_t info;
            unsigned id = 0;

            memset(&info, 0, sizeof(info));
            if (!n->device_get_gpu_instance_id(mh, &id) &&
                !n->device_get_gpu_instance_by_id(h, id, &gi) &&
                !n->gpu_instance_get_info(gi, &info)) {
                m->gi_known = true;
                m->gi_profile_id = info.profileId;
                m->placement_start = info.placement.start;
                m->placement_size = info.placement.size;
            }
        }
        d->nmig++;
    }
    return 0;
}

static int detect_device(const struct gpu_nvml *n, unsigned idx, struct gpu_device *d,
                         struct err *err)
{
    char buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE + 1];
    nvmlDevice_t h = NULL;
    nvmlReturn_t rc;

    memset(d, 0, sizeof(*d));
    rc = n->device_get_handle_by_index(idx, &h);
    if (rc != NVML_SUCCESS)
        return err_set(err, GPU_ERR_NVML, "GPU %u: nvmlDeviceGetHandleByIndex_v2: %s", idx,
                       gpu_nvml_error_string(n, rc));
    memset(buf, 0, sizeof(buf));
    rc = n->device_get_name(h, buf, NVML_DEVICE_NAME_V2_BUFFER_SIZE);
    if (rc != NVML_SUCCESS)
        return err_set(err, GPU_ERR_NVML, "GPU %u: nvmlDeviceGetName: %s", idx,
                       gpu_nvml_error_string(n, rc));
    copy_nvml_string(d->name, sizeof(d->name), buf);

    if (n->device_get_memory_info) {
        nvmlMemory_t mem;

        memset(&mem, 0, sizeof(mem));
        rc = n->device_get_memory_info(h, &mem);
        if (lost_gpu(n, idx, "nvmlDeviceGetMemoryInfo", rc, err))
            return err ? err->code : GPU_ERR_NVML;
        if (rc == NVML_SUCCESS) {
            d->memory_total = mem.total;
            d->memory_known = true;
        }
    }
    if (n->device_get_uuid) {
        memset(buf, 0, sizeof(buf));
        rc = n->device_get_uuid(h, buf, NVML_DEVICE_UUID_V2_BUFFER_SIZE);
        if (lost_gpu(n, idx, "nvmlDeviceGetUUID", rc, err))
            return err ? err->code : GPU_ERR_NVML;
        if (rc == NVML_SUCCESS)
            copy_nvml_string(d->uuid, sizeof(d->uuid), buf);
    }
    if (n->device_get_pci_info) {
        nvmlPciInfo_t pci;

        memset(&pci, 0, sizeof(pci));
        rc = n->device_get_pci_info(h, &pci);
        if (lost_gpu(n, idx, "nvmlDeviceGetPciInfo_v3", rc, err))
            return err ? err->code : GPU_ERR_NVML;
        if (rc == NVML_SUCCESS)
            copy_nvml_string(d->pci_bus_id, sizeof(d->pci_bus_id), pci.busId);
    }
    if (n->device_get_cuda_compute_capability) {
        int major = 0, minor = 0;

        rc = n->device_get_cuda_compute_capability(h, &major, &minor);
        if (lost_gpu(n, idx, "nvmlDeviceGetCudaComputeCapability", rc, err))
            return err ? err->code : GPU_ERR_NVML;
        if (rc == NVML_SUCCESS && major > 0 && minor >= 0) {
            d->cc_major = major;
            d->cc_minor = minor;
            d->cc_known = true;
        }
    }
    d->minor = d->brand = d->arch = -1;
    if (n->device_get_minor_number) {
        unsigned v = 0;

        rc = n->device_get_minor_number(h, &v);
        if (lost_gpu(n, idx, "nvmlDeviceGetMinorNumber", rc, err))
            return err ? err->code : GPU_ERR_NVML;
        if (rc == NVML_SUCCESS && v < 1u << 20)
            d->minor = (int)v;
    }
    if (n->device_get_brand) {
        int v = 0;

        if (n->device_get_brand(h, &v) == NVML_SUCCESS && v >= 0)
            d->brand = v;
    }
    if (n->device_get_architecture) {
        unsigned v = 0;

        if (n->device_get_architecture(h, &v) == NVML_SUCCESS && v < 1024)
            d->arch = (int)v;
    }
    if (n->device_get_mig_mode) {
        unsigned current = 0, pending = 0;

        rc = n->device_get_mig_mode(h, &current, &pending);
        if (lost_gpu(n, idx, "nvmlDeviceGetMigMode", rc, err))
            return err ? err->code : GPU_ERR_NVML;
        /* NOT_SUPPORTED means no MIG on this GPU; other errors say nothing either way */
        if (rc == NVML_SUCCESS) {
            d->mig_capable = true;
            d->mig_enabled = current == NVML_DEVICE_MIG_ENABLE;
        }
    }
    if (d->mig_enabled)
        return detect_migs(n, idx, h, d, err);
    return 0;
}

static int detect_initialised(const struct gpu_nvml *n, struct gpu_inventory *inv, struct err *err)
{
    unsigned count = 0, i;
    nvmlReturn_t rc;
    int ret;

    if (n->system_get_driver_version) {
        char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE + 1];

        memset(buf, 0, sizeof(buf));
        if (n->system_get_driver_version(buf, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE) ==
            NVML_SUCCESS)
            copy_nvml_string(inv->driver_version, sizeof(inv->driver_version), buf);
    }
    if (n->system_get_cuda_driver_version) {
        int v = 0;

        if (n->system_get_cuda_driver_version(&v) == NVML_SUCCESS && v > 0)
            inv->cuda_driver_version = v;
    }
    rc = n->device_get_count(&count);
    if (rc != NVML_SUCCESS)
        return err_set(err, GPU_ERR_NVML, "nvmlDeviceGetCount_v2: %s",
                       gpu_nvml_error_string(n, rc));
    if (count > GPU_MAX_DEVICES)
        return err_set(err, GPU_ERR_NVML, "nvmlDeviceGetCount_v2: %u GPUs, more than %d", count,
                       GPU_MAX_DEVICES);
    if (!count)
        return 0;
    inv->devices = calloc(count, sizeof(*inv->devices));
    if (!inv->devices)
        return err_set(err, -ENOMEM, "out of memory for %u GPUs", count);
    for (i = 0; i < count; i++) {
        struct gpu_device *d = &inv->devices[i];
        struct err e;

        err_clear(&e);
        ret = detect_device(n, i, d, &e);
        if (ret == -ENOMEM)
            return err_set(err, ret, "%s", e.msg);
        if (ret) {
            /* nothing read of a lost GPU is trusted: only its error stays */
            memset(d, 0, sizeof(*d));
            d->minor = d->brand = d->arch = -1;
            d->lost = true;
            snprintf(d->error, sizeof(d->error), "%.*s", (int)sizeof(d->error) - 1, e.msg);
            inv->nlost++;
        }
        inv->ndevices++;
    }
    if (inv->nlost == inv->ndevices)
        return err_set(err, GPU_ERR_NVML, "%s%s", inv->ndevices > 1 ? "every GPU is lost: " : "",
                       inv->devices[0].error);
    return 0;
}

const struct gpu_device *gpu_first_usable(const struct gpu_inventory *inv)
{
    size_t i;

    for (i = 0; inv && i < inv->ndevices; i++)
        if (!inv->devices[i].lost)
            return &inv->devices[i];
    return NULL;
}

int gpu_detect(const char *lib_path, struct gpu_inventory *inv, struct err *err)
{
    struct gpu_nvml n;
    nvmlReturn_t rc;
    int ret;

    memset(inv, 0, sizeof(*inv));
    ret = gpu_nvml_open(lib_path, &n, err);
    if (ret)
        return ret;
    inv->simulated = n.simulated;
    rc = n.init();
    if (rc == NVML_ERROR_DRIVER_NOT_LOADED) {
        ret = err_set(err, GPU_ERR_DRIVER_NOT_LOADED,
                      "NVML cannot start: the NVIDIA driver is not loaded "
                      "(nvmlInit_v2: %s)",
                      gpu_nvml_error_string(&n, rc));
        goto out;
    }
    if (rc != NVML_SUCCESS) {
        ret = err_set(err, GPU_ERR_NVML, "NVML cannot start: nvmlInit_v2: %s",
                      gpu_nvml_error_string(&n, rc));
        goto out;
    }
    ret = detect_initialised(&n, inv, err);
    n.shutdown();
out:
    gpu_nvml_close(&n);
    return ret;
}

const char *gpu_brand_name(int brand)
{
    static const char *const names[] = {
        "Unknown",   "Quadro",      "Tesla",     "NVS",        "Grid",      "GeForce",
        "Titan",     "NvidiaVApps", "NvidiaVPC", "NvidiaVCS",  "NvidiaVWS", "NvidiaCloudGaming",
        "QuadroRTX", "NvidiaRTX",   "Nvidia",    "GeForceRTX", "TitanRTX",
    };

    return brand >= 0 && (size_t)brand < sizeof(names) / sizeof(names[0]) ? names[brand]
                                                                          : "Unknown";
}

const char *gpu_arch_name(int arch)
{
    static const char *const names[] = {
        "Unknown", "Unknown", "Kepler",       "Maxwell", "Pascal",    "Volta",
        "Turing",  "Ampere",  "Ada Lovelace", "Hopper",  "Blackwell",
    };

    return arch >= 0 && (size_t)arch < sizeof(names) / sizeof(names[0]) ? names[arch] : "Unknown";
}

void gpu_inventory_release(struct gpu_inventory *inv)
{
    if (!inv)
        return;
    free(inv->devices);
    memset(inv, 0, sizeof(*inv));
}
