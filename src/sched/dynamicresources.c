/* dynamicresources.c - kube-scheduler v1.37.2's DynamicResources plugin over a world of
 * resource.k8s.io objects (see dynamicresources.h): pkg/scheduler/framework/plugins/
 * dynamicresources (PreEnqueue, PreFilter, Filter, Score, Reserve and PreBind, PostFilter, the
 * extended-resource claim), its DRA manager (claims and the devices they hold, the slices
 * patched by DeviceTaintRules, the extended-resource cache of DeviceClasses) and the parts of
 * the resource-claim controller it depends on. The search for devices is dra_alloc.h's.
 *
 * The world owns copies of what changes while pods are scheduled: each claim's allocation and
 * reservations (an overlay on the borrowed input object), the claims it creates, the devices
 * held. Everything derived lives in w->arena and is rebuilt by sched_dra_commit. */
#include "sched/dynamicresources.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/keymap.h"
#include "base/quote.h"
#include "kube/rules.h"

#define DEVICE_CLASS_PREFIX "deviceclass.resource.kubernetes.io/"
#define SPECIAL_CLAIM_NAME "<extended-resources>"
#define RESERVED_FOR_MAX 256

/* ---- the world ---- */

struct wresult {
    const char *request;
    const char *driver, *pool, *device;
    uint32_t id; /* device id, UINT32_MAX when no slice publishes it */
    bool admin;
    bool shared;
    bool has_consumed; /* ConsumedCapacity set (shares that consume capacity) */
    struct dra_consumed consumed[8];
    size_t nconsumed;
};

struct walloc {
    struct wresult *r;
    size_t n;
    /* where it is available: a node, the AND of node selectors, or everywhere */
    const char *node;                       /* node-local: this node */
    const struct kube_node_selector *input; /* an input claim's allocation.nodeSelector */
    const void *sels[DRA_RESULTS_MAX];      /* our allocations: the slices' selectors */
    size_t nsels;
};

struct consumer {
    const char *name, *uid;
    bool pod; /* apiGroup "" and resource "pods" */
};

struct wclaim {
    const char *ns, *name, *uid;
    const struct kube_resource_claim *in; /* NULL: made here (template or extended claim) */
    const char *owner_name, *owner_uid;   /* the controlling owner when it is a Pod */
    bool owner_is_pod;
    bool extended; /* annotation resource.kubernetes.io/extended-resource-claim: "true" */
    bool terminating;
    bool deleted;
    bool finalizer;
    bool loaded; /* its input status read (the first commit) */
    const struct kube_dra_claim_spec *spec;
    struct dra_claim dc; /* the spec as the allocator reads it */
    bool allocated;
    struct walloc alloc;
    /* the input claim when alloc is its status.allocation (its results' binding conditions,
     * allocationTimestamp, status.devices), NULL when the world allocated it */
    const struct kube_resource_claim *bind_in;
    struct consumer *reserved;
    size_t nreserved, creserved;
    struct arena strings; /* what its allocation names that nothing else keeps */
    /* the extended-resource claim made in Reserve: its requests and the pod's request
     * mappings, as PreBind writes them (in strings) */
    struct sched_dra_ext_request *ereqs;
    size_t nereqs;
    struct sched_dra_ext_mapping *emaps;
    size_t nemaps;
};

struct wpod {
    const struct sched_dra_pod_in *in;
    /* the claims the controller made for its templates, per pod claim (NULL: none) */
    const char **made;
};

/* what a device's CEL view is: the library's view, or why it could not be made */
struct wview {
    void *view;
    const char *error;
    size_t idx; /* the view's index in w->views (its selector answers' too) */
};

struct selent {
    void *program;
    char *error;
    struct dra_selector sel; /* sel.memo is the entry */
    uint8_t *memo;           /* per device view: 0 not known, 1 no match, 2 match (NULL: none) */
    size_t nmemo;
};

/* the bytes of selector results the world keeps per commit (a selector's answer on a device
 * does not change until the next commit; runtime errors are not kept) */
#define SEL_MEMO_BUDGET ((size_t)64 << 20)

struct sched_dra {
    struct sched_dra_cel cel;
    struct dra_features f;
    /* inputs */
    const struct kube_device_class **classes;
    size_t nclasses, cclasses;
    const struct kube_resource_slice **slices;
    size_t nslices, cslices;
    const struct kube_device_taint_rule **rules;
    size_t nrules, crules;
    const struct kube_resource_claim_template **templates;
    size_t ntemplates, ctemplates;
    struct wpod *pods;
    size_t npods, cpods;
    /* claims: the input's, then those made here */
    struct wclaim **claims;
    size_t nclaims, cclaims;
    struct keymap claim_index; /* ns/name -> wclaim (live ones) */
    struct keymap node_index;  /* node name -> struct kube_node * (a copy in node_arena) */
    struct arena node_arena;
    struct keymap pod_index; /* ns/name -> const struct sched_dra_pod_in * (the last added) */
    struct arena pod_keys;   /* its keys */
    /* derived (rebuilt by commit) */
    struct arena arena;
    struct keymap class_index; /* name -> struct dra_class */
    struct keymap ext_index;   /* extended resource name -> struct dra_class */
    struct keymap sel_index;   /* expression -> struct selent */
    struct keymap id_index;    /* driver/pool/device -> id + 1 */
    struct dra_slice *dslices;
    size_t ndslices;
    struct dra_inventory inv;
    void **views;
    size_t nviews, cviews;
    struct keymap pools;  /* node name -> struct dra_pools */
    struct keymap totals; /* "resource/node" -> struct totals_ent (sched_dra_extended_totals) */
    /* allocation state, by device id */
    size_t nids;
    size_t memo_bytes; /* of the selectors' memo rows */
    uint8_t *allocated;
    uint32_t *shares;
    struct dra_consumed **consumed;
    uint32_t *nconsumed;
    /* per cluster slot (sched_dra_node_at): the node and its pools, found once */
    struct slotent {
        const char *name; /* the slot's name as last asked */
        const struct kube_node *node;
        struct dra_pools *pools; /* NULL: not gathered since the last commit */
    } * slots;
    size_t nslots;
    size_t cur_slot; /* the slot of the last sched_dra_node_at, SIZE_MAX: none */
    /* the node the allocator's callbacks look at */
    const struct kube_node *node;
    struct dra_scratch *scratch;
    char text[1024]; /* sched_dra_preenqueue's answer */
    struct sched_dra_device_out *devout;
    size_t cdevout;
    uint64_t share_seq;
    bool why; /* explain: Filter records why the allocator found nothing (nodealloc.why) */
    /* DynamicResourcesArgs.bindingTimeout of the next cycles' profile (ms, 0: the default);
     * Filter reads it against the wall clock, as kube-scheduler's time.Now() */
    int64_t binding_timeout_ms;
};

/* the devices of a node that the class serving an extended resource selects, as
 * sched_dra_extended_totals finds them once per commit: their ids, or error (a selector that
 * cannot be evaluated on one of them) */
struct totals_ent {
    uint32_t *ids;
    size_t n, cap;
    bool error;
};

static void *grow(void *v, size_t *cap, size_t need, size_t size)
{
    size_t nc;
    void *nv;

    if (need <= *cap)
        return v;
    nc = *cap ? *cap * 2 : 16;
    while (nc < need)
        nc *= 2;
    nv = realloc(v, nc * size);
    if (nv)
        *cap = nc;
    return nv;
}

/* push appends the size bytes at val to the array *arr of *n elements */
static int push(void *arr, size_t *n, size_t *cap, size_t size, const void *val)
{
    void **p = arr;
    void *nv = grow(*p, cap, *n + 1, size);

    if (!nv)
        return -ENOMEM;
    *p = nv;
    memcpy((char *)nv + *n * size, val, size);
    (*n)++;
    return 0;
}

#define PUSH(arr, n, cap, val) push(&(arr), &(n), &(cap), sizeof(*(arr)), &(val))

static void textf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void textf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;

    if (!buf || !size)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

struct sched_dra *sched_dra_new(const struct sched_dra_cel *cel, const struct dra_features *f)
{
    struct sched_dra *w = calloc(1, sizeof(*w));

    if (!w)
        return NULL;
    w->cel = *cel;
    w->f = *f;
    w->cur_slot = SIZE_MAX;
    w->scratch = dra_scratch_new();
    if (!w->scratch) {
        free(w);
        return NULL;
    }
    return w;
}

static void derived_free(struct sched_dra *w)
{
    size_t i;

    for (i = 0; i < w->sel_index.cap; i++)
        if (w->sel_index.slots[i].key) {
            struct selent *e = w->sel_index.slots[i].value;

            if (e->program)
                w->cel.program_free(w->cel.ctx, e->program);
            free(e->error);
            free(e->memo);
        }
    for (i = 0; i < w->nviews; i++)
        if (w->views[i])
            w->cel.view_free(w->cel.ctx, w->views[i]);
    w->nviews = 0;
    for (i = 0; i < w->pools.cap; i++)
        if (w->pools.slots[i].key) {
            dra_pools_free(w->pools.slots[i].value);
            free(w->pools.slots[i].value);
        }
    keymap_release(&w->pools);
    for (i = 0; i < w->totals.cap; i++)
        if (w->totals.slots[i].key) {
            struct totals_ent *e = w->totals.slots[i].value;

            free(e->ids);
            free(e);
        }
    keymap_release(&w->totals);
    for (i = 0; i < w->nslots; i++)
        w->slots[i].pools = NULL;
    keymap_release(&w->class_index);
    keymap_release(&w->ext_index);
    keymap_release(&w->sel_index);
    keymap_release(&w->id_index);
    arena_release(&w->arena);
    free(w->allocated);
    free(w->shares);
    free(w->consumed);
    free(w->nconsumed);
    w->allocated = NULL;
    w->shares = NULL;
    w->consumed = NULL;
    w->nconsumed = NULL;
    w->nids = 0;
    w->memo_bytes = 0;
}

static void wclaim_free(struct wclaim *c)
{
    if (!c)
        return;
    free(c->reserved);
    free(c->alloc.r);
    arena_release(&c->strings);
    free(c);
}

void sched_dra_free(struct sched_dra *w)
{
    size_t i;

    if (!w)
        return;
    derived_free(w);
    free(w->views);
    free(w->slots);
    for (i = 0; i < w->nclaims; i++)
        wclaim_free(w->claims[i]);
    free(w->claims);
    keymap_release(&w->claim_index);
    keymap_release(&w->node_index);
    arena_release(&w->node_arena);
    keymap_release(&w->pod_index);
    arena_release(&w->pod_keys);
    for (i = 0; i < w->npods; i++)
        free(w->pods[i].made);
    free(w->pods);
    free(w->classes);
    free(w->slices);
    free(w->rules);
    free(w->templates);
    free(w->devout);
    dra_scratch_free(w->scratch);
    free(w);
}

int sched_dra_add_node(struct sched_dra *w, const struct kube_node *n)
{
    struct arena *a = &w->node_arena;
    struct kube_node *c = arena_alloc(a, sizeof(*c));
    size_t i;

    /* what the plugin reads of a node: its name, labels (node selectors) and allocatable
     * scalars (the extended resources a device plugin serves) */
    if (!c || !(c->name = arena_strdup(a, n->name)))
        return -ENOMEM;
    if (n->labels.n && !(c->labels.v = arena_alloc(a, n->labels.n * sizeof(*c->labels.v))))
        return -ENOMEM;
    for (i = 0; i < n->labels.n; i++) {
        c->labels.v[i].key = arena_strdup(a, n->labels.v[i].key);
        c->labels.v[i].value = arena_strdup(a, n->labels.v[i].value);
        if (!c->labels.v[i].key || !c->labels.v[i].value)
            return -ENOMEM;
    }
    c->labels.n = n->labels.n;
    if (n->allocatable.nscalars &&
        !(c->allocatable.scalars =
              arena_alloc(a, n->allocatable.nscalars * sizeof(*c->allocatable.scalars))))
        return -ENOMEM;
    for (i = 0; i < n->allocatable.nscalars; i++) {
        c->allocatable.scalars[i].value = n->allocatable.scalars[i].value;
        if (!(c->allocatable.scalars[i].name = arena_strdup(a, n->allocatable.scalars[i].name)))
            return -ENOMEM;
    }
    c->allocatable.nscalars = n->allocatable.nscalars;
    for (i = 0; i < w->nslots; i++)
        w->slots[i].name = NULL; /* (a slot's name may now find this node) */
    return keymap_put(&w->node_index, c->name, c, NULL);
}

const struct kube_node *sched_dra_node(const struct sched_dra *w, const char *name)
{
    return keymap_get(&w->node_index, name);
}

const struct kube_node *sched_dra_node_at(struct sched_dra *w, uint32_t slot, const char *name)
{
    struct slotent *e;

    if (slot >= w->nslots) {
        size_t n = slot + 1 > w->nslots * 2 ? (size_t)slot + 1 : w->nslots * 2;
        struct slotent *v = realloc(w->slots, n * sizeof(*v));

        if (!v) {
            w->cur_slot = SIZE_MAX;
            return sched_dra_node(w, name);
        }
        memset(v + w->nslots, 0, (n - w->nslots) * sizeof(*v));
        w->slots = v;
        w->nslots = n;
    }
    e = &w->slots[slot];
    if (!e->name || strcmp(e->name, name)) {
        e->name = name;
        e->node = sched_dra_node(w, name);
        e->pools = NULL;
    }
    w->cur_slot = slot;
    return e->node;
}

int sched_dra_add_class(struct sched_dra *w, const struct kube_device_class *c)
{
    return PUSH(w->classes, w->nclasses, w->cclasses, c);
}

int sched_dra_add_slice(struct sched_dra *w, const struct kube_resource_slice *s)
{
    return PUSH(w->slices, w->nslices, w->cslices, s);
}

int sched_dra_add_taint_rule(struct sched_dra *w, const struct kube_device_taint_rule *r)
{
    if (!w->f.device_taint_rules)
        return 0; /* before 1.37 the API is not served by default: no rule applies */
    return PUSH(w->rules, w->nrules, w->crules, r);
}

int sched_dra_add_template(struct sched_dra *w, const struct kube_resource_claim_template *t)
{
    return PUSH(w->templates, w->ntemplates, w->ctemplates, t);
}

int sched_dra_add_pod(struct sched_dra *w, const struct sched_dra_pod_in *p)
{
    struct wpod wp = {p, NULL};

    if (p->nclaims) {
        wp.made = calloc(p->nclaims, sizeof(*wp.made));
        if (!wp.made)
            return -ENOMEM;
    }
    if (PUSH(w->pods, w->npods, w->cpods, wp)) {
        free(wp.made);
        return -ENOMEM;
    }
    {
        size_t n = strlen(p->namespace_) + strlen(p->name) + 2;
        char *key = arena_alloc(&w->pod_keys, n);

        if (!key)
            return -ENOMEM;
        snprintf(key, n, "%s/%s", p->namespace_, p->name);
        if (keymap_put(&w->pod_index, key, (void *)p, NULL))
            return -ENOMEM;
    }
    return 0;
}

const struct sched_dra_pod_in *sched_dra_pod_lookup(const struct sched_dra *w, const char *ns,
                                                    const char *name)
{
    char key[600];

    snprintf(key, sizeof(key), "%s/%s", ns, name);
    return keymap_get(&w->pod_index, key);
}

static char *keyof(char *buf, size_t size, const char *a, const char *b)
{
    snprintf(buf, size, "%s/%s", a, b);
    return buf;
}

static struct wclaim *claim_get(const struct sched_dra *w, const char *ns, const char *name)
{
    char key[600];

    return keymap_get(&w->claim_index, keyof(key, sizeof(key), ns, name));
}

/* the world keeps the key of the index in the claim's own memory */
static int claim_index_put(struct sched_dra *w, struct wclaim *c)
{
    size_t n = strlen(c->ns) + strlen(c->name) + 2;
    char *key = arena_alloc(&w->arena, n);

    if (!key)
        return -ENOMEM;
    keyof(key, n, c->ns, c->name);
    return keymap_put(&w->claim_index, key, c, NULL);
}

int sched_dra_add_claim(struct sched_dra *w, const struct kube_resource_claim *in)
{
    struct wclaim *c = calloc(1, sizeof(*c));

    if (!c)
        return -ENOMEM;
    c->ns = in->namespace_;
    c->name = in->name;
    c->uid = in->uid ? in->uid : "";
    c->in = in;
    c->owner_is_pod = in->controller.kind && !strcmp(in->controller.kind, "Pod");
    c->owner_name = in->controller.name;
    c->owner_uid = in->owner_uid ? in->owner_uid : "";
    c->extended = in->extended_resource_claim;
    c->terminating = in->terminating;
    c->finalizer = in->delete_protection;
    c->spec = &in->spec;
    if (PUSH(w->claims, w->nclaims, w->cclaims, c)) {
        free(c);
        return -ENOMEM;
    }
    return 0;
}

/* ---- commit: what the plugin reads ---- */

static char *adup(struct sched_dra *w, const char *s)
{
    return s ? arena_strdup(&w->arena, s) : NULL;
}

static uint32_t device_id(struct sched_dra *w, const char *driver, const char *pool,
                          const char *name, bool add)
{
    char buf[800];
    void *v;
    char *key;

    snprintf(buf, sizeof(buf), "%s/%s/%s", driver, pool, name);
    v = keymap_get(&w->id_index, buf);
    if (v)
        return (uint32_t)((uintptr_t)v - 1);
    if (!add)
        return UINT32_MAX;
    key = adup(w, buf);
    if (!key || keymap_put(&w->id_index, key, (void *)(uintptr_t)(w->id_index.len + 1), NULL))
        return UINT32_MAX - 1;
    return (uint32_t)(w->id_index.len - 1);
}

/* the compiled selector of an expression (compiled once per commit) */
static const struct dra_selector *selector_of(struct sched_dra *w, const char *expr)
{
    struct selent *e;
    char *key;

    if (!expr)
        return NULL;
    e = keymap_get(&w->sel_index, expr);
    if (e)
        return &e->sel;
    e = arena_alloc(&w->arena, sizeof(*e));
    key = adup(w, expr);
    if (!e || !key)
        return NULL;
    memset(e, 0, sizeof(*e));
    if (w->cel.compile(w->cel.ctx, expr, &e->program, &e->error) == -ENOMEM)
        return NULL;
    e->sel.expr = key;
    e->sel.program = e->program;
    e->sel.compile_error = e->error;
    e->sel.memo = e;
    if (keymap_put(&w->sel_index, key, e, NULL))
        return NULL;
    return &e->sel;
}

static int selectors(struct sched_dra *w, const struct kube_dra_selector *in, size_t n,
                     const struct dra_selector **out)
{
    struct dra_selector *s = NULL;
    size_t i;

    if (n) {
        s = arena_alloc(&w->arena, n * sizeof(*s));
        if (!s)
            return -ENOMEM;
    }
    for (i = 0; i < n; i++) {
        const struct dra_selector *c = selector_of(w, in[i].expression);

        if (!c && in[i].expression)
            return -ENOMEM;
        if (c)
            s[i] = *c;
    }
    *out = s;
    return 0;
}

static int build_classes(struct sched_dra *w)
{
    const struct kube_device_class **sorted;
    size_t i;

    for (i = 0; i < w->nclasses; i++) {
        const struct kube_device_class *in = w->classes[i];
        struct dra_class *c = arena_alloc(&w->arena, sizeof(*c));

        if (!c)
            return -ENOMEM;
        c->name = in->name;
        c->nsels = in->nselectors;
        if (selectors(w, in->selectors, in->nselectors, &c->sels) ||
            keymap_put(&w->class_index, in->name, c, NULL))
            return -ENOMEM;
    }
    /* the extended-resource cache takes the classes as the API lists them (by name): a class
     * naming a resource another holds wins when newer, or as old and of a lower name; one that
     * loses when it comes loses its implicit deviceclass.resource.kubernetes.io/<name> too */
    sorted = malloc((w->nclasses + 1) * sizeof(*sorted));
    if (!sorted)
        return -ENOMEM;
    if (w->nclasses)
        memcpy(sorted, w->classes, w->nclasses * sizeof(*sorted));
    for (i = 1; i < w->nclasses; i++) {
        size_t j = i;

        while (j > 0 && strcmp(sorted[j - 1]->name, sorted[j]->name) > 0) {
            const struct kube_device_class *t = sorted[j - 1];

            sorted[j - 1] = sorted[j];
            sorted[j] = t;
            j--;
        }
    }
    for (i = 0; i < w->nclasses; i++) {
        const struct kube_device_class *in = sorted[i];
        struct dra_class *c = keymap_get(&w->class_index, in->name);
        char *implicit;

        if (!w->f.extended_resource)
            continue; /* before 1.36 no class stands for an extended resource */
        if (in->extended_resource_name) {
            struct dra_class *held = keymap_get(&w->ext_index, in->extended_resource_name);

            if (held) {
                const struct kube_device_class *hin = NULL;
                size_t k;

                for (k = 0; k < w->nclasses; k++)
                    if (!strcmp(w->classes[k]->name, held->name))
                        hin = w->classes[k];
                if (hin && in->creation_unix_nano < hin->creation_unix_nano)
                    continue;
                if (hin && in->creation_unix_nano == hin->creation_unix_nano &&
                    strcmp(in->name, hin->name) >= 0)
                    continue;
            }
            if (keymap_put(&w->ext_index, in->extended_resource_name, c, NULL))
                goto nomem;
        }
        {
            size_t lp = strlen(DEVICE_CLASS_PREFIX), ln = strlen(in->name);

            implicit = arena_alloc(&w->arena, lp + ln + 1);
            if (!implicit)
                goto nomem;
            memcpy(implicit, DEVICE_CLASS_PREFIX, lp);
            memcpy(implicit + lp, in->name, ln + 1);
        }
        if (keymap_put(&w->ext_index, implicit, c, NULL))
            goto nomem;
    }
    free(sorted);
    return 0;
nomem:
    free(sorted);
    return -ENOMEM;
}

static const char *qty_name(const struct kube_dra_counter *c)
{
    return c->name;
}

static int build_counters(struct sched_dra *w, const struct kube_dra_counter *in, size_t n,
                          const struct dra_counter **out)
{
    struct dra_counter *c = NULL;
    size_t i;

    if (n && !(c = arena_alloc(&w->arena, n * sizeof(*c))))
        return -ENOMEM;
    for (i = 0; i < n; i++) {
        c[i].name = qty_name(&in[i]);
        c[i].value = in[i].value.nano;
    }
    *out = c;
    return 0;
}

/* a device of a slice, with the taints of the DeviceTaintRules that select it */
static int build_device(struct sched_dra *w, const struct kube_resource_slice *s,
                        const struct kube_dra_device *in, struct dra_device *d)
{
    size_t i, nt = in->ntaints;
    struct dra_taint *t;
    char *err = NULL;
    void *view = NULL;

    memset(d, 0, sizeof(*d));
    d->name = in->name;
    d->id = device_id(w, s->driver, s->pool, in->name, true);
    if (d->id >= UINT32_MAX - 1)
        return -ENOMEM;
    if (in->nattributes) {
        struct dra_attr *a = arena_alloc(&w->arena, in->nattributes * sizeof(*a));

        if (!a)
            return -ENOMEM;
        for (i = 0; i < in->nattributes; i++) {
            const struct kube_dra_attribute *x = &in->attributes[i];

            a[i].name = x->name;
            a[i].i = x->i;
            a[i].b = x->b;
            a[i].s = x->s;
            a[i].type = x->type == KUBE_DRA_INT       ? DRA_ATTR_INT
                        : x->type == KUBE_DRA_BOOL    ? DRA_ATTR_BOOL
                        : x->type == KUBE_DRA_STRING  ? DRA_ATTR_STRING
                        : x->type == KUBE_DRA_VERSION ? DRA_ATTR_VERSION
                                                      : DRA_ATTR_OTHER;
        }
        d->attrs = a;
        d->nattrs = in->nattributes;
    }
    if (in->ncapacity) {
        struct dra_capacity *c = arena_alloc(&w->arena, in->ncapacity * sizeof(*c));

        if (!c)
            return -ENOMEM;
        for (i = 0; i < in->ncapacity; i++) {
            const struct kube_dra_capacity_policy *pin = in->capacity[i].policy;

            c[i].name = in->capacity[i].name;
            c[i].value = in->capacity[i].value.nano;
            if (pin) {
                struct dra_cap_policy *p = arena_alloc(&w->arena, sizeof(*p));
                size_t k;

                if (!p)
                    return -ENOMEM;
                p->has_default = pin->has_default;
                p->def = pin->def.nano;
                if (pin->nvalid_values) {
                    kube_nano *v = arena_alloc(&w->arena, pin->nvalid_values * sizeof(*v));

                    if (!v)
                        return -ENOMEM;
                    for (k = 0; k < pin->nvalid_values; k++)
                        v[k] = pin->valid_values[k].nano;
                    p->valid = v;
                    p->nvalid = pin->nvalid_values;
                }
                p->has_range = pin->has_range;
                p->has_min = pin->has_min;
                p->has_max = pin->has_max;
                p->has_step = pin->has_step;
                p->min = pin->min.nano;
                p->max = pin->max.nano;
                p->step = pin->step.nano;
                c[i].policy = p;
            }
        }
        d->caps = c;
        d->ncaps = in->ncapacity;
    }
    if (in->nconsumes_counters) {
        struct dra_consumption *c = arena_alloc(&w->arena, in->nconsumes_counters * sizeof(*c));

        if (!c)
            return -ENOMEM;
        for (i = 0; i < in->nconsumes_counters; i++) {
            c[i].counter_set = in->consumes_counters[i].name;
            c[i].ncounters = in->consumes_counters[i].ncounters;
            if (build_counters(w, in->consumes_counters[i].counters, c[i].ncounters,
                               &c[i].counters))
                return -ENOMEM;
            if (in->consumes_counters[i].ncompatibility_groups)
                d->compat_groups = true;
        }
        d->consumes = c;
        d->nconsumes = in->nconsumes_counters;
    }
    for (i = 0; i < w->nrules; i++) {
        const struct kube_device_taint_rule *r = w->rules[i];

        if (r->has_selector && (!r->driver || !strcmp(r->driver, s->driver)) &&
            (!r->pool || !strcmp(r->pool, s->pool)) && (!r->device || !strcmp(r->device, in->name)))
            nt++;
    }
    if (nt) {
        t = arena_alloc(&w->arena, nt * sizeof(*t));
        if (!t)
            return -ENOMEM;
        for (i = 0; i < in->ntaints; i++)
            t[i] = (struct dra_taint){in->taints[i].key, in->taints[i].value, in->taints[i].effect};
        nt = in->ntaints;
        for (i = 0; i < w->nrules; i++) {
            const struct kube_device_taint_rule *r = w->rules[i];

            if (r->has_selector && (!r->driver || !strcmp(r->driver, s->driver)) &&
                (!r->pool || !strcmp(r->pool, s->pool)) &&
                (!r->device || !strcmp(r->device, in->name)))
                t[nt++] = (struct dra_taint){r->taint.key, r->taint.value, r->taint.effect};
        }
        d->taints = t;
        d->ntaints = nt;
    }
    d->sel.node_name = in->node_name && *in->node_name ? in->node_name : NULL;
    d->sel.all_nodes = in->all_nodes;
    d->sel.selector = in->node_selector;
    d->has_allow_multiple = in->allow_multiple_allocations >= 0;
    d->allow_multiple = in->allow_multiple_allocations > 0;
    d->binds_to_node = in->binds_to_node;
    d->nbinding_conditions = in->nbinding_conditions;
    {
        struct wview *wv = arena_alloc(&w->arena, sizeof(*wv));

        if (!wv || w->cel.prepare(w->cel.ctx, s->driver, in, &view, &err) == -ENOMEM)
            return -ENOMEM;
        if (view && PUSH(w->views, w->nviews, w->cviews, view)) {
            w->cel.view_free(w->cel.ctx, view);
            free(err);
            return -ENOMEM;
        }
        wv->view = view;
        wv->idx = w->nviews - 1;
        if (!view) {
            /* every selector fails on the device at run time with this text */
            wv->error = adup(w, err ? err : "cannot read the device");
            if (!wv->error) {
                free(err);
                return -ENOMEM;
            }
        }
        free(err);
        d->view = wv;
    }
    return 0;
}

static int build_slices(struct sched_dra *w)
{
    size_t i, j;

    if (w->nslices && !(w->dslices = arena_alloc(&w->arena, w->nslices * sizeof(*w->dslices))))
        return -ENOMEM;
    for (i = 0; i < w->nslices; i++) {
        const struct kube_resource_slice *in = w->slices[i];
        struct dra_slice *s = &w->dslices[i];
        struct dra_device *d = NULL;
        struct dra_counter_set *cs = NULL;

        memset(s, 0, sizeof(*s));
        s->name = in->name;
        s->driver = in->driver;
        s->pool = in->pool;
        s->generation = in->generation;
        s->count = in->resource_slice_count;
        s->sel.node_name = in->node_name && *in->node_name ? in->node_name : NULL;
        s->sel.all_nodes = in->all_nodes;
        s->sel.selector = in->node_selector;
        s->per_device = in->per_device_node_selection;
        if (in->ndevices && !(d = arena_alloc(&w->arena, in->ndevices * sizeof(*d))))
            return -ENOMEM;
        for (j = 0; j < in->ndevices; j++)
            if (build_device(w, in, &in->devices[j], &d[j]))
                return -ENOMEM;
        s->devices = d;
        s->ndevices = in->ndevices;
        if (in->nshared_counters &&
            !(cs = arena_alloc(&w->arena, in->nshared_counters * sizeof(*cs))))
            return -ENOMEM;
        for (j = 0; j < in->nshared_counters; j++) {
            cs[j].name = in->shared_counters[j].name;
            cs[j].ncounters = in->shared_counters[j].ncounters;
            if (build_counters(w, in->shared_counters[j].counters, cs[j].ncounters,
                               &cs[j].counters))
                return -ENOMEM;
        }
        s->counter_sets = cs;
        s->ncounter_sets = in->nshared_counters;
    }
    w->ndslices = w->nslices;
    w->inv.slices = w->dslices;
    w->inv.nslices = w->ndslices;
    w->inv.ndevice_ids = w->id_index.len;
    w->nids = w->id_index.len;
    return 0;
}

static int build_request(struct sched_dra *w, const struct kube_dra_request *in,
                         struct dra_request *r)
{
    size_t i;

    memset(r, 0, sizeof(*r));
    r->name = in->name;
    r->class_name = in->device_class_name ? in->device_class_name : "";
    r->class = *r->class_name ? keymap_get(&w->class_index, r->class_name) : NULL;
    if (selectors(w, in->selectors, in->nselectors, &r->sels))
        return -ENOMEM;
    r->nsels = in->nselectors;
    r->mode_str = in->allocation_mode;
    if (!in->allocation_mode || !*in->allocation_mode || !strcmp(in->allocation_mode, "ExactCount"))
        r->mode = DRA_MODE_EXACT;
    else if (!strcmp(in->allocation_mode, "All"))
        r->mode = DRA_MODE_ALL;
    else
        r->mode = DRA_MODE_OTHER;
    r->count = in->count;
    r->has_admin_access = in->admin_access >= 0;
    r->admin_access = in->admin_access > 0;
    if (in->ntolerations) {
        struct dra_toleration *t = arena_alloc(&w->arena, in->ntolerations * sizeof(*t));

        if (!t)
            return -ENOMEM;
        for (i = 0; i < in->ntolerations; i++)
            t[i] = (struct dra_toleration){in->tolerations[i].key, in->tolerations[i].op,
                                           in->tolerations[i].value, in->tolerations[i].effect};
        r->tols = t;
        r->ntols = in->ntolerations;
    }
    r->has_capacity = in->has_capacity;
    if (in->ncapacity_requests) {
        struct dra_capreq *c = arena_alloc(&w->arena, in->ncapacity_requests * sizeof(*c));

        if (!c)
            return -ENOMEM;
        for (i = 0; i < in->ncapacity_requests; i++)
            c[i] = (struct dra_capreq){in->capacity_requests[i].name,
                                       in->capacity_requests[i].value.nano};
        r->caps = c;
        r->ncaps = in->ncapacity_requests;
    }
    r->has_derived = in->nderived_attributes > 0;
    return 0;
}

/* the claim's spec as the allocator reads it */
static int build_claim(struct sched_dra *w, struct wclaim *c)
{
    const struct kube_dra_claim_spec *spec = c->spec;
    struct dra_claim_request *crs = NULL;
    struct dra_constraint *cons = NULL;
    size_t i, k;

    memset(&c->dc, 0, sizeof(c->dc));
    c->dc.ns = c->ns;
    c->dc.name = c->name;
    if (!spec)
        return 0;
    if (spec->nrequests && !(crs = arena_alloc(&w->arena, spec->nrequests * sizeof(*crs))))
        return -ENOMEM;
    for (i = 0; i < spec->nrequests; i++) {
        const struct kube_dra_device_request *in = &spec->requests[i];
        struct dra_request *subs;
        size_t n = in->exactly ? 1 : in->nfirst_available;

        crs[i].name = in->name;
        crs[i].first_available = !in->exactly && in->nfirst_available;
        if (!(subs = arena_alloc(&w->arena, (n ? n : 1) * sizeof(*subs))))
            return -ENOMEM;
        if (in->exactly) {
            if (build_request(w, in->exactly, &subs[0]))
                return -ENOMEM;
            subs[0].name = in->name;
        }
        for (k = 0; !in->exactly && k < n; k++)
            if (build_request(w, &in->first_available[k], &subs[k]))
                return -ENOMEM;
        crs[i].subs = subs;
        crs[i].nsubs = n;
    }
    if (spec->nconstraints && !(cons = arena_alloc(&w->arena, spec->nconstraints * sizeof(*cons))))
        return -ENOMEM;
    for (i = 0; i < spec->nconstraints; i++) {
        const struct kube_dra_constraint *in = &spec->constraints[i];

        cons[i].kind = in->match_attribute      ? DRA_MATCH
                       : in->distinct_attribute ? DRA_DISTINCT
                                                : DRA_CONSTRAINT_OTHER;
        cons[i].attr = in->match_attribute ? in->match_attribute : in->distinct_attribute;
        cons[i].requests = in->requests;
        cons[i].nrequests = in->nrequests;
    }
    c->dc.requests = crs;
    c->dc.nrequests = spec->nrequests;
    c->dc.constraints = cons;
    c->dc.nconstraints = spec->nconstraints;
    return 0;
}

/* ---- the devices claims hold (the DRA manager's allocatedDevices) ---- */

static struct dra_consumed *consumed_find(struct sched_dra *w, uint32_t id, const char *name)
{
    uint32_t i;

    for (i = 0; w->consumed[id] && i < w->nconsumed[id]; i++)
        if (!strcmp(w->consumed[id][i].name, name))
            return &w->consumed[id][i];
    return NULL;
}

/* add (sign 1) or remove (-1) what a claim's allocation holds: devices for the claim alone,
 * shares, consumed capacity; admin access holds nothing */
static int account(struct sched_dra *w, const struct walloc *a, int sign)
{
    size_t i, k;

    for (i = 0; i < a->n; i++) {
        const struct wresult *r = &a->r[i];

        if (r->admin || r->id >= w->nids)
            continue;
        if (!r->shared) {
            w->allocated[r->id] = sign > 0;
            continue;
        }
        if (sign > 0)
            w->shares[r->id]++;
        else if (w->shares[r->id])
            w->shares[r->id]--;
        if (!r->has_consumed)
            continue;
        if (sign > 0) {
            bool fresh = !w->consumed[r->id];

            if (fresh) {
                w->consumed[r->id] = arena_alloc(&w->arena, 8 * sizeof(struct dra_consumed));
                if (!w->consumed[r->id])
                    return -ENOMEM;
                w->nconsumed[r->id] = 0;
            }
            for (k = 0; k < r->nconsumed; k++) {
                struct dra_consumed *c = consumed_find(w, r->id, r->consumed[k].name);

                if (c)
                    c->q += r->consumed[k].q;
                else if (w->nconsumed[r->id] < 8)
                    w->consumed[r->id][w->nconsumed[r->id]++] = r->consumed[k];
            }
        } else if (w->consumed[r->id]) {
            bool empty = true;

            for (k = 0; k < r->nconsumed; k++) {
                struct dra_consumed *c = consumed_find(w, r->id, r->consumed[k].name);

                if (c)
                    c->q -= r->consumed[k].q;
            }
            for (k = 0; k < w->nconsumed[r->id]; k++)
                empty &= w->consumed[r->id][k].q == 0;
            if (empty)
                w->consumed[r->id] = NULL;
        }
    }
    return 0;
}

/* an input claim's status.allocation as the world keeps it */
static int input_allocation(struct sched_dra *w, struct wclaim *c)
{
    const struct kube_dra_allocation *in = c->in ? c->in->allocation : NULL;
    size_t i, k;

    /* the devices of an allocation held before are released */
    if (c->allocated)
        account(w, &c->alloc, -1);
    free(c->alloc.r);
    memset(&c->alloc, 0, sizeof(c->alloc));
    c->allocated = in != NULL;
    c->bind_in = in ? c->in : NULL;
    if (!in)
        return 0;
    if (in->nresults && !(c->alloc.r = calloc(in->nresults, sizeof(*c->alloc.r))))
        return -ENOMEM;
    for (i = 0; i < in->nresults; i++) {
        const struct kube_dra_result *x = &in->results[i];
        struct wresult *r = &c->alloc.r[i];

        r->request = x->request;
        r->driver = x->driver;
        r->pool = x->pool;
        r->device = x->device;
        r->id = device_id(w, x->driver, x->pool, x->device, false);
        r->admin = x->admin_access;
        r->shared = x->share_id != NULL;
        r->has_consumed = x->consumed_capacity != NULL;
        for (k = 0; k < x->nconsumed_capacity && k < 8; k++)
            r->consumed[k] = (struct dra_consumed){x->consumed_capacity[k].name,
                                                   x->consumed_capacity[k].value.nano};
        r->nconsumed = k;
    }
    c->alloc.n = in->nresults;
    c->alloc.input = in->node_selector;
    return 0;
}

static int input_reservations(struct wclaim *c)
{
    size_t i;

    c->nreserved = 0;
    if (!c->in)
        return 0;
    for (i = 0; i < c->in->nreserved_for; i++) {
        const struct kube_dra_consumer *x = &c->in->reserved_for[i];
        struct consumer v = {x->name, x->uid ? x->uid : "",
                             (!x->api_group || !*x->api_group) && x->resource &&
                                 !strcmp(x->resource, "pods")};

        if (PUSH(c->reserved, c->nreserved, c->creserved, v))
            return -ENOMEM;
    }
    return 0;
}

static bool name_taken(void *ctx, const char *name)
{
    void **args = ctx;

    return claim_get(args[0], args[1], name) != NULL;
}

static const struct kube_resource_claim_template *template_get(const struct sched_dra *w,
                                                               const char *ns, const char *name)
{
    size_t i;

    for (i = 0; i < w->ntemplates; i++)
        if (!strcmp(w->templates[i]->namespace_, ns) && !strcmp(w->templates[i]->name, name))
            return w->templates[i];
    return NULL;
}

/* the resource-claim controller: a claim per pod claim naming a template, for the pods whose
 * status has none, in the order of the pods */
static int template_claims(struct sched_dra *w)
{
    size_t i, j;

    for (i = 0; i < w->npods; i++) {
        const struct sched_dra_pod_in *p = w->pods[i].in;

        for (j = 0; j < p->nclaims; j++) {
            const struct kube_pod_resource_claim *pc = &p->claims[j];
            const struct kube_resource_claim_template *t;
            struct wclaim *c;
            char base[64], name[64];
            void *args[2] = {w, (void *)p->namespace_};

            if (!pc->resource_claim_template_name || pc->status_claim_name || w->pods[i].made[j])
                continue;
            t = template_get(w, p->namespace_, pc->resource_claim_template_name);
            if (!t)
                continue;
            sched_dra_template_claim_base(p->name, pc->name, base);
            sched_dra_generated_name(p->namespace_, base, name_taken, args, name);
            c = calloc(1, sizeof(*c));
            if (!c)
                return -ENOMEM;
            /* the names live as long as the world: in the claim list's own allocation */
            c->ns = p->namespace_;
            c->name = NULL;
            c->spec = &t->spec;
            c->owner_is_pod = true;
            c->owner_name = p->name;
            c->owner_uid = p->uid ? p->uid : "";
            if (PUSH(w->claims, w->nclaims, w->cclaims, c)) {
                free(c);
                return -ENOMEM;
            }
            {
                char *n = arena_strdup(&c->strings, name);

                if (!n)
                    return -ENOMEM;
                c->name = n;
                c->uid = "";
                w->pods[i].made[j] = n;
            }
            if (claim_index_put(w, c))
                return -ENOMEM;
        }
    }
    return 0;
}

int sched_dra_commit(struct sched_dra *w, struct err *err)
{
    size_t i;
    int rc;

    derived_free(w);
    keymap_release(&w->claim_index);
    for (i = 0; i < w->nclaims; i++)
        if (!w->claims[i]->deleted && (rc = claim_index_put(w, w->claims[i])))
            goto nomem;
    if ((rc = build_classes(w)) || (rc = build_slices(w)) || (rc = template_claims(w)))
        goto nomem;
    if (w->nids) {
        w->allocated = calloc(w->nids, 1);
        w->shares = calloc(w->nids, sizeof(*w->shares));
        w->consumed = calloc(w->nids, sizeof(*w->consumed));
        w->nconsumed = calloc(w->nids, sizeof(*w->nconsumed));
        if (!w->allocated || !w->shares || !w->consumed || !w->nconsumed)
            goto nomem;
    }
    for (i = 0; i < w->nclaims; i++) {
        struct wclaim *c = w->claims[i];

        if (c->deleted)
            continue;
        if ((rc = build_claim(w, c)))
            goto nomem;
        if (c->in && !c->loaded) {
            if ((rc = input_allocation(w, c)) || (rc = input_reservations(c)))
                goto nomem;
            c->loaded = true;
        } else {
            size_t k;

            for (k = 0; k < c->alloc.n; k++)
                c->alloc.r[k].id = device_id(w, c->alloc.r[k].driver, c->alloc.r[k].pool,
                                             c->alloc.r[k].device, false);
        }
        if (c->allocated && (rc = account(w, &c->alloc, 1)))
            goto nomem;
    }
    return 0;
nomem:
    return err_set(err, -ENOMEM, "out of memory");
}

/* ---- names ---- */

void sched_dra_generated_name(const char *ns, const char *generate_name,
                              bool (*taken)(void *ctx, const char *name), void *ctx, char *out)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    size_t blen = strlen(generate_name);
    uint32_t attempt;

    if (blen > 58)
        blen = 58;
    for (attempt = 0; attempt < 1000; attempt++) {
        uint64_t h = 0xcbf29ce484222325ULL;
        const unsigned char *p;
        unsigned char a[4] = {(unsigned char)attempt, (unsigned char)(attempt >> 8),
                              (unsigned char)(attempt >> 16), (unsigned char)(attempt >> 24)};
        size_t i;

        for (p = (const unsigned char *)ns; *p; p++)
            h = (h ^ *p) * 0x100000001b3ULL;
        h = (h ^ 0) * 0x100000001b3ULL;
        for (i = 0; i < blen; i++)
            h = (h ^ (unsigned char)generate_name[i]) * 0x100000001b3ULL;
        for (i = 0; i < 4; i++)
            h = (h ^ a[i]) * 0x100000001b3ULL;
        memcpy(out, generate_name, blen);
        for (i = 0; i < 5; i++) {
            out[blen + i] = alphabet[h % 27];
            h /= 27;
        }
        out[blen + 5] = '\0';
        if (!taken || !taken(ctx, out))
            return;
    }
}

void sched_dra_template_claim_base(const char *pod, const char *claim, char *out)
{
    size_t lp = strlen(pod), lc = strlen(claim), len = lp + lc + 2;

    if (len <= 57) {
        memcpy(out, pod, lp);
        out[lp] = '-';
        memcpy(out + lp + 1, claim, lc);
        out[lp + 1 + lc] = '-';
        out[len] = '\0';
        return;
    }
    /* both cut in proportion, and no dash at the end (as the controller writes it) */
    snprintf(out, 64, "%.*s-%.*s", (int)(lp * 57 / len), pod, (int)(lc * 57 / len), claim);
}

/* ---- the allocator's callbacks ---- */

static int cb_eval(void *ctx, const struct dra_selector *sel, const struct dra_device *d,
                   const char *driver, char *msg, size_t msgsize)
{
    struct sched_dra *w = ctx;
    const struct wview *v = d->view;
    struct selent *e = sel->memo;
    int rc;

    (void)driver;
    if (!v || !v->view) {
        textf(msg, msgsize, "%s", v && v->error ? v->error : "no view of the device");
        return -1;
    }
    /* by view, not device id: two slices may publish one ID with other attributes */
    if (e) {
        if (v->idx < e->nmemo && e->memo[v->idx])
            return e->memo[v->idx] - 1;
        if (!e->memo && w->nviews && w->memo_bytes + w->nviews <= SEL_MEMO_BUDGET &&
            (e->memo = calloc(w->nviews, 1))) {
            e->nmemo = w->nviews;
            w->memo_bytes += w->nviews;
        }
    }
    rc = w->cel.eval(w->cel.ctx, sel->program, v->view, msg, msgsize);
    if (e && v->idx < e->nmemo && (rc == 0 || rc == 1))
        e->memo[v->idx] = (uint8_t)(rc + 1);
    return rc;
}

static int cb_nodesel(void *ctx, const void *selector, char *msg, size_t msgsize)
{
    struct sched_dra *w = ctx;

    (void)msg;
    (void)msgsize;
    return kube_node_selector_matches(selector, w->node) ? 1 : 0;
}

/* ---- the devices (gpusched devices) ---- */

const struct dra_inventory *sched_dra_inventory(const struct sched_dra *w)
{
    return &w->inv;
}

const struct dra_class *sched_dra_class(const struct sched_dra *w, const char *name)
{
    return keymap_get(&w->class_index, name);
}

const struct dra_selector *sched_dra_selector(struct sched_dra *w, const char *expr)
{
    return selector_of(w, expr);
}

int sched_dra_device_matches(struct sched_dra *w, const struct dra_class *class,
                             const struct dra_selector *sels, size_t nsels,
                             const struct dra_slice *s, const struct dra_device *d, char *msg,
                             size_t msgsize)
{
    struct dra_ops ops = {cb_eval, cb_nodesel, w};
    int m = 1;

    if (class)
        m = dra_selectors_match(&w->f, &ops, class->name, NULL, NULL, class->sels, class->nsels, d,
                                s->driver, s->pool, msg, msgsize);
    if (m == 1)
        m = dra_selectors_match(&w->f, &ops, NULL, NULL, NULL, sels, nsels, d, s->driver, s->pool,
                                msg, msgsize);
    return m;
}

/* the pools the node reaches, gathered once per node and commit */
static int node_pools(struct sched_dra *w, const struct kube_node *node, struct dra_pools **out,
                      char *msg, size_t msgsize)
{
    struct slotent *e = w->cur_slot < w->nslots ? &w->slots[w->cur_slot] : NULL;
    struct dra_pools *p;
    struct dra_ops ops = {cb_eval, cb_nodesel, w};
    char *key;
    int rc;

    if (e && e->node != node)
        e = NULL;
    if (e && e->pools) {
        *out = e->pools;
        return 0;
    }
    p = keymap_get(&w->pools, node->name);
    if (p) {
        if (e)
            e->pools = p;
        *out = p;
        return 0;
    }
    p = calloc(1, sizeof(*p));
    key = adup(w, node->name);
    if (!p || !key) {
        free(p);
        return -ENOMEM;
    }
    w->node = node;
    rc = dra_pools_gather(&w->inv, NULL, 0, node->name, &w->f, &ops, p, msg, msgsize);
    if (rc) {
        free(p);
        return rc;
    }
    if (keymap_put(&w->pools, key, p, NULL)) {
        dra_pools_free(p);
        free(p);
        return -ENOMEM;
    }
    if (e)
        e->pools = p;
    *out = p;
    return 0;
}

/* ---- one pod's cycle ---- */

struct pclaim {
    struct wclaim *wc; /* NULL: the in-memory claim for the pod's extended resources */
    bool special;
};

/* what Filter found on one node, for Score and Reserve */
struct nodealloc {
    struct dra_claim_result *res; /* per claim allocated here, in the order of toAllocate */
    size_t nres;
    const struct kube_node *node;   /* the node it was found for, NULL: none yet */
    bool ext;                       /* the node has its own extended-resource claim */
    struct dra_claim_request *ereq; /* its requests */
    size_t nereq;
    size_t nmaps;                       /* its request mappings */
    struct sched_dra_ext_mapping *maps; /* (in the pod's arena) */
};

struct podscalar {
    const char *name;
    int64_t value;
};

struct sched_dra_pod {
    struct sched_dra *w;
    const struct sched_dra_pod_in *in;
    struct pclaim claims[DRA_CLAIMS_MAX];
    size_t nclaims, nuser;
    bool has_special;
    bool allocator;       /* some claim is not allocated: the allocator runs in Filter */
    uint64_t unavailable; /* claims allocated where the node selector did not match, or
                                  whose devices' binding failed or timed out */
    int64_t timeout_ms;   /* the binding timeout of the cycle's profile */
    /* PostFilter's deallocation or deletion, done when the cycle ends: kube-scheduler writes
     * it to the API, and the Filter of preemption's dry run, which follows in the same cycle,
     * still reads the claims (and the devices in use) as PreFilter found them */
    struct wclaim *post_dealloc, *post_delete;
    struct podscalar *scalars; /* the pod's requests of extended resources */
    size_t nscalars;
    /* what Filter found on the last node it passed: Score reads it right after, Reserve
     * finds it again on its node (the allocator is deterministic and nothing it reads
     * changes within one pod's cycle) */
    struct nodealloc cur;
    struct keymap whys; /* explain only: node name -> why no allocation was found there */
    struct dra_claim_result *resbuf; /* the allocator's output, ncres claims */
    size_t ncres;
    /* the extended-resource claim's requests for the last set of resources the node's
     * kubelet does not offer (they depend on nothing else of the node) */
    bool ecached;
    const char *enames[64];
    size_t nenames;
    struct dra_claim_request *ereq;
    size_t nereq, nmaps;
    struct sched_dra_ext_mapping *maps;
    struct arena arena;
    struct dra_claim special; /* the node's version of the extended-resource claim */
};

static const char *claim_name_of(struct sched_dra *w, const struct sched_dra_pod_in *p, size_t i,
                                 bool *template_claim)
{
    const struct kube_pod_resource_claim *pc = &p->claims[i];
    size_t k;

    *template_claim = false;
    if (pc->resource_claim_name)
        return pc->resource_claim_name;
    if (!pc->resource_claim_template_name)
        return NULL;
    *template_claim = true;
    if (pc->status_claim_name)
        return pc->status_claim_name; /* "" : the entry names no claim */
    for (k = 0; k < w->npods; k++)
        if (w->pods[k].in == p || (!strcmp(w->pods[k].in->namespace_, p->namespace_) &&
                                   !strcmp(w->pods[k].in->name, p->name)))
            return w->pods[k].made[i];
    return NULL;
}

/* foreachPodResourceClaim: each claim the pod names exists, is not being deleted and, when
 * made from a template, belongs to the pod; NULL or why not (in buf) */
static const char *pod_claims(struct sched_dra *w, const struct sched_dra_pod_in *p,
                              struct pclaim *out, size_t *n, char *buf, size_t size)
{
    size_t i;

    *n = 0;
    for (i = 0; i < p->nclaims; i++) {
        const struct kube_pod_resource_claim *pc = &p->claims[i];
        bool check_owner;
        const char *name = claim_name_of(w, p, i, &check_owner);
        struct wclaim *c;

        if (!pc->resource_claim_name && !pc->resource_claim_template_name) {
            textf(buf, size,
                  "pod \"%s/%s\", spec.resourceClaim \"%s\": none of the supported fields are set",
                  p->namespace_, p->name, pc->name);
            return buf;
        }
        if (!name) {
            textf(buf, size, "pod \"%s/%s\": ResourceClaim not created yet", p->namespace_,
                  p->name);
            return buf;
        }
        if (!*name)
            continue; /* intentionally no claim */
        c = claim_get(w, p->namespace_, name);
        if (!c) {
            textf(buf, size, "resourceclaim.resource.k8s.io \"%s\" not found", name);
            return buf;
        }
        if (c->terminating) {
            textf(buf, size, "resourceclaim \"%s\" is being deleted", name);
            return buf;
        }
        if (check_owner && (!c->owner_is_pod || strcmp(c->owner_name, p->name) ||
                            strcmp(c->owner_uid, p->uid ? p->uid : ""))) {
            textf(buf, size, "ResourceClaim %s/%s was not created for Pod %s/%s (Pod is not owner)",
                  c->ns, c->name, p->namespace_, p->name);
            return buf;
        }
        if (*n >= DRA_CLAIMS_MAX - 1) {
            textf(buf, size, "pod %s/%s: too many resource claims", p->namespace_, p->name);
            return buf;
        }
        out[*n].wc = c;
        out[*n].special = false;
        (*n)++;
    }
    return NULL;
}

const char *sched_dra_preenqueue(struct sched_dra *w, const struct sched_dra_pod_in *p)
{
    struct pclaim tmp[DRA_CLAIMS_MAX];
    size_t n;

    return pod_claims(w, p, tmp, &n, w->text, sizeof(w->text));
}

static bool is_dra_extended_name(const char *name)
{
    const char *slash = strchr(name, '/');

    if (!strncmp(name, DEVICE_CLASS_PREFIX, strlen(DEVICE_CLASS_PREFIX)))
        return true;
    /* v1helper.IsExtendedResourceName: not a native name (no kubernetes.io/ prefix, a
     * domain), and not requests.* */
    if (!slash || strstr(name, "kubernetes.io/") || !strncmp(name, "requests.", 9))
        return false;
    return true;
}

static struct dra_class *ext_class(const struct sched_dra *w, const char *resource)
{
    return keymap_get(&w->ext_index, resource);
}

bool sched_dra_delegates(const struct sched_dra *w, const char *resource)
{
    return is_dra_extended_name(resource) && ext_class(w, resource) != NULL;
}

/* NodeMatches on the node cb_nodesel reads: its name, all nodes, or a node selector */
static bool totals_node_matches(const struct sched_dra *w, const struct dra_node_sel *sel)
{
    if (sel->node_name && *sel->node_name)
        return !strcmp(sel->node_name, w->node->name);
    if (sel->all_nodes)
        return true;
    return sel->selector && kube_node_selector_matches(sel->selector, w->node);
}

/* calculateDRAResourceTotals: every slice counts (whatever its pool's generation or
 * completeness), its devices selected for the node as NodeMatches selects them, those its
 * class's selectors accept counted, and among them those any claim holds (IsDeviceAllocated:
 * exclusively, as shares, or with consumed capacity). A selector that cannot be evaluated
 * makes both 0, as kube-scheduler's error does. */
/* "resource/node" into out, which has room for it */
static char *totals_key(char *out, const char *resource, const char *node)
{
    size_t a = strlen(resource), b = strlen(node);

    memcpy(out, resource, a);
    out[a] = '/';
    memcpy(out + a + 1, node, b + 1);
    return out;
}

/* (the devices one node's slices offer the class do not change until the next commit: they
 * are selected once; which of them are held is counted each time) */
static const struct totals_ent *totals_devices(struct sched_dra *w, const char *resource,
                                               const struct dra_class *class,
                                               const struct kube_node *node)
{
    struct dra_ops ops = {cb_eval, cb_nodesel, w};
    size_t n = strlen(resource) + strlen(node->name) + 2, i, j;
    struct totals_ent *e;
    char key[600], *k = n <= sizeof(key) ? key : malloc(n);
    char msg[1536];

    if (!k)
        return NULL;
    e = keymap_get(&w->totals, totals_key(k, resource, node->name));
    if (k != key)
        free(k);
    if (e)
        return e;
    if (!(e = calloc(1, sizeof(*e))) || !(k = arena_alloc(&w->arena, n)) ||
        keymap_put(&w->totals, totals_key(k, resource, node->name), e, NULL)) {
        free(e);
        return NULL;
    }
    w->node = node;
    for (i = 0; i < w->inv.nslices && !e->error; i++) {
        const struct dra_slice *s = &w->inv.slices[i];
        if (!s->per_device && !totals_node_matches(w, &s->sel))
            continue;
        for (j = 0; j < s->ndevices; j++) {
            const struct dra_device *d = &s->devices[j];
            int m;

            if (s->per_device && !totals_node_matches(w, &d->sel))
                continue;
            m = dra_selectors_match(&w->f, &ops, class->name, NULL, NULL, class->sels, class->nsels,
                                    d, s->driver, s->pool, msg, sizeof(msg));
            if (m < 0) {
                e->error = true;
                break;
            }
            if (m && PUSH(e->ids, e->n, e->cap, d->id)) {
                keymap_del(&w->totals, k);
                free(e->ids);
                free(e);
                return NULL;
            }
        }
    }
    return e;
}

/* calculateDRAResourceTotals: every slice counts (whatever its pool's generation or
 * completeness), its devices selected for the node as NodeMatches selects them, those its
 * class's selectors accept counted, and among them those any claim holds (IsDeviceAllocated:
 * exclusively, as shares, or with consumed capacity). A selector that cannot be evaluated
 * makes both 0, as kube-scheduler's error does. */
int sched_dra_extended_totals(struct sched_dra *w, const char *resource,
                              const struct kube_node *node, int64_t *total, int64_t *allocated)
{
    const struct dra_class *class;
    const struct totals_ent *e;
    int64_t used = 0;
    size_t i;

    *total = *allocated = 0;
    if (!w || !node || !is_dra_extended_name(resource) || !(class = ext_class(w, resource)))
        return 0;
    if (!(e = totals_devices(w, resource, class, node)))
        return -ENOMEM;
    if (e->error)
        return 0;
    for (i = 0; i < e->n; i++) {
        uint32_t id = e->ids[i];

        if (id < w->nids && ((w->allocated && w->allocated[id]) || (w->shares && w->shares[id]) ||
                             (w->consumed && w->consumed[id])))
            used++;
    }
    *total = (int64_t)e->n;
    *allocated = used;
    return 0;
}

/* The devices a pod's claims ask of the class serving an extended resource (our GPUPlacement
 * score's demand, not kube-scheduler's): per request on that class, ExactCount its count, All
 * every device (INT64_MAX), firstAvailable its first subrequest; admin access takes nothing
 * (such devices stay free), nor does a claim already allocated (its devices count as held). */
int64_t sched_dra_pod_class_demand(struct sched_dra *w, const struct sched_dra_pod_in *p,
                                   const char *resource)
{
    const struct dra_class *class;
    int64_t sum = 0;
    size_t i, k;

    if (!w || !p || !is_dra_extended_name(resource) || !(class = ext_class(w, resource)))
        return 0;
    for (i = 0; i < p->nclaims; i++) {
        bool templ;
        const char *name = claim_name_of(w, p, i, &templ);
        const struct wclaim *c = name && *name ? claim_get(w, p->namespace_, name) : NULL;

        if (!c || c->allocated)
            continue;
        for (k = 0; k < c->dc.nrequests; k++) {
            const struct dra_request *r = &c->dc.requests[k].subs[0];
            int64_t n = r->mode == DRA_MODE_ALL     ? INT64_MAX
                        : r->mode == DRA_MODE_EXACT ? r->count
                                                    : 0;

            if (!c->dc.requests[k].nsubs || r->class != class || r->admin_access || n <= 0)
                continue;
            if (__builtin_add_overflow(sum, n, &sum))
                return INT64_MAX;
        }
    }
    return sum;
}

static void claim_delete(struct sched_dra *w, struct wclaim *c);

void sched_dra_pod_free(struct sched_dra_pod *ps)
{
    size_t i;

    if (!ps)
        return;
    if (ps->post_dealloc) {
        struct wclaim *c = ps->post_dealloc;

        if (c->allocated)
            account(ps->w, &c->alloc, -1);
        c->allocated = false;
        c->bind_in = NULL;
        c->nreserved = 0;
    }
    if (ps->post_delete)
        claim_delete(ps->w, ps->post_delete);
    for (i = 0; i < ps->whys.cap; i++)
        if (ps->whys.slots[i].key)
            free(ps->whys.slots[i].value);
    keymap_release(&ps->whys);
    free(ps->resbuf);
    arena_release(&ps->arena);
    free(ps->scalars);
    free(ps);
}

/* validateDeviceClass */
static int validate_class(struct sched_dra *w, const char *class_name, const char *request,
                          char *msg, size_t size)
{
    if (!class_name || !*class_name) {
        textf(msg, size, "request %s: unsupported request type", request);
        return SCHED_DRA_ERROR;
    }
    if (!keymap_get(&w->class_index, class_name)) {
        textf(msg, size, "request %s: device class %s does not exist", request, class_name);
        return SCHED_DRA_UNSCHEDULABLE;
    }
    return SCHED_DRA_OK;
}

int sched_dra_prefilter(struct sched_dra *w, const struct sched_dra_pod_in *p,
                        struct sched_dra_pod **out, char *msg, size_t msgsize)
{
    struct sched_dra_pod *ps = calloc(1, sizeof(*ps));
    const char *why;
    size_t i, j, k;
    int rc;

    *out = NULL;
    if (!ps)
        return -ENOMEM;
    ps->w = w;
    ps->in = p;
    ps->timeout_ms =
        w->binding_timeout_ms > 0 ? w->binding_timeout_ms : SCHED_DRA_BINDING_TIMEOUT_MS;
    why = pod_claims(w, p, ps->claims, &ps->nuser, msg, msgsize);
    if (why) {
        sched_dra_pod_free(ps);
        return SCHED_DRA_UNSCHEDULABLE;
    }
    ps->nclaims = ps->nuser;
    /* extended resources some DeviceClass serves */
    if (p->requests) {
        bool mapped = false;

        for (i = 0; i < p->requests->nscalars; i++) {
            const struct kube_scalar *sc = &p->requests->scalars[i];

            if (sc->value && is_dra_extended_name(sc->name) && ext_class(w, sc->name))
                mapped = true;
        }
        if (mapped) {
            struct wclaim *prior = NULL;

            ps->scalars = calloc(p->requests->nscalars + 1, sizeof(*ps->scalars));
            if (!ps->scalars) {
                sched_dra_pod_free(ps);
                return -ENOMEM;
            }
            for (i = 0; i < p->requests->nscalars; i++)
                ps->scalars[ps->nscalars++] =
                    (struct podscalar){p->requests->scalars[i].name, p->requests->scalars[i].value};
            for (i = 0; i < w->nclaims && !prior; i++) {
                struct wclaim *c = w->claims[i];

                if (!c->deleted && c->extended && c->owner_is_pod &&
                    !strcmp(c->owner_name, p->name) && !strcmp(c->owner_uid, p->uid ? p->uid : ""))
                    prior = c;
            }
            ps->claims[ps->nclaims].wc = prior;
            ps->claims[ps->nclaims].special = true;
            ps->nclaims++;
            ps->has_special = true;
        }
    }
    if (!ps->nclaims) {
        sched_dra_pod_free(ps);
        return SCHED_DRA_SKIP;
    }
    for (i = 0; i < ps->nclaims; i++) {
        struct wclaim *c = ps->claims[i].wc;

        if (c && c->allocated)
            continue; /* its node selector is checked per node */
        ps->allocator = true;
        if (ps->claims[i].special)
            continue;
        for (j = 0; j < c->spec->nrequests; j++) {
            const struct kube_dra_device_request *r = &c->spec->requests[j];

            if (r->exactly) {
                rc = validate_class(w, r->exactly->device_class_name, r->name, msg, msgsize);
                if (rc) {
                    sched_dra_pod_free(ps);
                    return rc;
                }
            } else if (r->nfirst_available) {
                if (!w->f.prioritized_list) {
                    textf(msg, msgsize,
                          "resource claim %s/%s, request %s: has subrequests, but the "
                          "DRAPrioritizedList feature is disabled",
                          c->ns, c->name, r->name);
                    sched_dra_pod_free(ps);
                    return SCHED_DRA_UNSCHEDULABLE;
                }
                for (k = 0; k < r->nfirst_available; k++) {
                    char q[300];

                    snprintf(q, sizeof(q), "%s/%s", r->name, r->first_available[k].name);
                    rc =
                        validate_class(w, r->first_available[k].device_class_name, q, msg, msgsize);
                    if (rc) {
                        sched_dra_pod_free(ps);
                        return rc;
                    }
                }
            } else {
                textf(msg, msgsize, "resource claim %s/%s, request %s: unknown request type", c->ns,
                      c->name, r->name);
                sched_dra_pod_free(ps);
                return SCHED_DRA_UNSCHEDULABLE;
            }
        }
    }
    *out = ps;
    return SCHED_DRA_OK;
}

/* ---- the extended-resource claim on a node (createRequestsAndMappings) ---- */

static int64_t container_request(const struct kube_container *c, const char *resource,
                                 bool *present)
{
    size_t i;

    for (i = 0; i < c->requests.nscalars; i++)
        if (!strcmp(c->requests.scalars[i].name, resource)) {
            *present = true;
            return c->requests.scalars[i].value;
        }
    *present = false;
    return 0;
}

/* the index of resource among the names of c's requests, sorted */
static size_t request_index(const struct kube_container *c, const char *resource)
{
    const char *natives[] = {"cpu", "memory", "ephemeral-storage", "pods"};
    const unsigned bits[] = {KUBE_RES_CPU, KUBE_RES_MEMORY, KUBE_RES_EPHEMERAL, KUBE_RES_PODS};
    size_t i, idx = 0;

    for (i = 0; i < 4; i++)
        if ((c->requests.set & bits[i]) && strcmp(natives[i], resource) < 0)
            idx++;
    for (i = 0; i < c->requests.nscalars; i++)
        if (strcmp(c->requests.scalars[i].name, resource) < 0)
            idx++;
    return idx;
}

struct ereq {
    char name[48];
    int64_t count;
    const char *cls;
    bool used;
};

/* a request mapping while they are gathered: the request's name copied (a short-lived
 * container's may be renamed after) */
struct emap {
    const char *container, *resource;
    char request[48];
};

/* createResourceRequestAndMappings for container i: NULL-or-request in *req, its mappings
 * appended to maps (room for nreusable + 1 more) */
static void container_ereq(const struct kube_container *c, size_t i, const char *resource,
                           const char *cls, struct ereq *reusable, size_t nreusable,
                           struct ereq *req, struct emap *maps, size_t *nmaps)
{
    bool present;
    int64_t crq = container_request(c, resource, &present), sum = 0;
    size_t k;

    req->used = false;
    if (!present || crq == 0)
        return;
    for (k = 0; k < nreusable; k++) {
        if (!reusable[k].used)
            continue;
        sum += reusable[k].count;
        maps[*nmaps].container = c->name;
        maps[*nmaps].resource = resource;
        snprintf(maps[*nmaps].request, sizeof(maps[*nmaps].request), "%s", reusable[k].name);
        (*nmaps)++;
        if (sum >= crq)
            return;
    }
    snprintf(req->name, sizeof(req->name), "container-%zu-request-%zu", i,
             request_index(c, resource));
    req->count = crq - sum;
    req->cls = cls;
    req->used = true;
    maps[*nmaps].container = c->name;
    maps[*nmaps].resource = resource;
    snprintf(maps[*nmaps].request, sizeof(maps[*nmaps].request), "%s", req->name);
    (*nmaps)++;
}

static int cmp_ereq(const void *a, const void *b)
{
    return strcmp(((const struct ereq *)a)->name, ((const struct ereq *)b)->name);
}

/* the node's requests of the extended-resource claim: for each resource (sorted) of names[],
 * the containers' requests, the init containers' largest beyond what later containers give;
 * the request mappings per resource: the long-lived containers', then the short-lived ones'
 * (those of several short-lived requests renamed to the largest's) */
static int ext_requests(struct sched_dra_pod *ps, const char *const *names, size_t nnames,
                        struct nodealloc *na)
{
    const struct kube_pod *pod = ps->in->pod;
    size_t ninit = pod ? pod->ninit_containers : 0, nall = ninit + (pod ? pod->ncontainers : 0);
    struct ereq *all = NULL, *out = NULL;
    struct emap *lmaps = NULL, *smaps = NULL, *maps = NULL;
    size_t nout = 0, r, i, nm = 0, cmaps = (nall + 1) * (nall + 1);
    int rc = 0;

    na->nmaps = 0;
    na->maps = NULL;
    if (!pod)
        return 0;
    all = calloc(nall + 1, sizeof(*all));
    out = calloc((nall + 1) * (nnames + 1), sizeof(*out));
    lmaps = calloc(cmaps, sizeof(*lmaps));
    smaps = calloc(cmaps, sizeof(*smaps));
    maps = calloc(cmaps * (nnames + 1), sizeof(*maps));
    if (!all || !out || !lmaps || !smaps || !maps) {
        rc = -ENOMEM;
        goto done;
    }
    for (r = 0; r < nnames; r++) {
        const struct dra_class *cls = ext_class(ps->w, names[r]);
        struct ereq max;
        size_t nshort = 0, nl = 0, ns = 0;
        bool have_max = false;

        if (!cls)
            continue;
        memset(all, 0, (nall + 1) * sizeof(*all));
        for (i = 0; i < nall; i++) {
            const struct kube_container *c =
                i < ninit ? &pod->init_containers[i] : &pod->containers[i - ninit];

            if (i < ninit && !c->restart_always)
                continue;
            container_ereq(c, i, names[r], cls->name, NULL, 0, &all[i], lmaps, &nl);
        }
        for (i = 0; i < ninit; i++) {
            const struct kube_container *c = &pod->init_containers[i];
            struct ereq q;

            if (c->restart_always)
                continue;
            container_ereq(c, i, names[r], cls->name, &all[i], nall - i, &q, smaps, &ns);
            if (q.used) {
                nshort++;
                if (!have_max || max.count < q.count) {
                    max = q;
                    have_max = true;
                }
            }
        }
        if (have_max && nshort > 1) {
            /* every short-lived request's mapping names the largest one (the names are
             * distinct: one per container) */
            for (i = 0; i < ns; i++)
                if (!strncmp(smaps[i].request, "container-", 10) &&
                    strcmp(smaps[i].request, max.name)) {
                    size_t k;
                    bool shortlived = false;

                    for (k = 0; k < nall && !shortlived; k++)
                        shortlived = all[k].used && !strcmp(all[k].name, smaps[i].request);
                    if (!shortlived)
                        snprintf(smaps[i].request, sizeof(smaps[i].request), "%s", max.name);
                }
        }
        if (have_max)
            out[nout++] = max;
        for (i = 0; i < nall; i++)
            if (all[i].used)
                out[nout++] = all[i];
        memcpy(maps + nm, lmaps, nl * sizeof(*maps));
        nm += nl;
        memcpy(maps + nm, smaps, ns * sizeof(*maps));
        nm += ns;
    }
    qsort(out, nout, sizeof(*out), cmp_ereq);
    na->nereq = nout;
    na->nmaps = nm;
    if (nm) {
        na->maps = arena_alloc(&ps->arena, nm * sizeof(*na->maps));
        if (!na->maps) {
            rc = -ENOMEM;
            goto done;
        }
        for (i = 0; i < nm; i++) {
            na->maps[i].container = maps[i].container;
            na->maps[i].resource = maps[i].resource;
            if (!(na->maps[i].request = arena_strdup(&ps->arena, maps[i].request))) {
                rc = -ENOMEM;
                goto done;
            }
        }
    }
    if (nout) {
        struct dra_request *subs = arena_alloc(&ps->arena, nout * sizeof(*subs));

        na->ereq = arena_alloc(&ps->arena, nout * sizeof(*na->ereq));
        if (!subs || !na->ereq) {
            rc = -ENOMEM;
            goto done;
        }
        for (i = 0; i < nout; i++) {
            memset(&subs[i], 0, sizeof(subs[i]));
            subs[i].name = arena_strdup(&ps->arena, out[i].name);
            subs[i].class_name = out[i].cls;
            subs[i].class = keymap_get(&ps->w->class_index, out[i].cls);
            subs[i].mode = DRA_MODE_EXACT;
            subs[i].mode_str = "ExactCount";
            subs[i].count = out[i].count;
            if (!subs[i].name) {
                rc = -ENOMEM;
                goto done;
            }
            na->ereq[i] = (struct dra_claim_request){subs[i].name, false, &subs[i], 1};
        }
    }
done:
    free(all);
    free(out);
    free(lmaps);
    free(smaps);
    free(maps);
    return rc;
}

/* filterExtendedResources: the resources this node's kubelet does not offer that a class
 * serves go to DRA (ext set, requests in na); UNSCHEDULABLE for one neither offers */
static int filter_extended(struct sched_dra_pod *ps, const struct kube_node *node,
                           struct nodealloc *na, char *msg, size_t msgsize)
{
    const char *names[64];
    size_t nnames = 0, i, k;
    int rc;
    const struct pclaim *sp;

    na->ext = false;
    if (!ps->has_special)
        return SCHED_DRA_OK;
    sp = &ps->claims[ps->nclaims - 1];
    if (sp->wc && sp->wc->spec && sp->wc->spec->nrequests) {
        textf(msg, msgsize, "cannot schedule extended resource claim");
        return SCHED_DRA_UNSCHEDULABLE;
    }
    for (i = 0; i < ps->nscalars; i++) {
        const char *r = ps->scalars[i].name;
        bool present = false;
        int64_t alloc = 0;

        if (!is_dra_extended_name(r) || !ps->scalars[i].value)
            continue;
        for (k = 0; k < node->allocatable.nscalars; k++)
            if (!strcmp(node->allocatable.scalars[k].name, r)) {
                present = true;
                alloc = node->allocatable.scalars[k].value;
            }
        if (ext_class(ps->w, r) && alloc == 0) {
            if (nnames < 64)
                names[nnames++] = r;
        } else if (!present) {
            textf(msg, msgsize, "cannot fit resource");
            return SCHED_DRA_UNSCHEDULABLE;
        }
    }
    if (ps->nuser == 0 && !nnames)
        return SCHED_DRA_OK;
    if (sp->wc && sp->wc->allocated)
        return SCHED_DRA_OK;
    /* scalars are sorted by name already (kube_pod_requests) */
    na->ext = true;
    if (ps->ecached && ps->nenames == nnames &&
        (!nnames || !memcmp(ps->enames, names, nnames * sizeof(*names)))) {
        na->ereq = ps->ereq;
        na->nereq = ps->nereq;
        na->nmaps = ps->nmaps;
        na->maps = ps->maps;
        return SCHED_DRA_OK;
    }
    ps->ecached = false;
    rc = ext_requests(ps, names, nnames, na);
    if (rc)
        return rc;
    if (nnames)
        memcpy(ps->enames, names, nnames * sizeof(*names));
    ps->nenames = nnames;
    ps->ereq = na->ereq;
    ps->nereq = na->nereq;
    ps->nmaps = na->nmaps;
    ps->maps = na->maps;
    ps->ecached = true;
    return SCHED_DRA_OK;
}

/* ---- Filter ---- */

/* the allocation's node selector holds on node */
static bool available_on(const struct walloc *a, const struct kube_node *node)
{
    size_t i;

    if (a->node)
        return !strcmp(a->node, node->name);
    if (a->input)
        return kube_node_selector_matches(a->input, node);
    for (i = 0; i < a->nsels; i++)
        if (!kube_node_selector_matches(a->sels[i], node))
            return false;
    return true;
}

/* Filter's findings on node: ps->cur when it holds them, else Filter again (NULL when the
 * node does not pass it now) */
static struct nodealloc *node_found(struct sched_dra_pod *ps, const struct kube_node *node, int *rc)
{
    char msg[2048];

    *rc = 0;
    if (ps->cur.node && (ps->cur.node == node || !strcmp(ps->cur.node->name, node->name)))
        return &ps->cur;
    msg[0] = '\0';
    *rc = sched_dra_filter(ps, node, msg, sizeof(msg));
    if (*rc != SCHED_DRA_OK) {
        if (*rc > 0)
            *rc = 0;
        return NULL;
    }
    return &ps->cur;
}

/* explain: who holds device id (claim, and the pods it is reserved for) */
static void holder_of(void *ctx, uint32_t id, char *out, size_t size)
{
    struct sched_dra *w = ctx;
    size_t i, j, k, len;

    out[0] = '\0';
    for (i = 0; i < w->nclaims; i++) {
        const struct wclaim *c = w->claims[i];

        if (!c->allocated || c->deleted)
            continue;
        for (j = 0; j < c->alloc.n; j++)
            if (c->alloc.r[j].id == id)
                break;
        if (j == c->alloc.n)
            continue;
        len = strlen(out);
        snprintf(out + len, size - len, "%s%s/%s", len ? ", " : "", c->ns, c->name);
        for (k = 0; k < c->nreserved; k++) {
            len = strlen(out);
            snprintf(out + len, size - len, "%s%s%s/%s", k ? ", " : " (",
                     c->reserved[k].pod ? "pod " : "", c->ns, c->reserved[k].name);
        }
        if (c->nreserved) {
            len = strlen(out);
            snprintf(out + len, size - len, ")");
        }
    }
}

int sched_dra_device_use(struct sched_dra *w, const char *driver, const char *pool,
                         const char *device)
{
    uint32_t id = device_id(w, driver, pool, device, false);

    if (id >= w->nids)
        return 0;
    if (w->allocated && w->allocated[id])
        return 1;
    if ((w->shares && w->shares[id]) || (w->consumed && w->consumed[id]))
        return 2;
    return 0;
}

void sched_dra_set_why(struct sched_dra *w, bool on)
{
    w->why = on;
}

const char *sched_dra_why(struct sched_dra_pod *ps, const char *node)
{
    return ps ? keymap_get(&ps->whys, node) : NULL;
}

/* explain: keep text as node's reason (replacing an earlier one); takes text. The key is a
 * copy in the pod's arena (released with it). */
static int keep_why(struct sched_dra_pod *ps, const char *node, char *text)
{
    void *old = NULL;
    const char *key = arena_strdup(&ps->arena, node);

    if (!key || keymap_put(&ps->whys, key, text, &old)) {
        free(text);
        return -ENOMEM;
    }
    free(old);
    return 0;
}

static int filter_node(struct sched_dra_pod *ps, const struct kube_node *node, char *msg,
                       size_t msgsize);

/* ---- the binding of allocated devices (DRADeviceBindingConditions) ---- */

int64_t sched_dra_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sched_dra_set_binding_timeout(struct sched_dra *w, int64_t timeout_ms)
{
    w->binding_timeout_ms = timeout_ms;
}

/* getAllocatedDeviceStatus: the status.devices entry of result r (by driver, pool, device) */
static const struct kube_dra_device_status *device_status(const struct kube_resource_claim *c,
                                                          const struct kube_dra_result *r)
{
    size_t i;

    for (i = 0; i < c->ndevices; i++) {
        const struct kube_dra_device_status *d = &c->devices[i];

        if (!strcmp(d->device, r->device) && !strcmp(d->driver, r->driver) &&
            !strcmp(d->pool, r->pool))
            return d;
    }
    return NULL;
}

static const struct kube_dra_condition *condition(const struct kube_dra_device_status *d,
                                                  const char *type)
{
    size_t i;

    for (i = 0; i < d->nconditions; i++)
        if (!strcmp(d->conditions[i].type, type))
            return &d->conditions[i];
    return NULL;
}

enum sched_dra_binding sched_dra_binding_state(const struct kube_resource_claim *c, int64_t now_ms,
                                               int64_t timeout_ms, char *msg, size_t msgsize)
{
    const struct kube_dra_allocation *a = c->allocation;
    size_t i, k;
    bool ready = true;

    if (msgsize)
        msg[0] = '\0';
    if (!a)
        return SCHED_DRA_BINDING_PENDING;
    /* isClaimReadyForBinding: the results in order, up to the first one not ready */
    for (i = 0; i < a->nresults && ready; i++) {
        const struct kube_dra_result *r = &a->results[i];
        const struct kube_dra_device_status *d;

        if (!r->nbinding_conditions)
            continue;
        if (!(d = device_status(c, r))) {
            ready = false;
            break;
        }
        for (k = 0; k < r->nbinding_failure_conditions; k++) {
            const struct kube_dra_condition *f = condition(d, r->binding_failure_conditions[k]);

            if (f && !strcmp(f->status, "True")) {
                char q[600];

                textf(msg, msgsize, "device binding failed: claim=%s, reason=%s, message=%s",
                      c->name, f->reason ? f->reason : "",
                      quote_go_to(q, sizeof(q), f->message ? f->message : "",
                                  f->message ? strlen(f->message) : 0));
                return SCHED_DRA_BINDING_FAILED;
            }
        }
        for (k = 0; k < r->nbinding_conditions; k++) {
            const struct kube_dra_condition *t = condition(d, r->binding_conditions[k]);

            if (!t || strcmp(t->status, "True"))
                ready = false;
        }
    }
    if (ready)
        return SCHED_DRA_BINDING_READY;
    /* isClaimTimeout: a result with binding conditions and allocationTimestamp + timeout
     * before now */
    if (!a->has_allocation_timestamp)
        return SCHED_DRA_BINDING_PENDING;
    for (i = 0; i < a->nresults; i++)
        if (a->results[i].nbinding_conditions && a->allocation_time * 1000 + timeout_ms < now_ms) {
            textf(msg, msgsize, "device binding timeout: claim=%s", c->name);
            return SCHED_DRA_BINDING_TIMEOUT;
        }
    return SCHED_DRA_BINDING_PENDING;
}

int64_t sched_dra_binding_due(const struct sched_dra *w, int64_t timeout_ms)
{
    int64_t now = sched_dra_now_ms(), due = 0;
    size_t i;
    char msg[8];

    if (timeout_ms <= 0)
        timeout_ms = SCHED_DRA_BINDING_TIMEOUT_MS;
    if (!w->f.binding_and_status)
        return 0;
    for (i = 0; i < w->nclaims; i++) {
        const struct wclaim *c = w->claims[i];
        int64_t t;

        if (c->deleted || !c->allocated || !c->bind_in ||
            !c->bind_in->allocation->has_allocation_timestamp ||
            sched_dra_binding_state(c->bind_in, now, timeout_ms, msg, sizeof(msg)) !=
                SCHED_DRA_BINDING_PENDING)
            continue;
        t = c->bind_in->allocation->allocation_time * 1000 + timeout_ms;
        if (!due || t < due)
            due = t;
    }
    return due;
}

/* Filter's check of an allocated input claim's devices: true when their binding failed or
 * timed out (the message of sched_dra_binding_state in msg) */
static bool binding_unusable(const struct sched_dra_pod *ps, const struct wclaim *c, char *msg,
                             size_t msgsize)
{
    char tmp[1024];
    enum sched_dra_binding b;

    if (!msgsize) {
        msg = tmp;
        msgsize = sizeof(tmp);
    }
    b = sched_dra_binding_state(c->bind_in, sched_dra_now_ms(), ps->timeout_ms, msg, msgsize);
    return b == SCHED_DRA_BINDING_FAILED || b == SCHED_DRA_BINDING_TIMEOUT;
}

/* explain: why the claims in the mask unavailable are not available on node, one line each */
static int why_unavailable(struct sched_dra_pod *ps, const struct kube_node *node,
                           uint64_t unavailable)
{
    struct buf b = {0};
    size_t i;
    int rc = 0;

    for (i = 0; i < ps->nclaims && !rc; i++) {
        const struct wclaim *c = ps->claims[i].wc;
        char m[1024];

        if (!(unavailable >> i & 1) || !c)
            continue;
        if (!available_on(&c->alloc, node)) {
            rc = buf_printf(&b,
                            "claim %s/%s: allocated, and its allocation's node selector does not "
                            "match this node\n",
                            c->ns, c->name);
        } else if (binding_unusable(ps, c, m, sizeof(m))) {
            if (!strncmp(m, "device binding timeout", 22)) {
                char when[64];
                time_t t = (time_t)c->bind_in->allocation->allocation_time;
                struct tm tm;

                if (!gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
                    snprintf(when, sizeof(when), "%lld", (long long)t);
                rc = buf_printf(&b,
                                "claim %s/%s: its devices' binding conditions were not met within "
                                "bindingTimeout %llds of its allocation (%s)",
                                c->ns, c->name, (long long)(ps->timeout_ms / 1000), when);
            } else {
                rc = buf_printf(&b, "claim %s/%s: %s", c->ns, c->name, m);
            }
            if (!rc)
                rc = buf_printf(&b, "; PostFilter deallocates it when no node fits\n");
        }
    }
    if (rc || !b.data) {
        buf_release(&b);
        return rc;
    }
    return keep_why(ps, node->name, b.data); /* (takes the text) */
}

int sched_dra_filter(struct sched_dra_pod *ps, const struct kube_node *node, char *msg,
                     size_t msgsize)
{
    int rc;

    ps->cur.node = NULL;
    rc = filter_node(ps, node, msg, msgsize);
    if (rc == SCHED_DRA_OK)
        ps->cur.node = node;
    return rc;
}

static int filter_node(struct sched_dra_pod *ps, const struct kube_node *node, char *msg,
                       size_t msgsize)
{
    struct sched_dra *w = ps->w;
    struct nodealloc *na = &ps->cur;
    uint64_t unavailable = 0;
    const struct dra_claim *claims[DRA_CLAIMS_MAX];
    struct dra_claim claimv[DRA_CLAIMS_MAX];
    size_t i, n = 0;
    int rc;

    memset(na, 0, sizeof(*na));
    rc = filter_extended(ps, node, na, msg, msgsize);
    if (rc)
        return rc;
    if (!na->ext && ps->nuser == 0)
        return SCHED_DRA_OK;
    for (i = 0; i < ps->nclaims; i++) {
        const struct wclaim *c = ps->claims[i].wc;

        if (!c || !c->allocated)
            continue;
        if (!available_on(&c->alloc, node))
            unavailable |= (uint64_t)1 << i;
        else if (w->f.binding_and_status && c->bind_in && binding_unusable(ps, c, NULL, 0))
            unavailable |= (uint64_t)1 << i; /* (isClaimReadyForBinding, isClaimTimeout) */
    }
    if (ps->allocator) {
        struct dra_pools *pools;
        struct dra_state st = {w->allocated, w->shares,
                               (const struct dra_consumed *const *)w->consumed, w->nconsumed};
        struct dra_ops ops = {cb_eval, cb_nodesel, w};
        char inner[1024];

        for (i = 0; i < ps->nclaims; i++) {
            const struct pclaim *pc = &ps->claims[i];

            if (pc->wc && pc->wc->allocated)
                continue;
            if (pc->special) {
                memset(&claimv[n], 0, sizeof(claimv[n]));
                claimv[n].ns = ps->in->namespace_;
                claimv[n].name = SPECIAL_CLAIM_NAME;
                if (na->ext) {
                    claimv[n].requests = na->ereq;
                    claimv[n].nrequests = na->nereq;
                }
                claims[n] = &claimv[n];
            } else {
                claims[n] = &pc->wc->dc;
            }
            n++;
        }
        inner[0] = '\0';
        rc = node_pools(w, node, &pools, inner, sizeof(inner));
        if (rc == -ENOMEM)
            return rc;
        if (rc) {
            textf(msg, msgsize, "gather pool information: %s", inner);
            return SCHED_DRA_ERROR;
        }
        if (ps->ncres < n) {
            free(ps->resbuf);
            ps->ncres = 0;
            if (!(ps->resbuf = calloc(n, sizeof(*ps->resbuf))))
                return -ENOMEM;
            ps->ncres = n;
        }
        na->res = ps->resbuf;
        {
            struct dra_claim flat[DRA_CLAIMS_MAX];

            for (i = 0; i < n; i++)
                flat[i] = *claims[i];
            w->node = node;
            rc = dra_allocate(&w->f, node->name, pools, &st, flat, n, &ops, w->scratch, ps->resbuf,
                              inner, sizeof(inner));
            if ((rc == DRA_NOT_ALLOCATED || rc == DRA_NODE_FAILED) && w->why) {
                struct sched_dra_why_in in = {&w->f, node->name, pools,      &st,       flat,
                                              n,     &ops,       w->scratch, holder_of, w};

                char *text = sched_dra_why_text(&in);

                if (!text || keep_why(ps, node->name, text))
                    return -ENOMEM;
            }
        }
        switch (rc) {
        case DRA_ALLOCATED:
            na->nres = n;
            break;
        case DRA_NOT_ALLOCATED:
            textf(msg, msgsize, "cannot allocate all claims");
            return SCHED_DRA_UNSCHEDULABLE;
        case DRA_NODE_FAILED:
            textf(msg, msgsize, "%s", inner);
            return SCHED_DRA_UNSCHEDULABLE;
        case DRA_FAILED:
            textf(msg, msgsize, "%s", inner);
            return SCHED_DRA_ERROR;
        default:
            return rc < 0 ? rc : -EINVAL;
        }
    }
    if (unavailable) {
        ps->unavailable |= unavailable;
        textf(msg, msgsize, "resourceclaim not available on the node");
        if (w->why && (rc = why_unavailable(ps, node, unavailable)))
            return rc;
        return SCHED_DRA_UNSCHEDULABLE;
    }
    return SCHED_DRA_OK;
}

/* ---- Score ---- */

static bool ref_in(const char *const *refs, size_t n, const char *req, const char *sub)
{
    size_t i, lr = strlen(req);

    for (i = 0; i < n; i++)
        if (!strncmp(refs[i], req, lr) && refs[i][lr] == '/' && !strcmp(refs[i] + lr + 1, sub))
            return true;
    return false;
}

int64_t sched_dra_score(struct sched_dra_pod *ps, const struct kube_node *node)
{
    struct nodealloc *na;
    size_t i, j, k, idx = 0;
    int64_t score = 0;
    int rc;

    if (!ps->w->f.prioritized_list)
        return 0;
    na = node_found(ps, node, &rc);
    if (!na || (!ps->allocator && !na->ext))
        return 0;
    for (i = 0; i < ps->nclaims; i++) {
        const struct wclaim *c = ps->claims[i].wc;
        const char *refs[DRA_RESULTS_MAX];
        size_t nrefs = 0;

        if (c && c->allocated) {
            for (j = 0; j < c->alloc.n && nrefs < DRA_RESULTS_MAX; j++)
                if (strchr(c->alloc.r[j].request, '/'))
                    refs[nrefs++] = c->alloc.r[j].request;
        } else {
            static char buf[DRA_RESULTS_MAX][300];
            const struct dra_claim_result *res;

            if (idx >= na->nres)
                return 0;
            res = &na->res[idx++];
            for (j = 0; j < res->n && nrefs < DRA_RESULTS_MAX; j++)
                if (res->results[j].parent_request) {
                    snprintf(buf[nrefs], sizeof(buf[nrefs]), "%s/%s",
                             res->results[j].parent_request, res->results[j].request);
                    refs[nrefs] = buf[nrefs];
                    nrefs++;
                }
        }
        if (!c || !c->spec)
            continue;
        for (j = 0; j < c->spec->nrequests; j++) {
            const struct kube_dra_device_request *r = &c->spec->requests[j];

            if (r->exactly)
                continue;
            for (k = 0; k < r->nfirst_available; k++)
                if (ref_in(refs, nrefs, r->name, r->first_available[k].name))
                    score += DRA_FIRST_AVAILABLE_MAX - (int64_t)k;
        }
    }
    return score;
}

/* ---- Reserve and PreBind ---- */

static bool reserved_for(const struct wclaim *c, const char *uid)
{
    size_t i;

    for (i = 0; i < c->nreserved; i++)
        if (!strcmp(c->reserved[i].uid, uid))
            return true;
    return false;
}

/* the allocation of a claim from the allocator's result on node */
static int set_allocation(struct sched_dra *w, struct wclaim *c, const struct dra_claim_result *res,
                          const char *node)
{
    size_t i, k;

    free(c->alloc.r);
    memset(&c->alloc, 0, sizeof(c->alloc));
    if (res->n && !(c->alloc.r = calloc(res->n, sizeof(*c->alloc.r))))
        return -ENOMEM;
    for (i = 0; i < res->n; i++) {
        const struct dra_result *x = &res->results[i];
        struct wresult *r = &c->alloc.r[i];

        if (x->parent_request) {
            size_t n = strlen(x->parent_request) + strlen(x->request) + 2;
            char *q = arena_alloc(&c->strings, n);

            if (!q)
                return -ENOMEM;
            snprintf(q, n, "%s/%s", x->parent_request, x->request);
            r->request = q;
        } else {
            r->request = arena_strdup(&c->strings, x->request);
            if (!r->request)
                return -ENOMEM;
        }
        r->driver = x->pool->driver;
        r->pool = x->pool->pool;
        r->device = x->device->name;
        r->id = x->device->id;
        r->admin = x->admin_access;
        r->shared = x->shared;
        r->has_consumed = x->nconsumed > 0;
        for (k = 0; k < x->nconsumed && k < 8; k++)
            r->consumed[k] = x->consumed[k];
        r->nconsumed = k;
    }
    c->alloc.n = res->n;
    if (res->node_local) {
        c->alloc.node = arena_strdup(&c->strings, node);
        if (!c->alloc.node)
            return -ENOMEM;
    } else {
        for (i = 0; i < res->nsels; i++)
            c->alloc.sels[i] = res->sels[i];
        c->alloc.nsels = res->nsels;
    }
    c->allocated = true;
    c->bind_in = NULL;
    return account(w, &c->alloc, 1);
}

static int reserve_claim(struct wclaim *c, const struct sched_dra_pod_in *p)
{
    struct consumer v = {p->name, p->uid ? p->uid : "", true};

    if (reserved_for(c, v.uid))
        return 0;
    /* (copied: the pod may go before the world, as serve's pods do after their cycle) */
    v.name = arena_strdup(&c->strings, v.name);
    v.uid = arena_strdup(&c->strings, v.uid);
    if (!v.name || !v.uid)
        return -ENOMEM;
    return PUSH(c->reserved, c->nreserved, c->creserved, v);
}

static void unreserve_claim(struct wclaim *c, const char *uid)
{
    size_t i, j = 0;

    for (i = 0; i < c->nreserved; i++)
        if (!(c->reserved[i].pod && !strcmp(c->reserved[i].uid, uid)))
            c->reserved[j++] = c->reserved[i];
    c->nreserved = j;
}

static void claim_delete(struct sched_dra *w, struct wclaim *c)
{
    char key[600];

    if (c->allocated)
        account(w, &c->alloc, -1);
    c->allocated = false;
    c->deleted = true;
    keymap_del(&w->claim_index, keyof(key, sizeof(key), c->ns, c->name));
}

static bool claim_taken(void *ctx, const char *name)
{
    void **args = ctx;

    return claim_get(args[0], args[1], name) != NULL;
}

/* the extended-resource claim's requests and mappings as PreBind writes them, kept with it */
static int keep_ext(struct wclaim *c, const struct nodealloc *na)
{
    size_t i;

    c->nereqs = c->nemaps = 0;
    if (!na->ext)
        return 0;
    if (na->nereq && !(c->ereqs = arena_alloc(&c->strings, na->nereq * sizeof(*c->ereqs))))
        return -ENOMEM;
    for (i = 0; i < na->nereq; i++) {
        const struct dra_request *r = na->ereq[i].subs;

        c->ereqs[i].name = arena_strdup(&c->strings, na->ereq[i].name);
        c->ereqs[i].device_class = arena_strdup(&c->strings, r->class_name);
        c->ereqs[i].count = r->count;
        if (!c->ereqs[i].name || !c->ereqs[i].device_class)
            return -ENOMEM;
    }
    c->nereqs = na->nereq;
    if (na->nmaps && !(c->emaps = arena_alloc(&c->strings, na->nmaps * sizeof(*c->emaps))))
        return -ENOMEM;
    for (i = 0; i < na->nmaps; i++) {
        c->emaps[i].container = arena_strdup(&c->strings, na->maps[i].container);
        c->emaps[i].resource = arena_strdup(&c->strings, na->maps[i].resource);
        c->emaps[i].request = arena_strdup(&c->strings, na->maps[i].request);
        if (!c->emaps[i].container || !c->emaps[i].resource || !c->emaps[i].request)
            return -ENOMEM;
    }
    c->nemaps = na->nmaps;
    return 0;
}

/* json_text appends s as Go's encoding/json writes a string (the value of an API server's
 * "Duplicate value"): between quotes, '"' and '\\' backslashed, \n \r \t, other control
 * characters and <, >, & as \u00XX; other bytes as they are (Go also escapes U+2028,
 * U+2029 and invalid UTF-8, which no uid the API server makes holds) */
static void json_text(char *out, size_t size, const char *s)
{
    size_t n = strlen(out);

    for (; *s && n + 8 < size; s++) {
        unsigned char ch = (unsigned char)*s;

        if (ch == '"' || ch == '\\')
            n += (size_t)snprintf(out + n, size - n, "\\%c", ch);
        else if (ch == '\n')
            n += (size_t)snprintf(out + n, size - n, "\\n");
        else if (ch == '\r')
            n += (size_t)snprintf(out + n, size - n, "\\r");
        else if (ch == '\t')
            n += (size_t)snprintf(out + n, size - n, "\\t");
        else if (ch < 0x20 || ch == '<' || ch == '>' || ch == '&')
            n += (size_t)snprintf(out + n, size - n, "\\u%04x", ch);
        else
            out[n++] = (char)ch;
    }
    out[n] = '\0';
}

/* the PreBind error of entry i, a claim an earlier entry of the pod has just written: v1.37.2
 * writes each entry from the claim PreFilter read, so the second write carries a stale
 * resourceVersion; the API server's conflict makes it read the claim again, which is then
 * allocated (the entry wanted to store its own allocation: refused) or already reserved for
 * the pod (the entry appends the pod again: the API server refuses the duplicate) */
static void prebind_written_twice(const struct sched_dra_pod *ps, size_t i, bool allocate,
                                  char *msg, size_t msgsize)
{
    const struct sched_dra_pod_in *p = ps->in;
    const struct wclaim *c = ps->claims[i].wc;
    char name[600] = "", uid[600] = "";

    if (allocate) {
        textf(msg, msgsize, "claim %s/%s got allocated elsewhere in the meantime", c->ns, c->name);
        return;
    }
    /* the duplicate is the entry appended after the reservedFor the claim has now (the
     * pod's own entry included) */
    json_text(name, sizeof(name), p->name);
    json_text(uid, sizeof(uid), p->uid ? p->uid : "");
    textf(msg, msgsize,
          "add reservation to claim %s/%s: ResourceClaim.resource.k8s.io \"%s\" is invalid: "
          "status.reservedFor[%zu]: Duplicate value: "
          "{\"resource\":\"pods\",\"name\":\"%s\",\"uid\":\"%s\"}",
          c->ns, c->name, c->name, c->nreserved, name, uid);
}

int sched_dra_reserve(struct sched_dra_pod *ps, const struct kube_node *node, char *msg,
                      size_t msgsize)
{
    struct sched_dra *w = ps->w;
    const struct sched_dra_pod_in *p = ps->in;
    const char *uid = p->uid ? p->uid : "";
    struct nodealloc *na;
    struct wclaim *special = NULL;
    bool before[DRA_CLAIMS_MAX], held[DRA_CLAIMS_MAX];
    size_t i, j, idx = 0, stop;
    int rc;

    na = node_found(ps, node, &rc);
    if (rc < 0)
        return rc;
    for (i = 0; i < ps->nclaims; i++) {
        before[i] = ps->claims[i].wc && ps->claims[i].wc->allocated;
        held[i] = ps->claims[i].wc && reserved_for(ps->claims[i].wc, uid);
    }
    /* PreBind writes the entries in order and stops at the first that names a claim an
     * earlier entry wrote (prebind_written_twice): what the entries before it wrote is all
     * that stays of Reserve's allocations */
    stop = ps->nclaims;
    for (i = 0; i < ps->nclaims && stop == ps->nclaims; i++)
        for (j = 0; j < i && ps->claims[i].wc && !held[i]; j++)
            if (ps->claims[j].wc == ps->claims[i].wc) {
                stop = i;
                break;
            }
    /* Reserve: the allocations made on this node, in the order the claims were allocated (a
     * claim named twice was allocated once per entry) */
    for (i = 0; i < stop; i++) {
        struct pclaim *pc = &ps->claims[i];

        if (before[i])
            continue;
        if (!ps->allocator || !na || idx >= na->nres)
            break;
        if (pc->special) {
            /* PreBind creates it, named by the API server after the pod */
            char base[300], name[64];
            void *args[2] = {w, (void *)p->namespace_};
            char *n;

            special = calloc(1, sizeof(*special));
            if (!special)
                return -ENOMEM;
            snprintf(base, sizeof(base), "%s-extended-resources-", p->name);
            sched_dra_generated_name(p->namespace_, base, claim_taken, args, name);
            n = arena_strdup(&special->strings, name);
            if (!n || PUSH(w->claims, w->nclaims, w->cclaims, special)) {
                arena_release(&special->strings);
                free(special);
                return -ENOMEM;
            }
            /* (the pod's strings copied: the pod may go before the world, as serve's do) */
            special->ns = arena_strdup(&special->strings, p->namespace_);
            special->name = n;
            special->uid = "";
            special->owner_is_pod = true;
            special->owner_name = arena_strdup(&special->strings, p->name);
            special->owner_uid = arena_strdup(&special->strings, uid);
            if (!special->ns || !special->owner_name || !special->owner_uid)
                return -ENOMEM;
            special->extended = true;
            special->loaded = true;
            special->finalizer = true;
            if (claim_index_put(w, special))
                return -ENOMEM;
            if ((rc = set_allocation(w, special, &na->res[idx], node->name)))
                return rc;
            if ((rc = keep_ext(special, na)))
                return rc;
            pc->wc = special;
        } else {
            if ((rc = set_allocation(w, pc->wc, &na->res[idx], node->name)))
                return rc;
            pc->wc->finalizer = true;
        }
        idx++;
    }
    /* PreBind: every claim reserved for the pod, in order */
    for (i = 0; i < stop; i++) {
        struct pclaim *pc = &ps->claims[i];

        if (!pc->wc)
            continue; /* the extended resources all served by the device plugin */
        if (held[i] || reserved_for(pc->wc, uid))
            continue;
        if ((rc = reserve_claim(pc->wc, p)))
            return rc;
    }
    if (stop < ps->nclaims) {
        prebind_written_twice(ps, stop, !before[stop], msg, msgsize);
    } else if (special && (!na->ext || na->nmaps == 0)) {
        /* v1.37.2 writes the pod's extendedResourceClaimStatus only with request mappings:
         * none (the node's device plugin serves them all, the pod also has claims) fails the
         * PreBind */
        textf(msg, msgsize,
              "nil or empty request mappings, no update of pod %s/%s ExtendedResourceClaimStatus",
              p->namespace_, p->name);
    } else {
        return SCHED_DRA_OK;
    }
    /* Unreserve takes the pod off its claims (those PreBind allocated stay allocated) and
     * deletes the claim PreBind made */
    for (i = 0; i < ps->nclaims; i++) {
        struct pclaim *pc = &ps->claims[i];

        if (!pc->wc)
            continue;
        if (pc->special)
            claim_delete(w, pc->wc);
        else
            unreserve_claim(pc->wc, uid);
    }
    return SCHED_DRA_ERROR;
}

/* ---- PostFilter ---- */

int sched_dra_postfilter(struct sched_dra_pod *ps, char *msg, size_t msgsize)
{
    const char *uid = ps->in->uid ? ps->in->uid : "";
    size_t i;

    textf(msg, msgsize, "%s", "");
    /* kube-scheduler ranges over a set here: with several candidates it picks one at random;
     * the claim order is taken */
    for (i = 0; i < ps->nclaims; i++) {
        struct pclaim *pc = &ps->claims[i];
        struct wclaim *c = pc->wc;

        if (!(ps->unavailable >> i & 1))
            continue;
        if (pc->special) {
            if (c)
                break;
            continue;
        }
        if (c->nreserved == 0 || (c->nreserved == 1 && !strcmp(c->reserved[0].uid, uid))) {
            ps->post_dealloc = c; /* (when the cycle ends) */
            textf(msg, msgsize, "deallocation of ResourceClaim completed");
            return SCHED_DRA_UNSCHEDULABLE;
        }
    }
    if (ps->has_special && ps->claims[ps->nclaims - 1].wc) {
        ps->post_delete = ps->claims[ps->nclaims - 1].wc; /* (when the cycle ends) */
        textf(msg, msgsize, "deletion of ResourceClaim completed");
    }
    return SCHED_DRA_UNSCHEDULABLE;
}

/* ---- a pod gone ---- */

void sched_dra_release_pod(struct sched_dra *w, const char *ns, const char *name, const char *uid)
{
    size_t i;

    (void)name;
    for (i = 0; i < w->nclaims; i++) {
        struct wclaim *c = w->claims[i];
        size_t before;

        if (c->deleted || strcmp(c->ns, ns))
            continue;
        if (c->owner_is_pod && !strcmp(c->owner_uid, uid)) {
            claim_delete(w, c);
            continue;
        }
        before = c->nreserved;
        unreserve_claim(c, uid);
        if (c->nreserved == before)
            continue;
        if (!c->nreserved && c->finalizer && c->allocated) {
            account(w, &c->alloc, -1);
            c->allocated = false;
            c->bind_in = NULL;
            c->finalizer = false;
        }
    }
}

/* ---- what a pod got ---- */

const char *sched_dra_pod_deleted_extended(const struct sched_dra *w, const char *ns,
                                           const char *name, const char *uid)
{
    size_t i;

    for (i = 0; i < w->nclaims; i++) {
        const struct wclaim *c = w->claims[i];

        if (c->deleted && c->extended && c->owner_is_pod && c->in && !strcmp(c->ns, ns) &&
            !strcmp(c->owner_name, name) && !strcmp(c->owner_uid, uid ? uid : ""))
            return c->name;
    }
    return NULL;
}

/* pod_extended_claim: whether c is an extended-resource claim the pod (ns, name, uid) made in
 * Reserve (not from the input); if so, its name, requests and mappings into out */
static bool pod_extended_claim(const struct wclaim *c, const char *ns, const char *name,
                               const char *uid, struct sched_dra_ext_out *out)
{
    if (!c->extended || !c->owner_is_pod || c->in || strcmp(c->ns, ns) ||
        strcmp(c->owner_name, name) || strcmp(c->owner_uid, uid ? uid : ""))
        return false;
    out->claim_name = c->name;
    out->requests = c->ereqs;
    out->nrequests = c->nereqs;
    out->mappings = c->emaps;
    out->nmappings = c->nemaps;
    return true;
}

int sched_dra_pod_extended(const struct sched_dra *w, const char *ns, const char *name,
                           const char *uid, struct sched_dra_ext_out *out)
{
    size_t i;

    memset(out, 0, sizeof(*out));
    for (i = 0; i < w->nclaims; i++) {
        const struct wclaim *c = w->claims[i];

        if (!c->deleted && pod_extended_claim(c, ns, name, uid, out))
            return 1;
    }
    return 0;
}

int sched_dra_pod_unreserved_extended(const struct sched_dra *w, const char *ns, const char *name,
                                      const char *uid, struct sched_dra_ext_out *out)
{
    size_t i;

    memset(out, 0, sizeof(*out));
    for (i = w->nclaims; i-- > 0;) {
        const struct wclaim *c = w->claims[i];

        /* (made in Reserve: no input; a PostFilter's deletion is of a claim read from it) */
        if (c->deleted && pod_extended_claim(c, ns, name, uid, out))
            return 1;
    }
    return 0;
}

/* claims_held: the world's claims of the pod (spec order, then its extended-resource claim)
 * into list (DRA_CLAIMS_MAX); returns how many */
static size_t claims_held(struct sched_dra *w, const struct sched_dra_pod_in *p,
                          struct wclaim **list)
{
    size_t nl = 0, i;

    for (i = 0; i < p->nclaims && nl < DRA_CLAIMS_MAX - 1; i++) {
        bool tmpl;
        const char *name = claim_name_of(w, p, i, &tmpl);
        struct wclaim *c = name && *name ? claim_get(w, p->namespace_, name) : NULL;

        if (c)
            list[nl++] = c;
    }
    if (p->extended_claim) {
        struct wclaim *c = claim_get(w, p->namespace_, p->extended_claim);

        if (c)
            list[nl++] = c;
    } else {
        for (i = 0; i < w->nclaims; i++) {
            struct wclaim *c = w->claims[i];

            if (!c->deleted && c->extended && c->owner_is_pod && !c->in &&
                !strcmp(c->ns, p->namespace_) && !strcmp(c->owner_name, p->name) &&
                !strcmp(c->owner_uid, p->uid ? p->uid : "")) {
                list[nl++] = c;
                break;
            }
        }
    }
    return nl;
}

int sched_dra_pod_devices(struct sched_dra *w, const struct sched_dra_pod_in *p,
                          const struct sched_dra_device_out **out, size_t *n)
{
    struct wclaim *list[DRA_CLAIMS_MAX];
    size_t nl = claims_held(w, p, list), i, j;

    *out = NULL;
    *n = 0;
    for (i = 0; i < nl; i++) {
        if (!list[i]->allocated)
            continue;
        for (j = 0; j < list[i]->alloc.n; j++) {
            const struct wresult *r = &list[i]->alloc.r[j];
            struct sched_dra_device_out o = {list[i]->ns,
                                             list[i]->name,
                                             r->request,
                                             r->driver,
                                             r->pool,
                                             r->device,
                                             r->shared,
                                             r->has_consumed ? r->consumed : NULL,
                                             r->has_consumed ? r->nconsumed : 0};
            void *nv = grow(w->devout, &w->cdevout, *n + 1, sizeof(*w->devout));

            if (!nv)
                return -ENOMEM;
            w->devout = nv;
            w->devout[(*n)++] = o;
        }
    }
    *out = w->devout;
    return 0;
}

/* the input device (driver, pool, name) as the pool's newest generation publishes it, NULL */
static const struct kube_dra_device *input_device(const struct sched_dra *w, const char *driver,
                                                  const char *pool, const char *name)
{
    const struct kube_dra_device *found = NULL;
    int64_t gen = 0;
    size_t i, j;

    for (i = 0; i < w->nslices; i++) {
        const struct kube_resource_slice *s = w->slices[i];

        if (strcmp(s->driver, driver) || strcmp(s->pool, pool) || (found && s->generation <= gen))
            continue;
        for (j = 0; j < s->ndevices; j++)
            if (!strcmp(s->devices[j].name, name)) {
                found = &s->devices[j];
                gen = s->generation;
                break;
            }
    }
    return found;
}

/* add_wait appends one device to the growing array *v (its conditions pointed at) */
static int add_wait(struct sched_dra_binding_wait **v, size_t *n, size_t *cap,
                    const struct wclaim *c, const char *driver, const char *pool,
                    const char *device, const char *const *conds, size_t nconds)
{
    struct sched_dra_binding_wait b = {c->ns, c->name, driver, pool, device, conds, nconds};

    return PUSH(*v, *n, *cap, b);
}

int sched_dra_pod_binding_waits(struct sched_dra *w, const struct sched_dra_pod_in *p,
                                int64_t now_ms, int64_t timeout_ms,
                                struct sched_dra_binding_wait **out, size_t *n, const char ***conds)
{
    struct wclaim *list[DRA_CLAIMS_MAX];
    struct sched_dra_binding_wait *v = NULL;
    const char **names = NULL; /* the unmet conditions of input claims, in order */
    size_t nl, i, j, k, nv = 0, cv = 0, nn = 0, cn = 0;
    char msg[8];

    *out = NULL;
    *n = 0;
    *conds = NULL;
    /* PreBind returns before its wait with either gate off */
    if (!w->f.binding_and_status)
        return 0;
    if (timeout_ms <= 0)
        timeout_ms = SCHED_DRA_BINDING_TIMEOUT_MS;
    nl = claims_held(w, p, list);
    /* first the unmet conditions' names, so that the array holding them no longer moves */
    for (i = 0; i < nl; i++) {
        const struct wclaim *c = list[i];
        const struct kube_dra_allocation *a;

        if (c->deleted || !c->allocated || !c->bind_in ||
            sched_dra_binding_state(c->bind_in, now_ms, timeout_ms, msg, sizeof(msg)) ==
                SCHED_DRA_BINDING_READY)
            continue;
        a = c->bind_in->allocation;
        for (j = 0; j < a->nresults; j++) {
            const struct kube_dra_result *r = &a->results[j];
            const struct kube_dra_device_status *d = device_status(c->bind_in, r);

            for (k = 0; k < r->nbinding_conditions; k++) {
                const struct kube_dra_condition *t =
                    d ? condition(d, r->binding_conditions[k]) : NULL;

                if ((!t || strcmp(t->status, "True")) &&
                    PUSH(names, nn, cn, r->binding_conditions[k]))
                    goto nomem;
            }
        }
    }
    nn = 0;
    for (i = 0; i < nl; i++) {
        const struct wclaim *c = list[i];

        if (c->deleted || !c->allocated)
            continue;
        if (!c->bind_in) {
            /* allocated here: every device's conditions, copied into the result at
             * allocation; no status.devices entry reports them yet */
            for (j = 0; j < c->alloc.n; j++) {
                const struct wresult *r = &c->alloc.r[j];
                const struct kube_dra_device *d = input_device(w, r->driver, r->pool, r->device);

                if (d && d->nbinding_conditions &&
                    add_wait(&v, &nv, &cv, c, r->driver, r->pool, r->device, d->binding_conditions,
                             d->nbinding_conditions))
                    goto nomem;
            }
            continue;
        }
        if (sched_dra_binding_state(c->bind_in, now_ms, timeout_ms, msg, sizeof(msg)) ==
            SCHED_DRA_BINDING_READY)
            continue;
        for (j = 0; j < c->bind_in->allocation->nresults; j++) {
            const struct kube_dra_result *r = &c->bind_in->allocation->results[j];
            const struct kube_dra_device_status *d = device_status(c->bind_in, r);
            size_t first = nn;

            for (k = 0; k < r->nbinding_conditions; k++) {
                const struct kube_dra_condition *t =
                    d ? condition(d, r->binding_conditions[k]) : NULL;

                nn += !t || strcmp(t->status, "True");
            }
            if (nn > first &&
                add_wait(&v, &nv, &cv, c, r->driver, r->pool, r->device, names + first, nn - first))
                goto nomem;
        }
    }
    *out = v;
    *n = nv;
    *conds = names;
    return 0;
nomem:
    free(v);
    free(names);
    return -ENOMEM;
}
