package gen

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
)

// PodTopologySpread and its inputs (zones, app labels, Services, ReplicaSets), and pod-level
// resources. The app labels come with spread, services and zones, so selectors meet pods.

func init() {
	register(&Feature{Name: "zones", Default: true, Doc: "most nodes in one of three zones (topology.kubernetes.io/zone), a few in none",
		Node: zonesNode})
	register(&Feature{Name: "spread", Default: true, Doc: "topologySpreadConstraints on pending pods: hostname, zone or another key; maxSkew 1-3; DoNotSchedule/ScheduleAnyway; matchLabels, matchExpressions and nil selectors; minDomains; nodeAffinityPolicy/nodeTaintsPolicy; matchLabelKeys; app labels on every pod",
		Pod: spreadPod})
	register(&Feature{Name: "services", Default: true, Doc: "Services selecting app labels and ReplicaSets (replicas 0) owning some pods: the system default spreading (hostname maxSkew 3, zone maxSkew 5)",
		Cluster: servicesCluster, Pod: servicesPod, Finish: servicesFinish})
	register(&Feature{Name: "podresources", Default: true, Doc: "pod-level spec.resources requests (cpu, memory) at or above the containers' sum, sometimes with limits",
		Pod: podresourcesPod})
}

var apps = []string{"web", "db", "cache"}

func zonesNode(g *G, n *corev1.Node) {
	if g.Chance(0.85) {
		n.Labels[keyZone] = Pick(g, g.Labels[keyZone])
	} else {
		delete(n.Labels, keyZone)
	}
}

func appLabels(g *G, p *corev1.Pod) {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	if g.Chance(0.85) {
		p.Labels["app"] = Pick(g, apps)
	}
	if g.Chance(0.3) {
		p.Labels["version"] = Pick(g, []string{"v1", "v2"})
	}
}

func spreadSelector(g *G) *metav1.LabelSelector {
	switch g.Intn(8) {
	case 0:
		return nil // matches nothing
	case 1:
		return &metav1.LabelSelector{} // matches everything (but counts nothing)
	case 2:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{Pick(g, apps), Pick(g, apps)}}}}
	case 3:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: Pick(g, []metav1.LabelSelectorOperator{metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist})}}}
	case 4:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{Pick(g, apps)}}}}
	default:
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": Pick(g, apps)}}
	}
}

func spreadPod(g *G, p *corev1.Pod, bound bool) {
	appLabels(g, p)
	if bound || !g.Chance(0.5) {
		return
	}
	keys := []string{"kubernetes.io/hostname", keyZone, keyZone, "disk"}
	n := 1 + g.Intn(2)
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		c := corev1.TopologySpreadConstraint{
			MaxSkew:           int32(1 + g.Intn(3)),
			TopologyKey:       Pick(g, keys),
			WhenUnsatisfiable: Pick(g, []corev1.UnsatisfiableConstraintAction{corev1.DoNotSchedule, corev1.ScheduleAnyway}),
			LabelSelector:     spreadSelector(g),
		}
		// the API rejects two constraints with the same key and action
		id := c.TopologyKey + "/" + string(c.WhenUnsatisfiable)
		if seen[id] {
			continue
		}
		seen[id] = true
		if c.WhenUnsatisfiable == corev1.DoNotSchedule && g.Chance(0.25) {
			m := int32(1 + g.Intn(5))
			c.MinDomains = &m
		}
		if g.Chance(0.25) {
			pol := Pick(g, []corev1.NodeInclusionPolicy{corev1.NodeInclusionPolicyHonor, corev1.NodeInclusionPolicyIgnore})
			c.NodeAffinityPolicy = &pol
		}
		if g.Chance(0.25) {
			pol := Pick(g, []corev1.NodeInclusionPolicy{corev1.NodeInclusionPolicyHonor, corev1.NodeInclusionPolicyIgnore})
			c.NodeTaintsPolicy = &pol
		}
		// (an empty selector is written as nothing at all, and the API refuses matchLabelKeys
		// without a labelSelector)
		if g.Chance(0.15) && c.LabelSelector != nil && (len(c.LabelSelector.MatchLabels) > 0 || len(c.LabelSelector.MatchExpressions) > 0) {
			c.MatchLabelKeys = []string{"version"}
		}
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, c)
	}
}

// ReplicaSets the pods may belong to (by ownerReferences); replicas 0, so gpusched's
// expansion of workloads adds no pods and only the selector counts
type replicaSet struct {
	name, app string
	uid       types.UID
}

var replicaSets = []replicaSet{{"web-rs", "web", "00000000-rs-web"}, {"db-rs", "db", "00000000-rs-db"}}

func servicesCluster(g *G) {}

func servicesPod(g *G, p *corev1.Pod, bound bool) {
	appLabels(g, p)
	if app, ok := p.Labels["app"]; ok && g.Chance(0.4) {
		for _, rs := range replicaSets {
			if rs.app == app {
				yes := true
				p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet",
					Name: rs.name, UID: rs.uid, Controller: &yes}}
			}
		}
	}
}

func servicesFinish(g *G) {
	ns := 1 + g.Intn(2)
	for i := 0; i < ns; i++ {
		sel := map[string]string{"app": Pick(g, apps)}
		if g.Chance(0.15) {
			sel["version"] = Pick(g, []string{"v1", "v2"})
		}
		if g.Chance(0.1) {
			sel = nil // selects nothing
		}
		g.Case.Others = append(g.Case.Others, &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc%d", i+1), Namespace: "default"},
			Spec:       corev1.ServiceSpec{Selector: sel, Ports: []corev1.ServicePort{{Port: 80}}},
		})
	}
	if g.Chance(0.7) {
		zero := int32(0)
		for _, rs := range replicaSets {
			g.Case.Others = append(g.Case.Others, &appsv1.ReplicaSet{
				TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
				ObjectMeta: metav1.ObjectMeta{Name: rs.name, Namespace: "default", UID: rs.uid},
				Spec: appsv1.ReplicaSetSpec{
					Replicas: &zero,
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": rs.app}},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": rs.app}},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "app"}}},
					},
				},
			})
		}
	}
}

func podresourcesPod(g *G, p *corev1.Pod, bound bool) {
	if !g.Chance(0.15) {
		return
	}
	// the containers' requests as the API server defaults them (a limit alone is a request)
	q := p.DeepCopy()
	for _, cs := range [][]corev1.Container{q.Spec.Containers, q.Spec.InitContainers} {
		for i := range cs {
			for k, v := range cs[i].Resources.Limits {
				if cs[i].Resources.Requests == nil {
					cs[i].Resources.Requests = corev1.ResourceList{}
				}
				if _, ok := cs[i].Resources.Requests[k]; !ok {
					cs[i].Resources.Requests[k] = v
				}
			}
		}
	}
	agg := resourcehelper.AggregateContainerRequests(q, resourcehelper.PodResourcesOptions{})
	req := corev1.ResourceList{}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if g.Chance(0.3) {
			continue
		}
		q := agg[name].DeepCopy()
		extra := map[corev1.ResourceName][]string{
			corev1.ResourceCPU:    {"0", "100m", "500m", "1", "3"},
			corev1.ResourceMemory: {"0", "64Mi", "512Mi", "1Gi", "6Gi"},
		}[name]
		q.Add(resource.MustParse(Pick(g, extra)))
		req[name] = q
	}
	if len(req) == 0 {
		return
	}
	rr := &corev1.ResourceRequirements{Requests: req}
	if g.Chance(0.3) {
		rr.Limits = corev1.ResourceList{}
		for k, v := range req {
			l := v.DeepCopy()
			l.Add(l)
			rr.Limits[k] = l
		}
	}
	// container limits may not exceed the pod's
	for i := range p.Spec.Containers {
		for k, v := range p.Spec.Containers[i].Resources.Limits {
			if pl, ok := rr.Limits[k]; ok && v.Cmp(pl) > 0 {
				delete(rr.Limits, k)
			}
		}
	}
	p.Spec.Resources = rr
}
