/* dra_alloc_select.c - whether a device may serve a request, as isSelectable and allocateDevice
 * check it: the class's and the request's CEL selectors (each answer kept for the call in the
 * scratch's memo), a per-device node selection, and the device's taints against the request's
 * tolerations (ToleratesTaint). */
#include "sched/dra_alloc-int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
int dra_claim_selectors_match(struct alloc *a, size_t claim, const struct dra_device *d,
                              const struct dra_pool *p, const struct dra_class *class,
                              const struct dra_selector *sels, size_t nsels)
{
    const struct dra_claim *cl = &a->claims[claim];

    return dra_selectors_match(a->f, a->ops, class ? class->name : NULL, cl->ns, cl->name, sels,
                               nsels, d, p->driver, p->pool, a->msg, a->msgsize);
}

/* isSelectable: 1, 0, -1 (a->msg), -ENOMEM */
int dra_is_selectable(struct alloc *a, size_t c, size_t r, size_t sub, const struct reqdata *rd,
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
        m = dra_claim_selectors_match(a, c, d, p, rd->req->class, rd->req->class->sels,
                                      rd->req->class->nsels);
        if (m < 0)
            return -1;
        if (!m)
            return memo_put(a, key, false) ? -ENOMEM : 0;
    }
    m = dra_claim_selectors_match(a, c, d, p, NULL, rd->req->sels, rd->req->nsels);
    if (m < 0)
        return -1;
    if (!m)
        return memo_put(a, key, false) ? -ENOMEM : 0;
    if (slice->per_device) {
        char inner[600];

        inner[0] = '\0';
        m = dra_node_matches(a->ops, a->node_name, &d->sel, inner, sizeof(inner));
        if (m < 0) {
            msgf(a->msg, a->msgsize, "%s", inner);
            return -1;
        }
        if (!m)
            return memo_put(a, key, false) ? -ENOMEM : 0;
    }
    return memo_put(a, key, true) ? -ENOMEM : 1;
}

/* the first NoSchedule/NoExecute taint of d that r does not tolerate, or -1 */
int dra_untolerated_taint(const struct dra_device *d, const struct dra_request *r)
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

bool dra_taint_prevents(const struct dra_device *d, const struct dra_request *r)
{
    return dra_untolerated_taint(d, r) >= 0;
}
