/* checkpoint.h - the claims the DRA plugin has prepared, kept in a file so that they survive
 * an agent restart: a NodePrepareResources for a claim already prepared answers from it, and a
 * NodeUnprepareResources after a restart still finds what to remove.
 *
 * The file (<plugins-dir>/<driver>/checkpoint.json) is JSON:
 *   {"version": 1, "claims": {"<claim UID>": {"namespace": "...", "name": "...",
 *     "devices": [{"request": "...", "pool": "...", "device": "gpu-0", "cdi": ["..."]}]}}}
 * and is replaced atomically on every change. */
#ifndef DRAPLUGIN_CHECKPOINT_H
#define DRAPLUGIN_CHECKPOINT_H

#include <jansson.h>

#include "base/err.h"

#define DRA_CHECKPOINT_MAX (16u << 20) /* a larger file is not one we wrote */

/* dra_checkpoint_load reads path into *claims (a new object; empty when the file is missing).
 * A file that cannot be read or is not a checkpoint fails with err naming it and the fault;
 * *claims is then an empty object all the same. The caller decrefs *claims. */
int dra_checkpoint_load(const char *path, json_t **claims, struct err *err);

/* dra_checkpoint_save writes claims to path atomically (mode 0600), through the spare file of
 * dra_write_swap (cdi.h), which stays beside it until the caller removes it. */
int dra_checkpoint_save(const char *path, const json_t *claims, struct err *err);

#endif
