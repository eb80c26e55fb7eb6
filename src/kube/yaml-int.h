/* yaml-int.h - what kube/yaml.c (libyaml's events to values) shares with its JSON fast path
 * (kube/yamljson.c), and both with yamlvalue.c (the line table, plain scalars) below them;
 * not for callers.
 *
 * The fast path reads input that is plain JSON, the form generated files and `kubectl get -o
 * json` take, and hands the callbacks of kube_yaml_each the same values with the same lines
 * libyaml's path would. At the first byte whose handling it is not sure of (anything beyond
 * strict JSON, and the JSON libyaml reads otherwise or rejects) it stops, having called back
 * `delivered` times; the loader then starts the input over with libyaml, which skips that many
 * callbacks and goes on: the callbacks see exactly what a libyaml-only run gives them. */
#ifndef KUBE_YAML_INT_H
#define KUBE_YAML_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <yaml.h>

#include "base/err.h"
#include "base/keymap.h"
#include "kube/yaml.h"

#define YAML_MAX_DEPTH 128

#define KUBE_LINES_DUPS 4

struct kube_lines {
    const json_t **keys;
    int *lines;
    uint32_t *stamp; /* a slot is in use when its stamp is gen */
    uint32_t gen;
    size_t cap; /* power of two */
    size_t n;
    /* mapping keys given twice in the document (the last value is the one kept): the first
     * few, cut to fit, and how many there were */
    struct {
        char key[128];
        size_t len;
        int line;
    } dups[KUBE_LINES_DUPS];
    size_t ndups;
};

struct anchor {
    char *name; /* the key of the loader's anchors map */
    json_t *value;
    unsigned long nodes; /* go-yaml's decode count of the value, its aliases expanded */
};

struct loader {
    yaml_parser_t parser;
    struct kube_lines *lines;
    const char *file;
    struct err *err;
    struct keymap anchors; /* name -> struct anchor, of the document being read */
    /* go-yaml v2's count of decoded nodes in the document, and of those that come from
     * expanding an alias: its cap on aliasing (yaml.c, alias_check) */
    unsigned long decode_count, alias_count;
    /* kube_yaml_each_read only */
    kube_yaml_read_fn rd;
    void *rd_ctx;
    int rd_err;
    /* KUBE_YAML_SPLIT_ITEMS: elements of a root's "items" go to item_fn one by one */
    int (*item_fn)(struct loader *ld, json_t *item, json_t *list);
    struct kube_lines *item_lines;
    void *each;
    /* the JSON fast path (kube_yaml_each*): tried first when fast is set; rewind (reader
     * input only) starts the input over; delivered counts the callbacks made, skip the ones
     * the next pass leaves out */
    bool fast;
    bool transient; /* KUBE_YAML_TRANSIENT */
    kube_yaml_rewind_fn rewind;
    unsigned long delivered, skip;
    unsigned long check_at; /* a pass that only counts callbacks, up to this one */
    bool fn_failed;         /* the last callback made returned non-zero */
};

/* kube_lines_add records that v came from line. */
int kube_lines_add(struct kube_lines *l, const json_t *v, int line);

/* kube_lines_dup_add records that key (n bytes) was given twice in one mapping, at line;
 * l may be NULL (a reader keeping no lines). */
void kube_lines_dup_add(struct kube_lines *l, const char *key, size_t n, int line);

/* kube_lines_clear empties a table for the next document or item (yamlvalue.c). */
void kube_lines_clear(struct kube_lines *l);

/* kube_yaml_plain (yamlvalue.c) resolves the text of a plain scalar as kube/yaml.h says (null, booleans,
 * integers, floats, else a string); a new reference, NULL when out of memory. */
json_t *kube_yaml_plain(const char *s, size_t len);

/* kube_yaml_json runs the fast path over data (len bytes) or, when data is NULL, the input of
 * ld->rd. Each document's root goes to take (which owns it), each item of a root's "items" to
 * ld->item_fn when set; ld->delivered counts both. Returns 0 when the input is done, what a
 * callback returned when one stops it, or -ENOMEM with ld->err set; or 0 with *stopped set
 * when libyaml must take over (nothing is left allocated then). */
int kube_yaml_json(struct loader *ld, const char *data, size_t len,
                   int (*take)(struct loader *ld, json_t *doc, void *ctx), void *ctx,
                   bool *stopped);

#endif
