/* cmd_nodes.c - `gpusched nodes`: the nodes of manifest files, like `kubectl get nodes -l`,
 * with the GPU labels and the GPUs still free for new pods.
 *
 * Nodes are listed by name (the API server's order). Free GPUs are nvidia.com/gpu allocatable
 * minus the requests of the pods bound there through spec.nodeName, plus the GPUs of DRA
 * ResourceSlices no allocated claim holds; pending pods are not placed (that is `gpusched
 * simulate`). */
#include "gpusched/cmd_nodes-int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "gpusched/cmd_common-int.h"
#include "gpusched/kubectl-int.h"
#include "gpusched/dra-int.h"
#include "gpusched/output.h"
#include "kube/labels.h"
#include "kube/quantity.h"
#include "kube/rules.h"

#define NODES_ROLE_PREFIX "node-role.kubernetes.io/"
#define NODES_ROLE_LABEL "kubernetes.io/role"
#define NODES_GPU_RESOURCE "nvidia.com/gpu"

static const char nodes_usage[] =
    "List the nodes of the cluster (no -f: the kubeconfig's, as kubectl finds it) or of\n"
    "manifest files like `kubectl get nodes`, with the GPUs' model, count and memory from\n"
    "the node's labels (aliyun.accelerator/nvidia_name, nvidia_count, nvidia_mem; else\n"
    "NVIDIA GPU Feature Discovery's nvidia.com/gpu.product, gpu.count, gpu.memory: -o wide\n"
    "says which, GPU-SOURCE aliyun or gfd; or the devices of DRA ResourceSlices: productName,\n"
    "how many, their memory capacity, GPU-SOURCE dra) and the GPUs still free: nvidia.com/gpu\n"
    "allocatable minus the requests of the pods bound to the node, plus the slices' GPUs no\n"
    "claim holds.\n"
    "\n"
    "Examples:\n"
    "  # The Tesla-M40 nodes, as kubectl get nodes -l ... -o name prints them\n"
    "  gpusched nodes -f examples/seed/ -l aliyun.accelerator/nvidia_name=Tesla-M40 -o name\n"
    "\n"
    "  # Every node, with a column for the zone label\n"
    "  gpusched nodes -f nodes.yaml -L topology.kubernetes.io/zone\n"
    "\n"
    "Usage:\n"
    "  gpusched nodes [-f FILE]... [NAME | node/NAME]... [flags]\n"
    "\n";

/* A node's GPUs as one source describes them: the model, how many, the memory of one. */
struct nodes_gpu {
    const char *source; /* the source's name (GPU-SOURCE, "gpu.source"), NULL: none found */
    const char *name, *count;
    char mem[64];                 /* with its unit */
    struct gpusched_dra_gpus dra; /* the node's GPUs in ResourceSlices (dra.count 0: none) */
    char dra_count[16];
};

/* Where the GPU columns come from, tried in order; the first that knows the node wins. Each
 * source is a function, so one that reads other objects than the node (DRA ResourceSlices,
 * whose devices carry productName and memory) takes its place here beside the labels. */
struct nodes_gpu_source {
    const char *name;
    const char *name_key, *count_key, *mem_key; /* node labels */
    const char *mem_unit;                       /* appended to a bare number: GFD's MiB */
    bool (*read)(const struct nodes_gpu_source *s, const struct manifest_input *in,
                 const struct kube_node *n, struct nodes_gpu *out);
};

/* the GPUs of DRA ResourceSlices (gpusched_dra_node_gpus, filled in out->dra beforehand):
 * productName, how many, the memory capacity of one */
static bool nodes_gpu_from_slices(const struct nodes_gpu_source *s, const struct manifest_input *in,
                                  const struct kube_node *n, struct nodes_gpu *out)
{
    (void)in;
    (void)n;
    if (!out->dra.count)
        return false;
    out->source = s->name; /* name and count: nodes_gpu_name, nodes_gpu_count */
    snprintf(out->dra_count, sizeof(out->dra_count), "%d", out->dra.count);
    snprintf(out->mem, sizeof(out->mem), "%s", out->dra.mem);
    return true;
}

static bool nodes_gpu_from_labels(const struct nodes_gpu_source *s, const struct manifest_input *in,
                                  const struct kube_node *n, struct nodes_gpu *out)
{
    const char *mem = kube_labels_get(&n->labels, s->mem_key);

    (void)in;
    out->name = kube_labels_get(&n->labels, s->name_key);
    out->count = kube_labels_get(&n->labels, s->count_key);
    if (!out->name && !out->count && !mem)
        return false;
    out->source = s->name;
    out->mem[0] = '\0';
    if (mem)
        snprintf(out->mem, sizeof(out->mem), "%s%s", mem,
                 s->mem_unit && *mem && strspn(mem, "0123456789") == strlen(mem) ? s->mem_unit
                                                                                 : "");
    return true;
}

static const struct nodes_gpu_source nodes_gpu_sources[] = {
    /* the seed's labels, which gpulabel writes (docs/labels.md) */
    {"aliyun", "aliyun.accelerator/nvidia_name", "aliyun.accelerator/nvidia_count",
     "aliyun.accelerator/nvidia_mem", NULL, nodes_gpu_from_labels},
    /* NVIDIA GPU Feature Discovery's (gpulabel writes them too): memory in MiB */
    {"gfd", "nvidia.com/gpu.product", "nvidia.com/gpu.count", "nvidia.com/gpu.memory", "MiB",
     nodes_gpu_from_labels},
    /* Dynamic Resource Allocation: the devices of ResourceSlices (first on a node whose kubelet
     * advertises no nvidia.com/gpu, where they are the GPUs the scheduler uses) */
    {"dra", NULL, NULL, NULL, NULL, nodes_gpu_from_slices},
};

/* nodes_gpu_of fills out from the first source that knows n (out->source NULL: none); the
 * node's DRA GPUs in out->dra whatever the source. */
static void nodes_gpu_of(const struct manifest_input *in, const struct sched_cluster *c,
                         const struct kube_node *n, struct nodes_gpu *out)
{
    const size_t nsrc = sizeof(nodes_gpu_sources) / sizeof(nodes_gpu_sources[0]);
    struct gpusched_dra_gpus dra;
    size_t i;

    memset(out, 0, sizeof(*out));
    gpusched_dra_node_gpus(in, c, n, &out->dra);
    dra = out->dra;
    if (dra.count && !kube_resources_scalar(&n->allocatable, NODES_GPU_RESOURCE) &&
        nodes_gpu_sources[nsrc - 1].read(&nodes_gpu_sources[nsrc - 1], in, n, out))
        return;
    for (i = 0; i < nsrc; i++)
        if (nodes_gpu_sources[i].read(&nodes_gpu_sources[i], in, n, out))
            return;
    memset(out, 0, sizeof(*out));
    out->dra = dra;
}

struct nodes_row {
    const struct kube_node *node;
    struct sched_node_usage use;
    bool has_use;
    struct nodes_gpu gpu;
};

/* the GPU-NAME and GPU-COUNT of a row (the dra source's live in the row, which moves) */
static const char *nodes_gpu_name(const struct nodes_row *row)
{
    return row->gpu.source && !strcmp(row->gpu.source, "dra") ? row->gpu.dra.product
                                                              : row->gpu.name;
}

static const char *nodes_gpu_count(const struct nodes_row *row)
{
    return row->gpu.source && !strcmp(row->gpu.source, "dra") ? row->gpu.dra_count : row->gpu.count;
}

/* the GPUs free for new pods: nvidia.com/gpu allocatable minus the bound pods' requests, plus
 * the DRA GPUs no claim holds */
static int64_t nodes_gpu_free(const struct nodes_row *row)
{
    int64_t dp = row->has_use ? row->use.allocatable_gpu - row->use.requested_gpu
                              : kube_resources_scalar(&row->node->allocatable, NODES_GPU_RESOURCE);

    return dp + row->gpu.dra.count - row->gpu.dra.used;
}

static int nodes_row_cmp(const void *a, const void *b)
{
    const struct nodes_row *x = a, *y = b;

    return strcmp(x->node->name, y->node->name);
}

/* kubectl's findNodeRoles: node-role.kubernetes.io/ROLE keys and kubernetes.io/role=ROLE,
 * sorted and unique, joined with ","; "<none>" when there is none. */
/* nodes_status is kubectl's STATUS column: the Ready condition ("Ready", "NotReady", or
 * "Unknown" when the node has none), then ",SchedulingDisabled" for a cordoned node */
static const char *nodes_status(const struct kube_node *n)
{
    static const char *const words[][2] = {
        [KUBE_READY_UNKNOWN] = {"Unknown", "Unknown,SchedulingDisabled"},
        [KUBE_READY_TRUE] = {"Ready", "Ready,SchedulingDisabled"},
        [KUBE_READY_NOT] = {"NotReady", "NotReady,SchedulingDisabled"},
    };

    return words[n->ready][n->unschedulable];
}

static void nodes_roles(const struct kube_node *n, char *buf, size_t size)
{
    const char *roles[64];
    size_t nroles = 0, i, j, len = 0;

    for (i = 0; i < n->labels.n && nroles < 64; i++) {
        const struct kube_label *l = &n->labels.v[i];
        const char *role = NULL;
        if (!strncmp(l->key, NODES_ROLE_PREFIX, strlen(NODES_ROLE_PREFIX)))
            role = l->key + strlen(NODES_ROLE_PREFIX);
        else if (!strcmp(l->key, NODES_ROLE_LABEL))
            role = l->value;
        if (!role || !*role)
            continue;
        for (j = 0; j < nroles && strcmp(roles[j], role); j++)
            ;
        if (j == nroles)
            roles[nroles++] = role;
    }
    /* small insertion sort: a node has a handful of roles */
    for (i = 1; i < nroles; i++) {
        const char *v = roles[i];
        for (j = i; j > 0 && strcmp(roles[j - 1], v) > 0; j--)
            roles[j] = roles[j - 1];
        roles[j] = v;
    }
    buf[0] = '\0';
    for (i = 0; i < nroles; i++) {
        int w = snprintf(buf + len, size - len, "%s%s", i ? "," : "", roles[i]);
        if (w < 0 || (size_t)w >= size - len)
            break;
        len += (size_t)w;
    }
    if (!nroles)
        snprintf(buf, size, "<none>");
}

static const char *nodes_taint_effect(enum kube_taint_effect e)
{
    switch (e) {
    case KUBE_EFFECT_NO_SCHEDULE:
        return "NoSchedule";
    case KUBE_EFFECT_PREFER_NO_SCHEDULE:
        return "PreferNoSchedule";
    case KUBE_EFFECT_NO_EXECUTE:
        return "NoExecute";
    case KUBE_EFFECT_ANY:
        break;
    }
    return "";
}

/* Taints the way kubectl describe writes them: key=value:Effect (key:Effect without value). */
static int nodes_taints(const struct kube_node *n, struct buf *b)
{
    size_t i;
    int rc = 0;

    for (i = 0; i < n->ntaints && !rc; i++) {
        const struct kube_taint *t = &n->taints[i];
        rc = buf_printf(b, "%s%s%s%s:%s", i ? "," : "", t->key, t->value[0] ? "=" : "", t->value,
                        nodes_taint_effect(t->effect));
    }
    if (!rc && !n->ntaints)
        rc = buf_puts(b, "<none>");
    return rc;
}

static int nodes_labels_string(const struct kube_node *n, struct buf *b)
{
    size_t i;
    int rc = 0;

    for (i = 0; i < n->labels.n && !rc; i++)
        rc = buf_printf(b, "%s%s=%s", i ? "," : "", n->labels.v[i].key, n->labels.v[i].value);
    if (!rc && !n->labels.n)
        rc = buf_puts(b, "<none>");
    return rc;
}

/* -L KEY header: the last path segment, upper-cased (kubectl's formatLabelHeaders). */
static void nodes_label_header(const char *key, char *buf, size_t size)
{
    const char *s = strrchr(key, '/');
    size_t i;

    s = s ? s + 1 : key;
    for (i = 0; s[i] && i + 1 < size; i++)
        buf[i] = (char)((s[i] >= 'a' && s[i] <= 'z') ? s[i] - 'a' + 'A' : s[i]);
    buf[i] = '\0';
}

static int nodes_print_table(const struct nodes_row *rows, size_t n, bool wide, bool show_labels,
                             const struct flag_list *label_cols)
{
    const char *headers[OUT_TABLE_MAX_COLS];
    char lhead[OUT_TABLE_MAX_COLS][64];
    struct out_table t;
    size_t ncols = 0, base, i, j;
    int rc;

    headers[ncols++] = "NAME";
    headers[ncols++] = "STATUS";
    headers[ncols++] = "ROLES";
    headers[ncols++] = "GPU-NAME";
    headers[ncols++] = "GPU-COUNT";
    headers[ncols++] = "GPU-MEM";
    headers[ncols++] = "GPU-FREE";
    if (wide) {
        headers[ncols++] = "GPU-SOURCE";
        headers[ncols++] = "GPU-ALLOCATABLE";
        headers[ncols++] = "CPU-REQUESTS";
        headers[ncols++] = "MEMORY-REQUESTS";
        headers[ncols++] = "PODS";
        headers[ncols++] = "TAINTS";
    }
    base = ncols;
    if (base + label_cols->n + (show_labels ? 1 : 0) > OUT_TABLE_MAX_COLS) {
        fprintf(stderr, "gpusched: too many label columns (at most %zu)\n",
                (size_t)OUT_TABLE_MAX_COLS - base - (show_labels ? 1 : 0));
        return 1;
    }
    for (i = 0; i < label_cols->n; i++) {
        nodes_label_header(label_cols->v[i], lhead[i], sizeof(lhead[i]));
        headers[ncols++] = lhead[i];
    }
    if (show_labels)
        headers[ncols++] = "LABELS";
    rc = out_table_init(&t, ncols, headers);
    for (i = 0; i < n && !rc; i++) {
        const struct kube_node *node = rows[i].node;
        const struct sched_node_usage *u = &rows[i].use;
        const char *cells[OUT_TABLE_MAX_COLS];
        char roles[256], free_gpu[24], alloc_gpu[24], cpu[64], mem[64], pods[48];
        char q1[32], q2[32];
        struct buf taints = BUF_INIT(1 << 20), labels = BUF_INIT(1 << 20);
        size_t c = 0;

        nodes_roles(node, roles, sizeof(roles));
        snprintf(free_gpu, sizeof(free_gpu), "%" PRId64, nodes_gpu_free(&rows[i]));
        cells[c++] = node->name;
        cells[c++] = nodes_status(node);
        cells[c++] = roles;
        cells[c++] = nodes_gpu_name(&rows[i]);
        cells[c++] = nodes_gpu_count(&rows[i]);
        cells[c++] = rows[i].gpu.mem[0] ? rows[i].gpu.mem : NULL;
        cells[c++] = free_gpu;
        if (wide) {
            cells[c++] = rows[i].gpu.source;
            snprintf(alloc_gpu, sizeof(alloc_gpu), "%" PRId64,
                     kube_resources_scalar(&node->allocatable, NODES_GPU_RESOURCE));
            snprintf(cpu, sizeof(cpu), "%s/%s",
                     kube_quantity_format_milli(u->requested_cpu_milli, q1, sizeof(q1)),
                     kube_quantity_format_milli(node->allocatable.cpu_milli, q2, sizeof(q2)));
            snprintf(mem, sizeof(mem), "%s/%s",
                     kube_quantity_format_bytes(u->requested_memory, q1, sizeof(q1)),
                     kube_quantity_format_bytes(node->allocatable.memory, q2, sizeof(q2)));
            snprintf(pods, sizeof(pods), "%zu/%" PRId64, u->npods, node->allocatable.pods);
            rc = nodes_taints(node, &taints);
            cells[c++] = alloc_gpu;
            cells[c++] = cpu;
            cells[c++] = mem;
            cells[c++] = pods;
            cells[c++] = taints.data;
        }
        for (j = 0; j < label_cols->n; j++) {
            const char *v = kube_labels_get(&node->labels, label_cols->v[j]);
            cells[c++] = v ? v : ""; /* kubectl leaves the cell blank */
        }
        if (show_labels) {
            if (!rc)
                rc = nodes_labels_string(node, &labels);
            cells[c++] = labels.data;
        }
        if (!rc)
            rc = out_table_add_row(&t, cells);
        buf_release(&taints);
        buf_release(&labels);
    }
    return out_table_finish(&t, rc);
}

/* -o json: a v1 List of the nodes as far as gpusched reads them (labels, taints,
 * unschedulable, allocatable), each with a "gpusched" member holding what its bound pods
 * request and what is free. */
static json_t *nodes_resources_json(const struct kube_resources *r)
{
    json_t *o = json_object();
    char q[32];
    size_t i;
    int fail = !o;

    if (fail)
        return NULL;
    if (r->set & KUBE_RES_CPU)
        fail |= json_object_set_new(
            o, "cpu", json_string(kube_quantity_format_milli(r->cpu_milli, q, sizeof(q))));
    if (r->set & KUBE_RES_EPHEMERAL)
        fail |= json_object_set_new(
            o, "ephemeral-storage",
            json_string(kube_quantity_format_bytes(r->ephemeral, q, sizeof(q))));
    if (r->set & KUBE_RES_MEMORY)
        fail |= json_object_set_new(
            o, "memory", json_string(kube_quantity_format_bytes(r->memory, q, sizeof(q))));
    for (i = 0; i < r->nscalars; i++) {
        snprintf(q, sizeof(q), "%" PRId64, r->scalars[i].value);
        fail |= json_object_set_new(o, r->scalars[i].name, json_string(q));
    }
    if (r->set & KUBE_RES_PODS) {
        snprintf(q, sizeof(q), "%" PRId64, r->pods);
        fail |= json_object_set_new(o, "pods", json_string(q));
    }
    if (fail) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *nodes_node_json(const struct nodes_row *row)
{
    const struct kube_node *n = row->node;
    const struct sched_node_usage *u = &row->use;
    json_t *item = json_object(), *meta = json_object(), *labels = json_object();
    json_t *spec = json_object(), *status = json_object(), *taints = json_array();
    json_t *ext = json_object(), *req = json_object(), *free_ = json_object();
    char q[32];
    size_t i;
    int fail = !item || !meta || !labels || !spec || !status || !taints || !ext || !req || !free_;

    for (i = 0; i < n->labels.n && !fail; i++)
        fail |= json_object_set_new(labels, n->labels.v[i].key, json_string(n->labels.v[i].value));
    for (i = 0; i < n->ntaints && !fail; i++) {
        const struct kube_taint *t = &n->taints[i];
        json_t *tj = json_object();
        fail |= !tj || json_object_set_new(tj, "key", json_string(t->key));
        if (!fail && t->value[0])
            fail |= json_object_set_new(tj, "value", json_string(t->value));
        if (!fail)
            fail |= json_object_set_new(tj, "effect", json_string(nodes_taint_effect(t->effect)));
        fail |= json_array_append_new(taints, tj);
    }
    if (!fail) {
        fail |= json_object_set_new(item, "apiVersion", json_string("v1"));
        fail |= json_object_set_new(item, "kind", json_string("Node"));
        fail |= json_object_set_new(meta, "name", json_string(n->name));
        fail |= json_object_set_new(meta, "labels", labels);
        labels = NULL;
        fail |= json_object_set_new(item, "metadata", meta);
        meta = NULL;
        if (n->unschedulable)
            fail |= json_object_set_new(spec, "unschedulable", json_true());
        if (json_array_size(taints)) {
            fail |= json_object_set_new(spec, "taints", taints);
            taints = NULL;
        }
        fail |= json_object_set_new(item, "spec", spec);
        spec = NULL;
        fail |= json_object_set_new(status, "allocatable", nodes_resources_json(&n->allocatable));
        fail |= json_object_set_new(item, "status", status);
        status = NULL;
        fail |= json_object_set_new(ext, "pods", json_integer((json_int_t)u->npods));
        fail |= json_object_set_new(
            req, "cpu",
            json_string(kube_quantity_format_milli(u->requested_cpu_milli, q, sizeof(q))));
        fail |= json_object_set_new(
            req, "memory",
            json_string(kube_quantity_format_bytes(u->requested_memory, q, sizeof(q))));
        snprintf(q, sizeof(q), "%" PRId64, u->requested_gpu);
        fail |= json_object_set_new(req, NODES_GPU_RESOURCE, json_string(q));
        fail |= json_object_set_new(ext, "requested", req);
        req = NULL;
        snprintf(q, sizeof(q), "%" PRId64, nodes_gpu_free(row));
        fail |= json_object_set_new(free_, NODES_GPU_RESOURCE, json_string(q));
        if (row->gpu.dra.count) {
            /* the GPUs of ResourceSlices, and how many of them claims hold */
            json_t *d = json_object();
            fail |= !d || json_object_set_new(d, "product", json_string(row->gpu.dra.product));
            fail |= json_object_set_new(d, "count", json_integer(row->gpu.dra.count));
            fail |= json_object_set_new(d, "allocated", json_integer(row->gpu.dra.used));
            if (row->gpu.dra.mem[0])
                fail |= json_object_set_new(d, "memory", json_string(row->gpu.dra.mem));
            fail |= json_object_set_new(ext, "draGPUs", d);
        }
        fail |= json_object_set_new(ext, "free", free_);
        free_ = NULL;
        if (row->gpu.source) {
            /* the GPU columns, and which source gave them */
            json_t *g = json_object();
            fail |= !g || json_object_set_new(g, "source", json_string(row->gpu.source));
            if (!fail && nodes_gpu_name(row))
                fail |= json_object_set_new(g, "product", json_string(nodes_gpu_name(row)));
            if (!fail && nodes_gpu_count(row))
                fail |= json_object_set_new(g, "count", json_string(nodes_gpu_count(row)));
            if (!fail && row->gpu.mem[0])
                fail |= json_object_set_new(g, "memory", json_string(row->gpu.mem));
            fail |= json_object_set_new(ext, "gpu", g);
        }
        fail |= json_object_set_new(item, "gpusched", ext);
        ext = NULL;
    }
    json_decref(meta);
    json_decref(labels);
    json_decref(spec);
    json_decref(status);
    json_decref(taints);
    json_decref(ext);
    json_decref(req);
    json_decref(free_);
    if (fail) {
        json_decref(item);
        return NULL;
    }
    return item;
}

static int nodes_print_json(const struct nodes_row *rows, size_t n)
{
    json_t *doc = json_object(), *items = json_array();
    size_t i;
    int fail = !doc || !items, rc = 1;

    for (i = 0; i < n && !fail; i++)
        fail |= json_array_append_new(items, nodes_node_json(&rows[i]));
    if (!fail) {
        fail |= json_object_set_new(doc, "apiVersion", json_string("v1"));
        fail |= json_object_set_new(doc, "kind", json_string("List"));
        fail |= json_object_set_new(doc, "items", items);
        items = NULL;
    }
    rc = gpusched_cmd_print_json(doc, fail, 4);
    json_decref(items);
    json_decref(doc);
    return rc;
}

int gpusched_cmd_nodes(int argc, char **argv)
{
    struct flag_list files = {0}, pos = {0}, label_cols = {0};
    const char *output = NULL, *selector = NULL, *namespace_ = NULL;
    bool show_labels = false, help, loaded = false;
    struct gpusched_live live = {0};
    const struct flag flags[] = {
        {"filename", 'f', FLAG_LIST, &files, NULL, NULL, "FILE",
         "manifest file, directory or - (stdin); repeatable, or a,b"},
        {"selector", 'l', FLAG_STRING, &selector, NULL, NULL, "SELECTOR",
         "label selector (=, ==, !=, in, notin, key, !key, >, <)"},
        {"label-columns", 'L', FLAG_LIST, &label_cols, NULL, NULL, "KEY,...",
         "add a column with the value of each label"},
        {"show-labels", 0, FLAG_BOOL, &show_labels, NULL, NULL, NULL,
         "add a LABELS column with every label"},
        {"output", 'o', FLAG_STRING, &output, NULL, NULL, "FORMAT",
         "table (default), wide, name, json or yaml"},
        {"namespace", 'n', FLAG_STRING, &namespace_, NULL, NULL, "NS",
         "accepted as kubectl accepts it with a kind that has no\n"
         "namespace (the files' objects that name none go there)"},
        GPUSCHED_CMD_STRICT_FLAG,
        FLAG_GROUP_OF(gpusched_live_flags(&live)),
        FLAG_GROUP_OF(out_table_flags),
        FLAG_END,
    };
    struct arena arena = ARENA_INIT;
    struct kube_selector sel = {0};
    struct manifest_input in;
    struct sched_cluster *cluster = NULL;
    struct nodes_row *rows = NULL;
    struct err err;
    enum out_format fmt;
    size_t i, nrows = 0;
    int rc;

    err_clear(&err);
    rc = gpusched_kubectl_begin("nodes", nodes_usage, flags, &output,
                                GPUSCHED_KUBECTL_NAME | GPUSCHED_KUBECTL_ARGS, argc, argv, &pos,
                                &help);
    if (rc || help)
        goto out;
    /* NAME or node/NAME arguments, as `kubectl get nodes NAME...` takes them */
    for (i = 0; i < pos.n; i++) {
        const char *a = pos.v[i];
        if (!strncmp(a, "node/", 5) || !strncmp(a, "nodes/", 6))
            pos.v[i] = strchr(a, '/') + 1;
        else if (strchr(a, '/')) {
            rc = gpusched_cmd_usage_error("nodes",
                                          "invalid argument \"%s\": want NAME or "
                                          "node/NAME",
                                          a);
            goto out;
        }
        if (!*pos.v[i]) {
            rc = gpusched_cmd_usage_error("nodes", "invalid argument \"%s\": empty name", a);
            goto out;
        }
    }
    if (out_format_parse(output, 1u << OUT_TABLE | 1u << OUT_WIDE | 1u << OUT_JSON | 1u << OUT_NAME,
                         &fmt, &err)) {
        rc = gpusched_cmd_usage_error("nodes", "%s", err.msg);
        goto out;
    }
    /* a bad selector is bad input (exit 1), found before any file is read, like kubectl */
    if (selector && kube_selector_parse(selector, &arena, &sel, &err)) {
        if (err.column > 0)
            fprintf(stderr, "gpusched: selector \"%s\": column %d: %s\n", selector, err.column,
                    err.msg);
        else
            fprintf(stderr, "gpusched: selector \"%s\": %s\n", selector, err.msg);
        rc = 1;
        goto out;
    }

    /* bound pods only count on their nodes: they go into the cluster as they are read */
    rc = gpusched_cmd_load_cluster_live(&files, namespace_, &live, &in, &cluster);
    if (rc)
        goto out;
    loaded = true;
    rows = calloc(in.nnodes ? in.nnodes : 1, sizeof(*rows));
    if (!rows) {
        fprintf(stderr, "gpusched: out of memory\n");
        rc = 1;
        goto out;
    }
    for (i = 0; i < in.nnodes; i++) {
        const struct kube_node *n = &in.nodes[i];
        if (selector && !kube_selector_matches(&sel, &n->labels))
            continue;
        if (pos.n) {
            size_t k;
            for (k = 0; k < pos.n && strcmp(pos.v[k], n->name); k++)
                ;
            if (k == pos.n)
                continue;
        }
        rows[nrows].node = n;
        rows[nrows].has_use = sched_cluster_node_usage(cluster, n->name, &rows[nrows].use) == 0;
        nodes_gpu_of(&in, cluster, n, &rows[nrows].gpu);
        nrows++;
    }
    qsort(rows, nrows, sizeof(*rows), nodes_row_cmp);
    for (i = 0; i < pos.n; i++) {
        size_t k;
        for (k = 0; k < nrows && strcmp(rows[k].node->name, pos.v[i]); k++)
            ;
        if (k == nrows) {
            fprintf(stderr, "gpusched: nodes \"%s\" not found\n", pos.v[i]);
            rc = 1;
            goto out;
        }
    }

    if (fmt == OUT_JSON) {
        rc = nodes_print_json(rows, nrows);
    } else if (!nrows) {
        /* kubectl's wording when a selector matches nothing (JSON gets an empty List) */
        fprintf(stderr, "No resources found\n");
    } else if (fmt == OUT_NAME) {
        for (i = 0; i < nrows; i++)
            printf("node/%s\n", rows[i].node->name);
    } else {
        rc = nodes_print_table(rows, nrows, fmt == OUT_WIDE, show_labels, &label_cols);
    }
    rc = gpusched_cmd_flush(rc);
out:
    free(rows);
    sched_cluster_free(cluster);
    if (loaded)
        manifest_input_release(&in);
    arena_release(&arena);
    gpusched_live_close(&live);
    flag_list_release(&files);
    flag_list_release(&pos);
    flag_list_release(&label_cols);
    return rc;
}
