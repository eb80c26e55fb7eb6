/* labels.h - from detected GPUs to the node labels gpulabel owns.
 *
 * Schemas: "ack" writes aliyun.accelerator/nvidia_{count,mem,name}; "gfd" writes NVIDIA GPU
 * Feature Discovery's nvidia.com/... keys with GFD's value formats. Every value is a valid
 * Kubernetes label value before it leaves this module. A node without GPUs gets no label. */
#ifndef LABELER_LABELS_H
#define LABELER_LABELS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"
#include "gpu/gpu.h"
#include "labeler/config.h"

#define LABELER_ACK_COUNT "aliyun.accelerator/nvidia_count"
#define LABELER_ACK_MEM "aliyun.accelerator/nvidia_mem"
#define LABELER_ACK_NAME "aliyun.accelerator/nvidia_name"

/* The default of cfg->machine_type_file (gfd schema, nvidia.com/gpu.machine). */
#define LABELER_MACHINE_TYPE_FILE "/sys/class/dmi/id/product_name"

struct labeler_label {
    char key[128];
    char value[64]; /* at most 63 characters, valid label value */
};

/* A label set, sorted by key, keys unique. */
struct labeler_labels {
    struct labeler_label *v;
    size_t n;
    size_t alloc;
    bool nvml_simulated; /* labeler_detect read the fake NVML test double, not a driver */
    bool partial;        /* only these labels are known (NVML is down): set them, remove none */
    size_t ngpus;        /* labeler_detect: the GPUs NVML showed that are not lost */
};

/* labeler_labels_release frees the array; the set is empty afterwards. */
void labeler_labels_release(struct labeler_labels *l);

/* labeler_labels_get returns the value of key or NULL. */
const char *labeler_labels_get(const struct labeler_labels *l, const char *key);

/* labeler_labels_set adds or replaces key=value, keeping the set sorted. The key must be
 * shorter than 128 bytes and the value a valid label value (see sanitize.h), else -EINVAL. */
int labeler_labels_set(struct labeler_labels *l, const char *key, const char *value,
                       struct err *err);

/* labeler_labels_from_inventory computes the labels of the given schemas for inv into out
 * (emptied first). machine_type_file (NULL = LABELER_MACHINE_TYPE_FILE) is read only for the
 * gfd schema. Rules (docs/labels.md): zero GPUs = no label; lost GPUs are left out as if
 * they were not there; name and memory come from the first GPU that is not lost; the ack
 * count is every such GPU, the gfd count those of the first one's model; MIG-enabled GPUs
 * count as the physical GPUs they are; memory NVML cannot report leaves its label out. */
int labeler_labels_from_inventory(const struct gpu_inventory *inv, unsigned schemas,
                                  const char *machine_type_file, struct labeler_labels *out,
                                  struct err *err);

/* labeler_labels_sharing applies time-slicing to a gfd set, as GFD does with a sharing
 * config: with replicas > 1, gpu.replicas=N, gpu.sharing-strategy=time-slicing, and "-SHARED"
 * after gpu.product unless the resource is renamed (resource not NULL, "" or nvidia.com/gpu).
 * A set without gfd labels, or replicas <= 1, is left alone. */
int labeler_labels_sharing(struct labeler_labels *l, unsigned replicas, const char *resource,
                           struct err *err);

/* labeler_labels_mig applies a MIG strategy (enum labeler_mig_strategy) to a gfd set, as
 * GFD does: nvidia.com/mig.strategy; single: the nvidia.com/gpu.* labels describe the MIG
 * devices (product "<model>-MIG-<profile>", count, memory, multiprocessors, slices, engines)
 * when every GPU is split into one profile, else "<model>-MIG-INVALID" with count, replicas
 * and memory 0; mixed: nvidia.com/mig-<profile>.* per profile. Nothing for none. */
int labeler_labels_mig(struct labeler_labels *l, const struct gpu_inventory *inv, int strategy,
                       struct err *err);

/* labeler_labels_format appends the set as sorted "key=value\n" lines to b. */
int labeler_labels_format(const struct labeler_labels *l, struct buf *b);

/* labeler_schemas_parse parses a comma-separated schema list ("ack", "gfd", "ack,gfd") into
 * LABELER_SCHEMA_* bits; -EINVAL naming the unknown schema otherwise. */
int labeler_schemas_parse(const char *s, unsigned *out, struct err *err);

/* labeler_detect opens NVML (cfg->nvml_lib), detects the GPUs and computes the labels of the
 * schemas in cfg->schemas into out (emptied first); with gfd also nvidia.com/gpu.present and
 * gpu.mode from the PCI devices in sysfs (cfg->dp.sysfs_root). When NVML fails but sysfs shows
 * NVIDIA GPUs, out gets nvidia.com/gpu.present=true alone with out->partial set (gfd only), so
 * that the node is recognisable before the driver is up, and the error is still returned. Fails (negative, err saying why: library
 * missing, driver not loaded, ...) when NVML cannot start; err->code is then one of
 * GPU_ERR_NO_LIBRARY, GPU_ERR_DRIVER_NOT_LOADED, GPU_ERR_NVML (gpu/gpu.h), all worth retrying
 * later. A node with zero GPUs succeeds with an empty set. out->nvml_simulated is set, also
 * on failure, when the library was the fake NVML test double. */
int labeler_detect(const struct labeler_config *cfg, struct labeler_labels *out, struct err *err);

/* labeler_detect_inventory is labeler_detect that also hands over what NVML showed: inv is
 * filled on success and on failure alike (lost GPUs in it with their errors) and the caller
 * frees it with gpu_inventory_release. */
int labeler_detect_inventory(const struct labeler_config *cfg, struct labeler_labels *out,
                             struct gpu_inventory *inv, struct err *err);

/* labeler_key_in_schemas tells whether key is one that the given schemas may write
 * (e.g. "aliyun.accelerator/nvidia_mem" for LABELER_SCHEMA_ACK). */
bool labeler_key_in_schemas(const char *key, unsigned schemas);

/* labeler_write_outputs writes the set to cfg->output ("-" = stdout, sorted key=value lines)
 * and cfg->feature_file (NFD local feature file, written to a dot-file then renamed), each
 * when set. */
int labeler_write_outputs(const struct labeler_config *cfg, const struct labeler_labels *l,
                          struct err *err);

#endif
