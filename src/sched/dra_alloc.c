/* dra_alloc.c - the structured allocator (see dra_alloc.h): GatherPools and Allocate of
 * k8s.io/dynamic-resource-allocation v0.37.2 structured/internal/incubating, step for step:
 * the same pools, the same order of candidates, the same checks in the same order (so the
 * same CEL error when a selector fails on some device), the same first solution.
 *
 * What the Go code keeps in maps lives in a scratch the caller reuses across calls: per device
 * id the claims allocating it (a bit per claim), reset through a list of the ids touched; the
 * selector results of this call in a small open-addressing table; the counters of each pool. */
#include "sched/dra_alloc.h"

#include <errno.h>
#include <stdarg.h>
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

static const char *nz(const char *s)
{
    return s ? s : "";
}

bool dra_tolerates(const struct dra_toleration *t, const struct dra_taint *taint)
{
    const char *op = nz(t->op);

    if (*nz(t->effect) && strcmp(t->effect, nz(taint->effect)))
        return false;
    if (*nz(t->key) && strcmp(t->key, nz(taint->key)))
        return false;
    if (!*op || !strcmp(op, "Equal"))
        return !strcmp(nz(t->value), nz(taint->value));
    return !strcmp(op, "Exists");
}

void dra_enhance_runtime_error(char *msg, size_t size)
{
    static const char hint[] = ". consider using CEL optional chaining (.? followed by orValue()) "
                               "or guarding the check with has() for optional fields";
    size_t n = strlen(msg);

    if (!strstr(msg, "no such key:") || n + 1 >= size)
        return;
    snprintf(msg + n, size - n, "%s", hint);
}

static void msgf(char *msg, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void msgf(char *msg, size_t size, const char *fmt, ...)
{
    va_list ap;

    if (!msg || !size)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
}

/* NodeMatches: a node name, all nodes, or a node selector; nothing set matches nothing.
 * 1, 0, or -1 with msg. */
static int node_matches(const struct dra_ops *ops, const char *node_name,
                        const struct dra_node_sel *sel, char *msg, size_t size)
{
    char inner[512];
    int rc;

    if (sel->node_name && *sel->node_name)
        return !strcmp(sel->node_name, node_name);
    if (sel->all_nodes)
        return 1;
    if (!sel->selector)
        return 0;
    inner[0] = '\0';
    rc = ops->node_selector_matches(ops->ctx, sel->selector, inner, sizeof(inner));
    if (rc < 0)
        msgf(msg, size, "failed to parse node selector: %s", inner);
    return rc;
}

/* ---------------------------------------------------------------- GatherPools ---- */

struct gpool {
    const char *driver, *pool;
    const struct dra_slice **sl; /* the relevant slices of the newest generation seen */
    size_t n, cap;
};

static int push_slice(const struct dra_slice ***v, size_t *n, size_t *cap,
                      const struct dra_slice *s)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        const struct dra_slice **nv = realloc((void *)*v, nc * sizeof(**v));

        if (!nv)
            return -ENOMEM;
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = s;
    return 0;
}

static bool slice_compat_groups(const struct dra_slice *s)
{
    size_t i;

    for (i = 0; i < s->ndevices; i++)
        if (s->devices[i].compat_groups)
            return true;
    return false;
}

static bool slice_has_sel(const struct dra_slice *s)
{
    return (s->sel.node_name && *s->sel.node_name) || s->sel.all_nodes || s->sel.selector;
}

/* addSlice: a newer generation replaces the slices seen, an older one is ignored */
static int add_slice(struct gpool **pools, size_t *npools, size_t *cpools,
                     const struct dra_slice *s)
{
    size_t i;
    struct gpool *p = NULL;

    for (i = 0; i < *npools; i++)
        if (!strcmp((*pools)[i].driver, s->driver) && !strcmp((*pools)[i].pool, s->pool)) {
            p = &(*pools)[i];
            break;
        }
    if (!p) {
        if (*npools == *cpools) {
            size_t nc = *cpools ? *cpools * 2 : 8;
            struct gpool *np = realloc(*pools, nc * sizeof(*np));

            if (!np)
                return -ENOMEM;
            *pools = np;
            *cpools = nc;
        }
        p = &(*pools)[(*npools)++];
        memset(p, 0, sizeof(*p));
        p->driver = s->driver;
        p->pool = s->pool;
        return push_slice(&p->sl, &p->n, &p->cap, s);
    }
    if (s->generation < p->sl[0]->generation)
        return 0;
    if (s->generation > p->sl[0]->generation)
        p->n = 0;
    return push_slice(&p->sl, &p->n, &p->cap, s);
}

static int cmp_slice_name(const void *a, const void *b)
{
    const struct dra_slice *x = *(const struct dra_slice *const *)a;
    const struct dra_slice *y = *(const struct dra_slice *const *)b;

    return strcmp(x->name, y->name);
}

static int cmp_pool(const void *a, const void *b)
{
    const struct dra_pool *x = a, *y = b;
    int c = strcmp(x->driver, y->driver);

    return c ? c : strcmp(x->pool, y->pool);
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);

    if (d)
        memcpy(d, s, n);
    return d;
}

static int pool_invalid(struct dra_pool *p, const char *reason)
{
    p->invalid = true;
    p->invalid_reason = xstrdup(reason);
    return p->invalid_reason ? 0 : -ENOMEM;
}

static const struct dra_counter_set *find_set(const struct dra_pool *p, const char *name)
{
    size_t i;

    for (i = 0; i < p->nsets; i++)
        if (!strcmp(p->sets[i]->name, name))
            return p->sets[i];
    return NULL;
}

/* validateDeviceCounterConsumption over some slices */
static int check_consumption(struct dra_pool *p, const struct dra_slice *const *sl, size_t n)
{
    size_t i, j, k, m;

    for (i = 0; i < n; i++)
        for (j = 0; j < sl[i]->ndevices; j++) {
            const struct dra_device *d = &sl[i]->devices[j];

            for (k = 0; k < d->nconsumes; k++) {
                const struct dra_counter_set *cs = find_set(p, d->consumes[k].counter_set);

                if (!cs) {
                    char buf[512];

                    snprintf(buf, sizeof(buf), "counter set %s not found",
                             d->consumes[k].counter_set);
                    return pool_invalid(p, buf);
                }
                for (m = 0; m < d->consumes[k].ncounters; m++) {
                    size_t q;
                    bool found = false;

                    for (q = 0; q < cs->ncounters && !found; q++)
                        found = !strcmp(cs->counters[q].name, d->consumes[k].counters[m].name);
                    if (!found) {
                        char buf[512];

                        snprintf(buf, sizeof(buf), "counter %s not found in counter set %s",
                                 d->consumes[k].counters[m].name, cs->name);
                        return pool_invalid(p, buf);
                    }
                }
            }
        }
    return 0;
}

/* buildPool: the relevant slices sorted by name, split into device and counter-set slices;
 * all (when the pool was completed from every slice) adds the slices not targeting the node.
 * Duplicate device or counter-set names, and consumed counters no set has, make it invalid. */
static int build_pool(struct dra_pool *p, const struct gpool *g, const struct dra_slice **all,
                      size_t nall, const struct dra_features *f)
{
    const struct dra_slice **sets_sl = NULL;
    size_t nsets_sl = 0, csets_sl = 0, tcap = 0, ncap = 0, i, j, k;
    int rc = 0;

    memset(p, 0, sizeof(*p));
    p->driver = g->driver;
    p->pool = g->pool;
    qsort((void *)g->sl, g->n, sizeof(*g->sl), cmp_slice_name);
    for (i = 0; i < g->n; i++) {
        if (f->partitionable && g->sl[i]->ncounter_sets)
            rc = push_slice(&sets_sl, &nsets_sl, &csets_sl, g->sl[i]);
        else
            rc = push_slice(&p->targeting, &p->ntargeting, &tcap, g->sl[i]);
        if (rc)
            goto out;
    }
    if (all && g->n < nall) {
        for (i = 0; i < nall; i++) {
            bool seen = false;

            for (j = 0; j < g->n && !seen; j++)
                seen = !strcmp(g->sl[j]->name, all[i]->name);
            if (seen)
                continue;
            if (f->partitionable && all[i]->ncounter_sets)
                rc = push_slice(&sets_sl, &nsets_sl, &csets_sl, all[i]);
            else
                rc = push_slice(&p->not_targeting, &p->nnot_targeting, &ncap, all[i]);
            if (rc)
                goto out;
        }
    }
    /* validateDeviceNames, of the device slices targeting the node */
    for (i = 0; i < p->ntargeting; i++)
        for (j = 0; j < p->targeting[i]->ndevices; j++) {
            const char *name = p->targeting[i]->devices[j].name;
            size_t a, b;

            for (a = 0; a <= i; a++)
                for (b = 0; b < (a == i ? j : p->targeting[a]->ndevices); b++)
                    if (!strcmp(p->targeting[a]->devices[b].name, name)) {
                        char buf[512];

                        snprintf(buf, sizeof(buf), "duplicate device name %s", name);
                        rc = pool_invalid(p, buf);
                        goto out;
                    }
        }
    if (!f->partitionable)
        goto out;
    {
        size_t nsets = 0;

        for (i = 0; i < nsets_sl; i++)
            nsets += sets_sl[i]->ncounter_sets;
        if (nsets) {
            p->sets = malloc(nsets * sizeof(*p->sets));
            if (!p->sets) {
                rc = -ENOMEM;
                goto out;
            }
        }
        for (i = 0; i < nsets_sl; i++)
            for (k = 0; k < sets_sl[i]->ncounter_sets; k++) {
                const struct dra_counter_set *cs = &sets_sl[i]->counter_sets[k];

                if (find_set(p, cs->name)) {
                    char buf[512];

                    snprintf(buf, sizeof(buf), "duplicate counter set name %s", cs->name);
                    rc = pool_invalid(p, buf);
                    goto out;
                }
                p->sets[p->nsets++] = cs;
            }
    }
    rc = check_consumption(p, p->targeting, p->ntargeting);
    if (!rc && !p->invalid)
        rc = check_consumption(p, p->not_targeting, p->nnot_targeting);
out:
    free((void *)sets_sl);
    if (!rc && p->invalid) {
        /* an invalid pool keeps only its ID and reason */
        free((void *)p->targeting);
        free((void *)p->not_targeting);
        free((void *)p->sets);
        p->targeting = p->not_targeting = NULL;
        p->sets = NULL;
        p->ntargeting = p->nnot_targeting = p->nsets = 0;
    }
    if (!rc && !p->invalid)
        for (i = 0; i < p->ntargeting && !p->binding_conditions; i++)
            for (j = 0; j < p->targeting[i]->ndevices; j++)
                if (p->targeting[i]->devices[j].nbinding_conditions) {
                    p->binding_conditions = true;
                    break;
                }
    return rc;
}

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

static void cons_table_free(struct dra_cons_table *t)
{
    if (!t)
        return;
    free(t->slice_base);
    free(t->start);
    free(t->e);
    free(t);
}

void dra_pools_free(struct dra_pools *p)
{
    size_t i;

    if (!p)
        return;
    for (i = 0; i < p->n; i++) {
        free(p->pools[i].invalid_reason);
        free((void *)p->pools[i].targeting);
        free((void *)p->pools[i].not_targeting);
        free((void *)p->pools[i].sets);
        cons_table_free(p->pools[i].cons);
    }
    free(p->pools);
    p->pools = NULL;
    p->n = 0;
    p->ids_known = false;
}

int dra_pools_gather(const struct dra_inventory *inv, const struct dra_slice *const *for_node,
                     size_t nfor_node, const char *node_name, const struct dra_features *f,
                     const struct dra_ops *ops, struct dra_pools *out, char *msg, size_t msgsize)
{
    struct gpool *gp = NULL;
    size_t ngp = 0, cgp = 0, i, j, nin = for_node ? nfor_node : inv->nslices, nres = 0;
    const struct dra_slice **all = NULL;
    size_t nall = 0, call = 0;
    struct dra_pool *res = NULL;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    for (i = 0; i < nin; i++) {
        const struct dra_slice *s = for_node ? for_node[i] : &inv->slices[i];
        bool relevant = false;
        int m;

        if (f->counter_slices_everywhere && f->partitionable && s->ncounter_sets) {
            /* 1.36: a slice with shared counters is relevant on every node */
            if ((rc = add_slice(&gp, &ngp, &cgp, s)))
                goto out;
            continue;
        }
        if (!for_node && s->sel.node_name && *s->sel.node_name &&
            strcmp(s->sel.node_name, node_name))
            continue;
        if (!f->partitionable && (s->per_device || s->ncounter_sets))
            continue;
        if (!f->compatibility_groups && slice_compat_groups(s))
            continue;
        if (slice_has_sel(s)) {
            m = node_matches(ops, node_name, &s->sel, msg, msgsize);
            if (m < 0) {
                char inner[512];

                snprintf(inner, sizeof(inner), "%s", msg ? msg : "");
                msgf(msg, msgsize, "failed to perform node selection for slice %s: %s", s->name,
                     inner);
                rc = -EINVAL;
                goto out;
            }
            relevant = m > 0;
        } else if (s->per_device) {
            for (j = 0; j < s->ndevices && !relevant; j++) {
                m = node_matches(ops, node_name, &s->devices[j].sel, msg, msgsize);
                if (m < 0) {
                    char inner[512];

                    snprintf(inner, sizeof(inner), "%s", msg ? msg : "");
                    msgf(msg, msgsize,
                         "failed to perform node selection for device %s in slice %s: %s",
                         s->devices[j].name, s->name, inner);
                    rc = -EINVAL;
                    goto out;
                }
                relevant = m > 0;
            }
        } else {
            continue; /* some future node selection: ignored */
        }
        if (relevant && (rc = add_slice(&gp, &ngp, &cgp, s)))
            goto out;
    }
    if (ngp) {
        res = calloc(ngp, sizeof(*res));
        if (!res) {
            rc = -ENOMEM;
            goto out;
        }
    }
    for (i = 0; i < ngp; i++) {
        struct gpool *g = &gp[i];
        int64_t gen = g->sl[0]->generation;
        bool obsolete = false;

        if ((int64_t)g->n == g->sl[0]->count) {
            if ((rc = build_pool(&res[nres], g, NULL, 0, f)))
                goto out;
            nres++;
            continue;
        }
        /* checkSlicesInPool: every slice of the pool, newer generations make it obsolete */
        nall = 0;
        for (j = 0; j < inv->nslices; j++) {
            const struct dra_slice *s = &inv->slices[j];

            if (strcmp(s->driver, g->driver) || strcmp(s->pool, g->pool))
                continue;
            if (s->generation > gen) {
                obsolete = true;
                break;
            }
            if (s->generation == gen && (f->compatibility_groups || !slice_compat_groups(s)) &&
                (rc = push_slice(&all, &nall, &call, s)))
                goto out;
        }
        if (obsolete)
            continue;
        if ((int64_t)nall != g->sl[0]->count) {
            memset(&res[nres], 0, sizeof(res[nres]));
            res[nres].driver = g->driver;
            res[nres].pool = g->pool;
            res[nres].incomplete = true;
            nres++;
            continue;
        }
        if ((rc = build_pool(&res[nres], g, all, nall, f)))
            goto out;
        nres++;
    }
    /* pools by ID; those with binding conditions after the others */
    {
        size_t a = 0, b;

        for (b = 0; b < nres; b++)
            if (!res[b].binding_conditions) {
                struct dra_pool t = res[a];

                res[a] = res[b];
                res[b] = t;
                a++;
            }
        if (a > 1)
            qsort(res, a, sizeof(*res), cmp_pool);
        if (nres - a > 1)
            qsort(res + a, nres - a, sizeof(*res), cmp_pool);
    }
    out->pools = res;
    out->n = nres;
    res = NULL;
out:
    if (res) {
        struct dra_pools tmp = {res, nres, 0, false};

        dra_pools_free(&tmp);
    }
    for (i = 0; i < ngp; i++)
        free((void *)gp[i].sl);
    free(gp);
    free((void *)all);
    return rc;
}

/* ---------------------------------------------------------------- Allocate ---- */

struct capvec {
    uint32_t id;
    bool present;
    size_t n;
    struct dra_consumed items[16];
};

struct memo_slot {
    uint64_t key; /* 0: empty (keys are id+1 << 32 | request key) */
    uint8_t val;
};

struct dra_scratch {
    uint64_t *allocating; /* per device id: the claims allocating it */
    size_t nids;
    uint32_t *touched;
    size_t ntouched, ctouched;
    struct memo_slot *memo;
    size_t nmemo, used;
    uint32_t *memo_used;
    size_t nmemo_used, cmemo_used;
    struct capvec *acap; /* allocating capacity, by device id (few) */
    size_t nacap, cacap;
    /* dra_allocate's per-call tables, kept between calls (struct alloc says what they are) */
    void *rdall, *rdoff, *rdoff_flat, *cs, *cs_flat, *pc, *selected;
    size_t crdall, crdoff, crdoff_flat, ccs, ccs_flat, cpc, cselected;
};

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

/* a request or subrequest of a claim, with what Allocate learns about it */
struct reqdata {
    const struct dra_request *req;
    const struct dra_claim_request *parent; /* set for subrequests */
    int num_devices;
    struct alldev *all; /* All mode: the devices, decided up front */
    size_t nall, call;
};

struct alldev {
    const struct dra_device *device;
    const struct dra_slice *slice;
    const struct dra_pool *pool;
};

/* the constraints' state */
struct cstate {
    const struct dra_constraint *c;
    const struct dra_attr *first; /* match: the first device's value */
    int num;
    const struct dra_attr **values; /* distinct: the values so far */
    const char **keys;              /* 1.36's distinct: the request each value is kept for */
    size_t nvalues, cvalues;
};

struct pool_counters {
    bool ready;
    kube_nano *avail, *used; /* per set and counter */
    size_t *off;             /* per set: its first counter's index */
};

struct alloc {
    const struct dra_features *f;
    struct dra_pools *pools;
    const struct dra_state *state;
    const struct dra_claim *claims;
    size_t nclaims;
    const struct dra_ops *ops;
    const char *node_name;
    struct dra_scratch *s;
    struct dra_claim_result *out;
    char *msg;
    size_t msgsize;
    struct reqdata **rd; /* [claim][request][sub] flattened: rdoff[claim][request] */
    size_t **rdoff;
    struct reqdata *rdall;
    int *selected; /* [claim * DRA_RESULTS_MAX + request] */
    struct cstate **cs;
    struct pool_counters *pc;
    bool oom;
};

enum { ONE_NO = 0, ONE_DONE = 1, ONE_ERR = -1, ONE_MAXSIZE = -2, ONE_NOMEM = -3 };

static const char *devid(const struct alldev *d, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s/%s", d->pool->driver, d->pool->pool, d->device->name);
    return buf;
}

/* ---- scratch helpers ---- */

static int scratch_prepare(struct dra_scratch *s, size_t nids)
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

static void scratch_reset(struct dra_scratch *s)
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

static struct capvec *acap_find(const struct alloc *a, uint32_t id)
{
    size_t i;

    for (i = 0; i < a->s->nacap; i++)
        if (a->s->acap[i].id == id && a->s->acap[i].present)
            return &a->s->acap[i];
    return NULL;
}

static bool capacity_in_use(const struct alloc *a, uint32_t id)
{
    if (a->state->consumed && a->state->consumed[id])
        return true;
    if (a->state->shares && a->state->shares[id])
        return true;
    return acap_find(a, id) != NULL;
}

/* IsDeviceAllocated: exclusively, as a share, or with consumed capacity */
static bool device_allocated(const struct alloc *a, uint32_t id)
{
    return (a->state->allocated && a->state->allocated[id]) ||
           (a->state->shares && a->state->shares[id]) ||
           (a->state->consumed && a->state->consumed[id]);
}

/* memo: 1 match, 0 no match, -1 unknown */
static int memo_get(const struct alloc *a, uint64_t key)
{
    const struct dra_scratch *s = a->s;
    size_t i = (size_t)(key * 0x9e3779b97f4a7c15ULL >> 20) & (s->nmemo - 1);

    for (;; i = (i + 1) & (s->nmemo - 1)) {
        if (!s->memo[i].key)
            return -1;
        if (s->memo[i].key == key)
            return s->memo[i].val;
    }
}

static int memo_put(struct alloc *a, uint64_t key, bool val)
{
    struct dra_scratch *s = a->s;
    size_t i;

    if ((s->used + 1) * 2 > s->nmemo) {
        /* grow: rehash the live entries */
        size_t n = s->nmemo * 2, k;
        struct memo_slot *m = calloc(n, sizeof(*m));
        uint32_t *used = malloc(n * sizeof(*used));
        size_t nused = 0;

        if (!m || !used) {
            free(m);
            free(used);
            return -ENOMEM;
        }
        for (k = 0; k < s->nmemo_used; k++) {
            struct memo_slot e = s->memo[s->memo_used[k]];
            size_t j = (size_t)(e.key * 0x9e3779b97f4a7c15ULL >> 20) & (n - 1);

            while (m[j].key)
                j = (j + 1) & (n - 1);
            m[j] = e;
            used[nused++] = (uint32_t)j;
        }
        free(s->memo);
        free(s->memo_used);
        s->memo = m;
        s->nmemo = n;
        s->memo_used = used;
        s->nmemo_used = nused;
        s->cmemo_used = n;
    }
    if (s->nmemo_used == s->cmemo_used) {
        size_t nc = s->cmemo_used ? s->cmemo_used * 2 : 256;
        uint32_t *u = realloc(s->memo_used, nc * sizeof(*u));

        if (!u)
            return -ENOMEM;
        s->memo_used = u;
        s->cmemo_used = nc;
    }
    i = (size_t)(key * 0x9e3779b97f4a7c15ULL >> 20) & (s->nmemo - 1);
    while (s->memo[i].key)
        i = (i + 1) & (s->nmemo - 1);
    s->memo[i].key = key;
    s->memo[i].val = val;
    s->memo_used[s->nmemo_used++] = (uint32_t)i;
    s->used++;
    return 0;
}

/* ---- requests ---- */

static struct reqdata *rdata(const struct alloc *a, size_t c, size_t r, size_t sub)
{
    return &a->rdall[a->rdoff[c][r] + sub];
}

/* whose selector failed, as the messages name it: "class C: ", "claim NS/N: " or nothing */
static const char *selector_owner(const char *class_name, const char *claim_ns,
                                  const char *claim_name, char *buf, size_t size)
{
    buf[0] = '\0';
    if (class_name)
        snprintf(buf, size, "class %s: ", class_name);
    else if (claim_name)
        snprintf(buf, size, "claim %s/%s: ", claim_ns, claim_name);
    return buf;
}

int dra_selectors_match(const struct dra_features *f, const struct dra_ops *ops,
                        const char *class_name, const char *claim_ns, const char *claim_name,
                        const struct dra_selector *sels, size_t nsels, const struct dra_device *d,
                        const char *driver, const char *pool, char *msg, size_t msgsize)
{
    char who[600];
    size_t i;

    for (i = 0; i < nsels; i++) {
        char inner[1024];
        int m;

        if (sels[i].compile_error) {
            msgf(msg, msgsize, "%sselector #%zu: CEL compile error: %s",
                 selector_owner(class_name, claim_ns, claim_name, who, sizeof(who)), i,
                 sels[i].compile_error);
            return -1;
        }
        inner[0] = '\0';
        m = ops->eval(ops->ctx, &sels[i], d, driver, inner, sizeof(inner));
        if (m < 0 && !f->cel_error_names_device) {
            /* before 1.37: neither the device nor the hint */
            msgf(msg, msgsize, "%sselector #%zu: CEL runtime error: %s",
                 selector_owner(class_name, claim_ns, claim_name, who, sizeof(who)), i, inner);
            return -1;
        }
        if (m < 0) {
            dra_enhance_runtime_error(inner, sizeof(inner));
            msgf(msg, msgsize, "%sselector #%zu on device %s/%s/%s: CEL runtime error: %s",
                 selector_owner(class_name, claim_ns, claim_name, who, sizeof(who)), i, driver,
                 pool, d->name, inner);
            return -1;
        }
        if (!m)
            return 0;
    }
    return 1;
}

/* selectorsMatch: 1, 0, or -1 with a->msg set */
static int selectors_match(struct alloc *a, size_t claim, const struct dra_device *d,
                           const struct dra_pool *p, const struct dra_class *class,
                           const struct dra_selector *sels, size_t nsels)
{
    const struct dra_claim *cl = &a->claims[claim];

    return dra_selectors_match(a->f, a->ops, class ? class->name : NULL, cl->ns, cl->name, sels,
                               nsels, d, p->driver, p->pool, a->msg, a->msgsize);
}

/* isSelectable: 1, 0, -1 (a->msg), -ENOMEM */
static int is_selectable(struct alloc *a, size_t c, size_t r, size_t sub, const struct reqdata *rd,
                         const struct dra_slice *slice, const struct dra_device *d,
                         const struct dra_pool *p)
{
    uint64_t key;
    int m;

    if (!a->f->binding_and_status && d->nbinding_conditions)
        return 0;
    key = ((uint64_t)d->id + 1) << 32 | (uint64_t)(c * 4096 + r * 16 + sub);
    m = memo_get(a, key);
    if (m >= 0)
        return m;
    if (rd->req->class) {
        m = selectors_match(a, c, d, p, rd->req->class, rd->req->class->sels,
                            rd->req->class->nsels);
        if (m < 0)
            return -1;
        if (!m)
            return memo_put(a, key, false) ? -ENOMEM : 0;
    }
    m = selectors_match(a, c, d, p, NULL, rd->req->sels, rd->req->nsels);
    if (m < 0)
        return -1;
    if (!m)
        return memo_put(a, key, false) ? -ENOMEM : 0;
    if (slice->per_device) {
        char inner[600];

        inner[0] = '\0';
        m = node_matches(a->ops, a->node_name, &d->sel, inner, sizeof(inner));
        if (m < 0) {
            msgf(a->msg, a->msgsize, "%s", inner);
            return -1;
        }
        if (!m)
            return memo_put(a, key, false) ? -ENOMEM : 0;
    }
    return memo_put(a, key, true) ? -ENOMEM : 1;
}

/* ---- consumable capacity ---- */

static const struct dra_capacity *find_cap(const struct dra_device *d, const char *name)
{
    size_t i;

    for (i = 0; i < d->ncaps; i++)
        if (!strcmp(d->caps[i].name, name))
            return &d->caps[i];
    return NULL;
}

/* safeMilliValue: q in milli units when that is exact and fits int64 */
static bool milli_exact(kube_nano q)
{
    kube_nano m = q / 1000000;

    return q % 1000000 == 0 && m <= INT64_MAX && m >= INT64_MIN;
}

/* useMilli: fractional capacity ranges on and min, max and step (those set) exact in milli
 * units, the step at least 1m */
static bool use_milli(const struct dra_cap_policy *pol, bool fractional)
{
    if (!fractional)
        return false;
    if ((pol->has_min && !milli_exact(pol->min)) || (pol->has_max && !milli_exact(pol->max)) ||
        (pol->has_step && !milli_exact(pol->step)))
        return false;
    if (pol->has_step && pol->step / 1000000 < 1)
        return false;
    return true;
}

/* calculateConsumedCapacity; -1 with a message for unrepresentable requests */
static int consumed_for(const kube_nano *req, const struct dra_capacity *cap, bool fractional,
                        kube_nano *out, char *msg, size_t size)
{
    const struct dra_cap_policy *pol = cap->policy;

    if (!req) {
        *out = pol && pol->has_default ? pol->def : cap->value;
        return 0;
    }
    if (!pol) {
        *out = *req;
        return 0;
    }
    if (pol->has_range && pol->has_min) {
        kube_nano r = *req, unit, n, added;

        if (r < pol->min) {
            *out = pol->min;
            return 0;
        }
        if (!pol->has_step) {
            *out = r;
            return 0;
        }
        if (use_milli(pol, fractional)) {
            unit = 1000000; /* milli */
            if (!milli_exact(r)) {
                msgf(msg, size,
                     "capacity request cannot be represented in the device's range "
                     "arithmetic: request is not a representable milli value");
                return -1;
            }
            added = r / unit - pol->min / unit;
            n = added / (pol->step / unit) + (added % (pol->step / unit) ? 1 : 0);
            if (n > (INT64_MAX - pol->min / unit) / (pol->step / unit)) {
                msgf(msg, size,
                     "capacity request cannot be represented in the device's range "
                     "arithmetic: rounding the request up to the next step passes "
                     "the milli-value range");
                return -1;
            }
            *out = pol->min + n * pol->step;
            return 0;
        }
        /* integer arithmetic on Value() */
        {
            kube_nano rv = kube_nano_value(r), mv = kube_nano_value(pol->min),
                      sv = kube_nano_value(pol->step);

            if (r > (kube_nano)INT64_MAX * KUBE_NANO_PER_UNIT) {
                msgf(msg, size,
                     "capacity request cannot be represented in the device's range "
                     "arithmetic: request exceeds MaxInt64");
                return -1;
            }
            added = rv - mv;
            n = sv ? added / sv + (added % sv ? 1 : 0) : 0;
            if (sv && mv >= 0 && n > (INT64_MAX - mv) / sv) {
                msgf(msg, size,
                     "capacity request cannot be represented in the device's range "
                     "arithmetic: rounding the request up to the next step passes "
                     "MaxInt64");
                return -1;
            }
            *out = (mv + sv * n) * KUBE_NANO_PER_UNIT;
            return 0;
        }
    }
    if (pol->nvalid) {
        size_t i;

        for (i = 0; i < pol->nvalid; i++)
            if (*req <= pol->valid[i]) {
                *out = pol->valid[i];
                return 0;
            }
        *out = *req;
        return 0;
    }
    *out = *req;
    return 0;
}

/* violatesPolicy */
static bool violates(kube_nano v, const struct dra_cap_policy *pol, bool fractional)
{
    size_t i;

    if (!pol)
        return false;
    if (pol->has_default && v == pol->def)
        return false;
    if (pol->has_range) {
        if (pol->has_max && v > pol->max)
            return true;
        if (pol->has_step) {
            kube_nano req, step, min;

            if (use_milli(pol, fractional)) {
                if (!milli_exact(v))
                    return true;
                req = v / 1000000;
                step = pol->step / 1000000;
                min = pol->min / 1000000;
            } else {
                req = kube_nano_value(v);
                step = kube_nano_value(pol->step);
                min = kube_nano_value(pol->min);
            }
            if (step && (req - min) % step)
                return true;
        }
        return false;
    }
    if (pol->nvalid) {
        for (i = 0; i < pol->nvalid; i++)
            if (v == pol->valid[i])
                return false;
        return true;
    }
    return false;
}

static const kube_nano *req_cap(const struct dra_request *r, const char *name)
{
    size_t i;

    for (i = 0; i < r->ncaps; i++)
        if (!strcmp(r->caps[i].name, name))
            return &r->caps[i].q;
    return NULL;
}

static kube_nano consumed_lookup(const struct dra_consumed *c, size_t n, const char *name,
                                 bool *found)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (!strcmp(c[i].name, name)) {
            *found = true;
            return c[i].q;
        }
    *found = false;
    return 0;
}

/* CmpRequestOverCapacity: 1 fits, 0 does not, -1 error (msg) */
static int capacity_fits(const struct alloc *a, const struct dra_request *r,
                         const struct dra_device *d, bool with_state, char *msg, size_t size)
{
    kube_nano consumed[32];
    const struct dra_consumed *cur = NULL;
    size_t ncur = 0, i;
    const struct capvec *alloc = NULL;

    if (r->has_capacity)
        for (i = 0; i < r->ncaps; i++)
            if (!find_cap(d, r->caps[i].name))
                return 0;
    if (d->ncaps > 32)
        return 0;
    for (i = 0; i < d->ncaps; i++) {
        char inner[400];

        if (consumed_for(req_cap(r, d->caps[i].name), &d->caps[i], a->f->fractional_capacity_range,
                         &consumed[i], inner, sizeof(inner))) {
            msgf(msg, size, "capacity \"%s\": %s", d->caps[i].name, inner);
            return -1;
        }
        if (consumed[i] < 0) {
            msgf(msg, size, "capacity \"%s\": capacity value is negative", d->caps[i].name);
            return -1;
        }
    }
    if (with_state) {
        if (a->state->consumed && a->state->consumed[d->id]) {
            cur = a->state->consumed[d->id];
            ncur = a->state->nconsumed[d->id];
        }
        alloc = acap_find(a, d->id);
    }
    for (i = 0; i < d->ncaps; i++) {
        kube_nano sum;
        bool found;

        if (violates(consumed[i], d->caps[i].policy, a->f->fractional_capacity_range))
            return 0;
        sum = consumed_lookup(cur, ncur, d->caps[i].name, &found) + consumed[i];
        if (alloc)
            sum += consumed_lookup(alloc->items, alloc->n, d->caps[i].name, &found);
        if (sum > d->caps[i].value)
            return 0;
    }
    return 1;
}

/* ---- counters ---- */

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
    cons_table_free(t);
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

static struct pool_counters *counters_of(struct alloc *a, const struct dra_pool *cp)
{
    size_t pi = (size_t)(cp - a->pools->pools), i, j, k, m, total = 0;
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
                size_t b, e;

                if (!d->nconsumes || !device_allocated(a, d->id))
                    continue;
                if (cons_range(p, d, &b, &e)) {
                    for (; b < e; b++)
                        pc->avail[p->cons->e[b].idx] -= p->cons->e[b].value;
                    continue;
                }
                for (m = 0; m < d->nconsumes; m++) {
                    size_t si, ci, q;

                    for (si = 0; si < p->nsets; si++)
                        if (!strcmp(p->sets[si]->name, d->consumes[m].counter_set))
                            break;
                    if (si == p->nsets)
                        continue;
                    for (q = 0; q < d->consumes[m].ncounters; q++)
                        for (ci = 0; ci < p->sets[si]->ncounters; ci++)
                            if (!strcmp(p->sets[si]->counters[ci].name,
                                        d->consumes[m].counters[q].name))
                                pc->avail[pc->off[si] + ci] -= d->consumes[m].counters[q].value;
                }
            }
    }
    pc->ready = true;
    return pc;
}

/* add (sign 1) or remove (-1) a device's consumption */
static void counters_apply(struct alloc *a, const struct dra_pool *p, struct pool_counters *pc,
                           const struct dra_device *d, int sign)
{
    size_t m, q, si, ci, b, e;

    (void)a;
    if (cons_range(p, d, &b, &e)) {
        for (; b < e; b++)
            pc->used[p->cons->e[b].idx] += sign * p->cons->e[b].value;
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
                    pc->used[pc->off[si] + ci] += sign * d->consumes[m].counters[q].value;
    }
}

/* checkAvailableCounters: 1 ok (reserved), 0 not enough, -ENOMEM */
static int counters_check(struct alloc *a, const struct alldev *dev)
{
    struct pool_counters *pc = counters_of(a, dev->pool);
    size_t i, total = 0;

    if (!pc)
        return -ENOMEM;
    counters_apply(a, dev->pool, pc, dev->device, 1);
    for (i = 0; i < dev->pool->nsets; i++)
        total += dev->pool->sets[i]->ncounters;
    for (i = 0; i < total; i++)
        if (pc->avail[i] < pc->used[i]) {
            counters_apply(a, dev->pool, pc, dev->device, -1);
            return 0;
        }
    return 1;
}

/* ---- constraints ---- */

/* lookupAttribute: the qualified name, or the bare id when the domain is the driver */
static const struct dra_attr *lookup_attr(const struct dra_device *d, const char *driver,
                                          const char *name)
{
    const char *slash = strchr(name, '/');
    size_t i;

    for (i = 0; i < d->nattrs; i++)
        if (!strcmp(d->attrs[i].name, name))
            return &d->attrs[i];
    if (!slash || strlen(driver) != (size_t)(slash - name) ||
        strncmp(name, driver, (size_t)(slash - name)))
        return NULL;
    for (i = 0; i < d->nattrs; i++)
        if (!strcmp(d->attrs[i].name, slash + 1))
            return &d->attrs[i];
    return NULL;
}

static bool constraint_applies(const struct dra_constraint *c, const char *base, const char *sub)
{
    size_t i;
    char full[300];

    if (!c->nrequests)
        return true;
    if (sub)
        snprintf(full, sizeof(full), "%s/%s", base, sub);
    for (i = 0; i < c->nrequests; i++) {
        if (!strcmp(c->requests[i], base))
            return true;
        if (sub && !strcmp(c->requests[i], full))
            return true;
    }
    return false;
}

static bool attr_same(const struct dra_attr *x, const struct dra_attr *y)
{
    if (x->type != y->type)
        return false;
    switch (x->type) {
    case DRA_ATTR_INT:
        return x->i == y->i;
    case DRA_ATTR_BOOL:
        return x->b == y->b;
    case DRA_ATTR_STRING:
    case DRA_ATTR_VERSION:
        return !strcmp(x->s, y->s);
    default:
        return false;
    }
}

static int values_grow(struct cstate *st)
{
    if (st->nvalues == st->cvalues) {
        size_t nc = st->cvalues ? st->cvalues * 2 : 8;
        const struct dra_attr **v = realloc((void *)st->values, nc * sizeof(*v));
        const char **k;

        if (!v)
            return -ENOMEM;
        st->values = v;
        k = realloc((void *)st->keys, nc * sizeof(*k));
        if (!k)
            return -ENOMEM;
        st->keys = k;
        st->cvalues = nc;
    }
    return 0;
}

/* 1.36's distinctAttribute: one value kept per request name (a map), a count of devices
 * beside it, so a request's earlier devices are forgotten as the next one is added */
static int distinct_by_request_add(struct cstate *st, const char *base, const struct dra_attr *attr)
{
    size_t i;

    if (st->num > 0)
        for (i = 0; i < st->nvalues; i++)
            if (attr->type == DRA_ATTR_OTHER || attr_same(attr, st->values[i]))
                return 0;
    for (i = 0; i < st->nvalues; i++)
        if (!strcmp(st->keys[i], base)) {
            st->values[i] = attr;
            st->num++;
            return 1;
        }
    if (values_grow(st))
        return -ENOMEM;
    st->keys[st->nvalues] = base;
    st->values[st->nvalues++] = attr;
    st->num++;
    return 1;
}

/* constraint add: true when the device may join */
static int constraint_add(struct cstate *st, const char *base, const char *sub,
                          const struct dra_device *d, const char *driver, bool by_request)
{
    const struct dra_attr *attr;
    size_t i;

    if (!constraint_applies(st->c, base, sub))
        return 1;
    attr = lookup_attr(d, driver, st->c->attr);
    if (!attr)
        return 0;
    if (st->c->kind == DRA_MATCH) {
        if (st->num == 0) {
            st->first = attr;
            st->num = 1;
            return 1;
        }
        if (attr->type == DRA_ATTR_OTHER || !attr_same(attr, st->first))
            return 0;
        st->num++;
        return 1;
    }
    if (by_request)
        return distinct_by_request_add(st, base, attr);
    if (attr->type == DRA_ATTR_OTHER)
        return 0;
    for (i = 0; i < st->nvalues; i++)
        if (attr_same(attr, st->values[i]))
            return 0;
    if (values_grow(st))
        return -ENOMEM;
    st->values[st->nvalues++] = attr;
    return 1;
}

static void constraint_remove(struct cstate *st, const char *base, const char *sub, bool by_request)
{
    size_t i;

    if (!constraint_applies(st->c, base, sub))
        return;
    if (st->c->kind == DRA_MATCH) {
        st->num--;
    } else if (by_request) {
        /* 1.36: the request's value goes, whichever device of it is removed */
        for (i = 0; i < st->nvalues; i++)
            if (!strcmp(st->keys[i], base)) {
                st->values[i] = st->values[st->nvalues - 1];
                st->keys[i] = st->keys[st->nvalues - 1];
                st->nvalues--;
                break;
            }
        st->num--;
    } else {
        st->nvalues--;
    }
}

/* ---- allocateDevice ---- */

struct rollback {
    bool counters, marked, cap_inserted, cap_existed, result;
    size_t constraints, prev_results;
    struct dra_consumed consumed[16];
    size_t nconsumed;
};

/* the first NoSchedule/NoExecute taint of d that r does not tolerate, or -1 */
static int untolerated_taint(const struct dra_device *d, const struct dra_request *r)
{
    size_t i, j;

    for (i = 0; i < d->ntaints; i++) {
        const char *e = nz(d->taints[i].effect);
        bool tolerated = false;

        if (strcmp(e, "NoExecute") && strcmp(e, "NoSchedule"))
            continue;
        for (j = 0; j < r->ntols && !tolerated; j++)
            tolerated = dra_tolerates(&r->tols[j], &d->taints[i]);
        if (!tolerated)
            return (int)i;
    }
    return -1;
}

static bool taint_prevents(const struct dra_device *d, const struct dra_request *r)
{
    return untolerated_taint(d, r) >= 0;
}

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
        constraint_remove(&a->cs[c][i - 1], base, sub, a->f->distinct_by_request);
    if (st->counters)
        counters_apply(a, dev->pool, &a->pc[(size_t)(dev->pool - a->pools->pools)], dev->device,
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
    skip_counters = multi && capacity_in_use(a, d->id);
    if (!skip_counters && d->nconsumes) {
        rc = counters_check(a, dev);
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
    if (a->f->device_taints && taint_prevents(d, req)) {
        rollback_device(a, c, dev, base, subname, st);
        return 0;
    }
    for (i = 0; i < claim->nconstraints; i++) {
        rc = constraint_add(&a->cs[c][i], base, subname, d, dev->pool->driver,
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
        int fits = capacity_fits(a, req, d, true, inner, sizeof(inner));

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

                consumed_for(req_cap(req, d->caps[i].name), &d->caps[i],
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
                rc = is_selectable(a, c, r, sub, rd, slice, d, pool);
                if (rc == -1)
                    return ONE_ERR;
                if (rc < 0)
                    return ONE_NOMEM;
                if (!rc)
                    continue;
                if (a->f->consumable_capacity) {
                    char inner[512];
                    int fits = capacity_fits(a, req, d, true, inner, sizeof(inner));

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
                int m = is_selectable(a, c, r, sub, rd, slice, d, pool);

                if (m == -1)
                    return -1;
                if (m < 0)
                    return m;
                if (!m)
                    continue;
                if (a->f->consumable_capacity) {
                    char inner[512];
                    int fits =
                        capacity_fits(a, req, d, !a->f->capacity_errors_fail, inner, sizeof(inner));

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

static void alloc_release(struct alloc *a)
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
static void *table(void **buf, size_t *cap, size_t n, size_t size)
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

int dra_allocate(const struct dra_features *f, const char *node_name, struct dra_pools *pools,
                 const struct dra_state *state, const struct dra_claim *claims, size_t nclaims,
                 const struct dra_ops *ops, struct dra_scratch *scratch,
                 struct dra_claim_result *out, char *msg, size_t msgsize)
{
    struct alloc a;
    size_t c, r, k, total = 0, nids = 0, pi;
    size_t *rdoff_flat;
    struct cstate *cs_flat;
    int rc, status = DRA_NOT_ALLOCATED;

    memset(&a, 0, sizeof(a));
    a.f = f;
    a.pools = pools;
    a.state = state;
    a.claims = claims;
    a.nclaims = nclaims;
    a.ops = ops;
    a.node_name = node_name;
    a.s = scratch;
    a.out = out;
    a.msg = msg;
    a.msgsize = msgsize;
    if (msg && msgsize)
        msg[0] = '\0';
    if (nclaims > DRA_CLAIMS_MAX) {
        msgf(msg, msgsize, "cannot allocate more than %d claims at once", DRA_CLAIMS_MAX);
        return DRA_FAILED;
    }
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
    nids = pools->ids_end;
    if (scratch_prepare(scratch, nids))
        return -ENOMEM;
    scratch_reset(scratch);
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
        a.rdall = table(&scratch->rdall, &scratch->crdall, total + 1, sizeof(*a.rdall));
        a.rdoff = table(&scratch->rdoff, &scratch->crdoff, nclaims + 1, sizeof(*a.rdoff));
        a.cs = table(&scratch->cs, &scratch->ccs, nclaims + 1, sizeof(*a.cs));
        a.pc = table(&scratch->pc, &scratch->cpc, pools->n + 1, sizeof(*a.pc));
        a.selected = table(&scratch->selected, &scratch->cselected, (nclaims + 1) * DRA_RESULTS_MAX,
                           sizeof(*a.selected));
        rdoff_flat =
            table(&scratch->rdoff_flat, &scratch->crdoff_flat, nreq + 1, sizeof(*rdoff_flat));
        cs_flat = table(&scratch->cs_flat, &scratch->ccs_flat, ncons + 1, sizeof(*cs_flat));
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
    alloc_release(&a);
    return rc < 0 ? rc : status;
}

/* ---------------------------------------------------------------- dra_why ---- */

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
        m = selectors_match(a, c, d, p, req->class, req->class->sels + i, 1);
        if (m <= 0) {
            w->kind = m < 0 ? DRA_WHY_CEL_ERROR : DRA_WHY_CLASS_SELECTOR;
            w->index = i;
            w->msg = NULL;
            return 0;
        }
    }
    for (i = 0; i < req->nsels; i++) {
        m = selectors_match(a, c, d, p, NULL, req->sels + i, 1);
        if (m <= 0) {
            w->kind = m < 0 ? DRA_WHY_CEL_ERROR : DRA_WHY_SELECTOR;
            w->index = i;
            w->msg = NULL;
            return 0;
        }
    }
    if (dev->slice->per_device &&
        node_matches(a->ops, a->node_name, &d->sel, a->msg, a->msgsize) <= 0) {
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
    if (d->nconsumes && !(multi && capacity_in_use(a, d->id))) {
        m = counters_check(a, dev);
        if (m < 0)
            return m;
        if (!m) {
            w->kind = DRA_WHY_COUNTERS;
            return 0;
        }
        counters_apply(a, p, &a->pc[(size_t)(p - a->pools->pools)], d, -1);
    }
    if (a->f->device_taints && (m = untolerated_taint(d, req)) >= 0) {
        w->kind = DRA_WHY_TAINT;
        w->index = (size_t)m;
        return 0;
    }
    if (a->f->consumable_capacity) {
        char inner[512];

        m = capacity_fits(a, req, d, true, inner, sizeof(inner));
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
    size_t c, r, k, pi, si, di, nids = 0;
    int rc = 0;

    memset(&a, 0, sizeof(a));
    a.f = f;
    a.pools = pools;
    a.state = state;
    a.claims = claims;
    a.nclaims = nclaims;
    a.ops = ops;
    a.node_name = node_name;
    a.s = scratch;
    a.msg = msg;
    a.msgsize = sizeof(msg);
    for (pi = 0; pi < pools->n; pi++)
        for (si = 0; si < pools->pools[pi].ntargeting; si++)
            for (di = 0; di < pools->pools[pi].targeting[si]->ndevices; di++)
                if (pools->pools[pi].targeting[si]->devices[di].id + 1 > nids)
                    nids = pools->pools[pi].targeting[si]->devices[di].id + 1;
    /* the pools' counters in the scratch's table, as dra_allocate keeps them (alloc_release
     * frees what they hold, not the table) */
    if (scratch_prepare(scratch, nids) ||
        !(a.pc = table(&scratch->pc, &scratch->cpc, pools->n + 1, sizeof(*a.pc))))
        return -ENOMEM;
    scratch_reset(scratch);
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
    alloc_release(&a);
    return rc;
}
