/* kinds.c - a parsed document to the objects it holds (see kinds.h): kind and apiVersion
 * checked against the kinds the loader knows, Lists unwound, other kinds skipped with a
 * warning. */
#include "manifest/kinds-int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/quote.h"
#include "kube/decode.h"
#include "manifest/dra-int.h"
#include "manifest/objects-int.h"
#include "manifest/volumes-int.h"
#include "manifest/state-int.h"
#include "manifest/workload-int.h"

#define LIST_MAX_DEPTH 8

static const struct manifest_kind kinds[] = {
    {"Node", "", NULL, MANIFEST_KIND_NODE},
    {"Pod", "", NULL, MANIFEST_KIND_POD},
    {"Deployment", "apps", "extensions", MANIFEST_KIND_DEPLOYMENT},
    {"ReplicaSet", "apps", "extensions", MANIFEST_KIND_REPLICASET},
    {"ReplicationController", "", NULL, MANIFEST_KIND_REPLICATION_CONTROLLER},
    {"StatefulSet", "apps", NULL, MANIFEST_KIND_STATEFULSET},
    {"Job", "batch", NULL, MANIFEST_KIND_JOB},
    {"DaemonSet", "apps", "extensions", MANIFEST_KIND_DAEMONSET},
    {"PriorityClass", "scheduling.k8s.io", NULL, MANIFEST_KIND_PRIORITY_CLASS},
    {"PodDisruptionBudget", "policy", NULL, MANIFEST_KIND_PDB},
    {"RuntimeClass", "node.k8s.io", NULL, MANIFEST_KIND_RUNTIME_CLASS},
    {"Service", "", NULL, MANIFEST_KIND_SERVICE},
    {"Namespace", "", NULL, MANIFEST_KIND_NAMESPACE},
    {"PersistentVolumeClaim", "", NULL, MANIFEST_KIND_PVC},
    {"PersistentVolume", "", NULL, MANIFEST_KIND_PV},
    {"StorageClass", "storage.k8s.io", NULL, MANIFEST_KIND_STORAGE_CLASS},
    {"CSINode", "storage.k8s.io", NULL, MANIFEST_KIND_CSI_NODE},
    {"CSIDriver", "storage.k8s.io", NULL, MANIFEST_KIND_CSI_DRIVER},
    {"CSIStorageCapacity", "storage.k8s.io", NULL, MANIFEST_KIND_CSI_CAPACITY},
    {"VolumeAttachment", "storage.k8s.io", NULL, MANIFEST_KIND_VOLUME_ATTACHMENT},
    {"DeviceClass", "resource.k8s.io", NULL, MANIFEST_KIND_DEVICE_CLASS},
    {"ResourceSlice", "resource.k8s.io", NULL, MANIFEST_KIND_RESOURCE_SLICE},
    {"ResourceClaim", "resource.k8s.io", NULL, MANIFEST_KIND_RESOURCE_CLAIM},
    {"ResourceClaimTemplate", "resource.k8s.io", NULL, MANIFEST_KIND_RESOURCE_CLAIM_TEMPLATE},
    {"DeviceTaintRule", "resource.k8s.io", NULL, MANIFEST_KIND_DEVICE_TAINT_RULE},
};

static const struct manifest_kind *kind_lookup(const char *kind)
{
    size_t i;

    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (!strcmp(kinds[i].kind, kind))
            return &kinds[i];
    return NULL;
}

static int api_version_ok(const struct manifest_kind *k, const char *av)
{
    const char *slash = strchr(av, '/');
    size_t glen = slash ? (size_t)(slash - av) : 0;

    if (!*k->group)
        return !strcmp(av, "v1");
    if (!slash || !slash[1])
        return 0;
    return (strlen(k->group) == glen && !strncmp(av, k->group, glen)) ||
           (k->group2 && strlen(k->group2) == glen && !strncmp(av, k->group2, glen));
}

static int load_object(struct manifest_ctx *c, json_t *obj, int depth, const char *inferred_kind,
                       const char *inferred_av, int parent_line);
static int load_object_at(struct manifest_ctx *c, json_t *obj, int depth, const char *inferred_kind,
                          const char *inferred_av, int line);

static int load_list(struct manifest_ctx *c, json_t *obj, const char *kind, const char *av,
                     int depth, int line)
{
    const json_t *items;
    char item_kind[128] = "";
    size_t i, klen = strlen(kind);
    int rc;

    if (depth >= LIST_MAX_DEPTH)
        return manifest_fail(c, line, "items", -EINVAL, "lists nested too deeply");
    if ((rc = kube_list_items_decode(obj, kind, manifest_dopts(c, line), &items, c->err)) || !items)
        return rc;
    /* items of a typed list (PodList from the API) may leave out their kind */
    if (strcmp(kind, "List") && klen - 4 < sizeof(item_kind))
        snprintf(item_kind, sizeof(item_kind), "%.*s", (int)(klen - 4), kind);
    for (i = 0; i < json_array_size(items); i++) {
        json_t *it = json_array_get(items, i);

        rc = load_object(c, it, depth + 1, item_kind[0] ? item_kind : NULL, av,
                         manifest_line_of(c, items, line));
        if (rc)
            return rc;
    }
    return 0;
}

static int load_object(struct manifest_ctx *c, json_t *obj, int depth, const char *inferred_kind,
                       const char *inferred_av, int parent_line)
{
    int line = manifest_line_of(c, obj, parent_line);
    int rc = load_object_at(c, obj, depth, inferred_kind, inferred_av, line);

    /* decoders may not know the line of a field they found missing: name the object's */
    if (rc && c->err) {
        if (!c->err->file[0])
            err_at(c->err, c->file, c->err->line, c->err->column);
        if (c->err->line <= 0)
            c->err->line = line;
    }
    return rc;
}

static int load_object_at(struct manifest_ctx *c, json_t *obj, int depth, const char *inferred_kind,
                          const char *inferred_av, int line)
{
    const struct kube_decode_opts *o = manifest_dopts(c, line);
    const char *kind, *av;
    const struct manifest_kind *k;
    size_t klen;
    int rc;

    if ((rc = kube_type_meta_decode(obj, o, &kind, &av, c->err)))
        return rc;
    if (!kind)
        kind = inferred_kind;
    if (!av)
        av = inferred_av;
    if (!kind || !*kind)
        return manifest_fail(c, line, "kind", -EINVAL, "Required value: kind not set");
    if (!av || !*av)
        return manifest_fail(c, line, "apiVersion", -EINVAL, "Required value: apiVersion not set");
    klen = strlen(kind);
    if (!strcmp(kind, "List"))
        return load_list(c, obj, kind, av, depth, line);
    if (klen > 4 && !strcmp(kind + klen - 4, "List")) {
        char item[128];

        snprintf(item, sizeof(item), "%.*s", (int)(klen - 4), kind);
        if (kind_lookup(item) || json_is_array(json_object_get(obj, "items")))
            return load_list(c, obj, kind, av, depth, line);
    }

    c->in->nread++;
    k = kind_lookup(kind);
    if (!k && c->in->opts.keep_objects)
        return manifest_keep_object(c->in, obj, kind, 0) ? manifest_nomem(c) : 0;
    if (!k)
        return manifest_warn(c->in, "%s: line %d: skipping kind %s", c->file,
                             manifest_line_of(c, json_object_get(obj, "kind"), line), kind)
                   ? manifest_nomem(c)
                   : 0;
    if (!api_version_ok(k, av))
        return manifest_fail(c, manifest_line_of(c, json_object_get(obj, "apiVersion"), line),
                             "apiVersion", -EINVAL, "no matches for kind \"%s\" in version \"%s\"",
                             kind, av);
    if (!strcmp(k->group, "resource.k8s.io") && strcmp(av, "resource.k8s.io/v1"))
        /* the beta versions' shapes differ (no `exactly`, `basic` devices) */
        return manifest_fail(c, manifest_line_of(c, json_object_get(obj, "apiVersion"), line),
                             "apiVersion", -EINVAL,
                             "%s is read as resource.k8s.io/v1 only, not \"%s\" (kubectl "
                             "get -o yaml shows the v1 form)",
                             kind, av);
    if ((rc = kube_object_names_decode(obj, kind, o, &c->names, c->err)))
        return rc;
    if (!c->names.name || !*c->names.name) {
        const char *gen = c->names.generate_name;
        const json_t *md = json_object_get(obj, "metadata");

        if (k->id != MANIFEST_KIND_POD || !gen || !*gen)
            return manifest_fail(c, manifest_line_of(c, md, line), "metadata.name", -EINVAL,
                                 k->id == MANIFEST_KIND_POD
                                     ? "Required value: name or generateName is required"
                                     : "Required value: name is required");
    }
    {
        size_t npods = c->in->npods, nds = c->in->priv->nds;

        switch (k->id) {
        case MANIFEST_KIND_NODE:
            rc = manifest_load_node(c, obj, line);
            break;
        case MANIFEST_KIND_POD:
            rc = manifest_load_pod(c, obj, line);
            break;
        case MANIFEST_KIND_PRIORITY_CLASS:
            rc = manifest_load_priority_class(c, obj, line);
            break;
        case MANIFEST_KIND_RUNTIME_CLASS:
            rc = manifest_load_runtime_class(c, obj, line);
            break;
        case MANIFEST_KIND_PDB:
            rc = manifest_load_pdb(c, obj, line);
            break;
        case MANIFEST_KIND_SERVICE:
            rc = manifest_load_service(c, obj, line);
            break;
        case MANIFEST_KIND_NAMESPACE:
            rc = manifest_load_namespace(c, obj, line);
            break;
        case MANIFEST_KIND_PVC:
            rc = manifest_load_pvc(c, obj, line);
            break;
        case MANIFEST_KIND_PV:
            rc = manifest_load_pv(c, obj, line);
            break;
        case MANIFEST_KIND_STORAGE_CLASS:
            rc = manifest_load_storage_class(c, obj, line);
            break;
        case MANIFEST_KIND_CSI_NODE:
        case MANIFEST_KIND_CSI_DRIVER:
        case MANIFEST_KIND_CSI_CAPACITY:
        case MANIFEST_KIND_VOLUME_ATTACHMENT:
            rc = manifest_load_storage(c, obj, k->id, line);
            break;
        case MANIFEST_KIND_DEVICE_CLASS:
        case MANIFEST_KIND_RESOURCE_SLICE:
        case MANIFEST_KIND_RESOURCE_CLAIM:
        case MANIFEST_KIND_RESOURCE_CLAIM_TEMPLATE:
        case MANIFEST_KIND_DEVICE_TAINT_RULE:
            rc = manifest_load_dra(c, obj, k->id, line);
            break;
        default:
            rc = manifest_load_workload(c, obj, k, av, line);
            break;
        }
        if (rc || !c->in->opts.keep_objects)
            return rc;
        if (c->in->priv->nds > nds)
            c->in->priv->ds[nds].object = c->in->nobjects;
        if (manifest_keep_object(c->in, obj, kind, c->in->npods - npods))
            return manifest_nomem(c);
        return 0;
    }
}

/* Items of a root List arrive before the root is complete: they are loaded as they come,
 * inferring their kind from the list's kind when it came first, and kept or dropped once the
 * root shows whether it really is a list. */
static int list_kind(const char *kind, char *item, size_t size)
{
    size_t klen = kind ? strlen(kind) : 0;

    item[0] = '\0';
    if (!kind || klen < 4 || strcmp(kind + klen - 4, "List"))
        return 0;
    if (klen > 4)
        snprintf(item, size, "%.*s", (int)(klen - 4), kind);
    return 1;
}

/* duplicates reports the mapping keys of the document given twice (the last value is the one
 * read), in the words of the API server's strict YAML decoder: a warning, or with
 * opts.strict an error */
static int duplicates(struct manifest_ctx *c, const struct kube_lines *lines)
{
    size_t i, len;
    const char *key;
    char q[300];
    int line;

    for (i = 0; (key = kube_lines_dup(lines, i, &line, &len)); i++) {
        quote_go_to(q, sizeof(q), key, len);
        if (c->in->opts.strict)
            return manifest_fail(c, line, NULL, -EINVAL, "key %s already set in map", q);
        if (manifest_warn(c->in, "%s: line %d: key %s already set in map", c->file, line, q))
            return manifest_nomem(c);
    }
    return 0;
}

int manifest_load_document(json_t *doc, struct kube_lines *lines, json_t *list, void *ctx)
{
    struct manifest_ctx *c = ctx;
    const char *kind;
    char item[128];
    int rc;

    c->lines = lines;
    /* a cluster's objects come from JSON the API server wrote: no key twice */
    if (!c->cluster && (rc = duplicates(c, lines)))
        return rc;
    if (list) {
        const char *lk = manifest_jstr(list, "kind");

        if (!c->in_items) {
            c->in_items = 1;
            c->items_dropped = 0;
            manifest_snapshot_take(c->in, &c->items_snap);
        }
        if (lk && !list_kind(lk, item, sizeof(item))) {
            c->items_dropped = 1; /* not a list: its items mean nothing */
            return 0;
        }
        return load_object(c, doc, 1, item[0] ? item : NULL, manifest_jstr(list, "apiVersion"), 0);
    }
    if (c->in_items) {
        c->in_items = 0;
        kind = manifest_jstr(doc, "kind");
        if (!list_kind(kind, item, sizeof(item)) || c->items_dropped) {
            if (c->in->ntaken != c->items_snap.ntaken)
                /* their pods are with the consumer already: it cannot take them back */
                return manifest_fail(c, manifest_line_of(c, doc, 0), "items", -EINVAL,
                                     "only a List may have items (kind %s%s%s)", kind ? "\"" : "",
                                     kind ? kind : "missing", kind ? "\"" : "");
            manifest_snapshot_restore(c->in, &c->items_snap);
        }
    }
    rc = load_object(c, doc, 0, NULL, NULL, 0);
    return rc;
}
