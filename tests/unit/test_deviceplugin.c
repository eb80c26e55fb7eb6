/* test_deviceplugin.c - the device plugin's pure parts: device IDs, the visible-devices list,
 * the strategy and XID lists, and the preferred allocation on fake topologies (NVLink pairs,
 * PCIe switches, NUMA nodes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deviceplugin/devices.h"
#include "deviceplugin/plugin.h"
#include "test.h"

#define MAXG 32

/* A fake node of n GPUs "GPU-<i>" with no topology; links are added with the helpers. */
static void inv_make(struct dp_inventory *inv, size_t n, unsigned replicas)
{
    size_t i;

    memset(inv, 0, sizeof(*inv));
    inv->gpus = calloc(n, sizeof(*inv->gpus));
    inv->score = calloc(n * n, sizeof(*inv->score));
    inv->ngpus = n;
    inv->replicas = replicas;
    for (i = 0; i < n; i++) {
        snprintf(inv->gpus[i].uuid, sizeof(inv->gpus[i].uuid), "GPU-%zu", i);
        inv->gpus[i].healthy = true;
        inv->gpus[i].index = (unsigned)i;
        inv->gpus[i].numa_node = -1;
    }
}

static void link_add(struct dp_inventory *inv, size_t a, size_t b, uint32_t s)
{
    inv->score[a * inv->ngpus + b] += s;
    inv->score[b * inv->ngpus + a] += s;
}

/* NUMA nodes and switches: every pair in the same group gets s. */
static void group_add(struct dp_inventory *inv, size_t from, size_t to, uint32_t s)
{
    size_t a, b;

    for (a = from; a < to; a++)
        for (b = a + 1; b < to; b++)
            link_add(inv, a, b, s);
}

static char ids_store[MAXG * 8][DP_ID_MAX];

/* "0 2 5" -> {"GPU-0","GPU-2","GPU-5"}; returns the count. */
static size_t ids(const char *list, const char **out, size_t base)
{
    size_t n = 0;
    const char *p = list;

    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);

        if (end == p)
            break;
        snprintf(ids_store[base + n], DP_ID_MAX, "GPU-%ld", v);
        out[n] = ids_store[base + n];
        n++;
        p = end;
    }
    return n;
}

/* Runs dp_preferred and returns the chosen GPU numbers as a sorted "0 1" string. */
static const char *prefer(const struct dp_inventory *inv, const char *avail, const char *must,
                          size_t size)
{
    static char res[512];
    const char *a[MAXG], *m[MAXG], *out[MAXG];
    size_t na = ids(avail, a, 0), nm = ids(must, m, MAXG), i, j;
    int nums[MAXG];
    long got;
    struct err e;

    err_clear(&e);
    got = dp_preferred(inv, a, na, m, nm, size, out, &e);
    if (got < 0) {
        err_cut_mark(res, sizeof(res), snprintf(res, sizeof(res), "error: %s", e.msg));
        return res;
    }
    for (i = 0; i < (size_t)got; i++)
        nums[i] = atoi(out[i] + 4);
    for (i = 0; i < (size_t)got; i++)
        for (j = i + 1; j < (size_t)got; j++)
            if (nums[j] < nums[i]) {
                int t = nums[i];
                nums[i] = nums[j];
                nums[j] = t;
            }
    res[0] = '\0';
    for (i = 0; i < (size_t)got; i++)
        snprintf(res + strlen(res), sizeof(res) - strlen(res), "%s%d", i ? " " : "", nums[i]);
    return res;
}

/* A DGX-like node: 8 GPUs, NVLink pairs (0,1) (2,3) (4,5) (6,7); 0-3 on NUMA 0, 4-7 NUMA 1. */
static void dgx(struct dp_inventory *inv)
{
    size_t i;

    inv_make(inv, 8, 1);
    for (i = 0; i < 8; i += 2)
        link_add(inv, i, i + 1, DP_SCORE_NVLINK * 2);
    group_add(inv, 0, 4, DP_SCORE_NUMA);
    group_add(inv, 4, 8, DP_SCORE_NUMA);
}

static void preferred_takes_an_nvlink_pair(void)
{
    struct dp_inventory inv;

    dgx(&inv);
    CHECK_STR_EQ(prefer(&inv, "0 1 2 3 4 5 6 7", "", 2), "0 1");
    CHECK_STR_EQ(prefer(&inv, "0 2 3 4 6", "", 2), "2 3");
    CHECK_STR_EQ(prefer(&inv, "0 1 2 3 4 5 6 7", "", 4), "0 1 2 3");
    dp_inventory_release(&inv);
}

static void preferred_odd_request_keeps_pairs(void)
{
    struct dp_inventory inv;

    dgx(&inv);
    /* one GPU: the lone 4 (its partner 5 is taken), not half of a pair */
    CHECK_STR_EQ(prefer(&inv, "0 1 2 3 4", "", 1), "4");
    /* three: a whole pair and the lone GPU, leaving the other pair whole */
    CHECK_STR_EQ(prefer(&inv, "0 1 2 3 6", "", 3), "0 1 6");
    dp_inventory_release(&inv);
}

static void preferred_pcie_switch_then_numa(void)
{
    struct dp_inventory inv;

    /* no NVLink: 0,1 behind switch A, 2,3 behind switch B, 0-3 NUMA 0, 4-7 NUMA 1 */
    inv_make(&inv, 8, 1);
    group_add(&inv, 0, 4, DP_SCORE_NUMA);
    group_add(&inv, 4, 8, DP_SCORE_NUMA);
    link_add(&inv, 0, 1, DP_SCORE_PCIE_SWITCH - DP_SCORE_NUMA);
    link_add(&inv, 2, 3, DP_SCORE_PCIE_SWITCH - DP_SCORE_NUMA);
    CHECK_STR_EQ(prefer(&inv, "0 2 3 4", "", 2), "2 3");
    CHECK_STR_EQ(prefer(&inv, "0 4 5", "", 2), "4 5");
    CHECK_STR_EQ(prefer(&inv, "0 4", "", 2), "0 4");
    dp_inventory_release(&inv);
}

static void preferred_must_include(void)
{
    struct dp_inventory inv;

    dgx(&inv);
    CHECK_STR_EQ(prefer(&inv, "0 1 2 3 4 5 6 7", "3", 2), "2 3");
    CHECK_STR_EQ(prefer(&inv, "0 1 2 3 4 5 6 7", "3 4", 4), "2 3 4 5");
    CHECK_STR_EQ(prefer(&inv, "0 1 2", "7", 1),
                 "error: must-include device 'GPU-7' is not available");
    CHECK_STR_EQ(prefer(&inv, "0 1 2", "0 1", 1),
                 "error: 2 devices must be included in an allocation of 1");
    CHECK_STR_EQ(prefer(&inv, "0 9", "", 1), "error: unknown device ID 'GPU-9'");
    CHECK_STR_EQ(prefer(&inv, "0 0", "", 1), "error: device ID 'GPU-0' is listed twice");
    /* fewer available than asked: all of them */
    CHECK_STR_EQ(prefer(&inv, "5 6", "", 3), "5 6");
    dp_inventory_release(&inv);
}

static void preferred_greedy_on_large_nodes(void)
{
    struct dp_inventory inv;
    char avail[256] = "";
    size_t i;

    /* 24 GPUs in NVLink pairs: C(24,12) is too many to try, the greedy path runs */
    inv_make(&inv, 24, 1);
    for (i = 0; i < 24; i += 2)
        link_add(&inv, i, i + 1, DP_SCORE_NVLINK);
    for (i = 0; i < 24; i++)
        snprintf(avail + strlen(avail), sizeof(avail) - strlen(avail), "%zu ", i);
    CHECK_STR_EQ(prefer(&inv, avail, "", 12), "0 1 2 3 4 5 6 7 8 9 10 11");
    CHECK_STR_EQ(prefer(&inv, avail, "5", 12), "0 1 2 3 4 5 6 7 8 9 10 11");
    CHECK_STR_EQ(prefer(&inv, avail, "13", 2), "12 13");
    dp_inventory_release(&inv);
}

static void preferred_spreads_replicas(void)
{
    struct dp_inventory inv;
    const char *avail[8], *out[8];
    char store[8][DP_ID_MAX];
    struct err e;
    size_t k;
    long got;

    inv_make(&inv, 2, 4);
    CHECK_INT_EQ(dp_ndevices(&inv), 8);
    for (k = 0; k < 8; k++) {
        CHECK_INT_EQ(dp_device_id(&inv, k, store[k]), k / 4);
        avail[k] = store[k];
    }
    CHECK_STR_EQ(store[5], "GPU-1::1");
    err_clear(&e);
    got = dp_preferred(&inv, avail, 8, NULL, 0, 2, out, &e);
    CHECK_INT_EQ(got, 2);
    CHECK_STR_EQ(out[0], "GPU-0::0");
    CHECK_STR_EQ(out[1], "GPU-1::0");
    /* GPU-0 has one replica left, GPU-1 three: the request goes to GPU-1 */
    got = dp_preferred(&inv, avail + 3, 5, NULL, 0, 1, out, &e);
    CHECK_INT_EQ(got, 1);
    CHECK_STR_EQ(out[0], "GPU-1::0");
    dp_inventory_release(&inv);
}

static void ids_and_replicas(void)
{
    struct dp_inventory inv;

    inv_make(&inv, 3, 1);
    CHECK_INT_EQ(dp_id_gpu(&inv, "GPU-2"), 2);
    CHECK_INT_EQ(dp_id_gpu(&inv, "GPU-3"), -1);
    CHECK_INT_EQ(dp_id_gpu(&inv, "GPU-2::0"), -1);
    CHECK_INT_EQ(dp_id_gpu(&inv, "GPU"), -1);
    inv.replicas = 3;
    CHECK_INT_EQ(dp_id_gpu(&inv, "GPU-2"), -1);
    CHECK_INT_EQ(dp_id_gpu(&inv, "GPU-2::2"), 2);
    CHECK_INT_EQ(dp_id_gpu(&inv, "GPU-2::3"), -1);
    CHECK_INT_EQ(dp_id_gpu(&inv, "GPU-2::01"), -1);
    CHECK_INT_EQ(dp_id_gpu(&inv, "GPU-2::"), -1);
    CHECK_INT_EQ(dp_id_gpu(&inv, "GPU-2::-1"), -1);
    dp_inventory_release(&inv);
}

static void visible_devices_list(void)
{
    struct dp_inventory inv;
    struct buf b = BUF_INIT(0);
    const char *two[] = {"GPU-1::2", "GPU-0::0", "GPU-1::0"};
    const char *bad[] = {"GPU-0::0", "GPU-7::0"};
    struct err e;

    inv_make(&inv, 2, 3);
    err_clear(&e);
    CHECK_INT_EQ(dp_visible_devices(&inv, two, 3, &b, &e), 0);
    CHECK_STR_EQ(b.data, "GPU-1,GPU-0");
    buf_reset(&b);
    CHECK(dp_visible_devices(&inv, bad, 2, &b, &e) < 0);
    CHECK_STR_EQ(e.msg, "unknown device ID 'GPU-7::0'");
    inv.gpus[0].healthy = false;
    snprintf(inv.gpus[0].unhealthy_reason, sizeof(inv.gpus[0].unhealthy_reason), "XID 79");
    CHECK(dp_visible_devices(&inv, two, 3, &b, &e) < 0);
    CHECK_STR_EQ(e.msg, "device 'GPU-0::0' is unhealthy (XID 79)");
    buf_release(&b);
    dp_inventory_release(&inv);
}

static void strategies_and_xids(void)
{
    unsigned s = 0;
    bool x[DP_XID_MAX];
    struct err e;

    err_clear(&e);
    CHECK_INT_EQ(dp_list_strategy_parse("envvar", &s, &e), 0);
    CHECK_INT_EQ(s, DP_LIST_ENVVAR);
    CHECK_INT_EQ(dp_list_strategy_parse("cdi-cri,envvar", &s, &e), 0);
    CHECK_INT_EQ(s, DP_LIST_ENVVAR | DP_LIST_CDI_CRI);
    CHECK(dp_list_strategy_parse("volume-mounts", &s, &e) < 0);
    CHECK_STR_EQ(e.msg, "unknown device list strategy 'volume-mounts' (want envvar, "
                        "cdi-annotations or cdi-cri, or a comma list of them)");
    CHECK(dp_list_strategy_parse("", &s, &e) < 0);
    CHECK_INT_EQ(dp_xids_parse(DP_DEFAULT_IGNORED_XIDS, x, &e), 0);
    CHECK(x[13] && x[31] && x[43] && x[45] && x[68] && x[109]);
    CHECK(!x[79] && !x[48]);
    CHECK_INT_EQ(dp_xids_parse("none", x, &e), 0);
    CHECK(!x[13]);
    CHECK(dp_xids_parse("13,x", x, &e) < 0);
    CHECK_STR_EQ(e.msg, "invalid XID 'x' (want a number from 0 to 1023)");
    CHECK(dp_xids_parse("13,,31", x, &e) < 0);
    CHECK(dp_xids_parse("5000", x, &e) < 0);
}

static const struct test_case cases[] = {
    {"preferred takes an NVLink pair", preferred_takes_an_nvlink_pair},
    {"preferred odd request keeps pairs whole", preferred_odd_request_keeps_pairs},
    {"preferred PCIe switch then NUMA node", preferred_pcie_switch_then_numa},
    {"preferred must-include and bad requests", preferred_must_include},
    {"preferred greedy on large nodes", preferred_greedy_on_large_nodes},
    {"preferred spreads replicas", preferred_spreads_replicas},
    {"device IDs and replicas", ids_and_replicas},
    {"visible devices list", visible_devices_list},
    {"list strategies and ignored XIDs", strategies_and_xids},
};
TEST_SUITE(deviceplugin, cases)
