/* profile.c - the scheduling profiles, node sampling's arithmetic and the tie-break generator
 * (see profile.h). */
#include "sched/profile.h"

#include <string.h>

#include "sched/profile-int.h"

#define BUILTIN_SCORES                                                                             \
    .w_taint = 3, .w_affinity = 2, .w_fit = 1, .w_balanced = 1, .w_spread = 2, .w_interpod = 2,    \
    .w_image = 1, .fit_strategy = SCHED_FIT_LEAST_ALLOCATED, .nfit_resources = 2,                  \
    .fit_resources = {{"cpu", 1}, {"memory", 1}}

const struct sched_profile sched_profile_default = {
    .name = "default",
    .gpu_aware = false,
    .gpu_resource = "nvidia.com/gpu",
    .gpu_weight = 0,
    .taint_wording = SCHED_TAINT_WORDING_GENERIC,
    .percentage_of_nodes_to_score = 100,
    BUILTIN_SCORES,
};

const struct sched_profile sched_profile_gpu = {
    .name = "gpu",
    .gpu_aware = true,
    .gpu_resource = "nvidia.com/gpu",
    .gpu_weight = 10,
    .taint_wording = SCHED_TAINT_WORDING_GENERIC,
    .percentage_of_nodes_to_score = 100,
    BUILTIN_SCORES,
};

/* same_name: strcmp(s, lit) == 0, inline (sched_profile_fit_default is asked for every node a
 * cycle scores) */
static inline bool same_name(const char *s, const char *lit)
{
    while (*lit && *s == *lit)
        s++, lit++;
    return *s == *lit;
}

bool sched_profile_fit_default(const struct sched_profile *p)
{
    return !p || (p->fit_strategy == SCHED_FIT_LEAST_ALLOCATED && p->nfit_resources == 2 &&
                  same_name(p->fit_resources[0].name, "cpu") && p->fit_resources[0].weight == 1 &&
                  same_name(p->fit_resources[1].name, "memory") && p->fit_resources[1].weight == 1);
}

/* FNV-1a over the bytes of v */
static uint64_t fnv(uint64_t h, const void *v, size_t n)
{
    const unsigned char *b = v;

    while (n--)
        h = (h ^ *b++) * 0x100000001b3ull;
    return h;
}

uint64_t sched_profile_score_key(const struct sched_profile *p)
{
    uint64_t h = 0xcbf29ce484222325ull;
    int32_t gw;
    uint32_t i;

    if (!p)
        p = &sched_profile_default;
    gw = p->gpu_aware ? p->gpu_weight : 0;
    h = fnv(h, &p->w_fit, sizeof(p->w_fit));
    h = fnv(h, &p->w_balanced, sizeof(p->w_balanced));
    h = fnv(h, &gw, sizeof(gw));
    h = fnv(h, &p->fit_strategy, sizeof(p->fit_strategy));
    for (i = 0; i < p->nfit_resources; i++) {
        h = fnv(h, p->fit_resources[i].name, strlen(p->fit_resources[i].name) + 1);
        h = fnv(h, &p->fit_resources[i].weight, sizeof(p->fit_resources[i].weight));
    }
    h = fnv(h, &p->nfit_resources, sizeof(p->nfit_resources));
    if (p->fit_strategy == SCHED_FIT_REQUESTED_TO_CAPACITY_RATIO)
        h = fnv(h, p->shape, p->nshape * sizeof(p->shape[0]));
    return h;
}

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
