/* duration.h - Go-style durations ("30s", "1m30s", "500ms", "1.5h") for --sleep-interval. */
#ifndef LABELER_DURATION_H
#define LABELER_DURATION_H

#include "base/err.h"

/* labeler_duration_parse reads s as a sequence of decimal numbers with units (ns, us, µs, ms,
 * s, m, h) into whole milliseconds. A bare "0" is 0. Fails with -EINVAL (err says why) on
 * anything else, on overflow (more than 100 days) and on a non-zero duration under 1ms. */
int labeler_duration_parse(const char *s, long *ms, struct err *err);

#endif
