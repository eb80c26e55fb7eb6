/* cmd_nodes-int.h - `gpusched nodes`: the nodes of manifest files like `kubectl get nodes -l`, with the
 * GPU labels and the GPUs still free. */
#ifndef GPUSCHED_CMD_NODES_INT_H
#define GPUSCHED_CMD_NODES_INT_H

/* gpusched_cmd_nodes runs the command on its own argv (argv[0] is "nodes"); its result goes to
 * stdout, errors as one line to stderr. Returns the exit status: 0 success, 1 runtime
 * failure, 2 usage error. */
int gpusched_cmd_nodes(int argc, char **argv);

#endif
