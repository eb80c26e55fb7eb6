/* intern.c - strings to dense ids for the scheduling core (see intern-int.h). Open
 * addressing on an FNV-1a hash; every string is also read once as a base-10 int64 (Gt/Lt
 * compare numbers). Also the core's two small shared helpers: a label set in interned form,
 * and the growth of an array. */
#include "sched/intern-int.h"

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
    arena_release(&t->arena);
    free(t->strs);
    free(t->int_ids);
    free(t->int_vals);
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

bool sched_intern_int(const struct sched_intern *t, uint32_t id, int64_t *v)
{
    uint32_t lo = 0, hi = t->nints;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;

        if (t->int_ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == t->nints || t->int_ids[lo] != id)
        return false;
    *v = t->int_vals[lo];
    return true;
}

uint32_t sched_intern_add(struct sched_intern *t, const char *s)
{
    uint32_t id = sched_intern_find(t, s), m, i;
    bool is_int = false;
    int64_t v = 0;
    char *copy;

    if (id != SCHED_NOID)
        return id;
    if ((t->n + 1) * 2 > t->nslots && intern_grow_slots(t))
        return SCHED_NOID;
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 64;
        char **strs = realloc(t->strs, cap * sizeof(*strs));

        if (!strs)
            return SCHED_NOID;
        t->strs = strs;
        t->cap = cap;
    }
    if (!go_parse_int(s, strlen(s), 10, 64, &v, NULL)) {
        if (t->nints == t->cints) {
            uint32_t cap = t->cints ? t->cints * 2 : 16;
            uint32_t *ids = realloc(t->int_ids, cap * sizeof(*ids));
            int64_t *vals;

            if (!ids)
                return SCHED_NOID;
            t->int_ids = ids;
            if (!(vals = realloc(t->int_vals, cap * sizeof(*vals))))
                return SCHED_NOID;
            t->int_vals = vals;
            t->cints = cap;
        }
        is_int = true;
    }
    if (!(copy = arena_strdup(&t->arena, s)))
        return SCHED_NOID;
    id = t->n++;
    t->strs[id] = copy;
    if (is_int) {
        t->int_ids[t->nints] = id;
        t->int_vals[t->nints++] = v;
    }
    m = t->nslots - 1;
    i = hash_str(s) & m;
    while (t->slots[i])
        i = (i + 1) & m;
    t->slots[i] = id + 1;
    return id;
}

/* ---------------------------------------------------------------- labels */

static int cmp_idlabel(const void *a, const void *b)
{
    const struct sched_idlabel *x = a, *y = b;

    return x->key < y->key ? -1 : x->key > y->key;
}

int sched_intern_labels(struct sched_intern *t, const struct kube_labels *l,
                        struct sched_idlabel *out)
{
    size_t i;

    for (i = 0; i < l->n; i++) {
        out[i].key = sched_intern_add(t, l->v[i].key);
        out[i].value = sched_intern_add(t, l->v[i].value);
        if (out[i].key == SCHED_NOID || out[i].value == SCHED_NOID)
            return -ENOMEM;
    }
    qsort(out, l->n, sizeof(*out), cmp_idlabel);
    return 0;
}

int sched_intern_labels_dup(struct sched_intern *t, const struct kube_labels *l,
                            struct sched_idlabel **out, uint32_t *n)
{
    *out = NULL;
    *n = 0;
    if (!l->n)
        return 0;
    if (!(*out = malloc(l->n * sizeof(**out))))
        return -ENOMEM;
    if (sched_intern_labels(t, l, *out)) {
        free(*out);
        *out = NULL;
        return -ENOMEM;
    }
    *n = (uint32_t)l->n;
    return 0;
}

/* ---------------------------------------------------------------- arrays */

int sched_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
    uint32_t n;
    void *p;

    if (need <= *cap)
        return 0;
    n = *cap ? *cap : 4;
    while (n < need)
        n *= 2;
    if (!(p = realloc(*arr, (size_t)n * elem)))
        return -ENOMEM;
    memset((char *)p + (size_t)*cap * elem, 0, (size_t)(n - *cap) * elem);
    *arr = p;
    *cap = n;
    return 0;
}
