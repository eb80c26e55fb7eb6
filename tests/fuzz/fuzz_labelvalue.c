/* fuzz_labelvalue.c - libFuzzer target for the text that becomes label values: any bytes
 * through labeler_value_sanitize must give a valid label value (and be stable when sanitised
 * again), and labeler_interval_parse (--sleep-interval) must never accept a value out of its range. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "labeler/config.h"
#include "labeler/sanitize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    char out[LABELER_VALUE_MAX + 1], again[LABELER_VALUE_MAX + 1], small[8];
    long ms = -1;

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    labeler_value_sanitize(s, out, sizeof(out));
    if (!labeler_value_is_valid(out))
        abort();
    labeler_value_sanitize(out, again, sizeof(again));
    if (strcmp(out, again))
        abort();
    labeler_value_sanitize(s, small, sizeof(small));
    if (!labeler_value_is_valid(small) || strlen(small) >= sizeof(small))
        abort();
    if (labeler_interval_parse(s, &ms, NULL) == 0 && (ms < 1 || ms > LABELER_INTERVAL_MAX_MS))
        abort();
    free(s);
    return 0;
}
