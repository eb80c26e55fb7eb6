/* binder.c - worker pool for binds and the other writes (see binder.h). Two FIFO lists, binds
 * and the rest; a worker always takes a bind when one is waiting. */
#include "sched/binder.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BINDER_MAX_WORKERS 64
#define BINDER_MAX_RETRIES 10

struct task_list {
    struct sched_task *head, *tail;
    int n;
};

struct sched_binder {
    struct kube_client *c;
    sched_task_done_fn done;
    void *ud;
    pthread_mutex_t mu;
    pthread_cond_t cv, idle;
    struct task_list binds, rest;
    int running_binds, running_rest;
    bool stop;
    int nworkers;
    pthread_t workers[BINDER_MAX_WORKERS];
};

static int64_t binder_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void binder_sleep_ms(int64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

struct sched_task *sched_task_new(enum sched_task_kind kind, const char *method, const char *path,
                                  const char *content_type, const char *body)
{
    struct sched_task *t = calloc(1, sizeof(*t));

    if (!t)
        return NULL;
    t->kind = kind;
    t->method = strdup(method);
    t->path = strdup(path);
    t->content_type = content_type ? strdup(content_type) : NULL;
    t->body = body ? strdup(body) : NULL;
    if (!t->method || !t->path || (content_type && !t->content_type) || (body && !t->body)) {
        sched_task_free(t);
        return NULL;
    }
    return t;
}

void sched_task_free(struct sched_task *t)
{
    if (!t)
        return;
    free(t->method);
    free(t->path);
    free(t->content_type);
    free(t->body);
    free(t->key);
    free(t->node);
    free(t->uid);
    free(t);
}

static void list_push(struct task_list *l, struct sched_task *n)
{
    n->next = NULL;
    if (l->tail)
        l->tail->next = n;
    else
        l->head = n;
    l->tail = n;
    l->n++;
}

static struct sched_task *list_pop(struct task_list *l)
{
    struct sched_task *n = l->head;

    if (!n)
        return NULL;
    l->head = n->next;
    if (!l->head)
        l->tail = NULL;
    l->n--;
    return n;
}

/* binder_send runs one task to completion, with the retries binder.h describes. */
static void binder_send(struct sched_binder *b, struct sched_task *t)
{
    int64_t backoff = 100;

    for (;;) {
        struct kube_response resp;
        int wait_s;

        memset(&resp, 0, sizeof(resp));
        kube_err_clear(&t->err);
        t->attempts++;
        t->rc = kube_client_request(t->client ? t->client : b->c, t->method, t->path, t->content_type, t->body,
                                    t->body ? strlen(t->body) : 0, &resp, &t->err);
        kube_response_release(&resp);
        if (!t->rc || t->attempts > BINDER_MAX_RETRIES)
            return;
        wait_s = t->err.retry_after;
        if ((t->err.http_status == 429 || t->err.http_status >= 500) && wait_s >= 0) {
            binder_sleep_ms(wait_s > 0 ? (int64_t)wait_s * 1000 : 1000);
            continue;
        }
        if (t->retry_transient && kube_err_transient(&t->err) && t->attempts < 4) {
            binder_sleep_ms(backoff);
            backoff *= 2;
            continue;
        }
        return;
    }
}

static void *binder_worker(void *arg)
{
    struct sched_binder *b = arg;

    for (;;) {
        struct sched_task *n;
        bool is_bind;

        pthread_mutex_lock(&b->mu);
        while (!b->stop && !b->binds.n && !b->rest.n)
            pthread_cond_wait(&b->cv, &b->mu);
        if (b->stop) {
            pthread_mutex_unlock(&b->mu);
            return NULL;
        }
        n = list_pop(&b->binds);
        is_bind = n != NULL;
        if (!n)
            n = list_pop(&b->rest);
        if (is_bind)
            b->running_binds++;
        else
            b->running_rest++;
        pthread_mutex_unlock(&b->mu);

        if (is_bind)
            n->bind_start_ms = binder_now_ms();
        binder_send(b, n);
        b->done(b->ud, n);

        pthread_mutex_lock(&b->mu);
        if (is_bind)
            b->running_binds--;
        else
            b->running_rest--;
        pthread_cond_broadcast(&b->idle);
        pthread_mutex_unlock(&b->mu);
    }
}

int sched_binder_new(struct kube_client *c, int nworkers, sched_task_done_fn done, void *ud,
                     struct sched_binder **out, struct kube_err *err)
{
    struct sched_binder *b = calloc(1, sizeof(*b));
    int i;

    *out = NULL;
    if (!b)
        return kube_err_set(err, -ENOMEM, "out of memory");
    if (nworkers < 1)
        nworkers = 1;
    if (nworkers > BINDER_MAX_WORKERS)
        nworkers = BINDER_MAX_WORKERS;
    b->c = c;
    b->done = done;
    b->ud = ud;
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    pthread_cond_init(&b->idle, NULL);
    for (i = 0; i < nworkers; i++) {
        if (pthread_create(&b->workers[i], NULL, binder_worker, b)) {
            b->nworkers = i;
            sched_binder_free(b);
            return kube_err_set(err, -EAGAIN, "cannot start bind worker threads");
        }
    }
    b->nworkers = nworkers;
    *out = b;
    return 0;
}

void sched_binder_submit(struct sched_binder *b, struct sched_task *t)
{
    pthread_mutex_lock(&b->mu);
    list_push(t->kind == SCHED_TASK_BIND ? &b->binds : &b->rest, t);
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

int sched_binder_pending(struct sched_binder *b, bool binds_only)
{
    int n;

    pthread_mutex_lock(&b->mu);
    n = b->binds.n + b->running_binds;
    if (!binds_only)
        n += b->rest.n + b->running_rest;
    pthread_mutex_unlock(&b->mu);
    return n;
}

int sched_binder_drain(struct sched_binder *b, bool all, int64_t timeout_ms)
{
    int64_t end = binder_now_ms() + timeout_ms;
    int rc = 0;

    pthread_mutex_lock(&b->mu);
    while (b->binds.n + b->running_binds + (all ? b->rest.n + b->running_rest : 0) > 0) {
        int64_t left = end - binder_now_ms();
        struct timespec ts;

        if (left <= 0) {
            rc = -ETIMEDOUT;
            break;
        }
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += (time_t)(left / 1000);
        ts.tv_nsec += (long)(left % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&b->idle, &b->mu, &ts);
    }
    pthread_mutex_unlock(&b->mu);
    return rc;
}

void sched_binder_free(struct sched_binder *b)
{
    struct sched_task *n;
    int i;

    if (!b)
        return;
    pthread_mutex_lock(&b->mu);
    b->stop = true;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
    for (i = 0; i < b->nworkers; i++)
        pthread_join(b->workers[i], NULL);
    while ((n = list_pop(&b->binds)) || (n = list_pop(&b->rest)))
        sched_task_free(n);
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    pthread_cond_destroy(&b->idle);
    free(b);
}
