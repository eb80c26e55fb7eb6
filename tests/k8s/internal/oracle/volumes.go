package oracle

// The PersistentVolume controller's part in VolumeBinding's PreBind: kube-scheduler writes
// its decisions (a volume's claimRef, a claim's selected-node annotation) and then waits
// until the claims are bound. Nothing else runs here to bind them, so these reactors do what
// the controller (and a provisioner) would do at once: a volume given a claimRef binds that
// claim; a claim given a selected node gets a new volume ("pvc-<uid>", its requested size,
// no node affinity, a CSI volume of its class's provisioner as an external provisioner
// makes it: NodeVolumeLimits counts it under that driver) and binds to it.
//
// It also plays the ephemeral volume controller: every pod's generic ephemeral volume gets
// its claim ("<pod>-<volume>", the template's spec, controlled by the pod) before the
// scheduler starts, unless the input has an object of that name.

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apitypes "k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"gpulabel.test/k8s/internal/objects"
)

const (
	annBindCompleted = "pv.kubernetes.io/bind-completed"
	annSelectedNode  = "volume.kubernetes.io/selected-node"
)

var (
	pvGVR  = corev1.SchemeGroupVersion.WithResource("persistentvolumes")
	pvcGVR = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	scGVR  = storagev1.SchemeGroupVersion.WithResource("storageclasses")
)

// the CSI drivers CSI migration gives the in-tree provisioners
var migratedDrivers = map[string]string{
	"kubernetes.io/aws-ebs":         "ebs.csi.aws.com",
	"kubernetes.io/gce-pd":          "pd.csi.storage.gke.io",
	"kubernetes.io/azure-disk":      "disk.csi.azure.com",
	"kubernetes.io/azure-file":      "file.csi.azure.com",
	"kubernetes.io/cinder":          "cinder.csi.openstack.org",
	"kubernetes.io/vsphere-volume":  "csi.vsphere.vmware.com",
	"kubernetes.io/portworx-volume": "pxd.portworx.com",
}

// provisionerOf is the driver of the claim's class ("provisioned.oracle" when it has none)
func (r *run) provisionerOf(c *corev1.PersistentVolumeClaim) string {
	cls := ptrDeref(c.Spec.StorageClassName)
	if a := c.Annotations["volume.beta.kubernetes.io/storage-class"]; a != "" {
		cls = a
	}
	obj, err := r.client.Tracker().Get(scGVR, "", cls)
	if err != nil {
		return "provisioned.oracle"
	}
	p := obj.(*storagev1.StorageClass).Provisioner
	if d, ok := migratedDrivers[p]; ok {
		return d
	}
	return p
}

// ephemeralClaims are the claims the ephemeral volume controller makes for the pods' generic
// ephemeral volumes, those the input does not have
func ephemeralClaims(c *objects.Cluster) []runtime.Object {
	have := map[string]bool{}
	for _, o := range c.Others {
		if pvc, ok := o.(*corev1.PersistentVolumeClaim); ok {
			have[pvc.Namespace+"/"+pvc.Name] = true
		}
	}
	var out []runtime.Object
	for _, p := range c.Pods {
		for _, v := range p.Spec.Volumes {
			if v.Ephemeral == nil || v.Ephemeral.VolumeClaimTemplate == nil {
				continue
			}
			name := p.Name + "-" + v.Name
			if have[p.Namespace+"/"+name] {
				continue
			}
			have[p.Namespace+"/"+name] = true
			t := v.Ephemeral.VolumeClaimTemplate
			out = append(out, &corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{
					Name: name, Namespace: p.Namespace,
					UID:    apitypes.UID("claim-" + string(p.UID) + "-" + v.Name),
					Labels: t.Labels, Annotations: t.Annotations,
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod",
						Name: p.Name, UID: p.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
				},
				Spec:   *t.Spec.DeepCopy(),
				Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
			})
		}
	}
	return out
}

// bindClaim marks the claim bound to the volume named pv
func (r *run) bindClaim(ns, name, pv string) error {
	obj, err := r.client.Tracker().Get(pvcGVR, ns, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	c := obj.(*corev1.PersistentVolumeClaim).DeepCopy()
	c.Spec.VolumeName = pv
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[annBindCompleted] = "yes"
	c.Status.Phase = corev1.ClaimBound
	return r.client.Tracker().Update(pvcGVR, c, ns, metav1.UpdateOptions{})
}

func (r *run) pvUpdateReactor(a clienttesting.Action) (bool, runtime.Object, error) {
	ua, ok := a.(clienttesting.UpdateAction)
	if !ok || ua.GetSubresource() != "" {
		return false, nil, nil
	}
	pv, ok := ua.GetObject().(*corev1.PersistentVolume)
	if !ok || pv.Spec.ClaimRef == nil {
		return false, nil, nil
	}
	pv = pv.DeepCopy()
	pv.Status.Phase = corev1.VolumeBound
	if err := r.client.Tracker().Update(pvGVR, pv, "", metav1.UpdateOptions{}); err != nil {
		return true, nil, err
	}
	if err := r.bindClaim(pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name, pv.Name); err != nil {
		return true, nil, err
	}
	return true, pv, nil
}

func (r *run) pvcUpdateReactor(a clienttesting.Action) (bool, runtime.Object, error) {
	ua, ok := a.(clienttesting.UpdateAction)
	if !ok || ua.GetSubresource() != "" {
		return false, nil, nil
	}
	c, ok := ua.GetObject().(*corev1.PersistentVolumeClaim)
	if !ok || c.Spec.VolumeName != "" || c.Annotations[annSelectedNode] == "" {
		return false, nil, nil
	}
	c = c.DeepCopy()
	if err := r.client.Tracker().Update(pvcGVR, c, c.Namespace, metav1.UpdateOptions{}); err != nil {
		return true, nil, err
	}
	size := c.Spec.Resources.Requests[corev1.ResourceStorage]
	if size.IsZero() {
		size = resource.MustParse("1")
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-" + string(c.UID)},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   c.Spec.AccessModes,
			StorageClassName:              ptrDeref(c.Spec.StorageClassName),
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: c.Namespace,
				Name: c.Name, UID: c.UID},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				CSI: &corev1.CSIPersistentVolumeSource{Driver: r.provisionerOf(c), VolumeHandle: string(c.UID)},
			},
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	}
	if err := r.client.Tracker().Add(pv); err != nil {
		return true, nil, err
	}
	if err := r.bindClaim(c.Namespace, c.Name, pv.Name); err != nil {
		return true, nil, err
	}
	return true, c, nil
}

func ptrDeref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
