/* sched_tb.h - builders for the scheduling core's unit tests: nodes and pods from compact
 * one-line specs, allocated from an arena, so a table row states a case in a few words.
 *
 * Node spec words: cpu=MILLI mem=MIB eph=MIB pods=N gpu=N scalar:NAME=N label:K=V
 *   taint:K=V:Effect (K:Effect for an empty value) unschedulable
 * Pod spec words: name=NS/NAME cpu=MILLI mem=MIB eph=MIB gpu=N scalar:NAME=N (first container's
 *   requests; a missing cpu/mem stays unset) c2:cpu=..,mem=.. (another container)
 *   init:cpu=..,mem=.. sidecar:cpu=..,mem=.. ovh:cpu=..,mem=.. prio=N never node=NAME
 *   nominated=NAME terminating gated sel:K=V tol:K=V:Effect tol:K:Exists:Effect (empty
 *   parts allowed: tol::Exists: tolerates everything) port:HP[/UDP|/SCTP][@IP] hostnet:CP
 *   label:K=V spread:KEY,SKEW,DoNotSchedule|ScheduleAnyway,SEL[,minD=N][,ignoreaff]
 *   [,honortaints][,mlk=KEY] (SEL: K=V, {} or nil; a topologySpreadConstraint)
 * Affinity: tb_req_term / tb_pref_term with expressions "KEY OP V1 V2 ..." (OP one of In,
 * NotIn, Exists, DoesNotExist, Gt, Lt) or "field:metadata.name In NAME". */
#ifndef TESTS_UNIT_SCHED_TB_H
#define TESTS_UNIT_SCHED_TB_H

#include "base/arena.h"
#include "kube/object.h"
#include "sched/sched.h"

struct kube_node *tb_node(struct arena *a, const char *name, const char *spec);
struct kube_pod *tb_pod(struct arena *a, const char *spec);
/* adds a required term (ORed with the others) made of the NULL-terminated expressions */
void tb_req_term(struct arena *a, struct kube_pod *p, ...);
void tb_pref_term(struct arena *a, struct kube_pod *p, int weight, ...);

/* tb_cluster builds a cluster from node specs "NAME: spec" (NULL-terminated array) and bound
 * pod specs (which must carry node=NAME). Aborts the test binary on failure. */
struct sched_cluster *tb_cluster(struct arena *a, const char *const *nodes,
                                 const char *const *bound);

/* tb_schedule runs sched_schedule_one (seed 0 tie-break) and returns "node:NAME",
 * "nominated:NODE victims:ns/a,ns/b | MESSAGE" or the FailedScheduling message, in a static
 * buffer. */
const char *tb_schedule(struct sched_cluster *c, const struct sched_profile *p,
                        const struct kube_pod *pod);

/* A table row: a cluster, a pod (with up to 3 required and 2 preferred affinity terms) and
 * the expected tb_schedule() answer. */
struct tb_row {
    const char *name;
    const char *nodes[10];
    const char *bound[10];
    const char *pod;
    const char *req[3][5];
    int pref_weight[2];
    const char *pref[2][5];
    const char *want;
    const struct sched_profile *profile; /* NULL: default */
};

/* tb_run_rows runs every row and reports each mismatch with the row's name. */
void tb_run_rows(const struct tb_row *rows, size_t n);
#define TB_RUN(rows) tb_run_rows(rows, sizeof(rows) / sizeof((rows)[0]))
#endif
