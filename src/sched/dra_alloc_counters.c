/* dra_alloc_counters.c - the counters that partitionable devices consume from their pool's
 * counter sets (checkAvailableCounters): per pool what allocated devices left and what this
 * call uses, each device's consumption resolved once into a table (p->cons). */
#include "sched/dra_alloc-int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* the counters each device of a pool consumes, resolved to the index of (set, counter) in
 * the pool's flat counter vector: entries [start[k], start[k + 1]) are device k's, devices
 * numbered over the targeting then the not-targeting slices */
struct cons_entry {
    size_t idx;
    kube_nano value;
};

struct dra_cons_table {
    size_t *slice_base; /* per targeting then not-targeting slice: its first device's number */
    size_t *start;
    struct cons_entry *e;
    bool none; /* too large to tabulate: resolve by name */
};

/* pools with more devices than this resolve counters by name on each use */
#define CONS_TABLE_MAX_DEVICES 16384

void dra_cons_table_free(struct dra_cons_table *t)
{
    if (!t)
        return;
    free(t->slice_base);
    free(t->start);
    free(t->e);
    free(t);
}

/* IsDeviceAllocated: exclusively, as a share, or with consumed capacity */
static bool device_allocated(const struct alloc *a, uint32_t id)
{
    return (a->state->allocated && a->state->allocated[id]) ||
           (a->state->shares && a->state->shares[id]) ||
           (a->state->consumed && a->state->consumed[id]);
}

static const struct dra_slice *pool_slice(const struct dra_pool *p, size_t i)
{
    return i < p->ntargeting ? p->targeting[i] : p->not_targeting[i - p->ntargeting];
}

/* the pool's table of consumed counters (p->cons), built on first use; NULL when too large
 * (resolve by name), or with *oom set */
static const struct dra_cons_table *cons_table(struct dra_pool *p, const size_t *off, bool *oom)
{
    size_t nsl = p->ntargeting + p->nnot_targeting, ndev = 0, ne = 0, dn, i, j, m, q, si, ci;
    struct dra_cons_table *t;
    int pass;

    if (p->cons)
        return p->cons->none ? NULL : p->cons;
    if (!(t = calloc(1, sizeof(*t)))) {
        *oom = true;
        return NULL;
    }
    for (i = 0; i < nsl; i++)
        ndev += pool_slice(p, i)->ndevices;
    if (ndev > CONS_TABLE_MAX_DEVICES) {
        t->none = true;
        p->cons = t;
        return NULL;
    }
    t->slice_base = calloc(nsl + 1, sizeof(*t->slice_base));
    t->start = calloc(ndev + 1, sizeof(*t->start));
    if (!t->slice_base || !t->start)
        goto oom;
    for (pass = 0; pass < 2; pass++) {
        ne = 0;
        dn = 0;
        for (i = 0; i < nsl; i++) {
            const struct dra_slice *sl = pool_slice(p, i);

            t->slice_base[i] = dn;
            for (j = 0; j < sl->ndevices; j++) {
                const struct dra_device *d = &sl->devices[j];

                t->start[dn++] = ne;
                for (m = 0; m < d->nconsumes; m++) {
                    for (si = 0; si < p->nsets; si++)
                        if (!strcmp(p->sets[si]->name, d->consumes[m].counter_set))
                            break;
                    if (si == p->nsets)
                        continue;
                    for (q = 0; q < d->consumes[m].ncounters; q++)
                        for (ci = 0; ci < p->sets[si]->ncounters; ci++)
                            if (!strcmp(p->sets[si]->counters[ci].name,
                                        d->consumes[m].counters[q].name)) {
                                if (pass)
                                    t->e[ne] = (struct cons_entry){
                                        off[si] + ci, d->consumes[m].counters[q].value};
                                ne++;
                            }
                }
            }
        }
        t->start[dn] = ne;
        if (!pass && !(t->e = malloc((ne + 1) * sizeof(*t->e))))
            goto oom;
    }
    p->cons = t;
    return t;
oom:
    dra_cons_table_free(t);
    *oom = true;
    return NULL;
}

/* device d's entries in the table: [*b, *e), false when d is not one of the pool's */
static bool cons_range(const struct dra_pool *p, const struct dra_device *d, size_t *b, size_t *e)
{
    const struct dra_cons_table *t = p->cons;
    size_t nsl = p->ntargeting + p->nnot_targeting, i;

    if (!t || t->none)
        return false;
    for (i = 0; i < nsl; i++) {
        const struct dra_slice *sl = pool_slice(p, i);
        uintptr_t lo = (uintptr_t)sl->devices, x = (uintptr_t)d;

        if (x >= lo && x < lo + sl->ndevices * sizeof(*d)) {
            size_t k = t->slice_base[i] + (x - lo) / sizeof(*d);

            *b = t->start[k];
            *e = t->start[k + 1];
            return true;
        }
    }
    return false;
}

/* add sign times device d's consumption to arr (per set and counter, a set's first counter at
 * off[set]): through the pool's table when it has one, else by the names */
static void consumes_add(const struct dra_pool *p, const size_t *off, const struct dra_device *d,
                         kube_nano *arr, int sign)
{
    size_t m, q, si, ci, b, e;

    if (cons_range(p, d, &b, &e)) {
        for (; b < e; b++)
            arr[p->cons->e[b].idx] += sign * p->cons->e[b].value;
        return;
    }
    for (m = 0; m < d->nconsumes; m++) {
        for (si = 0; si < p->nsets; si++)
            if (!strcmp(p->sets[si]->name, d->consumes[m].counter_set))
                break;
        if (si == p->nsets)
            continue;
        for (q = 0; q < d->consumes[m].ncounters; q++)
            for (ci = 0; ci < p->sets[si]->ncounters; ci++)
                if (!strcmp(p->sets[si]->counters[ci].name, d->consumes[m].counters[q].name))
                    arr[off[si] + ci] += sign * d->consumes[m].counters[q].value;
    }
}

static struct pool_counters *counters_of(struct alloc *a, const struct dra_pool *cp)
{
    size_t pi = (size_t)(cp - a->pools->pools), i, j, k, total = 0;
    struct dra_pool *p = &a->pools->pools[pi];
    struct pool_counters *pc = &a->pc[pi];
    bool oom = false;

    if (pc->ready)
        return pc;
    for (i = 0; i < p->nsets; i++)
        total += p->sets[i]->ncounters;
    pc->off = calloc(p->nsets + 1, sizeof(*pc->off));
    pc->avail = calloc(total + 1, sizeof(*pc->avail));
    pc->used = calloc(total + 1, sizeof(*pc->used));
    if (!pc->off || !pc->avail || !pc->used)
        return NULL;
    total = 0;
    for (i = 0; i < p->nsets; i++) {
        pc->off[i] = total;
        for (j = 0; j < p->sets[i]->ncounters; j++)
            pc->avail[total + j] = p->sets[i]->counters[j].value;
        total += p->sets[i]->ncounters;
    }
    cons_table(p, pc->off, &oom);
    if (oom)
        return NULL;
    /* counters consumed by allocated devices, on the node or not */
    for (k = 0; k < 2; k++) {
        const struct dra_slice *const *sl = k ? p->not_targeting : p->targeting;
        size_t n = k ? p->nnot_targeting : p->ntargeting;

        for (i = 0; i < n; i++)
            for (j = 0; j < sl[i]->ndevices; j++) {
                const struct dra_device *d = &sl[i]->devices[j];

                if (d->nconsumes && device_allocated(a, d->id))
                    consumes_add(p, pc->off, d, pc->avail, -1);
            }
    }
    pc->ready = true;
    return pc;
}

/* add (sign 1) or remove (-1) a device's consumption */
void dra_counters_apply(struct alloc *a, const struct dra_pool *p, struct pool_counters *pc,
                        const struct dra_device *d, int sign)
{
    (void)a;
    consumes_add(p, pc->off, d, pc->used, sign);
}

/* checkAvailableCounters: 1 ok (reserved), 0 not enough, -ENOMEM */
int dra_counters_check(struct alloc *a, const struct alldev *dev)
{
    struct pool_counters *pc = counters_of(a, dev->pool);
    size_t i, total = 0;

    if (!pc)
        return -ENOMEM;
    dra_counters_apply(a, dev->pool, pc, dev->device, 1);
    for (i = 0; i < dev->pool->nsets; i++)
        total += dev->pool->sets[i]->ncounters;
    for (i = 0; i < total; i++)
        if (pc->avail[i] < pc->used[i]) {
            dra_counters_apply(a, dev->pool, pc, dev->device, -1);
            return 0;
        }
    return 1;
}
