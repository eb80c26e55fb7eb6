/* cmd_report.c - `gpusched report`: one self-contained HTML page (no script, no external
 * resource) of the cluster's GPUs: used and free per node, grouped by GPU model; the pending
 * pods grouped by the FailedScheduling message kube-scheduler would give them now; the GPU
 * fragmentation (free GPUs on nodes that cannot take the pending GPU pods).
 *
 * The pending pods are placed together in queue order, as `gpusched simulate` places them:
 * the figures and reasons are simulate's (one question, one answer). Whether a node strands
 * its free GPUs is asked of the cluster as it is: does any pending GPU pod pass its filters. */
#include "gpusched/cmd_report-int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/outfile.h"
#include "gpusched/cmd_common-int.h"
#include "gpusched/kubectl-int.h"
#include "gpusched/live-int.h"
#include "gpusched/dra-int.h"
#include "kube/labels.h"
#include "kube/rules.h"

#define REPORT_GPU "nvidia.com/gpu"

static const char report_usage[] =
    "Write one self-contained HTML page about the cluster's GPUs: used and free per node,\n"
    "grouped by GPU model (nvidia.com/gpu.product, else aliyun.accelerator/nvidia_name); the\n"
    "pending pods grouped by the FailedScheduling message each would get now, placed together\n"
    "in queue order as `gpusched simulate` places them; and the GPU fragmentation: free GPUs\n"
    "on nodes where no pending GPU pod fits.\n"
    "\n"
    "The input is the cluster (no -f: the kubeconfig's, as kubectl finds it) or the -f files,\n"
    "as for simulate. The page goes to standard output, or to --out FILE.\n"
    "\n"
    "Examples:\n"
    "  gpusched report -A --out gpus.html\n"
    "  gpusched report -f examples/seed/ > seed.html\n"
    "\n"
    "Usage:\n"
    "  gpusched report [-f FILE]... [flags]\n"
    "\n";

struct report_node {
    const struct kube_node *node;
    const char *model; /* the label's; NULL: the slices' productName (dra.product) */
    struct sched_node_usage use;
    bool has_use;
    bool fits_some;               /* some pending GPU pod fits here */
    struct gpusched_dra_gpus dra; /* its GPUs in DRA ResourceSlices, and how many are held */
    int64_t total, used;          /* device-plugin nvidia.com/gpu and DRA GPUs together */
};

/* the node's model: its label, else its slices' productName, else a placeholder */
static const char *rmodel(const struct report_node *n)
{
    if (n->model)
        return n->model;
    return n->dra.count ? n->dra.product : "(no GPU model label)";
}

/* what the node counts: nvidia.com/gpu allocatable and the requests it covers (a request
 * beyond allocatable is served from DRA devices, counted there), plus the slices' GPUs */
static void report_count(struct report_node *n)
{
    int64_t dp = n->has_use ? n->use.allocatable_gpu : 0;
    int64_t req = n->has_use ? n->use.requested_gpu : 0;

    n->total = dp + n->dra.count;
    n->used = (req < dp ? req : dp) + n->dra.used;
}

struct report_group {
    const char *message; /* borrowed from the results */
    size_t count;
    size_t first; /* index into pending of the first pod */
    int64_t gpus;
};

static void html(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

static const char *report_model(const struct kube_node *n)
{
    const char *m = kube_labels_get(&n->labels, "nvidia.com/gpu.product");

    if (!m)
        m = kube_labels_get(&n->labels, "aliyun.accelerator/nvidia_name");
    return m;
}

static int64_t report_pod_gpus(const struct kube_pod *p)
{
    int64_t sum = 0;
    size_t i, j;

    for (i = 0; i < p->ncontainers; i++)
        for (j = 0; j < p->containers[i].requests.nscalars; j++)
            if (!strcmp(p->containers[i].requests.scalars[j].name, REPORT_GPU))
                sum += p->containers[i].requests.scalars[j].value;
    return sum;
}

static int report_node_cmp(const void *a, const void *b)
{
    const struct report_node *x = a, *y = b;
    int c = strcmp(rmodel(x), rmodel(y));

    return c ? c : strcmp(x->node->name, y->node->name);
}

static int report_group_cmp(const void *a, const void *b)
{
    const struct report_group *x = a, *y = b;

    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

static void report_write(FILE *f, struct report_node *nodes, size_t nn,
                         const struct kube_pod **pending, const struct sched_result *res, size_t np,
                         struct report_group *groups, size_t ng, const char *source)
{
    size_t i, j, k;
    int64_t total = 0, used = 0, stranded = 0, gpu_pending = 0, dra = 0, dra_used = 0;
    size_t stranded_nodes = 0, scheduled = 0;
    char when[64];
    time_t now = time(NULL);
    struct tm tm;

    gmtime_r(&now, &tm);
    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
    for (i = 0; i < nn; i++) {
        dra += nodes[i].dra.count;
        dra_used += nodes[i].dra.used;
        if (!nodes[i].has_use && !nodes[i].dra.count)
            continue;
        total += nodes[i].total;
        used += nodes[i].used;
        if (nodes[i].total > nodes[i].used && !nodes[i].fits_some) {
            stranded += nodes[i].total - nodes[i].used;
            stranded_nodes++;
        }
    }
    for (i = 0; i < np; i++) {
        gpu_pending += report_pod_gpus(pending[i]) > 0 || pending[i]->nresource_claims;
        scheduled += res[i].outcome == SCHED_SCHEDULED && !res[i].preempted;
    }
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<title>gpusched report</title>\n<style>\n"
          "body{font-family:sans-serif;margin:2em;color:#222}"
          "table{border-collapse:collapse;margin:0.5em 0 1.5em}"
          "th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:left}"
          "th{background:#f0f0f0}td.n{text-align:right}"
          ".bar{display:inline-block;height:0.8em;background:#4a8}"
          ".free{display:inline-block;height:0.8em;background:#ddd}"
          "</style></head><body>\n",
          f);
    fputs("<h1>GPUs of the cluster</h1>\n<p id=\"source\">", f);
    html(f, source);
    fprintf(f, ", %s</p>\n", when);
    fprintf(f,
            "<p id=\"summary\">%" PRId64 " nvidia.com/gpu on %zu nodes: %" PRId64 " used, %" PRId64
            " free. %zu pending pods (%zu requesting GPUs), %zu of which fit now, placed "
            "together in queue order as gpusched simulate places them.</p>\n",
            total, nn, used, total - used, np, gpu_pending, scheduled);
    if (dra)
        fprintf(f,
                "<p id=\"dra\">%" PRId64 " of these GPUs are devices of DRA ResourceSlices "
                "(Dynamic Resource Allocation): %" PRId64 " held by allocated claims, %" PRId64
                " free.</p>\n",
                dra, dra_used, dra - dra_used);

    fputs("<h2>GPUs per node, by model</h2>\n", f);
    for (i = 0; i < nn; i = j) {
        int64_t mt = 0, mu = 0;
        for (j = i; j < nn && !strcmp(rmodel(&nodes[j]), rmodel(&nodes[i])); j++) {
            mt += nodes[j].total;
            mu += nodes[j].used;
        }
        fputs("<h3 class=\"model\">", f);
        html(f, rmodel(&nodes[i]));
        fprintf(f,
                " &mdash; %zu nodes, %" PRId64 " GPUs, %" PRId64 " used, %" PRId64 " free</h3>\n",
                j - i, mt, mu, mt - mu);
        /* the DRA column only where the cluster has DRA GPUs */
        fprintf(f,
                "<table class=\"nodes\"><tr><th>Node</th><th>GPUs</th><th>Used</th><th>Free</th>"
                "%s<th></th></tr>\n",
                dra ? "<th>In DRA slices</th>" : "");
        for (k = i; k < j; k++) {
            const struct report_node *u = &nodes[k];
            int64_t fr = u->total - u->used;
            fputs("<tr><td>", f);
            html(f, u->node->name);
            fprintf(f,
                    "</td><td class=\"n\">%" PRId64 "</td><td class=\"n\">%" PRId64
                    "</td><td class=\"n\">%" PRId64,
                    u->total, u->used, fr);
            if (dra)
                fputs("</td><td class=\"n\">", f);
            if (u->dra.count)
                fprintf(f, "%d (%d held)", u->dra.count, u->dra.used);
            fprintf(f,
                    "</td><td><span class=\"bar\" style=\"width:%" PRId64
                    "em\"></span><span class=\"free\" style=\"width:%" PRId64
                    "em\"></span></td></tr>\n",
                    u->used, fr > 0 ? fr : 0);
        }
        fputs("</table>\n", f);
    }

    fputs("<h2>Pending pods, by reason</h2>\n", f);
    if (!ng) {
        fputs("<p id=\"no-pending\">No pending pods.</p>\n", f);
    } else {
        fputs("<table id=\"pending\"><tr><th>Pods</th><th>Reason</th><th>For example</th></tr>\n",
              f);
        for (i = 0; i < ng; i++) {
            fprintf(f, "<tr><td class=\"n\">%zu</td><td>", groups[i].count);
            html(f, groups[i].message);
            fputs("</td><td>", f);
            html(f, pending[groups[i].first]->namespace_);
            fputc('/', f);
            html(f, pending[groups[i].first]->name);
            fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
    }

    fputs("<h2>GPU fragmentation</h2>\n", f);
    fprintf(f,
            "<p id=\"fragmentation\">%" PRId64 " free GPUs are stranded on %zu nodes where "
            "none of the pending GPU pods fits.</p>\n",
            stranded, stranded_nodes);
    fputs("<table id=\"stranded\"><tr><th>Node</th><th>Model</th><th>Free GPUs</th></tr>\n", f);
    for (i = 0; i < nn; i++) {
        if (nodes[i].total <= nodes[i].used || nodes[i].fits_some)
            continue;
        fputs("<tr><td>", f);
        html(f, nodes[i].node->name);
        fputs("</td><td>", f);
        html(f, rmodel(&nodes[i]));
        fprintf(f, "</td><td class=\"n\">%" PRId64 "</td></tr>\n", nodes[i].total - nodes[i].used);
    }
    fputs("</table>\n</body></html>\n", f);
}

int gpusched_cmd_report(int argc, char **argv)
{
    struct flag_list files = {0}, pos = {0};
    const char *out_path = NULL, *namespace_ = NULL, *profs = NULL;
    struct gpusched_live live = {0};
    const struct flag flags[] = {
        {"filename", 'f', FLAG_LIST, &files, NULL, NULL, "FILE",
         "manifest file, directory or - (stdin); repeatable, or a,b"},
        {"out", 0, FLAG_STRING, &out_path, NULL, NULL, "FILE",
         "write the page to FILE (replaced whole) instead of standard output"},
        {"namespace", 'n', FLAG_STRING, &namespace_, NULL, NULL, "NS",
         "namespace of the cluster's pending pods (default: the context's)"},
        {"profile", 0, FLAG_STRING, &profs, NULL, NULL, "NAME",
         "default (kube-scheduler's plugins) or gpu (GPU bin-packing)"},
        GPUSCHED_CMD_STRICT_FLAG,
        FLAG_GROUP_OF(gpusched_live_flags(&live)),
        FLAG_END,
    };
    const struct sched_profile *prof;
    struct manifest_input in;
    struct sched_cluster *cluster = NULL;
    struct report_node *nodes = NULL;
    struct report_group *groups = NULL;
    const struct kube_pod **pending = NULL;
    struct sched_result *res = NULL;
    struct sched_rng rng;
    struct sched_sim_opts so;
    struct err err;
    size_t i, j, np = 0, ng = 0, nn = 0;
    bool help, loaded = false;
    struct outfile of = {0};
    int rc;

    err_clear(&err);
    rc = gpusched_kubectl_begin("report", report_usage, flags, NULL, 0, argc, argv, &pos, &help);
    if (rc || help)
        goto out;
    if (out_path && !*out_path) {
        rc = gpusched_cmd_usage_error("report", "invalid argument \"\" for \"--out\" flag: "
                                                "empty path");
        goto out;
    }
    if ((rc = gpusched_cmd_parse_profile("report", profs, &prof)))
        goto out;
    rc = gpusched_cmd_load_cluster_live(&files, namespace_, &live, &in, &cluster);
    if (rc)
        goto out;
    loaded = true;
    rc = 1;
    nodes = calloc(in.nnodes + 1, sizeof(*nodes));
    pending = calloc(in.npods + 1, sizeof(*pending));
    res = calloc(in.npods + 1, sizeof(*res));
    groups = calloc(in.npods + 1, sizeof(*groups));
    if (!nodes || !pending || !res || !groups) {
        fprintf(stderr, "gpusched: out of memory\n");
        goto out;
    }
    for (i = 0; i < in.nnodes; i++) {
        nodes[nn].node = &in.nodes[i];
        nodes[nn].model = report_model(&in.nodes[i]);
        nodes[nn].has_use =
            sched_cluster_node_usage(cluster, in.nodes[i].name, &nodes[nn].use) == 0;
        gpusched_dra_node_gpus(&in, cluster, &in.nodes[i], &nodes[nn].dra);
        report_count(&nodes[nn]);
        nn++;
    }
    np = gpusched_cmd_pending_pods(&in, NULL, pending);
    sched_rng_seed(&rng, GPUSCHED_CMD_DEFAULT_SEED);
    /* a node is not stranded while some pending GPU pod passes its filters there now: each
     * GPU pod is tried against the cluster as it is (the nodes are in the cluster's order,
     * which is the input's) */
    for (i = 0; i < np; i++) {
        struct sched_explanation x;

        if (report_pod_gpus(pending[i]) <= 0 && !pending[i]->nresource_claims)
            continue;
        if (sched_explain(cluster, prof, pending[i], &rng, &x, &err)) {
            gpusched_cmd_print_err(&err);
            goto out;
        }
        for (j = 0; j < x.nnodes && j < nn; j++)
            if (!x.nodes[j].plugin && !x.nodes[j].skipped &&
                !strcmp(x.nodes[j].node, nodes[j].node->name))
                nodes[j].fits_some = true;
        sched_explanation_release(&x);
    }
    /* what becomes of the pending pods is simulate's answer: placed together in queue order,
     * each on what the ones before it left (tried alone, each may fit where only one can) */
    memset(&so, 0, sizeof(so));
    so.seed = GPUSCHED_CMD_DEFAULT_SEED;
    if (sched_simulate(cluster, prof, pending, np, &so, res, &err)) {
        gpusched_cmd_print_err(&err);
        goto out;
    }
    for (i = 0; i < np; i++) {
        if (res[i].outcome == SCHED_SCHEDULED && !res[i].preempted)
            continue;
        for (j = 0; j < ng; j++)
            if (groups[j].message && res[i].message && !strcmp(groups[j].message, res[i].message))
                break;
        if (j == ng) {
            groups[ng].message = res[i].outcome == SCHED_GATED ? "SchedulingGated: the pod has "
                                                                 "scheduling gates"
                                                               : res[i].message;
            groups[ng++].first = i;
        }
        groups[j].count++;
    }
    qsort(nodes, nn, sizeof(*nodes), report_node_cmp);
    qsort(groups, ng, sizeof(*groups), report_group_cmp);
    /* written whole, then renamed over FILE: a reader never sees half a page, and a failed
     * run leaves the old one */
    if (out_path && outfile_open(&of, out_path, &err)) {
        gpusched_cmd_print_err(&err);
        goto out;
    }
    report_write(of.f ? of.f : stdout, nodes, nn, pending, res, np, groups, ng,
                 live.client ? kube_client_server(live.client) : "manifest files");
    if (of.f) {
        if (outfile_commit(&of, &err)) {
            gpusched_cmd_print_err(&err);
            goto out;
        }
        rc = 0;
    } else {
        rc = gpusched_cmd_flush(0);
    }
out:
    outfile_abort(&of);
    for (i = 0; res && i < np; i++)
        sched_result_release(&res[i]);
    free(res);
    free(groups);
    free(pending);
    free(nodes);
    sched_cluster_free(cluster);
    if (loaded)
        manifest_input_release(&in);
    gpusched_live_close(&live);
    flag_list_release(&files);
    flag_list_release(&pos);
    return rc;
}
