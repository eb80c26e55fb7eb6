/* sync.c - computing the one merge patch that brings a Node's gpulabel labels up to date.
 *
 * Pure: reads the Node object it is given, writes nothing anywhere. The invariant it keeps is
 * that a label key is only ever removed when the ownership annotation lists it and it belongs
 * to a gpulabel schema; a node that is already right yields no patch at all. */
#include "labeler/sync.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void labeler_sync_plan_release(struct labeler_sync_plan *plan)
{
    if (!plan)
        return;
    json_decref(plan->patch);
    memset(plan, 0, sizeof(*plan));
}

char *labeler_sync_patch_dump(const struct labeler_sync_plan *plan)
{
    if (!plan || !plan->patch)
        return NULL;
    return json_dumps(plan->patch, JSON_COMPACT | JSON_SORT_KEYS);
}

const char *labeler_sync_owned_join(const struct labeler_labels *l, char *buf, size_t size)
{
    size_t n = 0, i;

    if (!size)
        return NULL;
    buf[0] = '\0';
    for (i = 0; i < l->n; i++) {
        size_t k = strlen(l->v[i].key);

        if (n + (i ? 1 : 0) + k + 1 > size)
            return NULL;
        if (i)
            buf[n++] = ',';
        memcpy(buf + n, l->v[i].key, k + 1);
        n += k;
    }
    return buf;
}

/* Is key one of desired's keys? desired is sorted, so a binary search. */
static bool desired_has(const struct labeler_labels *desired, const char *key)
{
    size_t lo = 0, hi = desired->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(desired->v[mid].key, key);

        if (!c)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

static int check_desired(const struct labeler_labels *desired, unsigned schemas, struct err *err)
{
    size_t i;

    for (i = 0; i < desired->n; i++) {
        const char *key = desired->v[i].key;

        if (!key[0] || memchr(key, ',', strlen(key)))
            return err_set(err, -EINVAL, "label key \"%s\" cannot be recorded as owned", key);
        if (!labeler_key_in_schemas(key, schemas))
            return err_set(err, -EINVAL, "label \"%s\" is not a key of the enabled schemas", key);
        if (i && strcmp(desired->v[i - 1].key, key) >= 0)
            return err_set(err, -EINVAL, "desired labels are not sorted with unique keys at \"%s\"",
                           key);
    }
    return 0;
}

/* Adds "key": null to rm for every owned key that must go. owned is the annotation value. */
static int plan_removals(const char *owned, const json_t *labels,
                         const struct labeler_labels *desired, json_t *patch_labels,
                         size_t *nremoved)
{
    const char *p = owned;

    while (*p) {
        const char *start, *end;
        char key[sizeof(((struct labeler_label *)0)->key)];
        size_t len;

        while (*p == ',' || *p == ' ' || *p == '\t')
            p++;
        start = p;
        while (*p && *p != ',')
            p++;
        end = p;
        while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        len = (size_t)(end - start);
        /* A key longer than any gpulabel key cannot be ours: leave it alone. */
        if (!len || len >= sizeof(key))
            continue;
        memcpy(key, start, len);
        key[len] = '\0';
        if (!labeler_key_in_schemas(key, LABELER_SCHEMAS_ALL) || desired_has(desired, key))
            continue;
        if (!json_object_get(labels, key) || json_object_get(patch_labels, key))
            continue;
        if (json_object_set_new(patch_labels, key, json_null()))
            return -ENOMEM;
        (*nremoved)++;
    }
    return 0;
}

#define LABELER_SHARED_PRESENT "nvidia.com/gpu.present"

/* owned_has tells whether the annotation value lists key. */
static bool owned_has(const char *owned, const char *key)
{
    size_t klen = strlen(key);
    const char *p = owned;

    while (*p) {
        size_t len = strcspn(p, ",");

        while (len && (*p == ' ' || *p == '\t')) {
            p++;
            len--;
        }
        if (len >= klen && !strncmp(p, key, klen)) {
            const char *q = p + klen;

            while (q < p + len && (*q == ' ' || *q == '\t'))
                q++;
            if (q == p + len)
                return true;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return false;
}

/* The keys owned (our keys in the annotation value) together with desired's, into all. */
static int owned_union(const char *owned, const struct labeler_labels *desired,
                       struct labeler_labels *all)
{
    const char *p = owned;
    size_t i;

    while (*p) {
        char key[sizeof(((struct labeler_label *)0)->key)];
        size_t len = strcspn(p, ",");

        if (len && len < sizeof(key)) {
            memcpy(key, p, len);
            key[len] = '\0';
            if (labeler_key_in_schemas(key, LABELER_SCHEMAS_ALL) &&
                labeler_labels_set(all, key, "", NULL))
                return -ENOMEM;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    for (i = 0; i < desired->n; i++)
        if (labeler_labels_set(all, desired->v[i].key, "", NULL))
            return -ENOMEM;
    return 0;
}

int labeler_sync_plan_compute(const json_t *node, const struct labeler_labels *desired,
                              unsigned schemas, bool pin_resource_version,
                              struct labeler_sync_plan *plan, struct err *err)
{
    const json_t *meta, *labels, *annotations, *cur_owned, *rv;
    json_t *patch = NULL, *pmeta = NULL, *plabels = NULL;
    const char *owned_str = "";
    char *want_owned = NULL;
    size_t want_len = 1, i;
    bool skip_present = false;
    struct labeler_labels claimed;
    int rc;

    memset(&claimed, 0, sizeof(claimed));
    memset(plan, 0, sizeof(*plan));
    if (!json_is_object(node))
        return err_set(err, -EINVAL, "node is not a JSON object");
    rc = check_desired(desired, schemas, err);
    if (rc)
        return rc;

    meta = json_object_get(node, "metadata");
    labels = json_object_get(meta, "labels");
    annotations = json_object_get(meta, "annotations");
    cur_owned = json_object_get(annotations, LABELER_OWNED_ANNOTATION);
    if (json_is_string(cur_owned))
        owned_str = json_string_value(cur_owned);

    rc = -ENOMEM;
    plabels = json_object();
    if (!plabels)
        goto out;
    for (i = 0; i < desired->n; i++) {
        const json_t *have = json_object_get(labels, desired->v[i].key);

        if (json_is_string(have) && !strcmp(json_string_value(have), desired->v[i].value)) {
            /* nvidia.com/gpu.present is also the GPU Operator's (from NFD): one already
             * there and not ours stays theirs, so that turning gfd off never removes it */
            if (!strcmp(desired->v[i].key, LABELER_SHARED_PRESENT) &&
                !owned_has(owned_str, desired->v[i].key)) {
                skip_present = true;
                continue;
            }
            want_len += strlen(desired->v[i].key) + 1;
            continue;
        }
        want_len += strlen(desired->v[i].key) + 1;
        if (json_object_set_new(plabels, desired->v[i].key, json_string(desired->v[i].value)))
            goto out;
        plan->nset++;
    }
    if (!desired->partial && plan_removals(owned_str, labels, desired, plabels, &plan->nremoved))
        goto out;
    if (skip_present) {
        for (i = 0; i < desired->n; i++)
            if (strcmp(desired->v[i].key, LABELER_SHARED_PRESENT) &&
                labeler_labels_set(&claimed, desired->v[i].key, desired->v[i].value, NULL))
                goto out;
        desired = &claimed;
    }

    if (desired->partial) {
        /* nothing is removed, so what is owned is what was owned and what is set now */
        struct labeler_labels all;

        memset(&all, 0, sizeof(all));
        if (owned_union(owned_str, desired, &all)) {
            labeler_labels_release(&all);
            goto out;
        }
        want_len = 1;
        for (i = 0; i < all.n; i++)
            want_len += strlen(all.v[i].key) + 1;
        want_owned = malloc(want_len);
        if (want_owned)
            labeler_sync_owned_join(&all, want_owned, want_len);
        labeler_labels_release(&all);
        if (!want_owned)
            goto out;
    } else {
        want_owned = malloc(want_len);
        if (!want_owned)
            goto out;
        labeler_sync_owned_join(desired, want_owned, want_len);
    }
    if (desired->n)
        plan->annotation = !json_is_string(cur_owned) || strcmp(owned_str, want_owned);
    else
        plan->annotation = cur_owned != NULL;

    rc = 0;
    if (!plan->nset && !plan->nremoved && !plan->annotation)
        goto out;

    rc = -ENOMEM;
    patch = json_object();
    pmeta = json_object();
    if (!patch || !pmeta || json_object_set(patch, "metadata", pmeta))
        goto out;
    if (json_object_size(plabels) && json_object_set(pmeta, "labels", plabels))
        goto out;
    if (plan->annotation) {
        json_t *pann = json_object();

        if (!pann || json_object_set_new(pmeta, "annotations", pann) ||
            json_object_set_new(pann, LABELER_OWNED_ANNOTATION,
                                desired->n ? json_string(want_owned) : json_null()))
            goto out;
    }
    rv = json_object_get(meta, "resourceVersion");
    if (pin_resource_version && json_is_string(rv) && json_string_length(rv) &&
        json_object_set_new(pmeta, "resourceVersion", json_string(json_string_value(rv))))
        goto out;
    plan->patch = patch;
    patch = NULL;
    rc = 0;
out:
    if (rc == -ENOMEM)
        err_set(err, rc, "out of memory computing the node patch");
    json_decref(patch);
    json_decref(pmeta);
    json_decref(plabels);
    free(want_owned);
    labeler_labels_release(&claimed);
    return rc;
}
