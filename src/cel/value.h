/* value.h - CEL runtime values, as cel-go's common/types behaves.
 *
 * A value is 16 bytes: a kind and a payload. Strings and bytes point at their bytes (not
 * NUL-terminated; n is the byte length); lists and maps point at immutable arrays, except a
 * comprehension's accumulator which grows in place (cel-go's mutable list). Errors carry their
 * message. Values made while evaluating live in the evaluation's scratch arena. */
#ifndef CEL_VALUE_H
#define CEL_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/arena.h"

enum cel_vk {
    CV_NULL,
    CV_BOOL,
    CV_INT,
    CV_UINT,
    CV_DOUBLE,
    CV_STRING,
    CV_BYTES,
    CV_LIST,
    CV_MAP,
    CV_TYPE,
    CV_OPTIONAL,
    CV_ERROR,
    CV_DURATION,  /* i: nanoseconds */
    CV_TIMESTAMP, /* i: seconds since the epoch, n: nanoseconds */
    CV_QUANTITY,  /* q */
    CV_SEMVER,    /* sv */
    CV_IP,        /* ip */
    CV_CIDR,      /* ip (address and prefix) */
    CV_URL,       /* url */
    CV_FORMAT,    /* s: the format's name */
};

struct cel_list;
struct cel_map;
struct cel_quantity;
struct cel_semver;
struct cel_ipaddr;
struct cel_url;

struct cel_val {
    uint8_t k;
    int16_t x;  /* timestamps: the zone offset in minutes east of UTC */
    uint32_t n; /* strings and bytes: byte length; timestamps: nanoseconds */
    union {
        bool b;
        int64_t i;
        uint64_t u;
        double d;
        const char *s; /* strings, bytes, errors (NUL-terminated message), type names */
        const struct cel_list *l;
        const struct cel_map *m;
        const struct cel_val *o; /* optional: NULL = none */
        const struct cel_quantity *q;
        const struct cel_semver *sv;
        const struct cel_ipaddr *ip;
        const struct cel_url *url;
    } v;
};

struct cel_list {
    uint32_t n, cap;
    bool mut;    /* a comprehension accumulator, appended to in place */
    bool concat; /* made by + of two non-empty lists (cel-go's concatList) */
    struct cel_val *v;
};

/* A map: keys and values in insertion order; lookups scan (maps here are small) or use the
 * sorted string index of device maps. */
struct cel_map {
    uint32_t n, cap;
    bool mut;
    bool strkeys;       /* every key is a string (device maps): cel-go's string map */
    bool default_empty; /* missing keys find an empty map (DRA's attributes/capacity) */
    struct cel_val *keys, *vals;
    const uint32_t *khash; /* device views: FNV-1a of each key, compared before the key */
};

/* Kubernetes resource.Quantity, exactly: the value in units of 10^-9 (every parsed quantity is
 * rounded up to nano and capped at 2^63-1), the format it prints in. */
struct cel_quantity;

/* blang/semver v4's Version. */
struct cel_semver {
    uint64_t major, minor, patch;
    int npre, nbuild;
    struct cel_semver_pr {
        const char *s;
        uint32_t n;
        bool numeric;
        uint64_t num;
    } * pre;
    const char **build;
};

struct cel_ipaddr {
    uint8_t a[16];
    bool v4;    /* an IPv4 address (Go's Is4) */
    int prefix; /* CIDR: prefix length */
    const char *zone;
};

/* Go's url.URL; every field is a byte string (an unescaped path may hold a NUL). */
struct cel_url_str {
    const char *s;
    uint32_t n;
};
struct cel_url {
    struct cel_url_str scheme, opaque, username, password, host, path, raw_path, raw_query,
        fragment, raw_fragment;
    bool has_user, password_set, force_query, omit_host;
    struct cel_url_str str; /* URL.String(), what equality compares */
};

static inline struct cel_val cel_bool(bool b)
{
    struct cel_val v = {.k = CV_BOOL};
    v.v.b = b;
    return v;
}
static inline struct cel_val cel_int(int64_t i)
{
    struct cel_val v = {.k = CV_INT};
    v.v.i = i;
    return v;
}
static inline struct cel_val cel_uint(uint64_t u)
{
    struct cel_val v = {.k = CV_UINT};
    v.v.u = u;
    return v;
}
static inline struct cel_val cel_double(double d)
{
    struct cel_val v = {.k = CV_DOUBLE};
    v.v.d = d;
    return v;
}
static inline struct cel_val cel_str(const char *s, uint32_t n)
{
    struct cel_val v = {.k = CV_STRING, .n = n};
    v.v.s = s;
    return v;
}
static inline struct cel_val cel_null(void)
{
    struct cel_val v = {.k = CV_NULL};
    return v;
}
static inline struct cel_val cel_type_val(const char *name)
{
    struct cel_val v = {.k = CV_TYPE};
    v.v.s = name;
    return v;
}

/* The runtime type name of a value (cel-go's Type().TypeName()). */
const char *cel_val_type_name(const struct cel_val *v);

/* An error value with a printf-style message allocated in a (static text when a is NULL). */
struct cel_val cel_err(struct arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An error value with a static message. */
struct buf;
/* an error whose message is b's bytes (which may hold a NUL) */
struct cel_val cel_err_buf(struct arena *a, const struct buf *b);

/* An error's message is NUL-terminated; n, when not 0, is its length (a message quoting a
 * string with a NUL in it). */
static inline size_t cel_err_len(const struct cel_val *v)
{
    return v->n ? v->n : strlen(v->v.s);
}

static inline struct cel_val cel_err_static(const char *msg)
{
    struct cel_val v = {.k = CV_ERROR};
    v.v.s = msg;
    return v;
}

/* types.Equal: heterogeneous numeric equality; lists and maps element-wise; an error element
 * makes the comparison false (cel-go returns the error from Equal only at the top). */
bool cel_val_equal(const struct cel_val *a, const struct cel_val *b);

/* Appends the Go fmt %v rendering of v (errors messages, "no such key: %v"). */
struct buf;
void cel_val_format_v(struct buf *b, const struct cel_val *v);
/* Go's strconv.FormatFloat(d, fmt, -1, 64) for fmt 'g', 'e', 'f'. */
void cel_format_float(struct buf *b, double d, char fmt);

#endif
