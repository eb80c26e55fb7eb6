/* jalloc.c - jansson's blocks from a per-thread bump arena (see jalloc.h). */
#include "kube/jalloc-int.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <jansson.h>

static _Thread_local struct {
    char *base;
    size_t size, used;
    unsigned long spills;
    bool on;
} arena;

static void *jalloc_malloc(size_t n)
{
    if (arena.on) {
        size_t need = (n + 15) & ~(size_t)15;

        if (need >= n && need <= arena.size - arena.used) {
            void *p = arena.base + arena.used;

            arena.used += need;
            return p;
        }
        arena.spills++;
    }
    return malloc(n);
}

/* jalloc_free is jansson's free: a block of this thread's arena is left to the arena's
 * rewind, any other (NULL too) goes to free(). */
static void jalloc_free(void *p)
{
    uintptr_t a = (uintptr_t)p, base = (uintptr_t)arena.base;

    if (a && a - base < arena.size) /* inside this thread's arena */
        return;
    free(p);
}

static pthread_once_t jalloc_once = PTHREAD_ONCE_INIT;

static void jalloc_setup(void)
{
    json_set_alloc_funcs(jalloc_malloc, jalloc_free);
}

/* The arena is mapped apart from malloc's heap: a large block malloc'ed and freed would move
 * malloc's mmap threshold, and with it where (and how often by copying) the loader's growing
 * arrays are allocated. */
static void arena_unmap(void)
{
    if (arena.base)
        munmap(arena.base, arena.size);
    arena.base = NULL;
    arena.size = arena.used = 0;
}

void kube_jalloc_fit(size_t size)
{
    void *p;

    pthread_once(&jalloc_once, jalloc_setup);
    arena.used = 0;
    if (arena.size >= size)
        return;
    arena_unmap();
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
        arena.base = p;
        arena.size = size;
    }
}

void kube_jalloc_on(bool on)
{
    arena.on = on;
}

void kube_jalloc_mark(struct kube_jalloc_mark *m)
{
    m->used = arena.used;
    m->spills = arena.spills;
}

bool kube_jalloc_spilled(const struct kube_jalloc_mark *m)
{
    return arena.spills != m->spills;
}

void kube_jalloc_rewind(const struct kube_jalloc_mark *m)
{
    arena.used = m->used;
}

void kube_jalloc_release(void)
{
    arena_unmap();
    arena.on = false;
}
