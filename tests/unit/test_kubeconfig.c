/* test_kubeconfig.c - kubeconfig parsing, merging, relative paths, in-cluster config and
 * base64, with the exact error messages users see. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube/exec.h"
#include "kube/kubeconfig.h"
#include "test.h"

#define CA_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkFBQUEKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="
#define KEY_B64 "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCkFBQUEKLS0tLS1FTkQgUFJJVkFURSBLRVktLS0tLQo="
#define CA_PEM "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"

static const char *tmpdir(void)
{
    static char dir[64];

    if (!dir[0]) {
        snprintf(dir, sizeof(dir), "/tmp/kctest-XXXXXX");
        if (!mkdtemp(dir))
            dir[0] = '\0';
    }
    return dir;
}

static const char *write_file(const char *name, const char *text)
{
    static char paths[8][256];
    static int next;
    char *p = paths[next++ % 8];
    FILE *f;

    snprintf(p, 256, "%s/%s", tmpdir(), name);
    f = fopen(p, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return p;
}

static int parse(const char *text, const char *context, struct kube_config *c, struct err *e)
{
    err_clear(e);
    return kube_config_parse(text, strlen(text), "/etc/kc.yaml", context, c, e);
}

#define CHECK_ERR_HAS(e, s)                                                                        \
    do {                                                                                           \
        if (!strstr((e).msg, (s)))                                                                 \
            test_fail(__FILE__, __LINE__, "error \"%s\" lacks \"%s\"", (e).msg, (s));              \
    } while (0)

static const char *BASIC = "apiVersion: v1\n"
                           "kind: Config\n"
                           "clusters:\n"
                           "- name: c1\n"
                           "  cluster:\n"
                           "    server: https://10.0.0.1:6443/\n"
                           "    certificate-authority-data: " CA_B64 "\n"
                           "- name: c2\n"
                           "  cluster:\n"
                           "    server: http://127.0.0.1:8080\n"
                           "    tls-server-name: api.example\n"
                           "users:\n"
                           "- name: u1\n"
                           "  user:\n"
                           "    token: abc.def\n"
                           "- name: u2\n"
                           "  user:\n"
                           "    client-certificate-data: " CA_B64 "\n"
                           "    client-key-data: " KEY_B64 "\n"
                           "contexts:\n"
                           "- name: x1\n"
                           "  context: {cluster: c1, user: u1, namespace: gpu}\n"
                           "- name: x2\n"
                           "  context: {cluster: c2, user: u2}\n"
                           "current-context: x1\n";

static void kc_basic_current_context(void)
{
    struct kube_config c;
    struct err e;

    CHECK_INT_EQ(parse(BASIC, NULL, &c, &e), 0);
    CHECK_STR_EQ(c.server, "https://10.0.0.1:6443");
    CHECK_STR_EQ(c.token, "abc.def");
    CHECK_STR_EQ(c.namespace, "gpu");
    CHECK(c.ca_pem && c.ca_len == strlen(CA_PEM) && !memcmp(c.ca_pem, CA_PEM, c.ca_len));
    CHECK(!c.insecure && !c.cert_pem && !c.token_file && !c.in_cluster && !c.ca_file);
    CHECK_STR_EQ(c.source, "kubeconfig '/etc/kc.yaml'");
    kube_config_release(&c);
}

/* A user without credentials (`user: {}`, or a context naming no user) is anonymous, as in
 * kubectl: no token, no client certificate, and the requests carry no Authorization. */
static void kc_anonymous_user(void)
{
    /* each text in parentheses: one literal made of several lines, not a missing comma */
    static const char *const texts[] = {
        ("clusters: [{name: c, cluster: {server: 'http://127.0.0.1:8001'}}]\n"
         "users: [{name: u, user: {}}]\n"
         "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"),
        ("clusters: [{name: c, cluster: {server: 'http://127.0.0.1:8001'}}]\n"
         "users: [{name: u}]\n"
         "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"),
        ("clusters: [{name: c, cluster: {server: 'http://127.0.0.1:8001'}}]\n"
         "contexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n"),
    };
    size_t i;

    for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        struct kube_config c;
        struct err e;

        CHECK_INT_EQ(parse(texts[i], NULL, &c, &e), 0);
        CHECK_STR_EQ(c.server, "http://127.0.0.1:8001");
        CHECK(!c.token && !c.token_file && !c.cert_pem && !c.key_pem);
        kube_config_release(&c);
    }
}

static void kc_proxy_and_compression(void)
{
    struct kube_config c;
    struct err e;

    CHECK_INT_EQ(
        parse("clusters: [{name: c, cluster: {server: 'https://h', proxy-url: "
              "'socks5://p:1080', disable-compression: true}}]\n"
              "users: [{name: u, user: {token: t}}]\n"
              "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
              NULL, &c, &e),
        0);
    CHECK_STR_EQ(c.proxy_url, "socks5://p:1080");
    CHECK(c.disable_compression);
    kube_config_release(&c);
    CHECK_INT_EQ(
        parse("clusters: [{name: c, cluster: {server: 'https://h', proxy-url: 'p:3128'}}]\n"
              "users: [{name: u, user: {token: t}}]\n"
              "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
              NULL, &c, &e),
        -EINVAL);
    CHECK_ERR_HAS(e, "line 1: clusters[0].cluster: proxy-url \"p:3128\" must be an http://");
}

static void kc_explicit_context_with_client_cert(void)
{
    struct kube_config c;
    struct err e;

    CHECK_INT_EQ(parse(BASIC, "x2", &c, &e), 0);
    CHECK_STR_EQ(c.server, "http://127.0.0.1:8080");
    CHECK_STR_EQ(c.tls_server_name, "api.example");
    CHECK(c.token == NULL);
    CHECK(c.cert_pem && strstr(c.cert_pem, "BEGIN CERTIFICATE"));
    CHECK(c.key_pem && strstr(c.key_pem, "BEGIN PRIVATE KEY"));
    CHECK_STR_EQ(c.namespace, "default");
    kube_config_release(&c);
}

static void kc_missing_context(void)
{
    struct kube_config c;
    struct err e;

    CHECK_INT_EQ(parse(BASIC, "nope", &c, &e), -ENOENT);
    CHECK_STR_EQ(e.msg, "cannot read kubeconfig '/etc/kc.yaml': context \"nope\" not found");
    CHECK(c.server == NULL);
}

static void kc_bad_yaml_line(void)
{
    struct kube_config c;
    struct err e;
    const char *text = "apiVersion: v1\nclusters:\n- name: c\n  cluster: server: x\n";

    CHECK(parse(text, NULL, &c, &e) < 0);
    CHECK_ERR_HAS(e, "cannot read kubeconfig '/etc/kc.yaml': line 4: ");
}

static void kc_base64_error_names_line_and_field(void)
{
    struct kube_config c;
    struct err e;
    const char *text = "clusters:\n"
                       "- name: c\n"
                       "  cluster:\n"
                       "    server: https://h\n"
                       "    certificate-authority-data: QUJD$\n"
                       "users: [{name: u, user: {token: t}}]\n"
                       "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
                       "current-context: x\n";

    CHECK_INT_EQ(parse(text, NULL, &c, &e), -EINVAL);
    CHECK_STR_EQ(e.msg, "cannot read kubeconfig '/etc/kc.yaml': line 5: "
                        "clusters[0].cluster.certificate-authority-data: "
                        "illegal base64 data at input byte 4");
}

static void kc_not_pem(void)
{
    struct kube_config c;
    struct err e;
    const char *text = "clusters: [{name: c, cluster: {server: 'https://h', "
                       "certificate-authority-data: aGVsbG8=}}]\n"
                       "users: [{name: u, user: {token: t}}]\n"
                       "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
                       "current-context: x\n";

    CHECK_INT_EQ(parse(text, NULL, &c, &e), -EINVAL);
    CHECK_ERR_HAS(e, "does not hold a PEM CERTIFICATE");
}

struct bad_case {
    const char *yaml;
    const char *want;
};

static void kc_semantic_errors(void)
{
    static const struct bad_case cases[] = {
        {"clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
         "users:\n- name: u\n  user:\n    exec: {command: aws}\n"
         "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
         "line 5: users[0].user.exec: apiVersion must be specified"},
        {"clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
         "users:\n- name: u\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1, "
         "command: aws}\n"
         "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
         "interactiveMode must be specified for aws to use exec authentication plugin"},
        {"clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
         "users:\n- name: u\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1alpha1, "
         "command: aws}\n"
         "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
         "apiVersion \"client.authentication.k8s.io/v1alpha1\" is not supported"},
        {"clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
         "users:\n- name: u\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1, "
         "command: aws, interactiveMode: Sometimes}\n"
         "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
         "invalid interactiveMode \"Sometimes\""},
        {"clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
         "users:\n- name: u\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1, "
         "command: aws, interactiveMode: Never, env: [{name: A}]}\n"
         "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
         "env[0] must have a name and a string value"},
        {"clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
         "users: [{name: u, user: {auth-provider: {name: gcp}}}]\n"
         "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
         "auth-provider plugins are not supported"},
        {"clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
         "users: [{name: u, user: {client-certificate-data: " CA_B64 "}}]\n"
         "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
         "client-certificate given without client-key"},
        {"clusters: [{name: c, cluster: {server: 'https://h', insecure-skip-tls-verify: true, "
         "certificate-authority-data: " CA_B64 "}}]\n"
         "users: [{name: u, user: {token: t}}]\n"
         "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
         "specifying a root certificates file with the insecure flag is not allowed"},
        {"clusters: [{name: c, cluster: {insecure-skip-tls-verify: true}}]\n"
         "users: [{name: u, user: {token: t}}]\n"
         "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
         "cluster \"c\" has no server defined"},
        {"clusters: [{name: c, cluster: {server: 'h:443'}}]\n"
         "users: [{name: u, user: {token: t}}]\n"
         "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
         "server \"h:443\" must be an https:// or http:// URL"},
        {"clusters: [{name: c, cluster: {server: 'https://h', insecure-skip-tls-verify: 'yes'}}]\n"
         "users: [{name: u, user: {token: t}}]\n"
         "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
         "insecure-skip-tls-verify must be true or false"},
        {"clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
         "users: [{name: u, user: {token: t}}]\n"
         "contexts:\n- name: x\n  context: {cluster: c2, user: u}\ncurrent-context: x\n",
         "line 5: contexts[0].context: cluster \"c2\" not found"},
        {"clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
         "users: [{name: u, user: {token: t}}]\n"
         "contexts: [{name: x, context: {cluster: c, user: v}}]\ncurrent-context: x\n",
         "user \"v\" not found"},
        {"clusters: {c: 1}\n",
         "line 1: json: cannot unmarshal object into Go struct field Config.clusters of "
         "type []v1.NamedCluster"},
        {"clusters:\n- name: c\n  cluster: [1]\n",
         "line 3: json: cannot unmarshal array into Go struct field "
         "NamedCluster.clusters.cluster of type v1.Cluster"},
        {"clusters:\n- cluster: {server: 'https://h'}\n",
         "clusters[0]: name must be a non-empty string"},
        {"clusters: [{name: c, cluster: {server: [1]}}]\n"
         "users: [{name: u, user: {token: t}}]\n"
         "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
         "line 1: json: cannot unmarshal array into Go struct field "
         "Cluster.clusters.cluster.server of type string"},
        {"- a\n- b\n", "line 1: json: cannot unmarshal array into Go value of type struct { "
                       "APIVersion string"},
        {"", "current-context is not set and no context was given"},
        {"users: [{name: u, user: {username: a, password: b}}]\n"
         "clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
         "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
         "basic authentication (username/password) is not supported"},
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct kube_config c;
        struct err e;
        int rc = parse(cases[i].yaml, NULL, &c, &e);

        if (rc >= 0 || !strstr(e.msg, cases[i].want))
            test_fail(__FILE__, __LINE__, "case %zu: rc %d, error \"%s\" lacks \"%s\"", i, rc,
                      e.msg, cases[i].want);
        if (strncmp(e.msg, "cannot read kubeconfig '/etc/kc.yaml': ", 39))
            test_fail(__FILE__, __LINE__, "case %zu: message without the file: %s", i, e.msg);
    }
}

static void kc_relative_paths(void)
{
    struct kube_config c;
    struct err e;
    char dir[256];
    const char *kc;

    snprintf(dir, sizeof(dir), "%s/rel", tmpdir());
    mkdir(dir, 0700);
    write_file("rel/ca.crt", CA_PEM);
    write_file("rel/tok", "  sekrit-token\n");
    kc = write_file(
        "rel/config",
        "clusters: [{name: c, cluster: {server: 'https://h', certificate-authority: ca.crt}}]\n"
        "users: [{name: u, user: {tokenFile: tok}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n");
    err_clear(&e);
    CHECK_INT_EQ(kube_config_load(kc, NULL, &c, &e), 0);
    CHECK_STR_EQ(e.msg, "");
    CHECK(c.ca_pem && !strcmp(c.ca_pem, CA_PEM));
    CHECK(c.ca_file && c.ca_file[0] == '/' && strstr(c.ca_file, "/rel/ca.crt"));
    CHECK_STR_EQ(c.token, "sekrit-token");
    CHECK(c.token_file && strstr(c.token_file, "/rel/tok") && c.token_file[0] == '/');
    kube_config_release(&c);

    kc = write_file(
        "rel/config2",
        "clusters: [{name: c, cluster: {server: 'https://h', certificate-authority: nope.crt}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n");
    CHECK(kube_config_load(kc, NULL, &c, &e) < 0);
    CHECK_ERR_HAS(e, "line 1: clusters[0].cluster.certificate-authority: cannot read '");
    CHECK_ERR_HAS(e, "/rel/nope.crt': No such file or directory");
}

static void kc_token_file_missing(void)
{
    struct kube_config c;
    struct err e;

    CHECK(parse("clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
                "users: [{name: u, user: {tokenFile: /nonexistent/tok}}]\n"
                "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
                NULL, &c, &e) < 0);
    CHECK_ERR_HAS(e, "line 2: users[0].user: tokenFile: cannot read token file '/nonexistent/tok'");
}

static void kc_explicit_path_missing(void)
{
    struct kube_config c;
    struct err e;

    err_clear(&e);
    CHECK_INT_EQ(kube_config_load("/nonexistent/kc", NULL, &c, &e), -ENOENT);
    CHECK_STR_EQ(e.msg, "cannot read kubeconfig '/nonexistent/kc': No such file or directory");
}

static void kc_env_merge_first_wins(void)
{
    struct kube_config c;
    struct err e;
    char env[1024];
    const char *a, *b;

    a = write_file("a.yaml", "users: [{name: u, user: {token: from-a}}]\ncurrent-context: x\n");
    b = write_file("b.yaml",
                   "clusters: [{name: c, cluster: {server: 'https://b'}}]\n"
                   "users: [{name: u, user: {token: from-b}}]\n"
                   "contexts: [{name: x, context: {cluster: c, user: u}}, "
                   "{name: other, context: {cluster: c, user: u}}]\ncurrent-context: other\n");
    snprintf(env, sizeof(env), "%s/missing.yaml:%s:%s:%s", tmpdir(), a, b, a);
    setenv("KUBECONFIG", env, 1);
    err_clear(&e);
    CHECK_INT_EQ(kube_config_load(NULL, NULL, &c, &e), 0);
    CHECK_STR_EQ(e.msg, "");
    CHECK_STR_EQ(c.server, "https://b");
    CHECK_STR_EQ(c.token, "from-a"); /* user u and current-context x come from the first file */
    CHECK(c.source && strstr(c.source, "a.yaml:") && strstr(c.source, "b.yaml"));
    kube_config_release(&c);
    unsetenv("KUBECONFIG");
}

static void kc_in_cluster(void)
{
    struct kube_config c;
    struct err e;
    char dir[256], *home;

    snprintf(dir, sizeof(dir), "%s/sa", tmpdir());
    mkdir(dir, 0700);
    write_file("sa/token", "tok-1\n");
    write_file("sa/ca.crt", CA_PEM);
    write_file("sa/namespace", "gpu-system\n");
    setenv("GPULABEL_SA_DIR", dir, 1);
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    unsetenv("POD_NAMESPACE");
    err_clear(&e);
    CHECK_INT_EQ(kube_config_in_cluster(&c, &e), 0);
    CHECK_STR_EQ(c.server, "https://[fd00::1]:443");
    CHECK_STR_EQ(c.token, "tok-1");
    CHECK_STR_EQ(c.namespace, "gpu-system");
    CHECK(c.in_cluster && c.ca_pem && c.token_file && strstr(c.token_file, "/sa/token"));
    CHECK(c.ca_file && strstr(c.ca_file, "/sa/ca.crt"));
    kube_config_release(&c);

    /* no kubeconfig anywhere: kube_config_load falls back to the service account */
    home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("HOME", dir, 1);
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    CHECK_INT_EQ(kube_config_load(NULL, NULL, &c, &e), 0);
    CHECK_STR_EQ(c.server, "https://10.96.0.1:443");
    kube_config_release(&c);
    if (home)
        setenv("HOME", home, 1);
    free(home);

    write_file("sa/token", "\n");
    CHECK_INT_EQ(kube_config_in_cluster(&c, &e), -ENODATA);
    CHECK_ERR_HAS(e, "in-cluster service account: token file '");
    CHECK_ERR_HAS(e, "/sa/token' is empty");

    unsetenv("KUBERNETES_SERVICE_PORT");
    CHECK_INT_EQ(kube_config_in_cluster(&c, &e), -ENOENT);
    CHECK_ERR_HAS(e, "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("GPULABEL_SA_DIR");
    CHECK_STR_EQ(kube_config_sa_dir(), KUBE_SA_DIR);
}

static void kc_base64(void)
{
    struct buf b = BUF_INIT(0);
    size_t bad = 0;

    CHECK_INT_EQ(kube_base64_decode("aGVs\nbG8=", 9, &b, NULL), 0);
    CHECK_STR_EQ(b.data, "hello");
    buf_release(&b);
    CHECK_INT_EQ(kube_base64_decode("aGk=", 4, &b, NULL), 0);
    CHECK_STR_EQ(b.data, "hi");
    buf_release(&b);
    CHECK_INT_EQ(kube_base64_decode("", 0, &b, NULL), 0);
    CHECK_STR_EQ(b.data, "");
    buf_release(&b);
    CHECK_INT_EQ(kube_base64_decode("aGk", 3, &b, &bad), -EINVAL);
    CHECK_INT_EQ(bad, 3);
    buf_release(&b);
    CHECK_INT_EQ(kube_base64_decode("aGk=aGk=", 8, &b, &bad), -EINVAL);
    CHECK_INT_EQ(bad, 4);
    buf_release(&b);
    CHECK_INT_EQ(kube_base64_decode("a===", 4, &b, &bad), -EINVAL);
    CHECK_INT_EQ(bad, 1);
    buf_release(&b);
    CHECK_INT_EQ(kube_base64_decode("aG=k", 4, &b, &bad), -EINVAL);
    CHECK_INT_EQ(bad, 3);
    buf_release(&b);
}

static void kc_token_read_trims(void)
{
    struct err e;
    char *tok = NULL;
    const char *p = write_file("tok2", "\n abc \n");

    CHECK_INT_EQ(kube_token_read(p, &tok, &e), 0);
    CHECK_STR_EQ(tok, "abc");
    free(tok);
    p = write_file("tok3", "a\nb\n");
    CHECK_INT_EQ(kube_token_read(p, &tok, &e), -EINVAL);
    CHECK(tok == NULL);
}

/* A token is sent as a header value: a CR/LF in it would end the Authorization header and
 * start another (header injection), so any control character is refused, inline or in a
 * tokenFile, with the line and field. */
static void kc_token_control_characters(void)
{
    struct kube_config c;
    struct err e;
    char *tok = NULL;
    const char *p = write_file("tok-ctl", "abc\001def\n");

    CHECK(parse("clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
                "users:\n- name: u\n  user:\n    token: \"abc\\r\\nX-Evil: 1\"\n"
                "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
                NULL, &c, &e) < 0);
    CHECK_ERR_HAS(e, "line 5: users[0].user.token: holds a control character");
    CHECK(parse("clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
                "users: [{name: u, user: {token: \"abc\\tdef\"}}]\n"
                "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
                NULL, &c, &e) < 0);
    CHECK_ERR_HAS(e, "control character");
    err_clear(&e);
    CHECK_INT_EQ(kube_token_read(p, &tok, &e), -EINVAL);
    CHECK(tok == NULL);
    CHECK_ERR_HAS(e, "control character");
}

/* a fake exec plugin: prints what $PLUGIN_OUT holds after recording its environment and args */
static const char *fake_plugin(void)
{
    static char path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/plugin.sh", tmpdir());
    f = fopen(path, "w");
    if (!f)
        return NULL;
    fputs(
        "#!/bin/sh\n"
        "printf '%s\\n' \"$KUBERNETES_EXEC_INFO\" > \"$PLUGIN_DIR/info\"\n"
        "printf '%s|' \"$@\" > \"$PLUGIN_DIR/args\"\n"
        "printf '%s' \"$FROM_KUBECONFIG\" > \"$PLUGIN_DIR/env\"\n"
        "[ -t 0 ] && echo tty >> \"$PLUGIN_DIR/env\"\n"
        "n=$(cat \"$PLUGIN_DIR/runs\" 2>/dev/null || echo 0); echo $((n+1)) > \"$PLUGIN_DIR/runs\"\n"
        "cat \"$PLUGIN_DIR/out\"\n"
        "exit $(cat \"$PLUGIN_DIR/exit\" 2>/dev/null || echo 0)\n",
        f);
    fclose(f);
    chmod(path, 0755);
    setenv("PLUGIN_DIR", tmpdir(), 1);
    return path;
}

static int exec_with(const char *api_version, const char *extra, const char *output,
                     struct kube_exec_cred *cr, struct err *e)
{
    struct kube_config c;
    char yaml[2048];
    int rc;

    memset(cr, 0, sizeof(*cr));
    write_file("out", output);
    snprintf(yaml, sizeof(yaml),
             "clusters: [{name: c, cluster: {server: 'https://h:6443', "
             "certificate-authority-data: " CA_B64 ", extensions: [{name: "
             "client.authentication.k8s.io/exec, extension: {audience: a}}]}}]\n"
             "users:\n- name: u\n  user:\n    exec:\n      apiVersion: %s\n"
             "      command: %s\n      args: [get-token, --x=1]\n"
             "      env: [{name: FROM_KUBECONFIG, value: 'yes'}]\n%s"
             "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
             api_version, fake_plugin(), extra);
    rc = parse(yaml, NULL, &c, e);
    if (rc)
        return rc;
    rc = kube_exec_run(&c, cr, e);
    kube_config_release(&c);
    return rc;
}

static const char *read_back(const char *name)
{
    static char text[4096];
    char p[256];
    FILE *f;
    size_t n;

    snprintf(p, sizeof(p), "%s/%s", tmpdir(), name);
    f = fopen(p, "r");
    text[0] = '\0';
    if (f) {
        n = fread(text, 1, sizeof(text) - 1, f);
        text[n] = '\0';
        fclose(f);
    }
    return text;
}

static void kc_exec_v1_token(void)
{
    struct kube_exec_cred cr;
    struct err e;

    write_file("exit", "0");
    CHECK_INT_EQ(exec_with("client.authentication.k8s.io/v1",
                           "      interactiveMode: Never\n      provideClusterInfo: true\n",
                           "{\"kind\":\"ExecCredential\",\"apiVersion\":"
                           "\"client.authentication.k8s.io/v1\",\"status\":{\"token\":\"tok-1\","
                           "\"expirationTimestamp\":\"2030-01-02T03:04:05Z\"}}",
                           &cr, &e),
                 0);
    CHECK_STR_EQ(cr.token, "tok-1");
    CHECK_INT_EQ((long long)cr.expiry, 1893553445LL);
    CHECK(cr.cert_pem == NULL);
    kube_exec_cred_release(&cr);
    CHECK_STR_EQ(read_back("args"), "get-token|--x=1|");
    CHECK_STR_EQ(read_back("env"), "yes"); /* no tty: Never */
    CHECK_STR_EQ(read_back("info"),
                 "{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\","
                 "\"spec\":{\"interactive\":false,\"cluster\":{\"server\":\"https://h:6443\","
                 "\"certificate-authority-data\":\"" CA_B64
                 "\",\"config\":{\"audience\":\"a\"}}}}\n");
}

static void kc_exec_v1beta1_cert_and_errors(void)
{
    struct kube_exec_cred cr;
    struct err e;

    write_file("exit", "0");
    /* v1beta1 defaults interactiveMode to IfAvailable; no cluster info unless asked */
    CHECK_INT_EQ(exec_with("client.authentication.k8s.io/v1beta1", "",
                           "{\"kind\":\"ExecCredential\",\"apiVersion\":"
                           "\"client.authentication.k8s.io/v1beta1\",\"status\":{"
                           "\"clientCertificateData\":\"CERT\",\"clientKeyData\":\"KEY\"}}",
                           &cr, &e),
                 0);
    CHECK_STR_EQ(cr.cert_pem, "CERT");
    CHECK_STR_EQ(cr.key_pem, "KEY");
    CHECK(cr.token == NULL && cr.expiry == 0);
    kube_exec_cred_release(&cr);
    CHECK_STR_EQ(read_back("info"), "{\"kind\":\"ExecCredential\",\"apiVersion\":"
                                    "\"client.authentication.k8s.io/v1beta1\",\"spec\":{"
                                    "\"interactive\":false}}\n");
    CHECK_INT_EQ(exec_with("client.authentication.k8s.io/v1", "      interactiveMode: Never\n",
                           "{\"kind\":\"ExecCredential\",\"apiVersion\":"
                           "\"client.authentication.k8s.io/v1beta1\",\"status\":{\"token\":\"t\"}}",
                           &cr, &e),
                 -EPROTO);
    CHECK(strstr(e.msg, "is configured to use API version client.authentication.k8s.io/v1, "
                        "plugin returned version client.authentication.k8s.io/v1beta1") != NULL);
    CHECK_INT_EQ(exec_with("client.authentication.k8s.io/v1", "      interactiveMode: Never\n",
                           "{\"kind\":\"ExecCredential\",\"apiVersion\":"
                           "\"client.authentication.k8s.io/v1\",\"status\":{}}",
                           &cr, &e),
                 -EPROTO);
    CHECK(strstr(e.msg, "didn't return a token or cert/key pair") != NULL);
    CHECK_INT_EQ(exec_with("client.authentication.k8s.io/v1", "      interactiveMode: Never\n",
                           "not json", &cr, &e),
                 -EPROTO);
    CHECK(strstr(e.msg, "is not an ExecCredential") != NULL);
    /* Always needs a terminal: the test's standard input is not one */
    if (!isatty(0)) {
        CHECK_INT_EQ(exec_with("client.authentication.k8s.io/v1", "      interactiveMode: Always\n",
                               "{}", &cr, &e),
                     -EINVAL);
        CHECK(strstr(e.msg, "interactiveMode is Always but standard input is not a terminal"));
    }
    write_file("exit", "3");
    CHECK_INT_EQ(exec_with("client.authentication.k8s.io/v1", "      interactiveMode: Never\n",
                           "{}", &cr, &e),
                 -EIO);
    CHECK(strstr(e.msg, "plugin.sh': exit status 3") != NULL);
    write_file("exit", "0");
}

static void kc_exec_not_found(void)
{
    struct kube_config c;
    struct kube_exec_cred cr;
    struct err e;

    CHECK_INT_EQ(parse("clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
                       "users:\n- name: u\n  user:\n    exec: {apiVersion: "
                       "client.authentication.k8s.io/v1, command: no-such-plugin-xyz, "
                       "interactiveMode: Never, installHint: 'install it from x'}\n"
                       "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
                       "current-context: x\n",
                       NULL, &c, &e),
                 0);
    CHECK_INT_EQ(kube_exec_run(&c, &cr, &e), -ENOENT);
    CHECK_STR_EQ(e.msg, "exec plugin 'no-such-plugin-xyz': executable not found; install it "
                        "from x");
    kube_config_release(&c);
}

static void kc_rfc3339(void)
{
    time_t t;

    CHECK_INT_EQ(kube_rfc3339_parse("1970-01-01T00:00:10Z", &t), 0);
    CHECK_INT_EQ((long long)t, 10LL);
    CHECK_INT_EQ(kube_rfc3339_parse("1970-01-01T01:00:10.123+01:00", &t), 0);
    CHECK_INT_EQ((long long)t, 10LL);
    CHECK_INT_EQ(kube_rfc3339_parse("1970-01-01 00:00:10Z", &t), -EINVAL);
    CHECK_INT_EQ(kube_rfc3339_parse("1970-01-01T00:00:10", &t), -EINVAL);
}

static const struct test_case cases[] = {
    {"basic current-context", kc_basic_current_context},
    {"explicit context with client certificate", kc_explicit_context_with_client_cert},
    {"user without credentials is anonymous", kc_anonymous_user},
    {"proxy-url and disable-compression", kc_proxy_and_compression},
    {"missing context", kc_missing_context},
    {"bad YAML names the line", kc_bad_yaml_line},
    {"bad base64 names line and field", kc_base64_error_names_line_and_field},
    {"decoded data must be PEM", kc_not_pem},
    {"semantic errors", kc_semantic_errors},
    {"relative paths against the kubeconfig dir", kc_relative_paths},
    {"missing tokenFile", kc_token_file_missing},
    {"explicit path must exist", kc_explicit_path_missing},
    {"KUBECONFIG merge: first file wins", kc_env_merge_first_wins},
    {"in-cluster config", kc_in_cluster},
    {"base64", kc_base64},
    {"token file trimmed, one line", kc_token_read_trims},
    {"token with control characters refused", kc_token_control_characters},
    {"exec plugin v1: token, expiry, args, env, cluster info", kc_exec_v1_token},
    {"exec plugin v1beta1: certificate; bad answers", kc_exec_v1beta1_cert_and_errors},
    {"exec plugin not found shows the install hint", kc_exec_not_found},
    {"RFC 3339 timestamps", kc_rfc3339},
};

TEST_SUITE(kubeconfig, cases)
