/* err.h - the one error report every fallible function fills.
 *
 * Functions that can fail return int (0 ok, negative errno-style code) and take an optional
 * struct err *. The report carries a one-line message and, where known, where the fault
 * is: a file and line (manifests, kubeconfig), a field path, or an HTTP status from the API.
 * Library code never prints; the program formats the report with err_format(). */
#ifndef BASE_ERR_H
#define BASE_ERR_H

#include <stdbool.h>
#include <stddef.h>

#define ERR_MSG_MAX 1024

struct err {
    int code;              /* negative errno-style code, 0 when unset */
    int http_status;       /* HTTP status from the API server, 0 when none */
    char reason[48];       /* Status.reason from the API server ("NotFound", ...) */
    int retry_after;       /* seconds from Retry-After / details.retryAfterSeconds, -1 when none */
    char file[256];        /* input file at fault, "" when none */
    int line;              /* 1-based line in file, 0 when unknown */
    int column;            /* 1-based column, 0 when unknown */
    char field[256];       /* field path such as "spec.containers[0].resources.limits.cpu" */
    char msg[ERR_MSG_MAX]; /* what failed and why, without the location */
};

/* err_clear resets every member; safe on NULL. */
void err_clear(struct err *e);

/* err_set fills code and message (printf-style) and returns code, so callers can write
 * `return err_set(err, -EINVAL, "...")`. Location members are left as they are.
 * Safe with err == NULL (only returns code). */
int err_set(struct err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* err_at sets the file/line/column location; either may be NULL/0. */
void err_at(struct err *e, const char *file, int line, int column);

/* err_field sets the field path. */
void err_field(struct err *e, const char *field);

/* err_prefix puts "<prefix>: " in front of the message (to add context as an error
 * travels up). */
void err_prefix(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* err_format writes the whole report on one line into buf:
 *   "FILE: line L: field F: MSG" with the parts that are set, and returns buf. */
const char *err_format(const struct err *e, char *buf, size_t size);

/* err_cut_mark marks text that snprintf (which returned n) cut to fit buf's size bytes: its
 * last three characters become "...", so a capped message or field path says it was cut
 * instead of silently passing for a whole one. Returns true when it was cut. */
bool err_cut_mark(char *buf, size_t size, int n);

#endif
