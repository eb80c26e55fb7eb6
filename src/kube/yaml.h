/* yaml.h - YAML (and JSON) documents to jansson values, remembering source lines.
 *
 * Scalars are resolved the way Kubernetes' YAML decoder (go-yaml v2 via sigs.k8s.io/yaml)
 * resolves them: plain null/~/empty to null; true/false/yes/no/on/off (any of the usual
 * casings) to booleans; integers as Go's ParseInt(s, 0, 64) reads them once '_' are dropped
 * (0x, 0o, 0b, and a leading 0 for octal: "010" is 8); floats to reals; everything
 * quoted, block or otherwise to strings. Anchors and aliases are supported, within go-yaml's
 * bound on aliasing (a document whose nodes come mostly from aliases, past a size, is refused
 * with "document contains excessive aliasing", as the API server and kubectl refuse it). Every
 * value produced is recorded in a struct kube_lines so decoders can name the line of a bad
 * field. */
#ifndef KUBE_YAML_H
#define KUBE_YAML_H

#include <stddef.h>

#include <jansson.h>

#include "base/err.h"

/* A line table: where each value of a parsed document came from. */
struct kube_lines;

/* kube_yaml_load parses every document in data (len bytes). On success *docs is a new JSON
 * array (caller json_decref()s it) holding one value per non-empty document, and *lines (when
 * lines is not NULL) a new table the caller frees with kube_lines_free(). file is only used in
 * error messages ("line 7: mapping values are not allowed in this context"). */
int kube_yaml_load(const char *data, size_t len, const char *file, json_t **docs,
                   struct kube_lines **lines, struct err *err);

/* kube_yaml_each parses the documents of data one at a time, so memory holds one document's
 * values, not the whole file's. For each non-empty document it calls fn(doc, lines, NULL,
 * ctx) with the document (borrowed: released when fn returns) and a line table of that
 * document only (fn may add entries with kube_lines_add). Anchors do not carry from one
 * document to the next. A non-zero return from fn stops parsing and is returned as it is;
 * parse errors are reported as by kube_yaml_load.
 *
 * With KUBE_YAML_SPLIT_ITEMS, the elements of the "items" sequence of a document's root
 * mapping (a List) are not kept in the root either: each is passed as it is parsed, as
 * fn(item, item_lines, list, ctx) where list is the root mapping with the keys that came
 * before "items" (so "kind" may not be there yet); the root itself follows at its end, with
 * "items" an empty array. */
#define KUBE_YAML_SPLIT_ITEMS 1u
/* Input that is plain JSON is read by a faster reader of its own, which hands fn the same
 * values, lines and errors (kube/yaml-int.h); KUBE_YAML_NO_JSON_PATH keeps to libyaml (the
 * tests compare the two). */
#define KUBE_YAML_NO_JSON_PATH 2u
/* KUBE_YAML_TRANSIENT: fn keeps no value it is given (nor one it builds from them) past its
 * return, so the JSON reader may build them in the thread's jansson arena (kube/jalloc.h). */
#define KUBE_YAML_TRANSIENT 4u
typedef int (*kube_yaml_doc_fn)(json_t *doc, struct kube_lines *lines, json_t *list, void *ctx);
int kube_yaml_each(const char *data, size_t len, const char *file, unsigned flags,
                   kube_yaml_doc_fn fn, void *ctx, struct err *err);

/* kube_json_loadb reads data (len bytes), one JSON document, with the JSON path's reader
 * (no line table): a new reference, into the thread's jansson arena when it is on; NULL when
 * that reader does not take the text (JSON that YAML would read differently, or not JSON
 * at all), for json_loadb to read it then. On the JSON it takes it builds what json_loadb
 * builds, in about a third of the time (docs/benchmarks.md: the live cluster's lists). */
json_t *kube_json_loadb(const char *data, size_t len);

/* kube_yaml_each_read is kube_yaml_each on input pulled through rd, which fills up to size
 * bytes of buf and returns how many (0 at the end), or a negative errno-style code that
 * stops the parse with "cannot read: ..." in err. The whole input is never in memory.
 * rewind (may be NULL) starts the input over from its first byte, returning 0 or a negative
 * errno-style code; without it the JSON reader is not used (it may have to hand the input
 * to libyaml from the start). */
typedef long (*kube_yaml_read_fn)(void *rd_ctx, char *buf, size_t size);
typedef int (*kube_yaml_rewind_fn)(void *rd_ctx);
int kube_yaml_each_read(kube_yaml_read_fn rd, kube_yaml_rewind_fn rewind, void *rd_ctx,
                        const char *file, unsigned flags, kube_yaml_doc_fn fn, void *ctx,
                        struct err *err);

/* kube_lines_find returns the 1-based line of a value produced by the parse, 0 when unknown
 * (l may be NULL: API responses have no lines). */
int kube_lines_find(const struct kube_lines *l, const json_t *v);

/* kube_lines_dup returns the i-th mapping key of the document given twice in its mapping (the
 * value given last is the one read: the API server's YAML decoder refuses it in strict mode,
 * `key "app" already set in map`), with *line the line of the second one and *len the key's
 * length (it may hold a NUL); NULL past the last one (the first few of a document are kept). */
const char *kube_lines_dup(const struct kube_lines *l, size_t i, int *line, size_t *len);

/* kube_lines_free releases a table; NULL is fine. */
void kube_lines_free(struct kube_lines *l);

/* kube_lines_count returns how many values the table records (NULL: 0). Only values are
 * recorded, not mapping keys. */
size_t kube_lines_count(const struct kube_lines *l);

#endif
