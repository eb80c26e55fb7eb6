/* cmd_explain-int.h - `gpusched explain`: for one pod of manifest files, every node's verdict: the
 * filter that rejected it, or its scores, then the message and the node simulate would pick. */
#ifndef GPUSCHED_CMD_EXPLAIN_INT_H
#define GPUSCHED_CMD_EXPLAIN_INT_H

/* gpusched_cmd_explain runs the command on its own argv (argv[0] is "explain"); its result goes to
 * stdout, errors as one line to stderr. Returns the exit status: 0 success, 1 runtime
 * failure, 2 usage error. */
int gpusched_cmd_explain(int argc, char **argv);

#endif
