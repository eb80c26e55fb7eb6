/* plugin.c - the device plugin: NVML inventory, the gRPC handlers, registration, the socket
 * watch and the health thread.
 *
 * One mutex guards the inventory's health and the counters; the serve thread reads them to
 * answer the kubelet, the health thread writes them. The generation counts health changes:
 * every ListAndWatch stream gets the full list again whenever it moves. */
#include "deviceplugin/plugin.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "deviceplugin/api.pb-c.h"
#include "deviceplugin/devices.h"
#include "deviceplugin/rpc.h"
#include "gpu/gpu.h"
#include "gpu/nvml.h"

#define API_VERSION "v1beta1"
#define M_OPTIONS "/v1beta1.DevicePlugin/GetDevicePluginOptions"
#define M_LIST "/v1beta1.DevicePlugin/ListAndWatch"
#define M_PREFERRED "/v1beta1.DevicePlugin/GetPreferredAllocation"
#define M_ALLOCATE "/v1beta1.DevicePlugin/Allocate"
#define M_PRESTART "/v1beta1.DevicePlugin/PreStartContainer"
#define M_REGISTER "/v1beta1.Registration/Register"
#define REGISTER_TIMEOUT_MS 10000
#define RETRY_MS 5000      /* a failed start or registration is tried again after this */
#define POLL_MS 50         /* the serve loop's tick: stream updates go out within it */
#define HEALTH_WAIT_MS 500 /* nvmlEventSetWait_v2 timeout; the lost-GPU probe runs as often */

struct dp_plugin {
    struct dp_config cfg;
    char dir[4096];
    char sock_name[256];  /* gpulabel-<name>.sock */
    char sock_path[4400]; /* dir/sock_name */
    char kubelet_path[4400];
    char resource[256];

    struct gpu_nvml nvml;
    bool nvml_inited;
    nvmlDevice_t handles[DP_MAX_GPUS]; /* per advertised GPU or MIG device */
    nvmlDevice_t parents[DP_MAX_GPUS]; /* its GPU (itself for a full GPU): events come from it */
    nvmlEventSet_t events;

    pthread_mutex_t mu; /* guards inv (health), gen, st */
    struct dp_inventory inv;
    uint64_t gen;
    struct dp_status st;
    unsigned cdi_seq;

    volatile int stop; /* read by both threads; written once by dp_plugin_stop */
    pthread_t serve_thread, health_thread;
    bool serve_started, health_started;

    /* the registration runs in its own short thread, since the kubelet calls back into our
     * server before it answers */
    pthread_t reg_thread;
    bool reg_running;
    volatile int reg_done;
    int reg_rc;
    struct err reg_err;
};

static void plog(struct dp_plugin *p, char sev, int level, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void plog(struct dp_plugin *p, char sev, int level, const char *fmt, ...)
{
    char line[1536];
    va_list ap;

    if (!p->cfg.log)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    p->cfg.log(p->cfg.ctx, sev, level, line);
}

int dp_xids_parse(const char *s, bool *ignored, struct err *err)
{
    const char *q = s ? s : "";

    memset(ignored, 0, DP_XID_MAX * sizeof(*ignored));
    if (!*q || !strcmp(q, "none"))
        return 0;
    for (;;) {
        size_t n = strcspn(q, ",");
        char item[32], *end;
        long v;

        if (n == 0 || n >= sizeof(item))
            return err_set(err, -EINVAL, "invalid XID '%.*s' (want a comma list of numbers)",
                           (int)(n > 20 ? 20 : n), q);
        memcpy(item, q, n);
        item[n] = '\0';
        errno = 0;
        v = strtol(item, &end, 10);
        if (*end || errno || v < 0 || v >= DP_XID_MAX || item[0] == '+' || item[0] == '-')
            return err_set(err, -EINVAL, "invalid XID '%s' (want a number from 0 to %d)", item,
                           DP_XID_MAX - 1);
        ignored[v] = true;
        if (!q[n])
            break;
        q += n + 1;
    }
    return 0;
}

/* ---- the inventory -------------------------------------------------------------------- */

/* NVML's "00000000:00:08.0" as sysfs names it: "0000:00:08.0". */
static int sysfs_bdf(const char *bus_id, char *out, size_t size)
{
    unsigned dom, bus, dev, fn;

    if (sscanf(bus_id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
        return -EINVAL;
    snprintf(out, size, "%04x:%02x:%02x.%x", dom & 0xffff, bus & 0xff, dev & 0x1f, fn & 7);
    return 0;
}

static int numa_node_of(const char *sysfs, const char *bus_id)
{
    char bdf[32], path[4200];
    struct buf b = BUF_INIT(64);
    long v;
    char *end;

    if (sysfs_bdf(bus_id, bdf, sizeof(bdf)))
        return -1;
    snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/numa_node", sysfs, bdf);
    if (buf_read_file(path, &b) || !b.data) {
        buf_release(&b);
        return -1;
    }
    v = strtol(b.data, &end, 10);
    if (end == b.data || v < 0 || v > INT_MAX)
        v = -1;
    buf_release(&b);
    return (int)v;
}

/* The devices this plugin advertises: full GPUs, or MIG devices by the MIG strategy. */
static int inventory_entry(struct dp_plugin *p, nvmlDevice_t h, nvmlDevice_t parent, unsigned index,
                           const char *sysfs, struct err *err)
{
    const struct gpu_nvml *n = &p->nvml;
    struct dp_gpu *g;
    nvmlPciInfo_t pci;
    nvmlReturn_t rc;

    if (p->inv.ngpus >= DP_MAX_GPUS)
        return 0;
    g = &p->inv.gpus[p->inv.ngpus];
    memset(g, 0, sizeof(*g));
    g->index = index;
    g->healthy = true;
    g->numa_node = -1;
    rc = n->device_get_uuid(h, g->uuid, sizeof(g->uuid));
    if (rc)
        return err_set(err, -EIO, "GPU %u: nvmlDeviceGetUUID: %s", index,
                       gpu_nvml_error_string(n, rc));
    g->uuid[sizeof(g->uuid) - 1] = '\0';
    memset(&pci, 0, sizeof(pci));
    if (n->device_get_pci_info && !n->device_get_pci_info(parent, &pci)) {
        pci.busId[sizeof(pci.busId) - 1] = '\0';
        snprintf(g->pci_bus_id, sizeof(g->pci_bus_id), "%s", pci.busId);
        g->numa_node = numa_node_of(sysfs, g->pci_bus_id);
    }
    p->handles[p->inv.ngpus] = h;
    p->parents[p->inv.ngpus] = parent;
    p->inv.ngpus++;
    return 0;
}

static int inventory_read(struct dp_plugin *p, struct err *err)
{
    const struct gpu_nvml *n = &p->nvml;
    struct dp_inventory *inv = &p->inv;
    const char *sysfs = p->cfg.sysfs_root && *p->cfg.sysfs_root ? p->cfg.sysfs_root : "/sys";
    unsigned count = 0, i, j, l;
    size_t a, b;
    nvmlReturn_t rc;

    rc = n->device_get_count(&count);
    if (rc)
        return err_set(err, -EIO, "nvmlDeviceGetCount_v2: %s", gpu_nvml_error_string(n, rc));
    if (!n->device_get_uuid)
        return err_set(err, -EIO, "the NVML library has no nvmlDeviceGetUUID");
    if (count > DP_MAX_GPUS)
        count = DP_MAX_GPUS;
    inv->gpus = calloc(DP_MAX_GPUS, sizeof(*inv->gpus));
    if (!inv->gpus)
        return err_set(err, -ENOMEM, "out of memory");
    inv->replicas = p->cfg.replicas > 1 ? p->cfg.replicas : 1;
    for (i = 0; i < count; i++) {
        nvmlDevice_t h;
        unsigned cur = 0, pend = 0, max = 0;
        bool mig = false;
        int ret;

        rc = n->device_get_handle_by_index(i, &h);
        if (rc)
            return err_set(err, -EIO, "GPU %u: nvmlDeviceGetHandleByIndex_v2: %s", i,
                           gpu_nvml_error_string(n, rc));
        if (p->cfg.mig_strategy && n->device_get_mig_mode &&
            !n->device_get_mig_mode(h, &cur, &pend))
            mig = cur == NVML_DEVICE_MIG_ENABLE;
        if (!mig) {
            /* mixed: full GPUs are nvidia.com/gpu, served by the plugin without a profile */
            if (p->cfg.mig_profile)
                continue;
            ret = inventory_entry(p, h, h, i, sysfs, err);
            if (ret)
                return ret;
            continue;
        }
        if (p->cfg.mig_strategy == DP_MIG_MIXED && !p->cfg.mig_profile)
            continue;
        if (!n->device_get_max_mig_device_count || !n->device_get_mig_device_handle_by_index ||
            n->device_get_max_mig_device_count(h, &max))
            continue;
        for (j = 0; j < max; j++) {
            nvmlDeviceAttributes_t at;
            nvmlDevice_t mh;
            char prof[GPU_MIG_PROFILE_NAME_MAX];

            if (n->device_get_mig_device_handle_by_index(h, j, &mh))
                continue;
            memset(&at, 0, sizeof(at));
            if (p->cfg.mig_profile) {
                if (!n->device_get_attributes || n->device_get_attributes(mh, &at))
                    continue;
                gpu_mig_profile_name(at.computeInstanceSliceCount, at.gpuInstanceSliceCount,
                                     at.memorySizeMB, prof, sizeof(prof));
                if (strcmp(prof, p->cfg.mig_profile))
                    continue;
            }
            ret = inventory_entry(p, mh, h, i, sysfs, err);
            if (ret)
                return ret;
        }
    }
    if (!inv->ngpus)
        return err_set(err, -ENODEV, "NVML reports no %s on this node",
                       p->cfg.mig_profile ? "MIG device of this profile" : "GPU");
    inv->score = calloc(inv->ngpus * inv->ngpus, sizeof(*inv->score));
    if (!inv->score)
        return err_set(err, -ENOMEM, "out of memory");
    /* pair scores: NVLink links, then the PCIe relation NVML reports, else sysfs NUMA; MIG
     * devices are placed by their GPUs, and two on one GPU are as close as it gets */
    for (a = 0; a < inv->ngpus; a++) {
        for (b = 0; b < inv->ngpus; b++) {
            int level = -1;
            uint32_t sc = 0;

            if (a == b)
                continue;
            if (p->parents[a] == p->parents[b])
                level = NVML_TOPOLOGY_INTERNAL;
            else if (n->device_get_topology_common_ancestor &&
                     n->device_get_topology_common_ancestor(p->parents[a], p->parents[b], &level))
                level = -1;
            if (level >= 0 && level <= NVML_TOPOLOGY_MULTIPLE)
                sc = DP_SCORE_PCIE_SWITCH;
            else if (level == NVML_TOPOLOGY_HOSTBRIDGE)
                sc = DP_SCORE_HOSTBRIDGE;
            else if (level == NVML_TOPOLOGY_NODE)
                sc = DP_SCORE_NUMA;
            else if (level < 0 && inv->gpus[a].numa_node >= 0 &&
                     inv->gpus[a].numa_node == inv->gpus[b].numa_node)
                sc = DP_SCORE_NUMA;
            inv->score[a * inv->ngpus + b] = sc;
        }
        if (p->handles[a] != p->parents[a] || !n->device_get_nvlink_state ||
            !n->device_get_nvlink_remote_pci_info)
            continue;
        for (l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
            nvmlPciInfo_t remote;
            int active = 0;

            if (n->device_get_nvlink_state(p->handles[a], l, &active) ||
                active != NVML_FEATURE_ENABLED)
                continue;
            memset(&remote, 0, sizeof(remote));
            if (n->device_get_nvlink_remote_pci_info(p->handles[a], l, &remote))
                continue;
            remote.busId[sizeof(remote.busId) - 1] = '\0';
            for (b = 0; b < inv->ngpus; b++)
                if (b != a && p->handles[b] == p->parents[b] &&
                    !strcasecmp(remote.busId, inv->gpus[b].pci_bus_id))
                    inv->score[a * inv->ngpus + b] += DP_SCORE_NVLINK;
        }
    }
    return 0;
}

/* ---- the handlers --------------------------------------------------------------------- */

static int pack_to(const ProtobufCMessage *m, struct buf *out)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *b;

    if (n > DP_RPC_MSG_MAX)
        return -E2BIG;
    b = malloc(n ? n : 1);
    if (!b)
        return -ENOMEM;
    protobuf_c_message_pack(m, b);
    n = buf_append(out, b, n) ? (size_t)-1 : 0;
    free(b);
    return n ? -ENOMEM : 0;
}

static uint64_t list_state(void *ctx, struct buf *out)
{
    struct dp_plugin *p = ctx;
    V1beta1__ListAndWatchResponse resp = V1BETA1__LIST_AND_WATCH_RESPONSE__INIT;
    size_t nd, k;
    V1beta1__Device *devs = NULL, **ptrs = NULL;
    V1beta1__TopologyInfo *topo = NULL;
    V1beta1__NUMANode *numa = NULL, **numa_ptrs = NULL;
    char(*ids)[DP_ID_MAX] = NULL;
    uint64_t gen;

    pthread_mutex_lock(&p->mu);
    gen = p->gen;
    nd = dp_ndevices(&p->inv);
    devs = calloc(nd, sizeof(*devs));
    ptrs = calloc(nd, sizeof(*ptrs));
    topo = calloc(nd, sizeof(*topo));
    numa = calloc(nd, sizeof(*numa));
    numa_ptrs = calloc(nd, sizeof(*numa_ptrs));
    ids = calloc(nd, sizeof(*ids));
    if (devs && ptrs && topo && numa && numa_ptrs && ids) {
        for (k = 0; k < nd; k++) {
            size_t g = dp_device_id(&p->inv, k, ids[k]);

            v1beta1__device__init(&devs[k]);
            devs[k].id = ids[k];
            devs[k].health = p->inv.gpus[g].healthy ? "Healthy" : "Unhealthy";
            if (p->inv.gpus[g].numa_node >= 0) {
                v1beta1__topology_info__init(&topo[k]);
                v1beta1__numanode__init(&numa[k]);
                numa[k].id = p->inv.gpus[g].numa_node;
                numa_ptrs[k] = &numa[k];
                topo[k].n_nodes = 1;
                topo[k].nodes = &numa_ptrs[k];
                devs[k].topology = &topo[k];
            }
            ptrs[k] = &devs[k];
        }
        resp.n_devices = nd;
        resp.devices = ptrs;
        pack_to(&resp.base, out);
    }
    pthread_mutex_unlock(&p->mu);
    free(devs);
    free(ptrs);
    free(topo);
    free(numa);
    free(numa_ptrs);
    free(ids);
    return gen;
}

static int handle_options(struct dp_plugin *p, struct buf *resp)
{
    V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;

    (void)p;
    o.pre_start_required = 0;
    o.get_preferred_allocation_available = 1;
    return pack_to(&o.base, resp) ? DP_RPC_INTERNAL : DP_RPC_OK;
}

static int handle_preferred(struct dp_plugin *p, const uint8_t *req, size_t len, struct buf *resp,
                            char *msg, size_t msgsz)
{
    V1beta1__PreferredAllocationRequest *r;
    V1beta1__PreferredAllocationResponse out = V1BETA1__PREFERRED_ALLOCATION_RESPONSE__INIT;
    V1beta1__ContainerPreferredAllocationResponse *cr = NULL, **crp = NULL;
    const char ***chosen = NULL;
    int status = DP_RPC_OK;
    size_t i;

    r = v1beta1__preferred_allocation_request__unpack(NULL, len, req);
    if (!r) {
        snprintf(msg, msgsz, "cannot decode the PreferredAllocationRequest");
        return DP_RPC_INVALID_ARGUMENT;
    }
    cr = calloc(r->n_container_requests + 1, sizeof(*cr));
    crp = calloc(r->n_container_requests + 1, sizeof(*crp));
    chosen = calloc(r->n_container_requests + 1, sizeof(*chosen));
    if (!cr || !crp || !chosen) {
        status = DP_RPC_INTERNAL;
        goto out;
    }
    pthread_mutex_lock(&p->mu);
    for (i = 0; i < r->n_container_requests && status == DP_RPC_OK; i++) {
        V1beta1__ContainerPreferredAllocationRequest *c = r->container_requests[i];
        size_t size = c->allocation_size > 0 ? (size_t)c->allocation_size : 0;
        struct err e;
        long got;

        err_clear(&e);
        v1beta1__container_preferred_allocation_response__init(&cr[i]);
        crp[i] = &cr[i];
        if (size > c->n_available_deviceids) {
            snprintf(msg, msgsz, "allocation size %zu is more than the %zu available devices", size,
                     c->n_available_deviceids);
            status = DP_RPC_INVALID_ARGUMENT;
            break;
        }
        chosen[i] = calloc(size + 1, sizeof(*chosen[i]));
        if (!chosen[i]) {
            status = DP_RPC_INTERNAL;
            break;
        }
        got = dp_preferred(&p->inv, (const char *const *)c->available_deviceids,
                           c->n_available_deviceids, (const char *const *)c->must_include_deviceids,
                           c->n_must_include_deviceids, size, chosen[i], &e);
        if (got < 0) {
            snprintf(msg, msgsz, "%s", e.msg);
            status = DP_RPC_INVALID_ARGUMENT;
            break;
        }
        cr[i].n_deviceids = (size_t)got;
        cr[i].deviceids = (char **)chosen[i];
    }
    pthread_mutex_unlock(&p->mu);
    if (status == DP_RPC_OK) {
        out.n_container_responses = r->n_container_requests;
        out.container_responses = crp;
        if (pack_to(&out.base, resp))
            status = DP_RPC_INTERNAL;
    }
out:
    if (chosen)
        for (i = 0; i < r->n_container_requests; i++)
            free(chosen[i]);
    free(chosen);
    free(cr);
    free(crp);
    v1beta1__preferred_allocation_request__free_unpacked(r, NULL);
    return status;
}

/* One container's answer: the env var and/or CDI names for its devices. Strings go to arena
 * bufs owned by the caller. */
struct alloc_strings {
    struct buf visible; /* "uuid,uuid" */
    struct buf cdi;     /* "kind=uuid,kind=uuid" */
    char annot_key[96];
    char **cdi_names;
    size_t ncdi;
};

static int handle_allocate(struct dp_plugin *p, const uint8_t *req, size_t len, struct buf *resp,
                           char *msg, size_t msgsz)
{
    V1beta1__AllocateRequest *r;
    V1beta1__AllocateResponse out = V1BETA1__ALLOCATE_RESPONSE__INIT;
    unsigned strategy = p->cfg.list_strategy ? p->cfg.list_strategy : DP_LIST_ENVVAR;
    size_t nc, i, j;
    V1beta1__ContainerAllocateResponse *cr = NULL, **crp = NULL;
    V1beta1__ContainerAllocateResponse__EnvsEntry *env = NULL, **envp = NULL;
    V1beta1__ContainerAllocateResponse__AnnotationsEntry *ann = NULL, **annp = NULL;
    V1beta1__CDIDevice *cdi = NULL, **cdip = NULL;
    struct alloc_strings *as = NULL;
    size_t ncdi_total = 0, cdi_at = 0;
    int status = DP_RPC_OK;

    r = v1beta1__allocate_request__unpack(NULL, len, req);
    if (!r) {
        snprintf(msg, msgsz, "cannot decode the AllocateRequest");
        return DP_RPC_INVALID_ARGUMENT;
    }
    nc = r->n_container_requests;
    for (i = 0; i < nc; i++)
        ncdi_total += r->container_requests[i]->n_devices_ids;
    cr = calloc(nc + 1, sizeof(*cr));
    crp = calloc(nc + 1, sizeof(*crp));
    env = calloc(nc + 1, sizeof(*env));
    envp = calloc(nc + 1, sizeof(*envp));
    ann = calloc(nc + 1, sizeof(*ann));
    annp = calloc(nc + 1, sizeof(*annp));
    as = calloc(nc + 1, sizeof(*as));
    cdi = calloc(ncdi_total + 1, sizeof(*cdi));
    cdip = calloc(ncdi_total + 1, sizeof(*cdip));
    if (!cr || !crp || !env || !envp || !ann || !annp || !as || !cdi || !cdip) {
        status = DP_RPC_INTERNAL;
        goto out;
    }
    pthread_mutex_lock(&p->mu);
    for (i = 0; i < nc && status == DP_RPC_OK; i++) {
        V1beta1__ContainerAllocateRequest *c = r->container_requests[i];
        struct alloc_strings *s = &as[i];
        const char *q;
        struct err e;

        err_clear(&e);
        buf_init(&s->visible, 1 << 20);
        buf_init(&s->cdi, 1 << 20);
        v1beta1__container_allocate_response__init(&cr[i]);
        crp[i] = &cr[i];
        if (!c->n_devices_ids) {
            snprintf(msg, msgsz, "container request %zu names no device", i);
            status = DP_RPC_INVALID_ARGUMENT;
            break;
        }
        if (dp_visible_devices(&p->inv, (const char *const *)c->devices_ids, c->n_devices_ids,
                               &s->visible, &e)) {
            snprintf(msg, msgsz, "%s", e.msg);
            status = e.code == -ENOENT ? DP_RPC_NOT_FOUND : DP_RPC_INVALID_ARGUMENT;
            break;
        }
        if (strategy & DP_LIST_ENVVAR) {
            v1beta1__container_allocate_response__envs_entry__init(&env[i]);
            env[i].key = "NVIDIA_VISIBLE_DEVICES";
            env[i].value = s->visible.data;
            envp[i] = &env[i];
            cr[i].n_envs = 1;
            cr[i].envs = &envp[i];
        }
        if (!(strategy & (DP_LIST_CDI_ANNOTATIONS | DP_LIST_CDI_CRI)))
            continue;
        /* CDI names, one per GPU: "k8s.device-plugin.nvidia.com/gpu=<uuid>" */
        cr[i].cdi_devices = &cdip[cdi_at];
        for (q = s->visible.data; q && *q;) {
            size_t n = strcspn(q, ",");
            size_t start = s->cdi.len;

            if (buf_printf(&s->cdi, "%s%s=%.*s", start ? "," : "", DP_CDI_KIND, (int)n, q)) {
                status = DP_RPC_INTERNAL;
                break;
            }
            q += n;
            if (*q == ',')
                q++;
        }
        if (status != DP_RPC_OK)
            break;
        if (strategy & DP_LIST_CDI_CRI) {
            /* the names are the comma-separated parts of s->cdi: cut it into strings */
            char *t = s->cdi.data, *save = NULL, *tok;
            struct buf copy = BUF_INIT(1 << 20);

            if (buf_append(&copy, t, s->cdi.len)) {
                status = DP_RPC_INTERNAL;
                break;
            }
            s->cdi_names = (char **)buf_take(&copy);
            for (tok = strtok_r((char *)s->cdi_names, ",", &save); tok;
                 tok = strtok_r(NULL, ",", &save)) {
                v1beta1__cdidevice__init(&cdi[cdi_at]);
                cdi[cdi_at].name = tok;
                cdip[cdi_at] = &cdi[cdi_at];
                cdi_at++;
                cr[i].n_cdi_devices++;
            }
        }
        if (strategy & DP_LIST_CDI_ANNOTATIONS) {
            snprintf(s->annot_key, sizeof(s->annot_key), "%sgpulabel_%u-%zu",
                     DP_CDI_ANNOTATION_PREFIX, p->cdi_seq, i);
            v1beta1__container_allocate_response__annotations_entry__init(&ann[i]);
            ann[i].key = s->annot_key;
            ann[i].value = s->cdi.data;
            annp[i] = &ann[i];
            cr[i].n_annotations = 1;
            cr[i].annotations = &annp[i];
        }
    }
    if (status == DP_RPC_OK) {
        p->st.allocations++;
        p->cdi_seq++;
    }
    pthread_mutex_unlock(&p->mu);
    if (status == DP_RPC_OK) {
        out.n_container_responses = nc;
        out.container_responses = crp;
        if (pack_to(&out.base, resp))
            status = DP_RPC_INTERNAL;
    }
out:
    if (as)
        for (j = 0; j < nc; j++) {
            buf_release(&as[j].visible);
            buf_release(&as[j].cdi);
            free(as[j].cdi_names);
        }
    free(as);
    free(cr);
    free(crp);
    free(env);
    free(envp);
    free(ann);
    free(annp);
    free(cdi);
    free(cdip);
    v1beta1__allocate_request__free_unpacked(r, NULL);
    return status;
}

static int handle_unary(void *ctx, const char *method, const uint8_t *req, size_t len,
                        struct buf *resp, char *msg, size_t msgsz)
{
    struct dp_plugin *p = ctx;

    plog(p, 'I', 3, "gRPC %s (%zu bytes)", method, len);
    if (!strcmp(method, M_OPTIONS))
        return handle_options(p, resp);
    if (!strcmp(method, M_ALLOCATE))
        return handle_allocate(p, req, len, resp, msg, msgsz);
    if (!strcmp(method, M_PREFERRED))
        return handle_preferred(p, req, len, resp, msg, msgsz);
    if (!strcmp(method, M_PRESTART)) {
        V1beta1__PreStartContainerRequest *r =
            v1beta1__pre_start_container_request__unpack(NULL, len, req);

        if (!r) {
            snprintf(msg, msgsz, "cannot decode the PreStartContainerRequest");
            return DP_RPC_INVALID_ARGUMENT;
        }
        v1beta1__pre_start_container_request__free_unpacked(r, NULL);
        return DP_RPC_OK; /* PreStartContainerResponse is empty: zero bytes */
    }
    snprintf(msg, msgsz, "unknown method %s", method);
    return DP_RPC_UNIMPLEMENTED;
}

/* ---- registration and the serve loop -------------------------------------------------- */

static void *register_main(void *arg)
{
    struct dp_plugin *p = arg;
    V1beta1__RegisterRequest r = V1BETA1__REGISTER_REQUEST__INIT;
    V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
    struct buf req = BUF_INIT(1 << 16);

    o.get_preferred_allocation_available = 1;
    r.version = API_VERSION;
    r.endpoint = p->sock_name;
    r.resource_name = p->resource;
    r.options = &o;
    err_clear(&p->reg_err);
    p->reg_rc = pack_to(&r.base, &req);
    if (!p->reg_rc)
        p->reg_rc = dp_rpc_call(p->kubelet_path, M_REGISTER, (const uint8_t *)req.data, req.len,
                                REGISTER_TIMEOUT_MS, NULL, &p->reg_err);
    buf_release(&req);
    __atomic_store_n(&p->reg_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* sock_same: path is still the socket was describes; with by_ctime, also by its change time,
 * which tells a socket re-created with the same inode number (a kubelet restart on a
 * filesystem that reuses them) */
static bool sock_same(const char *path, const struct stat *was, bool by_ctime)
{
    struct stat st;

    return !lstat(path, &st) && S_ISSOCK(st.st_mode) && st.st_ino == was->st_ino &&
           st.st_dev == was->st_dev &&
           (!by_ctime || (st.st_ctim.tv_sec == was->st_ctim.tv_sec &&
                          st.st_ctim.tv_nsec == was->st_ctim.tv_nsec));
}

struct serve_state {
    struct dp_rpc_server *srv;
    struct dp_rpc_handlers h;
    struct stat sock_st;
    struct stat kubelet_st; /* the kubelet.sock registered with (or being), when kubelet_known */
    bool kubelet_known;
    bool want_register;
    long retry_at; /* mono ms of the next start/registration attempt */
    int inotify_fd, watch;
    char last_err[ERR_MSG_MAX];
    const char *restart_pending; /* a restart asked for while a registration was in flight */
};

static void serve_restart(struct dp_plugin *p, struct serve_state *s, const char *why)
{
    struct err e;

    if (p->reg_running) {
        s->restart_pending = why; /* done once the registration in flight is over */
        return;
    }
    s->restart_pending = NULL;
    if (s->srv) {
        plog(p, 'I', 0, "device plugin: %s; starting the plugin server again", why);
        dp_rpc_server_free(s->srv);
        s->srv = NULL;
        pthread_mutex_lock(&p->mu);
        p->st.registered = false;
        pthread_mutex_unlock(&p->mu);
    }
    err_clear(&e);
    if (dp_rpc_server_new(p->sock_path, &s->h, &s->srv, &e)) {
        if (strcmp(s->last_err, e.msg))
            plog(p, 'E', 0, "device plugin: %s; retrying every %ds", e.msg, RETRY_MS / 1000);
        snprintf(s->last_err, sizeof(s->last_err), "%s", e.msg);
        s->retry_at = mono_ms() + RETRY_MS;
        return;
    }
    if (lstat(p->sock_path, &s->sock_st))
        memset(&s->sock_st, 0, sizeof(s->sock_st));
    s->want_register = true;
    s->retry_at = 0;
}

static void serve_register(struct dp_plugin *p, struct serve_state *s)
{
    if (p->reg_running || !s->want_register || !s->srv || mono_ms() < s->retry_at)
        return;
    if (access(p->kubelet_path, F_OK)) {
        /* no kubelet yet: inotify says when kubelet.sock appears */
        s->retry_at = mono_ms() + RETRY_MS;
        return;
    }
    /* the socket this registration goes to: its creation event, read after the registration
     * began, is not a kubelet restart */
    s->kubelet_known = !lstat(p->kubelet_path, &s->kubelet_st);
    p->reg_done = 0;
    if (pthread_create(&p->reg_thread, NULL, register_main, p)) {
        s->retry_at = mono_ms() + RETRY_MS;
        return;
    }
    p->reg_running = true;
}

static void serve_register_done(struct dp_plugin *p, struct serve_state *s)
{
    if (!p->reg_running || !__atomic_load_n(&p->reg_done, __ATOMIC_ACQUIRE))
        return;
    pthread_join(p->reg_thread, NULL);
    p->reg_running = false;
    if (p->reg_rc) {
        if (strcmp(s->last_err, p->reg_err.msg))
            plog(p, 'E', 0,
                 "device plugin: cannot register %s with the kubelet: %s; retrying every "
                 "%ds",
                 p->resource, p->reg_err.msg, RETRY_MS / 1000);
        snprintf(s->last_err, sizeof(s->last_err), "%s", p->reg_err.msg);
        s->retry_at = mono_ms() + RETRY_MS;
        return;
    }
    s->want_register = false;
    s->last_err[0] = '\0';
    pthread_mutex_lock(&p->mu);
    p->st.registered = true;
    p->st.registrations++;
    pthread_mutex_unlock(&p->mu);
    plog(p, 'I', 0, "device plugin: registered %s (%zu devices) with the kubelet through %s",
         p->resource, dp_ndevices(&p->inv), p->kubelet_path);
}

/* Reads inotify events: kubelet.sock created = the kubelet restarted; our socket removed =
 * serve again. An event is judged by what is there now, since it may be about a socket we
 * replaced: a restart of ours removes our socket too, and a kubelet.sock we registered with
 * after it appeared is no restart. Returns a reason to restart, or NULL. */
static const char *serve_watch(struct dp_plugin *p, struct serve_state *s)
{
    char ev[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    const char *why = NULL;
    ssize_t n;

    if (s->inotify_fd < 0)
        return NULL;
    if (s->watch < 0) {
        s->watch = inotify_add_watch(s->inotify_fd, p->dir,
                                     IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM);
        if (s->watch < 0)
            return NULL;
    }
    while ((n = read(s->inotify_fd, ev, sizeof(ev))) > 0) {
        char *q = ev;

        while (q < ev + n) {
            struct inotify_event *ie = (struct inotify_event *)(void *)q;

            if (ie->len && !strcmp(ie->name, "kubelet.sock") &&
                (ie->mask & (IN_CREATE | IN_MOVED_TO)) &&
                !(s->kubelet_known && sock_same(p->kubelet_path, &s->kubelet_st, true)))
                why = "kubelet.sock was created again (the kubelet restarted)";
            else if (ie->len && !strcmp(ie->name, p->sock_name) &&
                     (ie->mask & (IN_DELETE | IN_MOVED_FROM)) && !why &&
                     !(s->srv && sock_same(p->sock_path, &s->sock_st, false)))
                /* (the removal of a socket we replaced ourselves, by a restart, is not one:
                 * the one we serve now is still there) */
                why = "the plugin socket was removed";
            if (ie->mask & IN_IGNORED)
                s->watch = -1; /* the directory went away; watch it again when it is back */
            q += sizeof(*ie) + ie->len;
        }
    }
    return why;
}

static void *serve_main(void *arg)
{
    struct dp_plugin *p = arg;
    struct serve_state s;
    long next_check = 0;

    memset(&s, 0, sizeof(s));
    s.h.ctx = p;
    s.h.stream_method = M_LIST;
    s.h.unary = handle_unary;
    s.h.stream_state = list_state;
    s.inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    s.watch = -1;
    serve_watch(p, &s);
    serve_restart(p, &s, "starting");
    while (!p->stop) {
        const char *why;

        if (s.srv)
            dp_rpc_server_poll(s.srv, POLL_MS);
        else
            mono_sleep_ms(POLL_MS);
        serve_register_done(p, &s);
        why = serve_watch(p, &s);
        if (!why && s.srv && mono_ms() >= next_check) {
            /* inotify can miss a directory re-created under us: look at the socket too */
            if (!sock_same(p->sock_path, &s.sock_st, false))
                why = "the plugin socket is gone";
            next_check = mono_ms() + 1000;
        }
        if (!why && !p->reg_running)
            why = s.restart_pending;
        if (why)
            serve_restart(p, &s, why);
        else if (!s.srv && mono_ms() >= s.retry_at)
            serve_restart(p, &s, "retrying");
        serve_register(p, &s);
        pthread_mutex_lock(&p->mu);
        p->st.streams = dp_rpc_server_streams(s.srv);
        pthread_mutex_unlock(&p->mu);
    }
    while (p->reg_running) {
        if (s.srv)
            dp_rpc_server_poll(s.srv, POLL_MS);
        serve_register_done(p, &s);
    }
    dp_rpc_server_free(s.srv);
    if (s.inotify_fd >= 0)
        close(s.inotify_fd);
    return NULL;
}

/* ---- health ----------------------------------------------------------------------------- */

static void mark_unhealthy(struct dp_plugin *p, size_t g, const char *why)
{
    bool changed = false;
    char uuid[96];

    pthread_mutex_lock(&p->mu);
    if (p->inv.gpus[g].healthy) {
        p->inv.gpus[g].healthy = false;
        snprintf(p->inv.gpus[g].unhealthy_reason, sizeof(p->inv.gpus[g].unhealthy_reason), "%s",
                 why);
        p->gen++;
        changed = true;
    }
    snprintf(uuid, sizeof(uuid), "%s", p->inv.gpus[g].uuid);
    pthread_mutex_unlock(&p->mu);
    if (!changed)
        return;
    plog(p, 'W', 0, "device plugin: GPU %zu (%s) is unhealthy: %s", g, uuid, why);
    if (p->cfg.on_unhealthy)
        p->cfg.on_unhealthy(p->cfg.ctx, uuid, (unsigned)g, why);
}

static void probe_lost(struct dp_plugin *p)
{
    size_t g;

    for (g = 0; g < p->inv.ngpus; g++) {
        char uuid[96];

        if (p->nvml.device_get_uuid(p->handles[g], uuid, sizeof(uuid)) == NVML_ERROR_GPU_IS_LOST)
            mark_unhealthy(p, g, "GPU is lost");
    }
}

static void *health_main(void *arg)
{
    struct dp_plugin *p = arg;
    const struct gpu_nvml *n = &p->nvml;
    bool wait_err_logged = false;

    while (!p->stop) {
        nvmlEventData_t ev;
        nvmlReturn_t rc;
        size_t g;

        if (!p->events) {
            mono_sleep_ms(HEALTH_WAIT_MS);
            probe_lost(p);
            continue;
        }
        memset(&ev, 0, sizeof(ev));
        rc = n->event_set_wait(p->events, &ev, HEALTH_WAIT_MS);
        if (rc == NVML_ERROR_TIMEOUT) {
            probe_lost(p);
            continue;
        }
        if (rc == NVML_ERROR_GPU_IS_LOST) {
            probe_lost(p);
            mono_sleep_ms(HEALTH_WAIT_MS); /* the wait may fail at once while the GPU stays lost */
            continue;
        }
        if (rc != NVML_SUCCESS) {
            if (!wait_err_logged)
                plog(p, 'E', 0, "device plugin: nvmlEventSetWait_v2: %s",
                     gpu_nvml_error_string(n, rc));
            wait_err_logged = true;
            mono_sleep_ms(HEALTH_WAIT_MS);
            probe_lost(p);
            continue;
        }
        /* the event names a GPU: every device advertised on it (its MIG devices too) */
        for (g = 0; g < p->inv.ngpus; g++) {
            if (p->parents[g] != ev.device)
                continue;
            if (ev.eventType & NVML_EVENT_TYPE_XID_CRITICAL_ERROR) {
                char why[64];

                if (ev.eventData < DP_XID_MAX && p->cfg.ignored_xids[ev.eventData]) {
                    plog(p, 'I', 1,
                         "device plugin: GPU %u: XID %llu is ignored "
                         "(--health-ignore-xids)",
                         p->inv.gpus[g].index, ev.eventData);
                    continue;
                }
                snprintf(why, sizeof(why), "XID %llu", ev.eventData);
                mark_unhealthy(p, g, why);
            } else if (ev.eventType & NVML_EVENT_TYPE_DOUBLE_BIT_ECC_ERROR) {
                mark_unhealthy(p, g, "double-bit ECC error");
            }
        }
    }
    return NULL;
}

static void health_setup(struct dp_plugin *p)
{
    const struct gpu_nvml *n = &p->nvml;
    size_t g, registered = 0;

    if (!n->event_set_create || !n->device_register_events || !n->event_set_wait) {
        plog(p, 'W', 0, "device plugin: this NVML has no event API; only lost GPUs are detected");
        return;
    }
    if (n->event_set_create(&p->events)) {
        p->events = NULL;
        plog(p, 'W', 0, "device plugin: nvmlEventSetCreate failed; only lost GPUs are detected");
        return;
    }
    for (g = 0; g < p->inv.ngpus; g++) {
        unsigned long long want =
            NVML_EVENT_TYPE_XID_CRITICAL_ERROR | NVML_EVENT_TYPE_DOUBLE_BIT_ECC_ERROR;
        unsigned long long supported = want;
        nvmlReturn_t rc;
        size_t k;

        for (k = 0; k < g && p->parents[k] != p->parents[g]; k++)
            ;
        if (k < g)
            continue; /* one registration per GPU */
        if (n->device_get_supported_event_types &&
            !n->device_get_supported_event_types(p->parents[g], &supported))
            want &= supported;
        rc = want ? n->device_register_events(p->parents[g], want, p->events)
                  : NVML_ERROR_NOT_SUPPORTED;
        if (rc)
            plog(p, 'W', 0, "device plugin: GPU %u: no health events: %s", p->inv.gpus[g].index,
                 gpu_nvml_error_string(n, rc));
        else
            registered++;
    }
    plog(p, 'I', 1, "device plugin: health events registered on %zu of %zu GPUs", registered,
         p->inv.ngpus);
}

/* ---- start and stop ----------------------------------------------------------------------- */

static void plugin_free(struct dp_plugin *p)
{
    if (p->events && p->nvml.event_set_free)
        p->nvml.event_set_free(p->events);
    if (p->nvml_inited)
        p->nvml.shutdown();
    gpu_nvml_close(&p->nvml);
    dp_inventory_release(&p->inv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

int dp_plugin_start(const struct dp_config *cfg, struct dp_plugin **out, struct err *err)
{
    struct dp_plugin *p;
    const char *res, *slash;
    nvmlReturn_t nrc;
    size_t i;
    int rc;

    *out = NULL;
    p = calloc(1, sizeof(*p));
    if (!p)
        return err_set(err, -ENOMEM, "out of memory");
    pthread_mutex_init(&p->mu, NULL);
    p->cfg = *cfg;
    snprintf(p->dir, sizeof(p->dir), "%s", cfg->dir && *cfg->dir ? cfg->dir : DP_DEFAULT_DIR);
    while (strlen(p->dir) > 1 && p->dir[strlen(p->dir) - 1] == '/')
        p->dir[strlen(p->dir) - 1] = '\0';
    res = cfg->resource_name && *cfg->resource_name ? cfg->resource_name : DP_DEFAULT_RESOURCE;
    snprintf(p->resource, sizeof(p->resource), "%s", res);
    slash = strrchr(res, '/');
    snprintf(p->sock_name, sizeof(p->sock_name), "gpulabel-%s.sock", slash ? slash + 1 : res);
    for (i = 0; p->sock_name[i]; i++)
        if (p->sock_name[i] == '/')
            p->sock_name[i] = '-';
    snprintf(p->sock_path, sizeof(p->sock_path), "%s/%s", p->dir, p->sock_name);
    snprintf(p->kubelet_path, sizeof(p->kubelet_path), "%s/kubelet.sock", p->dir);

    rc = gpu_nvml_open(cfg->nvml_lib, &p->nvml, err);
    if (rc)
        goto fail;
    nrc = p->nvml.init();
    if (nrc) {
        rc = err_set(err, nrc == NVML_ERROR_DRIVER_NOT_LOADED ? -ENODEV : -EIO, "nvmlInit_v2: %s",
                     gpu_nvml_error_string(&p->nvml, nrc));
        goto fail;
    }
    p->nvml_inited = true;
    rc = inventory_read(p, err);
    if (rc)
        goto fail;
    health_setup(p);
    if (pthread_create(&p->health_thread, NULL, health_main, p)) {
        rc = err_set(err, -EAGAIN, "cannot start the health thread");
        goto fail;
    }
    p->health_started = true;
    if (pthread_create(&p->serve_thread, NULL, serve_main, p)) {
        rc = err_set(err, -EAGAIN, "cannot start the plugin thread");
        goto fail;
    }
    p->serve_started = true;
    p->st.gpus = p->inv.ngpus;
    *out = p;
    return 0;
fail:
    if (p->health_started) {
        p->stop = 1;
        pthread_join(p->health_thread, NULL);
    }
    plugin_free(p);
    return rc;
}

void dp_plugin_status(struct dp_plugin *p, struct dp_status *st)
{
    size_t g;

    memset(st, 0, sizeof(*st));
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    *st = p->st;
    st->gpus = p->inv.ngpus;
    for (g = 0; g < p->inv.ngpus; g++)
        st->healthy += p->inv.gpus[g].healthy;
    pthread_mutex_unlock(&p->mu);
}

int dp_mig_profiles(const char *nvml_lib, char (*out)[32], size_t max, size_t *n, struct err *err)
{
    struct gpu_inventory inv;
    size_t i, j, k;
    int rc;

    *n = 0;
    rc = gpu_detect(nvml_lib, &inv, err);
    for (i = 0; !rc && i < inv.ndevices; i++)
        for (j = 0; j < inv.devices[i].nmig; j++) {
            const char *prof = inv.devices[i].migs[j].profile;

            for (k = 0; k < *n && strcmp(out[k], prof); k++)
                ;
            if (k == *n && *n < max)
                snprintf(out[(*n)++], sizeof(out[0]), "%s", prof);
        }
    gpu_inventory_release(&inv);
    /* sorted, so that the plugins start in a stable order */
    for (i = 0; i < *n; i++)
        for (j = i + 1; j < *n; j++)
            if (strcmp(out[j], out[i]) < 0) {
                char t[32];

                memcpy(t, out[i], sizeof(t));
                memcpy(out[i], out[j], sizeof(t));
                memcpy(out[j], t, sizeof(t));
            }
    return rc;
}

int dp_plugin_new_offline(const struct dp_config *cfg, struct dp_inventory *inv,
                          struct dp_plugin **out, struct err *err)
{
    struct dp_plugin *p = calloc(1, sizeof(*p));

    *out = NULL;
    if (!p)
        return err_set(err, -ENOMEM, "out of memory");
    pthread_mutex_init(&p->mu, NULL);
    p->cfg = *cfg;
    p->inv = *inv;
    memset(inv, 0, sizeof(*inv));
    *out = p;
    return 0;
}

int dp_plugin_handle(struct dp_plugin *p, const char *method, const uint8_t *req, size_t len,
                     struct buf *resp, char *msg, size_t msgsz)
{
    return handle_unary(p, method, req, len, resp, msg, msgsz);
}

uint64_t dp_plugin_list(struct dp_plugin *p, struct buf *resp)
{
    return list_state(p, resp);
}

const char *dp_plugin_socket(const struct dp_plugin *p)
{
    return p->sock_path;
}

void dp_plugin_stop(struct dp_plugin *p)
{
    if (!p)
        return;
    p->stop = 1;
    if (p->serve_started)
        pthread_join(p->serve_thread, NULL);
    if (p->health_started)
        pthread_join(p->health_thread, NULL);
    plugin_free(p);
}
