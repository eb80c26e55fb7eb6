/* test_base.c - the shared building blocks: errors, capped buffers, arena, the monotonic
 * clock, YAML loading with line numbers. */
#include "test.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/err.h"
#include "base/flag.h"
#include "base/goparse.h"
#include "base/keymap.h"
#include "base/log.h"
#include "kube/yaml.h"

static void err_formats_location_and_field(void)
{
    struct err e;
    char buf[512];

    err_clear(&e);
    CHECK_INT_EQ(err_set(&e, -EINVAL, "bad %s", "thing"), -EINVAL);
    err_at(&e, "a.yaml", 7, 3);
    err_field(&e, "spec.nodeSelector");
    CHECK_STR_EQ(err_format(&e, buf, sizeof(buf)), "a.yaml: line 7: spec.nodeSelector: bad thing");
    err_prefix(&e, "cannot load");
    CHECK_STR_EQ(err_format(&e, buf, sizeof(buf)),
                 "a.yaml: line 7: spec.nodeSelector: cannot load: bad thing");
    CHECK_INT_EQ(err_set(NULL, -ENOENT, "x"), -ENOENT);
}

static void err_format_truncates_safely(void)
{
    struct err e;
    char small[8];

    err_clear(&e);
    err_set(&e, -EINVAL, "a long message that does not fit");
    err_format(&e, small, sizeof(small));
    CHECK_INT_EQ(strlen(small), 7);
}

static void buf_respects_cap(void)
{
    struct buf b = BUF_INIT(8);

    CHECK_INT_EQ(buf_puts(&b, "12345678"), 0);
    CHECK_INT_EQ(buf_puts(&b, "9"), -E2BIG);
    CHECK_STR_EQ(b.data, "12345678");
    buf_consume(&b, 3);
    CHECK_STR_EQ(b.data, "45678");
    CHECK_INT_EQ(buf_printf(&b, "%d", 12), 0);
    CHECK_STR_EQ(b.data, "4567812");
    CHECK_INT_EQ(buf_printf(&b, "%d", 123), -E2BIG);
    buf_release(&b);
}

/* Strings are packed (a 2-byte string takes 2 bytes); blocks still keep 16-byte alignment
 * for everything else. */
static void arena_packs_strings(void)
{
    struct arena a = ARENA_INIT;
    char *x = arena_strdup(&a, "x");
    char *y = arena_strdup(&a, "yz");
    void *o = arena_alloc(&a, 8);
    char *z = arena_strndup(&a, "zzzz", 2);
    size_t i;

    CHECK(y == x + 2);
    CHECK_STR_EQ(x, "x");
    CHECK_STR_EQ(y, "yz");
    CHECK_STR_EQ(z, "zz");
    CHECK(((uintptr_t)o & 15) == 0);
    CHECK_INT_EQ(a.used, 2 + 3 + 16 + 3);
    /* crossing into new blocks keeps both kinds intact */
    for (i = 0; i < 5000; i++) {
        char *s = arena_strdup(&a, "abcdefg");
        unsigned char *v = arena_alloc(&a, 5);

        if (!s || !v || strcmp(s, "abcdefg") || ((uintptr_t)v & 15) || v[0] || v[4]) {
            CHECK(0);
            break;
        }
        v[4] = 1;
    }
    arena_release(&a);
}

static void arena_rewinds_to_a_mark(void)
{
    struct arena a = ARENA_INIT, empty = ARENA_INIT;
    struct arena_mark m, m0;
    char *keep, *again;
    size_t used;
    int i;

    /* back to empty: every block goes */
    arena_mark(&empty, &m0);
    CHECK(arena_alloc(&empty, 100) != NULL);
    arena_rewind(&empty, &m0);
    CHECK(empty.head == NULL);
    CHECK_INT_EQ(empty.used, 0);

    keep = arena_strdup(&a, "kept");
    used = a.used;
    arena_mark(&a, &m);
    /* small allocations in the marked block, new blocks in front of it, and a large
     * one-off slotted in behind the current block */
    for (i = 0; i < 2000; i++)
        CHECK(arena_strdup(&a, "some string that fills blocks") != NULL);
    CHECK(arena_alloc(&a, 2u << 20) != NULL);
    CHECK(arena_alloc(&a, 16) != NULL);
    arena_rewind(&a, &m);
    CHECK_INT_EQ(a.used, used);
    CHECK_STR_EQ(keep, "kept");
    /* the next allocation reuses the space right after the mark */
    again = arena_strdup(&a, "x");
    CHECK(again == keep + 5);
    /* a rewind with nothing allocated since the mark changes nothing */
    arena_mark(&a, &m);
    arena_rewind(&a, &m);
    CHECK_STR_EQ(again, "x");
    arena_release(&a);
    arena_release(&empty);
}

/* With sharing on, a short string that comes again is the earlier copy; off (the default),
 * each copy is new; a rewind forgets what it freed, so nothing handed out points into it. */
static void arena_shares_strings(void)
{
    struct arena a = ARENA_INIT, off = ARENA_INIT;
    struct arena_mark m;
    const char *x, *y, *z, *w;
    char longer[200];

    x = arena_strndup_shared(&off, "nginx:1.27", 10);
    CHECK(x && x != arena_strndup_shared(&off, "nginx:1.27", 10));
    CHECK_INT_EQ(arena_share_strings(&a), 0);
    x = arena_strndup_shared(&a, "nginx:1.27", 10);
    y = arena_strndup_shared(&a, "nginx:1.27xyz", 10); /* n bytes only */
    z = arena_strndup_shared(&a, "nginx", 5);
    CHECK(x && x == y);
    CHECK_STR_EQ(x, "nginx:1.27");
    CHECK(z && z != x);
    CHECK_STR_EQ(z, "nginx");
    CHECK(arena_strndup_shared(&a, "", 0) == arena_strndup_shared(&a, "", 0));
    /* long strings are copied each time */
    memset(longer, 'a', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    w = arena_strndup_shared(&a, longer, strlen(longer));
    CHECK(w && w != arena_strndup_shared(&a, longer, strlen(longer)));
    /* what came after a mark is forgotten by the rewind, and so is what came before */
    arena_mark(&a, &m);
    y = arena_strndup_shared(&a, "app", 3);
    CHECK(y == arena_strndup_shared(&a, "app", 3));
    arena_rewind(&a, &m);
    w = arena_strndup_shared(&a, "zzzzzzzzzzzzzzzzzzzz", 20); /* reuses y's bytes */
    z = arena_strndup_shared(&a, "app", 3);
    CHECK(z && z != w && strcmp(w, "zzzzzzzzzzzzzzzzzzzz") == 0);
    CHECK_STR_EQ(z, "app");
    CHECK(arena_strndup_shared(&a, "nginx:1.27", 10) != x);
    CHECK_STR_EQ(x, "nginx:1.27");
    arena_release(&a);
    CHECK(a.strings == NULL);
    arena_release(&off);
}

/* a scratch mark and rewind at the end of a block: the block the scratch took is kept and
 * taken again next time, not allocated and freed each time */
static void arena_keeps_a_spare_block(void)
{
    struct arena a = ARENA_INIT;
    struct arena_mark m;
    unsigned char *p, *q;
    int i;

    CHECK(arena_alloc(&a, 16) != NULL);
    for (i = 0; i < 3; i++) {
        arena_mark(&a, &m);
        p = arena_alloc(&a, 5000); /* more than the first block has left */
        CHECK(p != NULL);
        if (p)
            p[4999] = 1;
        arena_rewind(&a, &m);
        CHECK(a.spare != NULL);
        arena_mark(&a, &m);
        q = arena_alloc(&a, 5000);
        CHECK(q == p);
        CHECK(q && q[4999] == 0); /* zeroed again */
        arena_rewind(&a, &m);
    }
    arena_release(&a);
    CHECK(a.spare == NULL && a.head == NULL);
}

static void arena_allocates_aligned_and_large(void)
{
    struct arena a = ARENA_INIT;
    char *s = arena_strdup(&a, "hello");
    void *big = arena_alloc(&a, 3u << 20);
    void *small = arena_alloc(&a, 3);

    CHECK_STR_EQ(s, "hello");
    CHECK(big != NULL);
    CHECK(small != NULL);
    CHECK(((uintptr_t)small & 15) == 0);
    CHECK(arena_strdup(&a, NULL) == NULL);
    arena_release(&a);
    CHECK(a.head == NULL);
}

static json_t *load_one(const char *text, struct kube_lines **lines)
{
    json_t *docs = NULL, *v;
    struct err e;

    err_clear(&e);
    if (kube_yaml_load(text, strlen(text), "t.yaml", &docs, lines, &e))
        return NULL;
    v = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return v;
}

static void yaml_resolves_scalars_like_kubernetes(void)
{
    json_t *v = load_one("a: 1\nb: \"1\"\nc: true\nd: yes\ne: off\nf: 0.5\ng: 129e6\nh: ~\n"
                         "i: Tesla-M40\nj: 12209MiB\nk: 0x10\nl: ''\n",
                         NULL);

    CHECK(v != NULL);
    if (!v)
        return;
    CHECK(json_is_integer(json_object_get(v, "a")));
    CHECK(json_is_string(json_object_get(v, "b")));
    CHECK(json_is_true(json_object_get(v, "c")));
    CHECK(json_is_true(json_object_get(v, "d")));
    CHECK(json_is_false(json_object_get(v, "e")));
    CHECK(json_is_real(json_object_get(v, "f")));
    CHECK(json_is_real(json_object_get(v, "g")));
    CHECK(json_is_null(json_object_get(v, "h")));
    CHECK_STR_EQ(json_string_value(json_object_get(v, "i")), "Tesla-M40");
    CHECK_STR_EQ(json_string_value(json_object_get(v, "j")), "12209MiB");
    CHECK_INT_EQ(json_integer_value(json_object_get(v, "k")), 16);
    CHECK_STR_EQ(json_string_value(json_object_get(v, "l")), "");
    json_decref(v);
    /* go-yaml v2: '_' dropped, then strconv.ParseInt(s, 0, 64); words not starting with a
     * digit, sign or '.' are never numbers */
    v = load_one("a: 010\nb: 0o17\nc: 0b101\nd: 1_000\ne: -0x1F\nf: 08\ng: 0x\nh: _1\n"
                 "i: +12\nj: 1_000.5\nk: 0\nl: -0\nm: 9223372036854775807\nx: 0X1f\n",
                 NULL);
    CHECK(v != NULL);
    if (!v)
        return;
    CHECK_INT_EQ(json_integer_value(json_object_get(v, "a")), 8);
    CHECK_INT_EQ(json_integer_value(json_object_get(v, "b")), 15);
    CHECK_INT_EQ(json_integer_value(json_object_get(v, "c")), 5);
    CHECK_INT_EQ(json_integer_value(json_object_get(v, "d")), 1000);
    CHECK_INT_EQ(json_integer_value(json_object_get(v, "e")), -31);
    CHECK(json_is_real(json_object_get(v, "f"))); /* not octal, but a float */
    CHECK(json_real_value(json_object_get(v, "f")) == 8.0);
    CHECK_STR_EQ(json_string_value(json_object_get(v, "g")), "0x");
    CHECK_STR_EQ(json_string_value(json_object_get(v, "h")), "_1");
    CHECK_INT_EQ(json_integer_value(json_object_get(v, "i")), 12);
    CHECK(json_real_value(json_object_get(v, "j")) == 1000.5);
    CHECK(json_is_integer(json_object_get(v, "k")) && json_is_integer(json_object_get(v, "l")));
    CHECK_INT_EQ(json_integer_value(json_object_get(v, "m")), INT64_MAX);
    CHECK_INT_EQ(json_integer_value(json_object_get(v, "x")), 31);
    json_decref(v);
    /* non-string keys are printed as sigs.k8s.io/yaml prints them; floats through
     * FormatFloat(f, 'g', -1, 32) */
    v = load_one("1.5: a\n1e3: b\n1e6: c\n0.1: d\n0.0001: e\n0.00001: f\n123456789.0: g\n"
                 "yes: h\n0x10: i\n-2.5e-3: j\n1e300: k\n-1e300: l\n",
                 NULL);
    CHECK(v != NULL);
    if (!v)
        return;
    CHECK_STR_EQ(json_string_value(json_object_get(v, "1.5")), "a");
    CHECK_STR_EQ(json_string_value(json_object_get(v, "1000")), "b");
    CHECK_STR_EQ(json_string_value(json_object_get(v, "1e+06")), "c");
    CHECK_STR_EQ(json_string_value(json_object_get(v, "0.1")), "d");
    CHECK_STR_EQ(json_string_value(json_object_get(v, "0.0001")), "e");
    CHECK_STR_EQ(json_string_value(json_object_get(v, "1e-05")), "f");
    CHECK_STR_EQ(json_string_value(json_object_get(v, "1.2345679e+08")), "g");
    CHECK_STR_EQ(json_string_value(json_object_get(v, "true")), "h");
    CHECK_STR_EQ(json_string_value(json_object_get(v, "16")), "i");
    CHECK_STR_EQ(json_string_value(json_object_get(v, "-0.0025")), "j");
    CHECK_STR_EQ(json_string_value(json_object_get(v, ".inf")), "k"); /* float32 overflow */
    CHECK_STR_EQ(json_string_value(json_object_get(v, "-.inf")), "l");
    json_decref(v);
}

static void yaml_records_lines(void)
{
    struct kube_lines *lines = NULL;
    json_t *v = load_one("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n"
                         "  containers:\n  - name: c\n    image: x\n",
                         &lines);
    json_t *c;

    CHECK(v != NULL && lines != NULL);
    if (!v)
        return;
    CHECK_INT_EQ(kube_lines_find(lines, json_object_get(v, "kind")), 2);
    c = json_array_get(json_object_get(json_object_get(v, "spec"), "containers"), 0);
    CHECK_INT_EQ(kube_lines_find(lines, c), 7);
    CHECK_INT_EQ(kube_lines_find(lines, json_object_get(c, "image")), 8);
    CHECK_INT_EQ(kube_lines_find(lines, NULL), 0);
    /* values only: the root, metadata, spec, containers, c and 5 scalars; the 8 keys were
     * freed after use, and a freed key's address must not stay in the table (a new value
     * allocated there would be given the key's line) */
    CHECK_INT_EQ(kube_lines_count(lines), 10);
    json_decref(v);
    kube_lines_free(lines);
}

/* a merge key's value may be a list of maps: earlier maps win over later ones, and the
 * mapping's own keys over all of them (YAML 1.1 merge type, as sigs.k8s.io/yaml does) */
static void yaml_merge_key_with_a_list(void)
{
    json_t *v = load_one("a: &a {x: 1, v: 1}\nb: &b {v: 2, z: 2, w: 2}\n"
                         "c:\n  <<: [*a, *b]\n  w: 3\n",
                         NULL);
    json_t *c;
    json_t *docs = NULL;
    struct err e;
    const char *bad = "a: &a {x: 1}\nc:\n  <<: [*a, 5]\n";

    CHECK(v != NULL);
    if (v) {
        c = json_object_get(v, "c");
        CHECK_INT_EQ(json_integer_value(json_object_get(c, "x")), 1);
        CHECK_INT_EQ(json_integer_value(json_object_get(c, "v")), 1);
        CHECK_INT_EQ(json_integer_value(json_object_get(c, "z")), 2);
        CHECK_INT_EQ(json_integer_value(json_object_get(c, "w")), 3);
        CHECK(json_object_get(c, "<<") == NULL);
        json_decref(v);
    }
    err_clear(&e);
    CHECK(kube_yaml_load(bad, strlen(bad), "t.yaml", &docs, NULL, &e) < 0);
    CHECK(strstr(e.msg, "merge") != NULL);
    CHECK_INT_EQ(e.line, 3);
}

static void yaml_multi_documents_and_json(void)
{
    const char *text = "---\na: 1\n---\n---\n{\"b\": [1, 2, {\"c\": null}]}\n";
    json_t *docs = NULL;
    struct err e;

    err_clear(&e);
    CHECK_INT_EQ(kube_yaml_load(text, strlen(text), "t", &docs, NULL, &e), 0);
    CHECK_INT_EQ(json_array_size(docs), 2);
    json_decref(docs);
}

static void yaml_error_names_line(void)
{
    const char *text = "a: 1\nb: [1, 2\nc: 3\n";
    json_t *docs = NULL;
    struct err e;
    char buf[512];

    err_clear(&e);
    CHECK(kube_yaml_load(text, strlen(text), "bad.yaml", &docs, NULL, &e) < 0);
    CHECK(docs == NULL);
    CHECK(e.line >= 2);
    CHECK(strstr(err_format(&e, buf, sizeof(buf)), "bad.yaml: line ") == buf);
}

static void yaml_anchors_and_merge_keys(void)
{
    json_t *v = load_one("base: &b {x: 1, z: 2}\nderived:\n  <<: *b\n  z: 3\nref: *b\n", NULL);
    json_t *d;

    CHECK(v != NULL);
    if (!v)
        return;
    d = json_object_get(v, "derived");
    CHECK_INT_EQ(json_integer_value(json_object_get(d, "x")), 1);
    CHECK_INT_EQ(json_integer_value(json_object_get(d, "z")), 3);
    CHECK_INT_EQ(json_integer_value(json_object_get(json_object_get(v, "ref"), "z")), 2);
    json_decref(v);
    /* YAML 1.1, as Kubernetes reads it: a plain "y" is a boolean, so as a key it is "true" */
    v = load_one("y: 1\n", NULL);
    CHECK(v && json_object_get(v, "true") != NULL);
    json_decref(v);
}

static void yaml_rejects_unknown_alias_and_deep_nesting(void)
{
    char deep[1200];
    json_t *docs = NULL;
    struct err e;
    int i;

    err_clear(&e);
    CHECK(kube_yaml_load("a: *nope\n", 9, "t", &docs, NULL, &e) < 0);
    for (i = 0; i < 600; i++)
        deep[i] = '[';
    deep[600] = '\0';
    CHECK(kube_yaml_load(deep, strlen(deep), "t", &docs, NULL, &e) < 0);
}

/* aliases_doc writes "a: &x [1 x m]\nb: [*x x k]\n" into buf: go-yaml decodes 1,005 + 1,001 k
 * nodes for m = 999, 1,000 k of them from the alias */
static char *aliases_doc(int m, int k)
{
    size_t size = (size_t)(m + k) * 3 + 32, n = 0;
    char *buf = malloc(size);
    int i;

    if (!buf)
        return NULL;
    n += (size_t)snprintf(buf + n, size - n, "a: &x [");
    for (i = 0; i < m; i++)
        n += (size_t)snprintf(buf + n, size - n, i ? ",1" : "1");
    n += (size_t)snprintf(buf + n, size - n, "]\nb: [");
    for (i = 0; i < k; i++)
        n += (size_t)snprintf(buf + n, size - n, i ? ",*x" : "*x");
    snprintf(buf + n, size - n, "]\n");
    return buf;
}

static int count_doc(json_t *doc, struct kube_lines *lines, json_t *list, void *ctx)
{
    (void)doc, (void)lines, (void)list;
    ++*(int *)ctx;
    return 0;
}

/* sigs.k8s.io/yaml (go-yaml v2) refuses a document whose nodes come from aliases beyond a
 * ratio (99% up to 400,000 nodes): the boundary is the same here, checked against
 * yaml.YAMLToJSON (110 aliases of a 999-item list pass, 111 do not) */
static void yaml_caps_alias_expansion_as_go_yaml(void)
{
    char *ok = aliases_doc(999, 110), *bad = aliases_doc(999, 111), *two, msg[256];
    static const char bomb[] =
        "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
        "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
        "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
        "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
        "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";
    json_t *docs = NULL;
    struct err e;
    int n = 0;

    CHECK(ok && bad);
    if (!ok || !bad)
        goto out;
    err_clear(&e);
    CHECK_INT_EQ(kube_yaml_load(ok, strlen(ok), "t.yaml", &docs, NULL, &e), 0);
    CHECK_INT_EQ(json_array_size(json_object_get(json_array_get(docs, 0), "b")), 110);
    json_decref(docs);
    docs = NULL;
    CHECK_INT_EQ(kube_yaml_load(bad, strlen(bad), "t.yaml", &docs, NULL, &e), -EINVAL);
    CHECK_STR_EQ(err_format(&e, msg, sizeof(msg)),
                 "t.yaml: line 2: document contains excessive aliasing");
    /* 9^9 strings from 200 bytes: refused at the first level past the bound */
    err_clear(&e);
    CHECK_INT_EQ(kube_yaml_load(bomb, strlen(bomb), "bomb.yaml", &docs, NULL, &e), -EINVAL);
    CHECK(strstr(err_format(&e, msg, sizeof(msg)), "document contains excessive aliasing"));
    CHECK(docs == NULL);
    /* the count is the document's: two documents at the bound each pass */
    two = malloc(2 * strlen(ok) + 8);
    CHECK(two != NULL);
    if (two) {
        snprintf(two, 2 * strlen(ok) + 8, "%s---\n%s", ok, ok);
        CHECK_INT_EQ(
            kube_yaml_each(two, strlen(two), "t.yaml", KUBE_YAML_NO_JSON_PATH, count_doc, &n, &e),
            0);
        CHECK_INT_EQ(n, 2);
        free(two);
    }
out:
    free(ok);
    free(bad);
}

/* anchors are found by name in one lookup; a name given again names the new value, and an
 * unknown one is named in the error, as go-yaml names it */
static void yaml_anchor_names(void)
{
    json_t *v = load_one("a: &x 1\nb: &x [2]\nc: *x\nd: &y {k: *x}\ne: *y\n", NULL), *docs = NULL;
    struct err e;
    char msg[256];

    CHECK(v != NULL);
    if (v) {
        CHECK_INT_EQ(json_integer_value(json_array_get(json_object_get(v, "c"), 0)), 2);
        CHECK_INT_EQ(
            json_integer_value(json_array_get(json_object_get(json_object_get(v, "e"), "k"), 0)),
            2);
    }
    json_decref(v);
    err_clear(&e);
    CHECK(kube_yaml_load("a: 1\nb: *nope\n", 14, "t.yaml", &docs, NULL, &e) < 0);
    CHECK_STR_EQ(err_format(&e, msg, sizeof(msg)),
                 "t.yaml: line 2: unknown anchor 'nope' referenced");
}

/* --- Go's number, boolean and duration grammars --- */

static void goparse_int_like_strconv(void)
{
    static const struct {
        const char *s;
        int base, bits;
        int rc;
        int64_t v; /* also checked on -ERANGE: Go returns the nearest limit */
    } t[] = {
        {"0", 10, 64, 0, 0},
        {"-0", 10, 64, 0, 0},
        {"+17", 10, 64, 0, 17},
        {"-17", 10, 64, 0, -17},
        {"9223372036854775807", 10, 64, 0, INT64_MAX},
        {"9223372036854775808", 10, 64, -ERANGE, INT64_MAX},
        {"-9223372036854775808", 10, 64, 0, INT64_MIN},
        {"-9223372036854775809", 10, 64, -ERANGE, INT64_MIN},
        {"99999999999999999999999", 10, 64, -ERANGE, INT64_MAX},
        {"", 10, 64, -EINVAL, 0},
        {"-", 10, 64, -EINVAL, 0},
        {" 1", 10, 64, -EINVAL, 0},
        {"12a", 10, 64, -EINVAL, 0},
        {"1_000", 10, 64, -EINVAL, 0},
        {"0x10", 10, 64, -EINVAL, 0},
        {"127", 10, 8, 0, 127},
        {"128", 10, 8, -ERANGE, 127},
        {"-128", 10, 8, 0, -128},
        {"-129", 10, 8, -ERANGE, -128},
        {"ff", 16, 64, 0, 255},
        {"z", 36, 64, 0, 35},
        /* base 0: the prefix decides, '_' separates digits */
        {"0x1f", 0, 64, 0, 31},
        {"0X1F", 0, 64, 0, 31},
        {"-0x10", 0, 64, 0, -16},
        {"0o17", 0, 64, 0, 15},
        {"017", 0, 64, 0, 15},
        {"0b101", 0, 64, 0, 5},
        {"0", 0, 64, 0, 0},
        {"08", 0, 64, -EINVAL, 0},
        {"0x", 0, 64, -EINVAL, 0},
        {"1_000", 0, 64, 0, 1000},
        {"0x_1f", 0, 64, 0, 31},
        {"1__0", 0, 64, -EINVAL, 0},
        {"_1", 0, 64, -EINVAL, 0},
        {"1_", 0, 64, -EINVAL, 0},
    };
    struct err e;
    size_t i;

    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        int64_t v = 42;
        int rc = go_parse_int(t[i].s, strlen(t[i].s), t[i].base, t[i].bits, &v, NULL);

        if (rc != t[i].rc || v != t[i].v)
            test_fail(__FILE__, __LINE__, "ParseInt(\"%s\", %d, %d) = %lld, %d; want %lld, %d",
                      t[i].s, t[i].base, t[i].bits, (long long)v, rc, (long long)t[i].v, t[i].rc);
    }
    /* a length, not a NUL, ends the text */
    {
        int64_t v;

        CHECK_INT_EQ(go_parse_int("12e3", 2, 10, 64, &v, NULL), 0);
        CHECK_INT_EQ(v, 12);
    }
    err_clear(&e);
    CHECK_INT_EQ(go_parse_int("x1", 2, 10, 64, &(int64_t){0}, &e), -EINVAL);
    CHECK_STR_EQ(e.msg, "strconv.ParseInt: parsing \"x1\": invalid syntax");
    CHECK_INT_EQ(go_parse_int("300", 3, 10, 8, &(int64_t){0}, &e), -ERANGE);
    CHECK_STR_EQ(e.msg, "strconv.ParseInt: parsing \"300\": value out of range");
}

static void goparse_uint_like_strconv(void)
{
    uint64_t v = 1;
    struct err e;

    CHECK_INT_EQ(go_parse_uint("18446744073709551615", 20, 10, 64, &v, NULL), 0);
    CHECK(v == UINT64_MAX);
    CHECK_INT_EQ(go_parse_uint("18446744073709551616", 20, 10, 64, &v, NULL), -ERANGE);
    CHECK(v == UINT64_MAX);
    CHECK_INT_EQ(go_parse_uint("255", 3, 10, 8, &v, NULL), 0);
    CHECK_INT_EQ(go_parse_uint("256", 3, 10, 8, &v, NULL), -ERANGE);
    CHECK_INT_EQ(v, 255);
    err_clear(&e);
    CHECK_INT_EQ(go_parse_uint("-1", 2, 10, 64, &v, &e), -EINVAL);
    CHECK_STR_EQ(e.msg, "strconv.ParseUint: parsing \"-1\": invalid syntax");
    CHECK_INT_EQ(go_parse_uint("+1", 2, 10, 64, &v, NULL), -EINVAL);
    CHECK_INT_EQ(go_parse_uint("0x_ff", 5, 0, 64, &v, NULL), 0);
    CHECK_INT_EQ(v, 255);
    CHECK_INT_EQ(go_parse_uint("7", 1, 1, 64, &v, &e), -EINVAL);
    CHECK_STR_EQ(e.msg, "strconv.ParseUint: parsing \"7\": invalid base 1");
}

static void goparse_bool_like_strconv(void)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
    static const char *const bad[] = {"", "yes", "on", "tRUE", "2", " true", "true "};
    struct err e;
    size_t i;
    bool b;

    for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        b = false;
        CHECK_INT_EQ(go_parse_bool(yes[i], &b, NULL), 0);
        CHECK(b);
        CHECK_INT_EQ(go_parse_bool(no[i], &b, NULL), 0);
        CHECK(!b);
    }
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (go_parse_bool(bad[i], &b, NULL) != -EINVAL)
            test_fail(__FILE__, __LINE__, "ParseBool(\"%s\") accepted", bad[i]);
    err_clear(&e);
    go_parse_bool("maybe", &b, &e);
    CHECK_STR_EQ(e.msg, "strconv.ParseBool: parsing \"maybe\": invalid syntax");
}

static void goparse_duration_like_time(void)
{
    static const struct {
        const char *s;
        int64_t ns;
    } ok[] = {
        {"0", 0},
        {"-0", 0},
        {"+0", 0},
        {"5s", 5000000000LL},
        {"30s", 30000000000LL},
        {"1478s", 1478000000000LL},
        {"-5s", -5000000000LL},
        {"+5s", 5000000000LL},
        {"0s", 0},
        {"5.0s", 5000000000LL},
        {"5.6s", 5600000000LL},
        {"5.s", 5000000000LL},
        {".5s", 500000000LL},
        {"1.004s", 1004000000LL},
        {"100.00100s", 100001000000LL},
        {"10ns", 10},
        {"11us", 11000},
        {"12\xc2\xb5s", 12000}, /* U+00B5 */
        {"12\xce\xbcs", 12000}, /* U+03BC */
        {"13ms", 13000000},
        {"15m", 900000000000LL},
        {"16h", 57600000000000LL},
        {"3h30m", 12600000000000LL},
        {"10.5s4m", 250500000000LL},
        {"-2m3.4s", -123400000000LL},
        {"1h2m3s4ms5us6ns", 3723004005006LL},
        {"39h9m14.425s", 140954425000000LL},
        {"52763797000ns", 52763797000LL},
        {"0.3333333333333333333h", 1200000000000LL},
        {"9007199254740993ns", 9007199254740993LL},
        {"9223372036854775807ns", INT64_MAX},
        {"9223372036854775.807us", INT64_MAX},
        {"9223372036s854ms775us807ns", INT64_MAX},
        {"-9223372036854775808ns", INT64_MIN},
        {"0.100000000000000000000h", 360000000000LL},
        {"0.830103483285477580700h", 2988372539827LL},
    };
    static const char *const bad[] = {
        "",
        "3",
        "-",
        "s",
        ".",
        "-.",
        ".s",
        "+.s",
        "1d",
        "1m 30s",
        " 1s",
        "1s ",
        "\x85\x85",
        "9223372036854775808ns",
        "9223372036854775810ns",
        "-9223372036854775809ns",
        "9223372036854776us",
        "3000000h",
    };
    struct err e;
    size_t i;

    for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        int64_t ns = 42;

        if (go_parse_duration(ok[i].s, &ns, NULL) || ns != ok[i].ns)
            test_fail(__FILE__, __LINE__, "ParseDuration(\"%s\") = %lld, want %lld", ok[i].s,
                      (long long)ns, (long long)ok[i].ns);
    }
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t ns;

        if (go_parse_duration(bad[i], &ns, NULL) != -EINVAL)
            test_fail(__FILE__, __LINE__, "ParseDuration(\"%s\") accepted as %lld", bad[i],
                      (long long)ns);
    }
    err_clear(&e);
    go_parse_duration("3", &(int64_t){0}, &e);
    CHECK_STR_EQ(e.msg, "time: missing unit in duration \"3\"");
    go_parse_duration("1d", &(int64_t){0}, &e);
    CHECK_STR_EQ(e.msg, "time: unknown unit \"d\" in duration \"1d\"");
    go_parse_duration("-", &(int64_t){0}, &e);
    CHECK_STR_EQ(e.msg, "time: invalid duration \"-\"");
    go_parse_duration("1\x85s", &(int64_t){0}, &e);
    CHECK_STR_EQ(e.msg, "time: unknown unit \"\\x85s\" in duration \"1\\x85s\"");
}

/* --- flags --- */

struct flag_test {
    bool on;
    const char *name;
    struct flag_list files;
    int level;
};

static int set_test_level(void *dest, const char *v, struct err *err)
{
    int64_t n;

    if (go_parse_int(v, strlen(v), 10, 32, &n, NULL) || n < 0 || n > 9)
        return err_set(err, -EINVAL, "'%s' is not a level 0..9", v);
    *(int *)dest = (int)n;
    return 0;
}

#define FLAG_TEST_TABLE(t)                                                                         \
    const struct flag flags[] = {                                                                  \
        {"on", 0, FLAG_BOOL, &(t).on, NULL, "FLAG_TEST_ON", NULL, "turn it on"},                   \
        {"name", 'n', FLAG_STRING, &(t).name, NULL, "FLAG_TEST_NAME", "NAME", "a name"},           \
        {"file", 'f', FLAG_LIST, &(t).files, NULL, NULL, "FILE", "files;\nrepeatable"},            \
        {"level", 'v', FLAG_FUNC, &(t).level, set_test_level, NULL, "N", "how loud"},              \
        FLAG_END,                                                                                  \
    }

static void flag_reads_every_spelling(void)
{
    struct flag_test t = {0};
    FLAG_TEST_TABLE(t);
    char *argv[] = {"cmd", "--on", "-n",  "a",   "--name=b", "-f", "x,y",        "--file", "z",
                    "-fw", "-f=v", "POS", "-v3", "-",        "--", "--on=false", "-f"};
    struct flag_list pos = {0};
    struct flag_fault ff;

    CHECK_INT_EQ(flag_parse(flags, (int)(sizeof(argv) / sizeof(argv[0])), argv, &pos, &ff),
                 FLAG_OK);
    CHECK(t.on);
    CHECK_STR_EQ(t.name, "b");
    CHECK_INT_EQ(t.level, 3);
    CHECK_INT_EQ(t.files.n, 5);
    if (t.files.n == 5) {
        CHECK_STR_EQ(t.files.v[0], "x");
        CHECK_STR_EQ(t.files.v[1], "y");
        CHECK_STR_EQ(t.files.v[2], "z");
        CHECK_STR_EQ(t.files.v[3], "w");
        CHECK_STR_EQ(t.files.v[4], "v");
    }
    CHECK_INT_EQ(pos.n, 4); /* POS, "-", and the two words after "--" */
    if (pos.n == 4) {
        CHECK_STR_EQ(pos.v[0], "POS");
        CHECK_STR_EQ(pos.v[1], "-");
        CHECK_STR_EQ(pos.v[2], "--on=false");
        CHECK_STR_EQ(pos.v[3], "-f");
    }
    flag_list_release(&t.files);
    flag_list_release(&pos);
}

static void flag_faults_say_what_and_where(void)
{
    struct flag_test t = {0};
    FLAG_TEST_TABLE(t);
    char *unknown[] = {"cmd", "--bogus=1"}, *unknown_short[] = {"cmd", "-q"};
    char *missing[] = {"cmd", "--name"}, *missing_short[] = {"cmd", "-n"};
    char *badbool[] = {"cmd", "--on=maybe"}, *badfunc[] = {"cmd", "-v", "12"};
    char *extra[] = {"cmd", "word"}, *after[] = {"cmd", "--", "x"};
    char *help[] = {"cmd", "-f", "x", "--help", "--bogus"}, *h[] = {"cmd", "-h"};
    struct flag_fault ff;

    CHECK_INT_EQ(flag_parse(flags, 2, unknown, NULL, &ff), FLAG_UNKNOWN);
    CHECK_STR_EQ(ff.name, "--bogus");
    CHECK_STR_EQ(ff.word, "--bogus=1");
    CHECK_INT_EQ(flag_parse(flags, 2, unknown_short, NULL, &ff), FLAG_UNKNOWN);
    CHECK_STR_EQ(ff.name, "-q");
    CHECK_INT_EQ(ff.shorthand, 'q');
    CHECK_INT_EQ(flag_parse(flags, 2, missing, NULL, &ff), FLAG_NO_VALUE);
    CHECK_STR_EQ(ff.name, "--name");
    CHECK(ff.flag == &flags[1]);
    CHECK_INT_EQ(flag_parse(flags, 2, missing_short, NULL, &ff), FLAG_NO_VALUE);
    CHECK_STR_EQ(ff.name, "-n");
    CHECK_INT_EQ(flag_parse(flags, 2, badbool, NULL, &ff), FLAG_BAD_VALUE);
    CHECK_STR_EQ(ff.value, "maybe");
    CHECK_STR_EQ(ff.err.msg, "strconv.ParseBool: parsing \"maybe\": invalid syntax");
    CHECK_INT_EQ(flag_parse(flags, 3, badfunc, NULL, &ff), FLAG_BAD_VALUE);
    CHECK_STR_EQ(ff.name, "-v");
    CHECK_STR_EQ(ff.err.msg, "'12' is not a level 0..9");
    CHECK_INT_EQ(flag_parse(flags, 2, extra, NULL, &ff), FLAG_EXTRA);
    CHECK_STR_EQ(ff.word, "word");
    CHECK_INT_EQ(flag_parse(flags, 3, after, NULL, &ff), FLAG_EXTRA);
    CHECK_STR_EQ(ff.word, "x");
    CHECK_INT_EQ(flag_parse(flags, 5, help, NULL, &ff), FLAG_HELP);
    CHECK_INT_EQ(flag_parse(flags, 2, h, NULL, &ff), FLAG_HELP);
    flag_list_release(&t.files);
}

static void flag_env_first_then_argv(void)
{
    struct flag_test t = {0};
    FLAG_TEST_TABLE(t);
    char *argv[] = {"cmd", "--name", "from-argv"};
    struct flag_fault ff;

    setenv("FLAG_TEST_ON", "true", 1);
    setenv("FLAG_TEST_NAME", "from-env", 1);
    CHECK_INT_EQ(flag_parse_env(flags, &ff), FLAG_OK);
    CHECK(t.on);
    CHECK_STR_EQ(t.name, "from-env");
    CHECK_INT_EQ(flag_parse(flags, 3, argv, NULL, &ff), FLAG_OK);
    CHECK_STR_EQ(t.name, "from-argv");
    setenv("FLAG_TEST_ON", "sometimes", 1);
    CHECK_INT_EQ(flag_parse_env(flags, &ff), FLAG_BAD_VALUE);
    CHECK_STR_EQ(ff.name, "FLAG_TEST_ON");
    CHECK_STR_EQ(ff.value, "sometimes");
    unsetenv("FLAG_TEST_ON");
    unsetenv("FLAG_TEST_NAME");
}

static void flag_usage_lines_up_like_kubectl(void)
{
    struct flag_test t = {0};
    FLAG_TEST_TABLE(t);
    struct buf b = BUF_INIT(0);

    CHECK_INT_EQ(flag_usage(flags, "help for cmd", 0, &b), 0);
    CHECK_STR_EQ(b.data, "      --on         turn it on [FLAG_TEST_ON]\n"
                         "  -n, --name NAME  a name [FLAG_TEST_NAME]\n"
                         "  -f, --file FILE  files;\n"
                         "                   repeatable\n"
                         "  -v, --level N    how loud\n"
                         "  -h, --help       help for cmd\n");
    buf_release(&b);
}

/* a table included in another's place is parsed, read from the environment and listed there */
static void flag_groups_are_read_in_place(void)
{
    struct flag_test t = {0};
    bool last = false;
    FLAG_TEST_TABLE(t);
    const struct flag outer[] = {
        {"first", 0, FLAG_BOOL, &last, NULL, NULL, NULL, "before"},
        FLAG_GROUP_OF(flags),
        FLAG_END,
    };
    char *argv[] = {"cmd", "-n", "x", "--first", "-v", "2"};
    struct buf b = BUF_INIT(0);
    struct flag_fault ff;

    CHECK_INT_EQ(flag_parse(outer, 6, argv, NULL, &ff), FLAG_OK);
    CHECK_STR_EQ(t.name, "x");
    CHECK_INT_EQ(t.level, 2);
    CHECK(last);
    setenv("FLAG_TEST_ON", "true", 1);
    CHECK_INT_EQ(flag_parse_env(outer, &ff), FLAG_OK);
    CHECK(t.on);
    unsetenv("FLAG_TEST_ON");
    CHECK_INT_EQ(flag_usage(outer, "help for cmd", 0, &b), 0);
    CHECK_STR_EQ(b.data, "      --first      before\n"
                         "      --on         turn it on [FLAG_TEST_ON]\n"
                         "  -n, --name NAME  a name [FLAG_TEST_NAME]\n"
                         "  -f, --file FILE  files;\n"
                         "                   repeatable\n"
                         "  -v, --level N    how loud\n"
                         "  -h, --help       help for cmd\n");
    buf_release(&b);
}

/* --- the monotonic clock --- */

static void clock_waits_reach_their_deadline(void)
{
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv;
    int64_t t0 = mono_ms(), deadline;
    double s0 = mono_now();

    CHECK(s0 >= (double)t0 / 1000 - 0.001);
    CHECK_INT_EQ(mono_cond_init(&cv), 0);
    pthread_mutex_lock(&mu);
    /* a deadline already past ends the wait at once */
    CHECK_INT_EQ(mono_cond_wait_until(&cv, &mu, t0 - 1000), -ETIMEDOUT);
    /* an absolute deadline on the monotonic clock: never early (spurious wakeups aside,
     * which the loop absorbs as every caller's does) */
    deadline = mono_ms() + 30;
    while (mono_cond_wait_until(&cv, &mu, deadline) == 0)
        ;
    CHECK(mono_ms() >= deadline);
    pthread_mutex_unlock(&mu);
    pthread_cond_destroy(&cv);
    s0 = mono_now();
    mono_sleep_until(s0 + 0.02);
    CHECK(mono_now() >= s0 + 0.02);
    mono_sleep_until(0); /* in the past: returns */
    CHECK(mono_ms() >= t0);
    /* a relative sleep lasts at least its length; none for 0 or less */
    t0 = mono_ms();
    mono_sleep_ms(15);
    CHECK(mono_ms() >= t0 + 15);
    s0 = mono_now();
    mono_sleep_ms(0);
    mono_sleep_ms(-5);
    CHECK(mono_now() - s0 < 0.01);
}

static void log_lines_have_klog_header(void)
{
    char buf[128], big[8192];
    size_t n;

    log_setup("gpulabel", 0);
    /* 2026-12-03T04:05:06.789012345Z: klog's header is in UTC here, microseconds cut */
    n = log_format(buf, sizeof(buf), 'W', 1796270706L, 789012345L, 4242, "GPU 0 is unhealthy");
    CHECK_STR_EQ(buf, "W1203 04:05:06.789012    4242 gpulabel] GPU 0 is unhealthy\n");
    CHECK_INT_EQ((long)n, (long)strlen(buf));
    /* cut to the buffer, still one line ending in a newline */
    n = log_format(buf, 20, 'E', 0, 0, 1, "x");
    CHECK_STR_EQ(buf, "E0101 00:00:00.000\n");
    CHECK_INT_EQ((long)n, 19L);
    memset(big, 'm', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    n = log_format(buf, sizeof(buf), 'I', 0, 999999999L, 7, big);
    CHECK_INT_EQ((long)n, (long)sizeof(buf) - 1);
    CHECK(buf[n - 1] == '\n' &&
          strncmp(buf, "I0101 00:00:00.999999       7 gpulabel] mmm", 43) == 0);
}

/* json_line_ok: line is one JSON object ending in a newline, with no raw control byte */
static json_t *json_line(const char *line)
{
    size_t n = strlen(line), i;

    if (!n || line[n - 1] != '\n')
        return NULL;
    for (i = 0; i + 1 < n; i++)
        if ((unsigned char)line[i] < 0x20)
            return NULL;
    return json_loads(line, 0, NULL);
}

static void log_json_lines_like_component_base(void)
{
    char buf[8192];
    json_t *j;
    size_t n;

    /* a klog-style message: msg, "v", then the pairs; numbers and booleans stay so */
    n = log_format_json(buf, sizeof(buf), 'I', 2, 1796270706L, 789012345L, "src/serve/loop.c", 42,
                        "\"Successfully bound pod to node\" pod=\"ns/p\" node=\"gpu-1\" "
                        "evaluatedNodes=3 ratio=0.5 ok=true");
    CHECK_STR_EQ(buf, "{\"ts\":1796270706789.0122,\"caller\":\"serve/loop.c:42\",\"msg\":"
                      "\"Successfully bound pod to node\",\"v\":2,\"pod\":\"ns/p\",\"node\":"
                      "\"gpu-1\",\"evaluatedNodes\":3,\"ratio\":0.5,\"ok\":true}\n");
    CHECK_INT_EQ((long)n, (long)strlen(buf));
    /* an error line: no "v", and "err" last */
    log_format_json(buf, sizeof(buf), 'E', 0, 0, 0, "serve/writes.c", 7,
                    "\"Failed to bind pod\" err=\"409: already \"bound\"\" pod=\"ns/p\"");
    CHECK_STR_EQ(buf, "{\"ts\":0,\"caller\":\"serve/writes.c:7\",\"msg\":\"Failed to bind pod\","
                      "\"pod\":\"ns/p\",\"err\":\"409: already \\\"bound\\\"\"}\n");
    /* a warning is an info line at 0; free text is the msg as a whole */
    log_format_json(buf, sizeof(buf), 'W', 0, 1, 500000, "a/b/c/daemon.c", 9,
                    "node \"gpu-1\" changed since it was read (409)");
    CHECK_STR_EQ(buf, "{\"ts\":1000.5,\"caller\":\"c/daemon.c:9\",\"msg\":\"node \\\"gpu-1\\\" "
                      "changed since it was read (409)\",\"v\":0}\n");
    /* escaping as zap does it: control characters, backslash, invalid UTF-8; valid UTF-8 and
     * HTML characters pass */
    log_format_json(buf, sizeof(buf), 'I', 0, 0, 0, "x.c", 1,
                    "tab\there\nnl \\ bell\a caf\xc3\xa9 <&> bad\xff\xc0\x80 cut\xe2\x82");
    CHECK_STR_EQ(buf, "{\"ts\":0,\"caller\":\"x.c:1\",\"msg\":\"tab\\there\\nnl \\\\ bell\\u0007 "
                      "caf\xc3\xa9 <&> bad\\ufffd\\ufffd\\ufffd cut\\ufffd\\ufffd\",\"v\":0}\n");
    j = json_line(buf);
    CHECK(j != NULL);
    json_decref(j);
    /* keys: what klog writes as a key; anything else is not a pair */
    log_format_json(buf, sizeof(buf), 'I', 1, 0, 0, "x.c", 1, "\"m\" a.b-c_d=\"x y\" 9bad=1");
    CHECK_STR_EQ(buf, "{\"ts\":0,\"caller\":\"x.c:1\",\"msg\":\"\\\"m\\\" a.b-c_d=\\\"x y\\\" "
                      "9bad=1\",\"v\":1}\n");
    {
        /* klog.KObj's keys: an object in JSON ("ns/name"; a value without a namespace stays) */
        static const char *const keys[] = {"pod", NULL};

        log_set_object_keys(keys);
        log_format_json(buf, sizeof(buf), 'I', 2, 0, 0, "x.c", 1,
                        "\"Bound\" pod=\"ns/p\\\"1\" node=\"n/1\" pod=\"solo\"");
        /* the value is strconv.Quote's form (log_quote): its escapes are decoded */
        CHECK_STR_EQ(buf,
                     "{\"ts\":0,\"caller\":\"x.c:1\",\"msg\":\"Bound\",\"v\":2,\"pod\":{\"name\":"
                     "\"p\\\"1\",\"namespace\":\"ns\"},\"node\":\"n/1\",\"pod\":\"solo\"}\n");
        log_set_object_keys(NULL);
    }
    log_format_json(buf, sizeof(buf), 'I', 1, 0, 0, "x.c", 1, "\"m\" a.b-c_d=\"x y\" n=-1e+06");
    CHECK_STR_EQ(buf, "{\"ts\":0,\"caller\":\"x.c:1\",\"msg\":\"m\",\"v\":1,\"a.b-c_d\":\"x y\","
                      "\"n\":-1e+06}\n");
}

/* Untrusted text cannot forge a line: an API Status message with a line break and a klog
 * header after it, as a value, a message and free text. */
static void log_quotes_untrusted_text_as_klog(void)
{
    static const char forged[] = "boom\nI0101 00:00:00.000000       1 serve] \"forged\"";
    char buf[1024], line[512];
    json_t *j;
    const char *nl;

    /* strconv.Quote's form without a line break; klog's multi-line form with one */
    CHECK_STR_EQ(log_quote("plain"), "\"plain\"");
    CHECK_STR_EQ(log_quote("a \"q\" \\ tab\t bell\a del\x7f"),
                 "\"a \\\"q\\\" \\\\ tab\\t bell\\a del\\x7f\"");
    CHECK_STR_EQ(
        log_quote("caf\xc3\xa9 \xff \xe2\x80\xa8 \xef\xbb\xbf \xf0\x9f\x98\x80 \xf3\xa0\x80\x81"),
        "\"caf\xc3\xa9 \\xff \\u2028 \\ufeff \xf0\x9f\x98\x80 \\U000e0001\"");
    CHECK_STR_EQ(log_quote("line 1\nline 2"), "<\n\tline 1\n\tline 2\n >");
    CHECK_STR_EQ(log_quote("ends\n"), "<\n\tends\n >");
    CHECK_STR_EQ(log_quote_msg("two\nlines"), "\"two\\nlines\"");
    /* as a value: every line after the first starts with a tab or " >" */
    log_setup("serve", 0);
    snprintf(line, sizeof(line), "\"Failed to bind pod\" pod=%s err=%s", log_quote("ns/p"),
             log_quote(forged));
    log_format(buf, sizeof(buf), 'E', 0, 0, 9, line);
    CHECK_STR_EQ(buf, "E0101 00:00:00.000000       9 serve] \"Failed to bind pod\" pod=\"ns/p\" "
                      "err=<\n\tboom\n\tI0101 00:00:00.000000       1 serve] \"forged\"\n >\n");
    for (nl = strchr(buf, '\n'); nl && nl[1]; nl = strchr(nl + 1, '\n'))
        CHECK(nl[1] == '\t' || nl[1] == ' ');
    /* JSON reads the value back whole */
    log_format_json(buf, sizeof(buf), 'E', 0, 0, 0, "x.c", 1, line);
    j = json_line(buf);
    CHECK(j != NULL);
    CHECK_STR_EQ(json_string_value(json_object_get(j, "err")), forged);
    CHECK_STR_EQ(json_string_value(json_object_get(j, "pod")), "ns/p");
    json_decref(j);
    snprintf(line, sizeof(line), "%s resource=%s", log_quote_msg(forged), log_quote("pods"));
    log_format_json(buf, sizeof(buf), 'W', 0, 0, 0, "x.c", 1, line);
    j = json_line(buf);
    CHECK(j != NULL);
    CHECK_STR_EQ(json_string_value(json_object_get(j, "msg")), forged);
    json_decref(j);
    /* free text (gpulabel's lines) and values written without log_quote: the text writer
     * escapes the line break, so the forged header stays inside the line */
    snprintf(line, sizeof(line), "cannot patch node \"gpu-1\": %s\r\x1b[2J", forged);
    log_format(buf, sizeof(buf), 'E', 0, 0, 9, line);
    CHECK_STR_EQ(buf, "E0101 00:00:00.000000       9 serve] cannot patch node \"gpu-1\": "
                      "boom\\nI0101 00:00:00.000000       1 serve] \"forged\"\\r\\x1b[2J\n");
}

static void log_json_lines_are_cut_whole(void)
{
    char big[5000], buf[300];
    json_t *j;
    size_t n;

    /* a long message is cut inside msg; a pair that does not fit is left out */
    memset(big, '"', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    big[0] = 'x';
    n = log_format_json(buf, sizeof(buf), 'I', 3, 0, 0, "x.c", 1, big);
    CHECK(n < sizeof(buf));
    j = json_line(buf);
    CHECK(j != NULL);
    CHECK_INT_EQ(json_integer_value(json_object_get(j, "v")), 3);
    json_decref(j);
    snprintf(big, sizeof(big), "\"short\" k=\"%0280d\" n=1", 5);
    n = log_format_json(buf, sizeof(buf), 'I', 0, 0, 0, "x.c", 1, big);
    j = json_line(buf);
    CHECK(j != NULL);
    CHECK(json_object_get(j, "k") == NULL);
    CHECK_INT_EQ(json_integer_value(json_object_get(j, "n")), 1);
    json_decref(j);
    CHECK_INT_EQ((long)log_format_json(buf, 63, 'I', 0, 0, 0, "x.c", 1, "m"), 0L);
    {
        enum log_fmt f;

        CHECK(!log_fmt_parse("json", &f) && f == LOG_FMT_JSON);
        CHECK(!log_fmt_parse("text", &f) && f == LOG_FMT_TEXT);
        CHECK(log_fmt_parse("JSON", &f) == -EINVAL);
        CHECK(log_fmt_parse("", &f) == -EINVAL);
    }
}

/* SipHash-1-3, the keymap's hash: the values are Python 3.11's hash() of the same bytes with
 * PYTHONHASHSEED=0 (its str and bytes hash is SipHash-1-3 under an all-zero key). */
static void keymap_siphash13_vectors(void)
{
    CHECK(keymap_siphash13(0, 0, "a", 1) == 0x407448d2b89b1813ULL);
    CHECK(keymap_siphash13(0, 0, "abcdefgh", 8) == 0x3f7b849c0b8e35eaULL);
    CHECK(keymap_siphash13(0, 0, "hello world, this is 30 bytes", 29) == 0xc65d2a8e052937c9ULL);
    CHECK(keymap_siphash13(1, 0, "a", 1) != keymap_siphash13(0, 0, "a", 1));
}

/* FNV-1a (64 bits), the keymap's hash before it was keyed */
static uint64_t fnv1a_step(uint64_t h, unsigned char c)
{
    return (h ^ c) * 1099511628211ULL;
}

/* Names an attacker could write (YAML anchors, object names) chosen so that FNV-1a gives them
 * all the same low 12 bits: in a table of 4096 slots every one had the same home slot, and
 * the N-th lookup walked past the N-1 before it (2,000 names: a million probes). Under the
 * keyed hash they spread as any names do. */
static void keymap_resists_crafted_collisions(void)
{
    enum { N = 2000, MASK = 4095 };
    static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    static char keys[N][32];
    struct keymap m = KEYMAP_INIT, other = KEYMAP_INIT;
    uint64_t target = 0;
    size_t i, total = 0, worst = 0, n;

    for (i = 0; i < N; i++) {
        uint64_t h = 1469598103934665603ULL;
        size_t len = (size_t)snprintf(keys[i], sizeof(keys[i]), "anchor-%zu-", i), k, a, b, c;
        bool found = false;

        for (k = 0; k < len; k++)
            h = fnv1a_step(h, (unsigned char)keys[i][k]);
        /* three more characters that bring FNV-1a's low 12 bits to the first name's */
        for (a = 0; a < 36 && !found; a++)
            for (b = 0; b < 36 && !found; b++)
                for (c = 0; c < 36 && !found; c++) {
                    uint64_t x =
                        fnv1a_step(fnv1a_step(fnv1a_step(h, alnum[a]), alnum[b]), alnum[c]);

                    if (!i)
                        target = x & MASK;
                    if ((x & MASK) == target) {
                        keys[i][len] = alnum[a];
                        keys[i][len + 1] = alnum[b];
                        keys[i][len + 2] = alnum[c];
                        keys[i][len + 3] = '\0';
                        found = true;
                    }
                }
        CHECK(found);
    }
    for (i = 0; i < N; i++)
        CHECK_INT_EQ(keymap_put(&m, keys[i], keys[i], NULL), 0);
    CHECK_INT_EQ(m.cap, MASK + 1);
    for (i = 0; i < N; i++) {
        if (keymap_get(&m, keys[i]) != keys[i])
            test_fail(__FILE__, __LINE__, "%s not found", keys[i]);
        n = keymap_probes(&m, keys[i]);
        total += n;
        if (n > worst)
            worst = n;
    }
    /* linear probing at a load of 0.49 takes 1.5 probes on average; one bucket took 1,000 */
    if (total > 4 * N || worst > 64)
        test_fail(__FILE__, __LINE__, "%zu probes for %d lookups, %zu at worst", total, N, worst);
    /* each map has its own key: the layout of one says nothing of another's */
    CHECK_INT_EQ(keymap_put(&other, keys[0], keys[0], NULL), 0);
    CHECK(other.k0 != m.k0 || other.k1 != m.k1);
    keymap_release(&other);
    keymap_release(&m);
}

static const struct test_case cases[] = {
    {"log lines have klog header", log_lines_have_klog_header},
    {"JSON log lines as component-base writes them", log_json_lines_like_component_base},
    {"JSON log lines cut and still valid", log_json_lines_are_cut_whole},
    {"err formats location and field", err_formats_location_and_field},
    {"err format truncates safely", err_format_truncates_safely},
    {"buf respects cap", buf_respects_cap},
    {"arena allocates aligned and large", arena_allocates_aligned_and_large},
    {"arena packs strings", arena_packs_strings},
    {"arena rewinds to a mark", arena_rewinds_to_a_mark},
    {"arena keeps a spare block", arena_keeps_a_spare_block},
    {"arena shares strings", arena_shares_strings},
    {"clock waits reach their deadline", clock_waits_reach_their_deadline},
    {"goparse int like strconv", goparse_int_like_strconv},
    {"goparse uint like strconv", goparse_uint_like_strconv},
    {"goparse bool like strconv", goparse_bool_like_strconv},
    {"goparse duration like time", goparse_duration_like_time},
    {"flag reads every spelling", flag_reads_every_spelling},
    {"flag faults say what and where", flag_faults_say_what_and_where},
    {"flag env first then argv", flag_env_first_then_argv},
    {"flag usage lines up like kubectl", flag_usage_lines_up_like_kubectl},
    {"flag groups are read in place", flag_groups_are_read_in_place},
    {"yaml resolves scalars like kubernetes", yaml_resolves_scalars_like_kubernetes},
    {"yaml records lines", yaml_records_lines},
    {"yaml multi documents and json", yaml_multi_documents_and_json},
    {"yaml error names line", yaml_error_names_line},
    {"yaml anchors and merge keys", yaml_anchors_and_merge_keys},
    {"yaml merge key with a list", yaml_merge_key_with_a_list},
    {"yaml rejects unknown alias and deep nesting", yaml_rejects_unknown_alias_and_deep_nesting},
    {"yaml caps alias expansion as go-yaml", yaml_caps_alias_expansion_as_go_yaml},
    {"log quotes untrusted text as klog", log_quotes_untrusted_text_as_klog},
    {"yaml anchor names", yaml_anchor_names},
    {"keymap: SipHash-1-3 vectors", keymap_siphash13_vectors},
    {"keymap: names crafted to collide spread out", keymap_resists_crafted_collisions},
};

TEST_SUITE(base, cases)
