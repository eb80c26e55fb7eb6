/* decode-int.h - what the decoder's files share; not for callers of kube/decode.h.
 *
 * One decoder reads every kind: decode.c holds the state, the field path, the one error that
 * names path and line, and the typed getters; decode_resources.c (ResourceLists and a
 * container's requests and limits) and decode_selector.c (label and node selectors) the parts
 * many kinds share; then a file per family of kinds: decode_pod.c and decode_podspec.c,
 * decode_node.c, decode_storage.c, decode_workload.c, decode_class.c (the scheduling
 * classes and the objects around pods) and decode_dra.c (resource.k8s.io).
 *
 * Every getter reads obj[key]: absent and null both mean "unset", as in Go's decoder; a value
 * of another JSON type fails with the API server's wording. Strings kept are copied into the
 * arena; those only looked at (dec_peek) are borrowed from the JSON tree. */
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

#define DEC_PATH_MAX 240

/* The decoder's state for one object: where its strings go, where errors go and the path of
 * the field being read ("spec.containers[0].resources"). */
struct dec {
    struct arena *a;
    const struct kube_lines *lines;
    const char *file;
    struct err *err;
    char path[DEC_PATH_MAX + 16];
    size_t plen;
};

/* dec_init starts a decode into a; lines, file and err may be NULL. */
void dec_init(struct dec *d, struct arena *a, const struct kube_lines *lines, const char *file,
              struct err *err);

/* The field path. dec_push appends ".name" ("name" at the root), dec_index "[i]"; both return
 * the length dec_pop goes back to. A path that no longer fits is cut short. */
size_t dec_push(struct dec *d, const char *name);
size_t dec_index(struct dec *d, size_t i);
void dec_pop(struct dec *d, size_t old);

/* dec_line is the line of v, else of its container parent (either may be NULL), 0 unknown. */
int dec_line(const struct dec *d, const json_t *v, const json_t *parent);

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

/* dec_check_type fails unless ok, naming obj[key] = v as of the wrong type want_name. */
int dec_check_type(struct dec *d, const json_t *obj, const char *key, const json_t *v, bool ok,
                   const char *want_name);

/* The getters. dec_string copies obj[key] into the arena (dflt when unset); dec_peek borrows
 * it ("" when unset); dec_typed, dec_object and dec_array give the value itself (NULL when
 * unset); dec_bool false when unset; dec_int an integer within [min, max] (*present: it was
 * set; present may be NULL). 0 or -EINVAL/-ENOMEM with err set. */
int dec_string(struct dec *d, const json_t *obj, const char *key, const char **out,
               const char *dflt);
int dec_peek(struct dec *d, const json_t *obj, const char *key, const char **out);
int dec_typed(struct dec *d, const json_t *obj, const char *key, json_type want,
              const char *want_name, const json_t **out);
int dec_object(struct dec *d, const json_t *obj, const char *key, const json_t **out);
int dec_array(struct dec *d, const json_t *obj, const char *key, const json_t **out);
int dec_bool(struct dec *d, const json_t *obj, const char *key, bool *out);
int dec_int(struct dec *d, const json_t *obj, const char *key, int64_t min, int64_t max,
            int64_t *out, bool *present);

/* An element decoder of dec_list: v is the element (already of the wanted JSON type), out
 * its slot in the array (NULL when the elements are not kept), ctx the caller's. The path
 * names the element ("spec.tolerations[2]"). */
typedef int (*dec_elem_fn)(struct dec *d, const json_t *v, void *out, void *ctx);

/* dec_list reads obj[key], a list whose elements must be of JSON type want (want_name in the
 * message), decoding each with fn into an array of elem-sized slots allocated from the arena
 * (none when elem is 0). Returns the array (NULL when the list is absent, null or empty) with
 * *n the elements decoded; on failure *rc is the error and *n counts the elements decoded
 * before it. */
void *dec_list(struct dec *d, const json_t *obj, const char *key, json_type want,
               const char *want_name, size_t elem, dec_elem_fn fn, void *ctx, size_t *n, int *rc);

/* dec_str_elem is the dec_list element decoder of a list of strings (slots: const char *),
 * each a label key when ctx is not NULL. */
int dec_str_elem(struct dec *d, const json_t *v, void *slot, void *ctx);

/* dec_cmp_label orders struct kube_label by key (qsort). */
int dec_cmp_label(const void *x, const void *y);

/* dec_labels reads a map of strings (metadata.labels, spec.nodeSelector) at obj[key], keys
 * and values checked as ValidateLabels checks them when validate is set; sorted by key. */
int dec_labels(struct dec *d, const json_t *obj, const char *key, bool validate,
               struct kube_labels *out);

/* dec_source starts every decoder: obj must be an object; its line and the file (copied into
 * the arena) are noted when line and file are not NULL. */
int dec_source(struct dec *d, const json_t *obj, int *line, const char **file);

/* dec_metadata reads metadata (*meta_out: the JSON object, NULL when absent): name, uid,
 * resourceVersion and the labels ("" and none when absent). */
int dec_metadata(struct dec *d, const json_t *obj, const json_t **meta_out, const char **name,
                 const char **uid, const char **rv, struct kube_labels *labels);

/* ---- ResourceLists (decode_resources.c) ---- */

/* One parsed entry of a ResourceList, kept until the container's rules are checked. */
struct dec_res_entry {
    const char *name; /* points into the JSON tree */
    const json_t *v;
    const char *text; /* the quantity as written: the JSON string, or num */
    char num[40];     /* a JSON number printed back */
    int64_t value;    /* base units; millicores for cpu */
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

/* dec_storage reads list[key], a quantity, into bytes (*has: it was given). */
int dec_storage(struct dec *d, const json_t *list, const char *key, int64_t *out, bool *has);

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
