/* fuzz_labelvalue.c - libFuzzer target for the text that becomes label values.
 *
 * Any bytes through labeler_value_sanitize must give a value the API accepts, and the same
 * value when sanitised again; kube_label_value_validate must agree with the API's rule on any
 * input. The rule is stated here once more in the API server's own terms, not shared with the
 * validator: validation.IsValidLabelValue accepts at most 63 characters matching the regular
 * expression (([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?, checked with POSIX regcomp.
 * labeler_interval_parse (--sleep-interval) must never accept a value out of its range. */
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/labels.h"
#include "labeler/config.h"
#include "labeler/sanitize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* api_label_value is IsValidLabelValue as the API documents it. */
static bool api_label_value(const char *s)
{
    static regex_t re;
    static bool compiled;

    if (!compiled) {
        if (regcomp(&re, "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$", REG_EXTENDED | REG_NOSUB))
            abort();
        compiled = true;
    }
    return strlen(s) <= 63 && regexec(&re, s, 0, NULL, 0) == 0;
}

static bool valid(const char *s)
{
    bool ours = kube_label_value_validate(s, NULL) == 0;

    if (ours != api_label_value(s))
        abort();
    return ours;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    char out[LABELER_VALUE_MAX + 1], again[LABELER_VALUE_MAX + 1], small[8];
    long ms = -1;

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    valid(s);
    labeler_value_sanitize(s, out, sizeof(out));
    if (!valid(out))
        abort();
    labeler_value_sanitize(out, again, sizeof(again));
    if (strcmp(out, again))
        abort();
    labeler_value_sanitize(s, small, sizeof(small));
    if (!valid(small) || strlen(small) >= sizeof(small))
        abort();
    if (labeler_interval_parse(s, &ms, NULL) == 0 && (ms < 1 || ms > LABELER_INTERVAL_MAX_MS))
        abort();
    free(s);
    return 0;
}
