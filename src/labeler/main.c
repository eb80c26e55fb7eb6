/* main.c - gpulabel: flags and GPULABEL_* environment variables into struct labeler_config,
 * then one oneshot cycle (detect, write outputs, sync the node) or the daemon loop.
 *
 * Environment variables are read first and flags override them; NODE_NAME and KUBECONFIG are
 * fallbacks when neither is given. Usage errors print one line and exit 2. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "base/flag.h"
#include "base/goparse.h"
#include "base/log.h"
#include "base/memlimit.h"
#include "kube/quantity.h"
#include "labeler/config.h"
#include "labeler/daemon.h"
#include "labeler/labels.h"
#include "base/clock.h"
#include "kube/client.h"
#include "labeler/backoff.h"
#include "deviceplugin/devices.h"
#include "deviceplugin/plugin.h"
#include "draplugin/cdi.h"
#include "draplugin/devices.h"
#include "draplugin/plugin.h"
#include "gpu/health.h"

#ifndef GPULABEL_VERSION
#define GPULABEL_VERSION "0.1.0"
#endif

#define DEFAULT_SLEEP_INTERVAL_MS 60000L

static const char usage_intro[] =
    "Usage: gpulabel [flags]\n"
    "\n"
    "Detects the NVIDIA GPUs of this node through NVML and keeps them on its Node as labels\n"
    "(aliyun.accelerator/nvidia_count, nvidia_mem, nvidia_name; nvidia.com/... with gfd).\n"
    "\n"
    "Flags (each also from the environment variable shown; flags win):\n";

static const char usage_outro[] = "\n"
                                  "Exit status: 0 success, 1 runtime failure, 2 usage error.\n";

/* Flag values: each setter says why a value is refused; print_usage_error names the flag. */

static int set_path(void *dest, const char *v, struct err *err)
{
    if (!*v)
        return err_set(err, -EINVAL, "empty value");
    *(const char **)dest = v;
    return 0;
}

static int set_schema(void *dest, const char *v, struct err *err)
{
    return labeler_schemas_parse(v, dest, err) ? -EINVAL : 0;
}

static int set_interval(void *dest, const char *v, struct err *err)
{
    return labeler_interval_parse(v, dest, err);
}

static int set_logging_format(void *dest, const char *v, struct err *err)
{
    enum log_fmt f;

    if (log_fmt_parse(v, &f))
        return err_set(err, -EINVAL, "unsupported log format '%s' (want text or json)", v);
    *(bool *)dest = f == LOG_FMT_JSON;
    return 0;
}

static int set_level(void *dest, const char *v, struct err *err)
{
    int64_t n;

    if (go_parse_int(v, strlen(v), 10, 32, &n, NULL) || n < 0 || n > 10)
        return err_set(err, -EINVAL, "invalid level '%s' (want 0 to 10)", v);
    *(int *)dest = (int)n;
    return 0;
}

static int set_list_strategy(void *dest, const char *v, struct err *err)
{
    return dp_list_strategy_parse(v, dest, err);
}

static int set_replicas(void *dest, const char *v, struct err *err)
{
    int64_t n;

    if (go_parse_int(v, strlen(v), 10, 32, &n, NULL) || n < 1 || n > DP_MAX_REPLICAS)
        return err_set(err, -EINVAL, "invalid replicas '%s' (want 1 to %d)", v, DP_MAX_REPLICAS);
    *(unsigned *)dest = (unsigned)n;
    return 0;
}

static int set_xids(void *dest, const char *v, struct err *err)
{
    return dp_xids_parse(v, dest, err);
}

static int set_recovery(void *dest, const char *v, struct err *err)
{
    int64_t ns;

    if (go_parse_duration(v, &ns, NULL) || ns < 0)
        return err_set(err, -EINVAL, "invalid duration '%s' (want e.g. 10m, 30s; 0 never recovers)",
                       v);
    if (ns / 1000000 > LABELER_INTERVAL_MAX_MS)
        return err_set(err, -EINVAL, "duration '%s' is too long (at most 100 days)", v);
    *(long *)dest = (long)(ns / 1000000);
    if (ns > 0 && !*(long *)dest)
        *(long *)dest = 1;
    return 0;
}

static int set_mode(void *dest, const char *v, struct err *err)
{
    if (!strcmp(v, "auto"))
        *(int *)dest = LABELER_MODE_AUTO;
    else if (!strcmp(v, "device-plugin"))
        *(int *)dest = LABELER_MODE_DEVICE_PLUGIN;
    else if (!strcmp(v, "dra"))
        *(int *)dest = LABELER_MODE_DRA;
    else
        return err_set(err, -EINVAL, "invalid mode '%s' (want auto, device-plugin or dra)", v);
    return 0;
}

/* A DRA driver name is a DNS subdomain (it names the slices' driver and the CDI vendor). */
static int set_driver(void *dest, const char *v, struct err *err)
{
    size_t i, n = strlen(v);
    bool dot = false;

    for (i = 0; i < n; i++) {
        char c = v[i];

        if (c == '.')
            dot = true;
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              ((c == '-' || c == '.') && i > 0 && i + 1 < n && v[i - 1] != '.' && v[i + 1] != '.')))
            break;
    }
    if (!n || n > 63 || i < n || !dot)
        return err_set(err, -EINVAL,
                       "invalid driver name '%s' (want a DNS subdomain of at most 63 "
                       "characters with a dot, such as gpu.nvidia.com)",
                       v);
    *(const char **)dest = v;
    return 0;
}

static int set_resource(void *dest, const char *v, struct err *err)
{
    const char *slash = strchr(v, '/');

    /* the kubelet takes only extended resources: a domain-prefixed name */
    if (!slash || slash == v || !slash[1] || strchr(slash + 1, '/') || strlen(v) > 253 ||
        !strncmp(v, "kubernetes.io/", 14) || strstr(v, ".kubernetes.io/"))
        return err_set(err, -EINVAL,
                       "invalid resource name '%s' (want an extended resource such as "
                       "nvidia.com/gpu)",
                       v);
    *(const char **)dest = v;
    return 0;
}

static int set_mig_strategy(void *dest, const char *v, struct err *err)
{
    if (!strcmp(v, "none"))
        *(int *)dest = LABELER_MIG_NONE;
    else if (!strcmp(v, "single"))
        *(int *)dest = LABELER_MIG_SINGLE;
    else if (!strcmp(v, "mixed"))
        *(int *)dest = LABELER_MIG_MIXED;
    else
        return err_set(err, -EINVAL, "invalid MIG strategy '%s' (want none, single or mixed)", v);
    return 0;
}

/* a quantity of bytes ("64Mi", "67108864"), as the Downward API's resourceFieldRef
 * limits.memory gives it */
static int set_memory_limit(void *dest, const char *v, struct err *err)
{
    int64_t n;

    if (kube_quantity_parse(v, &n, NULL, NULL) || n <= 0)
        return err_set(err, -EINVAL, "invalid memory limit '%s' (want bytes, e.g. 64Mi)", v);
    *(uint64_t *)dest = (uint64_t)n;
    return 0;
}

static void print_err(const struct err *err)
{
    char buf[ERR_MSG_MAX + 600];

    fprintf(stderr, "gpulabel: %s\n", err_format(err, buf, sizeof(buf)));
}

/* print_usage_error words a flag fault on one line; the exit status is 2. */
static void print_usage_error(const struct flag_fault *ff)
{
    switch (ff->status) {
    case FLAG_UNKNOWN:
        fprintf(stderr, "gpulabel: unknown flag '%s' (see gpulabel --help)\n", ff->name);
        break;
    case FLAG_NO_VALUE:
        fprintf(stderr, "gpulabel: %s: missing value\n", ff->name);
        break;
    case FLAG_BAD_VALUE:
        if (ff->flag->type == FLAG_BOOL)
            fprintf(stderr, "gpulabel: %s: invalid boolean '%s' (want true or false)\n", ff->name,
                    ff->value);
        else
            fprintf(stderr, "gpulabel: %s: %s\n", ff->name, ff->err.msg);
        break;
    case FLAG_EXTRA:
        fprintf(stderr, "gpulabel: unexpected argument '%s' (see gpulabel --help)\n", ff->word);
        break;
    default:
        fprintf(stderr, "gpulabel: out of memory\n");
        break;
    }
}

/* The sync of --oneshot, within cfg->timeout_ms in all: each attempt's connect and requests
 * are cut to what is left of it, and transient API failures (connection refused or timed out,
 * 429, 5xx, 409) are retried with backoff while it lasts. The first failure says at once what
 * happened and for how long it will be retried; each retry says when it comes; the last
 * failure is returned with how long and how many attempts it took. */
static int oneshot_sync(const struct labeler_config *cfg, const struct labeler_labels *labels,
                        struct err *err)
{
    struct labeler_backoff b;
    int64_t start = mono_ms(), deadline = start + cfg->timeout_ms;
    int rc, attempts = 0;

    labeler_backoff_init(&b, 500, 5000, (unsigned long)mono_ms());
    for (;;) {
        long wait;

        err_clear(err);
        rc = labeler_sync_once(cfg, labels, (double)deadline / 1000, err);
        attempts++;
        if (!rc || !kube_err_transient(err))
            return rc;
        wait = labeler_backoff_next(&b);
        if (err->retry_after > 0 && (long)err->retry_after * 1000 > wait)
            wait = (long)err->retry_after * 1000;
        if (mono_ms() + wait >= deadline) {
            char msg[ERR_MSG_MAX];

            snprintf(msg, sizeof(msg), "%s", err->msg);
            err_set(err, rc, "%s (gave up after %.1f s and %d attempt%s: --timeout %.0fs)", msg,
                    (double)(mono_ms() - start) / 1000, attempts, attempts > 1 ? "s" : "",
                    (double)cfg->timeout_ms / 1000);
            return rc;
        }
        if (attempts == 1)
            fprintf(stderr,
                    "gpulabel: %s; retrying in %ld ms, for up to %.0fs in all (--timeout)\n",
                    err->msg, wait, (double)cfg->timeout_ms / 1000);
        else
            fprintf(stderr, "gpulabel: attempt %d: %s; retrying in %ld ms\n", attempts, err->msg,
                    wait);
        mono_sleep_ms(wait);
    }
}

static int run_oneshot(struct labeler_config *cfg)
{
    struct labeler_labels labels = {0};
    struct gpu_inventory inv;
    struct err err;
    size_t i;
    bool sync = cfg->node_name && !cfg->no_sync;
    int status = 1;

    err_clear(&err);
    if (!cfg->output && !cfg->feature_file && !sync)
        cfg->output = "-";
    if (labeler_detect_inventory(cfg, &labels, &inv, &err)) {
        if (labels.nvml_simulated)
            fprintf(stderr, "gpulabel: using a simulated NVML (test double), not a real GPU "
                            "driver\n");
        print_err(&err);
        /* sysfs shows GPUs NVML cannot reach: publish nvidia.com/gpu.present alone */
        if (labels.partial && labels.n && sync && !oneshot_sync(cfg, &labels, &err))
            fprintf(stderr,
                    "gpulabel: labelled node \"%s\" nvidia.com/gpu.present=true from "
                    "sysfs only\n",
                    cfg->node_name);
        else if (labels.partial && labels.n && sync)
            print_err(&err);
        if (!cfg->fail_on_init_error)
            status = 0; /* GFD's --fail-on-init-error=false: say why, then carry on */
        goto out;
    }
    if (labels.nvml_simulated)
        fprintf(stderr, "gpulabel: using a simulated NVML (test double), not a real GPU driver\n");
    for (i = 0; i < inv.ndevices; i++)
        if (inv.devices[i].lost)
            fprintf(stderr, "gpulabel: GPU %zu cannot be read: %s; the other GPUs are labelled\n",
                    i, inv.devices[i].error);
    if (labeler_write_outputs(cfg, &labels, &err)) {
        print_err(&err);
        goto out;
    }
    if (sync && oneshot_sync(cfg, &labels, &err)) {
        print_err(&err); /* the sync error already names the node */
        goto out;
    }
    if (sync && cfg->verbosity > 0)
        fprintf(stderr, "gpulabel: node \"%s\" carries its %zu labels\n", cfg->node_name, labels.n);
    status = 0;
out:
    labeler_labels_release(&labels);
    gpu_inventory_release(&inv);
    return status;
}

int main(int argc, char **argv)
{
    struct labeler_config cfg;
    struct flag_fault ff;
    bool version = false, no_timestamp = false;
    const struct flag flags[] = {
        {"oneshot", 0, FLAG_BOOL, &cfg.oneshot, NULL, "GPULABEL_ONESHOT", NULL,
         "detect once, write the outputs, sync the node, exit"},
        {"output", 'o', FLAG_FUNC, &cfg.output, set_path, "GPULABEL_OUTPUT", "PATH|-",
         "write sorted key=value lines to PATH or stdout (-);\n"
         "--oneshot with nothing else to do prints"},
        {"feature-file", 0, FLAG_FUNC, &cfg.feature_file, set_path, "GPULABEL_FEATURE_FILE", "PATH",
         "write an NFD local feature file atomically"},
        {"schema", 0, FLAG_FUNC, &cfg.schemas, set_schema, "GPULABEL_SCHEMA", "LIST",
         "ack, gfd or ack,gfd (default ack)"},
        {"nvml-lib", 0, FLAG_FUNC, &cfg.nvml_lib, set_path, "GPULABEL_NVML_LIB", "PATH",
         "NVML library (default libnvidia-ml.so.1)"},
        {"node-name", 0, FLAG_FUNC, &cfg.node_name, set_path, "GPULABEL_NODE_NAME", "NAME",
         "Node to label (default $NODE_NAME)"},
        {"kubeconfig", 0, FLAG_FUNC, &cfg.kubeconfig, set_path, "GPULABEL_KUBECONFIG", "PATH",
         "credentials (default $KUBECONFIG, then in-cluster)"},
        {"sleep-interval", 0, FLAG_FUNC, &cfg.sleep_interval_ms, set_interval,
         "GPULABEL_SLEEP_INTERVAL", "DURATION",
         "time between detections, e.g. 30s, 1m30s (default 60s)"},
        {"machine-type-file", 0, FLAG_FUNC, &cfg.machine_type_file, set_path,
         "GPULABEL_MACHINE_TYPE_FILE", "PATH",
         "source of nvidia.com/gpu.machine\n(default /sys/class/dmi/id/product_name)"},
        {"no-sync", 0, FLAG_BOOL, &cfg.no_sync, NULL, "GPULABEL_NO_SYNC", NULL,
         "never talk to the API server"},
        {"v", 'v', FLAG_FUNC, &cfg.verbosity, set_level, "GPULABEL_V", "N",
         "log verbosity (default 0)"},
        {"logging-format", 0, FLAG_FUNC, &cfg.log_json, set_logging_format,
         "GPULABEL_LOGGING_FORMAT", "text|json",
         "the daemon's log lines: klog text or component-base's JSON\n"
         "(default text)"},
        {"device-plugin", 0, FLAG_BOOL, &cfg.device_plugin, NULL, "GPULABEL_DEVICE_PLUGIN", NULL,
         "serve the GPUs to the kubelet as a device plugin (default true;\n"
         "not with --oneshot)"},
        {"device-plugin-dir", 0, FLAG_FUNC, &cfg.dp.dir, set_path, "GPULABEL_DEVICE_PLUGIN_DIR",
         "DIR",
         "the kubelet's device-plugin directory, where kubelet.sock is\n"
         "(default " DP_DEFAULT_DIR ")"},
        {"resource-name", 0, FLAG_FUNC, &cfg.dp.resource_name, set_resource,
         "GPULABEL_RESOURCE_NAME", "NAME",
         "the extended resource advertised (default " DP_DEFAULT_RESOURCE ")"},
        {"device-list-strategy", 0, FLAG_FUNC, &cfg.dp.list_strategy, set_list_strategy,
         "GPULABEL_DEVICE_LIST_STRATEGY", "LIST",
         "how Allocate names the GPUs: envvar, cdi-annotations, cdi-cri\n"
         "or a comma list (default envvar)"},
        {"replicas", 0, FLAG_FUNC, &cfg.dp.replicas, set_replicas, "GPULABEL_REPLICAS", "N",
         "time-slicing: advertise each GPU N times (default 1)"},
        {"health-ignore-xids", 0, FLAG_FUNC, cfg.dp.ignored_xids, set_xids,
         "GPULABEL_HEALTH_IGNORE_XIDS", "LIST",
         "XIDs that leave a GPU healthy (default " DP_DEFAULT_IGNORED_XIDS ";\n"
         "none: every XID makes it unhealthy)"},
        {"health-recovery-period", 0, FLAG_FUNC, &cfg.dp.recovery_ms, set_recovery,
         "GPULABEL_HEALTH_RECOVERY_PERIOD", "DURATION",
         "an unhealthy GPU is healthy again after this long with no new\n"
         "critical event and NVML answering (doubled per relapse; 0: never;\n"
         "default 10m)"},
        {"sysfs-root", 0, FLAG_FUNC, &cfg.dp.sysfs_root, set_path, "GPULABEL_SYSFS_ROOT", "DIR",
         "where sysfs is mounted (default /sys)"},
        {"mig-strategy", 0, FLAG_FUNC, &cfg.mig_strategy, set_mig_strategy, "GPULABEL_MIG_STRATEGY",
         "none|single|mixed", "how MIG devices are labelled and advertised (default none)"},
        {"mode", 0, FLAG_FUNC, &cfg.mode, set_mode, "GPULABEL_MODE", "auto|device-plugin|dra",
         "how the GPUs are offered to the kubelet: the device plugin, or\n"
         "ResourceSlices and the DRA plugin; auto: dra when the Node carries\n"
         "" LABELER_MODE_LABEL "=true (default device-plugin)"},
        {"driver-name", 0, FLAG_FUNC, &cfg.dra.driver, set_driver, "GPULABEL_DRIVER_NAME", "NAME",
         "the DRA driver's name (default " DRA_DEFAULT_DRIVER ")"},
        {"kubelet-registrar-dir", 0, FLAG_FUNC, &cfg.dra.registrar_dir, set_path,
         "GPULABEL_KUBELET_REGISTRAR_DIR", "DIR",
         "the kubelet's plugin registry (default " DRA_DEFAULT_REGISTRAR_DIR ")"},
        {"kubelet-plugins-dir", 0, FLAG_FUNC, &cfg.dra.plugins_dir, set_path,
         "GPULABEL_KUBELET_PLUGINS_DIR", "DIR",
         "where the DRA plugin's socket and checkpoint go, in <DIR>/<driver>/\n"
         "(default " DRA_DEFAULT_PLUGINS_DIR ")"},
        {"cdi-root", 0, FLAG_FUNC, &cfg.dra.cdi_root, set_path, "GPULABEL_CDI_ROOT", "DIR",
         "where prepared claims' CDI specs are written (default " DRA_DEFAULT_CDI_ROOT ")"},
        {"dev-root", 0, FLAG_FUNC, &cfg.dra.dev_root, set_path, "GPULABEL_DEV_ROOT", "DIR",
         "where the host's /dev is seen, for the device nodes of CDI specs\n"
         "(default /dev)"},
        {"metrics-addr", 0, FLAG_FUNC, &cfg.metrics_addr, set_path, "GPULABEL_METRICS_ADDR",
         "HOST:PORT",
         "serve /healthz, /readyz and /metrics (Prometheus) there,\n"
         "e.g. :9402 (daemon only; default off)"},
        {"timeout", 0, FLAG_FUNC, &cfg.timeout_ms, set_interval, "GPULABEL_TIMEOUT", "DURATION",
         "--oneshot's whole budget for the API server: every connect\n"
         "and request, and the retries of transient failures\n"
         "(refused, timed out, 429, 5xx) with backoff, end within\n"
         "it (default 30s)"},
        {"fail-on-init-error", 0, FLAG_BOOL, &cfg.fail_on_init_error, NULL,
         "GPULABEL_FAIL_ON_INIT_ERROR", NULL,
         "--oneshot exits 1 when NVML cannot start (default true)"},
        {"memory-limit", 0, FLAG_FUNC, &cfg.memory_limit, set_memory_limit, "GPULABEL_MEMORY_LIMIT",
         "QUANTITY",
         "the memory gpulabel may use (default: its cgroup's limit);\n"
         "an API answer may have a quarter of it (at most 256Mi)"},
        {"no-timestamp", 0, FLAG_BOOL, &no_timestamp, NULL, "GPULABEL_NO_TIMESTAMP", NULL,
         "accepted for GFD: gpulabel never writes nvidia.com/gfd.timestamp"},
        {"version", 0, FLAG_BOOL, &version, NULL, NULL, NULL, "show the version"},
        FLAG_END,
    };
    /* GPU Feature Discovery's environment names, so its DaemonSet settings carry over; the
     * GPULABEL_* names and flags win over them. */
    const struct flag gfd_env[] = {
        {"oneshot", 0, FLAG_BOOL, &cfg.oneshot, NULL, "GFD_ONESHOT", NULL, ""},
        {"output", 0, FLAG_FUNC, &cfg.output, set_path, "GFD_OUTPUT_FILE", "PATH", ""},
        {"sleep-interval", 0, FLAG_FUNC, &cfg.sleep_interval_ms, set_interval, "GFD_SLEEP_INTERVAL",
         "DURATION", ""},
        {"machine-type-file", 0, FLAG_FUNC, &cfg.machine_type_file, set_path,
         "GFD_MACHINE_TYPE_FILE", "PATH", ""},
        {"mig-strategy", 0, FLAG_FUNC, &cfg.mig_strategy, set_mig_strategy, "GFD_MIG_STRATEGY",
         "STRATEGY", ""},
        {"mig-strategy", 0, FLAG_FUNC, &cfg.mig_strategy, set_mig_strategy, "MIG_STRATEGY",
         "STRATEGY", ""},
        {"fail-on-init-error", 0, FLAG_BOOL, &cfg.fail_on_init_error, NULL,
         "GFD_FAIL_ON_INIT_ERROR", NULL, ""},
        {"no-timestamp", 0, FLAG_BOOL, &no_timestamp, NULL, "GFD_NO_TIMESTAMP", NULL, ""},
        {"device-list-strategy", 0, FLAG_FUNC, &cfg.dp.list_strategy, set_list_strategy,
         "DEVICE_LIST_STRATEGY", "LIST", ""},
        {"fail-on-init-error", 0, FLAG_BOOL, &cfg.fail_on_init_error, NULL, "FAIL_ON_INIT_ERROR",
         NULL, ""},
        FLAG_END,
    };
    int rc;

    memset(&cfg, 0, sizeof(cfg));
    cfg.schemas = LABELER_SCHEMA_ACK;
    cfg.sleep_interval_ms = DEFAULT_SLEEP_INTERVAL_MS;
    cfg.mode = LABELER_MODE_DEVICE_PLUGIN;
    cfg.device_plugin = true;
    cfg.timeout_ms = 30000;
    dp_xids_parse(DP_DEFAULT_IGNORED_XIDS, cfg.dp.ignored_xids, NULL);
    cfg.dp.recovery_ms = GPU_HEALTH_DEFAULT_RECOVERY_MS;
    cfg.fail_on_init_error = true;
    /* the environment first, so that flags win */
    rc = flag_parse_env(gfd_env, &ff);
    if (rc == FLAG_OK)
        rc = flag_parse_env(flags, &ff);
    if (rc == FLAG_OK)
        rc = flag_parse(flags, argc, argv, NULL, &ff);
    if (rc == FLAG_HELP) {
        struct buf help = BUF_INIT(0);

        if (flag_usage(flags, "show this help", 0, &help)) {
            fprintf(stderr, "gpulabel: out of memory\n");
            return 1;
        }
        printf("%s%s%s", usage_intro, help.data, usage_outro);
        buf_release(&help);
        return 0;
    }
    if (rc) {
        print_usage_error(&ff);
        return 2;
    }
    if (version) {
        printf("gpulabel %s\n", GPULABEL_VERSION);
        return 0;
    }
    if (!cfg.node_name) {
        const char *v = getenv("NODE_NAME");

        cfg.node_name = v && *v ? v : NULL;
    }
    if (!cfg.kubeconfig) {
        const char *v = getenv("KUBECONFIG");

        cfg.kubeconfig = v && *v ? v : NULL;
    }
    cfg.dp.nvml_lib = cfg.nvml_lib;
    if (!cfg.memory_limit)
        cfg.memory_limit = memlimit_cgroup(NULL);
    if (cfg.oneshot)
        return run_oneshot(&cfg);
    return labeler_daemon_run(&cfg);
}
