/* volumes.c - PersistentVolumeClaims, PersistentVolumes, StorageClasses and the CSI objects of
 * the input (decoded by kube/decode_storage.c and decode_csi.c): their namespaces, the name
 * indices that find a claim or a volume, and the duplicates refused. */
#include "manifest/volumes-int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/decode.h"
#include "manifest/objects-int.h"

/* pvc_hash and pv_hash: the name indices' hashes; pvc_is and pv_is: entry i is that object */
static uint64_t pvc_hash(const char *ns, const char *name)
{
    return manifest_pod_key_hash(ns, name);
}

static uint64_t pv_hash(const char *name)
{
    return manifest_fnv1a(MANIFEST_FNV_OFFSET, name, strlen(name));
}

static bool pvc_is(const struct manifest_input *in, size_t i, const char *ns, const char *name)
{
    return !strcmp(in->pvcs[i].name, name) && !strcmp(in->pvcs[i].namespace_, ns);
}

static bool pv_is(const struct manifest_input *in, size_t i, const char *name)
{
    return !strcmp(in->pvs[i].name, name);
}

/* index_find returns the entry of ns/name (ns NULL: a volume) in x, or -1 */
static long index_find(const struct manifest_input *in, const struct manifest_index *x,
                       const char *ns, const char *name)
{
    size_t count = ns ? in->npvcs : in->npvs, h;

    if (!x->cap)
        return -1;
    for (h = (size_t)(ns ? pvc_hash(ns, name) : pv_hash(name)) & (x->cap - 1); x->slots[h];
         h = (h + 1) & (x->cap - 1)) {
        size_t i = x->slots[h] - 1;
        if (i < count && (ns ? pvc_is(in, i, ns, name) : pv_is(in, i, name)))
            return (long)i;
    }
    return -1;
}

/* index_add records the last claim (pvcs != 0) or volume, already known to be new; when x is
 * half full it is made anew from the live entries (dropping what rollbacks left). 0 or
 * -ENOMEM. */
static int index_add(struct manifest_input *in, struct manifest_index *x, int pvcs)
{
    size_t count = pvcs ? in->npvcs : in->npvs, from = count - 1, i, h;

    if ((x->n + 1) * 2 > x->cap) {
        size_t cap = 64;
        uint32_t *s;
        while (cap < count * 4)
            cap *= 2;
        if (!(s = calloc(cap, sizeof(*s))))
            return -ENOMEM;
        free(x->slots);
        x->slots = s;
        x->cap = cap;
        x->n = 0;
        from = 0;
    }
    for (i = from; i < count; i++) {
        for (h = (size_t)(pvcs ? pvc_hash(in->pvcs[i].namespace_, in->pvcs[i].name)
                               : pv_hash(in->pvs[i].name)) &
                 (x->cap - 1);
             x->slots[h]; h = (h + 1) & (x->cap - 1))
            ;
        x->slots[h] = (uint32_t)(i + 1);
        x->n++;
    }
    return 0;
}

int manifest_load_pvc(struct manifest_ctx *c, json_t *obj, int line)
{
    struct manifest_input *in = c->in;
    struct kube_pvc v;
    int rc;

    if ((rc = kube_pvc_decode(obj, &in->arena, manifest_dopts(c, line), &v, c->err)))
        return rc;
    v.source_file = c->file;
    v.source_line = line;
    if (!(v.namespace_ = manifest_namespace_intern(c, manifest_object_namespace(c))))
        return manifest_nomem(c);
    if (index_find(in, &in->priv->pvc_at, v.namespace_, v.name) >= 0)
        return manifest_fail(c, line, "metadata.name", -EEXIST,
                             "persistentvolumeclaims \"%s\" already exists in namespace "
                             "\"%s\"",
                             v.name, v.namespace_);
    if (manifest_grow((void **)&in->pvcs, &in->priv->cap_pvcs, in->npvcs + 1, sizeof(*in->pvcs)))
        return manifest_nomem(c);
    in->pvcs[in->npvcs++] = v;
    if (index_add(in, &in->priv->pvc_at, 1)) {
        in->npvcs--;
        return manifest_nomem(c);
    }
    return 0;
}

int manifest_load_pv(struct manifest_ctx *c, json_t *obj, int line)
{
    struct manifest_input *in = c->in;
    struct kube_pv v;
    int rc;

    if ((rc = kube_pv_decode(obj, &in->arena, manifest_dopts(c, line), &v, c->err)))
        return rc;
    v.source_file = c->file;
    v.source_line = line;
    if (index_find(in, &in->priv->pv_at, NULL, v.name) >= 0)
        return manifest_fail(c, line, "metadata.name", -EEXIST,
                             "persistentvolumes \"%s\" already exists", v.name);
    if (manifest_grow((void **)&in->pvs, &in->priv->cap_pvs, in->npvs + 1, sizeof(*in->pvs)))
        return manifest_nomem(c);
    in->pvs[in->npvs++] = v;
    if (index_add(in, &in->priv->pv_at, 0)) {
        in->npvs--;
        return manifest_nomem(c);
    }
    return 0;
}

int manifest_load_storage_class(struct manifest_ctx *c, json_t *obj, int line)
{
    struct manifest_input *in = c->in;
    struct kube_storage_class v;
    size_t i;
    int rc;

    if ((rc = kube_storage_class_decode(obj, &in->arena, manifest_dopts(c, line), &v, c->err)))
        return rc;
    v.source_file = c->file;
    v.source_line = line;
    for (i = 0; i < in->nstorage_classes; i++)
        if (!strcmp(in->storage_classes[i].name, v.name))
            return manifest_fail(c, line, "metadata.name", -EEXIST,
                                 "storageclasses.storage.k8s.io \"%s\" already exists", v.name);
    if (manifest_grow((void **)&in->storage_classes, &in->priv->cap_storage_classes,
                      in->nstorage_classes + 1, sizeof(*in->storage_classes)))
        return manifest_nomem(c);
    in->storage_classes[in->nstorage_classes++] = v;
    return 0;
}

/* ---------------------------------------------------------------- storage.k8s.io/v1 */

int manifest_load_storage(struct manifest_ctx *c, json_t *obj, int kind, int line)
{
    struct manifest_input *in = c->in;
    struct arena *a = &in->arena;
    size_t i;
    int rc;

    switch (kind) {
    case MANIFEST_KIND_CSI_NODE: {
        struct kube_csi_node v;
        if ((rc = kube_csi_node_decode(obj, a, manifest_dopts(c, line), &v, c->err)))
            return rc;
        v.source_file = c->file;
        for (i = 0; i < in->ncsi_nodes; i++)
            if (!strcmp(in->csi_nodes[i].name, v.name))
                return manifest_fail(c, line, "metadata.name", -EEXIST,
                                     "csinodes.storage.k8s.io \"%s\" already exists", v.name);
        if (manifest_grow((void **)&in->csi_nodes, &in->priv->cap_csi_nodes, in->ncsi_nodes + 1,
                          sizeof(v)))
            return manifest_nomem(c);
        in->csi_nodes[in->ncsi_nodes++] = v;
        return 0;
    }
    case MANIFEST_KIND_CSI_DRIVER: {
        struct kube_csi_driver v;
        if ((rc = kube_csi_driver_decode(obj, a, manifest_dopts(c, line), &v, c->err)))
            return rc;
        v.source_file = c->file;
        for (i = 0; i < in->ncsi_drivers; i++)
            if (!strcmp(in->csi_drivers[i].name, v.name))
                return manifest_fail(c, line, "metadata.name", -EEXIST,
                                     "csidrivers.storage.k8s.io \"%s\" already exists", v.name);
        if (manifest_grow((void **)&in->csi_drivers, &in->priv->cap_csi_drivers,
                          in->ncsi_drivers + 1, sizeof(v)))
            return manifest_nomem(c);
        in->csi_drivers[in->ncsi_drivers++] = v;
        return 0;
    }
    case MANIFEST_KIND_CSI_CAPACITY: {
        struct kube_csi_capacity v;
        if ((rc = kube_csi_capacity_decode(obj, a, manifest_dopts(c, line), &v, c->err)))
            return rc;
        v.source_file = c->file;
        if (!(v.namespace_ = manifest_namespace_intern(c, manifest_object_namespace(c))))
            return manifest_nomem(c);
        for (i = 0; i < in->ncsi_capacities; i++)
            if (!strcmp(in->csi_capacities[i].name, v.name) &&
                !strcmp(in->csi_capacities[i].namespace_, v.namespace_))
                return manifest_fail(c, line, "metadata.name", -EEXIST,
                                     "csistoragecapacities.storage.k8s.io \"%s\" already exists "
                                     "in namespace \"%s\"",
                                     v.name, v.namespace_);
        if (manifest_grow((void **)&in->csi_capacities, &in->priv->cap_csi_capacities,
                          in->ncsi_capacities + 1, sizeof(v)))
            return manifest_nomem(c);
        in->csi_capacities[in->ncsi_capacities++] = v;
        return 0;
    }
    default: {
        struct kube_volume_attachment v;
        if ((rc = kube_volume_attachment_decode(obj, a, manifest_dopts(c, line), &v, c->err)))
            return rc;
        v.source_file = c->file;
        for (i = 0; i < in->nvolume_attachments; i++)
            if (!strcmp(in->volume_attachments[i].name, v.name))
                return manifest_fail(c, line, "metadata.name", -EEXIST,
                                     "volumeattachments.storage.k8s.io \"%s\" already exists",
                                     v.name);
        if (manifest_grow((void **)&in->volume_attachments, &in->priv->cap_volume_attachments,
                          in->nvolume_attachments + 1, sizeof(v)))
            return manifest_nomem(c);
        in->volume_attachments[in->nvolume_attachments++] = v;
        return 0;
    }
    }
}
