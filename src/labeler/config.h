/* config.h - gpulabel's settings, filled from flags and GPULABEL_* environment variables by
 * main.c and read by the detection, labelling, sync and daemon modules, and the rules of the
 * values that are more than a string. Strings are borrowed from argv/environ and live as long
 * as the process. */
#ifndef LABELER_CONFIG_H
#define LABELER_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "deviceplugin/plugin.h"
#include "draplugin/plugin.h"

enum {
    LABELER_SCHEMA_ACK = 1u << 0, /* aliyun.accelerator/nvidia_{count,mem,name} */
    LABELER_SCHEMA_GFD = 1u << 1, /* nvidia.com/... GPU Feature Discovery keys */
};

enum labeler_mig_strategy {
    LABELER_MIG_NONE = 0, /* MIG-enabled GPUs count as the GPUs they are */
    LABELER_MIG_SINGLE,   /* every GPU is split alike: nvidia.com/gpu.* describe MIG devices */
    LABELER_MIG_MIXED,    /* nvidia.com/mig-<profile>.* labels per profile */
};

/* How the node's GPUs are offered to the kubelet (--mode); never both ways for one GPU. */
enum labeler_mode {
    LABELER_MODE_AUTO = 0,      /* by the Node's label, read at start (as the GPU Operator
                                 * picks its DaemonSets' nodes by it): */
    LABELER_MODE_DEVICE_PLUGIN, /* nvidia.com/gpu through the device plugin (gpulabel's default) */
    LABELER_MODE_DRA,           /* ResourceSlices and the kubelet's DRA plugin */
};
/* The GPU Operator's label of a node that runs NVIDIA's DRA driver instead of its device
 * plugin; --mode auto reads it. */
#define LABELER_MODE_LABEL "nvidia.com/gpu.deploy.dra-driver"

struct labeler_config {
    const char *node_name;    /* --node-name / $NODE_NAME */
    const char *kubeconfig;   /* --kubeconfig / $KUBECONFIG; NULL: in-cluster or ~/.kube/config */
    const char *nvml_lib;     /* --nvml-lib; default "libnvidia-ml.so.1" */
    unsigned schemas;         /* --schema ack,gfd; default LABELER_SCHEMA_ACK */
    const char *output;       /* --output PATH or "-" (stdout); NULL: none */
    const char *feature_file; /* --feature-file PATH; NULL: none */
    const char *machine_type_file; /* --machine-type-file; default /sys/class/dmi/id/product_name */
    bool oneshot;                  /* --oneshot: detect, output, (sync unless --no-sync) and exit */
    bool no_sync;                  /* --no-sync: never talk to the API server */
    long sleep_interval_ms;        /* --sleep-interval (60s) */
    int verbosity;                 /* -v N */
    bool log_json;                 /* --logging-format json (the daemon's lines; default text) */
    const char *metrics_addr;      /* --metrics-addr HOST:PORT: /healthz, /readyz, /metrics */
    long timeout_ms;               /* --timeout (30s): how long --oneshot retries the API */
    uint64_t memory_limit;         /* --memory-limit, else the cgroup's; 0: none known */
    int mig_strategy;              /* --mig-strategy: enum labeler_mig_strategy */
    bool fail_on_init_error;       /* --fail-on-init-error (default true): oneshot exits 1
                                    * when NVML cannot start */
    bool device_plugin;            /* --device-plugin (default true): serve the kubelet */
    struct dp_config dp;           /* --device-plugin-dir, --resource-name, --replicas, ... */
    int mode;                      /* --mode: enum labeler_mode */
    struct dra_config dra;         /* --driver-name, --kubelet-registrar-dir, ... (DRA mode) */
};

#define LABELER_INTERVAL_MAX_MS (100L * 86400 * 1000)

/* labeler_interval_parse reads --sleep-interval: a Go duration (time.ParseDuration: "30s",
 * "1m30s", "500ms") from 1ms to 100 days, into whole milliseconds. Returns 0, or -EINVAL with
 * err saying why (not naming the flag). */
int labeler_interval_parse(const char *s, long *ms, struct err *err);

#endif
