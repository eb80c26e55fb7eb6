/* dra-int.h - Dynamic Resource Allocation for the commands: the world of resource.k8s.io objects
 * (sched/dynamicresources.h) built from a loaded input and given to its cluster, with the
 * bound pods that hold claims kept aside as the loader hands them over. */
#ifndef GPUSCHED_DRA_INT_H
#define GPUSCHED_DRA_INT_H

#include <jansson.h>

#include "kube/object.h"
#include "manifest/manifest.h"
#include "sched/sched.h"

/* gpusched_dra_take_bound notes a bound pod the loader hands to the cluster (valid during the
 * call only) when it has claims: its names, uid and claims are copied. 0 or -ENOMEM. */
int gpusched_dra_take_bound(struct sched_cluster *c, const struct kube_pod *pod);

/* gpusched_dra_live_input: the input came from a live cluster whose resource.k8s.io objects
 * could not all be listed (the role lacks some): no world is built, and pods with claims
 * stay pending, not modelled (warned). */
void gpusched_dra_live_input(void);

/* gpusched_dra_attach builds the world from in (when it has resource.k8s.io objects or pods
 * with claims) with kube-scheduler 1.minor's features and gives it to c, which frees it.
 * Prints the error and returns 1 on failure. */
int gpusched_dra_attach(const struct manifest_input *in, struct sched_cluster *c, int minor);

/* gpusched_dra_warn_gpu_placement: for a command scoring with GPUPlacement, a warning (once a
 * process) when in's ResourceSlices publish GPUs (gpu_product's rule) and no DeviceClass of
 * c's world serves nvidia.com/gpu: GPUPlacement counts the device plugin's GPUs only. */
void gpusched_dra_warn_gpu_placement(const struct manifest_input *in,
                                     const struct sched_cluster *c);

/* gpusched_dra_claims is the "claims" array of pod's entry in simulate -o json: one object per
 * device of its claims ({"claim","request","driver","pool","device"}), NULL when it has none
 * (or out of memory). */
json_t *gpusched_dra_claims(const struct sched_cluster *c, const struct kube_pod *pod);

/* gpusched_dra_binding_warning: when kube-scheduler's PreBind would wait for binding
 * conditions of the devices of pod (placed in c's world by a command that does not wait: cmd
 * is "simulate" or "explain"; sched_dra_pod_binding_waits at the wall clock, with the pod's
 * profile's bindingTimeout timeout_ms, 0 the default), *line is the warning, without the
 * "gpusched: warning: " prefix, malloc'd (the caller frees); else *line is NULL. 0 or
 * -ENOMEM. */
int gpusched_dra_binding_warning(const struct sched_cluster *c, const struct kube_pod *pod,
                                 const char *cmd, int64_t timeout_ms, char **line);

/* gpusched_dra_add_copy: capacity's copy of a pod (name changing per copy, the rest the
 * spec's) joins c's DRA world when it names claim templates, so that the resource-claim
 * controller's claim is made for it (the world is committed again). 0, 1 with the error
 * printed. No world, or no template: nothing. */
int gpusched_dra_add_copy(struct sched_cluster *c, const struct kube_pod *copy);

/* The GPUs ResourceSlices publish for one node (devices with a productName attribute, bare or
 * domain-qualified, that are not MIG partitions), as nodes, report and capacity show them. */
struct gpusched_dra_gpus {
    char product[128]; /* productName; distinct ones joined with "," */
    char mem[32];      /* capacity memory of the first, as written; "" when none */
    int64_t mem_bytes; /* the same in bytes, 0 when none */
    int count;         /* devices */
    int used;          /* of them held by allocated claims (exclusively or shared) */
};

/* gpusched_dra_node_gpus fills out for node n from in's slices that the node can use (its
 * nodeName, allNodes, a nodeSelector it matches, or devices selected per device), the use from
 * c's DRA world (NULL: none used). Returns out->count. */
int gpusched_dra_node_gpus(const struct manifest_input *in, const struct sched_cluster *c,
                           const struct kube_node *n, struct gpusched_dra_gpus *out);

#endif
