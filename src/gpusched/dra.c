/* dra.c - the commands' Dynamic Resource Allocation: the world of resource.k8s.io objects
 * (sched/dynamicresources.h) built from a loaded input, with the CEL library behind its
 * selectors, given to the cluster (which frees it), and the devices a scheduled pod got as
 * simulate -o json lists them. */
#include "gpusched/dra-int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/buf.h"
#include "kube/rules.h"
#include "sched/dra_cel.h"

/* what the cluster's owner holds: the world and everything it borrows that the input does
 * not hold (the CEL context, the pods as the plugin reads them, copies of bound pods) */
struct gpusched_dra {
    struct sched_dra *w;
    struct sched_dra_cel cel;
    bool cel_ready;
    struct arena a;                  /* pod_in records and copies: stable addresses */
    struct sched_dra_pod_in **bound; /* bound pods handed to the cluster while loading */
    size_t nbound, cbound;
};

static void owner_free(void *arg)
{
    struct gpusched_dra *g = arg;

    if (!g)
        return;
    sched_dra_free(g->w);
    if (g->cel_ready)
        sched_dra_cel_release(&g->cel);
    free(g->bound);
    arena_release(&g->a);
    free(g);
}

static struct gpusched_dra *owner_of(struct sched_cluster *c)
{
    struct gpusched_dra *g = sched_cluster_dra_owner(c);

    if (g)
        return g;
    if (!(g = calloc(1, sizeof(*g))))
        return NULL;
    sched_cluster_set_dra_owner(c, g, owner_free);
    return g;
}

static const char *dup(struct arena *a, const char *s)
{
    return s ? arena_strdup(a, s) : NULL;
}

/* a pod's uid, or one made up for a pod from a file, which has none (the API server gives
 * every pod one: claims the plugin makes are owned by it, reservations name it) */
static const char *uid_of(struct arena *a, const struct kube_pod *p)
{
    char buf[600];

    if (p->uid && *p->uid)
        return dup(a, p->uid);
    snprintf(buf, sizeof(buf), "gpusched-uid:%s/%s", p->namespace_, p->name);
    return dup(a, buf);
}

int gpusched_dra_take_bound(struct sched_cluster *c, const struct kube_pod *pod)
{
    const struct kube_pod_extra *x = kube_pod_ext(pod);
    struct gpusched_dra *g;
    struct sched_dra_pod_in *in;
    struct kube_pod_resource_claim *cl = NULL;
    size_t i;

    if (!pod->nresource_claims && !x->extended_claim)
        return 0;
    if (!(g = owner_of(c)) || !(in = arena_alloc(&g->a, sizeof(*in))))
        return -ENOMEM;
    if (pod->nresource_claims && !(cl = arena_alloc(&g->a, pod->nresource_claims * sizeof(*cl))))
        return -ENOMEM;
    for (i = 0; i < pod->nresource_claims; i++) {
        const struct kube_pod_resource_claim *s = &x->resource_claims[i];

        cl[i].name = dup(&g->a, s->name);
        cl[i].resource_claim_name = dup(&g->a, s->resource_claim_name);
        cl[i].resource_claim_template_name = dup(&g->a, s->resource_claim_template_name);
        cl[i].status_claim_name = dup(&g->a, s->status_claim_name);
    }
    in->namespace_ = dup(&g->a, pod->namespace_);
    in->name = dup(&g->a, pod->name);
    in->uid = uid_of(&g->a, pod);
    in->claims = cl;
    in->nclaims = pod->nresource_claims;
    in->extended_claim = dup(&g->a, x->extended_claim);
    in->bound = true;
    if (!in->namespace_ || !in->name || !in->uid)
        return -ENOMEM;
    if (g->nbound == g->cbound) {
        size_t n = g->cbound ? g->cbound * 2 : 16;
        struct sched_dra_pod_in **b = realloc(g->bound, n * sizeof(*b));

        if (!b)
            return -ENOMEM;
        g->bound = b;
        g->cbound = n;
    }
    g->bound[g->nbound++] = in;
    return 0;
}

static bool live_input;

void gpusched_dra_live_input(void)
{
    live_input = true;
}

/* the input holds something DynamicResources reads */
static bool wanted(const struct manifest_input *in, const struct gpusched_dra *g)
{
    size_t i;

    if (live_input)
        return false;
    if (in->ndevice_classes || in->nresource_slices || in->nresource_claims ||
        in->nclaim_templates || in->ndevice_taint_rules || (g && g->nbound))
        return true;
    for (i = 0; i < in->npods; i++)
        if (in->pods[i].nresource_claims)
            return true;
    return false;
}

/* the first alpha field (off in v1.37) of a request, or NULL */
static const char *alpha_request(const struct kube_dra_claim_spec *s)
{
    size_t i, j;

    for (i = 0; i < s->nrequests; i++) {
        if (s->requests[i].exactly && s->requests[i].exactly->nderived_attributes)
            return "derivedAttributes (DRADerivedAttributes)";
        for (j = 0; j < s->requests[i].nfirst_available; j++)
            if (s->requests[i].first_available[j].nderived_attributes)
                return "derivedAttributes (DRADerivedAttributes)";
    }
    return NULL;
}

/* the first alpha field of a slice, or NULL */
static const char *alpha_slice(const struct kube_resource_slice *s)
{
    size_t i, j;

    if (s->partition_type_attribute)
        return "spec.partitionTypeAttribute (DRAPartitionableDevicesType)";
    if (s->nskip_node_operations)
        return "spec.skipNodeOperations (DRAOptionalNodeOperations)";
    for (i = 0; i < s->ndevices; i++) {
        const struct kube_dra_device *d = &s->devices[i];

        if (d->nnode_allocatable)
            return "nodeAllocatableResources (DRANodeAllocatableResources)";
        for (j = 0; j < d->nattributes; j++)
            if (d->attributes[j].type == KUBE_DRA_LIST)
                return "a list-typed attribute (DRAListTypeAttributes)";
        for (j = 0; j < d->nconsumes_counters; j++)
            if (d->consumes_counters[j].ncompatibility_groups)
                return "compatibilityGroups (DRADeviceCompatibilityGroups)";
    }
    return NULL;
}

/* warn of the alpha fields (their gates are off in v1.37: the API server drops them and
 * kube-scheduler does not read them; neither does gpusched) */
static void warn_alpha(const struct manifest_input *in)
{
    const char *what;
    size_t i;

    for (i = 0; i < in->nresource_slices; i++)
        if ((what = alpha_slice(&in->resource_slices[i])))
            fprintf(stderr,
                    "gpusched: warning: ResourceSlice %s: %s is an alpha field, off in "
                    "kube-scheduler v1.37: not read\n",
                    in->resource_slices[i].name, what);
    for (i = 0; i < in->nresource_claims; i++)
        if ((what = alpha_request(&in->resource_claims[i].spec)))
            fprintf(stderr,
                    "gpusched: warning: ResourceClaim %s/%s: %s is an alpha field, off in "
                    "kube-scheduler v1.37: not read\n",
                    in->resource_claims[i].namespace_, in->resource_claims[i].name, what);
    for (i = 0; i < in->nclaim_templates; i++)
        if ((what = alpha_request(&in->claim_templates[i].spec)))
            fprintf(stderr,
                    "gpusched: warning: ResourceClaimTemplate %s/%s: %s is an alpha field, off "
                    "in kube-scheduler v1.37: not read\n",
                    in->claim_templates[i].namespace_, in->claim_templates[i].name, what);
}

/* ---- --kube-version: what an older release's API server drops ----
 *
 * A field whose feature gate is off in release 1.MINOR is dropped by that release's API server
 * when the object is created; gpusched reads its input as written. Where the allocator then
 * ignores the field (taints, extendedResourceName, DeviceTaintRules, allowMultipleAllocations)
 * the answer is 1.MINOR's; where a present field changes the allocation with the gate off
 * (counters, binding conditions, capacity requests, distinctAttribute), or 1.34's pools
 * (devices of an incomplete pool allocatable, an invalid pool failing the attempt) differ from
 * 1.35's, the answer may not be: a warning says which. */

/* the first field of a slice that 1.MINOR's API server drops, or NULL; *exact: gpusched's
 * answer is still that release's */
static const char *old_slice(const struct kube_resource_slice *s, int minor, bool *exact)
{
    size_t i;

    if (minor >= 36)
        return NULL;
    *exact = false;
    if (s->nshared_counters)
        return "spec.sharedCounters (DRAPartitionableDevices)";
    if (s->per_device_node_selection)
        return "spec.perDeviceNodeSelection (DRAPartitionableDevices)";
    for (i = 0; i < s->ndevices; i++) {
        if (s->devices[i].nconsumes_counters)
            return "consumesCounters (DRAPartitionableDevices)";
        if (s->devices[i].nbinding_conditions)
            return "bindingConditions (DRADeviceBindingConditions)";
    }
    *exact = true;
    for (i = 0; i < s->ndevices; i++) {
        if (s->devices[i].ntaints)
            return "taints (DRADeviceTaints)";
        if (s->devices[i].allow_multiple_allocations > 0)
            return "allowMultipleAllocations (DRAConsumableCapacity)";
    }
    return NULL;
}

static const char *old_request(const struct kube_dra_request *r, bool *exact)
{
    if (r->has_capacity) {
        *exact = false;
        return "capacity (DRAConsumableCapacity)";
    }
    if (r->ntolerations) {
        *exact = true;
        return "tolerations (DRADeviceTaints)";
    }
    return NULL;
}

/* the same for a claim's spec */
static const char *old_claim(const struct kube_dra_claim_spec *s, int minor, bool *exact)
{
    const char *what = NULL;
    size_t i, j;

    if (minor >= 36)
        return NULL;
    for (i = 0; i < s->nconstraints; i++)
        if (s->constraints[i].distinct_attribute) {
            *exact = false;
            return "distinctAttribute (DRAConsumableCapacity)";
        }
    for (i = 0; i < s->nrequests && !what; i++) {
        if (s->requests[i].exactly)
            what = old_request(s->requests[i].exactly, exact);
        for (j = 0; j < s->requests[i].nfirst_available && !what; j++)
            what = old_request(&s->requests[i].first_available[j], exact);
    }
    return what;
}

static void warn_old(const char *kind, const char *ns, const char *name, const char *what,
                     bool exact, int minor)
{
    char tail[80];

    if (exact)
        snprintf(tail, sizeof(tail), "not read");
    else
        snprintf(tail, sizeof(tail), "read as written, so the answer may differ from 1.%d's",
                 minor);
    fprintf(stderr,
            "gpusched: warning: %s %s%s%s: %s is off by default in kube-scheduler 1.%d (its "
            "API server drops the field): %s\n",
            kind, ns ? ns : "", ns ? "/" : "", name, what, minor, tail);
}

/* 1.MINOR's same slices of a pool's generation (driver, pool, generation) */
static bool same_pool(const struct kube_resource_slice *a, const struct kube_resource_slice *b)
{
    return !strcmp(a->driver, b->driver) && !strcmp(a->pool, b->pool) &&
           a->generation == b->generation;
}

/* a 1.34 pool that 1.35 treats otherwise: one whose newest generation's slices are not all
 * there (resourceSliceCount), or that names a device twice; asked of the generation's first
 * slice (k), NULL for the others */
static const char *pool_134(const struct manifest_input *in, size_t k)
{
    const struct kube_resource_slice *s = &in->resource_slices[k];
    int64_t n = 0;
    size_t i, i2, j, l;

    for (i = 0; i < in->nresource_slices; i++) {
        const struct kube_resource_slice *o = &in->resource_slices[i];

        if (strcmp(o->driver, s->driver) || strcmp(o->pool, s->pool))
            continue;
        if (o->generation > s->generation || (o->generation == s->generation && i < k))
            return NULL;
        if (o->generation < s->generation)
            continue;
        n++;
        for (i2 = i; i2 < in->nresource_slices; i2++) {
            const struct kube_resource_slice *o2 = &in->resource_slices[i2];

            if (!same_pool(o, o2))
                continue;
            for (j = 0; j < o->ndevices; j++)
                for (l = i2 == i ? j + 1 : 0; l < o2->ndevices; l++)
                    if (!strcmp(o->devices[j].name, o2->devices[l].name))
                        return "names a device twice (an invalid pool)";
        }
    }
    return n != s->resource_slice_count ? "is incomplete (resourceSliceCount)" : NULL;
}

static void warn_version(const struct manifest_input *in, int minor)
{
    const char *what;
    bool exact = true;
    size_t i;

    if (minor >= 37)
        return;
    if (in->ndevice_taint_rules)
        fprintf(stderr,
                "gpusched: warning: DeviceTaintRule %s: DRADeviceTaintRules is off by default "
                "in kube-scheduler 1.%d (resource.k8s.io/v1 has no DeviceTaintRule): not "
                "read\n",
                in->device_taint_rules[0].name, minor);
    for (i = 0; i < in->ndevice_classes && minor < 36; i++)
        if (in->device_classes[i].extended_resource_name)
            warn_old("DeviceClass", NULL, in->device_classes[i].name,
                     "spec.extendedResourceName (DRAExtendedResource)", true, minor);
    for (i = 0; i < in->nresource_slices; i++) {
        if ((what = old_slice(&in->resource_slices[i], minor, &exact)))
            warn_old("ResourceSlice", NULL, in->resource_slices[i].name, what, exact, minor);
        if (minor == 34 && (what = pool_134(in, i)))
            fprintf(stderr,
                    "gpusched: warning: ResourceSlice %s: pool %s/%s %s: kube-scheduler 1.34 "
                    "treats such a pool otherwise than 1.35 (not modelled): the answer is "
                    "1.35's\n",
                    in->resource_slices[i].name, in->resource_slices[i].driver,
                    in->resource_slices[i].pool, what);
    }
    for (i = 0; i < in->nresource_claims; i++) {
        const struct kube_resource_claim *c = &in->resource_claims[i];
        size_t k;

        if ((what = old_claim(&c->spec, minor, &exact)))
            warn_old("ResourceClaim", c->namespace_, c->name, what, exact, minor);
        /* (1.35's Filter does not check the binding of allocated devices either) */
        for (k = 0; minor < 36 && c->allocation && k < c->allocation->nresults; k++)
            if (c->allocation->results[k].nbinding_conditions) {
                warn_old("ResourceClaim", c->namespace_, c->name,
                         "status.allocation.devices.results[].bindingConditions "
                         "(DRADeviceBindingConditions)",
                         true, minor);
                break;
            }
    }
    for (i = 0; i < in->nclaim_templates; i++)
        if ((what = old_claim(&in->claim_templates[i].spec, minor, &exact)))
            warn_old("ResourceClaimTemplate", in->claim_templates[i].namespace_,
                     in->claim_templates[i].name, what, exact, minor);
}

static int build(const struct manifest_input *in, struct gpusched_dra *g, int minor,
                 struct err *err)
{
    struct dra_features f = dra_features_for(minor);
    size_t i;
    int rc = 0;

    if (sched_dra_cel_init(&g->cel))
        return err_set(err, -ENOMEM, "out of memory");
    g->cel_ready = true;
    if (!(g->w = sched_dra_new(&g->cel, &f)))
        return err_set(err, -ENOMEM, "out of memory");
    for (i = 0; i < in->nnodes && !rc; i++)
        rc = sched_dra_add_node(g->w, &in->nodes[i]);
    for (i = 0; i < in->ndevice_classes && !rc; i++)
        rc = sched_dra_add_class(g->w, &in->device_classes[i]);
    for (i = 0; i < in->nresource_slices && !rc; i++)
        rc = sched_dra_add_slice(g->w, &in->resource_slices[i]);
    for (i = 0; i < in->ndevice_taint_rules && !rc; i++)
        rc = sched_dra_add_taint_rule(g->w, &in->device_taint_rules[i]);
    for (i = 0; i < in->nresource_claims && !rc; i++)
        rc = sched_dra_add_claim(g->w, &in->resource_claims[i]);
    for (i = 0; i < in->nclaim_templates && !rc; i++)
        rc = sched_dra_add_template(g->w, &in->claim_templates[i]);
    /* the pods in input order: the bound ones handed over while loading came first */
    for (i = 0; i < g->nbound && !rc; i++)
        rc = sched_dra_add_pod(g->w, g->bound[i]);
    for (i = 0; i < in->npods && !rc; i++) {
        const struct kube_pod *p = &in->pods[i];
        struct sched_dra_pod_in *pin = arena_alloc(&g->a, sizeof(*pin));
        struct kube_resources *req = arena_alloc(&g->a, sizeof(*req));

        if (!pin || !req || kube_pod_requests(p, NULL, &g->a, req) ||
            !(pin->uid = uid_of(&g->a, p))) {
            rc = -ENOMEM;
            break;
        }
        pin->namespace_ = p->namespace_;
        pin->name = p->name;
        pin->claims = kube_pod_ext(p)->resource_claims;
        pin->nclaims = p->nresource_claims;
        pin->pod = p;
        pin->requests = req;
        pin->extended_claim = kube_pod_ext(p)->extended_claim;
        pin->bound = p->node_name && *p->node_name;
        rc = sched_dra_add_pod(g->w, pin);
    }
    if (rc)
        return err_set(err, rc, "out of memory");
    return sched_dra_commit(g->w, err);
}

int gpusched_dra_attach(const struct manifest_input *in, struct sched_cluster *c, int minor)
{
    struct gpusched_dra *g = sched_cluster_dra_owner(c);
    struct err err;

    if (live_input) {
        size_t i;

        for (i = 0; i < in->npods; i++)
            if (in->pods[i].nresource_claims && !(in->pods[i].node_name && *in->pods[i].node_name))
                fprintf(stderr,
                        "gpusched: warning: pod %s/%s: spec.resourceClaims: the cluster's "
                        "resource.k8s.io objects could not all be listed: the pod is left "
                        "pending\n",
                        in->pods[i].namespace_, in->pods[i].name);
        return 0;
    }
    if (!wanted(in, g))
        return 0;
    if (minor < 34) {
        /* resource.k8s.io/v1 is served from 1.34 on, when DRA became GA and on by default */
        fprintf(stderr,
                "gpusched: warning: --kube-version 1.%d: kube-scheduler 1.%d has Dynamic "
                "Resource Allocation off by default and no resource.k8s.io/v1; the input's "
                "DRA objects and claims are modelled with 1.34's rules\n",
                minor, minor);
        minor = 34;
    }
    warn_alpha(in);
    warn_version(in, minor);
    err_clear(&err);
    if (!(g = owner_of(c)) || build(in, g, minor, &err)) {
        fprintf(stderr, "gpusched: %s\n", err.msg[0] ? err.msg : "out of memory");
        return 1;
    }
    sched_cluster_set_dra(c, g->w);
    return 0;
}

json_t *gpusched_dra_claims(const struct sched_cluster *c, const struct kube_pod *pod)
{
    struct sched_dra *w = sched_cluster_dra(c);
    const struct sched_dra_pod_in *in;
    const struct sched_dra_device_out *d;
    json_t *arr;
    size_t n = 0, i;

    if (!w || !(in = sched_dra_pod_lookup(w, pod->namespace_, pod->name)) ||
        sched_dra_pod_devices(w, in, &d, &n) || !n)
        return NULL;
    if (!(arr = json_array()))
        return NULL;
    for (i = 0; i < n; i++) {
        char claim[600];
        json_t *o;

        snprintf(claim, sizeof(claim), "%s/%s", d[i].claim_namespace, d[i].claim_name);
        o = json_pack("{s:s,s:s,s:s,s:s,s:s}", "claim", claim, "request", d[i].request, "driver",
                      d[i].driver, "pool", d[i].pool, "device", d[i].device);
        if (!o || json_array_append_new(arr, o)) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

/* at most this many devices named in a binding-conditions warning ("and N more") */
#define BINDING_WARN_DEVICES 8

int gpusched_dra_binding_warning(const struct sched_cluster *c, const struct kube_pod *pod,
                                 const char *cmd, int64_t timeout_ms, char **line)
{
    struct sched_dra *w = sched_cluster_dra(c);
    const struct sched_dra_pod_in *in;
    struct sched_dra_binding_wait *v = NULL;
    const char **conds = NULL;
    struct buf b = BUF_INIT(0);
    size_t n = 0, i, k;
    int rc;

    *line = NULL;
    if (!w || !(in = sched_dra_pod_lookup(w, pod->namespace_, pod->name)))
        return 0;
    if (timeout_ms <= 0)
        timeout_ms = SCHED_DRA_BINDING_TIMEOUT_MS;
    rc = sched_dra_pod_binding_waits(w, in, sched_dra_now_ms(), timeout_ms, &v, &n, &conds);
    if (rc || !n)
        goto out;
    rc = buf_printf(&b, "pod %s/%s: binding conditions of its devices are not met yet (",
                    pod->namespace_, pod->name);
    for (i = 0; i < n && i < BINDING_WARN_DEVICES && !rc; i++) {
        rc = buf_printf(&b, "%s%s/%s/%s:", i ? "; " : "", v[i].driver, v[i].pool, v[i].device);
        for (k = 0; k < v[i].nconditions && !rc; k++)
            rc = buf_printf(&b, "%s%s", k ? ", " : " ", v[i].conditions[k]);
    }
    if (!rc && n > BINDING_WARN_DEVICES)
        rc = buf_printf(&b, "; and %zu more", n - BINDING_WARN_DEVICES);
    if (!rc && timeout_ms % 1000)
        rc = buf_printf(&b,
                        "): kube-scheduler binds the pod only once the driver sets them True "
                        "(PreBind waits up to bindingTimeout %.3fs, then fails the attempt); "
                        "%s assumes they are met",
                        (double)timeout_ms / 1000, cmd);
    else if (!rc)
        rc = buf_printf(&b,
                        "): kube-scheduler binds the pod only once the driver sets them True "
                        "(PreBind waits up to bindingTimeout %" PRId64 "s, then fails the "
                        "attempt); %s assumes they are met",
                        timeout_ms / 1000, cmd);
    if (!rc && !(*line = buf_take(&b)))
        rc = -ENOMEM;
out:
    buf_release(&b);
    free(v);
    free(conds);
    return rc ? -ENOMEM : 0;
}

/* the device's productName (bare or qualified), NULL when it has none or is a MIG device */
static const char *gpu_product(const struct kube_dra_device *d)
{
    const char *product = NULL;
    size_t i;

    for (i = 0; i < d->nattributes; i++) {
        const struct kube_dra_attribute *a = &d->attributes[i];
        const char *slash = strrchr(a->name, '/');
        const char *id = slash ? slash + 1 : a->name;

        if (a->type != KUBE_DRA_STRING || !a->s)
            continue;
        if (!strcmp(id, "type") && strcmp(a->s, "gpu"))
            return NULL;
        if (!strcmp(id, "productName"))
            product = a->s;
    }
    return product;
}

static bool slice_sees(const char *node_name, bool all_nodes, const struct kube_node_selector *sel,
                       const struct kube_node *n)
{
    if (node_name && *node_name)
        return !strcmp(node_name, n->name);
    if (all_nodes)
        return true;
    return sel && kube_node_selector_matches(sel, n);
}

int gpusched_dra_node_gpus(const struct manifest_input *in, const struct sched_cluster *c,
                           const struct kube_node *n, struct gpusched_dra_gpus *out)
{
    struct sched_dra *w = c ? sched_cluster_dra(c) : NULL;
    size_t i, j;

    memset(out, 0, sizeof(*out));
    for (i = 0; i < in->nresource_slices; i++) {
        const struct kube_resource_slice *s = &in->resource_slices[i];
        bool sees = !s->per_device_node_selection &&
                    slice_sees(s->node_name, s->all_nodes, s->node_selector, n);

        for (j = 0; j < s->ndevices; j++) {
            const struct kube_dra_device *d = &s->devices[j];
            const char *product = gpu_product(d);
            size_t k, len;

            if (!product ||
                !(sees || (s->per_device_node_selection &&
                           slice_sees(d->node_name, d->all_nodes, d->node_selector, n))))
                continue;
            out->count++;
            if (w && sched_dra_device_use(w, s->driver, s->pool, d->name))
                out->used++;
            len = strlen(out->product);
            if (!strstr(out->product, product) && len + strlen(product) + 2 < sizeof(out->product))
                snprintf(out->product + len, sizeof(out->product) - len, "%s%s", len ? "," : "",
                         product);
            for (k = 0; k < d->ncapacity && !out->mem[0]; k++)
                if (!strcmp(d->capacity[k].name, "memory") ||
                    (strrchr(d->capacity[k].name, '/') &&
                     !strcmp(strrchr(d->capacity[k].name, '/') + 1, "memory"))) {
                    snprintf(out->mem, sizeof(out->mem), "%s",
                             d->capacity[k].value.text ? d->capacity[k].value.text : "");
                    out->mem_bytes = (int64_t)(d->capacity[k].value.nano / 1000000000);
                }
        }
    }
    return out->count;
}

void gpusched_dra_warn_gpu_placement(const struct manifest_input *in, const struct sched_cluster *c)
{
    static bool said;
    struct sched_dra *w = sched_cluster_dra(c);
    size_t i, j;

    if (said || (w && sched_dra_delegates(w, "nvidia.com/gpu")))
        return;
    for (i = 0; i < in->nresource_slices; i++)
        for (j = 0; j < in->resource_slices[i].ndevices; j++)
            if (gpu_product(&in->resource_slices[i].devices[j])) {
                fprintf(stderr,
                        "gpusched: warning: ResourceSlice %s publishes GPUs, but no DeviceClass "
                        "serves nvidia.com/gpu (extendedResourceName): GPUPlacement counts the "
                        "device plugin's nvidia.com/gpu only (docs/scheduling.md, \"GPU-aware "
                        "profile\")\n",
                        in->resource_slices[i].name);
                said = true;
                return;
            }
}

int gpusched_dra_add_copy(struct sched_cluster *c, const struct kube_pod *copy)
{
    struct gpusched_dra *g = sched_cluster_dra_owner(c);
    struct sched_dra *w = sched_cluster_dra(c);
    struct sched_dra_pod_in *pin;
    struct kube_resources *req;
    struct err err;
    size_t i;

    if (!w || !g)
        return 0;
    for (i = 0; i < copy->nresource_claims; i++)
        if (kube_pod_ext(copy)->resource_claims[i].resource_claim_template_name)
            break;
    if (i == copy->nresource_claims)
        return 0;
    pin = arena_alloc(&g->a, sizeof(*pin));
    req = arena_alloc(&g->a, sizeof(*req));
    if (!pin || !req || kube_pod_requests(copy, NULL, &g->a, req))
        goto nomem;
    memset(pin, 0, sizeof(*pin));
    pin->namespace_ = dup(&g->a, copy->namespace_);
    pin->name = dup(&g->a, copy->name);
    pin->uid = uid_of(&g->a, copy);
    pin->claims = kube_pod_ext(copy)->resource_claims;
    pin->nclaims = copy->nresource_claims;
    pin->pod = copy;
    pin->requests = req;
    if (!pin->namespace_ || !pin->name || !pin->uid || sched_dra_add_pod(w, pin))
        goto nomem;
    err_clear(&err);
    if (sched_dra_commit(w, &err)) {
        fprintf(stderr, "gpusched: %s\n", err.msg);
        return 1;
    }
    return 0;
nomem:
    fprintf(stderr, "gpusched: out of memory\n");
    return 1;
}
