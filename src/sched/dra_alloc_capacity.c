/* dra_alloc_capacity.c - consumable capacity (consumable_capacity.go, CmpRequestOverCapacity):
 * what a request consumes of a device's capacity under its request policy, and whether that
 * fits beside what other claims and this call's earlier shares hold. */
#include "sched/dra_alloc-int.h"

#include <stdint.h>
#include <string.h>

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
int dra_consumed_for(const kube_nano *req, const struct dra_capacity *cap, bool fractional,
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

const kube_nano *dra_req_cap(const struct dra_request *r, const char *name)
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
int dra_capacity_fits(const struct alloc *a, const struct dra_request *r,
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

        if (dra_consumed_for(dra_req_cap(r, d->caps[i].name), &d->caps[i],
                             a->f->fractional_capacity_range, &consumed[i], inner, sizeof(inner))) {
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
