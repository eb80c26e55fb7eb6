/* manifest.c - manifest files to nodes, pods and PriorityClasses, with workloads expanded.
 *
 * Each buffer is parsed by kube_yaml_load into JSON trees with a line table, every object is
 * decoded into the input's arena and the trees are dropped. Pod names of expanded workloads
 * are derived from hashes, so the same input always gives the same names. A set of pod and
 * node names keeps names unique; a failed load rolls the counters back and rebuilds the sets. */
#include "sched/manifest.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "kube/decode.h"
#include "kube/labels.h"
#include "kube/rules.h"
#include "kube/yaml.h"

#define LIST_MAX_DEPTH 8
#define WARNINGS_MAX 1000
#define NAME_ATTEMPTS 64
/* names.SimpleNameGenerator: generateName is cut to 63 - 5 characters before the suffix */
#define GENERATED_BASE_MAX 58

/* Kubernetes' rand.String alphabet: no vowels, no look-alike characters. */
static const char safe_alphabet[] = "bcdfghjklmnpqrstvwxz2456789";

enum kind_id {
    KIND_NODE,
    KIND_POD,
    KIND_DEPLOYMENT,
    KIND_REPLICASET,
    KIND_REPLICATION_CONTROLLER,
    KIND_STATEFULSET,
    KIND_JOB,
    KIND_DAEMONSET,
    KIND_PRIORITY_CLASS,
};

static const struct kind_info {
    const char *kind;
    const char *group; /* "" = core "v1" */
    const char *group2; /* older group still accepted, or NULL */
    enum kind_id id;
} kinds[] = {
    {"Node", "", NULL, KIND_NODE},
    {"Pod", "", NULL, KIND_POD},
    {"Deployment", "apps", "extensions", KIND_DEPLOYMENT},
    {"ReplicaSet", "apps", "extensions", KIND_REPLICASET},
    {"ReplicationController", "", NULL, KIND_REPLICATION_CONTROLLER},
    {"StatefulSet", "apps", NULL, KIND_STATEFULSET},
    {"Job", "batch", NULL, KIND_JOB},
    {"DaemonSet", "apps", "extensions", KIND_DAEMONSET},
    {"PriorityClass", "scheduling.k8s.io", NULL, KIND_PRIORITY_CLASS},
};

/* A DaemonSet waiting for sched_input_finish, which knows every node. */
struct pending_ds {
    struct kube_pod tmpl; /* the decoded template, namespace and owner set */
    size_t pos;           /* pod index where the DaemonSet appeared */
};

/* A bound pod passed to opts.take_bound: what is kept of it (strings in stub_arena). */
struct pod_stub {
    const char *ns, *name, *node, *file;
    int line;
};

/* Open-addressing set of indices (+1; 0 = empty) into in->pods or in->nodes; in the pod set,
 * an index with STUB_BIT set is one of priv->stubs. */
#define STUB_BIT 0x80000000u

struct name_set {
    uint32_t *slots;
    size_t cap; /* power of two */
    size_t n;
};

struct sched_input_priv {
    size_t cap_nodes, cap_pods, cap_classes, cap_warnings;
    struct pending_ds *ds;
    size_t nds, cap_ds;
    struct name_set pod_set, node_set;
    size_t warnings_dropped;
    const char *last_ns; /* namespace_intern */
    struct pod_stub *stubs; /* bound pods passed to opts.take_bound, input order */
    size_t nstubs, cap_stubs;
    struct arena stub_arena;
    struct arena node_arena; /* decoded nodes, apart so sched_input_trim can free them */
    const char *stub_ns, *stub_node; /* the last ones copied, reused while they repeat */
    int bound_kept; /* a bound pod went to pods[]: no more hand-offs */
};

struct snapshot {
    size_t nnodes, npods, nclasses, nwarnings, nds, dropped, nstubs, ntaken;
};

struct load_ctx {
    struct sched_input *in;
    const char *file; /* arena copy */
    struct kube_lines *lines;
    struct err *err;
    int in_items;      /* items of a root list are being loaded */
    int items_dropped; /* ... but the root is not a list */
    struct snapshot items_snap;
};

/* ---- small helpers ---- */

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;

    while (n--) {
        h ^= *s++;
        h *= 0x100000001b3ULL;
    }
    return h;
}

#define FNV_OFFSET 0xcbf29ce484222325ULL

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    size_t ncap;
    void *p;

    if (need <= *cap)
        return 0;
    ncap = *cap ? *cap : 16;
    while (ncap < need)
        ncap *= 2;
    p = realloc(*arr, ncap * elem);
    if (!p)
        return -ENOMEM;
    *arr = p;
    *cap = ncap;
    return 0;
}

/* shrink reallocates *arr to exactly n elements; on failure it keeps the larger block. */
static void shrink(void **arr, size_t *cap, size_t n, size_t elem)
{
    void *p;

    if (!n || n == *cap)
        return;
    p = realloc(*arr, n * elem);
    if (p) {
        *arr = p;
        *cap = n;
    }
}

static const char *jstr(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);

    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int line_of(const struct load_ctx *c, const json_t *v, int fallback)
{
    int l = kube_lines_find(c->lines, v);

    return l > 0 ? l : fallback;
}

static int fail(struct load_ctx *c, int line, const char *field, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int fail(struct load_ctx *c, int line, const char *field, int code, const char *fmt, ...)
{
    va_list ap;

    if (!c->err)
        return code;
    c->err->code = code;
    va_start(ap, fmt);
    vsnprintf(c->err->msg, sizeof(c->err->msg), fmt, ap);
    va_end(ap);
    err_at(c->err, c->file, line, 0);
    err_field(c->err, field);
    return code;
}

static int nomem(struct load_ctx *c)
{
    return fail(c, 0, NULL, -ENOMEM, "out of memory");
}

static int add_warning(struct sched_input *in, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int add_warning(struct sched_input *in, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    char *s;

    if (in->nwarnings >= WARNINGS_MAX) {
        in->priv->warnings_dropped++;
        return 0;
    }
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (grow((void **)&in->warnings, &in->priv->cap_warnings, in->nwarnings + 1,
             sizeof(*in->warnings)))
        return -ENOMEM;
    s = arena_strdup(&in->arena, buf);
    if (!s)
        return -ENOMEM;
    in->warnings[in->nwarnings++] = s;
    return 0;
}

/* ---- name sets ---- */

static uint64_t pod_key_hash(const char *ns, const char *name)
{
    uint64_t h = fnv1a(FNV_OFFSET, ns, strlen(ns) + 1);

    return fnv1a(h, name, strlen(name));
}

static int set_grow(struct name_set *s, size_t need)
{
    if ((need + 1) * 2 <= s->cap)
        return 0;
    return -EAGAIN; /* the caller rebuilds with a larger table */
}

/* pod_key gives the namespace and name of pod set entry i (a pod or a stub) */
static void pod_key(const struct sched_input *in, uint32_t i, const char **ns, const char **name)
{
    if (i & STUB_BIT) {
        *ns = in->priv->stubs[i & ~STUB_BIT].ns;
        *name = in->priv->stubs[i & ~STUB_BIT].name;
    } else {
        *ns = in->pods[i].namespace_;
        *name = in->pods[i].name;
    }
}

/* pod_where gives the file and line pod set entry i came from */
static void pod_where(const struct sched_input *in, uint32_t i, const char **file, int *line)
{
    if (i & STUB_BIT) {
        *file = in->priv->stubs[i & ~STUB_BIT].file;
        *line = in->priv->stubs[i & ~STUB_BIT].line;
    } else {
        *file = in->pods[i].source_file;
        *line = in->pods[i].source_line;
    }
    if (!*file)
        *file = "?";
}

/* set_find returns the slot holding (ns, name), or the empty slot where it would go.
 * ns == NULL means the node set. */
static size_t set_slot(const struct sched_input *in, const struct name_set *s, const char *ns,
                       const char *name)
{
    size_t h = (size_t)(ns ? pod_key_hash(ns, name) : fnv1a(FNV_OFFSET, name, strlen(name)));

    h &= s->cap - 1;
    while (s->slots[h]) {
        uint32_t i = s->slots[h] - 1;

        if (ns) {
            const char *ins, *iname;

            pod_key(in, i, &ins, &iname);
            if (!strcmp(iname, name) && !strcmp(ins, ns))
                return h;
        } else if (!strcmp(in->nodes[i].name, name)) {
            return h;
        }
        h = (h + 1) & (s->cap - 1);
    }
    return h;
}

/* set_rebuild makes s index the first n pods (pods != 0) or nodes, with room for more.
 * Duplicates keep the first. */
static int set_rebuild(struct sched_input *in, struct name_set *s, int pods, size_t n,
                       size_t room)
{
    size_t cap = 64, i, nstubs = pods && in->priv ? in->priv->nstubs : 0;

    while (cap < (n + nstubs + room + 1) * 2)
        cap *= 2;
    free(s->slots);
    s->slots = calloc(cap, sizeof(*s->slots));
    s->cap = s->slots ? cap : 0;
    s->n = 0;
    if (!s->slots)
        return -ENOMEM;
    for (i = 0; i < n; i++) {
        size_t h = pods ? set_slot(in, s, in->pods[i].namespace_, in->pods[i].name)
                        : set_slot(in, s, NULL, in->nodes[i].name);

        if (!s->slots[h]) {
            s->slots[h] = (uint32_t)(i + 1);
            s->n++;
        }
    }
    for (i = 0; i < nstubs; i++) {
        size_t h = set_slot(in, s, in->priv->stubs[i].ns, in->priv->stubs[i].name);

        if (!s->slots[h]) {
            s->slots[h] = ((uint32_t)i | STUB_BIT) + 1;
            s->n++;
        }
    }
    return 0;
}

/* pod_set_find returns the pod set entry of ns/name (STUB_BIT set for a stub), or -1 */
static long pod_set_find(const struct sched_input *in, const char *ns, const char *name)
{
    const struct name_set *s = &in->priv->pod_set;
    size_t h;

    if (!s->cap)
        return -1;
    h = set_slot(in, s, ns, name);
    return s->slots[h] ? (long)s->slots[h] - 1 : -1;
}

static long node_set_find(const struct sched_input *in, const char *name)
{
    const struct name_set *s = &in->priv->node_set;
    size_t h;

    if (!s->cap)
        return -1;
    h = set_slot(in, s, NULL, name);
    return s->slots[h] ? (long)s->slots[h] - 1 : -1;
}

/* set_add_last records the last pod (or node, or stub when stub is set) of its array,
 * already checked to be new. */
static int set_add_last(struct sched_input *in, int pods, int stub)
{
    struct name_set *s = pods ? &in->priv->pod_set : &in->priv->node_set;
    size_t n = pods ? in->npods : in->nnodes;
    const struct pod_stub *st = stub ? &in->priv->stubs[in->priv->nstubs - 1] : NULL;
    size_t h;

    if (!s->cap || set_grow(s, s->n + 1))
        return set_rebuild(in, s, pods, n, n + in->priv->nstubs);
    if (st)
        h = set_slot(in, s, st->ns, st->name);
    else
        h = pods ? set_slot(in, s, in->pods[n - 1].namespace_, in->pods[n - 1].name)
                 : set_slot(in, s, NULL, in->nodes[n - 1].name);
    s->slots[h] = st ? ((uint32_t)(in->priv->nstubs - 1) | STUB_BIT) + 1 : (uint32_t)n;
    s->n++;
    return 0;
}

/* ---- names ---- */

/* suffix5 writes rand.String(5)-like characters derived from (ns, base, index, attempt). */
static void suffix5(char out[6], const char *ns, const char *base, size_t index, unsigned attempt)
{
    uint64_t h = pod_key_hash(ns, base);
    uint64_t idx = index;
    int i;

    h = fnv1a(h, &idx, sizeof(idx));
    h = fnv1a(h, &attempt, sizeof(attempt));
    for (i = 0; i < 5; i++) {
        out[i] = safe_alphabet[h % 27];
        h /= 27;
    }
    out[5] = '\0';
}

/* template_hash is a pod-template-hash: the decimal form of a 32-bit hash of the template,
 * each digit mapped through the safe alphabet as rand.SafeEncodeString does (10 characters).
 * The hash covers the template's canonical JSON, at most its first HASH_INPUT_MAX bytes (YAML
 * aliases can make a small file expand enormously). */
#define HASH_INPUT_MAX ((size_t)1 << 20)

struct hash_state {
    uint64_t h;
    size_t n;
};

static int hash_chunk(const char *buf, size_t size, void *data)
{
    struct hash_state *st = data;

    if (st->n + size > HASH_INPUT_MAX)
        return -1;
    st->h = fnv1a(st->h, buf, size);
    st->n += size;
    return 0;
}

static void template_hash(char out[11], const json_t *tmpl)
{
    struct hash_state st = {FNV_OFFSET, 0};
    char dec[16];
    int i;

    json_dump_callback(tmpl, hash_chunk, &st, JSON_COMPACT | JSON_SORT_KEYS);
    snprintf(dec, sizeof(dec), "%010u", (unsigned)(uint32_t)(st.h ^ (st.h >> 32)));
    for (i = 0; i < 10; i++)
        out[i] = safe_alphabet[(unsigned char)dec[i] % 27];
    out[10] = '\0';
}

/* generated_name picks generateName-style "<base><5 chars>" not used yet in the namespace. */
static const char *generated_name(struct load_ctx *c, const char *ns, const char *base,
                                  size_t index)
{
    char buf[GENERATED_BASE_MAX + 8];
    size_t blen = strlen(base);
    unsigned attempt;

    if (blen > GENERATED_BASE_MAX)
        blen = GENERATED_BASE_MAX;
    memcpy(buf, base, blen);
    for (attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
        suffix5(buf + blen, ns, base, index, attempt);
        if (pod_set_find(c->in, ns, buf) < 0)
            return arena_strdup(&c->in->arena, buf);
    }
    return NULL;
}

/* ---- objects ---- */

static int check_capacity(struct load_ctx *c, int line, const char *field, size_t add_pods)
{
    struct sched_input *in = c->in;

    size_t have = in->npods + in->ntaken;

    if (add_pods > in->opts.max_pods || have > in->opts.max_pods - add_pods)
        return fail(c, line, field, -E2BIG, "the input would hold more than %zu pods",
                    in->opts.max_pods);
    return 0;
}

/* check_new_pod fails when ns/name is already taken */
static int check_new_pod(struct load_ctx *c, const char *ns, const char *name, int line,
                         const char *field)
{
    long dup = pod_set_find(c->in, ns, name);
    const char *file;
    int dline;

    if (dup < 0)
        return 0;
    pod_where(c->in, (uint32_t)dup, &file, &dline);
    return fail(c, line, field, -EEXIST,
                "pods \"%s\" already exists in namespace \"%s\" (defined at %s: line %d)", name,
                ns, file, dline);
}

/* append_pod adds p as the next pod; its name must not be in use in its namespace. */
static int append_pod(struct load_ctx *c, const struct kube_pod *p, int line, const char *field)
{
    struct sched_input *in = c->in;
    int rc;

    if ((rc = check_new_pod(c, p->namespace_, p->name, line, field)) ||
        (rc = check_capacity(c, line, field, 1)))
        return rc;
    if (grow((void **)&in->pods, &in->priv->cap_pods, in->npods + 1, sizeof(*in->pods)))
        return nomem(c);
    in->pods[in->npods++] = *p;
    if (set_add_last(in, 1, 0)) {
        in->npods--;
        return nomem(c);
    }
    if (p->node_name && *p->node_name)
        in->priv->bound_kept = 1;
    return 0;
}

/* find_class returns the PriorityClass called name: one of the input's so far, or a built-in
 * one; NULL when there is none (yet). */
static const struct kube_priority_class *find_class(const struct sched_input *in,
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
static const char *stub_str(struct sched_input_priv *pv, const char **last, const char *s)
{
    if (last && *last && !strcmp(*last, s))
        return *last;
    s = arena_strdup(&pv->stub_arena, s);
    if (last && s)
        *last = s;
    return s;
}

/* can_hand_off: the pod is bound, no bound pod was kept before it, and its priority is final
 * now: given, or from a class already known. Sets the priority from the class (as
 * finish_priorities would) when it is not given. */
static bool can_hand_off(const struct sched_input *in, struct kube_pod *p)
{
    const struct kube_priority_class *pc;
    const char *name = p->priority_class_name;

    if (!in->opts.take_bound || in->priv->bound_kept || !p->node_name || !*p->node_name)
        return false;
    if (!name || !*name)
        return p->has_priority; /* else a globalDefault class read later would decide it */
    pc = find_class(in, name);
    if (!pc)
        return false; /* read later, or missing: finish reports that */
    if (!p->has_priority)
        p->priority = pc->value;
    p->has_priority = true;
    p->preempt_never = p->preempt_never || pc->preempt_never;
    return true;
}

/* hand_off passes a bound pod to opts.take_bound and keeps its stub. */
static int hand_off(struct load_ctx *c, const struct kube_pod *p, int line)
{
    struct sched_input *in = c->in;
    struct sched_input_priv *pv = in->priv;
    struct pod_stub st;
    int rc;

    if ((rc = check_new_pod(c, p->namespace_, p->name, line, "metadata.name")) ||
        (rc = check_capacity(c, line, "metadata.name", 1)))
        return rc;
    st.ns = stub_str(pv, &pv->stub_ns, p->namespace_);
    st.name = stub_str(pv, NULL, p->name);
    st.node = stub_str(pv, &pv->stub_node, p->node_name);
    st.file = c->file;
    st.line = line;
    if (!st.ns || !st.name || !st.node ||
        grow((void **)&pv->stubs, &pv->cap_stubs, pv->nstubs + 1, sizeof(*pv->stubs)))
        return nomem(c);
    pv->stubs[pv->nstubs++] = st;
    if (set_add_last(in, 1, 1)) {
        pv->nstubs--;
        return nomem(c);
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

/* namespace_intern returns an arena copy of ns, the same one as for the previous pod when
 * the namespace repeats (pods usually come grouped by namespace). */
static const char *namespace_intern(struct load_ctx *c, const char *ns)
{
    struct sched_input_priv *pv = c->in->priv;

    if (!pv->last_ns || strcmp(pv->last_ns, ns))
        pv->last_ns = arena_strdup(&c->in->arena, ns);
    return pv->last_ns;
}

/* object_namespace: metadata.namespace, or the input's default. */
static const char *object_namespace(struct load_ctx *c, const json_t *obj)
{
    const char *ns = jstr(json_object_get(obj, "metadata"), "namespace");

    return ns && *ns ? ns : c->in->opts.default_namespace;
}

static int load_pod(struct load_ctx *c, json_t *obj, int line)
{
    json_t *md = json_object_get(obj, "metadata");
    const char *gen = jstr(md, "generateName");
    const char *ns = object_namespace(c, obj);
    json_t *copy = NULL, *mdcopy = NULL;
    const char *name = NULL;
    struct arena_mark mark;
    struct kube_pod p;
    int rc;

    memset(&p, 0, sizeof(p));
    arena_mark(&c->in->arena, &mark);
    if (!jstr(md, "name") || !*jstr(md, "name")) {
        /* only generateName: the API server picks the name; decode a copy that has one */
        /* the pod count so far varies the hash between pods of the same generateName */
        name = generated_name(c, ns, gen, c->in->npods);
        copy = json_copy(obj);
        mdcopy = json_copy(md);
        if (!name || !copy || !mdcopy || json_object_set_new(mdcopy, "name", json_string(name)) ||
            json_object_set(copy, "metadata", mdcopy) || kube_lines_add(c->lines, copy, line) ||
            kube_lines_add(c->lines, mdcopy, line_of(c, md, line))) {
            rc = nomem(c);
            goto out;
        }
        obj = copy;
    }
    /* file NULL: the decoder would copy the name into every object; load_object names it */
    rc = kube_pod_decode(obj, &c->in->arena, c->lines, NULL, &p, c->err);
    if (rc)
        goto out;
    if (name)
        p.name = name;
    p.source_file = c->file;
    p.source_line = line;
    if (can_hand_off(c->in, &p)) {
        /* counted by the consumer; what was decoded is given back to the arena */
        p.namespace_ = ns;
        rc = hand_off(c, &p, line);
        arena_rewind(&c->in->arena, &mark);
        goto out;
    }
    p.namespace_ = namespace_intern(c, ns);
    if (!p.namespace_) {
        rc = nomem(c);
        goto out;
    }
    rc = append_pod(c, &p, line, "metadata.name");
out:
    json_decref(mdcopy);
    json_decref(copy);
    return rc;
}

static int load_node(struct load_ctx *c, json_t *obj, int line)
{
    struct sched_input *in = c->in;
    struct kube_node n;
    long dup;
    int rc;

    memset(&n, 0, sizeof(n));
    rc = kube_node_decode(obj, &in->priv->node_arena, c->lines, NULL, &n, c->err);
    if (rc)
        return rc;
    n.source_file = c->file;
    n.source_line = line;
    dup = node_set_find(in, n.name);
    if (dup >= 0)
        return fail(c, line, "metadata.name", -EEXIST,
                    "nodes \"%s\" already exists (defined at %s: line %d)", n.name,
                    in->nodes[dup].source_file ? in->nodes[dup].source_file : "?",
                    in->nodes[dup].source_line);
    if (in->nnodes >= in->opts.max_nodes)
        return fail(c, line, NULL, -E2BIG, "the input would hold more than %zu nodes",
                    in->opts.max_nodes);
    if (grow((void **)&in->nodes, &in->priv->cap_nodes, in->nnodes + 1, sizeof(*in->nodes)))
        return nomem(c);
    in->nodes[in->nnodes++] = n;
    if (set_add_last(in, 0, 0)) {
        in->nnodes--;
        return nomem(c);
    }
    return 0;
}

static int load_priority_class(struct load_ctx *c, json_t *obj, int line)
{
    struct sched_input *in = c->in;
    struct kube_priority_class pc;
    size_t i;
    int rc;

    memset(&pc, 0, sizeof(pc));
    rc = kube_priority_class_decode(obj, &in->arena, c->lines, NULL, &pc, c->err);
    if (rc)
        return rc;
    for (i = 0; i < in->nclasses; i++) {
        if (!strcmp(in->classes[i].name, pc.name))
            return fail(c, line, "metadata.name", -EEXIST,
                        "priorityclasses.scheduling.k8s.io \"%s\" already exists", pc.name);
        if (pc.global_default && in->classes[i].global_default)
            return fail(c, line_of(c, json_object_get(obj, "globalDefault"), line),
                        "globalDefault", -EINVAL,
                        "Forbidden: PriorityClass %s is already marked as default. Only one "
                        "default can exist",
                        in->classes[i].name);
    }
    if (grow((void **)&in->classes, &in->priv->cap_classes, in->nclasses + 1,
             sizeof(*in->classes)))
        return nomem(c);
    in->classes[in->nclasses++] = pc;
    return 0;
}

/* spec_int reads an optional non-negative int32 field of spec; *out keeps its default when
 * the field is absent or null. */
static int spec_int(struct load_ctx *c, const json_t *spec, const char *key, int line,
                    int64_t *out)
{
    const json_t *v = json_object_get(spec, key);
    char field[64];
    int vl = line_of(c, v, line);
    int64_t n;

    snprintf(field, sizeof(field), "spec.%s", key);
    if (!v || json_is_null(v))
        return 0;
    if (!kube_json_int64(v, &n))
        return fail(c, vl, field, -EINVAL, "Invalid value: expected an integer, got %s",
                    kube_json_type_name(v));
    if (n < 0)
        return fail(c, vl, field, -EINVAL,
                    "Invalid value: %" PRId64 ": must be greater than or equal to 0", n);
    if (n > INT32_MAX)
        return fail(c, vl, field, -EINVAL, "Invalid value: %" PRId64 ": must fit in a 32-bit integer",
                    n);
    *out = n;
    return 0;
}

/* check_selector applies the apps/v1 validation to spec.selector: required, not empty and a
 * valid metav1.LabelSelector, decoded into *ls (from the input's arena). Whether it selects
 * the template's labels is checked once the template is decoded (selector_selects). */
static int check_selector(struct load_ctx *c, const json_t *spec, const char *kind, int line,
                          struct kube_label_selector *ls)
{
    const json_t *sel = json_object_get(spec, "selector");
    char field[sizeof(c->err->field)];

    if (!sel || json_is_null(sel))
        return fail(c, line_of(c, spec, line), "spec.selector", -EINVAL, "Required value");
    if (!json_is_object(sel))
        return fail(c, line_of(c, sel, line), "spec.selector", -EINVAL,
                    "Invalid value: expected an object, got %s", kube_json_type_name(sel));
    if (!json_object_size(json_object_get(sel, "matchLabels")) &&
        !json_array_size(json_object_get(sel, "matchExpressions")))
        return fail(c, line_of(c, sel, line), "spec.selector", -EINVAL,
                    "Invalid value: empty selector is invalid for %s", kind);
    if (!kube_label_selector_decode(sel, &c->in->arena, c->lines, NULL, ls, c->err))
        return 0;
    if (!c->err)
        return -EINVAL;
    snprintf(field, sizeof(field), "spec.selector%s%s", c->err->field[0] ? "." : "",
             c->err->field);
    err_field(c->err, field);
    if (!c->err->line)
        c->err->line = line_of(c, sel, line);
    if (!c->err->file[0])
        err_at(c->err, c->file, c->err->line, c->err->column);
    return c->err->code;
}

/* selector_selects fails unless the workload's selector picks its template's labels. */
static int selector_selects(struct load_ctx *c, const struct kube_label_selector *ls,
                            const json_t *tmpl, const struct kube_labels *labels, int line)
{
    const json_t *jl = json_object_get(json_object_get(tmpl, "metadata"), "labels");

    if (kube_label_selector_matches(ls, labels))
        return 0;
    return fail(c, line_of(c, jl ? jl : tmpl, line), "spec.template.metadata.labels", -EINVAL,
                "Invalid value: `selector` does not match template `labels`");
}

/* decode_template decodes spec.template as the pod a controller would create, in namespace
 * ns. Field paths in errors are made relative to the workload. */
static int decode_template(struct load_ctx *c, const json_t *tmpl, const char *ns,
                           const char *owner_kind, const char *owner_name, int line,
                           struct kube_pod *out)
{
    json_t *md = json_object_get(tmpl, "metadata");
    json_t *pod = json_object(), *pmd = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    if (md && !json_is_object(md) && !json_is_null(md)) {
        rc = fail(c, line_of(c, md, line), "spec.template.metadata", -EINVAL,
                  "Invalid value: expected an object, got %s", kube_json_type_name(md));
        goto out;
    }
    pmd = json_is_object(md) ? json_copy(md) : json_object();
    if (!pod || !pmd || json_object_set_new(pod, "apiVersion", json_string("v1")) ||
        json_object_set_new(pod, "kind", json_string("Pod")) ||
        json_object_set_new(pmd, "name", json_string(owner_name)) ||
        json_object_set_new(pmd, "namespace", json_string(ns)) ||
        json_object_set(pod, "metadata", pmd) ||
        (json_object_get(tmpl, "spec") &&
         json_object_set(pod, "spec", json_object_get(tmpl, "spec"))) ||
        kube_lines_add(c->lines, pod, line_of(c, tmpl, line)) ||
        kube_lines_add(c->lines, pmd, line_of(c, md, line_of(c, tmpl, line)))) {
        rc = nomem(c);
        goto out;
    }
    rc = kube_pod_decode(pod, &c->in->arena, c->lines, NULL, out, c->err);
    if (rc) {
        if (c->err) {
            char field[sizeof(c->err->field)];

            snprintf(field, sizeof(field), "spec.template%s%s", c->err->field[0] ? "." : "",
                     c->err->field);
            err_field(c->err, field);
            if (!c->err->line)
                c->err->line = line_of(c, tmpl, line);
            if (!c->err->file[0])
                err_at(c->err, c->file, c->err->line, c->err->column);
        }
        goto out;
    }
    out->namespace_ = namespace_intern(c, ns);
    out->owner.kind = owner_kind;
    out->owner.name = arena_strdup(&c->in->arena, owner_name);
    out->source_file = c->file;
    out->source_line = line;
    if (!out->namespace_ || !out->owner.name)
        rc = nomem(c);
out:
    json_decref(pmd);
    json_decref(pod);
    return rc;
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

static int load_workload(struct load_ctx *c, json_t *obj, const struct kind_info *k,
                         const char *av, int line)
{
    struct sched_input *in = c->in;
    const json_t *spec = json_object_get(obj, "spec");
    const json_t *tmpl = json_object_get(spec, "template");
    const char *name = jstr(json_object_get(obj, "metadata"), "name");
    const char *ns = object_namespace(c, obj);
    int64_t replicas = 1, completions = -1;
    struct kube_label_selector sel = {0};
    struct kube_pod tp;
    struct kube_labels shared;
    char base[320], hash[11];
    int indexed = 0, rc;
    size_t i;

    if (!json_is_object(spec))
        return fail(c, line_of(c, spec, line), "spec", -EINVAL,
                    spec ? "Invalid value: expected an object" : "Required value");
    if (!json_is_object(tmpl))
        return fail(c, line_of(c, tmpl, line_of(c, spec, line)), "spec.template", -EINVAL,
                    tmpl ? "Invalid value: expected an object" : "Required value");
    switch (k->id) {
    case KIND_DEPLOYMENT:
    case KIND_REPLICASET:
    case KIND_STATEFULSET:
        if ((rc = spec_int(c, spec, "replicas", line, &replicas)))
            return rc;
        if (!strncmp(av, "apps/", 5) && (rc = check_selector(c, spec, k->kind, line, &sel)))
            return rc;
        break;
    case KIND_DAEMONSET:
        if (!strncmp(av, "apps/", 5) && (rc = check_selector(c, spec, k->kind, line, &sel)))
            return rc;
        break;
    case KIND_REPLICATION_CONTROLLER:
        if ((rc = spec_int(c, spec, "replicas", line, &replicas)))
            return rc;
        break;
    case KIND_JOB: {
        const char *mode = jstr(spec, "completionMode");
        const json_t *suspend = json_object_get(spec, "suspend");

        if ((rc = spec_int(c, spec, "parallelism", line, &replicas)) ||
            (rc = spec_int(c, spec, "completions", line, &completions)))
            return rc;
        if (mode && !strcmp(mode, "Indexed")) {
            if (completions < 0)
                return fail(c, line_of(c, spec, line), "spec.completions", -EINVAL,
                            "Required value: when completion mode is Indexed");
            indexed = 1;
        }
        if (completions >= 0 && completions < replicas)
            replicas = completions;
        if (json_is_true(suspend))
            replicas = 0;
        break;
    }
    default:
        break;
    }
    if ((rc = check_capacity(c, line, k->id == KIND_JOB ? "spec.parallelism" : "spec.replicas",
                             (size_t)replicas)))
        return rc;
    rc = decode_template(c, tmpl, ns, k->kind, name, line, &tp);
    if (rc)
        return rc;
    if (sel.present && (rc = selector_selects(c, &sel, tmpl, &tp.labels, line)))
        return rc;
    if (k->id == KIND_DAEMONSET) {
        struct sched_input_priv *pv = in->priv;

        if (grow((void **)&pv->ds, &pv->cap_ds, pv->nds + 1, sizeof(*pv->ds)))
            return nomem(c);
        pv->ds[pv->nds].tmpl = tp;
        pv->ds[pv->nds].pos = in->npods;
        pv->nds++;
        return 0;
    }

    /* labels the controllers add that are the same for every replica */
    shared = tp.labels;
    if (k->id == KIND_DEPLOYMENT) {
        struct kube_label l;

        template_hash(hash, tmpl);
        l.key = "pod-template-hash";
        l.value = arena_strdup(&in->arena, hash);
        if (!l.value || labels_with(&in->arena, &tp.labels, &l, 1, &shared))
            return nomem(c);
        snprintf(base, sizeof(base), "%s-%s-", name, hash);
    } else if (k->id == KIND_JOB && !indexed) {
        struct kube_label l[2] = {{"batch.kubernetes.io/job-name", tp.owner.name},
                                  {"job-name", tp.owner.name}};

        if (labels_with(&in->arena, &tp.labels, l, 2, &shared))
            return nomem(c);
        snprintf(base, sizeof(base), "%s-", name);
    } else {
        snprintf(base, sizeof(base), "%s-", name);
    }

    for (i = 0; i < (size_t)replicas; i++) {
        struct kube_pod p = tp;
        char buf[352];

        p.labels = shared;
        if (k->id == KIND_STATEFULSET) {
            char idx[24];
            struct kube_label l[2];

            snprintf(buf, sizeof(buf), "%s-%zu", name, i);
            snprintf(idx, sizeof(idx), "%zu", i);
            p.name = arena_strdup(&in->arena, buf);
            l[0].key = "apps.kubernetes.io/pod-index";
            l[0].value = arena_strdup(&in->arena, idx);
            l[1].key = "statefulset.kubernetes.io/pod-name";
            l[1].value = p.name;
            if (!p.name || !l[0].value || labels_with(&in->arena, &tp.labels, l, 2, &p.labels))
                return nomem(c);
        } else if (indexed) {
            char idx[24];
            struct kube_label l[3];

            snprintf(idx, sizeof(idx), "%zu", i);
            snprintf(buf, sizeof(buf), "%s-%zu-", name, i);
            p.name = generated_name(c, ns, buf, i);
            l[0].key = "batch.kubernetes.io/job-completion-index";
            l[0].value = arena_strdup(&in->arena, idx);
            l[1].key = "batch.kubernetes.io/job-name";
            l[1].value = tp.owner.name;
            l[2].key = "job-name";
            l[2].value = tp.owner.name;
            if (!p.name || !l[0].value || labels_with(&in->arena, &tp.labels, l, 3, &p.labels))
                return nomem(c);
        } else {
            p.name = generated_name(c, ns, base, i);
            if (!p.name)
                return fail(c, line, "metadata.name", -EEXIST,
                            "cannot find a free name for a pod of %s %s", k->kind, name);
        }
        rc = append_pod(c, &p, line, "metadata.name");
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- documents ---- */

static const struct kind_info *kind_lookup(const char *kind)
{
    size_t i;

    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (!strcmp(kinds[i].kind, kind))
            return &kinds[i];
    return NULL;
}

static int api_version_ok(const struct kind_info *k, const char *av)
{
    const char *slash = strchr(av, '/');
    size_t glen = slash ? (size_t)(slash - av) : 0;

    if (!*k->group)
        return !strcmp(av, "v1");
    if (!slash || !slash[1])
        return 0;
    return (strlen(k->group) == glen && !strncmp(av, k->group, glen)) ||
           (k->group2 && strlen(k->group2) == glen && !strncmp(av, k->group2, glen));
}

static int load_object(struct load_ctx *c, json_t *obj, int depth, const char *inferred_kind,
                       const char *inferred_av, int parent_line);

static int load_list(struct load_ctx *c, json_t *obj, const char *kind, const char *av,
                     int depth, int line)
{
    const json_t *items = json_object_get(obj, "items");
    char item_kind[128] = "";
    size_t i, klen = strlen(kind);
    int rc;

    if (depth >= LIST_MAX_DEPTH)
        return fail(c, line, "items", -EINVAL, "lists nested too deeply");
    if (!items || json_is_null(items))
        return 0;
    if (!json_is_array(items))
        return fail(c, line_of(c, items, line), "items", -EINVAL,
                    "Invalid value: expected a list, got %s", kube_json_type_name(items));
    /* items of a typed list (PodList from the API) may leave out their kind */
    if (strcmp(kind, "List") && klen - 4 < sizeof(item_kind))
        snprintf(item_kind, sizeof(item_kind), "%.*s", (int)(klen - 4), kind);
    for (i = 0; i < json_array_size(items); i++) {
        json_t *it = json_array_get(items, i);

        rc = load_object(c, it, depth + 1, item_kind[0] ? item_kind : NULL, av,
                         line_of(c, items, line));
        if (rc)
            return rc;
    }
    return 0;
}

static int load_object_at(struct load_ctx *c, json_t *obj, int depth,
                          const char *inferred_kind, const char *inferred_av, int line);

static int load_object(struct load_ctx *c, json_t *obj, int depth, const char *inferred_kind,
                       const char *inferred_av, int parent_line)
{
    int line = line_of(c, obj, parent_line);
    int rc = load_object_at(c, obj, depth, inferred_kind, inferred_av, line);

    /* decoders may not know the line of a field they found missing: name the object's */
    if (rc && c->err) {
        if (!c->err->file[0])
            err_at(c->err, c->file, c->err->line, c->err->column);
        if (c->err->line <= 0)
            c->err->line = line;
    }
    return rc;
}

static int load_object_at(struct load_ctx *c, json_t *obj, int depth,
                          const char *inferred_kind, const char *inferred_av, int line)
{
    const json_t *kv, *avv, *md;
    const char *kind, *av, *name;
    const struct kind_info *k;
    size_t klen;

    if (!json_is_object(obj))
        return fail(c, line, NULL, -EINVAL, "expected a Kubernetes object (a mapping), got %s",
                    kube_json_type_name(obj));
    kv = json_object_get(obj, "kind");
    avv = json_object_get(obj, "apiVersion");
    if (kv && !json_is_string(kv))
        return fail(c, line_of(c, kv, line), "kind", -EINVAL,
                    "Invalid value: expected a string, got %s", kube_json_type_name(kv));
    if (avv && !json_is_string(avv))
        return fail(c, line_of(c, avv, line), "apiVersion", -EINVAL,
                    "Invalid value: expected a string, got %s", kube_json_type_name(avv));
    kind = kv ? json_string_value(kv) : inferred_kind;
    av = avv ? json_string_value(avv) : inferred_av;
    if (!kind || !*kind)
        return fail(c, line, "kind", -EINVAL, "Required value: kind not set");
    if (!av || !*av)
        return fail(c, line, "apiVersion", -EINVAL, "Required value: apiVersion not set");
    klen = strlen(kind);
    if (!strcmp(kind, "List"))
        return load_list(c, obj, kind, av, depth, line);
    if (klen > 4 && !strcmp(kind + klen - 4, "List")) {
        char item[128];

        snprintf(item, sizeof(item), "%.*s", (int)(klen - 4), kind);
        if (kind_lookup(item) || json_is_array(json_object_get(obj, "items")))
            return load_list(c, obj, kind, av, depth, line);
    }

    k = kind_lookup(kind);
    if (!k)
        return add_warning(c->in, "%s: line %d: skipping kind %s", c->file,
                           line_of(c, kv, line), kind)
                   ? nomem(c)
                   : 0;
    if (!api_version_ok(k, av))
        return fail(c, line_of(c, avv, line), "apiVersion", -EINVAL,
                    "no matches for kind \"%s\" in version \"%s\"", kind, av);
    md = json_object_get(obj, "metadata");
    if (md && !json_is_object(md))
        return fail(c, line_of(c, md, line), "metadata", -EINVAL,
                    "Invalid value: expected an object, got %s", kube_json_type_name(md));
    name = jstr(md, "name");
    if (!name || !*name) {
        const char *gen = jstr(md, "generateName");

        if (json_object_get(md, "name") && !json_is_string(json_object_get(md, "name")))
            return fail(c, line_of(c, json_object_get(md, "name"), line), "metadata.name",
                        -EINVAL, "Invalid value: expected a string, got %s",
                        kube_json_type_name(json_object_get(md, "name")));
        if (k->id != KIND_POD || !gen || !*gen)
            return fail(c, line_of(c, md, line), "metadata.name", -EINVAL,
                        k->id == KIND_POD ? "Required value: name or generateName is required"
                                          : "Required value: name is required");
    }
    switch (k->id) {
    case KIND_NODE:
        return load_node(c, obj, line);
    case KIND_POD:
        return load_pod(c, obj, line);
    case KIND_PRIORITY_CLASS:
        return load_priority_class(c, obj, line);
    default:
        return load_workload(c, obj, k, av, line);
    }
}

static void snapshot_take(const struct sched_input *in, struct snapshot *s)
{
    s->nnodes = in->nnodes;
    s->npods = in->npods;
    s->nclasses = in->nclasses;
    s->nwarnings = in->nwarnings;
    s->nds = in->priv->nds;
    s->dropped = in->priv->warnings_dropped;
    s->nstubs = in->priv->nstubs;
    s->ntaken = in->ntaken;
}

static void snapshot_restore(struct sched_input *in, const struct snapshot *s)
{
    int rebuild = in->npods != s->npods || in->nnodes != s->nnodes ||
                  in->priv->nstubs != s->nstubs;

    in->nnodes = s->nnodes;
    in->npods = s->npods;
    in->nclasses = s->nclasses;
    in->nwarnings = s->nwarnings;
    in->priv->nds = s->nds;
    in->priv->warnings_dropped = s->dropped;
    in->priv->nstubs = s->nstubs;
    in->ntaken = s->ntaken;
    if (rebuild) {
        /* best effort: on failure the sets are empty and lookups rebuild them */
        if (set_rebuild(in, &in->priv->pod_set, 1, in->npods, 0))
            in->priv->pod_set.cap = 0;
        if (set_rebuild(in, &in->priv->node_set, 0, in->nnodes, 0))
            in->priv->node_set.cap = 0;
    }
}

static int ensure_priv(struct sched_input *in, struct err *err)
{
    if (!in->priv) {
        in->priv = calloc(1, sizeof(*in->priv));
        if (!in->priv)
            return err_set(err, -ENOMEM, "out of memory");
    }
    if ((!in->priv->pod_set.cap && set_rebuild(in, &in->priv->pod_set, 1, in->npods, 0)) ||
        (!in->priv->node_set.cap && set_rebuild(in, &in->priv->node_set, 0, in->nnodes, 0)))
        return err_set(err, -ENOMEM, "out of memory");
    return 0;
}

/* ---- input: a file, standard input or a buffer, pulled by the YAML parser ---- */

/* struct source feeds the parser in chunks. When the input starts with '{' or '[' it is
 * treated as kubectl treats JSON: possibly several values one after the other, which YAML
 * does not allow, so each value after the first is made a YAML document by writing "--- " at
 * the start of its line (line numbers stay; two values on one line get a line break, which
 * shifts the following lines by one). */
enum { SRC_UNDECIDED, SRC_JSON, SRC_PLAIN };

#define SOURCE_HELD_MAX 65536

struct source {
    int fd;          /* -1 for memory */
    const char *mem; /* memory input */
    size_t memlen, mempos;
    size_t total, cap; /* bytes read so far; more than cap is an error */
    int err;           /* negative code of a read failure */
    int mode;
    int depth, in_str, esc, between; /* JSON scanner state; between: after a top-level value */
    struct buf out;             /* transformed bytes not yet handed to the parser */
    size_t outpos;
    struct buf held; /* whitespace after a top-level value, until we know what follows */
};

static int source_emit(struct source *s, const char *p, size_t n)
{
    return buf_append(&s->out, p, n);
}

/* source_filter passes n raw bytes through the JSON-stream scanner into s->out. */
static int source_filter(struct source *s, const char *raw, size_t n)
{
    size_t i;
    int rc = 0;

    for (i = 0; i < n && !rc; i++) {
        char ch = raw[i];
        int ws = ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';

        switch (s->mode) {
        case SRC_UNDECIDED:
            if (ch == '{' || ch == '[') {
                s->mode = SRC_JSON;
                s->depth = 1;
            } else if (!ws && (unsigned char)ch != 0xef && (unsigned char)ch != 0xbb &&
                       (unsigned char)ch != 0xbf) {
                s->mode = SRC_PLAIN;
            }
            rc = source_emit(s, &ch, 1);
            break;
        case SRC_PLAIN:
            /* the rest of this chunk in one go */
            rc = source_emit(s, raw + i, n - i);
            i = n;
            break;
        default:
            if (s->between) {
                if (ws && s->held.len < SOURCE_HELD_MAX) {
                    rc = buf_append(&s->held, &ch, 1);
                    break;
                }
                if (ch == '{' || ch == '[') {
                    const char *h = s->held.data ? s->held.data : "";
                    const char *nl = memrchr(h, '\n', s->held.len);

                    if (nl) {
                        size_t k = (size_t)(nl - h) + 1;

                        rc = source_emit(s, h, k);
                        if (!rc)
                            rc = source_emit(s, "--- ", 4);
                        if (!rc)
                            rc = source_emit(s, h + k, s->held.len - k);
                    } else {
                        rc = source_emit(s, h, s->held.len);
                        if (!rc)
                            rc = source_emit(s, "\n--- ", 5);
                    }
                    s->between = 0;
                    s->depth = 1;
                } else {
                    /* not a JSON stream after all: let the parser judge the rest */
                    rc = source_emit(s, s->held.data ? s->held.data : "", s->held.len);
                    s->mode = SRC_PLAIN;
                    s->between = 0;
                }
                buf_reset(&s->held);
                if (!rc)
                    rc = source_emit(s, &ch, 1);
                break;
            }
            {
                /* inside a value: scan as far as it goes, then copy the span at once */
                size_t from = i;

                for (; i < n; i++) {
                    ch = raw[i];
                    if (s->in_str) {
                        if (s->esc)
                            s->esc = 0;
                        else if (ch == '\\')
                            s->esc = 1;
                        else if (ch == '"')
                            s->in_str = 0;
                    } else if (ch == '"') {
                        s->in_str = 1;
                    } else if (ch == '{' || ch == '[') {
                        s->depth++;
                    } else if ((ch == '}' || ch == ']') && !--s->depth) {
                        s->between = 1;
                        break;
                    }
                }
                if (i == n)
                    i--; /* the loop's i++ ends the chunk */
                rc = source_emit(s, raw + from, i - from + 1);
            }
            break;
        }
    }
    return rc;
}

static long source_read(void *ctx, char *buf, size_t size)
{
    struct source *s = ctx;
    char raw[65536];
    size_t n;

    while (s->outpos == s->out.len) {
        ssize_t got;

        buf_reset(&s->out);
        s->outpos = 0;
        if (s->fd >= 0) {
            got = read(s->fd, raw, sizeof(raw));
            if (got < 0 && errno == EINTR)
                continue;
            if (got < 0)
                return s->err = -errno;
        } else {
            got = (ssize_t)(s->memlen - s->mempos < sizeof(raw) ? s->memlen - s->mempos
                                                                 : sizeof(raw));
            memcpy(raw, s->mem + s->mempos, (size_t)got);
            s->mempos += (size_t)got;
        }
        if (got == 0) {
            if (!s->held.len)
                return 0;
            if ((s->err = source_emit(s, s->held.data, s->held.len)))
                return s->err;
            buf_reset(&s->held);
            continue;
        }
        s->total += (size_t)got;
        if (s->total > s->cap)
            return s->err = -EFBIG;
        if ((s->err = source_filter(s, raw, (size_t)got)))
            return s->err;
    }
    n = s->out.len - s->outpos < size ? s->out.len - s->outpos : size;
    memcpy(buf, s->out.data + s->outpos, n);
    s->outpos += n;
    return (long)n;
}

/* Items of a root List arrive before the root is complete: they are loaded as they come,
 * inferring their kind from the list's kind when it came first, and kept or dropped once the
 * root shows whether it really is a list. */
static int list_kind(const char *kind, char *item, size_t size)
{
    size_t klen = kind ? strlen(kind) : 0;

    item[0] = '\0';
    if (!kind || klen < 4 || strcmp(kind + klen - 4, "List"))
        return 0;
    if (klen > 4)
        snprintf(item, size, "%.*s", (int)(klen - 4), kind);
    return 1;
}

static int load_document(json_t *doc, struct kube_lines *lines, json_t *list, void *ctx)
{
    struct load_ctx *c = ctx;
    const char *kind;
    char item[128];
    int rc;

    c->lines = lines;
    if (list) {
        const char *lk = jstr(list, "kind");

        if (!c->in_items) {
            c->in_items = 1;
            c->items_dropped = 0;
            snapshot_take(c->in, &c->items_snap);
        }
        if (lk && !list_kind(lk, item, sizeof(item))) {
            c->items_dropped = 1; /* not a list: its items mean nothing */
            return 0;
        }
        return load_object(c, doc, 1, item[0] ? item : NULL, jstr(list, "apiVersion"), 0);
    }
    if (c->in_items) {
        c->in_items = 0;
        kind = jstr(doc, "kind");
        if (!list_kind(kind, item, sizeof(item)) || c->items_dropped) {
            if (c->in->ntaken != c->items_snap.ntaken)
                /* their pods are with the consumer already: it cannot take them back */
                return fail(c, line_of(c, doc, 0), "items", -EINVAL,
                            "only a List may have items (kind %s%s%s)", kind ? "\"" : "",
                            kind ? kind : "missing", kind ? "\"" : "");
            snapshot_restore(c->in, &c->items_snap);
        }
    }
    rc = load_object(c, doc, 0, NULL, NULL, 0);
    return rc;
}

static int load_source(struct sched_input *in, const char *name, struct source *src,
                       struct err *err)
{
    struct load_ctx c;
    int rc;

    memset(&c, 0, sizeof(c));
    c.in = in;
    c.err = err;
    c.file = arena_strdup(&in->arena, name);
    if (!c.file)
        return err_set(err, -ENOMEM, "out of memory");
    buf_init(&src->out, 0);
    buf_init(&src->held, 0);
    rc = kube_yaml_each_read(source_read, src, c.file, KUBE_YAML_SPLIT_ITEMS, load_document, &c,
                             err);
    if (rc && src->err) {
        err_clear(err);
        if (src->err == -EFBIG)
            err_set(err, -EFBIG, "cannot read: larger than %zu MiB", src->cap >> 20);
        else
            err_set(err, src->err, "cannot read: %s", strerror(-src->err));
        err_at(err, c.file, 0, 0);
        rc = src->err;
    } else if (rc && err && !err->file[0]) {
        err_at(err, c.file, err->line, err->column);
    }
    buf_release(&src->out);
    buf_release(&src->held);
    return rc;
}

/* load_buffer loads without rolling back; the public functions wrap it. Documents are parsed
 * and decoded one at a time (and a List's items one by one), so only one object's JSON tree
 * exists at any moment. */
static int load_buffer(struct sched_input *in, const char *name, const char *data, size_t len,
                       struct err *err)
{
    struct source src;

    memset(&src, 0, sizeof(src));
    src.fd = -1;
    src.mem = data;
    src.memlen = len;
    src.cap = (size_t)-1;
    return load_source(in, name, &src, err);
}

static int load_one_file(struct sched_input *in, const char *path, struct err *err)
{
    const char *name = strcmp(path, "-") ? path : "STDIN";
    struct source src;
    int rc;

    memset(&src, 0, sizeof(src));
    src.cap = SCHED_INPUT_MAX_FILE;
    src.fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
    if (src.fd < 0) {
        rc = -errno;
        err_set(err, rc, "cannot read: %s", strerror(-rc));
        err_at(err, name, 0, 0);
        return rc;
    }
    rc = load_source(in, name, &src, err);
    if (src.fd != STDIN_FILENO)
        close(src.fd);
    return rc;
}

static int has_manifest_ext(const char *n)
{
    size_t l = strlen(n);

    return (l > 5 && !strcmp(n + l - 5, ".yaml")) || (l > 4 && !strcmp(n + l - 4, ".yml")) ||
           (l > 5 && !strcmp(n + l - 5, ".json"));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int load_dir(struct sched_input *in, const char *path, DIR *d, struct err *err)
{
    char **names = NULL;
    size_t n = 0, cap = 0, i;
    struct dirent *de;
    int rc = 0;

    while ((de = readdir(d))) {
        if (de->d_name[0] == '.' || !has_manifest_ext(de->d_name))
            continue;
        if (grow((void **)&names, &cap, n + 1, sizeof(*names)) ||
            !(names[n] = strdup(de->d_name))) {
            rc = err_set(err, -ENOMEM, "out of memory");
            goto out;
        }
        n++;
    }
    if (!n) {
        rc = err_set(err, -ENOENT,
                          "no manifests in directory: recognized file extensions are "
                          "[.json .yaml .yml]");
        err_at(err, path, 0, 0);
        goto out;
    }
    qsort(names, n, sizeof(*names), cmp_str);
    for (i = 0; i < n && !rc; i++) {
        char full[4096];

        snprintf(full, sizeof(full), "%s%s%s", path,
                 path[strlen(path) - 1] == '/' ? "" : "/", names[i]);
        rc = load_one_file(in, full, err);
    }
out:
    for (i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

/* ---- public ---- */

void sched_input_init(struct sched_input *in, const struct sched_input_opts *o)
{
    memset(in, 0, sizeof(*in));
    if (o)
        in->opts = *o;
    if (!in->opts.default_namespace || !*in->opts.default_namespace)
        in->opts.default_namespace = "default";
    if (!in->opts.max_pods)
        in->opts.max_pods = SCHED_INPUT_MAX_PODS;
    if (!in->opts.max_nodes)
        in->opts.max_nodes = SCHED_INPUT_MAX_NODES;
}

int sched_input_load_buffer(struct sched_input *in, const char *name, const char *data,
                            size_t len, struct err *err)
{
    struct snapshot s;
    int rc;

    if (in->finished)
        return err_set(err, -EINVAL, "input already finished");
    if ((rc = ensure_priv(in, err)))
        return rc;
    snapshot_take(in, &s);
    rc = load_buffer(in, name ? name : "-", data ? data : "", data ? len : 0, err);
    if (rc)
        snapshot_restore(in, &s);
    return rc;
}

int sched_input_load_file(struct sched_input *in, const char *path, struct err *err)
{
    struct snapshot s;
    DIR *d = NULL;
    int rc;

    if (in->finished)
        return err_set(err, -EINVAL, "input already finished");
    if ((rc = ensure_priv(in, err)))
        return rc;
    snapshot_take(in, &s);
    if (strcmp(path, "-"))
        d = opendir(path);
    rc = d ? load_dir(in, path, d, err) : load_one_file(in, path, err);
    if (d)
        closedir(d);
    if (rc)
        snapshot_restore(in, &s);
    return rc;
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
            if (v[j].op == KUBE_TOL_EXISTS && !strcmp(v[j].key, defaults[i].key) &&
                !*v[j].value && v[j].effect == defaults[i].effect)
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

static int finish_daemonsets(struct sched_input *in, struct err *err)
{
    struct sched_input_priv *pv = in->priv;
    struct load_ctx c;
    size_t first = in->npods, d, i, k, from;
    struct kube_pod *merged = NULL;
    size_t *count = NULL;
    int rc = 0;

    memset(&c, 0, sizeof(c));
    c.in = in;
    c.err = err;
    count = calloc(pv->nds ? pv->nds : 1, sizeof(*count));
    if (!count)
        return err_set(err, -ENOMEM, "out of memory");
    for (d = 0; d < pv->nds; d++) {
        struct kube_pod *tp = &pv->ds[d].tmpl;
        char base[320];

        c.file = tp->source_file;
        if (ds_add_tolerations(&in->arena, tp)) {
            rc = nomem(&c);
            goto out;
        }
        snprintf(base, sizeof(base), "%s-", tp->owner.name);
        for (i = 0; i < in->nnodes; i++) {
            struct kube_pod p;

            if (!ds_may_run(tp, &in->nodes[i]))
                continue;
            p = *tp;
            p.name = generated_name(&c, p.namespace_, base, i);
            if (!p.name || ds_pin(&in->arena, &p, in->nodes[i].name)) {
                rc = nomem(&c);
                goto out;
            }
            rc = append_pod(&c, &p, tp->source_line, NULL);
            if (rc)
                goto out;
            count[d]++;
        }
    }
    if (in->npods == first)
        goto out;
    /* move each DaemonSet's pods to where the DaemonSet appeared */
    merged = malloc(in->npods * sizeof(*merged));
    if (!merged) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    k = 0;
    from = first;
    i = 0;
    for (d = 0; d <= pv->nds; d++) {
        size_t pos = d < pv->nds ? pv->ds[d].pos : first;

        while (i < pos)
            merged[k++] = in->pods[i++];
        if (d < pv->nds) {
            memcpy(&merged[k], &in->pods[from], count[d] * sizeof(*merged));
            k += count[d];
            from += count[d];
        }
    }
    memcpy(in->pods, merged, in->npods * sizeof(*merged));
    if (set_rebuild(in, &pv->pod_set, 1, in->npods, 0))
        rc = err_set(err, -ENOMEM, "out of memory");
out:
    free(merged);
    free(count);
    return rc;
}

static int finish_priorities(struct sched_input *in, struct err *err)
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
            pc = find_class(in, p->priority_class_name);
            if (!pc) {
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
        if (pc && pc->preempt_never)
            p->preempt_never = true;
        if (!p->has_priority)
            p->priority = pc ? pc->value : 0;
        p->has_priority = true;
    }
    return 0;
}

int sched_input_finish(struct sched_input *in, struct err *err)
{
    size_t i;
    int rc;

    if (in->finished)
        return err_set(err, -EINVAL, "input already finished");
    if ((rc = ensure_priv(in, err)))
        return rc;
    if ((rc = finish_daemonsets(in, err)) || (rc = finish_priorities(in, err)))
        return rc;
    /* stubs first: every one of them came before every bound pod of pods[] */
    for (i = 0; i < in->priv->nstubs; i++) {
        const struct pod_stub *st = &in->priv->stubs[i];

        if (node_set_find(in, st->node) < 0 &&
            add_warning(in, "%s: line %d: pod %s/%s is bound to node %s, which is not in the input",
                        st->file, st->line, st->ns, st->name, st->node))
            return err_set(err, -ENOMEM, "out of memory");
    }
    for (i = 0; i < in->npods; i++) {
        const struct kube_pod *p = &in->pods[i];

        if (p->node_name && *p->node_name && node_set_find(in, p->node_name) < 0 &&
            add_warning(in, "%s: line %d: pod %s/%s is bound to node %s, which is not in the input",
                        p->source_file ? p->source_file : "?", p->source_line, p->namespace_,
                        p->name, p->node_name))
            return err_set(err, -ENOMEM, "out of memory");
    }
    if (in->priv->warnings_dropped) {
        size_t dropped = in->priv->warnings_dropped;

        in->priv->warnings_dropped = 0;
        in->nwarnings = WARNINGS_MAX - 1;
        if (add_warning(in, "%zu more warnings not shown", dropped + 1))
            return err_set(err, -ENOMEM, "out of memory");
    }
    /* nothing is appended after finish: give back the doubling slack (at 20,000 pods the
     * array had room for 32,768, 4 MB unused for the whole run) */
    shrink((void **)&in->pods, &in->priv->cap_pods, in->npods, sizeof(*in->pods));
    shrink((void **)&in->nodes, &in->priv->cap_nodes, in->nnodes, sizeof(*in->nodes));
    in->finished = 1;
    return 0;
}

const struct kube_pod *sched_input_find_pod(const struct sched_input *in, const char *ns,
                                            const char *name)
{
    long i;

    if (!in->priv || !name)
        return NULL;
    i = pod_set_find(in, ns ? ns : in->opts.default_namespace, name);
    return i >= 0 && !(i & STUB_BIT) ? &in->pods[i] : NULL;
}

const struct kube_node *sched_input_find_node(const struct sched_input *in, const char *name)
{
    long i;

    if (!in->priv || !name)
        return NULL;
    i = node_set_find(in, name);
    return i >= 0 ? &in->nodes[i] : NULL;
}

void sched_input_trim(struct sched_input *in)
{
    struct sched_input_priv *pv = in->priv;

    if (!pv || !in->finished)
        return;
    arena_free(&pv->node_arena);
    free(in->nodes);
    in->nodes = NULL;
    in->nnodes = 0;
    pv->cap_nodes = 0;
    free(pv->stubs);
    pv->stubs = NULL;
    pv->nstubs = pv->cap_stubs = 0;
    arena_free(&pv->stub_arena);
    pv->stub_ns = pv->stub_node = NULL;
    free(pv->pod_set.slots);
    free(pv->node_set.slots);
    memset(&pv->pod_set, 0, sizeof(pv->pod_set));
    memset(&pv->node_set, 0, sizeof(pv->node_set));
}

void sched_input_release(struct sched_input *in)
{
    struct sched_input_opts o;

    if (!in)
        return;
    o = in->opts;
    arena_free(&in->arena);
    free(in->nodes);
    free(in->pods);
    free(in->classes);
    free(in->warnings);
    if (in->priv) {
        free(in->priv->ds);
        free(in->priv->pod_set.slots);
        free(in->priv->node_set.slots);
        free(in->priv->stubs);
        arena_free(&in->priv->stub_arena);
        arena_free(&in->priv->node_arena);
        free(in->priv);
    }
    sched_input_init(in, &o);
}
