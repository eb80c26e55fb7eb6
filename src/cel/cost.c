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
    case CV_IP: /* bytes of the address: ceil(BitLen/8) */
        return v->v.ip->v4 ? 4 : 16;
    case CV_CIDR: /* bytes of the prefix: ceil(Bits/8) */
        return (uint64_t)(v->v.ip->prefix + 7) / 8;
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

/* Go's uint64(x) on amd64: x < 2^63 converts as a signed integer, else x - 2^63 does and the
 * top bit is set (x past 2^64, or a NaN: 2^63) */
static uint64_t go_f2u(double x)
{
    if (x < 9223372036854775808.0)
        return x > -9223372036854775808.0 ? (uint64_t)(int64_t)x : (uint64_t)INT64_MIN;
    x -= 9223372036854775808.0;
    return (x < 9223372036854775808.0 ? (uint64_t)(int64_t)x : (uint64_t)INT64_MIN) |
           (uint64_t)INT64_MIN;
}

static uint64_t ceil_factor(uint64_t n, double f)
{
    return go_f2u(ceil((double)n * f));
}

/* Kubernetes' traversalCost: floor, strings by bytes */
static uint64_t traversal_cost(const struct cel_val *v)
{
    switch (v->k) {
    case CV_STRING:
    case CV_BYTES:
        return go_f2u((double)v->n * 0.1);
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
    return safe_add(safe_add(go_f2u((double)size * factor), 1), 10);
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

enum cost_kind {
    CK_DEFAULT = 0, /* 1 */
    CK_LIST_OUT,    /* ext: list_slice, lists_range, list_reverse: the result's size */
    CK_FLATTEN,
    CK_SELF0, /* list_distinct, list_<T>_sort */
    CK_SELF1, /* list_<T>_sortByAssociatedKeys */
    CK_SETS1, /* ext.Sets: list_sets_contains_list, list_sets_intersects_list */
    CK_SETS2, /* list_sets_equivalent_list */
    CK_CHECK,
    CK_ONE,
    CK_LIST_FN, /* isSorted, sum, ... */
    CK_STR1,    /* 0.1 x size(args[0]) */
    CK_STR2,    /* 0.2 x size(args[0]): replace, split */
    CK_JOIN,
    CK_FIND,
    CK_IP,
    CK_CIDR_IP,
    CK_ISCANON,
    CK_CONTAINS_IP,
    CK_CONTAINS_IP_STR,
    CK_CONTAINS_CIDR,
    CK_CONTAINS_CIDR_STR,
    CK_VALIDATE,
    CK_SUFFIX, /* starts_with, ends_with: 0.1 x size(args[1]) */
    CK_CONV,   /* 0.1 x size(args[0]) by overload id */
    CK_IN_LIST,
    CK_STRCMP,
    CK_ADD_STR,
    CK_MATCHES,
    CK_CONTAINS,
};

int cel_cost_kind(const char *fn, const char *ovid)
{
    static const char *const list_fns[] = {"isSorted", "sum",         "max",      "min",
                                           "indexOf",  "lastIndexOf", "includes", NULL};
    static const char *const str1[] = {"url",  "lowerAscii",          "upperAscii", "substring",
                                       "trim", "jsonpatch.escapeKey", NULL};
    static const char *const one[] = {"serviceAccount",
                                      "path",
                                      "group",
                                      "resource",
                                      "subresource",
                                      "namespace",
                                      "name",
                                      "allowed",
                                      "reason",
                                      "error",
                                      "errored",
                                      "masked",
                                      "prefixLength",
                                      "family",
                                      "isUnspecified",
                                      "isLoopback",
                                      "isLinkLocalMulticast",
                                      "isLinkLocalUnicast",
                                      "isGlobalUnicast",
                                      "format.named",
                                      "sign",
                                      "asInteger",
                                      "isInteger",
                                      "asApproximateFloat",
                                      "isGreaterThan",
                                      "isLessThan",
                                      "compareTo",
                                      "add",
                                      "sub",
                                      "major",
                                      "minor",
                                      "patch",
                                      "getScheme",
                                      "getHostname",
                                      "getHost",
                                      "getPort",
                                      "getEscapedPath",
                                      "getQuery",
                                      NULL};
    static const char *const str_conv[] = {"cidr",       "isIP",   "isCIDR",   "quantity",
                                           "isQuantity", "semver", "isSemver", NULL};
    const char *ov = ovid ? ovid : "";

    /* ext.Lists v3 overload trackers (by the one overload id) */
    if (*ov) {
        if (!strcmp(ov, "list_slice") || !strcmp(ov, "lists_range") || !strcmp(ov, "list_reverse"))
            return CK_LIST_OUT;
        if (!strcmp(ov, "list_flatten") || !strcmp(ov, "list_flatten_int"))
            return CK_FLATTEN;
        if (!strcmp(ov, "list_distinct") || (!strncmp(ov, "list_", 5) && suffix(ov, "_sort")))
            return CK_SELF0;
        if (!strncmp(ov, "list_", 5) && suffix(ov, "_sortByAssociatedKeys"))
            return CK_SELF1;
        if (!strcmp(ov, "list_sets_contains_list") || !strcmp(ov, "list_sets_intersects_list"))
            return CK_SETS1;
        if (!strcmp(ov, "list_sets_equivalent_list"))
            return CK_SETS2;
    }
    /* Kubernetes' library.CostEstimator.CallCost, by function name */
    if (!strcmp(fn, "check"))
        return CK_CHECK;
    if (is_one_of(fn, one))
        return CK_ONE;
    if (is_one_of(fn, list_fns))
        return CK_LIST_FN;
    if (is_one_of(fn, str1))
        return CK_STR1;
    if (!strcmp(fn, "replace") || !strcmp(fn, "split"))
        return CK_STR2;
    if (!strcmp(fn, "join"))
        return CK_JOIN;
    if (!strcmp(fn, "find") || !strcmp(fn, "findAll"))
        return CK_FIND;
    if (is_one_of(fn, str_conv))
        return CK_STR1;
    if (!strcmp(fn, "ip"))
        return !strcmp(ov, "cidr_ip") ? CK_CIDR_IP : CK_IP;
    if (!strcmp(fn, "ip.isCanonical"))
        return CK_ISCANON;
    if (!strcmp(fn, "containsIP"))
        return !strcmp(ov, "cidr_contains_ip_string") ? CK_CONTAINS_IP_STR : CK_CONTAINS_IP;
    if (!strcmp(fn, "containsCIDR"))
        return !strcmp(ov, "cidr_contains_cidr_string") ? CK_CONTAINS_CIDR_STR : CK_CONTAINS_CIDR;
    if (!strcmp(fn, "validate"))
        return CK_VALIDATE;
    /* cel-go's defaults by overload id */
    if (!strcmp(ov, "starts_with_string") || !strcmp(ov, "ends_with_string"))
        return CK_SUFFIX;
    if (!strcmp(ov, "string_to_bytes") || !strcmp(ov, "bytes_to_string") ||
        !strcmp(ov, "strings_quote") || !strcmp(ov, "string_format"))
        return CK_CONV;
    if (!strcmp(ov, "in_list"))
        return CK_IN_LIST;
    if ((!strncmp(ov, "less_", 5) || !strncmp(ov, "greater_", 8)) &&
        (suffix(ov, "_string") || suffix(ov, "_bytes")))
        return CK_STRCMP;
    if (!strcmp(ov, "add_string") || !strcmp(ov, "add_bytes"))
        return CK_ADD_STR;
    if (!strcmp(ov, "matches") || !strcmp(ov, "matches_string"))
        return CK_MATCHES;
    if (!strcmp(ov, "contains_string"))
        return CK_CONTAINS;
    return CK_DEFAULT;
}

/* the cel-go default of a kind whose Kubernetes rule did not apply (too few arguments) */
static uint64_t by_overload(int kind, const struct cel_val *args)
{
    (void)kind;
    (void)args;
    return 1;
}

uint64_t cel_call_cost(struct ev *ev, const struct pnode *n, const struct cel_val *args, int na,
                       const struct cel_val *result)
{
    int kind = n->u.call.cost_kind;

    switch (kind) {
    case CK_DEFAULT:
        return 1;
    case CK_LIST_OUT:
        return alloc_list_cost(1, ext_actual_size(result));
    case CK_FLATTEN: {
        double depth = 1.0;
        if (na == 2) {
            if (args[1].k != CV_INT)
                cel_ev_panic(ev, "interface conversion: ref.Val is %s, not types.Int",
                             cel_go_type_name(&args[1]));
            depth = (double)args[1].v.i;
        }
        return alloc_list_cost(depth, ext_actual_size(&args[0]));
    }
    case CK_SELF0:
        assert_lister(ev, &args[0]);
        return self_compare_cost(&args[0]);
    case CK_SELF1:
        if (na > 1) {
            assert_lister(ev, &args[1]);
            return self_compare_cost(&args[1]);
        }
        return 1;
    case CK_SETS1:
    case CK_SETS2: {
        /* trackSetsCost: callCost + uint64(float64(lhsSize*rhsSize)*factor) */
        uint64_t m = ext_actual_size(&args[0]) * ext_actual_size(&args[1]);
        return safe_add(1, go_f2u((double)m * (kind == CK_SETS2 ? 2.0 : 1.0)));
    }
    case CK_CHECK:
        return 350000;
    case CK_ONE:
        return 1;
    case CK_LIST_FN:
        return na > 0 ? traversal_cost(&args[0]) : 0;
    case CK_STR1:
        return na >= 1 ? ceil_factor(actual_size(&args[0]), 0.1) : by_overload(kind, args);
    case CK_STR2:
        return na >= 1 ? ceil_factor(actual_size(&args[0]), 0.2) : by_overload(kind, args);
    case CK_JOIN:
        return na >= 1 ? ceil_factor(actual_size(result), 0.2) : by_overload(kind, args);
    case CK_FIND:
        if (na >= 2)
            return ceil_factor(1 + actual_size(&args[0]), 0.1) *
                   ceil_factor(actual_size(&args[1]), 0.25);
        return 1;
    case CK_CIDR_IP:
        return na >= 1 ? 1 : by_overload(kind, args);
    case CK_IP:
        return na >= 1 ? ceil_factor(actual_size(&args[0]), 0.1) : by_overload(kind, args);
    case CK_ISCANON:
        return na >= 1 ? ceil_factor(actual_size(&args[0]), 0.2) : by_overload(kind, args);
    case CK_CONTAINS_IP:
    case CK_CONTAINS_IP_STR:
        if (na >= 2) {
            uint64_t cs = actual_size(&args[0]), os = actual_size(&args[1]);
            uint64_t c = ceil_factor(cs + cs, 0.1);
            if (kind == CK_CONTAINS_IP_STR)
                c += ceil_factor(os, 0.1);
            return c;
        }
        return 1;
    case CK_CONTAINS_CIDR:
    case CK_CONTAINS_CIDR_STR:
        if (na >= 2) {
            uint64_t cs = actual_size(&args[0]), os = actual_size(&args[1]);
            uint64_t c = ceil_factor(cs + cs, 0.1);
            c += ceil_factor(cs, 0.1) + 1;
            if (kind == CK_CONTAINS_CIDR_STR)
                c += ceil_factor(os, 0.1);
            return c;
        }
        return 1;
    case CK_VALIDATE:
        if (na >= 2 && args[0].k == CV_FORMAT) {
            uint64_t strc = ceil_factor(1 + actual_size(&args[1]), 0.1);
            uint64_t rec = ceil_factor(cel_format_max_regex_size(args[0].v.s), 0.25);
            return strc * rec;
        }
        return 1;
    case CK_SUFFIX:
        return ceil_factor(actual_size(&args[1]), 0.1);
    case CK_CONV:
        return ceil_factor(actual_size(&args[0]), 0.1);
    case CK_IN_LIST:
        return actual_size(&args[1]);
    case CK_STRCMP: {
        uint64_t a = actual_size(&args[0]), b = actual_size(&args[1]);
        return ceil_factor(a < b ? a : b, 0.1);
    }
    case CK_ADD_STR:
        return ceil_factor(actual_size(&args[0]) + actual_size(&args[1]), 0.1);
    case CK_MATCHES:
        return ceil_factor(1 + actual_size(&args[0]), 0.1) *
               ceil_factor(actual_size(&args[1]), 0.25);
    case CK_CONTAINS:
        return ceil_factor(actual_size(&args[0]), 0.1) * ceil_factor(actual_size(&args[1]), 0.1);
    }
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
