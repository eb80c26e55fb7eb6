/* events.c - JSON bodies of the scheduler's writes (see events.h). Built with jansson so
 * every string is escaped correctly; field names and formats follow client-go. */
#include "serve/events.h"
#include "serve/events-int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/buf.h"

char *serve_event_note(const char *msg)
{
    size_t n = strlen(msg);
    char *out;

    if (n <= SERVE_EVENT_NOTE_MAX)
        return strdup(msg);
    out = malloc(SERVE_EVENT_NOTE_MAX + 1);
    if (!out)
        return NULL;
    memcpy(out, msg, SERVE_EVENT_NOTE_MAX - 4);
    memcpy(out + SERVE_EVENT_NOTE_MAX - 4, " ...", 5);
    return out;
}

const char *serve_time_micro(const struct timespec *t, char *buf, size_t size)
{
    struct tm tm;
    time_t s = t->tv_sec;

    gmtime_r(&s, &tm);
    snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, t->tv_nsec / 1000);
    return buf;
}

const char *serve_time_rfc3339(const struct timespec *t, char *buf, size_t size)
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

/* The two bodies written for every pod (binding, event) are built directly into a buffer: a
 * jansson tree costs more than the rest of the request. Strings are escaped as JSON requires
 * (quote, backslash, control characters); UTF-8 passes through unchanged. */
static int put_json_string(struct buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const char *run = s;
    int r = buf_puts(b, "\"");

    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[7];

        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        r |= buf_append(b, run, (size_t)(s - run));
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            r |= buf_append(b, esc, 2);
        } else if (c == '\n') {
            r |= buf_puts(b, "\\n");
        } else if (c == '\t') {
            r |= buf_puts(b, "\\t");
        } else if (c == '\r') {
            r |= buf_puts(b, "\\r");
        } else {
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            r |= buf_append(b, esc, 6);
        }
        run = s + 1;
    }
    r |= buf_append(b, run, (size_t)(s - run));
    r |= buf_puts(b, "\"");
    return r;
}

/* put_fields appends `"key":"value"` pairs (key, value, key, value, ..., NULL), comma
 * separated, each value escaped. */
static int put_fields(struct buf *b, ...)
{
    va_list ap;
    const char *k;
    int r = 0, first = 1;

    va_start(ap, b);
    while ((k = va_arg(ap, const char *))) {
        const char *v = va_arg(ap, const char *);

        /* keys are our own literals: no escaping, and no printf (it costs more than the
         * rest of the body) */
        if (!first)
            r |= buf_append(b, ",", 1);
        r |= buf_append(b, "\"", 1) | buf_puts(b, k) | buf_append(b, "\":", 2);
        r |= put_json_string(b, v);
        first = 0;
    }
    va_end(ap);
    return r;
}

static char *buf_take_or_null(struct buf *b, int r)
{
    if (r) {
        buf_release(b);
        return NULL;
    }
    return buf_take(b);
}

char *serve_binding_json(const char *ns, const char *name, const char *uid, const char *node)
{
    struct buf b = BUF_INIT(0);
    int r = buf_puts(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{");

    r |= put_fields(&b, "name", name, "namespace", ns, (const char *)NULL);
    if (uid && *uid)
        r |= buf_puts(&b, ",") | put_fields(&b, "uid", uid, (const char *)NULL);
    r |= buf_puts(&b, "},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",");
    r |= put_fields(&b, "name", node, (const char *)NULL);
    r |= buf_puts(&b, "}}");
    return buf_take_or_null(&b, r);
}

const char *serve_event_name(const char *regarding, const struct timespec *now, char *buf,
                             size_t size)
{
    unsigned long long nanos =
        (unsigned long long)now->tv_sec * 1000000000ULL + (unsigned long long)now->tv_nsec;
    int n = snprintf(buf, size, "%s.%llx", regarding, nanos);

    if (n < 0 || n > 253 || (size_t)n >= size) {
        /* not a DNS subdomain: client-go takes a random UUID (version 4) */
        unsigned char r[16];
        FILE *f = fopen("/dev/urandom", "rb");
        size_t got = f ? fread(r, 1, sizeof(r), f) : 0;
        int i;

        if (f)
            fclose(f);
        for (i = (int)got; i < 16; i++)
            r[i] = (unsigned char)(rand() & 0xff);
        r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);
        r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
        snprintf(buf, size, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
                 r[13], r[14], r[15]);
    }
    return buf;
}

/* put_ref appends a v1 Pod ObjectReference as client-go marshals it. */
static int put_ref(struct buf *b, const struct serve_objref *r)
{
    int rc = buf_puts(b, "{\"kind\":\"Pod\",");

    rc |= put_fields(b, "namespace", r->namespace_, "name", r->name, (const char *)NULL);
    if (r->uid && *r->uid)
        rc |= buf_puts(b, ",") | put_fields(b, "uid", r->uid, (const char *)NULL);
    rc |= buf_puts(b, ",\"apiVersion\":\"v1\"");
    if (r->resource_version && *r->resource_version)
        rc |= buf_puts(b, ",") |
              put_fields(b, "resourceVersion", r->resource_version, (const char *)NULL);
    rc |= buf_puts(b, "}");
    return rc;
}

static int put_series(struct buf *b, const struct serve_event_series *series)
{
    char when[40];

    return buf_printf(b, "{\"count\":%d,\"lastObservedTime\":\"%s\"}", (int)series->count,
                      serve_time_micro(&series->last_observed, when, sizeof(when)));
}

char *serve_event_json(const struct serve_event *e, const char *name,
                       const struct timespec *event_time, const struct serve_event_series *series)
{
    char when[40], *note = serve_event_note(e->note ? e->note : "");
    struct buf b = BUF_INIT(0);
    int r;

    if (!note)
        return NULL;
    r = buf_puts(&b, "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{");
    r |= put_fields(&b, "name", name, "namespace", e->regarding.namespace_, (const char *)NULL);
    r |= buf_puts(&b, "},");
    r |= put_fields(&b, "eventTime", serve_time_micro(event_time, when, sizeof(when)),
                    (const char *)NULL);
    if (series)
        r |= buf_puts(&b, ",\"series\":") | put_series(&b, series);
    r |= buf_puts(&b, ",");
    r |= put_fields(&b, "reportingController", e->controller, "reportingInstance", e->instance,
                    "action", e->action, "reason", e->reason, (const char *)NULL);
    r |= buf_puts(&b, ",\"regarding\":") | put_ref(&b, &e->regarding);
    if (e->related)
        r |= buf_puts(&b, ",\"related\":") | put_ref(&b, e->related);
    r |= buf_puts(&b, ",");
    r |= put_fields(&b, "note", note, "type", e->type, (const char *)NULL);
    r |= buf_puts(&b, "}");
    free(note);
    return buf_take_or_null(&b, r);
}

char *serve_event_series_patch_json(const struct serve_event_series *series)
{
    struct buf b = BUF_INIT(0);
    int r = buf_puts(&b, "{\"series\":") | put_series(&b, series) | buf_puts(&b, "}");

    return buf_take_or_null(&b, r);
}

char *serve_condition_patch_json(const char *reason, const char *message, const char *nominated,
                                 const struct timespec *now)
{
    char when[40];
    json_t *status, *cond;

    cond = json_pack("{s:s, s:s, s:s, s:s, s:n, s:s}", "type", "PodScheduled", "status", "False",
                     "reason", reason, "message", message ? message : "", "lastProbeTime",
                     "lastTransitionTime", serve_time_rfc3339(now, when, sizeof(when)));
    status = json_pack("{s:[o]}", "conditions", cond);
    if (status && nominated)
        json_object_set_new(status, "nominatedNodeName", json_string(nominated));
    return dump_take(json_pack("{s:o}", "status", status));
}

char *serve_disruption_patch_json(const char *scheduler_name, const struct timespec *now)
{
    char when[40], msg[400];
    json_t *cond;

    snprintf(msg, sizeof(msg), "%s: preempting to accommodate a higher priority pod",
             scheduler_name);
    cond = json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "DisruptionTarget", "status", "True",
                     "reason", "PreemptionByScheduler", "message", msg, "lastTransitionTime",
                     serve_time_rfc3339(now, when, sizeof(when)));
    return dump_take(json_pack("{s:{s:[o]}}", "status", "conditions", cond));
}

char *serve_nomination_clear_json(void)
{
    return dump_take(json_pack("{s:{s:n}}", "status", "nominatedNodeName"));
}

char *serve_lease_json(const struct serve_lease *l)
{
    char acq[40], ren[40];
    json_t *md = json_pack("{s:s, s:s}", "name", l->name, "namespace", l->namespace_);

    if (md && l->resource_version)
        json_object_set_new(md, "resourceVersion", json_string(l->resource_version));
    return dump_take(json_pack(
        "{s:s, s:s, s:o, s:{s:s, s:i, s:s, s:s, s:i}}", "apiVersion", "coordination.k8s.io/v1",
        "kind", "Lease", "metadata", md, "spec", "holderIdentity", l->holder,
        "leaseDurationSeconds", (int)l->duration_s, "acquireTime",
        serve_time_micro(&l->acquire, acq, sizeof(acq)), "renewTime",
        serve_time_micro(&l->renew, ren, sizeof(ren)), "leaseTransitions", (int)l->transitions));
}
