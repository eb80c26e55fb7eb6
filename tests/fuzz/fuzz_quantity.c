/* fuzz_quantity.c - libFuzzer target for kube_quantity_parse and the formatters.
 * Besides not crashing, it checks invariants that hold for every accepted input: the value
 * and milli value agree (value == ceil(milli / 1000) away from zero) and formatting a parsed
 * value gives text that parses back to the same value. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s, buf[64];
    int64_t v, m, v2, m2;
    struct err err;

    if (size > 4096)
        return 0;
    s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    err_clear(&err);
    if (kube_quantity_parse(s, &v, &m, &err) == 0) {
        int64_t q = m / 1000, r = m % 1000;
        int64_t want = r > 0 ? q + 1 : r < 0 ? q - 1 : q;

        if (v != want)
            abort();
        kube_quantity_format_milli(m, buf, sizeof(buf));
        if (kube_quantity_parse(buf, NULL, &m2, NULL) || m2 != m)
            abort();
        kube_quantity_format_bytes(v, buf, sizeof(buf));
        if (kube_quantity_parse(buf, &v2, NULL, NULL) || v2 != v)
            abort();
    } else if (!err.msg[0] || err.code >= 0) {
        abort();
    }
    free(s);
    return 0;
}
