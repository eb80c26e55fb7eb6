/* dra.c - DeviceClasses, ResourceSlices, ResourceClaims, ResourceClaimTemplates and
 * DeviceTaintRules of a manifest into the input: decoded (kube/decode_dra*.c), kept in input
 * order, a repeated name refused as the API server refuses it. */
#include "manifest/dra-int.h"

#include <errno.h>
#include <string.h>

#include "kube/decode.h"
#include "manifest/objects-int.h"

/* grow *arr (n used, *cap slots of size) by one; 0 or -ENOMEM */
#define PUSH(arr, n, cap, v)                                                                       \
    (manifest_grow((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr))) ? -ENOMEM                     \
                                                                     : ((arr)[(n)++] = (v), 0))

static int exists(struct manifest_ctx *c, int line, const char *resource, const char *name,
                  const char *ns)
{
    if (ns)
        return manifest_fail(c, line, "metadata.name", -EEXIST,
                             "%s.resource.k8s.io \"%s\" already exists in namespace \"%s\"",
                             resource, name, ns);
    return manifest_fail(c, line, "metadata.name", -EEXIST,
                         "%s.resource.k8s.io \"%s\" already exists", resource, name);
}

int manifest_load_dra(struct manifest_ctx *c, json_t *obj, int kind, int line)
{
    struct manifest_input *in = c->in;
    struct manifest_input_priv *p = in->priv;
    struct arena *a = &in->arena;
    const struct kube_decode_opts *o = manifest_dopts(c, line);
    size_t i;
    int rc;

    switch (kind) {
    case MANIFEST_KIND_DEVICE_CLASS: {
        struct kube_device_class v;

        if ((rc = kube_device_class_decode(obj, a, o, &v, c->err)))
            return rc;
        v.source_file = c->file;
        for (i = 0; i < in->ndevice_classes; i++)
            if (!strcmp(in->device_classes[i].name, v.name))
                return exists(c, line, "deviceclasses", v.name, NULL);
        return PUSH(in->device_classes, in->ndevice_classes, p->cap_device_classes, v)
                   ? manifest_nomem(c)
                   : 0;
    }
    case MANIFEST_KIND_RESOURCE_SLICE: {
        struct kube_resource_slice v;

        if ((rc = kube_resource_slice_decode(obj, a, o, &v, c->err)))
            return rc;
        v.source_file = c->file;
        for (i = 0; i < in->nresource_slices; i++)
            if (!strcmp(in->resource_slices[i].name, v.name))
                return exists(c, line, "resourceslices", v.name, NULL);
        return PUSH(in->resource_slices, in->nresource_slices, p->cap_resource_slices, v)
                   ? manifest_nomem(c)
                   : 0;
    }
    case MANIFEST_KIND_RESOURCE_CLAIM: {
        struct kube_resource_claim v;

        if ((rc = kube_resource_claim_decode(obj, a, o, &v, c->err)))
            return rc;
        v.source_file = c->file;
        if (!(v.namespace_ = manifest_namespace_intern(c, manifest_object_namespace(c))))
            return manifest_nomem(c);
        for (i = 0; i < in->nresource_claims; i++)
            if (!strcmp(in->resource_claims[i].name, v.name) &&
                !strcmp(in->resource_claims[i].namespace_, v.namespace_))
                return exists(c, line, "resourceclaims", v.name, v.namespace_);
        return PUSH(in->resource_claims, in->nresource_claims, p->cap_resource_claims, v)
                   ? manifest_nomem(c)
                   : 0;
    }
    case MANIFEST_KIND_RESOURCE_CLAIM_TEMPLATE: {
        struct kube_resource_claim_template v;

        if ((rc = kube_resource_claim_template_decode(obj, a, o, &v, c->err)))
            return rc;
        v.source_file = c->file;
        if (!(v.namespace_ = manifest_namespace_intern(c, manifest_object_namespace(c))))
            return manifest_nomem(c);
        for (i = 0; i < in->nclaim_templates; i++)
            if (!strcmp(in->claim_templates[i].name, v.name) &&
                !strcmp(in->claim_templates[i].namespace_, v.namespace_))
                return exists(c, line, "resourceclaimtemplates", v.name, v.namespace_);
        return PUSH(in->claim_templates, in->nclaim_templates, p->cap_claim_templates, v)
                   ? manifest_nomem(c)
                   : 0;
    }
    default: {
        struct kube_device_taint_rule v;

        if ((rc = kube_device_taint_rule_decode(obj, a, o, &v, c->err)))
            return rc;
        v.source_file = c->file;
        for (i = 0; i < in->ndevice_taint_rules; i++)
            if (!strcmp(in->device_taint_rules[i].name, v.name))
                return exists(c, line, "devicetaintrules", v.name, NULL);
        return PUSH(in->device_taint_rules, in->ndevice_taint_rules, p->cap_device_taint_rules, v)
                   ? manifest_nomem(c)
                   : 0;
    }
    }
}
