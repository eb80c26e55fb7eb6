/* decode-int.h - what the decoder's files share; not for callers of kube/decode.h.
 *
 * One decoder reads every kind: decode_path.c holds the state, the field path and the one
 * error that names path and line, decode_check.c the walk over the Go types' tables, decode.c
 * the typed getters; decode_resources.c (ResourceLists and a
 * container's requests and limits) and decode_selector.c (label and node selectors) the parts
 * many kinds share; then a file per family of kinds: decode_pod.c and decode_podspec.c,
 * decode_node.c, decode_storage.c, decode_workload.c, decode_class.c (the scheduling
 * classes and the objects around pods) and decode_dra*.c (resource.k8s.io: decode_dra.c what
 * its kinds share, decode_dra-int.h, then decode_dra_class.c, _slice.c and _claim.c).
 *
 * Every getter reads obj[key]: absent and null both mean "unset", as in Go's decoder; a value
 * of another JSON type fails with the API server's wording. Strings kept are copied into the
 * arena; those only looked at (dec_peek) are borrowed from the JSON tree.
 *
 * How a kind is added (resource.k8s.io's, say, in decode_dra_class.c):
 * 1. its struct in kube/object.h, and int kube_<kind>_decode(obj, a, opts, out, err) in
 *    kube/decode.h;
 * 2. in the family's file, a table (struct dec_type, below) for each Go struct of the kind the
 *    decoder reads, with every JSON field k8s.io/api's types.go gives that struct (the ones not
 *    modelled too, so a manifest's field is never taken for a misspelling), sorted by name,
 *    each with its JSON kind and its Go type as reflect names it ("[]v1.DeviceRequest");
 * 3. the decoder: dec_init, dec_begin(d, obj, &its root table, ...) (which checks a
 *    manifest's fields against the tables), then the getters below, the path pushed and popped
 *    around each part, dec_fail with the API server's validation message;
 * 4. the kind and its root table in kinds[] of decode.c (for messages about its metadata),
 *    and in the loader's kinds table (manifest/kinds.c), which keeps what it decodes. */
#ifndef KUBE_DECODE_INT_H
#define KUBE_DECODE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/arena.h"
#include "base/err.h"
#include "kube/decode.h"
#include "kube/object.h"
#include "kube/quantity.h"

#define DEC_PATH_MAX 240

/* ---- The Go types of the API's fields ----
 *
 * Each Go struct the decoder reads has a table of its JSON fields, sorted by name, with the
 * JSON kind each holds and its Go type as the API server's decoder names it in messages. The
 * tables say what a field may hold, so a manifest's fields can be checked once, by name and
 * type, before it is decoded (opts->check), and a getter that finds a value of the wrong type
 * can say what the API server says. A field whose type has no table (a container's probes,
 * say) is checked as to its kind alone. */
enum dec_kind {
    DEC_STR = 1, /* a string (string, v1.Time, types.UID, []byte, ...) */
    DEC_BOOL,
    DEC_INT32, /* a number with an integral value in int32's range */
    DEC_INT64,
    DEC_NUM,
    DEC_OBJ,    /* a struct */
    DEC_ARR,    /* a slice; dec_field.elem says of what */
    DEC_MAP,    /* a map with string keys; dec_field.elem says of what */
    DEC_QTY,    /* resource.Quantity: a string or a number */
    DEC_INTSTR, /* intstr.IntOrString: a string or an int32 */
    DEC_ANY,    /* whatever JSON (runtime.RawExtension, v1.FieldsV1) */
};

struct dec_type;

struct dec_field {
    const char *name;   /* the JSON key */
    unsigned char kind; /* enum dec_kind */
    unsigned char elem; /* DEC_ARR, DEC_MAP: its elements' enum dec_kind */
    const char *go;     /* the Go type: "string", "int32", "[]v1.Container", "v1.ResourceList" */
    const struct dec_type *type; /* DEC_OBJ (or an array or map of them): the struct's table,
                                    NULL when its fields are not looked into */
};

struct dec_type {
    const char *name; /* the Go struct's name: "PodSpec" */
    const struct dec_field *fields;
    size_t nfields;
};

#define DEC_TYPE(name, fields)                                                                     \
    {                                                                                              \
        (name), (fields), sizeof(fields) / sizeof((fields)[0])                                     \
    }

/* The tables several files read (each file keeps its own others static). */
extern const struct dec_type dec_t_object_meta, dec_t_label_selector, dec_t_node_selector,
    dec_t_node_selector_term, dec_t_resource_requirements, dec_t_volume_resource_requirements,
    dec_t_pod_spec, dec_t_container, dec_t_affinity, dec_t_toleration,
    dec_t_topology_spread_constraint, dec_t_persistent_volume_claim_template,
    dec_t_persistent_volume_spec, dec_t_aws_elastic_block_store_volume_source,
    dec_t_gce_persistent_disk_volume_source, dec_t_azure_disk_volume_source,
    dec_t_cinder_volume_source, dec_t_portworx_volume_source, dec_t_azure_file_volume_source,
    dec_t_vsphere_virtual_disk_volume_source;
/* ... and those of the kinds (the roots of their walks); dec_dra_group: "resource.k8s.io" */
extern const char dec_dra_group[];
extern const struct dec_type dec_t_pod, dec_t_node, dec_t_priority_class, dec_t_runtime_class,
    dec_t_pod_disruption_budget, dec_t_namespace, dec_t_service, dec_t_deployment,
    dec_t_replica_set, dec_t_stateful_set, dec_t_daemon_set, dec_t_job,
    dec_t_replication_controller, dec_t_persistent_volume_claim, dec_t_persistent_volume,
    dec_t_storage_class, dec_t_csi_node, dec_t_csi_driver, dec_t_csi_storage_capacity,
    dec_t_volume_attachment, dec_t_device_class, dec_t_resource_slice, dec_t_resource_claim,
    dec_t_resource_claim_template, dec_t_device_taint_rule;

/* The decoder's state for one object: where its strings go, where errors go, how strictly it
 * reads, and the path of the field being read ("spec.containers[0].resources"). */
struct dec {
    struct arena *a;
    const struct kube_lines *lines;
    const char *file;
    struct err *err;
    const struct kube_decode_opts *opts; /* NULL: an object of the API server */
    const json_t *root;                  /* the object dec_begin started, and its type */
    const struct dec_type *root_type;
    size_t root_plen; /* the path's length at the root */
    char path[DEC_PATH_MAX + 16];
    size_t plen;
};

/* dec_json_int64 reads v as an integer the way Go's JSON decoder fills an int field: a JSON
 * integer, or a number with an integral value that fits (YAML "1e3" is 1000). Returns false
 * for anything else, without undefined behaviour on huge numbers. */
bool dec_json_int64(const json_t *v, int64_t *out);

/* dec_json_type_name names v's JSON type as Go's decoder does in its messages: "object",
 * "array", "string", "number", "bool" or "null". */
const char *dec_json_type_name(const json_t *v);

/* dec_init starts a decode into a; o (NULL: the API server's object) and err may be NULL. */
void dec_init(struct dec *d, struct arena *a, const struct kube_decode_opts *o, struct err *err);

/* dec_begin (decode_check.c) starts every kind's decoder: obj must be an object of Go type t. With
 * opts->check, every field of obj is checked first against t's tables (types, and names: an
 * unknown one is warned of, or fails with opts->strict). Its line and the file (copied into
 * the arena) are noted when line and file are not NULL. */
int dec_begin(struct dec *d, const json_t *obj, const struct dec_type *t, int *line,
              const char **file);

/* The field path. dec_push appends ".name" ("name" at the root), dec_index "[i]"; both return
 * the length dec_pop goes back to. A path that no longer fits is cut short. */
size_t dec_push(struct dec *d, const char *name);
size_t dec_index(struct dec *d, size_t i);
void dec_pop(struct dec *d, size_t old);

/* dec_line is the line of v, else of its container parent (either may be NULL), 0 unknown. */
int dec_line(const struct dec *d, const json_t *v, const json_t *parent);

/* dec_fail_at fills err with msg at the line of v (else parent's) and the field path field;
 * -EINVAL. */
int dec_fail_at(struct dec *d, const json_t *v, const json_t *parent, const char *field,
                const char *msg);

/* dec_fail fills err with the message, the file, v's line (or parent's) and the current path,
 * and returns -EINVAL; dec_nomem is "out of memory", -ENOMEM. */
int dec_fail(struct dec *d, const json_t *v, const json_t *parent, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int dec_nomem(struct dec *d);

/* dec_quote writes Go's %q of s (base/quote.h) into buf and returns buf. */
const char *dec_quote(const char *s, char *buf, size_t size);

/* dec_strdup copies the JSON string v into the arena (repeats may share one copy: decoded
 * strings are never written to); NULL when out of memory. */
const char *dec_strdup(struct dec *d, const json_t *v);

/* dec_type_error (decode_check.c) fails on v, the value of obj[key] (key NULL: an element of the array obj),
 * as of the wrong JSON type, in the API server's words: the walk of the root (dec_begin)
 * finds the field and names its Go struct and type; go is the Go type named otherwise. */
int dec_type_error(struct dec *d, const json_t *obj, const char *key, const json_t *v,
                   const char *go);

/* dec_no_nul fails on a string v (obj[key], key NULL: the current path) holding a NUL, which
 * no C string can: `Invalid value: "app\x00evil": must not contain a NUL character`. */
int dec_no_nul(struct dec *d, const json_t *obj, const char *key, const json_t *v);

/* The getters. dec_string copies obj[key] into the arena (dflt when unset); dec_peek borrows
 * it ("" when unset); dec_typed (go: the Go type named when the walk cannot), dec_object and
 * dec_array give the value itself (NULL when unset); dec_bool false when unset; dec_int an
 * integer of Go type int32 (max INT32_MAX) or int64, below min an `Invalid value` (*present:
 * it was set; present may be NULL). 0 or -EINVAL/-ENOMEM with err set. */
int dec_string(struct dec *d, const json_t *obj, const char *key, const char **out,
               const char *dflt);
int dec_peek(struct dec *d, const json_t *obj, const char *key, const char **out);
int dec_typed(struct dec *d, const json_t *obj, const char *key, json_type want, const char *go,
              const json_t **out);
int dec_object(struct dec *d, const json_t *obj, const char *key, const json_t **out);
int dec_array(struct dec *d, const json_t *obj, const char *key, const json_t **out);
int dec_bool(struct dec *d, const json_t *obj, const char *key, bool *out);
int dec_int(struct dec *d, const json_t *obj, const char *key, int64_t min, int64_t max,
            int64_t *out, bool *present);

/* An element decoder of dec_list: v is the element (already of the wanted JSON type), out
 * its slot in the array (NULL when the elements are not kept), ctx the caller's. The path
 * names the element ("spec.tolerations[2]"). */
typedef int (*dec_elem_fn)(struct dec *d, const json_t *v, void *out, void *ctx);

/* dec_list reads obj[key], a list whose elements must be of JSON type want (JSON_OBJECT or
 * JSON_STRING), decoding each with fn into an array of elem-sized slots allocated from the
 * arena (none when elem is 0). Returns the array (NULL when the list is absent, null or empty)
 * with *n the elements decoded; on failure *rc is the error and *n counts the elements decoded
 * before it. */
void *dec_list(struct dec *d, const json_t *obj, const char *key, json_type want, size_t elem,
               dec_elem_fn fn, void *ctx, size_t *n, int *rc);

/* dec_str_elem is the dec_list element decoder of a list of strings (slots: const char *),
 * each a label key when ctx is not NULL. */
int dec_str_elem(struct dec *d, const json_t *v, void *slot, void *ctx);

/* dec_cmp_label orders struct kube_label by key (qsort). */
int dec_cmp_label(const void *x, const void *y);

/* dec_labels reads a map of strings (metadata.labels, spec.nodeSelector) at obj[key], keys
 * and values checked as ValidateLabels checks them when validate is set; sorted by key. */
int dec_labels(struct dec *d, const json_t *obj, const char *key, bool validate,
               struct kube_labels *out);

/* dec_metadata reads metadata (*meta_out: the JSON object, NULL when absent): name, uid,
 * resourceVersion and the labels ("" and none when absent). */
int dec_metadata(struct dec *d, const json_t *obj, const json_t **meta_out, const char **name,
                 const char **uid, const char **rv, struct kube_labels *labels);

/* dec_name_required fails unless name (metadata.name of obj, meta its metadata or NULL) is
 * set: `metadata.name: Required value: WHAT`. */
int dec_name_required(struct dec *d, const json_t *obj, const json_t *meta, const char *name,
                      const char *what);

/* dec_named reads metadata.name (required: "name or generateName is required") into *name
 * and, for a namespaced kind (ns not NULL), metadata.namespace ("default" when unset). */
int dec_named(struct dec *d, const json_t *obj, const json_t **meta, const char **name,
              const char **ns);

/* dec_controller reads the controller of metadata meta (the first ownerReference with
 * controller true; its kind and name are strings) into out (zeroed when there is none) and,
 * when uid is not NULL, its uid ("" when unset). */
int dec_controller(struct dec *d, const json_t *meta, struct kube_owner *out, const char **uid);

/* ---- ResourceLists (decode_resources.c) ---- */

/* One parsed entry of a ResourceList, kept until the container's rules are checked. */
struct dec_res_entry {
    const char *name; /* points into the JSON tree */
    const json_t *v;
    /* the quantity's text (kube_quantity_json_text), tlen bytes in the JSON string or num */
    const char *text;
    size_t tlen;
    char num[KUBE_JSON_NUMBER_MAX]; /* a JSON number printed back */
    int64_t value;                  /* base units; millicores for cpu */
    int64_t milli;
    bool whole; /* a whole number of base units */
};

struct dec_res_list {
    struct dec_res_entry *e; /* small, or a heap array for a longer list */
    size_t n;
    const json_t *obj; /* the JSON map, NULL when absent */
    struct dec_res_entry small[4];
};

/* dec_res_list parses obj[key] (a ResourceList) into l; container says whether the container
 * resource-name and value rules apply. Release l with dec_res_list_release, also on error. */
int dec_res_list(struct dec *d, const json_t *obj, const char *key, bool container,
                 struct dec_res_list *l);
void dec_res_list_release(struct dec_res_list *l);
/* dec_res_list_build turns l into r (scalars sorted by name, in the arena). */
int dec_res_list_build(struct dec *d, const struct dec_res_list *l, struct kube_resources *r);

/* dec_container_resources reads c's resources: requests and limits with the API's defaulting
 * (request = limit when only the limit is given) and ValidateResourceRequirements' rules. */
int dec_container_resources(struct dec *d, const json_t *c, struct kube_container *out);

/* dec_pod_resources reads spec.resources, the pod-level requests and limits. */
int dec_pod_resources(struct dec *d, const json_t *spec, struct kube_pod *p);

/* dec_quantity reads v, a resource.Quantity (a field or map value of parent, at the current
 * path: the caller pushed its name), as the API server does (kube_quantity_json_text: a
 * number or a string, null the zero quantity) into e: its text, e->value (base units) and
 * e->milli, with e->whole set when it is a whole number of base units. A milli value beyond
 * int64 is an error when milli is set (cpu), else e->milli is 0 (the amount is far beyond any
 * fraction: whole). The Go decoder's words when the JSON is no quantity, ParseQuantity's when
 * the text is none. */
int dec_quantity(struct dec *d, const json_t *parent, const json_t *v, bool milli,
                 struct dec_res_entry *e);

/* dec_storage reads list[key], a quantity, into bytes (*has: it was given; null is the zero
 * quantity, given, as in a ResourceList), below 0 refused when nonneg. */
int dec_storage(struct dec *d, const json_t *list, const char *key, bool nonneg, int64_t *out,
                bool *has);

/* ---- Selectors (decode_selector.c) ---- */

/* The three kinds of requirement: a node selector term's matchExpressions (on labels) and
 * matchFields (on metadata.name), and a metav1.LabelSelector's matchExpressions. */
enum dec_req_kind { DEC_REQ_NODE_LABEL, DEC_REQ_NODE_FIELD, DEC_REQ_LABEL_SELECTOR };

/* dec_requirement is the dec_list element decoder of a requirement (ctx: its enum
 * dec_req_kind; slot: struct kube_requirement); dec_term of a NodeSelectorTerm (slot: struct
 * kube_node_selector_term). */
int dec_requirement(struct dec *d, const json_t *r, void *slot, void *ctx);
int dec_term(struct dec *d, const json_t *t, void *slot, void *ctx);

/* dec_label_selector reads a metav1.LabelSelector at obj (NULL or null: absent, out->present
 * false). */
int dec_label_selector(struct dec *d, const json_t *obj, struct kube_label_selector *out);

/* dec_spec_selector reads spec.selector: a label set (set_form: absent or null is not
 * present; keys and values held to ValidateLabels when validate) or a metav1.LabelSelector. */
int dec_spec_selector(struct dec *d, const json_t *spec, bool set_form, bool validate,
                      struct kube_label_selector *out);

/* dec_node_selector reads a v1.NodeSelector at obj (a PersistentVolume's
 * spec.nodeAffinity.required) with the rules of a pod's required node affinity. */
int dec_node_selector(struct dec *d, const json_t *obj, struct kube_node_selector *out);

/* ---- A pod's spec (decode_podspec.c) ---- */

/* dec_containers reads spec[key] (containers, or initContainers when init), hostNetwork
 * defaulting the host ports; containers are required. */
int dec_containers(struct dec *d, const json_t *spec, const char *key, bool init, bool host_network,
                   struct kube_container **out, size_t *n);
/* dec_toleration and dec_spread are the dec_list element decoders of tolerations (slot: struct
 * kube_toleration) and topologySpreadConstraints (slot: struct kube_spread_constraint). */
int dec_toleration(struct dec *d, const json_t *t, void *slot, void *ctx);
int dec_spread(struct dec *d, const json_t *t, void *slot, void *ctx);
/* dec_node_affinity reads spec.affinity: node affinity into p, pod (anti-)affinity into
 * p->extra. */
int dec_node_affinity(struct dec *d, const json_t *spec, struct kube_pod *p);

/* dec_pod reads the pod obj of Go type t: a Pod, or (the workloads') a PodTemplateSpec read as
 * the pod its controller creates, named name (not NULL: it stands for metadata.name). */
int dec_pod(struct dec *d, const json_t *obj, const struct dec_type *t, const char *name,
            struct kube_pod *out);

/* ---- What several kinds read ---- */

#define DEC_EFFECTS_SUPPORTED                                                                      \
    "supported values: \"NoExecute\", \"NoSchedule\", \"PreferNoSchedule\""

/* dec_taint_effect reads a taint effect ("" is KUBE_EFFECT_ANY); -EINVAL for another word. */
int dec_taint_effect(const char *s, enum kube_taint_effect *e);

/* dec_intree reads the in-tree volume source of v (a pod volume or a PersistentVolume's spec)
 * that CSI migration translates; out->plugin stays KUBE_INTREE_NONE when it has none. */
int dec_intree(struct dec *d, const json_t *v, struct kube_inline_volume *out);

/* dec_claim_template reads an ephemeral volume's volumeClaimTemplate into a claim (the fields
 * VolumeBinding reads), with the API server's validation of the spec. */
int dec_claim_template(struct dec *d, const json_t *t, struct kube_pvc *c);

#endif
