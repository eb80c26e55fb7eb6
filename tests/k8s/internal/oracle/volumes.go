package oracle

// The PersistentVolume controller's part in VolumeBinding's PreBind: kube-scheduler writes
// its decisions (a volume's claimRef, a claim's selected-node annotation) and then waits
// until the claims are bound. Nothing else runs here to bind them, so these reactors do what
// the controller (and a provisioner) would do at once: a volume given a claimRef binds that
// claim; a claim given a selected node gets a new volume ("pvc-<uid>", its requested size,
// no node affinity) and binds to it.

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
)

const (
	annBindCompleted = "pv.kubernetes.io/bind-completed"
	annSelectedNode  = "volume.kubernetes.io/selected-node"
)

var (
	pvGVR  = corev1.SchemeGroupVersion.WithResource("persistentvolumes")
	pvcGVR = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
)

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
				CSI: &corev1.CSIPersistentVolumeSource{Driver: "provisioned.oracle", VolumeHandle: string(c.UID)},
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
