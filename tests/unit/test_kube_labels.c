/* test_kube_labels.c - label validation, selector parsing/matching/String(): named cases plus every
 * line of tests/fixtures/selectors.txt (SELECTOR, LABELS, match|nomatch|error:MSG, EXTRA). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/buf.h"
#include "kube/labels.h"
#include "test.h"

#define QN_MSG                                                                                     \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "    \
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "         \
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define LV_MSG                                                                                     \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "       \
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "          \
    "'my_value',  or '12345', regex used for validation is "                                       \
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"

static void key_ok(const char *k)
{
    struct err err;

    err_clear(&err);
    if (kube_label_key_validate(k, &err))
        test_fail(__FILE__, __LINE__, "key '%s' rejected: %s", k, err.msg);
}

static void key_bad(const char *k, const char *msg)
{
    struct err err;

    err_clear(&err);
    if (kube_label_key_validate(k, &err) != -EINVAL || strcmp(err.msg, msg))
        test_fail(__FILE__, __LINE__, "key '%s': got \"%s\", want \"%s\"", k, err.msg, msg);
}

static void labels_key_validation(void)
{
    char long_name[80], long_prefix[300];

    key_ok("a");
    key_ok("aliyun.accelerator/nvidia_name");
    key_ok("kubernetes.io/hostname");
    key_ok("MyName");
    key_ok("my.name_-x");
    key_ok("123-abc");
    key_bad("", "name part must be non-empty");
    key_bad("-a", "name part " QN_MSG);
    key_bad("a-", "name part " QN_MSG);
    key_bad("a b", "name part " QN_MSG);
    key_bad("/a", "prefix part must be non-empty");
    key_bad("a/", "name part must be non-empty");
    key_bad("a/b/c", "a qualified name " QN_MSG
                     " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
    key_bad("Aliyun/x", "prefix part a lowercase RFC 1123 subdomain must consist of lower case "
                        "alphanumeric characters, '-' or '.', and must start and end with an "
                        "alphanumeric character (e.g. 'example.com', regex used for validation "
                        "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
    memset(long_name, 'n', 63);
    long_name[63] = '\0';
    key_ok(long_name);
    long_name[63] = 'n';
    long_name[64] = '\0';
    key_bad(long_name, "name part must be no more than 63 characters");
    memset(long_prefix, 'p', 253);
    memcpy(long_prefix + 253, "/x", 3);
    key_ok(long_prefix);
    memset(long_prefix, 'p', 254);
    memcpy(long_prefix + 254, "/x", 3);
    key_bad(long_prefix, "prefix part must be no more than 253 characters");
}

static void labels_value_validation(void)
{
    struct err err;
    char v[80];

    CHECK_INT_EQ(kube_label_value_validate("", NULL), 0);
    CHECK_INT_EQ(kube_label_value_validate("Tesla-M40", NULL), 0);
    CHECK_INT_EQ(kube_label_value_validate("12209MiB", NULL), 0);
    CHECK_INT_EQ(kube_label_value_validate("a_b.c-d", NULL), 0);
    err_clear(&err);
    CHECK_INT_EQ(kube_label_value_validate("Tesla M40", &err), -EINVAL);
    CHECK_STR_EQ(err.msg, LV_MSG);
    err_clear(&err);
    CHECK_INT_EQ(kube_label_value_validate("a/b", &err), -EINVAL);
    CHECK_STR_EQ(err.msg, LV_MSG);
    memset(v, 'v', 64);
    v[64] = '\0';
    err_clear(&err);
    CHECK_INT_EQ(kube_label_value_validate(v, &err), -EINVAL);
    CHECK_STR_EQ(err.msg, "must be no more than 63 characters");
    v[63] = '\0';
    CHECK_INT_EQ(kube_label_value_validate(v, NULL), 0);
}

static void labels_get_binary_search(void)
{
    struct kube_label v[] = {{"a", "1"}, {"b", "2"}, {"c", ""}, {"d/e", "4"}};
    struct kube_labels l = {v, 4}, empty = {NULL, 0};

    CHECK_STR_EQ(kube_labels_get(&l, "a"), "1");
    CHECK_STR_EQ(kube_labels_get(&l, "c"), "");
    CHECK_STR_EQ(kube_labels_get(&l, "d/e"), "4");
    CHECK(kube_labels_get(&l, "bb") == NULL);
    CHECK(kube_labels_get(&l, "0") == NULL);
    CHECK(kube_labels_get(&l, "z") == NULL);
    CHECK(kube_labels_get(&empty, "a") == NULL);
}

static void labels_label_selector(void)
{
    const char *in_vals[] = {"Tesla-M40"};
    struct kube_requirement reqs[] = {
        {"gpu", KUBE_OP_IN, in_vals, 1, false},
        {"zone", KUBE_OP_DOES_NOT_EXIST, NULL, 0, false},
    };
    struct kube_label v[] = {{"gpu", "Tesla-M40"}};
    struct kube_labels l = {v, 1};
    struct kube_label_selector absent = {false, NULL, 0}, empty = {true, NULL, 0};
    struct kube_label_selector sel = {true, reqs, 2};

    CHECK(!kube_label_selector_matches(&absent, &l));
    CHECK(!kube_label_selector_matches(NULL, &l));
    CHECK(kube_label_selector_matches(&empty, &l));
    CHECK(kube_label_selector_matches(&sel, &l));
    reqs[1].op = KUBE_OP_EXISTS;
    CHECK(!kube_label_selector_matches(&sel, &l));
    reqs[1].op = KUBE_OP_DOES_NOT_EXIST;
    reqs[0].invalid = true;
    CHECK(!kube_label_selector_matches(&sel, &l));
}

static void labels_selector_string_truncates(void)
{
    struct arena a = ARENA_INIT;
    struct kube_selector sel;
    char small[6];

    CHECK_INT_EQ(kube_selector_parse("abc in (x,y),d", &a, &sel, NULL), 0);
    CHECK_STR_EQ(kube_selector_string(&sel, small, sizeof(small)), "abc i");
    CHECK_INT_EQ(sel.nreqs, 2);
    CHECK_STR_EQ(sel.reqs[0].key, "abc");
    CHECK_INT_EQ(sel.reqs[0].op, KUBE_OP_IN);
    CHECK_INT_EQ(sel.reqs[1].op, KUBE_OP_EXISTS);
    arena_release(&a);
}

static void labels_selector_large(void)
{
    /* many requirements: the parser's arrays grow; order is by key */
    struct arena a = ARENA_INIT;
    struct kube_selector sel;
    struct buf s = BUF_INIT(0);
    int i;

    for (i = 99; i >= 0; i--)
        buf_printf(&s, "%sk%02d in (v%d,w)", i < 99 ? "," : "", i, i);
    CHECK_INT_EQ(kube_selector_parse(s.data, &a, &sel, NULL), 0);
    CHECK_INT_EQ(sel.nreqs, 100);
    CHECK_STR_EQ(sel.reqs[0].key, "k00");
    CHECK_STR_EQ(sel.reqs[99].key, "k99");
    CHECK_STR_EQ(sel.reqs[5].values[0], "v5");
    CHECK_STR_EQ(sel.reqs[5].values[1], "w");
    buf_release(&s);
    arena_release(&a);
}

static void labels_selector_many_values(void)
{
    /* 20,000 values with duplicates: sorted, deduplicated, no quadratic work */
    struct arena a = ARENA_INIT;
    struct kube_selector sel;
    struct buf b = BUF_INIT(0);
    char *s;
    int i;

    buf_puts(&b, "k in (");
    for (i = 0; i < 20000; i++)
        buf_printf(&b, "%s%d", i ? "," : "", i % 10000);
    buf_puts(&b, ")");
    if (!(s = buf_take(&b)))
        return;
    CHECK_INT_EQ(kube_selector_parse(s, &a, &sel, NULL), 0);
    CHECK_INT_EQ(sel.nreqs, 1);
    CHECK_INT_EQ(sel.reqs[0].nvalues, 10000);
    CHECK_STR_EQ(sel.reqs[0].values[0], "0");
    CHECK_STR_EQ(sel.reqs[0].values[1], "1");
    CHECK_STR_EQ(sel.reqs[0].values[2], "10");
    free(s);
    arena_release(&a);
}

/* ---- fixture file ---- */

static void unescape(char *s)
{
    char *w = s;

    for (; *s; s++) {
        if (*s == '\\' && s[1]) {
            s++;
            *w++ = *s == 't' ? '\t' : *s == 'n' ? '\n' : *s == 'r' ? '\r' : *s;
        } else {
            *w++ = *s;
        }
    }
    *w = '\0';
}

static int cmp_label(const void *a, const void *b)
{
    return strcmp(((const struct kube_label *)a)->key, ((const struct kube_label *)b)->key);
}

/* parse_labels reads "k=v,k=v" (or "<none>") into l, pointing into s (modified). */
static void parse_labels(char *s, struct kube_label *v, size_t max, struct kube_labels *l)
{
    char *tok, *save = NULL;

    l->v = v;
    l->n = 0;
    if (!strcmp(s, "<none>"))
        return;
    for (tok = strtok_r(s, ",", &save); tok && l->n < max; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');

        v[l->n].key = tok;
        v[l->n].value = "";
        if (eq) {
            *eq = '\0';
            v[l->n].value = eq + 1;
        }
        l->n++;
    }
    qsort(v, l->n, sizeof(*v), cmp_label);
}

static void labels_selector_fixtures(void)
{
    const char *path = test_fixture_path("fixtures/selectors.txt");
    FILE *f = fopen(path, "r");
    char line[8192];
    int lineno = 0, cases = 0;

    if (!f) {
        test_fail(__FILE__, __LINE__, "cannot open %s", path);
        return;
    }
    while (fgets(line, sizeof(line), f)) {
        char *fields[4] = {NULL, NULL, NULL, NULL}, *p = line, *nl;
        struct kube_label lv[64];
        struct kube_labels labels;
        struct arena a = ARENA_INIT;
        struct kube_selector sel;
        struct err err;
        char str[4096];
        int nf = 0, rc;

        lineno++;
        nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (line[0] == '#' || !line[0])
            continue;
        while (nf < 4) {
            fields[nf++] = p;
            p = strchr(p, '\t');
            if (!p)
                break;
            *p++ = '\0';
        }
        if (nf < 3) {
            test_fail(__FILE__, __LINE__, "selectors.txt:%d: fewer than 3 fields", lineno);
            continue;
        }
        cases++;
        unescape(fields[0]);
        parse_labels(fields[1], lv, 64, &labels);
        err_clear(&err);
        rc = kube_selector_parse(fields[0], &a, &sel, &err);
        if (!strncmp(fields[2], "error:", 6)) {
            if (!rc)
                test_fail(__FILE__, __LINE__, "selectors.txt:%d: '%s' parsed, want error", lineno,
                          fields[0]);
            else if (strcmp(err.msg, fields[2] + 6))
                test_fail(__FILE__, __LINE__, "selectors.txt:%d: '%s' error \"%s\", want \"%s\"",
                          lineno, fields[0], err.msg, fields[2] + 6);
            else if (fields[3] && fields[3][0] && err.column != atoi(fields[3]))
                test_fail(__FILE__, __LINE__, "selectors.txt:%d: '%s' column %d, want %s", lineno,
                          fields[0], err.column, fields[3]);
        } else if (rc) {
            test_fail(__FILE__, __LINE__, "selectors.txt:%d: '%s' failed: %s (column %d)", lineno,
                      fields[0], err.msg, err.column);
        } else {
            bool want = !strcmp(fields[2], "match");

            if (!want && strcmp(fields[2], "nomatch"))
                test_fail(__FILE__, __LINE__, "selectors.txt:%d: bad expectation '%s'", lineno,
                          fields[2]);
            else if (kube_selector_matches(&sel, &labels) != want)
                test_fail(__FILE__, __LINE__, "selectors.txt:%d: '%s' %s, want %s", lineno,
                          fields[0], want ? "did not match" : "matched", fields[2]);
            kube_selector_string(&sel, str, sizeof(str));
            if (fields[3] && strcmp(str, fields[3]))
                test_fail(__FILE__, __LINE__, "selectors.txt:%d: '%s' String() \"%s\", want \"%s\"",
                          lineno, fields[0], str, fields[3]);
            /* String() is canonical: parsing it again gives the same string */
            if (!rc) {
                struct kube_selector again;
                char str2[4096];

                if (kube_selector_parse(str, &a, &again, NULL))
                    test_fail(__FILE__, __LINE__, "selectors.txt:%d: String() '%s' does not parse",
                              lineno, str);
                else if (strcmp(kube_selector_string(&again, str2, sizeof(str2)), str))
                    test_fail(__FILE__, __LINE__, "selectors.txt:%d: '%s' round-trips to '%s'",
                              lineno, str, str2);
            }
        }
        arena_release(&a);
    }
    fclose(f);
    CHECK(cases >= 40);
}

static const struct test_case labels_cases[] = {
    {"key validation messages", labels_key_validation},
    {"value validation messages", labels_value_validation},
    {"kube_labels_get", labels_get_binary_search},
    {"metav1.LabelSelector absent/empty", labels_label_selector},
    {"String() truncates like snprintf", labels_selector_string_truncates},
    {"selector with 100 requirements", labels_selector_large},
    {"selector with 20000 set values", labels_selector_many_values},
    {"fixtures/selectors.txt", labels_selector_fixtures},
};
TEST_SUITE(kube_labels, labels_cases)
