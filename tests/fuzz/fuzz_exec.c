/* fuzz_exec.c - libFuzzer target for the reader of an exec credential plugin's answer
 * (kube_exec_cred_parse, kube/exec.h): what the plugin wrote on standard output, read as an
 * ExecCredential of the configured apiVersion.
 *
 * The first byte picks the configured version (v1 or v1beta1), the rest is the output. A
 * success must be usable (a token, or a certificate with its key); a failure names the plugin
 * and leaves nothing allocated; no message ever holds the token the output carried. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "kube/exec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int contains(const json_t *v, const char *s)
{
    return json_is_string(v) && strstr(json_string_value(v), s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char cmd[] = "fuzz-plugin", v1[] = "client.authentication.k8s.io/v1",
                v1beta1[] = "client.authentication.k8s.io/v1beta1";
    struct kube_exec x;
    struct kube_exec_cred c;
    struct err e;
    json_t *doc;
    const char *token;

    if (!size)
        return 0;
    memset(&x, 0, sizeof(x));
    x.command = cmd;
    x.api_version = data[0] & 1 ? v1beta1 : v1;
    err_clear(&e);
    if (kube_exec_cred_parse(&x, (const char *)data + 1, size - 1, &c, &e) == 0) {
        if ((!c.token && !c.cert_pem) || !c.cert_pem != !c.key_pem ||
            (c.cert_pem && c.cert_len != strlen(c.cert_pem)))
            __builtin_trap();
        kube_exec_cred_release(&c);
        return 0;
    }
    if (strncmp(e.msg, "exec plugin 'fuzz-plugin': ", 27) || c.token || c.cert_pem || c.key_pem)
        __builtin_trap();
    /* tokens never go into messages (what else the message quotes may hold the same text) */
    doc = json_loadb((const char *)data + 1, size - 1, 0, NULL);
    token = json_string_value(json_object_get(json_object_get(doc, "status"), "token"));
    if (token && strlen(token) >= 8 && strstr(e.msg, token) && !strstr(x.api_version, token) &&
        !contains(json_object_get(doc, "apiVersion"), token) &&
        !contains(json_object_get(doc, "kind"), token) &&
        !contains(json_object_get(json_object_get(doc, "status"), "expirationTimestamp"), token))
        __builtin_trap();
    json_decref(doc);
    return 0;
}
