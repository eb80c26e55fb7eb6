/* dynamicresources.h - Dynamic Resource Allocation in the scheduling core: kube-scheduler
 * v1.37.2's DynamicResources plugin and what it reads (its DRA manager: DeviceClasses with the
 * extended-resource mapping, ResourceSlices patched by DeviceTaintRules, ResourceClaims and the
 * devices they hold), plus what the resource-claim controller does for it (a template's claim
 * per pod, a victim's claims released).
 *
 * A world (struct sched_dra) is filled with the objects (borrowed: they must outlive it) and
 * committed; then each pod's cycle runs PreEnqueue, PreFilter, Filter per node, Score per
 * feasible node, and Reserve on the chosen node or PostFilter when none fits, with the
 * plugin's messages. CEL selectors are evaluated through struct sched_dra_cel (the CEL
 * library's compile, device view and evaluation). Not thread-safe. */
#ifndef SCHED_DYNAMICRESOURCES_H
#define SCHED_DYNAMICRESOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "kube/object.h"
#include "sched/dra_alloc.h"

struct sched_dra;

/* The CEL library, as the world uses it. compile: 0 and *program, or -EINVAL and *error (the
 * compile error's detail, malloc'd), -ENOMEM. prepare: the view of a device (driver, its
 * attributes and capacity) every program evaluates against; -EINVAL with *error when it cannot
 * be built. eval: 1 match, 0 no match, -1 a runtime error (its text in msg). */
struct sched_dra_cel {
    int (*compile)(void *ctx, const char *expr, void **program, char **error);
    void (*program_free)(void *ctx, void *program);
    int (*prepare)(void *ctx, const char *driver, const struct kube_dra_device *d, void **view,
                   char **error);
    void (*view_free)(void *ctx, void *view);
    int (*eval)(void *ctx, const void *program, const void *view, char *msg, size_t msgsize);
    void *ctx;
};

/* sched_dra_new makes an empty world with the features f (dra_features_default for v1.37,
 * dra_features_for an older release: without extended_resource no DeviceClass maps an
 * extended resource, without device_taint_rules DeviceTaintRules are not applied) and the
 * CEL library cel (copied). NULL when out of memory. */
struct sched_dra *sched_dra_new(const struct sched_dra_cel *cel, const struct dra_features *f);
void sched_dra_free(struct sched_dra *w);

/* The nodes (copied: their names, labels and allocatable scalars, which the Filter reads by
 * name): sched_dra_node finds one, NULL when unknown. */
int sched_dra_add_node(struct sched_dra *w, const struct kube_node *n);
const struct kube_node *sched_dra_node(const struct sched_dra *w, const char *name);
/* sched_dra_node_at is sched_dra_node for the node at a cluster slot, remembered per slot
 * (with the pools the Filter gathers on it) until the slot's name changes. */
const struct kube_node *sched_dra_node_at(struct sched_dra *w, uint32_t slot, const char *name);

/* sched_cluster_set_dra gives cluster c the world w (NULL: none) its pods' DynamicResources
 * cycles read: PreEnqueue, PreFilter, Filter, Score, PostFilter, Reserve and PreBind in
 * simulations, victims' claims released. sched_cluster_set_dra_owner hands c an owner of
 * whatever the caller keeps for it (the world included), freed with owner_free(owner) by
 * sched_cluster_free; sched_cluster_dra_owner returns it (NULL when none). */
struct sched_cluster;
void sched_cluster_set_dra(struct sched_cluster *c, struct sched_dra *w);
struct sched_dra *sched_cluster_dra(const struct sched_cluster *c);
void sched_cluster_set_dra_owner(struct sched_cluster *c, void *owner, void (*owner_free)(void *));
void *sched_cluster_dra_owner(const struct sched_cluster *c);
/* sched_cluster_set_dra_commit: a pod sched_schedule_one places gets its claims allocated and
 * reserved, as in a simulation (capacity's copies); off by default outside sched_simulate. */
void sched_cluster_set_dra_commit(struct sched_cluster *c, bool on);

/* sched_cluster_set_dra_commit: a placed pod's Reserve and PreBind run in the world (its claims
 * allocated and reserved there, so the next cycles see the devices taken), as in simulations;
 * serve turns it on and writes the same to the API. */
void sched_cluster_set_dra_commit(struct sched_cluster *c, bool on);

/* sched_dra_delegates: a DeviceClass stands for the extended resource (its
 * extendedResourceName, or deviceclass.resource.kubernetes.io/<class>): NodeResourcesFit leaves
 * it to DynamicResources on a node whose allocatable lacks it (shouldDelegateResourceToDRA).
 * Valid after commit. */
bool sched_dra_delegates(const struct sched_dra *w, const char *resource);

/* sched_dra_extended_totals: NodeResourcesFit's figures for an extended resource a DeviceClass
 * serves, on a node whose allocatable lacks it (calculateDRAResourceTotals): *total the devices
 * of the node's slices the class accepts, *allocated those of them any claim holds now (the
 * claims the world's Reserve allocated included). Both 0 when no class serves the resource, or
 * when a selector cannot be evaluated on one of them. The devices of a node are selected once
 * per commit (by resource and node name; their use is counted each call). Returns 0, or
 * -ENOMEM (both 0). */
int sched_dra_extended_totals(struct sched_dra *w, const char *resource,
                              const struct kube_node *node, int64_t *total, int64_t *allocated);

/* The objects, borrowed. Claims from files come in input order; so do pods. */
int sched_dra_add_class(struct sched_dra *w, const struct kube_device_class *c);
int sched_dra_add_slice(struct sched_dra *w, const struct kube_resource_slice *s);
int sched_dra_add_taint_rule(struct sched_dra *w, const struct kube_device_taint_rule *r);
int sched_dra_add_claim(struct sched_dra *w, const struct kube_resource_claim *c);
int sched_dra_add_template(struct sched_dra *w, const struct kube_resource_claim_template *t);

/* A pod as the plugin reads it. */
struct sched_dra_pod_in {
    const char *namespace_, *name, *uid;
    const struct kube_pod_resource_claim *claims; /* spec.resourceClaims */
    size_t nclaims;
    const struct kube_pod *pod;            /* containers' requests (extended resources) */
    const struct kube_resources *requests; /* the pod's requests (kube_pod_requests) */
    const char *extended_claim;            /* status.extendedResourceClaimStatus's claim, NULL */
    bool bound;                            /* spec.nodeName set */
};

/* sched_dra_add_pod: every pod of the input, bound or pending, in input order (borrowed).
 * At commit, the pods naming a ResourceClaimTemplate without a status entry get their claim
 * as the resource-claim controller makes it. */
int sched_dra_add_pod(struct sched_dra *w, const struct sched_dra_pod_in *p);

/* sched_dra_pod_class_demand: how many devices pod p's claims ask of the DeviceClass serving
 * the extended resource (the class sched_dra_extended_totals counts by), for gpusched's own
 * GPUPlacement score: per request whose class it is, an ExactCount request's count, an All
 * request INT64_MAX (every device it matches), a firstAvailable request its first
 * subrequest's; admin-access requests and claims already allocated count 0. 0 when no class
 * serves the resource. Valid after commit. */
int64_t sched_dra_pod_class_demand(struct sched_dra *w, const struct sched_dra_pod_in *p,
                                   const char *resource);

/* sched_dra_pod_lookup: the pod added as ns/name (the last one of that name), NULL. */
const struct sched_dra_pod_in *sched_dra_pod_lookup(const struct sched_dra *w, const char *ns,
                                                    const char *name);

/* sched_dra_commit builds what the plugin reads from the objects added: the patched slices
 * and the allocator's inventory, the extended-resource mapping, the compiled selectors, the
 * template claims, the devices allocated claims hold. Call again after adding objects.
 * Returns 0 or -ENOMEM (err says). */
int sched_dra_commit(struct sched_dra *w, struct err *err);

/* ---- one pod's cycle ---- */

enum sched_dra_code {
    SCHED_DRA_OK = 0,
    SCHED_DRA_SKIP,          /* nothing to do for this pod (PreFilter: Skip) */
    SCHED_DRA_UNSCHEDULABLE, /* UnschedulableAndUnresolvable, with a reason */
    SCHED_DRA_ERROR,         /* an error for the whole attempt, with its message */
};

struct sched_dra_pod;

/* sched_dra_preenqueue: NULL when the pod may be queued, else why it waits (a missing claim,
 * "pod "ns/name": ResourceClaim not created yet", a claim being deleted or not the pod's); the
 * text lives in w until the next call. */
const char *sched_dra_preenqueue(struct sched_dra *w, const struct sched_dra_pod_in *p);

/* sched_dra_prefilter starts the pod's cycle: *out (free with sched_dra_pod_free) or NULL with
 * SCHED_DRA_SKIP. UNSCHEDULABLE and ERROR put the message in msg. -ENOMEM. */
int sched_dra_prefilter(struct sched_dra *w, const struct sched_dra_pod_in *p,
                        struct sched_dra_pod **out, char *msg, size_t msgsize);
void sched_dra_pod_free(struct sched_dra_pod *ps);

/* sched_dra_filter is the Filter on node: OK, UNSCHEDULABLE (reason in msg: "cannot allocate
 * all claims", "resourceclaim not available on the node", ...) or ERROR (msg). -ENOMEM. */
int sched_dra_filter(struct sched_dra_pod *ps, const struct kube_node *node, char *msg,
                     size_t msgsize);

/* sched_dra_score is the Score on a node that passed the Filter (before normalisation: the
 * framework scales the highest to 100). */
int64_t sched_dra_score(struct sched_dra_pod *ps, const struct kube_node *node);

/* sched_dra_reserve commits the pod's claims on node (Reserve and PreBind): allocations,
 * reservations, the claim of its extended resources created. -ENOMEM, or a PreBind error
 * (SCHED_DRA_ERROR, msg) such as v1.37.2's "nil or empty request mappings" one. */
int sched_dra_reserve(struct sched_dra_pod *ps, const struct kube_node *node, char *msg,
                      size_t msgsize);

/* ---- binding conditions (DRADeviceBindingConditions, on from v1.36) ---- */

/* DynamicResourcesArgs.bindingTimeout's default */
#define SCHED_DRA_BINDING_TIMEOUT_MS 600000

enum sched_dra_binding {
    SCHED_DRA_BINDING_READY,   /* no result waits for binding conditions */
    SCHED_DRA_BINDING_PENDING, /* some are not met yet (or the claim is not allocated) */
    SCHED_DRA_BINDING_FAILED,  /* a bindingFailureConditions condition is True */
    SCHED_DRA_BINDING_TIMEOUT, /* not ready, allocationTimestamp + timeout before now */
};

/* sched_dra_binding_state is kube-scheduler v1.37.2's isClaimReadyForBinding, then, when the
 * claim is not ready, isClaimTimeout, for claim c at wall time now_ms (ms since the epoch)
 * with binding timeout timeout_ms: every allocated result with bindingConditions needs its
 * device's entry in status.devices with each of them True; a bindingFailureConditions
 * condition True fails it. msg gets "device binding failed: claim=NAME, reason=R,
 * message="M"" or "device binding timeout: claim=NAME" ("" otherwise). Pure. */
enum sched_dra_binding sched_dra_binding_state(const struct kube_resource_claim *c, int64_t now_ms,
                                               int64_t timeout_ms, char *msg, size_t msgsize);

/* sched_dra_set_binding_timeout: the bindingTimeout (ms; 0: the default) of the profile
 * whose cycles follow (the framework sets it at each PreFilter from the pod's profile).
 * Filter finds an allocated input claim whose devices' binding failed or timed out
 * unavailable on every node ("resourceclaim not available on the node"; explain says why),
 * and PostFilter may deallocate it; "now" is the wall clock at each Filter, as
 * kube-scheduler's time.Now(). sched_dra_now_ms is the wall clock in ms. */
void sched_dra_set_binding_timeout(struct sched_dra *w, int64_t timeout_ms);
int64_t sched_dra_now_ms(void);

/* sched_dra_binding_due: the earliest wall time (ms) at which an allocated input claim whose
 * devices' binding is pending times out with timeout_ms (0: the default), 0 when none: the
 * Filter's answer changes then (serve rebuilds its world). */
int64_t sched_dra_binding_due(const struct sched_dra *w, int64_t timeout_ms);

/* sched_dra_postfilter: what the plugin's PostFilter does when no node fits: deallocates one
 * claim that is not available anywhere (or deletes the pod's stale extended-resource claim);
 * its message ("" when it did nothing) goes into msg. The world changes when ps is freed
 * (the cycle's end): preemption's dry run, in the same cycle, filters with the claims and
 * devices as PreFilter found them, as kube-scheduler's cycle state does. */
int sched_dra_postfilter(struct sched_dra_pod *ps, char *msg, size_t msgsize);

/* sched_dra_release_pod: the pod is gone (a preemption victim): its reservations go, a claim
 * no longer reserved that the scheduler allocated is deallocated, the claims it owns deleted,
 * as the resource-claim controller and the garbage collector do. */
void sched_dra_release_pod(struct sched_dra *w, const char *ns, const char *name, const char *uid);

/* ---- what the pod got ---- */

/* One device of one claim, for simulate -o json's "claims". */
struct sched_dra_device_out {
    const char *claim_namespace, *claim_name;
    const char *request; /* as status.allocation names it: "req" or "req/sub" */
    const char *driver, *pool, *device;
    /* a share of a device with allowMultipleAllocations (its result has a shareID), and the
     * capacity it consumes (consumedCapacity; none when the device declares no capacity) */
    bool shared;
    const struct dra_consumed *consumed;
    size_t nconsumed;
};

/* sched_dra_pod_devices lists the devices of the pod's claims (spec order, then its
 * extended-resource claim) as they are now; *out from the world's memory, valid until the
 * world changes. */
int sched_dra_pod_devices(struct sched_dra *w, const struct sched_dra_pod_in *p,
                          const struct sched_dra_device_out **out, size_t *n);

/* One device of a pod's claims whose binding conditions kube-scheduler's PreBind waits for. */
struct sched_dra_binding_wait {
    const char *claim_namespace, *claim_name;
    const char *driver, *pool, *device;
    const char *const *conditions; /* its bindingConditions not True yet */
    size_t nconditions;
};

/* sched_dra_pod_binding_waits lists the devices of the pod's claims (those
 * sched_dra_pod_devices lists) that kube-scheduler v1.37.2's PreBind would wait for before the
 * bind (hasBindingConditions, then isPodReadyForBinding polled until bindingTimeout), with
 * DRADeviceBindingConditions and DRAResourceClaimDeviceStatus on (none otherwise): every
 * device with bindingConditions of a claim the world allocated (nothing reports them yet),
 * and, of an input claim allocated whose binding is not ready at wall time now_ms with
 * timeout_ms (0: the default; sched_dra_binding_state), the devices whose conditions are not
 * all True, with those conditions. *out (NULL when *n is 0) and *conds (what out's conditions
 * of input claims point into) are malloc'd: the caller frees both with free(); the strings are
 * the world's, valid until it changes. 0 or -ENOMEM. */
int sched_dra_pod_binding_waits(struct sched_dra *w, const struct sched_dra_pod_in *p,
                                int64_t now_ms, int64_t timeout_ms,
                                struct sched_dra_binding_wait **out, size_t *n,
                                const char ***conds);

/* The claim of a pod's extended resources that Reserve made in the world (PreBind creates it
 * in the API: serve writes it): its requests and the pod's request mappings
 * (status.extendedResourceClaimStatus), in the world's memory. */
struct sched_dra_ext_request {
    const char *name, *device_class; /* "container-N-request-M", its class */
    int64_t count;                   /* ExactCount */
};
struct sched_dra_ext_mapping {
    const char *container, *resource, *request;
};
struct sched_dra_ext_out {
    const char *claim_name; /* the world's name for it (the API server names the real one) */
    const struct sched_dra_ext_request *requests;
    size_t nrequests;
    const struct sched_dra_ext_mapping *mappings;
    size_t nmappings;
};

/* sched_dra_pod_extended: 1 and *out when the world holds a claim of the pod's extended
 * resources made in Reserve (not read from the input), 0 when none; valid until the world
 * changes. */
int sched_dra_pod_extended(const struct sched_dra *w, const char *ns, const char *name,
                           const char *uid, struct sched_dra_ext_out *out);

/* sched_dra_pod_unreserved_extended: 1 and *out when a PreBind that failed (SCHED_DRA_ERROR of
 * sched_dra_reserve) had created the claim of the pod's extended resources, which its
 * Unreserve deleted again (the world keeps it as deleted: the latest one), 0 when none; valid
 * until the world changes. */
int sched_dra_pod_unreserved_extended(const struct sched_dra *w, const char *ns, const char *name,
                                      const char *uid, struct sched_dra_ext_out *out);

/* sched_dra_pod_deleted_extended: the name of the pod's extended-resource claim read from the
 * input that the world deleted (PostFilter's "deletion of ResourceClaim completed": a claim
 * left from an earlier attempt), NULL when none; valid until the world changes. */
const char *sched_dra_pod_deleted_extended(const struct sched_dra *w, const char *ns,
                                           const char *name, const char *uid);

/* ---- the devices, as `gpusched devices` lists them (valid after commit) ---- */

/* sched_dra_inventory: the slices as the allocator reads them (in the order added, taints of
 * DeviceTaintRules added to their devices), valid until the next commit. */
const struct dra_inventory *sched_dra_inventory(const struct sched_dra *w);

/* sched_dra_class: the DeviceClass of that name as requests see it, NULL when none. */
const struct dra_class *sched_dra_class(const struct sched_dra *w, const char *name);

/* sched_dra_selector: expr compiled as the world compiles every selector (kube-scheduler's
 * environment); a compile error is in ->compile_error. Lives until the next commit; NULL
 * when out of memory. */
const struct dra_selector *sched_dra_selector(struct sched_dra *w, const char *expr);

/* sched_dra_device_matches checks device d of slice s as a request of class (NULL: none) with
 * the selectors sels would: the class's selectors, then sels, each evaluated exactly as the
 * allocator does (dra_selectors_match). 1, 0, or -1 with the allocator's message in msg
 * (sels' failures name no claim). */
int sched_dra_device_matches(struct sched_dra *w, const struct dra_class *class,
                             const struct dra_selector *sels, size_t nsels,
                             const struct dra_slice *s, const struct dra_device *d, char *msg,
                             size_t msgsize);

/* sched_dra_generated_name is the name the API server gives generateName, deterministic as
 * the differential test's oracle makes it (docs/testing.md, "Generated names"): base cut to
 * 58 characters plus five characters from a hash of namespace, base and attempt; taken()
 * says whether a name is in use. out must hold 64 bytes. */
void sched_dra_generated_name(const char *ns, const char *generate_name,
                              bool (*taken)(void *ctx, const char *name), void *ctx, char *out);

/* sched_dra_template_claim_base is the resource-claim controller's generateName for a pod's
 * claim from a template ("<pod>-<claim>-", cut in proportion beyond 57 characters). out must
 * hold 64 bytes. */
void sched_dra_template_claim_base(const char *pod, const char *claim, char *out);

/* sched_dra_device_use: 1 when a claim holds the device (driver, pool, device) exclusively, 2
 * when shares of it are allocated (allowMultipleAllocations), 0 when it is free or unknown;
 * as the scheduled pods left the world. */
int sched_dra_device_use(struct sched_dra *w, const char *driver, const char *pool,
                         const char *device);

/* ---- explain: why a node has no devices for the pod ---- */

/* sched_dra_set_why turns on the recorder explain uses: Filter, where the allocator finds no
 * solution on a node, then asks dra_why what each device is to each request (and re-runs the
 * allocator without each constraint), kept until the pod's cycle ends. Off (the default), the
 * Filter does nothing more. */
void sched_dra_set_why(struct sched_dra *w, bool on);

/* sched_dra_why: the recorder's text for node (lines ending in '\n'), or NULL; owned by ps. */
const char *sched_dra_why(struct sched_dra_pod *ps, const char *node);

/* what sched_dra_why_text reads: dra_allocate's arguments, and who holds a device */
struct sched_dra_why_in {
    const struct dra_features *f;
    const char *node;
    struct dra_pools *pools;
    const struct dra_state *state;
    const struct dra_claim *claims;
    size_t nclaims;
    const struct dra_ops *ops;
    struct dra_scratch *scratch;
    /* holder writes "ns/claim (pod ns/name)" for a device id held by other claims */
    void (*holder)(void *ctx, uint32_t id, char *out, size_t size);
    void *ctx;
};

/* sched_dra_why_text (dynamicresources_why.c) is the recorder's text for one node where
 * dra_allocate found nothing: per request the devices that match and why each matching one
 * cannot be had (allocated to whom, a taint, counters, capacity), the pools that are
 * incomplete or invalid, which constraint stands in the way. Malloc'd (free), NULL when out of
 * memory. */
char *sched_dra_why_text(const struct sched_dra_why_in *in);

#endif
