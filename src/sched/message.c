/* message.c - the FailedScheduling text: FitError.Error() of kube-scheduler.
 *
 *   "0/N nodes are available: " + histogram entries "<count> <reason>", sorted as whole
 *   strings (so "10 ..." sorts before "2 ...") and joined with ", ", + "."
 *
 * A PreFilter rejection replaces the histogram with its own message. The caller appends
 * " preemption: ..." when DefaultPreemption has something to say. */
#include "sched/message-int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "sched/cluster-int.h"
#include "sched/intern-int.h"
#include "sched/plugins-int.h"
#include "sched/sched-int.h"

int sched_hist_add(struct sched_hist *h, uint32_t reason, uint32_t n)
{
    if (reason == SCHED_NOID)
        return -ENOMEM;
    if (reason >= h->ncount) {
        uint32_t cap = (reason + 1) * 2, i;
        uint32_t *c = realloc(h->count, cap * sizeof(*c));
        uint32_t *t;
        if (!c)
            return -ENOMEM;
        h->count = c;
        if (!(t = realloc(h->touched, cap * sizeof(*t))))
            return -ENOMEM;
        h->touched = t;
        for (i = h->ncount; i < cap; i++)
            c[i] = 0;
        h->ncount = cap;
    }
    if (!h->count[reason])
        h->touched[h->ntouched++] = reason;
    h->count[reason] += n;
    return 0;
}

void sched_hist_release(struct sched_hist *h)
{
    free(h->count);
    free(h->touched);
    memset(h, 0, sizeof(*h));
}

uint32_t sched_fit_reason(struct sched_cluster *c, const struct sched_cpod *cp, unsigned bit)
{
    switch (bit) {
    case 0:
        return SCHED_R_TOO_MANY_PODS;
    case 1:
        return SCHED_R_CPU;
    case 2:
        return SCHED_R_MEMORY;
    case 3:
        return SCHED_R_EPHEMERAL;
    default:
        return sched_reason_insufficient(c, cp->scalars[bit - SCHED_FIT_SCALAR0].rid);
    }
}

int sched_hist_add_status(struct sched_hist *h, struct sched_cluster *c,
                          const struct sched_cpod *cp, uint32_t plugin, uint32_t reason, uint32_t n)
{
    unsigned b;
    int rc;

    if (plugin == SCHED_PL_VOLUME_BINDING) {
        const char *r[4];
        size_t i, k = sched_volumebinding_reasons(reason, r);
        for (i = 0; i < k; i++)
            if ((rc = sched_hist_add(h, sched_intern_add(&c->reasons, r[i]), n)))
                return rc;
        return 0;
    }
    if (plugin != SCHED_PL_FIT)
        return sched_hist_add(h, reason, n);
    for (b = 0; b < 32; b++)
        if ((reason >> b & 1) && (rc = sched_hist_add(h, sched_fit_reason(c, cp, b), n)))
            return rc;
    return 0;
}

int sched_hist_add_node(struct sched_hist *h, struct sched_cluster *c, const struct sched_cpod *cp,
                        const struct sched_nodeout *o)
{
    return sched_hist_add_status(h, c, cp, o->plugin, o->reason, 1);
}

int sched_hist_add_nodes(struct sched_hist *h, struct sched_cluster *c, const struct sched_cpod *cp,
                         const struct sched_nodeout *out, uint32_t n, uint32_t *resolvable)
{
    /* the distinct (plugin, reason) pairs with their counts: a cycle's thousands of rows
     * usually share a handful of statuses */
    struct {
        uint32_t plugin, reason, n;
    } t[32];
    uint32_t nt = 0, last = 0, i, k, nres = 0;
    int rc;

    for (i = 0; i < n; i++) {
        uint32_t pl = out[i].plugin, r = out[i].reason;
        nres += pl && !out[i].unresolvable;
        if (nt && t[last].plugin == pl && t[last].reason == r) {
            t[last].n++;
            continue;
        }
        for (k = 0; k < nt && (t[k].plugin != pl || t[k].reason != r); k++)
            ;
        if (k == nt) {
            if (nt == sizeof(t) / sizeof(t[0])) {
                for (k = 0; k < nt; k++)
                    if ((rc = sched_hist_add_status(h, c, cp, t[k].plugin, t[k].reason, t[k].n)))
                        return rc;
                nt = k = 0;
            }
            t[nt].plugin = pl;
            t[nt].reason = r;
            t[nt++].n = 0;
        }
        t[k].n++;
        last = k;
    }
    for (k = 0; k < nt; k++)
        if ((rc = sched_hist_add_status(h, c, cp, t[k].plugin, t[k].reason, t[k].n)))
            return rc;
    if (resolvable)
        *resolvable = nres;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char *sched_fit_error(const struct sched_cluster *c, uint32_t nall, const struct sched_hist *h,
                      const char *prefilter_msg)
{
    struct buf msg = BUF_INIT(0);
    char **entries = NULL, *m = NULL;
    size_t i;
    int rc;

    if (prefilter_msg)
        return buf_fmt("0/%u nodes are available: %s.", nall, prefilter_msg);
    if (h->ntouched && !(entries = calloc(h->ntouched, sizeof(*entries))))
        return NULL;
    for (i = 0; i < h->ntouched; i++)
        if (!(entries[i] =
                  buf_fmt("%u %s", h->count[h->touched[i]], c->reasons.strs[h->touched[i]])))
            goto out;
    qsort(entries, h->ntouched, sizeof(*entries), cmp_str);
    rc = buf_printf(&msg, "0/%u nodes are available:", nall);
    for (i = 0; !rc && i < h->ntouched; i++)
        rc = buf_printf(&msg, "%s%s", i ? ", " : " ", entries[i]);
    if (!rc && !(rc = buf_puts(&msg, ".")))
        m = buf_take(&msg);
out:
    buf_release(&msg);
    for (i = 0; entries && i < h->ntouched; i++)
        free(entries[i]);
    free(entries);
    return m;
}

/* ---- texts that changed between kube-scheduler versions (v1.37's by default) ----
 *
 * One place for the wording choices, so a --kube-version switch can pick older ones:
 * - TaintToleration: v1.35+ "node(s) had untolerated taint(s)" (the default, 0), v1.25-v1.34
 *   "node(s) had untolerated taint {KEY: VALUE}": struct sched_profile's taint_wording, read
 *   where the reason is interned (cluster.c, sched_reason_taint);
 * - DefaultPreemption's successful PostFilter: "preemption: found a potential placement for
 *   pod on node N, preempting K victims" (no final period), appended to the
 *   FailedScheduling text; older versions appended nothing;
 * - DynamicResources' PostFilter (v1.34+ default on) adds no text in v1.37.2. */
char *sched_msg_preemption_found(const char *node, uint32_t nvictims)
{
    return buf_fmt("preemption: found a potential placement for pod on node %s, preempting %u "
                   "victims",
                   node, nvictims);
}
