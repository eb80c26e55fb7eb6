/* state.c - the loader's shared state: error and warning reporting, the name sets, snapshots
 * (see state.h). */
#include "manifest/state-int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/labels.h"
#include "base/buf.h"

/* ---- small helpers ---- */

uint64_t manifest_fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;

    while (n--) {
        h ^= *s++;
        h *= 0x100000001b3ULL;
    }
    return h;
}

int manifest_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    size_t ncap;
    void *p;

    if (need <= *cap)
        return 0;
    ncap = *cap ? *cap : 16;
    while (ncap < need)
        ncap *= 2;
    p = realloc(*arr, ncap * elem);
    if (!p)
        return -ENOMEM;
    *arr = p;
    *cap = ncap;
    return 0;
}

/* manifest_shrink reallocates *arr to exactly n elements; on failure it keeps the larger block. */
void manifest_shrink(void **arr, size_t *cap, size_t n, size_t elem)
{
    void *p;

    if (!n || n == *cap)
        return;
    p = realloc(*arr, n * elem);
    if (p) {
        *arr = p;
        *cap = n;
    }
}

const char *manifest_jstr(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);

    return json_is_string(v) ? json_string_value(v) : NULL;
}

int manifest_line_of(const struct manifest_ctx *c, const json_t *v, int fallback)
{
    int l = kube_lines_find(c->lines, v);

    return l > 0 ? l : fallback;
}

int manifest_fail(struct manifest_ctx *c, int line, const char *field, int code, const char *fmt,
                  ...)
{
    va_list ap;

    if (!c->err)
        return code;
    c->err->code = code;
    va_start(ap, fmt);
    vsnprintf(c->err->msg, sizeof(c->err->msg), fmt, ap);
    va_end(ap);
    err_at(c->err, c->file, line, 0);
    err_field(c->err, field);
    return code;
}

/* unknown_field is the decoders' warning of an unknown field: a warning line of the input */
static int unknown_field(void *arg, int line, const char *msg)
{
    struct manifest_ctx *c = arg;

    return manifest_warn(c->in, "%s: line %d: %s", c->file, line > 0 ? line : c->line, msg);
}

const struct kube_decode_opts *manifest_dopts(struct manifest_ctx *c, int line)
{
    memset(&c->dopts, 0, sizeof(c->dopts));
    c->line = line;
    c->dopts.lines = c->lines;
    c->dopts.check = !c->cluster;
    c->dopts.strict = c->in->opts.strict;
    c->dopts.warn = unknown_field;
    c->dopts.warn_arg = c;
    return &c->dopts;
}

int manifest_nomem(struct manifest_ctx *c)
{
    return manifest_fail(c, 0, NULL, -ENOMEM, "out of memory");
}

int manifest_warn(struct manifest_input *in, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    char *s;

    if (in->nwarnings >= MANIFEST_WARNINGS_MAX) {
        in->priv->warnings_dropped++;
        return 0;
    }
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (manifest_grow((void **)&in->warnings, &in->priv->cap_warnings, in->nwarnings + 1,
                      sizeof(*in->warnings)))
        return -ENOMEM;
    s = arena_strdup(&in->arena, buf);
    if (!s)
        return -ENOMEM;
    in->warnings[in->nwarnings++] = s;
    return 0;
}

/* ---- name sets ---- */

uint64_t manifest_pod_key_hash(const char *ns, const char *name)
{
    uint64_t h = manifest_fnv1a(MANIFEST_FNV_OFFSET, ns, strlen(ns) + 1);

    return manifest_fnv1a(h, name, strlen(name));
}

static int set_grow(struct manifest_name_set *s, size_t need)
{
    if ((need + 1) * 2 <= s->cap)
        return 0;
    return -EAGAIN; /* the caller rebuilds with a larger table */
}

/* pod_key gives the namespace and name of pod set entry i (a pod or a stub) */
static void pod_key(const struct manifest_input *in, uint32_t i, const char **ns, const char **name)
{
    if (i & MANIFEST_STUB_BIT) {
        *ns = in->priv->stubs[i & ~MANIFEST_STUB_BIT].ns;
        *name = in->priv->stubs[i & ~MANIFEST_STUB_BIT].name;
    } else {
        *ns = in->pods[i].namespace_;
        *name = in->pods[i].name;
    }
}

/* manifest_pod_where gives the file and line pod set entry i came from */
void manifest_pod_where(const struct manifest_input *in, uint32_t i, const char **file, int *line)
{
    if (i & MANIFEST_STUB_BIT) {
        *file = in->priv->stubs[i & ~MANIFEST_STUB_BIT].file;
        *line = in->priv->stubs[i & ~MANIFEST_STUB_BIT].line;
    } else {
        *file = in->pods[i].source_file;
        *line = in->pods[i].source_line;
    }
    if (!*file)
        *file = "?";
}

/* set_slot returns the slot holding (ns, name), or the empty slot where it would go; *tag is
 * the name's hash as slots keep it. ns == NULL means the node set. */
static size_t set_slot(const struct manifest_input *in, const struct manifest_name_set *s,
                       const char *ns, const char *name, uint64_t *tag)
{
    uint64_t hash = ns ? manifest_pod_key_hash(ns, name)
                       : manifest_fnv1a(MANIFEST_FNV_OFFSET, name, strlen(name));
    size_t h = (size_t)hash & (s->cap - 1);

    *tag = (hash >> 32) << 32;
    for (; s->slots[h]; h = (h + 1) & (s->cap - 1)) {
        uint32_t i = (uint32_t)s->slots[h] - 1;

        if ((s->slots[h] & ~(uint64_t)UINT32_MAX) != *tag)
            continue;
        if (ns) {
            const char *ins, *iname;

            pod_key(in, i, &ins, &iname);
            if (!strcmp(iname, name) && !strcmp(ins, ns))
                return h;
        } else if (!strcmp(in->nodes[i].name, name)) {
            return h;
        }
    }
    return h;
}

/* manifest_set_rebuild makes s index the first n pods (pods != 0) or nodes, with room for more.
 * Duplicates keep the first. */
int manifest_set_rebuild(struct manifest_input *in, struct manifest_name_set *s, int pods, size_t n,
                         size_t room)
{
    size_t cap = 64, i, nstubs = pods && in->priv ? in->priv->nstubs : 0;

    while (cap < (n + nstubs + room + 1) * 2)
        cap *= 2;
    free(s->slots);
    s->slots = calloc(cap, sizeof(*s->slots));
    s->cap = s->slots ? cap : 0;
    s->n = 0;
    if (!s->slots)
        return -ENOMEM;
    for (i = 0; i < n; i++) {
        uint64_t tag;
        size_t h = pods ? set_slot(in, s, in->pods[i].namespace_, in->pods[i].name, &tag)
                        : set_slot(in, s, NULL, in->nodes[i].name, &tag);

        if (!s->slots[h]) {
            s->slots[h] = tag | (uint32_t)(i + 1);
            s->n++;
        }
    }
    for (i = 0; i < nstubs; i++) {
        uint64_t tag;
        size_t h = set_slot(in, s, in->priv->stubs[i].ns, in->priv->stubs[i].name, &tag);

        if (!s->slots[h]) {
            s->slots[h] = tag | (((uint32_t)i | MANIFEST_STUB_BIT) + 1);
            s->n++;
        }
    }
    return 0;
}

/* manifest_pod_set_find returns the pod set entry of ns/name (MANIFEST_STUB_BIT set for a stub), or
 * -1 */
long manifest_pod_set_find(const struct manifest_input *in, const char *ns, const char *name)
{
    const struct manifest_name_set *s = &in->priv->pod_set;
    uint64_t tag;
    size_t h;

    if (!s->cap)
        return -1;
    h = set_slot(in, s, ns, name, &tag);
    return s->slots[h] ? (long)(uint32_t)s->slots[h] - 1 : -1;
}

long manifest_node_set_find(const struct manifest_input *in, const char *name)
{
    const struct manifest_name_set *s = &in->priv->node_set;
    uint64_t tag;
    size_t h;

    if (!s->cap)
        return -1;
    h = set_slot(in, s, NULL, name, &tag);
    return s->slots[h] ? (long)(uint32_t)s->slots[h] - 1 : -1;
}

/* manifest_set_add_last records the last pod (or node, or stub when stub is set) of its array,
 * already checked to be new. */
int manifest_set_add_last(struct manifest_input *in, int pods, int stub)
{
    struct manifest_name_set *s = pods ? &in->priv->pod_set : &in->priv->node_set;
    size_t n = pods ? in->npods : in->nnodes;
    const struct manifest_pod_stub *st = stub ? &in->priv->stubs[in->priv->nstubs - 1] : NULL;
    uint64_t tag;
    size_t h;

    if (!s->cap || set_grow(s, s->n + 1))
        return manifest_set_rebuild(in, s, pods, n, n + in->priv->nstubs);
    if (st)
        h = set_slot(in, s, st->ns, st->name, &tag);
    else
        h = pods ? set_slot(in, s, in->pods[n - 1].namespace_, in->pods[n - 1].name, &tag)
                 : set_slot(in, s, NULL, in->nodes[n - 1].name, &tag);
    s->slots[h] =
        tag | (st ? ((uint32_t)(in->priv->nstubs - 1) | MANIFEST_STUB_BIT) + 1 : (uint32_t)n);
    s->n++;
    return 0;
}

void manifest_snapshot_take(const struct manifest_input *in, struct manifest_snapshot *s)
{
    s->nnodes = in->nnodes;
    s->npods = in->npods;
    s->nclasses = in->nclasses;
    s->nnamespaces = in->nnamespaces;
    s->nwarnings = in->nwarnings;
    s->nds = in->priv->nds;
    s->dropped = in->priv->warnings_dropped;
    s->nstubs = in->priv->nstubs;
    s->ntaken = in->ntaken;
    s->nobjects = in->nobjects;
    s->nrcs = in->priv->nrcs;
    s->nselectors = in->nselectors;
    s->npdbs = in->npdbs;
    s->npvcs = in->npvcs;
    s->npvs = in->npvs;
    s->nstorage_classes = in->nstorage_classes;
    s->ncsi_nodes = in->ncsi_nodes;
    s->ncsi_drivers = in->ncsi_drivers;
    s->ncsi_capacities = in->ncsi_capacities;
    s->nvolume_attachments = in->nvolume_attachments;
    s->ndevice_classes = in->ndevice_classes;
    s->nresource_slices = in->nresource_slices;
    s->nresource_claims = in->nresource_claims;
    s->nclaim_templates = in->nclaim_templates;
    s->ndevice_taint_rules = in->ndevice_taint_rules;
    s->deferred_pods = in->priv->deferred_pods;
}

void manifest_snapshot_restore(struct manifest_input *in, const struct manifest_snapshot *s)
{
    int rebuild = in->npods != s->npods || in->nnodes != s->nnodes || in->priv->nstubs != s->nstubs;

    in->nnodes = s->nnodes;
    in->npods = s->npods;
    in->nclasses = s->nclasses;
    in->nnamespaces = s->nnamespaces;
    in->nwarnings = s->nwarnings;
    in->priv->nds = s->nds;
    in->priv->warnings_dropped = s->dropped;
    in->priv->nstubs = s->nstubs;
    in->ntaken = s->ntaken;
    in->priv->nrcs = s->nrcs;
    while (in->nobjects > s->nobjects)
        free(in->objects[--in->nobjects].text);
    in->nselectors = s->nselectors;
    in->npdbs = s->npdbs;
    in->npvcs = s->npvcs;
    in->npvs = s->npvs;
    in->nstorage_classes = s->nstorage_classes;
    in->ncsi_nodes = s->ncsi_nodes;
    in->ncsi_drivers = s->ncsi_drivers;
    in->ncsi_capacities = s->ncsi_capacities;
    in->nvolume_attachments = s->nvolume_attachments;
    in->ndevice_classes = s->ndevice_classes;
    in->nresource_slices = s->nresource_slices;
    in->nresource_claims = s->nresource_claims;
    in->nclaim_templates = s->nclaim_templates;
    in->ndevice_taint_rules = s->ndevice_taint_rules;
    in->priv->deferred_pods = s->deferred_pods;
    if (rebuild) {
        /* best effort: on failure the sets are empty and lookups rebuild them */
        if (manifest_set_rebuild(in, &in->priv->pod_set, 1, in->npods, 0))
            in->priv->pod_set.cap = 0;
        if (manifest_set_rebuild(in, &in->priv->node_set, 0, in->nnodes, 0))
            in->priv->node_set.cap = 0;
    }
}

static int keep_text(const char *s, size_t n, void *ud)
{
    return buf_append(ud, s, n) ? -1 : 0;
}

int manifest_keep_object(struct manifest_input *in, const json_t *obj, const char *kind,
                         size_t npods)
{
    struct manifest_object *o;
    const char *k = arena_strdup(&in->arena, kind);
    struct buf b;

    if (!k || manifest_grow((void **)&in->objects, &in->priv->cap_objects, in->nobjects + 1,
                            sizeof(*in->objects)))
        return -ENOMEM;
    /* as text, in malloc()ed memory of its size: obj may live in the parser's arena
     * (kube/jalloc.h) */
    buf_init(&b, MANIFEST_INPUT_MAX_FILE);
    if (json_dump_callback(obj, keep_text, &b, JSON_COMPACT | JSON_ENCODE_ANY)) {
        buf_release(&b);
        return -ENOMEM;
    }
    o = &in->objects[in->nobjects];
    o->text = malloc(b.len + 1);
    if (!o->text) {
        buf_release(&b);
        return -ENOMEM;
    }
    memcpy(o->text, b.data, b.len + 1);
    o->len = b.len;
    buf_release(&b);
    in->nobjects++;
    o->kind = k;
    o->npods = npods;
    return 0;
}

int manifest_priv_ensure(struct manifest_input *in, struct err *err)
{
    if (!in->priv) {
        in->priv = calloc(1, sizeof(*in->priv));
        if (!in->priv)
            return err_set(err, -ENOMEM, "out of memory");
    }
    /* the pods of a manifest repeat their images, container names, label keys, ... */
    if (!in->arena.strings && arena_share_strings(&in->arena))
        return err_set(err, -ENOMEM, "out of memory");
    if ((!in->priv->pod_set.cap && manifest_set_rebuild(in, &in->priv->pod_set, 1, in->npods, 0)) ||
        (!in->priv->node_set.cap &&
         manifest_set_rebuild(in, &in->priv->node_set, 0, in->nnodes, 0)))
        return err_set(err, -ENOMEM, "out of memory");
    return 0;
}

/* ---- the controller of a pod ---- */

size_t manifest_owner_key(const struct kube_pod *p, char *buf, size_t size)
{
    const char *idx = NULL, *node = NULL;
    int n;

    if (!p->owner.kind || !p->owner.name || p->terminating ||
        (p->phase && (!strcmp(p->phase, "Succeeded") || !strcmp(p->phase, "Failed"))))
        return 0;
    if (!strcmp(p->owner.kind, "Job"))
        idx = kube_labels_get(&p->labels, "batch.kubernetes.io/job-completion-index");
    if (!strcmp(p->owner.kind, "DaemonSet")) {
        if (p->node_name && *p->node_name)
            node = p->node_name;
        else if (p->has_required_affinity && p->required.nterms == 1 &&
                 p->required.terms[0].nfields == 1 &&
                 p->required.terms[0].fields[0].op == KUBE_OP_IN &&
                 p->required.terms[0].fields[0].nvalues == 1 &&
                 !strcmp(p->required.terms[0].fields[0].key, "metadata.name"))
            node = p->required.terms[0].fields[0].values[0]; /* pinned as the controller does */
    }
    n = snprintf(buf, size, "%s/%s/%s%c%s%s", p->owner.kind, p->namespace_, p->owner.name, '\0',
                 idx    ? "#"
                 : node ? "@"
                        : "",
                 idx    ? idx
                 : node ? node
                        : "");
    return n < 0 || (size_t)n >= size ? 0 : (size_t)n + 1;
}
