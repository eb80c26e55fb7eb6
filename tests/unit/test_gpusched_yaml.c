/* test_gpusched_yaml.c - -o yaml: JSON documents laid out as kubectl -o yaml lays them out,
 * strings quoted exactly when a YAML reader would otherwise take them for something else. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpusched/kubectl.h"
#include "test.h"

static char *yaml_of(const char *json)
{
    json_t *v = json_loads(json, JSON_DECODE_ANY, NULL);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    if (!v || !f) {
        if (f)
            fclose(f);
        json_decref(v);
        free(buf);
        return NULL;
    }
    if (gpusched_yaml_print(v, f))
        test_fail(__FILE__, __LINE__, "gpusched_yaml_print failed");
    fclose(f);
    json_decref(v);
    return buf;
}

struct yaml_case {
    const char *json, *yaml;
};

static void yaml_layout(void)
{
    static const struct yaml_case cases[] = {
        {"{\"a\":1,\"b\":\"x\"}", "a: 1\nb: x\n"},
        /* sequences at their key's indentation; mappings in sequences after "- " */
        {"{\"items\":[{\"pod\":\"ns/p\",\"node\":\"n1\"},{\"pod\":\"ns/q\"}],\"e\":[]}",
         "items:\n- pod: ns/p\n  node: n1\n- pod: ns/q\ne: []\n"},
        {"{\"m\":{\"k\":{\"z\":true}},\"o\":{}}", "m:\n  k:\n    z: true\no: {}\n"},
        {"[[1,2],[\"a\"]]", "- - 1\n  - 2\n- - a\n"},
        {"{\"r\":[\"x\",\"z\",\"y\"]}", "r:\n- x\n- z\n- \"y\"\n"},
        {"null", "null\n"},
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *got = yaml_of(cases[i].json);
        if (!got || strcmp(got, cases[i].yaml))
            test_fail(__FILE__, __LINE__, "case %zu: got \"%s\", want \"%s\"", i,
                      got ? got : "(null)", cases[i].yaml);
        free(got);
    }
}

static void yaml_quoting(void)
{
    static const struct yaml_case cases[] = {
        {"{\"s\":\"plain text (ok)\"}", "s: plain text (ok)\n"},
        {"{\"s\":\"\"}", "s: \"\"\n"},
        {"{\"s\":\"true\"}", "s: \"true\"\n"},
        {"{\"s\":\"no\"}", "s: \"no\"\n"},
        {"{\"s\":\"10\"}", "s: \"10\"\n"},
        {"{\"s\":\"1.5e3\"}", "s: \"1.5e3\"\n"},
        {"{\"s\":\"a: b\"}", "s: \"a: b\"\n"},
        {"{\"s\":\"- x\"}", "s: \"- x\"\n"},
        {"{\"s\":\"{k: v}\"}", "s: \"{k: v}\"\n"},
        {"{\"s\":\"a #b\"}", "s: \"a #b\"\n"},
        {"{\"s\":\"line\\nbreak\"}", "s: \"line\\nbreak\"\n"},
        {"{\"s\":\"0/6 nodes are available: 3 Insufficient nvidia.com/gpu.\"}",
         "s: \"0/6 nodes are available: 3 Insufficient nvidia.com/gpu.\"\n"},
        {"{\"s\":\"node(s) didn't match\"}", "s: node(s) didn't match\n"},
        {"{\"k: x\":1}", "\"k: x\": 1\n"},
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *got = yaml_of(cases[i].json);
        if (!got || strcmp(got, cases[i].yaml))
            test_fail(__FILE__, __LINE__, "case %zu: got \"%s\", want \"%s\"", i,
                      got ? got : "(null)", cases[i].yaml);
        free(got);
    }
}

static const struct test_case cases[] = {
    {"layout as kubectl -o yaml", yaml_layout},
    {"strings quoted only when they must be", yaml_quoting},
};

TEST_SUITE(gpusched_yaml, cases)
