/* leader.c - Lease-based leader election (see leader-int.h; algorithm per client-go's
 * leaderelection.tryAcquireOrRenew). */
#include "serve/leader-int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "serve/events.h"

struct serve_leader {
    struct kube_client *c;
    struct serve_leader_opts o;
    char *ns, *name, *identity;
    char path[1024], create_path[512];
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    atomic_bool leading;
    atomic_llong last_renew_ms;
    /* observed record (election thread only) */
    char observed_rv[64];
    int64_t observed_ms;
    char observed_holder[256];
    int32_t observed_transitions;
    struct timespec acquire;
    char my_rv[64]; /* resourceVersion of our last successful write */
    unsigned rnd;
};

static void leader_log(struct serve_leader *l, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void leader_log(struct serve_leader *l, int level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    if (!l->o.log)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    l->o.log(l->o.ud, level, msg);
}

const char *serve_leader_identity(char *buf, size_t size)
{
    char host[256] = "unknown";
    unsigned char r[8] = {0};
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

    if (fd >= 0) {
        if (read(fd, r, sizeof(r)) != (ssize_t)sizeof(r))
            memset(r, 0, sizeof(r));
        close(fd);
    }
    if (!r[0] && !r[1]) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        r[0] = (unsigned char)ts.tv_nsec;
        r[1] = (unsigned char)getpid();
    }
    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    snprintf(buf, size, "%s_%02x%02x%02x%02x%02x%02x%02x%02x", host, r[0], r[1], r[2], r[3], r[4],
             r[5], r[6], r[7]);
    return buf;
}

int serve_leader_check(const struct serve_leader_opts *o, struct err *err)
{
    if (o->lease_duration_ms <= o->renew_deadline_ms)
        return err_set(err, -EINVAL,
                       "--leader-elect-lease-duration must be greater than "
                       "--leader-elect-renew-deadline");
    if ((double)o->renew_deadline_ms <= 1.2 * (double)o->retry_period_ms)
        return err_set(err, -EINVAL,
                       "--leader-elect-renew-deadline must be greater than "
                       "1.2 x --leader-elect-retry-period");
    if (o->retry_period_ms < 1)
        return err_set(err, -EINVAL, "--leader-elect-retry-period must be positive");
    return 0;
}

/* leader_write PUTs (rv set) or POSTs (rv NULL) our record; returns 0 or the error code. */
static int leader_write(struct serve_leader *l, const char *rv, const char *holder,
                        int32_t duration_s, int32_t transitions, const struct timespec *acquire,
                        struct err *err)
{
    struct serve_lease rec;
    struct kube_response resp;
    struct timespec now;
    char *body;
    int rc;

    clock_gettime(CLOCK_REALTIME, &now);
    rec.namespace_ = l->ns;
    rec.name = l->name;
    rec.resource_version = rv;
    rec.holder = holder;
    rec.duration_s = duration_s;
    rec.acquire = acquire ? *acquire : now;
    rec.renew = now;
    rec.transitions = transitions;
    body = serve_lease_json(&rec);
    if (!body)
        return err_set(err, -ENOMEM, "out of memory");
    memset(&resp, 0, sizeof(resp));
    rc = kube_client_request(l->c, rv ? "PUT" : "POST", rv ? l->path : l->create_path,
                             "application/json", body, strlen(body), &resp, err);
    if (!rc) {
        const char *nrv = json_string_value(
            json_object_get(json_object_get(resp.json, "metadata"), "resourceVersion"));

        snprintf(l->my_rv, sizeof(l->my_rv), "%s", nrv ? nrv : "");
        if (!acquire)
            l->acquire = now;
    }
    kube_response_release(&resp);
    free(body);
    return rc;
}

static int32_t lease_seconds(int64_t ms)
{
    return (int32_t)((ms + 999) / 1000);
}

/* leader_try is tryAcquireOrRenew: true when we hold the lease after the call. */
static bool leader_try(struct serve_leader *l)
{
    struct kube_response resp;
    struct err err;
    json_t *spec;
    const char *holder, *rv;
    int32_t dur, transitions;
    int64_t now = mono_ms();
    bool mine, ok = false;
    int rc;
    char msg[1200];

    err_clear(&err);
    memset(&resp, 0, sizeof(resp));
    rc = kube_client_request(l->c, "GET", l->path, NULL, NULL, 0, &resp, &err);
    if (rc && err.http_status == 404) {
        kube_response_release(&resp);
        err_clear(&err);
        rc = leader_write(l, NULL, l->identity, lease_seconds(l->o.lease_duration_ms), 0, NULL,
                          &err);
        if (rc) {
            leader_log(l, 2, "cannot create lease %s/%s: %s", l->ns, l->name,
                       err_format(&err, msg, sizeof(msg)));
            return false;
        }
        snprintf(l->observed_rv, sizeof(l->observed_rv), "%s", l->my_rv);
        l->observed_ms = now;
        l->observed_transitions = 0;
        snprintf(l->observed_holder, sizeof(l->observed_holder), "%s", l->identity);
        return true;
    }
    if (rc) {
        leader_log(l, 2, "cannot read lease %s/%s: %s", l->ns, l->name,
                   err_format(&err, msg, sizeof(msg)));
        kube_response_release(&resp);
        return false;
    }
    spec = json_object_get(resp.json, "spec");
    holder = json_string_value(json_object_get(spec, "holderIdentity"));
    holder = holder ? holder : "";
    dur = (int32_t)json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
    transitions = (int32_t)json_integer_value(json_object_get(spec, "leaseTransitions"));
    rv = json_string_value(
        json_object_get(json_object_get(resp.json, "metadata"), "resourceVersion"));
    rv = rv ? rv : "";
    if (strcmp(rv, l->observed_rv)) {
        snprintf(l->observed_rv, sizeof(l->observed_rv), "%s", rv);
        snprintf(l->observed_holder, sizeof(l->observed_holder), "%s", holder);
        l->observed_transitions = transitions;
        l->observed_ms = now;
    }
    mine = !strcmp(holder, l->identity);
    if (*holder && !mine && l->observed_ms + (int64_t)dur * 1000 > now) {
        leader_log(l, 4, "lease %s/%s is held by %s", l->ns, l->name, holder);
        goto out;
    }
    err_clear(&err);
    rc = leader_write(l, rv, l->identity, lease_seconds(l->o.lease_duration_ms),
                      mine ? transitions : transitions + 1, mine ? &l->acquire : NULL, &err);
    if (rc) {
        leader_log(l, err.http_status == 409 ? 4 : 2, "cannot %s lease %s/%s: %s",
                   mine ? "renew" : "take", l->ns, l->name, err_format(&err, msg, sizeof(msg)));
        goto out;
    }
    if (!mine)
        leader_log(l, 2, "took lease %s/%s from %s", l->ns, l->name, *holder ? holder : "(none)");
    snprintf(l->observed_rv, sizeof(l->observed_rv), "%s", l->my_rv);
    l->observed_transitions = mine ? transitions : transitions + 1;
    snprintf(l->observed_holder, sizeof(l->observed_holder), "%s", l->identity);
    l->observed_ms = now;
    ok = true;
out:
    kube_response_release(&resp);
    return ok;
}

/* leader_wait sleeps ms unless stopped; returns true when stopped. */
static bool leader_wait(struct serve_leader *l, int64_t ms)
{
    int64_t deadline = mono_ms() + ms;
    bool stop;

    pthread_mutex_lock(&l->mu);
    if (!l->stop)
        mono_cond_wait_until(&l->cv, &l->mu, deadline);
    stop = l->stop;
    pthread_mutex_unlock(&l->mu);
    return stop;
}

static void *leader_thread(void *arg)
{
    struct serve_leader *l = arg;

    /* acquire */
    for (;;) {
        int64_t jitter = (int64_t)(rand_r(&l->rnd) % 1000) * l->o.retry_period_ms * 12 / 10000;

        if (leader_try(l))
            break;
        if (leader_wait(l, l->o.retry_period_ms + jitter))
            return NULL;
    }
    atomic_store(&l->last_renew_ms, mono_ms());
    atomic_store(&l->leading, true);
    leader_log(l, 2, "became leader of %s/%s as %s", l->ns, l->name, l->identity);
    if (l->o.changed)
        l->o.changed(l->o.ud, true);
    /* renew */
    for (;;) {
        if (leader_wait(l, l->o.retry_period_ms))
            return NULL;
        if (leader_try(l)) {
            atomic_store(&l->last_renew_ms, mono_ms());
            continue;
        }
        if (mono_ms() - atomic_load(&l->last_renew_ms) >= l->o.renew_deadline_ms) {
            atomic_store(&l->leading, false);
            leader_log(l, 0, "leader election lost: could not renew lease %s/%s within %lld ms",
                       l->ns, l->name, (long long)l->o.renew_deadline_ms);
            if (l->o.changed)
                l->o.changed(l->o.ud, false);
            return NULL;
        }
    }
}

int serve_leader_start(struct kube_client *c, const struct serve_leader_opts *o,
                       struct serve_leader **out, struct err *err)
{
    struct serve_leader *l;
    char ens[256], ename[256];
    int rc, n;

    *out = NULL;
    rc = serve_leader_check(o, err);
    if (rc)
        return rc;
    l = calloc(1, sizeof(*l));
    if (!l)
        return err_set(err, -ENOMEM, "out of memory");
    l->c = c;
    l->o = *o;
    l->ns = strdup(o->namespace_);
    l->name = strdup(o->name);
    l->identity = strdup(o->identity);
    if (!l->ns || !l->name || !l->identity) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto fail;
    }
    kube_path_escape(l->ns, ens, sizeof(ens));
    kube_path_escape(l->name, ename, sizeof(ename));
    n = snprintf(l->create_path, sizeof(l->create_path),
                 "/apis/coordination.k8s.io/v1/namespaces/%s/leases", ens);
    if (n >= 0 && (size_t)n < sizeof(l->create_path))
        n = snprintf(l->path, sizeof(l->path), "%s/%s", l->create_path, ename);
    else
        n = -1;
    if (n < 0 || (size_t)n >= sizeof(l->path)) {
        /* a cut path would name another object: never send it */
        rc = err_set(err, -ENAMETOOLONG, "lease %s/%s: name too long", o->namespace_, o->name);
        goto fail;
    }
    l->rnd = (unsigned)getpid() ^ (unsigned)time(NULL);
    pthread_mutex_init(&l->mu, NULL);
    if ((rc = mono_cond_init(&l->cv))) {
        pthread_mutex_destroy(&l->mu);
        err_set(err, rc, "cannot create a condition variable");
        goto fail;
    }
    if (pthread_create(&l->thread, NULL, leader_thread, l)) {
        pthread_mutex_destroy(&l->mu);
        pthread_cond_destroy(&l->cv);
        rc = err_set(err, -EAGAIN, "cannot start the leader election thread");
        goto fail;
    }
    pthread_setname_np(l->thread, "leader");
    *out = l;
    return 0;
fail:
    free(l->ns);
    free(l->name);
    free(l->identity);
    free(l);
    return rc;
}

bool serve_leader_is_leader(struct serve_leader *l)
{
    return atomic_load(&l->leading) &&
           mono_ms() - atomic_load(&l->last_renew_ms) < l->o.renew_deadline_ms;
}

void serve_leader_stop(struct serve_leader *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    l->stop = true;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    pthread_join(l->thread, NULL);
    if (atomic_load(&l->leading) && l->my_rv[0]) {
        struct err err;
        char msg[1200];

        err_clear(&err);
        atomic_store(&l->leading, false);
        if (leader_write(l, l->my_rv, "", 1, l->observed_transitions, NULL, &err))
            leader_log(l, 0, "cannot release lease %s/%s: %s", l->ns, l->name,
                       err_format(&err, msg, sizeof(msg)));
        else
            leader_log(l, 2, "released lease %s/%s", l->ns, l->name);
    }
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    free(l->ns);
    free(l->name);
    free(l->identity);
    free(l);
}
