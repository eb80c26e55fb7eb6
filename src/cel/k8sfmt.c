/* k8sfmt.c - Kubernetes' format library (format.<name>(), format.named(), <Format>.validate()):
 * the apimachinery name validations with their messages, the strfmt uuid/byte/date/datetime
 * checks and the uri check (url.ParseRequestURI, in k8snet.c). */
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "cel/cost.h"
#include "cel/eval.h"
#include "cel/lib.h"

#define UUID_PATTERN "(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
#define DATETIME_PATTERN "^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$"

#define LABEL_FMT "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define SUBDOMAIN_FMT LABEL_FMT "(\\." LABEL_FMT ")*"
#define DNS1035_FMT "[a-z]([-a-z0-9]*[a-z0-9])?"
#define KEY_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"

#define LABEL_MSG                                                                                  \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "   \
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "     \
    "used for validation is '" LABEL_FMT "')"
#define SUBDOMAIN_MSG                                                                              \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "       \
    "used for validation is '" SUBDOMAIN_FMT "')"
#define DNS1035_MSG                                                                                \
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "   \
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "           \
    "'abc-123', regex used for validation is '" DNS1035_FMT "')"
#define KEY_MSG                                                                                    \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "    \
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "         \
    "validation is '" KEY_FMT "')"
#define VALUE_MSG                                                                                  \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "    \
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "             \
    "'my_value',  or '12345', regex used for validation is '(" KEY_FMT ")?')"

enum fmt_id {
    F_DNS1123_LABEL,
    F_DNS1123_SUBDOMAIN,
    F_DNS1035_LABEL,
    F_QUALIFIED_NAME,
    F_DNS1123_LABEL_PREFIX,
    F_DNS1123_SUBDOMAIN_PREFIX,
    F_DNS1035_LABEL_PREFIX,
    F_LABEL_VALUE,
    F_URI,
    F_UUID,
    F_BYTE,
    F_DATE,
    F_DATETIME,
};

static const struct fmt {
    const char *key; /* format.<key>() */
    uint64_t regex;  /* MaxRegexSize */
} fmts[] = {
    [F_DNS1123_LABEL] = {"dns1123Label", 30},
    [F_DNS1123_SUBDOMAIN] = {"dns1123Subdomain", 60},
    [F_DNS1035_LABEL] = {"dns1035Label", 30},
    [F_QUALIFIED_NAME] = {"qualifiedName", 60},
    [F_DNS1123_LABEL_PREFIX] = {"dns1123LabelPrefix", 30},
    [F_DNS1123_SUBDOMAIN_PREFIX] = {"dns1123SubdomainPrefix", 60},
    [F_DNS1035_LABEL_PREFIX] = {"dns1035LabelPrefix", 30},
    [F_LABEL_VALUE] = {"labelValue", 40},
    [F_URI] = {"uri", 1103},
    [F_UUID] = {"uuid", sizeof(UUID_PATTERN) - 1},
    [F_BYTE] = {"byte", 84},
    [F_DATE] = {"date", sizeof(DATETIME_PATTERN) - 1},
    [F_DATETIME] = {"datetime", sizeof(DATETIME_PATTERN) - 1},
};
#define NFMTS (sizeof(fmts) / sizeof(fmts[0]))

static int fmt_find(const char *key, size_t n)
{
    for (size_t i = 0; i < NFMTS; i++)
        if (strlen(fmts[i].key) == n && !memcmp(fmts[i].key, key, n))
            return (int)i;
    return -1;
}

uint64_t cel_format_max_regex_size(const char *name)
{
    int i = fmt_find(name, strlen(name));
    return i < 0 ? 0 : fmts[i].regex;
}

/* ---- the validations; each appends its messages to errs ---- */

struct msgs {
    const char *m[4];
    char own[4][48];
    int n;
};

static void add(struct msgs *e, const char *m)
{
    if (e->n < 4)
        e->m[e->n++] = m;
}

static void add_len(struct msgs *e, int max, const char *unit)
{
    if (e->n < 4) {
        snprintf(e->own[e->n], sizeof(e->own[0]), "must be no more than %d %s", max, unit);
        e->m[e->n] = e->own[e->n];
        e->n++;
    }
}

static bool lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ (first may also be restricted to a letter) */
static bool is_label(const char *s, size_t n, bool alpha_first)
{
    if (n == 0 || !lower_alnum(s[0]) || !lower_alnum(s[n - 1]))
        return false;
    if (alpha_first && !(s[0] >= 'a' && s[0] <= 'z'))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!lower_alnum(s[i]) && s[i] != '-')
            return false;
    return true;
}

static bool is_subdomain(const char *s, size_t n)
{
    size_t st = 0;
    for (size_t i = 0; i <= n; i++)
        if (i == n || s[i] == '.') {
            if (!is_label(s + st, i - st, false))
                return false;
            st = i + 1;
        }
    return true;
}

static void v_dns1123_label(const char *s, size_t n, struct msgs *e)
{
    if (n > 63)
        add_len(e, 63, "characters");
    if (!is_label(s, n, false))
        add(e, is_subdomain(s, n) ? "must not contain dots" : LABEL_MSG);
}

static void v_subdomain(const char *s, size_t n, struct msgs *e, const char *unit,
                        const char *prefix)
{
    (void)prefix;
    if (n > 253)
        add_len(e, 253, unit);
    if (!is_subdomain(s, n))
        add(e, SUBDOMAIN_MSG);
}

static void v_dns1035_label(const char *s, size_t n, struct msgs *e)
{
    if (n > 63)
        add_len(e, 63, "characters");
    if (!is_label(s, n, true))
        add(e, DNS1035_MSG);
}

static bool key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$ */
static bool is_key_name(const char *s, size_t n)
{
    if (n == 0 || !key_char(s[0]) || !key_char(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!key_char(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

/* The messages of content.IsLabelKey, which carry prefixes: kept in a static table. */
static const char *const prefixed[] = {
    "prefix part must be non-empty",
    "prefix part must be no more than 253 bytes",
    "prefix part " SUBDOMAIN_MSG,
    "name part must be non-empty",
    "name part must be no more than 63 bytes",
    "name part " KEY_MSG,
    "a valid label key " KEY_MSG " with an optional DNS subdomain prefix and '/' (e.g. "
    "'example.com/MyName')",
};

static void v_qualified_name(const char *s, size_t n, struct msgs *e)
{
    const char *name = s;
    size_t nn = n, slashes = 0, at = 0;

    for (size_t i = 0; i < n; i++)
        if (s[i] == '/') {
            slashes++;
            at = i;
        }
    if (slashes > 1) {
        add(e, prefixed[6]);
        return;
    }
    if (slashes == 1) {
        name = s + at + 1;
        nn = n - at - 1;
        if (at == 0) {
            add(e, prefixed[0]);
        } else {
            if (at > 253)
                add(e, prefixed[1]);
            if (!is_subdomain(s, at))
                add(e, prefixed[2]);
        }
    }
    if (nn == 0)
        add(e, prefixed[3]);
    else if (nn > 63)
        add(e, prefixed[4]);
    if (!is_key_name(name, nn))
        add(e, prefixed[5]);
}

static void v_label_value(const char *s, size_t n, struct msgs *e)
{
    if (n > 63)
        add_len(e, 63, "bytes");
    if (n && !is_key_name(s, n))
        add(e, VALUE_MSG);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool is_uuid(const char *s, size_t n)
{
    static const int groups[] = {8, 4, 4, 4, 12};
    size_t p = 0;
    for (int g = 0; g < 5; g++) {
        if (g && p < n && s[p] == '-')
            p++;
        for (int k = 0; k < groups[g]; k++, p++)
            if (p >= n || hexval(s[p]) < 0)
                return false;
    }
    return p == n;
}

static bool b64_char(char c)
{
    return key_char(c) || c == '+' || c == '/';
}

/* ^(?:[A-Za-z0-9+\/]{4})*(?:[A-Za-z0-9+\/]{2}==|[A-Za-z0-9+\/]{3}=|[A-Za-z0-9+\/]{4})$ */
static bool is_base64(const char *s, size_t n)
{
    if (n == 0 || n % 4)
        return false;
    for (size_t i = 0; i < n - 4; i++)
        if (!b64_char(s[i]))
            return false;
    const char *t = s + n - 4;
    if (!b64_char(t[0]) || !b64_char(t[1]))
        return false;
    if (t[2] == '=')
        return t[3] == '=';
    return b64_char(t[2]) && (t[3] == '=' || b64_char(t[3]));
}

static bool digits(const char *s, int k)
{
    for (int i = 0; i < k; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* time.Parse("2006-01-02", s) succeeds */
static bool is_date(const char *s, size_t n)
{
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (n != 10 || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' ||
        !digits(s + 8, 2))
        return false;
    int y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    int m = (s[5] - '0') * 10 + (s[6] - '0');
    int d = (s[8] - '0') * 10 + (s[9] - '0');
    if (m < 1 || m > 12 || d < 1)
        return false;
    int max = mdays[m - 1];
    if (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
        max = 29;
    return d <= max;
}

/* the zone tail of the datetime pattern: z|[+-][0-9]{2}:[0-9]{2} */
static bool dt_zone(const char *s, size_t n)
{
    if (n == 1)
        return s[0] == 'z' || s[0] == 'Z';
    return n == 6 && (s[0] == '+' || s[0] == '-') && digits(s + 1, 2) && s[3] == ':' &&
           digits(s + 4, 2);
}

/* the length of the UTF-8 rune at s (an invalid byte counts as one rune of one byte) */
static size_t rune_len(const unsigned char *s, size_t n)
{
    size_t l = s[0] < 0x80 ? 1 : s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;
    if (l == 0 || l > n)
        return 1;
    for (size_t i = 1; i < l; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 1;
    if (l == 3 && ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0)))
        return 1;
    if (l == 4 && ((s[0] == 0xF0 && s[1] < 0x90) || s[0] > 0xF4 || (s[0] == 0xF4 && s[1] >= 0x90)))
        return 1;
    return l;
}

/* strfmt.IsDateTime: split the lower-cased string at 't'; a date, then the time pattern */
static bool is_datetime(const char *s, size_t n)
{
    size_t t1, t2;

    if (n < 4)
        return false;
    for (t1 = 0; t1 < n && s[t1] != 't' && s[t1] != 'T'; t1++)
        ;
    if (t1 == n || !is_date(s, t1))
        return false;
    for (t2 = t1 + 1; t2 < n && s[t2] != 't' && s[t2] != 'T'; t2++)
        ;
    s += t1 + 1;
    n = t2 - t1 - 1;
    if (n < 8 || !digits(s, 2) || s[2] != ':' || !digits(s + 3, 2) || s[5] != ':' ||
        !digits(s + 6, 2))
        return false;
    if (memcmp(s, "23", 2) > 0 || memcmp(s + 3, "59", 2) > 0 || memcmp(s + 6, "59", 2) > 0)
        return false;
    s += 8;
    n -= 8;
    if (dt_zone(s, n))
        return true;
    if (n == 0 || s[0] == '\n')
        return false;
    size_t r = rune_len((const unsigned char *)s, n), d = r;
    while (d < n && s[d] >= '0' && s[d] <= '9')
        d++;
    if (d == r)
        return false;
    /* [0-9]+ backs off only into digits, which the zone cannot start with */
    return dt_zone(s + d, n - d);
}

static struct cel_val fmt_val(int i)
{
    struct cel_val v = {.k = CV_FORMAT};
    v.v.s = fmts[i].key;
    return v;
}

#define FMT_FN(name, id)                                                                           \
    static struct cel_val name(struct ev *ev, const struct cel_val *a, int n)                      \
    {                                                                                              \
        (void)ev;                                                                                  \
        (void)a;                                                                                   \
        (void)n;                                                                                   \
        return fmt_val(id);                                                                        \
    }
FMT_FN(f_dns1123_label, F_DNS1123_LABEL)
FMT_FN(f_dns1123_subdomain, F_DNS1123_SUBDOMAIN)
FMT_FN(f_dns1035_label, F_DNS1035_LABEL)
FMT_FN(f_qualified_name, F_QUALIFIED_NAME)
FMT_FN(f_dns1123_label_prefix, F_DNS1123_LABEL_PREFIX)
FMT_FN(f_dns1123_subdomain_prefix, F_DNS1123_SUBDOMAIN_PREFIX)
FMT_FN(f_dns1035_label_prefix, F_DNS1035_LABEL_PREFIX)
FMT_FN(f_label_value, F_LABEL_VALUE)
FMT_FN(f_uri, F_URI)
FMT_FN(f_uuid, F_UUID)
FMT_FN(f_byte, F_BYTE)
FMT_FN(f_date, F_DATE)
FMT_FN(f_datetime, F_DATETIME)

static struct cel_val f_named(struct ev *ev, const struct cel_val *a, int n)
{
    struct cel_val o = {.k = CV_OPTIONAL};
    struct cel_val *box;
    int i = fmt_find(a[0].v.s, a[0].n);
    (void)n;
    if (i < 0)
        return o;
    box = arena_alloc(ev->a, sizeof(*box));
    if (!box)
        return cel_err_static("out of memory");
    *box = fmt_val(i);
    o.v.o = box;
    return o;
}

/* maskTrailingDash: a name ending in '-' loses its last two bytes and gains an 'a' */
static size_t mask_dash(const char *s, size_t n, char *out, size_t cap)
{
    if (n > 1 && s[n - 1] == '-' && n - 1 <= cap) {
        memcpy(out, s, n - 2);
        out[n - 2] = 'a';
        return n - 1;
    }
    return (size_t)-1;
}

static struct cel_val f_validate(struct ev *ev, const struct cel_val *a, int n)
{
    struct msgs e = {.n = 0};
    const char *s = a[1].v.s;
    size_t sn = a[1].n;
    char *masked = NULL;
    struct buf ue = BUF_INIT(0);
    int id = fmt_find(a[0].v.s, strlen(a[0].v.s));
    (void)n;

    if (id == F_DNS1123_LABEL_PREFIX || id == F_DNS1123_SUBDOMAIN_PREFIX ||
        id == F_DNS1035_LABEL_PREFIX) {
        masked = arena_alloc(ev->a, sn + 1);
        if (!masked)
            return cel_err_static("out of memory");
        size_t mn = mask_dash(s, sn, masked, sn);
        if (mn != (size_t)-1) {
            s = masked;
            sn = mn;
        }
    }
    switch (id) {
    case F_DNS1123_LABEL:
    case F_DNS1123_LABEL_PREFIX:
        v_dns1123_label(s, sn, &e);
        break;
    case F_DNS1123_SUBDOMAIN:
    case F_DNS1123_SUBDOMAIN_PREFIX:
        v_subdomain(s, sn, &e, "characters", "");
        break;
    case F_DNS1035_LABEL:
    case F_DNS1035_LABEL_PREFIX:
        v_dns1035_label(s, sn, &e);
        break;
    case F_QUALIFIED_NAME:
        v_qualified_name(s, sn, &e);
        break;
    case F_LABEL_VALUE:
        v_label_value(s, sn, &e);
        break;
    case F_URI:
        if (!cel_url_parse_request_uri_ok(s, sn, &ue))
            add(&e, ue.data);
        break;
    case F_UUID:
        if (!is_uuid(s, sn))
            add(&e, "does not match the UUID format");
        break;
    case F_BYTE:
        if (!is_base64(s, sn))
            add(&e, "invalid base64");
        break;
    case F_DATE:
        if (!is_date(s, sn))
            add(&e, "invalid date");
        break;
    case F_DATETIME:
        if (!is_datetime(s, sn))
            add(&e, "invalid datetime");
        break;
    default:
        return cel_err_static("no such overload");
    }
    struct cel_val o = {.k = CV_OPTIONAL};
    if (e.n == 0) {
        buf_release(&ue);
        return o;
    }
    struct cel_list *l = cel_list_new(ev->a, (uint32_t)e.n);
    struct cel_val *box = arena_alloc(ev->a, sizeof(*box));
    if (!l || !box) {
        buf_release(&ue);
        return cel_err_static("out of memory");
    }
    for (int i = 0; i < e.n; i++) {
        size_t ml = strlen(e.m[i]);
        char *m = cel_ev_strdup(ev, e.m[i], ml);
        if (!m) {
            buf_release(&ue);
            return cel_err_static("out of memory");
        }
        l->v[i] = cel_str(m, (uint32_t)ml);
    }
    l->n = (uint32_t)e.n;
    buf_release(&ue);
    box->k = CV_LIST;
    box->v.l = l;
    o.v.o = box;
    return o;
}

static const struct cel_impl fmt_impls[] = {
    {"format.dns1123Label", f_dns1123_label, 0, false},
    {"format.dns1123Subdomain", f_dns1123_subdomain, 0, false},
    {"format.dns1035Label", f_dns1035_label, 0, false},
    {"format.qualifiedName", f_qualified_name, 0, false},
    {"format.dns1123LabelPrefix", f_dns1123_label_prefix, 0, false},
    {"format.dns1123SubdomainPrefix", f_dns1123_subdomain_prefix, 0, false},
    {"format.dns1035LabelPrefix", f_dns1035_label_prefix, 0, false},
    {"format.labelValue", f_label_value, 0, false},
    {"format.uri", f_uri, 0, false},
    {"format.uuid", f_uuid, 0, false},
    {"format.byte", f_byte, 0, false},
    {"format.date", f_date, 0, false},
    {"format.datetime", f_datetime, 0, false},
    {"format-named", f_named, 0, false},
    {"format-validate", f_validate, 0, false},
};

const struct cel_impl *cel_k8sfmt_impls(size_t *n)
{
    *n = sizeof(fmt_impls) / sizeof(fmt_impls[0]);
    return fmt_impls;
}
