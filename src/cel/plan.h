/* plan.h - builds the interpreter's plan from a checked tree (cel-go's planner). */
#ifndef CEL_PLAN_H
#define CEL_PLAN_H

#include <stddef.h>

#include "cel/ast.h"
#include "cel/check.h"
#include "cel/eval.h"

/* cel_plan plans root; on failure returns NULL with cel-go's program-instantiation error
 * appended to err (it may hold NUL bytes). *max_depth: the deepest comprehension slot used;
 * *fresh: whether the identity of quantities and URLs shows (a quantity comparison promotes
 * its receiver to the decimal form; Go map keys of these types compare by pointer): then
 * every one made from a constant must be a new one each time the call is evaluated. */
struct cel_regex;
struct buf;
struct pnode *cel_plan(struct arena *a, const struct cel_env *env, const struct cel_checked *chk,
                       struct cel_expr *root, struct cel_regex **regexes, struct buf *err,
                       int *max_depth, bool *fresh);

#endif
