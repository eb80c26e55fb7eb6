package gen

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Inter-pod affinity and image locality: pods with labels from a small pool in a few
// namespaces, required and preferred affinity and anti-affinity terms over hostname, zone and
// other node labels (namespaces, namespaceSelector, matchLabelKeys, mismatchLabelKeys), and
// node status.images for the pods' container images.

func init() {
	register(&Feature{Name: "interpod", Default: true,
		Doc:     "pod labels from a pool in three namespaces (two Namespace objects with labels); required and preferred podAffinity/podAntiAffinity on hostname, zone or another label, with namespaces, namespaceSelector, matchLabelKeys and mismatchLabelKeys",
		Cluster: interpodCluster, Pod: interpodPod})
	register(&Feature{Name: "images", Default: true,
		Doc:  "node status.images (names with and without tags, sizes 0-3 GB) and container images from the same pool",
		Node: imagesNode, Pod: imagesPod})
}

var podLabelPool = map[string][]string{
	"app":  {"web", "db", "cache"},
	"tier": {"front", "back"},
	"rel":  {"r1", "r2"},
}

func interpodCluster(g *G) {
	for _, ns := range []struct {
		name   string
		labels map[string]string
	}{{"team-a", map[string]string{"team": "a", "env": "prod"}}, {"team-b", map[string]string{"team": "b"}}} {
		g.Case.Others = append(g.Case.Others, runtime.Object(&corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: ns.name, Labels: ns.labels},
		}))
	}
}

func podSelector(g *G) *metav1.LabelSelector {
	switch g.Intn(8) {
	case 0:
		return nil // matches no pod
	case 1:
		return &metav1.LabelSelector{} // every pod
	case 2:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: "app", Operator: Pick(g, []metav1.LabelSelectorOperator{metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn}),
			Values: []string{Pick(g, podLabelPool["app"]), Pick(g, podLabelPool["app"])}}}}
	case 3:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: Pick(g, []string{"tier", "rel", "missing"}), Operator: Pick(g, []metav1.LabelSelectorOperator{metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist})}}}
	default:
		s := &metav1.LabelSelector{MatchLabels: map[string]string{"app": Pick(g, podLabelPool["app"])}}
		if g.Chance(0.3) {
			s.MatchLabels["tier"] = Pick(g, podLabelPool["tier"])
		}
		return s
	}
}

func podTerm(g *G, p *corev1.Pod) corev1.PodAffinityTerm {
	t := corev1.PodAffinityTerm{
		LabelSelector: podSelector(g),
		TopologyKey:   Pick(g, []string{"kubernetes.io/hostname", "kubernetes.io/hostname", keyZone, keyZone, "disk", "tier"}),
	}
	switch g.Intn(6) {
	case 0:
		t.Namespaces = []string{Pick(g, []string{"default", "team-a", "team-b", "nowhere"})}
	case 1:
		t.NamespaceSelector = &metav1.LabelSelector{}
	case 2:
		t.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": Pick(g, []string{"a", "b"})}}
	case 3:
		t.Namespaces = []string{"team-b"}
		t.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	}
	if t.LabelSelector != nil && len(t.LabelSelector.MatchLabels)+len(t.LabelSelector.MatchExpressions) > 0 && g.Chance(0.2) {
		// matchLabelKeys may not repeat a key of the selector (validation)
		used := map[string]bool{}
		for k := range t.LabelSelector.MatchLabels {
			used[k] = true
		}
		for _, e := range t.LabelSelector.MatchExpressions {
			used[e.Key] = true
		}
		k := Pick(g, []string{"rel", "tier", "app"})
		if g.Chance(0.5) {
			if !used[k] {
				t.MatchLabelKeys = []string{k}
			}
		} else {
			t.MismatchLabelKeys = []string{k}
		}
	}
	return t
}

func interpodPod(g *G, p *corev1.Pod, bound bool) {
	if g.Chance(0.3) {
		p.Namespace = Pick(g, []string{"team-a", "team-b"})
	}
	if g.Chance(0.85) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		for _, k := range []string{"app", "rel", "tier"} { // map order is random: a fixed one
			if k == "app" || g.Chance(0.5) {
				p.Labels[k] = Pick(g, podLabelPool[k])
			}
		}
	}
	if !g.Chance(0.6) {
		return
	}
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	a := p.Spec.Affinity
	if g.Chance(0.4) {
		a.PodAffinity = &corev1.PodAffinity{}
		for i := g.Intn(2) + 1; i > 0 && g.Chance(0.7); i-- {
			a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, podTerm(g, p))
		}
		for i := g.Intn(3); i > 0; i-- {
			a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
				corev1.WeightedPodAffinityTerm{Weight: int32(1 + g.Intn(100)), PodAffinityTerm: podTerm(g, p)})
		}
	}
	if g.Chance(0.6) {
		a.PodAntiAffinity = &corev1.PodAntiAffinity{}
		for i := g.Intn(2) + 1; i > 0 && g.Chance(0.7); i-- {
			a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, podTerm(g, p))
		}
		for i := g.Intn(3); i > 0; i-- {
			a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
				corev1.WeightedPodAffinityTerm{Weight: int32(1 + g.Intn(100)), PodAffinityTerm: podTerm(g, p)})
		}
	}
}

// ---- images

var imagePool = []struct {
	names []string
	size  int64
}{
	{[]string{"app:latest", "registry.example.com/app@sha256:1111"}, 60 << 20},
	{[]string{"db:14"}, 400 << 20},
	{[]string{"registry.example.com:5000/cache", "registry.example.com:5000/cache:latest"}, 900 << 20},
	{[]string{"big:v1"}, 3 << 30},
	{[]string{"tiny:1"}, 5 << 20},
}

func imagesNode(g *G, n *corev1.Node) {
	for _, im := range imagePool {
		if g.Chance(0.4) {
			n.Status.Images = append(n.Status.Images, corev1.ContainerImage{Names: im.names, SizeBytes: im.size})
		}
	}
}

func imagesPod(g *G, p *corev1.Pod, bound bool) {
	pool := []string{"app", "app:latest", "db:14", "db", "registry.example.com:5000/cache", "big:v1", "tiny:1", "other"}
	for i := range p.Spec.Containers {
		p.Spec.Containers[i].Image = Pick(g, pool)
	}
	for i := range p.Spec.InitContainers {
		p.Spec.InitContainers[i].Image = Pick(g, pool)
	}
}
