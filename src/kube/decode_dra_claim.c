/* decode_dra_claim.c - resource.k8s.io/v1 ResourceClaim and ResourceClaimTemplate: the
 * requests (exactly or firstAvailable: class, selectors, allocation mode and count, admin
 * access, tolerations, capacity), constraints, and a claim's status (the allocation's results
 * and node selector, reservedFor), the owner and the annotations the scheduler reads. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/decode_dra-int.h"
#include "kube/exec.h"
#include "kube/labels.h"

static const struct dec_type dec_t_resource_claim_spec, dec_t_device_claim, dec_t_device_request,
    dec_t_exact_device_request, dec_t_device_sub_request, dec_t_capacity_requirements,
    dec_t_device_toleration, dec_t_device_constraint, dec_t_device_claim_configuration,
    dec_t_derived_attribute, dec_t_resource_claim_status, dec_t_allocation_result,
    dec_t_device_allocation_result, dec_t_request_allocation_result,
    dec_t_device_allocation_configuration, dec_t_consumer_reference,
    dec_t_resource_claim_template_spec, dec_t_allocated_device_status, dec_t_condition;

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
    {"devices", DEC_ARR, DEC_OBJ, "[]v1.AllocatedDeviceStatus", &dec_t_allocated_device_status},
    {"reservedFor", DEC_ARR, DEC_OBJ, "[]v1.ResourceClaimConsumerReference",
     &dec_t_consumer_reference},
};
static const struct dec_type dec_t_resource_claim_status =
    DEC_TYPE("ResourceClaimStatus", dec_t_resource_claim_status_fields);

static const struct dec_field dec_t_allocated_device_status_fields[] = {
    {"conditions", DEC_ARR, DEC_OBJ, "[]v1.Condition", &dec_t_condition},
    {"data", DEC_ANY, 0, "runtime.RawExtension", NULL},
    {"device", DEC_STR, 0, "string", NULL},
    {"driver", DEC_STR, 0, "string", NULL},
    {"networkData", DEC_OBJ, 0, "v1.NetworkDeviceData", NULL},
    {"pool", DEC_STR, 0, "string", NULL},
    {"shareID", DEC_STR, 0, "string", NULL},
};
static const struct dec_type dec_t_allocated_device_status =
    DEC_TYPE("AllocatedDeviceStatus", dec_t_allocated_device_status_fields);

static const struct dec_field dec_t_condition_fields[] = {
    {"lastTransitionTime", DEC_STR, 0, "v1.Time", NULL}, {"message", DEC_STR, 0, "string", NULL},
    {"observedGeneration", DEC_INT64, 0, "int64", NULL}, {"reason", DEC_STR, 0, "string", NULL},
    {"status", DEC_STR, 0, "v1.ConditionStatus", NULL},  {"type", DEC_STR, 0, "string", NULL},
};
static const struct dec_type dec_t_condition = DEC_TYPE("Condition", dec_t_condition_fields);

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
        return dec_dra_invalid(d, v, "key", out->key, e.msg);
    if (!strcmp(out->op, "Exists")) {
        if (*out->value)
            return dec_dra_invalid(d, v, "value", out->value,
                                   "must be empty for operator `Exists`");
    } else if (!strcmp(out->op, "Equal")) {
        if (kube_label_value_validate(out->value, &e))
            return dec_dra_invalid(d, v, "value", out->value, e.msg);
    } else if (!*out->op) {
        return dec_dra_fail_key(d, v, "operator", "Required value");
    } else {
        return dec_dra_fail_key(d, v, "operator",
                                "Unsupported value: %s: supported values: \"Equal\", \"Exists\"",
                                dec_quote(out->op, q, sizeof(q)));
    }
    if (*out->effect && strcmp(out->effect, "NoSchedule") && strcmp(out->effect, "NoExecute") &&
        strcmp(out->effect, "None"))
        return dec_dra_fail_key(
            d, v, "effect",
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
    if (rc_->sub && ((rc = dec_dra_required(d, v, "name", &out->name)) ||
                     (rc = dec_dra_label(d, v, "name", out->name))))
        return rc;
    if ((rc = dec_dra_required(d, v, "deviceClassName", &out->device_class_name)) ||
        (rc = dec_dra_subdomain(d, v, "deviceClassName", out->device_class_name)) ||
        (rc = dec_dra_selectors(d, v, rc_->stored, &out->selectors, &out->nselectors)) ||
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
            return dec_dra_fail_key(d, v, "count", "Invalid value: %s: must be greater than zero",
                                    buf);
        }
    } else if (!strcmp(out->allocation_mode, "All")) {
        if (out->count) {
            snprintf(buf, sizeof(buf), "%lld", (long long)out->count);
            return dec_dra_fail_key(
                d, v, "count",
                "Invalid value: %s: must not be specified when allocationMode is 'All'", buf);
        }
    } else {
        char q[200];

        return dec_dra_fail_key(d, v, "allocationMode",
                                "Unsupported value: %s: supported values: \"All\", \"ExactCount\"",
                                dec_quote(out->allocation_mode, q, sizeof(q)));
    }
    if (!rc_->sub && (rc = dec_dra_tristate(d, v, "adminAccess", &out->admin_access)))
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

            rc = dec_dra_qualified(d, m, k, x);
            if (!rc)
                rc = dec_dra_quantity(d, m, NULL, x, &out->capacity_requests[i].value);
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
    if ((rc = dec_dra_required(d, v, "name", &out->name)) ||
        (rc = dec_dra_label(d, v, "name", out->name)) || (rc = dec_object(d, v, "exactly", &ex)) ||
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
        return dec_dra_too_many(d, v, "firstAvailable", DRA_FIRST_AVAILABLE_MAX);
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
        rc = dec_dra_too_many(d, dev, "requests", DRA_REQUESTS_MAX);
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
    if ((rc = dec_dra_required(d, v, "request", &out->request)) ||
        (rc = dec_string(d, v, "driver", &out->driver, "")) ||
        (rc = dec_dra_driver(d, v, "driver", out->driver)) ||
        (rc = dec_string(d, v, "pool", &out->pool, "")) ||
        (rc = dec_dra_pool_name(d, v, "pool", out->pool)) ||
        (rc = dec_dra_required(d, v, "device", &out->device)) ||
        (rc = dec_dra_label(d, v, "device", out->device)) ||
        (rc = dec_dra_tristate(d, v, "adminAccess", &admin)) ||
        (rc = dec_string(d, v, "shareID", &out->share_id, NULL)))
        return rc;
    out->admin_access = admin > 0;
    if ((rc = dec_dra_binding_conditions(d, v, &out->binding_conditions, &out->nbinding_conditions,
                                         &out->binding_failure_conditions,
                                         &out->nbinding_failure_conditions)))
        return rc;
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

            rc = dec_dra_quantity(d, m, NULL, x, &out->consumed_capacity[i].value);
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
        (rc = dec_dra_required(d, v, "resource", &out->resource)) ||
        (rc = dec_dra_required(d, v, "name", &out->name)) ||
        (rc = dec_dra_required(d, v, "uid", &out->uid)))
        return rc;
    return 0;
}

static int condition_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    struct kube_dra_condition *out = slot;
    int rc;

    (void)ctx;
    memset(out, 0, sizeof(*out));
    if ((rc = dec_dra_required(d, v, "type", &out->type)) ||
        (rc = dec_dra_required(d, v, "status", &out->status)) ||
        (rc = dec_string(d, v, "reason", &out->reason, "")) ||
        (rc = dec_string(d, v, "message", &out->message, "")))
        return rc;
    if (strcmp(out->status, "True") && strcmp(out->status, "False") &&
        strcmp(out->status, "Unknown"))
        return dec_dra_fail_key(d, v, "status",
                                "Unsupported value: \"%s\": supported values: \"True\", "
                                "\"False\", \"Unknown\"",
                                out->status);
    return 0;
}

/* a status.devices[] entry: its device must be one of the allocation's (ctx) results */
static int device_status_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    const struct kube_dra_allocation *al = ctx;
    struct kube_dra_device_status *out = slot;
    size_t i;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((rc = dec_dra_required(d, v, "driver", &out->driver)) ||
        (rc = dec_dra_driver(d, v, "driver", out->driver)) ||
        (rc = dec_dra_required(d, v, "pool", &out->pool)) ||
        (rc = dec_dra_pool_name(d, v, "pool", out->pool)) ||
        (rc = dec_dra_required(d, v, "device", &out->device)) ||
        (rc = dec_dra_label(d, v, "device", out->device)) ||
        (rc = dec_string(d, v, "shareID", &out->share_id, NULL)))
        return rc;
    for (i = 0; al && i < al->nresults; i++) {
        const struct kube_dra_result *r = &al->results[i];

        if (!strcmp(r->driver, out->driver) && !strcmp(r->pool, out->pool) &&
            !strcmp(r->device, out->device) &&
            (r->share_id && out->share_id ? !strcmp(r->share_id, out->share_id)
                                          : !r->share_id && !out->share_id))
            break;
    }
    if (!al || i == al->nresults) {
        char id[800];

        snprintf(id, sizeof(id), "%s/%s/%s%s%s", out->driver, out->pool, out->device,
                 out->share_id ? "/" : "", out->share_id ? out->share_id : "");
        return dec_fail(d, v, NULL,
                        "Invalid value: \"%s\": must be an allocated device in the claim", id);
    }
    out->conditions = dec_list(d, v, "conditions", JSON_OBJECT, sizeof(*out->conditions),
                               condition_elem, NULL, &out->nconditions, &rc);
    return rc;
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
    {
        const char *ts = NULL;
        time_t t;

        rc = dec_string(d, al, "allocationTimestamp", &ts, NULL);
        if (!rc && ts && kube_rfc3339_parse(ts, &t))
            rc = dec_dra_invalid(d, al, "allocationTimestamp", ts, "must be an RFC 3339 time");
        if (!rc && ts) {
            out->allocation->has_allocation_timestamp = true;
            out->allocation->allocation_time = (int64_t)t;
        }
    }
    if (!rc)
        rc = dec_object(d, al, "devices", &dv);
    if (!rc && dv) {
        size_t o3 = dec_push(d, "devices");

        if (json_array_size(json_object_get(dv, "results")) > DRA_RESULTS_MAX)
            rc = dec_dra_too_many(d, dv, "results", DRA_RESULTS_MAX);
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
        rc = dec_dra_too_many(d, st, "reservedFor", DRA_RESERVED_FOR_MAX);
        goto out;
    }
    out->reserved_for = dec_list(d, st, "reservedFor", JSON_OBJECT, sizeof(*out->reserved_for),
                                 consumer_elem, NULL, &out->nreserved_for, &rc);
    if (!rc && out->nreserved_for && !out->allocation)
        rc = dec_dra_fail_key(d, st, "reservedFor",
                              "Forbidden: may not be specified when `allocated` is not set");
    if (!rc)
        out->devices = dec_list(d, st, "devices", JSON_OBJECT, sizeof(*out->devices),
                                device_status_elem, out->allocation, &out->ndevices, &rc);
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
