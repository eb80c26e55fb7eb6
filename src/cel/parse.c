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
    int nerrors; /* cel-go's listener takes 100 syntax errors, then stops the parse */
    bool too_many;
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
            if (++lx->nerrors > 100) {
                cel_diags_add(lx->diags, 0, p, "Syntax error: More than 100 syntax errors");
                buf_release(&b);
                lx->too_many = true;
                break;
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

/* a rule invocation: the tokens that may follow it in its caller, and whether the caller
 * may end right after it */
struct pframe {
    uint64_t fset;
    bool nullable;
};

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
    bool failed; /* the parse stopped (out of memory, a limit) */
    bool nomem;
    /* ANTLR's error strategy: the frames of the rule invocations, the error recovery mode,
     * the exception the current rule raised, Recover's failsafe */
    struct pframe *frames;
    int nframes, aframes;
    bool err_mode;
    int exc; /* 0 none, 1 InputMismatch, 2 NoViableAlt */
    int32_t exc_tok, exc_start;
    uint64_t exc_expected;
    int exc_site;
    int32_t last_err_pos;
    int last_sites[16], nlast_sites;
    int recoveries;     /* cel-go stops at 30 attempts */
    int lookahead;      /* tokens one recovery consumed: cel-go stops past 256 */
    bool aborted;       /* a limit stopped the parse before any tree was visited */
    struct tok missing; /* a token single-token insertion conjured */
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

/* ---- ANTLR's error strategy (DefaultErrorStrategy of the Go runtime), on this parser ----
 *
 * The parser is written as the rules of CEL.g4 run in the generated parser: the same sync
 * points (with the same local sets of next tokens), the same matches and the same decisions,
 * so an error is found at the same token and described with the same words and token sets.
 * After an error it recovers as ANTLR does (single-token deletion or insertion, else the
 * rule reports, consumes to its recovery set and returns what it has), so the tree that
 * results is the one cel-go's visitor builds from the partial parse, macro errors included.
 *
 * Each rule invocation pushes a frame: the tokens that may follow it in its caller (FIRST of
 * the rest of the caller's alternative) and whether the caller may end there. From the
 * frames come ANTLR's full-context expected sets and its recovery sets. */

static bool push_frame(struct parser *p, tokset fset, bool nullable)
{
    if (p->nframes == p->aframes) {
        int na = p->aframes ? p->aframes * 2 : 64;
        struct pframe *nf = arena_alloc(p->a, (size_t)na * sizeof(*nf));
        if (!nf) {
            p->nomem = true;
            p->failed = true;
            return false;
        }
        if (p->nframes)
            memcpy(nf, p->frames, (size_t)p->nframes * sizeof(*nf));
        p->frames = nf;
        p->aframes = na;
    }
    p->frames[p->nframes].fset = fset;
    p->frames[p->nframes].nullable = nullable;
    p->nframes++;
    return true;
}

static void pop_frame(struct parser *p)
{
    if (p->nframes > 0)
        p->nframes--;
}

/* getExpectedTokens: the local set, then, while the rest may be empty, what follows each
 * invocation up the stack (EOF at the top) */
static tokset expected_ctx(struct parser *p, tokset local, bool nullable)
{
    tokset s = local;
    for (int i = p->nframes - 1; nullable && i >= 0; i--) {
        s |= p->frames[i].fset;
        nullable = p->frames[i].nullable;
    }
    if (nullable)
        s |= TS(T_EOF);
    return s;
}

/* getErrorRecoverySet: what follows every rule invocation on the stack */
static tokset recovery_set(struct parser *p)
{
    tokset s = 0;
    for (int i = p->nframes - 1; i >= 0; i--)
        s |= p->frames[i].fset;
    return s;
}

static bool in_set(tokset s, const struct tok *t)
{
    return (s & TS(t->type)) != 0;
}

/* an error message at a token, unless the parser is recovering from an earlier one */
static void syn_error(struct parser *p, const struct tok *at, const char *what, const struct tok *t,
                      tokset expected)
{
    struct buf b = BUF_INIT(0);

    if (p->err_mode)
        return;
    p->err_mode = true;
    buf_puts(&b, "Syntax error: ");
    buf_puts(&b, what);
    if (t)
        tok_display(p, &b, t);
    buf_puts(&b, " expecting ");
    set_display(&b, expected);
    cel_diags_add(p->diags, 0, at->start, "%s", b.data ? b.data : "");
    buf_release(&b);
}

/* reportMissingToken: "missing X at Y" */
static void syn_missing(struct parser *p, int type)
{
    struct buf b = BUF_INIT(0);
    const struct tok *t = la(p, 1);

    if (p->err_mode)
        return;
    p->err_mode = true;
    buf_puts(&b, "Syntax error: missing ");
    set_display(&b, TS(type));
    buf_puts(&b, " at ");
    tok_display(p, &b, t);
    cel_diags_add(p->diags, 0, t->start, "%s", b.data ? b.data : "");
    buf_release(&b);
}

/* The exceptions of a rule (InputMismatch, NoViableAlt): raised, then reported and
 * recovered from where the rule exits. */
static void raise_mismatch(struct parser *p, tokset expected, int site)
{
    p->exc = 1;
    p->exc_tok = p->pos;
    p->exc_expected = expected;
    p->exc_site = site;
}

static void raise_noviable(struct parser *p, int32_t start, int32_t offending, int site)
{
    p->exc = 2;
    p->exc_start = start;
    p->exc_tok = offending;
    p->exc_site = site;
}

/* cel-go's recoveryLimitErrorStrategy: the 31st recovery attempt ends the parse */
static bool check_attempts(struct parser *p)
{
    if (p->recoveries == 30) {
        cel_diags_add(p->diags, 0, la(p, 1)->start,
                      "Syntax error: error recovery attempt limit exceeded: 30");
        p->failed = p->aborted = true;
        return false;
    }
    p->recoveries++;
    p->lookahead = 0;
    return true;
}

/* a token consumed while recovering (its lookahead consumer ends the parse past 256) */
static bool recovery_consume(struct parser *p)
{
    if (p->lookahead >= 256) {
        cel_diags_add(p->diags, 0, -1, "error recovery token lookahead limit exceeded: 256");
        p->failed = p->aborted = true;
        return false;
    }
    p->lookahead++;
    p->pos++;
    return true;
}

/* the rule's errorExit: ReportError, then Recover (consume up to the recovery set) */
static void rule_recover(struct parser *p)
{
    int site = p->exc_site;

    if (!p->exc)
        return;
    if (!p->err_mode) {
        const struct tok *t = &p->toks[p->exc_tok];
        if (p->exc == 1) {
            syn_error(p, t, "mismatched input ", t, p->exc_expected);
        } else {
            struct buf b = BUF_INIT(0);
            const struct tok *from = &p->toks[p->exc_start];
            p->err_mode = true;
            buf_puts(&b, "Syntax error: no viable alternative at input '");
            if (from->type == T_EOF) {
                buf_puts(&b, "<EOF>");
            } else {
                for (const struct tok *k = from; k <= t && k->type != T_EOF; k++) {
                    if (k > from && k[-1].stop + 1 < k->start)
                        display_cps(&b, p->src->cp, k[-1].stop + 1, k->start);
                    display_cps(&b, p->src->cp, k->start, k->stop + 1);
                }
            }
            buf_puts(&b, "'");
            {
                /* cel-go's rewrite of "no viable alternative at input '.true'" (any one
                 * character, then a reserved literal) */
                static const char pre[] = "Syntax error: no viable alternative at input '";
                const char *in = b.data + sizeof(pre) - 1;
                size_t inl = b.len - (sizeof(pre) - 1) - 1;
                uint32_t r;
                size_t w = inl ? cel_utf8_decode(in, inl, &r) : 0;
                static const char *const kw[] = {"true", "false", "null"};
                for (int k = 0; w && k < 3; k++) {
                    size_t kl = strlen(kw[k]);
                    if (r != '\n' && inl == w + kl && !memcmp(in + w, kw[k], kl)) {
                        struct buf m = BUF_INIT(0);
                        buf_printf(&m, "Syntax error: mismatched input '%s' expecting IDENTIFIER",
                                   kw[k]);
                        buf_release(&b);
                        b = m;
                        break;
                    }
                }
            }
            cel_diags_add(p->diags, 0, t->start, "%s", b.data ? b.data : "");
            buf_release(&b);
        }
    }
    p->exc = 0;
    if (p->failed || !check_attempts(p))
        return;
    /* another error at the same token from a state seen there before: consume one (the
     * failsafe against looping) */
    if (p->last_err_pos == p->pos) {
        bool seen = false;
        for (int i = 0; i < p->nlast_sites; i++)
            seen = seen || p->last_sites[i] == site;
        if (seen && la(p, 1)->type != T_EOF && !recovery_consume(p))
            return;
    }
    if (p->last_err_pos != p->pos)
        p->nlast_sites = 0;
    p->last_err_pos = p->pos;
    if (p->nlast_sites < (int)(sizeof(p->last_sites) / sizeof(p->last_sites[0])))
        p->last_sites[p->nlast_sites++] = site;
    {
        tokset rs = recovery_set(p);
        while (la(p, 1)->type != T_EOF && !in_set(rs, la(p, 1)))
            if (!recovery_consume(p))
                return;
    }
}

/* Match: the token, or recoverInline (deletion, insertion, else a mismatch) */
static const struct tok *match(struct parser *p, int type, tokset after, bool after_nullable,
                               int site)
{
    const struct tok *t = la(p, 1);

    if (p->failed)
        return NULL;
    if (t->type == type) {
        p->err_mode = false;
        p->pos++;
        return t;
    }
    if (!check_attempts(p))
        return NULL;
    if (la(p, 2)->type == type) {
        /* single-token deletion */
        syn_error(p, t, "extraneous input ", t, TS(type));
        p->pos++;
        p->err_mode = false;
        t = la(p, 1);
        p->pos++;
        return t;
    }
    if (in_set(expected_ctx(p, after, after_nullable), t)) {
        /* single-token insertion: go on as if it had been there (at the current token) */
        syn_missing(p, type);
        p->missing.type = type;
        p->missing.start = t->start;
        p->missing.stop = t->start - 1;
        return &p->missing;
    }
    raise_mismatch(p, TS(type), site);
    return NULL;
}

/* Sync before a decision: next is the state's local set (eps: the rule may end there);
 * loopback: a loop's back edge (report and skip) rather than a block's start (deletion, or
 * a mismatch). Returns false when the rule must exit with the error. */
static bool sync(struct parser *p, tokset next, bool eps, bool loopback, int site)
{
    const struct tok *t = la(p, 1);

    if (p->failed)
        return false;
    if (p->err_mode || eps || in_set(next, t))
        return true;
    if (loopback) {
        syn_error(p, t, "extraneous input ", t, next);
        {
            tokset stop = next | recovery_set(p);
            while (la(p, 1)->type != T_EOF && !in_set(stop, la(p, 1)))
                p->pos++;
        }
        return true;
    }
    if (in_set(next, la(p, 2))) {
        syn_error(p, t, "extraneous input ", t, next);
        p->pos++;
        p->err_mode = false;
        return true;
    }
    raise_mismatch(p, next, site);
    return false;
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

/* an empty expression where the tree has no node (cel-go's newExpr of a context) */
static struct cel_expr *empty_at(struct parser *p, const struct tok *t)
{
    return new_expr(p, CEL_E_UNSPEC, new_id(p, t->start, t->start));
}

static struct cel_expr *parse_logic(struct parser *p, int op_type);

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

    if (target->kind != CEL_E_LIST && target->kind != CEL_E_SELECT && target->kind != CEL_E_IDENT &&
        target->kind != CEL_E_COMP && target->kind != CEL_E_CALL)
        return macro_error(
            p, target->id,
            "sortBy can only be applied to a list, identifier, comprehension, call or select "
            "expression");
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

/* FIRST sets of CEL.g4's rules, and the operator sets */
#define F_EXPR SET_EXPR
#define F_MEMBER SET_PRIMARY
#define F_OPTEXPR (F_EXPR | TS(T_QUESTION))
#define F_OPTFIELD (TS(T_QUESTION) | TS(T_IDENT) | TS(T_ESC_IDENT))
#define F_IDS (TS(T_IDENT) | TS(T_ESC_IDENT))
#define F_LITERAL                                                                                  \
    (TS(T_MINUS) | TS(T_NUM_INT) | TS(T_NUM_UINT) | TS(T_NUM_FLOAT) | TS(T_STRING) | TS(T_BYTES) | \
     TS(T_TRUE) | TS(T_FALSE) | TS(T_NULL))
#define S_RELOPS (TS(T_LT) | TS(T_LE) | TS(T_GE) | TS(T_GT) | TS(T_EQ) | TS(T_NE) | TS(T_IN))
#define S_CALCOPS (TS(T_STAR) | TS(T_SLASH) | TS(T_PERCENT) | TS(T_PLUS) | TS(T_MINUS))
#define S_SUFFIX (TS(T_DOT) | TS(T_LBRACKET))

/* error sites (ANTLR's state numbers, for Recover's failsafe) */
enum {
    SITE_START = 1,
    SITE_EXPR_COLON,
    SITE_UNARY,
    SITE_UNARY_NOT,
    SITE_UNARY_NEG,
    SITE_MEMBER,
    SITE_SELECT,
    SITE_CALL_ARGS,
    SITE_CALL_CLOSE,
    SITE_INDEX,
    SITE_INDEX_CLOSE,
    SITE_PRIMARY,
    SITE_IDENT,
    SITE_GCALL_ARGS,
    SITE_GCALL_CLOSE,
    SITE_NESTED_CLOSE,
    SITE_LIST,
    SITE_LIST_COMMA,
    SITE_LIST_CLOSE,
    SITE_MAP,
    SITE_MAP_COMMA,
    SITE_MAP_CLOSE,
    SITE_MSG,
    SITE_MSG_LOOP,
    SITE_MSG_IDENT,
    SITE_MSG_OPEN,
    SITE_MSG_FIELDS,
    SITE_MSG_COMMA,
    SITE_MSG_CLOSE,
    SITE_OPTEXPR,
    SITE_OPTFIELD,
    SITE_ESCIDENT,
    SITE_MAP_COLON,
    SITE_FIELD_COLON,
    SITE_LITERAL,
    SITE_LIT_SIGN,
};

static bool at(struct parser *p, int type)
{
    return !p->failed && la(p, 1)->type == type;
}

static bool la_in(struct parser *p, int k, tokset s)
{
    return in_set(s, la(p, k));
}

/* a list of expressions grown in the arena */
struct exprs {
    struct cel_expr **v;
    int n, alloc;
};

static bool exprs_add(struct parser *p, struct exprs *l, struct cel_expr *e)
{
    if (!e)
        return false;
    if (l->n == l->alloc) {
        int na = l->alloc ? l->alloc * 2 : 4;
        struct cel_expr **nv = arena_alloc(p->a, (size_t)na * sizeof(*nv));
        if (!nv) {
            p->nomem = true;
            p->failed = true;
            return false;
        }
        if (l->n)
            memcpy(nv, l->v, (size_t)l->n * sizeof(*nv));
        l->v = nv;
        l->alloc = na;
    }
    l->v[l->n++] = e;
    return true;
}

/* an empty expression with no location (Visit of a missing subtree) */
static struct cel_expr *empty_noloc(struct parser *p)
{
    return new_expr(p, CEL_E_UNSPEC, new_id(p, -1, -1));
}

/* a sub-rule invoked with the follow of its invocation */
static struct cel_expr *sub_expr(struct parser *p, tokset follow, bool nullable)
{
    struct cel_expr *e;
    if (!push_frame(p, follow, nullable))
        return NULL;
    e = parse_expr(p);
    pop_frame(p);
    return e;
}

/* exprList: e+=expr (',' e+=expr)* */
static void parse_expr_list(struct parser *p, struct exprs *out)
{
    exprs_add(p, out, sub_expr(p, TS(T_COMMA), true));
    while (!p->failed && at(p, T_COMMA)) {
        match(p, T_COMMA, F_EXPR, false, 0);
        exprs_add(p, out, sub_expr(p, TS(T_COMMA), true));
    }
}

/* escapeIdent: IDENTIFIER | ESC_IDENTIFIER; the name (backquotes removed), NULL on error */
static const char *parse_escape_ident(struct parser *p, const struct tok **tk)
{
    const struct tok *t;

    *tk = NULL;
    if (!sync(p, F_IDS, false, false, SITE_ESCIDENT)) {
        rule_recover(p);
        return NULL;
    }
    t = la(p, 1);
    if (t->type != T_IDENT && t->type != T_ESC_IDENT) {
        raise_noviable(p, p->pos, p->pos, SITE_ESCIDENT);
        rule_recover(p);
        return NULL;
    }
    match(p, t->type, 0, true, 0);
    *tk = t;
    if (t->type == T_ESC_IDENT) {
        const char *txt = tok_text(p, t);
        size_t l = strlen(txt);
        return arena_strndup(p->a, txt + 1, l - 2);
    }
    return tok_text(p, t);
}

/* optExpr: (opt='?')? e=expr; *opt says whether it carried '?' */
static struct cel_expr *parse_opt_expr(struct parser *p, const struct tok **opt)
{
    *opt = NULL;
    if (!sync(p, F_OPTEXPR, false, false, SITE_OPTEXPR)) {
        rule_recover(p);
        return empty_noloc(p);
    }
    if (at(p, T_QUESTION)) {
        *opt = la(p, 1);
        match(p, T_QUESTION, F_EXPR, false, 0);
    }
    return sub_expr(p, 0, true);
}

/* literal: sign=MINUS? NUM_INT | NUM_UINT | sign=MINUS? NUM_FLOAT | STRING | BYTES | ... */
static struct cel_expr *parse_literal(struct parser *p)
{
    const struct tok *t, *sign = NULL;
    struct cel_lit lit = {0};
    int32_t id;

    if (!sync(p, F_LITERAL, false, false, SITE_LITERAL)) {
        rule_recover(p);
        return empty_noloc(p);
    }
    t = la(p, 1);
    if (t->type == T_MINUS) {
        /* Int or Double by the token after the sign */
        int nt = la(p, 2)->type;
        if (nt != T_NUM_INT && nt != T_NUM_FLOAT) {
            raise_noviable(p, p->pos, p->pos + 1, SITE_LITERAL);
            rule_recover(p);
            return empty_noloc(p);
        }
        sign = t;
        match(p, T_MINUS, TS(nt), false, 0);
        t = la(p, 1);
    }
    id = new_id(p, (sign ? sign : t)->start, t->stop + 1);
    match(p, t->type, 0, true, 0);
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
        return empty_noloc(p);
    }
    return mk_lit(p, id, lit);
}

/* a call or the macro it names, as the visitor builds it from a (maybe partial) call */
static struct cel_expr *call_or_macro(struct parser *p, int32_t cid, const char *name,
                                      struct cel_expr *target, struct exprs *args)
{
    struct cel_expr *m = maybe_macro(p, cid, name, target, args->v, args->n);
    if (m || p->nomem)
        return m;
    return mk_call(p, cid, name, target, args->v, args->n);
}

/* The entries of a message or map literal: (opt)key ':' value, in the visitor's rules: a
 * trailing key without its ':' is dropped, a ':' without a value takes an empty one. */
struct entries {
    struct cel_entry *v;
    int n, alloc;
};

static bool entries_add(struct parser *p, struct entries *l, struct cel_entry e)
{
    if (l->n == l->alloc) {
        int na = l->alloc ? l->alloc * 2 : 4;
        struct cel_entry *nv = arena_alloc(p->a, (size_t)na * sizeof(*nv));
        if (!nv) {
            p->nomem = true;
            p->failed = true;
            return false;
        }
        if (l->n)
            memcpy(nv, l->v, (size_t)l->n * sizeof(*nv));
        l->v = nv;
        l->alloc = na;
    }
    l->v[l->n++] = e;
    return true;
}

/* mapInitializerList: optExpr ':' expr (',' optExpr ':' expr)* */
static void parse_map_inits(struct parser *p, struct entries *out)
{
    for (bool first = true; !p->failed; first = false) {
        const struct tok *opt, *col;
        struct cel_expr *k, *v;
        struct cel_entry en = {0};
        if (!first) {
            /* the loop: another entry when ',' is followed by one (else the trailing comma) */
            if (!(at(p, T_COMMA) && la_in(p, 2, F_OPTEXPR)))
                break;
            match(p, T_COMMA, F_OPTEXPR, false, 0);
        }
        if (!push_frame(p, TS(T_COLON), false))
            return;
        k = parse_opt_expr(p, &opt);
        pop_frame(p);
        col = match(p, T_COLON, F_EXPR, false, SITE_MAP_COLON);
        if (!col) {
            rule_recover(p);
            return;
        }
        v = sub_expr(p, TS(T_COMMA), true);
        if (opt && !p->opts->optional_syntax) {
            cel_diags_add(p->diags, 0, opt->start, "unsupported syntax '?'");
            continue;
        }
        en.id = tok_id(p, col);
        en.optional = opt != NULL;
        en.key = k;
        en.value = v;
        entries_add(p, out, en);
    }
}

/* optField: (opt='?')? escapeIdent */
static const char *parse_opt_field(struct parser *p, const struct tok **opt, const struct tok **idt)
{
    const char *name;

    *opt = NULL;
    *idt = NULL;
    if (!sync(p, F_OPTFIELD, false, false, SITE_OPTFIELD)) {
        rule_recover(p);
        return NULL;
    }
    if (at(p, T_QUESTION)) {
        *opt = la(p, 1);
        match(p, T_QUESTION, F_IDS, false, 0);
    }
    if (!push_frame(p, 0, true))
        return NULL;
    name = parse_escape_ident(p, idt);
    pop_frame(p);
    return name;
}

/* fieldInitializerList: optField ':' expr (',' optField ':' expr)* */
static void parse_field_inits(struct parser *p, struct entries *out)
{
    const struct tok *list_start = la(p, 1);

    for (bool first = true; !p->failed; first = false) {
        const struct tok *opt, *idt, *col;
        const char *name;
        struct cel_expr *v;
        struct cel_entry en = {0};
        if (!first) {
            if (!(at(p, T_COMMA) && la_in(p, 2, F_OPTFIELD)))
                break;
            match(p, T_COMMA, F_OPTFIELD, false, 0);
        }
        if (!push_frame(p, TS(T_COLON), false))
            return;
        name = parse_opt_field(p, &opt, &idt);
        pop_frame(p);
        col = match(p, T_COLON, F_EXPR, false, SITE_FIELD_COLON);
        if (!col) {
            rule_recover(p);
            return;
        }
        v = sub_expr(p, TS(T_COMMA), true);
        if (opt && !p->opts->optional_syntax) {
            cel_diags_add(p->diags, 0, opt->start, "unsupported syntax '?'");
            continue;
        }
        if (!name) {
            /* the visitor's normalizeIdent of a field whose name did not parse, reported at
             * the start of the whole list */
            cel_diags_add(p->diags, 0, list_start->start, "unsupported ident kind");
            continue;
        }
        en.id = tok_id(p, col);
        en.optional = opt != NULL;
        en.field = name;
        en.value = v;
        entries_add(p, out, en);
    }
}

/* listInit: optExpr (',' optExpr)*; optional element indices into *opts */
static void parse_list_init(struct parser *p, struct exprs *out, int32_t **opts, int *nopt)
{
    int alloc = 0;

    for (bool first = true; !p->failed; first = false) {
        const struct tok *q;
        struct cel_expr *e;
        if (!first) {
            if (!(at(p, T_COMMA) && la_in(p, 2, F_OPTEXPR)))
                break;
            match(p, T_COMMA, F_OPTEXPR, false, 0);
        }
        if (!push_frame(p, TS(T_COMMA), true))
            return;
        e = parse_opt_expr(p, &q);
        pop_frame(p);
        if (q) {
            if (!p->opts->optional_syntax) {
                cel_diags_add(p->diags, 0, q->start, "unsupported syntax '?'");
            } else {
                if (*nopt == alloc) {
                    int na = alloc ? alloc * 2 : 4;
                    int32_t *no = arena_alloc(p->a, (size_t)na * sizeof(*no));
                    if (!no) {
                        p->nomem = true;
                        p->failed = true;
                        return;
                    }
                    if (*nopt)
                        memcpy(no, *opts, (size_t)*nopt * sizeof(*no));
                    *opts = no;
                    alloc = na;
                }
                (*opts)[(*nopt)++] = out->n;
            }
        }
        exprs_add(p, out, e);
    }
}

/* primary's alternatives, as ANTLR predicts them */
enum { P_IDENT = 1, P_GCALL, P_NESTED, P_LIST, P_STRUCT, P_MESSAGE, P_LITERAL, P_NOVIABLE };

static int predict_primary(struct parser *p, int32_t *offending)
{
    int k = 1;
    const struct tok *t = la(p, 1);

    switch (t->type) {
    case T_LPAREN:
        return P_NESTED;
    case T_LBRACKET:
        return P_LIST;
    case T_LBRACE:
        return P_STRUCT;
    case T_MINUS:
    case T_NUM_INT:
    case T_NUM_UINT:
    case T_NUM_FLOAT:
    case T_STRING:
    case T_BYTES:
    case T_TRUE:
    case T_FALSE:
    case T_NULL:
        return P_LITERAL;
    case T_DOT:
        if (la(p, 2)->type != T_IDENT) {
            *offending = p->pos + 1;
            return P_NOVIABLE;
        }
        k = 2;
        break;
    case T_IDENT:
        break;
    default:
        *offending = p->pos;
        return P_NOVIABLE;
    }
    if (la(p, k + 1)->type == T_LPAREN)
        return P_GCALL;
    while (la(p, k + 1)->type == T_DOT && la(p, k + 2)->type == T_IDENT)
        k += 2;
    return la(p, k + 1)->type == T_LBRACE ? P_MESSAGE : P_IDENT;
}

/* the message name ids+=IDENT ('.' ids+=IDENT)* from the current token */
static struct cel_expr *parse_message(struct parser *p, bool leading_dot, const struct tok *start)
{
    struct buf b = BUF_INIT(0);
    const struct tok *t, *lb = NULL;
    struct entries ents = {0};
    struct cel_expr *e;
    const char *name;
    int32_t id;

    (void)start;
    if (leading_dot)
        buf_puts(&b, ".");
    t = match(p, T_IDENT, TS(T_DOT) | TS(T_LBRACE), false, SITE_MSG_IDENT);
    if (t)
        buf_puts(&b, tok_text(p, t));
    if (!p->exc && sync(p, TS(T_DOT) | TS(T_LBRACE), false, false, SITE_MSG_LOOP)) {
        while (!p->exc && at(p, T_DOT)) {
            match(p, T_DOT, TS(T_IDENT), false, 0);
            t = match(p, T_IDENT, TS(T_DOT) | TS(T_LBRACE), false, SITE_MSG_IDENT);
            if (!t)
                break;
            buf_puts(&b, ".");
            buf_puts(&b, t == &p->missing ? "<missing IDENTIFIER>" : tok_text(p, t));
            if (!sync(p, TS(T_DOT) | TS(T_LBRACE), false, true, SITE_MSG_LOOP))
                break;
        }
    }
    if (!p->exc) {
        lb = match(p, T_LBRACE, F_OPTFIELD | TS(T_COMMA) | TS(T_RBRACE), false, SITE_MSG_OPEN);
    }
    if (!p->exc &&
        sync(p, F_OPTFIELD | TS(T_COMMA) | TS(T_RBRACE), false, false, SITE_MSG_FIELDS)) {
        if (la_in(p, 1, F_OPTFIELD)) {
            if (push_frame(p, TS(T_COMMA) | TS(T_RBRACE), false)) {
                parse_field_inits(p, &ents);
                pop_frame(p);
            }
        }
        if (!p->failed && sync(p, TS(T_COMMA) | TS(T_RBRACE), false, false, SITE_MSG_COMMA)) {
            if (at(p, T_COMMA))
                match(p, T_COMMA, TS(T_RBRACE), false, 0);
            match(p, T_RBRACE, 0, true, SITE_MSG_CLOSE);
        }
    }
    rule_recover(p);
    name = pstrdup(p, b.data ? b.data : "");
    buf_release(&b);
    id = lb ? tok_id(p, lb) : new_id(p, -1, -1);
    e = new_expr(p, CEL_E_STRUCT, id);
    if (!e || !name)
        return e;
    e->u.map.entries = ents.v;
    e->u.map.n = ents.n;
    e->u.map.type_name = name;
    return e;
}

/* primary */
static struct cel_expr *parse_primary(struct parser *p)
{
    const struct tok *start = la(p, 1), *dot = NULL;
    int32_t off = 0;
    int alt;

    if (!sync(p, SET_PRIMARY, false, false, SITE_PRIMARY)) {
        rule_recover(p);
        return empty_noloc(p);
    }
    start = la(p, 1);
    alt = predict_primary(p, &off);
    switch (alt) {
    case P_NOVIABLE:
        raise_noviable(p, p->pos, off, SITE_PRIMARY);
        rule_recover(p);
        return empty_noloc(p);
    case P_IDENT:
    case P_GCALL: {
        const struct tok *idt, *lp = NULL;
        const char *txt;
        char *name;
        struct exprs args = {0};
        struct cel_expr *e;
        sync(p, TS(T_DOT) | TS(T_IDENT), false, false, SITE_IDENT);
        if (at(p, T_DOT)) {
            dot = la(p, 1);
            match(p, T_DOT, TS(T_IDENT), false, 0);
        }
        idt = match(p, T_IDENT, alt == P_GCALL ? TS(T_LPAREN) : 0, alt != P_GCALL, SITE_IDENT);
        if (!idt) {
            rule_recover(p);
            return empty_at(p, start);
        }
        txt = tok_text(p, idt);
        if (alt == P_GCALL) {
            lp = match(p, T_LPAREN, F_EXPR | TS(T_RPAREN), false, SITE_GCALL_ARGS);
            if (lp && sync(p, F_EXPR | TS(T_RPAREN), false, false, SITE_GCALL_ARGS)) {
                if (la_in(p, 1, F_EXPR) && push_frame(p, TS(T_RPAREN), false)) {
                    parse_expr_list(p, &args);
                    pop_frame(p);
                }
                if (!p->failed)
                    match(p, T_RPAREN, 0, true, SITE_GCALL_CLOSE);
            }
            rule_recover(p);
        }
        if (is_reserved(txt))
            return error_at(p, start->start, "reserved identifier: %s", txt);
        if (dot) {
            size_t l = strlen(txt);
            name = arena_alloc(p->a, l + 2);
            if (!name) {
                p->nomem = true;
                return NULL;
            }
            name[0] = '.';
            memcpy(name + 1, txt, l + 1);
        } else {
            name = (char *)txt;
        }
        if (alt == P_IDENT)
            return mk_ident(p, tok_id(p, idt), name);
        if (!lp)
            return empty_at(p, start);
        e = call_or_macro(p, tok_id(p, lp), name, NULL, &args);
        return e;
    }
    case P_MESSAGE: {
        bool leading = false;
        sync(p, TS(T_DOT) | TS(T_IDENT), false, false, SITE_MSG);
        if (at(p, T_DOT)) {
            leading = true;
            match(p, T_DOT, TS(T_IDENT), false, 0);
        }
        return parse_message(p, leading, start);
    }
    case P_NESTED: {
        struct cel_expr *e;
        match(p, T_LPAREN, F_EXPR, false, 0);
        e = sub_expr(p, TS(T_RPAREN), false);
        if (!p->failed && !match(p, T_RPAREN, 0, true, SITE_NESTED_CLOSE))
            rule_recover(p);
        return e;
    }
    case P_LIST: {
        struct exprs el = {0};
        int32_t *opt = NULL;
        int nopt = 0;
        struct cel_expr *e;
        const struct tok *lb = la(p, 1);
        int32_t id;
        match(p, T_LBRACKET, F_OPTEXPR | TS(T_COMMA) | TS(T_RBRACKET), false, 0);
        id = tok_id(p, lb);
        if (sync(p, F_OPTEXPR | TS(T_COMMA) | TS(T_RBRACKET), false, false, SITE_LIST)) {
            if (la_in(p, 1, F_OPTEXPR) && push_frame(p, TS(T_COMMA) | TS(T_RBRACKET), false)) {
                parse_list_init(p, &el, &opt, &nopt);
                pop_frame(p);
            }
            if (!p->failed &&
                sync(p, TS(T_COMMA) | TS(T_RBRACKET), false, false, SITE_LIST_COMMA)) {
                if (at(p, T_COMMA))
                    match(p, T_COMMA, TS(T_RBRACKET), false, 0);
                match(p, T_RBRACKET, 0, true, SITE_LIST_CLOSE);
            }
        }
        rule_recover(p);
        e = new_expr(p, CEL_E_LIST, id);
        if (!e)
            return NULL;
        e->u.list.elems = el.v;
        e->u.list.n = el.n;
        e->u.list.optional = opt;
        e->u.list.nopt = nopt;
        return e;
    }
    case P_STRUCT: {
        struct entries ents = {0};
        struct cel_expr *e;
        const struct tok *lb = la(p, 1);
        int32_t id;
        match(p, T_LBRACE, F_OPTEXPR | TS(T_COMMA) | TS(T_RBRACE), false, 0);
        id = tok_id(p, lb);
        if (sync(p, F_OPTEXPR | TS(T_COMMA) | TS(T_RBRACE), false, false, SITE_MAP)) {
            if (la_in(p, 1, F_OPTEXPR) && push_frame(p, TS(T_COMMA) | TS(T_RBRACE), false)) {
                parse_map_inits(p, &ents);
                pop_frame(p);
            }
            if (!p->failed && sync(p, TS(T_COMMA) | TS(T_RBRACE), false, false, SITE_MAP_COMMA)) {
                if (at(p, T_COMMA))
                    match(p, T_COMMA, TS(T_RBRACE), false, 0);
                match(p, T_RBRACE, 0, true, SITE_MAP_CLOSE);
            }
        }
        rule_recover(p);
        e = new_expr(p, CEL_E_MAP, id);
        if (!e)
            return NULL;
        e->u.map.entries = ents.v;
        e->u.map.n = ents.n;
        return e;
    }
    case P_LITERAL:
    default: {
        struct cel_expr *e;
        if (!push_frame(p, 0, true))
            return NULL;
        e = parse_literal(p);
        pop_frame(p);
        return e;
    }
    }
}

/* member: primary ( '.' '?'? escapeIdent | '.' IDENTIFIER '(' args ')' | '[' '?'? expr ']' )*
 * Left recursive in CEL.g4: every suffix is one more level of the member rule. After an
 * error in a suffix the rule ends with what the visitor makes of that suffix. */
static struct cel_expr *parse_member(struct parser *p)
{
    const struct tok *mstart = la(p, 1);
    struct cel_expr *e;
    int pushed = 0;

    if (!enter(p, &p->d_member))
        return new_expr(p, CEL_E_UNSPEC, 0);
    if (!push_frame(p, S_SUFFIX, true))
        return NULL;
    e = parse_primary(p);
    pop_frame(p);
    while (!p->failed && e && (at(p, T_DOT) || at(p, T_LBRACKET))) {
        const struct tok *t = la(p, 1);
        pushed++;
        if (!enter(p, &p->d_member))
            break;
        if (t->type == T_DOT) {
            const struct tok *t2 = la(p, 2), *idt;
            bool opt = false;
            const char *name;
            bool is_call = t2->type == T_IDENT && la(p, 3)->type == T_LPAREN;
            if (t2->type != T_QUESTION && t2->type != T_IDENT && t2->type != T_ESC_IDENT) {
                raise_noviable(p, p->pos, p->pos + 1, SITE_MEMBER);
                rule_recover(p);
                break;
            }
            if (is_call) {
                /* member call */
                struct exprs args = {0};
                int h = e->h;
                const struct tok *lp;
                match(p, T_DOT, TS(T_IDENT), false, 0);
                idt = match(p, T_IDENT, TS(T_LPAREN), false, 0);
                name = tok_text(p, idt);
                lp = la(p, 1);
                match(p, T_LPAREN, F_EXPR | TS(T_RPAREN), false, 0);
                if (sync(p, F_EXPR | TS(T_RPAREN), false, false, SITE_CALL_ARGS)) {
                    if (la_in(p, 1, F_EXPR) && push_frame(p, TS(T_RPAREN), false)) {
                        parse_expr_list(p, &args);
                        pop_frame(p);
                    }
                    if (!p->failed)
                        match(p, T_RPAREN, S_SUFFIX, true, SITE_CALL_CLOSE);
                }
                for (int i = 0; i < args.n; i++)
                    if (args.v[i]->h > h)
                        h = args.v[i]->h;
                e = call_or_macro(p, tok_id(p, lp), name, e, &args);
                if (p->nomem)
                    return NULL;
                if (e)
                    e->h = h + 1;
                if (p->exc) {
                    rule_recover(p);
                    break;
                }
                continue;
            }
            /* select */
            match(p, T_DOT, TS(T_QUESTION) | F_IDS, false, 0);
            if (!sync(p, TS(T_QUESTION) | F_IDS, false, false, SITE_SELECT)) {
                rule_recover(p);
                e = empty_at(p, mstart);
                break;
            }
            if (at(p, T_QUESTION)) {
                opt = true;
                match(p, T_QUESTION, F_IDS, false, 0);
            }
            if (!push_frame(p, S_SUFFIX, true))
                return NULL;
            name = parse_escape_ident(p, &idt);
            pop_frame(p);
            if (!name)
                name = "";
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
                e = mk_call2(p, sid, "_?._", e,
                             mk_lit(p, idt ? tok_id(p, idt) : new_id(p, -1, -1), lit));
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
        /* index */
        {
            bool opt = false;
            struct cel_expr *idx;
            int32_t iid;
            int h;
            match(p, T_LBRACKET, F_OPTEXPR, false, 0);
            iid = tok_id(p, t);
            if (!sync(p, F_OPTEXPR, false, false, SITE_INDEX)) {
                rule_recover(p);
                e = mk_call2(p, iid, "_[_]", e, empty_noloc(p));
                break;
            }
            if (at(p, T_QUESTION)) {
                opt = true;
                match(p, T_QUESTION, F_EXPR, false, 0);
            }
            idx = sub_expr(p, TS(T_RBRACKET), false);
            if (!idx)
                return NULL;
            if (!p->failed)
                match(p, T_RBRACKET, S_SUFFIX, true, SITE_INDEX_CLOSE);
            h = e->h > idx->h ? e->h : idx->h;
            if (opt && !p->opts->optional_syntax) {
                e = error_at(p, t->start, "%s", "unsupported syntax '[?'");
            } else {
                e = mk_call2(p, iid, opt ? "_[?_]" : "_[_]", e, idx);
                if (e)
                    e->h = h + 1;
            }
            if (p->exc) {
                rule_recover(p);
                break;
            }
        }
    }
    p->d_member -= 1 + pushed;
    return e;
}

/* unary: member | '!'+ member | '-'+ member. A '-' directly before a number is the number's
 * sign (ANTLR picks the first alternative, the literal), but once negation has started the
 * '-'+ loop takes every '-' (its ambiguity resolves to going round again). */
static struct cel_expr *parse_unary(struct parser *p)
{
    const struct tok *start = la(p, 1), *t;
    int type, n = 0;
    struct cel_expr *m = NULL;
    int32_t id;

    if (!sync(p, F_EXPR, false, false, SITE_UNARY)) {
        rule_recover(p);
        goto error_literal;
    }
    t = la(p, 1);
    if (t->type == T_MINUS) {
        int nt = la(p, 2)->type;
        if (nt == T_NUM_INT || nt == T_NUM_FLOAT)
            goto member;
        if (nt != T_MINUS && !in_set(F_MEMBER, la(p, 2))) {
            raise_noviable(p, p->pos, p->pos + 1, SITE_UNARY);
            rule_recover(p);
            goto error_literal;
        }
    } else if (t->type != T_EXCLAM) {
        if (!in_set(F_MEMBER, t)) {
            raise_noviable(p, p->pos, p->pos, SITE_UNARY);
            rule_recover(p);
            goto error_literal;
        }
        goto member;
    }
    /* LogicalNot or Negate: the ops, then the member */
    type = t->type;
    for (;;) {
        tokset back = TS(type) | F_MEMBER;
        match(p, type, back, false, 0);
        n++;
        sync(p, back, false, true, type == T_EXCLAM ? SITE_UNARY_NOT : SITE_UNARY_NEG);
        if (at(p, type))
            continue;
        if (!la_in(p, 1, F_MEMBER)) {
            /* the loop's decision: neither another op nor a member */
            raise_noviable(p, p->pos, p->pos, type == T_EXCLAM ? SITE_UNARY_NOT : SITE_UNARY_NEG);
            rule_recover(p);
            m = empty_noloc(p);
            break;
        }
        if (!push_frame(p, 0, true))
            return NULL;
        m = parse_member(p);
        pop_frame(p);
        break;
    }
    if (!m || n % 2 == 0)
        return m;
    id = tok_id(p, start);
    m = mk_call(p, id, type == T_EXCLAM ? "!_" : "-_", NULL, &m, 1);
    if (m)
        m->h = m->u.call.args[0]->h;
    return m;
member:
    if (!push_frame(p, 0, true))
        return NULL;
    m = parse_member(p);
    pop_frame(p);
    return m;
error_literal : {
    /* VisitUnary of a unary with no alternative: the string "<<error>>" */
    struct cel_lit lit = {.kind = CEL_LIT_STRING};
    lit.v.s.p = "<<error>>";
    lit.v.s.len = 9;
    return mk_lit(p, new_id(p, start->start, start->stop + 1), lit);
}
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
    struct cel_expr *e;
    if (!l || !r)
        return l ? l : r;
    e = mk_call2(p, id, op_fn(op->type), l, r);
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
    if (!push_frame(p, S_CALCOPS, true))
        return NULL;
    e = parse_unary(p);
    pop_frame(p);
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
        p->err_mode = false; /* the operator is matched */
        p->pos++;
        id = tok_id(p, op);
        if (!push_frame(p, S_CALCOPS, true))
            return NULL;
        r = parse_calc(p, next);
        pop_frame(p);
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
    if (!push_frame(p, S_RELOPS, true))
        return NULL;
    e = parse_calc(p, 0);
    pop_frame(p);
    while (!p->failed && e && rel_op(la(p, 1)->type) && prec <= 1) {
        const struct tok *op = la(p, 1);
        int32_t id;
        struct cel_expr *r;
        pushed++;
        if (!enter(p, &p->d_rel))
            break;
        p->err_mode = false;
        p->pos++;
        id = tok_id(p, op);
        if (!push_frame(p, S_RELOPS, true))
            return NULL;
        r = parse_relation(p, 2);
        pop_frame(p);
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

static struct cel_expr *logic_term(struct parser *p, int op_type)
{
    struct cel_expr *e;
    if (!push_frame(p, TS(op_type), true))
        return NULL;
    e = op_type == T_OR ? parse_logic(p, T_AND) : parse_relation(p, 0);
    pop_frame(p);
    return e;
}

static struct cel_expr *parse_logic(struct parser *p, int op_type)
{
    struct cel_expr **terms = NULL;
    int32_t *ops = NULL;
    int n = 0, alloc = 0;
    struct cel_expr *first = logic_term(p, op_type);

    if (p->failed || !first || la(p, 1)->type != op_type)
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
        match(p, op_type, F_EXPR, false, 0);
        ops[n - 1] = tok_id(p, op);
        next = logic_term(p, op_type);
        if (!next)
            break;
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
    if (!push_frame(p, TS(T_QUESTION), true))
        return NULL;
    c = parse_logic(p, T_OR);
    pop_frame(p);
    if (p->failed || !c || la(p, 1)->type != T_QUESTION) {
        p->d_expr--;
        return c;
    }
    q = la(p, 1);
    match(p, T_QUESTION, F_EXPR, false, 0);
    id = tok_id(p, q);
    if (!push_frame(p, TS(T_COLON), false))
        return NULL;
    t = parse_logic(p, T_OR);
    pop_frame(p);
    if (!t)
        return NULL;
    if (!p->failed && match(p, T_COLON, F_EXPR, false, SITE_EXPR_COLON)) {
        f = sub_expr(p, 0, true);
    } else {
        rule_recover(p);
        f = empty_noloc(p);
    }
    p->d_expr--;
    if (!f)
        return NULL;
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
    if (lx.too_many) {
        free(lx.toks);
        return new_expr(&p, CEL_E_UNSPEC, 0);
    }
    /* start: e=expr EOF */
    p.last_err_pos = -1;
    e = NULL;
    if (push_frame(&p, TS(T_EOF), false)) {
        e = parse_expr(&p);
        pop_frame(&p);
    }
    if (!p.failed && !match(&p, T_EOF, 0, false, SITE_START))
        rule_recover(&p);
    if (p.aborted) {
        /* cel-go's parse ended with a panic before its visitor ran: only the lexer's and the
         * parser's errors remain (no macro, literal or identifier errors) */
        struct cel_diag **g = &diags->head;
        diags->tail = &diags->head;
        while (*g) {
            if (strncmp((*g)->msg, "Syntax error:", 13) &&
                strncmp((*g)->msg, "error recovery token lookahead", 30)) {
                *g = (*g)->next;
                diags->count--;
                continue;
            }
            diags->tail = &(*g)->next;
            g = &(*g)->next;
        }
    }
    if (!p.failed && e && e->h > p.max_depth)
        cel_diags_add(diags, 0, -1, "max recursion depth exceeded");
    free(lx.toks);
    if (p.nomem)
        return NULL;
    if (!e)
        e = new_expr(&p, CEL_E_UNSPEC, 0);
    return e;
}
