/* loop-int.h - the scheduling loop: take the queue's head, schedule it with the core, assume it on
 * its node and hand the bind to the binder, or report why it fits nowhere. */
#ifndef SERVE_LOOP_INT_H
#define SERVE_LOOP_INT_H

#include "serve/state-int.h"

/* serve_loop runs on the main thread until s->stopping: it waits for both informers' first
 * list and for leadership, then schedules one pod per turn, holding mu. */
void serve_loop(struct serve *s);

#endif
