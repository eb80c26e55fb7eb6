/* events.h - the request bodies a scheduler writes: Binding, events.k8s.io/v1 Event, the
 * PodScheduled condition patch and the Lease.
 *
 * Pure functions building JSON text exactly as kube-scheduler / client-go send it (research
 * k8s-api-deviceplugin.md §4, §5). Every returned string is malloc'd and freed by the
 * caller; NULL means out of memory. */
#ifndef SCHED_EVENTS_H
#define SCHED_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* The Event note limit of events.k8s.io/v1 (NoteLengthLimit). */
#define SCHED_EVENT_NOTE_MAX 1024

/* sched_event_note truncates msg as kube-scheduler does: longer than 1024 bytes becomes its
 * first 1020 bytes + " ...". Returns a malloc'd copy. */
char *sched_event_note(const char *msg);

/* sched_time_micro / sched_time_rfc3339 format t (wall clock) as metav1.MicroTime
 * "2006-01-02T15:04:05.000000Z" / metav1.Time "2006-01-02T15:04:05Z" into buf. */
const char *sched_time_micro(const struct timespec *t, char *buf, size_t size);
const char *sched_time_rfc3339(const struct timespec *t, char *buf, size_t size);

/* sched_binding_json: the v1 Binding of pod ns/name (uid may be NULL or "") to node. */
char *sched_binding_json(const char *ns, const char *name, const char *uid, const char *node);

/* The event a scheduler writes about a pod. */
struct sched_event {
    const char *namespace_;  /* the pod's */
    const char *pod_name;
    const char *pod_uid;     /* may be NULL */
    const char *type;        /* "Normal" or "Warning" */
    const char *reason;      /* "Scheduled", "FailedScheduling", "Preempted" */
    const char *action;      /* "Binding", "Scheduling", "Preempting" */
    const char *note;        /* truncated here to 1024 bytes */
    const char *controller;  /* reportingController: the scheduler name */
    const char *instance;    /* reportingInstance: "<controller>-<hostname>" */
};

/* sched_event_json builds the events.k8s.io/v1 Event, named "<pod>.<hex UnixNano of now>"
 * like client-go's recorder, with eventTime now. */
char *sched_event_json(const struct sched_event *e, const struct timespec *now);

/* sched_condition_patch_json builds the strategic merge patch of pods/{name}/status that sets
 * PodScheduled=False with reason ("Unschedulable", "SchedulerError", "SchedulingGated") and
 * the full message; nominated, when non-NULL, also sets status.nominatedNodeName ("" clears
 * it). */
char *sched_condition_patch_json(const char *reason, const char *message, const char *nominated,
                                 const struct timespec *now);

/* The coordination.k8s.io/v1 Lease record a leader writes. */
struct sched_lease {
    const char *namespace_;
    const char *name;
    const char *resource_version; /* NULL for a create */
    const char *holder;           /* "" when released */
    int32_t duration_s;
    struct timespec acquire, renew;
    int32_t transitions;
};

/* sched_lease_json builds the whole Lease object for a POST or PUT. */
char *sched_lease_json(const struct sched_lease *l);

#endif
