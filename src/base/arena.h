/* arena.h - bump allocator for objects that live and die together.
 *
 * A decoded manifest set, or one API object in the scheduler's cache, allocates all its
 * strings and arrays from one arena and frees them with one arena_release(). Allocation
 * failure returns NULL; the arena stays usable. */
#ifndef BASE_ARENA_H
#define BASE_ARENA_H

#include <stddef.h>

struct arena_block;
struct arena_strings;

struct arena {
    struct arena_block *head;
    size_t used;                   /* bytes handed out, for memory accounting */
    struct arena_block *spare;     /* the largest block a rewind gave back, kept for the next */
    struct arena_strings *strings; /* arena_share_strings: recent strings, NULL when off */
};

#define ARENA_INIT                                                                                 \
    {                                                                                              \
        NULL, 0, NULL, NULL                                                                        \
    }

/* arena_alloc returns n zeroed bytes aligned to 16, or NULL. */
void *arena_alloc(struct arena *a, size_t n);
/* arena_strdup / strndup copy into the arena, packed (no alignment); NULL in gives NULL
 * out. */
char *arena_strdup(struct arena *a, const char *s);
char *arena_strndup(struct arena *a, const char *s, size_t n);
/* arena_release releases every block; the arena is empty and reusable afterwards (without
 * string sharing). */
void arena_release(struct arena *a);

/* arena_share_strings turns string sharing on: from then on arena_strndup_shared hands out
 * the copy it made earlier of a short string that comes again (a recent one: a fixed table,
 * a later string may take an earlier one's place), so the names, images and label keys the
 * objects of a manifest repeat are kept once. Returns 0 or -ENOMEM (sharing stays off). A
 * rewind forgets every string seen (what it freed may be handed out again otherwise). */
int arena_share_strings(struct arena *a);
/* arena_strndup_shared is arena_strndup for strings nobody writes to: with sharing on, the
 * copy may be shared with earlier callers. */
const char *arena_strndup_shared(struct arena *a, const char *s, size_t n);

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
