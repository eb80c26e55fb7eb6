/* quantity.h - resource.Quantity as Kubernetes' CEL quantity library sees it.
 *
 * A quantity is held in the form apimachinery keeps it, because the form shows through the
 * CEL functions: an int64 amount (value x 10^scale) or an arbitrary-precision decimal
 * (inf.Dec: unscaled x 10^-scale). isInteger() is false for every decimal form, even 1536 made
 * from "1.5Ki"; asApproximateFloat() multiplies the form's mantissa by a power of ten. Parsing,
 * comparison, add and sub follow ParseQuantity, Cmp, Add and Sub exactly. Decimals past 4096
 * bits fail with an error cel-go would not give (documented in docs/cel.md). */
#ifndef CEL_QUANTITY_H
#define CEL_QUANTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"

#define CEL_QUANTITY_MAX_LIMBS 128

enum cel_quantity_format { CEL_QF_DECIMAL_EXPONENT, CEL_QF_BINARY_SI, CEL_QF_DECIMAL_SI };

struct cel_quantity {
    bool dec;      /* inf.Dec form */
    bool canon;    /* parsed from its canonical text (Quantity.s kept: String() returns it) */
    uint8_t fmt;   /* enum cel_quantity_format */
    bool ptr;      /* a *Quantity (add/sub results): Equal rejects it on the right */
    int64_t value; /* int64Amount */
    int32_t scale;
    int sign; /* inf.Dec: -1, 0, 1 */
    int32_t dscale;
    int nl; /* magnitude limbs, little endian base 2^32 */
    const uint32_t *l;
    const char *text; /* canon: the text it was parsed from (Quantity.s), text_len bytes */
    uint32_t text_len;
};

/* cel_quantity_parse: resource.ParseQuantity. On failure returns NULL and *err is the
 * message (static). Memory from a. */
const struct cel_quantity *cel_quantity_parse(struct arena *a, const char *s, size_t n,
                                              const char **err);
/* cel_quantity_canonical: Quantity.String() of a parsed quantity (CanonicalizeBytes; the text
 * it was parsed from when ParseQuantity kept it). Returns false when out of memory. */
struct buf;
bool cel_quantity_canonical(const struct cel_quantity *q, const char *text, size_t n,
                            struct buf *out);
/* cel_quantity_string: Quantity.String() (fmt's %v) of any quantity; false when out of memory */
bool cel_quantity_string(const struct cel_quantity *q, struct buf *out);
/* Quantity.Cmp: -1, 0, 1 */
int cel_quantity_cmp(const struct cel_quantity *a, const struct cel_quantity *b);
/* Quantity.Add / Sub on a copy of a; NULL with *err on overflow past the limb cap. */
const struct cel_quantity *cel_quantity_add(struct arena *a, const struct cel_quantity *x,
                                            const struct cel_quantity *y, bool sub,
                                            const char **err);
/* Quantity.AsDec's new form of an int64 amount (q itself when it is already a decimal); NULL
 * when out of memory */
const struct cel_quantity *cel_quantity_to_dec(struct arena *a, const struct cel_quantity *q);
/* NewQuantity(v, DecimalExponent) */
const struct cel_quantity *cel_quantity_from_int(struct arena *a, int64_t v);
bool cel_quantity_as_int64(const struct cel_quantity *q, int64_t *out);
double cel_quantity_approx_float(const struct cel_quantity *q);
int cel_quantity_sign(const struct cel_quantity *q);
/* Go's math.Pow10 */
double cel_go_pow10(int n);

#endif
