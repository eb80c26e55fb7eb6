/* manifest.h - the input files of `gpusched simulate|explain|nodes` loaded into the object model.
 *
 * A struct manifest_input collects the nodes, pods and PriorityClasses of every -f argument, in
 * input order. Workloads (Deployment, ReplicaSet, ReplicationController, StatefulSet, Job,
 * DaemonSet) are expanded by manifest_input_finish to the pods their controllers would create,
 * with deterministic names: only those their active pods in the input do not stand for, so a
 * dump of a cluster (workloads and their pods) or `gpusched render`'s output loads as it is.
 * Strings and objects live in arenas: the input's (pods, classes, warnings) and one for the
 * nodes, which manifest_input_trim can give back once they are copied elsewhere. Files are parsed
 * as they are read, one document (or one item of a List) at a time, and each JSON tree is dropped
 * once decoded, so memory grows with the objects, not with the files. Loading is all-or-nothing per
 * call: on error nothing of that call is visible in the input. */
#ifndef MANIFEST_MANIFEST_H
#define MANIFEST_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/arena.h"
#include "base/err.h"
#include "kube/object.h"

#define MANIFEST_INPUT_MAX_PODS 1000000
#define MANIFEST_INPUT_MAX_NODES 100000
#define MANIFEST_INPUT_MAX_FILE ((size_t)1 << 30) /* bytes of one file */

/* Settings fixed for the life of one input (manifest_input_init). */
struct manifest_input_opts {
    const char *default_namespace; /* namespace of objects that name none; NULL = "default" */
    size_t max_pods;  /* a load or finish that would exceed it fails; 0 = MANIFEST_INPUT_MAX_PODS */
    size_t max_nodes; /* 0 = MANIFEST_INPUT_MAX_NODES */
    /* Optional: where bound pods go instead of pods[]. When take_bound is set, a Pod object
     * (not a workload's pod) with spec.nodeName set whose priority is final when it is read
     * (priorityClassName, if any, names a built-in class or one already loaded, and gives the
     * priority when spec.priority does not; without a class name spec.priority is needed) is
     * passed to take_bound(take_arg, pod, err) as soon as it is decoded, and its memory is
     * reused: the pod and its strings are valid during the call only, and it never appears
     * in pods[]. Only its namespace, name, node, file and line are kept, so duplicates and
     * the "not in the input" warning work as before. Once a bound pod has had to be kept in
     * pods[] (or a workload made one), later ones are kept too, so the bound pods reach the
     * consumer, then pods[], in input order. take_bound returns 0, or a negative code with
     * err set, which fails the load. A consumer cannot take pods back: after a failed load
     * or a List whose kind turns out not to be a List (an error in this mode), discard the
     * consumer's state with the input. `gpusched simulate` counts bound pods this way, so a
     * cluster's worth of them costs a few dozen bytes each instead of a decoded pod. */
    int (*take_bound)(void *arg, const struct kube_pod *pod, struct err *err);
    void *take_arg;
    /* keep_objects: every object read is also kept as JSON in objects[] (for `gpusched
     * render`), and kinds the loader does not know are kept there without a warning. Not
     * to be combined with take_bound. */
    bool keep_objects;
    /* strict: an unknown field or a duplicate key fails the load (kubectl --validate=strict),
     * where it is otherwise a warning */
    bool strict;
};

/* One object of the input as it was read (opts.keep_objects): text is the object as compact
 * JSON (len bytes, NUL-terminated, owned by the input: a tenth of its tree's memory), kind its
 * kind (arena copy), npods how many entries of
 * pods[] it stands for, in pods[] order: 1 for a Pod, the pods a workload creates (known once
 * manifest_input_finish has run), 0 for everything else. Walking objects[]
 * and pods[] together gives the input order with every workload in place of its pods. */
struct manifest_object {
    char *text;
    size_t len;
    const char *kind;
    size_t npods;
};

struct manifest_input_priv; /* workloads waiting for manifest_input_finish, lookup tables */

/* An object whose selector kube-scheduler's PodTopologySpread reads for its system default
 * constraints: a Service (owner_kind NULL; it selects the pods of its namespace its
 * spec.selector matches, sel.present false for a nil selector), or a ReplicationController,
 * ReplicaSet, StatefulSet or Deployment (owner_kind; it selects the pods it created, whose
 * owner is that kind and name; a Deployment's selector includes the pod-template-hash of the
 * ReplicaSet it would create). */
struct manifest_selector {
    const char *owner_kind;
    const char *namespace_;
    const char *name;
    struct kube_label_selector sel;
};

struct manifest_input {
    struct arena arena;      /* owns every string and array reachable from the members below
                                     except the nodes' (a private arena) and the top-level arrays,
                                     which are malloc()ed */
    struct kube_node *nodes; /* input order */
    size_t nnodes;
    struct kube_pod *pods; /* input order, workloads expanded in place (by
                              manifest_input_finish); bound pods (spec.nodeName set) included */
    size_t npods;
    size_t ntaken;                       /* bound pods passed to opts.take_bound (not in pods[]) */
    struct kube_priority_class *classes; /* PriorityClass objects of the input, input order */
    size_t nclasses;
    struct kube_pdb *pdbs; /* policy/v1 PodDisruptionBudgets of the input, input order */
    size_t npdbs;
    /* PersistentVolumeClaims, PersistentVolumes and StorageClasses, input order */
    struct kube_pvc *pvcs;
    size_t npvcs;
    struct kube_pv *pvs;
    size_t npvs;
    struct kube_storage_class *storage_classes;
    size_t nstorage_classes;
    /* CSINodes, CSIDrivers, CSIStorageCapacities and VolumeAttachments, input order */
    struct kube_csi_node *csi_nodes;
    size_t ncsi_nodes;
    struct kube_csi_driver *csi_drivers;
    size_t ncsi_drivers;
    struct kube_csi_capacity *csi_capacities;
    size_t ncsi_capacities;
    struct kube_volume_attachment *volume_attachments;
    size_t nvolume_attachments;
    /* resource.k8s.io/v1: DeviceClasses, ResourceSlices, ResourceClaims, ResourceClaimTemplates
     * and DeviceTaintRules, input order */
    struct kube_device_class *device_classes;
    size_t ndevice_classes;
    struct kube_resource_slice *resource_slices;
    size_t nresource_slices;
    struct kube_resource_claim *resource_claims;
    size_t nresource_claims;
    struct kube_resource_claim_template *claim_templates;
    size_t nclaim_templates;
    struct kube_device_taint_rule *device_taint_rules;
    size_t ndevice_taint_rules;
    struct manifest_selector *selectors; /* Services and controllers, input order */
    size_t nselectors;
    /* Namespace objects of the input, input order, then (after manifest_input_finish) one
     * for every other namespace a pod uses, labelled kubernetes.io/metadata.name as the API
     * server creates it (pod affinity's namespaceSelector matches these labels) */
    struct kube_namespace *namespaces;
    size_t nnamespaces;
    /* Warnings, each one line without the program name or "warning: ", e.g.
     * "a.yaml: line 40: skipping kind Service"; print as "gpusched: warning: %s\n". */
    char **warnings;
    size_t nwarnings;
    struct manifest_object *objects; /* opts.keep_objects only: input order */
    size_t nobjects;
    /* objects read so far (documents and list items that are not lists themselves, skipped
     * kinds included): a command compares it before and after its -f files, as kubectl
     * says "no objects passed to create" when they held none */
    size_t nread;
    int finished; /* set by a successful manifest_input_finish */
    struct manifest_input_opts opts;
    struct manifest_input_priv *priv;
};

/* manifest_input_init prepares an empty input; o may be NULL for the defaults (copied; the
 * default_namespace string is borrowed and must outlive the input). */
void manifest_input_init(struct manifest_input *in, const struct manifest_input_opts *o);

/* manifest_input_load_file loads one -f argument: a file, "-" for standard input, or a directory,
 * whose *.yaml, *.yml and *.json files (not recursive, hidden files skipped) load in strcmp
 * order like `kubectl -f DIR`. Each file may hold several YAML documents or JSON values. Kinds:
 * Node, Pod, Deployment, ReplicaSet, ReplicationController, StatefulSet, Job, DaemonSet,
 * PriorityClass, Service (its selector only), Namespace, RuntimeClass, PodDisruptionBudget,
 * PersistentVolumeClaim, PersistentVolume, StorageClass, the CSI objects, resource.k8s.io/v1's
 * DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate and DeviceTaintRule, List and
 * typed lists (NodeList, PodList, ...) through their items. Other
 * kinds are skipped with a warning. Returns 0, or a negative errno-style code with err naming
 * the file, line and field at fault ("a.yaml", 12, "spec.replicas", "Invalid value: ...").
 * On error the input is as it was before the call (arena memory may have been used).
 * Must not be called after manifest_input_finish. */
int manifest_input_load_file(struct manifest_input *in, const char *path, struct err *err);

/* manifest_input_load_buffer is the same for len bytes at data, named name in messages (the
 * name is copied). */
int manifest_input_load_buffer(struct manifest_input *in, const char *name, const char *data,
                               size_t len, struct err *err);

/* manifest_input_load_object loads one decoded object, or a List or typed list (an API list
 * answer: PodList, NodeList, ... whose items carry no kind) through its items, named name in
 * messages (copied); no line numbers are known. obj is borrowed and left as it is. Kinds,
 * errors and rollback as for manifest_input_load_file. */
int manifest_input_load_object(struct manifest_input *in, const char *name, json_t *obj,
                               struct err *err);

/* manifest_input_load_cluster_object is manifest_input_load_object for an object read from a
 * running cluster: a workload's pods exist there (and are read with the cluster's pods), so
 * no workload is expanded; a ReplicaSet's, ReplicationController's or StatefulSet's selector
 * still counts for PodTopologySpread's system defaults (struct manifest_selector). */
int manifest_input_load_cluster_object(struct manifest_input *in, const char *name, json_t *obj,
                                       struct err *err);

/* manifest_input_warn appends one warning line (copied) to in->warnings, as the loader's own
 * (the same cap); 0 or -ENOMEM. */
int manifest_input_warn(struct manifest_input *in, const char *msg);

/* manifest_input_finish completes the input once every file is loaded:
 * - expands each workload to the pods its controller would create, placed in pod order where
 *   the workload appeared, counting the input's active pods (not terminating, Succeeded or
 *   Failed) whose controller it is (ownerReferences): a ReplicaSet or ReplicationController
 *   creates spec.replicas minus those; a Deployment nothing when a ReplicaSet it controls is
 *   in the input, else the pods of its ReplicaSet NAME-<pod-template-hash> minus that
 *   ReplicaSet's; a StatefulSet the ordinals whose pod name is free; a Job parallelism
 *   (bounded by completions) minus its active pods, an Indexed Job the indexes no active pod
 *   has; a DaemonSet one pod per node it may run on (nodeSelector and required node affinity
 *   match, no untolerated NoSchedule/NoExecute taint after the controller's default
 *   tolerations) and has no pod on yet, pinned with matchFields metadata.name In [node];
 * - resolves priorities like the Priority admission plugin: an explicit spec.priority stays;
 *   priorityClassName takes the class's value (PriorityClasses of the input, plus the
 *   built-in system-cluster-critical and system-node-critical); no class name takes the
 *   globalDefault class, else 0;
 * - rejects duplicate node names and duplicate namespace/name pods;
 * - adds a Namespace for every namespace a pod uses that the input does not define.
 * Pods keep pod affinity terms with matchLabelKeys / mismatchLabelKeys merged into their label
 * selectors, as the API server stores them (kube_pod_merge_label_keys).
 * Returns 0 or a negative code with err naming the file and line at fault; on error the
 * input is unusable except for manifest_input_release. Call it exactly once. */
int manifest_input_finish(struct manifest_input *in, struct err *err);

/* manifest_input_find_pod returns the pod ns/name (ns NULL = the default namespace), or NULL
 * (also for a pod passed to opts.take_bound). */
const struct kube_pod *manifest_input_find_pod(const struct manifest_input *in, const char *ns,
                                               const char *name);

/* manifest_input_find_node returns the node called name, or NULL. */
const struct kube_node *manifest_input_find_node(const struct manifest_input *in, const char *name);

/* manifest_input_trim frees, after a successful manifest_input_finish, what only the loading and
 * the lookups needed: the nodes (nodes[] is empty afterwards; copy what you need first, e.g.
 * into a scheduling cluster) and the name tables (manifest_input_find_pod and _find_node find
 * nothing afterwards). pods[] and classes[] stay. Does nothing on an unfinished input. */
void manifest_input_trim(struct manifest_input *in);

/* manifest_input_release frees everything the input holds; it can be init'ed again. */
void manifest_input_release(struct manifest_input *in);

#endif
