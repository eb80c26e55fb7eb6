/* signals-int.h - what stops serve from outside: SIGTERM or SIGINT (a graceful stop: no new pods,
 * binds in flight finish, the lease is released) and lost leadership (exit 1, as
 * kube-scheduler does, so the Deployment restarts it as a standby). */
#ifndef SERVE_SIGNALS_INT_H
#define SERVE_SIGNALS_INT_H

#include <stdbool.h>

#include "serve/state-int.h"

/* serve_signals_start blocks SIGTERM, SIGINT and SIGUSR1 in the calling thread (every thread
 * started afterwards inherits the mask), ignores SIGPIPE, and starts the thread that turns
 * the first two into s->stopping. Returns 0 or -EAGAIN. serve_signals_stop wakes and joins
 * that thread (nothing when it was not started). */
int serve_signals_start(struct serve *s);
void serve_signals_stop(struct serve *s);

/* serve_on_leader_change and serve_on_leader_log are the leader elector's callbacks (ud is
 * the struct serve): losing the lease stops the loop. */
void serve_on_leader_change(void *ud, bool leading);
void serve_on_leader_log(void *ud, int level, const char *msg);

#endif
