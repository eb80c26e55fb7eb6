/* cel.h - CEL device selectors, compiled and evaluated as Kubernetes v1.37 does.
 *
 * The environment is k8s.io/dynamic-resource-allocation/cel's (v0.37.2) with
 * EnableConsumableCapacity on, as kube-scheduler v1.37.2 builds it: the `device` variable
 * (driver, attributes[domain][name], capacity[domain][name], allowMultipleAllocations), the
 * base CEL library and the Kubernetes libraries. Compile once, evaluate many times:
 *
 *     struct cel_program *prog;
 *     struct cel_compile_error cerr;
 *     if (cel_compile(expr, strlen(expr), NULL, &prog, &cerr) < 0) { print cerr.detail; ... }
 *     struct cel_device_view *dev;             // once per device, reusable by every program
 *     cel_device_prepare(&device, &dev, &err);
 *     struct cel_scratch *s = cel_scratch_new(); // one per thread
 *     struct cel_result r;
 *     cel_eval(prog, dev, s, &r);                // r.match, or r.error (valid until the next
 *                                                // cel_eval on s)
 *
 * A program and a device view are immutable after they are built: several threads may
 * evaluate them at once, each with its own scratch. Evaluations allocate from the scratch's
 * arena, which is reset per evaluation, so a typical selector allocates nothing once the
 * scratch has warmed up. Nothing here prints or exits. */
#ifndef CEL_CEL_H
#define CEL_CEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* resourceapi.CELSelectorExpressionMaxCost and CELSelectorExpressionMaxLength (v1.37) */
#define CEL_SELECTOR_MAX_COST 1000000
#define CEL_SELECTOR_MAX_LENGTH (10 * 1024)

enum cel_env_type {
    CEL_ENV_STORED = 0, /* environment.StoredExpressions: what the scheduler compiles with */
    CEL_ENV_NEW,        /* environment.NewExpressions: what the API server validates with */
};

struct cel_compile_opts {
    enum cel_env_type env;
    bool cost_limit_set; /* false: the limit is CEL_SELECTOR_MAX_COST */
    uint64_t cost_limit; /* the runtime cost limit when cost_limit_set */
};

/* A compile failure: CompilationResult.Error.Detail as the Go library gives it, e.g.
 * "compilation failed: ERROR: <input>:1:8: undeclared reference to 'x' (in container '')\n
 *  | device.x\n | .......^", and where the first error sits (1-based line and column, 0 when
 * the error has no location). */
struct cel_compile_error {
    char *detail;      /* malloc'd, NUL-terminated; free with cel_compile_error_release */
    size_t detail_len; /* its length (a regex's fragment may hold NUL bytes) */
    int line, column;
    bool has_max_cost; /* "too complex": the estimate that exceeded the limit */
    uint64_t max_cost;
};
void cel_compile_error_release(struct cel_compile_error *e);

struct cel_program;

/* cel_compile compiles expr (len bytes, UTF-8) in the DRA environment. On success returns 0
 * and *out (free with cel_program_free). On a compile error returns -EINVAL and fills err
 * (release it); -ENOMEM when out of memory (err->detail then says so when it could). The
 * expression length limit is not applied here (the scheduler does not apply it either); see
 * cel_selector_length_ok. opts may be NULL.
 *
 * With CEL_ENV_NEW the compile also does what the API server does to a new selector after the
 * length check: estimate the worst-case cost as cel-go's checker.Cost does with the Kubernetes
 * estimators and the device's declared sizes, and refuse a selector whose estimate exceeds
 * CEL_SELECTOR_MAX_COST ("Forbidden: too complex, exceeds cost limit", err->max_cost set). */
int cel_compile(const char *expr, size_t len, const struct cel_compile_opts *opts,
                struct cel_program **out, struct cel_compile_error *err);
/* the estimated worst-case cost of a CEL_ENV_NEW program (UINT64_MAX for stored programs) */
uint64_t cel_program_max_cost(const struct cel_program *p);
void cel_program_free(struct cel_program *p);

/* cel_selector_length_ok: the API server's length check of a selector expression
 * ("Too long: may not be more than 10240 bytes"). */
static inline bool cel_selector_length_ok(size_t len)
{
    return len <= CEL_SELECTOR_MAX_LENGTH;
}

/* ---- devices ---- */

enum cel_attr_kind {
    CEL_ATTR_INT,
    CEL_ATTR_BOOL,
    CEL_ATTR_STRING,
    CEL_ATTR_VERSION, /* a semantic version string, parsed when the view is prepared */
};

/* A device attribute: the qualified name as the ResourceSlice spells it ("productName" in the
 * driver's domain, or "example.com/memoryType"), and its value. Strings are not required to be
 * NUL-terminated (len says). */
struct cel_device_attr {
    const char *name;
    size_t name_len;
    enum cel_attr_kind kind;
    int64_t i;
    bool b;
    const char *s;
    size_t s_len;
};

/* A capacity: qualified name and the quantity as text ("80Gi", "1.5", "100m"). */
struct cel_device_capacity {
    const char *name;
    size_t name_len;
    const char *quantity;
    size_t quantity_len;
};

/* The fields of a resource.k8s.io/v1 Device a selector sees, plus the driver. */
struct cel_device {
    const char *driver;
    size_t driver_len;
    int allow_multiple_allocations; /* -1: unset (nil), 0 false, 1 true */
    const struct cel_device_attr *attrs;
    size_t nattrs;
    const struct cel_device_capacity *capacity;
    size_t ncapacity;
};

struct cel_device_view;

/* cel_device_prepare builds the values a selector reads (domain maps, parsed quantities and
 * versions) once. A version that does not parse is not an error here: every evaluation
 * against the view then fails with DeviceMatches' error ("attribute NAME: parse semantic
 * version: ..."). Capacities are taken as the API server stores them: a quantity not in its
 * canonical form is written in it and read back ("1.5Gi" becomes 1536Mi, an int64 amount),
 * which is what kube-scheduler sees. Returns 0, -EINVAL for a quantity that does not parse
 * (err says which),
 * -ENOMEM. Free with cel_device_view_free. The view copies what it needs from dev. */
int cel_device_prepare(const struct cel_device *dev, struct cel_device_view **out, struct err *err);
void cel_device_view_free(struct cel_device_view *v);

/* ---- evaluation ---- */

struct cel_scratch;
struct cel_scratch *cel_scratch_new(void);
void cel_scratch_free(struct cel_scratch *s);

struct cel_result {
    bool match;
    const char *error; /* NULL, or DeviceMatches' error text (lives in the scratch) */
    size_t error_len;  /* its length (a message quoting a key may hold a NUL) */
    uint64_t cost;     /* the runtime cost cel-go would have tracked */
};

/* cel_eval evaluates p against dev. Returns 0 (r->match or r->error set) or -ENOMEM. */
int cel_eval(const struct cel_program *p, const struct cel_device_view *dev, struct cel_scratch *s,
             struct cel_result *r);

#endif
