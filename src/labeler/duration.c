/* duration.c - Go-style duration parsing, to milliseconds. */
#include "labeler/duration.h"

#include <errno.h>
#include <string.h>

#define DURATION_MAX_NS (100.0 * 86400.0 * 1e9)

static const struct {
    const char *unit;
    double ns;
} duration_units[] = {
    /* Go's unitMap: both micro signs, U+00B5 and U+03BC */
    {"ns", 1.0}, {"us", 1e3},  {"\xc2\xb5s", 1e3},   {"\xce\xbcs", 1e3},
    {"ms", 1e6}, {"s", 1e9},   {"m", 60e9},          {"h", 3600e9},
};

int labeler_duration_parse(const char *s, long *ms, struct err *err)
{
    const char *p = s ? s : "";
    double total = 0;

    if (!strcmp(p, "0")) {
        *ms = 0;
        return 0;
    }
    if (!*p)
        goto bad;
    while (*p) {
        double whole = 0, frac = 0, scale = 1;
        size_t best = 0, i, digits = 0;
        double unit_ns = 0;

        while (*p >= '0' && *p <= '9') {
            whole = whole * 10 + (*p++ - '0');
            digits++;
        }
        if (*p == '.') {
            p++;
            while (*p >= '0' && *p <= '9') {
                scale /= 10;
                frac += (*p++ - '0') * scale;
                digits++;
            }
        }
        if (!digits)
            goto bad;
        /* longest unit that matches, so "ms" is not read as "m" followed by "s" */
        for (i = 0; i < sizeof(duration_units) / sizeof(duration_units[0]); i++) {
            size_t n = strlen(duration_units[i].unit);

            if (n > best && !strncmp(p, duration_units[i].unit, n)) {
                best = n;
                unit_ns = duration_units[i].ns;
            }
        }
        if (!best)
            goto bad;
        p += best;
        total += (whole + frac) * unit_ns;
        if (total > DURATION_MAX_NS)
            return err_set(err, -EINVAL, "duration '%s' is too long (at most 100 days)", s);
    }
    if (total < 1e6)
        return err_set(err, -EINVAL, "duration '%s' is shorter than 1ms", s);
    *ms = (long)(total / 1e6);
    return 0;
bad:
    return err_set(err, -EINVAL, "invalid duration '%s' (want e.g. 30s, 1m30s, 500ms)",
                        s ? s : "");
}
