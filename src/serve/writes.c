/* writes.c - API writes and their answers (see writes-int.h). */
#include "serve/writes-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "serve/events.h"
#include "serve/events-int.h"
#include "serve/log-int.h"
#include "serve/metrics-int.h"
#include "serve/objects-int.h"

void serve_write_submit(struct serve *s, struct serve_task *t, const char *key)
{
    if (!t) {
        serve_log('E', 0, "\"Out of memory building a request\" pod=%s", log_quote(key));
        return;
    }
    t->ud = s;
    t->key = strdup(key);
    serve_binder_submit(s->binder, t);
}

const char *serve_controller(const struct serve *s, const char *scheduler_name)
{
    const struct sched_profile *p = sched_config_find(&s->cfg, scheduler_name);

    return p ? p->name : s->o.scheduler_name;
}

void serve_write_event_job(struct serve *s, struct serve_event_job *job)
{
    char path[900], nsesc[300], nameesc[400];
    struct serve_task *t;
    char key[600];

    if (!job)
        return;
    snprintf(key, sizeof(key), "%s/%s", job->namespace_, job->name);
    kube_path_escape(job->namespace_, nsesc, sizeof(nsesc));
    if (job->verb == SERVE_EVENT_PATCH)
        snprintf(path, sizeof(path), "/apis/events.k8s.io/v1/namespaces/%s/events/%s", nsesc,
                 kube_path_escape(job->name, nameesc, sizeof(nameesc)));
    else
        snprintf(path, sizeof(path), "/apis/events.k8s.io/v1/namespaces/%s/events", nsesc);
    t = serve_task_new(SERVE_TASK_EVENT, job->verb == SERVE_EVENT_PATCH ? "PATCH" : "POST", path,
                       job->verb == SERVE_EVENT_PATCH ? "application/strategic-merge-patch+json"
                                                      : "application/json",
                       job->body);
    if (!t) {
        serve_event_job_free(job);
        serve_write_submit(s, NULL, key);
        return;
    }
    t->client = s->event_client;
    t->job = job;
    t->job_free = (void (*)(void *))serve_event_job_free;
    serve_write_submit(s, t, key);
}

void serve_write_event(struct serve *s, const char *controller,
                       const struct serve_objref *regarding, const struct serve_objref *related,
                       const char *type, const char *reason, const char *action, const char *note)
{
    struct serve_event ev = {*regarding,
                             related,
                             type,
                             reason,
                             action,
                             note,
                             controller ? controller : s->o.scheduler_name,
                             s->instance};
    struct timespec now;
    bool nomem;
    struct serve_event_job *job;

    clock_gettime(CLOCK_REALTIME, &now);
    job = serve_recorder_event(s->recorder, &ev, &now, &nomem);
    if (nomem) {
        char key[600];

        snprintf(key, sizeof(key), "%s/%s", regarding->namespace_, regarding->name);
        serve_log('E', 0, "\"Out of memory building a request\" pod=%s", log_quote(key));
    }
    serve_write_event_job(s, job);
}

void serve_events_tick(struct serve *s)
{
    struct timespec now;
    struct serve_event_job *j, *next;

    clock_gettime(CLOCK_REALTIME, &now);
    for (j = serve_recorder_tick(s->recorder, &now); j; j = next) {
        next = j->next;
        j->next = NULL;
        serve_write_event_job(s, j);
    }
}

/* event_done follows client-go's recordEvent with the answer to one Event write. */
static void event_done(struct serve *s, struct serve_task *t)
{
    struct serve_event_job *job = t->job, *next = NULL;
    bool patch = job->verb == SERVE_EVENT_PATCH;
    int status = t->rc ? t->err->http_status : 200;
    char msg[1200];
    struct timespec now;

    t->job = NULL; /* the recorder's again */
    clock_gettime(CLOCK_REALTIME, &now);
    if (t->rc)
        err_format(t->err, msg, sizeof(msg));
    switch (serve_recorder_done(s->recorder, job, status, &now, &next)) {
    case SERVE_EVENT_WRITTEN:
        serve_metrics_add(&s->metrics,
                          patch ? &s->metrics.events_patched : &s->metrics.events_created, 1);
        break;
    case SERVE_EVENT_CREATE_NEXT:
        serve_write_event_job(s, next); /* the Event expired: created again */
        break;
    case SERVE_EVENT_RETRY:
    case SERVE_EVENT_KEPT:
        serve_metrics_add(&s->metrics, &s->metrics.event_errors, 1);
        serve_log('E', 0, "\"Unable to write event (may retry after sleeping)\" event=%s err=%s",
                  log_quote(t->key), log_quote(msg));
        break;
    case SERVE_EVENT_GAVE_UP:
        serve_metrics_add(&s->metrics, &s->metrics.event_errors, 1);
        serve_log('E', 0, "\"Unable to write event (retry limit exceeded!)\" event=%s",
                  log_quote(t->key));
        break;
    case SERVE_EVENT_ALREADY_EXISTS:
        serve_metrics_add(&s->metrics, &s->metrics.event_errors, 1);
        serve_log('I', 5, "\"Server rejected event (will not retry!)\" event=%s err=%s",
                  log_quote(t->key), log_quote(msg));
        break;
    case SERVE_EVENT_REJECTED:
        serve_metrics_add(&s->metrics, &s->metrics.event_errors, 1);
        serve_log('E', 0, "\"Server rejected event (will not retry!)\" event=%s err=%s",
                  log_quote(t->key), log_quote(msg));
        break;
    }
}

void serve_pod_path(char *buf, size_t size, const char *ns, const char *name, const char *sub)
{
    char e1[300], e2[300];

    snprintf(buf, size, "/api/v1/namespaces/%s/pods/%s%s%s", kube_path_escape(ns, e1, sizeof(e1)),
             kube_path_escape(name, e2, sizeof(e2)), sub ? "/" : "", sub ? sub : "");
}

void serve_write_status(struct serve *s, const char *ns, const char *name, const char *reason,
                        const char *message, const char *nominated)
{
    struct timespec now;
    char path[700], key[600];
    char *body;

    clock_gettime(CLOCK_REALTIME, &now);
    body = serve_condition_patch_json(reason, message, nominated, &now);
    serve_pod_path(path, sizeof(path), ns, name, "status");
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    if (body) {
        struct serve_task *t = serve_task_new(SERVE_TASK_STATUS, "PATCH", path,
                                              "application/strategic-merge-patch+json", body);

        if (t)
            t->retry_transient = true;
        serve_write_submit(s, t, key);
    } else {
        serve_write_submit(s, NULL, key);
    }
    free(body);
}

void serve_write_preempt(struct serve *s, const char *controller, const char *ns, const char *name,
                         const struct serve_objref *preemptor, const char *node)
{
    struct timespec now;
    struct serve_task *t = NULL;
    char path[700], key[600], vuid[128], vrv[64], victim[200];
    char *body;

    clock_gettime(CLOCK_REALTIME, &now);
    body = serve_disruption_patch_json(controller ? controller : s->o.scheduler_name, &now);
    serve_pod_path(path, sizeof(path), ns, name, "status");
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    if (body)
        t = serve_task_new(SERVE_TASK_DISRUPT, "PATCH", path,
                           "application/strategic-merge-patch+json", body);
    free(body);
    /* the victim as the scheduler knows it (uid, resourceVersion): the Preempted event's
     * regarding */
    serve_podref_get(s, key, vuid, sizeof(vuid), vrv, sizeof(vrv));
    snprintf(victim, sizeof(victim), "%s %s", vuid, vrv);
    if (t && (!(t->uid = strdup(preemptor->uid ? preemptor->uid : "")) ||
              !(t->node = strdup(node ? node : "")) || !(t->rv = strdup(victim)))) {
        serve_task_free(t);
        t = NULL;
    }
    if (t)
        t->controller = controller;
    if (!t)
        sched_cluster_mark_preempted(s->cluster, ns, name, false);
    serve_write_submit(s, t, key);
}

void serve_write_clear_nomination(struct serve *s, const char *ns, const char *name)
{
    char path[700], key[600];
    char *body = serve_nomination_clear_json();
    struct serve_task *t = NULL;

    serve_pod_path(path, sizeof(path), ns, name, "status");
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    if (body) {
        t = serve_task_new(SERVE_TASK_STATUS, "PATCH", path,
                           "application/strategic-merge-patch+json", body);
        if (t)
            t->retry_transient = true;
    }
    free(body);
    serve_write_submit(s, t, key);
}

/* a victim's DisruptionTarget patch or DELETE answered */
static void preempt_step_done(struct serve *s, struct serve_task *t, const char *ns,
                              const char *name)
{
    char msg[1200];

    if (t->rc && t->err->http_status != 404) {
        serve_lock(s);
        sched_cluster_mark_preempted(s->cluster, ns, name, false);
        serve_unlock(s);
        serve_log('E', 0, "\"Cannot %s\" pod=%s err=%s",
                  t->kind == SERVE_TASK_DISRUPT ? "add DisruptionTarget condition due to preemption"
                                                : "delete preemption victim",
                  log_quote(t->key), log_quote(err_format(t->err, msg, sizeof(msg))));
        return;
    }
    if (t->rc) {
        serve_log('I', 2, "\"Victim Pod is already deleted\" victim=%s node=%s", log_quote(t->key),
                  log_quote(t->node));
        return;
    }
    if (t->kind == SERVE_TASK_DISRUPT) {
        char path[700];
        struct serve_task *d;

        serve_pod_path(path, sizeof(path), ns, name, NULL);
        d = serve_task_new(SERVE_TASK_DELETE, "DELETE", path, NULL, NULL);
        if (d) {
            /* the preemptor's uid and the victim's reference move on to the DELETE */
            d->uid = t->uid;
            d->node = t->node;
            d->rv = t->rv;
            t->uid = t->node = t->rv = NULL;
        }
        if (d)
            d->controller = t->controller;
        serve_write_submit(s, d, t->key);
        return;
    }
    snprintf(msg, sizeof(msg), "Preempted by pod %s on node %s", t->uid ? t->uid : "",
             t->node ? t->node : "");
    {
        char vuid[128] = "", vrv[64] = "";
        struct serve_objref victim = {ns, name, vuid, vrv};

        if (t->rv)
            sscanf(t->rv, "%127s %63s", vuid, vrv);
        /* no related object: kube-scheduler's Preempted event has none either */
        serve_write_event(s, t->controller, &victim, NULL, "Normal", "Preempted", "Preempting",
                          msg);
    }
    serve_log('I', 2, "\"Preemptor Pod preempted victim Pod\" victim=%s node=%s", log_quote(t->key),
              log_quote(t->node));
}

void serve_split_key(const char *key, char *ns, size_t nsz, char *name, size_t namesz)
{
    const char *slash = strchr(key, '/');

    if (!slash) {
        snprintf(ns, nsz, "default");
        snprintf(name, namesz, "%s", key);
        return;
    }
    snprintf(ns, nsz, "%.*s", (int)(slash - key), key);
    snprintf(name, namesz, "%s", slash + 1);
}

/* queued_same_pod: the queue holds key, and for the same pod (uid) the task was made for, not
 * a pod re-created under that name since. */
static bool queued_same_pod(struct serve *s, const struct serve_task *t)
{
    const struct serve_queue_item *it = serve_queue_get(s->queue, t->key);
    const struct serve_pending *pp = it ? it->data : NULL;

    return pp && !strcmp(pp->uid, t->uid ? t->uid : "");
}

/* bind_report: a refused bind as kube-scheduler's failure handler reports it, the
 * FailedScheduling event and the PodScheduled condition (reason SchedulerError, the condition
 * only when its reason or message changed) with `running Bind plugin "DefaultBinder": <error>`; nothing
 * for a pod re-created under the name since. mu held. */
static void bind_report(struct serve *s, const struct serve_task *t, const char *ns,
                        const char *name)
{
    const struct serve_queue_item *it = serve_queue_get(s->queue, t->key);
    struct serve_pending *pp = it ? it->data : NULL;
    struct serve_objref ref = {ns, name, t->uid, t->rv};
    char m[1200], msg[1300];

    if (pp && strcmp(pp->uid, t->uid ? t->uid : ""))
        return;
    snprintf(msg, sizeof(msg), "running Bind plugin \"DefaultBinder\": %s",
             err_format(t->err, m, sizeof(m)));
    serve_write_event(s, t->controller, &ref, NULL, "Warning", "FailedScheduling", "Scheduling",
                      msg);
    if (pp && !serve_pending_condition_changed(pp, "SchedulerError", msg))
        return;
    serve_write_status(s, ns, name, "SchedulerError", msg, NULL);
}

void serve_on_task_done(void *ud, struct serve_task *t)
{
    struct serve *s = ud;
    char msg[1200], ns[256], name[256];
    const char *what = "";

    serve_split_key(t->key ? t->key : "", ns, sizeof(ns), name, sizeof(name));
    if (t->kind == SERVE_TASK_BIND) {
        double took = (double)(mono_ms() - t->bind_start_ms) / 1000.0;
        char bound_here[400];

        /* A 409 saying the pod is already on the node we chose means an earlier attempt of
         * this bind landed (its answer was lost): that is a success. */
        snprintf(bound_here, sizeof(bound_here), "is already assigned to node \"%s\"",
                 t->node ? t->node : "");
        if (t->rc && t->err->http_status == 409 && strstr(t->err->msg, bound_here))
            t->rc = 0;

        {
            struct serve_profile_metrics *pm = serve_metrics_profile(&s->metrics, t->controller);
            double cycle = mono_now() - t->cycle_start;

            if (!t->reported) /* (a PreBind error: Bind never ran, nor did it time it) */
                serve_metrics_bind(&s->metrics, pm, !t->rc, took);
            if (!t->rc)
                serve_metrics_bound(&s->metrics, pm, cycle, t->sched_attempts,
                                    t->first_active_ms >= 0
                                        ? (double)(mono_ms() - t->first_active_ms) / 1000.0
                                        : -1,
                                    t->flushed);
            else
                serve_metrics_attempt(&s->metrics, pm, SERVE_RESULT_ERROR, cycle);
        }
        serve_lock(s);
        pthread_mutex_lock(&s->metrics.mu);
        s->metrics.in_flight_binds--;
        if (t->rc && t->err->http_status == 409)
            s->metrics.bind_conflicts++;
        if (t->rc && t->err->http_status == 404)
            s->metrics.bind_not_found++;
        pthread_mutex_unlock(&s->metrics.mu);
        if (!t->rc) {
            if (queued_same_pod(s, t))
                serve_pending_free(serve_queue_done(s->queue, t->key));
            serve_unlock(s);
            if (s->bind_done)
                s->bind_done(s, t->key, t->uid, true);
            serve_log('I', 2, "\"Successfully bound pod to node\" pod=%s node=%s",
                      log_quote(t->key), log_quote(t->node));
            {
                char note[1200];

                struct serve_objref pod = {ns, name, t->uid, t->rv};

                snprintf(note, sizeof(note), "Successfully assigned %s/%s to %s", ns, name,
                         t->node);
                serve_write_event(s, t->controller, &pod, NULL, "Normal", "Scheduled", "Binding",
                                  note);
            }
        } else {
            const struct serve_assumed *ap = keymap_get(&s->assumed, t->key);

            if (!t->reported)
                bind_report(s, t, ns, name);

            /* forget our assumption only: a pod re-created under this name may have its own.
             * When the bind got no answer at all (connection lost, API server restarting) it
             * may have landed: keep the node's room reserved until the informer shows the pod
             * bound, or until the pod is taken from the queue again (serve_schedule_one). */
            if (ap && !strcmp(ap->uid, t->uid ? t->uid : "") && t->err->http_status != 0) {
                sched_cluster_forget_pod(s->cluster, ns, name);
                serve_unassume(s, t->key);
            }
            if (!queued_same_pod(s, t)) {
                /* gone from the queue already, or re-created under the same name */
            } else if (t->err->http_status == 404) {
                /* the pod is gone; the informer will say so too */
                serve_pending_free(serve_queue_delete(s->queue, t->key));
            } else {
                /* 409 included: if the pod really is bound, the informer removes it from the
                 * queue before the backoff ends; otherwise it is tried again. */
                serve_queue_backoff(s->queue, t->key, mono_ms());
            }
            pthread_cond_broadcast(&s->cv);
            serve_unlock(s);
            if (s->bind_done)
                s->bind_done(s, t->key, t->uid, false); /* DynamicResources' Unreserve */
            serve_log(t->err->http_status == 409 || t->err->http_status == 404 ? 'I' : 'E',
                      t->err->http_status == 409 || t->err->http_status == 404 ? 2 : 0,
                      "\"Failed to bind pod\" pod=%s node=%s err=%s", log_quote(t->key),
                      log_quote(t->node), log_quote(err_format(t->err, msg, sizeof(msg))));
        }
        serve_task_free(t);
        return;
    }
    switch (t->kind) {
    case SERVE_TASK_STATUS:
        serve_metrics_add(&s->metrics,
                          t->rc ? &s->metrics.status_patch_errors : &s->metrics.status_patches, 1);
        what = "patch pod status";
        break;
    case SERVE_TASK_EVENT:
        if (t->job) {
            event_done(s, t);
            serve_task_free(t);
            return;
        }
        what = "write event";
        break;
    case SERVE_TASK_DELETE:
    case SERVE_TASK_DISRUPT:
        preempt_step_done(s, t, ns, name);
        serve_task_free(t);
        return;
    case SERVE_TASK_BIND:
        break;
    }
    if (t->rc)
        serve_log(t->err->http_status == 404 ? 'I' : 'E', t->err->http_status == 404 ? 2 : 0,
                  "\"Cannot %s\" pod=%s err=%s", what, log_quote(t->key),
                  log_quote(err_format(t->err, msg, sizeof(msg))));
    serve_task_free(t);
}
