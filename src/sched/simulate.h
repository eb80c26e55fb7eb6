/* simulate.h - a queue of pending pods scheduled one after the other into a cluster, as
 * kube-scheduler's active queue takes them. */
#ifndef SCHED_SIMULATE_H
#define SCHED_SIMULATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "kube/object.h"
#include "sched/cluster.h"
#include "sched/profile.h"
#include "sched/schedule.h"

struct sched_sim_opts {
    uint64_t seed; /* tie-break seed; same input and seed, same output */
    /* Called every 256 attempts with the number done so far (may be NULL). */
    void (*progress)(void *arg, size_t done, size_t total);
    void *progress_arg;
    /* Optional (`simulate --follow`): follow(arg, pod, preemption) names the node to take
     * among equally good ones for pod's attempts (preemption false) or for the node its
     * preemption nominates (true), or NULL; see struct sched_rng. */
    const char *(*follow)(void *arg, const struct kube_pod *pod, bool preemption);
    void *follow_arg;
    /* Optional (`simulate --trace`): every attempt is explained (sched_explain, the same
     * cycle and draws) and passed to attempt(arg, pod, number, x) before the run goes on:
     * number 1, or 2 for the retry after a preemption; pod is as the attempt saw it (the
     * retry's has status.nominatedNodeName). A non-zero return stops the run with it. */
    int (*attempt)(void *arg, const struct kube_pod *pod, int number,
                   const struct sched_explanation *x);
    void *attempt_arg;
    /* Optional (`--config` with several profiles): profile_of(arg, pod) names the profile of
     * pod's attempts, or NULL for the one sched_simulate was given. */
    const struct sched_profile *(*profile_of)(void *arg, const struct kube_pod *pod);
    void *profile_arg;
};

/* sched_simulate schedules pods[0..n) into c, in kube-scheduler's queue order: priority
 * descending, then input order. Each scheduled pod is assumed onto its node, so later pods
 * see it. When a pod fits nowhere and preemption finds victims, the victims are removed from
 * the cluster (a victim that is one of pods[] gets preempted=true), and the pod is retried
 * once immediately, as nominated to that node (which node sampling filters first):
 * results[i] then has node (or the retry's message), nominated_node, victims and, as message,
 * the first attempt's FailedScheduling text. Pods with scheduling gates get SCHED_GATED.
 * results[] (n entries, caller-allocated, indexed like pods[]) is filled; release each with
 * sched_result_release. Returns 0, or -ENOMEM with err set (the results filled so far are
 * valid and must be released; the rest are zeroed). */
int sched_simulate(struct sched_cluster *c, const struct sched_profile *p,
                   const struct kube_pod *const *pods, size_t n, const struct sched_sim_opts *o,
                   struct sched_result *results, struct err *err);

#endif
