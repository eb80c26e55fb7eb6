/* dynamicresources_why.c - explain's answer where DynamicResources says only "cannot allocate
 * all claims": for one node, what dra_why found for each request (how many devices match, which
 * of those are allocated and to whom, tainted, out of counters or capacity), the pools that are
 * incomplete or invalid, and, when every request alone would find its devices, which constraint
 * (re-running the allocator without it) or which competition stands in the way. Runs only when
 * the recorder is on (sched_dra_set_why), on nodes the allocator already failed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "sched/dynamicresources.h"

#define WHY_NAMES 4 /* devices named per category; the rest are counted */
#define WHY_SELS 8  /* selectors counted per request */

enum cat { CAT_TAKEN, CAT_TAINT, CAT_COUNTERS, CAT_CAPACITY, CAT_OFF, CAT_N };

static const char *const cat_title[CAT_N] = {"allocated", "tainted (not tolerated)",
                                             "shared counters used up", "not enough capacity left",
                                             "binding conditions or counters, their feature off"};

/* what was found for one request or subrequest */
struct slot {
    size_t claim, request, sub;
    const struct dra_request *req;
    int seen, matched, free_, node;
    int class_sel[WHY_SELS], sel[WHY_SELS], cel;
    int ncat[CAT_N];
    struct buf names[CAT_N];
};

struct acc {
    const struct sched_dra_why_in *in;
    struct slot *slots;
    size_t nslots, cslots;
    struct buf pools;
    int oom;
};

static struct slot *slot_of(struct acc *a, const struct dra_why *w)
{
    struct slot *s;
    int k;

    if (a->nslots) {
        s = &a->slots[a->nslots - 1];
        if (s->claim == w->claim && s->request == w->request && s->sub == w->sub)
            return s;
    }
    if (a->nslots == a->cslots) {
        size_t n = a->cslots ? a->cslots * 2 : 8;
        struct slot *v = realloc(a->slots, n * sizeof(*v));

        if (!v)
            return NULL;
        a->slots = v;
        a->cslots = n;
    }
    s = &a->slots[a->nslots++];
    memset(s, 0, sizeof(*s));
    s->claim = w->claim;
    s->request = w->request;
    s->sub = w->sub;
    s->req = w->req;
    for (k = 0; k < CAT_N; k++)
        s->names[k] = (struct buf)BUF_INIT(1 << 16);
    return s;
}

static void add_name(struct acc *a, struct slot *s, enum cat c, const struct dra_why *w)
{
    const struct dra_device *d = w->device;
    char extra[700];

    extra[0] = '\0';
    if (s->ncat[c]++ >= WHY_NAMES)
        return;
    if (c == CAT_TAKEN) {
        char who[600];

        a->in->holder(a->in->ctx, d->id, who, sizeof(who));
        if (*who)
            snprintf(extra, sizeof(extra), " to %s", who);
    } else if (c == CAT_TAINT && w->index < d->ntaints) {
        const struct dra_taint *t = &d->taints[w->index];

        snprintf(extra, sizeof(extra), " (%s%s%s:%s)", t->key ? t->key : "",
                 t->value && *t->value ? "=" : "", t->value ? t->value : "",
                 t->effect ? t->effect : "");
    }
    if (buf_printf(&s->names[c], "%s%s/%s/%s%s", s->ncat[c] > 1 ? ", " : "", w->pool->driver,
                   w->pool->pool, d->name, extra))
        a->oom = 1;
}

static void on_why(void *ctx, const struct dra_why *w)
{
    struct acc *a = ctx;
    struct slot *s;

    if (a->oom)
        return;
    if (!w->device) {
        if (w->kind == DRA_WHY_POOL_INCOMPLETE)
            a->oom |= buf_printf(&a->pools,
                                 "pool %s/%s is incomplete (resourceSliceCount: some of its "
                                 "ResourceSlices are missing): none of its devices is used\n",
                                 w->pool->driver, w->pool->pool) != 0;
        else
            a->oom |= buf_printf(&a->pools, "pool %s/%s is invalid: %s\n", w->pool->driver,
                                 w->pool->pool, w->msg ? w->msg : "") != 0;
        return;
    }
    if (!(s = slot_of(a, w))) {
        a->oom = 1;
        return;
    }
    s->seen++;
    switch (w->kind) {
    case DRA_WHY_CLASS_SELECTOR:
        s->class_sel[w->index < WHY_SELS ? w->index : WHY_SELS - 1]++;
        return;
    case DRA_WHY_SELECTOR:
        s->sel[w->index < WHY_SELS ? w->index : WHY_SELS - 1]++;
        return;
    case DRA_WHY_CEL_ERROR:
        s->cel++;
        return;
    case DRA_WHY_NODE:
        s->node++;
        return;
    default:
        break;
    }
    s->matched++;
    switch (w->kind) {
    case DRA_WHY_FREE:
        s->free_++;
        break;
    case DRA_WHY_TAKEN:
        add_name(a, s, CAT_TAKEN, w);
        break;
    case DRA_WHY_TAINT:
        add_name(a, s, CAT_TAINT, w);
        break;
    case DRA_WHY_COUNTERS:
        add_name(a, s, CAT_COUNTERS, w);
        break;
    case DRA_WHY_CAPACITY:
        add_name(a, s, CAT_CAPACITY, w);
        break;
    default:
        add_name(a, s, CAT_OFF, w);
        break;
    }
}

/* the request's devices wanted, -1 for All */
static int64_t wanted(const struct dra_request *r)
{
    return r->mode == DRA_MODE_ALL ? -1 : r->count;
}

/* enough for the request alone */
static bool enough(const struct slot *s)
{
    int64_t n = wanted(s->req);

    return n < 0 ? s->matched > 0 && s->free_ == s->matched : s->free_ >= n;
}

static int claim_desc(struct buf *b, const struct dra_claim *c)
{
    if (!strcmp(c->name, "<extended-resources>"))
        return buf_printf(b, "the pod's extended-resource claim");
    return buf_printf(b, "claim %s/%s", c->ns, c->name);
}

static int print_sels(struct buf *b, const char *what, const int *counts,
                      const struct dra_selector *sels, size_t nsels, bool *first)
{
    size_t i;
    int rc = 0;

    for (i = 0; i < WHY_SELS && i < nsels && !rc; i++) {
        const char *e = sels[i].expr ? sels[i].expr : "";

        if (!counts[i])
            continue;
        rc = buf_printf(b, "%s%d fail%s %s selector #%zu (%.80s%s)", *first ? "" : ", ", counts[i],
                        counts[i] == 1 ? "s" : "", what, i, e, strlen(e) > 80 ? "..." : "");
        *first = false;
    }
    return rc;
}

static int print_slot(struct buf *b, const struct sched_dra_why_in *in, const struct slot *s)
{
    const struct dra_claim *c = &in->claims[s->claim];
    const struct dra_claim_request *cr = &c->requests[s->request];
    const struct dra_request *r = s->req;
    int64_t n = wanted(r);
    bool first = true;
    int rc, k;

    rc = claim_desc(b, c);
    if (!rc && cr->first_available)
        rc = buf_printf(b, ", request %s/%s (alternative %zu of %zu)", cr->name, r->name,
                        s->sub + 1, cr->nsubs);
    else if (!rc)
        rc = buf_printf(b, ", request %s", r->name);
    if (!rc && n < 0)
        rc = buf_printf(b, " wants all matching devices of class %s", r->class_name);
    else if (!rc)
        rc = buf_printf(b, " wants %lld device%s of class %s", (long long)n, n == 1 ? "" : "s",
                        r->class_name);
    if (!rc)
        rc = buf_printf(b, ": %d of %d devices match", s->matched, s->seen);
    if (!rc && s->matched < s->seen) {
        rc = buf_printf(b, " (");
        if (!rc && r->class)
            rc =
                print_sels(b, "the class's", s->class_sel, r->class->sels, r->class->nsels, &first);
        if (!rc)
            rc = print_sels(b, "the request's", s->sel, r->sels, r->nsels, &first);
        if (!rc && s->node) {
            rc = buf_printf(b, "%s%d not for this node (perDeviceNodeSelection)", first ? "" : ", ",
                            s->node);
            first = false;
        }
        if (!rc && s->cel)
            rc = buf_printf(b, "%s%d CEL runtime errors", first ? "" : ", ", s->cel);
        if (!rc)
            rc = buf_printf(b, ")");
    }
    if (!rc)
        rc = buf_printf(b, ", %d free\n", s->free_);
    for (k = 0; k < CAT_N && !rc; k++) {
        if (!s->ncat[k])
            continue;
        rc = buf_printf(b, "  %d %s: %s%s", s->ncat[k], cat_title[k],
                        s->names[k].data ? s->names[k].data : "",
                        s->ncat[k] > WHY_NAMES ? ", ..." : "");
        if (!rc)
            rc = buf_printf(b, "\n");
    }
    return rc;
}

/* dra_allocate on a copy of the claims: constraint k of claim c left out (k SIZE_MAX: none),
 * only claim only (SIZE_MAX: all); 1 allocated, 0 not, <0 */
static int try_alloc(const struct sched_dra_why_in *in, size_t c, size_t k, size_t only)
{
    struct dra_claim claims[DRA_CLAIMS_MAX];
    struct dra_constraint cons[DRA_RESULTS_MAX * 2];
    struct dra_claim_result *out;
    char msg[1024];
    size_t i, n = 0;
    int rc;

    for (i = 0; i < in->nclaims && i < DRA_CLAIMS_MAX; i++) {
        if (only != SIZE_MAX && i != only)
            continue;
        claims[n] = in->claims[i];
        if (i == c && k != SIZE_MAX && claims[n].nconstraints <= sizeof(cons) / sizeof(cons[0])) {
            size_t j, m = 0;

            for (j = 0; j < claims[n].nconstraints; j++)
                if (j != k)
                    cons[m++] = claims[n].constraints[j];
            claims[n].constraints = cons;
            claims[n].nconstraints = m;
        }
        n++;
    }
    if (!(out = calloc(n ? n : 1, sizeof(*out))))
        return -ENOMEM;
    rc = dra_allocate(in->f, in->node, in->pools, in->state, claims, n, in->ops, in->scratch, out,
                      msg, sizeof(msg));
    free(out);
    if (rc < 0)
        return rc;
    return rc == DRA_ALLOCATED;
}

static int print_constraint(struct buf *b, const struct dra_claim *c, size_t k)
{
    const struct dra_constraint *x = &c->constraints[k];
    size_t i;
    int rc;

    rc = buf_printf(b, "%s %s", x->kind == DRA_MATCH ? "matchAttribute" : "distinctAttribute",
                    x->attr ? x->attr : "");
    if (!rc && x->nrequests) {
        rc = buf_printf(b, " on requests ");
        for (i = 0; i < x->nrequests && !rc; i++)
            rc = buf_printf(b, "%s%s", i ? ", " : "", x->requests[i]);
    }
    return rc;
}

/* when every request alone finds its devices: which constraint, or the claims together */
static int conclude(struct buf *b, const struct sched_dra_why_in *in)
{
    size_t c, k;
    int rc = 0, ok;

    for (c = 0; c < in->nclaims && !rc; c++)
        for (k = 0; k < in->claims[c].nconstraints && !rc; k++) {
            ok = try_alloc(in, c, k, SIZE_MAX);
            if (ok < 0)
                return ok;
            if (!ok)
                continue;
            if (!(rc = buf_printf(b, "the constraint #%zu of ", k)))
                rc = claim_desc(b, &in->claims[c]);
            if (!rc)
                rc = buf_printf(b, " (");
            if (!rc)
                rc = print_constraint(b, &in->claims[c], k);
            if (!rc)
                rc = buf_printf(b, ") cannot be met: without it the devices would be found\n");
            return rc;
        }
    if (in->nclaims > 1)
        for (c = 0; c < in->nclaims && !rc; c++) {
            ok = try_alloc(in, SIZE_MAX, SIZE_MAX, c);
            if (ok < 0)
                return ok;
            if (!ok) {
                if (!(rc = claim_desc(b, &in->claims[c])))
                    rc = buf_printf(b, " cannot be allocated even alone%s\n",
                                    in->claims[c].nconstraints ? " (its constraints together, "
                                                                 "or its requests compete for "
                                                                 "the same devices)"
                                                               : ": its requests compete for "
                                                                 "the same devices");
                return rc;
            }
        }
    return buf_printf(b, "%s\n",
                      in->nclaims > 1
                          ? "each claim alone would be allocated here, but not all of them "
                            "together: they compete for the same devices"
                          : "each request alone finds enough free devices, but not all of them "
                            "together (the requests compete for the same devices, or the "
                            "constraints together cannot be met)");
}

char *sched_dra_why_text(const struct sched_dra_why_in *in)
{
    struct acc a;
    struct buf b = BUF_INIT(1 << 20);
    size_t i;
    bool all_enough = true;
    int rc, k;

    memset(&a, 0, sizeof(a));
    a.in = in;
    a.pools = (struct buf)BUF_INIT(1 << 16);
    rc = dra_why(in->f, in->node, in->pools, in->state, in->claims, in->nclaims, in->ops,
                 in->scratch, on_why, &a);
    if (!rc && a.oom)
        rc = -ENOMEM;
    if (!rc && a.pools.data)
        rc = buf_printf(&b, "%s", a.pools.data);
    if (!rc && !in->pools->n)
        rc = buf_printf(&b, "no ResourceSlice publishes devices this node can use\n");
    else if (!rc && !a.nslots && in->nclaims)
        rc = buf_printf(&b, "no complete, valid pool of devices is visible from this node\n");
    for (i = 0; i < a.nslots && !rc; i++) {
        rc = print_slot(&b, in, &a.slots[i]);
        if (!enough(&a.slots[i])) {
            const struct dra_claim_request *cr =
                &in->claims[a.slots[i].claim].requests[a.slots[i].request];

            /* a firstAvailable request needs one alternative only */
            if (!cr->first_available)
                all_enough = false;
        }
    }
    /* a firstAvailable request none of whose alternatives is enough */
    for (i = 0; i < a.nslots && !rc && all_enough; i++) {
        const struct dra_claim_request *cr =
            &in->claims[a.slots[i].claim].requests[a.slots[i].request];
        size_t j;
        bool any = false;

        if (!cr->first_available || a.slots[i].sub)
            continue;
        for (j = i; j < a.nslots && a.slots[j].claim == a.slots[i].claim &&
                    a.slots[j].request == a.slots[i].request;
             j++)
            any |= enough(&a.slots[j]);
        if (!any)
            all_enough = false;
    }
    if (!rc && all_enough && a.nslots && in->pools->n)
        rc = conclude(&b, in);
    for (i = 0; i < a.nslots; i++)
        for (k = 0; k < CAT_N; k++)
            buf_release(&a.slots[i].names[k]);
    free(a.slots);
    buf_release(&a.pools);
    if (rc) {
        buf_release(&b);
        return NULL;
    }
    if (!b.data && buf_printf(&b, "%s", ""))
        return NULL;
    return b.data;
}
