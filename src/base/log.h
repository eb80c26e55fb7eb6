/* log.h - klog-style log lines on stderr, as Kubernetes components write them:
 *
 *     I1203 12:34:56.789012   12345 gpulabel] labelled node "gpu-1": ...
 *
 * severity (I info, W warning, E error), month and day, UTC time to the microsecond, the
 * process id, the component's tag (klog puts file:line there), then the message. A verbosity
 * (-v) decides how chatty: a line of level v prints when v <= the verbosity (level 0 always).
 * The daemons' only printer: gpulabel's loop (labeler/daemon.c) and gpusched serve. */
#ifndef BASE_LOG_H
#define BASE_LOG_H

#include <stddef.h>

/* log_setup sets the tag after the pid ("gpulabel", "serve"; NULL leaves it) and the level up
 * to which log_printf prints (0 at start). Call it before other threads log. */
void log_setup(const char *tag, int verbosity);

/* log_printf prints one line of severity sev ('I', 'W', 'E') when v is at most the verbosity.
 * Thread safe: one write(2) per line, so lines never interleave; a message longer than a line
 * (4 KiB) is cut. */
void log_printf(char sev, int v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* log_format writes the line log_printf would print for ts_sec/ts_nsec and pid into buf
 * (newline included, NUL-terminated, cut to size) and returns its length: for tests. */
size_t log_format(char *buf, size_t size, char sev, long ts_sec, long ts_nsec, int pid,
                  const char *msg);

#endif
