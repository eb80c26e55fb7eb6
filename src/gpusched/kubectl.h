/* kubectl.h - kubectl's conventions around every gpusched command: running as the kubectl
 * plugin `kubectl-gpusched` (`kubectl gpusched ...`), --no-headers, -o yaml and -o name made
 * from a command's -o json, the completion protocol and the bash and zsh completion scripts. */
#ifndef GPUSCHED_KUBECTL_H
#define GPUSCHED_KUBECTL_H

#include <stdio.h>

#include <jansson.h>

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

/* gpusched_yaml_print writes v as YAML the way kubectl -o yaml lays it out (block style,
 * sequences at their key's indentation, strings quoted only when they must be). 0 or -EIO. */
int gpusched_yaml_print(const json_t *v, FILE *f);

#endif
