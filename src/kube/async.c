/* async.c - requests in flight at once over one libcurl multi handle (see async.h).
 *
 * libcurl is driven with curl_multi_socket_action: it tells us through the socket callback
 * which sockets to watch and through the timer callback when it needs a call, we poll() them
 * all at once, and each ready socket runs only the transfer that owns it (without the
 * zero-timeout poll libcurl's easy interface makes per transfer step). An eventfd in the same
 * poll set is the wakeup. Requests not yet sent wait in one list sorted by due time; easy
 * handles are kept idle between requests, each bound to the client it was set up for. */
#include "async.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <time.h>

#include "client-int.h"

#define ASYNC_IDLE_MAX 64 /* idle easy handles kept */
#define ASYNC_URL_MAX ((size_t)1 << 20)

struct async_handle {
    CURL *h;
    struct kube_client *c;
    struct kube_async_req *r; /* the request in flight, NULL when idle */
    struct curl_slist *headers;
    char *auth; /* the Authorization line in headers (wiped when replaced) */
    unsigned token_gen, ca_gen;
    bool headers_stale; /* the token changed since headers were built */
    char *ctype;        /* the content type in headers, NULL: none */
    struct kube_buf url;
    struct kube_buf errbody; /* body of a non-2xx answer (capped, truncated silently) */
    long status;             /* HTTP status, 0 until the body starts */
    int retry_after;         /* Retry-After in seconds, -1 when absent */
    char errbuf[CURL_ERROR_SIZE];
    struct async_handle *next;     /* the idle list */
    struct async_handle *next_all; /* every handle of the set */
};

struct kube_async {
    CURLM *m;
    int wake_fd;
    struct pollfd *fds; /* fds[0] is wake_fd, then libcurl's sockets */
    struct pollfd *ready;
    size_t nfds, cap;
    double timer_at; /* when libcurl wants socket_action(CURL_SOCKET_TIMEOUT); < 0: never */
    struct kube_async_req *waiting; /* not sent yet, by due time */
    struct async_handle *idle, *all;
    size_t nidle;
    size_t count;    /* added and not done */
    unsigned long finished; /* requests done so far (a run that saw some does not wait) */
    size_t nbusy;       /* requests handed to libcurl */
    double window;      /* kube_async_coalesce: seconds, 0 when off */
    size_t window_busy; /* ... from this many requests in flight */
    double last_wait;   /* when the last poll returned */
    atomic_int sleeping, woken;
};

static int async_on_socket(CURL *e, curl_socket_t s, int what, void *ud, void *sockp)
{
    struct kube_async *a = ud;
    size_t i;

    (void)e, (void)sockp;
    for (i = 1; i < a->nfds && a->fds[i].fd != s; i++)
        ;
    if (what == CURL_POLL_REMOVE) {
        if (i < a->nfds)
            a->fds[i] = a->fds[--a->nfds];
        return 0;
    }
    if (i == a->nfds) {
        if (a->nfds == a->cap) {
            size_t cap = a->cap * 2;
            struct pollfd *f = realloc(a->fds, cap * sizeof(*f));
            struct pollfd *r = f ? realloc(a->ready, cap * sizeof(*r)) : NULL;

            if (f)
                a->fds = f;
            if (!r)
                return -1;
            a->ready = r;
            a->cap = cap;
        }
        a->fds[a->nfds++].fd = s;
    }
    a->fds[i].events =
        (short)(((what & CURL_POLL_IN) ? POLLIN : 0) | ((what & CURL_POLL_OUT) ? POLLOUT : 0));
    a->fds[i].revents = 0;
    return 0;
}

static int async_on_timer(CURLM *m, long timeout_ms, void *ud)
{
    struct kube_async *a = ud;

    (void)m;
    a->timer_at = timeout_ms < 0 ? -1 : kube_client_now() + (double)timeout_ms / 1000;
    return 0;
}

static size_t async_on_body(char *data, size_t size, size_t n, void *ud)
{
    struct async_handle *hd = ud;
    size_t len = size * n, room;

    if (!hd->status)
        kube_curl.easy_getinfo(hd->h, CURLINFO_RESPONSE_CODE, &hd->status);
    if (hd->status >= 200 && hd->status <= 299)
        return len;
    room = KUBE_CLIENT_ERRBODY_MAX - hd->errbody.len;
    kube_buf_append(&hd->errbody, data, len < room ? len : room);
    return len;
}

int kube_async_new(int max_conns, struct kube_async **out, struct kube_err *err)
{
    struct kube_async *a;
    int rc;

    *out = NULL;
    rc = kube_curl_load(err);
    if (rc)
        return rc;
    a = calloc(1, sizeof(*a));
    if (!a)
        return kube_err_set(err, -ENOMEM, "out of memory");
    a->wake_fd = -1;
    a->timer_at = -1;
    a->cap = 16;
    a->fds = calloc(a->cap, sizeof(*a->fds));
    a->ready = calloc(a->cap, sizeof(*a->ready));
    a->m = kube_curl.multi_init();
    if (!a->fds || !a->ready || !a->m) {
        kube_async_free(a, NULL, NULL);
        return kube_err_set(err, -ENOMEM, "out of memory");
    }
    a->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (a->wake_fd < 0) {
        rc = kube_err_set(err, -errno, "cannot create an eventfd: %s", strerror(errno));
        kube_async_free(a, NULL, NULL);
        return rc;
    }
    a->fds[0].fd = a->wake_fd;
    a->fds[0].events = POLLIN;
    a->nfds = 1;
    kube_curl.multi_setopt(a->m, CURLMOPT_SOCKETFUNCTION, async_on_socket);
    kube_curl.multi_setopt(a->m, CURLMOPT_SOCKETDATA, a);
    kube_curl.multi_setopt(a->m, CURLMOPT_TIMERFUNCTION, async_on_timer);
    kube_curl.multi_setopt(a->m, CURLMOPT_TIMERDATA, a);
    /* without it the cache keeps 4 idle connections per handle *added*, and a finished
     * request's handle is removed: connections would be closed between bursts */
    kube_curl.multi_setopt(a->m, CURLMOPT_MAXCONNECTS, (long)(max_conns > 0 ? max_conns : 16));
    *out = a;
    return 0;
}

static void async_handle_free(struct async_handle *hd)
{
    kube_curl.easy_cleanup(hd->h);
    kube_curl.slist_free_all(hd->headers);
    kube_client_wipe_free(hd->auth);
    free(hd->ctype);
    kube_buf_release(&hd->url);
    kube_buf_release(&hd->errbody);
    free(hd);
}

void kube_async_free(struct kube_async *a, kube_async_done_fn drop, void *ud)
{
    struct async_handle *hd, *next;
    struct kube_async_req *r;

    if (!a)
        return;
    for (hd = a->all; hd; hd = hd->next_all) {
        if (!hd->r)
            continue;
        r = hd->r;
        hd->r = NULL;
        kube_curl.multi_remove_handle(a->m, hd->h);
        if (drop) {
            r->rc = kube_err_set(r->err, -ECANCELED, "%s %s: abandoned", r->method, r->path);
            drop(ud, r);
        }
    }
    while ((r = a->waiting)) {
        a->waiting = r->priv.next;
        if (drop) {
            r->rc = kube_err_set(r->err, -ECANCELED, "%s %s: abandoned", r->method, r->path);
            drop(ud, r);
        }
    }
    if (a->m)
        kube_curl.multi_cleanup(a->m);
    for (hd = a->all; hd; hd = next) {
        next = hd->next_all;
        async_handle_free(hd);
    }
    if (a->wake_fd >= 0)
        close(a->wake_fd);
    free(a->fds);
    free(a->ready);
    free(a);
}

static void async_wait_insert(struct kube_async *a, struct kube_async_req *r)
{
    struct kube_async_req **pp = &a->waiting;

    while (*pp && (*pp)->priv.due <= r->priv.due)
        pp = &(*pp)->priv.next;
    r->priv.next = *pp;
    *pp = r;
}

void kube_async_add(struct kube_async *a, struct kube_client *c, struct kube_async_req *r,
                    int64_t delay_ms)
{
    r->rc = 0;
    r->status = 0;
    kube_err_clear(r->err);
    r->priv.c = c;
    r->priv.due = kube_client_now() + (delay_ms > 0 ? (double)delay_ms / 1000 : 0);
    r->priv.reserved = false;
    r->priv.retried_401 = false;
    async_wait_insert(a, r);
    a->count++;
}

size_t kube_async_count(const struct kube_async *a)
{
    return a->count;
}

void kube_async_coalesce(struct kube_async *a, int64_t window_us, size_t min_busy)
{
    a->window = window_us > 0 ? (double)window_us / 1e6 : 0;
    if (a->window > 0.5)
        a->window = 0.5;
    a->window_busy = min_busy;
}

void kube_async_wakeup(struct kube_async *a)
{
    uint64_t one = 1;

    if (atomic_exchange(&a->woken, 1))
        return;
    if (atomic_load(&a->sleeping) && write(a->wake_fd, &one, sizeof(one)) < 0) {
        /* the counter is full: the owner is awake already */
    }
}

/* async_handle_take returns an idle handle set up for c, or a new one. */
static struct async_handle *async_handle_take(struct kube_async *a, struct kube_client *c)
{
    struct async_handle **pp, *hd;

    for (pp = &a->idle; *pp; pp = &(*pp)->next) {
        if ((*pp)->c == c) {
            hd = *pp;
            *pp = hd->next;
            a->nidle--;
            return hd;
        }
    }
    hd = calloc(1, sizeof(*hd));
    if (!hd)
        return NULL;
    hd->h = kube_curl.easy_init();
    if (!hd->h) {
        free(hd);
        return NULL;
    }
    hd->c = c;
    kube_buf_init(&hd->url, ASYNC_URL_MAX);
    kube_buf_init(&hd->errbody, KUBE_CLIENT_ERRBODY_MAX + 1);
    kube_client_handle_setup(c, hd->h, hd->errbuf);
    kube_curl.easy_setopt(hd->h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
    kube_curl.easy_setopt(hd->h, CURLOPT_WRITEFUNCTION, async_on_body);
    kube_curl.easy_setopt(hd->h, CURLOPT_WRITEDATA, hd);
    kube_curl.easy_setopt(hd->h, CURLOPT_HEADERFUNCTION, kube_client_on_header);
    kube_curl.easy_setopt(hd->h, CURLOPT_HEADERDATA, &hd->retry_after);
    kube_curl.easy_setopt(hd->h, CURLOPT_PRIVATE, hd);
    hd->next_all = a->all;
    a->all = hd;
    return hd;
}

/* async_handle_put makes hd idle again, or frees it when enough are idle. */
static void async_handle_put(struct kube_async *a, struct async_handle *hd)
{
    struct async_handle **pp;

    hd->r = NULL;
    /* the body pointer must not outlive the request's strings */
    kube_curl.easy_setopt(hd->h, CURLOPT_POSTFIELDS, NULL);
    if (hd->errbody.alloc > 65536)
        kube_buf_release(&hd->errbody);
    else
        kube_buf_reset(&hd->errbody);
    if (a->nidle < ASYNC_IDLE_MAX) {
        hd->next = a->idle;
        a->idle = hd;
        a->nidle++;
        return;
    }
    for (pp = &a->all; *pp != hd; pp = &(*pp)->next_all)
        ;
    *pp = hd->next_all;
    async_handle_free(hd);
}

/* async_headers rebuilds hd's header list when the token or the content type changed. */
static int async_headers(struct async_handle *hd, const char *ctype)
{
    struct curl_slist *l, *all;
    char ct[256];
    int changed;

    changed = kube_client_auth_line(hd->c, false, &hd->token_gen, &hd->auth);
    if (changed < 0)
        return changed;
    if (hd->headers && !changed && !hd->headers_stale &&
        (ctype ? hd->ctype && !strcmp(ctype, hd->ctype) : !hd->ctype))
        return 0;
    all = kube_curl.slist_append(NULL, "Accept: application/json");
    l = all;
    if (l && ctype) {
        snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
        l = kube_curl.slist_append(all, ct);
    }
    if (l)
        l = kube_curl.slist_append(all, "Expect:");
    if (l && hd->auth)
        l = kube_curl.slist_append(all, hd->auth);
    free(hd->ctype);
    hd->ctype = ctype ? strdup(ctype) : NULL;
    if (!l || (ctype && !hd->ctype)) {
        kube_curl.slist_free_all(all);
        return -ENOMEM;
    }
    kube_curl.easy_setopt(hd->h, CURLOPT_HTTPHEADER, all);
    kube_curl.slist_free_all(hd->headers);
    hd->headers = all;
    hd->headers_stale = false;
    return 0;
}

/* async_send hands r to libcurl on a handle of its client. */
static int async_send(struct kube_async *a, struct kube_async_req *r)
{
    struct kube_client *c = r->priv.c;
    struct async_handle *hd;
    CURL *h;
    int rc;

    if (!r->path || r->path[0] != '/')
        return kube_err_set(r->err, -EINVAL, "request path must start with '/'");
    hd = async_handle_take(a, c);
    if (!hd)
        return kube_err_set(r->err, -ENOMEM, "cannot create a libcurl handle");
    h = hd->h;
    kube_buf_reset(&hd->url);
    if (kube_buf_puts(&hd->url, c->url_base) || kube_buf_puts(&hd->url, r->path)) {
        async_handle_put(a, hd);
        return kube_err_set(r->err, -E2BIG, "request path too long");
    }
    rc = async_headers(hd, r->content_type);
    if (rc) {
        async_handle_put(a, hd);
        return kube_err_set(r->err, rc, "out of memory");
    }
    kube_client_ca_apply(c, h, &hd->ca_gen);
    kube_curl.easy_setopt(h, CURLOPT_URL, hd->url.data);
    if (!strcmp(r->method, "GET")) {
        kube_curl.easy_setopt(h, CURLOPT_HTTPGET, 1L);
        kube_curl.easy_setopt(h, CURLOPT_CUSTOMREQUEST, NULL);
    } else if (!strcmp(r->method, "POST") || r->body) {
        kube_curl.easy_setopt(h, CURLOPT_POST, 1L);
        kube_curl.easy_setopt(h, CURLOPT_CUSTOMREQUEST, strcmp(r->method, "POST") ? r->method : NULL);
        kube_curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(r->body ? r->len : 0));
        kube_curl.easy_setopt(h, CURLOPT_POSTFIELDS, r->body ? r->body : "");
    } else {
        kube_curl.easy_setopt(h, CURLOPT_HTTPGET, 1L);
        kube_curl.easy_setopt(h, CURLOPT_CUSTOMREQUEST, r->method);
    }
    hd->status = 0;
    hd->retry_after = -1;
    hd->errbuf[0] = '\0';
    hd->r = r;
    if (kube_curl.multi_add_handle(a->m, h) != CURLM_OK) {
        async_handle_put(a, hd);
        return kube_err_set(r->err, -ENOMEM, "cannot start a request");
    }
    a->nbusy++;
    return 0;
}

/* async_finish turns a finished transfer into r's outcome and hands it to done, or sends r
 * once more after a 401 when the token file held a new token. */
static void async_finish(struct kube_async *a, struct async_handle *hd, CURLcode cc,
                         kube_async_done_fn done, void *ud)
{
    struct kube_async_req *r = hd->r;
    struct kube_client *c = hd->c;
    long status = 0;
    int rc = 0;

    kube_curl.multi_remove_handle(a->m, hd->h);
    a->nbusy--;
    if (cc == CURLE_OK)
        kube_curl.easy_getinfo(hd->h, CURLINFO_RESPONSE_CODE, &status);
    r->status = status;
    if (cc != CURLE_OK) {
        rc = kube_client_transport_err(c, cc, hd->errbuf, r->method, r->path, c->timeout_ms,
                                       r->err);
    } else if (status == 401 && c->cfg.token_file && !r->priv.retried_401) {
        /* the token may have rotated under us: re-read it now and try once more */
        if (kube_client_auth_line(c, true, &hd->token_gen, &hd->auth) == 1) {
            hd->headers_stale = true;
            async_handle_put(a, hd);
            r->priv.retried_401 = true;
            r->priv.reserved = false;
            r->priv.due = 0;
            async_wait_insert(a, r);
            return;
        }
    }
    if (!rc && (status < 200 || status > 299)) {
        json_t *js = kube_client_parse_json(&hd->errbody);

        rc = kube_client_http_err(status, js, &hd->errbody, hd->retry_after, r->err);
        json_decref(js);
    }
    r->rc = rc;
    async_handle_put(a, hd);
    a->count--;
    a->finished++;
    done(ud, r);
}

static void async_collect(struct kube_async *a, kube_async_done_fn done, void *ud)
{
    CURLMsg *msg;
    int left;

    while ((msg = kube_curl.multi_info_read(a->m, &left))) {
        struct async_handle *hd;
        char *p = NULL;

        if (msg->msg != CURLMSG_DONE)
            continue;
        kube_curl.easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &p);
        hd = (struct async_handle *)(void *)p;
        if (hd && hd->r)
            async_finish(a, hd, msg->data.result, done, ud);
    }
}

/* async_start_due sends the waiting requests whose time has come; a request's first turn
 * takes its slot from the rate limiter, which may put it back to wait. */
static void async_start_due(struct kube_async *a, kube_async_done_fn done, void *ud)
{
    double now = kube_client_now();
    struct kube_async_req *r;

    while ((r = a->waiting) && r->priv.due <= now) {
        a->waiting = r->priv.next;
        if (!r->priv.reserved) {
            double wait = kube_client_reserve(r->priv.c);

            r->priv.reserved = true;
            if (wait > 0) {
                r->priv.due = now + wait;
                async_wait_insert(a, r);
                continue;
            }
        }
        r->rc = async_send(a, r);
        if (r->rc) {
            a->count--;
            a->finished++;
            done(ud, r);
        }
    }
}

static void async_timer(struct kube_async *a)
{
    int running;

    if (a->timer_at >= 0 && kube_client_now() >= a->timer_at) {
        a->timer_at = -1;
        kube_curl.multi_socket_action(a->m, CURL_SOCKET_TIMEOUT, 0, &running);
    }
}

static int async_wait_ms(const struct kube_async *a, int64_t timeout_ms)
{
    double now = kube_client_now(), wait = timeout_ms > 0 ? (double)timeout_ms / 1000 : 0;

    if (a->timer_at >= 0 && a->timer_at - now < wait)
        wait = a->timer_at - now;
    if (a->waiting && a->waiting->priv.due - now < wait)
        wait = a->waiting->priv.due - now;
    return wait > 0 ? (int)ceil(wait * 1000) : 0;
}

size_t kube_async_run(struct kube_async *a, int64_t timeout_ms, kube_async_done_fn done,
                      void *ud)
{
    unsigned long finished = a->finished;
    size_t i, nready = 0;
    int ms, n, running;

    async_start_due(a, done, ud);
    async_timer(a); /* a request just added asks for a call at once */
    async_collect(a, done, ud);
    /* a request may be sent and answered within that call: the caller may have new work */
    if (a->finished != finished)
        return a->count;
    ms = async_wait_ms(a, timeout_ms);
    if (ms > 0 && a->window > 0 && a->nbusy >= a->window_busy) {
        /* busy: let the answers gather (one wakeup for them all, not one each) */
        double left = a->last_wait + a->window - kube_client_now();

        if (left > 0) {
            struct timespec ts = {0, (long)(left * 1e9)};

            nanosleep(&ts, NULL);
            ms = async_wait_ms(a, timeout_ms);
        }
    }
    atomic_store(&a->sleeping, 1);
    if (atomic_load(&a->woken))
        ms = 0;
    n = poll(a->fds, a->nfds, ms);
    a->last_wait = kube_client_now();
    atomic_store(&a->sleeping, 0);
    atomic_store(&a->woken, 0);
    if (n > 0) {
        /* libcurl's callbacks change fds while it runs: act on a copy */
        for (i = 0; i < a->nfds; i++)
            if (a->fds[i].revents)
                a->ready[nready++] = a->fds[i];
        for (i = 0; i < nready; i++) {
            const struct pollfd *p = &a->ready[i];
            int ev = 0;

            if (p->fd == a->wake_fd) {
                uint64_t v;

                if (read(a->wake_fd, &v, sizeof(v)) < 0) {
                    /* nothing to read: another poll saw it first */
                }
                continue;
            }
            if (p->revents & (POLLIN | POLLHUP))
                ev |= CURL_CSELECT_IN;
            if (p->revents & POLLOUT)
                ev |= CURL_CSELECT_OUT;
            if (p->revents & (POLLERR | POLLNVAL))
                ev |= CURL_CSELECT_ERR;
            kube_curl.multi_socket_action(a->m, p->fd, ev, &running);
        }
    }
    async_timer(a);
    async_collect(a, done, ud);
    return a->count;
}
