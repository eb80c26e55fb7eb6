/* quote.c - Go's strconv.Quote (see quote.h): UTF-8 decoded as Go's utf8.DecodeRuneInString
 * decodes it (overlong forms and surrogates are invalid, each of their bytes escaped alone),
 * each rune escaped as strconv's appendEscapedRune escapes it. */
#include "base/quote.h"

#include <string.h>

static const char hex[] = "0123456789abcdef";

/* Code points that are not printable though Unicode assigns them (the space separators,
 * the format characters, the line and paragraph separators), in ranges, sorted. */
static const struct {
    uint32_t lo, hi;
} not_print[] = {
    {0x00ad, 0x00ad},   {0x0600, 0x0605},   {0x061c, 0x061c},   {0x06dd, 0x06dd},
    {0x070f, 0x070f},   {0x0890, 0x0891},   {0x08e2, 0x08e2},   {0x1680, 0x1680},
    {0x180e, 0x180e},   {0x2000, 0x200f},   {0x2028, 0x202f},   {0x205f, 0x206f},
    {0x3000, 0x3000},   {0xd800, 0xf8ff},   {0xfdd0, 0xfdef},   {0xfeff, 0xfeff},
    {0xfff0, 0xfffb},   {0x110bd, 0x110bd}, {0x110cd, 0x110cd}, {0x13430, 0x1343f},
    {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a},
};

bool quote_go_printable(uint32_t r)
{
    size_t lo = 0, hi = sizeof(not_print) / sizeof(not_print[0]);

    if (r < 0x80)
        return r >= 0x20 && r < 0x7f;
    if (r < 0x100)
        return r >= 0xa1 && r != 0xad;
    if (r > 0x10ffff || (r & 0xfffe) == 0xfffe) /* every plane's last two are noncharacters */
        return false;
    if (r >= 0x323b0 && r < 0xe0100) /* plane 3 past CJK extension H, planes 4 to 13 */
        return false;
    if (r >= 0xe0000) /* tags, variation selectors, then planes 15 and 16 (private use) */
        return r >= 0xe0100 && r <= 0xe01ef;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;

        if (r < not_print[mid].lo)
            hi = mid;
        else if (r > not_print[mid].hi)
            lo = mid + 1;
        else
            return false;
    }
    return true;
}

/* decode reads one rune of UTF-8 at s (n > 0 bytes), as utf8.DecodeRuneInString: its width,
 * or 0 for a byte that starts no valid sequence. */
static size_t decode(const unsigned char *s, size_t n, uint32_t *r)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xbf;
    size_t w, i;

    if (c < 0x80) {
        *r = c;
        return 1;
    }
    if (c < 0xc2 || c > 0xf4)
        return 0;
    w = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    if (c == 0xe0)
        lo = 0xa0;
    else if (c == 0xed)
        hi = 0x9f; /* no surrogates */
    else if (c == 0xf0)
        lo = 0x90;
    else if (c == 0xf4)
        hi = 0x8f;
    if (n < w || s[1] < lo || s[1] > hi)
        return 0;
    *r = c & (w == 2 ? 0x1f : w == 3 ? 0x0f : 0x07);
    for (i = 1; i < w; i++) {
        if (i > 1 && (s[i] < 0x80 || s[i] > 0xbf))
            return 0;
        *r = *r << 6 | (s[i] & 0x3f);
    }
    return w;
}

/* escape writes the quoted form of the w bytes at s (one rune r, or w == 0: the single byte
 * s[0] of invalid UTF-8) into out (room for 10) and returns its length */
static size_t escape(const unsigned char *s, size_t w, uint32_t r, char *out)
{
    static const char named[] = "abtnvfr"; /* \a .. \r are 7 .. 13 */
    size_t k = 0;
    int shift;

    if (!w) {
        r = s[0];
        goto hexbyte;
    }
    if (r == '"' || r == '\\') {
        out[0] = '\\';
        out[1] = (char)r;
        return 2;
    }
    if (quote_go_printable(r)) {
        memcpy(out, s, w);
        return w;
    }
    if (r >= 7 && r <= 13) {
        out[0] = '\\';
        out[1] = named[r - 7];
        return 2;
    }
    if (r < 0x20 || r == 0x7f) {
    hexbyte:
        out[0] = '\\';
        out[1] = 'x';
        out[2] = hex[r >> 4 & 15];
        out[3] = hex[r & 15];
        return 4;
    }
    out[k++] = '\\';
    out[k++] = r < 0x10000 ? 'u' : 'U';
    for (shift = r < 0x10000 ? 12 : 28; shift >= 0; shift -= 4)
        out[k++] = hex[r >> shift & 15];
    return k;
}

/* step escapes the rune at s (n > 0 bytes left) into out and returns the bytes it took */
static size_t step(const unsigned char *s, size_t n, char *out, size_t *len)
{
    uint32_t r = 0;
    size_t w = decode(s, n, &r);

    *len = escape(s, w, r, out);
    return w ? w : 1;
}

int quote_go(struct buf *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    char one[12];
    size_t i = 0, len;
    int rc = buf_append(b, "\"", 1);

    while (!rc && i < n) {
        size_t start = i;

        /* runs of plain ASCII go in one append */
        while (i < n && p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' && p[i] != '\\')
            i++;
        if (i > start && (rc = buf_append(b, s + start, i - start)))
            break;
        if (i < n) {
            i += step(p + i, n - i, one, &len);
            rc = buf_append(b, one, len);
        }
    }
    return rc ? rc : buf_append(b, "\"", 1);
}

const char *quote_go_to(char *out, size_t size, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    char one[12];
    size_t k = 0, i = 0, safe = 1, len;

    if (size < 8) {
        if (size)
            out[0] = '\0';
        return out;
    }
    out[k++] = '"';
    while (i < n) {
        i += step(p + i, n - i, one, &len);
        /* room for this escape, the closing quote and the NUL; else cut where `"...` fits */
        if (k + len + 2 > size) {
            memcpy(out + safe, "\"...", 5);
            return out;
        }
        memcpy(out + k, one, len);
        k += len;
        if (k + 5 <= size)
            safe = k;
    }
    out[k++] = '"';
    out[k] = '\0';
    return out;
}
