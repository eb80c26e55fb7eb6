/* log.c - klog-style log lines (see log.h). */
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG_LINE_MAX 4096

static const char *log_tag = "main";
static int log_level;

void log_setup(const char *tag, int verbosity)
{
    if (tag)
        log_tag = tag;
    log_level = verbosity;
}

size_t log_format(char *buf, size_t size, char sev, long ts_sec, long ts_nsec, int pid,
                  const char *msg)
{
    time_t t = (time_t)ts_sec;
    struct tm tm;
    int n;

    if (size < 2)
        return 0;
    gmtime_r(&t, &tm);
    n = snprintf(buf, size - 1, "%c%02d%02d %02d:%02d:%02d.%06ld %7d %s] %s", sev, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts_nsec / 1000, pid, log_tag, msg);
    if (n < 0)
        n = 0;
    if ((size_t)n > size - 2)
        n = (int)(size - 2);
    buf[n++] = '\n';
    buf[n] = '\0';
    return (size_t)n;
}

void log_printf(char sev, int v, const char *fmt, ...)
{
    char msg[LOG_LINE_MAX], line[LOG_LINE_MAX + 128];
    struct timespec ts;
    va_list ap;
    size_t n;

    if (v > log_level)
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    n = log_format(line, sizeof(line), sev, (long)ts.tv_sec, ts.tv_nsec, (int)getpid(), msg);
    /* one write per line so lines of different threads never interleave */
    if (write(STDERR_FILENO, line, n) < 0)
        return;
}
