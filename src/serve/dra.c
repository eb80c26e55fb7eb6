/* dra.c - Dynamic Resource Allocation in gpusched serve (see dra-int.h): the resource.k8s.io
 * informers' store, the DynamicResources world rebuilt from it, and kube-scheduler v1.37.2's
 * PreBind (with its wait for binding conditions), Unreserve and PostFilter of the plugin as API
 * writes on writer threads of their own (they read answers, which the binder does not keep). */
#include "serve/dra-int.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/keymap.h"
#include "base/quote.h"
#include "kube/client.h"
#include "kube/decode.h"
#include "kube/rules.h"
#include "sched/dra_cel.h"
#include "sched/dynamicresources.h"
#include "serve/drashare.h"
#include "serve/events.h"
#include "serve/log-int.h"
#include "serve/metrics-int.h"
#include "serve/objects-int.h"
#include "serve/state-int.h"
#include "serve/writes-int.h"

#define FINALIZER "resource.kubernetes.io/delete-protection"
#define EXT_ANNOTATION "resource.kubernetes.io/extended-resource-claim"
#define CLAIMS_PATH "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s"
#define CONFLICT_RETRIES 5 /* retry.DefaultRetry's steps */
#define WRITERS 4          /* claim writer threads (kube-scheduler: a goroutine per binding) */

/* a claim as this scheduler last wrote it, or allocated it in a cycle whose PreBind has not
 * written it yet (in flight): it stands for the informer's copy until the informer shows a
 * version as new (kube-scheduler's assume cache and in-flight allocations). gone: a claim
 * this scheduler deleted (in flight: its deletion not answered yet), out of the world until
 * the informer shows the deletion or another claim (uid) under the name, obj the claim as
 * it was: kube-scheduler's PostFilter and Unreserve delete before the pod's next attempt,
 * which must not find the claim again (a late informer event must not bring it back) */
struct overlay {
    json_t *obj;
    long long rv;
    bool inflight;
    bool gone;
    char key[];
};

/* The report of an attempt whose PostFilter deallocated a claim (or deleted the pod's
 * extended-resource claim left from an earlier attempt), written once the writes are
 * answered (kube-scheduler's PostFilter writes before its failure handler reports). */
struct dealloc_report {
    char *message;          /* the attempt's message, PostFilter's reasons included */
    size_t fit_len;         /* the FitError's part of it (before PostFilter's reasons) */
    char *rv;               /* the pod's resourceVersion when it was tried */
    const char *controller; /* the profile's schedulerName (lives as long as the process) */
    bool clear_nomination;  /* DefaultPreemption's dry run found no candidate */
    unsigned pops;          /* the pod's serve_queue_item.pops in that attempt */
};

/* one claim of a PreBind */
struct step {
    char *ns, *name;
    json_t *claim; /* the claim as the cycle saw it (create: the object to create) */
    json_t *alloc; /* the allocation to write, NULL: only the reservation */
    char *uid;     /* the claim's uid once reserved (for Unreserve), NULL before */
    /* the claim of the pod's extended resources: created first (name is the world's until
     * then, the API server's after), the pod's status written after its reservation */
    bool create;
    bool created;     /* it exists in the API: Unreserve deletes it */
    json_t *mappings; /* status.extendedResourceClaimStatus.requestMappings */
};

enum job_kind { JOB_PREBIND, JOB_UNRESERVE, JOB_DEALLOCATE, JOB_DELETE_LEFTOVER };

struct job {
    enum job_kind kind;
    char *key, *pod_name, *pod_uid;
    struct serve_task *bind; /* PREBIND: submitted once the claims are written */
    struct step *steps;
    size_t nsteps;
    /* PREBIND: every claim of the pod ("ns/name"), whose binding conditions it waits for */
    char **claims;
    size_t nclaims;
    int64_t poll_ms, deadline_ms;  /* waiting: the next poll, the end (mono_ms) */
    double wait_start;             /* waiting: since when (mono_now) */
    struct dealloc_report *report; /* DEALLOCATE, DELETE_LEFTOVER: the attempt's report */
    int64_t timeout_ms;            /* the pod's profile's binding timeout */
    /* PREBIND: the error kube-scheduler's PreBind stopped with after these steps (the cycle
     * found it: serve_dra_reserve's fail, its "running PreBind plugin" prefix cut); NULL:
     * none */
    char *fail;
    struct job *next;
};

struct serve_dra {
    struct kube_informer *inf[SERVE_DRA_KINDS];
    unsigned synced;                     /* a bit per kind */
    struct keymap objs[SERVE_DRA_KINDS]; /* key -> json_t * (deep copies) */
    struct keymap nodes;                 /* name -> json_t * */
    struct keymap over;                  /* claim key -> struct overlay */
    struct keymap reserved;              /* pod key -> struct job (its claims reserved) */
    bool dirty;
    struct sched_dra *w;
    struct sched_dra_cel cel;
    bool cel_ready;
    struct arena a; /* the decoded objects the world borrows */
    /* the writer threads: jobs in order, those of a claim one at a time (busy: the claims of
     * the jobs running) */
    pthread_t threads[WRITERS];
    int nthreads;
    struct keymap busy;
    bool stop;
    pthread_mutex_t jmu;
    pthread_cond_t jcv;
    struct job *head, *tail;
    struct job *waiting; /* PreBinds waiting for binding conditions (jmu) */
    int64_t binding_due; /* when a pending claim's binding times out (wall ms; 0: none) */
};

static const struct {
    const char *resource, *path, *what;
} kinds[SERVE_DRA_KINDS] = {
    [SERVE_DRA_CLASS] = {"deviceclasses", "/apis/resource.k8s.io/v1/deviceclasses", "DeviceClass"},
    [SERVE_DRA_SLICE] = {"resourceslices", "/apis/resource.k8s.io/v1/resourceslices",
                         "ResourceSlice"},
    [SERVE_DRA_CLAIM] = {"resourceclaims", "/apis/resource.k8s.io/v1/resourceclaims",
                         "ResourceClaim"},
    [SERVE_DRA_TEMPLATE] = {"resourceclaimtemplates",
                            "/apis/resource.k8s.io/v1/resourceclaimtemplates",
                            "ResourceClaimTemplate"},
    [SERVE_DRA_TAINT_RULE] = {"devicetaintrules", "/apis/resource.k8s.io/v1/devicetaintrules",
                              "DeviceTaintRule"},
};

/* the profile's binding timeout (DynamicResourcesArgs.bindingTimeout) */
static int64_t binding_timeout_ms(const struct sched_profile *p)
{
    return p && p->dra_binding_timeout_ms > 0 ? p->dra_binding_timeout_ms
                                              : SCHED_DRA_BINDING_TIMEOUT_MS;
}

/* the wall clock in ms (allocation timestamps are wall time) */
static int64_t wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
#define BINDING_POLL_MS 5000 /* PreBind's poll interval */

static long long rv_of(json_t *obj)
{
    const char *rv = serve_jstr(obj, "metadata", "resourceVersion");

    return rv ? atoll(rv) : 0;
}

static void overlay_free(struct overlay *o)
{
    if (o) {
        json_decref(o->obj);
        free(o);
    }
}

/* an object of a store, under its key */
struct entry {
    json_t *obj;
    char key[];
};

static json_t *get_json(const struct keymap *m, const char *key)
{
    struct entry *e = keymap_get(m, key);

    return e ? e->obj : NULL;
}

static void del_json(struct keymap *m, const char *key)
{
    struct entry *e = keymap_del(m, key);

    if (e) {
        json_decref(e->obj);
        free(e);
    }
}

/* put_json stores obj (a reference taken over; NULL: out of memory, the key is dropped) */
static void put_json(struct keymap *m, const char *key, json_t *obj)
{
    struct entry *e = obj ? malloc(sizeof(*e) + strlen(key) + 1) : NULL;
    void *old = NULL;

    if (!e) {
        json_decref(obj);
        del_json(m, key);
        return;
    }
    e->obj = obj;
    memcpy(e->key, key, strlen(key) + 1);
    if (keymap_put(m, e->key, e, &old)) {
        json_decref(obj);
        free(e);
        del_json(m, key);
        return;
    }
    if (old) {
        json_decref(((struct entry *)old)->obj);
        free(old);
    }
}

/* ---- the informers ---- */

/* the informers' lines, as watch.c words the others' */
static void on_log(void *ud, int level, const char *resource, const char *msg)
{
    (void)ud;
    serve_log(level == 0 ? 'W' : 'I', level, "%s resource=%s", log_quote_msg(msg),
              log_quote(resource));
}

static void on_obj(struct serve *s, enum serve_dra_kind k, enum kube_informer_op op,
                   const char *key, json_t *obj)
{
    struct serve_dra *d = s->dra;
    /* (copied before the lock: the loop waits for it) */
    json_t *copy =
        op == KUBE_INFORMER_ADD || op == KUBE_INFORMER_UPDATE ? json_deep_copy(obj) : NULL;

    serve_lock(s);
    switch (op) {
    case KUBE_INFORMER_SYNCED:
        if (!(d->synced & 1u << k))
            serve_log('I', 0, "\"%s cache synced\"", kinds[k].what);
        d->synced |= 1u << k;
        s->dra_synced = d->synced == (1u << SERVE_DRA_KINDS) - 1;
        break;
    case KUBE_INFORMER_DELETE:
        del_json(&d->objs[k], key);
        if (k == SERVE_DRA_CLAIM)
            overlay_free(keymap_del(&d->over, key));
        break;
    case KUBE_INFORMER_ADD:
    case KUBE_INFORMER_UPDATE:
        if (k == SERVE_DRA_CLAIM) {
            struct overlay *o = keymap_get(&d->over, key);
            const char *uid = serve_jstr(obj, "metadata", "uid");

            /* the informer caught up with what this scheduler wrote; a claim it deleted stays
             * gone until the informer's deletion, unless another claim took the name */
            if (o && o->gone) {
                const char *was = serve_jstr(o->obj, "metadata", "uid");

                if (!uid || !was || strcmp(uid, was))
                    overlay_free(keymap_del(&d->over, key));
            } else if (o && !o->inflight && rv_of(obj) >= o->rv) {
                overlay_free(keymap_del(&d->over, key));
            }
        }
        put_json(&d->objs[k], key, copy); /* (NULL: out of memory, the key is dropped) */
        break;
    }
    if (op != KUBE_INFORMER_SYNCED && k != SERVE_DRA_TEMPLATE) {
        /* kube-scheduler's DynamicResources registers these events: the pods it rejected
         * (or held in PreEnqueue) are tried again */
        d->dirty = true;
        serve_queue_move_all(s->queue, mono_ms());
    }
    pthread_cond_broadcast(&s->cv);
    serve_unlock(s);
}

static void on_class(void *ud, enum kube_informer_op op, const char *key, json_t *obj)
{
    on_obj(ud, SERVE_DRA_CLASS, op, key, obj);
}

static void on_slice(void *ud, enum kube_informer_op op, const char *key, json_t *obj)
{
    on_obj(ud, SERVE_DRA_SLICE, op, key, obj);
}

static void on_claim(void *ud, enum kube_informer_op op, const char *key, json_t *obj)
{
    on_obj(ud, SERVE_DRA_CLAIM, op, key, obj);
}

static void on_template(void *ud, enum kube_informer_op op, const char *key, json_t *obj)
{
    on_obj(ud, SERVE_DRA_TEMPLATE, op, key, obj);
}

static void on_rule(void *ud, enum kube_informer_op op, const char *key, json_t *obj)
{
    on_obj(ud, SERVE_DRA_TAINT_RULE, op, key, obj);
}

void serve_dra_node(struct serve *s, const char *name, json_t *obj, bool changed)
{
    struct serve_dra *d = s->dra;

    if (!d)
        return;
    if (!obj) {
        del_json(&d->nodes, name);
        d->dirty = true;
        return;
    }
    if (!changed && keymap_get(&d->nodes, name))
        return;
    /* what the world reads of a node: its name, labels and allocatable (not the whole object:
     * images and managedFields are most of a node's JSON), copied (a watch event's object
     * lives in the informer thread's arena) */
    put_json(
        &d->nodes, name,
        json_pack("{s:{s:s,s:o*},s:{s:o*}}", "metadata", "name", name, "labels",
                  json_deep_copy(json_object_get(json_object_get(obj, "metadata"), "labels")),
                  "status", "allocatable",
                  json_deep_copy(json_object_get(json_object_get(obj, "status"), "allocatable"))));
    d->dirty = true;
}

/* ---- the world ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* the keys of m, sorted (the world sees the objects in a stable order); NULL when empty or
 * out of memory */
static const char **sorted_keys(const struct keymap *m, size_t *n)
{
    const char **k = m->len ? malloc(m->len * sizeof(*k)) : NULL;
    size_t i;

    *n = 0;
    if (!k)
        return NULL;
    for (i = 0; i < m->cap; i++)
        if (m->slots[i].key)
            k[(*n)++] = m->slots[i].key;
    qsort(k, *n, sizeof(*k), cmp_str);
    return k;
}

/* the claim as the scheduler sees it: its own write or in-flight allocation, else the
 * informer's */
static json_t *claim_json(struct serve_dra *d, const char *key)
{
    struct overlay *o = keymap_get(&d->over, key);

    if (o)
        return o->gone ? NULL : o->obj;
    return get_json(&d->objs[SERVE_DRA_CLAIM], key);
}

/* the claim under key deleted by this scheduler (in flight: the deletion not answered yet):
 * out of the world until the informer shows it gone (mu held). Nothing when the informer
 * has shown that already (neither its copy nor this scheduler's is left). */
static void bury(struct serve_dra *d, const char *key, bool inflight)
{
    struct overlay *o = keymap_get(&d->over, key);
    json_t *claim;
    void *old = NULL;

    d->dirty = true;
    if (o && o->gone) { /* (deleted: the deletion is answered now) */
        o->inflight = o->inflight && inflight;
        return;
    }
    if (!(claim = json_incref(claim_json(d, key)))) {
        overlay_free(keymap_del(&d->over, key));
        return;
    }
    if (!(o = malloc(sizeof(*o) + strlen(key) + 1))) {
        /* (out of memory: at least what this scheduler wrote goes) */
        overlay_free(keymap_del(&d->over, key));
        json_decref(claim);
        return;
    }
    memcpy(o->key, key, strlen(key) + 1);
    o->obj = claim;
    o->rv = rv_of(claim);
    o->inflight = inflight;
    o->gone = true;
    if (keymap_put(&d->over, o->key, o, &old)) {
        overlay_free(o);
        overlay_free(keymap_del(&d->over, key));
        return;
    }
    overlay_free(old);
}

/* a claim is buried under key (the informer still shows it) */
static struct overlay *buried(struct serve_dra *d, const char *key)
{
    struct overlay *o = keymap_get(&d->over, key);

    return o && o->gone ? o : NULL;
}

/* the claims' keys, sorted: the informer's and those only this scheduler knows yet (a claim
 * it created, or allocated in a cycle before creating it); NULL when none or out of memory */
static const char **claim_keys(struct serve_dra *d, size_t *n)
{
    const struct keymap *m = &d->objs[SERVE_DRA_CLAIM];
    const char **k = m->len + d->over.len ? malloc((m->len + d->over.len) * sizeof(*k)) : NULL;
    size_t i;

    *n = 0;
    if (!k)
        return NULL;
    for (i = 0; i < m->cap; i++)
        if (m->slots[i].key && !buried(d, m->slots[i].key))
            k[(*n)++] = m->slots[i].key;
    for (i = 0; i < d->over.cap; i++)
        if (d->over.slots[i].key && !keymap_get(m, d->over.slots[i].key) &&
            !((struct overlay *)d->over.slots[i].value)->gone)
            k[(*n)++] = d->over.slots[i].key;
    qsort(k, *n, sizeof(*k), cmp_str);
    return k;
}

static void world_drop(struct serve *s)
{
    struct serve_dra *d = s->dra;

    sched_cluster_set_dra(s->cluster, NULL);
    sched_dra_free(d->w);
    d->w = NULL;
    arena_release(&d->a);
}

static int minor_of(const struct serve *s)
{
    const struct sched_kube_version *v =
        s->o.kube_version ? s->o.kube_version : sched_kube_version_find(NULL);
    const char *dot = v ? strchr(v->name, '.') : NULL;

    return dot ? atoi(dot + 1) : 37;
}

static void decode_error(const char *what, const char *key, struct err *err)
{
    char msg[1200];

    serve_log('W', 0, "\"Cannot decode %s; ignoring it\" object=%s err=%s", what, log_quote(key),
              log_quote(err_format(err, msg, sizeof(msg))));
}

/* when the binding of a claim pending now times out under some profile's bindingTimeout
 * (wall ms, 0: none): Filter finds it unavailable from then on, so the world is rebuilt */
static int64_t binding_due(const struct serve *s, const struct sched_dra *w)
{
    int64_t due = 0, t;
    size_t i, n = s->cfg.nprofiles ? s->cfg.nprofiles : 1;

    for (i = 0; i < n; i++) {
        t = sched_dra_binding_due(
            w, binding_timeout_ms(s->cfg.nprofiles ? &s->cfg.profiles[i] : s->profile));
        if (t && (!due || t < due))
            due = t;
    }
    return due;
}

static int world_build(struct serve *s)
{
    struct serve_dra *d = s->dra;
    struct dra_features f = dra_features_for(minor_of(s));
    struct err err;
    enum serve_dra_kind k;
    int rc = 0;

    world_drop(s);
    err_clear(&err);
    d->binding_due = 0;
    if (!(d->w = sched_dra_new(&d->cel, &f)))
        return -ENOMEM;
    {
        size_t n, i;
        const char **keys = sorted_keys(&d->nodes, &n);

        for (i = 0; i < n && !rc; i++) {
            struct kube_node *node = arena_alloc(&d->a, sizeof(*node));

            if (!node) {
                rc = -ENOMEM;
            } else if (kube_node_decode(get_json(&d->nodes, keys[i]), &d->a, NULL, node, &err)) {
                decode_error("node", keys[i], &err);
            } else {
                rc = sched_dra_add_node(d->w, node);
            }
        }
        free(keys);
    }
    for (k = 0; k < SERVE_DRA_KINDS && !rc; k++) {
        size_t n, i;
        const char **keys;

        if (k == SERVE_DRA_TEMPLATE)
            continue; /* the resource-claim controller makes their claims, not the scheduler */
        keys = k == SERVE_DRA_CLAIM ? claim_keys(d, &n) : sorted_keys(&d->objs[k], &n);
        for (i = 0; i < n && !rc; i++) {
            json_t *obj =
                k == SERVE_DRA_CLAIM ? claim_json(d, keys[i]) : get_json(&d->objs[k], keys[i]);
            void *o;

            err_clear(&err);
            switch (k) {
            case SERVE_DRA_CLASS:
                if (!(o = arena_alloc(&d->a, sizeof(struct kube_device_class))))
                    rc = -ENOMEM;
                else if (kube_device_class_decode(obj, &d->a, NULL, o, &err))
                    decode_error(kinds[k].what, keys[i], &err);
                else
                    rc = sched_dra_add_class(d->w, o);
                break;
            case SERVE_DRA_SLICE:
                if (!(o = arena_alloc(&d->a, sizeof(struct kube_resource_slice))))
                    rc = -ENOMEM;
                else if (kube_resource_slice_decode(obj, &d->a, NULL, o, &err))
                    decode_error(kinds[k].what, keys[i], &err);
                else
                    rc = sched_dra_add_slice(d->w, o);
                break;
            case SERVE_DRA_CLAIM:
                if (!(o = arena_alloc(&d->a, sizeof(struct kube_resource_claim))))
                    rc = -ENOMEM;
                else if (kube_resource_claim_decode(obj, &d->a, NULL, o, &err))
                    decode_error(kinds[k].what, keys[i], &err);
                else
                    rc = sched_dra_add_claim(d->w, o);
                break;
            case SERVE_DRA_TAINT_RULE:
                if (!(o = arena_alloc(&d->a, sizeof(struct kube_device_taint_rule))))
                    rc = -ENOMEM;
                else if (kube_device_taint_rule_decode(obj, &d->a, NULL, o, &err))
                    decode_error(kinds[k].what, keys[i], &err);
                else
                    rc = sched_dra_add_taint_rule(d->w, o);
                break;
            default:
                break;
            }
        }
        free(keys);
    }
    err_clear(&err);
    if (!rc && (rc = sched_dra_commit(d->w, &err)))
        serve_log('E', 0, "\"Cannot build the DynamicResources state\" err=%s", log_quote(err.msg));
    if (rc) {
        world_drop(s);
        return rc;
    }
    sched_cluster_set_dra(s->cluster, d->w);
    sched_cluster_set_dra_commit(s->cluster, true);
    d->binding_due = binding_due(s, d->w);
    d->dirty = false;
    return 0;
}

void serve_dra_prepare(struct serve *s)
{
    /* (a claim's binding timed out since: Filter finds it unavailable from now on) */
    if (s->dra && s->dra->binding_due && wall_ms() > s->dra->binding_due)
        s->dra->dirty = true;
    if (s->dra && (s->dra->dirty || !s->dra->w) && world_build(s))
        serve_log('E', 0, "\"Out of memory building the DynamicResources state\"");
}

void serve_dra_invalidate(struct serve *s)
{
    if (s->dra)
        s->dra->dirty = true;
}

bool serve_dra_touches(struct serve *s, const struct kube_pod *pod)
{
    struct arena a = ARENA_INIT;
    struct kube_resources req;
    bool yes = false;
    size_t i;

    if (pod->nresource_claims)
        return true;
    /* (no DeviceClass: no extended resource is mapped, explicitly or as deviceclass...) */
    if (!s->dra || !s->dra->w || !s->dra->objs[SERVE_DRA_CLASS].len ||
        kube_pod_requests(pod, NULL, &a, &req))
        goto out;
    for (i = 0; i < req.nscalars && !yes; i++)
        yes = req.scalars[i].value && sched_dra_delegates(s->dra->w, req.scalars[i].name);
out:
    arena_release(&a);
    return yes;
}

/* ---- Reserve: what PreBind will write ---- */

/* the request of claim spec named name ("req" or "req/sub"): the request and the subrequest
 * objects (sub NULL for an exactly request) */
static json_t *find_request(json_t *claim, const char *name, json_t **sub)
{
    json_t *reqs =
        json_object_get(json_object_get(json_object_get(claim, "spec"), "devices"), "requests");
    const char *slash = strchr(name, '/');
    size_t plen = slash ? (size_t)(slash - name) : strlen(name), i, j;
    json_t *r, *x;

    *sub = NULL;
    json_array_foreach(reqs, i, r)
    {
        const char *rn = json_string_value(json_object_get(r, "name"));

        if (!rn || strlen(rn) != plen || strncmp(rn, name, plen))
            continue;
        if (!slash)
            return r;
        json_array_foreach(json_object_get(r, "firstAvailable"), j, x)
        {
            const char *sn = json_string_value(json_object_get(x, "name"));

            if (sn && !strcmp(sn, slash + 1)) {
                *sub = x;
                return r;
            }
        }
        return r;
    }
    return NULL;
}

/* the slice of the world's store publishing driver/pool/device (the newest generation) */
static json_t *find_slice(struct serve_dra *d, const char *driver, const char *pool,
                          const char *device, json_t **dev)
{
    json_t *best = NULL;
    long long gen = -1;
    size_t i, j;

    *dev = NULL;
    for (i = 0; i < d->objs[SERVE_DRA_SLICE].cap; i++) {
        json_t *sl, *spec, *x;

        if (!d->objs[SERVE_DRA_SLICE].slots[i].key)
            continue;
        sl = ((struct entry *)d->objs[SERVE_DRA_SLICE].slots[i].value)->obj;
        spec = json_object_get(sl, "spec");
        if (strcmp(serve_jstr(spec, "driver", NULL) ? serve_jstr(spec, "driver", NULL) : "",
                   driver) ||
            strcmp(serve_jstr(json_object_get(spec, "pool"), "name", NULL)
                       ? serve_jstr(json_object_get(spec, "pool"), "name", NULL)
                       : "",
                   pool))
            continue;
        json_array_foreach(json_object_get(spec, "devices"), j, x)
        {
            const char *n = json_string_value(json_object_get(x, "name"));
            long long g =
                json_integer_value(json_object_get(json_object_get(spec, "pool"), "generation"));

            if (n && !strcmp(n, device) && g > gen) {
                best = sl;
                *dev = x;
                gen = g;
            }
        }
    }
    return best;
}

static bool same_req(json_t *a, json_t *b)
{
    return json_equal(a, b);
}

/* createNodeSelector: the allocation's node selector from its devices' slices; NULL when it
 * is available everywhere */
static json_t *node_selector(struct serve_dra *d, const struct sched_dra_device_out *dv, size_t n,
                             const char *node)
{
    json_t *fields = json_array(), *exprs = json_array(), *out = NULL;
    size_t i, j, k;

    for (i = 0; i < n && fields && exprs; i++) {
        json_t *dev, *sl = find_slice(d, dv[i].driver, dv[i].pool, dv[i].device, &dev);
        json_t *spec = json_object_get(sl, "spec"), *ns, *term;
        bool per_dev = json_is_true(json_object_get(spec, "perDeviceNodeSelection"));
        json_t *src = per_dev ? dev : spec;

        if (!sl)
            continue;
        if (json_object_get(src, "nodeName") || json_is_true(json_object_get(dev, "bindsToNode"))) {
            json_decref(fields);
            json_decref(exprs);
            return json_pack("{s:[{s:[{s:s,s:s,s:[s]}]}]}", "nodeSelectorTerms", "matchFields",
                             "key", "metadata.name", "operator", "In", "values", node);
        }
        ns = json_object_get(src, "nodeSelector");
        if (json_array_size(json_object_get(ns, "nodeSelectorTerms")) != 1)
            continue;
        term = json_array_get(json_object_get(ns, "nodeSelectorTerms"), 0);
        for (k = 0; k < 2; k++) {
            json_t *to = k ? exprs : fields, *r, *have;
            size_t m;

            json_array_foreach(json_object_get(term, k ? "matchExpressions" : "matchFields"), j, r)
            {
                bool dup = false;

                json_array_foreach(to, m, have) dup = dup || same_req(have, r);
                if (!dup)
                    json_array_append(to, r);
            }
        }
    }
    if (fields && exprs && (json_array_size(fields) || json_array_size(exprs))) {
        json_t *term = json_object();

        if (term) {
            if (json_array_size(fields))
                json_object_set(term, "matchFields", fields);
            if (json_array_size(exprs))
                json_object_set(term, "matchExpressions", exprs);
            out = json_pack("{s:[o]}", "nodeSelectorTerms", term);
        }
    }
    json_decref(fields);
    json_decref(exprs);
    return out;
}

static bool str_in(json_t *arr, const char *s)
{
    size_t i;
    json_t *x;

    json_array_foreach(arr, i,
                       x) if (json_string_value(x) && !strcmp(json_string_value(x), s)) return true;
    return false;
}

/* the allocation's configs, as the allocator lists them: each class's configs once (with the
 * requests of that class), then the claim's configs for allocated requests; a config that
 * names every request names none */
static json_t *configs(struct serve_dra *d, json_t *claim, const char **chosen, size_t nreq)
{
    json_t *out = json_array(), *reqs, *r, *cfg;
    json_t *spec_devices = json_object_get(json_object_get(claim, "spec"), "devices");
    size_t i, j, k;
    struct {
        const char *cls;
        size_t start, end;
    } seen[64];
    size_t nseen = 0;

    if (!out)
        return NULL;
    reqs = json_object_get(spec_devices, "requests");
    json_array_foreach(reqs, i, r)
    {
        const char *name = i < nreq ? chosen[i] : NULL, *cls;
        json_t *sub, *x = name ? find_request(claim, name, &sub) : NULL, *c;

        if (!x)
            continue;
        cls = serve_jstr(sub ? sub : json_object_get(x, "exactly"), "deviceClassName", NULL);
        if (!cls)
            continue;
        for (k = 0; k < nseen && strcmp(seen[k].cls, cls); k++)
            ;
        if (k < nseen) {
            for (j = seen[k].start; j < seen[k].end; j++)
                json_array_append_new(json_object_get(json_array_get(out, j), "requests"),
                                      json_string(name));
            continue;
        }
        c = get_json(&d->objs[SERVE_DRA_CLASS], cls);
        if (nseen < 64) {
            seen[nseen].cls = cls;
            seen[nseen].start = json_array_size(out);
        }
        json_array_foreach(json_object_get(json_object_get(c, "spec"), "config"), j, cfg)
        {
            json_t *e = json_deep_copy(cfg);

            json_object_set_new(e, "source", json_string("FromClass"));
            json_object_set_new(e, "requests", json_pack("[s]", name));
            json_array_append_new(out, e);
        }
        if (nseen < 64)
            seen[nseen++].end = json_array_size(out);
    }
    json_array_foreach(json_object_get(spec_devices, "config"), i, cfg)
    {
        json_t *creqs = json_object_get(cfg, "requests");
        bool take = json_array_size(creqs) == 0;

        json_array_foreach(reqs, j, r)
        {
            if (take)
                break;
            if (str_in(creqs, json_string_value(json_object_get(r, "name"))) ||
                (j < nreq && chosen[j] && strchr(chosen[j], '/') && str_in(creqs, chosen[j])))
                take = true;
        }
        if (take) {
            json_t *e = json_deep_copy(cfg);

            json_object_set_new(e, "source", json_string("FromClaim"));
            json_array_append_new(out, e);
        }
    }
    /* empty means all */
    json_array_foreach(out, i, cfg)
    {
        json_t *creqs = json_object_get(cfg, "requests");
        bool all = json_array_size(creqs) > 0;

        json_array_foreach(reqs, j, r)
        {
            if (!all)
                break;
            if (!str_in(creqs, json_string_value(json_object_get(r, "name"))) &&
                !(j < nreq && chosen[j] && strchr(chosen[j], '/') && str_in(creqs, chosen[j])))
                all = false;
        }
        if (all || !json_array_size(creqs))
            json_object_del(cfg, "requests");
    }
    return out;
}

/* a share of a device with allowMultipleAllocations (DRAConsumableCapacity): the result gets
 * a new shareID and the capacity consumed, as the allocator gives them. 0 or -ENOMEM/-errno */
static int share_fields(json_t *res, json_t *dev, json_t *request,
                        const struct sched_dra_device_out *dv)
{
    char id[37];
    json_t *cc;
    int rc;

    if ((rc = serve_dra_share_id(id)))
        return rc;
    if (json_object_set_new(res, "shareID", json_string(id)))
        return -ENOMEM;
    if (!dv->nconsumed)
        return 0;
    if (!(cc = serve_dra_consumed_capacity(dev, request, dv->consumed, dv->nconsumed)))
        return -ENOMEM;
    return json_object_set_new(res, "consumedCapacity", cc) ? -ENOMEM : 0;
}

/* the AllocationResult the allocator made for claim from the world's devices (NULL: out of
 * memory) */
static json_t *allocation(struct serve_dra *d, json_t *claim, const struct sched_dra_device_out *dv,
                          size_t n, const char *node)
{
    json_t *results = json_array(), *alloc, *ns,
           *reqs = json_object_get(json_object_get(json_object_get(claim, "spec"), "devices"),
                                   "requests");
    const char *chosen[64] = {NULL};
    size_t i, j;
    json_t *r;

    if (!results)
        return NULL;
    for (i = 0; i < n; i++) {
        json_t *sub, *req = find_request(claim, dv[i].request, &sub);
        json_t *src = sub ? sub : json_object_get(req, "exactly");
        json_t *res = json_pack("{s:s,s:s,s:s,s:s}", "request", dv[i].request, "driver",
                                dv[i].driver, "pool", dv[i].pool, "device", dv[i].device);

        if (!res)
            continue;
        if (!sub && json_is_true(json_object_get(src, "adminAccess")))
            json_object_set_new(res, "adminAccess", json_true());
        if (json_array_size(json_object_get(src, "tolerations")))
            json_object_set(res, "tolerations", json_object_get(src, "tolerations"));
        {
            /* the device's binding conditions (DRADeviceBindingConditions is on) */
            json_t *dev;
            static const char *const bc[] = {"bindingConditions", "bindingFailureConditions"};
            size_t k;

            find_slice(d, dv[i].driver, dv[i].pool, dv[i].device, &dev);
            for (k = 0; k < 2; k++)
                if (json_array_size(json_object_get(dev, bc[k])))
                    json_object_set(res, bc[k], json_object_get(dev, bc[k]));
            if (dv[i].shared && share_fields(res, dev, src, &dv[i])) {
                json_decref(res);
                json_decref(results);
                return NULL;
            }
        }
        json_array_append_new(results, res);
        json_array_foreach(reqs, j, r)
        {
            const char *rn = json_string_value(json_object_get(r, "name"));
            size_t l = rn ? strlen(rn) : 0;

            if (j < 64 && rn && !strncmp(dv[i].request, rn, l) &&
                (!dv[i].request[l] || dv[i].request[l] == '/'))
                chosen[j] = dv[i].request;
        }
    }
    alloc = json_pack(
        "{s:{s:o,s:o}}", "devices", "results", results, "config",
        configs(d, claim, chosen, json_array_size(reqs) < 64 ? json_array_size(reqs) : 64));
    if (alloc && !json_array_size(json_object_get(json_object_get(alloc, "devices"), "config")))
        json_object_del(json_object_get(alloc, "devices"), "config");
    if (alloc && (ns = node_selector(d, dv, n, node)))
        json_object_set_new(alloc, "nodeSelector", ns);
    return alloc;
}

static bool reserved_for_pod(json_t *claim, const char *uid)
{
    size_t i;
    json_t *r;

    json_array_foreach(json_object_get(json_object_get(claim, "status"), "reservedFor"), i, r)
    {
        const char *u = json_string_value(json_object_get(r, "uid"));

        if (u && !strcmp(u, uid))
            return true;
    }
    return false;
}

static void job_free(struct job *j)
{
    size_t i;

    if (!j)
        return;
    for (i = 0; i < j->nsteps; i++) {
        free(j->steps[i].ns);
        free(j->steps[i].name);
        free(j->steps[i].uid);
        json_decref(j->steps[i].claim);
        json_decref(j->steps[i].alloc);
        json_decref(j->steps[i].mappings);
    }
    free(j->steps);
    for (i = 0; i < j->nclaims; i++)
        free(j->claims[i]);
    free(j->claims);
    free(j->key);
    free(j->fail);
    free(j->pod_name);
    free(j->pod_uid);
    serve_task_free(j->bind);
    if (j->report) {
        free(j->report->message);
        free(j->report->rv);
        free(j->report);
    }
    free(j);
}

static void job_push(struct serve_dra *d, struct job *j)
{
    pthread_mutex_lock(&d->jmu);
    j->next = NULL;
    if (d->tail)
        d->tail->next = j;
    else
        d->head = j;
    d->tail = j;
    pthread_cond_broadcast(&d->jcv);
    pthread_mutex_unlock(&d->jmu);
}

static bool binding_conditions(struct serve_dra *d, const struct job *j);

/* the name of pod claim i: the claim it names, or the one its status names for a template */
static const char *pod_claim_name(const struct kube_pod *pod, size_t i)
{
    const struct kube_pod_resource_claim *pc = &kube_pod_ext(pod)->resource_claims[i];

    if (pc->resource_claim_name)
        return pc->resource_claim_name;
    return pc->status_claim_name && *pc->status_claim_name ? pc->status_claim_name : NULL;
}

/* put_inflight: claim (copied) with alloc and the finalizer stands for the claim under key
 * until PreBind has written it (SignalClaimPendingAllocation). -ENOMEM. */
static int put_inflight(struct serve_dra *d, const char *key, json_t *claim, json_t *alloc)
{
    struct overlay *o = malloc(sizeof(*o) + strlen(key) + 1);
    json_t *copy = json_deep_copy(claim), *status, *fin;
    void *old = NULL;

    if (!o || !copy) {
        free(o);
        json_decref(copy);
        return -ENOMEM;
    }
    memcpy(o->key, key, strlen(key) + 1);
    status = json_object_get(copy, "status");
    if (!json_is_object(status)) {
        status = json_object();
        json_object_set_new(copy, "status", status);
    }
    json_object_set(status, "allocation", alloc);
    fin = json_object_get(json_object_get(copy, "metadata"), "finalizers");
    if (!json_is_array(fin)) {
        fin = json_array();
        json_object_set_new(json_object_get(copy, "metadata"), "finalizers", fin);
    }
    if (!str_in(fin, FINALIZER))
        json_array_append_new(fin, json_string(FINALIZER));
    o->obj = copy;
    o->rv = rv_of(copy);
    o->inflight = true;
    o->gone = false;
    if (keymap_put(&d->over, o->key, o, &old)) {
        overlay_free(o);
        return -ENOMEM;
    }
    overlay_free(old);
    return 0;
}

/* the claim of the pod's extended resources as PreBind creates it (createExtendedResourceClaimInAPI:
 * generateName after the pod, owned by it, annotated; the requests the Filter made for the
 * node), named as the world names it until the API server gives it its name; NULL when out
 * of memory */
static json_t *ext_claim(const struct kube_pod *pod, const struct sched_dra_ext_out *x)
{
    json_t *reqs = json_array(), *claim;
    char *gen = buf_fmt("%s-extended-resources-", pod->name);
    size_t i;

    for (i = 0; reqs && i < x->nrequests; i++)
        json_array_append_new(
            reqs, json_pack("{s:s,s:{s:s,s:s,s:I}}", "name", x->requests[i].name, "exactly",
                            "deviceClassName", x->requests[i].device_class, "allocationMode",
                            "ExactCount", "count", (json_int_t)x->requests[i].count));
    claim = reqs && gen
                ? json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:[{s:s,s:s,s:s,s:s,s:b}],s:{s:s}},s:{}}",
                            "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata",
                            "name", x->claim_name, "generateName", gen, "namespace",
                            pod->namespace_, "ownerReferences", "apiVersion", "v1", "kind", "Pod",
                            "name", pod->name, "uid", pod->uid ? pod->uid : "", "controller", 1,
                            "annotations", EXT_ANNOTATION, "true", "spec")
                : NULL;
    free(gen);
    if (claim && x->nrequests)
        json_object_set_new(json_object_get(claim, "spec"), "devices",
                            json_pack("{s:O}", "requests", reqs));
    json_decref(reqs);
    return claim;
}

/* the pod's request mappings, as status.extendedResourceClaimStatus lists them */
static json_t *ext_mappings(const struct sched_dra_ext_out *x)
{
    json_t *out = json_array();
    size_t i;

    for (i = 0; out && i < x->nmappings; i++)
        if (json_array_append_new(out, json_pack("{s:s,s:s,s:s}", "containerName",
                                                 x->mappings[i].container, "resourceName",
                                                 x->mappings[i].resource, "requestName",
                                                 x->mappings[i].request))) {
            json_decref(out);
            return NULL;
        }
    return out;
}

int serve_dra_reserve(struct serve *s, const struct kube_pod *pod, const char *node,
                      struct serve_task *bind, const char *fail)
{
    static const char prefix[] = "running PreBind plugin \"DynamicResources\": ";
    struct serve_dra *d = s->dra;
    const struct sched_dra_device_out *dv = NULL;
    struct sched_dra_pod_in in;
    struct sched_dra_ext_out ext;
    struct job *j;
    size_t ndv = 0, i, k;
    char key[600];
    bool has_ext, stopped = false;

    if (!d || !d->w)
        return 0;
    /* (after a failed PreBind the world holds the claim it created as deleted) */
    has_ext = (fail ? sched_dra_pod_unreserved_extended : sched_dra_pod_extended)(
                  d->w, pod->namespace_, pod->name, pod->uid, &ext) == 1;
    if (!pod->nresource_claims && !has_ext)
        return 0; /* (extended resources a device plugin serves: nothing to write) */
    memset(&in, 0, sizeof(in));
    in.namespace_ = pod->namespace_;
    in.name = pod->name;
    in.uid = pod->uid;
    in.claims = kube_pod_ext(pod)->resource_claims;
    in.nclaims = pod->nresource_claims;
    in.pod = pod;
    if (sched_dra_pod_devices(d->w, &in, &dv, &ndv))
        ndv = 0;
    if (!(j = calloc(1, sizeof(*j))) ||
        !(j->steps = calloc(pod->nresource_claims + 1, sizeof(*j->steps))) ||
        !(j->claims = calloc(pod->nresource_claims + 1, sizeof(*j->claims))))
        goto nomem;
    j->kind = JOB_PREBIND;
    {
        const struct sched_profile *prof = sched_config_find(&s->cfg, pod->scheduler_name);

        j->timeout_ms = binding_timeout_ms(prof ? prof : s->profile);
    }
    snprintf(key, sizeof(key), "%s/%s", pod->namespace_, pod->name);
    if (!(j->key = strdup(key)) || !(j->pod_name = strdup(pod->name)) ||
        !(j->pod_uid = strdup(pod->uid ? pod->uid : "")))
        goto nomem;
    if (fail &&
        !(j->fail = strdup(strncmp(fail, prefix, strlen(prefix)) ? fail : fail + strlen(prefix))))
        goto nomem;
    /* PreBind takes the pod's claims in order, the claim of its extended resources last */
    for (i = 0; i < pod->nresource_claims + has_ext && !stopped; i++) {
        bool special = i == pod->nresource_claims;
        const char *name = special ? ext.claim_name : pod_claim_name(pod, i);
        struct step *st = &j->steps[j->nsteps];
        json_t *claim;
        size_t first = ndv, cnt = 0;

        if (!name)
            continue;
        for (k = 0; k < j->nsteps; k++)
            if (!strcmp(j->steps[k].name, name))
                break;
        if (k < j->nsteps) {
            /* named twice: PreBind wrote it for the earlier entry, and its write for this
             * one from the claim as the cycle read it failed (sched_dra_reserve's stop) */
            stopped = fail != NULL;
            continue;
        }
        snprintf(key, sizeof(key), "%s/%s", pod->namespace_, name);
        if (!(j->claims[j->nclaims] = strdup(key)))
            goto nomem;
        j->nclaims++;
        if (special) {
            if (!(claim = ext_claim(pod, &ext)) || !(st->mappings = ext_mappings(&ext))) {
                json_decref(claim);
                goto nomem;
            }
            st->create = true;
            st->claim = claim;
        } else {
            claim = claim_json(d, key);
            if (!claim || reserved_for_pod(claim, j->pod_uid))
                continue;
            if (!(st->claim = json_deep_copy(claim)))
                goto nomem;
        }
        if (!(st->ns = strdup(pod->namespace_)) || !(st->name = strdup(name))) {
            j->nsteps++; /* (freed with the job) */
            goto nomem;
        }
        j->nsteps++;
        if (!special && json_object_get(json_object_get(claim, "status"), "allocation"))
            continue;
        /* allocated in this cycle: its devices, as the world holds them now (listed once per
         * entry naming the claim: the first entry's) */
        for (k = 0; k < ndv; k++)
            if (!strcmp(dv[k].claim_namespace, pod->namespace_) &&
                !strcmp(dv[k].claim_name, name)) {
                if (first == ndv)
                    first = k;
                cnt++;
            }
        if (!special) {
            size_t entries = 0;

            for (k = 0; k < pod->nresource_claims; k++)
                entries += pod_claim_name(pod, k) && !strcmp(pod_claim_name(pod, k), name);
            if (entries > 1)
                cnt /= entries;
        }
        if (!(st->alloc = allocation(d, st->claim, dv + (first < ndv ? first : 0), cnt, node)))
            goto nomem;
        /* in flight: later cycles see it allocated (SignalClaimPendingAllocation); (the claim
         * a failed PreBind created is deleted in the world already) */
        if (!(special && fail) && put_inflight(d, key, st->claim, st->alloc))
            goto nomem;
    }
    if (!j->nsteps && (fail || !binding_conditions(d, j))) {
        job_free(j);
        return fail ? 0 : -1;
    }
    j->bind = bind;
    job_push(d, j);
    return 1;
nomem:
    serve_log('E', 0, "\"Out of memory preparing the claims' writes\" pod=%s", log_quote(key));
    job_free(j);
    return -1;
}

static struct dealloc_report *dealloc_report_new(struct serve *s, const struct kube_pod *pod,
                                                 const struct sched_result *res, const char *post,
                                                 const char *controller, const char *rv);

/* PostFilter's deletion of the pod's extended-resource claim left from an earlier attempt:
 * true when the world did that (the job is queued, with the attempt's report when *took) */
static bool postfilter_extended(struct serve *s, const struct kube_pod *pod,
                                const struct sched_result *res, const char *controller,
                                const char *rv, bool *took)
{
    struct serve_dra *d = s->dra;
    const char *name;
    struct job *j;
    char key[600];

    if (!d || !d->w ||
        !(name = sched_dra_pod_deleted_extended(d->w, pod->namespace_, pod->name, pod->uid)))
        return false;
    /* the claim left from an earlier attempt goes as Unreserve deletes the one PreBind made */
    snprintf(key, sizeof(key), "%s/%s", pod->namespace_, name);
    if (!(j = calloc(1, sizeof(*j))) || !(j->steps = calloc(1, sizeof(*j->steps))) ||
        !(j->key = buf_fmt("%s/%s", pod->namespace_, pod->name)) ||
        !(j->pod_name = strdup(pod->name)) || !(j->pod_uid = strdup(pod->uid ? pod->uid : "")) ||
        !(j->steps[0].ns = strdup(pod->namespace_)) || !(j->steps[0].name = strdup(name)) ||
        !(j->steps[0].claim = json_deep_copy(claim_json(d, key)))) {
        serve_log('E', 0, "\"Out of memory deleting a claim\" resourceclaim=%s", log_quote(key));
        if (j && j->steps)
            j->nsteps = 1;
        job_free(j);
        return true;
    }
    j->nsteps = 1;
    j->kind = JOB_DELETE_LEFTOVER;
    j->steps[0].create = j->steps[0].created = true;
    j->report = res->nominated_node || res->error
                    ? NULL
                    : dealloc_report_new(s, pod, res, " deletion of ResourceClaim completed",
                                         controller, rv);
    *took = j->report != NULL; /* (read before a writer may take and free the job) */
    job_push(d, j);
    return true;
}

/* ---- the writer thread: PreBind and Unreserve ---- */

static char *claim_path(const char *ns, const char *name, const char *sub)
{
    return buf_fmt(CLAIMS_PATH "%s", ns, name, sub ? sub : "");
}

static json_t *without_key(json_t *claim)
{
    return json_deep_copy(claim);
}

/* send obj with method to path; *out the answer's object (NULL when none) */
static int send_json(struct serve *s, const char *method, const char *path, const char *ctype,
                     json_t *obj, json_t **out, struct err *err)
{
    struct kube_response resp;
    char *body = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
    int rc;

    memset(&resp, 0, sizeof(resp));
    if (out)
        *out = NULL;
    if (obj && !body)
        return err_set(err, -ENOMEM, "out of memory");
    rc = kube_client_request(s->client, method, path, ctype, body, body ? strlen(body) : 0, &resp,
                             err);
    free(body);
    if (!rc && out && resp.json)
        *out = json_incref(resp.json);
    kube_response_release(&resp);
    return rc;
}

static void rfc3339_now(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* bindClaim: the finalizer (a normal update), then the allocation and the reservation (a
 * status update), again from a fresh GET after a conflict; *out the claim as written */
static int bind_claim(struct serve *s, struct job *j, struct step *st, json_t **out,
                      struct err *err)
{
    json_t *claim = without_key(st->claim), *updated = NULL, *status, *rf, *fin;
    char *path = claim_path(st->ns, st->name, NULL),
         *spath = claim_path(st->ns, st->name, "/status");
    int attempt, rc = -ENOMEM;

    *out = NULL;
    if (!claim || !path || !spath)
        goto out;
    for (attempt = 0; attempt < CONFLICT_RETRIES; attempt++) {
        if (attempt) {
            json_decref(claim);
            claim = NULL;
            mono_sleep_ms(10 << (attempt - 1));
            if ((rc = send_json(s, "GET", path, NULL, NULL, &claim, err)))
                break;
            if (!claim) {
                rc = err_set(err, -EPROTO, "get updated claim %s/%s: no object", st->ns, st->name);
                break;
            }
        }
        if (json_object_get(json_object_get(claim, "metadata"), "deletionTimestamp")) {
            rc = err_set(err, -EINVAL, "claim %s/%s got deleted in the meantime", st->ns, st->name);
            break;
        }
        status = json_object_get(claim, "status");
        if (!json_is_object(status)) {
            status = json_object();
            json_object_set_new(claim, "status", status);
        }
        if (st->alloc) {
            if (json_object_get(status, "allocation")) {
                rc = err_set(err, -EINVAL, "claim %s/%s got allocated elsewhere in the meantime",
                             st->ns, st->name);
                break;
            }
            fin = json_object_get(json_object_get(claim, "metadata"), "finalizers");
            if (!str_in(fin, FINALIZER)) {
                if (!json_is_array(fin)) {
                    fin = json_array();
                    json_object_set_new(json_object_get(claim, "metadata"), "finalizers", fin);
                }
                json_array_append_new(fin, json_string(FINALIZER));
                /* kube-scheduler's Update, as a merge patch with the same precondition (the
                 * resourceVersion): a PUT of the whole claim would send the opaque
                 * parameters re-encoded, which the API server may find changed */
                {
                    json_t *patch = json_pack(
                        "{s:{s:O,s:O}}", "metadata", "resourceVersion",
                        json_object_get(json_object_get(claim, "metadata"), "resourceVersion"),
                        "finalizers", fin);

                    rc = patch ? send_json(s, "PATCH", path, "application/merge-patch+json", patch,
                                           &updated, err)
                               : err_set(err, -ENOMEM, "out of memory");
                    json_decref(patch);
                }
                if (rc == -EBUSY)
                    continue;
                if (rc) {
                    err_prefix(err, "add finalizer to claim %s/%s", st->ns, st->name);
                    break;
                }
                json_decref(claim);
                claim = updated;
                updated = NULL;
                status = json_object_get(claim, "status");
                if (!json_is_object(status)) {
                    status = json_object();
                    json_object_set_new(claim, "status", status);
                }
            }
            json_object_set(status, "allocation", st->alloc);
        }
        rf = json_object_get(status, "reservedFor");
        if (!json_is_array(rf)) {
            rf = json_array();
            json_object_set_new(status, "reservedFor", rf);
        }
        json_array_append_new(rf, json_pack("{s:s,s:s,s:s}", "resource", "pods", "name",
                                            j->pod_name, "uid", j->pod_uid));
        {
            /* DRADeviceBindingConditions and DRAResourceClaimDeviceStatus are on in v1.37 */
            json_t *al = json_object_get(status, "allocation");

            if (!al) {
                rc = err_set(err, -EINVAL, "claim %s/%s got deallocated elsewhere in the meantime",
                             st->ns, st->name);
                break;
            }
            if (!json_object_get(al, "allocationTimestamp")) {
                char ts[40];

                rfc3339_now(ts, sizeof(ts));
                al = json_deep_copy(al);
                json_object_set_new(al, "allocationTimestamp", json_string(ts));
                json_object_set_new(status, "allocation", al);
            }
        }
        rc = send_json(s, "PUT", spath, "application/json", claim, &updated, err);
        if (rc == -EBUSY)
            continue;
        if (rc)
            err_prefix(err, "add %sreservation to claim %s/%s", st->alloc ? "allocation and " : "",
                       st->ns, st->name);
        break;
    }
    if (!rc && updated)
        *out = updated;
    else
        json_decref(updated);
out:
    json_decref(claim);
    free(path);
    free(spath);
    return rc;
}

/* deleteClaim: the claim of the pod's extended resources goes (Unreserve): its finalizer off
 * (an update, again from a fresh GET after a conflict), then the DELETE (a 404 is fine) */
static int delete_claim(struct serve *s, struct step *st, struct err *err)
{
    char *path = claim_path(st->ns, st->name, NULL);
    json_t *claim = json_incref(st->claim);
    int attempt, rc = -ENOMEM;

    if (!path)
        goto out;
    for (attempt = 0; attempt < CONFLICT_RETRIES; attempt++) {
        json_t *fin, *keep, *patch, *x;
        size_t i;

        if (attempt) {
            json_decref(claim);
            claim = NULL;
            mono_sleep_ms(10 << (attempt - 1));
            if ((rc = send_json(s, "GET", path, NULL, NULL, &claim, err))) {
                err_prefix(err, "get resourceclaim %s/%s", st->ns, st->name);
                goto out;
            }
        }
        fin = json_object_get(json_object_get(claim, "metadata"), "finalizers");
        keep = json_array();
        json_array_foreach(fin, i,
                           x) if (!json_string_value(x) || strcmp(json_string_value(x), FINALIZER))
            json_array_append(keep, x);
        /* (kube-scheduler's Update of the whole claim, as a merge patch with its
         * resourceVersion as the precondition) */
        patch =
            keep ? json_pack("{s:{s:O,s:o}}", "metadata", "resourceVersion",
                             json_object_get(json_object_get(claim, "metadata"), "resourceVersion"),
                             "finalizers", keep)
                 : NULL;
        rc = patch ? send_json(s, "PATCH", path, "application/merge-patch+json", patch, NULL, err)
                   : err_set(err, -ENOMEM, "out of memory");
        json_decref(patch);
        if (rc == -EBUSY)
            continue;
        if (rc)
            err_prefix(err, "update resourceclaim %s/%s", st->ns, st->name);
        break;
    }
    if (rc)
        goto out;
    serve_log('I', 5, "\"Delete\" resourceclaim=\"%s/%s\"", st->ns, st->name);
    rc = send_json(s, "DELETE", path, NULL, NULL, NULL, err);
    if (rc == -ENOENT)
        rc = 0;
out:
    json_decref(claim);
    free(path);
    return rc;
}

/* a claim deleted: the world forgets it now, not when the informer says so, and an event
 * of the informer's from before the deletion does not bring it back (mu held) */
static void forget_deleted(struct serve *s, struct step *st)
{
    char key[600];

    snprintf(key, sizeof(key), "%s/%s", st->ns, st->name);
    bury(s->dra, key, false);
    st->created = false;
}

static void assume(struct serve_dra *d, const char *ns, const char *name, json_t *obj);

/* Unreserve: the pod off the claims reserved for it in PreBind (a strategic merge patch that
 * needs no fresh copy), then the claim of its extended resources deleted when PreBind
 * created it */
static void unreserve(struct serve *s, struct job *j)
{
    size_t i;

    for (i = 0; i < j->nsteps; i++) {
        struct step *st = &j->steps[i];
        char *path;
        json_t *body, *answer = NULL;
        struct err err;
        int rc;

        if (!st->uid || st->create)
            continue;
        path = claim_path(st->ns, st->name, "/status");
        body = json_pack("{s:{s:s},s:{s:[{s:s,s:s}]}}", "metadata", "uid", st->uid, "status",
                         "reservedFor", "$patch", "delete", "uid", j->pod_uid);
        err_clear(&err);
        rc = path && body ? send_json(s, "PATCH", path, "application/strategic-merge-patch+json",
                                      body, &answer, &err)
                          : -ENOMEM;
        if (!rc && answer) {
            /* the claim without the pod is the scheduler's copy until the informer shows it
             * (a retry within that time must not find the pod still reserved) */
            serve_lock(s);
            assume(s->dra, st->ns, st->name, answer);
            s->dra->dirty = true;
            serve_unlock(s);
        }
        json_decref(answer);
        if (rc) {
            char msg[1200];

            serve_log('E', 0, "\"unreserve\" resourceclaim=\"%s/%s\" err=%s", st->ns, st->name,
                      log_quote(err_format(&err, msg, sizeof(msg))));
        } else {
            serve_log('I', 5, "\"unreserve\" resourceclaim=\"%s/%s\" pod=%s", st->ns, st->name,
                      log_quote(j->key));
        }
        free(path);
        json_decref(body);
    }
    for (i = 0; i < j->nsteps; i++) {
        struct step *st = &j->steps[i];
        struct err err;

        if (!st->create || !st->created)
            continue;
        serve_log('I', 5,
                  "\"delete extended resource backed by DRA\" resourceclaim=\"%s/%s\" pod=%s",
                  st->ns, st->name, log_quote(j->key));
        err_clear(&err);
        if (delete_claim(s, st, &err)) {
            char msg[1200];

            serve_log('E', 0, "\"delete\" resourceclaim=\"%s/%s\" err=%s", st->ns, st->name,
                      log_quote(err_format(&err, msg, sizeof(msg))));
            continue;
        }
        serve_lock(s);
        forget_deleted(s, st);
        serve_unlock(s);
    }
}

/* createExtendedResourceClaimInAPI: POST the claim (no name: generateName names it); *out
 * the claim created */
static int create_claim(struct serve *s, struct step *st, json_t **out, struct err *err)
{
    json_t *body = json_deep_copy(st->claim);
    char *path = buf_fmt("/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims", st->ns);
    int rc;

    *out = NULL;
    if (!body || !path) {
        rc = err_set(err, -ENOMEM, "out of memory");
    } else {
        json_object_del(json_object_get(body, "metadata"), "name");
        json_object_del(body, "status");
        rc = send_json(s, "POST", path, "application/json", body, out, err);
        serve_metrics_add(&s->metrics, &s->metrics.claim_creates[rc ? 0 : 1], 1);
        if (!rc && !serve_jstr(*out, "metadata", "name")) {
            json_decref(*out);
            *out = NULL;
            rc = err_set(err, -EPROTO, "no object in the answer");
        }
        if (rc) /* (klog.KObj of the claim whose name was cleared) */
            err_prefix(err, "create claim for extended resources %s/", st->ns);
    }
    json_decref(body);
    free(path);
    return rc;
}

/* patchPodExtendedResourceClaimStatus: the pod's status.extendedResourceClaimStatus names the
 * claim and the request mappings (a strategic merge patch, tried again on a conflict, a 500,
 * a 503 or a refused connection: retry.DefaultBackoff's 4 steps) */
static int patch_pod_status(struct serve *s, struct job *j, struct step *st, struct err *err)
{
    char path[700], ns[300], name[300];
    json_t *patch;
    char *body;
    int rc = -ENOMEM, attempt, delay = 10;

    serve_split_key(j->key, ns, sizeof(ns), name, sizeof(name));
    if (!json_array_size(st->mappings))
        return err_set(err, -EINVAL,
                       "nil or empty request mappings, no update of pod %s/%s "
                       "ExtendedResourceClaimStatus",
                       ns, name);
    serve_pod_path(path, sizeof(path), ns, name, "status");
    patch = json_pack("{s:{s:{s:O,s:s}}}", "status", "extendedResourceClaimStatus",
                      "requestMappings", st->mappings, "resourceClaimName", st->name);
    body = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
    json_decref(patch);
    if (!body)
        return err_set(err, -ENOMEM, "out of memory");
    for (attempt = 0; attempt < 4; attempt++) {
        if (attempt) {
            mono_sleep_ms(delay);
            delay *= 5;
        }
        err_clear(err);
        rc = kube_client_request(s->client, "PATCH", path, "application/strategic-merge-patch+json",
                                 body, strlen(body), NULL, err);
        if (!rc || !(err->http_status == 409 || err->http_status == 500 ||
                     err->http_status == 503 || rc == -ECONNREFUSED))
            break;
    }
    free(body);
    if (rc)
        err_prefix(err, "update pod %s/%s ExtendedResourceClaimStatus", ns, name);
    return rc;
}

/* keep what was written as the scheduler's copy until the informer shows it (mu held) */
static void assume(struct serve_dra *d, const char *ns, const char *name, json_t *obj)
{
    char key[600];
    struct overlay *o;
    void *old = NULL;

    snprintf(key, sizeof(key), "%s/%s", ns, name);
    if (!obj) {
        overlay_free(keymap_del(&d->over, key));
        return;
    }
    {
        json_t *have = get_json(&d->objs[SERVE_DRA_CLAIM], key);

        if (have && rv_of(have) >= rv_of(obj)) {
            overlay_free(keymap_del(&d->over, key));
            return;
        }
    }
    if (!(o = malloc(sizeof(*o) + strlen(key) + 1))) {
        overlay_free(keymap_del(&d->over, key));
        return;
    }
    memcpy(o->key, key, strlen(key) + 1);
    o->obj = json_deep_copy(obj);
    o->rv = rv_of(obj);
    o->inflight = false;
    o->gone = false;
    if (!o->obj || keymap_put(&d->over, o->key, o, &old)) {
        overlay_free(o);
        overlay_free(keymap_del(&d->over, key));
        return;
    }
    overlay_free(old);
}

static void prebind_end(struct serve *s, struct job *j, int rc, struct err *e);
static bool wait_start(struct serve *s, struct job *j);

static void prebind(struct serve *s, struct job *j)
{
    struct serve_dra *d = s->dra;
    struct err err;
    size_t i;
    int rc = 0;

    err_clear(&err);
    for (i = 0; i < j->nsteps && !rc; i++) {
        struct step *st = &j->steps[i];
        json_t *written = NULL;

        if (st->create) {
            /* the claim of the pod's extended resources: created, its in-flight allocation
             * then known by the name the API server gave it */
            json_t *created = NULL;
            char key[600];

            rc = create_claim(s, st, &created, &err);
            serve_lock(s);
            snprintf(key, sizeof(key), "%s/%s", st->ns, st->name);
            overlay_free(keymap_del(&d->over, key));
            if (!rc) {
                char *real = strdup(serve_jstr(created, "metadata", "name"));
                size_t c;

                st->created = true;
                json_decref(st->claim);
                st->claim = created;
                created = NULL;
                if (real) {
                    free(st->name);
                    st->name = real;
                    /* (the binding conditions are then waited for on the claim created) */
                    for (c = 0; c < j->nclaims; c++)
                        if (!strcmp(j->claims[c], key)) {
                            char *nk = buf_fmt("%s/%s", st->ns, st->name);

                            if (nk) {
                                free(j->claims[c]);
                                j->claims[c] = nk;
                            }
                        }
                    snprintf(key, sizeof(key), "%s/%s", st->ns, st->name);
                    if (put_inflight(d, key, st->claim, st->alloc))
                        serve_log('E', 0, "\"Out of memory keeping an allocation in flight\"");
                } else {
                    rc = err_set(&err, -ENOMEM, "out of memory");
                }
            }
            d->dirty = true;
            serve_unlock(s);
            json_decref(created);
            if (rc)
                break;
            serve_log(
                'I', 5,
                "\"created claim for extended resources\" pod=%s node=%s resourceclaim=\"%s/%s\"",
                log_quote(j->key), log_quote(j->bind && j->bind->node ? j->bind->node : ""), st->ns,
                st->name);
        }
        rc = bind_claim(s, j, st, &written, &err);
        if (!rc && st->create) {
            /* the claim as written is the one Unreserve would delete */
            json_decref(st->claim);
            st->claim = json_incref(written);
            rc = patch_pod_status(s, j, st, &err);
        }
        serve_lock(s);
        if (!rc) {
            const char *uid = serve_jstr(written, "metadata", "uid");

            st->uid = strdup(uid ? uid : "");
            assume(d, st->ns, st->name, written);
        } else if (st->alloc) {
            /* the allocation is no longer in flight: back to the informer's claim */
            char key[600];

            snprintf(key, sizeof(key), "%s/%s", st->ns, st->name);
            overlay_free(keymap_del(&d->over, key));
        }
        d->dirty = true;
        serve_unlock(s);
        json_decref(written);
    }
    serve_lock(s);
    for (; i < j->nsteps; i++) {
        /* not reached: their in-flight allocations go */
        char key[600];
        struct overlay *o;

        snprintf(key, sizeof(key), "%s/%s", j->steps[i].ns, j->steps[i].name);
        if (j->steps[i].alloc && (o = keymap_get(&d->over, key)) && o->inflight)
            overlay_free(keymap_del(&d->over, key));
    }
    d->dirty = true;
    serve_unlock(s);
    if (!rc && j->fail) /* (the error the cycle found PreBind stopping with) */
        rc = err_set(&err, -EINVAL, "%s", j->fail);
    if (!rc && wait_start(s, j))
        return; /* (waiting for the devices' binding conditions) */
    prebind_end(s, j, rc, &err);
}

/* a failed binding cycle as kube-scheduler's failure handler reports it: the FailedScheduling
 * event and the PodScheduled condition (reason SchedulerError) with the error's message,
 * the condition only when its reason or message changed */
static void prebind_report(struct serve *s, const struct job *j, const struct serve_task *t,
                           const char *msg)
{
    char ns[300], name[300];
    struct serve_objref ref = {ns, name, j->pod_uid, t->rv};
    const struct serve_queue_item *it;
    struct serve_pending *pp;

    serve_split_key(j->key, ns, sizeof(ns), name, sizeof(name));
    serve_lock(s);
    serve_write_event(s, t->controller, &ref, NULL, "Warning", "FailedScheduling", "Scheduling",
                      msg);
    it = serve_queue_get(s->queue, j->key);
    pp = it ? it->data : NULL;
    if (pp && pp->uid && !strcmp(pp->uid, j->pod_uid) &&
        !serve_pending_condition_changed(pp, "SchedulerError", msg)) {
        serve_unlock(s);
        return;
    }
    serve_write_status(s, ns, name, "SchedulerError", msg, NULL);
    serve_unlock(s);
}

/* the end of PreBind: the bind goes to the binder (rc 0), or the binding cycle fails with err
 * (Unreserve; the pod goes back as after a failed bind) */
static void prebind_end(struct serve *s, struct job *j, int rc, struct err *e)
{
    struct serve_dra *d = s->dra;
    struct serve_task *t = j->bind;
    struct err err = *e;

    j->bind = NULL;
    if (!rc) {
        void *old = NULL;

        serve_lock(s);
        serve_log('I', 5, "\"Claims reserved\" pod=%s claims=%zu", log_quote(j->key), j->nsteps);
        if (keymap_put(&d->reserved, j->key, j, &old)) {
            job_free(j); /* (out of memory: no Unreserve for it) */
            old = NULL;
        }
        serve_unlock(s);
        job_free(old);
        t->bind_start_ms = mono_ms();
        serve_binder_submit(s->binder, t); /* j is the binder's answer's from here */
        return;
    }
    /* a PreBind error fails the binding cycle: Unreserve, and the pod goes back as after a
     * failed bind */
    {
        char msg[1200];

        serve_log('E', 0,
                  "\"Failed running PreBind plugin\" plugin=\"DynamicResources\" pod=%s err=%s",
                  log_quote(j->key), log_quote(err_format(&err, msg, sizeof(msg))));
        unreserve(s, j);
        t->rc = rc;
        /* (as a 500: not "no answer", the pod did not land; not a 404 or 409 of the pod) */
        err.http_status = 500;
        err_prefix(&err, "running PreBind plugin \"DynamicResources\"");
        prebind_report(s, j, t, err_format(&err, msg, sizeof(msg)));
        t->reported = true;
        t->err = &err;
        t->ud = s;
        serve_on_task_done(s, t); /* frees t */
    }
    job_free(j);
}

/* ---- binding conditions (DRADeviceBindingConditions, DRAResourceClaimDeviceStatus) ---- */

/* isClaimReadyForBinding, then isClaimTimeout when it is not ready (at wall time now), over
 * serve's copy of a claim: sched_dra_binding_state (the one Filter reads), the message of a
 * failure ("device binding failed: claim=...") in msg. A claim that does not decode (the API
 * server accepted it) is pending. */
static enum sched_dra_binding binding_state(json_t *claim, int64_t now_ms, int64_t timeout_ms,
                                            char *msg, size_t size)
{
    struct kube_resource_claim c;
    struct arena a = {0};
    struct err err;
    enum sched_dra_binding b = SCHED_DRA_BINDING_PENDING;

    err_clear(&err);
    if (size)
        msg[0] = '\0';
    if (!kube_resource_claim_decode(claim, &a, NULL, &c, &err))
        b = sched_dra_binding_state(&c, now_ms, timeout_ms, msg, size);
    arena_release(&a);
    return b;
}

/* hasBindingConditions: a claim of the job's pod has a device with binding conditions (mu
 * held) */
static bool binding_conditions(struct serve_dra *d, const struct job *j)
{
    size_t i, k;
    json_t *r;

    for (i = 0; i < j->nclaims; i++) {
        json_t *c = claim_json(d, j->claims[i]);
        json_t *alloc = json_object_get(json_object_get(c, "status"), "allocation");

        json_array_foreach(json_object_get(json_object_get(alloc, "devices"), "results"), k, r)
        {
            if (json_array_size(json_object_get(r, "bindingConditions")))
                return true;
        }
    }
    return false;
}

/* isPodReadyForBinding over serve's copies of the pod's claims (mu held): 1 ready, 0 not yet,
 * -EINVAL with err (a failure condition, a timeout, a claim gone) */
static int pod_ready(struct serve_dra *d, const struct job *j, struct err *err)
{
    int64_t now = wall_ms();
    size_t i;

    for (i = 0; i < j->nclaims; i++) {
        json_t *c = claim_json(d, j->claims[i]);
        char msg[1000];

        if (!c) /* (-ENOENT: the metrics' status "error", not "failure") */
            return err_set(err, -ENOENT, "could not find ResourceClaim \"%s\"", j->claims[i]);
        switch (binding_state(c, now, j->timeout_ms, msg, sizeof(msg))) {
        case SCHED_DRA_BINDING_READY:
            continue;
        case SCHED_DRA_BINDING_FAILED:
            return err_set(err, -EINVAL, "%s", msg);
        case SCHED_DRA_BINDING_TIMEOUT:
            return err_set(err, -ETIMEDOUT, "device binding timeout: claim=%s",
                           serve_jstr(c, "metadata", "name") ? serve_jstr(c, "metadata", "name")
                                                             : "");
        case SCHED_DRA_BINDING_PENDING:
            return 0;
        }
    }
    return 1;
}

/* after the claims' writes: when a device of the pod's claims has binding conditions, the
 * BindingConditionsPending event, and the job waits (polled at once, then every 5 s, until
 * the binding timeout). False when there is nothing to wait for. */
static bool wait_start(struct serve *s, struct job *j)
{
    struct serve_dra *d = s->dra;
    char ns[300], name[300], note[400];
    bool wait;

    serve_lock(s);
    wait = binding_conditions(d, j);
    if (wait) {
        struct serve_objref ref = {ns, name, j->pod_uid, j->bind->rv};

        serve_split_key(j->key, ns, sizeof(ns), name, sizeof(name));
        snprintf(note, sizeof(note), "waiting for binding conditions for device on node %s",
                 j->bind->node ? j->bind->node : "");
        serve_write_event(s, j->bind->controller, &ref, NULL, "Normal", "BindingConditionsPending",
                          "Scheduling", note);
    }
    serve_unlock(s);
    if (!wait)
        return false;
    j->wait_start = mono_now();
    j->poll_ms = mono_ms();
    j->deadline_ms = j->poll_ms + j->timeout_ms;
    pthread_mutex_lock(&d->jmu);
    j->next = d->waiting;
    d->waiting = j;
    pthread_cond_broadcast(&d->jcv);
    pthread_mutex_unlock(&d->jmu);
    return true;
}

/* the earliest poll of a waiting job, -1 when none (jmu held) */
static int64_t wait_due(const struct serve_dra *d)
{
    const struct job *j;
    int64_t due = -1;

    for (j = d->waiting; j; j = j->next)
        if (due < 0 || j->poll_ms < due)
            due = j->poll_ms;
    return due;
}

/* the end of a wait with pod_ready's rc (or -ETIMEDOUT at the deadline): for each result of
 * each allocated claim of the pod, kube-scheduler's PreBind observes the wait in
 * scheduler_dra_bindingconditions_wait_duration_seconds and counts a result with binding
 * conditions in scheduler_dra_bindingconditions_allocations_total, by profile, driver and
 * status (success, failure: a failure condition, timeout, error: e.g. a claim gone) */
static void wait_metrics(struct serve *s, const struct job *j, int rc)
{
    struct serve_dra *d = s->dra;
    struct serve_profile_metrics *pm = serve_metrics_profile(&s->metrics, j->bind->controller);
    enum serve_bc_status st = rc > 0             ? SERVE_BC_SUCCESS
                              : rc == -ETIMEDOUT ? SERVE_BC_TIMEOUT
                              : rc == -EINVAL    ? SERVE_BC_FAILURE
                                                 : SERVE_BC_ERROR;
    double took = mono_now() - j->wait_start;
    size_t i, k;
    json_t *r;

    serve_lock(s);
    for (i = 0; i < j->nclaims; i++) {
        json_t *c = claim_json(d, j->claims[i]);
        json_t *alloc = json_object_get(json_object_get(c, "status"), "allocation");

        json_array_foreach(json_object_get(json_object_get(alloc, "devices"), "results"), k, r)
        {
            const char *driver = json_string_value(json_object_get(r, "driver"));

            serve_metrics_binding_conditions(
                &s->metrics, pm, driver ? driver : "", st,
                json_array_size(json_object_get(r, "bindingConditions")) > 0, took);
        }
    }
    serve_unlock(s);
}

/* the polls that are due: a pod ready goes to the binder, a failure or the timeout fails its
 * PreBind */
static void wait_poll(struct serve *s)
{
    struct serve_dra *d = s->dra;
    struct job **pp, *j, *due = NULL;
    int64_t now = mono_ms();

    /* the due ones, taken out (another writer may poll the others meanwhile) */
    pthread_mutex_lock(&d->jmu);
    for (pp = &d->waiting; (j = *pp);) {
        if (j->poll_ms > now) {
            pp = &j->next;
            continue;
        }
        *pp = j->next;
        j->next = due;
        due = j;
    }
    pthread_mutex_unlock(&d->jmu);
    while ((j = due)) {
        struct err err;
        int rc;

        due = j->next;
        j->next = NULL;
        err_clear(&err);
        if (now >= j->deadline_ms) {
            rc = err_set(&err, -ETIMEDOUT, "device binding timeout: context deadline exceeded");
        } else {
            serve_lock(s);
            rc = pod_ready(d, j, &err);
            serve_unlock(s);
        }
        if (rc == 0) {
            j->poll_ms += BINDING_POLL_MS;
            if (j->poll_ms > j->deadline_ms)
                j->poll_ms = j->deadline_ms;
            pthread_mutex_lock(&d->jmu);
            j->next = d->waiting;
            d->waiting = j;
            pthread_mutex_unlock(&d->jmu);
            continue;
        }
        if (rc > 0)
            serve_log('I', 5, "\"BindingConditions is met\" pod=%s node=%s", log_quote(j->key),
                      log_quote(j->bind->node ? j->bind->node : ""));
        wait_metrics(s, j, rc);
        prebind_end(s, j, rc > 0 ? 0 : rc, &err);
    }
}

/* ---- PostFilter's deallocation ---- */

/* the claim with status.reservedFor, allocation and devices gone, as PostFilter updates it;
 * NULL when out of memory */
static json_t *deallocated(json_t *claim)
{
    json_t *copy = json_deep_copy(claim), *st = json_object_get(copy, "status");

    if (json_is_object(st)) {
        json_object_del(st, "reservedFor");
        json_object_del(st, "allocation");
        json_object_del(st, "devices");
    }
    return copy;
}

/* the report a PostFilter write carries, post the text PostFilter's reasons start with in the
 * message (NULL when out of memory: the caller reports at once) */
static struct dealloc_report *dealloc_report_new(struct serve *s, const struct kube_pod *pod,
                                                 const struct sched_result *res, const char *post,
                                                 const char *controller, const char *rv)
{
    struct dealloc_report *r = calloc(1, sizeof(*r));
    const struct serve_queue_item *it;
    const char *at;
    char key[600];

    if (!r || !res->message || !(at = strstr(res->message, post)) ||
        !(r->message = strdup(res->message)) || !(r->rv = strdup(rv ? rv : ""))) {
        if (r) {
            free(r->message);
            free(r);
        }
        return NULL;
    }
    r->fit_len = (size_t)(at - res->message);
    r->controller = controller;
    r->clear_nomination = res->clear_nomination;
    snprintf(key, sizeof(key), "%s/%s", pod->namespace_, pod->name);
    it = serve_queue_get(s->queue, key);
    r->pops = it ? it->pops : 0;
    return r;
}

bool serve_dra_postfilter(struct serve *s, const struct kube_pod *pod,
                          const struct sched_result *res, const char *controller, const char *rv)
{
    struct serve_dra *d = s->dra;
    const struct sched_dra_device_out *dv = NULL;
    struct sched_dra_pod_in in;
    size_t ndv = 0, i, k;
    char key[600], pkey[600];
    bool took = false;

    if (!d)
        return false;
    d->dirty = true; /* (the world holds the deallocation: rebuilt, it comes from the overlay) */
    if (!res->requeued || !d->w)
        return false;
    if (postfilter_extended(s, pod, res, controller, rv, &took))
        return took;
    if (!pod->nresource_claims)
        return false;
    memset(&in, 0, sizeof(in));
    in.namespace_ = pod->namespace_;
    in.name = pod->name;
    in.uid = pod->uid;
    in.claims = kube_pod_ext(pod)->resource_claims;
    in.nclaims = pod->nresource_claims;
    in.pod = pod;
    if (sched_dra_pod_devices(d->w, &in, &dv, &ndv))
        return false;
    snprintf(pkey, sizeof(pkey), "%s/%s", pod->namespace_, pod->name);
    /* the claim the world deallocated: allocated as serve sees it, no devices in the world */
    for (i = 0; i < pod->nresource_claims; i++) {
        const char *name = pod_claim_name(pod, i);
        json_t *claim, *alloc;
        struct job *j;
        struct overlay *o;
        void *old = NULL;

        if (!name)
            continue;
        snprintf(key, sizeof(key), "%s/%s", pod->namespace_, name);
        claim = claim_json(d, key);
        alloc = json_object_get(json_object_get(claim, "status"), "allocation");
        if (!json_array_size(json_object_get(json_object_get(alloc, "devices"), "results")))
            continue;
        for (k = 0; k < ndv; k++)
            if (!strcmp(dv[k].claim_namespace, pod->namespace_) && !strcmp(dv[k].claim_name, name))
                break;
        if (k < ndv)
            continue;
        /* the update goes to the writer thread; until it is answered the deallocated claim
         * stands for the informer's (in flight) */
        j = calloc(1, sizeof(*j));
        o = malloc(sizeof(*o) + strlen(key) + 1);
        if (!j || !o || !(j->steps = calloc(1, sizeof(*j->steps))) || !(j->key = strdup(pkey)) ||
            !(j->pod_name = strdup(pod->name)) ||
            !(j->pod_uid = strdup(pod->uid ? pod->uid : "")) ||
            !(j->steps[0].ns = strdup(pod->namespace_)) || !(j->steps[0].name = strdup(name)) ||
            !(j->steps[0].claim = deallocated(claim)) || !(o->obj = deallocated(claim))) {
            serve_log('E', 0, "\"Out of memory deallocating a claim\" pod=%s", log_quote(pkey));
            if (j && j->steps)
                j->nsteps = 1;
            job_free(j);
            free(o);
            return false;
        }
        j->kind = JOB_DEALLOCATE;
        j->nsteps = 1;
        j->report =
            res->nominated_node || res->error
                ? NULL
                : dealloc_report_new(s, pod, res, " deallocation of ResourceClaim completed",
                                     controller, rv);
        memcpy(o->key, key, strlen(key) + 1);
        o->rv = rv_of(o->obj);
        o->inflight = true;
        o->gone = false;
        if (keymap_put(&d->over, o->key, o, &old))
            overlay_free(o);
        else
            overlay_free(old);
        took = j->report != NULL; /* (read before a writer may take and free the job) */
        job_push(d, j);
        return took; /* PostFilter deallocates one claim */
    }
    return false;
}

/* the attempt's report once the deallocation is answered (mu held), as kube-scheduler's
 * failure handler writes it after PostFilter: the FailedScheduling event and the
 * PodScheduled condition (reason Unschedulable). Written, the message is the attempt's (and
 * DefaultPreemption, which ran after, counts its attempt and clears a nomination it found no
 * candidate for); refused, the PostFilter phase ended with the update's error: the FitError's
 * message followed by the error's text, no preemption. Nothing for a pod re-created under
 * the name since. */
static void dealloc_report(struct serve *s, const struct job *j, int rc, const struct err *e)
{
    const struct dealloc_report *r = j->report;
    const struct serve_queue_item *it = serve_queue_get(s->queue, j->key);
    struct serve_pending *pp = it ? it->data : NULL;
    char ns[300], name[300], em[1200], *msg;
    struct serve_objref ref = {ns, name, j->pod_uid, r->rv};
    bool superseded;

    if (pp && strcmp(pp->uid ? pp->uid : "", j->pod_uid))
        return;
    /* a later attempt of the pod began meanwhile (its own report follows this one): the event
     * is written, the condition left to it, so the pod's last condition is the last
     * attempt's whatever order the binder's writes land in (kube-scheduler, writing in
     * its scheduling goroutine, starts no attempt before this one's report is written) */
    superseded = it && it->pops != r->pops;
    serve_split_key(j->key, ns, sizeof(ns), name, sizeof(name));
    if (rc) {
        msg = buf_fmt("%.*s %s", (int)r->fit_len, r->message, err_format(e, em, sizeof(em)));
    } else {
        msg = strdup(r->message);
        pthread_mutex_lock(&s->metrics.mu);
        s->metrics.preemption_attempts++; /* (the cluster has nodes: one was filtered) */
        pthread_mutex_unlock(&s->metrics.mu);
        if (r->clear_nomination && (!sched_cluster_unnominate(s->cluster, ns, name) ||
                                    (pp && (pp->last_nominated || pp->watch_nominated)))) {
            serve_write_clear_nomination(s, ns, name);
            if (pp) {
                free(pp->last_nominated);
                pp->last_nominated = NULL;
            }
        }
    }
    if (!msg) {
        serve_log('E', 0, "\"Out of memory reporting a scheduling failure\" pod=%s",
                  log_quote(j->key));
        return;
    }
    serve_write_event(s, r->controller, &ref, NULL, "Warning", "FailedScheduling", "Scheduling",
                      msg);
    if (!superseded && (!pp || serve_pending_condition_changed(pp, "Unschedulable", msg)))
        serve_write_status(s, ns, name, "Unschedulable", msg, NULL);
    free(msg);
}

/* PostFilter's UpdateStatus of the deallocated claim (no retry: an error is the plugin's) */
static void deallocate(struct serve *s, struct job *j)
{
    struct serve_dra *d = s->dra;
    struct step *st = &j->steps[0];
    char *spath = claim_path(st->ns, st->name, "/status");
    json_t *written = NULL;
    struct err err;
    int rc;

    err_clear(&err);
    serve_log('I', 5, "\"Deallocation of ResourceClaim\" pod=%s resourceclaim=\"%s/%s\"",
              log_quote(j->key), st->ns, st->name);
    rc = spath ? send_json(s, "PUT", spath, "application/json", st->claim, &written, &err)
               : err_set(&err, -ENOMEM, "out of memory");
    free(spath);
    serve_lock(s);
    if (rc) {
        char msg[1200], key[600];

        /* back to the informer's claim (still allocated); the pod waits for an event */
        snprintf(key, sizeof(key), "%s/%s", st->ns, st->name);
        overlay_free(keymap_del(&d->over, key));
        serve_log('E', 0, "\"Status after running PostFilter plugins for pod\" pod=%s status=%s",
                  log_quote(j->key), log_quote(err_format(&err, msg, sizeof(msg))));
    } else {
        assume(d, st->ns, st->name, written);
    }
    d->dirty = true;
    if (j->report)
        dealloc_report(s, j, rc, &err);
    serve_unlock(s);
    json_decref(written);
}

/* PostFilter's deletion of the extended-resource claim left from an earlier attempt (as
 * Unreserve deletes one: the finalizer off, then the DELETE), then the attempt's report */
static void delete_leftover(struct serve *s, struct job *j)
{
    struct step *st = &j->steps[0];
    struct err err;
    char msg[1200];
    int rc;

    serve_log('I', 5, "\"Delete\" resourceclaim=\"%s/%s\" pod=%s", st->ns, st->name,
              log_quote(j->key));
    err_clear(&err);
    rc = delete_claim(s, st, &err);
    if (rc)
        serve_log('E', 0, "\"Status after running PostFilter plugins for pod\" pod=%s status=%s",
                  log_quote(j->key), log_quote(err_format(&err, msg, sizeof(msg))));
    serve_lock(s);
    if (!rc) {
        forget_deleted(s, st);
    } else {
        /* refused: back to the informer's claim (the pod's next attempt finds it again) */
        char key[600];

        snprintf(key, sizeof(key), "%s/%s", st->ns, st->name);
        if (buried(s->dra, key))
            overlay_free(keymap_del(&s->dra->over, key));
        s->dra->dirty = true;
    }
    if (j->report)
        dealloc_report(s, j, rc, &err);
    serve_unlock(s);
}

/* the claims ("ns/name") a job writes, or NULL when out of memory; *n of them */
static char **job_keys(const struct job *j, size_t *n)
{
    char **k = calloc(j->nsteps + 1, sizeof(*k));
    size_t i;

    *n = 0;
    for (i = 0; k && i < j->nsteps; i++) {
        if (!(k[*n] = buf_fmt("%s/%s", j->steps[i].ns, j->steps[i].name))) {
            while (*n)
                free(k[--*n]);
            free(k);
            return NULL;
        }
        (*n)++;
    }
    return k;
}

static void keys_free(char **k, size_t n)
{
    while (n)
        free(k[--n]);
    free(k);
}

/* the first job in order whose claims no running job writes and no earlier job in the queue
 * waits to write (a claim's writes stay in order), taken out with its claims marked busy;
 * NULL when none may run now (jmu held) */
static struct job *take_job(struct serve_dra *d, char ***keys, size_t *nkeys)
{
    struct job **pp, *j;
    struct keymap skipped = KEYMAP_INIT;
    static int one = 1; /* (a value: only "present" matters) */

    *keys = NULL;
    *nkeys = 0;
    for (pp = &d->head; (j = *pp); pp = &j->next) {
        size_t n, i;
        char **k = job_keys(j, &n);
        bool ok = k != NULL;

        for (i = 0; ok && i < n; i++)
            ok = !keymap_get(&d->busy, k[i]) && !keymap_get(&skipped, k[i]);
        if (!ok) {
            /* later jobs of its claims wait for it */
            for (i = 0; k && i < n; i++)
                if (!keymap_get(&skipped, k[i]) && !keymap_put(&skipped, k[i], &one, NULL))
                    k[i] = NULL; /* (skipped owns it now) */
            if (k)
                keys_free(k, n);
            continue;
        }
        for (i = 0; i < n; i++)
            if (keymap_put(&d->busy, k[i], &one, NULL))
                break;
        if (i < n) { /* (out of memory: it waits) */
            while (i)
                keymap_del(&d->busy, k[--i]);
            keys_free(k, n);
            continue;
        }
        *pp = j->next;
        if (d->tail == j) {
            struct job *t = d->head;

            while (t && t->next)
                t = t->next;
            d->tail = t;
        }
        j->next = NULL;
        *keys = k;
        *nkeys = n;
        break;
    }
    {
        size_t i;

        for (i = 0; i < skipped.cap; i++)
            free((char *)skipped.slots[i].key);
        keymap_release(&skipped);
    }
    return j;
}

static void *writer(void *arg)
{
    struct serve *s = arg;
    struct serve_dra *d = s->dra;

    for (;;) {
        struct job *j = NULL;
        char **keys = NULL;
        size_t nkeys = 0, i;
        bool poll = false;

        pthread_mutex_lock(&d->jmu);
        for (;;) {
            int64_t due;

            if (d->stop && !d->head) {
                pthread_mutex_unlock(&d->jmu);
                return NULL;
            }
            if ((j = take_job(d, &keys, &nkeys)))
                break;
            due = wait_due(d);
            if (due >= 0 && due <= mono_ms()) {
                poll = true;
                break;
            }
            if (due < 0)
                pthread_cond_wait(&d->jcv, &d->jmu);
            else
                mono_cond_wait_until(&d->jcv, &d->jmu, due);
        }
        pthread_mutex_unlock(&d->jmu);
        if (poll || !j)
            wait_poll(s);
        if (!j)
            continue;
        if (j->kind == JOB_PREBIND) {
            prebind(s, j);
        } else if (j->kind == JOB_DEALLOCATE) {
            deallocate(s, j);
            job_free(j);
        } else if (j->kind == JOB_DELETE_LEFTOVER) {
            delete_leftover(s, j);
            job_free(j);
        } else {
            unreserve(s, j);
            job_free(j);
        }
        /* its claims are free for the next jobs */
        pthread_mutex_lock(&d->jmu);
        for (i = 0; i < nkeys; i++)
            keymap_del(&d->busy, keys[i]);
        pthread_cond_broadcast(&d->jcv);
        pthread_mutex_unlock(&d->jmu);
        keys_free(keys, nkeys);
    }
}

void serve_dra_bind_done(struct serve *s, const char *key, const char *uid, bool ok)
{
    struct serve_dra *d = s->dra;
    struct job *j;

    if (!d)
        return;
    serve_lock(s);
    j = keymap_get(&d->reserved, key);
    if (j && strcmp(j->pod_uid, uid ? uid : ""))
        j = NULL;
    if (j)
        keymap_del(&d->reserved, key);
    if (j && !ok)
        d->dirty = true;
    serve_unlock(s);
    if (!j)
        return;
    if (ok) {
        job_free(j);
        return;
    }
    j->kind = JOB_UNRESERVE;
    job_push(d, j);
}

/* ---- start and stop ---- */

int serve_dra_start(struct serve *s)
{
    struct serve_dra *d = calloc(1, sizeof(*d));
    struct kube_informer_opts io;
    static const kube_informer_fn fns[SERVE_DRA_KINDS] = {on_class, on_slice, on_claim, on_template,
                                                          on_rule};
    struct err err;
    int k;

    if (!d)
        return -ENOMEM;
    s->dra = d;
    pthread_mutex_init(&d->jmu, NULL);
    if (mono_cond_init(&d->jcv) || sched_dra_cel_init(&d->cel)) {
        fprintf(stderr, "gpusched serve: out of memory\n");
        return -ENOMEM;
    }
    d->cel_ready = true;
    d->dirty = true;
    s->bind_done = serve_dra_bind_done;
    for (k = 0; k < WRITERS; k++) {
        if (pthread_create(&d->threads[k], NULL, writer, s)) {
            fprintf(stderr, "gpusched serve: cannot start the claim writers' threads\n");
            return -EAGAIN;
        }
        d->nthreads++;
        pthread_setname_np(d->threads[k], "claim-writer");
    }
    err_clear(&err);
    memset(&io, 0, sizeof(io));
    io.log = on_log;
    io.ud = s;
    io.stop = &s->informer_stop;
    for (k = 0; k < SERVE_DRA_KINDS; k++) {
        io.resource = kinds[k].resource;
        io.path = kinds[k].path;
        io.fn = fns[k];
        if (kube_informer_start(s->client, &io, &d->inf[k], &err)) {
            fprintf(stderr, "gpusched serve: %s\n", err.msg);
            return -EIO;
        }
    }
    return 0;
}

static void json_map_release(struct keymap *m)
{
    size_t i;

    for (i = 0; i < m->cap; i++)
        if (m->slots[i].key) {
            json_decref(((struct entry *)m->slots[i].value)->obj);
            free(m->slots[i].value);
        }
    keymap_release(m);
}

void serve_dra_stop(struct serve *s)
{
    struct serve_dra *d = s->dra;
    int k;

    if (!d)
        return;
    for (k = 0; k < SERVE_DRA_KINDS; k++)
        kube_informer_free(d->inf[k]);
    if (d->nthreads) {
        pthread_mutex_lock(&d->jmu);
        d->stop = true;
        pthread_cond_broadcast(&d->jcv);
        pthread_mutex_unlock(&d->jmu);
        while (d->nthreads)
            pthread_join(d->threads[--d->nthreads], NULL);
    }
    for (k = 0; k < SERVE_DRA_KINDS; k++)
        d->inf[k] = NULL;
}

void serve_dra_free(struct serve *s)
{
    struct serve_dra *d = s->dra;
    size_t i;
    int k;

    if (!d)
        return;
    serve_dra_stop(s);
    s->bind_done = NULL;
    while (d->waiting) {
        struct job *j = d->waiting;

        d->waiting = j->next;
        job_free(j);
    }
    while (d->head) {
        struct job *j = d->head;

        d->head = j->next;
        job_free(j);
    }
    if (s->cluster)
        world_drop(s);
    if (d->cel_ready)
        sched_dra_cel_release(&d->cel);
    for (k = 0; k < SERVE_DRA_KINDS; k++)
        json_map_release(&d->objs[k]);
    json_map_release(&d->nodes);
    for (i = 0; i < d->over.cap; i++)
        if (d->over.slots[i].key)
            overlay_free(d->over.slots[i].value);
    keymap_release(&d->over);
    for (i = 0; i < d->reserved.cap; i++)
        if (d->reserved.slots[i].key)
            job_free(d->reserved.slots[i].value);
    keymap_release(&d->reserved);
    keymap_release(&d->busy);
    pthread_mutex_destroy(&d->jmu);
    pthread_cond_destroy(&d->jcv);
    free(d);
    s->dra = NULL;
}
