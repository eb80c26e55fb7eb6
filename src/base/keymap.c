/* keymap.c - open-addressing string hash map (FNV-1a, linear probing, backward shift). */
#include "base/keymap.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t keymap_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;

    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return (size_t)h;
}

static size_t keymap_find(const struct keymap *m, const char *key, size_t h)
{
    size_t mask = m->cap - 1, i = h & mask;

    while (m->slots[i].key) {
        if (m->slots[i].hash == h && !strcmp(m->slots[i].key, key))
            return i;
        i = (i + 1) & mask;
    }
    return i;
}

void *keymap_get(const struct keymap *m, const char *key)
{
    size_t i;

    if (!m->len)
        return NULL;
    i = keymap_find(m, key, keymap_hash(key));
    return m->slots[i].key ? m->slots[i].value : NULL;
}

static int keymap_grow(struct keymap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 16, i;
    struct keymap_slot *ns = calloc(ncap, sizeof(*ns));

    if (!ns)
        return -ENOMEM;
    for (i = 0; i < m->cap; i++) {
        struct keymap_slot *s = &m->slots[i];
        size_t j;

        if (!s->key)
            continue;
        j = s->hash & (ncap - 1);
        while (ns[j].key)
            j = (j + 1) & (ncap - 1);
        ns[j] = *s;
    }
    free(m->slots);
    m->slots = ns;
    m->cap = ncap;
    return 0;
}

int keymap_put(struct keymap *m, const char *key, void *value, void **old)
{
    size_t h = keymap_hash(key), i;

    if (old)
        *old = NULL;
    if ((m->len + 1) * 4 > m->cap * 3 && keymap_grow(m))
        return -ENOMEM;
    i = keymap_find(m, key, h);
    if (m->slots[i].key) {
        if (old)
            *old = m->slots[i].value;
        m->slots[i].key = key;
        m->slots[i].value = value;
        return 0;
    }
    m->slots[i].key = key;
    m->slots[i].hash = h;
    m->slots[i].value = value;
    m->len++;
    return 0;
}

void *keymap_del(struct keymap *m, const char *key)
{
    size_t mask, i, j;
    void *v;

    if (!m->len)
        return NULL;
    mask = m->cap - 1;
    i = keymap_find(m, key, keymap_hash(key));
    if (!m->slots[i].key)
        return NULL;
    v = m->slots[i].value;
    m->slots[i].key = NULL;
    m->len--;
    /* Backward shift: pull later members of the probe run into the hole when their home
     * slot does not lie strictly between the hole and their position. */
    j = i;
    for (;;) {
        size_t home;

        j = (j + 1) & mask;
        if (!m->slots[j].key)
            break;
        home = m->slots[j].hash & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->slots[i] = m->slots[j];
            m->slots[j].key = NULL;
            i = j;
        }
    }
    return v;
}

void keymap_release(struct keymap *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->len = 0;
}
