/* csitranslation.c - what csi-translation-lib (k8s.io/csi-translation-lib) says of in-tree
 * volumes for NodeVolumeLimits: the CSI driver an in-tree plugin or provisioner migrates to,
 * and the volume handle of an in-tree volume, so that migrated volumes count against the CSI
 * driver's attach limit. */
#include "sched/volumes-int.h"

#include <stdio.h>
#include <string.h>

#include "kube/labels.h"

/* the CSI driver an in-tree plugin migrates to, when NodeVolumeLimits counts it
 * (isCSIMigrationOn: AWS EBS, GCE PD, Azure Disk, Cinder, Portworx) */
const char *sched_csi_intree_driver(enum kube_intree plugin)
{
    switch (plugin) {
    case KUBE_INTREE_AWS_EBS:
        return "ebs.csi.aws.com";
    case KUBE_INTREE_GCE_PD:
        return "pd.csi.storage.gke.io";
    case KUBE_INTREE_AZURE_DISK:
        return "disk.csi.azure.com";
    case KUBE_INTREE_CINDER:
        return "cinder.csi.openstack.org";
    case KUBE_INTREE_PORTWORX:
        return "pxd.portworx.com";
    default:
        return NULL;
    }
}

/* the same for a StorageClass's in-tree provisioner name; *migratable tells whether it is
 * one of CSI migration's (then NULL means it is not counted) */
const char *sched_csi_intree_provisioner_driver(const char *prov, bool *migratable)
{
    static const struct {
        const char *name;
        enum kube_intree plugin;
    } p[] = {
        {"kubernetes.io/aws-ebs", KUBE_INTREE_AWS_EBS},
        {"kubernetes.io/gce-pd", KUBE_INTREE_GCE_PD},
        {"kubernetes.io/azure-disk", KUBE_INTREE_AZURE_DISK},
        {"kubernetes.io/cinder", KUBE_INTREE_CINDER},
        {"kubernetes.io/portworx-volume", KUBE_INTREE_PORTWORX},
        {"kubernetes.io/azure-file", KUBE_INTREE_AZURE_FILE},
        {"kubernetes.io/vsphere-volume", KUBE_INTREE_VSPHERE},
    };
    size_t i;

    for (i = 0; i < sizeof(p) / sizeof(p[0]); i++)
        if (!strcmp(p[i].name, prov)) {
            *migratable = true;
            return sched_csi_intree_driver(p[i].plugin);
        }
    *migratable = false;
    return NULL;
}

/* intree_handle writes the CSI volume handle csi-translation-lib gives the in-tree volume iv
 * (pv_labels: a PersistentVolume's labels, NULL for a pod's inline volume); false when the
 * translation fails (the volume is not counted) */
bool sched_csi_intree_handle(const struct kube_inline_volume *iv,
                             const struct kube_labels *pv_labels, char *buf, size_t size)
{
    const char *id = iv->id;

    switch (iv->plugin) {
    case KUBE_INTREE_AWS_EBS:
        /* KubernetesVolumeIDToEBSVolumeID: "aws://ZONE/vol-..." to "vol-..." */
        if (!strncmp(id, "aws://", 6)) {
            const char *path = strchr(id + 6, '/');
            size_t n;
            if (!path)
                return false;
            while (*path == '/')
                path++;
            n = strlen(path);
            while (n && path[n - 1] == '/')
                n--;
            if (n < 4 || strncmp(path, "vol-", 4) || memchr(path, '/', n))
                return false;
            snprintf(buf, size, "%.*s", (int)n, path);
            return true;
        }
        snprintf(buf, size, "%s", id);
        return true;
    case KUBE_INTREE_GCE_PD: {
        const char *zones = NULL, *sep;
        if (pv_labels) {
            zones = kube_labels_get(pv_labels, "failure-domain.beta.kubernetes.io/zone");
            if (!zones || !zones[0])
                zones = kube_labels_get(pv_labels, "topology.kubernetes.io/zone");
        }
        if (!zones || !zones[0]) {
            snprintf(buf, size, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/%s", id);
            return true;
        }
        if (!(sep = strstr(zones, "__"))) {
            snprintf(buf, size, "projects/UNSPECIFIED/zones/%s/disks/%s", zones, id);
            return true;
        }
        {
            /* a regional disk: every zone {locale}-{region}-{zone} of one region */
            char region[256] = "";
            const char *z = zones;
            for (;;) {
                const char *e = strstr(z, "__");
                size_t n = e ? (size_t)(e - z) : strlen(z), dashes = 0, k, cut = 0;
                for (k = 0; k < n; k++)
                    if (z[k] == '-' && ++dashes == 2)
                        cut = k;
                if (dashes != 2 || cut >= sizeof(region))
                    return false;
                if (!region[0])
                    snprintf(region, sizeof(region), "%.*s", (int)cut, z);
                else if (strlen(region) != cut || strncmp(region, z, cut))
                    return false;
                if (!e)
                    break;
                z = e + 2;
            }
            snprintf(buf, size, "projects/UNSPECIFIED/regions/%s/disks/%s", region, id);
            return true;
        }
    }
    case KUBE_INTREE_AZURE_DISK:
        if (iv->azure_unmanaged)
            return false;
        snprintf(buf, size, "%s", id);
        return true;
    case KUBE_INTREE_CINDER:
    case KUBE_INTREE_PORTWORX:
        snprintf(buf, size, "%s", id);
        return true;
    default:
        return false;
    }
}
