/* dra-int.h - Dynamic Resource Allocation in gpusched serve: the resource.k8s.io objects from
 * their informers, the DynamicResources plugin's world rebuilt from them when they change, and
 * the plugin's PreBind, Unreserve and PostFilter as API writes (the claim of a pod's extended
 * resources created, a claim's status.allocation and status.reservedFor and the pod's
 * extendedResourceClaimStatus before the bind, the wait for binding conditions, the
 * reservation taken back and the created claim deleted when the bind fails, a deallocation,
 * a left-over extended-resource claim deleted), on writer threads of their own. Design notes:
 * docs/serve.md, "Dynamic Resource Allocation". */
#ifndef SERVE_DRA_INT_H
#define SERVE_DRA_INT_H

#include <stdbool.h>

#include <jansson.h>

#include "kube/informer.h"
#include "kube/object.h"

struct serve;
struct serve_task;

/* The kinds serve watches, one informer each. */
enum serve_dra_kind {
    SERVE_DRA_CLASS,
    SERVE_DRA_SLICE,
    SERVE_DRA_CLAIM,
    SERVE_DRA_TEMPLATE,
    SERVE_DRA_TAINT_RULE,
    SERVE_DRA_KINDS
};

/* serve_dra_start makes s->dra and starts its informers and its writer threads (s->client is
 * borrowed). Returns 0 or -ENOMEM/-errno with a line on stderr. serve_dra_stop joins them
 * (s->informer_stop set first); NULL-safe. */
int serve_dra_start(struct serve *s);
void serve_dra_stop(struct serve *s);

/* serve_dra_free frees s->dra once the binder is gone too (its answers may still queue an
 * Unreserve until then). NULL-safe. */
void serve_dra_free(struct serve *s);

/* serve_dra_node keeps a node's JSON for the world (the node informer's handler calls it under
 * mu; obj NULL: deleted). changed says whether the node's fingerprint changed. */
void serve_dra_node(struct serve *s, const char *name, json_t *obj, bool changed);

/* serve_dra_prepare gives the cluster a world built from the objects as they are now (mu
 * held), rebuilt only when something changed since the last one. */
void serve_dra_prepare(struct serve *s);

/* serve_dra_touches: the pod has claims, or requests an extended resource that a DeviceClass
 * serves (its cycle may allocate and create a claim in the world) (mu held). */
bool serve_dra_touches(struct serve *s, const struct kube_pod *pod);

/* serve_dra_reserve is Reserve after a successful cycle on node (mu held): when the pod has
 * claims to allocate or reserve (the claim of its extended resources that the cycle made
 * included), the allocations go in flight (later cycles see their devices taken) and bind
 * (which the caller built) goes to the writers, which write the claims (PreBind: create the
 * extended-resource claim, write allocations and reservations, then the pod's
 * status.extendedResourceClaimStatus), wait for binding conditions, then submit the bind, or
 * fail it as a bind fails. Returns 1 when it took bind; else the caller submits bind itself:
 * 0 when the cycle changed nothing in the world (no claims; extended resources a device
 * plugin serves), -1 when the world holds what nothing will write (out of memory): rebuild
 * it.
 * fail: the cycle's PreBind failed on node with this error (sched_result.prebind_node; NULL:
 * it did not): the writers write what kube-scheduler's PreBind wrote before it stopped — the
 * pod's claims up to the entry naming a claim an earlier entry wrote, the claim of its
 * extended resources the failed PreBind created (sched_dra_pod_unreserved_extended) —, then
 * fail bind with the error (unless a write failed first) as a PreBind error fails it; 0 when
 * there is nothing to write. */
int serve_dra_reserve(struct serve *s, const struct kube_pod *pod, const char *node,
                      struct serve_task *bind, const char *fail);

/* serve_dra_bind_done (s->bind_done, which writes.c calls): the bind of pod key (uid) was
 * answered: on failure the claims reserved for it in PreBind are unreserved (Unreserve);
 * either way its PreBind record goes. Any thread; mu not held. */
void serve_dra_bind_done(struct serve *s, const char *key, const char *uid, bool ok);

/* serve_dra_postfilter: the pod's cycle found no node (mu held). The world may hold a claim
 * that PostFilter deallocated (res->requeued: the result says so): it is written to the API
 * as kube-scheduler writes it (an UpdateStatus without reservedFor, allocation and devices,
 * on a writer), and stands deallocated for later cycles meanwhile; or the pod's
 * extended-resource claim left from an earlier attempt that PostFilter deleted: a writer
 * deletes it (its finalizer off, then the DELETE). True when it took the attempt's report
 * with the deallocation: the writer writes the FailedScheduling event and the PodScheduled
 * condition (reason Unschedulable, from res->message; controller is the profile's
 * schedulerName, rv the pod's resourceVersion) once the update is answered, and on success
 * counts DefaultPreemption's attempt and clears the nomination when res->clear_nomination;
 * a refused update reports the FitError followed by its error instead (kube-scheduler's
 * PostFilter phase ends with the error: no preemption). The caller then does none of that
 * itself. */
struct sched_result;
bool serve_dra_postfilter(struct serve *s, const struct kube_pod *pod,
                          const struct sched_result *res, const char *controller, const char *rv);

/* serve_dra_invalidate: the world holds what the API does not (a cycle's PostFilter
 * deallocation, a Reserve that nothing will write): rebuild it before the next cycle (mu
 * held). */
void serve_dra_invalidate(struct serve *s);

#endif
