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

/* pod_list returns the i-th resource list of p: containers, init containers, overhead, then
 * the pod-level requests and limits (only their names are collected from those two). */
static const struct kube_resources *pod_list(const struct kube_pod *p, size_t i)
{
    if (i < p->ncontainers)
        return &p->containers[i].requests;
    if (i < p->ncontainers + p->ninit_containers)
        return &p->init_containers[i - p->ncontainers].requests;
    if (i == p->ncontainers + p->ninit_containers)
        return &kube_pod_ext(p)->overhead;
    if (i == p->ncontainers + p->ninit_containers + 1)
        return &kube_pod_ext(p)->pod_requests;
    return &kube_pod_ext(p)->pod_limits;
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

/* pod_level_apply: the pod-level requests replace the containers' (applyPodLevelResources),
 * for cpu, memory and hugepages-*. A pod-level limit without a request defaults the request
 * as the API server does (defaultPodRequests): to the containers' aggregate when some
 * container names the resource (cpu and memory only), else to the limit. raw is the
 * containers' aggregate without the non-zero defaults. */
static void pod_level_apply(const struct kube_pod *p, const struct kube_resources *raw,
                            int64_t *sum, const char **names, size_t nnames)
{
    const struct kube_resources *rq = &kube_pod_ext(p)->pod_requests;
    const struct kube_resources *lm = &kube_pod_ext(p)->pod_limits;
    size_t j;

    /* with pod-level resources, the non-zero defaults only fill a resource that neither the
     * pod nor any container names (getNonMissingContainerRequests): a container naming it
     * leaves the others at 0 */
    if (rq->set & KUBE_RES_CPU)
        sum[0] = rq->cpu_milli;
    else if (lm->set & KUBE_RES_CPU)
        sum[0] = raw->set & KUBE_RES_CPU ? raw->cpu_milli : lm->cpu_milli;
    else if (raw->set & KUBE_RES_CPU)
        sum[0] = raw->cpu_milli;
    if (rq->set & KUBE_RES_MEMORY)
        sum[1] = rq->memory;
    else if (lm->set & KUBE_RES_MEMORY)
        sum[1] = raw->set & KUBE_RES_MEMORY ? raw->memory : lm->memory;
    else if (raw->set & KUBE_RES_MEMORY)
        sum[1] = raw->memory;
    for (j = 0; j < nnames; j++) {
        const struct kube_scalar *x;
        if (!pod_level_scalar(names[j]))
            continue;
        if ((x = res_scalar(rq, names[j])) || (x = res_scalar(lm, names[j])))
            sum[NNATIVE + j] = x->value;
    }
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
    int64_t vec_stack[4 * (NNATIVE + REQ_STACK_NAMES)], *sum = vec_stack, *side, *initmax, *tmp;
    const struct kube_requests_opts *dflt =
        o && (o->default_cpu_milli || o->default_memory) ? o : NULL;
    size_t nlists = p->ncontainers + p->ninit_containers + 3, nnames = 0, total = 0, i, j, n;
    bool pod_level = !(o && o->skip_pod_level) && kube_pod_level_requests_set(p);
    struct kube_resources raw;
    unsigned set = 0;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    for (i = 0; i < nlists; i++)
        total += pod_list(p, i)->nscalars;
    if (total > REQ_STACK_NAMES && !(names = malloc(total * sizeof(*names))))
        return -ENOMEM;
    for (i = 0; i < nlists; i++) {
        const struct kube_resources *r = pod_list(p, i);

        if (i < nlists - 2)
            set |= r->set;
        for (j = 0; j < r->nscalars; j++)
            name_insert(names, &nnames, total > REQ_STACK_NAMES ? total : REQ_STACK_NAMES,
                        r->scalars[j].name);
    }
    n = NNATIVE + nnames;
    if (nnames > REQ_STACK_NAMES && !(sum = malloc(4 * n * sizeof(*sum)))) {
        rc = -ENOMEM;
        goto out;
    }
    memset(sum, 0, 4 * n * sizeof(*sum));
    side = sum + n;
    initmax = side + n;
    tmp = initmax + n;
    for (i = 0; i < p->ncontainers; i++)
        rvec_add_res(sum, &p->containers[i].requests, dflt, names, nnames);
    for (i = 0; i < p->ninit_containers; i++) {
        const struct kube_container *c = &p->init_containers[i];

        if (c->restart_always) {
            rvec_add_res(sum, &c->requests, dflt, names, nnames);
            rvec_add_res(side, &c->requests, dflt, names, nnames);
            rvec_max(initmax, side, n);
        } else {
            memcpy(tmp, side, n * sizeof(*tmp));
            rvec_add_res(tmp, &c->requests, dflt, names, nnames);
            rvec_max(initmax, tmp, n);
        }
    }
    rvec_max(sum, initmax, n);
    if (pod_level) {
        memset(&raw, 0, sizeof(raw));
        raw.set = set;
        raw.cpu_milli = sum[0];
        raw.memory = sum[1];
        if (dflt) {
            /* the aggregate without the non-zero defaults */
            struct kube_pod q = *p;
            struct kube_pod_extra qx = *kube_pod_ext(p);
            memset(&qx.pod_requests, 0, sizeof(qx.pod_requests));
            memset(&qx.pod_limits, 0, sizeof(qx.pod_limits));
            memset(&qx.overhead, 0, sizeof(qx.overhead)); /* added once, below */
            q.extra = &qx;
            if ((rc = kube_pod_requests(&q, NULL, a, &raw)))
                goto out;
            raw.set = set;
        }
        pod_level_apply(p, &raw, sum, names, nnames);
    }
    rvec_add_res(sum, &kube_pod_ext(p)->overhead, NULL, names, nnames);
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
    if (sum != vec_stack)
        free(sum);
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
