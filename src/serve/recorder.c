/* recorder.c - client-go's Event series (see recorder.h).
 *
 * The cache is a keymap from the isomorphic key to an entry, and a list of the entries from
 * the least to the most recently seen (eviction at the cap takes the head). An entry keeps
 * its Event's create body split around eventTime, so the body with a series is the two halves
 * with ,"series":{...} between them. */
#include "serve/recorder.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/keymap.h"

#define RECORDER_FINISH_S (6 * 60)   /* finishTime */
#define RECORDER_REFRESH_S (30 * 60) /* refreshTime */
#define RECORDER_MAX_TRIES 12        /* maxTriesPerEvent */
#define RECORDER_SLEEP_MS 10000      /* defaultSleepDuration, jittered by up to 25 % */

struct rec_entry {
    char *key;
    char *namespace_, *name;
    char *body;   /* the create's Event without series */
    size_t split; /* body[0..split) ends right after eventTime's value */
    struct timespec event_time;
    bool series;
    struct serve_event_series s;
    struct rec_entry *prev, *next; /* least recently seen first */
};

struct serve_recorder {
    pthread_mutex_t mu;
    struct keymap map;
    struct rec_entry *head, *tail;
    size_t n, cap;
    struct serve_event_job *retries; /* sleeping, unordered */
    bool ticked;
    struct timespec next_finish, next_refresh;
    unsigned seed;
};

static double ts_sec(const struct timespec *t)
{
    return (double)t->tv_sec + (double)t->tv_nsec / 1e9;
}

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static struct timespec ts_add_ms(const struct timespec *t, int64_t ms)
{
    struct timespec r = *t;
    int64_t ns = (int64_t)r.tv_nsec + (ms % 1000) * 1000000;

    r.tv_sec += (time_t)(ms / 1000 + ns / 1000000000);
    r.tv_nsec = (long)(ns % 1000000000);
    return r;
}

struct serve_recorder *serve_recorder_new(size_t cap, unsigned seed)
{
    struct serve_recorder *r = calloc(1, sizeof(*r));

    if (!r)
        return NULL;
    pthread_mutex_init(&r->mu, NULL);
    r->cap = cap ? cap : 1;
    r->seed = seed;
    return r;
}

void serve_event_job_free(struct serve_event_job *j)
{
    if (!j)
        return;
    free(j->namespace_);
    free(j->name);
    free(j->body);
    free(j->create_body);
    free(j->key);
    free(j);
}

static void entry_free(struct rec_entry *e)
{
    if (!e)
        return;
    free(e->key);
    free(e->namespace_);
    free(e->name);
    free(e->body);
    free(e);
}

static void lru_unlink(struct serve_recorder *r, struct rec_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        r->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        r->tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_append(struct serve_recorder *r, struct rec_entry *e)
{
    e->prev = r->tail;
    e->next = NULL;
    if (r->tail)
        r->tail->next = e;
    else
        r->head = e;
    r->tail = e;
}

static void entry_remove(struct serve_recorder *r, struct rec_entry *e)
{
    keymap_del(&r->map, e->key);
    lru_unlink(r, e);
    r->n--;
    entry_free(e);
}

void serve_recorder_free(struct serve_recorder *r)
{
    struct serve_event_job *j;

    if (!r)
        return;
    while (r->head)
        entry_remove(r, r->head);
    keymap_release(&r->map);
    while ((j = r->retries)) {
        r->retries = j->next;
        serve_event_job_free(j);
    }
    pthread_mutex_destroy(&r->mu);
    free(r);
}

/* put_key appends one part of the key and a separator no field can hold unescaped. */
static int put_key(struct buf *b, const char *s)
{
    return buf_puts(b, s ? s : "") | buf_append(b, "\x1f", 1);
}

static int put_ref_key(struct buf *b, const struct serve_objref *ref)
{
    if (!ref)
        return buf_puts(b, "-\x1f");
    return put_key(b, ref->namespace_) | put_key(b, ref->name) | put_key(b, ref->uid) |
           put_key(b, ref->resource_version);
}

static char *event_key(const struct serve_event *e)
{
    struct buf b = BUF_INIT(0);
    int rc = put_key(&b, e->type) | put_key(&b, e->action) | put_key(&b, e->reason) |
             put_key(&b, e->controller) | put_key(&b, e->instance) |
             put_ref_key(&b, &e->regarding) | put_ref_key(&b, e->related);

    if (rc) {
        buf_release(&b);
        return NULL;
    }
    return buf_take(&b);
}

/* body_with_series: the entry's Event with its series, for a create. */
static char *body_with_series(const struct rec_entry *e)
{
    char *patch = serve_event_series_patch_json(&e->s); /* {"series":{...}} */
    struct buf b = BUF_INIT(0);
    int rc;

    if (!patch)
        return NULL;
    /* ,"series":{...} between eventTime and the rest: the patch without its outer braces */
    rc = buf_append(&b, e->body, e->split) | buf_puts(&b, ",") |
         buf_append(&b, patch + 1, strlen(patch) - 2) | buf_puts(&b, e->body + e->split);
    free(patch);
    if (rc) {
        buf_release(&b);
        return NULL;
    }
    return buf_take(&b);
}

/* job_for builds the write of entry e as it stands: a create of a single Event, a patch of
 * a series (with the create to fall back on). */
static struct serve_event_job *job_for(const struct rec_entry *e)
{
    struct serve_event_job *j = calloc(1, sizeof(*j));

    if (!j)
        return NULL;
    j->namespace_ = strdup(e->namespace_);
    j->name = strdup(e->name);
    j->series = e->series;
    if (e->series) {
        j->verb = SERVE_EVENT_PATCH;
        j->body = serve_event_series_patch_json(&e->s);
        j->create_body = body_with_series(e);
        if (!j->create_body)
            goto fail;
    } else {
        j->verb = SERVE_EVENT_CREATE;
        j->body = strdup(e->body);
    }
    if (!j->namespace_ || !j->name || !j->body)
        goto fail;
    return j;
fail:
    serve_event_job_free(j);
    return NULL;
}

struct serve_event_job *serve_recorder_event(struct serve_recorder *r, const struct serve_event *e,
                                             const struct timespec *now, bool *nomem)
{
    struct serve_event_job *j = NULL;
    struct rec_entry *ent;
    char *key = event_key(e), name[320];
    const char *et;

    *nomem = false;
    if (!key) {
        *nomem = true;
        return NULL;
    }
    pthread_mutex_lock(&r->mu);
    ent = keymap_get(&r->map, key);
    if (ent) {
        free(key);
        lru_unlink(r, ent);
        lru_append(r, ent);
        if (ent->series) {
            /* seen again: counted, written by the next finish or refresh */
            ent->s.count++;
            ent->s.last_observed = *now;
            pthread_mutex_unlock(&r->mu);
            return NULL;
        }
        ent->series = true;
        ent->s.count = 2;
        ent->s.last_observed = *now;
        j = job_for(ent);
        pthread_mutex_unlock(&r->mu);
        *nomem = !j;
        return j;
    }
    ent = calloc(1, sizeof(*ent));
    if (!ent)
        goto nomem;
    ent->key = key;
    key = NULL;
    ent->event_time = *now;
    serve_event_name(e->regarding.name, now, name, sizeof(name));
    ent->name = strdup(name);
    ent->namespace_ = strdup(
        e->regarding.namespace_ && *e->regarding.namespace_ ? e->regarding.namespace_ : "default");
    ent->body = serve_event_json(e, name, now, NULL);
    if (!ent->name || !ent->namespace_ || !ent->body)
        goto nomem;
    et = strstr(ent->body, "\"eventTime\":\"");
    if (!et || !strchr(et + 13, '"'))
        goto nomem; /* cannot happen: serve_event_json writes it */
    ent->split = (size_t)(strchr(et + 13, '"') + 1 - ent->body);
    if (keymap_put(&r->map, ent->key, ent, NULL))
        goto nomem;
    lru_append(r, ent);
    r->n++;
    while (r->n > r->cap)
        entry_remove(r, r->head);
    j = job_for(ent);
    pthread_mutex_unlock(&r->mu);
    *nomem = !j;
    return j;
nomem:
    pthread_mutex_unlock(&r->mu);
    free(key);
    entry_free(ent);
    *nomem = true;
    return NULL;
}

/* retry_later puts j to sleep for 10-12.5 s (wait.Jitter(10s, 0.25)). */
static void retry_later(struct serve_recorder *r, struct serve_event_job *j,
                        const struct timespec *now)
{
    double f = (double)rand_r(&r->seed) / ((double)RAND_MAX + 1.0);

    j->due = ts_add_ms(now, RECORDER_SLEEP_MS + (int64_t)(f * 0.25 * RECORDER_SLEEP_MS));
    j->next = r->retries;
    r->retries = j;
}

enum serve_event_outcome serve_recorder_done(struct serve_recorder *r, struct serve_event_job *job,
                                             int http_status, const struct timespec *now,
                                             struct serve_event_job **next)
{
    enum serve_event_outcome out;
    bool retry;

    *next = NULL;
    if (http_status == 404 && job->verb == SERVE_EVENT_PATCH && job->create_body) {
        /* the Event is gone (expired): create it again, its series with it */
        free(job->body);
        job->body = job->create_body;
        job->create_body = NULL;
        job->verb = SERVE_EVENT_CREATE;
        *next = job;
        return SERVE_EVENT_CREATE_NEXT;
    }
    if (http_status >= 200 && http_status < 300) {
        out = SERVE_EVENT_WRITTEN;
        retry = false;
    } else if (http_status == 0) {
        out = SERVE_EVENT_RETRY; /* a transport error: the server may be back soon */
        retry = true;
    } else if (http_status == 409 && job->verb == SERVE_EVENT_CREATE) {
        /* AlreadyExists: for a series, the create raced its own first write: try again */
        out = job->series ? SERVE_EVENT_RETRY : SERVE_EVENT_ALREADY_EXISTS;
        retry = job->series;
    } else {
        out = SERVE_EVENT_REJECTED;
        retry = false;
    }
    pthread_mutex_lock(&r->mu);
    if (job->periodic) {
        if (job->finish && !retry) {
            struct rec_entry *e = keymap_get(&r->map, job->key);

            /* gone once written, unless seen again meanwhile */
            if (e && e->series && e->s.count == job->count)
                entry_remove(r, e);
        }
        pthread_mutex_unlock(&r->mu);
        serve_event_job_free(job);
        return retry ? SERVE_EVENT_KEPT : out;
    }
    if (retry) {
        if (++job->tries >= RECORDER_MAX_TRIES) {
            pthread_mutex_unlock(&r->mu);
            serve_event_job_free(job);
            return SERVE_EVENT_GAVE_UP;
        }
        retry_later(r, job, now);
        pthread_mutex_unlock(&r->mu);
        return SERVE_EVENT_RETRY;
    }
    pthread_mutex_unlock(&r->mu);
    serve_event_job_free(job);
    return out;
}

struct serve_event_job *serve_recorder_tick(struct serve_recorder *r, const struct timespec *now)
{
    struct serve_event_job *out = NULL, **tail = &out, **pp, *j;
    struct rec_entry *e, *nx;
    bool finish, refresh;

    pthread_mutex_lock(&r->mu);
    for (pp = &r->retries; (j = *pp);) {
        if (ts_before(now, &j->due)) {
            pp = &j->next;
            continue;
        }
        *pp = j->next;
        j->next = NULL;
        *tail = j;
        tail = &j->next;
    }
    finish = !r->ticked || !ts_before(now, &r->next_finish);
    refresh = !r->ticked || !ts_before(now, &r->next_refresh);
    r->ticked = true;
    if (finish)
        r->next_finish = ts_add_ms(now, RECORDER_FINISH_S * 1000LL);
    if (refresh)
        r->next_refresh = ts_add_ms(now, RECORDER_REFRESH_S * 1000LL);
    for (e = r->head; (finish || refresh) && e; e = nx) {
        bool old;

        nx = e->next;
        if (!e->series) {
            if (finish && ts_sec(&e->event_time) < ts_sec(now) - RECORDER_FINISH_S)
                entry_remove(r, e);
            continue;
        }
        old = ts_sec(&e->s.last_observed) < ts_sec(now) - RECORDER_FINISH_S;
        if (!(refresh || (finish && old)))
            continue;
        j = job_for(e);
        if (!j)
            continue; /* out of memory: the next round tries */
        j->periodic = true;
        if (finish && old) {
            j->finish = true;
            j->count = e->s.count;
            j->key = strdup(e->key);
            if (!j->key) {
                serve_event_job_free(j);
                continue;
            }
        }
        *tail = j;
        tail = &j->next;
    }
    pthread_mutex_unlock(&r->mu);
    return out;
}

size_t serve_recorder_size(struct serve_recorder *r)
{
    size_t n;

    pthread_mutex_lock(&r->mu);
    n = r->n;
    pthread_mutex_unlock(&r->mu);
    return n;
}
