/* dra_alloc.h - the structured allocator of Dynamic Resource Allocation, as kube-scheduler
 * v1.37.2 runs it: k8s.io/dynamic-resource-allocation v0.37.2 structured/internal/incubating,
 * the implementation its default feature gates select (partitionable devices, consumable
 * capacity, binding conditions and fractional capacity ranges are beta and on). Pure: no I/O,
 * no Kubernetes decoder types; the caller describes slices, classes and claims in the plain
 * structures below and evaluates CEL selectors and node selectors through callbacks.
 *
 * The search is the incubating allocator's: pools sorted by driver and pool name (pools with
 * binding conditions last), slices of a pool by name, devices in slice order; claims, their
 * requests and each request's devices in order, each device picked after the previous one of
 * its request (combinations, not permutations), subrequests of firstAvailable tried in order
 * with everything after them; the first complete solution wins. Messages are the Go ones. */
#ifndef SCHED_DRA_ALLOC_H
#define SCHED_DRA_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/quantity.h"

/* AllocationResultsMaxSize: the devices one claim may get */
#define DRA_RESULTS_MAX 32
/* FirstAvailableDeviceRequestMaxSize (also what DynamicResources' Score counts from) */
#define DRA_FIRST_AVAILABLE_MAX 8
/* the claims one Allocate call may take (a pod's claims and its extended-resource claim) */
#define DRA_CLAIMS_MAX 64

/* Which allocator features are on (structured.Features); dra_features_default() is v1.37,
 * dra_features_for() an older release's defaults. The last six are not the allocator's
 * features but what else changed across releases: the wording of a CEL runtime error, which
 * slices a node sees, capacity checks, distinctAttribute, and two parts of the DynamicResources plugin (read by
 * sched/dynamicresources.c). */
struct dra_features {
    bool admin_access, prioritized_list, partitionable, device_taints, binding_and_status,
        consumable_capacity, fractional_capacity_range, compatibility_groups;
    bool cel_error_names_device;    /* 1.37: "selector #0 on device D/P/X: CEL runtime
                                       error: " with cel.EnhanceRuntimeError's hint; before,
                                       neither */
    bool counter_slices_everywhere; /* 1.36: a slice with sharedCounters is relevant on
                                       every node (its pool may look incomplete there) */
    bool capacity_errors_fail;      /* 1.37: a capacity check's error fails the attempt, and
                                       All checks a device's capacity alone; 1.36 skipped the
                                       device, and All counted what it holds */
    bool distinct_by_request;       /* 1.36: distinctAttribute kept one value per request
                                       name, so a request's devices could share a value */
    bool extended_resource;         /* DRAExtendedResource: DeviceClass extendedResourceName */
    bool device_taint_rules;        /* DRADeviceTaintRules: DeviceTaintRule objects apply */
};

/* ---- inventory: what ResourceSlices publish (DeviceTaintRules already applied) ---- */

enum dra_attr_type {
    DRA_ATTR_INT,
    DRA_ATTR_BOOL,
    DRA_ATTR_STRING,
    DRA_ATTR_VERSION,
    DRA_ATTR_OTHER
};

struct dra_attr {
    const char *name; /* as published: "productName" or "domain/id" */
    enum dra_attr_type type;
    int64_t i;
    bool b;
    const char *s; /* string or version */
};

/* CapacityRequestPolicy */
struct dra_cap_policy {
    bool has_default;
    kube_nano def;
    const kube_nano *valid; /* ValidValues, ascending */
    size_t nvalid;
    bool has_range; /* ValidRange set */
    bool has_min, has_max, has_step;
    kube_nano min, max, step;
};

struct dra_capacity {
    const char *name;
    kube_nano value;
    const struct dra_cap_policy *policy; /* NULL: none */
};

struct dra_counter {
    const char *name;
    kube_nano value;
};

struct dra_counter_set {
    const char *name;
    const struct dra_counter *counters;
    size_t ncounters;
};

/* DeviceCounterConsumption */
struct dra_consumption {
    const char *counter_set;
    const struct dra_counter *counters;
    size_t ncounters;
};

struct dra_taint {
    const char *key, *value, *effect; /* effect as written: NoSchedule, NoExecute, None, ... */
};

/* node selection of a slice or (perDeviceNodeSelection) of a device: node_name, all_nodes or
 * the opaque NodeSelector the caller's node_selector_matches understands; none set: nothing */
struct dra_node_sel {
    const char *node_name;
    bool all_nodes;
    const void *selector;
};

struct dra_device {
    const char *name;
    uint32_t id; /* the caller's dense id of (driver, pool, name): allocation state is by id */
    const struct dra_attr *attrs;
    size_t nattrs;
    const struct dra_capacity *caps;
    size_t ncaps;
    const struct dra_consumption *consumes;
    size_t nconsumes;
    const struct dra_taint *taints;
    size_t ntaints;
    struct dra_node_sel sel; /* perDeviceNodeSelection */
    bool has_allow_multiple, allow_multiple;
    bool binds_to_node;
    size_t nbinding_conditions;
    bool compat_groups; /* a consumption declares compatibilityGroups (alpha) */
    const void *view;   /* the caller's view of the device for CEL (passed back to eval) */
};

struct dra_slice {
    const char *name, *driver, *pool;
    int64_t generation, count; /* pool.generation, pool.resourceSliceCount */
    struct dra_node_sel sel;
    bool per_device; /* perDeviceNodeSelection */
    const struct dra_device *devices;
    size_t ndevices;
    const struct dra_counter_set *counter_sets; /* sharedCounters */
    size_t ncounter_sets;
};

struct dra_inventory {
    const struct dra_slice *slices;
    size_t nslices;
    size_t ndevice_ids; /* ids are < this */
};

/* ---- the allocated state other claims hold ---- */

struct dra_consumed {
    const char *name;
    kube_nano q;
};

/* per device id: allocated exclusively; allocated as shares (AllocatedSharedDeviceIDs, a
 * count); the capacity consumed by shares (AggregatedCapacity, present or not) */
struct dra_state {
    const uint8_t *allocated;
    const uint32_t *shares;
    const struct dra_consumed *const *consumed; /* NULL entry: no AggregatedCapacity entry */
    const uint32_t *nconsumed;
};

/* ---- what is asked for ---- */

struct dra_selector {
    const char *expr;
    const void *program;       /* the caller's compiled program */
    const char *compile_error; /* non-NULL: the expression does not compile (this text) */
};

struct dra_class {
    const char *name;
    const struct dra_selector *sels;
    size_t nsels;
};

struct dra_toleration {
    const char *key, *op, *value, *effect; /* op "" is Equal; effect "" matches every effect */
};

struct dra_capreq {
    const char *name;
    kube_nano q;
};

enum dra_mode { DRA_MODE_EXACT, DRA_MODE_ALL, DRA_MODE_OTHER };

/* an ExactDeviceRequest or one DeviceSubRequest */
struct dra_request {
    const char *name;
    const char *class_name;        /* "" when missing */
    const struct dra_class *class; /* NULL: no such class */
    const struct dra_selector *sels;
    size_t nsels;
    enum dra_mode mode;
    const char *mode_str; /* as written, for the unsupported-mode message */
    int64_t count;
    bool has_admin_access, admin_access;
    const struct dra_toleration *tols;
    size_t ntols;
    bool has_capacity; /* capacity set (even empty) */
    const struct dra_capreq *caps;
    size_t ncaps;
    bool has_derived; /* derivedAttributes (alpha) */
};

/* a DeviceRequest: exactly (nsubs 1, !first_available) or firstAvailable subrequests */
struct dra_claim_request {
    const char *name;
    bool first_available;
    const struct dra_request *subs;
    size_t nsubs;
};

enum dra_constraint_kind { DRA_MATCH, DRA_DISTINCT, DRA_CONSTRAINT_OTHER };

struct dra_constraint {
    enum dra_constraint_kind kind;
    const char *attr; /* fully qualified */
    const char *const *requests;
    size_t nrequests;
};

struct dra_claim {
    const char *ns, *name;
    const struct dra_claim_request *requests;
    size_t nrequests;
    const struct dra_constraint *constraints;
    size_t nconstraints;
};

/* ---- callbacks ---- */

struct dra_ops {
    /* eval evaluates selector sel against device d of driver: 1 match, 0 no match, -1 a
     * runtime error whose text (err.Error() of DeviceMatches) goes into msg */
    int (*eval)(void *ctx, const struct dra_selector *sel, const struct dra_device *d,
                const char *driver, char *msg, size_t msgsize);
    /* node_selector_matches: does the node (the caller's, in ctx) match the NodeSelector
     * selector: 1, 0, or -1 with msg when the selector cannot be parsed */
    int (*node_selector_matches)(void *ctx, const void *selector, char *msg, size_t msgsize);
    void *ctx;
};

/* ---- pools of one node (GatherPools) ---- */

struct dra_pool {
    const char *driver, *pool;
    bool incomplete, invalid;
    char *invalid_reason; /* owned */
    bool binding_conditions;
    const struct dra_slice **targeting; /* device slices relevant for the node, by name */
    size_t ntargeting;
    const struct dra_slice **not_targeting; /* the pool's other device slices */
    size_t nnot_targeting;
    const struct dra_counter_set **sets; /* the pool's counter sets (first of each name) */
    size_t nsets;
};

struct dra_pools {
    struct dra_pool *pools;
    size_t n;
};

/* dra_pools_gather is GatherPools for one node (node_name; the node selectors are evaluated
 * through ops): every pool with devices the node can reach, incomplete and invalid ones marked.
 * for_node lists the slices to consider (those whose nodeName is the node or empty, in any
 * order); NULL takes them from inv, which also serves the check of incomplete pools.
 * Returns 0, -ENOMEM, or -EINVAL with msg (a node selector that cannot be parsed: Allocate's
 * "gather pool information: ..." error). Free with dra_pools_free. */
int dra_pools_gather(const struct dra_inventory *inv, const struct dra_slice *const *for_node,
                     size_t nfor_node, const char *node_name, const struct dra_features *f,
                     const struct dra_ops *ops, struct dra_pools *out, char *msg, size_t msgsize);
void dra_pools_free(struct dra_pools *p);

/* ---- the result ---- */

struct dra_result {
    const char *request;        /* the request, or the chosen subrequest */
    const char *parent_request; /* the request holding that subrequest, NULL when none */
    const struct dra_pool *pool;
    const struct dra_slice *slice;
    const struct dra_device *device;
    bool admin_access;               /* adminAccess set in the result */
    bool shared;                     /* allocated as a share (a ShareID) */
    struct dra_consumed consumed[8]; /* the capacity a share consumes */
    size_t nconsumed;
    const struct dra_request *req; /* the request it was allocated for (its tolerations) */
};

struct dra_claim_result {
    struct dra_result results[DRA_RESULTS_MAX];
    size_t n;
    /* the allocation's node selector: node-local (the node) when a device's slice or the
     * device names a node or binds to it; else the terms of the node selectors involved
     * (sels, de-duplicated by the caller when written); none: available everywhere */
    bool node_local;
    const void *sels[DRA_RESULTS_MAX];
    size_t nsels;
    /* selected subrequest per request (-1 for exactly requests) */
    int selected[DRA_RESULTS_MAX];
};

enum dra_alloc_status {
    DRA_ALLOCATED = 0, /* every claim allocated */
    DRA_NOT_ALLOCATED, /* no solution on this node ("cannot allocate all claims") */
    DRA_NODE_FAILED,   /* ErrFailedAllocationOnNode: unschedulable with msg */
    DRA_FAILED,        /* an error for the whole attempt (msg): CEL, classes, requests */
};

/* Scratch state one Allocate uses, kept by the caller between calls (per thread). */
struct dra_scratch;
struct dra_scratch *dra_scratch_new(void);
void dra_scratch_free(struct dra_scratch *s);

/* dra_allocate is Allocator.Allocate for one node: claims[0..nclaims) (none allocated yet)
 * against the node's pools (dra_pools_gather) and the state of what is allocated already.
 * On DRA_ALLOCATED out[i] holds claim i's devices. Returns the status (>= 0) or -ENOMEM;
 * msg gets the message of DRA_NODE_FAILED and DRA_FAILED. node_name is the node (devices of a
 * slice with perDeviceNodeSelection name theirs). */
int dra_allocate(const struct dra_features *f, const char *node_name, struct dra_pools *pools,
                 const struct dra_state *state, const struct dra_claim *claims, size_t nclaims,
                 const struct dra_ops *ops, struct dra_scratch *scratch,
                 struct dra_claim_result *out, char *msg, size_t msgsize);

/* dra_selectors_match is the allocator's selectorsMatch on one device d of driver/pool: sels
 * in order, stopping at the first that does not hold. 1 all hold, 0 one does not, -1 one
 * cannot be evaluated, with msg worded as f's release words it ("selector #1 on device
 * D/P/X: CEL runtime error: ...", after "class C: " when class_name is set, else "claim
 * NS/N: " when claim_name is; neither: no prefix). The allocator checks a request's device
 * with its class's selectors, then the request's, through this. */
int dra_selectors_match(const struct dra_features *f, const struct dra_ops *ops,
                        const char *class_name, const char *claim_ns, const char *claim_name,
                        const struct dra_selector *sels, size_t nsels, const struct dra_device *d,
                        const char *driver, const char *pool, char *msg, size_t msgsize);

/* dra_features_default is v1.37.2's: every feature but compatibility groups (alpha). */
struct dra_features dra_features_default(void);

/* dra_features_for is kube-scheduler 1.MINOR's default feature gates as the allocator and the
 * plugin see them: 1.34 and 1.35 admin access and prioritized lists only; 1.36 adds
 * partitionable devices, device taints, binding conditions, consumable capacity and extended
 * resources; 1.37 fractional capacity ranges and DeviceTaintRules. Before 1.34 (DRA off by
 * default) and after 1.37: 1.37's. */
struct dra_features dra_features_for(int minor);

/* dra_enhance_runtime_error is cel.EnhanceRuntimeError on a message (in place, bounded):
 * "no such key:" errors get the hint about optional chaining. */
void dra_enhance_runtime_error(char *msg, size_t size);

/* dra_tolerates is resourceclaim.ToleratesTaint. */
bool dra_tolerates(const struct dra_toleration *t, const struct dra_taint *taint);

#endif
