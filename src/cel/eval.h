/* eval.h - the planned program and its interpreter (cel-go's interpreter package).
 *
 * A checked tree is planned once into nodes shaped like cel-go's interpretables: attributes
 * (a variable or an operand with a chain of qualifiers), calls bound to an implementation,
 * logical operators, comprehensions, constructors. The shape matters beyond the result: cel-go
 * counts cost per observed node and qualifier, folds constants when the program is built, and
 * resolves names through the comprehension frames; the plan reproduces all three. */
#ifndef CEL_EVAL_H
#define CEL_EVAL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "cel/check.h"
#include "cel/value.h"

/* Traits of runtime types (common/types/traits). */
enum {
    TR_ADDER = 1 << 0,
    TR_COMPARER = 1 << 1,
    TR_CONTAINER = 1 << 2,
    TR_DIVIDER = 1 << 3,
    TR_FIELD_TESTER = 1 << 4,
    TR_INDEXER = 1 << 5,
    TR_ITERABLE = 1 << 6,
    TR_MATCHER = 1 << 8,
    TR_MODDER = 1 << 9,
    TR_MULTIPLIER = 1 << 10,
    TR_NEGATOR = 1 << 11,
    TR_RECEIVER = 1 << 12,
    TR_SIZER = 1 << 13,
    TR_SUBTRACTOR = 1 << 14,
    TR_LISTER = TR_ADDER | TR_CONTAINER | TR_INDEXER | TR_ITERABLE | TR_SIZER,
};
int cel_val_traits(const struct cel_val *v);

struct ev;

/* A function implementation: args are evaluated and, for strict functions, not errors. */
typedef struct cel_val (*cel_fn)(struct ev *ev, const struct cel_val *args, int n);

/* An overload's implementation. */
struct cel_impl {
    const char *id; /* overload id, or a function name for singletons */
    cel_fn fn;
    int trait;      /* singletons: the operand trait the first argument must have */
    bool no_guards; /* DisableTypeGuards */
};
const struct cel_impl *cel_impl_find(const char *id);

enum pnode_kind {
    P_CONST,
    P_ATTR,     /* an attribute, observed: +1 unless conditional */
    P_TESTONLY, /* has(): observed at no cost */
    P_AND,
    P_OR,
    P_EQ,
    P_NE,
    P_CALL,
    P_LIST,
    P_MAP,
    P_FOLD,
    P_SETMEM,
    P_OPTOR,      /* optional or(): the right side only when the left is none; no cost */
    P_OPTORVALUE, /* optional orValue() */
    P_ERRNODE,    /* a node cel-go could not plan (unsupported) */
};

enum pattr_kind {
    A_VAR,  /* the global variable */
    A_FOLD, /* a comprehension variable: fold level and which (0 accu, 1 iter, 2 iter2) */
    A_REL,  /* an operand node */
    A_COND, /* cond ? t : f */
};

struct pnode;
struct pattr;

struct pqual {
    int32_t id;
    bool optional;
    bool test_only;
    struct cel_val cval; /* a constant qualifier */
    struct pattr *attr;  /* an attribute qualifier (resolved, not executed) */
};

struct pattr {
    enum pattr_kind kind;
    int32_t id;
    int level, which;      /* A_FOLD */
    struct pnode *operand; /* A_REL */
    struct pnode *cond;    /* A_COND */
    struct pattr *t, *f;   /* A_COND */
    bool optional;         /* evalAttr optional (relative qualifiers of [?x]) */
    struct pqual *quals;
    int nquals, qalloc;
};

struct pnode {
    enum pnode_kind kind;
    int32_t id;
    union {
        struct cel_val cval;
        struct pattr *attr;
        struct {
            struct pnode *a, *b;
        } bin;
        struct {
            const char *fname;
            const char *ovid;                    /* the one overload the checker found, else NULL */
            int cost_kind;                       /* how cel_call_cost charges it (cel_cost_kind) */
            const struct cel_impl *impl;         /* a direct implementation, or */
            const struct cel_overload *decl;     /* its declaration (runtime guards) */
            const struct cel_function *dispatch; /* dispatch over the function's overloads */
            int nargs;
            int arity; /* 1 unary, 2 binary, 3 varargs (evaluation order differs) */
            const struct cel_regex *regex; /* a constant pattern compiled when planned */
            const struct cel_val *cached;  /* the result, computed when planned (constant
                                              arguments of a pure constructor); still costed */
            bool nonstrict;
            struct pnode **args;
        } call;
        struct {
            struct pnode **elems;
            bool *opt;
            int n;
        } list;
        struct {
            struct pnode **keys, **vals;
            bool *opt;
            int n;
        } map;
        struct {
            int level;
            int init_slots; /* the deeper slots the initializer's own folds use */
            bool two;
            struct pnode *range, *init, *cond, *step, *result;
        } fold;
        struct {
            struct pnode *arg;
            struct cel_val *set;
            int n;
        } setmem;
        const char *err;
    } u;
};

/* A comprehension's frame while it runs. */
struct foldframe {
    struct cel_val accu, it1, it2;
    struct pnode *init;
    int init_slots;
    bool initialized;
};

#define CEL_MAX_FOLD_DEPTH 128

/* The evaluation context (one per evaluation; the scratch arena is the caller's). */
struct ev {
    struct arena *a;
    const struct cel_val *device;
    const struct cel_val *extra; /* the values of env->extra (tests) */
    uint64_t cost, limit;
    jmp_buf abort;                     /* cost limit exceeded, or cel-go would have panicked */
    const char *abort_msg;             /* NULL: the cost limit */
    const struct cel_regex *cur_regex; /* the running call's compiled pattern */
    /* resource.Quantity.Cmp turns its receiver into the inf.Dec form in place (AsDec) when
     * the other side is one: the quantities promoted so far in this evaluation, and their
     * decimal form (cel_quantity_current). fresh: quantities and URLs from constants are
     * copied each time, since cel-go makes a new one each time (see cel_plan). */
    bool fresh;
    int nqpromo, aqpromo;
    struct cel_qpromo {
        const struct cel_quantity *from, *to;
    } * qpromo;
    struct foldframe frames[CEL_MAX_FOLD_DEPTH];
};

/* evaluates a plan node */
struct cel_val cel_eval_node(struct ev *ev, struct pnode *n);

/* helpers for implementations */
/* the Go type of the value cel-go would hold (panic and iteration messages) */
const char *cel_go_type_name(const struct cel_val *v);
/* a quantity as it is now in this evaluation (its promoted form, if any) */
const struct cel_quantity *cel_quantity_current(const struct ev *ev, const struct cel_quantity *q);
/* records that q now has the decimal form d */
bool cel_quantity_promote(struct ev *ev, const struct cel_quantity *q,
                          const struct cel_quantity *d);
/* a lookup of key in m (NULL: a literal being built) panics as Go's map does for keys it
 * cannot hash */
void cel_map_key_check(struct ev *ev, const struct cel_map *m, const struct cel_val *key);
/* ends the evaluation as cel-go does when a library function panics: "internal error: msg" */
_Noreturn void cel_ev_panic(struct ev *ev, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
struct cel_val cel_no_such_overload(struct ev *ev, const char *fname, const struct cel_val *args,
                                    int n);
struct cel_val cel_maybe_no_such_overload(const struct cel_val *v);
char *cel_ev_strdup(struct ev *ev, const char *s, size_t n);
struct cel_list *cel_list_new(struct arena *a, uint32_t n);
struct cel_map *cel_map_new(struct arena *a, uint32_t n);
const struct cel_val *cel_map_find(const struct cel_map *m, const struct cel_val *key);
/* 1 equal, 0 not, -1: "no such overload" (cel-go's Equal returned an error) */
int cel_val_eq(const struct cel_val *a, const struct cel_val *b);
/* Go map keys: the same dynamic type and == */
bool cel_key_identical(const struct cel_val *a, const struct cel_val *b);
/* a map's Contains (DRA's default map answers false) */
bool cel_map_contains(const struct cel_map *m, const struct cel_val *key);
/* Runtime type matching for overload guards (Type.IsAssignableRuntimeType). */
bool cel_type_matches_value(const struct cel_type *t, const struct cel_val *v);

#endif
