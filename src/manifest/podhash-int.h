/* podhash-int.h - a Deployment's pod-template-hash exactly as kube-controller-manager v1.37.2
 * computes it (pkg/controller ComputeHash), so the ReplicaSet and pod names of files match
 * the real cluster's up to the pods' random suffixes. */
#ifndef MANIFEST_PODHASH_INT_H
#define MANIFEST_PODHASH_INT_H

#include <stdint.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/err.h"

/* manifest_pod_template_hash writes into out the pod-template-hash of the Deployment whose
 * spec.template is tmpl (JSON, as written in the manifest; borrowed) and whose
 * status.collisionCount is *collision_count (NULL: none): FNV-32a over go-spew's %#v of the
 * v1.PodTemplateSpec the controller reads back from the API server (its defaults applied,
 * quantities rounded to milli and canonical, empty lists and maps gone), then the decimal
 * digits through rand.SafeEncodeString: 1-10 characters and a NUL. Returns 0; -ENOTSUP when the
 * template holds what this cannot print exactly (a quantity beyond int64's fast path, a set
 * timestamp, managedFields, a value of the wrong JSON type), -E2BIG when the printed template
 * would exceed 16 MiB, -ENOMEM; err says which. */
int manifest_pod_template_hash(const json_t *tmpl, const int32_t *collision_count, char out[11],
                               struct err *err);

/* manifest_pod_template_print appends to out the text manifest_pod_template_hash hashes (what
 * go-spew prints of the template, without the collision count): for tests and for finding
 * which field two hashes disagree on. Returns as manifest_pod_template_hash. */
int manifest_pod_template_print(const json_t *tmpl, struct buf *out, struct err *err);

#endif
