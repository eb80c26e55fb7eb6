/* time.c - durations and timestamps as cel-go has them (Go's time.Duration and time.Time).
 *
 * Durations parse with time.ParseDuration and print as seconds ("1.5s"); timestamps parse
 * with time.Parse(time.RFC3339, s) (its fast path, then its general layout parser), keep the
 * offset they were written with (string() prints it back), and stay within years 1 to 9999.
 * The accessors take a time zone: "+05:30" style offsets, or an IANA name read from the
 * system's zoneinfo as Go's time.LoadLocation reads it, including the TZ rule that follows
 * the last transition. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "cel/eval.h"
#include "cel/lib.h"
#include "cel/semver.h"

#define MIN_UNIX (-62135596800LL)
#define MAX_UNIX 253402300799LL
#define NS 1000000000LL

static struct cel_val dur(int64_t ns)
{
    struct cel_val v = {.k = CV_DURATION};
    v.v.i = ns;
    return v;
}

static struct cel_val ts(int64_t sec, int32_t nsec, int offset_min)
{
    struct cel_val v = {.k = CV_TIMESTAMP};
    v.v.i = sec;
    v.n = (uint32_t)nsec;
    v.x = (int16_t)offset_min;
    return v;
}

/* ---- civil calendar ---- */

static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    {
        int64_t era = (y >= 0 ? y : y - 399) / 400;
        int64_t yoe = y - era * 400;
        int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
    }
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    int64_t era, doe, yoe, doy, mp;
    z += 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static bool is_leap(int64_t y)
{
    return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

static int days_in(int m, int64_t y)
{
    static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && is_leap(y))
        return 29;
    return d[m - 1];
}

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

/* ---- durations ---- */

static const struct {
    const char *u;
    uint64_t ns;
} units[] = {
    {"ns", 1},       {"us", 1000},         {"\xc2\xb5s", 1000},   {"\xce\xbcs", 1000},
    {"ms", 1000000}, {"s", 1000000000ULL}, {"m", 60000000000ULL}, {"h", 3600000000000ULL},
};

/* time.ParseDuration */
bool cel_duration_parse(const char *s, size_t n, int64_t *out)
{
    uint64_t d = 0;
    bool neg = false;
    size_t i = 0;

    if (n > 0 && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (n - i == 1 && s[i] == '0') {
        *out = 0;
        return true;
    }
    if (i == n)
        return false;
    while (i < n) {
        uint64_t v = 0, f = 0, unit = 0;
        double scale = 1;
        bool pre = false, post = false, overflow = false;
        size_t k;
        if (!(s[i] == '.' || (s[i] >= '0' && s[i] <= '9')))
            return false;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (v > (1ULL << 63) / 10)
                return false;
            v = v * 10 + (uint64_t)(s[i] - '0');
            if (v > (1ULL << 63))
                return false;
            i++;
            pre = true;
        }
        if (i < n && s[i] == '.') {
            i++;
            while (i < n && s[i] >= '0' && s[i] <= '9') {
                post = true;
                if (!overflow) {
                    if (f > ((1ULL << 63) - 1) / 10) {
                        overflow = true;
                    } else {
                        uint64_t y = f * 10 + (uint64_t)(s[i] - '0');
                        if (y > (1ULL << 63))
                            overflow = true;
                        else {
                            f = y;
                            scale *= 10;
                        }
                    }
                }
                i++;
            }
        }
        if (!pre && !post)
            return false;
        k = i;
        while (k < n && s[k] != '.' && !(s[k] >= '0' && s[k] <= '9'))
            k++;
        if (k == i)
            return false;
        for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++)
            if (strlen(units[u].u) == k - i && !memcmp(units[u].u, s + i, k - i))
                unit = units[u].ns;
        if (!unit)
            return false;
        i = k;
        if (v > (1ULL << 63) / unit)
            return false;
        v *= unit;
        if (f > 0) {
            v += (uint64_t)((double)f * ((double)unit / scale));
            if (v > (1ULL << 63))
                return false;
        }
        d += v;
        if (d > (1ULL << 63))
            return false;
    }
    if (neg) {
        *out = (int64_t)(0 - d);
        return true;
    }
    if (d > (1ULL << 63) - 1)
        return false;
    *out = (int64_t)d;
    return true;
}

/* ---- timestamps: parsing ---- */

static bool digit(char c)
{
    return c >= '0' && c <= '9';
}

static int num(const char *s, size_t k)
{
    int x = 0;
    for (size_t i = 0; i < k; i++) {
        if (!digit(s[i]))
            return -1;
        x = x * 10 + (s[i] - '0');
    }
    return x;
}

/* parseNanoseconds of ".ddd" (n bytes, the separator included) */
static int32_t nanos(const char *s, size_t n)
{
    int32_t ns = 0;
    size_t k;
    if (n > 10)
        n = 10;
    for (k = 1; k < n; k++)
        ns = ns * 10 + (s[k] - '0');
    for (; k < 10; k++)
        ns *= 10;
    return ns;
}

static bool finish(int64_t year, int mon, int day, int hour, int min, int sec, int32_t nsec,
                   int off, int64_t *osec, int32_t *onsec, int *ooff)
{
    int64_t t = days_from_civil(year, mon, day) * 86400 + hour * 3600 + min * 60 + sec;
    *osec = t - off;
    *onsec = nsec;
    *ooff = off / 60;
    return true;
}

/* time.Parse(time.RFC3339, s): the fast path first */
static bool parse_rfc3339_fast(const char *s, size_t n, int64_t *sec, int32_t *nsec, int *off)
{
    int year, mon, day, hour, min, secs, o = 0;
    int32_t ns = 0;
    size_t i;

    if (n < 19)
        return false;
    year = num(s, 4);
    mon = num(s + 5, 2);
    day = num(s + 8, 2);
    hour = num(s + 11, 2);
    min = num(s + 14, 2);
    secs = num(s + 17, 2);
    if (year < 0 || mon < 1 || mon > 12 || day < 1 || day > days_in(mon, year) || hour < 0 ||
        hour > 23 || min < 0 || min > 59 || secs < 0 || secs > 59)
        return false;
    if (s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':')
        return false;
    i = 19;
    if (n - i >= 2 && s[i] == '.' && digit(s[i + 1])) {
        size_t k = 2;
        while (i + k < n && digit(s[i + k]))
            k++;
        ns = nanos(s + i, k);
        i += k;
    }
    if (!(n - i == 1 && s[i] == 'Z')) {
        int hr, mm;
        if (n - i != 6)
            return false;
        hr = num(s + i + 1, 2);
        mm = num(s + i + 4, 2);
        if (hr < 0 || hr > 23 || mm < 0 || mm > 59 || !(s[i] == '-' || s[i] == '+') ||
            s[i + 3] != ':')
            return false;
        o = (hr * 60 + mm) * 60;
        if (s[i] == '-')
            o = -o;
    }
    return finish(year, mon, day, hour, min, secs, ns, o, sec, nsec, off);
}

/* getnum(value, fixed) */
static bool getnum(const char **p, const char *e, bool fixed, int *out)
{
    const char *s = *p;
    if (s >= e || !digit(s[0]))
        return false;
    if (s + 1 >= e || !digit(s[1])) {
        if (fixed)
            return false;
        *out = s[0] - '0';
        *p = s + 1;
        return true;
    }
    *out = (s[0] - '0') * 10 + (s[1] - '0');
    *p = s + 2;
    return true;
}

/* the general layout parser with layout "2006-01-02T15:04:05Z07:00" */
static bool parse_rfc3339_layout(const char *s, size_t n, int64_t *sec, int32_t *nsec, int *off)
{
    const char *p = s, *e = s + n;
    int64_t year;
    int mon, day, hour, min, secs, o = 0;
    int32_t ns = 0;

    /* 2006: four characters, the first a digit, all digits (atoi allows no sign here) */
    if (e - p < 4 || !digit(p[0]) || num(p, 4) < 0)
        return false;
    year = num(p, 4);
    p += 4;
    if (p >= e || *p++ != '-')
        return false;
    if (!getnum(&p, e, true, &mon) || mon < 1 || mon > 12)
        return false;
    if (p >= e || *p++ != '-')
        return false;
    if (!getnum(&p, e, true, &day))
        return false;
    if (p >= e || *p++ != 'T')
        return false;
    if (!getnum(&p, e, false, &hour) || hour >= 24)
        return false;
    if (p >= e || *p++ != ':')
        return false;
    if (!getnum(&p, e, true, &min) || min >= 60)
        return false;
    if (p >= e || *p++ != ':')
        return false;
    if (!getnum(&p, e, true, &secs) || secs >= 60)
        return false;
    if (e - p >= 2 && (p[0] == '.' || p[0] == ',') && digit(p[1])) {
        size_t k = 2;
        while (p + k < e && digit(p[k]))
            k++;
        ns = nanos(p, k);
        p += k;
    }
    /* Z07:00 */
    if (p < e && *p == 'Z') {
        p++;
    } else {
        int hr, mm;
        if (e - p < 6 || p[3] != ':')
            return false;
        hr = num(p + 1, 2);
        mm = num(p + 4, 2);
        if (hr < 0 || mm < 0 || (p[0] != '+' && p[0] != '-'))
            return false;
        if (hr > 24 || mm > 60)
            return false;
        o = (hr * 60 + mm) * 60;
        if (p[0] == '-')
            o = -o;
        p += 6;
    }
    if (p != e)
        return false;
    if (day < 1 || day > days_in(mon, year))
        return false;
    return finish(year, mon, day, hour, min, secs, ns, o, sec, nsec, off);
}

bool cel_timestamp_parse(const char *s, size_t n, int64_t *sec, int32_t *nsec)
{
    int off;
    if (!parse_rfc3339_fast(s, n, sec, nsec, &off) && !parse_rfc3339_layout(s, n, sec, nsec, &off))
        return false;
    return *sec >= MIN_UNIX && *sec <= MAX_UNIX;
}

static bool parse_ts(const char *s, size_t n, int64_t *sec, int32_t *nsec, int *off)
{
    return parse_rfc3339_fast(s, n, sec, nsec, off) || parse_rfc3339_layout(s, n, sec, nsec, off);
}

/* ---- formatting ---- */

struct cel_val cel_time_to_string(struct ev *ev, const struct cel_val *v)
{
    struct buf b = BUF_INIT(0);
    struct cel_val r;
    char *p;

    if (v->k == CV_DURATION) {
        /* FormatFloat(d.Seconds(), 'f', -1, 64) + "s" */
        int64_t q = v->v.i / NS, rem = v->v.i % NS;
        double secs = (double)q + (double)rem / 1e9;
        cel_format_float(&b, secs, 'f');
        buf_puts(&b, "s");
    } else {
        int64_t local = v->v.i + v->x * 60, days = floordiv(local, 86400), y;
        int64_t sod = local - days * 86400;
        int m, d;
        civil_from_days(days, &y, &m, &d);
        buf_printf(&b, "%04lld-%02d-%02dT%02d:%02d:%02d", (long long)y, m, d, (int)(sod / 3600),
                   (int)(sod / 60 % 60), (int)(sod % 60));
        if (v->n) {
            char frac[16];
            int k;
            snprintf(frac, sizeof(frac), "%09u", v->n);
            k = 9;
            while (k > 0 && frac[k - 1] == '0')
                k--;
            frac[k] = 0;
            buf_printf(&b, ".%s", frac);
        }
        if (v->x == 0)
            buf_puts(&b, "Z");
        else
            buf_printf(&b, "%c%02d:%02d", v->x < 0 ? '-' : '+', abs(v->x) / 60, abs(v->x) % 60);
    }
    p = cel_ev_strdup(ev, b.data ? b.data : "", b.len);
    r = p ? cel_str(p, (uint32_t)b.len) : cel_err_static("out of memory");
    buf_release(&b);
    return r;
}

static void go_frac(struct buf *b, uint64_t v, int prec)
{
    uint64_t p10 = 1, frac;
    char digits[24];
    int k;

    for (int i = 0; i < prec; i++)
        p10 *= 10;
    frac = v % p10;
    buf_printf(b, "%llu", (unsigned long long)(v / p10));
    if (!frac)
        return;
    snprintf(digits, sizeof(digits), "%0*llu", prec, (unsigned long long)frac);
    k = prec;
    while (k > 0 && digits[k - 1] == '0')
        k--;
    digits[k] = 0;
    buf_printf(b, ".%s", digits);
}

void cel_time_go_string(struct buf *b, const struct cel_val *v)
{
    if (v->k == CV_DURATION) {
        uint64_t u = v->v.i < 0 ? 0 - (uint64_t)v->v.i : (uint64_t)v->v.i;
        if (v->v.i < 0)
            buf_puts(b, "-");
        if (u == 0) {
            buf_puts(b, "0s");
        } else if (u < 1000) {
            buf_printf(b, "%lluns", (unsigned long long)u);
        } else if (u < 1000000) {
            go_frac(b, u, 3);
            buf_puts(b, "\xc2\xb5s"); /* µs */
        } else if (u < (uint64_t)NS) {
            go_frac(b, u, 6);
            buf_puts(b, "ms");
        } else {
            uint64_t secs = u / NS, mins = secs / 60, hours = mins / 60;
            if (hours)
                buf_printf(b, "%lluh", (unsigned long long)hours);
            if (mins)
                buf_printf(b, "%llum", (unsigned long long)(mins % 60));
            go_frac(b, (secs % 60) * (uint64_t)NS + u % NS, 9);
            buf_puts(b, "s");
        }
        return;
    }
    {
        int64_t local = v->v.i + v->x * 60, days = floordiv(local, 86400), y;
        int64_t sod = local - days * 86400;
        int m, d, off = abs(v->x);
        civil_from_days(days, &y, &m, &d);
        buf_printf(b, "%04lld-%02d-%02d %02d:%02d:%02d", (long long)y, m, d, (int)(sod / 3600),
                   (int)(sod / 60 % 60), (int)(sod % 60));
        if (v->n) {
            char frac[16];
            int k = 9;
            snprintf(frac, sizeof(frac), "%09u", v->n);
            while (k > 0 && frac[k - 1] == '0')
                k--;
            frac[k] = 0;
            buf_printf(b, ".%s", frac);
        }
        if (v->x == 0)
            buf_puts(b, " +0000 UTC");
        else
            buf_printf(b, " %c%02d%02d %c%02d%02d", v->x < 0 ? '-' : '+', off / 60, off % 60,
                       v->x < 0 ? '-' : '+', off / 60, off % 60);
    }
}

/* ---- arithmetic ---- */

static struct cel_val add_time_dur(const struct cel_val *t, int64_t d)
{
    int64_t sec2 = d / NS, nsec2 = d % NS, sec, nsec;
    if (__builtin_add_overflow(t->v.i, sec2, &sec))
        return cel_err_static("integer overflow");
    nsec = (int64_t)t->n + nsec2;
    if (nsec < 0 || nsec >= NS) {
        if (__builtin_add_overflow(sec, nsec / NS, &sec))
            return cel_err_static("integer overflow");
        nsec -= (nsec / NS) * NS;
        if (nsec < 0) {
            if (__builtin_add_overflow(sec, (int64_t)-1, &sec))
                return cel_err_static("integer overflow");
            nsec += NS;
        }
    }
    if (sec < MIN_UNIX || sec > MAX_UNIX)
        return cel_err_static("timestamp overflow");
    return ts(sec, (int32_t)nsec, t->x);
}

struct cel_val cel_time_add(struct ev *ev, const struct cel_val *x, const struct cel_val *y,
                            bool sub)
{
    (void)ev;
    if (!sub) {
        if (x->k == CV_DURATION && y->k == CV_DURATION) {
            int64_t r;
            if (__builtin_add_overflow(x->v.i, y->v.i, &r))
                return cel_err_static("integer overflow");
            return dur(r);
        }
        if (x->k == CV_DURATION && y->k == CV_TIMESTAMP)
            return add_time_dur(y, x->v.i);
        if (x->k == CV_TIMESTAMP && y->k == CV_DURATION)
            return add_time_dur(x, y->v.i);
        return cel_maybe_no_such_overload(y);
    }
    if (x->k == CV_DURATION) {
        int64_t r;
        if (y->k != CV_DURATION)
            return cel_maybe_no_such_overload(y);
        if (__builtin_sub_overflow(x->v.i, y->v.i, &r))
            return cel_err_static("integer overflow");
        return dur(r);
    }
    if (y->k == CV_DURATION) {
        if (y->v.i == INT64_MIN)
            return cel_err_static("integer overflow");
        return add_time_dur(x, -y->v.i);
    }
    if (y->k == CV_TIMESTAMP) {
        int64_t s, t, r;
        if (__builtin_sub_overflow(x->v.i, y->v.i, &s) || __builtin_mul_overflow(s, NS, &t) ||
            __builtin_add_overflow(t, (int64_t)x->n - (int64_t)y->n, &r))
            return cel_err_static("integer overflow");
        return dur(r);
    }
    return cel_maybe_no_such_overload(y);
}

/* ---- time zones ---- */

struct ttinfo {
    int32_t off;
    bool dst;
};

struct zone {
    char name[4096];
    int ntx, ntypes;
    int64_t *tx;
    uint8_t *idx;
    struct ttinfo *types;
    char extend[64];
    struct zone *next;
};

static pthread_mutex_t zones_mu = PTHREAD_MUTEX_INITIALIZER;
static struct zone *zones;

static int64_t be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return (int64_t)v;
}

static int32_t be32(const unsigned char *p)
{
    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

/* Go's syscall.Errno texts for what opening or reading a zone file can fail with; NULL for
 * ENOENT (the next source is tried, then "unknown time zone") */
static const char *errno_text(int e)
{
    switch (e) {
    case ENOENT:
        return NULL;
    case ENOTDIR:
        return "not a directory";
    case EISDIR:
        return "is a directory";
    case ENAMETOOLONG:
        return "file name too long";
    case EACCES:
        return "permission denied";
    case ELOOP:
        return "too many levels of symbolic links";
    case EINVAL:
        return "invalid argument";
    default:
        return "unknown";
    }
}

/* Reads a TZif file (the 64-bit part when there is one). */
static struct zone *load_zone(const char *name, const char **err)
{
    char path[4200];
    unsigned char *data = NULL;
    size_t len = 0, cap = 0;
    int fd;
    struct zone *z = NULL;
    const unsigned char *p;

    snprintf(path, sizeof(path), "/usr/share/zoneinfo/%s", name);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *err = errno_text(errno);
        if (!*err)
            *err = "unknown";
        return NULL;
    }
    for (;;) {
        ssize_t r;
        if (len == cap) {
            unsigned char *nd;
            cap = cap ? cap * 2 : 4096;
            if (cap > (1 << 22)) {
                free(data);
                close(fd);
                *err = "malformed time zone information";
                return NULL;
            }
            nd = realloc(data, cap);
            if (!nd) {
                free(data);
                close(fd);
                *err = "out of memory";
                return NULL;
            }
            data = nd;
        }
        r = read(fd, data + len, cap - len);
        if (r < 0) {
            int e = errno;
            free(data);
            close(fd);
            *err = errno_text(e);
            if (!*err)
                *err = "unknown";
            return NULL;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    p = data;
    if (len < 44 || memcmp(p, "TZif", 4)) {
        free(data);
        *err = "malformed time zone information";
        return NULL;
    }
    {
        int version = p[4] ? p[4] - '0' : 1;
        int32_t c[6];
        size_t off = 20, need;
        bool big = false;
        for (int i = 0; i < 6; i++)
            c[i] = be32(p + off + 4 * (size_t)i);
        /* isutcnt isstdcnt leapcnt timecnt typecnt charcnt */
        off = 44;
        need = (size_t)c[3] * 5 + (size_t)c[4] * 6 + (size_t)c[5] + (size_t)c[2] * 8 +
               (size_t)c[1] + (size_t)c[0];
        if (version >= 2 && off + need + 44 <= len && !memcmp(p + off + need, "TZif", 4)) {
            off += need;
            for (int i = 0; i < 6; i++)
                c[i] = be32(p + off + 20 + 4 * (size_t)i);
            off += 44;
            big = true;
        }
        z = calloc(1, sizeof(*z));
        if (!z)
            goto bad;
        snprintf(z->name, sizeof(z->name), "%s", name);
        z->ntx = c[3];
        z->ntypes = c[4];
        if (c[3] < 0 || c[4] <= 0 || c[3] > 100000 || c[4] > 256)
            goto bad;
        z->tx = calloc((size_t)c[3] + 1, sizeof(*z->tx));
        z->idx = calloc((size_t)c[3] + 1, 1);
        z->types = calloc((size_t)c[4], sizeof(*z->types));
        if (!z->tx || !z->idx || !z->types)
            goto bad;
        {
            size_t tsz = big ? 8 : 4;
            size_t body = (size_t)c[3] * (tsz + 1) + (size_t)c[4] * 6;
            if (off + body > len)
                goto bad;
            for (int i = 0; i < c[3]; i++)
                z->tx[i] = big ? be64(p + off + (size_t)i * 8) : be32(p + off + (size_t)i * 4);
            off += (size_t)c[3] * tsz;
            for (int i = 0; i < c[3]; i++) {
                z->idx[i] = p[off + (size_t)i];
                if (z->idx[i] >= c[4])
                    goto bad;
            }
            off += (size_t)c[3];
            for (int i = 0; i < c[4]; i++) {
                z->types[i].off = be32(p + off + (size_t)i * 6);
                z->types[i].dst = p[off + (size_t)i * 6 + 4] != 0;
            }
            off += (size_t)c[4] * 6 + (size_t)c[5] + (size_t)c[2] * (tsz + 4) + (size_t)c[1] +
                   (size_t)c[0];
            if (big && off < len && p[off] == '\n') {
                size_t e = off + 1;
                while (e < len && p[e] != '\n')
                    e++;
                if (e - off - 1 < sizeof(z->extend)) {
                    memcpy(z->extend, p + off + 1, e - off - 1);
                    z->extend[e - off - 1] = 0;
                }
            }
        }
    }
    free(data);
    return z;
bad:
    free(data);
    if (z) {
        free(z->tx);
        free(z->idx);
        free(z->types);
        free(z);
    }
    *err = "malformed time zone information";
    return NULL;
}

/* tzset's parts (time/zoneinfo.go) */
static bool tz_num(const char **s, int min, int max, int *out)
{
    const char *p = *s;
    int n = 0;
    if (!digit(*p))
        return false;
    while (digit(*p)) {
        n = n * 10 + (*p - '0');
        p++;
        if (n > max)
            return false;
    }
    if (n < min)
        return false;
    *s = p;
    *out = n;
    return true;
}

static bool tz_name(const char **s)
{
    const char *p = *s;
    if (!*p)
        return false;
    if (*p != '<') {
        int i = 0;
        while (p[i] && !digit(p[i]) && p[i] != ',' && p[i] != '-' && p[i] != '+')
            i++;
        if (i < 3)
            return false;
        *s = p + i;
        return true;
    }
    while (*p && *p != '>')
        p++;
    if (!*p)
        return false;
    *s = p + 1;
    return true;
}

static bool tz_offset(const char **s, int *out)
{
    const char *p = *s;
    bool neg = false;
    int h, m = 0, sec = 0, off;
    if (*p == '+')
        p++;
    else if (*p == '-') {
        p++;
        neg = true;
    }
    if (!tz_num(&p, 0, 24 * 7, &h))
        return false;
    off = h * 3600;
    if (*p == ':') {
        p++;
        if (!tz_num(&p, 0, 59, &m))
            return false;
        off += m * 60;
        if (*p == ':') {
            p++;
            if (!tz_num(&p, 0, 59, &sec))
                return false;
            off += sec;
        }
    }
    *out = neg ? -off : off;
    *s = p;
    return true;
}

struct tzrule {
    int kind; /* 0 Julian, 1 DOY, 2 Mm.w.d */
    int day, week, mon, time;
};

static bool tz_rule(const char **s, struct tzrule *r)
{
    const char *p = *s;
    memset(r, 0, sizeof(*r));
    if (*p == 'J') {
        p++;
        if (!tz_num(&p, 1, 365, &r->day))
            return false;
        r->kind = 0;
    } else if (*p == 'M') {
        p++;
        if (!tz_num(&p, 1, 12, &r->mon) || *p != '.')
            return false;
        p++;
        if (!tz_num(&p, 1, 5, &r->week) || *p != '.')
            return false;
        p++;
        if (!tz_num(&p, 0, 6, &r->day))
            return false;
        r->kind = 2;
    } else {
        if (!tz_num(&p, 0, 365, &r->day))
            return false;
        r->kind = 1;
    }
    if (*p != '/') {
        r->time = 7200;
    } else {
        p++;
        if (!tz_offset(&p, &r->time))
            return false;
    }
    *s = p;
    return true;
}

static int rule_time(int64_t year, const struct tzrule *r, int off)
{
    int s = 0;
    static const int before[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365};
    switch (r->kind) {
    case 0:
        s = (r->day - 1) * 86400;
        if (is_leap(year) && r->day >= 60)
            s += 86400;
        break;
    case 1:
        s = r->day * 86400;
        break;
    default: {
        int m1 = (r->mon + 9) % 12 + 1;
        int64_t yy0 = year;
        int yy1, yy2, dow, d;
        if (r->mon <= 2)
            yy0--;
        yy1 = (int)(yy0 / 100);
        yy2 = (int)(yy0 % 100);
        dow = ((26 * m1 - 2) / 10 + 1 + yy2 + yy2 / 4 + yy1 / 4 - 2 * yy1) % 7;
        if (dow < 0)
            dow += 7;
        d = r->day - dow;
        if (d < 0)
            d += 7;
        for (int i = 1; i < r->week; i++) {
            if (d + 7 >= days_in(r->mon, year))
                break;
            d += 7;
        }
        d += before[r->mon - 1];
        if (is_leap(year) && r->mon > 2)
            d++;
        s = d * 86400;
    }
    }
    return s + r->time - off;
}

/* The offset at sec from the TZ string after the last transition; false when it cannot be
 * read (then the last transition's zone holds). */
static bool tz_extend(const char *s, int64_t sec, int *offset)
{
    int std_off, dst_off;
    struct tzrule a, b;
    int64_t days, y, ysec, start, end;
    int m, d;

    if (!tz_name(&s) || !tz_offset(&s, &std_off))
        return false;
    std_off = -std_off;
    if (!*s || *s == ',') {
        *offset = std_off;
        return true;
    }
    if (!tz_name(&s))
        return false;
    if (!*s || *s == ',') {
        dst_off = std_off + 3600;
    } else {
        if (!tz_offset(&s, &dst_off))
            return false;
        dst_off = -dst_off;
    }
    if (!*s)
        s = ",M3.2.0,M11.1.0";
    if (*s != ',' && *s != ';')
        return false;
    s++;
    if (!tz_rule(&s, &a) || *s != ',')
        return false;
    s++;
    if (!tz_rule(&s, &b) || *s)
        return false;
    days = floordiv(sec, 86400);
    civil_from_days(days, &y, &m, &d);
    ysec = sec - days_from_civil(y, 1, 1) * 86400;
    start = rule_time(y, &a, std_off);
    end = rule_time(y, &b, dst_off);
    if (end < start) {
        int64_t t = start;
        int o = std_off;
        start = end;
        end = t;
        std_off = dst_off;
        dst_off = o;
    }
    *offset = (ysec < start || ysec >= end) ? std_off : dst_off;
    return true;
}

static int zone_offset(const struct zone *z, int64_t sec)
{
    int lo = 0, hi;
    if (z->ntx == 0 || sec < z->tx[0]) {
        /* lookupFirstZone */
        bool used = false;
        for (int i = 0; i < z->ntx; i++)
            if (z->idx[i] == 0)
                used = true;
        if (!used)
            return z->types[0].off;
        if (z->ntx > 0 && z->types[z->idx[0]].dst)
            for (int zi = z->idx[0] - 1; zi >= 0; zi--)
                if (!z->types[zi].dst)
                    return z->types[zi].off;
        for (int zi = 0; zi < z->ntypes; zi++)
            if (!z->types[zi].dst)
                return z->types[zi].off;
        return z->types[0].off;
    }
    hi = z->ntx;
    while (hi - lo > 1) {
        int m = (lo + hi) / 2;
        if (sec < z->tx[m])
            hi = m;
        else
            lo = m;
    }
    if (lo == z->ntx - 1 && z->extend[0]) {
        int off;
        if (tz_extend(z->extend, sec, &off))
            return off;
    }
    return z->types[z->idx[lo]].off;
}

/* strconv.Atoi: NULL, or its error text (in ev's arena) */
static const char *go_atoi(struct ev *ev, const char *s, size_t n, long *out)
{
    size_t i = 0;
    bool neg = false;
    unsigned long long v = 0;
    const char *why = "invalid syntax";
    struct buf q = BUF_INIT(0);
    const char *m;

    if (n > 0 && (s[0] == '+' || s[0] == '-')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == n)
        goto fail;
    for (; i < n; i++) {
        if (!digit(s[i]))
            goto fail;
        v = v * 10 + (unsigned)(s[i] - '0');
        if (v > (unsigned long long)INT64_MAX + 1) {
            why = "value out of range";
            for (; i < n; i++)
                if (!digit(s[i])) {
                    why = "invalid syntax";
                    break;
                }
            goto fail;
        }
    }
    if (!neg && v > (unsigned long long)INT64_MAX) {
        why = "value out of range";
        goto fail;
    }
    *out = neg ? -(long)v : (long)v;
    return NULL;
fail:
    buf_puts(&q, "strconv.Atoi: parsing ");
    cel_go_quote(&q, s, n);
    buf_printf(&q, ": %s", why);
    m = cel_ev_strdup(ev, q.data, q.len);
    buf_release(&q);
    return m ? m : "out of memory";
}

/* The offset east of UTC of tz at sec, or an error message (static or in ev's arena). */
static const char *tz_offset_at(struct ev *ev, const struct cel_val *tz, int64_t sec, int *offset)
{
    const char *s = tz->v.s;
    size_t n = tz->n;
    const char *colon = memchr(s, ':', n);

    if (colon) {
        long hr, mn;
        const char *e = go_atoi(ev, s, (size_t)(colon - s), &hr);
        if (e)
            return e;
        e = go_atoi(ev, colon + 1, n - (size_t)(colon - s) - 1, &mn);
        if (e)
            return e;
        *offset = (int)((s[0] == '-' ? hr * 60 - mn : hr * 60 + mn) * 60);
        return NULL;
    }
    if (n == 0 || (n == 3 && !memcmp(s, "UTC", 3)) || (n == 5 && !memcmp(s, "Local", 5))) {
        *offset = 0;
        return NULL;
    }
    if (s[0] == '/' || s[0] == '\\' || memmem(s, n, "..", 2))
        return "time: invalid location name";
    if (memchr(s, 0, n))
        return "invalid argument"; /* opening a path with a NUL in it */
    {
        char name[4096];
        struct zone *z;
        const char *err = NULL;
        if (n >= sizeof(name))
            goto unknown;
        memcpy(name, s, n);
        name[n] = 0;
        pthread_mutex_lock(&zones_mu);
        for (z = zones; z; z = z->next)
            if (!strcmp(z->name, name))
                break;
        if (!z) {
            z = load_zone(name, &err);
            if (z) {
                z->next = zones;
                zones = z;
            }
        }
        pthread_mutex_unlock(&zones_mu);
        if (!z) {
            if (err && strcmp(err, "unknown"))
                return err;
            goto unknown;
        }
        *offset = zone_offset(z, sec);
        return NULL;
    }
unknown : {
    struct buf q = BUF_INIT(0);
    const char *m;
    buf_puts(&q, "unknown time zone ");
    buf_append(&q, s, n);
    m = cel_ev_strdup(ev, q.data, q.len);
    buf_release(&q);
    return m;
}
}

enum getter { G_YEAR, G_MONTH, G_DOY, G_DOM0, G_DOM1, G_DOW, G_HOUR, G_MIN, G_SEC, G_MS };

static struct cel_val ts_get(struct ev *ev, const struct cel_val *a, int n, enum getter g)
{
    int off = 0;
    int64_t local, days, y, sod;
    int m, d;

    if (n == 2) {
        const char *err = tz_offset_at(ev, &a[1], a[0].v.i, &off);
        if (err)
            return cel_err(ev->a, "%s", err);
    }
    local = a[0].v.i + off;
    days = floordiv(local, 86400);
    sod = local - days * 86400;
    civil_from_days(days, &y, &m, &d);
    switch (g) {
    case G_YEAR:
        return cel_int(y);
    case G_MONTH:
        return cel_int(m - 1);
    case G_DOY:
        return cel_int(days - days_from_civil(y, 1, 1));
    case G_DOM0:
        return cel_int(d - 1);
    case G_DOM1:
        return cel_int(d);
    case G_DOW:
        return cel_int(((days % 7) + 11) % 7);
    case G_HOUR:
        return cel_int(sod / 3600);
    case G_MIN:
        return cel_int(sod / 60 % 60);
    case G_SEC:
        return cel_int(sod % 60);
    default:
        return cel_int(a[0].n / 1000000);
    }
}

#define GETTER(fname, g)                                                                           \
    static struct cel_val fname(struct ev *ev, const struct cel_val *a, int n)                     \
    {                                                                                              \
        return ts_get(ev, a, n, g);                                                                \
    }
GETTER(f_year, G_YEAR)
GETTER(f_month, G_MONTH)
GETTER(f_doy, G_DOY)
GETTER(f_dom0, G_DOM0)
GETTER(f_dom1, G_DOM1)
GETTER(f_dow, G_DOW)
GETTER(f_hours, G_HOUR)
GETTER(f_minutes, G_MIN)
GETTER(f_seconds, G_SEC)
GETTER(f_ms, G_MS)

static struct cel_val f_dur_hours(struct ev *ev, const struct cel_val *a, int n)
{
    int64_t d = a[0].v.i;
    (void)ev;
    (void)n;
    return cel_int(
        (int64_t)((double)(d / 3600000000000LL) + (double)(d % 3600000000000LL) / (60 * 60 * 1e9)));
}

static struct cel_val f_dur_minutes(struct ev *ev, const struct cel_val *a, int n)
{
    int64_t d = a[0].v.i;
    (void)ev;
    (void)n;
    return cel_int(
        (int64_t)((double)(d / 60000000000LL) + (double)(d % 60000000000LL) / (60 * 1e9)));
}

static struct cel_val f_dur_seconds(struct ev *ev, const struct cel_val *a, int n)
{
    int64_t d = a[0].v.i;
    (void)ev;
    (void)n;
    return cel_int((int64_t)((double)(d / NS) + (double)(d % NS) / 1e9));
}

static struct cel_val f_dur_ms(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    return cel_int(a[0].v.i / 1000000);
}

static struct cel_val f_identity(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    return a[0];
}

static struct cel_val f_string_to_duration(struct ev *ev, const struct cel_val *a, int n)
{
    int64_t d;
    (void)n;
    if (!cel_duration_parse(a[0].v.s, a[0].n, &d))
        return cel_err(ev->a, "type conversion error from 'string' to 'google.protobuf.Duration'");
    return dur(d);
}

static struct cel_val f_string_to_timestamp(struct ev *ev, const struct cel_val *a, int n)
{
    int64_t sec;
    int32_t nsec;
    int off;
    (void)n;
    if (!parse_ts(a[0].v.s, a[0].n, &sec, &nsec, &off))
        return cel_err(ev->a, "type conversion error from 'string' to 'google.protobuf.Timestamp'");
    if (sec < MIN_UNIX || sec > MAX_UNIX)
        return cel_err_static("timestamp overflow");
    return ts(sec, nsec, off);
}

static struct cel_val f_int_to_timestamp(struct ev *ev, const struct cel_val *a, int n)
{
    (void)ev;
    (void)n;
    if (a[0].v.i < MIN_UNIX || a[0].v.i > MAX_UNIX)
        return cel_err_static("timestamp overflow");
    return ts(a[0].v.i, 0, 0);
}

static const struct cel_impl time_impls[] = {
    {"duration_to_duration", f_identity, 0, false},
    {"string_to_duration", f_string_to_duration, 0, false},
    {"timestamp_to_timestamp", f_identity, 0, false},
    {"string_to_timestamp", f_string_to_timestamp, 0, false},
    {"int64_to_timestamp", f_int_to_timestamp, 0, false},
    {"timestamp_to_year", f_year, 0, false},
    {"timestamp_to_year_with_tz", f_year, 0, false},
    {"timestamp_to_month", f_month, 0, false},
    {"timestamp_to_month_with_tz", f_month, 0, false},
    {"timestamp_to_day_of_year", f_doy, 0, false},
    {"timestamp_to_day_of_year_with_tz", f_doy, 0, false},
    {"timestamp_to_day_of_month", f_dom0, 0, false},
    {"timestamp_to_day_of_month_with_tz", f_dom0, 0, false},
    {"timestamp_to_day_of_month_1_based", f_dom1, 0, false},
    {"timestamp_to_day_of_month_1_based_with_tz", f_dom1, 0, false},
    {"timestamp_to_day_of_week", f_dow, 0, false},
    {"timestamp_to_day_of_week_with_tz", f_dow, 0, false},
    {"timestamp_to_hours", f_hours, 0, false},
    {"timestamp_to_hours_with_tz", f_hours, 0, false},
    {"timestamp_to_minutes", f_minutes, 0, false},
    {"timestamp_to_minutes_with_tz", f_minutes, 0, false},
    {"timestamp_to_seconds", f_seconds, 0, false},
    {"timestamp_to_seconds_tz", f_seconds, 0, false},
    {"timestamp_to_milliseconds", f_ms, 0, false},
    {"timestamp_to_milliseconds_with_tz", f_ms, 0, false},
    {"duration_to_hours", f_dur_hours, 0, false},
    {"duration_to_minutes", f_dur_minutes, 0, false},
    {"duration_to_seconds", f_dur_seconds, 0, false},
    {"duration_to_milliseconds", f_dur_ms, 0, false},
};

const struct cel_impl *cel_time_impls(size_t *n)
{
    *n = sizeof(time_impls) / sizeof(time_impls[0]);
    return time_impls;
}
