/* simulate.c - sched_simulate: a queue of pending pods scheduled one after the other into a
 * cluster, as kube-scheduler's active queue would take them (priority, then arrival), each
 * placed pod assumed so the next ones see it, preemption victims evicted and the preemptor
 * retried once at once. */
#include "sched/simulate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/cluster-int.h"
#include "sched/framework-int.h"
#include "sched/plugins-int.h"
#include "sched/profile-int.h"
#include "sched/sched-int.h"
#include "sched/schedule-int.h"

struct qent {
    int32_t priority;
    size_t index;
};

static int cmp_queue(const void *a, const void *b)
{
    const struct qent *x = a, *y = b;

    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* evict the victims of r from c, marking the ones that came from pods[] */
static void evict(struct sched_cluster *c, struct sched_result *r, struct sched_result *results,
                  size_t n, size_t preemptor)
{
    size_t i;

    for (i = 0; i < r->nvictims; i++) {
        struct sched_victim *v = &r->victims[i];
        struct sched_pod *p = sched_cluster_find_pod(c, v->namespace_, v->name);
        if (!p)
            continue;
        /* only pods placed by this run are in results[] */
        if (p->sim_run == c->sim_runs && p->input_index < n) {
            v->from_input = true;
            v->input_index = p->input_index;
            results[p->input_index].preempted = true;
            results[p->input_index].preempted_by = preemptor;
        }
        sched_cluster_remove_pod(c, v->namespace_, v->name);
        sched_dra_cycle_victim(c, v->namespace_, v->name);
    }
}

static int assume(struct sched_cluster *c, const struct kube_pod *pod, const char *node, size_t idx,
                  struct err *err)
{
    struct sched_pod *p;
    int rc;

    /* a pod evicted earlier in this run may come back under the same name */
    sched_cluster_remove_pod(c, pod->namespace_, pod->name);
    if ((rc = sched_cluster_assume_pod(c, pod, node, err)) ||
        (rc = sched_framework_reserve(c, pod, node, err)))
        return rc;
    if ((p = sched_cluster_find_pod(c, pod->namespace_, pod->name))) {
        p->sim_run = c->sim_runs;
        p->input_index = (uint32_t)idx;
    }
    return 0;
}

/* one attempt: sched_schedule_one, or explained and reported when the caller traces */
static int attempt(struct sched_cluster *c, const struct sched_profile *p,
                   const struct kube_pod *pod, int number, const struct sched_sim_opts *o,
                   struct sched_rng *rng, struct sched_result *r, struct err *err)
{
    struct sched_explanation x;
    int rc;

    rng->follow_node = rng->follow_preempt = NULL;
    if (o && o->profile_of) {
        const struct sched_profile *q = o->profile_of(o->profile_arg, pod);
        if (q)
            p = q;
    }
    if (o && o->follow) {
        rng->follow_node = o->follow(o->follow_arg, pod, false);
        rng->follow_preempt = o->follow(o->follow_arg, pod, true);
    }
    if (!o || !o->attempt)
        return sched_schedule_one(c, p, pod, rng, r, err);
    if ((rc = sched_explain(c, p, pod, rng, &x, err))) {
        memset(r, 0, sizeof(*r));
        return rc;
    }
    rc = o->attempt(o->attempt_arg, pod, number, &x);
    *r = x.result;
    memset(&x.result, 0, sizeof(x.result));
    sched_explanation_release(&x);
    if (rc) {
        sched_result_release(r);
        err_set(err, rc, "cannot write the trace");
    }
    return rc;
}

/* retry_pod: the attempts that follow a pod's failed first one at once, before the next pod:
 * after a preemption (the victims evicted) one retry; after DynamicResources' PostFilter
 * deallocated a claim of the pod (result.requeued: the claim's update requeues it) one
 * more, each time it does (a claim at a time: at most as many as the pod has). The pod's
 * result takes the last attempt's outcome and message; the nomination and victims stay the
 * preemption's. */
static int retry_pod(struct sched_cluster *c, const struct sched_profile *p,
                     const struct kube_pod *const *pods, size_t n, size_t idx,
                     const struct sched_sim_opts *o, struct sched_rng *rng,
                     struct sched_result *results, struct err *err)
{
    struct sched_result *r = &results[idx], retry;
    bool requeued = r->requeued;
    int number = 1, rc = 0;

    if (r->nominated_node)
        evict(c, r, results, n, idx);
    while (number == 1 || (requeued && number <= 1 + 64)) {
        /* kube-scheduler's retry sees status.nominatedNodeName, which node sampling
         * filters first */
        struct kube_pod again = *pods[idx];

        if (r->nominated_node)
            again.nominated_node_name = r->nominated_node;
        if ((rc = attempt(c, p, &again, ++number, o, rng, &retry, err)))
            return rc;
        requeued = retry.requeued;
        if (retry.outcome == SCHED_SCHEDULED) {
            r->outcome = SCHED_SCHEDULED;
            r->node = retry.node;
            retry.node = NULL;
            sched_result_release(&retry);
            return assume(c, pods[idx], r->node, idx, err);
        }
        free(r->message);
        r->message = retry.message;
        retry.message = NULL;
        if (number > 2 || !r->nominated_node)
            r->error = retry.error; /* a requeued attempt's (the preemption's retry: as before) */
        sched_result_release(&retry);
    }
    return 0;
}

int sched_simulate(struct sched_cluster *c, const struct sched_profile *p,
                   const struct kube_pod *const *pods, size_t n, const struct sched_sim_opts *o,
                   struct sched_result *results, struct err *err)
{
    struct sched_rng rng;
    struct qent *q;
    size_t i;
    int rc = 0;

    memset(results, 0, n * sizeof(*results));
    if (n > UINT32_MAX)
        return err_set(err, -E2BIG, "more than %u pods to simulate", UINT32_MAX);
    /* 0 marks pods no run placed */
    if (++c->sim_runs == 0)
        c->sim_runs = 1;
    sched_rng_seed(&rng, o ? o->seed : 0);
    if (!(q = malloc((n + 1) * sizeof(*q))))
        return err_set(err, -ENOMEM, "out of memory");
    c->dra_commit = true;
    for (i = 0; i < n; i++) {
        q[i].priority = pods[i]->priority;
        q[i].index = i;
    }
    qsort(q, n, sizeof(*q), cmp_queue);
    for (i = 0; i < n; i++) {
        size_t idx = q[i].index;
        struct sched_result *r = &results[idx];

        if (o && o->progress && i && i % 256 == 0)
            o->progress(o->progress_arg, i, n);
        if ((rc = attempt(c, p, pods[idx], 1, o, &rng, r, err)))
            break;
        r->attempt = i;
        if (r->outcome == SCHED_SCHEDULED) {
            if ((rc = assume(c, pods[idx], r->node, idx, err)))
                break;
            continue;
        }
        if (!r->nominated_node && !r->requeued)
            continue;
        if ((rc = retry_pod(c, p, pods, n, idx, o, &rng, results, err)))
            break;
    }
    if (o && o->progress && !rc)
        o->progress(o->progress_arg, n, n);
    c->dra_commit = false;
    free(q);
    return rc;
}
