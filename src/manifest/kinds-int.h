/* kinds-int.h - documents and objects by kind: the dispatch from a parsed document to the
 * object steps, Lists and typed lists (NodeList, PodList, ...) through their items. */
#ifndef MANIFEST_KINDS_INT_H
#define MANIFEST_KINDS_INT_H

#include <jansson.h>

#include "kube/yaml.h"

/* manifest_load_document is the kube_yaml_doc_fn of every load (ctx a struct manifest_ctx):
 * it loads doc, or, for the items of a root List (list != NULL), each item as it comes. */
int manifest_load_document(json_t *doc, struct kube_lines *lines, json_t *list, void *ctx);

#endif
