/* kubeconfig.c - kubeconfig files and the in-cluster service account to a flat kube_config.
 *
 * Files are parsed with kube_yaml_load so every error can name its line. Merging follows
 * clientcmd: named entries (clusters, users, contexts) come from the first file that defines
 * them, current-context from the first file that sets it. Only the selected context, cluster
 * and user are validated in depth; the rest of each file only has to be well-formed. */
#include "kube/kubeconfig.h"
#include "kube/http1.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/decode.h"
#include "kube/yaml.h"

#define KC_FILE_MAX ((size_t)16 << 20) /* a kubeconfig */
#define KC_PEM_MAX ((size_t)1 << 20)   /* a certificate or key file */
#define KC_TOKEN_MAX ((size_t)64 << 10)
#define KC_FILES_MAX 32

struct kc_file {
    char *path; /* as given (for messages) */
    char *dir;  /* directory relative paths are resolved against */
    json_t *docs;
    json_t *root; /* first document (borrowed from docs), NULL for an empty file */
    struct kube_lines *lines;
};

struct kc_set {
    struct kc_file files[KC_FILES_MAX];
    size_t n;
};

/* kc_fail writes "cannot read kubeconfig 'PATH': line N: FIELD: what" into err. at (a value
 * of f's tree) gives the line; field may be NULL. Returns code. */
__attribute__((format(printf, 6, 7))) static int kc_fail(struct err *err, int code,
                                                         const struct kc_file *f, const json_t *at,
                                                         const char *field, const char *fmt, ...)
{
    char what[ERR_MSG_MAX], loc[64] = "";
    va_list ap;
    int line = f ? kube_lines_find(f->lines, at) : 0;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    if (line > 0)
        snprintf(loc, sizeof(loc), "line %d: ", line);
    return err_set(err, code, "cannot read kubeconfig '%s': %s%s%s%s", f ? f->path : "?", loc,
                   field ? field : "", field ? ": " : "", what);
}

/* kc_type fails on at, a value not of Go type go at path (JSON keys, indexes allowed) of Go
 * struct st (clientcmd's v1 types), in the Go decoder's words as kubectl reads a kubeconfig */
static int kc_type(struct err *err, const struct kc_file *f, const json_t *at, const char *st,
                   const char *path, const char *go)
{
    struct err t;

    err_clear(&t);
    kube_json_type_error(&t, at, st, path, go);
    return kc_fail(err, -EINVAL, f, at, NULL, "%s", t.msg);
}

/* kc_struct names the clientcmd v1 struct of a kubeconfig's part at prefix */
static const char *kc_struct(const char *prefix)
{
    const char *dot = strrchr(prefix, '.');
    const char *last = dot ? dot + 1 : prefix;

    return !strcmp(last, "cluster")   ? "Cluster"
           : !strcmp(last, "user")    ? "AuthInfo"
           : !strcmp(last, "exec")    ? "ExecConfig"
           : !strcmp(last, "context") ? "Context"
                                      : "Config";
}

static char *kc_strdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void kc_file_release(struct kc_file *f)
{
    free(f->path);
    free(f->dir);
    json_decref(f->docs);
    kube_lines_free(f->lines);
    memset(f, 0, sizeof(*f));
}

static void kc_set_release(struct kc_set *s)
{
    size_t i;

    for (i = 0; i < s->n; i++)
        kc_file_release(&s->files[i]);
    s->n = 0;
}

static char *kc_dirname(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    char *d;

    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    d = malloc((size_t)(slash - path) + 1);
    if (d) {
        memcpy(d, path, (size_t)(slash - path));
        d[slash - path] = '\0';
    }
    return d;
}

/* field_of writes "prefix.key" into buf */
static const char *field_of(char *buf, size_t size, const char *prefix, const char *key)
{
    snprintf(buf, size, "%s.%s", prefix, key);
    return buf;
}

/* kc_named: the clientcmd v1 type of the entries of a section ("NamedCluster" of clusters) */
static const char *kc_named(const char *key)
{
    return !strcmp(key, "clusters") ? "Cluster" : !strcmp(key, "users") ? "AuthInfo" : "Context";
}

/* kc_check_section verifies that root[key] is absent, null or a list of mappings with a
 * string name and a mapping under body_key. */
static int kc_check_section(const struct kc_file *f, const char *key, const char *body_key,
                            struct err *err)
{
    json_t *list = json_object_get(f->root, key), *item, *name, *body;
    size_t i;
    char field[128], go[48], body_go[32];

    if (!list || json_is_null(list))
        return 0;
    snprintf(go, sizeof(go), "[]v1.Named%s", kc_named(key));
    if (!json_is_array(list))
        return kc_type(err, f, list, "Config", key, go);
    json_array_foreach(list, i, item)
    {
        snprintf(field, sizeof(field), "%s[%zu]", key, i);
        if (!json_is_object(item))
            return kc_type(err, f, item, "Config", key, go + 2);
        name = json_object_get(item, "name");
        if (!json_is_string(name) || !json_string_value(name)[0])
            return kc_fail(err, -EINVAL, f, name ? name : item, field,
                           "name must be a non-empty string");
        body = json_object_get(item, body_key);
        if (body && !json_is_object(body) && !json_is_null(body)) {
            snprintf(field, sizeof(field), "%s.%s", key, body_key);
            snprintf(body_go, sizeof(body_go), "v1.%s", kc_struct(body_key));
            return kc_type(err, f, body, go + 5, field, body_go);
        }
    }
    return 0;
}

/* kc_file_parse parses data into f (which takes a copy of path). */
static int kc_file_parse(struct kc_file *f, const char *data, size_t len, const char *path,
                         struct err *err)
{
    struct err yerr;
    json_t *cc;
    int rc;

    memset(f, 0, sizeof(*f));
    f->path = strdup(path ? path : "<memory>");
    f->dir = kc_dirname(path);
    if (!f->path || !f->dir)
        return err_set(err, -ENOMEM, "out of memory");
    err_clear(&yerr);
    rc = kube_yaml_load(data, len, f->path, &f->docs, &f->lines, &yerr);
    if (rc) {
        if (yerr.line > 0)
            return err_set(err, rc, "cannot read kubeconfig '%s': line %d: %s", f->path, yerr.line,
                           yerr.msg);
        return err_set(err, rc, "cannot read kubeconfig '%s': %s", f->path, yerr.msg);
    }
    f->root = json_array_get(f->docs, 0);
    if (!f->root || json_is_null(f->root)) {
        f->root = NULL;
        return 0;
    }
    if (!json_is_object(f->root)) {
        /* kubectl's words: the TypeMeta it reads first */
        const char *kind, *av;
        struct err t;

        err_clear(&t);
        kube_type_meta_decode(f->root, NULL, &kind, &av, &t);
        return kc_fail(err, -EINVAL, f, f->root, NULL, "%s", t.msg);
    }
    cc = json_object_get(f->root, "current-context");
    if (cc && !json_is_string(cc) && !json_is_null(cc))
        return kc_type(err, f, cc, "Config", "current-context", "string");
    if ((rc = kc_check_section(f, "clusters", "cluster", err)) ||
        (rc = kc_check_section(f, "users", "user", err)) ||
        (rc = kc_check_section(f, "contexts", "context", err)))
        return rc;
    return 0;
}

static int kc_file_read(struct kc_file *f, const char *path, struct err *err)
{
    struct buf b = BUF_INIT(KC_FILE_MAX);
    int rc = buf_read_file(path, &b);

    if (rc) {
        memset(f, 0, sizeof(*f));
        return err_set(err, rc, "cannot read kubeconfig '%s': %s", path,
                       rc == -E2BIG ? "larger than 16 MiB" : strerror(-rc));
    }
    rc = kc_file_parse(f, b.data, b.len, path, err);
    buf_release(&b);
    return rc;
}

/* kc_find looks up the first entry called name in section key across the files. */
static json_t *kc_find(const struct kc_set *s, const char *key, const char *name,
                       const struct kc_file **fout, size_t *idx)
{
    size_t i, j;
    json_t *item;

    for (i = 0; i < s->n; i++) {
        json_t *list = s->files[i].root ? json_object_get(s->files[i].root, key) : NULL;

        json_array_foreach(list, j, item)
        {
            if (!strcmp(json_string_value(json_object_get(item, "name")), name)) {
                *fout = &s->files[i];
                *idx = j;
                return item;
            }
        }
    }
    return NULL;
}

/* kc_get_str reads an optional string member; a present non-string is an error. */
static int kc_get_str(const struct kc_file *f, const json_t *obj, const char *key,
                      const char *prefix, const char **out, struct err *err)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    char field[160];

    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v)) {
        size_t n = strlen(key);

        snprintf(field, sizeof(field), "%s.%s", prefix, key);
        /* the -data members are []byte in Go (base64 in JSON) */
        return kc_type(err, f, v, kc_struct(prefix), field,
                       n > 5 && !strcmp(key + n - 5, "-data") ? "[]uint8" : "string");
    }
    *out = json_string_value(v);
    if (!(*out)[0])
        *out = NULL;
    return 0;
}

static char *kc_resolve_path(const struct kc_file *f, const char *p)
{
    return p[0] == '/' ? strdup(p) : buf_fmt("%s/%s", f->dir, p);
}

/* kc_load_blob fills data and len from a base64 "-data" member or, failing that, from a file
 * member (resolved against the kubeconfig's directory). pem_tag checks the decoded content
 * ("CERTIFICATE" or "PRIVATE KEY"). Nothing set when neither member is present. When the
 * content came from a file and file_out is not NULL, *file_out takes the absolute path. */
static int kc_load_blob(const struct kc_file *f, const json_t *obj, const char *prefix,
                        const char *file_key, const char *data_key, const char *pem_tag,
                        char **data, size_t *len, char **file_out, struct err *err)
{
    struct buf b = BUF_INIT(KC_PEM_MAX);
    const char *file = NULL, *b64 = NULL;
    char field[160], *path = NULL;
    int rc;

    if ((rc = kc_get_str(f, obj, data_key, prefix, &b64, err)) ||
        (rc = kc_get_str(f, obj, file_key, prefix, &file, err)))
        return rc;
    if (b64) {
        size_t bad = 0;

        snprintf(field, sizeof(field), "%s.%s", prefix, data_key);
        rc = kube_base64_decode(b64, strlen(b64), &b, &bad);
        if (rc == -EINVAL)
            rc = kc_fail(err, rc, f, json_object_get(obj, data_key), field,
                         "illegal base64 data at input byte %zu", bad);
        else if (rc)
            rc = kc_fail(err, rc, f, json_object_get(obj, data_key), field, "%s",
                         rc == -E2BIG ? "larger than 1 MiB" : strerror(-rc));
    } else if (file) {
        snprintf(field, sizeof(field), "%s.%s", prefix, file_key);
        path = kc_resolve_path(f, file);
        if (!path)
            return err_set(err, -ENOMEM, "out of memory");
        rc = buf_read_file(path, &b);
        if (rc)
            rc = kc_fail(err, rc, f, json_object_get(obj, file_key), field, "cannot read '%s': %s",
                         path, rc == -E2BIG ? "larger than 1 MiB" : strerror(-rc));
    } else {
        return 0;
    }
    if (!rc && !strstr(b.data ? b.data : "", pem_tag))
        rc = kc_fail(err, -EINVAL, f, json_object_get(obj, b64 ? data_key : file_key), field,
                     "%s does not hold a PEM %s", b64 ? "the decoded data" : path, pem_tag);
    if (!rc) {
        *len = b.len;
        *data = buf_take(&b);
        if (!*data)
            rc = err_set(err, -ENOMEM, "out of memory");
    }
    if (!rc && path && file_out) {
        *file_out = path;
        path = NULL;
    }
    buf_release(&b);
    free(path);
    return rc;
}

static int kc_cluster(const struct kc_file *f, const json_t *item, size_t idx,
                      struct kube_config *out, struct err *err)
{
    json_t *c = json_object_get(item, "cluster"), *insecure, *nozip;
    const char *server, *sni, *proxy;
    char prefix[64];
    size_t n;
    int rc;

    snprintf(prefix, sizeof(prefix), "clusters[%zu].cluster", idx);
    if ((rc = kc_get_str(f, c, "server", prefix, &server, err)) ||
        (rc = kc_get_str(f, c, "tls-server-name", prefix, &sni, err)) ||
        (rc = kc_get_str(f, c, "proxy-url", prefix, &proxy, err)))
        return rc;
    if (!server)
        return kc_fail(err, -EINVAL, f, c ? c : item, prefix,
                       "cluster \"%s\" has no server defined",
                       json_string_value(json_object_get(item, "name")));
    if (strncmp(server, "https://", 8) && strncmp(server, "http://", 7))
        return kc_fail(err, -EINVAL, f, json_object_get(c, "server"), prefix,
                       "server \"%s\" must be an https:// or http:// URL", server);
    insecure = json_object_get(c, "insecure-skip-tls-verify");
    if (insecure && !json_is_boolean(insecure) && !json_is_null(insecure))
        return kc_fail(err, -EINVAL, f, insecure, prefix,
                       "insecure-skip-tls-verify must be true or false");
    out->insecure = json_is_true(insecure);
    nozip = json_object_get(c, "disable-compression");
    if (nozip && !json_is_boolean(nozip) && !json_is_null(nozip))
        return kc_fail(err, -EINVAL, f, nozip, prefix, "disable-compression must be true or false");
    out->disable_compression = json_is_true(nozip);
    if (proxy && strncmp(proxy, "http://", 7) && strncmp(proxy, "https://", 8) &&
        strncmp(proxy, "socks5://", 9))
        return kc_fail(err, -EINVAL, f, json_object_get(c, "proxy-url"), prefix,
                       "proxy-url \"%s\" must be an http://, https:// or socks5:// URL", proxy);
    out->server = strdup(server);
    out->tls_server_name = kc_strdup(sni);
    out->proxy_url = kc_strdup(proxy);
    if (!out->server || (sni && !out->tls_server_name) || (proxy && !out->proxy_url))
        return err_set(err, -ENOMEM, "out of memory");
    n = strlen(out->server);
    while (n > 8 && out->server[n - 1] == '/')
        out->server[--n] = '\0';
    rc = kc_load_blob(f, c, prefix, "certificate-authority", "certificate-authority-data",
                      "CERTIFICATE", &out->ca_pem, &out->ca_len, &out->ca_file, err);
    if (rc)
        return rc;
    if (out->insecure && out->ca_pem)
        return kc_fail(err, -EINVAL, f, insecure, prefix,
                       "specifying a root certificates file with the insecure flag is not allowed");
    {
        json_t *exts = json_object_get(c, "extensions"), *e;
        size_t i;

        json_array_foreach(exts, i, e)
        {
            const char *en = json_string_value(json_object_get(e, "name"));
            json_t *ev = json_object_get(e, "extension");
            if (en && ev && !strcmp(en, "client.authentication.k8s.io/exec")) {
                out->exec_cluster_config = json_dumps(ev, JSON_COMPACT | JSON_ENCODE_ANY);
                if (!out->exec_cluster_config)
                    return err_set(err, -ENOMEM, "out of memory");
            }
        }
    }
    return 0;
}

static void kc_exec_free(struct kube_exec *x)
{
    size_t i;

    if (!x)
        return;
    free(x->api_version);
    free(x->command);
    for (i = 0; i < x->nargs; i++)
        free(x->args[i]);
    free(x->args);
    for (i = 0; i < x->nenv; i++) {
        if (x->env[i])
            memset(x->env[i], 0, strlen(x->env[i])); /* may hold secrets */
        free(x->env[i]);
    }
    free(x->env);
    free(x->install_hint);
    free(x);
}

/* kc_exec reads users[].user.exec as client-go's clientcmd validates it. */
static int kc_exec(const struct kc_file *f, const json_t *e, const char *uprefix,
                   struct kube_config *out, struct err *err)
{
    const char *av, *cmd, *mode, *hint;
    char prefix[96], fld[128];
    json_t *args, *env, *pci, *v;
    struct kube_exec *x;
    size_t i;
    int rc;

    snprintf(prefix, sizeof(prefix), "%s.exec", uprefix);
    if (!json_is_object(e))
        return kc_type(err, f, e, "AuthInfo", prefix, "v1.ExecConfig");
    if ((rc = kc_get_str(f, e, "apiVersion", prefix, &av, err)) ||
        (rc = kc_get_str(f, e, "command", prefix, &cmd, err)) ||
        (rc = kc_get_str(f, e, "interactiveMode", prefix, &mode, err)) ||
        (rc = kc_get_str(f, e, "installHint", prefix, &hint, err)))
        return rc;
    if (!cmd)
        return kc_fail(err, -EINVAL, f, e, prefix, "command must be specified");
    if (!av)
        return kc_fail(err, -EINVAL, f, e, prefix, "apiVersion must be specified");
    if (strcmp(av, "client.authentication.k8s.io/v1") &&
        strcmp(av, "client.authentication.k8s.io/v1beta1"))
        return kc_fail(err, -ENOTSUP, f, json_object_get(e, "apiVersion"), prefix,
                       "apiVersion \"%s\" is not supported (want client.authentication.k8s.io/v1 "
                       "or v1beta1)",
                       av);
    x = calloc(1, sizeof(*x));
    if (!x)
        return err_set(err, -ENOMEM, "out of memory");
    out->exec = x;
    if (!mode) {
        /* v1 has no default; v1beta1's is IfAvailable */
        if (!strcmp(av, "client.authentication.k8s.io/v1"))
            return kc_fail(err, -EINVAL, f, e, prefix,
                           "interactiveMode must be specified for %s to use exec authentication "
                           "plugin",
                           cmd);
        x->interactive = KUBE_EXEC_IF_AVAILABLE;
    } else if (!strcmp(mode, "Never")) {
        x->interactive = KUBE_EXEC_NEVER;
    } else if (!strcmp(mode, "IfAvailable")) {
        x->interactive = KUBE_EXEC_IF_AVAILABLE;
    } else if (!strcmp(mode, "Always")) {
        x->interactive = KUBE_EXEC_ALWAYS;
    } else {
        return kc_fail(err, -EINVAL, f, json_object_get(e, "interactiveMode"), prefix,
                       "invalid interactiveMode \"%s\": want Never, IfAvailable or Always", mode);
    }
    pci = json_object_get(e, "provideClusterInfo");
    if (pci && !json_is_boolean(pci) && !json_is_null(pci))
        return kc_fail(err, -EINVAL, f, pci, prefix, "provideClusterInfo must be true or false");
    x->provide_cluster_info = json_is_true(pci);
    x->api_version = strdup(av);
    /* a command with a slash is a path, relative to the kubeconfig's directory; a bare name is
     * looked up in $PATH when it runs */
    while (cmd[0] == '.' && cmd[1] == '/')
        cmd += 2;
    x->command = strchr(cmd, '/') || cmd != json_string_value(json_object_get(e, "command"))
                     ? kc_resolve_path(f, cmd)
                     : strdup(cmd);
    x->install_hint = kc_strdup(hint);
    if (!x->api_version || !x->command || (hint && !x->install_hint))
        return err_set(err, -ENOMEM, "out of memory");
    args = json_object_get(e, "args");
    if (args && !json_is_null(args)) {
        if (!json_is_array(args))
            return kc_type(err, f, args, "ExecConfig", field_of(fld, sizeof(fld), prefix, "args"),
                           "[]string");
        x->args = calloc(json_array_size(args) + 1, sizeof(*x->args));
        if (!x->args)
            return err_set(err, -ENOMEM, "out of memory");
        json_array_foreach(args, i, v)
        {
            if (!json_is_string(v))
                return kc_type(err, f, v, "ExecConfig", field_of(fld, sizeof(fld), prefix, "args"),
                               "string");
            if (!(x->args[x->nargs++] = strdup(json_string_value(v))))
                return err_set(err, -ENOMEM, "out of memory");
        }
    }
    env = json_object_get(e, "env");
    if (env && !json_is_null(env)) {
        if (!json_is_array(env))
            return kc_type(err, f, env, "ExecConfig", field_of(fld, sizeof(fld), prefix, "env"),
                           "[]v1.ExecEnvVar");
        x->env = calloc(json_array_size(env) + 1, sizeof(*x->env));
        if (!x->env)
            return err_set(err, -ENOMEM, "out of memory");
        json_array_foreach(env, i, v)
        {
            const char *n = json_string_value(json_object_get(v, "name"));
            const char *val = json_string_value(json_object_get(v, "value"));

            if (!n || !*n || strchr(n, '=') || !val)
                return kc_fail(err, -EINVAL, f, v, prefix,
                               "env[%zu] must have a name and a string value", i);
            if (!(x->env[x->nenv] = buf_fmt("%s=%s", n, val)))
                return err_set(err, -ENOMEM, "out of memory");
            x->nenv++;
        }
    }
    return 0;
}

static int kc_user(const struct kc_file *f, const json_t *item, size_t idx, struct kube_config *out,
                   struct err *err)
{
    json_t *u = json_object_get(item, "user");
    const char *token, *token_file, *username;
    char prefix[64];
    int rc;

    snprintf(prefix, sizeof(prefix), "users[%zu].user", idx);
    if (json_object_get(u, "exec") && !json_is_null(json_object_get(u, "exec")) &&
        (rc = kc_exec(f, json_object_get(u, "exec"), prefix, out, err)))
        return rc;
    if (json_object_get(u, "auth-provider") && !json_is_null(json_object_get(u, "auth-provider")))
        return kc_fail(err, -ENOTSUP, f, json_object_get(u, "auth-provider"), prefix,
                       "auth-provider plugins are not supported; use exec, token, tokenFile "
                       "or client-certificate/client-key");
    if ((rc = kc_get_str(f, u, "username", prefix, &username, err)))
        return rc;
    if (username)
        return kc_fail(err, -ENOTSUP, f, json_object_get(u, "username"), prefix,
                       "basic authentication (username/password) is not supported");
    if ((rc = kc_get_str(f, u, "token", prefix, &token, err)) ||
        (rc = kc_get_str(f, u, "tokenFile", prefix, &token_file, err)))
        return rc;
    if ((rc = kc_load_blob(f, u, prefix, "client-certificate", "client-certificate-data",
                           "CERTIFICATE", &out->cert_pem, &out->cert_len, NULL, err)) ||
        (rc = kc_load_blob(f, u, prefix, "client-key", "client-key-data", "PRIVATE KEY",
                           &out->key_pem, &out->key_len, NULL, err)))
        return rc;
    if (!!out->cert_pem != !!out->key_pem)
        return kc_fail(err, -EINVAL, f, u, prefix, "%s given without %s",
                       out->cert_pem ? "client-certificate" : "client-key",
                       out->cert_pem ? "client-key" : "client-certificate");
    if (token_file) {
        out->token_file = kc_resolve_path(f, token_file);
        if (!out->token_file)
            return err_set(err, -ENOMEM, "out of memory");
    }
    if (token && http1_value_bad(token)) {
        char field[160];

        snprintf(field, sizeof(field), "%s.token", prefix);
        return kc_fail(err, -EINVAL, f, json_object_get(u, "token"), field,
                       "holds a control character (0x%02x); a token is sent as a header value",
                       (unsigned char)*http1_value_bad(token));
    }
    if (token) {
        out->token = strdup(token);
        if (!out->token)
            return err_set(err, -ENOMEM, "out of memory");
    } else if (out->token_file) {
        struct err terr;

        err_clear(&terr);
        rc = kube_token_read(out->token_file, &out->token, &terr);
        if (rc)
            return kc_fail(err, rc, f, json_object_get(u, "tokenFile"), prefix, "tokenFile: %s",
                           terr.msg);
    }
    /* A user with no credentials (`user: {}`, as for `kubectl proxy`) is anonymous: the
     * requests carry no Authorization header, as kubectl's do. */
    return 0;
}

static int kc_resolve(const struct kc_set *s, const char *context, struct kube_config *out,
                      struct err *err)
{
    const struct kc_file *cf = NULL, *ff, *uf;
    const char *cluster, *user, *ns;
    json_t *ctx, *cl, *us, *body;
    size_t i, ci = 0, fi, ui;
    char prefix[64];
    int rc;

    if (!context) {
        for (i = 0; i < s->n && !context; i++) {
            json_t *cc =
                s->files[i].root ? json_object_get(s->files[i].root, "current-context") : NULL;

            if (json_is_string(cc) && json_string_value(cc)[0])
                context = json_string_value(cc);
        }
        if (!context)
            return kc_fail(err, -EINVAL, &s->files[0], NULL, NULL,
                           "current-context is not set and no context was given");
    }
    ctx = kc_find(s, "contexts", context, &cf, &ci);
    if (!ctx)
        return kc_fail(err, -ENOENT, &s->files[0], NULL, NULL, "context \"%s\" not found", context);
    body = json_object_get(ctx, "context");
    snprintf(prefix, sizeof(prefix), "contexts[%zu].context", ci);
    if ((rc = kc_get_str(cf, body, "cluster", prefix, &cluster, err)) ||
        (rc = kc_get_str(cf, body, "user", prefix, &user, err)) ||
        (rc = kc_get_str(cf, body, "namespace", prefix, &ns, err)))
        return rc;
    if (!cluster)
        return kc_fail(err, -EINVAL, cf, body ? body : ctx, prefix,
                       "context \"%s\" names no cluster", context);
    cl = kc_find(s, "clusters", cluster, &ff, &fi);
    if (!cl)
        return kc_fail(err, -ENOENT, cf, json_object_get(body, "cluster"), prefix,
                       "cluster \"%s\" not found", cluster);
    /* a context naming no user is the anonymous user, as in kubectl */
    us = user ? kc_find(s, "users", user, &uf, &ui) : NULL;
    if (user && !us)
        return kc_fail(err, -ENOENT, cf, json_object_get(body, "user"), prefix,
                       "user \"%s\" not found", user);
    if ((rc = kc_cluster(ff, cl, fi, out, err)) || (us && (rc = kc_user(uf, us, ui, out, err))))
        return rc;
    out->namespace = strdup(ns ? ns : "default");
    if (!out->namespace)
        return err_set(err, -ENOMEM, "out of memory");
    return 0;
}

static int kc_set_source(struct kube_config *out, const struct kc_set *s)
{
    struct buf b = BUF_INIT(0);
    size_t i;
    int rc = buf_puts(&b, "kubeconfig '");

    for (i = 0; !rc && i < s->n; i++)
        rc = buf_printf(&b, "%s%s", i ? ":" : "", s->files[i].path);
    if (!rc)
        rc = buf_puts(&b, "'");
    if (!rc)
        out->source = buf_take(&b);
    buf_release(&b);
    return rc || !out->source ? -ENOMEM : 0;
}

int kube_config_parse(const char *data, size_t len, const char *path, const char *context,
                      struct kube_config *out, struct err *err)
{
    struct kc_set s;
    int rc;

    err_clear(err);
    memset(out, 0, sizeof(*out));
    s.n = 1;
    rc = kc_file_parse(&s.files[0], data, len, path, err);
    if (!rc)
        rc = kc_resolve(&s, context, out, err);
    if (!rc && kc_set_source(out, &s))
        rc = err_set(err, -ENOMEM, "out of memory");
    kc_set_release(&s);
    if (rc)
        kube_config_release(out);
    return rc;
}

/* kc_env_files splits $KUBECONFIG (':'), drops duplicates and empty items, and reads the
 * files that exist. Missing files are skipped, like clientcmd does. */
static int kc_env_files(const char *env, struct kc_set *s, struct err *err)
{
    char *copy = strdup(env), *save = NULL, *p;
    int rc = 0;

    if (!copy)
        return err_set(err, -ENOMEM, "out of memory");
    for (p = strtok_r(copy, ":", &save); p && !rc; p = strtok_r(NULL, ":", &save)) {
        size_t i;
        int dup = 0;

        for (i = 0; i < s->n; i++)
            dup |= !strcmp(s->files[i].path, p);
        if (dup)
            continue;
        if (s->n == KC_FILES_MAX) {
            rc = err_set(err, -E2BIG, "$KUBECONFIG names more than %d files", KC_FILES_MAX);
            break;
        }
        rc = kc_file_read(&s->files[s->n], p, err);
        if (rc == -ENOENT) {
            err_clear(err);
            rc = 0;
            continue;
        }
        s->n++;
    }
    free(copy);
    return rc;
}

int kube_config_load(const char *path, const char *context, struct kube_config *out,
                     struct err *err)
{
    struct kc_set s;
    const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
    char def[4096];
    int rc = 0;

    err_clear(err);
    memset(out, 0, sizeof(*out));
    s.n = 0;
    if (path) {
        rc = kc_file_read(&s.files[0], path, err);
        if (!rc)
            s.n = 1;
    } else if (env && env[0]) {
        rc = kc_env_files(env, &s, err);
    } else if (home && home[0]) {
        snprintf(def, sizeof(def), "%s/.kube/config", home);
        rc = kc_file_read(&s.files[0], def, err);
        if (!rc)
            s.n = 1;
        else if (rc == -ENOENT) {
            err_clear(err);
            rc = 0;
        }
    }
    if (rc)
        goto out;
    if (!s.n) {
        if (getenv("KUBERNETES_SERVICE_HOST") && getenv("KUBERNETES_SERVICE_HOST")[0]) {
            rc = kube_config_in_cluster(out, err);
            goto out;
        }
        rc = err_set(err, -ENOENT,
                     "no kubeconfig found (%s) and not running in a cluster "
                     "(KUBERNETES_SERVICE_HOST is unset); pass --kubeconfig",
                     env && env[0] ? "none of the files in $KUBECONFIG exist"
                                   : "~/.kube/config does not exist");
        goto out;
    }
    rc = kc_resolve(&s, context, out, err);
    if (!rc && kc_set_source(out, &s))
        rc = err_set(err, -ENOMEM, "out of memory");
out:
    kc_set_release(&s);
    if (rc)
        kube_config_release(out);
    return rc;
}

const char *kube_config_sa_dir(void)
{
    const char *d = getenv("GPULABEL_SA_DIR");

    return d && d[0] ? d : KUBE_SA_DIR;
}

static void kc_trim(char *s)
{
    size_t n = strlen(s), i = 0;

    while (n && strchr(" \t\r\n", s[n - 1]))
        s[--n] = '\0';
    while (s[i] && strchr(" \t\r\n", s[i]))
        i++;
    if (i)
        memmove(s, s + i, n - i + 1);
}

int kube_token_read(const char *path, char **out, struct err *err)
{
    struct buf b = BUF_INIT(KC_TOKEN_MAX);
    int rc = buf_read_file(path, &b);

    *out = NULL;
    if (rc)
        return err_set(err, rc, "cannot read token file '%s': %s", path,
                       rc == -E2BIG ? "larger than 64 KiB" : strerror(-rc));
    kc_trim(b.data);
    if (!b.data[0]) {
        buf_release(&b);
        return err_set(err, -ENODATA, "token file '%s' is empty", path);
    }
    if (strpbrk(b.data, "\r\n")) {
        buf_release(&b);
        return err_set(err, -EINVAL, "token file '%s' holds more than one line", path);
    }
    if (http1_value_bad(b.data)) {
        int ch = (unsigned char)*http1_value_bad(b.data);

        buf_release(&b);
        return err_set(err, -EINVAL, "token file '%s' holds a control character (0x%02x)", path,
                       ch);
    }
    *out = buf_take(&b);
    buf_release(&b);
    return *out ? 0 : err_set(err, -ENOMEM, "out of memory");
}

int kube_config_in_cluster(struct kube_config *out, struct err *err)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    const char *dir = kube_config_sa_dir(), *ns_env = getenv("POD_NAMESPACE");
    struct buf b = BUF_INIT(KC_PEM_MAX);
    char path[4096];
    int rc;

    err_clear(err);
    memset(out, 0, sizeof(*out));
    if (!host || !host[0] || !port || !port[0])
        return err_set(err, -ENOENT,
                       "unable to load in-cluster configuration, "
                       "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined");
    /* an IPv6 address needs brackets in a URL (net.JoinHostPort) */
    out->server = strchr(host, ':') ? buf_fmt("https://[%s]:%s", host, port)
                                    : buf_fmt("https://%s:%s", host, port);
    out->source = strdup("in-cluster service account");
    if (!out->server || !out->source) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    out->in_cluster = true;
    snprintf(path, sizeof(path), "%s/token", dir);
    out->token_file = strdup(path);
    if (!out->token_file) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    rc = kube_token_read(path, &out->token, err);
    if (rc) {
        err_prefix(err, "in-cluster service account");
        goto out;
    }
    snprintf(path, sizeof(path), "%s/ca.crt", dir);
    if (!buf_read_file(path, &b) && b.len) {
        out->ca_len = b.len;
        out->ca_pem = buf_take(&b);
        out->ca_file = strdup(path);
    }
    buf_release(&b);
    if (ns_env && ns_env[0]) {
        out->namespace = strdup(ns_env);
    } else {
        snprintf(path, sizeof(path), "%s/namespace", dir);
        b.cap = 4096;
        if (!buf_read_file(path, &b)) {
            kc_trim(b.data);
            if (b.data[0])
                out->namespace = buf_take(&b);
        }
        buf_release(&b);
        if (!out->namespace)
            out->namespace = strdup("default");
    }
    if (!out->namespace)
        rc = err_set(err, -ENOMEM, "out of memory");
out:
    if (rc)
        kube_config_release(out);
    return rc;
}

void kube_config_release(struct kube_config *c)
{
    if (!c)
        return;
    free(c->server);
    free(c->tls_server_name);
    free(c->proxy_url);
    free(c->ca_pem);
    free(c->ca_file);
    free(c->cert_pem);
    if (c->key_pem)
        memset(c->key_pem, 0, c->key_len);
    free(c->key_pem);
    if (c->token)
        memset(c->token, 0, strlen(c->token));
    free(c->token);
    free(c->token_file);
    kc_exec_free(c->exec);
    free(c->exec_cluster_config);
    free(c->namespace);
    free(c->source);
    memset(c, 0, sizeof(*c));
}

static int b64_value(unsigned char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '+')
        return 62;
    if (ch == '/')
        return 63;
    return -1;
}

int kube_base64_decode(const char *in, size_t len, struct buf *out, size_t *bad_at)
{
    unsigned int quad = 0;
    size_t i, q = 0, pad = 0, last = 0;
    bool ended = false;
    int v, rc;

    for (i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)in[i];

        if (ch == '\r' || ch == '\n')
            continue;
        last = i;
        if (ended)
            goto bad;
        if (ch == '=') {
            if (q < 2)
                goto bad;
            pad++;
            v = 0;
        } else {
            v = b64_value(ch);
            if (v < 0 || pad)
                goto bad;
        }
        quad = (quad << 6) | (unsigned int)v;
        if (++q == 4) {
            unsigned char bytes[3] = {(unsigned char)(quad >> 16), (unsigned char)(quad >> 8),
                                      (unsigned char)quad};

            rc = buf_append(out, bytes, 3 - pad);
            if (rc)
                return rc;
            ended = pad > 0;
            q = 0;
            quad = 0;
        }
    }
    if (q == 0)
        return out->data ? 0 : buf_append(out, "", 0);
    i = q == 1 ? last : len;
bad:
    if (bad_at)
        *bad_at = i;
    return -EINVAL;
}
