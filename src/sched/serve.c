/* serve.c - placeholder until the live scheduler lands. */
#include "sched/serve.h"

#include <stdio.h>

int sched_serve_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "gpusched serve: not built yet\n");
    return 1;
}
