/* utf8.h - UTF-8 as Go's unicode/utf8 reads and writes it: an invalid byte decodes to U+FFFD
 * with width 1; surrogates and values past U+10FFFF are invalid. */
#ifndef CEL_UTF8_H
#define CEL_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* cel_utf8_decode reads one code point from s (n > 0 bytes), returns its width (>= 1). */
static inline size_t cel_utf8_decode(const char *s, size_t n, uint32_t *r)
{
    const unsigned char *p = (const unsigned char *)s;
    uint32_t c = p[0];

    if (c < 0x80) {
        *r = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf && n >= 2 && (p[1] & 0xc0) == 0x80) {
        *r = ((c & 0x1f) << 6) | (p[1] & 0x3f);
        return 2;
    }
    if (c >= 0xe0 && c <= 0xef && n >= 3 && (p[1] & 0xc0) == 0x80 && (p[2] & 0xc0) == 0x80) {
        uint32_t v = ((c & 0x0f) << 12) | ((uint32_t)(p[1] & 0x3f) << 6) | (p[2] & 0x3f);
        if (v >= 0x800 && (v < 0xd800 || v > 0xdfff)) {
            *r = v;
            return 3;
        }
    }
    if (c >= 0xf0 && c <= 0xf4 && n >= 4 && (p[1] & 0xc0) == 0x80 && (p[2] & 0xc0) == 0x80 &&
        (p[3] & 0xc0) == 0x80) {
        uint32_t v = ((c & 0x07) << 18) | ((uint32_t)(p[1] & 0x3f) << 12) |
                     ((uint32_t)(p[2] & 0x3f) << 6) | (p[3] & 0x3f);
        if (v >= 0x10000 && v <= 0x10ffff) {
            *r = v;
            return 4;
        }
    }
    *r = 0xfffd;
    return 1;
}

/* cel_utf8_len is the encoded width of r (invalid code points encode as U+FFFD: 3). */
static inline size_t cel_utf8_len(uint32_t r)
{
    if (r < 0x80)
        return 1;
    if (r < 0x800)
        return 2;
    if ((r >= 0xd800 && r <= 0xdfff) || r > 0x10ffff)
        return 3;
    if (r < 0x10000)
        return 3;
    return 4;
}

/* cel_utf8_encode writes r (invalid: U+FFFD) into out (4 bytes room), returns the width. */
static inline size_t cel_utf8_encode(uint32_t r, char *out)
{
    unsigned char *o = (unsigned char *)out;

    if ((r >= 0xd800 && r <= 0xdfff) || r > 0x10ffff)
        r = 0xfffd;
    if (r < 0x80) {
        o[0] = (unsigned char)r;
        return 1;
    }
    if (r < 0x800) {
        o[0] = (unsigned char)(0xc0 | (r >> 6));
        o[1] = (unsigned char)(0x80 | (r & 0x3f));
        return 2;
    }
    if (r < 0x10000) {
        o[0] = (unsigned char)(0xe0 | (r >> 12));
        o[1] = (unsigned char)(0x80 | ((r >> 6) & 0x3f));
        o[2] = (unsigned char)(0x80 | (r & 0x3f));
        return 3;
    }
    o[0] = (unsigned char)(0xf0 | (r >> 18));
    o[1] = (unsigned char)(0x80 | ((r >> 12) & 0x3f));
    o[2] = (unsigned char)(0x80 | ((r >> 6) & 0x3f));
    o[3] = (unsigned char)(0x80 | (r & 0x3f));
    return 4;
}

/* cel_utf8_count counts code points in s (n bytes), as Go's utf8.RuneCountInString. */
static inline int64_t cel_utf8_count(const char *s, size_t n)
{
    int64_t k = 0;
    size_t i = 0;

    while (i < n) {
        if ((unsigned char)s[i] < 0x80) {
            i++;
        } else {
            uint32_t r;
            i += cel_utf8_decode(s + i, n - i, &r);
        }
        k++;
    }
    return k;
}

#endif
