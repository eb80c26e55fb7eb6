/* decode_pod.c - Pods: metadata and owner, the spec's top-level fields (decode_podspec.c reads
 * the parts a node is checked against), the volumes the volume plugins read, what is not
 * modelled, and the status resources of a pod resized in place. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/decode-int.h"
#include "kube/labels.h"
#include "kube/rules.h"

/* The Go types of the fields (decode-int.h) */
static const struct dec_type dec_t_pod_status;
static const struct dec_type dec_t_container_status;
static const struct dec_type dec_t_volume;
static const struct dec_type dec_t_persistent_volume_claim_volume_source;
static const struct dec_type dec_t_ephemeral_volume_source;

static const struct dec_field dec_t_pod_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.PodSpec", &dec_t_pod_spec},
    {"status", DEC_OBJ, 0, "v1.PodStatus", &dec_t_pod_status},
};
const struct dec_type dec_t_pod = DEC_TYPE("Pod", dec_t_pod_fields);

static const struct dec_field dec_t_pod_spec_fields[] = {
    {"activeDeadlineSeconds", DEC_INT64, 0, "int64", NULL},
    {"affinity", DEC_OBJ, 0, "v1.Affinity", &dec_t_affinity},
    {"automountServiceAccountToken", DEC_BOOL, 0, "bool", NULL},
    {"containers", DEC_ARR, DEC_OBJ, "[]v1.Container", &dec_t_container},
    {"dnsConfig", DEC_OBJ, 0, "v1.PodDNSConfig", NULL},
    {"dnsPolicy", DEC_STR, 0, "v1.DNSPolicy", NULL},
    {"enableServiceLinks", DEC_BOOL, 0, "bool", NULL},
    {"ephemeralContainers", DEC_ARR, DEC_OBJ, "[]v1.EphemeralContainer", NULL},
    {"evictionResponders", DEC_ARR, DEC_OBJ, "[]v1.EvictionResponder", NULL},
    {"hostAliases", DEC_ARR, DEC_OBJ, "[]v1.HostAlias", NULL},
    {"hostIPC", DEC_BOOL, 0, "bool", NULL},
    {"hostNetwork", DEC_BOOL, 0, "bool", NULL},
    {"hostPID", DEC_BOOL, 0, "bool", NULL},
    {"hostUsers", DEC_BOOL, 0, "bool", NULL},
    {"hostname", DEC_STR, 0, "string", NULL},
    {"hostnameOverride", DEC_STR, 0, "string", NULL},
    {"imagePullSecrets", DEC_ARR, DEC_OBJ, "[]v1.LocalObjectReference", NULL},
    {"initContainers", DEC_ARR, DEC_OBJ, "[]v1.Container", &dec_t_container},
    {"nodeName", DEC_STR, 0, "string", NULL},
    {"nodeSelector", DEC_MAP, DEC_STR, "map[string]string", NULL},
    {"os", DEC_OBJ, 0, "v1.PodOS", NULL},
    {"overhead", DEC_MAP, DEC_QTY, "v1.ResourceList", NULL},
    {"preemptionPolicy", DEC_STR, 0, "v1.PreemptionPolicy", NULL},
    {"priority", DEC_INT32, 0, "int32", NULL},
    {"priorityClassName", DEC_STR, 0, "string", NULL},
    {"readinessGates", DEC_ARR, DEC_OBJ, "[]v1.PodReadinessGate", NULL},
    {"resourceClaims", DEC_ARR, DEC_OBJ, "[]v1.PodResourceClaim", NULL},
    {"resources", DEC_OBJ, 0, "v1.ResourceRequirements", &dec_t_resource_requirements},
    {"restartPolicy", DEC_STR, 0, "v1.RestartPolicy", NULL},
    {"runtimeClassName", DEC_STR, 0, "string", NULL},
    {"schedulerName", DEC_STR, 0, "string", NULL},
    {"schedulingGates", DEC_ARR, DEC_OBJ, "[]v1.PodSchedulingGate", NULL},
    {"schedulingGroup", DEC_OBJ, 0, "v1.PodSchedulingGroup", NULL},
    {"securityContext", DEC_OBJ, 0, "v1.PodSecurityContext", NULL},
    {"serviceAccount", DEC_STR, 0, "string", NULL},
    {"serviceAccountName", DEC_STR, 0, "string", NULL},
    {"setHostnameAsFQDN", DEC_BOOL, 0, "bool", NULL},
    {"shareProcessNamespace", DEC_BOOL, 0, "bool", NULL},
    {"subdomain", DEC_STR, 0, "string", NULL},
    {"terminationGracePeriodSeconds", DEC_INT64, 0, "int64", NULL},
    {"tolerations", DEC_ARR, DEC_OBJ, "[]v1.Toleration", &dec_t_toleration},
    {"topologySpreadConstraints", DEC_ARR, DEC_OBJ, "[]v1.TopologySpreadConstraint",
     &dec_t_topology_spread_constraint},
    {"volumes", DEC_ARR, DEC_OBJ, "[]v1.Volume", &dec_t_volume},
};
const struct dec_type dec_t_pod_spec = DEC_TYPE("PodSpec", dec_t_pod_spec_fields);

static const struct dec_field dec_t_pod_status_fields[] = {
    {"allocatedResources", DEC_MAP, DEC_QTY, "v1.ResourceList", NULL},
    {"conditions", DEC_ARR, DEC_OBJ, "[]v1.PodCondition", NULL},
    {"containerStatuses", DEC_ARR, DEC_OBJ, "[]v1.ContainerStatus", &dec_t_container_status},
    {"ephemeralContainerStatuses", DEC_ARR, DEC_OBJ, "[]v1.ContainerStatus",
     &dec_t_container_status},
    {"extendedResourceClaimStatus", DEC_OBJ, 0, "v1.PodExtendedResourceClaimStatus", NULL},
    {"hostIP", DEC_STR, 0, "string", NULL},
    {"hostIPs", DEC_ARR, DEC_OBJ, "[]v1.HostIP", NULL},
    {"initContainerStatuses", DEC_ARR, DEC_OBJ, "[]v1.ContainerStatus", &dec_t_container_status},
    {"message", DEC_STR, 0, "string", NULL},
    {"nodeAllocatableResourceClaimStatuses", DEC_ARR, DEC_OBJ,
     "[]v1.NodeAllocatableResourceClaimStatus", NULL},
    {"nominatedNodeName", DEC_STR, 0, "string", NULL},
    {"observedGeneration", DEC_INT64, 0, "int64", NULL},
    {"phase", DEC_STR, 0, "v1.PodPhase", NULL},
    {"podIP", DEC_STR, 0, "string", NULL},
    {"podIPs", DEC_ARR, DEC_OBJ, "[]v1.PodIP", NULL},
    {"qosClass", DEC_STR, 0, "v1.PodQOSClass", NULL},
    {"reason", DEC_STR, 0, "string", NULL},
    {"resize", DEC_STR, 0, "v1.PodResizeStatus", NULL},
    {"resourceClaimStatuses", DEC_ARR, DEC_OBJ, "[]v1.PodResourceClaimStatus", NULL},
    {"resources", DEC_OBJ, 0, "v1.ResourceRequirements", &dec_t_resource_requirements},
    {"startTime", DEC_STR, 0, "v1.Time", NULL},
    {"volumeHealth", DEC_ARR, DEC_OBJ, "[]v1.PodVolumeHealth", NULL},
};
static const struct dec_type dec_t_pod_status = DEC_TYPE("PodStatus", dec_t_pod_status_fields);

static const struct dec_field dec_t_container_status_fields[] = {
    {"allocatedResources", DEC_MAP, DEC_QTY, "v1.ResourceList", NULL},
    {"allocatedResourcesStatus", DEC_ARR, DEC_OBJ, "[]v1.ResourceStatus", NULL},
    {"containerID", DEC_STR, 0, "string", NULL},
    {"image", DEC_STR, 0, "string", NULL},
    {"imageID", DEC_STR, 0, "string", NULL},
    {"lastState", DEC_OBJ, 0, "v1.ContainerState", NULL},
    {"name", DEC_STR, 0, "string", NULL},
    {"ready", DEC_BOOL, 0, "bool", NULL},
    {"resources", DEC_OBJ, 0, "v1.ResourceRequirements", &dec_t_resource_requirements},
    {"restartCount", DEC_INT32, 0, "int32", NULL},
    {"started", DEC_BOOL, 0, "bool", NULL},
    {"state", DEC_OBJ, 0, "v1.ContainerState", NULL},
    {"stopSignal", DEC_STR, 0, "v1.Signal", NULL},
    {"user", DEC_OBJ, 0, "v1.ContainerUser", NULL},
    {"volumeMounts", DEC_ARR, DEC_OBJ, "[]v1.VolumeMountStatus", NULL},
};
static const struct dec_type dec_t_container_status =
    DEC_TYPE("ContainerStatus", dec_t_container_status_fields);

static const struct dec_field dec_t_volume_fields[] = {
    {"awsElasticBlockStore", DEC_OBJ, 0, "v1.AWSElasticBlockStoreVolumeSource",
     &dec_t_aws_elastic_block_store_volume_source},
    {"azureDisk", DEC_OBJ, 0, "v1.AzureDiskVolumeSource", &dec_t_azure_disk_volume_source},
    {"azureFile", DEC_OBJ, 0, "v1.AzureFileVolumeSource", &dec_t_azure_file_volume_source},
    {"cephfs", DEC_OBJ, 0, "v1.CephFSVolumeSource", NULL},
    {"cinder", DEC_OBJ, 0, "v1.CinderVolumeSource", &dec_t_cinder_volume_source},
    {"configMap", DEC_OBJ, 0, "v1.ConfigMapVolumeSource", NULL},
    {"csi", DEC_OBJ, 0, "v1.CSIVolumeSource", NULL},
    {"downwardAPI", DEC_OBJ, 0, "v1.DownwardAPIVolumeSource", NULL},
    {"emptyDir", DEC_OBJ, 0, "v1.EmptyDirVolumeSource", NULL},
    {"ephemeral", DEC_OBJ, 0, "v1.EphemeralVolumeSource", &dec_t_ephemeral_volume_source},
    {"fc", DEC_OBJ, 0, "v1.FCVolumeSource", NULL},
    {"flexVolume", DEC_OBJ, 0, "v1.FlexVolumeSource", NULL},
    {"flocker", DEC_OBJ, 0, "v1.FlockerVolumeSource", NULL},
    {"gcePersistentDisk", DEC_OBJ, 0, "v1.GCEPersistentDiskVolumeSource",
     &dec_t_gce_persistent_disk_volume_source},
    {"gitRepo", DEC_OBJ, 0, "v1.GitRepoVolumeSource", NULL},
    {"glusterfs", DEC_OBJ, 0, "v1.GlusterfsVolumeSource", NULL},
    {"hostPath", DEC_OBJ, 0, "v1.HostPathVolumeSource", NULL},
    {"image", DEC_OBJ, 0, "v1.ImageVolumeSource", NULL},
    {"iscsi", DEC_OBJ, 0, "v1.ISCSIVolumeSource", NULL},
    {"name", DEC_STR, 0, "string", NULL},
    {"nfs", DEC_OBJ, 0, "v1.NFSVolumeSource", NULL},
    {"persistentVolumeClaim", DEC_OBJ, 0, "v1.PersistentVolumeClaimVolumeSource",
     &dec_t_persistent_volume_claim_volume_source},
    {"photonPersistentDisk", DEC_OBJ, 0, "v1.PhotonPersistentDiskVolumeSource", NULL},
    {"portworxVolume", DEC_OBJ, 0, "v1.PortworxVolumeSource", &dec_t_portworx_volume_source},
    {"projected", DEC_OBJ, 0, "v1.ProjectedVolumeSource", NULL},
    {"quobyte", DEC_OBJ, 0, "v1.QuobyteVolumeSource", NULL},
    {"rbd", DEC_OBJ, 0, "v1.RBDVolumeSource", NULL},
    {"scaleIO", DEC_OBJ, 0, "v1.ScaleIOVolumeSource", NULL},
    {"secret", DEC_OBJ, 0, "v1.SecretVolumeSource", NULL},
    {"storageos", DEC_OBJ, 0, "v1.StorageOSVolumeSource", NULL},
    {"vsphereVolume", DEC_OBJ, 0, "v1.VsphereVirtualDiskVolumeSource",
     &dec_t_vsphere_virtual_disk_volume_source},
};
static const struct dec_type dec_t_volume = DEC_TYPE("Volume", dec_t_volume_fields);

static const struct dec_field dec_t_persistent_volume_claim_volume_source_fields[] = {
    {"claimName", DEC_STR, 0, "string", NULL},
    {"readOnly", DEC_BOOL, 0, "bool", NULL},
};
static const struct dec_type dec_t_persistent_volume_claim_volume_source = DEC_TYPE(
    "PersistentVolumeClaimVolumeSource", dec_t_persistent_volume_claim_volume_source_fields);

static const struct dec_field dec_t_ephemeral_volume_source_fields[] = {
    {"volumeClaimTemplate", DEC_OBJ, 0, "v1.PersistentVolumeClaimTemplate",
     &dec_t_persistent_volume_claim_template},
};
static const struct dec_type dec_t_ephemeral_volume_source =
    DEC_TYPE("EphemeralVolumeSource", dec_t_ephemeral_volume_source_fields);

/* pod_condition returns the first status.conditions[] entry of type, or NULL (malformed
 * entries are skipped: the scheduler reads conditions, it does not validate them) */
static const json_t *pod_condition(const json_t *status, const char *type)
{
    const json_t *conds = json_object_get(status, "conditions");
    size_t i;

    for (i = 0; i < json_array_size(conds); i++) {
        const json_t *c = json_array_get(conds, i);
        const char *t = json_string_value(json_object_get(c, "type"));

        if (t && !strcmp(t, type))
            return c;
    }
    return NULL;
}

/* a condition's member key is the string want */
static bool condition_is(const json_t *c, const char *key, const char *want)
{
    const char *v = json_string_value(json_object_get(c, key));

    return v && !strcmp(v, want);
}

/* PodTerminatingByPreemption's condition: the first DisruptionTarget condition is True with
 * reason PreemptionByScheduler */
static bool disruption_by_preemption(const json_t *status)
{
    const json_t *c = pod_condition(status, "DisruptionTarget");

    return c && condition_is(c, "status", "True") &&
           condition_is(c, "reason", "PreemptionByScheduler");
}

/* note_unmodelled records a field gpusched does not model (at most a few per pod) */
static int note_unmodelled(struct dec *d, struct kube_pod *p, const char *field, const char *what)
{
    struct kube_unmodelled *n;

    if (p->extra->nunmodelled >= 8)
        return 0;
    n = arena_alloc(d->a, (p->extra->nunmodelled + 1) * sizeof(*n));
    if (!n || !(field = arena_strdup(d->a, field)))
        return dec_nomem(d);
    if (p->extra->nunmodelled)
        memcpy(n, p->extra->unmodelled, p->extra->nunmodelled * sizeof(*n));
    n[p->extra->nunmodelled].field = field;
    n[p->extra->nunmodelled].what = what;
    p->extra->unmodelled = n;
    p->extra->nunmodelled++;
    return 0;
}

/* one entry of spec.resourceClaims, as the API server validates it */
static int pod_resource_claim(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    struct kube_pod_resource_claim *out = slot;
    struct err e;
    char q[300];
    size_t old;
    int rc;

    (void)ctx;
    memset(out, 0, sizeof(*out));
    if ((rc = dec_string(d, v, "name", &out->name, "")) ||
        (rc = dec_string(d, v, "resourceClaimName", &out->resource_claim_name, NULL)) ||
        (rc = dec_string(d, v, "resourceClaimTemplateName", &out->resource_claim_template_name,
                         NULL)))
        return rc;
    err_clear(&e);
    old = dec_push(d, "name");
    if (!*out->name)
        rc = dec_fail(d, NULL, v, "Required value");
    else if (kube_dns_label_validate(out->name, &e))
        rc = dec_fail(d, json_object_get(v, "name"), v, "Invalid value: %s: %s",
                      dec_quote(out->name, q, sizeof(q)), e.msg);
    dec_pop(d, old);
    if (rc)
        return rc;
    if (out->resource_claim_name && out->resource_claim_template_name)
        return dec_fail(d, v, NULL,
                        "Invalid value: \"object\": at most one of `resourceClaimName` or "
                        "`resourceClaimTemplateName` may be specified");
    if (!out->resource_claim_name && !out->resource_claim_template_name)
        return dec_fail(d, v, NULL,
                        "Invalid value: \"object\": must specify one of: `resourceClaimName`, "
                        "`resourceClaimTemplateName`");
    return 0;
}

/* status.resourceClaimStatuses and status.extendedResourceClaimStatus onto the claims */
static int decode_claim_statuses(struct dec *d, const json_t *status, struct kube_pod *p)
{
    const json_t *arr = json_object_get(status, "resourceClaimStatuses"), *ext;
    size_t i, j;

    for (i = 0; json_is_array(arr) && i < json_array_size(arr); i++) {
        const json_t *e = json_array_get(arr, i);
        const json_t *n = json_object_get(e, "name"), *cn = json_object_get(e, "resourceClaimName");

        if (!json_is_string(n))
            continue;
        for (j = 0; j < p->nresource_claims; j++)
            if (!strcmp(p->extra->resource_claims[j].name, json_string_value(n))) {
                p->extra->resource_claims[j].status_claim_name =
                    json_is_string(cn) ? dec_strdup(d, cn) : "";
                if (!p->extra->resource_claims[j].status_claim_name)
                    return dec_nomem(d);
            }
    }
    ext = json_object_get(status, "extendedResourceClaimStatus");
    if (json_is_object(ext) && json_is_string(json_object_get(ext, "resourceClaimName")) &&
        !(p->extra->extended_claim = dec_strdup(d, json_object_get(ext, "resourceClaimName"))))
        return dec_nomem(d);
    return 0;
}

/* decode_pod_volume reads what the volume plugins need of spec.volumes[i] beyond its claim: a
 * generic ephemeral volume (its claim named later, kube_pod_ephemeral_names) or an in-tree
 * volume CSI migration translates */
static int decode_pod_volume(struct dec *d, const json_t *v, size_t i, struct kube_pod *p)
{
    const json_t *eph = json_object_get(v, "ephemeral"), *t;
    struct kube_inline_volume iv;
    const char *vname;
    char field[64];
    size_t old;
    int rc;

    snprintf(field, sizeof(field), "volumes[%zu]", i);
    old = dec_push(d, field);
    rc = dec_string(d, v, "name", &vname, "");
    if (rc)
        goto out;
    if (json_is_object(eph)) {
        struct kube_ephemeral_volume *ne;
        struct kube_pvc *tmpl;
        const char **nc;
        size_t o2 = dec_push(d, "ephemeral");
        rc = dec_object(d, eph, "volumeClaimTemplate", &t);
        if (!rc && !t) {
            size_t o3 = dec_push(d, "volumeClaimTemplate");
            rc = dec_fail(d, NULL, eph, "Required value");
            dec_pop(d, o3);
        }
        if (!rc) {
            size_t o3 = dec_push(d, "volumeClaimTemplate");
            if (!(tmpl = arena_alloc(d->a, sizeof(*tmpl))))
                rc = dec_nomem(d);
            else {
                memset(tmpl, 0, sizeof(*tmpl));
                rc = dec_claim_template(d, t, tmpl);
            }
            dec_pop(d, o3);
        }
        dec_pop(d, o2);
        if (rc)
            goto out;
        if (!(ne = arena_alloc(d->a, (p->extra->nephemeral + 1) * sizeof(*ne))) ||
            !(nc = arena_alloc(d->a, (p->nclaims + 1) * sizeof(*nc)))) {
            rc = dec_nomem(d);
            goto out;
        }
        if (p->extra->nephemeral)
            memcpy(ne, p->extra->ephemeral, p->extra->nephemeral * sizeof(*ne));
        if (p->nclaims)
            memcpy(nc, p->claims, p->nclaims * sizeof(*nc));
        ne[p->extra->nephemeral].claim = p->nclaims;
        ne[p->extra->nephemeral].volume = vname;
        ne[p->extra->nephemeral].tmpl = tmpl;
        nc[p->nclaims] = vname; /* until the pod's name is known */
        p->extra->ephemeral = ne;
        p->extra->nephemeral++;
        p->claims = nc;
        p->nclaims++;
        goto out;
    }
    if ((rc = dec_intree(d, v, &iv)) || iv.plugin == KUBE_INTREE_NONE)
        goto out;
    {
        struct kube_inline_volume *n =
            arena_alloc(d->a, (p->extra->ninline_volumes + 1) * sizeof(*n));
        if (!n) {
            rc = dec_nomem(d);
            goto out;
        }
        if (p->extra->ninline_volumes)
            memcpy(n, p->extra->inline_volumes, p->extra->ninline_volumes * sizeof(*n));
        n[p->extra->ninline_volumes++] = iv;
        p->extra->inline_volumes = n;
    }
out:
    dec_pop(d, old);
    return rc;
}

/* ephemeral_names names the claims of p's generic ephemeral volumes "<pod>-<volume>"
 * (ephemeral.VolumeClaimName) in a fresh claims array from a; 0 or -ENOMEM. */
static int ephemeral_names(struct kube_pod *p, struct arena *a)
{
    const char **nc;
    size_t i;

    if (!kube_pod_ext(p)->nephemeral)
        return 0;
    /* the claims array may be shared with the template the pod was copied from */
    if (!(nc = arena_alloc(a, p->nclaims * sizeof(*nc))))
        return -ENOMEM;
    memcpy(nc, p->claims, p->nclaims * sizeof(*nc));
    for (i = 0; i < kube_pod_ext(p)->nephemeral; i++) {
        const struct kube_ephemeral_volume *e = &kube_pod_ext(p)->ephemeral[i];
        size_t n = strlen(p->name) + strlen(e->volume) + 2;
        char *s = arena_alloc(a, n);
        if (!s)
            return -ENOMEM;
        snprintf(s, n, "%s-%s", p->name, e->volume);
        nc[e->claim] = s;
    }
    p->claims = nc;
    return 0;
}

/* The pod fields that change kube-scheduler's answer through plugins gpusched does not model
 * (docs/scheduling.md, "What gpusched models, what it refuses"). */
static int decode_unmodelled(struct dec *d, const json_t *spec, struct kube_pod *p)
{
    static const struct {
        const char *source, *what;
    } vols[] = {
        {"gcePersistentDisk", "VolumeRestrictions (disk conflicts) is not modelled"},
        {"awsElasticBlockStore", "VolumeRestrictions (disk conflicts) is not modelled"},
        {"rbd", "VolumeRestrictions (disk conflicts) is not modelled"},
        {"iscsi", "VolumeRestrictions (disk conflicts) is not modelled"},
    };
    const json_t *vv, *claims;
    char field[96];
    size_t i, k;
    int rc;

    vv = json_object_get(spec, "volumes");
    for (i = 0; json_is_array(vv) && i < json_array_size(vv); i++) {
        const json_t *v = json_array_get(vv, i);
        const json_t *pvc = json_object_get(v, "persistentVolumeClaim");
        if (json_is_object(pvc)) {
            /* VolumeBinding, VolumeZone and VolumeRestrictions read the claim (sched/volumes.c) */
            const json_t *cn = json_object_get(pvc, "claimName");
            const char **nc;
            if (!json_is_string(cn) || !json_string_length(cn)) {
                snprintf(field, sizeof(field), "volumes[%zu].persistentVolumeClaim.claimName", i);
                dec_push(d, field);
                return dec_fail(d, cn, pvc, "Required value");
            }
            if (!(nc = arena_alloc(d->a, (p->nclaims + 1) * sizeof(*nc))))
                return dec_nomem(d);
            if (p->nclaims)
                memcpy(nc, p->claims, p->nclaims * sizeof(*nc));
            if (!(nc[p->nclaims] = arena_strdup(d->a, json_string_value(cn))))
                return dec_nomem(d);
            p->claims = nc;
            p->nclaims++;
        }
        if ((rc = decode_pod_volume(d, v, i, p)))
            return rc;
        for (k = 0; k < sizeof(vols) / sizeof(vols[0]); k++) {
            if (!json_is_object(json_object_get(v, vols[k].source)))
                continue;
            snprintf(field, sizeof(field), "spec.volumes[%zu].%s", i, vols[k].source);
            if ((rc = note_unmodelled(d, p, field, vols[k].what)))
                return rc;
        }
    }
    claims = json_object_get(spec, "resourceClaims");
    if (json_is_array(claims) && json_array_size(claims)) {
        p->extra->resource_claims =
            dec_list(d, spec, "resourceClaims", JSON_OBJECT, sizeof(*p->extra->resource_claims),
                     pod_resource_claim, NULL, &p->nresource_claims, &rc);
        if (rc)
            return rc;
    }
    /* spec.runtimeClassName: the RuntimeClass admission of the manifest loader gives its
     * overhead (src/manifest/objects.c) */
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Status resources of a pod resized in place                                                */

/* What decode_container_status fills: per container of p (containers, then init
 * containers) the lists its status gives, each container read from its first entry. */
struct status_ctx {
    const struct kube_pod *p;
    struct kube_container_status *cs;
    bool *taken;
    char first[DEC_PATH_MAX + 16]; /* the path of the first list given, "" when none */
};

/* container_index returns the index of p's container (containers, then init containers)
 * named name, or their count when none is. */
static size_t container_index(const struct kube_pod *p, const char *name)
{
    size_t i;

    for (i = 0; i < p->ncontainers; i++)
        if (!strcmp(p->containers[i].name, name))
            return i;
    for (i = 0; i < p->ninit_containers; i++)
        if (!strcmp(p->init_containers[i].name, name))
            return p->ncontainers + i;
    return p->ncontainers + p->ninit_containers;
}

static bool res_equal(const struct kube_resources *x, const struct kube_resources *y)
{
    size_t i;

    if (x->set != y->set || x->cpu_milli != y->cpu_milli || x->memory != y->memory ||
        x->ephemeral != y->ephemeral || x->pods != y->pods || x->nscalars != y->nscalars)
        return false;
    for (i = 0; i < x->nscalars; i++)
        if (strcmp(x->scalars[i].name, y->scalars[i].name) ||
            x->scalars[i].value != y->scalars[i].value)
            return false;
    return true;
}

/* decode_status_list reads obj[key], a ResourceList of the status (quantities only: the
 * API server does not hold the status to the spec's resource-name rules), into out. first
 * gets the list's path when it is the first one given that differs from spec (a container's
 * requests; NULL for the pod-level lists), the one a warning names. */
static int decode_status_list(struct dec *d, const json_t *obj, const char *key,
                              const struct kube_resources *spec, struct kube_resources *out,
                              char *first)
{
    struct dec_res_list l;
    int rc = dec_res_list(d, obj, key, false, &l);

    if (!rc)
        rc = dec_res_list_build(d, &l, out);
    dec_res_list_release(&l);
    if (!rc && !first[0] && (out->set || out->nscalars) && !(spec && res_equal(spec, out))) {
        size_t old = dec_push(d, key);

        memcpy(first, d->path, d->plen + 1);
        dec_pop(d, old);
    }
    return rc;
}

/* decode_container_status reads one entry of containerStatuses or initContainerStatuses:
 * allocatedResources and resources.requests, for the container of its name. Only the first
 * entry of a name is read (resourcehelper's findContainerStatus looks in containerStatuses,
 * then in initContainerStatuses); the others, and entries naming no container, are skipped. */
static int decode_container_status(struct dec *d, const json_t *v, void *slot, void *ctx)
{
    struct status_ctx *sc = ctx;
    const struct kube_resources *spec;
    const json_t *res;
    const char *name;
    size_t k, old;
    int rc;

    (void)slot;
    if ((rc = dec_peek(d, v, "name", &name)))
        return rc;
    k = container_index(sc->p, name);
    if (k == sc->p->ncontainers + sc->p->ninit_containers || sc->taken[k])
        return 0;
    sc->taken[k] = true;
    spec = k < sc->p->ncontainers ? &sc->p->containers[k].requests
                                  : &sc->p->init_containers[k - sc->p->ncontainers].requests;
    rc = decode_status_list(d, v, "allocatedResources", spec, &sc->cs[k].allocated, sc->first);
    if (!rc)
        rc = dec_object(d, v, "resources", &res);
    if (!rc && res) {
        old = dec_push(d, "resources");
        rc = decode_status_list(d, res, "requests", spec, &sc->cs[k].actuated, sc->first);
        dec_pop(d, old);
    }
    return rc;
}

/* resize_infeasible: the first PodResizePending condition has reason Infeasible
 * (IsPodResizeInfeasible) */
static bool resize_infeasible(const json_t *status)
{
    const json_t *c = pod_condition(status, "PodResizePending");

    return c && condition_is(c, "reason", "Infeasible");
}

/* decode_status_resources reads the resources p's status reports into a block from the
 * arena (*out; NULL when the status gives none): the containers' lists, matched by name,
 * status.resources and status.allocatedResources, and whether a resize is infeasible.
 * first gets the path of the first list given that differs from its container's spec ("" when
 * none does). */
static int decode_status_resources(struct dec *d, const json_t *status, const struct kube_pod *p,
                                   struct kube_pod_status_resources **out, char *first)
{
    static const char *const keys[] = {"containerStatuses", "initContainerStatuses"};
    size_t nc = p->ncontainers + p->ninit_containers, n, i, old;
    struct kube_pod_status_resources *st;
    struct status_ctx sc;
    const json_t *res;
    int rc = 0;

    *out = NULL;
    /* an infeasible resize counts without any list: containers the status does not report
     * then count nothing */
    if (!json_object_get(status, keys[0]) && !json_object_get(status, keys[1]) &&
        !json_object_get(status, "resources") && !json_object_get(status, "allocatedResources") &&
        !resize_infeasible(status))
        return 0;
    memset(&sc, 0, sizeof(sc));
    sc.p = p;
    if (!(st = arena_alloc(d->a, sizeof(*st))) ||
        !(st->containers = arena_alloc(d->a, nc * sizeof(*st->containers))) ||
        !(sc.taken = calloc(nc, sizeof(*sc.taken))))
        return dec_nomem(d);
    sc.cs = st->containers;
    old = dec_push(d, "status");
    for (i = 0; i < 2 && !rc; i++)
        dec_list(d, status, keys[i], JSON_OBJECT, 0, decode_container_status, &sc, &n, &rc);
    if (!rc)
        rc = dec_object(d, status, "resources", &res);
    if (!rc && res) {
        size_t o2 = dec_push(d, "resources");

        st->has_pod_resources = true;
        rc = decode_status_list(d, res, "requests", NULL, &st->pod_actuated, sc.first);
        dec_pop(d, o2);
    }
    if (!rc)
        rc =
            decode_status_list(d, status, "allocatedResources", NULL, &st->pod_allocated, sc.first);
    dec_pop(d, old);
    free(sc.taken);
    if (rc)
        return rc;
    st->resize_infeasible = resize_infeasible(status);
    memcpy(first, sc.first, sizeof(sc.first));
    *out = st;
    return 0;
}

/* status_changes sets *out when p's requests as kube-scheduler counts them differ with st
 * from those of its spec alone, for any of the ways kube_pod_requests is asked (plain; with
 * kube-scheduler's defaults for a missing cpu (100m) or memory (200Mi) request, the scoring's;
 * for a pod being scheduled, also without its pod-level resources). Scratch from a; 0 or
 * -ENOMEM. */
static int status_changes(struct kube_pod *p, const struct kube_pod_status_resources *st,
                          struct arena *a, bool *out)
{
    static const struct kube_requests_opts opts[] = {
        {0, 0, false}, {100, 200LL << 20, false}, {100, 200LL << 20, true}};
    size_t i, n = p->node_name[0] ? 2 : 3;
    struct kube_resources with, without;
    int rc = 0;

    *out = false;
    for (i = 0; i < n && !*out && !rc; i++) {
        p->extra->status = st;
        rc = kube_pod_requests(p, &opts[i], a, &with);
        p->extra->status = NULL;
        if (!rc)
            rc = kube_pod_requests(p, &opts[i], a, &without);
        *out = !rc && !res_equal(&with, &without);
    }
    return rc;
}

/* decode_resized keeps the status resources of a bound pod when they change what
 * kube-scheduler counts for it; otherwise (most pods: the kubelet reports what the spec
 * asks) their memory goes back to the arena. A pod without a node is counted on its spec:
 * kube-scheduler's filter reads only the spec of the pod it schedules while its scoring reads
 * the status too, so a status that would change the sums is recorded as not modelled. */
static int decode_resized(struct dec *d, const json_t *status, struct kube_pod *p)
{
    struct kube_pod_status_resources *st;
    struct arena_mark m;
    char first[DEC_PATH_MAX + 16];
    bool changes = false;
    int rc;

    if (!status || kube_pod_phase_terminal(p->phase))
        return 0;
    arena_mark(d->a, &m);
    rc = decode_status_resources(d, status, p, &st, first);
    if (!rc && st && status_changes(p, st, d->a, &changes))
        rc = dec_nomem(d);
    if (rc || !st)
        return rc;
    if (changes && p->node_name[0]) {
        p->extra->status = st;
        return 0;
    }
    arena_rewind(d->a, &m);
    if (!changes)
        return 0;
    if (!first[0]) /* no list differs from the spec: the infeasible resize drops containers */
        snprintf(first, sizeof(first), "status.conditions");
    return note_unmodelled(d, p, first,
                           "resources reported by the status of a pod without a node are not "
                           "counted (kube-scheduler's filter reads the spec, its scoring the "
                           "larger status)");
}

/* pod_decode reads the pod obj of Go type t (a Pod, or a workload's PodTemplateSpec) into out,
 * with the rarely set members in *x (zeroed); name, when not NULL, stands for its
 * metadata.name */
static int pod_decode(struct dec *d, const json_t *obj, const struct dec_type *t, const char *name,
                      struct kube_pod *out, struct kube_pod_extra *x)
{
    const json_t *meta = NULL, *spec = NULL, *status = NULL, *gates = NULL, *dt;
    const char *policy = "";
    struct dec_res_list overhead = {NULL, 0, NULL, {{0}}};
    int64_t prio = 0;
    size_t old;
    char q[128];
    int rc;

    memset(out, 0, sizeof(*out));
    out->extra = x;
    if ((rc = dec_begin(d, obj, t, &out->source_line, &out->source_file)))
        return rc;
    rc = dec_metadata(d, obj, &meta, &out->name, &out->uid, &out->resource_version, &out->labels);
    if (rc)
        return rc;
    if (name)
        out->name = name;
    out->namespace_ = "default";
    if (meta) {
        old = dec_push(d, "metadata");
        rc = dec_string(d, meta, "namespace", &out->namespace_, "default");
        if (!rc && !out->namespace_[0])
            out->namespace_ = "default";
        dt = json_object_get(meta, "deletionTimestamp");
        out->terminating = dt && !json_is_null(dt);
        if (!rc)
            rc = dec_controller(d, meta, &out->owner, NULL);
        dec_pop(d, old);
        if (rc)
            return rc;
    }
    rc = dec_object(d, obj, "spec", &spec);
    if (!rc)
        rc = dec_object(d, obj, "status", &status);
    if (rc)
        return rc;
    out->node_name = "";
    out->scheduler_name = "default-scheduler";
    out->priority_class_name = "";
    out->nominated_node_name = "";
    out->phase = "";
    if (status) {
        old = dec_push(d, "status");
        rc = dec_string(d, status, "nominatedNodeName", &out->nominated_node_name, "");
        if (!rc)
            rc = dec_string(d, status, "phase", &out->phase, "");
        if (!rc)
            out->disruption_by_preemption = disruption_by_preemption(status);
        dec_pop(d, old);
        if (rc)
            return rc;
    }
    if (!spec) {
        old = dec_push(d, "spec");
        rc = dec_fail(d, NULL, obj, "Required value");
        dec_pop(d, old);
        return rc;
    }
    old = dec_push(d, "spec");
    rc = dec_string(d, spec, "nodeName", &out->node_name, "");
    if (!rc)
        rc = dec_string(d, spec, "schedulerName", &out->scheduler_name, "default-scheduler");
    if (!rc && !out->scheduler_name[0])
        out->scheduler_name = "default-scheduler";
    if (!rc)
        rc = dec_int(d, spec, "priority", INT32_MIN, INT32_MAX, &prio, &out->has_priority);
    out->priority = (int32_t)prio;
    if (!rc)
        rc = dec_string(d, spec, "priorityClassName", &out->priority_class_name, "");
    if (!rc)
        rc = dec_string(d, spec, "runtimeClassName", &out->runtime_class_name, "");
    if (!rc)
        rc = dec_string(d, spec, "preemptionPolicy", &policy, "");
    if (rc)
        goto out;
    out->has_preemption_policy = policy[0] != '\0';
    {
        const json_t *pr = json_object_get(spec, "resources");

        out->has_pod_resources =
            json_is_object(pr) && (json_object_size(json_object_get(pr, "requests")) ||
                                   json_object_size(json_object_get(pr, "limits")));
    }
    if (!strcmp(policy, "Never")) {
        out->preempt_never = true;
    } else if (policy[0] && strcmp(policy, "PreemptLowerPriority")) {
        size_t o2 = dec_push(d, "preemptionPolicy");

        rc =
            dec_fail(d, json_object_get(spec, "preemptionPolicy"), spec,
                     "Unsupported value: %s: supported values: \"Never\", \"PreemptLowerPriority\"",
                     dec_quote(policy, q, sizeof(q)));
        dec_pop(d, o2);
        goto out;
    }
    rc = dec_bool(d, spec, "hostNetwork", &out->host_network);
    if (!rc)
        rc = dec_labels(d, spec, "nodeSelector", true, &out->node_selector);
    if (!rc)
        rc = dec_node_affinity(d, spec, out);
    if (!rc)
        out->tolerations = dec_list(d, spec, "tolerations", JSON_OBJECT, sizeof(*out->tolerations),
                                    dec_toleration, NULL, &out->ntolerations, &rc);
    if (!rc)
        rc = dec_containers(d, spec, "containers", false, out->host_network, &out->containers,
                            &out->ncontainers);
    if (!rc)
        rc = dec_containers(d, spec, "initContainers", true, out->host_network,
                            &out->init_containers, &out->ninit_containers);
    if (!rc)
        rc = dec_res_list(d, spec, "overhead", false, &overhead);
    if (!rc)
        rc = dec_res_list_build(d, &overhead, &out->extra->overhead);
    dec_res_list_release(&overhead);
    if (!rc)
        rc = dec_pod_resources(d, spec, out);
    if (!rc)
        out->extra->spread =
            dec_list(d, spec, "topologySpreadConstraints", JSON_OBJECT, sizeof(*out->extra->spread),
                     dec_spread, NULL, &out->extra->nspread, &rc);
    if (!rc)
        rc = decode_unmodelled(d, spec, out);
    if (!rc)
        rc = dec_array(d, spec, "schedulingGates", &gates);
    if (!rc && gates)
        out->nscheduling_gates = json_array_size(gates);
    if (!rc && out->name[0] && ephemeral_names(out, d->a))
        rc = dec_nomem(d);
out:
    dec_pop(d, old);
    if (!rc && status)
        rc = decode_claim_statuses(d, status, out);
    if (!rc)
        rc = decode_resized(d, status, out);
    return rc;
}

static bool extra_empty(const struct kube_pod_extra *x)
{
    const struct kube_resources *r[3] = {&x->overhead, &x->pod_requests, &x->pod_limits};
    size_t i;

    for (i = 0; i < 3; i++)
        if (r[i]->set || r[i]->nscalars)
            return false;
    return !x->pod_affinity.nrequired && !x->pod_affinity.npreferred &&
           !x->pod_anti_affinity.nrequired && !x->pod_anti_affinity.npreferred && !x->nspread &&
           !x->nephemeral && !x->ninline_volumes && !x->nunmodelled && !x->status &&
           !x->resource_claims && !x->extended_claim;
}

int kube_pod_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                    struct kube_pod *out, struct err *err)
{
    struct dec d;

    dec_init(&d, a, o, err);
    return dec_pod(&d, obj, &dec_t_pod, o ? o->name : NULL, out);
}

int dec_pod(struct dec *d, const json_t *obj, const struct dec_type *t, const char *name,
            struct kube_pod *out)
{
    struct kube_pod_extra x;
    int rc;

    memset(&x, 0, sizeof(x));
    rc = pod_decode(d, obj, t, name, out, &x);
    out->extra = NULL;
    if (rc || extra_empty(&x))
        return rc;
    /* most pods have none of these: they share no block, they have none */
    if (!(out->extra = arena_alloc(d->a, sizeof(*out->extra))))
        return dec_nomem(d);
    *out->extra = x;
    return 0;
}
