/* decode_dra.c - resource.k8s.io/v1: the Dynamic Resource Allocation kinds (DeviceClass,
 * ResourceClaim, ResourceClaimTemplate, ResourceSlice) and a pod's spec.resourceClaims, read
 * as the other families are (decode-int.h, "How a kind is added"). Empty until the first of
 * them lands: the pod decoder still records spec.resourceClaims as not modelled. */
#include "kube/decode-int.h"

/* ISO C wants a translation unit to declare something: the group these kinds belong to. */
const char dec_dra_group[] = "resource.k8s.io";
