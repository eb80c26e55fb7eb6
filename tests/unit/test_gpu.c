/* test_gpu.c - NVML detection through the real dlopen path against the fake NVML library
 * ($GPULABEL_BUILD/fake-nvml/libnvidia-ml.so.1), configured per case via $FAKE_NVML_CONFIG. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu/gpu.h"
#include "gpu/health.h"
#include "gpu/nvml.h"
#include "test.h"

static const char *fake_lib(const char *variant)
{
    static char path[4096];
    const char *build = getenv("GPULABEL_BUILD");

    snprintf(path, sizeof(path), "%s/%s/libnvidia-ml.so.1", build ? build : "build", variant);
    return path;
}

/* Points $FAKE_NVML_CONFIG at a temp file holding text (NULL: unset, the default demo GPU). */
static void fake_config(const char *text)
{
    static char path[64];

    if (path[0]) {
        unlink(path);
        path[0] = '\0';
    }
    if (!text) {
        unsetenv("FAKE_NVML_CONFIG");
        return;
    }
    snprintf(path, sizeof(path), "/tmp/gpulabel-fake-nvml-XXXXXX");
    {
        int fd = mkstemp(path);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

        if (!f) {
            test_fail(__FILE__, __LINE__, "cannot create %s", path);
            return;
        }
        fputs(text, f);
        fclose(f);
    }
    setenv("FAKE_NVML_CONFIG", path, 1);
}

/* Runs gpu_detect on the fake with config text; the inventory is the caller's to release. */
static int detect(const char *variant, const char *text, struct gpu_inventory *inv, struct err *err)
{
    int rc;

    err_clear(err);
    fake_config(text);
    rc = gpu_detect(fake_lib(variant), inv, err);
    fake_config(NULL);
    return rc;
}

static void gpu_default_demo_device(void)
{
    struct gpu_inventory inv;
    struct err err;

    CHECK_INT_EQ(detect("fake-nvml", NULL, &inv, &err), 0);
    CHECK_INT_EQ(inv.ndevices, 1);
    CHECK(inv.simulated);
    CHECK_STR_EQ(inv.driver_version, "418.67");
    CHECK_INT_EQ(inv.cuda_driver_version, 10010);
    if (inv.ndevices == 1) {
        const struct gpu_device *d = &inv.devices[0];

        CHECK_STR_EQ(d->name, "Tesla M40");
        CHECK(d->memory_known);
        CHECK_INT_EQ(d->memory_total / 1048576, 12209);
        CHECK(d->memory_total % 1048576 != 0);
        CHECK(d->cc_known);
        CHECK_INT_EQ(d->cc_major, 5);
        CHECK_INT_EQ(d->cc_minor, 2);
        CHECK(!d->mig_capable);
        CHECK(!d->mig_enabled);
        CHECK_STR_EQ(d->pci_bus_id, "00000000:00:08.0");
        CHECK(!strncmp(d->uuid, "GPU-", 4));
    }
    gpu_inventory_release(&inv);
    CHECK(inv.devices == NULL);
}

static void gpu_eight_devices(void)
{
    struct gpu_inventory inv;
    struct err err;
    size_t i;

    CHECK_INT_EQ(detect("fake-nvml",
                        "driver=550.107.02\ncuda=12050\n"
                        "device name=\"NVIDIA A100-SXM4-80GB\" memory=85899345920 cc=8.0 "
                        "mig=disabled repeat=8\n",
                        &inv, &err),
                 0);
    CHECK_INT_EQ(inv.ndevices, 8);
    CHECK_STR_EQ(inv.driver_version, "550.107.02");
    CHECK_INT_EQ(inv.cuda_driver_version, 12050);
    for (i = 0; i < inv.ndevices; i++) {
        CHECK_STR_EQ(inv.devices[i].name, "NVIDIA A100-SXM4-80GB");
        CHECK_INT_EQ(inv.devices[i].memory_total / 1048576, 81920);
        CHECK(inv.devices[i].mig_capable);
        CHECK(!inv.devices[i].mig_enabled);
    }
    if (inv.ndevices == 8)
        CHECK(strcmp(inv.devices[0].uuid, inv.devices[7].uuid) != 0);
    gpu_inventory_release(&inv);
}

static void gpu_zero_devices(void)
{
    struct gpu_inventory inv;
    struct err err;

    CHECK_INT_EQ(detect("fake-nvml", "driver=550.107.02\n", &inv, &err), 0);
    CHECK_INT_EQ(inv.ndevices, 0);
    gpu_inventory_release(&inv);
}

static void gpu_driver_not_loaded(void)
{
    struct gpu_inventory inv;
    struct err err;

    CHECK_INT_EQ(detect("fake-nvml", "init=DRIVER_NOT_LOADED\n", &inv, &err),
                 GPU_ERR_DRIVER_NOT_LOADED);
    CHECK_STR_EQ(err.msg,
                 "NVML cannot start: the NVIDIA driver is not loaded (nvmlInit_v2: Driver Not "
                 "Loaded)");
    CHECK_INT_EQ(inv.ndevices, 0);
    gpu_inventory_release(&inv);
}

static void gpu_init_other_error(void)
{
    struct gpu_inventory inv;
    struct err err;

    CHECK_INT_EQ(detect("fake-nvml", "init=NO_PERMISSION\n", &inv, &err), GPU_ERR_NVML);
    CHECK_STR_EQ(err.msg, "NVML cannot start: nvmlInit_v2: Insufficient Permissions");
    gpu_inventory_release(&inv);
}

static void gpu_count_error(void)
{
    struct gpu_inventory inv;
    struct err err;

    CHECK_INT_EQ(detect("fake-nvml", "count_error=UNKNOWN\n", &inv, &err), GPU_ERR_NVML);
    CHECK_STR_EQ(err.msg, "nvmlDeviceGetCount_v2: Unknown Error");
    gpu_inventory_release(&inv);
}

/* A lost GPU never hides the others: it is recorded with its error, the rest are read. Only
 * when every GPU is lost does the pass fail. */
static void gpu_lost_is_recorded_others_detected(void)
{
    struct gpu_inventory inv;
    struct err err;

    CHECK_INT_EQ(detect("fake-nvml",
                        "device name=\"Tesla V100-SXM2-16GB\" memory=17163091968 repeat=2\n"
                        "device name=\"Tesla V100-SXM2-16GB\" lost=1\n"
                        "device name=\"Tesla V100-SXM2-16GB\" memory=17163091968\n"
                        "device name=\"Tesla V100-SXM2-16GB\" handle_error=UNKNOWN\n",
                        &inv, &err),
                 0);
    CHECK_INT_EQ(inv.ndevices, 5);
    CHECK_INT_EQ(inv.nlost, 2);
    if (inv.ndevices == 5) {
        CHECK(!inv.devices[1].lost);
        CHECK(inv.devices[2].lost);
        CHECK_STR_EQ(inv.devices[2].error, "GPU 2: nvmlDeviceGetName: GPU is lost");
        CHECK_STR_EQ(inv.devices[2].uuid, "");
        CHECK(!inv.devices[3].lost);
        CHECK_STR_EQ(inv.devices[3].uuid, "GPU-00000000-fa4e-4e00-8000-000000000003");
        CHECK(inv.devices[4].lost);
        CHECK_STR_EQ(inv.devices[4].error, "GPU 4: nvmlDeviceGetHandleByIndex_v2: Unknown Error");
        CHECK(gpu_first_usable(&inv) == &inv.devices[0]);
    }
    gpu_inventory_release(&inv);

    CHECK_INT_EQ(
        detect("fake-nvml", "device name=\"Tesla V100-SXM2-16GB\" lost=1 repeat=2\n", &inv, &err),
        GPU_ERR_NVML);
    CHECK_STR_EQ(err.msg, "every GPU is lost: GPU 0: nvmlDeviceGetName: GPU is lost");
    CHECK(gpu_first_usable(&inv) == NULL);
    gpu_inventory_release(&inv);
}

/* The recovery state machine: unhealthy at once, healthy after a quiet period that every new
 * event restarts, twice as long after a relapse (up to 8 times), never with a period of 0. */
static void health_state_machine(void)
{
    const int64_t T = 1000;
    struct gpu_health h;

    gpu_health_init(&h);
    CHECK(h.healthy);
    CHECK(!gpu_health_due(&h, T, 0));
    CHECK(gpu_health_fail(&h, T, GPU_HEALTH_XID, 79, NULL, 10000));
    CHECK_STR_EQ(h.reason, "XID 79");
    CHECK(!h.healthy);
    CHECK(!gpu_health_due(&h, T, 10999));
    CHECK(!gpu_health_fail(&h, T, GPU_HEALTH_ECC, 0, NULL, 10500)); /* already unhealthy */
    CHECK_STR_EQ(h.reason, "double-bit ECC error");
    CHECK(!gpu_health_due(&h, T, 11499)); /* the period restarted at 10500 */
    CHECK(gpu_health_due(&h, T, 11500));
    CHECK(!gpu_health_due(&h, 0, 99999999)); /* recovery off */
    gpu_health_recover(&h, 11500);
    CHECK(h.healthy);
    CHECK_STR_EQ(h.reason, "");
    /* a relapse within 4 periods: 2 s, then 4 s, then 8 s, and no more */
    CHECK(gpu_health_fail(&h, T, GPU_HEALTH_LOST, 0, NULL, 12000));
    CHECK_STR_EQ(h.reason, "GPU is lost");
    CHECK_INT_EQ(gpu_health_quiet_ms(&h, T), 2000);
    CHECK(!gpu_health_due(&h, T, 13999));
    CHECK(gpu_health_due(&h, T, 14000));
    gpu_health_recover(&h, 14000);
    CHECK(gpu_health_fail(&h, T, GPU_HEALTH_XID, 48, "XID 48 (custom)", 14100));
    CHECK_STR_EQ(h.reason, "XID 48 (custom)");
    CHECK_INT_EQ(gpu_health_quiet_ms(&h, T), 4000);
    gpu_health_recover(&h, 18100);
    CHECK(gpu_health_fail(&h, T, GPU_HEALTH_XID, 48, NULL, 18200));
    CHECK_INT_EQ(gpu_health_quiet_ms(&h, T), 8000);
    gpu_health_recover(&h, 26200);
    CHECK(gpu_health_fail(&h, T, GPU_HEALTH_XID, 48, NULL, 26300));
    CHECK_INT_EQ(gpu_health_quiet_ms(&h, T), 8000);
    /* a fall long after the last recovery starts from one period again */
    gpu_health_recover(&h, 40000);
    CHECK(gpu_health_fail(&h, T, GPU_HEALTH_XID, 48, NULL, 40000 + 4 * 8000));
    CHECK_INT_EQ(gpu_health_quiet_ms(&h, T), 1000);
}

/* The re-probe through the fake NVML: a lost GPU, then one whose driver asks for a reset. */
static void health_probe(void)
{
    struct gpu_nvml n;
    nvmlDevice_t d[2];
    char why[160], path[] = "/tmp/gpulabel-fake-events-XXXXXX";
    struct err err;
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

    CHECK(f != NULL);
    if (!f)
        return;
    setenv("FAKE_NVML_EVENTS", path, 1);
    fake_config("device name=\"Tesla M40\" repeat=2\n");
    err_clear(&err);
    CHECK_INT_EQ(gpu_nvml_open(fake_lib("fake-nvml"), &n, &err), 0);
    CHECK_INT_EQ(n.init(), 0);
    CHECK_INT_EQ(n.device_get_handle_by_index(0, &d[0]), 0);
    CHECK_INT_EQ(n.device_get_handle_by_index(1, &d[1]), 0);
    CHECK_INT_EQ(gpu_health_probe(&n, d[0], d[0], why, sizeof(why)), 0);
    fputs("lost 0\nxid 1 79 reset\n", f);
    fflush(f);
    CHECK_INT_EQ(gpu_health_probe(&n, d[0], d[0], why, sizeof(why)), -EAGAIN);
    CHECK_STR_EQ(why, "GPU is lost");
    CHECK_INT_EQ(gpu_health_probe(&n, d[1], d[1], why, sizeof(why)), -EAGAIN);
    CHECK_STR_EQ(why, "the driver asks for a GPU reset (NVML recovery action 1)");
    fputs("found 0\nclear 1\n", f);
    fflush(f);
    CHECK_INT_EQ(gpu_health_probe(&n, d[0], d[0], why, sizeof(why)), 0);
    CHECK_INT_EQ(gpu_health_probe(&n, d[1], d[1], why, sizeof(why)), 0);
    n.shutdown();
    gpu_nvml_close(&n);
    fclose(f);
    unlink(path);
    unsetenv("FAKE_NVML_EVENTS");
    fake_config(NULL);
}

static void gpu_handle_error(void)
{
    struct gpu_inventory inv;
    struct err err;

    CHECK_INT_EQ(detect("fake-nvml", "device name=\"Tesla M40\" handle_error=INSUFFICIENT_POWER\n",
                        &inv, &err),
                 GPU_ERR_NVML);
    CHECK_STR_EQ(err.msg, "GPU 0: nvmlDeviceGetHandleByIndex_v2: Insufficient External Power");
    gpu_inventory_release(&inv);
}

static void gpu_memory_not_supported(void)
{
    struct gpu_inventory inv;
    struct err err;

    CHECK_INT_EQ(detect("fake-nvml",
                        "device name=\"NVIDIA GB10\" memory_error=NOT_SUPPORTED cc=12.1\n"
                        "device name=\"NVIDIA GB10\" memory_error=NO_PERMISSION cc=12.1\n",
                        &inv, &err),
                 0);
    CHECK_INT_EQ(inv.ndevices, 2);
    if (inv.ndevices == 2) {
        CHECK(!inv.devices[0].memory_known);
        CHECK(!inv.devices[1].memory_known);
        CHECK_STR_EQ(inv.devices[0].name, "NVIDIA GB10");
    }
    gpu_inventory_release(&inv);
}

static void gpu_mig_modes(void)
{
    struct gpu_inventory inv;
    struct err err;

    CHECK_INT_EQ(detect("fake-nvml",
                        "device name=\"NVIDIA H100 80GB HBM3\" memory=85520809984 cc=9.0 "
                        "mig=enabled\n"
                        "device name=\"NVIDIA H100 80GB HBM3\" memory=85520809984 cc=9.0 "
                        "mig=disabled\n"
                        "device name=\"Tesla M40\" memory=12802064384 cc=5.2\n",
                        &inv, &err),
                 0);
    CHECK_INT_EQ(inv.ndevices, 3);
    if (inv.ndevices == 3) {
        CHECK(inv.devices[0].mig_capable && inv.devices[0].mig_enabled);
        CHECK(inv.devices[1].mig_capable && !inv.devices[1].mig_enabled);
        CHECK(!inv.devices[2].mig_capable && !inv.devices[2].mig_enabled);
        CHECK_INT_EQ(inv.devices[0].memory_total / 1048576, 81559);
    }
    gpu_inventory_release(&inv);
}

static void gpu_non_ascii_name_passes_through(void)
{
    struct gpu_inventory inv;
    struct err err;

    CHECK_INT_EQ(
        detect("fake-nvml", "device name=\"NVIDIA GeForce RTX\\xe2\\x84\\xa2 3090\"\n", &inv, &err),
        0);
    if (inv.ndevices == 1)
        CHECK_STR_EQ(inv.devices[0].name, "NVIDIA GeForce RTX\xe2\x84\xa2 3090");
    gpu_inventory_release(&inv);
}

/* An old driver lacks the optional symbols: dlsym fails for them and detection carries on. */
static void gpu_old_driver_missing_symbols(void)
{
    struct gpu_inventory inv;
    struct err err;

    CHECK_INT_EQ(detect("fake-nvml-old",
                        "driver=384.81\ncuda=9000\n"
                        "device name=\"Tesla P100-PCIE-16GB\" memory=17071734784 cc=6.0 "
                        "mig=disabled\n",
                        &inv, &err),
                 0);
    CHECK_INT_EQ(inv.ndevices, 1);
    CHECK_STR_EQ(inv.driver_version, "384.81");
    CHECK_INT_EQ(inv.cuda_driver_version, 0); /* nvmlSystemGetCudaDriverVersion missing */
    if (inv.ndevices == 1) {
        CHECK(!inv.devices[0].cc_known);
        CHECK(!inv.devices[0].mig_capable);
        CHECK_STR_EQ(inv.devices[0].pci_bus_id, "");
        CHECK(inv.devices[0].memory_known);
    }
    gpu_inventory_release(&inv);
}

/* Without nvmlErrorString the messages come from our own table. */
static void gpu_old_driver_error_strings(void)
{
    struct gpu_inventory inv;
    struct err err;

    CHECK_INT_EQ(detect("fake-nvml-old", "device name=\"Tesla M40\" lost=1\n", &inv, &err),
                 GPU_ERR_NVML);
    CHECK_STR_EQ(err.msg, "GPU 0: nvmlDeviceGetName: GPU is lost");
    gpu_inventory_release(&inv);
}

static void gpu_missing_library(void)
{
    struct gpu_inventory inv;
    struct err err;

    err_clear(&err);
    CHECK_INT_EQ(gpu_detect("/nonexistent/libnvidia-ml.so.1", &inv, &err), GPU_ERR_NO_LIBRARY);
    CHECK(!strncmp(err.msg, "cannot load NVML library '/nonexistent/libnvidia-ml.so.1': ", 59));
    CHECK(strstr(err.msg, "No such file") != NULL);
    gpu_inventory_release(&inv);
}

static void gpu_not_an_nvml_library(void)
{
    struct gpu_inventory inv;
    struct err err;

    err_clear(&err);
    CHECK_INT_EQ(gpu_detect("libm.so.6", &inv, &err), GPU_ERR_NO_LIBRARY);
    CHECK(strstr(err.msg, "has no symbol 'nvmlInit_v2'") != NULL);
    gpu_inventory_release(&inv);
}

/* nvmlShutdown follows every successful nvmlInit_v2, on success and on failure. */
static void gpu_shutdown_always_follows_init(void)
{
    static const char *const configs[] = {
        "device name=\"Tesla M40\" memory=1\n",
        "device name=\"Tesla M40\" lost=1\n",
        "count_error=UNKNOWN\n",
        "",
    };
    void *dl = dlopen(fake_lib("fake-nvml"), RTLD_NOW | RTLD_LOCAL);
    int (*active)(void) = NULL;
    void *sym;
    size_t i;

    CHECK(dl != NULL);
    if (!dl)
        return;
    sym = dlsym(dl, "fake_nvml_active_inits");
    memcpy(&active, &sym, sizeof(active));
    CHECK(active != NULL);
    for (i = 0; active && i < sizeof(configs) / sizeof(configs[0]); i++) {
        struct gpu_inventory inv;
        struct err err;

        detect("fake-nvml", configs[i], &inv, &err);
        CHECK_INT_EQ(active(), 0);
        gpu_inventory_release(&inv);
    }
    dlclose(dl);
}

/* A broken test configuration must not look like a working node. */
static void gpu_fake_bad_config(void)
{
    struct gpu_inventory inv;
    struct err err;

    CHECK_INT_EQ(detect("fake-nvml", "device name=\"Tesla M40\" colour=green\n", &inv, &err),
                 GPU_ERR_NVML);
    CHECK_STR_EQ(err.msg, "NVML cannot start: nvmlInit_v2: Unknown Error");
    gpu_inventory_release(&inv);
}

static void gpu_release_null(void)
{
    gpu_inventory_release(NULL);
    CHECK(1);
}

static const struct test_case cases[] = {
    {"default demo device", gpu_default_demo_device},
    {"eight devices", gpu_eight_devices},
    {"zero devices", gpu_zero_devices},
    {"driver not loaded", gpu_driver_not_loaded},
    {"init other error", gpu_init_other_error},
    {"count error", gpu_count_error},
    {"lost GPU recorded, others detected", gpu_lost_is_recorded_others_detected},
    {"handle error", gpu_handle_error},
    {"health state machine", health_state_machine},
    {"health re-probe", health_probe},
    {"memory not supported", gpu_memory_not_supported},
    {"MIG modes", gpu_mig_modes},
    {"non-ASCII name passes through", gpu_non_ascii_name_passes_through},
    {"old driver missing symbols", gpu_old_driver_missing_symbols},
    {"old driver error strings", gpu_old_driver_error_strings},
    {"missing library", gpu_missing_library},
    {"not an NVML library", gpu_not_an_nvml_library},
    {"shutdown always follows init", gpu_shutdown_always_follows_init},
    {"fake bad config", gpu_fake_bad_config},
    {"release NULL", gpu_release_null},
};

TEST_SUITE(gpu, cases)
