/* cmd_devices.c - `gpusched devices`: the devices the input's ResourceSlices publish, one row
 * each (node, driver, pool, device, product name, memory), and with --selector / --class only
 * those a request with these selectors could get: the class's selectors, then --selector's,
 * compiled and evaluated by the DynamicResources world exactly as its allocator evaluates a
 * request's (sched_dra_device_matches). A device whose evaluation fails is listed with the
 * allocator's error text. */
#include "gpusched/cmd_devices-int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/keymap.h"
#include "cel/cel.h"
#include "gpusched/cmd_common-int.h"
#include "gpusched/kubectl-int.h"
#include "gpusched/output.h"
#include "sched/dynamicresources.h"

/* resourceapi.DeviceSelectorsMaxSize: the selectors one request may have */
#define DEVICES_SELECTORS_MAX 32

static const char devices_usage[] =
    "List the devices of the ResourceSlices (Dynamic Resource Allocation) in manifest files\n"
    "or on the cluster (no -f: the kubeconfig's, as kubectl finds it): node, driver, pool,\n"
    "device, product name and memory (-o wide: every attribute, capacity and taint).\n"
    "\n"
    "With --selector (a CEL expression, repeatable: all must hold, as in a request) or\n"
    "--class (a DeviceClass's selectors, then --selector's), only the devices a request with\n"
    "them could get, judged as kube-scheduler's allocator judges them; a device whose\n"
    "evaluation fails is listed with the scheduler's error (ERROR column, \"errors\" in -o\n"
    "json). A selector is compiled first as the API server compiles a new claim's: one that\n"
    "does not compile is shown with a caret under the column, exit 2. Only the newest\n"
    "generation of each pool counts, as for the scheduler.\n"
    "\n"
    "Examples:\n"
    "  # Every device of the ResourceSlices in a directory of manifests\n"
    "  gpusched devices -f cluster/\n"
    "\n"
    "  # The GPUs with at least 40Gi, as JSON\n"
    "  gpusched devices -f slices.yaml --selector \\\n"
    "    'device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0' -o json\n"
    "\n"
    "  # What the DeviceClass gpu.nvidia.com offers on the current cluster\n"
    "  gpusched devices --class gpu.nvidia.com\n"
    "\n"
    "Usage:\n"
    "  gpusched devices [-f FILE]... [--selector EXPR]... [--class NAME] [flags]\n"
    "\n";

/* --selector's values, in order (not split at commas: CEL has commas) */
struct devices_sels {
    const char *v[DEVICES_SELECTORS_MAX];
    size_t n;
};

static int devices_sel_add(void *dest, const char *value, struct err *err)
{
    struct devices_sels *s = dest;

    if (s->n == DEVICES_SELECTORS_MAX)
        return err_set(err, -E2BIG, "at most %d selectors (a request's limit)",
                       DEVICES_SELECTORS_MAX);
    s->v[s->n++] = value;
    return 0;
}

/* One device of the listing. */
struct devices_row {
    const char *node; /* the node, "" when the device is not on one node */
    const char *node_cell;
    const struct dra_slice *s;
    const struct dra_device *d;
    const struct kube_dra_device *kd; /* as decoded (capacity as written), NULL if unknown */
    size_t order;                     /* slice and device order, for ties */
    const char *error;                /* the evaluation's error, NULL when it matched */
};

/* devices_check_selector compiles expr as the API server compiles a new claim's selector; on
 * an error it prints it (the expression, a caret under the column, cel-go's message) and
 * returns 2. */
static int devices_check_selector(size_t i, const char *expr)
{
    struct cel_compile_opts o = {.env = CEL_ENV_NEW};
    struct cel_compile_error cerr = {0};
    struct cel_program *p = NULL;
    int rc;

    if (!*expr) {
        fprintf(stderr, "gpusched: --selector #%zu: Required value: an empty expression\n", i);
        return 2;
    }
    if (!cel_selector_length_ok(strlen(expr))) {
        fprintf(stderr,
                "gpusched: --selector #%zu: Too long: may not be more than %d bytes (it has "
                "%zu)\n",
                i, CEL_SELECTOR_MAX_LENGTH, strlen(expr));
        return 2;
    }
    rc = cel_compile(expr, strlen(expr), &o, &p, &cerr);
    cel_program_free(p);
    if (rc == -ENOMEM) {
        cel_compile_error_release(&cerr);
        fprintf(stderr, "gpusched: out of memory\n");
        return 1;
    }
    if (rc < 0) {
        if (cerr.has_max_cost || !cerr.column) {
            /* no place to point at: the expression, then why */
            fprintf(stderr, "gpusched: --selector #%zu: %s\n | %s\n", i,
                    cerr.has_max_cost ? "Forbidden: too complex, exceeds cost limit"
                    : cerr.detail     ? cerr.detail
                                      : "compilation failed",
                    expr);
        } else {
            /* cel-go's Detail: "compilation failed: ERROR: <input>:L:C: msg", then the line
             * and a caret under the column, as the API server shows it */
            fputs("gpusched: --selector #", stderr);
            fprintf(stderr, "%zu: ", i);
            fwrite(cerr.detail, 1, cerr.detail_len, stderr);
            fputc('\n', stderr);
        }
        cel_compile_error_release(&cerr);
        return 2;
    }
    cel_compile_error_release(&cerr);
    return 0;
}

/* the newest generation of each pool (GatherPools reads only those slices) */
static int devices_generations(const struct dra_inventory *inv, struct arena *a, struct keymap *m)
{
    size_t i;

    for (i = 0; i < inv->nslices; i++) {
        const struct dra_slice *s = &inv->slices[i];
        size_t n = strlen(s->driver) + strlen(s->pool) + 2;
        char *key = arena_alloc(a, n);
        int64_t *g;

        if (!key)
            return -ENOMEM;
        snprintf(key, n, "%s/%s", s->driver, s->pool);
        g = keymap_get(m, key);
        if (g) {
            if (s->generation > *g)
                *g = s->generation;
            continue;
        }
        if (!(g = arena_alloc(a, sizeof(*g))))
            return -ENOMEM;
        *g = s->generation;
        if (keymap_put(m, key, g, NULL))
            return -ENOMEM;
    }
    return 0;
}

static bool devices_outdated(const struct keymap *m, const struct dra_slice *s)
{
    char key[1024];
    const int64_t *g;

    snprintf(key, sizeof(key), "%s/%s", s->driver, s->pool);
    g = keymap_get(m, key);
    return g && s->generation < *g;
}

/* where the device is: its slice's node, or (perDeviceNodeSelection) its own */
static void devices_node(const struct dra_slice *s, const struct dra_device *d,
                         struct devices_row *r)
{
    const struct dra_node_sel *sel = s->per_device ? &d->sel : &s->sel;

    r->node = "";
    if (sel->node_name) {
        r->node = r->node_cell = sel->node_name;
    } else if (sel->all_nodes) {
        r->node_cell = "<all nodes>";
    } else if (sel->selector) {
        r->node_cell = "<node selector>";
    } else {
        r->node_cell = "<none>";
    }
}

static int devices_row_cmp(const void *a, const void *b)
{
    const struct devices_row *x = a, *y = b;
    int c;

    if ((c = strcmp(x->node, y->node)) || (c = strcmp(x->s->driver, y->s->driver)) ||
        (c = strcmp(x->s->pool, y->s->pool)))
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* the attribute name in the device's driver's domain, or fully qualified in it */
static bool devices_name_is(const char *name, const char *driver, const char *id)
{
    size_t n = strlen(driver);

    if (!strcmp(name, id))
        return true;
    return !strncmp(name, driver, n) && name[n] == '/' && !strcmp(name + n + 1, id);
}

static const char *devices_attr_text(const struct dra_attr *a, char *buf, size_t size)
{
    switch (a->type) {
    case DRA_ATTR_INT:
        snprintf(buf, size, "%" PRId64, a->i);
        return buf;
    case DRA_ATTR_BOOL:
        return a->b ? "true" : "false";
    case DRA_ATTR_STRING:
    case DRA_ATTR_VERSION:
        return a->s ? a->s : "";
    default:
        return "<list>";
    }
}

static const char *devices_product(const struct devices_row *r)
{
    size_t i;

    for (i = 0; i < r->d->nattrs; i++)
        if (r->d->attrs[i].type == DRA_ATTR_STRING &&
            devices_name_is(r->d->attrs[i].name, r->s->driver, "productName"))
            return r->d->attrs[i].s;
    return NULL;
}

static const char *devices_memory(const struct devices_row *r)
{
    size_t i;

    for (i = 0; r->kd && i < r->kd->ncapacity; i++)
        if (devices_name_is(r->kd->capacity[i].name, r->s->driver, "memory"))
            return r->kd->capacity[i].value.text;
    return NULL;
}

/* -o wide's columns: every attribute, capacity and taint, "a=b,c=d" */
static int devices_wide_cells(const struct devices_row *r, struct buf *attrs, struct buf *caps,
                              struct buf *taints)
{
    size_t i;
    int rc = 0;

    for (i = 0; i < r->d->nattrs && !rc; i++) {
        char v[32];
        rc = buf_printf(attrs, "%s%s=%s", i ? "," : "", r->d->attrs[i].name,
                        devices_attr_text(&r->d->attrs[i], v, sizeof(v)));
    }
    for (i = 0; r->kd && i < r->kd->ncapacity && !rc; i++)
        rc = buf_printf(caps, "%s%s=%s", i ? "," : "", r->kd->capacity[i].name,
                        r->kd->capacity[i].value.text ? r->kd->capacity[i].value.text : "");
    for (i = 0; i < r->d->ntaints && !rc; i++) {
        const struct dra_taint *t = &r->d->taints[i];
        rc = buf_printf(taints, "%s%s%s%s:%s", i ? "," : "", t->key ? t->key : "",
                        t->value && *t->value ? "=" : "", t->value ? t->value : "",
                        t->effect ? t->effect : "");
    }
    return rc;
}

static int devices_print_table(const struct devices_row *rows, size_t n, bool wide)
{
    const char *headers[OUT_TABLE_MAX_COLS];
    struct out_table t;
    size_t ncols = 0, i;
    bool errors = false;
    int rc;

    for (i = 0; i < n; i++)
        errors |= rows[i].error != NULL;
    headers[ncols++] = "NODE";
    headers[ncols++] = "DRIVER";
    headers[ncols++] = "POOL";
    headers[ncols++] = "DEVICE";
    headers[ncols++] = "PRODUCT";
    headers[ncols++] = "MEMORY";
    if (wide) {
        headers[ncols++] = "SLICE";
        headers[ncols++] = "ATTRIBUTES";
        headers[ncols++] = "CAPACITY";
        headers[ncols++] = "TAINTS";
    }
    if (errors)
        headers[ncols++] = "ERROR";
    rc = out_table_init(&t, ncols, headers);
    for (i = 0; i < n && !rc; i++) {
        const struct devices_row *r = &rows[i];
        struct buf attrs = BUF_INIT(1 << 20), caps = BUF_INIT(1 << 20), taints = BUF_INIT(1 << 20);
        const char *cells[OUT_TABLE_MAX_COLS];
        size_t c = 0;

        cells[c++] = r->node_cell;
        cells[c++] = r->s->driver;
        cells[c++] = r->s->pool;
        cells[c++] = r->d->name;
        cells[c++] = devices_product(r);
        cells[c++] = devices_memory(r);
        if (wide) {
            rc = devices_wide_cells(r, &attrs, &caps, &taints);
            cells[c++] = r->s->name;
            cells[c++] = attrs.len ? attrs.data : NULL;
            cells[c++] = caps.len ? caps.data : NULL;
            cells[c++] = taints.len ? taints.data : NULL;
        }
        if (errors)
            cells[c++] = r->error ? r->error : "";
        if (!rc)
            rc = out_table_add_row(&t, cells);
        buf_release(&attrs);
        buf_release(&caps);
        buf_release(&taints);
    }
    return out_table_finish(&t, rc);
}

/* -o json: {"devices":[{"node","driver","pool","device"}],"errors":[{"device","message"}]} */
static int devices_print_json(const struct devices_row *rows, size_t n)
{
    json_t *doc = json_object(), *devs = json_array(), *errs = json_array();
    size_t i;
    int fail = !doc || !devs || !errs, rc;

    for (i = 0; i < n && !fail; i++) {
        const struct devices_row *r = &rows[i];
        char id[1024];

        if (!r->error) {
            fail |= json_array_append_new(devs, json_pack("{s:s,s:s,s:s,s:s}", "node", r->node,
                                                          "driver", r->s->driver, "pool",
                                                          r->s->pool, "device", r->d->name));
            continue;
        }
        snprintf(id, sizeof(id), "%s/%s/%s", r->s->driver, r->s->pool, r->d->name);
        fail |=
            json_array_append_new(errs, json_pack("{s:s,s:s}", "device", id, "message", r->error));
    }
    if (!fail) {
        fail |= json_object_set_new(doc, "devices", devs);
        devs = NULL;
        fail |= json_object_set_new(doc, "errors", errs);
        errs = NULL;
    }
    rc = gpusched_cmd_print_json(doc, fail, 4);
    json_decref(devs);
    json_decref(errs);
    json_decref(doc);
    return rc;
}

/* devices_collect fills *rows with the devices of w's current slices that class and sels
 * select (every one when neither is given) and those whose evaluation failed. */
static int devices_collect(struct sched_dra *w, const struct manifest_input *in,
                           const struct dra_class *class, const struct dra_selector *sels,
                           size_t nsels, struct arena *a, struct devices_row **rows, size_t *n)
{
    const struct dra_inventory *inv = sched_dra_inventory(w);
    struct keymap gens = KEYMAP_INIT;
    struct devices_row *out = NULL;
    size_t i, j, total = 0, k = 0, order = 0;
    int rc;

    *rows = NULL;
    *n = 0;
    for (i = 0; i < inv->nslices; i++)
        total += inv->slices[i].ndevices;
    if ((rc = devices_generations(inv, a, &gens)))
        goto out;
    if (total && !(out = calloc(total, sizeof(*out)))) {
        rc = -ENOMEM;
        goto out;
    }
    for (i = 0; i < inv->nslices; i++) {
        const struct dra_slice *s = &inv->slices[i];
        /* the world holds the input's slices in input order */
        const struct kube_resource_slice *ks =
            i < in->nresource_slices && !strcmp(in->resource_slices[i].name, s->name)
                ? &in->resource_slices[i]
                : NULL;

        if (devices_outdated(&gens, s)) {
            order += s->ndevices;
            continue;
        }
        for (j = 0; j < s->ndevices; j++) {
            struct devices_row *r = &out[k];
            char msg[2048];
            int m = 1;

            r->s = s;
            r->d = &s->devices[j];
            r->kd = ks && j < ks->ndevices ? &ks->devices[j] : NULL;
            r->order = order++;
            devices_node(s, r->d, r);
            if (class || nsels) {
                msg[0] = '\0';
                m = sched_dra_device_matches(w, class, sels, nsels, s, r->d, msg, sizeof(msg));
            }
            if (m < 0 && !(r->error = arena_strdup(a, msg))) {
                rc = -ENOMEM;
                goto out;
            }
            if (m)
                k++;
        }
    }
    qsort(out, k, sizeof(*out), devices_row_cmp);
    *rows = out;
    *n = k;
    out = NULL;
out:
    free(out);
    keymap_release(&gens);
    return rc;
}

int gpusched_cmd_devices(int argc, char **argv)
{
    struct flag_list files = {0}, pos = {0};
    struct devices_sels sel = {0};
    const char *output = NULL, *class_name = NULL;
    bool help, loaded = false;
    struct gpusched_live live = {0};
    const struct flag flags[] = {
        {"filename", 'f', FLAG_LIST, &files, NULL, NULL, "FILE",
         "manifest file, directory or - (stdin); repeatable, or a,b"},
        {"selector", 0, FLAG_FUNC, &sel, devices_sel_add, NULL, "EXPR",
         "a CEL device selector (device.attributes[\"DOMAIN\"].NAME,\n"
         "device.capacity[\"DOMAIN\"].NAME, device.driver); repeatable:\n"
         "every one must hold, as in a request"},
        {"class", 0, FLAG_STRING, &class_name, NULL, NULL, "NAME",
         "only devices the DeviceClass NAME's selectors match"},
        {"output", 'o', FLAG_STRING, &output, NULL, NULL, "FORMAT",
         "table (default), wide, json or yaml"},
        GPUSCHED_CMD_STRICT_FLAG,
        FLAG_GROUP_OF(gpusched_live_flags(&live)),
        FLAG_GROUP_OF(out_table_flags),
        FLAG_END,
    };
    const struct dra_selector *compiled[DEVICES_SELECTORS_MAX];
    struct dra_selector sels[DEVICES_SELECTORS_MAX];
    struct arena arena = ARENA_INIT;
    struct manifest_input in;
    struct sched_cluster *cluster = NULL;
    struct devices_row *rows = NULL;
    const struct dra_class *class = NULL;
    struct sched_dra *w;
    struct err err;
    enum out_format fmt;
    size_t i, nrows = 0;
    int rc;

    err_clear(&err);
    rc = gpusched_kubectl_begin("devices", devices_usage, flags, &output, GPUSCHED_KUBECTL_NAME,
                                argc, argv, &pos, &help);
    if (rc || help)
        goto out;
    if (out_format_parse(output, 1u << OUT_TABLE | 1u << OUT_WIDE | 1u << OUT_JSON, &fmt, &err)) {
        rc = gpusched_cmd_usage_error("devices", "%s", err.msg);
        goto out;
    }
    if (class_name && !*class_name) {
        rc = gpusched_cmd_usage_error("devices", "--class: an empty name");
        goto out;
    }
    /* a selector the API server would refuse in a claim is refused before any input is read */
    for (i = 0; i < sel.n; i++)
        if ((rc = devices_check_selector(i, sel.v[i])))
            goto out;

    rc = gpusched_cmd_load_cluster_live(&files, NULL, &live, &in, &cluster);
    if (rc)
        goto out;
    loaded = true;
    w = sched_cluster_dra(cluster);
    if (class_name && !(class = w ? sched_dra_class(w, class_name) : NULL)) {
        fprintf(stderr, "gpusched: deviceclasses.resource.k8s.io \"%s\" not found\n", class_name);
        rc = 1;
        goto out;
    }
    for (i = 0; i < sel.n && w; i++) {
        if (!(compiled[i] = sched_dra_selector(w, sel.v[i]))) {
            rc = gpusched_cmd_status(-ENOMEM);
            goto out;
        }
        sels[i] = *compiled[i];
    }
    if (w && (rc = devices_collect(w, &in, class, sels, sel.n, &arena, &rows, &nrows))) {
        rc = gpusched_cmd_status(rc);
        goto out;
    }
    if (fmt == OUT_JSON)
        rc = devices_print_json(rows, nrows);
    else if (!nrows)
        fprintf(stderr, "No resources found\n");
    else
        rc = devices_print_table(rows, nrows, fmt == OUT_WIDE);
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
    return rc;
}
