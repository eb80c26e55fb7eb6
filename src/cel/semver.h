/* semver.h - blang/semver v4 versions as Kubernetes' CEL semver library uses them.
 *
 * cel_semver_parse is semver.Parse with its error messages; the normalizing form of
 * semver(s, true) trims a "v", leading zeroes and fills missing minor/patch. */
#ifndef CEL_SEMVER_H
#define CEL_SEMVER_H

#include <stdbool.h>
#include <stddef.h>

#include "base/arena.h"
#include "cel/value.h"

/* Parses s (n bytes). On failure returns NULL and writes the message into err (errsize). */
const struct cel_semver *cel_semver_parse(struct arena *a, const char *s, size_t n, bool normalize,
                                          char *err, size_t errsize);
/* Version.Compare: -1, 0, 1 */
int cel_semver_cmp(const struct cel_semver *a, const struct cel_semver *b);

/* Go's strconv.Quote of s (n bytes) appended to b. */
struct buf;
void cel_go_quote(struct buf *b, const char *s, size_t n);

#endif
