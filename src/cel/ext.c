/* ext.c - cel-go's extension libraries as the Kubernetes base environment enables them:
 * strings (version 2), lists (version 3), sets, optional types, the map insert of the
 * two-variable comprehensions, and the compiled-regex forms of matches/find/findAll.
 *
 * Strings are indexed by code point, as cel-go converts to []rune; error texts are cel-go's
 * ("index out of range: 5", "cannot slice(1, 0), start index must be ..."). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cel/eval.h"
#include "cel/lib.h"
#include "cel/quantity.h"
#include "cel/strfmt.h"
#include "cel/regex.h"
#include "cel/utf8.h"

#define NSO cel_err_static("no such overload")

static struct cel_val list_val(struct cel_list *l)
{
    struct cel_val v = {.k = CV_LIST};
    if (!l)
        return cel_err_static("out of memory");
    v.v.l = l;
    return v;
}

static struct cel_val oom(void)
{
    return cel_err_static("out of memory");
}

/* ---- strings: code-point views ---- */

/* decodes s into code points (arena), returns the count */
static int64_t runes(struct ev *ev, const struct cel_val *s, uint32_t **out)
{
    int64_t n = 0;
    uint32_t *r = arena_alloc(ev->a, ((size_t)s->n + 1) * sizeof(uint32_t));
    size_t i = 0;

    *out = r;
    if (!r)
        return -1;
    while (i < s->n) {
        i += cel_utf8_decode(s->v.s + i, s->n - i, &r[n]);
        n++;
    }
    return n;
}

static struct cel_val from_runes(struct ev *ev, const uint32_t *r, int64_t n)
{
    char *p = arena_alloc(ev->a, (size_t)n * 4 + 1), *o = p;
    if (!p)
        return oom();
    for (int64_t i = 0; i < n; i++)
        o += cel_utf8_encode(r[i], o);
    return cel_str(p, (uint32_t)(o - p));
}

static struct cel_val f_char_at(struct ev *ev, const struct cel_val *a, int n)
{
    uint32_t *r;
    int64_t len = runes(ev, &a[0], &r), i = a[1].v.i;
    (void)n;
    if (len < 0)
        return oom();
    if (i < 0 || i > len)
        return cel_err(ev->a, "index out of range: %lld", (long long)i);
    if (i == len)
        return cel_str("", 0);
    return from_runes(ev, r + i, 1);
}

static int64_t index_of(const uint32_t *r, int64_t len, const uint32_t *sub, int64_t sl,
                        int64_t off)
{
    for (int64_t i = off; i < len - (sl - 1); i++) {
        int64_t j = 0;
        while (j < sl && r[i + j] == sub[j])
            j++;
        if (j == sl)
            return i;
    }
    return -1;
}

static struct cel_val f_index_of(struct ev *ev, const struct cel_val *a, int n)
{
    uint32_t *r, *sub;
    int64_t off = n == 3 ? a[2].v.i : 0, len, sl;
    if (off < 0)
        return cel_err(ev->a, "index out of range: %lld", (long long)off);
    len = runes(ev, &a[0], &r);
    sl = runes(ev, &a[1], &sub);
    if (len < 0 || sl < 0)
        return oom();
    if (sl == 0)
        return cel_int(off > len ? len : off);
    if (off >= len)
        return cel_int(-1);
    return cel_int(index_of(r, len, sub, sl, off));
}

static struct cel_val f_last_index_of(struct ev *ev, const struct cel_val *a, int n)
{
    uint32_t *r, *sub;
    int64_t len, sl, off;

    len = runes(ev, &a[0], &r);
    sl = runes(ev, &a[1], &sub);
    if (len < 0 || sl < 0)
        return oom();
    if (n == 2) {
        if (sl == 0)
            return cel_int(len);
        if (a[0].n < a[1].n)
            return cel_int(-1);
        off = len - 1;
    } else {
        off = a[2].v.i;
    }
    if (off < 0)
        return cel_err(ev->a, "index out of range: %lld", (long long)off);
    if (sl == 0)
        return cel_int(off > len ? len : off);
    if (off >= len)
        return cel_int(-1);
    if (off > len - sl)
        off = len - sl;
    for (int64_t i = off; i >= 0; i--) {
        int64_t j = 0;
        while (j < sl && r[i + j] == sub[j])
            j++;
        if (j == sl)
            return cel_int(i);
    }
    return cel_int(-1);
}

static struct cel_val case_ascii(struct ev *ev, const struct cel_val *s, bool upper)
{
    char *p = arena_alloc(ev->a, (size_t)s->n + 1);
    if (!p)
        return oom();
    for (uint32_t i = 0; i < s->n; i++) {
        char c = s->v.s[i];
        if (upper && c >= 'a' && c <= 'z')
            c = (char)(c - 32);
        else if (!upper && c >= 'A' && c <= 'Z')
            c = (char)(c + 32);
        p[i] = c;
    }
    /* invalid UTF-8 becomes U+FFFD through []rune, as in cel-go */
    return cel_str(p, s->n);
}

static struct cel_val f_lower(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return case_ascii(ev, &a[0], false);
}

static struct cel_val f_upper(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return case_ascii(ev, &a[0], true);
}

/* strings.Replace(s, old, new, n) */
static struct cel_val f_replace(struct ev *ev, const struct cel_val *a, int n)
{
    const char *s = a[0].v.s, *old = a[1].v.s, *nw = a[2].v.s;
    size_t sl = a[0].n, ol = a[1].n, nl = a[2].n, i = 0;
    int64_t limit = n == 4 ? a[3].v.i : -1, done = 0;
    struct buf b = BUF_INIT(0);
    struct cel_val r;
    char *p;

    if (limit == 0 || (ol == sl && ol && !memcmp(s, old, ol) && 0))
        return a[0];
    if (ol == 0) {
        /* an empty old string matches before every rune and at the end */
        while (true) {
            if (limit >= 0 && done >= limit) {
                buf_append(&b, s + i, sl - i);
                break;
            }
            buf_append(&b, nw, nl);
            done++;
            if (i >= sl)
                break;
            {
                uint32_t ch;
                size_t w = cel_utf8_decode(s + i, sl - i, &ch);
                buf_append(&b, s + i, w);
                i += w;
            }
        }
    } else {
        while (i < sl) {
            const char *m =
                (limit < 0 || done < limit) && sl - i >= ol ? memmem(s + i, sl - i, old, ol) : NULL;
            if (!m) {
                buf_append(&b, s + i, sl - i);
                break;
            }
            buf_append(&b, s + i, (size_t)(m - (s + i)));
            buf_append(&b, nw, nl);
            done++;
            i = (size_t)(m - s) + ol;
        }
    }
    p = cel_ev_strdup(ev, b.data ? b.data : "", b.len);
    r = p ? cel_str(p, (uint32_t)b.len) : oom();
    buf_release(&b);
    return r;
}

static int list_push(struct ev *ev, struct cel_list *l, struct cel_val v)
{
    if (l->n == l->cap) {
        uint32_t nc = l->cap ? l->cap * 2 : 8;
        struct cel_val *nv = arena_alloc(ev->a, (size_t)nc * sizeof(*nv));
        if (!nv)
            return -1;
        if (l->n)
            memcpy(nv, l->v, (size_t)l->n * sizeof(*nv));
        l->v = nv;
        l->cap = nc;
    }
    l->v[l->n++] = v;
    return 0;
}

/* strings.SplitN(s, sep, n) (n < 0: all) */
static struct cel_val f_split(struct ev *ev, const struct cel_val *a, int na)
{
    const char *s = a[0].v.s, *sep = a[1].v.s;
    size_t sl = a[0].n, pl = a[1].n, i = 0;
    int64_t n = na == 3 ? a[2].v.i : -1;
    struct cel_list *l = cel_list_new(ev->a, 0);

    if (!l)
        return oom();
    if (n == 0)
        return list_val(l);
    if (pl == 0) {
        /* explode into runes, the last one holding the rest */
        while (i < sl) {
            uint32_t ch;
            size_t w = cel_utf8_decode(s + i, sl - i, &ch);
            if (n > 0 && (int64_t)l->n == n - 1)
                w = sl - i;
            if (list_push(ev, l, cel_str(s + i, (uint32_t)w)) < 0)
                return oom();
            i += w;
        }
        return list_val(l);
    }
    while (true) {
        const char *m = NULL;
        if (n < 0 || (int64_t)l->n < n - 1)
            m = sl - i >= pl ? memmem(s + i, sl - i, sep, pl) : NULL;
        if (!m) {
            if (list_push(ev, l, cel_str(s + i, (uint32_t)(sl - i))) < 0)
                return oom();
            break;
        }
        if (list_push(ev, l, cel_str(s + i, (uint32_t)(m - (s + i)))) < 0)
            return oom();
        i = (size_t)(m - s) + pl;
    }
    return list_val(l);
}

static struct cel_val f_substring(struct ev *ev, const struct cel_val *a, int n)
{
    uint32_t *r;
    int64_t len = runes(ev, &a[0], &r), start = a[1].v.i, end;

    if (len < 0)
        return oom();
    if (n == 2) {
        if (start < 0 || start > len)
            return cel_err(ev->a, "index out of range: %lld", (long long)start);
        return from_runes(ev, r + start, len - start);
    }
    end = a[2].v.i;
    if (start > end)
        return cel_err(ev->a, "invalid substring range. start: %lld, end: %lld", (long long)start,
                       (long long)end);
    if (start < 0 || start > len)
        return cel_err(ev->a, "index out of range: %lld", (long long)start);
    if (end < 0 || end > len)
        return cel_err(ev->a, "index out of range: %lld", (long long)end);
    return from_runes(ev, r + start, end - start);
}

/* unicode.IsSpace */
static bool is_space(uint32_t c)
{
    switch (c) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xa0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202f:
    case 0x205f:
    case 0x3000:
        return true;
    default:
        return c >= 0x2000 && c <= 0x200a;
    }
}

static struct cel_val f_trim(struct ev *ev, const struct cel_val *a, int n)
{
    const char *s = a[0].v.s;
    size_t b = 0, e = a[0].n;
    (void)ev;
    (void)n;
    while (b < e) {
        uint32_t c;
        size_t w = cel_utf8_decode(s + b, e - b, &c);
        if (!is_space(c))
            break;
        b += w;
    }
    while (e > b) {
        /* step back one rune */
        size_t k = e - 1;
        uint32_t c;
        while (k > b && ((unsigned char)s[k] & 0xc0) == 0x80 && e - k < 4)
            k--;
        if (cel_utf8_decode(s + k, e - k, &c) != e - k) {
            k = e - 1;
            c = 0xfffd;
        }
        if (!is_space(c))
            break;
        e = k;
    }
    return cel_str(s + b, (uint32_t)(e - b));
}

static struct cel_val f_join(struct ev *ev, const struct cel_val *a, int n)
{
    const struct cel_list *l = a[0].v.l;
    struct buf b = BUF_INIT(0);
    struct cel_val r;
    char *p;

    for (uint32_t i = 0; i < l->n; i++) {
        if (l->v[i].k != CV_STRING) {
            struct buf e = BUF_INIT(0);
            struct cel_val err;
            buf_release(&b);
            buf_puts(&e, "join: invalid input: ");
            cel_val_format_v(&e, &l->v[i]);
            err = cel_err_buf(ev->a, &e);
            buf_release(&e);
            return err;
        }
        if (i && n == 2)
            buf_append(&b, a[1].v.s, a[1].n);
        buf_append(&b, l->v[i].v.s, l->v[i].n);
    }
    p = cel_ev_strdup(ev, b.data ? b.data : "", b.len);
    r = p ? cel_str(p, (uint32_t)b.len) : oom();
    buf_release(&b);
    return r;
}

static struct cel_val f_quote(struct ev *ev, const struct cel_val *a, int n)
{
    struct buf b = BUF_INIT(0);
    struct cel_val r;
    char *p;
    size_t i = 0;
    (void)n;

    buf_puts(&b, "\"");
    while (i < a[0].n) {
        uint32_t c;
        char tmp[4];
        i += cel_utf8_decode(a[0].v.s + i, a[0].n - i, &c);
        switch (c) {
        case '\a':
            buf_puts(&b, "\\a");
            break;
        case '\b':
            buf_puts(&b, "\\b");
            break;
        case '\f':
            buf_puts(&b, "\\f");
            break;
        case '\n':
            buf_puts(&b, "\\n");
            break;
        case '\r':
            buf_puts(&b, "\\r");
            break;
        case '\t':
            buf_puts(&b, "\\t");
            break;
        case '\v':
            buf_puts(&b, "\\v");
            break;
        case '\\':
            buf_puts(&b, "\\\\");
            break;
        case '"':
            buf_puts(&b, "\\\"");
            break;
        default:
            buf_append(&b, tmp, cel_utf8_encode(c, tmp));
        }
    }
    buf_puts(&b, "\"");
    p = cel_ev_strdup(ev, b.data, b.len);
    r = p ? cel_str(p, (uint32_t)b.len) : oom();
    buf_release(&b);
    return r;
}

/* ---- lists ---- */

static struct cel_val f_slice(struct ev *ev, const struct cel_val *a, int n)
{
    const struct cel_list *l = a[0].v.l;
    int64_t s = a[1].v.i, e = a[2].v.i;
    struct cel_list *r;
    (void)n;
    if (s < 0 || e < 0)
        return cel_err(ev->a, "cannot slice(%lld, %lld), negative indexes not supported",
                       (long long)s, (long long)e);
    if (s > e)
        return cel_err(ev->a,
                       "cannot slice(%lld, %lld), start index must be less than or equal to end "
                       "index",
                       (long long)s, (long long)e);
    if ((int64_t)l->n < e)
        return cel_err(ev->a, "cannot slice(%lld, %lld), list is length %u", (long long)s,
                       (long long)e, l->n);
    r = cel_list_new(ev->a, (uint32_t)(e - s));
    if (!r)
        return oom();
    for (int64_t i = s; i < e; i++)
        r->v[r->n++] = l->v[i];
    return list_val(r);
}

static int flatten_into(struct ev *ev, struct cel_list *out, const struct cel_list *l,
                        int64_t depth)
{
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->v[i].k != CV_LIST || depth == 0) {
            if (list_push(ev, out, l->v[i]) < 0)
                return -1;
        } else if (flatten_into(ev, out, l->v[i].v.l, depth - 1) < 0) {
            return -1;
        }
    }
    return 0;
}

static struct cel_val f_flatten(struct ev *ev, const struct cel_val *a, int n)
{
    int64_t depth = 1;
    struct cel_list *out;

    if (a[0].k != CV_LIST) {
        if (a[0].k == CV_ERROR)
            return a[0];
        return n == 2 ? cel_err(ev->a, "no such overload: %s.flatten(%s)", cel_val_type_name(&a[0]),
                                cel_val_type_name(&a[1]))
                      : cel_err(ev->a, "no such overload: %s.flatten()", cel_val_type_name(&a[0]));
    }
    if (n == 2) {
        if (a[1].k != CV_INT)
            return cel_err(ev->a, "no such overload: %s.flatten(%s)", cel_val_type_name(&a[0]),
                           cel_val_type_name(&a[1]));
        depth = a[1].v.i;
    }
    if (depth < 0)
        return cel_err_static("level must be non-negative");
    out = cel_list_new(ev->a, 0);
    if (!out || flatten_into(ev, out, a[0].v.l, depth) < 0)
        return oom();
    return list_val(out);
}

/* sortByAssociatedKeys: cel-go sorts indices with sort.Slice (a stable insertion sort below
 * 13 elements; a stable merge sort here beyond, where Go's pdqsort may order equal keys
 * differently). */
static struct cel_val sort_by_keys(struct ev *ev, const struct cel_list *l,
                                   const struct cel_list *k)
{
    uint32_t n = l->n;
    uint32_t *idx;
    struct cel_list *r;
    bool type_err = false;
    const char *et;

    if (n != k->n)
        return cel_err(ev->a,
                       "@sortByAssociatedKeys() expected a list of the same size as the associated "
                       "keys list, but got %u and %u elements respectively",
                       n, k->n);
    if (n == 0) {
        struct cel_val v = {.k = CV_LIST};
        v.v.l = l;
        return v;
    }
    if (!(cel_val_traits(&k->v[0]) & TR_COMPARER))
        return cel_err_static("list elements must be comparable");
    et = cel_val_type_name(&k->v[0]);
    idx = arena_alloc(ev->a, (size_t)n * sizeof(*idx));
    if (!idx)
        return oom();
    for (uint32_t i = 0; i < n; i++)
        idx[i] = i;
    /* insertion sort (Go's for n <= 12), as the comparator sees pairs */
    for (uint32_t i = 1; i < n; i++) {
        for (uint32_t j = i; j > 0; j--) {
            const struct cel_val *x = &k->v[idx[j]], *y = &k->v[idx[j - 1]];
            int c = 0;
            struct cel_val e;
            if (strcmp(cel_val_type_name(x), et) || strcmp(cel_val_type_name(y), et)) {
                type_err = true;
                break;
            }
            e = cel_compare(ev, x, y, &c);
            if (e.k == CV_ERROR || c >= 0)
                break;
            {
                uint32_t t = idx[j];
                idx[j] = idx[j - 1];
                idx[j - 1] = t;
            }
        }
    }
    if (type_err)
        return cel_err_static("list elements must have the same type");
    r = cel_list_new(ev->a, n);
    if (!r)
        return oom();
    for (uint32_t i = 0; i < n; i++)
        r->v[r->n++] = l->v[idx[i]];
    return list_val(r);
}

static struct cel_val f_sort(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    if (a[0].k != CV_LIST)
        return NSO;
    return sort_by_keys(ev, a[0].v.l, a[0].v.l);
}

static struct cel_val f_sort_by_keys(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    if (a[0].k != CV_LIST || a[1].k != CV_LIST)
        return NSO;
    return sort_by_keys(ev, a[0].v.l, a[1].v.l);
}

static struct cel_val f_range(struct ev *ev, const struct cel_val *a, int n)
{
    int64_t k = a[0].v.i;
    struct cel_list *l;
    (void)n;
    if (k < 0)
        return cel_err(ev->a, "lists.range: size must be non-negative, got %lld", (long long)k);
    if (k > 1000000)
        return cel_err(ev->a, "lists.range: size %lld exceeds maximum allowed (1000000)",
                       (long long)k);
    l = cel_list_new(ev->a, (uint32_t)k);
    if (!l)
        return oom();
    for (int64_t i = 0; i < k; i++)
        l->v[l->n++] = cel_int(i);
    return list_val(l);
}

static struct cel_val f_reverse(struct ev *ev, const struct cel_val *a, int n)
{
    const struct cel_list *l = a[0].v.l;
    struct cel_list *r = cel_list_new(ev->a, l->n);
    (void)n;
    if (!r)
        return oom();
    for (uint32_t i = 0; i < l->n; i++)
        r->v[r->n++] = l->v[l->n - 1 - i];
    return list_val(r);
}

static struct cel_val f_distinct(struct ev *ev, const struct cel_val *a, int n)
{
    const struct cel_list *l = a[0].v.l;
    struct cel_list *r;
    (void)n;
    if (l->n == 0)
        return a[0];
    r = cel_list_new(ev->a, l->n);
    if (!r)
        return oom();
    for (uint32_t i = 0; i < l->n; i++) {
        bool seen = false;
        for (uint32_t j = 0; j < r->n && !seen; j++)
            if (i != j && cel_val_eq(&l->v[i], &r->v[j]) == 1)
                seen = true;
        if (!seen)
            r->v[r->n++] = l->v[i];
    }
    return list_val(r);
}

/* ---- sets ---- */

static bool list_contains(const struct cel_list *l, const struct cel_val *v)
{
    return cel_in_list(l, v);
}

static struct cel_val f_sets_contains(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    for (uint32_t i = 0; i < a[1].v.l->n; i++)
        if (!list_contains(a[0].v.l, &a[1].v.l->v[i]))
            return cel_bool(false);
    return cel_bool(true);
}

static struct cel_val f_sets_equivalent(struct ev *ev, const struct cel_val *a, int n)
{
    struct cel_val r = f_sets_contains(ev, a, n), b[2];
    if (!r.v.b)
        return r;
    b[0] = a[1];
    b[1] = a[0];
    return f_sets_contains(ev, b, n);
}

static struct cel_val f_sets_intersects(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    for (uint32_t i = 0; i < a[0].v.l->n; i++)
        if (list_contains(a[1].v.l, &a[0].v.l->v[i]))
            return cel_bool(true);
    return cel_bool(false);
}

/* ---- optionals ---- */

static struct cel_val opt_of(struct ev *ev, const struct cel_val *v)
{
    struct cel_val o = {.k = CV_OPTIONAL};
    struct cel_val *box = arena_alloc(ev->a, sizeof(*box));
    if (!box)
        return oom();
    *box = *v;
    o.v.o = box;
    return o;
}

static struct cel_val f_opt_of(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return opt_of(ev, &a[0]);
}

static bool is_zero(const struct cel_val *v)
{
    switch (v->k) {
    case CV_BOOL:
        return !v->v.b;
    case CV_INT:
    case CV_DURATION:
        return v->v.i == 0;
    case CV_UINT:
        return v->v.u == 0;
    case CV_DOUBLE:
        return v->v.d == 0.0;
    case CV_STRING:
    case CV_BYTES:
        return v->n == 0;
    case CV_LIST:
        return v->v.l->n == 0;
    case CV_MAP:
        return v->v.m->n == 0;
    case CV_NULL:
        return true;
    case CV_TIMESTAMP:
        /* time.Time.IsZero: 0001-01-01T00:00:00Z */
        return v->v.i == -62135596800LL && v->n == 0;
    default:
        return false;
    }
}

static struct cel_val f_opt_of_non_zero(struct ev *ev, const struct cel_val *a, int n)
{
    struct cel_val none = {.k = CV_OPTIONAL};
    (void)n;
    if (is_zero(&a[0]))
        return none;
    return opt_of(ev, &a[0]);
}

static struct cel_val f_opt_none(struct ev *ev, const struct cel_val *a, int n)
{
    struct cel_val none = {.k = CV_OPTIONAL};
    (void)ev;
    (void)a;
    (void)n;
    return none;
}

static struct cel_val f_opt_value(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    if (!a[0].v.o)
        return cel_err_static("optional.none() dereference");
    return *a[0].v.o;
}

static struct cel_val f_opt_has_value(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    return cel_bool(a[0].v.o != NULL);
}

static struct cel_val f_opt_unwrap(struct ev *ev, const struct cel_val *a, int n)
{
    const struct cel_list *l = a[0].v.l;
    struct cel_list *r = cel_list_new(ev->a, l->n);
    (void)n;
    if (!r)
        return oom();
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->v[i].k != CV_OPTIONAL) {
            struct buf b = BUF_INIT(0);
            struct cel_val e;
            buf_puts(&b, "value ");
            cel_val_format_v(&b, &l->v[i]);
            buf_puts(&b, " is not optional");
            e = cel_err_buf(ev->a, &b);
            buf_release(&b);
            return e;
        }
        if (l->v[i].v.o)
            r->v[r->n++] = *l->v[i].v.o;
    }
    return list_val(r);
}

static struct cel_val f_first(struct ev *ev, const struct cel_val *a, int n)
{
    struct cel_val none = {.k = CV_OPTIONAL};
    (void)n;
    if (a[0].v.l->n == 0)
        return none;
    return opt_of(ev, &a[0].v.l->v[0]);
}

static struct cel_val f_last(struct ev *ev, const struct cel_val *a, int n)
{
    struct cel_val none = {.k = CV_OPTIONAL};
    (void)n;
    if (a[0].v.l->n == 0)
        return none;
    return opt_of(ev, &a[0].v.l->v[a[0].v.l->n - 1]);
}

/* ---- cel.@mapInsert (two-variable comprehensions) ---- */

static struct cel_val map_insert(struct ev *ev, const struct cel_val *m, const struct cel_val *k,
                                 const struct cel_val *v)
{
    struct cel_map *r;
    struct cel_val out = {.k = CV_MAP};

    cel_map_key_check(ev, m->v.m->strkeys ? m->v.m : NULL, k); /* insertion always hashes */
    if (cel_map_find(m->v.m, k)) {
        struct buf b = BUF_INIT(0);
        struct cel_val e;
        buf_puts(&b, "insert failed: key ");
        /* fmt's %v: each Go type's String() */
        if (k->k == CV_IP || k->k == CV_CIDR) {
            struct cel_val s = cel_ip_to_string(ev, k); /* the embedded netip String() */
            if (s.k == CV_STRING)
                buf_append(&b, s.v.s, s.n);
        } else if (k->k == CV_DURATION || k->k == CV_TIMESTAMP) {
            cel_time_go_string(&b, k);
        } else if (k->k == CV_QUANTITY) {
            cel_quantity_string(ev->nqpromo ? cel_quantity_current(ev, k->v.q) : k->v.q, &b);
        } else if (k->k == CV_URL) {
            buf_append(&b, k->v.url->str.s, k->v.url->str.n);
        } else if (k->k == CV_NULL) {
            buf_puts(&b, "0"); /* types.Null has no String() */
        } else {
            cel_val_format_v(&b, k);
        }
        buf_puts(&b, " already exists");
        e = cel_err_buf(ev->a, &b);
        buf_release(&b);
        return e;
    }
    if (m->v.m->mut) {
        r = (struct cel_map *)m->v.m;
        if (r->n == r->cap) {
            uint32_t nc = r->cap ? r->cap * 2 : 8;
            struct cel_val *nk = arena_alloc(ev->a, nc * sizeof(*nk));
            struct cel_val *nv = arena_alloc(ev->a, nc * sizeof(*nv));
            if (!nk || !nv)
                return oom();
            if (r->n) {
                memcpy(nk, r->keys, r->n * sizeof(*nk));
                memcpy(nv, r->vals, r->n * sizeof(*nv));
            }
            r->keys = nk;
            r->vals = nv;
            r->cap = nc;
        }
        r->keys[r->n] = *k;
        r->vals[r->n] = *v;
        r->n++;
        return *m;
    }
    r = cel_map_new(ev->a, m->v.m->n + 1);
    if (!r)
        return oom();
    r->keys[0] = *k;
    r->vals[0] = *v;
    r->n = 1;
    for (uint32_t i = 0; i < m->v.m->n; i++) {
        r->keys[r->n] = m->v.m->keys[i];
        r->vals[r->n] = m->v.m->vals[i];
        r->n++;
    }
    out.v.m = r;
    return out;
}

static struct cel_val f_map_insert_kv(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return map_insert(ev, &a[0], &a[1], &a[2]);
}

static struct cel_val f_map_insert_map(struct ev *ev, const struct cel_val *a, int n)
{
    struct cel_val m = a[0];
    (void)n;
    for (uint32_t i = 0; i < a[1].v.m->n; i++) {
        m = map_insert(ev, &m, &a[1].v.m->keys[i], &a[1].v.m->vals[i]);
        if (m.k == CV_ERROR)
            return m;
    }
    return m;
}

/* ---- compiled regexes (constant patterns) ---- */

static const struct cel_regex *call_regex(struct ev *ev)
{
    return ev->cur_regex;
}

/* The optimized calls take the receiver's Go Value() when it is a string: a string's, and a
 * type value's (its name: dyn(int).matches("^int$") is true), as cel-go's and Kubernetes'
 * regex optimizations do. False for any other value. */
static bool value_string(const struct cel_val *v, struct cel_val *out)
{
    if (v->k == CV_STRING) {
        *out = *v;
        return true;
    }
    if (v->k == CV_TYPE) {
        *out = cel_str(v->v.s, (uint32_t)strlen(v->v.s));
        return true;
    }
    return false;
}

static struct cel_val f_matches_compiled(struct ev *ev, const struct cel_val *a, int n)
{
    struct cel_val s;
    (void)n;
    if (!value_string(&a[0], &s))
        return NSO;
    return cel_bool(cel_regex_search(call_regex(ev), s.v.s, s.n));
}

static struct cel_val f_find_compiled(struct ev *ev, const struct cel_val *a, int n)
{
    struct cel_val s;
    size_t b, e;
    (void)n;
    if (!value_string(&a[0], &s))
        return cel_maybe_no_such_overload(&a[0]);
    if (!cel_regex_find_at(call_regex(ev), s.v.s, s.n, 0, &b, &e))
        return cel_str("", 0);
    return cel_str(s.v.s + b, (uint32_t)(e - b));
}

/* Go's Regexp.FindAllString(s, n) */
struct cel_val cel_regex_find_all(struct ev *ev, const struct cel_regex *re,
                                  const struct cel_val *s, int64_t limit)
{
    struct cel_list *l = cel_list_new(ev->a, 0);
    size_t pos = 0, end = s->n;
    int64_t found = 0;
    long long prev_end = -1;

    if (!l)
        return oom();
    if (limit < 0)
        limit = (int64_t)end + 1;
    while (found < limit && pos <= end) {
        size_t b, e;
        bool accept = true;
        if (!cel_regex_find_at(re, s->v.s, end, pos, &b, &e))
            break;
        if (e == pos) {
            if ((long long)b == prev_end)
                accept = false;
            if (pos < end) {
                uint32_t ch;
                pos += cel_utf8_decode(s->v.s + pos, end - pos, &ch);
            } else {
                pos = end + 1;
            }
        } else {
            pos = e;
        }
        prev_end = (long long)e;
        if (accept) {
            if (list_push(ev, l, cel_str(s->v.s + b, (uint32_t)(e - b))) < 0)
                return oom();
            found++;
        }
    }
    return list_val(l);
}

static struct cel_val f_find_all_compiled(struct ev *ev, const struct cel_val *a, int n)
{
    int64_t limit = -1;
    struct cel_val s;
    if (n < 2 || n > 3)
        return NSO;
    if (!value_string(&a[0], &s))
        return cel_maybe_no_such_overload(&a[0]);
    if (n == 3) {
        if (a[2].k != CV_INT)
            return cel_maybe_no_such_overload(&a[2]);
        limit = a[2].v.i;
    }
    return cel_regex_find_all(ev, call_regex(ev), &s, limit);
}

static struct cel_val f_string_format(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return cel_string_format(ev, &a[0], a[1].v.l);
}

static const struct cel_impl ext_impls[] = {
    {"string_char_at_int", f_char_at, 0, false},
    {"string_format", f_string_format, 0, false},
    {"string_index_of_string", f_index_of, 0, false},
    {"string_index_of_string_int", f_index_of, 0, false},
    {"string_last_index_of_string", f_last_index_of, 0, false},
    {"string_last_index_of_string_int", f_last_index_of, 0, false},
    {"string_lower_ascii", f_lower, 0, false},
    {"string_upper_ascii", f_upper, 0, false},
    {"string_replace_string_string", f_replace, 0, false},
    {"string_replace_string_string_int", f_replace, 0, false},
    {"string_split_string", f_split, 0, false},
    {"string_split_string_int", f_split, 0, false},
    {"string_substring_int", f_substring, 0, false},
    {"string_substring_int_int", f_substring, 0, false},
    {"string_trim", f_trim, 0, false},
    {"list_join", f_join, 0, false},
    {"list_join_string", f_join, 0, false},
    {"strings_quote", f_quote, 0, false},
    {"list_slice", f_slice, 0, false},
    {"list_flatten", f_flatten, 0, true},
    {"list_flatten_int", f_flatten, 0, true},
    {"sort", f_sort, TR_LISTER, false},
    {"@sortByAssociatedKeys", f_sort_by_keys, TR_LISTER, false},
    {"lists_range", f_range, 0, false},
    {"list_reverse", f_reverse, 0, false},
    {"list_distinct", f_distinct, 0, false},
    {"list_sets_contains_list", f_sets_contains, 0, false},
    {"list_sets_equivalent_list", f_sets_equivalent, 0, false},
    {"list_sets_intersects_list", f_sets_intersects, 0, false},
    {"optional_of", f_opt_of, 0, false},
    {"optional_ofNonZeroValue", f_opt_of_non_zero, 0, false},
    {"optional_none", f_opt_none, 0, false},
    {"optional_value", f_opt_value, 0, false},
    {"optional_hasValue", f_opt_has_value, 0, false},
    {"optional_unwrap", f_opt_unwrap, 0, false},
    {"optional_unwrapOpt", f_opt_unwrap, 0, false},
    {"list_first", f_first, 0, false},
    {"list_last", f_last, 0, false},
    {"@mapInsert_map_key_value", f_map_insert_kv, 0, false},
    {"@mapInsert_map_map", f_map_insert_map, 0, false},
    {"@matches_compiled", f_matches_compiled, 0, true},
    {"@find_compiled", f_find_compiled, 0, true},
    {"@findAll_compiled", f_find_all_compiled, 0, true},
};

const struct cel_impl *cel_ext_impls(size_t *n)
{
    *n = sizeof(ext_impls) / sizeof(ext_impls[0]);
    return ext_impls;
}
