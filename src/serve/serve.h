/* serve.h - gpusched serve: the secondary scheduler that binds pods through the API. */
#ifndef SERVE_SERVE_H
#define SERVE_SERVE_H

/* serve_main parses serve's flags (argv[0] is "serve") and runs until SIGTERM/SIGINT.
 * Returns the process exit status (0, 1 runtime failure, 2 usage error). */
int serve_main(int argc, char **argv);

#endif
