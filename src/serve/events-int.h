/* events-int.h - the parts of the API's bodies (events.c) that only serve's own files write:
 * times in the API's formats, and the patches of a preemption victim and of a cleared
 * nomination. */
#ifndef SERVE_EVENTS_INT_H
#define SERVE_EVENTS_INT_H

#include <stddef.h>
#include <time.h>

/* serve_time_micro / serve_time_rfc3339 format t (wall clock) as metav1.MicroTime
 * "2006-01-02T15:04:05.000000Z" / metav1.Time "2006-01-02T15:04:05Z" into buf. */
const char *serve_time_micro(const struct timespec *t, char *buf, size_t size);
const char *serve_time_rfc3339(const struct timespec *t, char *buf, size_t size);

/* serve_disruption_patch_json builds the strategic merge patch of a preemption victim's
 * pods/{name}/status that kube-scheduler's executor writes before deleting it:
 * DisruptionTarget=True, reason PreemptionByScheduler, message "<scheduler>: preempting to
 * accommodate a higher priority pod". */
char *serve_disruption_patch_json(const char *scheduler_name, const struct timespec *now);

/* serve_nomination_clear_json: the patch that clears status.nominatedNodeName. */
char *serve_nomination_clear_json(void);

#endif
