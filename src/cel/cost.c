/* cost.c - the runtime cost of one call, as cel-go's CostTracker computes it in Kubernetes.
 *
 * First the overload trackers of cel-go's ext.Lists (keyed by the overload id the checker
 * chose, empty when several matched), then Kubernetes' library.CostEstimator (keyed by the
 * function name), then cel-go's defaults: string traversals at 0.1 per character, regexes at
 * 0.25 per pattern character, `in` on a list by its size, everything else 1. */
#include "cel/cost.h"

#include <math.h>
#include <string.h>

#include "cel/utf8.h"

/* actualSize: Sizer types give their size (strings in code points), others 1 */
static uint64_t actual_size(const struct cel_val *v)
{
    switch (v->k) {
    case CV_STRING:
        return (uint64_t)cel_utf8_count(v->v.s, v->n);
    case CV_BYTES:
        return v->n;
    case CV_LIST:
        return v->v.l->n;
    case CV_MAP:
        return v->v.m->n;
    case CV_OPTIONAL:
        return 1;
    default:
        return 1;
    }
}

/* ext's actualSize also unwraps optionals */
static uint64_t ext_actual_size(const struct cel_val *v)
{
    if (v->k == CV_OPTIONAL && v->v.o)
        return actual_size(v->v.o);
    return actual_size(v);
}

static uint64_t ceil_factor(uint64_t n, double f)
{
    return (uint64_t)ceil((double)n * f);
}

/* Kubernetes' traversalCost: floor, strings by bytes */
static uint64_t traversal_cost(const struct cel_val *v)
{
    switch (v->k) {
    case CV_STRING:
    case CV_BYTES:
        return (uint64_t)((double)v->n * 0.1);
    case CV_LIST: {
        uint64_t c = 0;
        for (uint32_t i = 0; i < v->v.l->n; i++)
            c += traversal_cost(&v->v.l->v[i]);
        return c;
    }
    case CV_MAP: {
        uint64_t c = 0;
        for (uint32_t i = 0; i < v->v.m->n; i++)
            c += traversal_cost(&v->v.m->keys[i]) + traversal_cost(&v->v.m->vals[i]);
        return c;
    }
    default:
        return 1;
    }
}

static uint64_t safe_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t alloc_list_cost(double factor, uint64_t size)
{
    if (factor < 0)
        factor = 1;
    return safe_add(safe_add((uint64_t)((double)size * factor), 1), 10);
}

static uint64_t self_compare_cost(const struct cel_val *l)
{
    uint64_t sz = ext_actual_size(l);
    double f = 2.0;
    if (sz == 0)
        return alloc_list_cost(f, 0);
    if (l->k == CV_LIST && (l->v.l->v[0].k == CV_STRING || l->v.l->v[0].k == CV_BYTES))
        f += 0.1;
    return alloc_list_cost(f, sz > UINT64_MAX / sz ? UINT64_MAX : sz * sz);
}

static bool suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static bool is_one_of(const char *s, const char *const *v)
{
    for (; *v; v++)
        if (!strcmp(s, *v))
            return true;
    return false;
}

/* the tracker's args[i].(traits.Lister): a panic for anything else */
static void assert_lister(struct ev *ev, const struct cel_val *v)
{
    const char *missing;
    if (v->k == CV_LIST)
        return;
    /* the first method of traits.Lister the Go type lacks */
    switch (v->k) {
    case CV_INT:
    case CV_UINT:
    case CV_DOUBLE:
    case CV_STRING:
    case CV_BYTES:
    case CV_DURATION:
    case CV_TIMESTAMP:
        missing = "Contains";
        break;
    default:
        missing = "Add";
        break;
    }
    cel_ev_panic(ev, "interface conversion: %s is not traits.Lister: missing method %s",
                 cel_go_type_name(v), missing);
}

uint64_t cel_call_cost(struct ev *ev, const struct pnode *n, const struct cel_val *args, int na,
                       const struct cel_val *result)
{
    const char *ov = n->u.call.ovid ? n->u.call.ovid : "";
    const char *fn = n->u.call.fname;

    /* ext.Lists v3 overload trackers */
    if (*ov) {
        if (!strcmp(ov, "list_slice") || !strcmp(ov, "lists_range") || !strcmp(ov, "list_reverse"))
            return alloc_list_cost(1, ext_actual_size(result));
        if (!strcmp(ov, "list_flatten") || !strcmp(ov, "list_flatten_int")) {
            double depth = 1.0;
            if (na == 2) {
                if (args[1].k != CV_INT)
                    cel_ev_panic(ev, "interface conversion: ref.Val is %s, not types.Int",
                                 cel_go_type_name(&args[1]));
                depth = (double)args[1].v.i;
            }
            return alloc_list_cost(depth, ext_actual_size(&args[0]));
        }
        if (!strcmp(ov, "list_distinct") || (!strncmp(ov, "list_", 5) && suffix(ov, "_sort"))) {
            assert_lister(ev, &args[0]);
            return self_compare_cost(&args[0]);
        }
        if (!strncmp(ov, "list_", 5) && suffix(ov, "_sortByAssociatedKeys") && na > 1) {
            assert_lister(ev, &args[1]);
            return self_compare_cost(&args[1]);
        }
    }
    /* Kubernetes' library.CostEstimator.CallCost */
    {
        static const char *const list_fns[] = {"isSorted",    "sum",         "max", "min",
                                               "indexOf",     "lastIndexOf", "includes", NULL};
        static const char *const str1[] = {"url",       "lowerAscii", "upperAscii",
                                           "substring", "trim",       "jsonpatch.escapeKey", NULL};
        static const char *const one[] = {
            "serviceAccount", "path",   "group",        "resource",       "subresource",
            "namespace",      "name",   "allowed",      "reason",         "error",
            "errored",        "masked", "prefixLength", "family",         "isUnspecified",
            "isLoopback",     "isLinkLocalMulticast",   "isLinkLocalUnicast", "isGlobalUnicast",
            "format.named",   "sign",   "asInteger",    "isInteger",      "asApproximateFloat",
            "isGreaterThan",  "isLessThan", "compareTo", "add",           "sub",
            "major",          "minor",  "patch",        "getScheme",      "getHostname",
            "getHost",        "getPort", "getEscapedPath", "getQuery",    NULL};
        if (!strcmp(fn, "check"))
            return 350000;
        if (is_one_of(fn, one))
            return 1;
        if (is_one_of(fn, list_fns))
            return na > 0 ? traversal_cost(&args[0]) : 0;
        if (is_one_of(fn, str1) && na >= 1)
            return ceil_factor(actual_size(&args[0]), 0.1);
        if ((!strcmp(fn, "replace") || !strcmp(fn, "split")) && na >= 1)
            return ceil_factor(actual_size(&args[0]), 0.2);
        if (!strcmp(fn, "join") && na >= 1)
            return ceil_factor(actual_size(result), 0.2);
        if ((!strcmp(fn, "find") || !strcmp(fn, "findAll")) && na >= 2)
            return ceil_factor(1 + actual_size(&args[0]), 0.1) *
                   ceil_factor(actual_size(&args[1]), 0.25);
        if ((!strcmp(fn, "cidr") || !strcmp(fn, "isIP") || !strcmp(fn, "isCIDR")) && na >= 1)
            return ceil_factor(actual_size(&args[0]), 0.1);
        if (!strcmp(fn, "ip") && na >= 1) {
            if (!strcmp(ov, "cidr_ip"))
                return 1;
            return ceil_factor(actual_size(&args[0]), 0.1);
        }
        if (!strcmp(fn, "ip.isCanonical") && na >= 1)
            return ceil_factor(actual_size(&args[0]), 0.2);
        if (!strcmp(fn, "containsIP") && na >= 2) {
            uint64_t cs = actual_size(&args[0]), os = actual_size(&args[1]);
            uint64_t c = ceil_factor(cs + cs, 0.1);
            if (!strcmp(ov, "cidr_contains_ip_string"))
                c += ceil_factor(os, 0.1);
            return c;
        }
        if (!strcmp(fn, "containsCIDR") && na >= 2) {
            uint64_t cs = actual_size(&args[0]), os = actual_size(&args[1]);
            uint64_t c = ceil_factor(cs + cs, 0.1);
            c += ceil_factor(cs, 0.1) + 1;
            if (!strcmp(ov, "cidr_contains_cidr_string"))
                c += ceil_factor(os, 0.1);
            return c;
        }
        if ((!strcmp(fn, "quantity") || !strcmp(fn, "isQuantity") || !strcmp(fn, "semver") ||
             !strcmp(fn, "isSemver")) &&
            na >= 1)
            return ceil_factor(actual_size(&args[0]), 0.1);
        if (!strcmp(fn, "validate") && na >= 2 && args[0].k == CV_FORMAT) {
            uint64_t strc = ceil_factor(1 + actual_size(&args[1]), 0.1);
            uint64_t rec = ceil_factor(cel_format_max_regex_size(args[0].v.s), 0.25);
            return strc * rec;
        }
    }
    /* cel-go's defaults by overload id */
    if (!strcmp(ov, "starts_with_string") || !strcmp(ov, "ends_with_string"))
        return ceil_factor(actual_size(&args[1]), 0.1);
    if (!strcmp(ov, "string_to_bytes") || !strcmp(ov, "bytes_to_string") ||
        !strcmp(ov, "strings_quote") || !strcmp(ov, "string_format"))
        return ceil_factor(actual_size(&args[0]), 0.1);
    if (!strcmp(ov, "in_list"))
        return actual_size(&args[1]);
    if (!strncmp(ov, "less_", 5) || !strncmp(ov, "greater_", 8)) {
        if (suffix(ov, "_string") || suffix(ov, "_bytes")) {
            uint64_t a = actual_size(&args[0]), b = actual_size(&args[1]);
            return ceil_factor(a < b ? a : b, 0.1);
        }
    }
    if (!strcmp(ov, "add_string") || !strcmp(ov, "add_bytes"))
        return ceil_factor(actual_size(&args[0]) + actual_size(&args[1]), 0.1);
    if (!strcmp(ov, "matches") || !strcmp(ov, "matches_string"))
        return ceil_factor(1 + actual_size(&args[0]), 0.1) *
               ceil_factor(actual_size(&args[1]), 0.25);
    if (!strcmp(ov, "contains_string"))
        return ceil_factor(actual_size(&args[0]), 0.1) * ceil_factor(actual_size(&args[1]), 0.1);
    return 1;
}

uint64_t cel_eq_cost(bool eq, const struct cel_val *args)
{
    uint64_t a, b;

    if (eq) {
        switch (args[0].k) {
        case CV_QUANTITY:
        case CV_IP:
        case CV_CIDR:
        case CV_FORMAT:
        case CV_URL:
        case CV_SEMVER:
            return 1;
        default:
            break;
        }
    }
    a = actual_size(&args[0]);
    b = actual_size(&args[1]);
    return ceil_factor(a < b ? a : b, 0.1);
}
