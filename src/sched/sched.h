/* sched.h - the scheduling core: kube-scheduler's filter, score and preemption semantics
 * (v1.32 and later) over an incrementally maintained cluster state.
 *
 * Used by `gpusched simulate|explain|nodes` (offline, on manifest files) and by `gpusched
 * serve` (live, fed by watch events). With the built-in profiles every node is evaluated for
 * every pod, so answers and explanations are deterministic; a profile with
 * percentage_of_nodes_to_score below 100 samples nodes as kube-scheduler does (serve's
 * default). Ties between the best nodes are broken by a caller-seeded generator. The
 * semantics, the reason strings and the GPU-aware profile are documented in
 * docs/scheduling.md. Nothing here prints, exits or locks: a cluster is used by one thread at
 * a time.
 *
 * This header declares nothing itself: it includes the core's API, profile.h (profiles, the
 * tie-break generator), cluster.h (the cluster state), volumes.h and podtopologyspread.h (the
 * other objects fed into it), schedule.h (one pod: schedule or explain), simulate.h (a queue
 * of pods) and version.h (--kube-version); config.h (--config) is included on its own. The headers of src/sched/
 * named *-int.h are the core's internals (docs/design.md, "Tiers"). */
#ifndef SCHED_SCHED_H
#define SCHED_SCHED_H

#include "sched/cluster.h"
#include "sched/dynamicresources.h"
#include "sched/podtopologyspread.h"
#include "sched/profile.h"
#include "sched/schedule.h"
#include "sched/simulate.h"
#include "sched/version.h"
#include "sched/volumes.h"

#endif
