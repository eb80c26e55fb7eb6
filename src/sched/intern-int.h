/* intern-int.h - strings to dense uint32 ids (labels, taints, node and resource names,
 * reasons), so the core compares and hashes integers; and the core's small shared helpers
 * (intern.c). Internal to the scheduling core. */
#ifndef SCHED_INTERN_INT_H
#define SCHED_INTERN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sched/sched-int.h"

/* sched_intern_init prepares an empty table; 0 or -ENOMEM. sched_intern_release frees it. */
int sched_intern_init(struct sched_intern *t);
void sched_intern_release(struct sched_intern *t);

/* sched_intern_add returns the id of s, adding it (with its value as a base-10 int64 when it
 * is one); SCHED_NOID when out of memory. sched_intern_find returns the id of s, or
 * SCHED_NOID when absent. */
uint32_t sched_intern_add(struct sched_intern *t, const char *s);
uint32_t sched_intern_find(const struct sched_intern *t, const char *s);
/* sched_intern_int: whether the string of id is a base-10 int64 (Go ParseInt), its value in
 * *v when it is. */
bool sched_intern_int(const struct sched_intern *t, uint32_t id, int64_t *v);

/* sched_hash_bytes is the core's hash (32-bit FNV-1a) of n bytes at p, continuing from h
 * (2166136261 to start). */
uint32_t sched_hash_bytes(const void *p, size_t n, uint32_t h);

/* sched_intern_labels writes the l->n labels of l, interned in t, into out (room for l->n),
 * sorted by key id as sched_label_find wants them; 0 or -ENOMEM. */
int sched_intern_labels(struct sched_intern *t, const struct kube_labels *l,
                        struct sched_idlabel *out);
/* sched_intern_labels_dup is the same into a malloc'ed array (*out, NULL when l has none; the
 * caller frees it) of *n labels. */
int sched_intern_labels_dup(struct sched_intern *t, const struct kube_labels *l,
                            struct sched_idlabel **out, uint32_t *n);

/* sched_grow grows the array *arr of elem-sized items, with room for *cap, to hold at least
 * need (doubling; the new room zeroed); 0 or -ENOMEM (then *arr and *cap are unchanged). */
int sched_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem);

#endif
