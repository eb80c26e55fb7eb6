/* decode_dra.c - resource.k8s.io/v1, the Dynamic Resource Allocation kinds: DeviceClass,
 * ResourceSlice, ResourceClaim (with its status: allocation, reservedFor), ResourceClaimTemplate
 * and DeviceTaintRule, read as the API server stores them (defaults applied) with the checks of
 * its validation (k8s.io/kubernetes v1.37.2 pkg/apis/resource/validation) that keep an object
 * the scheduler could not read out, in its words: required fields, names, the one-of rules,
 * counts, enums, quantities, and CEL selectors compiled as a new object's are (the stored-
 * expression environment's superset, the cost limit). Fields of alpha features (off in v1.37)
 * are counted so the loader can warn. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel.h"
#include "kube/decode-int.h"
#include "kube/exec.h"
#include "kube/labels.h"
#include "kube/quantity.h"

const char dec_dra_group[] = "resource.k8s.io";

/* ---- The Go types of the fields (decode-int.h; k8s.io/api v0.37.2 resource/v1) ---- */

static const struct dec_type dec_t_device_class_spec, dec_t_device_selector,
    dec_t_cel_device_selector, dec_t_device_class_configuration, dec_t_opaque_config,
    dec_t_resource_slice_spec, dec_t_resource_pool, dec_t_device, dec_t_counter_set, dec_t_counter,
    dec_t_device_attribute, dec_t_device_capacity, dec_t_capacity_request_policy,
    dec_t_capacity_request_policy_range, dec_t_device_counter_consumption, dec_t_device_taint,
    dec_t_node_allocatable_resource, dec_t_resource_claim_spec, dec_t_device_claim,
    dec_t_device_request, dec_t_exact_device_request, dec_t_device_sub_request,
    dec_t_capacity_requirements, dec_t_device_toleration, dec_t_device_constraint,
    dec_t_device_claim_configuration, dec_t_derived_attribute, dec_t_resource_claim_status,
    dec_t_allocation_result, dec_t_device_allocation_result, dec_t_request_allocation_result,
    dec_t_device_allocation_configuration, dec_t_consumer_reference,
    dec_t_resource_claim_template_spec, dec_t_device_taint_rule_spec, dec_t_device_taint_selector,
    dec_t_skip_node_operation;

static const struct dec_field dec_t_device_class_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.DeviceClassSpec", &dec_t_device_class_spec},
};
const struct dec_type dec_t_device_class = DEC_TYPE("DeviceClass", dec_t_device_class_fields);

static const struct dec_field dec_t_device_class_spec_fields[] = {
    {"config", DEC_ARR, DEC_OBJ, "[]v1.DeviceClassConfiguration",
     &dec_t_device_class_configuration},
    {"extendedResourceName", DEC_STR, 0, "string", NULL},
    {"selectors", DEC_ARR, DEC_OBJ, "[]v1.DeviceSelector", &dec_t_device_selector},
};
static const struct dec_type dec_t_device_class_spec =
    DEC_TYPE("DeviceClassSpec", dec_t_device_class_spec_fields);

static const struct dec_field dec_t_device_selector_fields[] = {
    {"cel", DEC_OBJ, 0, "v1.CELDeviceSelector", &dec_t_cel_device_selector},
};
static const struct dec_type dec_t_device_selector =
    DEC_TYPE("DeviceSelector", dec_t_device_selector_fields);

static const struct dec_field dec_t_cel_device_selector_fields[] = {
    {"expression", DEC_STR, 0, "string", NULL},
};
static const struct dec_type dec_t_cel_device_selector =
    DEC_TYPE("CELDeviceSelector", dec_t_cel_device_selector_fields);

static const struct dec_field dec_t_device_class_configuration_fields[] = {
    {"opaque", DEC_OBJ, 0, "v1.OpaqueDeviceConfiguration", &dec_t_opaque_config},
};
static const struct dec_type dec_t_device_class_configuration =
    DEC_TYPE("DeviceClassConfiguration", dec_t_device_class_configuration_fields);

static const struct dec_field dec_t_opaque_config_fields[] = {
    {"driver", DEC_STR, 0, "string", NULL},
    {"parameters", DEC_ANY, 0, "runtime.RawExtension", NULL},
};
static const struct dec_type dec_t_opaque_config =
    DEC_TYPE("OpaqueDeviceConfiguration", dec_t_opaque_config_fields);

static const struct dec_field dec_t_resource_slice_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.ResourceSliceSpec", &dec_t_resource_slice_spec},
};
const struct dec_type dec_t_resource_slice = DEC_TYPE("ResourceSlice", dec_t_resource_slice_fields);

static const struct dec_field dec_t_resource_slice_spec_fields[] = {
    {"allNodes", DEC_BOOL, 0, "bool", NULL},
    {"devices", DEC_ARR, DEC_OBJ, "[]v1.Device", &dec_t_device},
    {"driver", DEC_STR, 0, "string", NULL},
    {"nodeName", DEC_STR, 0, "string", NULL},
    {"nodeSelector", DEC_OBJ, 0, "v1.NodeSelector", &dec_t_node_selector},
    {"partitionTypeAttribute", DEC_STR, 0, "v1.FullyQualifiedName", NULL},
    {"perDeviceNodeSelection", DEC_BOOL, 0, "bool", NULL},
    {"pool", DEC_OBJ, 0, "v1.ResourcePool", &dec_t_resource_pool},
    {"sharedCounters", DEC_ARR, DEC_OBJ, "[]v1.CounterSet", &dec_t_counter_set},
    {"skipNodeOperations", DEC_ARR, DEC_OBJ, "[]v1.SkipNodeOperation", &dec_t_skip_node_operation},
};
static const struct dec_type dec_t_resource_slice_spec =
    DEC_TYPE("ResourceSliceSpec", dec_t_resource_slice_spec_fields);

static const struct dec_field dec_t_skip_node_operation_fields[] = {
    {"operation", DEC_STR, 0, "v1.NodeOperation", NULL},
};
static const struct dec_type dec_t_skip_node_operation =
    DEC_TYPE("SkipNodeOperation", dec_t_skip_node_operation_fields);

static const struct dec_field dec_t_resource_pool_fields[] = {
    {"generation", DEC_INT64, 0, "int64", NULL},
    {"name", DEC_STR, 0, "string", NULL},
    {"resourceSliceCount", DEC_INT64, 0, "int64", NULL},
};
static const struct dec_type dec_t_resource_pool =
    DEC_TYPE("ResourcePool", dec_t_resource_pool_fields);

static const struct dec_field dec_t_counter_set_fields[] = {
    {"counters", DEC_MAP, DEC_OBJ, "map[string]v1.Counter", &dec_t_counter},
    {"name", DEC_STR, 0, "string", NULL},
};
static const struct dec_type dec_t_counter_set = DEC_TYPE("CounterSet", dec_t_counter_set_fields);

static const struct dec_field dec_t_counter_fields[] = {
    {"value", DEC_QTY, 0, "resource.Quantity", NULL},
};
static const struct dec_type dec_t_counter = DEC_TYPE("Counter", dec_t_counter_fields);

static const struct dec_field dec_t_device_fields[] = {
    {"allNodes", DEC_BOOL, 0, "bool", NULL},
    {"allowMultipleAllocations", DEC_BOOL, 0, "bool", NULL},
    {"attributes", DEC_MAP, DEC_OBJ, "map[v1.QualifiedName]v1.DeviceAttribute",
     &dec_t_device_attribute},
    {"bindingConditions", DEC_ARR, DEC_STR, "[]string", NULL},
    {"bindingFailureConditions", DEC_ARR, DEC_STR, "[]string", NULL},
    {"bindsToNode", DEC_BOOL, 0, "bool", NULL},
    {"capacity", DEC_MAP, DEC_OBJ, "map[v1.QualifiedName]v1.DeviceCapacity",
     &dec_t_device_capacity},
    {"consumesCounters", DEC_ARR, DEC_OBJ, "[]v1.DeviceCounterConsumption",
     &dec_t_device_counter_consumption},
    {"name", DEC_STR, 0, "string", NULL},
    {"nodeAllocatableResources", DEC_MAP, DEC_OBJ, "map[v1.ResourceName]v1.NodeAllocatableResource",
     &dec_t_node_allocatable_resource},
    {"nodeName", DEC_STR, 0, "string", NULL},
    {"nodeSelector", DEC_OBJ, 0, "v1.NodeSelector", &dec_t_node_selector},
    {"taints", DEC_ARR, DEC_OBJ, "[]v1.DeviceTaint", &dec_t_device_taint},
};
static const struct dec_type dec_t_device = DEC_TYPE("Device", dec_t_device_fields);

static const struct dec_field dec_t_node_allocatable_resource_fields[] = {
    {"mapping", DEC_OBJ, 0, "v1.NodeAllocatableMapping", NULL},
    {"overhead", DEC_OBJ, 0, "v1.NodeAllocatableOverhead", NULL},
};
static const struct dec_type dec_t_node_allocatable_resource =
    DEC_TYPE("NodeAllocatableResource", dec_t_node_allocatable_resource_fields);

static const struct dec_field dec_t_device_attribute_fields[] = {
    {"bool", DEC_BOOL, 0, "bool", NULL},     {"bools", DEC_ARR, DEC_BOOL, "[]bool", NULL},
    {"int", DEC_INT64, 0, "int64", NULL},    {"ints", DEC_ARR, DEC_INT64, "[]int64", NULL},
    {"string", DEC_STR, 0, "string", NULL},  {"strings", DEC_ARR, DEC_STR, "[]string", NULL},
    {"version", DEC_STR, 0, "string", NULL}, {"versions", DEC_ARR, DEC_STR, "[]string", NULL},
};
static const struct dec_type dec_t_device_attribute =
    DEC_TYPE("DeviceAttribute", dec_t_device_attribute_fields);

static const struct dec_field dec_t_device_capacity_fields[] = {
    {"requestPolicy", DEC_OBJ, 0, "v1.CapacityRequestPolicy", &dec_t_capacity_request_policy},
    {"value", DEC_QTY, 0, "resource.Quantity", NULL},
};
static const struct dec_type dec_t_device_capacity =
    DEC_TYPE("DeviceCapacity", dec_t_device_capacity_fields);

static const struct dec_field dec_t_capacity_request_policy_fields[] = {
    {"default", DEC_QTY, 0, "resource.Quantity", NULL},
    {"validRange", DEC_OBJ, 0, "v1.CapacityRequestPolicyRange",
     &dec_t_capacity_request_policy_range},
    {"validValues", DEC_ARR, DEC_QTY, "[]resource.Quantity", NULL},
};
static const struct dec_type dec_t_capacity_request_policy =
    DEC_TYPE("CapacityRequestPolicy", dec_t_capacity_request_policy_fields);

static const struct dec_field dec_t_capacity_request_policy_range_fields[] = {
    {"max", DEC_QTY, 0, "resource.Quantity", NULL},
    {"min", DEC_QTY, 0, "resource.Quantity", NULL},
    {"step", DEC_QTY, 0, "resource.Quantity", NULL},
};
static const struct dec_type dec_t_capacity_request_policy_range =
    DEC_TYPE("CapacityRequestPolicyRange", dec_t_capacity_request_policy_range_fields);

static const struct dec_field dec_t_device_counter_consumption_fields[] = {
    {"compatibilityGroups", DEC_ARR, DEC_STR, "[]string", NULL},
    {"counterSet", DEC_STR, 0, "string", NULL},
    {"counters", DEC_MAP, DEC_OBJ, "map[string]v1.Counter", &dec_t_counter},
};
static const struct dec_type dec_t_device_counter_consumption =
    DEC_TYPE("DeviceCounterConsumption", dec_t_device_counter_consumption_fields);

static const struct dec_field dec_t_device_taint_fields[] = {
    {"effect", DEC_STR, 0, "v1.DeviceTaintEffect", NULL},
    {"key", DEC_STR, 0, "string", NULL},
    {"timeAdded", DEC_STR, 0, "v1.Time", NULL},
    {"value", DEC_STR, 0, "string", NULL},
};
static const struct dec_type dec_t_device_taint =
    DEC_TYPE("DeviceTaint", dec_t_device_taint_fields);

static const struct dec_field dec_t_resource_claim_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.ResourceClaimSpec", &dec_t_resource_claim_spec},
    {"status", DEC_OBJ, 0, "v1.ResourceClaimStatus", &dec_t_resource_claim_status},
};
const struct dec_type dec_t_resource_claim = DEC_TYPE("ResourceClaim", dec_t_resource_claim_fields);

static const struct dec_field dec_t_resource_claim_spec_fields[] = {
    {"devices", DEC_OBJ, 0, "v1.DeviceClaim", &dec_t_device_claim},
};
static const struct dec_type dec_t_resource_claim_spec =
    DEC_TYPE("ResourceClaimSpec", dec_t_resource_claim_spec_fields);

static const struct dec_field dec_t_device_claim_fields[] = {
    {"config", DEC_ARR, DEC_OBJ, "[]v1.DeviceClaimConfiguration",
     &dec_t_device_claim_configuration},
    {"constraints", DEC_ARR, DEC_OBJ, "[]v1.DeviceConstraint", &dec_t_device_constraint},
    {"requests", DEC_ARR, DEC_OBJ, "[]v1.DeviceRequest", &dec_t_device_request},
};
static const struct dec_type dec_t_device_claim =
    DEC_TYPE("DeviceClaim", dec_t_device_claim_fields);

static const struct dec_field dec_t_device_request_fields[] = {
    {"exactly", DEC_OBJ, 0, "v1.ExactDeviceRequest", &dec_t_exact_device_request},
    {"firstAvailable", DEC_ARR, DEC_OBJ, "[]v1.DeviceSubRequest", &dec_t_device_sub_request},
    {"name", DEC_STR, 0, "string", NULL},
};
static const struct dec_type dec_t_device_request =
    DEC_TYPE("DeviceRequest", dec_t_device_request_fields);

static const struct dec_field dec_t_exact_device_request_fields[] = {
    {"adminAccess", DEC_BOOL, 0, "bool", NULL},
    {"allocationMode", DEC_STR, 0, "v1.DeviceAllocationMode", NULL},
    {"capacity", DEC_OBJ, 0, "v1.CapacityRequirements", &dec_t_capacity_requirements},
    {"count", DEC_INT64, 0, "int64", NULL},
    {"derivedAttributes", DEC_ARR, DEC_OBJ, "[]v1.DeviceDerivedAttribute",
     &dec_t_derived_attribute},
    {"deviceClassName", DEC_STR, 0, "string", NULL},
    {"selectors", DEC_ARR, DEC_OBJ, "[]v1.DeviceSelector", &dec_t_device_selector},
    {"tolerations", DEC_ARR, DEC_OBJ, "[]v1.DeviceToleration", &dec_t_device_toleration},
};
static const struct dec_type dec_t_exact_device_request =
    DEC_TYPE("ExactDeviceRequest", dec_t_exact_device_request_fields);

static const struct dec_field dec_t_device_sub_request_fields[] = {
    {"allocationMode", DEC_STR, 0, "v1.DeviceAllocationMode", NULL},
    {"capacity", DEC_OBJ, 0, "v1.CapacityRequirements", &dec_t_capacity_requirements},
    {"count", DEC_INT64, 0, "int64", NULL},
    {"derivedAttributes", DEC_ARR, DEC_OBJ, "[]v1.DeviceDerivedAttribute",
     &dec_t_derived_attribute},
    {"deviceClassName", DEC_STR, 0, "string", NULL},
    {"name", DEC_STR, 0, "string", NULL},
    {"selectors", DEC_ARR, DEC_OBJ, "[]v1.DeviceSelector", &dec_t_device_selector},
    {"tolerations", DEC_ARR, DEC_OBJ, "[]v1.DeviceToleration", &dec_t_device_toleration},
};
static const struct dec_type dec_t_device_sub_request =
    DEC_TYPE("DeviceSubRequest", dec_t_device_sub_request_fields);

static const struct dec_field dec_t_derived_attribute_fields[] = {
    {"expression", DEC_STR, 0, "string", NULL},
    {"name", DEC_STR, 0, "v1.FullyQualifiedName", NULL},
};
static const struct dec_type dec_t_derived_attribute =
    DEC_TYPE("DeviceDerivedAttribute", dec_t_derived_attribute_fields);

static const struct dec_field dec_t_capacity_requirements_fields[] = {
    {"requests", DEC_MAP, DEC_QTY, "map[v1.QualifiedName]resource.Quantity", NULL},
};
static const struct dec_type dec_t_capacity_requirements =
    DEC_TYPE("CapacityRequirements", dec_t_capacity_requirements_fields);

static const struct dec_field dec_t_device_toleration_fields[] = {
    {"effect", DEC_STR, 0, "v1.DeviceTaintEffect", NULL},
    {"key", DEC_STR, 0, "string", NULL},
    {"operator", DEC_STR, 0, "v1.DeviceTolerationOperator", NULL},
    {"tolerationSeconds", DEC_INT64, 0, "int64", NULL},
    {"value", DEC_STR, 0, "string", NULL},
};
static const struct dec_type dec_t_device_toleration =
    DEC_TYPE("DeviceToleration", dec_t_device_toleration_fields);

static const struct dec_field dec_t_device_constraint_fields[] = {
    {"distinctAttribute", DEC_STR, 0, "v1.FullyQualifiedName", NULL},
    {"matchAttribute", DEC_STR, 0, "v1.FullyQualifiedName", NULL},
    {"requests", DEC_ARR, DEC_STR, "[]string", NULL},
};
static const struct dec_type dec_t_device_constraint =
    DEC_TYPE("DeviceConstraint", dec_t_device_constraint_fields);

static const struct dec_field dec_t_device_claim_configuration_fields[] = {
    {"opaque", DEC_OBJ, 0, "v1.OpaqueDeviceConfiguration", &dec_t_opaque_config},
    {"requests", DEC_ARR, DEC_STR, "[]string", NULL},
};
static const struct dec_type dec_t_device_claim_configuration =
    DEC_TYPE("DeviceClaimConfiguration", dec_t_device_claim_configuration_fields);

static const struct dec_field dec_t_resource_claim_status_fields[] = {
    {"allocation", DEC_OBJ, 0, "v1.AllocationResult", &dec_t_allocation_result},
    {"devices", DEC_ARR, DEC_OBJ, "[]v1.AllocatedDeviceStatus", NULL},
    {"reservedFor", DEC_ARR, DEC_OBJ, "[]v1.ResourceClaimConsumerReference",
     &dec_t_consumer_reference},
};
static const struct dec_type dec_t_resource_claim_status =
    DEC_TYPE("ResourceClaimStatus", dec_t_resource_claim_status_fields);

static const struct dec_field dec_t_allocation_result_fields[] = {
    {"allocationTimestamp", DEC_STR, 0, "v1.Time", NULL},
    {"devices", DEC_OBJ, 0, "v1.DeviceAllocationResult", &dec_t_device_allocation_result},
    {"nodeSelector", DEC_OBJ, 0, "v1.NodeSelector", &dec_t_node_selector},
};
static const struct dec_type dec_t_allocation_result =
    DEC_TYPE("AllocationResult", dec_t_allocation_result_fields);

static const struct dec_field dec_t_device_allocation_result_fields[] = {
    {"config", DEC_ARR, DEC_OBJ, "[]v1.DeviceAllocationConfiguration",
     &dec_t_device_allocation_configuration},
    {"results", DEC_ARR, DEC_OBJ, "[]v1.DeviceRequestAllocationResult",
     &dec_t_request_allocation_result},
};
static const struct dec_type dec_t_device_allocation_result =
    DEC_TYPE("DeviceAllocationResult", dec_t_device_allocation_result_fields);

static const struct dec_field dec_t_request_allocation_result_fields[] = {
    {"adminAccess", DEC_BOOL, 0, "bool", NULL},
    {"bindingConditions", DEC_ARR, DEC_STR, "[]string", NULL},
    {"bindingFailureConditions", DEC_ARR, DEC_STR, "[]string", NULL},
    {"consumedCapacity", DEC_MAP, DEC_QTY, "map[v1.QualifiedName]resource.Quantity", NULL},
    {"device", DEC_STR, 0, "string", NULL},
    {"driver", DEC_STR, 0, "string", NULL},
    {"pool", DEC_STR, 0, "string", NULL},
    {"request", DEC_STR, 0, "string", NULL},
    {"shareID", DEC_STR, 0, "types.UID", NULL},
    {"skipNodeOperations", DEC_ARR, DEC_OBJ, "[]v1.SkipNodeOperation", &dec_t_skip_node_operation},
    {"tolerations", DEC_ARR, DEC_OBJ, "[]v1.DeviceToleration", &dec_t_device_toleration},
};
static const struct dec_type dec_t_request_allocation_result =
    DEC_TYPE("DeviceRequestAllocationResult", dec_t_request_allocation_result_fields);

static const struct dec_field dec_t_device_allocation_configuration_fields[] = {
    {"opaque", DEC_OBJ, 0, "v1.OpaqueDeviceConfiguration", &dec_t_opaque_config},
    {"requests", DEC_ARR, DEC_STR, "[]string", NULL},
    {"source", DEC_STR, 0, "v1.AllocationConfigSource", NULL},
};
static const struct dec_type dec_t_device_allocation_configuration =
    DEC_TYPE("DeviceAllocationConfiguration", dec_t_device_allocation_configuration_fields);

static const struct dec_field dec_t_consumer_reference_fields[] = {
    {"apiGroup", DEC_STR, 0, "string", NULL},
    {"name", DEC_STR, 0, "string", NULL},
    {"resource", DEC_STR, 0, "string", NULL},
    {"uid", DEC_STR, 0, "types.UID", NULL},
};
static const struct dec_type dec_t_consumer_reference =
    DEC_TYPE("ResourceClaimConsumerReference", dec_t_consumer_reference_fields);

static const struct dec_field dec_t_resource_claim_template_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.ResourceClaimTemplateSpec", &dec_t_resource_claim_template_spec},
};
const struct dec_type dec_t_resource_claim_template =
    DEC_TYPE("ResourceClaimTemplate", dec_t_resource_claim_template_fields);

static const struct dec_field dec_t_resource_claim_template_spec_fields[] = {
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.ResourceClaimSpec", &dec_t_resource_claim_spec},
};
static const struct dec_type dec_t_resource_claim_template_spec =
    DEC_TYPE("ResourceClaimTemplateSpec", dec_t_resource_claim_template_spec_fields);

static const struct dec_field dec_t_device_taint_rule_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.DeviceTaintRuleSpec", &dec_t_device_taint_rule_spec},
    {"status", DEC_OBJ, 0, "v1.DeviceTaintRuleStatus", NULL},
};
const struct dec_type dec_t_device_taint_rule =
    DEC_TYPE("DeviceTaintRule", dec_t_device_taint_rule_fields);

static const struct dec_field dec_t_device_taint_rule_spec_fields[] = {
    {"deviceSelector", DEC_OBJ, 0, "v1.DeviceTaintSelector", &dec_t_device_taint_selector},
    {"taint", DEC_OBJ, 0, "v1.DeviceTaint", &dec_t_device_taint},
};
static const struct dec_type dec_t_device_taint_rule_spec =
    DEC_TYPE("DeviceTaintRuleSpec", dec_t_device_taint_rule_spec_fields);

static const struct dec_field dec_t_device_taint_selector_fields[] = {
    {"device", DEC_STR, 0, "string", NULL},
    {"driver", DEC_STR, 0, "string", NULL},
    {"pool", DEC_STR, 0, "string", NULL},
};
static const struct dec_type dec_t_device_taint_selector =
    DEC_TYPE("DeviceTaintSelector", dec_t_device_taint_selector_fields);

/* ---- helpers ---- */

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

/* fail at obj[key] (pushed onto the path) with a message */
static int fail_key(struct dec *d, const json_t *obj, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail_key(struct dec *d, const json_t *obj, const char *key, const char *fmt, ...)
{
    char msg[ERR_MSG_MAX];
    size_t old = dec_push(d, key);
    va_list ap;
    int rc;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    rc = dec_fail(d, json_object_get(obj, key), obj, "%s", msg);
    dec_pop(d, old);
    return rc;
}

/* field.TooMany's words for a list of n items over max */
static int too_many(struct dec *d, const json_t *obj, const char *key, int max)
{
    return fail_key(d, obj, key, "Too many: %zu: must have at most %d items",
                    json_array_size(json_object_get(obj, key)), max);
}

/* an "Invalid value: "X": msg" of obj[key] */
static int invalid(struct dec *d, const json_t *obj, const char *key, const char *value,
                   const char *msg)
{
    char q[600];

    return fail_key(d, obj, key, "Invalid value: %s: %s", dec_quote(value, q, sizeof(q)), msg);
}

/* a required string obj[key] ("Required value" when unset or empty), copied */
static int required_string(struct dec *d, const json_t *obj, const char *key, const char **out)
{
    int rc = dec_string(d, obj, key, out, "");

    if (!rc && !**out)
        rc = fail_key(d, obj, key, "Required value");
    return rc;
}

/* name checks by kube/labels: DNS label or subdomain; 0 or the failure at obj[key] */
static int check_label(struct dec *d, const json_t *obj, const char *key, const char *s)
{
    struct err e;

    err_clear(&e);
    if (kube_dns_label_validate(s, &e))
        return invalid(d, obj, key, s, e.msg);
    return 0;
}

static int check_subdomain(struct dec *d, const json_t *obj, const char *key, const char *s)
{
    struct err e;

    err_clear(&e);
    if (kube_dns_subdomain_validate(s, &e))
        return invalid(d, obj, key, s, e.msg);
    return 0;
}

/* ValidateCSIDriverName: the driver names of slices, results and opaque configurations */
static int check_driver(struct dec *d, const json_t *obj, const char *key, const char *s)
{
    if (!*s)
        return fail_key(d, obj, key, "Required value");
    if (strlen(s) > DRA_DRIVER_NAME_MAX) {
        return fail_key(d, obj, key, "Too long: must be no more than %d characters",
                        DRA_DRIVER_NAME_MAX);
    }
    return check_subdomain(d, obj, key, s);
}

/* validatePoolName: DNS subdomains separated by '/', at most 253 characters */
static int check_pool_name(struct dec *d, const json_t *obj, const char *key, const char *s)
{
    const char *p = s;
    char part[DRA_POOL_NAME_MAX + 2];
    int rc;

    if (!*s)
        return fail_key(d, obj, key, "Required value");
    if (strlen(s) > DRA_POOL_NAME_MAX)
        return fail_key(d, obj, key, "Too long: may not be more than 253 bytes");
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);

        memcpy(part, p, n);
        part[n] = '\0';
        if ((rc = check_subdomain(d, obj, key, part)))
            return rc;
        if (!slash)
            return 0;
        p = slash + 1;
    }
}

/* the text the API server's Quantity parses for v (kube_quantity_json_text: a number as
 * kubectl sends it, a string trimmed, null "0"), copied into the arena; NULL for another
 * JSON type or out of memory */
static const char *qty_text(struct dec *d, const json_t *v)
{
    char num[KUBE_JSON_NUMBER_MAX];
    const char *t;
    size_t n;

    if (!(t = kube_quantity_json_text(v, num, &n)))
        return NULL;
    return arena_strndup_shared(d->a, t, n);
}

/* the quantity v (parent[key], key NULL: an element at the current path) into out */
static int quantity(struct dec *d, const json_t *parent, const char *key, const json_t *v,
                    struct kube_dra_quantity *out)
{
    struct err qerr;
    size_t old = key ? dec_push(d, key) : d->plen;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    /* null is the zero Quantity in a map or a list (a pointer field's null is skipped) */
    if (!json_is_string(v) && !json_is_number(v) && !json_is_null(v)) {
        rc = dec_type_error(d, parent, key, v, "resource.Quantity");
    } else if (!(out->text = qty_text(d, v))) {
        rc = dec_nomem(d);
    } else if (kube_quantity_parse_nano(out->text, &out->nano, &qerr)) {
        rc = dec_fail(d, v, parent, "%s", qerr.msg);
    }
    if (key)
        dec_pop(d, old);
    return rc;
}

/* a required quantity parent[key] */
static int quantity_required(struct dec *d, const json_t *parent, const char *key,
                             struct kube_dra_quantity *out)
{
    const json_t *v = json_object_get(parent, key);

    if (!v || json_is_null(v)) {
        /* the zero Quantity: "0" */
        memset(out, 0, sizeof(*out));
        out->text = "0";
        return 0;
    }
    return quantity(d, parent, key, v, out);
}

/* an optional bool as -1 unset, 0, 1 */
static int tristate(struct dec *d, const json_t *obj, const char *key, int8_t *out)
{
    const json_t *v = json_object_get(obj, key);

    *out = -1;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return dec_type_error(d, obj, key, v, "bool");
    *out = json_is_true(v) ? 1 : 0;
    return 0;
}

/* validateQualifiedName of an attribute or capacity name: "id" or "domain/id" */
static int check_qualified(struct dec *d, const json_t *map, const char *name, const json_t *v)
{
    const char *slash = strchr(name, '/');
    const char *id = slash ? slash + 1 : name;
    size_t i, n = strlen(id);
    char q[300];
    bool ok = n > 0 && n <= 64 &&
              ((id[0] >= 'a' && id[0] <= 'z') || (id[0] >= 'A' && id[0] <= 'Z') || id[0] == '_');

    for (i = 1; ok && i < n; i++)
        ok = (id[i] >= 'a' && id[i] <= 'z') || (id[i] >= 'A' && id[i] <= 'Z') ||
             (id[i] >= '0' && id[i] <= '9') || id[i] == '_';
    if (!*name)
        return dec_fail(d, v, map, "Required value: name required");
    if (!ok)
        return dec_fail(d, v, map,
                        "Invalid value: %s: a valid C identifier must start with alphabetic "
                        "character or '_', followed by a string of alphanumeric characters or "
                        "'_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for "
                        "validation is '[A-Za-z_][A-Za-z0-9_]*')",
                        dec_quote(id, q, sizeof(q)));
    if (slash) {
        char dom[256];
        struct err e;
        size_t dn = (size_t)(slash - name);

        if (dn == 0 || dn >= sizeof(dom))
            return dec_fail(d, v, map, "Required value: the domain must not be empty");
        memcpy(dom, name, dn);
        dom[dn] = '\0';
        err_clear(&e);
        if (kube_dns_subdomain_validate(dom, &e))
            return dec_fail(d, v, map, "Invalid value: %s: %s", dec_quote(dom, q, sizeof(q)),
                            e.msg);
    }
    return 0;
}

/* ---- CEL selectors ---- */

struct sel_ctx {
    bool stored; /* from a live cluster: the API server accepted it once */
};

/* one DeviceSelector: cel.expression compiled as a new object's selector is */
static int selector_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    struct kube_dra_selector *out = slot;
    const struct sel_ctx *sc = ctx;
    const json_t *cel;
    const char *expr;
    size_t old;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((rc = dec_object(d, v, "cel", &cel)))
        return rc;
    if (!cel)
        return fail_key(d, v, "cel", "Required value");
    old = dec_push(d, "cel");
    rc = dec_string(d, cel, "expression", &expr, "");
    if (!rc) {
        out->expression = expr;
        out->line = dec_line(d, json_object_get(cel, "expression"), cel);
    }
    if (!rc && !sc->stored && d->opts && d->opts->check) {
        struct cel_compile_opts o = {.env = CEL_ENV_NEW};
        struct cel_compile_error cerr = {0};
        struct cel_program *p = NULL;
        char q[256];

        if (!cel_selector_length_ok(strlen(expr))) {
            rc = fail_key(d, cel, "expression", "Too long: may not be more than 10240 bytes");
        } else {
            int crc = cel_compile(expr, strlen(expr), &o, &p, &cerr);

            if (crc == -ENOMEM) {
                rc = dec_nomem(d);
            } else if (crc < 0 && cerr.has_max_cost) {
                rc = fail_key(d, cel, "expression", "Forbidden: too complex, exceeds cost limit");
            } else if (crc < 0 && !*expr) {
                rc = fail_key(d, cel, "expression", "Required value: %s",
                              cerr.detail ? cerr.detail : "");
            } else if (crc < 0) {
                size_t o2 = dec_push(d, "expression");

                const char *det = cerr.detail ? cerr.detail : "compilation failed";
                const char *nl = strchr(det, '\n');

                /* one line: the API server's text up to its caret display */
                rc = dec_fail(d, json_object_get(cel, "expression"), cel, "Invalid value: %s: %.*s",
                              dec_quote(expr, q, sizeof(q)),
                              (int)(nl ? (size_t)(nl - det) : strlen(det)), det);
                dec_pop(d, o2);
            }
            cel_program_free(p);
            cel_compile_error_release(&cerr);
        }
    }
    dec_pop(d, old);
    return rc;
}

static int selectors(struct dec *d, const json_t *obj, bool stored, struct kube_dra_selector **out,
                     size_t *n)
{
    struct sel_ctx sc = {stored};
    const json_t *arr = json_object_get(obj, "selectors");
    int rc = 0;

    if (json_array_size(arr) > DRA_SELECTORS_MAX)
        return too_many(d, obj, "selectors", DRA_SELECTORS_MAX);
    *out = dec_list(d, obj, "selectors", JSON_OBJECT, sizeof(**out), selector_elem, &sc, n, &rc);
    return rc;
}

/* ---- DeviceClass ---- */

int kube_device_class_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                             struct kube_device_class *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *spec;
    const char *ts = NULL;
    size_t old;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_begin(&d, obj, &dec_t_device_class, &out->source_line, &out->source_file)) ||
        (rc = dec_named(&d, obj, &meta, &out->name, NULL)))
        return rc;
    if (meta && (rc = dec_string(&d, meta, "uid", &out->uid, "")))
        return rc;
    if (meta && (rc = dec_string(&d, meta, "creationTimestamp", &ts, NULL)))
        return rc;
    if (ts) {
        time_t t;

        if (!kube_rfc3339_parse(ts, &t))
            out->creation_unix_nano = (int64_t)t * 1000000000;
    }
    if ((rc = dec_object(&d, obj, "spec", &spec)) || !spec)
        return rc;
    old = dec_push(&d, "spec");
    rc = selectors(&d, spec, o == NULL, &out->selectors, &out->nselectors);
    out->nconfig = json_array_size(json_object_get(spec, "config"));
    if (!rc)
        rc = dec_string(&d, spec, "extendedResourceName", &out->extended_resource_name, NULL);
    if (!rc && out->extended_resource_name) {
        const char *n = out->extended_resource_name;
        struct err e;

        err_clear(&e);
        /* IsExtendedResourceName: a domain-prefixed name outside kubernetes.io, not
         * requests.*, and valid as a quota resource name */
        if (!strchr(n, '/') || !strncmp(n, "kubernetes.io/", 14) || strstr(n, ".kubernetes.io/") ||
            !strncmp(n, "requests.", 9) || kube_label_key_validate(n, &e))
            rc = invalid(&d, spec, "extendedResourceName", n,
                         "must be a valid extended resource name");
    }
    dec_pop(&d, old);
    return rc;
}

/* ---- ResourceSlice ---- */

/* a map of counters (name -> {value}) */
static int counters_map(struct dec *d, const json_t *obj, const char *key,
                        struct kube_dra_counter **out, size_t *n)
{
    const json_t *m, *v;
    const char *k;
    size_t old, i = 0;
    int rc;

    *out = NULL;
    *n = 0;
    if ((rc = dec_object(d, obj, key, &m)) || !m)
        return rc;
    if (!json_object_size(m))
        return 0;
    if (!(*out = arena_alloc(d->a, json_object_size(m) * sizeof(**out))))
        return dec_nomem(d);
    old = dec_push(d, key);
    json_object_foreach((json_t *)m, k, v)
    {
        size_t o2 = dec_push(d, k);

        if (!json_is_object(v))
            rc = dec_type_error(d, m, NULL, v, "v1.Counter");
        else if (!(rc = check_label(d, m, k, k)))
            rc = quantity_required(d, v, "value", &(*out)[i].value);
        (*out)[i].name = arena_strdup(d->a, k);
        dec_pop(d, o2);
        if (rc)
            break;
        if (!(*out)[i].name) {
            rc = dec_nomem(d);
            break;
        }
        i++;
    }
    dec_pop(d, old);
    *n = i;
    return rc;
}

static int counter_set_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    struct kube_dra_counters *out = slot;
    int rc;

    (void)ctx;
    memset(out, 0, sizeof(*out));
    if ((rc = required_string(d, v, "name", &out->name)) ||
        (rc = check_label(d, v, "name", out->name)))
        return rc;
    if (!json_object_size(json_object_get(v, "counters")))
        return fail_key(d, v, "counters", "Required value");
    return counters_map(d, v, "counters", &out->counters, &out->ncounters);
}

static int consumption_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    struct kube_dra_counters *out = slot;
    int rc;

    (void)ctx;
    memset(out, 0, sizeof(*out));
    if ((rc = required_string(d, v, "counterSet", &out->name)) ||
        (rc = check_label(d, v, "counterSet", out->name)))
        return rc;
    if (!json_object_size(json_object_get(v, "counters")))
        return fail_key(d, v, "counters", "Required value");
    out->ncompatibility_groups = json_array_size(json_object_get(v, "compatibilityGroups"));
    return counters_map(d, v, "counters", &out->counters, &out->ncounters);
}

static int taint_fields(struct dec *d, const json_t *v, struct kube_dra_taint *out)
{
    struct err e;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((rc = dec_string(d, v, "key", &out->key, "")) ||
        (rc = dec_string(d, v, "value", &out->value, "")) ||
        (rc = dec_string(d, v, "effect", &out->effect, "")))
        return rc;
    err_clear(&e);
    if (kube_label_key_validate(out->key, &e))
        return *out->key ? invalid(d, v, "key", out->key, e.msg)
                         : fail_key(d, v, "key", "Required value");
    if (*out->value && kube_label_value_validate(out->value, &e))
        return invalid(d, v, "value", out->value, e.msg);
    if (!*out->effect)
        return fail_key(d, v, "effect", "Required value");
    if (strcmp(out->effect, "NoSchedule") && strcmp(out->effect, "NoExecute") &&
        strcmp(out->effect, "None")) {
        char q[200];

        return fail_key(d, v, "effect",
                        "Unsupported value: %s: supported values: \"NoExecute\", \"NoSchedule\", "
                        "\"None\"",
                        dec_quote(out->effect, q, sizeof(q)));
    }
    return 0;
}

static int taint_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    (void)ctx;
    return taint_fields(d, v, slot);
}

static int attribute(struct dec *d, const json_t *map, const char *name, const json_t *v,
                     struct kube_dra_attribute *out)
{
    static const char *const kinds[] = {"bool",  "int",  "string",  "version",
                                        "bools", "ints", "strings", "versions"};
    const json_t *x;
    size_t i, nset = 0;
    int64_t n;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!json_is_object(v))
        return dec_type_error(d, map, NULL, v, "v1.DeviceAttribute");
    if ((rc = check_qualified(d, map, name, v)))
        return rc;
    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        x = json_object_get(v, kinds[i]);
        if (x && !json_is_null(x))
            nset++;
    }
    if (nset != 1)
        return dec_fail(d, v, map, "Invalid value: %s: exactly one value must be specified",
                        nset ? "{...}" : "\"\"");
    if ((x = json_object_get(v, "bool")) && !json_is_null(x)) {
        if (!json_is_boolean(x))
            return dec_type_error(d, v, "bool", x, "bool");
        out->type = KUBE_DRA_BOOL;
        out->b = json_is_true(x);
    } else if ((x = json_object_get(v, "int")) && !json_is_null(x)) {
        if (!dec_json_int64(x, &n))
            return dec_type_error(d, v, "int", x, "int64");
        out->type = KUBE_DRA_INT;
        out->i = n;
    } else if ((x = json_object_get(v, "string")) && !json_is_null(x)) {
        if ((rc = dec_string(d, v, "string", &out->s, "")))
            return rc;
        out->type = KUBE_DRA_STRING;
        if (strlen(out->s) > DRA_ATTRIBUTE_VALUE_MAX)
            return fail_key(d, v, "string", "Too long: may not be more than 64 bytes");
    } else if ((x = json_object_get(v, "version")) && !json_is_null(x)) {
        if ((rc = dec_string(d, v, "version", &out->s, "")))
            return rc;
        out->type = KUBE_DRA_VERSION;
    } else {
        out->type = KUBE_DRA_LIST;
    }
    out->name = arena_strdup(d->a, name);
    return out->name ? 0 : dec_nomem(d);
}

static int capacity_policy(struct dec *d, const json_t *v, struct kube_dra_capacity_policy **out)
{
    struct kube_dra_capacity_policy *p;
    const json_t *vv, *rg;
    size_t old, i;
    int rc = 0;

    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_object(v))
        return dec_type_error(d, NULL, NULL, v, "v1.CapacityRequestPolicy");
    if (!(p = arena_alloc(d->a, sizeof(*p))))
        return dec_nomem(d);
    memset(p, 0, sizeof(*p));
    old = dec_push(d, "requestPolicy");
    if (json_object_get(v, "default") && !json_is_null(json_object_get(v, "default"))) {
        p->has_default = true;
        rc = quantity(d, v, "default", json_object_get(v, "default"), &p->def);
    }
    vv = json_object_get(v, "validValues");
    if (!rc && json_is_array(vv) && json_array_size(vv)) {
        size_t o2 = dec_push(d, "validValues");

        if (!(p->valid_values = arena_alloc(d->a, json_array_size(vv) * sizeof(*p->valid_values))))
            rc = dec_nomem(d);
        for (i = 0; !rc && i < json_array_size(vv); i++) {
            size_t o3 = dec_index(d, i);

            rc = quantity(d, vv, NULL, json_array_get(vv, i), &p->valid_values[i]);
            dec_pop(d, o3);
        }
        p->nvalid_values = i;
        dec_pop(d, o2);
    }
    rg = json_object_get(v, "validRange");
    if (!rc && json_is_object(rg)) {
        size_t o2 = dec_push(d, "validRange");

        p->has_range = true;
        if (json_object_get(rg, "min") && !json_is_null(json_object_get(rg, "min"))) {
            p->has_min = true;
            rc = quantity(d, rg, "min", json_object_get(rg, "min"), &p->min);
        }
        if (!rc && json_object_get(rg, "max") && !json_is_null(json_object_get(rg, "max"))) {
            p->has_max = true;
            rc = quantity(d, rg, "max", json_object_get(rg, "max"), &p->max);
        }
        if (!rc && json_object_get(rg, "step") && !json_is_null(json_object_get(rg, "step"))) {
            p->has_step = true;
            rc = quantity(d, rg, "step", json_object_get(rg, "step"), &p->step);
        }
        dec_pop(d, o2);
    }
    dec_pop(d, old);
    *out = p;
    return rc;
}

static int device_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    struct kube_dra_device *out = slot;
    const bool *per_device = ctx;
    const json_t *m, *x, *ns;
    const char *k;
    size_t old, i;
    int nset = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    out->allow_multiple_allocations = -1;
    if ((rc = required_string(d, v, "name", &out->name)) ||
        (rc = check_label(d, v, "name", out->name)))
        return rc;
    /* attributes */
    if ((rc = dec_object(d, v, "attributes", &m)))
        return rc;
    if (json_object_size(m)) {
        if (!(out->attributes = arena_alloc(d->a, json_object_size(m) * sizeof(*out->attributes))))
            return dec_nomem(d);
        old = dec_push(d, "attributes");
        i = 0;
        json_object_foreach((json_t *)m, k, x)
        {
            size_t o2 = dec_push(d, k);

            rc = attribute(d, m, k, x, &out->attributes[i++]);
            dec_pop(d, o2);
            if (rc)
                break;
        }
        dec_pop(d, old);
        out->nattributes = i;
        if (rc)
            return rc;
    }
    /* capacity */
    if ((rc = dec_object(d, v, "capacity", &m)))
        return rc;
    if (json_object_size(m)) {
        if (!(out->capacity = arena_alloc(d->a, json_object_size(m) * sizeof(*out->capacity))))
            return dec_nomem(d);
        old = dec_push(d, "capacity");
        i = 0;
        json_object_foreach((json_t *)m, k, x)
        {
            size_t o2 = dec_push(d, k);
            struct kube_dra_capacity *c = &out->capacity[i++];

            memset(c, 0, sizeof(*c));
            if (!json_is_object(x))
                rc = dec_type_error(d, m, NULL, x, "v1.DeviceCapacity");
            if (!rc)
                rc = check_qualified(d, m, k, x);
            if (!rc)
                rc = quantity_required(d, x, "value", &c->value);
            if (!rc)
                rc = capacity_policy(d, json_object_get(x, "requestPolicy"), &c->policy);
            if (!rc && !(c->name = arena_strdup(d->a, k)))
                rc = dec_nomem(d);
            dec_pop(d, o2);
            if (rc)
                break;
        }
        dec_pop(d, old);
        out->ncapacity = i;
        if (rc)
            return rc;
    }
    out->consumes_counters =
        dec_list(d, v, "consumesCounters", JSON_OBJECT, sizeof(*out->consumes_counters),
                 consumption_elem, NULL, &out->nconsumes_counters, &rc);
    if (rc)
        return rc;
    out->taints = dec_list(d, v, "taints", JSON_OBJECT, sizeof(*out->taints), taint_elem, NULL,
                           &out->ntaints, &rc);
    if (rc || (rc = tristate(d, v, "allowMultipleAllocations", &out->allow_multiple_allocations)))
        return rc;
    {
        int8_t b;

        if ((rc = tristate(d, v, "bindsToNode", &b)))
            return rc;
        out->binds_to_node = b > 0;
    }
    out->binding_conditions = dec_list(d, v, "bindingConditions", JSON_STRING, sizeof(char *),
                                       dec_str_elem, NULL, &out->nbinding_conditions, &rc);
    if (rc)
        return rc;
    out->binding_failure_conditions =
        dec_list(d, v, "bindingFailureConditions", JSON_STRING, sizeof(char *), dec_str_elem, NULL,
                 &out->nbinding_failure_conditions, &rc);
    if (rc)
        return rc;
    out->nnode_allocatable = json_object_size(json_object_get(v, "nodeAllocatableResources"));
    /* perDeviceNodeSelection */
    if ((rc = dec_string(d, v, "nodeName", &out->node_name, "")))
        return rc;
    {
        int8_t all;

        if ((rc = tristate(d, v, "allNodes", &all)))
            return rc;
        out->all_nodes = all > 0;
        ns = json_object_get(v, "nodeSelector");
        if (!*per_device) {
            if (json_object_get(v, "nodeName") || all >= 0 || (ns && !json_is_null(ns)))
                return dec_fail(d, v, NULL,
                                "Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` "
                                "can only be set if `perDeviceNodeSelection` is set to true in "
                                "the ResourceSlice spec");
            return 0;
        }
        if (json_object_get(v, "nodeName") && !json_is_null(json_object_get(v, "nodeName"))) {
            if (!*out->node_name)
                return invalid(d, v, "nodeName", "", "must not be empty");
            nset++;
        }
        if (ns && !json_is_null(ns)) {
            if (!(out->node_selector = arena_alloc(d->a, sizeof(*out->node_selector))))
                return dec_nomem(d);
            old = dec_push(d, "nodeSelector");
            rc = dec_node_selector(d, ns, out->node_selector);
            dec_pop(d, old);
            if (rc)
                return rc;
            nset++;
        }
        if (all == 0)
            return invalid(d, v, "allNodes", "false", "must be either unset or set to true");
        if (all > 0)
            nset++;
        if (nset != 1)
            return dec_fail(d, v, NULL,
                            "%s: exactly one of `nodeName`, `nodeSelector`, or "
                            "`allNodes` is required when `perDeviceNodeSelection` is "
                            "set to true in the ResourceSlice spec",
                            nset ? "Invalid value" : "Required value");
    }
    return 0;
}

int kube_resource_slice_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                               struct kube_resource_slice *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *spec, *pool, *ns, *x;
    size_t old, o2, i, j;
    int8_t all, per;
    int nset = 0, rc;
    char buf[200];

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_begin(&d, obj, &dec_t_resource_slice, &out->source_line, &out->source_file)) ||
        (rc = dec_named(&d, obj, &meta, &out->name, NULL)) ||
        (rc = dec_object(&d, obj, "spec", &spec)))
        return rc;
    if (!spec)
        spec = json_object();
    old = dec_push(&d, "spec");
    if ((rc = dec_string(&d, spec, "driver", &out->driver, "")) ||
        (rc = check_driver(&d, spec, "driver", out->driver)) ||
        (rc = dec_object(&d, spec, "pool", &pool)))
        goto out;
    o2 = dec_push(&d, "pool");
    if (!pool)
        pool = json_object_get(spec, "pool"); /* NULL: every field unset */
    rc = dec_string(&d, pool, "name", &out->pool, "");
    if (!rc)
        rc = check_pool_name(&d, pool, "name", out->pool);
    if (!rc)
        rc = dec_int(&d, pool, "generation", INT64_MIN, INT64_MAX, &out->generation, NULL);
    if (!rc)
        rc = dec_int(&d, pool, "resourceSliceCount", INT64_MIN, INT64_MAX,
                     &out->resource_slice_count, NULL);
    if (!rc && out->resource_slice_count <= 0) {
        snprintf(buf, sizeof(buf), "%lld", (long long)out->resource_slice_count);
        rc = fail_key(&d, pool, "resourceSliceCount",
                      "Invalid value: %s: must be greater than zero", buf);
    }
    if (!rc && out->generation < 0) {
        snprintf(buf, sizeof(buf), "%lld", (long long)out->generation);
        rc = fail_key(&d, pool, "generation",
                      "Invalid value: %s: must be greater than or equal to zero", buf);
    }
    dec_pop(&d, o2);
    if (rc)
        goto out;
    /* exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection */
    if ((rc = dec_string(&d, spec, "nodeName", &out->node_name, "")))
        goto out;
    if ((x = json_object_get(spec, "nodeName")) && !json_is_null(x)) {
        if (!*out->node_name) {
            rc = invalid(&d, spec, "nodeName", "",
                         "must be either unset or set to a non-empty string");
            goto out;
        }
        if ((rc = check_subdomain(&d, spec, "nodeName", out->node_name)))
            goto out;
        nset++;
    }
    ns = json_object_get(spec, "nodeSelector");
    if (ns && !json_is_null(ns)) {
        if (!(out->node_selector = arena_alloc(a, sizeof(*out->node_selector)))) {
            rc = dec_nomem(&d);
            goto out;
        }
        o2 = dec_push(&d, "nodeSelector");
        rc = dec_node_selector(&d, ns, out->node_selector);
        if (!rc && out->node_selector->nterms != 1) {
            size_t o3 = dec_push(&d, "nodeSelectorTerms");

            rc = dec_fail(&d, json_object_get(ns, "nodeSelectorTerms"), ns,
                          "Invalid value: \"array\": must have exactly one node selector term");
            dec_pop(&d, o3);
        }
        dec_pop(&d, o2);
        if (rc)
            goto out;
        nset++;
    }
    if ((rc = tristate(&d, spec, "allNodes", &all)) ||
        (rc = tristate(&d, spec, "perDeviceNodeSelection", &per)))
        goto out;
    if (all == 0 || per == 0) {
        rc = invalid(&d, spec, all == 0 ? "allNodes" : "perDeviceNodeSelection", "false",
                     "must be either unset or set to true");
        goto out;
    }
    out->all_nodes = all > 0;
    out->per_device_node_selection = per > 0;
    nset += out->all_nodes + out->per_device_node_selection;
    if (nset != 1) {
        rc = dec_fail(&d, spec, NULL,
                      nset ? "Invalid value: \"{...}\": exactly one of `nodeName`, "
                             "`nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, "
                             "but multiple fields are set"
                           : "Required value: exactly one of `nodeName`, `nodeSelector`, "
                             "`allNodes`, `perDeviceNodeSelection` is required");
        goto out;
    }
    if (json_object_get(spec, "sharedCounters") &&
        !json_is_null(json_object_get(spec, "sharedCounters")) &&
        json_object_get(spec, "devices") && !json_is_null(json_object_get(spec, "devices"))) {
        rc = dec_fail(&d, spec, NULL,
                      "Invalid value: \"\": only one of `sharedCounters` or `devices` is allowed");
        goto out;
    }
    out->devices = dec_list(&d, spec, "devices", JSON_OBJECT, sizeof(*out->devices), device_elem,
                            &out->per_device_node_selection, &out->ndevices, &rc);
    if (rc)
        goto out;
    {
        bool advanced = false;

        for (i = 0; i < out->ndevices; i++)
            if (out->devices[i].ntaints || out->devices[i].nconsumes_counters)
                advanced = true;
        if (out->ndevices > (advanced ? DRA_SLICE_DEVICES_ADVANCED_MAX : DRA_SLICE_DEVICES_MAX)) {
            rc = too_many(&d, spec, "devices",
                          advanced ? DRA_SLICE_DEVICES_ADVANCED_MAX : DRA_SLICE_DEVICES_MAX);
            goto out;
        }
        for (i = 0; i < out->ndevices; i++)
            for (j = 0; j < i; j++)
                if (!strcmp(out->devices[i].name, out->devices[j].name)) {
                    char q[100];

                    o2 = dec_push(&d, "devices");
                    dec_index(&d, i);
                    rc = dec_fail(&d, json_array_get(json_object_get(spec, "devices"), i), spec,
                                  "Duplicate value: %s",
                                  dec_quote(out->devices[i].name, q, sizeof(q)));
                    dec_pop(&d, o2);
                    goto out;
                }
    }
    out->shared_counters =
        dec_list(&d, spec, "sharedCounters", JSON_OBJECT, sizeof(*out->shared_counters),
                 counter_set_elem, NULL, &out->nshared_counters, &rc);
    if (rc)
        goto out;
    if ((rc = dec_string(&d, spec, "partitionTypeAttribute", &out->partition_type_attribute, NULL)))
        goto out;
    out->nskip_node_operations = json_array_size(json_object_get(spec, "skipNodeOperations"));
out:
    dec_pop(&d, old);
    return rc;
}

/* ---- ResourceClaim and ResourceClaimTemplate ---- */

static int toleration_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    struct kube_dra_toleration *out = slot;
    struct err e;
    char q[200];
    int rc;

    (void)ctx;
    memset(out, 0, sizeof(*out));
    if ((rc = dec_string(d, v, "key", &out->key, "")) ||
        (rc = dec_string(d, v, "operator", &out->op, "Equal")) ||
        (rc = dec_string(d, v, "value", &out->value, "")) ||
        (rc = dec_string(d, v, "effect", &out->effect, "")))
        return rc;
    err_clear(&e);
    if (*out->key && kube_label_key_validate(out->key, &e))
        return invalid(d, v, "key", out->key, e.msg);
    if (!strcmp(out->op, "Exists")) {
        if (*out->value)
            return invalid(d, v, "value", out->value, "must be empty for operator `Exists`");
    } else if (!strcmp(out->op, "Equal")) {
        if (kube_label_value_validate(out->value, &e))
            return invalid(d, v, "value", out->value, e.msg);
    } else if (!*out->op) {
        return fail_key(d, v, "operator", "Required value");
    } else {
        return fail_key(d, v, "operator",
                        "Unsupported value: %s: supported values: \"Equal\", \"Exists\"",
                        dec_quote(out->op, q, sizeof(q)));
    }
    if (*out->effect && strcmp(out->effect, "NoSchedule") && strcmp(out->effect, "NoExecute") &&
        strcmp(out->effect, "None"))
        return fail_key(d, v, "effect",
                        "Unsupported value: %s: supported values: \"NoExecute\", \"NoSchedule\", "
                        "\"None\"",
                        dec_quote(out->effect, q, sizeof(q)));
    return 0;
}

struct req_ctx {
    bool stored;
    bool sub; /* a DeviceSubRequest: name required */
};

/* an ExactDeviceRequest or a DeviceSubRequest */
static int request_fields(struct dec *d, const json_t *v, const struct req_ctx *rc_,
                          struct kube_dra_request *out)
{
    const json_t *cap, *m, *x;
    const char *k;
    bool has_count;
    char buf[64];
    int rc;

    memset(out, 0, sizeof(*out));
    out->admin_access = -1;
    if (rc_->sub && ((rc = required_string(d, v, "name", &out->name)) ||
                     (rc = check_label(d, v, "name", out->name))))
        return rc;
    if ((rc = required_string(d, v, "deviceClassName", &out->device_class_name)) ||
        (rc = check_subdomain(d, v, "deviceClassName", out->device_class_name)) ||
        (rc = selectors(d, v, rc_->stored, &out->selectors, &out->nselectors)) ||
        (rc = dec_string(d, v, "allocationMode", &out->allocation_mode, "ExactCount")) ||
        (rc = dec_int(d, v, "count", INT64_MIN, INT64_MAX, &out->count, &has_count)))
        return rc;
    if (!*out->allocation_mode)
        out->allocation_mode = "ExactCount";
    if (!strcmp(out->allocation_mode, "ExactCount")) {
        if (!out->count && !has_count)
            out->count = 1; /* SetDefaults */
        else if (!out->count)
            out->count = 1; /* 0 is the zero value: defaulted too */
        if (out->count <= 0) {
            snprintf(buf, sizeof(buf), "%lld", (long long)out->count);
            return fail_key(d, v, "count", "Invalid value: %s: must be greater than zero", buf);
        }
    } else if (!strcmp(out->allocation_mode, "All")) {
        if (out->count) {
            snprintf(buf, sizeof(buf), "%lld", (long long)out->count);
            return fail_key(d, v, "count",
                            "Invalid value: %s: must not be specified when allocationMode is 'All'",
                            buf);
        }
    } else {
        char q[200];

        return fail_key(d, v, "allocationMode",
                        "Unsupported value: %s: supported values: \"All\", \"ExactCount\"",
                        dec_quote(out->allocation_mode, q, sizeof(q)));
    }
    if (!rc_->sub && (rc = tristate(d, v, "adminAccess", &out->admin_access)))
        return rc;
    out->tolerations = dec_list(d, v, "tolerations", JSON_OBJECT, sizeof(*out->tolerations),
                                toleration_elem, NULL, &out->ntolerations, &rc);
    if (rc)
        return rc;
    out->nderived_attributes = json_array_size(json_object_get(v, "derivedAttributes"));
    if ((rc = dec_object(d, v, "capacity", &cap)) || !cap)
        return rc;
    out->has_capacity = true;
    if ((rc = dec_object(d, cap, "requests", &m)) || !m || !json_object_size(m))
        return rc;
    if (!(out->capacity_requests =
              arena_alloc(d->a, json_object_size(m) * sizeof(*out->capacity_requests))))
        return dec_nomem(d);
    {
        size_t old = dec_push(d, "capacity"), o2 = dec_push(d, "requests"), i = 0;

        json_object_foreach((json_t *)m, k, x)
        {
            size_t o3 = dec_push(d, k);

            rc = check_qualified(d, m, k, x);
            if (!rc)
                rc = quantity(d, m, NULL, x, &out->capacity_requests[i].value);
            if (!rc && !(out->capacity_requests[i].name = arena_strdup(d->a, k)))
                rc = dec_nomem(d);
            dec_pop(d, o3);
            if (rc)
                break;
            i++;
        }
        out->ncapacity_requests = i;
        dec_pop(d, o2);
        dec_pop(d, old);
    }
    return rc;
}

static int sub_request_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    struct req_ctx sub = *(const struct req_ctx *)ctx;

    sub.sub = true;
    return request_fields(d, v, &sub, slot);
}

static int request_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    struct kube_dra_device_request *out = slot;
    const struct req_ctx *rctx = ctx;
    const json_t *ex, *fa;
    size_t old, i, j;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((rc = required_string(d, v, "name", &out->name)) ||
        (rc = check_label(d, v, "name", out->name)) || (rc = dec_object(d, v, "exactly", &ex)) ||
        (rc = dec_array(d, v, "firstAvailable", &fa)))
        return rc;
    if (!ex && !json_array_size(fa))
        return dec_fail(d, v, NULL,
                        "Required value: exactly one of `exactly` or `firstAvailable` is required");
    if (ex && json_array_size(fa))
        return dec_fail(d, v, NULL,
                        "Invalid value: null: exactly one of `exactly` or `firstAvailable` is "
                        "required, but multiple fields are set");
    if (ex) {
        struct req_ctx exact = *rctx;

        exact.sub = false;
        if (!(out->exactly = arena_alloc(d->a, sizeof(*out->exactly))))
            return dec_nomem(d);
        old = dec_push(d, "exactly");
        rc = request_fields(d, ex, &exact, out->exactly);
        dec_pop(d, old);
        if (!rc)
            out->exactly->name = out->name;
        return rc;
    }
    if (json_array_size(fa) > DRA_FIRST_AVAILABLE_MAX)
        return too_many(d, v, "firstAvailable", DRA_FIRST_AVAILABLE_MAX);
    out->first_available =
        dec_list(d, v, "firstAvailable", JSON_OBJECT, sizeof(*out->first_available),
                 sub_request_elem, (void *)rctx, &out->nfirst_available, &rc);
    for (i = 0; !rc && i < out->nfirst_available; i++)
        for (j = 0; j < i; j++)
            if (!strcmp(out->first_available[i].name, out->first_available[j].name)) {
                char q[100];

                old = dec_push(d, "firstAvailable");
                dec_index(d, i);
                rc = dec_fail(d, NULL, v, "Duplicate value: %s",
                              dec_quote(out->first_available[i].name, q, sizeof(q)));
                dec_pop(d, old);
                break;
            }
    return rc;
}

static int constraint_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    struct kube_dra_constraint *out = slot;
    int rc;

    (void)ctx;
    memset(out, 0, sizeof(*out));
    out->requests = dec_list(d, v, "requests", JSON_STRING, sizeof(char *), dec_str_elem, NULL,
                             &out->nrequests, &rc);
    if (rc || (rc = dec_string(d, v, "matchAttribute", &out->match_attribute, NULL)) ||
        (rc = dec_string(d, v, "distinctAttribute", &out->distinct_attribute, NULL)))
        return rc;
    if (!out->match_attribute && !out->distinct_attribute)
        return dec_fail(d, v, NULL,
                        "Required value: exactly one of \"matchAttribute\" or "
                        "\"distinctAttribute\" is required, but multiple fields are set");
    return 0;
}

/* the claim's requests: request or request/subrequest known */
static bool request_known(const struct kube_dra_claim_spec *s, const char *name)
{
    const char *slash = strchr(name, '/');
    size_t i, j, n = slash ? (size_t)(slash - name) : strlen(name);

    for (i = 0; i < s->nrequests; i++) {
        if (strlen(s->requests[i].name) != n || strncmp(s->requests[i].name, name, n))
            continue;
        if (!slash)
            return true;
        for (j = 0; j < s->requests[i].nfirst_available; j++)
            if (!strcmp(s->requests[i].first_available[j].name, slash + 1))
                return true;
    }
    return false;
}

static int claim_spec(struct dec *d, const json_t *spec, bool stored,
                      struct kube_dra_claim_spec *out)
{
    struct req_ctx rctx = {stored, false};
    const json_t *dev;
    size_t old, i, j;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!spec || (rc = dec_object(d, spec, "devices", &dev)) || !dev)
        return spec ? rc : 0;
    old = dec_push(d, "devices");
    if (json_array_size(json_object_get(dev, "requests")) > DRA_REQUESTS_MAX) {
        rc = too_many(d, dev, "requests", DRA_REQUESTS_MAX);
        goto out;
    }
    out->requests = dec_list(d, dev, "requests", JSON_OBJECT, sizeof(*out->requests), request_elem,
                             &rctx, &out->nrequests, &rc);
    if (rc)
        goto out;
    for (i = 0; i < out->nrequests; i++)
        for (j = 0; j < i; j++)
            if (!strcmp(out->requests[i].name, out->requests[j].name)) {
                char q[100];
                size_t o2 = dec_push(d, "requests");

                dec_index(d, i);
                rc = dec_fail(d, NULL, dev, "Duplicate value: %s",
                              dec_quote(out->requests[i].name, q, sizeof(q)));
                dec_pop(d, o2);
                goto out;
            }
    out->constraints = dec_list(d, dev, "constraints", JSON_OBJECT, sizeof(*out->constraints),
                                constraint_elem, NULL, &out->nconstraints, &rc);
    if (rc)
        goto out;
    for (i = 0; i < out->nconstraints; i++)
        for (j = 0; j < out->constraints[i].nrequests; j++)
            if (!request_known(out, out->constraints[i].requests[j])) {
                char q[200];
                size_t o2 = dec_push(d, "constraints");

                dec_index(d, i);
                dec_push(d, "requests");
                dec_index(d, j);
                rc = dec_fail(d, NULL, dev,
                              "Invalid value: %s: must be the name of a request in the claim or "
                              "the name of a request and a subrequest separated by '/'",
                              dec_quote(out->constraints[i].requests[j], q, sizeof(q)));
                dec_pop(d, o2);
                goto out;
            }
    out->nconfig = json_array_size(json_object_get(dev, "config"));
out:
    dec_pop(d, old);
    return rc;
}

static int result_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    struct kube_dra_result *out = slot;
    const json_t *m, *x;
    const char *k;
    int8_t admin;
    int rc;

    (void)ctx;
    memset(out, 0, sizeof(*out));
    if ((rc = required_string(d, v, "request", &out->request)) ||
        (rc = dec_string(d, v, "driver", &out->driver, "")) ||
        (rc = check_driver(d, v, "driver", out->driver)) ||
        (rc = dec_string(d, v, "pool", &out->pool, "")) ||
        (rc = check_pool_name(d, v, "pool", out->pool)) ||
        (rc = required_string(d, v, "device", &out->device)) ||
        (rc = check_label(d, v, "device", out->device)) ||
        (rc = tristate(d, v, "adminAccess", &admin)) ||
        (rc = dec_string(d, v, "shareID", &out->share_id, NULL)))
        return rc;
    out->admin_access = admin > 0;
    out->nbinding_conditions = json_array_size(json_object_get(v, "bindingConditions"));
    if ((rc = dec_object(d, v, "consumedCapacity", &m)) || !m || !json_object_size(m))
        return rc;
    if (!(out->consumed_capacity =
              arena_alloc(d->a, json_object_size(m) * sizeof(*out->consumed_capacity))))
        return dec_nomem(d);
    {
        size_t old = dec_push(d, "consumedCapacity"), i = 0;

        json_object_foreach((json_t *)m, k, x)
        {
            size_t o2 = dec_push(d, k);

            rc = quantity(d, m, NULL, x, &out->consumed_capacity[i].value);
            if (!rc && !(out->consumed_capacity[i].name = arena_strdup(d->a, k)))
                rc = dec_nomem(d);
            dec_pop(d, o2);
            if (rc)
                break;
            i++;
        }
        out->nconsumed_capacity = i;
        dec_pop(d, old);
    }
    return rc;
}

static int consumer_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    struct kube_dra_consumer *out = slot;
    int rc;

    (void)ctx;
    memset(out, 0, sizeof(*out));
    if ((rc = dec_string(d, v, "apiGroup", &out->api_group, "")) ||
        (rc = required_string(d, v, "resource", &out->resource)) ||
        (rc = required_string(d, v, "name", &out->name)) ||
        (rc = required_string(d, v, "uid", &out->uid)))
        return rc;
    return 0;
}

static int claim_status(struct dec *d, const json_t *obj, const struct kube_dra_claim_spec *spec,
                        struct kube_resource_claim *out)
{
    const json_t *st, *al, *dv, *ns;
    size_t old, o2, i;
    int rc;

    if ((rc = dec_object(d, obj, "status", &st)) || !st)
        return rc;
    old = dec_push(d, "status");
    if ((rc = dec_object(d, st, "allocation", &al)) || !al)
        goto reserved;
    if (!(out->allocation = arena_alloc(d->a, sizeof(*out->allocation)))) {
        rc = dec_nomem(d);
        goto out;
    }
    memset(out->allocation, 0, sizeof(*out->allocation));
    o2 = dec_push(d, "allocation");
    out->allocation->has_allocation_timestamp =
        json_is_string(json_object_get(al, "allocationTimestamp"));
    rc = dec_object(d, al, "devices", &dv);
    if (!rc && dv) {
        size_t o3 = dec_push(d, "devices");

        if (json_array_size(json_object_get(dv, "results")) > DRA_RESULTS_MAX)
            rc = too_many(d, dv, "results", DRA_RESULTS_MAX);
        if (!rc)
            out->allocation->results =
                dec_list(d, dv, "results", JSON_OBJECT, sizeof(*out->allocation->results),
                         result_elem, NULL, &out->allocation->nresults, &rc);
        for (i = 0; !rc && i < out->allocation->nresults; i++)
            if (!request_known(spec, out->allocation->results[i].request)) {
                char q[200];
                size_t o4 = dec_push(d, "results");

                dec_index(d, i);
                dec_push(d, "request");
                rc = dec_fail(d, NULL, dv,
                              "Invalid value: %s: must be the name of a request in the claim or "
                              "the name of a request and a subrequest separated by '/'",
                              dec_quote(out->allocation->results[i].request, q, sizeof(q)));
                dec_pop(d, o4);
            }
        dec_pop(d, o3);
    }
    ns = json_object_get(al, "nodeSelector");
    if (!rc && ns && !json_is_null(ns)) {
        size_t o3 = dec_push(d, "nodeSelector");

        if (!(out->allocation->node_selector =
                  arena_alloc(d->a, sizeof(*out->allocation->node_selector))))
            rc = dec_nomem(d);
        else
            rc = dec_node_selector(d, ns, out->allocation->node_selector);
        dec_pop(d, o3);
    }
    dec_pop(d, o2);
    if (rc)
        goto out;
reserved:
    if (rc)
        goto out;
    if (json_array_size(json_object_get(st, "reservedFor")) > DRA_RESERVED_FOR_MAX) {
        rc = too_many(d, st, "reservedFor", DRA_RESERVED_FOR_MAX);
        goto out;
    }
    out->reserved_for = dec_list(d, st, "reservedFor", JSON_OBJECT, sizeof(*out->reserved_for),
                                 consumer_elem, NULL, &out->nreserved_for, &rc);
    if (!rc && out->nreserved_for && !out->allocation)
        rc = fail_key(d, st, "reservedFor",
                      "Forbidden: may not be specified when `allocated` is not set");
out:
    dec_pop(d, old);
    return rc;
}

int kube_resource_claim_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                               struct kube_resource_claim *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *spec, *ann, *fin;
    size_t i;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_begin(&d, obj, &dec_t_resource_claim, &out->source_line, &out->source_file)) ||
        (rc = dec_named(&d, obj, &meta, &out->name, &out->namespace_)))
        return rc;
    if (meta && ((rc = dec_string(&d, meta, "uid", &out->uid, "")) ||
                 (rc = dec_string(&d, meta, "resourceVersion", &out->resource_version, "")) ||
                 (rc = dec_controller(&d, meta, &out->controller, &out->owner_uid))))
        return rc;
    if (!out->uid)
        out->uid = "";
    if (!out->resource_version)
        out->resource_version = "";
    if (!out->owner_uid)
        out->owner_uid = "";
    ann = meta ? json_object_get(meta, "annotations") : NULL;
    if (json_is_string(json_object_get(ann, "resource.kubernetes.io/pod-claim-name")))
        out->pod_claim_name =
            dec_strdup(&d, json_object_get(ann, "resource.kubernetes.io/pod-claim-name"));
    out->extended_resource_claim =
        json_is_string(json_object_get(ann, "resource.kubernetes.io/extended-resource-claim"));
    fin = meta ? json_object_get(meta, "finalizers") : NULL;
    for (i = 0; i < json_array_size(fin); i++)
        if (json_is_string(json_array_get(fin, i)) &&
            !strcmp(json_string_value(json_array_get(fin, i)),
                    "resource.kubernetes.io/delete-protection"))
            out->delete_protection = true;
    out->terminating = meta && json_is_string(json_object_get(meta, "deletionTimestamp"));
    if ((rc = dec_object(&d, obj, "spec", &spec)))
        return rc;
    {
        size_t old = dec_push(&d, "spec");

        rc = claim_spec(&d, spec, o == NULL, &out->spec);
        dec_pop(&d, old);
        if (rc)
            return rc;
    }
    return claim_status(&d, obj, &out->spec, out);
}

int kube_resource_claim_template_decode(const json_t *obj, struct arena *a,
                                        const struct kube_decode_opts *o,
                                        struct kube_resource_claim_template *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *spec, *inner, *tm;
    size_t old, o2;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_begin(&d, obj, &dec_t_resource_claim_template, &out->source_line,
                        &out->source_file)) ||
        (rc = dec_named(&d, obj, &meta, &out->name, &out->namespace_)) ||
        (rc = dec_object(&d, obj, "spec", &spec)))
        return rc;
    if (!spec)
        return 0;
    old = dec_push(&d, "spec");
    rc = dec_object(&d, spec, "metadata", &tm);
    if (!rc && tm) {
        o2 = dec_push(&d, "metadata");
        rc = dec_labels(&d, tm, "labels", true, &out->labels);
        if (!rc)
            rc = dec_labels(&d, tm, "annotations", false, &out->annotations);
        dec_pop(&d, o2);
    }
    if (!rc)
        rc = dec_object(&d, spec, "spec", &inner);
    if (!rc) {
        o2 = dec_push(&d, "spec");
        rc = claim_spec(&d, inner, o == NULL, &out->spec);
        dec_pop(&d, o2);
    }
    dec_pop(&d, old);
    return rc;
}

/* ---- DeviceTaintRule ---- */

int kube_device_taint_rule_decode(const json_t *obj, struct arena *a,
                                  const struct kube_decode_opts *o,
                                  struct kube_device_taint_rule *out, struct err *err)
{
    struct dec d;
    const json_t *meta, *spec, *sel, *taint;
    size_t old, o2;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    if ((rc = dec_begin(&d, obj, &dec_t_device_taint_rule, &out->source_line, &out->source_file)) ||
        (rc = dec_named(&d, obj, &meta, &out->name, NULL)) ||
        (rc = dec_object(&d, obj, "spec", &spec)))
        return rc;
    if (!spec)
        spec = json_object_get(obj, "spec");
    old = dec_push(&d, "spec");
    rc = dec_object(&d, spec, "deviceSelector", &sel);
    if (!rc && sel) {
        out->has_selector = true;
        o2 = dec_push(&d, "deviceSelector");
        rc = dec_string(&d, sel, "driver", &out->driver, NULL);
        if (!rc)
            rc = dec_string(&d, sel, "pool", &out->pool, NULL);
        if (!rc)
            rc = dec_string(&d, sel, "device", &out->device, NULL);
        if (!rc && out->driver)
            rc = check_driver(&d, sel, "driver", out->driver);
        if (!rc && out->pool)
            rc = check_pool_name(&d, sel, "pool", out->pool);
        if (!rc && out->device)
            rc = check_label(&d, sel, "device", out->device);
        dec_pop(&d, o2);
    }
    if (!rc)
        rc = dec_object(&d, spec, "taint", &taint);
    if (!rc) {
        o2 = dec_push(&d, "taint");
        if (!taint)
            rc = dec_fail(&d, NULL, spec, "Required value");
        else
            rc = taint_fields(&d, taint, &out->taint);
        dec_pop(&d, o2);
    }
    dec_pop(&d, old);
    return rc;
}
