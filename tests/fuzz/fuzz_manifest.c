/* fuzz_manifest.c - libFuzzer target for the manifest loader: any bytes are loaded as one
 * manifest file, then the input is finished (DaemonSet expansion, priorities) and released.
 * The limits keep one input's work small; errors are expected, crashes and leaks are not. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sched/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sched_input_opts o = {NULL, 5000, 500};
    struct sched_input in;
    struct kube_err err;
    char buf[2048];

    if (size > (1u << 20))
        return 0;
    kube_err_clear(&err);
    sched_input_init(&in, &o);
    if (!sched_input_load_buffer(&in, "fuzz.yaml", (const char *)data, size, &err)) {
        if (!sched_input_finish(&in, &err) && in.npods)
            (void)sched_input_find_pod(&in, in.pods[0].namespace_, in.pods[0].name);
    }
    /* an error must always format to one line naming the file */
    kube_err_format(&err, buf, sizeof(buf));
    if (err.code && (strchr(buf, '\n') || strncmp(buf, "fuzz.yaml", 9)))
        __builtin_trap();
    sched_input_release(&in);
    return 0;
}
