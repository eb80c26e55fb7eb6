/* main.c - gpulabel: flags and GPULABEL_* environment variables into struct labeler_config,
 * then one oneshot cycle (detect, write outputs, sync the node) or the daemon loop.
 *
 * Environment variables are read first and flags override them; NODE_NAME and KUBECONFIG are
 * fallbacks when neither is given. Usage errors print one line and exit 2. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "labeler/config.h"
#include "labeler/daemon.h"
#include "labeler/duration.h"
#include "labeler/labels.h"

#ifndef GPULABEL_VERSION
#define GPULABEL_VERSION "0.1.0"
#endif

#define DEFAULT_SLEEP_INTERVAL_MS 60000L

enum opt_kind { OPT_BOOL, OPT_STRING, OPT_SCHEMA, OPT_DURATION, OPT_INT };

struct opt {
    const char *name; /* long flag without "--" */
    char shortname;   /* 0: none */
    const char *env;  /* GPULABEL_... */
    enum opt_kind kind;
    size_t offset; /* of the member in struct labeler_config */
};

/* clang-format off */
#define OPT(n_, s_, e_, k_, m_) {n_, s_, e_, k_, offsetof(struct labeler_config, m_)}
/* clang-format on */

static const struct opt opts[] = {
    OPT("oneshot", 0, "GPULABEL_ONESHOT", OPT_BOOL, oneshot),
    OPT("output", 'o', "GPULABEL_OUTPUT", OPT_STRING, output),
    OPT("feature-file", 0, "GPULABEL_FEATURE_FILE", OPT_STRING, feature_file),
    OPT("schema", 0, "GPULABEL_SCHEMA", OPT_SCHEMA, schemas),
    OPT("nvml-lib", 0, "GPULABEL_NVML_LIB", OPT_STRING, nvml_lib),
    OPT("node-name", 0, "GPULABEL_NODE_NAME", OPT_STRING, node_name),
    OPT("kubeconfig", 0, "GPULABEL_KUBECONFIG", OPT_STRING, kubeconfig),
    OPT("sleep-interval", 0, "GPULABEL_SLEEP_INTERVAL", OPT_DURATION, sleep_interval_ms),
    OPT("machine-type-file", 0, "GPULABEL_MACHINE_TYPE_FILE", OPT_STRING, machine_type_file),
    OPT("no-sync", 0, "GPULABEL_NO_SYNC", OPT_BOOL, no_sync),
    OPT("v", 'v', "GPULABEL_V", OPT_INT, verbosity),
};

static const char usage_text[] =
    "Usage: gpulabel [flags]\n"
    "\n"
    "Detects the NVIDIA GPUs of this node through NVML and keeps them on its Node as labels\n"
    "(aliyun.accelerator/nvidia_count, nvidia_mem, nvidia_name; nvidia.com/... with gfd).\n"
    "\n"
    "Flags (each also from the environment variable shown; flags win):\n"
    "  --oneshot                 detect once, write the outputs, sync the node, exit\n"
    "                            [GPULABEL_ONESHOT=true]\n"
    "  -o, --output PATH|-       write sorted key=value lines to PATH or stdout (-)\n"
    "                            [GPULABEL_OUTPUT]; --oneshot with nothing else to do prints\n"
    "  --feature-file PATH       write an NFD local feature file atomically "
    "[GPULABEL_FEATURE_FILE]\n"
    "  --schema LIST             ack, gfd or ack,gfd (default ack) [GPULABEL_SCHEMA]\n"
    "  --nvml-lib PATH           NVML library (default libnvidia-ml.so.1) [GPULABEL_NVML_LIB]\n"
    "  --node-name NAME          Node to label (default $NODE_NAME) [GPULABEL_NODE_NAME]\n"
    "  --kubeconfig PATH         credentials (default $KUBECONFIG, then in-cluster)\n"
    "                            [GPULABEL_KUBECONFIG]\n"
    "  --sleep-interval DURATION time between detections, e.g. 30s, 1m30s (default 60s)\n"
    "                            [GPULABEL_SLEEP_INTERVAL]\n"
    "  --machine-type-file PATH  source of nvidia.com/gpu.machine\n"
    "                            (default /sys/class/dmi/id/product_name)\n"
    "                            [GPULABEL_MACHINE_TYPE_FILE]\n"
    "  --no-sync                 never talk to the API server [GPULABEL_NO_SYNC=true]\n"
    "  -v N                      log verbosity (default 0) [GPULABEL_V]\n"
    "  -h, --help                show this help\n"
    "  --version                 show the version\n"
    "\n"
    "Exit status: 0 success, 1 runtime failure, 2 usage error.\n";

static int parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"1", "t", "T", "true", "TRUE", "True"};
    static const char *const no[] = {"0", "f", "F", "false", "FALSE", "False"};
    size_t i;

    for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (!strcmp(s, yes[i])) {
            *out = true;
            return 0;
        }
        if (!strcmp(s, no[i])) {
            *out = false;
            return 0;
        }
    }
    return -EINVAL;
}

/* Stores value into the member of cfg that o names. `what` ("--schema", "GPULABEL_SCHEMA")
 * goes into the one-line message on failure. */
static int opt_apply(const struct opt *o, const char *what, const char *value,
                     struct labeler_config *cfg, struct err *err)
{
    char *member = (char *)cfg + o->offset;

    switch (o->kind) {
    case OPT_BOOL: {
        bool b;

        if (parse_bool(value, &b))
            return err_set(err, -EINVAL, "%s: invalid boolean '%s' (want true or false)", what,
                                value);
        memcpy(member, &b, sizeof(b));
        return 0;
    }
    case OPT_STRING:
        if (!*value)
            return err_set(err, -EINVAL, "%s: empty value", what);
        memcpy(member, &value, sizeof(value));
        return 0;
    case OPT_SCHEMA: {
        unsigned bits;

        if (labeler_schemas_parse(value, &bits, err)) {
            err_prefix(err, "%s", what);
            return -EINVAL;
        }
        memcpy(member, &bits, sizeof(bits));
        return 0;
    }
    case OPT_DURATION: {
        long ms;

        if (labeler_duration_parse(value, &ms, err)) {
            err_prefix(err, "%s", what);
            return -EINVAL;
        }
        if (ms <= 0)
            return err_set(err, -EINVAL, "%s: duration must be positive", what);
        memcpy(member, &ms, sizeof(ms));
        return 0;
    }
    case OPT_INT: {
        char *end;
        long n;

        errno = 0;
        n = strtol(value, &end, 10);
        if (!*value || *end || errno || n < 0 || n > 10)
            return err_set(err, -EINVAL, "%s: invalid level '%s' (want 0 to 10)", what, value);
        {
            int v = (int)n;

            memcpy(member, &v, sizeof(v));
        }
        return 0;
    }
    }
    return -EINVAL;
}

static int config_from_env(struct labeler_config *cfg, struct err *err)
{
    size_t i;

    for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
        const char *v = getenv(opts[i].env);

        if (v && opt_apply(&opts[i], opts[i].env, v, cfg, err))
            return -EINVAL;
    }
    return 0;
}

static const struct opt *opt_find_long(const char *name, size_t len)
{
    size_t i;

    for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
        if (strlen(opts[i].name) == len && !strncmp(opts[i].name, name, len))
            return &opts[i];
    return NULL;
}

static const struct opt *opt_find_short(char c)
{
    size_t i;

    for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
        if (opts[i].shortname && opts[i].shortname == c)
            return &opts[i];
    return NULL;
}

enum { PARSE_OK = 0, PARSE_HELP = 1, PARSE_VERSION = 2 };

/* Returns PARSE_* or -EINVAL with err naming the flag. */
static int config_from_args(int argc, char **argv, struct labeler_config *cfg, struct err *err)
{
    int i;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *value = NULL;
        const struct opt *o;
        char what[80];

        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return PARSE_HELP;
        if (!strcmp(a, "--version"))
            return PARSE_VERSION;
        if (!strcmp(a, "--")) {
            if (i + 1 < argc)
                return err_set(err, -EINVAL, "unexpected argument '%s'", argv[i + 1]);
            break;
        }
        if (a[0] == '-' && a[1] == '-' && a[2]) {
            const char *eq = strchr(a + 2, '=');

            o = opt_find_long(a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
            if (!o)
                return err_set(err, -EINVAL, "unknown flag '%.*s' (see gpulabel --help)",
                                    eq ? (int)(eq - a) : (int)strlen(a), a);
            snprintf(what, sizeof(what), "--%s", o->name);
            if (eq)
                value = eq + 1;
        } else if (a[0] == '-' && a[1] && a[1] != '-') {
            o = opt_find_short(a[1]);
            if (!o)
                return err_set(err, -EINVAL, "unknown flag '-%c' (see gpulabel --help)", a[1]);
            snprintf(what, sizeof(what), "-%c", o->shortname);
            if (a[2])
                value = a[2] == '=' ? a + 3 : a + 2;
        } else {
            return err_set(err, -EINVAL, "unexpected argument '%s' (see gpulabel --help)", a);
        }
        if (!value && o->kind == OPT_BOOL)
            value = "true";
        if (!value) {
            if (i + 1 >= argc)
                return err_set(err, -EINVAL, "%s: missing value", what);
            value = argv[++i];
        }
        if (opt_apply(o, what, value, cfg, err))
            return -EINVAL;
    }
    return PARSE_OK;
}

static void print_err(const struct err *err)
{
    char buf[ERR_MSG_MAX + 600];

    fprintf(stderr, "gpulabel: %s\n", err_format(err, buf, sizeof(buf)));
}

static int run_oneshot(struct labeler_config *cfg)
{
    struct labeler_labels labels = {0};
    struct err err;
    bool sync = cfg->node_name && !cfg->no_sync;
    int status = 1;

    err_clear(&err);
    if (!cfg->output && !cfg->feature_file && !sync)
        cfg->output = "-";
    if (labeler_detect(cfg, &labels, &err)) {
        if (labels.nvml_simulated)
            fprintf(stderr, "gpulabel: using a simulated NVML (test double), not a real GPU "
                            "driver\n");
        print_err(&err);
        goto out;
    }
    if (labels.nvml_simulated)
        fprintf(stderr, "gpulabel: using a simulated NVML (test double), not a real GPU driver\n");
    if (labeler_write_outputs(cfg, &labels, &err)) {
        print_err(&err);
        goto out;
    }
    if (sync && labeler_sync_once(cfg, &labels, &err)) {
        print_err(&err); /* the sync error already names the node */
        goto out;
    }
    status = 0;
out:
    labeler_labels_release(&labels);
    return status;
}

int main(int argc, char **argv)
{
    struct labeler_config cfg;
    struct err err;
    int rc;

    memset(&cfg, 0, sizeof(cfg));
    cfg.schemas = LABELER_SCHEMA_ACK;
    cfg.sleep_interval_ms = DEFAULT_SLEEP_INTERVAL_MS;
    err_clear(&err);
    if (config_from_env(&cfg, &err)) {
        print_err(&err);
        return 2;
    }
    rc = config_from_args(argc, argv, &cfg, &err);
    if (rc < 0) {
        print_err(&err);
        return 2;
    }
    if (rc == PARSE_HELP) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (rc == PARSE_VERSION) {
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
    if (cfg.oneshot)
        return run_oneshot(&cfg);
    return labeler_daemon_run(&cfg);
}
