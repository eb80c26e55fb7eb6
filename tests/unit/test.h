/* test.h - the unit-test harness: named cases in tables, one runner for all of them.
 *
 * A test file defines static void functions, lists them in a table and registers the table:
 *
 *     static void quantity_parses_milli(void) { CHECK_INT_EQ(parse("500m"), 500); }
 *     static const struct test_case cases[] = { {"parses milli", quantity_parses_milli}, };
 *     TEST_SUITE(quantity, cases)
 *
 * CHECK* record a failure (file:line and the values) and carry on; a case passes when none of
 * its checks failed. The runner (tests/unit/main.c) prints "ok SUITE/CASE" or
 * "FAIL SUITE/CASE: ..." per case and ends with "N passed, N failed". `unit-tests PATTERN`
 * runs only cases whose "suite/case" name contains PATTERN. Fixture files are found through
 * test_fixture_path() relative to tests/ in the source tree. */
#ifndef TESTS_UNIT_TEST_H
#define TESTS_UNIT_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct test_case {
    const char *name;
    void (*fn)(void);
};

struct test_suite {
    const char *name;
    const struct test_case *cases;
    size_t ncases;
    struct test_suite *next;
};

void test_register(struct test_suite *s);
void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* test_fixture_path returns "<srcdir>/tests/<rel>" in a static buffer. */
const char *test_fixture_path(const char *rel);

#define TEST_SUITE(sname, table)                                                                   \
    static struct test_suite test_suite_##sname = {#sname, table,                                  \
                                                   sizeof(table) / sizeof((table)[0]), NULL};      \
    __attribute__((constructor)) static void test_register_##sname(void)                           \
    {                                                                                              \
        test_register(&test_suite_##sname);                                                        \
    }

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            test_fail(__FILE__, __LINE__, "CHECK(%s) failed", #cond);                              \
    } while (0)

#define CHECK_INT_EQ(a, b)                                                                         \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_)                                                                              \
            test_fail(__FILE__, __LINE__, "%s == %lld, expected %s == %lld", #a, a_, #b, b_);      \
    } while (0)

#define CHECK_STR_EQ(a, b)                                                                         \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (!a_ || !b_ || strcmp(a_, b_))                                                          \
            test_fail(__FILE__, __LINE__, "%s == \"%s\", expected \"%s\"", #a, a_ ? a_ : "(null)", \
                      b_ ? b_ : "(null)");                                                         \
    } while (0)

#endif
