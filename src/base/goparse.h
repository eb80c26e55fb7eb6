/* goparse.h - numbers, booleans and durations read exactly as Go's standard library reads
 * them, because that is how Kubernetes reads them.
 *
 * The API server parses selector values with strconv.ParseInt, YAML integers go through
 * strconv.ParseInt(s, 0, 64), kubectl-style flags through strconv.ParseBool and
 * time.ParseDuration. Using one implementation of each grammar everywhere means a value
 * accepted here is accepted there, and the other way round. Errors carry Go's own wording
 * (`strconv.ParseInt: parsing "x": invalid syntax`, `time: unknown unit "d" in duration
 * "3d"`), so a program can show it or put its own words around it. */
#ifndef BASE_GOPARSE_H
#define BASE_GOPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* go_parse_int is strconv.ParseInt on the n bytes at s (no NUL needed) with the given base
 * (0, or 2 to 36) and bit size (1 to 64): an optional sign, then digits; with base 0 the
 * prefix says the base ("0x" 16, "0o" or a leading "0" 8, "0b" 2, else 10) and '_' may
 * separate digits as in Go literals. Returns 0 with *out set; -EINVAL on a syntax error
 * (*out 0); -ERANGE when the value does not fit in bits, with *out the nearest limit, as
 * Go returns it. err (may be NULL) gets Go's message. */
int go_parse_int(const char *s, size_t n, int base, int bits, int64_t *out, struct err *err);

/* go_parse_uint is strconv.ParseUint: the same, without a sign. */
int go_parse_uint(const char *s, size_t n, int base, int bits, uint64_t *out, struct err *err);

/* go_parse_bool is strconv.ParseBool: 1 t T TRUE true True, 0 f F FALSE false False.
 * Returns 0, or -EINVAL with `strconv.ParseBool: parsing "x": invalid syntax` in err. */
int go_parse_bool(const char *s, bool *out, struct err *err);

/* go_parse_duration is time.ParseDuration: an optional sign, then one or more decimal
 * numbers (fractions allowed) each with a unit (ns, us, µs, μs, ms, s, m, h), e.g. "300ms",
 * "-1.5h", "2h45m"; "0" needs no unit. *ns is the duration in nanoseconds. Returns 0, or
 * -EINVAL with Go's message (invalid duration, missing unit, unknown unit) in err, also when
 * the duration does not fit in an int64 of nanoseconds (about 292 years). */
int go_parse_duration(const char *s, int64_t *ns, struct err *err);

/* go_format_float writes v as strconv.FormatFloat(v, fmt, -1, 64) does with fmt 'g' or 'f':
 * the shortest digits that read back as v ('g': "0.001", "16.384", "1e-05", "1e+06"; 'f':
 * "1764771234567.1235"), and "+Inf", "-Inf", "NaN". Returns buf. */
const char *go_format_float(double v, char fmt, char *buf, size_t size);

#endif
