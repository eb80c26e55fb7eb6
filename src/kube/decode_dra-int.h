/* decode_dra-int.h - what the decoders of resource.k8s.io/v1 share (decode_dra.c): the Go
 * types several kinds use, the API server's limits and the checks of its validation in its
 * words. Every check fails at obj[key] (pushed onto the path) and returns 0 or the decoder's
 * error (decode-int.h's dec_fail); strings kept are copied into the decoder's arena. */
#ifndef KUBE_DECODE_DRA_INT_H
#define KUBE_DECODE_DRA_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/decode-int.h"

/* the API server's limits (k8s.io/api resource/v1 constants) */
#define DRA_REQUESTS_MAX 32
#define DRA_SELECTORS_MAX 32
#define DRA_FIRST_AVAILABLE_MAX 8
#define DRA_CONSTRAINTS_MAX 32
#define DRA_SLICE_DEVICES_MAX 128
#define DRA_SLICE_DEVICES_ADVANCED_MAX 64
#define DRA_RESULTS_MAX 32
#define DRA_RESERVED_FOR_MAX 256
#define DRA_POOL_NAME_MAX 253
#define DRA_DRIVER_NAME_MAX 63
#define DRA_ATTRIBUTE_VALUE_MAX 64

/* the tables of the Go structs more than one kind holds */
extern const struct dec_type dec_t_device_selector, dec_t_opaque_config, dec_t_skip_node_operation,
    dec_t_device_taint;

/* fail at obj[key] with a message */
int dec_dra_fail_key(struct dec *d, const json_t *obj, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* field.TooMany's words for the list obj[key] over max */
int dec_dra_too_many(struct dec *d, const json_t *obj, const char *key, int max);

/* "Invalid value: "VALUE": msg" at obj[key] */
int dec_dra_invalid(struct dec *d, const json_t *obj, const char *key, const char *value,
                    const char *msg);

/* a required string obj[key] ("Required value" when unset or empty), copied */
int dec_dra_required(struct dec *d, const json_t *obj, const char *key, const char **out);

/* s as a DNS label, a DNS subdomain, a driver name (ValidateCSIDriverName) or a pool name
 * (DNS subdomains separated by '/'), judged at obj[key] */
int dec_dra_label(struct dec *d, const json_t *obj, const char *key, const char *s);
int dec_dra_subdomain(struct dec *d, const json_t *obj, const char *key, const char *s);
int dec_dra_driver(struct dec *d, const json_t *obj, const char *key, const char *s);
int dec_dra_pool_name(struct dec *d, const json_t *obj, const char *key, const char *s);

/* the quantity v (parent[key]; key NULL: an element at the current path) into out; the
 * required variant reads parent[key] and makes an unset one the zero Quantity "0" */
int dec_dra_quantity(struct dec *d, const json_t *parent, const char *key, const json_t *v,
                     struct kube_dra_quantity *out);
int dec_dra_quantity_required(struct dec *d, const json_t *parent, const char *key,
                              struct kube_dra_quantity *out);

/* an optional bool obj[key] as -1 unset, 0, 1 */
int dec_dra_tristate(struct dec *d, const json_t *obj, const char *key, int8_t *out);

/* bindingConditions and bindingFailureConditions of v (a device, or an allocation's result) */
int dec_dra_binding_conditions(struct dec *d, const json_t *v, const char ***conds, size_t *nconds,
                               const char ***fails, size_t *nfails);

/* validateQualifiedName of the attribute or capacity name `name` (value v of map) */
int dec_dra_qualified(struct dec *d, const json_t *map, const char *name, const json_t *v);

/* obj.selectors: each CEL expression compiled as a new object's (not when stored: read
 * from a live cluster, whose API server accepted it once); *out in the arena */
int dec_dra_selectors(struct dec *d, const json_t *obj, bool stored, struct kube_dra_selector **out,
                      size_t *n);

/* a DeviceTaint (a slice's device's or a DeviceTaintRule's) */
int dec_dra_taint(struct dec *d, const json_t *v, struct kube_dra_taint *out);

#endif
