/* kubeconfig.h - where the API server is and how to authenticate to it.
 *
 * Resolves a kubeconfig (explicit path alone; else $KUBECONFIG files merged, first file to
 * name an entry wins; else ~/.kube/config) or, when there is none, the in-cluster service
 * account. The result is flat and self-contained: certificate files are read into memory,
 * *-data fields base64-decoded, relative paths resolved against their kubeconfig's directory.
 * Errors are one line naming the file, line and field:
 *   "cannot read kubeconfig '/x': line 7: users[0].user.client-key-data: illegal base64 ..." */
#ifndef KUBE_KUBECONFIG_H
#define KUBE_KUBECONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"

/* The service-account directory used in a cluster; $GPULABEL_SA_DIR overrides it (a test
 * hook: tests point it at a temp dir holding token, ca.crt and namespace). */
#define KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* users[].user.exec: a credential plugin run to get a token or a client certificate
 * (client.authentication.k8s.io/v1 or v1beta1 ExecCredential; kube/exec.h runs it). */
enum kube_exec_interactive {
    KUBE_EXEC_NEVER,
    KUBE_EXEC_IF_AVAILABLE,
    KUBE_EXEC_ALWAYS,
};

struct kube_exec {
    char *api_version; /* "client.authentication.k8s.io/v1" or ".../v1beta1" */
    char *command;     /* as given; a relative path with a '/' resolved against the kubeconfig */
    char **args;       /* nargs strings */
    size_t nargs;
    char **env; /* "NAME=VALUE", nenv of them, added to the environment */
    size_t nenv;
    enum kube_exec_interactive interactive;
    bool provide_cluster_info;
    char *install_hint; /* shown when the command cannot be run, or NULL */
};

struct kube_config {
    char *server;             /* "https://host:port", no trailing slash */
    char *tls_server_name;    /* name to verify the server certificate against, or NULL */
    bool insecure;            /* insecure-skip-tls-verify */
    char *proxy_url;          /* proxy-url (http, https or socks5), or NULL for libcurl's env */
    bool disable_compression; /* disable-compression: do not ask for gzip */
    char *ca_pem;             /* trusted CA bundle (PEM), NULL for the system store */
    size_t ca_len;
    char *ca_file;  /* absolute path the CA was read from (re-read as it rotates), or NULL */
    char *cert_pem; /* client certificate (PEM) or NULL */
    size_t cert_len;
    char *key_pem; /* client key (PEM) or NULL */
    size_t key_len;
    char *token;               /* bearer token, NULL when none */
    char *token_file;          /* absolute path the token is (re-)read from, NULL when static */
    struct kube_exec *exec;    /* credential plugin, or NULL; its answer replaces token/cert */
    char *exec_cluster_config; /* the cluster's extensions[client.authentication.k8s.io/exec]
                                  as JSON text (provideClusterInfo's spec.cluster.config) */
    char *namespace;           /* context namespace, in-cluster namespace, or "default" */
    char *source;              /* for messages: "kubeconfig '/x'" or "in-cluster service account" */
    bool in_cluster;
};

/* kube_config_load resolves credentials as described above. path is an explicit kubeconfig
 * (must exist) or NULL; context overrides current-context when not NULL. On success out owns
 * its strings; release with kube_config_release(). On failure out is left empty. */
int kube_config_load(const char *path, const char *context, struct kube_config *out,
                     struct err *err);

/* kube_config_parse resolves one kubeconfig held in memory (data, len). path names it in
 * messages and its directory anchors relative paths (NULL: current directory). Same
 * ownership as kube_config_load. */
int kube_config_parse(const char *data, size_t len, const char *path, const char *context,
                      struct kube_config *out, struct err *err);

/* kube_config_in_cluster builds the config from KUBERNETES_SERVICE_HOST/PORT and the
 * service-account directory (KUBE_SA_DIR or $GPULABEL_SA_DIR). A missing ca.crt falls back
 * to the system trust store, as client-go does; a missing or empty token is an error. */
int kube_config_in_cluster(struct kube_config *out, struct err *err);

/* kube_config_release frees every member and zeroes c; NULL is fine. */
void kube_config_release(struct kube_config *c);

/* kube_config_sa_dir returns $GPULABEL_SA_DIR when set and non-empty, else KUBE_SA_DIR. */
const char *kube_config_sa_dir(void);

/* kube_token_read reads a bearer token file (capped at 64 KiB), trimming surrounding
 * whitespace. *out is a new string the caller frees. -ENODATA for an empty file. */
int kube_token_read(const char *path, char **out, struct err *err);

/* kube_base64_decode decodes standard base64 (padding required, CR/LF ignored) from in
 * (len bytes) and appends to out. On bad input returns -EINVAL and, when bad_at is not
 * NULL, the offset of the first illegal byte (Go's "illegal base64 data at input byte N"). */
int kube_base64_decode(const char *in, size_t len, struct buf *out, size_t *bad_at);

#endif
