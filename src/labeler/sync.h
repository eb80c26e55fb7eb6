/* sync.h - the reconcile step of node sync, as a pure function.
 *
 * Input: the Node as the API server returned it (labels, annotations, resourceVersion), the
 * labels gpulabel wants now and the schemas enabled. Output: one JSON merge patch, or nothing
 * when the node already carries exactly the right labels and ownership annotation. gpulabel
 * records the keys it wrote in the annotation LABELER_OWNED_ANNOTATION and only ever removes
 * keys listed there; every other label on the node is left alone. No I/O happens here. */
#ifndef LABELER_SYNC_H
#define LABELER_SYNC_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/err.h"
#include "labeler/labels.h"

/* Node annotation holding the label keys gpulabel wrote: comma-separated, sorted, no spaces
 * (like NFD's nfd.node.kubernetes.io/feature-labels). Absent when gpulabel owns no label. */
#define LABELER_OWNED_ANNOTATION "gpulabel.io/owned-labels"

/* Every schema gpulabel knows; a key listed in the annotation is only ever removed when it
 * belongs to one of them, so an edited annotation cannot make gpulabel delete foreign labels. */
#define LABELER_SCHEMAS_ALL (LABELER_SCHEMA_ACK | LABELER_SCHEMA_GFD)

struct labeler_sync_plan {
    json_t *patch;   /* merge patch body; NULL when nothing is to be written. Owned. */
    size_t nset;     /* labels added or given a new value */
    size_t nremoved; /* owned labels removed (set to null) */
    bool annotation; /* the ownership annotation is written or removed */
};

/* labeler_sync_plan_compute compares node (a v1 Node object, borrowed) with desired (sorted,
 * unique keys, every key in `schemas`) and fills plan:
 *   - every desired label whose value on the node differs (or is missing) is set;
 *   - every key listed in the node's ownership annotation that gpulabel could have written
 *     and that is not desired any more (no GPU left, schema switched off) is set to null when
 *     the node still carries it;
 *   - the annotation is set to the sorted desired keys (or null when desired is empty);
 *   - when pin_resource_version is true and anything is written, metadata.resourceVersion of
 *     node is included, so a node changed since it was read yields 409 instead of a write
 *     based on a stale ownership list.
 * plan->patch is NULL when the node is already right. Returns 0, or -EINVAL (err says why)
 * when desired breaks its contract or node is not an object. The caller releases plan with
 * labeler_sync_plan_release (also after a failure). */
int labeler_sync_plan_compute(const json_t *node, const struct labeler_labels *desired,
                              unsigned schemas, bool pin_resource_version,
                              struct labeler_sync_plan *plan, struct err *err);

/* labeler_sync_plan_release frees the patch; the plan is zeroed. Accepts NULL. */
void labeler_sync_plan_release(struct labeler_sync_plan *plan);

/* labeler_sync_patch_dump returns the patch as compact JSON with sorted keys (deterministic
 * bytes), caller frees with free(); NULL when out of memory or plan->patch is NULL. */
char *labeler_sync_patch_dump(const struct labeler_sync_plan *plan);

/* labeler_sync_owned_join writes the ownership annotation value for a label set (sorted keys
 * joined with ',') into buf and returns buf; "" for an empty set. Returns NULL when buf is
 * too small. */
const char *labeler_sync_owned_join(const struct labeler_labels *l, char *buf, size_t size);

#endif
