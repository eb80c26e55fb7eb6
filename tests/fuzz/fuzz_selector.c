/* fuzz_selector.c - libFuzzer target for kube_selector_parse.
 * Invariants checked on every accepted input: String() parses again to the same String(),
 * the requirements are sorted by key, and matching against a fixed label set terminates with
 * the same answer for both parses. Rejected inputs must carry a message and a column inside
 * the input (or just past its end). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/labels.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct kube_label lv[] = {{"a", "1"}, {"b", "x"}, {"gpu", "Tesla-M40"}, {"in", ""}};
    struct kube_labels labels = {lv, sizeof(lv) / sizeof(lv[0])};
    struct arena a = ARENA_INIT;
    struct kube_selector sel, again;
    struct err err;
    char *s, *str = NULL, *str2 = NULL;
    size_t i, cap;

    if (size > 8192)
        return 0;
    s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    err_clear(&err);
    if (kube_selector_parse(s, &a, &sel, &err)) {
        if (!err.msg[0] || err.column < 1 || (size_t)err.column > strlen(s) + 1)
            abort();
        goto out;
    }
    for (i = 1; i < sel.nreqs; i++)
        if (strcmp(sel.reqs[i - 1].key, sel.reqs[i].key) > 0)
            abort();
    cap = 2 * size + 16;
    str = malloc(cap);
    str2 = malloc(cap);
    if (!str || !str2)
        goto out;
    kube_selector_string(&sel, str, cap);
    if (kube_selector_parse(str, &a, &again, NULL))
        abort();
    kube_selector_string(&again, str2, cap);
    if (strcmp(str, str2))
        abort();
    if (kube_selector_matches(&sel, &labels) != kube_selector_matches(&again, &labels))
        abort();
out:
    free(str);
    free(str2);
    free(s);
    arena_release(&a);
    return 0;
}
