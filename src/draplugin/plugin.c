/* plugin.c - the kubelet's DRA plugin (plugin.h): the two servers and their threads, the
 * registration answers, and NodePrepareResources / NodeUnprepareResources.
 *
 * mu guards the devices, the status and the claims (the checkpoint's contents); the DRA thread
 * is the only one that prepares and unprepares, so two calls for one claim never interleave. */
#include "draplugin/plugin.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "base/clock.h"
#include "base/log.h"
#include "draplugin/cdi.h"
#include "draplugin/checkpoint.h"
#include "draplugin/dra.pb-c.h"
#include "draplugin/pluginregistration.pb-c.h"
#include "rpc/rpc.h"

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest PrepareReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse PrepareResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse__ClaimsEntry
    PrepareEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse PrepareOne;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device PbDevice;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest UnprepareReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse UnprepareResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse__ClaimsEntry
    UnprepareEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourceResponse UnprepareOne;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim PbClaim;

#define M_PREPARE "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
#define M_UNPREPARE "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources"
#define M_PREPARE_B "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources"
#define M_UNPREPARE_B "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodeUnprepareResources"
#define M_GETINFO "/pluginregistration.Registration/GetInfo"
#define M_NOTIFY "/pluginregistration.Registration/NotifyRegistrationStatus"
#define POLL_MS 50
#define RETRY_MS 1000   /* a socket that cannot be served, or went away, is tried again */
#define MAX_CLAIMS 1024 /* claims in one request */

/* The two sockets (registration, DRA) and the one server that serves both, on one thread. */
struct serving {
    struct dra_plugin *p;
    char reg_path[4400], dra_path[4400];
    struct rpc_handlers h;
    struct rpc_server *srv;
    struct rpc_conn_stats seen;
    pthread_t thread;
    bool started;
    char last_err[ERR_MSG_MAX];
};

struct dra_plugin {
    struct dra_config cfg;
    char driver[256], dir[4200], cdi_root[4096], checkpoint[4400];
    struct serving sv;

    pthread_mutex_t mu; /* guards devs, st, claims */
    struct dra_devices devs;
    bool have_devs; /* the daemon gave the devices once */
    struct dra_status st;
    json_t *claims;
    volatile int stop;
};

static void plog(struct dra_plugin *p, char sev, int level, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void plog(struct dra_plugin *p, char sev, int level, const char *fmt, ...)
{
    char line[1536];
    va_list ap;

    if (!p->cfg.log)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    p->cfg.log(p->cfg.ctx, sev, level, line);
}

static int pack_to(const ProtobufCMessage *m, struct buf *out)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *b;
    int rc;

    if (n > RPC_MSG_MAX)
        return -E2BIG;
    b = malloc(n ? n : 1);
    if (!b)
        return -ENOMEM;
    protobuf_c_message_pack(m, b);
    rc = buf_append(out, b, n);
    free(b);
    return rc;
}

/* ---- registration ----------------------------------------------------------------------- */

static int handle_reg(void *ctx, const char *method, const uint8_t *req, size_t len,
                      struct buf *resp, char *msg, size_t msgsz)
{
    struct dra_plugin *p = ctx;

    if (!strcmp(method, M_GETINFO)) {
        Pluginregistration__PluginInfo info = PLUGINREGISTRATION__PLUGIN_INFO__INIT;
        char *versions[] = {"v1.DRAPlugin", "v1beta1.DRAPlugin"};

        info.type = "DRAPlugin";
        info.name = p->driver;
        info.endpoint = p->sv.dra_path;
        info.n_supported_versions = 2;
        info.supported_versions = versions;
        return pack_to(&info.base, resp) ? RPC_INTERNAL : RPC_OK;
    }
    if (!strcmp(method, M_NOTIFY)) {
        Pluginregistration__RegistrationStatus *s =
            pluginregistration__registration_status__unpack(NULL, len, req);
        Pluginregistration__RegistrationStatusResponse r =
            PLUGINREGISTRATION__REGISTRATION_STATUS_RESPONSE__INIT;
        bool was;

        if (!s) {
            snprintf(msg, msgsz, "cannot decode the RegistrationStatus");
            return RPC_INVALID_ARGUMENT;
        }
        pthread_mutex_lock(&p->mu);
        was = p->st.registered;
        p->st.registered = s->plugin_registered;
        pthread_mutex_unlock(&p->mu);
        if (s->plugin_registered && !was)
            plog(p, 'I', 0, "DRA plugin: registered %s with the kubelet through %s", p->driver,
                 p->sv.reg_path);
        else if (!s->plugin_registered)
            plog(p, 'E', 0, "DRA plugin: the kubelet refused %s: %s", p->driver,
                 log_quote_msg(s->error ? s->error : ""));
        pluginregistration__registration_status__free_unpacked(s, NULL);
        return pack_to(&r.base, resp) ? RPC_INTERNAL : RPC_OK;
    }
    snprintf(msg, msgsz, "unknown method %s", method);
    return RPC_UNIMPLEMENTED;
}

/* ---- prepare ------------------------------------------------------------------------------ */

static const char *jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* GETs the claim; checks it is the one the kubelet means (its UID). */
/* "namespace/name" of a claim the kubelet named, quoted for a log line (log_quote's ring). */
static const char *claim_ref(const PbClaim *c)
{
    char ref[600];

    snprintf(ref, sizeof(ref), "%.250s/%.250s", c->namespace_ ? c->namespace_ : "",
             c->name ? c->name : "");
    return log_quote(ref);
}

static int get_claim(struct dra_plugin *p, const PbClaim *c, json_t **out, double *wait_s,
                     struct err *err)
{
    struct kube_response resp;
    char ns[512], name[1024], path[1700];
    const char *uid;
    int rc;

    *out = NULL;
    if (p->cfg.claim_source) {
        json_t *o = NULL;

        rc = p->cfg.claim_source(p->cfg.ctx, c->namespace_, c->name, &o, err);
        if (rc)
            return rc;
        uid = jstr(json_object_get(o, "metadata"), "uid");
        if (!uid || strcmp(uid, c->uid)) {
            json_decref(o);
            return err_set(err, -ESTALE, "ResourceClaim %s/%s has another UID", c->namespace_,
                           c->name);
        }
        *out = o;
        return 0;
    }
    if (!p->cfg.client)
        return err_set(err, -ENOTCONN, "no API client to read ResourceClaim %s/%s", c->namespace_,
                       c->name);
    if (!kube_path_escape(c->namespace_, ns, sizeof(ns)) ||
        !kube_path_escape(c->name, name, sizeof(name)))
        return err_set(err, -ENAMETOOLONG, "claim name too long");
    snprintf(path, sizeof(path), "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s", ns,
             name);
    memset(&resp, 0, sizeof(resp));
    rc = kube_client_request(p->cfg.client, "GET", path, NULL, NULL, 0, &resp, err);
    *wait_s = resp.wait_s;
    if (rc) {
        kube_response_release(&resp);
        if (rc == -ENOENT)
            return err_set(err, rc, "ResourceClaim %s/%s not found", c->namespace_, c->name);
        err_prefix(err, "cannot get ResourceClaim %s/%s", c->namespace_, c->name);
        return rc;
    }
    uid = jstr(json_object_get(resp.json, "metadata"), "uid");
    if (!uid || strcmp(uid, c->uid)) {
        rc = err_set(err, -ESTALE,
                     "ResourceClaim %s/%s has UID %s, not %s (deleted and made again?)",
                     c->namespace_, c->name, uid ? uid : "(none)", c->uid);
        kube_response_release(&resp);
        return rc;
    }
    *out = json_incref(resp.json);
    kube_response_release(&resp);
    return 0;
}

/* Reads the allocation results of this driver: request names and devices (indices into
 * p->devs, under mu), into entries (a JSON array of checkpoint device objects, without the CDI
 * names yet). Every fault is an error naming the claim. */
static int claim_devices(struct dra_plugin *p, const PbClaim *c, const json_t *claim,
                         json_t *entries, size_t *idx, size_t max, size_t *n, struct err *err)
{
    const json_t *alloc = json_object_get(json_object_get(claim, "status"), "allocation");
    const json_t *results = json_object_get(json_object_get(alloc, "devices"), "results"), *r;
    size_t i;

    *n = 0;
    if (!json_is_object(alloc))
        return err_set(err, -EINVAL, "ResourceClaim %s/%s is not allocated", c->namespace_,
                       c->name);
    if (!json_is_array(results))
        return err_set(err, -EINVAL,
                       "ResourceClaim %s/%s: malformed allocation: status.allocation.devices."
                       "results is not a list",
                       c->namespace_, c->name);
    json_array_foreach(results, i, r)
    {
        const char *driver = jstr(r, "driver"), *pool = jstr(r, "pool"), *dev = jstr(r, "device");
        const char *req = jstr(r, "request");
        const struct dra_device *d;

        if (!driver || !pool || !dev || !req)
            return err_set(err, -EINVAL,
                           "ResourceClaim %s/%s: malformed allocation: result %zu lacks driver, "
                           "pool, device or request",
                           c->namespace_, c->name, i);
        if (strcmp(driver, p->driver))
            continue; /* another driver's device */
        if (strcmp(pool, p->cfg.node))
            return err_set(err, -EINVAL,
                           "ResourceClaim %s/%s: device %.64s is allocated from pool %.64s, not "
                           "from this node's (%s)",
                           c->namespace_, c->name, dev, pool, p->cfg.node);
        d = dra_devices_find(&p->devs, dev);
        if (!d)
            return err_set(err, -ENODEV,
                           "ResourceClaim %s/%s: unknown device %.64s (this node has "
                           "%zu devices of %s)",
                           c->namespace_, c->name, dev, p->devs.n, p->driver);
        if (*n == max)
            return err_set(err, -E2BIG, "ResourceClaim %s/%s: more than %zu devices", c->namespace_,
                           c->name, max);
        idx[(*n)++] = (size_t)(d - p->devs.v);
        if (json_array_append_new(
                entries, json_pack("{s:s,s:s,s:s}", "request", req, "pool", pool, "device", dev)))
            return err_set(err, -ENOMEM, "out of memory");
    }
    return 0;
}

/* A claim prepared before whose CDI spec is gone (the node rebooted and /var/run with it):
 * written again from its checkpoint entry, so that the answer names a spec that is there. */
static int cdi_again(struct dra_plugin *p, const char *uid, const json_t *entry, struct err *err)
{
    char path[4400];
    size_t idx[64], n = 0, i;
    struct stat st;
    const json_t *d;
    int rc = 0;

    dra_cdi_path(p->cdi_root, p->driver, uid, path, sizeof(path));
    if (!stat(path, &st))
        return 0;
    pthread_mutex_lock(&p->mu);
    json_array_foreach(json_object_get(entry, "devices"), i, d)
    {
        const struct dra_device *dev = dra_devices_find(&p->devs, jstr(d, "device"));

        if (!dev || n == sizeof(idx) / sizeof(idx[0])) {
            rc = err_set(err, -ENODEV,
                         "claim %s was prepared with device %.64s, which this node "
                         "no longer has",
                         uid, jstr(d, "device"));
            break;
        }
        idx[n++] = (size_t)(dev - p->devs.v);
    }
    if (!rc)
        rc = dra_cdi_write(p->cdi_root, p->cfg.dev_root, p->driver, uid, &p->devs, idx, n, err);
    pthread_mutex_unlock(&p->mu);
    return rc;
}

/* Prepares one claim: its checkpoint entry (new reference) or an error; nothing written then.
 * *wait_s is how long the claim's GET waited for the API server's answer (0 without a GET). */
static int prepare_one(struct dra_plugin *p, const PbClaim *c, json_t **entry, double *wait_s,
                       struct err *err)
{
    json_t *claim = NULL, *devices = json_array(), *e, *saved, *d;
    size_t idx[64], n = 0, i;
    int rc;

    *entry = NULL;
    *wait_s = 0;
    pthread_mutex_lock(&p->mu);
    saved = json_incref(json_object_get(p->claims, c->uid));
    pthread_mutex_unlock(&p->mu);
    if (saved) { /* prepared before (this run or an earlier one): the same answer */
        json_decref(devices);
        rc = cdi_again(p, c->uid, saved, err);
        if (rc) {
            json_decref(saved);
            return rc;
        }
        *entry = saved;
        return 0;
    }
    if (!devices)
        return err_set(err, -ENOMEM, "out of memory");
    rc = get_claim(p, c, &claim, wait_s, err);
    if (!rc) {
        pthread_mutex_lock(&p->mu);
        rc = claim_devices(p, c, claim, devices, idx, sizeof(idx) / sizeof(idx[0]), &n, err);
        if (!rc)
            rc = dra_cdi_write(p->cdi_root, p->cfg.dev_root, p->driver, c->uid, &p->devs, idx, n,
                               err);
        pthread_mutex_unlock(&p->mu);
    }
    json_decref(claim);
    if (rc) {
        json_decref(devices);
        return rc;
    }
    json_array_foreach(devices, i, d)
    {
        char cdi[700];

        dra_cdi_name(p->driver, c->uid, jstr(d, "device"), cdi, sizeof(cdi));
        json_object_set_new(d, "cdi", json_pack("[s]", cdi));
    }
    e = json_pack("{s:s,s:s,s:o}", "namespace", c->namespace_, "name", c->name, "devices", devices);
    pthread_mutex_lock(&p->mu);
    rc = !e || json_object_set(p->claims, c->uid, e)
             ? err_set(err, -ENOMEM, "out of memory")
             : dra_checkpoint_save(p->checkpoint, p->claims, err);
    if (rc) { /* nothing half-written: neither the entry nor the spec stays */
        struct err e2;

        json_object_del(p->claims, c->uid);
        dra_cdi_remove(p->cdi_root, p->driver, c->uid, &e2);
    }
    p->st.prepared = json_object_size(p->claims);
    pthread_mutex_unlock(&p->mu);
    if (rc) {
        json_decref(e);
        return rc;
    }
    *entry = e;
    return 0;
}

static bool claim_ok(const PbClaim *c)
{
    return c && c->uid && *c->uid && c->namespace_ && *c->namespace_ && c->name && *c->name &&
           strlen(c->uid) < 128 && !strchr(c->uid, '/') && strcmp(c->uid, ".") &&
           strcmp(c->uid, "..");
}

static int handle_prepare(struct dra_plugin *p, const uint8_t *req, size_t len, struct buf *resp,
                          char *msg, size_t msgsz)
{
    PrepareReq *r = k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__unpack(
        NULL, len, req);
    PrepareResp out = K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_RESPONSE__INIT;
    PrepareEntry *ents = NULL, **entp = NULL;
    PrepareOne *ones = NULL;
    PbDevice *devs = NULL, **devp = NULL;
    json_t **entries = NULL;
    char **errs = NULL;
    size_t i, j, ndev = 0, at = 0;
    int status = RPC_OK;

    if (!r) {
        snprintf(msg, msgsz, "cannot decode the NodePrepareResourcesRequest");
        return RPC_INVALID_ARGUMENT;
    }
    if (r->n_claims > MAX_CLAIMS) {
        snprintf(msg, msgsz, "%zu claims in one request, more than %d", r->n_claims, MAX_CLAIMS);
        status = RPC_INVALID_ARGUMENT;
        goto out;
    }
    for (i = 0; i < r->n_claims; i++)
        if (!claim_ok(r->claims[i])) {
            snprintf(msg, msgsz, "claim %zu lacks a namespace, name or UID, or its UID is no UID",
                     i);
            status = RPC_INVALID_ARGUMENT;
            goto out;
        }
    pthread_mutex_lock(&p->mu);
    i = p->have_devs;
    pthread_mutex_unlock(&p->mu);
    if (!i) { /* the kubelet asks again */
        snprintf(msg, msgsz, "the node's GPUs are not detected yet");
        status = RPC_UNAVAILABLE;
        goto out;
    }
    ents = calloc(r->n_claims + 1, sizeof(*ents));
    entp = calloc(r->n_claims + 1, sizeof(*entp));
    ones = calloc(r->n_claims + 1, sizeof(*ones));
    entries = calloc(r->n_claims + 1, sizeof(*entries));
    errs = calloc(r->n_claims + 1, sizeof(*errs));
    if (!ents || !entp || !ones || !entries || !errs) {
        status = RPC_INTERNAL;
        goto out;
    }
    for (i = 0; i < r->n_claims; i++) {
        const PbClaim *c = r->claims[i];
        double t0 = mono_now(), wait = 0;
        struct err e;

        err_clear(&e);
        if (prepare_one(p, c, &entries[i], &wait, &e)) {
            errs[i] = strdup(e.msg);
            plog(p, 'W', 0, "DRA plugin: cannot prepare claim %s (%s): %s", claim_ref(c),
                 log_quote(c->uid ? c->uid : ""), e.msg);
        } else {
            ndev += json_array_size(json_object_get(entries[i], "devices"));
            /* the API server's share apart: the rest is the agent's own time */
            plog(p, 'I', 1,
                 "DRA plugin: prepared claim %s (%s) in %.3f ms, %.3f ms of it waiting for the "
                 "API server's answer",
                 claim_ref(c), log_quote(c->uid ? c->uid : ""), (mono_now() - t0) * 1000.0,
                 wait * 1000.0);
        }
        pthread_mutex_lock(&p->mu);
        if (errs[i])
            p->st.failures++;
        else
            p->st.prepares++;
        pthread_mutex_unlock(&p->mu);
    }
    devs = calloc(ndev + 1, sizeof(*devs));
    devp = calloc(ndev + 1, sizeof(*devp));
    if (!devs || !devp) {
        status = RPC_INTERNAL;
        goto out;
    }
    for (i = 0; i < r->n_claims; i++) {
        const json_t *d;

        k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__claims_entry__init(
            &ents[i]);
        k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resource_response__init(&ones[i]);
        ents[i].key = r->claims[i]->uid;
        ents[i].value = &ones[i];
        entp[i] = &ents[i];
        if (errs[i] || !entries[i]) {
            ones[i].error = errs[i] ? errs[i] : "out of memory";
            continue;
        }
        ones[i].devices = &devp[at];
        json_array_foreach(json_object_get(entries[i], "devices"), j, d)
        {
            PbDevice *pd = &devs[at];

            k8s__io__kubelet__pkg__apis__dra__v1__device__init(pd);
            pd->pool_name = (char *)jstr(d, "pool");
            pd->device_name = (char *)jstr(d, "device");
            devp[at++] = pd; /* its strings are set below, borrowed from the entry's JSON */
            ones[i].n_devices++;
        }
    }
    /* the protobuf-c repeated string fields want char ** arrays: one for each device */
    {
        char **strs = calloc(2 * ndev + 1, sizeof(*strs));
        size_t k = 0;

        if (!strs) {
            status = RPC_INTERNAL;
            goto out;
        }
        at = 0;
        for (i = 0; i < r->n_claims; i++) {
            const json_t *d;

            if (errs[i] || !entries[i])
                continue;
            json_array_foreach(json_object_get(entries[i], "devices"), j, d)
            {
                PbDevice *pd = &devs[at++];

                strs[k] = (char *)jstr(d, "request");
                pd->request_names = &strs[k];
                pd->n_request_names = strs[k] ? 1 : 0;
                k++;
                strs[k] = (char *)json_string_value(json_array_get(json_object_get(d, "cdi"), 0));
                pd->cdi_device_ids = &strs[k];
                pd->n_cdi_device_ids = strs[k] ? 1 : 0;
                k++;
            }
        }
        out.n_claims = r->n_claims;
        out.claims = entp;
        if (pack_to(&out.base, resp))
            status = RPC_INTERNAL;
        free(strs);
    }
out:
    if (status == RPC_INTERNAL && !msg[0])
        snprintf(msg, msgsz, "out of memory");
    for (i = 0; r && entries && i < r->n_claims; i++)
        json_decref(entries[i]);
    for (i = 0; r && errs && i < r->n_claims; i++)
        free(errs[i]);
    free(entries);
    free(errs);
    free(ents);
    free(entp);
    free(ones);
    free(devs);
    free(devp);
    k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__free_unpacked(r, NULL);
    return status;
}

static int handle_unprepare(struct dra_plugin *p, const uint8_t *req, size_t len, struct buf *resp,
                            char *msg, size_t msgsz)
{
    UnprepareReq *r =
        k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__unpack(NULL, len,
                                                                                       req);
    UnprepareResp out =
        K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCES_RESPONSE__INIT;
    UnprepareEntry *ents = NULL, **entp = NULL;
    UnprepareOne *ones = NULL;
    char **errs = NULL;
    size_t i;
    int status = RPC_OK;

    if (!r) {
        snprintf(msg, msgsz, "cannot decode the NodeUnprepareResourcesRequest");
        return RPC_INVALID_ARGUMENT;
    }
    for (i = 0; i < r->n_claims; i++)
        if (!claim_ok(r->claims[i]) || i >= MAX_CLAIMS) {
            snprintf(msg, msgsz, "claim %zu lacks a namespace, name or UID, or its UID is no UID",
                     i);
            status = RPC_INVALID_ARGUMENT;
            goto out;
        }
    ents = calloc(r->n_claims + 1, sizeof(*ents));
    entp = calloc(r->n_claims + 1, sizeof(*entp));
    ones = calloc(r->n_claims + 1, sizeof(*ones));
    errs = calloc(r->n_claims + 1, sizeof(*errs));
    if (!ents || !entp || !ones || !errs) {
        status = RPC_INTERNAL;
        snprintf(msg, msgsz, "out of memory");
        goto out;
    }
    for (i = 0; i < r->n_claims; i++) {
        const PbClaim *c = r->claims[i];
        struct err e;
        json_t *was;
        int rc;

        err_clear(&e);
        pthread_mutex_lock(&p->mu);
        was = json_incref(json_object_get(p->claims, c->uid));
        rc = dra_cdi_remove(p->cdi_root, p->driver, c->uid, &e);
        if (!rc && was) {
            json_object_del(p->claims, c->uid);
            rc = dra_checkpoint_save(p->checkpoint, p->claims, &e);
            if (rc) /* still prepared as far as a restart knows: keep it so */
                json_object_set(p->claims, c->uid, was);
        }
        p->st.prepared = json_object_size(p->claims);
        pthread_mutex_unlock(&p->mu);
        json_decref(was);
        if (rc) {
            errs[i] = strdup(e.msg);
            plog(p, 'W', 0, "DRA plugin: cannot unprepare claim %s (%s): %s", claim_ref(c),
                 log_quote(c->uid ? c->uid : ""), e.msg);
        } else {
            plog(p, 'I', 1, "DRA plugin: unprepared claim %s (%s)", claim_ref(c),
                 log_quote(c->uid ? c->uid : ""));
        }
        k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__claims_entry__init(
            &ents[i]);
        k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resource_response__init(&ones[i]);
        ents[i].key = c->uid;
        ents[i].value = &ones[i];
        if (rc)
            ones[i].error = errs[i] ? errs[i] : "out of memory";
        entp[i] = &ents[i];
    }
    out.n_claims = r->n_claims;
    out.claims = entp;
    if (pack_to(&out.base, resp)) {
        status = RPC_INTERNAL;
        snprintf(msg, msgsz, "out of memory");
    }
out:
    for (i = 0; errs && i < r->n_claims; i++)
        free(errs[i]);
    free(errs);
    free(ents);
    free(entp);
    free(ones);
    k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__free_unpacked(r, NULL);
    return status;
}

static int handle_dra(void *ctx, const char *method, const uint8_t *req, size_t len,
                      struct buf *resp, char *msg, size_t msgsz)
{
    struct dra_plugin *p = ctx;

    plog(p, 'I', 3, "gRPC %s (%zu bytes)", method, len);
    if (!strncmp(method, "/pluginregistration.", 20))
        return handle_reg(p, method, req, len, resp, msg, msgsz);
    if (!strcmp(method, M_PREPARE) || !strcmp(method, M_PREPARE_B))
        return handle_prepare(p, req, len, resp, msg, msgsz);
    if (!strcmp(method, M_UNPREPARE) || !strcmp(method, M_UNPREPARE_B))
        return handle_unprepare(p, req, len, resp, msg, msgsz);
    snprintf(msg, msgsz, "unknown method %s", method);
    return RPC_UNIMPLEMENTED;
}

/* ---- the server ----------------------------------------------------------------------------- */

static void serving_start(struct serving *v)
{
    const char *paths[2] = {v->reg_path, v->dra_path};
    struct err e;

    err_clear(&e);
    /* the DRA socket first in the list, so that the registration socket appears last: the
     * kubelet, seeing it, finds the DRA socket ready */
    paths[0] = v->dra_path;
    paths[1] = v->reg_path;
    if (rpc_server_new_paths(paths, 2, &v->h, &v->srv, &e)) {
        if (strcmp(v->last_err, e.msg))
            plog(v->p, 'E', 0, "DRA plugin: %s; retrying every %ds", e.msg, RETRY_MS / 1000);
        snprintf(v->last_err, sizeof(v->last_err), "%s", e.msg);
        return;
    }
    v->last_err[0] = '\0';
    memset(&v->seen, 0, sizeof(v->seen));
}

/* Serves both sockets; puts them back when either disappears (the kubelet's plugin watcher
 * then registers the plugin again, as after its own restart). */
static void *serving_main(void *arg)
{
    struct serving *v = arg;
    int64_t next_check = 0;
    char line[512];

    serving_start(v);
    while (!v->p->stop) {
        if (v->srv)
            rpc_server_poll(v->srv, POLL_MS);
        else
            mono_sleep_ms(POLL_MS);
        if (mono_ms() < next_check)
            continue;
        next_check = mono_ms() + RETRY_MS;
        if (v->srv && !rpc_server_sockets_there(v->srv)) {
            plog(v->p, 'I', 0, "DRA plugin: a socket of %s or %s was removed; serving them again",
                 v->reg_path, v->dra_path);
            rpc_server_free(v->srv);
            v->srv = NULL;
        }
        if (!v->srv)
            serving_start(v);
        if (v->srv && rpc_server_conns_news(v->srv, &v->seen, line, sizeof(line)))
            plog(v->p, 'W', 0, "DRA plugin: %s: %s", v->dra_path, line);
    }
    rpc_server_free(v->srv);
    v->srv = NULL;
    return NULL;
}

static int mkdir_p(const char *dir, int mode, struct err *err)
{
    char p[4200];
    size_t i;

    snprintf(p, sizeof(p), "%s", dir);
    for (i = 1; p[i]; i++) {
        if (p[i] != '/')
            continue;
        p[i] = '\0';
        if (mkdir(p, 0755) && errno != EEXIST)
            return err_set(err, -errno, "cannot create '%s': %s", p, strerror(errno));
        p[i] = '/';
    }
    if (mkdir(p, (mode_t)mode) && errno != EEXIST)
        return err_set(err, -errno, "cannot create '%s': %s", p, strerror(errno));
    return 0;
}

static int plugin_new(const struct dra_config *cfg, struct dra_plugin **out, struct err *err)
{
    struct dra_plugin *p = calloc(1, sizeof(*p));
    const char *reg =
        cfg->registrar_dir && *cfg->registrar_dir ? cfg->registrar_dir : DRA_DEFAULT_REGISTRAR_DIR;
    const char *plugins =
        cfg->plugins_dir && *cfg->plugins_dir ? cfg->plugins_dir : DRA_DEFAULT_PLUGINS_DIR;

    *out = NULL;
    if (!p)
        return err_set(err, -ENOMEM, "out of memory");
    p->cfg = *cfg;
    pthread_mutex_init(&p->mu, NULL);
    snprintf(p->driver, sizeof(p->driver), "%s",
             cfg->driver && *cfg->driver ? cfg->driver : DRA_DEFAULT_DRIVER);
    snprintf(p->dir, sizeof(p->dir), "%.3900s/%.190s", plugins, p->driver);
    snprintf(p->cdi_root, sizeof(p->cdi_root), "%s",
             cfg->cdi_root && *cfg->cdi_root ? cfg->cdi_root : DRA_DEFAULT_CDI_ROOT);
    snprintf(p->checkpoint, sizeof(p->checkpoint), "%s/checkpoint.json", p->dir);
    p->sv.p = p;
    snprintf(p->sv.reg_path, sizeof(p->sv.reg_path), "%.3900s/%.190s-reg.sock", reg, p->driver);
    snprintf(p->sv.dra_path, sizeof(p->sv.dra_path), "%s/dra.sock", p->dir);
    p->sv.h = (struct rpc_handlers){.ctx = p, .unary = handle_dra};
    p->claims = json_object();
    if (!p->claims) {
        dra_plugin_stop(p);
        return err_set(err, -ENOMEM, "out of memory");
    }
    *out = p;
    return 0;
}

int dra_plugin_new_offline(const struct dra_config *cfg, struct dra_plugin **out, struct err *err)
{
    return plugin_new(cfg, out, err);
}

int dra_plugin_start(const struct dra_config *cfg, struct dra_plugin **out, struct err *err)
{
    struct dra_plugin *p;
    struct err e;
    int rc = plugin_new(cfg, &p, err);

    if (rc)
        return rc;
    rc = mkdir_p(p->dir, 0750, err);
    if (rc) {
        dra_plugin_stop(p);
        return rc;
    }
    json_decref(p->claims);
    err_clear(&e);
    if (dra_checkpoint_load(p->checkpoint, &p->claims, &e)) {
        char aside[4500];

        /* a checkpoint we cannot trust is kept for a human, not used */
        snprintf(aside, sizeof(aside), "%s.bad", p->checkpoint);
        rename(p->checkpoint, aside);
        plog(p, 'E', 0, "DRA plugin: %s; moved to %s, starting with no prepared claim", e.msg,
             aside);
    }
    if (!p->claims) {
        dra_plugin_stop(p);
        return err_set(err, -ENOMEM, "out of memory");
    }
    p->st.prepared = json_object_size(p->claims);
    if (p->st.prepared)
        plog(p, 'I', 0, "DRA plugin: %zu prepared claims from the checkpoint %s", p->st.prepared,
             p->checkpoint);
    if (pthread_create(&p->sv.thread, NULL, serving_main, &p->sv)) {
        dra_plugin_stop(p);
        return err_set(err, -EAGAIN, "cannot start the DRA plugin's thread");
    }
    p->sv.started = true;
    *out = p;
    return 0;
}

int dra_plugin_set_devices(struct dra_plugin *p, const struct dra_devices *d, struct err *err)
{
    struct dra_devices copy;

    memset(&copy, 0, sizeof(copy));
    copy = *d;
    copy.gpus = d->ngpus ? malloc(d->ngpus * sizeof(*d->gpus)) : NULL;
    copy.v = d->n ? malloc(d->n * sizeof(*d->v)) : NULL;
    if ((d->ngpus && !copy.gpus) || (d->n && !copy.v)) {
        free(copy.gpus);
        free(copy.v);
        return err_set(err, -ENOMEM, "out of memory");
    }
    if (d->ngpus)
        memcpy(copy.gpus, d->gpus, d->ngpus * sizeof(*d->gpus));
    if (d->n)
        memcpy(copy.v, d->v, d->n * sizeof(*d->v));
    pthread_mutex_lock(&p->mu);
    dra_devices_release(&p->devs);
    p->devs = copy;
    p->have_devs = true;
    pthread_mutex_unlock(&p->mu);
    return 0;
}

void dra_plugin_status(struct dra_plugin *p, struct dra_status *st)
{
    memset(st, 0, sizeof(*st));
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    *st = p->st;
    pthread_mutex_unlock(&p->mu);
}

int dra_plugin_handle(struct dra_plugin *p, const char *method, const uint8_t *req, size_t len,
                      struct buf *resp, char *msg, size_t msgsz)
{
    return handle_dra(p, method, req, len, resp, msg, msgsz);
}

const char *dra_plugin_socket(const struct dra_plugin *p)
{
    return p->sv.dra_path;
}

void dra_plugin_stop(struct dra_plugin *p)
{
    if (!p)
        return;
    p->stop = 1;
    if (p->sv.started)
        pthread_join(p->sv.thread, NULL);
    if (p->checkpoint[0]) { /* the checkpoint's spare (cdi.h), ours by its PID */
        char spare[4500];

        dra_spare_path(p->checkpoint, spare, sizeof(spare));
        unlink(spare);
    }
    dra_devices_release(&p->devs);
    json_decref(p->claims);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
