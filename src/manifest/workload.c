/* workload.c - workloads expanded to their pods (see workload.h). Each replica is the decoded
 * template with the labels and the name its controller would give it. */
#include "manifest/workload-int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/decode.h"
#include "kube/labels.h"
#include "base/keymap.h"
#include "kube/rules.h"
#include "manifest/names-int.h"
#include "manifest/objects-int.h"

/* keep_selector records the selector of a ReplicaSet, ReplicationController, StatefulSet or
 * Deployment for PodTopologySpread's system defaults (struct manifest_selector): spec.selector
 * (a ReplicationController's map too), else (none given, or an older API group) the
 * template's labels; a Deployment's ReplicaSet also selects its pod-template-hash. */
static int keep_selector(struct manifest_ctx *c, const struct manifest_kind *k, const char *ns,
                         const char *name, const struct kube_label_selector *sel,
                         const struct kube_labels *tmpl_labels, const char *hash)
{
    struct arena *a = &c->in->arena;
    struct kube_label_selector ls;
    size_t i, n;

    if (k->id != MANIFEST_KIND_DEPLOYMENT && k->id != MANIFEST_KIND_REPLICASET &&
        k->id != MANIFEST_KIND_REPLICATION_CONTROLLER && k->id != MANIFEST_KIND_STATEFULSET)
        return 0;
    memset(&ls, 0, sizeof(ls));
    ls.present = true;
    n = sel->present ? sel->nreqs : tmpl_labels->n;
    if (!(ls.reqs = arena_alloc(a, (n + 1) * sizeof(*ls.reqs))))
        return manifest_nomem(c);
    if (sel->present) {
        if (n)
            memcpy(ls.reqs, sel->reqs, n * sizeof(*ls.reqs));
    } else {
        for (i = 0; i < n; i++) {
            const char **v = arena_alloc(a, sizeof(*v));
            if (!v)
                return manifest_nomem(c);
            v[0] = tmpl_labels->v[i].value;
            ls.reqs[i].key = tmpl_labels->v[i].key;
            ls.reqs[i].op = KUBE_OP_IN;
            ls.reqs[i].values = v;
            ls.reqs[i].nvalues = 1;
        }
    }
    if (k->id == MANIFEST_KIND_DEPLOYMENT) {
        const char **v = arena_alloc(a, sizeof(*v));
        if (!v || !(v[0] = arena_strdup(a, hash)))
            return manifest_nomem(c);
        ls.reqs[n].key = "pod-template-hash";
        ls.reqs[n].op = KUBE_OP_IN;
        ls.reqs[n].values = v;
        ls.reqs[n++].nvalues = 1;
    }
    ls.nreqs = n;
    return manifest_add_selector(c, k->kind, ns, name, &ls);
}

/* labels_with returns base plus the extra pairs (replacing equal keys), sorted by key. */
static int labels_with(struct arena *a, const struct kube_labels *base,
                       const struct kube_label *extra, size_t nextra, struct kube_labels *out)
{
    struct kube_label *v = arena_alloc(a, (base->n + nextra) * sizeof(*v));
    size_t i, j, n = 0;

    if (!v)
        return -ENOMEM;
    for (i = 0; i < base->n; i++) {
        for (j = 0; j < nextra; j++)
            if (!strcmp(base->v[i].key, extra[j].key))
                break;
        if (j == nextra)
            v[n++] = base->v[i];
    }
    for (j = 0; j < nextra; j++) {
        /* insertion keeps the array sorted */
        i = n;
        while (i > 0 && strcmp(v[i - 1].key, extra[j].key) > 0) {
            v[i] = v[i - 1];
            i--;
        }
        v[i] = extra[j];
        n++;
    }
    out->v = v;
    out->n = n;
    return 0;
}

/* defer keeps w (tmpl the decoded template) for manifest_input_finish */
static int defer(struct manifest_ctx *c, struct manifest_pending_workload *w,
                 const struct kube_pod *tmpl)
{
    struct manifest_input_priv *pv = c->in->priv;

    if (manifest_grow((void **)&pv->ds, &pv->cap_ds, pv->nds + 1, sizeof(*pv->ds)))
        return manifest_nomem(c);
    w->tmpl = *tmpl;
    if (w->kind != MANIFEST_KIND_DAEMONSET) {
        pv->deferred_pods += w->replicas;
        /* its bound pods come here in pod order: later bound pods stay in pods[] too */
        if (w->replicas && tmpl->node_name && *tmpl->node_name)
            pv->bound_kept = 1;
    }
    pv->ds[pv->nds++] = *w;
    return 0;
}

int manifest_load_workload(struct manifest_ctx *c, json_t *obj, const struct manifest_kind *k,
                           const char *av, int line)
{
    struct manifest_input *in = c->in;
    const char *ns = manifest_object_namespace(c), *name;
    struct kube_workload wl;
    struct kube_labels shared;
    struct manifest_pending_workload w;
    struct kube_pod tp;
    char base[320], rs[340], hash[11] = "";
    int64_t replicas;
    int rc;

    rc = kube_workload_decode(obj, k->kind, av, &in->arena, manifest_dopts(c, line), &wl, c->err);
    if (rc)
        return rc;
    name = wl.name;
    replicas = k->id == MANIFEST_KIND_DAEMONSET ? 1 : wl.replicas;
    if (k->id == MANIFEST_KIND_JOB) {
        /* the Job controller runs parallelism pods, no more than the completions left */
        if (wl.completions >= 0 && wl.completions < replicas)
            replicas = wl.completions;
        if (wl.suspend)
            replicas = 0;
    }
    if ((rc = manifest_check_capacity(
             c, line, k->id == MANIFEST_KIND_JOB ? "spec.parallelism" : "spec.replicas",
             (size_t)replicas)))
        return rc;
    tp = wl.tmpl;
    tp.namespace_ = manifest_namespace_intern(c, ns);
    tp.owner.kind = k->kind;
    tp.owner.name = name;
    tp.owner.api_version = NULL; /* the controller's own reference, not the template's */
    tp.source_file = c->file;
    tp.source_line = line;
    if (!tp.namespace_)
        return manifest_nomem(c);
    if (c->cluster) {
        /* the cluster's own: its pods are in the cluster already; its selector still counts
         * for the system default spreading */
        if (k->id == MANIFEST_KIND_REPLICASET || k->id == MANIFEST_KIND_REPLICATION_CONTROLLER ||
            k->id == MANIFEST_KIND_STATEFULSET)
            return keep_selector(c, k, ns, name, &wl.selector, &tp.labels, hash);
        return 0;
    }
    memset(&w, 0, sizeof(w));
    w.kind = k->id;
    w.line = line;
    w.pos = in->npods;
    w.replicas = (size_t)replicas;
    w.indexed = wl.indexed;
    if (k->id == MANIFEST_KIND_DAEMONSET)
        return defer(c, &w, &tp);

    /* labels the controllers add that are the same for every replica */
    shared = tp.labels;
    if (k->id == MANIFEST_KIND_DEPLOYMENT)
        manifest_template_hash(hash, json_object_get(json_object_get(obj, "spec"), "template"));
    if ((rc = keep_selector(c, k, ns, name, &wl.selector, &tp.labels, hash)))
        return rc;
    if (k->id == MANIFEST_KIND_DEPLOYMENT) {
        struct kube_label l;

        l.key = "pod-template-hash";
        l.value = arena_strdup(&in->arena, hash);
        if (!l.value || labels_with(&in->arena, &tp.labels, &l, 1, &shared))
            return manifest_nomem(c);
        snprintf(base, sizeof(base), "%s-%s-", name, hash);
        snprintf(rs, sizeof(rs), "%s-%s", name, hash);
        if (!(w.rs_name = arena_strdup(&in->arena, rs)))
            return manifest_nomem(c);
    } else if (k->id == MANIFEST_KIND_JOB && !wl.indexed) {
        struct kube_label l[2] = {{"batch.kubernetes.io/job-name", tp.owner.name},
                                  {"job-name", tp.owner.name}};

        if (labels_with(&in->arena, &tp.labels, l, 2, &shared))
            return manifest_nomem(c);
        snprintf(base, sizeof(base), "%s-", name);
    } else {
        snprintf(base, sizeof(base), "%s-", name);
    }
    if (k->id == MANIFEST_KIND_REPLICASET && wl.controller.kind &&
        !strcmp(wl.controller.kind, "Deployment"))
        w.controller = wl.controller.name;
    w.shared = shared;
    if (!(w.base = arena_strdup(&in->arena, base)))
        return manifest_nomem(c);
    return defer(c, &w, &tp);
}

/* ---- manifest_input_finish: the pods the workloads create ---- */

/* The active pods of the input by controller: "Kind/ns/name" (and the same with "#INDEX" or
 * "@NODE" appended, see manifest_owner_key) to their count. */
struct owners {
    struct keymap map;
    struct arena keys; /* keys of pods[] (the stubs' live in the stub arena) */
};

static int owners_add(struct owners *o, const char *key, size_t len)
{
    const char *suffix = key + strlen(key) + 1;
    void *old = NULL;
    int rc;

    if ((rc = keymap_put(&o->map, key, (void *)((uintptr_t)keymap_get(&o->map, key) + 1), &old)))
        return rc;
    if (*suffix) {
        /* "Kind/ns/name" + suffix as one string */
        size_t klen = strlen(key);
        char *both = arena_alloc(&o->keys, len - 1);

        if (!both)
            return -ENOMEM;
        memcpy(both, key, klen);
        memcpy(both + klen, suffix, strlen(suffix) + 1);
        rc = keymap_put(&o->map, both, (void *)((uintptr_t)keymap_get(&o->map, both) + 1), &old);
    }
    return rc;
}

static size_t owners_count(const struct owners *o, const char *kind, const char *ns,
                           const char *name, const char *suffix)
{
    char key[1024];
    int n = snprintf(key, sizeof(key), "%s/%s/%s%s", kind, ns, name, suffix ? suffix : "");

    return n < 0 || (size_t)n >= sizeof(key) ? 0 : (size_t)(uintptr_t)keymap_get(&o->map, key);
}

static int owners_build(struct manifest_input *in, struct owners *o)
{
    struct manifest_input_priv *pv = in->priv;
    char buf[1024];
    size_t i, n;
    int rc = 0;

    for (i = 0; i < pv->nstubs && !rc; i++)
        if (pv->stubs[i].owner)
            rc = owners_add(o, pv->stubs[i].owner,
                            strlen(pv->stubs[i].owner) + 2 +
                                strlen(pv->stubs[i].owner + strlen(pv->stubs[i].owner) + 1));
    for (i = 0; i < in->npods && !rc; i++) {
        char *copy;

        if (!(n = manifest_owner_key(&in->pods[i], buf, sizeof(buf))))
            continue;
        if (!(copy = arena_alloc(&o->keys, n)))
            return -ENOMEM;
        memcpy(copy, buf, n);
        rc = owners_add(o, copy, n);
    }
    /* a Deployment whose ReplicaSet is in the input leaves the pods to it */
    for (i = 0; i < pv->nds && !rc; i++) {
        const struct manifest_pending_workload *w = &pv->ds[i];
        char *key;

        if (!w->controller)
            continue;
        n = strlen(w->tmpl.namespace_) + strlen(w->controller) + sizeof("ReplicaSet-of/") + 2;
        if (!(key = arena_alloc(&o->keys, n)))
            return -ENOMEM;
        snprintf(key, n, "ReplicaSet-of/%s/%s", w->tmpl.namespace_, w->controller);
        rc = owners_add(o, key, n);
    }
    return rc;
}

/* create_pods appends the pods w's controller creates: those its existing pods do not stand
 * for (counted in o), each named and labelled as the controller would. */
static int create_pods(struct manifest_ctx *c, struct manifest_pending_workload *w,
                       const struct owners *o)
{
    struct manifest_input *in = c->in;
    const struct kube_pod *tp = &w->tmpl;
    const char *ns = tp->namespace_, *name = tp->owner.name;
    size_t i, have = 0, first = in->npods;
    int rc;

    switch (w->kind) {
    case MANIFEST_KIND_DEPLOYMENT:
        if (owners_count(o, "ReplicaSet-of", ns, name, NULL))
            return 0;
        have = owners_count(o, "ReplicaSet", ns, w->rs_name, NULL);
        break;
    case MANIFEST_KIND_REPLICASET:
    case MANIFEST_KIND_REPLICATION_CONTROLLER:
        have = owners_count(o, tp->owner.kind, ns, name, NULL);
        break;
    case MANIFEST_KIND_JOB:
        if (!w->indexed)
            have = owners_count(o, "Job", ns, name, NULL);
        break;
    default:
        break;
    }
    for (i = 0; i < w->replicas && have < w->replicas; i++) {
        struct kube_pod p = *tp;
        char buf[352];

        p.labels = w->shared;
        if (w->kind == MANIFEST_KIND_STATEFULSET) {
            char idx[24];
            struct kube_label l[2];

            snprintf(buf, sizeof(buf), "%s-%zu", name, i);
            if (manifest_pod_set_find(in, ns, buf) >= 0)
                continue; /* the ordinal exists: the controller creates only missing ones */
            snprintf(idx, sizeof(idx), "%zu", i);
            p.name = arena_strdup(&in->arena, buf);
            l[0].key = "apps.kubernetes.io/pod-index";
            l[0].value = arena_strdup(&in->arena, idx);
            l[1].key = "statefulset.kubernetes.io/pod-name";
            l[1].value = p.name;
            if (!p.name || !l[0].value || labels_with(&in->arena, &tp->labels, l, 2, &p.labels))
                return manifest_nomem(c);
        } else if (w->indexed) {
            char idx[24];
            struct kube_label l[3];

            snprintf(idx, sizeof(idx), "#%zu", i);
            if (owners_count(o, "Job", ns, name, idx))
                continue; /* an active pod has this completion index */
            snprintf(buf, sizeof(buf), "%s-%zu-", name, i);
            p.name = manifest_generated_name(c, ns, buf, i);
            l[0].key = "batch.kubernetes.io/job-completion-index";
            l[0].value = arena_strdup(&in->arena, idx + 1);
            l[1].key = "batch.kubernetes.io/job-name";
            l[1].value = tp->owner.name;
            l[2].key = "job-name";
            l[2].value = tp->owner.name;
            if (!p.name || !l[0].value || labels_with(&in->arena, &tp->labels, l, 3, &p.labels))
                return manifest_nomem(c);
        } else {
            if (i >= w->replicas - have)
                break;
            p.name = manifest_generated_name(c, ns, w->base, i);
            if (!p.name)
                return manifest_fail(c, w->line, "metadata.name", -EEXIST,
                                     "cannot find a free name for a pod of %s %s", tp->owner.kind,
                                     name);
        }
        rc = manifest_append_pod(c, &p, w->line, "metadata.name");
        if (rc)
            return rc;
    }
    w->npods = in->npods - first;
    return 0;
}

/* ds_may_run: nodeShouldRunDaemonPod's predicates (nodeName, node affinity and selector,
 * taints with the DaemonSet tolerations). */
static bool ds_may_run(const struct kube_pod *p, const struct kube_node *n)
{
    size_t i, j;

    if (p->node_name && *p->node_name && strcmp(p->node_name, n->name))
        return false;
    for (i = 0; i < p->node_selector.n; i++) {
        const char *v = kube_labels_get(&n->labels, p->node_selector.v[i].key);

        if (!v || strcmp(v, p->node_selector.v[i].value))
            return false;
    }
    if (p->has_required_affinity && !kube_node_selector_matches(&p->required, n))
        return false;
    for (i = 0; i < n->ntaints; i++) {
        const struct kube_taint *t = &n->taints[i];

        if (t->effect != KUBE_EFFECT_NO_SCHEDULE && t->effect != KUBE_EFFECT_NO_EXECUTE)
            continue;
        for (j = 0; j < p->ntolerations; j++)
            if (kube_toleration_tolerates(&p->tolerations[j], t))
                break;
        if (j == p->ntolerations)
            return false;
    }
    return true;
}

/* ds_add_tolerations: AddOrUpdateDaemonPodTolerations. A toleration equal in key, operator,
 * value and effect is replaced (losing tolerationSeconds), others are appended. */
static int ds_add_tolerations(struct arena *a, struct kube_pod *p)
{
    static const struct {
        const char *key;
        enum kube_taint_effect effect;
    } defaults[] = {
        {"node.kubernetes.io/not-ready", KUBE_EFFECT_NO_EXECUTE},
        {"node.kubernetes.io/unreachable", KUBE_EFFECT_NO_EXECUTE},
        {"node.kubernetes.io/disk-pressure", KUBE_EFFECT_NO_SCHEDULE},
        {"node.kubernetes.io/memory-pressure", KUBE_EFFECT_NO_SCHEDULE},
        {"node.kubernetes.io/pid-pressure", KUBE_EFFECT_NO_SCHEDULE},
        {"node.kubernetes.io/unschedulable", KUBE_EFFECT_NO_SCHEDULE},
        {"node.kubernetes.io/network-unavailable", KUBE_EFFECT_NO_SCHEDULE},
    };
    size_t nd = sizeof(defaults) / sizeof(defaults[0]) - (p->host_network ? 0 : 1);
    struct kube_toleration *v = arena_alloc(a, (p->ntolerations + nd) * sizeof(*v));
    size_t n = p->ntolerations, i, j;

    if (!v)
        return -ENOMEM;
    if (n)
        memcpy(v, p->tolerations, n * sizeof(*v));
    for (i = 0; i < nd; i++) {
        for (j = 0; j < n; j++)
            if (v[j].op == KUBE_TOL_EXISTS && !strcmp(v[j].key, defaults[i].key) && !*v[j].value &&
                v[j].effect == defaults[i].effect)
                break;
        if (j == n) {
            memset(&v[n], 0, sizeof(v[n]));
            n++;
        }
        v[j].key = defaults[i].key;
        v[j].op = KUBE_TOL_EXISTS;
        v[j].value = "";
        v[j].effect = defaults[i].effect;
        v[j].has_seconds = false;
        v[j].seconds = 0;
    }
    p->tolerations = v;
    p->ntolerations = n;
    return 0;
}

/* ds_pin: ReplaceDaemonSetPodNodeNameNodeAffinity: the required terms become the single term
 * matchFields metadata.name In [node]. */
static int ds_pin(struct arena *a, struct kube_pod *p, const char *node)
{
    struct kube_node_selector_term *t = arena_alloc(a, sizeof(*t));
    struct kube_requirement *r = arena_alloc(a, sizeof(*r));
    const char **vals = arena_alloc(a, sizeof(*vals));

    /* a copy: the nodes may be trimmed away before the pods are used */
    node = arena_strdup(a, node);
    if (!t || !r || !vals || !node)
        return -ENOMEM;
    vals[0] = node;
    r->key = "metadata.name";
    r->op = KUBE_OP_IN;
    r->values = vals;
    r->nvalues = 1;
    t->fields = r;
    t->nfields = 1;
    p->required.terms = t;
    p->required.nterms = 1;
    p->has_required_affinity = true;
    return 0;
}

/* create_daemon_pods appends one pod of DaemonSet w per node it may run on and has none of
 * its active pods yet. */
static int create_daemon_pods(struct manifest_ctx *c, struct manifest_pending_workload *w,
                              const struct owners *o)
{
    struct manifest_input *in = c->in;
    struct kube_pod *tp = &w->tmpl;
    size_t i, first = in->npods;
    char base[320], at[300];
    int rc;

    if (ds_add_tolerations(&in->arena, tp))
        return manifest_nomem(c);
    snprintf(base, sizeof(base), "%s-", tp->owner.name);
    for (i = 0; i < in->nnodes; i++) {
        struct kube_pod p;

        if (!ds_may_run(tp, &in->nodes[i]))
            continue;
        snprintf(at, sizeof(at), "@%s", in->nodes[i].name);
        if (owners_count(o, "DaemonSet", tp->namespace_, tp->owner.name, at))
            continue; /* it runs there already */
        p = *tp;
        p.name = manifest_generated_name(c, p.namespace_, base, i);
        if (!p.name || ds_pin(&in->arena, &p, in->nodes[i].name))
            return manifest_nomem(c);
        if ((rc = manifest_append_pod(c, &p, tp->source_line, NULL)))
            return rc;
    }
    w->npods = in->npods - first;
    return 0;
}

/* place_created moves the pods created after pods[first] to where their workloads appeared:
 * the explicit pods move up in place, the created ones come from a copy of their own. */
static int place_created(struct manifest_input *in, size_t first)
{
    struct manifest_input_priv *pv = in->priv;
    size_t ncreated = in->npods - first, dst = in->npods, end = first, from[2], d;
    struct kube_pod *created;

    if (!ncreated)
        return 0;
    if (!(created = malloc(ncreated * sizeof(*created))))
        return -ENOMEM;
    memcpy(created, &in->pods[first], ncreated * sizeof(*created));
    /* created[] holds the other workloads' pods, then the DaemonSets' (creation order):
     * from[] starts at the end of each part, walking back */
    from[0] = 0;
    from[1] = ncreated;
    for (d = 0; d < pv->nds; d++)
        if (pv->ds[d].kind != MANIFEST_KIND_DAEMONSET)
            from[0] += pv->ds[d].npods;
    for (d = pv->nds; d-- > 0;) {
        struct manifest_pending_workload *w = &pv->ds[d];
        size_t *f = &from[w->kind == MANIFEST_KIND_DAEMONSET];

        dst -= end - w->pos;
        memmove(&in->pods[dst], &in->pods[w->pos], (end - w->pos) * sizeof(*in->pods));
        end = w->pos;
        *f -= w->npods;
        dst -= w->npods;
        memcpy(&in->pods[dst], &created[*f], w->npods * sizeof(*in->pods));
    }
    free(created);
    return manifest_set_rebuild(in, &pv->pod_set, 1, in->npods, 0);
}

int manifest_finish_workloads(struct manifest_input *in, struct err *err)
{
    struct manifest_input_priv *pv = in->priv;
    struct owners o = {KEYMAP_INIT, ARENA_INIT};
    size_t first = in->npods, d;
    struct manifest_ctx c;
    int rc = 0, pass;

    if (!pv->nds)
        return 0;
    memset(&c, 0, sizeof(c));
    c.in = in;
    c.err = err;
    if (owners_build(in, &o)) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    pv->deferred_pods = 0; /* from now on they are created */
    /* the DaemonSets last, as they always were, so every name stays what it was */
    for (pass = 0; pass < 2 && !rc; pass++)
        for (d = 0; d < pv->nds && !rc; d++) {
            struct manifest_pending_workload *w = &pv->ds[d];

            if ((w->kind == MANIFEST_KIND_DAEMONSET) != pass)
                continue;
            c.file = w->tmpl.source_file;
            rc = pass ? create_daemon_pods(&c, w, &o) : create_pods(&c, w, &o);
            if (!rc && in->opts.keep_objects)
                in->objects[w->object].npods = w->npods;
        }
    if (!rc && place_created(in, first))
        rc = err_set(err, -ENOMEM, "out of memory");
out:
    keymap_release(&o.map);
    arena_release(&o.keys);
    return rc;
}
