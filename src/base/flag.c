/* flag.c - kubectl-style command-line flags (see flag.h). */
#include "base/flag.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/goparse.h"

#define USAGE_AUTO_MAX 30 /* widest flag that still sets the automatic usage column */
#define USAGE_LINE_MAX 100

static int list_push(struct flag_list *l, const char *s)
{
    const char **v = realloc(l->v, (l->n + 1) * sizeof(*v));

    if (!v)
        return -ENOMEM;
    l->v = v;
    l->v[l->n++] = s;
    return 0;
}

/* list_add splits "a,b,c" into the list. An empty element is left out (pflag's StringSlice
 * would keep it, but an empty file name or label key is never useful). */
static int list_add(struct flag_list *l, const char *s)
{
    const char *p = s;

    if (!strchr(s, ','))
        return list_push(l, s);
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);

        if (len) {
            char **owned = realloc(l->owned, (l->nowned + 1) * sizeof(*owned));
            char *copy;

            if (!owned)
                return -ENOMEM;
            l->owned = owned;
            if (!(copy = strndup(p, len)))
                return -ENOMEM;
            l->owned[l->nowned++] = copy;
            if (list_push(l, copy))
                return -ENOMEM;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

void flag_list_release(struct flag_list *l)
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

static int fault_set(struct flag_fault *fault, enum flag_status status, const struct flag *f,
                     const char *word)
{
    fault->status = status;
    fault->flag = f;
    fault->word = word;
    return (int)status;
}

/* apply stores value (NULL: a bool named without one) into f's destination. */
static int apply(const struct flag *f, const char *value, struct flag_fault *fault,
                 const char *word)
{
    int rc = 0;

    err_clear(&fault->err);
    switch (f->type) {
    case FLAG_BOOL:
        if (!value)
            *(bool *)f->dest = true;
        else
            rc = go_parse_bool(value, (bool *)f->dest, &fault->err);
        break;
    case FLAG_STRING:
        *(const char **)f->dest = value;
        break;
    case FLAG_LIST:
        if (list_add(f->dest, value))
            return fault_set(fault, FLAG_NOMEM, f, word);
        break;
    case FLAG_FUNC:
        rc = f->set(f->dest, value ? value : "", &fault->err);
        break;
    }
    if (rc == -ENOMEM)
        return fault_set(fault, FLAG_NOMEM, f, word);
    if (rc) {
        fault->value = value;
        return fault_set(fault, FLAG_BAD_VALUE, f, word);
    }
    return FLAG_OK;
}

static const struct flag *find_long(const struct flag *flags, size_t n, const char *name,
                                    size_t len)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (strlen(flags[i].name) == len && !strncmp(flags[i].name, name, len))
            return &flags[i];
    return NULL;
}

static const struct flag *find_short(const struct flag *flags, size_t n, char c)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (flags[i].shorthand && flags[i].shorthand == c)
            return &flags[i];
    return NULL;
}

static int positional(struct flag_list *pos, const char *word, struct flag_fault *fault)
{
    if (!pos)
        return fault_set(fault, FLAG_EXTRA, NULL, word);
    if (list_push(pos, word))
        return fault_set(fault, FLAG_NOMEM, NULL, word);
    return FLAG_OK;
}

int flag_parse(const struct flag *flags, size_t n, int argc, char **argv, struct flag_list *pos,
               struct flag_fault *fault)
{
    int i, rc;

    memset(fault, 0, sizeof(*fault));
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *value = NULL;
        const struct flag *f;

        if (!strcmp(a, "--")) {
            for (i++; i < argc; i++)
                if ((rc = positional(pos, argv[i], fault)))
                    return rc;
            break;
        }
        if (a[0] != '-' || a[1] == '\0') {
            if ((rc = positional(pos, a, fault)))
                return rc;
            continue;
        }
        if (a[1] == '-') {
            const char *name = a + 2, *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);

            snprintf(fault->name, sizeof(fault->name), "--%.*s", (int)len, name);
            if (len == 4 && !strncmp(name, "help", 4))
                return fault_set(fault, FLAG_HELP, NULL, a);
            if (!(f = find_long(flags, n, name, len)))
                return fault_set(fault, FLAG_UNKNOWN, NULL, a);
            if (eq) {
                value = eq + 1;
            } else if (f->type != FLAG_BOOL) {
                if (i + 1 >= argc)
                    return fault_set(fault, FLAG_NO_VALUE, f, a);
                value = argv[++i];
            }
        } else {
            char c = a[1];

            snprintf(fault->name, sizeof(fault->name), "-%c", c);
            fault->shorthand = c;
            if (!(f = find_short(flags, n, c))) {
                if (c == 'h')
                    return fault_set(fault, FLAG_HELP, NULL, a);
                return fault_set(fault, FLAG_UNKNOWN, NULL, a);
            }
            if (a[2] == '=') {
                value = a + 3;
            } else if (a[2]) {
                value = a + 2;
            } else if (f->type != FLAG_BOOL) {
                if (i + 1 >= argc)
                    return fault_set(fault, FLAG_NO_VALUE, f, a);
                value = argv[++i];
            }
        }
        if ((rc = apply(f, value, fault, a)))
            return rc;
        fault->name[0] = '\0';
        fault->shorthand = 0;
    }
    return FLAG_OK;
}

int flag_parse_env(const struct flag *flags, size_t n, struct flag_fault *fault)
{
    size_t i;
    int rc;

    memset(fault, 0, sizeof(*fault));
    for (i = 0; i < n; i++) {
        const char *v = flags[i].env ? getenv(flags[i].env) : NULL;

        if (!v)
            continue;
        snprintf(fault->name, sizeof(fault->name), "%s", flags[i].env);
        if ((rc = apply(&flags[i], v, fault, flags[i].env)))
            return rc;
    }
    fault->name[0] = '\0';
    return FLAG_OK;
}

/* usage_left writes "  -n, --name ARG" (or six blanks before a flag without a letter). */
static int usage_left(const struct flag *f, char *buf, size_t size)
{
    int n;

    if (f->shorthand)
        n = snprintf(buf, size, "  -%c, --%s%s%s", f->shorthand, f->name, f->arg ? " " : "",
                     f->arg ? f->arg : "");
    else
        n = snprintf(buf, size, "      --%s%s%s", f->name, f->arg ? " " : "", f->arg ? f->arg : "");
    return n < 0 ? 0 : n >= (int)size ? (int)size - 1 : n;
}

/* usage_line writes one flag: left, the usage lines at column, then the variable's name. */
static int usage_line(const char *left, int llen, const char *usage, const char *env, int column,
                      struct buf *out)
{
    const char *p = usage ? usage : "";
    int rc = buf_puts(out, left), col = llen;

    if (llen + 2 > column) {
        rc = rc ? rc : buf_puts(out, "\n");
        col = 0;
    }
    for (;;) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);

        rc = rc ? rc : buf_printf(out, "%*s%.*s", column - col, "", len, p);
        col = column + len;
        if (!nl)
            break;
        rc = rc ? rc : buf_puts(out, "\n");
        col = 0;
        p = nl + 1;
    }
    if (env) {
        int elen = (int)strlen(env) + 3;

        if (col + elen > USAGE_LINE_MAX) {
            rc = rc ? rc : buf_printf(out, "\n%*s[%s]", column, "", env);
        } else {
            rc = rc ? rc : buf_printf(out, " [%s]", env);
        }
    }
    return rc ? rc : buf_puts(out, "\n");
}

int flag_usage(const struct flag *flags, size_t n, const char *help_usage, int column,
               struct buf *out)
{
    const struct flag help = {"help", 'h', FLAG_BOOL, NULL, NULL, NULL, NULL, help_usage};
    char left[256];
    size_t i;
    int rc = 0;

    if (column <= 0) {
        int widest = usage_left(&help, left, sizeof(left));

        for (i = 0; i < n; i++) {
            int w = usage_left(&flags[i], left, sizeof(left));

            if (w <= USAGE_AUTO_MAX && w > widest)
                widest = w;
        }
        column = widest + 2;
    }
    for (i = 0; i <= n && !rc; i++) {
        const struct flag *f = i < n ? &flags[i] : &help;
        int llen = usage_left(f, left, sizeof(left));

        rc = usage_line(left, llen, f->usage, f->env, column, out);
    }
    return rc;
}
