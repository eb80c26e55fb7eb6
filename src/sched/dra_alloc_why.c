/* dra_alloc_why.c - dra_why, explain's per-device verdicts: the checks of isSelectable and
 * allocateDevice in their order on each device and request alone, off the search path. */
#include "sched/dra_alloc-int.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* what one device is to one request, alone: the checks of isSelectable and allocateDevice in
 * their order, against what other claims hold (not what this attempt would pick) */
static int why_device(struct alloc *a, size_t c, const struct dra_request *req,
                      const struct alldev *dev, struct dra_why *w)
{
    const struct dra_device *d = dev->device;
    const struct dra_pool *p = dev->pool;
    bool multi;
    size_t i;
    int m;

    w->index = 0;
    w->msg = NULL;
    if (!a->f->binding_and_status && d->nbinding_conditions) {
        w->kind = DRA_WHY_FEATURE_OFF;
        return 0;
    }
    for (i = 0; req->class && i < req->class->nsels; i++) {
        m = dra_claim_selectors_match(a, c, d, p, req->class, req->class->sels + i, 1);
        if (m <= 0) {
            w->kind = m < 0 ? DRA_WHY_CEL_ERROR : DRA_WHY_CLASS_SELECTOR;
            w->index = i;
            w->msg = NULL;
            return 0;
        }
    }
    for (i = 0; i < req->nsels; i++) {
        m = dra_claim_selectors_match(a, c, d, p, NULL, req->sels + i, 1);
        if (m <= 0) {
            w->kind = m < 0 ? DRA_WHY_CEL_ERROR : DRA_WHY_SELECTOR;
            w->index = i;
            w->msg = NULL;
            return 0;
        }
    }
    if (dev->slice->per_device &&
        dra_node_matches(a->ops, a->node_name, &d->sel, a->msg, a->msgsize) <= 0) {
        w->kind = DRA_WHY_NODE;
        return 0;
    }
    multi = a->f->consumable_capacity && d->has_allow_multiple && d->allow_multiple;
    if (!multi && !req->admin_access && a->state->allocated && a->state->allocated[d->id]) {
        w->kind = DRA_WHY_TAKEN;
        return 0;
    }
    if (!a->f->partitionable && d->nconsumes) {
        w->kind = DRA_WHY_FEATURE_OFF;
        return 0;
    }
    if (d->nconsumes && !(multi && dra_capacity_in_use(a, d->id))) {
        m = dra_counters_check(a, dev);
        if (m < 0)
            return m;
        if (!m) {
            w->kind = DRA_WHY_COUNTERS;
            return 0;
        }
        dra_counters_apply(a, p, &a->pc[(size_t)(p - a->pools->pools)], d, -1);
    }
    if (a->f->device_taints && (m = dra_untolerated_taint(d, req)) >= 0) {
        w->kind = DRA_WHY_TAINT;
        w->index = (size_t)m;
        return 0;
    }
    if (a->f->consumable_capacity) {
        char inner[512];

        m = dra_capacity_fits(a, req, d, true, inner, sizeof(inner));
        if (m <= 0) {
            w->kind = DRA_WHY_CAPACITY;
            return 0;
        }
    }
    w->kind = DRA_WHY_FREE;
    return 0;
}

int dra_why(const struct dra_features *f, const char *node_name, struct dra_pools *pools,
            const struct dra_state *state, const struct dra_claim *claims, size_t nclaims,
            const struct dra_ops *ops, struct dra_scratch *scratch,
            void (*cb)(void *ctx, const struct dra_why *w), void *ctx)
{
    struct alloc a;
    char msg[1024];
    size_t c, r, k, pi, si, di;
    int rc = 0;

    /* the pools' counters in the scratch's table, as dra_allocate keeps them (alloc_release
     * frees what they hold, not the table) */
    if (dra_alloc_begin(&a, f, node_name, pools, state, claims, nclaims, ops, scratch, NULL, msg,
                        sizeof(msg)) ||
        !(a.pc = dra_scratch_table(&scratch->pc, &scratch->cpc, pools->n + 1, sizeof(*a.pc))))
        return -ENOMEM;
    for (pi = 0; pi < pools->n; pi++) {
        struct dra_why w;

        if (!pools->pools[pi].incomplete && !pools->pools[pi].invalid)
            continue;
        memset(&w, 0, sizeof(w));
        w.claim = SIZE_MAX;
        w.pool = &pools->pools[pi];
        w.kind = pools->pools[pi].incomplete ? DRA_WHY_POOL_INCOMPLETE : DRA_WHY_POOL_INVALID;
        w.msg = pools->pools[pi].invalid_reason;
        cb(ctx, &w);
    }
    for (c = 0; c < nclaims && !rc; c++)
        for (r = 0; r < claims[c].nrequests && !rc; r++)
            for (k = 0; k < claims[c].requests[r].nsubs && !rc; k++) {
                const struct dra_request *req = &claims[c].requests[r].subs[k];

                for (pi = 0; pi < pools->n && !rc; pi++) {
                    const struct dra_pool *pool = &pools->pools[pi];

                    if (pool->incomplete || pool->invalid)
                        continue;
                    for (si = 0; si < pool->ntargeting && !rc; si++)
                        for (di = 0; di < pool->targeting[si]->ndevices && !rc; di++) {
                            struct alldev dev = {&pool->targeting[si]->devices[di],
                                                 pool->targeting[si], pool};
                            struct dra_why w;

                            memset(&w, 0, sizeof(w));
                            w.claim = c;
                            w.request = r;
                            w.sub = k;
                            w.req = req;
                            w.pool = pool;
                            w.device = dev.device;
                            msg[0] = '\0';
                            rc = why_device(&a, c, req, &dev, &w);
                            if (!rc)
                                cb(ctx, &w);
                        }
                }
            }
    dra_alloc_release(&a);
    return rc;
}
