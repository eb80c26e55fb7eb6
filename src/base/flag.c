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
    case FLAG_GROUP:
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

/* walk calls fn(f, arg) on every flag of the table, a group's in its place, until one returns
 * non-zero, and returns that (0 at the end of the table) */
static int walk(const struct flag *t, int (*fn)(const struct flag *, void *), void *arg)
{
    int rc;

    for (; t->name; t++) {
        rc = t->type == FLAG_GROUP ? walk(t->dest, fn, arg) : fn(t, arg);
        if (rc)
            return rc;
    }
    return 0;
}

struct find {
    const char *name; /* a long name, len bytes; NULL: the shorthand c */
    size_t len;
    char c;
    const struct flag *found;
};

static int find_one(const struct flag *f, void *arg)
{
    struct find *q = arg;

    if (q->name ? strlen(f->name) == q->len && !strncmp(f->name, q->name, q->len)
                : f->shorthand && f->shorthand == q->c)
        q->found = f;
    return q->found != NULL;
}

static const struct flag *find_long(const struct flag *flags, const char *name, size_t len)
{
    struct find q = {name, len, 0, NULL};

    walk(flags, find_one, &q);
    return q.found;
}

static const struct flag *find_short(const struct flag *flags, char c)
{
    struct find q = {NULL, 0, c, NULL};

    walk(flags, find_one, &q);
    return q.found;
}

static int positional(struct flag_list *pos, const char *word, struct flag_fault *fault)
{
    if (!pos)
        return fault_set(fault, FLAG_EXTRA, NULL, word);
    if (list_push(pos, word))
        return fault_set(fault, FLAG_NOMEM, NULL, word);
    return FLAG_OK;
}

int flag_parse(const struct flag *flags, int argc, char **argv, struct flag_list *pos,
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
            if (!(f = find_long(flags, name, len)))
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
            if (!(f = find_short(flags, c))) {
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

static int env_one(const struct flag *f, void *arg)
{
    struct flag_fault *fault = arg;
    const char *v = f->env ? getenv(f->env) : NULL;

    if (!v)
        return 0;
    snprintf(fault->name, sizeof(fault->name), "%s", f->env);
    return apply(f, v, fault, f->env);
}

int flag_parse_env(const struct flag *flags, struct flag_fault *fault)
{
    int rc;

    memset(fault, 0, sizeof(*fault));
    if ((rc = walk(flags, env_one, fault)))
        return rc;
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

struct usage {
    int column;
    struct buf *out;
    char left[256];
};

static int widest_one(const struct flag *f, void *arg)
{
    struct usage *u = arg;
    int w = usage_left(f, u->left, sizeof(u->left));

    if (w <= USAGE_AUTO_MAX && w + 2 > u->column)
        u->column = w + 2;
    return 0;
}

static int usage_one(const struct flag *f, void *arg)
{
    struct usage *u = arg;
    int llen = usage_left(f, u->left, sizeof(u->left));

    return usage_line(u->left, llen, f->usage, f->env, u->column, u->out);
}

int flag_usage(const struct flag *flags, const char *help_usage, int column, struct buf *out)
{
    const struct flag help = {"help", 'h', FLAG_BOOL, NULL, NULL, NULL, NULL, help_usage};
    struct usage u;
    int rc;

    u.column = column;
    u.out = out;
    if (column <= 0) {
        u.column = usage_left(&help, u.left, sizeof(u.left)) + 2;
        walk(flags, widest_one, &u);
    }
    if ((rc = walk(flags, usage_one, &u)))
        return rc;
    return usage_one(&help, &u);
}
