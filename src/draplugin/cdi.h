/* cdi.h - the files the DRA plugin writes: a CDI spec per prepared claim, and the atomic
 * write both it and the checkpoint use.
 *
 * A claim's spec is <cdi-root>/k8s.<driver>-claim_<claim UID>.json, of kind
 * "k8s.<driver>/claim", one CDI device per allocated device named "<claim UID>-<device>"
 * (so its CDI name is k8s.gpu.nvidia.com/claim=<uid>-gpu-0, as NVIDIA's driver names them).
 * Each sets NVIDIA_VISIBLE_DEVICES to the device's UUID, which the NVIDIA container runtime
 * turns into the GPU and its driver files, and names the GPU's device node when it exists
 * on the host (/dev/nvidia<minor>, and /dev/nvidiactl, /dev/nvidia-uvm for every device). */
#ifndef DRAPLUGIN_CDI_H
#define DRAPLUGIN_CDI_H

#include <stddef.h>

#include "base/err.h"
#include "draplugin/devices.h"

#define DRA_DEFAULT_CDI_ROOT "/var/run/cdi"

/* dra_write_atomic writes data[0..len) to path through "<path>.tmp.<pid>" in the same
 * directory, then renames it over path: a reader (the container runtime, a restarted agent)
 * sees the old file or the new one, never a part. On any failure the temporary file is
 * removed and path is untouched. mode is the new file's mode. err names the path.
 * No fsync: what it writes is needed again only after an agent crash, which the page cache
 * survives; after a power loss the kubelet prepares its claims again, and a claim whose spec
 * is gone is written again (plugin.c), so durability would buy nothing for its 2-3 ms each. */
int dra_write_atomic(const char *path, const char *data, size_t len, int mode, struct err *err);

/* dra_write_swap is dra_write_atomic for a file rewritten often (the checkpoint, twice a
 * claim): it writes "<path>.spare.<pid>" in place and exchanges it with path
 * (renameat2 RENAME_EXCHANGE), so the spare then holds the previous version and is the file
 * written next time. No inode is created or freed after the first write: on ext4 each
 * creation scans the block group past every inode freed in the last seconds, which at a
 * claim a few ms apart made the create-and-rename of dra_write_atomic cost 0.6 ms at the
 * median and up to 20 ms, against 0.05-0.2 ms for the exchange (see docs/benchmarks-dra.md).
 * Where there is no file at path yet, or the file system cannot exchange, it renames as
 * dra_write_atomic does. On failure the spare is removed and path is untouched. The caller
 * removes the spare (dra_spare_path) when it stops writing. */
int dra_write_swap(const char *path, const char *data, size_t len, int mode, struct err *err);

/* dra_spare_path writes the spare file of path that dra_write_swap uses into out. */
void dra_spare_path(const char *path, char *out, size_t size);

/* dra_cdi_path writes the spec file of claim uid into out. */
void dra_cdi_path(const char *cdi_root, const char *driver, const char *uid, char *out,
                  size_t size);

/* dra_cdi_write writes (atomically) the spec of claim uid for devices devs[0..n) of d (indices
 * into d->v), creating cdi_root when it is missing. dev_root ("/dev" when NULL) is where the
 * device nodes are looked for. */
int dra_cdi_write(const char *cdi_root, const char *dev_root, const char *driver, const char *uid,
                  const struct dra_devices *d, const size_t *devs, size_t n, struct err *err);

/* dra_cdi_remove removes claim uid's spec; a spec that is not there is no error. */
int dra_cdi_remove(const char *cdi_root, const char *driver, const char *uid, struct err *err);

#endif
