/* check.h - CEL's type checker: types, the declared environment, overload resolution.
 *
 * Types and their rules are cel-go's (common/types, checker/types.go): kinds, type
 * parameters substituted per overload, dyn assignable both ways, null assignable to messages,
 * opaque and well-known types. The environment is a table of variables, message types with
 * fields, and functions with ordered overloads (the order decides the result type when
 * several overloads match). The checker records, per expression id, its type and what a name
 * or call resolved to, and reports cel-go's messages. */
#ifndef CEL_CHECK_H
#define CEL_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "cel/ast.h"

enum cel_kind {
    CK_UNSPEC,
    CK_DYN,
    CK_ANY,
    CK_BOOL,
    CK_BYTES,
    CK_DOUBLE,
    CK_DURATION,
    CK_ERROR,
    CK_INT,
    CK_LIST,
    CK_MAP,
    CK_NULL,
    CK_OPAQUE,
    CK_STRING,
    CK_STRUCT,
    CK_TIMESTAMP,
    CK_TYPE,
    CK_TYPEPARAM,
    CK_UINT,
};

struct cel_type {
    enum cel_kind kind;
    const char *name; /* runtime type name: "int", "list", "google.protobuf.Duration", "A" */
    int np;
    const struct cel_type *p[2];
};

extern const struct cel_type cel_t_dyn, cel_t_any, cel_t_bool, cel_t_bytes, cel_t_double,
    cel_t_duration, cel_t_error, cel_t_int, cel_t_null, cel_t_string, cel_t_timestamp, cel_t_type,
    cel_t_uint, cel_t_quantity, cel_t_semver, cel_t_ip, cel_t_cidr, cel_t_url, cel_t_format,
    cel_t_list_dyn, cel_t_map_dyn;

/* cel_type_format writes FormatCELType(t) into buf. */
const char *cel_type_format(const struct cel_type *t, char *buf, size_t size);
/* cel_type_string writes Type.String() (type parameters as <A>, wrappers) into buf. */
const char *cel_type_string(const struct cel_type *t, char *buf, size_t size);
bool cel_type_exact(const struct cel_type *a, const struct cel_type *b);

/* An overload: cel-go's OverloadDecl. */
struct cel_overload {
    const char *id;
    bool member;
    bool nonstrict;
    int nargs;
    const struct cel_type *args[4];
    const struct cel_type *result;
    int fn; /* implementation index (cel-int.h), 0: none */
};

struct cel_function {
    const char *name;
    int n;
    const struct cel_overload *ov;
};

struct cel_field {
    const char *name;
    const struct cel_type *type;
};

/* The declared environment (one per kind: stored or new expressions). */
/* A declared variable besides the device (the conformance tests declare their own). */
struct cel_decl {
    const char *name;
    const struct cel_type *type;
};

struct cel_env {
    const struct cel_function *fns;
    int nfns;
    const char *var_name; /* "device" */
    const struct cel_type *var_type;
    const struct cel_field *fields; /* of var_type's message */
    int nfields;
    const struct cel_type *attr_type; /* dyn (stored) or any (new) */
    const struct cel_decl *extra;     /* tests only: more variables (cel-eval --conformance) */
    int nextra;
    bool cross_type_numeric;
    bool homogeneous_literals;
    struct cel_parse_opts parse;
};

const struct cel_function *cel_env_function(const struct cel_env *env, const char *name);

/* What an identifier or call resolved to. */
struct cel_ref {
    const char *name;                /* identifiers: the resolved name */
    const struct cel_type *type_val; /* identifiers naming a type: the type value */
    int nov;                         /* calls: matching overloads */
    const struct cel_overload *ov[24];
};

struct cel_checked {
    const struct cel_type **types; /* by id */
    struct cel_ref **refs;         /* by id, NULL when none */
    int32_t n;
    const struct cel_type *result;
};

/* cel_check types root against env. Fills out; errors go to diags (failed when count > 0). */
int cel_check(struct arena *a, const struct cel_env *env, struct cel_expr *root,
              const struct cel_ids *ids, struct cel_diags *diags, struct cel_checked *out);

/* cel_validate runs the environment's AST validators on a checked tree (homogeneous
 * aggregate literals, regex literals). */
void cel_validate(const struct cel_env *env, struct cel_expr *root, const struct cel_ids *ids,
                  const struct cel_checked *chk, struct cel_diags *diags);

#endif
