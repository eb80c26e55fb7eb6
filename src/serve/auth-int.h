/* auth-int.h - who may read what on gpusched serve's secure port, decided as kube-scheduler's is
 * (k8s.io/apiserver's delegating authenticator and authorizer, --authorization-always-allow-paths).
 *
 * A bearer token is checked with a TokenReview; a request without one is system:anonymous
 * (group system:unauthenticated). A path of the always-allowed list (exact, or a prefix with
 * a trailing '*'; /healthz, /readyz and /livez by default) needs no authorization; any other
 * needs a SubjectAccessReview of the user for the non-resource path and the request's verb
 * (get), unless the user is in system:masters. Answers are cached 10 s, as kube-scheduler's
 * defaults (--authentication-token-webhook-cache-ttl, --authorization-webhook-cache-*-ttl),
 * tokens by their SHA-256 only. The reviews go through the scheduler's own API client (its
 * ServiceAccount needs create on tokenreviews and subjectaccessreviews: system:auth-delegator's
 * two verbs). Thread-safe; the reviews block, so callers run on httpd's worker thread. */
#ifndef SERVE_AUTH_INT_H
#define SERVE_AUTH_INT_H

#include <stdbool.h>

#include "base/buf.h"
#include "base/err.h"
#include "kube/client.h"

struct serve_auth;

/* serve_auth_new: always_allow is a comma-separated list of paths (copied). The client is
 * borrowed and must outlive a. */
int serve_auth_new(struct kube_client *c, const char *always_allow, struct serve_auth **out,
                   struct err *err);
void serve_auth_free(struct serve_auth *a);

/* serve_auth_always_allowed: path needs no authorization. */
bool serve_auth_always_allowed(const struct serve_auth *a, const char *path);

/* serve_auth_check decides a request of method for path with the Authorization header's value
 * (NULL: none): 0 when it may go on, else the HTTP status (401, 403, 500) with body filled as
 * kube-scheduler answers (a v1 Status in JSON: "Unauthorized", `forbidden: User "x" cannot get
 * path "/metrics"`) and *ctype set. */
int serve_auth_check(struct serve_auth *a, const char *method, const char *path,
                     const char *authorization, struct buf *body, const char **ctype);

#endif
