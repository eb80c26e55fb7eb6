/* labels.c - the label set, the ack and gfd schemas, and writing labels out.
 *
 * Every value goes through labeler_labels_set, which refuses invalid label values, so a set
 * built here can always be sent to the API server. The set stays sorted by key. */
#include "labeler/labels.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/outfile.h"
#include "gpu/pci.h"
#include "kube/labels.h"
#include "labeler/sanitize.h"

#define GFD_PREFIX "nvidia.com/"
#define MACHINE_TYPE_MAX 4096
#define FEATURE_FILE_MAX 65536 /* NFD ignores larger local feature files */

static const char *const ack_keys[] = {LABELER_ACK_COUNT, LABELER_ACK_MEM, LABELER_ACK_NAME};

static const char *const gfd_keys[] = {
    GFD_PREFIX "cuda.driver-version.full",
    GFD_PREFIX "cuda.driver-version.major",
    GFD_PREFIX "cuda.driver-version.minor",
    GFD_PREFIX "cuda.driver-version.revision",
    GFD_PREFIX "cuda.driver.major",
    GFD_PREFIX "cuda.driver.minor",
    GFD_PREFIX "cuda.driver.rev",
    GFD_PREFIX "cuda.runtime-version.full",
    GFD_PREFIX "cuda.runtime-version.major",
    GFD_PREFIX "cuda.runtime-version.minor",
    GFD_PREFIX "cuda.runtime.major",
    GFD_PREFIX "cuda.runtime.minor",
    GFD_PREFIX "gpu.compute.major",
    GFD_PREFIX "gpu.compute.minor",
    GFD_PREFIX "gpu.count",
    GFD_PREFIX "gpu.family",
    GFD_PREFIX "gpu.machine",
    GFD_PREFIX "gpu.memory",
    GFD_PREFIX "gpu.mode",
    GFD_PREFIX "gpu.present",
    GFD_PREFIX "gpu.product",
    GFD_PREFIX "gpu.replicas",
    GFD_PREFIX "gpu.sharing-strategy",
    GFD_PREFIX "mig.capable",
    GFD_PREFIX "mig.strategy",
    GFD_PREFIX "mps.capable",
    GFD_PREFIX "gpu.multiprocessors",
    GFD_PREFIX "gpu.slices.gi",
    GFD_PREFIX "gpu.slices.ci",
    GFD_PREFIX "gpu.engines.copy",
    GFD_PREFIX "gpu.engines.decoder",
    GFD_PREFIX "gpu.engines.encoder",
    GFD_PREFIX "gpu.engines.jpeg",
    GFD_PREFIX "gpu.engines.ofa",
};

/* The attributes of a MIG profile's label set, nvidia.com/mig-<profile>.<attr> (mixed). */
static const char *const mig_attrs[] = {
    "count",        "memory",           "multiprocessors", "product",
    "replicas",     "sharing-strategy", "slices.gi",       "slices.ci",
    "engines.copy", "engines.decoder",  "engines.encoder", "engines.jpeg",
    "engines.ofa",
};

/* "nvidia.com/mig-1g.5gb.count": a profile ("<c>c."? "<g>g.<n>gb") and a known attribute. */
static bool mig_profile_key(const char *key)
{
    const char *p = key + strlen(GFD_PREFIX "mig-"), *q = p;
    size_t i;

    if (strncmp(key, GFD_PREFIX "mig-", strlen(GFD_PREFIX "mig-")))
        return false;
    q = strstr(p, "gb.");
    if (!q || q == p)
        return false;
    for (; p < q; p++)
        if (!strchr("0123456789cg.", *p))
            return false;
    for (i = 0; i < sizeof(mig_attrs) / sizeof(mig_attrs[0]); i++)
        if (!strcmp(q + 3, mig_attrs[i]))
            return true;
    return false;
}

void labeler_labels_release(struct labeler_labels *l)
{
    if (!l)
        return;
    free(l->v);
    l->v = NULL;
    l->n = l->alloc = 0;
}

static size_t labels_find(const struct labeler_labels *l, const char *key, bool *found)
{
    size_t lo = 0, hi = l->n;

    *found = false;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(l->v[mid].key, key);

        if (!c) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const char *labeler_labels_get(const struct labeler_labels *l, const char *key)
{
    bool found;
    size_t i;

    if (!l || !key)
        return NULL;
    i = labels_find(l, key, &found);
    return found ? l->v[i].value : NULL;
}

int labeler_labels_set(struct labeler_labels *l, const char *key, const char *value,
                       struct err *err)
{
    bool found;
    size_t i;

    if (!key[0] || strlen(key) >= sizeof(l->v[0].key))
        return err_set(err, -EINVAL, "label key '%s': empty or too long", key);
    if (kube_label_value_validate(value, NULL))
        return err_set(err, -EINVAL, "label %s: invalid value '%s'", key, value);
    i = labels_find(l, key, &found);
    if (!found) {
        if (l->n == l->alloc) {
            size_t alloc = l->alloc ? l->alloc * 2 : 16;
            struct labeler_label *v = realloc(l->v, alloc * sizeof(*v));

            if (!v)
                return err_set(err, -ENOMEM, "out of memory for labels");
            l->v = v;
            l->alloc = alloc;
        }
        memmove(&l->v[i + 1], &l->v[i], (l->n - i) * sizeof(l->v[0]));
        l->n++;
        snprintf(l->v[i].key, sizeof(l->v[i].key), "%s", key);
    }
    snprintf(l->v[i].value, sizeof(l->v[i].value), "%s", value);
    return 0;
}

bool labeler_key_in_schemas(const char *key, unsigned schemas)
{
    size_t i;

    if (!key)
        return false;
    if (schemas & LABELER_SCHEMA_ACK)
        for (i = 0; i < sizeof(ack_keys) / sizeof(ack_keys[0]); i++)
            if (!strcmp(key, ack_keys[i]))
                return true;
    if (schemas & LABELER_SCHEMA_GFD) {
        for (i = 0; i < sizeof(gfd_keys) / sizeof(gfd_keys[0]); i++)
            if (!strcmp(key, gfd_keys[i]))
                return true;
        if (mig_profile_key(key))
            return true;
    }
    return false;
}

int labeler_schemas_parse(const char *s, unsigned *out, struct err *err)
{
    unsigned bits = 0;
    const char *p = s ? s : "";

    for (;;) {
        size_t n = strcspn(p, ",");

        if (n == 3 && !strncmp(p, "ack", 3))
            bits |= LABELER_SCHEMA_ACK;
        else if (n == 3 && !strncmp(p, "gfd", 3))
            bits |= LABELER_SCHEMA_GFD;
        else
            return err_set(err, -EINVAL, "unknown schema '%.*s' (want ack, gfd or ack,gfd)", (int)n,
                           p);
        if (!p[n])
            break;
        p += n + 1;
    }
    *out = bits;
    return 0;
}

/* Sets key to the sanitised form of text; "unknown" when nothing usable is left, so a GPU
 * node never loses a label that DoesNotExist selectors rely on. */
static int set_sanitized(struct labeler_labels *l, const char *key, const char *text,
                         struct err *err)
{
    char v[LABELER_VALUE_MAX + 1];

    labeler_value_sanitize(text, v, sizeof(v));
    return labeler_labels_set(l, key, v[0] ? v : "unknown", err);
}

static int set_ull(struct labeler_labels *l, const char *key, unsigned long long n,
                   const char *suffix, struct err *err)
{
    char v[LABELER_VALUE_MAX + 1];

    snprintf(v, sizeof(v), "%llu%s", n, suffix);
    return labeler_labels_set(l, key, v, err);
}

static int schema_ack(const struct gpu_inventory *inv, struct labeler_labels *l, struct err *err)
{
    const struct gpu_device *d0 = gpu_first_usable(inv);
    int rc;

    rc = set_ull(l, LABELER_ACK_COUNT, inv->ndevices - inv->nlost, "", err);
    if (!rc)
        rc = set_sanitized(l, LABELER_ACK_NAME, d0->name, err);
    if (!rc && d0->memory_known)
        rc = set_ull(l, LABELER_ACK_MEM, d0->memory_total / 1048576u, "MiB", err);
    return rc;
}

/* GFD's getArchFamily: compute capability major (minor) to architecture family. */
static const char *gfd_family(int major, int minor)
{
    switch (major) {
    case 1:
        return "tesla";
    case 2:
        return "fermi";
    case 3:
        return "kepler";
    case 5:
        return "maxwell";
    case 6:
        return "pascal";
    case 7:
        return minor < 5 ? "volta" : "turing";
    case 8:
        return minor < 9 ? "ampere" : "ada-lovelace";
    case 9:
        return "hopper";
    case 10:
    case 12:
        return "blackwell";
    case 13:
        return "rubin";
    default:
        return "undefined";
    }
}

/* GFD splits the driver version on '.' and wants 2 or 3 parts; rev is "" with 2 parts.
 * Any other shape leaves the driver labels out instead of failing the whole set. */
static int gfd_driver(const char *version, struct labeler_labels *l, struct err *err)
{
    char parts[3][LABELER_VALUE_MAX + 1];
    char copy[80];
    char *save = NULL, *tok;
    int n = 0, rc = 0;

    snprintf(copy, sizeof(copy), "%s", version);
    if (!copy[0] || copy[0] == '.' || copy[strlen(copy) - 1] == '.' || strstr(copy, ".."))
        return 0;
    for (tok = strtok_r(copy, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
        if (n == 3)
            return 0;
        labeler_value_sanitize(tok, parts[n], sizeof(parts[n]));
        if (strcmp(parts[n], tok))
            return 0; /* a part that is not a clean label value: leave the labels out */
        n++;
    }
    if (n < 2)
        return 0;
    if (n == 2)
        parts[2][0] = '\0';
    rc = labeler_labels_set(l, GFD_PREFIX "cuda.driver.major", parts[0], err);
    if (!rc)
        rc = labeler_labels_set(l, GFD_PREFIX "cuda.driver.minor", parts[1], err);
    if (!rc)
        rc = labeler_labels_set(l, GFD_PREFIX "cuda.driver.rev", parts[2], err);
    if (!rc)
        rc = labeler_labels_set(l, GFD_PREFIX "cuda.driver-version.major", parts[0], err);
    if (!rc)
        rc = labeler_labels_set(l, GFD_PREFIX "cuda.driver-version.minor", parts[1], err);
    if (!rc)
        rc = labeler_labels_set(l, GFD_PREFIX "cuda.driver-version.revision", parts[2], err);
    if (!rc)
        rc = set_sanitized(l, GFD_PREFIX "cuda.driver-version.full", version, err);
    return rc;
}

static int gfd_runtime(int v, struct labeler_labels *l, struct err *err)
{
    char full[LABELER_VALUE_MAX + 1];
    int rc;

    if (v <= 0)
        return 0;
    snprintf(full, sizeof(full), "%d.%d", v / 1000, v % 1000 / 10);
    rc = set_ull(l, GFD_PREFIX "cuda.runtime.major", (unsigned long long)(v / 1000), "", err);
    if (!rc)
        rc = set_ull(l, GFD_PREFIX "cuda.runtime.minor", (unsigned long long)(v % 1000 / 10), "",
                     err);
    if (!rc)
        rc = set_ull(l, GFD_PREFIX "cuda.runtime-version.major", (unsigned long long)(v / 1000), "",
                     err);
    if (!rc)
        rc = set_ull(l, GFD_PREFIX "cuda.runtime-version.minor",
                     (unsigned long long)(v % 1000 / 10), "", err);
    if (!rc)
        rc = labeler_labels_set(l, GFD_PREFIX "cuda.runtime-version.full", full, err);
    return rc;
}

static int gfd_machine(const char *path, struct labeler_labels *l, struct err *err)
{
    struct buf b = BUF_INIT(MACHINE_TYPE_MAX);
    int rc;

    if (buf_read_file(path ? path : LABELER_MACHINE_TYPE_FILE, &b))
        rc = labeler_labels_set(l, GFD_PREFIX "gpu.machine", "unknown", err);
    else
        rc = set_sanitized(l, GFD_PREFIX "gpu.machine", b.data ? b.data : "", err);
    buf_release(&b);
    return rc;
}

static int schema_gfd(const struct gpu_inventory *inv, const char *machine_type_file,
                      struct labeler_labels *l, struct err *err)
{
    const struct gpu_device *d0 = gpu_first_usable(inv);
    size_t same_model = 0, i;
    bool mig_capable = false;
    int rc;

    for (i = 0; i < inv->ndevices; i++) {
        if (inv->devices[i].lost)
            continue;
        if (!strcmp(inv->devices[i].name, d0->name))
            same_model++;
        mig_capable |= inv->devices[i].mig_capable;
    }
    rc = set_ull(l, GFD_PREFIX "gpu.count", same_model, "", err);
    if (!rc)
        rc = set_sanitized(l, GFD_PREFIX "gpu.product", d0->name, err);
    if (!rc && d0->memory_known)
        rc = set_ull(l, GFD_PREFIX "gpu.memory", d0->memory_total / 1048576u, "", err);
    if (!rc && d0->cc_known) {
        rc = labeler_labels_set(l, GFD_PREFIX "gpu.family", gfd_family(d0->cc_major, d0->cc_minor),
                                err);
        if (!rc)
            rc = set_ull(l, GFD_PREFIX "gpu.compute.major", (unsigned long long)d0->cc_major, "",
                         err);
        if (!rc)
            rc = set_ull(l, GFD_PREFIX "gpu.compute.minor", (unsigned long long)d0->cc_minor, "",
                         err);
    }
    /* GFD with its default config: no time-slicing, so one replica and strategy "none" */
    if (!rc)
        rc = labeler_labels_set(l, GFD_PREFIX "gpu.replicas", "1", err);
    if (!rc)
        rc = labeler_labels_set(l, GFD_PREFIX "gpu.sharing-strategy", "none", err);
    if (!rc)
        rc = labeler_labels_set(l, GFD_PREFIX "mig.capable", mig_capable ? "true" : "false", err);
    if (!rc)
        rc = labeler_labels_set(l, GFD_PREFIX "mps.capable", "false", err);
    if (!rc)
        rc = gfd_driver(inv->driver_version, l, err);
    if (!rc)
        rc = gfd_runtime(inv->cuda_driver_version, l, err);
    if (!rc)
        rc = gfd_machine(machine_type_file, l, err);
    return rc;
}

int labeler_labels_from_inventory(const struct gpu_inventory *inv, unsigned schemas,
                                  const char *machine_type_file, struct labeler_labels *out,
                                  struct err *err)
{
    int rc = 0;

    out->n = 0;
    out->nvml_simulated = inv->simulated;
    if (!gpu_first_usable(inv))
        return 0;
    if (schemas & LABELER_SCHEMA_ACK)
        rc = schema_ack(inv, out, err);
    if (!rc && (schemas & LABELER_SCHEMA_GFD))
        rc = schema_gfd(inv, machine_type_file, out, err);
    if (rc)
        out->n = 0;
    return rc;
}

/* Sets PREFIX{count,memory,...} for MIG devices of one profile (prefix "nvidia.com/gpu." or
 * "nvidia.com/mig-<profile>."). */
static int mig_set(struct labeler_labels *l, const char *prefix, const char *product,
                   const struct gpu_mig *m, size_t count, struct err *err)
{
    const struct {
        const char *attr;
        unsigned long long v;
    } nums[] = {
        {"count", count},
        {"memory", m->memory_mb},
        {"multiprocessors", m->multiprocessors},
        {"replicas", 1},
        {"slices.gi", m->slices_gi},
        {"slices.ci", m->slices_ci},
        {"engines.copy", m->copy},
        {"engines.decoder", m->decoder},
        {"engines.encoder", m->encoder},
        {"engines.jpeg", m->jpeg},
        {"engines.ofa", m->ofa},
    };
    char key[128], v[LABELER_VALUE_MAX + 1];
    size_t i;
    int rc = 0;

    for (i = 0; i < sizeof(nums) / sizeof(nums[0]) && !rc; i++) {
        snprintf(key, sizeof(key), "%s%s", prefix, nums[i].attr);
        rc = set_ull(l, key, nums[i].v, "", err);
    }
    snprintf(key, sizeof(key), "%ssharing-strategy", prefix);
    if (!rc)
        rc = labeler_labels_set(l, key, "none", err);
    snprintf(key, sizeof(key), "%sproduct", prefix);
    snprintf(v, sizeof(v), "%.*s-MIG-%s", LABELER_VALUE_MAX - 5 - (int)strlen(m->profile), product,
             m->profile);
    if (!rc)
        rc = set_sanitized(l, key, v, err);
    return rc;
}

int labeler_labels_mig(struct labeler_labels *l, const struct gpu_inventory *inv, int strategy,
                       struct err *err)
{
    const char *product = labeler_labels_get(l, GFD_PREFIX "gpu.product");
    char prod[LABELER_VALUE_MAX + 1];
    const struct gpu_mig *first = NULL;
    size_t i, j, nmig = 0, enabled = 0, usable = inv->ndevices;
    bool same = true;
    int rc;

    if (strategy == LABELER_MIG_NONE || !product || !inv->ndevices)
        return 0;
    snprintf(prod, sizeof(prod), "%s", product);
    rc = labeler_labels_set(l, GFD_PREFIX "mig.strategy",
                            strategy == LABELER_MIG_SINGLE ? "single" : "mixed", err);
    for (i = 0; i < inv->ndevices && !rc; i++) {
        const struct gpu_device *d = &inv->devices[i];

        if (d->lost) {
            usable--;
            continue;
        }
        if (!d->mig_enabled)
            continue;
        enabled++;
        if (!d->nmig)
            same = false;
        for (j = 0; j < d->nmig; j++) {
            if (!first)
                first = &d->migs[j];
            else if (strcmp(first->profile, d->migs[j].profile))
                same = false;
            nmig++;
        }
    }
    if (rc || !enabled)
        return rc;
    if (strategy == LABELER_MIG_SINGLE) {
        /* single wants every GPU split alike: anything else is GFD's INVALID */
        if (same && first && enabled == usable)
            return mig_set(l, GFD_PREFIX "gpu.", prod, first, nmig, err);
        snprintf(
            prod + (strlen(prod) > LABELER_VALUE_MAX - 12 ? LABELER_VALUE_MAX - 12 : strlen(prod)),
            13, "-MIG-INVALID");
        rc = labeler_labels_set(l, GFD_PREFIX "gpu.product", prod, err);
        if (!rc)
            rc = labeler_labels_set(l, GFD_PREFIX "gpu.count", "0", err);
        if (!rc)
            rc = labeler_labels_set(l, GFD_PREFIX "gpu.replicas", "0", err);
        if (!rc)
            rc = labeler_labels_set(l, GFD_PREFIX "gpu.memory", "0", err);
        return rc;
    }
    /* mixed: one set per profile */
    for (i = 0; i < inv->ndevices && !rc; i++) {
        const struct gpu_device *d = &inv->devices[i];

        for (j = 0; j < d->nmig && !rc; j++) {
            const struct gpu_mig *m = &d->migs[j];
            char prefix[96];
            size_t k, l2, count = 0;

            snprintf(prefix, sizeof(prefix), GFD_PREFIX "mig-%s.", m->profile);
            for (k = 0; k < inv->ndevices; k++)
                for (l2 = 0; l2 < inv->devices[k].nmig; l2++)
                    count += !strcmp(inv->devices[k].migs[l2].profile, m->profile);
            rc = mig_set(l, prefix, prod, m, count, err);
        }
    }
    return rc;
}

/* gpu.present and gpu.mode (the PCI class of GPU 0) from sysfs; a sysfs that cannot be read
 * leaves the mode unknown. */
static int gfd_pci(const struct labeler_config *cfg, const struct gpu_inventory *inv,
                   struct labeler_labels *out, struct err *err)
{
    struct gpu_pci_list *pci = malloc(sizeof(*pci));
    const struct gpu_pci_device *d = NULL;
    int rc;

    if (!pci)
        return err_set(err, -ENOMEM, "out of memory");
    if (!gpu_pci_scan(cfg->dp.sysfs_root, pci, NULL))
        d = gpu_pci_find(pci, gpu_first_usable(inv)->pci_bus_id);
    rc = labeler_labels_set(out, GFD_PREFIX "gpu.present", "true", err);
    if (!rc)
        rc =
            labeler_labels_set(out, GFD_PREFIX "gpu.mode", gpu_pci_mode(d ? d->pci_class : 0), err);
    free(pci);
    return rc;
}

/* NVML failed: nvidia.com/gpu.present=true alone when sysfs shows an NVIDIA GPU. */
static void gfd_present_only(const struct labeler_config *cfg, struct labeler_labels *out)
{
    struct gpu_pci_list *pci = malloc(sizeof(*pci));

    if (pci && !gpu_pci_scan(cfg->dp.sysfs_root, pci, NULL) && pci->n &&
        !labeler_labels_set(out, GFD_PREFIX "gpu.present", "true", NULL))
        out->partial = true;
    free(pci);
}

int labeler_detect(const struct labeler_config *cfg, struct labeler_labels *out, struct err *err)
{
    struct gpu_inventory inv;
    int rc = labeler_detect_inventory(cfg, out, &inv, err);

    gpu_inventory_release(&inv);
    return rc;
}

int labeler_detect_inventory(const struct labeler_config *cfg, struct labeler_labels *out,
                             struct gpu_inventory *invp, struct err *err)
{
    unsigned schemas = cfg->schemas ? cfg->schemas : LABELER_SCHEMA_ACK;
    struct gpu_inventory inv;
    int rc;

    out->n = 0;
    out->partial = false;
    rc = gpu_detect(cfg->nvml_lib, &inv, err);
    out->nvml_simulated = inv.simulated;
    out->ngpus = rc ? 0 : inv.ndevices - inv.nlost;
    if (!rc)
        rc = labeler_labels_from_inventory(&inv, cfg->schemas ? cfg->schemas : LABELER_SCHEMA_ACK,
                                           cfg->machine_type_file, out, err);
    if (!rc && out->n)
        rc = labeler_labels_sharing(out, cfg->device_plugin ? cfg->dp.replicas : 1,
                                    cfg->dp.resource_name, err);
    if (!rc && out->n && (schemas & LABELER_SCHEMA_GFD))
        rc = gfd_pci(cfg, &inv, out, err);
    if (!rc && out->n && (schemas & LABELER_SCHEMA_GFD))
        rc = labeler_labels_mig(out, &inv, cfg->mig_strategy, err);
    if (rc && (schemas & LABELER_SCHEMA_GFD) && (err ? err->code : rc) != -EINVAL &&
        (err ? err->code : rc) != -ENOMEM) {
        out->n = 0;
        gfd_present_only(cfg, out);
    }
    *invp = inv;
    return rc;
}

int labeler_labels_sharing(struct labeler_labels *l, unsigned replicas, const char *resource,
                           struct err *err)
{
    const char *product = labeler_labels_get(l, GFD_PREFIX "gpu.product");
    char v[LABELER_VALUE_MAX + 1];
    int rc;

    if (replicas <= 1 || !product)
        return 0;
    rc = set_ull(l, GFD_PREFIX "gpu.replicas", replicas, "", err);
    if (!rc)
        rc = labeler_labels_set(l, GFD_PREFIX "gpu.sharing-strategy", "time-slicing", err);
    if (rc || (resource && *resource && strcmp(resource, "nvidia.com/gpu")))
        return rc;
    /* the suffix must fit: cut the product (and any '-', '_' or '.' it then ends in) */
    snprintf(v, sizeof(v), "%.*s", LABELER_VALUE_MAX - 7, product);
    while (*v && strchr("-_.", v[strlen(v) - 1]))
        v[strlen(v) - 1] = '\0';
    snprintf(v + strlen(v), sizeof(v) - strlen(v), "-SHARED");
    return labeler_labels_set(l, GFD_PREFIX "gpu.product", v, err);
}

int labeler_labels_format(const struct labeler_labels *l, struct buf *b)
{
    size_t i;
    int rc = 0;

    for (i = 0; i < l->n && !rc; i++)
        rc = buf_printf(b, "%s=%s\n", l->v[i].key, l->v[i].value);
    return rc;
}

/* write_output writes one output file through base/outfile: a regular file (or a missing
 * one) is written beside and renamed into place, so a reader (nfd-worker, which skips
 * dot-files) sees the old file or the new one, never a partial one; a FIFO or a character
 * device is written in place; anything else is refused. */
static int write_output(const char *path, const char *data, size_t len, struct err *err)
{
    struct outfile o;
    int rc;

    if ((rc = outfile_open(&o, path, err)))
        return rc;
    if (len && fwrite(data, 1, len, o.f) != len) {
        rc = err_set(err, -EIO, "cannot write '%s': %s", path, strerror(errno));
        outfile_abort(&o);
        return rc;
    }
    return outfile_commit(&o, err);
}

int labeler_write_outputs(const struct labeler_config *cfg, const struct labeler_labels *l,
                          struct err *err)
{
    struct buf b = BUF_INIT(FEATURE_FILE_MAX);
    int rc;

    rc = labeler_labels_format(l, &b);
    if (rc) {
        rc = err_set(err, rc, "labels do not fit in %d bytes", FEATURE_FILE_MAX);
        goto out;
    }
    if (cfg->output && !strcmp(cfg->output, "-")) {
        if (b.len && (fwrite(b.data, 1, b.len, stdout) != b.len || fflush(stdout))) {
            rc = err_set(err, -EIO, "cannot write labels to standard output: %s", strerror(errno));
            goto out;
        }
    } else if (cfg->output) {
        rc = write_output(cfg->output, b.data ? b.data : "", b.len, err);
        if (rc)
            goto out;
    }
    if (cfg->feature_file)
        rc = write_output(cfg->feature_file, b.data ? b.data : "", b.len, err);
out:
    buf_release(&b);
    return rc;
}
