/* yamljson.c - kube/yaml.c's fast path for input that is plain JSON (see kube/yaml-int.h).
 *
 * A recursive reader of strict JSON that builds the values kube/yaml.c's load_node builds from
 * libyaml's events for the same text: the same jansson contents in the same order, the same
 * line of each value (the line its first character is on), plain scalars resolved by the same
 * code (kube_yaml_plain), a root's "items" handed over one by one.
 *
 * It stops, for libyaml to take over, at anything else: text beyond JSON (comments, YAML
 * syntax, trailing commas), and JSON that libyaml reads differently or rejects: a tab outside
 * a collection, a line break other than LF or CRLF, a character YAML does not allow (controls,
 * DEL, C1, U+FEFF) or takes for a line break (U+0085, U+2028, U+2029), invalid UTF-8, a \u
 * escape of a surrogate or NUL, a key whose ':' is on another line or more than 1,000 bytes
 * after its start (libyaml's limit for an implicit key is 1,024 characters), the merge key
 * "<<", nesting past YAML_MAX_DEPTH. Between documents it reads the "--- " manifest/source.c
 * writes at the start of a line between the values of a JSON stream.
 *
 * A callback is made only once what follows its value is known to leave the value as it is:
 * a ',' or ']' after an item (before a ':' libyaml would make the item a key), the end or a
 * "--- " after a document. What libyaml does differently is in the order of callbacks and
 * errors on input it rejects: it reads ahead (16 KiB of characters, and up to 1,024 characters
 * of tokens to settle a root's implicit key) and may fail before making a callback this reader
 * made; kube/yaml.c settles that (parse_stream) by asking libyaml when a callback fails. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/jalloc-int.h"
#include "kube/yaml-int.h"

#define JSON_CHUNK 65536
#define KEY_MAX_BYTES 1000
#define JSON_ARENA ((size_t)1 << 20) /* touched only as far as a document or an item goes */

struct jr {
    struct loader *ld;
    bool arena;                   /* values in the thread's jansson arena (ld->transient) */
    const unsigned char *p, *end; /* unread input */
    unsigned char *chunk;         /* the buffer p points into */
    bool eof;                     /* no more input after end */
    bool read_err;                /* the reader failed */
    size_t off;                   /* bytes consumed before chunk */
    size_t bol;                   /* offset of the start of the line at p */
    int line;                     /* 1-based line at p */
    char *str;                    /* the string being read (NUL-terminated) */
    size_t slen, scap;
    bool stopped; /* not for this reader: libyaml must read the input */
    int rc;       /* -ENOMEM, or what a callback returned */
};

/* jr_fill reads the next chunk, keeping the unread bytes (fewer than JSON_CHUNK) in front */
static int jr_fill(struct jr *j)
{
    size_t keep = (size_t)(j->end - j->p);
    long n;

    if (j->eof)
        return 0;
    j->off += (size_t)(j->p - j->chunk);
    memmove(j->chunk, j->p, keep);
    n = j->ld->rd(j->ld->rd_ctx, (char *)j->chunk + keep, JSON_CHUNK - keep);
    j->p = j->chunk;
    j->end = j->chunk + keep + (n > 0 ? n : 0);
    if (n <= 0) {
        /* a read error goes to libyaml too, which reports it as it always did */
        j->eof = true;
        j->read_err = n < 0;
        return n < 0 ? -1 : 0;
    }
    return 1;
}

/* jr_peek returns the next byte, -1 at the end of the input (or a read error) */
static inline int jr_peek(struct jr *j)
{
    if (j->p == j->end && jr_fill(j) <= 0)
        return -1;
    return *j->p;
}

/* jr_peek2 returns the byte after the next one, or -1 */
static int jr_peek2(struct jr *j)
{
    if (j->end - j->p < 2)
        jr_fill(j);
    return j->end - j->p < 2 ? -1 : j->p[1];
}

static inline size_t jr_offset(const struct jr *j)
{
    return j->off + (size_t)(j->p - j->chunk);
}

/* stop: libyaml reads the input (any non-zero value unwinds the reader; j->stopped says why) */
static int stop(struct jr *j)
{
    j->stopped = true;
    return -EAGAIN;
}

static int nomem(struct jr *j)
{
    err_set(j->ld->err, -ENOMEM, "out of memory");
    j->rc = -ENOMEM;
    return j->rc;
}

/* skip_ws skips blanks and line breaks (LF, CRLF); tabs only inside a collection (libyaml
 * takes a tab at the start of a line outside one for a token). Returns the next byte, -1 at
 * the end, -2 for a CR not followed by LF (left unread, so every later call says the same). */
static int skip_ws(struct jr *j, bool in_flow)
{
    for (;;) {
        int c = jr_peek(j);
        if (c == ' ' || (c == '\t' && in_flow)) {
            j->p++;
        } else if (c == '\n') {
            j->p++;
            j->line++;
            j->bol = jr_offset(j);
        } else if (c == '\r') {
            if (jr_peek2(j) != '\n')
                return -2;
            j->p += 2;
            j->line++;
            j->bol = jr_offset(j);
        } else {
            return c;
        }
    }
}

static int str_add(struct jr *j, const void *s, size_t n)
{
    if (j->slen + n + 1 > j->scap) {
        size_t cap = j->scap ? j->scap : 256;
        char *ns;
        while (cap < j->slen + n + 1)
            cap *= 2;
        if (!(ns = realloc(j->str, cap)))
            return -1;
        j->str = ns;
        j->scap = cap;
    }
    memcpy(j->str + j->slen, s, n);
    j->slen += n;
    j->str[j->slen] = '\0';
    return 0;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* utf8_char checks the multi-byte character starting at j->p (lead byte c) and, when keep,
 * copies it: shortest form, a code point libyaml reads as a printable character that is not
 * a line break (0xA0-0xD7FF and 0xE000-0xFFFD but U+2028, U+2029 and U+FEFF, then
 * 0x10000-0x10FFFF). 0, or -1 to stop, -2 when out of memory. */
static int utf8_char(struct jr *j, int c, bool keep)
{
    unsigned char b[4];
    uint32_t cp;
    int n, k;

    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = (uint32_t)c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = (uint32_t)c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = (uint32_t)c & 0x07;
    } else {
        return -1;
    }
    b[0] = (unsigned char)c;
    j->p++;
    for (k = 1; k < n; k++) {
        int t = jr_peek(j);
        if (t < 0 || (t & 0xC0) != 0x80)
            return -1;
        b[k] = (unsigned char)t;
        cp = cp << 6 | ((uint32_t)t & 0x3F);
        j->p++;
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return -1;
    if (cp < 0xA0 || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0x2028 || cp == 0x2029 ||
        cp == 0xFEFF || cp == 0xFFFE || cp == 0xFFFF)
        return -1;
    return keep && str_add(j, b, (size_t)n) ? -2 : 0;
}

/* plain_run returns the end of the run at s of bytes that stand for themselves in a string:
 * printable ASCII but '"' and '\\'; eight at a time while none of them is special (a byte
 * flagged special by mistake only sends the scan to the byte loop) */
static inline const unsigned char *plain_run(const unsigned char *s, const unsigned char *end)
{
#define ONES 0x0101010101010101ull
#define HIGH 0x8080808080808080ull
#define HASZERO(v) (((v)-ONES) & ~(v)&HIGH)
    while (end - s >= 8) {
        uint64_t x;
        memcpy(&x, s, 8);
        if (HASZERO(x ^ (ONES * '"')) | HASZERO(x ^ (ONES * '\\')) | HASZERO(x ^ (ONES * 0x7F)) |
            (x & HIGH) | ((x - ONES * 0x20) & ~x & HIGH))
            break;
        s += 8;
    }
#undef HASZERO
#undef HIGH
#undef ONES
    while (s < end && *s >= 0x20 && *s < 0x7F && *s != '"' && *s != '\\')
        s++;
    return s;
}

/* read_string reads a string (j->p at its opening quote). When keep, its text and length
 * are left in *sp and *sn: in the input buffer when it has no escape and does not cross the
 * end of a chunk (valid until the next read), else in j->str. */
static int read_string(struct jr *j, bool keep, const char **sp, size_t *sn)
{
    const unsigned char *s = plain_run(++j->p, j->end);

    /* the common case: plain bytes up to the closing quote, in the buffer */
    if (s < j->end && *s == '"') {
        *sp = (const char *)j->p;
        *sn = (size_t)(s - j->p);
        j->p = s + 1;
        return 0;
    }
    j->slen = 0;
    if (keep && str_add(j, "", 0))
        return nomem(j);
    for (;;) {
        int c, r;

        /* the bytes that stand for themselves, in one copy */
        s = plain_run(j->p, j->end);
        if (s > j->p) {
            if (keep && str_add(j, j->p, (size_t)(s - j->p)))
                return nomem(j);
            j->p = s;
        }
        c = jr_peek(j);
        if (c == '"') {
            j->p++;
            *sp = j->str;
            *sn = j->slen;
            return 0;
        }
        if (c == '\\') {
            char e;
            j->p++;
            switch (jr_peek(j)) {
            case '"':
                e = '"';
                break;
            case '\\':
                e = '\\';
                break;
            case '/':
                e = '/';
                break;
            case 'b':
                e = '\b';
                break;
            case 'f':
                e = '\f';
                break;
            case 'n':
                e = '\n';
                break;
            case 'r':
                e = '\r';
                break;
            case 't':
                e = '\t';
                break;
            case 'u': {
                uint32_t cp = 0;
                unsigned char b[3];
                size_t n;
                int k;
                j->p++;
                for (k = 0; k < 4; k++) {
                    int h = hexval(jr_peek(j));
                    if (h < 0)
                        return stop(j);
                    cp = cp << 4 | (uint32_t)h;
                    j->p++;
                }
                /* libyaml refuses surrogates; NUL is left to it too */
                if (!cp || (cp >= 0xD800 && cp <= 0xDFFF))
                    return stop(j);
                if (cp < 0x80) {
                    b[0] = (unsigned char)cp;
                    n = 1;
                } else if (cp < 0x800) {
                    b[0] = (unsigned char)(0xC0 | cp >> 6);
                    b[1] = (unsigned char)(0x80 | (cp & 0x3F));
                    n = 2;
                } else {
                    b[0] = (unsigned char)(0xE0 | cp >> 12);
                    b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
                    b[2] = (unsigned char)(0x80 | (cp & 0x3F));
                    n = 3;
                }
                if (keep && str_add(j, b, n))
                    return nomem(j);
                continue;
            }
            default:
                return stop(j);
            }
            j->p++;
            if (keep && str_add(j, &e, 1))
                return nomem(j);
            continue;
        }
        if (c >= 0x20 && c < 0x7F)
            continue; /* past the end of a chunk */
        if (c < 0x80)
            return stop(j); /* the end of the input, a control character, DEL */
        if ((r = utf8_char(j, c, keep)))
            return r == -2 ? nomem(j) : stop(j);
    }
}

/* read_plain reads a number, true, false or null (JSON's grammar exactly) into j->str */
static int read_plain(struct jr *j)
{
    int c = jr_peek(j);

    j->slen = 0;
    if (c == 't' || c == 'f' || c == 'n') {
        const char *w = c == 't' ? "true" : c == 'f' ? "false" : "null";
        size_t k, n = strlen(w);
        for (k = 0; k < n; k++) {
            if (jr_peek(j) != w[k])
                return stop(j);
            j->p++;
        }
        return str_add(j, w, n) ? nomem(j) : 0;
    }
    {
        char num[64];
        size_t n = 0;
        int digits;

#define TAKE()                                                                                     \
    do {                                                                                           \
        if (n + 1 >= sizeof(num))                                                                  \
            return stop(j);                                                                        \
        num[n++] = (char)c;                                                                        \
        j->p++;                                                                                    \
        c = jr_peek(j);                                                                            \
    } while (0)
        if (c == '-')
            TAKE();
        if (c == '0') {
            TAKE();
        } else if (c >= '1' && c <= '9') {
            while (c >= '0' && c <= '9')
                TAKE();
        } else {
            return stop(j);
        }
        if (c == '.') {
            TAKE();
            for (digits = 0; c >= '0' && c <= '9'; digits++)
                TAKE();
            if (!digits)
                return stop(j);
        }
        if (c == 'e' || c == 'E') {
            TAKE();
            if (c == '+' || c == '-')
                TAKE();
            for (digits = 0; c >= '0' && c <= '9'; digits++)
                TAKE();
            if (!digits)
                return stop(j);
        }
#undef TAKE
        return str_add(j, num, n) ? nomem(j) : 0;
    }
}

/* after a plain scalar, libyaml's scalar ends only where JSON's does: a blank, a line break, a
 * comma or a closing bracket (anything else would make it longer, or a key) */
static bool plain_ends(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ']' || c == '}';
}

static int read_value(struct jr *j, int depth, json_t **out);

static int add_line(struct jr *j, json_t *v, int line)
{
    return kube_lines_add(j->ld->lines, v, line) ? nomem(j) : 0;
}

/* read_items streams the "items" sequence of a root mapping (j->p at its '['), as load_items:
 * each element with the item line table, handed to ld->item_fn with the root as read so far */
static int read_items(struct jr *j, json_t *list, json_t **out)
{
    struct loader *ld = j->ld;
    struct kube_lines *root_lines = ld->lines;
    int line = j->line, c, rc = 0;

    *out = NULL;
    j->p++;
    ld->lines = ld->item_lines;
    c = skip_ws(j, true);
    if (c == ']') {
        j->p++;
    } else {
        for (;;) {
            struct kube_jalloc_mark m;
            json_t *item;

            kube_jalloc_mark(&m);
            if ((rc = read_value(j, 2, &item)))
                break;
            /* what follows must leave the item an item */
            c = skip_ws(j, true);
            if (c != ',' && c != ']') {
                json_decref(item);
                rc = stop(j);
                break;
            }
            j->p++;
            kube_jalloc_on(false);
            rc = ld->item_fn(ld, item, list);
            kube_jalloc_on(j->arena);
            /* nothing outside the item points into it: unless some of it is in malloc's
             * blocks, it all goes with the rewind */
            if (!j->arena || kube_jalloc_spilled(&m))
                json_decref(item);
            if (j->arena)
                kube_jalloc_rewind(&m);
            kube_lines_clear(ld->lines);
            if (rc) {
                j->rc = rc;
                break;
            }
            if (c == ']')
                break;
        }
        if (rc)
            kube_lines_clear(ld->lines);
    }
    ld->lines = root_lines;
    if (rc)
        return rc;
    if (!(*out = json_array()))
        return nomem(j);
    return add_line(j, *out, line);
}

static int read_object(struct jr *j, int depth, json_t *v)
{
    int c = skip_ws(j, true), rc;

    if (c == '}') {
        j->p++;
        return 0;
    }
    for (;;) {
        size_t start = jr_offset(j), kn;
        int kline = j->line;
        char kbuf[128], *key = kbuf;
        const char *ks;
        bool items;
        json_t *val;

        if (c != '"')
            return stop(j);
        if ((rc = read_string(j, true, &ks, &kn)))
            return rc;
        /* the merge key, which libyaml's path merges */
        if (kn == 2 && ks[0] == '<' && ks[1] == '<')
            return stop(j);
        items = depth == 0 && j->ld->item_fn && kn == 5 && !memcmp(ks, "items", 5);
        /* the key's text may be in the input buffer, which the next read overwrites */
        if (!(key = kn < sizeof(kbuf) ? kbuf : malloc(kn + 1)))
            return nomem(j);
        memcpy(key, ks, kn);
        key[kn] = '\0';
        /* libyaml's implicit key: ':' on the same line, within 1,024 characters */
        for (c = jr_peek(j); c == ' ' || c == '\t'; c = jr_peek(j))
            j->p++;
        if (c != ':' || jr_offset(j) - start > KEY_MAX_BYTES)
            rc = stop(j);
        if (!rc) {
            j->p++;
            c = skip_ws(j, true);
            if (items && c == '[')
                rc = read_items(j, v, &val);
            else
                rc = read_value(j, depth + 1, &val);
        }
        /* keys were checked as UTF-8 and hold no NUL: json_object_set_new's checks pass; a
         * key given twice replaces the value, leaving the size */
        if (!rc) {
            size_t before = json_object_size(v);

            if (json_object_setn_new_nocheck(v, key, kn, val))
                rc = nomem(j);
            else if (json_object_size(v) == before)
                kube_lines_dup_add(j->ld->lines, key, kn, kline);
        }
        if (key != kbuf)
            free(key);
        if (rc)
            return rc;
        c = skip_ws(j, true);
        if (c == ',') {
            j->p++;
            c = skip_ws(j, true);
            continue;
        }
        if (c == '}') {
            j->p++;
            return 0;
        }
        return stop(j);
    }
}

static int read_array(struct jr *j, int depth, json_t *v)
{
    int c = skip_ws(j, true), rc;

    if (c == ']') {
        j->p++;
        return 0;
    }
    for (;;) {
        json_t *item;
        if ((rc = read_value(j, depth + 1, &item)))
            return rc;
        if (json_array_append_new(v, item))
            return nomem(j);
        c = skip_ws(j, true);
        if (c == ',') {
            j->p++;
            continue;
        }
        if (c == ']') {
            j->p++;
            return 0;
        }
        return stop(j);
    }
}

/* read_value reads the value at j->p (blanks skipped first) into a new reference in *out and
 * records its line, as load_node does for the events of the same text */
static int read_value(struct jr *j, int depth, json_t **out)
{
    json_t *v = NULL;
    int c, line, rc;

    *out = NULL;
    if (depth > YAML_MAX_DEPTH)
        return stop(j); /* libyaml's path says "document nested too deeply" */
    c = skip_ws(j, true);
    line = j->line;
    if (c == '{' || c == '[') {
        j->p++;
        if (!(v = c == '{' ? json_object() : json_array()))
            return nomem(j);
        rc = c == '{' ? read_object(j, depth, v) : read_array(j, depth, v);
    } else if (c == '"') {
        const char *sp;
        size_t sn;
        /* checked as UTF-8 already: json_stringn's check passes */
        if (!(rc = read_string(j, true, &sp, &sn)) && !(v = json_stringn_nocheck(sp, sn)))
            rc = nomem(j);
    } else if (!(rc = read_plain(j))) {
        if (!plain_ends(jr_peek(j)))
            rc = stop(j);
        else if (!(v = kube_yaml_plain(j->str, j->slen)))
            rc = nomem(j);
    }
    if (!rc)
        rc = add_line(j, v, line);
    if (rc) {
        json_decref(v);
        return rc;
    }
    *out = v;
    return 0;
}

/* read_stream reads the documents, each handed to take once what follows it is known: the end
 * of the input, or the separator of a JSON stream (consumed) */
static int read_stream(struct jr *j, int (*take)(struct loader *ld, json_t *doc, void *ctx),
                       void *ctx)
{
    static const char sep[] = "--- ";
    int c = skip_ws(j, false), rc;

    if (c != '{' && c != '[')
        return stop(j);
    for (;;) {
        bool more;
        size_t k;
        json_t *doc;

        if ((rc = read_value(j, 0, &doc)))
            return rc;
        c = skip_ws(j, false);
        more = c != -1 || j->read_err;
        if (more) {
            if (jr_offset(j) != j->bol)
                k = 0; /* not at the start of a line */
            else
                for (k = 0; k < 4 && jr_peek(j) == sep[k]; k++)
                    j->p++;
            if (k < 4) {
                json_decref(doc);
                return stop(j);
            }
        }
        kube_jalloc_on(false);
        rc = take(j->ld, doc, ctx);
        if (j->arena) {
            kube_jalloc_fit(JSON_ARENA); /* empty for the next document */
            kube_jalloc_on(true);
        }
        if (rc)
            return j->rc = rc;
        if (!more)
            return 0;
        c = skip_ws(j, false);
        if (c != '{' && c != '[')
            return stop(j);
    }
}

int kube_yaml_json(struct loader *ld, const char *data, size_t len,
                   int (*take)(struct loader *ld, json_t *doc, void *ctx), void *ctx, bool *stopped)
{
    struct jr j;
    int rc;

    memset(&j, 0, sizeof(j));
    j.ld = ld;
    j.line = 1;
    *stopped = false;
    if (!data && !ld->rd)
        data = "";
    if (data) {
        j.p = j.chunk = (unsigned char *)data;
        j.end = j.p + len;
        j.eof = true;
    } else if (!(j.chunk = malloc(JSON_CHUNK))) {
        return nomem(&j);
    } else {
        j.p = j.end = j.chunk;
    }
    if ((j.arena = ld->transient)) {
        kube_jalloc_fit(JSON_ARENA);
        kube_jalloc_on(true);
    }
    rc = read_stream(&j, take, ctx);
    if (j.arena) {
        kube_jalloc_on(false);
        kube_jalloc_release();
    }
    if (j.stopped) {
        kube_lines_clear(ld->lines);
        if (ld->item_lines)
            kube_lines_clear(ld->item_lines);
        rc = 0;
        *stopped = true;
    } else if (rc) {
        rc = j.rc;
    }
    if (!data)
        free(j.chunk);
    free(j.str);
    return rc;
}

/* take_doc keeps kube_json_loadb's document; a second one (a stream of documents, which is
 * not one JSON text) stops the read */
static int take_doc(struct loader *ld, json_t *doc, void *ctx)
{
    json_t **out = ctx;

    (void)ld;
    if (*out) {
        json_decref(doc);
        return -EINVAL;
    }
    *out = doc;
    return 0;
}

json_t *kube_json_loadb(const char *data, size_t len)
{
    struct loader ld;
    struct err err;
    json_t *doc = NULL;
    bool stopped;

    memset(&ld, 0, sizeof(ld));
    ld.err = &err;
    err_clear(&err);
    if (kube_yaml_json(&ld, data ? data : "", data ? len : 0, take_doc, &doc, &stopped) ||
        stopped) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}
