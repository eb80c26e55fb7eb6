/* drashare.h - what gpusched serve writes into an allocation result for a share of a device
 * with allowMultipleAllocations (DRAConsumableCapacity): the shareID kube-scheduler v1.37.2
 * generates and the consumedCapacity quantities in the text its allocator gives them. Pure but
 * for the random shareID. */
#ifndef SERVE_DRASHARE_H
#define SERVE_DRASHARE_H

#include <stddef.h>

#include <jansson.h>

#include "kube/quantity.h"
#include "sched/dra_alloc.h"

/* serve_dra_share_id writes a new shareID into out (37 bytes): GenerateShareID's
 * uuid.NewUUID, a random (version 4) UUID in lower-case hex. 0 or -errno (no randomness). */
int serve_dra_share_id(char out[37]);

/* The formats of resource.Quantity, as ParseQuantity reads them from a suffix. */
enum serve_qformat { SERVE_QF_DECIMAL_SI, SERVE_QF_BINARY_SI, SERVE_QF_DECIMAL_EXPONENT };

/* serve_quantity_format: the format ParseQuantity gives text (DecimalSI when it cannot say). */
enum serve_qformat serve_quantity_format(const char *text);

/* serve_quantity_canonical writes what NewMilliQuantity(q, format).String() writes for q (nano
 * units, a whole number of milli units, positive) into buf (size >= 48): CanonicalizeBytes
 * (BinarySI only for whole numbers from 1024, largest power of 1024; else the exponent to a
 * multiple of 3, SI suffix or "eN"). Returns buf, NULL when q is out of its range. */
const char *serve_quantity_canonical(kube_nano q, enum serve_qformat format, char *buf,
                                     size_t size);

/* serve_dra_consumed_capacity is the result's consumedCapacity as kube-scheduler writes it:
 * for each capacity of the device the allocator computed the value of (c, n), the text of the
 * quantity GetConsumedCapacityFromRequest took it from (the request's, the policy's default,
 * the capacity's value, the range's min, a valid value; all as the API server stores them) or,
 * for a request rounded up to a step, the new value in the step's format. device is the
 * slice's device object, request the claim's request (or subrequest) it was allocated for.
 * A new object, NULL when n is 0 or out of memory. */
json_t *serve_dra_consumed_capacity(json_t *device, json_t *request, const struct dra_consumed *c,
                                    size_t n);

#endif
