/* informer.c - list/watch loop with a key -> resourceVersion store (see informer.h).
 *
 * The store lets a relist be turned into the exact difference with what the handler has
 * already seen: objects whose resourceVersion is unchanged are skipped, new ones are ADDs,
 * changed ones UPDATEs, and store keys absent from the list DELETEs. The store is touched
 * only by the informer's own thread. */
#include "kube/informer.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/keymap.h"

#define INFORMER_KEY_MAX 512
#define INFORMER_RV_MAX 64

struct store_entry {
    uint64_t gen;   /* list generation that last saw the object */
    uint64_t added; /* the list generation that added it, 0 when a watch event did */
    char rv[INFORMER_RV_MAX];
    char key[];
};

struct kube_informer {
    struct kube_client *c;
    struct kube_informer_opts o;
    char *path;
    char *field_selector;
    struct keymap store;
    uint64_t gen;
    bool listing;             /* informer_list is running: what it adds is marked added */
    char rv[INFORMER_RV_MAX]; /* last resourceVersion seen (list, event or bookmark) */
    atomic_bool synced;
    atomic_ullong lists, watches;
    unsigned rand_state;
    pthread_t thread;
    bool started;
    /* per-watch state */
    int watch_events;
    char watch_error[256];
};

/* kube_object_key writes "namespace/name" or "name" of an API object into buf; returns buf,
 * or NULL when metadata.name is missing or the key does not fit. */
static const char *kube_object_key(json_t *obj, char *buf, size_t size)
{
    json_t *md = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    int n;

    if (!name || !*name)
        return NULL;
    if (ns && *ns)
        n = snprintf(buf, size, "%s/%s", ns, name);
    else
        n = snprintf(buf, size, "%s", name);
    return n < 0 || (size_t)n >= size ? NULL : buf;
}

static const char *object_rv(json_t *obj)
{
    const char *rv =
        json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));

    return rv ? rv : "";
}

static void informer_log(struct kube_informer *inf, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void informer_log(struct kube_informer *inf, int level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    if (!inf->o.log)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    inf->o.log(inf->o.ud, level, inf->o.resource, msg);
}

/* informer_sleep waits ms, waking early when asked to stop; returns non-zero on stop. */
static int informer_sleep(struct kube_informer *inf, int64_t ms)
{
    double end = mono_now() + (double)ms / 1000;

    /* the stop flag is a plain variable, looked at every 100 ms */
    while (!*inf->o.stop) {
        double now = mono_now();

        if (now >= end)
            return 0;
        mono_sleep_until(end - now > 0.1 ? now + 0.1 : end);
    }
    return 1;
}

/* informer_apply delivers one observed state of an object. When listing, gen marks it
 * seen; the watch passes gen 0 (keeps the mark). */
static int informer_apply(struct kube_informer *inf, json_t *obj, bool deleted)
{
    char kbuf[INFORMER_KEY_MAX];
    const char *key = kube_object_key(obj, kbuf, sizeof(kbuf));
    const char *rv = object_rv(obj);
    struct store_entry *e;
    bool wanted;
    size_t n;

    if (!key) {
        informer_log(inf, 0, "skipping an object without metadata.name");
        return 0;
    }
    e = keymap_get(&inf->store, key);
    wanted = !deleted && (!inf->o.filter || inf->o.filter(inf->o.ud, obj));
    if (!wanted) {
        if (e) {
            keymap_del(&inf->store, e->key);
            inf->o.fn(inf->o.ud, KUBE_INFORMER_DELETE, key, obj);
            free(e);
        }
        return 0;
    }
    if (e) {
        e->gen = inf->gen;
        if (!strcmp(e->rv, rv))
            return 0;
        snprintf(e->rv, sizeof(e->rv), "%s", rv);
        inf->o.fn(inf->o.ud, KUBE_INFORMER_UPDATE, key, obj);
        return 0;
    }
    n = strlen(key);
    e = calloc(1, sizeof(*e) + n + 1);
    if (!e)
        return -ENOMEM;
    memcpy(e->key, key, n + 1);
    snprintf(e->rv, sizeof(e->rv), "%s", rv);
    e->gen = inf->gen;
    e->added = inf->listing ? inf->gen : 0;
    if (keymap_put(&inf->store, e->key, e, NULL)) {
        free(e);
        return -ENOMEM;
    }
    inf->o.fn(inf->o.ud, KUBE_INFORMER_ADD, key, obj);
    return 0;
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* informer_drop delivers a DELETE for every object of the store that pick says (at
 * generation gen) must go, and forgets it. */
static int informer_drop(struct kube_informer *inf,
                         bool (*pick)(const struct store_entry *e, uint64_t gen))
{
    char **gone = calloc(inf->store.len + 1, sizeof(*gone));
    size_t ngone = 0, i;

    if (!gone)
        return -ENOMEM;
    for (i = 0; i < inf->store.cap; i++) {
        struct store_entry *e = inf->store.slots[i].value;

        if (inf->store.slots[i].key && pick(e, inf->gen))
            gone[ngone++] = e->key;
    }
    /* in the order of their keys: the store's slots are in an order of its secret hash */
    qsort(gone, ngone, sizeof(*gone), cmp_key);
    for (i = 0; i < ngone; i++) {
        struct store_entry *e = keymap_del(&inf->store, gone[i]);

        inf->o.fn(inf->o.ud, KUBE_INFORMER_DELETE, e->key, NULL);
        free(e);
    }
    free(gone);
    return 0;
}

/* not seen by the list of generation gen: deleted meanwhile */
static bool unseen(const struct store_entry *e, uint64_t gen)
{
    return e->gen != gen;
}

/* added by the list of generation gen, which failed */
static bool added_by(const struct store_entry *e, uint64_t gen)
{
    return e->added == gen;
}

/* informer_list does a full paginated list and then deletes what the list no longer holds.
 * The list is bounded (struct kube_list_budget: a deadline, pages, bytes; the informer's stop
 * flag ends it within a second); a list that fails takes back the objects it added, as
 * client-go's reflector, which replaces its store only with a whole list, would never have
 * had them: a server that lists without end cannot make the store grow from one failed list
 * to the next. */
static int informer_list(struct kube_informer *inf, struct err *err)
{
    char path[4096], cont_esc[2048];
    const char *cont = NULL;
    struct kube_response resp;
    struct kube_list_budget b;
    char *cont_copy = NULL;
    int rc = 0;

    inf->gen++;
    inf->listing = true;
    kube_list_budget_init(&b, inf->c, inf->o.stop);
    for (;;) {
        json_t *items, *item, *md;
        size_t idx;
        const char *next, *rv;

        snprintf(path, sizeof(path), "%s?limit=%d%s%s%s%s", inf->path, inf->o.page_size,
                 cont ? "&continue=" : "",
                 cont ? kube_path_escape(cont, cont_esc, sizeof(cont_esc)) : "",
                 inf->field_selector ? "&fieldSelector=" : "",
                 inf->field_selector ? inf->field_selector : "");
        memset(&resp, 0, sizeof(resp));
        rc = kube_client_list_page(inf->c, path, &b, &resp, err);
        if (rc) {
            kube_response_release(&resp);
            goto out;
        }
        items = json_object_get(resp.json, "items");
        md = json_object_get(resp.json, "metadata");
        if (!json_is_array(items)) {
            kube_response_release(&resp);
            rc =
                err_set(err, -EPROTO, "list of %s: the answer has no items array", inf->o.resource);
            goto out;
        }
        json_array_foreach(items, idx, item)
        {
            rc = informer_apply(inf, item, false);
            if (rc) {
                kube_response_release(&resp);
                err_set(err, rc, "out of memory");
                goto out;
            }
        }
        rv = json_string_value(json_object_get(md, "resourceVersion"));
        if (rv)
            snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
        next = json_string_value(json_object_get(md, "continue"));
        free(cont_copy);
        cont_copy = next && *next ? strdup(next) : NULL;
        kube_response_release(&resp);
        if (!cont_copy)
            break;
        cont = cont_copy;
        if (*inf->o.stop)
            goto out;
    }
    /* Everything the store holds that this list did not mention was deleted meanwhile. */
    if (informer_drop(inf, unseen)) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    atomic_fetch_add(&inf->lists, 1);
    inf->o.fn(inf->o.ud, KUBE_INFORMER_SYNCED, NULL, NULL);
    atomic_store(&inf->synced, true);
out:
    inf->listing = false;
    if (rc && !*inf->o.stop && informer_drop(inf, added_by))
        informer_log(inf, 0, "out of memory taking back a failed list's objects");
    free(cont_copy);
    return rc;
}

/* Watch callback results that stop the stream. */
enum { WATCH_EXPIRED = 1, WATCH_FAILED = 2 };

static int informer_on_event(void *ud, const char *type, json_t *obj)
{
    struct kube_informer *inf = ud;

    inf->watch_events++;
    if (!strcmp(type, "BOOKMARK")) {
        const char *rv = object_rv(obj);

        if (*rv)
            snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
        return 0;
    }
    if (!strcmp(type, "ERROR")) {
        long code = (long)json_integer_value(json_object_get(obj, "code"));
        const char *reason = json_string_value(json_object_get(obj, "reason"));
        const char *msg = json_string_value(json_object_get(obj, "message"));

        snprintf(inf->watch_error, sizeof(inf->watch_error), "%ld %s: %s", code,
                 reason ? reason : "", msg ? msg : "");
        if (code == 410 || (reason && (!strcmp(reason, "Expired") || !strcmp(reason, "Gone"))))
            return WATCH_EXPIRED;
        return WATCH_FAILED;
    }
    if (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED") || !strcmp(type, "DELETED")) {
        const char *rv = object_rv(obj);

        if (informer_apply(inf, obj, !strcmp(type, "DELETED"))) {
            snprintf(inf->watch_error, sizeof(inf->watch_error), "out of memory");
            return WATCH_FAILED;
        }
        if (*rv)
            snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
        return 0;
    }
    informer_log(inf, 2, "ignoring watch event of type %s", type);
    return 0;
}

static int64_t informer_jitter(struct kube_informer *inf, int64_t ms)
{
    /* up to +25%, so replicas and informers do not reconnect in lockstep */
    return ms + (int64_t)(rand_r(&inf->rand_state) % (unsigned)(ms / 4 + 1));
}

static void *informer_thread(void *arg)
{
    struct kube_informer *inf = arg;
    int64_t backoff = inf->o.backoff_initial_ms;
    bool need_list = true;
    char path[4096];

    while (!*inf->o.stop) {
        struct err err;
        int64_t started;
        int rc, timeout;

        err_clear(&err);
        if (need_list) {
            rc = informer_list(inf, &err);
            if (*inf->o.stop)
                break;
            if (rc) {
                char msg[1200];

                informer_log(inf, 0, "list failed (retrying in %lld ms): %s", (long long)backoff,
                             err_format(&err, msg, sizeof(msg)));
                if (informer_sleep(inf, informer_jitter(inf, backoff)))
                    break;
                backoff = backoff * 2 > inf->o.backoff_max_ms ? inf->o.backoff_max_ms : backoff * 2;
                continue;
            }
            informer_log(inf, 2, "listed at resourceVersion %s (%zu objects)", inf->rv,
                         inf->store.len);
            need_list = false;
        }
        timeout = inf->o.watch_timeout_s > 0 ? inf->o.watch_timeout_s
                                             : 300 + (int)(rand_r(&inf->rand_state) % 300);
        snprintf(path, sizeof(path),
                 "%s?watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%d%s%s",
                 inf->path, inf->rv, timeout, inf->field_selector ? "&fieldSelector=" : "",
                 inf->field_selector ? inf->field_selector : "");
        inf->watch_events = 0;
        inf->watch_error[0] = '\0';
        started = mono_ms();
        atomic_fetch_add(&inf->watches, 1);
        rc = kube_client_watch(inf->c, path, informer_on_event, inf, inf->o.stop, &err);
        if (*inf->o.stop)
            break;
        if (rc == WATCH_EXPIRED) {
            informer_log(inf, 2, "watch expired (%s); relisting", inf->watch_error);
            need_list = true;
            continue;
        }
        if (rc == 0 && (inf->watch_events > 0 || mono_ms() - started >= 1000)) {
            /* a clean end (timeoutSeconds): resume from the last resourceVersion */
            backoff = inf->o.backoff_initial_ms;
            continue;
        }
        {
            char msg[1200];

            if (rc == WATCH_FAILED)
                snprintf(msg, sizeof(msg), "watch error event: %s", inf->watch_error);
            else if (rc)
                err_format(&err, msg, sizeof(msg));
            else
                snprintf(msg, sizeof(msg), "watch ended at once without events");
            informer_log(inf, 0, "%s; relisting in %lld ms", msg, (long long)backoff);
        }
        need_list = true;
        if (informer_sleep(inf, informer_jitter(inf, backoff)))
            break;
        backoff = backoff * 2 > inf->o.backoff_max_ms ? inf->o.backoff_max_ms : backoff * 2;
    }
    return NULL;
}

int kube_informer_start(struct kube_client *c, const struct kube_informer_opts *o,
                        struct kube_informer **out, struct err *err)
{
    struct kube_informer *inf = calloc(1, sizeof(*inf));

    *out = NULL;
    if (!inf)
        return err_set(err, -ENOMEM, "out of memory");
    inf->c = c;
    inf->o = *o;
    if (inf->o.page_size <= 0)
        inf->o.page_size = 500;
    if (inf->o.backoff_initial_ms <= 0)
        inf->o.backoff_initial_ms = 800;
    if (inf->o.backoff_max_ms <= 0)
        inf->o.backoff_max_ms = 30000;
    inf->path = strdup(o->path);
    if (o->field_selector) {
        char esc[1024];

        inf->field_selector = strdup(kube_path_escape(o->field_selector, esc, sizeof(esc)));
    }
    inf->rand_state = (unsigned)time(NULL) ^ (unsigned)getpid() ^ (unsigned)(uintptr_t)inf;
    if (!inf->path || (o->field_selector && !inf->field_selector)) {
        kube_informer_free(inf);
        return err_set(err, -ENOMEM, "out of memory");
    }
    if (pthread_create(&inf->thread, NULL, informer_thread, inf)) {
        free(inf->path);
        free(inf->field_selector);
        free(inf);
        return err_set(err, -EAGAIN, "cannot start the %s informer thread", o->resource);
    }
    {
        char name[16];

        snprintf(name, sizeof(name), "inf-%s", o->resource);
        pthread_setname_np(inf->thread, name); /* 15 characters at most; top -H shows it */
    }
    inf->started = true;
    *out = inf;
    return 0;
}

void kube_informer_free(struct kube_informer *inf)
{
    size_t i;

    if (!inf)
        return;
    if (inf->started)
        pthread_join(inf->thread, NULL);
    for (i = 0; i < inf->store.cap; i++)
        if (inf->store.slots[i].key)
            free(inf->store.slots[i].value);
    keymap_release(&inf->store);
    free(inf->path);
    free(inf->field_selector);
    free(inf);
}

bool kube_informer_synced(const struct kube_informer *inf)
{
    return atomic_load(&((struct kube_informer *)inf)->synced);
}

uint64_t kube_informer_lists(const struct kube_informer *inf)
{
    return atomic_load(&((struct kube_informer *)inf)->lists);
}

uint64_t kube_informer_watches(const struct kube_informer *inf)
{
    return atomic_load(&((struct kube_informer *)inf)->watches);
}
