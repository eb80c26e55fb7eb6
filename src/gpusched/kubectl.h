/* kubectl.h - kubectl's conventions around every gpusched command: running as the kubectl
 * plugin `kubectl-gpusched` (`kubectl gpusched ...`), --no-headers, -o yaml and -o name made
 * from a command's -o json, the completion protocol and the bash and zsh completion scripts. */
#ifndef GPUSCHED_KUBECTL_H
#define GPUSCHED_KUBECTL_H

#include <stdio.h>

#include <jansson.h>

/* gpusched_kubectl_main runs dispatch(argc, argv) (argv[1] the command) after taking off what
 * is handled here: --no-headers (tables print no header line), and -o yaml or -o name where
 * the command itself prints only json (the command runs with -o json into a memory file that
 * is then printed as YAML, or as one "pod/NAME" line per pod it names). The program name in
 * usage hints is "kubectl gpusched" when argv[0] is kubectl-gpusched. Also serves
 * `completion bash|zsh` and the hidden `__complete WORDS...`. Returns the exit status. */
int gpusched_kubectl_main(int argc, char **argv, int (*dispatch)(int argc, char **argv));

/* gpusched_yaml_print writes v as YAML the way kubectl -o yaml lays it out (block style,
 * sequences at their key's indentation, strings quoted only when they must be). 0 or -EIO. */
int gpusched_yaml_print(const json_t *v, FILE *f);

#endif
