/* objects.c - Pods, Nodes and PriorityClasses of the input (see objects.h). */
#include "manifest/objects-int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kube/decode.h"
#include "kube/rules.h"
#include "manifest/names-int.h"

int manifest_check_capacity(struct manifest_ctx *c, int line, const char *field, size_t add_pods)
{
    struct manifest_input *in = c->in;

    size_t have = in->npods + in->ntaken + (in->priv ? in->priv->deferred_pods : 0);

    if (add_pods > in->opts.max_pods || have > in->opts.max_pods - add_pods)
        return manifest_fail(c, line, field, -E2BIG, "the input would hold more than %zu pods",
                             in->opts.max_pods);
    return 0;
}

/* check_new_pod fails when ns/name is already taken */
static int check_new_pod(struct manifest_ctx *c, const char *ns, const char *name, int line,
                         const char *field)
{
    long dup = manifest_pod_set_find(c->in, ns, name);
    const char *file;
    int dline;

    if (dup < 0)
        return 0;
    manifest_pod_where(c->in, (uint32_t)dup, &file, &dline);
    return manifest_fail(c, line, field, -EEXIST,
                         "pods \"%s\" already exists in namespace \"%s\" (defined at %s: line %d)",
                         name, ns, file, dline);
}

/* manifest_append_pod adds p as the next pod; its name must not be in use in its namespace. */
int manifest_append_pod(struct manifest_ctx *c, const struct kube_pod *p, int line,
                        const char *field)
{
    struct manifest_input *in = c->in;
    int rc;

    if ((rc = check_new_pod(c, p->namespace_, p->name, line, field)) ||
        (rc = manifest_check_capacity(c, line, field, 1)))
        return rc;
    if (manifest_grow((void **)&in->pods, &in->priv->cap_pods, in->npods + 1, sizeof(*in->pods)))
        return manifest_nomem(c);
    in->pods[in->npods++] = *p;
    if (kube_pod_merge_label_keys(&in->pods[in->npods - 1], &in->arena)) {
        in->npods--;
        return manifest_nomem(c);
    }
    if (manifest_set_add_last(in, 1, 0)) {
        in->npods--;
        return manifest_nomem(c);
    }
    if (p->node_name && *p->node_name)
        in->priv->bound_kept = 1;
    return 0;
}

/* manifest_find_class returns the PriorityClass called name: one of the input's so far, or a
 * built-in one; NULL when there is none (yet). */
const struct kube_priority_class *manifest_find_class(const struct manifest_input *in,
                                                      const char *name)
{
    static const struct kube_priority_class builtin[] = {
        {"system-cluster-critical", 2000000000, false, false},
        {"system-node-critical", 2000001000, false, false},
    };
    size_t i;

    for (i = 0; i < in->nclasses; i++)
        if (!strcmp(in->classes[i].name, name))
            return &in->classes[i];
    for (i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
        if (!strcmp(builtin[i].name, name))
            return &builtin[i];
    return NULL;
}

/* stub_str copies s into the stub arena, or reuses *last when it is the same string */
static const char *stub_str(struct manifest_input_priv *pv, const char **last, const char *s)
{
    if (last && *last && !strcmp(*last, s))
        return *last;
    s = arena_strdup(&pv->stub_arena, s);
    if (last && s)
        *last = s;
    return s;
}

static const struct kube_runtime_class *find_runtime_class(const struct manifest_input *in,
                                                           const char *name)
{
    size_t i;

    for (i = 0; i < in->priv->nrcs; i++)
        if (!strcmp(in->priv->rcs[i].name, name))
            return &in->priv->rcs[i];
    return NULL;
}

/* the RuntimeClass admission: the class's overhead when the pod gives none. Returns 0 or
 * -ENOMEM (a's). */
static int admit_runtime_class(struct arena *a, struct kube_pod *p,
                               const struct kube_runtime_class *rc)
{
    const struct kube_resources *o = &kube_pod_ext(p)->overhead;
    struct kube_pod_extra *x;

    if (!rc->has_overhead || o->set || o->nscalars)
        return 0;
    if (!(x = kube_pod_extra_own(p, a)))
        return -ENOMEM;
    x->overhead = rc->overhead;
    return 0;
}

/* can_hand_off: the pod is bound, no bound pod was kept before it, and its priority is final
 * now: given, or from a class already known. Sets the priority from the class (as
 * manifest_finish_priorities would) when it is not given. */
static bool can_hand_off(struct manifest_input *in, struct kube_pod *p)
{
    const struct kube_priority_class *pc;
    const char *name = p->priority_class_name;

    if (!in->opts.take_bound || in->priv->bound_kept || !p->node_name || !*p->node_name)
        return false;
    if (p->runtime_class_name && *p->runtime_class_name) {
        /* its overhead counts on the node: the class must be known now */
        const struct kube_runtime_class *rc = find_runtime_class(in, p->runtime_class_name);

        /* out of memory: kept, finish admits it again and reports that */
        if (!rc || rc->has_scheduling || admit_runtime_class(&in->arena, p, rc))
            return false;
    }
    if (!name || !*name)
        return p->has_priority; /* else a globalDefault class read later would decide it */
    pc = manifest_find_class(in, name);
    if (!pc)
        return false; /* read later, or missing: finish reports that */
    if (!p->has_priority)
        p->priority = pc->value;
    p->has_priority = true;
    p->preempt_never = p->preempt_never || pc->preempt_never;
    return true;
}

/* stub_owner copies manifest_owner_key's key of p into the stub arena (NULL when p has no
 * active controller), reusing the previous copy when it repeats (a controller's pods usually
 * come together). */
static int stub_owner(struct manifest_input_priv *pv, const struct kube_pod *p, const char **out)
{
    char key[1024];
    size_t n = manifest_owner_key(p, key, sizeof(key));
    char *copy;

    *out = NULL;
    if (!n)
        return 0;
    if (pv->stub_owner && pv->stub_owner_len == n && !memcmp(pv->stub_owner, key, n)) {
        *out = pv->stub_owner;
        return 0;
    }
    if (!(copy = arena_alloc(&pv->stub_arena, n)))
        return -ENOMEM;
    memcpy(copy, key, n);
    pv->stub_owner = *out = copy;
    pv->stub_owner_len = n;
    return 0;
}

/* hand_off passes a bound pod to opts.take_bound and keeps its stub. */
static int hand_off(struct manifest_ctx *c, const struct kube_pod *p, int line)
{
    struct manifest_input *in = c->in;
    struct manifest_input_priv *pv = in->priv;
    struct manifest_pod_stub st;
    int rc;

    if ((rc = check_new_pod(c, p->namespace_, p->name, line, "metadata.name")) ||
        (rc = manifest_check_capacity(c, line, "metadata.name", 1)))
        return rc;
    st.ns = stub_str(pv, &pv->stub_ns, p->namespace_);
    st.name = stub_str(pv, NULL, p->name);
    st.node = stub_str(pv, &pv->stub_node, p->node_name);
    st.file = c->file;
    st.line = line;
    if (!st.ns || !st.name || !st.node || stub_owner(pv, p, &st.owner) ||
        manifest_grow((void **)&pv->stubs, &pv->cap_stubs, pv->nstubs + 1, sizeof(*pv->stubs)))
        return manifest_nomem(c);
    pv->stubs[pv->nstubs++] = st;
    if (manifest_set_add_last(in, 1, 1)) {
        pv->nstubs--;
        return manifest_nomem(c);
    }
    rc = in->opts.take_bound(in->opts.take_arg, p, c->err);
    if (rc) {
        if (c->err && !c->err->file[0])
            err_at(c->err, c->file, line, 0);
        return rc;
    }
    in->ntaken++;
    return 0;
}

/* manifest_namespace_intern returns an arena copy of ns, the same one as for the previous pod when
 * the namespace repeats (pods usually come grouped by namespace). */
const char *manifest_namespace_intern(struct manifest_ctx *c, const char *ns)
{
    struct manifest_input_priv *pv = c->in->priv;
    char *copy;

    if (pv->last_ns && !strcmp(pv->last_ns, ns))
        return pv->last_ns;
    /* one copy per namespace: pods of a few namespaces in any order share them (and
     * manifest_finish_namespaces compares them by address) */
    if (!(copy = keymap_get(&pv->ns_map, ns))) {
        if (!(copy = arena_strdup(&c->in->arena, ns)) || keymap_put(&pv->ns_map, copy, copy, NULL))
            return NULL;
    }
    return pv->last_ns = copy;
}

/* manifest_object_namespace: the metadata.namespace of the object being loaded, or the
 * input's default. */
const char *manifest_object_namespace(struct manifest_ctx *c)
{
    const char *ns = c->names.namespace_;

    return ns && *ns ? ns : c->in->opts.default_namespace;
}

int manifest_load_pod(struct manifest_ctx *c, json_t *obj, int line)
{
    const char *ns = manifest_object_namespace(c);
    struct kube_decode_opts o = *manifest_dopts(c, line);
    struct arena_mark mark;
    struct kube_pod p;
    int rc;

    memset(&p, 0, sizeof(p));
    arena_mark(&c->in->arena, &mark);
    if (!c->names.name || !*c->names.name) {
        /* only generateName: the API server picks the name (the pod count so far varies the
         * hash between pods of the same generateName) */
        o.name = manifest_generated_name(c, ns, c->names.generate_name,
                                         c->in->npods + c->in->priv->deferred_pods);
        if (!o.name)
            return manifest_nomem(c);
    }
    /* file NULL: the decoder would copy the name into every object; load_object names it */
    rc = kube_pod_decode(obj, &c->in->arena, &o, &p, c->err);
    if (rc)
        return rc;
    p.source_file = c->file;
    p.source_line = line;
    if (can_hand_off(c->in, &p)) {
        /* counted by the consumer; what was decoded is given back to the arena */
        p.namespace_ = ns;
        if (kube_pod_merge_label_keys(&p, &c->in->arena))
            return manifest_nomem(c);
        rc = hand_off(c, &p, line);
        arena_rewind(&c->in->arena, &mark);
        return rc;
    }
    p.namespace_ = manifest_namespace_intern(c, ns);
    if (!p.namespace_)
        return manifest_nomem(c);
    return manifest_append_pod(c, &p, line, "metadata.name");
}

int manifest_load_node(struct manifest_ctx *c, json_t *obj, int line)
{
    struct manifest_input *in = c->in;
    struct kube_node n;
    long dup;
    int rc;

    memset(&n, 0, sizeof(n));
    rc = kube_node_decode(obj, &in->priv->node_arena, manifest_dopts(c, line), &n, c->err);
    if (rc)
        return rc;
    n.source_file = c->file;
    n.source_line = line;
    dup = manifest_node_set_find(in, n.name);
    if (dup >= 0)
        return manifest_fail(c, line, "metadata.name", -EEXIST,
                             "nodes \"%s\" already exists (defined at %s: line %d)", n.name,
                             in->nodes[dup].source_file ? in->nodes[dup].source_file : "?",
                             in->nodes[dup].source_line);
    if (in->nnodes >= in->opts.max_nodes)
        return manifest_fail(c, line, NULL, -E2BIG, "the input would hold more than %zu nodes",
                             in->opts.max_nodes);
    if (manifest_grow((void **)&in->nodes, &in->priv->cap_nodes, in->nnodes + 1,
                      sizeof(*in->nodes)))
        return manifest_nomem(c);
    in->nodes[in->nnodes++] = n;
    if (manifest_set_add_last(in, 0, 0)) {
        in->nnodes--;
        return manifest_nomem(c);
    }
    return 0;
}

int manifest_load_priority_class(struct manifest_ctx *c, json_t *obj, int line)
{
    struct manifest_input *in = c->in;
    struct kube_priority_class pc;
    size_t i;
    int rc;

    memset(&pc, 0, sizeof(pc));
    rc = kube_priority_class_decode(obj, &in->arena, manifest_dopts(c, line), &pc, c->err);
    if (rc)
        return rc;
    for (i = 0; i < in->nclasses; i++) {
        if (!strcmp(in->classes[i].name, pc.name))
            return manifest_fail(c, line, "metadata.name", -EEXIST,
                                 "priorityclasses.scheduling.k8s.io \"%s\" already exists",
                                 pc.name);
        if (pc.global_default && in->classes[i].global_default)
            return manifest_fail(
                c, manifest_line_of(c, json_object_get(obj, "globalDefault"), line),
                "globalDefault", -EINVAL,
                "Forbidden: PriorityClass %s is already marked as default. Only one "
                "default can exist",
                in->classes[i].name);
    }
    if (manifest_grow((void **)&in->classes, &in->priv->cap_classes, in->nclasses + 1,
                      sizeof(*in->classes)))
        return manifest_nomem(c);
    in->classes[in->nclasses++] = pc;
    return 0;
}

int manifest_load_pdb(struct manifest_ctx *c, json_t *obj, int line)
{
    struct manifest_input *in = c->in;
    struct kube_pdb pdb;
    size_t i;
    int rc;

    rc = kube_pdb_decode(obj, &in->arena, manifest_dopts(c, line), &pdb, c->err);
    if (rc)
        return rc;
    if (!(pdb.namespace_ = manifest_namespace_intern(c, manifest_object_namespace(c))))
        return manifest_nomem(c);
    for (i = 0; i < in->npdbs; i++)
        if (!strcmp(in->pdbs[i].name, pdb.name) && !strcmp(in->pdbs[i].namespace_, pdb.namespace_))
            return manifest_fail(c, line, "metadata.name", -EEXIST,
                                 "poddisruptionbudgets.policy \"%s\" already exists in namespace "
                                 "\"%s\"",
                                 pdb.name, pdb.namespace_);
    if (manifest_grow((void **)&in->pdbs, &in->priv->cap_pdbs, in->npdbs + 1, sizeof(*in->pdbs)))
        return manifest_nomem(c);
    in->pdbs[in->npdbs++] = pdb;
    return 0;
}

int manifest_finish_priorities(struct manifest_input *in, struct err *err)
{
    const struct kube_priority_class *def = NULL;
    size_t i, j;

    for (j = 0; j < in->nclasses; j++)
        if (in->classes[j].global_default)
            def = &in->classes[j];
    for (i = 0; i < in->npods; i++) {
        struct kube_pod *p = &in->pods[i];
        const struct kube_priority_class *pc = NULL;

        if (p->priority_class_name && *p->priority_class_name) {
            pc = manifest_find_class(in, p->priority_class_name);
            if (!pc && p->has_priority) {
                /* a pod dumped from a cluster: admission resolved its priority when it was
                 * created, and kube-scheduler reads only spec.priority */
                if (manifest_warn(in,
                                  "%s: line %d: pod %s/%s: no PriorityClass with name %s "
                                  "was found; keeping its spec.priority %d",
                                  p->source_file ? p->source_file : "-", p->source_line,
                                  p->namespace_, p->name, p->priority_class_name, p->priority))
                    return err_set(err, -ENOMEM, "out of memory");
            } else if (!pc) {
                err_set(err, -ENOENT, "no PriorityClass with name %s was found",
                        p->priority_class_name);
                err_at(err, p->source_file, p->source_line, 0);
                err_field(err, p->owner.kind ? "spec.template.spec.priorityClassName"
                                             : "spec.priorityClassName");
                return -ENOENT;
            }
        } else if (def) {
            pc = def;
            p->priority_class_name = def->name;
        }
        /* the Priority admission: the class (or, without one, PreemptLowerPriority) decides,
         * and a pod that says otherwise is refused */
        if (p->has_preemption_policy && p->preempt_never != (pc && pc->preempt_never)) {
            err_set(err, -EINVAL,
                    "pods \"%s\" is forbidden: the string value of PreemptionPolicy (%s) must not "
                    "be provided in pod spec; priority admission controller computed %s from "
                    "the given PriorityClass name",
                    p->name, p->preempt_never ? "Never" : "PreemptLowerPriority",
                    p->preempt_never ? "PreemptLowerPriority" : "Never");
            err_at(err, p->source_file, p->source_line, 0);
            err_field(err, p->owner.kind ? "spec.template.spec.preemptionPolicy"
                                         : "spec.preemptionPolicy");
            return -EINVAL;
        }
        p->preempt_never = pc && pc->preempt_never;
        if (!p->has_priority)
            p->priority = pc ? pc->value : 0;
        p->has_priority = true;
    }
    return 0;
}

int manifest_load_runtime_class(struct manifest_ctx *c, json_t *obj, int line)
{
    struct manifest_input *in = c->in;
    struct kube_runtime_class rc;
    int code;

    code = kube_runtime_class_decode(obj, &in->arena, manifest_dopts(c, line), &rc, c->err);
    if (code)
        return code;
    if (find_runtime_class(in, rc.name))
        return manifest_fail(c, line, "metadata.name", -EEXIST,
                             "runtimeclasses.node.k8s.io \"%s\" already exists", rc.name);
    if (manifest_grow((void **)&in->priv->rcs, &in->priv->cap_rcs, in->priv->nrcs + 1,
                      sizeof(*in->priv->rcs)))
        return manifest_nomem(c);
    in->priv->rcs[in->priv->nrcs++] = rc;
    return 0;
}

int manifest_finish_runtime_classes(struct manifest_input *in, struct err *err)
{
    size_t i;

    for (i = 0; i < in->npods; i++) {
        struct kube_pod *p = &in->pods[i];
        const struct kube_runtime_class *rc;
        int w = 0;

        if (!p->runtime_class_name || !*p->runtime_class_name)
            continue;
        rc = find_runtime_class(in, p->runtime_class_name);
        if (!rc)
            w = manifest_warn(in,
                              "%s: line %d: pod %s/%s names RuntimeClass %s, which is not in the "
                              "input: its overhead is not counted",
                              p->source_file ? p->source_file : "?", p->source_line, p->namespace_,
                              p->name, p->runtime_class_name);
        else if (rc->has_scheduling)
            w = manifest_warn(in,
                              "%s: line %d: pod %s/%s: the scheduling part (nodeSelector, "
                              "tolerations) of RuntimeClass %s is not modelled",
                              p->source_file ? p->source_file : "?", p->source_line, p->namespace_,
                              p->name, rc->name);
        if (w || (rc && admit_runtime_class(&in->arena, p, rc)))
            return err_set(err, -ENOMEM, "out of memory");
    }
    return 0;
}

int manifest_add_selector(struct manifest_ctx *c, const char *owner_kind, const char *ns,
                          const char *name, const struct kube_label_selector *sel)
{
    struct manifest_input *in = c->in;
    struct manifest_selector *s;

    if (manifest_grow((void **)&in->selectors, &in->priv->cap_selectors, in->nselectors + 1,
                      sizeof(*in->selectors)))
        return manifest_nomem(c);
    s = &in->selectors[in->nselectors];
    s->owner_kind = owner_kind;
    s->namespace_ = manifest_namespace_intern(c, ns);
    s->name = arena_strdup(&in->arena, name ? name : "");
    s->sel = *sel;
    if (!s->namespace_ || !s->name)
        return manifest_nomem(c);
    in->nselectors++;
    return 0;
}

/* A Service: only its spec.selector is kept, for PodTopologySpread's system defaults. */
int manifest_load_service(struct manifest_ctx *c, json_t *obj, int line)
{
    struct kube_service svc;
    int rc;

    rc = kube_service_decode(obj, &c->in->arena, manifest_dopts(c, line), &svc, c->err);
    if (rc)
        return rc;
    return manifest_add_selector(c, NULL, manifest_object_namespace(c), svc.name, &svc.selector);
}

static long namespace_find(const struct manifest_input *in, const char *name)
{
    size_t i;

    for (i = in->nnamespaces; i-- > 0;)
        if (!strcmp(in->namespaces[i].name, name))
            return (long)i;
    return -1;
}

int manifest_load_namespace(struct manifest_ctx *c, json_t *obj, int line)
{
    struct manifest_input *in = c->in;
    struct kube_namespace ns;
    int rc;

    rc = kube_namespace_decode(obj, &in->arena, manifest_dopts(c, line), &ns, c->err);
    if (rc)
        return rc;
    if (namespace_find(in, ns.name) >= 0)
        return manifest_fail(c, line, "metadata.name", -EEXIST, "namespaces \"%s\" already exists",
                             ns.name);
    if (manifest_grow((void **)&in->namespaces, &in->priv->cap_namespaces, in->nnamespaces + 1,
                      sizeof(*in->namespaces)))
        return manifest_nomem(c);
    in->namespaces[in->nnamespaces++] = ns;
    return 0;
}

static int namespace_ensure(struct manifest_input *in, const char *name, const char **last)
{
    struct kube_namespace ns;
    struct kube_label *l;

    if ((*last && !strcmp(*last, name)) || namespace_find(in, name) >= 0) {
        *last = name;
        return 0;
    }
    *last = name;
    if (!(l = arena_alloc(&in->arena, sizeof(*l))) || !(ns.name = arena_strdup(&in->arena, name)))
        return -ENOMEM;
    l->key = "kubernetes.io/metadata.name";
    l->value = ns.name;
    ns.labels.v = l;
    ns.labels.n = 1;
    if (manifest_grow((void **)&in->namespaces, &in->priv->cap_namespaces, in->nnamespaces + 1,
                      sizeof(*in->namespaces)))
        return -ENOMEM;
    in->namespaces[in->nnamespaces++] = ns;
    return 0;
}

int manifest_finish_namespaces(struct manifest_input *in, struct err *err)
{
    const char *last = NULL, *seen[8] = {NULL};
    size_t i, k, next = 0;

    for (i = 0; i < in->priv->nstubs; i++)
        if (namespace_ensure(in, in->priv->stubs[i].ns, &last))
            return err_set(err, -ENOMEM, "out of memory");
    for (i = 0; i < in->npods; i++) {
        const char *ns = in->pods[i].namespace_;
        /* pods' namespaces are interned (manifest_namespace_intern): the ones just seen are
         * known by address */
        for (k = 0; k < 8 && seen[k] != ns; k++)
            ;
        if (k < 8)
            continue;
        if (namespace_ensure(in, ns, &last))
            return err_set(err, -ENOMEM, "out of memory");
        seen[next++ % 8] = ns;
    }
    return 0;
}
