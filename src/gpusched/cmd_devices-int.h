/* cmd_devices-int.h - `gpusched devices`: the devices of the input's ResourceSlices, those a CEL
 * selector or a DeviceClass matches as kube-scheduler's allocator would decide it. */
#ifndef GPUSCHED_CMD_DEVICES_INT_H
#define GPUSCHED_CMD_DEVICES_INT_H

/* gpusched_cmd_devices runs the command on its own argv (argv[0] is "devices"); its result
 * goes to stdout, errors to stderr. Returns the exit status: 0 success, 1 runtime failure,
 * 2 usage error (a selector that does not compile among them). */
int gpusched_cmd_devices(int argc, char **argv);

#endif
