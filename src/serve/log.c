/* log.c - serve's klog-like log lines (see log.h). */
#include "serve/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int log_verbosity;

void serve_log_verbosity(int v)
{
    log_verbosity = v;
}

void serve_log(char sev, int v, const char *fmt, ...)
{
    char line[4096];
    struct timespec ts;
    struct tm tm;
    va_list ap;
    int n;

    if (v > log_verbosity)
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = snprintf(line, sizeof(line), "%c%02d%02d %02d:%02d:%02d.%06ld %7d serve] ", sev,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000,
                 (int)getpid());
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    n = (int)strlen(line);
    line[n] = '\n';
    fwrite(line, 1, (size_t)n + 1, stderr);
}
