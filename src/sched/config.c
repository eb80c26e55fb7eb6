/* config.c - a KubeSchedulerConfiguration file read into scheduling profiles (see config.h),
 * with kube-scheduler v1.37's defaults (pkg/scheduler/apis/config/v1) and validation. */
#include "sched/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/goparse.h"
#include "kube/decode.h"
#include "kube/yaml.h"

/* field paths are built in fixed buffers far longer than any real one; a cut one ends the
 * same message, so GCC's truncation warnings do not apply */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

/* the parse's context: where errors point */
struct cfgp {
    const char *file;
    struct kube_lines *lines;
    struct err *err;
};

/* fail reports "FILE: line N: FIELD: message" for value v (the line of v, or of parent when
 * v has none) */
static int fail(struct cfgp *p, const json_t *v, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(struct cfgp *p, const json_t *v, const char *field, const char *fmt, ...)
{
    char msg[ERR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    err_set(p->err, -EINVAL, "%s", msg);
    err_at(p->err, p->file, v ? kube_lines_find(p->lines, v) : 0, 0);
    err_field(p->err, field);
    return -EINVAL;
}

/* check_keys refuses a key of obj not in allowed (NULL-terminated) */
static int check_keys(struct cfgp *p, json_t *obj, const char *path, const char *const *allowed,
                      const char *what)
{
    const char *k;
    json_t *v;
    char f[256];
    size_t i;

    json_object_foreach(obj, k, v)
    {
        for (i = 0; allowed[i] && strcmp(allowed[i], k); i++)
            ;
        if (!allowed[i]) {
            snprintf(f, sizeof(f), "%s%s%s", path, *path ? "." : "", k);
            return fail(p, v, f, "%s \"%s\"", what, k);
        }
    }
    return 0;
}

/* want fails on v, present and not of JSON type t, in the Go decoder's words (kube/decode.h) */
static int want(struct cfgp *p, json_t *v, json_type t, const char *field)
{
    struct err e;

    if (!v || json_typeof(v) == t || (t == JSON_TRUE && json_is_boolean(v)))
        return 0;
    err_clear(&e);
    kube_json_type_error(&e, v, NULL, NULL,
                         t == JSON_OBJECT   ? "struct"
                         : t == JSON_ARRAY  ? "slice"
                         : t == JSON_STRING ? "string"
                         : t == JSON_TRUE   ? "bool"
                                            : "int64");
    return fail(p, v, field, "%s", e.msg);
}

/* get_int reads an integer in [lo, hi] */
static int get_int(struct cfgp *p, json_t *v, const char *field, int64_t lo, int64_t hi,
                   int64_t *out)
{
    int rc;

    if ((rc = want(p, v, JSON_INTEGER, field)))
        return rc;
    *out = json_integer_value(v);
    if (*out < lo || *out > hi)
        return fail(p, v, field, "%lld is not in the range [%lld, %lld]", (long long)*out,
                    (long long)lo, (long long)hi);
    return 0;
}

/* ---------------------------------------------------------------- plugins */

/* the score plugins gpusched models, and their slot in a profile */
enum splug {
    SP_TAINT,
    SP_AFFINITY,
    SP_FIT,
    SP_BALANCED,
    SP_SPREAD,
    SP_INTERPOD,
    SP_IMAGE,
    SP_GPU,
    SP_NOOP,
    SP_COUNT
};

static const struct {
    const char *name;
    enum splug slot;
    int32_t def_weight; /* in kube-scheduler's default multiPoint set; 0 not there */
} score_plugins[] = {
    {"TaintToleration", SP_TAINT, 3},    {"NodeAffinity", SP_AFFINITY, 2},
    {"NodeResourcesFit", SP_FIT, 1},     {"NodeResourcesBalancedAllocation", SP_BALANCED, 1},
    {"PodTopologySpread", SP_SPREAD, 2}, {"GPUPlacement", SP_GPU, 0},
    {"ImageLocality", SP_IMAGE, 1},      {"InterPodAffinity", SP_INTERPOD, 2},
};

/* the filter plugins of kube-scheduler's default profile gpusched runs */
static const char *const filter_plugins[] = {
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    NULL,
};

static int find_score(const char *name)
{
    size_t i;

    for (i = 0; i < sizeof(score_plugins) / sizeof(score_plugins[0]); i++)
        if (!strcmp(score_plugins[i].name, name))
            return (int)i;
    return -1;
}

static bool is_filter(const char *name)
{
    size_t i;

    for (i = 0; filter_plugins[i]; i++)
        if (!strcmp(filter_plugins[i], name))
            return true;
    return false;
}

/* plugin_list reads [{name, weight}] at path; fn gets each (weight -1 when absent) */
struct pl_entry {
    const char *name;
    json_t *v;
    int64_t weight;
    char field[200];
};

static int plugin_list(struct cfgp *p, json_t *list, const char *path, bool weights,
                       struct pl_entry *out, size_t *n, size_t max)
{
    static const char *const keys_w[] = {"name", "weight", NULL};
    static const char *const keys[] = {"name", NULL};
    size_t i;
    json_t *e;
    int rc;

    *n = 0;
    if (!list)
        return 0;
    if ((rc = want(p, list, JSON_ARRAY, path)))
        return rc;
    json_array_foreach(list, i, e)
    {
        struct pl_entry *x;
        json_t *name, *w;
        char f[256];
        snprintf(f, sizeof(f), "%s[%zu]", path, i);
        if ((rc = want(p, e, JSON_OBJECT, f)) ||
            (rc = check_keys(p, e, f, weights ? keys_w : keys, "unknown field")))
            return rc;
        if (*n == max)
            return fail(p, e, f, "more than %zu plugins", max);
        x = &out[(*n)++];
        snprintf(x->field, sizeof(x->field), "%s.name", f);
        name = json_object_get(e, "name");
        if (!json_is_string(name) || !*json_string_value(name))
            return fail(p, name ? name : e, x->field, "a plugin name is required");
        x->name = json_string_value(name);
        x->v = name;
        x->weight = -1;
        if ((w = json_object_get(e, "weight"))) {
            snprintf(f + strlen(f), sizeof(f) - strlen(f), ".weight");
            /* kube-scheduler refuses totals that could overflow; gpusched keeps scores in 32
             * bits, so it caps a weight at 10000 */
            if ((rc = get_int(p, w, f, 0, 10000, &x->weight)))
                return rc;
        }
    }
    return 0;
}

#define MAX_PL 32

static int parse_plugins(struct cfgp *p, json_t *plugins, const char *path,
                         struct sched_profile *prof)
{
    static const char *const points[] = {"multiPoint", "score", "filter", NULL};
    static const char *const set_keys[] = {"enabled", "disabled", NULL};
    static const char *const others[] = {"preEnqueue", "queueSort", "preFilter", "postFilter",
                                         "preScore",   "reserve",   "permit",    "preBind",
                                         "bind",       "postBind",  NULL};
    struct pl_entry en[MAX_PL], dis[MAX_PL], mp[MAX_PL];
    size_t nen, ndis, nmp, i;
    int32_t w[SP_COUNT];
    bool on[SP_COUNT], all_off = false;
    json_t *pt, *v;
    const char *k;
    char f[256];
    int rc, s;

    if ((rc = want(p, plugins, JSON_OBJECT, path)))
        return rc;
    json_object_foreach(plugins, k, v)
    {
        snprintf(f, sizeof(f), "%s.%s", path, k);
        for (i = 0; others[i] && strcmp(others[i], k); i++)
            ;
        if (others[i])
            return fail(p, v, f,
                        "configuring the %s extension point is not supported by "
                        "gpusched",
                        k);
        for (i = 0; points[i] && strcmp(points[i], k); i++)
            ;
        if (!points[i])
            return fail(p, v, f, "unknown field \"%s\"", k);
        if ((rc = want(p, v, JSON_OBJECT, f)) ||
            (rc = check_keys(p, v, f, set_keys, "unknown field")))
            return rc;
    }
    /* the default multiPoint set's weights, then the file's multiPoint entries */
    for (i = 0; i < SP_COUNT; i++) {
        w[i] = 0;
        on[i] = false;
    }
    for (i = 0; i < sizeof(score_plugins) / sizeof(score_plugins[0]); i++)
        if (score_plugins[i].def_weight) {
            w[score_plugins[i].slot] = score_plugins[i].def_weight;
            on[score_plugins[i].slot] = true;
        }
    if ((pt = json_object_get(plugins, "multiPoint"))) {
        snprintf(f, sizeof(f), "%s.multiPoint.disabled", path);
        if ((rc = plugin_list(p, json_object_get(pt, "disabled"), f, false, dis, &ndis, MAX_PL)))
            return rc;
        for (i = 0; i < ndis; i++) {
            s = find_score(dis[i].name);
            /* a score-only plugin disabled at every point is disabled at Score */
            if (!strcmp(dis[i].name, "NodeResourcesBalancedAllocation") ||
                !strcmp(dis[i].name, "ImageLocality") || !strcmp(dis[i].name, "GPUPlacement")) {
                on[score_plugins[s].slot] = false;
                continue;
            }
            return fail(p, dis[i].v, dis[i].field,
                        "disabling %s at every extension point is not supported by gpusched "
                        "(its filters always run; disable it under plugins.score instead)",
                        dis[i].name);
        }
        snprintf(f, sizeof(f), "%s.multiPoint.enabled", path);
        if ((rc = plugin_list(p, json_object_get(pt, "enabled"), f, true, mp, &nmp, MAX_PL)))
            return rc;
        for (i = 0; i < nmp; i++) {
            s = find_score(mp[i].name);
            if (s < 0 && !is_filter(mp[i].name))
                return fail(p, mp[i].v, mp[i].field,
                            "unknown or unsupported plugin \"%s\" (gpusched models %s)", mp[i].name,
                            "TaintToleration, NodeAffinity, NodeResourcesFit, "
                            "NodeResourcesBalancedAllocation, PodTopologySpread, GPUPlacement");
            if (s >= 0) {
                on[score_plugins[s].slot] = true;
                w[score_plugins[s].slot] = mp[i].weight > 0 ? (int32_t)mp[i].weight : 1;
            }
        }
    }
    if ((pt = json_object_get(plugins, "filter"))) {
        snprintf(f, sizeof(f), "%s.filter.disabled", path);
        if ((rc = plugin_list(p, json_object_get(pt, "disabled"), f, false, dis, &ndis, MAX_PL)))
            return rc;
        if (ndis)
            return fail(p, dis[0].v, dis[0].field,
                        "disabling the filter \"%s\" is not supported by gpusched", dis[0].name);
        snprintf(f, sizeof(f), "%s.filter.enabled", path);
        if ((rc = plugin_list(p, json_object_get(pt, "enabled"), f, false, en, &nen, MAX_PL)))
            return rc;
        for (i = 0; i < nen; i++)
            if (!is_filter(en[i].name))
                return fail(p, en[i].v, en[i].field, "unknown or unsupported filter plugin \"%s\"",
                            en[i].name);
    }
    if ((pt = json_object_get(plugins, "score"))) {
        int32_t sw[SP_COUNT];
        bool set[SP_COUNT];
        snprintf(f, sizeof(f), "%s.score.disabled", path);
        if ((rc = plugin_list(p, json_object_get(pt, "disabled"), f, false, dis, &ndis, MAX_PL)))
            return rc;
        for (i = 0; i < ndis; i++) {
            if (!strcmp(dis[i].name, "*")) {
                all_off = true;
                continue;
            }
            if ((s = find_score(dis[i].name)) < 0)
                return fail(p, dis[i].v, dis[i].field, "unknown or unsupported score plugin \"%s\"",
                            dis[i].name);
            on[score_plugins[s].slot] = false;
        }
        if (all_off)
            for (i = 0; i < SP_COUNT; i++)
                on[i] = false;
        snprintf(f, sizeof(f), "%s.score.enabled", path);
        if ((rc = plugin_list(p, json_object_get(pt, "enabled"), f, true, en, &nen, MAX_PL)))
            return rc;
        for (i = 0; i < SP_COUNT; i++)
            set[i] = false;
        for (i = 0; i < nen; i++) {
            if ((s = find_score(en[i].name)) < 0)
                return fail(p, en[i].v, en[i].field, "unknown or unsupported score plugin \"%s\"",
                            en[i].name);
            if (set[score_plugins[s].slot] && score_plugins[s].slot != SP_NOOP)
                return fail(p, en[i].v, en[i].field, "plugin \"%s\" is enabled twice", en[i].name);
            set[score_plugins[s].slot] = true;
            sw[score_plugins[s].slot] = en[i].weight > 0 ? (int32_t)en[i].weight : 1;
        }
        for (i = 0; i < SP_COUNT; i++)
            if (set[i]) {
                on[i] = true;
                w[i] = sw[i];
            }
    }
    prof->w_taint = on[SP_TAINT] ? w[SP_TAINT] : 0;
    prof->w_affinity = on[SP_AFFINITY] ? w[SP_AFFINITY] : 0;
    prof->w_fit = on[SP_FIT] ? w[SP_FIT] : 0;
    prof->w_balanced = on[SP_BALANCED] ? w[SP_BALANCED] : 0;
    prof->w_spread = on[SP_SPREAD] ? w[SP_SPREAD] : 0;
    prof->w_interpod = on[SP_INTERPOD] ? w[SP_INTERPOD] : 0;
    prof->w_image = on[SP_IMAGE] ? w[SP_IMAGE] : 0;
    prof->gpu_aware = on[SP_GPU];
    prof->gpu_weight = on[SP_GPU] ? w[SP_GPU] : 0;
    return 0;
}

/* ---------------------------------------------------------------- pluginConfig */

static int parse_fit_args(struct cfgp *p, json_t *args, const char *path,
                          struct sched_profile *prof)
{
    static const char *const keys[] = {"apiVersion", "kind", "scoringStrategy", NULL};
    static const char *const ss_keys[] = {"type", "resources", "requestedToCapacityRatio", NULL};
    static const char *const res_keys[] = {"name", "weight", NULL};
    static const char *const rtcr_keys[] = {"shape", NULL};
    static const char *const pt_keys[] = {"utilization", "score", NULL};
    json_t *ss, *t, *res, *e, *rtcr, *shape, *v;
    const char *k;
    char f[256];
    size_t i, j;
    int rc;

    if (json_is_null(args))
        return 0;
    if ((rc = want(p, args, JSON_OBJECT, path)))
        return rc;
    json_object_foreach(args, k, v)
    {
        if (!strcmp(k, "ignoredResources") || !strcmp(k, "ignoredResourceGroups")) {
            snprintf(f, sizeof(f), "%s.%s", path, k);
            return fail(p, v, f, "not supported by gpusched");
        }
    }
    if ((rc = check_keys(p, args, path, keys, "unknown field")))
        return rc;
    if ((v = json_object_get(args, "kind")) &&
        !(json_is_string(v) && !strcmp(json_string_value(v), "NodeResourcesFitArgs"))) {
        snprintf(f, sizeof(f), "%s.kind", path);
        return fail(p, v, f, "must be NodeResourcesFitArgs");
    }
    if (!(ss = json_object_get(args, "scoringStrategy")) || json_is_null(ss))
        return 0; /* LeastAllocated, cpu:1 memory:1 */
    snprintf(f, sizeof(f), "%s.scoringStrategy", path);
    if ((rc = want(p, ss, JSON_OBJECT, f)) || (rc = check_keys(p, ss, f, ss_keys, "unknown field")))
        return rc;
    snprintf(f, sizeof(f), "%s.scoringStrategy.type", path);
    t = json_object_get(ss, "type");
    if (t && json_is_string(t) && !strcmp(json_string_value(t), "LeastAllocated"))
        prof->fit_strategy = SCHED_FIT_LEAST_ALLOCATED;
    else if (t && json_is_string(t) && !strcmp(json_string_value(t), "MostAllocated"))
        prof->fit_strategy = SCHED_FIT_MOST_ALLOCATED;
    else if (t && json_is_string(t) && !strcmp(json_string_value(t), "RequestedToCapacityRatio"))
        prof->fit_strategy = SCHED_FIT_REQUESTED_TO_CAPACITY_RATIO;
    else
        return fail(p, t ? t : ss, f,
                    "Unsupported value: \"%s\": supported values: \"LeastAllocated\", "
                    "\"MostAllocated\", \"RequestedToCapacityRatio\"",
                    t && json_is_string(t) ? json_string_value(t) : "");
    /* resources: the file's (weight 0 -> 1), or cpu:1 memory:1 */
    res = json_object_get(ss, "resources");
    snprintf(f, sizeof(f), "%s.scoringStrategy.resources", path);
    if (res && !json_is_null(res)) {
        if ((rc = want(p, res, JSON_ARRAY, f)))
            return rc;
        if (json_array_size(res) > SCHED_MAX_FIT_RESOURCES)
            return fail(p, res, f, "more than %d resources", SCHED_MAX_FIT_RESOURCES);
        if (json_array_size(res))
            prof->nfit_resources = 0;
        json_array_foreach(res, i, e)
        {
            char g[256];
            json_t *name;
            int64_t wt = 1;
            snprintf(g, sizeof(g), "%s[%zu]", f, i);
            if ((rc = want(p, e, JSON_OBJECT, g)) ||
                (rc = check_keys(p, e, g, res_keys, "unknown field")))
                return rc;
            name = json_object_get(e, "name");
            snprintf(g + strlen(g), sizeof(g) - strlen(g), ".name");
            if (!json_is_string(name) || !*json_string_value(name))
                return fail(p, name ? name : e, g, "a resource name is required");
            for (j = 0; j < prof->nfit_resources; j++)
                if (!strcmp(prof->fit_resources[j].name, json_string_value(name)))
                    return fail(p, name, g, "Duplicate value: \"%s\"", json_string_value(name));
            if ((v = json_object_get(e, "weight"))) {
                snprintf(g, sizeof(g), "%s[%zu].weight", f, i);
                if ((rc = get_int(p, v, g, 0, 100, &wt)))
                    return rc;
                if (!wt)
                    wt = 1;
            }
            prof->fit_resources[prof->nfit_resources].name = json_string_value(name);
            prof->fit_resources[prof->nfit_resources++].weight = wt;
        }
    }
    rtcr = json_object_get(ss, "requestedToCapacityRatio");
    snprintf(f, sizeof(f), "%s.scoringStrategy.requestedToCapacityRatio", path);
    if (prof->fit_strategy != SCHED_FIT_REQUESTED_TO_CAPACITY_RATIO) {
        if (rtcr && !json_is_null(rtcr))
            return fail(p, rtcr, f,
                        "Forbidden: must be nil when type is not "
                        "RequestedToCapacityRatio");
        return 0;
    }
    if (!rtcr || json_is_null(rtcr))
        return fail(p, ss, f,
                    "Required value: must be specified when type is "
                    "RequestedToCapacityRatio");
    if ((rc = want(p, rtcr, JSON_OBJECT, f)) ||
        (rc = check_keys(p, rtcr, f, rtcr_keys, "unknown field")))
        return rc;
    shape = json_object_get(rtcr, "shape");
    snprintf(f + strlen(f), sizeof(f) - strlen(f), ".shape");
    if (shape && (rc = want(p, shape, JSON_ARRAY, f)))
        return rc;
    if (!shape || !json_array_size(shape))
        return fail(p, shape ? shape : rtcr, f,
                    "Required value: at least one point must be "
                    "specified");
    if (json_array_size(shape) > SCHED_MAX_SHAPE_POINTS)
        return fail(p, shape, f, "more than %d points", SCHED_MAX_SHAPE_POINTS);
    prof->nshape = 0;
    json_array_foreach(shape, i, e)
    {
        char g[256];
        struct sched_shape_point *sp = &prof->shape[prof->nshape];
        snprintf(g, sizeof(g), "%s[%zu]", f, i);
        if ((rc = want(p, e, JSON_OBJECT, g)) ||
            (rc = check_keys(p, e, g, pt_keys, "unknown field")))
            return rc;
        sp->utilization = sp->score = 0;
        snprintf(g, sizeof(g), "%s[%zu].utilization", f, i);
        if ((v = json_object_get(e, "utilization")) &&
            (rc = get_int(p, v, g, 0, 100, &sp->utilization)))
            return rc;
        if (i && prof->shape[i - 1].utilization >= sp->utilization)
            return fail(p, v ? v : e, g,
                        "Invalid value: %lld: values must be sorted in "
                        "increasing order",
                        (long long)sp->utilization);
        snprintf(g, sizeof(g), "%s[%zu].score", f, i);
        if ((v = json_object_get(e, "score")) && (rc = get_int(p, v, g, 0, 10, &sp->score)))
            return rc;
        prof->nshape++;
    }
    return 0;
}

/* DynamicResourcesArgs: bindingTimeout (at least 1 s, the validation's rule); filterTimeout
 * (the allocator's time limit per node) is not modelled: refused unless 0 (off) */
static int parse_dra_args(struct cfgp *p, json_t *args, const char *path,
                          struct sched_profile *prof)
{
    static const char *const keys[] = {"apiVersion", "kind", "filterTimeout", "bindingTimeout",
                                       NULL};
    json_t *v;
    char f[300];
    int rc;

    if (json_is_null(args))
        return 0;
    if ((rc = want(p, args, JSON_OBJECT, path)) ||
        (rc = check_keys(p, args, path, keys, "unknown field")))
        return rc;
    if ((v = json_object_get(args, "kind")) &&
        !(json_is_string(v) && !strcmp(json_string_value(v), "DynamicResourcesArgs"))) {
        snprintf(f, sizeof(f), "%s.kind", path);
        return fail(p, v, f, "must be DynamicResourcesArgs");
    }
    if ((v = json_object_get(args, "filterTimeout")) && !json_is_null(v)) {
        struct err e = {0};
        int64_t ns;

        snprintf(f, sizeof(f), "%s.filterTimeout", path);
        if ((rc = want(p, v, JSON_STRING, f)))
            return rc;
        if (go_parse_duration(json_string_value(v), &ns, &e))
            return fail(p, v, f, "%s", e.msg);
        if (ns < 0)
            return fail(p, v, f, "Invalid value: %s: must be zero or positive",
                        json_string_value(v));
        if (ns > 0)
            return fail(p, v, f,
                        "not supported by gpusched (its allocator has no time limit): only 0 "
                        "(off) is");
    }
    if ((v = json_object_get(args, "bindingTimeout")) && !json_is_null(v)) {
        struct err e = {0};
        int64_t ns;

        snprintf(f, sizeof(f), "%s.bindingTimeout", path);
        if ((rc = want(p, v, JSON_STRING, f)))
            return rc;
        if (go_parse_duration(json_string_value(v), &ns, &e))
            return fail(p, v, f, "%s", e.msg);
        if (ns < 1000000000LL)
            return fail(p, v, f, "Invalid value: %s: must be at least 1 second",
                        json_string_value(v));
        prof->dra_binding_timeout_ms = ns / 1000000;
    }
    return 0;
}

static int parse_plugin_config(struct cfgp *p, json_t *pc, const char *path,
                               struct sched_profile *prof)
{
    static const char *const keys[] = {"name", "args", NULL};
    bool seen = false, seen_dra = false;
    json_t *e, *name;
    char f[256];
    size_t i;
    int rc;

    if ((rc = want(p, pc, JSON_ARRAY, path)))
        return rc;
    json_array_foreach(pc, i, e)
    {
        snprintf(f, sizeof(f), "%s[%zu]", path, i);
        if ((rc = want(p, e, JSON_OBJECT, f)) || (rc = check_keys(p, e, f, keys, "unknown field")))
            return rc;
        name = json_object_get(e, "name");
        snprintf(f, sizeof(f), "%s[%zu].name", path, i);
        if (!json_is_string(name))
            return fail(p, name ? name : e, f, "a plugin name is required");
        if (!strcmp(json_string_value(name), "DynamicResources")) {
            if (seen_dra)
                return fail(p, name, f, "Duplicate value: \"DynamicResources\"");
            seen_dra = true;
            snprintf(f, sizeof(f), "%s[%zu].args", path, i);
            if ((rc = parse_dra_args(p, json_object_get(e, "args"), f, prof)))
                return rc;
            continue;
        }
        if (strcmp(json_string_value(name), "NodeResourcesFit"))
            return fail(p, name, f,
                        "args of plugin \"%s\" are not supported by gpusched (only "
                        "NodeResourcesFit's and DynamicResources')",
                        json_string_value(name));
        if (seen)
            return fail(p, name, f, "Duplicate value: \"NodeResourcesFit\"");
        seen = true;
        snprintf(f, sizeof(f), "%s[%zu].args", path, i);
        if ((rc = parse_fit_args(p, json_object_get(e, "args"), f, prof)))
            return rc;
    }
    return 0;
}

/* ---------------------------------------------------------------- top level */

static int parse_duration_ms(struct cfgp *p, json_t *v, const char *field, int64_t *ms)
{
    struct err e = {0};
    int64_t ns;
    int rc;

    if ((rc = want(p, v, JSON_STRING, field)))
        return rc;
    if (go_parse_duration(json_string_value(v), &ns, &e))
        return fail(p, v, field, "%s", e.msg);
    if (ns <= 0)
        return fail(p, v, field, "must be greater than zero");
    *ms = ns / 1000000;
    return 0;
}

static int parse_leader(struct cfgp *p, json_t *le, struct sched_config *cfg)
{
    static const char *const keys[] = {
        "leaderElect",  "leaseDuration", "renewDeadline",     "retryPeriod",
        "resourceLock", "resourceName",  "resourceNamespace", NULL};
    json_t *v;
    int rc;

    if ((rc = want(p, le, JSON_OBJECT, "leaderElection")) ||
        (rc = check_keys(p, le, "leaderElection", keys, "unknown field")))
        return rc;
    if ((v = json_object_get(le, "leaderElect"))) {
        if ((rc = want(p, v, JSON_TRUE, "leaderElection.leaderElect")))
            return rc;
        cfg->has_leader_elect = true;
        cfg->leader_elect = json_is_true(v);
    }
    if ((v = json_object_get(le, "leaseDuration"))) {
        if ((rc = parse_duration_ms(p, v, "leaderElection.leaseDuration", &cfg->lease_duration_ms)))
            return rc;
        cfg->has_lease_duration = true;
    }
    if ((v = json_object_get(le, "renewDeadline"))) {
        if ((rc = parse_duration_ms(p, v, "leaderElection.renewDeadline", &cfg->renew_deadline_ms)))
            return rc;
        cfg->has_renew_deadline = true;
    }
    if ((v = json_object_get(le, "retryPeriod"))) {
        if ((rc = parse_duration_ms(p, v, "leaderElection.retryPeriod", &cfg->retry_period_ms)))
            return rc;
        cfg->has_retry_period = true;
    }
    if ((v = json_object_get(le, "resourceLock")) &&
        !(json_is_string(v) && !strcmp(json_string_value(v), "leases")))
        return fail(p, v, "leaderElection.resourceLock", "only \"leases\" is supported");
    if ((v = json_object_get(le, "resourceName"))) {
        if ((rc = want(p, v, JSON_STRING, "leaderElection.resourceName")))
            return rc;
        cfg->lease_name = json_string_value(v);
    }
    if ((v = json_object_get(le, "resourceNamespace"))) {
        if ((rc = want(p, v, JSON_STRING, "leaderElection.resourceNamespace")))
            return rc;
        cfg->lease_namespace = json_string_value(v);
    }
    if (cfg->has_lease_duration && cfg->has_renew_deadline &&
        cfg->renew_deadline_ms >= cfg->lease_duration_ms)
        return fail(p, json_object_get(le, "renewDeadline"), "leaderElection.renewDeadline",
                    "must be less than leaseDuration");
    return 0;
}

static int parse_doc(struct cfgp *p, json_t *doc, const struct sched_profile *base,
                     struct sched_config *cfg)
{
    static const char *const keys[] = {"apiVersion",
                                       "kind",
                                       "profiles",
                                       "percentageOfNodesToScore",
                                       "leaderElection",
                                       "parallelism",
                                       "podInitialBackoffSeconds",
                                       "podMaxBackoffSeconds",
                                       NULL};
    static const char *const prof_keys[] = {"schedulerName", "percentageOfNodesToScore", "plugins",
                                            "pluginConfig", NULL};
    json_t *v, *profiles, *e;
    int64_t pct = 0, ppct, n;
    bool has_pct = false;
    size_t i, j;
    int rc;

    if ((rc = want(p, doc, JSON_OBJECT, "")))
        return rc;
    v = json_object_get(doc, "apiVersion");
    if (!json_is_string(v) || strcmp(json_string_value(v), "kubescheduler.config.k8s.io/v1"))
        return fail(p, v ? v : doc, "apiVersion", "want kubescheduler.config.k8s.io/v1, not \"%s\"",
                    json_is_string(v) ? json_string_value(v) : "");
    v = json_object_get(doc, "kind");
    if (!json_is_string(v) || strcmp(json_string_value(v), "KubeSchedulerConfiguration"))
        return fail(p, v ? v : doc, "kind", "want KubeSchedulerConfiguration, not \"%s\"",
                    json_is_string(v) ? json_string_value(v) : "");
    if ((rc = check_keys(p, doc, "", keys, "unknown or unsupported field")))
        return rc;
    if ((v = json_object_get(doc, "percentageOfNodesToScore")) && !json_is_null(v)) {
        if ((rc = get_int(p, v, "percentageOfNodesToScore", 0, 100, &pct)))
            return rc;
        has_pct = true;
    }
    if ((v = json_object_get(doc, "parallelism")) &&
        (rc = get_int(p, v, "parallelism", 1, INT32_MAX, &n)))
        return rc;
    if ((v = json_object_get(doc, "podInitialBackoffSeconds"))) {
        if ((rc = get_int(p, v, "podInitialBackoffSeconds", 1, 86400, &n)))
            return rc;
        cfg->has_initial_backoff = true;
        cfg->initial_backoff_ms = n * 1000;
    }
    if ((v = json_object_get(doc, "podMaxBackoffSeconds"))) {
        if ((rc = get_int(p, v, "podMaxBackoffSeconds", 1, 86400, &n)))
            return rc;
        cfg->has_max_backoff = true;
        cfg->max_backoff_ms = n * 1000;
    }
    if ((v = json_object_get(doc, "leaderElection")) && (rc = parse_leader(p, v, cfg)))
        return rc;
    profiles = json_object_get(doc, "profiles");
    if (profiles && (rc = want(p, profiles, JSON_ARRAY, "profiles")))
        return rc;
    n = profiles && json_array_size(profiles) ? (int64_t)json_array_size(profiles) : 1;
    if (!(cfg->profiles = calloc((size_t)n, sizeof(*cfg->profiles))))
        return err_set(p->err, -ENOMEM, "out of memory");
    cfg->nprofiles = (size_t)n;
    for (i = 0; i < cfg->nprofiles; i++) {
        struct sched_profile *prof = &cfg->profiles[i];
        char path[64], f[128];
        *prof = *base;
        prof->name = "default-scheduler";
        prof->gpu_aware = false;
        prof->gpu_weight = 0;
        prof->w_taint = 3;
        prof->w_affinity = 2;
        prof->w_fit = 1;
        prof->w_balanced = 1;
        prof->w_spread = 2;
        prof->w_interpod = 2;
        prof->w_image = 1;
        prof->fit_strategy = SCHED_FIT_LEAST_ALLOCATED;
        prof->nfit_resources = 2;
        prof->fit_resources[0] = (struct sched_fit_resource){"cpu", 1};
        prof->fit_resources[1] = (struct sched_fit_resource){"memory", 1};
        prof->nshape = 0;
        prof->percentage_of_nodes_to_score = has_pct ? (int32_t)pct : 0;
        if (!profiles || !json_array_size(profiles))
            continue;
        e = json_array_get(profiles, i);
        snprintf(path, sizeof(path), "profiles[%zu]", i);
        if ((rc = want(p, e, JSON_OBJECT, path)) ||
            (rc = check_keys(p, e, path, prof_keys, "unknown field")))
            return rc;
        if ((v = json_object_get(e, "schedulerName"))) {
            snprintf(f, sizeof(f), "%s.schedulerName", path);
            if ((rc = want(p, v, JSON_STRING, f)))
                return rc;
            if (!*json_string_value(v))
                return fail(p, v, f, "Required value");
            prof->name = json_string_value(v);
        }
        for (j = 0; j < i; j++)
            if (!strcmp(cfg->profiles[j].name, prof->name)) {
                snprintf(f, sizeof(f), "%s.schedulerName", path);
                return fail(p, v ? v : e, f, "Duplicate value: \"%s\"", prof->name);
            }
        if ((v = json_object_get(e, "percentageOfNodesToScore")) && !json_is_null(v)) {
            snprintf(f, sizeof(f), "%s.percentageOfNodesToScore", path);
            if ((rc = get_int(p, v, f, 0, 100, &ppct)))
                return rc;
            prof->percentage_of_nodes_to_score = (int32_t)ppct;
        }
        if ((v = json_object_get(e, "plugins")) && !json_is_null(v)) {
            snprintf(f, sizeof(f), "%s.plugins", path);
            if ((rc = parse_plugins(p, v, f, prof)))
                return rc;
        }
        if ((v = json_object_get(e, "pluginConfig")) && !json_is_null(v)) {
            snprintf(f, sizeof(f), "%s.pluginConfig", path);
            if ((rc = parse_plugin_config(p, v, f, prof)))
                return rc;
        }
    }
    return 0;
}

int sched_config_parse(const char *text, size_t len, const char *name,
                       const struct sched_profile *base, struct sched_config *cfg, struct err *err)
{
    struct cfgp p = {name, NULL, err};
    json_t *docs = NULL;
    int rc;

    memset(cfg, 0, sizeof(*cfg));
    if (!base)
        base = &sched_profile_default;
    rc = kube_yaml_load(text, len, name, &docs, &p.lines, err);
    if (rc) {
        if (err && !err->file[0])
            err_at(err, name, err->line, err->column);
        return rc;
    }
    if (json_array_size(docs) != 1) {
        rc = fail(&p, NULL, "", "want one KubeSchedulerConfiguration document, found %zu",
                  json_array_size(docs));
    } else {
        cfg->doc = json_incref(json_array_get(docs, 0));
        rc = parse_doc(&p, cfg->doc, base, cfg);
    }
    json_decref(docs);
    kube_lines_free(p.lines);
    if (rc)
        sched_config_release(cfg);
    return rc;
}

int sched_config_load(const char *path, const struct sched_profile *base, struct sched_config *cfg,
                      struct err *err)
{
    struct buf b = BUF_INIT(1 << 20);
    int rc;

    memset(cfg, 0, sizeof(*cfg));
    if ((rc = buf_read_file(path, &b))) {
        err_set(err, rc, "cannot read the scheduler configuration: %s",
                rc == -E2BIG ? "larger than 1 MiB" : strerror(-rc));
        err_at(err, path, 0, 0);
        return rc;
    }
    rc = sched_config_parse(b.data ? b.data : "", b.len, path, base, cfg, err);
    buf_release(&b);
    return rc;
}

const struct sched_profile *sched_config_find(const struct sched_config *cfg, const char *name)
{
    size_t i;

    for (i = 0; cfg && name && i < cfg->nprofiles; i++)
        if (!strcmp(cfg->profiles[i].name, name))
            return &cfg->profiles[i];
    return NULL;
}

void sched_config_release(struct sched_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->profiles);
    json_decref(cfg->doc);
    memset(cfg, 0, sizeof(*cfg));
}
