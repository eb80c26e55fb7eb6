/* rules.h - the rules of Kubernetes over the object model that more than one part applies:
 * toleration of taints and node selector terms (the scheduler's filters and the DaemonSet
 * expansion of the manifest loader), a pod's effective request (the scheduler's accounting,
 * gpusched nodes), whether a pod has finished. One implementation of each; the selector and
 * label rules are in labels.h. */
#ifndef KUBE_RULES_H
#define KUBE_RULES_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "kube/object.h"

/* kube_toleration_tolerates is v1.Toleration.ToleratesTaint: an empty effect matches any
 * effect, an empty key with Exists matches any key, Equal compares values. */
bool kube_toleration_tolerates(const struct kube_toleration *t, const struct kube_taint *taint);

/* kube_node_selector_term_matches: all matchExpressions hold on the node's labels and all
 * matchFields on its name; a term with neither matches nothing; an invalid requirement fails
 * the term. */
bool kube_node_selector_term_matches(const struct kube_node_selector_term *t,
                                     const struct kube_node *node);

/* kube_node_selector_matches: the terms ORed. */
bool kube_node_selector_matches(const struct kube_node_selector *s, const struct kube_node *node);

/* kube_resources_scalar returns the value of a scalar resource, 0 when absent. */
int64_t kube_resources_scalar(const struct kube_resources *r, const char *name);

/* kube_pod_phase_terminal: the pod phase is Succeeded or Failed. Such a pod holds no
 * resources on its node and is never scheduled. phase may be NULL. */
bool kube_pod_phase_terminal(const char *phase);

/* The options of kube_pod_requests, as resourcehelper.PodResourcesOptions. */
struct kube_requests_opts {
    /* NonMissingContainerRequests: a container (or init container) whose requests name no
     * cpu counts default_cpu_milli, none memory default_memory; 0 leaves them missing. The
     * scheduler's scoring uses 100m and 200Mi. */
    int64_t default_cpu_milli;
    int64_t default_memory;
    /* SkipPodLevelResources: the containers' sum even when the pod has spec.resources
     * (kube-scheduler v1.37's LeastAllocated score counts the incoming pod that way) */
    bool skip_pod_level;
};

/* kube_pod_requests computes the effective request of a pod as the scheduler counts it
 * (resourcehelper.PodRequests): max(sum of containers and sidecars, each init container with
 * the sidecars started before it), replaced by the pod-level requests where set, + overhead.
 * For a pod whose status resources decoding kept (kube_pod_status_resources: a bound pod
 * resized in place), per resource the larger of that sum over the spec and over what the
 * status reports (UseStatusResources), as kube-scheduler counts pods on a node and scores
 * them. o may be NULL (no defaults). out->set has the
 * KUBE_RES_* bits some container named; out->scalars lists every scalar resource named
 * anywhere, sorted, including those that add up to 0; their array is allocated from a, the
 * names are the pod's own strings. Sums saturate at INT64_MAX instead of overflowing.
 * Returns 0 or -ENOMEM. */
int kube_pod_requests(const struct kube_pod *p, const struct kube_requests_opts *o, struct arena *a,
                      struct kube_resources *out);

/* kube_pod_level_requests_set: the pod has pod-level spec.resources (requests or limits) of
 * cpu, memory or hugepages-*, which kube_pod_requests then uses instead of the containers'
 * sum (resourcehelper.IsPodLevelResourcesSet; requests defaulted from limits as the API
 * server does). */
bool kube_pod_level_requests_set(const struct kube_pod *p);
/* kube_pod_merge_label_keys does what the API server does to a pod it creates
 * (MatchLabelKeysInPodAffinity, on by default since v1.33): in every pod affinity and
 * anti-affinity term with a label selector, each matchLabelKeys key the pod has a label for
 * becomes "key In (value)" and each mismatchLabelKeys key "key NotIn (value)", appended to
 * the selector's requirements. The key lists stay as they are (the scheduler ignores them).
 * New arrays come from a. Returns 0 or -ENOMEM. */
int kube_pod_merge_label_keys(struct kube_pod *p, struct arena *a);

/* kube_pod_extra_own gives p a block of rarely set members of its own, a copy from a of the
 * one it had (possibly shared with other pods) or an empty one, and returns it for writing;
 * NULL when a is out of memory (p is then unchanged). */
struct kube_pod_extra *kube_pod_extra_own(struct kube_pod *p, struct arena *a);

#endif
