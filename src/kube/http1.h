/* http1.h - an incremental parser of HTTP/1.1 answers (RFC 9112) and the header-value rule.
 *
 * Pure: no I/O, no allocation. The caller feeds the bytes it has read, split anywhere; the
 * parser consumes what it can and says what it found, one event per step. Bytes it did not
 * consume (a status line or header block not yet complete, a chunk-size line cut in two)
 * must be fed again, followed by what arrives next. Answers follow one another on one
 * connection (pipelining): after HTTP1_DONE the same state parses the next answer. */
#ifndef KUBE_HTTP1_H
#define KUBE_HTTP1_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP1_HEAD_MAX ((size_t)64 << 10)    /* status line and headers of one answer */
#define HTTP1_LINE_MAX ((size_t)8192)        /* a chunk-size or trailer line */
#define HTTP1_LENGTH_MAX (UINT64_C(1) << 60) /* a Content-Length or chunk size */

enum http1_event {
    HTTP1_NEED,  /* nothing more until more bytes arrive (feed the unconsumed rest again) */
    HTTP1_HEAD,  /* the final answer's status line and headers: status, keep, retry_after */
    HTTP1_BODY,  /* body bytes (chunked framing removed): *data, *len */
    HTTP1_DONE,  /* the answer is complete; keep says whether the connection may go on */
    HTTP1_ERROR, /* not HTTP/1.x or framing broken: the connection must be dropped */
};

struct http1_answer {
    /* the answer being parsed (valid from HTTP1_HEAD until the next answer's head) */
    long status;
    int retry_after; /* Retry-After in seconds, -1 when absent or a date */
    bool keep;       /* the connection stays open after this answer */
    bool begun;      /* some bytes of this answer (not an interim 1xx) were consumed */
    const char *why; /* after HTTP1_ERROR: what was wrong, a static string */
    /* private */
    int state;
    uint64_t left; /* body or chunk bytes still to come */
};

/* http1_answer_init readies a for the first answer of a new connection. */
void http1_answer_init(struct http1_answer *a);

/* http1_step parses from p[0..n) and returns the next event; *used is set to the bytes
 * consumed (possibly 0, with HTTP1_NEED). With HTTP1_BODY, *data and *len point into p.
 * Interim answers (1xx but 101) are skipped; 101 is an error (we never ask to upgrade).
 * After HTTP1_ERROR every further step returns HTTP1_ERROR. */
enum http1_event http1_step(struct http1_answer *a, const char *p, size_t n, size_t *used,
                            const char **data, size_t *len);

/* http1_eof says the server closed the connection: HTTP1_DONE when the answer being read
 * was delimited by the close (no length, not chunked), HTTP1_NEED when no answer had begun,
 * HTTP1_ERROR when one was cut short. */
enum http1_event http1_eof(struct http1_answer *a);

/* http1_value_bad returns the first byte of s that may not appear in a header value we
 * send (a control character: CR, LF, NUL, ... or DEL; HTAB too, which nothing of ours
 * needs), or NULL when there is none. A CR/LF would end the header and start another one
 * (header injection). */
const char *http1_value_bad(const char *s);

#endif
