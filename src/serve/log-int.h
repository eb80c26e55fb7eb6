/* log-int.h - serve's log: the klog-style lines of base/log.h tagged "serve"
 * ("I0102 15:04:05.000000  1234 serve] ..."), with a verbosity (-v). The only module of serve
 * that prints. */
#ifndef SERVE_LOG_INT_H
#define SERVE_LOG_INT_H

#include "base/log.h"

/* serve_log_verbosity sets the level up to which serve_log prints (0 at start). */
static inline void serve_log_verbosity(int v)
{
    /* the keys kube-scheduler logs with klog.KObj: objects in JSON */
    static const char *const object_keys[] = {"pod", "victim", "preemptor", NULL};

    log_setup("serve", v);
    log_set_object_keys(object_keys);
}

/* serve_log prints one line of severity sev ('I', 'W', 'E') when v is at most the verbosity;
 * level 0 always prints. Thread safe: one write per line. */
#define serve_log(sev, v, ...) log_printf((sev), (v), __VA_ARGS__)

#endif
