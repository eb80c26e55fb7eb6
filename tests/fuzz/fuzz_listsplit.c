/* fuzz_listsplit.c - libFuzzer target for the list splitter and the member strip of
 * kube/listsplit.h (what the REST client runs over every list a live cluster sends). The
 * input's first byte seeds the batch size and how the rest is cut into reads. Properties:
 * the parts of a list whose whole text jansson reads (without duplicate keys) hold its items,
 * in order, each part with at most batch of them and the list's other members; a text that
 * ends early fails; stripping a member from text jansson reads leaves text it reads. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kube/listsplit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct got {
    json_t *items; /* the parts' items, in order */
    size_t batch;
    int parts;
    bool bad; /* a part jansson cannot read, or one with too many items */
};

static int on_part(void *ud, struct buf *doc, size_t head_len)
{
    struct got *g = ud;
    json_error_t je;
    json_t *d = json_loadb(doc->data ? doc->data : "", doc->len, 0, &je), *items;

    (void)head_len;
    g->parts++;
    items = json_object_get(d, "items");
    if (!d || (json_is_array(items) && json_array_size(items) > g->batch && head_len))
        g->bad = true;
    if (json_is_array(items))
        json_array_extend(g->items, items);
    json_decref(d);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kube_list_split s;
    struct got g;
    struct err err;
    json_error_t je;
    json_t *whole, *want;
    size_t off = 1, step;
    int rc = 0;

    if (size < 1 || size > (1u << 16))
        return 0;
    step = 1 + data[0] % 13;
    g.items = json_array();
    g.batch = 1 + data[0] / 13 % 5;
    g.parts = 0;
    g.bad = false;
    err_clear(&err);
    kube_list_split_init(&s, g.batch, 1u << 20, "fuzz", on_part, &g, &err);
    while (off < size && !rc) {
        size_t n = size - off < step ? size - off : step;
        rc = kube_list_split_feed(&s, (const char *)data + off, n);
        off += n;
    }
    if (!rc)
        rc = kube_list_split_end(&s);
    if (rc && !err.msg[0])
        __builtin_trap(); /* a failure says why */
    whole = json_loadb((const char *)data + 1, size - 1, JSON_REJECT_DUPLICATES, &je);
    want = json_object_get(whole, "items");
    if (whole && !rc && json_is_array(want) && (g.bad || !json_equal(want, g.items)))
        __builtin_trap();
    if (whole && json_is_object(whole) && json_is_array(want) && rc) {
        /* jansson reads it and the splitter did not: only items that are not objects */
        size_t i;
        json_t *it;
        bool all_objects = true;
        json_array_foreach(want, i, it) all_objects = all_objects && json_is_object(it);
        if (all_objects)
            __builtin_trap();
    }
    if (whole) {
        /* stripping a member (by a key the input often holds) leaves JSON */
        struct buf b = BUF_INIT(0);
        json_t *again;

        buf_append(&b, data + 1, size - 1);
        kube_json_strip_member(&b, 0, "a");
        again = json_loadb(b.data ? b.data : "", b.len, 0, &je);
        if (!again)
            __builtin_trap();
        json_decref(again);
        buf_release(&b);
    }
    json_decref(whole);
    json_decref(g.items);
    kube_list_split_release(&s);
    return 0;
}
