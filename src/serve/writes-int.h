/* writes-int.h - the scheduler's API writes, handed to the binder: binds, events, PodScheduled
 * conditions, preemption deletions, and what happens when each is answered. */
#ifndef SERVE_WRITES_INT_H
#define SERVE_WRITES_INT_H

#include <stddef.h>

#include "serve/binder-int.h"
#include "serve/events.h"
#include "serve/recorder.h"
#include "serve/state-int.h"

/* serve_write_submit hands t (NULL: out of memory, logged) to the binder for the pod key. */
void serve_write_submit(struct serve *s, struct serve_task *t, const char *key);

/* serve_write_event records an events.k8s.io/v1 Event about regarding (a pod; related: the
 * preemptor of a Preempted event, else NULL), reported by controller (the profile's
 * schedulerName; NULL: the first profile's), through the recorder: a repeated Event becomes
 * a series (recorder.h) and the writes go to the binder with the event client. */
void serve_write_event(struct serve *s, const char *controller,
                       const struct serve_objref *regarding, const struct serve_objref *related,
                       const char *type, const char *reason, const char *action, const char *note);

/* serve_write_event_job hands one of the recorder's writes to the binder (NULL: nothing). */
void serve_write_event_job(struct serve *s, struct serve_event_job *job);

/* serve_events_tick sends the recorder's due writes: retries, the series finished or
 * refreshed (any thread; the loop calls it about once a second). */
void serve_events_tick(struct serve *s);

/* serve_controller returns the schedulerName of the profile that schedules pods named
 * scheduler_name (the --config profile of that name; else the first profile's, or
 * --scheduler-name): events' reportingController. Lives as long as s. */
const char *serve_controller(const struct serve *s, const char *scheduler_name);

/* serve_write_status patches the pod's PodScheduled condition (and nominatedNodeName). */
void serve_write_status(struct serve *s, const char *ns, const char *name, const char *reason,
                        const char *message, const char *nominated);

/* serve_write_preempt evicts a preemption victim ns/name as kube-scheduler's executor does:
 * a status patch with DisruptionTarget=True (reason PreemptionByScheduler), then, once it is
 * answered, the DELETE and the victim's Preempted event ("Preempted by pod <preemptor uid> on
 * node <node>"). A 404 on either means the victim is gone already; another error drops the
 * victim's mark in the cluster (sched_cluster_mark_preempted), so a later cycle may choose it
 * again. mu held. */
void serve_write_preempt(struct serve *s, const char *controller, const char *ns, const char *name,
                         const struct serve_objref *preemptor, const char *node);

/* serve_write_clear_nomination patches status.nominatedNodeName of pod ns/name away. */
void serve_write_clear_nomination(struct serve *s, const char *ns, const char *name);

/* serve_pod_path writes /api/v1/namespaces/NS/pods/NAME[/SUB] into buf. */
void serve_pod_path(char *buf, size_t size, const char *ns, const char *name, const char *sub);

/* serve_split_key splits "ns/name" into ns and name (each cut to its buffer). */
void serve_split_key(const char *key, char *ns, size_t nsz, char *name, size_t namesz);

/* serve_on_task_done is the binder's serve_task_done_fn (ud is the struct serve): metrics,
 * the queue and the assumed set follow each answer, and a bind that landed gets its
 * Scheduled event. */
void serve_on_task_done(void *ud, struct serve_task *t);

#endif
