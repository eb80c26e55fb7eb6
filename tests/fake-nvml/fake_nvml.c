/* fake_nvml.c - a test double for the NVIDIA driver's libnvidia-ml.so.1.
 *
 * It exports the NVML symbols gpulabel binds, so tests exercise the real dlopen/dlsym path, and
 * serves devices and failures described by the file named in $FAKE_NVML_CONFIG (read again at
 * every first nvmlInit_v2, and at any later one once the file changed: a process that keeps
 * NVML open, as the device plugin does, must not freeze the config for the others). Without the variable it serves the demo node: one "Tesla M40" with
 * 12209 MiB, driver 418.67, CUDA 10010. It also exports `fake_nvml_is_simulated`, which tells
 * gpulabel that no real GPU is behind it. Built with -DFAKE_NVML_OLD it leaves out the symbols
 * an old driver lacks (nvmlErrorString, nvmlSystemGetCudaDriverVersion, nvmlDeviceGetPciInfo_v3,
 * nvmlDeviceGetCudaComputeCapability, nvmlDeviceGetMigMode): dlsym really fails for them.
 *
 * Config format, one setting per line, '#' starts a comment line:
 *   driver=550.107.02        nvmlSystemGetDriverVersion (absent: NOT_SUPPORTED)
 *   cuda=12050               nvmlSystemGetCudaDriverVersion (absent: NOT_SUPPORTED)
 *   init=DRIVER_NOT_LOADED   nvmlInit_v2 returns this code (any NVML_ERROR_ name without prefix)
 *   count_error=UNKNOWN      nvmlDeviceGetCount_v2 returns this code
 *   device KEY=VALUE ...     one GPU per line, in index order; keys:
 *     name="Tesla M40"       quoted (may hold spaces and \xNN escapes) or a bare word
 *     memory=12802064384     total bytes (absent: nvmlDeviceGetMemoryInfo returns NOT_SUPPORTED)
 *     memory_error=CODE      nvmlDeviceGetMemoryInfo returns CODE
 *     uuid=GPU-...           (absent: generated from the index)
 *     pci=00000000:00:08.0   (absent: generated from the index)
 *     cc=8.0                 compute capability (absent: NOT_SUPPORTED)
 *     mig=unsupported|disabled|enabled   (absent: unsupported)
 *     lost=1                 every query on the device returns GPU_IS_LOST
 *     handle_error=CODE      nvmlDeviceGetHandleByIndex_v2 returns CODE
 *     repeat=N               this line stands for N identical GPUs
 *     numa=N                 NUMA node, for nvmlDeviceGetTopologyCommonAncestor (absent: 0)
 *     switch=N               PCIe switch the GPU is behind (absent: none of its own)
 *     nvlink=I+J             NVLink peers by index, one link per entry (I+I = two links)
 *     events=unsupported     nvmlDeviceRegisterEvents returns NOT_SUPPORTED
 *     minor=N                nvmlDeviceGetMinorNumber (absent: the index)
 *     brand=N                nvmlDeviceGetBrand's nvmlBrandType_t (absent: 2, Tesla)
 *     arch=N                 nvmlDeviceGetArchitecture (absent: from cc: 5.x 3 Maxwell, 6.x 4
 *                            Pascal, 7.0 5 Volta, 7.5 6 Turing, 8.0-8.8 7 Ampere, 8.9 8 Ada,
 *                            9.x 9 Hopper, 10.x and 12.x 10 Blackwell; no cc: NOT_SUPPORTED)
 *     mig_devices=1g.5gb+3g.20gb   MIG devices (with mig=enabled), by profile; a profile
 *                            <c>c.<g>g.<n>gb has c compute slices of a g-slice GPU instance.
 *                            Attributes: g GPU instance slices, c (default g) compute slices,
 *                            14 SMs per compute slice, n*1024-256 MiB, copy engines = g,
 *                            decoders = g/2, encoders 0, JPEG and OFA = 1 for 7 slices; GPU
 *                            instance k+1, profile ID by g (1: 19, 2: 14, 3: 9, 4: 5, 7: 0),
 *                            memory slices placed one after the other from 0
 * Topology: two GPUs behind one switch are SINGLE, on one NUMA node NODE, else SYSTEM.
 *
 * Events: $FAKE_NVML_EVENTS names a control file that tests append lines to; every
 * nvmlEventSetWait_v2 reads the lines added since the event set was created, one event each:
 *   xid GPU XID [reset|reboot]  an XID critical error on GPU (its UUID or index); with reset
 *                            or reboot the driver's recovery action (nvmlDeviceGetFieldValues
 *                            NVML_FI_DEV_GET_GPU_RECOVERY_ACTION) becomes GPU reset (1) or
 *                            node reboot (2) until a clear line
 *   ecc GPU                  a double-bit ECC error
 *   lost GPU                 the GPU falls off the bus: every query on it returns GPU_IS_LOST
 *                            from now on, and so does this wait
 * and these lines change the state only (no event):
 *   found GPU                a lost GPU answers again
 *   clear GPU                the GPU was reset: it answers, no recovery action pending
 * The state lines (lost, found, clear, xid ... reset|reboot) take effect for every NVML
 * query of the process as soon as they are in the file, in the file's order after the
 * config; a config read again (a new first nvmlInit_v2) replays them all.
 * A config file without device lines means a node with zero GPUs. A config that cannot be read
 * or parsed makes nvmlInit_v2 fail with UNKNOWN and prints why on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define FAKE_MAX_DEVICES 64

typedef int nvmlReturn_t;
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_UNKNOWN = 999,
};

static const struct {
    const char *name;
    int code;
    const char *text;
} fake_codes[] = {
    {"SUCCESS", 0, "Success"},
    {"UNINITIALIZED", 1, "Uninitialized"},
    {"INVALID_ARGUMENT", 2, "Invalid Argument"},
    {"NOT_SUPPORTED", 3, "Not Supported"},
    {"NO_PERMISSION", 4, "Insufficient Permissions"},
    {"ALREADY_INITIALIZED", 5, "Already Initialized"},
    {"NOT_FOUND", 6, "Not Found"},
    {"INSUFFICIENT_SIZE", 7, "Insufficient Size"},
    {"INSUFFICIENT_POWER", 8, "Insufficient External Power"},
    {"DRIVER_NOT_LOADED", 9, "Driver Not Loaded"},
    {"TIMEOUT", 10, "Timeout"},
    {"IRQ_ISSUE", 11, "Interrupt Request Issue"},
    {"LIBRARY_NOT_FOUND", 12, "NVML Shared Library Not Found"},
    {"FUNCTION_NOT_FOUND", 13, "Function Not Found"},
    {"CORRUPTED_INFOROM", 14, "Corrupted infoROM"},
    {"GPU_IS_LOST", 15, "GPU is lost"},
    {"RESET_REQUIRED", 16, "GPU requires reset"},
    {"OPERATING_SYSTEM", 17, "GPU access blocked by the operating system"},
    {"LIB_RM_VERSION_MISMATCH", 18, "Driver/library version mismatch"},
    {"IN_USE", 19, "In use by another client"},
    {"MEMORY", 20, "Insufficient Memory"},
    {"NO_DATA", 21, "No data"},
    {"UNKNOWN", 999, "Unknown Error"},
};

struct nvmlDevice_st {
    char name[128];
    unsigned long long memory;
    int has_memory;
    int memory_error;
    char uuid[96];
    char pci[32];
    int cc_major, cc_minor, has_cc;
    int mig;                /* -1 unsupported, 0 disabled, 1 enabled */
    int minor, brand, arch; /* -1: the default */
    int lost;
    int action; /* the driver's recovery action: 0 none, 1 GPU reset, 2 node reboot */
    int handle_error;
    int numa, pcie_switch;   /* pcie_switch -1: none */
    int nvlink[18], nnvlink; /* peer indices, one per link */
    int no_events;
    char mig_profiles[8][32]; /* mig_devices= */
    int nmig;
    int parent;           /* a MIG device: its GPU's index; -1 for a GPU */
    int gi, ci, mem_mb;   /* a MIG device's attributes */
    int gi_id, placement; /* its GPU instance and first memory slice */
};
typedef struct nvmlDevice_st *nvmlDevice_t;

typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

static int fake_active; /* nvmlInit_v2 calls minus nvmlShutdown calls */

static struct fake_state {
    char driver[80];
    int has_driver;
    int cuda, has_cuda;
    int init_error;
    int count_error;
    unsigned ndevices;
    struct nvmlDevice_st devices[FAKE_MAX_DEVICES];
    unsigned nmigs;
    struct nvmlDevice_st migs[FAKE_MAX_DEVICES * 8];
} fake;

/* Markers for tests: the library is simulated; how many inits are not yet shut down. */
EXPORT const int fake_nvml_is_simulated = 1;
EXPORT int fake_nvml_active_inits(void);
int fake_nvml_active_inits(void)
{
    return fake_active;
}

static int fake_code(const char *name)
{
    size_t i;

    if (!strncmp(name, "NVML_ERROR_", 11))
        name += 11;
    for (i = 0; i < sizeof(fake_codes) / sizeof(fake_codes[0]); i++)
        if (!strcmp(fake_codes[i].name, name))
            return fake_codes[i].code;
    return -1;
}

/* a GPU named by an events line: its index or UUID; -1 when none is */
static int fake_device_ref(const char *s)
{
    char *end;
    long i = strtol(s, &end, 10);
    unsigned k;

    if (*s && !*end && i >= 0 && (unsigned long)i < fake.ndevices)
        return (int)i;
    for (k = 0; k < fake.ndevices; k++)
        if (!strcmp(fake.devices[k].uuid, s))
            return (int)k;
    return -1;
}

static void fake_device_defaults(struct nvmlDevice_st *d, unsigned idx)
{
    memset(d, 0, sizeof(*d));
    d->mig = -1;
    d->pcie_switch = -1;
    d->parent = -1;
    d->minor = d->brand = d->arch = -1;
    snprintf(d->uuid, sizeof(d->uuid), "GPU-00000000-fa4e-4e00-8000-%012x", idx);
    snprintf(d->pci, sizeof(d->pci), "00000000:00:%02X.0", 8 + idx);
}

static void fake_defaults(void)
{
    struct nvmlDevice_st *d = &fake.devices[0];

    memset(&fake, 0, sizeof(fake));
    snprintf(fake.driver, sizeof(fake.driver), "418.67");
    fake.has_driver = 1;
    fake.cuda = 10010;
    fake.has_cuda = 1;
    fake.ndevices = 1;
    fake_device_defaults(d, 0);
    snprintf(d->name, sizeof(d->name), "Tesla M40");
    d->memory = 12209ull * 1048576ull + 393216ull;
    d->has_memory = 1;
    d->cc_major = 5;
    d->cc_minor = 2;
    d->has_cc = 1;
}

/* Reads one value at *p: a "quoted string" with \xNN, \" and \\ escapes, or a bare word. */
static int fake_value(char **p, char *out, size_t size)
{
    char *s = *p;
    size_t n = 0;

    if (*s == '"') {
        s++;
        while (*s && *s != '"') {
            int c = (unsigned char)*s++;

            if (c == '\\' && *s == 'x' && s[1] && s[2]) {
                char hex[3] = {s[1], s[2], 0};

                c = (int)strtol(hex, NULL, 16);
                s += 3;
            } else if (c == '\\' && *s) {
                c = (unsigned char)*s++;
            }
            if (n + 1 >= size)
                return -1;
            out[n++] = (char)c;
        }
        if (*s != '"')
            return -1;
        s++;
    } else {
        while (*s && *s != ' ' && *s != '\t') {
            if (n + 1 >= size)
                return -1;
            out[n++] = *s++;
        }
    }
    out[n] = '\0';
    *p = s;
    return 0;
}

static void fake_copy(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src) < size - 1 ? strlen(src) : size - 1;

    memcpy(dst, src, n);
    dst[n] = '\0';
}

static int fake_parse_device(char *s, const char *path, int lineno)
{
    struct nvmlDevice_st d;
    unsigned repeat = 1, i;
    char key[64], val[256];
    int custom_uuid = 0, custom_pci = 0;

    fake_device_defaults(&d, 0);
    for (;;) {
        size_t k = 0;

        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            break;
        while (*s && *s != '=' && k + 1 < sizeof(key))
            key[k++] = *s++;
        key[k] = '\0';
        if (*s++ != '=' || fake_value(&s, val, sizeof(val)))
            goto bad;
        if (!strcmp(key, "name")) {
            fake_copy(d.name, sizeof(d.name), val);
        } else if (!strcmp(key, "memory")) {
            d.memory = strtoull(val, NULL, 10);
            d.has_memory = 1;
        } else if (!strcmp(key, "memory_error")) {
            if ((d.memory_error = fake_code(val)) < 0)
                goto bad;
        } else if (!strcmp(key, "uuid")) {
            fake_copy(d.uuid, sizeof(d.uuid), val);
            custom_uuid = 1;
        } else if (!strcmp(key, "pci")) {
            fake_copy(d.pci, sizeof(d.pci), val);
            custom_pci = 1;
        } else if (!strcmp(key, "cc")) {
            if (sscanf(val, "%d.%d", &d.cc_major, &d.cc_minor) != 2)
                goto bad;
            d.has_cc = 1;
        } else if (!strcmp(key, "mig")) {
            if (!strcmp(val, "unsupported"))
                d.mig = -1;
            else if (!strcmp(val, "disabled"))
                d.mig = 0;
            else if (!strcmp(val, "enabled"))
                d.mig = 1;
            else
                goto bad;
        } else if (!strcmp(key, "lost")) {
            d.lost = atoi(val);
        } else if (!strcmp(key, "handle_error")) {
            if ((d.handle_error = fake_code(val)) < 0)
                goto bad;
        } else if (!strcmp(key, "numa")) {
            d.numa = atoi(val);
        } else if (!strcmp(key, "switch")) {
            d.pcie_switch = atoi(val);
        } else if (!strcmp(key, "nvlink")) {
            char *q = val;

            d.nnvlink = 0;
            while (*q && d.nnvlink < 18) {
                d.nvlink[d.nnvlink++] = (int)strtol(q, &q, 10);
                if (*q == '+')
                    q++;
                else if (*q)
                    goto bad;
            }
        } else if (!strcmp(key, "mig_devices")) {
            char *q = val;

            d.nmig = 0;
            while (*q && d.nmig < 8) {
                size_t n = strcspn(q, "+");

                if (!n || n >= sizeof(d.mig_profiles[0]))
                    goto bad;
                memcpy(d.mig_profiles[d.nmig], q, n);
                d.mig_profiles[d.nmig++][n] = '\0';
                q += n;
                if (*q == '+')
                    q++;
            }
        } else if (!strcmp(key, "minor")) {
            d.minor = atoi(val);
        } else if (!strcmp(key, "brand")) {
            d.brand = atoi(val);
        } else if (!strcmp(key, "arch")) {
            d.arch = atoi(val);
        } else if (!strcmp(key, "events")) {
            d.no_events = !strcmp(val, "unsupported");
        } else if (!strcmp(key, "repeat")) {
            repeat = (unsigned)strtoul(val, NULL, 10);
        } else {
            goto bad;
        }
    }
    for (i = 0; i < repeat; i++) {
        struct nvmlDevice_st *t, at; /* at: the defaults at this index */

        if (fake.ndevices >= FAKE_MAX_DEVICES)
            goto bad;
        fake_device_defaults(&at, fake.ndevices);
        t = &fake.devices[fake.ndevices++];
        *t = d;
        if (!custom_uuid)
            memcpy(t->uuid, at.uuid, sizeof(t->uuid));
        if (!custom_pci)
            memcpy(t->pci, at.pci, sizeof(t->pci));
    }
    return 0;
bad:
    fprintf(stderr, "fake NVML: %s: line %d: bad device setting\n", path, lineno);
    return -1;
}

#include <sys/stat.h>

static struct stat fake_loaded_st; /* of the config file last read */

static int fake_config_changed(void)
{
    const char *path = getenv("FAKE_NVML_CONFIG");
    struct stat st;

    if (!path || !*path || stat(path, &st))
        return 0;
    return st.st_ino != fake_loaded_st.st_ino || st.st_size != fake_loaded_st.st_size ||
           st.st_mtim.tv_sec != fake_loaded_st.st_mtim.tv_sec ||
           st.st_mtim.tv_nsec != fake_loaded_st.st_mtim.tv_nsec;
}

/* The MIG devices of every MIG-enabled GPU, from their mig_devices= profiles. */
static int fake_make_migs(const char *path)
{
    unsigned i;
    int k;

    fake.nmigs = 0;
    for (i = 0; i < fake.ndevices; i++) {
        struct nvmlDevice_st *g = &fake.devices[i];
        int next_slice = 0;

        for (k = 0; k < g->nmig; k++) {
            struct nvmlDevice_st *m = &fake.migs[fake.nmigs];
            int c = 0, gi = 0, gb = 0;

            if (sscanf(g->mig_profiles[k], "%dc.%dg.%dgb", &c, &gi, &gb) != 3) {
                c = 0;
                if (sscanf(g->mig_profiles[k], "%dg.%dgb", &gi, &gb) != 2) {
                    fprintf(stderr, "fake NVML: %s: bad MIG profile '%s'\n", path,
                            g->mig_profiles[k]);
                    return -1;
                }
            }
            memset(m, 0, sizeof(*m));
            m->parent = (int)i;
            m->mig = -1;
            m->pcie_switch = -1;
            m->gi = gi;
            m->ci = c ? c : gi;
            m->mem_mb = gb * 1024 - 256;
            m->gi_id = k + 1;
            m->placement = next_slice;
            next_slice += gi;
            m->memory = (unsigned long long)m->mem_mb * 1048576ull;
            m->has_memory = 1;
            snprintf(m->name, sizeof(m->name), "%s MIG %s", g->name, g->mig_profiles[k]);
            snprintf(m->uuid, sizeof(m->uuid), "MIG-00000000-fa4e-4e00-9000-%04x%08x", i,
                     (unsigned)k);
            snprintf(m->pci, sizeof(m->pci), "%s", g->pci);
            fake.nmigs++;
        }
    }
    return 0;
}

static long fake_state_offset; /* bytes of $FAKE_NVML_EVENTS applied to the state */

static int fake_load(void)
{
    const char *path = getenv("FAKE_NVML_CONFIG");
    char line[4096];
    int lineno = 0, rc = 0;
    FILE *f;

    fake_state_offset = 0;
    fake_defaults();
    if (!path || !*path)
        return 0;
    memset(&fake, 0, sizeof(fake));
    if (stat(path, &fake_loaded_st))
        memset(&fake_loaded_st, 0, sizeof(fake_loaded_st));
    f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "fake NVML: cannot read FAKE_NVML_CONFIG '%s'\n", path);
        return -1;
    }
    while (!rc && fgets(line, sizeof(line), f)) {
        char *s = line, *v;

        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s || *s == '#')
            continue;
        if (!strncmp(s, "device ", 7) || !strcmp(s, "device")) {
            rc = fake_parse_device(s + 6, path, lineno);
            continue;
        }
        v = strchr(s, '=');
        if (!v) {
            rc = -1;
            break;
        }
        *v++ = '\0';
        if (!strcmp(s, "driver")) {
            snprintf(fake.driver, sizeof(fake.driver), "%s", v);
            fake.has_driver = 1;
        } else if (!strcmp(s, "cuda")) {
            fake.cuda = atoi(v);
            fake.has_cuda = 1;
        } else if (!strcmp(s, "init")) {
            rc = (fake.init_error = fake_code(v)) < 0 ? -1 : 0;
        } else if (!strcmp(s, "count_error")) {
            rc = (fake.count_error = fake_code(v)) < 0 ? -1 : 0;
        } else {
            rc = -1;
        }
    }
    fclose(f);
    if (!rc)
        rc = fake_make_migs(path);
    if (rc)
        fprintf(stderr, "fake NVML: %s: line %d: cannot parse\n", path, lineno);
    return rc;
}

static void fake_apply_state(void);

/* Common guard: NVML must be initialised and the handle one of ours. */
static nvmlReturn_t fake_check(nvmlDevice_t d)
{
    fake_apply_state();
    if (!fake_active)
        return NVML_ERROR_UNINITIALIZED;
    if (d && d >= fake.migs && d < fake.migs + fake.nmigs)
        return fake.devices[d->parent].lost ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS;
    if (!d || d < fake.devices || d >= fake.devices + fake.ndevices)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (d->lost)
        return NVML_ERROR_GPU_IS_LOST;
    return NVML_SUCCESS;
}

/* fake_check, then an answer's pointer that must not be NULL */
static nvmlReturn_t fake_query(nvmlDevice_t d, const void *out)
{
    nvmlReturn_t rc = fake_check(d);

    return rc ? rc : out ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

static nvmlReturn_t fake_string(const char *s, char *out, unsigned int length)
{
    if (!out)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(s) + 1 > length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(out, s, strlen(s) + 1);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlInit_v2(void)
{
    static int load_rc;

    if (!fake_active || fake_config_changed())
        load_rc = fake_load();
    if (load_rc)
        return NVML_ERROR_UNKNOWN;
    if (fake.init_error)
        return fake.init_error;
    fake_active++;
    fake_apply_state();
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlShutdown(void)
{
    if (!fake_active)
        return NVML_ERROR_UNINITIALIZED;
    fake_active--;
    return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
EXPORT const char *nvmlErrorString(nvmlReturn_t result);
const char *nvmlErrorString(nvmlReturn_t result)
{
    size_t i;

    for (i = 0; i < sizeof(fake_codes) / sizeof(fake_codes[0]); i++)
        if (fake_codes[i].code == result)
            return fake_codes[i].text;
    return "Unknown Error";
}
#endif

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);
nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    if (!fake_active)
        return NVML_ERROR_UNINITIALIZED;
    if (!fake.has_driver)
        return NVML_ERROR_NOT_SUPPORTED;
    return fake_string(fake.driver, version, length);
}

#ifndef FAKE_NVML_OLD
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v);
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v)
{
    if (!v)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!fake.has_cuda)
        return NVML_ERROR_NOT_SUPPORTED;
    *v = fake.cuda;
    return NVML_SUCCESS;
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    if (!fake_active)
        return NVML_ERROR_UNINITIALIZED;
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (fake.count_error)
        return fake.count_error;
    *count = fake.ndevices;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    if (!fake_active)
        return NVML_ERROR_UNINITIALIZED;
    if (index >= fake.ndevices || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (fake.devices[index].handle_error)
        return fake.devices[index].handle_error;
    *device = &fake.devices[index];
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    nvmlReturn_t rc = fake_check(device);

    return rc ? rc : fake_string(device->name, name, length);
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    nvmlReturn_t rc = fake_check(device);

    return rc ? rc : fake_string(device->uuid, uuid, length);
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    nvmlReturn_t rc = fake_query(device, memory);

    if (rc)
        return rc;
    if (device->memory_error)
        return device->memory_error;
    if (!device->has_memory)
        return NVML_ERROR_NOT_SUPPORTED;
    memory->total = device->memory;
    memory->used = device->memory / 100;
    memory->free = device->memory - memory->used;
    return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    nvmlReturn_t rc = fake_query(device, pci);
    unsigned dom = 0, bus = 0, dev = 0;

    if (rc)
        return rc;
    memset(pci, 0, sizeof(*pci));
    sscanf(device->pci, "%x:%x:%x", &dom, &bus, &dev);
    pci->domain = dom;
    pci->bus = bus;
    pci->device = dev;
    pci->pciDeviceId = 0x17fd10de; /* Tesla M40 24GB id, vendor 0x10de */
    snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0", dom & 0xffff,
             bus & 0xff, dev & 0xff);
    snprintf(pci->busId, sizeof(pci->busId), "%s", device->pci);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor);
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
    nvmlReturn_t rc = fake_check(device);

    if (rc)
        return rc;
    if (!major || !minor)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!device->has_cc)
        return NVML_ERROR_NOT_SUPPORTED;
    *major = device->cc_major;
    *minor = device->cc_minor;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *current,
                                         unsigned int *pending);
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *current, unsigned int *pending)
{
    nvmlReturn_t rc = fake_check(device);

    if (rc)
        return rc;
    if (!current || !pending)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (device->mig < 0)
        return NVML_ERROR_NOT_SUPPORTED;
    *current = *pending = (unsigned)device->mig;
    return NVML_SUCCESS;
}
#endif

#ifndef FAKE_NVML_OLD
/* ---- topology -------------------------------------------------------------------------- */

EXPORT nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b, int *level);
nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b, int *level)
{
    nvmlReturn_t rc = fake_check(a);

    if (!rc)
        rc = fake_check(b);
    if (rc)
        return rc;
    if (!level)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (a == b)
        *level = 0;
    else if (a->pcie_switch >= 0 && a->pcie_switch == b->pcie_switch)
        *level = 10; /* SINGLE */
    else if (a->numa == b->numa)
        *level = 40; /* NODE */
    else
        *level = 50; /* SYSTEM */
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int *active);
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int *active)
{
    nvmlReturn_t rc = fake_check(d);

    if (rc)
        return rc;
    if (!active || link >= 18)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!d->nnvlink)
        return NVML_ERROR_NOT_SUPPORTED;
    *active = (int)link < d->nnvlink ? 1 : 0;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link,
                                                        nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link,
                                                 nvmlPciInfo_t *pci)
{
    nvmlReturn_t rc = fake_check(d);
    int peer;

    if (rc)
        return rc;
    if (!pci || (int)link >= d->nnvlink)
        return NVML_ERROR_INVALID_ARGUMENT;
    peer = d->nvlink[link];
    if (peer < 0 || (unsigned)peer >= fake.ndevices)
        return NVML_ERROR_NOT_FOUND;
    return nvmlDeviceGetPciInfo_v3(&fake.devices[peer], pci);
}

/* ---- events ------------------------------------------------------------------------------ */

#include <time.h>

struct nvmlEventSet_st {
    long offset; /* bytes of $FAKE_NVML_EVENTS already read */
    unsigned long long mask[FAKE_MAX_DEVICES];
};
typedef struct nvmlEventSet_st *nvmlEventSet_t;

typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlEventData_t;

static long fake_events_size(void)
{
    const char *path = getenv("FAKE_NVML_EVENTS");
    FILE *f = path && *path ? fopen(path, "r") : NULL;
    long n = 0;

    if (f) {
        if (!fseek(f, 0, SEEK_END))
            n = ftell(f);
        fclose(f);
    }
    return n < 0 ? 0 : n;
}

EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set);
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
    if (!fake_active)
        return NVML_ERROR_UNINITIALIZED;
    if (!set)
        return NVML_ERROR_INVALID_ARGUMENT;
    *set = calloc(1, sizeof(**set));
    if (!*set)
        return NVML_ERROR_UNKNOWN;
    (*set)->offset = fake_events_size();
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set);
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
    free(set);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d, unsigned long long *types);
nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d, unsigned long long *types)
{
    nvmlReturn_t rc = fake_query(d, types);

    if (rc)
        return rc;
    *types = d->no_events ? 0 : 0x1ull | 0x2ull | 0x4ull | 0x8ull;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types,
                                             nvmlEventSet_t set);
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set)
{
    nvmlReturn_t rc = fake_query(d, set);

    if (rc)
        return rc;
    if (d->no_events)
        return NVML_ERROR_NOT_SUPPORTED;
    set->mask[d - fake.devices] |= types;
    return NVML_SUCCESS;
}

/* Reads the next complete line added to the control file; 1 with it in line, 0 none. */
static int fake_events_next(nvmlEventSet_t set, char *line, size_t size)
{
    const char *path = getenv("FAKE_NVML_EVENTS");
    FILE *f = path && *path ? fopen(path, "r") : NULL;
    int got = 0;

    if (!f)
        return 0;
    if (!fseek(f, set->offset, SEEK_SET) && fgets(line, (int)size, f) && strchr(line, '\n')) {
        set->offset += (long)strlen(line);
        line[strcspn(line, "\r\n")] = '\0';
        got = 1;
    }
    fclose(f);
    return got;
}

EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data,
                                        unsigned int timeoutms);
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
    unsigned waited = 0;

    if (!fake_active)
        return NVML_ERROR_UNINITIALIZED;
    if (!set || !data)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (;;) {
        char line[256], what[16], dev[128];
        unsigned long long xid = 0;
        int k, n;

        while (fake_events_next(set, line, sizeof(line))) {
            n = sscanf(line, "%15s %127s %llu", what, dev, &xid);
            if (n < 2 || (k = fake_device_ref(dev)) < 0) {
                fprintf(stderr, "fake NVML: FAKE_NVML_EVENTS: bad line '%s'\n", line);
                continue;
            }
            memset(data, 0, sizeof(*data));
            data->device = &fake.devices[k];
            data->gpuInstanceId = data->computeInstanceId = 0xFFFFFFFFu;
            if (!strcmp(what, "lost")) {
                fake.devices[k].lost = 1;
                return NVML_ERROR_GPU_IS_LOST;
            }
            if (!strcmp(what, "xid") && n == 3 && (set->mask[k] & 0x8ull)) {
                data->eventType = 0x8ull;
                data->eventData = xid;
                return NVML_SUCCESS;
            }
            if (!strcmp(what, "ecc") && (set->mask[k] & 0x2ull)) {
                data->eventType = 0x2ull;
                return NVML_SUCCESS;
            }
        }
        if (waited >= timeoutms)
            return NVML_ERROR_TIMEOUT;
        {
            struct timespec ts = {0, 5 * 1000000L};

            nanosleep(&ts, NULL);
            waited += 5;
        }
    }
}
#endif

#ifndef FAKE_NVML_OLD
/* ---- MIG ------------------------------------------------------------------------------------ */

typedef struct {
    unsigned int multiprocessorCount;
    unsigned int sharedCopyEngineCount;
    unsigned int sharedDecoderCount;
    unsigned int sharedEncoderCount;
    unsigned int sharedJpegCount;
    unsigned int sharedOfaCount;
    unsigned int gpuInstanceSliceCount;
    unsigned int computeInstanceSliceCount;
    unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

static int fake_is_mig(nvmlDevice_t d)
{
    return d >= fake.migs && d < fake.migs + fake.nmigs;
}

EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int *count);
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int *count)
{
    nvmlReturn_t rc = fake_query(d, count);

    if (rc)
        return rc;
    if (fake_is_mig(d) || d->mig < 0)
        return NVML_ERROR_NOT_SUPPORTED;
    *count = 7;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int index,
                                                        nvmlDevice_t *mig);
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int index,
                                                 nvmlDevice_t *mig)
{
    nvmlReturn_t rc = fake_check(d);
    unsigned i, k = 0;

    if (rc)
        return rc;
    if (!mig || fake_is_mig(d))
        return NVML_ERROR_INVALID_ARGUMENT;
    if (d->mig != 1)
        return NVML_ERROR_NOT_FOUND;
    for (i = 0; i < fake.nmigs; i++)
        if (fake.migs[i].parent == (int)(d - fake.devices) && k++ == index) {
            *mig = &fake.migs[i];
            return NVML_SUCCESS;
        }
    return NVML_ERROR_NOT_FOUND;
}

EXPORT nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t d, nvmlDeviceAttributes_t *a);
nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t d, nvmlDeviceAttributes_t *a)
{
    nvmlReturn_t rc = fake_query(d, a);

    if (rc)
        return rc;
    if (!fake_is_mig(d))
        return NVML_ERROR_NOT_SUPPORTED;
    memset(a, 0, sizeof(*a));
    a->multiprocessorCount = 14u * (unsigned)d->ci;
    a->sharedCopyEngineCount = (unsigned)d->gi;
    a->sharedDecoderCount = (unsigned)d->gi / 2;
    a->sharedJpegCount = d->gi == 7;
    a->sharedOfaCount = d->gi == 7;
    a->gpuInstanceSliceCount = (unsigned)d->gi;
    a->computeInstanceSliceCount = (unsigned)d->ci;
    a->memorySizeMB = (unsigned long long)d->mem_mb;
    return NVML_SUCCESS;
}
#endif

/* ---- run-time state from $FAKE_NVML_EVENTS ------------------------------------------------ */

#include <pthread.h>
#include <sys/stat.h>

/* Applies the state lines added to the control file since the last call (every NVML query
 * calls this; one stat when nothing was added). */
static void fake_apply_state(void)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    const char *path = getenv("FAKE_NVML_EVENTS");
    struct stat st;
    char line[256];
    FILE *f;

    if (!path || !*path || stat(path, &st) || st.st_size <= fake_state_offset)
        return;
    pthread_mutex_lock(&mu);
    f = fopen(path, "r");
    if (f && !fseek(f, fake_state_offset, SEEK_SET)) {
        while (fgets(line, sizeof(line), f) && strchr(line, '\n')) {
            char what[16], dev[128], extra[16];
            unsigned long long xid;
            int n, k;

            fake_state_offset += (long)strlen(line);
            extra[0] = '\0';
            n = sscanf(line, "%15s %127s %llu %15s", what, dev, &xid, extra);
            if (n < 2 || (k = fake_device_ref(dev)) < 0)
                continue;
            if (!strcmp(what, "lost"))
                fake.devices[k].lost = 1;
            else if (!strcmp(what, "found"))
                fake.devices[k].lost = 0;
            else if (!strcmp(what, "clear"))
                fake.devices[k].lost = fake.devices[k].action = 0;
            else if (!strcmp(what, "xid") && n == 4 && !strcmp(extra, "reset"))
                fake.devices[k].action = 1;
            else if (!strcmp(what, "xid") && n == 4 && !strcmp(extra, "reboot"))
                fake.devices[k].action = 2;
        }
    }
    if (f)
        fclose(f);
    pthread_mutex_unlock(&mu);
}

#ifndef FAKE_NVML_OLD
typedef struct {
    unsigned int fieldId;
    unsigned int scopeId;
    long long timestamp;
    long long latencyUsec;
    int valueType;
    nvmlReturn_t nvmlReturn;
    union {
        double dVal;
        unsigned int uiVal;
        unsigned long long ullVal;
    } value;
} nvmlFieldValue_t;

/* Only NVML_FI_DEV_GET_GPU_RECOVERY_ACTION (230) is known; others answer NOT_SUPPORTED. */
EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t *v);
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t *v)
{
    nvmlReturn_t rc = fake_check(d);
    int i;

    if (rc)
        return rc;
    if (!v || count <= 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (i = 0; i < count; i++) {
        v[i].nvmlReturn = NVML_SUCCESS;
        v[i].valueType = 1; /* unsigned int */
        if (v[i].fieldId == 230)
            v[i].value.uiVal = (unsigned)d->action;
        else
            v[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
    return NVML_SUCCESS;
}
#endif

/* ---- what a DRA device says about itself ---------------------------------------------------- */

EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int *minor);
nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int *minor)
{
    nvmlReturn_t rc = fake_query(d, minor);

    if (rc)
        return rc;
    *minor = d->minor >= 0 ? (unsigned)d->minor : (unsigned)(d - fake.devices);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t d, int *brand);
nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t d, int *brand)
{
    nvmlReturn_t rc = fake_query(d, brand);

    if (rc)
        return rc;
    *brand = d->brand >= 0 ? d->brand : 2;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t d, unsigned int *arch);
nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t d, unsigned int *arch)
{
    nvmlReturn_t rc = fake_query(d, arch);
    int cc;

    if (rc)
        return rc;
    if (d->arch >= 0) {
        *arch = (unsigned)d->arch;
        return NVML_SUCCESS;
    }
    if (!d->has_cc)
        return NVML_ERROR_NOT_SUPPORTED;
    cc = d->cc_major * 10 + d->cc_minor;
    *arch = d->cc_major == 5       ? 3
            : d->cc_major == 6     ? 4
            : cc == 70 || cc == 72 ? 5
            : d->cc_major == 7     ? 6
            : cc == 89             ? 8
            : d->cc_major == 8     ? 7
            : d->cc_major == 9     ? 9
            : d->cc_major >= 10    ? 10
                                   : 0xffffffffu;
    return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
/* A GPU instance is named by its MIG device: the handle is that device. */
typedef struct {
    nvmlDevice_t device;
    unsigned int id, profileId;
    unsigned int start, size;
} nvmlGpuInstanceInfo_t;

EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned int *id);
nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned int *id)
{
    nvmlReturn_t rc = fake_query(d, id);

    if (rc)
        return rc;
    if (!fake_is_mig(d))
        return NVML_ERROR_NOT_SUPPORTED;
    *id = (unsigned)d->gi_id;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t d, unsigned int id, void **gi);
nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t d, unsigned int id, void **gi)
{
    nvmlReturn_t rc = fake_check(d);
    unsigned i;

    if (rc)
        return rc;
    if (!gi || fake_is_mig(d))
        return NVML_ERROR_INVALID_ARGUMENT;
    for (i = 0; i < fake.nmigs; i++)
        if (fake.migs[i].parent == (int)(d - fake.devices) && fake.migs[i].gi_id == (int)id) {
            *gi = &fake.migs[i];
            return NVML_SUCCESS;
        }
    return NVML_ERROR_NOT_FOUND;
}

EXPORT nvmlReturn_t nvmlGpuInstanceGetInfo(void *gi, nvmlGpuInstanceInfo_t *info);
nvmlReturn_t nvmlGpuInstanceGetInfo(void *gi, nvmlGpuInstanceInfo_t *info)
{
    struct nvmlDevice_st *m = gi;
    nvmlReturn_t rc = fake_check(m);

    if (rc)
        return rc;
    if (!info || !fake_is_mig(m))
        return NVML_ERROR_INVALID_ARGUMENT;
    info->device = &fake.devices[m->parent];
    info->id = (unsigned)m->gi_id;
    info->profileId = m->gi == 1 ? 19 : m->gi == 2 ? 14 : m->gi == 3 ? 9 : m->gi == 4 ? 5 : 0;
    info->start = (unsigned)m->placement;
    info->size = (unsigned)m->gi;
    return NVML_SUCCESS;
}
#endif
