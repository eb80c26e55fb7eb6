/* live.c - a running cluster as the offline commands' input (live-int.h): lists through the REST
 * client, read as kube-scheduler's informers read them (from the watch cache: live_page_path),
 * each handed to the manifest loader as it arrives, a part of LIVE_PAGE items at a time
 * (kube_client_get_stream), as the parsed list it is.
 *
 * PriorityClasses come first so bound pods resolve their priority as they are read (and go
 * straight into the scheduling cluster). A pod naming a PriorityClass that no longer exists
 * keeps the spec.priority admission gave it, with one warning: a live cluster never aborts on
 * it. */
#include "gpusched/live-int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "kube/jalloc.h"

#define LIVE_PAGE 500
#define LIVE_PATH_MAX 4096

const struct flag *gpusched_live_flags(struct gpusched_live *l)
{
    const struct flag t[] = {
        {"kubeconfig", 0, FLAG_STRING, &l->kubeconfig, NULL, NULL, "PATH",
         "read the cluster of this kubeconfig (default: $KUBECONFIG,\n"
         "then ~/.kube/config, then the in-cluster service account;\n"
         "used when no -f is given, or with -f to add files on top)"},
        {"context", 0, FLAG_STRING, &l->context, NULL, NULL, "NAME",
         "the kubeconfig context to use (reads the cluster)"},
        {"all-namespaces", 'A', FLAG_BOOL, &l->all_namespaces, NULL, NULL, NULL,
         "pending pods of every namespace, not only -n's"},
        {"verbose", 'v', FLAG_BOOL, &l->verbose, NULL, NULL, NULL,
         "progress on stderr even when it is not a terminal"},
        FLAG_END,
    };

    _Static_assert(sizeof(t) == sizeof(l->flags), "struct gpusched_live's room for its flags");
    memcpy(l->flags, t, sizeof(t));
    return l->flags;
}

bool gpusched_live_wanted(const struct gpusched_live *l, size_t nfiles)
{
    return l->kubeconfig || l->context || !nfiles;
}

int gpusched_live_open(struct gpusched_live *l, const char *ns_flag, struct err *err)
{
    struct kube_client_opts o;
    int rc;

    memset(&o, 0, sizeof(o));
    o.kubeconfig = l->kubeconfig && *l->kubeconfig ? l->kubeconfig : NULL;
    o.context = l->context && *l->context ? l->context : NULL;
    o.user_agent = "gpusched (linux)";
    o.timeout_ms = 60000; /* a stalled answer of a busy server */
    o.max_retries = 10;   /* what the server asks to retry, as kubectl does */
    rc = kube_client_new(&o, &l->client, err);
    if (rc)
        return rc;
    l->namespace_ = ns_flag && *ns_flag ? ns_flag : kube_client_namespace(l->client);
    return 0;
}

void gpusched_live_close(struct gpusched_live *l)
{
    kube_client_free(l->client);
    l->client = NULL;
}

bool gpusched_live_pod(const struct kube_pod *p)
{
    return p->source_file && !strncmp(p->source_file, GPUSCHED_LIVE_PREFIX, 4);
}

int gpusched_live_get(struct gpusched_live *l, const char *path, json_t **out, struct err *err)
{
    struct kube_response r;
    int rc;

    *out = NULL;
    rc = kube_client_request(l->client, "GET", path, NULL, NULL, 0, &r, err);
    if (!rc && !r.json)
        rc = err_set(err, -EPROTO, "GET %s: the answer is not JSON", path);
    if (!rc) {
        *out = r.json;
        r.json = NULL;
    }
    kube_response_release(&r);
    return rc;
}

__attribute__((format(printf, 2, 3))) static int live_warn(struct manifest_input *in,
                                                           const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return manifest_input_warn(in, buf);
}

/* ---- lists ---------------------------------------------------------------------------- */

struct live_progress {
    double start;
    bool on; /* tty or -v */
    bool tty;
    bool shown;
    double last;
};

static void live_progress(struct live_progress *pr, const char *what, size_t n, bool done)
{
    double now = mono_now();

    if (!pr->on || (!done && now - pr->last < (pr->tty ? 0.1 : 1.0)))
        return;
    if (done && !pr->shown && now - pr->start < 0.5)
        return;
    pr->last = now;
    pr->shown = true;
    fprintf(stderr, "%sgpusched: reading the cluster: %zu %s%s%s", pr->tty ? "\r\033[K" : "", n,
            what, done ? "" : "...", pr->tty && !done ? "" : "\n");
    fflush(stderr);
}

/* What one list's items go through before the loader sees them. */
struct live_list {
    const char *what; /* "pods", for messages and progress */
    const char *path; /* collection path, may carry a query ("...?fieldSelector=...") */
    bool load;        /* hand the pages to the loader */
    bool pods;        /* a list of pods: each goes through live_scan_pod first */
    bool pending;     /* pods waiting for a scheduler: note their volumes; a consistent read */
    size_t count;
    bool unread;      /* not served (404) or forbidden (403): only for the lists not loaded */
    bool forbidden;   /* unread because the role lacks it (403) */
    bool optional;    /* loaded, but a 404 or 403 only warns (what an older role may lack) */
    bool cluster;     /* loaded as the cluster's own objects: workloads not expanded */
    const char *lost; /* optional and loaded: what is not modelled without it */
};

struct live_scan {
    const struct manifest_input *in;
    size_t dropped_class; /* pods whose priorityClassName is gone */
    char first_class[256], first_class_pod[512];
    size_t pvc_pods; /* pending pods with a volume the volume plugins read */
    char first_pvc_pod[512];
};

static bool live_class_known(const struct manifest_input *in, const char *name)
{
    size_t i;

    if (!strcmp(name, "system-cluster-critical") || !strcmp(name, "system-node-critical"))
        return true;
    for (i = 0; i < in->nclasses; i++)
        if (!strcmp(in->classes[i].name, name))
            return true;
    return false;
}

static void live_pod_name(const json_t *pod, char *out, size_t size)
{
    const json_t *md = json_object_get(pod, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));

    snprintf(out, size, "%s/%s", ns ? ns : "default", name ? name : "?");
}

/* live_scan_pod looks at one pod as the API gave it, before the loader decodes it. */
static void live_scan_pod(struct live_scan *s, json_t *pod, bool pending)
{
    json_t *spec = json_object_get(pod, "spec");
    const char *pcn = json_string_value(json_object_get(spec, "priorityClassName"));
    const json_t *vols = json_object_get(spec, "volumes"), *v;
    size_t i;

    if (pcn && *pcn && json_is_integer(json_object_get(spec, "priority")) &&
        !live_class_known(s->in, pcn)) {
        /* deleted after admission: the pod keeps the priority it was given */
        if (!s->dropped_class++) {
            snprintf(s->first_class, sizeof(s->first_class), "%s", pcn);
            live_pod_name(pod, s->first_class_pod, sizeof(s->first_class_pod));
        }
        json_object_del(spec, "priorityClassName");
    }
    if (!pending)
        return;
    json_array_foreach(vols, i, v)
    {
        /* claims, and the in-tree volumes CSI migration counts (NodeVolumeLimits) */
        if (json_object_get(v, "persistentVolumeClaim") || json_object_get(v, "ephemeral") ||
            json_object_get(v, "awsElasticBlockStore") || json_object_get(v, "gcePersistentDisk") ||
            json_object_get(v, "azureDisk") || json_object_get(v, "cinder") ||
            json_object_get(v, "portworxVolume")) {
            if (!s->pvc_pods++)
                live_pod_name(pod, s->first_pvc_pod, sizeof(s->first_pvc_pod));
            break;
        }
    }
}

/* live_page_path is the request for ls's first page (cont NULL) or the page after cont. Every
 * list but the pending pods is read from the watch cache: it asks for resourceVersion=0 at
 * first, as client-go's reflectors do (kube-scheduler's informers), and the cache answers
 * with the whole list at once, ignoring the limit (pages of a consistent list cost the API
 * server twice the CPU, measured: docs/benchmarks.md); without a cache the limit pages it as
 * before. The pending pods are a consistent read: a pod created a moment ago is there. */
static int live_page_path(const struct live_list *ls, const char *cont, char *out, size_t size)
{
    char esc[2048];
    int n;

    if (cont && !kube_path_escape(cont, esc, sizeof(esc)))
        return -E2BIG;
    n = snprintf(out, size, "%s%slimit=%d%s%s%s", ls->path, strchr(ls->path, '?') ? "&" : "?",
                 LIVE_PAGE, cont ? "&continue=" : "", cont ? esc : "",
                 !ls->pending && !cont ? "&resourceVersion=0" : "");
    return n < 0 || (size_t)n >= size ? -E2BIG : 0;
}

/* One page of a list, or a part of it, as kube_client_get_stream hands it over (the tree
 * lives in the client's arena for the call only). */
struct live_page {
    struct live_list *ls;
    struct live_scan *scan;
    struct manifest_input *in;
    struct live_progress *pr;
    struct err *err;
    char *next; /* the continue token, copied */
};

static int live_page_take(void *ud, json_t *doc)
{
    struct live_page *pg = ud;
    struct live_list *ls = pg->ls;
    json_t *items = json_object_get(doc, "items"), *item;
    const char *next;
    size_t i;
    int rc = 0;

    if (!json_is_array(items))
        return err_set(pg->err, -EPROTO, "cannot list %s: the answer has no items", ls->what);
    if (ls->pods)
        json_array_foreach(items, i, item) live_scan_pod(pg->scan, item, ls->pending);
    ls->count += json_array_size(items);
    live_progress(pg->pr, ls->what, ls->count, false);
    if (ls->load) {
        /* the loader reads an API list as a typed list; the name is the collection */
        char name[LIVE_PATH_MAX];
        const char *q = strchr(ls->path, '?');
        snprintf(name, sizeof(name), "%.*s", q ? (int)(q - ls->path) : (int)strlen(ls->path),
                 ls->path);
        rc = ls->cluster ? manifest_input_load_cluster_object(pg->in, name, doc, pg->err)
                         : manifest_input_load_object(pg->in, name, doc, pg->err);
    }
    /* every part of a page carries the page's continue token: the first one is kept */
    next = json_string_value(json_object_get(json_object_get(doc, "metadata"), "continue"));
    if (!rc && !pg->next && next && *next && !(pg->next = strdup(next)))
        rc = err_set(pg->err, -ENOMEM, "out of memory");
    return rc;
}

/* what no modelled plugin reads and the API server sends with every object: cut before the
 * parse (about half of a pod's JSON) */
static const char *const live_strip[] = {"managedFields", NULL};

/* live_list_all reads every page of ls, handing its items to the loader when ls->load, a
 * part of a page at a time as it arrives (kube_client_get_stream). */
static int live_list_all(struct gpusched_live *l, struct live_list *ls, struct live_scan *scan,
                         struct manifest_input *in, struct live_progress *pr, struct err *err)
{
    char path[LIVE_PATH_MAX], *cont = NULL;
    struct kube_list_budget b;
    int rc = 0;

    kube_list_budget_init(&b, l->client, NULL);
    for (;;) {
        struct live_page pg = {ls, scan, in, pr, err, NULL};

        rc = live_page_path(ls, cont, path, sizeof(path));
        if (rc) {
            err_set(err, rc, "list %s: continue token too long", ls->what);
            break;
        }
        rc = kube_client_get_stream(l->client, path, live_strip, LIVE_PAGE, live_page_take, &pg, &b,
                                    err);
        free(cont);
        cont = pg.next;
        if (rc && (!ls->load || ls->optional) && err->http_status &&
            (rc == -ENOENT || rc == -EPERM)) {
            /* an API that does not serve the kind has none; a role without it loses what it
             * would have told, and says so */
            ls->forbidden = rc == -EPERM;
            if (rc == -EPERM && live_warn(in, "cannot list %s (%s): %s", ls->what, err->msg,
                                          ls->load ? ls->lost : "not checked"))
                rc = -ENOMEM;
            else
                rc = 0;
            err_clear(err);
            ls->unread = true;
            ls->count = 0;
            break;
        }
        if (rc) {
            if (err->http_status || !strstr(err->msg, "cannot list")) {
                char msg[ERR_MSG_MAX];
                snprintf(msg, sizeof(msg), "%s", err->msg);
                err_set(err, rc, "cannot list %s: %s", ls->what, msg);
            }
            break;
        }
        if (!cont)
            break;
    }
    free(cont);
    return rc;
}

/* The lists read after the pods: what the modelled plugins read besides. Namespaces
 * (InterPodAffinity's namespaceSelector), PodDisruptionBudgets (DefaultPreemption), Services
 * and the controllers (PodTopologySpread's system defaults; their pods are listed already, so
 * they are not expanded: cluster), and, when some pending pod has a volume (volumes), the
 * volume objects (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone:
 * sched/volumes.c). lost: what is not modelled without the list. */
static const struct live_optional {
    const char *what, *path;
    bool cluster, volumes;
    const char *lost;
} live_optional[] = {
    {"namespaces", "/api/v1/namespaces", false, false,
     "pod affinity's namespaceSelector sees only the kubernetes.io/metadata.name label"},
    {"pod disruption budgets", "/apis/policy/v1/poddisruptionbudgets", false, false,
     "preemption may pick victims they protect"},
    {"services", "/api/v1/services", true, false,
     "the default topology spreading of their pods is not modelled"},
    {"replication controllers", "/api/v1/replicationcontrollers", true, false,
     "the default topology spreading of their pods is not modelled"},
    {"replica sets", "/apis/apps/v1/replicasets", true, false,
     "the default topology spreading of their pods is not modelled"},
    {"stateful sets", "/apis/apps/v1/statefulsets", true, false,
     "the default topology spreading of their pods is not modelled"},
    {"persistent volume claims", "/api/v1/persistentvolumeclaims", false, true,
     "their pods' claims count as missing"},
    {"persistent volumes", "/api/v1/persistentvolumes", false, true,
     "their pods' claims cannot bind"},
    {"storage classes", "/apis/storage.k8s.io/v1/storageclasses", false, true,
     "their pods' claims cannot bind"},
    {"CSI nodes", "/apis/storage.k8s.io/v1/csinodes", false, true,
     "volume limits (NodeVolumeLimits) are not checked"},
    {"CSI drivers", "/apis/storage.k8s.io/v1/csidrivers", false, true,
     "storage capacity and missing drivers are not checked"},
    {"CSI storage capacities", "/apis/storage.k8s.io/v1/csistoragecapacities", false, true,
     "claims of classes with capacity tracking find no capacity"},
    {"volume attachments", "/apis/storage.k8s.io/v1/volumeattachments", false, true,
     "volumes attached without a pod are not counted"},
};

/* what is lost without one of the resource.k8s.io lists */
#define LIVE_DRA_LOST                                                                              \
    "Dynamic Resource Allocation is not modelled (pods with resource claims are left pending, "    \
    "extended resources served by DeviceClasses are not)"

/* Dynamic Resource Allocation's objects, as kube-scheduler's informers read them (the API
 * server accepted them once: read as stored, not validated as new ones), after the lists
 * above; without one of them (a role made for an older gpusched) no DRA world is modelled */
static const struct {
    const char *what, *path;
} live_dra[] = {
    {"device classes", "/apis/resource.k8s.io/v1/deviceclasses"},
    {"resource slices", "/apis/resource.k8s.io/v1/resourceslices"},
    {"resource claims", "/apis/resource.k8s.io/v1/resourceclaims"},
    {"resource claim templates", "/apis/resource.k8s.io/v1/resourceclaimtemplates"},
    {"device taint rules", "/apis/resource.k8s.io/v1/devicetaintrules"},
};

static int live_load(struct gpusched_live *l, struct manifest_input *in, struct err *err)
{
    /* not Succeeded or Failed (they hold nothing), bound or not */
    static const char live_phase[] = "status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed";
    char bound_path[512], pending_path[1024], nsesc[512];
    struct live_list lists[4];
    struct live_scan scan;
    struct live_progress pr;
    size_t i;
    int rc = 0;

    memset(&scan, 0, sizeof(scan));
    memset(&pr, 0, sizeof(pr));
    l->dra_unread = false;
    scan.in = in;
    pr.start = pr.last = mono_now();
    pr.tty = isatty(2);
    pr.on = pr.tty || l->verbose;
    snprintf(bound_path, sizeof(bound_path),
             "/api/v1/pods?fieldSelector=spec.nodeName%%21%%3D%%2C%s", live_phase);
    if (l->all_namespaces)
        snprintf(pending_path, sizeof(pending_path),
                 "/api/v1/pods?fieldSelector=spec.nodeName%%3D%%2C%s", live_phase);
    else
        snprintf(pending_path, sizeof(pending_path),
                 "/api/v1/namespaces/%s/pods?fieldSelector=spec.nodeName%%3D%%2C%s",
                 kube_path_escape(l->namespace_, nsesc, sizeof(nsesc)), live_phase);
    memset(lists, 0, sizeof(lists));
    lists[0] = (struct live_list){.what = "priority classes",
                                  .path = "/apis/scheduling.k8s.io/v1/priorityclasses",
                                  .load = true};
    lists[1] = (struct live_list){.what = "nodes", .path = "/api/v1/nodes", .load = true};
    lists[2] = (struct live_list){.what = "pods", .path = bound_path, .load = true, .pods = true};
    lists[3] = (struct live_list){
        .what = "pending pods", .path = pending_path, .load = true, .pods = true, .pending = true};
    for (i = 0; i < 4 && !rc; i++)
        rc = live_list_all(l, &lists[i], &scan, in, &pr, err);
    if (rc)
        return rc;
    l->nnodes = lists[1].count;
    l->nbound = lists[2].count;
    l->npending = lists[3].count;

    /* what the modelled plugins read besides (live_optional), loaded as they come; a role
     * made for an older gpusched may lack some: each such list warns what it costs instead of
     * failing */
    for (i = 0; i < sizeof(live_optional) / sizeof(live_optional[0]) && !rc; i++) {
        const struct live_optional *o = &live_optional[i];
        struct live_list ls = {.what = o->what,
                               .path = o->path,
                               .load = true,
                               .optional = true,
                               .cluster = o->cluster,
                               .lost = o->lost};

        if (!o->volumes || scan.pvc_pods)
            rc = live_list_all(l, &ls, &scan, in, &pr, err);
    }
    /* the first one the role lacks ends them: no world is built from a part */
    for (i = 0; i < sizeof(live_dra) / sizeof(live_dra[0]) && !rc && !l->dra_unread; i++) {
        struct live_list ls = {.what = live_dra[i].what,
                               .path = live_dra[i].path,
                               .load = true,
                               .optional = true,
                               .cluster = true,
                               .lost = LIVE_DRA_LOST};

        rc = live_list_all(l, &ls, &scan, in, &pr, err);
        l->dra_unread |= ls.forbidden;
    }
    if (rc)
        return rc;
    live_progress(&pr, "pods", lists[2].count + lists[3].count, true);

    if (scan.dropped_class &&
        live_warn(in,
                  "%zu pod(s) name a PriorityClass that does not exist (first: %s "
                  "names %s); they keep their spec.priority",
                  scan.dropped_class, scan.first_class_pod, scan.first_class))
        return err_set(err, -ENOMEM, "out of memory");
    return 0;
}

int gpusched_live_load(struct gpusched_live *l, struct manifest_input *in, struct err *err)
{
    int rc = live_load(l, in, err);

    /* the lists were parsed into one arena kept from part to part (kube_client_get_stream) */
    kube_jalloc_release();
    return rc;
}
