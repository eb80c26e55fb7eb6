/* rpc.c - a gRPC server and client on gRPC core's call API.
 *
 * Each incoming call is a struct rpc_call with one tag per kind of batch in flight (the first
 * message, a send, the close notification). A call is freed when none of its batches is
 * outstanding any more and the client side is closed. grpc_init/grpc_shutdown bracket every
 * server and client call, as gRPC counts them. */
#include "rpc/rpc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <pthread.h>

#include "rpc/grpc_dl.h"
#include "rpc/h2guard.h"
#include "rpc/relay.h"

/* Calls waiting to be accepted at any time. gRPC core queues every incoming call that finds
 * no request waiting, even one the client cancelled at once; relay.c bounds how fast calls
 * come, these let them be taken as fast. */
#define REQUEST_SLOTS 64

enum tag_kind { TAG_NEW, TAG_RECV, TAG_SEND, TAG_CLOSE, TAG_SHUTDOWN };

struct rpc_call;

struct rpc_tag {
    enum tag_kind kind;
    struct rpc_call *call;
};

struct rpc_call {
    struct rpc_server *srv;
    grpc_call *call;
    grpc_call_details details;
    grpc_metadata_array md;
    grpc_byte_buffer *recv;
    int cancelled;
    int pending;        /* batches in flight */
    bool accepted;      /* TAG_NEW came back ok */
    bool stream;        /* the streaming method */
    bool closed;        /* TAG_CLOSE came back: the client is gone or the call is over */
    bool sending;       /* a stream's send is in flight */
    bool sent_metadata; /* initial metadata went out */
    uint64_t gen_sent;  /* generation of the last message sent on a stream */
    struct rpc_tag t_new, t_recv, t_send, t_close;
    struct rpc_call *next; /* the server's list of streams */
};

struct rpc_server {
    const struct rpc_handlers *h;
    grpc_server *server;
    grpc_completion_queue *cq;
    char path[RPC_MAX_SOCKETS][4096];
    struct stat st[RPC_MAX_SOCKETS]; /* of the sockets it created, to remove only those */
    size_t npaths;
    struct rpc_relay *relay; /* the socket's connections, relayed to server */

    struct rpc_call *streams;
    size_t nstreams;
    int live; /* calls allocated (waiting or active) */
    bool shutting_down;
    struct rpc_tag t_shutdown;
    bool shutdown_done;
};

/* gRPC core logs to stderr on its own; our callers report every failure that matters, so
 * its lines are dropped (GRPC_VERBOSITY=debug GRPC_TRACE=... still work for debugging,
 * since gpr only calls this for messages at or above the set verbosity). */
static void grpc_log_drop(gpr_log_func_args *args)
{
    (void)args;
}

static void rpc_init_once(void)
{
    if (!getenv("GRPC_VERBOSITY"))
        G(gpr_set_log_function)(grpc_log_drop);
}

/* Loads gRPC core (once) and counts one more user of it; each success is paired with a
 * grpc_shutdown. */
static int rpc_init(struct err *err)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    int rc = rpc_grpc_load(err);

    if (rc)
        return rc;
    pthread_once(&once, rpc_init_once);
    G(grpc_init)();
    return 0;
}

static gpr_timespec deadline_ms(long ms)
{
    return G(gpr_time_add)(G(gpr_now)(GPR_CLOCK_MONOTONIC),
                           G(gpr_time_from_millis)(ms, GPR_TIMESPAN));
}

/* Copies a received message into out, refusing more than RPC_MSG_MAX. */
static int bytes_from_buffer(grpc_byte_buffer *bb, struct buf *out)
{
    grpc_byte_buffer_reader r;
    grpc_slice sl;
    int rc = 0;

    if (!bb)
        return 0;
    if (!G(grpc_byte_buffer_reader_init)(&r, bb))
        return -EPROTO;
    while (!rc && G(grpc_byte_buffer_reader_next)(&r, &sl)) {
        if (out->len + GRPC_SLICE_LENGTH(sl) > RPC_MSG_MAX)
            rc = -E2BIG;
        else if (GRPC_SLICE_LENGTH(sl))
            rc = buf_append(out, GRPC_SLICE_START_PTR(sl), GRPC_SLICE_LENGTH(sl));
        G(grpc_slice_unref)(sl);
    }
    G(grpc_byte_buffer_reader_destroy)(&r);
    return rc;
}

static grpc_byte_buffer *buffer_from_bytes(const void *p, size_t n)
{
    grpc_slice sl = G(grpc_slice_from_copied_buffer)(p ? (const char *)p : "", n);
    grpc_byte_buffer *bb = G(grpc_raw_byte_buffer_create)(&sl, 1);

    G(grpc_slice_unref)(sl);
    return bb;
}

/* ---- the server ------------------------------------------------------------------------ */

static void call_free(struct rpc_call *c)
{
    struct rpc_server *s = c->srv;

    if (c->stream) {
        struct rpc_call **p = &s->streams;

        while (*p && *p != c)
            p = &(*p)->next;
        if (*p) {
            *p = c->next;
            s->nstreams--;
        }
    }
    if (c->recv)
        G(grpc_byte_buffer_destroy)(c->recv);
    if (c->call)
        G(grpc_call_unref)(c->call);
    G(grpc_call_details_destroy)(&c->details);
    G(grpc_metadata_array_destroy)(&c->md);
    s->live--;
    free(c);
}

static void call_maybe_free(struct rpc_call *c)
{
    if (c->pending == 0 && (c->closed || !c->accepted))
        call_free(c);
}

static int call_batch(struct rpc_call *c, const grpc_op *ops, size_t n, struct rpc_tag *t)
{
    if (G(grpc_call_start_batch)(c->call, ops, n, t, NULL) != GRPC_CALL_OK)
        return -EIO;
    c->pending++;
    return 0;
}

/* Asks for the next incoming call; a slot is always waiting so calls never queue long. */
static void request_next(struct rpc_server *s)
{
    struct rpc_call *c;

    if (s->shutting_down)
        return;
    c = calloc(1, sizeof(*c));
    if (!c)
        return;
    c->srv = s;
    c->t_new = (struct rpc_tag){TAG_NEW, c};
    c->t_recv = (struct rpc_tag){TAG_RECV, c};
    c->t_send = (struct rpc_tag){TAG_SEND, c};
    c->t_close = (struct rpc_tag){TAG_CLOSE, c};
    G(grpc_call_details_init)(&c->details);
    G(grpc_metadata_array_init)(&c->md);
    s->live++;
    if (G(grpc_server_request_call)(s->server, &c->call, &c->details, &c->md, s->cq, s->cq,
                                    &c->t_new) != GRPC_CALL_OK) {
        call_free(c);
        return;
    }
    c->pending++;
}

/* Sends the final status of a call (with a message before it when msg is given). */
static void call_finish(struct rpc_call *c, int status, const char *details, const struct buf *msg)
{
    grpc_op ops[3];
    grpc_slice det = G(grpc_slice_from_copied_string)(details ? details : "");
    grpc_byte_buffer *bb = NULL;
    size_t n = 0;

    memset(ops, 0, sizeof(ops));
    if (!c->sent_metadata) {
        ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
        n++;
        c->sent_metadata = true;
    }
    if (msg) {
        bb = buffer_from_bytes(msg->data, msg->len);
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n].data.send_message.send_message = bb;
        n++;
    }
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = (grpc_status_code)status;
    ops[n].data.send_status_from_server.status_details = details ? &det : NULL;
    n++;
    call_batch(c, ops, n, &c->t_send);
    if (bb)
        G(grpc_byte_buffer_destroy)(bb);
    G(grpc_slice_unref)(det);
}

/* Sends a stream its current message when the generation moved on. */
static void stream_push(struct rpc_call *c)
{
    struct rpc_server *s = c->srv;
    struct buf msg = BUF_INIT(RPC_MSG_MAX);
    grpc_byte_buffer *bb;
    grpc_op ops[2];
    uint64_t gen;
    size_t n = 0;

    if (c->sending || c->closed || s->shutting_down)
        return;
    gen = s->h->stream_state(s->h->ctx, &msg);
    if (c->sent_metadata && gen == c->gen_sent) {
        buf_release(&msg);
        return;
    }
    memset(ops, 0, sizeof(ops));
    if (!c->sent_metadata) {
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
        c->sent_metadata = true;
    }
    bb = buffer_from_bytes(msg.data, msg.len);
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n].data.send_message.send_message = bb;
    n++;
    if (!call_batch(c, ops, n, &c->t_send)) {
        c->sending = true;
        c->gen_sent = gen;
    }
    G(grpc_byte_buffer_destroy)(bb);
    buf_release(&msg);
}

/* The call arrived: read its one request message, and watch for its end. */
static void on_new(struct rpc_call *c, bool ok)
{
    struct rpc_server *s = c->srv;
    grpc_op op;

    c->pending--;
    if (!ok) {
        call_free(c);
        return;
    }
    c->accepted = true;
    request_next(s);

    memset(&op, 0, sizeof(op));
    op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    op.data.recv_close_on_server.cancelled = &c->cancelled;
    if (call_batch(c, &op, 1, &c->t_close)) {
        c->closed = true;
        call_maybe_free(c);
        return;
    }
    memset(&op, 0, sizeof(op));
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &c->recv;
    call_batch(c, &op, 1, &c->t_recv);
}

static void on_recv(struct rpc_call *c, bool ok)
{
    struct rpc_server *s = c->srv;
    struct buf req = BUF_INIT(RPC_MSG_MAX), resp = BUF_INIT(RPC_MSG_MAX);
    char method[256], msg[512];
    size_t mlen = GRPC_SLICE_LENGTH(c->details.method);
    int status;

    c->pending--;
    if (!ok || c->closed || s->shutting_down) {
        call_maybe_free(c);
        return;
    }
    if (mlen >= sizeof(method))
        mlen = sizeof(method) - 1;
    memcpy(method, GRPC_SLICE_START_PTR(c->details.method), mlen);
    method[mlen] = '\0';
    if (!c->recv) {
        call_finish(c, RPC_INVALID_ARGUMENT, "no request message", NULL);
        goto out;
    }
    if (bytes_from_buffer(c->recv, &req)) {
        call_finish(c, RPC_INVALID_ARGUMENT, "request message too large or unreadable", NULL);
        goto out;
    }
    if (s->h->stream_method && !strcmp(method, s->h->stream_method)) {
        c->stream = true;
        c->next = s->streams;
        s->streams = c;
        s->nstreams++;
        stream_push(c);
        goto out;
    }
    msg[0] = '\0';
    status =
        s->h->unary(s->h->ctx, method, (const uint8_t *)req.data, req.len, &resp, msg, sizeof(msg));
    if (status == RPC_OK)
        call_finish(c, RPC_OK, NULL, &resp);
    else
        call_finish(c, status, msg, NULL);
out:
    buf_release(&req);
    buf_release(&resp);
}

static void on_send(struct rpc_call *c, bool ok)
{
    c->pending--;
    c->sending = false;
    if (c->stream && ok && !c->closed)
        stream_push(c); /* the state may have moved on while this message was in flight */
    call_maybe_free(c);
}

static void on_close(struct rpc_call *c)
{
    c->pending--;
    c->closed = true;
    call_maybe_free(c);
}

static void dispatch(struct rpc_server *s, grpc_event ev)
{
    struct rpc_tag *t = ev.tag;

    switch (t->kind) {
    case TAG_NEW:
        on_new(t->call, ev.success);
        break;
    case TAG_RECV:
        on_recv(t->call, ev.success);
        break;
    case TAG_SEND:
        on_send(t->call, ev.success);
        break;
    case TAG_CLOSE:
        on_close(t->call);
        break;
    case TAG_SHUTDOWN:
        s->shutdown_done = true;
        break;
    }
}

/* ---- the server's socket ---------------------------------------------------------------- */

/* Listens on path with mode RPC_SOCKET_MODE. The socket is made listening under a temporary
 * name beside path and renamed into place, so that it appears ready: a peer that sees it
 * (the kubelet's plugin watcher) never finds it refusing connections, and no one can connect
 * while its mode is still the umask's. A path too long for a temporary name beside it is
 * bound in place (bind, chmod, then listen: refused until ready, never open too wide). */
static int listen_unix(const char *path, struct err *err)
{
    struct sockaddr_un sa;
    char tmp[sizeof(sa.sun_path)];
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), n, e;
    const char *at = path;

    if (fd < 0)
        return err_set(err, -errno, "cannot make a unix socket: %s", strerror(errno));
    n = snprintf(tmp, sizeof(tmp), "%s.%ld~", path, (long)getpid());
    if (n > 0 && (size_t)n < sizeof(tmp)) {
        at = tmp;
        unlink(tmp); /* a leftover of a killed process with this pid */
    }
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, at, strlen(at) + 1);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
        e = errno;
        close(fd);
        return err_set(err, -EADDRNOTAVAIL, "cannot listen on unix socket '%s': %s", path,
                       strerror(e));
    }
    if (chmod(at, RPC_SOCKET_MODE) || listen(fd, 64) || (at != path && rename(at, path))) {
        e = errno;
        close(fd);
        unlink(at);
        return err_set(err, -EADDRNOTAVAIL, "cannot listen on unix socket '%s': %s", path,
                       strerror(e));
    }
    return fd;
}

/* The channel arguments every server gets (docs/device-plugin.md, "Limits"), into ca with
 * the room a[0..max); gRPC copies them. */
static grpc_channel_args *server_args(grpc_channel_args *ca, grpc_arg *a, size_t max)
{
    static const struct {
        const char *key;
        int value;
    } ints[] = {
        {"grpc.max_concurrent_streams", RPC_MAX_STREAMS},
        {"grpc.max_metadata_size", RPC_MAX_HEADER_LIST},
        {"grpc.max_receive_message_length", (int)RPC_MSG_MAX},
        {"grpc.max_send_message_length", (int)RPC_MSG_MAX},
        {"grpc.max_connection_idle_ms", RPC_IDLE_MS},
        {"grpc.keepalive_time_ms", RPC_KEEPALIVE_MS},
        {"grpc.keepalive_timeout_ms", RPC_KEEPALIVE_TIMEOUT_MS},
        {"grpc.http2.max_ping_strikes", 2},
    };
    size_t i, n = 0;

    for (i = 0; i < sizeof(ints) / sizeof(ints[0]) && n < max; i++, n++) {
        a[n].type = GRPC_ARG_INTEGER;
        a[n].key = (char *)ints[i].key;
        a[n].value.integer = ints[i].value;
    }
    ca->num_args = n;
    ca->args = a;
    return ca;
}

/* Checks that path can be listened on: its directory is there, nothing but a stale socket is
 * in the way (removed). */
static int path_ready(const char *path, struct err *err)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    struct stat st;

    if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
        return err_set(err, -ENAMETOOLONG, "socket path '%s' is too long", path);
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (stat(dir[0] ? dir : "/", &st) || !S_ISDIR(st.st_mode))
        return err_set(err, -ENOENT, "the directory '%s' does not exist", dir);
    if (!lstat(path, &st)) {
        if (!S_ISSOCK(st.st_mode))
            return err_set(err, -EEXIST,
                           "cannot listen on '%s': a file that is not a socket "
                           "is in the way",
                           path);
        if (unlink(path))
            return err_set(err, -errno, "cannot remove the stale socket '%s': %s", path,
                           strerror(errno));
    }
    return 0;
}

int rpc_server_new_paths(const char *const *paths, size_t npaths, const struct rpc_handlers *h,
                         struct rpc_server **out, struct err *err)
{
    struct rpc_server *s;
    grpc_arg args[16];
    grpc_channel_args ca;
    int fds[RPC_MAX_SOCKETS];
    size_t k;
    int i, rc;

    *out = NULL;
    if (!npaths || npaths > RPC_MAX_SOCKETS)
        return err_set(err, -EINVAL, "%zu sockets for one server (1 to %d)", npaths,
                       RPC_MAX_SOCKETS);
    for (k = 0; k < npaths; k++) {
        rc = path_ready(paths[k], err);
        if (rc)
            return rc;
    }
    if (rpc_init(err))
        return err ? err->code : -ENOENT;
    s = calloc(1, sizeof(*s));
    if (!s) {
        G(grpc_shutdown)();
        return err_set(err, -ENOMEM, "out of memory");
    }
    s->h = h;
    s->t_shutdown.kind = TAG_SHUTDOWN;
    s->cq = G(grpc_completion_queue_create_for_next)(NULL);
    s->server = G(grpc_server_create)(server_args(&ca, args, sizeof(args) / sizeof(args[0])), NULL);
    G(grpc_server_register_completion_queue)(s->server, s->cq, NULL);
    G(grpc_server_start)(s->server);
    for (k = 0; k < npaths; k++) {
        fds[k] = listen_unix(paths[k], err);
        if (fds[k] < 0) {
            rc = fds[k];
            while (k--)
                close(fds[k]);
            rpc_server_free(s);
            return rc;
        }
        snprintf(s->path[k], sizeof(s->path[k]), "%s", paths[k]);
        if (!lstat(paths[k], &s->st[k]) && !S_ISSOCK(s->st[k].st_mode))
            memset(&s->st[k], 0, sizeof(s->st[k]));
        s->npaths = k + 1;
    }
    if (rpc_relay_start(fds, npaths, s->server, &s->relay, err)) {
        rpc_server_free(s);
        return err ? err->code : -EAGAIN;
    }
    for (i = 0; i < REQUEST_SLOTS; i++)
        request_next(s);
    *out = s;
    return 0;
}

int rpc_server_new(const char *path, const struct rpc_handlers *h, struct rpc_server **out,
                   struct err *err)
{
    return rpc_server_new_paths(&path, 1, h, out, err);
}

bool rpc_server_sockets_there(const struct rpc_server *s)
{
    struct stat st;
    size_t k;

    for (k = 0; s && k < s->npaths; k++)
        if (lstat(s->path[k], &st) || !S_ISSOCK(st.st_mode) || st.st_ino != s->st[k].st_ino ||
            st.st_dev != s->st[k].st_dev)
            return false;
    return s != NULL;
}

int rpc_server_poll(struct rpc_server *s, int timeout_ms)
{
    gpr_timespec until = deadline_ms(timeout_ms);
    struct rpc_call *c, *next;

    for (;;) {
        grpc_event ev = G(grpc_completion_queue_next)(s->cq, until, NULL);

        if (ev.type != GRPC_OP_COMPLETE)
            break;
        dispatch(s, ev);
        /* after the first event, take only what is already there */
        until = G(gpr_time_0)(GPR_CLOCK_MONOTONIC);
    }
    for (c = s->streams; c; c = next) {
        next = c->next;
        stream_push(c);
    }
    return 0;
}

size_t rpc_server_streams(const struct rpc_server *s)
{
    return s ? s->nstreams : 0;
}

void rpc_server_conns(struct rpc_server *s, struct rpc_conn_stats *st)
{
    rpc_relay_stats(s ? s->relay : NULL, st);
}

bool rpc_server_conns_news(struct rpc_server *s, struct rpc_conn_stats *seen, char *line,
                           size_t size)
{
    struct rpc_conn_stats now;
    uint64_t dropped, refused, slowed;

    rpc_server_conns(s, &now);
    dropped = now.dropped - seen->dropped;
    refused = now.refused - seen->refused;
    slowed = now.slowed - seen->slowed;
    seen->dropped = now.dropped;
    seen->refused = now.refused;
    seen->slowed = now.slowed;
    if (slowed && !dropped && !refused) {
        snprintf(line, size,
                 "slowed %llu connection%s that opened streams faster than %d a second or sent "
                 "RST_STREAM, PING, SETTINGS or PRIORITY faster than %d a second",
                 (unsigned long long)slowed, slowed > 1 ? "s" : "", H2GUARD_STREAM_RATE,
                 H2GUARD_CONTROL_RATE);
        return true;
    }
    if (dropped && refused)
        snprintf(line, size,
                 "closed %llu connection%s that broke a bound (the last: %s) and refused %llu "
                 "over the limit of %d",
                 (unsigned long long)dropped, dropped > 1 ? "s" : "", now.last_drop,
                 (unsigned long long)refused, RPC_MAX_CONNECTIONS);
    else if (dropped)
        snprintf(line, size, "closed %llu connection%s that broke a bound (the last: %s)",
                 (unsigned long long)dropped, dropped > 1 ? "s" : "", now.last_drop);
    else if (refused)
        snprintf(line, size, "refused %llu connection%s over the limit of %d",
                 (unsigned long long)refused, refused > 1 ? "s" : "", RPC_MAX_CONNECTIONS);
    return dropped || refused;
}

void rpc_server_free(struct rpc_server *s)
{
    struct stat st;
    size_t k;

    if (!s)
        return;
    rpc_relay_stop(s->relay); /* no new connection; the open ones end */
    s->shutting_down = true;
    if (s->server) {
        G(grpc_server_shutdown_and_notify)(s->server, s->cq, &s->t_shutdown);
        G(grpc_server_cancel_all_calls)(s->server);
        while (!s->shutdown_done || s->live > 0) {
            grpc_event ev = G(grpc_completion_queue_next)(s->cq, deadline_ms(1000), NULL);

            if (ev.type == GRPC_OP_COMPLETE)
                dispatch(s, ev);
            else if (ev.type == GRPC_QUEUE_SHUTDOWN)
                break;
        }
        G(grpc_server_destroy)(s->server);
    }
    if (s->cq) {
        G(grpc_completion_queue_shutdown)(s->cq);
        while (G(grpc_completion_queue_next)(s->cq, G(gpr_inf_future)(GPR_CLOCK_MONOTONIC), NULL)
                   .type != GRPC_QUEUE_SHUTDOWN)
            ;
        G(grpc_completion_queue_destroy)(s->cq);
    }
    /* remove a socket only when it is still ours (the kubelet may have replaced the dir) */
    for (k = 0; k < s->npaths; k++)
        if (s->st[k].st_ino && !lstat(s->path[k], &st) && S_ISSOCK(st.st_mode) &&
            st.st_ino == s->st[k].st_ino && st.st_dev == s->st[k].st_dev)
            unlink(s->path[k]);
    free(s);
    G(grpc_shutdown)();
}

/* ---- the client ------------------------------------------------------------------------ */

int rpc_call(const char *path, const char *method, const uint8_t *req, size_t len, int timeout_ms,
             struct buf *resp, struct err *err)
{
    grpc_channel_credentials *creds;
    grpc_channel *ch = NULL;
    grpc_completion_queue *cq = NULL;
    grpc_call *call = NULL;
    grpc_metadata_array md_init, md_trail;
    grpc_byte_buffer *send = NULL, *recv = NULL;
    grpc_status_code status = GRPC_STATUS_UNKNOWN;
    grpc_slice details;
    grpc_slice msl;
    gpr_timespec deadline;
    grpc_op ops[6];
    grpc_event ev;
    char target[4200];
    int tag = 0, rc = 0;

    if (rpc_init(err))
        return err ? err->code : -ENOENT;
    details = G(grpc_empty_slice)();
    G(grpc_metadata_array_init)(&md_init);
    G(grpc_metadata_array_init)(&md_trail);
    snprintf(target, sizeof(target), "unix:%s", path);
    creds = G(grpc_insecure_credentials_create)();
    ch = G(grpc_channel_create)(target, creds, NULL);
    G(grpc_channel_credentials_release)(creds);
    cq = G(grpc_completion_queue_create_for_pluck)(NULL);
    deadline = deadline_ms(timeout_ms);
    msl = G(grpc_slice_from_copied_string)(method);
    call = G(grpc_channel_create_call)(ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq, msl, NULL, deadline,
                                       NULL);
    G(grpc_slice_unref)(msl);
    if (!call) {
        rc = err_set(err, -ENOMEM, "cannot create a gRPC call to '%s'", path);
        goto out;
    }
    send = buffer_from_bytes(req, len);
    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = send;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &md_init;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &recv;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &md_trail;
    ops[5].data.recv_status_on_client.status = &status;
    ops[5].data.recv_status_on_client.status_details = &details;
    if (G(grpc_call_start_batch)(call, ops, 6, &tag, NULL) != GRPC_CALL_OK) {
        rc = err_set(err, -EIO, "cannot start a gRPC call to '%s'", path);
        goto out;
    }
    ev = G(grpc_completion_queue_pluck)(cq, &tag, G(gpr_inf_future)(GPR_CLOCK_MONOTONIC), NULL);
    if (ev.type != GRPC_OP_COMPLETE || !ev.success) {
        rc = err_set(err, -EIO, "gRPC call %s to '%s' failed", method, path);
        goto out;
    }
    if (status != GRPC_STATUS_OK) {
        int n = (int)GRPC_SLICE_LENGTH(details);

        if (status == GRPC_STATUS_UNAVAILABLE)
            rc = -ECONNREFUSED;
        else if (status == GRPC_STATUS_DEADLINE_EXCEEDED)
            rc = -ETIMEDOUT;
        else
            rc = -EPROTO;
        err_set(err, rc, "%s on '%s': gRPC status %d: %.*s", method, path, (int)status,
                n > 400 ? 400 : n, (const char *)GRPC_SLICE_START_PTR(details));
        goto out;
    }
    if (resp && bytes_from_buffer(recv, resp))
        rc = err_set(err, -EPROTO, "%s on '%s': the answer is too large", method, path);
out:
    if (send)
        G(grpc_byte_buffer_destroy)(send);
    if (recv)
        G(grpc_byte_buffer_destroy)(recv);
    G(grpc_slice_unref)(details);
    G(grpc_metadata_array_destroy)(&md_init);
    G(grpc_metadata_array_destroy)(&md_trail);
    if (call)
        G(grpc_call_unref)(call);
    if (cq) {
        G(grpc_completion_queue_shutdown)(cq);
        while (
            G(grpc_completion_queue_pluck)(cq, NULL, G(gpr_inf_future)(GPR_CLOCK_MONOTONIC), NULL)
                .type != GRPC_QUEUE_SHUTDOWN)
            ;
        G(grpc_completion_queue_destroy)(cq);
    }
    if (ch)
        G(grpc_channel_destroy)(ch);
    G(grpc_shutdown)();
    return rc;
}
