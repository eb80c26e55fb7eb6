/* events.c - JSON bodies of the scheduler's writes (see events.h). Built with jansson so
 * every string is escaped correctly; field names and formats follow client-go. */
#include "sched/events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

char *sched_event_note(const char *msg)
{
    size_t n = strlen(msg);
    char *out;

    if (n <= SCHED_EVENT_NOTE_MAX)
        return strdup(msg);
    out = malloc(SCHED_EVENT_NOTE_MAX + 1);
    if (!out)
        return NULL;
    memcpy(out, msg, SCHED_EVENT_NOTE_MAX - 4);
    memcpy(out + SCHED_EVENT_NOTE_MAX - 4, " ...", 5);
    return out;
}

const char *sched_time_micro(const struct timespec *t, char *buf, size_t size)
{
    struct tm tm;
    time_t s = t->tv_sec;

    gmtime_r(&s, &tm);
    snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, t->tv_nsec / 1000);
    return buf;
}

const char *sched_time_rfc3339(const struct timespec *t, char *buf, size_t size)
{
    struct tm tm;
    time_t s = t->tv_sec;

    gmtime_r(&s, &tm);
    snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    return buf;
}

/* dump_take serializes and frees v. */
static char *dump_take(json_t *v)
{
    char *s;

    if (!v)
        return NULL;
    s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(v);
    return s;
}

char *sched_binding_json(const char *ns, const char *name, const char *uid, const char *node)
{
    json_t *md = json_pack("{s:s, s:s}", "name", name, "namespace", ns);

    if (md && uid && *uid)
        json_object_set_new(md, "uid", json_string(uid));
    return dump_take(json_pack("{s:s, s:s, s:o, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind",
                               "Binding", "metadata", md, "target", "apiVersion", "v1", "kind",
                               "Node", "name", node));
}

char *sched_event_json(const struct sched_event *e, const struct timespec *now)
{
    char name[512], when[40], *note = sched_event_note(e->note ? e->note : "");
    unsigned long long nanos =
        (unsigned long long)now->tv_sec * 1000000000ULL + (unsigned long long)now->tv_nsec;
    json_t *regarding, *ev;

    if (!note)
        return NULL;
    snprintf(name, sizeof(name), "%s.%llx", e->pod_name, nanos);
    regarding = json_pack("{s:s, s:s, s:s, s:s}", "apiVersion", "v1", "kind", "Pod", "namespace",
                          e->namespace_, "name", e->pod_name);
    if (regarding && e->pod_uid && *e->pod_uid)
        json_object_set_new(regarding, "uid", json_string(e->pod_uid));
    ev = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:s}",
                   "apiVersion", "events.k8s.io/v1", "kind", "Event", "metadata", "name", name,
                   "namespace", e->namespace_, "eventTime", sched_time_micro(now, when, sizeof(when)),
                   "reportingController", e->controller, "reportingInstance", e->instance,
                   "action", e->action, "reason", e->reason, "type", e->type, "regarding",
                   regarding, "note", note);
    free(note);
    return dump_take(ev);
}

char *sched_condition_patch_json(const char *reason, const char *message, const char *nominated,
                                 const struct timespec *now)
{
    char when[40];
    json_t *status, *cond;

    cond = json_pack("{s:s, s:s, s:s, s:s, s:n, s:s}", "type", "PodScheduled", "status", "False",
                     "reason", reason, "message", message ? message : "", "lastProbeTime",
                     "lastTransitionTime", sched_time_rfc3339(now, when, sizeof(when)));
    status = json_pack("{s:[o]}", "conditions", cond);
    if (status && nominated)
        json_object_set_new(status, "nominatedNodeName", json_string(nominated));
    return dump_take(json_pack("{s:o}", "status", status));
}

char *sched_lease_json(const struct sched_lease *l)
{
    char acq[40], ren[40];
    json_t *md = json_pack("{s:s, s:s}", "name", l->name, "namespace", l->namespace_);

    if (md && l->resource_version)
        json_object_set_new(md, "resourceVersion", json_string(l->resource_version));
    return dump_take(json_pack("{s:s, s:s, s:o, s:{s:s, s:i, s:s, s:s, s:i}}", "apiVersion",
                               "coordination.k8s.io/v1", "kind", "Lease", "metadata", md, "spec",
                               "holderIdentity", l->holder, "leaseDurationSeconds",
                               (int)l->duration_s, "acquireTime",
                               sched_time_micro(&l->acquire, acq, sizeof(acq)), "renewTime",
                               sched_time_micro(&l->renew, ren, sizeof(ren)), "leaseTransitions",
                               (int)l->transitions));
}
