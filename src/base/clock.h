/* clock.h - the monotonic clock, and waits and sleeps measured on it.
 *
 * Every timeout, period and deadline of the programs is read from CLOCK_MONOTONIC, which a
 * step of the wall clock (NTP, date -s) does not move. A condition variable made with
 * mono_cond_init waits on that clock too, up to an absolute deadline, so a wait neither ends
 * early nor hangs when the wall clock jumps. Wall-clock time (timestamps written to the API,
 * log lines) is not this module's business. */
#ifndef BASE_CLOCK_H
#define BASE_CLOCK_H

#include <pthread.h>
#include <stdint.h>

/* mono_ms returns the monotonic clock in milliseconds. */
int64_t mono_ms(void);

/* mono_now returns the monotonic clock in seconds, with the clock's full resolution. */
double mono_now(void);

/* mono_sleep_until sleeps until mono_now() reaches t (seconds); returns at once when it has.
 * Signals do not cut the sleep short. */
void mono_sleep_until(double t);

/* mono_sleep_ms sleeps ms milliseconds on the monotonic clock (up to a deadline taken when
 * called); returns at once for ms <= 0. Signals do not cut the sleep short. */
void mono_sleep_ms(int64_t ms);

/* mono_cond_init initialises cv to wait on the monotonic clock (pthread_condattr_setclock).
 * Returns 0 or a negative errno-style code. Destroy it with pthread_cond_destroy. */
int mono_cond_init(pthread_cond_t *cv);

/* mono_cond_wait_until waits on cv (made by mono_cond_init; the caller holds mu) until it
 * is signalled or mono_ms() reaches deadline_ms. Returns 0 when woken (spuriously too: the
 * caller re-checks its condition) or -ETIMEDOUT at the deadline. */
int mono_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline_ms);

#endif
