/* outfile.c - output files put in place whole (see outfile.h): mkstemp beside the target,
 * the target's mode kept (a new file gets 0666 less the umask, as fopen would), fsync, rename,
 * and the directory synced so the rename survives a crash. */
#include "base/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"

static int outfile_fail(struct outfile *o, struct err *err, const char *path, int code,
                        const char *why)
{
    err_set(err, code, "cannot write '%s': %s", path, why);
    outfile_abort(o);
    return code;
}

/* outfile_in_place opens a FIFO or character device for writing without waiting for a
 * reader (a FIFO nobody reads is an error, not a hang). */
static int outfile_in_place(struct outfile *o, const char *path, struct err *err)
{
    int fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC), flags;

    if (fd < 0)
        return outfile_fail(o, err, path, -errno,
                            errno == ENXIO ? "a FIFO with no reader" : strerror(errno));
    /* O_NONBLOCK only kept the open from waiting; the writes may wait */
    flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    if (!(o->f = fdopen(fd, "w"))) {
        int code = -errno;
        close(fd);
        return outfile_fail(o, err, path, code, strerror(-code));
    }
    return 0;
}

/* outfile_beside creates the dot-file beside o->path, with mode for its final mode. */
static int outfile_beside(struct outfile *o, const char *shown, mode_t mode, struct err *err)
{
    const char *slash = strrchr(o->path, '/');
    const char *base = slash ? slash + 1 : o->path;
    size_t dirlen = slash ? (size_t)(slash - o->path) + 1 : 0;
    int fd;

    if (!*base)
        return outfile_fail(o, err, shown, -EISDIR, "is a directory");
    if (!(o->tmp = buf_fmt("%.*s.%s.XXXXXX", (int)dirlen, o->path, base)))
        return outfile_fail(o, err, shown, -ENOMEM, "out of memory");
    if ((fd = mkstemp(o->tmp)) < 0) {
        int code = -errno;
        free(o->tmp);
        o->tmp = NULL;
        return outfile_fail(o, err, shown, code, strerror(-code));
    }
    if (fchmod(fd, mode) || !(o->f = fdopen(fd, "w"))) {
        int code = -errno;
        close(fd);
        return outfile_fail(o, err, shown, code, strerror(-code));
    }
    return 0;
}

int outfile_open(struct outfile *o, const char *path, struct err *err)
{
    struct stat st;
    mode_t mask;
    bool link;

    memset(o, 0, sizeof(*o));
    if (lstat(path, &st)) {
        if (errno != ENOENT)
            return outfile_fail(o, err, path, -errno, strerror(errno));
        if (!(o->path = strdup(path)))
            return outfile_fail(o, err, path, -ENOMEM, "out of memory");
        mask = umask(0);
        umask(mask);
        return outfile_beside(o, path, 0666 & ~mask, err);
    }
    link = S_ISLNK(st.st_mode);
    if (link && stat(path, &st))
        return outfile_fail(o, err, path, -errno,
                            errno == ENOENT ? "a symlink to a missing file" : strerror(errno));
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
        if (!(o->path = strdup(path)))
            return outfile_fail(o, err, path, -ENOMEM, "out of memory");
        return outfile_in_place(o, path, err);
    }
    if (S_ISDIR(st.st_mode))
        return outfile_fail(o, err, path, -EISDIR, "is a directory");
    if (!S_ISREG(st.st_mode))
        return outfile_fail(o, err, path, -EINVAL,
                            "not a regular file, a FIFO or a character device");
    /* the file itself, not the symlink to it */
    o->path = link ? realpath(path, NULL) : strdup(path);
    if (!o->path)
        return outfile_fail(o, err, path, errno ? -errno : -ENOMEM, strerror(errno));
    return outfile_beside(o, path, st.st_mode & 07777, err);
}

/* outfile_sync_dir makes the rename into path's directory durable; a failure there does not
 * undo a complete file already in place */
static void outfile_sync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? buf_fmt("%.*s", slash == path ? 1 : (int)(slash - path), path) : NULL;
    int fd = slash && !dir ? -1 : open(dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

int outfile_commit(struct outfile *o, struct err *err)
{
    int code = 0;

    if (!o->f)
        return err_set(err, -EBADF, "cannot write: not open");
    if (fflush(o->f) || (o->tmp && fsync(fileno(o->f))))
        code = -errno;
    if (fclose(o->f) && !code)
        code = -errno;
    o->f = NULL;
    if (!code && o->tmp && rename(o->tmp, o->path))
        code = -errno;
    if (code) {
        err_set(err, code, "cannot write '%s': %s", o->path ? o->path : "", strerror(-code));
        outfile_abort(o);
        return code;
    }
    if (o->tmp)
        outfile_sync_dir(o->path);
    free(o->tmp);
    free(o->path);
    o->tmp = o->path = NULL;
    return 0;
}

void outfile_abort(struct outfile *o)
{
    if (o->f)
        fclose(o->f);
    if (o->tmp)
        unlink(o->tmp);
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof(*o));
}
