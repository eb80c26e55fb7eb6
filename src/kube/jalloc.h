/* jalloc.h - jansson's blocks from a bump arena of the calling thread, while it asks for it.
 *
 * jansson allocates every value separately (a pod is some fifty blocks) and a parsed document
 * is usually dropped whole soon after it was read: taking its blocks from an arena and
 * rewinding the arena saves a malloc and a free per block, and the walk of json_delete when
 * nothing else points into it. The allocator is jansson's for the whole process
 * (json_set_alloc_funcs, installed by the first kube_jalloc_fit): while a thread has its arena
 * on, its jansson allocations come from it, or from malloc once it is full (a spill); a free
 * of a block inside the thread's arena does nothing; every other allocation and free goes to
 * malloc as before. What was allocated in the arena dies at the next rewind or fit: it must
 * not be kept (json_deep_copy, with the arena off, allocates outside it). Used by the REST
 * client's watch events and list pages (kube/client.c) and by the JSON reader of manifests
 * (kube/yamljson.c). */
#ifndef KUBE_JALLOC_H
#define KUBE_JALLOC_H

#include <stdbool.h>
#include <stddef.h>

/* kube_jalloc_release frees the calling thread's arena. */
void kube_jalloc_release(void);

#endif
