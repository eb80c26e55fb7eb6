/* checkpoint.c - the prepared claims' file (checkpoint.h). */
#include "draplugin/checkpoint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "draplugin/cdi.h"

/* A claim entry as we write it: strings where strings go, devices a list of objects. */
static bool entry_ok(const json_t *e)
{
    const json_t *d;
    size_t i;

    if (!json_is_object(e) || !json_is_string(json_object_get(e, "namespace")) ||
        !json_is_string(json_object_get(e, "name")) ||
        !json_is_array(json_object_get(e, "devices")))
        return false;
    json_array_foreach(json_object_get(e, "devices"), i,
                       d) if (!json_is_string(json_object_get(d, "device")) ||
                              !json_is_string(json_object_get(d, "pool")) ||
                              !json_is_array(json_object_get(d, "cdi"))) return false;
    return true;
}

int dra_checkpoint_load(const char *path, json_t **claims, struct err *err)
{
    struct buf b = BUF_INIT(DRA_CHECKPOINT_MAX);
    json_t *doc = NULL, *c, *e;
    json_error_t je;
    const char *uid;
    int rc;

    *claims = json_object();
    if (!*claims)
        return err_set(err, -ENOMEM, "out of memory");
    rc = buf_read_file(path, &b);
    if (rc == -ENOENT) {
        buf_release(&b);
        return 0;
    }
    if (rc) {
        buf_release(&b);
        return err_set(err, rc, "cannot read the checkpoint '%s': %s", path, strerror(-rc));
    }
    doc = json_loadb(b.data ? b.data : "", b.len, 0, &je);
    buf_release(&b);
    if (!doc)
        return err_set(err, -EINVAL, "the checkpoint '%s' is not JSON: line %d: %s", path, je.line,
                       je.text);
    c = json_object_get(doc, "claims");
    if (json_integer_value(json_object_get(doc, "version")) != 1 || !json_is_object(c)) {
        json_decref(doc);
        return err_set(err, -EINVAL, "the checkpoint '%s' is not a version 1 checkpoint", path);
    }
    json_object_foreach(c, uid, e)
    {
        if (!entry_ok(e)) {
            json_decref(doc);
            return err_set(err, -EINVAL, "the checkpoint '%s': claim %.64s is malformed", path,
                           uid);
        }
    }
    json_object_update(*claims, c);
    json_decref(doc);
    return 0;
}

int dra_checkpoint_save(const char *path, const json_t *claims, struct err *err)
{
    json_t *doc = json_pack("{s:i,s:O}", "version", 1, "claims", (json_t *)claims);
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    int rc;

    json_decref(doc);
    if (!text)
        return err_set(err, -ENOMEM, "out of memory");
    rc = dra_write_swap(path, text, strlen(text), 0600, err);
    free(text);
    return rc;
}
