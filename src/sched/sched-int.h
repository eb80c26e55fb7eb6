/* sched-int.h - the types the scheduling core's modules share (not for callers); the
 * functions are declared by the module's own -int.h (intern-int.h, cluster-int.h,
 * usage-int.h, compile-int.h, framework-int.h, cycle-int.h, reference-int.h, message-int.h,
 * schedule-int.h, profile-int.h) and, for the plugins, by plugins-int.h.
 *
 * Strings (label keys and values, taint keys and values, node names, resource names) are
 * interned to dense uint32 ids. Nodes live in slots (one per node name ever seen, so pods of a
 * missing node have somewhere to count); present nodes are listed in order[]. Nodes with the
 * same unschedulable flag, taints and values of the "interesting" label keys (those some pod
 * has referenced) share a class: static filters and static scores run once per class. */
#ifndef SCHED_SCHED_INT_H
#define SCHED_SCHED_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "kube/object.h"
#include "sched/dynamicresources.h"
#include "sched/profile.h"

#define SCHED_NOID UINT32_MAX
#define SCHED_MAX_POD_SCALARS 24
#define SCHED_DEFAULT_MILLI_CPU 100
#define SCHED_DEFAULT_MEMORY (200LL * 1024 * 1024)
#define SCHED_DRA_SCORE_WEIGHT 2 /* DynamicResources' Score weight (default_plugins.go) */

/* ---- interning ---- */
struct sched_intern {
    char **strs; /* id -> string (in arena: kept until the table is released) */
    uint32_t n, cap;
    /* the strings that are base-10 int64s (Go ParseInt), a few among many: their ids
     * (ascending, as ids are handed out) and values; sched_intern_int reads them */
    uint32_t *int_ids;
    int64_t *int_vals;
    uint32_t nints, cints;
    uint32_t *slots; /* open addressing: id+1, 0 empty */
    uint32_t nslots;
    struct arena arena; /* the strings, packed (one malloc each cost 32 bytes or more) */
};

/* ---- reasons (the strings counted in the FailedScheduling histogram) ---- */
enum {
    SCHED_R_UNSCHEDULABLE = 0,
    SCHED_R_NODE_NAME,
    SCHED_R_AFFINITY,
    SCHED_R_AFFINITY_PREFILTER,
    SCHED_R_PORTS,
    SCHED_R_TOO_MANY_PODS,
    SCHED_R_CPU,
    SCHED_R_MEMORY,
    SCHED_R_EPHEMERAL,
    SCHED_R_TAINT_GENERIC,
    SCHED_R_NOT_HELPFUL,
    SCHED_R_NO_VICTIMS,
    SCHED_R_AFFINITY_CONFLICT,
    SCHED_R_NOT_CHECKED,
    SCHED_R_SPREAD,
    SCHED_R_SPREAD_LABEL,
    SCHED_R_FIXED_COUNT
};

/* the plugins, in filter order */
enum sched_plugin {
    SCHED_PL_NONE = 0,
    SCHED_PL_UNSCHEDULABLE,
    SCHED_PL_NODE_NAME,
    SCHED_PL_TAINT,
    SCHED_PL_AFFINITY,
    SCHED_PL_PORTS,
    SCHED_PL_FIT,
    SCHED_PL_VOLUME_RESTRICTIONS, /* VolumeRestrictions: ReadWriteOncePod */
    SCHED_PL_VOLUME_LIMITS,       /* NodeVolumeLimits: CSI attach limits */
    SCHED_PL_VOLUME_BINDING,      /* VolumeBinding: reason = SCHED_VB_* bits */
    SCHED_PL_VOLUME_ZONE,         /* VolumeZone */
    SCHED_PL_SPREAD,              /* PodTopologySpread (podtopologyspread.c) */
    SCHED_PL_INTERPOD,            /* InterPodAffinity (interpodaffinity.c) */
    SCHED_PL_DRA,                 /* DynamicResources (dynamicresources.c) */
    SCHED_PL_SKIPPED,             /* not a plugin: node sampling stopped before this node */
};

/* ---- node label / taint storage ---- */
struct sched_idlabel {
    uint32_t key, value;
};

/* sched_label_find returns the entry for key in l (n labels sorted by key id), or NULL: the one
 * lookup of node, pod and namespace labels (filters, podtopologyspread.c, interpodaffinity.c). */
static inline const struct sched_idlabel *sched_label_find(const struct sched_idlabel *l,
                                                           uint32_t n, uint32_t key)
{
    uint32_t lo = 0, hi = n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (l[mid].key < key)
            lo = mid + 1;
        else if (l[mid].key > key)
            hi = mid;
        else
            return &l[mid];
    }
    return NULL;
}

struct sched_idtaint {
    uint32_t key, value;
    uint8_t effect; /* enum kube_taint_effect */
};

struct sched_scalar {
    uint32_t rid; /* interned resource name */
    int64_t alloc, req;
};

struct sched_port {
    uint32_t ip; /* interned host IP, "0.0.0.0" normalised */
    uint8_t proto;
    int32_t port;
    /* in a node's list: the entry is in the node's HostPortInfo. That is a set, not a count
     * (NodeInfo.updateUsedPorts): removing a pod removes its ports even when another pod of
     * the node holds the same one, and kube-scheduler's NodePorts then sees it free */
    bool used;
};

/* sched_port_find returns the index of the entry of ports[0..n) in use that is x's (IP,
 * protocol, port), or n when there is none */
static inline uint32_t sched_port_find(const struct sched_port *ports, uint32_t n,
                                       const struct sched_port *x)
{
    uint32_t j;

    for (j = 0; j < n; j++)
        if (ports[j].used && ports[j].ip == x->ip && ports[j].proto == x->proto &&
            ports[j].port == x->port)
            break;
    return j;
}

struct sched_class {
    uint32_t hash;
    uint32_t refs; /* nodes in the class; 0 = free entry */
    bool unschedulable;
    struct sched_idtaint *taints;
    uint32_t ntaints;
    struct sched_idlabel *labels; /* projection on interesting keys, sorted by key id */
    uint32_t nlabels;
    uint32_t *taint_reason; /* per taint: reason id, SCHED_NOID until needed */
};

/* hot per-slot columns, read for every node of every cycle */
struct sched_hot {
    int64_t alloc_cpu, req_cpu, nz_cpu;
    int64_t alloc_mem, req_mem, nz_mem;
    int64_t alloc_eph, req_eph;
    int64_t alloc_gpu, req_gpu;
    int32_t alloc_pods, npods;
    int32_t min_prio; /* lowest priority among the node's pods (INT32_MAX when none) */
};

/* the few per-slot fields every cycle reads for every node, kept small and together */
struct sched_lite {
    uint32_t cls;      /* node class, SCHED_NOID when absent */
    uint32_t gen;      /* bumped on every change of usage or allocatable; never 0 */
    uint32_t name;     /* interned node name */
    uint32_t nports;   /* host ports in use */
    uint32_t portmask; /* SCHED_PORT_BIT of each host port in use: no shared bit, no conflict */
    uint32_t nnom;     /* pods nominated to this node (c->noms), held room for filters */
};

#define SCHED_PORT_BIT(port, proto) (1u << (((uint32_t)(port)*3u + (uint32_t)(proto)) & 31u))

/* The fast path's cache of NodeResourcesFit and the resource scores, one 32-bit entry per
 * node slot for each pod shape (request vector) recently scheduled: a 5,000-node cluster
 * keeps up to SCHED_MAX_SHAPES columns of them. An entry holds the low SCHED_DYN_GEN_BITS of
 * the slot's generation when it was filled (0 = empty), whether the shape fits
 * (SCHED_DYN_FITS) and, if so, the sum of the resource scores (LeastAllocated + Balanced +
 * GPU weight x GPUPlacement, at most 100 + 100 + 10 x 100 < 2^11). Generations only ever go
 * up; when their low bits come round to 0 the slot's entries are cleared in every column
 * (cluster.c, bump_gen), so an entry never matches a later state of its node. */
#define SCHED_DYN_GEN_BITS 20
#define SCHED_DYN_GEN_MASK ((1u << SCHED_DYN_GEN_BITS) - 1)
#define SCHED_DYN_FITS (1u << SCHED_DYN_GEN_BITS)
#define SCHED_DYN_SCORE_SHIFT (SCHED_DYN_GEN_BITS + 1)
#define SCHED_DYN_SCORE_MAX ((1 << (32 - SCHED_DYN_SCORE_SHIFT)) - 1)

#define SCHED_MAX_SHAPES 128
struct sched_shape {
    bool used;
    uint64_t last_use;
    int64_t cpu, mem, eph, nz_cpu, nz_mem;
    struct sched_scalar sc[SCHED_MAX_POD_SCALARS];
    uint32_t nsc;
    bool gpu_aware;
    uint32_t gpu_rid;
    uint64_t score_key; /* sched_profile_score_key of the profile the entries were filled for */
    uint32_t *dyn;      /* per slot, see SCHED_DYN_GEN_BITS */
};

struct sched_pod;
struct sched_nodeout;
struct sched_cverdict;

/* ---- inter-pod affinity terms (interpodaffinity_terms.c) ---- */
/* a label selector on interned ids (keys and values interned for good, so that labels added
 * later compare equal); ops are KUBE_OP_IN, NOT_IN, EXISTS, DOES_NOT_EXIST */
struct sched_lsel {
    bool present; /* false: a nil selector, which matches nothing */
    struct sched_creq *reqs;
    uint32_t nreqs; /* 0 and present: matches everything */
};

/* fwk.AffinityTerm: namespaces, selector, namespace selector, topology key */
struct sched_pterm {
    struct sched_lsel sel;
    struct sched_lsel nssel; /* a nil one matches no namespace */
    uint32_t *ns;            /* namespace name ids */
    uint32_t nns;
    uint32_t tkey;
    int32_t weight; /* preferred terms */
};

/* a pod's required and preferred affinity and anti-affinity terms */
struct sched_pterms {
    struct sched_pterm *aff_req, *anti_req, *aff_pref, *anti_pref;
    uint32_t naff_req, nanti_req, naff_pref, nanti_pref;
};

struct sched_ns { /* a Namespace object: name and labels (sorted by key id) */
    uint32_t name;
    struct sched_idlabel *labels;
    uint32_t nlabels;
};

struct sched_ipa;       /* a cycle's InterPodAffinity state (interpodaffinity.c) */
struct sched_ipa_index; /* its counts kept by the cluster (interpodaffinity_index.c) */

struct sched_slot {
    char *name;
    bool present;
    uint32_t order_index;         /* position in order[] when present */
    struct sched_idlabel *labels; /* every label, sorted by key id */
    uint32_t nlabels;
    struct sched_idtaint *taints; /* node order */
    uint32_t ntaints;
    bool unschedulable;
    struct sched_scalar *scalars; /* allocatable and requested scalar resources */
    uint32_t nscalars;
    struct sched_port *ports;
    uint32_t cports;
    struct sched_pod **pods;
    uint32_t npods, cpods;
    uint32_t *images; /* status.images names (ids, unique), imagelocality.c */
    uint32_t nimages;
};

/* a pod counted in the cluster: one allocation, the scalars, ports and "ns\0name" after it */
struct sched_pod {
    /* pointers and 64-bit members, then 32-bit ones, then the flags: no padding holes */
    struct sched_pod *hnext; /* hash chain */
    char *ns;                /* the interned namespace (c->strs) */
    char *name;              /* in the pod's block */
    uint64_t seq;            /* arrival order: stands for status.startTime (earlier = smaller) */
    int64_t cpu, mem, eph, nz_cpu, nz_mem;
    struct sched_scalar *scalars; /* req only */
    struct sched_port *ports;     /* .used not set */
    struct sched_idlabel *labels; /* the pod's labels, sorted by key id (in the pod's block) */
    /* inter-pod affinity: the pod affinity terms (NULL when none), malloc'ed */
    struct sched_pterms *terms;
    uint32_t *ipa_lpos; /* InterPodAffinity: the pod's position in the index's list of the pods of
                           each of its labels (by label), NULL until a list holds it */
    char **claims;      /* its PersistentVolumeClaims' names (one malloc block, NULL when
                                   none): VolumeRestrictions' ReadWriteOncePod rule; generic
                                   ephemeral volumes' claims included; then, in the same block,
                                   2 * ninline strings: its in-tree volumes CSI migration
                                   counts, as driver and "driver/handle" (NodeVolumeLimits) */
    uint32_t slot;
    uint32_t index_in_slot;
    int32_t priority;
    uint32_t sim_run;     /* sched_simulate: the run that placed it (0: none), at input_index */
    uint32_t input_index; /* (sched_simulate takes fewer than 2^32 pods) */
    uint32_t nscalars;
    uint32_t nports;
    uint32_t nsid; /* interned namespace */
    uint32_t nlabels;
    uint32_t aff_index; /* position in the cluster's aff_pods when terms != NULL */
    uint32_t nclaims;
    uint32_t ninline;
    bool assumed, terminating;
    bool by_preemption; /* DisruptionTarget=True, reason PreemptionByScheduler */
    bool marked;        /* sched_cluster_mark_preempted: our own preemption is deleting it;
                           survives updates of the pod until it is removed */
    bool nominated;     /* an entry of c->noms (a pending pod), not counted on its slot */
};

/* a PodDisruptionBudget as preemption reads it (cluster.c keeps them, defaultpreemption.c
 * counts) */
struct sched_pdb {
    char *ns, *name;
    struct kube_label_selector selector;
    int32_t disruptions_allowed;
    char **disrupted_pods;
    size_t ndisrupted_pods;
    struct arena arena; /* owns everything above */
};

struct sched_spread_sources; /* podtopologyspread.c */
struct sched_preempt_cache;  /* defaultpreemption.c */

struct sched_cluster {
    struct sched_intern strs;    /* labels, taints, names, resources, IPs */
    struct sched_intern reasons; /* reason strings, ids = SCHED_R_* first */
    uint32_t *reason_of_rid;     /* resource id -> "Insufficient <name>" reason id */
    uint32_t nreason_of_rid;

    struct sched_slot *slots;
    struct sched_hot *hot;
    struct sched_lite *lite;
    uint32_t nslots, cslots;
    uint32_t *slot_of_name; /* name id -> slot, grown with strs */
    uint32_t nslot_of_name;
    uint32_t *order; /* present node slots in node order */
    uint32_t norder;

    struct sched_class *classes;
    uint32_t nclasses, cclasses;
    uint32_t *class_slots; /* open addressing: class index + 1 */
    uint32_t nclass_slots;
    bool *interesting; /* by key id */
    uint32_t ninteresting;
    bool classes_dirty;

    struct sched_pod **noms; /* pods nominated to a node (slot): pending, not counted there */
    uint32_t nnoms, cnoms;
    struct sched_pdb *pdbs; /* PodDisruptionBudgets */
    uint32_t npdbs, cpdbs;

    struct sched_pod **pod_buckets; /* chained hash on key */
    uint32_t npods, nbuckets;
    uint64_t next_seq;

    uint32_t rid_gpu;
    uint32_t id_bind_all;             /* "0.0.0.0" */
    uint32_t id_empty;                /* "" */
    uint32_t key_unschedulable_taint; /* node.kubernetes.io/unschedulable */

    struct arena cp_arena; /* compiled pods (compile.c) */
    uint32_t sim_runs;     /* sched_simulate calls so far */
    struct sched_shape shapes[SCHED_MAX_SHAPES];
    uint32_t shape_slots; /* slots the dyn columns were sized for */
    uint64_t shape_clock;

    /* per-cycle scratch, reused so a cycle allocates nothing in the steady state */
    uint32_t *s_feas;
    uint32_t *s_feas_cls;
    int32_t *s_feas_score;
    int32_t *s_feas_aff;
    int64_t *s_cls_total;
    uint32_t *s_cls_stamp;
    uint32_t s_stamp;
    struct sched_nodeout *s_out;
    uint32_t *s_ties;
    uint8_t *s_inset;
    uint32_t s_cap;
    struct sched_cverdict *s_vc;
    uint8_t *s_vc_done;
    uint32_t s_vccap;

    struct sched_volumes *vol;               /* the volume objects (volumes.c) */
    struct sched_spread_sources *spread_src; /* Services and controllers, topology columns
                                                (podtopologyspread.c) */
    /* podtopologyspread.c's owner hook: the cluster frees spread_src without calling into it
     * (which reads the filters, which read the cluster) */
    void (*spread_src_free)(struct sched_spread_sources *);
    /* PodTopologySpread's counts of matching pods by node slot: called with +1 when a pod joins its
     * slot and -1 when it leaves (or turns terminating); NULL until it keeps counts */
    void (*spread_pod_hook)(struct sched_cluster *, const struct sched_pod *, int);
    uint64_t nodes_version; /* bumped by every node add, update and removal */
    /* InterPodAffinity: Namespace objects (cluster.c), the pods with pod affinity terms
     * (kube-scheduler's PodsWithAffinity) and its reason ids */
    struct sched_ns *nss;
    uint32_t nnss, cnss;
    struct sched_pod **aff_pods;
    uint32_t naff_pods, caff_pods;
    struct sched_ipa_index *ipa_idx; /* its counts, kept as pods and nodes change */
    uint32_t r_ipa_aff, r_ipa_anti, r_ipa_existing;
    /* ImageLocality (imagelocality.c): per image name id, the size first reported and the number of
     * nodes that have it */
    int64_t *img_size;
    uint32_t *img_nodes;
    uint32_t nimg;

    /* node sampling: kube-scheduler's nextStartNodeIndex, where the next sampled cycle starts
     * (taken modulo the candidate count); moved by sched_run only */
    uint32_t next_start;

    /* DefaultPreemption: per node, its pods in importance order with their requests and
     * the budgets that cover them, refilled when the node's generation or pdbs_version moved;
     * freed through the hook, as spread_src */
    struct sched_preempt_cache *pcache;
    void (*pcache_free)(struct sched_preempt_cache *);
    uint64_t pdbs_version; /* bumped by every PodDisruptionBudget set and removal */

    /* DynamicResources: the world of resource.k8s.io objects (borrowed, sched_cluster_set_dra),
     * NULL when the input has none: pods with claims are then left pending as not modelled */
    struct sched_dra *dra;
    bool dra_commit; /* a simulation: a placed pod's claims are allocated and reserved */
    void *dra_owner; /* the caller's (sched_cluster_set_dra_owner), freed with the cluster */
    void (*dra_owner_free)(void *);
};

/* ---- compiled pod (compile.c) ---- */
struct sched_creq { /* one node selector requirement */
    uint32_t key;
    uint8_t op; /* enum kube_selector_op */
    bool invalid;
    uint32_t *values; /* ids (SCHED_NOID for values no node has) */
    uint32_t nvalues;
    int64_t num; /* Gt/Lt */
};

struct sched_cfield { /* matchFields metadata.name */
    bool in;          /* In, else NotIn */
    bool invalid;
    uint32_t name; /* interned node name or SCHED_NOID */
};

struct sched_cterm {
    struct sched_creq *exprs;
    uint32_t nexprs;
    struct sched_cfield *fields;
    uint32_t nfields;
    int32_t weight; /* preferred terms */
};

struct sched_ctol {
    uint32_t key; /* SCHED_NOID: empty key, matches all */
    bool exists;
    uint32_t value; /* SCHED_NOID when no taint has this value (and it is non-empty) */
    uint8_t effect;
};

struct sched_cpod {
    const struct kube_pod *src;
    int32_t priority;
    bool preempt_never;
    uint32_t node_name; /* SCHED_NOID: unset; else interned (maybe an unknown name) */
    bool has_node_name;
    struct sched_idlabel *sel; /* nodeSelector */
    uint32_t nsel;
    bool has_required;
    struct sched_cterm *req_terms;
    uint32_t nreq_terms;
    struct sched_cterm *pref_terms;
    uint32_t npref_terms;
    bool affinity_by_name;  /* some required term has matchFields: per node */
    bool preferred_by_name; /* some preferred term has matchFields: per node */
    struct sched_ctol *tols;
    uint32_t ntols;
    /* requests */
    int64_t cpu, mem, eph, nz_cpu, nz_mem;
    struct sched_scalar scalars[SCHED_MAX_POD_SCALARS]; /* req only, nonzero */
    uint32_t nscalars;
    int64_t gpu;      /* request of the profile's GPU resource, plus (gpu_dra) the devices
                         its claims ask of the DeviceClass serving it */
    uint32_t gpu_rid; /* the profile's GPU resource (interned), SCHED_NOID if no node has it */
    bool gpu_dra;     /* GPUPlacement on and a DeviceClass serves its resource: nodes' devices
                         of that class count as GPUs (sched_noderesources_gpu_dra) */
    struct sched_port *ports;
    uint32_t nports;
    uint32_t portmask;
    bool all_zero; /* cpu, memory, ephemeral and scalars all zero */
    /* PreFilter NodeAffinity name pin */
    bool prefilter_names;
    uint32_t *pin_names; /* interned node names, may include unknown ones */
    uint32_t npin_names;
    bool prefilter_conflict;
    /* NodeAffinity's PreScore error (a preferred Gt/Lt whose value is not an integer), the
     * text after "running PreScore plugin \"NodeAffinity\": ", or NULL: an attempt that has
     * to score (two or more feasible nodes) fails with it */
    const char *prescore_error;
    struct sched_spread *spread; /* PodTopologySpread's state, NULL when none */
    struct sched_vpod *vol;      /* the volume plugins' state (volumes-int.h), NULL when none */
    const char *prefilter_msg;   /* with prefilter_conflict: the PreFilter's text, NULL for
                                    NodeAffinity's */
    uint8_t prefilter_plugin;    /* with prefilter_conflict: the rejecting plugin, 0 for
                                    NodeAffinity */
    struct arena *arena;         /* the cluster's cp_arena */
    struct sched_ipa *ipa; /* InterPodAffinity state, NULL when the plugin has nothing to do */
    uint32_t *images;      /* ImageLocality: normalised image names of the containers */
    uint32_t nimages, nimage_refs; /* ids found on some node; images counted (containers) */
    bool ref; /* the reference path's cycle (sched_run): the plugins' PreFilter state is
                 counted from scratch, not read from what the cluster keeps */
    /* DynamicResources: the pod's cycle (NULL when its PreFilter skipped), the pod as the
     * plugin reads it, its scalars NodeResourcesFit leaves to it (bit j: scalars[j], when the
     * node's allocatable lacks it), and the first Filter or Score error of the attempt */
    struct sched_dra_pod *dra;
    struct sched_dra_pod_in dra_own; /* for a pod the world does not list */
    uint32_t dra_delegated;
    char *dra_error;
};

/* A pod's requests in interned form (usage-int.h). */
struct sched_usage {
    int64_t cpu, mem, eph, nz_cpu, nz_mem;
    int64_t score_nz_cpu, score_nz_mem; /* nz_* for LeastAllocated on the incoming pod */
    struct sched_scalar scalars[SCHED_MAX_POD_SCALARS];
    uint32_t nscalars;
};

/* ---- filters (framework.c and the plugins) ---- */
/* Per class verdict for one pod. */
struct sched_cverdict {
    uint8_t plugin; /* first failing static plugin (UNSCHEDULABLE, TAINT, AFFINITY), or 0 */
    uint32_t reason;
    int32_t taint_score;    /* untolerated PreferNoSchedule taints */
    int32_t affinity_score; /* preferred terms' weights (class part) */
    uint64_t term_mask;     /* required terms whose expressions match (for name-dependent terms) */
};

/* dynamic usage of a node, possibly with pods removed (preemption) */
struct sched_nodeuse {
    int64_t req_cpu, req_mem, req_eph, req_gpu;
    int32_t npods;
};

/* sched_sat_add is a + b for resource amounts, saturating at INT64_MAX (and INT64_MIN)
 * instead of wrapping: a node's requested sums, like a pod's (kube_pod_requests), never wrap
 * to a small or negative value that would make a full node look free. kube-scheduler's int64
 * sums do wrap (framework.Resource.Add); see docs/scheduling.md. */
static inline int64_t sched_sat_add(int64_t a, int64_t b)
{
    int64_t r;

    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* sched_nodeuse_of is the node's usage as it stands (its hot column) */
static inline struct sched_nodeuse sched_nodeuse_of(const struct sched_hot *h)
{
    struct sched_nodeuse u = {h->req_cpu, h->req_mem, h->req_eph, h->req_gpu, h->npods};

    return u;
}

/* Fit reasons as a bit mask: bit 0 pods, 1 cpu, 2 memory, 3 ephemeral, 4+j pod scalar j. */
#define SCHED_FIT_PODS 1u
#define SCHED_FIT_CPU 2u
#define SCHED_FIT_MEM 4u
#define SCHED_FIT_EPH 8u
#define SCHED_FIT_SCALAR0 4

/* ---- the cycle (cycle.c) ---- */
struct sched_nodeout {
    uint8_t plugin; /* SCHED_PL_*, 0 feasible */
    bool unresolvable;
    uint32_t reason; /* reason id, or fit mask for SCHED_PL_FIT */
    int32_t taint_raw, aff_raw;
    int32_t fit_raw, bal_raw, gpu_raw;
    int32_t spread_raw, spread_norm; /* PodTopologySpread score (0 when it does not score) */
    int64_t ipa_raw;                 /* InterPodAffinity's Score() */
    int32_t img_raw;                 /* ImageLocality's Score() */
    int32_t vol_raw;                 /* VolumeBinding's score (weight 1, no normalisation) */
    int32_t dra_raw;                 /* DynamicResources' Score (weight 2, normalised to max) */
    int64_t total;
};

struct sched_cycle {
    uint32_t n;                /* nodes */
    struct sched_nodeout *out; /* by order index; cluster scratch, valid until the next cycle */
    uint32_t nfeasible;
    uint32_t nskipped;  /* rows SCHED_PL_SKIPPED (node sampling) */
    uint32_t processed; /* node sampling: nodes the rotating scan filtered (0: none, e.g. the
                           nominated node was taken), what next_start moves by */
    int64_t max_taint, max_aff;
    int64_t min_ipa, max_ipa; /* over the feasible nodes */
    int64_t max_dra;          /* DynamicResources' highest raw score over the feasible nodes */
    bool bal_skip;            /* best-effort pod: BalancedAllocation skipped */
    bool spread_scored;       /* PodTopologySpread scored the feasible nodes */
    int32_t chosen;           /* order index, -1 none */
};

/* ---- messages (message.c) ---- */
/* Appends the histogram "0/N nodes are available: ...." from reason counts. */
struct sched_hist {
    uint32_t *count; /* by reason id */
    uint32_t ncount;
    uint32_t *touched;
    uint32_t ntouched;
};

/* ---- preemption (defaultpreemption.c) ---- */
#define SCHED_PN_NO_VICTIMS 100
#define SCHED_PN_NOT_HELPFUL 101
#define SCHED_PN_NOT_CHECKED 102 /* the dry run had found enough candidates before it */
struct sched_preempt_node {      /* per order index */
    uint32_t npdb_violations;    /* victims whose eviction a PodDisruptionBudget forbids */
    uint32_t reason_plugin;      /* 0: candidate; else why not (SCHED_PL_PORTS, SCHED_PL_FIT,
                               SCHED_PN_NO_VICTIMS, SCHED_PN_NOT_HELPFUL) */
    uint32_t reason;             /* reason id or fit mask */
    struct sched_pod **victims;
    uint32_t nvictims;
};

struct sched_preemption {
    bool attempted;
    const char *ineligible; /* "not eligible due to ..." */
    int32_t chosen;         /* order index, -1 none */
    /* n entries when every node's verdict was asked for (sched_preempt's all_nodes), else
     * NULL; best is then the chosen candidate (its victims malloc'ed) */
    struct sched_preempt_node *nodes;
    uint32_t n;
    struct sched_preempt_node best;
    char *message; /* "preemption: ..." (on success "preemption: found a potential placement
                      ...") */
};

#endif
