/* gpu.h - what NVML says about the GPUs of this node, read once into plain structs.
 *
 * gpu_detect opens NVML, initialises it, reads every device and the driver versions, shuts
 * NVML down again and unloads it, so nothing of the driver stays mapped between cycles.
 * Anything a driver does not support is recorded as unknown, never guessed. */
#ifndef GPU_GPU_H
#define GPU_GPU_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

#define GPU_MAX_DEVICES 256

#define GPU_MAX_MIG 8 /* MIG devices per GPU (7 on an A100/H100) */

/* One MIG device of a MIG-enabled GPU (nvmlDeviceGetMigDeviceHandleByIndex). */
/* the longest MIG profile name: "<u32>c.<u32>g.<u64/1024 + 1>gb" and its NUL */
#define GPU_MIG_PROFILE_NAME_MAX 48

struct gpu_mig {
    char uuid[96]; /* "MIG-..." */
    /* GFD's name: "<g>g.<n>gb", or "<c>c.<g>g.<n>gb" with fewer compute slices */
    char profile[GPU_MIG_PROFILE_NAME_MAX];
    unsigned long long memory_mb;
    unsigned multiprocessors, slices_gi, slices_ci;
    unsigned copy, decoder, encoder, jpeg, ofa; /* shared engines */
    /* its GPU instance (nvmlGpuInstanceGetInfo), valid when gi_known: the profile ID and the
     * memory slices it holds, which name it in DRA (gpu-<minor>-mig-<profile>-<id>-<start>) */
    bool gi_known;
    unsigned gi_profile_id, placement_start, placement_size;
};

struct gpu_device {
    char name[96];                   /* NVML product name, e.g. "Tesla M40" */
    unsigned long long memory_total; /* bytes; valid when memory_known */
    bool memory_known;               /* false: NVML could not report it (NOT_SUPPORTED, ...) */
    char uuid[96];                   /* "GPU-..."; "" when unknown */
    char pci_bus_id[32];             /* "00000000:00:08.0"; "" when unknown */
    int cc_major, cc_minor;          /* CUDA compute capability; valid when cc_known */
    bool cc_known;
    int minor;                        /* nvmlDeviceGetMinorNumber (/dev/nvidiaN); -1 unknown */
    int brand;                        /* nvmlDeviceGetBrand (nvmlBrandType_t); -1 unknown */
    int arch;                         /* nvmlDeviceGetArchitecture; -1 unknown */
    bool mig_capable;                 /* nvmlDeviceGetMigMode answered (not NOT_SUPPORTED) */
    bool mig_enabled;                 /* current MIG mode is enabled */
    struct gpu_mig migs[GPU_MAX_MIG]; /* with mig_enabled: its MIG devices */
    size_t nmig;
    /* lost: NVML cannot read this GPU (GPU_IS_LOST from any query, or its handle or name
     * cannot be had); nothing else of it is known, error says why ("GPU 2:
     * nvmlDeviceGetName: GPU is lost") */
    bool lost;
    char error[160];
};

struct gpu_inventory {
    struct gpu_device *devices; /* ndevices entries in NVML index order; owned */
    size_t ndevices;            /* every GPU NVML counts, lost ones included */
    size_t nlost;               /* of which lost (devices[i].lost) */
    char driver_version[80];    /* nvmlSystemGetDriverVersion, e.g. "550.107.02"; "" unknown */
    int cuda_driver_version;    /* nvmlSystemGetCudaDriverVersion, e.g. 12050; 0 unknown */
    bool simulated;             /* read from gpulabel's fake NVML test double */
};

/* Error codes of gpu_detect (negative, in err->code). */
#define GPU_ERR_NO_LIBRARY (-ENOENT)        /* the library cannot be loaded or is not NVML */
#define GPU_ERR_DRIVER_NOT_LOADED (-ENODEV) /* nvmlInit says the driver is not running */
#define GPU_ERR_NVML (-EIO)                 /* any other NVML failure (GPU lost, ...) */

/* gpu_detect reads the GPUs through the NVML library at lib_path (NULL = the default
 * "libnvidia-ml.so.1") into inv, which it resets first. Zero GPUs is a success with
 * ndevices == 0. A GPU NVML cannot read (lost) never hides the others: it is recorded with
 * lost set and its error, and the pass goes on. Fails with one of the codes above and err
 * saying what failed on what when NVML cannot start or count, or when every GPU is lost
 * ("every GPU is lost: GPU 0: nvmlDeviceGetName: GPU is lost"), so that a node whose GPUs
 * all fell off keeps its last labels. The caller frees inv with gpu_inventory_release (also
 * after a failure). */
int gpu_detect(const char *lib_path, struct gpu_inventory *inv, struct err *err);

/* gpu_first_usable returns the first device of inv that is not lost, or NULL. */
const struct gpu_device *gpu_first_usable(const struct gpu_inventory *inv);

/* gpu_mig_profile_name writes GFD's name of a MIG profile into out: memory in whole GB
 * rounded up, "<gi>g.<gb>gb", or "<ci>c.<gi>g.<gb>gb" when the compute slices are fewer
 * than the GPU instance's; an empty string when size is less than GPU_MIG_PROFILE_NAME_MAX
 * and the name does not fit. */
void gpu_mig_profile_name(unsigned ci_slices, unsigned gi_slices, unsigned long long memory_mb,
                          char *out, size_t size);

/* gpu_brand_name and gpu_arch_name are NVML's brand and architecture as NVIDIA's tools
 * write them (go-nvlib's GetBrandAsString, GetArchitectureAsString): "Tesla", "GeForce",
 * ...; "Maxwell", "Ampere", "Ada Lovelace", ...; "Unknown" for what they do not know. */
const char *gpu_brand_name(int brand);
const char *gpu_arch_name(int arch);

/* gpu_inventory_release frees the devices; inv is empty afterwards. Safe on NULL. */
void gpu_inventory_release(struct gpu_inventory *inv);

#endif
