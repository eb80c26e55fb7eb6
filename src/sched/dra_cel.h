/* dra_cel.h - the CEL library (src/cel) behind the DRA world's selector interface
 * (struct sched_dra_cel): selectors compiled in the stored-expressions environment with the
 * default runtime cost limit and no cost estimation, as kube-scheduler v1.37.2's CEL cache
 * compiles them; one device view per device; evaluations on one scratch (not thread-safe). */
#ifndef SCHED_DRA_CEL_H
#define SCHED_DRA_CEL_H

#include "sched/dynamicresources.h"

/* sched_dra_cel_init fills *out with the callbacks and a context owning a CEL scratch.
 * Returns 0 or -ENOMEM. Release with sched_dra_cel_release once no world uses it. */
int sched_dra_cel_init(struct sched_dra_cel *out);
void sched_dra_cel_release(struct sched_dra_cel *c);

#endif
