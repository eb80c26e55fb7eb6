/* fuzz_dprequest.c - libFuzzer target for the device plugin's request decoding: the first
 * byte picks the method (Allocate, GetPreferredAllocation, PreStartContainer,
 * GetDevicePluginOptions), the rest is the protobuf request as the kubelet would send it.
 * Besides not crashing, an OK answer must decode as the method's response and an Allocate
 * answer must have one container response per container request. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "deviceplugin/api.pb-c.h"
#include "deviceplugin/devices.h"
#include "deviceplugin/plugin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct dp_plugin *plugin(unsigned variant)
{
    static struct dp_plugin *p[2];
    struct dp_inventory inv;
    struct dp_config cfg;
    size_t i, j;

    if (p[variant])
        return p[variant];
    memset(&cfg, 0, sizeof(cfg));
    memset(&inv, 0, sizeof(inv));
    cfg.list_strategy = DP_LIST_ENVVAR | DP_LIST_CDI_ANNOTATIONS | DP_LIST_CDI_CRI;
    inv.ngpus = 8;
    inv.replicas = variant ? 3 : 1;
    inv.gpus = calloc(8, sizeof(*inv.gpus));
    inv.score = calloc(64, sizeof(*inv.score));
    if (!inv.gpus || !inv.score)
        abort();
    for (i = 0; i < 8; i++) {
        snprintf(inv.gpus[i].uuid, sizeof(inv.gpus[i].uuid), "GPU-%zu", i);
        inv.gpus[i].healthy = i != 5;
        inv.gpus[i].numa_node = (int)(i / 4);
        for (j = 0; j < 8; j++)
            if (j != i)
                inv.score[i * 8 + j] = (i / 2 == j / 2 ? DP_SCORE_NVLINK : 0) + (i / 4 == j / 4);
    }
    if (dp_plugin_new_offline(&cfg, &inv, &p[variant], NULL))
        abort();
    return p[variant];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const methods[] = {
        "/v1beta1.DevicePlugin/Allocate", "/v1beta1.DevicePlugin/GetPreferredAllocation",
        "/v1beta1.DevicePlugin/PreStartContainer", "/v1beta1.DevicePlugin/GetDevicePluginOptions"};
    struct buf resp = BUF_INIT(0);
    char msg[512];
    unsigned m;
    int st;

    if (size < 1 || size > 65536)
        return 0;
    m = data[0] & 3;
    st = dp_plugin_handle(plugin((data[0] >> 2) & 1), methods[m], data + 1, size - 1, &resp, msg,
                          sizeof(msg));
    if (st == 0 && m == 0) {
        V1beta1__AllocateRequest *rq = v1beta1__allocate_request__unpack(NULL, size - 1, data + 1);
        V1beta1__AllocateResponse *rs =
            v1beta1__allocate_response__unpack(NULL, resp.len, (const uint8_t *)resp.data);

        if (!rq || !rs || rs->n_container_responses != rq->n_container_requests)
            abort();
        v1beta1__allocate_request__free_unpacked(rq, NULL);
        v1beta1__allocate_response__free_unpacked(rs, NULL);
    } else if (st == 0 && m == 1) {
        V1beta1__PreferredAllocationResponse *rs = v1beta1__preferred_allocation_response__unpack(
            NULL, resp.len, (const uint8_t *)resp.data);

        if (!rs)
            abort();
        v1beta1__preferred_allocation_response__free_unpacked(rs, NULL);
    }
    buf_release(&resp);
    return 0;
}
