/* fuzz_kubeconfig.c - libFuzzer target for the kubeconfig parser (kube_config_parse).
 *
 * The input is one kubeconfig file. Relative certificate paths resolve against a directory
 * that does not exist, so the target never reads real files by accident; absolute paths in
 * the input may be read (capped), which is what the parser does for users too. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kube/kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kube_config c;
    struct err e;
    char buf[2048];

    err_clear(&e);
    if (kube_config_parse((const char *)data, size, "/nonexistent-fuzz-dir/config", NULL, &c, &e) ==
        0) {
        /* a success must be usable: a server URL (credentials may be absent: anonymous) */
        if (!c.server || !c.namespace || !!c.cert_pem != !!c.key_pem)
            __builtin_trap();
        kube_config_release(&c);
    } else {
        err_format(&e, buf, sizeof(buf));
        if (!e.msg[0] || strncmp(e.msg, "cannot read kubeconfig '", 24) || c.server)
            __builtin_trap();
    }
    return 0;
}
