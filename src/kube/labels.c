/* labels.c - label key/value validation and label selectors, after k8s.io/apimachinery.
 *
 * Validation returns the API server's messages byte for byte. The selector parser is the
 * apimachinery lexer and recursive-descent parser transcribed: same tokens, same lookahead
 * contexts (in/notin are identifiers except where an operator is expected), same messages,
 * plus the 1-based column of the offending token. Parsed selectors live in the caller's arena. */
#include "kube/labels.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/goparse.h"
#include "base/quote.h"

#define QNAME_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define QNAME_MSG                                                                                  \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "    \
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "         \
    "validation is '" QNAME_FMT "')"
#define DNS1123_FMT "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
#define DNS1123_MSG                                                                                \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "      \
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "          \
    "regex used for validation is '" DNS1123_FMT "')"
#define LABEL_VALUE_FMT "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
#define LABEL_VALUE_MSG                                                                            \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "       \
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "          \
    "'my_value',  or '12345', regex used for validation is '" LABEL_VALUE_FMT "')"

#define LABEL_NAME_MAX 63
#define LABEL_VALUE_MAX 63
#define DNS1123_SUBDOMAIN_MAX 253

/* ---------------------------------------------------------------------------------------- */
/* Validation                                                                                 */

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* qname_match: ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], anchored. */
static bool qname_match(const char *s, size_t n)
{
    size_t i;

    if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return false;
    for (i = 1; i + 1 < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

static bool is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* dns1123_subdomain_match: labels of [a-z0-9]([-a-z0-9]*[a-z0-9])? joined by '.'. */
static bool dns1123_subdomain_match(const char *s, size_t n)
{
    size_t i, start = 0;

    if (n == 0)
        return false;
    for (i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (i == start || !is_lower_alnum(s[start]) || !is_lower_alnum(s[i - 1]))
                return false;
            start = i + 1;
        } else if (!is_lower_alnum(s[i]) && s[i] != '-') {
            return false;
        }
    }
    return true;
}

/* msgs_add appends one message to a "; "-joined list in buf (the parser's joining). */
static void msgs_add(char *buf, size_t size, int *count, const char *msg)
{
    size_t n = strlen(buf);

    snprintf(buf + n, size - n, "%s%s", *count ? "; " : "", msg);
    (*count)++;
}

/* key_messages fills buf with validation.IsQualifiedName's messages joined by "; " and
 * returns how many there are. */
static int key_messages(const char *key, char *buf, size_t size)
{
    const char *slash = strchr(key, '/');
    const char *name = key;
    size_t nname;
    int count = 0;

    buf[0] = '\0';
    if (slash) {
        size_t nprefix = (size_t)(slash - key);

        if (strchr(slash + 1, '/')) {
            msgs_add(buf, size, &count,
                     "a qualified name " QNAME_MSG
                     " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
            return count;
        }
        if (nprefix == 0) {
            msgs_add(buf, size, &count, "prefix part must be non-empty");
        } else {
            if (nprefix > DNS1123_SUBDOMAIN_MAX)
                msgs_add(buf, size, &count, "prefix part must be no more than 253 characters");
            if (!dns1123_subdomain_match(key, nprefix))
                msgs_add(buf, size, &count, "prefix part " DNS1123_MSG);
        }
        name = slash + 1;
    }
    nname = strlen(name);
    if (nname == 0)
        msgs_add(buf, size, &count, "name part must be non-empty");
    else if (nname > LABEL_NAME_MAX)
        msgs_add(buf, size, &count, "name part must be no more than 63 characters");
    if (!qname_match(name, nname))
        msgs_add(buf, size, &count, "name part " QNAME_MSG);
    return count;
}

static int value_messages(const char *value, char *buf, size_t size)
{
    size_t n = strlen(value);
    int count = 0;

    buf[0] = '\0';
    if (n > LABEL_VALUE_MAX)
        msgs_add(buf, size, &count, "must be no more than 63 characters");
    if (n && !qname_match(value, n))
        msgs_add(buf, size, &count, LABEL_VALUE_MSG);
    return count;
}

/* The API server reports each message as its own field error; callers here want one line,
 * so the first message (the most specific one) is kept. */
static int first_message(int count, const char *joined, struct err *err)
{
    const char *sep;

    if (!count)
        return 0;
    sep = strstr(joined, "; ");
    if (count > 1 && sep)
        return err_set(err, -EINVAL, "%.*s", (int)(sep - joined), joined);
    return err_set(err, -EINVAL, "%s", joined);
}

int kube_label_key_validate(const char *key, struct err *err)
{
    char buf[2048];

    return first_message(key_messages(key ? key : "", buf, sizeof(buf)), buf, err);
}

int kube_dns_subdomain_validate(const char *s, struct err *err)
{
    char buf[1024];
    int count = 0;
    size_t n = strlen(s ? s : "");

    buf[0] = '\0';
    if (n > DNS1123_SUBDOMAIN_MAX)
        msgs_add(buf, sizeof(buf), &count, "must be no more than 253 characters");
    if (!dns1123_subdomain_match(s ? s : "", n))
        msgs_add(buf, sizeof(buf), &count, DNS1123_MSG);
    return first_message(count, buf, err);
}

int kube_dns_label_validate(const char *s, struct err *err)
{
    char buf[1024];
    int count = 0;
    size_t n = strlen(s ? s : "");
    bool sub = dns1123_subdomain_match(s ? s : "", n);

    buf[0] = '\0';
    if (n > 63)
        msgs_add(buf, sizeof(buf), &count, "must be no more than 63 characters");
    if (sub && memchr(s, '.', n))
        msgs_add(buf, sizeof(buf), &count, "must not contain dots"); /* a subdomain, not a label */
    else if (!sub)
        msgs_add(buf, sizeof(buf), &count,
                 "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                 "or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  "
                 "or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
    return first_message(count, buf, err);
}

int kube_label_value_validate(const char *value, struct err *err)
{
    char buf[1024];

    return first_message(value_messages(value ? value : "", buf, sizeof(buf)), buf, err);
}

/* ---------------------------------------------------------------------------------------- */
/* Lexer                                                                                      */

enum tok {
    TOK_ERROR = 0,
    TOK_END,
    TOK_CLOSE_PAR,
    TOK_COMMA,
    TOK_NOT, /* "!" (DoesNotExistToken) */
    TOK_DOUBLE_EQUALS,
    TOK_EQUALS,
    TOK_GT,
    TOK_IDENT,
    TOK_IN,
    TOK_LT,
    TOK_NOT_EQUALS,
    TOK_NOT_IN,
    TOK_OPEN_PAR,
};

struct token {
    enum tok tok;
    const char *lit; /* not NUL-terminated */
    size_t len;
    size_t pos; /* byte offset in the selector */
};

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_special(char c)
{
    return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

static enum tok symbol_token(const char *s, size_t n)
{
    if (n == 1) {
        switch (s[0]) {
        case ')':
            return TOK_CLOSE_PAR;
        case ',':
            return TOK_COMMA;
        case '!':
            return TOK_NOT;
        case '=':
            return TOK_EQUALS;
        case '>':
            return TOK_GT;
        case '<':
            return TOK_LT;
        case '(':
            return TOK_OPEN_PAR;
        }
    } else if (n == 2) {
        if (s[0] == '=' && s[1] == '=')
            return TOK_DOUBLE_EQUALS;
        if (s[0] == '!' && s[1] == '=')
            return TOK_NOT_EQUALS;
    }
    return TOK_ERROR;
}

/* lex_all scans the whole selector into *out (malloc'd; caller frees), ending with TOK_END. */
static int lex_all(const char *s, struct token **out, size_t *nout)
{
    size_t len = strlen(s), pos = 0, n = 0, cap = 16;
    struct token *t = malloc(cap * sizeof(*t));

    if (!t)
        return -ENOMEM;
    for (;;) {
        struct token tk = {TOK_END, s + len, 0, len};

        while (pos < len && is_space(s[pos]))
            pos++;
        if (pos < len && is_special(s[pos])) {
            /* longest run of symbols that still forms a token */
            size_t start = pos, end = pos;
            enum tok last = TOK_ERROR;

            while (end < len && is_special(s[end])) {
                enum tok k = symbol_token(s + start, end - start + 1);

                if (k != TOK_ERROR)
                    last = k;
                else if (last != TOK_ERROR)
                    break;
                end++;
            }
            tk.tok = last;
            tk.lit = s + start;
            tk.len = end - start;
            tk.pos = start;
            pos = end;
        } else if (pos < len) {
            size_t start = pos;

            while (pos < len && !is_special(s[pos]) && !is_space(s[pos]))
                pos++;
            tk.tok = TOK_IDENT;
            tk.lit = s + start;
            tk.len = pos - start;
            tk.pos = start;
            if (tk.len == 2 && !memcmp(tk.lit, "in", 2))
                tk.tok = TOK_IN;
            else if (tk.len == 5 && !memcmp(tk.lit, "notin", 5))
                tk.tok = TOK_NOT_IN;
        }
        if (n == cap) {
            struct token *nt = realloc(t, 2 * cap * sizeof(*t));

            if (!nt) {
                free(t);
                return -ENOMEM;
            }
            t = nt;
            cap *= 2;
        }
        t[n++] = tk;
        if (tk.tok == TOK_END)
            break;
    }
    *out = t;
    *nout = n;
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Parser                                                                                     */

struct set {
    char **v;
    size_t n, cap;
};

struct parser {
    const char *src;
    struct token *t;
    size_t nt, i;
    struct arena *a;
    struct err *err;
    struct kube_requirement *reqs;
    size_t nreqs, capreqs;
    struct set set; /* values of the requirement being parsed */
};

enum ctx { CTX_VALUES, CTX_KEY_AND_OPERATOR };

static enum tok tok_in(const struct token *t, enum ctx c)
{
    if (c == CTX_VALUES && (t->tok == TOK_IN || t->tok == TOK_NOT_IN))
        return TOK_IDENT;
    return t->tok;
}

static const struct token *lookahead(struct parser *p, enum ctx c, enum tok *tok)
{
    const struct token *t = &p->t[p->i];

    *tok = tok_in(t, c);
    return t;
}

static const struct token *consume(struct parser *p, enum ctx c, enum tok *tok)
{
    const struct token *t = &p->t[p->i];

    *tok = tok_in(t, c);
    if (p->i + 1 < p->nt)
        p->i++;
    return t;
}

/* fail sets the message (already complete) and the column of token t. */
static int fail_at(struct parser *p, const struct token *t, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(struct parser *p, const struct token *t, int code, const char *fmt, ...)
{
    va_list ap;
    char msg[ERR_MSG_MAX];

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    err_set(p->err, code, "%s", msg);
    if (p->err)
        p->err->column = (int)(t->pos + 1);
    return code;
}

/* set_insert adds a value; duplicates are dropped after sorting (set_sort_unique), which keeps
 * long value lists linear-logarithmic. */
static int set_insert(struct set *s, const char *lit, size_t len)
{
    char *copy;

    if (s->n == s->cap) {
        size_t ncap = s->cap ? 2 * s->cap : 8;
        char **nv = realloc(s->v, ncap * sizeof(*nv));

        if (!nv)
            return -ENOMEM;
        s->v = nv;
        s->cap = ncap;
    }
    copy = malloc(len + 1);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, lit, len);
    copy[len] = '\0';
    s->v[s->n++] = copy;
    return 0;
}

static void set_clear(struct set *s)
{
    size_t i;

    for (i = 0; i < s->n; i++)
        free(s->v[i]);
    s->n = 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* new_requirement is labels.NewRequirement: validates and appends to p->reqs. The values are
 * p->set, sorted. Errors are field errors aggregated like ToAggregate() prints them. */
static int new_requirement(struct parser *p, const struct token *keytok, const char *key,
                           enum kube_selector_op op, const struct token *valtok)
{
    struct buf msg = BUF_INIT(16384);
    char tmp[2048];
    int nerrs = 0, rc = 0;
    size_t i;
    struct kube_requirement *r;
    const struct token *at = valtok ? valtok : keytok;

#define FIELD_ERR(path_fmt, path_arg, badq, detail)                                                \
    do {                                                                                           \
        buf_puts(&msg, nerrs ? ", " : "");                                                         \
        buf_printf(&msg, path_fmt, path_arg);                                                      \
        buf_puts(&msg, ": Invalid value: ");                                                       \
        buf_puts(&msg, badq);                                                                      \
        buf_printf(&msg, ": %s", detail);                                                          \
        nerrs++;                                                                                   \
    } while (0)

    if (p->set.n > 1) {
        size_t w = 1;

        qsort(p->set.v, p->set.n, sizeof(*p->set.v), cmp_str);
        for (i = 1; i < p->set.n; i++) {
            if (strcmp(p->set.v[i], p->set.v[w - 1]))
                p->set.v[w++] = p->set.v[i];
            else
                free(p->set.v[i]);
        }
        p->set.n = w;
    }
    switch (op) {
    case KUBE_OP_IN:
    case KUBE_OP_NOT_IN:
        if (p->set.n == 0)
            FIELD_ERR("%s", "values", "[]string{}",
                      "for 'in', 'notin' operators, values set can't be empty");
        break;
    case KUBE_OP_GT:
    case KUBE_OP_LT:
        if (p->set.n != 1) {
            FIELD_ERR("%s", "values", "[]string{}",
                      "for 'Gt', 'Lt' operators, exactly one value is required");
        }
        for (i = 0; i < p->set.n; i++) {
            int64_t dummy;

            if (go_parse_int(p->set.v[i], strlen(p->set.v[i]), 10, 64, &dummy, NULL)) {
                struct buf q = BUF_INIT(4096);

                quote_go(&q, p->set.v[i], strlen(p->set.v[i]));
                FIELD_ERR("values[%zu]", i, q.data ? q.data : "\"\"",
                          "for 'Gt', 'Lt' operators, the value must be an integer");
                buf_release(&q);
            }
        }
        break;
    default:
        break;
    }
    for (i = 0; i < p->set.n; i++) {
        if (value_messages(p->set.v[i], tmp, sizeof(tmp))) {
            struct buf q = BUF_INIT(4096);
            char path[512];

            quote_go(&q, p->set.v[i], strlen(p->set.v[i]));
            snprintf(path, sizeof(path), "values[%zu][%s]", i, key);
            FIELD_ERR("%s", path, q.data ? q.data : "\"\"", tmp);
            buf_release(&q);
        }
    }
#undef FIELD_ERR
    if (nerrs) {
        /* wrapped in "unable to parse requirement: " by the caller, like parse() does */
        rc = fail_at(p, at, -EINVAL, "%s%s%s", nerrs > 1 ? "[" : "", msg.data ? msg.data : "",
                     nerrs > 1 ? "]" : "");
        goto out;
    }
    if (p->nreqs == p->capreqs) {
        size_t ncap = p->capreqs ? 2 * p->capreqs : 8;
        struct kube_requirement *nr = arena_alloc(p->a, ncap * sizeof(*nr));

        if (!nr) {
            rc = err_set(p->err, -ENOMEM, "out of memory");
            goto out;
        }
        if (p->nreqs)
            memcpy(nr, p->reqs, p->nreqs * sizeof(*nr));
        p->reqs = nr;
        p->capreqs = ncap;
    }
    r = &p->reqs[p->nreqs];
    memset(r, 0, sizeof(*r));
    r->key = arena_strdup(p->a, key);
    r->op = op;
    r->nvalues = p->set.n;
    r->values = p->set.n ? arena_alloc(p->a, p->set.n * sizeof(*r->values)) : NULL;
    if (!r->key || (p->set.n && !r->values)) {
        rc = err_set(p->err, -ENOMEM, "out of memory");
        goto out;
    }
    for (i = 0; i < p->set.n; i++) {
        r->values[i] = arena_strdup(p->a, p->set.v[i]);
        if (!r->values[i]) {
            rc = err_set(p->err, -ENOMEM, "out of memory");
            goto out;
        }
    }
    p->nreqs++;
out:
    buf_release(&msg);
    return rc;
}

static char *tok_dup(const struct token *t)
{
    char *s = malloc(t->len + 1);

    if (s) {
        memcpy(s, t->lit, t->len);
        s[t->len] = '\0';
    }
    return s;
}

#define LIT(t) (int)(t)->len, (t)->lit

/* parse_values: "(" identifiers ")" into p->set; returns 0 or an error. */
static int parse_values(struct parser *p)
{
    enum tok tok, tok2;
    const struct token *t, *first;

    t = consume(p, CTX_VALUES, &tok);
    if (tok != TOK_OPEN_PAR)
        return fail_at(p, t, -EINVAL, "found '%.*s' expected: '('", LIT(t));
    first = lookahead(p, CTX_VALUES, &tok);
    switch (tok) {
    case TOK_IDENT:
    case TOK_COMMA:
        /* parseIdentifiersList */
        for (;;) {
            const struct token *t2;

            t = consume(p, CTX_VALUES, &tok);
            if (tok == TOK_IDENT) {
                if (set_insert(&p->set, t->lit, t->len))
                    return err_set(p->err, -ENOMEM, "out of memory");
                t2 = lookahead(p, CTX_VALUES, &tok2);
                if (tok2 == TOK_COMMA)
                    continue;
                if (tok2 == TOK_CLOSE_PAR)
                    break;
                return fail_at(p, t2, -EINVAL, "found '%.*s', expected: ',' or ')'", LIT(t2));
            } else if (tok == TOK_COMMA) {
                if (p->set.n == 0 && set_insert(&p->set, "", 0))
                    return err_set(p->err, -ENOMEM, "out of memory");
                lookahead(p, CTX_VALUES, &tok2);
                if (tok2 == TOK_CLOSE_PAR) {
                    if (set_insert(&p->set, "", 0))
                        return err_set(p->err, -ENOMEM, "out of memory");
                    break;
                }
                if (tok2 == TOK_COMMA) {
                    consume(p, CTX_VALUES, &tok2);
                    if (set_insert(&p->set, "", 0))
                        return err_set(p->err, -ENOMEM, "out of memory");
                }
            } else {
                return fail_at(p, t, -EINVAL, "found '%.*s', expected: ',', or identifier", LIT(t));
            }
        }
        t = consume(p, CTX_VALUES, &tok);
        if (tok != TOK_CLOSE_PAR) /* apimachinery quotes the first lookahead here */
            return fail_at(p, t, -EINVAL, "found '%.*s', expected: ')'", LIT(first));
        return 0;
    case TOK_CLOSE_PAR:
        consume(p, CTX_VALUES, &tok);
        if (set_insert(&p->set, "", 0))
            return err_set(p->err, -ENOMEM, "out of memory");
        return 0;
    default:
        return fail_at(p, first, -EINVAL, "found '%.*s', expected: ',', ')' or identifier",
                       LIT(first));
    }
}

/* parse_requirement parses one requirement and appends it; errors come back without the
 * "unable to parse requirement: " prefix, which parse_selector adds. */
static int parse_requirement(struct parser *p)
{
    enum tok tok;
    const struct token *t, *keytok, *valtok = NULL;
    enum kube_selector_op op;
    bool dne = false, unary = false;
    char *key = NULL, buf[2048];
    int rc;

    set_clear(&p->set);
    t = consume(p, CTX_VALUES, &tok);
    if (tok == TOK_NOT) {
        dne = true;
        t = consume(p, CTX_VALUES, &tok);
    }
    if (tok != TOK_IDENT)
        return fail_at(p, t, -EINVAL, "found '%.*s', expected: identifier", LIT(t));
    keytok = t;
    key = tok_dup(t);
    if (!key)
        return err_set(p->err, -ENOMEM, "out of memory");
    if (key_messages(key, buf, sizeof(buf))) {
        struct buf q = BUF_INIT(4096);

        quote_go(&q, key, strlen(key));
        rc = fail_at(p, keytok, -EINVAL, "<nil>: Invalid value: %s: %s", q.data ? q.data : "", buf);
        buf_release(&q);
        goto out;
    }
    lookahead(p, CTX_VALUES, &tok);
    op = dne ? KUBE_OP_DOES_NOT_EXIST : KUBE_OP_EXISTS;
    unary = dne || tok == TOK_END || tok == TOK_COMMA;
    if (!unary) {
        t = consume(p, CTX_KEY_AND_OPERATOR, &tok);
        switch (tok) {
        case TOK_IN:
            op = KUBE_OP_IN;
            break;
        case TOK_EQUALS:
            op = KUBE_OP_EQUALS;
            break;
        case TOK_DOUBLE_EQUALS:
            op = KUBE_OP_DOUBLE_EQUALS;
            break;
        case TOK_GT:
            op = KUBE_OP_GT;
            break;
        case TOK_LT:
            op = KUBE_OP_LT;
            break;
        case TOK_NOT_IN:
            op = KUBE_OP_NOT_IN;
            break;
        case TOK_NOT_EQUALS:
            op = KUBE_OP_NOT_EQUALS;
            break;
        default:
            rc = fail_at(p, t, -EINVAL, "found '%.*s', expected: in, notin, =, ==, !=, gt, lt",
                         LIT(t));
            goto out;
        }
        if (op == KUBE_OP_IN || op == KUBE_OP_NOT_IN) {
            valtok = &p->t[p->i];
            rc = parse_values(p);
            if (rc)
                goto out;
        } else {
            /* parseExactValue */
            t = lookahead(p, CTX_VALUES, &tok);
            valtok = t;
            if (tok == TOK_END || tok == TOK_COMMA) {
                rc = set_insert(&p->set, "", 0);
                if (rc) {
                    rc = err_set(p->err, -ENOMEM, "out of memory");
                    goto out;
                }
            } else {
                t = consume(p, CTX_VALUES, &tok);
                if (tok != TOK_IDENT) {
                    rc = fail_at(p, t, -EINVAL, "found '%.*s', expected: identifier", LIT(t));
                    goto out;
                }
                if (set_insert(&p->set, t->lit, t->len)) {
                    rc = err_set(p->err, -ENOMEM, "out of memory");
                    goto out;
                }
            }
        }
    }
    rc = new_requirement(p, keytok, key, op, valtok);
out:
    free(key);
    return rc;
}

struct req_at {
    struct kube_requirement r;
    size_t at; /* position in the input, so equal keys keep their order */
};

static int cmp_req_at(const void *x, const void *y)
{
    const struct req_at *a = x, *b = y;
    int c = strcmp(a->r.key, b->r.key);

    if (c)
        return c;
    return a->at < b->at ? -1 : a->at > b->at;
}

/* sort_reqs_stable sorts by key like sort.Sort(ByKey) does on short selectors (stable). */
static int sort_reqs_stable(struct kube_requirement *r, size_t n)
{
    struct req_at *t;
    size_t i;

    if (n < 2)
        return 0;
    t = malloc(n * sizeof(*t));
    if (!t)
        return -ENOMEM;
    for (i = 0; i < n; i++) {
        t[i].r = r[i];
        t[i].at = i;
    }
    qsort(t, n, sizeof(*t), cmp_req_at);
    for (i = 0; i < n; i++)
        r[i] = t[i].r;
    free(t);
    return 0;
}

int kube_selector_parse(const char *s, struct arena *a, struct kube_selector *sel, struct err *err)
{
    struct parser p;
    enum tok tok;
    const struct token *t;
    int rc = 0;

    memset(&p, 0, sizeof(p));
    memset(sel, 0, sizeof(*sel));
    p.src = s ? s : "";
    p.a = a;
    p.err = err;
    rc = lex_all(p.src, &p.t, &p.nt);
    if (rc) {
        err_set(err, rc, "out of memory");
        return rc;
    }
    for (;;) {
        t = lookahead(&p, CTX_VALUES, &tok);
        if (tok == TOK_END)
            break;
        if (tok != TOK_IDENT && tok != TOK_NOT) {
            rc = fail_at(&p, t, -EINVAL,
                         "found '%.*s', expected: !, identifier, or 'end of string'", LIT(t));
            goto out;
        }
        rc = parse_requirement(&p);
        if (rc) {
            if (rc == -EINVAL)
                err_prefix(err, "unable to parse requirement");
            goto out;
        }
        t = consume(&p, CTX_VALUES, &tok);
        if (tok == TOK_END)
            break;
        if (tok != TOK_COMMA) {
            rc = fail_at(&p, t, -EINVAL, "found '%.*s', expected: ',' or 'end of string'", LIT(t));
            goto out;
        }
        t = lookahead(&p, CTX_VALUES, &tok);
        if (tok != TOK_IDENT && tok != TOK_NOT) {
            rc = fail_at(&p, t, -EINVAL, "found '%.*s', expected: identifier after ','", LIT(t));
            goto out;
        }
    }
    if (sort_reqs_stable(p.reqs, p.nreqs)) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    sel->reqs = p.reqs;
    sel->nreqs = p.nreqs;
out:
    set_clear(&p.set);
    free(p.set.v);
    free(p.t);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Matching                                                                                   */

const char *kube_labels_get(const struct kube_labels *l, const char *key)
{
    size_t lo = 0, hi;

    if (!l || !key)
        return NULL;
    hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(l->v[mid].key, key);

        if (c == 0)
            return l->v[mid].value;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static bool req_has_value(const struct kube_requirement *r, const char *v)
{
    size_t lo = 0, hi = r->nvalues;

    /* values are sorted for In/NotIn; the others hold one value */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(r->values[mid], v);

        if (c == 0)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

bool kube_requirement_matches(const struct kube_requirement *r, const struct kube_labels *l)
{
    const char *v;
    int64_t lv, rv;

    if (r->invalid)
        return false;
    v = kube_labels_get(l, r->key);
    switch (r->op) {
    case KUBE_OP_IN:
    case KUBE_OP_EQUALS:
    case KUBE_OP_DOUBLE_EQUALS:
        return v && req_has_value(r, v);
    case KUBE_OP_NOT_IN:
    case KUBE_OP_NOT_EQUALS:
        return !v || !req_has_value(r, v);
    case KUBE_OP_EXISTS:
        return v != NULL;
    case KUBE_OP_DOES_NOT_EXIST:
        return v == NULL;
    case KUBE_OP_GT:
    case KUBE_OP_LT:
        if (!v || r->nvalues != 1 || go_parse_int(v, strlen(v), 10, 64, &lv, NULL) ||
            go_parse_int(r->values[0], strlen(r->values[0]), 10, 64, &rv, NULL))
            return false;
        return r->op == KUBE_OP_GT ? lv > rv : lv < rv;
    }
    return false;
}

bool kube_selector_matches(const struct kube_selector *sel, const struct kube_labels *l)
{
    size_t i;

    for (i = 0; i < sel->nreqs; i++)
        if (!kube_requirement_matches(&sel->reqs[i], l))
            return false;
    return true;
}

bool kube_label_selector_matches(const struct kube_label_selector *sel, const struct kube_labels *l)
{
    size_t i;

    if (!sel || !sel->present)
        return false;
    for (i = 0; i < sel->nreqs; i++)
        if (!kube_requirement_matches(&sel->reqs[i], l))
            return false;
    return true;
}

/* ---------------------------------------------------------------------------------------- */
/* String()                                                                                   */

const char *kube_selector_string(const struct kube_selector *sel, char *buf, size_t size)
{
    struct buf b = BUF_INIT(0);
    size_t i, j;

    if (!size)
        return buf;
    for (i = 0; i < sel->nreqs; i++) {
        const struct kube_requirement *r = &sel->reqs[i];

        if (i)
            buf_puts(&b, ",");
        if (r->op == KUBE_OP_DOES_NOT_EXIST)
            buf_puts(&b, "!");
        buf_puts(&b, r->key);
        switch (r->op) {
        case KUBE_OP_EQUALS:
            buf_puts(&b, "=");
            break;
        case KUBE_OP_DOUBLE_EQUALS:
            buf_puts(&b, "==");
            break;
        case KUBE_OP_NOT_EQUALS:
            buf_puts(&b, "!=");
            break;
        case KUBE_OP_IN:
            buf_puts(&b, " in (");
            break;
        case KUBE_OP_NOT_IN:
            buf_puts(&b, " notin (");
            break;
        case KUBE_OP_GT:
            buf_puts(&b, ">");
            break;
        case KUBE_OP_LT:
            buf_puts(&b, "<");
            break;
        case KUBE_OP_EXISTS:
        case KUBE_OP_DOES_NOT_EXIST:
            continue;
        }
        for (j = 0; j < r->nvalues; j++) {
            if (j)
                buf_puts(&b, ",");
            buf_puts(&b, r->values[j]);
        }
        if (r->op == KUBE_OP_IN || r->op == KUBE_OP_NOT_IN)
            buf_puts(&b, ")");
    }
    /* a string longer than the caller's buffer is cut short, like snprintf */
    snprintf(buf, size, "%s", b.data ? b.data : "");
    buf_release(&b);
    return buf;
}
