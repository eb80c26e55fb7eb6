/* cmd_common-int.h - what the offline gpusched commands (simulate, explain, nodes, capacity,
 * report, render) share among themselves: help in cobra's words, loading the -f inputs,
 * building the cluster, checking --seed, --profile and --percentage-of-nodes-to-score,
 * printing errors (cmd_common.h: the flag parser and the queue order, which tests call too).
 *
 * As cmd_common.h's, these print their errors and return the exit status to use. */
#ifndef GPUSCHED_CMD_COMMON_INT_H
#define GPUSCHED_CMD_COMMON_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/flag.h"
#include "gpusched/live-int.h"
#include "gpusched/output.h"
#include "manifest/manifest.h"
#include "sched/sched.h"

/* gpusched_cmd_help prints a command's --help on stdout: intro (what it does, examples, the
 * usage line), then "Flags:" and the flags' lines made from the same table as the parser's. */
void gpusched_cmd_help(const char *cmd, const char *intro, const struct flag *flags);

/* gpusched_cmd_prog is how usage hints name the program: "gpusched", or "kubectl gpusched"
 * when run as the kubectl plugin (set by kubectl.c before any command runs). */
extern const char *gpusched_cmd_prog;
/* gpusched_cmd_name is the command running ("simulate"), for messages that name it (set by
 * main.c's dispatch). */
extern const char *gpusched_cmd_name;

/* gpusched_cmd_usage_error prints "gpusched: MSG" and the --help hint for cmd on stderr and
 * returns 2. */
int gpusched_cmd_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* --strict of every command that reads -f: an unknown field or a duplicate key in a file fails
 * the load (kubectl --validate=strict), where it is otherwise a warning. The files' objects
 * only: a cluster's are read as the API server wrote them. */
extern bool gpusched_cmd_strict;
#define GPUSCHED_CMD_STRICT_FLAG                                                                   \
    {                                                                                              \
        "strict", 0, FLAG_BOOL, &gpusched_cmd_strict, NULL, NULL, NULL,                            \
            "an unknown field or a duplicate key in a file is an error,\n"                         \
            "not a warning (as kubectl --validate=strict)"                                         \
    }

/* gpusched_cmd_load initialises in and loads every path of files into it (files, directories
 * or "-"), then finishes it. Objects that name no namespace go to namespace (NULL or "":
 * "default"), like kubectl -n; the string must outlive in. With bound_into set, bound pods
 * go straight into that cluster as they are read (see manifest_input_opts.take_bound) rather
 * than into in->pods; terminal ones are dropped. Loader warnings are printed on stderr as
 * "gpusched: warning: ...". On failure the error is printed as one line and 1 is returned
 * (in is released; bound_into holds part of the input and should be freed); 0 otherwise, and
 * the caller releases in with manifest_input_release. */
int gpusched_cmd_load(const struct flag_list *files, const char *namespace_,
                      struct manifest_input *in, struct sched_cluster *bound_into);

/* gpusched_cmd_load_objects is gpusched_cmd_load keeping every object as JSON
 * (manifest_input_opts.keep_objects), for `gpusched render`. */
int gpusched_cmd_load_objects(const struct flag_list *files, const char *namespace_,
                              struct manifest_input *in);

/* gpusched_cmd_cluster_build returns, in *out, a new cluster with every node of in, then every
 * bound, non-terminal pod of in (spec.nodeName set). Prints the error and returns 1 on
 * failure; the caller frees *out with sched_cluster_free. */
int gpusched_cmd_cluster_build(const struct manifest_input *in, struct sched_cluster **out);

/* gpusched_cmd_load_cluster is gpusched_cmd_load handing the bound pods to a new cluster as they
 * are read, then gpusched_cmd_cluster_build's filling of that cluster: for the commands that
 * need the bound pods only as usage on their nodes. On failure it prints the error, releases
 * in and returns 1 (*out NULL); otherwise the caller releases in and frees *out. */
int gpusched_cmd_load_cluster(const struct flag_list *files, const char *namespace_,
                              struct manifest_input *in, struct sched_cluster **out);

/* gpusched_cmd_load_live and gpusched_cmd_load_cluster_live are the same, reading first the
 * cluster when live is not NULL and gpusched_live_wanted (live-int.h; its client is opened here and
 * closed by the caller with gpusched_live_close), then files on top. namespace_ (-n), else the
 * context's namespace, is the files' default namespace and the live pending pods'. */
int gpusched_cmd_load_live(const struct flag_list *files, const char *namespace_,
                           struct gpusched_live *live, struct manifest_input *in,
                           struct sched_cluster *bound_into);
int gpusched_cmd_load_cluster_live(const struct flag_list *files, const char *namespace_,
                                   struct gpusched_live *live, struct manifest_input *in,
                                   struct sched_cluster **out);

/* gpusched_cmd_parse_seed / gpusched_cmd_parse_profile check --seed and --profile; on a bad value
 * they print the usage error and return 2. */
int gpusched_cmd_parse_seed(const char *cmd, const char *s, uint64_t *seed);
int gpusched_cmd_parse_profile(const char *cmd, const char *s, const struct sched_profile **p);

/* The flags simulate and explain share. The strings are borrowed from argv; the caller
 * releases files with flag_list_release. */
struct gpusched_cmd_sim_flags {
    struct flag_list files;
    const char *output, *profile, *seed, *sched_name, *namespace_;
    const char *config;         /* --config FILE */
    const char *percentage;     /* --percentage-of-nodes-to-score */
    const char *kube_version;   /* --kube-version */
    const char *follow, *trace; /* simulate only: --follow, --trace */
    struct sched_profile prof;  /* filled by gpusched_cmd_sim_check */
    struct gpusched_live live;  /* --kubeconfig, --context, -A, -v */
    const char *selector;       /* explain's -l */
};

/* gpusched_cmd_sim_parse parses argv for cmd ("simulate" or "explain", whose help words differ a
 * little) against -f/--filename, -o/--output, -n/--namespace, --profile, --scheduler-name,
 * --seed, --percentage-of-nodes-to-score, --kube-version, --strict, for simulate --follow and
 * --trace,
 * the live flags (live-int.h), for explain -l, and --no-headers, into f (zeroed first); on -h it
 * prints the help (usage, then the flags) and sets *help. pos, help and the return value are
 * gpusched_cmd_flags_parse's. */
int gpusched_cmd_sim_parse(const char *cmd, const char *usage, int argc, char **argv,
                           struct gpusched_cmd_sim_flags *f, struct flag_list *pos, bool *help);

/* gpusched_cmd_sim_check checks f in this order: -f given or the cluster read (live-int.h), -o one of
 * table/wide/json (into *fmt), --profile, --percentage-of-nodes-to-score (default 100: every
 * node), --seed (into *seed), --kube-version (default 1.37; its texts go into the profile).
 * The profile with that percentage is f->prof, and *profile points at it. Prints the usage
 * error and returns 2 on the first bad one; 0 otherwise. */
int gpusched_cmd_sim_check(const char *cmd, struct gpusched_cmd_sim_flags *f, enum out_format *fmt,
                           const struct sched_profile **profile, uint64_t *seed);

/* With --config (gpusched_cmd_sim_check loaded it; *profile is then its first profile):
 * gpusched_cmd_profile_for returns the profile of pod's schedulerName, or dflt when no
 * profile has that name (or there is no --config); gpusched_cmd_profile_of is it as a
 * struct sched_sim_opts profile_of (arg unused, NULL for no other profile). */
const struct sched_profile *gpusched_cmd_profile_for(const struct sched_profile *dflt,
                                                     const struct kube_pod *pod);
const struct sched_profile *gpusched_cmd_profile_of(void *arg, const struct kube_pod *pod);

/* gpusched_cmd_parse_kube_version checks --kube-version (NULL: the default) into *v; on a
 * bad value it prints the usage error and returns 2. */
int gpusched_cmd_parse_kube_version(const char *cmd, const char *s,
                                    const struct sched_kube_version **v);

/* gpusched_cmd_parse_percentage checks --percentage-of-nodes-to-score: an integer 0..100 (NULL:
 * dflt). On a bad value it prints the usage error and returns 2. */
int gpusched_cmd_parse_percentage(const char *cmd, const char *s, int32_t dflt, int32_t *out);

/* gpusched_cmd_pending_pods writes into out (room for in->npods) the pods of in, in input order,
 * that wait for a scheduler: no spec.nodeName, not terminal, not being deleted (a pod with a
 * deletionTimestamp is left out with a warning on stderr, as kube-scheduler skips it), and
 * schedulerName sched_name (any when NULL). Returns how many. */
size_t gpusched_cmd_pending_pods(const struct manifest_input *in, const char *sched_name,
                                 const struct kube_pod **out);

/* gpusched_cmd_print_err prints err on stderr as one line "gpusched: MSG". */
void gpusched_cmd_print_err(const struct err *err);

/* gpusched_cmd_pod_warning formats the i-th field of pod p that gpusched does not model
 * (p->unmodelled[i]) as one line, "pod NS/NAME: FIELD: WHAT; kube-scheduler's answer may
 * differ", into buf. gpusched_cmd_warn_unmodelled prints every such line of the pods to
 * stderr as "gpusched: warning: ..." and returns how many. */
const char *gpusched_cmd_pod_warning(const struct kube_pod *p, size_t i, char *buf, size_t size);
size_t gpusched_cmd_warn_unmodelled(const struct kube_pod *const *pods, size_t n);

/* gpusched_cmd_print_json prints doc on stdout with out_json_print(doc, indent), or "out of
 * memory" when fail is set. Errors go to stderr as one line; returns 0 or 1. */
int gpusched_cmd_print_json(const json_t *doc, int fail, int indent);

/* gpusched_cmd_flush ends a command's output: when rc is 0 it flushes stdout, and a failure
 * there is reported ("cannot write the output: ...") and gives 1; rc otherwise.
 * gpusched_cmd_status turns -ENOMEM into the exit status 1, reporting it; rc otherwise. */
int gpusched_cmd_flush(int rc);
int gpusched_cmd_status(int rc);

/* The default --seed: fixed, so two runs on the same input give the same placement. */
#define GPUSCHED_CMD_DEFAULT_SEED 1

#endif
