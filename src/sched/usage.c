/* usage.c - what a pod takes from its node, as kube-scheduler counts it: its requests
 * (kube_pod_requests, with and without the scoring defaults for missing cpu and memory), in
 * interned form, and its host ports (see usage-int.h). Used when a pod is counted on a node
 * (cluster.c) and when one is compiled for a cycle (compile.c). */
#include "sched/usage-int.h"

#include <errno.h>
#include <string.h>

#include "kube/rules.h"
#include "sched/intern-int.h"
#include "sched/sched-int.h"

int sched_pod_usage(struct sched_cluster *c, const struct kube_pod *pod, struct sched_usage *u)
{
    static const struct kube_requests_opts nonzero = {SCHED_DEFAULT_MILLI_CPU, SCHED_DEFAULT_MEMORY,
                                                      false};
    struct kube_resources req, nz;
    struct arena_mark mark;
    size_t i;
    int rc;

    memset(u, 0, sizeof(*u));
    /* the scalars' arrays are scratch: given back before returning */
    arena_mark(&c->cp_arena, &mark);
    if ((rc = kube_pod_requests(pod, NULL, &c->cp_arena, &req)) ||
        (rc = kube_pod_requests(pod, &nonzero, &c->cp_arena, &nz)))
        goto out;
    if (req.nscalars > SCHED_MAX_POD_SCALARS) {
        rc = -E2BIG;
        goto out;
    }
    u->cpu = req.cpu_milli;
    u->mem = req.memory;
    u->eph = req.ephemeral;
    u->nz_cpu = nz.cpu_milli;
    u->nz_mem = nz.memory;
    if (kube_pod_level_requests_set(pod)) {
        /* what LeastAllocated adds for the pod being scheduled: kube-scheduler v1.37's Fit
         * scorer is built without pod-level resources (its filter and BalancedAllocation
         * use them, and so does the node's total of its pods) */
        static const struct kube_requests_opts containers = {SCHED_DEFAULT_MILLI_CPU,
                                                             SCHED_DEFAULT_MEMORY, true};
        struct kube_resources sc;
        if ((rc = kube_pod_requests(pod, &containers, &c->cp_arena, &sc)))
            goto out;
        u->score_nz_cpu = sc.cpu_milli;
        u->score_nz_mem = sc.memory;
    } else {
        u->score_nz_cpu = u->nz_cpu;
        u->score_nz_mem = u->nz_mem;
    }
    for (i = 0; i < req.nscalars; i++) {
        uint32_t rid = sched_intern_add(&c->strs, req.scalars[i].name);

        if (rid == SCHED_NOID) {
            rc = -ENOMEM;
            goto out;
        }
        if (req.scalars[i].value != 0) {
            u->scalars[u->nscalars].rid = rid;
            u->scalars[u->nscalars].alloc = 0;
            u->scalars[u->nscalars++].req = req.scalars[i].value;
        }
    }
out:
    arena_rewind(&c->cp_arena, &mark);
    return rc;
}

/* host_port_container returns pod's i-th container (containers, then init containers) if its
 * ports count toward host ports (every container, and init containers that restart), else NULL. */
static const struct kube_container *host_port_container(const struct kube_pod *pod, size_t i)
{
    const struct kube_container *k;

    if (i < pod->ncontainers)
        return &pod->containers[i];
    k = &pod->init_containers[i - pod->ncontainers];
    return k->restart_always ? k : NULL;
}

uint32_t sched_pod_count_host_ports(const struct kube_pod *pod)
{
    const struct kube_container *k;
    uint32_t n = 0;
    size_t i;

    for (i = 0; i < pod->ncontainers + pod->ninit_containers; i++)
        if ((k = host_port_container(pod, i)))
            n += (uint32_t)k->nports;
    return n;
}

int sched_pod_host_ports(struct sched_cluster *c, const struct kube_pod *pod,
                         struct sched_port *out, uint32_t *nout)
{
    const struct kube_container *k;
    uint32_t n = 0;
    size_t i, j;
    int rc = 0;

    for (i = 0; i < pod->ncontainers + pod->ninit_containers; i++) {
        if (!(k = host_port_container(pod, i)))
            continue;
        for (j = 0; j < k->nports; j++) {
            int32_t hp = k->ports[j].host_port;
            const char *ip = k->ports[j].host_ip;
            if (hp <= 0 && pod->host_network)
                hp = k->ports[j].container_port;
            if (hp <= 0)
                continue;
            out[n].ip = sched_intern_add(&c->strs, ip && *ip ? ip : "0.0.0.0");
            if (out[n].ip == SCHED_NOID) {
                rc = -ENOMEM;
                goto out;
            }
            out[n].proto = (uint8_t)k->ports[j].protocol;
            out[n].port = hp;
            out[n].used = false;
            n++;
        }
    }
out:
    *nout = n;
    return rc;
}
