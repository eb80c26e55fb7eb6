/* decode_storage.c - storage: the in-tree volume sources CSI migration translates, claim
 * templates, and the storage.k8s.io objects (CSINode, CSIDriver, CSIStorageCapacity,
 * VolumeAttachment). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kube/decode-int.h"
#include "kube/labels.h"

/* The Go types of the fields (decode-int.h) */
static const struct dec_type dec_t_persistent_volume_claim_spec;
static const struct dec_type dec_t_persistent_volume_claim_status;
static const struct dec_type dec_t_persistent_volume_status;
static const struct dec_type dec_t_object_reference;
static const struct dec_type dec_t_volume_node_affinity;
static const struct dec_type dec_t_csi_persistent_volume_source;
static const struct dec_type dec_t_cinder_persistent_volume_source;
static const struct dec_type dec_t_azure_file_persistent_volume_source;
static const struct dec_type dec_t_topology_selector_term;
static const struct dec_type dec_t_topology_selector_label_requirement;

static const struct dec_field dec_t_persistent_volume_claim_template_fields[] = {
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.PersistentVolumeClaimSpec", &dec_t_persistent_volume_claim_spec},
};
const struct dec_type dec_t_persistent_volume_claim_template =
    DEC_TYPE("PersistentVolumeClaimTemplate", dec_t_persistent_volume_claim_template_fields);

static const struct dec_field dec_t_persistent_volume_claim_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.PersistentVolumeClaimSpec", &dec_t_persistent_volume_claim_spec},
    {"status", DEC_OBJ, 0, "v1.PersistentVolumeClaimStatus", &dec_t_persistent_volume_claim_status},
};
const struct dec_type dec_t_persistent_volume_claim =
    DEC_TYPE("PersistentVolumeClaim", dec_t_persistent_volume_claim_fields);

static const struct dec_field dec_t_persistent_volume_claim_spec_fields[] = {
    {"accessModes", DEC_ARR, DEC_STR, "[]v1.PersistentVolumeAccessMode", NULL},
    {"dataSource", DEC_OBJ, 0, "v1.TypedLocalObjectReference", NULL},
    {"dataSourceRef", DEC_OBJ, 0, "v1.TypedObjectReference", NULL},
    {"resources", DEC_OBJ, 0, "v1.VolumeResourceRequirements", &dec_t_volume_resource_requirements},
    {"selector", DEC_OBJ, 0, "v1.LabelSelector", &dec_t_label_selector},
    {"storageClassName", DEC_STR, 0, "string", NULL},
    {"volumeAttributesClassName", DEC_STR, 0, "string", NULL},
    {"volumeMode", DEC_STR, 0, "v1.PersistentVolumeMode", NULL},
    {"volumeName", DEC_STR, 0, "string", NULL},
};
static const struct dec_type dec_t_persistent_volume_claim_spec =
    DEC_TYPE("PersistentVolumeClaimSpec", dec_t_persistent_volume_claim_spec_fields);

static const struct dec_field dec_t_persistent_volume_claim_status_fields[] = {
    {"accessModes", DEC_ARR, DEC_STR, "[]v1.PersistentVolumeAccessMode", NULL},
    {"allocatedResourceStatuses", DEC_MAP, DEC_STR, "map[v1.ResourceName]v1.ClaimResourceStatus",
     NULL},
    {"allocatedResources", DEC_MAP, DEC_QTY, "v1.ResourceList", NULL},
    {"capacity", DEC_MAP, DEC_QTY, "v1.ResourceList", NULL},
    {"conditions", DEC_ARR, DEC_OBJ, "[]v1.PersistentVolumeClaimCondition", NULL},
    {"currentVolumeAttributesClassName", DEC_STR, 0, "string", NULL},
    {"healthStatus", DEC_OBJ, 0, "v1.VolumeHealthStatus", NULL},
    {"modifyVolumeStatus", DEC_OBJ, 0, "v1.ModifyVolumeStatus", NULL},
    {"phase", DEC_STR, 0, "v1.PersistentVolumeClaimPhase", NULL},
};
static const struct dec_type dec_t_persistent_volume_claim_status =
    DEC_TYPE("PersistentVolumeClaimStatus", dec_t_persistent_volume_claim_status_fields);

static const struct dec_field dec_t_persistent_volume_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"spec", DEC_OBJ, 0, "v1.PersistentVolumeSpec", &dec_t_persistent_volume_spec},
    {"status", DEC_OBJ, 0, "v1.PersistentVolumeStatus", &dec_t_persistent_volume_status},
};
const struct dec_type dec_t_persistent_volume =
    DEC_TYPE("PersistentVolume", dec_t_persistent_volume_fields);

static const struct dec_field dec_t_persistent_volume_spec_fields[] = {
    {"accessModes", DEC_ARR, DEC_STR, "[]v1.PersistentVolumeAccessMode", NULL},
    {"awsElasticBlockStore", DEC_OBJ, 0, "v1.AWSElasticBlockStoreVolumeSource",
     &dec_t_aws_elastic_block_store_volume_source},
    {"azureDisk", DEC_OBJ, 0, "v1.AzureDiskVolumeSource", &dec_t_azure_disk_volume_source},
    {"azureFile", DEC_OBJ, 0, "v1.AzureFilePersistentVolumeSource",
     &dec_t_azure_file_persistent_volume_source},
    {"capacity", DEC_MAP, DEC_QTY, "v1.ResourceList", NULL},
    {"cephfs", DEC_OBJ, 0, "v1.CephFSPersistentVolumeSource", NULL},
    {"cinder", DEC_OBJ, 0, "v1.CinderPersistentVolumeSource",
     &dec_t_cinder_persistent_volume_source},
    {"claimRef", DEC_OBJ, 0, "v1.ObjectReference", &dec_t_object_reference},
    {"csi", DEC_OBJ, 0, "v1.CSIPersistentVolumeSource", &dec_t_csi_persistent_volume_source},
    {"fc", DEC_OBJ, 0, "v1.FCVolumeSource", NULL},
    {"flexVolume", DEC_OBJ, 0, "v1.FlexPersistentVolumeSource", NULL},
    {"flocker", DEC_OBJ, 0, "v1.FlockerVolumeSource", NULL},
    {"gcePersistentDisk", DEC_OBJ, 0, "v1.GCEPersistentDiskVolumeSource",
     &dec_t_gce_persistent_disk_volume_source},
    {"glusterfs", DEC_OBJ, 0, "v1.GlusterfsPersistentVolumeSource", NULL},
    {"hostPath", DEC_OBJ, 0, "v1.HostPathVolumeSource", NULL},
    {"iscsi", DEC_OBJ, 0, "v1.ISCSIPersistentVolumeSource", NULL},
    {"local", DEC_OBJ, 0, "v1.LocalVolumeSource", NULL},
    {"mountOptions", DEC_ARR, DEC_STR, "[]string", NULL},
    {"nfs", DEC_OBJ, 0, "v1.NFSVolumeSource", NULL},
    {"nodeAffinity", DEC_OBJ, 0, "v1.VolumeNodeAffinity", &dec_t_volume_node_affinity},
    {"persistentVolumeReclaimPolicy", DEC_STR, 0, "v1.PersistentVolumeReclaimPolicy", NULL},
    {"photonPersistentDisk", DEC_OBJ, 0, "v1.PhotonPersistentDiskVolumeSource", NULL},
    {"portworxVolume", DEC_OBJ, 0, "v1.PortworxVolumeSource", &dec_t_portworx_volume_source},
    {"quobyte", DEC_OBJ, 0, "v1.QuobyteVolumeSource", NULL},
    {"rbd", DEC_OBJ, 0, "v1.RBDPersistentVolumeSource", NULL},
    {"scaleIO", DEC_OBJ, 0, "v1.ScaleIOPersistentVolumeSource", NULL},
    {"storageClassName", DEC_STR, 0, "string", NULL},
    {"storageos", DEC_OBJ, 0, "v1.StorageOSPersistentVolumeSource", NULL},
    {"volumeAttributesClassName", DEC_STR, 0, "string", NULL},
    {"volumeMode", DEC_STR, 0, "v1.PersistentVolumeMode", NULL},
    {"vsphereVolume", DEC_OBJ, 0, "v1.VsphereVirtualDiskVolumeSource",
     &dec_t_vsphere_virtual_disk_volume_source},
};
const struct dec_type dec_t_persistent_volume_spec =
    DEC_TYPE("PersistentVolumeSpec", dec_t_persistent_volume_spec_fields);

static const struct dec_field dec_t_persistent_volume_status_fields[] = {
    {"lastPhaseTransitionTime", DEC_STR, 0, "v1.Time", NULL},
    {"message", DEC_STR, 0, "string", NULL},
    {"phase", DEC_STR, 0, "v1.PersistentVolumePhase", NULL},
    {"reason", DEC_STR, 0, "string", NULL},
};
static const struct dec_type dec_t_persistent_volume_status =
    DEC_TYPE("PersistentVolumeStatus", dec_t_persistent_volume_status_fields);

static const struct dec_field dec_t_object_reference_fields[] = {
    {"apiVersion", DEC_STR, 0, "string", NULL}, {"fieldPath", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},       {"name", DEC_STR, 0, "string", NULL},
    {"namespace", DEC_STR, 0, "string", NULL},  {"resourceVersion", DEC_STR, 0, "string", NULL},
    {"uid", DEC_STR, 0, "types.UID", NULL},
};
static const struct dec_type dec_t_object_reference =
    DEC_TYPE("ObjectReference", dec_t_object_reference_fields);

static const struct dec_field dec_t_volume_node_affinity_fields[] = {
    {"required", DEC_OBJ, 0, "v1.NodeSelector", &dec_t_node_selector},
};
static const struct dec_type dec_t_volume_node_affinity =
    DEC_TYPE("VolumeNodeAffinity", dec_t_volume_node_affinity_fields);

static const struct dec_field dec_t_csi_persistent_volume_source_fields[] = {
    {"controllerExpandSecretRef", DEC_OBJ, 0, "v1.SecretReference", NULL},
    {"controllerPublishSecretRef", DEC_OBJ, 0, "v1.SecretReference", NULL},
    {"driver", DEC_STR, 0, "string", NULL},
    {"fsType", DEC_STR, 0, "string", NULL},
    {"nodeExpandSecretRef", DEC_OBJ, 0, "v1.SecretReference", NULL},
    {"nodePublishSecretRef", DEC_OBJ, 0, "v1.SecretReference", NULL},
    {"nodeStageSecretRef", DEC_OBJ, 0, "v1.SecretReference", NULL},
    {"readOnly", DEC_BOOL, 0, "bool", NULL},
    {"volumeAttributes", DEC_MAP, DEC_STR, "map[string]string", NULL},
    {"volumeHandle", DEC_STR, 0, "string", NULL},
};
static const struct dec_type dec_t_csi_persistent_volume_source =
    DEC_TYPE("CSIPersistentVolumeSource", dec_t_csi_persistent_volume_source_fields);

static const struct dec_field dec_t_aws_elastic_block_store_volume_source_fields[] = {
    {"fsType", DEC_STR, 0, "string", NULL},
    {"partition", DEC_INT32, 0, "int32", NULL},
    {"readOnly", DEC_BOOL, 0, "bool", NULL},
    {"volumeID", DEC_STR, 0, "string", NULL},
};
const struct dec_type dec_t_aws_elastic_block_store_volume_source = DEC_TYPE(
    "AWSElasticBlockStoreVolumeSource", dec_t_aws_elastic_block_store_volume_source_fields);

static const struct dec_field dec_t_gce_persistent_disk_volume_source_fields[] = {
    {"fsType", DEC_STR, 0, "string", NULL},
    {"partition", DEC_INT32, 0, "int32", NULL},
    {"pdName", DEC_STR, 0, "string", NULL},
    {"readOnly", DEC_BOOL, 0, "bool", NULL},
};
const struct dec_type dec_t_gce_persistent_disk_volume_source =
    DEC_TYPE("GCEPersistentDiskVolumeSource", dec_t_gce_persistent_disk_volume_source_fields);

static const struct dec_field dec_t_azure_disk_volume_source_fields[] = {
    {"cachingMode", DEC_STR, 0, "v1.AzureDataDiskCachingMode", NULL},
    {"diskName", DEC_STR, 0, "string", NULL},
    {"diskURI", DEC_STR, 0, "string", NULL},
    {"fsType", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "v1.AzureDataDiskKind", NULL},
    {"readOnly", DEC_BOOL, 0, "bool", NULL},
};
const struct dec_type dec_t_azure_disk_volume_source =
    DEC_TYPE("AzureDiskVolumeSource", dec_t_azure_disk_volume_source_fields);

static const struct dec_field dec_t_cinder_volume_source_fields[] = {
    {"fsType", DEC_STR, 0, "string", NULL},
    {"readOnly", DEC_BOOL, 0, "bool", NULL},
    {"secretRef", DEC_OBJ, 0, "v1.LocalObjectReference", NULL},
    {"volumeID", DEC_STR, 0, "string", NULL},
};
const struct dec_type dec_t_cinder_volume_source =
    DEC_TYPE("CinderVolumeSource", dec_t_cinder_volume_source_fields);

static const struct dec_field dec_t_cinder_persistent_volume_source_fields[] = {
    {"fsType", DEC_STR, 0, "string", NULL},
    {"readOnly", DEC_BOOL, 0, "bool", NULL},
    {"secretRef", DEC_OBJ, 0, "v1.SecretReference", NULL},
    {"volumeID", DEC_STR, 0, "string", NULL},
};
static const struct dec_type dec_t_cinder_persistent_volume_source =
    DEC_TYPE("CinderPersistentVolumeSource", dec_t_cinder_persistent_volume_source_fields);

static const struct dec_field dec_t_portworx_volume_source_fields[] = {
    {"fsType", DEC_STR, 0, "string", NULL},
    {"readOnly", DEC_BOOL, 0, "bool", NULL},
    {"volumeID", DEC_STR, 0, "string", NULL},
};
const struct dec_type dec_t_portworx_volume_source =
    DEC_TYPE("PortworxVolumeSource", dec_t_portworx_volume_source_fields);

static const struct dec_field dec_t_azure_file_volume_source_fields[] = {
    {"readOnly", DEC_BOOL, 0, "bool", NULL},
    {"secretName", DEC_STR, 0, "string", NULL},
    {"shareName", DEC_STR, 0, "string", NULL},
};
const struct dec_type dec_t_azure_file_volume_source =
    DEC_TYPE("AzureFileVolumeSource", dec_t_azure_file_volume_source_fields);

static const struct dec_field dec_t_azure_file_persistent_volume_source_fields[] = {
    {"readOnly", DEC_BOOL, 0, "bool", NULL},
    {"secretName", DEC_STR, 0, "string", NULL},
    {"secretNamespace", DEC_STR, 0, "string", NULL},
    {"shareName", DEC_STR, 0, "string", NULL},
};
static const struct dec_type dec_t_azure_file_persistent_volume_source =
    DEC_TYPE("AzureFilePersistentVolumeSource", dec_t_azure_file_persistent_volume_source_fields);

static const struct dec_field dec_t_vsphere_virtual_disk_volume_source_fields[] = {
    {"fsType", DEC_STR, 0, "string", NULL},
    {"storagePolicyID", DEC_STR, 0, "string", NULL},
    {"storagePolicyName", DEC_STR, 0, "string", NULL},
    {"volumePath", DEC_STR, 0, "string", NULL},
};
const struct dec_type dec_t_vsphere_virtual_disk_volume_source =
    DEC_TYPE("VsphereVirtualDiskVolumeSource", dec_t_vsphere_virtual_disk_volume_source_fields);

static const struct dec_field dec_t_storage_class_fields[] = {
    {"allowVolumeExpansion", DEC_BOOL, 0, "bool", NULL},
    {"allowedTopologies", DEC_ARR, DEC_OBJ, "[]v1.TopologySelectorTerm",
     &dec_t_topology_selector_term},
    {"apiVersion", DEC_STR, 0, "string", NULL},
    {"kind", DEC_STR, 0, "string", NULL},
    {"metadata", DEC_OBJ, 0, "v1.ObjectMeta", &dec_t_object_meta},
    {"mountOptions", DEC_ARR, DEC_STR, "[]string", NULL},
    {"parameters", DEC_MAP, DEC_STR, "map[string]string", NULL},
    {"provisioner", DEC_STR, 0, "string", NULL},
    {"reclaimPolicy", DEC_STR, 0, "v1.PersistentVolumeReclaimPolicy", NULL},
    {"volumeBindingMode", DEC_STR, 0, "v1.VolumeBindingMode", NULL},
};
const struct dec_type dec_t_storage_class = DEC_TYPE("StorageClass", dec_t_storage_class_fields);

static const struct dec_field dec_t_topology_selector_term_fields[] = {
    {"matchLabelExpressions", DEC_ARR, DEC_OBJ, "[]v1.TopologySelectorLabelRequirement",
     &dec_t_topology_selector_label_requirement},
};
static const struct dec_type dec_t_topology_selector_term =
    DEC_TYPE("TopologySelectorTerm", dec_t_topology_selector_term_fields);

static const struct dec_field dec_t_topology_selector_label_requirement_fields[] = {
    {"key", DEC_STR, 0, "string", NULL},
    {"values", DEC_ARR, DEC_STR, "[]string", NULL},
};
static const struct dec_type dec_t_topology_selector_label_requirement =
    DEC_TYPE("TopologySelectorLabelRequirement", dec_t_topology_selector_label_requirement_fields);

/* ---------------------------------------------------------------------------------------- */
/* In-tree volumes CSI migration translates, generic ephemeral volumes' claims               */

static const struct {
    const char *source;
    enum kube_intree plugin;
    const char *id; /* the field naming the volume */
} intree_sources[] = {
    {"awsElasticBlockStore", KUBE_INTREE_AWS_EBS, "volumeID"},
    {"gcePersistentDisk", KUBE_INTREE_GCE_PD, "pdName"},
    {"azureDisk", KUBE_INTREE_AZURE_DISK, "diskURI"},
    {"cinder", KUBE_INTREE_CINDER, "volumeID"},
    {"portworxVolume", KUBE_INTREE_PORTWORX, "volumeID"},
    {"azureFile", KUBE_INTREE_AZURE_FILE, "shareName"},
    {"vsphereVolume", KUBE_INTREE_VSPHERE, "volumePath"},
};

/* dec_intree reads the in-tree source of v (a pod volume or a PersistentVolume's spec), if
 * it has one CSI migration knows; out->plugin stays KUBE_INTREE_NONE otherwise */
int dec_intree(struct dec *d, const json_t *v, struct kube_inline_volume *out)
{
    size_t k, old;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    out->id = "";
    for (k = 0; k < sizeof(intree_sources) / sizeof(intree_sources[0]); k++) {
        const json_t *src = json_object_get(v, intree_sources[k].source);
        const char *kind;
        if (!json_is_object(src))
            continue;
        out->plugin = intree_sources[k].plugin;
        old = dec_push(d, intree_sources[k].source);
        rc = dec_string(d, src, intree_sources[k].id, &out->id, "");
        if (!rc && out->plugin == KUBE_INTREE_AZURE_DISK) {
            /* translation accepts kind Managed (the default) only */
            rc = dec_peek(d, src, "kind", &kind);
            out->azure_unmanaged = !rc && kind[0] && strcasecmp(kind, "Managed");
        }
        dec_pop(d, old);
        break;
    }
    return rc;
}

#define ANN_CLASS "volume.beta.kubernetes.io/storage-class"
#define ANN_SELECTED "volume.kubernetes.io/selected-node"
#define ANN_BOUND "pv.kubernetes.io/bind-completed"

/* access_modes reads spec.accessModes into KUBE_ACCESS_* bits; required: at least one */
static int access_modes(struct dec *d, const json_t *spec, bool required, unsigned *out)
{
    static const char *const modes[] = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany",
                                        "ReadWriteOncePod"};
    const json_t *am, *m;
    size_t old, i, k;
    char q[256];
    int rc;

    *out = 0;
    if ((rc = dec_array(d, spec, "accessModes", &am)))
        return rc;
    old = dec_push(d, "accessModes");
    if (required && (!am || !json_array_size(am)))
        rc = dec_fail(d, am, spec, "Required value: at least 1 access mode is required");
    json_array_foreach(am, i, m)
    {
        if (rc)
            break;
        if (!json_is_string(m)) {
            rc = dec_type_error(d, am, NULL, m, "v1.PersistentVolumeAccessMode");
            break;
        }
        for (k = 0; k < 4 && strcmp(json_string_value(m), modes[k]); k++)
            ;
        if (k == 4)
            rc = dec_fail(d, m, am,
                          "Unsupported value: %s: supported values: \"ReadOnlyMany\", "
                          "\"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"",
                          dec_quote(json_string_value(m), q, sizeof(q)));
        else
            *out |= 1u << k;
    }
    dec_pop(d, old);
    return rc;
}

/* volume_mode reads spec.volumeMode: Filesystem (the default) or Block */
static int volume_mode(struct dec *d, const json_t *spec, bool *block)
{
    const char *mode;
    char q[256];
    size_t old;
    int rc;

    if ((rc = dec_string(d, spec, "volumeMode", &mode, "Filesystem")))
        return rc;
    *block = !strcmp(mode, "Block");
    if (*block || !strcmp(mode, "Filesystem"))
        return 0;
    old = dec_push(d, "volumeMode");
    rc = dec_fail(d, json_object_get(spec, "volumeMode"), spec,
                  "Unsupported value: %s: supported values: \"Block\", \"Filesystem\"",
                  dec_quote(mode, q, sizeof(q)));
    dec_pop(d, old);
    return rc;
}

/* claim_spec reads a PersistentVolumeClaimSpec into c: required (a claim template) holds it
 * to the API server's required fields (access modes, a storage request) */
static int claim_spec(struct dec *d, const json_t *spec, bool required, struct kube_pvc *c)
{
    const json_t *res = NULL, *req = NULL, *sel;
    size_t old;
    bool has = false;
    int rc;

    rc = dec_string(d, spec, "storageClassName", &c->spec_class, NULL);
    if (!rc)
        rc = dec_string(d, spec, "volumeName", &c->volume_name, "");
    if (!rc)
        rc = volume_mode(d, spec, &c->block);
    if (!rc)
        rc = access_modes(d, spec, required, &c->access);
    if (!rc)
        rc = dec_object(d, spec, "resources", &res);
    if (!rc && res) {
        old = dec_push(d, "resources");
        rc = dec_object(d, res, "requests", &req);
        if (!rc && req) {
            size_t o2 = dec_push(d, "requests");
            rc = dec_storage(d, req, "storage", true, &c->request, &has);
            dec_pop(d, o2);
        }
        dec_pop(d, old);
    }
    if (!rc && required && (!has || !c->request)) {
        /* a null storage is the zero quantity, given (Quantity's UnmarshalJSON) */
        old = dec_push(d, "resources[storage]");
        if (!has)
            rc = dec_fail(d, NULL, spec, "Required value");
        else
            rc = dec_fail(d, json_object_get(req, "storage"), req,
                          "Invalid value: \"0\": must be greater than zero");
        dec_pop(d, old);
    }
    sel = json_object_get(spec, "selector");
    if (!rc && sel && !json_is_null(sel)) {
        old = dec_push(d, "selector");
        c->has_selector = true;
        rc = dec_label_selector(d, sel, &c->selector);
        dec_pop(d, old);
    }
    return rc;
}

/* annotation: the string annotation key of metadata meta (an arena copy), or NULL */
static int annotation(struct dec *d, const json_t *meta, const char *key, const char **out)
{
    const json_t *ann;
    size_t old;
    int rc;

    *out = NULL;
    if ((rc = dec_object(d, meta, "annotations", &ann)) || !ann)
        return rc;
    old = dec_push(d, "metadata.annotations");
    rc = dec_string(d, ann, key, out, NULL);
    dec_pop(d, old);
    return rc;
}

int dec_claim_template(struct dec *d, const json_t *t, struct kube_pvc *c)
{
    const json_t *meta, *spec;
    const char *beta = NULL;
    size_t old;
    int rc;

    c->volume_name = "";
    rc = dec_object(d, t, "metadata", &meta);
    if (!rc && meta)
        rc = annotation(d, meta, ANN_CLASS, &beta);
    if (!rc)
        rc = dec_object(d, t, "spec", &spec);
    if (rc)
        return rc;
    old = dec_push(d, "spec");
    if (!spec)
        rc = dec_fail(d, NULL, t, "Required value");
    else
        rc = claim_spec(d, spec, true, c);
    dec_pop(d, old);
    c->storage_class = beta ? beta : c->spec_class;
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* PersistentVolumeClaim, PersistentVolume, StorageClass                                      */

/* storage_object starts a storage kind's decoder: type, metadata.name (required), the
 * namespace (ns not NULL: a claim, "" when unset), deletionTimestamp */
static int storage_object(struct dec *d, const json_t *obj, const struct dec_type *t,
                          const json_t **meta, const char **name, const char **ns,
                          bool *terminating)
{
    const json_t *dt;
    int rc;

    if ((rc = dec_begin(d, obj, t, NULL, NULL)) || (rc = dec_named(d, obj, meta, name, NULL)))
        return rc;
    if (ns) {
        size_t old = dec_push(d, "metadata");

        rc = dec_string(d, *meta, "namespace", ns, "");
        dec_pop(d, old);
    }
    dt = json_object_get(*meta, "deletionTimestamp");
    *terminating = json_is_string(dt);
    return rc;
}

/* status_phase: status.phase is want */
static int status_phase(struct dec *d, const json_t *obj, const char *want, bool *out)
{
    const json_t *status;
    const char *phase = "";
    size_t old;
    int rc;

    *out = false;
    if ((rc = dec_object(d, obj, "status", &status)) || !status)
        return rc;
    old = dec_push(d, "status");
    rc = dec_peek(d, status, "phase", &phase);
    dec_pop(d, old);
    *out = !strcmp(phase, want);
    return rc;
}

int kube_pvc_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                    struct kube_pvc *out, struct err *err)
{
    const json_t *meta, *spec;
    const char *beta = NULL;
    struct kube_owner owner;
    const char *uid;
    struct dec d;
    size_t old;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    out->volume_name = "";
    out->owner_uid = "";
    if ((rc = storage_object(&d, obj, &dec_t_persistent_volume_claim, &meta, &out->name,
                             &out->namespace_, &out->terminating)) ||
        (rc = annotation(&d, meta, ANN_CLASS, &beta)) ||
        (rc = annotation(&d, meta, ANN_SELECTED, &out->selected_node)) ||
        (rc = dec_object(&d, obj, "spec", &spec)))
        return rc;
    out->bind_completed = json_object_get(json_object_get(meta, "annotations"), ANN_BOUND) != NULL;
    if (spec) {
        old = dec_push(&d, "spec");
        rc = claim_spec(&d, spec, false, out);
        dec_pop(&d, old);
        if (rc)
            return rc;
    }
    out->storage_class = beta ? beta : out->spec_class;
    if ((rc = status_phase(&d, obj, "Lost", &out->lost)))
        return rc;
    old = dec_push(&d, "metadata");
    rc = dec_controller(&d, meta, &owner, &uid);
    dec_pop(&d, old);
    /* a generic ephemeral volume's claim: its pod (ephemeral.VolumeIsForPod) */
    if (!rc && owner.kind && !strcmp(owner.kind, "Pod")) {
        out->owner_pod = owner.name;
        out->owner_uid = uid;
    }
    return rc;
}

int kube_pv_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                   struct kube_pv *out, struct err *err)
{
    const json_t *meta, *spec, *cap = NULL, *ref = NULL, *na = NULL, *csi = NULL, *req;
    const char *beta = NULL;
    struct dec d;
    size_t old, o2;
    bool has;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    out->storage_class = "";
    out->claim_uid = "";
    if ((rc = storage_object(&d, obj, &dec_t_persistent_volume, &meta, &out->name, NULL,
                             &out->terminating)) ||
        (rc = annotation(&d, meta, ANN_CLASS, &beta)))
        return rc;
    old = dec_push(&d, "metadata");
    /* values not validated: they only feed VolumeZone and claim selectors */
    rc = dec_labels(&d, meta, "labels", false, &out->labels);
    dec_pop(&d, old);
    if (!rc)
        rc = dec_object(&d, obj, "spec", &spec);
    if (!rc && spec) {
        old = dec_push(&d, "spec");
        if (!(rc = dec_string(&d, spec, "storageClassName", &out->storage_class, "")) &&
            !(rc = access_modes(&d, spec, false, &out->access)) &&
            !(rc = volume_mode(&d, spec, &out->block)) &&
            !(rc = dec_object(&d, spec, "capacity", &cap)) && cap) {
            o2 = dec_push(&d, "capacity");
            rc = dec_storage(&d, cap, "storage", true, &out->capacity, &has);
            dec_pop(&d, o2);
        }
        if (!rc)
            rc = dec_object(&d, spec, "claimRef", &ref);
        if (!rc && ref) {
            o2 = dec_push(&d, "claimRef");
            if (!(rc = dec_string(&d, ref, "name", &out->claim_name, "")) &&
                !(rc = dec_string(&d, ref, "namespace", &out->claim_ns, "")))
                rc = dec_string(&d, ref, "uid", &out->claim_uid, "");
            dec_pop(&d, o2);
        }
        if (!rc)
            rc = dec_object(&d, spec, "csi", &csi);
        if (!rc && csi) {
            o2 = dec_push(&d, "csi");
            if (!(rc = dec_string(&d, csi, "driver", &out->csi_driver, "")))
                rc = dec_string(&d, csi, "volumeHandle", &out->csi_handle, "");
            dec_pop(&d, o2);
        }
        if (!rc)
            rc = dec_intree(&d, spec, &out->intree);
        if (!rc)
            rc = dec_object(&d, spec, "nodeAffinity", &na);
        req = na ? json_object_get(na, "required") : NULL;
        if (!rc && req && !json_is_null(req)) {
            o2 = dec_push(&d, "nodeAffinity.required");
            out->has_affinity = true;
            rc = dec_node_selector(&d, req, &out->affinity);
            dec_pop(&d, o2);
        }
        dec_pop(&d, old);
    }
    if (!rc && beta)
        out->storage_class = beta;
    if (!rc)
        rc = status_phase(&d, obj, "Available", &out->available);
    return rc;
}

/* topology_term reads one term of allowedTopologies: matchLabelExpressions, each a key and
 * at least one value, as In requirements */
static int topology_term(struct dec *d, const json_t *t, void *slot, void *ctx)
{
    struct kube_topology_term *out = slot;
    const json_t *exprs, *e;
    size_t i, old, o2;
    int rc;

    (void)ctx;
    memset(out, 0, sizeof(*out));
    if ((rc = dec_array(d, t, "matchLabelExpressions", &exprs)) || !exprs)
        return rc;
    if (!(out->exprs = arena_alloc(d->a, (json_array_size(exprs) + 1) * sizeof(*out->exprs))))
        return dec_nomem(d);
    old = dec_push(d, "matchLabelExpressions");
    json_array_foreach(exprs, i, e)
    {
        struct kube_requirement *r = &out->exprs[out->nexprs];

        memset(r, 0, sizeof(*r));
        r->op = KUBE_OP_IN;
        o2 = dec_index(d, i);
        if (!json_is_object(e))
            rc = dec_type_error(d, exprs, NULL, e, "v1.TopologySelectorLabelRequirement");
        if (!rc)
            rc = dec_string(d, e, "key", &r->key, "");
        if (!rc)
            r->values = dec_list(d, e, "values", JSON_STRING, sizeof(*r->values), dec_str_elem,
                                 NULL, &r->nvalues, &rc);
        if (!rc && (!r->key[0] || !r->nvalues))
            rc = dec_fail(d, e, exprs, "Required value: a key and at least one value");
        dec_pop(d, o2);
        if (rc)
            break;
        out->nexprs++;
    }
    dec_pop(d, old);
    return rc;
}

int kube_storage_class_decode(const json_t *obj, struct arena *a, const struct kube_decode_opts *o,
                              struct kube_storage_class *out, struct err *err)
{
    const json_t *meta;
    const char *mode;
    struct dec d;
    char q[256];
    size_t old;
    bool term;
    int rc;

    dec_init(&d, a, o, err);
    memset(out, 0, sizeof(*out));
    if ((rc = storage_object(&d, obj, &dec_t_storage_class, &meta, &out->name, NULL, &term)) ||
        (rc = dec_string(&d, obj, "provisioner", &out->provisioner, "")) ||
        (rc = dec_string(&d, obj, "volumeBindingMode", &mode, "Immediate")))
        return rc;
    if (!out->provisioner[0]) {
        old = dec_push(&d, "provisioner");
        rc = dec_fail(&d, NULL, obj, "Required value");
        dec_pop(&d, old);
        return rc;
    }
    if (strcmp(mode, "Immediate") && strcmp(mode, "WaitForFirstConsumer")) {
        old = dec_push(&d, "volumeBindingMode");
        rc = dec_fail(&d, json_object_get(obj, "volumeBindingMode"), obj,
                      "Unsupported value: %s: supported values: \"Immediate\", "
                      "\"WaitForFirstConsumer\"",
                      dec_quote(mode, q, sizeof(q)));
        dec_pop(&d, old);
        return rc;
    }
    out->wait_for_first_consumer = !strcmp(mode, "WaitForFirstConsumer");
    out->topologies = dec_list(&d, obj, "allowedTopologies", JSON_OBJECT, sizeof(*out->topologies),
                               topology_term, NULL, &out->ntopologies, &rc);
    return rc;
}
