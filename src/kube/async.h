/* async.h - many API requests in flight at once on one thread, over kept-alive connections.
 *
 * A set (struct kube_async) sends the requests added to it concurrently from the thread that
 * calls kube_async_run: one poll() watches every connection and no thread blocks per request.
 * libcurl opens each connection (TCP, TLS with the client's CA and certificate,
 * tls-server-name, proxy tunnel) and then only carries bytes (CURLOPT_CONNECT_ONLY with
 * curl_easy_send/recv, or the socket itself when it is plain TCP to the server); the set
 * writes the HTTP/1.1 requests and parses the answers itself. A client has one request at a
 * time per connection and up to max_conns connections; past that (or when a new connection
 * cannot be opened) requests queue behind others on a connection (pipelined, answered in
 * order). Requests of several clients may share a set (the scheduler's binds and events
 * have a client each, for their own rate limits).
 *
 * Meant for writes whose answer is not needed: a 2xx answer is reduced to its status (the
 * body is read and dropped, never parsed); an error answer is reported as
 * kube_client_request reports it (code, HTTP status, the Status message and reason,
 * Retry-After), its body capped at 1 MiB. Each request waits for its client's rate limiter
 * inside the set, never blocking the thread, and with a token file a 401 re-reads the token
 * and sends the request once more when it changed. A request left without an answer because
 * its kept-alive connection closed is sent once more on a new connection (as libcurl does for
 * a reused connection); no other retries happen here. TLS, the CA file re-read, proxies and
 * tls-server-name are the client's (docs/api-client.md); opening a connection blocks the
 * owner's thread for up to the client's connect timeout, and after an attempt that failed
 * that slowly the requests needing a new connection fail at once for as long again.
 *
 * Every function except kube_async_wakeup is called by one thread at a time, the set's
 * owner; done callbacks run on it, inside kube_async_run. */
#ifndef KUBE_ASYNC_H
#define KUBE_ASYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "kube/client.h"

struct kube_async;

struct kube_async_req {
    /* Set by the caller; the strings are borrowed until the request is done. */
    const char *method;       /* "POST", "PUT", "PATCH", "DELETE" or "GET" */
    const char *path;         /* starts with "/api" or "/apis", may carry a query */
    const char *content_type; /* NULL: none */
    const char *body;         /* NULL: none */
    size_t len;
    void *ud;
    struct err *err; /* where a failure is described (cleared when added); may be NULL */
    /* The outcome, set before the done callback. */
    int rc;      /* 0 for a 2xx answer, else a negative code as kube_client_request's */
    long status; /* HTTP status, 0 when there was no answer */
    /* async.c's own */
    struct {
        struct kube_client *c;
        double due;       /* monotonic seconds before which it is not sent */
        double sent;      /* when it was queued on a connection */
        bool reserved;    /* the rate limiter has given it its slot */
        bool retried_401; /* sent again after a 401 re-read the token */
        bool resent;      /* sent again after its connection closed unanswered */
        struct kube_async_req *next;
    } priv;
};

/* Called on the owner's thread for every request that is done (r->rc says how). The
 * callback may add requests, this one included. */
typedef void (*kube_async_done_fn)(void *ud, struct kube_async_req *r);

/* kube_async_new creates a set opening up to max_conns connections per client. Returns 0,
 * or -ENOMEM/-EIO with err filled. Free with kube_async_free. */
int kube_async_new(int max_conns, struct kube_async **out, struct err *err);

/* kube_async_free abandons the requests not done yet, calling drop (when not NULL) for each
 * of them, closes the connections and frees a; NULL is fine. */
void kube_async_free(struct kube_async *a, kube_async_done_fn drop, void *ud);

/* kube_async_add queues r for client c (borrowed; it must outlive the request): it is sent
 * once delay_ms have passed and c's rate limiter allows, during a later kube_async_run. r's
 * outcome (rc, status, *err) is cleared. */
void kube_async_add(struct kube_async *a, struct kube_client *c, struct kube_async_req *r,
                    int64_t delay_ms);

/* kube_async_run sends the requests that are due, waits up to timeout_ms for the answers
 * (less when a request or a libcurl timer is due sooner; not at all after a wakeup), and
 * calls done for each request that finished. Returns the number of requests not done. */
size_t kube_async_run(struct kube_async *a, int64_t timeout_ms, kube_async_done_fn done, void *ud);

/* kube_async_wakeup makes the owner's current or next kube_async_run return without
 * waiting. Safe from any thread; it costs a system call only when the owner sleeps. */
void kube_async_wakeup(struct kube_async *a);

/* kube_async_coalesce trades latency for CPU under load: while at least min_busy requests
 * are in flight, kube_async_run lets window_us (at most 0.5 s) pass between two waits for
 * answers, so the answers that arrive meanwhile are handled after one wakeup of the thread
 * instead of one each; an answer may be seen up to window_us late. With fewer requests in
 * flight every answer is handled as it comes. 0 turns it off (the default). */
void kube_async_coalesce(struct kube_async *a, int64_t window_us, size_t min_busy);

/* kube_async_conns caps c's connections in a at max_conns (0: back to kube_async_new's);
 * past the cap c's requests are pipelined behind each other. For writes whose order and
 * latency matter little, such as events (kube-scheduler's recorder sends them one after the
 * other): fewer connections, and several requests per send. Returns 0 or -ENOMEM. */
int kube_async_conns(struct kube_async *a, struct kube_client *c, size_t max_conns);

/* kube_async_count returns the number of requests added and not done. */
size_t kube_async_count(const struct kube_async *a);

#endif
