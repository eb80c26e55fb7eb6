/* cmd_common.c - what simulate, explain and nodes share: loading the -f inputs, building the
 * cluster of nodes and bound pods, checking --seed and --profile, the queue order.
 *
 * These are command-level helpers: unlike the library modules they print their errors (one
 * line on stderr) and return the exit status to use. */
#include "gpusched/cmd_common.h"
#include "gpusched/cmd_common-int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/goparse.h"
#include "gpusched/dra-int.h"
#include "sched/config.h"
#include "kube/rules.h"

const char *gpusched_cmd_prog = "gpusched";
const char *gpusched_cmd_name = "gpusched";

int gpusched_cmd_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    fputs("gpusched: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nSee '%s %s%s--help' for usage.\n", gpusched_cmd_prog, cmd ? cmd : "",
            cmd ? " " : "");
    return 2;
}

int gpusched_cmd_flags_parse(const char *cmd, const struct flag *flags, int argc, char **argv,
                             struct flag_list *pos, bool *help)
{
    struct flag_fault ff;
    bool is_short;

    *help = false;
    switch (flag_parse(flags, argc, argv, pos, &ff)) {
    case FLAG_OK:
        return 0;
    case FLAG_HELP:
        *help = true;
        return 0;
    case FLAG_UNKNOWN:
        if (ff.shorthand)
            return gpusched_cmd_usage_error(cmd, "unknown shorthand flag: '%c' in %s", ff.shorthand,
                                            ff.word);
        return gpusched_cmd_usage_error(cmd, "unknown flag: %s", ff.name);
    case FLAG_NO_VALUE:
        is_short = ff.shorthand != 0;
        if (is_short)
            return gpusched_cmd_usage_error(cmd, "flag needs an argument: '%c' in -%c",
                                            ff.shorthand, ff.shorthand);
        return gpusched_cmd_usage_error(cmd, "flag needs an argument: %s", ff.name);
    case FLAG_BAD_VALUE:
        /* pflag's words: invalid argument "V" for "--name" flag: <why> */
        return gpusched_cmd_usage_error(cmd, "invalid argument \"%s\" for \"--%s\" flag: %s",
                                        ff.value ? ff.value : "", ff.flag->name, ff.err.msg);
    case FLAG_EXTRA:
        return gpusched_cmd_usage_error(cmd, "unexpected argument \"%s\"", ff.word);
    case FLAG_NOMEM:
        break;
    }
    fprintf(stderr, "gpusched: out of memory\n");
    return 1;
}

void gpusched_cmd_help(const char *cmd, const char *intro, const struct flag *flags)
{
    struct buf b = BUF_INIT(0);
    char help[64];

    snprintf(help, sizeof(help), "help for %s", cmd);
    fputs(intro, stdout);
    fputs("Flags:\n", stdout);
    if (flag_usage(flags, help, 0, &b))
        fputs("(out of memory)\n", stdout);
    else
        fputs(b.data, stdout);
    buf_release(&b);
}

void gpusched_cmd_print_err(const struct err *err)
{
    char buf[ERR_MSG_MAX + 600];

    fprintf(stderr, "gpusched: %s\n", err_format(err, buf, sizeof(buf)));
}

const char *gpusched_cmd_pod_warning(const struct kube_pod *p, size_t i, char *buf, size_t size)
{
    const struct kube_unmodelled *u = &kube_pod_ext(p)->unmodelled[i];

    snprintf(buf, size, "pod %s/%s: %s: %s; kube-scheduler's answer may differ", p->namespace_,
             p->name, u->field, u->what);
    return buf;
}

size_t gpusched_cmd_warn_unmodelled(const struct kube_pod *const *pods, size_t n)
{
    char line[1024];
    size_t i, k, total = 0;

    for (i = 0; i < n; i++)
        for (k = 0; k < kube_pod_ext(pods[i])->nunmodelled; k++, total++)
            fprintf(stderr, "gpusched: warning: %s\n",
                    gpusched_cmd_pod_warning(pods[i], k, line, sizeof(line)));
    return total;
}

bool gpusched_cmd_strict;

/* the take_bound consumer of gpusched_cmd_load: the pod counts on its node */
/* --config's profiles, for the life of the process (a command reads one) */
static struct sched_config cmd_config;

static int cmd_take_bound(void *arg, const struct kube_pod *p, struct err *err)
{
    if (kube_pod_phase_terminal(p->phase))
        return 0;
    if (gpusched_dra_take_bound(arg, p))
        return err_set(err, -ENOMEM, "out of memory");
    return sched_cluster_add_pod(arg, p, err);
}

/* cmd_no_objects fills err with kubectl's words for -f files that held no object, naming
 * them (the first three) */
static int cmd_no_objects(const struct flag_list *files, struct err *err)
{
    char names[512];
    size_t i, len = 0;

    names[0] = '\0';
    for (i = 0; i < files->n && i < 3 && len < sizeof(names); i++)
        len +=
            (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "", files->v[i]);
    if (files->n > 3 && len < sizeof(names))
        snprintf(names + len, sizeof(names) - len, ", ...");
    return err_set(err, -ENODATA, "no objects passed to %s (-f %s: no Kubernetes object)",
                   gpusched_cmd_name, names);
}

/* load reads the cluster (live, when wanted) and then files into in; keep: the input's objects
 * are kept too (render) */
static int load(const struct flag_list *files, const char *namespace_, struct gpusched_live *live,
                struct manifest_input *in, struct sched_cluster *bound_into, bool keep)
{
    struct manifest_input_opts o;
    struct err err;
    size_t i, nread;
    int rc = 0;

    err_clear(&err);
    if (live && !gpusched_live_wanted(live, files->n))
        live = NULL;
    if (live && gpusched_live_open(live, namespace_, &err)) {
        gpusched_cmd_print_err(&err);
        return 1;
    }
    if (live)
        namespace_ = live->namespace_;
    memset(&o, 0, sizeof(o));
    o.default_namespace = namespace_ && *namespace_ ? namespace_ : NULL;
    if (bound_into) {
        o.take_bound = cmd_take_bound;
        o.take_arg = bound_into;
    }
    o.keep_objects = keep;
    o.strict = gpusched_cmd_strict;
    manifest_input_init(in, &o);
    if (live)
        rc = gpusched_live_load(live, in, &err);
    if (live && !rc && live->dra_unread)
        gpusched_dra_live_input(); /* a part of the DRA world is missing: none is modelled */
    nread = in->nread;
    for (i = 0; i < files->n && !rc; i++) {
        rc = manifest_input_load_file(in, files->v[i], &err);
        /* the loader names the file when the fault is inside one; a path that cannot be
         * opened at all is named here */
        if (rc && !err.file[0])
            err_at(&err, files->v[i], 0, 0);
    }
    if (!rc && files->n && in->nread == nread)
        /* kubectl create -f on files without an object: "error: no objects passed to
         * create", exit 1; an empty file is more likely a mistake than an empty cluster */
        rc = cmd_no_objects(files, &err);
    if (!rc)
        rc = manifest_input_finish(in, &err);
    for (i = 0; i < in->nwarnings; i++)
        fprintf(stderr, "gpusched: warning: %s\n", in->warnings[i]);
    if (rc) {
        gpusched_cmd_print_err(&err);
        manifest_input_release(in);
        return 1;
    }
    return 0;
}

static int cmd_load(const struct flag_list *files, const char *namespace_,
                    struct manifest_input *in, struct sched_cluster *bound_into, bool keep)
{
    return load(files, namespace_, NULL, in, bound_into, keep);
}

int gpusched_cmd_load_live(const struct flag_list *files, const char *namespace_,
                           struct gpusched_live *live, struct manifest_input *in,
                           struct sched_cluster *bound_into)
{
    return load(files, namespace_, live, in, bound_into, false);
}

int gpusched_cmd_load(const struct flag_list *files, const char *namespace_,
                      struct manifest_input *in, struct sched_cluster *bound_into)
{
    return cmd_load(files, namespace_, in, bound_into, false);
}

int gpusched_cmd_load_objects(const struct flag_list *files, const char *namespace_,
                              struct manifest_input *in)
{
    return cmd_load(files, namespace_, in, NULL, true);
}

/* the kube-scheduler minor version whose DynamicResources rules the clusters' DRA worlds
 * follow (dra_features_for): the --kube-version of the command, when it takes one
 * (gpusched_cmd_parse_kube_version), else the default */
static int cmd_kube_minor = 37;
/* a profile of the command scores with GPUPlacement (gpusched_dra_warn_gpu_placement) */
static bool cmd_gpu_placement;

/* cluster_fill adds the nodes, PodDisruptionBudgets, claims, volumes and storage classes of in, then its bound, non-terminal
 * pods, to c; prints the
 * error and returns 1 on failure */
static int cluster_fill(const struct manifest_input *in, struct sched_cluster *c)
{
    struct err err;
    size_t i;
    int rc = 0;

    err_clear(&err);
    for (i = 0; i < in->nnodes && !rc; i++)
        rc = sched_cluster_add_node(c, &in->nodes[i], &err);
    for (i = 0; i < in->npdbs && !rc; i++)
        rc = sched_cluster_set_pdb(c, &in->pdbs[i], &err);
    for (i = 0; i < in->npvcs && !rc; i++)
        rc = sched_cluster_set_pvc(c, &in->pvcs[i], &err);
    for (i = 0; i < in->npvs && !rc; i++)
        rc = sched_cluster_set_pv(c, &in->pvs[i], &err);
    for (i = 0; i < in->nstorage_classes && !rc; i++)
        rc = sched_cluster_set_storage_class(c, &in->storage_classes[i], &err);
    for (i = 0; i < in->ncsi_nodes && !rc; i++)
        rc = sched_cluster_set_csi_node(c, &in->csi_nodes[i], &err);
    for (i = 0; i < in->ncsi_drivers && !rc; i++)
        rc = sched_cluster_set_csi_driver(c, &in->csi_drivers[i], &err);
    for (i = 0; i < in->ncsi_capacities && !rc; i++)
        rc = sched_cluster_set_csi_capacity(c, &in->csi_capacities[i], &err);
    for (i = 0; i < in->nvolume_attachments && !rc; i++)
        rc = sched_cluster_set_volume_attachment(c, &in->volume_attachments[i], &err);
    for (i = 0; i < in->nselectors && !rc; i++) {
        const struct manifest_selector *s = &in->selectors[i];
        rc = sched_cluster_add_spread_source(c, s->owner_kind, s->namespace_, s->name, &s->sel,
                                             &err);
    }
    for (i = 0; i < in->nnamespaces && !rc; i++)
        rc = sched_cluster_set_namespace(c, &in->namespaces[i], &err);
    for (i = 0; i < in->npods && !rc; i++) {
        const struct kube_pod *p = &in->pods[i];
        if (p->node_name && p->node_name[0] && !kube_pod_phase_terminal(p->phase))
            rc = sched_cluster_add_pod(c, p, &err);
    }
    if (rc) {
        gpusched_cmd_print_err(&err);
        return 1;
    }
    /* DynamicResources' world, when the input has resource.k8s.io objects or claims */
    if (gpusched_dra_attach(in, c, cmd_kube_minor))
        return 1;
    if (cmd_gpu_placement)
        gpusched_dra_warn_gpu_placement(in, c);
    return 0;
}

int gpusched_cmd_cluster_build(const struct manifest_input *in, struct sched_cluster **out)
{
    struct sched_cluster *c = sched_cluster_new();

    *out = NULL;
    if (!c) {
        fprintf(stderr, "gpusched: out of memory\n");
        return 1;
    }
    if (cluster_fill(in, c)) {
        sched_cluster_free(c);
        return 1;
    }
    *out = c;
    return 0;
}

int gpusched_cmd_load_cluster(const struct flag_list *files, const char *namespace_,
                              struct manifest_input *in, struct sched_cluster **out)
{
    return gpusched_cmd_load_cluster_live(files, namespace_, NULL, in, out);
}

int gpusched_cmd_load_cluster_live(const struct flag_list *files, const char *namespace_,
                                   struct gpusched_live *live, struct manifest_input *in,
                                   struct sched_cluster **out)
{
    struct sched_cluster *c = sched_cluster_new();

    *out = NULL;
    if (!c) {
        fprintf(stderr, "gpusched: out of memory\n");
        return 1;
    }
    if (gpusched_cmd_load_live(files, namespace_, live, in, c)) {
        sched_cluster_free(c);
        return 1;
    }
    if (cluster_fill(in, c)) {
        sched_cluster_free(c);
        manifest_input_release(in);
        return 1;
    }
    *out = c;
    return 0;
}

int gpusched_cmd_parse_seed(const char *cmd, const char *s, uint64_t *seed)
{
    if (!s) {
        *seed = GPUSCHED_CMD_DEFAULT_SEED;
        return 0;
    }
    if (go_parse_uint(s, strlen(s), 10, 64, seed, NULL))
        return gpusched_cmd_usage_error(cmd,
                                        "invalid argument \"%s\" for \"--seed\" flag: "
                                        "must be a non-negative integer",
                                        s);
    return 0;
}

int gpusched_cmd_parse_profile(const char *cmd, const char *s, const struct sched_profile **p)
{
    *p = sched_profile_find(s ? s : "default");
    cmd_gpu_placement = *p && (*p)->gpu_aware;
    if (!*p)
        return gpusched_cmd_usage_error(cmd,
                                        "invalid argument \"%s\" for \"--profile\" flag: "
                                        "must be default or gpu",
                                        s);
    return 0;
}

void gpusched_cmd_queue_order(const struct kube_pod *const *pods, size_t n, size_t *order)
{
    size_t i, j;

    /* a bottom-up merge sort: stable, and O(n log n) for inputs of many thousand pods */
    size_t *tmp = malloc(n * sizeof(*tmp));
    size_t width;

    for (i = 0; i < n; i++)
        order[i] = i;
    if (!tmp) {
        /* out of memory: a stable insertion sort still gives the right order */
        for (i = 1; i < n; i++) {
            size_t v = order[i];
            for (j = i; j > 0 && pods[order[j - 1]]->priority < pods[v]->priority; j--)
                order[j] = order[j - 1];
            order[j] = v;
        }
        return;
    }
    for (width = 1; width < n; width *= 2) {
        for (i = 0; i < n; i += 2 * width) {
            size_t lo = i, mid = i + width < n ? i + width : n;
            size_t hi = i + 2 * width < n ? i + 2 * width : n;
            size_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                tmp[k++] =
                    pods[order[b]]->priority > pods[order[a]]->priority ? order[b++] : order[a++];
            while (a < mid)
                tmp[k++] = order[a++];
            while (b < hi)
                tmp[k++] = order[b++];
        }
        memcpy(order, tmp, n * sizeof(*order));
    }
    free(tmp);
}

int gpusched_cmd_sim_parse(const char *cmd, const char *usage, int argc, char **argv,
                           struct gpusched_cmd_sim_flags *f, struct flag_list *pos, bool *help)
{
    static const struct flag none[] = {FLAG_END};
    bool explain = !strcmp(cmd, "explain");

    memset(f, 0, sizeof(*f)); /* (before the tables: the live flags are kept in f) */
    {
        const struct flag common[] = {
            {"filename", 'f', FLAG_LIST, &f->files, NULL, NULL, "FILE",
             "manifest file, directory or - (stdin); repeatable, or a,b"},
            {"output", 'o', FLAG_STRING, &f->output, NULL, NULL, "FORMAT",
             explain ? "table (default), wide (scores as weight x normalized), json,\n"
                       "yaml or name"
                     : "table (default), wide, json, yaml or name"},
            {"namespace", 'n', FLAG_STRING, &f->namespace_, NULL, NULL, "NS",
             "namespace of the file objects that name none, and of the\n"
             "cluster's pending pods (default: the context's, else \"default\")"},
            {"profile", 0, FLAG_STRING, &f->profile, NULL, NULL, "NAME",
             "default (kube-scheduler's plugins) or gpu (GPU bin-packing)"},
            {"config", 0, FLAG_STRING, &f->config, NULL, NULL, "FILE",
             "a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1):\n"
             "each pod uses the profile of its schedulerName (the first\n"
             "profile when none has it); see docs/gpusched.md"},
            {"scheduler-name", 0, FLAG_STRING, &f->sched_name, NULL, NULL, "NAME",
             explain ? "only pods whose spec.schedulerName is NAME are queued"
                     : "only schedule pods whose spec.schedulerName is NAME"},
            {"seed", 0, FLAG_STRING, &f->seed, NULL, NULL, "N",
             explain ? "tie-break seed, as for simulate (default 1)"
                     : "seed for breaking ties between equally scored nodes\n"
                       "(default 1: the same input always gives the same output)"},
            {"percentage-of-nodes-to-score", 0, FLAG_STRING, &f->percentage, NULL, NULL, "N",
             explain ? "node sampling, as for simulate (default 100: every node)"
                     : "stop filtering once N% of the nodes (at least 100) fit,\n"
                       "as kube-scheduler does; 0: its adaptive share\n"
                       "(default 100: every node, see docs/gpusched.md)"},
            {"kube-version", 0, FLAG_STRING, &f->kube_version, NULL, NULL, "VERSION",
             "the kube-scheduler whose texts and rules to follow:\n" SCHED_KUBE_VERSIONS
             " (default " SCHED_KUBE_VERSION_DEFAULT ", docs/scheduling.md)"},
            GPUSCHED_CMD_STRICT_FLAG,
            FLAG_END,
        };
        const struct flag simulate_only[] = {
            {"follow", 0, FLAG_STRING, &f->follow, NULL, NULL, "FILE",
             "another run's simulate -o json (the kube-scheduler oracle's):\n"
             "where nodes tie, take the node it took (docs/testing.md)"},
            {"trace", 0, FLAG_STRING, &f->trace, NULL, NULL, "FILE",
             "write every scheduling attempt to FILE, one JSON line each:\n"
             "each node's filter verdict or scores, and the result"},
            FLAG_END,
        };
        const struct flag explain_only[] = {
            {"selector", 'l', FLAG_STRING, &f->selector, NULL, NULL, "SELECTOR",
             "show only the nodes matching this label selector\n"
             "(e.g. -l nvidia.com/gpu.product=A100); all nodes still count"},
            FLAG_END,
        };
        /* the common flags, simulate's --follow and --trace, the live flags (live-int.h), explain's
     * -l, --no-headers */
        const struct flag table[] = {
            FLAG_GROUP_OF(common),
            FLAG_GROUP_OF(explain ? none : simulate_only),
            FLAG_GROUP_OF(gpusched_live_flags(&f->live)),
            FLAG_GROUP_OF(explain ? explain_only : none),
            FLAG_GROUP_OF(out_table_flags),
            FLAG_END,
        };
        int rc;

        rc = gpusched_cmd_flags_parse(cmd, table, argc, argv, pos, help);
        if (!rc && *help)
            gpusched_cmd_help(cmd, usage, table);
        return rc;
    }
}

int gpusched_cmd_parse_kube_version(const char *cmd, const char *s,
                                    const struct sched_kube_version **v)
{
    *v = sched_kube_version_find(s);
    if (*v)
        cmd_kube_minor = (*v)->minor;
    if (!*v)
        return gpusched_cmd_usage_error(cmd,
                                        "invalid argument \"%s\" for \"--kube-version\" flag: "
                                        "must be one of " SCHED_KUBE_VERSIONS,
                                        s);
    return 0;
}

int gpusched_cmd_parse_percentage(const char *cmd, const char *s, int32_t dflt, int32_t *out)
{
    int64_t v;

    if (!s) {
        *out = dflt;
        return 0;
    }
    if (go_parse_int(s, strlen(s), 10, 32, &v, NULL) || v < 0 || v > 100)
        return gpusched_cmd_usage_error(cmd,
                                        "invalid argument \"%s\" for "
                                        "\"--percentage-of-nodes-to-score\" flag: "
                                        "must be an integer from 0 to 100",
                                        s);
    *out = (int32_t)v;
    return 0;
}

int gpusched_cmd_sim_check(const char *cmd, struct gpusched_cmd_sim_flags *f, enum out_format *fmt,
                           const struct sched_profile **profile, uint64_t *seed)
{
    const struct sched_profile *builtin;
    struct err err;
    int rc;

    err_clear(&err);
    if (out_format_parse(f->output, 1u << OUT_TABLE | 1u << OUT_WIDE | 1u << OUT_JSON, fmt, &err))
        return gpusched_cmd_usage_error(cmd, "%s", err.msg);
    rc = gpusched_cmd_parse_profile(cmd, f->profile, &builtin);
    if (!rc) {
        /* offline answers are meant to be reproducible: every node unless asked */
        f->prof = *builtin;
        *profile = &f->prof;
        rc = gpusched_cmd_parse_percentage(cmd, f->percentage, 100,
                                           &f->prof.percentage_of_nodes_to_score);
    }
    if (!rc)
        rc = gpusched_cmd_parse_seed(cmd, f->seed, seed);
    if (!rc) {
        const struct sched_kube_version *v;

        rc = gpusched_cmd_parse_kube_version(cmd, f->kube_version, &v);
        if (!rc)
            sched_profile_set_version(&f->prof, v);
    }
    if (!rc && f->config) {
        size_t i;
        if (f->profile)
            return gpusched_cmd_usage_error(cmd, "--profile and --config cannot be used "
                                                 "together (--profile gpu is a shorthand for "
                                                 "a configuration, docs/gpusched.md)");
        sched_config_release(&cmd_config);
        if (sched_config_load(f->config, &f->prof, &cmd_config, &err)) {
            char msg[ERR_MSG_MAX + 600];
            fprintf(stderr, "gpusched: %s\n", err_format(&err, msg, sizeof(msg)));
            return 2;
        }
        for (i = 0; i < cmd_config.nprofiles; i++)
            cmd_gpu_placement = cmd_gpu_placement || cmd_config.profiles[i].gpu_aware;
        /* --percentage-of-nodes-to-score, when given, wins over the file's */
        for (i = 0; f->percentage && i < cmd_config.nprofiles; i++)
            cmd_config.profiles[i].percentage_of_nodes_to_score =
                f->prof.percentage_of_nodes_to_score;
        *profile = &cmd_config.profiles[0];
    }
    return rc;
}

const struct sched_profile *gpusched_cmd_profile_for(const struct sched_profile *dflt,
                                                     const struct kube_pod *pod)
{
    const struct sched_profile *p = sched_config_find(&cmd_config, pod->scheduler_name);

    return p ? p : dflt;
}

const struct sched_profile *gpusched_cmd_profile_of(void *arg, const struct kube_pod *pod)
{
    (void)arg;
    return sched_config_find(&cmd_config, pod->scheduler_name);
}

size_t gpusched_cmd_pending_pods(const struct manifest_input *in, const char *sched_name,
                                 const struct kube_pod **out)
{
    size_t i, n = 0;

    for (i = 0; i < in->npods; i++) {
        const struct kube_pod *p = &in->pods[i];
        if ((p->node_name && p->node_name[0]) || kube_pod_phase_terminal(p->phase))
            continue;
        if (sched_name && strcmp(p->scheduler_name, sched_name))
            continue;
        if (p->terminating) {
            /* kube-scheduler's "Skip schedule deleting pod": never attempted */
            fprintf(stderr,
                    "gpusched: warning: pod %s/%s has a deletionTimestamp: kube-scheduler does "
                    "not schedule a pod being deleted; left out\n",
                    p->namespace_, p->name);
            continue;
        }
        out[n++] = p;
    }
    return n;
}

int gpusched_cmd_print_json(const json_t *doc, int fail, int indent)
{
    if (fail) {
        fprintf(stderr, "gpusched: out of memory\n");
        return 1;
    }
    if (out_json_print(doc, indent, stdout)) {
        fprintf(stderr, "gpusched: cannot write the output: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}

int gpusched_cmd_flush(int rc)
{
    if (!rc && fflush(stdout)) {
        fprintf(stderr, "gpusched: cannot write the output: %s\n", strerror(errno));
        rc = 1;
    }
    return rc;
}

int gpusched_cmd_status(int rc)
{
    if (rc == -ENOMEM) {
        fprintf(stderr, "gpusched: out of memory\n");
        rc = 1;
    }
    return rc;
}
