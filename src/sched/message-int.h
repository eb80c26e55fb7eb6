/* message-int.h - the FailedScheduling text: the histogram of reasons and FitError.Error();
 * internal to the scheduling core. */
#ifndef SCHED_MESSAGE_INT_H
#define SCHED_MESSAGE_INT_H

#include <stdint.h>
#include "sched/sched-int.h"

/* A histogram of reason ids (struct sched_hist, zero-initialised): sched_hist_add counts n
 * nodes for reason, sched_hist_add_status n nodes of one status (a plugin and its reason: several
 * reasons for NodeResourcesFit's mask, VolumeBinding's bits), sched_hist_add_node a node's row,
 * sched_hist_add_nodes n rows (the same counts as one sched_hist_add_node per row, counted by
 * distinct status first; *resolvable, when not NULL, gets how many rows failed and not as
 * unresolvable: preemption's potential nodes); 0 or -ENOMEM. sched_hist_release frees it. */
int sched_hist_add(struct sched_hist *h, uint32_t reason, uint32_t n);
int sched_hist_add_status(struct sched_hist *h, struct sched_cluster *c,
                          const struct sched_cpod *cp, uint32_t plugin, uint32_t reason,
                          uint32_t n);
int sched_hist_add_node(struct sched_hist *h, struct sched_cluster *c, const struct sched_cpod *cp,
                        const struct sched_nodeout *o);
int sched_hist_add_nodes(struct sched_hist *h, struct sched_cluster *c, const struct sched_cpod *cp,
                         const struct sched_nodeout *out, uint32_t n, uint32_t *resolvable);
void sched_hist_release(struct sched_hist *h);

/* sched_fit_error formats "0/N nodes are available: <sorted histogram>." (or the PreFilter's
 * message instead of the histogram); malloc'ed, NULL when out of memory. */
char *sched_fit_error(const struct sched_cluster *c, uint32_t nall, const struct sched_hist *h,
                      const char *prefilter_msg);

/* sched_fit_reason is the reason id of bit of a NodeResourcesFit mask for pod cp. */
uint32_t sched_fit_reason(struct sched_cluster *c, const struct sched_cpod *cp, unsigned bit);

/* sched_msg_preemption_found is DefaultPreemption's text when it found victims, "preemption:
 * found a potential placement for pod on node NODE, preempting N victims"; malloc'ed, NULL
 * when out of memory. */
char *sched_msg_preemption_found(const char *node, uint32_t nvictims);

#endif
