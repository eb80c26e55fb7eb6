/* client-int.h - what the REST client (client.c) shares with its asynchronous side (async.c);
 * not for callers.
 *
 * Every field of struct kube_client except those under `lock` is read-only after
 * kube_client_new. The token and the CA bundle carry a generation number that changes each
 * time they are replaced, so a libcurl handle kept between requests (async.c) can tell
 * whether its Authorization header or its CA blob is out of date without copying either. */
#ifndef KUBE_CLIENT_INT_H
#define KUBE_CLIENT_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/err.h"

#include "kube/curl_dl.h"
#include "kube/kubeconfig.h"

#define KUBE_CLIENT_ERRBODY_MAX ((size_t)1 << 20) /* an error answer's body */
#define KUBE_CLIENT_POOL_MAX 16                   /* idle handles kept for the next call */

struct kube_client {
    struct kube_config cfg;
    char *user_agent;
    char *url_base;                /* server URL; host replaced by tls-server-name when set */
    struct curl_slist *connect_to; /* routes tls-server-name to the real host, or NULL */
    long timeout_ms;
    size_t max_body; /* kube_client_opts.max_body */
    double deadline; /* kube_client_opts.deadline */
    int max_retries; /* kube_client_opts.max_retries */
    double qps;
    double burst;

    pthread_mutex_t lock; /* guards everything below */
    CURL *pool[KUBE_CLIENT_POOL_MAX];
    size_t npool;
    char *token;          /* current bearer token, NULL when none */
    unsigned token_gen;   /* changes whenever token does; never 0 */
    double token_read_at; /* monotonic seconds of the last token file read */
    double token_period;
    time_t exec_expiry; /* the exec plugin's token expires then (0: never); wall clock */
    char *ca_pem;       /* current CA bundle (starts as cfg.ca_pem), NULL: system store */
    size_t ca_len;
    unsigned ca_gen; /* changes whenever ca_pem does; never 0 */
    double ca_read_at;
    double ca_period;
    double bucket; /* rate-limit tokens available (may go negative: reservations) */
    double bucket_at;
    int max_conns;          /* kube_client_opts.max_connections */
    unsigned busy;          /* requests holding a handle, when max_conns */
    pthread_cond_t conn_cv; /* signalled when one ends */
};

/* kube_client_watch_waits counts, for the whole process, the times a watch waited for its
 * events to gather (kube_client_watch's window): the tests check that events already waiting
 * to be read are handled without a wait. */
unsigned long kube_client_watch_waits(void);

/* kube_client_reserve takes one request's slot from the rate limiter and returns the time
 * (mono_now's clock) before which the request must not be sent, or 0: at once. The
 * time is absolute so that a caller delayed between reading its own clock and reserving (a
 * connect that blocked) cannot send early. Reservations are served in the order they were
 * made. */
double kube_client_reserve(struct kube_client *c);

/* kube_client_handle_setup sets on h the options every request of c shares (user agent,
 * TLS verification and client certificate, tls-server-name routing, proxy, timeouts, TCP
 * keep-alive, HTTP/1.1, no signals, no redirects) and errbuf as its error buffer (it must
 * outlive the handle's use). The CA bundle is set by kube_client_ca_apply. */
void kube_client_handle_setup(struct kube_client *c, CURL *h, char *errbuf);

/* kube_client_ca_apply re-reads the CA file when the copy in memory is older than the CA
 * period, then hands the bundle to h, unless gen is non-NULL and already names the bundle
 * in use (*gen is updated). */
void kube_client_ca_apply(struct kube_client *c, CURL *h, unsigned *gen);

/* kube_client_auth_line keeps *line ("Authorization: Bearer ...", or NULL without a token)
 * in step with the client's token: the token file is re-read first when due, or always with
 * force (after a 401). When *gen is the current token generation nothing changes and 0 is
 * returned; otherwise *line is rebuilt (the old one wiped and freed), *gen updated and 1
 * returned. -ENOMEM leaves *line NULL and *gen 0. */
int kube_client_auth_line(struct kube_client *c, bool force, unsigned *gen, char **line);

/* kube_client_retry_401 is the one rule for a 401 Unauthorized answer: with a token file,
 * the token may have been rotated since the request's header was made, so the file is re-read
 * (with an exec plugin, the plugin is run again) at once (kube_client_auth_line with force); when that gives a token other than the one
 * *gen names (*line is then rebuilt), the request is worth sending once more and true is
 * returned. *retried is set on the first 401, so a request is sent again at most once. */
bool kube_client_retry_401(struct kube_client *c, long status, bool *retried, unsigned *gen,
                           char **line);

/* kube_client_wipe_free overwrites a secret string with zeros and frees it; NULL is fine. */
void kube_client_wipe_free(char *s);

/* kube_client_on_header is the CURLOPT_HEADERFUNCTION of every transfer: with
 * CURLOPT_HEADERDATA pointing at an int (set to -1 before the transfer), it stores the
 * delta-seconds of a "Retry-After: N" header there; other headers, and values that are not a
 * small number, leave it as it is. */
size_t kube_client_on_header(char *data, size_t size, size_t n, void *retry_after);

/* kube_client_transport_err turns a libcurl failure into an errno-style code and a message
 * that names the server (never the token: libcurl's error buffer does not hold headers). */
int kube_client_transport_err(struct kube_client *c, CURLcode cc, const char *errbuf,
                              const char *method, const char *path, long timeout_ms,
                              struct err *err);

/* kube_client_parse_json parses a body that looks like JSON (an object or array); NULL
 * otherwise. Caller decrefs. */
json_t *kube_client_parse_json(const struct buf *b);

/* kube_client_http_err fills err from an error answer: the Status object js (may be NULL)
 * when there is one (message, reason, details.retryAfterSeconds), else the start of the
 * body; retry_after is the Retry-After header (-1: none). Returns the code. */
int kube_client_http_err(long status, const json_t *js, const struct buf *body, int retry_after,
                         struct err *err);

/* The watch stream's reader, pure (no I/O), for the client and its fuzzer. */

/* kube_watch_line_fn gets one line of a watch stream (without its '\n'); non-zero stops. */
typedef int (*kube_watch_line_fn)(void *ud, const char *p, size_t n);

/* kube_watch_lines_feed splits len bytes of a watch stream into lines: each line completed
 * here goes to fn (joined with the start of it kept in line from earlier calls); the last,
 * incomplete one is kept in line for the next call. Returns 0, what fn returned when it was
 * non-zero, or -E2BIG when a line grows past line's cap (the stream cannot go on). */
int kube_watch_lines_feed(struct buf *line, const char *data, size_t len, kube_watch_line_fn fn,
                          void *ud);

/* kube_watch_event_decode parses one line as a watch event {"type": "...", "object": {...}}
 * (trailing CR and blanks ignored). Returns 1 for an empty line (nothing to do), 0 with *ev
 * (the caller's, decref it), *type and *object (borrowed from *ev) set, or -EPROTO with err
 * saying what is wrong (and *ev NULL). */
int kube_watch_event_decode(const char *p, size_t n, json_t **ev, const char **type,
                            json_t **object, struct err *err);

#endif
