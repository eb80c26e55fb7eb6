/* fuzz_h2guard.c - libFuzzer target for the HTTP/2 guard (src/rpc/h2guard.c): any byte
 * stream, fed whole and then in two pieces cut at the first byte's value, the unadmitted tail
 * of the first piece fed again in front of the second, as the relay does; both ways must judge
 * alike and admit as much, never more than was fed, and a stream judged bad must say why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/h2guard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct h2guard a, b;
    size_t cut = size ? data[0] % (size + 1) : 0, adm_a = 0, adm_b = 0, more = 0;
    int ra, rb;

    h2guard_init(&a, 0);
    ra = h2guard_feed(&a, data, size, 0, &adm_a);
    h2guard_init(&b, 0);
    rb = h2guard_feed(&b, data, cut, 0, &adm_b);
    if (!rb && !b.throttled) {
        rb = h2guard_feed(&b, data + adm_b, size - adm_b, 0, &more);
        adm_b += more;
    }
    if (adm_a > size || adm_b > size || ra != rb || (ra && (!a.why[0] || strcmp(a.why, b.why))) ||
        (!ra && a.why[0]) || (!ra && !a.throttled && !b.throttled && adm_a != adm_b))
        abort();
    return 0;
}
