/* cmd_explain.c - `gpusched explain`: the per-node answer kube-scheduler's aggregated
 * FailedScheduling message loses: for every node the filter that rejected the pod and why, or
 * its score per plugin, then the message and the node simulate would pick.
 *
 * The pod is explained in the cluster as simulate leaves it just before the pod's turn: the
 * pending pods ahead of it in queue order (priority, then input order) are placed first. */
#include "gpusched/cmd_explain.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "gpusched/cmd_common.h"
#include "gpusched/output.h"
#include "kube/rules.h"

static const char explain_usage[] =
    "Explain, node by node, where a pod of manifest files can go: for every node the filter\n"
    "that rejected it and its reason, or its score per plugin and the total; then the\n"
    "FailedScheduling message kube-scheduler would write and the node simulate picks.\n"
    "\n"
    "The pod is evaluated in the cluster as `gpusched simulate` leaves it just before the\n"
    "pod's turn: the pending pods ahead of it (higher priority, or earlier in the input) are\n"
    "placed first.\n"
    "\n"
    "POD is NAME (in the -n namespace, default \"default\"), NAMESPACE/NAME or pod/NAME.\n"
    "\n"
    "Examples:\n"
    "  # Why the pod lands where it does\n"
    "  gpusched explain -f examples/seed/ not-in-gpu-node\n"
    "\n"
    "  # The same as JSON\n"
    "  gpusched explain -f cluster/ -f app.yaml default/web-0 -o json\n"
    "\n"
    "Usage:\n"
    "  gpusched explain -f FILE... POD [flags]\n"
    "\n";

struct explain_target {
    const char *ns; /* NULL: default namespace */
    const char *name;
    char buf[512];
};

/* POD as NAME, NS/NAME, pod/NAME, pods/NAME or pod/NS/NAME. */
static int explain_parse_pod(const char *arg, struct explain_target *t)
{
    const char *s = arg;
    char *slash;

    if (!strncmp(s, "pod/", 4))
        s += 4;
    else if (!strncmp(s, "pods/", 5))
        s += 5;
    if (strlen(s) >= sizeof(t->buf) || !*s)
        return -EINVAL;
    strcpy(t->buf, s);
    slash = strchr(t->buf, '/');
    if (slash) {
        *slash = '\0';
        t->ns = t->buf;
        t->name = slash + 1;
        if (!*t->ns || !*t->name || strchr(t->name, '/'))
            return -EINVAL;
    } else {
        t->ns = NULL;
        t->name = t->buf;
    }
    return 0;
}

static const char *explain_outcome(const struct sched_result *r)
{
    if (r->outcome == SCHED_GATED)
        return "SchedulingGated";
    if (r->outcome == SCHED_UNSCHEDULABLE)
        return "Unschedulable";
    return r->nvictims ? "ScheduledAfterPreemption" : "Scheduled";
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

static int explain_print_table(const struct kube_pod *pod, const struct sched_profile *profile,
                               size_t ahead, const struct sched_explanation *x,
                               const struct sched_result *res, uint64_t seed, bool wide)
{
    const char *fh[4] = {"NODE", "FILTER", "REASON", "PREEMPTION"};
    const char *sh[SCHED_MAX_SCORES + 2];
    struct out_table ft, st;
    size_t i, j, nscore = 0;
    bool any_preempt = false;
    int64_t best;
    size_t ntied;
    int rc;

    printf("Pod %s/%s: priority %" PRId32 ", schedulerName %s, profile %s\n", pod->namespace_,
           pod->name, pod->priority, pod->scheduler_name, profile->name);
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
    printf(".\n\n");

    for (i = 0; i < x->nnodes; i++)
        if (x->nodes[i].preemption)
            any_preempt = true;
    rc = out_table_init(&ft, any_preempt ? 4 : 3, fh);
    for (i = 0; i < x->nnodes && !rc; i++) {
        const struct sched_node_verdict *v = &x->nodes[i];
        struct buf reasons = BUF_INIT(1 << 20);
        const char *cells[4];
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
    if (x->nnodes)
        out_table_print(&ft, stdout);
    else
        printf("No nodes in the input.\n");

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
            if (v->plugin || v->skipped)
                continue;
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
    }
out:
    out_table_release(&ft);
    if (rc) {
        fprintf(stderr, "gpusched: out of memory\n");
        return 1;
    }
    return 0;
}

static int explain_print_json(const struct kube_pod *pod, const struct sched_profile *profile,
                              size_t ahead, const struct sched_explanation *x,
                              const struct sched_result *res)
{
    json_t *doc = json_object(), *nodes = json_array(), *result = json_object();
    char key[600];
    size_t i, j;
    int fail = !doc || !nodes || !result, rc = 1;

    snprintf(key, sizeof(key), "%s/%s", pod->namespace_, pod->name);
    for (i = 0; i < x->nnodes && !fail; i++) {
        const struct sched_node_verdict *v = &x->nodes[i];
        json_t *n = json_object(), *arr = json_array();
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
    fail |= json_object_set_new(doc, "pod", json_string(key));
    fail |= json_object_set_new(doc, "priority", json_integer(pod->priority));
    fail |= json_object_set_new(doc, "profile", json_string(profile->name));
    if (profile->percentage_of_nodes_to_score < 100)
        fail |= json_object_set_new(doc, "percentageOfNodesToScore",
                                    json_integer(profile->percentage_of_nodes_to_score));
    fail |= json_object_set_new(doc, "podsAhead", json_integer((json_int_t)ahead));
    fail |= json_object_set_new(doc, "nodes", nodes);
    nodes = NULL;
    fail |= json_object_set_new(doc, "result", result);
    result = NULL;
    rc = gpusched_cmd_print_json(doc, fail, 2);
    json_decref(nodes);
    json_decref(result);
    json_decref(doc);
    return rc;
}

/* Place pods[0..n) into c with simulate's rules; results are only needed for their side
 * effects on the cluster. Returns 0 or prints the error and returns 1. */
static int explain_place(struct sched_cluster *c, const struct sched_profile *p,
                         const struct kube_pod **pods, size_t n, uint64_t seed,
                         struct sched_result *results)
{
    struct sched_sim_opts so;
    struct err err;
    size_t i;
    int rc;

    memset(&so, 0, sizeof(so));
    so.seed = seed;
    err_clear(&err);
    rc = sched_simulate(c, p, pods, n, &so, results, &err);
    if (rc) {
        gpusched_cmd_print_err(&err);
        for (i = 0; i < n; i++)
            sched_result_release(&results[i]);
        return 1;
    }
    return 0;
}

int gpusched_cmd_explain(int argc, char **argv)
{
    struct flag_list pos = {0};
    struct gpusched_cmd_sim_flags f;
    struct explain_target target;
    struct manifest_input in;
    struct sched_cluster *before = NULL, *full = NULL;
    const struct sched_profile *profile;
    const struct kube_pod *pod;
    const struct kube_pod **pending = NULL;
    const struct kube_pod **queue = NULL;
    struct sched_result *results = NULL;
    size_t *order = NULL, *rank = NULL, mypos = 0;
    struct sched_explanation x;
    struct sched_rng rng;
    struct err err;
    enum out_format fmt;
    uint64_t seed;
    bool help, loaded = false, explained = false;
    size_t i, npending = 0, ahead = 0, nresults = 0;
    int rc;

    memset(&x, 0, sizeof(x));
    err_clear(&err);
    rc = gpusched_cmd_sim_parse("explain", argc, argv, &f, &pos, &help);
    if (rc)
        goto out;
    if (help) {
        gpusched_cmd_help("explain", explain_usage, f.table, GPUSCHED_CMD_SIM_NFLAGS);
        goto out;
    }
    if (pos.n != 1) {
        if (pos.n)
            rc = gpusched_cmd_usage_error("explain", "expected one POD, got %zu arguments", pos.n);
        else
            rc = gpusched_cmd_usage_error("explain", "must specify the POD to explain");
        goto out;
    }
    if (explain_parse_pod(pos.v[0], &target)) {
        rc = gpusched_cmd_usage_error("explain",
                                      "invalid POD \"%s\": want NAME, NAMESPACE/NAME or "
                                      "pod/NAME",
                                      pos.v[0]);
        goto out;
    }
    rc = gpusched_cmd_sim_check("explain", &f, &fmt, &profile, &seed);
    if (rc)
        goto out;

    rc = gpusched_cmd_load_live(&f.files, f.namespace_, &f.live, &in, NULL);
    if (rc)
        goto out;
    loaded = true;
    rc = 1;
    if (!target.ns && f.namespace_ && *f.namespace_)
        target.ns = f.namespace_;
    pod = manifest_input_find_pod(&in, target.ns, target.name);
    if (!pod) {
        fprintf(stderr, "gpusched: pods \"%s\" not found in namespace \"%s\"\n", target.name,
                target.ns ? target.ns : "default");
        goto out;
    }
    if (pod->node_name && pod->node_name[0]) {
        fprintf(stderr,
                "gpusched: pod %s/%s is already bound to node %s through spec.nodeName; "
                "kube-scheduler never schedules it\n",
                pod->namespace_, pod->name, pod->node_name);
        goto out;
    }
    if (kube_pod_phase_terminal(pod->phase)) {
        fprintf(stderr, "gpusched: pod %s/%s has phase %s and is never scheduled\n",
                pod->namespace_, pod->name, pod->phase);
        goto out;
    }
    if (f.sched_name && strcmp(pod->scheduler_name, f.sched_name)) {
        fprintf(stderr, "gpusched: pod %s/%s has schedulerName %s, not %s\n", pod->namespace_,
                pod->name, pod->scheduler_name, f.sched_name);
        goto out;
    }

    /* the queue: pending pods in input order, then the ones ahead of ours */
    pending = calloc(in.npods ? in.npods : 1, sizeof(*pending));
    queue = calloc(in.npods ? in.npods : 1, sizeof(*queue));
    order = calloc(in.npods ? in.npods : 1, sizeof(*order));
    results = calloc(in.npods ? in.npods : 1, sizeof(*results));
    if (!pending || !queue || !order || !results) {
        rc = -ENOMEM;
        goto out;
    }
    npending = gpusched_cmd_pending_pods(&in, f.sched_name, pending);
    gpusched_cmd_queue_order(pending, npending, order);
    /* pods ahead of ours, kept in input order (sched_simulate orders them again the same
     * way): those whose queue position is before ours. rank[k] = queue position of pending[k] */
    rank = calloc(npending ? npending : 1, sizeof(*rank));
    if (!rank) {
        rc = -ENOMEM;
        goto out;
    }
    for (i = 0; i < npending; i++)
        rank[order[i]] = i;
    for (i = 0; i < npending; i++)
        if (pending[i] == pod)
            mypos = rank[i];
    for (i = 0; i < npending; i++)
        if (rank[i] < mypos)
            queue[ahead++] = pending[i];

    if (gpusched_cmd_cluster_build(&in, &before) || gpusched_cmd_cluster_build(&in, &full))
        goto out;
    if (explain_place(before, profile, queue, ahead, seed, results))
        goto out;
    for (i = 0; i < ahead; i++)
        sched_result_release(&results[i]);

    sched_rng_seed(&rng, seed);
    if (sched_explain(before, profile, pod, &rng, &x, &err)) {
        gpusched_cmd_print_err(&err);
        goto out;
    }
    explained = true;

    /* what simulate itself decides for the pod: the same queue with the pod at its end, so
     * the tie-break generator has made the same draws */
    queue[ahead] = pod;
    nresults = ahead + 1;
    if (explain_place(full, profile, queue, nresults, seed, results)) {
        nresults = 0;
        goto out;
    }
    rc = fmt == OUT_JSON
             ? explain_print_json(pod, profile, ahead, &x, &results[ahead])
             : explain_print_table(pod, profile, ahead, &x, &results[ahead], seed, fmt == OUT_WIDE);
    rc = gpusched_cmd_flush(rc);
out:
    rc = gpusched_cmd_status(rc);
    for (i = 0; i < nresults; i++)
        sched_result_release(&results[i]);
    if (explained)
        sched_explanation_release(&x);
    free(results);
    free(order);
    free(rank);
    free(queue);
    free(pending);
    sched_cluster_free(before);
    sched_cluster_free(full);
    if (loaded)
        manifest_input_release(&in);
    gpusched_live_close(&f.live);
    flag_list_release(&f.files);
    flag_list_release(&pos);
    return rc;
}
