/* profile.c - the scheduling profiles, node sampling's arithmetic and the tie-break generator
 * (see profile.h). */
#include "sched/profile.h"

#include <string.h>

const struct sched_profile sched_profile_default = {
    "default", false, "nvidia.com/gpu", 0, SCHED_TAINT_WORDING_GENERIC, 100};

const struct sched_profile sched_profile_gpu = {
    "gpu", true, "nvidia.com/gpu", 10, SCHED_TAINT_WORDING_GENERIC, 100};

const struct sched_profile *sched_profile_find(const char *name)
{
    if (name && !strcmp(name, "default"))
        return &sched_profile_default;
    if (name && !strcmp(name, "gpu"))
        return &sched_profile_gpu;
    return NULL;
}

void sched_rng_seed(struct sched_rng *r, uint64_t seed)
{
    r->state = seed;
    r->follow_node = NULL;
    r->follow_preempt = NULL;
}

static uint64_t rng_next(struct sched_rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t sched_rng_below(struct sched_rng *r, uint64_t n)
{
    /* rejection sampling keeps the choice uniform */
    uint64_t lim = UINT64_MAX - UINT64_MAX % n, v;

    do
        v = rng_next(r);
    while (v >= lim);
    return v % n;
}

/* ---------------------------------------------------------------- node sampling */

bool sched_sampling_on(const struct sched_profile *p)
{
    return p && p->percentage_of_nodes_to_score < 100;
}

uint32_t sched_num_feasible_nodes_to_find(int32_t percentage, uint32_t nnodes)
{
    uint64_t pct, n;

    if (nnodes < 100 || percentage >= 100)
        return nnodes;
    pct = percentage > 0 ? (uint64_t)percentage : 0;
    if (!pct) {
        /* adaptive: 50% of 100 nodes down to 10% of 5,000 and 5% from 5,625 on */
        int64_t a = 50 - (int64_t)(nnodes / 125);
        pct = a < 5 ? 5 : (uint64_t)a;
    }
    n = (uint64_t)nnodes * pct / 100;
    return n < 100 ? 100 : (uint32_t)n;
}
