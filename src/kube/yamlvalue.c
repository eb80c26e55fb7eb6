/* yamlvalue.c - what kube/yaml.c (libyaml's events) and kube/yamljson.c (plain JSON) share:
 * the line table (which line each value came from: an open-addressing hash keyed by the
 * json_t pointer, living as long as the values it describes) and the resolution of a plain
 * scalar as Kubernetes' YAML decoder resolves it. Both readers sit above it; it calls neither. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/goparse.h"
#include "kube/yaml-int.h"

static size_t lines_hash(const json_t *v, size_t cap)
{
    uintptr_t x = (uintptr_t)v;

    x ^= x >> 33;
    x *= (uintptr_t)0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & (cap - 1);
}

/* A slot is in use when its stamp is the table's generation: emptying the table for the next
 * item is one increment, not a pass over every slot. */
static int lines_grow(struct kube_lines *l)
{
    size_t ncap = l->cap ? l->cap * 2 : 1024, i, h;
    const json_t **nk = malloc(ncap * sizeof(*nk));
    int *nl = malloc(ncap * sizeof(*nl));
    uint32_t *ns = calloc(ncap, sizeof(*ns));

    if (!nk || !nl || !ns) {
        free(nk);
        free(nl);
        free(ns);
        return -ENOMEM;
    }
    for (i = 0; i < l->cap; i++) {
        if (l->stamp[i] != l->gen)
            continue;
        h = lines_hash(l->keys[i], ncap);
        while (ns[h])
            h = (h + 1) & (ncap - 1);
        nk[h] = l->keys[i];
        nl[h] = l->lines[i];
        ns[h] = 1;
    }
    free(l->keys);
    free(l->lines);
    free(l->stamp);
    l->keys = nk;
    l->lines = nl;
    l->stamp = ns;
    l->gen = 1;
    l->cap = ncap;
    return 0;
}

int kube_lines_add(struct kube_lines *l, const json_t *v, int line)
{
    size_t h;

    if (!l || !v)
        return 0;
    if ((l->n + 1) * 2 > l->cap && lines_grow(l))
        return -ENOMEM;
    h = lines_hash(v, l->cap);
    while (l->stamp[h] == l->gen && l->keys[h] != v)
        h = (h + 1) & (l->cap - 1);
    if (l->stamp[h] != l->gen)
        l->n++;
    l->keys[h] = v;
    l->lines[h] = line;
    l->stamp[h] = l->gen;
    return 0;
}

int kube_lines_find(const struct kube_lines *l, const json_t *v)
{
    size_t h;

    if (!l || !v || !l->cap)
        return 0;
    h = lines_hash(v, l->cap);
    while (l->stamp[h] == l->gen) {
        if (l->keys[h] == v)
            return l->lines[h];
        h = (h + 1) & (l->cap - 1);
    }
    return 0;
}

size_t kube_lines_count(const struct kube_lines *l)
{
    return l ? l->n : 0;
}

void kube_lines_dup_add(struct kube_lines *l, const char *key, size_t n, int line)
{
    if (!l)
        return;
    if (l->ndups < KUBE_LINES_DUPS) {
        size_t k = n < sizeof(l->dups[0].key) ? n : sizeof(l->dups[0].key);

        memcpy(l->dups[l->ndups].key, key, k);
        l->dups[l->ndups].len = k;
        l->dups[l->ndups].line = line;
    }
    l->ndups++;
}

const char *kube_lines_dup(const struct kube_lines *l, size_t i, int *line, size_t *len)
{
    if (!l || i >= l->ndups || i >= KUBE_LINES_DUPS)
        return NULL;
    *line = l->dups[i].line;
    *len = l->dups[i].len;
    return l->dups[i].key;
}

void kube_lines_free(struct kube_lines *l)
{
    if (!l)
        return;
    free(l->keys);
    free(l->lines);
    free(l->stamp);
    free(l);
}

static bool is_one_of(const char *s, const char *const *set)
{
    for (; *set; set++)
        if (!strcmp(s, *set))
            return true;
    return false;
}

static bool scan_float(const char *s, double *out)
{
    const char *p = s;
    int digits = 0;
    char *end;

    if (!strcmp(s, ".inf") || !strcmp(s, ".Inf") || !strcmp(s, ".INF") || !strcmp(s, "+.inf") ||
        !strcmp(s, "-.inf") || !strcmp(s, ".nan") || !strcmp(s, ".NaN") || !strcmp(s, ".NAN"))
        return false; /* JSON cannot carry them; keep as strings */
    if (*p == '+' || *p == '-')
        p++;
    while (*p >= '0' && *p <= '9')
        p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++, digits++;
    }
    if (!digits)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p)
        return false;
    *out = strtod(s, &end);
    return *end == '\0';
}

json_t *kube_yaml_plain(const char *s, size_t len)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                        "True", "TRUE", "on",  "On",  "ON",  NULL};
    static const char *const falses[] = {"n",     "N",     "no",  "No",  "NO",  "false",
                                         "False", "FALSE", "off", "Off", "OFF", NULL};
    /* the null and boolean words have at most 5 characters and begin with a letter or '~':
     * skip the lists for the rest (numbers above all) */
    bool word = len <= 5 && (!len || s[0] == '~' || ((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z'));
    int64_t i;
    double d;

    if (word && is_one_of(s, nulls))
        return json_null();
    if (word && is_one_of(s, trues))
        return json_true();
    if (word && is_one_of(s, falses))
        return json_false();
    /* go-yaml only tries numbers on words starting with a digit, a sign or '.', and drops
     * every '_' first ("1_000" is 1000) */
    if ((s[0] >= '0' && s[0] <= '9') || s[0] == '+' || s[0] == '-' || s[0] == '.') {
        char stack[64], *plain = len < sizeof(stack) ? stack : malloc(len + 1);
        size_t k, n = 0;
        json_t *num = NULL;

        if (!plain)
            return NULL;
        for (k = 0; k < len; k++)
            if (s[k] != '_' || s[0] == '.')
                plain[n++] = s[k];
        plain[n] = '\0';
        /* strconv.ParseInt(plain, 0, 64), as go-yaml v2 calls it */
        if (s[0] != '.' && !go_parse_int(plain, n, 0, 64, &i, NULL))
            num = json_integer(i);
        else if (scan_float(plain, &d))
            num = json_real(d);
        if (plain != stack)
            free(plain);
        if (num)
            return num;
    }
    return json_stringn(s, len);
}

/* kube_lines_clear empties a table for the next document or item, keeping its storage unless
 * a large document made it big. NULL (a reader keeping no lines) is no table. */
void kube_lines_clear(struct kube_lines *l)
{
    if (!l)
        return;
    l->ndups = 0;
    if (l->cap > 4096) {
        free(l->keys);
        free(l->lines);
        free(l->stamp);
        memset(l, 0, sizeof(*l));
        return;
    }
    if (l->n && !++l->gen) {
        memset(l->stamp, 0, l->cap * sizeof(*l->stamp));
        l->gen = 1;
    }
    l->n = 0;
}
