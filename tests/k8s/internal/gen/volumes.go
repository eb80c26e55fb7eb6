package gen

import (
	"fmt"
	"math/rand"
	"sort"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// Volume limits and storage capacity (NodeVolumeLimits, VolumeBinding's CSIStorageCapacity
// check): CSINodes with attach limits for two CSI drivers, bound claims of those drivers
// shared by pods (a volume is counted once per node), generic ephemeral volumes of a
// WaitForFirstConsumer class, VolumeAttachments, a CSIDriver with storage capacity tracking
// and CSIStorageCapacity objects (one per node at most, so the capacity VolumeBinding scores
// with does not depend on the order kube-scheduler's lister returns them; maximumVolumeSize
// only with a capacity), and a driver that prevents scheduling where it is missing.

func init() {
	register(&Feature{Name: "volumelimits", Default: true,
		Doc:     "CSINodes with attach limits for csi-a/csi-b, bound claims of those drivers shared by pods, generic ephemeral volumes of a WaitForFirstConsumer class, VolumeAttachments, CSIDriver storageCapacity with CSIStorageCapacity per node (capacity, maximumVolumeSize), preventPodSchedulingIfMissing",
		Cluster: volumesCluster, Node: volumesNode, Pod: volumesPod, Finish: volumesFinish})
}

const (
	drvA = "csi-a.gen.example"
	drvB = "csi-b.gen.example"
)

type volumesState struct {
	// its own random stream, so that switching the feature on leaves the other features'
	// draws (and the cases of a seed without volumes) as they were
	r         *rand.Rand
	claims    map[string]string // ns/name -> driver of its bound volume
	order     []string
	capacity  bool // drvA tracks capacity
	preventB  bool // drvB prevents scheduling where it is missing
	ephemeral int
}

func vs(g *G) *volumesState {
	if g.vol == nil {
		g.vol = &volumesState{claims: map[string]string{},
			r: rand.New(rand.NewSource(g.Case.Seed*7919 + 104729))}
	}
	return g.vol
}

func (s *volumesState) chance(p float64) bool { return s.r.Float64() < p }
func (s *volumesState) intn(n int) int        { return s.r.Intn(n) }
func vpick[T any](s *volumesState, xs []T) T  { return xs[s.r.Intn(len(xs))] }

func volumesCluster(g *G) {
	s := vs(g)
	s.capacity = vs(g).chance(0.6)
	s.preventB = vs(g).chance(0.3)
	for _, c := range []struct {
		name, prov string
		wffc       bool
	}{{"gen-wffc", drvA, true}, {"gen-csi-b", drvB, false}} {
		mode := storagev1.VolumeBindingImmediate
		if c.wffc {
			mode = storagev1.VolumeBindingWaitForFirstConsumer
		}
		g.Case.Others = append(g.Case.Others, runtime.Object(&storagev1.StorageClass{
			TypeMeta:          metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass"},
			ObjectMeta:        metav1.ObjectMeta{Name: c.name},
			Provisioner:       c.prov,
			VolumeBindingMode: &mode,
		}))
	}
}

func volumesNode(g *G, n *corev1.Node) {
	if !vs(g).chance(0.7) {
		return
	}
	cn := &storagev1.CSINode{
		TypeMeta:   metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSINode"},
		ObjectMeta: metav1.ObjectMeta{Name: n.Name},
	}
	for _, d := range []string{drvA, drvB} {
		if !vs(g).chance(0.7) {
			continue
		}
		nd := storagev1.CSINodeDriver{Name: d, NodeID: n.Name + "-" + d}
		if vs(g).chance(0.8) {
			nd.Allocatable = &storagev1.VolumeNodeResources{Count: ptr.To(int32(vs(g).intn(4)))}
		}
		cn.Spec.Drivers = append(cn.Spec.Drivers, nd)
	}
	g.Case.Others = append(g.Case.Others, cn)
}

func volumesPod(g *G, p *corev1.Pod, bound bool) {
	s := vs(g)
	if !vs(g).chance(0.35) {
		return
	}
	ns := p.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	for i, n := 0, 1+vs(g).intn(2); i < n; i++ {
		name := fmt.Sprintf("v%d", len(p.Spec.Volumes))
		if vs(g).chance(0.25) {
			// a generic ephemeral volume: its claim is made for the pod
			s.ephemeral++
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
				Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						StorageClassName: ptr.To("gen-wffc"),
						Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceStorage: resource.MustParse(vpick(vs(g), []string{"1Gi", "2Gi", "5Gi"}))}},
					}}}}})
			continue
		}
		// a bound claim from a small pool per namespace, so pods share volumes
		claim := fmt.Sprintf("data-%d", vs(g).intn(4))
		key := ns + "/" + claim
		if _, ok := s.claims[key]; !ok {
			s.claims[key] = vpick(vs(g), []string{drvA, drvA, drvB})
			s.order = append(s.order, key)
		}
		dup := false
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
				dup = true
			}
		}
		if !dup {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
		}
	}
}

func volumesFinish(g *G) {
	s := vs(g)
	sort.Strings(s.order)
	for i, key := range s.order {
		var ns, name string
		for j := range key {
			if key[j] == '/' {
				ns, name = key[:j], key[j+1:]
				break
			}
		}
		drv := s.claims[key]
		cls := "gen-wffc"
		if drv == drvB {
			cls = "gen-csi-b"
		}
		pv := fmt.Sprintf("pv-gen-%d", i)
		size := resource.MustParse("10Gi")
		g.Case.Others = append(g.Case.Others,
			&corev1.PersistentVolume{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
				ObjectMeta: metav1.ObjectMeta{Name: pv},
				Spec: corev1.PersistentVolumeSpec{
					Capacity:         corev1.ResourceList{corev1.ResourceStorage: size},
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: cls,
					PersistentVolumeSource: corev1.PersistentVolumeSource{
						CSI: &corev1.CSIPersistentVolumeSource{Driver: drv, VolumeHandle: "h-" + pv}},
					ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: ns, Name: name},
				},
				Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
			},
			&corev1.PersistentVolumeClaim{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
					Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "yes"}},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: ptr.To(cls),
					VolumeName:       pv,
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceStorage: size}},
				},
				Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
			})
		// some volumes are attached to a node no pod of theirs runs on
		if len(g.Case.Nodes) > 0 && vs(g).chance(0.3) {
			n := vpick(vs(g), g.Case.Nodes)
			g.Case.Others = append(g.Case.Others, &storagev1.VolumeAttachment{
				TypeMeta:   metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "VolumeAttachment"},
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("va-%d", i)},
				Spec: storagev1.VolumeAttachmentSpec{Attacher: drv, NodeName: n.Name,
					Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To(pv)}},
			})
		}
	}
	if s.capacity {
		g.Case.Others = append(g.Case.Others, &storagev1.CSIDriver{
			TypeMeta:   metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIDriver"},
			ObjectMeta: metav1.ObjectMeta{Name: drvA},
			Spec:       storagev1.CSIDriverSpec{StorageCapacity: ptr.To(true)},
		})
		for _, n := range g.Case.Nodes {
			if !vs(g).chance(0.7) {
				continue
			}
			c := &storagev1.CSIStorageCapacity{
				TypeMeta:         metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIStorageCapacity"},
				ObjectMeta:       metav1.ObjectMeta{Name: "cap-" + n.Name, Namespace: "kube-system"},
				StorageClassName: "gen-wffc",
				NodeTopology: &metav1.LabelSelector{MatchLabels: map[string]string{
					"kubernetes.io/hostname": n.Name}},
			}
			if vs(g).chance(0.9) {
				c.Capacity = ptr.To(resource.MustParse(vpick(vs(g), []string{"1Gi", "3Gi", "8Gi", "20Gi"})))
			}
			// (kube-scheduler v1.37.2's Score dereferences capacity when maximumVolumeSize
			// alone let the claim in: a nil pointer panic, so never without capacity)
			if c.Capacity != nil && vs(g).chance(0.3) {
				c.MaximumVolumeSize = ptr.To(resource.MustParse(vpick(vs(g), []string{"1Gi", "2Gi", "6Gi"})))
			}
			g.Case.Others = append(g.Case.Others, c)
		}
	}
	if s.preventB {
		g.Case.Others = append(g.Case.Others, &storagev1.CSIDriver{
			TypeMeta:   metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIDriver"},
			ObjectMeta: metav1.ObjectMeta{Name: drvB},
			Spec:       storagev1.CSIDriverSpec{PreventPodSchedulingIfMissing: ptr.To(true)},
		})
	}
}
