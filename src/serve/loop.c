/* loop.c - the scheduling loop (see loop-int.h). */
#include "serve/loop-int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/clock.h"
#include "kube/decode.h"
#include "serve/dra-int.h"
#include "serve/events.h"
#include "serve/log-int.h"
#include "serve/metrics-int.h"
#include "serve/objects-int.h"
#include "serve/writes-int.h"

static bool str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* serve_report_failure writes the FailedScheduling event every time and the PodScheduled
 * condition when its reason, its message or the nomination changed (kube-scheduler's
 * updatePod skips unchanged status updates too). */
static void serve_report_failure(struct serve *s, struct serve_pending *pp, const char *reason,
                                 const char *message, const char *nominated)
{
    if (strcmp(reason, "SchedulingGated")) {
        struct serve_objref pod = {pp->namespace_, pp->name, pp->uid, pp->resource_version};

        serve_write_event(s, serve_controller(s, pp->scheduler_name), &pod, NULL, "Warning",
                          "FailedScheduling", "Scheduling", message);
    }
    if (serve_pending_condition_changed(pp, reason, message) ||
        (nominated && !str_eq(pp->last_nominated, nominated))) {
        if (nominated) {
            free(pp->last_nominated);
            pp->last_nominated = strdup(nominated);
        }
        serve_write_status(s, pp->namespace_, pp->name, reason, message, nominated);
    }
}

/* serve_preempt actuates a preemption as kube-scheduler's executor does, recording each
 * decision in the cluster at once so the next cycle does not wait for the watch: the
 * preemptor is nominated to the node; each victim not terminating yet is marked terminating
 * by preemption and gets its DisruptionTarget condition, DELETE and Preempted event (a
 * victim with a deletionTimestamp gets no API call); lower-priority pods nominated to the
 * same node lose their nomination (they may no longer fit there). */
static void serve_preempt(struct serve *s, struct serve_pending *pp, const struct kube_pod *pod,
                          const struct sched_result *res)
{
    struct sched_nominated_pod np;
    struct serve_objref preemptor = {pp->namespace_, pp->name, pp->uid, pp->resource_version};
    struct err err;
    char msg[1200], key[600];
    size_t i;

    err_clear(&err);
    snprintf(key, sizeof(key), "%s/%s", pp->namespace_, pp->name);
    if (sched_cluster_nominate(s->cluster, pod, res->nominated_node, &err))
        serve_log('E', 0, "\"Cannot record the nomination\" pod=%s err=%s", log_quote(key),
                  log_quote(err_format(&err, msg, sizeof(msg))));
    for (i = 0; i < res->nvictims; i++) {
        const struct sched_victim *v = &res->victims[i];

        if (v->terminating) {
            serve_log(
                'I', 2,
                "\"Victim Pod is already being deleted, skipping the API call for it\" preemptor=%s node=%s victim=\"%s/%s\"",
                log_quote(key), log_quote(res->nominated_node), v->namespace_, v->name);
            continue;
        }
        sched_cluster_mark_preempted(s->cluster, v->namespace_, v->name, true);
        serve_write_preempt(s, serve_controller(s, pp->scheduler_name), v->namespace_, v->name,
                            &preemptor, res->nominated_node);
        {
            char vkey[600];

            snprintf(vkey, sizeof(vkey), "%s/%s", v->namespace_, v->name);
            serve_log('I', 2, "\"Preempting pod\" victim=%s preemptor=%s node=%s", log_quote(vkey),
                      log_quote(key), log_quote(res->nominated_node));
        }
    }
    /* getLowerPriorityNominatedPods; unnominating moves the last entry into slot i */
    for (i = 0; !sched_cluster_nominated_at(s->cluster, i, &np);) {
        char nkey[600];
        const struct serve_queue_item *it;

        if (strcmp(np.node, res->nominated_node) || np.priority >= pod->priority) {
            i++;
            continue;
        }
        snprintf(nkey, sizeof(nkey), "%s/%s", np.namespace_, np.name);
        serve_log('I', 2,
                  "\"Clearing the nomination of a lower-priority pod\" pod=%s node=%s preemptor=%s",
                  log_quote(nkey), log_quote(np.node), log_quote(key));
        serve_write_clear_nomination(s, np.namespace_, np.name);
        if ((it = serve_queue_get(s->queue, nkey))) {
            struct serve_pending *op = it->data;
            free(op->last_nominated);
            op->last_nominated = NULL;
        }
        sched_cluster_unnominate(s->cluster, np.namespace_, np.name); /* i now names the next */
    }
}

/* serve_clear_own_nomination: preemption found no candidate, so the pod's nomination goes
 * (kube-scheduler's NominatingMode Override with ""): in the cluster at once, and in the API
 * when it was written there. */
static void serve_clear_own_nomination(struct serve *s, struct serve_pending *pp,
                                       const struct kube_pod *pod)
{
    bool had = !sched_cluster_unnominate(s->cluster, pod->namespace_, pod->name);

    if (had || pp->last_nominated || pp->watch_nominated) {
        serve_write_clear_nomination(s, pp->namespace_, pp->name);
        free(pp->last_nominated);
        pp->last_nominated = NULL;
    }
}

/* bind_task: the bind of the pod to node as the binder sends it, with what its answer's
 * metrics and report need; NULL when out of memory */
static struct serve_task *bind_task(struct serve *s, const struct serve_queue_item *it,
                                    const struct serve_pending *pp, const char *node, double t0)
{
    struct serve_task *t;
    char path[700], *body;

    body = serve_binding_json(pp->namespace_, pp->name, pp->uid, node);
    serve_pod_path(path, sizeof(path), pp->namespace_, pp->name, "binding");
    t = body ? serve_task_new(SERVE_TASK_BIND, "POST", path, "application/json", body) : NULL;
    free(body);
    if (!t || !(t->node = strdup(node)) || !(t->uid = strdup(pp->uid)) ||
        !(t->rv = strdup(pp->resource_version))) {
        serve_task_free(t);
        return NULL;
    }
    /* the attempt is counted when the bind is answered: kube-scheduler's attempt
     * duration includes the binding, and a failed bind is an "error" attempt */
    t->cycle_start = t0;
    t->first_active_ms = it->first_active_ms;
    t->sched_attempts = it->attempts + 1;
    t->flushed = it->flushed;
    t->controller = serve_controller(s, pp->scheduler_name);
    return t;
}

/* serve_prebind_failed: the cycle chose a node and DynamicResources' PreBind failed there
 * (res->message): kube-scheduler's PreBind wrote the claims before it stopped (a claim the pod
 * names twice: the first entry's; its own claims before the claim of its extended resources
 * it created), then the binding cycle fails (Unreserve, SchedulerError, backoff). The claim
 * writers write them, then fail the bind that never goes. false when there is nothing to
 * write (the caller reports the error at once). */
static bool serve_prebind_failed(struct serve *s, const struct serve_queue_item *it,
                                 struct serve_pending *pp, const struct kube_pod *pod,
                                 const struct sched_result *res, const char *key, double t0)
{
    struct serve_task *t = bind_task(s, it, pp, res->prebind_node, t0);
    int took = -1;

    serve_dra_invalidate(s); /* (the world holds Unreserve's undoing: rebuilt from the writes) */
    if (t && (t->key = strdup(key))) {
        t->ud = s;
        took = serve_dra_reserve(s, pod, res->prebind_node, t, res->message);
    }
    if (took > 0) {
        /* (the writers' end of it takes mu, held here, to count it done) */
        serve_metrics_add(&s->metrics, &s->metrics.in_flight_binds, 1);
        /* (handleSchedulingFailure clears the nomination when the failure is reported) */
        serve_clear_own_nomination(s, pp, pod);
        serve_log('I', 3, "\"Writing what PreBind wrote before its error\" pod=%s node=%s",
                  log_quote(key), log_quote(res->prebind_node));
        return true;
    }
    serve_task_free(t);
    return false;
}

static void serve_schedule_one(struct serve *s, const struct serve_queue_item *it)
{
    struct serve_pending *pp = it->data;
    struct serve_profile_metrics *pm = serve_metrics_profile(&s->metrics, pp->scheduler_name);
    struct arena a = ARENA_INIT;
    struct sched_result res;
    struct kube_pod pod;
    struct err err;
    json_error_t jerr;
    json_t *obj = NULL;
    char msg[1200], key[600], ns_buf[256], name_buf[256];
    double t0;
    int rc;

    memset(&res, 0, sizeof(res));
    err_clear(&err);
    snprintf(key, sizeof(key), "%s", it->key);
    t0 = mono_now();
    {
        /* a reservation left by a bind whose outcome was unknown: drop it before trying
         * again; if the pod turned out bound meanwhile, it is done */
        const struct serve_assumed *ap = keymap_get(&s->assumed, key);

        if (ap && !strcmp(ap->uid, pp->uid)) {
            serve_split_key(key, ns_buf, sizeof(ns_buf), name_buf, sizeof(name_buf));
            if (sched_cluster_forget_pod(s->cluster, ns_buf, name_buf) == -EINVAL) {
                serve_unassume(s, key);
                serve_pending_free(serve_queue_done(s->queue, key));
                goto out;
            }
            serve_unassume(s, key);
        }
    }
    obj = json_loads(pp->json, 0, &jerr);
    if (!obj || kube_pod_decode(obj, &a, NULL, &pod, &err)) {
        serve_log('E', 0, "\"Cannot decode pending pod\" pod=%s err=%s", log_quote(key),
                  log_quote(obj ? err_format(&err, msg, sizeof(msg)) : jerr.text));
        serve_metrics_attempt(&s->metrics, pm, SERVE_RESULT_ERROR, mono_now() - t0);
        serve_queue_unschedulable(s->queue, key, mono_ms());
        goto out;
    }
    if (kube_pod_ext(&pod)->nunmodelled) {
        /* a field that changes kube-scheduler's answer and that gpusched does not model: the
         * pod is not bound, and says why (event, condition, log line) */
        const struct kube_unmodelled *u = &kube_pod_ext(&pod)->unmodelled[0];
        char why[1024];

        snprintf(why, sizeof(why), "gpusched does not support %s (%s): not scheduled", u->field,
                 u->what);
        serve_log('W', 0,
                  "\"Pod uses a field gpusched does not model; not scheduling it\" pod=%s field=%s",
                  log_quote(key), log_quote(u->field));
        serve_report_failure(s, pp, "Unschedulable", why, NULL);
        serve_metrics_attempt(&s->metrics, pm, SERVE_RESULT_UNSCHEDULABLE, mono_now() - t0);
        serve_queue_unschedulable(s->queue, key, mono_ms());
        goto out;
    }
    if (pod.nclaims) {
        /* serve does not watch PersistentVolumeClaims, PersistentVolumes or StorageClasses
         * (simulate and explain model the volume plugins from their input): such a pod is not
         * bound, and says why */
        serve_log(
            'W', 0,
            "\"Pod uses a PersistentVolumeClaim; gpusched serve does not watch volumes, not scheduling it\" pod=%s claim=%s",
            log_quote(key), log_quote(pod.claims[0]));
        serve_report_failure(s, pp, "Unschedulable",
                             "gpusched serve does not support spec.volumes[].persistentVolumeClaim "
                             "(VolumeBinding, VolumeZone and VolumeRestrictions need "
                             "PersistentVolumeClaims, PersistentVolumes and StorageClasses, which "
                             "serve does not watch): not scheduled",
                             NULL);
        serve_metrics_attempt(&s->metrics, pm, SERVE_RESULT_UNSCHEDULABLE, mono_now() - t0);
        serve_queue_unschedulable(s->queue, key, mono_ms());
        goto out;
    }
    serve_dra_prepare(s); /* the resource.k8s.io objects as they are now */
    {
        const struct sched_profile *prof = sched_config_find(&s->cfg, pod.scheduler_name);
        rc = sched_schedule_one(s->cluster, prof ? prof : s->profile, &pod, &s->rng, &res, &err);
    }
    serve_metrics_observe(&s->metrics, &s->metrics.algorithm_duration, mono_now() - t0);
    if (rc) {
        serve_log('E', 0, "\"Error scheduling pod; retrying\" pod=%s err=%s", log_quote(key),
                  log_quote(err_format(&err, msg, sizeof(msg))));
        serve_metrics_attempt(&s->metrics, pm, SERVE_RESULT_ERROR, mono_now() - t0);
        serve_queue_backoff(s->queue, key, mono_ms());
        goto out;
    }
    switch (res.outcome) {
    case SCHED_SCHEDULED: {
        struct serve_task *t;
        struct serve_assumed *ap;
        void *old_ap = NULL;

        rc = sched_cluster_assume_pod(s->cluster, &pod, res.node, &err);
        if (rc == -EEXIST) {
            /* already in the cache: bound meanwhile */
            serve_pending_free(serve_queue_done(s->queue, key));
            break;
        }
        if (rc) {
            serve_log('E', 0, "\"Cannot assume pod\" pod=%s err=%s", log_quote(key),
                      log_quote(err_format(&err, msg, sizeof(msg))));
            serve_metrics_attempt(&s->metrics, pm, SERVE_RESULT_ERROR, mono_now() - t0);
            serve_queue_backoff(s->queue, key, mono_ms());
            break;
        }
        ap = malloc(sizeof(*ap) + strlen(key) + strlen(pp->uid) + 2);
        if (ap) {
            memcpy(ap->key, key, strlen(key) + 1);
            ap->uid = ap->key + strlen(key) + 1;
            memcpy(ap->uid, pp->uid, strlen(pp->uid) + 1);
            if (keymap_put(&s->assumed, ap->key, ap, &old_ap))
                free(ap);
            free(old_ap);
        }
        if (!(t = bind_task(s, it, pp, res.node, t0))) {
            sched_cluster_forget_pod(s->cluster, pp->namespace_, pp->name);
            serve_unassume(s, key);
            serve_metrics_attempt(&s->metrics, pm, SERVE_RESULT_ERROR, mono_now() - t0);
            serve_queue_backoff(s->queue, key, mono_ms());
            break;
        }
        serve_metrics_add(&s->metrics, &s->metrics.in_flight_binds, 1);
        serve_log('I', 3, "\"Attempting to bind pod to node\" pod=%s node=%s", log_quote(key),
                  log_quote(res.node));
        if (s->dra) {
            /* DynamicResources' PreBind writes the claims first (the claim of the pod's
             * extended resources created), then the bind goes */
            int took;

            t->ud = s;
            if (!(t->key = strdup(key)))
                took = -1;
            else
                took = serve_dra_reserve(s, &pod, res.node, t, NULL);
            if (took > 0)
                break;
            if (took < 0 || pod.nresource_claims)
                serve_dra_invalidate(s); /* the world reserved what nobody writes */
            free(t->key);
            t->key = NULL;
        }
        serve_write_submit(s, t, key);
        break;
    }
    case SCHED_UNSCHEDULABLE: {
        bool deferred;

        if (res.error && res.prebind_node && s->dra &&
            serve_prebind_failed(s, it, pp, &pod, &res, key, t0))
            break;
        /* PostFilter deallocated a claim: the attempt is reported once its update is
         * answered (the preemption attempt counted then, if it ran) */
        deferred = serve_dra_touches(s, &pod) && /* (it may have deallocated or deleted) */
                   serve_dra_postfilter(s, &pod, &res, serve_controller(s, pp->scheduler_name),
                                        pp->resource_version);

        /* a plugin error is kube-scheduler's SchedulerError: result "error", no PostFilter;
         * otherwise DefaultPreemption's PostFilter ran (counted whatever it found), unless
         * the cluster had no node at all (ErrNoNodesAvailable skips it) */
        serve_metrics_attempt(&s->metrics, pm,
                              res.error ? SERVE_RESULT_ERROR : SERVE_RESULT_UNSCHEDULABLE,
                              mono_now() - t0);
        pthread_mutex_lock(&s->metrics.mu);
        if (!res.error && !deferred && sched_cluster_node_count(s->cluster) > 0)
            s->metrics.preemption_attempts++;
        if (res.nominated_node)
            serve_histogram_observe(&s->metrics.preemption_victims, (double)res.nvictims);
        pthread_mutex_unlock(&s->metrics.mu);
        if (res.error) {
            /* kube-scheduler's handleSchedulingFailure for an error status (not a FitError):
             * reason SchedulerError, the nomination cleared (clearNominatedNode), and the pod
             * retried after its backoff, not parked as unschedulable */
            serve_clear_own_nomination(s, pp, &pod);
            serve_log('E', 0, "\"Error scheduling pod; retrying\" pod=%s err=%s", log_quote(key),
                      log_quote(res.message ? res.message : ""));
            serve_report_failure(s, pp, "SchedulerError", res.message ? res.message : "", NULL);
            serve_queue_backoff(s->queue, key, mono_ms());
            break;
        }
        if (deferred) {
            serve_log('I', 2,
                      "\"Unable to schedule pod; no fit; waiting for the deallocation\" pod=%s "
                      "err=%s",
                      log_quote(key), log_quote(res.message ? res.message : ""));
            serve_queue_unschedulable(s->queue, key, mono_ms());
            break;
        }
        if (res.nominated_node)
            serve_preempt(s, pp, &pod, &res);
        else if (res.clear_nomination)
            serve_clear_own_nomination(s, pp, &pod);
        serve_log('I', 2, "\"Unable to schedule pod; no fit; waiting\" pod=%s err=%s",
                  log_quote(key), log_quote(res.message ? res.message : ""));
        serve_report_failure(s, pp, "Unschedulable", res.message ? res.message : "",
                             res.nominated_node);
        serve_queue_unschedulable(s->queue, key, mono_ms());
        break;
    }
    case SCHED_NOT_MODELLED: /* (pods with unmodelled fields are refused above) */
        serve_report_failure(s, pp, "SchedulingGated",
                             "Scheduling is blocked due to non-empty scheduling gates", NULL);
        serve_queue_unschedulable(s->queue, key, mono_ms());
        break;
    case SCHED_GATED:
        if (!pod.nscheduling_gates) {
            /* DynamicResources' PreEnqueue: a claim missing (a template's not made yet by the
             * resource-claim controller), being deleted or not the pod's; kube-scheduler
             * writes nothing and tries again on a claim's event */
            serve_log('I', 2, "\"Pod waits for its ResourceClaims\" pod=%s", log_quote(key));
            serve_queue_unschedulable(s->queue, key, mono_ms());
            break;
        }
        /* kube-scheduler's PreEnqueue holds such a pod: never attempted, counted as gated,
         * back when an update removes the gates */
        serve_report_failure(s, pp, "SchedulingGated",
                             "Scheduling is blocked due to non-empty scheduling gates", NULL);
        serve_queue_gated(s->queue, key);
        break;
    }
out:
    sched_result_release(&res);
    json_decref(obj);
    arena_release(&a);
}

void serve_loop(struct serve *s)
{
    /* kube-scheduler's flush of the unschedulable pods runs at start, then every 30 s */
    int64_t last_tick = mono_ms() - 1000, last_flush = -1;

    pthread_mutex_lock(&s->mu);
    while (!s->stopping) {
        const struct serve_queue_item *it;
        int64_t t = mono_ms(), next;

        serve_update_gauges(s);
        if (t - last_tick >= 1000) {
            serve_events_tick(s); /* the recorder's retries and series */
            last_tick = t;
        }
        if (!serve_synced(s) || !serve_leading(s)) {
            serve_wait(s, 200);
            continue;
        }
        if (last_flush < 0 || t - last_flush >= SERVE_QUEUE_FLUSH_PERIOD_MS) {
            serve_queue_flush(s->queue, t);
            last_flush = t;
        }
        it = serve_queue_pop(s->queue, t);
        if (!it) {
            next = serve_queue_next_ms(s->queue, t);
            serve_wait(s, next < 0 || next > 1000 ? 1000 : next + 1);
            continue;
        }
        serve_schedule_one(s, it);
        serve_yield(s);
    }
    pthread_mutex_unlock(&s->mu);
}
