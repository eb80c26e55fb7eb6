/* quote.h - Go's strconv.Quote (what %q prints), the one quoting of untrusted text in our
 * messages, as git keeps its shell quoting in quote.c.
 *
 * Kubernetes prints the values of its field errors with %q (`Invalid value: "a\tb": ...`),
 * strconv errors quote their input, and YAML's duplicate keys are named with %#v, which is
 * the same for a string. Every one of those messages goes through this module, so a value
 * with a tab, a NUL, invalid UTF-8 or an invisible code point reads the same everywhere. */
#ifndef BASE_QUOTE_H
#define BASE_QUOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/* quote_go appends strconv.Quote of the n bytes at s (which may hold NULs) to b: between
 * double quotes, '"' and '\\' backslashed; printable runes as they are; \a \b \f \n \r \t \v;
 * other runes below U+0020 and U+007F as \xNN; each byte of invalid UTF-8 as \xNN; other
 * non-printable runes as \uNNNN or \UNNNNNNNN. Returns 0 or buf's -E2BIG / -ENOMEM. */
int quote_go(struct buf *b, const char *s, size_t n);

/* quote_go_to writes the same into out (size bytes, at least 8) and returns out. A quote that
 * does not fit is cut after a whole escape and ends in `"...`, so it says it was cut. */
const char *quote_go_to(char *out, size_t size, const char *s, size_t n);

/* quote_go_printable is strconv.IsPrint: letters, marks, numbers, punctuation and symbols,
 * and the ASCII space. Exact for ASCII and Latin-1, for the space, line, format, private-use,
 * surrogate and noncharacter code points and for the planes Unicode leaves empty; the few
 * unassigned code points inside the other planes count as printable here (Go escapes them). */
bool quote_go_printable(uint32_t r);

#endif
