/* serve.h - gpusched serve: the secondary scheduler that binds pods through the API. */
#ifndef SCHED_SERVE_H
#define SCHED_SERVE_H

/* sched_serve_main parses serve's flags (argv[0] is "serve") and runs until SIGTERM/SIGINT.
 * Returns the process exit status (0, 1 runtime failure, 2 usage error). */
int sched_serve_main(int argc, char **argv);

#endif
