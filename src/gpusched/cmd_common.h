/* cmd_common.h - what the gpusched commands share that their tests call too: the flag parser
 * in cobra's words and kube-scheduler's queue order. The rest the commands share (loading the
 * -f inputs, building the cluster, checking --seed, --profile and the rest, printing errors)
 * is cmd_common-int.h.
 *
 * These are command-level helpers: unlike the library modules they print their errors (one
 * line on stderr, "gpusched: FILE: line N: FIELD: what is wrong") and return the exit status
 * to use: 0 success, 1 runtime failure, 2 usage error. */
#ifndef GPUSCHED_CMD_COMMON_H
#define GPUSCHED_CMD_COMMON_H

#include <stdbool.h>
#include <stddef.h>

#include "base/flag.h"

struct kube_pod;

/* gpusched_cmd_flags_parse parses argv[1..] against flags, the command's one table (base/flag.h:
 * kubectl's spellings; FLAG_END last, the shared tables included with FLAG_GROUP_OF), which is
 * also its --help. Positional arguments are collected in *pos (borrowed from argv). On
 * -h/--help it sets *help and stops. Usage errors are printed on stderr in cobra's words
 * ("gpusched: unknown flag: --x", followed by "See 'gpusched CMD --help' for usage.") and
 * return 2; 0 otherwise. */
int gpusched_cmd_flags_parse(const char *cmd, const struct flag *flags, int argc, char **argv,
                             struct flag_list *pos, bool *help);

/* gpusched_cmd_queue_order fills order[0..n) with the indexes of pods[] in kube-scheduler's queue
 * order: priority descending, then input order (a stable sort). */
void gpusched_cmd_queue_order(const struct kube_pod *const *pods, size_t n, size_t *order);

#endif
