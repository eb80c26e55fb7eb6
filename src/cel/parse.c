/* parse.c - CEL's lexer and parser (cel-spec langdef.md; cel-go's CEL.g4 and visitor).
 *
 * The lexer reproduces the ANTLR lexer cel-go generates: longest match, earlier rule on a tie,
 * and on a character no rule accepts, "token recognition error at: '...'" with the text up to
 * and including that character, which is then skipped. The parser is recursive descent over
 * the same grammar with every recursion counted against cel-go's limit; it builds the tree
 * cel-go's visitor builds (balanced && and || chains, signed literals, macros expanded) and
 * places every node where cel-go places it. Syntax errors follow ANTLR's wording; after the
 * first one the parser stops (ANTLR goes on recovering and may report more). */
#include "cel/ast.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cel/utf8.h"

enum {
    T_EOF = -1,
    T_EQ = 1,
    T_NE,
    T_IN,
    T_LT,
    T_LE,
    T_GE,
    T_GT,
    T_AND,
    T_OR,
    T_LBRACKET,
    T_RBRACKET,
    T_LBRACE,
    T_RBRACE,
    T_LPAREN,
    T_RPAREN,
    T_DOT,
    T_COMMA,
    T_MINUS,
    T_EXCLAM,
    T_QUESTION,
    T_COLON,
    T_PLUS,
    T_STAR,
    T_SLASH,
    T_PERCENT,
    T_TRUE,
    T_FALSE,
    T_NULL,
    T_WS,
    T_COMMENT,
    T_NUM_FLOAT,
    T_NUM_INT,
    T_NUM_UINT,
    T_STRING,
    T_BYTES,
    T_IDENT,
    T_ESC_IDENT,
    T_NTYPES
};

static const char *const tok_names[T_NTYPES] = {
    [T_EQ] = "'=='",
    [T_NE] = "'!='",
    [T_IN] = "'in'",
    [T_LT] = "'<'",
    [T_LE] = "'<='",
    [T_GE] = "'>='",
    [T_GT] = "'>'",
    [T_AND] = "'&&'",
    [T_OR] = "'||'",
    [T_LBRACKET] = "'['",
    [T_RBRACKET] = "']'",
    [T_LBRACE] = "'{'",
    [T_RBRACE] = "'}'",
    [T_LPAREN] = "'('",
    [T_RPAREN] = "')'",
    [T_DOT] = "'.'",
    [T_COMMA] = "','",
    [T_MINUS] = "'-'",
    [T_EXCLAM] = "'!'",
    [T_QUESTION] = "'?'",
    [T_COLON] = "':'",
    [T_PLUS] = "'+'",
    [T_STAR] = "'*'",
    [T_SLASH] = "'/'",
    [T_PERCENT] = "'%'",
    [T_TRUE] = "'true'",
    [T_FALSE] = "'false'",
    [T_NULL] = "'null'",
    [T_WS] = "WHITESPACE",
    [T_COMMENT] = "COMMENT",
    [T_NUM_FLOAT] = "NUM_FLOAT",
    [T_NUM_INT] = "NUM_INT",
    [T_NUM_UINT] = "NUM_UINT",
    [T_STRING] = "STRING",
    [T_BYTES] = "BYTES",
    [T_IDENT] = "IDENTIFIER",
    [T_ESC_IDENT] = "ESC_IDENTIFIER",
};

struct tok {
    int type;
    int32_t start, stop; /* code-point offsets, stop inclusive */
};

/* ---- lexer ---- */

static int is_digit(uint32_t c)
{
    return c >= '0' && c <= '9';
}
static int is_hex(uint32_t c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static int is_letter(uint32_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A rule's result at a position: the longest accepted length (-1: none) and how far it got
 * before a character no path of the rule accepts (that character is not counted). */
struct lexm {
    int32_t acc, via;
};

static void lexm_max(struct lexm *m, int32_t acc, int32_t via)
{
    if (acc > m->acc)
        m->acc = acc;
    if (via > m->via)
        m->via = via;
}

/* An escape sequence at i (c[i] == '\\'): returns its length, or -(chars matched) when it
 * fails at the character after those. */
static int32_t lex_escape(const uint32_t *c, int32_t i, int32_t n)
{
    int32_t j = i + 1, need = 0;

    if (j >= n)
        return -1;
    switch (c[j]) {
    case 'a':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
    case 'v':
    case '"':
    case '\'':
    case '\\':
    case '?':
    case '`':
        return 2;
    case '0':
    case '1':
    case '2':
    case '3':
        for (int k = 1; k <= 2; k++)
            if (j + k >= n || c[j + k] < '0' || c[j + k] > '7')
                return -(1 + k);
        return 4;
    case 'x':
    case 'X':
        need = 2;
        break;
    case 'u':
        need = 4;
        break;
    case 'U':
        need = 8;
        break;
    default:
        return -1;
    }
    for (int k = 1; k <= need; k++)
        if (j + k >= n || !is_hex(c[j + k]))
            return -(1 + k);
    return 2 + need;
}

/* A quoted string body starting at p (the opening quote). raw: no escapes. triple: ''' or """. */
static void lex_quoted(const uint32_t *c, int32_t p, int32_t n, uint32_t q, int raw, int triple,
                       struct lexm *m)
{
    int32_t i = p, open = triple ? 3 : 1;

    for (int k = 0; k < open; k++) {
        if (i >= n || c[i] != q) {
            lexm_max(m, -1, i - p);
            return;
        }
        i++;
    }
    for (;;) {
        if (i >= n) {
            lexm_max(m, -1, i - p);
            return;
        }
        if (triple) {
            if (i + 2 < n && c[i] == q && c[i + 1] == q && c[i + 2] == q) {
                lexm_max(m, i + 3 - p, i + 3 - p);
                return;
            }
        } else if (c[i] == q) {
            lexm_max(m, i + 1 - p, i + 1 - p);
            return;
        } else if (c[i] == '\n' || c[i] == '\r') {
            lexm_max(m, -1, i - p);
            return;
        }
        if (c[i] == '\\' && !raw) {
            int32_t e = lex_escape(c, i, n);
            if (e < 0) {
                lexm_max(m, -1, i - p - e);
                return;
            }
            i += e;
            continue;
        }
        i++;
    }
}

/* STRING at p: every quoting form, raw or not. */
static struct lexm lex_string(const uint32_t *c, int32_t p, int32_t n)
{
    struct lexm m = {-1, 0};
    int raw = 0;
    int32_t s = p;

    if (p < n && (c[p] == 'r' || c[p] == 'R')) {
        raw = 1;
        s = p + 1;
        m.via = 1;
    }
    if (s >= n || (c[s] != '"' && c[s] != '\'')) {
        return m;
    }
    {
        struct lexm a = {-1, 0};
        lex_quoted(c, s, n, c[s], raw, 0, &a);
        lex_quoted(c, s, n, c[s], raw, 1, &a);
        if (a.acc >= 0)
            a.acc += s - p;
        a.via += s - p;
        lexm_max(&m, a.acc, a.via);
    }
    return m;
}

/* Numbers at p: NUM_FLOAT, NUM_INT, NUM_UINT. */
static void lex_number(const uint32_t *c, int32_t p, int32_t n, struct lexm *fl, struct lexm *in,
                       struct lexm *ui)
{
    int32_t i = p, d;

    fl->acc = in->acc = ui->acc = -1;
    fl->via = in->via = ui->via = 0;
    if (c[p] == '.') {
        i = p + 1;
        if (i >= n || !is_digit(c[i])) {
            fl->via = 1;
            return;
        }
        while (i < n && is_digit(c[i]))
            i++;
        goto exponent_opt;
    }
    while (i < n && is_digit(c[i]))
        i++;
    d = i - p;
    in->acc = in->via = d;
    ui->via = d;
    if (i < n && (c[i] == 'u' || c[i] == 'U'))
        ui->acc = ui->via = d + 1;
    if (c[p] == '0' && d == 1 && i < n && c[i] == 'x') {
        int32_t j = i + 1;
        while (j < n && is_hex(c[j]))
            j++;
        if (j == i + 1) {
            if (in->via < 2)
                in->via = 2;
        } else {
            in->acc = in->via = j - p;
            ui->via = j - p;
            if (j < n && (c[j] == 'u' || c[j] == 'U'))
                ui->acc = ui->via = j + 1 - p;
        }
    }
    fl->via = d;
    if (i < n && c[i] == '.') {
        i++;
        if (i >= n || !is_digit(c[i])) {
            fl->via = i - p;
        } else {
            while (i < n && is_digit(c[i]))
                i++;
            goto exponent_opt;
        }
    }
    /* DIGIT+ EXPONENT */
    i = p + d;
    if (i < n && (c[i] == 'e' || c[i] == 'E')) {
        int32_t j = i + 1;
        if (j < n && (c[j] == '+' || c[j] == '-'))
            j++;
        if (j < n && is_digit(c[j])) {
            while (j < n && is_digit(c[j]))
                j++;
            if (j - p > fl->acc)
                fl->acc = j - p;
            if (j - p > fl->via)
                fl->via = j - p;
        } else if (j - p > fl->via) {
            fl->via = j - p;
        }
    }
    return;
exponent_opt:
    fl->acc = fl->via = i - p;
    if (i < n && (c[i] == 'e' || c[i] == 'E')) {
        int32_t j = i + 1;
        if (j < n && (c[j] == '+' || c[j] == '-'))
            j++;
        if (j < n && is_digit(c[j])) {
            while (j < n && is_digit(c[j]))
                j++;
            fl->acc = fl->via = j - p;
        } else {
            fl->via = j - p;
        }
    }
}

struct lexer {
    const struct cel_source *src;
    struct cel_diags *diags;
    struct arena *a;
    struct tok *toks;
    int32_t ntoks, alloc;
};

static int lex_push(struct lexer *lx, int type, int32_t start, int32_t stop)
{
    if (lx->ntoks == lx->alloc) {
        int32_t na = lx->alloc ? lx->alloc * 2 : 64;
        struct tok *t = realloc(lx->toks, (size_t)na * sizeof(*t));
        if (!t)
            return -ENOMEM;
        lx->toks = t;
        lx->alloc = na;
    }
    lx->toks[lx->ntoks].type = type;
    lx->toks[lx->ntoks].start = start;
    lx->toks[lx->ntoks].stop = stop;
    lx->ntoks++;
    return 0;
}

/* Appends the display form of code points [from, to) (ANTLR's getErrorDisplay). */
static void display_cps(struct buf *b, const uint32_t *c, int32_t from, int32_t to)
{
    for (int32_t i = from; i < to; i++) {
        char tmp[4];
        if (c[i] == '\n')
            buf_puts(b, "\\n");
        else if (c[i] == '\t')
            buf_puts(b, "\\t");
        else if (c[i] == '\r')
            buf_puts(b, "\\r");
        else
            buf_append(b, tmp, cel_utf8_encode(c[i], tmp));
    }
}

/* Lexes the whole source into lx->toks (hidden tokens dropped), ending with EOF. */
static int lex_all(struct lexer *lx)
{
    const uint32_t *c = lx->src->cp;
    int32_t n = lx->src->ncp, p = 0;

    while (p < n) {
        /* Each rule's longest accept and reach; priority is the order of CEL.g4's rules. */
        int best = 0;
        int32_t acc = -1, via = 0;
        uint32_t ch = c[p];
        int32_t nx = p + 1 < n ? (int32_t)c[p + 1] : -1;

#define CAND(type_, acc_, via_)                                                                    \
    do {                                                                                           \
        int32_t a_ = (acc_), v_ = (via_);                                                          \
        if (a_ > acc) {                                                                            \
            acc = a_;                                                                              \
            best = (type_);                                                                        \
        }                                                                                          \
        if (v_ > via)                                                                              \
            via = v_;                                                                              \
    } while (0)

        switch (ch) {
        case '=':
            CAND(T_EQ, nx == '=' ? 2 : -1, nx == '=' ? 2 : 1);
            break;
        case '!':
            CAND(T_NE, nx == '=' ? 2 : -1, nx == '=' ? 2 : 1);
            CAND(T_EXCLAM, 1, 1);
            break;
        case '<':
            CAND(T_LT, 1, 1);
            CAND(T_LE, nx == '=' ? 2 : -1, nx == '=' ? 2 : 1);
            break;
        case '>':
            CAND(T_GE, nx == '=' ? 2 : -1, nx == '=' ? 2 : 1);
            CAND(T_GT, 1, 1);
            break;
        case '&':
            CAND(T_AND, nx == '&' ? 2 : -1, nx == '&' ? 2 : 1);
            break;
        case '|':
            CAND(T_OR, nx == '|' ? 2 : -1, nx == '|' ? 2 : 1);
            break;
        case '[':
            CAND(T_LBRACKET, 1, 1);
            break;
        case ']':
            CAND(T_RBRACKET, 1, 1);
            break;
        case '{':
            CAND(T_LBRACE, 1, 1);
            break;
        case '}':
            CAND(T_RBRACE, 1, 1);
            break;
        case '(':
            CAND(T_LPAREN, 1, 1);
            break;
        case ')':
            CAND(T_RPAREN, 1, 1);
            break;
        case ',':
            CAND(T_COMMA, 1, 1);
            break;
        case '-':
            CAND(T_MINUS, 1, 1);
            break;
        case '?':
            CAND(T_QUESTION, 1, 1);
            break;
        case ':':
            CAND(T_COLON, 1, 1);
            break;
        case '+':
            CAND(T_PLUS, 1, 1);
            break;
        case '*':
            CAND(T_STAR, 1, 1);
            break;
        case '%':
            CAND(T_PERCENT, 1, 1);
            break;
        case '/': {
            CAND(T_SLASH, 1, 1);
            if (nx == '/') {
                int32_t j = p + 2;
                while (j < n && c[j] != '\n')
                    j++;
                CAND(T_COMMENT, j - p, j - p);
            }
            break;
        }
        case ' ':
        case '\t':
        case '\r':
        case '\n':
        case '\f': {
            int32_t j = p;
            while (j < n &&
                   (c[j] == ' ' || c[j] == '\t' || c[j] == '\r' || c[j] == '\n' || c[j] == '\f'))
                j++;
            CAND(T_WS, j - p, j - p);
            break;
        }
        case '`': {
            int32_t j = p + 1;
            while (j < n && (is_letter(c[j]) || is_digit(c[j]) || c[j] == '_' || c[j] == '.' ||
                             c[j] == '-' || c[j] == '/' || c[j] == ' '))
                j++;
            if (j > p + 1 && j < n && c[j] == '`')
                CAND(T_ESC_IDENT, j + 1 - p, j + 1 - p);
            else
                CAND(T_ESC_IDENT, -1, j - p);
            break;
        }
        case '"':
        case '\'': {
            struct lexm m = lex_string(c, p, n);
            CAND(T_STRING, m.acc, m.via);
            break;
        }
        default:
            if (is_digit(ch) || ch == '.') {
                struct lexm fl, in, ui;
                if (ch == '.')
                    CAND(T_DOT, 1, 1);
                lex_number(c, p, n, &fl, &in, &ui);
                CAND(T_NUM_FLOAT, fl.acc, fl.via);
                CAND(T_NUM_INT, in.acc, in.via);
                CAND(T_NUM_UINT, ui.acc, ui.via);
            } else if (is_letter(ch) || ch == '_') {
                int32_t j = p + 1, len;
                while (j < n && (is_letter(c[j]) || is_digit(c[j]) || c[j] == '_'))
                    j++;
                len = j - p;
                /* keywords come before STRING, BYTES and IDENTIFIER in the grammar */
                if (len == 2 && c[p] == 'i' && c[p + 1] == 'n')
                    CAND(T_IN, 2, 2);
                else if (len == 4 && c[p] == 't' && c[p + 1] == 'r' && c[p + 2] == 'u' &&
                         c[p + 3] == 'e')
                    CAND(T_TRUE, 4, 4);
                else if (len == 5 && c[p] == 'f' && c[p + 1] == 'a' && c[p + 2] == 'l' &&
                         c[p + 3] == 's' && c[p + 4] == 'e')
                    CAND(T_FALSE, 5, 5);
                else if (len == 4 && c[p] == 'n' && c[p + 1] == 'u' && c[p + 2] == 'l' &&
                         c[p + 3] == 'l')
                    CAND(T_NULL, 4, 4);
                if (ch == 'r' || ch == 'R') {
                    struct lexm m = lex_string(c, p, n);
                    CAND(T_STRING, m.acc, m.via);
                }
                if (ch == 'b' || ch == 'B') {
                    struct lexm m = lex_string(c, p + 1, n);
                    CAND(T_BYTES, m.acc >= 0 ? m.acc + 1 : -1, m.via + 1);
                }
                CAND(T_IDENT, len, len);
            }
            break;
        }
#undef CAND
        if (acc > 0) {
            if (best != T_WS && best != T_COMMENT)
                if (lex_push(lx, best, p, p + acc - 1) < 0)
                    return -ENOMEM;
            p += acc;
            continue;
        }
        {
            /* No rule accepts: report the text up to and including the failing character,
             * then skip that character (ANTLR's Lexer.recover). */
            struct buf b = BUF_INIT(0);
            int32_t fail = p + via, end = fail < n ? fail + 1 : n;
            /* the Go runtime prints the text as it is (no escapes) */
            for (int32_t i = p; i < end; i++) {
                char tmp[4];
                buf_append(&b, tmp, cel_utf8_encode(c[i], tmp));
            }
            cel_diags_add(lx->diags, 0, p, "Syntax error: token recognition error at: '%s'",
                          b.data ? b.data : "");
            buf_release(&b);
            p = end;
        }
    }
    return lex_push(lx, T_EOF, n, n - 1);
}

/* ---- parser ---- */

struct parser {
    struct arena *a;
    const struct cel_source *src;
    const struct cel_parse_opts *opts;
    struct cel_ids *ids;
    struct cel_diags *diags;
    struct tok *toks;
    int32_t ntoks, pos;
    /* ANTLR's parse listener counts the nesting of each rule separately (left-recursive rules
     * count every operator or suffix of a chain); cel-go fails past max_depth. */
    int d_expr, d_rel, d_calc, d_member, max_depth;
    bool failed; /* a syntax error stopped the parse */
    bool nomem;
};

/* Ids: every node gets the offset range cel-go gives it. */
static int32_t new_id(struct parser *p, int32_t start, int32_t stop)
{
    struct cel_ids *ids = p->ids;

    if (ids->n == ids->alloc) {
        int32_t na = ids->alloc ? ids->alloc * 2 : 64;
        int32_t *s = realloc(ids->start, (size_t)na * sizeof(int32_t));
        int32_t *t;
        if (!s) {
            p->nomem = true;
            return 0;
        }
        ids->start = s;
        t = realloc(ids->stop, (size_t)na * sizeof(int32_t));
        if (!t) {
            p->nomem = true;
            return 0;
        }
        ids->stop = t;
        ids->alloc = na;
    }
    ids->start[ids->n] = start;
    ids->stop[ids->n] = stop;
    return ids->n++;
}

int32_t cel_ids_offset(const struct cel_ids *ids, int32_t id)
{
    if (id <= 0 || id >= ids->n)
        return -1;
    return ids->start[id];
}

static int32_t tok_id(struct parser *p, const struct tok *t)
{
    return new_id(p, t->start, t->stop + 1);
}

/* An id at the location of another id (macro expansions). */
static int32_t id_at(struct parser *p, int32_t id)
{
    int32_t off = cel_ids_offset(p->ids, id);
    return new_id(p, off, off);
}

static struct cel_expr *new_expr(struct parser *p, enum cel_expr_kind kind, int32_t id)
{
    struct cel_expr *e = arena_alloc(p->a, sizeof(*e));

    if (!e) {
        p->nomem = true;
        return NULL;
    }
    e->id = id;
    e->kind = kind;
    return e;
}

static const char *cps_utf8(struct parser *p, int32_t from, int32_t to, uint32_t *len)
{
    size_t n = 0;
    char *s, *o;

    for (int32_t i = from; i < to; i++)
        n += cel_utf8_len(p->src->cp[i]);
    s = arena_alloc(p->a, n + 1);
    if (!s) {
        p->nomem = true;
        return "";
    }
    o = s;
    for (int32_t i = from; i < to; i++)
        o += cel_utf8_encode(p->src->cp[i], o);
    *o = 0;
    if (len)
        *len = (uint32_t)n;
    return s;
}

static const char *tok_text(struct parser *p, const struct tok *t)
{
    if (t->type == T_EOF)
        return "<EOF>";
    return cps_utf8(p, t->start, t->stop + 1, NULL);
}

static const struct tok *la(struct parser *p, int k)
{
    int32_t i = p->pos + k - 1;

    if (i >= p->ntoks)
        i = p->ntoks - 1;
    return &p->toks[i];
}

/* Reports an error at offset and returns an unspecified node there. */
static struct cel_expr *error_at(struct parser *p, int32_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static struct cel_expr *error_at(struct parser *p, int32_t offset, const char *fmt, ...)
{
    int32_t id = new_id(p, offset, offset);
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cel_diags_add(p->diags, id, offset, "%s", msg);
    return new_expr(p, CEL_E_UNSPEC, id);
}

/* The token display of ANTLR error messages: text with \n \t \r escaped, quoted. */
static void tok_display(struct parser *p, struct buf *b, const struct tok *t)
{
    buf_puts(b, "'");
    if (t->type == T_EOF)
        buf_puts(b, "<EOF>");
    else
        display_cps(b, p->src->cp, t->start, t->stop + 1);
    buf_puts(b, "'");
}

/* Token sets as bitmasks over token types (EOF is bit 0). */
typedef uint64_t tokset;
#define TS(t) ((tokset)1 << ((t) == T_EOF ? 0 : (t)))
#define SET_PRIMARY                                                                                \
    (TS(T_LBRACKET) | TS(T_LBRACE) | TS(T_LPAREN) | TS(T_DOT) | TS(T_MINUS) | TS(T_TRUE) |         \
     TS(T_FALSE) | TS(T_NULL) | TS(T_NUM_FLOAT) | TS(T_NUM_INT) | TS(T_NUM_UINT) | TS(T_STRING) |  \
     TS(T_BYTES) | TS(T_IDENT))
#define SET_EXPR (SET_PRIMARY | TS(T_EXCLAM))

static void set_display(struct buf *b, tokset s)
{
    int n = 0;

    for (int t = 0; t < T_NTYPES; t++)
        if (s & ((tokset)1 << t))
            n++;
    if (n == 1) {
        for (int t = 0; t < T_NTYPES; t++)
            if (s & ((tokset)1 << t))
                buf_puts(b, t == 0 ? "<EOF>" : tok_names[t]);
        return;
    }
    buf_puts(b, "{");
    n = 0;
    for (int t = 0; t < T_NTYPES; t++) {
        if (!(s & ((tokset)1 << t)))
            continue;
        if (n++)
            buf_puts(b, ", ");
        buf_puts(b, t == 0 ? "<EOF>" : tok_names[t]);
    }
    buf_puts(b, "}");
}

/* A syntax error at the current token: "extraneous input" when the token after it is what was
 * expected (ANTLR's single-token deletion), else "mismatched input". The parse stops. */
static struct cel_expr *syntax_error(struct parser *p, tokset expected)
{
    struct buf b = BUF_INIT(0);
    const struct tok *t = la(p, 1), *t2 = la(p, 2);
    int32_t off = t->start;

    if (p->failed)
        return new_expr(p, CEL_E_UNSPEC, 0);
    p->failed = true;
    if (t->type != T_EOF && (expected & TS(t2->type)))
        buf_puts(&b, "Syntax error: extraneous input ");
    else
        buf_puts(&b, "Syntax error: mismatched input ");
    tok_display(p, &b, t);
    buf_puts(&b, " expecting ");
    set_display(&b, expected);
    cel_diags_add(p->diags, 0, off, "%s", b.data ? b.data : "");
    buf_release(&b);
    return new_expr(p, CEL_E_UNSPEC, 0);
}

static struct cel_expr *no_viable(struct parser *p, const struct tok *from, const struct tok *at)
{
    struct buf b = BUF_INIT(0);

    if (p->failed)
        return new_expr(p, CEL_E_UNSPEC, 0);
    p->failed = true;
    buf_puts(&b, "Syntax error: no viable alternative at input '");
    for (const struct tok *t = from; t <= at && t->type != T_EOF; t++) {
        if (t > from && t[-1].stop + 1 < t->start)
            display_cps(&b, p->src->cp, t[-1].stop + 1, t->start);
        display_cps(&b, p->src->cp, t->start, t->stop + 1);
    }
    buf_puts(&b, "'");
    cel_diags_add(p->diags, 0, at->start, "%s", b.data);
    buf_release(&b);
    return new_expr(p, CEL_E_UNSPEC, 0);
}

static bool enter(struct parser *p, int *counter)
{
    if (++*counter > p->max_depth) {
        if (!p->failed) {
            p->failed = true;
            cel_diags_add(p->diags, 0, -1, "expression recursion limit exceeded: %d", p->max_depth);
        }
        return false;
    }
    return true;
}

static struct cel_expr *parse_expr(struct parser *p);

/* Node builders */

static struct cel_expr *mk_call(struct parser *p, int32_t id, const char *fn,
                                struct cel_expr *target, struct cel_expr **args, int nargs)
{
    struct cel_expr *e = new_expr(p, CEL_E_CALL, id);
    struct cel_expr **v = NULL;

    if (!e)
        return NULL;
    if (nargs) {
        v = arena_alloc(p->a, (size_t)nargs * sizeof(*v));
        if (!v) {
            p->nomem = true;
            return NULL;
        }
        memcpy(v, args, (size_t)nargs * sizeof(*v));
    }
    e->u.call.fn = fn;
    e->u.call.target = target;
    e->u.call.args = v;
    e->u.call.nargs = nargs;
    return e;
}

static struct cel_expr *mk_call2(struct parser *p, int32_t id, const char *fn, struct cel_expr *a,
                                 struct cel_expr *b)
{
    struct cel_expr *v[2] = {a, b};
    return mk_call(p, id, fn, NULL, v, 2);
}

static struct cel_expr *mk_ident(struct parser *p, int32_t id, const char *name)
{
    struct cel_expr *e = new_expr(p, CEL_E_IDENT, id);
    if (e)
        e->u.ident = name;
    return e;
}

static struct cel_expr *mk_lit(struct parser *p, int32_t id, struct cel_lit lit)
{
    struct cel_expr *e = new_expr(p, CEL_E_LIT, id);
    if (e)
        e->u.lit = lit;
    return e;
}

static struct cel_expr *mk_bool(struct parser *p, int32_t id, bool b)
{
    struct cel_lit l = {.kind = CEL_LIT_BOOL, .v.b = b};
    return mk_lit(p, id, l);
}

static struct cel_expr *mk_int(struct parser *p, int32_t id, int64_t i)
{
    struct cel_lit l = {.kind = CEL_LIT_INT, .v.i = i};
    return mk_lit(p, id, l);
}

static struct cel_expr *mk_list(struct parser *p, int32_t id, struct cel_expr **elems, int n)
{
    struct cel_expr *e = new_expr(p, CEL_E_LIST, id);
    if (!e)
        return NULL;
    if (n) {
        e->u.list.elems = arena_alloc(p->a, (size_t)n * sizeof(*elems));
        if (!e->u.list.elems) {
            p->nomem = true;
            return NULL;
        }
        memcpy(e->u.list.elems, elems, (size_t)n * sizeof(*elems));
    }
    e->u.list.n = n;
    return e;
}

static char *pstrdup(struct parser *p, const char *s)
{
    char *r = arena_strdup(p->a, s);
    if (!r)
        p->nomem = true;
    return r;
}

/* ---- macros ---- */

#define ACCU "@result"

/* A macro's error: reported at the argument's location, the whole call becomes an error. */
static struct cel_expr *macro_error(struct parser *p, int32_t at_id, const char *msg)
{
    return error_at(p, cel_ids_offset(p->ids, at_id), "%s", msg);
}

static struct cel_expr *mk_comp(struct parser *p, int32_t call_id, struct cel_expr *range,
                                const char *iter, const char *iter2, const char *accu,
                                struct cel_expr *init, struct cel_expr *cond, struct cel_expr *step,
                                struct cel_expr *result)
{
    struct cel_expr *e = new_expr(p, CEL_E_COMP, id_at(p, call_id));
    if (!e)
        return NULL;
    e->u.comp.range = range;
    e->u.comp.iter = iter;
    e->u.comp.iter2 = iter2;
    e->u.comp.accu = accu;
    e->u.comp.init = init;
    e->u.comp.cond = cond;
    e->u.comp.step = step;
    e->u.comp.result = result;
    return e;
}

static struct cel_expr *accu_ident(struct parser *p, int32_t cid)
{
    return mk_ident(p, id_at(p, cid), ACCU);
}

/* The quantifier and transform macros; kind: 'a' all, 'e' exists, '1' exists_one, 'm' map,
 * 'f' filter. two: the two-variable form (args[0], args[1] are the variables). */
static struct cel_expr *expand_comprehension(struct parser *p, int32_t cid, char kind, bool two,
                                             struct cel_expr *target, struct cel_expr **args,
                                             int nargs)
{
    const char *v1 = NULL, *v2 = NULL;
    int body = two ? 2 : 1;
    struct cel_expr *init, *cond, *step, *result;

    if (two) {
        for (int k = 0; k < 2; k++) {
            if (args[k]->kind != CEL_E_IDENT)
                return macro_error(p, args[k]->id, "argument must be a simple name");
        }
        v1 = args[0]->u.ident;
        v2 = args[1]->u.ident;
        if (!strcmp(v1, v2)) {
            char msg[300];
            snprintf(msg, sizeof(msg), "duplicate variable name: %s", v1);
            return macro_error(p, args[1]->id, msg);
        }
        if (!strcmp(v1, ACCU) || !strcmp(v1, "__result__"))
            return macro_error(p, args[0]->id,
                               "iteration variable overwrites accumulator variable");
        if (!strcmp(v2, ACCU) || !strcmp(v2, "__result__"))
            return macro_error(p, args[1]->id,
                               "iteration variable overwrites accumulator variable");
    } else {
        if (args[0]->kind != CEL_E_IDENT)
            return macro_error(p, args[0]->id,
                               (kind == 'm' || kind == 'f') ? "argument is not an identifier"
                                                            : "argument must be a simple name");
        v1 = args[0]->u.ident;
        if (!strcmp(v1, ACCU) || !strcmp(v1, "__result__"))
            return macro_error(p, args[0]->id,
                               "iteration variable overwrites accumulator variable");
    }
    switch (kind) {
    case 'a':
        init = mk_bool(p, id_at(p, cid), true);
        {
            struct cel_expr *a1 = accu_ident(p, cid);
            cond = mk_call(p, id_at(p, cid), "@not_strictly_false", NULL, &a1, 1);
        }
        step = mk_call2(p, id_at(p, cid), "_&&_", accu_ident(p, cid), args[body]);
        result = accu_ident(p, cid);
        break;
    case 'e':
        init = mk_bool(p, id_at(p, cid), false);
        {
            struct cel_expr *a1 = accu_ident(p, cid);
            struct cel_expr *nt = mk_call(p, id_at(p, cid), "!_", NULL, &a1, 1);
            cond = mk_call(p, id_at(p, cid), "@not_strictly_false", NULL, &nt, 1);
        }
        step = mk_call2(p, id_at(p, cid), "_||_", accu_ident(p, cid), args[body]);
        result = accu_ident(p, cid);
        break;
    case '1': {
        struct cel_expr *c3[3];
        init = mk_int(p, id_at(p, cid), 0);
        cond = mk_bool(p, id_at(p, cid), true);
        c3[0] = args[body];
        c3[1] = mk_call2(p, id_at(p, cid), "_+_", accu_ident(p, cid), mk_int(p, id_at(p, cid), 1));
        c3[2] = accu_ident(p, cid);
        step = mk_call(p, id_at(p, cid), "_?_:_", NULL, c3, 3);
        result =
            mk_call2(p, id_at(p, cid), "_==_", accu_ident(p, cid), mk_int(p, id_at(p, cid), 1));
        break;
    }
    case 'm':
    case 'f': {
        struct cel_expr *fn, *filter = NULL, *one;
        if (kind == 'f') {
            filter = args[body];
            fn = two ? NULL : args[0];
        } else if (nargs == body + 2) {
            filter = args[body];
            fn = args[body + 1];
        } else {
            fn = args[body];
        }
        init = mk_list(p, id_at(p, cid), NULL, 0);
        cond = mk_bool(p, id_at(p, cid), true);
        one = mk_list(p, id_at(p, cid), &fn, 1);
        step = mk_call2(p, id_at(p, cid), "_+_", accu_ident(p, cid), one);
        if (filter) {
            struct cel_expr *c3[3] = {filter, step, accu_ident(p, cid)};
            step = mk_call(p, id_at(p, cid), "_?_:_", NULL, c3, 3);
        }
        result = accu_ident(p, cid);
        break;
    }
    default:
        return NULL;
    }
    if (p->nomem)
        return NULL;
    return mk_comp(p, cid, target, v1, v2, ACCU, init, cond, step, result);
}

/* transformMap / transformMapEntry (two-variable comprehensions into maps). */
static struct cel_expr *expand_transform_map(struct parser *p, int32_t cid, bool entry,
                                             struct cel_expr *target, struct cel_expr **args,
                                             int nargs)
{
    const char *v1, *v2;
    struct cel_expr *filter = NULL, *fn, *init, *step;

    for (int k = 0; k < 2; k++)
        if (args[k]->kind != CEL_E_IDENT)
            return macro_error(p, args[k]->id, "argument must be a simple name");
    v1 = args[0]->u.ident;
    v2 = args[1]->u.ident;
    if (!strcmp(v1, v2)) {
        char msg[300];
        snprintf(msg, sizeof(msg), "duplicate variable name: %s", v1);
        return macro_error(p, args[1]->id, msg);
    }
    if (!strcmp(v1, ACCU) || !strcmp(v1, "__result__"))
        return macro_error(p, args[0]->id, "iteration variable overwrites accumulator variable");
    if (!strcmp(v2, ACCU) || !strcmp(v2, "__result__"))
        return macro_error(p, args[1]->id, "iteration variable overwrites accumulator variable");
    if (nargs == 4) {
        filter = args[2];
        fn = args[3];
    } else {
        fn = args[2];
    }
    init = new_expr(p, CEL_E_MAP, id_at(p, cid));
    if (!init)
        return NULL;
    if (entry) {
        step = mk_call2(p, id_at(p, cid), "cel.@mapInsert", accu_ident(p, cid), fn);
    } else {
        struct cel_expr *c3[3] = {accu_ident(p, cid), mk_ident(p, id_at(p, cid), v1), fn};
        step = mk_call(p, id_at(p, cid), "cel.@mapInsert", NULL, c3, 3);
    }
    if (filter) {
        struct cel_expr *c3[3] = {filter, step, accu_ident(p, cid)};
        step = mk_call(p, id_at(p, cid), "_?_:_", NULL, c3, 3);
    }
    if (p->nomem)
        return NULL;
    return mk_comp(p, cid, target, v1, v2, ACCU, init, mk_bool(p, id_at(p, cid), true), step,
                   accu_ident(p, cid));
}

/* sortBy (ext.Lists v2): target.sortBy(v, key) ->
 *   cel.bind(@__sortBy_input__, target,
 *            @__sortBy_input__.@sortByAssociatedKeys(@__sortBy_input__.map(v, key))) */
static struct cel_expr *expand_sort_by(struct parser *p, int32_t cid, struct cel_expr *target,
                                       struct cel_expr **args)
{
    const char *var = "@__sortBy_input__";
    struct cel_expr *mapped, *keys_call, *margs[2];

    if (args[0]->kind != CEL_E_IDENT)
        return macro_error(p, args[0]->id,
                           "sortBy(var, ...) variable name must be a simple identifier");
    margs[0] = args[0];
    margs[1] = args[1];
    mapped = expand_comprehension(p, cid, 'm', false, mk_ident(p, id_at(p, cid), var), margs, 2);
    if (!mapped || mapped->kind == CEL_E_UNSPEC)
        return mapped;
    keys_call = mk_call(p, id_at(p, cid), "@sortByAssociatedKeys", mk_ident(p, id_at(p, cid), var),
                        &mapped, 1);
    return mk_comp(p, cid, mk_list(p, id_at(p, cid), NULL, 0), "#unused", NULL, var, target,
                   mk_bool(p, id_at(p, cid), false), mk_ident(p, id_at(p, cid), var), keys_call);
}

/* A deep copy with new ids at the same places (cel-go's ExprHelper.Copy). */
static struct cel_expr *copy_expr(struct parser *p, const struct cel_expr *e)
{
    struct cel_expr *c;
    int32_t off;

    if (!e || p->nomem)
        return NULL;
    off = cel_ids_offset(p->ids, e->id);
    c = new_expr(p, e->kind, new_id(p, off, off < 0 ? -1 : p->ids->stop[e->id]));
    if (!c)
        return NULL;
    *c = (struct cel_expr){.id = c->id, .kind = e->kind, .h = e->h, .u = e->u};
    switch (e->kind) {
    case CEL_E_SELECT:
        c->u.sel.operand = copy_expr(p, e->u.sel.operand);
        break;
    case CEL_E_CALL:
        c->u.call.target = e->u.call.target ? copy_expr(p, e->u.call.target) : NULL;
        if (e->u.call.nargs) {
            c->u.call.args = arena_alloc(p->a, (size_t)e->u.call.nargs * sizeof(*c->u.call.args));
            if (!c->u.call.args) {
                p->nomem = true;
                return NULL;
            }
            for (int i = 0; i < e->u.call.nargs; i++)
                c->u.call.args[i] = copy_expr(p, e->u.call.args[i]);
        }
        break;
    case CEL_E_LIST:
        if (e->u.list.n) {
            c->u.list.elems = arena_alloc(p->a, (size_t)e->u.list.n * sizeof(*c->u.list.elems));
            if (!c->u.list.elems) {
                p->nomem = true;
                return NULL;
            }
            for (int i = 0; i < e->u.list.n; i++)
                c->u.list.elems[i] = copy_expr(p, e->u.list.elems[i]);
        }
        break;
    case CEL_E_MAP:
    case CEL_E_STRUCT:
        if (e->u.map.n) {
            c->u.map.entries = arena_alloc(p->a, (size_t)e->u.map.n * sizeof(*c->u.map.entries));
            if (!c->u.map.entries) {
                p->nomem = true;
                return NULL;
            }
            for (int i = 0; i < e->u.map.n; i++) {
                c->u.map.entries[i] = e->u.map.entries[i];
                c->u.map.entries[i].id = id_at(p, e->id);
                c->u.map.entries[i].key = copy_expr(p, e->u.map.entries[i].key);
                c->u.map.entries[i].value = copy_expr(p, e->u.map.entries[i].value);
            }
        }
        break;
    case CEL_E_COMP:
        c->u.comp.range = copy_expr(p, e->u.comp.range);
        c->u.comp.init = copy_expr(p, e->u.comp.init);
        c->u.comp.cond = copy_expr(p, e->u.comp.cond);
        c->u.comp.step = copy_expr(p, e->u.comp.step);
        c->u.comp.result = copy_expr(p, e->u.comp.result);
        break;
    default:
        break;
    }
    return c;
}

/* Expands a macro call if fn/argument count/receiver style name one; returns NULL when not a
 * macro (the caller builds the plain call). */
static struct cel_expr *maybe_macro(struct parser *p, int32_t cid, const char *fn,
                                    struct cel_expr *target, struct cel_expr **args, int nargs)
{
    const struct cel_parse_opts *o = p->opts;

    if (!target) {
        if (!strcmp(fn, "has") && nargs == 1) {
            struct cel_expr *e;
            if (args[0]->kind != CEL_E_SELECT)
                return macro_error(p, args[0]->id, "invalid argument to has() macro");
            e = new_expr(p, CEL_E_SELECT, id_at(p, cid));
            if (!e)
                return NULL;
            e->u.sel.operand = args[0]->u.sel.operand;
            e->u.sel.field = args[0]->u.sel.field;
            e->u.sel.test_only = true;
            return e;
        }
        return NULL;
    }
    if (nargs == 2 && o->opt_macros && (!strcmp(fn, "optMap") || !strcmp(fn, "optFlatMap"))) {
        bool flat = fn[3] == 'F';
        struct cel_expr *has, *val, *comp, *none, *c3[3], *tcopy;
        if (args[0]->kind != CEL_E_IDENT)
            return macro_error(p, args[0]->id,
                               flat ? "optFlatMap() variable name must be a simple identifier"
                                    : "optMap() variable name must be a simple identifier");
        has = mk_call(p, id_at(p, cid), "hasValue", target, NULL, 0);
        tcopy = copy_expr(p, target);
        val = mk_call(p, id_at(p, cid), "value", tcopy, NULL, 0);
        comp = mk_comp(p, cid, mk_list(p, id_at(p, cid), NULL, 0), "#unused", NULL,
                       args[0]->u.ident, val, mk_bool(p, id_at(p, cid), false),
                       mk_ident(p, id_at(p, cid), args[0]->u.ident), args[1]);
        if (!flat)
            comp = mk_call(p, id_at(p, cid), "optional.of", NULL, &comp, 1);
        none = mk_call(p, id_at(p, cid), "optional.none", NULL, NULL, 0);
        c3[0] = has;
        c3[1] = comp;
        c3[2] = none;
        return mk_call(p, id_at(p, cid), "_?_:_", NULL, c3, 3);
    }
    if (nargs == 2) {
        if (!strcmp(fn, "all"))
            return expand_comprehension(p, cid, 'a', false, target, args, nargs);
        if (!strcmp(fn, "exists"))
            return expand_comprehension(p, cid, 'e', false, target, args, nargs);
        if (!strcmp(fn, "exists_one"))
            return expand_comprehension(p, cid, '1', false, target, args, nargs);
        if (!strcmp(fn, "map"))
            return expand_comprehension(p, cid, 'm', false, target, args, nargs);
        if (!strcmp(fn, "filter"))
            return expand_comprehension(p, cid, 'f', false, target, args, nargs);
        if (o->lists_sort_by && !strcmp(fn, "sortBy"))
            return expand_sort_by(p, cid, target, args);
    }
    if (nargs == 3) {
        if (!strcmp(fn, "map"))
            return expand_comprehension(p, cid, 'm', false, target, args, nargs);
        if (o->bindings && !strcmp(fn, "bind") && target->kind == CEL_E_IDENT &&
            !strcmp(target->u.ident, "cel")) {
            if (args[0]->kind != CEL_E_IDENT)
                return macro_error(p, args[0]->id,
                                   "cel.bind() variable names must be simple identifiers");
            return mk_comp(p, cid, mk_list(p, id_at(p, cid), NULL, 0), "#unused", NULL,
                           args[0]->u.ident, args[1], mk_bool(p, id_at(p, cid), false),
                           mk_ident(p, id_at(p, cid), args[0]->u.ident), args[2]);
        }
        if (o->two_var) {
            if (!strcmp(fn, "all"))
                return expand_comprehension(p, cid, 'a', true, target, args, nargs);
            if (!strcmp(fn, "exists"))
                return expand_comprehension(p, cid, 'e', true, target, args, nargs);
            if (!strcmp(fn, "existsOne") || !strcmp(fn, "exists_one"))
                return expand_comprehension(p, cid, '1', true, target, args, nargs);
        }
    }
    if (o->two_var && (nargs == 3 || nargs == 4)) {
        if (!strcmp(fn, "transformList"))
            return expand_comprehension(p, cid, 'm', true, target, args, nargs);
        if (!strcmp(fn, "transformMap"))
            return expand_transform_map(p, cid, false, target, args, nargs);
        if (!strcmp(fn, "transformMapEntry"))
            return expand_transform_map(p, cid, true, target, args, nargs);
    }
    return NULL;
}

/* ---- grammar ---- */

static const char *const reserved[] = {
    "as",        "break", "const",  "continue", "else", "false", "for",
    "function",  "if",    "import", "in",       "let",  "loop",  "package",
    "namespace", "null",  "return", "true",     "var",  "void",  "while",
};

static bool is_reserved(const char *s)
{
    for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
        if (!strcmp(s, reserved[i]))
            return true;
    return false;
}

static bool at(struct parser *p, int type)
{
    return !p->failed && la(p, 1)->type == type;
}

/* match: consumes the expected token or reports the error. */
static const struct tok *expect(struct parser *p, int type, tokset expected)
{
    const struct tok *t = la(p, 1);

    if (p->failed)
        return NULL;
    if (t->type == type) {
        p->pos++;
        return t;
    }
    syntax_error(p, expected);
    return NULL;
}

/* Comma-separated expressions up to `close`; returns the count, fills *out (arena). */
static int parse_expr_list(struct parser *p, int close, struct cel_expr ***out)
{
    struct cel_expr **v = NULL;
    int n = 0, alloc = 0;

    *out = NULL;
    if (at(p, close))
        return 0;
    for (;;) {
        struct cel_expr *e = parse_expr(p);
        if (p->failed || !e)
            break;
        if (n == alloc) {
            int na = alloc ? alloc * 2 : 4;
            struct cel_expr **nv = arena_alloc(p->a, (size_t)na * sizeof(*nv));
            if (!nv) {
                p->nomem = true;
                return n;
            }
            if (n)
                memcpy(nv, v, (size_t)n * sizeof(*nv));
            v = nv;
            alloc = na;
        }
        v[n++] = e;
        if (!at(p, T_COMMA))
            break;
        p->pos++;
    }
    *out = v;
    return n;
}

/* A string literal's value (cel-go's unescape): on failure, reports the message at id's
 * location and returns the raw text. */
static void unquote(struct parser *p, const struct tok *t, int skip, bool bytes, int32_t id,
                    struct cel_lit *out)
{
    uint32_t rawlen;
    const char *raw = cps_utf8(p, t->start + skip, t->stop + 1, &rawlen);
    const char *v = raw;
    size_t n = rawlen;
    char *norm, *o, *res;
    bool is_raw = false;
    const char *err = NULL;

    /* \r\n and \r become \n */
    norm = arena_alloc(p->a, n + 1);
    if (!norm) {
        p->nomem = true;
        return;
    }
    o = norm;
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '\r') {
            *o++ = '\n';
            if (i + 1 < n && v[i + 1] == '\n')
                i++;
        } else {
            *o++ = v[i];
        }
    }
    n = (size_t)(o - norm);
    v = norm;
    if (n < 2) {
        err = "unable to unescape string";
        goto fail;
    }
    if (v[0] == 'r' || v[0] == 'R') {
        v++;
        n--;
        is_raw = true;
    }
    if (v[0] != v[n - 1] || (v[0] != '"' && v[0] != '\'')) {
        err = "unable to unescape string";
        goto fail;
    }
    if (n >= 6 && ((v[0] == '\'' && v[1] == '\'' && v[2] == '\'') ||
                   (v[0] == '"' && v[1] == '"' && v[2] == '"'))) {
        if (v[n - 1] != v[0] || v[n - 2] != v[0] || v[n - 3] != v[0]) {
            err = "unable to unescape string";
            goto fail;
        }
        v += 3;
        n -= 6;
    } else {
        v += 1;
        n -= 2;
    }
    if (is_raw || !memchr(v, '\\', n)) {
        out->v.s.p = v;
        out->v.s.len = (uint32_t)n;
        return;
    }
    res = arena_alloc(p->a, n * 2 + 4);
    if (!res) {
        p->nomem = true;
        return;
    }
    o = res;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)v[i];
        uint32_t val = 0;
        bool encode = false;
        if (c >= 0x80) {
            uint32_t r;
            size_t w = cel_utf8_decode(v + i, n - i, &r);
            o += cel_utf8_encode(r, o);
            i += w;
            continue;
        }
        if (c != '\\') {
            *o++ = (char)c;
            i++;
            continue;
        }
        if (i + 1 >= n) {
            err = "unable to unescape string, found '\\' as last character";
            goto fail;
        }
        c = (unsigned char)v[i + 1];
        i += 2;
        switch (c) {
        case 'a':
            val = '\a';
            break;
        case 'b':
            val = '\b';
            break;
        case 'f':
            val = '\f';
            break;
        case 'n':
            val = '\n';
            break;
        case 'r':
            val = '\r';
            break;
        case 't':
            val = '\t';
            break;
        case 'v':
            val = '\v';
            break;
        case '\\':
        case '\'':
        case '"':
        case '`':
        case '?':
            val = c;
            break;
        case 'x':
        case 'X':
        case 'u':
        case 'U': {
            int digits = (c == 'x' || c == 'X') ? 2 : c == 'u' ? 4 : 8;
            encode = (c == 'x' || c == 'X') ? !bytes : true;
            if (bytes && (c == 'u' || c == 'U')) {
                err = "unable to unescape string";
                goto fail;
            }
            if (n - i < (size_t)digits) {
                err = "unable to unescape string";
                goto fail;
            }
            for (int k = 0; k < digits; k++) {
                char h = v[i + (size_t)k];
                uint32_t x;
                if (h >= '0' && h <= '9')
                    x = (uint32_t)(h - '0');
                else if (h >= 'a' && h <= 'f')
                    x = (uint32_t)(h - 'a' + 10);
                else if (h >= 'A' && h <= 'F')
                    x = (uint32_t)(h - 'A' + 10);
                else {
                    err = "unable to unescape string";
                    goto fail;
                }
                val = val << 4 | x;
            }
            i += (size_t)digits;
            if (!bytes && (val > 0x10ffff || (val >= 0xd800 && val <= 0xdfff))) {
                err = "invalid unicode code point";
                goto fail;
            }
            break;
        }
        case '0':
        case '1':
        case '2':
        case '3':
            if (n - i < 2) {
                err = "unable to unescape octal sequence in string";
                goto fail;
            }
            val = (uint32_t)(c - '0');
            for (int k = 0; k < 2; k++) {
                char x = v[i + (size_t)k];
                if (x < '0' || x > '7') {
                    err = "unable to unescape octal sequence in string";
                    goto fail;
                }
                val = val * 8 + (uint32_t)(x - '0');
            }
            i += 2;
            encode = !bytes;
            break;
        default:
            err = "unable to unescape string";
            goto fail;
        }
        if (val < 0x80 || !encode)
            *o++ = (char)val;
        else
            o += cel_utf8_encode(val, o);
    }
    out->v.s.p = res;
    out->v.s.len = (uint32_t)(o - res);
    return;
fail:
    cel_diags_add(p->diags, id, cel_ids_offset(p->ids, id), "%s", err);
    out->v.s.p = raw;
    out->v.s.len = rawlen;
}

/* Go's strconv.ParseInt/ParseUint for the literal text (decimal or 0x hex). */
static bool parse_int_text(const char *s, bool neg, bool is_unsigned, int64_t *iv, uint64_t *uv)
{
    uint64_t v = 0;
    int base = 10;
    const char *q = s;

    if (q[0] == '0' && q[1] == 'x') {
        base = 16;
        q += 2;
    }
    for (; *q; q++) {
        unsigned d;
        if (*q >= '0' && *q <= '9')
            d = (unsigned)(*q - '0');
        else if (*q >= 'a' && *q <= 'f')
            d = (unsigned)(*q - 'a' + 10);
        else if (*q >= 'A' && *q <= 'F')
            d = (unsigned)(*q - 'A' + 10);
        else
            break;
        if (v > (UINT64_MAX - d) / (uint64_t)base)
            return false;
        v = v * (uint64_t)base + d;
    }
    if (is_unsigned) {
        *uv = v;
        return true;
    }
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1)
            return false;
        *iv = (int64_t)(0 - v);
        return true;
    }
    if (v > (uint64_t)INT64_MAX)
        return false;
    *iv = (int64_t)v;
    return true;
}

/* literal: sign=MINUS? NUM_INT | NUM_UINT | sign=MINUS? NUM_FLOAT | STRING | BYTES | ... */
static struct cel_expr *parse_literal(struct parser *p)
{
    const struct tok *t = la(p, 1), *sign = NULL;
    struct cel_lit lit = {0};
    int32_t id;

    if (t->type == T_MINUS) {
        sign = t;
        t = la(p, 2);
    }
    id = new_id(p, (sign ? sign : t)->start, t->stop + 1);
    p->pos += sign ? 2 : 1;
    switch (t->type) {
    case T_NUM_INT: {
        const char *txt = tok_text(p, t);
        if (!parse_int_text(txt, sign != NULL, false, &lit.v.i, NULL)) {
            cel_diags_add(p->diags, id, cel_ids_offset(p->ids, id), "invalid int literal");
            return new_expr(p, CEL_E_UNSPEC, id);
        }
        lit.kind = CEL_LIT_INT;
        break;
    }
    case T_NUM_UINT: {
        const char *txt = tok_text(p, t);
        if (!parse_int_text(txt, false, true, NULL, &lit.v.u)) {
            cel_diags_add(p->diags, id, cel_ids_offset(p->ids, id), "invalid uint literal");
            return new_expr(p, CEL_E_UNSPEC, id);
        }
        lit.kind = CEL_LIT_UINT;
        break;
    }
    case T_NUM_FLOAT: {
        const char *txt = tok_text(p, t);
        char *end;
        double d;
        errno = 0;
        d = strtod(txt, &end);
        /* Go's ParseFloat fails with ErrRange on overflow to infinity, but accepts underflow */
        if (errno == ERANGE && isinf(d)) {
            cel_diags_add(p->diags, id, cel_ids_offset(p->ids, id), "invalid double literal");
            return new_expr(p, CEL_E_UNSPEC, id);
        }
        lit.kind = CEL_LIT_DOUBLE;
        lit.v.d = sign ? -d : d;
        break;
    }
    case T_STRING:
        lit.kind = CEL_LIT_STRING;
        unquote(p, t, 0, false, id, &lit);
        break;
    case T_BYTES:
        lit.kind = CEL_LIT_BYTES;
        unquote(p, t, 1, true, id, &lit);
        break;
    case T_TRUE:
    case T_FALSE:
        lit.kind = CEL_LIT_BOOL;
        lit.v.b = t->type == T_TRUE;
        break;
    case T_NULL:
        lit.kind = CEL_LIT_NULL;
        break;
    default:
        return NULL;
    }
    return mk_lit(p, id, lit);
}

/* Message construction: ids+='.'ids... '{' fieldInitializerList? ','? '}' */
static struct cel_expr *parse_message(struct parser *p, bool leading_dot, const char *name)
{
    const struct tok *lb = la(p, 1);
    struct cel_expr *e;
    struct cel_entry *ents = NULL;
    int n = 0, alloc = 0;
    char *full = NULL;
    int32_t id;

    p->pos++;
    id = tok_id(p, lb);
    if (leading_dot) {
        full = arena_alloc(p->a, strlen(name) + 2);
        if (!full) {
            p->nomem = true;
            return NULL;
        }
        full[0] = '.';
        memcpy(full + 1, name, strlen(name) + 1);
        name = full;
    }
    while (!p->failed && !at(p, T_RBRACE)) {
        bool opt = false;
        const struct tok *ft, *col;
        struct cel_expr *val;
        const char *fname;
        if (at(p, T_QUESTION)) {
            if (!p->opts->optional_syntax) {
                /* cel-go reports this after parsing */
            }
            opt = true;
            p->pos++;
        }
        ft = la(p, 1);
        if (ft->type == T_IDENT) {
            fname = tok_text(p, ft);
        } else if (ft->type == T_ESC_IDENT) {
            const char *txt = tok_text(p, ft);
            size_t l = strlen(txt);
            fname = arena_strndup(p->a, txt + 1, l - 2);
        } else {
            syntax_error(p, opt ? (TS(T_IDENT) | TS(T_ESC_IDENT))
                                : (TS(T_RBRACE) | TS(T_COMMA) | TS(T_QUESTION) | TS(T_IDENT) |
                                   TS(T_ESC_IDENT)));
            return new_expr(p, CEL_E_UNSPEC, id);
        }
        p->pos++;
        col = expect(p, T_COLON, TS(T_COLON));
        if (!col)
            return new_expr(p, CEL_E_UNSPEC, id);
        {
            int32_t fid = tok_id(p, col);
            val = parse_expr(p);
            if (p->failed)
                return new_expr(p, CEL_E_UNSPEC, id);
            if (opt && !p->opts->optional_syntax) {
                cel_diags_add(p->diags, fid, ft->start, "unsupported syntax '?'");
                continue;
            }
            if (n == alloc) {
                int na = alloc ? alloc * 2 : 4;
                struct cel_entry *nv = arena_alloc(p->a, (size_t)na * sizeof(*nv));
                if (!nv) {
                    p->nomem = true;
                    return NULL;
                }
                if (n)
                    memcpy(nv, ents, (size_t)n * sizeof(*nv));
                ents = nv;
                alloc = na;
            }
            ents[n].id = fid;
            ents[n].optional = opt;
            ents[n].key = NULL;
            ents[n].field = fname;
            ents[n].value = val;
            n++;
        }
        if (at(p, T_COMMA)) {
            p->pos++;
            continue;
        }
        break;
    }
    if (!expect(p, T_RBRACE, TS(T_RBRACE) | TS(T_COMMA)))
        return new_expr(p, CEL_E_UNSPEC, id);
    e = new_expr(p, CEL_E_STRUCT, id);
    if (!e)
        return NULL;
    e->u.map.entries = ents;
    e->u.map.n = n;
    e->u.map.type_name = name;
    return e;
}

/* primary */
static struct cel_expr *parse_primary(struct parser *p)
{
    const struct tok *t = la(p, 1);
    bool leading_dot = false;
    const struct tok *dot = NULL;

    if (p->failed)
        return new_expr(p, CEL_E_UNSPEC, 0);
    if (t->type == T_DOT) {
        if (la(p, 2)->type != T_IDENT) {
            if (la(p, 2)->type == T_NUM_FLOAT || la(p, 2)->type == T_NUM_INT)
                return syntax_error(p, SET_EXPR);
            p->pos++;
            return syntax_error(p, TS(T_IDENT));
        }
        leading_dot = true;
        dot = t;
        p->pos++;
        t = la(p, 1);
    }
    switch (t->type) {
    case T_IDENT: {
        /* message construction when IDENT ('.' IDENT)* is followed by '{' */
        int32_t k = 1;
        while (la(p, k + 1)->type == T_DOT && la(p, k + 2)->type == T_IDENT)
            k += 2;
        if (la(p, k + 1)->type == T_LBRACE) {
            struct buf b = BUF_INIT(0);
            char *name;
            for (int32_t i = 1; i <= k; i += 2) {
                if (i > 1)
                    buf_puts(&b, ".");
                buf_puts(&b, tok_text(p, la(p, i)));
            }
            name = pstrdup(p, b.data ? b.data : "");
            buf_release(&b);
            p->pos += k;
            return parse_message(p, leading_dot, name);
        }
        {
            const char *txt = tok_text(p, t);
            char *name;
            p->pos++;
            if (is_reserved(txt)) {
                int32_t off = dot ? dot->start : t->start;
                struct cel_expr *e = error_at(p, off, "reserved identifier: %s", txt);
                if (at(p, T_LPAREN)) {
                    struct cel_expr **args;
                    p->pos++;
                    parse_expr_list(p, T_RPAREN, &args);
                    expect(p, T_RPAREN, TS(T_RPAREN) | TS(T_COMMA));
                }
                return e;
            }
            if (leading_dot) {
                name = arena_alloc(p->a, strlen(txt) + 2);
                if (!name) {
                    p->nomem = true;
                    return NULL;
                }
                name[0] = '.';
                memcpy(name + 1, txt, strlen(txt) + 1);
            } else {
                name = (char *)txt;
            }
            if (at(p, T_LPAREN)) {
                const struct tok *lp = la(p, 1);
                struct cel_expr **args, *m;
                int nargs;
                int32_t cid;
                p->pos++;
                cid = tok_id(p, lp);
                nargs = parse_expr_list(p, T_RPAREN, &args);
                if (!expect(p, T_RPAREN, TS(T_RPAREN) | TS(T_COMMA)))
                    return new_expr(p, CEL_E_UNSPEC, cid);
                m = maybe_macro(p, cid, name, NULL, args, nargs);
                if (m || p->nomem)
                    return m;
                return mk_call(p, cid, name, NULL, args, nargs);
            }
            return mk_ident(p, tok_id(p, t), name);
        }
    }
    case T_LPAREN: {
        struct cel_expr *e;
        p->pos++;
        e = parse_expr(p);
        if (!expect(p, T_RPAREN, TS(T_RPAREN)))
            return e;
        return e;
    }
    case T_LBRACKET: {
        struct cel_expr **v = NULL, *e;
        int32_t *opt = NULL;
        int n = 0, alloc = 0, nopt = 0;
        int32_t id;
        p->pos++;
        id = tok_id(p, t);
        while (!p->failed && !at(p, T_RBRACKET)) {
            bool isopt = false;
            const struct tok *qt = NULL;
            struct cel_expr *el;
            if (at(p, T_QUESTION)) {
                qt = la(p, 1);
                isopt = true;
                p->pos++;
            }
            el = parse_expr(p);
            if (p->failed)
                break;
            if (n == alloc) {
                int na = alloc ? alloc * 2 : 4;
                struct cel_expr **nv = arena_alloc(p->a, (size_t)na * sizeof(*nv));
                int32_t *no = arena_alloc(p->a, (size_t)na * sizeof(*no));
                if (!nv || !no) {
                    p->nomem = true;
                    return NULL;
                }
                if (n)
                    memcpy(nv, v, (size_t)n * sizeof(*nv));
                if (nopt)
                    memcpy(no, opt, (size_t)nopt * sizeof(*no));
                v = nv;
                opt = no;
                alloc = na;
            }
            v[n] = el;
            if (isopt) {
                if (!p->opts->optional_syntax)
                    cel_diags_add(p->diags, 0, qt->start, "unsupported syntax '?'");
                else
                    opt[nopt++] = n;
            }
            n++;
            if (at(p, T_COMMA)) {
                p->pos++;
                continue;
            }
            break;
        }
        if (!expect(p, T_RBRACKET, TS(T_RBRACKET) | TS(T_COMMA)))
            return new_expr(p, CEL_E_UNSPEC, id);
        e = new_expr(p, CEL_E_LIST, id);
        if (!e)
            return NULL;
        e->u.list.elems = v;
        e->u.list.n = n;
        e->u.list.optional = opt;
        e->u.list.nopt = nopt;
        return e;
    }
    case T_LBRACE: {
        struct cel_entry *ents = NULL;
        struct cel_expr *e;
        int n = 0, alloc = 0;
        int32_t id;
        p->pos++;
        id = tok_id(p, t);
        while (!p->failed && !at(p, T_RBRACE)) {
            bool isopt = false;
            const struct tok *qt = NULL, *col;
            struct cel_expr *k, *v;
            int32_t cid;
            if (at(p, T_QUESTION)) {
                qt = la(p, 1);
                isopt = true;
                p->pos++;
            }
            k = parse_expr(p);
            if (p->failed)
                break;
            col = expect(p, T_COLON, TS(T_COLON));
            if (!col)
                break;
            cid = tok_id(p, col);
            v = parse_expr(p);
            if (p->failed)
                break;
            if (isopt && !p->opts->optional_syntax) {
                cel_diags_add(p->diags, 0, qt->start, "unsupported syntax '?'");
            } else {
                if (n == alloc) {
                    int na = alloc ? alloc * 2 : 4;
                    struct cel_entry *nv = arena_alloc(p->a, (size_t)na * sizeof(*nv));
                    if (!nv) {
                        p->nomem = true;
                        return NULL;
                    }
                    if (n)
                        memcpy(nv, ents, (size_t)n * sizeof(*nv));
                    ents = nv;
                    alloc = na;
                }
                ents[n].id = cid;
                ents[n].optional = isopt;
                ents[n].key = k;
                ents[n].field = NULL;
                ents[n].value = v;
                n++;
            }
            if (at(p, T_COMMA)) {
                p->pos++;
                continue;
            }
            break;
        }
        if (!expect(p, T_RBRACE, TS(T_RBRACE) | TS(T_COMMA)))
            return new_expr(p, CEL_E_UNSPEC, id);
        e = new_expr(p, CEL_E_MAP, id);
        if (!e)
            return NULL;
        e->u.map.entries = ents;
        e->u.map.n = n;
        return e;
    }
    case T_MINUS:
    case T_NUM_FLOAT:
    case T_NUM_INT:
    case T_NUM_UINT:
    case T_STRING:
    case T_BYTES:
    case T_TRUE:
    case T_FALSE:
    case T_NULL:
        if (leading_dot)
            return syntax_error(p, TS(T_IDENT));
        if (t->type == T_MINUS && la(p, 2)->type != T_NUM_INT && la(p, 2)->type != T_NUM_FLOAT) {
            p->pos++;
            return syntax_error(p, TS(T_NUM_FLOAT) | TS(T_NUM_INT));
        }
        return parse_literal(p);
    default:
        return syntax_error(p, leading_dot ? TS(T_IDENT) : SET_EXPR);
    }
}

/* member: primary ( '.' '?'? escapeIdent | '.' IDENTIFIER '(' args ')' | '[' '?'? expr ']' )*
 * Left recursive in CEL.g4: every suffix is one more level of the member rule. */
static struct cel_expr *parse_member(struct parser *p)
{
    struct cel_expr *e;
    int pushed = 0;

    if (!enter(p, &p->d_member))
        return new_expr(p, CEL_E_UNSPEC, 0);
    e = parse_primary(p);
    while (!p->failed && e) {
        const struct tok *t = la(p, 1);
        if (t->type == T_DOT) {
            const struct tok *t2 = la(p, 2);
            bool opt = false;
            const struct tok *idt;
            const char *name;
            if (t2->type == T_QUESTION) {
                opt = true;
                idt = la(p, 3);
            } else {
                idt = t2;
            }
            if (idt->type != T_IDENT && idt->type != T_ESC_IDENT) {
                e = no_viable(p, t, idt);
                break;
            }
            pushed++;
            if (!enter(p, &p->d_member))
                break;
            if (!opt && idt->type == T_IDENT && la(p, 3)->type == T_LPAREN) {
                /* member call */
                const struct tok *lp = la(p, 3);
                struct cel_expr **args, *m;
                int nargs, h = e->h;
                int32_t cid;
                name = tok_text(p, idt);
                p->pos += 3;
                cid = tok_id(p, lp);
                nargs = parse_expr_list(p, T_RPAREN, &args);
                if (!expect(p, T_RPAREN, TS(T_RPAREN) | TS(T_COMMA)))
                    break;
                for (int i = 0; i < nargs; i++)
                    if (args[i]->h > h)
                        h = args[i]->h;
                m = maybe_macro(p, cid, name, e, args, nargs);
                if (p->nomem)
                    return NULL;
                e = m ? m : mk_call(p, cid, name, e, args, nargs);
                if (e)
                    e->h = h + 1;
                continue;
            }
            if (idt->type == T_ESC_IDENT) {
                const char *txt = tok_text(p, idt);
                size_t l = strlen(txt);
                name = arena_strndup(p->a, txt + 1, l - 2);
            } else {
                name = tok_text(p, idt);
            }
            p->pos += opt ? 3 : 2;
            if (opt) {
                struct cel_lit lit = {.kind = CEL_LIT_STRING};
                int32_t sid = tok_id(p, t);
                int h = e->h;
                if (!p->opts->optional_syntax) {
                    e = error_at(p, t->start, "%s", "unsupported syntax '.?'");
                    continue;
                }
                lit.v.s.p = name;
                lit.v.s.len = (uint32_t)strlen(name);
                e = mk_call2(p, sid, "_?._", e, mk_lit(p, tok_id(p, idt), lit));
                if (e)
                    e->h = h + 1;
            } else {
                struct cel_expr *s = new_expr(p, CEL_E_SELECT, tok_id(p, t));
                if (!s)
                    return NULL;
                s->u.sel.operand = e;
                s->u.sel.field = name;
                s->h = e->h + 1;
                e = s;
            }
            continue;
        }
        if (t->type == T_LBRACKET) {
            bool opt = false;
            struct cel_expr *idx;
            int32_t iid;
            int h;
            pushed++;
            if (!enter(p, &p->d_member))
                break;
            p->pos++;
            iid = tok_id(p, t);
            if (at(p, T_QUESTION)) {
                opt = true;
                p->pos++;
            }
            idx = parse_expr(p);
            if (!expect(p, T_RBRACKET, TS(T_RBRACKET)))
                break;
            h = e->h > idx->h ? e->h : idx->h;
            if (opt && !p->opts->optional_syntax) {
                e = error_at(p, t->start, "%s", "unsupported syntax '[?'");
                continue;
            }
            e = mk_call2(p, iid, opt ? "_[?_]" : "_[_]", e, idx);
            if (e)
                e->h = h + 1;
            continue;
        }
        break;
    }
    p->d_member -= 1 + pushed;
    return e;
}

/* unary: member | '!'+ member | '-'+ member. A '-' directly before a number is the number's
 * sign (ANTLR picks the first alternative, the literal), but once negation has started the
 * '-'+ loop takes every '-' (its ambiguity resolves to going round again). */
static struct cel_expr *parse_unary(struct parser *p)
{
    const struct tok *t = la(p, 1);

    if (t->type == T_EXCLAM ||
        (t->type == T_MINUS && la(p, 2)->type != T_NUM_INT && la(p, 2)->type != T_NUM_FLOAT)) {
        int type = t->type, n = 0;
        struct cel_expr *m;
        int32_t id;
        while (la(p, 1)->type == type) {
            p->pos++;
            n++;
        }
        m = parse_member(p);
        if (p->failed || n % 2 == 0)
            return m;
        id = tok_id(p, t);
        m = mk_call(p, id, type == T_EXCLAM ? "!_" : "-_", NULL, &m, 1);
        if (m)
            m->h = m->u.call.args[0]->h;
        return m;
    }
    return parse_member(p);
}

static int mul_op(int t)
{
    return t == T_STAR || t == T_SLASH || t == T_PERCENT;
}
static int add_op(int t)
{
    return t == T_PLUS || t == T_MINUS;
}
static int rel_op(int t)
{
    return t == T_LT || t == T_LE || t == T_GE || t == T_GT || t == T_EQ || t == T_NE || t == T_IN;
}
static const char *op_fn(int t)
{
    switch (t) {
    case T_STAR:
        return "_*_";
    case T_SLASH:
        return "_/_";
    case T_PERCENT:
        return "_%_";
    case T_PLUS:
        return "_+_";
    case T_MINUS:
        return "_-_";
    case T_LT:
        return "_<_";
    case T_LE:
        return "_<=_";
    case T_GE:
        return "_>=_";
    case T_GT:
        return "_>_";
    case T_EQ:
        return "_==_";
    case T_NE:
        return "_!=_";
    case T_IN:
        return "@in";
    }
    return "";
}

static struct cel_expr *binary(struct parser *p, const struct tok *op, struct cel_expr *l,
                               struct cel_expr *r, int32_t id)
{
    struct cel_expr *e = mk_call2(p, id, op_fn(op->type), l, r);
    if (e)
        e->h = (l->h > r->h ? l->h : r->h) + 1;
    return e;
}

/* calc(prec): ANTLR's precedence climbing for the left-recursive rule; '*' '/' '%' bind at
 * precedence 2 (right operand calc(3)), '+' '-' at 1 (right operand calc(2)). */
static struct cel_expr *parse_calc(struct parser *p, int prec)
{
    struct cel_expr *e;
    int pushed = 0;

    if (!enter(p, &p->d_calc))
        return new_expr(p, CEL_E_UNSPEC, 0);
    e = parse_unary(p);
    while (!p->failed && e) {
        const struct tok *op = la(p, 1);
        int32_t id;
        struct cel_expr *r;
        int next;
        if (mul_op(op->type) && prec <= 2)
            next = 3;
        else if (add_op(op->type) && prec <= 1)
            next = 2;
        else
            break;
        pushed++;
        if (!enter(p, &p->d_calc))
            break;
        p->pos++;
        id = tok_id(p, op);
        r = parse_calc(p, next);
        if (p->failed)
            break;
        e = binary(p, op, e, r, id);
    }
    p->d_calc -= 1 + pushed;
    return e;
}

/* relation(prec): one binary alternative at precedence 1 (right operand relation(2)). */
static struct cel_expr *parse_relation(struct parser *p, int prec)
{
    struct cel_expr *e;
    int pushed = 0;

    if (!enter(p, &p->d_rel))
        return new_expr(p, CEL_E_UNSPEC, 0);
    e = parse_calc(p, 0);
    while (!p->failed && e && rel_op(la(p, 1)->type) && prec <= 1) {
        const struct tok *op = la(p, 1);
        int32_t id;
        struct cel_expr *r;
        pushed++;
        if (!enter(p, &p->d_rel))
            break;
        p->pos++;
        id = tok_id(p, op);
        r = parse_relation(p, 2);
        if (p->failed)
            break;
        e = binary(p, op, e, r, id);
    }
    p->d_rel -= 1 + pushed;
    return e;
}

/* && and || chains: cel-go builds a balanced tree over the terms. */
static struct cel_expr *balanced(struct parser *p, const char *fn, struct cel_expr **terms,
                                 int32_t *ops, int lo, int hi)
{
    int mid = (lo + hi + 1) / 2;
    struct cel_expr *l, *r;

    l = mid == lo ? terms[mid] : balanced(p, fn, terms, ops, lo, mid - 1);
    r = mid == hi ? terms[mid + 1] : balanced(p, fn, terms, ops, mid + 1, hi);
    return mk_call2(p, ops[mid], fn, l, r);
}

/* The visitor's height of a logic chain: the terms are visited as siblings. */
static int terms_height(struct cel_expr **terms, int n)
{
    int h = 0;
    for (int i = 0; i < n; i++)
        if (terms[i] && terms[i]->h > h)
            h = terms[i]->h;
    return h;
}

static struct cel_expr *parse_logic(struct parser *p, int op_type)
{
    struct cel_expr **terms = NULL;
    int32_t *ops = NULL;
    int n = 0, alloc = 0;
    struct cel_expr *first = op_type == T_OR ? parse_logic(p, T_AND) : parse_relation(p, 0);

    if (p->failed || la(p, 1)->type != op_type)
        return first;
    for (;;) {
        const struct tok *op;
        struct cel_expr *next;
        if (n + 1 >= alloc) {
            int na = alloc ? alloc * 2 : 8;
            struct cel_expr **nt = realloc(terms, (size_t)na * sizeof(*nt));
            int32_t *no;
            if (!nt) {
                free(terms);
                free(ops);
                p->nomem = true;
                return NULL;
            }
            terms = nt;
            no = realloc(ops, (size_t)na * sizeof(*no));
            if (!no) {
                free(terms);
                free(ops);
                p->nomem = true;
                return NULL;
            }
            ops = no;
            alloc = na;
        }
        if (n == 0)
            terms[n++] = first;
        if (la(p, 1)->type != op_type || p->failed)
            break;
        op = la(p, 1);
        p->pos++;
        ops[n - 1] = tok_id(p, op);
        next = op_type == T_OR ? parse_logic(p, T_AND) : parse_relation(p, 0);
        terms[n++] = next;
        if (p->failed)
            break;
    }
    {
        struct cel_expr *e = first;
        if (!p->failed && n > 1) {
            e = balanced(p, op_type == T_OR ? "_||_" : "_&&_", terms, ops, 0, n - 2);
            if (e)
                e->h = terms_height(terms, n);
        }
        free(terms);
        free(ops);
        return e;
    }
}

/* expr: conditionalOr ('?' conditionalOr ':' expr)? */
static struct cel_expr *parse_expr(struct parser *p)
{
    struct cel_expr *c, *t, *f, *v[3], *e;
    const struct tok *q;
    int32_t id;

    if (!enter(p, &p->d_expr)) {
        p->d_expr--;
        return new_expr(p, CEL_E_UNSPEC, 0);
    }
    c = parse_logic(p, T_OR);
    if (p->failed || la(p, 1)->type != T_QUESTION) {
        p->d_expr--;
        return c;
    }
    q = la(p, 1);
    p->pos++;
    id = tok_id(p, q);
    t = parse_logic(p, T_OR);
    if (!expect(p, T_COLON, TS(T_COLON))) {
        p->d_expr--;
        return c;
    }
    f = parse_expr(p);
    p->d_expr--;
    if (p->failed)
        return c;
    v[0] = c;
    v[1] = t;
    v[2] = f;
    e = mk_call(p, id, "_?_:_", NULL, v, 3);
    if (e) {
        int h = c->h;
        if (t->h > h)
            h = t->h;
        if (f->h > h)
            h = f->h;
        e->h = h + 1;
    }
    return e;
}

struct cel_expr *cel_parse(struct arena *a, const struct cel_source *src,
                           const struct cel_parse_opts *opts, struct cel_ids *ids,
                           struct cel_diags *diags)
{
    struct lexer lx = {.src = src, .diags = diags, .a = a};
    struct parser p = {.a = a, .src = src, .opts = opts, .ids = ids, .diags = diags};
    int32_t limit = opts->max_code_points ? opts->max_code_points : 100000;
    struct cel_expr *e;

    if (ids->n == 0) {
        new_id(&p, -1, -1); /* id 0 is unused */
    }
    p.max_depth = opts->max_recursion ? opts->max_recursion : 250;
    if (src->ncp > limit) {
        cel_diags_add(diags, 0, -1, "expression code point size exceeds limit: size: %d, limit %d",
                      src->ncp, limit);
        return new_expr(&p, CEL_E_UNSPEC, 0);
    }
    if (lex_all(&lx) < 0) {
        free(lx.toks);
        return NULL;
    }
    p.toks = lx.toks;
    p.ntoks = lx.ntoks;
    e = parse_expr(&p);
    if (!p.failed && la(&p, 1)->type != T_EOF)
        syntax_error(&p, TS(T_EOF));
    if (!p.failed && e && e->h > p.max_depth)
        cel_diags_add(diags, 0, -1, "max recursion depth exceeded");
    free(lx.toks);
    if (p.nomem)
        return NULL;
    if (!e)
        e = new_expr(&p, CEL_E_UNSPEC, 0);
    return e;
}
