/* quantity.h - resource.Quantity parsing with Kubernetes' exact grammar.
 *
 * Grammar (k8s.io/apimachinery resource.ParseQuantity): <signedNumber><suffix> where suffix
 * is a binary SI (Ki Mi Gi Ti Pi Ei), decimal SI (n u m "" k M G T P E) or decimal exponent
 * (e/E followed by a signed integer). Values are returned scaled to an int64 in the unit asked
 * for, rounding up like Quantity.Value()/MilliValue() (ceil). */
#ifndef KUBE_QUANTITY_H
#define KUBE_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"

/* kube_quantity_parse parses s. On success *value is the quantity in base units (ceil) and
 * *milli is 1000 x the quantity (ceil); either pointer may be NULL. Errors use
 * Kubernetes' messages ("quantities must match the regular expression
 * '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'") with code -EINVAL, or -ERANGE when the
 * value does not fit. */
int kube_quantity_parse(const char *s, int64_t *value, int64_t *milli, struct err *err);

/* kube_quantity_parsen is kube_quantity_parse of the len bytes at s (no NUL needed). */
int kube_quantity_parsen(const char *s, size_t len, int64_t *value, int64_t *milli,
                         struct err *err);

/* The longest text kube_json_number_text writes, its NUL included. */
#define KUBE_JSON_NUMBER_MAX 40

/* kube_json_number_text writes the JSON number v as kubectl hands it on to the API server: an
 * integer (one that fits an int64: the YAML and JSON readers make the rest reals) as it is,
 * any other number as Go's encoder writes a float64: the shortest digits that read back, with
 * an exponent below 1e-6 and from 1e21 ("1000" for YAML's 1e3, "1.5", "1e-7", "1e+21",
 * "123456789012345680000"). Returns buf (size: KUBE_JSON_NUMBER_MAX). */
const char *kube_json_number_text(const json_t *v, char *buf);

/* kube_quantity_json_text gives the text resource.Quantity's UnmarshalJSON parses for the
 * JSON value v (the value of a Quantity field, or of a ResourceList's entry) as kubectl sends
 * it: "0" for null (the zero Quantity), a string without the white space around it
 * (strings.TrimSpace: Unicode's), a number as kube_json_number_text writes it into buf (size:
 * KUBE_JSON_NUMBER_MAX). *len is the text's length; a trimmed string's text points into v's
 * own and need not end at a NUL. NULL for a bool, an object or an array, which Quantity's
 * parser refuses (kube_quantity_parse of the text "{" gives its words). Every reader of a
 * Quantity goes through it: the decoder (decode_resources.c, decode_dra.c) and the
 * pod-template-hash. */
const char *kube_quantity_json_text(const json_t *v, char *buf, size_t *len);

/* kube_nano is a quantity in nano units (10^-9 of its base unit): every quantity
 * ParseQuantity returns (rounded up to nano, binary ones capped at 2^63-1) fits, so sums and
 * comparisons of quantities (device counters and capacities) are exact. */
__extension__ typedef __int128 kube_nano;

#define KUBE_NANO_PER_UNIT ((kube_nano)1000000000)

/* kube_quantity_parse_nano parses s like kube_quantity_parse into nano units, exactly (rounded
 * up, away from zero, to a nano as ParseQuantity rounds). -EINVAL (Kubernetes' messages) or
 * -ERANGE when the value is beyond +-10^27 base units. */
int kube_quantity_parse_nano(const char *s, kube_nano *nano, struct err *err);

/* kube_nano_value is Quantity.Value(): n in base units rounded up away from zero, saturated at
 * the int64 range; kube_nano_milli is Quantity.MilliValue() the same way. */
int64_t kube_nano_value(kube_nano n);
int64_t kube_nano_milli(kube_nano n);

/* kube_quantity_format writes v (base units) the way kubectl prints it for the given resource:
 * cpu from millicores ("500m", "2"), memory in the largest exact binary suffix ("12Gi",
 * "1536Mi", or plain bytes). Returns buf. */
const char *kube_quantity_format_milli(int64_t milli, char *buf, int size);
const char *kube_quantity_format_bytes(int64_t bytes, char *buf, int size);

#endif
