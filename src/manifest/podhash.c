/* podhash.c - a Deployment's pod-template-hash (see podhash-int.h). kube-controller-manager
 * v1.37.2 hashes the template with FNV-32a over k8s.io/utils/dump.ForHash: go-spew's "%#v" with
 * SortKeys, SpewKeys, DisableMethods, DisablePointerAddresses and DisableCapacities, which
 * prints every field of every struct with its Go type ("(string)abc", "(*int64)<nil>"),
 * elements of lists and maps without theirs, map keys sorted. So this file carries the field
 * list of each Go type reachable from v1.PodTemplateSpec (podhash_types, checked against
 * k8s.io/api by tests/k8s/internal/podhash) and prints the template through it, as the
 * controller reads it back: after the API server's defaults (apps/v1 SetObjectDefaults_Deployment
 * on the template), with its quantities canonical, and decoded from protobuf (empty lists and
 * maps nil). The printed text is hashed as it is made, never kept. */
#include "manifest/podhash-int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/quantity.h"

#define PODHASH_MAX ((size_t)16 << 20) /* printed bytes, at most */

/* quantities are exact in nano units up to 2^100 (ParseQuantity's inf.Dec path, rounded) */
__extension__ typedef __int128 ph_i128;
#define PODHASH_DEPTH 64 /* nesting of types, at most (the tree is finite) */

static const char *const *ph_table(size_t *n);

/* ---------------------------------------------------------------- the printer */

struct ph {
    uint32_t h; /* FNV-32a so far */
    size_t n;
    int rc;
    struct err *err;
    struct buf *text; /* manifest_pod_template_print's copy, or NULL */
};

static void ph_fail(struct ph *p, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void ph_fail(struct ph *p, int code, const char *fmt, ...)
{
    char msg[ERR_MSG_MAX];
    va_list ap;

    if (p->rc)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    p->rc = err_set(p->err, code, "pod-template-hash: %s", msg);
}

static void ph_put(struct ph *p, const char *s, size_t n)
{
    size_t i;

    if (p->rc)
        return;
    if (p->n + n > PODHASH_MAX) {
        ph_fail(p, -E2BIG, "the template prints to more than %zu bytes", PODHASH_MAX);
        return;
    }
    for (i = 0; i < n; i++) {
        p->h ^= (unsigned char)s[i];
        p->h *= 16777619u;
    }
    p->n += n;
    if (p->text && buf_append(p->text, s, n))
        ph_fail(p, -ENOMEM, "out of memory");
}

static void ph_puts(struct ph *p, const char *s)
{
    ph_put(p, s, strlen(s));
}

static void ph_printf(struct ph *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ph_printf(struct ph *p, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    ph_put(p, buf, n < 0 ? 0 : (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* ---------------------------------------------------------------- the Go types */

/* One field of a type line: "GoName,json,GoType,EXPR" (json "" for an embedded struct). */
struct ph_field {
    const char *go, *json, *gotype, *expr;
    size_t go_len, json_len, gotype_len, expr_len;
};

/* ph_type returns the fields of type name (len bytes), the text after '=' up to its end, or
 * NULL. The table is sorted by type name (strcmp order). */
static const char *ph_type(const char *name, size_t len)
{
    size_t lo = 0, hi;
    const char *const *types = ph_table(&hi);

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *t = types[mid], *eq = strchr(t, '=');
        size_t tl = (size_t)(eq - t);
        int c = strncmp(t, name, tl < len ? tl : len);
        if (!c)
            c = tl < len ? -1 : tl > len;
        if (!c)
            return eq + 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* ph_next_field parses the field at *s into f and moves *s past it; false at the end. */
static bool ph_next_field(const char **s, struct ph_field *f)
{
    const char *p = *s, *parts[4];
    size_t lens[4];
    int i;

    if (!*p)
        return false;
    for (i = 0; i < 4; i++) {
        size_t n = strcspn(p, i < 3 ? "," : ";");
        parts[i] = p;
        lens[i] = n;
        p += n;
        if (*p)
            p++;
    }
    f->go = parts[0], f->go_len = lens[0];
    f->json = parts[1], f->json_len = lens[1];
    f->gotype = parts[2], f->gotype_len = lens[2];
    f->expr = parts[3], f->expr_len = lens[3];
    *s = p;
    return true;
}

/* ---------------------------------------------------------------- quantities */

/* The decimal SI suffixes by exponent / 3 + 3 (n .. E). */
static const char *const ph_si[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
static const char *const ph_bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

enum ph_format { PH_DECIMAL_SI, PH_BINARY_SI, PH_DECIMAL_EXPONENT };
static const char *const ph_format_names[] = {"DecimalSI", "BinarySI", "DecimalExponent"};

/* What ParseQuantity makes of a string: the int64Amount, the cached string, the format. */
struct ph_quantity {
    int64_t value;
    int32_t scale;
    char s[64];
    enum ph_format format;
};

/* ph_suffix reads a quantity's suffix (resource.quantitySuffixer): base 10 or 2, the
 * exponent, the format. */
static bool ph_suffix(const char *suf, int *base, int *exp, enum ph_format *fmt)
{
    size_t i;
    char *end;
    long e;

    for (i = 1; i < sizeof(ph_bin) / sizeof(ph_bin[0]); i++)
        if (!strcmp(suf, ph_bin[i])) {
            *base = 2, *exp = (int)(10 * i), *fmt = PH_BINARY_SI;
            return true;
        }
    for (i = 0; i < sizeof(ph_si) / sizeof(ph_si[0]); i++)
        if (!strcmp(suf, ph_si[i])) {
            *base = 10, *exp = (int)(3 * i) - 9, *fmt = PH_DECIMAL_SI;
            return true;
        }
    if ((suf[0] == 'e' || suf[0] == 'E') && suf[1]) {
        e = strtol(suf + 1, &end, 10);
        if (*end || e < -1000 || e > 1000)
            return false;
        *base = 10, *exp = (int)e, *fmt = PH_DECIMAL_EXPONENT;
        return true;
    }
    return false;
}

/* ph_quantity_split splits s into digits before and after the point and the suffix, as
 * parseQuantityString does for a non-negative number; false when it is not one. */
static bool ph_quantity_split(const char *s, char *num, char *den, char *suf, size_t size)
{
    size_t n = 0, d = 0;

    if (*s == '+')
        s++;
    while (*s >= '0' && *s <= '9' && n + 1 < size)
        num[n++] = *s++;
    if (*s == '.') {
        s++;
        while (*s >= '0' && *s <= '9' && d + 1 < size)
            den[d++] = *s++;
    }
    num[n] = den[d] = '\0';
    if ((!n && !d) || strlen(s) + 1 > size || (*s >= '0' && *s <= '9'))
        return false;
    snprintf(suf, size, "%s", s);
    return true;
}

/* ph_parse is ParseQuantity on a canonical string (no sign, no fraction) on its int64 fast
 * path; false when it would take the inf.Dec path. */
static bool ph_parse(const char *str, struct ph_quantity *q)
{
    char num[64], den[64], suf[64];
    int base, exp, precision;
    enum ph_format fmt;
    int64_t value;
    size_t len;

    memset(q, 0, sizeof(*q));
    if (!strcmp(str, "0")) {
        q->format = PH_DECIMAL_SI;
        snprintf(q->s, sizeof(q->s), "0");
        return true;
    }
    if (!ph_quantity_split(str, num, den, suf, sizeof(num)) || den[0] ||
        !ph_suffix(suf, &base, &exp, &fmt))
        return false;
    len = strlen(num);
    if (len > 18)
        return false;
    value = strtoll(num, NULL, 10);
    q->format = fmt;
    if (fmt == PH_BINARY_SI) {
        precision = 15 - (int)len - exp * 3 / 10 - 1;
        if (precision < 0 || value > (INT64_MAX >> exp))
            return false;
        q->value = value << exp;
        q->scale = 0;
        if (exp % 10 == 0 && (value & 7) != 0)
            snprintf(q->s, sizeof(q->s), "%s", str);
        return true;
    }
    if (exp < -9)
        return false;
    q->value = value;
    q->scale = exp;
    len = strlen(num);
    if (exp % 3 == 0 && !(len >= 3 && !strcmp(num + len - 3, "000")) && num[0] != '0')
        snprintf(q->s, sizeof(q->s), "%s", str);
    return true;
}

/* ph_canonical writes into out the string the API server stores for quantity text s (the
 * value, rounded up to milli when round: SetDefaults_ResourceList), as Quantity.String()
 * makes it canonical. False when the value is negative or too large for this. */
static bool ph_canonical(const char *s, bool round, char *out, size_t size)
{
    char num[64], den[64], suf[64];
    ph_i128 m, big = (ph_i128)1 << 100;
    int base, exp, k = 0;
    enum ph_format fmt;
    size_t i, nd;

    if (!ph_quantity_split(s, num, den, suf, sizeof(num)) || !ph_suffix(suf, &base, &exp, &fmt))
        return false;
    if (strlen(num) + strlen(den) > 30)
        return false;
    /* the value in nano (ParseQuantity rounds up to nano), then milli when round */
    m = 0;
    for (i = 0; num[i]; i++)
        m = m * 10 + (num[i] - '0');
    for (i = 0; den[i]; i++)
        m = m * 10 + (den[i] - '0');
    nd = strlen(den);
    {
        /* m * base^exp / 10^nd, in units of 10^-9, rounded up */
        int shift10 = 9 - (int)nd;
        ph_i128 div = 1;
        if (base == 10)
            shift10 += exp;
        else if (exp > 80)
            return false;
        for (; shift10 > 0; shift10--)
            if ((m *= 10) > big)
                return false;
        for (; shift10 < 0; shift10++)
            if ((div *= 10) > big)
                return false;
        if (base == 2) {
            if (m > (big >> exp))
                return false;
            m <<= exp;
        }
        m = (m + div - 1) / div;
    }
    if (round)
        m = (m + 999999) / 1000000 * 1000000;
    if (!m) {
        snprintf(out, size, "0");
        return true;
    }
    /* BinarySI only for whole numbers of at least 1024 (else DecimalSI, CanonicalizeBytes) */
    if (fmt == PH_BINARY_SI && (m < (ph_i128)1024 * 1000000000 || m % 1000000000))
        fmt = PH_DECIMAL_SI;
    if (fmt == PH_BINARY_SI) {
        ph_i128 n = m / 1000000000;
        while (n % 1024 == 0 && k < 6) {
            n /= 1024;
            k++;
        }
        if (n > INT64_MAX)
            return false;
        snprintf(out, size, "%" PRId64 "%s", (int64_t)n, ph_bin[k]);
        return true;
    }
    /* AsCanonicalBytes: no trailing zeros, then the exponent down to a multiple of 3 */
    exp = -9;
    while (m % 10 == 0) {
        m /= 10;
        exp++;
    }
    switch (((exp % 3) + 3) % 3) {
    case 1:
        m *= 10, exp -= 1;
        break;
    case 2:
        m *= 100, exp -= 2;
        break;
    }
    if (m > INT64_MAX)
        return false;
    if (fmt == PH_DECIMAL_EXPONENT) {
        if (exp)
            snprintf(out, size, "%" PRId64 "e%d", (int64_t)m, exp);
        else
            snprintf(out, size, "%" PRId64, (int64_t)m);
        return true;
    }
    if (exp < -9 || exp > 18)
        return false;
    snprintf(out, size, "%" PRId64 "%s", (int64_t)m, ph_si[exp / 3 + 3]);
    return true;
}

/* ph_quantity prints a resource.Quantity (without its type): the value of JSON v (a string or
 * a number; NULL: the zero Quantity, what protobuf gives back for an absent one is "0"). */
static void ph_quantity(struct ph *p, const json_t *v, bool round)
{
    char num[KUBE_JSON_NUMBER_MAX], text[64], canon[64];
    struct ph_quantity q;
    const char *t;
    size_t n = 0;

    /* the text the API server parsed (kube_quantity_json_text: null is "0") */
    t = kube_quantity_json_text(v, num, &n);
    if (!t || n >= sizeof(text))
        n = 0;
    else
        memcpy(text, t, n);
    text[n] = '\0';
    if (!ph_canonical(text, round, canon, sizeof(canon))) {
        ph_fail(p, -ENOTSUP, "quantity \"%s\" is negative, not a quantity or too large", text);
        return;
    }
    if (!ph_parse(canon, &q)) {
        ph_fail(p, -ENOTSUP, "quantity %s is beyond int64's fast path", canon);
        return;
    }
    ph_printf(p,
              "{i:(resource.int64Amount){value:(int64)%" PRId64 " scale:(resource.Scale)%" PRId32
              "} d:(resource.infDecAmount){Dec:(*inf.Dec)<nil>} s:(string)",
              q.value, q.scale);
    ph_puts(p, q.s);
    ph_puts(p, " Format:(resource.Format)");
    ph_puts(p, ph_format_names[q.format]);
    ph_puts(p, "}");
}

/* ---------------------------------------------------------------- values */

static void ph_struct(struct ph *p, const char *name, size_t len, const json_t *obj, int depth);

/* ph_empty: what protobuf decodes as nil or zero: absent, null, an empty list or map */
static bool ph_empty(const json_t *v)
{
    return !v || json_is_null(v) || (json_is_array(v) && !json_array_size(v)) ||
           (json_is_object(v) && !json_object_size(v));
}

static int ph_keycmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ph_value prints v (NULL: absent) as the Go type expression e (elen bytes) makes it,
 * without the type itself (the caller wrote it when spew does). */
static void ph_value(struct ph *p, const char *e, size_t elen, const json_t *v, int depth)
{
    if (p->rc)
        return;
    if (depth > PODHASH_DEPTH) {
        ph_fail(p, -ENOTSUP, "types nested too deeply");
        return;
    }
    if (v && json_is_null(v))
        v = NULL;
    switch (e[0]) {
    case 's':
        if (v && !json_is_string(v))
            ph_fail(p, -ENOTSUP, "a string field holds %s",
                    json_is_number(v) ? "a number" : "JSON");
        else if (v)
            ph_puts(p, json_string_value(v));
        return;
    case 'b':
        if (v && !json_is_boolean(v))
            ph_fail(p, -ENOTSUP, "a boolean field holds another JSON type");
        else
            ph_puts(p, v && json_is_true(v) ? "true" : "false");
        return;
    case 'i':
    case 'u':
        if (v && json_is_real(v) && json_real_value(v) == (double)(json_int_t)json_real_value(v))
            ph_printf(p, "%" JSON_INTEGER_FORMAT, (json_int_t)json_real_value(v));
        else if (v && !json_is_integer(v))
            ph_fail(p, -ENOTSUP, "an integer field holds another JSON type");
        else
            ph_printf(p, "%" JSON_INTEGER_FORMAT, v ? json_integer_value(v) : 0);
        return;
    case '*':
        /* the pointer's type was written by the caller; nil, or the value it points to */
        if (!v)
            ph_puts(p, "<nil>");
        else
            ph_value(p, e + 1, elen - 1, v, depth + 1);
        return;
    case '[':
        if (ph_empty(v)) {
            ph_puts(p, "<nil>");
        } else if (!json_is_array(v)) {
            ph_fail(p, -ENOTSUP, "a list field holds another JSON type");
        } else {
            size_t i;
            ph_puts(p, "[");
            for (i = 0; i < json_array_size(v); i++) {
                if (i)
                    ph_puts(p, " ");
                ph_value(p, e + 1, elen - 1, json_array_get(v, i), depth + 1);
            }
            ph_puts(p, "]");
        }
        return;
    case 'm':
        if (ph_empty(v)) {
            ph_puts(p, "<nil>");
        } else if (!json_is_object(v)) {
            ph_fail(p, -ENOTSUP, "a map field holds another JSON type");
        } else {
            size_t n = json_object_size(v), i = 0;
            const char **keys = malloc(n * sizeof(*keys));
            const char *k;
            json_t *x;
            if (!keys) {
                ph_fail(p, -ENOMEM, "out of memory");
                return;
            }
            json_object_foreach((json_t *)v, k, x) keys[i++] = k;
            qsort(keys, n, sizeof(*keys), ph_keycmp);
            ph_puts(p, "map[");
            for (i = 0; i < n; i++) {
                ph_puts(p, i ? " " : "");
                ph_puts(p, keys[i]);
                ph_puts(p, ":");
                if (e[1] == 'q') /* a ResourceList: every one is rounded to milli */
                    ph_quantity(p, json_object_get(v, keys[i]), true);
                else
                    ph_value(p, e + 1, elen - 1, json_object_get(v, keys[i]), depth + 1);
            }
            ph_puts(p, "]");
            free(keys);
        }
        return;
    case '{': {
        const char *end = memchr(e, '}', elen);
        if (v && !json_is_object(v))
            ph_fail(p, -ENOTSUP, "an object field holds another JSON type");
        else if (end)
            ph_struct(p, e + 1, (size_t)(end - e - 1), v, depth + 1);
        return;
    }
    case 'q':
        ph_quantity(p, v, false);
        return;
    case 't':
        if (v)
            ph_fail(p, -ENOTSUP, "a timestamp is set in the template");
        else
            ph_puts(p, "{Time:(time.Time){wall:(uint64)0 ext:(int64)0 loc:(*time.Location)<nil>}}");
        return;
    case 'o':
        /* intstr.IntOrString: a number is Type 0 (Int), a string Type 1 (String) */
        if (v && json_is_string(v)) {
            ph_puts(p, "{Type:(intstr.Type)1 IntVal:(int32)0 StrVal:(string)");
            ph_puts(p, json_string_value(v));
            ph_puts(p, "}");
        } else if (!v || json_is_integer(v)) {
            ph_printf(
                p, "{Type:(intstr.Type)0 IntVal:(int32)%" JSON_INTEGER_FORMAT " StrVal:(string)}",
                v ? json_integer_value(v) : 0);
        } else {
            ph_fail(p, -ENOTSUP, "an int-or-string field holds another JSON type");
        }
        return;
    default:
        ph_fail(p, -ENOTSUP, "managedFields in the template");
        return;
    }
}

/* ph_struct prints the struct type name (len bytes) from JSON object obj (NULL: all zero):
 * "{Field:(GoType)value ...}", an embedded struct's fields read from obj itself. */
static void ph_struct(struct ph *p, const char *name, size_t len, const json_t *obj, int depth)
{
    const char *fields = ph_type(name, len);
    struct ph_field f;
    bool first = true;
    char key[128];

    if (!fields) {
        ph_fail(p, -ENOTSUP, "no field list for Go type %.*s", (int)len, name);
        return;
    }
    ph_puts(p, "{");
    while (!p->rc && ph_next_field(&fields, &f)) {
        const json_t *v = obj;
        if (!first)
            ph_puts(p, " ");
        first = false;
        ph_put(p, f.go, f.go_len);
        ph_puts(p, ":(");
        ph_put(p, f.gotype, f.gotype_len);
        ph_puts(p, ")");
        if (f.json_len) {
            snprintf(key, sizeof(key), "%.*s", (int)f.json_len, f.json);
            v = obj ? json_object_get(obj, key) : NULL;
        }
        ph_value(p, f.expr, f.expr_len, v, depth);
    }
    ph_puts(p, "}");
}

/* ---------------------------------------------------------------- the API server's defaults */

/* Each sets key when it is absent, or null (a pointer's nil) or, for a string or an integer,
 * the zero value the Go defaulter tests for. */
static int def_str(json_t *o, const char *key, const char *val)
{
    const json_t *v = json_object_get(o, key);

    if (v && !json_is_null(v) && !(json_is_string(v) && !*json_string_value(v)))
        return 0;
    return json_object_set_new(o, key, json_string(val));
}

static int def_int(json_t *o, const char *key, json_int_t val, bool zero_too)
{
    const json_t *v = json_object_get(o, key);

    if (v && !json_is_null(v) && !(zero_too && json_is_integer(v) && !json_integer_value(v)))
        return 0;
    return json_object_set_new(o, key, json_integer(val));
}

static int def_ptr(json_t *o, const char *key, json_t *val)
{
    const json_t *v = json_object_get(o, key);

    if (v && !json_is_null(v)) {
        json_decref(val);
        return 0;
    }
    return json_object_set_new(o, key, val);
}

static json_t *obj_at(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);

    return json_is_object(v) ? v : NULL;
}

/* The tag of an image reference as parsers.ParseImageName reads it: "latest" without a tag
 * and a digest; "" when the reference does not parse (its repository has capitals). */
static bool image_is_latest(const char *image)
{
    const char *at = strchr(image, '@'), *slash, *colon, *p;
    size_t len = at ? (size_t)(at - image) : strlen(image);
    char ref[512];

    if (!len || len >= sizeof(ref))
        return false;
    memcpy(ref, image, len);
    ref[len] = '\0';
    slash = strrchr(ref, '/');
    colon = strrchr(slash ? slash : ref, ':');
    /* the path after a domain (a first component with '.', ':' or localhost) is lowercase */
    p = strchr(ref, '/');
    if (p) {
        size_t dl = (size_t)(p - ref);
        if (memchr(ref, '.', dl) || memchr(ref, ':', dl) ||
            (dl == 9 && !strncmp(ref, "localhost", 9)))
            p++;
        else
            p = ref;
    } else {
        p = ref;
    }
    for (; *p && p != colon; p++)
        if (*p >= 'A' && *p <= 'Z')
            return false;
    if (colon)
        return !strcmp(colon + 1, "latest");
    return !at;
}

static int default_probe(json_t *pr)
{
    json_t *h;
    int rc = 0;

    if (!pr)
        return 0;
    rc |= def_int(pr, "timeoutSeconds", 1, true);
    rc |= def_int(pr, "periodSeconds", 10, true);
    rc |= def_int(pr, "successThreshold", 1, true);
    rc |= def_int(pr, "failureThreshold", 3, true);
    if ((h = obj_at(pr, "httpGet"))) {
        rc |= def_str(h, "path", "/");
        rc |= def_str(h, "scheme", "HTTP");
    }
    if ((h = obj_at(pr, "grpc")))
        rc |= def_ptr(h, "service", json_string(""));
    return rc;
}

static int default_field_ref(json_t *holder)
{
    json_t *f = obj_at(holder, "fieldRef");

    return f ? def_str(f, "apiVersion", "v1") : 0;
}

static int default_containers(json_t *list)
{
    size_t i, j;
    int rc = 0;

    for (i = 0; json_is_array(list) && i < json_array_size(list); i++) {
        json_t *c = json_array_get(list, i), *x, *lc;
        const char *image;
        if (!json_is_object(c))
            continue;
        image = json_string_value(json_object_get(c, "image"));
        rc |= def_str(c, "imagePullPolicy",
                      image && image_is_latest(image) ? "Always" : "IfNotPresent");
        rc |= def_str(c, "terminationMessagePath", "/dev/termination-log");
        rc |= def_str(c, "terminationMessagePolicy", "File");
        x = json_object_get(c, "ports");
        for (j = 0; json_is_array(x) && j < json_array_size(x); j++)
            if (json_is_object(json_array_get(x, j)))
                rc |= def_str(json_array_get(x, j), "protocol", "TCP");
        x = json_object_get(c, "env");
        for (j = 0; json_is_array(x) && j < json_array_size(x); j++) {
            json_t *from = obj_at(json_array_get(x, j), "valueFrom"), *fk;
            if (!from)
                continue;
            rc |= default_field_ref(from);
            if ((fk = obj_at(from, "fileKeyRef")))
                rc |= def_ptr(fk, "optional", json_false());
        }
        rc |= default_probe(obj_at(c, "livenessProbe"));
        rc |= default_probe(obj_at(c, "readinessProbe"));
        rc |= default_probe(obj_at(c, "startupProbe"));
        if ((lc = obj_at(c, "lifecycle"))) {
            const char *const hooks[] = {"postStart", "preStop"};
            for (j = 0; j < 2; j++) {
                json_t *h = obj_at(obj_at(lc, hooks[j]), "httpGet");
                if (h) {
                    rc |= def_str(h, "path", "/");
                    rc |= def_str(h, "scheme", "HTTP");
                }
            }
        }
    }
    return rc;
}

/* default_volume: SetDefaults_Volume and the defaults of each volume source */
static int default_volume(json_t *vol)
{
    static const char *const sources[] = {"hostPath",
                                          "emptyDir",
                                          "gcePersistentDisk",
                                          "awsElasticBlockStore",
                                          "gitRepo",
                                          "secret",
                                          "nfs",
                                          "iscsi",
                                          "glusterfs",
                                          "persistentVolumeClaim",
                                          "rbd",
                                          "flexVolume",
                                          "cinder",
                                          "cephfs",
                                          "flocker",
                                          "downwardAPI",
                                          "fc",
                                          "azureFile",
                                          "configMap",
                                          "vsphereVolume",
                                          "quobyte",
                                          "azureDisk",
                                          "photonPersistentDisk",
                                          "projected",
                                          "portworxVolume",
                                          "scaleIO",
                                          "storageos",
                                          "csi",
                                          "ephemeral",
                                          "image"};
    json_t *s, *x;
    size_t i, j;
    int rc = 0;
    bool any = false;

    for (i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
        x = json_object_get(vol, sources[i]);
        any |= x && !json_is_null(x);
    }
    if (!any)
        rc |= json_object_set_new(vol, "emptyDir", json_object());
    if ((s = obj_at(vol, "image"))) {
        const char *ref = json_string_value(json_object_get(s, "reference"));
        rc |= def_str(s, "pullPolicy", ref && image_is_latest(ref) ? "Always" : "IfNotPresent");
    }
    if ((s = obj_at(vol, "hostPath")))
        rc |= def_ptr(s, "type", json_string(""));
    if ((s = obj_at(vol, "secret")))
        rc |= def_ptr(s, "defaultMode", json_integer(0644));
    if ((s = obj_at(vol, "iscsi")))
        rc |= def_str(s, "iscsiInterface", "default");
    if ((s = obj_at(vol, "rbd"))) {
        rc |= def_str(s, "pool", "rbd");
        rc |= def_str(s, "user", "admin");
        rc |= def_str(s, "keyring", "/etc/ceph/keyring");
    }
    if ((s = obj_at(vol, "downwardAPI"))) {
        rc |= def_ptr(s, "defaultMode", json_integer(0644));
        x = json_object_get(s, "items");
        for (j = 0; json_is_array(x) && j < json_array_size(x); j++)
            if (json_is_object(json_array_get(x, j)))
                rc |= default_field_ref(json_array_get(x, j));
    }
    if ((s = obj_at(vol, "configMap")))
        rc |= def_ptr(s, "defaultMode", json_integer(0644));
    if ((s = obj_at(vol, "azureDisk"))) {
        rc |= def_ptr(s, "cachingMode", json_string("ReadWrite"));
        rc |= def_ptr(s, "fsType", json_string("ext4"));
        rc |= def_ptr(s, "readOnly", json_false());
        rc |= def_ptr(s, "kind", json_string("Shared"));
    }
    if ((s = obj_at(vol, "projected"))) {
        rc |= def_ptr(s, "defaultMode", json_integer(0644));
        x = json_object_get(s, "sources");
        for (j = 0; json_is_array(x) && j < json_array_size(x); j++) {
            json_t *src = json_array_get(x, j), *d, *items, *t;
            size_t k;
            if ((d = obj_at(src, "downwardAPI"))) {
                items = json_object_get(d, "items");
                for (k = 0; json_is_array(items) && k < json_array_size(items); k++)
                    if (json_is_object(json_array_get(items, k)))
                        rc |= default_field_ref(json_array_get(items, k));
            }
            if ((t = obj_at(src, "serviceAccountToken")))
                rc |= def_ptr(t, "expirationSeconds", json_integer(3600));
        }
    }
    if ((s = obj_at(vol, "scaleIO"))) {
        rc |= def_str(s, "storageMode", "ThinProvisioned");
        rc |= def_str(s, "fsType", "xfs");
    }
    if ((s = obj_at(obj_at(obj_at(vol, "ephemeral"), "volumeClaimTemplate"), "spec")))
        rc |= def_ptr(s, "volumeMode", json_string("Filesystem"));
    return rc;
}

/* default_template applies SetObjectDefaults_Deployment's part for spec.template to t. */
static int default_template(json_t *t)
{
    json_t *spec = obj_at(t, "spec"), *vols;
    const char *sa, *dsa;
    size_t i;
    int rc = 0;

    if (!spec)
        return 0;
    /* SetDefaults_PodSpec */
    sa = json_string_value(json_object_get(spec, "serviceAccountName"));
    dsa = json_string_value(json_object_get(spec, "serviceAccount"));
    if ((!sa || !*sa) && dsa)
        rc |= json_object_set_new(spec, "serviceAccountName", json_string(dsa));
    sa = json_string_value(json_object_get(spec, "serviceAccountName"));
    rc |= json_object_set_new(spec, "serviceAccount", json_string(sa ? sa : ""));
    rc |= def_str(spec, "dnsPolicy", "ClusterFirst");
    rc |= def_str(spec, "restartPolicy", "Always");
    rc |= def_ptr(spec, "securityContext", json_object());
    rc |= def_int(spec, "terminationGracePeriodSeconds", 30, false);
    rc |= def_str(spec, "schedulerName", "default-scheduler");
    vols = json_object_get(spec, "volumes");
    for (i = 0; json_is_array(vols) && i < json_array_size(vols); i++)
        if (json_is_object(json_array_get(vols, i)))
            rc |= default_volume(json_array_get(vols, i));
    rc |= default_containers(json_object_get(spec, "initContainers"));
    rc |= default_containers(json_object_get(spec, "containers"));
    rc |= default_containers(json_object_get(spec, "ephemeralContainers"));
    return rc ? -ENOMEM : 0;
}

/* ---------------------------------------------------------------- the hash */

/* ph_print prints tmpl into p as the controller's spew does */
static int ph_print(struct ph *p, const json_t *tmpl)
{
    json_t *t;

    if (tmpl && !json_is_object(tmpl))
        return err_set(p->err, -ENOTSUP, "pod-template-hash: the template is not an object");
    if (!(t = tmpl ? json_deep_copy(tmpl) : json_object()))
        return err_set(p->err, -ENOMEM, "out of memory");
    if (default_template(t)) {
        json_decref(t);
        return err_set(p->err, -ENOMEM, "out of memory");
    }
    ph_puts(p, "(v1.PodTemplateSpec)");
    ph_struct(p, "v1.PodTemplateSpec", strlen("v1.PodTemplateSpec"), t, 0);
    json_decref(t);
    return p->rc;
}

int manifest_pod_template_hash(const json_t *tmpl, const int32_t *collision_count, char out[11],
                               struct err *err)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    struct ph p = {2166136261u, 0, 0, err, NULL};
    char dec[16];
    int i, n, rc;

    out[0] = '\0';
    if ((rc = ph_print(&p, tmpl)))
        return rc;
    if (collision_count) {
        /* binary.LittleEndian.PutUint32 into 8 bytes */
        uint32_t cc = (uint32_t)*collision_count;
        char b[8] = {(char)(cc & 0xff),
                     (char)(cc >> 8 & 0xff),
                     (char)(cc >> 16 & 0xff),
                     (char)(cc >> 24),
                     0,
                     0,
                     0,
                     0};
        ph_put(&p, b, sizeof(b));
    }
    n = snprintf(dec, sizeof(dec), "%" PRIu32, p.h);
    for (i = 0; i < n; i++)
        out[i] = alphabet[(unsigned char)dec[i] % (sizeof(alphabet) - 1)];
    out[n] = '\0';
    return 0;
}

int manifest_pod_template_print(const json_t *tmpl, struct buf *out, struct err *err)
{
    struct ph p = {2166136261u, 0, 0, err, out};

    return ph_print(&p, tmpl);
}

/* ---------------------------------------------------------------- the Go types' fields */

/* Every struct type reachable from k8s.io/api v0.37.2's v1.PodTemplateSpec, sorted by name:
 * "TYPE=" then its fields in declaration order, "GoName,json,GoType,EXPR" joined by ';'.
 * EXPR: s string, b bool, i signed and u unsigned integer, *X pointer, [X slice, mX map from
 * string, {TYPE} struct, q resource.Quantity, t metav1.Time, o intstr.IntOrString, f
 * metav1.FieldsV1. tests/k8s/internal/podhash derives the same lines from the Go types by
 * reflection and fails when they differ (a new Kubernetes release): copy its lines here. */
/* BEGIN podhash types */
static const char *const podhash_types[] = {
    "v1.AWSElasticBlockStoreVolumeSource="
    "VolumeID,volumeID,string,s;"
    "FSType,fsType,string,s;"
    "Partition,partition,int32,i;"
    "ReadOnly,readOnly,bool,b",
    "v1.Affinity="
    "NodeAffinity,nodeAffinity,*v1.NodeAffinity,*{v1.NodeAffinity};"
    "PodAffinity,podAffinity,*v1.PodAffinity,*{v1.PodAffinity};"
    "PodAntiAffinity,podAntiAffinity,*v1.PodAntiAffinity,*{v1.PodAntiAffinity}",
    "v1.AppArmorProfile="
    "Type,type,v1.AppArmorProfileType,s;"
    "LocalhostProfile,localhostProfile,*string,*s",
    "v1.AzureDiskVolumeSource="
    "DiskName,diskName,string,s;"
    "DataDiskURI,diskURI,string,s;"
    "CachingMode,cachingMode,*v1.AzureDataDiskCachingMode,*s;"
    "FSType,fsType,*string,*s;"
    "ReadOnly,readOnly,*bool,*b;"
    "Kind,kind,*v1.AzureDataDiskKind,*s",
    "v1.AzureFileVolumeSource="
    "SecretName,secretName,string,s;"
    "ShareName,shareName,string,s;"
    "ReadOnly,readOnly,bool,b",
    "v1.CSIVolumeSource="
    "Driver,driver,string,s;"
    "ReadOnly,readOnly,*bool,*b;"
    "FSType,fsType,*string,*s;"
    "VolumeAttributes,volumeAttributes,map[string]string,ms;"
    "NodePublishSecretRef,nodePublishSecretRef,*v1.LocalObjectReference,*{v1.LocalObjectReference}",
    "v1.Capabilities="
    "Add,add,[]v1.Capability,[s;"
    "Drop,drop,[]v1.Capability,[s",
    "v1.CephFSVolumeSource="
    "Monitors,monitors,[]string,[s;"
    "Path,path,string,s;"
    "User,user,string,s;"
    "SecretFile,secretFile,string,s;"
    "SecretRef,secretRef,*v1.LocalObjectReference,*{v1.LocalObjectReference};"
    "ReadOnly,readOnly,bool,b",
    "v1.CinderVolumeSource="
    "VolumeID,volumeID,string,s;"
    "FSType,fsType,string,s;"
    "ReadOnly,readOnly,bool,b;"
    "SecretRef,secretRef,*v1.LocalObjectReference,*{v1.LocalObjectReference}",
    "v1.ClusterTrustBundleProjection="
    "Name,name,*string,*s;"
    "SignerName,signerName,*string,*s;"
    "LabelSelector,labelSelector,*v1.LabelSelector,*{v1.LabelSelector};"
    "Optional,optional,*bool,*b;"
    "Path,path,string,s;"
    "User,user,*int64,*i",
    "v1.ConfigMapEnvSource="
    "LocalObjectReference,,v1.LocalObjectReference,{v1.LocalObjectReference};"
    "Optional,optional,*bool,*b",
    "v1.ConfigMapKeySelector="
    "LocalObjectReference,,v1.LocalObjectReference,{v1.LocalObjectReference};"
    "Key,key,string,s;"
    "Optional,optional,*bool,*b",
    "v1.ConfigMapProjection="
    "LocalObjectReference,,v1.LocalObjectReference,{v1.LocalObjectReference};"
    "Items,items,[]v1.KeyToPath,[{v1.KeyToPath};"
    "Optional,optional,*bool,*b",
    "v1.ConfigMapVolumeSource="
    "LocalObjectReference,,v1.LocalObjectReference,{v1.LocalObjectReference};"
    "Items,items,[]v1.KeyToPath,[{v1.KeyToPath};"
    "DefaultMode,defaultMode,*int32,*i;"
    "Optional,optional,*bool,*b;"
    "DefaultUser,defaultUser,*int64,*i",
    "v1.Container="
    "Name,name,string,s;"
    "Image,image,string,s;"
    "Command,command,[]string,[s;"
    "Args,args,[]string,[s;"
    "WorkingDir,workingDir,string,s;"
    "Ports,ports,[]v1.ContainerPort,[{v1.ContainerPort};"
    "EnvFrom,envFrom,[]v1.EnvFromSource,[{v1.EnvFromSource};"
    "Env,env,[]v1.EnvVar,[{v1.EnvVar};"
    "Resources,resources,v1.ResourceRequirements,{v1.ResourceRequirements};"
    "ResizePolicy,resizePolicy,[]v1.ContainerResizePolicy,[{v1.ContainerResizePolicy};"
    "RestartPolicy,restartPolicy,*v1.ContainerRestartPolicy,*s;"
    "RestartPolicyRules,restartPolicyRules,[]v1.ContainerRestartRule,[{v1.ContainerRestartRule};"
    "VolumeMounts,volumeMounts,[]v1.VolumeMount,[{v1.VolumeMount};"
    "VolumeDevices,volumeDevices,[]v1.VolumeDevice,[{v1.VolumeDevice};"
    "LivenessProbe,livenessProbe,*v1.Probe,*{v1.Probe};"
    "ReadinessProbe,readinessProbe,*v1.Probe,*{v1.Probe};"
    "StartupProbe,startupProbe,*v1.Probe,*{v1.Probe};"
    "Lifecycle,lifecycle,*v1.Lifecycle,*{v1.Lifecycle};"
    "TerminationMessagePath,terminationMessagePath,string,s;"
    "TerminationMessagePolicy,terminationMessagePolicy,v1.TerminationMessagePolicy,s;"
    "ImagePullPolicy,imagePullPolicy,v1.PullPolicy,s;"
    "SecurityContext,securityContext,*v1.SecurityContext,*{v1.SecurityContext};"
    "Stdin,stdin,bool,b;"
    "StdinOnce,stdinOnce,bool,b;"
    "TTY,tty,bool,b",
    "v1.ContainerPort="
    "Name,name,string,s;"
    "HostPort,hostPort,int32,i;"
    "ContainerPort,containerPort,int32,i;"
    "Protocol,protocol,v1.Protocol,s;"
    "HostIP,hostIP,string,s",
    "v1.ContainerResizePolicy="
    "ResourceName,resourceName,v1.ResourceName,s;"
    "RestartPolicy,restartPolicy,v1.ResourceResizeRestartPolicy,s",
    "v1.ContainerRestartRule="
    "Action,action,v1.ContainerRestartRuleAction,s;"
    "ExitCodes,exitCodes,*v1.ContainerRestartRuleOnExitCodes,*{v1.ContainerRestartRuleOnExitCodes}",
    "v1.ContainerRestartRuleOnExitCodes="
    "Operator,operator,v1.ContainerRestartRuleOnExitCodesOperator,s;"
    "Values,values,[]int32,[i",
    "v1.DownwardAPIProjection="
    "Items,items,[]v1.DownwardAPIVolumeFile,[{v1.DownwardAPIVolumeFile}",
    "v1.DownwardAPIVolumeFile="
    "Path,path,string,s;"
    "FieldRef,fieldRef,*v1.ObjectFieldSelector,*{v1.ObjectFieldSelector};"
    "ResourceFieldRef,resourceFieldRef,*v1.ResourceFieldSelector,*{v1.ResourceFieldSelector};"
    "Mode,mode,*int32,*i;"
    "User,user,*int64,*i",
    "v1.DownwardAPIVolumeSource="
    "Items,items,[]v1.DownwardAPIVolumeFile,[{v1.DownwardAPIVolumeFile};"
    "DefaultMode,defaultMode,*int32,*i;"
    "DefaultUser,defaultUser,*int64,*i",
    "v1.EmptyDirVolumeSource="
    "Medium,medium,v1.StorageMedium,s;"
    "SizeLimit,sizeLimit,*resource.Quantity,*q;"
    "Mode,mode,*int32,*i",
    "v1.EnvFromSource="
    "Prefix,prefix,string,s;"
    "ConfigMapRef,configMapRef,*v1.ConfigMapEnvSource,*{v1.ConfigMapEnvSource};"
    "SecretRef,secretRef,*v1.SecretEnvSource,*{v1.SecretEnvSource}",
    "v1.EnvVar="
    "Name,name,string,s;"
    "Value,value,string,s;"
    "ValueFrom,valueFrom,*v1.EnvVarSource,*{v1.EnvVarSource}",
    "v1.EnvVarSource="
    "FieldRef,fieldRef,*v1.ObjectFieldSelector,*{v1.ObjectFieldSelector};"
    "ResourceFieldRef,resourceFieldRef,*v1.ResourceFieldSelector,*{v1.ResourceFieldSelector};"
    "ConfigMapKeyRef,configMapKeyRef,*v1.ConfigMapKeySelector,*{v1.ConfigMapKeySelector};"
    "SecretKeyRef,secretKeyRef,*v1.SecretKeySelector,*{v1.SecretKeySelector};"
    "FileKeyRef,fileKeyRef,*v1.FileKeySelector,*{v1.FileKeySelector}",
    "v1.EphemeralContainer="
    "EphemeralContainerCommon,,v1.EphemeralContainerCommon,{v1.EphemeralContainerCommon};"
    "TargetContainerName,targetContainerName,string,s",
    "v1.EphemeralContainerCommon="
    "Name,name,string,s;"
    "Image,image,string,s;"
    "Command,command,[]string,[s;"
    "Args,args,[]string,[s;"
    "WorkingDir,workingDir,string,s;"
    "Ports,ports,[]v1.ContainerPort,[{v1.ContainerPort};"
    "EnvFrom,envFrom,[]v1.EnvFromSource,[{v1.EnvFromSource};"
    "Env,env,[]v1.EnvVar,[{v1.EnvVar};"
    "Resources,resources,v1.ResourceRequirements,{v1.ResourceRequirements};"
    "ResizePolicy,resizePolicy,[]v1.ContainerResizePolicy,[{v1.ContainerResizePolicy};"
    "RestartPolicy,restartPolicy,*v1.ContainerRestartPolicy,*s;"
    "RestartPolicyRules,restartPolicyRules,[]v1.ContainerRestartRule,[{v1.ContainerRestartRule};"
    "VolumeMounts,volumeMounts,[]v1.VolumeMount,[{v1.VolumeMount};"
    "VolumeDevices,volumeDevices,[]v1.VolumeDevice,[{v1.VolumeDevice};"
    "LivenessProbe,livenessProbe,*v1.Probe,*{v1.Probe};"
    "ReadinessProbe,readinessProbe,*v1.Probe,*{v1.Probe};"
    "StartupProbe,startupProbe,*v1.Probe,*{v1.Probe};"
    "Lifecycle,lifecycle,*v1.Lifecycle,*{v1.Lifecycle};"
    "TerminationMessagePath,terminationMessagePath,string,s;"
    "TerminationMessagePolicy,terminationMessagePolicy,v1.TerminationMessagePolicy,s;"
    "ImagePullPolicy,imagePullPolicy,v1.PullPolicy,s;"
    "SecurityContext,securityContext,*v1.SecurityContext,*{v1.SecurityContext};"
    "Stdin,stdin,bool,b;"
    "StdinOnce,stdinOnce,bool,b;"
    "TTY,tty,bool,b",
    "v1.EphemeralVolumeSource="
    "VolumeClaimTemplate,volumeClaimTemplate,*v1.PersistentVolumeClaimTemplate,*{v1.PersistentVolumeClaimTemplate}",
    "v1.EvictionResponder="
    "Name,name,string,s;"
    "Priority,priority,*int32,*i",
    "v1.ExecAction="
    "Command,command,[]string,[s",
    "v1.FCVolumeSource="
    "TargetWWNs,targetWWNs,[]string,[s;"
    "Lun,lun,*int32,*i;"
    "FSType,fsType,string,s;"
    "ReadOnly,readOnly,bool,b;"
    "WWIDs,wwids,[]string,[s",
    "v1.FileKeySelector="
    "VolumeName,volumeName,string,s;"
    "Path,path,string,s;"
    "Key,key,string,s;"
    "Optional,optional,*bool,*b",
    "v1.FlexVolumeSource="
    "Driver,driver,string,s;"
    "FSType,fsType,string,s;"
    "SecretRef,secretRef,*v1.LocalObjectReference,*{v1.LocalObjectReference};"
    "ReadOnly,readOnly,bool,b;"
    "Options,options,map[string]string,ms",
    "v1.FlockerVolumeSource="
    "DatasetName,datasetName,string,s;"
    "DatasetUUID,datasetUUID,string,s",
    "v1.GCEPersistentDiskVolumeSource="
    "PDName,pdName,string,s;"
    "FSType,fsType,string,s;"
    "Partition,partition,int32,i;"
    "ReadOnly,readOnly,bool,b",
    "v1.GRPCAction="
    "Port,port,int32,i;"
    "Service,service,*string,*s;"
    "Mode,mode,*v1.GRPCProbeMode,*s",
    "v1.GitRepoVolumeSource="
    "Repository,repository,string,s;"
    "Revision,revision,string,s;"
    "Directory,directory,string,s",
    "v1.GlusterfsVolumeSource="
    "EndpointsName,endpoints,string,s;"
    "Path,path,string,s;"
    "ReadOnly,readOnly,bool,b",
    "v1.HTTPGetAction="
    "Path,path,string,s;"
    "Port,port,intstr.IntOrString,o;"
    "Host,host,string,s;"
    "Scheme,scheme,v1.URIScheme,s;"
    "HTTPHeaders,httpHeaders,[]v1.HTTPHeader,[{v1.HTTPHeader};"
    "Protocol,protocol,*v1.HTTPProtocol,*s",
    "v1.HTTPHeader="
    "Name,name,string,s;"
    "Value,value,string,s",
    "v1.HostAlias="
    "IP,ip,string,s;"
    "Hostnames,hostnames,[]string,[s",
    "v1.HostPathVolumeSource="
    "Path,path,string,s;"
    "Type,type,*v1.HostPathType,*s",
    "v1.ISCSIVolumeSource="
    "TargetPortal,targetPortal,string,s;"
    "IQN,iqn,string,s;"
    "Lun,lun,int32,i;"
    "ISCSIInterface,iscsiInterface,string,s;"
    "FSType,fsType,string,s;"
    "ReadOnly,readOnly,bool,b;"
    "Portals,portals,[]string,[s;"
    "DiscoveryCHAPAuth,chapAuthDiscovery,bool,b;"
    "SessionCHAPAuth,chapAuthSession,bool,b;"
    "SecretRef,secretRef,*v1.LocalObjectReference,*{v1.LocalObjectReference};"
    "InitiatorName,initiatorName,*string,*s",
    "v1.ImageVolumeSource="
    "Reference,reference,string,s;"
    "PullPolicy,pullPolicy,v1.PullPolicy,s",
    "v1.KeyToPath="
    "Key,key,string,s;"
    "Path,path,string,s;"
    "Mode,mode,*int32,*i;"
    "User,user,*int64,*i",
    "v1.LabelSelector="
    "MatchLabels,matchLabels,map[string]string,ms;"
    "MatchExpressions,matchExpressions,[]v1.LabelSelectorRequirement,[{v1.LabelSelectorRequirement}",
    "v1.LabelSelectorRequirement="
    "Key,key,string,s;"
    "Operator,operator,v1.LabelSelectorOperator,s;"
    "Values,values,[]string,[s",
    "v1.Lifecycle="
    "PostStart,postStart,*v1.LifecycleHandler,*{v1.LifecycleHandler};"
    "PreStop,preStop,*v1.LifecycleHandler,*{v1.LifecycleHandler};"
    "StopSignal,stopSignal,*v1.Signal,*s",
    "v1.LifecycleHandler="
    "Exec,exec,*v1.ExecAction,*{v1.ExecAction};"
    "HTTPGet,httpGet,*v1.HTTPGetAction,*{v1.HTTPGetAction};"
    "TCPSocket,tcpSocket,*v1.TCPSocketAction,*{v1.TCPSocketAction};"
    "Sleep,sleep,*v1.SleepAction,*{v1.SleepAction}",
    "v1.LocalObjectReference="
    "Name,name,string,s",
    "v1.ManagedFieldsEntry="
    "Manager,manager,string,s;"
    "Operation,operation,v1.ManagedFieldsOperationType,s;"
    "APIVersion,apiVersion,string,s;"
    "Time,time,*v1.Time,*t;"
    "FieldsType,fieldsType,string,s;"
    "FieldsV1,fieldsV1,*v1.FieldsV1,*f;"
    "Subresource,subresource,string,s",
    "v1.NFSVolumeSource="
    "Server,server,string,s;"
    "Path,path,string,s;"
    "ReadOnly,readOnly,bool,b",
    "v1.NodeAffinity="
    "RequiredDuringSchedulingIgnoredDuringExecution,requiredDuringSchedulingIgnoredDuringExecution,*v1.NodeSelector,*{v1.NodeSelector};"
    "PreferredDuringSchedulingIgnoredDuringExecution,preferredDuringSchedulingIgnoredDuringExecution,[]v1.PreferredSchedulingTerm,[{v1.PreferredSchedulingTerm}",
    "v1.NodeSelector="
    "NodeSelectorTerms,nodeSelectorTerms,[]v1.NodeSelectorTerm,[{v1.NodeSelectorTerm}",
    "v1.NodeSelectorRequirement="
    "Key,key,string,s;"
    "Operator,operator,v1.NodeSelectorOperator,s;"
    "Values,values,[]string,[s",
    "v1.NodeSelectorTerm="
    "MatchExpressions,matchExpressions,[]v1.NodeSelectorRequirement,[{v1.NodeSelectorRequirement};"
    "MatchFields,matchFields,[]v1.NodeSelectorRequirement,[{v1.NodeSelectorRequirement}",
    "v1.ObjectFieldSelector="
    "APIVersion,apiVersion,string,s;"
    "FieldPath,fieldPath,string,s",
    "v1.ObjectMeta="
    "Name,name,string,s;"
    "GenerateName,generateName,string,s;"
    "Namespace,namespace,string,s;"
    "SelfLink,selfLink,string,s;"
    "UID,uid,types.UID,s;"
    "ResourceVersion,resourceVersion,string,s;"
    "Generation,generation,int64,i;"
    "CreationTimestamp,creationTimestamp,v1.Time,t;"
    "DeletionTimestamp,deletionTimestamp,*v1.Time,*t;"
    "DeletionGracePeriodSeconds,deletionGracePeriodSeconds,*int64,*i;"
    "Labels,labels,map[string]string,ms;"
    "Annotations,annotations,map[string]string,ms;"
    "OwnerReferences,ownerReferences,[]v1.OwnerReference,[{v1.OwnerReference};"
    "Finalizers,finalizers,[]string,[s;"
    "ManagedFields,managedFields,[]v1.ManagedFieldsEntry,[{v1.ManagedFieldsEntry}",
    "v1.OwnerReference="
    "APIVersion,apiVersion,string,s;"
    "Kind,kind,string,s;"
    "Name,name,string,s;"
    "UID,uid,types.UID,s;"
    "Controller,controller,*bool,*b;"
    "BlockOwnerDeletion,blockOwnerDeletion,*bool,*b",
    "v1.PersistentVolumeClaimSpec="
    "AccessModes,accessModes,[]v1.PersistentVolumeAccessMode,[s;"
    "Selector,selector,*v1.LabelSelector,*{v1.LabelSelector};"
    "Resources,resources,v1.VolumeResourceRequirements,{v1.VolumeResourceRequirements};"
    "VolumeName,volumeName,string,s;"
    "StorageClassName,storageClassName,*string,*s;"
    "VolumeMode,volumeMode,*v1.PersistentVolumeMode,*s;"
    "DataSource,dataSource,*v1.TypedLocalObjectReference,*{v1.TypedLocalObjectReference};"
    "DataSourceRef,dataSourceRef,*v1.TypedObjectReference,*{v1.TypedObjectReference};"
    "VolumeAttributesClassName,volumeAttributesClassName,*string,*s",
    "v1.PersistentVolumeClaimTemplate="
    "ObjectMeta,metadata,v1.ObjectMeta,{v1.ObjectMeta};"
    "Spec,spec,v1.PersistentVolumeClaimSpec,{v1.PersistentVolumeClaimSpec}",
    "v1.PersistentVolumeClaimVolumeSource="
    "ClaimName,claimName,string,s;"
    "ReadOnly,readOnly,bool,b",
    "v1.PhotonPersistentDiskVolumeSource="
    "PdID,pdID,string,s;"
    "FSType,fsType,string,s",
    "v1.PodAffinity="
    "RequiredDuringSchedulingIgnoredDuringExecution,requiredDuringSchedulingIgnoredDuringExecution,[]v1.PodAffinityTerm,[{v1.PodAffinityTerm};"
    "PreferredDuringSchedulingIgnoredDuringExecution,preferredDuringSchedulingIgnoredDuringExecution,[]v1.WeightedPodAffinityTerm,[{v1.WeightedPodAffinityTerm}",
    "v1.PodAffinityTerm="
    "LabelSelector,labelSelector,*v1.LabelSelector,*{v1.LabelSelector};"
    "Namespaces,namespaces,[]string,[s;"
    "TopologyKey,topologyKey,string,s;"
    "NamespaceSelector,namespaceSelector,*v1.LabelSelector,*{v1.LabelSelector};"
    "MatchLabelKeys,matchLabelKeys,[]string,[s;"
    "MismatchLabelKeys,mismatchLabelKeys,[]string,[s",
    "v1.PodAntiAffinity="
    "RequiredDuringSchedulingIgnoredDuringExecution,requiredDuringSchedulingIgnoredDuringExecution,[]v1.PodAffinityTerm,[{v1.PodAffinityTerm};"
    "PreferredDuringSchedulingIgnoredDuringExecution,preferredDuringSchedulingIgnoredDuringExecution,[]v1.WeightedPodAffinityTerm,[{v1.WeightedPodAffinityTerm}",
    "v1.PodCertificateProjection="
    "SignerName,signerName,string,s;"
    "KeyType,keyType,string,s;"
    "MaxExpirationSeconds,maxExpirationSeconds,*int32,*i;"
    "CredentialBundlePath,credentialBundlePath,string,s;"
    "KeyPath,keyPath,string,s;"
    "CertificateChainPath,certificateChainPath,string,s;"
    "UserAnnotations,userAnnotations,map[string]string,ms;"
    "User,user,*int64,*i",
    "v1.PodDNSConfig="
    "Nameservers,nameservers,[]string,[s;"
    "Searches,searches,[]string,[s;"
    "Options,options,[]v1.PodDNSConfigOption,[{v1.PodDNSConfigOption}",
    "v1.PodDNSConfigOption="
    "Name,name,string,s;"
    "Value,value,*string,*s",
    "v1.PodOS="
    "Name,name,v1.OSName,s",
    "v1.PodReadinessGate="
    "ConditionType,conditionType,v1.PodConditionType,s",
    "v1.PodResourceClaim="
    "Name,name,string,s;"
    "ResourceClaimName,resourceClaimName,*string,*s;"
    "ResourceClaimTemplateName,resourceClaimTemplateName,*string,*s",
    "v1.PodSchedulingGate="
    "Name,name,string,s",
    "v1.PodSchedulingGroup="
    "PodGroupName,podGroupName,*string,*s",
    "v1.PodSecurityContext="
    "SELinuxOptions,seLinuxOptions,*v1.SELinuxOptions,*{v1.SELinuxOptions};"
    "WindowsOptions,windowsOptions,*v1.WindowsSecurityContextOptions,*{v1.WindowsSecurityContextOptions};"
    "RunAsUser,runAsUser,*int64,*i;"
    "RunAsGroup,runAsGroup,*int64,*i;"
    "RunAsNonRoot,runAsNonRoot,*bool,*b;"
    "SupplementalGroups,supplementalGroups,[]int64,[i;"
    "SupplementalGroupsPolicy,supplementalGroupsPolicy,*v1.SupplementalGroupsPolicy,*s;"
    "FSGroup,fsGroup,*int64,*i;"
    "Sysctls,sysctls,[]v1.Sysctl,[{v1.Sysctl};"
    "FSGroupChangePolicy,fsGroupChangePolicy,*v1.PodFSGroupChangePolicy,*s;"
    "SeccompProfile,seccompProfile,*v1.SeccompProfile,*{v1.SeccompProfile};"
    "AppArmorProfile,appArmorProfile,*v1.AppArmorProfile,*{v1.AppArmorProfile};"
    "SELinuxChangePolicy,seLinuxChangePolicy,*v1.PodSELinuxChangePolicy,*s",
    "v1.PodSpec="
    "Volumes,volumes,[]v1.Volume,[{v1.Volume};"
    "InitContainers,initContainers,[]v1.Container,[{v1.Container};"
    "Containers,containers,[]v1.Container,[{v1.Container};"
    "EphemeralContainers,ephemeralContainers,[]v1.EphemeralContainer,[{v1.EphemeralContainer};"
    "RestartPolicy,restartPolicy,v1.RestartPolicy,s;"
    "TerminationGracePeriodSeconds,terminationGracePeriodSeconds,*int64,*i;"
    "ActiveDeadlineSeconds,activeDeadlineSeconds,*int64,*i;"
    "DNSPolicy,dnsPolicy,v1.DNSPolicy,s;"
    "NodeSelector,nodeSelector,map[string]string,ms;"
    "ServiceAccountName,serviceAccountName,string,s;"
    "DeprecatedServiceAccount,serviceAccount,string,s;"
    "AutomountServiceAccountToken,automountServiceAccountToken,*bool,*b;"
    "NodeName,nodeName,string,s;"
    "HostNetwork,hostNetwork,bool,b;"
    "HostPID,hostPID,bool,b;"
    "HostIPC,hostIPC,bool,b;"
    "ShareProcessNamespace,shareProcessNamespace,*bool,*b;"
    "SecurityContext,securityContext,*v1.PodSecurityContext,*{v1.PodSecurityContext};"
    "ImagePullSecrets,imagePullSecrets,[]v1.LocalObjectReference,[{v1.LocalObjectReference};"
    "Hostname,hostname,string,s;"
    "Subdomain,subdomain,string,s;"
    "Affinity,affinity,*v1.Affinity,*{v1.Affinity};"
    "SchedulerName,schedulerName,string,s;"
    "Tolerations,tolerations,[]v1.Toleration,[{v1.Toleration};"
    "HostAliases,hostAliases,[]v1.HostAlias,[{v1.HostAlias};"
    "PriorityClassName,priorityClassName,string,s;"
    "Priority,priority,*int32,*i;"
    "DNSConfig,dnsConfig,*v1.PodDNSConfig,*{v1.PodDNSConfig};"
    "ReadinessGates,readinessGates,[]v1.PodReadinessGate,[{v1.PodReadinessGate};"
    "RuntimeClassName,runtimeClassName,*string,*s;"
    "EnableServiceLinks,enableServiceLinks,*bool,*b;"
    "PreemptionPolicy,preemptionPolicy,*v1.PreemptionPolicy,*s;"
    "Overhead,overhead,v1.ResourceList,mq;"
    "TopologySpreadConstraints,topologySpreadConstraints,[]v1.TopologySpreadConstraint,[{v1.TopologySpreadConstraint};"
    "SetHostnameAsFQDN,setHostnameAsFQDN,*bool,*b;"
    "OS,os,*v1.PodOS,*{v1.PodOS};"
    "HostUsers,hostUsers,*bool,*b;"
    "SchedulingGates,schedulingGates,[]v1.PodSchedulingGate,[{v1.PodSchedulingGate};"
    "ResourceClaims,resourceClaims,[]v1.PodResourceClaim,[{v1.PodResourceClaim};"
    "Resources,resources,*v1.ResourceRequirements,*{v1.ResourceRequirements};"
    "HostnameOverride,hostnameOverride,*string,*s;"
    "SchedulingGroup,schedulingGroup,*v1.PodSchedulingGroup,*{v1.PodSchedulingGroup};"
    "EvictionResponders,evictionResponders,[]v1.EvictionResponder,[{v1.EvictionResponder}",
    "v1.PodTemplateSpec="
    "ObjectMeta,metadata,v1.ObjectMeta,{v1.ObjectMeta};"
    "Spec,spec,v1.PodSpec,{v1.PodSpec}",
    "v1.PortworxVolumeSource="
    "VolumeID,volumeID,string,s;"
    "FSType,fsType,string,s;"
    "ReadOnly,readOnly,bool,b",
    "v1.PreferredSchedulingTerm="
    "Weight,weight,int32,i;"
    "Preference,preference,v1.NodeSelectorTerm,{v1.NodeSelectorTerm}",
    "v1.Probe="
    "ProbeHandler,,v1.ProbeHandler,{v1.ProbeHandler};"
    "InitialDelaySeconds,initialDelaySeconds,int32,i;"
    "TimeoutSeconds,timeoutSeconds,int32,i;"
    "PeriodSeconds,periodSeconds,int32,i;"
    "SuccessThreshold,successThreshold,int32,i;"
    "FailureThreshold,failureThreshold,int32,i;"
    "TerminationGracePeriodSeconds,terminationGracePeriodSeconds,*int64,*i",
    "v1.ProbeHandler="
    "Exec,exec,*v1.ExecAction,*{v1.ExecAction};"
    "HTTPGet,httpGet,*v1.HTTPGetAction,*{v1.HTTPGetAction};"
    "TCPSocket,tcpSocket,*v1.TCPSocketAction,*{v1.TCPSocketAction};"
    "GRPC,grpc,*v1.GRPCAction,*{v1.GRPCAction}",
    "v1.ProjectedVolumeSource="
    "Sources,sources,[]v1.VolumeProjection,[{v1.VolumeProjection};"
    "DefaultMode,defaultMode,*int32,*i;"
    "DefaultUser,defaultUser,*int64,*i",
    "v1.QuobyteVolumeSource="
    "Registry,registry,string,s;"
    "Volume,volume,string,s;"
    "ReadOnly,readOnly,bool,b;"
    "User,user,string,s;"
    "Group,group,string,s;"
    "Tenant,tenant,string,s",
    "v1.RBDVolumeSource="
    "CephMonitors,monitors,[]string,[s;"
    "RBDImage,image,string,s;"
    "FSType,fsType,string,s;"
    "RBDPool,pool,string,s;"
    "RadosUser,user,string,s;"
    "Keyring,keyring,string,s;"
    "SecretRef,secretRef,*v1.LocalObjectReference,*{v1.LocalObjectReference};"
    "ReadOnly,readOnly,bool,b",
    "v1.ResourceClaim="
    "Name,name,string,s;"
    "Request,request,string,s",
    "v1.ResourceFieldSelector="
    "ContainerName,containerName,string,s;"
    "Resource,resource,string,s;"
    "Divisor,divisor,resource.Quantity,q",
    "v1.ResourceRequirements="
    "Limits,limits,v1.ResourceList,mq;"
    "Requests,requests,v1.ResourceList,mq;"
    "Claims,claims,[]v1.ResourceClaim,[{v1.ResourceClaim}",
    "v1.SELinuxOptions="
    "User,user,string,s;"
    "Role,role,string,s;"
    "Type,type,string,s;"
    "Level,level,string,s",
    "v1.ScaleIOVolumeSource="
    "Gateway,gateway,string,s;"
    "System,system,string,s;"
    "SecretRef,secretRef,*v1.LocalObjectReference,*{v1.LocalObjectReference};"
    "SSLEnabled,sslEnabled,bool,b;"
    "ProtectionDomain,protectionDomain,string,s;"
    "StoragePool,storagePool,string,s;"
    "StorageMode,storageMode,string,s;"
    "VolumeName,volumeName,string,s;"
    "FSType,fsType,string,s;"
    "ReadOnly,readOnly,bool,b",
    "v1.SeccompProfile="
    "Type,type,v1.SeccompProfileType,s;"
    "LocalhostProfile,localhostProfile,*string,*s",
    "v1.SecretEnvSource="
    "LocalObjectReference,,v1.LocalObjectReference,{v1.LocalObjectReference};"
    "Optional,optional,*bool,*b",
    "v1.SecretKeySelector="
    "LocalObjectReference,,v1.LocalObjectReference,{v1.LocalObjectReference};"
    "Key,key,string,s;"
    "Optional,optional,*bool,*b",
    "v1.SecretProjection="
    "LocalObjectReference,,v1.LocalObjectReference,{v1.LocalObjectReference};"
    "Items,items,[]v1.KeyToPath,[{v1.KeyToPath};"
    "Optional,optional,*bool,*b",
    "v1.SecretVolumeSource="
    "SecretName,secretName,string,s;"
    "Items,items,[]v1.KeyToPath,[{v1.KeyToPath};"
    "DefaultMode,defaultMode,*int32,*i;"
    "Optional,optional,*bool,*b;"
    "DefaultUser,defaultUser,*int64,*i",
    "v1.SecurityContext="
    "Capabilities,capabilities,*v1.Capabilities,*{v1.Capabilities};"
    "Privileged,privileged,*bool,*b;"
    "SELinuxOptions,seLinuxOptions,*v1.SELinuxOptions,*{v1.SELinuxOptions};"
    "WindowsOptions,windowsOptions,*v1.WindowsSecurityContextOptions,*{v1.WindowsSecurityContextOptions};"
    "RunAsUser,runAsUser,*int64,*i;"
    "RunAsGroup,runAsGroup,*int64,*i;"
    "RunAsNonRoot,runAsNonRoot,*bool,*b;"
    "ReadOnlyRootFilesystem,readOnlyRootFilesystem,*bool,*b;"
    "AllowPrivilegeEscalation,allowPrivilegeEscalation,*bool,*b;"
    "ProcMount,procMount,*v1.ProcMountType,*s;"
    "SeccompProfile,seccompProfile,*v1.SeccompProfile,*{v1.SeccompProfile};"
    "AppArmorProfile,appArmorProfile,*v1.AppArmorProfile,*{v1.AppArmorProfile}",
    "v1.ServiceAccountTokenProjection="
    "Audience,audience,string,s;"
    "ExpirationSeconds,expirationSeconds,*int64,*i;"
    "Path,path,string,s;"
    "User,user,*int64,*i",
    "v1.SleepAction="
    "Seconds,seconds,int64,i",
    "v1.StorageOSVolumeSource="
    "VolumeName,volumeName,string,s;"
    "VolumeNamespace,volumeNamespace,string,s;"
    "FSType,fsType,string,s;"
    "ReadOnly,readOnly,bool,b;"
    "SecretRef,secretRef,*v1.LocalObjectReference,*{v1.LocalObjectReference}",
    "v1.Sysctl="
    "Name,name,string,s;"
    "Value,value,string,s",
    "v1.TCPSocketAction="
    "Port,port,intstr.IntOrString,o;"
    "Host,host,string,s",
    "v1.Toleration="
    "Key,key,string,s;"
    "Operator,operator,v1.TolerationOperator,s;"
    "Value,value,string,s;"
    "Effect,effect,v1.TaintEffect,s;"
    "TolerationSeconds,tolerationSeconds,*int64,*i",
    "v1.TopologySpreadConstraint="
    "MaxSkew,maxSkew,int32,i;"
    "TopologyKey,topologyKey,string,s;"
    "WhenUnsatisfiable,whenUnsatisfiable,v1.UnsatisfiableConstraintAction,s;"
    "LabelSelector,labelSelector,*v1.LabelSelector,*{v1.LabelSelector};"
    "MinDomains,minDomains,*int32,*i;"
    "NodeAffinityPolicy,nodeAffinityPolicy,*v1.NodeInclusionPolicy,*s;"
    "NodeTaintsPolicy,nodeTaintsPolicy,*v1.NodeInclusionPolicy,*s;"
    "MatchLabelKeys,matchLabelKeys,[]string,[s",
    "v1.TypedLocalObjectReference="
    "APIGroup,apiGroup,*string,*s;"
    "Kind,kind,string,s;"
    "Name,name,string,s",
    "v1.TypedObjectReference="
    "APIGroup,apiGroup,*string,*s;"
    "Kind,kind,string,s;"
    "Name,name,string,s;"
    "Namespace,namespace,*string,*s",
    "v1.Volume="
    "Name,name,string,s;"
    "VolumeSource,,v1.VolumeSource,{v1.VolumeSource}",
    "v1.VolumeDevice="
    "Name,name,string,s;"
    "DevicePath,devicePath,string,s",
    "v1.VolumeMount="
    "Name,name,string,s;"
    "ReadOnly,readOnly,bool,b;"
    "RecursiveReadOnly,recursiveReadOnly,*v1.RecursiveReadOnlyMode,*s;"
    "MountPath,mountPath,string,s;"
    "SubPath,subPath,string,s;"
    "MountPropagation,mountPropagation,*v1.MountPropagationMode,*s;"
    "SubPathExpr,subPathExpr,string,s;"
    "BindMountOptions,bindMountOptions,[]string,[s",
    "v1.VolumeProjection="
    "Secret,secret,*v1.SecretProjection,*{v1.SecretProjection};"
    "DownwardAPI,downwardAPI,*v1.DownwardAPIProjection,*{v1.DownwardAPIProjection};"
    "ConfigMap,configMap,*v1.ConfigMapProjection,*{v1.ConfigMapProjection};"
    "ServiceAccountToken,serviceAccountToken,*v1.ServiceAccountTokenProjection,*{v1.ServiceAccountTokenProjection};"
    "ClusterTrustBundle,clusterTrustBundle,*v1.ClusterTrustBundleProjection,*{v1.ClusterTrustBundleProjection};"
    "PodCertificate,podCertificate,*v1.PodCertificateProjection,*{v1.PodCertificateProjection}",
    "v1.VolumeResourceRequirements="
    "Limits,limits,v1.ResourceList,mq;"
    "Requests,requests,v1.ResourceList,mq",
    "v1.VolumeSource="
    "HostPath,hostPath,*v1.HostPathVolumeSource,*{v1.HostPathVolumeSource};"
    "EmptyDir,emptyDir,*v1.EmptyDirVolumeSource,*{v1.EmptyDirVolumeSource};"
    "GCEPersistentDisk,gcePersistentDisk,*v1.GCEPersistentDiskVolumeSource,*{v1.GCEPersistentDiskVolumeSource};"
    "AWSElasticBlockStore,awsElasticBlockStore,*v1.AWSElasticBlockStoreVolumeSource,*{v1.AWSElasticBlockStoreVolumeSource};"
    "GitRepo,gitRepo,*v1.GitRepoVolumeSource,*{v1.GitRepoVolumeSource};"
    "Secret,secret,*v1.SecretVolumeSource,*{v1.SecretVolumeSource};"
    "NFS,nfs,*v1.NFSVolumeSource,*{v1.NFSVolumeSource};"
    "ISCSI,iscsi,*v1.ISCSIVolumeSource,*{v1.ISCSIVolumeSource};"
    "Glusterfs,glusterfs,*v1.GlusterfsVolumeSource,*{v1.GlusterfsVolumeSource};"
    "PersistentVolumeClaim,persistentVolumeClaim,*v1.PersistentVolumeClaimVolumeSource,*{v1.PersistentVolumeClaimVolumeSource};"
    "RBD,rbd,*v1.RBDVolumeSource,*{v1.RBDVolumeSource};"
    "FlexVolume,flexVolume,*v1.FlexVolumeSource,*{v1.FlexVolumeSource};"
    "Cinder,cinder,*v1.CinderVolumeSource,*{v1.CinderVolumeSource};"
    "CephFS,cephfs,*v1.CephFSVolumeSource,*{v1.CephFSVolumeSource};"
    "Flocker,flocker,*v1.FlockerVolumeSource,*{v1.FlockerVolumeSource};"
    "DownwardAPI,downwardAPI,*v1.DownwardAPIVolumeSource,*{v1.DownwardAPIVolumeSource};"
    "FC,fc,*v1.FCVolumeSource,*{v1.FCVolumeSource};"
    "AzureFile,azureFile,*v1.AzureFileVolumeSource,*{v1.AzureFileVolumeSource};"
    "ConfigMap,configMap,*v1.ConfigMapVolumeSource,*{v1.ConfigMapVolumeSource};"
    "VsphereVolume,vsphereVolume,*v1.VsphereVirtualDiskVolumeSource,*{v1.VsphereVirtualDiskVolumeSource};"
    "Quobyte,quobyte,*v1.QuobyteVolumeSource,*{v1.QuobyteVolumeSource};"
    "AzureDisk,azureDisk,*v1.AzureDiskVolumeSource,*{v1.AzureDiskVolumeSource};"
    "PhotonPersistentDisk,photonPersistentDisk,*v1.PhotonPersistentDiskVolumeSource,*{v1.PhotonPersistentDiskVolumeSource};"
    "Projected,projected,*v1.ProjectedVolumeSource,*{v1.ProjectedVolumeSource};"
    "PortworxVolume,portworxVolume,*v1.PortworxVolumeSource,*{v1.PortworxVolumeSource};"
    "ScaleIO,scaleIO,*v1.ScaleIOVolumeSource,*{v1.ScaleIOVolumeSource};"
    "StorageOS,storageos,*v1.StorageOSVolumeSource,*{v1.StorageOSVolumeSource};"
    "CSI,csi,*v1.CSIVolumeSource,*{v1.CSIVolumeSource};"
    "Ephemeral,ephemeral,*v1.EphemeralVolumeSource,*{v1.EphemeralVolumeSource};"
    "Image,image,*v1.ImageVolumeSource,*{v1.ImageVolumeSource}",
    "v1.VsphereVirtualDiskVolumeSource="
    "VolumePath,volumePath,string,s;"
    "FSType,fsType,string,s;"
    "StoragePolicyName,storagePolicyName,string,s;"
    "StoragePolicyID,storagePolicyID,string,s",
    "v1.WeightedPodAffinityTerm="
    "Weight,weight,int32,i;"
    "PodAffinityTerm,podAffinityTerm,v1.PodAffinityTerm,{v1.PodAffinityTerm}",
    "v1.WindowsSecurityContextOptions="
    "GMSACredentialSpecName,gmsaCredentialSpecName,*string,*s;"
    "GMSACredentialSpec,gmsaCredentialSpec,*string,*s;"
    "RunAsUserName,runAsUserName,*string,*s;"
    "HostProcess,hostProcess,*bool,*b",
};
/* END podhash types */

static const char *const *ph_table(size_t *n)
{
    *n = sizeof(podhash_types) / sizeof(podhash_types[0]);
    return podhash_types;
}
