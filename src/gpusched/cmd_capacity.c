/* cmd_capacity.c - `gpusched capacity`: copies of each pod spec placed one at a time, as
 * kube-scheduler would place them, until one fits nowhere (or --max is reached).
 *
 * The specs are the pending pods of the -f files, in input order (a workload counts once:
 * its first pod); nodes and bound pods of the files and, when it is read, of the cluster are
 * the capacity they share. Specs are cumulative: the copies of the first stay while the second
 * is placed. Copies never preempt: when the next copy would only fit by evicting pods, that is
 * where the count stops, and the answer says so. */
#include "gpusched/cmd_capacity-int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/goparse.h"
#include "gpusched/cmd_common-int.h"
#include "gpusched/live-int.h"
#include "gpusched/kubectl-int.h"
#include "gpusched/dra-int.h"
#include "gpusched/output.h"
#include "kube/rules.h"

#define CAPACITY_DEFAULT_MAX 10000
#define CAPACITY_GPU "nvidia.com/gpu"

static const char capacity_usage[] =
    "Count how many more copies of a pod fit, the way kube-scheduler would place them one\n"
    "after another: where each goes, and the FailedScheduling message that stops the next.\n"
    "Also the GPU fragmentation left: free nvidia.com/gpu on nodes where no copy fits.\n"
    "\n"
    "The pod specs are the pods not bound to a node in the -f files (Pods, or the first pod\n"
    "of each Deployment, StatefulSet, Job, ... template), taken in input order; several specs\n"
    "are placed one after the other, each on what the previous left. The capacity is the\n"
    "cluster of the kubeconfig (as kubectl finds it) unless --kubeconfig/--context are absent\n"
    "and the files hold nodes (then the files' nodes and bound pods). Copies never preempt.\n"
    "\n"
    "Examples:\n"
    "  # How many more 8-GPU trainers fit on the current cluster?\n"
    "  gpusched capacity -f trainer.yaml\n"
    "\n"
    "  # On manifest files, at most 50, as JSON\n"
    "  gpusched capacity -f cluster/ -f trainer.yaml --max 50 -o json\n"
    "\n"
    "Usage:\n"
    "  gpusched capacity -f POD_FILE... [flags]\n"
    "\n";

struct capacity_node {
    const char *name; /* borrowed from the cluster */
    size_t copies;
};

struct capacity_spec {
    const struct kube_pod *pod;
    size_t copies;
    struct capacity_node *nodes; /* nodes that took copies, first copy first */
    size_t nnodes;
    struct sched_result stop; /* the attempt that did not fit (outcome, message, victims) */
    bool stopped_by_max;
    bool dra; /* the cluster has DRA objects: free GPUs count the slices' devices */
    int64_t gpus_per_copy;
    int64_t gpu_free, gpu_stranded, gpu_fragmented; /* after the copies */
    size_t stranded_nodes, fragmented_nodes;
};

static int64_t capacity_pod_gpus(const struct kube_pod *p)
{
    int64_t sum = 0, init = 0;
    size_t i, j;

    for (i = 0; i < p->ncontainers; i++)
        for (j = 0; j < p->containers[i].requests.nscalars; j++)
            if (!strcmp(p->containers[i].requests.scalars[j].name, CAPACITY_GPU))
                sum += p->containers[i].requests.scalars[j].value;
    for (i = 0; i < p->ninit_containers; i++)
        for (j = 0; j < p->init_containers[i].requests.nscalars; j++)
            if (!strcmp(p->init_containers[i].requests.scalars[j].name, CAPACITY_GPU) &&
                p->init_containers[i].requests.scalars[j].value > init)
                init = p->init_containers[i].requests.scalars[j].value;
    return sum > init ? sum : init;
}

/* capacity_specs picks the specs: pending pods of the files, one per workload. */
static size_t capacity_specs(const struct manifest_input *in, const char *sched_name,
                             struct capacity_spec *out)
{
    size_t i, j, n = 0;

    for (i = 0; i < in->npods; i++) {
        const struct kube_pod *p = &in->pods[i];
        bool dup = false;
        if ((p->node_name && p->node_name[0]) || kube_pod_phase_terminal(p->phase) ||
            gpusched_live_pod(p) || (sched_name && strcmp(p->scheduler_name, sched_name)))
            continue;
        for (j = 0; j < n && p->owner.kind && !dup; j++)
            dup = out[j].pod->owner.kind && !strcmp(out[j].pod->owner.kind, p->owner.kind) &&
                  !strcmp(out[j].pod->owner.name, p->owner.name) &&
                  !strcmp(out[j].pod->namespace_, p->namespace_);
        if (!dup)
            out[n++].pod = p;
    }
    return n;
}

struct capacity_progress {
    bool on, tty, shown;
    double start, last;
};

static void capacity_progress(struct capacity_progress *pr, const struct kube_pod *p, size_t n,
                              bool done)
{
    double now = mono_now();

    if (!pr->on || now - pr->start < 1.0 || (!done && now - pr->last < (pr->tty ? 0.1 : 1.0)))
        return;
    if (done && !pr->shown)
        return;
    pr->last = now;
    pr->shown = true;
    fprintf(stderr, "%sgpusched: %s/%s: %zu copies placed%s", pr->tty ? "\r\033[K" : "",
            p->namespace_, p->name, n, pr->tty && !done ? "" : "\n");
    fflush(stderr);
}

/* capacity_place places copies of s->pod into c until one does not fit or max is reached. */
static int capacity_place(struct sched_cluster *c, const struct sched_profile *prof,
                          struct sched_rng *rng, struct capacity_spec *s, size_t max,
                          struct capacity_progress *pr, struct arena *copies, struct err *err)
{
    struct kube_pod copy = *s->pod;
    char name[600];
    int rc = 0;

    s->gpus_per_copy = capacity_pod_gpus(s->pod);
    /* the copies may not preempt: the count is of what fits as the cluster is */
    copy.nominated_node_name = "";
    copy.node_name = "";
    for (;;) {
        struct sched_result r;
        size_t k;

        if (s->copies >= max) {
            s->stopped_by_max = true;
            break;
        }
        snprintf(name, sizeof(name), "%s-capacity-%zu", s->pod->name, s->copies + 1);
        copy.name = name;
        if (sched_cluster_dra(c)) {
            /* the DRA world keeps the pods whose claims it allocated: each copy its own, and
             * one naming claim templates gets its claims as the controller would make them */
            struct kube_pod *own = arena_alloc(copies, sizeof(*own));

            if (!own || !(copy.name = arena_strdup(copies, name))) {
                rc = err_set(err, -ENOMEM, "out of memory");
                break;
            }
            *own = copy;
            if (gpusched_dra_add_copy(c, own)) {
                rc = err_set(err, -EINVAL, "cannot add the copy's claims");
                break;
            }
            rc = sched_schedule_one(c, prof, own, rng, &r, err);
        } else {
            rc = sched_schedule_one(c, prof, &copy, rng, &r, err);
        }
        if (rc)
            break;
        if (r.outcome != SCHED_SCHEDULED) {
            s->stop = r;
            break;
        }
        rc = sched_cluster_assume_pod(c, &copy, r.node, err);
        for (k = 0; !rc && k < s->nnodes; k++)
            if (!strcmp(s->nodes[k].name, r.node))
                break;
        if (!rc && k == s->nnodes) {
            struct capacity_node *nn = realloc(s->nodes, (s->nnodes + 1) * sizeof(*nn));
            struct sched_node_usage u;
            if (!nn || sched_cluster_node_usage(c, r.node, &u)) {
                rc = err_set(err, -ENOMEM, "out of memory");
            } else {
                s->nodes = nn;
                s->nodes[s->nnodes].name = u.name;
                s->nodes[s->nnodes++].copies = 0;
            }
        }
        sched_result_release(&r);
        if (rc)
            break;
        s->nodes[k].copies++;
        s->copies++;
        capacity_progress(pr, s->pod, s->copies, false);
    }
    capacity_progress(pr, s->pod, s->copies, true);
    return rc;
}

/* capacity_fragmentation: free GPUs on the nodes where one more copy does not fit, and of
 * those, the ones on nodes turned away only for too few free GPUs. */
static int capacity_fragmentation(struct sched_cluster *c, const struct manifest_input *in,
                                  const struct sched_profile *prof, uint64_t seed,
                                  struct capacity_spec *s, struct arena *copies, struct err *err)
{
    struct kube_pod copy = *s->pod, *probe = &copy;
    struct sched_explanation x;
    struct sched_rng rng;
    size_t i, j;
    int rc;

    copy.name = "capacity-probe";
    copy.node_name = "";
    s->dra = sched_cluster_dra(c) != NULL;
    if (s->dra) {
        /* the probe's template claims made, as for a copy (never allocated) */
        char name[600];

        snprintf(name, sizeof(name), "%s-capacity-probe", s->pod->name);
        if (!(probe = arena_alloc(copies, sizeof(*probe))) ||
            !(copy.name = arena_strdup(copies, name)))
            return err_set(err, -ENOMEM, "out of memory");
        *probe = copy;
        if (gpusched_dra_add_copy(c, probe))
            return err_set(err, -EINVAL, "cannot add the probe's claims");
    }
    sched_rng_seed(&rng, seed);
    rc = sched_explain(c, prof, probe, &rng, &x, err);
    if (rc)
        return rc;
    for (i = 0; i < x.nnodes; i++) {
        const struct sched_node_verdict *v = &x.nodes[i];
        struct sched_node_usage u;
        int64_t free_gpu;
        bool only_gpu;
        if (sched_cluster_node_usage(c, v->node, &u))
            continue;
        free_gpu = u.allocatable_gpu - u.requested_gpu;
        if (s->dra) {
            /* and the GPUs of DRA ResourceSlices no claim holds */
            struct gpusched_dra_gpus g;
            size_t k;

            for (k = 0; k < in->nnodes && strcmp(in->nodes[k].name, v->node); k++)
                ;
            if (k < in->nnodes && gpusched_dra_node_gpus(in, c, &in->nodes[k], &g))
                free_gpu = (free_gpu > 0 ? free_gpu : 0) + g.count - g.used;
        }
        if (free_gpu <= 0)
            continue;
        s->gpu_free += free_gpu;
        if (!v->plugin || v->skipped)
            continue;
        s->gpu_stranded += free_gpu;
        s->stranded_nodes++;
        only_gpu = !strcmp(v->plugin, "NodeResourcesFit") && v->nreasons > 0;
        for (j = 0; j < v->nreasons && only_gpu; j++)
            only_gpu = !strcmp(v->reasons[j], "Insufficient " CAPACITY_GPU);
        if (only_gpu) {
            s->gpu_fragmented += free_gpu;
            s->fragmented_nodes++;
        }
    }
    sched_explanation_release(&x);
    return 0;
}

static const char *capacity_stop_reason(const struct capacity_spec *s)
{
    if (s->stopped_by_max)
        return "MaxReached";
    if (s->stop.outcome == SCHED_GATED)
        return "SchedulingGated";
    return s->stop.nvictims ? "NeedsPreemption" : "Unschedulable";
}

static int capacity_print_table(const struct capacity_spec *specs, size_t n, size_t max)
{
    size_t i, k, total = 0;

    for (i = 0; i < n; i++) {
        const struct capacity_spec *s = &specs[i];
        const char *hd[2] = {"NODE", "COPIES"};
        struct out_table t;
        int rc;

        total += s->copies;
        if (i)
            printf("\n");
        printf("%s/%s: %zu more cop%s fit%s", s->pod->namespace_, s->pod->name, s->copies,
               s->copies == 1 ? "y" : "ies", s->copies == 1 ? "s" : "");
        if (s->gpus_per_copy)
            printf(" (%" PRId64 " nvidia.com/gpu each)", s->gpus_per_copy);
        for (k = 0; k < s->pod->nresource_claims; k++) {
            const struct kube_pod_resource_claim *pc = &kube_pod_ext(s->pod)->resource_claims[k];

            printf("%s%s %s", k ? ", " : " (each with claim ", pc->name,
                   pc->resource_claim_template_name ? "from template " : "");
            printf("%s",
                   pc->resource_claim_template_name ? pc->resource_claim_template_name : "shared");
        }
        printf("%s\n", s->pod->nresource_claims ? ")" : "");
        if (s->nnodes) {
            rc = out_table_init(&t, 2, hd);
            for (k = 0; k < s->nnodes && !rc; k++) {
                char num[32];
                const char *cells[2] = {s->nodes[k].name, num};
                snprintf(num, sizeof(num), "%zu", s->nodes[k].copies);
                rc = out_table_add_row(&t, cells);
            }
            if (out_table_finish(&t, rc))
                return 1;
        }
        if (s->stopped_by_max)
            printf("Stopped at --max %zu; more may fit.\n", max);
        else if (s->stop.outcome == SCHED_GATED)
            printf("Not attempted: the pod has scheduling gates (SchedulingGated).\n");
        else if (s->stop.nvictims)
            printf("The next copy fits only by preempting %zu pod(s) on %s.\n", s->stop.nvictims,
                   s->stop.nominated_node ? s->stop.nominated_node : "a node");
        else
            printf("The next copy: FailedScheduling: %s\n",
                   s->stop.message ? s->stop.message : "no node fits");
        if (s->gpu_free || s->gpus_per_copy || s->dra)
            printf("GPUs: %" PRId64 " %s free; %" PRId64
                   " stranded on %zu node(s) where no copy fits, %" PRId64
                   " of them on %zu node(s) with too few free GPUs for one copy\n",
                   s->gpu_free, s->dra ? "GPUs (nvidia.com/gpu and DRA devices)" : "nvidia.com/gpu",
                   s->gpu_stranded, s->stranded_nodes, s->gpu_fragmented, s->fragmented_nodes);
    }
    if (n > 1)
        printf("\nTotal: %zu copies of %zu pod specs\n", total, n);
    return 0;
}

static int capacity_print_json(const struct capacity_spec *specs, size_t n)
{
    json_t *doc = json_object(), *arr = json_array();
    size_t i, k;
    int fail = !doc || !arr, rc;

    for (i = 0; i < n && !fail; i++) {
        const struct capacity_spec *s = &specs[i];
        json_t *o = json_object(), *nodes = json_array(), *stop = json_object(), *g = json_object();
        char key[600];
        fail |= !o || !nodes || !stop || !g;
        snprintf(key, sizeof(key), "%s/%s", s->pod->namespace_, s->pod->name);
        fail |= json_object_set_new(o, "pod", json_string(key));
        fail |= json_object_set_new(o, "copies", json_integer((json_int_t)s->copies));
        for (k = 0; k < s->nnodes; k++) {
            json_t *nd = json_object();
            fail |= !nd;
            fail |= json_object_set_new(nd, "node", json_string(s->nodes[k].name));
            fail |= json_object_set_new(nd, "copies", json_integer((json_int_t)s->nodes[k].copies));
            fail |= json_array_append_new(nodes, nd);
        }
        fail |= json_object_set_new(o, "nodes", nodes);
        fail |= json_object_set_new(stop, "reason", json_string(capacity_stop_reason(s)));
        if (!s->stopped_by_max && s->stop.message)
            fail |= json_object_set_new(stop, "message", json_string(s->stop.message));
        if (s->stop.nvictims) {
            json_t *vs = json_array();
            fail |= !vs;
            for (k = 0; k < s->stop.nvictims && !fail; k++) {
                char vk[600];
                snprintf(vk, sizeof(vk), "%s/%s", s->stop.victims[k].namespace_,
                         s->stop.victims[k].name);
                fail |= json_array_append_new(vs, json_string(vk));
            }
            fail |= json_object_set_new(
                stop, "node", json_string(s->stop.nominated_node ? s->stop.nominated_node : ""));
            fail |= json_object_set_new(stop, "victims", vs);
        }
        fail |= json_object_set_new(o, "stoppedBy", stop);
        fail |= json_object_set_new(g, "perCopy", json_integer(s->gpus_per_copy));
        fail |= json_object_set_new(g, "free", json_integer(s->gpu_free));
        fail |= json_object_set_new(g, "stranded", json_integer(s->gpu_stranded));
        fail |=
            json_object_set_new(g, "strandedNodes", json_integer((json_int_t)s->stranded_nodes));
        fail |= json_object_set_new(g, "fragmented", json_integer(s->gpu_fragmented));
        fail |= json_object_set_new(g, "fragmentedNodes",
                                    json_integer((json_int_t)s->fragmented_nodes));
        fail |= json_object_set_new(o, "gpus", g);
        fail |= json_array_append_new(arr, o);
    }
    fail |= json_object_set_new(doc, "specs", arr);
    rc = gpusched_cmd_print_json(doc, fail, 2);
    json_decref(doc);
    return rc;
}

static int capacity_parse_max(const char *s, size_t *out)
{
    uint64_t v;

    if (!s) {
        *out = CAPACITY_DEFAULT_MAX;
        return 0;
    }
    if (go_parse_uint(s, strlen(s), 10, 32, &v, NULL) || v < 1)
        return gpusched_cmd_usage_error("capacity",
                                        "invalid argument \"%s\" for \"--max\" flag: must be a "
                                        "positive integer",
                                        s);
    *out = (size_t)v;
    return 0;
}

int gpusched_cmd_capacity(int argc, char **argv)
{
    struct flag_list files = {0}, pos = {0};
    const char *output = NULL, *namespace_ = NULL, *maxs = NULL, *profs = NULL, *seeds = NULL;
    const char *sched_name = NULL, *pcts = NULL;
    struct gpusched_live live = {0};
    const struct flag flags[] = {
        {"filename", 'f', FLAG_LIST, &files, NULL, NULL, "FILE",
         "pod specs (and, offline, the nodes and bound pods); file,\n"
         "directory or - (stdin); repeatable, or a,b"},
        {"max", 0, FLAG_STRING, &maxs, NULL, NULL, "N",
         "stop after N copies of each spec (default 10000)"},
        {"output", 'o', FLAG_STRING, &output, NULL, NULL, "FORMAT",
         "table (default), json, yaml or name"},
        {"namespace", 'n', FLAG_STRING, &namespace_, NULL, NULL, "NS",
         "namespace of the file objects that name none (default: the\n"
         "context's, else \"default\")"},
        {"profile", 0, FLAG_STRING, &profs, NULL, NULL, "NAME",
         "default (kube-scheduler's plugins) or gpu (GPU bin-packing)"},
        {"scheduler-name", 0, FLAG_STRING, &sched_name, NULL, NULL, "NAME",
         "only pods of the files whose spec.schedulerName is NAME are specs"},
        {"seed", 0, FLAG_STRING, &seeds, NULL, NULL, "N",
         "tie-break seed, as for simulate (default 1)"},
        {"percentage-of-nodes-to-score", 0, FLAG_STRING, &pcts, NULL, NULL, "N",
         "node sampling, as for simulate (default 100: every node)"},
        GPUSCHED_CMD_STRICT_FLAG,
        FLAG_GROUP_OF(gpusched_live_flags(&live)),
        FLAG_GROUP_OF(out_table_flags),
        FLAG_END,
    };
    const struct sched_profile *builtin;
    struct sched_profile prof;
    struct manifest_input in;
    struct sched_cluster *cluster = NULL;
    struct capacity_spec *specs = NULL;
    struct capacity_progress pr;
    struct arena copies = ARENA_INIT;
    struct sched_rng rng;
    struct err err;
    enum out_format fmt;
    uint64_t seed;
    size_t i, nspecs = 0, max = CAPACITY_DEFAULT_MAX;
    bool help, loaded = false;
    int rc;

    err_clear(&err);
    rc = gpusched_kubectl_begin("capacity", capacity_usage, flags, &output, GPUSCHED_KUBECTL_ARGS,
                                argc, argv, &pos, &help);
    if (rc || help)
        goto out;
    if (pos.n) {
        rc = gpusched_cmd_usage_error("capacity", "unexpected argument \"%s\" (pod specs go in -f)",
                                      pos.v[0]);
        goto out;
    }
    if (!files.n) {
        rc = gpusched_cmd_usage_error("capacity", "must specify -f FILE with the pod spec");
        goto out;
    }
    if (out_format_parse(output, 1u << OUT_TABLE | 1u << OUT_JSON, &fmt, &err)) {
        rc = gpusched_cmd_usage_error("capacity", "%s", err.msg);
        goto out;
    }
    if ((rc = capacity_parse_max(maxs, &max)) ||
        (rc = gpusched_cmd_parse_profile("capacity", profs, &builtin)))
        goto out;
    prof = *builtin;
    if ((rc = gpusched_cmd_parse_percentage("capacity", pcts, 100,
                                            &prof.percentage_of_nodes_to_score)) ||
        (rc = gpusched_cmd_parse_seed("capacity", seeds, &seed)))
        goto out;

    /* -f alone is read as files only when they hold nodes: a pod spec alone asks about the
     * cluster of the kubeconfig, with the files on top */
    rc = gpusched_cmd_load_cluster_live(&files, namespace_, &live, &in, &cluster);
    if (!rc && !live.client && sched_cluster_node_count(cluster) == 0) {
        manifest_input_release(&in);
        sched_cluster_free(cluster);
        cluster = NULL;
        live.kubeconfig = live.kubeconfig ? live.kubeconfig : ""; /* "": kubectl's default */
        rc = gpusched_cmd_load_cluster_live(&files, namespace_, &live, &in, &cluster);
    }
    if (rc)
        goto out;
    loaded = true;
    rc = 1;
    specs = calloc(in.npods + 1, sizeof(*specs));
    if (!specs) {
        fprintf(stderr, "gpusched: out of memory\n");
        goto out;
    }
    nspecs = capacity_specs(&in, sched_name, specs);
    if (!nspecs) {
        fprintf(stderr, "gpusched: no pod spec in the -f files (a Pod or workload not bound to "
                        "a node)\n");
        goto out;
    }
    memset(&pr, 0, sizeof(pr));
    pr.tty = isatty(2);
    pr.on = pr.tty || live.verbose;
    pr.start = pr.last = mono_now();
    sched_rng_seed(&rng, seed);
    /* each copy placed keeps the devices its claims got, as in a simulation */
    sched_cluster_set_dra_commit(cluster, true);
    rc = 0;
    for (i = 0; i < nspecs && !rc; i++) {
        if (specs[i].pod->nscheduling_gates) {
            specs[i].stop.outcome = SCHED_GATED;
            continue;
        }
        rc = capacity_place(cluster, &prof, &rng, &specs[i], max, &pr, &copies, &err);
        if (!rc)
            rc = capacity_fragmentation(cluster, &in, &prof, seed, &specs[i], &copies, &err);
    }
    if (rc) {
        gpusched_cmd_print_err(&err);
        rc = 1;
        goto out;
    }
    rc = fmt == OUT_JSON ? capacity_print_json(specs, nspecs)
                         : capacity_print_table(specs, nspecs, max);
    rc = gpusched_cmd_flush(rc);
out:
    for (i = 0; specs && i < nspecs; i++) {
        sched_result_release(&specs[i].stop);
        free(specs[i].nodes);
    }
    free(specs);
    sched_cluster_free(cluster);
    arena_release(&copies);
    if (loaded)
        manifest_input_release(&in);
    gpusched_live_close(&live);
    flag_list_release(&files);
    flag_list_release(&pos);
    return rc;
}
