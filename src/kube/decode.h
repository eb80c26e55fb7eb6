/* decode.h - Kubernetes objects from JSON, validated as the API server validates them.
 *
 * The decoders take one JSON object (from the API, or from a manifest parsed by yaml.h) and
 * fill the struct of object.h, allocating every string and array from the arena a. They
 * apply the API server's defaulting (a limit without a request, hostNetwork ports, allocatable
 * from capacity) and validation (label syntax, quantity syntax, field types), and fail with
 * err naming the field path and, when lines is given, the source line; file is copied into
 * err and into the object's source_file. */
#ifndef KUBE_DECODE_H
#define KUBE_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/arena.h"
#include "base/err.h"
#include "kube/object.h"

struct kube_lines; /* yaml.h: where each value of a manifest came from; may be NULL */

int kube_pod_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                    const char *file, struct kube_pod *out, struct err *err);
int kube_node_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                     const char *file, struct kube_node *out, struct err *err);
/* kube_runtime_class_decode decodes a RuntimeClass: metadata.name (required), overhead.podFixed
 * and whether scheduling is set. 0 or a negative code with err naming the field. */
int kube_runtime_class_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                              const char *file, struct kube_runtime_class *out, struct err *err);

/* kube_namespace_decode reads a Namespace: its name and labels, with
 * kubernetes.io/metadata.name set to the name as the API server defaults it. */
int kube_namespace_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                          const char *file, struct kube_namespace *out, struct err *err);
int kube_priority_class_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                               const char *file, struct kube_priority_class *out, struct err *err);

/* kube_pdb_decode reads a policy/v1 PodDisruptionBudget: metadata, spec.selector (see
 * kube_label_selector_decode), status.disruptionsAllowed and the names in
 * status.disruptedPods. Returns 0 or a negative code with err naming the field. */
int kube_pdb_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                    const char *file, struct kube_pdb *out, struct err *err);

/* The storage.k8s.io/v1 objects the volume plugins read (sched/volumes.c), with the API
 * server's validation of the fields they read: a CSINode (drivers: name, nodeID, allocatable
 * count; the migrated-plugins annotation), a CSIDriver (storageCapacity,
 * preventPodSchedulingIfMissing), a CSIStorageCapacity (storageClassName, nodeTopology,
 * capacity, maximumVolumeSize) and a VolumeAttachment (attacher, nodeName, the source's
 * persistentVolumeName). Strings in a; 0 or -EINVAL/-ENOMEM with err naming the field. */
int kube_csi_node_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                         const char *file, struct kube_csi_node *out, struct err *err);
int kube_csi_driver_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                           const char *file, struct kube_csi_driver *out, struct err *err);
int kube_csi_capacity_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                             const char *file, struct kube_csi_capacity *out, struct err *err);
int kube_volume_attachment_decode(const json_t *obj, struct arena *a,
                                  const struct kube_lines *lines, const char *file,
                                  struct kube_volume_attachment *out, struct err *err);

/* kube_intree_decode reads the in-tree volume source of v (a pod volume, or a
 * PersistentVolume's spec) that CSI migration translates (out->plugin KUBE_INTREE_NONE when
 * there is none). */
int kube_intree_decode(const json_t *v, struct arena *a, const struct kube_lines *lines,
                       const char *file, struct kube_inline_volume *out, struct err *err);

/* kube_pod_ephemeral_names names the claims of p's generic ephemeral volumes
 * "<pod>-<volume>" (ephemeral.VolumeClaimName) in a fresh claims array from a; the decoder
 * does it for a pod with a name, the loader once it names one. 0 or -ENOMEM. */
int kube_pod_ephemeral_names(struct kube_pod *p, struct arena *a);

/* kube_label_selector_decode reads a metav1.LabelSelector (a workload's spec.selector) with
 * ValidateLabelSelector's rules: matchLabels as labels, matchExpressions with In, NotIn,
 * Exists or DoesNotExist and the values those take. Absent or null obj is the nil selector
 * (out->present false). The field path in err is relative to the selector. */
int kube_label_selector_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                               const char *file, struct kube_label_selector *out, struct err *err);

/* kube_node_selector_decode reads a NodeSelector ({nodeSelectorTerms: [...]}, a
 * PersistentVolume's spec.nodeAffinity.required) with the rules of a pod's required node
 * affinity; the field path in err is relative to it. */
int kube_node_selector_decode(const json_t *obj, struct arena *a, const struct kube_lines *lines,
                              const char *file, struct kube_node_selector *out, struct err *err);

/* kube_json_int64 reads v as an integer the way Go's JSON decoder fills an int field: a JSON
 * integer, or a number with an integral value that fits (YAML "1e3" is 1000). Returns false
 * for anything else, without undefined behaviour on huge numbers. */
bool kube_json_int64(const json_t *v, int64_t *out);

/* kube_json_type_name names v's JSON type for messages: "object", "array", "string",
 * "integer", "number" (a real), "boolean" or "null". */
const char *kube_json_type_name(const json_t *v);

#endif
