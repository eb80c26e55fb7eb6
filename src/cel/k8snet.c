/* k8snet.c - Kubernetes' ip and cidr libraries, on an address parser that follows Go's
 * net/netip (ParseAddr, ParsePrefix, Addr.String, the Is* predicates) with its error texts.
 * IPv4-mapped IPv6 addresses and zones are refused, as the library refuses them. */
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "cel/cost.h"
#include "cel/eval.h"
#include "cel/lib.h"
#include "cel/semver.h"

#define NSO cel_err_static("no such overload")

struct addr {
    uint8_t a[16];
    bool v4;
    bool zone; /* parsed with a zone */
};

static char *quoted(struct buf *b, const char *s, size_t n)
{
    cel_go_quote(b, s, n);
    return b->data;
}

/* ParseAddr's error: ParseAddr("in"): msg [(at "rest")] */
static void addr_err(struct buf *e, const char *in, size_t n, const char *msg, const char *at,
                     size_t atn)
{
    buf_puts(e, "ParseAddr(");
    quoted(e, in, n);
    buf_printf(e, "): %s", msg);
    if (at && atn) {
        buf_puts(e, " (at ");
        quoted(e, at, atn);
        buf_puts(e, ")");
    }
}

static bool ipv4_fields(const char *in, size_t inn, size_t off, size_t end, uint8_t *f,
                        struct buf *e)
{
    int val = 0, pos = 0, dig = 0;
    const char *s = in + off;
    size_t n = end - off;

    for (size_t i = 0; i < n; i++) {
        if (s[i] >= '0' && s[i] <= '9') {
            if (dig == 1 && val == 0) {
                addr_err(e, in, inn, "IPv4 field has octet with leading zero", NULL, 0);
                return false;
            }
            val = val * 10 + (s[i] - '0');
            dig++;
            if (val > 255) {
                addr_err(e, in, inn, "IPv4 field has value >255", NULL, 0);
                return false;
            }
        } else if (s[i] == '.') {
            if (i == 0 || i == n - 1 || s[i - 1] == '.') {
                addr_err(e, in, inn, "IPv4 field must have at least one digit", s + i, n - i);
                return false;
            }
            if (pos == 3) {
                addr_err(e, in, inn, "IPv4 address too long", NULL, 0);
                return false;
            }
            f[pos++] = (uint8_t)val;
            val = 0;
            dig = 0;
        } else {
            addr_err(e, in, inn, "unexpected character", s + i, n - i);
            return false;
        }
    }
    if (pos < 3) {
        addr_err(e, in, inn, "IPv4 address too short", NULL, 0);
        return false;
    }
    f[3] = (uint8_t)val;
    return true;
}

static bool parse_ipv6(const char *in, size_t inn, struct addr *out, struct buf *e)
{
    const char *s = in;
    size_t n = inn, zl = 0;
    const char *pct = memchr(in, '%', inn);
    int ellipsis = -1, i = 0;

    memset(out, 0, sizeof(*out));
    if (pct) {
        n = (size_t)(pct - in);
        zl = inn - n - 1;
        if (zl == 0) {
            addr_err(e, in, inn, "zone must be a non-empty string", NULL, 0);
            return false;
        }
        out->zone = true;
    }
    if (n >= 2 && s[0] == ':' && s[1] == ':') {
        ellipsis = 0;
        s += 2;
        n -= 2;
        if (n == 0)
            return true;
    }
    while (i < 16) {
        size_t off = 0;
        uint32_t acc = 0;
        for (; off < n; off++) {
            char c = s[off];
            if (c >= '0' && c <= '9')
                acc = (acc << 4) + (uint32_t)(c - '0');
            else if (c >= 'a' && c <= 'f')
                acc = (acc << 4) + (uint32_t)(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                acc = (acc << 4) + (uint32_t)(c - 'A' + 10);
            else
                break;
            if (off > 3) {
                addr_err(e, in, inn, "each group must have 4 or less digits", s, n);
                return false;
            }
            if (acc > 0xffff) {
                addr_err(e, in, inn, "IPv6 field has value >=2^16", s, n);
                return false;
            }
        }
        if (off == 0) {
            addr_err(e, in, inn, "each colon-separated field must have at least one digit", s, n);
            return false;
        }
        if (off < n && s[off] == '.') {
            size_t end = inn;
            if (ellipsis < 0 && i != 12) {
                addr_err(e, in, inn,
                         "embedded IPv4 address must replace the final 2 fields of the address", s,
                         n);
                return false;
            }
            if (i + 4 > 16) {
                addr_err(e, in, inn,
                         "too many hex fields to fit an embedded IPv4 at the end of the address", s,
                         n);
                return false;
            }
            if (zl)
                end -= zl + 1;
            if (!ipv4_fields(in, inn, end - n, end, out->a + i, e))
                return false;
            n = 0;
            i += 4;
            break;
        }
        out->a[i] = (uint8_t)(acc >> 8);
        out->a[i + 1] = (uint8_t)acc;
        i += 2;
        s += off;
        n -= off;
        if (n == 0)
            break;
        if (s[0] != ':') {
            addr_err(e, in, inn, "unexpected character, want colon", s, n);
            return false;
        } else if (n == 1) {
            addr_err(e, in, inn, "colon must be followed by more characters", s, n);
            return false;
        }
        s++;
        n--;
        if (s[0] == ':') {
            if (ellipsis >= 0) {
                addr_err(e, in, inn, "multiple :: in address", s, n);
                return false;
            }
            ellipsis = i;
            s++;
            n--;
            if (n == 0)
                break;
        }
    }
    if (n != 0) {
        addr_err(e, in, inn, "trailing garbage after address", s, n);
        return false;
    }
    if (i < 16) {
        int k;
        if (ellipsis < 0) {
            addr_err(e, in, inn, "address string too short", NULL, 0);
            return false;
        }
        k = 16 - i;
        for (int j = i - 1; j >= ellipsis; j--)
            out->a[j + k] = out->a[j];
        memset(out->a + ellipsis, 0, (size_t)k);
    } else if (ellipsis >= 0) {
        addr_err(e, in, inn, "the :: must expand to at least one field of zeros", NULL, 0);
        return false;
    }
    return true;
}

/* netip.ParseAddr */
static bool parse_addr(const char *s, size_t n, struct addr *out, struct buf *e)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '.') {
            out->v4 = true;
            return ipv4_fields(s, n, 0, n, out->a + 12, e);
        }
        if (s[i] == ':')
            return parse_ipv6(s, n, out, e);
        if (s[i] == '%') {
            addr_err(e, s, n, "missing IPv6 address", NULL, 0);
            return false;
        }
    }
    addr_err(e, s, n, "unable to parse IP", NULL, 0);
    return false;
}

static bool is_4in6(const struct addr *a)
{
    static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return !a->v4 && !memcmp(a->a, pre, 12);
}

/* Addr.String */
static void addr_string(struct buf *b, const struct addr *a)
{
    if (a->v4) {
        buf_printf(b, "%u.%u.%u.%u", a->a[12], a->a[13], a->a[14], a->a[15]);
        return;
    }
    if (is_4in6(a)) {
        buf_printf(b, "::ffff:%u.%u.%u.%u", a->a[12], a->a[13], a->a[14], a->a[15]);
        return;
    }
    {
        int zb = 255, ze = 255;
        for (int i = 0; i < 8; i++) {
            int j = i;
            while (j < 8 && a->a[2 * j] == 0 && a->a[2 * j + 1] == 0)
                j++;
            if (j - i >= 2 && j - i > ze - zb) {
                zb = i;
                ze = j;
            }
        }
        for (int i = 0; i < 8; i++) {
            if (i == zb) {
                buf_puts(b, "::");
                i = ze;
                if (i >= 8)
                    break;
            } else if (i > 0) {
                buf_puts(b, ":");
            }
            buf_printf(b, "%x", (unsigned)(a->a[2 * i] << 8 | a->a[2 * i + 1]));
        }
    }
}

/* parseIPAddr of the library: refuses zones and IPv4-mapped IPv6 */
static bool lib_parse_ip(struct ev *ev, const char *s, size_t n, struct addr *out,
                         struct cel_val *err)
{
    struct buf e = BUF_INIT(0), m = BUF_INIT(0);
    if (!parse_addr(s, n, out, &e)) {
        buf_puts(&m, "IP Address ");
        quoted(&m, s, n);
        buf_printf(&m, " parse error during conversion from string: %s", e.data);
        *err = cel_err(ev->a, "%s", m.data);
        buf_release(&e);
        buf_release(&m);
        return false;
    }
    buf_release(&e);
    if (out->zone) {
        buf_puts(&m, "IP address ");
        quoted(&m, s, n);
        buf_puts(&m, " with zone value is not allowed");
        *err = cel_err(ev->a, "%s", m.data);
        buf_release(&m);
        return false;
    }
    if (is_4in6(out)) {
        buf_puts(&m, "IPv4-mapped IPv6 address ");
        quoted(&m, s, n);
        buf_puts(&m, " is not allowed");
        *err = cel_err(ev->a, "%s", m.data);
        buf_release(&m);
        return false;
    }
    return true;
}

static struct cel_val ip_val(struct ev *ev, const struct addr *a, int prefix, bool cidr)
{
    struct cel_ipaddr *p = arena_alloc(ev->a, sizeof(*p));
    struct cel_val v = {.k = cidr ? CV_CIDR : CV_IP};
    if (!p)
        return cel_err_static("out of memory");
    memcpy(p->a, a->a, 16);
    p->v4 = a->v4;
    p->prefix = prefix;
    v.v.ip = p;
    return v;
}

static void to_addr(const struct cel_ipaddr *p, struct addr *a)
{
    memset(a, 0, sizeof(*a));
    memcpy(a->a, p->a, 16);
    a->v4 = p->v4;
}

struct cel_val cel_ip_to_string(struct ev *ev, const struct cel_val *v)
{
    struct buf b = BUF_INIT(0);
    struct addr a;
    char *s;
    struct cel_val r;

    to_addr(v->v.ip, &a);
    addr_string(&b, &a);
    if (v->k == CV_CIDR)
        buf_printf(&b, "/%d", v->v.ip->prefix);
    s = cel_ev_strdup(ev, b.data, b.len);
    r = s ? cel_str(s, (uint32_t)b.len) : cel_err_static("out of memory");
    buf_release(&b);
    return r;
}

static struct cel_val f_ip(struct ev *ev, const struct cel_val *a, int n)
{
    struct addr ad;
    struct cel_val err;
    (void)n;
    if (!lib_parse_ip(ev, a[0].v.s, a[0].n, &ad, &err))
        return err;
    return ip_val(ev, &ad, 0, false);
}

static struct cel_val f_is_ip(struct ev *ev, const struct cel_val *a, int n)
{
    struct addr ad;
    struct cel_val err;
    (void)n;
    return cel_bool(lib_parse_ip(ev, a[0].v.s, a[0].n, &ad, &err));
}

static struct cel_val f_ip_is_canonical(struct ev *ev, const struct cel_val *a, int n)
{
    struct addr ad;
    struct cel_val err;
    struct buf b = BUF_INIT(0);
    bool eq;
    (void)n;
    if (!lib_parse_ip(ev, a[0].v.s, a[0].n, &ad, &err))
        return err;
    addr_string(&b, &ad);
    eq = b.len == a[0].n && !memcmp(b.data, a[0].v.s, b.len);
    buf_release(&b);
    return cel_bool(eq);
}

static struct cel_val f_ip_string(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return cel_ip_to_string(ev, &a[0]);
}

static struct cel_val f_family(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    return cel_int(a[0].v.ip->v4 ? 4 : 6);
}

static bool zero16(const uint8_t *a)
{
    for (int i = 0; i < 16; i++)
        if (a[i])
            return false;
    return true;
}

static bool ip_loopback(const struct addr *a)
{
    if (a->v4)
        return a->a[12] == 127;
    {
        static const uint8_t one[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        return !memcmp(a->a, one, 16);
    }
}

static bool ip_multicast(const struct addr *a)
{
    return a->v4 ? (a->a[12] & 0xf0) == 0xe0 : a->a[0] == 0xff;
}

static bool ip_ll_unicast(const struct addr *a)
{
    return a->v4 ? (a->a[12] == 169 && a->a[13] == 254)
                 : ((a->a[0] << 8 | a->a[1]) & 0xffc0) == 0xfe80;
}

static bool ip_ll_multicast(const struct addr *a)
{
    return a->v4 ? (a->a[12] == 224 && a->a[13] == 0 && a->a[14] == 0)
                 : ((a->a[0] << 8 | a->a[1]) & 0xff0f) == 0xff02;
}

static bool ip_unspecified(const struct addr *a)
{
    return a->v4 ? !(a->a[12] | a->a[13] | a->a[14] | a->a[15]) : zero16(a->a);
}

static bool ip_global_unicast(const struct addr *a)
{
    if (a->v4 && (ip_unspecified(a) ||
                  (a->a[12] == 255 && a->a[13] == 255 && a->a[14] == 255 && a->a[15] == 255)))
        return false;
    return !(!a->v4 && zero16(a->a)) && !ip_loopback(a) && !ip_multicast(a) && !ip_ll_unicast(a);
}

#define IP_PRED(fname, pred)                                                                       \
    static struct cel_val fname(struct ev *ev, const struct cel_val *a, int n)                     \
    {                                                                                              \
        struct addr ad;                                                                            \
        (void)ev;                                                                                  \
        (void)n;                                                                                   \
        to_addr(a[0].v.ip, &ad);                                                                   \
        return cel_bool(pred(&ad));                                                                \
    }
IP_PRED(f_is_unspecified, ip_unspecified)
IP_PRED(f_is_loopback, ip_loopback)
IP_PRED(f_is_ll_multicast, ip_ll_multicast)
IP_PRED(f_is_ll_unicast, ip_ll_unicast)
IP_PRED(f_is_global_unicast, ip_global_unicast)

/* ---- cidr ---- */

/* netip.ParsePrefix then the library's 4-in-6 refusal; *err is the message inside
 * "network address parse error during conversion from string: %v" */
static bool parse_prefix(const char *s, size_t n, struct addr *a, int *bits, struct buf *e)
{
    const char *slash = NULL;
    struct buf ae = BUF_INIT(0);
    size_t bl;
    const char *bs;
    long v = 0;

    for (size_t i = 0; i < n; i++)
        if (s[i] == '/')
            slash = s + i;
    buf_puts(e, "network address parse error during conversion from string: netip.ParsePrefix(");
    quoted(e, s, n);
    buf_puts(e, "): ");
    if (!slash) {
        buf_puts(e, "no '/'");
        return false;
    }
    if (!parse_addr(s, (size_t)(slash - s), a, &ae)) {
        buf_puts(e, ae.data);
        buf_release(&ae);
        return false;
    }
    buf_release(&ae);
    if (!a->v4 && a->zone) {
        buf_puts(e, "IPv6 zones cannot be present in a prefix");
        return false;
    }
    bs = slash + 1;
    bl = n - (size_t)(bs - s);
    if (bl > 1 && (bs[0] < '1' || bs[0] > '9'))
        goto badbits;
    if (bl == 0)
        goto badbits;
    for (size_t i = 0; i < bl; i++) {
        if (bs[i] < '0' || bs[i] > '9')
            goto badbits;
        v = v * 10 + (bs[i] - '0');
        if (v > 1000)
            v = 1000;
    }
    if (v > (a->v4 ? 32 : 128)) {
        buf_puts(e, "prefix length out of range");
        return false;
    }
    *bits = (int)v;
    if (is_4in6(a)) {
        buf_reset(e);
        buf_puts(e, "IPv4-mapped IPv6 address ");
        quoted(e, s, n);
        buf_puts(e, " is not allowed");
        return false;
    }
    return true;
badbits:
    buf_puts(e, "bad bits after slash: ");
    quoted(e, bs, bl);
    return false;
}

static struct cel_val lib_parse_cidr(struct ev *ev, const char *s, size_t n)
{
    struct buf e = BUF_INIT(0);
    struct addr a;
    int bits;
    struct cel_val r;

    if (!parse_prefix(s, n, &a, &bits, &e)) {
        r = cel_err(ev->a, "network address parse error during conversion from string: %s", e.data);
        buf_release(&e);
        return r;
    }
    buf_release(&e);
    return ip_val(ev, &a, bits, true);
}

static struct cel_val f_cidr(struct ev *ev, const struct cel_val *a, int n)
{
    (void)n;
    return lib_parse_cidr(ev, a[0].v.s, a[0].n);
}

static struct cel_val f_is_cidr(struct ev *ev, const struct cel_val *a, int n)
{
    struct buf e = BUF_INIT(0);
    struct addr ad;
    int bits;
    bool ok = parse_prefix(a[0].v.s, a[0].n, &ad, &bits, &e);
    (void)ev;
    (void)n;
    buf_release(&e);
    return cel_bool(ok);
}

static void mask(struct addr *a, int bits)
{
    int start = a->v4 ? 96 : 0, total = start + bits;
    for (int i = 0; i < 16; i++) {
        int lo = i * 8;
        if (lo >= total)
            a->a[i] = 0;
        else if (lo + 8 > total)
            a->a[i] &= (uint8_t)(0xff << (8 - (total - lo)));
    }
}

static bool prefix_contains(const struct cel_ipaddr *p, const struct addr *ip)
{
    struct addr x, y;
    if (p->v4 != ip->v4)
        return false;
    to_addr(p, &x);
    y = *ip;
    mask(&x, p->prefix);
    mask(&y, p->prefix);
    return !memcmp(x.a, y.a, 16);
}

static struct cel_val f_contains_ip(struct ev *ev, const struct cel_val *a, int n)
{
    struct addr ip;
    (void)n;
    if (a[1].k == CV_STRING) {
        struct cel_val err;
        if (!lib_parse_ip(ev, a[1].v.s, a[1].n, &ip, &err))
            return NSO; /* cidrContainsIP reports the CIDR argument's "no such overload" */
    } else {
        to_addr(a[1].v.ip, &ip);
    }
    return cel_bool(prefix_contains(a[0].v.ip, &ip));
}

static struct cel_val f_contains_cidr(struct ev *ev, const struct cel_val *a, int n)
{
    const struct cel_ipaddr *p = a[0].v.ip, *o;
    struct cel_val other = a[1];
    int minb;
    struct addr x, y;
    (void)n;
    if (other.k == CV_STRING) {
        other = lib_parse_cidr(ev, a[1].v.s, a[1].n);
        if (other.k == CV_ERROR)
            return other;
    }
    o = other.v.ip;
    /* Overlaps && p.Bits() <= o.Bits() */
    if (p->v4 != o->v4)
        return cel_bool(false);
    minb = p->prefix < o->prefix ? p->prefix : o->prefix;
    to_addr(p, &x);
    to_addr(o, &y);
    mask(&x, minb);
    mask(&y, minb);
    return cel_bool(!memcmp(x.a, y.a, 16) && p->prefix <= o->prefix);
}

static struct cel_val f_cidr_ip(struct ev *ev, const struct cel_val *a, int n)
{
    struct addr ad;
    (void)n;
    to_addr(a[0].v.ip, &ad);
    return ip_val(ev, &ad, 0, false);
}

static struct cel_val f_prefix_length(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    return cel_int(a[0].v.ip->prefix);
}

static struct cel_val f_masked(struct ev *ev, const struct cel_val *a, int n)
{
    struct addr ad;
    (void)n;
    to_addr(a[0].v.ip, &ad);
    mask(&ad, a[0].v.ip->prefix);
    return ip_val(ev, &ad, a[0].v.ip->prefix, true);
}

/* ---- url: Go's net/url (Parse, ParseRequestURI, String, Hostname, Port, EscapedPath, Query)
 * as of the Go release the oracle is built with (strict colons in http(s) hosts) ---- */

enum enc {
    E_PATH = 1,
    E_PATH_SEGMENT = 2,
    E_HOST = 4,
    E_ZONE = 8,
    E_USER_PASSWORD = 16,
    E_QUERY_COMPONENT = 32,
    E_FRAGMENT = 64,
};

static bool url_should_escape(unsigned char c, int mode)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return false;
    if (mode == E_HOST || mode == E_ZONE) {
        if (c && strchr("!$&'()*+,;=:[]<>\"", c))
            return false;
    }
    switch (c) {
    case '-':
    case '_':
    case '.':
    case '~':
        return false;
    case '$':
    case '&':
    case '+':
    case ',':
    case '/':
    case ':':
    case ';':
    case '=':
    case '?':
    case '@':
        switch (mode) {
        case E_PATH:
            return c == '?';
        case E_PATH_SEGMENT:
            return c == '/' || c == ';' || c == ',' || c == '?';
        case E_USER_PASSWORD:
            return c == '@' || c == '/' || c == '?' || c == ':';
        case E_QUERY_COMPONENT:
            return true;
        case E_FRAGMENT:
            return false;
        }
        break;
    }
    if (mode == E_FRAGMENT && (c == '!' || c == '(' || c == ')' || c == '*'))
        return false;
    return true;
}

static bool url_ishex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static unsigned char url_unhex(char c)
{
    unsigned char u = (unsigned char)c;
    return (unsigned char)(9 * (u >> 6) + (u & 15));
}

struct ustr {
    const char *s;
    size_t n;
};

static void escape_err(struct buf *e, const char *s, size_t n)
{
    buf_puts(e, "invalid URL escape ");
    cel_go_quote(e, s, n);
}

/* unescape: out gets the unescaped bytes; false with e set on an error */
static bool url_unescape(const char *s, size_t n, int mode, struct buf *out, struct buf *e)
{
    for (size_t i = 0; i < n;) {
        if (s[i] == '%') {
            if (i + 2 >= n || !url_ishex(s[i + 1]) || !url_ishex(s[i + 2])) {
                escape_err(e, s + i, n - i > 3 ? 3 : n - i);
                return false;
            }
            if (mode == E_HOST && url_unhex(s[i + 1]) < 8 && memcmp(s + i, "%25", 3)) {
                escape_err(e, s + i, 3);
                return false;
            }
            if (mode == E_ZONE) {
                unsigned char v = (unsigned char)(url_unhex(s[i + 1]) << 4 | url_unhex(s[i + 2]));
                if (memcmp(s + i, "%25", 3) && v != ' ' && url_should_escape(v, E_HOST)) {
                    escape_err(e, s + i, 3);
                    return false;
                }
            }
            i += 3;
        } else {
            if ((mode == E_HOST || mode == E_ZONE) && (unsigned char)s[i] < 0x80 &&
                url_should_escape((unsigned char)s[i], mode)) {
                buf_puts(e, "invalid character ");
                cel_go_quote(e, s + i, 1);
                buf_puts(e, " in host name");
                return false;
            }
            i++;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            char c = (char)(url_unhex(s[i + 1]) << 4 | url_unhex(s[i + 2]));
            buf_append(out, &c, 1);
            i += 2;
        } else if (s[i] == '+') {
            buf_append(out, mode == E_QUERY_COMPONENT ? " " : "+", 1);
        } else {
            buf_append(out, s + i, 1);
        }
    }
    return true;
}

static void url_escape(const char *s, size_t n, int mode, struct buf *out)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' && mode == E_QUERY_COMPONENT) {
            buf_append(out, "+", 1);
        } else if (url_should_escape(c, mode)) {
            char t[3] = {'%', hex[c >> 4], hex[c & 15]};
            buf_append(out, t, 3);
        } else {
            buf_append(out, s + i, 1);
        }
    }
}

static bool ustr_eq(struct ustr a, const char *b, size_t bn)
{
    return a.n == bn && (!bn || !memcmp(a.s, b, bn));
}

/* a URL being built: every field in its own heap buffer */
struct gurl {
    struct buf scheme, opaque, username, password, host, path, raw_path, raw_query, fragment,
        raw_fragment;
    bool has_user, password_set, force_query, omit_host;
};

static void gurl_free(struct gurl *u)
{
    struct buf *f[] = {&u->scheme, &u->opaque,   &u->username,  &u->password, &u->host,
                       &u->path,   &u->raw_path, &u->raw_query, &u->fragment, &u->raw_fragment};
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
        buf_release(f[i]);
}

static struct ustr B(const struct buf *b) {
    struct ustr r = {b->data ? b->data : "", b->len};
    return r;
}

static bool
valid_optional_port(const char *p, size_t n)
{
    if (n == 0)
        return true;
    if (p[0] != ':')
        return false;
    for (size_t i = 1; i < n; i++)
        if (p[i] < '0' || p[i] > '9')
            return false;
    return true;
}

static const char *mem_last(const char *s, size_t n, char c)
{
    for (size_t i = n; i > 0; i--)
        if (s[i - 1] == c)
            return s + i - 1;
    return NULL;
}

static bool parse_host(const char *scheme, const char *h, size_t n, struct buf *out, struct buf *e)
{
    const char *ob = mem_last(h, n, '[');
    if (ob && ob > h) {
        buf_puts(e, "invalid IP-literal");
        return false;
    }
    if (ob == h) {
        const char *cb = mem_last(h, n, ']');
        struct buf port = BUF_INIT(0), hostb = BUF_INIT(0);
        struct addr ad;
        if (!cb) {
            buf_puts(e, "missing ']' in host");
            return false;
        }
        size_t cpn = n - (size_t)(cb + 1 - h);
        if (!valid_optional_port(cb + 1, cpn)) {
            buf_puts(e, "invalid port ");
            cel_go_quote(e, cb + 1, cpn);
            buf_puts(e, " after host");
            return false;
        }
        if (!url_unescape(cb + 1, cpn, E_HOST, &port, e))
            goto fail;
        const char *hn = h + 1;
        size_t hnn = (size_t)(cb - hn), z;
        for (z = 0; z + 3 <= hnn && memcmp(hn + z, "%25", 3); z++)
            ;
        if (z + 3 <= hnn) {
            if (!url_unescape(hn, z, E_HOST, &hostb, e) ||
                !url_unescape(hn + z, hnn - z, E_ZONE, &hostb, e))
                goto fail;
        } else if (!url_unescape(hn, hnn, E_HOST, &hostb, e)) {
            goto fail;
        }
        {
            struct buf ae = BUF_INIT(0);
            struct ustr hs = B(&hostb);
            if (!parse_addr(hs.s, hs.n, &ad, &ae)) {
                buf_printf(e, "invalid host: %s", ae.data ? ae.data : "");
                buf_release(&ae);
                goto fail;
            }
            buf_release(&ae);
        }
        if (ad.v4) {
            buf_puts(e, "invalid IP-literal");
            goto fail;
        }
        buf_append(out, "[", 1);
        buf_append(out, B(&hostb).s, hostb.len);
        buf_append(out, "]", 1);
        buf_append(out, B(&port).s, port.len);
        buf_release(&port);
        buf_release(&hostb);
        return true;
    fail:
        buf_release(&port);
        buf_release(&hostb);
        return false;
    }
    const char *c = memchr(h, ':', n);
    if (c) {
        const char *lc = mem_last(h, n, ':');
        if (lc != c && strcmp(scheme, "http") && strcmp(scheme, "https"))
            c = lc;
        size_t cpn = n - (size_t)(c - h);
        if (!valid_optional_port(c, cpn)) {
            buf_puts(e, "invalid port ");
            cel_go_quote(e, c, cpn);
            buf_puts(e, " after host");
            return false;
        }
    }
    return url_unescape(h, n, E_HOST, out, e);
}

static bool valid_userinfo(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80)
            return false; /* any non-ASCII rune */
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
            continue;
        if (!c || !strchr("-._:~!$&'()*+,;=%@", c))
            return false;
    }
    return true;
}

static bool parse_authority(struct gurl *u, const char *a, size_t n, struct buf *e)
{
    const char *at = mem_last(a, n, '@');
    const char *hs = at ? at + 1 : a;
    if (!parse_host(B(&u->scheme).s, hs, n - (size_t)(hs - a), &u->host, e))
        return false;
    if (!at)
        return true;
    size_t un = (size_t)(at - a);
    if (!valid_userinfo(a, un)) {
        buf_puts(e, "net/url: invalid userinfo");
        return false;
    }
    const char *colon = memchr(a, ':', un);
    u->has_user = true;
    if (!colon)
        return url_unescape(a, un, E_USER_PASSWORD, &u->username, e);
    u->password_set = true;
    return url_unescape(a, (size_t)(colon - a), E_USER_PASSWORD, &u->username, e) &&
           url_unescape(colon + 1, un - (size_t)(colon + 1 - a), E_USER_PASSWORD, &u->password, e);
}

static bool set_path(struct gurl *u, const char *p, size_t n, struct buf *e)
{
    struct buf esc = BUF_INIT(0);
    if (!url_unescape(p, n, E_PATH, &u->path, e))
        return false;
    url_escape(B(&u->path).s, u->path.len, E_PATH, &esc);
    if (!ustr_eq(B(&esc), p, n))
        buf_append(&u->raw_path, p, n);
    buf_release(&esc);
    return true;
}

static bool set_fragment(struct gurl *u, const char *f, size_t n, struct buf *e)
{
    struct buf esc = BUF_INIT(0);
    if (!url_unescape(f, n, E_FRAGMENT, &u->fragment, e))
        return false;
    url_escape(B(&u->fragment).s, u->fragment.len, E_FRAGMENT, &esc);
    if (!ustr_eq(B(&esc), f, n))
        buf_append(&u->raw_fragment, f, n);
    buf_release(&esc);
    return true;
}

static bool url_parse0(struct gurl *u, const char *raw, size_t n, bool via_request, struct buf *e)
{
    const char *rest;
    size_t rn;

    for (size_t i = 0; i < n; i++)
        if ((unsigned char)raw[i] < ' ' || raw[i] == 0x7f) {
            buf_puts(e, "net/url: invalid control character in URL");
            return false;
        }
    if (n == 0 && via_request) {
        buf_puts(e, "empty url");
        return false;
    }
    if (n == 1 && raw[0] == '*') {
        buf_append(&u->path, "*", 1);
        return true;
    }
    /* getScheme */
    rest = raw;
    rn = n;
    for (size_t i = 0; i < n; i++) {
        char c = raw[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
            continue;
        if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') {
            if (i == 0)
                break;
            continue;
        }
        if (c == ':') {
            if (i == 0) {
                buf_puts(e, "missing protocol scheme");
                return false;
            }
            for (size_t k = 0; k < i; k++) {
                char l = raw[k] >= 'A' && raw[k] <= 'Z' ? (char)(raw[k] + 32) : raw[k];
                buf_append(&u->scheme, &l, 1);
            }
            rest = raw + i + 1;
            rn = n - i - 1;
        }
        break;
    }
    {
        const char *q = memchr(rest, '?', rn);
        if (q && q == rest + rn - 1) {
            u->force_query = true;
            rn--;
        } else if (q) {
            buf_append(&u->raw_query, q + 1, rn - (size_t)(q + 1 - rest));
            rn = (size_t)(q - rest);
        }
    }
    if (rn == 0 || rest[0] != '/') {
        if (u->scheme.len) {
            buf_append(&u->opaque, rest, rn);
            return true;
        }
        if (via_request) {
            buf_puts(e, "invalid URI for request");
            return false;
        }
        const char *sl = memchr(rest, '/', rn);
        size_t segn = sl ? (size_t)(sl - rest) : rn;
        if (memchr(rest, ':', segn)) {
            buf_puts(e, "first path segment in URL cannot contain colon");
            return false;
        }
    }
    bool dslash = rn >= 2 && rest[0] == '/' && rest[1] == '/';
    bool tslash = rn >= 3 && dslash && rest[2] == '/';
    if ((u->scheme.len || (!via_request && !tslash)) && dslash) {
        const char *auth = rest + 2;
        size_t an = rn - 2;
        const char *sl = memchr(auth, '/', an);
        if (sl) {
            rest = sl;
            rn = an - (size_t)(sl - auth);
            an = (size_t)(sl - auth);
        } else {
            rest = auth + an;
            rn = 0;
        }
        if (!parse_authority(u, auth, an, e))
            return false;
    } else if (u->scheme.len && rn && rest[0] == '/') {
        u->omit_host = true;
    }
    return set_path(u, rest, rn, e);
}

static void url_err(struct buf *out, const char *s, size_t n, const struct buf *e)
{
    buf_puts(out, "parse ");
    cel_go_quote(out, s, n);
    buf_puts(out, ": ");
    buf_append(out, B(e).s, e->len);
}

/* url.ParseRequestURI(s) == nil; otherwise err gets its message */
bool cel_url_parse_request_uri_ok(const char *s, size_t n, struct buf *err)
{
    struct gurl u;
    struct buf e = BUF_INIT(0);
    memset(&u, 0, sizeof(u));
    bool ok = url_parse0(&u, s, n, true, &e);
    if (!ok)
        url_err(err, s, n, &e);
    buf_release(&e);
    gurl_free(&u);
    return ok;
}

/* url.Parse */
static bool url_parse(struct gurl *u, const char *s, size_t n, struct buf *err)
{
    struct buf e = BUF_INIT(0);
    const char *hash = memchr(s, '#', n);
    size_t un = hash ? (size_t)(hash - s) : n;
    bool ok = url_parse0(u, s, un, false, &e);
    if (!ok) {
        url_err(err, s, un, &e);
    } else if (hash && hash + 1 < s + n) {
        ok = set_fragment(u, hash + 1, n - un - 1, &e);
        if (!ok)
            url_err(err, s, n, &e);
    }
    buf_release(&e);
    return ok;
}

static bool url_valid_encoded(struct ustr s, int mode)
{
    for (size_t i = 0; i < s.n; i++) {
        unsigned char c = (unsigned char)s.s[i];
        if (c && strchr("!$&'()*+,;=:@[]%", c))
            continue;
        if (url_should_escape(c, mode))
            return false;
    }
    return true;
}

static struct ustr S(const struct cel_url_str *x) {
    struct ustr r = {x->s, x->n};
    return r;
}

/* EscapedPath / EscapedFragment */
static void
url_escaped(struct ustr raw, struct ustr dec, int mode, struct buf *out)
{
    if (raw.n && url_valid_encoded(raw, mode)) {
        struct buf p = BUF_INIT(0), e = BUF_INIT(0);
        bool same = url_unescape(raw.s, raw.n, mode, &p, &e) && ustr_eq(dec, B(&p).s, p.len);
        buf_release(&p);
        buf_release(&e);
        if (same) {
            buf_append(out, raw.s, raw.n);
            return;
        }
    }
    if (mode == E_PATH && dec.n == 1 && dec.s[0] == '*') {
        buf_append(out, "*", 1);
        return;
    }
    url_escape(dec.s, dec.n, mode, out);
}

static void url_string(const struct cel_url *u, struct buf *b)
{
    if (u->scheme.n) {
        buf_append(b, u->scheme.s, u->scheme.n);
        buf_append(b, ":", 1);
    }
    if (u->opaque.n) {
        buf_append(b, u->opaque.s, u->opaque.n);
    } else {
        if (u->scheme.n || u->host.n || u->has_user) {
            if (!(u->omit_host && !u->host.n && !u->has_user)) {
                if (u->host.n || u->path.n || u->has_user)
                    buf_append(b, "//", 2);
                if (u->has_user) {
                    url_escape(u->username.s, u->username.n, E_USER_PASSWORD, b);
                    if (u->password_set) {
                        buf_append(b, ":", 1);
                        url_escape(u->password.s, u->password.n, E_USER_PASSWORD, b);
                    }
                    buf_append(b, "@", 1);
                }
                if (u->host.n)
                    url_escape(u->host.s, u->host.n, E_HOST, b);
            }
        }
        struct buf p = BUF_INIT(0);
        url_escaped(S(&u->raw_path), S(&u->path), E_PATH, &p);
        struct ustr ps = B(&p);
        if (ps.n && ps.s[0] != '/' && u->host.n)
            buf_append(b, "/", 1);
        if (b->len == 0) {
            const char *sl = memchr(ps.s, '/', ps.n);
            if (memchr(ps.s, ':', sl ? (size_t)(sl - ps.s) : ps.n))
                buf_append(b, "./", 2);
        }
        buf_append(b, ps.s, ps.n);
        buf_release(&p);
    }
    if (u->force_query || u->raw_query.n) {
        buf_append(b, "?", 1);
        buf_append(b, u->raw_query.s, u->raw_query.n);
    }
    if (u->fragment.n) {
        buf_append(b, "#", 1);
        url_escaped(S(&u->raw_fragment), S(&u->fragment), E_FRAGMENT, b);
    }
}

static bool url_field(struct ev *ev, struct cel_url_str *f, const struct buf *b)
{
    f->n = (uint32_t)b->len;
    f->s = cel_ev_strdup(ev, b->data ? b->data : "", b->len);
    return f->s != NULL;
}

static struct cel_val f_url(struct ev *ev, const struct cel_val *a, int n)
{
    struct buf err = BUF_INIT(0);
    struct gurl g;
    struct cel_val r;
    (void)n;

    memset(&g, 0, sizeof(g));
    if (!cel_url_parse_request_uri_ok(a[0].v.s, a[0].n, &err) ||
        !url_parse(&g, a[0].v.s, a[0].n, &err)) {
        r = cel_err(ev->a, "URL parse error during conversion from string: %s", B(&err).s);
        buf_release(&err);
        gurl_free(&g);
        return r;
    }
    struct cel_url *u = arena_alloc(ev->a, sizeof(*u));
    if (!u || !url_field(ev, &u->scheme, &g.scheme) || !url_field(ev, &u->opaque, &g.opaque) ||
        !url_field(ev, &u->username, &g.username) || !url_field(ev, &u->password, &g.password) ||
        !url_field(ev, &u->host, &g.host) || !url_field(ev, &u->path, &g.path) ||
        !url_field(ev, &u->raw_path, &g.raw_path) || !url_field(ev, &u->raw_query, &g.raw_query) ||
        !url_field(ev, &u->fragment, &g.fragment) ||
        !url_field(ev, &u->raw_fragment, &g.raw_fragment)) {
        gurl_free(&g);
        return cel_err_static("out of memory");
    }
    u->has_user = g.has_user;
    u->password_set = g.password_set;
    u->force_query = g.force_query;
    u->omit_host = g.omit_host;
    gurl_free(&g);
    {
        struct buf sb = BUF_INIT(0);
        url_string(u, &sb);
        bool ok = url_field(ev, &u->str, &sb);
        buf_release(&sb);
        if (!ok)
            return cel_err_static("out of memory");
    }
    r.k = CV_URL;
    r.x = 0;
    r.n = 0;
    r.v.url = u;
    return r;
}

static struct cel_val f_is_url(struct ev *ev, const struct cel_val *a, int n)
{
    struct buf err = BUF_INIT(0);
    bool ok = cel_url_parse_request_uri_ok(a[0].v.s, a[0].n, &err);
    (void)ev;
    (void)n;
    buf_release(&err);
    return cel_bool(ok);
}

static struct cel_val url_ret(struct ev *ev, const char *s, size_t n)
{
    char *p = cel_ev_strdup(ev, s, n);
    return p ? cel_str(p, (uint32_t)n) : cel_err_static("out of memory");
}

static struct cel_val f_url_scheme(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    return cel_str(a[0].v.url->scheme.s, a[0].v.url->scheme.n);
}

static struct cel_val f_url_host(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    return cel_str(a[0].v.url->host.s, a[0].v.url->host.n);
}

/* splitHostPort */
static void split_host_port(struct ustr hp, struct ustr *host, struct ustr *port)
{
    const char *c = mem_last(hp.s, hp.n, ':');
    *host = hp;
    port->s = "";
    port->n = 0;
    if (c && valid_optional_port(c, hp.n - (size_t)(c - hp.s))) {
        host->n = (size_t)(c - hp.s);
        port->s = c + 1;
        port->n = hp.n - host->n - 1;
    }
    if (host->n >= 2 && host->s[0] == '[' && host->s[host->n - 1] == ']') {
        host->s++;
        host->n -= 2;
    }
}

static struct cel_val f_url_hostname(struct ev *ev, const struct cel_val *a, int n)
{
    struct ustr h, p;
    (void)ev;
    (void)n;
    split_host_port(S(&a[0].v.url->host), &h, &p);
    return cel_str(h.s, (uint32_t)h.n);
}

static struct cel_val f_url_port(struct ev *ev, const struct cel_val *a, int n)
{
    struct ustr h, p;
    (void)ev;
    (void)n;
    split_host_port(S(&a[0].v.url->host), &h, &p);
    return cel_str(p.s, (uint32_t)p.n);
}

static struct cel_val f_url_escaped_path(struct ev *ev, const struct cel_val *a, int n)
{
    struct buf b = BUF_INIT(0);
    (void)n;
    url_escaped(S(&a[0].v.url->raw_path), S(&a[0].v.url->path), E_PATH, &b);
    struct cel_val r = url_ret(ev, B(&b).s, b.len);
    buf_release(&b);
    return r;
}

/* url.ParseQuery (errors ignored, as URL.Query ignores them) as map(string, list(string)) */
static struct cel_val f_url_query(struct ev *ev, const struct cel_val *a, int n)
{
    struct ustr q = S(&a[0].v.url->raw_query);
    size_t amps = 0;
    (void)n;

    for (size_t i = 0; i < q.n; i++)
        amps += q.s[i] == '&';
    struct cel_map *m = cel_map_new(ev->a, 0);
    if (!m)
        return cel_err_static("out of memory");
    if (amps + 1 <= 10000) {
        const char *p = q.s, *end = q.s + q.n;
        while (p < end) {
            const char *amp = memchr(p, '&', (size_t)(end - p));
            const char *kend = amp ? amp : end;
            struct ustr key = {p, (size_t)(kend - p)};
            p = amp ? amp + 1 : end;
            if (memchr(key.s, ';', key.n) || key.n == 0)
                continue;
            const char *eq = memchr(key.s, '=', key.n);
            struct ustr k = {key.s, eq ? (size_t)(eq - key.s) : key.n};
            struct ustr v = {eq ? eq + 1 : "", eq ? key.n - k.n - 1 : 0};
            struct buf kb = BUF_INIT(0), vb = BUF_INIT(0), e = BUF_INIT(0);
            if (!url_unescape(k.s, k.n, E_QUERY_COMPONENT, &kb, &e) ||
                !url_unescape(v.s, v.n, E_QUERY_COMPONENT, &vb, &e)) {
                buf_release(&kb);
                buf_release(&vb);
                buf_release(&e);
                continue;
            }
            struct cel_val kv = url_ret(ev, B(&kb).s, kb.len);
            struct cel_val vv = url_ret(ev, B(&vb).s, vb.len);
            buf_release(&kb);
            buf_release(&vb);
            buf_release(&e);
            if (kv.k == CV_ERROR || vv.k == CV_ERROR)
                return kv.k == CV_ERROR ? kv : vv;
            uint32_t j;
            for (j = 0; j < m->n; j++)
                if (m->keys[j].n == kv.n && !memcmp(m->keys[j].v.s, kv.v.s, kv.n))
                    break;
            if (j == m->n) {
                if (m->n == m->cap) {
                    uint32_t nc = m->cap ? m->cap * 2 : 4;
                    struct cel_val *nk = arena_alloc(ev->a, nc * sizeof(*nk));
                    struct cel_val *nv = arena_alloc(ev->a, nc * sizeof(*nv));
                    if (!nk || !nv)
                        return cel_err_static("out of memory");
                    if (m->n) {
                        memcpy(nk, m->keys, m->n * sizeof(*nk));
                        memcpy(nv, m->vals, m->n * sizeof(*nv));
                    }
                    m->keys = nk;
                    m->vals = nv;
                    m->cap = nc;
                }
                struct cel_list *l = cel_list_new(ev->a, 0);
                if (!l)
                    return cel_err_static("out of memory");
                m->keys[j] = kv;
                m->vals[j].k = CV_LIST;
                m->vals[j].v.l = l;
                m->n++;
            }
            struct cel_list *l = (struct cel_list *)m->vals[j].v.l;
            if (l->n == l->cap) {
                uint32_t nc = l->cap ? l->cap * 2 : 2;
                struct cel_val *nv = arena_alloc(ev->a, nc * sizeof(*nv));
                if (!nv)
                    return cel_err_static("out of memory");
                if (l->n)
                    memcpy(nv, l->v, l->n * sizeof(*nv));
                l->v = nv;
                l->cap = nc;
            }
            l->v[l->n++] = vv;
        }
    }
    struct cel_val r = {.k = CV_MAP};
    r.v.m = m;
    return r;
}

static const struct cel_impl net_impls[] = {
    {"string_to_ip", f_ip, 0, false},
    {"is_ip", f_is_ip, 0, false},
    {"ip_is_canonical", f_ip_is_canonical, 0, false},
    {"ip_to_string", f_ip_string, 0, false},
    {"ip_family", f_family, 0, false},
    {"ip_is_unspecified", f_is_unspecified, 0, false},
    {"ip_is_loopback", f_is_loopback, 0, false},
    {"ip_is_link_local_multicast", f_is_ll_multicast, 0, false},
    {"ip_is_link_local_unicast", f_is_ll_unicast, 0, false},
    {"ip_is_global_unicast", f_is_global_unicast, 0, false},
    {"string_to_cidr", f_cidr, 0, false},
    {"is_cidr", f_is_cidr, 0, false},
    {"cidr_to_string", f_ip_string, 0, false},
    {"cidr_contains_ip_string", f_contains_ip, 0, false},
    {"cidr_contains_ip_ip", f_contains_ip, 0, false},
    {"cidr_contains_cidr_string", f_contains_cidr, 0, false},
    {"cidr_contains_cidr", f_contains_cidr, 0, false},
    {"cidr_ip", f_cidr_ip, 0, false},
    {"cidr_prefix_length", f_prefix_length, 0, false},
    {"cidr_masked", f_masked, 0, false},
    {"string_to_url", f_url, 0, false},
    {"is_url_string", f_is_url, 0, false},
    {"url_get_scheme", f_url_scheme, 0, false},
    {"url_get_host", f_url_host, 0, false},
    {"url_get_hostname", f_url_hostname, 0, false},
    {"url_get_port", f_url_port, 0, false},
    {"url_get_escaped_path", f_url_escaped_path, 0, false},
    {"url_get_query", f_url_query, 0, false},
};

const struct cel_impl *cel_k8snet_impls(size_t *n)
{
    *n = sizeof(net_impls) / sizeof(net_impls[0]);
    return net_impls;
}
