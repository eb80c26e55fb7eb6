/* httpd.c - the probe and metrics endpoint server (see httpd.h). */
#include "base/httpd.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"

#define HTTPD_REQ_MAX 8192
#define HTTPD_REQ_TIMEOUT_MS 2000

struct httpd {
    int fd;
    int port;
    httpd_fn fn;
    void *ud;
    atomic_int stop;
    pthread_t thread;
};

static void httpd_write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

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
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return "Unknown";
    }
}

static void httpd_answer(int fd, int status, const char *ctype, const char *body, size_t len)
{
    char head[256];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     status, httpd_reason(status), ctype, len);

    httpd_write_all(fd, head, (size_t)n);
    httpd_write_all(fd, body, len);
}

static void httpd_serve_one(struct httpd *h, int fd)
{
    char req[HTTPD_REQ_MAX + 1], method[16], path[1024];
    size_t len = 0;
    int64_t deadline = mono_ms() + HTTPD_REQ_TIMEOUT_MS;
    struct buf body = BUF_INIT(64 << 20);
    const char *ctype = "text/plain; charset=utf-8";
    char *q;
    int status;

    /* Read until the end of the headers; a GET has no body. */
    req[0] = '\0';
    while (!strstr(req, "\r\n\r\n") && !strstr(req, "\n\n")) {
        struct pollfd p = {fd, POLLIN, 0};
        int64_t left = deadline - mono_ms();
        ssize_t r;

        if (left <= 0 || len >= HTTPD_REQ_MAX || poll(&p, 1, (int)left) <= 0)
            goto bad;
        r = recv(fd, req + len, HTTPD_REQ_MAX - len, 0);
        if (r <= 0)
            goto bad;
        len += (size_t)r;
        req[len] = '\0';
    }
    if (sscanf(req, "%15s %1023s", method, path) != 2)
        goto bad;
    if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
        httpd_answer(fd, 405, ctype, "method not allowed\n", 19);
        goto out;
    }
    q = strchr(path, '?');
    if (q)
        *q = '\0';
    status = h->fn(h->ud, path, &body, &ctype);
    httpd_answer(fd, status, ctype, strcmp(method, "HEAD") && body.data ? body.data : "",
                 strcmp(method, "HEAD") ? body.len : 0);
    goto out;
bad:
    httpd_answer(fd, 400, ctype, "bad request\n", 12);
out:
    buf_release(&body);
}

static void *httpd_thread(void *arg)
{
    struct httpd *h = arg;

    while (!atomic_load(&h->stop)) {
        struct pollfd p = {h->fd, POLLIN, 0};
        int c;

        if (poll(&p, 1, 200) <= 0)
            continue;
        c = accept(h->fd, NULL, NULL);
        if (c < 0)
            continue;
        httpd_serve_one(h, c);
        close(c);
    }
    return NULL;
}

int httpd_start(const char *addr, httpd_fn fn, void *ud, struct httpd **out,
                      struct err *err)
{
    char host[256] = "", port[16];
    const char *colon = strrchr(addr, ':');
    struct addrinfo hints, *res = NULL, *ai;
    struct httpd *h = NULL;
    int rc, fd = -1, one = 1;
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
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 64))
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
