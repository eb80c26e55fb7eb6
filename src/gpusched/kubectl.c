/* kubectl.c - kubectl's conventions around the gpusched commands (kubectl.h, kubectl-int.h).
 *
 * -o yaml and -o name are made from a command's own -o json: once the command has parsed its
 * flags it hands its -o value to gpusched_kubectl_output, and writes into a memory file
 * standing in for standard output, which is then parsed and printed in the format asked for;
 * on failure what the command wrote goes out unchanged. --no-headers is a flag of the commands'
 * own tables (output.c's out_table_flags). */
#include "gpusched/kubectl.h"
#include "gpusched/kubectl-int.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/buf.h"
#include "gpusched/cmd_common.h"
#include "gpusched/cmd_common-int.h"
#include "gpusched/output.h"

#define KUBECTL_CAPTURE_MAX ((size_t)1 << 30)

/* ---- YAML ------------------------------------------------------------------------------ */

/* yaml_plain tells whether s can be written without quotes and read back as the same string. */
static bool yaml_plain(const char *s)
{
    static const char *const reserved[] = {"true", "false", "yes", "no",  "on",   "off",
                                           "null", "y",     "n",   "~",   "True", "False",
                                           "Yes",  "No",    "On",  "Off", "Null", "NULL",
                                           "TRUE", "FALSE", "YES", "NO",  "ON",   "OFF"};
    const char *p;
    size_t i;
    bool numeric = true, digit = false;

    if (!*s || strchr("-?:,[]{}#&*!|>'\"%@` ", s[0]) || s[strlen(s) - 1] == ' ')
        return false;
    for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
        if (!strcmp(s, reserved[i]))
            return false;
    for (p = s; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch < 0x20 || ch == 0x7f || ch == '#' || (ch == ':' && (p[1] == ' ' || !p[1])) ||
            (ch == ' ' && p[1] == '#'))
            return false;
        if (!strchr("0123456789.+-eE_xXoObB", ch))
            numeric = false;
        digit = digit || (ch >= '0' && ch <= '9');
    }
    /* anything that may read as a number (1, 1.5, 0x1f, 1e3, .5) is quoted */
    return !(numeric && digit);
}

static int yaml_scalar(const json_t *v, FILE *f)
{
    char *s;

    switch (json_typeof(v)) {
    case JSON_STRING:
        if (yaml_plain(json_string_value(v)))
            return fputs(json_string_value(v), f) < 0 ? -EIO : 0;
        /* a JSON string is a YAML double-quoted scalar */
        s = json_dumps(v, JSON_ENCODE_ANY);
        if (!s)
            return -ENOMEM;
        fputs(s, f);
        free(s);
        return 0;
    case JSON_INTEGER:
    case JSON_REAL:
    case JSON_TRUE:
    case JSON_FALSE:
        s = json_dumps(v, JSON_ENCODE_ANY);
        if (!s)
            return -ENOMEM;
        fputs(s, f);
        free(s);
        return 0;
    case JSON_NULL:
        fputs("null", f);
        return 0;
    default:
        return -EINVAL;
    }
}

static bool yaml_is_collection(const json_t *v)
{
    return (json_is_object(v) && json_object_size(v)) || (json_is_array(v) && json_array_size(v));
}

static void yaml_indent(FILE *f, int n)
{
    while (n-- > 0)
        fputc(' ', f);
}

/* yaml_node writes v at indentation ind; the cursor is already at the start of the value's
 * first line (after "key: ", "- " or at column ind). */
static int yaml_node(const json_t *v, int ind, bool first_inline, FILE *f)
{
    const char *k;
    json_t *x;
    size_t i;
    bool first = true;
    int rc = 0;

    if (json_is_object(v) && json_object_size(v)) {
        json_object_foreach((json_t *)v, k, x)
        {
            json_t *kj;
            if (!(first && first_inline))
                yaml_indent(f, ind);
            first = false;
            kj = json_string(k);
            rc = kj ? yaml_scalar(kj, f) : -ENOMEM;
            json_decref(kj);
            if (rc)
                return rc;
            fputc(':', f);
            if (yaml_is_collection(x)) {
                fputc('\n', f);
                /* sequences sit at their key's indentation, as kubectl writes them */
                rc = yaml_node(x, json_is_array(x) ? ind : ind + 2, false, f);
            } else {
                fputc(' ', f);
                rc = json_is_object(x)  ? (fputs("{}", f), 0)
                     : json_is_array(x) ? (fputs("[]", f), 0)
                                        : yaml_scalar(x, f);
                fputc('\n', f);
            }
            if (rc)
                return rc;
        }
        return 0;
    }
    if (json_is_array(v) && json_array_size(v)) {
        json_array_foreach(v, i, x)
        {
            if (!(first && first_inline))
                yaml_indent(f, ind);
            first = false;
            fputs("- ", f);
            if (yaml_is_collection(x)) {
                rc = yaml_node(x, ind + 2, true, f);
            } else {
                rc = json_is_object(x)  ? (fputs("{}", f), 0)
                     : json_is_array(x) ? (fputs("[]", f), 0)
                                        : yaml_scalar(x, f);
                fputc('\n', f);
            }
            if (rc)
                return rc;
        }
        return 0;
    }
    if (!first_inline)
        yaml_indent(f, ind);
    rc = json_is_object(v)  ? (fputs("{}", f), 0)
         : json_is_array(v) ? (fputs("[]", f), 0)
                            : yaml_scalar(v, f);
    fputc('\n', f);
    return rc;
}

int gpusched_yaml_print(const json_t *v, FILE *f)
{
    int rc = yaml_node(v, 0, false, f);

    if (!rc && ferror(f))
        rc = -EIO;
    return rc;
}

/* ---- -o name ------------------------------------------------------------------------------ */

/* kubectl_names prints "pod/NAME" for every "pod": "NS/NAME" member of the document, in order
 * (simulate's sections, capacity's specs, explain's pods), without repeats; for a v1 List
 * (render's), kubectl's KIND[.GROUP]/NAME for each item. */
static void kubectl_names(const json_t *v, json_t *seen, FILE *f)
{
    const char *k;
    json_t *x;
    size_t i;

    k = json_string_value(json_object_get(v, "kind"));
    if (k && !strcmp(k, "List") && json_is_array(json_object_get(v, "items"))) {
        json_array_foreach(json_object_get(v, "items"), i, x)
        {
            const char *kind = json_string_value(json_object_get(x, "kind"));
            const char *api = json_string_value(json_object_get(x, "apiVersion"));
            const char *name =
                json_string_value(json_object_get(json_object_get(x, "metadata"), "name"));
            const char *slash = api ? strchr(api, '/') : NULL;
            if (!kind || !name)
                continue;
            for (; *kind; kind++)
                fputc(tolower((unsigned char)*kind), f);
            if (slash)
                fprintf(f, ".%.*s", (int)(slash - api), api);
            fprintf(f, "/%s\n", name);
        }
        return;
    }
    if (json_is_object(v)) {
        const char *pod = json_string_value(json_object_get(v, "pod"));
        if (pod && !json_object_get(seen, pod)) {
            const char *slash = strrchr(pod, '/');
            json_object_set_new(seen, pod, json_true());
            fprintf(f, "pod/%s\n", slash ? slash + 1 : pod);
        }
        json_object_foreach((json_t *)v, k, x) if (json_is_array(x) || json_is_object(x))
            kubectl_names(x, seen, f);
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, x) kubectl_names(x, seen, f);
    }
}

/* ---- completion -------------------------------------------------------------------------- */

static const char *const kubectl_commands[] = {"simulate", "explain", "nodes",
                                               "capacity", "devices", "report",
                                               "serve",    "version", "completion"};

static const char kubectl_bash[] =
    "# bash completion for gpusched and kubectl-gpusched: source <(gpusched completion bash)\n"
    "_gpusched() {\n"
    "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" out directive\n"
    "    out=$(\"${COMP_WORDS[0]}\" __complete \"${COMP_WORDS[@]:1:COMP_CWORD}\" 2>/dev/null)\n"
    "    directive=${out##*:}\n"
    "    out=$(printf '%s\\n' \"$out\" | sed '$d')\n"
    "    COMPREPLY=($(compgen -W \"$out\" -- \"$cur\"))\n"
    "    if [ \"$directive\" != 4 ]; then\n"
    "        COMPREPLY+=($(compgen -f -- \"$cur\"))\n"
    "    fi\n"
    "}\n"
    "complete -o default -F _gpusched gpusched kubectl-gpusched\n";

static const char kubectl_zsh[] =
    "#compdef gpusched kubectl-gpusched\n"
    "# zsh completion for gpusched: source <(gpusched completion zsh), or this file as\n"
    "# _gpusched in a directory of $fpath\n"
    "_gpusched() {\n"
    "    local -a lines cands\n"
    "    local directive\n"
    "    lines=(\"${(@f)$(${words[1]} __complete \"${(@)words[2,$CURRENT]}\" 2>/dev/null)}\")\n"
    "    directive=${lines[-1]#:}\n"
    "    cands=(${lines[1,-2]})\n"
    "    compadd -a cands\n"
    "    [[ $directive == 4 ]] || _files\n"
    "}\n"
    "if [ \"$funcstack[1]\" = \"_gpusched\" ]; then\n"
    "    _gpusched \"$@\"\n"
    "else\n"
    "    compdef _gpusched gpusched kubectl-gpusched\n"
    "fi\n";

/* kubectl_complete answers `__complete WORDS...` the way cobra's completion protocol does:
 * candidates one per line, then ":4" (no file completion) or ":0" (files too). The flags of a
 * command come from its own --help, so they are always the parser's. */
static int kubectl_complete(int n, char **w, int (*dispatch)(int, char **))
{
    const char *cur = n ? w[n - 1] : "", *prev = n > 1 ? w[n - 2] : "";
    size_t i;

    if (n <= 1) {
        for (i = 0; i < sizeof(kubectl_commands) / sizeof(kubectl_commands[0]); i++)
            if (!strncmp(kubectl_commands[i], cur, strlen(cur)))
                printf("%s\n", kubectl_commands[i]);
        printf(":4\n");
        return 0;
    }
    if (!strcmp(prev, "-o") || !strcmp(prev, "--output")) {
        static const char *const fmts[] = {"table", "wide", "json", "yaml", "name"};
        for (i = 0; i < 5; i++)
            printf("%s\n", fmts[i]);
        printf(":4\n");
        return 0;
    }
    if (!strcmp(prev, "-f") || !strcmp(prev, "--filename") || !strcmp(prev, "--kubeconfig")) {
        printf(":0\n");
        return 0;
    }
    if (!strcmp(w[0], "completion")) {
        printf("bash\nzsh\n:4\n");
        return 0;
    }
    if (cur[0] == '-') {
        /* the command's --help, captured, gives its flags */
        char *av[3] = {"gpusched", w[0], "--help"};
        char *text, *line, *save = NULL;
        int saved = dup(1), mfd = memfd_create("gpusched-help", 0);
        size_t len;

        if (saved < 0 || mfd < 0) {
            printf(":4\n");
            return 0;
        }
        fflush(stdout);
        dup2(mfd, 1);
        dispatch(3, av);
        fflush(stdout);
        dup2(saved, 1);
        close(saved);
        len = (size_t)lseek(mfd, 0, SEEK_CUR);
        text = malloc(len + 1);
        if (text && pread(mfd, text, len, 0) == (ssize_t)len) {
            text[len] = '\0';
            for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *p = strstr(line, "--"), *e;
                if (strncmp(line, "  -", 3) && strncmp(line, "      --", 8))
                    continue;
                if (!p)
                    continue;
                for (e = p; *e && *e != ' ' && *e != ','; e++)
                    ;
                *e = '\0';
                if (!strncmp(p, cur, strlen(cur)))
                    printf("%s\n", p);
            }
        }
        free(text);
        close(mfd);
        printf(":4\n");
        return 0;
    }
    if (!strcmp(w[0], "explain") && !strchr(cur, '/')) {
        static const char *const kinds[] = {
            "pod/",       "deployment/", "replicaset/",           "statefulset/",
            "daemonset/", "job/",        "replicationcontroller/"};
        for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
            if (!strncmp(kinds[i], cur, strlen(cur)))
                printf("%s\n", kinds[i]);
        printf(":4\n");
        return 0;
    }
    printf(":4\n");
    return 0;
}

/* ---- the wrapper ------------------------------------------------------------------------- */

enum kubectl_conv { CONV_NONE, CONV_YAML, CONV_NAME };

/* the conversion gpusched_kubectl_output started: stdout is a memory file until the command
 * returns */
static enum kubectl_conv kubectl_conv;
static int kubectl_saved = -1, kubectl_mfd = -1;

int gpusched_kubectl_output(const char **output, unsigned native)
{
    const char *o = *output;
    enum kubectl_conv conv = !o                                                        ? CONV_NONE
                             : !strcmp(o, "yaml")                                      ? CONV_YAML
                             : !strcmp(o, "name") && !(native & GPUSCHED_KUBECTL_NAME) ? CONV_NAME
                                                                                       : CONV_NONE;

    if (conv == CONV_NONE)
        return 0;
    *output = "json";
    fflush(stdout);
    kubectl_saved = dup(1);
    kubectl_mfd = memfd_create("gpusched-out", 0);
    if (kubectl_saved < 0 || kubectl_mfd < 0 || dup2(kubectl_mfd, 1) < 0) {
        fprintf(stderr, "gpusched: cannot capture the output: %s\n", strerror(errno));
        return 1;
    }
    kubectl_conv = conv;
    return 0;
}

int gpusched_kubectl_begin(const char *cmd, const char *usage, const struct flag *flags,
                           const char **output, unsigned opts, int argc, char **argv,
                           struct flag_list *pos, bool *help)
{
    int rc = gpusched_cmd_flags_parse(cmd, flags, argc, argv, pos, help);

    if (rc)
        return rc;
    if (*help) {
        gpusched_cmd_help(cmd, usage, flags);
        return 0;
    }
    if (output && (rc = gpusched_kubectl_output(output, opts & GPUSCHED_KUBECTL_NAME)))
        return rc;
    if (!(opts & GPUSCHED_KUBECTL_ARGS) && pos->n)
        return gpusched_cmd_usage_error(cmd, "unexpected argument \"%s\"", pos->v[0]);
    return 0;
}

/* kubectl_finish prints what the command wrote as JSON (exit status rc) as YAML or names */
static int kubectl_finish(int rc)
{
    off_t len;
    char *text;
    json_t *doc;

    fflush(stdout);
    dup2(kubectl_saved, 1);
    close(kubectl_saved);
    len = lseek(kubectl_mfd, 0, SEEK_CUR);
    text = len >= 0 && (size_t)len < KUBECTL_CAPTURE_MAX ? malloc((size_t)len + 1) : NULL;
    if (!text || pread(kubectl_mfd, text, (size_t)len, 0) != len) {
        free(text);
        close(kubectl_mfd);
        fprintf(stderr, "gpusched: cannot read the captured output\n");
        return 1;
    }
    close(kubectl_mfd);
    text[len] = '\0';
    doc = rc == 0 ? json_loadb(text, (size_t)len, 0, NULL) : NULL;
    if (!doc) {
        /* an error, or nothing to convert: what the command wrote, as it wrote it */
        fwrite(text, 1, (size_t)len, stdout);
    } else if (kubectl_conv == CONV_YAML) {
        if (gpusched_yaml_print(doc, stdout))
            rc = 1;
    } else {
        json_t *seen = json_object();
        kubectl_names(doc, seen, stdout);
        json_decref(seen);
    }
    json_decref(doc);
    free(text);
    return gpusched_cmd_flush(rc);
}

int gpusched_kubectl_main(int argc, char **argv, int (*dispatch)(int, char **))
{
    const char *base = argv[0] ? strrchr(argv[0], '/') : NULL;
    int rc;

    base = base ? base + 1 : argv[0] ? argv[0] : "";
    if (!strcmp(base, "kubectl-gpusched"))
        gpusched_cmd_prog = "kubectl gpusched";
    if (argc >= 2 && !strcmp(argv[1], "__complete"))
        return kubectl_complete(argc - 2, argv + 2, dispatch);
    if (argc >= 2 && !strcmp(argv[1], "completion")) {
        if (argc == 3 && !strcmp(argv[2], "bash")) {
            fputs(kubectl_bash, stdout);
            return gpusched_cmd_flush(0);
        }
        if (argc == 3 && !strcmp(argv[2], "zsh")) {
            fputs(kubectl_zsh, stdout);
            return gpusched_cmd_flush(0);
        }
        if (argc == 3 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
            printf("Print a shell completion script for gpusched (and kubectl gpusched).\n\n"
                   "Examples:\n  source <(gpusched completion bash)\n"
                   "  gpusched completion zsh > \"${fpath[1]}/_gpusched\"\n\n"
                   "Usage:\n  %s completion bash|zsh\n",
                   gpusched_cmd_prog);
            return 0;
        }
        return gpusched_cmd_usage_error("completion", "want one shell: bash or zsh");
    }
    rc = dispatch(argc, argv);
    return kubectl_conv != CONV_NONE ? kubectl_finish(rc) : rc;
}
