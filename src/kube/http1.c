/* http1.c - the incremental HTTP/1.1 answer parser (see http1.h).
 *
 * A state machine: status line and headers (consumed whole once the blank line is there),
 * then a Content-Length, chunked or close-delimited body. Framing errors (a bad status line,
 * a Content-Length that is not a number, a chunk size that is not hex, lines past their
 * caps) end the connection: its bytes can no longer be trusted to start the next answer. */
#include "kube/http1.h"

#include <string.h>
#include <strings.h>

enum {
    ST_HEAD,       /* status line and headers */
    ST_BODY,       /* Content-Length bytes */
    ST_CHUNK_SIZE, /* a chunk-size line */
    ST_CHUNK_DATA,
    ST_CHUNK_END, /* the CRLF after a chunk's data */
    ST_TRAILER,   /* trailer lines up to the empty one */
    ST_TO_CLOSE,  /* no length: the body ends when the server closes */
    ST_END,       /* the answer is complete: the next step says so */
    ST_FAILED,
};

#define HTTP1_CONTINUE (-1) /* http1_step_once consumed framing: go on */

void http1_answer_init(struct http1_answer *a)
{
    memset(a, 0, sizeof(*a));
    a->retry_after = -1;
    a->keep = true;
    a->state = ST_HEAD;
}

static enum http1_event http1_fail(struct http1_answer *a, const char *why)
{
    a->state = ST_FAILED;
    a->why = why;
    return HTTP1_ERROR;
}

static enum http1_event http1_done(struct http1_answer *a)
{
    a->state = ST_HEAD;
    a->begun = false;
    return HTTP1_DONE;
}

static const char *http1_eol(const char *p, const char *end)
{
    const char *q = memchr(p, '\n', (size_t)(end - p));

    return q && q > p && q[-1] == '\r' ? q - 1 : q;
}

/* http1_token_has says whether the list value v..end holds word as a whole token */
static bool http1_token_has(const char *v, const char *end, const char *word)
{
    const char *start = v;
    size_t n = strlen(word);

    for (; v + n <= end; v++)
        if (!strncasecmp(v, word, n) &&
            (v == start || v[-1] == ',' || v[-1] == ' ' || v[-1] == '\t') &&
            (v + n == end || v[n] == ',' || v[n] == ' ' || v[n] == '\t' || v[n] == ';'))
            return true;
    return false;
}

/* http1_head parses a status line and headers (p..end, the blank line excluded). */
static enum http1_event http1_head(struct http1_answer *a, const char *p, const char *end)
{
    const char *eol = http1_eol(p, end), *v;
    bool http10, has_len = false, chunked = false, close = false;
    uint64_t len = 0;
    size_t n;

    if (!eol)
        eol = end;
    if (eol - p < 12 || memcmp(p, "HTTP/1.", 7) || (p[7] != '0' && p[7] != '1') || p[8] != ' ' ||
        p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9' ||
        (eol - p > 12 && p[12] != ' '))
        return http1_fail(a, "bad status line");
    http10 = p[7] == '0';
    a->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
    a->retry_after = -1;
    for (p = eol < end ? eol + (*eol == '\r' ? 2 : 1) : end; p < end;
         p = eol + (*eol == '\r' ? 2 : 1)) {
        eol = http1_eol(p, end);
        if (!eol)
            eol = end;
        v = memchr(p, ':', (size_t)(eol - p));
        if (!v) {
            if (eol == end)
                break;
            continue;
        }
        n = (size_t)(v - p);
        for (v++; v < eol && (*v == ' ' || *v == '\t'); v++)
            ;
        if (n == 14 && !strncasecmp(p, "Content-Length", n)) {
            uint64_t l = 0;
            const char *d = v;

            for (; d < eol && *d >= '0' && *d <= '9'; d++) {
                l = l * 10 + (uint64_t)(*d - '0');
                if (l > HTTP1_LENGTH_MAX)
                    return http1_fail(a, "Content-Length too large");
            }
            while (d < eol && (*d == ' ' || *d == '\t'))
                d++;
            if (d == v || d != eol || (has_len && l != len))
                return http1_fail(a, "bad Content-Length");
            has_len = true;
            len = l;
        } else if (n == 17 && !strncasecmp(p, "Transfer-Encoding", n)) {
            chunked = http1_token_has(v, eol, "chunked");
        } else if (n == 10 && !strncasecmp(p, "Connection", n)) {
            close = http1_token_has(v, eol, "close");
            if (http10 && http1_token_has(v, eol, "keep-alive"))
                http10 = false;
        } else if (n == 11 && !strncasecmp(p, "Retry-After", n)) {
            int ra = 0, k = 0;

            for (; v < eol && *v >= '0' && *v <= '9' && k < 9; v++, k++)
                ra = ra * 10 + (*v - '0');
            a->retry_after = k && k < 9 ? ra : -1;
        }
        if (eol == end)
            break;
    }
    a->keep = !http10 && !close;
    a->left = 0;
    if ((a->status >= 100 && a->status <= 199) || a->status == 204 || a->status == 304)
        a->state = ST_END; /* no body */
    else if (chunked)
        a->state = ST_CHUNK_SIZE;
    else if (has_len)
        a->state = len ? ST_BODY : ST_END, a->left = len;
    else
        a->state = ST_TO_CLOSE, a->keep = false;
    return HTTP1_HEAD;
}

static int http1_hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)(c | 0x20);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* http1_step_once takes one step: an event, or HTTP1_CONTINUE after framing bytes. */
static int http1_step_once(struct http1_answer *a, const char *p, size_t n, size_t *used,
                           const char **data, size_t *len)
{
    const char *q, *eol;
    int ev;

    if (a->state == ST_FAILED)
        return HTTP1_ERROR;
    if (a->state == ST_END)
        return http1_done(a);
    if (!n)
        return HTTP1_NEED;
    switch (a->state) {
    case ST_HEAD:
        a->begun = true;
        q = memmem(p, n, "\r\n\r\n", 4);
        if (!q)
            return n > HTTP1_HEAD_MAX ? http1_fail(a, "status line and headers too long")
                                      : HTTP1_NEED;
        if ((size_t)(q - p) > HTTP1_HEAD_MAX)
            return http1_fail(a, "status line and headers too long");
        ev = http1_head(a, p, q);
        if (ev == HTTP1_ERROR)
            return ev;
        *used = (size_t)(q + 4 - p);
        if (a->status >= 100 && a->status <= 199) {
            if (a->status == 101)
                return http1_fail(a, "unexpected 101 Switching Protocols");
            a->begun = false; /* 100 Continue and the like: the answer is next */
            a->keep = true;
            a->state = ST_HEAD;
            return HTTP1_CONTINUE;
        }
        return HTTP1_HEAD;
    case ST_BODY:
    case ST_CHUNK_DATA:
        *len = n < a->left ? n : (size_t)a->left;
        *data = p;
        *used = *len;
        a->left -= *len;
        if (!a->left)
            a->state = a->state == ST_CHUNK_DATA ? ST_CHUNK_END : ST_END;
        return HTTP1_BODY;
    case ST_CHUNK_END:
        if (n < 2)
            return p[0] == '\r' ? HTTP1_NEED : http1_fail(a, "chunk not followed by CRLF");
        if (p[0] != '\r' || p[1] != '\n')
            return http1_fail(a, "chunk not followed by CRLF");
        *used = 2;
        a->state = ST_CHUNK_SIZE;
        return HTTP1_CONTINUE;
    case ST_CHUNK_SIZE: {
        uint64_t size = 0;
        int d;

        eol = memchr(p, '\n', n);
        if (!eol)
            return n >= HTTP1_LINE_MAX ? http1_fail(a, "chunk-size line too long") : HTTP1_NEED;
        if ((size_t)(eol - p) >= HTTP1_LINE_MAX)
            return http1_fail(a, "chunk-size line too long");
        for (q = p; q < eol && (d = http1_hex(*q)) >= 0; q++) {
            size = size * 16 + (uint64_t)d;
            if (size > HTTP1_LENGTH_MAX)
                return http1_fail(a, "chunk too large");
        }
        /* after the digits: chunk extensions (";name=value") or whitespace, then CRLF */
        if (q == p || (q < eol && *q != ';' && *q != ' ' && *q != '\t' && *q != '\r'))
            return http1_fail(a, "bad chunk size");
        *used = (size_t)(eol + 1 - p);
        a->left = size;
        a->state = size ? ST_CHUNK_DATA : ST_TRAILER;
        return HTTP1_CONTINUE;
    }
    case ST_TRAILER:
        eol = memchr(p, '\n', n);
        if (!eol)
            return n >= HTTP1_LINE_MAX ? http1_fail(a, "trailer line too long") : HTTP1_NEED;
        if ((size_t)(eol - p) >= HTTP1_LINE_MAX)
            return http1_fail(a, "trailer line too long");
        *used = (size_t)(eol + 1 - p);
        if (eol == p || (eol == p + 1 && *p == '\r'))
            return http1_done(a);
        return HTTP1_CONTINUE;
    case ST_TO_CLOSE:
        *data = p;
        *len = n;
        *used = n;
        return HTTP1_BODY;
    }
    return http1_fail(a, "bad parser state");
}

enum http1_event http1_step(struct http1_answer *a, const char *p, size_t n, size_t *used,
                            const char **data, size_t *len)
{
    size_t total = 0, u;
    int ev;

    *data = NULL;
    *len = 0;
    do {
        u = 0;
        ev = http1_step_once(a, p + total, n - total, &u, data, len);
        total += u;
    } while (ev == HTTP1_CONTINUE);
    *used = total;
    return (enum http1_event)ev;
}

enum http1_event http1_eof(struct http1_answer *a)
{
    if (a->state == ST_TO_CLOSE || a->state == ST_END)
        return http1_done(a);
    if (a->state == ST_HEAD && !a->begun)
        return HTTP1_NEED;
    return a->state == ST_FAILED ? HTTP1_ERROR
                                 : http1_fail(a, "connection closed in the middle of an answer");
}

const char *http1_value_bad(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
            return s;
    return NULL;
}
