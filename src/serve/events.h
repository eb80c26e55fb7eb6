/* events.h - the request bodies a scheduler writes: Binding, events.k8s.io/v1 Event, the
 * PodScheduled condition patch and the Lease.
 *
 * Pure functions building JSON text exactly as kube-scheduler / client-go send it (research
 * k8s-api-deviceplugin.md §4, §5). Every returned string is malloc'd and freed by the
 * caller; NULL means out of memory. */
#ifndef SERVE_EVENTS_H
#define SERVE_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* The Event note limit of events.k8s.io/v1 (NoteLengthLimit). */
#define SERVE_EVENT_NOTE_MAX 1024

/* serve_event_note truncates msg as kube-scheduler does: longer than 1024 bytes becomes its
 * first 1020 bytes + " ...". Returns a malloc'd copy. */
char *serve_event_note(const char *msg);

/* serve_binding_json: the v1 Binding of pod ns/name (uid may be NULL or "") to node. */
char *serve_binding_json(const char *ns, const char *name, const char *uid, const char *node);

/* A reference to a v1 Pod, as client-go's reference.GetReference makes it from the scheduler's
 * copy of the pod (resourceVersion included: the version the scheduler worked on). */
struct serve_objref {
    const char *namespace_;
    const char *name;
    const char *uid;              /* NULL or "": left out */
    const char *resource_version; /* NULL or "": left out */
};

/* The event a scheduler writes about a pod. */
struct serve_event {
    struct serve_objref regarding;      /* the pod */
    const struct serve_objref *related; /* the preemptor of a Preempted event; NULL: none */
    const char *type;                   /* "Normal" or "Warning" */
    const char *reason;                 /* "Scheduled", "FailedScheduling", "Preempted" */
    const char *action;                 /* "Binding", "Scheduling", "Preempting" */
    const char *note;                   /* truncated here to 1024 bytes */
    const char *controller;             /* reportingController: the scheduler name */
    const char *instance;               /* reportingInstance: "<controller>-<hostname>" */
};

/* An Event's series: how many times it was seen and when last (events.k8s.io/v1). */
struct serve_event_series {
    int32_t count;
    struct timespec last_observed;
};

/* serve_event_name writes client-go's GenerateEventName into buf: "<regarding>.<hex
 * UnixNano of now>", or a random UUID when that is no DNS subdomain (longer than 253). */
const char *serve_event_name(const char *regarding, const struct timespec *now, char *buf,
                             size_t size);

/* serve_event_json builds the events.k8s.io/v1 Event called name, with eventTime event_time
 * and, when series is not NULL, its series (the body of a create). */
char *serve_event_json(const struct serve_event *e, const char *name,
                       const struct timespec *event_time, const struct serve_event_series *series);

/* serve_event_series_patch_json: the strategic merge patch client-go sends to update a
 * repeated Event, {"series":{"count":N,"lastObservedTime":"<MicroTime>"}}. */
char *serve_event_series_patch_json(const struct serve_event_series *series);

/* serve_condition_patch_json builds the strategic merge patch of pods/{name}/status that sets
 * PodScheduled=False with reason ("Unschedulable", "SchedulerError", "SchedulingGated") and
 * the full message; nominated, when non-NULL, also sets status.nominatedNodeName ("" clears
 * it). */
char *serve_condition_patch_json(const char *reason, const char *message, const char *nominated,
                                 const struct timespec *now);

/* The coordination.k8s.io/v1 Lease record a leader writes. */
struct serve_lease {
    const char *namespace_;
    const char *name;
    const char *resource_version; /* NULL for a create */
    const char *holder;           /* "" when released */
    int32_t duration_s;
    struct timespec acquire, renew;
    int32_t transitions;
};

/* serve_lease_json builds the whole Lease object for a POST or PUT. */
char *serve_lease_json(const struct serve_lease *l);

#endif
