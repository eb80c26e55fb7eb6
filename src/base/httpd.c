/* httpd.c - the probe and metrics endpoint server (see httpd.h).
 *
 * One thread, one poll set: the listening socket and up to HTTPD_CONN_MAX clients at once,
 * each with its own deadline, so a client that connects and says nothing (or reads its answer
 * slowly) holds only its own slot, never a probe behind it. Under a flood of connects the
 * accept queue is drained at each wakeup (a full queue drops the probes' SYNs, which the
 * kernel sends again only after a second), a client's request is read and answered at once
 * when it came with the connect (a probe's does), and when every slot is taken the client
 * that has sent the least for the longest is dropped to make room. */
#include "base/httpd.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"

#define HTTPD_CONN_MAX 128
#define HTTPD_BACKLOG 4096          /* the kernel cuts it to net.core.somaxconn */
#define HTTPD_ACCEPT_BATCH 1024     /* clients taken from the accept queue per wakeup */
#define HTTPD_READ_TIMEOUT_MS 1000  /* from the connect to the end of the request head */
#define HTTPD_WRITE_TIMEOUT_MS 5000 /* to send the answer (a large /metrics, a slow reader) */
#define HTTPD_BODY_MAX ((size_t)64 << 20)

struct httpd_conn {
    int fd; /* -1: a free slot */
    int64_t deadline;
    int64_t since; /* when it was accepted */
    bool writing;
    size_t len; /* request bytes read */
    char req[HTTPD_REQ_MAX + 1];
    struct buf out; /* the answer, sent from off */
    size_t off;
};

struct httpd {
    int fd;
    int port;
    httpd_fn fn;
    void *ud;
    atomic_int stop;
    pthread_t thread;
    struct httpd_conn conns[HTTPD_CONN_MAX];
};

static const char *httpd_reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
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

static void httpd_conn_close(struct httpd_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    buf_release(&c->out);
}

/* httpd_conn_answer puts the answer in c's output and turns c to writing it. */
static void httpd_conn_answer(struct httpd_conn *c, int status, const char *ctype, const char *body,
                              size_t len)
{
    buf_reset(&c->out);
    c->off = 0;
    if (buf_printf(&c->out,
                   "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                   "Connection: close\r\n\r\n",
                   status, httpd_reason(status), ctype, len) ||
        buf_append(&c->out, body, len)) {
        httpd_conn_close(c); /* out of memory: nothing sensible to send */
        return;
    }
    c->writing = true;
    c->deadline = mono_ms() + HTTPD_WRITE_TIMEOUT_MS;
}

static void httpd_conn_request(struct httpd *h, struct httpd_conn *c)
{
    char method[16], path[1024];
    const char *ctype = "text/plain; charset=utf-8";
    struct buf body = BUF_INIT(HTTPD_BODY_MAX);
    int rc = httpd_parse_request(c->req, c->len, method, sizeof(method), path, sizeof(path));
    int status;
    bool head;

    if (rc == 0)
        return; /* more to come */
    if (rc < 0) {
        httpd_conn_answer(c, 400, ctype, "bad request\n", 12);
        return;
    }
    head = !strcmp(method, "HEAD");
    if (strcmp(method, "GET") && !head) {
        httpd_conn_answer(c, 405, ctype, "method not allowed\n", 19);
        return;
    }
    status = h->fn(h->ud, path, &body, &ctype);
    httpd_conn_answer(c, status, ctype, !head && body.data ? body.data : "", !head ? body.len : 0);
    buf_release(&body);
}

static void httpd_conn_io(struct httpd *h, struct httpd_conn *c, short revents)
{
    ssize_t r;

    if (c->writing) {
        while (c->off < c->out.len) {
            r = send(c->fd, c->out.data + c->off, c->out.len - c->off, MSG_NOSIGNAL);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                return;
            if (r <= 0)
                break;
            c->off += (size_t)r;
        }
        httpd_conn_close(c);
        return;
    }
    if (!(revents & (POLLIN | POLLHUP | POLLERR)))
        return;
    r = recv(c->fd, c->req + c->len, HTTPD_REQ_MAX - c->len, 0);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (r <= 0) {
        httpd_conn_close(c); /* gone before a whole request: nobody to answer */
        return;
    }
    c->len += (size_t)r;
    c->req[c->len] = '\0';
    httpd_conn_request(h, c);
}

/* httpd_victim is the slot for a new client: a free one, else the client still reading that
 * has sent the fewest bytes, the oldest among those (a connect flood's), else the one nearest
 * its deadline. */
static struct httpd_conn *httpd_victim(struct httpd *h)
{
    struct httpd_conn *best = NULL, *c;

    for (c = h->conns; c < h->conns + HTTPD_CONN_MAX; c++) {
        if (c->fd < 0)
            return c;
        if (!best || (best->writing && !c->writing) ||
            (best->writing == c->writing &&
             (c->writing ? c->deadline < best->deadline
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
        httpd_conn_close(slot);
        slot->fd = fd;
        slot->len = 0;
        slot->req[0] = '\0';
        slot->writing = false;
        slot->since = mono_ms();
        slot->deadline = slot->since + HTTPD_READ_TIMEOUT_MS;
        buf_init(&slot->out, HTTPD_BODY_MAX + 4096);
        httpd_conn_io(h, slot, POLLIN);
        if (slot->fd >= 0 && slot->writing)
            httpd_conn_io(h, slot, POLLOUT); /* a probe's answer fits the socket buffer */
    }
}

static void *httpd_thread(void *arg)
{
    struct httpd *h = arg;
    struct pollfd fds[HTTPD_CONN_MAX + 1];
    struct httpd_conn *of[HTTPD_CONN_MAX + 1];

    while (!atomic_load(&h->stop)) {
        int64_t now = mono_ms(), wait = 200;
        size_t n = 1, i;
        struct httpd_conn *c;

        fds[0] = (struct pollfd){h->fd, POLLIN, 0};
        of[0] = NULL;
        for (c = h->conns; c < h->conns + HTTPD_CONN_MAX; c++) {
            if (c->fd < 0)
                continue;
            if (c->deadline <= now) {
                /* too slow: a request not yet whole gets 408, an answer is abandoned */
                if (c->writing) {
                    httpd_conn_close(c);
                    continue;
                }
                httpd_conn_answer(c, 408, "text/plain; charset=utf-8", "request timeout\n", 16);
                if (c->fd < 0)
                    continue;
                c->deadline = now + 100; /* one try to send it, without waiting */
                httpd_conn_io(h, c, 0);
                if (c->fd < 0)
                    continue;
            }
            if (c->deadline - now < wait)
                wait = c->deadline - now;
            fds[n] = (struct pollfd){c->fd, (short)(c->writing ? POLLOUT : POLLIN), 0};
            of[n++] = c;
        }
        if (poll(fds, n, (int)(wait > 0 ? wait : 0)) <= 0)
            continue;
        for (i = 1; i < n; i++)
            if (fds[i].revents)
                httpd_conn_io(h, of[i], fds[i].revents);
        if (fds[0].revents & POLLIN)
            httpd_accept(h);
    }
    for (size_t i = 0; i < HTTPD_CONN_MAX; i++)
        httpd_conn_close(&h->conns[i]);
    return NULL;
}

int httpd_start(const char *addr, httpd_fn fn, void *ud, struct httpd **out, struct err *err)
{
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
    h->fn = fn;
    h->ud = ud;
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
    free(h);
    return rc;
}

int httpd_port(const struct httpd *h)
{
    return h->port;
}

void httpd_stop(struct httpd *h)
{
    if (!h)
        return;
    atomic_store(&h->stop, 1);
    pthread_join(h->thread, NULL);
    close(h->fd);
    free(h);
}
