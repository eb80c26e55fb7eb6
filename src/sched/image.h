/* image.h - kube-scheduler's ImageLocality score: the images each node reports in
 * status.images, and the score of a pod's container images on a node; internal to the
 * scheduling core. */
#ifndef SCHED_IMAGE_H
#define SCHED_IMAGE_H

#include <stdint.h>

#include "kube/object.h"
#include "sched/sched-int.h"

/* sched_image_node_set replaces the images of the node at slot with node's (each name counted
 * once per node; the size of a name is the one reported when the first node got it, as
 * kube-scheduler's cache keeps it); 0 or -ENOMEM. sched_image_node_clear forgets the node's
 * images (the node left). sched_image_cluster_free frees the cluster's image table. */
int sched_image_node_set(struct sched_cluster *c, uint32_t slot, const struct kube_node *node);
void sched_image_node_clear(struct sched_cluster *c, uint32_t slot);
void sched_image_cluster_free(struct sched_cluster *c);

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
