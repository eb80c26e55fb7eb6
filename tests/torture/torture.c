/* torture.c - allocation-failure torture test of the parsers, in the spirit of curl's: each
 * parse is run again and again, the Nth allocation failing in run N (N = 1, 2, ... until a
 * run makes fewer than N allocations). Every run must end cleanly: success, or a negative
 * code with a one-line message; never a crash; and every allocation it made through our code
 * freed again (counted here; under ASan, LeakSanitizer checks the rest at exit).
 *
 * The binary is linked with -Wl,--wrap for malloc, calloc, realloc, free, strdup and strndup,
 * so every call from our objects goes through the counters below; jansson's allocations are
 * routed here with json_set_alloc_funcs. libyaml's own allocations are not (it is a shared
 * library): a failure inside it is not injected, but what it hands back is still checked.
 *
 *   torture [FILTER]    prints "ok torture/NAME" or "FAIL torture/NAME: ..." per parser (and
 *                       on stderr how many allocations each made); ends with
 *                       "N passed, N failed" */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cel/cel.h"
#include "kube/http1.h"
#include "kube/kubeconfig.h"
#include "kube/yaml.h"
#include "manifest/manifest.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static struct {
    bool on;          /* counting and failing */
    unsigned long n;  /* allocations so far in this run */
    unsigned long at; /* the one to fail (1-based), 0: none */
    bool failed;      /* it was reached */
    long live;        /* blocks allocated here and not yet freed */
} t;

/* torture_fail says whether this allocation is the one to fail, and counts it */
static bool torture_fail(void)
{
    if (!t.on)
        return false;
    if (++t.n == t.at) {
        t.failed = true;
        return true;
    }
    return false;
}

static void *torture_count(void *p)
{
    if (p && t.on)
        t.live++;
    return p;
}

void *__wrap_malloc(size_t n)
{
    return torture_fail() ? NULL : torture_count(__real_malloc(n));
}

void *__wrap_calloc(size_t n, size_t m)
{
    return torture_fail() ? NULL : torture_count(__real_calloc(n, m));
}

void *__wrap_realloc(void *p, size_t n)
{
    void *q;

    if (torture_fail())
        return NULL;
    q = __real_realloc(p, n);
    if (q && !p && t.on)
        t.live++;
    return q;
}

void __wrap_free(void *p)
{
    if (p && t.on)
        t.live--;
    __real_free(p);
}

char *__wrap_strdup(const char *s)
{
    return torture_fail() ? NULL : torture_count(__real_strdup(s));
}

char *__wrap_strndup(const char *s, size_t n)
{
    return torture_fail() ? NULL : torture_count(__real_strndup(s, n));
}

static void *json_malloc(size_t n)
{
    return __wrap_malloc(n);
}

static void json_free(void *p)
{
    __wrap_free(p);
}

/* ---- the parsers ------------------------------------------------------------------------ */

static const char *srcdir(void)
{
    const char *d = getenv("GPULABEL_SRCDIR");

    return d && d[0] ? d : ".";
}

static struct buf input; /* the current case's input, read before counting starts */

static int run_yaml(struct err *err)
{
    json_t *docs = NULL;
    struct kube_lines *lines = NULL;
    int rc = kube_yaml_load(input.data, input.len, "in.yaml", &docs, &lines, err);

    json_decref(docs);
    kube_lines_free(lines);
    return rc;
}

static int run_manifest(struct err *err)
{
    struct manifest_input_opts o = {.max_pods = 1000, .max_nodes = 100};
    struct manifest_input in;
    int rc;

    manifest_input_init(&in, &o);
    rc = manifest_input_load_buffer(&in, "in.yaml", input.data, input.len, err);
    if (!rc)
        rc = manifest_input_finish(&in, err);
    manifest_input_release(&in);
    return rc;
}

static int run_kubeconfig(struct err *err)
{
    struct kube_config c;
    int rc = kube_config_parse(input.data, input.len, "/nonexistent-torture/config", NULL, &c, err);

    if (!rc)
        kube_config_release(&c);
    return rc;
}

/* the HTTP/1.1 parser allocates nothing; it is run to show that a failing malloc cannot
 * reach it (a run of it makes 0 allocations) */
static int run_http1(struct err *err)
{
    struct http1_answer a;
    const char *d;
    size_t off = 0, used, len;
    enum http1_event ev;

    http1_answer_init(&a);
    do {
        ev = http1_step(&a, input.data + off, input.len - off, &used, &d, &len);
        off += used;
    } while (ev != HTTP1_NEED && ev != HTTP1_ERROR && !(ev == HTTP1_DONE && !a.keep));
    if (ev == HTTP1_ERROR)
        return err_set(err, -EPROTO, "%s", a.why);
    return 0;
}

static const char KUBECONFIG[] =
    "apiVersion: v1\nkind: Config\n"
    "clusters:\n- name: c1\n  cluster:\n    server: https://10.0.0.1:6443/\n"
    "    insecure-skip-tls-verify: true\n"
    "- name: c2\n  cluster: {server: 'http://127.0.0.1:8080', proxy-url: 'http://p:3128'}\n"
    "users:\n- name: u1\n  user: {token: abc.def}\n- name: u2\n  user: {}\n"
    "contexts:\n- name: x1\n  context: {cluster: c1, user: u1, namespace: gpu}\n"
    "- name: x2\n  context: {cluster: c2, user: u2}\n"
    "current-context: x1\n";

static const char HTTP[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                           "5\r\nhello\r\n0\r\n\r\n";

/* a CEL selector compiled (stored and new environments: checker, planner, regexes, the cost
 * estimate) and evaluated against a device prepared for it */
static int run_cel(struct err *err)
{
    static const struct cel_device_attr attrs[] = {
        {"model", 5, CEL_ATTR_STRING, 0, false, "A100", 4},
        {"driverVersion", 13, CEL_ATTR_VERSION, 0, false, "535.104.5-rc.1", 14},
        {"example.com/ecc", 15, CEL_ATTR_BOOL, 0, true, NULL, 0},
    };
    static const struct cel_device_capacity caps[] = {{"memory", 6, "1.5Gi", 5}};
    static const struct cel_device dev = {"gpu.example.com", 15, 1, attrs, 3, caps, 1};
    struct cel_compile_opts opts = {CEL_ENV_STORED, false, 0};
    struct cel_program *p = NULL;
    struct cel_compile_error cerr;
    struct cel_device_view *v = NULL;
    struct cel_scratch *s = NULL;
    struct cel_result r;
    int rc = 0;

    for (int env = 0; env < 2 && !rc; env++) {
        opts.env = env ? CEL_ENV_NEW : CEL_ENV_STORED;
        cel_program_free(p);
        p = NULL;
        rc = cel_compile(input.data, input.len, &opts, &p, &cerr);
        if (rc) {
            const char *d = cerr.detail ? cerr.detail : "out of memory";
            err_set(err, rc, "%.*s", (int)strcspn(d, "\n"), d);
            cel_compile_error_release(&cerr);
        }
    }
    if (!rc)
        rc = cel_device_prepare(&dev, &v, err);
    if (!rc && !(s = cel_scratch_new()))
        rc = err_set(err, -ENOMEM, "out of memory");
    if (!rc && (rc = cel_eval(p, v, s, &r)) < 0)
        err_set(err, rc, "out of memory");
    else if (!rc && r.error && strstr(r.error, "out of memory"))
        rc = err_set(err, -ENOMEM, "%s", r.error);
    else if (!rc && (r.error || !r.match))
        rc = err_set(err, -EINVAL, "%s", r.error ? r.error : "no match");
    cel_scratch_free(s);
    cel_device_view_free(v);
    cel_program_free(p);
    return rc;
}

static const char CEL[] =
    "device.attributes['gpu.example.com'].model.matches('^A[0-9]+$') && "
    "device.attributes['gpu.example.com'].driverVersion.isGreaterThan(semver('500.0.0')) && "
    "device.capacity['gpu.example.com'].memory.compareTo(quantity('1Gi')) > 0 && "
    "device.attributes.exists(d, d.endsWith('example.com')) && "
    "cel.bind(e, device.attributes['example.com'], e.ecc) && "
    "['a', 'b'].exists(x, x + '1' == 'b1') && '%s-%d'.format(['x', 1]).size() == 3";

struct tcase {
    const char *name;
    const char *file; /* input under the source tree, or NULL: text */
    const char *text;
    int (*run)(struct err *err);
};

static const struct tcase cases[] = {
    {"yaml: the seed cluster (YAML, anchors, several documents)", "examples/seed/cluster.yaml",
     NULL, run_yaml},
    {"yaml: JSON input", "tests/fuzz/corpus/manifest/kubectl-list.json", NULL, run_yaml},
    {"manifest: the seed cluster decoded", "examples/seed/cluster.yaml", NULL, run_manifest},
    {"manifest: a Deployment's pods", "examples/seed/tf-notebook.yaml", NULL, run_manifest},
    {"manifest: a DaemonSet's pods", "tests/fuzz/corpus/manifest/daemonset.yaml", NULL,
     run_manifest},
    {"kubeconfig", NULL, KUBECONFIG, run_kubeconfig},
    {"http1: a chunked answer", NULL, HTTP, run_http1},
    {"cel: a selector compiled in both environments and evaluated", NULL, CEL, run_cel},
};

/* torture_case runs c with the Nth allocation failing for N = 1.. and returns a failure
 * description or NULL; *allocs is the count of a run where nothing failed. */
static const char *torture_case(const struct tcase *c, unsigned long *allocs)
{
    static char why[1200];
    struct err err;
    unsigned long n;
    int rc;

    /* a clean run first: it must succeed and free what it took */
    err_clear(&err);
    memset(&t, 0, sizeof(t));
    t.on = true;
    rc = c->run(&err);
    t.on = false;
    *allocs = t.n;
    if (rc) {
        snprintf(why, sizeof(why), "fails without a fault: %s", err.msg);
        return why;
    }
    if (t.live) {
        snprintf(why, sizeof(why), "clean run leaks %ld blocks", t.live);
        return why;
    }
    for (n = 1;; n++) {
        err_clear(&err);
        memset(&t, 0, sizeof(t));
        t.at = n;
        t.on = true;
        rc = c->run(&err);
        t.on = false;
        if (!t.failed)
            return NULL; /* the run needs fewer than n allocations: all have been tried */
        if (rc > 0 || (rc < 0 && (!err.msg[0] || strchr(err.msg, '\n')))) {
            snprintf(why, sizeof(why), "allocation %lu failing: rc %d, message \"%s\"", n, rc,
                     err.msg);
            return why;
        }
        if (t.live) {
            snprintf(why, sizeof(why), "allocation %lu failing: %ld blocks leak (rc %d: %s)", n,
                     t.live, rc, err.msg);
            return why;
        }
    }
}

int main(int argc, char **argv)
{
    size_t i;
    int passed = 0, failed = 0;

    json_set_alloc_funcs(json_malloc, json_free);
    {
        /* CEL's environments are built once per process: build them before counting */
        struct cel_program *p = NULL;
        if (cel_compile("true", 4, NULL, &p, NULL) == 0)
            cel_program_free(p);
    }
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct tcase *c = &cases[i];
        unsigned long allocs = 0;
        const char *why;

        char full[256];

        snprintf(full, sizeof(full), "torture/%s", c->name);
        if (argc > 1 && !strstr(full, argv[1]))
            continue;
        buf_init(&input, 0);
        if (c->file) {
            char path[4096];

            snprintf(path, sizeof(path), "%s/%s", srcdir(), c->file);
            if (buf_read_file(path, &input)) {
                printf("FAIL torture/%s: cannot read %s\n", c->name, path);
                failed++;
                continue;
            }
        } else if (buf_puts(&input, c->text)) {
            printf("FAIL torture/%s: out of memory\n", c->name);
            failed++;
            continue;
        }
        why = torture_case(c, &allocs);
        if (why) {
            printf("FAIL torture/%s: %s\n", c->name, why);
            failed++;
        } else {
            fprintf(stderr, "torture/%s: %lu allocations, each made to fail once\n", c->name,
                    allocs);
            printf("ok torture/%s\n", c->name);
            passed++;
        }
        buf_release(&input);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
