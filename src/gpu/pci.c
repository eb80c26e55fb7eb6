/* pci.c - scanning sysfs for NVIDIA GPUs. Every file read is small and capped. */
#include "gpu/pci.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

static int read_hex(const char *path, unsigned long *out)
{
    struct buf b = BUF_INIT(64);
    char *end;
    int rc = -EINVAL;

    if (!buf_read_file(path, &b) && b.data) {
        *out = strtoul(b.data, &end, 16);
        if (end != b.data)
            rc = 0;
    }
    buf_release(&b);
    return rc;
}

static int read_int(const char *path, int dflt)
{
    struct buf b = BUF_INIT(64);
    char *end;
    long v = dflt;

    if (!buf_read_file(path, &b) && b.data) {
        v = strtol(b.data, &end, 10);
        if (end == b.data || v < -1 || v > 1 << 20)
            v = dflt;
    }
    buf_release(&b);
    return (int)v;
}

static int addr_cmp(const void *a, const void *b)
{
    return strcmp(((const struct gpu_pci_device *)a)->addr,
                  ((const struct gpu_pci_device *)b)->addr);
}

int gpu_pci_scan(const char *sysfs_root, struct gpu_pci_list *out, struct err *err)
{
    const char *root = sysfs_root && *sysfs_root ? sysfs_root : "/sys";
    char dir[4096], path[4400];
    struct dirent *de;
    DIR *d;

    out->n = 0;
    snprintf(dir, sizeof(dir), "%s/bus/pci/devices", root);
    d = opendir(dir);
    if (!d) {
        if (errno == ENOENT || errno == ENOTDIR)
            return 0;
        return err_set(err, -errno, "cannot read '%s': %s", dir, strerror(errno));
    }
    while ((de = readdir(d)) && out->n < GPU_PCI_MAX) {
        unsigned long vendor, cls;
        struct gpu_pci_device *g;

        if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(out->dev[0].addr))
            continue;
        snprintf(path, sizeof(path), "%s/%s/vendor", dir, de->d_name);
        if (read_hex(path, &vendor) || vendor != GPU_PCI_VENDOR_NVIDIA)
            continue;
        snprintf(path, sizeof(path), "%s/%s/class", dir, de->d_name);
        if (read_hex(path, &cls))
            continue;
        cls >>= 8; /* drop the programming interface byte */
        if (cls != GPU_PCI_CLASS_VGA && cls != GPU_PCI_CLASS_3D)
            continue;
        g = &out->dev[out->n++];
        snprintf(g->addr, sizeof(g->addr), "%s", de->d_name);
        g->pci_class = (unsigned)cls;
        snprintf(path, sizeof(path), "%s/%s/numa_node", dir, de->d_name);
        g->numa_node = read_int(path, -1);
    }
    closedir(d);
    qsort(out->dev, out->n, sizeof(out->dev[0]), addr_cmp);
    return 0;
}

const struct gpu_pci_device *gpu_pci_find(const struct gpu_pci_list *l, const char *nvml_bus_id)
{
    unsigned dom, bus, dev, fn;
    char addr[32];
    size_t i;

    if (!nvml_bus_id || sscanf(nvml_bus_id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
        return NULL;
    snprintf(addr, sizeof(addr), "%04x:%02x:%02x.%x", dom & 0xffff, bus & 0xff, dev & 0x1f, fn & 7);
    for (i = 0; i < l->n; i++)
        if (!strcasecmp(l->dev[i].addr, addr))
            return &l->dev[i];
    return NULL;
}

const char *gpu_pci_mode(unsigned pci_class)
{
    if (pci_class == GPU_PCI_CLASS_3D)
        return "compute";
    if (pci_class == GPU_PCI_CLASS_VGA)
        return "graphics";
    return "unknown";
}
