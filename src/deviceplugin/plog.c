/* plog.c - the device plugin's one log call, which every file of the plugin uses and which
 * calls nothing of theirs (so that no two files call each other round a loop). */
#include <stdarg.h>
#include <stdio.h>

#include "deviceplugin/plugin-int.h"

void dp_log(struct dp_plugin *p, char sev, int level, const char *fmt, ...)
{
    char line[1536];
    va_list ap;

    if (!p->cfg.log)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    p->cfg.log(p->cfg.ctx, sev, level, line);
}
