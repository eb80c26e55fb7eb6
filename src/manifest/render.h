/* render.h - a loaded input as the objects the API would hold: every workload replaced in
 * place by the pods its controller creates (and a Deployment by its ReplicaSet first), for
 * `gpusched render` and, through it, the kube-scheduler oracle (docs/testing.md). */
#ifndef MANIFEST_RENDER_H
#define MANIFEST_RENDER_H

#include <jansson.h>

#include "base/err.h"
#include "manifest/manifest.h"

/* manifest_render_each hands fn, one at a time, the items of the v1 List of the objects of in
 * (which was loaded with opts.keep_objects and finished), so that memory holds one item, not
 * the List: in input order, Deployments, Jobs and
 * DaemonSets replaced by their pods (a Deployment's ReplicaSet NAME-<pod-template-hash>
 * before them), ReplicaSets, StatefulSets and ReplicationControllers followed by theirs, every
 * other object as read. A controller's pod has apiVersion/kind, its generated name, the
 * namespace, the template's metadata with the controller's labels, an ownerReference to the
 * controller (uid derived from its kind, namespace and name), the template's spec with
 * spec.priority, spec.priorityClassName (the globalDefault class's when it names none) and
 * spec.preemptionPolicy resolved, and for a DaemonSet the node pinning and its tolerations.
 * Bare pods are as given, with metadata.namespace (and a generated name) filled in; objects
 * of namespaced kinds get metadata.namespace. fn(ctx, item) takes the item (a new reference)
 * and returns 0, or a code that stops the walk and is returned. Returns 0 or -ENOMEM with err
 * set. */
typedef int (*manifest_render_fn)(void *ctx, json_t *item);
int manifest_render_each(const struct manifest_input *in, manifest_render_fn fn, void *ctx,
                         struct err *err);

#endif
