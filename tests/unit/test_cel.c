/* test_cel.c - the CEL library (src/cel/cel.h): the table of selectors in
 * tests/fixtures/cel/cases.txt, whose expected answers came from the real CEL, and the API's
 * own promises (error locations, device views, cost limits, the new-selector checks, no
 * allocation per evaluation, threads). */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel.h"
#include "test.h"

static const struct cel_device_attr dev_attrs[] = {
    {"model", 5, CEL_ATTR_STRING, 0, false, "A100", 4},
    {"memoryMiB", 9, CEL_ATTR_INT, 81920, false, NULL, 0},
    {"ecc", 3, CEL_ATTR_BOOL, 0, true, NULL, 0},
    {"driverVersion", 13, CEL_ATTR_VERSION, 0, false, "535.104.5", 9},
    {"example.com/family", 18, CEL_ATTR_STRING, 0, false, "ampere", 6},
};
static const struct cel_device_capacity dev_caps[] = {
    {"memory", 6, "80Gi", 4},
    {"cores", 5, "108", 3},
};
static const struct cel_device test_device = {
    "gpu.example.com", 15, 1, dev_attrs, 5, dev_caps, 2,
};

/* compiles and evaluates expr against the test device; the answer in the fixture's words */
static void answer(const char *expr, bool new_env, char *out, size_t n)
{
    struct cel_compile_opts opts = {0};
    struct cel_program *p;
    struct cel_compile_error cerr;
    struct cel_device_view *v;
    struct cel_scratch *s;
    struct cel_result r;
    struct err e = {0};

    opts.env = new_env ? CEL_ENV_NEW : CEL_ENV_STORED;
    if (cel_compile(expr, strlen(expr), &opts, &p, &cerr) < 0) {
        const char *d = cerr.detail ? cerr.detail : "";
        size_t l = strcspn(d, "\n");
        snprintf(out, n, "compile: %.*s", (int)l, d);
        cel_compile_error_release(&cerr);
        return;
    }
    if (cel_device_prepare(&test_device, &v, &e) < 0) {
        snprintf(out, n, "device: %s", e.msg);
        cel_program_free(p);
        return;
    }
    s = cel_scratch_new();
    if (!s || cel_eval(p, v, s, &r) < 0)
        snprintf(out, n, "out of memory");
    else if (r.error)
        snprintf(out, n, "error: %s", r.error);
    else
        snprintf(out, n, "%s", r.match ? "true" : "false");
    cel_scratch_free(s);
    cel_device_view_free(v);
    cel_program_free(p);
}

static void cel_fixture_cases(void)
{
    FILE *f = fopen(test_fixture_path("fixtures/cel/cases.txt"), "r");
    char line[4096], got[2048];
    int lineno = 0, ran = 0;

    CHECK(f != NULL);
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        char *arrow, *want, *expr = line;
        bool new_env = false;
        lineno++;
        line[strcspn(line, "\n")] = 0;
        if (!line[0] || line[0] == '#')
            continue;
        if (!strncmp(expr, "[new] ", 6)) {
            new_env = true;
            expr += 6;
        }
        arrow = strstr(expr, " => ");
        if (!arrow) {
            test_fail(__FILE__, __LINE__, "cases.txt:%d: no \" => \"", lineno);
            continue;
        }
        *arrow = 0;
        want = arrow + 4;
        answer(expr, new_env, got, sizeof(got));
        if (strcmp(got, want))
            test_fail(__FILE__, __LINE__, "cases.txt:%d: %s: got \"%s\", want \"%s\"", lineno, expr,
                      got, want);
        ran++;
    }
    fclose(f);
    CHECK(ran > 100);
}

static void cel_compile_error_location(void)
{
    struct cel_program *p;
    struct cel_compile_error e;

    CHECK_INT_EQ(cel_compile("device.driver ==\n  nope", 23, NULL, &p, &e), -EINVAL);
    CHECK_INT_EQ(e.line, 2);
    CHECK_INT_EQ(e.column, 3);
    CHECK_STR_EQ(e.detail, "compilation failed: ERROR: <input>:2:3: undeclared reference to "
                           "'nope' (in container '')\n |   nope\n | ..^");
    cel_compile_error_release(&e);
    CHECK_INT_EQ(cel_compile("1 + 1", 5, NULL, &p, &e), -EINVAL);
    CHECK_STR_EQ(e.detail, "must evaluate to bool or the unknown type, not int");
    CHECK_INT_EQ(e.line, 0);
    cel_compile_error_release(&e);
}

static void cel_bad_version_fails_every_evaluation(void)
{
    struct cel_device_attr a = {"v", 1, CEL_ATTR_VERSION, 0, false, "1.2", 3};
    struct cel_device d = {"x.com", 5, -1, &a, 1, NULL, 0};
    struct cel_device_view *v;
    struct cel_program *p;
    struct cel_scratch *s = cel_scratch_new();
    struct cel_result r;
    struct err e = {0};

    CHECK_INT_EQ(cel_device_prepare(&d, &v, &e), 0);
    CHECK_INT_EQ(cel_compile("true", 4, NULL, &p, NULL), 0);
    CHECK_INT_EQ(cel_eval(p, v, s, &r), 0);
    CHECK(r.error != NULL);
    if (r.error)
        CHECK_STR_EQ(r.error,
                     "attribute v: parse semantic version: No Major.Minor.Patch elements found");
    cel_program_free(p);
    cel_device_view_free(v);
    cel_scratch_free(s);
}

static void cel_capacity_canonicalized(void)
{
    /* 1.5Gi arrives from the API server as 1536Mi: an int64 amount asInteger() accepts */
    struct cel_device_capacity c = {"m", 1, "1.5Gi", 5};
    struct cel_device d = {"x.com", 5, -1, NULL, 0, &c, 1};
    struct cel_device_view *v;
    struct cel_program *p;
    struct cel_scratch *s = cel_scratch_new();
    struct cel_result r;
    struct err e = {0};
    const char *x = "device.capacity['x.com'].m.asInteger() == 1610612736";

    CHECK_INT_EQ(cel_device_prepare(&d, &v, &e), 0);
    CHECK_INT_EQ(cel_compile(x, strlen(x), NULL, &p, NULL), 0);
    CHECK_INT_EQ(cel_eval(p, v, s, &r), 0);
    CHECK(r.error == NULL && r.match);
    cel_program_free(p);
    cel_device_view_free(v);
    c.quantity = "12x";
    c.quantity_len = 3;
    CHECK_INT_EQ(cel_device_prepare(&d, &v, &e), -EINVAL);
    cel_scratch_free(s);
}

static void cel_cost_limit(void)
{
    struct cel_compile_opts o = {CEL_ENV_STORED, true, 10};
    const char *x = "[1, 2, 3, 4, 5, 6, 7, 8].all(i, i > 0)";
    struct cel_program *p;
    struct cel_scratch *s = cel_scratch_new();
    struct cel_device_view *v;
    struct cel_device d = {"", 0, -1, NULL, 0, NULL, 0};
    struct cel_result r;
    struct err e = {0};

    CHECK_INT_EQ(cel_compile(x, strlen(x), &o, &p, NULL), 0);
    CHECK_INT_EQ(cel_device_prepare(&d, &v, &e), 0);
    CHECK_INT_EQ(cel_eval(p, v, s, &r), 0);
    CHECK(r.error != NULL);
    if (r.error)
        CHECK_STR_EQ(r.error, "operation cancelled: actual cost limit exceeded");
    cel_program_free(p);
    o.cost_limit_set = false;
    CHECK_INT_EQ(cel_compile(x, strlen(x), &o, &p, NULL), 0);
    CHECK_INT_EQ(cel_eval(p, v, s, &r), 0);
    CHECK(r.error == NULL && r.match);
    CHECK_INT_EQ(r.cost, 41); /* the least limit the real CEL passes it with */
    cel_program_free(p);
    cel_device_view_free(v);
    cel_scratch_free(s);
}

static void cel_new_selectors(void)
{
    struct cel_compile_opts o = {CEL_ENV_NEW, false, 0};
    const char *cheap = "device.driver == 'a'";
    const char *dear = "device.attributes.all(d, device.attributes[d].all(a, "
                       "device.attributes[d][a] == device.attributes[d][a] && "
                       "device.attributes.all(e, device.attributes[e].all(b, true))))";
    struct cel_program *p;
    struct cel_compile_error e;

    CHECK_INT_EQ(cel_compile(cheap, strlen(cheap), &o, &p, &e), 0);
    CHECK_INT_EQ(cel_program_max_cost(p), 3);
    cel_program_free(p);
    CHECK_INT_EQ(cel_compile(dear, strlen(dear), &o, &p, &e), -EINVAL);
    CHECK_STR_EQ(e.detail, "Forbidden: too complex, exceeds cost limit");
    CHECK(e.has_max_cost && e.max_cost > CEL_SELECTOR_MAX_COST);
    cel_compile_error_release(&e);
    CHECK(cel_selector_length_ok(10240));
    CHECK(!cel_selector_length_ok(10241));
}

/* a typical selector allocates nothing per evaluation once the scratch has warmed up */
static void cel_no_allocation_per_evaluation(void)
{
    const char *x = "device.attributes['gpu.example.com'].model == 'A100' && "
                    "device.capacity['gpu.example.com'].memory.compareTo(quantity('40Gi')) >= 0 "
                    "&& device.attributes['gpu.example.com'].exists(k, k == 'ecc')";
    struct cel_program *p;
    struct cel_device_view *v;
    struct cel_scratch *s = cel_scratch_new();
    struct cel_result r;
    struct err e = {0};
    size_t before;

    CHECK_INT_EQ(cel_compile(x, strlen(x), NULL, &p, NULL), 0);
    CHECK_INT_EQ(cel_device_prepare(&test_device, &v, &e), 0);
    for (int i = 0; i < 10; i++)
        cel_eval(p, v, s, &r);
    before = mallinfo2().uordblks;
    for (int i = 0; i < 1000; i++) {
        cel_eval(p, v, s, &r);
        if (r.error || !r.match)
            break;
    }
    CHECK(r.error == NULL && r.match);
    CHECK_INT_EQ(mallinfo2().uordblks, before);
    cel_program_free(p);
    cel_device_view_free(v);
    cel_scratch_free(s);
}

struct thread_arg {
    const struct cel_program *p;
    const struct cel_device_view *v;
    int matched;
};

static void *eval_thread(void *arg)
{
    struct thread_arg *t = arg;
    struct cel_scratch *s = cel_scratch_new();
    struct cel_result r;
    for (int i = 0; i < 2000; i++)
        if (s && cel_eval(t->p, t->v, s, &r) == 0 && r.match && !r.error)
            t->matched++;
    cel_scratch_free(s);
    return NULL;
}

static void cel_threads_share_programs(void)
{
    const char *x = "device.attributes['gpu.example.com'].driverVersion.isGreaterThan("
                    "semver('500.0.0')) && device.attributes['gpu.example.com'].model."
                    "matches('^A[0-9]+$')";
    struct cel_program *p;
    struct cel_device_view *v;
    struct err e = {0};
    pthread_t th[4];
    struct thread_arg a[4];

    CHECK_INT_EQ(cel_compile(x, strlen(x), NULL, &p, NULL), 0);
    CHECK_INT_EQ(cel_device_prepare(&test_device, &v, &e), 0);
    for (int i = 0; i < 4; i++) {
        a[i] = (struct thread_arg){p, v, 0};
        pthread_create(&th[i], NULL, eval_thread, &a[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK_INT_EQ(a[i].matched, 2000);
    }
    cel_program_free(p);
    cel_device_view_free(v);
}

static const struct test_case cases[] = {
    {"fixture cases judged by the real CEL", cel_fixture_cases},
    {"compile errors carry location and caret", cel_compile_error_location},
    {"a bad version fails every evaluation", cel_bad_version_fails_every_evaluation},
    {"capacities are canonicalized", cel_capacity_canonicalized},
    {"runtime cost limit", cel_cost_limit},
    {"new selectors: cost estimate and length", cel_new_selectors},
    {"no allocation per evaluation", cel_no_allocation_per_evaluation},
    {"threads share programs and views", cel_threads_share_programs},
};
TEST_SUITE(cel, cases)
