/* dra_alloc_search.c - the structured allocator's (dra_alloc.h) Allocate, as
 * k8s.io/dynamic-resource-allocation v0.37.2 structured/internal/incubating runs it, step for
 * step: the same order of candidates, the same checks in the same order (so the same CEL error
 * when a selector fails on some device), the same first solution. Here: the releases' feature
 * sets, the scratch, and the search with backtracking (validateDeviceRequest, allocateOne,
 * allocateDevice and its rollback); GatherPools, the checks of one device and explain's
 * verdicts are in the other dra_alloc_*.c (dra_alloc-int.h says which).
 *
 * What the Go code keeps in maps lives in a scratch the caller reuses across calls: per device
 * id the claims allocating it (a bit per claim), reset through a list of the ids touched; the
 * selector results of this call in a small open-addressing table; the counters of each pool. */
#include "sched/dra_alloc-int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dra_features dra_features_default(void)
{
    struct dra_features f = {
        .admin_access = true,
        .prioritized_list = true,
        .partitionable = true,
        .device_taints = true,
        .binding_and_status = true,
        .consumable_capacity = true,
        .fractional_capacity_range = true,
        .compatibility_groups = false,
        .cel_error_names_device = true,
        .capacity_errors_fail = true,
        .extended_resource = true,
        .device_taint_rules = true,
    };
    return f;
}

struct dra_features dra_features_for(int minor)
{
    struct dra_features f = dra_features_default();

    if (minor < 34 || minor >= 37)
        return f;
    f.fractional_capacity_range = false;
    f.cel_error_names_device = false;
    f.device_taint_rules = false;
    f.counter_slices_everywhere = true;
    f.capacity_errors_fail = false;
    f.distinct_by_request = true;
    if (minor >= 36)
        return f;
    f.counter_slices_everywhere = false;
    f.partitionable = false;
    f.device_taints = false;
    f.binding_and_status = false;
    f.consumable_capacity = false;
    f.extended_resource = false;
    return f;
}

/* ---------------------------------------------------------------- Allocate ---- */

struct dra_scratch *dra_scratch_new(void)
{
    return calloc(1, sizeof(struct dra_scratch));
}

void dra_scratch_free(struct dra_scratch *s)
{
    if (!s)
        return;
    free(s->allocating);
    free(s->touched);
    free(s->memo);
    free(s->memo_used);
    free(s->acap);
    free(s->rdall);
    free(s->rdoff);
    free(s->rdoff_flat);
    free(s->cs);
    free(s->cs_flat);
    free(s->pc);
    free(s->selected);
    free(s);
}

enum { ONE_NO = 0, ONE_DONE = 1, ONE_ERR = -1, ONE_MAXSIZE = -2, ONE_NOMEM = -3 };

static const char *devid(const struct alldev *d, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s/%s", d->pool->driver, d->pool->pool, d->device->name);
    return buf;
}

/* ---- scratch helpers ---- */

int dra_scratch_prepare(struct dra_scratch *s, size_t nids)
{
    if (s->nids < nids) {
        uint64_t *a = realloc(s->allocating, nids * sizeof(*a));

        if (!a)
            return -ENOMEM;
        memset(a + s->nids, 0, (nids - s->nids) * sizeof(*a));
        s->allocating = a;
        s->nids = nids;
    }
    if (!s->memo) {
        s->nmemo = 1024;
        s->memo = calloc(s->nmemo, sizeof(*s->memo));
        if (!s->memo)
            return -ENOMEM;
    }
    return 0;
}

void dra_scratch_reset(struct dra_scratch *s)
{
    size_t i;

    for (i = 0; i < s->ntouched; i++)
        s->allocating[s->touched[i]] = 0;
    s->ntouched = 0;
    for (i = 0; i < s->nmemo_used; i++)
        s->memo[s->memo_used[i]].key = 0;
    s->nmemo_used = 0;
    s->used = 0;
    s->nacap = 0;
}

static int mark_allocating(struct alloc *a, uint32_t id, size_t claim)
{
    struct dra_scratch *s = a->s;

    if (id >= s->nids)
        return 0;
    if (!s->allocating[id]) {
        if (s->ntouched == s->ctouched) {
            size_t nc = s->ctouched ? s->ctouched * 2 : 64;
            uint32_t *t = realloc(s->touched, nc * sizeof(*t));

            if (!t)
                return -ENOMEM;
            s->touched = t;
            s->ctouched = nc;
        }
        s->touched[s->ntouched++] = id;
    }
    s->allocating[id] |= (uint64_t)1 << claim;
    return 0;
}

static void unmark_allocating(struct alloc *a, uint32_t id, size_t claim)
{
    if (id < a->s->nids)
        a->s->allocating[id] &= ~((uint64_t)1 << claim);
}

static bool allocating_any(const struct alloc *a, uint32_t id)
{
    return id < a->s->nids && a->s->allocating[id];
}

static bool allocating_for(const struct alloc *a, uint32_t id, size_t claim)
{
    return id < a->s->nids && (a->s->allocating[id] >> claim & 1);
}

static bool device_in_use(const struct alloc *a, uint32_t id)
{
    return (a->state->allocated && a->state->allocated[id]) || allocating_any(a, id);
}

bool dra_capacity_in_use(const struct alloc *a, uint32_t id)
{
    if (a->state->consumed && a->state->consumed[id])
        return true;
    if (a->state->shares && a->state->shares[id])
        return true;
    return acap_find(a, id) != NULL;
}

/* ---- requests ---- */

static struct reqdata *rdata(const struct alloc *a, size_t c, size_t r, size_t sub)
{
    return &a->rdall[a->rdoff[c][r] + sub];
}

/* ---- allocateDevice ---- */

struct rollback {
    bool counters, marked, cap_inserted, cap_existed, result;
    size_t constraints, prev_results;
    struct dra_consumed consumed[16];
    size_t nconsumed;
};

static void acap_remove(struct alloc *a, uint32_t id, const struct dra_consumed *c, size_t n,
                        bool existed)
{
    struct capvec *v = acap_find(a, id);
    size_t i, j;
    bool empty = true;

    if (!v)
        return;
    for (i = 0; i < n; i++)
        for (j = 0; j < v->n; j++)
            if (!strcmp(v->items[j].name, c[i].name))
                v->items[j].q -= c[i].q;
    for (j = 0; j < v->n; j++)
        if (v->items[j].q)
            empty = false;
    if (empty) {
        v->present = false;
        if (existed) {
            /* an earlier share still relies on the entry: keep it, empty */
            v->present = true;
            v->n = 0;
        }
    }
}

static int acap_insert(struct alloc *a, uint32_t id, const struct dra_consumed *c, size_t n,
                       bool *existed)
{
    struct dra_scratch *s = a->s;
    struct capvec *v = acap_find(a, id);
    size_t i, j;

    *existed = v != NULL;
    if (!v) {
        if (s->nacap == s->cacap) {
            size_t nc = s->cacap ? s->cacap * 2 : 16;
            struct capvec *nv = realloc(s->acap, nc * sizeof(*nv));

            if (!nv)
                return -ENOMEM;
            s->acap = nv;
            s->cacap = nc;
        }
        v = &s->acap[s->nacap++];
        memset(v, 0, sizeof(*v));
        v->id = id;
        v->present = true;
    }
    for (i = 0; i < n; i++) {
        for (j = 0; j < v->n; j++)
            if (!strcmp(v->items[j].name, c[i].name)) {
                v->items[j].q += c[i].q;
                break;
            }
        if (j == v->n && v->n < 16)
            v->items[v->n++] = c[i];
    }
    return 0;
}

static void rollback_device(struct alloc *a, size_t c, const struct alldev *dev, const char *base,
                            const char *sub, const struct rollback *st)
{
    size_t i;

    if (st->result)
        a->out[c].n = st->prev_results;
    if (st->cap_inserted)
        acap_remove(a, dev->device->id, st->consumed, st->nconsumed, st->cap_existed);
    if (st->marked)
        unmark_allocating(a, dev->device->id, c);
    for (i = st->constraints; i > 0; i--)
        dra_constraint_remove(&a->cs[c][i - 1], base, sub, a->f->distinct_by_request);
    if (st->counters)
        dra_counters_apply(a, dev->pool, &a->pc[(size_t)(dev->pool - a->pools->pools)], dev->device,
                           -1);
}

/* allocateDevice: 1 allocated (st says how to undo), 0 not, -1 error (msg), -ENOMEM */
static int allocate_device(struct alloc *a, size_t c, size_t r, size_t sub,
                           const struct alldev *dev, bool must, struct rollback *st)
{
    const struct dra_claim *claim = &a->claims[c];
    struct reqdata *rd = rdata(a, c, r, sub);
    const struct dra_request *req = rd->req;
    const struct dra_device *d = dev->device;
    bool multi = false, skip_counters;
    const char *base, *subname = NULL;
    size_t i;
    int rc;

    memset(st, 0, sizeof(*st));
    if (a->f->consumable_capacity)
        multi = d->has_allow_multiple && d->allow_multiple;
    if (!multi && req->admin_access && allocating_for(a, d->id, c))
        return 0;
    if (!req->admin_access && device_in_use(a, d->id))
        return 0;
    if (!a->f->partitionable && d->nconsumes)
        return 0;
    skip_counters = multi && dra_capacity_in_use(a, d->id);
    if (!skip_counters && d->nconsumes) {
        rc = dra_counters_check(a, dev);
        if (rc < 0)
            return rc;
        if (!rc)
            return 0;
        st->counters = true;
    }
    if (rd->parent) {
        base = rd->parent->name;
        subname = req->name;
    } else {
        base = req->name;
    }
    st->prev_results = a->out[c].n;
    if (a->f->device_taints && dra_taint_prevents(d, req)) {
        rollback_device(a, c, dev, base, subname, st);
        return 0;
    }
    for (i = 0; i < claim->nconstraints; i++) {
        rc = dra_constraint_add(&a->cs[c][i], base, subname, d, dev->pool->driver,
                                a->f->distinct_by_request);
        if (rc < 0) {
            rollback_device(a, c, dev, base, subname, st);
            return rc;
        }
        if (!rc) {
            rollback_device(a, c, dev, base, subname, st);
            if (must) {
                char id[600];

                msgf(a->msg, a->msgsize,
                     "claim %s/%s, request %s: cannot add device %s because a claim constraint "
                     "would not be satisfied",
                     claim->ns, claim->name, req->name, devid(dev, id, sizeof(id)));
                return -1;
            }
            return 0;
        }
        st->constraints++;
    }
    if (!multi) {
        if (mark_allocating(a, d->id, c)) {
            rollback_device(a, c, dev, base, subname, st);
            return -ENOMEM;
        }
        st->marked = true;
    }
    if (a->f->consumable_capacity) {
        char inner[512];
        int fits = dra_capacity_fits(a, req, d, true, inner, sizeof(inner));

        if (fits < 0 && !a->f->capacity_errors_fail) {
            rollback_device(a, c, dev, base, subname, st); /* 1.36: not this device */
            return 0;
        }
        if (fits < 0) {
            char id[600];

            rollback_device(a, c, dev, base, subname, st);
            msgf(a->msg, a->msgsize,
                 "claim %s/%s, request %s: rechecking capacity for device %s: %s", claim->ns,
                 claim->name, req->name, devid(dev, id, sizeof(id)), inner);
            return -1;
        }
        if (!fits) {
            rollback_device(a, c, dev, base, subname, st);
            return 0;
        }
        if (multi) {
            for (i = 0; i < d->ncaps && i < 16; i++) {
                kube_nano q;

                dra_consumed_for(dra_req_cap(req, d->caps[i].name), &d->caps[i],
                                 a->f->fractional_capacity_range, &q, inner, sizeof(inner));
                st->consumed[i].name = d->caps[i].name;
                st->consumed[i].q = q;
            }
            st->nconsumed = i;
            if (acap_insert(a, d->id, st->consumed, st->nconsumed, &st->cap_existed)) {
                rollback_device(a, c, dev, base, subname, st);
                return -ENOMEM;
            }
            st->cap_inserted = true;
        }
    }
    if (a->out[c].n >= DRA_RESULTS_MAX) {
        rollback_device(a, c, dev, base, subname, st);
        return 0;
    }
    {
        struct dra_result *res = &a->out[c].results[a->out[c].n++];

        memset(res, 0, sizeof(*res));
        res->request = req->name;
        res->parent_request = rd->parent ? rd->parent->name : NULL;
        res->pool = dev->pool;
        res->slice = dev->slice;
        res->device = d;
        res->admin_access = req->admin_access;
        res->req = req;
        if (multi && a->f->consumable_capacity) {
            res->shared = true;
            for (i = 0; i < st->nconsumed && i < 8; i++)
                res->consumed[i] = st->consumed[i];
            res->nconsumed = i;
        }
        st->result = true;
    }
    return 1;
}

/* ---- allocateOne ---- */

static int allocate_one(struct alloc *a, size_t c, size_t r, size_t sub, int devi, bool in_sub,
                        size_t sp, size_t ss, size_t sd);

static int next_claim(struct alloc *a, size_t c)
{
    int rc = allocate_one(a, c + 1, 0, 0, 0, false, 0, 0, 0);

    return rc == ONE_MAXSIZE ? ONE_NO : rc;
}

static int allocate_one(struct alloc *a, size_t c, size_t r, size_t sub, int devi, bool in_sub,
                        size_t sp, size_t ss, size_t sd)
{
    const struct dra_claim *claim;
    struct reqdata *rd;
    const struct dra_request *req;
    size_t pi;

    if (c >= a->nclaims)
        return ONE_DONE;
    claim = &a->claims[c];
    if (r >= claim->nrequests)
        return next_claim(a, c);
    rd = rdata(a, c, r, sub);
    if (!in_sub && rd->parent) {
        bool all_exceeded = true;
        size_t k;

        for (k = 0; k < claim->requests[r].nsubs; k++) {
            int rc = allocate_one(a, c, r, k, devi, true, 0, 0, 0);

            if (rc == ONE_MAXSIZE)
                continue;
            all_exceeded = false;
            if (rc < 0)
                return rc;
            if (rc == ONE_DONE) {
                a->selected[c * DRA_RESULTS_MAX + r] = (int)k;
                return ONE_DONE;
            }
        }
        return all_exceeded ? ONE_MAXSIZE : ONE_NO;
    }
    req = rd->req;
    if (req->mode == DRA_MODE_ALL && rd->nall == 0)
        return ONE_NO;
    if (devi >= rd->num_devices)
        return allocate_one(a, c, r + 1, 0, 0, false, 0, 0, 0);
    if (rd->num_devices - devi > DRA_RESULTS_MAX - (int)a->out[c].n)
        return ONE_MAXSIZE;
    if (req->mode == DRA_MODE_ALL) {
        struct rollback st;
        int rc = allocate_device(a, c, r, sub, &rd->all[devi], true, &st);

        if (rc == -1)
            return ONE_ERR;
        if (rc < 0)
            return ONE_NOMEM;
        if (!rc)
            return ONE_NO;
        rc = allocate_one(a, c, r, sub, devi + 1, in_sub, 0, 0, 0);
        if (rc != ONE_DONE) {
            rollback_device(a, c, &rd->all[devi], rd->parent ? rd->parent->name : req->name,
                            rd->parent ? req->name : NULL, &st);
            return rc == ONE_DONE ? ONE_NO : rc;
        }
        return ONE_DONE;
    }
    for (pi = sp; pi < a->pools->n; pi++) {
        const struct dra_pool *pool = &a->pools->pools[pi];
        size_t si;

        if (pool->incomplete || pool->invalid)
            continue;
        for (si = pi == sp ? ss : 0; si < pool->ntargeting; si++) {
            const struct dra_slice *slice = pool->targeting[si];
            size_t di;

            for (di = (pi == sp && si == ss) ? sd : 0; di < slice->ndevices; di++) {
                const struct dra_device *d = &slice->devices[di];
                struct alldev dev = {d, slice, pool};
                struct rollback st;
                int rc;

                if (req->admin_access && allocating_for(a, d->id, c))
                    continue;
                if (!req->admin_access && device_in_use(a, d->id))
                    continue;
                rc = dra_is_selectable(a, c, r, sub, rd, slice, d, pool);
                if (rc == -1)
                    return ONE_ERR;
                if (rc < 0)
                    return ONE_NOMEM;
                if (!rc)
                    continue;
                if (a->f->consumable_capacity) {
                    char inner[512];
                    int fits = dra_capacity_fits(a, req, d, true, inner, sizeof(inner));

                    if (fits < 0 && !a->f->capacity_errors_fail)
                        continue; /* 1.36: the device is skipped */
                    if (fits < 0) {
                        char id[600];

                        msgf(a->msg, a->msgsize,
                             "claim %s/%s, request %s: checking capacity for device %s: %s",
                             claim->ns, claim->name, req->name, devid(&dev, id, sizeof(id)), inner);
                        return ONE_ERR;
                    }
                    if (!fits)
                        continue;
                }
                rc = allocate_device(a, c, r, sub, &dev, false, &st);
                if (rc == -1)
                    return ONE_ERR;
                if (rc < 0)
                    return ONE_NOMEM;
                if (!rc)
                    continue;
                rc = allocate_one(a, c, r, sub, devi + 1, in_sub, pi, si, di + 1);
                if (rc == ONE_DONE)
                    return ONE_DONE;
                rollback_device(a, c, &dev, rd->parent ? rd->parent->name : req->name,
                                rd->parent ? req->name : NULL, &st);
                if (rc < 0)
                    return rc;
            }
        }
    }
    return ONE_NO;
}

/* ---- Allocate ---- */

/* validateDeviceRequest: 0, -1 (msg), -ENOMEM */
static int validate_request(struct alloc *a, size_t c, size_t r, size_t sub, struct reqdata *rd)
{
    const struct dra_claim *claim = &a->claims[c];
    const struct dra_request *req = rd->req;
    size_t i, pi;

    if (req->has_derived) {
        msgf(a->msg, a->msgsize,
             "claim %s/%s, request %s: cannot handle request with derived attributes, the "
             "feature is disabled",
             claim->ns, claim->name, req->name);
        return -1;
    }
    for (i = 0; i < req->nsels; i++)
        if (!req->sels[i].expr) {
            msgf(a->msg, a->msgsize,
                 "claim %s/%s, request %s, selector #%zu: CEL expression empty (unsupported "
                 "selector type?)",
                 claim->ns, claim->name, req->name, i);
            return -1;
        }
    if (!a->f->admin_access && req->has_admin_access) {
        msgf(a->msg, a->msgsize,
             "claim %s/%s, request %s: admin access is requested, but the feature is disabled",
             claim->ns, claim->name, req->name);
        return -1;
    }
    if (!req->class_name || !*req->class_name) {
        msgf(a->msg, a->msgsize,
             "claim %s/%s, request %s: missing device class name (unsupported request type?)",
             claim->ns, claim->name, req->name);
        return -1;
    }
    if (!req->class) {
        msgf(a->msg, a->msgsize,
             "claim %s/%s, request %s: could not retrieve device class %s: "
             "deviceclass.resource.k8s.io \"%s\" not found",
             claim->ns, claim->name, req->name, req->class_name, req->class_name);
        return -1;
    }
    switch (req->mode) {
    case DRA_MODE_EXACT:
        rd->num_devices = req->count > INT32_MAX ? INT32_MAX : (int)req->count;
        return 0;
    case DRA_MODE_ALL:
        break;
    default:
        msgf(a->msg, a->msgsize, "claim %s/%s, request %s: unsupported count mode %s", claim->ns,
             claim->name, req->name, nz(req->mode_str));
        return -1;
    }
    for (pi = 0; pi < a->pools->n; pi++) {
        const struct dra_pool *pool = &a->pools->pools[pi];
        size_t si, di;

        if (pool->incomplete || pool->invalid) {
            msgf(a->msg, a->msgsize,
                 "claim %s/%s, request %s: asks for all devices, but resource pool %s/%s is "
                 "currently %s",
                 claim->ns, claim->name, req->name, pool->driver, pool->pool,
                 pool->incomplete ? "being updated" : "invalid");
            return -1;
        }
        for (si = 0; si < pool->ntargeting; si++)
            for (di = 0; di < pool->targeting[si]->ndevices; di++) {
                const struct dra_slice *slice = pool->targeting[si];
                const struct dra_device *d = &slice->devices[di];
                int m = dra_is_selectable(a, c, r, sub, rd, slice, d, pool);

                if (m == -1)
                    return -1;
                if (m < 0)
                    return m;
                if (!m)
                    continue;
                if (a->f->consumable_capacity) {
                    char inner[512];
                    int fits = dra_capacity_fits(a, req, d, !a->f->capacity_errors_fail, inner,
                                                 sizeof(inner));

                    if (fits < 0 && !a->f->capacity_errors_fail)
                        continue; /* 1.36: skipped (and with what the device holds) */
                    if (fits < 0) {
                        msgf(a->msg, a->msgsize,
                             "claim %s/%s, request %s: checking capacity for device %s: %s",
                             claim->ns, claim->name, req->name, d->name, inner);
                        return -1;
                    }
                    if (!fits)
                        continue;
                }
                if (rd->nall == rd->call) {
                    size_t nc = rd->call ? rd->call * 2 : DRA_RESULTS_MAX;
                    struct alldev *nv = realloc(rd->all, nc * sizeof(*nv));

                    if (!nv)
                        return -ENOMEM;
                    rd->all = nv;
                    rd->call = nc;
                }
                rd->all[rd->nall].device = d;
                rd->all[rd->nall].slice = slice;
                rd->all[rd->nall].pool = pool;
                rd->nall++;
            }
    }
    rd->num_devices = (int)rd->nall;
    return 0;
}

void dra_alloc_release(struct alloc *a)
{
    size_t i;

    if (a->rdall) {
        size_t total = 0, c, r;

        for (c = 0; c < a->nclaims; c++)
            for (r = 0; r < a->claims[c].nrequests; r++)
                total += a->claims[c].requests[r].nsubs ? a->claims[c].requests[r].nsubs : 1;
        for (i = 0; i < total; i++)
            free(a->rdall[i].all);
    }
    if (a->cs)
        for (i = 0; i < a->nclaims; i++) {
            size_t k;

            if (!a->cs[i])
                continue;
            for (k = 0; k < a->claims[i].nconstraints; k++) {
                free((void *)a->cs[i][k].values);
                free((void *)a->cs[i][k].keys);
            }
        }
    if (a->pc)
        for (i = 0; i < a->pools->n; i++) {
            free(a->pc[i].avail);
            free(a->pc[i].used);
            free(a->pc[i].off);
        }
}

/* the scratch table *buf of n zeroed elements of size, grown as needed; NULL when out of
 * memory */
void *dra_scratch_table(void **buf, size_t *cap, size_t n, size_t size)
{
    if (n > *cap) {
        size_t nc = n < 16 ? 16 : n * 2;
        void *v = malloc(nc * size);

        if (!v)
            return NULL;
        free(*buf);
        *buf = v;
        *cap = nc;
    }
    memset(*buf, 0, n * size);
    return *buf;
}

/* createNodeSelector */
static void node_selector_of(struct dra_claim_result *res)
{
    size_t i, j;

    res->node_local = false;
    res->nsels = 0;
    for (i = 0; i < res->n; i++) {
        const struct dra_result *x = &res->results[i];
        const struct dra_node_sel *sel = x->slice->per_device ? &x->device->sel : &x->slice->sel;
        bool dup = false;

        if ((sel->node_name && *sel->node_name) || x->device->binds_to_node) {
            res->node_local = true;
            res->nsels = 0;
            return;
        }
        if (!sel->selector)
            continue;
        for (j = 0; j < res->nsels; j++)
            dup |= res->sels[j] == sel->selector;
        if (!dup)
            res->sels[res->nsels++] = sel->selector;
    }
}

int dra_alloc_begin(struct alloc *a, const struct dra_features *f, const char *node_name,
                    struct dra_pools *pools, const struct dra_state *state,
                    const struct dra_claim *claims, size_t nclaims, const struct dra_ops *ops,
                    struct dra_scratch *scratch, struct dra_claim_result *out, char *msg,
                    size_t msgsize)
{
    size_t pi, k, nids = 0;

    memset(a, 0, sizeof(*a));
    a->f = f;
    a->pools = pools;
    a->state = state;
    a->claims = claims;
    a->nclaims = nclaims;
    a->ops = ops;
    a->node_name = node_name;
    a->s = scratch;
    a->out = out;
    a->msg = msg;
    a->msgsize = msgsize;
    if (msg && msgsize)
        msg[0] = '\0';
    if (!pools->ids_known) {
        for (pi = 0; pi < pools->n; pi++)
            for (k = 0; k < pools->pools[pi].ntargeting; k++) {
                const struct dra_slice *sl = pools->pools[pi].targeting[k];
                size_t d;

                for (d = 0; d < sl->ndevices; d++)
                    if (sl->devices[d].id + 1 > nids)
                        nids = sl->devices[d].id + 1;
            }
        pools->ids_end = nids;
        pools->ids_known = true;
    }
    if (dra_scratch_prepare(scratch, pools->ids_end))
        return -ENOMEM;
    dra_scratch_reset(scratch);
    return 0;
}

int dra_allocate(const struct dra_features *f, const char *node_name, struct dra_pools *pools,
                 const struct dra_state *state, const struct dra_claim *claims, size_t nclaims,
                 const struct dra_ops *ops, struct dra_scratch *scratch,
                 struct dra_claim_result *out, char *msg, size_t msgsize)
{
    struct alloc a;
    size_t c, r, k, total = 0, pi;
    size_t *rdoff_flat;
    struct cstate *cs_flat;
    int rc, status = DRA_NOT_ALLOCATED;

    if (nclaims > DRA_CLAIMS_MAX) {
        msgf(msg, msgsize, "cannot allocate more than %d claims at once", DRA_CLAIMS_MAX);
        return DRA_FAILED;
    }
    if (dra_alloc_begin(&a, f, node_name, pools, state, claims, nclaims, ops, scratch, out, msg,
                        msgsize))
        return -ENOMEM;
    for (c = 0; c < nclaims; c++) {
        out[c].n = 0;
        out[c].node_local = false;
        out[c].nsels = 0;
        for (r = 0; r < claims[c].nrequests; r++)
            total += claims[c].requests[r].nsubs ? claims[c].requests[r].nsubs : 1;
    }
    {
        size_t nreq = 0, ncons = 0;

        for (c = 0; c < nclaims; c++) {
            nreq += claims[c].nrequests + 1;
            ncons += claims[c].nconstraints + 1;
        }
        a.rdall = dra_scratch_table(&scratch->rdall, &scratch->crdall, total + 1, sizeof(*a.rdall));
        a.rdoff =
            dra_scratch_table(&scratch->rdoff, &scratch->crdoff, nclaims + 1, sizeof(*a.rdoff));
        a.cs = dra_scratch_table(&scratch->cs, &scratch->ccs, nclaims + 1, sizeof(*a.cs));
        a.pc = dra_scratch_table(&scratch->pc, &scratch->cpc, pools->n + 1, sizeof(*a.pc));
        a.selected = dra_scratch_table(&scratch->selected, &scratch->cselected,
                                       (nclaims + 1) * DRA_RESULTS_MAX, sizeof(*a.selected));
        rdoff_flat = dra_scratch_table(&scratch->rdoff_flat, &scratch->crdoff_flat, nreq + 1,
                                       sizeof(*rdoff_flat));
        cs_flat =
            dra_scratch_table(&scratch->cs_flat, &scratch->ccs_flat, ncons + 1, sizeof(*cs_flat));
        if (!a.rdall || !a.rdoff || !a.cs || !a.pc || !a.selected || !rdoff_flat || !cs_flat) {
            a.rdall = NULL; /* (some table may hold an earlier call's) */
            a.cs = NULL;
            a.pc = NULL;
            rc = -ENOMEM;
            goto out;
        }
    }
    for (k = 0; k < (nclaims + 1) * DRA_RESULTS_MAX; k++)
        a.selected[k] = -1;
    total = 0;
    for (c = 0; c < nclaims; c++) {
        const struct dra_claim *cl = &claims[c];
        int min_claim = 0;

        a.rdoff[c] = rdoff_flat;
        rdoff_flat += cl->nrequests + 1;
        for (r = 0; r < cl->nrequests; r++) {
            const struct dra_claim_request *cr = &cl->requests[r];
            int min_req;

            a.rdoff[c][r] = total;
            if (!f->prioritized_list && cr->first_available) {
                msgf(msg, msgsize,
                     "claim %s/%s, request %s: has subrequests, but the DRAPrioritizedList "
                     "feature is disabled",
                     cl->ns, cl->name, cr->name);
                status = DRA_FAILED;
                rc = 0;
                goto out;
            }
            if (!f->consumable_capacity)
                for (k = 0; k < cr->nsubs; k++)
                    if (cr->subs[k].has_capacity) {
                        if (cr->first_available)
                            msgf(msg, msgsize,
                                 "claim %s/%s, subrequest %s: has capacity requests, but the "
                                 "DRAConsumableCapacity feature is disabled",
                                 cl->ns, cl->name, cr->subs[k].name);
                        else
                            msgf(msg, msgsize,
                                 "claim %s/%s, request %s: has capacity requests, but the "
                                 "DRAConsumableCapacity feature is disabled",
                                 cl->ns, cl->name, cr->name);
                        status = DRA_FAILED;
                        rc = 0;
                        goto out;
                    }
            min_req = cr->first_available ? INT32_MAX : 0;
            for (k = 0; k < (cr->nsubs ? cr->nsubs : 1); k++) {
                struct reqdata *rd = &a.rdall[total + k];

                rd->req = &cr->subs[k];
                rd->parent = cr->first_available ? cr : NULL;
                rc = validate_request(&a, c, r, k, rd);
                if (rc == -1) {
                    status = DRA_FAILED;
                    rc = 0;
                    goto out;
                }
                if (rc < 0)
                    goto out;
                if (cr->first_available) {
                    if (rd->num_devices < min_req)
                        min_req = rd->num_devices;
                } else {
                    min_req = rd->num_devices;
                }
            }
            total += cr->nsubs ? cr->nsubs : 1;
            if (min_req > DRA_RESULTS_MAX - min_claim) {
                msgf(msg, msgsize,
                     "claim %s/%s, request %s: adding %d devices exceeds the claim limit of %d, "
                     "with %d already accounted for",
                     cl->ns, cl->name, cr->name, min_req, DRA_RESULTS_MAX, min_claim);
                status = DRA_FAILED;
                rc = 0;
                goto out;
            }
            min_claim += min_req;
        }
        a.cs[c] = cs_flat;
        cs_flat += cl->nconstraints + 1;
        for (k = 0; k < cl->nconstraints; k++) {
            if (cl->constraints[k].kind == DRA_CONSTRAINT_OTHER) {
                msgf(msg, msgsize,
                     "claim %s/%s, constraint #%zu: empty constraint (unsupported constraint "
                     "type?)",
                     cl->ns, cl->name, k);
                status = DRA_FAILED;
                rc = 0;
                goto out;
            }
            a.cs[c][k].c = &cl->constraints[k];
        }
    }
    rc = allocate_one(&a, 0, 0, 0, 0, false, 0, 0, 0);
    switch (rc) {
    case ONE_NOMEM:
        rc = -ENOMEM;
        goto out;
    case ONE_ERR:
        status = DRA_FAILED;
        break;
    case ONE_MAXSIZE:
        msgf(msg, msgsize, "allocation max size exceeded");
        status = DRA_FAILED;
        break;
    case ONE_NO:
        for (pi = 0; pi < pools->n; pi++)
            if (pools->pools[pi].invalid) {
                msgf(msg, msgsize, "invalid resource pools were encountered");
                status = DRA_NODE_FAILED;
                break;
            }
        break;
    default:
        status = DRA_ALLOCATED;
        for (c = 0; c < nclaims; c++) {
            for (r = 0; r < claims[c].nrequests && r < DRA_RESULTS_MAX; r++)
                out[c].selected[r] = a.selected[c * DRA_RESULTS_MAX + r];
            node_selector_of(&out[c]);
        }
    }
    rc = 0;
out:
    dra_alloc_release(&a);
    return rc < 0 ? rc : status;
}
