/* interpod.h - kube-scheduler's InterPodAffinity plugin (filter and score) and the Namespace
 * objects its namespaceSelector reads. The first section is the public API (included by
 * sched.h); the last one is for the core's own modules. */
#ifndef SCHED_INTERPOD_H
#define SCHED_INTERPOD_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "kube/object.h"

struct sched_cluster;

/* sched_cluster_set_namespace adds the Namespace ns, or replaces the labels of the one of that
 * name: pod affinity terms' namespaceSelector match these labels, and a pod's own namespace
 * labels are what existing pods' namespaceSelector see. A namespace the cluster has not been
 * given has no labels, as kube-scheduler's lister answers for one it has not seen. Returns 0
 * or -ENOMEM / -EINVAL (empty name) with err set. sched_cluster_remove_namespace forgets the
 * namespace called name; 0 or -ENOENT. */
int sched_cluster_set_namespace(struct sched_cluster *c, const struct kube_namespace *ns,
                                struct err *err);
int sched_cluster_remove_namespace(struct sched_cluster *c, const char *name);

/* ---------------------------------------------------------------------------------------
 * Internal to the scheduling core
 * ------------------------------------------------------------------------------------- */

#include "sched/sched-int.h"

/* sched_ipa_pod_build fills p's pod affinity terms from pod (malloc'ed, freed by
 * sched_ipa_pod_free); 0 or -ENOMEM. sched_ipa_pod_attach and _detach keep the cluster's list
 * of pods with terms and the plugin's counts (the index, interpod.c) as p, on its slot, joins
 * or leaves the cluster; attach is 0 or -ENOMEM. sched_ipa_cluster_free frees what the
 * cluster holds for the plugin. */
int sched_ipa_pod_build(struct sched_cluster *c, const struct kube_pod *pod, struct sched_pod *p);
void sched_ipa_pod_free(struct sched_pod *p);
int sched_ipa_pod_attach(struct sched_cluster *c, struct sched_pod *p);
void sched_ipa_pod_detach(struct sched_cluster *c, struct sched_pod *p);
void sched_ipa_cluster_free(struct sched_cluster *c);

/* sched_ipa_node_unindex takes the pods of the node at slot out of the counts, before its
 * labels change or it leaves the cluster (nothing when it is not present);
 * sched_ipa_node_index puts them back after the change (nothing when not present). Neither
 * fails: an update that runs out of memory makes the next cycle rebuild the counts. */
void sched_ipa_node_unindex(struct sched_cluster *c, uint32_t slot);
void sched_ipa_node_index(struct sched_cluster *c, uint32_t slot);

/* sched_ipa_label_pods sets *pods and *n to the pods carrying the label key=value (on any
 * node), from the lists the index keeps for the label keys asked about (a key asked about for
 * the first time is listed from every pod, then kept); valid until the cluster changes. 0 or
 * -ENOMEM. PodTopologySpread counts a new selector's pods from them. */
int sched_ipa_label_pods(struct sched_cluster *c, uint32_t key, uint32_t value,
                         struct sched_pod *const **pods, uint32_t *n);

/* sched_ipa_compile is the plugin's PreFilter and PreScore for pod: its terms (namespaceSelector
 * resolved against the namespaces), the counts by topology pair of the existing pods that
 * match them and of the existing pods whose required anti-affinity the pod matches, and the
 * score by topology pair, all read from the cluster's counts (valid until the cluster
 * changes). cp->ipa stays NULL when no pod, the incoming one included, has terms. 0 or
 * -ENOMEM with err set. sched_ipa_release frees cp->ipa. */
int sched_ipa_compile(struct sched_cluster *c, const struct kube_pod *pod, struct sched_cpod *cp,
                      struct err *err);
void sched_ipa_release(struct sched_cpod *cp);

/* sched_ipa_filter_on: the Filter runs (its PreFilter did not skip). */
bool sched_ipa_filter_on(const struct sched_cpod *cp);

/* sched_ipa_node is the Filter on the node at slot: 0 when it passes, else the reason id
 * (*unresolvable set for the affinity one, UnschedulableAndUnresolvable). */
uint32_t sched_ipa_filter(const struct sched_cluster *c, const struct sched_cpod *cp, uint32_t slot,
                          bool *unresolvable);

/* sched_ipa_score is the Score on the node at slot (before NormalizeScore). */
int64_t sched_ipa_score(const struct sched_cluster *c, const struct sched_cpod *cp, uint32_t slot);

/* sched_ipa_normalize is NormalizeScore: raw scaled from [min, max] to 0..100. */
int64_t sched_ipa_normalize(int64_t raw, int64_t min, int64_t max);

/* Preemption's dry runs (SelectVictimsOnNode) on one node: changes to the PreFilter counts,
 * pods of the node taken out (sign -1) and put back (+1) as RemovePod / AddPod do
 * (sched_ipa_dry_update), the pods nominated to the node added
 * (sched_ipa_dry_nominate: RunFilterPluginsWithNominatedPods), and the Filter on the counts
 * so changed: with the nominated pods, then, when that passes, without them; 0 or the reason.
 * sched_ipa_dry_new returns NULL when out of memory (or when the filter is off: then nothing
 * needs checking, and the other calls accept NULL); update and nominate are 0 or -ENOMEM;
 * sched_ipa_dry_free accepts NULL. */
struct sched_ipa_dry;
struct sched_ipa_dry *sched_ipa_dry_new(const struct sched_cpod *cp);
void sched_ipa_dry_free(struct sched_ipa_dry *d);
int sched_ipa_dry_update(const struct sched_cluster *c, const struct sched_cpod *cp,
                         struct sched_ipa_dry *d, const struct sched_pod *p, int sign);
int sched_ipa_dry_nominate(const struct sched_cluster *c, const struct sched_cpod *cp,
                           struct sched_ipa_dry *d, const struct sched_pod *p);
uint32_t sched_ipa_dry_filter(const struct sched_cluster *c, const struct sched_cpod *cp,
                              const struct sched_ipa_dry *d, uint32_t slot);

/* Matching, shared with the reference path: whether term t selects pod p (nslabels: p's
 * namespace labels, NULL for none), and the label of key on the node at slot (SCHED_NOID
 * when absent). */
bool sched_ipa_term_matches(const struct sched_pterm *t, uint32_t nsid,
                            const struct sched_idlabel *labels, uint32_t nlabels,
                            const struct sched_ns *ns);
const struct sched_ns *sched_ipa_ns_find(const struct sched_cluster *c, uint32_t nsid);
const struct sched_pterms *sched_ipa_own_terms(const struct sched_cpod *cp);
uint32_t sched_ipa_own_nsid(const struct sched_cpod *cp);
const struct sched_idlabel *sched_ipa_own_labels(const struct sched_cpod *cp, uint32_t *n);
bool sched_ipa_score_on(const struct sched_cpod *cp);

#endif
