/* sanitize.h - turning free text (GPU product names, DMI machine names) into valid Kubernetes
 * label values: at most 63 characters, [A-Za-z0-9] at both ends, [-_.A-Za-z0-9] inside.
 *
 * The rule, in order: drop every byte outside [A-Za-z0-9-_.] and whitespace (so '(' ')' '/'
 * and non-ASCII bytes go), turn each whitespace run into one '-' (leading and trailing
 * whitespace vanish), trim non-alphanumerics from both ends, keep the first 63 characters and
 * trim the end again. "NVIDIA TITAN X (Pascal)" -> "NVIDIA-TITAN-X-Pascal". Whether a value
 * is valid is the API's rule, kube_label_value_validate (kube/labels.h). */
#ifndef LABELER_SANITIZE_H
#define LABELER_SANITIZE_H

#include <stdbool.h>
#include <stddef.h>

#define LABELER_VALUE_MAX 63

/* labeler_value_sanitize writes the valid form of in into out (size >= LABELER_VALUE_MAX + 1;
 * smaller sizes truncate further, still valid). The result may be "" when in has no usable
 * character. Returns out. */
char *labeler_value_sanitize(const char *in, char *out, size_t size);

#endif
