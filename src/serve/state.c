/* state.c - serve's shared state: the locking rule and small accessors (see state.h). */
#include "serve/state.h"

#include <stdlib.h>

#include "base/clock.h"

void serve_lock(struct serve *s)
{
    atomic_fetch_add(&s->waiters, 1);
    pthread_mutex_lock(&s->mu);
    atomic_fetch_sub(&s->waiters, 1);
}

void serve_unlock(struct serve *s)
{
    /* Only a loop that stepped aside is woken here; work for the loop (a queued or moved
     * pod, a sync, leadership, a stop) broadcasts explicitly. Waking it for every bound
     * pod's watch event and every answered write would cost a context switch each. */
    if (s->yielding)
        pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void serve_wait(struct serve *s, int64_t ms)
{
    mono_cond_wait_until(&s->cv, &s->mu, mono_ms() + ms);
}

void serve_yield(struct serve *s)
{
    int rounds = 0;

    /* the condition wait releases mu, so the waiters get it; each wakes us on its way out */
    s->yielding = true;
    while (atomic_load(&s->waiters) > 0 && rounds++ < 20)
        serve_wait(s, 5);
    s->yielding = false;
}

void serve_update_gauges(struct serve *s)
{
    pthread_mutex_lock(&s->metrics.mu);
    s->metrics.pending_active = serve_queue_count(s->queue, SERVE_QUEUE_ACTIVE);
    s->metrics.pending_backoff = serve_queue_count(s->queue, SERVE_QUEUE_BACKOFF);
    s->metrics.pending_unschedulable = serve_queue_count(s->queue, SERVE_QUEUE_UNSCHEDULABLE);
    s->metrics.cache_nodes = sched_cluster_node_count(s->cluster);
    s->metrics.ready = serve_synced(s);
    pthread_mutex_unlock(&s->metrics.mu);
}

void serve_unassume(struct serve *s, const char *key)
{
    free(keymap_del(&s->assumed, key));
}

bool serve_synced(const struct serve *s)
{
    return s->nodes_synced && s->pods_synced && s->pdbs_synced && s->nss_synced &&
           s->sources_synced == SERVE_SRC_ALL;
}

bool serve_leading(struct serve *s)
{
    return !s->leader || serve_leader_is_leader(s->leader);
}
