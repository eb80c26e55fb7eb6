/* decode_selector.c - metav1.LabelSelector and v1.NodeSelector: requirements with
 * ValidateLabelSelector's and ValidateNodeSelectorTerm's rules, values sorted and deduplicated. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/goparse.h"
#include "kube/decode-int.h"
#include "kube/labels.h"

/* The Go types of the fields (decode-int.h) */
static const struct dec_type dec_t_label_selector_requirement;
static const struct dec_type dec_t_node_selector_requirement;

static const struct dec_field dec_t_label_selector_fields[] = {
    {"matchExpressions", DEC_ARR, DEC_OBJ, "[]v1.LabelSelectorRequirement",
     &dec_t_label_selector_requirement},
    {"matchLabels", DEC_MAP, DEC_STR, "map[string]string", NULL},
};
const struct dec_type dec_t_label_selector = DEC_TYPE("LabelSelector", dec_t_label_selector_fields);

static const struct dec_field dec_t_label_selector_requirement_fields[] = {
    {"key", DEC_STR, 0, "string", NULL},
    {"operator", DEC_STR, 0, "v1.LabelSelectorOperator", NULL},
    {"values", DEC_ARR, DEC_STR, "[]string", NULL},
};
static const struct dec_type dec_t_label_selector_requirement =
    DEC_TYPE("LabelSelectorRequirement", dec_t_label_selector_requirement_fields);

static const struct dec_field dec_t_node_selector_fields[] = {
    {"nodeSelectorTerms", DEC_ARR, DEC_OBJ, "[]v1.NodeSelectorTerm", &dec_t_node_selector_term},
};
const struct dec_type dec_t_node_selector = DEC_TYPE("NodeSelector", dec_t_node_selector_fields);

static const struct dec_field dec_t_node_selector_term_fields[] = {
    {"matchExpressions", DEC_ARR, DEC_OBJ, "[]v1.NodeSelectorRequirement",
     &dec_t_node_selector_requirement},
    {"matchFields", DEC_ARR, DEC_OBJ, "[]v1.NodeSelectorRequirement",
     &dec_t_node_selector_requirement},
};
const struct dec_type dec_t_node_selector_term =
    DEC_TYPE("NodeSelectorTerm", dec_t_node_selector_term_fields);

static const struct dec_field dec_t_node_selector_requirement_fields[] = {
    {"key", DEC_STR, 0, "string", NULL},
    {"operator", DEC_STR, 0, "v1.NodeSelectorOperator", NULL},
    {"values", DEC_ARR, DEC_STR, "[]string", NULL},
};
static const struct dec_type dec_t_node_selector_requirement =
    DEC_TYPE("NodeSelectorRequirement", dec_t_node_selector_requirement_fields);

/* ---------------------------------------------------------------------------------------- */
/* Node selector terms                                                                        */

static int cmp_cstr(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* decode_value reads one value of a requirement: a label value unless a field's. */
static int decode_value(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    const char **out = slot;
    struct err lerr;
    char q[512];

    if (*(const enum dec_req_kind *)ctx != DEC_REQ_NODE_FIELD &&
        kube_label_value_validate(json_string_value(v), &lerr))
        return dec_fail(d, v, NULL, "Invalid value: %s: %s",
                        dec_quote(json_string_value(v), q, sizeof(q)), lerr.msg);
    *out = dec_strdup(d, v);
    return *out ? 0 : dec_nomem(d);
}

int dec_requirement(struct dec *d, const json_t *r, void *slot, void *ctx)
{
    struct kube_requirement *out = slot;
    enum dec_req_kind kind = *(const enum dec_req_kind *)ctx;
    bool field = kind == DEC_REQ_NODE_FIELD, node = kind == DEC_REQ_NODE_LABEL;
    const char *op;
    const json_t *vals;
    struct err lerr;
    char q[512];
    size_t i, old, n;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = dec_string(d, r, "key", &out->key, "");
    if (!rc)
        rc = dec_string(d, r, "operator", &op, "");
    if (!rc)
        rc = dec_array(d, r, "values", &vals);
    if (rc)
        return rc;
    n = vals ? json_array_size(vals) : 0;
    if (!strcmp(op, "In"))
        out->op = KUBE_OP_IN;
    else if (!strcmp(op, "NotIn"))
        out->op = KUBE_OP_NOT_IN;
    else if (!field && !strcmp(op, "Exists"))
        out->op = KUBE_OP_EXISTS;
    else if (!field && !strcmp(op, "DoesNotExist"))
        out->op = KUBE_OP_DOES_NOT_EXIST;
    else if (node && !strcmp(op, "Gt"))
        out->op = KUBE_OP_GT;
    else if (node && !strcmp(op, "Lt"))
        out->op = KUBE_OP_LT;
    else {
        old = dec_push(d, "operator");
        rc = dec_fail(d, json_object_get(r, "operator"), r,
                      "Invalid value: %s: not a valid selector operator",
                      dec_quote(op, q, sizeof(q)));
        dec_pop(d, old);
        return rc;
    }
    old = dec_push(d, "values");
    if (field && n != 1)
        rc = dec_fail(d, vals, r,
                      "Required value: must be only one value when `operator` is 'In' "
                      "or 'NotIn' for node field selector");
    else if ((out->op == KUBE_OP_IN || out->op == KUBE_OP_NOT_IN) && n == 0)
        rc = dec_fail(d, vals, r,
                      "Required value: must be specified when `operator` is 'In' or "
                      "'NotIn'");
    else if ((out->op == KUBE_OP_EXISTS || out->op == KUBE_OP_DOES_NOT_EXIST) && n > 0)
        rc = dec_fail(d, vals, r,
                      "Forbidden: may not be specified when `operator` is 'Exists' "
                      "or 'DoesNotExist'");
    else if ((out->op == KUBE_OP_GT || out->op == KUBE_OP_LT) && n != 1)
        rc = dec_fail(d, vals, r,
                      "Required value: must be specified single value when "
                      "`operator` is 'Lt' or 'Gt'");
    dec_pop(d, old);
    if (rc)
        return rc;
    if (field && strcmp(out->key, "metadata.name")) {
        old = dec_push(d, "key");
        rc = dec_fail(d, json_object_get(r, "key"), r,
                      "Invalid value: %s: not a valid field selector key",
                      dec_quote(out->key, q, sizeof(q)));
        dec_pop(d, old);
        return rc;
    }
    if (!field && kube_label_key_validate(out->key, &lerr)) {
        old = dec_push(d, "key");
        rc = dec_fail(d, json_object_get(r, "key"), r, "Invalid value: %s: %s",
                      dec_quote(out->key, q, sizeof(q)), lerr.msg);
        dec_pop(d, old);
        return rc;
    }
    if (!n)
        return 0;
    out->values = dec_list(d, r, "values", JSON_STRING, sizeof(*out->values), decode_value, &kind,
                           &out->nvalues, &rc);
    if (rc)
        return rc;
    if (n > 1) {
        size_t w = 1;

        qsort(out->values, n, sizeof(*out->values), cmp_cstr);
        for (i = 1; i < n; i++)
            if (strcmp(out->values[i], out->values[w - 1]))
                out->values[w++] = out->values[i];
        out->nvalues = w;
    }
    /* the API accepts a non-integer Gt/Lt value; at match time NewRequirement fails, so the
     * term holding it never matches */
    if (out->op == KUBE_OP_GT || out->op == KUBE_OP_LT) {
        int64_t num;

        out->invalid = go_parse_int(out->values[0], strlen(out->values[0]), 10, 64, &num, NULL);
    }
    return 0;
}

int dec_term(struct dec *d, const json_t *t, void *slot, void *ctx)
{
    struct kube_node_selector_term *out = slot;
    enum dec_req_kind labels = DEC_REQ_NODE_LABEL, fields = DEC_REQ_NODE_FIELD;
    int rc;

    (void)ctx;
    memset(out, 0, sizeof(*out));
    out->exprs = dec_list(d, t, "matchExpressions", JSON_OBJECT, sizeof(*out->exprs),
                          dec_requirement, &labels, &out->nexprs, &rc);
    if (!rc)
        out->fields = dec_list(d, t, "matchFields", JSON_OBJECT, sizeof(*out->fields),
                               dec_requirement, &fields, &out->nfields, &rc);
    return rc;
}

/* dec_label_selector: a metav1.LabelSelector at obj (NULL or null: absent). */
int dec_label_selector(struct dec *d, const json_t *obj, struct kube_label_selector *out)
{
    enum dec_req_kind kind = DEC_REQ_LABEL_SELECTOR;
    struct kube_requirement *exprs;
    struct kube_labels ml;
    size_t i, nexprs;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!obj || json_is_null(obj))
        return 0;
    if (!json_is_object(obj))
        return dec_type_error(d, NULL, NULL, obj, "v1.LabelSelector");
    rc = dec_labels(d, obj, "matchLabels", true, &ml);
    if (rc)
        return rc;
    exprs = dec_list(d, obj, "matchExpressions", JSON_OBJECT, sizeof(*exprs), dec_requirement,
                     &kind, &nexprs, &rc);
    if (rc)
        return rc;
    out->present = true;
    if (!ml.n && !nexprs)
        return 0;
    /* matchLabels as In with one value each, then matchExpressions (LabelSelectorAsSelector) */
    if (!(out->reqs = arena_alloc(d->a, (ml.n + nexprs) * sizeof(*out->reqs))))
        return dec_nomem(d);
    for (i = 0; i < ml.n; i++) {
        struct kube_requirement *r = &out->reqs[i];
        const char **v = arena_alloc(d->a, sizeof(*v));

        if (!v)
            return dec_nomem(d);
        v[0] = ml.v[i].value;
        r->key = ml.v[i].key;
        r->op = KUBE_OP_IN;
        r->values = v;
        r->nvalues = 1;
    }
    if (nexprs)
        memcpy(out->reqs + ml.n, exprs, nexprs * sizeof(*exprs));
    out->nreqs = ml.n + nexprs;
    return 0;
}

int dec_node_selector(struct dec *d, const json_t *obj, struct kube_node_selector *out)
{
    const json_t *terms;
    size_t old;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!json_is_object(obj))
        return dec_type_error(d, NULL, NULL, obj, "v1.NodeSelector");
    rc = dec_array(d, obj, "nodeSelectorTerms", &terms);
    if (!rc && (!terms || !json_array_size(terms))) {
        old = dec_push(d, "nodeSelectorTerms");
        rc = dec_fail(d, terms, obj, "Required value: must have at least one node selector term");
        dec_pop(d, old);
    }
    if (!rc)
        out->terms = dec_list(d, obj, "nodeSelectorTerms", JSON_OBJECT, sizeof(*out->terms),
                              dec_term, NULL, &out->nterms, &rc);
    return rc;
}
