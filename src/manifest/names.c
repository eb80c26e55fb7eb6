/* names.c - generated pod names (see names.h). */
#include "manifest/names-int.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "manifest/podhash-int.h"

#define NAME_ATTEMPTS 64
/* names.SimpleNameGenerator: generateName is cut to 63 - 5 characters before the suffix */
#define GENERATED_BASE_MAX 58

/* Kubernetes' rand.String alphabet: no vowels, no look-alike characters. */
static const char safe_alphabet[] = "bcdfghjklmnpqrstvwxz2456789";

/* suffix5 writes rand.String(5)-like characters derived from (ns, base, index, attempt). */
static void suffix5(char out[6], const char *ns, const char *base, size_t index, unsigned attempt)
{
    uint64_t h = manifest_pod_key_hash(ns, base);
    uint64_t idx = index;
    int i;

    h = manifest_fnv1a(h, &idx, sizeof(idx));
    h = manifest_fnv1a(h, &attempt, sizeof(attempt));
    for (i = 0; i < 5; i++) {
        out[i] = safe_alphabet[h % 27];
        h /= 27;
    }
    out[5] = '\0';
}

/* manifest_template_hash is the controller's pod-template-hash (podhash.c); for a template
 * that cannot be printed as the controller prints it, a stand-in: the decimal form of a 32-bit
 * hash of the template's canonical JSON (at most its first HASH_INPUT_MAX bytes: YAML aliases
 * can make a small file expand enormously), each digit mapped through the safe alphabet as
 * rand.SafeEncodeString does (10 characters). */
#define HASH_INPUT_MAX ((size_t)1 << 20)

struct hash_state {
    uint64_t h;
    size_t n;
};

static int hash_chunk(const char *buf, size_t size, void *data)
{
    struct hash_state *st = data;

    if (st->n + size > HASH_INPUT_MAX)
        return -1;
    st->h = manifest_fnv1a(st->h, buf, size);
    st->n += size;
    return 0;
}

void manifest_template_hash(char out[11], const json_t *tmpl)
{
    struct hash_state st = {MANIFEST_FNV_OFFSET, 0};
    char dec[16];
    int i;

    if (!manifest_pod_template_hash(tmpl, NULL, out, NULL))
        return;
    json_dump_callback(tmpl, hash_chunk, &st, JSON_COMPACT | JSON_SORT_KEYS);
    snprintf(dec, sizeof(dec), "%010u", (unsigned)(uint32_t)(st.h ^ (st.h >> 32)));
    for (i = 0; i < 10; i++)
        out[i] = safe_alphabet[(unsigned char)dec[i] % 27];
    out[10] = '\0';
}

/* manifest_generated_name picks generateName-style "<base><5 chars>" not used yet in the namespace.
 */
const char *manifest_generated_name(struct manifest_ctx *c, const char *ns, const char *base,
                                    size_t index)
{
    char buf[GENERATED_BASE_MAX + 8];
    size_t blen = strlen(base);
    unsigned attempt;

    if (blen > GENERATED_BASE_MAX)
        blen = GENERATED_BASE_MAX;
    memcpy(buf, base, blen);
    for (attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
        suffix5(buf + blen, ns, base, index, attempt);
        if (manifest_pod_set_find(c->in, ns, buf) < 0)
            return arena_strdup(&c->in->arena, buf);
    }
    return NULL;
}
