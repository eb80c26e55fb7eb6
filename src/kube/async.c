/* async.c - requests in flight at once over kept-alive HTTP/1.1 connections (see async.h).
 *
 * Why not libcurl's multi interface: it cost about 80 us of CPU per request in the serve
 * benchmark (handle setup, two zero-timeout polls per request, header building), which was
 * most of gpusched's CPU per pod (docs/benchmarks-serve.md). Here libcurl opens a connection
 * (CURLOPT_CONNECT_ONLY: TCP, TLS, proxy tunnel) and the set writes requests and parses
 * answers itself: a request costs one send and its answer usually one read.
 *
 * Each client has a peer: its connections, its Authorization line, the host and path prefix
 * of its server URL. A connection keeps its requests in the order they were written; answers
 * come in that order (RFC 9112, 9.3.2), parsed by the incremental parser of kube/http1.h
 * (status line and headers, then a Content-Length, chunked or close-delimited body). Requests not yet sent
 * wait in one list sorted by due time. An eventfd in the poll set is the wakeup. */
#include "kube/async.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "kube/client-int.h"
#include "kube/http1.h"

#define ASYNC_RECV_CHUNK ((size_t)16384)
#define ASYNC_OUT_MAX ((size_t)64 << 20) /* requests written and not yet sent */
/* When opening a connection failed slowly (a server that drops packets: the connect timeout),
 * requests that would need a new connection fail at once with the same error for as long as
 * that attempt took, instead of each blocking the thread for a connect timeout of its own.
 * Quick failures (refused, TLS) are not held: the next request tries again. */
#define ASYNC_SLOW_CONNECT 1.0

struct async_peer;

struct async_conn {
    struct async_peer *p;
    CURL *h; /* owns the connection (CONNECT_ONLY) */
    curl_socket_t fd;
    bool raw;       /* plain TCP straight to the server: send(2)/recv(2), not libcurl's wrappers */
    struct buf out; /* requests written, not sent yet (from out_off) */
    size_t out_off;
    char *in; /* bytes read and not parsed */
    size_t in_len, in_alloc;
    struct kube_async_req *head, *tail; /* written on it, not answered, oldest first */
    size_t depth;
    struct http1_answer rx; /* the answer to head */
    bool got_bytes;         /* the head request fails, not resent, when cn fails (timed out) */
    struct buf body;        /* an error answer's body (capped, truncated silently) */
    char errbuf[CURL_ERROR_SIZE];
    struct async_conn *next;
};

struct async_peer {
    struct kube_client *c;
    char *auth; /* "Authorization: Bearer ..." or NULL (wiped when replaced) */
    unsigned token_gen;
    const char *host, *prefix; /* into c->url_base: authority and path prefix */
    size_t host_len, prefix_len;
    bool tls;
    struct async_conn *conns;
    size_t nconns, max_conns;
    double down_until; /* after a slow failed connect (ASYNC_SLOW_CONNECT) */
    CURLcode down_cc;  /* ... and why it failed */
    char down_errbuf[CURL_ERROR_SIZE];
    struct async_peer *next;
};

struct kube_async {
    int wake_fd;
    struct pollfd *fds; /* fds[0] is wake_fd, then one per connection */
    struct async_conn **fd_conn;
    size_t cap;
    struct async_peer *peers;
    size_t max_conns;               /* per client */
    struct kube_async_req *waiting; /* not sent yet, by due time */
    size_t count;                   /* added and not done */
    unsigned long finished;         /* requests done so far (a run that saw some does not wait) */
    size_t nbusy;                   /* requests written on a connection */
    double window;                  /* kube_async_coalesce: seconds, 0 when off */
    size_t window_busy;             /* ... from this many requests in flight */
    double last_wait;               /* when the last poll returned */
    atomic_int sleeping, woken;
};

int kube_async_new(int max_conns, struct kube_async **out, struct err *err)
{
    struct kube_async *a;
    int rc;

    *out = NULL;
    rc = kube_curl_load(err);
    if (rc)
        return rc;
    a = calloc(1, sizeof(*a));
    if (!a)
        return err_set(err, -ENOMEM, "out of memory");
    a->max_conns = max_conns > 0 ? (size_t)max_conns : 16;
    a->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (a->wake_fd < 0) {
        rc = err_set(err, -errno, "cannot create an eventfd: %s", strerror(errno));
        free(a);
        return rc;
    }
    *out = a;
    return 0;
}

static void async_wait_insert(struct kube_async *a, struct kube_async_req *r)
{
    struct kube_async_req **pp = &a->waiting;

    while (*pp && (*pp)->priv.due <= r->priv.due)
        pp = &(*pp)->priv.next;
    r->priv.next = *pp;
    *pp = r;
}

/* async_conn_free frees cn, its easy handle and its buffers; NULL is fine. */
static void async_conn_free(struct async_conn *cn)
{
    if (!cn)
        return;
    kube_curl.easy_cleanup(cn->h);
    buf_release(&cn->out);
    buf_release(&cn->body);
    free(cn->in);
    free(cn);
}

/* async_conn_close takes cn out of its peer's list and frees it; its requests must have
 * been taken off it. */
static void async_conn_close(struct async_conn *cn)
{
    struct async_conn **pp;

    for (pp = &cn->p->conns; *pp != cn; pp = &(*pp)->next)
        ;
    *pp = cn->next;
    cn->p->nconns--;
    async_conn_free(cn);
}

static struct kube_async_req *async_conn_pop(struct kube_async *a, struct async_conn *cn)
{
    struct kube_async_req *r = cn->head;

    cn->head = r->priv.next;
    if (!cn->head)
        cn->tail = NULL;
    cn->depth--;
    a->nbusy--;
    return r;
}

static void async_report(struct kube_async *a, struct kube_async_req *r, kube_async_done_fn done,
                         void *ud)
{
    a->count--;
    a->finished++;
    done(ud, r);
}

void kube_async_free(struct kube_async *a, kube_async_done_fn drop, void *ud)
{
    struct async_peer *p;
    struct kube_async_req *r;

    if (!a)
        return;
    while ((p = a->peers)) {
        a->peers = p->next;
        while (p->conns) {
            struct async_conn *cn = p->conns;

            while (cn->head) {
                r = async_conn_pop(a, cn);
                if (drop) {
                    r->rc = err_set(r->err, -ECANCELED, "%s %s: abandoned", r->method, r->path);
                    drop(ud, r);
                }
            }
            async_conn_close(cn);
        }
        kube_client_wipe_free(p->auth);
        free(p);
    }
    while ((r = a->waiting)) {
        a->waiting = r->priv.next;
        if (drop) {
            r->rc = err_set(r->err, -ECANCELED, "%s %s: abandoned", r->method, r->path);
            drop(ud, r);
        }
    }
    close(a->wake_fd);
    free(a->fds);
    free(a->fd_conn);
    free(a);
}

void kube_async_add(struct kube_async *a, struct kube_client *c, struct kube_async_req *r,
                    int64_t delay_ms)
{
    r->rc = 0;
    r->status = 0;
    err_clear(r->err);
    r->priv.c = c;
    r->priv.due = mono_now() + (delay_ms > 0 ? (double)delay_ms / 1000 : 0);
    r->priv.sent = 0;
    r->priv.reserved = false;
    r->priv.retried_401 = false;
    r->priv.resent = false;
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

/* async_peer_get returns c's peer, made on first use: the server URL is split once into the
 * Host header's value and the path prefix every request path goes under. */
static struct async_peer *async_peer_get(struct kube_async *a, struct kube_client *c)
{
    struct async_peer *p;
    const char *u = c->url_base, *s;

    for (p = a->peers; p; p = p->next)
        if (p->c == c)
            return p;
    p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->c = c;
    p->max_conns = a->max_conns;
    p->tls = !strncasecmp(u, "https://", 8);
    s = strstr(u, "://");
    p->host = s ? s + 3 : u;
    p->host_len = strcspn(p->host, "/?#");
    p->prefix = p->host + p->host_len;
    p->prefix_len = strcspn(p->prefix, "?#");
    while (p->prefix_len && p->prefix[p->prefix_len - 1] == '/')
        p->prefix_len--;
    p->next = a->peers;
    a->peers = p;
    return p;
}

int kube_async_conns(struct kube_async *a, struct kube_client *c, size_t max_conns)
{
    struct async_peer *p = async_peer_get(a, c);

    if (!p)
        return -ENOMEM;
    p->max_conns = max_conns ? max_conns : a->max_conns;
    return 0;
}

/* async_conn_open connects a new connection of p, blocking for the connect and the TLS
 * handshake. On failure r's outcome is set from libcurl's error and NULL returned. */
static struct async_conn *async_conn_open(struct async_peer *p, struct kube_async_req *r)
{
    struct kube_client *c = p->c;
    struct async_conn *cn;
    curl_socket_t fd = CURL_SOCKET_BAD;
    double start;
    CURLcode cc;

    if (mono_now() < p->down_until) {
        r->rc = kube_client_transport_err(c, p->down_cc, p->down_errbuf, r->method, r->path,
                                          c->timeout_ms, r->err);
        return NULL;
    }
    cn = calloc(1, sizeof(*cn));
    if (!cn) {
        r->rc = err_set(r->err, -ENOMEM, "out of memory");
        return NULL;
    }
    cn->h = kube_curl.easy_init();
    if (!cn->h) {
        free(cn);
        r->rc = err_set(r->err, -ENOMEM, "cannot create a libcurl handle");
        return NULL;
    }
    kube_client_handle_setup(c, cn->h, cn->errbuf);
    kube_client_ca_apply(c, cn->h, NULL);
    kube_curl.easy_setopt(cn->h, CURLOPT_URL, c->url_base);
    kube_curl.easy_setopt(cn->h, CURLOPT_CONNECT_ONLY, 1L);
    if (c->cfg.proxy_url) /* the requests are ours, in origin form: tunnel through */
        kube_curl.easy_setopt(cn->h, CURLOPT_HTTPPROXYTUNNEL, 1L);
    start = mono_now();
    cc = kube_curl.easy_perform(cn->h);
    if (cc == CURLE_OK)
        cc = kube_curl.easy_getinfo(cn->h, CURLINFO_ACTIVESOCKET, &fd);
    if (cc != CURLE_OK || fd == CURL_SOCKET_BAD) {
        double took = mono_now() - start;

        p->down_until = took >= ASYNC_SLOW_CONNECT ? start + 2 * took : 0;
        p->down_cc = cc != CURLE_OK ? cc : CURLE_COULDNT_CONNECT;
        memcpy(p->down_errbuf, cn->errbuf, sizeof(p->down_errbuf));
        r->rc = kube_client_transport_err(c, p->down_cc, p->down_errbuf, r->method, r->path,
                                          c->timeout_ms, r->err);
        kube_curl.easy_cleanup(cn->h);
        free(cn);
        return NULL;
    }
    cn->p = p;
    cn->fd = fd;
    cn->raw = !p->tls && !c->cfg.proxy_url;
    buf_init(&cn->out, ASYNC_OUT_MAX);
    buf_init(&cn->body, KUBE_CLIENT_ERRBODY_MAX + 1);
    http1_answer_init(&cn->rx);
    cn->next = p->conns;
    p->conns = cn;
    p->nconns++;
    return cn;
}

/* async_conn_pick returns the connection r goes on: an idle one, or a new one while the
 * client has fewer than max_conns; else (or when it cannot be opened) r waits behind the
 * requests of the least busy one (pipelined: the server answers in order). */
static struct async_conn *async_conn_pick(struct async_peer *p, struct kube_async_req *r)
{
    struct async_conn *cn, *best = NULL;

    for (cn = p->conns; cn; cn = cn->next)
        if (!best || cn->depth < best->depth)
            best = cn;
    if (best && (!best->depth || p->nconns >= p->max_conns))
        return best;
    cn = async_conn_open(p, r);
    if (!cn && best) {
        /* the others still work: queue it behind them */
        r->rc = 0;
        err_clear(r->err);
        return best;
    }
    return cn;
}

/* async_put appends n bytes of p to b unless an earlier append failed (*rc). */
static void async_put(struct buf *b, const char *p, size_t n, int *rc)
{
    if (!*rc)
        *rc = buf_append(b, p, n);
}

#define ASYNC_PUTS(b_, s_, rc_) async_put((b_), (s_), strlen(s_), (rc_))

/* async_write appends r's request to cn's output. */
static int async_write(struct async_conn *cn, const struct kube_async_req *r)
{
    struct async_peer *p = cn->p;
    struct buf *b = &cn->out;
    bool has_body = r->body || (strcmp(r->method, "GET") && strcmp(r->method, "DELETE"));
    char len[48];
    int rc = 0;

    ASYNC_PUTS(b, r->method, &rc);
    async_put(b, " ", 1, &rc);
    async_put(b, p->prefix, p->prefix_len, &rc);
    ASYNC_PUTS(b, r->path, &rc);
    ASYNC_PUTS(b, " HTTP/1.1\r\nHost: ", &rc);
    async_put(b, p->host, p->host_len, &rc);
    ASYNC_PUTS(b, "\r\nUser-Agent: ", &rc);
    ASYNC_PUTS(b, p->c->user_agent, &rc);
    ASYNC_PUTS(b, "\r\nAccept: application/json\r\n", &rc);
    if (p->auth) {
        ASYNC_PUTS(b, p->auth, &rc);
        async_put(b, "\r\n", 2, &rc);
    }
    if (r->content_type) {
        ASYNC_PUTS(b, "Content-Type: ", &rc);
        ASYNC_PUTS(b, r->content_type, &rc);
        async_put(b, "\r\n", 2, &rc);
    }
    if (has_body) {
        snprintf(len, sizeof(len), "Content-Length: %zu\r\n", r->body ? r->len : 0);
        ASYNC_PUTS(b, len, &rc);
    }
    async_put(b, "\r\n", 2, &rc);
    if (r->body && r->len)
        async_put(b, r->body, r->len, &rc);
    return rc;
}

/* async_send writes r on a connection of its client (opened if needed). Returns 0, or the
 * failure already set in r->rc. */
static int async_send(struct kube_async *a, struct kube_async_req *r)
{
    struct kube_client *c = r->priv.c;
    struct async_peer *p;
    struct async_conn *cn;
    size_t mark;
    int rc;

    if (!r->path || r->path[0] != '/')
        return r->rc = err_set(r->err, -EINVAL, "request path must start with '/'");
    if (strpbrk(r->path, " \r\n") || (r->content_type && http1_value_bad(r->content_type)))
        return r->rc = err_set(r->err, -EINVAL,
                               "request path or content type holds a "
                               "space or a control character");
    p = async_peer_get(a, c);
    if (!p)
        return r->rc = err_set(r->err, -ENOMEM, "out of memory");
    rc = kube_client_auth_line(c, false, &p->token_gen, &p->auth);
    if (rc < 0)
        return r->rc = err_set(r->err, rc, "out of memory");
    cn = async_conn_pick(p, r);
    if (!cn)
        return r->rc;
    mark = cn->out.len;
    rc = async_write(cn, r);
    if (rc) {
        cn->out.len = mark;
        if (cn->out.data)
            cn->out.data[mark] = '\0';
        return r->rc = err_set(r->err, rc, rc == -E2BIG ? "request too large" : "out of memory");
    }
    r->priv.sent = mono_now();
    r->priv.next = NULL;
    if (cn->tail)
        cn->tail->priv.next = r;
    else
        cn->head = r;
    cn->tail = r;
    cn->depth++;
    a->nbusy++;
    return 0;
}

/* async_fail_conn ends cn after a transport failure cc (or the server closing it): the
 * request whose answer had begun fails with cc, the others, never answered, are sent once
 * more on another connection (a second time they fail with cc too). */
static void async_fail_conn(struct kube_async *a, struct async_conn *cn, CURLcode cc,
                            const char *why, kube_async_done_fn done, void *ud)
{
    struct kube_client *c = cn->p->c;
    bool partial = cn->got_bytes || cn->rx.begun;

    while (cn->head) {
        struct kube_async_req *r = async_conn_pop(a, cn);

        if (!partial && !r->priv.resent) {
            r->priv.resent = true;
            r->priv.due = 0;
            async_wait_insert(a, r); /* reserved stays: no second rate-limit slot */
            continue;
        }
        partial = false;
        r->status = 0;
        r->rc = kube_client_transport_err(c, cc, why, r->method, r->path, c->timeout_ms, r->err);
        async_report(a, r, done, ud);
    }
    async_conn_close(cn);
}

/* async_answer hands the answer parsed on cn to its request and readies cn for the next one;
 * cn->rx.keep stays as the answer said, for the caller to act on. */
static void async_answer(struct kube_async *a, struct async_conn *cn, kube_async_done_fn done,
                         void *ud)
{
    struct kube_async_req *r = async_conn_pop(a, cn);
    struct kube_client *c = cn->p->c;
    long status = cn->rx.status;
    int rc = 0;

    r->status = status;
    if (kube_client_retry_401(c, status, &r->priv.retried_401, &cn->p->token_gen, &cn->p->auth)) {
        r->priv.due = 0;
        async_wait_insert(a, r);
    } else {
        if (status < 200 || status > 299) {
            json_t *js = kube_client_parse_json(&cn->body);

            rc = kube_client_http_err(status, js, &cn->body, cn->rx.retry_after, r->err);
            json_decref(js);
        }
        r->rc = rc;
        async_report(a, r, done, ud);
    }
    if (cn->body.alloc > 65536)
        buf_release(&cn->body);
    else
        buf_reset(&cn->body);
    cn->got_bytes = false;
}

static void async_body(struct async_conn *cn, const char *p, size_t n)
{
    size_t room = KUBE_CLIENT_ERRBODY_MAX - cn->body.len;

    if ((cn->rx.status < 200 || cn->rx.status > 299) && room)
        buf_append(&cn->body, p, n < room ? n : room);
}

/* async_parse consumes what cn has read: answers are handed to their requests as they
 * complete. Returns false after a protocol error (cn must be failed). */
static bool async_parse(struct kube_async *a, struct async_conn *cn, kube_async_done_fn done,
                        void *ud)
{
    const char *p = cn->in, *end = cn->in + cn->in_len, *data;
    bool ok = true;

    while (p < end && cn->head) {
        size_t used, len;
        enum http1_event ev = http1_step(&cn->rx, p, (size_t)(end - p), &used, &data, &len);

        p += used;
        if (ev == HTTP1_NEED)
            break;
        if (ev == HTTP1_ERROR) {
            ok = false;
            break;
        }
        if (ev == HTTP1_BODY)
            async_body(cn, data, len);
        if (ev == HTTP1_DONE) {
            async_answer(a, cn, done, ud);
            if (!cn->rx.keep)
                break;
        }
    }
    /* a body that just ended is done at once (the last bytes read were its last) */
    if (ok && cn->head && p == end) {
        size_t used, len;

        if (http1_step(&cn->rx, p, 0, &used, &data, &len) == HTTP1_DONE)
            async_answer(a, cn, done, ud);
    }
    if (ok && !cn->head && p < end && cn->rx.keep)
        ok = false; /* bytes nobody asked for */
    cn->in_len = (size_t)(end - p);
    memmove(cn->in, p, cn->in_len);
    return ok;
}

/* async_io sends or receives through libcurl (TLS, proxies) or, on a plain connection,
 * straight on the socket, with libcurl's result codes either way. */
static CURLcode async_io(struct async_conn *cn, bool out, char *buf, size_t len, size_t *n)
{
    ssize_t r;

    if (!cn->raw)
        return out ? kube_curl.easy_send(cn->h, buf, len, n)
                   : kube_curl.easy_recv(cn->h, buf, len, n);
    r = out ? send(cn->fd, buf, len, MSG_NOSIGNAL) : recv(cn->fd, buf, len, 0);
    if (r >= 0) {
        *n = (size_t)r;
        return CURLE_OK;
    }
    *n = 0;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return CURLE_AGAIN;
    return out ? CURLE_SEND_ERROR : CURLE_RECV_ERROR;
}

/* async_flush sends what cn has written. Returns false when the connection failed. */
static bool async_flush(struct async_conn *cn)
{
    while (cn->out_off < cn->out.len) {
        size_t n = 0;
        CURLcode cc = async_io(cn, true, cn->out.data + cn->out_off, cn->out.len - cn->out_off, &n);

        if (cc == CURLE_AGAIN)
            return true;
        if (cc != CURLE_OK)
            return false;
        cn->out_off += n;
    }
    buf_reset(&cn->out);
    cn->out_off = 0;
    return true;
}

/* async_read reads what cn's socket holds and parses it. Returns false when cn was ended. */
static bool async_read(struct kube_async *a, struct async_conn *cn, kube_async_done_fn done,
                       void *ud)
{
    for (;;) {
        size_t room, n = 0;
        CURLcode cc;
        bool begun;
        char why[128];

        if (cn->in_alloc - cn->in_len < ASYNC_RECV_CHUNK) {
            char *in = realloc(cn->in, cn->in_len + ASYNC_RECV_CHUNK);

            if (!in) {
                async_fail_conn(a, cn, CURLE_OUT_OF_MEMORY, "out of memory", done, ud);
                return false;
            }
            cn->in = in;
            cn->in_alloc = cn->in_len + ASYNC_RECV_CHUNK;
        }
        room = cn->in_alloc - cn->in_len;
        cc = async_io(cn, false, cn->in + cn->in_len, room, &n);
        if (cc == CURLE_AGAIN)
            return true;
        if (cc != CURLE_OK) {
            async_fail_conn(a, cn, CURLE_RECV_ERROR, kube_curl.easy_strerror(cc), done, ud);
            return false;
        }
        if (n == 0) {
            /* closed by the server: the end of a close-delimited answer, or of the
             * connection under requests it never answered */
            if (cn->head && http1_eof(&cn->rx) == HTTP1_DONE)
                async_answer(a, cn, done, ud);
            begun = cn->got_bytes || cn->rx.begun;
            async_fail_conn(a, cn, begun ? CURLE_PARTIAL_FILE : CURLE_GOT_NOTHING,
                            begun ? "connection closed in the middle of an answer"
                                  : "connection closed before an answer",
                            done, ud);
            return false;
        }
        cn->in_len += n;
        if (!async_parse(a, cn, done, ud)) {
            snprintf(why, sizeof(why), "malformed HTTP answer: %s",
                     cn->rx.why ? cn->rx.why : "bad framing");
            async_fail_conn(a, cn, CURLE_WEIRD_SERVER_REPLY, why, done, ud);
            return false;
        }
        if (!cn->rx.keep && !cn->rx.begun) {
            /* the last answer said Connection: close; anything queued behind it is resent */
            async_fail_conn(a, cn, CURLE_GOT_NOTHING, "connection closed by the server", done, ud);
            return false;
        }
        /* a short read drained a plain socket; TLS may hold decrypted bytes back */
        if (n < room && !cn->p->tls)
            return true;
    }
}

/* async_start_due sends the waiting requests whose time has come; a request's first turn
 * takes its slot from the rate limiter, which may put it back to wait. */
static void async_start_due(struct kube_async *a, kube_async_done_fn done, void *ud)
{
    double now = mono_now();
    struct kube_async_req *r;

    while ((r = a->waiting) && r->priv.due <= now) {
        a->waiting = r->priv.next;
        if (!r->priv.reserved) {
            /* the slot's time is absolute: a connect that blocked earlier in this pass
             * makes now stale, which may only delay the request, never send it early */
            double at = kube_client_reserve(r->priv.c);

            r->priv.reserved = true;
            if (at > now) {
                r->priv.due = at;
                async_wait_insert(a, r);
                continue;
            }
        }
        if (async_send(a, r))
            async_report(a, r, done, ud);
    }
}

/* async_flush_all sends every connection's output; a connection that fails is ended. */
static void async_flush_all(struct kube_async *a, kube_async_done_fn done, void *ud)
{
    struct async_peer *p;
    struct async_conn *cn, *next;

    for (p = a->peers; p; p = p->next)
        for (cn = p->conns; cn; cn = next) {
            next = cn->next;
            if (cn->out.len && !async_flush(cn))
                async_fail_conn(a, cn, CURLE_SEND_ERROR, "cannot send the request", done, ud);
        }
}

/* async_expire fails the oldest request of a connection that has waited longer than its
 * client's timeout for an answer; the connection is closed (its other requests resent). */
static void async_expire(struct kube_async *a, kube_async_done_fn done, void *ud)
{
    double now = mono_now();
    struct async_peer *p;
    struct async_conn *cn, *next;

    for (p = a->peers; p; p = p->next) {
        double limit = p->c->timeout_ms > 0 ? (double)p->c->timeout_ms / 1000 : 0;

        for (cn = p->conns; cn; cn = next) {
            next = cn->next;
            if (!limit || !cn->head || now - cn->head->priv.sent < limit)
                continue;
            cn->got_bytes = true; /* the head fails, the rest are resent */
            async_fail_conn(a, cn, CURLE_OPERATION_TIMEDOUT, "no answer in time", done, ud);
        }
    }
}

static int async_wait_ms(const struct kube_async *a, int64_t timeout_ms)
{
    double now = mono_now(), wait = timeout_ms > 0 ? (double)timeout_ms / 1000 : 0;
    const struct async_peer *p;
    const struct async_conn *cn;

    if (a->waiting && a->waiting->priv.due - now < wait)
        wait = a->waiting->priv.due - now;
    for (p = a->peers; p; p = p->next)
        for (cn = p->conns; cn; cn = cn->next)
            if (cn->head && p->c->timeout_ms > 0 &&
                cn->head->priv.sent + (double)p->c->timeout_ms / 1000 - now < wait)
                wait = cn->head->priv.sent + (double)p->c->timeout_ms / 1000 - now;
    return wait > 0 ? (int)ceil(wait * 1000) : 0;
}

/* async_poll_set fills fds with the wakeup and every connection. Returns their count. */
static size_t async_poll_set(struct kube_async *a)
{
    struct async_peer *p;
    struct async_conn *cn;
    size_t n = 1, need = 1;

    for (p = a->peers; p; p = p->next)
        need += p->nconns;
    if (need > a->cap) {
        size_t cap = need * 2;
        struct pollfd *f = realloc(a->fds, cap * sizeof(*f));
        struct async_conn **c = f ? realloc(a->fd_conn, cap * sizeof(*c)) : NULL;

        if (f)
            a->fds = f;
        if (!c)
            return 0;
        a->fd_conn = c;
        a->cap = cap;
    }
    a->fds[0] = (struct pollfd){.fd = a->wake_fd, .events = POLLIN};
    a->fd_conn[0] = NULL;
    for (p = a->peers; p; p = p->next)
        for (cn = p->conns; cn; cn = cn->next, n++) {
            a->fds[n] = (struct pollfd){.fd = cn->fd,
                                        .events = (short)(POLLIN | (cn->out.len ? POLLOUT : 0))};
            a->fd_conn[n] = cn;
        }
    return n;
}

size_t kube_async_run(struct kube_async *a, int64_t timeout_ms, kube_async_done_fn done, void *ud)
{
    unsigned long finished = a->finished;
    size_t i, nfds;
    int ms, n;

    async_start_due(a, done, ud);
    async_flush_all(a, done, ud);
    /* a request that failed at once may have given the caller new work: no waiting then */
    ms = a->finished != finished ? 0 : async_wait_ms(a, timeout_ms);
    if (ms > 0 && a->window > 0 && a->nbusy >= a->window_busy) {
        /* busy: let the answers gather (one wakeup for them all, not one each) */
        double until = a->last_wait + a->window;

        if (until > mono_now()) {
            mono_sleep_until(until);
            ms = 0;
        }
    }
    nfds = async_poll_set(a);
    if (!nfds) {
        mono_sleep_ms(1); /* out of memory: try again shortly */
        return a->count;
    }
    atomic_store(&a->sleeping, 1);
    if (atomic_load(&a->woken))
        ms = 0;
    n = poll(a->fds, nfds, ms);
    a->last_wait = mono_now();
    atomic_store(&a->sleeping, 0);
    atomic_store(&a->woken, 0);
    for (i = 0; n > 0 && i < nfds; i++) {
        struct pollfd *pf = &a->fds[i];
        struct async_conn *cn = a->fd_conn[i];

        if (!pf->revents)
            continue;
        if (!cn) {
            uint64_t v;

            if (read(a->wake_fd, &v, sizeof(v)) < 0) {
                /* nothing to read: another poll saw it first */
            }
            continue;
        }
        /* a connection ended below is not in a later slot: each connection has one */
        if ((pf->revents & POLLOUT) && !async_flush(cn)) {
            async_fail_conn(a, cn, CURLE_SEND_ERROR, "cannot send the request", done, ud);
            continue;
        }
        if (pf->revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) {
            if (!async_read(a, cn, done, ud))
                continue;
            if (!cn->head && (pf->revents & (POLLERR | POLLNVAL)))
                async_conn_close(cn);
        }
    }
    async_expire(a, done, ud);
    return a->count;
}
