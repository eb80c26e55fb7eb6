/* cmd_explain.c - `gpusched explain`: the per-node answer kube-scheduler's aggregated
 * FailedScheduling message loses: for every node the filter that rejected the pod and why, or
 * its score per plugin, then the message and the node simulate would pick.
 *
 * The pod is explained in the cluster as simulate leaves it just before the pod's turn: the
 * pending pods ahead of it in queue order (priority, then input order) are placed first. */
#include "gpusched/cmd_explain-int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/clock.h"
#include "gpusched/cmd_common.h"
#include "gpusched/cmd_common-int.h"
#include "gpusched/dra-int.h"
#include "gpusched/kubectl-int.h"
#include "gpusched/output.h"
#include "kube/labels.h"
#include "kube/rules.h"
#include "gpusched/live-int.h"
#include "sched/dynamicresources.h"

static const char explain_usage[] =
    "Explain why a pod is pending, or where it would go: a one-line verdict, the nodes grouped\n"
    "by the filter that rejected them and its reason, node by node the filter or the score per\n"
    "plugin, then the FailedScheduling message kube-scheduler would write and the node\n"
    "simulate picks.\n"
    "\n"
    "The input is the cluster of the kubeconfig (as kubectl finds it: --kubeconfig, then\n"
    "$KUBECONFIG, then ~/.kube/config, then the in-cluster service account) when no -f is\n"
    "given, or with --kubeconfig/--context and -f files added on top; else the -f files.\n"
    "A pod is explained in the cluster as `gpusched simulate` leaves it just before the\n"
    "pod's turn: the pending pods ahead of it (by priority, then input order; of the cluster\n"
    "and of the files alike) are placed first, so a workload's replicas are placed together.\n"
    "\n"
    "TARGET is a pod: NAME (in the -n namespace), NAMESPACE/NAME or pod/NAME; or a workload,\n"
    "whose pending pods are explained: deployment/NAME, replicaset/NAME, statefulset/NAME,\n"
    "daemonset/NAME, job/NAME, replicationcontroller/NAME (or deploy, rs, sts, ds, rc).\n"
    "\n"
    "Examples:\n"
    "  # Why is this pod of the current cluster pending?\n"
    "  gpusched explain pod/train-0\n"
    "\n"
    "  # The pending pods of a Deployment, only the A100 nodes shown\n"
    "  gpusched explain deployment/web -n ml -l nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB\n"
    "\n"
    "  # A pod of manifest files, as JSON\n"
    "  gpusched explain -f cluster/ -f app.yaml default/web-0 -o json\n"
    "\n"
    "Usage:\n"
    "  gpusched explain [-f FILE]... TARGET [flags]\n"
    "\n";

#define EXPLAIN_MAX_PODS 20    /* pods of one workload explained in full */
#define EXPLAIN_TABLE_NODES 20 /* beyond this many nodes the per-node table needs -o wide */
#define EXPLAIN_GROUP_NAMES 3  /* node names shown per reason group */

struct explain_kind {
    const char *names[3]; /* singular, plural, short */
    const char *kind;     /* NULL: Pod */
    const char *api;      /* group path */
    const char *plural;
};

static const struct explain_kind explain_kinds[] = {
    {{"pod", "pods", "po"}, NULL, NULL, NULL},
    {{"deployment", "deployments", "deploy"}, "Deployment", "/apis/apps/v1", "deployments"},
    {{"replicaset", "replicasets", "rs"}, "ReplicaSet", "/apis/apps/v1", "replicasets"},
    {{"statefulset", "statefulsets", "sts"}, "StatefulSet", "/apis/apps/v1", "statefulsets"},
    {{"daemonset", "daemonsets", "ds"}, "DaemonSet", "/apis/apps/v1", "daemonsets"},
    {{"job", "jobs", NULL}, "Job", "/apis/batch/v1", "jobs"},
    {{"replicationcontroller", "replicationcontrollers", "rc"},
     "ReplicationController",
     "/api/v1",
     "replicationcontrollers"},
};

struct explain_target {
    const struct explain_kind *kind; /* explain_kinds[0] for a pod */
    const char *ns;                  /* NULL: the -n (or context's) namespace */
    const char *name;
    char buf[512];
};

/* TARGET as NAME, NS/NAME, KIND/NAME or KIND/NS/NAME (KIND case-insensitive, with .group
 * suffixes such as deployment.apps accepted). */
static int explain_parse_target(const char *arg, struct explain_target *t)
{
    char *slash, *rest;
    size_t i, j;

    memset(t, 0, sizeof(*t));
    t->kind = &explain_kinds[0];
    if (!*arg || strlen(arg) >= sizeof(t->buf))
        return -EINVAL;
    memcpy(t->buf, arg, strlen(arg) + 1);
    rest = t->buf;
    slash = strchr(rest, '/');
    if (slash) {
        char word[64];
        size_t n = (size_t)(slash - rest);
        char *dot;
        if (n < sizeof(word)) {
            memcpy(word, rest, n);
            word[n] = '\0';
            dot = strchr(word, '.');
            if (dot)
                *dot = '\0';
            for (i = 0; i < sizeof(explain_kinds) / sizeof(explain_kinds[0]); i++)
                for (j = 0; j < 3; j++)
                    if (explain_kinds[i].names[j] && !strcasecmp(word, explain_kinds[i].names[j])) {
                        t->kind = &explain_kinds[i];
                        rest = slash + 1;
                        goto found;
                    }
        }
    }
found:
    slash = strchr(rest, '/');
    if (slash) {
        *slash = '\0';
        t->ns = rest;
        t->name = slash + 1;
        if (!*t->ns || !*t->name || strchr(t->name, '/'))
            return -EINVAL;
    } else {
        t->name = rest;
    }
    return *t->name ? 0 : -EINVAL;
}

/* What every explanation of one run shares. */
struct explain_ctx {
    struct gpusched_cmd_sim_flags *f;
    const struct sched_profile *profile;
    uint64_t seed;
    enum out_format fmt;
    struct manifest_input *in;
    const struct kube_pod **pending; /* input order */
    size_t npending;
    size_t *rank;                  /* queue position of pending[k] */
    const struct kube_pod **queue; /* room for npending + 1 */
    struct sched_result *results;  /* room for npending + 1 */
    struct kube_selector sel;      /* -l */
    bool has_sel;
    struct arena sel_arena;
};

/* explain_node_shown: the node passes -l (always without one). */
static bool explain_node_shown(const struct explain_ctx *ctx, const char *name)
{
    const struct kube_node *n;

    if (!ctx->has_sel)
        return true;
    n = manifest_input_find_node(ctx->in, name);
    return n && kube_selector_matches(&ctx->sel, &n->labels);
}

static const char *explain_outcome(const struct sched_result *r)
{
    if (r->outcome == SCHED_GATED)
        return "SchedulingGated";
    if (r->outcome == SCHED_NOT_MODELLED)
        return "NotModelled";
    if (r->outcome == SCHED_UNSCHEDULABLE)
        return r->error ? "Error" : "Unschedulable";
    return r->nvictims ? "ScheduledAfterPreemption" : "Scheduled";
}

/* explain_verdict writes the one-line answer that comes first. */
static void explain_verdict(const struct kube_pod *pod, const struct sched_result *res, char *out,
                            size_t size)
{
    switch (res->outcome) {
    case SCHED_SCHEDULED:
        if (res->nvictims)
            snprintf(out, size, "pod %s/%s would be scheduled on %s after preempting %zu pod(s)",
                     pod->namespace_, pod->name, res->node, res->nvictims);
        else
            snprintf(out, size, "pod %s/%s would be scheduled on %s", pod->namespace_, pod->name,
                     res->node);
        break;
    case SCHED_UNSCHEDULABLE:
        snprintf(out, size, "pod %s/%s cannot be scheduled: %s", pod->namespace_, pod->name,
                 res->message ? res->message : "no node fits");
        break;
    case SCHED_GATED:
        snprintf(out, size, "pod %s/%s is not attempted: it has scheduling gates", pod->namespace_,
                 pod->name);
        break;
    case SCHED_NOT_MODELLED:
        snprintf(out, size,
                 "pod %s/%s is not attempted: it has spec.resourceClaims and gpusched does not "
                 "model DynamicResources yet",
                 pod->namespace_, pod->name);
        break;
    }
}

/* The node simulate picks (the explanation's own pick may break a tie differently). */
static bool explain_selected(const struct sched_node_verdict *v, const struct sched_result *res)
{
    return res->outcome == SCHED_SCHEDULED && res->node && !strcmp(v->node, res->node);
}

static size_t explain_tied(const struct sched_explanation *x, int64_t *best)
{
    size_t i, n = 0;

    *best = INT64_MIN;
    for (i = 0; i < x->nnodes; i++) {
        const struct sched_node_verdict *v = &x->nodes[i];
        if (v->plugin || v->skipped)
            continue;
        if (v->total > *best) {
            *best = v->total;
            n = 1;
        } else if (v->total == *best) {
            n++;
        }
    }
    return n;
}

static int explain_join_reasons(const struct sched_node_verdict *v, struct buf *b)
{
    size_t i;
    int rc = 0;

    for (i = 0; i < v->nreasons && !rc; i++)
        rc = buf_printf(b, "%s%s", i ? ", " : "", v->reasons[i]);
    return rc;
}

/* explain_why_lines is a node's DynamicResources record as a JSON array of its lines */
static json_t *explain_why_lines(const char *why)
{
    json_t *arr = json_array();
    const char *p = why, *nl;

    while (arr && *p) {
        nl = strchr(p, '\n');
        if (!nl)
            nl = p + strlen(p);
        if (json_array_append_new(arr, json_stringn(p, (size_t)(nl - p)))) {
            json_decref(arr);
            return NULL;
        }
        p = *nl ? nl + 1 : nl;
    }
    return arr;
}

/* explain_print_devices prints, for the shown nodes where DynamicResources could not allocate
 * the pod's claims, what each request found there; nodes with the same record together.
 * 0 or -ENOMEM. */
static int explain_print_devices(const struct explain_ctx *ctx, const struct sched_explanation *x)
{
    bool *done = calloc(x->nnodes + 1, sizeof(*done));
    bool wide = ctx->fmt == OUT_WIDE, any = false;
    size_t i, j, shown = 0;

    if (!done)
        return -ENOMEM;
    for (i = 0; i < x->nnodes; i++) {
        const struct sched_node_verdict *v = &x->nodes[i];
        size_t n = 0;
        const char *p, *nl;

        if (done[i] || !v->dra_why || !explain_node_shown(ctx, v->node))
            continue;
        if (!any)
            printf("\nDevices (DynamicResources could not allocate the claims):\n");
        any = true;
        if (++shown > EXPLAIN_TABLE_NODES && !wide) {
            printf("(more nodes: -o wide lists them all)\n");
            break;
        }
        for (j = i; j < x->nnodes; j++) {
            const struct sched_node_verdict *u = &x->nodes[j];

            if (done[j] || !u->dra_why || strcmp(u->dra_why, v->dra_why) ||
                !explain_node_shown(ctx, u->node))
                continue;
            done[j] = true;
            if (n < EXPLAIN_GROUP_NAMES || wide)
                printf("%s%s", n ? ", " : "  ", u->node);
            n++;
        }
        if (n > EXPLAIN_GROUP_NAMES && !wide)
            printf(" and %zu more", n - EXPLAIN_GROUP_NAMES);
        printf(":\n");
        for (p = v->dra_why; *p; p = *nl ? nl + 1 : nl) {
            nl = strchr(p, '\n');
            if (!nl)
                nl = p + strlen(p);
            printf("    %.*s\n", (int)(nl - p), p);
        }
    }
    free(done);
    return 0;
}

/* explain_print_groups prints the shown nodes grouped by verdict (filter and reasons, or
 * passed, or not evaluated), largest group first, with a few names each. */
static int explain_print_groups(const struct explain_ctx *ctx, const struct sched_explanation *x)
{
    const char *hd[4] = {"NODES", "FILTER", "REASON", "EXAMPLES"};
    struct out_table t;
    size_t *gof = calloc(x->nnodes ? x->nnodes : 1, sizeof(*gof));
    size_t *count = calloc(x->nnodes ? x->nnodes : 1, sizeof(*count));
    char **key = calloc(x->nnodes ? x->nnodes : 1, sizeof(*key));
    size_t i, j, ng = 0;
    int rc = gof && count && key ? out_table_init(&t, 4, hd) : -ENOMEM;

    if (rc)
        goto out;
    /* group of each node: the first earlier node with the same key (linear in the groups,
     * which are few) */
    for (i = 0; i < x->nnodes && !rc; i++) {
        const struct sched_node_verdict *v = &x->nodes[i];
        struct buf b = BUF_INIT(1 << 20);
        gof[i] = (size_t)-1;
        if (!explain_node_shown(ctx, v->node))
            continue;
        rc = buf_printf(&b, "%s\t", v->skipped ? "-" : v->plugin ? v->plugin : "passed");
        if (!rc && v->plugin)
            rc = explain_join_reasons(v, &b);
        if (rc) {
            buf_release(&b);
            break;
        }
        for (j = 0; j < ng; j++)
            if (!strcmp(key[j], b.data))
                break;
        if (j == ng) {
            key[ng++] = b.data;
            b.data = NULL;
        }
        buf_release(&b);
        gof[i] = j;
        count[j]++;
    }
    while (!rc) {
        /* the largest group left, first seen on ties */
        size_t best = (size_t)-1, k, shown = 0;
        struct buf names = BUF_INIT(4096);
        char num[32], *tab;
        const char *cells[4];
        for (j = 0; j < ng; j++)
            if (count[j] && (best == (size_t)-1 || count[j] > count[best]))
                best = j;
        if (best == (size_t)-1)
            break;
        for (k = 0; k < x->nnodes && shown < EXPLAIN_GROUP_NAMES && !rc; k++)
            if (gof[k] == best)
                rc = buf_printf(&names, "%s%s", shown++ ? ", " : "", x->nodes[k].node);
        if (!rc && count[best] > shown)
            rc = buf_printf(&names, ", ... (%zu more)", count[best] - shown);
        snprintf(num, sizeof(num), "%zu", count[best]);
        tab = strchr(key[best], '\t');
        *tab = '\0';
        cells[0] = num;
        cells[1] = key[best];
        cells[2] = !strcmp(key[best], "-") ? "not evaluated" : tab + 1;
        cells[3] = names.data ? names.data : "";
        if (!rc)
            rc = out_table_add_row(&t, cells);
        buf_release(&names);
        count[best] = 0;
    }
    if (!rc && ng) {
        printf("Nodes by verdict:\n");
        out_table_print(&t, stdout);
        printf("\n");
    }
    out_table_release(&t);
out:
    for (i = 0; key && i < ng; i++)
        free(key[i]);
    free(key);
    free(count);
    free(gof);
    return rc;
}

static int explain_print_table(const struct explain_ctx *ctx, const struct kube_pod *pod,
                               size_t ahead, const struct sched_explanation *x,
                               const struct sched_result *res)
{
    const struct sched_profile *profile = ctx->profile;
    uint64_t seed = ctx->seed;
    bool wide = ctx->fmt == OUT_WIDE;
    size_t nshown = 0;
    char verdict[4096];
    const char *fh[4] = {"NODE", "FILTER", "REASON", "PREEMPTION"};
    const char *sh[SCHED_MAX_SCORES + 2];
    struct out_table ft, st;
    size_t i, j, nscore = 0;
    bool any_preempt = false;
    int64_t best;
    size_t ntied;
    int rc;

    explain_verdict(pod, res, verdict, sizeof(verdict));
    /* the answer first, capitalised like a sentence */
    verdict[0] = 'P';
    printf("%s\n\n", verdict);
    printf("Pod %s/%s: priority %" PRId32 ", schedulerName %s, profile %s\n", pod->namespace_,
           pod->name, pod->priority, pod->scheduler_name, profile->name);
    if (res->outcome == SCHED_NOT_MODELLED) {
        /* DynamicResources: held back (PreEnqueue when a claim does not exist); allocation
         * of existing claims is not modelled, so gpusched never places the pod */
        printf("\nResult: not attempted, the pod has spec.resourceClaims and gpusched does not "
               "model DynamicResources yet\n");
        return 0;
    }
    if (res->outcome == SCHED_GATED) {
        /* kube-scheduler does not even try: PodScheduled=False, reason SchedulingGated */
        printf("\nResult: not attempted, the pod has scheduling gates (SchedulingGated)\n");
        return 0;
    }
    printf("Pending pods placed before it (queue order): %zu. Nodes passing the filters: %zu of "
           "%zu",
           ahead, x->nfeasible, x->nnodes);
    if (x->nskipped)
        printf(" (%zu not evaluated: --percentage-of-nodes-to-score %" PRId32
               " stops at enough feasible nodes)",
               x->nskipped, profile->percentage_of_nodes_to_score);
    printf(".\n");
    for (i = 0; i < x->nnodes; i++)
        nshown += explain_node_shown(ctx, x->nodes[i].node);
    if (ctx->has_sel)
        printf("Nodes shown (-l %s): %zu of %zu.\n", ctx->f->selector, nshown, x->nnodes);
    printf("\n");
    if (explain_print_groups(ctx, x)) {
        fprintf(stderr, "gpusched: out of memory\n");
        return 1;
    }

    for (i = 0; i < x->nnodes; i++)
        if (x->nodes[i].preemption)
            any_preempt = true;
    rc = out_table_init(&ft, any_preempt ? 4 : 3, fh);
    for (i = 0; i < x->nnodes && !rc; i++) {
        const struct sched_node_verdict *v = &x->nodes[i];
        struct buf reasons = BUF_INIT(1 << 20);
        const char *cells[4];
        if (!explain_node_shown(ctx, v->node))
            continue;
        rc = explain_join_reasons(v, &reasons);
        cells[0] = v->node;
        cells[1] = v->skipped ? "-" : v->plugin ? v->plugin : "passed";
        cells[2] = v->skipped ? "not evaluated" : v->plugin ? reasons.data : "";
        cells[3] = v->preemption ? v->preemption : "";
        if (!rc)
            rc = out_table_add_row(&ft, cells);
        buf_release(&reasons);
    }
    if (rc)
        goto out;
    if (!x->nnodes)
        printf("No nodes in the input.\n");
    else if (nshown <= EXPLAIN_TABLE_NODES || wide)
        out_table_print(&ft, stdout);
    else
        printf("(%zu nodes: -o wide lists them one by one)\n", nshown);
    if (explain_print_devices(ctx, x)) {
        rc = -ENOMEM;
        goto out;
    }

    /* scores of the feasible nodes, one column per plugin of the profile */
    for (i = 0; i < x->nnodes; i++) {
        if (!x->nodes[i].plugin && !x->nodes[i].skipped) {
            nscore = x->nodes[i].nscores;
            sh[0] = "NODE";
            for (j = 0; j < nscore; j++)
                sh[1 + j] = x->nodes[i].scores[j].plugin;
            sh[1 + nscore] = "TOTAL";
            break;
        }
    }
    if (x->nfeasible) {
        rc = out_table_init(&st, nscore + 2, sh);
        for (i = 0; i < x->nnodes && !rc; i++) {
            const struct sched_node_verdict *v = &x->nodes[i];
            char cellbuf[SCHED_MAX_SCORES + 1][96];
            const char *cells[SCHED_MAX_SCORES + 2];
            if (v->plugin || v->skipped || !explain_node_shown(ctx, v->node))
                continue;
            if (nshown > EXPLAIN_TABLE_NODES && !wide && !explain_selected(v, res))
                continue; /* many nodes: only the chosen one's scores unless -o wide */
            cells[0] = v->node;
            for (j = 0; j < nscore && j < v->nscores; j++) {
                const struct sched_score *s = &v->scores[j];
                if (wide)
                    snprintf(cellbuf[j], sizeof(cellbuf[j]),
                             "%" PRId64 " = %" PRId32 " x %" PRId64 " (raw %" PRId64 ")",
                             s->weighted, s->weight, s->normalized, s->raw);
                else
                    snprintf(cellbuf[j], sizeof(cellbuf[j]), "%" PRId64, s->weighted);
                cells[1 + j] = cellbuf[j];
            }
            for (; j < nscore; j++)
                cells[1 + j] = "";
            snprintf(cellbuf[nscore], sizeof(cellbuf[nscore]), "%" PRId64 "%s", v->total,
                     explain_selected(v, res) ? " (selected)" : "");
            cells[1 + nscore] = cellbuf[nscore];
            rc = out_table_add_row(&st, cells);
        }
        if (rc) {
            out_table_release(&st);
            goto out;
        }
        printf("\nScores (weight x normalized score, summed):\n");
        out_table_print(&st, stdout);
        out_table_release(&st);
    }

    printf("\n");
    if (res->message)
        printf("FailedScheduling: %s\n", res->message);
    switch (res->outcome) {
    case SCHED_SCHEDULED:
        ntied = explain_tied(x, &best);
        if (res->nvictims) {
            printf("Result: scheduled on %s after preempting", res->node);
            for (i = 0; i < res->nvictims; i++)
                printf("%s %s/%s", i ? "," : "", res->victims[i].namespace_, res->victims[i].name);
            printf("\n");
        } else if (ntied > 1) {
            printf("Result: scheduled on %s (%zu nodes share the best total %" PRId64
                   "; --seed %" PRIu64 " breaks the tie)\n",
                   res->node, ntied, best, seed);
        } else {
            printf("Result: scheduled on %s\n", res->node);
        }
        break;
    case SCHED_UNSCHEDULABLE:
        printf("Result: unschedulable%s%s\n", res->nominated_node ? ", nominated node " : "",
               res->nominated_node ? res->nominated_node : "");
        break;
    case SCHED_GATED:
        printf("Result: not attempted, the pod has scheduling gates (SchedulingGated)\n");
        break;
    case SCHED_NOT_MODELLED:
        printf("Result: not attempted, the pod has spec.resourceClaims and gpusched does not "
               "model DynamicResources yet\n");
        break;
    }
out:
    out_table_release(&ft);
    if (rc) {
        fprintf(stderr, "gpusched: out of memory\n");
        return 1;
    }
    return 0;
}

/* explain_json_doc returns the -o json document of one pod, or NULL when out of memory;
 * bwarn: the warning of the binding conditions PreBind would wait for (NULL: none). */
static json_t *explain_json_doc(const struct explain_ctx *ctx, const struct kube_pod *pod,
                                size_t ahead, const struct sched_explanation *x,
                                const struct sched_result *res, const char *bwarn)
{
    const struct sched_profile *profile = ctx->profile;
    json_t *doc = json_object(), *nodes = json_array(), *result = json_object();
    char key[600], verdict[4096];
    size_t i, j;
    int fail = !doc || !nodes || !result;

    snprintf(key, sizeof(key), "%s/%s", pod->namespace_, pod->name);
    for (i = 0; i < x->nnodes && !fail; i++) {
        const struct sched_node_verdict *v = &x->nodes[i];
        json_t *n, *arr;
        if (!explain_node_shown(ctx, v->node))
            continue;
        n = json_object();
        arr = json_array();
        fail |= !n || !arr;
        fail |= json_object_set_new(n, "node", json_string(v->node));
        if (v->skipped)
            /* node sampling stopped before this node: no verdict */
            fail |= json_object_set_new(n, "evaluated", json_false());
        else
            fail |= json_object_set_new(n, "feasible", json_boolean(!v->plugin));
        if (v->skipped) {
            json_decref(arr);
        } else if (v->plugin) {
            for (j = 0; j < v->nreasons; j++)
                fail |= json_array_append_new(arr, json_string(v->reasons[j]));
            fail |= json_object_set_new(n, "plugin", json_string(v->plugin));
            fail |= json_object_set_new(n, "reasons", arr);
            fail |= json_object_set_new(n, "unresolvable", json_boolean(v->unresolvable));
            if (v->dra_why)
                fail |= json_object_set_new(n, "devices", explain_why_lines(v->dra_why));
        } else {
            for (j = 0; j < v->nscores; j++) {
                const struct sched_score *s = &v->scores[j];
                json_t *sj = json_object();
                fail |= !sj;
                fail |= json_object_set_new(sj, "plugin", json_string(s->plugin));
                fail |= json_object_set_new(sj, "raw", json_integer(s->raw));
                fail |= json_object_set_new(sj, "normalized", json_integer(s->normalized));
                fail |= json_object_set_new(sj, "weight", json_integer(s->weight));
                fail |= json_object_set_new(sj, "weighted", json_integer(s->weighted));
                fail |= json_array_append_new(arr, sj);
            }
            fail |= json_object_set_new(n, "scores", arr);
            fail |= json_object_set_new(n, "total", json_integer(v->total));
            fail |= json_object_set_new(n, "selected", json_boolean(explain_selected(v, res)));
        }
        if (v->preemption)
            fail |= json_object_set_new(n, "preemption", json_string(v->preemption));
        fail |= json_array_append_new(nodes, n);
    }
    fail |= json_object_set_new(result, "status", json_string(explain_outcome(res)));
    if (res->node)
        fail |= json_object_set_new(result, "node", json_string(res->node));
    if (res->message)
        fail |= json_object_set_new(result, "message", json_string(res->message));
    if (res->nominated_node)
        fail |= json_object_set_new(result, "nominatedNode", json_string(res->nominated_node));
    if (res->nvictims) {
        json_t *vs = json_array();
        fail |= !vs;
        for (i = 0; i < res->nvictims && !fail; i++) {
            char vk[600];
            snprintf(vk, sizeof(vk), "%s/%s", res->victims[i].namespace_, res->victims[i].name);
            fail |= json_array_append_new(vs, json_string(vk));
        }
        fail |= json_object_set_new(result, "victims", vs);
    }
    explain_verdict(pod, res, verdict, sizeof(verdict));
    fail |= json_object_set_new(doc, "verdict", json_string(verdict));
    fail |= json_object_set_new(doc, "pod", json_string(key));
    fail |= json_object_set_new(doc, "priority", json_integer(pod->priority));
    fail |= json_object_set_new(doc, "profile", json_string(profile->name));
    if (profile->percentage_of_nodes_to_score < 100)
        fail |= json_object_set_new(doc, "percentageOfNodesToScore",
                                    json_integer(profile->percentage_of_nodes_to_score));
    fail |= json_object_set_new(doc, "podsAhead", json_integer((json_int_t)ahead));
    if (kube_pod_ext(pod)->nunmodelled || bwarn) {
        /* the pod's fields gpusched does not model, then the binding conditions PreBind would
         * wait for, as printed on stderr */
        json_t *ws = json_array();
        char line[1024];
        size_t k;
        for (k = 0; ws && k < kube_pod_ext(pod)->nunmodelled; k++)
            fail |= json_array_append_new(
                ws, json_string(gpusched_cmd_pod_warning(pod, k, line, sizeof(line))));
        if (ws && bwarn)
            fail |= json_array_append_new(ws, json_string(bwarn));
        fail |= !ws || json_object_set_new(doc, "warnings", ws);
    }
    fail |= json_object_set_new(doc, "nodes", nodes);
    nodes = NULL;
    fail |= json_object_set_new(doc, "result", result);
    result = NULL;
    json_decref(nodes);
    json_decref(result);
    if (fail) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

/* Place pods[0..n) into c with simulate's rules; results are only needed for their side
 * effects on the cluster. Returns 0 or prints the error and returns 1. */
/* Progress of placing the pods ahead, on stderr once it takes more than a second: on a
 * terminal, or always with -v. */
struct explain_progress {
    double start, last;
    bool tty, on, shown;
};

static void explain_progress_cb(void *arg, size_t done, size_t total)
{
    struct explain_progress *pr = arg;
    double now = mono_now();

    if (!pr->on || now - pr->start < 1.0 || now - pr->last < (pr->tty ? 0.1 : 1.0))
        return;
    pr->last = now;
    pr->shown = true;
    fprintf(stderr, "%sgpusched: placing the pods ahead: %zu/%zu%s", pr->tty ? "\r\033[K" : "",
            done, total, pr->tty ? "" : "\n");
    fflush(stderr);
}

static int explain_place(struct sched_cluster *c, const struct sched_profile *p,
                         const struct kube_pod **pods, size_t n, uint64_t seed,
                         struct sched_result *results, bool verbose)
{
    struct explain_progress pr;
    struct sched_sim_opts so;
    struct err err;
    size_t i;
    int rc;

    memset(&so, 0, sizeof(so));
    memset(&pr, 0, sizeof(pr));
    pr.start = pr.last = mono_now();
    pr.tty = isatty(2);
    pr.on = pr.tty || verbose;
    so.profile_of = gpusched_cmd_profile_of;
    so.progress = explain_progress_cb;
    so.progress_arg = &pr;
    so.seed = seed;
    err_clear(&err);
    rc = sched_simulate(c, p, pods, n, &so, results, &err);
    if (pr.shown && pr.tty)
        fputs("\r\033[K", stderr);
    if (rc) {
        gpusched_cmd_print_err(&err);
        for (i = 0; i < n; i++)
            sched_result_release(&results[i]);
        return 1;
    }
    return 0;
}

/* What a workload's summary says of one of its pods. */
struct explain_sum {
    const char *status; /* explain_outcome's word */
    char node[256];     /* where it goes, "" for none */
};

/* explain_one explains pod (one of ctx->pending) and prints it, or appends its document to
 * docs with -o json; the outcome goes to *sum. Returns 0, or 1 with the error printed. */
static int explain_one(struct explain_ctx *ctx, const struct kube_pod *pod, json_t *docs,
                       struct explain_sum *sum)
{
    struct sched_cluster *before = NULL, *full = NULL;
    struct sched_explanation x;
    struct sched_rng rng;
    struct err err;
    size_t i, mypos = 0, ahead = 0, nresults = 0;
    bool explained = false;
    char *bwarn = NULL; /* the binding conditions PreBind would wait for */
    const struct sched_profile *base = ctx->profile;
    int rc = 1;

    /* with --config, the profile of the pod's schedulerName */
    ctx->profile = gpusched_cmd_profile_for(base, pod);
    memset(&x, 0, sizeof(x));
    err_clear(&err);
    for (i = 0; i < ctx->npending; i++)
        if (ctx->pending[i] == pod)
            mypos = ctx->rank[i];
    /* the pods ahead, in input order: the pending pods ahead of it in the queue, of the
     * cluster and of the files alike, as simulate places them (so a workload's replicas are
     * placed together, and the one that finds no room says so) */
    for (i = 0; i < ctx->npending; i++)
        if (ctx->rank[i] < mypos)
            ctx->queue[ahead++] = ctx->pending[i];

    /* what simulate decides for the pod: the queue with the pod at its end, so the tie-break
     * generator has made the same draws. With every node filtered (no sampling position left
     * behind by a cycle) that one simulation also gives the cluster at the pod's turn: take
     * the pod back off its node. A pod that preempted cannot be taken back (its victims are
     * gone), nor one with claims (their bindings and devices stay): then the pods ahead are placed again
     * on a second cluster */
    ctx->queue[ahead] = pod;
    if (gpusched_cmd_cluster_build(ctx->in, &full))
        goto out;
    if (explain_place(full, ctx->profile, ctx->queue, ahead + 1, ctx->seed, ctx->results,
                      ctx->f->live.verbose))
        goto out;
    nresults = ahead + 1;
    /* kube-scheduler would wait in PreBind for its devices' binding conditions: said */
    if (ctx->results[ahead].outcome == SCHED_SCHEDULED &&
        gpusched_dra_binding_warning(full, pod, "explain", ctx->profile->dra_binding_timeout_ms,
                                     &bwarn)) {
        rc = -ENOMEM;
        goto out;
    }
    if (ctx->profile->percentage_of_nodes_to_score >= 100 && !ctx->results[ahead].nvictims &&
        !pod->nclaims &&            /* (the volume bindings it made are not taken back) */
        !sched_cluster_dra(full) && /* (nor the devices its claims got) */
        (ctx->results[ahead].outcome != SCHED_SCHEDULED ||
         !sched_cluster_forget_pod(full, pod->namespace_, pod->name))) {
        before = full;
        full = NULL;
    } else {
        struct sched_result *tmp = calloc(ahead + 1, sizeof(*tmp));
        if (!tmp) {
            rc = -ENOMEM;
            goto out;
        }
        if (gpusched_cmd_cluster_build(ctx->in, &before) ||
            explain_place(before, ctx->profile, ctx->queue, ahead, ctx->seed, tmp,
                          ctx->f->live.verbose)) {
            free(tmp);
            goto out;
        }
        for (i = 0; i < ahead; i++)
            sched_result_release(&tmp[i]);
        free(tmp);
    }

    sched_rng_seed(&rng, ctx->seed);
    /* DynamicResources records why a node has no devices for the pod (only here: the
     * places before do without) */
    if (sched_cluster_dra(before))
        sched_dra_set_why(sched_cluster_dra(before), true);
    if (sched_explain(before, ctx->profile, pod, &rng, &x, &err)) {
        gpusched_cmd_print_err(&err);
        goto out;
    }
    explained = true;
    sum->status = explain_outcome(&ctx->results[ahead]);
    snprintf(sum->node, sizeof(sum->node), "%s",
             ctx->results[ahead].node ? ctx->results[ahead].node : "");
    gpusched_cmd_warn_unmodelled(&pod, 1);
    if (bwarn)
        fprintf(stderr, "gpusched: warning: %s\n", bwarn);
    if (ctx->fmt == OUT_JSON) {
        json_t *doc = explain_json_doc(ctx, pod, ahead, &x, &ctx->results[ahead], bwarn);
        rc = !doc || json_array_append_new(docs, doc) ? -ENOMEM : 0;
    } else {
        rc = explain_print_table(ctx, pod, ahead, &x, &ctx->results[ahead]);
    }
out:
    for (i = 0; i < nresults; i++)
        sched_result_release(&ctx->results[i]);
    if (explained)
        sched_explanation_release(&x);
    sched_cluster_free(before);
    sched_cluster_free(full);
    free(bwarn);
    ctx->profile = base;
    return rc;
}

/* explain_print_summary ends a workload's explanation with one row per pod explained, in
 * queue order: which replicas find a node, which do not (each one's section above says why). */
static int explain_print_summary(const struct kube_pod **pods, const struct explain_sum *sums,
                                 size_t n)
{
    const char *hd[3] = {"POD", "RESULT", "NODE"};
    struct out_table t;
    size_t i, placed = 0, shown = n < EXPLAIN_MAX_PODS ? n : EXPLAIN_MAX_PODS;
    int rc = out_table_init(&t, 3, hd);

    for (i = 0; i < shown && !rc; i++) {
        const char *cells[3] = {pods[i]->name, sums[i].status,
                                sums[i].node[0] ? sums[i].node : "<none>"};
        placed += sums[i].node[0] != '\0';
        rc = out_table_add_row(&t, cells);
    }
    if (!rc) {
        printf("\n---\n\nSummary: %zu of %zu pod(s) would be scheduled, placed together in queue "
               "order:\n",
               placed, shown);
        out_table_print(&t, stdout);
    }
    out_table_release(&t);
    return rc;
}

/* explain_check_pod says why pod is never scheduled, or returns 0 when it waits. */
static int explain_check_pod(const struct kube_pod *pod, const char *sched_name)
{
    if (pod->node_name && pod->node_name[0]) {
        fprintf(stderr,
                "gpusched: pod %s/%s is already bound to node %s through spec.nodeName; "
                "kube-scheduler never schedules it\n",
                pod->namespace_, pod->name, pod->node_name);
        return 1;
    }
    if (kube_pod_phase_terminal(pod->phase)) {
        fprintf(stderr, "gpusched: pod %s/%s has phase %s and is never scheduled\n",
                pod->namespace_, pod->name, pod->phase);
        return 1;
    }
    if (sched_name && strcmp(pod->scheduler_name, sched_name)) {
        fprintf(stderr, "gpusched: pod %s/%s has schedulerName %s, not %s\n", pod->namespace_,
                pod->name, pod->scheduler_name, sched_name);
        return 1;
    }
    return 0;
}

/* explain_live_pod: a pod named on the command line that the lists left out (it is bound, or
 * finished): GET it, to say so rather than "not found". */
static void explain_live_missing(struct gpusched_live *l, const char *ns, const char *name)
{
    char path[1200], nse[512], ne[512];
    json_t *obj = NULL;
    struct err err;

    err_clear(&err);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s",
             kube_path_escape(ns, nse, sizeof(nse)), kube_path_escape(name, ne, sizeof(ne)));
    if (gpusched_live_get(l, path, &obj, &err) == 0) {
        json_t *spec = json_object_get(obj, "spec"), *st = json_object_get(obj, "status");
        const char *node = json_string_value(json_object_get(spec, "nodeName"));
        const char *phase = json_string_value(json_object_get(st, "phase"));
        if (node && *node)
            fprintf(stderr, "gpusched: pod %s/%s is not pending: it is bound to node %s\n", ns,
                    name, node);
        else if (phase && !strcmp(phase, "Pending"))
            /* pending, but not among the pods read: another namespace than -n's */
            fprintf(stderr,
                    "gpusched: pod %s/%s is pending, but the pending pods read are those of "
                    "namespace %s: pass -n %s (or -A)\n",
                    ns, name, l->namespace_, ns);
        else
            fprintf(stderr, "gpusched: pod %s/%s is not pending: its phase is %s\n", ns, name,
                    phase ? phase : "unknown");
    } else if (err.code == -ENOENT) {
        fprintf(stderr, "gpusched: pods \"%s\" not found in namespace \"%s\"\n", name, ns);
    } else {
        gpusched_cmd_print_err(&err);
    }
    json_decref(obj);
}

/* explain_selector_string turns a metav1.LabelSelector (JSON) into -l syntax in b. */
static int explain_selector_string(const json_t *sel, struct buf *b)
{
    const json_t *ml = json_object_get(sel, "matchLabels"),
                 *me = json_object_get(sel, "matchExpressions");
    const char *k;
    json_t *v, *e;
    size_t i, j;
    int rc = 0;

    if (json_is_object(sel) && !json_object_get(sel, "matchLabels") &&
        !json_object_get(sel, "matchExpressions") && json_object_size(sel))
        /* a ReplicationController's selector is a plain map */
        ml = sel;
    json_object_foreach((json_t *)ml, k, v) rc =
        rc ? rc : buf_printf(b, "%s%s=%s", b->len ? "," : "", k, json_string_value(v));
    json_array_foreach(me, i, e)
    {
        const char *key = json_string_value(json_object_get(e, "key"));
        const char *op = json_string_value(json_object_get(e, "operator"));
        const json_t *vals = json_object_get(e, "values");
        if (!key || !op)
            return -EINVAL;
        if (!rc && b->len)
            rc = buf_printf(b, ",");
        if (rc)
            break;
        if (!strcmp(op, "Exists")) {
            rc = buf_printf(b, "%s", key);
        } else if (!strcmp(op, "DoesNotExist")) {
            rc = buf_printf(b, "!%s", key);
        } else if (!strcmp(op, "In") || !strcmp(op, "NotIn")) {
            rc = buf_printf(b, "%s %s (", key, !strcmp(op, "In") ? "in" : "notin");
            json_array_foreach(vals, j, v) rc =
                rc ? rc : buf_printf(b, "%s%s", j ? "," : "", json_string_value(v));
            rc = rc ? rc : buf_printf(b, ")");
        } else {
            return -EINVAL;
        }
    }
    return rc;
}

/* explain_workload_pods collects into out (room for ctx->npending) the pending pods of a
 * workload: of the files, those it expanded to; of the cluster, those its selector matches in
 * its namespace. Returns how many, or -1 with the error printed. */
static long explain_workload_pods(struct explain_ctx *ctx, const struct explain_target *t,
                                  const char *ns, const struct kube_pod **out)
{
    struct kube_selector sel;
    struct arena a;
    bool live_sel = false, found = false;
    size_t i, n = 0;
    long rc = -1;

    a = (struct arena)ARENA_INIT;
    memset(&sel, 0, sizeof(sel));
    if (ctx->f->live.client) {
        char path[1400], nse[512], ne[512];
        struct buf b = BUF_INIT(1 << 16);
        json_t *obj = NULL;
        struct err err;

        err_clear(&err);
        snprintf(path, sizeof(path), "%s/namespaces/%s/%s/%s", t->kind->api,
                 kube_path_escape(ns, nse, sizeof(nse)), t->kind->plural,
                 kube_path_escape(t->name, ne, sizeof(ne)));
        if (gpusched_live_get(&ctx->f->live, path, &obj, &err) == 0) {
            found = true;
            if (explain_selector_string(json_object_get(json_object_get(obj, "spec"), "selector"),
                                        &b) ||
                kube_selector_parse(b.data ? b.data : "", &a, &sel, &err)) {
                fprintf(stderr, "gpusched: %s %s/%s: cannot read its spec.selector\n",
                        t->kind->kind, ns, t->name);
                json_decref(obj);
                buf_release(&b);
                goto out;
            }
            live_sel = b.len > 0; /* an empty selector matches nothing for a controller */
        } else if (err.code != -ENOENT) {
            gpusched_cmd_print_err(&err);
            json_decref(obj);
            buf_release(&b);
            goto out;
        }
        json_decref(obj);
        buf_release(&b);
    }
    for (i = 0; i < ctx->npending; i++) {
        const struct kube_pod *p = ctx->pending[i];
        if (strcmp(p->namespace_, ns))
            continue;
        if (gpusched_live_pod(p) ? live_sel && kube_selector_matches(&sel, &p->labels)
                                 : p->owner.kind && !strcmp(p->owner.kind, t->kind->kind) &&
                                       !strcmp(p->owner.name, t->name)) {
            out[n++] = p;
            found = true;
        }
    }
    for (i = 0; !found && i < ctx->in->npods; i++) {
        const struct kube_pod *p = &ctx->in->pods[i];
        found = p->owner.kind && !strcmp(p->owner.kind, t->kind->kind) &&
                !strcmp(p->owner.name, t->name) && !strcmp(p->namespace_, ns);
    }
    if (!found) {
        fprintf(stderr, "gpusched: %s \"%s\" not found in namespace \"%s\"\n", t->kind->plural,
                t->name, ns);
        goto out;
    }
    rc = (long)n;
out:
    arena_release(&a);
    return rc;
}

int gpusched_cmd_explain(int argc, char **argv)
{
    struct flag_list pos = {0};
    struct gpusched_cmd_sim_flags f;
    struct explain_target target;
    struct manifest_input in;
    struct explain_ctx ctx;
    const struct kube_pod **targets = NULL;
    struct explain_sum *sums = NULL;
    size_t *order = NULL;
    json_t *docs = NULL;
    struct err err;
    bool help, loaded = false;
    size_t i, ntargets = 0;
    const char *ns;
    int rc;

    memset(&ctx, 0, sizeof(ctx));
    ctx.sel_arena = (struct arena)ARENA_INIT;
    err_clear(&err);
    rc = gpusched_cmd_sim_parse("explain", explain_usage, argc, argv, &f, &pos, &help);
    if (rc || help)
        goto out;
    if ((rc = gpusched_kubectl_output(&f.output, 0)))
        goto out;
    if (pos.n != 1) {
        if (pos.n)
            rc = gpusched_cmd_usage_error("explain", "expected one TARGET, got %zu arguments",
                                          pos.n);
        else
            rc = gpusched_cmd_usage_error("explain", "must specify the POD to explain");
        goto out;
    }
    if (explain_parse_target(pos.v[0], &target)) {
        rc = gpusched_cmd_usage_error("explain",
                                      "invalid TARGET \"%s\": want NAME, NAMESPACE/NAME, "
                                      "pod/NAME or KIND/NAME",
                                      pos.v[0]);
        goto out;
    }
    rc = gpusched_cmd_sim_check("explain", &f, &ctx.fmt, &ctx.profile, &ctx.seed);
    if (rc)
        goto out;
    if (f.selector && kube_selector_parse(f.selector, &ctx.sel_arena, &ctx.sel, &err)) {
        rc = gpusched_cmd_usage_error("explain",
                                      "invalid argument \"%s\" for \"-l, --selector\" "
                                      "flag: %s",
                                      f.selector, err.msg);
        goto out;
    }
    ctx.has_sel = f.selector != NULL;
    ctx.f = &f;

    /* NAMESPACE/NAME of a cluster without -n (nor files, whose default namespace -n is):
     * the pending pods of that namespace are the ones to read */
    rc = gpusched_cmd_load_live(
        &f.files, f.namespace_ || f.files.n || f.live.all_namespaces ? f.namespace_ : target.ns,
        &f.live, &in, NULL);
    if (rc)
        goto out;
    loaded = true;
    ctx.in = &in;
    rc = 1;
    ns = target.ns                       ? target.ns
         : f.live.client                 ? f.live.namespace_
         : f.namespace_ && *f.namespace_ ? f.namespace_
                                         : "default";

    /* the queue: pending pods in input order, ranked by queue position */
    ctx.pending = calloc(in.npods + 1, sizeof(*ctx.pending));
    ctx.queue = calloc(in.npods + 1, sizeof(*ctx.queue));
    ctx.results = calloc(in.npods + 1, sizeof(*ctx.results));
    ctx.rank = calloc(in.npods + 1, sizeof(*ctx.rank));
    order = calloc(in.npods + 1, sizeof(*order));
    targets = calloc(in.npods + 1, sizeof(*targets));
    sums = calloc(EXPLAIN_MAX_PODS, sizeof(*sums));
    if (!ctx.pending || !ctx.queue || !ctx.results || !ctx.rank || !order || !targets || !sums) {
        rc = -ENOMEM;
        goto out;
    }
    ctx.npending = gpusched_cmd_pending_pods(&in, f.sched_name, ctx.pending);
    gpusched_cmd_queue_order(ctx.pending, ctx.npending, order);
    for (i = 0; i < ctx.npending; i++)
        ctx.rank[order[i]] = i;

    if (!target.kind->kind) {
        const struct kube_pod *pod = manifest_input_find_pod(&in, ns, target.name);
        if (!pod) {
            if (f.live.client)
                explain_live_missing(&f.live, ns, target.name);
            else
                fprintf(stderr, "gpusched: pods \"%s\" not found in namespace \"%s\"\n",
                        target.name, ns);
            goto out;
        }
        if (explain_check_pod(pod, f.sched_name))
            goto out;
        targets[ntargets++] = pod;
    } else {
        long n = explain_workload_pods(&ctx, &target, ns, targets);
        if (n < 0)
            goto out;
        ntargets = (size_t)n;
        /* explain them in queue order */
        for (i = 1; i < ntargets; i++) {
            const struct kube_pod *v = targets[i];
            size_t j, rv = 0, rj;
            for (j = 0; j < ctx.npending; j++)
                if (ctx.pending[j] == v)
                    rv = ctx.rank[j];
            for (j = i; j > 0; j--) {
                size_t k;
                rj = 0;
                for (k = 0; k < ctx.npending; k++)
                    if (ctx.pending[k] == targets[j - 1])
                        rj = ctx.rank[k];
                if (rj <= rv)
                    break;
                targets[j] = targets[j - 1];
            }
            targets[j] = v;
        }
    }

    if (ctx.fmt == OUT_JSON && !(docs = json_array())) {
        rc = -ENOMEM;
        goto out;
    }
    if (target.kind->kind && ctx.fmt != OUT_JSON) {
        printf("%s %s/%s: %zu pending pod(s)%s\n", target.kind->kind, ns, target.name, ntargets,
               ntargets > EXPLAIN_MAX_PODS ? "; the first ones in queue order follow" : "");
        if (ntargets)
            printf("\n");
    }
    rc = 0;
    for (i = 0; i < ntargets && i < EXPLAIN_MAX_PODS && !rc; i++) {
        if (i && ctx.fmt != OUT_JSON)
            printf("\n---\n\n");
        rc = explain_one(&ctx, targets[i], docs, &sums[i]);
    }
    if (!rc && target.kind->kind && ctx.fmt != OUT_JSON && ntargets > 1)
        rc = explain_print_summary(targets, sums, ntargets);
    if (!rc && ctx.fmt == OUT_JSON) {
        if (target.kind->kind) {
            json_t *doc = json_object();
            char wk[1100];
            int fail = !doc;
            snprintf(wk, sizeof(wk), "%s/%s/%s", target.kind->names[0], ns, target.name);
            fail |= json_object_set_new(doc, "workload", json_string(wk));
            fail |= json_object_set_new(doc, "pendingPods", json_integer((json_int_t)ntargets));
            fail |= json_object_set(doc, "pods", docs);
            rc = gpusched_cmd_print_json(doc, fail, 2);
            json_decref(doc);
        } else {
            rc = gpusched_cmd_print_json(json_array_get(docs, 0), 0, 2);
        }
    }
    rc = gpusched_cmd_flush(rc);
out:
    rc = gpusched_cmd_status(rc);
    json_decref(docs);
    free(ctx.results);
    free(order);
    free(ctx.rank);
    free(ctx.queue);
    free(ctx.pending);
    free(targets);
    free(sums);
    arena_release(&ctx.sel_arena);
    if (loaded)
        manifest_input_release(&in);
    gpusched_live_close(&f.live);
    flag_list_release(&f.files);
    flag_list_release(&pos);
    return rc;
}
