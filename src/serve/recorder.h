/* recorder.h - the event recorder of gpusched serve: client-go's k8s.io/client-go/tools/events
 * broadcaster, whose Events kube-scheduler writes.
 *
 * Events with the same isomorphic key (type, action, reason, reportingController,
 * reportingInstance, regarding and related, each reference with its uid and resourceVersion)
 * are one Event: the first occurrence is created; the second makes it a series, patched to
 * {"series":{"count":2,"lastObservedTime":...}}; later ones only count in memory. Every 6
 * minutes (from the first tick on) a series not seen for 6 minutes gets its final count
 * written and leaves the cache, as does a single Event older than 6 minutes; every 30 minutes
 * every series is written again (client-go's finishSeries and refreshExistingEventSeries). A
 * PATCH answered 404 (the Event expired) creates the Event again, series included. A write
 * that got no answer is tried again after 10-12.5 s, 12 tries in all; a create answered 409
 * for a series too; any other refusal drops the write. Pure: the caller sends the writes and
 * hands each answer back. Thread safe. The cache holds at most cap entries (the least
 * recently seen one goes first: client-go's map is unbounded). */
#ifndef SERVE_RECORDER_H
#define SERVE_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "serve/events.h"

struct serve_recorder;

enum serve_event_verb {
    SERVE_EVENT_CREATE = 0, /* POST .../namespaces/NS/events */
    SERVE_EVENT_PATCH,      /* PATCH .../namespaces/NS/events/NAME, strategic merge */
};

/* One write for the caller to send; it owns the job until it hands it to
 * serve_recorder_done (or frees it with serve_event_job_free). */
struct serve_event_job {
    enum serve_event_verb verb;
    char *namespace_, *name;
    char *body;        /* the create's Event, or the patch */
    char *create_body; /* a patch's Event with its series, sent as a create after a 404 */
    bool series;       /* the Event is a series (client-go's isEventSeries) */
    bool periodic;     /* a finishSeries or refresh write: tried once, never slept on */
    bool finish;       /* a finishSeries write: the entry leaves the cache once it is written */
    char *key;         /* finish: the entry's key */
    int32_t count;     /* finish: the count written */
    int tries;
    struct timespec due; /* a retry's time */
    struct serve_event_job *next;
};

/* serve_recorder_new returns an empty recorder keeping at most cap Events (NULL when out of
 * memory); seed feeds the retry jitter. _free frees it and its waiting retries (NULL is
 * fine). */
struct serve_recorder *serve_recorder_new(size_t cap, unsigned seed);
void serve_recorder_free(struct serve_recorder *r);
void serve_event_job_free(struct serve_event_job *j);

/* serve_recorder_event records one occurrence of e at now (wall clock). Returns the write to
 * send now, or NULL when there is none (the occurrence only counted in an existing series) or
 * memory ran out (*nomem set then). */
struct serve_event_job *serve_recorder_event(struct serve_recorder *r, const struct serve_event *e,
                                             const struct timespec *now, bool *nomem);

enum serve_event_outcome {
    SERVE_EVENT_WRITTEN = 0,
    SERVE_EVENT_CREATE_NEXT,    /* a patch answered 404: *next is the create to send now */
    SERVE_EVENT_RETRY,          /* no answer (or 409 for a series): tried again in ~10 s */
    SERVE_EVENT_KEPT,           /* a periodic write got no answer: the next round tries */
    SERVE_EVENT_GAVE_UP,        /* no answer for the 12th time: dropped */
    SERVE_EVENT_REJECTED,       /* the API refused it: dropped ("will not retry") */
    SERVE_EVENT_ALREADY_EXISTS, /* a single Event's create answered 409: dropped quietly */
};

/* serve_recorder_done takes job back once its request was answered with http_status (0:
 * no answer at all, a transport error; 2xx: written) and says what follows. With
 * SERVE_EVENT_CREATE_NEXT, *next is the create to send (the caller owns it). */
enum serve_event_outcome serve_recorder_done(struct serve_recorder *r, struct serve_event_job *job,
                                             int http_status, const struct timespec *now,
                                             struct serve_event_job **next);

/* serve_recorder_tick returns the writes due at now, linked by next (NULL when none): the
 * retries whose sleep is over, then the periodic ones (finishSeries at the first tick and
 * every 6 minutes, refresh at the first tick and every 30 minutes). */
struct serve_event_job *serve_recorder_tick(struct serve_recorder *r, const struct timespec *now);

/* serve_recorder_size: Events in the cache. */
size_t serve_recorder_size(struct serve_recorder *r);

#endif
