/* sched_stub.c - placeholder bodies for sched.h so callers link while the core is written.
 * Every scheduling call fails with -ENOSYS; the cluster holds nothing. Replaced by the real
 * modules (cluster.c, filter.c, score.c, preempt.c, message.c, simulate.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"

const struct sched_profile sched_profile_default = {"default", false, "nvidia.com/gpu", 0,
                                                    SCHED_TAINT_WORDING_KEY_VALUE};
const struct sched_profile sched_profile_gpu = {"gpu", true, "nvidia.com/gpu", 10,
                                                SCHED_TAINT_WORDING_KEY_VALUE};

const struct sched_profile *sched_profile_find(const char *name)
{
    if (name && !strcmp(name, "default"))
        return &sched_profile_default;
    if (name && !strcmp(name, "gpu"))
        return &sched_profile_gpu;
    return NULL;
}

void sched_rng_seed(struct sched_rng *r, uint64_t seed) { r->state = seed; }
uint64_t sched_rng_below(struct sched_rng *r, uint64_t n) { return r->state++ % n; }

struct sched_cluster {
    size_t nnodes;
};

struct sched_cluster *sched_cluster_new(void) { return calloc(1, sizeof(struct sched_cluster)); }
void sched_cluster_free(struct sched_cluster *c) { free(c); }
int sched_cluster_add_node(struct sched_cluster *c, const struct kube_node *n, struct kube_err *e)
{
    (void)c, (void)n;
    return kube_err_set(e, -ENOSYS, "scheduling core not built yet");
}
int sched_cluster_update_node(struct sched_cluster *c, const struct kube_node *n, struct kube_err *e)
{
    return sched_cluster_add_node(c, n, e);
}
int sched_cluster_remove_node(struct sched_cluster *c, const char *name)
{
    (void)c, (void)name;
    return -ENOENT;
}
int sched_cluster_add_pod(struct sched_cluster *c, const struct kube_pod *p, struct kube_err *e)
{
    (void)c, (void)p;
    return kube_err_set(e, -ENOSYS, "scheduling core not built yet");
}
int sched_cluster_remove_pod(struct sched_cluster *c, const char *ns, const char *name)
{
    (void)c, (void)ns, (void)name;
    return -ENOENT;
}
int sched_cluster_assume_pod(struct sched_cluster *c, const struct kube_pod *p, const char *node,
                             struct kube_err *e)
{
    (void)c, (void)p, (void)node;
    return kube_err_set(e, -ENOSYS, "scheduling core not built yet");
}
int sched_cluster_forget_pod(struct sched_cluster *c, const char *ns, const char *name)
{
    (void)c, (void)ns, (void)name;
    return -ENOENT;
}
size_t sched_cluster_node_count(const struct sched_cluster *c) { return c->nnodes; }
int sched_cluster_node_usage(const struct sched_cluster *c, const char *name,
                             struct sched_node_usage *u)
{
    (void)c, (void)name, (void)u;
    return -ENOENT;
}
int sched_cluster_node_at(const struct sched_cluster *c, size_t i, struct sched_node_usage *u)
{
    (void)c, (void)i, (void)u;
    return -ENOENT;
}
void sched_result_release(struct sched_result *r)
{
    size_t i;

    for (i = 0; i < r->nvictims; i++) {
        free(r->victims[i].namespace_);
        free(r->victims[i].name);
    }
    free(r->victims);
    free(r->node);
    free(r->message);
    free(r->nominated_node);
    memset(r, 0, sizeof(*r));
}
int sched_schedule_one(struct sched_cluster *c, const struct sched_profile *p,
                       const struct kube_pod *pod, struct sched_rng *rng, struct sched_result *out,
                       struct kube_err *err)
{
    (void)c, (void)p, (void)pod, (void)rng;
    memset(out, 0, sizeof(*out));
    return kube_err_set(err, -ENOSYS, "scheduling core not built yet");
}
int sched_explain(struct sched_cluster *c, const struct sched_profile *p, const struct kube_pod *pod,
                  struct sched_rng *rng, struct sched_explanation *out, struct kube_err *err)
{
    (void)c, (void)p, (void)pod, (void)rng;
    memset(out, 0, sizeof(*out));
    return kube_err_set(err, -ENOSYS, "scheduling core not built yet");
}
void sched_explanation_release(struct sched_explanation *x)
{
    sched_result_release(&x->result);
    kube_arena_free(&x->arena);
    memset(x, 0, sizeof(*x));
}
int sched_simulate(struct sched_cluster *c, const struct sched_profile *p,
                   const struct kube_pod *const *pods, size_t n, const struct sched_sim_opts *o,
                   struct sched_result *results, struct kube_err *err)
{
    (void)c, (void)p, (void)pods, (void)o;
    memset(results, 0, n * sizeof(*results));
    return kube_err_set(err, -ENOSYS, "scheduling core not built yet");
}
