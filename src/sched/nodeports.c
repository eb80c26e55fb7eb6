/* nodeports.c - kube-scheduler's NodePorts (pkg/scheduler/framework/plugins/nodeports): the
 * pod's host ports (usage.c) against the node's set, HostPortInfo.CheckConflict's rule: the
 * same port and protocol conflict when either IP is 0.0.0.0 or both are the same. */
#include "sched/plugins-int.h"

#include "sched/sched-int.h"

/* HostPortInfo.CheckConflict for each wanted port */
bool sched_nodeports_filter(const struct sched_cluster *c, const struct sched_port *np,
                            uint32_t nnp, const struct sched_cpod *cp)
{
    uint32_t i, j;

    for (i = 0; i < cp->nports; i++) {
        const struct sched_port *w = &cp->ports[i];
        for (j = 0; j < nnp; j++) {
            if (!np[j].used || np[j].port != w->port || np[j].proto != w->proto)
                continue;
            if (w->ip == c->id_bind_all || np[j].ip == c->id_bind_all || np[j].ip == w->ip)
                return false;
        }
    }
    return true;
}

bool sched_nodeports_pod_conflict(const struct sched_cluster *c, const struct sched_pod *p,
                                  const struct sched_cpod *cp)
{
    uint32_t j;

    for (j = 0; j < p->nports; j++) {
        struct sched_port x = p->ports[j];
        x.used = true;
        if (!sched_nodeports_filter(c, &x, 1, cp))
            return true;
    }
    return false;
}
