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

/* A JSON number as kubectl hands it on (Go's encoder writes a float64: strconv's shortest
 * digits, 'f' from 1e-6 to below 1e21, 'e' outside with "e-7" for "e-07"); the figures are
 * what the API server made of these numbers in a YAML manifest. */
static void quantity_json_numbers(void)
{
    static const struct {
        double f;
        const char *want;
    } reals[] = {
        {1e3, "1000"},
        {1.5, "1.5"},
        {0.1, "0.1"},
        {1e-7, "1e-7"},
        {1e-10, "1e-10"},
        {0.000001, "0.000001"},
        {1.2e-5, "0.000012"},
        {1e20, "100000000000000000000"},
        {1.2345678901234567e20, "123456789012345670000"},
        {123456789012345678901.0, "123456789012345680000"},
        {1e21, "1e+21"},
        {1.7976931348623157e308, "1.7976931348623157e+308"},
        {5e-324, "5e-324"},
        {-2.5, "-2.5"},
        {-0.0, "-0"},
        {12345678.9, "12345678.9"},
        {0.3333333333333333, "0.3333333333333333"},
    };
    char b[KUBE_JSON_NUMBER_MAX];
    size_t i;

    for (i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
        json_t *v = json_real(reals[i].f);

        CHECK_STR_EQ(kube_json_number_text(v, b), reals[i].want);
        json_decref(v);
    }
    {
        json_t *v = json_integer(INT64_MIN);

        CHECK_STR_EQ(kube_json_number_text(v, b), "-9223372036854775808");
        json_decref(v);
    }
}

/* What Quantity's UnmarshalJSON parses: null is 0, a string is trimmed of Unicode's white
 * space (strings.TrimSpace), a number is printed as kubectl sends it, nothing else is one. */
static void quantity_json_text(void)
{
    static const struct {
        const char *json;
        const char *want; /* NULL: no quantity */
    } rows[] = {
        {"null", "0"},
        {"\"2Gi\"", "2Gi"},
        {"\" \\t2\\n \"", "2"},
        {"\"\\u00a0\\u0085 3\\u2003\\u3000\"", "3"},
        {"\"\\u200b4\"", "\xe2\x80\x8b"
                         "4"}, /* U+200B is no white space for Go */
        {"\"  \"", ""},
        {"1e3", "1000"},
        {"1.5", "1.5"},
        {"42", "42"},
        {"true", NULL},
        {"{}", NULL},
        {"[1]", NULL},
    };
    char b[KUBE_JSON_NUMBER_MAX], wrap[64];
    size_t i, n;

    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        json_t *o, *v;
        const char *t;

        snprintf(wrap, sizeof(wrap), "{\"q\": %s}", rows[i].json);
        o = json_loads(wrap, 0, NULL);
        CHECK(o != NULL);
        if (!o)
            continue;
        v = json_object_get(o, "q");
        n = 99;
        t = kube_quantity_json_text(v, b, &n);
        if (!rows[i].want) {
            CHECK(t == NULL);
        } else if (!t) {
            test_fail(__FILE__, __LINE__, "%s: no text", rows[i].json);
        } else {
            char got[64];

            snprintf(got, sizeof(got), "%.*s", (int)n, t);
            CHECK_STR_EQ(got, rows[i].want);
        }
        json_decref(o);
    }
    /* the parser takes the text by length: a trimmed string need not end at a NUL */
    {
        int64_t v = 0;

        CHECK_INT_EQ(kube_quantity_parsen("2Gi trailing", 3, &v, NULL, NULL), 0);
        CHECK_INT_EQ(v, (int64_t)2 << 30);
    }
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
    {"JSON numbers as kubectl sends them", quantity_json_numbers},
    {"the text Quantity's UnmarshalJSON parses", quantity_json_text},
};
TEST_SUITE(quantity, quantity_cases)
