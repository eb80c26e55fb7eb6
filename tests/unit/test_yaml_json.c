/* test_yaml_json.c - kube/yaml.c's JSON reader (kube/yamljson.c) against libyaml's path: on
 * the same input, kube_yaml_each and kube_yaml_each_read must make the same callbacks with the
 * same values, the same line for every value, the same root-so-far for each item, and end with
 * the same return value and error (message, line, column), whether the reader reads all of it,
 * stops at the first byte it leaves to libyaml, or a callback stops the parse (only when
 * libyaml fails on the input may the reader have made more callbacks before, see same()). Inputs: written
 * cases at the edges (escapes, UTF-8, line breaks, keys, nesting, JSON streams) and many
 * generated documents, each also cut short and changed at random bytes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "kube/yaml.h"
#include "test.h"

struct transcript {
    struct buf t;
    int calls, stop_at; /* return -ECANCELED at call stop_at (0: never) */
};

/* dump writes v with the line of every value, keys in their order */
static void dump(struct buf *b, const struct kube_lines *l, const json_t *v)
{
    size_t i;
    const char *k;
    json_t *x;

    buf_printf(b, "@%d", kube_lines_find(l, v));
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        buf_puts(b, "{");
        json_object_foreach((json_t *)v, k, x)
        {
            buf_printf(b, "\"%s\":", k);
            dump(b, l, x);
            buf_puts(b, ",");
        }
        buf_puts(b, "}");
        break;
    case JSON_ARRAY:
        buf_puts(b, "[");
        json_array_foreach(v, i, x)
        {
            dump(b, l, x);
            buf_puts(b, ",");
        }
        buf_puts(b, "]");
        break;
    default: {
        char *s = json_dumps(v, JSON_ENCODE_ANY);
        size_t n = 0;
        if (json_is_string(v))
            n = json_string_length(v); /* NULs inside */
        buf_printf(b, "%s/%zu", s ? s : "?", n);
        free(s);
    }
    }
}

static int record(json_t *doc, struct kube_lines *lines, json_t *list, void *ctx)
{
    struct transcript *t = ctx;

    t->calls++;
    buf_printf(&t->t, "\n%s: ", list ? "item" : "doc");
    dump(&t->t, lines, doc);
    if (list) {
        /* the root as read so far (no lines: they belong to the root's table) */
        char *s = json_dumps(list, JSON_PRESERVE_ORDER | JSON_COMPACT);
        buf_printf(&t->t, " in %s", s ? s : "?");
        free(s);
    }
    return t->calls == t->stop_at ? -ECANCELED : 0;
}

struct reader {
    const char *data;
    size_t len, pos;
    unsigned step; /* bytes per read: 1..7, or everything */
    int rewinds;
};

static long rd(void *ctx, char *buf, size_t size)
{
    struct reader *r = ctx;
    size_t n = r->len - r->pos;

    if (r->step && n > r->step)
        n = r->step;
    if (n > size)
        n = size;
    memcpy(buf, r->data + r->pos, n);
    r->pos += n;
    return (long)n;
}

static int rewind_rd(void *ctx)
{
    struct reader *r = ctx;

    r->pos = 0;
    r->rewinds++;
    return 0;
}

/* one run: the return value and the error, then the transcript, as text in out; *head is
 * the length of the first part */
static void run(const char *data, size_t len, unsigned flags, int stop_at, unsigned step,
                bool reader, struct buf *out, size_t *head)
{
    struct transcript t;
    struct err err;
    int rc;

    memset(&t, 0, sizeof(t));
    buf_init(&t.t, 0);
    t.stop_at = stop_at;
    err_clear(&err);
    if (reader) {
        struct reader r = {data, len, 0, step, 0};
        rc = kube_yaml_each_read(rd, rewind_rd, &r, "f.json", flags, record, &t, &err);
    } else {
        rc = kube_yaml_each(data, len, "f.json", flags, record, &t, &err);
    }
    buf_reset(out);
    buf_printf(out, "rc %d err [%s] %s:%d:%d", rc, err.msg, err.file, err.line, err.column);
    *head = out->len;
    buf_puts(out, t.t.data ? t.t.data : "");
    buf_release(&t.t);
}

/* same: the same result and error and the same callbacks; but when libyaml fails on the input
 * (not a callback), the JSON reader may have made callbacks before the failure that libyaml,
 * which reads ahead, did not reach (the loader undoes a failed file's work): libyaml's are
 * then a prefix of its */
static bool same(const struct buf *a, size_t ha, const struct buf *b, size_t hb)
{
    bool parse_failed = strncmp(a->data, "rc 0 ", 5) && strncmp(a->data, "rc -125 ", 8);

    if (ha != hb || memcmp(a->data, b->data, ha))
        return false;
    if (!parse_failed)
        return !strcmp(a->data, b->data);
    return b->len >= a->len && !memcmp(a->data, b->data, a->len);
}

static unsigned compared, differed;

/* compare runs data through both paths, whole and as a reader in small reads, with items
 * split or not (and then with the values in the jansson arena), and with a callback stopping
 * the parse */
static void compare(const char *what, const char *data, size_t len)
{
    static const unsigned flag_sets[] = {0, KUBE_YAML_SPLIT_ITEMS,
                                         KUBE_YAML_SPLIT_ITEMS | KUBE_YAML_TRANSIENT};
    struct buf a = BUF_INIT(0), b = BUF_INIT(0);
    size_t f, ha, hb;
    int stop_at;

    for (f = 0; f < sizeof(flag_sets) / sizeof(flag_sets[0]); f++)
        for (stop_at = 0; stop_at < 3; stop_at++) {
            unsigned step = (unsigned)(len % 7) + 1;
            run(data, len, flag_sets[f] | KUBE_YAML_NO_JSON_PATH, stop_at, 0, false, &a, &ha);
            run(data, len, flag_sets[f], stop_at, 0, false, &b, &hb);
            compared++;
            if (!same(&a, ha, &b, hb)) {
                if (differed++ < 5)
                    test_fail(__FILE__, __LINE__, "%s (flags %u, stop %d): libyaml:\n%s\njson:\n%s",
                              what, flag_sets[f], stop_at, a.data, b.data);
                continue;
            }
            /* libyaml reads ahead as far as the reader's answers go: the same reads for both */
            run(data, len, flag_sets[f] | KUBE_YAML_NO_JSON_PATH, stop_at, step, true, &a, &ha);
            run(data, len, flag_sets[f], stop_at, step, true, &b, &hb);
            if (!same(&a, ha, &b, hb) && differed++ < 5)
                test_fail(__FILE__, __LINE__,
                          "%s (flags %u, stop %d, reads of %u): libyaml:\n%s\njson:\n%s", what,
                          flag_sets[f], stop_at, step, a.data, b.data);
        }
    buf_release(&a);
    buf_release(&b);
}

static const char *const written[] = {
    "{\"a\":1}",
    "  {\"a\": 1, \"b\": [true, false, null, -0, 1.5e3, 10, 1E-2, 12345678901234567890]}\n",
    "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"a\":1},{\"b\":{\"c\":[1,2]}}],\"x\":2}",
    "{\"kind\":\"List\",\"items\":[]}",
    "{\"kind\":\"List\",\"items\":[],\"items\":[{\"again\":1}]}",
    "{\"items\":{\"not\":\"a list\"}}",
    "[{\"items\":[1,2]}]",
    "{\"a\":1}\n--- {\"b\":2}\n--- [3]\n",
    "{\"a\":1}\n--- {\"b\":2} \n",
    "{\"a\":1} --- {\"b\":2}",
    "{\"a\":1}\n---{\"b\":2}",
    "{\"a\":1}\n{\"b\":2}",
    "{\"a\":1}\n\n",
    "{\"a\":1} x",
    "{\r\n  \"a\": 1,\r\n  \"b\": [\r\n 2\r\n ]\r\n}\r\n",
    "{\"a\":1,\r\"b\":2}",
    "{\n\t\"a\":\t1,\n\t\"b\": [\t2 ]\n}",
    "\t{\"a\":1}",
    "{\"a\":1}\t",
    "{\"a\" :1, \"b\"\t:2}",
    "{\"a\"\n:1}",
    "{\"a\":1,}",
    "[1,2,]",
    "{\"a\":[1 ,2 , 3]}",
    "{\"a\":1 ,\"b\":2}",
    "{\"a\":tru}",
    "{\"a\":True}",
    "{\"a\":01}",
    "{\"a\":1.}",
    "{\"a\":.5}",
    "{\"a\":-}",
    "{\"a\":1e}",
    "{\"a\":+1}",
    "{\"a\":0x10}",
    "{\"a\":1:2}",
    "{\"a\":\"x\\/y\\\"\\\\\\b\\f\\n\\r\\t\"}",
    "{\"a\":\"\\u00e9\\u0041\\u20ac\\uFFFF\\uffff\"}",
    "{\"a\":\"\\ud83d\\ude00\"}",
    "{\"a\":\"\\u0000b\"}",
    "{\"a\":\"\\u00\"}",
    "{\"a\":\"\\x41\"}",
    "{\"a\":\"\\a\"}",
    "{\"a\":\"\\\n\"}",
    "{\"a\":\"tab\there\"}",
    "{\"a\":\"line\nbreak\"}",
    "{\"a\":\"cr\rx\"}",
    "{\"a\":\"del\x7f\"}",
    "{\"a\":\"c1\xc2\x80\"}",
    "{\"a\":\"nel\xc2\x85\"}",
    "{\"a\":\"nbsp\xc2\xa0 \xe2\x82\xac \xf0\x9f\x98\x80\"}",
    "{\"a\":\"ls\xe2\x80\xa8\"}",
    "{\"a\":\"bom\xef\xbb\xbf\"}",
    "{\"a\":\"fffe\xef\xbf\xbe\"}",
    "{\"a\":\"bad\xc3\"}",
    "{\"a\":\"overlong\xc0\xaf\"}",
    "{\"a\":\"surrogate\xed\xa0\x80\"}",
    "{\"a\":\"big\xf4\x90\x80\x80\"}",
    "\xef\xbb\xbf{\"a\":1}",
    "{\"\xc3\xa9\":1,\"\\u00e9\":2}",
    "{\"a\":1,\"a\":{\"b\":2}}",
    "{\"<<\":{\"x\":1},\"y\":2}",
    "{\"a\":{\"<<\":[{\"x\":1}]}}",
    "{\"a\":1} # comment",
    "{\"a\":1, # comment\n\"b\":2}",
    "{a: 1}",
    "{\"a\": &x 1, \"b\": *x}",
    "{\"a\": !!str 1}",
    "{}",
    "[]",
    "[[[]]]",
    "{\"a\":[{}, [], \"\", 0]}",
    "",
    "   \n",
    "null",
    "\"str\"",
    "1",
    "---\n{\"a\":1}",
    "{\"a\":1}\n...\n",
    "{\"a\":1}\n---\n",
    "{\"a\":\"--- \"}\n--- {\"b\":\"...\"}",
    "{\"a\":",
    "{\"a\":1",
    "{\"a\"",
    "[1,",
    "{\"a\":\"unterminated",
};

static void written_cases(void)
{
    size_t i;

    compared = differed = 0;
    for (i = 0; i < sizeof(written) / sizeof(written[0]); i++) {
        char what[32];
        snprintf(what, sizeof(what), "written case %zu", i);
        compare(what, written[i], strlen(written[i]));
    }
    CHECK(compared > 100);
}

/* implicit keys: libyaml's limit is 1,024 characters from the key's start to its ':' */
static void long_keys(void)
{
    static const size_t sizes[] = {990, 996, 997, 998, 1000, 1019, 1020, 1021, 1022, 1023, 2000};
    struct buf b = BUF_INIT(0);
    size_t i, k;

    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (k = 0; k < 3; k++) {
            size_t n;
            buf_reset(&b);
            buf_puts(&b, "{\"");
            for (n = 0; n < sizes[i]; n++)
                buf_append(&b, k == 2 && n % 3 == 0 ? "\xc3\xa9" : "k",
                           k == 2 && n % 3 == 0 ? 2 : 1);
            buf_puts(&b, k == 1 ? "\" \t :1}" : "\":1}");
            compare("long key", b.data, b.len);
        }
    /* long values are not keys */
    buf_reset(&b);
    buf_puts(&b, "{\"a\":\"");
    for (i = 0; i < 3000; i++)
        buf_puts(&b, "v");
    buf_puts(&b, "\",\"b\":[\"");
    for (i = 0; i < 3000; i++)
        buf_puts(&b, "w");
    buf_puts(&b, "\"]}");
    compare("long values", b.data, b.len);
    buf_release(&b);
}

/* each byte that ends a run of plain string bytes, at every offset of the eight-byte steps */
static void special_bytes_in_strings(void)
{
    static const char *const special[] = {"\\n",      "\\\"", "\"",           "\x7f", "\x1f", "\t",
                                          "\xc3\xa9", "\x80", "\xe2\x80\xa8", " ",    "~"};
    struct buf b = BUF_INIT(0);
    size_t k, pos, i;

    for (k = 0; k < sizeof(special) / sizeof(special[0]); k++)
        for (pos = 0; pos < 20; pos++) {
            buf_reset(&b);
            buf_puts(&b, "{\"key\":\"");
            for (i = 0; i < pos; i++)
                buf_append(&b, &"abcdefgh"[i % 8], 1);
            buf_puts(&b, special[k]);
            buf_puts(&b, "tail-of-the-string\",\"k2\":\"");
            for (i = 0; i < pos; i++)
                buf_puts(&b, "z");
            buf_puts(&b, special[k]);
            buf_puts(&b, "\"}");
            compare("special byte", b.data, b.len);
        }
    buf_release(&b);
}

/* nesting around YAML_MAX_DEPTH (128), at the root and inside a List's items */
static void deep_nesting(void)
{
    struct buf b = BUF_INIT(0);
    int depth, i;

    for (depth = 125; depth <= 131; depth++) {
        buf_reset(&b);
        for (i = 0; i < depth; i++)
            buf_puts(&b, i % 2 ? "[" : "{\"k\":");
        buf_puts(&b, "1");
        for (i = depth - 1; i >= 0; i--)
            buf_puts(&b, i % 2 ? "]" : "}");
        compare("deep", b.data, b.len);
        buf_reset(&b);
        buf_puts(&b, "{\"items\":[");
        for (i = 0; i < depth - 2; i++)
            buf_puts(&b, "[");
        for (i = 0; i < depth - 2; i++)
            buf_puts(&b, "]");
        buf_puts(&b, "]}");
        compare("deep items", b.data, b.len);
    }
    buf_release(&b);
}

static uint64_t rs;

static unsigned rnd(unsigned n)
{
    rs = rs * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((rs >> 33) % n);
}

static void gen_string(struct buf *b)
{
    static const char *const parts[] = {
        "app",  "web-0", " ",    "\\n", "\\\"", "\\u00e9",      "\xc3\xa9", "\\/", "items", "kind",
        "List", "1",     "true", "\\t", "--- ", "\xe2\x82\xac", "#",        ": ",  "{",     "["};
    unsigned k, n = rnd(4);

    buf_puts(b, "\"");
    for (k = 0; k < n; k++)
        buf_puts(b, parts[rnd(sizeof(parts) / sizeof(parts[0]))]);
    buf_puts(b, "\"");
}

static void gen_ws(struct buf *b)
{
    static const char *const ws[] = {"", "", "", " ", "\n", "  ", "\r\n", "\n  ", "\t"};

    buf_puts(b, ws[rnd(sizeof(ws) / sizeof(ws[0]))]);
}

static void gen_value(struct buf *b, int depth)
{
    static const char *const plain[] = {"0",   "-1",   "42",    "1.5",  "-0.25e-3",
                                        "1E9", "true", "false", "null", "9223372036854775808"};
    unsigned k, n, kind = depth > 5 ? rnd(3) : rnd(6);

    if (kind == 0) {
        gen_string(b);
    } else if (kind <= 2) {
        buf_puts(b, plain[rnd(sizeof(plain) / sizeof(plain[0]))]);
    } else if (kind == 3) {
        buf_puts(b, "[");
        for (k = 0, n = rnd(4); k < n; k++) {
            gen_ws(b);
            gen_value(b, depth + 1);
            gen_ws(b);
            if (k + 1 < n)
                buf_puts(b, ",");
        }
        buf_puts(b, "]");
    } else {
        static const char *const keys[] = {"\"a\"", "\"items\"", "\"kind\"", "\"b\"", "\"a\""};
        buf_puts(b, "{");
        for (k = 0, n = rnd(5); k < n; k++) {
            gen_ws(b);
            if (rnd(3))
                buf_puts(b, keys[rnd(sizeof(keys) / sizeof(keys[0]))]);
            else
                gen_string(b);
            buf_puts(b, rnd(4) ? ":" : " : ");
            gen_ws(b);
            gen_value(b, depth + 1);
            if (k + 1 < n)
                buf_puts(b, ",");
        }
        gen_ws(b);
        buf_puts(b, "}");
    }
}

/* generated documents and Lists, and each cut short and changed at a random byte */
static void generated(void)
{
    static const char *const noise[] = {"\"",   "\\",   "{",  "}",   "[", "]", ",",
                                        ":",    "\n",   "\t", "\r",  "#", "-", "--- ",
                                        "\xc3", "\x80", " ",  "&a ", "0", "e"};
    struct buf b = BUF_INIT(0), m = BUF_INIT(0);
    unsigned i;

    compared = differed = 0;
    rs = 7;
    for (i = 0; i < 3000; i++) {
        unsigned ndocs = 1 + (i % 5 == 0 ? rnd(3) : 0), d;
        char what[48];
        buf_reset(&b);
        gen_ws(&b);
        for (d = 0; d < ndocs; d++) {
            if (d)
                buf_puts(&b, rnd(2) ? "\n--- " : "\n--- \n");
            if (rnd(2)) {
                unsigned k, n = rnd(4);
                buf_puts(&b, "{\"apiVersion\":\"v1\",");
                gen_ws(&b);
                buf_puts(&b, "\"items\":[");
                for (k = 0; k < n; k++) {
                    gen_ws(&b);
                    gen_value(&b, 2);
                    if (k + 1 < n)
                        buf_puts(&b, ",");
                }
                buf_puts(&b, "],\"kind\":\"List\"}");
            } else {
                gen_value(&b, 3 + (int)rnd(3)); /* an object or array at the root, mostly */
            }
        }
        gen_ws(&b);
        snprintf(what, sizeof(what), "generated %u", i);
        compare(what, b.data, b.len);
        /* cut short */
        compare(what, b.data, rnd((unsigned)b.len + 1));
        /* a byte changed, inserted, removed */
        buf_reset(&m);
        {
            size_t at = rnd((unsigned)b.len + 1);
            buf_append(&m, b.data, at);
            if (rnd(2))
                buf_puts(&m, noise[rnd(sizeof(noise) / sizeof(noise[0]))]);
            if (at < b.len)
                buf_append(&m, b.data + at + rnd(2), b.len - at - (at + 1 <= b.len ? rnd(2) : 0));
        }
        compare(what, m.data ? m.data : "", m.len);
    }
    buf_release(&b);
    buf_release(&m);
    CHECK(compared > 15000);
}

/* kube_json_loadb against jansson's own reader: on JSON jansson reads, it reads the same or
 * declines (NULL); on text jansson rejects it never fails in another way than declining or
 * reading it as YAML would. Generated values, some damaged, and the JSON written back. */
static void json_loadb_agrees(void)
{
    struct buf b = BUF_INIT(0);
    unsigned i, read = 0, declined = 0;

    rs = 11;
    for (i = 0; i < 4000; i++) {
        json_t *ours, *theirs;
        json_error_t je;
        size_t len;

        /* no blanks around the root: a tab there is one of YAML's exceptions */
        buf_reset(&b);
        gen_value(&b, 3 + (int)rnd(3));
        len = i % 4 == 3 ? rnd((unsigned)b.len + 1) : b.len; /* some cut short */
        theirs = json_loadb(b.data, len, 0, &je);
        ours = kube_json_loadb(b.data, len);
        if (theirs && ours) {
            read++;
            if (!json_equal(ours, theirs))
                test_fail(__FILE__, __LINE__, "read differently: %.*s", (int)len, b.data);
        } else if (theirs) {
            declined++;
        }
        if (theirs) {
            /* what jansson writes (escapes, numbers as it prints them) reads alike too */
            char *w = json_dumps(theirs, JSON_COMPACT | (i % 2 ? JSON_ENSURE_ASCII : 0));
            json_t *again = w ? kube_json_loadb(w, strlen(w)) : NULL;

            if (again && !json_equal(again, theirs))
                test_fail(__FILE__, __LINE__, "written back, read differently: %s", w);
            json_decref(again);
            free(w);
        }
        json_decref(ours);
        json_decref(theirs);
    }
    buf_release(&b);
    /* a stream of documents is not one JSON text: declined, the documents read so far freed
     * (check-san's leak check) */
    CHECK(!kube_json_loadb("{\"a\":1}\n--- {\"b\":[2]}\n--- [3]\n", 30));
    CHECK(!kube_json_loadb("{\"a\":1} x", 9));
    /* it declines little of what jansson reads (a tab after the root ends, a number jansson
     * takes and YAML does not) */
    CHECK(read > 1000);
    CHECK(declined * 10 < read);
}

static const struct test_case cases[] = {
    {"written cases read alike", written_cases},
    {"kube_json_loadb reads what json_loadb reads", json_loadb_agrees},
    {"long keys read alike", long_keys},
    {"special bytes in strings read alike", special_bytes_in_strings},
    {"deep nesting reads alike", deep_nesting},
    {"generated and damaged documents read alike", generated},
};

TEST_SUITE(yaml_json, cases)
