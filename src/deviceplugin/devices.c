/* devices.c - device IDs, the visible-devices list and the preferred allocation.
 *
 * The preferred allocation works on GPU indices: IDs are mapped to their GPU first, so a
 * request never names a device twice and unknown IDs are refused before anything is chosen. */
#include "deviceplugin/devices.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* More combinations than this and dp_preferred chooses greedily (C(16,8) = 12870). */
#define EXHAUSTIVE_MAX 200000.0

void dp_inventory_release(struct dp_inventory *inv)
{
    if (!inv)
        return;
    free(inv->gpus);
    free(inv->score);
    memset(inv, 0, sizeof(*inv));
}

uint32_t dp_pair_score(const struct dp_inventory *inv, size_t a, size_t b)
{
    if (!inv->score || a == b || a >= inv->ngpus || b >= inv->ngpus)
        return 0;
    return inv->score[a * inv->ngpus + b];
}

static unsigned replicas_of(const struct dp_inventory *inv)
{
    return inv->replicas > 1 ? inv->replicas : 1;
}

size_t dp_ndevices(const struct dp_inventory *inv)
{
    return inv->ngpus * replicas_of(inv);
}

size_t dp_device_id(const struct dp_inventory *inv, size_t k, char *out)
{
    unsigned r = replicas_of(inv);
    size_t g = k / r;

    if (r == 1)
        snprintf(out, DP_ID_MAX, "%s", inv->gpus[g].uuid);
    else
        snprintf(out, DP_ID_MAX, "%s::%zu", inv->gpus[g].uuid, k % r);
    return g;
}

long dp_id_gpu(const struct dp_inventory *inv, const char *id)
{
    unsigned r = replicas_of(inv);
    const char *sep = strstr(id, "::");
    size_t ulen = sep ? (size_t)(sep - id) : strlen(id);
    size_t i;

    if (r > 1) {
        char *end;
        unsigned long rep;

        if (!sep || !sep[2] || sep[2] < '0' || sep[2] > '9')
            return -1;
        rep = strtoul(sep + 2, &end, 10);
        if (*end || rep >= r || (sep[2] == '0' && sep[3]))
            return -1;
    } else if (sep) {
        return -1;
    }
    for (i = 0; i < inv->ngpus; i++)
        if (strlen(inv->gpus[i].uuid) == ulen && !memcmp(inv->gpus[i].uuid, id, ulen))
            return (long)i;
    return -1;
}

int dp_list_strategy_parse(const char *s, unsigned *out, struct err *err)
{
    unsigned bits = 0;
    const char *p = s ? s : "";

    for (;;) {
        size_t n = strcspn(p, ",");

        if (n == 6 && !strncmp(p, "envvar", n))
            bits |= DP_LIST_ENVVAR;
        else if (n == 15 && !strncmp(p, "cdi-annotations", n))
            bits |= DP_LIST_CDI_ANNOTATIONS;
        else if (n == 7 && !strncmp(p, "cdi-cri", n))
            bits |= DP_LIST_CDI_CRI;
        else
            return err_set(err, -EINVAL,
                           "unknown device list strategy '%.*s' (want envvar, cdi-annotations "
                           "or cdi-cri, or a comma list of them)",
                           (int)n, p);
        if (!p[n])
            break;
        p += n + 1;
    }
    *out = bits;
    return 0;
}

int dp_visible_devices(const struct dp_inventory *inv, const char *const *ids, size_t n,
                       struct buf *out, struct err *err)
{
    unsigned char seen[DP_MAX_GPUS];
    size_t i;
    bool first = true;

    memset(seen, 0, sizeof(seen));
    for (i = 0; i < n; i++) {
        long g = dp_id_gpu(inv, ids[i]);

        if (g < 0)
            return err_set(err, -ENOENT, "unknown device ID '%.*s'", 128, ids[i]);
        if (!inv->gpus[g].healthy)
            return err_set(err, -EINVAL, "device '%.*s' is unhealthy (%s)", 128, ids[i],
                           inv->gpus[g].unhealthy_reason);
    }
    for (i = 0; i < n; i++) {
        long g = dp_id_gpu(inv, ids[i]);

        if (seen[g])
            continue;
        seen[g] = 1;
        if (buf_printf(out, "%s%s", first ? "" : ",", inv->gpus[g].uuid))
            return err_set(err, -ENOMEM, "out of memory");
        first = false;
    }
    return 0;
}

/* ---- the preferred allocation --------------------------------------------------------- */

struct pick {
    const struct dp_inventory *inv;
    size_t ncand;
    size_t cand[DP_MAX_GPUS]; /* GPU indices that may be chosen (available, not must) */
    bool chosen[DP_MAX_GPUS]; /* by GPU index */
    bool avail[DP_MAX_GPUS];  /* by GPU index: available (must included) */
};

/* What a choice is worth, compared field by field: NVLink links kept whole (inside the
 * chosen set or inside what is left, i.e. not cut), NVLink inside the chosen set, the PCIe and
 * NUMA closeness of the chosen set, then of the rest. */
struct worth {
    uint64_t kept_nv, in_nv, in_pc, left_pc;
};

static int worth_cmp(const struct worth *a, const struct worth *b)
{
    if (a->kept_nv != b->kept_nv)
        return a->kept_nv > b->kept_nv ? 1 : -1;
    if (a->in_nv != b->in_nv)
        return a->in_nv > b->in_nv ? 1 : -1;
    if (a->in_pc != b->in_pc)
        return a->in_pc > b->in_pc ? 1 : -1;
    if (a->left_pc != b->left_pc)
        return a->left_pc > b->left_pc ? 1 : -1;
    return 0;
}

static void pick_worth(const struct pick *p, struct worth *w)
{
    size_t n = p->inv->ngpus, a, b;

    memset(w, 0, sizeof(*w));
    for (a = 0; a < n; a++) {
        if (!p->avail[a])
            continue;
        for (b = a + 1; b < n; b++) {
            uint32_t s;

            if (!p->avail[b])
                continue;
            s = dp_pair_score(p->inv, a, b);
            if (p->chosen[a] && p->chosen[b]) {
                w->kept_nv += s / DP_SCORE_NVLINK;
                w->in_nv += s / DP_SCORE_NVLINK;
                w->in_pc += s % DP_SCORE_NVLINK;
            } else if (!p->chosen[a] && !p->chosen[b]) {
                w->kept_nv += s / DP_SCORE_NVLINK;
                w->left_pc += s % DP_SCORE_NVLINK;
            }
        }
    }
}

static double binomial(size_t n, size_t k)
{
    double r = 1;
    size_t i;

    if (k > n)
        return 0;
    for (i = 1; i <= k; i++)
        r = r * (double)(n - k + i) / (double)i;
    return r;
}

/* Tries every way of choosing k of the candidates; best[] gets the winner. Combinations are
 * visited in lexicographic order of candidate positions, so the first best one wins ties
 * and lower indices are preferred. */
static void pick_exhaustive(struct pick *p, size_t k, size_t *best)
{
    size_t idx[DP_MAX_GPUS], i;
    struct worth best_w, w;
    bool have = false;

    memset(&best_w, 0, sizeof(best_w));
    for (i = 0; i < k; i++)
        idx[i] = i;
    for (;;) {
        for (i = 0; i < k; i++)
            p->chosen[p->cand[idx[i]]] = true;
        pick_worth(p, &w);
        if (!have || worth_cmp(&w, &best_w) > 0) {
            have = true;
            best_w = w;
            for (i = 0; i < k; i++)
                best[i] = p->cand[idx[i]];
        }
        for (i = 0; i < k; i++)
            p->chosen[p->cand[idx[i]]] = false;
        /* next combination */
        i = k;
        while (i > 0 && idx[i - 1] == p->ncand - k + i - 1)
            i--;
        if (i == 0)
            break;
        idx[i - 1]++;
        for (; i < k; i++)
            idx[i] = idx[i - 1] + 1;
    }
}

/* Adds one GPU at a time, the one worth most as pick_worth counts it (lowest index on ties):
 * good enough where trying every combination is too slow. */
static void pick_greedy(struct pick *p, size_t k, size_t *best)
{
    size_t got, i;

    for (got = 0; got < k; got++) {
        struct worth best_w, w;
        bool have = false;
        size_t best_g = 0;

        memset(&best_w, 0, sizeof(best_w));
        for (i = 0; i < p->ncand; i++) {
            size_t g = p->cand[i];

            if (p->chosen[g])
                continue;
            p->chosen[g] = true;
            pick_worth(p, &w);
            p->chosen[g] = false;
            if (!have || worth_cmp(&w, &best_w) > 0) {
                have = true;
                best_w = w;
                best_g = g;
            }
        }
        p->chosen[best_g] = true;
        best[got] = best_g;
    }
}

/* With replicas: each step takes a replica of the GPU that has the most available replicas
 * not taken yet, preferring GPUs this request does not use yet. */
static long preferred_replicas(const struct dp_inventory *inv, const char *const *available,
                               size_t navail, const long *gpu_of, bool *taken, size_t need,
                               const char **out, size_t nout)
{
    unsigned free_of[DP_MAX_GPUS], used_of[DP_MAX_GPUS];
    size_t i;

    memset(free_of, 0, sizeof(free_of));
    memset(used_of, 0, sizeof(used_of));
    for (i = 0; i < navail; i++)
        if (!taken[i])
            free_of[gpu_of[i]]++;
        else
            used_of[gpu_of[i]]++;
    while (nout < need) {
        size_t g, best_g = 0;
        bool have = false;

        for (g = 0; g < inv->ngpus; g++) {
            if (!free_of[g])
                continue;
            if (!have || used_of[g] < used_of[best_g] ||
                (used_of[g] == used_of[best_g] && free_of[g] > free_of[best_g])) {
                have = true;
                best_g = g;
            }
        }
        if (!have)
            break;
        for (i = 0; i < navail; i++)
            if (!taken[i] && gpu_of[i] == (long)best_g)
                break;
        taken[i] = true;
        out[nout++] = available[i];
        free_of[best_g]--;
        used_of[best_g]++;
    }
    return (long)nout;
}

long dp_preferred(const struct dp_inventory *inv, const char *const *available, size_t navail,
                  const char *const *must, size_t nmust, size_t size, const char **out,
                  struct err *err)
{
    struct pick p;
    long *gpu_of = NULL;
    bool *taken = NULL;
    size_t best[DP_MAX_GPUS], nout = 0, i, j, k;
    long rc;

    if (nmust > size)
        return err_set(err, -EINVAL, "%zu devices must be included in an allocation of %zu", nmust,
                       size);
    gpu_of = calloc(navail ? navail : 1, sizeof(*gpu_of));
    taken = calloc(navail ? navail : 1, sizeof(*taken));
    if (!gpu_of || !taken) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (i = 0; i < navail; i++) {
        gpu_of[i] = dp_id_gpu(inv, available[i]);
        if (gpu_of[i] < 0) {
            rc = err_set(err, -ENOENT, "unknown device ID '%.*s'", 128, available[i]);
            goto out;
        }
        for (j = 0; j < i; j++)
            if (!strcmp(available[i], available[j])) {
                rc = err_set(err, -EINVAL, "device ID '%.*s' is listed twice", 128, available[i]);
                goto out;
            }
    }
    for (i = 0; i < nmust; i++) {
        for (j = 0; j < navail && strcmp(available[j], must[i]); j++)
            ;
        if (j == navail) {
            rc = err_set(err, -EINVAL, "must-include device '%.*s' is not available", 128, must[i]);
            goto out;
        }
        if (!taken[j])
            out[nout++] = available[j];
        taken[j] = true;
    }
    if (replicas_of(inv) > 1) {
        rc = preferred_replicas(inv, available, navail, gpu_of, taken, size, out, nout);
        goto out;
    }
    memset(&p, 0, sizeof(p));
    p.inv = inv;
    for (i = 0; i < navail; i++) {
        p.avail[gpu_of[i]] = true;
        if (taken[i])
            p.chosen[gpu_of[i]] = true;
        else
            p.cand[p.ncand++] = (size_t)gpu_of[i];
    }
    k = size - nout < p.ncand ? size - nout : p.ncand;
    if (k > 0 && k < p.ncand && binomial(p.ncand, k) <= EXHAUSTIVE_MAX)
        pick_exhaustive(&p, k, best);
    else if (k == p.ncand) {
        /* everything left is taken: keep the kubelet's order */
        for (i = 0; i < k; i++)
            best[i] = p.cand[i];
    } else if (k > 0)
        pick_greedy(&p, k, best);
    for (i = 0; i < k; i++)
        for (j = 0; j < navail; j++)
            if (!taken[j] && gpu_of[j] == (long)best[i]) {
                taken[j] = true;
                out[nout++] = available[j];
                break;
            }
    rc = (long)nout;
out:
    free(gpu_of);
    free(taken);
    return rc;
}
