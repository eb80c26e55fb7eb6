/* exec.c - exec credential plugins (exec.h): fork and exec the command with the environment
 * client-go gives it, read its ExecCredential from a pipe, check it is of the configured
 * apiVersion and holds a token or a certificate and key.
 *
 * The child reports a failed execvp through a close-on-exec pipe, so "not found" is told apart
 * from a plugin that ran and failed. */
#include "kube/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/quote.h"

extern char **environ;

void kube_exec_cred_release(struct kube_exec_cred *c)
{
    if (!c)
        return;
    if (c->token)
        memset(c->token, 0, strlen(c->token));
    if (c->key_pem)
        memset(c->key_pem, 0, c->key_len);
    free(c->token);
    free(c->cert_pem);
    free(c->key_pem);
    memset(c, 0, sizeof(*c));
}

static int exec_digits(const char *s, int n, int *out)
{
    int i, v = 0;

    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -EINVAL;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

int kube_rfc3339_parse(const char *s, time_t *out)
{
    struct tm tm;
    int y, mo, d, h, mi, sec, oh = 0, om = 0;
    const char *p;
    time_t t;

    memset(&tm, 0, sizeof(tm));
    if (!s || strlen(s) < 20 || exec_digits(s, 4, &y) || s[4] != '-' ||
        exec_digits(s + 5, 2, &mo) || s[7] != '-' || exec_digits(s + 8, 2, &d) ||
        (s[10] != 'T' && s[10] != 't') || exec_digits(s + 11, 2, &h) || s[13] != ':' ||
        exec_digits(s + 14, 2, &mi) || s[16] != ':' || exec_digits(s + 17, 2, &sec))
        return -EINVAL;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return -EINVAL;
    p = s + 19;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return -EINVAL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        if (exec_digits(p + 1, 2, &oh) || p[3] != ':' || exec_digits(p + 4, 2, &om))
            return -EINVAL;
        if (*p == '-') {
            oh = -oh;
            om = -om;
        }
        p += 6;
    } else {
        return -EINVAL;
    }
    if (*p)
        return -EINVAL;
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    t = timegm(&tm);
    if (t == (time_t)-1)
        return -EINVAL;
    *out = t - (time_t)oh * 3600 - (time_t)om * 60;
    return 0;
}

static char *exec_base64(const char *in, size_t len)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;
    size_t i;

    if (!out)
        return NULL;
    for (i = 0; i + 2 < len; i += 3) {
        unsigned v =
            (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
        *o++ = tab[v >> 18];
        *o++ = tab[(v >> 12) & 63];
        *o++ = tab[(v >> 6) & 63];
        *o++ = tab[v & 63];
    }
    if (i < len) {
        unsigned v = (unsigned char)in[i] << 16 | (i + 1 < len ? (unsigned char)in[i + 1] << 8 : 0);
        *o++ = tab[v >> 18];
        *o++ = tab[(v >> 12) & 63];
        *o++ = i + 1 < len ? tab[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    *o = '\0';
    return out;
}

/* exec_info builds KUBERNETES_EXEC_INFO's value: an ExecCredential with spec.interactive and,
 * when asked for, spec.cluster. */
static char *exec_info(const struct kube_config *cfg, bool interactive)
{
    const struct kube_exec *x = cfg->exec;
    json_t *doc = json_object(), *spec = json_object();
    char *s = NULL;
    int fail = !doc || !spec;

    fail |= json_object_set_new(doc, "kind", json_string("ExecCredential"));
    fail |= json_object_set_new(doc, "apiVersion", json_string(x->api_version));
    fail |= json_object_set_new(spec, "interactive", json_boolean(interactive));
    if (x->provide_cluster_info) {
        json_t *cl = json_object();
        fail |= !cl;
        fail |= json_object_set_new(cl, "server", json_string(cfg->server));
        if (cfg->tls_server_name)
            fail |= json_object_set_new(cl, "tls-server-name", json_string(cfg->tls_server_name));
        if (cfg->insecure)
            fail |= json_object_set_new(cl, "insecure-skip-tls-verify", json_true());
        if (cfg->ca_pem) {
            char *b = exec_base64(cfg->ca_pem, cfg->ca_len);
            fail |= !b || json_object_set_new(cl, "certificate-authority-data", json_string(b));
            free(b);
        }
        if (cfg->proxy_url)
            fail |= json_object_set_new(cl, "proxy-url", json_string(cfg->proxy_url));
        if (cfg->disable_compression)
            fail |= json_object_set_new(cl, "disable-compression", json_true());
        if (cfg->exec_cluster_config) {
            json_t *c = json_loads(cfg->exec_cluster_config, JSON_DECODE_ANY, NULL);
            fail |= !c || json_object_set_new(cl, "config", c);
        }
        fail |= json_object_set_new(spec, "cluster", cl);
    }
    fail |= json_object_set_new(doc, "spec", spec);
    spec = NULL;
    if (!fail)
        s = json_dumps(doc, JSON_COMPACT);
    json_decref(spec);
    json_decref(doc);
    return s;
}

static int exec_fail(struct err *err, int code, const struct kube_exec *x, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int exec_fail(struct err *err, int code, const struct kube_exec *x, const char *fmt, ...)
{
    char what[ERR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return err_set(err, code, "exec plugin '%s': %s", x->command, what);
}

/* exec_spawn runs the plugin and collects its standard output into out. */
static int exec_spawn(const struct kube_config *cfg, bool interactive, struct buf *out,
                      struct err *err)
{
    const struct kube_exec *x = cfg->exec;
    size_t nenv = 0, i, k = 0;
    char **envp = NULL, **argv = NULL, *info = NULL, *infoenv = NULL;
    int outp[2] = {-1, -1}, errp[2] = {-1, -1}, status, child_errno = 0, rc = 0;
    pid_t pid = -1;
    bool too_big = false;

    while (environ && environ[nenv])
        nenv++;
    envp = calloc(nenv + x->nenv + 2, sizeof(*envp));
    argv = calloc(x->nargs + 2, sizeof(*argv));
    info = exec_info(cfg, interactive);
    if (info)
        infoenv = buf_fmt("KUBERNETES_EXEC_INFO=%s", info);
    if (!envp || !argv || !infoenv) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    /* the plugin's env entries override the inherited ones of the same name */
    for (i = 0; i < nenv; i++) {
        size_t j, nl = strcspn(environ[i], "=");
        bool overridden = !strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21);
        for (j = 0; j < x->nenv && !overridden; j++)
            overridden = !strncmp(environ[i], x->env[j], nl + 1);
        if (!overridden)
            envp[k++] = environ[i];
    }
    for (i = 0; i < x->nenv; i++)
        envp[k++] = x->env[i];
    envp[k++] = infoenv;
    argv[0] = x->command;
    for (i = 0; i < x->nargs; i++)
        argv[1 + i] = x->args[i];
    if (pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
        rc = exec_fail(err, -errno, x, "cannot create a pipe: %s", strerror(errno));
        goto out;
    }
    pid = fork();
    if (pid < 0) {
        rc = exec_fail(err, -errno, x, "cannot fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) {
        int e;
        signal(SIGPIPE, SIG_DFL);
        if (!interactive) {
            int devnull = open("/dev/null", O_RDONLY);
            if (devnull >= 0 && devnull != 0) {
                dup2(devnull, 0);
                close(devnull);
            }
        }
        dup2(outp[1], 1);
        execvpe(x->command, argv, envp);
        e = errno;
        if (write(errp[1], &e, sizeof(e)) < 0)
            _exit(127);
        _exit(127);
    }
    close(outp[1]);
    close(errp[1]);
    outp[1] = errp[1] = -1;
    for (;;) {
        char chunk[8192];
        ssize_t n = read(outp[0], chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (!too_big && buf_append(out, chunk, (size_t)n))
            too_big = true; /* keep reading so the plugin is not stopped by a full pipe */
    }
    if (read(errp[0], &child_errno, sizeof(child_errno)) != sizeof(child_errno))
        child_errno = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (child_errno == ENOENT) {
        rc = exec_fail(err, -ENOENT, x, "executable not found%s%s", x->install_hint ? "; " : "",
                       x->install_hint ? x->install_hint : "");
    } else if (child_errno) {
        rc = exec_fail(err, -child_errno, x, "cannot run: %s", strerror(child_errno));
    } else if (WIFSIGNALED(status)) {
        rc = exec_fail(err, -EIO, x, "killed by signal %d", WTERMSIG(status));
    } else if (WEXITSTATUS(status)) {
        rc = exec_fail(err, -EIO, x, "exit status %d", WEXITSTATUS(status));
    } else if (too_big) {
        rc = exec_fail(err, -E2BIG, x, "output larger than %zu KiB", KUBE_EXEC_OUTPUT_MAX >> 10);
    }
out:
    for (i = 0; i < 2; i++) {
        if (outp[i] >= 0)
            close(outp[i]);
        if (errp[i] >= 0)
            close(errp[i]);
    }
    free(info);
    free(infoenv);
    free(envp);
    free(argv);
    return rc;
}

static char *exec_dup_status(const json_t *st, const char *key, size_t *len)
{
    const json_t *v = json_object_get(st, key);
    char *s;

    if (!json_is_string(v) || !json_string_length(v))
        return NULL;
    s = strdup(json_string_value(v));
    if (s && len)
        *len = strlen(s);
    return s;
}

int kube_exec_cred_parse(const struct kube_exec *x, const char *data, size_t len,
                         struct kube_exec_cred *out, struct err *err)
{
    json_t *doc, *st;
    const char *av, *kind, *exp;
    char q[256];
    int rc = 0;

    memset(out, 0, sizeof(out[0]));
    doc = len ? json_loadb(data, len, 0, NULL) : NULL;
    if (!json_is_object(doc)) {
        rc = exec_fail(err, -EPROTO, x, "the output is not an ExecCredential (JSON object)");
        goto out;
    }
    kind = json_string_value(json_object_get(doc, "kind"));
    av = json_string_value(json_object_get(doc, "apiVersion"));
    if (!kind || strcmp(kind, "ExecCredential")) {
        rc = exec_fail(err, -EPROTO, x, "returned kind %s, want ExecCredential",
                       quote_go_to(q, sizeof(q), kind ? kind : "", kind ? strlen(kind) : 0));
        goto out;
    }
    if (!av || strcmp(av, x->api_version)) {
        rc = exec_fail(err, -EPROTO, x,
                       "is configured to use API version %s, plugin returned version %s",
                       x->api_version, av ? av : "(none)");
        goto out;
    }
    st = json_object_get(doc, "status");
    if (!json_is_object(st)) {
        rc = exec_fail(err, -EPROTO, x, "didn't return a status field");
        goto out;
    }
    out->token = exec_dup_status(st, "token", NULL);
    out->cert_pem = exec_dup_status(st, "clientCertificateData", &out->cert_len);
    out->key_pem = exec_dup_status(st, "clientKeyData", &out->key_len);
    if (!out->token && !out->cert_pem && !out->key_pem) {
        rc = exec_fail(err, -EPROTO, x, "didn't return a token or cert/key pair");
        goto out;
    }
    if (!out->cert_pem != !out->key_pem) {
        rc = exec_fail(err, -EPROTO, x, "returned only certificate or key, not both");
        goto out;
    }
    exp = json_string_value(json_object_get(st, "expirationTimestamp"));
    if (exp && *exp && kube_rfc3339_parse(exp, &out->expiry)) {
        rc = exec_fail(err, -EPROTO, x, "status.expirationTimestamp %s is not RFC 3339",
                       quote_go_to(q, sizeof(q), exp, strlen(exp)));
        goto out;
    }
out:
    if (rc)
        kube_exec_cred_release(out);
    json_decref(doc);
    return rc;
}

int kube_exec_run(const struct kube_config *cfg, struct kube_exec_cred *out, struct err *err)
{
    const struct kube_exec *x = cfg->exec;
    struct buf b = BUF_INIT(KUBE_EXEC_OUTPUT_MAX);
    bool interactive;
    int rc;

    memset(out, 0, sizeof(out[0]));
    interactive = x->interactive != KUBE_EXEC_NEVER && isatty(0);
    if (x->interactive == KUBE_EXEC_ALWAYS && !interactive)
        return exec_fail(err, -EINVAL, x,
                         "interactiveMode is Always but standard input is not a terminal");
    rc = exec_spawn(cfg, interactive, &b, err);
    if (!rc)
        rc = kube_exec_cred_parse(x, b.data, b.len, out, err);
    if (b.data)
        memset(b.data, 0, b.len);
    buf_release(&b);
    return rc;
}
