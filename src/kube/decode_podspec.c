/* decode_podspec.c - what a pod's spec asks of a node: containers and their ports, tolerations,
 * node and pod affinity, topology spread constraints, each with the API server's validation of
 * the fields the scheduler reads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/decode-int.h"
#include "kube/labels.h"

/* The Go types of the fields (decode-int.h) */
static const struct dec_type dec_t_container_port;
static const struct dec_type dec_t_node_affinity;
static const struct dec_type dec_t_preferred_scheduling_term;
static const struct dec_type dec_t_pod_affinity;
static const struct dec_type dec_t_pod_anti_affinity;
static const struct dec_type dec_t_pod_affinity_term;
static const struct dec_type dec_t_weighted_pod_affinity_term;

static const struct dec_field dec_t_container_fields[] = {
    {"args", DEC_ARR, DEC_STR, "[]string", NULL},
    {"command", DEC_ARR, DEC_STR, "[]string", NULL},
    {"env", DEC_ARR, DEC_OBJ, "[]v1.EnvVar", NULL},
    {"envFrom", DEC_ARR, DEC_OBJ, "[]v1.EnvFromSource", NULL},
    {"image", DEC_STR, 0, "string", NULL},
    {"imagePullPolicy", DEC_STR, 0, "v1.PullPolicy", NULL},
    {"lifecycle", DEC_OBJ, 0, "v1.Lifecycle", NULL},
    {"livenessProbe", DEC_OBJ, 0, "v1.Probe", NULL},
    {"name", DEC_STR, 0, "string", NULL},
    {"ports", DEC_ARR, DEC_OBJ, "[]v1.ContainerPort", &dec_t_container_port},
    {"readinessProbe", DEC_OBJ, 0, "v1.Probe", NULL},
    {"resizePolicy", DEC_ARR, DEC_OBJ, "[]v1.ContainerResizePolicy", NULL},
    {"resources", DEC_OBJ, 0, "v1.ResourceRequirements", &dec_t_resource_requirements},
    {"restartPolicy", DEC_STR, 0, "v1.ContainerRestartPolicy", NULL},
    {"restartPolicyRules", DEC_ARR, DEC_OBJ, "[]v1.ContainerRestartRule", NULL},
    {"securityContext", DEC_OBJ, 0, "v1.SecurityContext", NULL},
    {"startupProbe", DEC_OBJ, 0, "v1.Probe", NULL},
    {"stdin", DEC_BOOL, 0, "bool", NULL},
    {"stdinOnce", DEC_BOOL, 0, "bool", NULL},
    {"terminationMessagePath", DEC_STR, 0, "string", NULL},
    {"terminationMessagePolicy", DEC_STR, 0, "v1.TerminationMessagePolicy", NULL},
    {"tty", DEC_BOOL, 0, "bool", NULL},
    {"volumeDevices", DEC_ARR, DEC_OBJ, "[]v1.VolumeDevice", NULL},
    {"volumeMounts", DEC_ARR, DEC_OBJ, "[]v1.VolumeMount", NULL},
    {"workingDir", DEC_STR, 0, "string", NULL},
};
const struct dec_type dec_t_container = DEC_TYPE("Container", dec_t_container_fields);

static const struct dec_field dec_t_container_port_fields[] = {
    {"containerPort", DEC_INT32, 0, "int32", NULL}, {"hostIP", DEC_STR, 0, "string", NULL},
    {"hostPort", DEC_INT32, 0, "int32", NULL},      {"name", DEC_STR, 0, "string", NULL},
    {"protocol", DEC_STR, 0, "v1.Protocol", NULL},
};
static const struct dec_type dec_t_container_port =
    DEC_TYPE("ContainerPort", dec_t_container_port_fields);

static const struct dec_field dec_t_toleration_fields[] = {
    {"effect", DEC_STR, 0, "v1.TaintEffect", NULL},
    {"key", DEC_STR, 0, "string", NULL},
    {"operator", DEC_STR, 0, "v1.TolerationOperator", NULL},
    {"tolerationSeconds", DEC_INT64, 0, "int64", NULL},
    {"value", DEC_STR, 0, "string", NULL},
};
const struct dec_type dec_t_toleration = DEC_TYPE("Toleration", dec_t_toleration_fields);

static const struct dec_field dec_t_affinity_fields[] = {
    {"nodeAffinity", DEC_OBJ, 0, "v1.NodeAffinity", &dec_t_node_affinity},
    {"podAffinity", DEC_OBJ, 0, "v1.PodAffinity", &dec_t_pod_affinity},
    {"podAntiAffinity", DEC_OBJ, 0, "v1.PodAntiAffinity", &dec_t_pod_anti_affinity},
};
const struct dec_type dec_t_affinity = DEC_TYPE("Affinity", dec_t_affinity_fields);

static const struct dec_field dec_t_node_affinity_fields[] = {
    {"preferredDuringSchedulingIgnoredDuringExecution", DEC_ARR, DEC_OBJ,
     "[]v1.PreferredSchedulingTerm", &dec_t_preferred_scheduling_term},
    {"requiredDuringSchedulingIgnoredDuringExecution", DEC_OBJ, 0, "v1.NodeSelector",
     &dec_t_node_selector},
};
static const struct dec_type dec_t_node_affinity =
    DEC_TYPE("NodeAffinity", dec_t_node_affinity_fields);

static const struct dec_field dec_t_preferred_scheduling_term_fields[] = {
    {"preference", DEC_OBJ, 0, "v1.NodeSelectorTerm", &dec_t_node_selector_term},
    {"weight", DEC_INT32, 0, "int32", NULL},
};
static const struct dec_type dec_t_preferred_scheduling_term =
    DEC_TYPE("PreferredSchedulingTerm", dec_t_preferred_scheduling_term_fields);

static const struct dec_field dec_t_pod_affinity_fields[] = {
    {"preferredDuringSchedulingIgnoredDuringExecution", DEC_ARR, DEC_OBJ,
     "[]v1.WeightedPodAffinityTerm", &dec_t_weighted_pod_affinity_term},
    {"requiredDuringSchedulingIgnoredDuringExecution", DEC_ARR, DEC_OBJ, "[]v1.PodAffinityTerm",
     &dec_t_pod_affinity_term},
};
static const struct dec_type dec_t_pod_affinity =
    DEC_TYPE("PodAffinity", dec_t_pod_affinity_fields);

static const struct dec_field dec_t_pod_anti_affinity_fields[] = {
    {"preferredDuringSchedulingIgnoredDuringExecution", DEC_ARR, DEC_OBJ,
     "[]v1.WeightedPodAffinityTerm", &dec_t_weighted_pod_affinity_term},
    {"requiredDuringSchedulingIgnoredDuringExecution", DEC_ARR, DEC_OBJ, "[]v1.PodAffinityTerm",
     &dec_t_pod_affinity_term},
};
static const struct dec_type dec_t_pod_anti_affinity =
    DEC_TYPE("PodAntiAffinity", dec_t_pod_anti_affinity_fields);

static const struct dec_field dec_t_pod_affinity_term_fields[] = {
    {"labelSelector", DEC_OBJ, 0, "v1.LabelSelector", &dec_t_label_selector},
    {"matchLabelKeys", DEC_ARR, DEC_STR, "[]string", NULL},
    {"mismatchLabelKeys", DEC_ARR, DEC_STR, "[]string", NULL},
    {"namespaceSelector", DEC_OBJ, 0, "v1.LabelSelector", &dec_t_label_selector},
    {"namespaces", DEC_ARR, DEC_STR, "[]string", NULL},
    {"topologyKey", DEC_STR, 0, "string", NULL},
};
static const struct dec_type dec_t_pod_affinity_term =
    DEC_TYPE("PodAffinityTerm", dec_t_pod_affinity_term_fields);

static const struct dec_field dec_t_weighted_pod_affinity_term_fields[] = {
    {"podAffinityTerm", DEC_OBJ, 0, "v1.PodAffinityTerm", &dec_t_pod_affinity_term},
    {"weight", DEC_INT32, 0, "int32", NULL},
};
static const struct dec_type dec_t_weighted_pod_affinity_term =
    DEC_TYPE("WeightedPodAffinityTerm", dec_t_weighted_pod_affinity_term_fields);

static const struct dec_field dec_t_topology_spread_constraint_fields[] = {
    {"labelSelector", DEC_OBJ, 0, "v1.LabelSelector", &dec_t_label_selector},
    {"matchLabelKeys", DEC_ARR, DEC_STR, "[]string", NULL},
    {"maxSkew", DEC_INT32, 0, "int32", NULL},
    {"minDomains", DEC_INT32, 0, "int32", NULL},
    {"nodeAffinityPolicy", DEC_STR, 0, "v1.NodeInclusionPolicy", NULL},
    {"nodeTaintsPolicy", DEC_STR, 0, "v1.NodeInclusionPolicy", NULL},
    {"topologyKey", DEC_STR, 0, "string", NULL},
    {"whenUnsatisfiable", DEC_STR, 0, "v1.UnsatisfiableConstraintAction", NULL},
};
const struct dec_type dec_t_topology_spread_constraint =
    DEC_TYPE("TopologySpreadConstraint", dec_t_topology_spread_constraint_fields);

/* ---------------------------------------------------------------------------------------- */
/* Containers                                                                                 */

static int decode_port(struct dec *d, const json_t *p, void *slot, void *ctx)
{
    struct kube_port *out = slot;
    bool host_network = *(const bool *)ctx;
    const char *proto, *ip;
    int64_t cp, hp;
    bool has_cp;
    char q[128];
    int rc;

    rc = dec_int(d, p, "containerPort", INT32_MIN, INT32_MAX, &cp, &has_cp);
    if (!rc)
        rc = dec_int(d, p, "hostPort", INT32_MIN, INT32_MAX, &hp, NULL);
    if (!rc)
        rc = dec_string(d, p, "protocol", &proto, "TCP");
    if (!rc)
        rc = dec_string(d, p, "hostIP", &ip, "");
    if (rc)
        return rc;
    if (!has_cp || cp == 0) {
        size_t old = dec_push(d, "containerPort");

        rc = dec_fail(d, json_object_get(p, "containerPort"), p, "Required value");
        dec_pop(d, old);
        return rc;
    }
    if (cp < 1 || cp > 65535 || hp < 0 || hp > 65535) {
        bool bad_cp = cp < 1 || cp > 65535;
        size_t old = dec_push(d, bad_cp ? "containerPort" : "hostPort");

        rc = dec_fail(d, json_object_get(p, bad_cp ? "containerPort" : "hostPort"), p,
                      "Invalid value: %lld: must be between 1 and 65535, inclusive",
                      (long long)(bad_cp ? cp : hp));
        dec_pop(d, old);
        return rc;
    }
    /* SetDefaults_PodSpec: hostNetwork pods listen on the container port of the host */
    if (host_network && hp == 0)
        hp = cp;
    if (host_network && hp != cp) {
        size_t old = dec_push(d, "hostPort");

        rc = dec_fail(d, json_object_get(p, "hostPort"), p,
                      "Invalid value: %lld: must match `containerPort` when `hostNetwork` is true",
                      (long long)hp);
        dec_pop(d, old);
        return rc;
    }
    if (!strcmp(proto, "TCP") || !proto[0])
        out->protocol = KUBE_PROTO_TCP;
    else if (!strcmp(proto, "UDP"))
        out->protocol = KUBE_PROTO_UDP;
    else if (!strcmp(proto, "SCTP"))
        out->protocol = KUBE_PROTO_SCTP;
    else {
        size_t old = dec_push(d, "protocol");

        rc = dec_fail(d, json_object_get(p, "protocol"), p,
                      "Unsupported value: %s: supported values: \"SCTP\", \"TCP\", \"UDP\"",
                      dec_quote(proto, q, sizeof(q)));
        dec_pop(d, old);
        return rc;
    }
    out->container_port = (int32_t)cp;
    out->host_port = (int32_t)hp;
    out->host_ip = ip[0] ? ip : "0.0.0.0";
    return 0;
}

/* How decode_container reads the containers of one list. */
struct container_ctx {
    bool init;
    bool host_network;
};

static int decode_container(struct dec *d, const json_t *c, void *slot, void *ctx)
{
    const struct container_ctx *cc = ctx;
    struct kube_container *out = slot;
    bool init = cc->init, host_network = cc->host_network;
    const char *restart;
    size_t old;
    char q[128];
    int rc;

    memset(out, 0, sizeof(*out));
    rc = dec_string(d, c, "name", &out->name, "");
    if (rc)
        return rc;
    if (!out->name[0]) {
        old = dec_push(d, "name");
        rc = dec_fail(d, json_object_get(c, "name"), c, "Required value");
        dec_pop(d, old);
        return rc;
    }
    rc = dec_string(d, c, "image", &out->image, "");
    if (!rc)
        rc = dec_container_resources(d, c, out);
    if (!rc && init)
        rc = dec_string(d, c, "restartPolicy", &restart, "");
    if (rc)
        return rc;
    if (init && restart[0]) {
        if (strcmp(restart, "Always")) {
            old = dec_push(d, "restartPolicy");
            rc = dec_fail(d, json_object_get(c, "restartPolicy"), c,
                          "Unsupported value: %s: supported values: \"Always\"",
                          dec_quote(restart, q, sizeof(q)));
            dec_pop(d, old);
            return rc;
        }
        out->restart_always = true;
    }
    out->ports = dec_list(d, c, "ports", JSON_OBJECT, sizeof(*out->ports), decode_port,
                          &host_network, &out->nports, &rc);
    return rc;
}

int dec_containers(struct dec *d, const json_t *spec, const char *key, bool init, bool host_network,
                   struct kube_container **out, size_t *n)
{
    struct container_ctx cc = {init, host_network};
    int rc;

    *out = dec_list(d, spec, key, JSON_OBJECT, sizeof(**out), decode_container, &cc, n, &rc);
    if (!rc && !*n && !init) {
        size_t old = dec_push(d, key);

        rc = dec_fail(d, json_object_get(spec, key), spec, "Required value");
        dec_pop(d, old);
    }
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Tolerations                                                                                */

int dec_taint_effect(const char *s, enum kube_taint_effect *e)
{
    if (!s[0])
        *e = KUBE_EFFECT_ANY;
    else if (!strcmp(s, "NoSchedule"))
        *e = KUBE_EFFECT_NO_SCHEDULE;
    else if (!strcmp(s, "PreferNoSchedule"))
        *e = KUBE_EFFECT_PREFER_NO_SCHEDULE;
    else if (!strcmp(s, "NoExecute"))
        *e = KUBE_EFFECT_NO_EXECUTE;
    else
        return -EINVAL;
    return 0;
}

int dec_toleration(struct dec *d, const json_t *t, void *slot, void *ctx)
{
    struct kube_toleration *out = slot;
    const char *op, *effect;
    struct err lerr;
    char q[512];
    size_t old;
    int rc;

    (void)ctx;
    memset(out, 0, sizeof(*out));
    rc = dec_string(d, t, "key", &out->key, "");
    if (!rc)
        rc = dec_string(d, t, "operator", &op, "");
    if (!rc)
        rc = dec_string(d, t, "value", &out->value, "");
    if (!rc)
        rc = dec_string(d, t, "effect", &effect, "");
    if (!rc)
        rc = dec_int(d, t, "tolerationSeconds", INT64_MIN, INT64_MAX, &out->seconds,
                     &out->has_seconds);
    if (rc)
        return rc;
    if (out->key[0] && kube_label_key_validate(out->key, &lerr)) {
        old = dec_push(d, "key");
        rc = dec_fail(d, json_object_get(t, "key"), t, "Invalid value: %s: %s",
                      dec_quote(out->key, q, sizeof(q)), lerr.msg);
        dec_pop(d, old);
        return rc;
    }
    if (!strcmp(op, "Exists")) {
        out->op = KUBE_TOL_EXISTS;
    } else if (!op[0] || !strcmp(op, "Equal")) {
        out->op = KUBE_TOL_EQUAL;
    } else {
        old = dec_push(d, "operator");
        rc = dec_fail(d, json_object_get(t, "operator"), t,
                      "Unsupported value: %s: supported values: \"Equal\", \"Exists\"",
                      dec_quote(op, q, sizeof(q)));
        dec_pop(d, old);
        return rc;
    }
    if (!out->key[0] && out->op != KUBE_TOL_EXISTS) {
        old = dec_push(d, "operator");
        rc = dec_fail(d, json_object_get(t, "operator"), t,
                      "Invalid value: %s: operator must be Exists when `key` is empty, which "
                      "means \"match all values and all keys\"",
                      dec_quote(op, q, sizeof(q)));
        dec_pop(d, old);
        return rc;
    }
    if (out->op == KUBE_TOL_EXISTS && out->value[0]) {
        old = dec_push(d, "operator");
        rc = dec_fail(d, json_object_get(t, "value"), t,
                      "Invalid value: %s: value must be empty when `operator` is 'Exists'",
                      dec_quote(out->value, q, sizeof(q)));
        dec_pop(d, old);
        return rc;
    }
    if (out->op == KUBE_TOL_EQUAL && kube_label_value_validate(out->value, &lerr)) {
        old = dec_push(d, "value");
        rc = dec_fail(d, json_object_get(t, "value"), t, "Invalid value: %s: %s",
                      dec_quote(out->value, q, sizeof(q)), lerr.msg);
        dec_pop(d, old);
        return rc;
    }
    if (dec_taint_effect(effect, &out->effect)) {
        old = dec_push(d, "effect");
        rc = dec_fail(d, json_object_get(t, "effect"), t,
                      "Unsupported value: %s: " DEC_EFFECTS_SUPPORTED,
                      dec_quote(effect, q, sizeof(q)));
        dec_pop(d, old);
        return rc;
    }
    if (out->has_seconds && out->effect != KUBE_EFFECT_NO_EXECUTE) {
        old = dec_push(d, "effect");
        rc = dec_fail(
            d, json_object_get(t, "effect"), t,
            "Invalid value: %s: effect must be 'NoExecute' when `tolerationSeconds` is set",
            dec_quote(effect, q, sizeof(q)));
        dec_pop(d, old);
        return rc;
    }
    return 0;
}

/* decode_preferred reads one preferredDuringSchedulingIgnoredDuringExecution entry. */
static int decode_preferred(struct dec *d, const json_t *t, void *slot, void *ctx)
{
    struct kube_preferred_term *pt = slot;
    const json_t *prefterm = NULL;
    int64_t w = 0;
    int rc;

    (void)ctx;
    rc = dec_int(d, t, "weight", INT32_MIN, INT32_MAX, &w, NULL);
    if (!rc && (w < 1 || w > 100)) {
        size_t old = dec_push(d, "weight");

        rc = dec_fail(d, json_object_get(t, "weight"), t,
                      "Invalid value: %lld: must be in the range 1-100", (long long)w);
        dec_pop(d, old);
    }
    if (!rc)
        rc = dec_object(d, t, "preference", &prefterm);
    if (!rc) {
        size_t old = dec_push(d, "preference");

        if (prefterm)
            rc = dec_term(d, prefterm, &pt->term, NULL);
        else
            memset(&pt->term, 0, sizeof(pt->term));
        dec_pop(d, old);
    }
    pt->weight = (int32_t)w;
    return rc;
}

/* decode_pod_term reads one v1.PodAffinityTerm (ctx != NULL: a WeightedPodAffinityTerm, whose
 * weight is read from the parent object ctx points at being t itself). */
static int decode_pod_term(struct dec *d, const json_t *t, struct kube_pod_affinity_term *out)
{
    static const bool label_key = true;
    size_t old;
    char q[512];
    struct err lerr;
    int rc;

    memset(out, 0, sizeof(*out));
    old = dec_push(d, "labelSelector");
    rc = dec_label_selector(d, json_object_get(t, "labelSelector"), &out->label_selector);
    dec_pop(d, old);
    if (rc)
        return rc;
    old = dec_push(d, "namespaceSelector");
    rc = dec_label_selector(d, json_object_get(t, "namespaceSelector"), &out->namespace_selector);
    dec_pop(d, old);
    if (rc)
        return rc;
    out->namespaces = dec_list(d, t, "namespaces", JSON_STRING, sizeof(*out->namespaces),
                               dec_str_elem, NULL, &out->nnamespaces, &rc);
    if (!rc)
        out->match_label_keys =
            dec_list(d, t, "matchLabelKeys", JSON_STRING, sizeof(*out->match_label_keys),
                     dec_str_elem, (void *)&label_key, &out->nmatch_label_keys, &rc);
    if (!rc)
        out->mismatch_label_keys =
            dec_list(d, t, "mismatchLabelKeys", JSON_STRING, sizeof(*out->mismatch_label_keys),
                     dec_str_elem, (void *)&label_key, &out->nmismatch_label_keys, &rc);
    if (!rc)
        rc = dec_string(d, t, "topologyKey", &out->topology_key, "");
    if (rc)
        return rc;
    if (!out->label_selector.present && (out->nmatch_label_keys || out->nmismatch_label_keys)) {
        const char *k = out->nmatch_label_keys ? "matchLabelKeys" : "mismatchLabelKeys";
        old = dec_push(d, k);
        rc = dec_fail(d, json_object_get(t, k), t,
                      "Forbidden: must not be specified when labelSelector is not set");
        dec_pop(d, old);
        return rc;
    }
    old = dec_push(d, "topologyKey");
    if (!out->topology_key[0])
        rc = dec_fail(d, json_object_get(t, "topologyKey"), t, "Required value: can not be empty");
    else if (kube_label_key_validate(out->topology_key, &lerr))
        rc = dec_fail(d, json_object_get(t, "topologyKey"), t, "Invalid value: %s: %s",
                      dec_quote(out->topology_key, q, sizeof(q)), lerr.msg);
    dec_pop(d, old);
    return rc;
}

static int decode_pod_term_elem(struct dec *d, const json_t *t, void *slot, void *ctx)
{
    (void)ctx;
    return decode_pod_term(d, t, slot);
}

static int decode_weighted_pod_term(struct dec *d, const json_t *t, void *slot, void *ctx)
{
    struct kube_pod_affinity_term *out = slot;
    const json_t *term = NULL;
    int64_t w = 0;
    size_t old;
    int rc;

    (void)ctx;
    rc = dec_int(d, t, "weight", INT32_MIN, INT32_MAX, &w, NULL);
    if (!rc && (w < 1 || w > 100)) {
        old = dec_push(d, "weight");
        rc = dec_fail(d, json_object_get(t, "weight"), t,
                      "Invalid value: %lld: must be in the range 1-100", (long long)w);
        dec_pop(d, old);
    }
    if (!rc)
        rc = dec_object(d, t, "podAffinityTerm", &term);
    if (rc)
        return rc;
    old = dec_push(d, "podAffinityTerm");
    if (term) {
        rc = decode_pod_term(d, term, out);
    } else {
        rc = dec_fail(d, NULL, t, "Required value");
    }
    dec_pop(d, old);
    out->weight = (int32_t)w;
    return rc;
}

/* decode_pod_affinity reads spec.affinity.podAffinity or podAntiAffinity (key). */
static int decode_pod_affinity(struct dec *d, const json_t *aff, const char *key,
                               struct kube_pod_affinity *out)
{
    const json_t *pa;
    size_t old;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = dec_object(d, aff, key, &pa);
    if (rc || !pa)
        return rc;
    old = dec_push(d, key);
    out->required =
        dec_list(d, pa, "requiredDuringSchedulingIgnoredDuringExecution", JSON_OBJECT,
                 sizeof(*out->required), decode_pod_term_elem, NULL, &out->nrequired, &rc);
    if (!rc)
        out->preferred = dec_list(d, pa, "preferredDuringSchedulingIgnoredDuringExecution",
                                  JSON_OBJECT, sizeof(*out->preferred), decode_weighted_pod_term,
                                  NULL, &out->npreferred, &rc);
    dec_pop(d, old);
    return rc;
}

int dec_node_affinity(struct dec *d, const json_t *spec, struct kube_pod *p)
{
    const json_t *aff, *na, *req, *terms;
    size_t o1, o2, o3, o4;
    int rc;

    rc = dec_object(d, spec, "affinity", &aff);
    if (rc || !aff)
        return rc;
    o1 = dec_push(d, "affinity");
    rc = decode_pod_affinity(d, aff, "podAffinity", &p->extra->pod_affinity);
    if (!rc)
        rc = decode_pod_affinity(d, aff, "podAntiAffinity", &p->extra->pod_anti_affinity);
    if (!rc)
        rc = dec_object(d, aff, "nodeAffinity", &na);
    if (rc || !na)
        goto out1;
    o2 = dec_push(d, "nodeAffinity");
    rc = dec_object(d, na, "requiredDuringSchedulingIgnoredDuringExecution", &req);
    if (rc)
        goto out2;
    if (req) {
        o3 = dec_push(d, "requiredDuringSchedulingIgnoredDuringExecution");
        rc = dec_array(d, req, "nodeSelectorTerms", &terms);
        if (!rc && (!terms || !json_array_size(terms))) {
            o4 = dec_push(d, "nodeSelectorTerms");
            rc = dec_fail(d, terms, req,
                          "Required value: must have at least one node selector term");
            dec_pop(d, o4);
        }
        if (!rc) {
            p->has_required_affinity = true;
            p->required.terms =
                dec_list(d, req, "nodeSelectorTerms", JSON_OBJECT, sizeof(*p->required.terms),
                         dec_term, NULL, &p->required.nterms, &rc);
        }
        dec_pop(d, o3);
        if (rc)
            goto out2;
    }
    p->preferred = dec_list(d, na, "preferredDuringSchedulingIgnoredDuringExecution", JSON_OBJECT,
                            sizeof(*p->preferred), decode_preferred, NULL, &p->npreferred, &rc);
out2:
    dec_pop(d, o2);
out1:
    dec_pop(d, o1);
    return rc;
}

/* decode_policy: a NodeInclusionPolicy ("Honor" or "Ignore", dflt when unset) */
static int decode_policy(struct dec *d, const json_t *t, const char *key, bool dflt_honor,
                         bool *honor)
{
    const char *v;
    char q[128];
    size_t old;
    int rc;

    *honor = dflt_honor;
    if ((rc = dec_peek(d, t, key, &v)) || !*v)
        return rc;
    if (!strcmp(v, "Honor") || !strcmp(v, "Ignore")) {
        *honor = !strcmp(v, "Honor");
        return 0;
    }
    old = dec_push(d, key);
    rc = dec_fail(d, json_object_get(t, key), t,
                  "Unsupported value: %s: supported values: \"Honor\", \"Ignore\"",
                  dec_quote(v, q, sizeof(q)));
    dec_pop(d, old);
    return rc;
}

/* one spec.topologySpreadConstraints entry, with ValidateTopologySpreadConstraints' rules
 * on the fields the scheduler reads */
int dec_spread(struct dec *d, const json_t *t, void *slot, void *ctx)
{
    struct kube_spread_constraint *out = slot;
    const char *when;
    int64_t skew = 0, mind = 0;
    bool has_skew, has_mind, honor = true;
    struct err lerr;
    char q[512];
    size_t old;
    int rc;

    (void)ctx;
    memset(out, 0, sizeof(*out));
    rc = dec_int(d, t, "maxSkew", INT32_MIN, INT32_MAX, &skew, &has_skew);
    if (!rc)
        rc = dec_int(d, t, "minDomains", INT32_MIN, INT32_MAX, &mind, &has_mind);
    if (!rc)
        rc = dec_string(d, t, "topologyKey", &out->topology_key, "");
    if (!rc)
        rc = dec_peek(d, t, "whenUnsatisfiable", &when);
    if (rc)
        return rc;
    if (skew <= 0) {
        old = dec_push(d, "maxSkew");
        rc = dec_fail(d, json_object_get(t, "maxSkew"), t,
                      "Invalid value: %lld: must be greater than zero", (long long)skew);
        dec_pop(d, old);
        return rc;
    }
    out->max_skew = (int32_t)skew;
    old = dec_push(d, "topologyKey");
    if (!out->topology_key[0])
        rc = dec_fail(d, NULL, t, "Required value: can not be empty");
    else if (kube_label_key_validate(out->topology_key, &lerr))
        rc = dec_fail(d, json_object_get(t, "topologyKey"), t, "Invalid value: %s: %s",
                      dec_quote(out->topology_key, q, sizeof(q)), lerr.msg);
    dec_pop(d, old);
    if (rc)
        return rc;
    old = dec_push(d, "whenUnsatisfiable");
    if (!strcmp(when, "DoNotSchedule"))
        out->when_unsatisfiable = KUBE_SPREAD_DO_NOT_SCHEDULE;
    else if (!strcmp(when, "ScheduleAnyway"))
        out->when_unsatisfiable = KUBE_SPREAD_SCHEDULE_ANYWAY;
    else
        rc = dec_fail(d, json_object_get(t, "whenUnsatisfiable"), t,
                      !*when ? "Unsupported value: \"\": supported values: \"DoNotSchedule\", "
                               "\"ScheduleAnyway\""
                             : "Unsupported value: %s: supported values: \"DoNotSchedule\", "
                               "\"ScheduleAnyway\"",
                      dec_quote(when, q, sizeof(q)));
    dec_pop(d, old);
    if (rc)
        return rc;
    out->min_domains = 1;
    if (has_mind) {
        old = dec_push(d, "minDomains");
        if (mind <= 0)
            rc = dec_fail(d, json_object_get(t, "minDomains"), t,
                          "Invalid value: %lld: must be greater than zero", (long long)mind);
        else if (out->when_unsatisfiable != KUBE_SPREAD_DO_NOT_SCHEDULE)
            rc = dec_fail(d, json_object_get(t, "minDomains"), t,
                          "Invalid value: %lld: can only use minDomains if "
                          "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
                          (long long)mind);
        dec_pop(d, old);
        if (rc)
            return rc;
        out->min_domains = (int32_t)mind;
    }
    old = dec_push(d, "labelSelector");
    rc = dec_label_selector(d, json_object_get(t, "labelSelector"), &out->selector);
    dec_pop(d, old);
    if (!rc)
        rc = decode_policy(d, t, "nodeAffinityPolicy", true, &honor);
    out->affinity_ignore = !honor;
    if (!rc)
        rc = decode_policy(d, t, "nodeTaintsPolicy", false, &out->taints_honor);
    if (!rc)
        out->match_label_keys =
            dec_list(d, t, "matchLabelKeys", JSON_STRING, sizeof(*out->match_label_keys),
                     dec_str_elem, NULL, &out->nmatch_label_keys, &rc);
    if (!rc && out->nmatch_label_keys && !out->selector.present) {
        old = dec_push(d, "matchLabelKeys");
        rc = dec_fail(d, json_object_get(t, "matchLabelKeys"), t,
                      "Forbidden: must not be specified when labelSelector is not set");
        dec_pop(d, old);
    }
    return rc;
}
