/* pci.h - NVIDIA GPUs as the kernel sees them in sysfs, without the driver or NVML.
 *
 * gpu_pci_scan reads SYSFS/bus/pci/devices/<addr>/{vendor,class}: a device of vendor 0x10de
 * with class 0x0300 (VGA controller: "graphics" mode) or 0x0302 (3D controller: "compute"
 * mode) is an NVIDIA GPU. This is how a node is known to hold GPUs before the driver is up. */
#ifndef GPU_PCI_H
#define GPU_PCI_H

#include <stddef.h>

#include "base/err.h"

#define GPU_PCI_VENDOR_NVIDIA 0x10de
#define GPU_PCI_CLASS_VGA 0x0300
#define GPU_PCI_CLASS_3D 0x0302
#define GPU_PCI_MAX 256

struct gpu_pci_device {
    char addr[16];      /* "0000:00:08.0", as sysfs names it */
    unsigned pci_class; /* the class without the programming interface: 0x0300 or 0x0302 */
    int numa_node;      /* -1 unknown */
};

struct gpu_pci_list {
    struct gpu_pci_device dev[GPU_PCI_MAX];
    size_t n;
};

/* gpu_pci_scan fills out with the NVIDIA GPUs under sysfs_root (NULL or "": "/sys"), sorted
 * by address. A missing bus directory is zero GPUs, not an error; -errno with err for a
 * directory that cannot be read. */
int gpu_pci_scan(const char *sysfs_root, struct gpu_pci_list *out, struct err *err);

/* gpu_pci_find returns the device at NVML's bus id ("00000000:00:08.0") or NULL. */
const struct gpu_pci_device *gpu_pci_find(const struct gpu_pci_list *l, const char *nvml_bus_id);

/* gpu_pci_mode names a class the way GFD's gpu.mode does: "compute", "graphics", "unknown". */
const char *gpu_pci_mode(unsigned pci_class);

#endif
