/* labels.h - label key/value validation and label selectors (kubectl -l, metav1.LabelSelector).
 *
 * Validation messages are the API server's, byte for byte (see research/scheduling.md §1).
 * Selector parsing follows k8s.io/apimachinery/pkg/labels: the same grammar, the same
 * matching rules (!= and notin match a missing key; Gt/Lt parse base-10 int64) and kubectl's
 * error messages. */
#ifndef KUBE_LABELS_H
#define KUBE_LABELS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/arena.h"
#include "base/err.h"
#include "kube/object.h"

/* kube_label_key_validate / kube_label_value_validate return 0 when valid, else -EINVAL with
 * the API server's message in err (e.g. "name part must consist of alphanumeric characters,
 * ..."). */
int kube_label_key_validate(const char *key, struct err *err);
int kube_label_value_validate(const char *value, struct err *err);

/* kube_dns_subdomain_validate is the same for an RFC 1123 subdomain (IsDNS1123Subdomain: CSI
 * driver and storage class names): "must be no more than 253 characters", "a lowercase RFC
 * 1123 subdomain must consist of ...". */
int kube_dns_subdomain_validate(const char *s, struct err *err);

/* kube_dns_label_validate: an RFC 1123 label (IsDNS1123Label: DRA request, device and
 * counter names): "must be no more than 63 characters", "a lowercase RFC 1123 label must
 * consist of ...". */
int kube_dns_label_validate(const char *s, struct err *err);

/* kube_labels_get returns the value of key in l (sorted by key), or NULL when absent. */
const char *kube_labels_get(const struct kube_labels *l, const char *key);

/* A parsed label selector: requirements ANDed, sorted by key. Zero requirements match
 * everything. */
struct kube_selector {
    struct kube_requirement *reqs;
    size_t nreqs;
};

/* kube_selector_parse parses a kubectl -l string into sel, allocating from a. Errors carry
 * kubectl's message and err->column set to the 1-based position of the offending token. */
int kube_selector_parse(const char *s, struct arena *a, struct kube_selector *sel, struct err *err);

/* kube_requirement_matches tells whether one requirement holds for a label set, with
 * labels.Requirement.Matches semantics. A requirement marked invalid never matches. */
bool kube_requirement_matches(const struct kube_requirement *r, const struct kube_labels *l);

/* kube_selector_matches: every requirement holds. */
bool kube_selector_matches(const struct kube_selector *sel, const struct kube_labels *l);

/* kube_label_selector_matches: metav1.LabelSelector semantics (absent matches nothing,
 * empty matches everything). */
bool kube_label_selector_matches(const struct kube_label_selector *sel,
                                 const struct kube_labels *l);

/* kube_selector_string writes the canonical String() form into buf and returns buf. */
const char *kube_selector_string(const struct kube_selector *sel, char *buf, size_t size);

#endif
