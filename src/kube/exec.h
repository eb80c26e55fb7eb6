/* exec.h - running a kubeconfig's exec credential plugin (users[].user.exec), as client-go does:
 * the command with its args, the process environment plus the plugin's env entries and
 * KUBERNETES_EXEC_INFO (an ExecCredential whose spec says whether the plugin may be interactive
 * and, with provideClusterInfo, describes the cluster), standard input passed on only when
 * interactive, standard error passed through, standard output read (capped at 1 MiB) as an
 * ExecCredential of the configured apiVersion. Tokens are never put into error messages. */
#ifndef KUBE_EXEC_H
#define KUBE_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "base/err.h"
#include "kube/kubeconfig.h"

#define KUBE_EXEC_OUTPUT_MAX ((size_t)1 << 20)

/* What a plugin returned. Every member is owned; release with kube_exec_cred_release. */
struct kube_exec_cred {
    char *token;              /* status.token, or NULL */
    char *cert_pem, *key_pem; /* status.clientCertificateData/clientKeyData, or NULL */
    size_t cert_len, key_len;
    time_t expiry; /* status.expirationTimestamp, 0: none (valid until a 401) */
};

/* kube_exec_run runs cfg->exec (which must be set) and parses its answer into out. Interactive
 * means standard input is a terminal and interactiveMode is not Never; Always without a terminal
 * is an error. Errors are one line: "exec plugin 'CMD': ..." (not found, with the installHint;
 * exit status; an answer that is not an ExecCredential of the configured version; no token and
 * no certificate). */
int kube_exec_run(const struct kube_config *cfg, struct kube_exec_cred *out, struct err *err);

/* kube_exec_cred_parse reads len bytes at data, what x's plugin wrote on standard output, as
 * an ExecCredential of x->api_version into out, as kube_exec_run does (its errors but the
 * running's; no token is ever put into a message). Pure: fuzzed (tests/fuzz/fuzz_exec.c). */
int kube_exec_cred_parse(const struct kube_exec *x, const char *data, size_t len,
                         struct kube_exec_cred *out, struct err *err);

/* kube_exec_cred_release wipes and frees c's members; NULL is fine. */
void kube_exec_cred_release(struct kube_exec_cred *c);

/* kube_rfc3339_parse reads "2026-01-02T15:04:05Z" (fraction and a +hh:mm offset allowed) into
 * seconds since the epoch. 0 or -EINVAL. */
int kube_rfc3339_parse(const char *s, time_t *out);

#endif
