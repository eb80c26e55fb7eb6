/* cmd_simulate.c - `gpusched simulate`: schedule the pending pods of manifest files onto their
 * nodes with kube-scheduler's semantics and print where each one lands, or its exact
 * FailedScheduling message.
 *
 * Pending = no spec.nodeName and not Succeeded/Failed (and, with --scheduler-name, that
 * scheduler's). Bound pods are only counted on their nodes. Rows are printed in scheduling
 * order (priority, then input order), so a table reads as what happened. */
#include "gpusched/cmd_simulate-int.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/outfile.h"
#include "gpusched/cmd_common-int.h"
#include "gpusched/dra-int.h"
#include "gpusched/kubectl-int.h"
#include "gpusched/output.h"
#include "gpusched/output-int.h"

static const char simulate_usage[] =
    "Schedule the pending pods of manifest files onto their nodes, the way kube-scheduler\n"
    "would, and print where each pod lands or kube-scheduler's exact FailedScheduling message.\n"
    "\n"
    "Pending pods are the pods without spec.nodeName, whatever their schedulerName (unless\n"
    "--scheduler-name narrows them); pods bound through spec.nodeName count on their nodes.\n"
    "Pods are taken by priority, then input order. Workloads (Deployment, ReplicaSet,\n"
    "StatefulSet, Job, DaemonSet) expand to their pods.\n"
    "\n"
    "Examples:\n"
    "  # Place the seed's workloads on its six nodes\n"
    "  gpusched simulate -f examples/seed/\n"
    "\n"
    "  # The same, as JSON: {\"scheduled\":[...],\"unschedulable\":[...]}\n"
    "  gpusched simulate -f nodes.yaml -f pods.yaml -o json\n"
    "\n"
    "Usage:\n"
    "  gpusched simulate -f FILE... [flags]\n"
    "\n";

/* Progress on stderr once a run takes more than a second, on a terminal (one updating line)
 * or with -v (a line per second otherwise), as the help of -v says. stdout stays the result
 * only. */
struct simulate_progress {
    double start; /* mono_now() */
    double last;
    bool on; /* a terminal or -v */
    bool tty;
    bool shown;
};

static double simulate_elapsed(const struct simulate_progress *pr)
{
    return mono_now() - pr->start;
}

static void simulate_progress_cb(void *arg, size_t done, size_t total)
{
    struct simulate_progress *pr = arg;
    double t = simulate_elapsed(pr);

    if (!pr->on || t < 1.0 || t - pr->last < (pr->tty ? 0.1 : 1.0))
        return;
    pr->last = t;
    pr->shown = true;
    fprintf(stderr, "%sscheduled %zu/%zu pods...%s", pr->tty ? "\r" : "gpusched: ", done, total,
            pr->tty ? "" : "\n");
    fflush(stderr);
}

struct simulate_run {
    const struct kube_pod **pods; /* pending pods, input order */
    size_t npods;
    struct sched_result *results; /* indexed like pods */
    size_t *order;                /* indexes of pods in attempt order */
    size_t nwarnings;             /* unmodelled fields of the pending pods */
    char **bwarnings; /* then the placed pods whose binding conditions PreBind would wait for */
    size_t nbwarnings;
    const struct sched_cluster *cluster; /* after the run: the devices its pods' claims got */
};

struct simulate_rank {
    size_t attempt;
    size_t index;
};

static int simulate_rank_cmp(const void *a, const void *b)
{
    const struct simulate_rank *x = a, *y = b;

    if (x->attempt != y->attempt)
        return x->attempt < y->attempt ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* order[] = pod indexes by attempt (the core's queue position), input order on equal values */
static int simulate_sort_by_attempt(struct simulate_run *r)
{
    struct simulate_rank *rank = calloc(r->npods ? r->npods : 1, sizeof(*rank));
    size_t i;

    if (!rank)
        return -ENOMEM;
    for (i = 0; i < r->npods; i++) {
        rank[i].attempt = r->results[i].attempt;
        rank[i].index = i;
    }
    qsort(rank, r->npods, sizeof(*rank), simulate_rank_cmp);
    for (i = 0; i < r->npods; i++)
        r->order[i] = rank[i].index;
    free(rank);
    return 0;
}

/* The JSON document is written as it goes, one array per pass over the results, so its size
 * never adds to the peak memory of a large run (a jansson tree of 10,000 entries held ~3 MB). */
enum simulate_section {
    SEC_SCHEDULED,
    SEC_UNSCHEDULABLE,
    SEC_PREEMPTED,
    SEC_GATED,
    SEC_NOT_MODELLED
};

static void simulate_json_key(FILE *f, const struct kube_pod *p)
{
    fputs("\"pod\":\"", f);
    out_json_string_raw(f, p->namespace_);
    putc('/', f);
    out_json_string_raw(f, p->name);
    putc('"', f);
}

/* simulate_json_section writes the entries of one section; returns how many */
static size_t simulate_json_section(FILE *f, const struct simulate_run *r, enum simulate_section s)
{
    size_t k, v, n = 0;

    for (k = 0; k < r->npods; k++) {
        size_t i = r->order[k];
        const struct sched_result *res = &r->results[i];

        if (s == SEC_PREEMPTED) {
            for (v = 0; v < res->nvictims; v++) {
                fputs(n++ ? ",{\"pod\":\"" : "{\"pod\":\"", f);
                out_json_string_raw(f, res->victims[v].namespace_);
                putc('/', f);
                out_json_string_raw(f, res->victims[v].name);
                fputs("\",\"node\":", f);
                out_json_string(f, res->nominated_node ? res->nominated_node : "");
                fputs(",\"by\":\"", f);
                out_json_string_raw(f, r->pods[i]->namespace_);
                putc('/', f);
                out_json_string_raw(f, r->pods[i]->name);
                fputs("\"}", f);
            }
            continue;
        }
        if (s == SEC_SCHEDULED ? res->outcome != SCHED_SCHEDULED || res->preempted
            : s == SEC_UNSCHEDULABLE
                ? res->outcome != SCHED_UNSCHEDULABLE
                : res->outcome != (s == SEC_GATED ? SCHED_GATED : SCHED_NOT_MODELLED))
            continue;
        fputs(n++ ? ",{" : "{", f);
        simulate_json_key(f, r->pods[i]);
        if (s == SEC_SCHEDULED) {
            json_t *claims = r->cluster ? gpusched_dra_claims(r->cluster, r->pods[i]) : NULL;

            fputs(",\"node\":", f);
            out_json_string(f, res->node ? res->node : "");
            if (claims) {
                /* the devices of its claims, as status.allocation names them */
                char *s2 = json_dumps(claims, JSON_COMPACT | JSON_PRESERVE_ORDER);

                if (s2) {
                    fputs(",\"claims\":", f);
                    fputs(s2, f);
                    free(s2);
                }
                json_decref(claims);
            }
        } else if (s == SEC_UNSCHEDULABLE) {
            fputs(",\"message\":", f);
            out_json_string(f, res->message ? res->message : "");
        }
        putc('}', f);
    }
    return n;
}

static bool simulate_has(const struct simulate_run *r, enum simulate_section s)
{
    size_t i;

    for (i = 0; i < r->npods; i++)
        if (s == SEC_PREEMPTED
                ? r->results[i].nvictims > 0
                : r->results[i].outcome == (s == SEC_GATED ? SCHED_GATED : SCHED_NOT_MODELLED))
            return true;
    return false;
}

/* simulate_warn_binding: a warning for each pod placed (attempt order) whose devices' binding
 * conditions kube-scheduler's PreBind would wait for, on stderr and kept for -o json. 0 or
 * -ENOMEM. */
static int simulate_warn_binding(struct simulate_run *r, const struct sched_profile *profile)
{
    size_t k;

    if (!r->cluster || !sched_cluster_dra(r->cluster))
        return 0;
    for (k = 0; k < r->npods; k++) {
        size_t i = r->order[k];
        const struct sched_result *res = &r->results[i];
        char *line;

        if (res->outcome != SCHED_SCHEDULED || res->preempted)
            continue;
        if (gpusched_dra_binding_warning(
                r->cluster, r->pods[i], "simulate",
                gpusched_cmd_profile_for(profile, r->pods[i])->dra_binding_timeout_ms, &line))
            return -ENOMEM;
        if (!line)
            continue;
        if (!r->bwarnings && !(r->bwarnings = calloc(r->npods, sizeof(*r->bwarnings)))) {
            free(line);
            return -ENOMEM;
        }
        fprintf(stderr, "gpusched: warning: %s\n", line);
        r->bwarnings[r->nbwarnings++] = line;
    }
    return 0;
}

static int simulate_print_json(const struct simulate_run *r)
{
    FILE *f = stdout;

    fputs("{\"scheduled\":[", f);
    simulate_json_section(f, r, SEC_SCHEDULED);
    fputs("],\"unschedulable\":[", f);
    simulate_json_section(f, r, SEC_UNSCHEDULABLE);
    putc(']', f);
    /* extra keys only when they have something to say, so the common case is exactly the
     * documented {"scheduled":[...],"unschedulable":[...]} */
    if (simulate_has(r, SEC_PREEMPTED)) {
        fputs(",\"preempted\":[", f);
        simulate_json_section(f, r, SEC_PREEMPTED);
        putc(']', f);
    }
    if (simulate_has(r, SEC_GATED)) {
        fputs(",\"gated\":[", f);
        simulate_json_section(f, r, SEC_GATED);
        putc(']', f);
    }
    if (simulate_has(r, SEC_NOT_MODELLED)) {
        /* pods gpusched will not place: a field it does not model decides (warnings say which) */
        fputs(",\"notModelled\":[", f);
        simulate_json_section(f, r, SEC_NOT_MODELLED);
        putc(']', f);
    }
    if (r->nwarnings || r->nbwarnings) {
        /* the pod fields gpusched does not model, then the binding conditions PreBind would
         * wait for, as printed on stderr */
        char line[1024];
        size_t k, j, n = 0;
        fputs(",\"warnings\":[", f);
        for (k = 0; k < r->npods; k++)
            for (j = 0; j < kube_pod_ext(r->pods[k])->nunmodelled; j++) {
                if (n++)
                    putc(',', f);
                out_json_string(f, gpusched_cmd_pod_warning(r->pods[k], j, line, sizeof(line)));
            }
        for (k = 0; k < r->nbwarnings; k++) {
            if (n++)
                putc(',', f);
            out_json_string(f, r->bwarnings[k]);
        }
        putc(']', f);
    }
    fputs("}\n", f);
    if (ferror(f)) {
        fprintf(stderr, "gpusched: cannot write the output: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ --follow */

/* The followed run: pod "ns/name" -> the node it took (scheduled or, if preempted later,
 * preempted[].node; or the node whose binding cycle failed, bindFailed[].node, a section the
 * differential test adds: a failed PreBind may leave claims allocated there), and preemptor
 * "ns/name" -> the node its preemption nominated. */
struct simulate_follow {
    json_t *placed, *nominated;
    char key[512];
};

static int follow_section(json_t *doc, const char *section, const char *key_field, json_t *into,
                          const char *path)
{
    const json_t *a = json_object_get(doc, section), *e;
    size_t i;

    if (!a)
        return 0;
    if (!json_is_array(a)) {
        fprintf(stderr, "gpusched: --follow %s: %s: expected a list\n", path, section);
        return 1;
    }
    json_array_foreach(a, i, e)
    {
        const char *k = json_string_value(json_object_get(e, key_field));
        json_t *node = json_object_get(e, "node");

        if (!k || !json_is_string(node)) {
            fprintf(stderr, "gpusched: --follow %s: %s[%zu]: expected {\"%s\", \"node\"}\n", path,
                    section, i, key_field);
            return 1;
        }
        if (!json_object_get(into, k) && json_object_set(into, k, node)) {
            fprintf(stderr, "gpusched: out of memory\n");
            return 1;
        }
    }
    return 0;
}

/* simulate_follow_load reads a simulate -o json document; prints the error and returns 1 */
static int simulate_follow_load(struct simulate_follow *fo, const char *path)
{
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    int rc = 1;

    fo->placed = json_object();
    fo->nominated = json_object();
    if (!doc) {
        if (je.line > 0)
            fprintf(stderr, "gpusched: --follow %s: line %d: %s\n", path, je.line, je.text);
        else
            fprintf(stderr, "gpusched: --follow %s: %s\n", path, je.text);
        goto out;
    }
    if (!json_is_object(doc)) {
        fprintf(stderr, "gpusched: --follow %s: expected a simulate -o json document\n", path);
        goto out;
    }
    if (!fo->placed || !fo->nominated)
        fprintf(stderr, "gpusched: out of memory\n");
    else if (!follow_section(doc, "scheduled", "pod", fo->placed, path) &&
             !follow_section(doc, "preempted", "pod", fo->placed, path) &&
             !follow_section(doc, "bindFailed", "pod", fo->placed, path) &&
             !follow_section(doc, "preempted", "by", fo->nominated, path))
        rc = 0;
out:
    json_decref(doc);
    return rc;
}

static void simulate_follow_release(struct simulate_follow *fo)
{
    json_decref(fo->placed);
    json_decref(fo->nominated);
}

static const char *simulate_follow_cb(void *arg, const struct kube_pod *pod, bool preemption)
{
    struct simulate_follow *fo = arg;

    snprintf(fo->key, sizeof(fo->key), "%s/%s", pod->namespace_, pod->name);
    return json_string_value(json_object_get(preemption ? fo->nominated : fo->placed, fo->key));
}

/* ------------------------------------------------------------------ --trace */

/* One line per attempt in the format of docs/testing.md ("The trace line"), the same the
 * kube-scheduler oracle writes. */
static void trace_pod_key(FILE *f, const char *ns, const char *name)
{
    putc('"', f);
    out_json_string_raw(f, ns);
    putc('/', f);
    out_json_string_raw(f, name);
    putc('"', f);
}

static int simulate_trace_cb(void *arg, const struct kube_pod *pod, int number,
                             const struct sched_explanation *x)
{
    FILE *f = arg;
    const struct sched_result *r = &x->result;
    size_t i, k;

    if (r->outcome == SCHED_GATED)
        return 0; /* never attempted */
    fputs("{\"pod\":", f);
    trace_pod_key(f, pod->namespace_, pod->name);
    fprintf(f, ",\"attempt\":%d,\"priority\":%" PRId32, number, pod->priority);
    if (pod->nominated_node_name && *pod->nominated_node_name) {
        fputs(",\"nominatedNode\":", f);
        out_json_string(f, pod->nominated_node_name);
    }
    fputs(",\"nodes\":[", f);
    for (i = 0; i < x->nnodes; i++) {
        const struct sched_node_verdict *v = &x->nodes[i];

        fputs(i ? ",{\"node\":" : "{\"node\":", f);
        out_json_string(f, v->node);
        if (v->skipped) {
            fputs(",\"feasible\":false,\"plugin\":\"(not evaluated)\",\"reasons\":[]}", f);
            continue;
        }
        if (v->plugin) {
            fputs(",\"feasible\":false,\"plugin\":", f);
            out_json_string(f, v->plugin);
            fputs(",\"reasons\":[", f);
            for (k = 0; k < v->nreasons; k++) {
                if (k)
                    putc(',', f);
                out_json_string(f, v->reasons[k]);
            }
            fputs(v->unresolvable ? "],\"unresolvable\":true}" : "]}", f);
            continue;
        }
        fputs(",\"feasible\":true,\"scores\":[", f);
        for (k = 0; k < v->nscores; k++) {
            const struct sched_score *sc = &v->scores[k];

            fprintf(f, "%s{\"plugin\":", k ? "," : "");
            out_json_string(f, sc->plugin);
            fprintf(f, ",\"raw\":%" PRId64 ",\"normalized\":%" PRId64 ",\"weight\":%" PRId32 "}",
                    sc->raw, sc->normalized, sc->weight);
        }
        fprintf(f, "],\"total\":%" PRId64 "}", v->total);
    }
    putc(']', f);
    if (x->score_error) {
        fputs(",\"scoreError\":", f);
        out_json_string(f, x->score_error);
    }
    fputs(",\"result\":{\"status\":", f);
    if (r->outcome == SCHED_SCHEDULED) {
        fputs("\"Scheduled\",\"node\":", f);
        out_json_string(f, r->node ? r->node : "");
    } else if (r->error) {
        fputs("\"Error\",\"message\":", f);
        out_json_string(f, r->message ? r->message : "");
    } else {
        fputs("\"Unschedulable\",\"message\":", f);
        out_json_string(f, r->message ? r->message : "");
        if (r->nominated_node) {
            fputs(",\"nominatedNode\":", f);
            out_json_string(f, r->nominated_node);
            fputs(",\"victims\":[", f);
            for (k = 0; k < r->nvictims; k++) {
                if (k)
                    putc(',', f);
                trace_pod_key(f, r->victims[k].namespace_, r->victims[k].name);
            }
            putc(']', f);
        }
    }
    fputs("}}\n", f);
    return ferror(f) ? -EIO : 0;
}

static void simulate_event(const char *type, const char *reason, const char *msg)
{
    printf("  %-7s  %-16s  %s\n", type, reason, msg);
}

static void simulate_print_events(const struct simulate_run *r);
static void simulate_print_summary(const struct simulate_run *r);

static int simulate_print_table(const struct simulate_run *r, bool wide)
{
    static const char *const headers[] = {"NAMESPACE", "NAME",           "STATUS",
                                          "NODE",      "NOMINATED NODE", "PRIORITY"};
    struct out_table t;
    size_t ncols = wide ? 6 : 4;
    size_t k, v;
    bool events = false;

    int rc;

    rc = out_table_init(&t, ncols, headers);
    for (k = 0; k < r->npods && !rc; k++) {
        size_t i = r->order[k];
        const struct kube_pod *p = r->pods[i];
        const struct sched_result *res = &r->results[i];
        const char *status = "Pending", *node = NULL;
        char prio[24];
        const char *cells[6];

        if (res->preempted) {
            status = "Preempted";
            node = res->node;
        } else if (res->outcome == SCHED_SCHEDULED) {
            status = "Scheduled";
            node = res->node;
        } else if (res->outcome == SCHED_GATED) {
            status = "SchedulingGated";
        } else if (res->outcome == SCHED_NOT_MODELLED) {
            status = "NotModelled";
        }
        snprintf(prio, sizeof(prio), "%" PRId32, p->priority);
        cells[0] = p->namespace_;
        cells[1] = p->name;
        cells[2] = status;
        cells[3] = node;
        cells[4] = res->nominated_node;
        cells[5] = prio;
        rc = out_table_add_row(&t, cells);
        /* victims that were bound before the run get their own row next to the preemptor */
        for (v = 0; v < res->nvictims && !rc; v++) {
            const struct sched_victim *vi = &res->victims[v];
            snprintf(prio, sizeof(prio), "%" PRId32, vi->priority);
            if (vi->from_input)
                continue;
            cells[0] = vi->namespace_;
            cells[1] = vi->name;
            cells[2] = "Preempted";
            cells[3] = res->nominated_node;
            cells[4] = NULL;
            cells[5] = prio;
            rc = out_table_add_row(&t, cells);
        }
        if (res->message || res->nvictims || res->preempted)
            events = true;
    }
    if (rc) {
        out_table_release(&t);
        fprintf(stderr, "gpusched: out of memory\n");
        return 1;
    }
    if (r->npods)
        out_table_print(&t, stdout);
    else
        printf("No pending pods.\n");
    out_table_release(&t);
    if (events)
        simulate_print_events(r);
    if (r->npods)
        simulate_print_summary(r);
    return 0;
}

/* simulate_print_events prints kube-scheduler's events for the pods that have something to
 * say, in the words `kubectl describe pod` shows them. */
static void simulate_print_events(const struct simulate_run *r)
{
    size_t k, v;

    for (k = 0; k < r->npods; k++) {
        size_t i = r->order[k];
        const struct kube_pod *p = r->pods[i];
        const struct sched_result *res = &r->results[i];
        char line[600];

        if (!res->message && !res->nvictims && !res->preempted)
            continue;
        printf("\nEvents for %s/%s:\n", p->namespace_, p->name);
        if (res->message)
            simulate_event("Warning", "FailedScheduling", res->message);
        if (res->outcome == SCHED_SCHEDULED) {
            snprintf(line, sizeof(line), "Successfully assigned %s/%s to %s", p->namespace_,
                     p->name, res->node);
            simulate_event("Normal", "Scheduled", line);
        }
        if (res->preempted) {
            const struct kube_pod *by =
                res->preempted_by < r->npods ? r->pods[res->preempted_by] : NULL;
            snprintf(line, sizeof(line), "Preempted by %s/%s on node %s", by ? by->namespace_ : "?",
                     by ? by->name : "?", res->node);
            simulate_event("Normal", "Preempted", line);
        }
        for (v = 0; v < res->nvictims; v++) {
            const struct sched_victim *vi = &res->victims[v];
            if (vi->from_input)
                continue;
            printf("\nEvents for %s/%s:\n", vi->namespace_, vi->name);
            snprintf(line, sizeof(line), "Preempted by %s/%s on node %s", p->namespace_, p->name,
                     res->nominated_node);
            simulate_event("Normal", "Preempted", line);
        }
    }
}

/* simulate_print_summary ends the table output with one line of counts. */
static void simulate_print_summary(const struct simulate_run *r)
{
    size_t k, v, sched = 0, pending = 0, gated = 0, preempted = 0;

    for (k = 0; k < r->npods; k++) {
        const struct sched_result *res = &r->results[k];
        if (res->preempted)
            preempted++;
        else if (res->outcome == SCHED_SCHEDULED)
            sched++;
        else if (res->outcome == SCHED_GATED)
            gated++;
        else
            pending++;
        for (v = 0; v < res->nvictims; v++)
            preempted += !res->victims[v].from_input;
    }
    printf("\n%zu scheduled, %zu pending, %zu preempted", sched, pending + gated, preempted);
    if (gated)
        printf(" (%zu of the pending have scheduling gates)", gated);
    printf("\n");
}

int gpusched_cmd_simulate(int argc, char **argv)
{
    struct flag_list pos = {0};
    struct gpusched_cmd_sim_flags f;
    struct manifest_input in;
    struct sched_cluster *cluster = NULL;
    const struct sched_profile *profile;
    struct sched_sim_opts so;
    struct simulate_progress pr;
    struct simulate_run run = {0};
    struct simulate_follow follow = {0};
    struct outfile trace = {0};
    struct err err;
    enum out_format fmt;
    bool help, loaded = false;
    size_t i;
    int rc;

    err_clear(&err);
    rc = gpusched_cmd_sim_parse("simulate", simulate_usage, argc, argv, &f, &pos, &help);
    if (rc || help)
        goto out;
    if ((rc = gpusched_kubectl_output(&f.output, 0)))
        goto out;
    if (pos.n) {
        rc = gpusched_cmd_usage_error("simulate", "unexpected argument \"%s\"", pos.v[0]);
        goto out;
    }
    memset(&so, 0, sizeof(so));
    rc = gpusched_cmd_sim_check("simulate", &f, &fmt, &profile, &so.seed);
    if (rc)
        goto out;
    if (f.follow) {
        if ((rc = simulate_follow_load(&follow, f.follow)))
            goto out;
        so.follow = simulate_follow_cb;
        so.follow_arg = &follow;
    }
    if (f.trace) {
        /* put in place only when the run succeeds: a failed one leaves FILE as it was */
        if (outfile_open(&trace, f.trace, &err)) {
            fprintf(stderr, "gpusched: --trace: %s\n", err.msg);
            rc = 1;
            goto out;
        }
        so.attempt = simulate_trace_cb;
        so.attempt_arg = trace.f;
    }

    /* bound pods go into the cluster as they are read: only the pending ones are kept */
    rc = gpusched_cmd_load_cluster_live(&f.files, f.namespace_, &f.live, &in, &cluster);
    if (rc)
        goto out;
    loaded = true;
    /* the cluster has its own copy of the nodes; what they took is reused from here on */
    manifest_input_trim(&in);

    run.pods = calloc(in.npods ? in.npods : 1, sizeof(*run.pods));
    if (!run.pods) {
        rc = -ENOMEM;
        goto out;
    }
    run.npods = gpusched_cmd_pending_pods(&in, f.sched_name, run.pods);
    run.results = calloc(run.npods ? run.npods : 1, sizeof(*run.results));
    run.order = calloc(run.npods ? run.npods : 1, sizeof(*run.order));
    if (!run.results || !run.order) {
        rc = -ENOMEM;
        goto out;
    }

    /* nothing that changes the answer goes unsaid: fields gpusched does not model */
    run.nwarnings = gpusched_cmd_warn_unmodelled(run.pods, run.npods);
    memset(&pr, 0, sizeof(pr));
    pr.start = mono_now();
    pr.tty = isatty(STDERR_FILENO);
    pr.on = pr.tty || f.live.verbose;
    so.profile_of = gpusched_cmd_profile_of;
    so.progress = simulate_progress_cb;
    so.progress_arg = &pr;
    rc = sched_simulate(cluster, profile, run.pods, run.npods, &so, run.results, &err);
    run.cluster = cluster;
    if (pr.shown && pr.tty)
        fprintf(stderr, "\rscheduled %zu/%zu pods in %.1fs\n", run.npods, run.npods,
                simulate_elapsed(&pr));
    if (rc) {
        gpusched_cmd_print_err(&err);
        rc = 1;
        goto out;
    }
    if (simulate_sort_by_attempt(&run)) {
        rc = -ENOMEM;
        goto out;
    }
    if (simulate_warn_binding(&run, profile)) {
        rc = -ENOMEM;
        goto out;
    }
    if (trace.f && outfile_commit(&trace, &err)) {
        fprintf(stderr, "gpusched: --trace: %s\n", err.msg);
        rc = 1;
        goto out;
    }
    rc = fmt == OUT_JSON ? simulate_print_json(&run) : simulate_print_table(&run, fmt == OUT_WIDE);
    rc = gpusched_cmd_flush(rc);
out:
    outfile_abort(&trace);
    simulate_follow_release(&follow);
    rc = gpusched_cmd_status(rc);
    if (run.results)
        for (i = 0; i < run.npods; i++)
            sched_result_release(&run.results[i]);
    free(run.results);
    for (i = 0; i < run.nbwarnings; i++)
        free(run.bwarnings[i]);
    free(run.bwarnings);
    free(run.order);
    free(run.pods);
    sched_cluster_free(cluster);
    if (loaded)
        manifest_input_release(&in);
    gpusched_live_close(&f.live);
    flag_list_release(&f.files);
    flag_list_release(&pos);
    return rc;
}
