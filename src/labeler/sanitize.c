/* sanitize.c - label-value sanitising; see sanitize.h for the rule. */
#include "labeler/sanitize.h"

#include <string.h>

static bool is_alnum(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_inner(unsigned char c)
{
    return is_alnum(c) || c == '-' || c == '_' || c == '.';
}

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static size_t trim_end(char *out, size_t n)
{
    while (n > 0 && !is_alnum((unsigned char)out[n - 1]))
        n--;
    out[n] = '\0';
    return n;
}

char *labeler_value_sanitize(const char *in, char *out, size_t size)
{
    size_t max, n = 0;
    bool pending_dash = false;
    const unsigned char *p;

    if (!size)
        return out;
    max = size - 1 < LABELER_VALUE_MAX ? size - 1 : LABELER_VALUE_MAX;
    for (p = (const unsigned char *)(in ? in : ""); *p && n < max; p++) {
        if (is_space(*p)) {
            pending_dash = n > 0; /* leading whitespace is dropped */
            continue;
        }
        if (!is_inner(*p))
            continue; /* dropped bytes do not split a word: "some(thing)" -> "something" */
        if (n == 0 && !is_alnum(*p))
            continue; /* the value must start with an alphanumeric */
        if (pending_dash) {
            out[n++] = '-';
            pending_dash = false;
            if (n >= max)
                break;
        }
        out[n++] = (char)*p;
    }
    out[n] = '\0';
    trim_end(out, n);
    return out;
}
