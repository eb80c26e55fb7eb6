/* cmd_render.c - `gpusched render`: print the objects manifests stand for once their
 * controllers have run, as one v1 List (JSON or YAML): every Deployment, ReplicaSet,
 * StatefulSet, Job and DaemonSet replaced in place by the pods `simulate` schedules, with the
 * same names. The kube-scheduler oracle reads this, so workloads are expanded in one place. */
#include "gpusched/cmd_render-int.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpusched/cmd_common-int.h"
#include "gpusched/kubectl-int.h"
#include "gpusched/output-int.h"
#include "manifest/render.h"

static const char render_usage[] =
    "Print the objects manifest files expand to, as a v1 List: the pods that Deployments,\n"
    "ReplicaSets, StatefulSets, Jobs and DaemonSets would create (the names, labels and\n"
    "ownerReferences their controllers give them, priorities resolved; a Deployment's\n"
    "ReplicaSet too), in input order, each workload in place of its pods; every other object\n"
    "as read. These are the pods `gpusched simulate` schedules.\n"
    "\n"
    "Examples:\n"
    "  # The seed's workloads as the pods they create\n"
    "  gpusched render -f examples/seed/\n"
    "\n"
    "  # As JSON, for kubectl or the kube-scheduler oracle\n"
    "  gpusched render -f cluster.yaml -o json\n"
    "\n"
    "Usage:\n"
    "  gpusched render -f FILE... [flags]\n"
    "\n";

/* ------------------------------------------------------------------ YAML output */

static bool yaml_keyword(const char *s)
{
    static const char *const words[] = {"y",   "n",    "yes",   "no",  "on",
                                        "off", "true", "false", "null"};
    size_t i, k;

    for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        for (k = 0; s[k] && words[i][k] && tolower((unsigned char)s[k]) == words[i][k]; k++)
            ;
        if (!s[k] && !words[i][k])
            return true;
    }
    return false;
}

/* a string that reads back as the same string without quotes */
static bool yaml_plain(const char *s)
{
    const char *p;

    if (!*s || !(isalpha((unsigned char)*s) || *s == '_' || *s == '/' || *s == '.'))
        return false;
    for (p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("_./-", *p))
            return false;
    return !yaml_keyword(s);
}

static void yaml_string(FILE *f, const char *s)
{
    if (yaml_plain(s))
        fputs(s, f);
    else
        out_json_string(f, s); /* a JSON string is a YAML double-quoted scalar */
}

static void yaml_scalar(FILE *f, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        yaml_string(f, json_string_value(v));
        break;
    case JSON_INTEGER:
        fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL: {
        char *s = json_dumps(v, JSON_ENCODE_ANY);
        fputs(s ? s : "0", f);
        free(s);
        break;
    }
    case JSON_TRUE:
        fputs("true", f);
        break;
    case JSON_FALSE:
        fputs("false", f);
        break;
    default:
        fputs("null", f);
        break;
    }
}

static bool yaml_empty_or_scalar(const json_t *v)
{
    return json_is_object(v) ? !json_object_size(v) : json_is_array(v) ? !json_array_size(v) : true;
}

static void yaml_value(FILE *f, const json_t *v, int indent);

static void yaml_inline(FILE *f, const json_t *v)
{
    if (json_is_object(v))
        fputs("{}", f);
    else if (json_is_array(v))
        fputs("[]", f);
    else
        yaml_scalar(f, v);
}

static void yaml_block(FILE *f, const json_t *v, int indent, bool first_inline);

/* one element of a sequence at indent, its "- " included */
static void yaml_item(FILE *f, const json_t *e, int indent)
{
    fputs("- ", f);
    if (yaml_empty_or_scalar(e)) {
        yaml_inline(f, e);
        putc('\n', f);
    } else if (json_is_object(e)) {
        yaml_block(f, e, indent + 2, true);
    } else {
        putc('\n', f);
        yaml_block(f, e, indent + 2, false);
    }
}

/* v (a non-empty mapping or sequence) in block style at indent; the first line continues the
 * current one when first_inline (after "- ") */
static void yaml_block(FILE *f, const json_t *v, int indent, bool first_inline)
{
    const char *k;
    const json_t *e;
    size_t i;
    bool first = true;

    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, k, e)
        {
            if (!(first && first_inline))
                fprintf(f, "%*s", indent, "");
            first = false;
            yaml_string(f, k);
            putc(':', f);
            yaml_value(f, e, indent + 2);
        }
        return;
    }
    json_array_foreach(v, i, e)
    {
        if (!(first && first_inline))
            fprintf(f, "%*s", indent, "");
        first = false;
        yaml_item(f, e, indent);
    }
}

/* after "key:": a scalar on the same line, a block below (sequences at the key's indent, as
 * kubectl writes them) */
static void yaml_value(FILE *f, const json_t *v, int indent)
{
    if (yaml_empty_or_scalar(v)) {
        putc(' ', f);
        yaml_inline(f, v);
        putc('\n', f);
        return;
    }
    putc('\n', f);
    yaml_block(f, v, json_is_array(v) ? indent - 2 : indent, false);
}

/* ------------------------------------------------------------------ the command */

/* The List is written one item at a time, as manifest_render_each makes them: its text is what
 * out_json_print (compact) and yaml_block would print for the whole List. */
struct render_out {
    bool json;
    size_t n;
};

static int render_item(void *ctx, json_t *item)
{
    struct render_out *o = ctx;

    if (o->json) {
        if (o->n)
            putchar(',');
        json_dumpf(item, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
    } else {
        if (!o->n)
            putchar('\n');
        yaml_item(stdout, item, 0);
    }
    o->n++;
    json_decref(item);
    return ferror(stdout) ? -EIO : 0;
}

int gpusched_cmd_render(int argc, char **argv)
{
    struct flag_list files = {0}, pos = {0};
    const char *output = NULL, *namespace_ = NULL;
    const struct flag table[] = {
        {"filename", 'f', FLAG_LIST, &files, NULL, NULL, "FILE",
         "manifest file, directory or - (stdin); repeatable, or a,b"},
        {"output", 'o', FLAG_STRING, &output, NULL, NULL, "FORMAT", "yaml (default), json or name"},
        {"namespace", 'n', FLAG_STRING, &namespace_, NULL, NULL, "NS",
         "namespace of the objects that name none (default \"default\")"},
        GPUSCHED_CMD_STRICT_FLAG,
        FLAG_GROUP_OF(out_table_flags),
        FLAG_END,
    };
    struct manifest_input in;
    struct render_out o = {false, 0};
    struct err err;
    bool help, loaded = false;
    int rc;

    err_clear(&err);
    rc = gpusched_kubectl_begin("render", render_usage, table, &output, 0, argc, argv, &pos, &help);
    if (rc || help)
        goto out;
    if (!files.n) {
        rc = gpusched_cmd_usage_error("render", "must specify -f FILE");
        goto out;
    }
    if (output && strcmp(output, "yaml") && strcmp(output, "json")) {
        rc = gpusched_cmd_usage_error("render",
                                      "unable to match a printer suitable for the output format "
                                      "\"%s\", allowed formats are: json,yaml",
                                      output);
        goto out;
    }
    o.json = output && !strcmp(output, "json");
    rc = gpusched_cmd_load_objects(&files, namespace_, &in);
    if (rc)
        goto out;
    loaded = true;
    fputs(o.json ? "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":["
                 : "apiVersion: v1\nkind: List\nitems:",
          stdout);
    rc = manifest_render_each(&in, render_item, &o, &err);
    if (rc == -EIO || (!rc && ferror(stdout))) {
        fprintf(stderr, "gpusched: cannot write the output: %s\n", strerror(EIO));
        rc = 1;
        goto out;
    }
    if (rc) {
        gpusched_cmd_print_err(&err);
        rc = 1;
        goto out;
    }
    fputs(o.json ? "]}\n" : o.n ? "" : " []\n", stdout);
    rc = gpusched_cmd_flush(0);
out:
    if (loaded)
        manifest_input_release(&in);
    flag_list_release(&files);
    flag_list_release(&pos);
    return rc;
}
