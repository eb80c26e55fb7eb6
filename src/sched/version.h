/* version.h - the kube-scheduler minor versions gpusched answers for (--kube-version), and
 * what differs between them, in one table (docs/scheduling.md, "Kubernetes versions"). */
#ifndef SCHED_VERSION_H
#define SCHED_VERSION_H

#include <stdbool.h>

#include "sched/profile.h"

/* One kube-scheduler minor version and the rules and texts that changed across them. */
struct sched_kube_version {
    const char *name;               /* "1.37" */
    enum sched_taint_wording taint; /* TaintToleration's reason: {KEY: VALUE} before 1.35 */
    bool pod_level_resources;       /* PodLevelResources on by default (beta, 1.34+) */
    bool dra_postfilter_text;       /* DynamicResources on by default (1.34+): its PostFilter
                                       runs before DefaultPreemption (it can add "no new claims
                                       to deallocate" for pods with claims, and fails after a
                                       PreFilter rejection: struct sched_profile's dra_off) */
};

#define SCHED_KUBE_VERSION_DEFAULT "1.37"
#define SCHED_KUBE_VERSIONS "1.32|1.33|1.34|1.35|1.36|1.37"

/* sched_kube_version_find returns the entry of name ("1.37", also "v1.37" or a patch
 * release "1.37.2"; NULL: the default), or NULL for a version not in the table. */
const struct sched_kube_version *sched_kube_version_find(const char *name);

/* sched_profile_set_version gives p the texts and rules of version v. */
void sched_profile_set_version(struct sched_profile *p, const struct sched_kube_version *v);

#endif
