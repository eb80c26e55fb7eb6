/* manifest.h - the input files of `gpusched simulate|explain|nodes` loaded into the object model.
 *
 * A struct sched_input collects the nodes, pods and PriorityClasses of every -f argument, in
 * input order. Workloads (Deployment, ReplicaSet, ReplicationController, StatefulSet, Job,
 * DaemonSet) are expanded to the pods their controllers would create, with deterministic names.
 * Every string and object lives in one arena. Files are parsed as they are read, one document
 * (or one item of a List) at a time, and each JSON tree is dropped once decoded, so memory
 * grows with the objects, not with the files. Loading is all-or-nothing per call: on error
 * nothing of that call is visible in the input. */
#ifndef SCHED_MANIFEST_H
#define SCHED_MANIFEST_H

#include <stddef.h>

#include "kube/arena.h"
#include "kube/err.h"
#include "kube/object.h"

#define SCHED_INPUT_MAX_PODS 1000000
#define SCHED_INPUT_MAX_NODES 100000
#define SCHED_INPUT_MAX_FILE ((size_t)1 << 30) /* bytes of one file */

/* Settings fixed for the life of one input (sched_input_init). */
struct sched_input_opts {
    const char *default_namespace; /* namespace of objects that name none; NULL = "default" */
    size_t max_pods;  /* a load or finish that would exceed it fails; 0 = SCHED_INPUT_MAX_PODS */
    size_t max_nodes; /* 0 = SCHED_INPUT_MAX_NODES */
};

struct sched_input_priv; /* workloads waiting for sched_input_finish, lookup tables */

struct sched_input {
    struct kube_arena arena; /* owns every string and array reachable from the members below
                                except the five top-level arrays, which are malloc()ed */
    struct kube_node *nodes; /* input order */
    size_t nnodes;
    struct kube_pod *pods; /* input order, workloads expanded in place; bound pods
                              (spec.nodeName set) included */
    size_t npods;
    struct kube_priority_class *classes; /* PriorityClass objects of the input, input order */
    size_t nclasses;
    /* Warnings, each one line without the program name or "warning: ", e.g.
     * "a.yaml: line 40: skipping kind Service"; print as "gpusched: warning: %s\n". */
    char **warnings;
    size_t nwarnings;
    int finished; /* set by a successful sched_input_finish */
    struct sched_input_opts opts;
    struct sched_input_priv *priv;
};

/* sched_input_init prepares an empty input; o may be NULL for the defaults (copied; the
 * default_namespace string is borrowed and must outlive the input). */
void sched_input_init(struct sched_input *in, const struct sched_input_opts *o);

/* sched_input_load_file loads one -f argument: a file, "-" for standard input, or a directory,
 * whose *.yaml, *.yml and *.json files (not recursive, hidden files skipped) load in strcmp
 * order like `kubectl -f DIR`. Each file may hold several YAML documents or JSON values. Kinds:
 * Node, Pod, Deployment, ReplicaSet, ReplicationController, StatefulSet, Job, DaemonSet,
 * PriorityClass, List and typed lists (NodeList, PodList, ...) through their items. Other
 * kinds are skipped with a warning. Returns 0, or a negative errno-style code with err naming
 * the file, line and field at fault ("a.yaml", 12, "spec.replicas", "Invalid value: ...").
 * On error the input is as it was before the call (arena memory may have been used).
 * Must not be called after sched_input_finish. */
int sched_input_load_file(struct sched_input *in, const char *path, struct kube_err *err);

/* sched_input_load_buffer is the same for len bytes at data, named name in messages (the
 * name is copied). */
int sched_input_load_buffer(struct sched_input *in, const char *name, const char *data,
                            size_t len, struct kube_err *err);

/* sched_input_finish completes the input once every file is loaded:
 * - expands each DaemonSet to one pod per node it may run on (nodeSelector and required
 *   node affinity match, no untolerated NoSchedule/NoExecute taint after the controller's
 *   default tolerations), pinned with matchFields metadata.name In [node], placed in pod
 *   order where the DaemonSet appeared;
 * - resolves priorities like the Priority admission plugin: an explicit spec.priority stays;
 *   priorityClassName takes the class's value (PriorityClasses of the input, plus the
 *   built-in system-cluster-critical and system-node-critical); no class name takes the
 *   globalDefault class, else 0;
 * - rejects duplicate node names and duplicate namespace/name pods.
 * Returns 0 or a negative code with err naming the file and line at fault; on error the
 * input is unusable except for sched_input_release. Call it exactly once. */
int sched_input_finish(struct sched_input *in, struct kube_err *err);

/* sched_input_find_pod returns the pod ns/name (ns NULL = the default namespace), or NULL. */
const struct kube_pod *sched_input_find_pod(const struct sched_input *in, const char *ns,
                                            const char *name);

/* sched_input_find_node returns the node called name, or NULL. */
const struct kube_node *sched_input_find_node(const struct sched_input *in, const char *name);

/* sched_input_release frees everything the input holds; it can be init'ed again. */
void sched_input_release(struct sched_input *in);

#endif
