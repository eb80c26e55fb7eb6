/* plugins-int.h - the plugins' hooks: what the framework calls in each of kube-scheduler's
 * plugins that gpusched models, one section per plugin in kube-scheduler's default order,
 * each naming its file. Not for callers outside src/sched/ (and the white-box tests).
 *
 * The framework calls them at fixed places, in that order: PreFilter and PreScore state when
 * a pod is compiled (compile.c: NodeAffinity, ImageLocality, InterPodAffinity) and right after
 * (framework.c's sched_framework_prefilter: the volume plugins, PodTopologySpread); Filter once
 * per node class for the plugins that read only a node's labels and taints (framework.c), then
 * per node (cycle.c and, from scratch, reference.c; the volume plugins and PodTopologySpread
 * through framework.c's late Filters); Filter again in preemption's dry run
 * (defaultpreemption.c, framework.c); Score in cycle.c; the reason texts in message.c and
 * schedule.c; Reserve through framework.c (simulate.c). What a plugin keeps
 * for a cycle hangs off struct sched_cpod (sched-int.h); what it keeps across cycles hangs off
 * struct sched_cluster, fed by cluster.c's hooks as nodes and pods come and go. docs/design.md
 * ("Adding a plugin") says how a new plugin joins. */
#ifndef SCHED_PLUGINS_INT_H
#define SCHED_PLUGINS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "kube/object.h"
#include "sched/profile.h"
#include "sched/sched-int.h"

/* ---------------------------------------------------------------------------------------
 * NodeUnschedulable (nodeunschedulable.c) and NodeName (a comparison of interned names in
 * cycle.c and reference.c: cp->node_name)
 * ------------------------------------------------------------------------------------- */

/* sched_nodeunschedulable_filter_class: the nodes of class cl pass NodeUnschedulable (not
 * unschedulable, or the pod tolerates node.kubernetes.io/unschedulable:NoSchedule). */
bool sched_nodeunschedulable_filter_class(const struct sched_cluster *c,
                                          const struct sched_cpod *cp,
                                          const struct sched_class *cl);

/* ---------------------------------------------------------------------------------------
 * TaintToleration (tainttoleration.c)
 * ------------------------------------------------------------------------------------- */

/* sched_tolerates is v1.Toleration.ToleratesTaint over the pod's tolerations: one of them
 * tolerates the taint (key, value, effect); prefer_only: only those with an empty or
 * PreferNoSchedule effect count (the Score's rule). */
bool sched_tolerates(const struct sched_cpod *cp, uint32_t key, uint32_t value, uint8_t effect,
                     bool prefer_only);

/* sched_tainttoleration_class is the plugin on node class cl: the Filter (when filter; false
 * with *reason, the first untolerated taint's wording in p, when a NoSchedule or NoExecute
 * taint is not tolerated) and the Score's raw value (*score: the PreferNoSchedule taints not
 * tolerated, normalised in reverse by sched_normalize). sched_tainttoleration_filter_node is
 * the Filter on the node at slot itself (its own taints: PodTopologySpread's nodeTaintsPolicy
 * Honor). */
bool sched_tainttoleration_class(struct sched_cluster *c, const struct sched_profile *p,
                                 const struct sched_cpod *cp, struct sched_class *cl, bool filter,
                                 uint32_t *reason, int32_t *score);
bool sched_tainttoleration_filter_node(const struct sched_cluster *c, const struct sched_cpod *cp,
                                       uint32_t slot);

/* ---------------------------------------------------------------------------------------
 * NodeAffinity (nodeaffinity.c; its terms and PreFilter compiled by compile.c)
 * ------------------------------------------------------------------------------------- */

/* sched_nodeaffinity_class is the part that reads labels only, on class cl: the Filter
 * (false when the nodeSelector or every required term's expressions fail; *term_mask gets the
 * required terms whose expressions match, 0 when the nodeSelector fails) and the weights of
 * the preferred terms without matchFields (*score). The parts that read the node's name: the
 * required terms of term_mask whose matchFields hold on name, and the weights of the preferred
 * terms with matchFields that match the node (class cls, name). sched_nodeaffinity_filter_node
 * is the whole Filter on the node at slot (nodeSelector and required terms, matchFields too:
 * PodTopologySpread's nodeAffinityPolicy Honor). */
bool sched_nodeaffinity_class(const struct sched_cluster *c, const struct sched_cpod *cp,
                              const struct sched_class *cl, uint64_t *term_mask, int32_t *score);
bool sched_nodeaffinity_filter_name(const struct sched_cpod *cp, uint64_t term_mask, uint32_t name);
int32_t sched_nodeaffinity_score_name(const struct sched_cluster *c, const struct sched_cpod *cp,
                                      uint32_t cls, uint32_t name);
bool sched_nodeaffinity_filter_node(const struct sched_cluster *c, const struct sched_cpod *cp,
                                    uint32_t slot);

/* ---------------------------------------------------------------------------------------
 * NodePorts (nodeports.c)
 * ------------------------------------------------------------------------------------- */

/* sched_nodeports_filter: none of the pod's host ports conflicts with the node's ports in use
 * node_ports[0..nnode_ports). sched_nodeports_pod_conflict: one of pod p's (a nominated pod's,
 * counted on a copy of the node) conflicts with cp's. */
bool sched_nodeports_filter(const struct sched_cluster *c, const struct sched_port *node_ports,
                            uint32_t nnode_ports, const struct sched_cpod *cp);
bool sched_nodeports_pod_conflict(const struct sched_cluster *c, const struct sched_pod *p,
                                  const struct sched_cpod *cp);

/* ---------------------------------------------------------------------------------------
 * NodeResourcesFit, NodeResourcesBalancedAllocation and GPUPlacement (noderesources.c)
 * ------------------------------------------------------------------------------------- */

/* sched_noderesources_filter is NodeResourcesFit's Filter on the node at slot with usage use
 * (scalar_req: the node's request of each of the pod's scalars, or NULL for the live ones): 0
 * when the pod fits, else the SCHED_FIT_* mask of what is insufficient; *unresolvable when a
 * request exceeds the node's allocatable outright. */
uint32_t sched_noderesources_filter(const struct sched_cluster *c, uint32_t slot,
                                    const struct sched_cpod *cp, const struct sched_nodeuse *use,
                                    const int64_t *scalar_req, bool *unresolvable);

/* The Scores: NodeResourcesFit LeastAllocated and NodeResourcesBalancedAllocation (cpu and
 * memory, weight 1 each), GPUPlacement of the "gpu" profile (MostAllocated on the node's GPUs,
 * alloc_gpu of them req_gpu in use, for a pod that asks for pod_gpu > 0; else 0 on nodes
 * that have GPUs, 100 elsewhere). */
int64_t sched_noderesources_least_allocated(int64_t alloc_cpu, int64_t req_cpu, int64_t alloc_mem,
                                            int64_t req_mem);
int64_t sched_noderesources_balanced(int64_t alloc_cpu, int64_t node_cpu, int64_t pod_cpu,
                                     int64_t alloc_mem, int64_t node_mem, int64_t pod_mem);
int64_t sched_noderesources_gpu(const struct sched_profile *p, int64_t alloc_gpu, int64_t req_gpu,
                                int64_t pod_gpu);
/* GPUPlacement with DRA (docs/scheduling.md, "GPU-aware profile"): _prepare sets cp->gpu_dra
 * when p has GPUPlacement and a DeviceClass of c's world serves its resource (extendedResourceName),
 * and adds to cp->gpu the devices the pod's claims ask of that class; _dra adds to a node's
 * *alloc and *req (the device plugin's allocatable and requested) the devices of the node's
 * slices the class selects and those of them any claim holds (a node without the device
 * plugin's resource: its requests of it are DRA's, counted as held devices, so *req is
 * replaced). */
void sched_noderesources_gpu_prepare(const struct sched_cluster *c, const struct sched_profile *p,
                                     const struct kube_pod *pod, struct sched_cpod *cp);
void sched_noderesources_gpu_dra(const struct sched_cluster *c, const struct sched_profile *p,
                                 uint32_t slot, int64_t *alloc, int64_t *req);
/* sched_noderesources_gpu_node is _dra's arithmetic on the world's figures (dra_total devices,
 * dra_used of them held) */
void sched_noderesources_gpu_node(int64_t dra_total, int64_t dra_used, int64_t *alloc,
                                  int64_t *req);

/* sched_noderesources_score is NodeResourcesFit's score under p's scoringStrategy, given for
 * each of p->fit_resources the node's allocatable (0: the resource is left out, as
 * kube-scheduler leaves out a resource the node lacks or an extended resource the pod does not
 * request) and requested-with-the-pod: the weighted mean of leastRequestedScore /
 * mostRequestedScore (integer division), or of the broken-linear shape (scores x10, a 0 left
 * out of the mean, rounded half away from zero) for RequestedToCapacityRatio.
 * sched_noderesources_score_node is that score on the node at slot (the values as
 * calculateNodeAllocatableRequest takes them). sched_noderesources_kind: 0 cpu, 1 memory,
 * 2 ephemeral-storage, 3 any other (scalar). */
int64_t sched_noderesources_score(const struct sched_profile *p, const int64_t *alloc,
                                  const int64_t *req);
int32_t sched_noderesources_score_node(const struct sched_cluster *c, const struct sched_profile *p,
                                       const struct sched_cpod *cp, uint32_t slot);
int sched_noderesources_kind(const char *name);

/* sched_normalize is helper.DefaultNormalizeScore (TaintToleration's and NodeAffinity's
 * NormalizeScore): score scaled to 0..100 of max; reverse: the lowest raw score gets 100. */
static inline int64_t sched_normalize(int64_t score, int64_t max, bool reverse)
{
    if (max == 0)
        return reverse ? 100 : 0;
    score = 100 * score / max;
    return reverse ? 100 - score : score;
}

/* ---------------------------------------------------------------------------------------
 * The volume plugins: VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone
 * (volumerestrictions.c, nodevolumelimits.c, volumebinding.c, volumezone.c), over the
 * volume objects of volumes.c (shared internals: volumes-int.h)
 * ------------------------------------------------------------------------------------- */

struct sched_volumes;
struct sched_vpod;

/* sched_volumes_free frees the cluster's volume objects (v may be NULL). */
void sched_volumes_free(struct sched_volumes *v);

/* sched_volumes_pod_claims copies the claim names of pod into p (p->claims, one block the
 * caller frees; NULL when none), its generic ephemeral volumes' claims included, and its
 * in-tree volumes CSI migration counts (p->ninline); a claim of an ephemeral volume that c
 * does not have is made from its template, as the ephemeral volume controller does. 0 or
 * -ENOMEM. */
int sched_volumes_pod_claims(struct sched_cluster *c, struct sched_pod *p,
                             const struct kube_pod *pod);

/* PreFilter. sched_volumes_prefilter is what the four share, first: the pod's claims
 * (*vp, from cp's arena; NULL when the pod has neither claims nor in-tree volumes or an
 * earlier PreFilter rejected it), the claims of its ephemeral volumes made. Then each
 * plugin's PreFilter on *vp, in order, while none rejects: a rejection sets
 * cp->prefilter_conflict with cp->prefilter_msg; the framework sets cp->vol = vp when all
 * passed (the Filters below read it). 0 or -ENOMEM. */
int sched_volumes_prefilter(struct sched_cluster *c, struct sched_cpod *cp, struct sched_vpod **vp);
int sched_volumerestrictions_prefilter(struct sched_cluster *c, struct sched_cpod *cp,
                                       struct sched_vpod *vp);
int sched_nodevolumelimits_prefilter(struct sched_cluster *c, struct sched_cpod *cp,
                                     struct sched_vpod *vp);
int sched_volumebinding_prefilter(struct sched_cluster *c, struct sched_cpod *cp,
                                  struct sched_vpod *vp);
int sched_volumezone_prefilter(struct sched_cluster *c, struct sched_cpod *cp,
                               struct sched_vpod *vp);

/* sched_volumes_node_view fills node with the slot's name and labels as strings, as the
 * volume rules read a node (the labels live in the cluster's scratch until the next call);
 * false when out of memory. */
bool sched_volumes_node_view(struct sched_cluster *c, uint32_t slot, struct kube_node *node);

/* Filter on the node at slot (cp->vol set), each 0 when it passes, else the reason.
 * VolumeRestrictions: a ReadWriteOncePod claim of the pod that a pod already uses fails every
 * node, Unschedulable (preemption may evict that pod); dry: in preemption's dry run, where the
 * node holds only on[0..non) (its own pods otherwise). NodeVolumeLimits (on[0..non): the pods
 * on the node): Unschedulable. VolumeBinding (node: sched_volumes_node_view's) gives
 * SCHED_VB_* bits, and when it passes *score, its Score there (StorageCapacityScoring, on by
 * default from v1.37: 100 - the utilisation of the volumes it would bind, by class, averaged;
 * 0 when it binds none); VolumeZone a reason id. Both UnschedulableAndUnresolvable. */
uint32_t sched_volumerestrictions_filter(struct sched_cluster *c, const struct sched_cpod *cp,
                                         uint32_t slot, struct sched_pod *const *on, uint32_t non,
                                         bool dry);
uint32_t sched_nodevolumelimits_filter(struct sched_cluster *c, const struct sched_cpod *cp,
                                       uint32_t slot, struct sched_pod *const *on, uint32_t non);
uint32_t sched_volumebinding_filter(struct sched_cluster *c, const struct sched_cpod *cp,
                                    const struct kube_node *node, int32_t *score);
uint32_t sched_volumezone_filter(struct sched_cluster *c, const struct sched_cpod *cp,
                                 const struct kube_node *node);

/* VolumeBinding's Filter reasons, as bits of a node row's reason (SCHED_PL_VOLUME_BINDING) */
#define SCHED_VB_NODE_CONFLICT 1u    /* a bound volume's node affinity */
#define SCHED_VB_BIND_CONFLICT 2u    /* no volume to bind, no provisioning here */
#define SCHED_VB_PV_NOT_EXIST 4u     /* a bound claim's volume is missing */
#define SCHED_VB_NOT_ENOUGH_SPACE 8u /* CSIStorageCapacity: no room to provision here */

/* sched_volumebinding_reasons writes the reason texts of VolumeBinding's bits to out (up to
 * 4, in kube-scheduler's order); returns how many. */
size_t sched_volumebinding_reasons(uint32_t bits, const char **out);

/* sched_volumebinding_reserve is VolumeBinding's Reserve/PreBind for a pod placed on node:
 * each of its WaitForFirstConsumer claims that is unbound gets the smallest matching
 * available volume (both then bound to each other) or, when none matches, the annotation
 * selected-node = node (the volume is provisioned there). Later pods see the bindings. 0 or
 * -ENOMEM. */
int sched_volumebinding_reserve(struct sched_cluster *c, const struct kube_pod *pod,
                                const char *node, struct err *err);

/* ---------------------------------------------------------------------------------------
 * PodTopologySpread (podtopologyspread.c)
 * ------------------------------------------------------------------------------------- */

struct sched_spread_sources;

/* sched_spread_sources_free frees what sched_cluster_add_spread_source kept (NULL ok). */
void sched_spread_sources_free(struct sched_spread_sources *s);

/* sched_spread_prefilter compiles the pod's constraints (its own, else the system defaults)
 * into cp->spread and counts the pods matching each DoNotSchedule constraint per topology
 * domain (PreFilter). cp->spread stays NULL when the plugin has nothing to do (PreFilter and
 * PreScore would Skip). Memory from cp's arena. 0 or -ENOMEM. */
int sched_spread_prefilter(struct sched_cluster *c, struct sched_cpod *cp);

/* sched_spread_filter is the Filter on the node at slot: 0 when it passes, else the reason
 * (SCHED_R_SPREAD, or SCHED_R_SPREAD_LABEL with *unresolvable set). ref recounts from scratch
 * instead of reading the PreFilter counts (the reference path). */
uint32_t sched_spread_filter(const struct sched_cluster *c, const struct sched_cpod *cp,
                             uint32_t slot, bool ref, bool *unresolvable);

/* sched_spread_filter_dry is the Filter during preemption's dry run on the node at slot,
 * where only the pods on[0..non) remain (RemovePod for the others); false with *reason set
 * when it fails. */
bool sched_spread_filter_dry(const struct sched_cluster *c, const struct sched_cpod *cp,
                             uint32_t slot, struct sched_pod *const *on, uint32_t non,
                             uint32_t *reason);

/* sched_spread_scores: PreScore, Score and NormalizeScore of the ScheduleAnyway constraints
 * over the feasible nodes feas[0..nfeas) (order indices): raw[k] and norm[k] for feas[k]
 * (all 0 when the plugin does not score). Returns false when it does not score. */
bool sched_spread_scores(struct sched_cluster *c, const struct sched_cpod *cp, const uint32_t *feas,
                         uint32_t nfeas, int32_t *raw, int32_t *norm);

/* ---------------------------------------------------------------------------------------
 * InterPodAffinity (interpodaffinity.c: PreFilter and PreScore, Filter, Score, preemption's
 * dry run; interpodaffinity_index.c: the counts the cluster keeps; interpodaffinity_terms.c:
 * the terms; shared internals: interpodaffinity-int.h)
 * ------------------------------------------------------------------------------------- */

/* sched_ipa_pod_build fills p's pod affinity terms from pod (malloc'ed, freed by
 * sched_ipa_pod_release); 0 or -ENOMEM. sched_ipa_pod_attach and _detach keep the cluster's list
 * of pods with terms and the plugin's counts (the index) as p, on its slot, joins
 * or leaves the cluster; attach is 0 or -ENOMEM. sched_ipa_cluster_release frees what the
 * cluster holds for the plugin. */
int sched_ipa_pod_build(struct sched_cluster *c, const struct kube_pod *pod, struct sched_pod *p);
void sched_ipa_pod_release(struct sched_pod *p);
int sched_ipa_pod_attach(struct sched_cluster *c, struct sched_pod *p);
void sched_ipa_pod_detach(struct sched_cluster *c, struct sched_pod *p);
void sched_ipa_cluster_release(struct sched_cluster *c);

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

/* sched_ipa_filter_on: the Filter runs (its PreFilter did not skip). sched_ipa_score_on: the
 * Score does. */
bool sched_ipa_filter_on(const struct sched_cpod *cp);
bool sched_ipa_score_on(const struct sched_cpod *cp);

/* sched_ipa_filter is the Filter on the node at slot: 0 when it passes, else the reason id
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

/* Matching, shared with the reference path: whether term t selects the pod of namespace nsid
 * and labels (ns: that namespace's object, NULL for none), and the incoming pod's own terms,
 * namespace and labels as the state holds them. */
bool sched_ipa_term_matches(const struct sched_pterm *t, uint32_t nsid,
                            const struct sched_idlabel *labels, uint32_t nlabels,
                            const struct sched_ns *ns);
const struct sched_pterms *sched_ipa_own_terms(const struct sched_cpod *cp);
uint32_t sched_ipa_own_nsid(const struct sched_cpod *cp);
const struct sched_idlabel *sched_ipa_own_labels(const struct sched_cpod *cp, uint32_t *n);

/* ---------------------------------------------------------------------------------------
 * DynamicResources (dynamicresources_cycle.c, over the world of dynamicresources.c: the
 * cluster's c->dra, NULL when the input has no resource.k8s.io objects)
 * ------------------------------------------------------------------------------------- */

/* sched_dra_cycle_preenqueue: NULL when pod may be queued, else why it waits (its claim does
 * not exist yet, ...; the text lives in the world until the next call). */
const char *sched_dra_cycle_preenqueue(struct sched_cluster *c, const struct kube_pod *pod);

/* sched_dra_cycle_prefilter is the PreFilter, last of them: cp->dra (NULL when it skips),
 * cp->dra_delegated (the pod's scalars a DeviceClass serves, which NodeResourcesFit leaves
 * to it on a node without them); a rejection sets cp->prefilter_conflict and prefilter_msg
 * (plugin SCHED_PL_DRA), an error cp->dra_error. 0 or -ENOMEM. */
int sched_dra_cycle_prefilter(struct sched_cluster *c, struct sched_cpod *cp);

/* sched_dra_cycle_filter is the Filter on the node at slot (after every other): 0 with
 * *score its Score, else the reason id (UnschedulableAndUnresolvable: *unresolvable); an error
 * (a CEL runtime error, ...) sets cp->dra_error, which fails the attempt, the row's reason
 * "error: ..." and *unresolvable false. The same in preemption's dry
 * run. */
uint32_t sched_dra_cycle_filter(const struct sched_cluster *c, const struct sched_cpod *cp,
                                uint32_t slot, int32_t *score, bool *unresolvable);

/* sched_dra_cycle_postfilter: the PostFilter when no node fits (before DefaultPreemption):
 * a claim allocated for the pod that is available nowhere is deallocated (or its
 * extended-resource claim deleted); msg gets the status's reason ("deallocation of
 * ResourceClaim completed"), "" when it did nothing. 0 or -ENOMEM. */
int sched_dra_cycle_postfilter(struct sched_cluster *c, struct sched_cpod *cp, char *msg,
                               size_t msgsize);

/* sched_dra_cycle_prebind: Reserve and PreBind on the chosen node (allocations, reservations,
 * the extended-resource claim written), so later pods see them; *error (malloc'ed) when
 * PreBind fails ("running PreBind plugin ..."). 0 or -ENOMEM. */
int sched_dra_cycle_prebind(struct sched_cluster *c, struct sched_cpod *cp, const char *node,
                            char **error);

/* sched_dra_cycle_release frees cp's DynamicResources state. */
void sched_dra_cycle_release(struct sched_cpod *cp);

/* sched_dra_cycle_victim: pod ns/name was evicted: its reservations go, its claims released as
 * the resource-claim controller does. */
void sched_dra_cycle_victim(struct sched_cluster *c, const char *ns, const char *name);

/* ---------------------------------------------------------------------------------------
 * DefaultPreemption (defaultpreemption.c): the PostFilter for a pod that fits nowhere
 * ------------------------------------------------------------------------------------- */

/* sched_preempt runs preemption for cp after the failed cycle cy: eligibility, victims per
 * candidate node, the candidate chosen (the first best in node order, or rng->follow_preempt
 * when it is as good; rng may be NULL). Fills pr (release with sched_preemption_release);
 * 0 or -ENOMEM with err set. all_nodes: pr->nodes gets every node's verdict (explanations);
 * otherwise only the chosen candidate is kept (sched_preemption_chosen). ref: every node
 * through the dry run of every filter, never the summaries' fast path (the reference of
 * tests/unit/test_sched_equiv.c). npotential: how many rows of cy failed and not as unresolvable
 * (sched_hist_add_nodes counts them), UINT32_MAX to count them here. */
int sched_preempt(struct sched_cluster *c, const struct sched_profile *p,
                  const struct sched_cpod *cp, const struct sched_cycle *cy, uint32_t npotential,
                  const struct sched_rng *rng, bool ref, bool all_nodes,
                  struct sched_preemption *pr, struct err *err);
void sched_preemption_release(struct sched_preemption *pr);

/* sched_preemption_chosen is the chosen candidate's verdict (its victims, most important
 * first), NULL when there is none. */
const struct sched_preempt_node *sched_preemption_chosen(const struct sched_preemption *pr);

/* sched_preempt_fast_nodes counts the nodes the summaries' fast path judged so far (tests). */
uint64_t sched_preempt_fast_nodes(const struct sched_cluster *c);

/* DefaultPreemptionArgs' defaults */
#define SCHED_MIN_CANDIDATE_NODES_PERCENTAGE 10
#define SCHED_MIN_CANDIDATE_NODES_ABSOLUTE 100

/* sched_preempt_num_candidates is calculateNumCandidates: how many candidates the dry run
 * looks for among npotential nodes (10% of them, at least 100, at most all). */
uint32_t sched_preempt_num_candidates(uint32_t npotential);

/* sched_preempt_cmp_candidates is pickOneNodeForPreemption's order: fewer PDB violations,
 * lower highest-victim priority, lower sum of priorities, fewer victims, later start of the
 * highest-priority victims (victims are most important first). <0 when a is better, >0 when
 * b is, 0 on a tie (kube-scheduler then takes whichever its map gives first; we keep node
 * order). */
int sched_preempt_cmp_candidates(const struct sched_preempt_node *a,
                                 const struct sched_preempt_node *b);

/* sched_pdb_violations sets violating[i] (n entries) for the victims whose eviction a
 * PodDisruptionBudget forbids, counting them in order against each budget's
 * disruptionsAllowed (FilterVictimsWithPDBViolation); victims are in importance order, as
 * kube-scheduler passes them. 0 or -ENOMEM. */
int sched_pdb_violations(const struct sched_cluster *c, struct sched_pod *const *victims,
                         uint32_t n, uint8_t *violating);

/* ---------------------------------------------------------------------------------------
 * ImageLocality (imagelocality.c)
 * ------------------------------------------------------------------------------------- */

/* sched_image_node_set replaces the images of the node at slot with node's (each name counted
 * once per node; the size of a name is the one reported when the first node got it, as
 * kube-scheduler's cache keeps it); 0 or -ENOMEM. sched_image_node_clear forgets the node's
 * images (the node left). sched_image_cluster_release frees the cluster's image table. */
int sched_image_node_set(struct sched_cluster *c, uint32_t slot, const struct kube_node *node);
void sched_image_node_clear(struct sched_cluster *c, uint32_t slot);
void sched_image_cluster_release(struct sched_cluster *c);

/* sched_image_compile lists the pod's (init) container images, normalised as kube-scheduler
 * does (":latest" appended when the name has no tag), that some node has, into cp; 0 or
 * -ENOMEM. */
int sched_image_compile(struct sched_cluster *c, const struct kube_pod *pod, struct sched_cpod *cp);

/* sched_image_score is ImageLocality's Score on the node at slot: the sizes of the pod's images
 * the node has, each scaled by the share of nodes that have it, clamped to [23 MiB, 1000 MiB x
 * images] and mapped to 0..100. Not normalised; weight 1. */
int32_t sched_image_score(const struct sched_cluster *c, const struct sched_cpod *cp,
                          uint32_t slot);

#endif
