/* listsplit.h - a JSON list split into documents of a few items as its text arrives, and the
 * JSON text tools the REST client uses on an answer before parsing it.
 *
 * The API server writes a list as {"kind":..,"metadata":{..},"items":[{..},{..},..]}. The
 * splitter copies the text before the items array (the head, with "items":[) into doc, then
 * the items one by one after it; every batch items it closes the array and the object ("]}"),
 * hands that document to part, and cuts doc back to the head. What follows the array (its
 * "]", the members after it, the last "}") goes after the last items, and that document is
 * handed over at the end. An answer without an items array is one document. Only the
 * structure is followed: strings (with their escapes) and the nesting depth; the items must
 * be objects. The first "items" member of the root is the one split. */
#ifndef KUBE_LISTSPLIT_H
#define KUBE_LISTSPLIT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"

/* kube_list_part_fn receives one document: doc's text, whose first head_len bytes are the
 * list's head (the members before the items; 0 for an answer that is not a list). It may
 * change the text after the head. Returns 0, or a negative code with err set, which stops
 * the split. */
typedef int (*kube_list_part_fn)(void *ud, struct buf *doc, size_t head_len);

enum kube_list_where { KUBE_LIST_HEAD, KUBE_LIST_ITEMS, KUBE_LIST_TAIL };

struct kube_list_split {
    struct buf doc;   /* the head, then the batch's items (or the tail) */
    size_t head_len;  /* the head's length in doc */
    size_t key_at;    /* where the last string at depth 1 began in doc */
    size_t batch;     /* items per document */
    size_t n;         /* items in doc */
    int depth;        /* of the position after the last byte read */
    bool in_str, esc; /* inside a string, after its backslash */
    bool key_items;   /* the last depth-1 string was "items" */
    bool want_array;  /* ... and a colon followed it */
    bool in_item;     /* inside an item (depth 3 and more) */
    enum kube_list_where where;
    const char *what; /* names the text in errors ("GET /api/v1/pods") */
    kube_list_part_fn part;
    void *ud;
    struct err *err;
    int rc; /* the failure that stopped the split (err set), else 0 */
};

/* kube_list_split_init readies s for a text named what; one item may be at most cap bytes
 * (with the head). Release with kube_list_split_release. */
void kube_list_split_init(struct kube_list_split *s, size_t batch, size_t cap, const char *what,
                          kube_list_part_fn part, void *ud, struct err *err);
/* kube_list_split_reset starts over for a new text (a retried request). */
void kube_list_split_reset(struct kube_list_split *s);
/* kube_list_split_feed reads the next n bytes of the text: 0, or the failure (sticky). */
int kube_list_split_feed(struct kube_list_split *s, const char *p, size_t n);
/* kube_list_split_end hands over the last document; -EPROTO when the text ended early. */
int kube_list_split_end(struct kube_list_split *s);
void kube_list_split_release(struct kube_list_split *s);

/* kube_json_strip_member removes every "key": VALUE member from the JSON text in b after its
 * first from bytes (a key is the quoted name followed at once by a colon, not preceded by a
 * backslash, so text inside a string never matches), with the comma that separated it. The
 * text stays valid JSON when from is 0 or the end of a member or element. */
void kube_json_strip_member(struct buf *b, size_t from, const char *key);

#endif
