/* names-int.h - the names the API server and the controllers give pods: generateName suffixes and
 * pod-template-hash, derived from hashes so the same input always gives the same names. */
#ifndef MANIFEST_NAMES_INT_H
#define MANIFEST_NAMES_INT_H

#include <stddef.h>

#include <jansson.h>

#include "manifest/state-int.h"

/* manifest_template_hash writes a Deployment's pod-template-hash for the template tmpl: the
 * controller's (manifest_pod_template_hash, no collision count), or for a template that one
 * cannot print exactly 10 characters of the safe alphabet from a hash of its canonical JSON. */
void manifest_template_hash(char out[11], const json_t *tmpl);

/* manifest_generated_name picks a generateName-style "<base><5 chars>" not used yet in the
 * namespace (base cut to 58 characters), varied by index; an arena copy, or NULL when out of
 * memory or no free name is found. */
const char *manifest_generated_name(struct manifest_ctx *c, const char *ns, const char *base,
                                    size_t index);

#endif
