/* drashare.c - the shareID and consumedCapacity of a share of a device with
 * allowMultipleAllocations, as kube-scheduler v1.37.2's allocator writes them (see
 * drashare.h): GenerateShareID and the quantities of GetConsumedCapacityFromRequest. */
#include "serve/drashare.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

int serve_dra_share_id(char out[37])
{
    unsigned char b[16];
    size_t got = 0;

    while (got < sizeof(b)) {
        ssize_t n = getrandom(b + got, sizeof(b) - got, 0);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        got += (size_t)n;
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
    return 0;
}

enum serve_qformat serve_quantity_format(const char *text)
{
    size_t n = text ? strlen(text) : 0;
    const char *p = text ? text : "";

    /* ParseQuantity: the number ([+-]?[0-9.]+), then the suffix */
    if (*p == '+' || *p == '-')
        p++;
    while ((*p >= '0' && *p <= '9') || *p == '.')
        p++;
    if (n && text[n - 1] == 'i')
        return SERVE_QF_BINARY_SI;
    if ((*p == 'e' || *p == 'E') && p[1]) /* "E" alone is exa, a DecimalSI suffix */
        return SERVE_QF_DECIMAL_EXPONENT;
    return SERVE_QF_DECIMAL_SI;
}

const char *serve_quantity_canonical(kube_nano q, enum serve_qformat format, char *buf, size_t size)
{
    static const char *const si[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
    static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    kube_nano amount = q;
    int exponent = -9;

    if (q < 0 || q > (kube_nano)INT64_MAX * KUBE_NANO_PER_UNIT)
        return NULL;
    if (q == 0) {
        snprintf(buf, size, "0");
        return buf;
    }
    if (format == SERVE_QF_BINARY_SI &&
        (q < 1024 * KUBE_NANO_PER_UNIT || q % KUBE_NANO_PER_UNIT != 0))
        format = SERVE_QF_DECIMAL_SI; /* -1024 < q < 1024, or not whole: CanonicalizeBytes */
    if (format == SERVE_QF_BINARY_SI) {
        int64_t v = (int64_t)(q / KUBE_NANO_PER_UNIT);
        int e = 0;

        while (v % 1024 == 0 && e < 6) {
            v /= 1024;
            e++;
        }
        snprintf(buf, size, "%lld%s", (long long)v, bin[e]);
        return buf;
    }
    /* AsCanonicalBytes: the factors of ten out, the exponent down to a multiple of 3 */
    while (amount % 10 == 0) {
        amount /= 10;
        exponent++;
    }
    while (exponent % 3 != 0) {
        amount *= 10;
        exponent--;
    }
    if (amount > INT64_MAX)
        return NULL;
    if (format == SERVE_QF_DECIMAL_EXPONENT) {
        if (exponent)
            snprintf(buf, size, "%llde%d", (long long)amount, exponent);
        else
            snprintf(buf, size, "%lld", (long long)amount);
        return buf;
    }
    if (exponent > 18)
        return NULL;
    snprintf(buf, size, "%lld%s", (long long)amount, si[(exponent + 9) / 3]);
    return buf;
}

/* the value of quantity text s in nano units; false when it does not parse */
static bool nano_of(json_t *v, kube_nano *out)
{
    const char *s = json_string_value(v);
    struct err err;

    return s && !kube_quantity_parse_nano(s, out, &err);
}

/* calculateConsumedCapacity's choice for one capacity: the text it copies, or NULL when it
 * makes a new quantity (a request rounded up to a step: *step_format says its format) */
static const char *consumed_text(json_t *cap, json_t *requested, enum serve_qformat *step_format)
{
    json_t *policy = json_object_get(cap, "requestPolicy");
    json_t *range = json_object_get(policy, "validRange"), *min = json_object_get(range, "min");
    json_t *values = json_object_get(policy, "validValues");
    kube_nano r, x;
    size_t i;
    json_t *v;

    if (!requested) /* fillEmptyRequest */
        return json_string_value(json_object_get(policy, "default"))
                   ? json_string_value(json_object_get(policy, "default"))
                   : json_string_value(json_object_get(cap, "value"));
    if (!json_is_object(policy))
        return json_string_value(requested);
    if (json_is_object(range) && min && !json_is_null(min)) { /* roundUpRange */
        json_t *step = json_object_get(range, "step");

        if (nano_of(requested, &r) && nano_of(min, &x) && r < x)
            return json_string_value(min);
        if (!step || json_is_null(step))
            return json_string_value(requested);
        *step_format = serve_quantity_format(json_string_value(step));
        return NULL;
    }
    if (values && !json_is_null(values)) { /* roundUpValidValues */
        if (nano_of(requested, &r)) {
            json_array_foreach(values, i, v)
            {
                if (nano_of(v, &x) && r <= x)
                    return json_string_value(v);
            }
        }
        return json_string_value(requested);
    }
    return json_string_value(requested);
}

json_t *serve_dra_consumed_capacity(json_t *device, json_t *request, const struct dra_consumed *c,
                                    size_t n)
{
    json_t *caps = json_object_get(device, "capacity");
    json_t *reqs = json_object_get(json_object_get(request, "capacity"), "requests");
    json_t *out = n ? json_object() : NULL;
    size_t i;

    for (i = 0; i < n && out; i++) {
        enum serve_qformat f = SERVE_QF_DECIMAL_SI;
        json_t *cap = json_object_get(caps, c[i].name);
        const char *text = cap ? consumed_text(cap, json_object_get(reqs, c[i].name), &f) : NULL;
        char buf[64];

        if (!text) /* a new quantity, or a capacity not in the slice as stored: the value */
            text = serve_quantity_canonical(c[i].q, f, buf, sizeof(buf));
        if (!text || json_object_set_new(out, c[i].name, json_string(text))) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}
