/* cmd_capacity-int.h - `gpusched capacity`: how many more copies of a pod fit on the cluster (or
 * on manifest files), where they go, the FailedScheduling message that stops the next one, and
 * the free GPUs left stranded on nodes where no copy fits. */
#ifndef GPUSCHED_CMD_CAPACITY_INT_H
#define GPUSCHED_CMD_CAPACITY_INT_H

/* gpusched_cmd_capacity runs the command on its own argv (argv[0] is "capacity"); its result
 * goes to stdout, errors as one line to stderr. Returns the exit status: 0 success, 1 runtime
 * failure, 2 usage error. */
int gpusched_cmd_capacity(int argc, char **argv);

#endif
