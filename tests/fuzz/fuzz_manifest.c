/* fuzz_manifest.c - libFuzzer target for the manifest loader: any bytes are loaded as one
 * manifest file, then the input is finished (DaemonSet expansion, priorities) and released.
 * Each input is loaded twice: keeping every pod, and handing bound pods to a consumer as
 * `gpusched simulate` does. The limits keep one input's work small; errors are expected,
 * crashes and leaks are not. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "manifest/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* a consumer that reads everything it is given, so a dangling string shows under ASan */
static int take(void *arg, const struct kube_pod *p, struct err *err)
{
    size_t *n = arg;

    (void)err;
    *n += strlen(p->namespace_) + strlen(p->name) + strlen(p->node_name) + p->ncontainers;
    return 0;
}

static void load_once(const uint8_t *data, size_t size, int hand_off)
{
    struct manifest_input_opts o = {.max_pods = 5000, .max_nodes = 500};
    struct manifest_input in;
    struct err err;
    char buf[2048];
    size_t taken = 0;

    if (hand_off) {
        o.take_bound = take;
        o.take_arg = &taken;
    }
    err_clear(&err);
    manifest_input_init(&in, &o);
    if (!manifest_input_load_buffer(&in, "fuzz.yaml", (const char *)data, size, &err)) {
        if (!manifest_input_finish(&in, &err) && in.npods)
            (void)manifest_input_find_pod(&in, in.pods[0].namespace_, in.pods[0].name);
    }
    /* an error must always format to one line naming the file */
    err_format(&err, buf, sizeof(buf));
    if (err.code && (strchr(buf, '\n') || strncmp(buf, "fuzz.yaml", 9)))
        __builtin_trap();
    manifest_input_release(&in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    load_once(data, size, 0);
    load_once(data, size, 1);
    return 0;
}
