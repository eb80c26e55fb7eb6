/* cmd_render-int.h - `gpusched render`: the objects manifests expand to, as a v1 List. */
#ifndef GPUSCHED_CMD_RENDER_INT_H
#define GPUSCHED_CMD_RENDER_INT_H

/* gpusched_cmd_render runs the command on argv[0..argc) (argv[0] = "render"); returns the
 * exit status. */
int gpusched_cmd_render(int argc, char **argv);

#endif
