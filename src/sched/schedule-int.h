/* schedule-int.h - the driver behind sched_schedule_one and sched_explain (schedule.c), with
 * the choice of the reference path (tests/unit/test_sched_equiv.c). Not for callers outside
 * src/sched/ but the white-box tests. */
#ifndef SCHED_SCHEDULE_INT_H
#define SCHED_SCHEDULE_INT_H

#include <stdbool.h>

#include "base/err.h"
#include "kube/object.h"

struct sched_cluster;
struct sched_profile;
struct sched_rng;
struct sched_result;
struct sched_explanation;

/* sched_run is sched_schedule_one / sched_explain (x != NULL), with ref choosing the
 * reference path for every node (tests). With node sampling it moves c->next_start once. */
int sched_run(struct sched_cluster *c, const struct sched_profile *p, const struct kube_pod *pod,
              struct sched_rng *rng, bool ref, struct sched_result *out,
              struct sched_explanation *x, struct err *err);

#endif
