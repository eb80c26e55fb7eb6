package gen

// The prefilter feature: pending pods that a PreFilter plugin rejects outright
// (UnschedulableAndUnresolvable) before DynamicResources' PreFilter runs. The framework stops
// at that plugin, so DynamicResources (inserted before DefaultPreemption) never writes its
// cycle state; in PostFilter, which runs in the profile's order, DynamicResources comes first,
// fails reading that state and ends the phase with its error: the FailedScheduling message
// ends in "not found" and nothing is preempted. Two members of the family:
//   - NodeAffinity: every required term pins metadata.name to sets whose intersection is empty
//     ("pod affinity terms conflict");
//   - VolumeRestrictions: a claim the pod mounts does not exist
//     (`persistentvolumeclaim "NAME" not found`).
// The feature draws from a random source of its own, seeded from the case and the pod, so
// turning it on or off leaves every other feature's choices as they were.

import (
	"hash/fnv"
	"math/rand"

	corev1 "k8s.io/api/core/v1"
)

func init() {
	register(&Feature{Name: "prefilter", Default: true,
		Doc: "pending pods a PreFilter rejects before DynamicResources' PreFilter: required node affinity whose every term pins metadata.name to disjoint sets (NodeAffinity), a claim that does not exist (VolumeRestrictions)",
		Pod: prefilterPod})
}

// namePin is a matchFields requirement metadata.name In [name].
func namePin(name string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{name}}
}

// disjointNames returns two different names, of the case's nodes when there are two.
func disjointNames(r *rand.Rand, c *Case) (string, string) {
	names := []string{"ghost", "phantom"}
	for _, n := range c.Nodes {
		names = append(names, n.Name)
	}
	a := r.Intn(len(names))
	b := (a + 1 + r.Intn(len(names)-1)) % len(names)
	return names[a], names[b]
}

func prefilterPod(g *G, p *corev1.Pod, bound bool) {
	if bound {
		return
	}
	h := fnv.New64a()
	h.Write([]byte("prefilter/" + p.Name))
	r := rand.New(rand.NewSource(g.Case.Seed ^ int64(h.Sum64())))
	if r.Float64() >= 0.08 {
		return
	}
	if r.Float64() < 0.3 {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "missing", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "no-such-claim"}}})
		return
	}
	na := affinity(p)
	req := na.RequiredDuringSchedulingIgnoredDuringExecution
	if req == nil || len(req.NodeSelectorTerms) == 0 || r.Float64() < 0.5 {
		// terms of their own: one or two, each pinned to two different names (some with
		// expressions besides, which PreFilter does not read)
		req = &corev1.NodeSelector{}
		for i := 0; i < 1+r.Intn(2); i++ {
			req.NodeSelectorTerms = append(req.NodeSelectorTerms, corev1.NodeSelectorTerm{})
		}
		na.RequiredDuringSchedulingIgnoredDuringExecution = req
	}
	// every term gets two pins with an empty intersection: the union over the terms is empty
	for i := range req.NodeSelectorTerms {
		t := &req.NodeSelectorTerms[i]
		a, b := disjointNames(r, g.Case)
		t.MatchFields = append(t.MatchFields, namePin(a), namePin(b))
		if len(t.MatchExpressions) == 0 && r.Float64() < 0.3 {
			t.MatchExpressions = []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/os", Operator: corev1.NodeSelectorOpIn, Values: []string{"linux"}}}
		}
	}
}
