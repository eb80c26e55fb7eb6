/* fuzz_drarequest.c - libFuzzer target for the DRA plugin's calls (draplugin/plugin.c):
 * NodePrepareResources and NodeUnprepareResources as the kubelet would send them, with the
 * ResourceClaim the plugin reads back from the input as well, so that the allocation's
 * decoding (drivers, pools, devices, requests) is fuzzed too.
 *
 * Input: byte 0 picks the call (bit 0: unprepare, bit 1: the v1beta1 service); bytes 1-2 are
 * the length L (little endian) of the protobuf request that follows; the rest is the claim's
 * JSON, returned for every claim the request names. The plugin serves four H100s of node
 * "node-1" and writes its CDI specs and checkpoint under a temporary directory. Besides not
 * crashing: an OK answer decodes as the method's response, with one entry per claim of the
 * request, and once the claims a prepare named are unprepared again nothing of them is left
 * (no CDI spec, no checkpoint entry; each input starts from no prepared claim). */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "base/buf.h"
#include "draplugin/devices.h"
#include "draplugin/dra.pb-c.h"
#include "draplugin/plugin.h"
#include "gpu/gpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *claim_json;
static char cdi_dir[64];
static size_t claim_len;

static int source(void *ctx, const char *ns, const char *name, json_t **out, struct err *err)
{
    json_error_t je;

    (void)ctx;
    *out = json_loadb((const char *)claim_json, claim_len, JSON_REJECT_DUPLICATES, &je);
    if (!*out)
        return err_set(err, -ENOENT, "ResourceClaim %s/%s not found", ns, name);
    return 0;
}

static char tmp_dir[] = "/tmp/fuzz-drarequest-XXXXXX", plugins_dir[64], driver_dir[96];

/* At exit: the temporary directory goes (it holds only the checkpoint by then). */
static void cleanup(void)
{
    char path[160];

    snprintf(path, sizeof(path), "%s/checkpoint.json", driver_dir);
    unlink(path);
    rmdir(driver_dir);
    rmdir(plugins_dir);
    rmdir(cdi_dir);
    rmdir(tmp_dir);
}

static struct dra_plugin *plugin(void)
{
    static struct dra_plugin *p;
    const char *dir = tmp_dir;
    struct gpu_inventory inv;
    struct dra_devices devs;
    struct dra_config cfg;
    struct err err;
    size_t i;

    if (p)
        return p;
    if (!mkdtemp(tmp_dir))
        abort();
    atexit(cleanup);
    snprintf(plugins_dir, sizeof(plugins_dir), "%s/plugins", dir);
    snprintf(cdi_dir, sizeof(cdi_dir), "%s/cdi", dir);
    snprintf(driver_dir, sizeof(driver_dir), "%s/gpu.nvidia.com", plugins_dir);
    if (mkdir(plugins_dir, 0700) || mkdir(driver_dir, 0700)) /* dra_plugin_start makes it */
        abort();
    memset(&inv, 0, sizeof(inv));
    inv.ndevices = 4;
    inv.devices = calloc(4, sizeof(*inv.devices));
    if (!inv.devices)
        abort();
    snprintf(inv.driver_version, sizeof(inv.driver_version), "550.107.02");
    inv.cuda_driver_version = 12040;
    for (i = 0; i < 4; i++) {
        struct gpu_device *g = &inv.devices[i];

        snprintf(g->name, sizeof(g->name), "NVIDIA H100 80GB HBM3");
        snprintf(g->uuid, sizeof(g->uuid), "GPU-%zu", i);
        snprintf(g->pci_bus_id, sizeof(g->pci_bus_id), "00000000:0%zu:00.0", i);
        g->memory_total = 85899345920ull;
        g->memory_known = true;
        g->cc_major = 9;
        g->cc_known = true;
        g->minor = (int)i;
        g->brand = -1;
        g->arch = -1;
    }
    memset(&devs, 0, sizeof(devs));
    memset(&cfg, 0, sizeof(cfg));
    cfg.node = "node-1";
    cfg.plugins_dir = plugins_dir;
    cfg.cdi_root = cdi_dir;
    cfg.dev_root = dir; /* no device nodes there */
    cfg.claim_source = source;
    if (dra_devices_update(&devs, &inv, dir, &err) || dra_plugin_new_offline(&cfg, &p, &err) ||
        dra_plugin_set_devices(p, &devs, &err))
        abort();
    dra_devices_release(&devs);
    free(inv.devices);
    return p;
}

/* Unprepares the claims a prepare named, so that every input starts from no prepared claim,
 * and checks that nothing of them is left: no CDI spec, no checkpoint entry. */
static void forget(struct dra_plugin *p, K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim **claims,
                   size_t n)
{
    K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest rq =
        K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCES_REQUEST__INIT;
    struct buf resp = BUF_INIT(0);
    uint8_t *req;
    size_t len;
    struct dra_status st;
    struct dirent *e;
    char msg[512];
    DIR *d;

    rq.claims = claims;
    rq.n_claims = n;
    req = malloc(
        k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__get_packed_size(
            &rq) +
        1);
    if (!req)
        abort();
    len = k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__pack(&rq, req);
    if (dra_plugin_handle(p, "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources",
                          req, len, &resp, msg, sizeof(msg)))
        abort();
    dra_plugin_status(p, &st);
    if (st.prepared)
        abort();
    d = opendir(cdi_dir);
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.')
            abort(); /* a spec of no prepared claim */
    if (d)
        closedir(d);
    free(req);
    buf_release(&resp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const methods[] = {
        "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",
        "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources",
        "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources",
        "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodeUnprepareResources"};
    struct dra_plugin *p = plugin();
    struct buf resp = BUF_INIT(0);
    size_t len;
    unsigned m;
    char msg[512];
    int st;

    if (size < 3 || size > 65536)
        return 0;
    m = data[0] & 3;
    len = (size_t)data[1] | (size_t)data[2] << 8;
    if (len > size - 3)
        return 0;
    claim_json = data + 3 + len;
    claim_len = size - 3 - len;
    st = dra_plugin_handle(p, methods[m], data + 3, len, &resp, msg, sizeof(msg));
    if (st == 0 && !(m & 1)) {
        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest *rq =
            k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__unpack(NULL, len,
                                                                                         data + 3);
        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse *rs =
            k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__unpack(
                NULL, resp.len, (const uint8_t *)resp.data);

        if (!rq || !rs || rs->n_claims != rq->n_claims)
            abort();
        forget(p, rq->claims, rq->n_claims);
        k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__free_unpacked(rq,
                                                                                            NULL);
        k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__free_unpacked(rs,
                                                                                             NULL);
    } else if (st == 0) {
        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest *rq =
            k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__unpack(
                NULL, len, data + 3);
        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse *rs =
            k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__unpack(
                NULL, resp.len, (const uint8_t *)resp.data);

        if (!rq || !rs || rs->n_claims != rq->n_claims)
            abort();
        k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__free_unpacked(rq,
                                                                                              NULL);
        k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__free_unpacked(
            rs, NULL);
    }
    buf_release(&resp);
    return 0;
}
