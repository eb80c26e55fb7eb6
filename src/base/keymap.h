/* keymap.h - a string-keyed hash map for the serve loop's pods and the informers' stores.
 *
 * Open addressing with linear probing and backward-shift deletion (no tombstones). Keys are
 * borrowed: each value must keep its key alive while it is in the map (the usual case: the
 * key is a member of the value). Not thread-safe. */
#ifndef BASE_KEYMAP_H
#define BASE_KEYMAP_H

#include <stddef.h>

struct keymap_slot {
    const char *key; /* NULL: empty */
    size_t hash;
    void *value;
};

struct keymap {
    struct keymap_slot *slots;
    size_t cap; /* power of two, 0 before the first insert */
    size_t len;
};

#define KEYMAP_INIT                                                                                \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

/* keymap_get returns the value for key, or NULL. */
void *keymap_get(const struct keymap *m, const char *key);
/* keymap_put inserts or replaces; returns 0 or -ENOMEM. The previous value, if any,
 * is returned through *old (may be NULL). */
int keymap_put(struct keymap *m, const char *key, void *value, void **old);
/* keymap_del removes key and returns its value (NULL when absent). */
void *keymap_del(struct keymap *m, const char *key);
/* keymap_release frees the table (not the values). */
void keymap_release(struct keymap *m);

/* Iteration: for (i = 0; i < m->cap; i++) if (m->slots[i].key) ... ; do not modify the map
 * while iterating (collect keys first). */

#endif
