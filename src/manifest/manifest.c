/* manifest.c - the manifest loader's API (manifest.h): an input filled file by file, all or
 * nothing per call, then finished once (DaemonSets expanded, priorities resolved, duplicates
 * and missing nodes reported).
 *
 * Each buffer is parsed by the YAML loader one document at a time, every object is decoded
 * into the input's arena and its JSON tree dropped. Pod names of expanded workloads are
 * derived from hashes, so the same input always gives the same names. A set of pod and node
 * names keeps names unique; a failed load rolls the counters back and rebuilds the sets. */
#include "manifest/manifest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "manifest/kinds-int.h"
#include "manifest/objects-int.h"
#include "manifest/source-int.h"
#include "manifest/state-int.h"
#include "manifest/workload-int.h"

void manifest_input_init(struct manifest_input *in, const struct manifest_input_opts *o)
{
    memset(in, 0, sizeof(*in));
    if (o)
        in->opts = *o;
    if (!in->opts.default_namespace || !*in->opts.default_namespace)
        in->opts.default_namespace = "default";
    if (!in->opts.max_pods)
        in->opts.max_pods = MANIFEST_INPUT_MAX_PODS;
    if (!in->opts.max_nodes)
        in->opts.max_nodes = MANIFEST_INPUT_MAX_NODES;
}

/* load_begin checks a load may start and notes where a failed one must roll back to. */
static int load_begin(struct manifest_input *in, struct manifest_snapshot *s, struct err *err)
{
    int rc;

    if (in->finished)
        return err_set(err, -EINVAL, "input already finished");
    if ((rc = manifest_priv_ensure(in, err)))
        return rc;
    manifest_snapshot_take(in, s);
    return 0;
}

/* load_end rolls a failed load back: nothing of it stays visible. */
static int load_end(struct manifest_input *in, const struct manifest_snapshot *s, int rc)
{
    if (rc)
        manifest_snapshot_restore(in, s);
    return rc;
}

int manifest_input_load_buffer(struct manifest_input *in, const char *name, const char *data,
                               size_t len, struct err *err)
{
    struct manifest_snapshot s;
    int rc = load_begin(in, &s, err);

    if (rc)
        return rc;
    rc = manifest_load_buffer(in, name ? name : "-", data ? data : "", data ? len : 0, err);
    return load_end(in, &s, rc);
}

static int load_object(struct manifest_input *in, const char *name, json_t *obj, int cluster,
                       struct err *err)
{
    struct manifest_snapshot s;
    struct manifest_ctx c;
    int rc = load_begin(in, &s, err);

    if (rc)
        return rc;
    memset(&c, 0, sizeof(c));
    c.in = in;
    c.err = err;
    c.cluster = cluster;
    c.file = arena_strdup(&in->arena, name ? name : "-");
    rc = c.file ? manifest_load_document(obj, NULL, NULL, &c)
                : err_set(err, -ENOMEM, "out of memory");
    if (rc && err && !err->file[0])
        err_at(err, c.file, err->line, err->column);
    return load_end(in, &s, rc);
}

int manifest_input_load_object(struct manifest_input *in, const char *name, json_t *obj,
                               struct err *err)
{
    return load_object(in, name, obj, 0, err);
}

int manifest_input_load_cluster_object(struct manifest_input *in, const char *name, json_t *obj,
                                       struct err *err)
{
    return load_object(in, name, obj, 1, err);
}

int manifest_input_warn(struct manifest_input *in, const char *msg)
{
    if (manifest_priv_ensure(in, NULL))
        return -ENOMEM;
    return manifest_warn(in, "%s", msg);
}

int manifest_input_load_file(struct manifest_input *in, const char *path, struct err *err)
{
    struct manifest_snapshot s;
    int rc = load_begin(in, &s, err);

    if (rc)
        return rc;
    return load_end(in, &s, manifest_load_path(in, path, err));
}

int manifest_input_finish(struct manifest_input *in, struct err *err)
{
    size_t i;
    int rc;

    if (in->finished)
        return err_set(err, -EINVAL, "input already finished");
    if ((rc = manifest_priv_ensure(in, err)))
        return rc;
    if ((rc = manifest_finish_workloads(in, err)) || (rc = manifest_finish_priorities(in, err)) ||
        (rc = manifest_finish_runtime_classes(in, err)) ||
        (rc = manifest_finish_namespaces(in, err)))
        return rc;
    /* stubs first: every one of them came before every bound pod of pods[] */
    for (i = 0; i < in->priv->nstubs; i++) {
        const struct manifest_pod_stub *st = &in->priv->stubs[i];

        if (manifest_node_set_find(in, st->node) < 0 &&
            manifest_warn(in,
                          "%s: line %d: pod %s/%s is bound to node %s, which is not in the input",
                          st->file, st->line, st->ns, st->name, st->node))
            return err_set(err, -ENOMEM, "out of memory");
    }
    for (i = 0; i < in->npods; i++) {
        const struct kube_pod *p = &in->pods[i];

        if (p->node_name && *p->node_name && manifest_node_set_find(in, p->node_name) < 0 &&
            manifest_warn(in,
                          "%s: line %d: pod %s/%s is bound to node %s, which is not in the input",
                          p->source_file ? p->source_file : "?", p->source_line, p->namespace_,
                          p->name, p->node_name))
            return err_set(err, -ENOMEM, "out of memory");
    }
    if (in->priv->warnings_dropped) {
        size_t dropped = in->priv->warnings_dropped;

        in->priv->warnings_dropped = 0;
        in->nwarnings = MANIFEST_WARNINGS_MAX - 1;
        if (manifest_warn(in, "%zu more warnings not shown", dropped + 1))
            return err_set(err, -ENOMEM, "out of memory");
    }
    /* nothing is appended after finish: give back the doubling slack (at 20,000 pods the
     * array had room for 32,768, 4 MB unused for the whole run) */
    manifest_shrink((void **)&in->pods, &in->priv->cap_pods, in->npods, sizeof(*in->pods));
    manifest_shrink((void **)&in->nodes, &in->priv->cap_nodes, in->nnodes, sizeof(*in->nodes));
    in->finished = 1;
    return 0;
}

const struct kube_pod *manifest_input_find_pod(const struct manifest_input *in, const char *ns,
                                               const char *name)
{
    long i;

    if (!in->priv || !name)
        return NULL;
    i = manifest_pod_set_find(in, ns ? ns : in->opts.default_namespace, name);
    return i >= 0 && !(i & MANIFEST_STUB_BIT) ? &in->pods[i] : NULL;
}

const struct kube_node *manifest_input_find_node(const struct manifest_input *in, const char *name)
{
    long i;

    if (!in->priv || !name)
        return NULL;
    i = manifest_node_set_find(in, name);
    return i >= 0 ? &in->nodes[i] : NULL;
}

void manifest_input_trim(struct manifest_input *in)
{
    struct manifest_input_priv *pv = in->priv;

    if (!pv || !in->finished)
        return;
    arena_release(&pv->node_arena);
    free(in->nodes);
    in->nodes = NULL;
    in->nnodes = 0;
    pv->cap_nodes = 0;
    free(pv->stubs);
    pv->stubs = NULL;
    pv->nstubs = pv->cap_stubs = 0;
    arena_release(&pv->stub_arena);
    pv->stub_ns = pv->stub_node = NULL;
    free(pv->pod_set.slots);
    free(pv->node_set.slots);
    memset(&pv->pod_set, 0, sizeof(pv->pod_set));
    memset(&pv->node_set, 0, sizeof(pv->node_set));
}

void manifest_input_release(struct manifest_input *in)
{
    struct manifest_input_opts o;

    if (!in)
        return;
    o = in->opts;
    while (in->nobjects)
        free(in->objects[--in->nobjects].text);
    free(in->objects);
    arena_release(&in->arena);
    free(in->nodes);
    free(in->pods);
    free(in->classes);
    free(in->pdbs);
    free(in->pvcs);
    free(in->pvs);
    free(in->storage_classes);
    free(in->csi_nodes);
    free(in->csi_drivers);
    free(in->csi_capacities);
    free(in->volume_attachments);
    free(in->device_classes);
    free(in->resource_slices);
    free(in->resource_claims);
    free(in->claim_templates);
    free(in->device_taint_rules);
    free(in->selectors);
    free(in->namespaces);
    free(in->warnings);
    if (in->priv) {
        free(in->priv->ds);
        free(in->priv->rcs);
        free(in->priv->pod_set.slots);
        free(in->priv->node_set.slots);
        free(in->priv->pvc_at.slots);
        free(in->priv->pv_at.slots);
        keymap_release(&in->priv->ns_map);
        free(in->priv->stubs);
        arena_release(&in->priv->stub_arena);
        arena_release(&in->priv->node_arena);
        free(in->priv);
    }
    manifest_input_init(in, &o);
}
