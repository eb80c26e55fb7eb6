/* dra_alloc_pools.c - GatherPools of the structured allocator (pools_incubating.go): the slices
 * relevant to a node grouped by pool, the newest generation of each, incomplete and invalid
 * pools marked, sorted by ID (those with binding conditions last); and NodeMatches, which the
 * search and explain use too. */
#include "sched/dra_alloc-int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NodeMatches: a node name, all nodes, or a node selector; nothing set matches nothing.
 * 1, 0, or -1 with msg. */
int dra_node_matches(const struct dra_ops *ops, const char *node_name,
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
        dra_cons_table_free(p->pools[i].cons);
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
            m = dra_node_matches(ops, node_name, &s->sel, msg, msgsize);
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
                m = dra_node_matches(ops, node_name, &s->devices[j].sel, msg, msgsize);
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
