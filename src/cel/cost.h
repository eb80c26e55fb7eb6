/* cost.h - the runtime cost of calls and equality (cel-go's CostTracker with Kubernetes'
 * CostEstimator and ext.Lists' trackers). */
#ifndef CEL_COST_H
#define CEL_COST_H

#include <stdbool.h>
#include <stdint.h>

#include "cel/eval.h"

/* the cost rule of a call, chosen once when the call is planned */
int cel_cost_kind(const char *fn, const char *ovid);
uint64_t cel_call_cost(struct ev *ev, const struct pnode *n, const struct cel_val *args, int na,
                       const struct cel_val *result);
/* _==_ (eq) and _!=_ */
uint64_t cel_eq_cost(bool eq, const struct cel_val *args);
/* the longest regex of a named format (Kubernetes' format library), for validate()'s cost */
uint64_t cel_format_max_regex_size(const char *name);

#endif
