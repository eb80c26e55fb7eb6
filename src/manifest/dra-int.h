/* dra-int.h - the resource.k8s.io/v1 objects into the input (in->device_classes,
 * in->resource_slices, in->resource_claims, in->claim_templates, in->device_taint_rules):
 * decoded by kube/decode_dra*.c, the namespaced ones placed in the object's namespace, a second
 * object of the same name is the API server's AlreadyExists. */
#ifndef MANIFEST_DRA_INT_H
#define MANIFEST_DRA_INT_H

#include <jansson.h>

#include "manifest/state-int.h"

/* manifest_load_dra loads one object of kind (a MANIFEST_KIND_* of resource.k8s.io). 0 or the
 * error in c->err. */
int manifest_load_dra(struct manifest_ctx *c, json_t *obj, int kind, int line);

#endif
