/* rules.c - the shared rules of Kubernetes over the object model (see rules.h). */
#include "kube/rules.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/labels.h"

int64_t kube_resources_scalar(const struct kube_resources *r, const char *name)
{
    size_t lo = 0, hi = r ? r->nscalars : 0;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(r->scalars[mid].name, name);

        if (c == 0)
            return r->scalars[mid].value;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

bool kube_toleration_tolerates(const struct kube_toleration *t, const struct kube_taint *taint)
{
    if (t->effect != KUBE_EFFECT_ANY && t->effect != taint->effect)
        return false;
    if (t->key && t->key[0] && strcmp(t->key, taint->key ? taint->key : ""))
        return false;
    if (t->op == KUBE_TOL_EXISTS)
        return true;
    return !strcmp(t->value ? t->value : "", taint->value ? taint->value : "");
}

bool kube_node_selector_term_matches(const struct kube_node_selector_term *t,
                                     const struct kube_node *node)
{
    size_t i;

    if (!t->nexprs && !t->nfields)
        return false;
    for (i = 0; i < t->nexprs; i++)
        if (!kube_requirement_matches(&t->exprs[i], &node->labels))
            return false;
    if (t->nfields && node->name && node->name[0]) {
        struct kube_label f = {"metadata.name", node->name};
        struct kube_labels fields = {&f, 1};

        for (i = 0; i < t->nfields; i++)
            if (!kube_requirement_matches(&t->fields[i], &fields))
                return false;
    } else {
        for (i = 0; i < t->nfields; i++)
            if (t->fields[i].invalid)
                return false;
    }
    return true;
}

bool kube_node_selector_matches(const struct kube_node_selector *s, const struct kube_node *node)
{
    size_t i;

    for (i = 0; i < s->nterms; i++)
        if (kube_node_selector_term_matches(&s->terms[i], node))
            return true;
    return false;
}

bool kube_pod_phase_terminal(const char *phase)
{
    return phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
}

/* Pod requests are computed on dense vectors: the four native resources, then the union of
 * the scalar names. A pod names few scalars: the vectors live on the stack up to
 * REQ_STACK_NAMES of them. */
#define NNATIVE 4
#define REQ_STACK_NAMES 16

/* sat_add: requests are non-negative and each fits in int64 (binary quantities are capped
 * at 2^63-1 like maxAllowed), but their sum may not: it saturates instead of overflowing.
 * Kubernetes switches to arbitrary precision there; a saturated total compares the same
 * against any node. */
static void sat_add(int64_t *dst, int64_t v)
{
    if (__builtin_add_overflow(*dst, v, dst))
        *dst = v > 0 ? INT64_MAX : INT64_MIN;
}

/* rvec_add_res adds a container's requests (r) to v; dflt, when given, stands in for a
 * missing cpu or memory request. */
static void rvec_add_res(int64_t *v, const struct kube_resources *r,
                         const struct kube_requests_opts *dflt, const char *const *names,
                         size_t nnames)
{
    size_t i, j = 0;

    sat_add(&v[0], dflt && !(r->set & KUBE_RES_CPU) ? dflt->default_cpu_milli : r->cpu_milli);
    sat_add(&v[1], dflt && !(r->set & KUBE_RES_MEMORY) ? dflt->default_memory : r->memory);
    sat_add(&v[2], r->ephemeral);
    sat_add(&v[3], r->pods);
    /* both sorted: merge walk */
    for (i = 0; i < r->nscalars; i++) {
        while (j < nnames && strcmp(names[j], r->scalars[i].name) < 0)
            j++;
        if (j < nnames && !strcmp(names[j], r->scalars[i].name))
            sat_add(&v[NNATIVE + j], r->scalars[i].value);
    }
}

static void rvec_max(int64_t *dst, const int64_t *src, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (src[i] > dst[i])
            dst[i] = src[i];
}

/* An empty resource list: what a container reports when its status gives nothing and the
 * spec is not counted. */
static const struct kube_resources no_requests;

static bool res_given(const struct kube_resources *r)
{
    return r->set || r->nscalars;
}

/* pod_nlists: how many lists pod_list numbers. */
static size_t pod_nlists(const struct kube_pod *p)
{
    size_t nc = p->ncontainers + p->ninit_containers;

    return nc + 3 + (kube_pod_ext(p)->status ? 2 * nc + 2 : 0);
}

/* pod_list returns the i-th resource list of p: containers, init containers, overhead, the
 * pod-level requests and limits, then, when the status is kept, each container's allocated
 * and actuated lists and the pod-level actuated and allocated ones (only the names of the
 * lists after the overhead are collected by kube_pod_requests). */
static const struct kube_resources *pod_list(const struct kube_pod *p, size_t i)
{
    const struct kube_pod_extra *x = kube_pod_ext(p);
    size_t nc = p->ncontainers + p->ninit_containers;

    if (i < p->ncontainers)
        return &p->containers[i].requests;
    if (i < nc)
        return &p->init_containers[i - p->ncontainers].requests;
    if (i == nc)
        return &x->overhead;
    if (i == nc + 1)
        return &x->pod_requests;
    if (i == nc + 2)
        return &x->pod_limits;
    i -= nc + 3;
    if (i < 2 * nc) {
        if (!x->status->containers)
            return &no_requests;
        return i % 2 ? &x->status->containers[i / 2].actuated
                     : &x->status->containers[i / 2].allocated;
    }
    return i == 2 * nc ? &x->status->pod_actuated : &x->status->pod_allocated;
}

/* Which list of a container a sum reads: resourcehelper's containerSpecRequests,
 * containerAllocatedRequests and containerActuatedRequests. */
enum req_source { REQ_SPEC, REQ_ALLOCATED, REQ_ACTUATED };

/* container_requests returns the list source reads of p's i-th container (containers, then
 * init containers). The status's lists fall back as the kubelet fills them: actuated, then
 * allocated, then the spec, except that a resize found infeasible leaves the spec out (an
 * empty list: the container adds nothing, or only the defaults). */
static const struct kube_resources *container_requests(const struct kube_pod *p, size_t i,
                                                       enum req_source src)
{
    const struct kube_pod_status_resources *st = kube_pod_ext(p)->status;
    const struct kube_container_status *cs = st && st->containers ? &st->containers[i] : NULL;

    if (src == REQ_ACTUATED && cs && res_given(&cs->actuated))
        return &cs->actuated;
    if (src != REQ_SPEC && cs && res_given(&cs->allocated))
        return &cs->allocated;
    if (src != REQ_SPEC && st && st->resize_infeasible)
        return &no_requests;
    return i < p->ncontainers ? &p->containers[i].requests
                              : &p->init_containers[i - p->ncontainers].requests;
}

/* The dense vectors of one kube_pod_requests: n = NNATIVE + nnames entries each; side,
 * initmax and tmp are containers_sum's scratch. */
struct req_vecs {
    const char *const *names;
    size_t nnames, n;
    int64_t *side, *initmax, *tmp;
};

/* containers_sum puts into sum the requests of p's containers as src reads them, added up
 * as the sidecar rule says (AggregateContainerRequests): the containers and sidecars
 * together, or, where more, one init container with the sidecars started before it. set gets
 * the KUBE_RES_* bits of the lists read. */
static void containers_sum(const struct kube_pod *p, enum req_source src,
                           const struct kube_requests_opts *dflt, const struct req_vecs *v,
                           int64_t *sum, unsigned *set)
{
    size_t i, n = v->n;

    memset(sum, 0, n * sizeof(*sum));
    memset(v->side, 0, n * sizeof(*sum));
    memset(v->initmax, 0, n * sizeof(*sum));
    for (i = 0; i < p->ncontainers; i++) {
        const struct kube_resources *r = container_requests(p, i, src);

        *set |= r->set;
        rvec_add_res(sum, r, dflt, v->names, v->nnames);
    }
    for (i = 0; i < p->ninit_containers; i++) {
        const struct kube_resources *r = container_requests(p, p->ncontainers + i, src);

        *set |= r->set;
        if (p->init_containers[i].restart_always) {
            rvec_add_res(sum, r, dflt, v->names, v->nnames);
            rvec_add_res(v->side, r, dflt, v->names, v->nnames);
            rvec_max(v->initmax, v->side, n);
        } else {
            memcpy(v->tmp, v->side, n * sizeof(*sum));
            rvec_add_res(v->tmp, r, dflt, v->names, v->nnames);
            rvec_max(v->initmax, v->tmp, n);
        }
    }
    rvec_max(sum, v->initmax, n);
}

/* pod_containers_sum puts into sum what kube-scheduler counts of p's containers
 * (AggregateContainerRequests with UseStatusResources): the spec's sum and, when use_status
 * and the pod's status is kept, per resource the larger of it and what the status reports.
 * The status's pod-level lists stand for the containers when both are given (read as they
 * are: no defaults); otherwise the sums of the containers' allocated and of their actuated
 * lists. A resize found infeasible leaves the spec's sum out. scratch holds n entries. */
static void pod_containers_sum(const struct kube_pod *p, bool use_status,
                               const struct kube_requests_opts *dflt, const struct req_vecs *v,
                               int64_t *sum, int64_t *scratch, unsigned *set)
{
    const struct kube_pod_status_resources *st = use_status ? kube_pod_ext(p)->status : NULL;

    if (!st || !st->resize_infeasible)
        containers_sum(p, REQ_SPEC, dflt, v, sum, set);
    else
        memset(sum, 0, v->n * sizeof(*sum));
    if (!st)
        return;
    if (res_given(&st->pod_allocated) && res_given(&st->pod_actuated)) {
        memset(scratch, 0, v->n * sizeof(*scratch));
        rvec_add_res(scratch, &st->pod_allocated, NULL, v->names, v->nnames);
        rvec_max(sum, scratch, v->n);
        memset(scratch, 0, v->n * sizeof(*scratch));
        rvec_add_res(scratch, &st->pod_actuated, NULL, v->names, v->nnames);
        rvec_max(sum, scratch, v->n);
        *set |= st->pod_allocated.set | st->pod_actuated.set;
        return;
    }
    containers_sum(p, REQ_ALLOCATED, dflt, v, scratch, set);
    rvec_max(sum, scratch, v->n);
    containers_sum(p, REQ_ACTUATED, dflt, v, scratch, set);
    rvec_max(sum, scratch, v->n);
}

static bool pod_level_scalar(const char *name)
{
    return !strncmp(name, "hugepages-", 10);
}

static const struct kube_scalar *res_scalar(const struct kube_resources *r, const char *name)
{
    size_t i;

    for (i = 0; i < r->nscalars; i++)
        if (!strcmp(r->scalars[i].name, name))
            return &r->scalars[i];
    return NULL;
}

/* res_get reads entry k of the dense vectors from r: 0 cpu, 1 memory (the only natives a
 * pod-level list holds), else the scalar name. false when r does not name it. */
static bool res_get(const struct kube_resources *r, size_t k, const char *name, int64_t *v)
{
    const struct kube_scalar *s;

    if (k < NNATIVE) {
        unsigned bit = k == 0 ? KUBE_RES_CPU : KUBE_RES_MEMORY;

        *v = k == 0 ? r->cpu_milli : r->memory;
        return r->set & bit;
    }
    if (!(s = res_scalar(r, name)))
        return false;
    *v = s->value;
    return true;
}

/* pod_level_value gives p's pod-level request of entry k (cpu, memory or a hugepages-*
 * scalar) as kube-scheduler applies it, false when there is none. The spec's request, or a
 * limit without one defaulted as the API server does (defaultPodRequests): to the
 * containers' spec sum raw_spec when some container names cpu or memory (spec_set), else to
 * the limit. When the status gives status.resources, the larger of that (not counted after
 * an infeasible resize) and the status's pod-level lists (effectivePodLevelResources). */
static bool pod_level_value(const struct kube_pod *p, size_t k, const char *name,
                            const int64_t *raw_spec, unsigned spec_set, int64_t *out)
{
    const struct kube_pod_extra *x = kube_pod_ext(p);
    const struct kube_pod_status_resources *st = x->status;
    bool have = res_get(&x->pod_requests, k, name, out);
    int64_t v;

    if (!have && res_get(&x->pod_limits, k, name, &v)) {
        unsigned bit = k == 0 ? KUBE_RES_CPU : KUBE_RES_MEMORY;

        have = true;
        *out = k < NNATIVE && (spec_set & bit) ? raw_spec[k] : v;
    }
    if (!st || !st->has_pod_resources)
        return have;
    if (st->resize_infeasible)
        have = false;
    if (res_get(&st->pod_actuated, k, name, &v) && (!have || v > *out)) {
        *out = v;
        have = true;
    }
    if (res_get(&st->pod_allocated, k, name, &v) && (!have || v > *out)) {
        *out = v;
        have = true;
    }
    return have;
}

/* pod_level_apply: the pod-level requests replace the containers' sum (applyPodLevelResources)
 * for cpu, memory and hugepages-*. raw_all is the containers' sum without the non-zero
 * defaults and raw_set its bits: with pod-level resources, the defaults only fill a resource
 * that neither the pod nor any container names (getNonMissingContainerRequests), so a
 * container naming it leaves the others at 0. */
static void pod_level_apply(const struct kube_pod *p, const int64_t *raw_spec, unsigned spec_set,
                            const int64_t *raw_all, unsigned raw_set, int64_t *sum,
                            const char **names, size_t nnames)
{
    size_t k;
    int64_t v;

    for (k = 0; k < 2; k++) {
        unsigned bit = k == 0 ? KUBE_RES_CPU : KUBE_RES_MEMORY;

        if (pod_level_value(p, k, NULL, raw_spec, spec_set, &v))
            sum[k] = v;
        else if (raw_set & bit)
            sum[k] = raw_all[k];
    }
    for (k = 0; k < nnames; k++)
        if (pod_level_scalar(names[k]) &&
            pod_level_value(p, NNATIVE + k, names[k], raw_spec, spec_set, &v))
            sum[NNATIVE + k] = v;
}

bool kube_pod_level_requests_set(const struct kube_pod *p)
{
    const struct kube_resources *r[2] = {&kube_pod_ext(p)->pod_requests,
                                         &kube_pod_ext(p)->pod_limits};
    size_t i, j;

    for (i = 0; i < 2; i++) {
        if (r[i]->set & (KUBE_RES_CPU | KUBE_RES_MEMORY))
            return true;
        for (j = 0; j < r[i]->nscalars; j++)
            if (pod_level_scalar(r[i]->scalars[j].name))
                return true;
    }
    return false;
}

/* name_insert adds name to the sorted set names[0..*n) (room for cap); -E2BIG when full. */
static int name_insert(const char **names, size_t *n, size_t cap, const char *name)
{
    size_t lo = 0, hi = *n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(names[mid], name);

        if (!c)
            return 0;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (*n == cap)
        return -E2BIG;
    memmove(names + lo + 1, names + lo, (*n - lo) * sizeof(*names));
    names[lo] = name;
    (*n)++;
    return 0;
}

int kube_pod_requests(const struct kube_pod *p, const struct kube_requests_opts *o, struct arena *a,
                      struct kube_resources *out)
{
    const char *names_stack[REQ_STACK_NAMES], **names = names_stack;
    int64_t vec_stack[7 * (NNATIVE + REQ_STACK_NAMES)], *vecs = vec_stack, *sum, *raw_all,
                                                        *raw_spec, *scratch;
    const struct kube_requests_opts *dflt =
        o && (o->default_cpu_milli || o->default_memory) ? o : NULL;
    const struct kube_resources *overhead = &kube_pod_ext(p)->overhead;
    size_t nlists = pod_nlists(p), nnames = 0, total = 0, i, j, n;
    bool pod_level = !(o && o->skip_pod_level) && kube_pod_level_requests_set(p);
    struct req_vecs v;
    unsigned set = 0, raw_set = 0, spec_set = 0;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    for (i = 0; i < nlists; i++)
        total += pod_list(p, i)->nscalars;
    if (total > REQ_STACK_NAMES && !(names = malloc(total * sizeof(*names))))
        return -ENOMEM;
    for (i = 0; i < nlists; i++) {
        const struct kube_resources *r = pod_list(p, i);

        for (j = 0; j < r->nscalars; j++)
            name_insert(names, &nnames, total > REQ_STACK_NAMES ? total : REQ_STACK_NAMES,
                        r->scalars[j].name);
    }
    n = NNATIVE + nnames;
    if (nnames > REQ_STACK_NAMES && !(vecs = malloc(7 * n * sizeof(*vecs)))) {
        rc = -ENOMEM;
        goto out;
    }
    sum = vecs;
    raw_all = sum + n;
    raw_spec = raw_all + n;
    scratch = raw_spec + n;
    v.names = names;
    v.nnames = nnames;
    v.n = n;
    v.side = scratch + n;
    v.initmax = v.side + n;
    v.tmp = v.initmax + n;
    pod_containers_sum(p, true, dflt, &v, sum, scratch, &set);
    /* the overhead's bits count as named: kube-scheduler reads the names of the whole sum */
    set |= overhead->set;
    if (pod_level) {
        /* the containers' sums without the non-zero defaults: the spec's alone (the API
         * server's defaulting of pod-level requests read it) and the one counted */
        bool st = kube_pod_ext(p)->status != NULL;

        if (dflt || st) {
            pod_containers_sum(p, false, NULL, &v, raw_spec, scratch, &spec_set);
            spec_set |= overhead->set;
        } else {
            memcpy(raw_spec, sum, n * sizeof(*sum));
            spec_set = set;
        }
        if (!dflt) {
            memcpy(raw_all, sum, n * sizeof(*sum));
            raw_set = set;
        } else if (!st) {
            memcpy(raw_all, raw_spec, n * sizeof(*sum));
            raw_set = spec_set;
        } else {
            pod_containers_sum(p, true, NULL, &v, raw_all, scratch, &raw_set);
            raw_set |= overhead->set;
        }
        pod_level_apply(p, raw_spec, spec_set, raw_all, raw_set, sum, names, nnames);
    }
    rvec_add_res(sum, overhead, NULL, names, nnames);
    out->set = set;
    out->cpu_milli = sum[0];
    out->memory = sum[1];
    out->ephemeral = sum[2];
    out->pods = sum[3];
    if (nnames) {
        if (!(out->scalars = arena_alloc(a, nnames * sizeof(*out->scalars)))) {
            rc = -ENOMEM;
            goto out;
        }
        for (i = 0; i < nnames; i++) {
            out->scalars[i].name = names[i];
            out->scalars[i].value = sum[NNATIVE + i];
        }
        out->nscalars = nnames;
    }
out:
    if (names != names_stack)
        free(names);
    if (vecs != vec_stack)
        free(vecs);
    return rc;
}

static int merge_keys(struct kube_pod_affinity_term *t, const struct kube_labels *l,
                      struct arena *a)
{
    struct kube_label_selector *sel = &t->label_selector;
    struct kube_requirement *reqs;
    size_t i, n = sel->nreqs, want = t->nmatch_label_keys + t->nmismatch_label_keys;

    if (!want || !sel->present)
        return 0;
    if (!(reqs = arena_alloc(a, (sel->nreqs + want) * sizeof(*reqs))))
        return -ENOMEM;
    if (sel->nreqs)
        memcpy(reqs, sel->reqs, sel->nreqs * sizeof(*reqs));
    for (i = 0; i < want; i++) {
        bool match = i < t->nmatch_label_keys;
        const char *key =
            match ? t->match_label_keys[i] : t->mismatch_label_keys[i - t->nmatch_label_keys];
        const char *v = kube_labels_get(l, key);
        const char **vals;

        if (!v)
            continue;
        if (!(vals = arena_alloc(a, sizeof(*vals))))
            return -ENOMEM;
        vals[0] = v;
        memset(&reqs[n], 0, sizeof(reqs[n]));
        reqs[n].key = key;
        reqs[n].op = match ? KUBE_OP_IN : KUBE_OP_NOT_IN;
        reqs[n].values = vals;
        reqs[n++].nvalues = 1;
    }
    sel->reqs = reqs;
    sel->nreqs = n;
    return 0;
}

struct kube_pod_extra *kube_pod_extra_own(struct kube_pod *p, struct arena *a)
{
    struct kube_pod_extra *x = arena_alloc(a, sizeof(*x));

    if (!x)
        return NULL;
    *x = *kube_pod_ext(p);
    return p->extra = x;
}

/* needs_merge: some term of pa names matchLabelKeys or mismatchLabelKeys */
static bool needs_merge(const struct kube_pod_affinity *pa)
{
    size_t i;

    for (i = 0; i < pa->nrequired; i++)
        if (pa->required[i].nmatch_label_keys + pa->required[i].nmismatch_label_keys > 0)
            return true;
    for (i = 0; i < pa->npreferred; i++)
        if (pa->preferred[i].nmatch_label_keys + pa->preferred[i].nmismatch_label_keys > 0)
            return true;
    return false;
}

int kube_pod_merge_label_keys(struct kube_pod *p, struct arena *a)
{
    const struct kube_pod_extra *cx = kube_pod_ext(p);
    struct kube_pod_extra *x;
    struct kube_pod_affinity *affs[2];
    size_t i, k;
    int rc;

    if (!needs_merge(&cx->pod_affinity) && !needs_merge(&cx->pod_anti_affinity))
        return 0;
    /* the block and its term arrays may be shared with other pods (a workload's replicas):
     * copy them */
    if (!(x = kube_pod_extra_own(p, a)))
        return -ENOMEM;
    affs[0] = &x->pod_affinity;
    affs[1] = &x->pod_anti_affinity;
    for (k = 0; k < 2; k++) {
        struct kube_pod_affinity *pa = affs[k];

        if (!needs_merge(pa))
            continue;
        if (pa->nrequired) {
            struct kube_pod_affinity_term *t = arena_alloc(a, pa->nrequired * sizeof(*t));
            if (!t)
                return -ENOMEM;
            memcpy(t, pa->required, pa->nrequired * sizeof(*t));
            pa->required = t;
        }
        if (pa->npreferred) {
            struct kube_pod_affinity_term *t = arena_alloc(a, pa->npreferred * sizeof(*t));
            if (!t)
                return -ENOMEM;
            memcpy(t, pa->preferred, pa->npreferred * sizeof(*t));
            pa->preferred = t;
        }
        for (i = 0; i < affs[k]->nrequired; i++)
            if ((rc = merge_keys(&affs[k]->required[i], &p->labels, a)))
                return rc;
        for (i = 0; i < affs[k]->npreferred; i++)
            if ((rc = merge_keys(&affs[k]->preferred[i], &p->labels, a)))
                return rc;
    }
    return 0;
}
