/* nvml.h - the slice of the NVIDIA Management Library ABI that gpulabel uses, declared here so
 * that building never needs the driver's nvml.h, and the loader that binds it at run time.
 *
 * The library is dlopen()ed (default "libnvidia-ml.so.1") and the versioned symbols are looked
 * up by name (nvmlInit_v2, nvmlDeviceGetCount_v2, ...). Required symbols missing = the library
 * cannot be used; optional symbols missing (older drivers) leave their pointer NULL, which
 * callers treat as "not supported". Types and values follow the NVML 13 header, LP64. */
#ifndef GPU_NVML_H
#define GPU_NVML_H

#include <stdbool.h>

#include "base/err.h"

/* nvmlReturn_t: a 4-byte enum in the driver header; the values callers look at. */
typedef int nvmlReturn_t;
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_ALREADY_INITIALIZED = 5,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_INSUFFICIENT_POWER = 8,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_IRQ_ISSUE = 11,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_CORRUPTED_INFOROM = 14,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_RESET_REQUIRED = 16,
    NVML_ERROR_OPERATING_SYSTEM = 17,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
    NVML_ERROR_IN_USE = 19,
    NVML_ERROR_MEMORY = 20,
    NVML_ERROR_NO_DATA = 21,
    NVML_ERROR_UNKNOWN = 999,
};

typedef struct nvmlDevice_st *nvmlDevice_t; /* opaque handle owned by the driver */

typedef struct nvmlMemory_st { /* sizeof 24 */
    unsigned long long total;  /* bytes */
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlPciInfo_st { /* sizeof 68 (nvmlDeviceGetPciInfo_v3) */
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[32]; /* "%08X:%02X:%02X.0" */
} nvmlPciInfo_t;

#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_MIG_DISABLE 0u
#define NVML_DEVICE_MIG_ENABLE 1u

/* Events (nvmlEventSetWait_v2): the event types are bits of eventType. */
typedef struct nvmlEventSet_st *nvmlEventSet_t; /* opaque, owned by the driver */
#define NVML_EVENT_TYPE_SINGLE_BIT_ECC_ERROR 0x0000000000000001ULL
#define NVML_EVENT_TYPE_DOUBLE_BIT_ECC_ERROR 0x0000000000000002ULL
#define NVML_EVENT_TYPE_XID_CRITICAL_ERROR 0x0000000000000008ULL

typedef struct nvmlEventData_st { /* sizeof 32 */
    nvmlDevice_t device;          /* the device the event came from */
    unsigned long long eventType; /* one NVML_EVENT_TYPE_* bit */
    unsigned long long eventData; /* the XID for XID_CRITICAL_ERROR */
    unsigned int gpuInstanceId;   /* MIG: the GPU instance, else 0xFFFFFFFF */
    unsigned int computeInstanceId;
} nvmlEventData_t;

/* nvmlGpuTopologyLevel_t: how two GPUs reach each other, closest first. */
enum {
    NVML_TOPOLOGY_INTERNAL = 0,    /* the same board */
    NVML_TOPOLOGY_SINGLE = 10,     /* one PCIe switch */
    NVML_TOPOLOGY_MULTIPLE = 20,   /* several PCIe switches, no host bridge */
    NVML_TOPOLOGY_HOSTBRIDGE = 30, /* one host bridge */
    NVML_TOPOLOGY_NODE = 40,       /* host bridges of one NUMA node */
    NVML_TOPOLOGY_SYSTEM = 50,     /* across NUMA nodes (SMP interconnect) */
};
#define NVML_NVLINK_MAX_LINKS 18

typedef struct nvmlDeviceAttributes_st { /* sizeof 40 (nvmlDeviceGetAttributes_v2) */
    unsigned int multiprocessorCount;
    unsigned int sharedCopyEngineCount;
    unsigned int sharedDecoderCount;
    unsigned int sharedEncoderCount;
    unsigned int sharedJpegCount;
    unsigned int sharedOfaCount;
    unsigned int gpuInstanceSliceCount;
    unsigned int computeInstanceSliceCount;
    unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;
#define NVML_FEATURE_ENABLED 1

/* MIG GPU instances (nvmlDeviceGetGpuInstanceById, nvmlGpuInstanceGetInfo). */
typedef struct nvmlGpuInstance_st *nvmlGpuInstance_t; /* opaque, owned by the driver */
typedef struct nvmlGpuInstancePlacement_st {
    unsigned int start; /* the first memory slice */
    unsigned int size;  /* memory slices */
} nvmlGpuInstancePlacement_t;
typedef struct nvmlGpuInstanceInfo_st {
    nvmlDevice_t device; /* its GPU */
    unsigned int id;     /* the GPU instance's ID */
    unsigned int profileId;
    nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

/* nvmlDeviceGetFieldValues: one field asked for and its answer. */
typedef union nvmlValue_st {
    double dVal;
    int siVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    signed long long sllVal;
    unsigned short usVal;
} nvmlValue_t;
typedef struct nvmlFieldValue_st { /* sizeof 40 */
    unsigned int fieldId;          /* NVML_FI_*, set by the caller */
    unsigned int scopeId;
    long long timestamp;
    long long latencyUsec;
    int valueType;
    nvmlReturn_t nvmlReturn; /* this field's own result */
    nvmlValue_t value;
} nvmlFieldValue_t;

/* The bound library. Required pointers are never NULL after gpu_nvml_open succeeds;
 * optional ones are NULL when the driver does not export them. */
struct gpu_nvml {
    void *dl;       /* dlopen handle */
    bool simulated; /* the library is gpulabel's fake NVML test double */

    /* required */
    nvmlReturn_t (*init)(void);                       /* nvmlInit_v2 */
    nvmlReturn_t (*shutdown)(void);                   /* nvmlShutdown */
    nvmlReturn_t (*device_get_count)(unsigned int *); /* nvmlDeviceGetCount_v2 */
    nvmlReturn_t (*device_get_handle_by_index)(unsigned int, nvmlDevice_t *); /* ..._v2 */
    nvmlReturn_t (*device_get_name)(nvmlDevice_t, char *, unsigned int);

    /* optional */
    const char *(*error_string)(nvmlReturn_t); /* nvmlErrorString */
    nvmlReturn_t (*system_get_driver_version)(char *, unsigned int);
    nvmlReturn_t (*system_get_cuda_driver_version)(int *);
    nvmlReturn_t (*device_get_memory_info)(nvmlDevice_t, nvmlMemory_t *);
    nvmlReturn_t (*device_get_uuid)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*device_get_pci_info)(nvmlDevice_t,
                                        nvmlPciInfo_t *); /* nvmlDeviceGetPciInfo_v3 */
    nvmlReturn_t (*device_get_cuda_compute_capability)(nvmlDevice_t, int *, int *);
    nvmlReturn_t (*device_get_mig_mode)(nvmlDevice_t, unsigned int *, unsigned int *);

    /* optional: health events and topology (the device plugin) */
    nvmlReturn_t (*event_set_create)(nvmlEventSet_t *);
    nvmlReturn_t (*event_set_free)(nvmlEventSet_t);
    nvmlReturn_t (*device_register_events)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
    nvmlReturn_t (*device_get_supported_event_types)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*event_set_wait)(nvmlEventSet_t, nvmlEventData_t *,
                                   unsigned int); /* nvmlEventSetWait_v2, timeout in ms */
    nvmlReturn_t (*device_get_topology_common_ancestor)(nvmlDevice_t, nvmlDevice_t, int *);
    nvmlReturn_t (*device_get_nvlink_state)(nvmlDevice_t, unsigned int, int *);
    nvmlReturn_t (*device_get_nvlink_remote_pci_info)(nvmlDevice_t, unsigned int,
                                                      nvmlPciInfo_t *); /* ..._v2 */

    /* optional: MIG devices */
    nvmlReturn_t (*device_get_max_mig_device_count)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*device_get_mig_device_handle_by_index)(nvmlDevice_t, unsigned int,
                                                          nvmlDevice_t *);
    nvmlReturn_t (*device_get_attributes)(nvmlDevice_t, nvmlDeviceAttributes_t *); /* ..._v2 */

    /* optional: what a DRA device says about itself */
    nvmlReturn_t (*device_get_minor_number)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*device_get_brand)(nvmlDevice_t, int *); /* nvmlBrandType_t */
    nvmlReturn_t (*device_get_architecture)(nvmlDevice_t,
                                            unsigned int *); /* nvmlDeviceArchitecture_t */
    nvmlReturn_t (*device_get_gpu_instance_id)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*device_get_gpu_instance_by_id)(nvmlDevice_t, unsigned int, nvmlGpuInstance_t *);
    nvmlReturn_t (*gpu_instance_get_info)(nvmlGpuInstance_t, nvmlGpuInstanceInfo_t *);

    /* optional: health re-probes (the recovery action field) */
    nvmlReturn_t (*device_get_field_values)(nvmlDevice_t, int, nvmlFieldValue_t *);
};

/* gpu_nvml_open loads the library at path (NULL or "" = "libnvidia-ml.so.1") with
 * RTLD_NOW|RTLD_LOCAL and binds the symbols. On failure n is left closed and err says why:
 * "cannot load NVML library 'PATH': <dlerror>" or "... has no symbol 'nvmlInit_v2' ...".
 * Release with gpu_nvml_close. Does not call nvmlInit. */
int gpu_nvml_open(const char *path, struct gpu_nvml *n, struct err *err);

/* gpu_nvml_close unloads the library; safe on a closed or zeroed struct. */
void gpu_nvml_close(struct gpu_nvml *n);

/* gpu_nvml_error_string describes an NVML return code: the driver's nvmlErrorString when the
 * library has one, else our own text. Never NULL; the string is static. */
const char *gpu_nvml_error_string(const struct gpu_nvml *n, nvmlReturn_t rc);

#endif
