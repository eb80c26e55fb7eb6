/* source.c - reading manifests from files, standard input, directories and buffers (see
 * source.h). */
#include "manifest/source-int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "kube/yaml.h"
#include "manifest/kinds-int.h"
#include "manifest/state-int.h"

/* struct source feeds the parser in chunks. When the input starts with '{' or '[' it is
 * treated as kubectl treats JSON: possibly several values one after the other, which YAML
 * does not allow, so each value after the first is made a YAML document by writing "--- " at
 * the start of its line (line numbers stay; two values on one line get a line break, which
 * shifts the following lines by one). */
enum { SRC_UNDECIDED, SRC_JSON, SRC_PLAIN };

#define SOURCE_HELD_MAX 65536

struct source {
    int fd;          /* -1 for memory */
    const char *mem; /* memory input */
    size_t memlen, mempos;
    size_t total, cap; /* bytes read so far; more than cap is an error */
    int err;           /* negative code of a read failure */
    int mode;
    int depth, in_str, esc, between; /* JSON scanner state; between: after a top-level value */
    struct buf out;                  /* transformed bytes not yet handed to the parser */
    size_t outpos;
    struct buf held; /* whitespace after a top-level value, until we know what follows */
};

static int source_emit(struct source *s, const char *p, size_t n)
{
    return buf_append(&s->out, p, n);
}

/* the bytes the JSON-stream scanner stops at: in a string, and between strings */
enum { SCAN_STR = 1, SCAN_VALUE = 2 };
static const unsigned char scan_class[256] = {
    ['"'] = SCAN_STR | SCAN_VALUE,
    ['\\'] = SCAN_STR,
    ['{'] = SCAN_VALUE,
    ['}'] = SCAN_VALUE,
    ['['] = SCAN_VALUE,
    [']'] = SCAN_VALUE,
};

/* source_filter passes n raw bytes through the JSON-stream scanner into s->out. */
static int source_filter(struct source *s, const char *raw, size_t n)
{
    size_t i;
    int rc = 0;

    for (i = 0; i < n && !rc; i++) {
        char ch = raw[i];
        int ws = ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';

        switch (s->mode) {
        case SRC_UNDECIDED:
            if (ch == '{' || ch == '[') {
                s->mode = SRC_JSON;
                s->depth = 1;
            } else if (!ws && (unsigned char)ch != 0xef && (unsigned char)ch != 0xbb &&
                       (unsigned char)ch != 0xbf) {
                s->mode = SRC_PLAIN;
            }
            rc = source_emit(s, &ch, 1);
            break;
        case SRC_PLAIN:
            /* the rest of this chunk in one go */
            rc = source_emit(s, raw + i, n - i);
            i = n;
            break;
        default:
            if (s->between) {
                if (ws && s->held.len < SOURCE_HELD_MAX) {
                    rc = buf_append(&s->held, &ch, 1);
                    break;
                }
                if (ch == '{' || ch == '[') {
                    const char *h = s->held.data ? s->held.data : "";
                    const char *nl = memrchr(h, '\n', s->held.len);

                    if (nl) {
                        size_t k = (size_t)(nl - h) + 1;

                        rc = source_emit(s, h, k);
                        if (!rc)
                            rc = source_emit(s, "--- ", 4);
                        if (!rc)
                            rc = source_emit(s, h + k, s->held.len - k);
                    } else {
                        rc = source_emit(s, h, s->held.len);
                        if (!rc)
                            rc = source_emit(s, "\n--- ", 5);
                    }
                    s->between = 0;
                    s->depth = 1;
                } else {
                    /* not a JSON stream after all: let the parser judge the rest */
                    rc = source_emit(s, s->held.data ? s->held.data : "", s->held.len);
                    s->mode = SRC_PLAIN;
                    s->between = 0;
                }
                buf_reset(&s->held);
                if (!rc)
                    rc = source_emit(s, &ch, 1);
                break;
            }
            {
                /* inside a value: scan as far as it goes, then copy the span at once (the
                 * state in locals: raw may alias *s as far as the compiler knows); the bytes
                 * that change nothing are skipped by class, a string's at a time */
                const unsigned char *u = (const unsigned char *)raw;
                size_t from = i;
                int in_str = s->in_str, esc = s->esc, depth = s->depth;

                for (; i < n; i++) {
                    if (in_str) {
                        if (esc) {
                            esc = 0;
                            continue;
                        }
                        while (i < n && !(scan_class[u[i]] & SCAN_STR))
                            i++;
                        if (i == n)
                            break;
                        if (u[i] == '\\')
                            esc = 1;
                        else
                            in_str = 0;
                        continue;
                    }
                    while (i < n && !(scan_class[u[i]] & SCAN_VALUE))
                        i++;
                    if (i == n)
                        break;
                    if (u[i] == '"') {
                        in_str = 1;
                    } else if (u[i] == '{' || u[i] == '[') {
                        depth++;
                    } else if (!--depth) {
                        s->between = 1;
                        break;
                    }
                }
                s->in_str = in_str;
                s->esc = esc;
                s->depth = depth;
                if (i == n)
                    i--; /* the loop's i++ ends the chunk */
                rc = source_emit(s, raw + from, i - from + 1);
            }
            break;
        }
    }
    return rc;
}

static long source_read(void *ctx, char *buf, size_t size)
{
    struct source *s = ctx;
    char raw[65536];
    size_t n;

    while (s->outpos == s->out.len) {
        ssize_t got;

        buf_reset(&s->out);
        s->outpos = 0;
        if (s->fd >= 0) {
            got = read(s->fd, raw, sizeof(raw));
            if (got < 0 && errno == EINTR)
                continue;
            if (got < 0)
                return s->err = -errno;
        } else {
            got = (ssize_t)(s->memlen - s->mempos < sizeof(raw) ? s->memlen - s->mempos
                                                                : sizeof(raw));
            memcpy(raw, s->mem + s->mempos, (size_t)got);
            s->mempos += (size_t)got;
        }
        if (got == 0) {
            if (!s->held.len)
                return 0;
            if ((s->err = source_emit(s, s->held.data, s->held.len)))
                return s->err;
            buf_reset(&s->held);
            continue;
        }
        s->total += (size_t)got;
        if (s->total > s->cap)
            return s->err = -EFBIG;
        if ((s->err = source_filter(s, raw, (size_t)got)))
            return s->err;
    }
    n = s->out.len - s->outpos < size ? s->out.len - s->outpos : size;
    memcpy(buf, s->out.data + s->outpos, n);
    s->outpos += n;
    return (long)n;
}

/* source_rewind starts the input over (kube/yaml.h: the JSON reader hands it to libyaml) */
static int source_rewind(void *ctx)
{
    struct source *s = ctx;

    if (s->fd >= 0 && lseek(s->fd, 0, SEEK_SET) < 0)
        return -errno;
    s->mempos = 0;
    s->total = 0;
    s->err = 0;
    s->mode = SRC_UNDECIDED;
    s->depth = s->in_str = s->esc = s->between = 0;
    buf_reset(&s->out);
    s->outpos = 0;
    buf_reset(&s->held);
    return 0;
}

/* source_seekable: the input can be read again from the start (memory, a regular file) */
static bool source_seekable(const struct source *s)
{
    struct stat st;

    return s->fd < 0 ||
           (!fstat(s->fd, &st) && S_ISREG(st.st_mode) && lseek(s->fd, 0, SEEK_CUR) == 0);
}

static int load_source(struct manifest_input *in, const char *name, struct source *src,
                       struct err *err)
{
    struct manifest_ctx c;
    int rc;

    memset(&c, 0, sizeof(c));
    c.in = in;
    c.err = err;
    c.file = arena_strdup(&in->arena, name);
    if (!c.file)
        return err_set(err, -ENOMEM, "out of memory");
    buf_init(&src->out, 0);
    buf_init(&src->held, 0);
    /* what the loader keeps of a document is copied out of it (kept objects as text) */
    rc = kube_yaml_each_read(source_read, source_seekable(src) ? source_rewind : NULL, src, c.file,
                             KUBE_YAML_SPLIT_ITEMS | KUBE_YAML_TRANSIENT, manifest_load_document,
                             &c, err);
    if (rc && src->err) {
        err_clear(err);
        if (src->err == -EFBIG)
            err_set(err, -EFBIG, "cannot read: larger than %zu MiB", src->cap >> 20);
        else
            err_set(err, src->err, "cannot read: %s", strerror(-src->err));
        err_at(err, c.file, 0, 0);
        rc = src->err;
    } else if (rc && err && !err->file[0]) {
        err_at(err, c.file, err->line, err->column);
    }
    buf_release(&src->out);
    buf_release(&src->held);
    return rc;
}

/* manifest_load_buffer loads without rolling back; the public functions wrap it. Documents are
 * parsed and decoded one at a time (and a List's items one by one), so only one object's JSON tree
 * exists at any moment. */
int manifest_load_buffer(struct manifest_input *in, const char *name, const char *data, size_t len,
                         struct err *err)
{
    struct source src;

    memset(&src, 0, sizeof(src));
    src.fd = -1;
    src.mem = data;
    src.memlen = len;
    src.cap = (size_t)-1;
    return load_source(in, name, &src, err);
}

static int load_one_file(struct manifest_input *in, const char *path, struct err *err)
{
    const char *name = strcmp(path, "-") ? path : "STDIN";
    struct source src;
    int rc;

    memset(&src, 0, sizeof(src));
    src.cap = MANIFEST_INPUT_MAX_FILE;
    src.fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
    if (src.fd < 0) {
        rc = -errno;
        err_set(err, rc, "cannot read: %s", strerror(-rc));
        err_at(err, name, 0, 0);
        return rc;
    }
    rc = load_source(in, name, &src, err);
    if (src.fd != STDIN_FILENO)
        close(src.fd);
    return rc;
}

static int has_manifest_ext(const char *n)
{
    size_t l = strlen(n);

    return (l > 5 && !strcmp(n + l - 5, ".yaml")) || (l > 4 && !strcmp(n + l - 4, ".yml")) ||
           (l > 5 && !strcmp(n + l - 5, ".json"));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int load_dir(struct manifest_input *in, const char *path, DIR *d, struct err *err)
{
    char **names = NULL;
    size_t n = 0, cap = 0, i;
    struct dirent *de;
    int rc = 0;

    while ((de = readdir(d))) {
        if (de->d_name[0] == '.' || !has_manifest_ext(de->d_name))
            continue;
        if (manifest_grow((void **)&names, &cap, n + 1, sizeof(*names)) ||
            !(names[n] = strdup(de->d_name))) {
            rc = err_set(err, -ENOMEM, "out of memory");
            goto out;
        }
        n++;
    }
    if (!n) {
        rc = err_set(err, -ENOENT,
                     "no manifests in directory: recognized file extensions are "
                     "[.json .yaml .yml]");
        err_at(err, path, 0, 0);
        goto out;
    }
    qsort(names, n, sizeof(*names), cmp_str);
    for (i = 0; i < n && !rc; i++) {
        char full[4096];

        snprintf(full, sizeof(full), "%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/",
                 names[i]);
        rc = load_one_file(in, full, err);
    }
out:
    for (i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

int manifest_load_path(struct manifest_input *in, const char *path, struct err *err)
{
    DIR *d = strcmp(path, "-") ? opendir(path) : NULL;
    int rc;

    rc = d ? load_dir(in, path, d, err) : load_one_file(in, path, err);
    if (d)
        closedir(d);
    return rc;
}
