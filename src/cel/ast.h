/* ast.h - CEL's source text, parsed expressions and the parser's entry point.
 *
 * The source is kept as code points (invalid UTF-8 bytes become U+FFFD, as Go decodes them),
 * because cel-go counts columns, offsets and the expression size limit in code points. Every
 * expression node has an id; the source table maps ids to code-point offsets so errors can be
 * placed. Macros (has, all, exists, exists_one, map, filter, cel.bind, the two-variable forms)
 * are expanded by the parser into comprehensions exactly as cel-go expands them. Everything
 * lives in one arena owned by the caller. */
#ifndef CEL_AST_H
#define CEL_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"

/* The source: code points and the line table cel-go builds (offset of the code point after
 * each '\n', then one past the end). */
struct cel_source {
    const uint32_t *cp; /* code points */
    int32_t ncp;
    const int32_t *line_offsets;
    int32_t nlines; /* entries in line_offsets */
};

/* cel_source_init decodes text (len bytes) into src; memory from a. -ENOMEM on failure. */
int cel_source_init(struct cel_source *src, struct arena *a, const char *text, size_t len);
/* cel_source_location turns a code-point offset into a 1-based line and 0-based column
 * (GetLocationByOffset). */
void cel_source_location(const struct cel_source *src, int32_t offset, int *line, int *col);

/* A literal's value; strings and bytes are not NUL-terminated inside (len counts bytes). */
enum cel_lit_kind {
    CEL_LIT_NULL,
    CEL_LIT_BOOL,
    CEL_LIT_INT,
    CEL_LIT_UINT,
    CEL_LIT_DOUBLE,
    CEL_LIT_STRING,
    CEL_LIT_BYTES,
};
struct cel_lit {
    enum cel_lit_kind kind;
    union {
        bool b;
        int64_t i;
        uint64_t u;
        double d;
        struct {
            const char *p;
            uint32_t len;
        } s;
    } v;
};

enum cel_expr_kind {
    CEL_E_UNSPEC, /* left where a syntax error was */
    CEL_E_LIT,
    CEL_E_IDENT,
    CEL_E_SELECT,
    CEL_E_CALL,
    CEL_E_LIST,
    CEL_E_MAP,
    CEL_E_STRUCT,
    CEL_E_COMP,
};

struct cel_expr;

/* A map entry (key: value) or a message field (name: value). */
struct cel_entry {
    int32_t id;
    bool optional;
    struct cel_expr *key; /* maps */
    const char *field;    /* messages */
    struct cel_expr *value;
};

struct cel_expr {
    int32_t id;
    enum cel_expr_kind kind;
    int h; /* parser only: nesting of selects, calls, indexes, operators (cel-go's visitor) */
    union {
        struct cel_lit lit;
        const char *ident;
        struct {
            struct cel_expr *operand;
            const char *field;
            bool test_only; /* has() */
        } sel;
        struct {
            struct cel_expr *target; /* NULL for a global call */
            const char *fn;
            struct cel_expr **args;
            int nargs;
        } call;
        struct {
            struct cel_expr **elems;
            int n;
            const int32_t *optional; /* indices of ?elem */
            int nopt;
        } list;
        struct {
            struct cel_entry *entries;
            int n;
            const char *type_name; /* messages */
        } map;
        struct {
            struct cel_expr *range, *init, *cond, *step, *result;
            const char *iter, *iter2, *accu; /* iter2 NULL for one variable */
        } comp;
    } u;
};

/* Where each id sits in the source: start and stop code-point offsets, -1 when unknown. */
struct cel_ids {
    int32_t *start, *stop;
    int32_t n, alloc; /* ids are 1..n-1 */
};

/* One reported error: location (offset -1 for none) and message. */
struct cel_diag {
    int32_t offset; /* code-point offset, or -1 */
    int line, col;  /* from offset; line -1 col -1 when none */
    int32_t id;
    char *msg;
    struct cel_diag *next;
};
struct cel_diags {
    struct cel_diag *head, **tail;
    int count; /* reported, including those beyond the limit */
    struct arena *a;
    const struct cel_source *src;
};
void cel_diags_init(struct cel_diags *d, struct arena *a, const struct cel_source *src);
/* cel_diags_add reports msg at offset (-1: no location); the first 100 are kept. */
void cel_diags_add(struct cel_diags *d, int32_t id, int32_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* cel_diags_format renders cel-go's Errors.ToDisplayString: sorted by location, each
 * "ERROR: <input>:L:C: msg" with the source line and a caret, joined by newlines. Returns a
 * malloc'd string or NULL. */
char *cel_diags_format(struct cel_diags *d);

/* Parser options: which macros and syntax the environment enables. */
struct cel_parse_opts {
    bool optional_syntax;    /* .? [? and optional entries */
    bool bindings;           /* cel.bind */
    bool two_var;            /* all/exists/existsOne/exists_one/transform* with 3-4 args */
    bool lists_sort_by;      /* sortBy (ext.Lists v2+) */
    int max_recursion;       /* 0: 250 */
    int32_t max_code_points; /* 0: 100000 */
    bool opt_macros;         /* optMap, optFlatMap */
};

/* cel_parse parses src. Returns the root (never NULL unless out of memory) and fills ids
 * and diags; the parse failed when diags->count > 0. */
struct cel_expr *cel_parse(struct arena *a, const struct cel_source *src,
                           const struct cel_parse_opts *opts, struct cel_ids *ids,
                           struct cel_diags *diags);

/* cel_ids_location gives the start location of id (line -1 when unknown). */
int32_t cel_ids_offset(const struct cel_ids *ids, int32_t id);

/* Debug rendering of an expression tree (tests): cel-go's debug-ish form. */
void cel_expr_dump(const struct cel_expr *e, char *buf, size_t size);

#endif
