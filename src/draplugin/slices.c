/* slices.c - publishing the pool (slices.h): the desired slices, the LIST of ours, the
 * comparison that keeps a pool in sync from being rewritten, and the writes. */
#include "draplugin/slices.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/quantity.h"

#define API "/apis/resource.k8s.io/v1/resourceslices"
#define INDEX_LEN 5     /* the resourceslice controller's shortest index prefix */
#define MAX_SLICES 4096 /* more slices of ours than this is not a pool we made */

/* ---- what the pool should hold -------------------------------------------------------------- */

static int append_chunks(json_t *out, json_t *items, const char *field, size_t per)
{
    size_t i = 0, n = json_array_size(items);

    while (i < n) {
        json_t *chunk = json_array();
        size_t k;

        if (!chunk)
            return -ENOMEM;
        for (k = 0; k < per && i < n; k++, i++)
            json_array_append(chunk, json_array_get(items, i));
        if (json_array_append_new(out, json_pack("{s:o}", field, chunk)))
            return -ENOMEM;
    }
    return 0;
}

json_t *dra_slices_desired(const struct dra_devices *d, const char *driver,
                           const struct dra_health *health)
{
    json_t *out = json_array(), *sets = dra_counter_sets_json(d), *devs = json_array();
    size_t k, g;
    int rc = !out || !sets || !devs;

    for (k = 0; !rc && k < d->n; k++) {
        const struct dra_health *h = health ? &health[d->v[k].gpu] : NULL;
        json_t *o = dra_device_json(d, k, driver, h);

        rc = !o || json_array_append_new(devs, o);
    }
    if (!rc && !json_array_size(sets)) {
        rc = append_chunks(out, devs, "devices", DRA_SLICE_MAX_DEVICES);
    } else if (!rc) {
        /* partitionable devices: the counter sets first, then a slice per GPU, as NVIDIA's
         * driver lays out a pool with MIG on v1.35 and later */
        rc = append_chunks(out, sets, "sharedCounters", DRA_SLICE_MAX_COUNTER_SETS);
        for (g = 0; !rc && g < d->ngpus; g++) {
            json_t *mine = json_array();

            rc = !mine;
            for (k = 0; !rc && k < d->n; k++)
                if (d->v[k].gpu == g)
                    rc = json_array_append(mine, json_array_get(devs, k));
            if (!rc && json_array_size(mine))
                rc = append_chunks(out, mine, "devices", DRA_SLICE_MAX_DEVICES);
            json_decref(mine);
        }
    }
    json_decref(sets);
    json_decref(devs);
    if (rc) {
        json_decref(out);
        return NULL;
    }
    return out;
}

static const char *str(const json_t *v)
{
    const char *s = json_string_value(v);

    return s ? s : "";
}

/* ---- comparing ------------------------------------------------------------------------------ */

/* Writes every {"value": quantity} of a capacity or counters map in its canonical form, the
 * one the API server answers with, so that "42949672960" and "40Gi" compare equal. */
static void canon_values(json_t *map)
{
    const char *key;
    json_t *v;

    json_object_foreach(map, key, v)
    {
        json_t *q = json_object_get(v, "value");
        int64_t n;
        char buf[64];

        if (json_is_string(q) && !kube_quantity_parse(json_string_value(q), &n, NULL, NULL))
            json_object_set_new(v, "value",
                                json_string(kube_quantity_format_bytes(n, buf, sizeof(buf))));
    }
}

/* A copy of the parts of a spec that we write (devices or sharedCounters), quantities in
 * canonical form. */
static json_t *canon_spec(const json_t *spec)
{
    json_t *out = json_object(), *devs = json_deep_copy(json_object_get(spec, "devices"));
    json_t *sets = json_deep_copy(json_object_get(spec, "sharedCounters")), *d;
    size_t i, j;

    json_array_foreach(devs, i, d)
    {
        json_t *c;

        canon_values(json_object_get(d, "capacity"));
        json_array_foreach(json_object_get(d, "consumesCounters"), j, c)
            canon_values(json_object_get(c, "counters"));
    }
    json_array_foreach(sets, i, d) canon_values(json_object_get(d, "counters"));
    if (out && json_array_size(devs))
        json_object_set(out, "devices", devs);
    if (out && json_array_size(sets))
        json_object_set(out, "sharedCounters", sets);
    json_decref(devs);
    json_decref(sets);
    return out;
}

static bool same_spec(const json_t *existing, const json_t *desired)
{
    json_t *a = canon_spec(existing), *b = canon_spec(desired);
    bool eq = a && b && json_equal(a, b);

    json_decref(a);
    json_decref(b);
    return eq;
}

/* The index a slice name of ours starts with ("0000a-..."), or -1. */
static long name_index(const char *name, size_t len)
{
    char *end;
    long v;

    if (strlen(name) <= len || name[len] != '-')
        return -1;
    v = strtol(name, &end, 16);
    return end == name + len && v >= 0 ? v : -1;
}

/* ---- the API -------------------------------------------------------------------------------- */

static int fail(struct err *err, const char *verb, const char *what)
{
    char was[ERR_MSG_MAX];

    snprintf(was, sizeof(was), "%s", err->msg);
    if (was[0] && was[strlen(was) - 1] == '.')
        was[strlen(was) - 1] = '\0';
    snprintf(err->msg, sizeof(err->msg), "cannot %s ResourceSlice %s: %s", verb, what, was);
    return err->code ? err->code : -EIO;
}

static int send_json(struct kube_client *c, const char *method, const char *path, json_t *body,
                     struct err *err)
{
    struct kube_response resp;
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    int rc;

    if (body && !text)
        return err_set(err, -ENOMEM, "out of memory");
    memset(&resp, 0, sizeof(resp));
    rc = kube_client_request(c, method, path, text ? "application/json" : NULL, text,
                             text ? strlen(text) : 0, &resp, err);
    kube_response_release(&resp);
    free(text);
    return rc;
}

int dra_node_uid(struct kube_client *c, const char *node, char *out, size_t size, struct err *err)
{
    struct kube_response resp;
    char esc[1024], path[1100];
    const char *uid;
    int rc;

    if (!kube_path_escape(node, esc, sizeof(esc)))
        return err_set(err, -ENAMETOOLONG, "node name \"%.64s...\" is too long", node);
    snprintf(path, sizeof(path), "/api/v1/nodes/%s", esc);
    memset(&resp, 0, sizeof(resp));
    rc = kube_client_request(c, "GET", path, NULL, NULL, 0, &resp, err);
    uid = json_string_value(json_object_get(json_object_get(resp.json, "metadata"), "uid"));
    if (!rc && !uid)
        rc = err_set(err, -EPROTO, "node \"%s\" has no metadata.uid", node);
    if (!rc)
        snprintf(out, size, "%s", uid);
    else
        err_prefix(err, "cannot get node \"%s\"", node);
    kube_response_release(&resp);
    return rc;
}

int dra_slices_sync(struct kube_client *c, const char *driver, const char *node,
                    const char *node_uid, const json_t *desired, struct dra_slices_result *res,
                    struct err *err)
{
    size_t want = json_array_size(desired), prefix = INDEX_LEN, i, nitems;
    struct kube_response resp;
    char sel[1024], esc[2048], path[2200], hex[32];
    json_t *items, *item, **match = NULL, **keep = NULL;
    char **gone = NULL;
    bool *obsolete = NULL, changed = false;
    int64_t generation = 0;
    int rc;

    memset(res, 0, sizeof(*res));
    snprintf(hex, sizeof(hex), "%zx", want ? want - 1 : 0);
    if (strlen(hex) > prefix)
        prefix = strlen(hex);
    snprintf(sel, sizeof(sel), "spec.driver=%s,spec.nodeName=%s", driver, node);
    if (!kube_path_escape(sel, esc, sizeof(esc)))
        return err_set(err, -ENAMETOOLONG, "driver or node name too long");
    snprintf(path, sizeof(path), API "?fieldSelector=%s", esc);
    memset(&resp, 0, sizeof(resp));
    rc = kube_client_request(c, "GET", path, NULL, NULL, 0, &resp, err);
    if (rc) {
        kube_response_release(&resp);
        return fail(err, "list", "objects");
    }
    items = json_object_get(resp.json, "items");
    nitems = json_array_size(items);
    if (nitems > MAX_SLICES) {
        kube_response_release(&resp);
        return err_set(err, -E2BIG,
                       "%zu ResourceSlices of driver %s on node \"%s\": more than "
                       "%d, not a pool gpulabel made",
                       nitems, driver, node, MAX_SLICES);
    }
    match = calloc(want + 1, sizeof(*match));
    obsolete = calloc(nitems + 1, sizeof(*obsolete));
    if (!match || !obsolete) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    /* the pool's generation is the highest of its slices; older ones are obsolete */
    json_array_foreach(items, i, item)
    {
        const json_t *pool = json_object_get(json_object_get(item, "spec"), "pool");
        int64_t g = json_integer_value(json_object_get(pool, "generation"));

        if (!strcmp(str(json_object_get(pool, "name")), node) && g > generation)
            generation = g;
    }
    json_array_foreach(items, i, item)
    {
        const json_t *spec = json_object_get(item, "spec");
        const json_t *pool = json_object_get(spec, "pool");
        const char *name =
            json_string_value(json_object_get(json_object_get(item, "metadata"), "name"));
        long idx = name ? name_index(name, prefix) : -1;

        if (strcmp(str(json_object_get(pool, "name")), node) ||
            json_integer_value(json_object_get(pool, "generation")) < generation || idx < 0 ||
            (size_t)idx >= want || match[idx]) {
            obsolete[i] = true;
            continue;
        }
        match[idx] = item;
        if (!same_spec(spec, json_array_get(desired, (size_t)idx)) ||
            json_integer_value(json_object_get(pool, "resourceSliceCount")) != (json_int_t)want)
            changed = true;
    }
    for (i = 0; i < want; i++)
        changed |= !match[i];
    for (i = 0; i < nitems; i++)
        changed |= obsolete[i];
    if (changed)
        generation++;
    res->generation = generation;
    /* what the writes need of the listed slices (the names to delete, the objects to update
     * without their spec and status), so that the list is freed before the writes: it was
     * the largest part of the agent's peak heap, alive beside a write's buffers */
    gone = calloc(nitems + 1, sizeof(*gone));
    keep = calloc(want + 1, sizeof(*keep));
    if (!gone || !keep) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    json_array_foreach(items, i, item)
    {
        const char *name =
            json_string_value(json_object_get(json_object_get(item, "metadata"), "name"));

        if (obsolete[i] && name && !(gone[i] = strdup(name))) {
            rc = err_set(err, -ENOMEM, "out of memory");
            goto out;
        }
    }
    for (i = 0; changed && i < want; i++) {
        json_t *copy = NULL;

        if (!match[i])
            continue;
        /* the spec is written anew: copy the rest only */
        copy = json_copy(match[i]);
        if (copy) {
            json_object_del(copy, "spec");
            json_object_del(copy, "status");
            keep[i] = json_deep_copy(copy);
            json_decref(copy);
        }
        if (!keep[i]) {
            rc = err_set(err, -ENOMEM, "out of memory");
            goto out;
        }
    }
    items = NULL;
    memset(match, 0, (want + 1) * sizeof(*match));
    kube_response_release(&resp);
    /* deletes first: devices the node no longer has go even if the rest cannot be written */
    for (i = 0; i < nitems; i++) {
        const char *name = gone[i];

        if (!name)
            continue;
        if (!kube_path_escape(name, esc, sizeof(esc))) {
            rc = err_set(err, -ENAMETOOLONG, "slice name too long");
            goto out;
        }
        snprintf(path, sizeof(path), API "/%s", esc);
        rc = send_json(c, "DELETE", path, NULL, err);
        if (rc && rc != -ENOENT) {
            rc = fail(err, "delete", name);
            goto out;
        }
        rc = 0;
        res->deleted++;
    }
    for (i = 0; changed && i < want; i++) {
        json_t *part = json_array_get(desired, i), *obj, *spec;
        char gen[128];

        spec = json_pack("{s:s,s:{s:s,s:I,s:I},s:s}", "driver", driver, "pool", "name", node,
                         "generation", (json_int_t)generation, "resourceSliceCount",
                         (json_int_t)want, "nodeName", node);
        if (!spec || json_object_update(spec, part)) {
            json_decref(spec);
            rc = err_set(err, -ENOMEM, "out of memory");
            goto out;
        }
        if (keep[i]) {
            const char *name =
                json_string_value(json_object_get(json_object_get(keep[i], "metadata"), "name"));

            obj = keep[i];
            if (json_object_set_new(obj, "spec", spec)) {
                rc = err_set(err, -ENOMEM, "out of memory");
                goto out;
            }
            kube_path_escape(name, esc, sizeof(esc));
            snprintf(path, sizeof(path), API "/%s", esc);
            rc = send_json(c, "PUT", path, obj, err);
            json_decref(obj);
            keep[i] = NULL;
            if (rc) {
                rc = fail(err, "update", name);
                goto out;
            }
            res->updated++;
            continue;
        }
        snprintf(gen, sizeof(gen), "%0*zx-%s-%s-", (int)prefix, i, driver, node);
        obj = json_pack("{s:s,s:s,s:{s:s,s:[{s:s,s:s,s:s,s:s,s:b}]},s:o}", "apiVersion",
                        "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata", "generateName",
                        gen, "ownerReferences", "apiVersion", "v1", "kind", "Node", "name", node,
                        "uid", node_uid, "controller", 1, "spec", spec);
        if (!obj) {
            rc = err_set(err, -ENOMEM, "out of memory");
            goto out;
        }
        rc = send_json(c, "POST", API, obj, err);
        json_decref(obj);
        if (rc) {
            rc = fail(err, "create", gen);
            goto out;
        }
        res->created++;
    }
out:
    for (i = 0; gone && i < nitems; i++)
        free(gone[i]);
    for (i = 0; keep && i < want; i++)
        json_decref(keep[i]);
    free(gone);
    free(keep);
    free(match);
    free(obsolete);
    kube_response_release(&resp);
    return rc;
}
