/* state-int.h - what the manifest loader's modules share (not for callers of manifest.h): the
 * load context and the private part of a struct manifest_input, the name sets that keep pod
 * and node names unique, snapshots that roll a failed load back, and the reporting of errors
 * and warnings with file, line and field.
 *
 * The loader: manifest.c (the API of manifest.h) reads through source.c (files, standard input,
 * JSON streams), which hands each document to kinds.c; kinds.c sends each object to
 * objects.c (Pod, Node, PriorityClass) or workload.c (controllers expanded to pods), which
 * name pods with names.c. Everything here is below all of them. */
#ifndef MANIFEST_STATE_INT_H
#define MANIFEST_STATE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/arena.h"
#include "base/keymap.h"
#include "base/err.h"
#include "kube/decode.h"
#include "kube/object.h"
#include "kube/yaml.h"
#include "manifest/manifest.h"

#define MANIFEST_WARNINGS_MAX 1000
#define MANIFEST_FNV_OFFSET 0xcbf29ce484222325ULL

enum manifest_kind_id {
    MANIFEST_KIND_NODE,
    MANIFEST_KIND_POD,
    MANIFEST_KIND_DEPLOYMENT,
    MANIFEST_KIND_REPLICASET,
    MANIFEST_KIND_REPLICATION_CONTROLLER,
    MANIFEST_KIND_STATEFULSET,
    MANIFEST_KIND_JOB,
    MANIFEST_KIND_DAEMONSET,
    MANIFEST_KIND_PRIORITY_CLASS,
    MANIFEST_KIND_PDB,
    MANIFEST_KIND_RUNTIME_CLASS,
    MANIFEST_KIND_SERVICE,
    MANIFEST_KIND_NAMESPACE,
    MANIFEST_KIND_PVC,
    MANIFEST_KIND_PV,
    MANIFEST_KIND_STORAGE_CLASS,
    MANIFEST_KIND_CSI_NODE,
    MANIFEST_KIND_CSI_DRIVER,
    MANIFEST_KIND_CSI_CAPACITY,
    MANIFEST_KIND_VOLUME_ATTACHMENT,
    MANIFEST_KIND_DEVICE_CLASS,
    MANIFEST_KIND_RESOURCE_SLICE,
    MANIFEST_KIND_RESOURCE_CLAIM,
    MANIFEST_KIND_RESOURCE_CLAIM_TEMPLATE,
    MANIFEST_KIND_DEVICE_TAINT_RULE,
};

struct manifest_kind {
    const char *kind;
    const char *group;  /* "" = core "v1" */
    const char *group2; /* older group still accepted, or NULL */
    enum manifest_kind_id id;
};

/* A workload waiting for manifest_input_finish, which knows every node and every pod of the
 * input: like its controller, it creates only the pods its existing ones do not stand for
 * (a dump of a cluster, or `gpusched render`'s output, holds both). */
struct manifest_pending_workload {
    struct kube_pod tmpl;      /* the decoded template, namespace and owner set */
    struct kube_labels shared; /* tmpl's labels and the controller's, the same for every pod */
    enum manifest_kind_id kind;
    const char *base;       /* generated names: base + 5 characters (arena) */
    const char *rs_name;    /* a Deployment: its ReplicaSet NAME-HASH (arena), else NULL */
    const char *controller; /* a ReplicaSet controlled by a Deployment: that Deployment's
                               name (arena), else NULL */
    size_t replicas;        /* wanted pods (not for a DaemonSet) */
    bool indexed;           /* an Indexed Job */
    int line;
    size_t pos;    /* pod index where the workload appeared */
    size_t object; /* with opts.keep_objects: its index in in->objects */
    size_t npods;  /* pods created, once finished */
};

/* A bound pod passed to opts.take_bound: what is kept of it (strings in stub_arena). owner is
 * manifest_owner_key's "Kind/ns/name" + NUL + suffix of an active pod with a controller, else
 * NULL. */
struct manifest_pod_stub {
    const char *ns, *name, *node, *file, *owner;
    int line;
};

/* Open-addressing set of indices (+1; 0 = empty) into in->pods or in->nodes; in the pod set,
 * an index with MANIFEST_STUB_BIT set is one of priv->stubs. */
#define MANIFEST_STUB_BIT 0x80000000u

struct manifest_name_set {
    /* open addressing: the entry + 1 in the low 32 bits (0: empty), a hash of its name above,
     * so a probe passes other names without reading them */
    uint64_t *slots;
    size_t cap; /* power of two */
    size_t n;
};

/* An open-addressing index of entries (+1; 0 = empty) of an array that only grows or is cut
 * back by a rollback (manifest/volumes.c: claims and volumes by name). Entries are never
 * removed: a lookup skips those at or past the array's count and those whose name differs, so
 * what a rollback cut off costs a probe, never a wrong answer. */
struct manifest_index {
    uint32_t *slots;
    size_t cap; /* power of two */
    size_t n;
};

struct manifest_input_priv {
    size_t cap_nodes, cap_pods, cap_classes, cap_pdbs, cap_warnings, cap_objects, cap_selectors,
        cap_namespaces;
    struct manifest_pending_workload *ds; /* workloads waiting for manifest_input_finish */
    size_t nds, cap_ds;
    size_t deferred_pods; /* the pods they want (replicas), counted as if created already */
    struct manifest_name_set pod_set, node_set;
    size_t warnings_dropped;
    const char *last_ns;             /* manifest_namespace_intern: the last one, */
    struct keymap ns_map;            /* and every one (key and value: the arena copy) */
    struct manifest_pod_stub *stubs; /* bound pods passed to opts.take_bound, input order */
    size_t nstubs, cap_stubs;
    struct arena stub_arena;
    struct arena node_arena;         /* decoded nodes, apart so manifest_input_trim can free them */
    const char *stub_ns, *stub_node; /* the last ones copied, reused while they repeat */
    const char *stub_owner;          /* ... and the last owner key (stub_owner_len bytes) */
    size_t stub_owner_len;
    int bound_kept;                 /* a bound pod went to pods[]: no more hand-offs */
    struct kube_runtime_class *rcs; /* RuntimeClass objects, input order */
    size_t nrcs, cap_rcs;
    size_t cap_pvcs, cap_pvs, cap_storage_classes; /* manifest/volumes.c */
    struct manifest_index pvc_at, pv_at;           /* ... and its name indices */
    size_t cap_csi_nodes, cap_csi_drivers, cap_csi_capacities, cap_volume_attachments;
    size_t cap_device_classes, cap_resource_slices, cap_resource_claims, cap_claim_templates,
        cap_device_taint_rules; /* manifest/dra.c */
};

struct manifest_snapshot {
    size_t nnodes, npods, nclasses, nnamespaces, nwarnings, nds, dropped, nstubs, ntaken, nobjects,
        nrcs, nselectors, deferred_pods;
    size_t npdbs, npvcs, npvs, nstorage_classes, ncsi_nodes, ncsi_drivers, ncsi_capacities,
        nvolume_attachments;
    size_t ndevice_classes, nresource_slices, nresource_claims, nclaim_templates,
        ndevice_taint_rules;
};

struct manifest_ctx {
    struct manifest_input *in;
    const char *file; /* arena copy */
    struct kube_lines *lines;
    struct err *err;
    struct kube_decode_opts dopts;  /* manifest_dopts */
    int line;                       /* ... and the line of the object it was made for */
    struct kube_object_names names; /* the names of the object being loaded (kinds.c) */
    int cluster;                    /* the objects exist in a cluster: workloads are not expanded */
    int in_items;                   /* items of a root list are being loaded */
    int items_dropped;              /* ... but the root is not a list */
    struct manifest_snapshot items_snap;
};

/* manifest_dopts returns how the decoders read the object at line: with c's lines, and,
 * unless the objects come from a cluster, every field checked (an unknown one a warning, or
 * with opts.strict an error). */
const struct kube_decode_opts *manifest_dopts(struct manifest_ctx *c, int line);

/* manifest_fnv1a hashes n bytes at p into h (start with MANIFEST_FNV_OFFSET). */
uint64_t manifest_fnv1a(uint64_t h, const void *p, size_t n);

/* manifest_grow makes *arr (elem-sized items, *cap of them) hold at least need, doubling;
 * 0 or -ENOMEM (the array is unchanged). manifest_shrink reallocates it to exactly n items,
 * keeping the larger block when that fails. */
int manifest_grow(void **arr, size_t *cap, size_t need, size_t elem);
void manifest_shrink(void **arr, size_t *cap, size_t n, size_t elem);

/* manifest_jstr returns o[key] when it is a string, else NULL. */
const char *manifest_jstr(const json_t *o, const char *key);

/* manifest_line_of returns the source line of v, or fallback when unknown. */
int manifest_line_of(const struct manifest_ctx *c, const json_t *v, int fallback);

/* manifest_fail fills c->err (file, line, field, code, message) and returns code;
 * manifest_nomem is manifest_fail's "out of memory". */
int manifest_fail(struct manifest_ctx *c, int line, const char *field, int code, const char *fmt,
                  ...) __attribute__((format(printf, 5, 6)));
int manifest_nomem(struct manifest_ctx *c);

/* manifest_warn appends a warning line to in (at most MANIFEST_WARNINGS_MAX are kept, the rest
 * counted); 0 or -ENOMEM. */
int manifest_warn(struct manifest_input *in, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The name sets. manifest_pod_key_hash hashes namespace/name. manifest_pod_set_find returns
 * the pod set entry of ns/name (MANIFEST_STUB_BIT set for a handed-off pod), or -1;
 * manifest_node_set_find the node index, or -1. manifest_pod_where gives the file and line a
 * pod set entry came from. manifest_set_add_last records the last pod (pods != 0, or the last
 * stub when stub != 0) or node of its array, already checked to be new; manifest_set_rebuild
 * makes s index the first n pods or nodes with room for more. Both return 0 or -ENOMEM. */
uint64_t manifest_pod_key_hash(const char *ns, const char *name);
long manifest_pod_set_find(const struct manifest_input *in, const char *ns, const char *name);
long manifest_node_set_find(const struct manifest_input *in, const char *name);
void manifest_pod_where(const struct manifest_input *in, uint32_t i, const char **file, int *line);
int manifest_set_add_last(struct manifest_input *in, int pods, int stub);
int manifest_set_rebuild(struct manifest_input *in, struct manifest_name_set *s, int pods, size_t n,
                         size_t room);

/* manifest_owner_key writes what manifest_finish_workloads counts of pod p: "Kind/ns/name" of
 * its controller, a NUL, then "#INDEX" (a Job's pod with a completion index), "@NODE" (a
 * DaemonSet's pod bound or pinned to NODE) or nothing, and a NUL. Returns the bytes written,
 * or 0 when p has no controller, is not active (terminating, Succeeded or Failed: its
 * controller replaces it) or the key does not fit. */
size_t manifest_owner_key(const struct kube_pod *p, char *buf, size_t size);

/* manifest_snapshot_take records the input's counters; manifest_snapshot_restore rolls the
 * input back to them (a failed load leaves nothing behind) and rebuilds the name sets. */
void manifest_snapshot_take(const struct manifest_input *in, struct manifest_snapshot *s);
void manifest_snapshot_restore(struct manifest_input *in, const struct manifest_snapshot *s);

/* manifest_keep_object appends obj (borrowed; kept as compact JSON text) of kind to
 * in->objects, standing for npods pods; 0 or -ENOMEM. */
int manifest_keep_object(struct manifest_input *in, const json_t *obj, const char *kind,
                         size_t npods);

/* manifest_priv_ensure allocates in->priv and its name sets when missing; 0 or -ENOMEM. */
int manifest_priv_ensure(struct manifest_input *in, struct err *err);

#endif
