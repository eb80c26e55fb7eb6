/* source-int.h - where manifests are read from: a file, standard input ("-"), a directory of
 * *.yaml, *.yml and *.json files, or a buffer; each is pulled by the YAML parser in chunks and
 * its documents handed to kinds.c one at a time. */
#ifndef MANIFEST_SOURCE_INT_H
#define MANIFEST_SOURCE_INT_H

#include <stddef.h>

#include "base/err.h"
#include "manifest/manifest.h"

/* manifest_load_buffer loads the documents of len bytes at data, named name in messages. */
int manifest_load_buffer(struct manifest_input *in, const char *name, const char *data, size_t len,
                         struct err *err);

/* manifest_load_path loads a file, "-" for standard input, or a directory's manifest files
 * (not recursive, hidden files skipped) in strcmp order, like kubectl -f DIR. */
int manifest_load_path(struct manifest_input *in, const char *path, struct err *err);

#endif
