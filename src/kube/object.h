/* object.h - the Kubernetes objects gpusched and gpulabel reason about: the types only (and
 * kube_pod_ext, the reader of a pod's rarely set members).
 *
 * Only the fields that scheduling and labelling read are kept. decode.h fills them from JSON,
 * rules.h holds the rules of Kubernetes that read them (tolerations, node selector terms, pod
 * requests), labels.h the label and selector ones. Every string and array of one object lives
 * in the arena passed to its decoder, so an object is freed with its arena. Quantities are
 * already converted: cpu in millicores, everything else in base units (bytes, counts), as
 * int64. Label lists are sorted by key (strcmp) and keys are unique. */
#ifndef KUBE_OBJECT_H
#define KUBE_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/quantity.h"

struct kube_label {
    const char *key;
    const char *value;
};

struct kube_labels {
    struct kube_label *v; /* sorted by key */
    size_t n;
};

enum kube_taint_effect {
    KUBE_EFFECT_ANY = 0, /* only in tolerations: empty effect matches every effect */
    KUBE_EFFECT_NO_SCHEDULE,
    KUBE_EFFECT_PREFER_NO_SCHEDULE,
    KUBE_EFFECT_NO_EXECUTE,
};

struct kube_taint {
    const char *key;
    const char *value; /* "" when unset */
    enum kube_taint_effect effect;
};

enum kube_toleration_op { KUBE_TOL_EQUAL = 0, KUBE_TOL_EXISTS };

struct kube_toleration {
    const char *key; /* "" matches every key (only with Exists) */
    enum kube_toleration_op op;
    const char *value;             /* "" when unset */
    enum kube_taint_effect effect; /* KUBE_EFFECT_ANY when empty */
    bool has_seconds;
    int64_t seconds;
};

/* A resource list (requests, limits, allocatable, overhead). The four native resources have
 * their own members; every other name (nvidia.com/gpu, hugepages-2Mi, ...) is a scalar. */
enum {
    KUBE_RES_CPU = 1u << 0,
    KUBE_RES_MEMORY = 1u << 1,
    KUBE_RES_EPHEMERAL = 1u << 2,
    KUBE_RES_PODS = 1u << 3,
};

struct kube_scalar {
    const char *name;
    int64_t value; /* integer base units; extended resources are whole numbers */
};

struct kube_resources {
    unsigned set; /* KUBE_RES_* bits of the native members that were given */
    int64_t cpu_milli;
    int64_t memory;
    int64_t ephemeral;
    int64_t pods;
    struct kube_scalar *scalars; /* sorted by name */
    size_t nscalars;
};

enum kube_selector_op {
    KUBE_OP_IN = 0,
    KUBE_OP_NOT_IN,
    KUBE_OP_EXISTS,
    KUBE_OP_DOES_NOT_EXIST,
    KUBE_OP_GT,
    KUBE_OP_LT,
    KUBE_OP_EQUALS,        /* label-selector strings only: "=" */
    KUBE_OP_DOUBLE_EQUALS, /* "==" */
    KUBE_OP_NOT_EQUALS,    /* "!=" */
};

/* One requirement of a node selector term or of a label selector. */
struct kube_requirement {
    const char *key;
    enum kube_selector_op op;
    const char **values; /* sorted, unique for In/NotIn; one value for Gt/Lt/=/==/!= */
    size_t nvalues;
    bool invalid; /* set at decode when the requirement cannot match (e.g. Gt with a
                     non-integer value): the term that holds it matches no node */
};

struct kube_node_selector_term {
    struct kube_requirement *exprs; /* matchExpressions, on labels */
    size_t nexprs;
    struct kube_requirement *fields; /* matchFields, only metadata.name */
    size_t nfields;
};

struct kube_node_selector {
    struct kube_node_selector_term *terms; /* ORed */
    size_t nterms;
};

struct kube_preferred_term {
    int32_t weight; /* 1..100 */
    struct kube_node_selector_term term;
};

enum kube_protocol { KUBE_PROTO_TCP = 0, KUBE_PROTO_UDP, KUBE_PROTO_SCTP };

struct kube_port {
    int32_t container_port;
    int32_t host_port;   /* 0 when none */
    const char *host_ip; /* "0.0.0.0" when empty */
    enum kube_protocol protocol;
};

struct kube_container {
    const char *name;
    const char *image;              /* "" when unset */
    struct kube_resources requests; /* the spec's, API defaulting applied: a limit without
                                       a request makes request = limit. Limits are validated
                                       against the requests but not kept: no scheduling rule
                                       reads them. A resized pod's status may count for more
                                       (kube_pod_status_resources) */
    struct kube_port *ports;
    size_t nports;
    bool restart_always; /* init containers: restartPolicy: Always (a sidecar) */
};

/* metav1.LabelSelector */
struct kube_label_selector {
    bool present;                  /* false: nil selector (matches nothing where that matters) */
    struct kube_requirement *reqs; /* matchLabels as KUBE_OP_IN with one value, then
                                      matchExpressions */
    size_t nreqs;
};

/* v1.PodAffinityTerm. matchLabelKeys / mismatchLabelKeys are kept as given; the API server
 * merges them into label_selector when it creates the pod (kube_pod_merge_label_keys). */
struct kube_pod_affinity_term {
    struct kube_label_selector label_selector; /* absent: matches no pod */
    const char **namespaces;                   /* as given */
    size_t nnamespaces;
    struct kube_label_selector namespace_selector; /* absent: none; empty: every namespace */
    const char *topology_key;
    const char **match_label_keys;
    size_t nmatch_label_keys;
    const char **mismatch_label_keys;
    size_t nmismatch_label_keys;
    int32_t weight; /* preferred terms (1..100); 0 for required ones */
};

/* spec.affinity.podAffinity or podAntiAffinity */
struct kube_pod_affinity {
    struct kube_pod_affinity_term *required; /* requiredDuringSchedulingIgnoredDuringExecution */
    size_t nrequired;
    struct kube_pod_affinity_term *preferred; /* preferredDuringScheduling...: term + weight */
    size_t npreferred;
};

struct kube_owner {
    const char *kind; /* "Deployment", "Job", ... of the manifest that produced the pod;
                         NULL for a bare Pod */
    const char *name;
    const char *api_version; /* the ownerReference's apiVersion; NULL when the manifest
                                loader made the owner up from a workload */
};

/* One entry of spec.topologySpreadConstraints, API defaults applied. */
enum kube_spread_action { KUBE_SPREAD_DO_NOT_SCHEDULE = 0, KUBE_SPREAD_SCHEDULE_ANYWAY };

struct kube_spread_constraint {
    int32_t max_skew;
    const char *topology_key;
    enum kube_spread_action when_unsatisfiable;
    struct kube_label_selector selector; /* labelSelector (absent: matches nothing) */
    int32_t min_domains;                 /* 1 when unset */
    bool affinity_ignore;                /* nodeAffinityPolicy: Ignore (default Honor) */
    bool taints_honor;                   /* nodeTaintsPolicy: Honor (default Ignore) */
    const char **match_label_keys;
    size_t nmatch_label_keys;
};

/* A pod field that can change kube-scheduler's answer and that gpusched does not model:
 * field is the path ("spec.volumes[0].persistentVolumeClaim"), what the plugins or the
 * consequence ("VolumeBinding, VolumeZone, NodeVolumeLimits"). */
struct kube_unmodelled {
    const char *field;
    const char *what;
};

/* The in-tree volume plugins that CSI migration translates (k8s.io/csi-translation-lib). */
enum kube_intree {
    KUBE_INTREE_NONE = 0,
    KUBE_INTREE_AWS_EBS,    /* awsElasticBlockStore: volumeID */
    KUBE_INTREE_GCE_PD,     /* gcePersistentDisk: pdName */
    KUBE_INTREE_AZURE_DISK, /* azureDisk: diskURI */
    KUBE_INTREE_CINDER,     /* cinder: volumeID */
    KUBE_INTREE_PORTWORX,   /* portworxVolume: volumeID */
    KUBE_INTREE_AZURE_FILE, /* azureFile (migratable, but not counted by NodeVolumeLimits) */
    KUBE_INTREE_VSPHERE,    /* vsphereVolume (the same) */
};

/* An in-tree volume of a pod or a PersistentVolume, as CSI migration reads it. */
struct kube_inline_volume {
    enum kube_intree plugin;
    const char *id;       /* the source's volume id (volumeID, pdName, diskURI), "" if none */
    bool azure_unmanaged; /* azureDisk kind other than Managed: translation fails */
};

struct kube_pvc;

/* A generic ephemeral volume (spec.volumes[].ephemeral): its claim is claims[claim], made
 * from the template by the ephemeral volume controller, owned by the pod. */
struct kube_ephemeral_volume {
    size_t claim;
    const char *volume;          /* spec.volumes[].name */
    const struct kube_pvc *tmpl; /* volumeClaimTemplate (no name or namespace) */
};

/* What the kubelet reports of one container's resources (status.containerStatuses[] or
 * status.initContainerStatuses[], matched by name). A list the status does not give is empty
 * (set 0, no scalars): the API server stores an empty map as no map. */
struct kube_container_status {
    struct kube_resources allocated; /* allocatedResources: what the kubelet admitted */
    struct kube_resources actuated;  /* resources.requests: what it applied to the cgroups */
};

/* The resources a pod's status reports, kept for a bound pod when they change what
 * kube-scheduler counts for it (kube_pod_requests): after an in-place resize the spec holds
 * the desired requests and the status what the node has given the pod; the scheduler counts
 * the larger (InPlacePodVerticalScaling, GA; InPlacePodLevelResourcesVerticalScaling, beta
 * and on in v1.37, for the pod-level lists). */
struct kube_pod_status_resources {
    struct kube_container_status *containers; /* one per container, then one per init
                                                 container (the order of kube_pod's lists) */
    /* condition PodResizePending with reason Infeasible: the desired spec is not counted,
     * only what the status reports */
    bool resize_infeasible;
    bool has_pod_resources;              /* status.resources given (even without requests) */
    struct kube_resources pod_actuated;  /* status.resources.requests */
    struct kube_resources pod_allocated; /* status.allocatedResources */
};

/* The members of a pod that most pods leave empty, kept out of struct kube_pod so that the
 * records of many pending pods stay small. A pod without any of them has extra == NULL;
 * pods made from one template (a workload's replicas) may share one block, so it is
 * changed only through kube_pod_extra_own (copy on write). */
struct kube_pod_extra {
    struct kube_resources overhead;
    /* pod-level spec.resources (PodLevelResources, on by default from v1.34): requests of
     * cpu, memory and hugepages-* that replace the containers' sum; limits kept only to
     * default a request no container makes */
    struct kube_resources pod_requests;
    struct kube_resources pod_limits;
    struct kube_pod_affinity pod_affinity;      /* spec.affinity.podAffinity */
    struct kube_pod_affinity pod_anti_affinity; /* spec.affinity.podAntiAffinity */
    struct kube_spread_constraint *spread;      /* spec.topologySpreadConstraints */
    size_t nspread;
    struct kube_ephemeral_volume *ephemeral; /* spec.volumes[].ephemeral, volume order */
    size_t nephemeral;
    struct kube_inline_volume *inline_volumes; /* in-tree volumes CSI migration counts */
    size_t ninline_volumes;
    struct kube_unmodelled *unmodelled; /* fields gpusched does not model, spec order */
    size_t nunmodelled;
    /* spec.resourceClaims (kube_pod.nresource_claims of them), each with its
     * status.resourceClaimStatuses entry; status.extendedResourceClaimStatus's claim (NULL) */
    struct kube_pod_resource_claim *resource_claims;
    const char *extended_claim;
    /* status resources of a bound pod resized in place; NULL when they would change nothing
     * (the spec alone gives the same requests), never written after decoding */
    const struct kube_pod_status_resources *status;
};

struct kube_pod {
    const char *namespace_; /* "default" when unset */
    const char *name;
    const char *uid;              /* "" when unset */
    const char *resource_version; /* "" when unset */
    struct kube_labels labels;
    const char *node_name;           /* "" when unbound */
    const char *scheduler_name;      /* "default-scheduler" when unset */
    const char *nominated_node_name; /* status.nominatedNodeName, "" when unset */
    const char *priority_class_name; /* "" when unset */
    const char *runtime_class_name;  /* spec.runtimeClassName, "" when unset */
    int32_t priority;                /* spec.priority (0 when unset and no class resolves it) */
    /* the flags together, so the record has no padding holes (10,000 pending pods) */
    bool has_priority;
    bool preempt_never;         /* preemptionPolicy: Never */
    bool has_preemption_policy; /* spec.preemptionPolicy given */
    bool has_pod_resources;     /* spec.resources (pod-level resources) given */
    bool has_required_affinity;
    bool host_network;
    bool terminating;              /* metadata.deletionTimestamp set */
    bool disruption_by_preemption; /* status.conditions: DisruptionTarget True, reason
                                      PreemptionByScheduler (a scheduler preempted it) */
    int source_line;
    struct kube_labels node_selector;
    struct kube_node_selector required; /* requiredDuringSchedulingIgnoredDuringExecution */
    struct kube_preferred_term *preferred;
    size_t npreferred;
    struct kube_toleration *tolerations;
    size_t ntolerations;
    struct kube_container *containers;
    size_t ncontainers;
    struct kube_container *init_containers;
    size_t ninit_containers;
    struct kube_pod_extra *extra; /* NULL when the pod has none of them: read it through
                                     kube_pod_ext, change it through kube_pod_extra_own */
    size_t nresource_claims;      /* spec.resourceClaims */
    /* spec.volumes[].persistentVolumeClaim.claimName and, for a generic ephemeral volume,
     * its claim's name "<pod>-<volume>" (kube_pod_ephemeral_names sets those), volume order */
    const char **claims;
    size_t nclaims;
    const char *phase; /* status.phase, "" when unset; Succeeded/Failed pods hold no resources */
    size_t nscheduling_gates;
    struct kube_owner owner;
    const char *source_file; /* manifest the pod came from, NULL from the API */
};

/* kube_pod_ext returns p's rarely set members: p->extra, or an empty block when it is NULL
 * (never NULL, never to be written). */
static inline const struct kube_pod_extra *kube_pod_ext(const struct kube_pod *p)
{
    static const struct kube_pod_extra none;

    return p->extra ? p->extra : &none;
}

/* The node's Ready condition (status.conditions[type=Ready]), as `kubectl get nodes` reads it. */
enum kube_node_ready {
    KUBE_READY_UNKNOWN = 0, /* no Ready condition */
    KUBE_READY_TRUE,        /* status "True" */
    KUBE_READY_NOT,         /* any other status ("False", "Unknown") */
};

/* one entry of node.status.images */
struct kube_image {
    const char **names;
    size_t nnames;
    int64_t size_bytes;
};

struct kube_node {
    const char *name;
    const char *uid;
    const char *resource_version;
    struct kube_labels labels;
    struct kube_taint *taints;
    size_t ntaints;
    bool unschedulable;
    struct kube_resources allocatable; /* capacity when allocatable is absent */
    struct kube_resources capacity;
    enum kube_node_ready ready; /* shown by `gpusched nodes`; no scheduling rule reads it */
    struct kube_image *images;  /* status.images (ImageLocality) */
    size_t nimages;
    const char *source_file;
    int source_line;
};

/* A controller of pods as the manifest loader reads it: a Deployment, ReplicaSet,
 * StatefulSet, DaemonSet, Job or ReplicationController. */
struct kube_workload {
    const char *name;
    const char *namespace_; /* "" when unset */
    int64_t replicas;       /* spec.replicas (1 unset); a Job's spec.parallelism (1 unset) */
    int64_t completions;    /* a Job's spec.completions, -1 unset */
    bool indexed;           /* a Job's completionMode Indexed */
    bool suspend;           /* a Job's spec.suspend */
    /* spec.selector: a LabelSelector, a ReplicationController's label set; present false
     * when none is given (an empty set of a ReplicationController too: the API server then
     * takes the template's labels) */
    struct kube_label_selector selector;
    struct kube_owner controller; /* the controller ownerReference (kind NULL: none) */
    /* spec.template as the pod the controller creates, named after the workload (namespace,
     * owner and source left to the caller) */
    struct kube_pod tmpl;
};

/* A RuntimeClass (node.k8s.io/v1): what its admission gives the pods that name it. */
struct kube_runtime_class {
    const char *name;
    struct kube_resources overhead; /* overhead.podFixed */
    bool has_overhead;
    bool has_scheduling; /* scheduling.nodeSelector or scheduling.tolerations given */
};

/* A Namespace: its labels are what namespaceSelector of pod affinity terms match. The API
 * server always sets kubernetes.io/metadata.name to the name (decode does the same). */
struct kube_namespace {
    const char *name;
    struct kube_labels labels;
};

struct kube_priority_class {
    const char *name;
    int32_t value;
    bool global_default;
    bool preempt_never;
};

/* A policy/v1 PodDisruptionBudget, as DefaultPreemption reads it: the pods it selects in its
 * namespace, how many of them may be disrupted now (status.disruptionsAllowed, 0 when the
 * disruption controller has not written it) and the pods already being disrupted
 * (status.disruptedPods, names only). */
struct kube_pdb {
    const char *namespace_; /* "default" when unset */
    const char *name;
    struct kube_label_selector selector; /* spec.selector; nil or empty matches nothing */
    int32_t disruptions_allowed;
    const char **disrupted_pods;
    size_t ndisrupted_pods;
    const char *source_file;
    int source_line;
};

/* Access modes of PersistentVolumes and their claims, as bits. */
enum {
    KUBE_ACCESS_RWO = 1,  /* ReadWriteOnce */
    KUBE_ACCESS_ROX = 2,  /* ReadOnlyMany */
    KUBE_ACCESS_RWX = 4,  /* ReadWriteMany */
    KUBE_ACCESS_RWOP = 8, /* ReadWriteOncePod */
};

/* A PersistentVolumeClaim as VolumeBinding reads it (src/manifest/volumes.c decodes it). */
struct kube_pvc {
    const char *namespace_; /* "default" when unset */
    const char *name;
    const char *storage_class; /* the beta annotation, else spec.storageClassName; NULL: none */
    const char *volume_name;   /* spec.volumeName, "" when unset */
    const char *selected_node; /* annotation volume.kubernetes.io/selected-node, or NULL */
    bool bind_completed;       /* annotation pv.kubernetes.io/bind-completed */
    bool terminating;          /* metadata.deletionTimestamp */
    bool lost;                 /* status.phase Lost */
    bool has_selector;         /* spec.selector given */
    bool block;                /* spec.volumeMode Block (default Filesystem) */
    struct kube_label_selector selector;
    unsigned access;        /* KUBE_ACCESS_* */
    int64_t request;        /* spec.resources.requests.storage, bytes (0 when unset) */
    const char *spec_class; /* spec.storageClassName alone, NULL when unset */
    const char *owner_pod;  /* the controller ownerReference's name when its kind is Pod */
    const char *owner_uid;  /* ... and its uid ("" when unset) */
    const char *source_file;
    int source_line;
};

/* A PersistentVolume as VolumeBinding and VolumeZone read it. */
struct kube_pv {
    const char *name;
    struct kube_labels labels;
    const char *storage_class; /* the beta annotation, else spec.storageClassName ("" unset) */
    const char *claim_ns, *claim_name; /* spec.claimRef (NULL when unset) */
    const char *claim_uid;             /* spec.claimRef.uid, "" when unset */
    bool available;                    /* status.phase Available */
    bool terminating;
    bool block;        /* spec.volumeMode Block */
    bool has_affinity; /* spec.nodeAffinity.required given */
    struct kube_node_selector affinity;
    unsigned access;                  /* KUBE_ACCESS_* */
    int64_t capacity;                 /* spec.capacity.storage, bytes */
    const char *csi_driver;           /* spec.csi.driver, NULL when not a CSI volume */
    const char *csi_handle;           /* spec.csi.volumeHandle ("" when unset) */
    struct kube_inline_volume intree; /* an in-tree source CSI migration translates */
    const char *source_file;
    int source_line;
};

/* One term of a StorageClass's allowedTopologies: every key's values (ANDed). */
struct kube_topology_term {
    struct kube_requirement *exprs; /* matchLabelExpressions, as In requirements */
    size_t nexprs;
};

/* A storage.k8s.io/v1 StorageClass. */
struct kube_storage_class {
    const char *name;
    const char *provisioner;
    bool wait_for_first_consumer; /* volumeBindingMode WaitForFirstConsumer (default Immediate) */
    struct kube_topology_term *topologies; /* allowedTopologies, ORed */
    size_t ntopologies;
    const char *source_file;
    int source_line;
};

/* One driver of a CSINode: its attach limit (spec.drivers[].allocatable.count). */
struct kube_csi_node_driver {
    const char *name;
    bool has_count;
    int32_t count;
};

/* A storage.k8s.io/v1 CSINode (named after its node), as NodeVolumeLimits reads it. */
struct kube_csi_node {
    const char *name;
    const char *migrated_plugins; /* annotation storage.alpha.kubernetes.io/migrated-plugins */
    struct kube_csi_node_driver *drivers;
    size_t ndrivers;
    const char *source_file;
    int source_line;
};

/* A storage.k8s.io/v1 CSIDriver: what the scheduler reads of its spec. */
struct kube_csi_driver {
    const char *name;
    bool storage_capacity;   /* spec.storageCapacity (default false) */
    bool prevent_if_missing; /* spec.preventPodSchedulingIfMissing (default false) */
    const char *source_file;
    int source_line;
};

/* A storage.k8s.io/v1 CSIStorageCapacity: the capacity a class has for the nodes its
 * nodeTopology selects. */
struct kube_csi_capacity {
    const char *namespace_;
    const char *name;
    const char *storage_class;           /* storageClassName */
    bool has_topology;                   /* nodeTopology given (nil: no node has access) */
    struct kube_label_selector topology; /* nodeTopology */
    bool has_capacity, has_max;
    int64_t capacity; /* capacity, bytes */
    int64_t max_size; /* maximumVolumeSize, bytes */
    const char *source_file;
    int source_line;
};

/* A storage.k8s.io/v1 VolumeAttachment: a volume of attacher attached to a node. */
struct kube_volume_attachment {
    const char *name;
    const char *attacher;  /* spec.attacher */
    const char *node_name; /* spec.nodeName */
    const char *pv_name;   /* spec.source.persistentVolumeName, NULL when unset */
    const char *source_file;
    int source_line;
};

/* ---- resource.k8s.io/v1: Dynamic Resource Allocation ----
 *
 * The objects as the API server stores them (defaults applied), with every field that can
 * change an allocation; fields of alpha features that are off in v1.37 are counted (n*) so the
 * loader can warn. Names of attributes and capacities are kept as written ("productName" or
 * "domain/id"). */

/* A quantity of a capacity, counter or capacity request: exact (kube_nano) and as written. */
struct kube_dra_quantity {
    kube_nano nano;
    const char *text;
};

enum kube_dra_attr_type {
    KUBE_DRA_INT = 0,
    KUBE_DRA_BOOL,
    KUBE_DRA_STRING,
    KUBE_DRA_VERSION,
    KUBE_DRA_LIST, /* ints/bools/strings/versions (DRAListTypeAttributes, alpha) */
};

struct kube_dra_attribute {
    const char *name;
    enum kube_dra_attr_type type;
    int64_t i;
    bool b;
    const char *s; /* string or version */
};

/* DeviceCapacity.requestPolicy */
struct kube_dra_capacity_policy {
    bool has_default;
    struct kube_dra_quantity def;
    struct kube_dra_quantity *valid_values; /* ascending */
    size_t nvalid_values;
    bool has_range, has_min, has_max, has_step;
    struct kube_dra_quantity min, max, step;
};

struct kube_dra_capacity {
    const char *name;
    struct kube_dra_quantity value;
    struct kube_dra_capacity_policy *policy; /* NULL when unset */
};

struct kube_dra_counter {
    const char *name;
    struct kube_dra_quantity value;
};

/* a CounterSet (sharedCounters) or a DeviceCounterConsumption (consumesCounters) */
struct kube_dra_counters {
    const char *name; /* the set's name, or the consumed counterSet */
    struct kube_dra_counter *counters;
    size_t ncounters;
    size_t ncompatibility_groups; /* DRADeviceCompatibilityGroups (alpha) */
};

/* a device taint, or a DeviceTaintRule's */
struct kube_dra_taint {
    const char *key;
    const char *value;  /* "" when unset */
    const char *effect; /* as written: NoSchedule, NoExecute, None (unknown ones kept) */
};

struct kube_dra_device {
    const char *name;
    struct kube_dra_attribute *attributes;
    size_t nattributes;
    struct kube_dra_capacity *capacity;
    size_t ncapacity;
    struct kube_dra_counters *consumes_counters;
    size_t nconsumes_counters;
    /* perDeviceNodeSelection: one of these */
    const char *node_name; /* "" when unset */
    bool all_nodes;
    struct kube_node_selector *node_selector; /* NULL when unset */
    struct kube_dra_taint *taints;
    size_t ntaints;
    int8_t allow_multiple_allocations; /* -1 unset, 0, 1 */
    bool binds_to_node;
    const char **binding_conditions;
    size_t nbinding_conditions;
    const char **binding_failure_conditions;
    size_t nbinding_failure_conditions;
    size_t nnode_allocatable; /* nodeAllocatableResources (DRANodeAllocatableResources, alpha) */
};

struct kube_resource_slice {
    const char *name;
    const char *driver;
    const char *pool;
    int64_t generation;
    int64_t resource_slice_count;
    /* exactly one of these (the API server's rule) */
    const char *node_name; /* "" when unset */
    bool all_nodes;
    bool per_device_node_selection;
    struct kube_node_selector *node_selector; /* NULL when unset */
    struct kube_dra_device *devices;
    size_t ndevices;
    struct kube_dra_counters *shared_counters;
    size_t nshared_counters;
    const char *partition_type_attribute; /* NULL unset (alpha) */
    size_t nskip_node_operations;         /* (alpha) */
    const char *source_file;
    int source_line;
};

/* a CEL device selector */
struct kube_dra_selector {
    const char *expression;
    int line; /* of the expression in its manifest, 0 when unknown */
};

struct kube_device_class {
    const char *name;
    const char *uid;
    int64_t creation_unix_nano; /* metadata.creationTimestamp, 0 when unset */
    struct kube_dra_selector *selectors;
    size_t nselectors;
    const char *extended_resource_name; /* NULL when unset */
    size_t nconfig;
    const char *source_file;
    int source_line;
};

struct kube_dra_toleration {
    const char *key;    /* "" when unset */
    const char *op;     /* "Equal" (the default) or "Exists" */
    const char *value;  /* "" when unset */
    const char *effect; /* "" when unset: every effect */
};

/* an ExactDeviceRequest or one DeviceSubRequest of firstAvailable */
struct kube_dra_request {
    const char *name;
    const char *device_class_name;
    struct kube_dra_selector *selectors;
    size_t nselectors;
    const char *allocation_mode; /* "ExactCount" (the default) or "All", others as written */
    int64_t count;               /* 1 when unset with ExactCount */
    int8_t admin_access;         /* -1 unset, 0, 1 */
    struct kube_dra_toleration *tolerations;
    size_t ntolerations;
    bool has_capacity;
    struct kube_dra_counter *capacity_requests; /* capacity.requests: name, quantity */
    size_t ncapacity_requests;
    size_t nderived_attributes; /* (alpha) */
};

struct kube_dra_device_request {
    const char *name;
    struct kube_dra_request *exactly;         /* NULL when firstAvailable is used */
    struct kube_dra_request *first_available; /* subrequests, in order */
    size_t nfirst_available;
};

struct kube_dra_constraint {
    const char **requests;
    size_t nrequests;
    const char *match_attribute;    /* NULL when unset */
    const char *distinct_attribute; /* NULL when unset */
};

struct kube_dra_claim_spec {
    struct kube_dra_device_request *requests;
    size_t nrequests;
    struct kube_dra_constraint *constraints;
    size_t nconstraints;
    size_t nconfig;
};

/* status.allocation.devices.results[] */
struct kube_dra_result {
    const char *request; /* "req" or "req/sub" */
    const char *driver;
    const char *pool;
    const char *device;
    bool admin_access;
    const char *share_id; /* NULL when not a share */
    struct kube_dra_counter *consumed_capacity;
    size_t nconsumed_capacity;
    /* the device's binding conditions and binding failure conditions, copied at allocation */
    const char **binding_conditions;
    size_t nbinding_conditions;
    const char **binding_failure_conditions;
    size_t nbinding_failure_conditions;
};

struct kube_dra_allocation {
    struct kube_dra_result *results;
    size_t nresults;
    struct kube_node_selector *node_selector; /* NULL: available on every node */
    bool has_allocation_timestamp;
    int64_t allocation_time; /* allocationTimestamp in seconds since the epoch */
};

/* a condition (metav1.Condition) of status.devices[].conditions */
struct kube_dra_condition {
    const char *type;
    const char *status; /* "True", "False" or "Unknown" */
    const char *reason, *message;
};

/* status.devices[]: what the driver reports about an allocated device */
struct kube_dra_device_status {
    const char *driver, *pool, *device;
    const char *share_id; /* NULL when none */
    struct kube_dra_condition *conditions;
    size_t nconditions;
};

/* status.reservedFor[] */
struct kube_dra_consumer {
    const char *api_group; /* "" for pods */
    const char *resource;  /* "pods" */
    const char *name;
    const char *uid;
};

struct kube_resource_claim {
    const char *namespace_;
    const char *name;
    const char *uid;
    const char *resource_version;
    struct kube_owner controller; /* the controlling ownerReference (kind NULL: none) */
    const char *owner_uid;        /* its uid, "" when none */
    const char *pod_claim_name;   /* annotation resource.kubernetes.io/pod-claim-name */
    bool extended_resource_claim; /* annotation resource.kubernetes.io/extended-resource-claim */
    bool delete_protection;       /* finalizer resource.kubernetes.io/delete-protection */
    bool terminating;             /* metadata.deletionTimestamp set */
    struct kube_dra_claim_spec spec;
    struct kube_dra_allocation *allocation; /* NULL when not allocated */
    struct kube_dra_consumer *reserved_for;
    size_t nreserved_for;
    struct kube_dra_device_status *devices; /* status.devices */
    size_t ndevices;
    const char *source_file;
    int source_line;
};

struct kube_resource_claim_template {
    const char *namespace_;
    const char *name;
    struct kube_labels labels;      /* spec.metadata.labels */
    struct kube_labels annotations; /* spec.metadata.annotations */
    struct kube_dra_claim_spec spec;
    const char *source_file;
    int source_line;
};

struct kube_device_taint_rule {
    const char *name;
    bool has_selector;                  /* deviceSelector given (none: matches nothing) */
    const char *driver, *pool, *device; /* NULL when unset */
    struct kube_dra_taint taint;
    const char *source_file;
    int source_line;
};

/* a pod's spec.resourceClaims[] and its claim in status.resourceClaimStatuses */
struct kube_pod_resource_claim {
    const char *name;
    const char *resource_claim_name;          /* NULL when unset */
    const char *resource_claim_template_name; /* NULL when unset */
    const char *status_claim_name; /* status.resourceClaimStatuses[name].resourceClaimName: NULL
                                      when the pod has no entry, "" when the entry has none */
};

#endif
