/* kubectl.h - kubectl's conventions around every gpusched command: running as the kubectl
 * plugin `kubectl-gpusched` (`kubectl gpusched ...`), --no-headers, -o yaml and -o name made
 * from a command's -o json, the completion protocol and the bash and zsh completion scripts.
 * This header: kubectl's YAML layout, which tests call too; the rest is kubectl-int.h. */
#ifndef GPUSCHED_KUBECTL_H
#define GPUSCHED_KUBECTL_H

#include <stdio.h>

#include <jansson.h>

/* gpusched_yaml_print writes v as YAML the way kubectl -o yaml lays it out (block style,
 * sequences at their key's indentation, strings quoted only when they must be). 0 or -EIO. */
int gpusched_yaml_print(const json_t *v, FILE *f);

#endif
