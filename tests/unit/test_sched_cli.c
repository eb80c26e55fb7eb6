/* test_sched_cli.c - the gpusched command-line plumbing: kubectl-like table layout, -o format
 * names, cobra-style flag parsing and the scheduling queue order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpusched/cmd_common.h"
#include "gpusched/output.h"
#include "kube/object.h"
#include "test.h"

/* Print t into a string (caller frees). */
static char *table_text(const struct out_table *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    if (!f)
        return NULL;
    out_table_print(t, f);
    fclose(f);
    return buf;
}

static void table_pads_like_kubectl(void)
{
    static const char *const h[] = {"NAME", "STATUS", "ROLES"};
    static const char *const r1[] = {"cn-beijing.i-2ze2dy2h9w97v65uuaft", "Ready", "master"};
    static const char *const r2[] = {"n1", "Ready,SchedulingDisabled", NULL};
    struct out_table t;
    char *s;

    CHECK_INT_EQ(out_table_init(&t, 3, h), 0);
    CHECK_INT_EQ(out_table_add_row(&t, r1), 0);
    CHECK_INT_EQ(out_table_add_row(&t, r2), 0);
    s = table_text(&t);
    /* NAME: 33 + 3; STATUS: 24 + 3; the last column is not padded; NULL prints <none> */
    CHECK_STR_EQ(s, "NAME                                STATUS                     ROLES\n"
                    "cn-beijing.i-2ze2dy2h9w97v65uuaft   Ready                      master\n"
                    "n1                                  Ready,SchedulingDisabled   <none>\n");
    free(s);
    out_table_release(&t);
    out_table_release(&t); /* released twice is fine */
}

static void table_min_width_is_ten(void)
{
    static const char *const h[] = {"A", "B"};
    static const char *const r[] = {"x", "y"};
    struct out_table t;
    char *s;

    CHECK_INT_EQ(out_table_init(&t, 2, h), 0);
    CHECK_INT_EQ(out_table_add_row(&t, r), 0);
    s = table_text(&t);
    CHECK_STR_EQ(s, "A         B\nx         y\n");
    free(s);
    out_table_release(&t);
}

static void table_counts_utf8_characters(void)
{
    static const char *const h[] = {"NAME", "V"};
    static const char *const r[] = {"\xc3\xa9t\xc3\xa9-node-\xe2\x9c\x93", "1"};
    struct out_table t;
    char *s;

    CHECK_INT_EQ(out_text_width("\xc3\xa9t\xc3\xa9"), 3);
    CHECK_INT_EQ(out_table_init(&t, 2, h), 0);
    CHECK_INT_EQ(out_table_add_row(&t, r), 0);
    s = table_text(&t);
    /* 10 characters + 3 */
    CHECK_STR_EQ(s, "NAME         V\n\xc3\xa9t\xc3\xa9-node-\xe2\x9c\x93   1\n");
    free(s);
    out_table_release(&t);
}

static void table_trailing_empty_cells_are_not_padded(void)
{
    static const char *const h[] = {"NODE", "FILTER", "REASON"};
    static const char *const r1[] = {"n1", "NodePorts", "node(s) didn't have free ports"};
    static const char *const r2[] = {"n2", "passed", ""};
    struct out_table t;
    char *s;

    CHECK_INT_EQ(out_table_init(&t, 3, h), 0);
    CHECK_INT_EQ(out_table_add_row(&t, r1), 0);
    CHECK_INT_EQ(out_table_add_row(&t, r2), 0);
    s = table_text(&t);
    CHECK_STR_EQ(s, "NODE      FILTER      REASON\n"
                    "n1        NodePorts   node(s) didn't have free ports\n"
                    "n2        passed\n");
    free(s);
    out_table_release(&t);
}

static void table_rejects_bad_column_counts(void)
{
    static const char *const h[] = {"A"};
    struct out_table t;

    CHECK(out_table_init(&t, 0, h) < 0);
    CHECK(out_table_init(&t, OUT_TABLE_MAX_COLS + 1, h) < 0);
}

static void format_names(void)
{
    const unsigned all = 1u << OUT_TABLE | 1u << OUT_WIDE | 1u << OUT_JSON | 1u << OUT_NAME;
    enum out_format f = OUT_NAME;
    struct err err;

    CHECK_INT_EQ(out_format_parse(NULL, all, &f, NULL), 0);
    CHECK_INT_EQ(f, OUT_TABLE);
    CHECK_INT_EQ(out_format_parse("wide", all, &f, NULL), 0);
    CHECK_INT_EQ(f, OUT_WIDE);
    CHECK_INT_EQ(out_format_parse("json", all, &f, NULL), 0);
    CHECK_INT_EQ(f, OUT_JSON);
    CHECK_INT_EQ(out_format_parse("name", all, &f, NULL), 0);
    CHECK_INT_EQ(f, OUT_NAME);
    err_clear(&err);
    /* name and yaml are listed wherever json is: kubectl.c makes them from -o json */
    CHECK(out_format_parse("name", 1u << OUT_TABLE | 1u << OUT_JSON, &f, &err) < 0);
    CHECK_STR_EQ(err.msg, "unable to match a printer suitable for the output format \"name\", "
                          "allowed formats are: json,name,yaml");
    CHECK(out_format_parse("xml", all, &f, &err) < 0);
    CHECK_STR_EQ(err.msg, "unable to match a printer suitable for the output format \"xml\", "
                          "allowed formats are: json,name,wide,yaml");
    CHECK(out_format_parse("yaml", 1u << OUT_TABLE, &f, &err) < 0);
    CHECK_STR_EQ(err.msg, "unable to match a printer suitable for the output format \"yaml\", "
                          "allowed formats are: ");
}

static void json_is_compact_and_ordered(void)
{
    json_t *o = json_pack("{s:[],s:[{s:s,s:s}]}", "scheduled", "unschedulable", "pod", "a/b",
                          "message", "0/1 nodes are available: 1 Too many pods.");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    CHECK(o && f);
    if (!o || !f)
        return;
    CHECK_INT_EQ(out_json_print(o, 0, f), 0);
    fclose(f);
    CHECK_STR_EQ(buf, "{\"scheduled\":[],\"unschedulable\":[{\"pod\":\"a/b\",\"message\":"
                      "\"0/1 nodes are available: 1 Too many pods.\"}]}\n");
    free(buf);
    json_decref(o);
}

struct flags_run {
    struct flag_list files, pos, cols;
    const char *output;
    bool wide, help;
    int rc;
};

static void flags_parse(struct flags_run *r, int argc, char **argv)
{
    const struct flag flags[] = {
        {"filename", 'f', FLAG_LIST, &r->files, NULL, NULL, NULL, NULL},
        {"label-columns", 'L', FLAG_LIST, &r->cols, NULL, NULL, NULL, NULL},
        {"output", 'o', FLAG_STRING, &r->output, NULL, NULL, NULL, NULL},
        {"show-labels", 0, FLAG_BOOL, &r->wide, NULL, NULL, NULL, NULL},
        FLAG_END,
    };

    memset(r, 0, sizeof(*r));
    r->rc = gpusched_cmd_flags_parse("test", flags, argc, argv, &r->pos, &r->help);
}

static void flags_release(struct flags_run *r)
{
    flag_list_release(&r->files);
    flag_list_release(&r->pos);
    flag_list_release(&r->cols);
}

static void flags_every_spelling(void)
{
    char *argv[] = {"nodes",
                    "-f",
                    "a.yaml",
                    "--filename=b.yaml",
                    "-fc.yaml",
                    "-f=d.yaml",
                    "--filename",
                    "e.yaml,f.yaml",
                    "POD",
                    "-ojson",
                    "--show-labels",
                    "-L",
                    "x/y,z",
                    "--",
                    "-f"};
    struct flags_run r;

    flags_parse(&r, (int)(sizeof(argv) / sizeof(argv[0])), argv);
    CHECK_INT_EQ(r.rc, 0);
    CHECK_INT_EQ(r.files.n, 6);
    if (r.files.n == 6) {
        CHECK_STR_EQ(r.files.v[0], "a.yaml");
        CHECK_STR_EQ(r.files.v[1], "b.yaml");
        CHECK_STR_EQ(r.files.v[2], "c.yaml");
        CHECK_STR_EQ(r.files.v[3], "d.yaml");
        CHECK_STR_EQ(r.files.v[4], "e.yaml");
        CHECK_STR_EQ(r.files.v[5], "f.yaml");
    }
    CHECK_STR_EQ(r.output, "json");
    CHECK(r.wide);
    CHECK_INT_EQ(r.cols.n, 2);
    CHECK_INT_EQ(r.pos.n, 2); /* POD, and -f after "--" */
    if (r.pos.n == 2) {
        CHECK_STR_EQ(r.pos.v[0], "POD");
        CHECK_STR_EQ(r.pos.v[1], "-f");
    }
    CHECK(!r.help);
    flags_release(&r);
}

static void flags_errors_are_usage_errors(void)
{
    char *unknown[] = {"nodes", "--bogus"};
    char *unknown_short[] = {"nodes", "-q"};
    char *missing[] = {"nodes", "-o"};
    char *badbool[] = {"nodes", "--show-labels=maybe"};
    char *help[] = {"nodes", "-f", "x", "--help", "--bogus"};
    struct flags_run r;

    flags_parse(&r, 2, unknown);
    CHECK_INT_EQ(r.rc, 2);
    flags_release(&r);
    flags_parse(&r, 2, unknown_short);
    CHECK_INT_EQ(r.rc, 2);
    flags_release(&r);
    flags_parse(&r, 2, missing);
    CHECK_INT_EQ(r.rc, 2);
    flags_release(&r);
    flags_parse(&r, 2, badbool);
    CHECK_INT_EQ(r.rc, 2);
    flags_release(&r);
    flags_parse(&r, 5, help);
    CHECK_INT_EQ(r.rc, 0);
    CHECK(r.help);
    flags_release(&r);
}

static void queue_order_is_priority_then_input(void)
{
    struct kube_pod p[6];
    const struct kube_pod *pp[6];
    static const int32_t prio[6] = {0, 100, 0, -5, 100, 2000000000};
    size_t order[6], i;

    memset(p, 0, sizeof(p));
    for (i = 0; i < 6; i++) {
        p[i].priority = prio[i];
        pp[i] = &p[i];
    }
    gpusched_cmd_queue_order(pp, 6, order);
    CHECK_INT_EQ(order[0], 5);
    CHECK_INT_EQ(order[1], 1);
    CHECK_INT_EQ(order[2], 4);
    CHECK_INT_EQ(order[3], 0);
    CHECK_INT_EQ(order[4], 2);
    CHECK_INT_EQ(order[5], 3);
}

static const struct test_case sched_cli_cases[] = {
    {"table pads like kubectl", table_pads_like_kubectl},
    {"table min width is ten", table_min_width_is_ten},
    {"table counts utf8 characters", table_counts_utf8_characters},
    {"table trailing empty cells are not padded", table_trailing_empty_cells_are_not_padded},
    {"table rejects bad column counts", table_rejects_bad_column_counts},
    {"output format names", format_names},
    {"json is compact and ordered", json_is_compact_and_ordered},
    {"flags every spelling", flags_every_spelling},
    {"flags errors are usage errors", flags_errors_are_usage_errors},
    {"queue order is priority then input", queue_order_is_priority_then_input},
};
TEST_SUITE(sched_cli, sched_cli_cases)
