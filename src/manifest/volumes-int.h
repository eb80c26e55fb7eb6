/* volumes-int.h - PersistentVolumeClaim, PersistentVolume and StorageClass objects into the input
 * (in->pvcs, in->pvs, in->storage_classes): decoded with the API server's defaults, a second
 * object of the same name is an error. 0 or the error in c->err. */
#ifndef MANIFEST_VOLUMES_INT_H
#define MANIFEST_VOLUMES_INT_H

#include <jansson.h>

#include "manifest/state-int.h"

int manifest_load_pvc(struct manifest_ctx *c, json_t *obj, int line);
int manifest_load_pv(struct manifest_ctx *c, json_t *obj, int line);
int manifest_load_storage_class(struct manifest_ctx *c, json_t *obj, int line);

/* manifest_load_storage loads a CSINode, CSIDriver, CSIStorageCapacity or VolumeAttachment
 * (kind, a MANIFEST_KIND_*) into in->csi_nodes, ... (a second one of the same name fails
 * with the API server's AlreadyExists text). */
int manifest_load_storage(struct manifest_ctx *c, json_t *obj, int kind, int line);

#endif
