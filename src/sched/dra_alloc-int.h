/* dra_alloc-int.h - what the structured allocator's files share (its API is dra_alloc.h): the
 * scratch a caller reuses, the state of one Allocate call (struct alloc), and what each file
 * offers the others. dra_alloc_search.c runs the search; dra_alloc_pools.c gathers the pools;
 * dra_alloc_select.c, dra_alloc_constraint.c, dra_alloc_counters.c and dra_alloc_capacity.c
 * answer for one device; dra_alloc_why.c is explain's. */
#ifndef SCHED_DRA_ALLOC_INT_H
#define SCHED_DRA_ALLOC_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sched/dra_alloc.h"

/* nz is s, or "" for NULL */
static inline const char *nz(const char *s)
{
    return s ? s : "";
}

/* msgf formats into msg (size bytes) unless it is NULL or empty */
static inline void msgf(char *msg, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void msgf(char *msg, size_t size, const char *fmt, ...)
{
    va_list ap;

    if (!msg || !size)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
}

/* ---------------------------------------------------------------- the scratch, one call ---- */

/* what this call's shares hold of one device's capacity */
struct capvec {
    uint32_t id;
    bool present;
    size_t n;
    struct dra_consumed items[16];
};

/* one selector answer of this call, for a (device, request) */
struct memo_slot {
    uint64_t key; /* 0: empty (keys are id+1 << 32 | request key) */
    uint8_t val;
};

/* what a caller reuses across calls (dra_scratch_new, dra_scratch_free) */
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

/* one pool's counters in this call (dra_alloc_counters.c) */
struct pool_counters {
    bool ready;
    kube_nano *avail, *used; /* per set and counter */
    size_t *off;             /* per set: its first counter's index */
};

/* one dra_allocate (or dra_why) call: its inputs, the scratch, the call's tables */
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

/* the capacity this call's shares hold of device id, or NULL */
static inline struct capvec *acap_find(const struct alloc *a, uint32_t id)
{
    size_t i;

    for (i = 0; i < a->s->nacap; i++)
        if (a->s->acap[i].id == id && a->s->acap[i].present)
            return &a->s->acap[i];
    return NULL;
}

/* ---- dra_alloc_search.c ---- */

/* dra_alloc_begin sets a up for one call (dra_allocate, dra_why): its inputs, msg emptied, the
 * scratch sized for the pools' device ids (counted once per gathered pools) and reset; 0 or
 * -ENOMEM. The call's tables are the caller's to take from the scratch (dra_scratch_table) */
int dra_alloc_begin(struct alloc *a, const struct dra_features *f, const char *node_name,
                    struct dra_pools *pools, const struct dra_state *state,
                    const struct dra_claim *claims, size_t nclaims, const struct dra_ops *ops,
                    struct dra_scratch *scratch, struct dra_claim_result *out, char *msg,
                    size_t msgsize);
/* dra_scratch_prepare sizes s for device ids below nids; 0 or -ENOMEM */
int dra_scratch_prepare(struct dra_scratch *s, size_t nids);
/* dra_scratch_reset forgets what the previous call marked and memoized */
void dra_scratch_reset(struct dra_scratch *s);
/* dra_scratch_table is the scratch table *buf of n zeroed elements of size, grown as needed;
 * NULL when out of memory */
void *dra_scratch_table(void **buf, size_t *cap, size_t n, size_t size);
/* dra_alloc_release frees what a call's tables hold (not the tables: the scratch's) */
void dra_alloc_release(struct alloc *a);
/* dra_capacity_in_use: some claim, or this call, holds capacity of device id */
bool dra_capacity_in_use(const struct alloc *a, uint32_t id);

/* ---- dra_alloc_pools.c ---- */

/* dra_node_matches is NodeMatches: 1, 0, or -1 with msg */
int dra_node_matches(const struct dra_ops *ops, const char *node_name,
                     const struct dra_node_sel *sel, char *msg, size_t size);

/* ---- dra_alloc_select.c ---- */

/* dra_claim_selectors_match is selectorsMatch on device d for claim's request: 1, 0, or -1
 * with a->msg */
int dra_claim_selectors_match(struct alloc *a, size_t claim, const struct dra_device *d,
                              const struct dra_pool *p, const struct dra_class *class,
                              const struct dra_selector *sels, size_t nsels);
/* dra_is_selectable is isSelectable: 1, 0, -1 (a->msg), -ENOMEM */
int dra_is_selectable(struct alloc *a, size_t c, size_t r, size_t sub, const struct reqdata *rd,
                      const struct dra_slice *slice, const struct dra_device *d,
                      const struct dra_pool *p);
/* dra_untolerated_taint is the first NoSchedule/NoExecute taint of d that r does not
 * tolerate, or -1; dra_taint_prevents whether there is one */
int dra_untolerated_taint(const struct dra_device *d, const struct dra_request *r);
bool dra_taint_prevents(const struct dra_device *d, const struct dra_request *r);

/* ---- dra_alloc_constraint.c ---- */

/* dra_constraint_add: 1 when device d (of request base, subrequest sub) may join, 0 when it
 * may not, -ENOMEM; dra_constraint_remove takes it back */
int dra_constraint_add(struct cstate *st, const char *base, const char *sub,
                       const struct dra_device *d, const char *driver, bool by_request);
void dra_constraint_remove(struct cstate *st, const char *base, const char *sub, bool by_request);

/* ---- dra_alloc_counters.c ---- */

void dra_cons_table_free(struct dra_cons_table *t);
/* dra_counters_apply adds (sign 1) or removes (-1) device d's consumption */
void dra_counters_apply(struct alloc *a, const struct dra_pool *p, struct pool_counters *pc,
                        const struct dra_device *d, int sign);
/* dra_counters_check is checkAvailableCounters: 1 ok (reserved), 0 not enough, -ENOMEM */
int dra_counters_check(struct alloc *a, const struct alldev *dev);

/* ---- dra_alloc_capacity.c ---- */

/* dra_consumed_for is calculateConsumedCapacity; -1 with a message for unrepresentable
 * requests */
int dra_consumed_for(const kube_nano *req, const struct dra_capacity *cap, bool fractional,
                     kube_nano *out, char *msg, size_t size);
/* dra_req_cap is the quantity request r asks of capacity name, or NULL */
const kube_nano *dra_req_cap(const struct dra_request *r, const char *name);
/* dra_capacity_fits is CmpRequestOverCapacity: 1 fits, 0 does not, -1 error (msg) */
int dra_capacity_fits(const struct alloc *a, const struct dra_request *r,
                      const struct dra_device *d, bool with_state, char *msg, size_t size);

#endif
