/* quantity.h - resource.Quantity parsing with Kubernetes' exact grammar.
 *
 * Grammar (k8s.io/apimachinery resource.ParseQuantity): <signedNumber><suffix> where suffix
 * is a binary SI (Ki Mi Gi Ti Pi Ei), decimal SI (n u m "" k M G T P E) or decimal exponent
 * (e/E followed by a signed integer). Values are returned scaled to an int64 in the unit asked
 * for, rounding up like Quantity.Value()/MilliValue() (ceil). */
#ifndef KUBE_QUANTITY_H
#define KUBE_QUANTITY_H

#include <stdint.h>

#include "base/err.h"

/* kube_quantity_parse parses s. On success *value is the quantity in base units (ceil) and
 * *milli is 1000 x the quantity (ceil); either pointer may be NULL. Errors use
 * Kubernetes' messages ("quantities must match the regular expression
 * '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'") with code -EINVAL, or -ERANGE when the
 * value does not fit. */
int kube_quantity_parse(const char *s, int64_t *value, int64_t *milli, struct err *err);

/* kube_quantity_format writes v (base units) the way kubectl prints it for the given resource:
 * cpu from millicores ("500m", "2"), memory in the largest exact binary suffix ("12Gi",
 * "1536Mi", or plain bytes). Returns buf. */
const char *kube_quantity_format_milli(int64_t milli, char *buf, int size);
const char *kube_quantity_format_bytes(int64_t bytes, char *buf, int size);

#endif
