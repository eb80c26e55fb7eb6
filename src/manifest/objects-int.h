/* objects-int.h - Pod, Node, PriorityClass and Namespace objects into the input, and pod priorities: the
 * loader's per-object steps (kinds.c dispatches to them, workload.c adds the pods it
 * expands through manifest_append_pod). */
#ifndef MANIFEST_OBJECTS_INT_H
#define MANIFEST_OBJECTS_INT_H

#include <stddef.h>

#include <jansson.h>

#include "kube/object.h"
#include "manifest/state-int.h"

/* manifest_check_capacity fails when add_pods more pods would pass opts.max_pods. */
int manifest_check_capacity(struct manifest_ctx *c, int line, const char *field, size_t add_pods);

/* manifest_append_pod adds p as the input's next pod; its name must be free in its namespace
 * (else -EEXIST naming where the first one is). */
int manifest_append_pod(struct manifest_ctx *c, const struct kube_pod *p, int line,
                        const char *field);

/* manifest_find_class returns the PriorityClass called name: one of the input's so far, or
 * a built-in one (system-cluster-critical, system-node-critical); NULL when there is none. */
const struct kube_priority_class *manifest_find_class(const struct manifest_input *in,
                                                      const char *name);

/* manifest_namespace_intern returns an arena copy of ns, the previous pod's when it repeats.
 * manifest_object_namespace is the loaded object's metadata.namespace, or the input's default. */
const char *manifest_namespace_intern(struct manifest_ctx *c, const char *ns);
const char *manifest_object_namespace(struct manifest_ctx *c);

/* One object of each kind, at line: decoded, checked and added to the input (a bound pod
 * may go to opts.take_bound instead). 0 or the error in c->err. */
int manifest_load_pod(struct manifest_ctx *c, json_t *obj, int line);
int manifest_load_node(struct manifest_ctx *c, json_t *obj, int line);
int manifest_load_priority_class(struct manifest_ctx *c, json_t *obj, int line);
int manifest_load_runtime_class(struct manifest_ctx *c, json_t *obj, int line);

/* manifest_finish_runtime_classes is the RuntimeClass admission for every pod of pods[] that
 * names a class: the class's overhead.podFixed becomes the pod's when it has none (a class
 * missing from the input, or its scheduling part, gives a warning). */
int manifest_finish_runtime_classes(struct manifest_input *in, struct err *err);

/* manifest_load_pdb keeps a policy/v1 PodDisruptionBudget (in the input's default namespace
 * when it names none); a second one of the same namespace/name is an error. */
int manifest_load_pdb(struct manifest_ctx *c, json_t *obj, int line);
int manifest_load_service(struct manifest_ctx *c, json_t *obj, int line);

/* manifest_add_selector records a Service's or controller's selector (struct
 * manifest_selector; sel is copied shallowly, its strings must live in the input's arena). */
int manifest_add_selector(struct manifest_ctx *c, const char *owner_kind, const char *ns,
                          const char *name, const struct kube_label_selector *sel);
int manifest_load_namespace(struct manifest_ctx *c, json_t *obj, int line);

/* manifest_finish_namespaces adds a Namespace for each namespace of a pod (or of a bound pod
 * handed off) that no Namespace object defines. 0 or -ENOMEM with err set. */
int manifest_finish_namespaces(struct manifest_input *in, struct err *err);

/* manifest_finish_priorities resolves every pod's priority like the Priority admission
 * plugin (see manifest_input_finish). */
int manifest_finish_priorities(struct manifest_input *in, struct err *err);

#endif
