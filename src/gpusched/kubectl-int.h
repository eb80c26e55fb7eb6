/* kubectl-int.h - the commands' side of kubectl.c (kubectl.h): running as the kubectl plugin,
 * the dispatch around every command, and the capture of a command's -o json that becomes
 * -o yaml or -o name. */
#ifndef GPUSCHED_KUBECTL_INT_H
#define GPUSCHED_KUBECTL_INT_H

#include <stdbool.h>

#include "base/flag.h"

/* gpusched_kubectl_main runs dispatch(argc, argv) (argv[1] the command), then prints what a
 * command asked gpusched_kubectl_output to convert. The program name in usage hints is
 * "kubectl gpusched" when argv[0] is kubectl-gpusched. Also serves `completion bash|zsh` and
 * the hidden `__complete WORDS...`. Returns the exit status. */
int gpusched_kubectl_main(int argc, char **argv, int (*dispatch)(int argc, char **argv));

/* gpusched_kubectl_output is called by a command that prints JSON with its -o value, once its
 * flags are parsed: -o yaml, and -o name unless the command prints names itself (native
 * GPUSCHED_KUBECTL_NAME), become -o json (*output), the command's standard output is captured
 * and gpusched_kubectl_main prints it as YAML, or as one "pod/NAME" line per pod it names.
 * 0, or 1 (with a message) when the capture cannot start. */
#define GPUSCHED_KUBECTL_NAME 1u
int gpusched_kubectl_output(const char **output, unsigned native);

/* gpusched_kubectl_begin is a command's opening in cobra's and kubectl's words: argv parsed
 * against flags, the command's one table (gpusched_cmd_flags_parse: the positional arguments
 * in *pos), --help printed with usage before the flags' lines (*help set), -o (output; NULL
 * when the command has none) handed to gpusched_kubectl_output with the GPUSCHED_KUBECTL_NAME
 * bit of opts, and a positional argument refused unless opts has GPUSCHED_KUBECTL_ARGS (the
 * command checks its own). Returns the exit status when the command must end now (2 usage
 * error, 1 failure; the message printed), else 0: the command goes on unless *help. */
#define GPUSCHED_KUBECTL_ARGS 2u
int gpusched_kubectl_begin(const char *cmd, const char *usage, const struct flag *flags,
                           const char **output, unsigned opts, int argc, char **argv,
                           struct flag_list *pos, bool *help);

#endif
