/* volumes.c - PersistentVolumeClaims, PersistentVolumes and StorageClasses of the input: the
 * fields kube-scheduler's VolumeBinding and VolumeZone read (docs/scheduling.md, "Volumes"). */
#include "manifest/volumes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/decode.h"
#include "kube/quantity.h"
#include "manifest/objects.h"

#define ANN_CLASS "volume.beta.kubernetes.io/storage-class"
#define ANN_SELECTED "volume.kubernetes.io/selected-node"
#define ANN_BOUND "pv.kubernetes.io/bind-completed"

/* jobj returns o[key] when it is an object, else NULL (absent or null); a value of another
 * type fails with "FIELD: must be an object". */
static int jobj(struct manifest_ctx *c, const json_t *o, const char *key, const char *field,
                int line, const json_t **out)
{
    const json_t *v = json_object_get(o, key);

    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_object(v))
        return manifest_fail(c, manifest_line_of(c, v, line), field, -EINVAL,
                             "Invalid value: must be an object");
    *out = v;
    return 0;
}

/* jstr reads o[key] as a string into the arena (*out = dflt when absent or null). */
static int jstr(struct manifest_ctx *c, const json_t *o, const char *key, const char *field,
                int line, const char *dflt, const char **out)
{
    const json_t *v = json_object_get(o, key);

    *out = dflt;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return manifest_fail(c, manifest_line_of(c, v, line), field, -EINVAL,
                             "Invalid value: must be a string");
    if (!(*out = arena_strdup(&c->in->arena, json_string_value(v))))
        return manifest_nomem(c);
    return 0;
}

/* meta reads metadata.name (required), the annotations and whether deletionTimestamp is set */
static int meta(struct manifest_ctx *c, const json_t *obj, int line, const char **name,
                const json_t **ann, bool *terminating)
{
    const json_t *m;
    int rc;

    if ((rc = jobj(c, obj, "metadata", "metadata", line, &m)) ||
        (rc = jstr(c, m, "name", "metadata.name", line, "", name)))
        return rc;
    if (!**name)
        return manifest_fail(c, line, "metadata.name", -EINVAL,
                             "Required value: name or generateName is required");
    if ((rc = jobj(c, m, "annotations", "metadata.annotations", line, ann)))
        return rc;
    *terminating = json_is_string(json_object_get(m, "deletionTimestamp"));
    return 0;
}

/* access reads spec.accessModes into KUBE_ACCESS_* bits */
static int access(struct manifest_ctx *c, const json_t *spec, int line, unsigned *out)
{
    static const char *const names[] = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany",
                                        "ReadWriteOncePod"};
    const json_t *a = json_object_get(spec, "accessModes"), *v;
    size_t i, k;

    *out = 0;
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a))
        return manifest_fail(c, manifest_line_of(c, a, line), "spec.accessModes", -EINVAL,
                             "Invalid value: must be an array");
    json_array_foreach(a, i, v)
    {
        for (k = 0; k < 4 && !(json_is_string(v) && !strcmp(json_string_value(v), names[k])); k++)
            ;
        if (k == 4)
            return manifest_fail(c, manifest_line_of(c, v, line), "spec.accessModes", -EINVAL,
                                 "Unsupported value: \"%s\": supported values: \"ReadOnlyMany\", "
                                 "\"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"",
                                 json_is_string(v) ? json_string_value(v) : "?");
        *out |= 1u << k;
    }
    return 0;
}

/* storage reads list[storage] (a quantity) into bytes; 0 when absent */
static int storage(struct manifest_ctx *c, const json_t *list, const char *field, int line,
                   int64_t *out)
{
    const json_t *v = json_object_get(list, "storage");
    char buf[32];
    struct err e;

    *out = 0;
    if (!v)
        return 0;
    if (json_is_integer(v)) {
        snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
    } else if (json_is_string(v)) {
        snprintf(buf, sizeof(buf), "%s", json_string_value(v));
    } else {
        return manifest_fail(c, manifest_line_of(c, v, line), field, -EINVAL,
                             "Invalid value: must be a quantity");
    }
    err_clear(&e);
    if (kube_quantity_parse(buf, out, NULL, &e) || *out < 0)
        return manifest_fail(c, manifest_line_of(c, v, line), field, -EINVAL, "%s",
                             *out < 0 ? "must be greater than or equal to 0" : e.msg);
    return 0;
}

static int volume_mode(struct manifest_ctx *c, const json_t *spec, int line, bool *block)
{
    const char *m;
    int rc;

    if ((rc = jstr(c, spec, "volumeMode", "spec.volumeMode", line, "Filesystem", &m)))
        return rc;
    if (strcmp(m, "Filesystem") && strcmp(m, "Block"))
        return manifest_fail(c, line, "spec.volumeMode", -EINVAL,
                             "Unsupported value: \"%s\": supported values: \"Block\", "
                             "\"Filesystem\"",
                             m);
    *block = !strcmp(m, "Block");
    return 0;
}

/* under puts the field path of a nested decoder's error below prefix */
static int under(struct err *e, const char *prefix, int rc)
{
    char f[sizeof(e->field) + 64];

    if (e) {
        snprintf(f, sizeof(f), "%s%s%s", prefix, e->field[0] ? "." : "", e->field);
        err_field(e, f);
    }
    return rc;
}

static const char *ann_get(const json_t *ann, const char *key)
{
    const json_t *v = json_object_get(ann, key);

    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* owner reads the claim's controller ownerReference when it names a Pod (a generic ephemeral
 * volume's claim: ephemeral.VolumeIsForPod) */
static int owner(struct manifest_ctx *c, const json_t *obj, int line, struct kube_pvc *v)
{
    const json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), *r;
    size_t i;

    v->owner_uid = "";
    json_array_foreach(refs, i, r)
    {
        const char *kind = manifest_jstr(r, "kind"), *name = manifest_jstr(r, "name");
        const char *uid = manifest_jstr(r, "uid");
        if (!json_is_true(json_object_get(r, "controller")))
            continue;
        if (kind && !strcmp(kind, "Pod") && name &&
            (!(v->owner_pod = arena_strdup(&c->in->arena, name)) ||
             !(v->owner_uid = arena_strdup(&c->in->arena, uid ? uid : ""))))
            return manifest_nomem(c);
        break;
    }
    (void)line;
    return 0;
}

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
    const json_t *ann, *spec, *status, *res = NULL, *req = NULL, *sel;
    const char *phase, *s;
    int rc;

    memset(&v, 0, sizeof(v));
    v.source_file = c->file;
    v.source_line = line;
    if ((rc = meta(c, obj, line, &v.name, &ann, &v.terminating)) ||
        (rc = jobj(c, obj, "spec", "spec", line, &spec)) ||
        (rc = jobj(c, obj, "status", "status", line, &status)))
        return rc;
    if (!(v.namespace_ = manifest_namespace_intern(c, manifest_object_namespace(c, obj))))
        return manifest_nomem(c);
    if ((s = ann_get(ann, ANN_CLASS)) && !(v.storage_class = arena_strdup(&in->arena, s)))
        return manifest_nomem(c);
    if ((s = ann_get(ann, ANN_SELECTED)) && !(v.selected_node = arena_strdup(&in->arena, s)))
        return manifest_nomem(c);
    v.bind_completed = json_object_get(ann, ANN_BOUND) != NULL;
    v.volume_name = "";
    if (spec) {
        const char *cls = NULL;
        if ((rc = jstr(c, spec, "storageClassName", "spec.storageClassName", line, NULL, &cls)) ||
            (rc = jstr(c, spec, "volumeName", "spec.volumeName", line, "", &v.volume_name)) ||
            (rc = access(c, spec, line, &v.access)) ||
            (rc = volume_mode(c, spec, line, &v.block)) ||
            (rc = jobj(c, spec, "resources", "spec.resources", line, &res)) ||
            (res && (rc = jobj(c, res, "requests", "spec.resources.requests", line, &req))) ||
            (req && (rc = storage(c, req, "spec.resources.requests[storage]", line, &v.request))))
            return rc;
        if (!v.storage_class)
            v.storage_class = cls;
        v.spec_class = cls;
        sel = json_object_get(spec, "selector");
        if (sel && !json_is_null(sel)) {
            v.has_selector = true;
            if ((rc = kube_label_selector_decode(sel, &in->arena, c->lines, c->file, &v.selector,
                                                 c->err)))
                return under(c->err, "spec.selector", rc);
        }
    }
    if ((rc = jstr(c, status, "phase", "status.phase", line, "", &phase)))
        return rc;
    v.lost = !strcmp(phase, "Lost");
    if ((rc = owner(c, obj, line, &v)))
        return rc;
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

static int cmp_label(const void *a, const void *b)
{
    return strcmp(((const struct kube_label *)a)->key, ((const struct kube_label *)b)->key);
}

/* labels reads metadata.labels as sorted string pairs (values not re-validated: the
 * PersistentVolume's labels only feed VolumeZone and claim selectors) */
static int labels(struct manifest_ctx *c, const json_t *obj, int line, struct kube_labels *out)
{
    const json_t *m = json_object_get(obj, "metadata"), *l = json_object_get(m, "labels"), *v;
    const char *k;
    size_t n = 0;

    memset(out, 0, sizeof(*out));
    if (!json_is_object(l) || !json_object_size(l))
        return 0;
    if (!(out->v = arena_alloc(&c->in->arena, json_object_size(l) * sizeof(*out->v))))
        return manifest_nomem(c);
    json_object_foreach((json_t *)l, k, v)
    {
        if (!json_is_string(v))
            return manifest_fail(c, manifest_line_of(c, v, line), "metadata.labels", -EINVAL,
                                 "Invalid value: label values must be strings");
        if (!(out->v[n].key = arena_strdup(&c->in->arena, k)) ||
            !(out->v[n].value = arena_strdup(&c->in->arena, json_string_value(v))))
            return manifest_nomem(c);
        n++;
    }
    out->n = n;
    qsort(out->v, n, sizeof(*out->v), cmp_label);
    return 0;
}

int manifest_load_pv(struct manifest_ctx *c, json_t *obj, int line)
{
    struct manifest_input *in = c->in;
    struct kube_pv v;
    const json_t *ann, *spec, *status, *cap = NULL, *ref = NULL, *na = NULL, *csi = NULL;
    const char *phase, *s;
    int rc;

    memset(&v, 0, sizeof(v));
    v.source_file = c->file;
    v.source_line = line;
    if ((rc = meta(c, obj, line, &v.name, &ann, &v.terminating)) ||
        (rc = labels(c, obj, line, &v.labels)) ||
        (rc = jobj(c, obj, "spec", "spec", line, &spec)) ||
        (rc = jobj(c, obj, "status", "status", line, &status)))
        return rc;
    v.storage_class = "";
    v.claim_uid = "";
    if (spec &&
        ((rc = jstr(c, spec, "storageClassName", "spec.storageClassName", line, "",
                    &v.storage_class)) ||
         (rc = access(c, spec, line, &v.access)) || (rc = volume_mode(c, spec, line, &v.block)) ||
         (rc = jobj(c, spec, "capacity", "spec.capacity", line, &cap)) ||
         (cap && (rc = storage(c, cap, "spec.capacity[storage]", line, &v.capacity))) ||
         (rc = jobj(c, spec, "claimRef", "spec.claimRef", line, &ref)) ||
         (rc = jobj(c, spec, "nodeAffinity", "spec.nodeAffinity", line, &na)) ||
         (rc = jobj(c, spec, "csi", "spec.csi", line, &csi))))
        return rc;
    if ((s = ann_get(ann, ANN_CLASS)) && !(v.storage_class = arena_strdup(&in->arena, s)))
        return manifest_nomem(c);
    if (ref) {
        if ((rc = jstr(c, ref, "name", "spec.claimRef.name", line, "", &v.claim_name)) ||
            (rc = jstr(c, ref, "namespace", "spec.claimRef.namespace", line, "", &v.claim_ns)) ||
            (rc = jstr(c, ref, "uid", "spec.claimRef.uid", line, "", &v.claim_uid)))
            return rc;
    }
    if (csi &&
        ((rc = jstr(c, csi, "driver", "spec.csi.driver", line, "", &v.csi_driver)) ||
         (rc = jstr(c, csi, "volumeHandle", "spec.csi.volumeHandle", line, "", &v.csi_handle))))
        return rc;
    if (spec && (rc = kube_intree_decode(spec, &in->arena, c->lines, c->file, &v.intree, c->err)))
        return under(c->err, "spec", rc);
    if (na) {
        const json_t *req = json_object_get(na, "required");
        if (req && !json_is_null(req)) {
            v.has_affinity = true;
            if ((rc = kube_node_selector_decode(req, &in->arena, c->lines, c->file, &v.affinity,
                                                c->err)))
                return under(c->err, "spec.nodeAffinity.required", rc);
        }
    }
    if ((rc = jstr(c, status, "phase", "status.phase", line, "", &phase)))
        return rc;
    v.available = !strcmp(phase, "Available");
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

/* topology reads one allowedTopologies term: matchLabelExpressions [{key, values}] */
static int topology(struct manifest_ctx *c, const json_t *t, int line,
                    struct kube_topology_term *out)
{
    const json_t *exprs = json_object_get(t, "matchLabelExpressions"), *e, *vals, *v;
    size_t i, k;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!json_is_array(exprs))
        return 0;
    if (!(out->exprs =
              arena_alloc(&c->in->arena, (json_array_size(exprs) + 1) * sizeof(*out->exprs))))
        return manifest_nomem(c);
    json_array_foreach(exprs, i, e)
    {
        struct kube_requirement *r = &out->exprs[out->nexprs++];
        memset(r, 0, sizeof(*r));
        r->op = KUBE_OP_IN;
        if ((rc = jstr(c, e, "key", "allowedTopologies.matchLabelExpressions.key", line, "",
                       &r->key)))
            return rc;
        vals = json_object_get(e, "values");
        if (!r->key[0] || !json_is_array(vals) || !json_array_size(vals))
            return manifest_fail(c, manifest_line_of(c, e, line),
                                 "allowedTopologies.matchLabelExpressions", -EINVAL,
                                 "Required value: a key and at least one value");
        if (!(r->values = arena_alloc(&c->in->arena, json_array_size(vals) * sizeof(char *))))
            return manifest_nomem(c);
        json_array_foreach(vals, k, v)
        {
            if (!json_is_string(v))
                return manifest_fail(c, manifest_line_of(c, v, line),
                                     "allowedTopologies.matchLabelExpressions.values", -EINVAL,
                                     "Invalid value: must be a string");
            if (!(r->values[r->nvalues++] = arena_strdup(&c->in->arena, json_string_value(v))))
                return manifest_nomem(c);
        }
    }
    return 0;
}

int manifest_load_storage_class(struct manifest_ctx *c, json_t *obj, int line)
{
    struct manifest_input *in = c->in;
    struct kube_storage_class v;
    const json_t *ann, *topo, *t;
    const char *mode;
    bool term;
    size_t i;
    int rc;

    memset(&v, 0, sizeof(v));
    v.source_file = c->file;
    v.source_line = line;
    if ((rc = meta(c, obj, line, &v.name, &ann, &term)) ||
        (rc = jstr(c, obj, "provisioner", "provisioner", line, "", &v.provisioner)) ||
        (rc = jstr(c, obj, "volumeBindingMode", "volumeBindingMode", line, "Immediate", &mode)))
        return rc;
    if (!v.provisioner[0])
        return manifest_fail(c, line, "provisioner", -EINVAL, "Required value");
    if (strcmp(mode, "Immediate") && strcmp(mode, "WaitForFirstConsumer"))
        return manifest_fail(c, line, "volumeBindingMode", -EINVAL,
                             "Unsupported value: \"%s\": supported values: \"Immediate\", "
                             "\"WaitForFirstConsumer\"",
                             mode);
    v.wait_for_first_consumer = !strcmp(mode, "WaitForFirstConsumer");
    topo = json_object_get(obj, "allowedTopologies");
    if (json_is_array(topo) && json_array_size(topo)) {
        if (!(v.topologies =
                  arena_alloc(&in->arena, json_array_size(topo) * sizeof(*v.topologies))))
            return manifest_nomem(c);
        json_array_foreach(
            topo, i, t) if ((rc = topology(c, t, line, &v.topologies[v.ntopologies++]))) return rc;
    }
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
        if ((rc = kube_csi_node_decode(obj, a, c->lines, c->file, &v, c->err)))
            return rc;
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
        if ((rc = kube_csi_driver_decode(obj, a, c->lines, c->file, &v, c->err)))
            return rc;
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
        if ((rc = kube_csi_capacity_decode(obj, a, c->lines, c->file, &v, c->err)))
            return rc;
        if (!(v.namespace_ = manifest_namespace_intern(c, manifest_object_namespace(c, obj))))
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
        if ((rc = kube_volume_attachment_decode(obj, a, c->lines, c->file, &v, c->err)))
            return rc;
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
