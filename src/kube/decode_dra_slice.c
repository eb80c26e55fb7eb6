/* decode_dra_slice.c - resource.k8s.io/v1 ResourceSlice: driver, pool (generation, slice
 * count), the node it serves (nodeName, nodeSelector, allNodes or per device), shared counter
 * sets and the devices (attributes, capacity with request policies, counter consumption,
 * taints, multiple allocations, binding conditions), with the API server's checks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/decode_dra-int.h"
#include "kube/labels.h"

static const struct dec_type dec_t_resource_slice_spec, dec_t_resource_pool, dec_t_device,
    dec_t_counter_set, dec_t_counter, dec_t_device_attribute, dec_t_device_capacity,
    dec_t_capacity_request_policy, dec_t_capacity_request_policy_range,
    dec_t_device_counter_consumption, dec_t_node_allocatable_resource;

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
        else if (!(rc = dec_dra_label(d, m, k, k)))
            rc = dec_dra_quantity_required(d, v, "value", &(*out)[i].value);
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
    if ((rc = dec_dra_required(d, v, "name", &out->name)) ||
        (rc = dec_dra_label(d, v, "name", out->name)))
        return rc;
    if (!json_object_size(json_object_get(v, "counters")))
        return dec_dra_fail_key(d, v, "counters", "Required value");
    return counters_map(d, v, "counters", &out->counters, &out->ncounters);
}

static int consumption_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    struct kube_dra_counters *out = slot;
    int rc;

    (void)ctx;
    memset(out, 0, sizeof(*out));
    if ((rc = dec_dra_required(d, v, "counterSet", &out->name)) ||
        (rc = dec_dra_label(d, v, "counterSet", out->name)))
        return rc;
    if (!json_object_size(json_object_get(v, "counters")))
        return dec_dra_fail_key(d, v, "counters", "Required value");
    out->ncompatibility_groups = json_array_size(json_object_get(v, "compatibilityGroups"));
    return counters_map(d, v, "counters", &out->counters, &out->ncounters);
}

static int taint_elem(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    (void)ctx;
    return dec_dra_taint(d, v, slot);
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
    if ((rc = dec_dra_qualified(d, map, name, v)))
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
            return dec_dra_fail_key(d, v, "string", "Too long: may not be more than 64 bytes");
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
        rc = dec_dra_quantity(d, v, "default", json_object_get(v, "default"), &p->def);
    }
    vv = json_object_get(v, "validValues");
    if (!rc && json_is_array(vv) && json_array_size(vv)) {
        size_t o2 = dec_push(d, "validValues");

        if (!(p->valid_values = arena_alloc(d->a, json_array_size(vv) * sizeof(*p->valid_values))))
            rc = dec_nomem(d);
        for (i = 0; !rc && i < json_array_size(vv); i++) {
            size_t o3 = dec_index(d, i);

            rc = dec_dra_quantity(d, vv, NULL, json_array_get(vv, i), &p->valid_values[i]);
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
            rc = dec_dra_quantity(d, rg, "min", json_object_get(rg, "min"), &p->min);
        }
        if (!rc && json_object_get(rg, "max") && !json_is_null(json_object_get(rg, "max"))) {
            p->has_max = true;
            rc = dec_dra_quantity(d, rg, "max", json_object_get(rg, "max"), &p->max);
        }
        if (!rc && json_object_get(rg, "step") && !json_is_null(json_object_get(rg, "step"))) {
            p->has_step = true;
            rc = dec_dra_quantity(d, rg, "step", json_object_get(rg, "step"), &p->step);
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
    if ((rc = dec_dra_required(d, v, "name", &out->name)) ||
        (rc = dec_dra_label(d, v, "name", out->name)))
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
                rc = dec_dra_qualified(d, m, k, x);
            if (!rc)
                rc = dec_dra_quantity_required(d, x, "value", &c->value);
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
    if (rc ||
        (rc = dec_dra_tristate(d, v, "allowMultipleAllocations", &out->allow_multiple_allocations)))
        return rc;
    {
        int8_t b;

        if ((rc = dec_dra_tristate(d, v, "bindsToNode", &b)))
            return rc;
        out->binds_to_node = b > 0;
    }
    if ((rc = dec_dra_binding_conditions(d, v, &out->binding_conditions, &out->nbinding_conditions,
                                         &out->binding_failure_conditions,
                                         &out->nbinding_failure_conditions)))
        return rc;
    out->nnode_allocatable = json_object_size(json_object_get(v, "nodeAllocatableResources"));
    /* perDeviceNodeSelection */
    if ((rc = dec_string(d, v, "nodeName", &out->node_name, "")))
        return rc;
    {
        int8_t all;

        if ((rc = dec_dra_tristate(d, v, "allNodes", &all)))
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
                return dec_dra_invalid(d, v, "nodeName", "", "must not be empty");
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
            return dec_dra_invalid(d, v, "allNodes", "false",
                                   "must be either unset or set to true");
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
        (rc = dec_dra_driver(&d, spec, "driver", out->driver)) ||
        (rc = dec_object(&d, spec, "pool", &pool)))
        goto out;
    o2 = dec_push(&d, "pool");
    if (!pool)
        pool = json_object_get(spec, "pool"); /* NULL: every field unset */
    rc = dec_string(&d, pool, "name", &out->pool, "");
    if (!rc)
        rc = dec_dra_pool_name(&d, pool, "name", out->pool);
    if (!rc)
        rc = dec_int(&d, pool, "generation", INT64_MIN, INT64_MAX, &out->generation, NULL);
    if (!rc)
        rc = dec_int(&d, pool, "resourceSliceCount", INT64_MIN, INT64_MAX,
                     &out->resource_slice_count, NULL);
    if (!rc && out->resource_slice_count <= 0) {
        snprintf(buf, sizeof(buf), "%lld", (long long)out->resource_slice_count);
        rc = dec_dra_fail_key(&d, pool, "resourceSliceCount",
                              "Invalid value: %s: must be greater than zero", buf);
    }
    if (!rc && out->generation < 0) {
        snprintf(buf, sizeof(buf), "%lld", (long long)out->generation);
        rc = dec_dra_fail_key(&d, pool, "generation",
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
            rc = dec_dra_invalid(&d, spec, "nodeName", "",
                                 "must be either unset or set to a non-empty string");
            goto out;
        }
        if ((rc = dec_dra_subdomain(&d, spec, "nodeName", out->node_name)))
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
    if ((rc = dec_dra_tristate(&d, spec, "allNodes", &all)) ||
        (rc = dec_dra_tristate(&d, spec, "perDeviceNodeSelection", &per)))
        goto out;
    if (all == 0 || per == 0) {
        rc = dec_dra_invalid(&d, spec, all == 0 ? "allNodes" : "perDeviceNodeSelection", "false",
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
            rc =
                dec_dra_too_many(&d, spec, "devices",
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
