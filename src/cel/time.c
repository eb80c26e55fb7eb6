/* time.c - durations and timestamps (google.protobuf.Duration / Timestamp in cel-go). */
#include "cel/eval.h"
#include "cel/lib.h"

struct cel_val cel_time_add(struct ev *ev, const struct cel_val *x, const struct cel_val *y,
                            bool sub)
{
    (void)ev;
    (void)x;
    (void)y;
    (void)sub;
    return cel_err_static("not implemented");
}

struct cel_val cel_time_to_string(struct ev *ev, const struct cel_val *v)
{
    (void)ev;
    (void)v;
    return cel_err_static("not implemented");
}

bool cel_duration_parse(const char *s, size_t n, int64_t *ns)
{
    (void)s;
    (void)n;
    (void)ns;
    return false;
}

bool cel_timestamp_parse(const char *s, size_t n, int64_t *sec, int32_t *nsec)
{
    (void)s;
    (void)n;
    (void)sec;
    (void)nsec;
    return false;
}
