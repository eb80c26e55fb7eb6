/* fuzz_yamljson.c - libFuzzer target holding kube/yaml.c's JSON reader (kube/yamljson.c) to
 * libyaml's path: any bytes are read both ways, whole and through a reader answering in small
 * pieces, with and without a List's items split and the jansson arena, and a callback that
 * fails at the second call; the callbacks (values with the line of each), the result and the
 * error must be the same (when libyaml fails on the input, the JSON reader may have made
 * more callbacks first: libyaml's must be a prefix of its). A difference traps. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "kube/yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct rec {
    struct buf t;
    int calls, stop_at;
};

static void dump(struct buf *b, const struct kube_lines *l, const json_t *v)
{
    const char *k;
    size_t i;
    json_t *x;

    buf_printf(b, "@%d", kube_lines_find(l, v));
    if (json_is_object(v)) {
        buf_puts(b, "{");
        json_object_foreach((json_t *)v, k, x)
        {
            buf_printf(b, "%s:", k);
            dump(b, l, x);
            buf_puts(b, ",");
        }
        buf_puts(b, "}");
    } else if (json_is_array(v)) {
        buf_puts(b, "[");
        json_array_foreach(v, i, x)
        {
            dump(b, l, x);
            buf_puts(b, ",");
        }
        buf_puts(b, "]");
    } else {
        char *s = json_dumps(v, JSON_ENCODE_ANY);
        buf_printf(b, "%s/%zu", s ? s : "?", json_is_string(v) ? json_string_length(v) : 0);
        free(s);
    }
}

static int record(json_t *doc, struct kube_lines *lines, json_t *list, void *ctx)
{
    struct rec *r = ctx;

    r->calls++;
    buf_puts(&r->t, list ? "\nitem " : "\ndoc ");
    dump(&r->t, lines, doc);
    return r->calls == r->stop_at ? -ECANCELED : 0;
}

struct reader {
    const char *data;
    size_t len, pos, step;
};

static long rd(void *ctx, char *buf, size_t size)
{
    struct reader *r = ctx;
    size_t n = r->len - r->pos;

    if (n > r->step)
        n = r->step;
    if (n > size)
        n = size;
    memcpy(buf, r->data + r->pos, n);
    r->pos += n;
    return (long)n;
}

static int rewind_rd(void *ctx)
{
    ((struct reader *)ctx)->pos = 0;
    return 0;
}

static void run(const char *data, size_t size, unsigned flags, int stop_at, size_t step,
                struct buf *out, size_t *head)
{
    struct rec r;
    struct err err;
    int rc;

    memset(&r, 0, sizeof(r));
    buf_init(&r.t, 0);
    r.stop_at = stop_at;
    err_clear(&err);
    if (step) {
        struct reader in = {data, size, 0, step};
        rc = kube_yaml_each_read(rd, rewind_rd, &in, "f", flags, record, &r, &err);
    } else {
        rc = kube_yaml_each(data, size, "f", flags, record, &r, &err);
    }
    buf_reset(out);
    buf_printf(out, "%d %s %d %d", rc, err.msg, err.line, err.column);
    *head = out->len;
    buf_puts(out, r.t.data ? r.t.data : "");
    buf_release(&r.t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const unsigned flag_sets[] = {0, KUBE_YAML_SPLIT_ITEMS,
                                         KUBE_YAML_SPLIT_ITEMS | KUBE_YAML_TRANSIENT};
    struct buf a = BUF_INIT(0), b = BUF_INIT(0);
    size_t f, ha, hb, step = size ? 1 + data[size / 2] % 9 : 1;
    int stop_at;

    if (size > (1u << 16))
        return 0;
    for (f = 0; f < sizeof(flag_sets) / sizeof(flag_sets[0]); f++)
        for (stop_at = 0; stop_at <= 2; stop_at += 2) {
            size_t s;
            for (s = 0; s <= step; s += step) {
                bool parse_failed;
                run((const char *)data, size, flag_sets[f] | KUBE_YAML_NO_JSON_PATH, stop_at, s, &a,
                    &ha);
                run((const char *)data, size, flag_sets[f], stop_at, s, &b, &hb);
                parse_failed = strncmp(a.data, "0 ", 2) && strncmp(a.data, "-125 ", 5);
                if (ha != hb || memcmp(a.data, b.data, ha) ||
                    (!parse_failed && strcmp(a.data, b.data)) ||
                    (parse_failed && (b.len < a.len || memcmp(a.data, b.data, a.len))))
                    __builtin_trap();
            }
        }
    buf_release(&a);
    buf_release(&b);
    {
        /* kube_json_loadb (the live lists' parser): what jansson reads, it reads the same or
         * declines */
        json_error_t je;
        json_t *theirs = json_loadb((const char *)data, size, 0, &je);
        json_t *ours = kube_json_loadb((const char *)data, size);

        if (theirs && ours && !json_equal(theirs, ours))
            __builtin_trap();
        json_decref(theirs);
        json_decref(ours);
    }
    return 0;
}
