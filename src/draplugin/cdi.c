/* cdi.c - CDI specs of prepared claims (cdi.h) and the atomic file write. */
#include "draplugin/cdi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#define CDI_VERSION "0.5.0"

static int write_all(int fd, const char *tmp, const char *data, size_t len, struct err *err)
{
    size_t off = 0;

    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);

        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return err_set(err, -errno, "cannot write '%s': %s", tmp, strerror(errno));
        off += (size_t)w;
    }
    return 0;
}

int dra_write_atomic(const char *path, const char *data, size_t len, int mode, struct err *err)
{
    char tmp[4200];
    int fd, rc;

    if (strlen(path) + 32 > sizeof(tmp))
        return err_set(err, -ENAMETOOLONG, "cannot write '%s': path too long", path);
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0)
        return err_set(err, -errno, "cannot write '%s': %s", tmp, strerror(errno));
    rc = write_all(fd, tmp, data, len, err);
    if (close(fd) && !rc)
        rc = err_set(err, -errno, "cannot write '%s': %s", tmp, strerror(errno));
    if (!rc && rename(tmp, path))
        rc = err_set(err, -errno, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
    if (rc)
        unlink(tmp);
    return rc;
}

void dra_spare_path(const char *path, char *out, size_t size)
{
    snprintf(out, size, "%s.spare.%ld", path, (long)getpid());
}

int dra_write_swap(const char *path, const char *data, size_t len, int mode, struct err *err)
{
    char tmp[4200];
    int fd, rc;

    if (strlen(path) + 32 > sizeof(tmp))
        return err_set(err, -ENAMETOOLONG, "cannot write '%s': path too long", path);
    dra_spare_path(path, tmp, sizeof(tmp));
    /* the spare from the last write when there is one: no O_TRUNC (on ext4 a truncation to
     * zero makes the close start the file's writeback), the length set after the write */
    fd = open(tmp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0)
        return err_set(err, -errno, "cannot write '%s': %s", tmp, strerror(errno));
    rc = write_all(fd, tmp, data, len, err);
    if (!rc && ftruncate(fd, (off_t)len))
        rc = err_set(err, -errno, "cannot write '%s': %s", tmp, strerror(errno));
    if (!rc && fchmod(fd, (mode_t)mode))
        rc = err_set(err, -errno, "cannot write '%s': %s", tmp, strerror(errno));
    if (close(fd) && !rc)
        rc = err_set(err, -errno, "cannot write '%s': %s", tmp, strerror(errno));
    if (rc) {
        unlink(tmp);
        return rc;
    }
    if (!renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE))
        return 0;
    /* no file at path yet (the first write), or a file system without the exchange */
    if (errno != ENOENT && errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
        rc = err_set(err, -errno, "cannot exchange '%s' and '%s': %s", tmp, path, strerror(errno));
    else if (rename(tmp, path))
        rc = err_set(err, -errno, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
    if (rc)
        unlink(tmp);
    return rc;
}

void dra_cdi_path(const char *cdi_root, const char *driver, const char *uid, char *out, size_t size)
{
    snprintf(out, size, "%s/k8s.%s-claim_%s.json", cdi_root, driver, uid);
}

/* Adds {"path": "/dev/<name>"} to nodes when dev_root has that node. */
static int add_node(json_t *nodes, const char *dev_root, const char *name)
{
    char path[4200];
    struct stat st;

    snprintf(path, sizeof(path), "%s/%s", dev_root, name);
    if (stat(path, &st))
        return 0;
    snprintf(path, sizeof(path), "/dev/%s", name);
    return json_array_append_new(nodes, json_pack("{s:s}", "path", path));
}

static int mkdirs(const char *dir, struct err *err)
{
    char p[4096];
    size_t i;

    snprintf(p, sizeof(p), "%s", dir);
    for (i = 1; p[i]; i++) {
        if (p[i] != '/')
            continue;
        p[i] = '\0';
        if (mkdir(p, 0755) && errno != EEXIST)
            return err_set(err, -errno, "cannot create the CDI directory '%s': %s", p,
                           strerror(errno));
        p[i] = '/';
    }
    if (mkdir(p, 0755) && errno != EEXIST)
        return err_set(err, -errno, "cannot create the CDI directory '%s': %s", p, strerror(errno));
    return 0;
}

int dra_cdi_write(const char *cdi_root, const char *dev_root, const char *driver, const char *uid,
                  const struct dra_devices *d, const size_t *devs, size_t n, struct err *err)
{
    json_t *spec, *list = json_array(), *common = json_array();
    char kind[300], path[4400], *text = NULL;
    size_t i;
    int rc = !list || !common;

    if (!dev_root || !*dev_root)
        dev_root = "/dev";
    for (i = 0; !rc && i < n; i++) {
        const struct dra_device *dev = &d->v[devs[i]];
        const struct dra_gpu *g = &d->gpus[dev->gpu];
        json_t *nodes = json_array();
        char name[300], env[160], node[32];

        snprintf(name, sizeof(name), "%s-%s", uid, dev->name);
        snprintf(env, sizeof(env), "NVIDIA_VISIBLE_DEVICES=%s", dev->uuid);
        snprintf(node, sizeof(node), "nvidia%d", g->minor);
        rc = !nodes || add_node(nodes, dev_root, node);
        if (!rc)
            rc = json_array_append_new(list, json_pack("{s:s,s:{s:[s],s:o}}", "name", name,
                                                       "containerEdits", "env", env, "deviceNodes",
                                                       nodes));
        else
            json_decref(nodes);
    }
    if (!rc)
        rc = add_node(common, dev_root, "nvidiactl") || add_node(common, dev_root, "nvidia-uvm") ||
             add_node(common, dev_root, "nvidia-uvm-tools");
    snprintf(kind, sizeof(kind), "k8s.%s/claim", driver);
    spec = rc ? NULL
              : json_pack("{s:s,s:s,s:O,s:{s:O}}", "cdiVersion", CDI_VERSION, "kind", kind,
                          "devices", list, "containerEdits", "deviceNodes", common);
    json_decref(list);
    json_decref(common);
    text = spec ? json_dumps(spec, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
    json_decref(spec);
    if (!text)
        return err_set(err, -ENOMEM, "out of memory");
    rc = mkdirs(cdi_root, err);
    if (!rc) {
        dra_cdi_path(cdi_root, driver, uid, path, sizeof(path));
        rc = dra_write_atomic(path, text, strlen(text), 0644, err);
    }
    free(text);
    return rc;
}

int dra_cdi_remove(const char *cdi_root, const char *driver, const char *uid, struct err *err)
{
    char path[4400];

    dra_cdi_path(cdi_root, driver, uid, path, sizeof(path));
    if (unlink(path) && errno != ENOENT)
        return err_set(err, -errno, "cannot remove the CDI spec '%s': %s", path, strerror(errno));
    return 0;
}
