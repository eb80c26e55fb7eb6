/* labels.h - from detected GPUs to the node labels gpulabel owns.
 *
 * Schemas: "ack" writes aliyun.accelerator/nvidia_{count,mem,name}; "gfd" writes NVIDIA GPU
 * Feature Discovery's nvidia.com/... keys with GFD's value formats. Every value is a valid
 * Kubernetes label value before it leaves this module. A node without GPUs gets no label. */
#ifndef LABELER_LABELS_H
#define LABELER_LABELS_H

#include <stdbool.h>
#include <stddef.h>

#include "kube/err.h"
#include "labeler/config.h"

struct labeler_label {
    char key[128];
    char value[64]; /* at most 63 characters, valid label value */
};

/* A label set, sorted by key, keys unique. */
struct labeler_labels {
    struct labeler_label *v;
    size_t n;
    size_t alloc;
};

/* labeler_labels_release frees the array; the set is empty afterwards. */
void labeler_labels_release(struct labeler_labels *l);

/* labeler_labels_get returns the value of key or NULL. */
const char *labeler_labels_get(const struct labeler_labels *l, const char *key);

/* labeler_detect opens NVML (cfg->nvml_lib), detects the GPUs and computes the labels of the
 * schemas in cfg->schemas into out (emptied first). Fails (negative, err saying why: library
 * missing, driver not loaded, ...) when NVML cannot start; a node with zero GPUs succeeds
 * with an empty set. */
int labeler_detect(const struct labeler_config *cfg, struct labeler_labels *out,
                   struct kube_err *err);

/* labeler_key_in_schemas tells whether key is one that the given schemas may write
 * (e.g. "aliyun.accelerator/nvidia_mem" for LABELER_SCHEMA_ACK). */
bool labeler_key_in_schemas(const char *key, unsigned schemas);

/* labeler_write_outputs writes the set to cfg->output ("-" = stdout, sorted key=value lines)
 * and cfg->feature_file (NFD local feature file, written to a dot-file then renamed), each
 * when set. */
int labeler_write_outputs(const struct labeler_config *cfg, const struct labeler_labels *l,
                          struct kube_err *err);

#endif
