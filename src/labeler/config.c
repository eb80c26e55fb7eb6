/* config.c - the rules for gpulabel's settings that more than main.c needs to know. */
#include "labeler/config.h"

#include <errno.h>

#include "base/goparse.h"

int labeler_interval_parse(const char *s, long *ms, struct err *err)
{
    int64_t ns;

    if (go_parse_duration(s, &ns, NULL))
        return err_set(err, -EINVAL, "invalid duration '%s' (want e.g. 30s, 1m30s, 500ms)", s);
    if (ns <= 0)
        return err_set(err, -EINVAL, "duration must be positive");
    if (ns < 1000000)
        return err_set(err, -EINVAL, "duration '%s' is shorter than 1ms", s);
    if (ns / 1000000 > LABELER_INTERVAL_MAX_MS)
        return err_set(err, -EINVAL, "duration '%s' is too long (at most 100 days)", s);
    *ms = (long)(ns / 1000000);
    return 0;
}
