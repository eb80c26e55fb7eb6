/* workload-int.h - controllers expanded to the pods they would create, once the whole input is
 * known: Deployment, ReplicaSet, ReplicationController, StatefulSet, Job and DaemonSet, each
 * creating only the pods that its active pods in the input do not stand for. */
#ifndef MANIFEST_WORKLOAD_INT_H
#define MANIFEST_WORKLOAD_INT_H

#include <jansson.h>

#include "manifest/state-int.h"

/* manifest_load_workload validates workload obj of kind k (apiVersion av, at line) and keeps
 * its template for manifest_finish_workloads (with c->cluster, only its selector: its pods
 * are the cluster's). 0 or the error in c->err. */
int manifest_load_workload(struct manifest_ctx *c, json_t *obj, const struct manifest_kind *k,
                           const char *av, int line);

/* manifest_finish_workloads creates the pods of every kept workload as its controller would,
 * placed where the workload appeared (see manifest_input_finish): a ReplicaSet or
 * ReplicationController creates replicas minus its active pods; a Deployment nothing when a
 * ReplicaSet it controls is in the input, else its ReplicaSet's pods; a StatefulSet the
 * missing ordinals, an Indexed Job the indexes no active pod has, another Job parallelism
 * minus its active pods; a DaemonSet one pod per node it may run on and has no pod on. */
int manifest_finish_workloads(struct manifest_input *in, struct err *err);

#endif
