/* intern.c - strings to dense ids for the scheduling core (see intern.h). Open addressing
 * on an FNV-1a hash; every string is also read once as a base-10 int64 (Gt/Lt compare
 * numbers). */
#include "sched/intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/goparse.h"
#include "sched/sched-int.h"

/* ---------------------------------------------------------------- interning */

uint32_t sched_hash_bytes(const void *p, size_t n, uint32_t h)
{
    const unsigned char *b = p;
    size_t i;

    for (i = 0; i < n; i++) {
        h ^= b[i];
        h *= 16777619u;
    }
    return h;
}

static uint32_t hash_str(const char *s)
{
    return sched_hash_bytes(s, strlen(s), 2166136261u);
}

int sched_intern_init(struct sched_intern *t)
{
    memset(t, 0, sizeof(*t));
    t->nslots = 256;
    t->slots = calloc(t->nslots, sizeof(*t->slots));
    return t->slots ? 0 : -ENOMEM;
}

void sched_intern_release(struct sched_intern *t)
{
    arena_free(&t->arena);
    free(t->strs);
    free(t->ival);
    free(t->ival_ok);
    free(t->slots);
    memset(t, 0, sizeof(*t));
}

uint32_t sched_intern_find(const struct sched_intern *t, const char *s)
{
    uint32_t m = t->nslots - 1, i = hash_str(s) & m;

    while (t->slots[i]) {
        uint32_t id = t->slots[i] - 1;
        if (!strcmp(t->strs[id], s))
            return id;
        i = (i + 1) & m;
    }
    return SCHED_NOID;
}

static int intern_grow_slots(struct sched_intern *t)
{
    uint32_t n = t->nslots * 2, i, m = n - 1;
    uint32_t *s = calloc(n, sizeof(*s));

    if (!s)
        return -ENOMEM;
    for (i = 0; i < t->n; i++) {
        uint32_t j = hash_str(t->strs[i]) & m;
        while (s[j])
            j = (j + 1) & m;
        s[j] = i + 1;
    }
    free(t->slots);
    t->slots = s;
    t->nslots = n;
    return 0;
}

uint32_t sched_intern_add(struct sched_intern *t, const char *s)
{
    uint32_t id = sched_intern_find(t, s), m, i;
    char *copy;

    if (id != SCHED_NOID)
        return id;
    if ((t->n + 1) * 2 > t->nslots && intern_grow_slots(t))
        return SCHED_NOID;
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 64;
        char **strs = realloc(t->strs, cap * sizeof(*strs));
        int64_t *iv;
        bool *ok;

        if (!strs)
            return SCHED_NOID;
        t->strs = strs;
        if (!(iv = realloc(t->ival, cap * sizeof(*iv))))
            return SCHED_NOID;
        t->ival = iv;
        if (!(ok = realloc(t->ival_ok, cap * sizeof(*ok))))
            return SCHED_NOID;
        t->ival_ok = ok;
        t->cap = cap;
    }
    if (!(copy = arena_strdup(&t->arena, s)))
        return SCHED_NOID;
    id = t->n++;
    t->strs[id] = copy;
    t->ival_ok[id] = !go_parse_int(s, strlen(s), 10, 64, &t->ival[id], NULL);
    m = t->nslots - 1;
    i = hash_str(s) & m;
    while (t->slots[i])
        i = (i + 1) & m;
    t->slots[i] = id + 1;
    return id;
}
