/* listsplit.c - a JSON list split as its text arrives, and JSON text tools (listsplit.h). */
#include "kube/listsplit.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *kube_json_string_end(const char *p, const char *end);

void kube_list_split_init(struct kube_list_split *s, size_t batch, size_t cap, const char *what,
                          kube_list_part_fn part, void *ud, struct err *err)
{
    memset(s, 0, sizeof(*s));
    buf_init(&s->doc, cap);
    s->batch = batch ? batch : 1;
    s->what = what;
    s->part = part;
    s->ud = ud;
    s->err = err;
}

void kube_list_split_release(struct kube_list_split *s)
{
    buf_release(&s->doc);
}

void kube_list_split_reset(struct kube_list_split *s)
{
    buf_reset(&s->doc);
    s->head_len = s->key_at = s->n = 0;
    s->depth = 0;
    s->in_str = s->esc = s->key_items = s->want_array = s->in_item = false;
    s->where = KUBE_LIST_HEAD;
    s->rc = 0;
}

/* split_append copies n bytes to doc's end: 0, or the failure with err set */
static int split_append(struct kube_list_split *s, const char *p, size_t n)
{
    int rc = buf_append(&s->doc, p, n);

    if (rc == -E2BIG)
        return err_set(s->err, rc, "%s: a list item larger than %zu MiB", s->what,
                       s->doc.cap >> 20);
    return rc ? err_set(s->err, rc, "out of memory") : 0;
}

/* split_emit hands the head and the gathered items to fn as one list document. */
static int split_emit(struct kube_list_split *s)
{
    int rc = split_append(s, "]}", 2);

    if (!rc)
        rc = s->part(s->ud, &s->doc, s->head_len);
    s->doc.len = s->head_len;
    s->n = 0;
    return rc;
}

/* split_byte follows one byte outside strings and items, already copied to doc's
 * end. */
static int split_byte(struct kube_list_split *s, char ch)
{
    if (s->where == KUBE_LIST_HEAD && s->depth == 1) {
        if (ch == ':') {
            s->want_array = s->key_items;
        } else if (!strchr(" \t\r\n", ch)) {
            if (s->want_array && ch == '[') {
                /* "items":[ : the head ends here */
                s->depth++;
                s->where = KUBE_LIST_ITEMS;
                s->head_len = s->doc.len;
                return 0;
            }
            s->want_array = s->key_items = false;
        }
    }
    if (s->where == KUBE_LIST_ITEMS && s->depth == 2) {
        if (ch == ']') {
            s->where = KUBE_LIST_TAIL; /* the tail begins with this "]" */
        } else if (strchr(" \t\r\n,", ch)) {
            s->doc.len--; /* blanks and commas between items: the splitter writes its own */
            return 0;
        } else if (ch != '{') {
            return err_set(s->err, -EPROTO, "%s: a list item is not an object", s->what);
        } else {
            s->in_item = true;
            if (s->n) {
                /* put the comma before the "{" at doc's end */
                int rc;

                s->doc.data[s->doc.len - 1] = ',';
                if ((rc = split_append(s, "{", 1)))
                    return rc;
            }
        }
    }
    if (ch == '{' || ch == '[')
        s->depth++;
    else if (ch == '}' || ch == ']')
        s->depth--;
    return 0;
}

/* Inside an item only strings and the depth are followed, and its bytes are copied in runs;
 * the rest goes byte by byte (split_byte). */
int kube_list_split_feed(struct kube_list_split *s, const char *p, size_t n)
{
    const char *end = p + n, *run = p; /* run: read, not copied yet */

    while (p < end && !s->rc) {
        if (s->in_str) {
            /* to the closing quote: a quote closes unless a backslash escapes it */
            const char *q, *bs;

            if (s->esc) {
                s->esc = false;
                p++;
                continue;
            }
            if (!(q = kube_json_string_end(p, end))) {
                /* the string goes on in the next bytes: after a backslash, escaped */
                for (bs = end; bs > p && bs[-1] == '\\'; bs--)
                    ;
                s->esc = (end - bs) & 1;
                p = end;
                break;
            }
            p = q + 1;
            s->in_str = false;
            if (s->where == KUBE_LIST_HEAD && s->depth == 1) {
                s->rc = split_append(s, run, (size_t)(p - run));
                run = p;
                s->key_items =
                    s->doc.len - s->key_at == 7 && !memcmp(s->doc.data + s->key_at, "\"items\"", 7);
            }
            continue;
        }
        if (s->in_item) {
            char ch = *p++;

            if (ch == '"') {
                s->in_str = true;
            } else if (ch == '{' || ch == '[') {
                s->depth++;
            } else if ((ch == '}' || ch == ']') && --s->depth == 2) {
                /* the item ends */
                s->in_item = false;
                if (!(s->rc = split_append(s, run, (size_t)(p - run))) && ++s->n == s->batch)
                    s->rc = split_emit(s);
                run = p;
            }
            continue;
        }
        if ((s->rc = split_append(s, run, (size_t)(p - run) + 1)))
            break;
        run = p + 1;
        if (*p == '"') {
            s->in_str = true;
            s->key_at = s->doc.len - 1;
            if (s->where == KUBE_LIST_ITEMS && s->depth == 2)
                s->rc = err_set(s->err, -EPROTO, "%s: a list item is not an object", s->what);
        } else {
            s->rc = split_byte(s, *p);
        }
        p++;
    }
    if (!s->rc && p > run)
        s->rc = split_append(s, run, (size_t)(p - run));
    return s->rc;
}

/* the last document: the last items with the tail, or the whole answer when it had no items
 * array */
int kube_list_split_end(struct kube_list_split *s)
{
    if (s->where == KUBE_LIST_ITEMS || s->in_str || s->depth)
        return s->rc = err_set(s->err, -EPROTO, "%s: the answer is not JSON: it ends too soon",
                               s->what);
    return s->rc = s->part(s->ud, &s->doc, s->where == KUBE_LIST_TAIL ? s->head_len : 0);
}

/* kube_json_string_end returns the closing quote of the string whose text starts at p
 * (after its opening quote), or NULL when end comes first: the first quote that an odd run
 * of backslashes does not escape. */
static const char *kube_json_string_end(const char *p, const char *end)
{
    const char *q = p, *b;

    while ((q = memchr(q, '"', (size_t)(end - q)))) {
        for (b = q; b > p && b[-1] == '\\'; b--)
            ;
        if (!((q - b) & 1))
            return q;
        q++;
    }
    return NULL;
}

/* json_skip_value returns the end of the JSON value starting at p (after blanks), or NULL
 * when it is cut short. Strings are skipped with their escapes; brackets are counted. */
static const char *json_skip_value(const char *p, const char *end)
{
    int depth = 0;

    while (p < end && strchr(" \t\r\n", *p))
        p++;
    for (; p < end; p++) {
        if (*p == '"') {
            if (!(p = kube_json_string_end(p + 1, end)))
                return NULL;
            if (!depth)
                return p + 1;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if (*p == '}' || *p == ']') {
            if (--depth <= 0)
                return depth < 0 ? p : p + 1;
        } else if (!depth && (*p == ',' || strchr(" \t\r\n", *p))) {
            return p; /* the end of a number, true, false or null */
        }
    }
    return depth ? NULL : p;
}

void kube_json_strip_member(struct buf *b, size_t from, const char *key)
{
    char pat[128];
    size_t plen, w = from, r = from;
    char *d = b->data;

    plen = (size_t)snprintf(pat, sizeof(pat), "\"%s\":", key);
    if (!d || plen >= sizeof(pat))
        return;
    while (r < b->len) {
        const char *hit = memmem(d + r, b->len - r, pat, plen);
        const char *vend;
        size_t at, after;

        if (!hit || (hit > d && hit[-1] == '\\')) {
            size_t n = hit ? (size_t)(hit - d) + 1 - r : b->len - r;
            memmove(d + w, d + r, n);
            w += n;
            r += n;
            continue;
        }
        at = (size_t)(hit - d);
        vend = json_skip_value(hit + plen, d + b->len);
        if (!vend) { /* cut short: leave the rest as it is */
            memmove(d + w, d + r, b->len - r);
            w += b->len - r;
            break;
        }
        after = (size_t)(vend - d);
        while (after < b->len && strchr(" \t\r\n", d[after]))
            after++;
        memmove(d + w, d + r, at - r);
        w += at - r;
        if (after < b->len && d[after] == ',') {
            after++; /* "key": v, next -> next */
        } else {
            /* the last member: drop the comma before it */
            while (w > from && strchr(" \t\r\n", d[w - 1]))
                w--;
            if (w > from && d[w - 1] == ',')
                w--;
        }
        r = after;
    }
    b->len = w;
    d[w] = '\0'; /* w is at most the old length: inside the allocation */
}
