/* err.c - filling and formatting struct err. */
#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void err_clear(struct err *e)
{
    if (!e)
        return;
    memset(e, 0, sizeof(*e));
    e->retry_after = -1;
}

int err_set(struct err *e, int code, const char *fmt, ...)
{
    va_list ap;

    if (!e)
        return code;
    e->code = code;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    return code;
}

void err_at(struct err *e, const char *file, int line, int column)
{
    if (!e)
        return;
    if (file)
        snprintf(e->file, sizeof(e->file), "%s", file);
    e->line = line;
    e->column = column;
}

void err_field(struct err *e, const char *field)
{
    if (!e)
        return;
    snprintf(e->field, sizeof(e->field), "%s", field ? field : "");
}

void err_prefix(struct err *e, const char *fmt, ...)
{
    char pre[512], old[ERR_MSG_MAX];
    va_list ap;

    if (!e)
        return;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof(pre), fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof(old));
    err_cut_mark(e->msg, sizeof(e->msg), snprintf(e->msg, sizeof(e->msg), "%s: %s", pre, old));
}

bool err_cut_mark(char *buf, size_t size, int n)
{
    if (n >= 0 && (size_t)n < size)
        return false;
    if (size >= 4)
        memcpy(buf + size - 4, "...", 4);
    return true;
}

const char *err_format(const struct err *e, char *buf, size_t size)
{
    size_t n = 0;

    if (!size)
        return buf;
    buf[0] = '\0';
    if (!e)
        return buf;
#define APPEND(...)                                                                                \
    do {                                                                                           \
        int w_ = snprintf(buf + n, size - n, __VA_ARGS__);                                         \
        if (w_ > 0)                                                                                \
            n = (size_t)w_ >= size - n ? size - 1 : n + (size_t)w_;                                \
    } while (0)
    if (e->file[0])
        APPEND("%s: ", e->file);
    if (e->line > 0)
        APPEND("line %d: ", e->line);
    if (e->field[0])
        APPEND("%s: ", e->field);
    APPEND("%s", e->msg[0] ? e->msg : "unknown error");
#undef APPEND
    return buf;
}
