/* arena.c - bump allocator in growing blocks. */
#include "base/arena.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct arena_block {
    struct arena_block *next;
    size_t size;
    size_t off;
    _Alignas(16) unsigned char data[];
};

struct arena_strings;
static void arena_share_strings_reset(struct arena_strings *t);

/* arena_bump hands out n bytes aligned to align (a power of two, at most 16) from the
 * current block, or from a new one. */
static void *arena_bump(struct arena *a, size_t n, size_t align)
{
    struct arena_block *b = a->head;
    size_t sz, off = 0;
    void *p;

    if (b)
        off = (b->off + align - 1) & ~(align - 1);
    if (!b || off > b->size || b->size - off < n) {
        sz = b ? b->size * 2 : 4096;
        if (sz > (size_t)1 << 20)
            sz = (size_t)1 << 20;
        if (sz < n)
            sz = n;
        if (a->spare && a->spare->size >= sz) {
            b = a->spare;
            a->spare = NULL;
            sz = b->size;
        } else if (!(b = malloc(sizeof(*b) + sz))) {
            return NULL;
        }
        b->size = sz;
        b->off = 0;
        off = 0;
        /* A large one-off allocation goes behind the current block so the current block
         * keeps serving small ones. */
        if (a->head && sz == n) {
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
    }
    p = b->data + off;
    b->off = off + n;
    a->used += n;
    return p;
}

void *arena_alloc(struct arena *a, size_t n)
{
    void *p;

    n = (n + 15) & ~(size_t)15;
    if (!n)
        n = 16;
    p = arena_bump(a, n, 16);
    if (p)
        memset(p, 0, n);
    return p;
}

/* Strings are packed byte by byte: with 16-byte alignment the names, label keys and values
 * of a decoded cluster wasted ~8 bytes each. */
char *arena_strndup(struct arena *a, const char *s, size_t n)
{
    char *p;

    if (!s)
        return NULL;
    p = arena_bump(a, n + 1, 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
    return s ? arena_strndup(a, s, strlen(s)) : NULL;
}

void arena_release(struct arena *a)
{
    struct arena_block *b = a->head, *next;

    while (b) {
        next = b->next;
        free(b);
        b = next;
    }
    free(a->spare);
    free(a->strings);
    a->head = a->spare = NULL;
    a->strings = NULL;
    a->used = 0;
}

/* Strings are looked up in a direct-mapped table by hash; an entry counts only while its
 * epoch is the table's (a rewind bumps it). Longer strings rarely repeat and are not kept. */
#define ARENA_STRINGS 4096 /* a power of two */
#define ARENA_SHARED_MAX 128

struct arena_strings {
    uint32_t epoch;
    struct {
        const char *s;
        uint32_t len, epoch;
    } slot[ARENA_STRINGS];
};

/* after 2^32 rewinds: no entry may look current again */
static void arena_share_strings_reset(struct arena_strings *t)
{
    memset(t, 0, sizeof(*t));
    t->epoch = 1;
}

int arena_share_strings(struct arena *a)
{
    if (!a->strings && !(a->strings = calloc(1, sizeof(*a->strings))))
        return -ENOMEM;
    a->strings->epoch = 1; /* zeroed entries are not current */
    return 0;
}

const char *arena_strndup_shared(struct arena *a, const char *s, size_t n)
{
    struct arena_strings *t = a->strings;
    uint32_t h = 2166136261u;
    size_t i;
    char *p;

    if (!s || !t || n > ARENA_SHARED_MAX)
        return arena_strndup(a, s, n);
    for (i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    h &= ARENA_STRINGS - 1;
    if (t->slot[h].epoch == t->epoch && t->slot[h].len == n && !memcmp(t->slot[h].s, s, n))
        return t->slot[h].s;
    if (!(p = arena_strndup(a, s, n)))
        return NULL;
    t->slot[h].s = p;
    t->slot[h].len = (uint32_t)n;
    t->slot[h].epoch = t->epoch;
    return p;
}

/* drop gives a block back: kept as the spare when it is the largest seen */
static void drop(struct arena *a, struct arena_block *b)
{
    if (a->spare && a->spare->size >= b->size) {
        free(b);
        return;
    }
    free(a->spare);
    a->spare = b;
}

void arena_mark(const struct arena *a, struct arena_mark *m)
{
    m->head = a->head;
    m->next = a->head ? a->head->next : NULL;
    m->off = a->head ? a->head->off : 0;
    m->used = a->used;
}

void arena_rewind(struct arena *a, const struct arena_mark *m)
{
    struct arena_block *b;

    /* newer blocks are pushed in front of the marked one; large one-off blocks may also have
     * been slotted in right behind it */
    while (a->head != m->head) {
        b = a->head;
        a->head = b->next;
        drop(a, b);
    }
    if (a->head) {
        while (a->head->next != m->next) {
            b = a->head->next;
            a->head->next = b->next;
            drop(a, b);
        }
        a->head->off = m->off;
    }
    a->used = m->used;
    if (a->strings && !++a->strings->epoch)
        arena_share_strings_reset(a->strings);
}
