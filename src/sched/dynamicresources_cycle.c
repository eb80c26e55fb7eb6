/* dynamicresources_cycle.c - DynamicResources in the scheduling cycle: the glue between the
 * framework (framework.c, schedule.c, simulate.c) and the plugin's world of resource.k8s.io
 * objects (dynamicresources.c). PreEnqueue, PreFilter (after PodTopologySpread), Filter (the
 * last one, after InterPodAffinity), Score (weight 2, NormalizeScore to the highest), the
 * Filter again in preemption's dry run (the plugin has no PreFilterExtensions: its state does
 * not see the victims go), PostFilter, Reserve and PreBind on the chosen node, a victim's claims
 * released. As kube-scheduler v1.37.2's plugin. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "kube/rules.h"
#include "sched/cluster-int.h"
#include "sched/intern-int.h"
#include "sched/plugins-int.h"
#include "sched/sched-int.h"

void sched_cluster_set_dra(struct sched_cluster *c, struct sched_dra *w)
{
    c->dra = w;
    c->nodes_version++; /* (what the cluster caches per node may read the world) */
}

struct sched_dra *sched_cluster_dra(const struct sched_cluster *c)
{
    return c->dra;
}

void sched_cluster_set_dra_owner(struct sched_cluster *c, void *owner, void (*owner_free)(void *))
{
    c->dra_owner = owner;
    c->dra_owner_free = owner_free;
}

void *sched_cluster_dra_owner(const struct sched_cluster *c)
{
    return c->dra_owner;
}

void sched_cluster_set_dra_commit(struct sched_cluster *c, bool on)
{
    c->dra_commit = on;
}

/* the pod as the plugin reads it: the world's entry, or one made for it in cp's arena */
static const struct sched_dra_pod_in *pod_in(struct sched_cluster *c, struct sched_cpod *cp)
{
    const struct kube_pod *pod = cp->src;
    const struct sched_dra_pod_in *in = sched_dra_pod_lookup(c->dra, pod->namespace_, pod->name);
    struct kube_resources *req;

    if (in && in->pod == pod)
        return in;
    if (in) {
        /* the same pod (a copy: the retry's, with a nomination) */
        cp->dra_own = *in;
        cp->dra_own.pod = pod;
        return &cp->dra_own;
    }
    if (!(req = arena_alloc(cp->arena, sizeof(*req))) ||
        kube_pod_requests(pod, NULL, cp->arena, req))
        return NULL;
    memset(&cp->dra_own, 0, sizeof(cp->dra_own));
    cp->dra_own.namespace_ = pod->namespace_;
    cp->dra_own.name = pod->name;
    cp->dra_own.uid = pod->uid;
    cp->dra_own.claims = kube_pod_ext(pod)->resource_claims;
    cp->dra_own.nclaims = pod->nresource_claims;
    cp->dra_own.pod = pod;
    cp->dra_own.requests = req;
    cp->dra_own.extended_claim = kube_pod_ext(pod)->extended_claim;
    cp->dra_own.bound = pod->node_name && *pod->node_name;
    return &cp->dra_own;
}

const char *sched_dra_cycle_preenqueue(struct sched_cluster *c, const struct kube_pod *pod)
{
    const struct sched_dra_pod_in *in;

    if (!c->dra)
        return NULL;
    in = sched_dra_pod_lookup(c->dra, pod->namespace_, pod->name);
    if (!in) {
        struct sched_dra_pod_in tmp;

        if (!pod->nresource_claims)
            return NULL;
        memset(&tmp, 0, sizeof(tmp));
        tmp.namespace_ = pod->namespace_;
        tmp.name = pod->name;
        tmp.uid = pod->uid;
        tmp.claims = kube_pod_ext(pod)->resource_claims;
        tmp.nclaims = pod->nresource_claims;
        tmp.pod = pod;
        return sched_dra_preenqueue(c->dra, &tmp); /* (the text lives in the world) */
    }
    return sched_dra_preenqueue(c->dra, in);
}

/* an interned reason text, SCHED_NOID when out of memory */
static uint32_t reason_id(struct sched_cluster *c, const char *text)
{
    return sched_intern_add(&c->reasons, text);
}

static void set_error(struct sched_cpod *cp, const char *prefix, const char *msg)
{
    if (cp->dra_error)
        return; /* the first one stands */
    cp->dra_error = buf_fmt("%s%s", prefix, msg);
}

int sched_dra_cycle_prefilter(struct sched_cluster *c, struct sched_cpod *cp)
{
    const struct sched_dra_pod_in *in;
    char msg[2048];
    uint32_t j, r;
    int rc;

    cp->dra = NULL;
    cp->dra_delegated = 0;
    if (!c->dra || !cp->src)
        return 0;
    for (j = 0; j < cp->nscalars; j++)
        if (sched_dra_delegates(c->dra, c->strs.strs[cp->scalars[j].rid]))
            cp->dra_delegated |= 1u << j;
    if (cp->prefilter_conflict)
        return 0; /* an earlier PreFilter rejected the pod: this one does not run */
    if (!(in = pod_in(c, cp)))
        return -ENOMEM;
    msg[0] = '\0';
    sched_dra_set_binding_timeout(c->dra, cp->dra_binding_timeout_ms);
    rc = sched_dra_prefilter(c->dra, in, &cp->dra, msg, sizeof(msg));
    switch (rc) {
    case SCHED_DRA_OK:
    case SCHED_DRA_SKIP:
        return 0;
    case SCHED_DRA_UNSCHEDULABLE:
        if ((r = reason_id(c, msg)) == SCHED_NOID)
            return -ENOMEM;
        cp->prefilter_conflict = true;
        cp->prefilter_msg = c->reasons.strs[r];
        cp->prefilter_plugin = SCHED_PL_DRA;
        return 0;
    case SCHED_DRA_ERROR:
        set_error(cp, "running PreFilter plugin \"DynamicResources\": ", msg);
        return cp->dra_error ? 0 : -ENOMEM;
    default:
        return rc < 0 ? rc : -ENOMEM;
    }
}

/* the node as the world knows it */
static const struct kube_node *node_of(const struct sched_cluster *c, uint32_t slot)
{
    return sched_dra_node_at(c->dra, slot, c->slots[slot].name);
}

uint32_t sched_dra_cycle_filter(const struct sched_cluster *c, const struct sched_cpod *cp,
                                uint32_t slot, int32_t *score, bool *unresolvable)
{
    struct sched_cluster *w = (struct sched_cluster *)c; /* (reasons are interned as found) */
    struct sched_cpod *mcp = (struct sched_cpod *)cp;    /* (the attempt's first error) */
    const struct kube_node *node;
    char msg[2048];
    uint32_t r;
    int rc;

    *score = 0;
    *unresolvable = true;
    if (!cp->dra)
        return 0;
    if (!(node = node_of(c, slot))) {
        /* a node the world was not given: nothing of it is known */
        r = reason_id(w, "cannot allocate all claims");
        return r == SCHED_NOID ? SCHED_R_NOT_CHECKED : r;
    }
    msg[0] = '\0';
    rc = sched_dra_filter(cp->dra, node, msg, sizeof(msg));
    if (rc == SCHED_DRA_OK) {
        *score = (int32_t)sched_dra_score(cp->dra, node);
        return 0;
    }
    if (rc == SCHED_DRA_ERROR || rc < 0) {
        char *row;

        set_error(mcp,
                  "running \"DynamicResources\" filter plugin: ", rc < 0 ? "out of memory" : msg);
        /* the node's status in the trace is the error's (an Error, not Unschedulable) */
        *unresolvable = false;
        row = buf_fmt("error: running \"DynamicResources\" filter plugin: %s",
                      rc < 0 ? "out of memory" : msg);
        r = row ? reason_id(w, row) : SCHED_NOID;
        free(row);
        return r == SCHED_NOID ? SCHED_R_NOT_CHECKED : r;
    }
    r = reason_id(w, msg);
    return r == SCHED_NOID ? SCHED_R_NOT_CHECKED : r;
}

int sched_dra_cycle_postfilter(struct sched_cluster *c, struct sched_cpod *cp, char *msg,
                               size_t msgsize)
{
    (void)c;
    if (msgsize)
        msg[0] = '\0';
    if (!cp->dra)
        return 0;
    return sched_dra_postfilter(cp->dra, msg, msgsize) < 0 ? -ENOMEM : 0;
}

int sched_dra_cycle_prebind(struct sched_cluster *c, struct sched_cpod *cp, const char *node_name,
                            char **error)
{
    const struct kube_node *node;
    char msg[2048];
    int rc;

    *error = NULL;
    if (!cp->dra || !c->dra)
        return 0;
    if (!(node = sched_dra_node(c->dra, node_name)))
        return 0;
    msg[0] = '\0';
    rc = sched_dra_reserve(cp->dra, node, msg, sizeof(msg));
    if (rc < 0)
        return rc;
    if (rc == SCHED_DRA_ERROR &&
        !(*error = buf_fmt("running PreBind plugin \"DynamicResources\": %s", msg)))
        return -ENOMEM;
    return 0;
}

void sched_dra_cycle_release(struct sched_cpod *cp)
{
    sched_dra_pod_free(cp->dra);
    cp->dra = NULL;
    free(cp->dra_error);
    cp->dra_error = NULL;
}

void sched_dra_cycle_victim(struct sched_cluster *c, const char *ns, const char *name)
{
    const struct sched_dra_pod_in *in;

    if (!c->dra || !(in = sched_dra_pod_lookup(c->dra, ns, name)))
        return;
    sched_dra_release_pod(c->dra, ns, name, in->uid ? in->uid : "");
}
