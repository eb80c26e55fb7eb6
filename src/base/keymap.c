/* keymap.c - open-addressing string hash map (SipHash-1-3 keyed per map, linear probing,
 * backward shift). Each map's key is the process's secret (getrandom, once) with a counter
 * added, as Rust's RandomState does: a map's layout says nothing about another's. */
#include "base/keymap.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static uint64_t keymap_secret[2];
static atomic_uint_fast64_t keymap_counter;
static pthread_once_t keymap_secret_once = PTHREAD_ONCE_INIT;

/* keymap_secret_init draws the process's secret: getrandom, else /dev/urandom, else (neither
 * available: no attacker can read the process's clock and address space either) the time,
 * the pid and an address mixed together. */
static void keymap_secret_init(void)
{
    unsigned char b[16];
    size_t got = 0;
    ssize_t n;
    int fd;

    while (got < sizeof(b)) {
        n = getrandom(b + got, sizeof(b) - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    if (got < sizeof(b) && (fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) >= 0) {
        while (got < sizeof(b) && ((n = read(fd, b + got, sizeof(b) - got)) > 0 || errno == EINTR))
            if (n > 0)
                got += (size_t)n;
        close(fd);
    }
    if (got < sizeof(b)) {
        struct timespec ts;
        uint64_t x[3];

        clock_gettime(CLOCK_MONOTONIC, &ts);
        x[0] = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        x[1] = (uint64_t)getpid();
        x[2] = (uint64_t)(uintptr_t)&ts;
        keymap_secret[0] = keymap_siphash13(0x736f6d6570736575ULL, x[2], x, sizeof(x));
        keymap_secret[1] = keymap_siphash13(keymap_secret[0], x[0], x, sizeof(x));
        return;
    }
    memcpy(keymap_secret, b, sizeof(b));
}

/* keymap_rekey gives an empty map its own key */
static void keymap_rekey(struct keymap *m)
{
    pthread_once(&keymap_secret_once, keymap_secret_init);
    m->k0 = keymap_secret[0] + atomic_fetch_add_explicit(&keymap_counter, 1, memory_order_relaxed);
    m->k1 = keymap_secret[1];
}

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                   \
    do {                                                                                           \
        v0 += v1;                                                                                  \
        v1 = ROTL(v1, 13);                                                                         \
        v1 ^= v0;                                                                                  \
        v0 = ROTL(v0, 32);                                                                         \
        v2 += v3;                                                                                  \
        v3 = ROTL(v3, 16);                                                                         \
        v3 ^= v2;                                                                                  \
        v0 += v3;                                                                                  \
        v3 = ROTL(v3, 21);                                                                         \
        v3 ^= v0;                                                                                  \
        v2 += v1;                                                                                  \
        v1 = ROTL(v1, 17);                                                                         \
        v1 ^= v2;                                                                                  \
        v2 = ROTL(v2, 32);                                                                         \
    } while (0)

/* little-endian 64-bit load, whatever the host's order */
static uint64_t load64(const unsigned char *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
           (uint64_t)p[7] << 56;
}

uint64_t keymap_siphash13(uint64_t k0, uint64_t k1, const void *p, size_t n)
{
    const unsigned char *in = p, *end = in + (n & ~(size_t)7);
    uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
    uint64_t b = (uint64_t)n << 56, m;

    for (; in != end; in += 8) {
        m = load64(in);
        v3 ^= m;
        SIPROUND;
        v0 ^= m;
    }
    switch (n & 7) {
    case 7:
        b |= (uint64_t)in[6] << 48;
        /* fall through */
    case 6:
        b |= (uint64_t)in[5] << 40;
        /* fall through */
    case 5:
        b |= (uint64_t)in[4] << 32;
        /* fall through */
    case 4:
        b |= (uint64_t)in[3] << 24;
        /* fall through */
    case 3:
        b |= (uint64_t)in[2] << 16;
        /* fall through */
    case 2:
        b |= (uint64_t)in[1] << 8;
        /* fall through */
    case 1:
        b |= (uint64_t)in[0];
        break;
    case 0:
        break;
    }
    v3 ^= b;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

static size_t keymap_hash(const struct keymap *m, const char *s)
{
    return (size_t)keymap_siphash13(m->k0, m->k1, s, strlen(s));
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
    i = keymap_find(m, key, keymap_hash(m, key));
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
    size_t h, i;

    if (old)
        *old = NULL;
    if (!m->len)
        keymap_rekey(m);
    if ((m->len + 1) * 4 > m->cap * 3 && keymap_grow(m))
        return -ENOMEM;
    h = keymap_hash(m, key);
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
    i = keymap_find(m, key, keymap_hash(m, key));
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

size_t keymap_probes(const struct keymap *m, const char *key)
{
    size_t mask, i, n = 1;
    size_t h;

    if (!m->cap)
        return 0;
    mask = m->cap - 1;
    h = keymap_hash(m, key);
    for (i = h & mask; m->slots[i].key; i = (i + 1) & mask, n++)
        if (m->slots[i].hash == h && !strcmp(m->slots[i].key, key))
            break;
    return n;
}
