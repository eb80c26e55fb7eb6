/* imagelocality.c - ImageLocality (pkg/scheduler/framework/plugins/imagelocality): per image
 * name id the size first reported and the number of nodes that have it, kept as nodes come
 * and go; a pod's score on a node from its containers' images (hooks in plugins-int.h). */
#include "sched/plugins-int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "sched/intern-int.h"

#define MB (1024LL * 1024)
#define MIN_THRESHOLD (23 * MB)
#define MAX_CONTAINER_THRESHOLD (1000 * MB)

static int table_reserve(struct sched_cluster *c, uint32_t id)
{
    uint32_t n, i;
    int64_t *sz;
    uint32_t *nn;

    if (id < c->nimg)
        return 0;
    n = c->nimg ? c->nimg : 64;
    while (n <= id)
        n *= 2;
    if (!(sz = realloc(c->img_size, n * sizeof(*sz))))
        return -ENOMEM;
    c->img_size = sz;
    if (!(nn = realloc(c->img_nodes, n * sizeof(*nn))))
        return -ENOMEM;
    c->img_nodes = nn;
    for (i = c->nimg; i < n; i++) {
        sz[i] = 0;
        nn[i] = 0;
    }
    c->nimg = n;
    return 0;
}

void sched_image_node_clear(struct sched_cluster *c, uint32_t slot)
{
    struct sched_slot *s = &c->slots[slot];
    uint32_t i;

    for (i = 0; i < s->nimages; i++)
        c->img_nodes[s->images[i]]--;
    free(s->images);
    s->images = NULL;
    s->nimages = 0;
}

int sched_image_node_set(struct sched_cluster *c, uint32_t slot, const struct kube_node *node)
{
    struct sched_slot *s = &c->slots[slot];
    size_t i, j, total = 0;
    uint32_t *ids = NULL, n = 0, k;

    sched_image_node_clear(c, slot);
    for (i = 0; i < node->nimages; i++)
        total += node->images[i].nnames;
    if (!total)
        return 0;
    if (!(ids = malloc(total * sizeof(*ids))))
        return -ENOMEM;
    for (i = 0; i < node->nimages; i++)
        for (j = 0; j < node->images[i].nnames; j++) {
            uint32_t id = sched_intern_add(&c->strs, node->images[i].names[j]);
            if (id == SCHED_NOID || table_reserve(c, id)) {
                for (k = 0; k < n; k++)
                    c->img_nodes[ids[k]]--;
                free(ids);
                return -ENOMEM;
            }
            for (k = 0; k < n && ids[k] != id; k++)
                ;
            if (k < n)
                continue; /* the node is in the name's set once */
            if (!c->img_nodes[id]++)
                c->img_size[id] = node->images[i].size_bytes;
            ids[n++] = id;
        }
    s->images = ids;
    s->nimages = n;
    return 0;
}

void sched_image_cluster_release(struct sched_cluster *c)
{
    free(c->img_size);
    free(c->img_nodes);
}

static int add_image(struct sched_cluster *c, struct sched_cpod *cp, const char *image,
                     uint32_t *ids)
{
    const char *slash = strrchr(image, '/'), *colon = strrchr(image, ':');
    uint32_t id;

    cp->nimage_refs++;
    /* normalizedImageName: no ':' after the last '/' means no tag */
    if (!colon || (slash && colon < slash)) {
        char *tagged = buf_fmt("%s:latest", image);
        if (!tagged)
            return -ENOMEM;
        id = sched_intern_find(&c->strs, tagged);
        free(tagged);
    } else {
        id = sched_intern_find(&c->strs, image);
    }
    if (id != SCHED_NOID && id < c->nimg && c->img_nodes[id])
        ids[cp->nimages++] = id;
    return 0;
}

int sched_image_compile(struct sched_cluster *c, const struct kube_pod *pod, struct sched_cpod *cp)
{
    size_t i, n = pod->ncontainers + pod->ninit_containers;
    uint32_t *ids;

    cp->images = NULL;
    cp->nimages = cp->nimage_refs = 0;
    if (!n)
        return 0;
    if (!(ids = arena_alloc(cp->arena, n * sizeof(*ids))))
        return -ENOMEM;
    for (i = 0; i < pod->ninit_containers; i++)
        if (add_image(c, cp, pod->init_containers[i].image ? pod->init_containers[i].image : "",
                      ids))
            return -ENOMEM;
    for (i = 0; i < pod->ncontainers; i++)
        if (add_image(c, cp, pod->containers[i].image ? pod->containers[i].image : "", ids))
            return -ENOMEM;
    cp->images = ids;
    return 0;
}

int32_t sched_image_score(const struct sched_cluster *c, const struct sched_cpod *cp, uint32_t slot)
{
    const struct sched_slot *s = &c->slots[slot];
    int64_t sum = 0, max;
    uint32_t i, k;

    if (!cp->nimage_refs)
        return 0;
    for (i = 0; i < cp->nimages; i++)
        for (k = 0; k < s->nimages; k++)
            if (s->images[k] == cp->images[i]) {
                /* scaledImageScore: size x the share of nodes that have the image */
                double spread = (double)c->img_nodes[cp->images[i]] / (double)c->norder;
                sum += (int64_t)((double)c->img_size[cp->images[i]] * spread);
                break;
            }
    max = MAX_CONTAINER_THRESHOLD * (int64_t)cp->nimage_refs;
    if (sum < MIN_THRESHOLD)
        sum = MIN_THRESHOLD;
    else if (sum > max)
        sum = max;
    return (int32_t)(100 * (sum - MIN_THRESHOLD) / (max - MIN_THRESHOLD));
}
