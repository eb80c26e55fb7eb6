/* devices.c - the node's GPUs as DRA devices (devices.h): names, attributes, capacities,
 * counters and taints as NVIDIA's DRA driver publishes them. */
#include "draplugin/devices.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "kube/quantity.h"

#define ATTR_STRING_MAX 64 /* resource.k8s.io/v1: a string attribute's longest value */

/* NVML's "00000000:00:08.0" as sysfs and the standard attribute write it: "0000:00:08.0". */
static void bdf_of(const char *bus_id, char *out, size_t size)
{
    unsigned dom, bus, dev, fn;

    out[0] = '\0';
    if (sscanf(bus_id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4)
        snprintf(out, size, "%04x:%02x:%02x.%x", dom & 0xffff, bus & 0xff, dev & 0x1f, fn & 7);
}

/* The PCIe root complex of a device, as k8s.io/dynamic-resource-allocation's deviceattribute
 * finds it: sysfs's bus/pci/devices/<bdf> links to devices/<root>/.../<bdf>. */
static void pcie_root_of(const char *sysfs, const char *bdf, char *out, size_t size)
{
    char path[4200], target[4096];
    const char *p, *end, *last;
    ssize_t n;

    out[0] = '\0';
    snprintf(path, sizeof(path), "%s/bus/pci/devices/%s", sysfs, bdf);
    n = readlink(path, target, sizeof(target) - 1);
    if (n <= 0)
        return;
    target[n] = '\0';
    last = strrchr(target, '/');
    p = strstr(target, "devices/pci");
    if (!p || !last || strcmp(last + 1, bdf))
        return;
    p += strlen("devices/");
    end = strchr(p, '/');
    if (end && (size_t)(end - p) < size)
        snprintf(out, size, "%.*s", (int)(end - p), p);
}

static int numa_of(const char *sysfs, const char *bdf)
{
    char path[4200];
    struct buf b = BUF_INIT(64);
    long v = -1;
    char *end;

    snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/numa_node", sysfs, bdf);
    if (!buf_read_file(path, &b) && b.data) {
        v = strtol(b.data, &end, 10);
        if (end == b.data || v < 0 || v > INT_MAX)
            v = -1;
    }
    buf_release(&b);
    return (int)v;
}

/* "1g.5gb" -> "1g5gb": the profile as NVIDIA puts it in a device name (a DNS label: lower
 * case, no dots, other characters '-'). */
static void profile_label(const char *profile, char *out, size_t size)
{
    size_t n = 0;

    for (; *profile && n + 1 < size; profile++) {
        unsigned char c = (unsigned char)*profile;

        if (c == '.')
            continue;
        out[n++] = isalnum(c) ? (char)tolower(c) : '-';
    }
    out[n] = '\0';
}

static int add_device(struct dra_devices *d, size_t *alloc, const struct dra_device *dev)
{
    if (d->n == *alloc) {
        size_t na = *alloc ? *alloc * 2 : 16;
        struct dra_device *v = realloc(d->v, na * sizeof(*v));

        if (!v)
            return -ENOMEM;
        d->v = v;
        *alloc = na;
    }
    d->v[d->n++] = *dev;
    return 0;
}

int dra_devices_update(struct dra_devices *d, const struct gpu_inventory *inv, const char *sysfs,
                       struct err *err)
{
    struct dra_gpu *gpus = inv->ndevices ? calloc(inv->ndevices, sizeof(*gpus)) : NULL;
    size_t i, j, alloc = 0;

    if (inv->ndevices && !gpus)
        return err_set(err, -ENOMEM, "out of memory");
    if (!sysfs || !*sysfs)
        sysfs = "/sys";
    for (i = 0; i < inv->ndevices; i++) {
        const struct gpu_device *g = &inv->devices[i];
        struct dra_gpu *t = &gpus[i];

        if (g->lost) {
            /* what was known of it, when it is the same GPU slot as before */
            if (i < d->ngpus && d->gpus[i].dev.uuid[0])
                *t = d->gpus[i];
            t->lost = true;
            continue;
        }
        t->dev = *g;
        t->minor = g->minor >= 0 ? g->minor : (int)i;
        bdf_of(g->pci_bus_id, t->pci_bus_id, sizeof(t->pci_bus_id));
        t->numa_node = -1;
        if (t->pci_bus_id[0]) {
            pcie_root_of(sysfs, t->pci_bus_id, t->pcie_root, sizeof(t->pcie_root));
            t->numa_node = numa_of(sysfs, t->pci_bus_id);
        }
    }
    dra_devices_release(d);
    d->gpus = gpus;
    d->ngpus = inv->ndevices;
    snprintf(d->driver_version, sizeof(d->driver_version), "%s", inv->driver_version);
    d->cuda_driver_version = inv->cuda_driver_version;
    for (i = 0; i < d->ngpus; i++) {
        const struct dra_gpu *t = &d->gpus[i];
        struct dra_device dev;

        if (!t->dev.uuid[0])
            continue; /* never read: nothing to describe */
        if (!t->dev.mig_enabled) {
            memset(&dev, 0, sizeof(dev));
            snprintf(dev.name, sizeof(dev.name), "gpu-%d", t->minor);
            dev.gpu = i;
            snprintf(dev.uuid, sizeof(dev.uuid), "%s", t->dev.uuid);
            if (add_device(d, &alloc, &dev))
                return err_set(err, -ENOMEM, "out of memory");
            continue;
        }
        for (j = 0; j < t->dev.nmig; j++) {
            const struct gpu_mig *m = &t->dev.migs[j];
            char prof[GPU_MIG_PROFILE_NAME_MAX];

            memset(&dev, 0, sizeof(dev));
            profile_label(m->profile, prof, sizeof(prof));
            if (m->gi_known)
                snprintf(dev.name, sizeof(dev.name), "gpu-%d-mig-%.24s-%u-%u", t->minor, prof,
                         m->gi_profile_id, m->placement_start);
            else /* a driver without the GPU instance API: the MIG device's index instead */
                snprintf(dev.name, sizeof(dev.name), "gpu-%d-mig-%.24s-x-%zu", t->minor, prof, j);
            dev.mig = true;
            dev.gpu = i;
            dev.mig_k = j;
            snprintf(dev.uuid, sizeof(dev.uuid), "%s", m->uuid);
            if (add_device(d, &alloc, &dev))
                return err_set(err, -ENOMEM, "out of memory");
        }
    }
    return 0;
}

const struct dra_device *dra_devices_find(const struct dra_devices *d, const char *name)
{
    size_t k;

    for (k = 0; d && k < d->n; k++)
        if (!strcmp(d->v[k].name, name))
            return &d->v[k];
    return NULL;
}

void dra_devices_release(struct dra_devices *d)
{
    if (!d)
        return;
    free(d->gpus);
    free(d->v);
    memset(d, 0, sizeof(*d));
}

bool dra_version_normalize(const char *in, char *out, size_t size)
{
    unsigned long parts[3] = {0, 0, 0};
    size_t n = 0;
    const char *p = in;

    if (!in || !*in)
        return false;
    for (;;) {
        char *end;

        if (n == 3 || !isdigit((unsigned char)*p))
            return false;
        parts[n++] = strtoul(p, &end, 10);
        if (parts[n - 1] > 999999999UL)
            return false;
        p = end;
        if (!*p)
            break;
        if (*p != '.')
            return false;
        p++;
    }
    snprintf(out, size, "%lu.%lu.%lu", parts[0], parts[1], parts[2]);
    return true;
}

/* ---- JSON ------------------------------------------------------------------------------- */

static int set_string(json_t *attrs, const char *key, const char *v)
{
    char cut[ATTR_STRING_MAX + 1];

    snprintf(cut, sizeof(cut), "%.*s", ATTR_STRING_MAX, v);
    return json_object_set_new(attrs, key, json_pack("{s:s}", "string", cut));
}

static int set_version(json_t *attrs, const char *key, const char *raw)
{
    char v[64];

    if (!dra_version_normalize(raw, v, sizeof(v)))
        return 0; /* not a version: the attribute is left out */
    return json_object_set_new(attrs, key, json_pack("{s:s}", "version", v));
}

static int set_quantity(json_t *obj, const char *key, unsigned long long v)
{
    char q[64];

    kube_quantity_format_bytes((int64_t)v, q, sizeof(q));
    return json_object_set_new(obj, key, json_pack("{s:s}", "value", q));
}

/* The attributes every device of GPU g has, its own or its MIG devices'. */
static int common_attrs(const struct dra_devices *d, const struct dra_gpu *g, json_t *a)
{
    char v[64];
    int rc = 0;

    rc |= set_string(a, "productName", g->dev.name);
    if (g->dev.brand >= 0)
        rc |= set_string(a, "brand", gpu_brand_name(g->dev.brand));
    if (g->dev.arch >= 0)
        rc |= set_string(a, "architecture", gpu_arch_name(g->dev.arch));
    if (g->dev.cc_known) {
        snprintf(v, sizeof(v), "%d.%d", g->dev.cc_major, g->dev.cc_minor);
        rc |= set_version(a, "cudaComputeCapability", v);
    }
    rc |= set_version(a, "driverVersion", d->driver_version);
    if (d->cuda_driver_version > 0) {
        snprintf(v, sizeof(v), "%d.%d", d->cuda_driver_version / 1000,
                 d->cuda_driver_version % 1000 / 10);
        rc |= set_version(a, "cudaDriverVersion", v);
    }
    if (g->pci_bus_id[0])
        rc |= set_string(a, "resource.kubernetes.io/pciBusID", g->pci_bus_id);
    if (g->pcie_root[0])
        rc |= set_string(a, "resource.kubernetes.io/pcieRoot", g->pcie_root);
    if (g->numa_node >= 0)
        rc |= json_object_set_new(a, "resource.kubernetes.io/numaNode",
                                  json_pack("{s:I}", "int", (json_int_t)g->numa_node));
    return rc;
}

/* A MIG device's capacities, as counters too: names in camelCase for capacities, in DNS form
 * for counters, as NVIDIA's driver turns one into the other. */
static const struct mig_dim {
    const char *cap, *counter;
} mig_dims[] = {
    {"multiprocessors", "multiprocessors"},
    {"copyEngines", "copy-engines"},
    {"decoders", "decoders"},
    {"encoders", "encoders"},
    {"jpegEngines", "jpeg-engines"},
    {"ofaEngines", "ofa-engines"},
    {"memory", "memory"},
};

static unsigned long long mig_value(const struct gpu_mig *m, size_t dim)
{
    switch (dim) {
    case 0:
        return m->multiprocessors;
    case 1:
        return m->copy;
    case 2:
        return m->decoder;
    case 3:
        return m->encoder;
    case 4:
        return m->jpeg;
    case 5:
        return m->ofa;
    default:
        return m->memory_mb * 1048576ull;
    }
}

/* The memory slices a MIG device holds (its GPU instance's placement; without the GPU
 * instance API, none). */
static void mig_slices(const struct gpu_mig *m, unsigned *start, unsigned *size)
{
    *start = m->gi_known ? m->placement_start : 0;
    *size = m->gi_known ? m->placement_size : 0;
}

static void counter_set_name(const struct dra_gpu *g, char *out, size_t size)
{
    snprintf(out, size, "gpu-%d-counter-set", g->minor);
}

static json_t *taint_json(const char *driver, const struct dra_health *h)
{
    char key[300], value[32], when[32];
    time_t t = (time_t)h->since_wall;
    struct tm tm;
    json_t *o;

    gmtime_r(&t, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (h->kind == GPU_HEALTH_LOST) {
        snprintf(key, sizeof(key), "%s/gpu-lost", driver);
        return json_pack("{s:s,s:s,s:s}", "key", key, "effect", "NoSchedule", "timeAdded", when);
    }
    snprintf(key, sizeof(key), "%s/xid", driver);
    snprintf(value, sizeof(value), "%llu", h->kind == GPU_HEALTH_ECC ? 48ull : h->xid);
    o = json_pack("{s:s,s:s,s:s,s:s}", "key", key, "value", value, "effect", "NoSchedule",
                  "timeAdded", when);
    return o;
}

json_t *dra_device_json(const struct dra_devices *d, size_t k, const char *driver,
                        const struct dra_health *health)
{
    const struct dra_device *dev = &d->v[k];
    const struct dra_gpu *g = &d->gpus[dev->gpu];
    json_t *o = json_object(), *a = json_object(), *cap = json_object();
    int rc = !o || !a || !cap;

    if (!rc) {
        rc |= set_string(a, "type", dev->mig ? "mig" : "gpu");
        rc |= set_string(a, "uuid", dev->uuid);
        rc |= common_attrs(d, g, a);
    }
    if (!rc && !dev->mig && g->dev.memory_known)
        rc |= set_quantity(cap, "memory", g->dev.memory_total);
    if (!rc && dev->mig) {
        const struct gpu_mig *m = &g->dev.migs[dev->mig_k];
        json_t *counters = json_object();
        char set[64], slice[32];
        unsigned start, size, s;
        size_t i;

        rc |= set_string(a, "parentUUID", g->dev.uuid);
        rc |= set_string(a, "profile", m->profile);
        rc |= !counters;
        for (i = 0; !rc && i < sizeof(mig_dims) / sizeof(mig_dims[0]); i++) {
            rc |= set_quantity(cap, mig_dims[i].cap, mig_value(m, i));
            rc |= set_quantity(counters, mig_dims[i].counter, mig_value(m, i));
        }
        mig_slices(m, &start, &size);
        for (s = start; !rc && s < start + size; s++) {
            snprintf(slice, sizeof(slice), "memory-slice-%u", s);
            rc |= set_quantity(counters, slice, 1);
        }
        counter_set_name(g, set, sizeof(set));
        if (!rc)
            rc |= json_object_set_new(
                o, "consumesCounters",
                json_pack("[{s:s,s:O}]", "counterSet", set, "counters", counters));
        json_decref(counters);
    }
    if (!rc) {
        rc |= json_object_set_new(o, "name", json_string(dev->name));
        rc |= json_object_set(o, "attributes", a);
        if (json_object_size(cap))
            rc |= json_object_set(o, "capacity", cap);
    }
    if (!rc && health && !health->healthy) {
        json_t *t = taint_json(driver, health);

        rc |= !t || json_object_set_new(o, "taints", json_pack("[o]", t));
    }
    json_decref(a);
    json_decref(cap);
    if (rc) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *dra_counter_sets_json(const struct dra_devices *d)
{
    json_t *sets = json_array();
    size_t i, j, k;

    if (!sets)
        return NULL;
    for (i = 0; i < d->ngpus; i++) {
        const struct dra_gpu *g = &d->gpus[i];
        unsigned long long sum[sizeof(mig_dims) / sizeof(mig_dims[0])];
        json_t *counters;
        char name[64], slice[32];
        int rc = 0;

        if (!g->dev.uuid[0] || !g->dev.mig_enabled || !g->dev.nmig)
            continue;
        memset(sum, 0, sizeof(sum));
        counters = json_object();
        for (j = 0; j < g->dev.nmig; j++)
            for (k = 0; k < sizeof(mig_dims) / sizeof(mig_dims[0]); k++)
                sum[k] += mig_value(&g->dev.migs[j], k);
        for (k = 0; counters && !rc && k < sizeof(mig_dims) / sizeof(mig_dims[0]); k++)
            rc |= set_quantity(counters, mig_dims[k].counter, sum[k]);
        for (j = 0; counters && !rc && j < g->dev.nmig; j++) {
            unsigned start, size, s;

            mig_slices(&g->dev.migs[j], &start, &size);
            for (s = start; !rc && s < start + size; s++) {
                snprintf(slice, sizeof(slice), "memory-slice-%u", s);
                rc |= set_quantity(counters, slice, 1);
            }
        }
        counter_set_name(g, name, sizeof(name));
        if (!counters || rc) {
            json_decref(counters);
            json_decref(sets);
            return NULL;
        }
        if (json_array_append_new(sets,
                                  json_pack("{s:s,s:o}", "name", name, "counters", counters))) {
            json_decref(sets);
            return NULL;
        }
    }
    return sets;
}

void dra_cdi_name(const char *driver, const char *uid, const char *device, char *out, size_t size)
{
    snprintf(out, size, "k8s.%s/claim=%s-%s", driver, uid, device);
}
