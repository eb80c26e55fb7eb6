/* handlers.c - the device plugin's answers to the kubelet: the ListAndWatch list, the
 * options, the preferred allocation and Allocate, as protobuf bytes in and out (the gRPC side
 * is rpc.c). Every handler reads the inventory under p->mu, so a health change from the health
 * thread is seen whole. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "deviceplugin/api.pb-c.h"
#include "deviceplugin/plugin-int.h"
#include "rpc/rpc.h"

#define M_OPTIONS "/v1beta1.DevicePlugin/GetDevicePluginOptions"
#define M_PREFERRED "/v1beta1.DevicePlugin/GetPreferredAllocation"
#define M_ALLOCATE "/v1beta1.DevicePlugin/Allocate"
#define M_PRESTART "/v1beta1.DevicePlugin/PreStartContainer"

int dp_pack(const ProtobufCMessage *m, struct buf *out)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *b;

    if (n > RPC_MSG_MAX)
        return -E2BIG;
    b = malloc(n ? n : 1);
    if (!b)
        return -ENOMEM;
    protobuf_c_message_pack(m, b);
    n = buf_append(out, b, n) ? (size_t)-1 : 0;
    free(b);
    return n ? -ENOMEM : 0;
}

uint64_t dp_list_state(void *ctx, struct buf *out)
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
        dp_pack(&resp.base, out);
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
    return dp_pack(&o.base, resp) ? RPC_INTERNAL : RPC_OK;
}

static int handle_preferred(struct dp_plugin *p, const uint8_t *req, size_t len, struct buf *resp,
                            char *msg, size_t msgsz)
{
    V1beta1__PreferredAllocationRequest *r;
    V1beta1__PreferredAllocationResponse out = V1BETA1__PREFERRED_ALLOCATION_RESPONSE__INIT;
    V1beta1__ContainerPreferredAllocationResponse *cr = NULL, **crp = NULL;
    const char ***chosen = NULL;
    int status = RPC_OK;
    size_t i;

    r = v1beta1__preferred_allocation_request__unpack(NULL, len, req);
    if (!r) {
        snprintf(msg, msgsz, "cannot decode the PreferredAllocationRequest");
        return RPC_INVALID_ARGUMENT;
    }
    cr = calloc(r->n_container_requests + 1, sizeof(*cr));
    crp = calloc(r->n_container_requests + 1, sizeof(*crp));
    chosen = calloc(r->n_container_requests + 1, sizeof(*chosen));
    if (!cr || !crp || !chosen) {
        status = RPC_INTERNAL;
        goto out;
    }
    pthread_mutex_lock(&p->mu);
    for (i = 0; i < r->n_container_requests && status == RPC_OK; i++) {
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
            status = RPC_INVALID_ARGUMENT;
            break;
        }
        chosen[i] = calloc(size + 1, sizeof(*chosen[i]));
        if (!chosen[i]) {
            status = RPC_INTERNAL;
            break;
        }
        got = dp_preferred(&p->inv, (const char *const *)c->available_deviceids,
                           c->n_available_deviceids, (const char *const *)c->must_include_deviceids,
                           c->n_must_include_deviceids, size, chosen[i], &e);
        if (got < 0) {
            snprintf(msg, msgsz, "%s", e.msg);
            status = RPC_INVALID_ARGUMENT;
            break;
        }
        cr[i].n_deviceids = (size_t)got;
        cr[i].deviceids = (char **)chosen[i];
    }
    pthread_mutex_unlock(&p->mu);
    if (status == RPC_OK) {
        out.n_container_responses = r->n_container_requests;
        out.container_responses = crp;
        if (dp_pack(&out.base, resp))
            status = RPC_INTERNAL;
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
    int status = RPC_OK;

    r = v1beta1__allocate_request__unpack(NULL, len, req);
    if (!r) {
        snprintf(msg, msgsz, "cannot decode the AllocateRequest");
        return RPC_INVALID_ARGUMENT;
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
        status = RPC_INTERNAL;
        goto out;
    }
    pthread_mutex_lock(&p->mu);
    for (i = 0; i < nc && status == RPC_OK; i++) {
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
            status = RPC_INVALID_ARGUMENT;
            break;
        }
        if (dp_visible_devices(&p->inv, (const char *const *)c->devices_ids, c->n_devices_ids,
                               &s->visible, &e)) {
            snprintf(msg, msgsz, "%s", e.msg);
            status = e.code == -ENOENT ? RPC_NOT_FOUND : RPC_INVALID_ARGUMENT;
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
                status = RPC_INTERNAL;
                break;
            }
            q += n;
            if (*q == ',')
                q++;
        }
        if (status != RPC_OK)
            break;
        if (strategy & DP_LIST_CDI_CRI) {
            /* the names are the comma-separated parts of s->cdi: cut it into strings */
            char *t = s->cdi.data, *save = NULL, *tok;
            struct buf copy = BUF_INIT(1 << 20);

            if (buf_append(&copy, t, s->cdi.len)) {
                status = RPC_INTERNAL;
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
    if (status == RPC_OK) {
        p->st.allocations++;
        p->cdi_seq++;
    }
    pthread_mutex_unlock(&p->mu);
    if (status == RPC_OK) {
        out.n_container_responses = nc;
        out.container_responses = crp;
        if (dp_pack(&out.base, resp))
            status = RPC_INTERNAL;
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

int dp_handle_unary(void *ctx, const char *method, const uint8_t *req, size_t len, struct buf *resp,
                    char *msg, size_t msgsz)
{
    struct dp_plugin *p = ctx;

    dp_log(p, 'I', 3, "gRPC %s (%zu bytes)", method, len);
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
            return RPC_INVALID_ARGUMENT;
        }
        v1beta1__pre_start_container_request__free_unpacked(r, NULL);
        return RPC_OK; /* PreStartContainerResponse is empty: zero bytes */
    }
    snprintf(msg, msgsz, "unknown method %s", method);
    return RPC_UNIMPLEMENTED;
}
