/* client.h - a small Kubernetes REST client over libcurl.
 *
 * Credentials come from a kubeconfig (explicit path, then $KUBECONFIG merged, then
 * ~/.kube/config) or the in-cluster service account (KUBERNETES_SERVICE_HOST/PORT, token
 * re-read when it rotates and on 401, ca.crt re-read every 5 min). TLS is verified unless
 * the kubeconfig says insecure-skip-tls-verify. Tokens are never logged or put into error
 * messages.
 *
 * A client is safe to use from several threads at once: each call takes its own connection
 * from a pool and one token-bucket rate limiter (qps/burst) is shared.
 *
 * Programs using it must ignore SIGPIPE (signal(SIGPIPE, SIG_IGN)): libcurl runs with
 * CURLOPT_NOSIGNAL, and OpenSSL may write (e.g. close_notify) to a socket the server has
 * closed. The library does not change signal dispositions itself. */
#ifndef KUBE_CLIENT_H
#define KUBE_CLIENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/err.h"

struct kube_client;

struct kube_client_opts {
    const char *kubeconfig; /* explicit --kubeconfig path, or NULL */
    const char *context;    /* --context, or NULL for current-context */
    double qps;             /* <= 0: no rate limit */
    int burst;
    const char *user_agent; /* e.g. "gpulabel/0.1 (linux/amd64)" */
    long timeout_ms;        /* per request (not watches); 0 = 30 s */
    long token_refresh_ms;  /* token file re-read period; 0 = 60 s (client-go's) */
    long ca_refresh_ms;     /* CA file re-read period; 0 = 5 min (client-go's) */
    /* an answer that asks to be retried (429 or 5xx with Retry-After: API Priority and
     * Fairness rejecting a request under load) is sent again after the wait it names, at most
     * this many times, as client-go's rest client does (10 for kubectl); the wait is capped at
     * the request timeout. 0: never (the caller decides: kube_err_transient) */
    int max_retries;
    /* the most bytes one answer's body may have (decoded), and a quarter of what all the pages
     * of one list may have together; 0 = KUBE_CLIENT_MAX_BODY. kube_client_max_body derives
     * it from the process's memory limit. */
    size_t max_body;
    /* mono_now() seconds after which no request is sent and none runs on (a one-shot
     * program's whole budget): connect and request timeouts are cut to what is left, and a
     * request past it fails with -ETIMEDOUT. 0: none */
    double deadline;
    /* requests (not watches) in flight at once, each on a connection of its own: one more
     * waits until one ends (a Retry-After wait gives its connection up meanwhile). 1 keeps a
     * process with several threads on one TLS connection (gpulabel: its heap holds one
     * connection's state, not one per thread that ever met another's request). A thread must
     * not make a request from a list stream's callback then. 0: no limit */
    int max_connections;
};

#define KUBE_CLIENT_MAX_BODY ((size_t)256 << 20)

/* kube_client_max_body is the body cap for a process limited to memory_limit bytes (0: no
 * limit known): a quarter of it (at least 1 MiB), at most KUBE_CLIENT_MAX_BODY, so that one
 * answer, its parse and what the program builds from it fit (docs/security.md). */
size_t kube_client_max_body(uint64_t memory_limit);

/* kube_client_new loads credentials as described above. Errors name the kubeconfig file and
 * line, or the missing in-cluster file. Caller frees with kube_client_free(). */
int kube_client_new(const struct kube_client_opts *o, struct kube_client **out, struct err *err);
void kube_client_free(struct kube_client *c);

/* kube_client_server returns the API server URL ("https://10.0.0.1:443"). */
const char *kube_client_server(const struct kube_client *c);

/* kube_client_namespace returns the context's namespace, the in-cluster namespace
 * ($POD_NAMESPACE, then the service account's namespace file) or "default". Borrowed. */
const char *kube_client_namespace(const struct kube_client *c);

struct kube_response {
    long status;     /* HTTP status, 0 when the request never got an answer */
    struct buf body; /* raw body (capped) */
    json_t *json;    /* parsed body when it is JSON, else NULL */
    double wait_s;   /* the last attempt's wait from the request sent to the answer's first
                      * byte (the API server's time and the network's, no TLS setup) */
};

/* kube_response_release frees body and json. */
void kube_response_release(struct kube_response *r);

/* kube_client_request sends one request. path starts with "/api" or "/apis" and may carry a
 * query string. body may be NULL. On a 2xx answer returns 0 with resp filled. Otherwise
 * returns a negative code: for an HTTP error, err->http_status, err->reason, err->msg (the
 * Status message) and err->retry_after are set and resp still holds the answer; for a
 * transport error (refused, timeout, TLS) http_status is 0 and msg says what happened.
 * The caller releases resp in every case (resp may be NULL when the answer is not needed).
 * No retries happen here but those of max_retries: see kube_err_transient.
 * Codes (docs/api-client.md has the table): 404 -ENOENT, 409 -EBUSY (AlreadyExists -EEXIST),
 * 401 -EACCES, 403 -EPERM, 410 -ESTALE, 400/415/422 -EINVAL, 429/503 -EAGAIN, other 5xx -EIO;
 * transport -ECONNREFUSED, -EHOSTUNREACH, -ETIMEDOUT, -ECONNRESET, -EPROTO (TLS),
 * -EKEYREJECTED (the server's certificate is not trusted), -E2BIG.
 * The one exception to "no retries": with a token file, a 401 re-reads the token and the
 * request is sent once more when the token changed. */
int kube_client_request(struct kube_client *c, const char *method, const char *path,
                        const char *content_type, const char *body, size_t len,
                        struct kube_response *resp, struct err *err);

/* kube_json_fn receives a parsed answer; see kube_client_get_stream. Returns 0 or a negative
 * code (with the caller's err set) that is handed back. */
typedef int (*kube_json_fn)(void *ud, json_t *doc);

/* kube_client_get_stream GETs the list at path and hands it to fn as it arrives, in parts:
 * each part is the list with only the next batch of its items (the members before "items",
 * such as metadata.continue, in every part; those after it in the last). So a list of any
 * length is never held whole, and the parsing keeps pace with the server writing it; an
 * answer without an items array is one part. The members named in strip (a NULL-terminated
 * list, or NULL) are cut from the items' text at any depth before it is parsed (e.g.
 * "managedFields", half of a pod's JSON). A part lives in an arena of the calling thread,
 * like a watch event's (see kube_watch_fn): neither it nor anything in it may be kept after
 * fn returns. The arena is kept for the thread's next call (the next list):
 * kube_jalloc_release (kube/jalloc.h) frees it once the lists are read. Errors as for
 * kube_client_request (a body that is not JSON: -EPROTO, with fn called for the parts before
 * the fault). The answer must arrive whole within the client's timeout; it is one page of
 * the list that b bounds (NULL: a list of one page, bounded as kube_list_budget_init says). */
struct kube_list_budget;
int kube_client_get_stream(struct kube_client *c, const char *path, const char *const *strip,
                           size_t batch, kube_json_fn fn, void *ud, struct kube_list_budget *b,
                           struct err *err);

/* The bounds of one list read in pages (limit/continue), whatever the server does: a
 * deadline for the whole list, a number of pages and a number of bytes (the decoded bodies
 * of every page together), and a stop flag that ends the page in flight within about a
 * second. A page past a bound fails: -ETIMEDOUT ("not read within"), -E2BIG ("more than N
 * pages", "larger than N MiB"), -ECANCELED (stopped). Each page's own answer is bounded as
 * any request (the client's timeout, max_body). */
struct kube_list_budget {
    volatile sig_atomic_t *stop; /* may be NULL */
    double deadline;             /* mono_now() seconds */
    size_t pages_left, bytes_left;
    double seconds; /* the deadline's length, for messages */
    size_t max_pages, max_bytes;
};

/* A list's deadline: continue tokens expire with the API server's etcd compaction (every 5
 * minutes by default), so no list read in pages outlives it; and its most pages (5,000,000
 * objects at limit=500). Its most bytes are 4 x the client's max_body. */
#define KUBE_LIST_DEADLINE_S 300.0
#define KUBE_LIST_MAX_PAGES 10000

/* kube_list_budget_init starts the budget of a list read through c from now. */
void kube_list_budget_init(struct kube_list_budget *b, const struct kube_client *c,
                           volatile sig_atomic_t *stop);

/* kube_client_list_page GETs one page of a list under b's bounds (b is updated), as
 * kube_client_request does otherwise. */
int kube_client_list_page(struct kube_client *c, const char *path, struct kube_list_budget *b,
                          struct kube_response *resp, struct err *err);

/* kube_err_transient tells whether an error is worth retrying soon: transport errors but an
 * untrusted certificate, 409, 429, 5xx. 401/403/404/422 are permanent. */
bool kube_err_transient(const struct err *e);

/* Watch events are handed over one at a time. type is "ADDED", "MODIFIED", "DELETED",
 * "BOOKMARK" or "ERROR"; object is borrowed for the call. Return non-zero to stop the watch.
 * The event is parsed into an arena of the calling thread that is rewound after the call:
 * neither object nor anything in it may be kept (json_incref does not keep it alive; use
 * json_deep_copy, which allocates outside the arena). jansson's allocator is the process's:
 * the first watch installs one (json_set_alloc_funcs) that serves every other thread from
 * malloc as before. */
typedef int (*kube_watch_fn)(void *ud, const char *type, json_t *object);

/* kube_client_watch GETs path (which must include watch=1 and any resourceVersion) and
 * streams newline-delimited events to fn until the server ends the stream (returns 0), fn
 * returns non-zero (returns that value), *stop becomes non-zero (returns 0 within about a
 * second), or an error occurs (negative, err filled). Each event line is capped at 16 MiB. */
int kube_client_watch(struct kube_client *c, const char *path, kube_watch_fn fn, void *ud,
                      volatile sig_atomic_t *stop, struct err *err);

/* kube_path_escape percent-encodes s for use in a URL path segment or query value (all but
 * RFC 3986 unreserved characters). Returns buf, or NULL (buf set to "") when it is too small. */
const char *kube_path_escape(const char *s, char *buf, size_t size);

#endif
