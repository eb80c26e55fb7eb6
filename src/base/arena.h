/* arena.h - bump allocator for objects that live and die together.
 *
 * A decoded manifest set, or one API object in the scheduler's cache, allocates all its
 * strings and arrays from one arena and frees them with one arena_free(). Allocation
 * failure returns NULL; the arena stays usable. */
#ifndef BASE_ARENA_H
#define BASE_ARENA_H

#include <stddef.h>

struct arena_block;

struct arena {
    struct arena_block *head;
    size_t used;               /* bytes handed out, for memory accounting */
    struct arena_block *spare; /* the largest block a rewind gave back, kept for the next */
};

#define ARENA_INIT                                                                                 \
    {                                                                                              \
        NULL, 0, NULL                                                                              \
    }

/* arena_alloc returns n zeroed bytes aligned to 16, or NULL. */
void *arena_alloc(struct arena *a, size_t n);
/* arena_strdup / strndup copy into the arena, packed (no alignment); NULL in gives NULL
 * out. */
char *arena_strdup(struct arena *a, const char *s);
char *arena_strndup(struct arena *a, const char *s, size_t n);
/* arena_free releases every block; the arena is empty and reusable afterwards. */
void arena_free(struct arena *a);

/* A point to roll an arena back to: arena_rewind(a, &m) frees (or reuses) everything
 * allocated after arena_mark(a, &m), as if it never happened, so a caller can decode an
 * object, hand its contents on, and give the memory back. Allocations made before the mark
 * stay valid; pointers into what came after it must not be used again. The largest block a
 * rewind drops is kept as a spare for the next block the arena needs, so a scratch mark and
 * rewind at the end of a block does not allocate and free a block each time. */
struct arena_mark {
    struct arena_block *head, *next;
    size_t off, used;
};

void arena_mark(const struct arena *a, struct arena_mark *m);
void arena_rewind(struct arena *a, const struct arena_mark *m);

#endif
