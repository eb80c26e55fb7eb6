/* cmd_flags.c - kubectl-style flag parsing for the gpusched commands.
 *
 * Mirrors what cobra/pflag accept and say, so users' kubectl habits work: long and short
 * forms, "=" or a separate word for values, flags after positional arguments, "--" to stop,
 * comma-separated lists for repeatable flags. Messages go to stderr; the caller exits 2. */
#include "sched/cmd.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/goparse.h"

int sched_cmd_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    fputs("gpusched: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nSee 'gpusched %s%s--help' for usage.\n", cmd ? cmd : "", cmd ? " " : "");
    return 2;
}

static int sched_cmd_list_push(struct sched_cmd_list *l, const char *s)
{
    const char **n = realloc(l->v, (l->n + 1) * sizeof(*n));

    if (!n)
        return -ENOMEM;
    l->v = n;
    l->v[l->n++] = s;
    return 0;
}

/* Split "a,b,c" into the list; an empty element is kept out (pflag's StringSlice reads it
 * as CSV and would keep it, but an empty file name or label key is never useful). */
static int sched_cmd_list_add_csv(struct sched_cmd_list *l, const char *s)
{
    const char *p = s;

    if (!strchr(s, ','))
        return sched_cmd_list_push(l, s);
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len) {
            char **no = realloc(l->owned, (l->nowned + 1) * sizeof(*no));
            char *copy;
            if (!no)
                return -ENOMEM;
            l->owned = no;
            copy = strndup(p, len);
            if (!copy)
                return -ENOMEM;
            l->owned[l->nowned++] = copy;
            if (sched_cmd_list_push(l, copy))
                return -ENOMEM;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

void sched_cmd_list_release(struct sched_cmd_list *l)
{
    size_t i;

    if (!l)
        return;
    for (i = 0; i < l->nowned; i++)
        free(l->owned[i]);
    free(l->owned);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

static int sched_cmd_flag_set(const char *cmd, const struct sched_cmd_flag *f, const char *value)
{
    switch (f->type) {
    case CMD_FLAG_BOOL: {
        struct err err;

        if (!value)
            *(bool *)f->dest = true;
        else if (go_parse_bool(value, (bool *)f->dest, &err))
            return sched_cmd_usage_error(cmd, "invalid argument \"%s\" for \"--%s\" flag: %s",
                                         value, f->name, err.msg);
        return 0;
    }
    case CMD_FLAG_STRING:
        *(const char **)f->dest = value;
        return 0;
    case CMD_FLAG_LIST:
        if (sched_cmd_list_add_csv(f->dest, value)) {
            fprintf(stderr, "gpusched: out of memory\n");
            return 1;
        }
        return 0;
    }
    return 0;
}

int sched_cmd_flags_parse(const char *cmd, const struct sched_cmd_flag *flags, size_t nflags,
                          int argc, char **argv, struct sched_cmd_list *pos, bool *help)
{
    int i;
    size_t k;

    *help = false;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const struct sched_cmd_flag *f = NULL;
        const char *value = NULL;
        int rc;

        if (!strcmp(a, "--")) {
            for (i++; i < argc; i++)
                if (sched_cmd_list_push(pos, argv[i]))
                    goto oom;
            break;
        }
        if (a[0] != '-' || a[1] == '\0') {
            if (sched_cmd_list_push(pos, a))
                goto oom;
            continue;
        }
        if (a[1] == '-') {
            const char *name = a + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            if (len == 4 && !strncmp(name, "help", 4)) {
                *help = true;
                return 0;
            }
            for (k = 0; k < nflags; k++)
                if (strlen(flags[k].name) == len && !strncmp(flags[k].name, name, len))
                    f = &flags[k];
            if (!f)
                return sched_cmd_usage_error(cmd, "unknown flag: --%.*s", (int)len, name);
            if (eq)
                value = eq + 1;
            else if (f->type != CMD_FLAG_BOOL) {
                if (i + 1 >= argc)
                    return sched_cmd_usage_error(cmd, "flag needs an argument: --%s", f->name);
                value = argv[++i];
            }
        } else {
            char c = a[1];
            if (c == 'h') {
                *help = true;
                return 0;
            }
            for (k = 0; k < nflags; k++)
                if (flags[k].shorthand && flags[k].shorthand == c)
                    f = &flags[k];
            if (!f)
                return sched_cmd_usage_error(cmd, "unknown shorthand flag: '%c' in %s", c, a);
            if (a[2] == '=')
                value = a + 3;
            else if (a[2])
                value = a + 2;
            else if (f->type != CMD_FLAG_BOOL) {
                if (i + 1 >= argc)
                    return sched_cmd_usage_error(cmd, "flag needs an argument: '%c' in -%c", c, c);
                value = argv[++i];
            }
        }
        rc = sched_cmd_flag_set(cmd, f, value);
        if (rc)
            return rc;
    }
    return 0;
oom:
    fprintf(stderr, "gpusched: out of memory\n");
    return 1;
}
