/* auth.c - delegated authentication and authorization of serve's secure port (see auth-int.h).
 *
 * Two caches under one lock, each entry valid 10 s: TokenReview answers by the token's
 * SHA-256 (the user as JSON, or not authenticated), SubjectAccessReview answers by a hash of
 * the user, its groups and extra, the verb and the path. Each holds at most AUTH_CACHE_MAX
 * entries: a full cache is emptied (a flood of distinct tokens costs reviews, not memory). */
#include "serve/auth-int.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/clock.h"
#include "base/keymap.h"
#include "base/tls.h"

#define AUTH_TTL 10.0
#define AUTH_CACHE_MAX 4096
#define AUTH_PATHS_MAX 32

struct auth_entry {
    char key[65];
    double until;
    bool ok;      /* authenticated / allowed */
    json_t *user; /* a TokenReview's status.user (tokens only) */
};

struct serve_auth {
    struct kube_client *c;
    char *paths[AUTH_PATHS_MAX];
    size_t npaths;
    pthread_mutex_t mu;
    struct keymap tokens, decisions;
};

static void cache_clear(struct keymap *m)
{
    size_t i;

    for (i = 0; i < m->cap; i++)
        if (m->slots[i].key) {
            struct auth_entry *e = m->slots[i].value;

            json_decref(e->user);
            free(e);
        }
    keymap_release(m);
}

int serve_auth_new(struct kube_client *c, const char *always_allow, struct serve_auth **out,
                   struct err *err)
{
    struct serve_auth *a = calloc(1, sizeof(*a));
    const char *p = always_allow ? always_allow : "";

    *out = NULL;
    if (!a)
        return err_set(err, -ENOMEM, "out of memory");
    a->c = c;
    pthread_mutex_init(&a->mu, NULL);
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);

        if (n) {
            if (a->npaths == AUTH_PATHS_MAX || p[0] != '/') {
                serve_auth_free(a);
                return err_set(err, -EINVAL, "%s: want at most %d paths, each starting with '/'",
                               always_allow, AUTH_PATHS_MAX);
            }
            if (!(a->paths[a->npaths++] = strndup(p, n))) {
                serve_auth_free(a);
                return err_set(err, -ENOMEM, "out of memory");
            }
        }
        p += n + (e ? 1 : 0);
    }
    *out = a;
    return 0;
}

void serve_auth_free(struct serve_auth *a)
{
    size_t i;

    if (!a)
        return;
    for (i = 0; i < a->npaths; i++)
        free(a->paths[i]);
    cache_clear(&a->tokens);
    cache_clear(&a->decisions);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

bool serve_auth_always_allowed(const struct serve_auth *a, const char *path)
{
    size_t i;

    for (i = 0; i < a->npaths; i++) {
        const char *p = a->paths[i];
        size_t n = strlen(p);

        if (n && p[n - 1] == '*' ? !strncmp(path, p, n - 1) : !strcmp(path, p))
            return true;
    }
    return false;
}

/* cache_get: a copy of the live entry for key (user referenced), false when none */
static bool cache_get(struct serve_auth *a, struct keymap *m, const char *key,
                      struct auth_entry *out)
{
    struct auth_entry *e;
    bool hit = false;

    pthread_mutex_lock(&a->mu);
    e = keymap_get(m, key);
    if (e && e->until > mono_now()) {
        *out = *e;
        json_incref(out->user);
        hit = true;
    }
    pthread_mutex_unlock(&a->mu);
    return hit;
}

static void cache_put(struct serve_auth *a, struct keymap *m, const char *key, bool ok,
                      json_t *user)
{
    struct auth_entry *e = calloc(1, sizeof(*e));
    void *old = NULL;

    if (!e)
        return;
    snprintf(e->key, sizeof(e->key), "%s", key);
    e->until = mono_now() + AUTH_TTL;
    e->ok = ok;
    e->user = json_incref(user);
    pthread_mutex_lock(&a->mu);
    if (m->len >= AUTH_CACHE_MAX)
        cache_clear(m);
    if (keymap_put(m, e->key, e, &old)) {
        json_decref(e->user);
        free(e);
    } else if (old) {
        json_decref(((struct auth_entry *)old)->user);
        free(old);
    }
    pthread_mutex_unlock(&a->mu);
}

/* status_body writes a v1 Status as the API server's responsewriters write it */
static void status_body(struct buf *body, int code, const char *reason, const char *msg,
                        bool details)
{
    json_t *s = json_pack("{s:s,s:s,s:{},s:s,s:s,s:s}", "kind", "Status", "apiVersion", "v1",
                          "metadata", "status", "Failure", "message", msg, "reason", reason);
    char *text;

    if (s && details)
        json_object_set_new(s, "details", json_object());
    if (s)
        json_object_set_new(s, "code", json_integer(code));
    text = s ? json_dumps(s, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    buf_puts(body, text ? text : "");
    buf_puts(body, "\n");
    free(text);
    json_decref(s);
}

/* bearer: the token of an "Authorization: Bearer T" value, as the API server's bearertoken
 * authenticator reads it; NULL when there is none (the request is then anonymous) */
static const char *bearer(const char *authorization, size_t *len)
{
    const char *t;

    if (!authorization || strncasecmp(authorization, "bearer ", 7))
        return NULL;
    t = authorization + 7;
    *len = strcspn(t, " ");
    return *len ? t : NULL;
}

/* authenticate: the user of a token (a new reference) through the cache or a TokenReview;
 * NULL with *failed set when it is not authenticated or the review failed */
static json_t *authenticate(struct serve_auth *a, const char *token, size_t len)
{
    char key[65], *body = NULL;
    struct auth_entry hit;
    struct kube_response r;
    struct err err;
    json_t *user = NULL, *req;
    bool ok = false;

    tls_sha256_hex(token, len, key);
    if (cache_get(a, &a->tokens, key, &hit))
        return hit.ok ? hit.user : NULL;
    req = json_pack("{s:s,s:s,s:{s:s%}}", "apiVersion", "authentication.k8s.io/v1", "kind",
                    "TokenReview", "spec", "token", token, len);
    body = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    memset(&r, 0, sizeof(r));
    if (body && !kube_client_request(a->c, "POST", "/apis/authentication.k8s.io/v1/tokenreviews",
                                     "application/json", body, strlen(body), &r, &err)) {
        json_t *st = json_object_get(r.json, "status");

        ok = json_is_true(json_object_get(st, "authenticated")) &&
             json_is_object(json_object_get(st, "user"));
        if (ok)
            user = json_incref(json_object_get(st, "user"));
        cache_put(a, &a->tokens, key, ok, user);
    }
    kube_response_release(&r);
    if (body) {
        memset(body, 0, strlen(body));
        free(body);
    }
    return user;
}

/* decision_key: a hash of who asks what */
static void decision_key(json_t *user, const char *verb, const char *path, char key[65])
{
    char *u = json_dumps(user, JSON_COMPACT | JSON_SORT_KEYS);
    struct buf b = BUF_INIT(0);

    buf_printf(&b, "%s\n%s\n%s", u ? u : "", verb, path);
    tls_sha256_hex(b.data ? b.data : "", b.len, key);
    buf_release(&b);
    free(u);
}

/* authorize: 1 allowed, 0 denied, -1 the review failed (err set) */
static int authorize(struct serve_auth *a, json_t *user, const char *verb, const char *path,
                     struct err *err)
{
    json_t *groups = json_object_get(user, "groups"), *g, *spec, *req;
    struct auth_entry hit;
    struct kube_response r;
    char key[65], *body;
    size_t i;
    int rc;

    json_array_foreach(groups, i, g) if (json_is_string(g) &&
                                         !strcmp(json_string_value(g), "system:masters")) return 1;
    decision_key(user, verb, path, key);
    if (cache_get(a, &a->decisions, key, &hit))
        return hit.ok;
    spec = json_pack("{s:O*,s:O*,s:O*,s:O*,s:{s:s,s:s}}", "user", json_object_get(user, "username"),
                     "uid", json_object_get(user, "uid"), "groups", groups, "extra",
                     json_object_get(user, "extra"), "nonResourceAttributes", "path", path, "verb",
                     verb);
    req = spec ? json_pack("{s:s,s:s,s:o}", "apiVersion", "authorization.k8s.io/v1", "kind",
                           "SubjectAccessReview", "spec", spec)
               : NULL;
    body = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (!body)
        return err_set(err, -ENOMEM, "out of memory"), -1;
    memset(&r, 0, sizeof(r));
    rc = kube_client_request(a->c, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                             "application/json", body, strlen(body), &r, err);
    free(body);
    if (rc) {
        kube_response_release(&r);
        return -1;
    }
    rc = json_is_true(json_object_get(json_object_get(r.json, "status"), "allowed"));
    kube_response_release(&r);
    cache_put(a, &a->decisions, key, rc, NULL);
    return rc;
}

int serve_auth_check(struct serve_auth *a, const char *method, const char *path,
                     const char *authorization, struct buf *body, const char **ctype)
{
    char verb[16], msg[1400];
    size_t len = 0, i;
    const char *token = bearer(authorization, &len);
    json_t *user;
    struct err err;
    int rc;

    for (i = 0; method[i] && i + 1 < sizeof(verb); i++)
        verb[i] = (char)tolower((unsigned char)method[i]);
    verb[i] = '\0';
    *ctype = "application/json";
    if (token) {
        user = authenticate(a, token, len);
        if (!user) {
            status_body(body, 401, "Unauthorized", "Unauthorized", false);
            return 401;
        }
    } else {
        user = json_pack("{s:s,s:[s]}", "username", "system:anonymous", "groups",
                         "system:unauthenticated");
        if (!user) {
            status_body(body, 500, "InternalError", "out of memory", false);
            return 500;
        }
    }
    if (serve_auth_always_allowed(a, path)) {
        json_decref(user);
        return 0;
    }
    err_clear(&err);
    rc = authorize(a, user, verb, path, &err);
    if (rc == 0) {
        snprintf(msg, sizeof(msg), "forbidden: User \"%s\" cannot %s path \"%s\"",
                 json_string_value(json_object_get(user, "username"))
                     ? json_string_value(json_object_get(user, "username"))
                     : "",
                 verb, path);
        /* as the API server's responsewriters: nothing in it may look like HTML */
        for (i = 0; msg[i]; i++)
            if (msg[i] == '<' || msg[i] == '>' || msg[i] == '&')
                msg[i] = '_';
        status_body(body, 403, "Forbidden", msg, true);
    } else if (rc < 0) {
        *ctype = "text/plain; charset=utf-8";
        buf_printf(body, "Internal Server Error: \"%s\": %s\n", path, err.msg);
    }
    json_decref(user);
    return rc == 1 ? 0 : rc == 0 ? 403 : 500;
}
