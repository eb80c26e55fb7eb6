/* estimate.h - the API server's static cost estimate of a selector (cel-go's checker.Cost with
 * the Kubernetes estimators and the DRA device's declared sizes). */
#ifndef CEL_ESTIMATE_H
#define CEL_ESTIMATE_H

#include <stdint.h>

#include "base/arena.h"
#include "cel/ast.h"
#include "cel/check.h"

/* cel_estimate_cost estimates root's cost; scratch memory from a. Returns 0, -1 when out of
 * memory. */
int cel_estimate_cost(struct arena *a, struct cel_expr *root, const struct cel_checked *chk,
                      uint64_t *min, uint64_t *max);

#endif
