package gen

// The resize feature: bound pods resized in place (InPlacePodVerticalScaling). Their status
// says what the kubelet admitted (allocatedResources) and what runs (resources.requests), each
// the spec's cpu and memory or a different size; kube-scheduler counts the larger of the spec
// and the status, per resource, over the sums (resourcehelper.PodRequests with
// UseStatusResources). The feature draws from a random source of its own, seeded from the case
// and the pod, so turning it on or off leaves every other feature's choices as they were.

import (
	"hash/fnv"
	"math/rand"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

func init() {
	register(&Feature{Name: "resize", Default: true,
		Doc: "bound pods resized in place: containerStatuses and initContainerStatuses with allocatedResources and resources.requests smaller or larger than the spec (or missing), PodResizePending Infeasible or Deferred, the pod-level status.allocatedResources and status.resources",
		Pod: resizePod})
}

// resized returns a copy of l with cpu and memory (the resources a resize may change) times
// f/2, or l itself when f is 2.
func resized(l corev1.ResourceList, f int64) corev1.ResourceList {
	if l == nil || f == 2 {
		return l.DeepCopy()
	}
	out := l.DeepCopy()
	if q, ok := l[corev1.ResourceCPU]; ok {
		out[corev1.ResourceCPU] = *resource.NewMilliQuantity(q.MilliValue()*f/2, resource.DecimalSI)
	}
	if q, ok := l[corev1.ResourceMemory]; ok {
		out[corev1.ResourceMemory] = *resource.NewQuantity(q.Value()*f/2, resource.BinarySI)
	}
	return out
}

// containerStatus is what a kubelet may report of c during or after a resize: the admitted
// and the running size, each the spec's or another (half, 1.5 times, twice the spec).
func containerStatus(r *rand.Rand, c *corev1.Container) corev1.ContainerStatus {
	factors := []int64{1, 2, 2, 3, 4}
	cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image}
	if len(c.Resources.Requests) == 0 {
		return cs // the kubelet reports no requests the spec does not make
	}
	cs.AllocatedResources = resized(c.Resources.Requests, factors[r.Intn(len(factors))])
	if r.Float64() < 0.2 {
		cs.AllocatedResources = nil
	}
	if r.Float64() < 0.8 {
		cs.Resources = &corev1.ResourceRequirements{
			Requests: resized(c.Resources.Requests, factors[r.Intn(len(factors))])}
	}
	return cs
}

func resizePod(g *G, p *corev1.Pod, bound bool) {
	if !bound {
		return
	}
	h := fnv.New64a()
	h.Write([]byte(p.Name))
	r := rand.New(rand.NewSource(g.Case.Seed ^ int64(h.Sum64())))
	if r.Float64() >= 0.35 {
		return
	}
	p.Status.Phase = corev1.PodRunning
	for i := range p.Spec.Containers {
		if r.Float64() < 0.85 {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, containerStatus(r, &p.Spec.Containers[i]))
		}
	}
	for i := range p.Spec.InitContainers {
		if r.Float64() < 0.7 {
			p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, containerStatus(r, &p.Spec.InitContainers[i]))
		}
	}
	switch x := r.Float64(); {
	case x < 0.15:
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
			Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible})
	case x < 0.25:
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
			Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonDeferred})
	}
	if r.Float64() < 0.2 {
		// the pod-level lists (InPlacePodLevelResourcesVerticalScaling): the pod's whole
		// requests, as the kubelet computes them, at the admitted and the running size
		all := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
		p.Status.AllocatedResources = resized(all, []int64{2, 3, 4}[r.Intn(3)])
		p.Status.Resources = &corev1.ResourceRequirements{Requests: resized(all, []int64{1, 2, 3}[r.Intn(3)])}
	}
}
