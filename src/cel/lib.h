/* lib.h - what the function libraries share: helpers the standard functions call in other
 * modules, and each library's table of implementations (looked up by overload id). */
#ifndef CEL_LIB_H
#define CEL_LIB_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "cel/eval.h"

/* tables */
const struct cel_impl *cel_std_impls(size_t *n);
const struct cel_impl *cel_ext_impls(size_t *n);
const struct cel_impl *cel_k8s_impls(size_t *n);

/* std.c */
struct cel_val cel_add(struct ev *ev, const struct cel_val *a);
struct cel_val cel_compare(struct ev *ev, const struct cel_val *x, const struct cel_val *y, int *c);
struct cel_val cel_to_string(struct ev *ev, const struct cel_val *v);
bool cel_go_parse_float(const char *s, size_t n, double *out);
bool cel_in_list(const struct cel_list *l, const struct cel_val *v);
bool cel_in_map(const struct cel_map *m, const struct cel_val *v);

/* ext.c */
struct cel_val cel_list_concat(struct ev *ev, const struct cel_val *x, const struct cel_val *y);

/* time.c */
const struct cel_impl *cel_time_impls(size_t *n);
struct cel_val cel_time_add(struct ev *ev, const struct cel_val *x, const struct cel_val *y,
                            bool sub);
struct cel_val cel_time_to_string(struct ev *ev, const struct cel_val *v);
/* fmt's %v of a duration (time.Duration.String: 1m30s) or a timestamp (time.Time.String:
 * 2024-01-01 00:00:00.5 +0130 +0130, UTC when the offset is 0, as in a UTC process) */
void cel_time_go_string(struct buf *b, const struct cel_val *v);
/* duration('...') / timestamp('...') of a literal, for the validators */
bool cel_duration_parse(const char *s, size_t n, int64_t *ns);
bool cel_timestamp_parse(const char *s, size_t n, int64_t *sec, int32_t *nsec);

/* k8snet.c */
struct cel_val cel_ip_to_string(struct ev *ev, const struct cel_val *v);
const struct cel_impl *cel_k8snet_impls(size_t *n);
const struct cel_impl *cel_k8sfmt_impls(size_t *n);
bool cel_url_parse_request_uri_ok(const char *s, size_t n, struct buf *err);

/* ext.c: Go's Regexp.FindAllString(s, limit) */
struct cel_regex;
struct cel_val cel_regex_find_all(struct ev *ev, const struct cel_regex *re,
                                  const struct cel_val *s, int64_t limit);

/* regex.c */
struct cel_val cel_regex_matches(struct ev *ev, const struct cel_val *s, const struct cel_val *pat);
/* Checks a pattern as Go's regexp.Compile would; on failure writes Go's message into err. */
bool cel_regex_check(const char *pat, size_t n, struct buf *err);

#endif
