/* backoff.c - capped exponential backoff with jitter; see backoff.h. */
#include "labeler/backoff.h"

void labeler_backoff_init(struct labeler_backoff *b, long base_ms, long cap_ms, unsigned long seed)
{
    b->base_ms = base_ms < 1 ? 1 : base_ms;
    b->cap_ms = cap_ms < b->base_ms ? b->base_ms : cap_ms;
    b->step_ms = 0;
    b->rng = seed ? seed : 0x9e3779b97f4a7c15ul;
}

void labeler_backoff_reset(struct labeler_backoff *b)
{
    b->step_ms = 0;
}

static unsigned long backoff_rand(struct labeler_backoff *b)
{
    unsigned long x = b->rng;

    /* xorshift: quality is irrelevant here, only spreading retries apart */
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    if (!x)
        x = 1;
    b->rng = x;
    return x;
}

long labeler_backoff_next(struct labeler_backoff *b)
{
    long step, quarter;

    if (!b->step_ms)
        b->step_ms = b->base_ms;
    else if (b->step_ms > b->cap_ms / 2)
        b->step_ms = b->cap_ms;
    else
        b->step_ms *= 2;
    step = b->step_ms;
    quarter = step / 4;
    if (quarter > 0)
        step -= (long)(backoff_rand(b) % (unsigned long)(quarter + 1));
    return step < 1 ? 1 : step;
}
