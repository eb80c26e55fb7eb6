/* jalloc-int.h - the thread's jansson arena as kube/'s parsers drive it (kube/jalloc.h says
 * what it is): made to fit, turned on and off, marked and rewound by the REST client
 * (client.c) and the JSON reader (yamljson.c); not for callers outside kube/. */
#ifndef KUBE_JALLOC_INT_H
#define KUBE_JALLOC_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "kube/jalloc.h"

/* kube_jalloc_fit makes the calling thread's arena empty and at least size bytes (a larger
 * one is kept; when out of memory there is none, and every block is a spill). */
void kube_jalloc_fit(size_t size);

/* kube_jalloc_on sets whether the calling thread's jansson allocations come from its arena. */
void kube_jalloc_on(bool on);

/* A point of the arena to come back to, and the spills so far. */
struct kube_jalloc_mark {
    size_t used;
    unsigned long spills;
};
void kube_jalloc_mark(struct kube_jalloc_mark *m);
/* kube_jalloc_spilled: some block went to malloc since m (it must be freed, with its value). */
bool kube_jalloc_spilled(const struct kube_jalloc_mark *m);
/* kube_jalloc_rewind drops every block allocated since m. */
void kube_jalloc_rewind(const struct kube_jalloc_mark *m);

#endif
