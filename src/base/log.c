/* log.c - klog-style text and component-base JSON log lines (see log.h). */
#include "base/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/goparse.h"
#include "base/quote.h"

#define LOG_LINE_MAX 4096
#define LOG_MAX_PAIRS 32

static const char *log_tag = "main";
static int log_level;
static enum log_fmt log_fmt_cur = LOG_FMT_TEXT;
static const char *const *log_object_keys;

void log_setup(const char *tag, int verbosity)
{
    if (tag)
        log_tag = tag;
    log_level = verbosity;
}

void log_set_format(enum log_fmt f)
{
    log_fmt_cur = f;
}

void log_set_object_keys(const char *const *keys)
{
    log_object_keys = keys;
}

int log_fmt_parse(const char *s, enum log_fmt *out)
{
    if (!strcmp(s, "text"))
        *out = LOG_FMT_TEXT;
    else if (!strcmp(s, "json"))
        *out = LOG_FMT_JSON;
    else
        return -EINVAL;
    return 0;
}

static size_t utf8_len(const unsigned char *s, size_t n);

/* text_sanitize copies msg into out (size bytes, NUL-terminated, cut) with every control
 * character escaped as strconv.Quote escapes it, but tabs and the line breaks of log_quote's
 * multi-line form (followed by a tab or " >"): whatever a caller put in, no text of the line
 * can start a line of its own. */
static void text_sanitize(const char *msg, char *out, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;

    for (; *msg && n + 5 < size; msg++) {
        unsigned char c = (unsigned char)*msg;

        if ((c >= 0x20 && c != 0x7f) || c == '\t' ||
            (c == '\n' && (msg[1] == '\t' || (msg[1] == ' ' && msg[2] == '>')))) {
            out[n++] = (char)c;
            continue;
        }
        out[n++] = '\\';
        switch (c) {
        case '\n':
            out[n++] = 'n';
            break;
        case '\r':
            out[n++] = 'r';
            break;
        default:
            out[n++] = 'x';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        }
    }
    out[n] = '\0';
}

size_t log_format(char *buf, size_t size, char sev, long ts_sec, long ts_nsec, int pid,
                  const char *msg)
{
    char clean[LOG_LINE_MAX * 2];
    time_t t = (time_t)ts_sec;
    struct tm tm;
    int n;

    if (size < 2)
        return 0;
    gmtime_r(&t, &tm);
    text_sanitize(msg, clean, sizeof(clean));
    n = snprintf(buf, size - 1, "%c%02d%02d %02d:%02d:%02d.%06ld %7d %s] %s", sev, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts_nsec / 1000, pid, log_tag, clean);
    if (n < 0)
        n = 0;
    if ((size_t)n > size - 2)
        n = (int)(size - 2);
    buf[n++] = '\n';
    buf[n] = '\0';
    return (size_t)n;
}

/* ---------------------------------------------------------------------------------------
 * JSON
 * ------------------------------------------------------------------------------------- */

/* A bounded writer: appends that do not fit leave it unchanged and say so. */
struct jw {
    char *b;
    size_t n, cap; /* cap excludes the room kept for the closing "}\n\0" */
};

static bool jw_raw(struct jw *w, const char *s, size_t len)
{
    if (w->n + len > w->cap)
        return false;
    memcpy(w->b + w->n, s, len);
    w->n += len;
    return true;
}

/* utf8_len returns the length of the valid UTF-8 sequence at s (n bytes left), or 0, with
 * Go's rules (no overlong forms, no surrogates, nothing above U+10FFFF). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xbf;
    size_t need, i;

    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        need = 2;
    else if (c >= 0xe0 && c <= 0xef)
        need = 3;
    else if (c >= 0xf0 && c <= 0xf4)
        need = 4;
    else
        return 0;
    if (c == 0xe0)
        lo = 0xa0;
    else if (c == 0xed)
        hi = 0x9f;
    else if (c == 0xf0)
        lo = 0x90;
    else if (c == 0xf4)
        hi = 0x8f;
    if (n < need || s[1] < lo || s[1] > hi)
        return 0;
    for (i = 2; i < need; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return need;
}

/* jw_string appends len bytes of s as a JSON string, escaped as zap's JSON encoder does.
 * When it does not fit whole and cut is set, as much as fits (whole characters) goes in;
 * otherwise nothing. Returns whether anything was written. */
static bool jw_string(struct jw *w, const char *s, size_t len, bool cut)
{
    static const char hex[] = "0123456789abcdef";
    size_t start = w->n, i = 0;

    if (w->n + 2 > w->cap || !jw_raw(w, "\"", 1))
        return false;
    w->cap -= 1; /* room for the closing quote */
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        size_t k = utf8_len((const unsigned char *)s + i, len - i), elen;

        if (c >= 0x80 && k == 0) {
            memcpy(esc, "\\ufffd", 6);
            elen = 6;
            k = 1;
        } else if (c >= 0x80) {
            if (!jw_raw(w, s + i, k))
                break;
            i += k;
            continue;
        } else if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            elen = 2;
        } else if (c == '\n' || c == '\r' || c == '\t') {
            esc[0] = '\\';
            esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
            elen = 2;
        } else if (c < 0x20) {
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            elen = 6;
        } else {
            esc[0] = (char)c;
            elen = 1;
        }
        if (!jw_raw(w, esc, elen))
            break;
        i += k;
    }
    w->cap += 1;
    if (i < len && !cut) {
        w->n = start;
        return false;
    }
    w->b[w->n++] = '"';
    return true;
}

/* ---------------------------------------------------------------------------------------
 * klog's quoting of untrusted text
 * ------------------------------------------------------------------------------------- */

/* A bounded appender for the quoted forms: what does not fit is dropped, room for the close
 * is kept. */
struct qb {
    char *b;
    size_t n, cap;
};

static bool qb_put(struct qb *q, const char *s, size_t len)
{
    if (q->n + len > q->cap)
        return false;
    memcpy(q->b + q->n, s, len);
    q->n += len;
    return true;
}

static char *quote_slot(void)
{
    static __thread char ring[8][LOG_QUOTE_MAX];
    static __thread unsigned next;

    return ring[next++ % 8];
}

const char *log_quote_msg(const char *s)
{
    return quote_go_to(quote_slot(), LOG_QUOTE_MAX, s, strlen(s));
}

const char *log_quote(const char *s)
{
    const char *nl = strchr(s, '\n');
    char *out;
    struct qb q;

    if (!nl)
        return log_quote_msg(s);
    /* klog: `<` NL, TAB line NL ..., then ` >` (after the last line's NL, added when missing) */
    out = quote_slot();
    q = (struct qb){out, 0, LOG_QUOTE_MAX - 4}; /* NL " >" NUL */
    qb_put(&q, "<\n", 2);
    while (*s) {
        size_t len = nl ? (size_t)(nl - s) + 1 : strlen(s);

        if (!qb_put(&q, "\t", 1) || !qb_put(&q, s, len))
            break;
        s += len;
        nl = strchr(s, '\n');
    }
    if (q.n && out[q.n - 1] != '\n')
        out[q.n++] = '\n';
    memcpy(out + q.n, " >", 3);
    return out;
}

/* A key/value pair of a klog-style message. */
struct kv {
    const char *k, *v;
    size_t klen, vlen;
    bool quoted; /* "..." in strconv.Quote's form */
    bool multi;  /* klog's multi-line form: <, lines after a tab, " >" */
};

/* key_at: s starts with a key and '=' (what may follow a value); returns the key's length. */
static size_t key_at(const char *s)
{
    size_t n = 0;

    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
        return 0;
    while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
           (s[n] >= '0' && s[n] <= '9') || s[n] == '_' || s[n] == '.' || s[n] == '-')
        n++;
    return s[n] == '=' ? n : 0;
}

/* quoted_end: the index of the quote closing a string that starts at s[0] == '"': the first
 * quote not escaped by a backslash (log_quote's strconv.Quote form) that is followed by the
 * end or by a space and a key (so an unescaped quote written inside a value is taken as
 * text). 0 when there is none. */
static size_t quoted_end(const char *s)
{
    size_t i;

    for (i = 1; s[i]; i++) {
        if (s[i] == '\\' && s[i + 1]) {
            i++;
            continue;
        }
        if (s[i] == '"' && (!s[i + 1] || (s[i + 1] == ' ' && key_at(s + i + 2))))
            return i;
    }
    return 0;
}

/* multi_end: s starts with "<\n" (log_quote's multi-line form); returns the length of the
 * form up to its closing " >", 0 when it is not one */
static size_t multi_end(const char *s)
{
    size_t i = 2;

    if (s[0] != '<' || s[1] != '\n')
        return 0;
    while (s[i] == '\t') {
        const char *nl = strchr(s + i, '\n');

        if (!nl)
            return 0;
        i = (size_t)(nl - s) + 1;
    }
    return s[i] == ' ' && s[i + 1] == '>' ? i + 2 : 0;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* go_unquote decodes the len bytes between a strconv.Quote form's quotes into out (at least
 * len bytes) and returns the decoded length; an escape it does not know stays as it is */
static size_t go_unquote(const char *s, size_t len, char *out)
{
    size_t i = 0, n = 0;

    while (i < len) {
        size_t digits = 0, k;
        uint32_t r = 0;
        char c;

        if (s[i] != '\\' || i + 1 >= len) {
            out[n++] = s[i++];
            continue;
        }
        c = s[i + 1];
        if (c && strchr("abfnrtv\\\"", c)) {
            out[n++] = c == 'a'   ? '\a'
                       : c == 'b' ? '\b'
                       : c == 'f' ? '\f'
                       : c == 'n' ? '\n'
                       : c == 'r' ? '\r'
                       : c == 't' ? '\t'
                       : c == 'v' ? '\v'
                                  : c;
            i += 2;
            continue;
        }
        digits = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
        for (k = 0; k < digits && i + 2 + k < len && hexval(s[i + 2 + k]) >= 0; k++)
            r = r << 4 | (uint32_t)hexval(s[i + 2 + k]);
        if (!digits || k < digits || r > 0x10ffff) {
            out[n++] = s[i++];
            continue;
        }
        i += 2 + digits;
        if (c == 'x' || r < 0x80) {
            out[n++] = (char)r;
        } else if (r < 0x800) {
            out[n++] = (char)(0xc0 | r >> 6);
            out[n++] = (char)(0x80 | (r & 0x3f));
        } else if (r < 0x10000) {
            out[n++] = (char)(0xe0 | r >> 12);
            out[n++] = (char)(0x80 | ((r >> 6) & 0x3f));
            out[n++] = (char)(0x80 | (r & 0x3f));
        } else {
            out[n++] = (char)(0xf0 | r >> 18);
            out[n++] = (char)(0x80 | ((r >> 12) & 0x3f));
            out[n++] = (char)(0x80 | ((r >> 6) & 0x3f));
            out[n++] = (char)(0x80 | (r & 0x3f));
        }
    }
    return n;
}

/* multi_decode: the value a multi-line form (without its "<\n" and " >") stands for: the lines
 * without their tab, the last line break dropped */
static size_t multi_decode(const char *s, size_t len, char *out)
{
    size_t i = 0, n = 0;

    while (i < len) {
        if (s[i] == '\t' && (i == 0 || s[i - 1] == '\n')) {
            i++;
            continue;
        }
        out[n++] = s[i++];
    }
    if (n && out[n - 1] == '\n')
        n--;
    return n;
}

/* parse_klog splits `"Message" k="v" n=3` into the message and pairs; false when msg is not
 * written that way. */
static bool parse_klog(const char *msg, const char **m, size_t *mlen, struct kv *kv, size_t *nkv)
{
    size_t e, i, n = 0;

    if (msg[0] != '"' || !(e = quoted_end(msg)))
        return false;
    *m = msg + 1;
    *mlen = e - 1;
    i = e + 1;
    while (msg[i]) {
        size_t kl;

        if (msg[i] != ' ' || !(kl = key_at(msg + i + 1)) || n == LOG_MAX_PAIRS)
            return false;
        i++;
        kv[n].k = msg + i;
        kv[n].klen = kl;
        i += kl + 1;
        kv[n].multi = false;
        if (msg[i] == '"') {
            size_t q = quoted_end(msg + i);

            if (!q)
                return false;
            kv[n].v = msg + i + 1;
            kv[n].vlen = q - 1;
            kv[n].quoted = true;
            i += q + 1;
        } else if (msg[i] == '<' && multi_end(msg + i)) {
            size_t q = multi_end(msg + i);

            kv[n].v = msg + i + 2;
            kv[n].vlen = q - 4;
            kv[n].quoted = true;
            kv[n].multi = true;
            i += q;
        } else {
            size_t b = 0;

            while (msg[i + b] && msg[i + b] != ' ')
                b++;
            kv[n].v = msg + i;
            kv[n].vlen = b;
            kv[n].quoted = false;
            i += b;
        }
        n++;
    }
    *nkv = n;
    return true;
}

/* json_number: s[0..n) is a JSON number. */
static bool json_number(const char *s, size_t n)
{
    size_t i = 0;

    if (i < n && s[i] == '-')
        i++;
    if (i >= n || s[i] < '0' || s[i] > '9')
        return false;
    if (s[i] == '0')
        i++;
    else
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || s[i] < '0' || s[i] > '9')
            return false;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= n || s[i] < '0' || s[i] > '9')
            return false;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    return i == n;
}

/* object_key: k is one of log_set_object_keys' keys. */
static bool object_key(const char *k, size_t n)
{
    const char *const *o;

    for (o = log_object_keys; o && *o; o++)
        if (strlen(*o) == n && !memcmp(*o, k, n))
            return true;
    return false;
}

/* jw_pair appends ,"key":value whole or not at all. */
static bool jw_pair(struct jw *w, const struct kv *in)
{
    static __thread char dec[LOG_LINE_MAX * 2];
    size_t start = w->n;
    struct kv decoded = *in, *p = &decoded;

    if (in->quoted && in->vlen <= sizeof(dec)) {
        decoded.vlen =
            in->multi ? multi_decode(in->v, in->vlen, dec) : go_unquote(in->v, in->vlen, dec);
        decoded.v = dec;
    }
    if (!jw_raw(w, ",", 1) || !jw_string(w, p->k, p->klen, false) || !jw_raw(w, ":", 1))
        goto undo;
    if (p->quoted && object_key(p->k, p->klen) && memchr(p->v, '/', p->vlen)) {
        /* klog.KObj: {"name":..,"namespace":..} */
        const char *slash = memchr(p->v, '/', p->vlen);
        size_t nslen = (size_t)(slash - p->v);

        if (!jw_raw(w, "{\"name\":", 8) || !jw_string(w, slash + 1, p->vlen - nslen - 1, false) ||
            !jw_raw(w, ",\"namespace\":", 13) || !jw_string(w, p->v, nslen, false) ||
            !jw_raw(w, "}", 1))
            goto undo;
    } else if (!p->quoted &&
               (json_number(p->v, p->vlen) || (p->vlen == 4 && !memcmp(p->v, "true", 4)) ||
                (p->vlen == 5 && !memcmp(p->v, "false", 5)))) {
        if (!jw_raw(w, p->v, p->vlen))
            goto undo;
    } else if (!jw_string(w, p->v, p->vlen, false)) {
        goto undo;
    }
    return true;
undo:
    w->n = start;
    return false;
}

size_t log_format_json(char *buf, size_t size, char sev, int v, long ts_sec, long ts_nsec,
                       const char *file, int line, const char *msg)
{
    struct kv kv[LOG_MAX_PAIRS];
    struct jw w = {buf, 0, size >= 3 ? size - 3 : 0}; /* "}\n\0" */
    const char *m = msg, *caller = file ? file : "";
    char num[64], head[400];
    size_t mlen = strlen(msg), nkv = 0, i;
    const struct kv *err = NULL;
    int64_t nanos = (int64_t)ts_sec * 1000000000 + ts_nsec;

    if (size < 64)
        return 0;
    if (!parse_klog(msg, &m, &mlen, kv, &nkv)) {
        m = msg;
        mlen = strlen(msg);
        nkv = 0;
    }
    /* zap's ShortCallerEncoder: the last directory and the file */
    {
        const char *p = caller + strlen(caller), *slashes = NULL;
        int seen = 0;

        while (p > caller && seen < 2) {
            p--;
            if (*p == '/' && ++seen == 2)
                slashes = p + 1;
        }
        if (slashes)
            caller = slashes;
    }
    snprintf(head, sizeof(head),
             "{\"ts\":%s,\"caller\":", go_format_float((double)nanos / 1e6, 'f', num, sizeof(num)));
    jw_raw(&w, head, strlen(head));
    snprintf(head, sizeof(head), "%s:%d", caller, line);
    jw_string(&w, head, strlen(head), true);
    jw_raw(&w, ",\"msg\":", 7);
    {
        /* keep room for "v" so that a long message is cut rather than the level lost */
        static __thread char dec[LOG_LINE_MAX * 2];
        size_t keep = w.cap;

        if (m != msg && mlen <= sizeof(dec)) {
            mlen = go_unquote(m, mlen, dec); /* a klog message: strconv.Quote's form */
            m = dec;
        }
        w.cap = w.cap > 16 ? w.cap - 16 : w.cap;
        jw_string(&w, m, mlen, true);
        w.cap = keep;
    }
    if (sev != 'E') {
        snprintf(head, sizeof(head), ",\"v\":%d", v);
        jw_raw(&w, head, strlen(head));
    }
    for (i = 0; i < nkv; i++) {
        if (sev == 'E' && !err && kv[i].klen == 3 && !memcmp(kv[i].k, "err", 3)) {
            err = &kv[i]; /* zapr's error key comes last */
            continue;
        }
        jw_pair(&w, &kv[i]);
    }
    if (err)
        jw_pair(&w, err);
    buf[w.n++] = '}';
    buf[w.n++] = '\n';
    buf[w.n] = '\0';
    return w.n;
}

void log_printf_at(const char *file, int line, char sev, int v, const char *fmt, ...)
{
    char msg[LOG_LINE_MAX], out[LOG_LINE_MAX * 2 + 512];
    struct timespec ts;
    va_list ap;
    size_t n;

    if (v > log_level)
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (log_fmt_cur == LOG_FMT_JSON)
        n = log_format_json(out, sizeof(out), sev, v, (long)ts.tv_sec, ts.tv_nsec, file, line, msg);
    else
        n = log_format(out, sizeof(out), sev, (long)ts.tv_sec, ts.tv_nsec, (int)getpid(), msg);
    /* one write per line so lines of different threads never interleave */
    if (write(STDERR_FILENO, out, n) < 0)
        return;
}
