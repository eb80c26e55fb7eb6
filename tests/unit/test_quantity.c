/* test_quantity.c - kube_quantity_parse and the formatting helpers: a table of named cases plus
 * every line of tests/fixtures/quantities.txt (INPUT, VALUE, MILLI or error:MESSAGE). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "kube/quantity.h"
#include "test.h"

static void quantity_cpu_forms(void)
{
    int64_t v = 0, m = 0;

    CHECK_INT_EQ(kube_quantity_parse("500m", &v, &m, NULL), 0);
    CHECK_INT_EQ(v, 1);
    CHECK_INT_EQ(m, 500);
    CHECK_INT_EQ(kube_quantity_parse("2", &v, &m, NULL), 0);
    CHECK_INT_EQ(m, 2000);
    CHECK_INT_EQ(kube_quantity_parse("0.25", NULL, &m, NULL), 0);
    CHECK_INT_EQ(m, 250);
}

static void quantity_memory_forms(void)
{
    int64_t v = 0;

    CHECK_INT_EQ(kube_quantity_parse("128974848", &v, NULL, NULL), 0);
    CHECK_INT_EQ(v, 128974848);
    CHECK_INT_EQ(kube_quantity_parse("129e6", &v, NULL, NULL), 0);
    CHECK_INT_EQ(v, 129000000);
    CHECK_INT_EQ(kube_quantity_parse("129M", &v, NULL, NULL), 0);
    CHECK_INT_EQ(v, 129000000);
    CHECK_INT_EQ(kube_quantity_parse("123Mi", &v, NULL, NULL), 0);
    CHECK_INT_EQ(v, 128974848);
}

static void quantity_error_message(void)
{
    struct err err;

    err_clear(&err);
    CHECK_INT_EQ(kube_quantity_parse("1 Gi", NULL, NULL, &err), -EINVAL);
    CHECK_STR_EQ(err.msg, "quantities must match the regular expression "
                          "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    err_clear(&err);
    CHECK_INT_EQ(kube_quantity_parse("1K", NULL, NULL, &err), -EINVAL);
    CHECK_STR_EQ(err.msg, "unable to parse quantity's suffix");
    err_clear(&err);
    CHECK_INT_EQ(kube_quantity_parse("99999999999999999999", NULL, NULL, &err), -ERANGE);
    CHECK_INT_EQ(err.code, -ERANGE);
    CHECK_INT_EQ(kube_quantity_parse(NULL, NULL, NULL, NULL), -EINVAL);
}

static void quantity_long_input(void)
{
    /* longer than the stack digit buffer: takes the heap path */
    char s[400];
    int64_t v = 0, m = 0;

    memset(s, '0', sizeof(s));
    s[0] = '0';
    s[1] = '.';
    s[sizeof(s) - 2] = '1';
    s[sizeof(s) - 1] = '\0';
    CHECK_INT_EQ(kube_quantity_parse(s, &v, &m, NULL), 0);
    CHECK_INT_EQ(v, 1);
    CHECK_INT_EQ(m, 1);
    memcpy(s + sizeof(s) - 3, "Ki", 3);
    CHECK_INT_EQ(kube_quantity_parse(s, &v, &m, NULL), 0);
    CHECK_INT_EQ(v, 0);
}

static void quantity_format(void)
{
    char b[32];

    CHECK_STR_EQ(kube_quantity_format_milli(500, b, sizeof(b)), "500m");
    CHECK_STR_EQ(kube_quantity_format_milli(2000, b, sizeof(b)), "2");
    CHECK_STR_EQ(kube_quantity_format_milli(0, b, sizeof(b)), "0");
    CHECK_STR_EQ(kube_quantity_format_milli(1500, b, sizeof(b)), "1500m");
    CHECK_STR_EQ(kube_quantity_format_bytes((int64_t)12 << 30, b, sizeof(b)), "12Gi");
    CHECK_STR_EQ(kube_quantity_format_bytes((int64_t)1536 << 20, b, sizeof(b)), "1536Mi");
    CHECK_STR_EQ(kube_quantity_format_bytes(1000, b, sizeof(b)), "1000");
    CHECK_STR_EQ(kube_quantity_format_bytes(1024, b, sizeof(b)), "1Ki");
    CHECK_STR_EQ(kube_quantity_format_bytes(1025, b, sizeof(b)), "1025");
    CHECK_STR_EQ(kube_quantity_format_bytes(0, b, sizeof(b)), "0");
    CHECK_STR_EQ(kube_quantity_format_bytes(-2048, b, sizeof(b)), "-2Ki");
    CHECK_STR_EQ(kube_quantity_format_bytes((int64_t)1 << 60, b, sizeof(b)), "1Ei");
    CHECK_STR_EQ(kube_quantity_format_bytes(INT64_MIN, b, sizeof(b)), "-8Ei");
}

/* unescape turns \t \n \r \\ into their bytes, in place. */
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

static void quantity_fixtures(void)
{
    const char *path = test_fixture_path("fixtures/quantities.txt");
    FILE *f = fopen(path, "r");
    char line[4096];
    int lineno = 0, cases = 0;

    if (!f) {
        test_fail(__FILE__, __LINE__, "cannot open %s", path);
        return;
    }
    while (fgets(line, sizeof(line), f)) {
        char *in, *want, *want_milli, *nl;
        int64_t v = 0, m = 0;
        struct err err;
        int rc;

        lineno++;
        nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (line[0] == '#' || (!line[0]))
            continue;
        in = line;
        want = strchr(in, '\t');
        if (!want) {
            test_fail(__FILE__, __LINE__, "quantities.txt:%d: no expected value", lineno);
            continue;
        }
        *want++ = '\0';
        want_milli = strchr(want, '\t');
        if (want_milli)
            *want_milli++ = '\0';
        unescape(in);
        err_clear(&err);
        cases++;
        if (!strncmp(want, "error:", 6)) {
            rc = kube_quantity_parse(in, &v, &m, &err);
            if (!rc || strcmp(err.msg, want + 6))
                test_fail(__FILE__, __LINE__,
                          "quantities.txt:%d: '%s' gave rc %d \"%s\", want error \"%s\"", lineno,
                          in, rc, err.msg, want + 6);
            continue;
        }
        if (!want_milli) {
            test_fail(__FILE__, __LINE__, "quantities.txt:%d: no milli column", lineno);
            continue;
        }
        rc = kube_quantity_parse(in, &v, strcmp(want_milli, "-") ? &m : NULL, &err);
        if (rc) {
            test_fail(__FILE__, __LINE__, "quantities.txt:%d: '%s' failed: %s", lineno, in,
                      err.msg);
            continue;
        }
        {
            /* the exact nano value rounds to the same Value() and MilliValue() */
            kube_nano n = 0;

            if (kube_quantity_parse_nano(in, &n, NULL))
                test_fail(__FILE__, __LINE__, "quantities.txt:%d: '%s' nano failed", lineno, in);
            else if (kube_nano_value(n) != v ||
                     (strcmp(want_milli, "-") && kube_nano_milli(n) != m))
                test_fail(__FILE__, __LINE__, "quantities.txt:%d: '%s' nano rounds differently",
                          lineno, in);
        }
        if (v != strtoll(want, NULL, 10))
            test_fail(__FILE__, __LINE__, "quantities.txt:%d: '%s' value %" PRId64 ", want %s",
                      lineno, in, v, want);
        if (strcmp(want_milli, "-") && m != strtoll(want_milli, NULL, 10))
            test_fail(__FILE__, __LINE__, "quantities.txt:%d: '%s' milli %" PRId64 ", want %s",
                      lineno, in, m, want_milli);
    }
    fclose(f);
    CHECK(cases >= 20);
}

static void quantity_nano(void)
{
    kube_nano n = 0;
    struct err err;

    CHECK_INT_EQ(kube_quantity_parse_nano("1n", &n, NULL), 0);
    CHECK(n == 1);
    CHECK_INT_EQ(kube_quantity_parse_nano("0.1n", &n, NULL), 0); /* rounded up to a nano */
    CHECK(n == 1);
    CHECK_INT_EQ(kube_quantity_parse_nano("-1u", &n, NULL), 0);
    CHECK(n == -1000);
    CHECK_INT_EQ(kube_quantity_parse_nano("1.5Gi", &n, NULL), 0);
    CHECK(n == (kube_nano)1610612736 * KUBE_NANO_PER_UNIT);
    CHECK_INT_EQ(kube_quantity_parse_nano("2500M", &n, NULL), 0);
    CHECK(n == (kube_nano)2500000000LL * KUBE_NANO_PER_UNIT);
    CHECK_INT_EQ(kube_quantity_parse_nano("1k", &n, NULL), 0);
    CHECK(n == (kube_nano)1000 * KUBE_NANO_PER_UNIT);
    CHECK_INT_EQ(kube_quantity_parse_nano("16Ei", &n, NULL), 0); /* binary: capped */
    CHECK(n == (kube_nano)INT64_MAX * KUBE_NANO_PER_UNIT);
    CHECK_INT_EQ(kube_quantity_parse_nano("1e20", &n, NULL), 0); /* decimal: exact */
    CHECK(kube_nano_value(n) == INT64_MAX && n / KUBE_NANO_PER_UNIT / 1000000000 == 100000000000LL);
    err_clear(&err);
    CHECK_INT_EQ(kube_quantity_parse_nano("1e40", &n, &err), -ERANGE);
    CHECK_INT_EQ(kube_quantity_parse_nano("x", &n, &err), -EINVAL);
    CHECK_INT_EQ(kube_nano_value(1), 1);
    CHECK_INT_EQ(kube_nano_value(-1), -1);
    CHECK_INT_EQ(kube_nano_milli(1000000), 1);
    CHECK_INT_EQ(kube_nano_milli(1000001), 2);
}

static const struct test_case quantity_cases[] = {
    {"nano", quantity_nano},
    {"cpu forms", quantity_cpu_forms},
    {"memory forms", quantity_memory_forms},
    {"error messages", quantity_error_message},
    {"long input", quantity_long_input},
    {"format helpers", quantity_format},
    {"fixtures/quantities.txt", quantity_fixtures},
};
TEST_SUITE(quantity, quantity_cases)
