/* httpd.c - the probe and metrics endpoint server (see httpd.h).
 *
 * One thread, one poll set: the listening socket and up to HTTPD_CONN_MAX clients at once,
 * each with its own deadline, so a client that connects and says nothing (or reads its answer
 * slowly) holds only its own slot, never a probe behind it. Under a flood of connects the
 * accept queue is drained at each wakeup (a full queue drops the probes' SYNs, which the
 * kernel sends again only after a second), a client's request is read and answered at once
 * when it came with the connect (a probe's does), and when every slot is taken the client
 * that has sent the least for the longest is dropped to make room.
 *
 * A connection goes through the transport's handshake first (TLS), then reads its request,
 * then writes its answer. A request for a slow path waits (no poll) while the worker thread
 * runs its handler; the worker hands the answer back through a pipe, and the answer goes to
 * the connection only if it is still the same one (a generation number per slot). */
#include "base/httpd.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"

#define HTTPD_CONN_MAX 128
#define HTTPD_BACKLOG 4096          /* the kernel cuts it to net.core.somaxconn */
#define HTTPD_ACCEPT_BATCH 1024     /* clients taken from the accept queue per wakeup */
#define HTTPD_READ_TIMEOUT_MS 1000  /* from the connect to the end of the request head */
#define HTTPD_WRITE_TIMEOUT_MS 5000 /* to send the answer (a large /metrics, a slow reader) */
#define HTTPD_SLOW_TIMEOUT_MS 15000 /* for the worker's answer */
#define HTTPD_BODY_MAX ((size_t)64 << 20)
#define HTTPD_AUTH_MAX 8192

enum httpd_state { CONN_FREE, CONN_HANDSHAKE, CONN_READING, CONN_WAITING, CONN_WRITING };

struct httpd_conn {
    int fd; /* -1: a free slot */
    enum httpd_state state;
    unsigned gen; /* changes with each client the slot takes */
    void *tr;     /* the transport's state, NULL for plain TCP */
    short want;   /* what the transport waits for: POLLIN or POLLOUT */
    int64_t deadline;
    int64_t since; /* when it was accepted */
    size_t len;    /* request bytes read */
    char req[HTTPD_REQ_MAX + 1];
    struct buf out; /* the answer, sent from off */
    size_t off;
};

/* A request for a slow path, and its answer */
struct httpd_job {
    size_t slot;
    unsigned gen;
    bool head;
    char method[16], path[1024], auth[HTTPD_AUTH_MAX];
    bool has_auth;
    int status;
    const char *ctype;
    struct buf body;
};

struct httpd {
    int fd;
    int port;
    httpd_fn fn;
    void *ud;
    bool (*slow)(void *ud, const char *path, const char *authorization);
    struct httpd_transport tr;
    bool has_tr;
    atomic_int stop;
    pthread_t thread;
    struct httpd_conn conns[HTTPD_CONN_MAX];
    /* the worker: jobs waiting (queue) and done, under mu; wake[1] tells the server thread */
    bool has_worker;
    pthread_t worker;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct httpd_job *queue[HTTPD_SLOW_MAX], *done[HTTPD_SLOW_MAX];
    size_t nqueue, ndone, busy; /* busy: jobs queued or running, not yet collected */
    int wake[2];
};

static const char *httpd_reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return "Unknown";
    }
}

int httpd_parse_request(const char *req, size_t len, char *method, size_t method_size, char *path,
                        size_t path_size)
{
    const char *end = memmem(req, len, "\r\n\r\n", 4), *lf = memmem(req, len, "\n\n", 2);
    const char *p = req, *eol, *sp;
    size_t n;

    if (!end || (lf && lf < end))
        end = lf;
    if (memchr(req, '\0', end ? (size_t)(end - req) : len))
        return -1;
    if (!end)
        return len >= HTTPD_REQ_MAX ? -1 : 0;
    eol = memchr(p, '\n', (size_t)(end + 2 - p)); /* the blank line's end has one */
    if (eol > p && eol[-1] == '\r')
        eol--;
    /* METHOD SP TARGET [SP HTTP/1.x] */
    sp = memchr(p, ' ', (size_t)(eol - p));
    if (!sp || sp == p || (size_t)(sp - p) >= method_size)
        return -1;
    for (n = 0; p + n < sp; n++)
        if (p[n] < 'A' || p[n] > 'Z')
            return -1;
    memcpy(method, p, n);
    method[n] = '\0';
    p = sp + 1;
    sp = memchr(p, ' ', (size_t)(eol - p));
    if (!sp)
        sp = eol;
    else if ((size_t)(eol - sp) < 8 || memcmp(sp + 1, "HTTP/1.", 7))
        return -1;
    if (p == sp || *p != '/')
        return -1;
    for (n = 0; p + n < sp && p[n] != '?'; n++)
        if ((unsigned char)p[n] <= ' ' || p[n] == 0x7f)
            return -1;
    if (n >= path_size)
        return -1;
    memcpy(path, p, n);
    path[n] = '\0';
    return 1;
}

bool httpd_request_header(const char *req, size_t len, const char *name, char *out, size_t size)
{
    const char *p = memchr(req, '\n', len), *end = req + len;
    size_t nl = strlen(name);

    while (p && p + 1 < end) {
        const char *line = p + 1, *eol = memchr(line, '\n', (size_t)(end - line)), *v;
        size_t n;

        if (!eol || eol == line || (eol == line + 1 && *line == '\r'))
            return false; /* the blank line: no more headers */
        if ((size_t)(eol - line) > nl && line[nl] == ':' && !strncasecmp(line, name, nl)) {
            for (v = line + nl + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
                ;
            n = (size_t)(eol - v);
            while (n && (v[n - 1] == '\r' || v[n - 1] == ' ' || v[n - 1] == '\t'))
                n--;
            if (size) {
                if (n >= size)
                    n = size - 1;
                memcpy(out, v, n);
                out[n] = '\0';
            }
            return true;
        }
        p = eol;
    }
    return false;
}

static void httpd_conn_close(struct httpd *h, struct httpd_conn *c)
{
    if (c->tr)
        h->tr.close(c->tr);
    c->tr = NULL;
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->state = CONN_FREE;
    memset(c->req, 0, c->len); /* it may hold a bearer token */
    c->len = 0;
    buf_release(&c->out);
}

/* httpd_conn_answer puts the answer in c's output and turns c to writing it. */
static void httpd_conn_answer(struct httpd *h, struct httpd_conn *c, int status, const char *ctype,
                              const char *body, size_t len)
{
    buf_reset(&c->out);
    c->off = 0;
    if (buf_printf(&c->out,
                   "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                   "X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
                   status, httpd_reason(status), ctype, len) ||
        buf_append(&c->out, body, len)) {
        httpd_conn_close(h, c); /* out of memory: nothing sensible to send */
        return;
    }
    c->state = CONN_WRITING;
    c->want = POLLOUT;
    c->deadline = mono_ms() + HTTPD_WRITE_TIMEOUT_MS;
}

/* httpd_queue hands a request for a slow path to the worker; false when it is full */
static bool httpd_queue(struct httpd *h, struct httpd_conn *c, const char *method, const char *path)
{
    struct httpd_job *j;
    bool ok = false;

    pthread_mutex_lock(&h->mu);
    if (h->busy < HTTPD_SLOW_MAX && (j = calloc(1, sizeof(*j)))) {
        j->slot = (size_t)(c - h->conns);
        j->gen = c->gen;
        j->head = !strcmp(method, "HEAD");
        snprintf(j->method, sizeof(j->method), "%s", method);
        snprintf(j->path, sizeof(j->path), "%s", path);
        j->has_auth =
            httpd_request_header(c->req, c->len, "Authorization", j->auth, sizeof(j->auth));
        buf_init(&j->body, HTTPD_BODY_MAX);
        h->queue[h->nqueue++] = j;
        h->busy++;
        pthread_cond_signal(&h->cv);
        ok = true;
    }
    pthread_mutex_unlock(&h->mu);
    return ok;
}

static void httpd_conn_request(struct httpd *h, struct httpd_conn *c)
{
    char method[16], path[1024], auth[HTTPD_AUTH_MAX];
    const char *ctype = "text/plain; charset=utf-8";
    struct buf body = BUF_INIT(HTTPD_BODY_MAX);
    int rc = httpd_parse_request(c->req, c->len, method, sizeof(method), path, sizeof(path));
    struct httpd_req r;
    int status;
    bool head;

    if (rc == 0)
        return; /* more to come */
    if (rc < 0) {
        httpd_conn_answer(h, c, 400, ctype, "bad request\n", 12);
        return;
    }
    head = !strcmp(method, "HEAD");
    if (strcmp(method, "GET") && !head) {
        httpd_conn_answer(h, c, 405, ctype, "method not allowed\n", 19);
        return;
    }
    r.authorization =
        httpd_request_header(c->req, c->len, "Authorization", auth, sizeof(auth)) ? auth : NULL;
    if (h->has_worker && h->slow(h->ud, path, r.authorization)) {
        if (!httpd_queue(h, c, method, path)) {
            httpd_conn_answer(h, c, 503, ctype, "busy\n", 5);
            return;
        }
        c->state = CONN_WAITING;
        c->deadline = mono_ms() + HTTPD_SLOW_TIMEOUT_MS;
        return;
    }
    r.method = method;
    r.path = path;
    status = h->fn(h->ud, &r, &body, &ctype);
    memset(auth, 0, sizeof(auth)); /* a bearer token is not left on the stack */
    httpd_conn_answer(h, c, status, ctype, !head && body.data ? body.data : "",
                      !head ? body.len : 0);
    buf_release(&body);
}

/* the transport's read and write, or the socket's */
static long httpd_read(struct httpd *h, struct httpd_conn *c, void *buf, size_t n)
{
    ssize_t r;

    if (c->tr)
        return h->tr.read(c->tr, buf, n);
    r = recv(c->fd, buf, n, 0);
    if (r < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? HTTPD_IO_WANT_READ : -1;
    return (long)r;
}

static long httpd_write(struct httpd *h, struct httpd_conn *c, const void *buf, size_t n)
{
    ssize_t r;

    if (c->tr)
        return h->tr.write(c->tr, buf, n);
    r = send(c->fd, buf, n, MSG_NOSIGNAL);
    if (r < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? HTTPD_IO_WANT_WRITE : -1;
    return (long)r;
}

/* httpd_conn_io moves c on as far as it can without waiting */
static void httpd_conn_io(struct httpd *h, struct httpd_conn *c)
{
    long r;

    if (c->state == CONN_HANDSHAKE) {
        r = h->tr.handshake(c->tr);
        if (r == HTTPD_IO_WANT_READ || r == HTTPD_IO_WANT_WRITE) {
            c->want = r == HTTPD_IO_WANT_READ ? POLLIN : POLLOUT;
            return;
        }
        if (r != 1) {
            httpd_conn_close(h, c);
            return;
        }
        c->state = CONN_READING;
        c->want = POLLIN;
    }
    if (c->state == CONN_READING) {
        r = httpd_read(h, c, c->req + c->len, HTTPD_REQ_MAX - c->len);
        if (r == HTTPD_IO_WANT_READ || r == HTTPD_IO_WANT_WRITE) {
            c->want = r == HTTPD_IO_WANT_READ ? POLLIN : POLLOUT;
            return;
        }
        if (r <= 0) {
            httpd_conn_close(h, c); /* gone before a whole request: nobody to answer */
            return;
        }
        c->len += (size_t)r;
        c->req[c->len] = '\0';
        httpd_conn_request(h, c);
    }
    while (c->state == CONN_WRITING && c->off < c->out.len) {
        r = httpd_write(h, c, c->out.data + c->off, c->out.len - c->off);
        if (r == HTTPD_IO_WANT_READ || r == HTTPD_IO_WANT_WRITE) {
            c->want = r == HTTPD_IO_WANT_READ ? POLLIN : POLLOUT;
            return;
        }
        if (r <= 0)
            break;
        c->off += (size_t)r;
    }
    if (c->state == CONN_WRITING)
        httpd_conn_close(h, c);
}

/* httpd_victim is the slot for a new client: a free one, else the client still reading (or
 * in its handshake) that has sent the fewest bytes, the oldest among those (a connect
 * flood's), else the one nearest its deadline. */
static struct httpd_conn *httpd_victim(struct httpd *h)
{
    struct httpd_conn *best = NULL, *c;

    for (c = h->conns; c < h->conns + HTTPD_CONN_MAX; c++) {
        bool early, best_early;

        if (c->fd < 0)
            return c;
        early = c->state == CONN_HANDSHAKE || c->state == CONN_READING;
        best_early = best && (best->state == CONN_HANDSHAKE || best->state == CONN_READING);
        if (!best || (!best_early && early) ||
            (best_early == early &&
             (!early ? c->deadline < best->deadline
                     : c->len < best->len || (c->len == best->len && c->since < best->since))))
            best = c;
    }
    return best;
}

/* httpd_accept takes every waiting client (up to a batch), each into a slot, and reads and
 * answers at once a request that came with its connect. */
static void httpd_accept(struct httpd *h)
{
    int n;

    for (n = 0; n < HTTPD_ACCEPT_BATCH; n++) {
        int fd = accept4(h->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        struct httpd_conn *slot;

        if (fd < 0)
            return; /* EAGAIN: the queue is empty (or a client gone meanwhile) */
        slot = httpd_victim(h);
        httpd_conn_close(h, slot);
        slot->fd = fd;
        slot->gen++;
        slot->len = 0;
        slot->req[0] = '\0';
        slot->since = mono_ms();
        slot->deadline = slot->since + HTTPD_READ_TIMEOUT_MS;
        slot->want = POLLIN;
        buf_init(&slot->out, HTTPD_BODY_MAX + 4096);
        if (h->has_tr) {
            slot->tr = h->tr.open(h->tr.ctx, fd);
            if (!slot->tr) {
                httpd_conn_close(h, slot);
                continue;
            }
            slot->state = CONN_HANDSHAKE;
        } else {
            slot->state = CONN_READING;
        }
        httpd_conn_io(h, slot);
        if (slot->fd >= 0 && slot->state == CONN_WRITING)
            httpd_conn_io(h, slot); /* a probe's answer fits the socket buffer */
    }
}

static void *httpd_worker(void *arg)
{
    struct httpd *h = arg;

    pthread_mutex_lock(&h->mu);
    for (;;) {
        struct httpd_job *j;
        struct httpd_req r;
        ssize_t w;

        while (!h->nqueue && !atomic_load(&h->stop))
            pthread_cond_wait(&h->cv, &h->mu);
        if (atomic_load(&h->stop))
            break;
        j = h->queue[0];
        memmove(h->queue, h->queue + 1, --h->nqueue * sizeof(*h->queue));
        pthread_mutex_unlock(&h->mu);
        r.method = j->method;
        r.path = j->path;
        r.authorization = j->has_auth ? j->auth : NULL;
        j->ctype = "text/plain; charset=utf-8";
        j->status = h->fn(h->ud, &r, &j->body, &j->ctype);
        memset(j->auth, 0, sizeof(j->auth)); /* a bearer token is not kept */
        pthread_mutex_lock(&h->mu);
        h->done[h->ndone++] = j;
        w = write(h->wake[1], "x", 1);
        (void)w;
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

/* httpd_collect gives the worker's answers to their connections, when still theirs */
static void httpd_collect(struct httpd *h)
{
    struct httpd_job *done[HTTPD_SLOW_MAX];
    char drain[64];
    size_t n, i;

    while (read(h->wake[0], drain, sizeof(drain)) > 0)
        ;
    pthread_mutex_lock(&h->mu);
    n = h->ndone;
    memcpy(done, h->done, n * sizeof(*done));
    h->ndone = 0;
    h->busy -= n;
    pthread_mutex_unlock(&h->mu);
    for (i = 0; i < n; i++) {
        struct httpd_job *j = done[i];
        struct httpd_conn *c = &h->conns[j->slot];

        if (c->fd >= 0 && c->gen == j->gen && c->state == CONN_WAITING) {
            httpd_conn_answer(h, c, j->status, j->ctype,
                              !j->head && j->body.data ? j->body.data : "",
                              !j->head ? j->body.len : 0);
            if (c->fd >= 0)
                httpd_conn_io(h, c);
        }
        buf_release(&j->body);
        free(j);
    }
}

static void *httpd_thread(void *arg)
{
    struct httpd *h = arg;
    struct pollfd fds[HTTPD_CONN_MAX + 2];
    struct httpd_conn *of[HTTPD_CONN_MAX + 2];

    while (!atomic_load(&h->stop)) {
        int64_t now = mono_ms(), wait = 200;
        size_t n = 1, first, i;
        struct httpd_conn *c;

        fds[0] = (struct pollfd){h->fd, POLLIN, 0};
        of[0] = NULL;
        if (h->has_worker) {
            fds[n] = (struct pollfd){h->wake[0], POLLIN, 0};
            of[n++] = NULL;
        }
        first = n;
        for (c = h->conns; c < h->conns + HTTPD_CONN_MAX; c++) {
            if (c->fd < 0)
                continue;
            if (c->deadline <= now) {
                /* too slow: a request not yet whole gets 408, a worker's answer 503, an
                 * answer being sent or a handshake is abandoned */
                if (c->state == CONN_WRITING || c->state == CONN_HANDSHAKE) {
                    httpd_conn_close(h, c);
                    continue;
                }
                if (c->state == CONN_WAITING)
                    httpd_conn_answer(h, c, 503, "text/plain; charset=utf-8", "timeout\n", 8);
                else
                    httpd_conn_answer(h, c, 408, "text/plain; charset=utf-8", "request timeout\n",
                                      16);
                if (c->fd < 0)
                    continue;
                c->deadline = now + 100; /* one try to send it, without waiting */
                httpd_conn_io(h, c);
                if (c->fd < 0)
                    continue;
            }
            if (c->deadline - now < wait)
                wait = c->deadline - now;
            if (c->state == CONN_WAITING)
                continue; /* the worker's answer comes through wake */
            fds[n] = (struct pollfd){c->fd, c->want, 0};
            of[n++] = c;
        }
        if (poll(fds, n, (int)(wait > 0 ? wait : 0)) <= 0)
            continue;
        for (i = first; i < n; i++)
            if (fds[i].revents && of[i]->fd == fds[i].fd)
                httpd_conn_io(h, of[i]);
        if (h->has_worker && fds[1].revents)
            httpd_collect(h);
        if (fds[0].revents & POLLIN)
            httpd_accept(h);
    }
    for (size_t i = 0; i < HTTPD_CONN_MAX; i++)
        httpd_conn_close(h, &h->conns[i]);
    return NULL;
}

int httpd_start_opts(const struct httpd_opts *o, struct httpd **out, struct err *err)
{
    const char *addr = o->addr;
    char host[256] = "", port[16];
    const char *colon = strrchr(addr, ':');
    struct addrinfo hints, *res = NULL, *ai;
    struct httpd *h = NULL;
    int rc, fd = -1, one = 1;
    size_t i;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);

    *out = NULL;
    if (!colon || strlen(colon + 1) >= sizeof(port) || (size_t)(colon - addr) >= sizeof(host))
        return err_set(err, -EINVAL, "metrics address '%s' is not HOST:PORT", addr);
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    if (host[0] == '[' && host[strlen(host) - 1] == ']') {
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = '\0';
    }
    snprintf(port, sizeof(port), "%s", colon + 1);
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
    if (rc)
        return err_set(err, -EINVAL, "metrics address '%s': %s", addr, gai_strerror(rc));
    rc = -EADDRNOTAVAIL;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0)
            continue;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, HTTPD_BACKLOG))
            break;
        rc = -errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        err_set(err, rc, "cannot listen on %s: %s", addr, strerror(-rc));
        goto out;
    }
    h = calloc(1, sizeof(*h));
    if (!h) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (i = 0; i < HTTPD_CONN_MAX; i++)
        h->conns[i].fd = -1;
    h->fd = fd;
    h->fn = o->fn;
    h->ud = o->ud;
    h->wake[0] = h->wake[1] = -1;
    if (o->transport) {
        h->tr = *o->transport;
        h->has_tr = true;
    }
    if (o->slow) {
        h->slow = o->slow;
        if (pipe2(h->wake, O_CLOEXEC | O_NONBLOCK)) {
            rc = err_set(err, -errno, "cannot make a pipe: %s", strerror(errno));
            goto out;
        }
        pthread_mutex_init(&h->mu, NULL);
        pthread_cond_init(&h->cv, NULL);
        if (pthread_create(&h->worker, NULL, httpd_worker, h)) {
            rc = err_set(err, -EAGAIN, "cannot start the metrics worker thread");
            goto out;
        }
        h->has_worker = true;
        pthread_setname_np(h->worker, "metrics-auth");
    }
    if (!getsockname(fd, (struct sockaddr *)&ss, &sl))
        h->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                 : ((struct sockaddr_in *)&ss)->sin_port);
    if (pthread_create(&h->thread, NULL, httpd_thread, h)) {
        rc = err_set(err, -EAGAIN, "cannot start the metrics server thread");
        goto out;
    }
    pthread_setname_np(h->thread, "metrics");
    *out = h;
    return 0;
out:
    if (fd >= 0)
        close(fd);
    if (h) {
        if (h->has_worker) {
            atomic_store(&h->stop, 1);
            pthread_mutex_lock(&h->mu);
            pthread_cond_signal(&h->cv);
            pthread_mutex_unlock(&h->mu);
            pthread_join(h->worker, NULL);
        }
        if (h->wake[0] >= 0) {
            close(h->wake[0]);
            close(h->wake[1]);
        }
    }
    free(h);
    return rc;
}

int httpd_start(const char *addr, httpd_fn fn, void *ud, struct httpd **out, struct err *err)
{
    struct httpd_opts o = {addr, fn, ud, NULL, NULL};

    return httpd_start_opts(&o, out, err);
}

int httpd_port(const struct httpd *h)
{
    return h->port;
}

void httpd_stop(struct httpd *h)
{
    size_t i;

    if (!h)
        return;
    atomic_store(&h->stop, 1);
    pthread_join(h->thread, NULL);
    if (h->has_worker) {
        pthread_mutex_lock(&h->mu);
        pthread_cond_signal(&h->cv);
        pthread_mutex_unlock(&h->mu);
        pthread_join(h->worker, NULL);
        for (i = 0; i < h->nqueue; i++) {
            buf_release(&h->queue[i]->body);
            free(h->queue[i]);
        }
        for (i = 0; i < h->ndone; i++) {
            buf_release(&h->done[i]->body);
            free(h->done[i]);
        }
        pthread_mutex_destroy(&h->mu);
        pthread_cond_destroy(&h->cv);
        close(h->wake[0]);
        close(h->wake[1]);
    }
    close(h->fd);
    free(h);
}
