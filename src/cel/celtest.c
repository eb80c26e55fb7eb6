/* celtest.c - the conformance value encoding (cel-eval --conformance): one JSON object with
 * one key per value, as tests/k8s's cel-oracle writes it (docs/cel-testing.md). */
#include "cel/celtest.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "cel/eval.h"
#include "cel/lib.h"
#include "cel/utf8.h"

static void json_str(struct buf *b, const char *s, size_t n)
{
    buf_append(b, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            if (c == '"' || c == '\\') {
                buf_printf(b, "\\%c", c);
            } else if (c < 0x20) {
                buf_printf(b, "\\u%04x", c);
            } else {
                buf_append(b, s + i, 1);
            }
            i++;
            continue;
        }
        {
            uint32_t r;
            size_t l = cel_utf8_decode(s + i, n - i, &r);
            if (r == 0xfffd && l == 1) {
                buf_puts(b, "\\ufffd"); /* json.Marshal: invalid UTF-8 as U+FFFD */
            } else {
                buf_append(b, s + i, l);
            }
            i += l;
        }
    }
    buf_append(b, "\"", 1);
}

static void b64(struct buf *b, const unsigned char *s, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    buf_append(b, "\"", 1);
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)s[i + 1] << 8;
        if (i + 2 < n)
            v |= s[i + 2];
        char o[4] = {tab[v >> 18 & 63], tab[v >> 12 & 63], i + 1 < n ? tab[v >> 6 & 63] : '=',
                     i + 2 < n ? tab[v & 63] : '='};
        buf_append(b, o, 4);
    }
    buf_append(b, "\"", 1);
}

void cel_test_encode(struct buf *b, const struct cel_val *v)
{
    switch (v->k) {
    case CV_INT:
        buf_printf(b, "{\"int\":\"%" PRId64 "\"}", v->v.i);
        return;
    case CV_UINT:
        buf_printf(b, "{\"uint\":\"%" PRIu64 "\"}", v->v.u);
        return;
    case CV_DOUBLE:
        if (isnan(v->v.d))
            buf_puts(b, "{\"double\":\"NaN\"}");
        else if (isinf(v->v.d))
            buf_puts(b, v->v.d > 0 ? "{\"double\":\"Infinity\"}" : "{\"double\":\"-Infinity\"}");
        else if (v->v.d == 0 && signbit(v->v.d))
            buf_puts(b, "{\"double\":\"-0\"}");
        else
            buf_printf(b, "{\"double\":%.17g}", v->v.d);
        return;
    case CV_BOOL:
        buf_printf(b, "{\"bool\":%s}", v->v.b ? "true" : "false");
        return;
    case CV_STRING:
        buf_puts(b, "{\"string\":");
        json_str(b, v->v.s, v->n);
        buf_puts(b, "}");
        return;
    case CV_BYTES:
        buf_puts(b, "{\"bytes\":");
        b64(b, (const unsigned char *)v->v.s, v->n);
        buf_puts(b, "}");
        return;
    case CV_NULL:
        buf_puts(b, "{\"null\":null}");
        return;
    case CV_DURATION: {
        int64_t d = v->v.i;
        uint64_t ud = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
        uint64_t sec = ud / 1000000000u, ns = ud % 1000000000u;
        const char *sign = d < 0 ? "-" : "";
        if (ns == 0)
            buf_printf(b, "{\"duration\":\"%s%" PRIu64 "s\"}", sign, sec);
        else if (ns % 1000000 == 0)
            buf_printf(b, "{\"duration\":\"%s%" PRIu64 ".%03" PRIu64 "s\"}", sign, sec,
                       ns / 1000000);
        else if (ns % 1000 == 0)
            buf_printf(b, "{\"duration\":\"%s%" PRIu64 ".%06" PRIu64 "s\"}", sign, sec, ns / 1000);
        else
            buf_printf(b, "{\"duration\":\"%s%" PRIu64 ".%09" PRIu64 "s\"}", sign, sec, ns);
        return;
    }
    case CV_TIMESTAMP: {
        struct arena a = ARENA_INIT;
        struct ev ev;
        struct cel_val u = *v, s;
        memset(&ev, 0, sizeof(ev));
        ev.a = &a;
        u.x = 0;
        s = cel_time_to_string(&ev, &u);
        buf_puts(b, "{\"timestamp\":");
        if (s.k == CV_STRING)
            json_str(b, s.v.s, s.n);
        else
            buf_puts(b, "\"?\"");
        buf_puts(b, "}");
        arena_release(&a);
        return;
    }
    case CV_TYPE:
        buf_puts(b, "{\"type\":");
        json_str(b, v->v.s, strlen(v->v.s));
        buf_puts(b, "}");
        return;
    case CV_OPTIONAL:
        buf_puts(b, "{\"optional\":");
        if (v->v.o)
            cel_test_encode(b, v->v.o);
        else
            buf_puts(b, "null");
        buf_puts(b, "}");
        return;
    case CV_LIST:
        buf_puts(b, "{\"list\":[");
        for (uint32_t i = 0; i < v->v.l->n; i++) {
            if (i)
                buf_puts(b, ",");
            cel_test_encode(b, &v->v.l->v[i]);
        }
        buf_puts(b, "]}");
        return;
    case CV_MAP:
        buf_puts(b, "{\"map\":[");
        for (uint32_t i = 0; i < v->v.m->n; i++) {
            if (i)
                buf_puts(b, ",");
            buf_puts(b, "[");
            cel_test_encode(b, &v->v.m->keys[i]);
            buf_puts(b, ",");
            cel_test_encode(b, &v->v.m->vals[i]);
            buf_puts(b, "]");
        }
        buf_puts(b, "]}");
        return;
    default:
        buf_puts(b, "{\"opaque\":");
        json_str(b, cel_val_type_name(v), strlen(cel_val_type_name(v)));
        buf_puts(b, "}");
        return;
    }
}
