/* live-int.h - the state of a running cluster as the input of the offline commands (simulate,
 * explain, nodes, capacity): --kubeconfig, --context, -A and -v, credentials resolved as kubectl
 * does (kube/kubeconfig.h), and paginated lists of what the modelled plugins read (PriorityClasses,
 * Nodes, Pods) loaded into a manifest_input before any -f file, so files add what-if objects on
 * top. Kinds that change kube-scheduler's answer but are not modelled (PodDisruptionBudgets,
 * PersistentVolumeClaims and their PVs, StorageClasses, CSINodes) are read to say so in warnings.
 *
 * Bound pods come from every namespace (they use their nodes whatever the namespace); pending pods
 * from the -n namespace (default: the context's), or every namespace with -A. */
#ifndef GPUSCHED_LIVE_INT_H
#define GPUSCHED_LIVE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/err.h"
#include "base/flag.h"
#include "kube/client.h"
#include "manifest/manifest.h"

/* The source names the live objects carry as their pod->source_file: the list path. */
#define GPUSCHED_LIVE_PREFIX "/api"

struct gpusched_live {
    const char *kubeconfig, *context; /* borrowed from argv */
    bool all_namespaces;              /* -A */
    bool verbose;                     /* -v: progress even when stderr is not a terminal */
    struct flag flags[5];             /* gpusched_live_flags' table (four and FLAG_END) */
    /* set by gpusched_live_open */
    struct kube_client *client;
    const char *namespace_; /* the pending pods' namespace (-n, else the context's); borrowed */
    /* counts of the last gpusched_live_load, for summaries */
    size_t nnodes, nbound, npending;
    /* the last gpusched_live_load could not list a resource.k8s.io kind (403): the DRA
     * objects it read are not a whole world */
    bool dra_unread;
};

/* gpusched_live_flags returns the table of the four flags (kept in l, which must be zeroed first
 * and outlive the parse; they store into l), for a command's table to include
 * (FLAG_GROUP_OF). */
const struct flag *gpusched_live_flags(struct gpusched_live *l);

/* gpusched_live_wanted: the cluster is read when --kubeconfig or --context is given, or when no
 * -f file is (then the kubeconfig kubectl would use: $KUBECONFIG, ~/.kube/config, in-cluster). */
bool gpusched_live_wanted(const struct gpusched_live *l, size_t nfiles);

/* gpusched_live_open creates the client and resolves the namespace: ns_flag (-n) when set,
 * else the context's. Fails with err naming the kubeconfig at fault. */
int gpusched_live_open(struct gpusched_live *l, const char *ns_flag, struct err *err);

/* gpusched_live_load reads the cluster into in (initialised, not finished): PriorityClasses,
 * Nodes, bound Pods, pending Pods, then what the plugins read besides (Namespaces, ...,
 * resource.k8s.io's DeviceClasses, ResourceSlices, ResourceClaims, ResourceClaimTemplates and
 * DeviceTaintRules), each a paginated list. Warnings for what is not modelled go
 * to in->warnings. Progress goes to stderr on a terminal or with -v. 0, or a negative code with
 * err saying which list failed and why ("list pods: 403 Forbidden: ..."). */
int gpusched_live_load(struct gpusched_live *l, struct manifest_input *in, struct err *err);

/* gpusched_live_get GETs one object (path from "/api..."); *out is the parsed answer the caller
 * decrefs. -ENOENT with err "KIND \"NAME\" not found" style messages left to the caller. */
int gpusched_live_get(struct gpusched_live *l, const char *path, json_t **out, struct err *err);

/* gpusched_live_close frees the client; l stays usable for another open. */
void gpusched_live_close(struct gpusched_live *l);

/* gpusched_live_pod tells whether p was read from the cluster (not from a -f file). */
bool gpusched_live_pod(const struct kube_pod *p);

#endif
