/* test_labels.c - label-value sanitising, the ack and gfd schemas from hand-built inventories,
 * the label set, feature-file writing and Go-style durations. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "gpu/gpu.h"
#include "kube/labels.h"
#include "labeler/config.h"
#include "labeler/labels.h"
#include "labeler/sanitize.h"
#include "test.h"

#define MiB 1048576ull

static const char name100[] =
    "NVIDIA Imaginary Accelerator Ultra Extreme Edition With An Extraordinarily Long "
    "Product Name 1234567";

static void sanitize_real_product_names(void)
{
    static const struct {
        const char *in, *want;
    } t[] = {
        {"Tesla M40", "Tesla-M40"},
        {"Tesla V100-SXM2-16GB", "Tesla-V100-SXM2-16GB"},
        {"NVIDIA A100-SXM4-80GB", "NVIDIA-A100-SXM4-80GB"},
        {"NVIDIA H100 80GB HBM3", "NVIDIA-H100-80GB-HBM3"},
        {"NVIDIA GeForce RTX 3090", "NVIDIA-GeForce-RTX-3090"},
        {"NVIDIA TITAN X (Pascal)", "NVIDIA-TITAN-X-Pascal"},
        {"NVIDIA A100 80GB PCIe", "NVIDIA-A100-80GB-PCIe"},
        {"NVIDIA RTX PRO 6000 Blackwell Server Edition",
         "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition"},
    };
    size_t i;

    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        char out[64];

        CHECK_STR_EQ(labeler_value_sanitize(t[i].in, out, sizeof(out)), t[i].want);
        CHECK(!kube_label_value_validate(out, NULL));
    }
}

static void sanitize_invalid_characters(void)
{
    static const struct {
        const char *in, *want;
    } t[] = {
        {"some / thing /else", "some-thing-else"},
        {" input  with multiple   spaces   ", "input-with-multiple-spaces"},
        {"some(thing)else", "somethingelse"},
        {"X9SRA/X9SRA-3", "X9SRAX9SRA-3"},
        {"NVIDIA GeForce RTX\xe2\x84\xa2 4090", "NVIDIA-GeForce-RTX-4090"},
        {"Caf\xc3\xa9 GPU", "Caf-GPU"},
        {"\xff\xfe", ""},
        {"(Pascal)", "Pascal"},
        {"--_.x._--", "x"},
        {"---", ""},
        {"", ""},
        {"a\tb\nc", "a-b-c"},
        {"A - B", "A---B"},
        {"PowerEdge XE9680\n", "PowerEdge-XE9680"},
    };
    size_t i;

    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        char out[64];

        CHECK_STR_EQ(labeler_value_sanitize(t[i].in, out, sizeof(out)), t[i].want);
        CHECK(!kube_label_value_validate(out, NULL));
    }
}

static void sanitize_truncates_to_63_valid(void)
{
    char out[64];

    CHECK_INT_EQ(strlen(name100), 100);
    labeler_value_sanitize(name100, out, sizeof(out));
    CHECK_INT_EQ(strlen(out), 63);
    CHECK_STR_EQ(out, "NVIDIA-Imaginary-Accelerator-Ultra-Extreme-Edition-With-An-Extr");
    CHECK(!kube_label_value_validate(out, NULL));
    /* the 63rd character is '.', so the cut leaves it off too (NVIDIA/k8s-device-plugin#1880) */
    labeler_value_sanitize("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition MIG 1g.24gb",
                           out, sizeof(out));
    CHECK_STR_EQ(out, "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edition-MIG-1g");
    CHECK(!kube_label_value_validate(out, NULL));
    /* a cut right after a whitespace run never leaves a trailing '-' */
    labeler_value_sanitize("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  b", out,
                           sizeof(out));
    CHECK_INT_EQ(strlen(out), 62);
    CHECK(!kube_label_value_validate(out, NULL));
    /* a small output buffer truncates further, still valid */
    labeler_value_sanitize("Tesla M40", out, 7);
    CHECK_STR_EQ(out, "Tesla");
}

static void value_validity(void)
{
    CHECK(!kube_label_value_validate("", NULL));
    CHECK(!kube_label_value_validate("a", NULL));
    CHECK(!kube_label_value_validate("12209MiB", NULL));
    CHECK(!kube_label_value_validate("a-b_c.d", NULL));
    CHECK(kube_label_value_validate("-a", NULL));
    CHECK(kube_label_value_validate("a-", NULL));
    CHECK(kube_label_value_validate("a b", NULL));
    CHECK(kube_label_value_validate("NVIDIA-TITAN-X-(Pascal)", NULL));
    CHECK(kube_label_value_validate("X9SRA/X9SRA-3", NULL));
    CHECK(!kube_label_value_validate(
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", NULL));
    CHECK(kube_label_value_validate(
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", NULL));
}

/* --- schemas from inventories --- */

static struct gpu_device dev(const char *name, unsigned long long mem, int cc_major, int cc_minor)
{
    struct gpu_device d;

    memset(&d, 0, sizeof(d));
    snprintf(d.name, sizeof(d.name), "%s", name);
    d.memory_total = mem;
    d.memory_known = mem != 0;
    d.cc_major = cc_major;
    d.cc_minor = cc_minor;
    d.cc_known = cc_major > 0;
    return d;
}

static int labels_of(struct gpu_device *devs, size_t n, unsigned schemas,
                     struct labeler_labels *out)
{
    struct gpu_inventory inv;
    struct err err;

    memset(&inv, 0, sizeof(inv));
    inv.devices = devs;
    inv.ndevices = n;
    snprintf(inv.driver_version, sizeof(inv.driver_version), "550.107.02");
    inv.cuda_driver_version = 12050;
    err_clear(&err);
    return labeler_labels_from_inventory(&inv, schemas, "/nonexistent/product_name", out, &err);
}

static void ack_seed_tesla_m40(void)
{
    struct gpu_device d[1] = {dev("Tesla M40", 12209 * MiB + 393216, 5, 2)};
    struct labeler_labels l = {0};

    CHECK_INT_EQ(labels_of(d, 1, LABELER_SCHEMA_ACK, &l), 0);
    CHECK_INT_EQ(l.n, 3);
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_count"), "1");
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_mem"), "12209MiB");
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_name"), "Tesla-M40");
    labeler_labels_release(&l);
}

/* A lost GPU (NVML cannot read it) is left out: the labels describe the GPUs that answer, the
 * first of them gives name and memory (docs/labels.md, "A GPU NVML cannot read"). */
static void lost_gpus_are_left_out(void)
{
    struct gpu_device d[4] = {
        dev("Tesla M40", 12209 * MiB, 5, 2),
        dev("NVIDIA A100-SXM4-40GB", 40960 * MiB, 8, 0),
        dev("NVIDIA A100-SXM4-40GB", 40960 * MiB, 8, 0),
        dev("NVIDIA A100-SXM4-40GB", 40960 * MiB, 8, 0),
    };
    struct gpu_inventory inv;
    struct labeler_labels l = {0};
    struct err err;

    memset(&d[0], 0, sizeof(d[0]));
    d[0].lost = true;
    snprintf(d[0].error, sizeof(d[0].error), "GPU 0: nvmlDeviceGetName: GPU is lost");
    memset(&d[2], 0, sizeof(d[2]));
    d[2].lost = true;
    memset(&inv, 0, sizeof(inv));
    inv.devices = d;
    inv.ndevices = 4;
    inv.nlost = 2;
    err_clear(&err);
    CHECK_INT_EQ(labeler_labels_from_inventory(&inv, LABELER_SCHEMA_ACK | LABELER_SCHEMA_GFD,
                                               "/nonexistent/product_name", &l, &err),
                 0);
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_count"), "2");
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_name"), "NVIDIA-A100-SXM4-40GB");
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_mem"), "40960MiB");
    CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/gpu.count"), "2");
    CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/gpu.product"), "NVIDIA-A100-SXM4-40GB");
    CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/gpu.compute.major"), "8");
    /* every GPU lost: nothing to describe */
    d[1].lost = d[3].lost = true;
    inv.nlost = 4;
    CHECK_INT_EQ(labeler_labels_from_inventory(&inv, LABELER_SCHEMA_ACK, NULL, &l, &err), 0);
    CHECK_INT_EQ(l.n, 0);
    labeler_labels_release(&l);
}

static void ack_memory_rounds_down(void)
{
    static const struct {
        unsigned long long bytes;
        const char *want;
    } t[] = {
        {12209 * MiB + MiB - 1, "12209MiB"},
        {85520809984ull, "81559MiB"}, /* H100 80GB HBM3 */
        {24146608128ull, "23028MiB"}, /* A10 */
        {MiB - 1, "0MiB"},
    };
    size_t i;

    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        struct gpu_device d[1] = {dev("NVIDIA A10", t[i].bytes, 8, 6)};
        struct labeler_labels l = {0};

        CHECK_INT_EQ(labels_of(d, 1, LABELER_SCHEMA_ACK, &l), 0);
        CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_mem"), t[i].want);
        labeler_labels_release(&l);
    }
}

static void ack_eight_gpus(void)
{
    struct gpu_device d[8];
    struct labeler_labels l = {0};
    size_t i;

    for (i = 0; i < 8; i++)
        d[i] = dev("NVIDIA H100 80GB HBM3", 85520809984ull, 9, 0);
    CHECK_INT_EQ(labels_of(d, 8, LABELER_SCHEMA_ACK, &l), 0);
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_count"), "8");
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_name"), "NVIDIA-H100-80GB-HBM3");
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_mem"), "81559MiB");
    labeler_labels_release(&l);
}

/* Mixed models: name and memory of GPU 0, ack count = every GPU, gfd count = GPU 0's model. */
static void mixed_models_take_gpu0(void)
{
    struct gpu_device d[3] = {
        dev("NVIDIA A100-SXM4-80GB", 81920 * MiB, 8, 0),
        dev("NVIDIA DGX Display", 4096 * MiB, 8, 6),
        dev("NVIDIA A100-SXM4-80GB", 81920 * MiB, 8, 0),
    };
    struct labeler_labels l = {0};

    CHECK_INT_EQ(labels_of(d, 3, LABELER_SCHEMA_ACK | LABELER_SCHEMA_GFD, &l), 0);
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_count"), "3");
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_name"), "NVIDIA-A100-SXM4-80GB");
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_mem"), "81920MiB");
    CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/gpu.count"), "2");
    CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/gpu.product"), "NVIDIA-A100-SXM4-80GB");
    CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/gpu.memory"), "81920");
    CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/gpu.family"), "ampere");
    labeler_labels_release(&l);

    /* the same GPUs in another index order: still GPU 0, deterministically */
    d[0] = dev("NVIDIA DGX Display", 4096 * MiB, 8, 6);
    d[1] = dev("NVIDIA A100-SXM4-80GB", 81920 * MiB, 8, 0);
    CHECK_INT_EQ(labels_of(d, 3, LABELER_SCHEMA_ACK | LABELER_SCHEMA_GFD, &l), 0);
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_name"), "NVIDIA-DGX-Display");
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_mem"), "4096MiB");
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_count"), "3");
    CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/gpu.count"), "1");
    labeler_labels_release(&l);
}

static void mig_counts_physical_gpus(void)
{
    struct gpu_device d[4];
    struct labeler_labels l = {0};
    size_t i;

    for (i = 0; i < 4; i++) {
        d[i] = dev("NVIDIA A100-SXM4-80GB", 81920 * MiB, 8, 0);
        d[i].mig_capable = true;
        d[i].mig_enabled = i < 2;
    }
    CHECK_INT_EQ(labels_of(d, 4, LABELER_SCHEMA_ACK | LABELER_SCHEMA_GFD, &l), 0);
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_count"), "4");
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_mem"), "81920MiB");
    CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/gpu.count"), "4");
    CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/mig.capable"), "true");
    CHECK(labeler_labels_get(&l, "nvidia.com/mig.strategy") == NULL);
    labeler_labels_release(&l);
}

static void memory_unknown_is_omitted(void)
{
    struct gpu_device d[1] = {dev("NVIDIA GB10", 0, 12, 1)};
    struct labeler_labels l = {0};

    CHECK_INT_EQ(labels_of(d, 1, LABELER_SCHEMA_ACK | LABELER_SCHEMA_GFD, &l), 0);
    CHECK(labeler_labels_get(&l, "aliyun.accelerator/nvidia_mem") == NULL);
    CHECK(labeler_labels_get(&l, "nvidia.com/gpu.memory") == NULL);
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_name"), "NVIDIA-GB10");
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_count"), "1");
    CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/gpu.family"), "blackwell");
    labeler_labels_release(&l);
}

static void zero_gpus_no_labels(void)
{
    struct labeler_labels l = {0};

    CHECK_INT_EQ(labels_of(NULL, 0, LABELER_SCHEMA_ACK | LABELER_SCHEMA_GFD, &l), 0);
    CHECK_INT_EQ(l.n, 0);
    labeler_labels_release(&l);
}

static void unusable_name_becomes_unknown(void)
{
    struct gpu_device d[1] = {dev("\xe6\x98\xbe\xe5\x8d\xa1", 1024 * MiB, 0, 0)};
    struct labeler_labels l = {0};

    CHECK_INT_EQ(labels_of(d, 1, LABELER_SCHEMA_ACK, &l), 0);
    CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_name"), "unknown");
    labeler_labels_release(&l);
}

static void long_and_odd_names_valid(void)
{
    static const char *const names[] = {name100, "NVIDIA TITAN X (Pascal)", "GPU/with/slashes",
                                        "Caf\xc3\xa9 (\xe2\x84\xa2) GPU"};
    size_t i, j;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        struct gpu_device d[1] = {dev(names[i], 1024 * MiB, 7, 5)};
        struct labeler_labels l = {0};

        CHECK_INT_EQ(labels_of(d, 1, LABELER_SCHEMA_ACK | LABELER_SCHEMA_GFD, &l), 0);
        for (j = 0; j < l.n; j++)
            CHECK(!kube_label_value_validate(l.v[j].value, NULL));
        CHECK_STR_EQ(labeler_labels_get(&l, "aliyun.accelerator/nvidia_name"),
                     labeler_labels_get(&l, "nvidia.com/gpu.product"));
        labeler_labels_release(&l);
    }
}

static void gfd_full_set(void)
{
    static const char *const want[] = {
        "nvidia.com/cuda.driver-version.full=550.107.02",
        "nvidia.com/cuda.driver-version.major=550",
        "nvidia.com/cuda.driver-version.minor=107",
        "nvidia.com/cuda.driver-version.revision=02",
        "nvidia.com/cuda.driver.major=550",
        "nvidia.com/cuda.driver.minor=107",
        "nvidia.com/cuda.driver.rev=02",
        "nvidia.com/cuda.runtime-version.full=12.5",
        "nvidia.com/cuda.runtime-version.major=12",
        "nvidia.com/cuda.runtime-version.minor=5",
        "nvidia.com/cuda.runtime.major=12",
        "nvidia.com/cuda.runtime.minor=5",
        "nvidia.com/gpu.compute.major=7",
        "nvidia.com/gpu.compute.minor=0",
        "nvidia.com/gpu.count=2",
        "nvidia.com/gpu.family=volta",
        "nvidia.com/gpu.machine=unknown",
        "nvidia.com/gpu.memory=16130",
        "nvidia.com/gpu.product=Tesla-V100-SXM2-16GB",
        "nvidia.com/gpu.replicas=1",
        "nvidia.com/gpu.sharing-strategy=none",
        "nvidia.com/mig.capable=false",
        "nvidia.com/mps.capable=false",
    };
    struct gpu_device d[2] = {dev("Tesla V100-SXM2-16GB", 16130 * MiB, 7, 0),
                              dev("Tesla V100-SXM2-16GB", 16130 * MiB, 7, 0)};
    struct labeler_labels l = {0};
    size_t i;

    CHECK_INT_EQ(labels_of(d, 2, LABELER_SCHEMA_GFD, &l), 0);
    CHECK_INT_EQ(l.n, sizeof(want) / sizeof(want[0]));
    for (i = 0; i < l.n && i < sizeof(want) / sizeof(want[0]); i++) {
        char line[256];

        snprintf(line, sizeof(line), "%s=%s", l.v[i].key, l.v[i].value);
        CHECK_STR_EQ(line, want[i]);
        CHECK(labeler_key_in_schemas(l.v[i].key, LABELER_SCHEMA_GFD));
        CHECK(!labeler_key_in_schemas(l.v[i].key, LABELER_SCHEMA_ACK));
    }
    labeler_labels_release(&l);
}

static void gfd_family_table(void)
{
    static const struct {
        int major, minor;
        const char *want;
    } t[] = {
        {1, 3, "tesla"},      {2, 1, "fermi"},      {3, 7, "kepler"},       {5, 2, "maxwell"},
        {6, 1, "pascal"},     {7, 0, "volta"},      {7, 2, "volta"},        {7, 5, "turing"},
        {8, 0, "ampere"},     {8, 6, "ampere"},     {8, 9, "ada-lovelace"}, {9, 0, "hopper"},
        {10, 0, "blackwell"}, {12, 0, "blackwell"}, {13, 0, "rubin"},       {4, 0, "undefined"},
        {11, 0, "undefined"}, {99, 0, "undefined"},
    };
    size_t i;

    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        struct gpu_device d[1] = {dev("GPU", MiB, t[i].major, t[i].minor)};
        struct labeler_labels l = {0};

        CHECK_INT_EQ(labels_of(d, 1, LABELER_SCHEMA_GFD, &l), 0);
        CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/gpu.family"), t[i].want);
        labeler_labels_release(&l);
    }
}

static void gfd_no_compute_capability(void)
{
    struct gpu_device d[1] = {dev("Tesla M40", MiB, 0, 0)};
    struct labeler_labels l = {0};

    CHECK_INT_EQ(labels_of(d, 1, LABELER_SCHEMA_GFD, &l), 0);
    CHECK(labeler_labels_get(&l, "nvidia.com/gpu.family") == NULL);
    CHECK(labeler_labels_get(&l, "nvidia.com/gpu.compute.major") == NULL);
    CHECK(labeler_labels_get(&l, "nvidia.com/gpu.compute.minor") == NULL);
    labeler_labels_release(&l);
}

static void gfd_driver_versions(void)
{
    static const struct {
        const char *version;
        const char *major, *minor, *rev; /* NULL: labels left out */
    } t[] = {
        {"550.107.02", "550", "107", "02"}, {"418.67", "418", "67", ""},
        {"455.06", "455", "06", ""},        {"1.2.3.4", NULL, NULL, NULL},
        {"550", NULL, NULL, NULL},          {"", NULL, NULL, NULL},
        {"550..1", NULL, NULL, NULL},       {"550.1a b.2", NULL, NULL, NULL},
    };
    size_t i;

    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        struct gpu_device d[1] = {dev("GPU", MiB, 8, 0)};
        struct gpu_inventory inv;
        struct labeler_labels l = {0};
        struct err err;

        memset(&inv, 0, sizeof(inv));
        inv.devices = d;
        inv.ndevices = 1;
        snprintf(inv.driver_version, sizeof(inv.driver_version), "%s", t[i].version);
        CHECK_INT_EQ(
            labeler_labels_from_inventory(&inv, LABELER_SCHEMA_GFD, "/nonexistent", &l, &err), 0);
        if (t[i].major) {
            CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/cuda.driver.major"), t[i].major);
            CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/cuda.driver.minor"), t[i].minor);
            CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/cuda.driver.rev"), t[i].rev);
            CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/cuda.driver-version.major"),
                         t[i].major);
            CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/cuda.driver-version.minor"),
                         t[i].minor);
            CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/cuda.driver-version.revision"),
                         t[i].rev);
            CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/cuda.driver-version.full"),
                         t[i].version);
        } else {
            CHECK(labeler_labels_get(&l, "nvidia.com/cuda.driver.major") == NULL);
            CHECK(labeler_labels_get(&l, "nvidia.com/cuda.driver-version.full") == NULL);
        }
        /* no CUDA version known: no runtime labels */
        CHECK(labeler_labels_get(&l, "nvidia.com/cuda.runtime-version.full") == NULL);
        labeler_labels_release(&l);
    }
}

static void gfd_runtime_versions(void)
{
    static const struct {
        int v;
        const char *major, *minor, *full;
    } t[] = {
        {12050, "12", "5", "12.5"},
        {10010, "10", "1", "10.1"},
        {11080, "11", "8", "11.8"},
        {13000, "13", "0", "13.0"},
    };
    size_t i;

    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        struct gpu_device d[1] = {dev("GPU", MiB, 8, 0)};
        struct gpu_inventory inv;
        struct labeler_labels l = {0};

        memset(&inv, 0, sizeof(inv));
        inv.devices = d;
        inv.ndevices = 1;
        inv.cuda_driver_version = t[i].v;
        CHECK_INT_EQ(
            labeler_labels_from_inventory(&inv, LABELER_SCHEMA_GFD, "/nonexistent", &l, NULL), 0);
        CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/cuda.runtime.major"), t[i].major);
        CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/cuda.runtime.minor"), t[i].minor);
        CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/cuda.runtime-version.major"), t[i].major);
        CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/cuda.runtime-version.minor"), t[i].minor);
        CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/cuda.runtime-version.full"), t[i].full);
        labeler_labels_release(&l);
    }
}

static void temp_dir(char *path, size_t size)
{
    snprintf(path, size, "/tmp/gpulabel-test-XXXXXX");
    if (!mkdtemp(path))
        test_fail(__FILE__, __LINE__, "mkdtemp failed");
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    if (!f) {
        test_fail(__FILE__, __LINE__, "cannot write %s", path);
        return;
    }
    fputs(text, f);
    fclose(f);
}

static void gfd_machine_type(void)
{
    static const struct {
        const char *content, *want;
    } t[] = {
        {"PowerEdge XE9680\n", "PowerEdge-XE9680"},
        {"X9SRA/X9SRA-3\n", "X9SRAX9SRA-3"},
        {"NVIDIA DGX-2H", "NVIDIA-DGX-2H"},
        {"g4dn.xlarge\n", "g4dn.xlarge"},
        {"\n", "unknown"},
    };
    char dir[64], path[128];
    size_t i;

    temp_dir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/product_name", dir);
    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        struct gpu_device d[1] = {dev("GPU", MiB, 8, 0)};
        struct gpu_inventory inv;
        struct labeler_labels l = {0};

        write_text(path, t[i].content);
        memset(&inv, 0, sizeof(inv));
        inv.devices = d;
        inv.ndevices = 1;
        CHECK_INT_EQ(labeler_labels_from_inventory(&inv, LABELER_SCHEMA_GFD, path, &l, NULL), 0);
        CHECK_STR_EQ(labeler_labels_get(&l, "nvidia.com/gpu.machine"), t[i].want);
        labeler_labels_release(&l);
    }
    unlink(path);
    rmdir(dir);
}

/* --- the set --- */

static void set_sorted_unique_validated(void)
{
    struct labeler_labels l = {0};
    struct err err;
    size_t i;

    err_clear(&err);
    CHECK_INT_EQ(labeler_labels_set(&l, "b", "2", &err), 0);
    CHECK_INT_EQ(labeler_labels_set(&l, "a", "1", &err), 0);
    CHECK_INT_EQ(labeler_labels_set(&l, "c", "3", &err), 0);
    CHECK_INT_EQ(labeler_labels_set(&l, "b", "22", &err), 0);
    CHECK_INT_EQ(l.n, 3);
    CHECK_STR_EQ(l.v[0].key, "a");
    CHECK_STR_EQ(l.v[1].value, "22");
    CHECK_STR_EQ(l.v[2].key, "c");
    CHECK(labeler_labels_set(&l, "d", "NVIDIA-TITAN-X-(Pascal)", &err) < 0);
    CHECK(strstr(err.msg, "invalid value") != NULL);
    CHECK(labeler_labels_set(&l, "", "x", &err) < 0);
    CHECK_INT_EQ(l.n, 3);
    for (i = 0; i < 40; i++) {
        char key[16];

        snprintf(key, sizeof(key), "k%02zu", 39 - i);
        CHECK_INT_EQ(labeler_labels_set(&l, key, "v", &err), 0);
    }
    CHECK_INT_EQ(l.n, 43);
    for (i = 1; i < l.n; i++)
        CHECK(strcmp(l.v[i - 1].key, l.v[i].key) < 0);
    CHECK(labeler_labels_get(&l, "zz") == NULL);
    labeler_labels_release(&l);
    CHECK_INT_EQ(l.n, 0);
    labeler_labels_release(NULL);
}

static void key_in_schemas(void)
{
    CHECK(labeler_key_in_schemas("aliyun.accelerator/nvidia_count", LABELER_SCHEMA_ACK));
    CHECK(labeler_key_in_schemas("aliyun.accelerator/nvidia_mem", LABELER_SCHEMA_ACK));
    CHECK(labeler_key_in_schemas("aliyun.accelerator/nvidia_name", LABELER_SCHEMA_ACK));
    CHECK(!labeler_key_in_schemas("aliyun.accelerator/nvidia_name", LABELER_SCHEMA_GFD));
    CHECK(!labeler_key_in_schemas("aliyun.accelerator/xpu_type", LABELER_SCHEMA_ACK));
    CHECK(!labeler_key_in_schemas("aliyun.accelerator/nvidia_name", 0));
    CHECK(labeler_key_in_schemas("nvidia.com/gpu.product", LABELER_SCHEMA_GFD));
    CHECK(labeler_key_in_schemas("nvidia.com/cuda.driver.rev", LABELER_SCHEMA_GFD));
    CHECK(!labeler_key_in_schemas("nvidia.com/gpu.product", LABELER_SCHEMA_ACK));
    CHECK(!labeler_key_in_schemas("nvidia.com/gfd.timestamp", LABELER_SCHEMA_GFD));
    CHECK(labeler_key_in_schemas("nvidia.com/gpu.present", LABELER_SCHEMA_GFD));
    CHECK(labeler_key_in_schemas("nvidia.com/mig-1g.5gb.count", LABELER_SCHEMA_GFD));
    CHECK(labeler_key_in_schemas("nvidia.com/mig-2c.3g.20gb.engines.ofa", LABELER_SCHEMA_GFD));
    CHECK(!labeler_key_in_schemas("nvidia.com/mig-1g.5gb.bogus", LABELER_SCHEMA_GFD));
    CHECK(!labeler_key_in_schemas("nvidia.com/mig-x.count", LABELER_SCHEMA_GFD));
    CHECK(!labeler_key_in_schemas("nvidia.com/mig.config", LABELER_SCHEMA_GFD));
    CHECK(!labeler_key_in_schemas("nvidia.com/mig-1g.5gb.count", LABELER_SCHEMA_ACK));
    CHECK(
        !labeler_key_in_schemas("kubernetes.io/hostname", LABELER_SCHEMA_ACK | LABELER_SCHEMA_GFD));
    CHECK(!labeler_key_in_schemas(NULL, LABELER_SCHEMA_ACK));
}

static void schemas_parse(void)
{
    unsigned bits = 0;
    struct err err;

    err_clear(&err);
    CHECK_INT_EQ(labeler_schemas_parse("ack", &bits, &err), 0);
    CHECK_INT_EQ(bits, LABELER_SCHEMA_ACK);
    CHECK_INT_EQ(labeler_schemas_parse("gfd", &bits, &err), 0);
    CHECK_INT_EQ(bits, LABELER_SCHEMA_GFD);
    CHECK_INT_EQ(labeler_schemas_parse("ack,gfd", &bits, &err), 0);
    CHECK_INT_EQ(bits, LABELER_SCHEMA_ACK | LABELER_SCHEMA_GFD);
    CHECK_INT_EQ(labeler_schemas_parse("gfd,ack", &bits, &err), 0);
    CHECK_INT_EQ(bits, LABELER_SCHEMA_ACK | LABELER_SCHEMA_GFD);
    CHECK(labeler_schemas_parse("nfd", &bits, &err) < 0);
    CHECK_STR_EQ(err.msg, "unknown schema 'nfd' (want ack, gfd or ack,gfd)");
    CHECK(labeler_schemas_parse("ack,", &bits, &err) < 0);
    CHECK(labeler_schemas_parse("", &bits, &err) < 0);
}

/* --- outputs --- */

static char *read_all(const char *path)
{
    struct buf b = BUF_INIT(1 << 20);

    if (buf_read_file(path, &b))
        return NULL;
    return buf_take(&b);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static void feature_file_atomic(void)
{
    struct gpu_device d[1] = {dev("Tesla M40", 12209 * MiB, 5, 2)};
    struct labeler_labels l = {0};
    struct labeler_config cfg;
    struct err err;
    char dir[64], path[128], *text;
    struct stat st;

    temp_dir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/gpulabel", dir);
    write_text(path, "stale=1\n");
    memset(&cfg, 0, sizeof(cfg));
    cfg.feature_file = path;
    CHECK_INT_EQ(labels_of(d, 1, LABELER_SCHEMA_ACK, &l), 0);
    err_clear(&err);
    CHECK_INT_EQ(labeler_write_outputs(&cfg, &l, &err), 0);
    text = read_all(path);
    CHECK_STR_EQ(text, "aliyun.accelerator/nvidia_count=1\n"
                       "aliyun.accelerator/nvidia_mem=12209MiB\n"
                       "aliyun.accelerator/nvidia_name=Tesla-M40\n");
    free(text);
    CHECK_INT_EQ(count_entries(dir), 1); /* no dot-file left behind */
    CHECK_INT_EQ(stat(path, &st), 0);
    CHECK_INT_EQ(st.st_mode & 0777, 0644);

    /* zero GPUs: the file is emptied, so NFD drops the labels */
    l.n = 0;
    CHECK_INT_EQ(labeler_write_outputs(&cfg, &l, &err), 0);
    text = read_all(path);
    CHECK_STR_EQ(text, "");
    free(text);
    labeler_labels_release(&l);
    unlink(path);
    rmdir(dir);
}

static void feature_file_missing_dir(void)
{
    struct labeler_labels l = {0};
    struct labeler_config cfg;
    struct err err;

    memset(&cfg, 0, sizeof(cfg));
    cfg.feature_file = "/nonexistent-dir/features.d/gpulabel";
    err_clear(&err);
    CHECK(labeler_write_outputs(&cfg, &l, &err) < 0);
    CHECK_STR_EQ(err.msg, "cannot write '/nonexistent-dir/features.d/gpulabel': No such file or "
                          "directory");
}

/* --- durations: --sleep-interval is a Go duration of 1ms to 100 days; "0", which the old
 * parser read and main.c then refused as not positive, is refused here at once --- */

static void durations(void)
{
    static const struct {
        const char *s;
        long ms; /* -1: rejected */
    } t[] = {
        {"30s", 30000},
        {"1m", 60000},
        {"1m30s", 90000},
        {"500ms", 500},
        {"1h", 3600000},
        {"1.5s", 1500},
        {"2h45m", 9900000},
        {"1000us", 1},
        {"0", -1},
        {"", -1},
        {"5", -1},
        {"5x", -1},
        {"s", -1},
        {"-1s", -1},
        {"0s", -1},
        {"999us", -1},
        {"101d", -1},
        {"2500h", -1},
        {"1m 30s", -1},
        {"2000\xc2\xb5s", 2},
        {"3000\xce\xbcs", 3}, /* both micro signs, like Go */
    };
    size_t i;

    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        long ms = -7;
        int rc = labeler_interval_parse(t[i].s, &ms, NULL);

        if (t[i].ms < 0) {
            if (rc == 0)
                test_fail(__FILE__, __LINE__, "'%s' accepted as %ld ms", t[i].s, ms);
        } else {
            CHECK_INT_EQ(rc, 0);
            CHECK_INT_EQ(ms, t[i].ms);
        }
    }
}

static const struct test_case cases[] = {
    {"sanitize real product names", sanitize_real_product_names},
    {"sanitize invalid characters", sanitize_invalid_characters},
    {"sanitize truncates to 63, valid", sanitize_truncates_to_63_valid},
    {"value validity", value_validity},
    {"ack seed Tesla M40", ack_seed_tesla_m40},
    {"ack memory rounds down", ack_memory_rounds_down},
    {"lost GPUs are left out", lost_gpus_are_left_out},
    {"ack eight GPUs", ack_eight_gpus},
    {"mixed models take GPU 0", mixed_models_take_gpu0},
    {"MIG counts physical GPUs", mig_counts_physical_gpus},
    {"memory unknown is omitted", memory_unknown_is_omitted},
    {"zero GPUs, no labels", zero_gpus_no_labels},
    {"unusable name becomes unknown", unusable_name_becomes_unknown},
    {"long and odd names valid", long_and_odd_names_valid},
    {"gfd full set", gfd_full_set},
    {"gfd family table", gfd_family_table},
    {"gfd no compute capability", gfd_no_compute_capability},
    {"gfd driver versions", gfd_driver_versions},
    {"gfd runtime versions", gfd_runtime_versions},
    {"gfd machine type", gfd_machine_type},
    {"set sorted, unique, validated", set_sorted_unique_validated},
    {"key in schemas", key_in_schemas},
    {"schemas parse", schemas_parse},
    {"feature file atomic", feature_file_atomic},
    {"feature file missing dir", feature_file_missing_dir},
    {"durations", durations},
};

TEST_SUITE(labels, cases)
