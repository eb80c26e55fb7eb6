/* plugin.h - gpulabel as the kubelet's DRA plugin (docs/dra-driver.md): the kubelet's plugin
 * registration (pluginregistration.v1: GetInfo, NotifyRegistrationStatus) on
 * <registrar-dir>/<driver>-reg.sock, and the DRA service (k8s.io/kubelet pkg/apis/dra, v1 and
 * v1beta1: NodePrepareResources, NodeUnprepareResources) on <plugins-dir>/<driver>/dra.sock,
 * both on src/rpc/ servers (mode 0600, the same bounds as the device plugin's).
 *
 * NodePrepareResources GETs each claim (the kubelet sends its namespace, name and UID),
 * takes the devices its allocation gives this driver on this node's pool, writes their CDI
 * spec (cdi.h) and answers with their CDI names; NodeUnprepareResources removes the spec.
 * Both are idempotent and kept in a checkpoint (checkpoint.h) that survives a restart. A claim
 * that cannot be prepared gets its error in the answer, with nothing of it written.
 *
 * One thread serves both sockets with one server (rpc_server_new_paths) and puts them back
 * when either disappears (the kubelet then finds the registration socket again, as it does
 * after its own restart). The devices
 * come from the daemon after every detection (dra_plugin_set_devices). Nothing here prints:
 * lines go to cfg->log. */
#ifndef DRAPLUGIN_PLUGIN_H
#define DRAPLUGIN_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/err.h"
#include "draplugin/devices.h"
#include "kube/client.h"

#define DRA_DEFAULT_REGISTRAR_DIR "/var/lib/kubelet/plugins_registry"
#define DRA_DEFAULT_PLUGINS_DIR "/var/lib/kubelet/plugins"

struct dra_config {
    const char *driver;         /* NULL: DRA_DEFAULT_DRIVER */
    const char *registrar_dir;  /* NULL: DRA_DEFAULT_REGISTRAR_DIR */
    const char *plugins_dir;    /* NULL: DRA_DEFAULT_PLUGINS_DIR; the sockets and checkpoint
                                * go in <plugins_dir>/<driver>/ */
    const char *cdi_root;       /* NULL: DRA_DEFAULT_CDI_ROOT */
    const char *dev_root;       /* NULL: "/dev" */
    const char *node;           /* this node: the pool a claim's devices must come from */
    struct kube_client *client; /* borrowed (thread-safe): GET claims from the plugin's thread */
    /* claim_source, when set, answers instead of the API server: the ResourceClaim ns/name as
     * a new JSON reference in *out, or an error (for the fuzzer and tests) */
    int (*claim_source)(void *ctx, const char *ns, const char *name, json_t **out, struct err *err);
    void (*log)(void *ctx, char sev, int level, const char *line);
    void *ctx;
};

struct dra_status {
    bool registered;   /* the kubelet's last NotifyRegistrationStatus said yes */
    size_t prepared;   /* claims prepared now */
    uint64_t prepares; /* NodePrepareResources claims answered without an error */
    uint64_t failures; /* claims answered with an error */
};

struct dra_plugin;

/* dra_plugin_start loads the checkpoint (a bad one is logged and set aside) and starts both
 * servers; fails when a socket's directory cannot be made or a thread cannot start. */
int dra_plugin_start(const struct dra_config *cfg, struct dra_plugin **out, struct err *err);

/* dra_plugin_set_devices gives the plugin the node's devices (copied; thread-safe). */
int dra_plugin_set_devices(struct dra_plugin *p, const struct dra_devices *d, struct err *err);

/* dra_plugin_status copies the counters (thread-safe). */
void dra_plugin_status(struct dra_plugin *p, struct dra_status *st);

/* dra_plugin_handle answers one call of method (a full gRPC name) with the request bytes, as
 * the servers do: a gRPC status (0 OK with the answer in resp) and msg when not OK. For tests
 * and the fuzzer; a plugin made by dra_plugin_new_offline serves it without sockets. */
int dra_plugin_handle(struct dra_plugin *p, const char *method, const uint8_t *req, size_t len,
                      struct buf *resp, char *msg, size_t msgsz);
int dra_plugin_new_offline(const struct dra_config *cfg, struct dra_plugin **out, struct err *err);

/* dra_plugin_socket is the DRA socket's path (borrowed). */
const char *dra_plugin_socket(const struct dra_plugin *p);

/* dra_plugin_stop stops the servers, removes both sockets and frees p (the checkpoint and the
 * CDI specs stay). Safe on NULL. */
void dra_plugin_stop(struct dra_plugin *p);

#endif
