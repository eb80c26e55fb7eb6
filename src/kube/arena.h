/* arena.h - bump allocator for objects that live and die together.
 *
 * A decoded manifest set, or one API object in the scheduler's cache, allocates all its
 * strings and arrays from one arena and frees them with one kube_arena_free(). Allocation
 * failure returns NULL; the arena stays usable. */
#ifndef KUBE_ARENA_H
#define KUBE_ARENA_H

#include <stddef.h>

struct kube_arena_block;

struct kube_arena {
    struct kube_arena_block *head;
    size_t used; /* bytes handed out, for memory accounting */
};

#define KUBE_ARENA_INIT { NULL, 0 }

/* kube_arena_alloc returns n zeroed bytes aligned to 16, or NULL. */
void *kube_arena_alloc(struct kube_arena *a, size_t n);
/* kube_arena_strdup / strndup copy into the arena, packed (no alignment); NULL in gives NULL
 * out. */
char *kube_arena_strdup(struct kube_arena *a, const char *s);
char *kube_arena_strndup(struct kube_arena *a, const char *s, size_t n);
/* kube_arena_free releases every block; the arena is empty and reusable afterwards. */
void kube_arena_free(struct kube_arena *a);

/* A point to roll an arena back to: kube_arena_rewind(a, &m) frees (or reuses) everything
 * allocated after kube_arena_mark(a, &m), as if it never happened, so a caller can decode an
 * object, hand its contents on, and give the memory back. Allocations made before the mark
 * stay valid; pointers into what came after it must not be used again. */
struct kube_arena_mark {
    struct kube_arena_block *head, *next;
    size_t off, used;
};

void kube_arena_mark(const struct kube_arena *a, struct kube_arena_mark *m);
void kube_arena_rewind(struct kube_arena *a, const struct kube_arena_mark *m);

#endif
