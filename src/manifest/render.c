/* render.c - the input as a v1 List of API objects (see render.h). Controllers' pods are
 * built from the workload's template JSON, not from the decoded pod, so fields gpusched does
 * not model reach the oracle as written; what the loader decided (names, labels, priority,
 * a DaemonSet's node and tolerations) comes from the decoded pod. */
#include "manifest/render.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "manifest/names-int.h"

/* kinds whose objects have no namespace (every other kind gets one) */
static const char *const cluster_scoped[] = {
    "Node",        "PriorityClass",      "RuntimeClass",
    "Namespace",   "PersistentVolume",   "StorageClass",
    "CSINode",     "CSIDriver",          "VolumeAttachment",
    "DeviceClass", "ResourceSlice",      "DeviceTaintRule",
    "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition",
};

static bool is_cluster_scoped(const char *kind)
{
    size_t i;

    for (i = 0; i < sizeof(cluster_scoped) / sizeof(cluster_scoped[0]); i++)
        if (!strcmp(kind, cluster_scoped[i]))
            return true;
    return false;
}

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h * 0x100000001b3ULL; /* a separator, so "ab"+"c" differs from "a"+"bc" */
}

/* a stable UUID-shaped uid for an object nobody created: version 4 bits, hashed contents */
static json_t *uid_of(const char *kind, const char *ns, const char *name)
{
    uint64_t a = fnv(fnv(fnv(0xcbf29ce484222325ULL, kind), ns), name);
    uint64_t b = fnv(a ^ 0x9e3779b97f4a7c15ULL, name);
    char s[40];

    snprintf(s, sizeof(s), "%08" PRIx32 "-%04" PRIx32 "-4%03" PRIx32 "-8%03" PRIx32 "-%012" PRIx64,
             (uint32_t)(a >> 32), (uint32_t)(a >> 16) & 0xffff, (uint32_t)a & 0xfff,
             (uint32_t)(b >> 48) & 0xfff, (uint64_t)(b & 0xffffffffffffULL));
    return json_string(s);
}

/* the object's metadata (created when missing); NULL when out of memory */
static json_t *metadata(json_t *o)
{
    json_t *md = json_object_get(o, "metadata");

    if (json_is_object(md))
        return md;
    md = json_object();
    if (json_object_set_new(o, "metadata", md))
        return NULL;
    return md;
}

static int set_str(json_t *o, const char *key, const char *v)
{
    return json_object_set_new(o, key, json_string(v));
}

/* apiVersion and kind first, as the API writes them */
static json_t *typed(const char *api_version, const char *kind, json_t *rest)
{
    json_t *o = json_object();
    const char *k;
    json_t *v;

    if (!o || set_str(o, "apiVersion", api_version) || set_str(o, "kind", kind))
        goto fail;
    json_object_foreach(rest, k, v) if (strcmp(k, "apiVersion") && strcmp(k, "kind") &&
                                        json_object_set(o, k, v)) goto fail;
    return o;
fail:
    json_decref(o);
    return NULL;
}

static json_t *owner_ref(const char *api_version, const char *kind, const char *ns,
                         const char *name)
{
    json_t *refs = json_array(), *r = json_object();

    if (!refs || !r || set_str(r, "apiVersion", api_version) || set_str(r, "kind", kind) ||
        set_str(r, "name", name) || json_object_set_new(r, "uid", uid_of(kind, ns, name)) ||
        json_object_set_new(r, "controller", json_true()) ||
        json_object_set_new(r, "blockOwnerDeletion", json_true()) || json_array_append(refs, r)) {
        json_decref(refs);
        json_decref(r);
        return NULL;
    }
    json_decref(r);
    return refs;
}

static json_t *labels_json(const struct kube_labels *l)
{
    json_t *o = json_object();
    size_t i;

    for (i = 0; o && i < l->n; i++)
        if (set_str(o, l->v[i].key, l->v[i].value)) {
            json_decref(o);
            return NULL;
        }
    return o;
}

static const char *effect_name(enum kube_taint_effect e)
{
    switch (e) {
    case KUBE_EFFECT_NO_SCHEDULE:
        return "NoSchedule";
    case KUBE_EFFECT_PREFER_NO_SCHEDULE:
        return "PreferNoSchedule";
    case KUBE_EFFECT_NO_EXECUTE:
        return "NoExecute";
    default:
        return NULL;
    }
}

static json_t *tolerations_json(const struct kube_pod *p)
{
    json_t *a = json_array();
    size_t i;

    for (i = 0; a && i < p->ntolerations; i++) {
        const struct kube_toleration *t = &p->tolerations[i];
        json_t *o = json_object();
        const char *e = effect_name(t->effect);

        if (!o || (*t->key && set_str(o, "key", t->key)) ||
            set_str(o, "operator", t->op == KUBE_TOL_EXISTS ? "Exists" : "Equal") ||
            (*t->value && set_str(o, "value", t->value)) || (e && set_str(o, "effect", e)) ||
            (t->has_seconds &&
             json_object_set_new(o, "tolerationSeconds", json_integer(t->seconds))) ||
            json_array_append_new(a, o)) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* the DaemonSet's pin: its required node affinity becomes matchFields metadata.name In [node] */
static int ds_pin(json_t *spec, const struct kube_pod *p)
{
    const char *node;
    json_t *aff, *na, *req;

    if (!p->has_required_affinity || !p->required.nterms || !p->required.terms[0].nfields ||
        !p->required.terms[0].fields[0].nvalues)
        return 0;
    node = p->required.terms[0].fields[0].values[0];
    aff = json_object_get(spec, "affinity");
    if (!json_is_object(aff) && json_object_set_new(spec, "affinity", aff = json_object()))
        return -ENOMEM;
    na = json_object_get(aff, "nodeAffinity");
    if (!json_is_object(na) && json_object_set_new(aff, "nodeAffinity", na = json_object()))
        return -ENOMEM;
    req = json_pack("{s:[{s:[{s:s,s:s,s:[s]}]}]}", "nodeSelectorTerms", "matchFields", "key",
                    "metadata.name", "operator", "In", "values", node);
    return json_object_set_new(na, "requiredDuringSchedulingIgnoredDuringExecution", req) ? -ENOMEM
                                                                                          : 0;
}

/* the pod a controller creates from its template tmpl for the loader's pod p */
static json_t *controller_pod(const json_t *tmpl, const struct kube_pod *p, const char *owner_av,
                              const char *owner_kind, const char *owner_name,
                              const char *default_class)
{
    json_t *tmd = json_object_get(tmpl, "metadata"), *tspec = json_object_get(tmpl, "spec");
    json_t *pod = json_object(), *md = json_is_object(tmd) ? json_deep_copy(tmd) : json_object();
    json_t *spec = json_is_object(tspec) ? json_deep_copy(tspec) : json_object();
    const char *cls =
        p->priority_class_name && *p->priority_class_name ? p->priority_class_name : default_class;

    if (!pod || !md || !spec || set_str(pod, "apiVersion", "v1") || set_str(pod, "kind", "Pod") ||
        set_str(md, "name", p->name) || set_str(md, "namespace", p->namespace_) ||
        json_object_set_new(md, "labels", labels_json(&p->labels)) ||
        json_object_set_new(md, "ownerReferences",
                            owner_ref(owner_av, owner_kind, p->namespace_, owner_name)) ||
        json_object_set(pod, "metadata", md) || json_object_set(pod, "spec", spec))
        goto fail;
    json_object_del(md, "generateName");
    if (json_object_set_new(spec, "priority", json_integer(p->priority)) ||
        (cls && set_str(spec, "priorityClassName", cls)) ||
        set_str(spec, "preemptionPolicy", p->preempt_never ? "Never" : "PreemptLowerPriority"))
        goto fail;
    if (!strcmp(owner_kind, "DaemonSet") &&
        (ds_pin(spec, p) || json_object_set_new(spec, "tolerations", tolerations_json(p))))
        goto fail;
    json_decref(md);
    json_decref(spec);
    return pod;
fail:
    json_decref(md);
    json_decref(spec);
    json_decref(pod);
    return NULL;
}

/* a Deployment's ReplicaSet NAME-HASH: its selector and template with pod-template-hash */
static json_t *deployment_rs(const json_t *dep, const char *ns, const char *name, const char *hash,
                             char *rs_name, size_t rs_size)
{
    json_t *spec = json_object_get(dep, "spec"), *rs = NULL, *md, *rspec, *sel, *ml, *tmpl, *tmd,
           *tl, *labels;
    json_t *dmd = json_object_get(dep, "metadata");

    snprintf(rs_name, rs_size, "%s-%s", name, hash);
    rs = json_object();
    md = json_object();
    rspec = json_object();
    if (!rs || !md || !rspec || set_str(rs, "apiVersion", "apps/v1") ||
        set_str(rs, "kind", "ReplicaSet") || json_object_set(rs, "metadata", md) ||
        json_object_set(rs, "spec", rspec) || set_str(md, "name", rs_name) ||
        set_str(md, "namespace", ns))
        goto fail;
    tmpl = json_deep_copy(json_object_get(spec, "template"));
    if (!tmpl || json_object_set_new(rspec, "template", tmpl))
        goto fail;
    tmd = metadata(tmpl);
    tl = tmd ? json_object_get(tmd, "labels") : NULL;
    if (!tmd || (!json_is_object(tl) && json_object_set_new(tmd, "labels", tl = json_object())) ||
        set_str(tl, "pod-template-hash", hash))
        goto fail;
    labels = json_deep_copy(tl);
    if (!labels || json_object_set_new(md, "labels", labels) ||
        json_object_set_new(md, "ownerReferences", owner_ref("apps/v1", "Deployment", ns, name)))
        goto fail;
    if (json_is_object(dmd) && json_is_object(json_object_get(dmd, "annotations")) &&
        json_object_set(md, "annotations", json_object_get(dmd, "annotations")))
        goto fail;
    if (json_object_set(rspec, "replicas",
                        json_object_get(spec, "replicas") ? json_object_get(spec, "replicas")
                                                          : json_integer(1)))
        goto fail;
    sel = json_deep_copy(json_object_get(spec, "selector"));
    if (!json_is_object(sel)) {
        json_decref(sel);
        sel = json_object();
    }
    if (!sel || json_object_set_new(rspec, "selector", sel))
        goto fail;
    ml = json_object_get(sel, "matchLabels");
    if ((!json_is_object(ml) && json_object_set_new(sel, "matchLabels", ml = json_object())) ||
        set_str(ml, "pod-template-hash", hash))
        goto fail;
    json_decref(md);
    json_decref(rspec);
    return rs;
fail:
    json_decref(md);
    json_decref(rspec);
    json_decref(rs);
    return NULL;
}

static const char *api_version_of(const json_t *o, const char *dflt)
{
    const json_t *v = json_object_get(o, "apiVersion");

    return json_is_string(v) ? json_string_value(v) : dflt;
}

/* the default apiVersion of the kinds that may come without one (items of typed lists) */
static const char *default_api_version(const char *kind)
{
    if (!strcmp(kind, "Deployment") || !strcmp(kind, "ReplicaSet") ||
        !strcmp(kind, "StatefulSet") || !strcmp(kind, "DaemonSet"))
        return "apps/v1";
    if (!strcmp(kind, "Job"))
        return "batch/v1";
    if (!strcmp(kind, "PriorityClass"))
        return "scheduling.k8s.io/v1";
    return "v1";
}

/* render_object hands fn the items object o (parsed from its text) stands for, and the pods of
 * in->pods from *k on that it created */
static int render_object(const struct manifest_input *in, const struct manifest_object *mo,
                         json_t *o, size_t *k, const char *default_class, manifest_render_fn fn,
                         void *ctx, struct err *err)
{
    const char *kind = mo->kind, *av = api_version_of(o, default_api_version(kind));
    json_t *md = json_object_get(o, "metadata");
    const char *name = json_is_object(md) ? json_string_value(json_object_get(md, "name")) : NULL;
    const json_t *tmpl = json_object_get(json_object_get(o, "spec"), "template");
    const char *owner_kind = kind, *owner_av = av, *owner = name;
    char rs_name[400];
    json_t *obj = NULL;
    size_t j;
    int rc;

    if (*k + mo->npods > in->npods)
        return err_set(err, -EINVAL,
                       "internal error: the objects and the pods of the input disagree");
    if (!strcmp(kind, "Pod")) {
        /* as given: only what the API server would fill in that the loader decided */
        const struct kube_pod *p = &in->pods[(*k)++];

        if (!(obj = typed("v1", "Pod", o)) || !(md = json_deep_copy(metadata(obj))) ||
            json_object_set_new(obj, "metadata", md) || set_str(md, "name", p->name) ||
            set_str(md, "namespace", p->namespace_))
            goto nomem;
        json_object_del(md, "generateName");
        return fn(ctx, obj);
    }
    if (!strcmp(kind, "Deployment")) {
        char hash[11];
        const char *ns = mo->npods ? in->pods[*k].namespace_ : NULL;
        const char *dns = json_string_value(json_object_get(md, "namespace"));

        if (!ns)
            ns = dns && *dns ? dns : in->opts.default_namespace;
        manifest_template_hash(hash, tmpl);
        if (!(obj = deployment_rs(o, ns, name, hash, rs_name, sizeof(rs_name))))
            goto nomem;
        if ((rc = fn(ctx, obj)))
            return rc;
        owner_kind = "ReplicaSet";
        owner_av = "apps/v1";
        owner = rs_name;
    } else if (strcmp(kind, "Job") && strcmp(kind, "DaemonSet")) {
        /* everything else as read, with apiVersion, kind and a namespace */
        if (!(obj = typed(av, kind, o)))
            goto nomem;
        if (!is_cluster_scoped(kind)) {
            json_t *omd = json_deep_copy(metadata(obj));
            const char *ns = json_string_value(json_object_get(omd, "namespace"));

            if (!omd || json_object_set_new(obj, "metadata", omd) ||
                (!(ns && *ns) && set_str(omd, "namespace", in->opts.default_namespace)))
                goto nomem;
        }
        if ((rc = fn(ctx, obj)))
            return rc;
    }
    for (j = 0; j < mo->npods; j++, (*k)++) {
        if (!(obj =
                  controller_pod(tmpl, &in->pods[*k], owner_av, owner_kind, owner, default_class)))
            goto nomem;
        if ((rc = fn(ctx, obj)))
            return rc;
    }
    return 0;
nomem:
    json_decref(obj);
    return err_set(err, -ENOMEM, "out of memory");
}

int manifest_render_each(const struct manifest_input *in, manifest_render_fn fn, void *ctx,
                         struct err *err)
{
    const char *default_class = NULL;
    size_t i, k = 0;
    int rc = 0;

    for (i = 0; i < in->nclasses; i++)
        if (in->classes[i].global_default)
            default_class = in->classes[i].name;
    for (i = 0; i < in->nobjects && !rc; i++) {
        const struct manifest_object *mo = &in->objects[i];
        json_t *o = json_loadb(mo->text, mo->len, JSON_ALLOW_NUL, NULL);

        if (!o)
            return err_set(err, -ENOMEM, "out of memory");
        rc = render_object(in, mo, o, &k, default_class, fn, ctx, err);
        json_decref(o);
    }
    return rc;
}
