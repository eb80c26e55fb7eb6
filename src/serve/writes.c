/* writes.c - API writes and their answers (see writes.h). */
#include "serve/writes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "serve/events.h"
#include "serve/log.h"
#include "serve/objects.h"

void serve_write_submit(struct serve *s, struct serve_task *t, const char *key)
{
    if (!t) {
        serve_log('E', 0, "\"Out of memory building a request\" pod=\"%s\"", key);
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

void serve_write_event(struct serve *s, const char *controller, const char *ns, const char *name,
                       const char *uid, const char *type, const char *reason, const char *action,
                       const char *note)
{
    struct serve_event ev = {
        ns,         name,   uid,  type,
        reason,     action, note, controller ? controller : s->o.scheduler_name,
        s->instance};
    struct timespec now;
    char path[600], nsesc[300], key[600];
    char *body;

    clock_gettime(CLOCK_REALTIME, &now);
    body = serve_event_json(&ev, &now);
    snprintf(path, sizeof(path), "/apis/events.k8s.io/v1/namespaces/%s/events",
             kube_path_escape(ns, nsesc, sizeof(nsesc)));
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    {
        struct serve_task *t =
            body ? serve_task_new(SERVE_TASK_EVENT, "POST", path, "application/json", body) : NULL;

        if (t)
            t->client = s->event_client;
        serve_write_submit(s, t, key);
    }
    free(body);
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
                         const char *preemptor_uid, const char *node)
{
    struct timespec now;
    struct serve_task *t = NULL;
    char path[700], key[600];
    char *body;

    clock_gettime(CLOCK_REALTIME, &now);
    body = serve_disruption_patch_json(controller ? controller : s->o.scheduler_name, &now);
    serve_pod_path(path, sizeof(path), ns, name, "status");
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    if (body)
        t = serve_task_new(SERVE_TASK_DISRUPT, "PATCH", path,
                           "application/strategic-merge-patch+json", body);
    free(body);
    if (t && (!(t->uid = strdup(preemptor_uid ? preemptor_uid : "")) ||
              !(t->node = strdup(node ? node : "")))) {
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
        serve_log('E', 0, "\"Cannot %s\" pod=\"%s\" err=\"%s\"",
                  t->kind == SERVE_TASK_DISRUPT ? "add DisruptionTarget condition due to preemption"
                                                : "delete preemption victim",
                  t->key, err_format(t->err, msg, sizeof(msg)));
        return;
    }
    if (t->rc) {
        serve_log('I', 2, "\"Victim Pod is already deleted\" victim=\"%s\" node=\"%s\"", t->key,
                  t->node);
        return;
    }
    if (t->kind == SERVE_TASK_DISRUPT) {
        char path[700];
        struct serve_task *d;

        serve_pod_path(path, sizeof(path), ns, name, NULL);
        d = serve_task_new(SERVE_TASK_DELETE, "DELETE", path, NULL, NULL);
        if (d && (!(d->uid = strdup(t->uid ? t->uid : "")) ||
                  !(d->node = strdup(t->node ? t->node : "")))) {
            serve_task_free(d);
            d = NULL;
        }
        if (d)
            d->controller = t->controller;
        serve_write_submit(s, d, t->key);
        return;
    }
    serve_metrics_add(&s->metrics, &s->metrics.preemption_victims, 1);
    snprintf(msg, sizeof(msg), "Preempted by pod %s on node %s", t->uid ? t->uid : "",
             t->node ? t->node : "");
    serve_write_event(s, t->controller, ns, name, NULL, "Normal", "Preempted", "Preempting", msg);
    serve_log('I', 2, "\"Preemptor Pod preempted victim Pod\" victim=\"%s\" node=\"%s\"", t->key,
              t->node);
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

        serve_lock(s);
        pthread_mutex_lock(&s->metrics.mu);
        serve_histogram_observe(&s->metrics.bind_duration, took);
        s->metrics.in_flight_binds--;
        if (!t->rc) {
            s->metrics.binds_total++;
            serve_histogram_observe(&s->metrics.e2e_duration,
                                    (double)(mono_ms() - t->queued_ms) / 1000.0);
        } else {
            s->metrics.bind_errors++;
            if (t->err->http_status == 409)
                s->metrics.bind_conflicts++;
            if (t->err->http_status == 404)
                s->metrics.bind_not_found++;
        }
        pthread_mutex_unlock(&s->metrics.mu);
        if (!t->rc) {
            if (queued_same_pod(s, t))
                serve_pending_free(serve_queue_done(s->queue, t->key));
            serve_unlock(s);
            serve_log('I', 2, "\"Successfully bound pod to node\" pod=\"%s\" node=\"%s\"", t->key,
                      t->node);
            {
                char note[1200];

                snprintf(note, sizeof(note), "Successfully assigned %s/%s to %s", ns, name,
                         t->node);
                serve_write_event(s, t->controller, ns, name, t->uid, "Normal", "Scheduled",
                                  "Binding", note);
            }
        } else {
            const struct serve_assumed *ap = keymap_get(&s->assumed, t->key);

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
            serve_log(t->err->http_status == 409 || t->err->http_status == 404 ? 'I' : 'E',
                      t->err->http_status == 409 || t->err->http_status == 404 ? 2 : 0,
                      "\"Failed to bind pod\" pod=\"%s\" node=\"%s\" err=\"%s\"", t->key, t->node,
                      err_format(t->err, msg, sizeof(msg)));
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
        serve_metrics_add(&s->metrics, t->rc ? &s->metrics.event_errors : &s->metrics.events_sent,
                          1);
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
                  "\"Cannot %s\" pod=\"%s\" err=\"%s\"", what, t->key,
                  err_format(t->err, msg, sizeof(msg)));
    serve_task_free(t);
}
