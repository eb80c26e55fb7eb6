/* main.c - runs every registered unit-test suite; see test.h. */
#include "test.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static struct test_suite *suites;
static int case_failed;
static char case_msg[4096];

void test_register(struct test_suite *s)
{
    struct test_suite **p = &suites;

    /* keep suites sorted by name so the output order is stable */
    while (*p && strcmp((*p)->name, s->name) < 0)
        p = &(*p)->next;
    s->next = *p;
    *p = s;
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
    size_t n = strlen(case_msg);
    va_list ap;

    if (n < sizeof(case_msg) - 1) {
        n += (size_t)snprintf(case_msg + n, sizeof(case_msg) - n,
                              "%s%s:%d: ", case_failed ? "; " : "", file, line);
        if (n < sizeof(case_msg) - 1) {
            va_start(ap, fmt);
            vsnprintf(case_msg + n, sizeof(case_msg) - n, fmt, ap);
            va_end(ap);
        }
    }
    case_failed++;
}

const char *test_fixture_path(const char *rel)
{
    static char path[4096];
    const char *src = getenv("GPULABEL_SRCDIR");

    snprintf(path, sizeof(path), "%s/tests/%s", src ? src : ".", rel);
    return path;
}

int main(int argc, char **argv)
{
    const char *pattern = argc > 1 ? argv[1] : NULL;
    int passed = 0, failed = 0;
    struct test_suite *s;
    size_t i;

    for (s = suites; s; s = s->next) {
        for (i = 0; i < s->ncases; i++) {
            char full[512];

            snprintf(full, sizeof(full), "%s/%s", s->name, s->cases[i].name);
            if (pattern && !strstr(full, pattern))
                continue;
            case_failed = 0;
            case_msg[0] = '\0';
            s->cases[i].fn();
            if (case_failed) {
                printf("FAIL %s: %s\n", full, case_msg);
                failed++;
            } else {
                printf("ok %s\n", full);
                passed++;
            }
            fflush(stdout);
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
