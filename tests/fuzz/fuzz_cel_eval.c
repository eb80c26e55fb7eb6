/* fuzz_cel_eval.c - libFuzzer target for CEL evaluation: the input is an expression
 * compiled in the stored environment with a small cost limit, then evaluated against three
 * devices (empty, typical, odd values) with one scratch reused throughout.
 * Invariants: an evaluation never crashes, always ends within the cost limit (plus the last
 * operation), answers a bool or an error with a message, and gives the same answer twice. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct cel_device_attr attrs[] = {
    {"model", 5, CEL_ATTR_STRING, 0, false, "A100", 4},
    {"memoryMiB", 9, CEL_ATTR_INT, 81920, false, NULL, 0},
    {"ecc", 3, CEL_ATTR_BOOL, 0, true, NULL, 0},
    {"driverVersion", 13, CEL_ATTR_VERSION, 0, false, "1.2.3-rc.1+b", 12},
    {"example.com/n", 13, CEL_ATTR_INT, INT64_MIN, false, NULL, 0},
    {"example.com/s", 13, CEL_ATTR_STRING, 0, false, "\xff\xfe\x00z", 4},
};
static const struct cel_device_capacity caps[] = {
    {"memory", 6, "80Gi", 4},
    {"cores", 5, "1.5", 3},
    {"example.com/big", 15, "9223372036854775807", 19},
};
static const struct cel_device devices[] = {
    {"", 0, -1, NULL, 0, NULL, 0},
    {"gpu.example.com", 15, 1, attrs, 4, caps, 2},
    {"example.com", 11, 0, attrs, 6, caps, 3},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct cel_device_view *views[3];
    static struct cel_scratch *scratch;
    struct cel_compile_opts o = {CEL_ENV_STORED, true, 20000};
    struct cel_program *p;
    char *s;

    if (size > 4000)
        return 0;
    if (!scratch) {
        struct err e = {0};
        scratch = cel_scratch_new();
        for (int i = 0; i < 3; i++)
            if (cel_device_prepare(&devices[i], &views[i], &e) < 0)
                abort();
    }
    s = malloc(size ? size : 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    if (cel_compile(s, size, &o, &p, NULL) == 0) {
        for (int i = 0; i < 3; i++) {
            struct cel_result r1, r2;
            char first[512] = "";
            if (cel_eval(p, views[i], scratch, &r1) < 0)
                continue;
            if (r1.error) {
                if (!r1.error[0] && r1.error_len == 0)
                    abort();
                snprintf(first, sizeof(first), "%s", r1.error);
            }
            if (cel_eval(p, views[i], scratch, &r2) < 0)
                continue;
            if ((r1.error == NULL) != (r2.error == NULL) || (!r1.error && r1.match != r2.match) ||
                (r2.error && strncmp(first, r2.error, sizeof(first) - 1)) || r1.cost != r2.cost)
                abort();
        }
        cel_program_free(p);
    }
    free(s);
    return 0;
}
