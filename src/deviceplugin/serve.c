/* serve.c - the serve thread: the plugin's gRPC server on DIR/gpulabel-<name>.sock, the
 * registration with DIR/kubelet.sock, and the inotify watch on DIR that starts the server
 * again and registers again when the kubelet restarts or our socket disappears (see
 * docs/device-plugin.md, "Registration and restarts"). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "deviceplugin/api.pb-c.h"
#include "deviceplugin/plugin-int.h"
#include "rpc/rpc.h"

#define API_VERSION "v1beta1"
#define M_REGISTER "/v1beta1.Registration/Register"
#define REGISTER_TIMEOUT_MS 10000
#define RETRY_MS 5000 /* a failed start or registration is tried again after this */
#define POLL_MS 50    /* the serve loop's tick: stream updates go out within it */

static void *register_main(void *arg)
{
    struct dp_plugin *p = arg;
    V1beta1__RegisterRequest r = V1BETA1__REGISTER_REQUEST__INIT;
    V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
    struct buf req = BUF_INIT(1 << 16);

    o.get_preferred_allocation_available = 1;
    r.version = API_VERSION;
    r.endpoint = p->sock_name;
    r.resource_name = p->resource;
    r.options = &o;
    err_clear(&p->reg_err);
    p->reg_rc = dp_pack(&r.base, &req);
    if (!p->reg_rc)
        p->reg_rc = rpc_call(p->kubelet_path, M_REGISTER, (const uint8_t *)req.data, req.len,
                             REGISTER_TIMEOUT_MS, NULL, &p->reg_err);
    buf_release(&req);
    __atomic_store_n(&p->reg_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* sock_same: path is still the socket was describes; with by_ctime, also by its change time,
 * which tells a socket re-created with the same inode number (a kubelet restart on a
 * filesystem that reuses them) */
static bool sock_same(const char *path, const struct stat *was, bool by_ctime)
{
    struct stat st;

    return !lstat(path, &st) && S_ISSOCK(st.st_mode) && st.st_ino == was->st_ino &&
           st.st_dev == was->st_dev &&
           (!by_ctime || (st.st_ctim.tv_sec == was->st_ctim.tv_sec &&
                          st.st_ctim.tv_nsec == was->st_ctim.tv_nsec));
}

struct serve_state {
    struct rpc_server *srv;
    struct rpc_handlers h;
    struct stat sock_st;
    struct stat kubelet_st; /* the kubelet.sock registered with (or being), when kubelet_known */
    bool kubelet_known;
    bool want_register;
    long retry_at; /* mono ms of the next start/registration attempt */
    int inotify_fd, watch;
    char last_err[ERR_MSG_MAX];
    const char *restart_pending;      /* a restart asked for while a registration was in flight */
    struct rpc_conn_stats conns_seen; /* of srv, for rpc_server_conns_news */
};

static void serve_restart(struct dp_plugin *p, struct serve_state *s, const char *why)
{
    struct err e;

    if (p->reg_running) {
        s->restart_pending = why; /* done once the registration in flight is over */
        return;
    }
    s->restart_pending = NULL;
    if (s->srv) {
        dp_log(p, 'I', 0, "device plugin: %s; starting the plugin server again", why);
        rpc_server_free(s->srv);
        s->srv = NULL;
        pthread_mutex_lock(&p->mu);
        p->st.registered = false;
        pthread_mutex_unlock(&p->mu);
    }
    err_clear(&e);
    if (rpc_server_new(p->sock_path, &s->h, &s->srv, &e) == -ENOENT)
        err_set(&e, -ENOENT,
                "the kubelet's device-plugin directory '%s' does not exist (not a Kubernetes "
                "node? see --device-plugin-dir and --device-plugin=false)",
                p->dir);
    if (s->srv == NULL) {
        if (strcmp(s->last_err, e.msg))
            dp_log(p, 'E', 0, "device plugin: %s; retrying every %ds", e.msg, RETRY_MS / 1000);
        snprintf(s->last_err, sizeof(s->last_err), "%s", e.msg);
        s->retry_at = mono_ms() + RETRY_MS;
        return;
    }
    if (lstat(p->sock_path, &s->sock_st))
        memset(&s->sock_st, 0, sizeof(s->sock_st));
    memset(&s->conns_seen, 0, sizeof(s->conns_seen));
    s->want_register = true;
    s->retry_at = 0;
}

static void serve_register(struct dp_plugin *p, struct serve_state *s)
{
    if (p->reg_running || !s->want_register || !s->srv || mono_ms() < s->retry_at)
        return;
    if (access(p->kubelet_path, F_OK)) {
        /* no kubelet yet: inotify says when kubelet.sock appears */
        s->retry_at = mono_ms() + RETRY_MS;
        return;
    }
    /* the socket this registration goes to: its creation event, read after the registration
     * began, is not a kubelet restart */
    s->kubelet_known = !lstat(p->kubelet_path, &s->kubelet_st);
    p->reg_done = 0;
    if (pthread_create(&p->reg_thread, NULL, register_main, p)) {
        s->retry_at = mono_ms() + RETRY_MS;
        return;
    }
    p->reg_running = true;
}

static void serve_register_done(struct dp_plugin *p, struct serve_state *s)
{
    if (!p->reg_running || !__atomic_load_n(&p->reg_done, __ATOMIC_ACQUIRE))
        return;
    pthread_join(p->reg_thread, NULL);
    p->reg_running = false;
    if (p->reg_rc) {
        if (strcmp(s->last_err, p->reg_err.msg))
            dp_log(p, 'E', 0,
                   "device plugin: cannot register %s with the kubelet: %s; retrying every "
                   "%ds",
                   p->resource, p->reg_err.msg, RETRY_MS / 1000);
        snprintf(s->last_err, sizeof(s->last_err), "%s", p->reg_err.msg);
        s->retry_at = mono_ms() + RETRY_MS;
        return;
    }
    s->want_register = false;
    s->last_err[0] = '\0';
    pthread_mutex_lock(&p->mu);
    p->st.registered = true;
    p->st.registrations++;
    pthread_mutex_unlock(&p->mu);
    dp_log(p, 'I', 0, "device plugin: registered %s (%zu devices) with the kubelet through %s",
           p->resource, dp_ndevices(&p->inv), p->kubelet_path);
}

/* Reads inotify events: kubelet.sock created = the kubelet restarted; our socket removed =
 * serve again. An event is judged by what is there now, since it may be about a socket we
 * replaced: a restart of ours removes our socket too, and a kubelet.sock we registered with
 * after it appeared is no restart. Returns a reason to restart, or NULL. */
static const char *serve_watch(struct dp_plugin *p, struct serve_state *s)
{
    char ev[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    const char *why = NULL;
    ssize_t n;

    if (s->inotify_fd < 0)
        return NULL;
    if (s->watch < 0) {
        s->watch = inotify_add_watch(s->inotify_fd, p->dir,
                                     IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM);
        if (s->watch < 0)
            return NULL;
    }
    while ((n = read(s->inotify_fd, ev, sizeof(ev))) > 0) {
        char *q = ev;

        while (q < ev + n) {
            struct inotify_event *ie = (struct inotify_event *)(void *)q;

            if (ie->len && !strcmp(ie->name, "kubelet.sock") &&
                (ie->mask & (IN_CREATE | IN_MOVED_TO)) &&
                !(s->kubelet_known && sock_same(p->kubelet_path, &s->kubelet_st, true)))
                why = "kubelet.sock was created again (the kubelet restarted)";
            else if (ie->len && !strcmp(ie->name, p->sock_name) &&
                     (ie->mask & (IN_DELETE | IN_MOVED_FROM)) && !why &&
                     !(s->srv && sock_same(p->sock_path, &s->sock_st, false)))
                /* (the removal of a socket we replaced ourselves, by a restart, is not one:
                 * the one we serve now is still there) */
                why = "the plugin socket was removed";
            if (ie->mask & IN_IGNORED)
                s->watch = -1; /* the directory went away; watch it again when it is back */
            q += sizeof(*ie) + ie->len;
        }
    }
    return why;
}

void *dp_serve_main(void *arg)
{
    struct dp_plugin *p = arg;
    struct serve_state s;
    long next_check = 0;
    char line[512];

    memset(&s, 0, sizeof(s));
    s.h.ctx = p;
    s.h.stream_method = DP_METHOD_LIST;
    s.h.unary = dp_handle_unary;
    s.h.stream_state = dp_list_state;
    s.inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    s.watch = -1;
    serve_watch(p, &s);
    serve_restart(p, &s, "starting");
    while (!p->stop) {
        const char *why;

        if (s.srv)
            rpc_server_poll(s.srv, POLL_MS);
        else
            mono_sleep_ms(POLL_MS);
        serve_register_done(p, &s);
        why = serve_watch(p, &s);
        if (!why && s.srv && mono_ms() >= next_check) {
            /* inotify can miss a directory re-created under us: look at the socket too */
            if (!sock_same(p->sock_path, &s.sock_st, false))
                why = "the plugin socket is gone";
            next_check = mono_ms() + 1000;
        }
        if (!why && !p->reg_running)
            why = s.restart_pending;
        if (why)
            serve_restart(p, &s, why);
        else if (!s.srv && mono_ms() >= s.retry_at)
            serve_restart(p, &s, "retrying");
        serve_register(p, &s);
        pthread_mutex_lock(&p->mu);
        p->st.streams = rpc_server_streams(s.srv);
        pthread_mutex_unlock(&p->mu);
        if (s.srv && rpc_server_conns_news(s.srv, &s.conns_seen, line, sizeof(line)))
            dp_log(p, 'W', 0, "device plugin: %s: %s", p->sock_path, line);
    }
    while (p->reg_running) {
        if (s.srv)
            rpc_server_poll(s.srv, POLL_MS);
        serve_register_done(p, &s);
    }
    rpc_server_free(s.srv);
    if (s.inotify_fd >= 0)
        close(s.inotify_fd);
    return NULL;
}
