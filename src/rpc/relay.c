/* relay.c - accept and relay: see relay.h. One thread polls the listening socket, a wake pipe
 * and both ends of every connection; all the state below is that thread's, except the
 * counters, which stats reads under mu. */
#include "rpc/relay.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "rpc/h2guard.h"
#include "rpc/rpc.h"

#define RELAY_BUF 16384

struct relay_pipe {
    uint8_t buf[RELAY_BUF];
    size_t len, off; /* bytes buf[off..len) wait to be written */
    bool eof;        /* the reading side ended */
    bool shut;       /* and the writing side was shut down after the last byte */
};

/* client -> gRPC: bytes read, of which the guard admitted some, of which some went on */
struct relay_up {
    uint8_t buf[RELAY_BUF];
    size_t len, admitted, off; /* off <= admitted <= len */
    bool eof, shut;
};

struct relay_conn {
    int cfd, gfd;           /* the client; our end of the socketpair gRPC has the other end of */
    struct relay_up up;     /* client -> gRPC, judged by guard */
    struct relay_pipe down; /* gRPC -> client */
    struct h2guard guard;
    int64_t opened_ms;
    bool slowed; /* counted once in the stats when the guard first held a frame back */
};

struct rpc_relay {
    int lfds[RPC_MAX_SOCKETS], wake[2];
    size_t nlfds;
    grpc_server *server;
    grpc_server_credentials *creds;
    pthread_t thread;
    struct relay_conn *conns[RPC_MAX_CONNECTIONS];
    size_t nconns;

    pthread_mutex_t mu; /* guards st */
    struct rpc_conn_stats st;
};

static void conn_close(struct rpc_relay *r, size_t i, const char *dropped)
{
    struct relay_conn *c = r->conns[i];

    close(c->cfd);
    close(c->gfd);
    r->conns[i] = r->conns[--r->nconns];
    pthread_mutex_lock(&r->mu);
    r->st.open = r->nconns;
    if (dropped) { /* dropped may be the connection's own text: copied before c goes */
        r->st.dropped++;
        snprintf(r->st.last_drop, sizeof(r->st.last_drop), "%s", dropped);
    }
    pthread_mutex_unlock(&r->mu);
    free(c);
}

static void accept_all(struct rpc_relay *r, int lfd)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), sv[2];
        struct relay_conn *c;

        if (fd < 0)
            return; /* EAGAIN, or a client that went away before we took it */
        c = r->nconns < RPC_MAX_CONNECTIONS ? calloc(1, sizeof(*c)) : NULL;
        if (!c || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv)) {
            free(c);
            close(fd);
            pthread_mutex_lock(&r->mu);
            r->st.refused++;
            pthread_mutex_unlock(&r->mu);
            continue;
        }
        c->cfd = fd;
        c->gfd = sv[0];
        c->opened_ms = mono_ms();
        h2guard_init(&c->guard, c->opened_ms);
        r->conns[r->nconns++] = c;
        G(grpc_server_add_channel_from_fd)(r->server, sv[1], r->creds); /* gRPC owns sv[1] */
        pthread_mutex_lock(&r->mu);
        r->st.open = r->nconns;
        r->st.accepted++;
        pthread_mutex_unlock(&r->mu);
    }
}

/* Reads what from can give into p when p is empty: the bytes read, 0, or -1 on an error. */
static ssize_t pipe_fill(struct relay_pipe *p, int from)
{
    ssize_t n;

    if (p->eof || p->off < p->len)
        return 0;
    n = read(from, p->buf, sizeof(p->buf));
    if (n > 0) {
        p->off = 0;
        p->len = (size_t)n;
        return n;
    }
    if (n == 0)
        p->eof = true;
    else if (errno != EAGAIN && errno != EINTR)
        return -1;
    return 0;
}

/* Writes what p holds to to; after the last byte of an ended stream, shuts to's writing
 * side. Returns -1 on an error. */
static int pipe_flush(struct relay_pipe *p, int to)
{
    while (p->off < p->len) {
        ssize_t n = send(to, p->buf + p->off, p->len - p->off, MSG_NOSIGNAL);

        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        p->off += (size_t)n;
    }
    if (p->eof && !p->shut) {
        shutdown(to, SHUT_WR);
        p->shut = true;
    }
    return 0;
}

/* The client's side: read while there is room and no frame waits for its token, judge what
 * came, pass on what the guard admitted. Returns NULL, "" (a socket failed) or why the
 * connection is dropped. */
static const char *up_step(struct relay_conn *c, int64_t now)
{
    struct relay_up *u = &c->up;
    size_t adm;

    if (!u->eof && u->len < sizeof(u->buf) && !c->guard.throttled) {
        ssize_t n = read(c->cfd, u->buf + u->len, sizeof(u->buf) - u->len);

        if (n > 0)
            u->len += (size_t)n;
        else if (n == 0)
            u->eof = true;
        else if (errno != EAGAIN && errno != EINTR)
            return "";
    }
    if (u->admitted < u->len) {
        if (h2guard_feed(&c->guard, u->buf + u->admitted, u->len - u->admitted, now, &adm))
            return c->guard.why;
        u->admitted += adm;
    }
    while (u->off < u->admitted) {
        ssize_t n = send(c->gfd, u->buf + u->off, u->admitted - u->off, MSG_NOSIGNAL);

        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                break;
            return "";
        }
        u->off += (size_t)n;
    }
    if (u->off && u->off == u->admitted) { /* what waits (half a header, a held frame) first */
        memmove(u->buf, u->buf + u->off, u->len - u->off);
        u->len -= u->off;
        u->admitted = u->off = 0;
    }
    /* the client is done: a frame it never finished is not passed on */
    if (u->eof && !u->shut && u->off == u->admitted && !c->guard.throttled) {
        shutdown(c->gfd, SHUT_WR);
        u->shut = true;
    }
    return NULL;
}

/* Moves bytes both ways; returns NULL to keep the connection, "" to close it quietly (it
 * ended, or a socket failed), or why it is dropped. */
static const char *conn_step(struct relay_conn *c, int64_t now)
{
    const char *why = up_step(c, now);

    if (why)
        return why;
    if (pipe_fill(&c->down, c->gfd) < 0 || pipe_flush(&c->down, c->cfd))
        return "";
    if (c->guard.preface_seen < 24 && now - c->opened_ms > RPC_HANDSHAKE_MS)
        return "no HTTP/2 preface in time";
    if (c->up.shut && c->down.shut)
        return "";
    return NULL;
}

static void *relay_main(void *arg)
{
    struct rpc_relay *r = arg;
    struct pollfd *p = calloc(1 + RPC_MAX_SOCKETS + 2 * RPC_MAX_CONNECTIONS, sizeof(*p));

    if (!p)
        return NULL;
    for (;;) {
        size_t i, n = 1 + r->nlfds;
        int64_t now = mono_ms();
        int timeout = 1000;

        p[0] = (struct pollfd){r->wake[0], POLLIN, 0};
        for (i = 0; i < r->nlfds; i++)
            p[1 + i] = (struct pollfd){r->lfds[i], POLLIN, 0};
        for (i = 0; i < r->nconns; i++) {
            struct relay_conn *c = r->conns[i];
            bool up_wait = c->up.off < c->up.admitted, down_wait = c->down.off < c->down.len;
            bool up_read = !c->up.eof && c->up.len < sizeof(c->up.buf) && !c->guard.throttled;
            int64_t wait = h2guard_wait_ms(&c->guard, now);

            if (wait && wait < timeout)
                timeout = (int)wait; /* a frame waits for its token */
            p[n++] = (struct pollfd){
                c->cfd, (short)((up_read ? POLLIN : 0) | (down_wait ? POLLOUT : 0)), 0};
            p[n++] = (struct pollfd){
                c->gfd,
                (short)((!down_wait && !c->down.eof ? POLLIN : 0) | (up_wait ? POLLOUT : 0)), 0};
        }
        if (poll(p, n, timeout) < 0 && errno != EINTR)
            break;
        if (p[0].revents)
            break;
        now = mono_ms();
        /* from the last, so that a close (which moves the last connection into i) skips none */
        for (i = r->nconns; i-- > 0;) {
            struct relay_conn *c = r->conns[i];
            const char *why = conn_step(c, now);

            if (why) {
                conn_close(r, i, why[0] ? why : NULL);
                continue;
            }
            if (c->guard.throttled && !c->slowed) {
                c->slowed = true;
                pthread_mutex_lock(&r->mu);
                r->st.slowed++;
                pthread_mutex_unlock(&r->mu);
            }
        }
        for (i = 0; i < r->nlfds; i++)
            if (p[1 + i].revents)
                accept_all(r, r->lfds[i]);
    }
    free(p);
    return NULL;
}

int rpc_relay_start(const int *lfds, size_t n, grpc_server *server, struct rpc_relay **out,
                    struct err *err)
{
    struct rpc_relay *r = calloc(1, sizeof(*r));
    size_t i;

    *out = NULL;
    if (!r || n > RPC_MAX_SOCKETS) {
        for (i = 0; i < n; i++)
            close(lfds[i]);
        free(r);
        return err_set(err, -ENOMEM, "out of memory");
    }
    memcpy(r->lfds, lfds, n * sizeof(*lfds));
    r->nlfds = n;
    r->server = server;
    pthread_mutex_init(&r->mu, NULL);
    r->creds = G(grpc_insecure_server_credentials_create)();
    if (pipe2(r->wake, O_CLOEXEC)) {
        r->wake[0] = r->wake[1] = -1;
        rpc_relay_stop(r);
        return err_set(err, -EMFILE, "cannot make a pipe: %s", strerror(errno));
    }
    if (pthread_create(&r->thread, NULL, relay_main, r)) {
        close(r->wake[1]);
        r->wake[1] = -1;
        rpc_relay_stop(r);
        return err_set(err, -EAGAIN, "cannot start the connection thread");
    }
    *out = r;
    return 0;
}

void rpc_relay_stats(struct rpc_relay *r, struct rpc_conn_stats *st)
{
    memset(st, 0, sizeof(*st));
    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    *st = r->st;
    pthread_mutex_unlock(&r->mu);
}

void rpc_relay_stop(struct rpc_relay *r)
{
    if (!r)
        return;
    if (r->wake[1] >= 0) {
        ssize_t w = write(r->wake[1], "x", 1);

        (void)w;
        pthread_join(r->thread, NULL);
        close(r->wake[1]);
    }
    if (r->wake[0] >= 0)
        close(r->wake[0]);
    while (r->nconns)
        conn_close(r, r->nconns - 1, NULL);
    if (r->creds)
        G(grpc_server_credentials_release)(r->creds);
    for (size_t i = 0; i < r->nlfds; i++)
        close(r->lfds[i]);
    pthread_mutex_destroy(&r->mu);
    free(r);
}
