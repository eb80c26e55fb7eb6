/* sched_tb.c - see sched_tb.h. Test-only code: a malformed spec is a bug in the test, so it
 * aborts with a message. */
#include "sched_tb.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/rules.h"

#define MIB (1024LL * 1024)

static void die(const char *what, const char *s)
{
    fprintf(stderr, "sched_tb: %s: '%s'\n", what, s);
    abort();
}

static void *grow_arr(struct arena *a, void *old, size_t n, size_t elem)
{
    void *p = arena_alloc(a, (n + 1) * elem);

    if (!p)
        die("out of memory", "");
    if (old && n)
        memcpy(p, old, n * elem);
    return p;
}

static enum kube_taint_effect effect_of(const char *s)
{
    if (!*s)
        return KUBE_EFFECT_ANY;
    if (!strcmp(s, "NoSchedule"))
        return KUBE_EFFECT_NO_SCHEDULE;
    if (!strcmp(s, "PreferNoSchedule"))
        return KUBE_EFFECT_PREFER_NO_SCHEDULE;
    if (!strcmp(s, "NoExecute"))
        return KUBE_EFFECT_NO_EXECUTE;
    die("bad effect", s);
    return KUBE_EFFECT_ANY;
}

static void add_scalar(struct arena *a, struct kube_resources *r, const char *name, int64_t v)
{
    r->scalars = grow_arr(a, r->scalars, r->nscalars, sizeof(*r->scalars));
    r->scalars[r->nscalars].name = arena_strdup(a, name);
    r->scalars[r->nscalars++].value = v;
}

/* "cpu=1,mem=2,gpu=1" or a single word into r */
static void res_word(struct arena *a, struct kube_resources *r, const char *w)
{
    char key[128];
    const char *eq = strchr(w, '=');
    long long v;

    if (!eq || (size_t)(eq - w) >= sizeof(key))
        die("bad resource", w);
    memcpy(key, w, (size_t)(eq - w));
    key[eq - w] = 0;
    v = atoll(eq + 1);
    if (!strcmp(key, "cpu")) {
        r->cpu_milli = v;
        r->set |= KUBE_RES_CPU;
    } else if (!strcmp(key, "mem")) {
        r->memory = v * MIB;
        r->set |= KUBE_RES_MEMORY;
    } else if (!strcmp(key, "eph")) {
        r->ephemeral = v * MIB;
        r->set |= KUBE_RES_EPHEMERAL;
    } else if (!strcmp(key, "pods")) {
        r->pods = v;
        r->set |= KUBE_RES_PODS;
    } else if (!strcmp(key, "gpu")) {
        add_scalar(a, r, "nvidia.com/gpu", v);
    } else if (!strncmp(key, "scalar:", 7)) {
        add_scalar(a, r, key + 7, v);
    } else {
        die("bad resource", w);
    }
}

static void res_list(struct arena *a, struct kube_resources *r, const char *list)
{
    char buf[256], *save = NULL, *t;

    snprintf(buf, sizeof(buf), "%s", list);
    for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        res_word(a, r, t);
}

static int cmp_label(const void *x, const void *y)
{
    return strcmp(((const struct kube_label *)x)->key, ((const struct kube_label *)y)->key);
}

static void add_label(struct arena *a, struct kube_labels *l, const char *kv)
{
    const char *eq = strchr(kv, '=');

    if (!eq)
        die("bad label", kv);
    l->v = grow_arr(a, l->v, l->n, sizeof(*l->v));
    l->v[l->n].key = arena_strndup(a, kv, (size_t)(eq - kv));
    l->v[l->n++].value = arena_strdup(a, eq + 1);
    qsort(l->v, l->n, sizeof(*l->v), cmp_label);
}

struct kube_node *tb_node(struct arena *a, const char *name, const char *spec)
{
    struct kube_node *n = arena_alloc(a, sizeof(*n));
    char buf[2048], *save = NULL, *w;

    n->name = arena_strdup(a, name);
    n->uid = "";
    n->resource_version = "";
    n->allocatable.pods = 110;
    n->allocatable.set = KUBE_RES_PODS;
    snprintf(buf, sizeof(buf), "%s", spec);
    for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        if (!strncmp(w, "label:", 6)) {
            add_label(a, &n->labels, w + 6);
        } else if (!strncmp(w, "taint:", 6)) {
            /* K=V:Effect or K:Effect */
            char *k = w + 6, *colon = strrchr(k, ':'), *eq;
            if (!colon)
                die("bad taint", w);
            *colon = 0;
            n->taints = grow_arr(a, n->taints, n->ntaints, sizeof(*n->taints));
            eq = strchr(k, '=');
            n->taints[n->ntaints].key = arena_strndup(a, k, eq ? (size_t)(eq - k) : strlen(k));
            n->taints[n->ntaints].value = arena_strdup(a, eq ? eq + 1 : "");
            n->taints[n->ntaints++].effect = effect_of(colon + 1);
        } else if (!strcmp(w, "unschedulable")) {
            n->unschedulable = true;
        } else {
            res_word(a, &n->allocatable, w);
        }
    }
    n->capacity = n->allocatable;
    return n;
}

static struct kube_container *add_container(struct arena *a, struct kube_container **arr, size_t *n)
{
    *arr = grow_arr(a, *arr, *n, sizeof(**arr));
    memset(&(*arr)[*n], 0, sizeof(**arr));
    (*arr)[*n].name = "c";
    return &(*arr)[(*n)++];
}

static void add_port(struct arena *a, struct kube_container *k, const char *w, bool hostnet)
{
    struct kube_port *p;
    char buf[128], *at, *slash;

    snprintf(buf, sizeof(buf), "%s", w);
    k->ports = grow_arr(a, k->ports, k->nports, sizeof(*k->ports));
    p = &k->ports[k->nports++];
    memset(p, 0, sizeof(*p));
    p->host_ip = "0.0.0.0";
    if ((at = strchr(buf, '@'))) {
        *at = 0;
        p->host_ip = arena_strdup(a, at + 1);
    }
    if ((slash = strchr(buf, '/'))) {
        *slash = 0;
        p->protocol = !strcmp(slash + 1, "UDP")    ? KUBE_PROTO_UDP
                      : !strcmp(slash + 1, "SCTP") ? KUBE_PROTO_SCTP
                                                   : KUBE_PROTO_TCP;
    }
    if (hostnet)
        p->container_port = atoi(buf);
    else
        p->host_port = p->container_port = atoi(buf);
}

/* spread:KEY,SKEW,DoNotSchedule|ScheduleAnyway,SELECTOR[,minD=N][,ignoreaff][,honortaints]
 * [,mlk=KEY]: SELECTOR "app=web" (matchLabels), "{}" (empty) or "nil" */
static void add_spread(struct arena *a, struct kube_pod *p, const char *w)
{
    struct kube_pod_extra *x = kube_pod_extra_own(p, a);
    struct kube_spread_constraint *t;
    char buf[256], *save = NULL, *f;
    int i = 0;

    x->spread = grow_arr(a, x->spread, x->nspread, sizeof(*x->spread));
    t = &x->spread[x->nspread++];
    memset(t, 0, sizeof(*t));
    t->min_domains = 1;
    snprintf(buf, sizeof(buf), "%s", w);
    for (f = strtok_r(buf, ",", &save); f; f = strtok_r(NULL, ",", &save), i++) {
        if (i == 0) {
            t->topology_key = arena_strdup(a, f);
        } else if (i == 1) {
            t->max_skew = atoi(f);
        } else if (i == 2) {
            t->when_unsatisfiable = strcmp(f, "DoNotSchedule") ? KUBE_SPREAD_SCHEDULE_ANYWAY
                                                               : KUBE_SPREAD_DO_NOT_SCHEDULE;
        } else if (i == 3) {
            if (strcmp(f, "nil")) {
                t->selector.present = true;
                if (strcmp(f, "{}")) {
                    char *eq = strchr(f, '=');
                    const char **v = arena_alloc(a, sizeof(*v));
                    if (!eq)
                        die("bad spread selector", w);
                    t->selector.reqs = arena_alloc(a, sizeof(*t->selector.reqs));
                    t->selector.reqs[0].key = arena_strndup(a, f, (size_t)(eq - f));
                    t->selector.reqs[0].op = KUBE_OP_IN;
                    v[0] = arena_strdup(a, eq + 1);
                    t->selector.reqs[0].values = v;
                    t->selector.reqs[0].nvalues = 1;
                    t->selector.nreqs = 1;
                }
            }
        } else if (!strncmp(f, "minD=", 5)) {
            t->min_domains = atoi(f + 5);
        } else if (!strcmp(f, "ignoreaff")) {
            t->affinity_ignore = true;
        } else if (!strcmp(f, "honortaints")) {
            t->taints_honor = true;
        } else if (!strncmp(f, "mlk=", 4)) {
            const char **k = arena_alloc(a, sizeof(*k));
            k[0] = arena_strdup(a, f + 4);
            t->match_label_keys = k;
            t->nmatch_label_keys = 1;
        } else {
            die("bad spread word", w);
        }
    }
}

struct kube_pod *tb_pod(struct arena *a, const char *spec)
{
    struct kube_pod *p = arena_alloc(a, sizeof(*p));
    struct kube_container *main_c;
    char buf[2048], *save = NULL, *w;

    p->namespace_ = "default";
    p->name = "pod";
    p->uid = "";
    p->resource_version = "";
    p->node_name = "";
    p->scheduler_name = "default-scheduler";
    p->nominated_node_name = "";
    p->priority_class_name = "";
    p->phase = "Pending";
    main_c = add_container(a, &p->containers, &p->ncontainers);
    snprintf(buf, sizeof(buf), "%s", spec);
    for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        main_c = &p->containers[0];
        if (!strncmp(w, "name=", 5)) {
            char *slash = strchr(w + 5, '/');
            if (slash) {
                p->namespace_ = arena_strndup(a, w + 5, (size_t)(slash - w - 5));
                p->name = arena_strdup(a, slash + 1);
            } else {
                p->name = arena_strdup(a, w + 5);
            }
        } else if (!strncmp(w, "prio=", 5)) {
            p->priority = atoi(w + 5);
            p->has_priority = true;
        } else if (!strcmp(w, "never")) {
            p->preempt_never = true;
        } else if (!strcmp(w, "terminating")) {
            p->terminating = true;
        } else if (!strcmp(w, "preempted")) {
            /* terminating by preemption: DisruptionTarget=True, PreemptionByScheduler */
            p->terminating = p->disruption_by_preemption = true;
        } else if (!strcmp(w, "gated")) {
            p->nscheduling_gates = 1;
        } else if (!strncmp(w, "node=", 5)) {
            p->node_name = arena_strdup(a, w + 5);
        } else if (!strncmp(w, "nominated=", 10)) {
            p->nominated_node_name = arena_strdup(a, w + 10);
        } else if (!strncmp(w, "phase=", 6)) {
            p->phase = arena_strdup(a, w + 6);
        } else if (!strncmp(w, "sel:", 4)) {
            add_label(a, &p->node_selector, w + 4);
        } else if (!strncmp(w, "label:", 6)) {
            add_label(a, &p->labels, w + 6);
        } else if (!strncmp(w, "tol:", 4)) {
            /* K=V:Effect | K:Exists:Effect */
            struct kube_toleration *t;
            char *k = w + 4, *c1 = strchr(k, ':'), *eq;
            if (!c1)
                die("bad toleration", w);
            *c1 = 0;
            p->tolerations = grow_arr(a, p->tolerations, p->ntolerations, sizeof(*p->tolerations));
            t = &p->tolerations[p->ntolerations++];
            memset(t, 0, sizeof(*t));
            if (!strncmp(c1 + 1, "Exists:", 7)) {
                t->op = KUBE_TOL_EXISTS;
                t->key = arena_strdup(a, k);
                t->value = "";
                t->effect = effect_of(c1 + 8);
            } else {
                eq = strchr(k, '=');
                t->op = KUBE_TOL_EQUAL;
                t->key = arena_strndup(a, k, eq ? (size_t)(eq - k) : strlen(k));
                t->value = arena_strdup(a, eq ? eq + 1 : "");
                t->effect = effect_of(c1 + 1);
            }
        } else if (!strncmp(w, "port:", 5)) {
            add_port(a, main_c, w + 5, false);
        } else if (!strncmp(w, "hostnet:", 8)) {
            p->host_network = true;
            add_port(a, main_c, w + 8, true);
        } else if (!strncmp(w, "c2:", 3)) {
            res_list(a, &add_container(a, &p->containers, &p->ncontainers)->requests, w + 3);
        } else if (!strncmp(w, "init:", 5)) {
            res_list(a, &add_container(a, &p->init_containers, &p->ninit_containers)->requests,
                     w + 5);
        } else if (!strncmp(w, "sidecar:", 8)) {
            struct kube_container *k = add_container(a, &p->init_containers, &p->ninit_containers);
            k->restart_always = true;
            res_list(a, &k->requests, w + 8);
        } else if (!strncmp(w, "sidecarport:", 12)) {
            struct kube_container *k = add_container(a, &p->init_containers, &p->ninit_containers);
            k->restart_always = true;
            add_port(a, k, w + 12, false);
        } else if (!strncmp(w, "initport:", 9)) {
            add_port(a, add_container(a, &p->init_containers, &p->ninit_containers), w + 9, false);
        } else if (!strncmp(w, "ovh:", 4)) {
            res_list(a, &kube_pod_extra_own(p, a)->overhead, w + 4);
        } else if (!strncmp(w, "spread:", 7)) {
            add_spread(a, p, w + 7);
        } else {
            res_word(a, &main_c->requests, w);
        }
    }
    return p;
}

static void parse_expr(struct arena *a, const char *s, struct kube_requirement *r, bool *field)
{
    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    char buf[512], *save = NULL, *t;
    size_t i;

    memset(r, 0, sizeof(*r));
    *field = !strncmp(s, "field:", 6);
    snprintf(buf, sizeof(buf), "%s", *field ? s + 6 : s);
    if (!(t = strtok_r(buf, " ", &save)))
        die("bad expression", s);
    r->key = arena_strdup(a, t);
    if (!(t = strtok_r(NULL, " ", &save)))
        die("bad expression", s);
    for (i = 0; i < 6 && strcmp(ops[i], t); i++)
        ;
    if (i == 6)
        die("bad operator", s);
    r->op = (enum kube_selector_op)i;
    while ((t = strtok_r(NULL, " ", &save))) {
        r->values = grow_arr(a, r->values, r->nvalues, sizeof(*r->values));
        r->values[r->nvalues++] = arena_strdup(a, t);
    }
}

static void build_term(struct arena *a, struct kube_node_selector_term *t, va_list ap)
{
    const char *s;
    bool field;

    memset(t, 0, sizeof(*t));
    while ((s = va_arg(ap, const char *))) {
        struct kube_requirement r;
        parse_expr(a, s, &r, &field);
        if (field) {
            t->fields = grow_arr(a, t->fields, t->nfields, sizeof(*t->fields));
            t->fields[t->nfields++] = r;
        } else {
            t->exprs = grow_arr(a, t->exprs, t->nexprs, sizeof(*t->exprs));
            t->exprs[t->nexprs++] = r;
        }
    }
}

void tb_req_term(struct arena *a, struct kube_pod *p, ...)
{
    va_list ap;

    p->has_required_affinity = true;
    p->required.terms =
        grow_arr(a, p->required.terms, p->required.nterms, sizeof(*p->required.terms));
    va_start(ap, p);
    build_term(a, &p->required.terms[p->required.nterms++], ap);
    va_end(ap);
}

void tb_pref_term(struct arena *a, struct kube_pod *p, int weight, ...)
{
    va_list ap;

    p->preferred = grow_arr(a, p->preferred, p->npreferred, sizeof(*p->preferred));
    p->preferred[p->npreferred].weight = weight;
    va_start(ap, weight);
    build_term(a, &p->preferred[p->npreferred++].term, ap);
    va_end(ap);
}

struct sched_cluster *tb_cluster(struct arena *a, const char *const *nodes,
                                 const char *const *bound)
{
    struct sched_cluster *c = sched_cluster_new();
    struct err err = {0};
    size_t i;

    if (!c)
        die("out of memory", "");
    for (i = 0; nodes && nodes[i]; i++) {
        const char *colon = strchr(nodes[i], ':');
        char name[128];
        if (!colon || (size_t)(colon - nodes[i]) >= sizeof(name))
            die("bad node line", nodes[i]);
        memcpy(name, nodes[i], (size_t)(colon - nodes[i]));
        name[colon - nodes[i]] = 0;
        if (sched_cluster_add_node(c, tb_node(a, name, colon + 1), &err))
            die(err.msg, nodes[i]);
    }
    for (i = 0; bound && bound[i]; i++)
        if (sched_cluster_add_pod(c, tb_pod(a, bound[i]), &err))
            die(err.msg, bound[i]);
    return c;
}

const char *tb_schedule(struct sched_cluster *c, const struct sched_profile *p,
                        const struct kube_pod *pod)
{
    static char buf[8192];
    struct sched_result r;
    struct sched_rng rng;
    struct err err = {0};
    size_t i, n = 0;

    sched_rng_seed(&rng, 0);
    if (sched_schedule_one(c, p, pod, &rng, &r, &err)) {
        snprintf(buf, sizeof(buf), "error: %s", err.msg);
        return buf;
    }
    if (r.outcome == SCHED_SCHEDULED) {
        snprintf(buf, sizeof(buf), "node:%s", r.node);
    } else if (r.outcome == SCHED_GATED) {
        snprintf(buf, sizeof(buf), "gated");
    } else if (r.nominated_node) {
        n = (size_t)snprintf(buf, sizeof(buf), "nominated:%s victims:", r.nominated_node);
        for (i = 0; i < r.nvictims && n < sizeof(buf); i++)
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s/%s", i ? "," : "",
                                  r.victims[i].namespace_, r.victims[i].name);
        if (n < sizeof(buf))
            snprintf(buf + n, sizeof(buf) - n, " | %s", r.message);
    } else {
        snprintf(buf, sizeof(buf), "%s", r.message);
    }
    sched_result_release(&r);
    return buf;
}

struct kube_pod *tb_row_pod(struct arena *a, const struct tb_row *r);

struct kube_pod *tb_row_pod(struct arena *a, const struct tb_row *r)
{
    struct kube_pod *p = tb_pod(a, r->pod);
    size_t t;

    for (t = 0; t < 3 && r->req[t][0]; t++) {
        if (!strcmp(r->req[t][0], "-")) /* "-" gives an empty term */
            tb_req_term(a, p, (const char *)NULL);
        else
            tb_req_term(a, p, r->req[t][0], r->req[t][1], r->req[t][2], r->req[t][3], r->req[t][4],
                        (const char *)NULL);
    }
    for (t = 0; t < 2 && r->pref[t][0]; t++)
        tb_pref_term(a, p, r->pref_weight[t], r->pref[t][0], r->pref[t][1], r->pref[t][2],
                     r->pref[t][3], r->pref[t][4], (const char *)NULL);
    return p;
}

#include "test.h"

void tb_run_rows(const struct tb_row *rows, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        struct arena a = ARENA_INIT;
        struct sched_cluster *c = tb_cluster(&a, rows[i].nodes, rows[i].bound);
        const char *got = tb_schedule(c, rows[i].profile, tb_row_pod(&a, &rows[i]));
        if (strcmp(got, rows[i].want))
            test_fail(__FILE__, __LINE__, "row '%s': got \"%s\", want \"%s\"", rows[i].name, got,
                      rows[i].want);
        sched_cluster_free(c);
        arena_release(&a);
    }
}
