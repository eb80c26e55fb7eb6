/* workload.h - controllers expanded to the pods they would create: Deployment, ReplicaSet,
 * ReplicationController, StatefulSet and Job at once, DaemonSets once every node is known. */
#ifndef MANIFEST_WORKLOAD_H
#define MANIFEST_WORKLOAD_H

#include <jansson.h>

#include "manifest/state.h"

/* manifest_load_workload validates workload obj of kind k (apiVersion av, at line) and adds
 * its pods to the input, or, for a DaemonSet, keeps its template for
 * manifest_finish_daemonsets. 0 or the error in c->err. */
int manifest_load_workload(struct manifest_ctx *c, json_t *obj, const struct manifest_kind *k,
                           const char *av, int line);

/* manifest_finish_daemonsets expands each kept DaemonSet to one pod per node it may run on,
 * placed where the DaemonSet appeared (see manifest_input_finish). */
int manifest_finish_daemonsets(struct manifest_input *in, struct err *err);

#endif
