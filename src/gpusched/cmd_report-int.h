/* cmd_report-int.h - `gpusched report`: one self-contained HTML page of the cluster's GPUs (per
 * node by model), its pending pods by reason, and the GPU fragmentation. */
#ifndef GPUSCHED_CMD_REPORT_INT_H
#define GPUSCHED_CMD_REPORT_INT_H

/* gpusched_cmd_report runs the command on its own argv (argv[0] is "report"); the page goes to
 * stdout or --out FILE, errors as one line to stderr. Returns the exit status: 0 success, 1
 * runtime failure, 2 usage error. */
int gpusched_cmd_report(int argc, char **argv);

#endif
