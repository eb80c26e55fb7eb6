/* client.c - the Kubernetes REST client: libcurl easy handles in a pool, one rate limiter.
 *
 * Invariants: every field of struct kube_client (client-int.h) except the pool, the token,
 * the CA bundle and the bucket is read-only after kube_client_new, and those are only touched
 * under c->lock. A bearer token lives in the client and in the header lists of the requests
 * using it; it never reaches an error message. Every response body is capped (max_body, 256 MiB
 * at most; watch lines 16 MiB or max_body, error bodies 1 MiB), every request has a deadline
 * (the client's timeout), and a list read in pages has one more (struct kube_list_budget). */
#include "kube/client.h"
#include "kube/exec.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/clock.h"
#include "kube/client-int.h"
#include "kube/http1.h"
#include "kube/jalloc-int.h"
#include "kube/listsplit.h"
#include "kube/yaml.h"

#define CLIENT_WATCH_LINE_MAX ((size_t)16 << 20)
#define CLIENT_TOKEN_PERIOD 60.0 /* seconds between token file re-reads (client-go: 1 min) */
#define CLIENT_CA_PERIOD 300.0   /* seconds between CA file re-reads (client-go: 5 min) */
#define CLIENT_CA_MAX ((size_t)1 << 20)
#define CLIENT_CONNECT_TIMEOUT_MS 10000L
#define CLIENT_WATCH_GATHER_US 2000 /* client_watch_gather's window */
#define CLIENT_WATCH_BURST_US 200   /* a piece this soon after the previous one was waiting */
#define CLIENT_DEFAULT_TIMEOUT_MS 30000L

/* client_route sets url_base and, with tls-server-name, a CONNECT_TO entry so libcurl sends
 * that name as SNI and verifies the certificate against it while connecting to the real
 * host. */
static int client_route(struct kube_client *c, struct err *err)
{
    const char *s = c->cfg.server, *hp = strstr(s, "://") + 3, *host_end, *rest;
    const char *port = NULL;
    char host[512], portbuf[16], *entry;
    size_t hl, n;

    if (!c->cfg.tls_server_name) {
        c->url_base = strdup(s);
        return c->url_base ? 0 : err_set(err, -ENOMEM, "out of memory");
    }
    if (*hp == '[') {
        host_end = strchr(hp, ']');
        if (!host_end)
            return err_set(err, -EINVAL, "server '%s': unterminated IPv6 address", s);
        host_end++;
    } else {
        host_end = hp + strcspn(hp, ":/");
    }
    hl = (size_t)(host_end - hp);
    if (hl == 0 || hl >= sizeof(host))
        return err_set(err, -EINVAL, "server '%s': bad host", s);
    memcpy(host, hp, hl);
    host[hl] = '\0';
    rest = host_end;
    if (*rest == ':') {
        port = rest + 1;
        rest = port + strcspn(port, "/");
        n = (size_t)(rest - port);
        if (n == 0 || n >= sizeof(portbuf))
            return err_set(err, -EINVAL, "server '%s': bad port", s);
        memcpy(portbuf, port, n);
        portbuf[n] = '\0';
    } else {
        snprintf(portbuf, sizeof(portbuf), "%s", strncmp(s, "https", 5) ? "80" : "443");
    }
    c->url_base = buf_fmt("%.*s%s:%s%s", (int)(hp - s), s, c->cfg.tls_server_name, portbuf, rest);
    if (!c->url_base)
        return err_set(err, -ENOMEM, "out of memory");
    /* a long tls-server-name would not fit a fixed buffer: the entry is formatted whole */
    entry = buf_fmt("%s:%s:%s:%s", c->cfg.tls_server_name, portbuf, host, portbuf);
    c->connect_to = entry ? kube_curl.slist_append(NULL, entry) : NULL;
    free(entry);
    return c->connect_to ? 0 : err_set(err, -ENOMEM, "out of memory");
}

/* client_exec_first runs the exec plugin once, before the first request: its token (and any
 * client certificate, which is used for the client's life) replace the kubeconfig's. */
static int client_exec_first(struct kube_client *c, struct err *err)
{
    struct kube_exec_cred cr;
    int rc = kube_exec_run(&c->cfg, &cr, err);

    if (rc)
        return rc;
    kube_client_wipe_free(c->cfg.token);
    c->cfg.token = cr.token;
    cr.token = NULL;
    if (cr.cert_pem) {
        free(c->cfg.cert_pem);
        kube_client_wipe_free(c->cfg.key_pem);
        c->cfg.cert_pem = cr.cert_pem;
        c->cfg.cert_len = cr.cert_len;
        c->cfg.key_pem = cr.key_pem;
        c->cfg.key_len = cr.key_len;
        cr.cert_pem = cr.key_pem = NULL;
    }
    c->exec_expiry = cr.expiry;
    kube_exec_cred_release(&cr);
    return 0;
}

int kube_client_new(const struct kube_client_opts *o, struct kube_client **out, struct err *err)
{
    struct kube_client *c;
    int rc;

    *out = NULL;
    err_clear(err);
    /* libcurl is loaded on first use, not linked: see curl_dl.h. */
    rc = kube_curl_load(err);
    if (rc)
        return rc;
    c = calloc(1, sizeof(*c));
    if (!c)
        return err_set(err, -ENOMEM, "out of memory");
    if (pthread_mutex_init(&c->lock, NULL)) {
        free(c);
        return err_set(err, -ENOMEM, "cannot create a mutex");
    }
    if (pthread_cond_init(&c->conn_cv, NULL)) {
        pthread_mutex_destroy(&c->lock);
        free(c);
        return err_set(err, -ENOMEM, "cannot create a condition variable");
    }
    rc = kube_config_load(o ? o->kubeconfig : NULL, o ? o->context : NULL, &c->cfg, err);
    if (!rc && c->cfg.exec)
        rc = client_exec_first(c, err);
    if (rc)
        goto out;
    c->user_agent = strdup(o && o->user_agent ? o->user_agent : "gpulabel (linux)");
    c->token = c->cfg.token ? strdup(c->cfg.token) : NULL;
    if (!c->user_agent || (c->cfg.token && !c->token)) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    if (http1_value_bad(c->user_agent)) {
        rc = err_set(err, -EINVAL, "user agent holds a control character");
        goto out;
    }
    c->token_gen = 1;
    c->ca_gen = 1;
    c->token_read_at = mono_now();
    c->token_period =
        o && o->token_refresh_ms > 0 ? (double)o->token_refresh_ms / 1000 : CLIENT_TOKEN_PERIOD;
    c->ca_period = o && o->ca_refresh_ms > 0 ? (double)o->ca_refresh_ms / 1000 : CLIENT_CA_PERIOD;
    c->ca_read_at = mono_now();
    if (c->cfg.ca_pem) {
        c->ca_pem = malloc(c->cfg.ca_len + 1);
        if (!c->ca_pem) {
            rc = err_set(err, -ENOMEM, "out of memory");
            goto out;
        }
        memcpy(c->ca_pem, c->cfg.ca_pem, c->cfg.ca_len + 1);
        c->ca_len = c->cfg.ca_len;
    }
    c->timeout_ms = o && o->timeout_ms > 0 ? o->timeout_ms : CLIENT_DEFAULT_TIMEOUT_MS;
    c->max_body = o && o->max_body ? o->max_body : KUBE_CLIENT_MAX_BODY;
    c->deadline = o && o->deadline > 0 ? o->deadline : 0;
    c->max_retries = o && o->max_retries > 0 ? o->max_retries : 0;
    c->qps = o && o->qps > 0 ? o->qps : 0;
    c->burst = o && o->burst > 1 ? o->burst : 1;
    c->bucket = c->burst;
    c->bucket_at = mono_now();
    c->max_conns = o && o->max_connections > 0 ? o->max_connections : 0;
    rc = client_route(c, err);
out:
    if (rc) {
        kube_client_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void kube_client_free(struct kube_client *c)
{
    size_t i;

    if (!c)
        return;
    for (i = 0; i < c->npool; i++)
        kube_curl.easy_cleanup(c->pool[i]);
    kube_client_wipe_free(c->token);
    free(c->ca_pem);
    kube_config_release(&c->cfg);
    free(c->user_agent);
    free(c->url_base);
    kube_curl.slist_free_all(c->connect_to);
    pthread_cond_destroy(&c->conn_cv);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

const char *kube_client_server(const struct kube_client *c)
{
    return c->cfg.server;
}

const char *kube_client_namespace(const struct kube_client *c)
{
    return c->cfg.namespace ? c->cfg.namespace : "default";
}

void kube_response_release(struct kube_response *r)
{
    if (!r)
        return;
    buf_release(&r->body);
    json_decref(r->json);
    r->json = NULL;
    r->status = 0;
}

size_t kube_client_max_body(uint64_t memory_limit)
{
    uint64_t q = memory_limit / 4;

    if (!memory_limit || q >= KUBE_CLIENT_MAX_BODY)
        return KUBE_CLIENT_MAX_BODY;
    return q < ((uint64_t)1 << 20) ? (size_t)1 << 20 : (size_t)q;
}

void kube_list_budget_init(struct kube_list_budget *b, const struct kube_client *c,
                           volatile sig_atomic_t *stop)
{
    memset(b, 0, sizeof(*b));
    b->stop = stop;
    b->seconds = KUBE_LIST_DEADLINE_S;
    b->deadline = mono_now() + b->seconds;
    b->pages_left = b->max_pages = KUBE_LIST_MAX_PAGES;
    b->bytes_left = b->max_bytes = c->max_body > SIZE_MAX / 4 ? SIZE_MAX : c->max_body * 4;
}

bool kube_err_transient(const struct err *e)
{
    if (!e)
        return false;
    if (e->http_status)
        return e->http_status == 409 || e->http_status == 429 || e->http_status >= 500;
    switch (e->code) {
    case -ECONNREFUSED:
    case -ECONNRESET:
    case -ETIMEDOUT:
    case -EHOSTUNREACH:
    case -EPROTO:
        return true;
    default:
        return false;
    }
}

const char *kube_path_escape(const char *s, char *buf, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;

    if (!size)
        return NULL;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                     (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' || ch == '~';

        if (n + (plain ? 1 : 3) >= size) {
            buf[0] = '\0';
            return NULL;
        }
        if (plain) {
            buf[n++] = (char)ch;
        } else {
            buf[n++] = '%';
            buf[n++] = hex[ch >> 4];
            buf[n++] = hex[ch & 15];
        }
    }
    buf[n] = '\0';
    return buf;
}

/* ---- pool, rate limit, token ---------------------------------------------------------- */

/* client_handle_take takes a handle (with the live connection it caches) from the pool, or a
 * new one; a request (counted) waits while max_conns requests hold one. */
static CURL *client_handle_take(struct kube_client *c, bool counted)
{
    CURL *h = NULL;

    pthread_mutex_lock(&c->lock);
    if (counted && c->max_conns) {
        while (c->busy >= (unsigned)c->max_conns)
            pthread_cond_wait(&c->conn_cv, &c->lock);
        c->busy++;
    }
    if (c->npool)
        h = c->pool[--c->npool];
    pthread_mutex_unlock(&c->lock);
    if (!h)
        h = kube_curl.easy_init();
    if (!h && counted && c->max_conns) {
        pthread_mutex_lock(&c->lock);
        c->busy--;
        pthread_cond_signal(&c->conn_cv);
        pthread_mutex_unlock(&c->lock);
    }
    return h;
}

/* client_handle_put returns a handle (and the live connection it caches) to the pool. */
static void client_handle_put(struct kube_client *c, CURL *h, bool counted)
{
    if (!h)
        return;
    pthread_mutex_lock(&c->lock);
    if (counted && c->max_conns) {
        c->busy--;
        pthread_cond_signal(&c->conn_cv);
    }
    if (c->npool < KUBE_CLIENT_POOL_MAX) {
        c->pool[c->npool++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    if (h)
        kube_curl.easy_cleanup(h);
}

double kube_client_reserve(struct kube_client *c)
{
    double now, at;

    if (c->qps <= 0)
        return 0;
    pthread_mutex_lock(&c->lock);
    now = mono_now();
    c->bucket += (now - c->bucket_at) * c->qps;
    if (c->bucket > c->burst)
        c->bucket = c->burst;
    c->bucket_at = now;
    c->bucket -= 1;
    at = c->bucket < 0 ? now - c->bucket / c->qps : 0;
    pthread_mutex_unlock(&c->lock);
    return at;
}

/* client_throttle blocks until the token bucket allows one more request. Each caller
 * reserves its slot under the lock, then sleeps outside it until the slot's time, so waits
 * are served in order. */
static void client_throttle(struct kube_client *c)
{
    mono_sleep_until(kube_client_reserve(c));
}

void kube_client_wipe_free(char *s)
{
    if (s) {
        memset(s, 0, strlen(s));
        free(s);
    }
}

/* client_token_refresh_locked re-reads the token file when the copy in memory is older than
 * the token period (60 s), or always when force is set (after a 401), and moves the token
 * generation on when the token changed. A failed read keeps the last good token, like
 * client-go's cached file token source. Caller holds c->lock. */
static void client_token_refresh_locked(struct kube_client *c, bool force)
{
    double now = mono_now();
    char *fresh = NULL;

    if (c->cfg.exec) {
        /* an exec plugin's token is good until its expirationTimestamp or a 401, as in
         * client-go; a failed run keeps the token we have */
        struct kube_exec_cred cr;
        struct timespec ts;

        /* clock_gettime, not time(): time() reads the seconds of the last tick and can lag
         * the real clock across a second boundary, keeping an expired credential a few
         * milliseconds more than anything else on the machine believes */
        clock_gettime(CLOCK_REALTIME, &ts);
        if (!force && (!c->exec_expiry || ts.tv_sec < c->exec_expiry))
            return;
        if (kube_exec_run(&c->cfg, &cr, NULL))
            return;
        c->exec_expiry = cr.expiry;
        if (cr.token && (!c->token || strcmp(c->token, cr.token))) {
            kube_client_wipe_free(c->token);
            c->token = cr.token;
            cr.token = NULL;
            if (++c->token_gen == 0)
                c->token_gen = 1;
        }
        kube_exec_cred_release(&cr);
        return;
    }
    if (!c->cfg.token_file || (!force && now - c->token_read_at < c->token_period))
        return;
    c->token_read_at = now;
    if (kube_token_read(c->cfg.token_file, &fresh, NULL))
        return;
    if (c->token && !strcmp(c->token, fresh)) {
        kube_client_wipe_free(fresh);
        return;
    }
    kube_client_wipe_free(c->token);
    c->token = fresh;
    if (++c->token_gen == 0)
        c->token_gen = 1;
}

int kube_client_auth_line(struct kube_client *c, bool force, unsigned *gen, char **line)
{
    int rc = 0;

    pthread_mutex_lock(&c->lock);
    client_token_refresh_locked(c, force);
    if (*gen != c->token_gen) {
        kube_client_wipe_free(*line);
        *line = NULL;
        *gen = c->token_gen;
        rc = 1;
        if (c->token) {
            *line = buf_fmt("Authorization: Bearer %s", c->token);
            if (!*line) {
                *gen = 0;
                rc = -ENOMEM;
            }
        }
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

bool kube_client_retry_401(struct kube_client *c, long status, bool *retried, unsigned *gen,
                           char **line)
{
    if (status != 401 || (!c->cfg.token_file && !c->cfg.exec) || *retried)
        return false;
    /* the token may have rotated under us: re-read it now, and try once more if it changed */
    *retried = true;
    return kube_client_auth_line(c, true, gen, line) == 1;
}

/* client_retry_wait_s: an answer of status with a Retry-After of retry_after seconds (-1: none)
 * is to be sent again (*retries of c->max_retries used): how long to wait first, or -1 for
 * not again. As client-go's checkWait: 429 and every 5xx, only with the header. */
static double client_retry_wait_s(const struct kube_client *c, long status, int retry_after,
                                  int *retries)
{
    double wait = retry_after, cap = (double)c->timeout_ms / 1000;

    if (*retries >= c->max_retries || retry_after < 0 || (status != 429 && status < 500))
        return -1;
    ++*retries;
    return wait < cap ? wait : cap;
}

/* ---- one transfer --------------------------------------------------------------------- */

/* A list read as it arrives (kube_client_get_stream): the splitter, and what its parts go
 * through. */
struct client_split {
    struct kube_list_split ls;
    const char *path;
    const char *const *strip;
    kube_json_fn fn;
    void *ud;
};

struct client_xfer {
    struct buf *body; /* where 2xx (and error) bodies go */
    bool too_big;
    CURL *h;
    struct kube_list_budget *budget; /* a page of a list, or NULL */
    size_t got;                      /* body bytes so far */
    bool over_budget;                /* the list's pages passed budget->bytes_left */
    bool stopped;                    /* *budget->stop was seen */
    struct client_split *split;      /* a 2xx body goes there instead (kube_client_get_stream) */
    long status;                     /* of the answer, read at its first bytes when split */
    int retry_after;                 /* Retry-After header in seconds, -1 when absent */
    char errbuf[CURL_ERROR_SIZE];
    struct curl_slist *headers;
};

static size_t client_on_body(char *data, size_t size, size_t n, void *ud)
{
    struct client_xfer *x = ud;

    x->got += size * n;
    if (x->budget && x->got > x->budget->bytes_left) {
        x->over_budget = true;
        return 0;
    }
    if (x->split && !x->status)
        kube_curl.easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &x->status);
    if (x->split && x->status >= 200 && x->status <= 299)
        return kube_list_split_feed(&x->split->ls, data, size * n) ? 0 : size * n;
    if (buf_append(x->body, data, size * n)) {
        x->too_big = true;
        return 0;
    }
    return size * n;
}

/* Called by libcurl about once a second even when nothing arrives: a page of a list ends when
 * its budget's stop flag is set. */
static int client_on_progress(void *ud, curl_off_t dlt, curl_off_t dln, curl_off_t ult,
                              curl_off_t uln)
{
    struct client_xfer *x = ud;

    (void)dlt, (void)dln, (void)ult, (void)uln;
    if (x->budget && x->budget->stop && *x->budget->stop) {
        x->stopped = true;
        return 1;
    }
    return 0;
}

/* client_retry_after reads a "Retry-After: N" header line; -1 for anything else */
static int client_retry_after(const char *data, size_t len)
{
    char tmp[32];
    size_t i = 12, k = 0;

    if (len <= 12 || strncasecmp(data, "Retry-After:", 12))
        return -1;
    while (i < len && (data[i] == ' ' || data[i] == '\t'))
        i++;
    while (i < len && k < sizeof(tmp) - 1 && data[i] >= '0' && data[i] <= '9')
        tmp[k++] = data[i++];
    tmp[k] = '\0';
    return k && k < 9 ? atoi(tmp) : -1;
}

size_t kube_client_on_header(char *data, size_t size, size_t n, void *retry_after)
{
    int ra = client_retry_after(data, size * n);

    if (ra >= 0)
        *(int *)retry_after = ra;
    return size * n;
}

static void client_xfer_release(struct client_xfer *x)
{
    kube_curl.slist_free_all(x->headers);
    x->headers = NULL;
}

/* The CA bundle is handed over as a blob: the cluster CA rotates (kube-root-ca.crt), so a
 * file CA is re-read when the copy in memory is older than the CA period; a failed or
 * implausible read keeps the bundle we have. libcurl copies the blob, so the lock covers
 * only the swap and the copy. */
void kube_client_ca_apply(struct kube_client *c, CURL *h, unsigned *gen)
{
    double now = mono_now();

    pthread_mutex_lock(&c->lock);
    if (c->cfg.ca_file && now - c->ca_read_at >= c->ca_period) {
        struct buf b = BUF_INIT(CLIENT_CA_MAX);

        c->ca_read_at = now;
        if (!buf_read_file(c->cfg.ca_file, &b) && strstr(b.data, "CERTIFICATE") &&
            (b.len != c->ca_len || !c->ca_pem || memcmp(b.data, c->ca_pem, b.len))) {
            size_t n = b.len;
            char *fresh = buf_take(&b);

            if (fresh) {
                free(c->ca_pem);
                c->ca_pem = fresh;
                c->ca_len = n;
                if (++c->ca_gen == 0)
                    c->ca_gen = 1;
            }
        }
        buf_release(&b);
    }
    if (c->ca_pem && (!gen || *gen != c->ca_gen)) {
        struct curl_blob blob = {c->ca_pem, c->ca_len, CURL_BLOB_COPY};

        kube_curl.easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
    }
    if (gen)
        *gen = c->ca_gen;
    pthread_mutex_unlock(&c->lock);
}

void kube_client_handle_setup(struct kube_client *c, CURL *h, char *errbuf)
{
    kube_curl.easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
    kube_curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    kube_curl.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    kube_curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    kube_curl.easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    /* libcurl allocates its upload buffer (64 KiB by default) for every request with a body;
     * our bodies are small JSON documents: the smallest it takes (16 KiB) */
    kube_curl.easy_setopt(h, CURLOPT_UPLOAD_BUFFERSIZE, 16384L);
    kube_curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, CLIENT_CONNECT_TIMEOUT_MS);
    kube_curl.easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    kube_curl.easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
    kube_curl.easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 15L);
    kube_curl.easy_setopt(h, CURLOPT_SSL_VERIFYPEER, c->cfg.insecure ? 0L : 1L);
    kube_curl.easy_setopt(h, CURLOPT_SSL_VERIFYHOST, c->cfg.insecure ? 0L : 2L);
    if (c->cfg.cert_pem) {
        struct curl_blob cert = {c->cfg.cert_pem, c->cfg.cert_len, CURL_BLOB_COPY};
        struct curl_blob key = {c->cfg.key_pem, c->cfg.key_len, CURL_BLOB_COPY};

        kube_curl.easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
        kube_curl.easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
        kube_curl.easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
        kube_curl.easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (c->connect_to)
        kube_curl.easy_setopt(h, CURLOPT_CONNECT_TO, c->connect_to);
    if (c->cfg.proxy_url)
        kube_curl.easy_setopt(h, CURLOPT_PROXY, c->cfg.proxy_url);
}

/* client_prepare resets h and sets everything common to requests and watches. */
static int client_prepare(struct kube_client *c, CURL *h, const char *path, const char *auth,
                          const char *content_type, struct client_xfer *x, struct err *err)
{
    struct buf url = BUF_INIT(1 << 20);
    struct curl_slist *l;
    int rc = 0;

    kube_curl.easy_reset(h);
    x->retry_after = -1;
    x->errbuf[0] = '\0';
    if (buf_puts(&url, c->url_base) || buf_puts(&url, path)) {
        rc = err_set(err, -E2BIG, "request path too long");
        goto out;
    }
    if (content_type && http1_value_bad(content_type)) {
        rc = err_set(err, -EINVAL, "content type holds a control character");
        goto out;
    }
    l = kube_curl.slist_append(NULL, "Accept: application/json");
    x->headers = l;
    if (l && content_type) {
        char ct[256];

        snprintf(ct, sizeof(ct), "Content-Type: %s", content_type);
        l = kube_curl.slist_append(x->headers, ct);
        if (l)
            x->headers = l;
    }
    if (l)
        l = kube_curl.slist_append(x->headers, "Expect:");
    if (l && auth)
        l = kube_curl.slist_append(x->headers, auth);
    if (!l) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    kube_curl.easy_setopt(h, CURLOPT_URL, url.data);
    kube_curl.easy_setopt(h, CURLOPT_HTTPHEADER, x->headers);
    kube_client_handle_setup(c, h, x->errbuf);
    kube_client_ca_apply(c, h, NULL);
    kube_curl.easy_setopt(h, CURLOPT_HEADERFUNCTION, kube_client_on_header);
    kube_curl.easy_setopt(h, CURLOPT_HEADERDATA, &x->retry_after);
out:
    buf_release(&url);
    return rc;
}

int kube_client_transport_err(struct kube_client *c, CURLcode cc, const char *errbuf,
                              const char *method, const char *path, long timeout_ms,
                              struct err *err)
{
    const char *why = errbuf[0] ? errbuf : kube_curl.easy_strerror(cc);
    const char *server = c->cfg.server;

    switch (cc) {
    case CURLE_COULDNT_CONNECT:
        return err_set(err, -ECONNREFUSED, "cannot connect to API server %s: %s", server, why);
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return err_set(err, -EHOSTUNREACH, "cannot resolve API server %s: %s", server, why);
    case CURLE_OPERATION_TIMEDOUT:
        return err_set(err, -ETIMEDOUT, "%s %s on %s timed out after %ld ms: %s", method, path,
                       server, timeout_ms, why);
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_CRL_BADFILE:
        /* the next attempt meets the same certificate: not worth retrying */
        return err_set(err, -EKEYREJECTED, "TLS with API server %s failed: %s", server, why);
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_USE_SSL_FAILED:
        return err_set(err, -EPROTO, "TLS with API server %s failed: %s", server, why);
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
        return err_set(err, -ECONNRESET, "%s %s on %s: connection lost: %s", method, path, server,
                       why);
    case CURLE_OUT_OF_MEMORY:
        return err_set(err, -ENOMEM, "out of memory");
    default:
        return err_set(err, -EPROTO, "%s %s on %s failed: %s", method, path, server, why);
    }
}

static int client_status_code(long status, const char *reason)
{
    switch (status) {
    case 400:
    case 415:
    case 422:
        return -EINVAL;
    case 401:
        return -EACCES;
    case 403:
        return -EPERM;
    case 404:
        return -ENOENT;
    case 409:
        return reason && !strcmp(reason, "AlreadyExists") ? -EEXIST : -EBUSY;
    case 410:
        return -ESTALE;
    case 429:
    case 503:
        return -EAGAIN;
    default:
        return -EIO;
    }
}

int kube_client_http_err(long status, const json_t *js, const struct buf *body, int retry_after,
                         struct err *err)
{
    const char *msg = json_string_value(json_object_get(js, "message"));
    const char *reason = json_string_value(json_object_get(js, "reason"));
    json_t *ra = json_object_get(json_object_get(js, "details"), "retryAfterSeconds");
    int code = client_status_code(status, reason);

    if (msg && msg[0])
        err_set(err, code, "%s", msg);
    else if (body->len)
        err_set(err, code, "HTTP %ld from the API server: %.200s", status, body->data);
    else
        err_set(err, code, "HTTP %ld from the API server", status);
    if (err) {
        err->http_status = (int)status;
        snprintf(err->reason, sizeof(err->reason), "%s", reason ? reason : "");
        err->retry_after =
            retry_after >= 0 ? retry_after
            : json_is_integer(ra) && json_integer_value(ra) >= 0 && json_integer_value(ra) < 86400
                ? (int)json_integer_value(ra)
                : -1;
    }
    return code;
}

json_t *kube_client_parse_json(const struct buf *b)
{
    size_t i = 0;

    while (i < b->len && strchr(" \t\r\n", b->data[i]))
        i++;
    if (i == b->len || (b->data[i] != '{' && b->data[i] != '['))
        return NULL;
    return json_loadb(b->data, b->len, 0, NULL);
}

/* client_request sends one request; a 2xx body is parsed into resp->json, unless it goes to
 * split as it arrives (kube_client_get_stream). */
/* client_connected: the transfer on h got its TCP connection */
static bool client_connected(CURL *h)
{
    curl_off_t t = 0;

    return !kube_curl.easy_getinfo(h, CURLINFO_CONNECT_TIME_T, &t) && t > 0;
}

/* the connect timeout a request of timeout_ms had */
static long client_connect_timeout(const struct kube_client *c, long timeout_ms)
{
    (void)c;
    return timeout_ms < CLIENT_CONNECT_TIMEOUT_MS ? timeout_ms : CLIENT_CONNECT_TIMEOUT_MS;
}

/* client_budget_check says why b allows no more page, 0 when it does */
static int client_budget_check(const struct kube_list_budget *b, const char *path, struct err *err)
{
    if (!b)
        return 0;
    if (b->stop && *b->stop)
        return err_set(err, -ECANCELED, "GET %s: stopped", path);
    if (!b->pages_left)
        return err_set(err, -E2BIG, "GET %s: the list has more than %zu pages", path, b->max_pages);
    if (mono_now() >= b->deadline)
        return err_set(err, -ETIMEDOUT, "GET %s: the list was not read within %.0f s", path,
                       b->seconds);
    return 0;
}

static int client_request(struct kube_client *c, const char *method, const char *path,
                          const char *content_type, const char *body, size_t len,
                          struct kube_response *resp, struct client_split *split,
                          struct kube_list_budget *b, struct err *err)
{
    struct client_xfer x;
    CURL *h = NULL;
    char *auth = NULL;
    unsigned gen = 0;
    bool retried = false;
    CURLcode cc;
    int rc = 0, retries = 0;
    long timeout_ms;
    double wait;

    memset(&x, 0, sizeof(x));
    resp->status = 0;
    resp->json = NULL;
    resp->wait_s = 0;
    buf_init(&resp->body, c->max_body);
    err_clear(err);
    if (!path || path[0] != '/')
        return err_set(err, -EINVAL, "request path must start with '/'");
    if ((rc = client_budget_check(b, path, err)))
        return rc;
    h = client_handle_take(c, true);
    if (!h)
        return err_set(err, -ENOMEM, "cannot create a libcurl handle");
    if (kube_client_auth_line(c, false, &gen, &auth) < 0) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (;;) {
        client_throttle(c);
        client_xfer_release(&x);
        buf_reset(&resp->body);
        x.body = &resp->body;
        x.too_big = false;
        x.h = h;
        x.split = split;
        x.status = 0;
        x.budget = b;
        x.got = 0;
        x.over_budget = x.stopped = false;
        if (split)
            kube_list_split_reset(&split->ls);
        rc = client_prepare(c, h, path, auth, content_type, &x, err);
        if (rc)
            goto out;
        /* the whole answer within the timeout (a page of a list: within its deadline too),
         * however slowly the server trickles it */
        timeout_ms = c->timeout_ms;
        if (c->deadline) {
            double left = c->deadline - mono_now();

            if (left <= 0) {
                rc = err_set(err, -ETIMEDOUT, "%s %s on %s: out of time", method, path,
                             c->cfg.server);
                goto out;
            }
            if (left * 1000 < (double)timeout_ms)
                timeout_ms = left > 0.001 ? (long)(left * 1000) : 1L;
            if (timeout_ms < CLIENT_CONNECT_TIMEOUT_MS)
                kube_curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
        }
        if (b) {
            double left = b->deadline - mono_now();

            if (left * 1000 < (double)timeout_ms)
                timeout_ms = left > 0.001 ? (long)(left * 1000) : 1L;
            kube_curl.easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
            kube_curl.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, client_on_progress);
            kube_curl.easy_setopt(h, CURLOPT_XFERINFODATA, &x);
        }
        kube_curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
        /* large lists come compressed when asked (the cap applies to the decoded body) */
        if (!c->cfg.disable_compression)
            kube_curl.easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "gzip");
        kube_curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, client_on_body);
        kube_curl.easy_setopt(h, CURLOPT_WRITEDATA, &x);
        if (!strcmp(method, "POST")) {
            kube_curl.easy_setopt(h, CURLOPT_POST, 1L);
        } else if (strcmp(method, "GET")) {
            kube_curl.easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
        }
        if (body || !strcmp(method, "POST")) {
            kube_curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : 0));
            kube_curl.easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
        }
        cc = kube_curl.easy_perform(h);
        if (x.stopped) {
            rc = err_set(err, -ECANCELED, "%s %s: stopped", method, path);
            goto out;
        }
        if (cc == CURLE_WRITE_ERROR && x.over_budget) {
            rc = err_set(err, -E2BIG, "%s %s: the list is larger than %zu MiB in all", method, path,
                         b->max_bytes >> 20);
            goto out;
        }
        if (cc == CURLE_WRITE_ERROR && split && split->ls.rc) {
            rc = split->ls.rc; /* what the handler or the splitter said, in err */
            goto out;
        }
        if (cc == CURLE_WRITE_ERROR && x.too_big) {
            rc = err_set(err, -E2BIG, "%s %s: response larger than %zu MiB", method, path,
                         c->max_body >> 20);
            goto out;
        }
        if (cc == CURLE_OPERATION_TIMEDOUT && b && mono_now() >= b->deadline) {
            rc = err_set(err, -ETIMEDOUT, "%s %s: the list was not read within %.0f s", method,
                         path, b->seconds);
            goto out;
        }
        if (cc == CURLE_OPERATION_TIMEDOUT && !client_connected(h)) {
            /* a server that drops packets: say so rather than name a request never sent */
            rc =
                err_set(err, -ETIMEDOUT, "cannot connect to API server %s: no answer within %ld ms",
                        c->cfg.server, client_connect_timeout(c, timeout_ms));
            goto out;
        }
        if (cc != CURLE_OK) {
            rc = kube_client_transport_err(c, cc, x.errbuf, method, path, timeout_ms, err);
            goto out;
        }
        kube_curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
        {
            curl_off_t sent = 0, first = 0;

            kube_curl.easy_getinfo(h, CURLINFO_PRETRANSFER_TIME_T, &sent);
            kube_curl.easy_getinfo(h, CURLINFO_STARTTRANSFER_TIME_T, &first);
            resp->wait_s = first > sent ? (double)(first - sent) / 1e6 : 0;
        }
        if (kube_client_retry_401(c, resp->status, &retried, &gen, &auth))
            continue;
        wait = client_retry_wait_s(c, resp->status, x.retry_after, &retries);
        if (wait >= 0) {
            /* the connection is free for other requests while this one waits */
            kube_curl.easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
            kube_curl.easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
            client_handle_put(c, h, true);
            mono_sleep_until(mono_now() + wait);
            h = client_handle_take(c, true);
            if (!h) {
                rc = err_set(err, -ENOMEM, "cannot create a libcurl handle");
                goto out;
            }
            continue;
        }
        break;
    }
    if (!split || resp->status < 200 || resp->status > 299)
        resp->json = kube_client_parse_json(&resp->body);
    if (resp->status < 200 || resp->status > 299)
        rc = kube_client_http_err(resp->status, resp->json, &resp->body, x.retry_after, err);
    else if (split)
        rc = kube_list_split_end(&split->ls);
    if (!rc && b) {
        b->pages_left--;
        b->bytes_left -= x.got;
    }
out:
    client_xfer_release(&x);
    kube_client_wipe_free(auth);
    if (h) {
        /* drop the pointers into freed memory (body, header list with the token) before the
         * handle goes back to the pool */
        kube_curl.easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
        kube_curl.easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
        client_handle_put(c, h, true);
    }
    return rc;
}

int kube_client_request(struct kube_client *c, const char *method, const char *path,
                        const char *content_type, const char *body, size_t len,
                        struct kube_response *resp, struct err *err)
{
    struct kube_response scratch;
    int rc;

    if (resp)
        return client_request(c, method, path, content_type, body, len, resp, NULL, NULL, err);
    rc = client_request(c, method, path, content_type, body, len, &scratch, NULL, NULL, err);
    kube_response_release(&scratch);
    return rc;
}

/* ---- watch ---------------------------------------------------------------------------- */

struct client_watch {
    CURL *h;
    kube_watch_fn fn;
    void *ud;
    volatile sig_atomic_t *stop;
    long status;
    struct buf line;    /* partial event line (capped) */
    struct buf errbody; /* body of a non-200 answer (capped, truncated silently) */
    unsigned long events;
    double last_wake; /* when the stream last woke the thread (client_watch_gather) */
    double last_end;  /* when the previous piece of the stream was handled */
    int fn_rc;        /* what fn returned when it asked to stop */
    int bad;          /* our own failure (line cap, malformed event) */
    bool stopped;     /* *stop was seen */
    struct err *err;
};

/* Watch events are parsed into the thread's jansson arena (kube/jalloc.h). jansson allocates
 * every value of a document separately (about 50 blocks for a 600-byte pod event) and the event
 * is freed right after its callback; in the serve benchmark malloc and free were a quarter of
 * the pod informer's CPU. The arena is on while an event is parsed, off while its callback
 * runs (what the callback builds goes to malloc), and rewound after the callback, hence
 * kube_watch_fn's contract: the object lives only for the call. */
#define WATCH_ARENA_MIN ((size_t)64 << 10)
#define WATCH_ARENA_MAX ((size_t)16 << 20)
#define WATCH_ARENA_PER_BYTE 16 /* arena bytes per byte of event text */

/* watch_arena_fit makes the calling thread's arena large enough for an event of n bytes (no
 * event object is alive when it is called). */
static void watch_arena_fit(size_t n)
{
    size_t want =
        n < WATCH_ARENA_MAX / WATCH_ARENA_PER_BYTE ? n * WATCH_ARENA_PER_BYTE : WATCH_ARENA_MAX;

    kube_jalloc_fit(want < WATCH_ARENA_MIN ? WATCH_ARENA_MIN : want);
}

/* client_parse_doc strips, parses and hands to fn the JSON text in b (its first from bytes
 * are kept as they are), in the thread's arena; b is left stripped. */
static int client_parse_doc(struct buf *b, size_t from, const char *path, const char *const *strip,
                            kube_json_fn fn, void *ud, struct err *err)
{
    struct kube_jalloc_mark m;
    json_error_t je;
    json_t *doc;
    int rc;

    for (; strip && *strip; strip++)
        kube_json_strip_member(b, from, *strip);
    /* the same per-thread arena as a watch event's: a page of a list is hundreds of objects,
     * each a few dozen jansson blocks, all dropped together once fn has read them */
    watch_arena_fit(b->len);
    kube_jalloc_mark(&m);
    kube_jalloc_on(true);
    doc = kube_json_loadb(b->data, b->len);
    if (!doc) {
        /* what that reader leaves, jansson reads as JSON (or tells why it is not) */
        watch_arena_fit(b->len); /* empty again */
        kube_jalloc_on(true);
        doc = json_loadb(b->data ? b->data : "", b->len, 0, &je);
    }
    kube_jalloc_on(false);
    if (!doc)
        return err_set(err, -EPROTO, "GET %s: the answer is not JSON: %s", path, je.text);
    rc = fn(ud, doc);
    /* a tree all in the arena goes with its next fit, without json_delete's walk (8 % of a
     * large list's CPU); blocks that spilled to malloc must be freed with it */
    if (kube_jalloc_spilled(&m))
        json_decref(doc);
    /* the arena stays for the next page: mapping it anew would fault in every page of it again
     * (a quarter of a 50,000-pod list's CPU); the caller frees it (kube_jalloc_release) */
    return rc;
}

/* client_split_part: a part of a list, stripped, parsed and handed to the caller's fn */
static int client_split_part(void *ud, struct buf *doc, size_t head_len)
{
    struct client_split *s = ud;

    return client_parse_doc(doc, head_len, s->path, s->strip, s->fn, s->ud, s->ls.err);
}

int kube_client_list_page(struct kube_client *c, const char *path, struct kube_list_budget *b,
                          struct kube_response *resp, struct err *err)
{
    return client_request(c, "GET", path, NULL, NULL, 0, resp, NULL, b, err);
}

int kube_client_get_stream(struct kube_client *c, const char *path, const char *const *strip,
                           size_t batch, kube_json_fn fn, void *ud, struct kube_list_budget *b,
                           struct err *err)
{
    struct client_split s = {.path = path, .strip = strip, .fn = fn, .ud = ud};
    struct kube_list_budget one;
    struct kube_response r;
    char what[4200];
    int rc;

    if (!b) {
        kube_list_budget_init(&one, c, NULL);
        b = &one;
    }
    snprintf(what, sizeof(what), "GET %s", path);
    kube_list_split_init(&s.ls, batch, c->max_body, what, client_split_part, &s, err);
    rc = client_request(c, "GET", path, NULL, NULL, 0, &r, &s, b, err);
    kube_response_release(&r);
    kube_list_split_release(&s.ls);
    return rc;
}

int kube_watch_event_decode(const char *p, size_t n, json_t **ev, const char **type,
                            json_t **object, struct err *err)
{
    json_error_t je;

    *ev = NULL;
    *type = NULL;
    *object = NULL;
    while (n && (p[n - 1] == '\r' || p[n - 1] == ' '))
        n--;
    if (!n)
        return 1;
    *ev = json_loadb(p, n, 0, &je);
    *type = json_string_value(json_object_get(*ev, "type"));
    *object = json_object_get(*ev, "object");
    if (!*type || !json_is_object(*object)) {
        err_set(err, -EPROTO, "malformed watch event: %s",
                *ev ? "needs a string \"type\" and an object \"object\"" : je.text);
        json_decref(*ev);
        *ev = NULL;
        *type = NULL;
        *object = NULL;
        return -EPROTO;
    }
    return 0;
}

int kube_watch_lines_feed(struct buf *line, const char *data, size_t len, kube_watch_line_fn fn,
                          void *ud)
{
    size_t off = 0;
    int rc;

    while (off < len) {
        const char *nl = memchr(data + off, '\n', len - off);
        size_t chunk = nl ? (size_t)(nl - (data + off)) : len - off;

        if (!nl)
            return buf_append(line, data + off, chunk);
        if (line->len) {
            /* the line began in an earlier read */
            if ((rc = buf_append(line, data + off, chunk)))
                return rc;
            rc = fn(ud, line->data, line->len);
            buf_reset(line);
        } else {
            if (line->cap && chunk > line->cap)
                return -E2BIG;
            rc = fn(ud, data + off, chunk);
        }
        if (rc)
            return rc;
        off += chunk + 1;
    }
    return 0;
}

/* client_watch_event parses one line and hands it to fn. Returns 0 to continue. */
static int client_watch_event(void *ud, const char *p, size_t n)
{
    struct client_watch *w = ud;
    json_t *ev, *obj;
    const char *type;
    int r;

    watch_arena_fit(n);
    kube_jalloc_on(true);
    r = kube_watch_event_decode(p, n, &ev, &type, &obj, w->err);
    kube_jalloc_on(false);
    if (r == 1)
        return 0;
    if (r < 0) {
        w->bad = r;
        return -1;
    }
    w->events++;
    r = w->fn(w->ud, type, obj);
    json_decref(ev);
    if (r) {
        w->fn_rc = r;
        return -1;
    }
    return 0;
}

/* client_watch_gather lets a busy stream's events gather: when bytes wake the thread less
 * than CLIENT_WATCH_GATHER_US after the previous wakeup, it waits out the rest of that time
 * before handling them, so one wakeup takes the events of a window, not one each (an event is
 * seen at most that late, and only while events keep coming). Only a wakeup waits: libcurl
 * hands over a TLS stream one record (one event) at a time, going back to poll between them,
 * and pieces that follow the previous one within CLIENT_WATCH_BURST_US were already waiting
 * to be read. Waiting for each of those (as this did) held a backlog of events to one per
 * window: 2,000 pod deletions took 4 to 8 s to reach the cache. */
static unsigned long client_watch_waits;

static void client_watch_gather(struct client_watch *w)
{
    double now = mono_now(), until = w->last_wake + CLIENT_WATCH_GATHER_US / 1e6;

    if (now - w->last_end < CLIENT_WATCH_BURST_US / 1e6)
        return;
    if (until > now) {
        __atomic_add_fetch(&client_watch_waits, 1, __ATOMIC_RELAXED);
        mono_sleep_until(until);
        now = mono_now();
    }
    w->last_wake = now;
}

unsigned long kube_client_watch_waits(void)
{
    return __atomic_load_n(&client_watch_waits, __ATOMIC_RELAXED);
}

static size_t client_watch_on_body(char *data, size_t size, size_t n, void *ud)
{
    struct client_watch *w = ud;
    size_t len = size * n;
    int rc;

    if (w->stop && *w->stop) {
        w->stopped = true;
        return 0;
    }
    if (!w->status)
        kube_curl.easy_getinfo(w->h, CURLINFO_RESPONSE_CODE, &w->status);
    if (w->status != 200) {
        size_t room = KUBE_CLIENT_ERRBODY_MAX - w->errbody.len;

        buf_append(&w->errbody, data, len < room ? len : room);
        return len;
    }
    client_watch_gather(w);
    rc = kube_watch_lines_feed(&w->line, data, len, client_watch_event, w);
    w->last_end = mono_now();
    if (rc == -E2BIG || rc == -ENOMEM) {
        w->bad = rc == -ENOMEM ? err_set(w->err, rc, "out of memory")
                               : err_set(w->err, -E2BIG, "watch event larger than %zu MiB",
                                         w->line.cap >> 20);
        return 0;
    }
    if (rc)
        return 0;
    return len;
}

/* Called by libcurl about once a second even when the stream is idle: the stop check. */
static int client_watch_on_progress(void *ud, curl_off_t dlt, curl_off_t dln, curl_off_t ult,
                                    curl_off_t uln)
{
    struct client_watch *w = ud;

    (void)dlt, (void)dln, (void)ult, (void)uln;
    if (w->stop && *w->stop) {
        w->stopped = true;
        return 1;
    }
    return 0;
}

int kube_client_watch(struct kube_client *c, const char *path, kube_watch_fn fn, void *ud,
                      volatile sig_atomic_t *stop, struct err *err)
{
    struct client_watch w;
    struct client_xfer x;
    char *auth = NULL;
    unsigned gen = 0;
    bool retried = false;
    CURLcode cc;
    int rc = 0;

    memset(&w, 0, sizeof(w));
    memset(&x, 0, sizeof(x));
    buf_init(&w.line, c->max_body < CLIENT_WATCH_LINE_MAX ? c->max_body : CLIENT_WATCH_LINE_MAX);
    buf_init(&w.errbody, KUBE_CLIENT_ERRBODY_MAX + 1);
    w.fn = fn;
    w.ud = ud;
    w.stop = stop;
    w.err = err;
    err_clear(err);
    if (!path || path[0] != '/')
        return err_set(err, -EINVAL, "watch path must start with '/'");
    w.h = client_handle_take(c, false);
    if (!w.h)
        return err_set(err, -ENOMEM, "cannot create a libcurl handle");
    if (kube_client_auth_line(c, false, &gen, &auth) < 0) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (;;) {
        client_throttle(c);
        client_xfer_release(&x);
        buf_reset(&w.line);
        buf_reset(&w.errbody);
        w.status = 0;
        rc = client_prepare(c, w.h, path, auth, NULL, &x, err);
        if (rc)
            goto out;
        kube_curl.easy_setopt(w.h, CURLOPT_WRITEFUNCTION, client_watch_on_body);
        kube_curl.easy_setopt(w.h, CURLOPT_WRITEDATA, &w);
        kube_curl.easy_setopt(w.h, CURLOPT_NOPROGRESS, 0L);
        kube_curl.easy_setopt(w.h, CURLOPT_XFERINFOFUNCTION, client_watch_on_progress);
        kube_curl.easy_setopt(w.h, CURLOPT_XFERINFODATA, &w);
        cc = kube_curl.easy_perform(w.h);
        if (w.fn_rc) {
            rc = w.fn_rc;
            goto out;
        }
        if (w.stopped) {
            rc = 0;
            goto out;
        }
        if (w.bad) {
            rc = w.bad;
            goto out;
        }
        if (cc != CURLE_OK) {
            rc = kube_client_transport_err(c, cc, x.errbuf, "GET", path, 0, err);
            goto out;
        }
        if (!w.status)
            kube_curl.easy_getinfo(w.h, CURLINFO_RESPONSE_CODE, &w.status);
        if (kube_client_retry_401(c, w.status, &retried, &gen, &auth))
            continue;
        break;
    }
    if (w.status != 200) {
        json_t *js = kube_client_parse_json(&w.errbody);

        rc = kube_client_http_err(w.status, js, &w.errbody, x.retry_after, err);
        json_decref(js);
        goto out;
    }
    /* a last event without its newline still counts */
    if (w.line.len && client_watch_event(&w, w.line.data, w.line.len))
        rc = w.fn_rc ? w.fn_rc : w.bad;
out:
    kube_curl.easy_setopt(w.h, CURLOPT_HTTPHEADER, NULL);
    client_xfer_release(&x);
    kube_client_wipe_free(auth);
    buf_release(&w.line);
    buf_release(&w.errbody);
    client_handle_put(c, w.h, false);
    kube_jalloc_release();
    return rc;
}
