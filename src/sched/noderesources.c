/* noderesources.c - kube-scheduler's noderesources plugins: NodeResourcesFit (the Filter,
 * fitsRequest; the Score under its scoringStrategy) and NodeResourcesBalancedAllocation, in
 * kube-scheduler's integer (and, for BalancedAllocation, float64) arithmetic, so that totals
 * match to the point; and GPUPlacement, the "gpu" profile's score, MostAllocated on a node's
 * GPUs (a device plugin's and DRA's), beside the formula it reuses. MaxNodeScore is 100. */
#include "sched/plugins-int.h"

#include <math.h>
#include <string.h>

#include "sched/cluster-int.h"
#include "sched/intern-int.h"
#include "sched/sched-int.h"

#define MAX_NODE_SCORE 100

/* NodeResourcesFit's fitsRequest. scalar_req[j] is the node's requested amount of the pod's
 * scalar j (NULL: read the node's current usage). */
uint32_t sched_noderesources_filter(const struct sched_cluster *c, uint32_t slot,
                                    const struct sched_cpod *cp, const struct sched_nodeuse *use,
                                    const int64_t *scalar_req, bool *unresolvable)
{
    const struct sched_hot *h = &c->hot[slot];
    uint32_t m = 0, j;
    bool un = false;

    if (use->npods + 1 > h->alloc_pods)
        m |= SCHED_FIT_PODS;
    if (!cp->all_zero) {
        if (cp->cpu > 0 && cp->cpu > h->alloc_cpu - use->req_cpu) {
            m |= SCHED_FIT_CPU;
            un |= cp->cpu > h->alloc_cpu;
        }
        if (cp->mem > 0 && cp->mem > h->alloc_mem - use->req_mem) {
            m |= SCHED_FIT_MEM;
            un |= cp->mem > h->alloc_mem;
        }
        if (cp->eph > 0 && cp->eph > h->alloc_eph - use->req_eph) {
            m |= SCHED_FIT_EPH;
            un |= cp->eph > h->alloc_eph;
        }
        for (j = 0; j < cp->nscalars; j++) {
            int64_t alloc, req;
            if (cp->scalars[j].rid == c->rid_gpu) {
                alloc = h->alloc_gpu;
                req = scalar_req ? scalar_req[j] : use->req_gpu;
            } else {
                const struct sched_scalar *x =
                    sched_slot_scalar(&c->slots[slot], cp->scalars[j].rid);
                alloc = x ? x->alloc : 0;
                req = scalar_req ? scalar_req[j] : x ? x->req : 0;
            }
            if (alloc <= 0 && cp->dra_delegated >> j & 1)
                continue; /* shouldDelegateResourceToDRA: DynamicResources' to check */
            if (cp->scalars[j].req > alloc - req) {
                m |= 1u << (SCHED_FIT_SCALAR0 + j);
                un |= cp->scalars[j].req > alloc;
            }
        }
    }
    *unresolvable = un;
    return m;
}

static int64_t least_requested(int64_t req, int64_t cap)
{
    if (cap == 0 || req > cap)
        return 0;
    return (cap - req) * MAX_NODE_SCORE / cap;
}

static int64_t most_requested(int64_t req, int64_t cap)
{
    if (cap == 0)
        return 0;
    if (req > cap)
        req = cap;
    return req * MAX_NODE_SCORE / cap;
}

/* LeastAllocated over cpu and memory, requested = node non-zero requested + pod non-zero */
int64_t sched_noderesources_least_allocated(int64_t alloc_cpu, int64_t req_cpu, int64_t alloc_mem,
                                            int64_t req_mem)
{
    int64_t score = 0, weights = 0;

    if (alloc_cpu != 0) {
        score += least_requested(req_cpu, alloc_cpu);
        weights++;
    }
    if (alloc_mem != 0) {
        score += least_requested(req_mem, alloc_mem);
        weights++;
    }
    return weights ? score / weights : 0;
}

/* balancedResourceScore: (1 - std) * 100 over the fractions requested/allocatable of cpu and
 * memory, each capped at 1, a resource with allocatable 0 left out */
static int64_t balance(int64_t alloc_cpu, int64_t req_cpu, int64_t alloc_mem, int64_t req_mem)
{
    double f[2], std = 0;
    int n = 0;

    if (alloc_cpu != 0) {
        f[n] = (double)req_cpu / (double)alloc_cpu;
        if (f[n] > 1)
            f[n] = 1;
        n++;
    }
    if (alloc_mem != 0) {
        f[n] = (double)req_mem / (double)alloc_mem;
        if (f[n] > 1)
            f[n] = 1;
        n++;
    }
    if (n == 2)
        std = fabs((f[0] - f[1]) / 2);
    return (int64_t)((1 - std) * (double)MAX_NODE_SCORE);
}

/* BalancedAllocation (v1.37's balancedResourceScorer): the change in balance the pod brings,
 * 50 + (50 + balance(with the pod) - balance(without)) / 2, so 75 when it changes nothing */
int64_t sched_noderesources_balanced(int64_t alloc_cpu, int64_t node_cpu, int64_t pod_cpu,
                                     int64_t alloc_mem, int64_t node_mem, int64_t pod_mem)
{
    int64_t with = balance(alloc_cpu, node_cpu + pod_cpu, alloc_mem, node_mem + pod_mem);
    int64_t without = balance(alloc_cpu, node_cpu, alloc_mem, node_mem);

    return MAX_NODE_SCORE / 2 + (MAX_NODE_SCORE / 2 + with - without) / 2;
}

/* GPUPlacement (our "gpu" profile): MostAllocated on the node's GPUs for GPU pods; for other
 * pods 0 on GPU nodes and 100 elsewhere. The GPUs, a device plugin's and DRA's: below. */
int64_t sched_noderesources_gpu(const struct sched_profile *p, int64_t alloc_gpu, int64_t req_gpu,
                                int64_t pod_gpu)
{
    int64_t sum;

    (void)p;
    if (pod_gpu > 0)
        return most_requested(__builtin_add_overflow(req_gpu, pod_gpu, &sum) ? INT64_MAX : sum,
                              alloc_gpu);
    return alloc_gpu > 0 ? 0 : MAX_NODE_SCORE;
}

static const char *gpu_name(const struct sched_profile *p)
{
    return p && p->gpu_resource ? p->gpu_resource : "nvidia.com/gpu";
}

void sched_noderesources_gpu_prepare(const struct sched_cluster *c, const struct sched_profile *p,
                                     const struct kube_pod *pod, struct sched_cpod *cp)
{
    const struct sched_dra_pod_in *in;
    struct sched_dra_pod_in own;

    cp->gpu_dra = false;
    if (!p || !p->gpu_aware || !c->dra || !sched_dra_delegates(c->dra, gpu_name(p)))
        return;
    cp->gpu_dra = true;
    if (!pod->nresource_claims)
        return;
    if (!(in = sched_dra_pod_lookup(c->dra, pod->namespace_, pod->name))) {
        /* a pod the world does not list: its claims by name (templates' claims unknown) */
        memset(&own, 0, sizeof(own));
        own.namespace_ = pod->namespace_;
        own.name = pod->name;
        own.uid = pod->uid;
        own.claims = kube_pod_ext(pod)->resource_claims;
        own.nclaims = pod->nresource_claims;
        own.pod = pod;
        in = &own;
    }
    cp->gpu = sched_sat_add(cp->gpu, sched_dra_pod_class_demand(c->dra, in, gpu_name(p)));
}

void sched_noderesources_gpu_dra(const struct sched_cluster *c, const struct sched_profile *p,
                                 uint32_t slot, int64_t *alloc, int64_t *req)
{
    int64_t total, used;

    sched_dra_extended_totals(c->dra, gpu_name(p),
                              sched_dra_node_at(c->dra, slot, c->slots[slot].name), &total, &used);
    sched_noderesources_gpu_node(total, used, alloc, req);
}

void sched_noderesources_gpu_node(int64_t dra_total, int64_t dra_used, int64_t *alloc, int64_t *req)
{
    if (dra_total <= 0)
        return;
    if (*alloc <= 0)
        *req = 0; /* requests of a resource the node lacks: DRA's, among dra_used */
    *alloc = sched_sat_add(*alloc, dra_total);
    *req = sched_sat_add(*req, dra_used);
}

int sched_noderesources_kind(const char *name)
{
    if (!strcmp(name, "cpu"))
        return 0;
    if (!strcmp(name, "memory"))
        return 1;
    if (!strcmp(name, "ephemeral-storage"))
        return 2;
    return 3;
}

/* helper.BuildBrokenLinearFunction over shape points scaled to MaxNodeScore */
static int64_t broken_linear(const struct sched_profile *p, int64_t u)
{
    uint32_t i;

    for (i = 0; i < p->nshape; i++) {
        if (u <= p->shape[i].utilization) {
            int64_t s1 = p->shape[i].score * 10, s0, u0;
            if (i == 0)
                return s1;
            s0 = p->shape[i - 1].score * 10;
            u0 = p->shape[i - 1].utilization;
            return s0 + (s1 - s0) * (u - u0) / (p->shape[i].utilization - u0);
        }
    }
    return p->nshape ? p->shape[p->nshape - 1].score * 10 : 0;
}

int64_t sched_noderesources_score(const struct sched_profile *p, const int64_t *alloc,
                                  const int64_t *req)
{
    int64_t score = 0, weights = 0, s;
    uint32_t i;

    for (i = 0; i < p->nfit_resources; i++) {
        int64_t w = p->fit_resources[i].weight;
        if (alloc[i] == 0)
            continue;
        switch (p->fit_strategy) {
        case SCHED_FIT_LEAST_ALLOCATED:
            s = least_requested(req[i], alloc[i]);
            break;
        case SCHED_FIT_MOST_ALLOCATED:
            s = most_requested(req[i], alloc[i]);
            break;
        default:
            s = req[i] > alloc[i] ? broken_linear(p, 100)
                                  : broken_linear(p, (int64_t)((uint64_t)req[i] * 100u) / alloc[i]);
            if (s <= 0)
                continue;
            break;
        }
        score += s * w;
        weights += w;
    }
    if (!weights)
        return 0;
    if (p->fit_strategy == SCHED_FIT_REQUESTED_TO_CAPACITY_RATIO)
        return (int64_t)llround((double)score / (double)weights);
    return score / weights;
}

/* NodeResourcesFit's score under a --config scoringStrategy (the resource values
 * as kube-scheduler's calculateNodeAllocatableRequest takes them: non-zero requests for cpu
 * and memory, requests for the others; an extended resource the pod does not request, or the
 * node lacks, left out, unless a DeviceClass serves it: then its devices on the node count) */
int32_t sched_noderesources_score_node(const struct sched_cluster *c, const struct sched_profile *p,
                                       const struct sched_cpod *cp, uint32_t slot)
{
    const struct sched_hot *h = &c->hot[slot];
    int64_t alloc[SCHED_MAX_FIT_RESOURCES], req[SCHED_MAX_FIT_RESOURCES];
    uint32_t i, k, rid;

    for (i = 0; i < p->nfit_resources; i++) {
        const char *name = p->fit_resources[i].name;
        const struct sched_scalar *x;
        int64_t podreq = 0;
        alloc[i] = req[i] = 0;
        switch (sched_noderesources_kind(name)) {
        case 0:
            alloc[i] = h->alloc_cpu;
            req[i] = sched_sat_add(h->nz_cpu, cp->nz_cpu);
            break;
        case 1:
            alloc[i] = h->alloc_mem;
            req[i] = sched_sat_add(h->nz_mem, cp->nz_mem);
            break;
        case 2:
            alloc[i] = h->alloc_eph;
            req[i] = sched_sat_add(h->req_eph, cp->eph);
            break;
        default:
            rid = sched_intern_find(&c->strs, name);
            for (k = 0; rid != SCHED_NOID && k < cp->nscalars; k++)
                if (cp->scalars[k].rid == rid)
                    podreq = cp->scalars[k].req;
            if (!podreq)
                break;
            x = sched_slot_scalar(&c->slots[slot], rid);
            if ((!x || !x->alloc) && c->dra) {
                /* calculateDRAExtendedResourceAllocatableRequest: a DeviceClass's devices */
                int64_t total, used;
                sched_dra_extended_totals(c->dra, name,
                                          sched_dra_node_at(c->dra, slot, c->slots[slot].name),
                                          &total, &used);
                if (total > 0) {
                    alloc[i] = total;
                    req[i] = sched_sat_add(used, podreq);
                    break;
                }
            }
            if (x) {
                alloc[i] = x->alloc;
                req[i] = sched_sat_add(x->req, podreq);
            }
            break;
        }
    }
    return (int32_t)sched_noderesources_score(p, alloc, req);
}
