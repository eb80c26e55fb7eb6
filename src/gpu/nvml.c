/* nvml.c - loading libnvidia-ml.so.1 with dlopen and binding the versioned NVML symbols.
 *
 * Pointers are copied out of dlsym's void * with memcpy, the one conversion ISO C allows
 * between object and function pointers without a diagnostic. */
#include "gpu/nvml.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#define NVML_DEFAULT_LIB "libnvidia-ml.so.1"

struct nvml_symbol {
    const char *name;
    size_t offset; /* of the function pointer in struct gpu_nvml */
    bool required;
};

/* clang-format off */
#define SYM(name_, member_, req_) {name_, offsetof(struct gpu_nvml, member_), req_}
/* clang-format on */

static const struct nvml_symbol nvml_symbols[] = {
    SYM("nvmlInit_v2", init, true),
    SYM("nvmlShutdown", shutdown, true),
    SYM("nvmlDeviceGetCount_v2", device_get_count, true),
    SYM("nvmlDeviceGetHandleByIndex_v2", device_get_handle_by_index, true),
    SYM("nvmlDeviceGetName", device_get_name, true),
    SYM("nvmlErrorString", error_string, false),
    SYM("nvmlSystemGetDriverVersion", system_get_driver_version, false),
    SYM("nvmlSystemGetCudaDriverVersion", system_get_cuda_driver_version, false),
    SYM("nvmlDeviceGetMemoryInfo", device_get_memory_info, false),
    SYM("nvmlDeviceGetUUID", device_get_uuid, false),
    SYM("nvmlDeviceGetPciInfo_v3", device_get_pci_info, false),
    SYM("nvmlDeviceGetCudaComputeCapability", device_get_cuda_compute_capability, false),
    SYM("nvmlDeviceGetMigMode", device_get_mig_mode, false),
    SYM("nvmlEventSetCreate", event_set_create, false),
    SYM("nvmlEventSetFree", event_set_free, false),
    SYM("nvmlDeviceRegisterEvents", device_register_events, false),
    SYM("nvmlDeviceGetSupportedEventTypes", device_get_supported_event_types, false),
    SYM("nvmlEventSetWait_v2", event_set_wait, false),
    SYM("nvmlDeviceGetTopologyCommonAncestor", device_get_topology_common_ancestor, false),
    SYM("nvmlDeviceGetNvLinkState", device_get_nvlink_state, false),
    SYM("nvmlDeviceGetNvLinkRemotePciInfo_v2", device_get_nvlink_remote_pci_info, false),
    SYM("nvmlDeviceGetMaxMigDeviceCount", device_get_max_mig_device_count, false),
    SYM("nvmlDeviceGetMigDeviceHandleByIndex", device_get_mig_device_handle_by_index, false),
    SYM("nvmlDeviceGetAttributes_v2", device_get_attributes, false),
    SYM("nvmlDeviceGetFieldValues", device_get_field_values, false),
    SYM("nvmlDeviceGetMinorNumber", device_get_minor_number, false),
    SYM("nvmlDeviceGetBrand", device_get_brand, false),
    SYM("nvmlDeviceGetArchitecture", device_get_architecture, false),
    SYM("nvmlDeviceGetGpuInstanceId", device_get_gpu_instance_id, false),
    SYM("nvmlDeviceGetGpuInstanceById", device_get_gpu_instance_by_id, false),
    SYM("nvmlGpuInstanceGetInfo", gpu_instance_get_info, false),
};

int gpu_nvml_open(const char *path, struct gpu_nvml *n, struct err *err)
{
    const char *lib = path && *path ? path : NVML_DEFAULT_LIB;
    size_t i;
    int rc = 0;

    memset(n, 0, sizeof(*n));
    dlerror();
    n->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!n->dl) {
        const char *why = dlerror();

        return err_set(err, -ENOENT, "cannot load NVML library '%s': %s", lib,
                       why ? why : "unknown dlopen error");
    }
    for (i = 0; i < sizeof(nvml_symbols) / sizeof(nvml_symbols[0]); i++) {
        const struct nvml_symbol *s = &nvml_symbols[i];
        void *p = dlsym(n->dl, s->name);

        if (!p && s->required) {
            rc = err_set(err, -ENOENT,
                         "cannot use NVML library '%s': it has no symbol '%s' "
                         "(not an NVIDIA driver library, or a driver older than 5.319)",
                         lib, s->name);
            goto out;
        }
        memcpy((char *)n + s->offset, &p, sizeof(p));
    }
    /* The test double exports this marker so the program can say it is not a real driver. */
    n->simulated = dlsym(n->dl, "fake_nvml_is_simulated") != NULL;
out:
    if (rc)
        gpu_nvml_close(n);
    return rc;
}

void gpu_nvml_close(struct gpu_nvml *n)
{
    if (!n)
        return;
    if (n->dl)
        dlclose(n->dl);
    memset(n, 0, sizeof(*n));
}

const char *gpu_nvml_error_string(const struct gpu_nvml *n, nvmlReturn_t rc)
{
    if (n && n->error_string) {
        const char *s = n->error_string(rc);

        if (s && *s)
            return s;
    }
    switch (rc) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
        return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED:
        return "Already Initialized";
    case NVML_ERROR_NOT_FOUND:
        return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
        return "Insufficient Size";
    case NVML_ERROR_INSUFFICIENT_POWER:
        return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED:
        return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT:
        return "Timeout";
    case NVML_ERROR_IRQ_ISSUE:
        return "Interrupt Request Issue";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
        return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
        return "Function Not Found";
    case NVML_ERROR_CORRUPTED_INFOROM:
        return "Corrupted infoROM";
    case NVML_ERROR_GPU_IS_LOST:
        return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED:
        return "GPU requires reset";
    case NVML_ERROR_OPERATING_SYSTEM:
        return "GPU access blocked by the operating system";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
        return "Driver/library version mismatch";
    case NVML_ERROR_IN_USE:
        return "In use by another client";
    case NVML_ERROR_MEMORY:
        return "Insufficient Memory";
    case NVML_ERROR_NO_DATA:
        return "No data";
    default:
        return "Unknown Error";
    }
}
