/* decode.h - Kubernetes objects from JSON, read as the API server reads them.
 *
 * One decoder for every kind, for manifests and the API server's objects alike: each takes
 * one JSON object (from the API, or from a manifest parsed by yaml.h) and fills the struct of
 * object.h, allocating every string and array from the arena a. It applies the API server's
 * defaulting (a limit without a request, hostNetwork ports, allocatable from capacity) and
 * validation (label syntax, quantity syntax), reads JSON types as the API server's decoder
 * does (`json: cannot unmarshal string into Go struct field PodSpec.spec.nodeSelector of
 * type map[string]string`), and fails with err naming the field path and, with a line table,
 * the source line. With opts->check every field is held to the API's names too: an unknown
 * one is reported as kubectl's strict field validation reports it (`unknown field
 * "spec.nodeSelectr"`). */
#ifndef KUBE_DECODE_H
#define KUBE_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/arena.h"
#include "base/err.h"
#include "kube/object.h"

struct kube_lines; /* yaml.h: where each value of a manifest came from */

/* Where an object came from and how strictly to read it. A NULL opts reads an object of the
 * API server: no lines, no file, its fields taken as the server wrote them. */
struct kube_decode_opts {
    const struct kube_lines *lines; /* the line of each value, or NULL */
    const char *file; /* named in err and (copied) in the objects' source_file, or NULL */
    /* check: every field is held to the API's types and names (a manifest). An unknown field
     * goes to warn(warn_arg, line, msg) with msg `unknown field "spec.nodeSelectr"` (warn may
     * be NULL; a non-zero return fails the decode with it), or, with strict, fails the
     * decode: `strict decoding error: unknown field "spec.nodeSelectr"`. */
    bool check;
    bool strict;
    int (*warn)(void *warn_arg, int line, const char *msg);
    void *warn_arg;
    /* name: not NULL, it stands for the object's metadata.name (a pod the API server would
     * name from its generateName) */
    const char *name;
};

/* The decoders: 0, or a negative errno-style code with err naming the field. */
int kube_pod_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                    struct kube_pod *out, struct err *err);
int kube_node_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                     struct kube_node *out, struct err *err);

/* kube_type_meta_decode reads kind and apiVersion (borrowed from obj; NULL when absent) of
 * any object, with the types kubectl's decoder holds them to. */
int kube_type_meta_decode(const json_t *obj, const struct kube_decode_opts *o, const char **kind,
                          const char **api_version, struct err *err);

/* kube_list_items_decode reads the items of a List (or a typed list such as PodList) of kind:
 * *items is the array (borrowed; NULL when absent or null). */
int kube_list_items_decode(const json_t *obj, const char *kind, const struct kube_decode_opts *o,
                           const json_t **items, struct err *err);

/* kube_json_type_error sets err (-EINVAL, the message only) to the Go JSON decoder's words for
 * v, a value that is not of Go type go: of the field path (JSON keys; indexes are dropped) of
 * Go struct st, `json: cannot unmarshal string into Go struct field Cluster.clusters.cluster.
 * server of type string`, or with st NULL `json: cannot unmarshal string into Go value of type
 * int32`. For the files read as Go reads them that are no API objects (a kubeconfig, a
 * KubeSchedulerConfiguration). */
int kube_json_type_error(struct err *err, const json_t *v, const char *st, const char *path,
                         const char *go);

/* What a loader reads of any object before decoding it: the names of its metadata, borrowed
 * from the object (NULL when absent). */
struct kube_object_names {
    const char *name;
    const char *generate_name;
    const char *namespace_;
};

/* kube_object_names_decode reads them from an object of kind, holding metadata and the names
 * to their types. */
int kube_object_names_decode(const json_t *obj, const char *kind, const struct kube_decode_opts *o,
                             struct kube_object_names *out, struct err *err);

/* ---- Scheduling classes and the objects around pods (decode_class.c) ---- */

/* kube_runtime_class_decode decodes a RuntimeClass: metadata.name (required), overhead.podFixed
 * and whether scheduling is set. */
int kube_runtime_class_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                              struct kube_runtime_class *out, struct err *err);

/* kube_namespace_decode reads a Namespace: its name and labels, with
 * kubernetes.io/metadata.name set to the name as the API server defaults it. */
int kube_namespace_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                          struct kube_namespace *out, struct err *err);
int kube_priority_class_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                               struct kube_priority_class *out, struct err *err);

/* kube_pdb_decode reads a policy/v1 PodDisruptionBudget: metadata, spec.selector,
 * status.disruptionsAllowed and the names in status.disruptedPods. */
int kube_pdb_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                    struct kube_pdb *out, struct err *err);

/* A Service as PodTopologySpread's system defaults read it: its spec.selector, a label set
 * (absent or null: present false, selecting nothing). */
struct kube_service {
    const char *name;
    const char *namespace_; /* "" when unset */
    struct kube_label_selector selector;
};
int kube_service_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                        struct kube_service *out, struct err *err);

/* ---- Workloads (decode_workload.c) ---- */

/* kube_spec_selector_decode reads the spec.selector of a Service or a ReplicationController
 * (a label set: absent or null, present false) or of a ReplicaSet, StatefulSet, Deployment,
 * DaemonSet or Job (a metav1.LabelSelector) - kind says which. */
int kube_spec_selector_decode(const json_t *obj, const char *kind, struct arena *a,
                              const struct kube_decode_opts *o, struct kube_label_selector *out,
                              struct err *err);

/* kube_workload_decode reads a Deployment, ReplicaSet, StatefulSet, DaemonSet, Job or
 * ReplicationController (struct kube_workload; kind and api_version as kube_type_meta_decode
 * read them): its replicas, selector (apps/ groups: required, not empty, and selecting the
 * template's labels), Job settings, controller and the pod template, decoded as the pod its
 * controller creates (named after the workload; namespace and owner left to the caller). */
int kube_workload_decode(const json_t *obj, const char *kind, const char *api_version,
                         struct arena *a, const struct kube_decode_opts *o,
                         struct kube_workload *out, struct err *err);

/* ---- Storage (decode_storage.c, decode_csi.c) ---- */

/* PersistentVolumeClaims, PersistentVolumes and StorageClasses: the fields VolumeBinding and
 * VolumeZone read. A claim's namespace is "" when unset. */
int kube_pvc_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                    struct kube_pvc *out, struct err *err);
int kube_pv_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                   struct kube_pv *out, struct err *err);
int kube_storage_class_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                              struct kube_storage_class *out, struct err *err);

/* The storage.k8s.io/v1 objects the volume plugins read (sched/volumes.c), with the API
 * server's validation of the fields they read: a CSINode (drivers: name, nodeID, allocatable
 * count; the migrated-plugins annotation), a CSIDriver (storageCapacity,
 * preventPodSchedulingIfMissing), a CSIStorageCapacity (storageClassName, nodeTopology,
 * capacity, maximumVolumeSize) and a VolumeAttachment (attacher, nodeName, the source's
 * persistentVolumeName). */
int kube_csi_node_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                         struct kube_csi_node *out, struct err *err);
int kube_csi_driver_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                           struct kube_csi_driver *out, struct err *err);
int kube_csi_capacity_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                             struct kube_csi_capacity *out, struct err *err);
int kube_volume_attachment_decode(const json_t *obj, struct arena *a,
                                  const struct kube_decode_opts *o,
                                  struct kube_volume_attachment *out, struct err *err);

/* ---- resource.k8s.io (decode_dra.c, decode_dra_{class,slice,claim}.c) ----
 * The Dynamic Resource Allocation kinds of resource.k8s.io/v1 as the API server stores them
 * (defaults applied: a request's allocationMode ExactCount and count 1, a toleration's
 * operator Equal), with the checks of its validation that keep an object the scheduler cannot
 * use out (names, the one-of rules, counts, enums, quantities) in its words; with opts (a
 * manifest) also the CEL selectors, compiled as the API server compiles a new object's
 * (`spec.selectors[0].cel.expression: Invalid value: "...": compilation failed: ...`).
 * Strings and arrays come from a. */
int kube_device_class_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                             struct kube_device_class *out, struct err *err);
int kube_resource_slice_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                               struct kube_resource_slice *out, struct err *err);
int kube_resource_claim_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                               struct kube_resource_claim *out, struct err *err);
int kube_resource_claim_template_decode(const json_t *obj, struct arena *a,
                                        const struct kube_decode_opts *o,
                                        struct kube_resource_claim_template *out, struct err *err);
int kube_device_taint_rule_decode(const json_t *obj, struct arena *a,
                                  const struct kube_decode_opts *o,
                                  struct kube_device_taint_rule *out, struct err *err);

#endif
