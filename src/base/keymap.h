/* keymap.h - a string-keyed hash map for the serve loop's pods, the informers' stores, YAML
 * anchors and the loader's names.
 *
 * Open addressing with linear probing and backward-shift deletion (no tombstones). Keys are
 * borrowed: each value must keep its key alive while it is in the map (the usual case: the
 * key is a member of the value). Keys are often chosen by whoever wrote the input (anchor
 * names, object names), so the hash is SipHash-1-3 under a secret key of each map (as
 * Python's and Rust's): nobody can choose names that all land in one run of slots. The
 * iteration order is therefore not the same from one run to the next. Not thread-safe (one
 * map); maps of different threads are independent. */
#ifndef BASE_KEYMAP_H
#define BASE_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

struct keymap_slot {
    const char *key; /* NULL: empty */
    size_t hash;
    void *value;
};

struct keymap {
    struct keymap_slot *slots;
    size_t cap; /* power of two, 0 before the first insert */
    size_t len;
    uint64_t k0, k1; /* the hash's key, drawn at the first insert into an empty table */
};

#define KEYMAP_INIT                                                                                \
    {                                                                                              \
        NULL, 0, 0, 0, 0                                                                           \
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

/* keymap_probes is how many slots a lookup of key examines (1: its home slot, or the empty
 * slot that says it is absent): what the tests hold the hash to. */
size_t keymap_probes(const struct keymap *m, const char *key);

/* keymap_siphash13 is SipHash-1-3 of the n bytes at p under the key (k0, k1). */
uint64_t keymap_siphash13(uint64_t k0, uint64_t k1, const void *p, size_t n);

/* Iteration: for (i = 0; i < m->cap; i++) if (m->slots[i].key) ... ; do not modify the map
 * while iterating (collect keys first). */

#endif
