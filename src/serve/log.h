/* log.h - serve's log: klog-like lines on stderr ("I0102 15:04:05.000000  1234 serve] ..."),
 * with a verbosity that decides how chatty (-v). The only module of serve that prints. */
#ifndef SERVE_LOG_H
#define SERVE_LOG_H

/* serve_log_verbosity sets the level up to which serve_log prints (0 at start). */
void serve_log_verbosity(int v);

/* serve_log prints one line of severity sev ('I', 'W', 'E') when v is at most the verbosity;
 * level 0 always prints. Thread safe: one write per line. */
void serve_log(char sev, int v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
