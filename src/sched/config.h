/* config.h - `--config FILE`: a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1,
 * YAML or JSON) read into scheduling profiles, as kube-scheduler v1.37 defaults and validates
 * it, for `gpusched simulate`, `explain` and `serve`. What gpusched models:
 * - profiles[].schedulerName (default "default-scheduler"), duplicates refused;
 * - plugins.score.enabled/disabled ("*" too) and plugins.multiPoint.enabled with weights
 *   (a weight of 0 is 1; the Score weight wins over multiPoint's) for TaintToleration,
 *   NodeAffinity, NodeResourcesFit, NodeResourcesBalancedAllocation, PodTopologySpread and
 *   gpusched's own GPUPlacement; ImageLocality and InterPodAffinity are accepted (gpusched
 *   does not score them, with or without --config); plugins.filter.enabled and
 *   multiPoint.enabled may name the filters gpusched runs (they are on anyway);
 * - pluginConfig NodeResourcesFit scoringStrategy: LeastAllocated, MostAllocated,
 *   RequestedToCapacityRatio (shape), resources with weights (defaults cpu:1 memory:1,
 *   weight 0 is 1);
 * - percentageOfNodesToScore, global and per profile (0..100);
 * - leaderElection (leaderElect, leaseDuration, renewDeadline, retryPeriod, resourceLock
 *   "leases", resourceName, resourceNamespace), podInitialBackoffSeconds,
 *   podMaxBackoffSeconds and parallelism (accepted, no effect on answers).
 * Anything else (an unknown field, a filter disabled, another plugin's args, extenders) is
 * an error "FILE: line N: FIELD: message". */
#ifndef SCHED_CONFIG_H
#define SCHED_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "sched/profile.h"

struct sched_config {
    struct sched_profile *profiles; /* in file order; name = schedulerName */
    size_t nprofiles;
    /* leaderElection: each member only when the file sets it (has_*) */
    bool has_leader_elect, leader_elect;
    bool has_lease_duration, has_renew_deadline, has_retry_period;
    int64_t lease_duration_ms, renew_deadline_ms, retry_period_ms;
    const char *lease_name, *lease_namespace; /* NULL when unset */
    bool has_initial_backoff, has_max_backoff;
    int64_t initial_backoff_ms, max_backoff_ms;
    json_t *doc; /* owns the strings the profiles borrow */
};

/* sched_config_load reads path into cfg. Every profile starts as a copy of base (the
 * built-in "default" unless the caller passes another, e.g. one with a --kube-version's
 * wording); its name becomes its schedulerName. Returns 0, or -EINVAL / -ENOENT / -ENOMEM
 * with err set to one line naming the file, line and field. */
int sched_config_load(const char *path, const struct sched_profile *base, struct sched_config *cfg,
                      struct err *err);

/* sched_config_parse is the same on the text[0..len) of a file called name (for messages): the
 * parser the fuzzer drives (tests/fuzz/fuzz_schedconfig.c). */
int sched_config_parse(const char *text, size_t len, const char *name,
                       const struct sched_profile *base, struct sched_config *cfg, struct err *err);

/* sched_config_find returns the profile whose schedulerName is name, or NULL. */
const struct sched_profile *sched_config_find(const struct sched_config *cfg, const char *name);

void sched_config_release(struct sched_config *cfg);

#endif
