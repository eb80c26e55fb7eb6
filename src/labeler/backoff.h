/* backoff.h - capped exponential backoff with jitter for the node-sync retry loop.
 *
 * The delay starts at base_ms, doubles after every failure up to cap_ms, and each delay handed
 * out is drawn from [75 %, 100 %] of the current step so that many nodes failing together do
 * not retry in lockstep. A success resets it. Plain state, no allocation. */
#ifndef LABELER_BACKOFF_H
#define LABELER_BACKOFF_H

struct labeler_backoff {
    long base_ms;      /* first delay */
    long cap_ms;       /* largest delay */
    long step_ms;      /* current step before jitter; 0 after a reset */
    unsigned long rng; /* xorshift state; never 0 */
};

/* labeler_backoff_init sets the limits (base_ms >= 1, cap_ms >= base_ms are enforced) and the
 * jitter seed (any value). */
void labeler_backoff_init(struct labeler_backoff *b, long base_ms, long cap_ms, unsigned long seed);

/* labeler_backoff_next returns the delay to wait before the next attempt, in ms, and moves
 * to the next step. */
long labeler_backoff_next(struct labeler_backoff *b);

/* labeler_backoff_reset starts over from base_ms after a success. */
void labeler_backoff_reset(struct labeler_backoff *b);

#endif
