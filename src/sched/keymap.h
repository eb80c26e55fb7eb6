/* keymap.h - a string-keyed hash map for the serve loop's pods and the informers' stores.
 *
 * Open addressing with linear probing and backward-shift deletion (no tombstones). Keys are
 * borrowed: each value must keep its key alive while it is in the map (the usual case: the
 * key is a member of the value). Not thread-safe. */
#ifndef SCHED_KEYMAP_H
#define SCHED_KEYMAP_H

#include <stddef.h>

struct sched_keymap_slot {
    const char *key; /* NULL: empty */
    size_t hash;
    void *value;
};

struct sched_keymap {
    struct sched_keymap_slot *slots;
    size_t cap; /* power of two, 0 before the first insert */
    size_t len;
};

#define SCHED_KEYMAP_INIT { NULL, 0, 0 }

/* sched_keymap_get returns the value for key, or NULL. */
void *sched_keymap_get(const struct sched_keymap *m, const char *key);
/* sched_keymap_put inserts or replaces; returns 0 or -ENOMEM. The previous value, if any,
 * is returned through *old (may be NULL). */
int sched_keymap_put(struct sched_keymap *m, const char *key, void *value, void **old);
/* sched_keymap_del removes key and returns its value (NULL when absent). */
void *sched_keymap_del(struct sched_keymap *m, const char *key);
/* sched_keymap_release frees the table (not the values). */
void sched_keymap_release(struct sched_keymap *m);

/* Iteration: for (i = 0; i < m->cap; i++) if (m->slots[i].key) ... ; do not modify the map
 * while iterating (collect keys first). */

#endif
