/* cmd_simulate-int.h - `gpusched simulate`: schedule the pending pods of manifest files onto their
 * nodes and print where each one lands, or its exact FailedScheduling message. */
#ifndef GPUSCHED_CMD_SIMULATE_INT_H
#define GPUSCHED_CMD_SIMULATE_INT_H

/* gpusched_cmd_simulate runs the command on its own argv (argv[0] is "simulate"); its result goes
 * to stdout, errors as one line to stderr. Returns the exit status: 0 success, 1 runtime failure, 2
 * usage error. */
int gpusched_cmd_simulate(int argc, char **argv);

#endif
