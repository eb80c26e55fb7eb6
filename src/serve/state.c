/* state.c - serve's shared state: the locking rule and small accessors (see state-int.h). */
#include "serve/state-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    serve_metrics_set_pending(&s->metrics, SERVE_PENDING_ACTIVE,
                              serve_queue_count(s->queue, SERVE_QUEUE_ACTIVE));
    serve_metrics_set_pending(&s->metrics, SERVE_PENDING_BACKOFF,
                              serve_queue_count(s->queue, SERVE_QUEUE_BACKOFF));
    serve_metrics_set_pending(&s->metrics, SERVE_PENDING_UNSCHEDULABLE,
                              serve_queue_count(s->queue, SERVE_QUEUE_UNSCHEDULABLE));
    serve_metrics_set_pending(&s->metrics, SERVE_PENDING_GATED,
                              serve_queue_count(s->queue, SERVE_QUEUE_GATED));
    s->metrics.cache_nodes = sched_cluster_node_count(s->cluster);
    s->metrics.cache_assumed = s->assumed.len;
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

uint64_t serve_cache_pod_count(struct serve *s)
{
    struct sched_node_usage u;
    uint64_t n = 0;
    size_t i;

    for (i = 0; !sched_cluster_node_at(s->cluster, i, &u); i++)
        n += u.npods;
    return n;
}

/* A pod's uid and resourceVersion, by "namespace/name". */
struct serve_podref {
    char *uid, *rv; /* point into key's allocation */
    char key[];
};

void serve_podref_set(struct serve *s, const char *key, const char *uid, const char *rv)
{
    size_t lk = strlen(key) + 1, lu = strlen(uid ? uid : "") + 1, lr = strlen(rv ? rv : "") + 1;
    struct serve_podref *r = malloc(sizeof(*r) + lk + lu + lr);
    void *old = NULL;

    pthread_mutex_lock(&s->refs_mu);
    if (r) {
        memcpy(r->key, key, lk);
        r->uid = memcpy(r->key + lk, uid ? uid : "", lu);
        r->rv = memcpy(r->uid + lu, rv ? rv : "", lr);
        if (keymap_put(&s->podrefs, r->key, r, &old)) {
            free(r);
            free(keymap_del(&s->podrefs, key)); /* better none than a stale one */
        }
    } else {
        free(keymap_del(&s->podrefs, key));
    }
    pthread_mutex_unlock(&s->refs_mu);
    free(old);
}

void serve_podref_delete(struct serve *s, const char *key)
{
    pthread_mutex_lock(&s->refs_mu);
    free(keymap_del(&s->podrefs, key));
    pthread_mutex_unlock(&s->refs_mu);
}

void serve_podref_get(struct serve *s, const char *key, char *uid, size_t usize, char *rv,
                      size_t rsize)
{
    const struct serve_podref *r;

    pthread_mutex_lock(&s->refs_mu);
    r = keymap_get(&s->podrefs, key);
    snprintf(uid, usize, "%s", r ? r->uid : "");
    snprintf(rv, rsize, "%s", r ? r->rv : "");
    pthread_mutex_unlock(&s->refs_mu);
}

void serve_podrefs_release(struct serve *s)
{
    size_t i;

    for (i = 0; i < s->podrefs.cap; i++)
        if (s->podrefs.slots[i].key)
            free(s->podrefs.slots[i].value);
    keymap_release(&s->podrefs);
}
