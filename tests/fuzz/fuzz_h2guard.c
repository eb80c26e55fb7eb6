/* fuzz_h2guard.c - libFuzzer target for the HTTP/2 guard (src/rpc/h2guard.c): any byte
 * stream, fed whole and then split at the first byte's value; both ways must judge alike, and
 * a stream judged bad must say why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/h2guard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct h2guard a, b;
    size_t cut = size ? data[0] % (size + 1) : 0;
    int ra, rb;

    h2guard_init(&a, 0);
    ra = h2guard_feed(&a, data, size, 0);
    h2guard_init(&b, 0);
    rb = h2guard_feed(&b, data, cut, 0);
    if (!rb)
        rb = h2guard_feed(&b, data + cut, size - cut, 0);
    if (ra != rb || (ra && (!a.why[0] || strcmp(a.why, b.why))) || (!ra && a.why[0]))
        abort();
    return 0;
}
