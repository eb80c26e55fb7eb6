package gen

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The features gpusched models today (docs/scheduling.md), on by default. The next ones
// (interpod, spread, volumes, pdb, images, podresources) register in their own files, off.

func init() {
	register(&Feature{Name: "base", Doc: "nodes with hostname, os and a random subset of the label pool; allocatable cpu, memory, pods (and ephemeral-storage); one container per pod",
		Cluster: baseCluster, Node: baseNode, Pod: basePod})
	register(&Feature{Name: "resources", Default: true,
		Doc:     "requests and limits in every form (requests, limits only, both, zero, none; m/k/Mi/Gi/decimal/exponent quantities), ephemeral-storage, extended resources (nvidia.com/gpu, example.com/foo), hugepages, several containers, init containers, sidecars (restartPolicy Always), overhead through a RuntimeClass",
		Cluster: resourcesCluster, Node: resourcesNode, Pod: resourcesPod})
	register(&Feature{Name: "runtimeclass", Default: true, Doc: "pods naming a RuntimeClass without spec.overhead: the RuntimeClass admission gives them the class's overhead (needs resources)", Pod: runtimeclassPod})
	register(&Feature{Name: "selectors", Default: true, Doc: "nodeSelector of one or two pairs from the label pool (or values no node has)", Pod: selectorsPod})
	register(&Feature{Name: "affinity", Default: true, Doc: "required node affinity: 1-3 terms of In, NotIn, Exists, DoesNotExist, Gt, Lt (integers, non-integers, leading zeros) and matchFields metadata.name In/NotIn; empty terms", Pod: affinityPod})
	register(&Feature{Name: "preferred", Default: true, Doc: "preferred node affinity terms with weights 1-100, expressions and matchFields", Pod: preferredPod})
	register(&Feature{Name: "taints", Default: true, Doc: "node taints of every effect from a pool; tolerations Equal/Exists/empty operator, empty key, empty effect, wrong values, tolerationSeconds", Cluster: taintsCluster, Node: taintsNode, Pod: taintsPod})
	register(&Feature{Name: "ports", Default: true, Doc: "host ports: TCP/UDP/SCTP, hostIP empty/0.0.0.0/127.0.0.1/10.0.0.1, hostNetwork, ports on sidecars", Cluster: portsCluster, Pod: portsPod})
	register(&Feature{Name: "priority", Default: true, Doc: "PriorityClasses (one with preemptionPolicy Never, sometimes a globalDefault), system classes, pods without a class; bound pods of lower priority, so preemption happens", Cluster: priorityCluster, Pod: priorityPod})
	register(&Feature{Name: "gates", Default: true, Doc: "schedulingGates on a few pending pods", Pod: gatesPod})
	register(&Feature{Name: "cordon", Default: true, Doc: "cordoned nodes (spec.unschedulable) and pods tolerating node.kubernetes.io/unschedulable", Node: cordonNode, Pod: cordonPod})
	register(&Feature{Name: "podslimit", Default: true, Doc: "nodes whose allocatable pods is 1-3", Node: podslimitNode})
}

const (
	keyZone    = "topology.kubernetes.io/zone"
	keyGPUName = "aliyun.accelerator/nvidia_name"
	keyGPU     = corev1.ResourceName("nvidia.com/gpu")
	keyFoo     = corev1.ResourceName("example.com/foo")
)

func baseCluster(g *G) {
	g.Labels = map[string][]string{
		"disk":                  {"ssd", "hdd", "nvme"},
		keyZone:                 {"zone-a", "zone-b", "zone-c"},
		"tier":                  {"gold", "silver"},
		"cores":                 {"4", "8", "16", "32", "007", "abc", "1e3"},
		"example.com/flag":      {""},
		"node.example.com/pool": {"a", "b"},
		keyGPUName:              {"Tesla-M40", "Tesla-T4", "NVIDIA-A100-SXM4-40GB"},
	}
	g.NumericKey = "cores"
	for k := range g.Labels {
		g.LabelKeys = append(g.LabelKeys, k)
	}
}

func baseNode(g *G, n *corev1.Node) {
	n.Labels["kubernetes.io/hostname"] = n.Name
	n.Labels["kubernetes.io/os"] = "linux"
	for _, k := range []string{"disk", keyZone, "tier", "cores", "example.com/flag", "node.example.com/pool"} {
		if g.Chance(0.5) {
			n.Labels[k] = Pick(g, g.Labels[k])
		}
	}
	cpu := Pick(g, []string{"1", "2", "2", "4", "4", "8", "1500m", "3"})
	mem := Pick(g, []string{"1Gi", "2Gi", "4Gi", "4Gi", "8Gi", "3000Mi", "6G"})
	set(n.Status.Allocatable, corev1.ResourceCPU, cpu)
	set(n.Status.Allocatable, corev1.ResourceMemory, mem)
	set(n.Status.Allocatable, corev1.ResourcePods, "110")
	if g.Chance(0.5) {
		set(n.Status.Allocatable, corev1.ResourceEphemeralStorage, Pick(g, []string{"10Gi", "20Gi", "5G"}))
	}
	// capacity at least allocatable, sometimes more: only allocatable counts
	// in key order: which resource gets the larger capacity must not depend on map order
	keys := make([]string, 0, len(n.Status.Allocatable))
	for k := range n.Status.Allocatable {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	for _, ks := range keys {
		k := corev1.ResourceName(ks)
		v := n.Status.Allocatable[k]
		c := v.DeepCopy()
		if g.Chance(0.3) && k != corev1.ResourcePods {
			c.Add(v)
		}
		n.Status.Capacity[k] = c
	}
}

func set(l corev1.ResourceList, k corev1.ResourceName, q string) {
	l[k] = resource.MustParse(q)
}

func basePod(g *G, p *corev1.Pod, bound bool) {
	p.Spec.Containers = []corev1.Container{{Name: "c", Image: "app"}}
}

// ---- resources

var (
	cpuForms = []string{"100m", "0.1", "250m", "500m", "0.5", "1", "1000m", "1.5", "2", "0", "1m", "2500m"}
	memForms = []string{"128Mi", "134217728", "128M", "256Mi", "512Mi", "0.5Gi", "1Gi", "1e9", "2Gi", "0", "100Ki", "1G"}
	ephForms = []string{"1Gi", "5Gi", "500Mi", "2G"}
)

func resourcesCluster(g *G) {
	g.Extended = []string{string(keyGPU), string(keyFoo)}
	pol := nodev1.RuntimeClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: "node.k8s.io/v1", Kind: "RuntimeClass"},
		ObjectMeta: metav1.ObjectMeta{Name: "kata"},
		Handler:    "kata",
		Overhead:   &nodev1.Overhead{PodFixed: corev1.ResourceList{}},
	}
	set(pol.Overhead.PodFixed, corev1.ResourceCPU, "250m")
	set(pol.Overhead.PodFixed, corev1.ResourceMemory, "120Mi")
	g.Case.RuntimeClasses = append(g.Case.RuntimeClasses, &pol)
	g.Runtimes = []string{"kata"}
}

func resourcesNode(g *G, n *corev1.Node) {
	if g.Chance(0.4) {
		set(n.Status.Allocatable, keyGPU, Pick(g, []string{"1", "2", "4", "8"}))
		n.Status.Capacity[keyGPU] = n.Status.Allocatable[keyGPU]
		n.Labels[keyGPUName] = Pick(g, g.Labels[keyGPUName])
	}
	if g.Chance(0.2) {
		set(n.Status.Allocatable, keyFoo, Pick(g, []string{"1", "3", "0"}))
		n.Status.Capacity[keyFoo] = n.Status.Allocatable[keyFoo]
	}
	if g.Chance(0.1) {
		set(n.Status.Allocatable, "hugepages-2Mi", "64Mi")
		n.Status.Capacity["hugepages-2Mi"] = n.Status.Allocatable["hugepages-2Mi"]
	}
}

// containerResources draws one container's requests and limits.
func containerResources(g *G, allowExtended bool) corev1.ResourceRequirements {
	var rr corev1.ResourceRequirements
	req, lim := corev1.ResourceList{}, corev1.ResourceList{}
	switch g.Intn(6) {
	case 0: // none: best effort
	case 1: // requests only
		if g.Chance(0.8) {
			set(req, corev1.ResourceCPU, Pick(g, cpuForms))
		}
		if g.Chance(0.7) {
			set(req, corev1.ResourceMemory, Pick(g, memForms))
		}
	case 2: // limits only: requests default to them
		if g.Chance(0.8) {
			set(lim, corev1.ResourceCPU, Pick(g, cpuForms))
		}
		if g.Chance(0.7) {
			set(lim, corev1.ResourceMemory, Pick(g, memForms))
		}
	default: // requests and larger limits
		c := resource.MustParse(Pick(g, cpuForms))
		req[corev1.ResourceCPU] = c
		l := c.DeepCopy()
		l.Add(resource.MustParse(Pick(g, []string{"0", "100m", "1"})))
		lim[corev1.ResourceCPU] = l
		if g.Chance(0.7) {
			m := resource.MustParse(Pick(g, memForms))
			req[corev1.ResourceMemory] = m
			if g.Chance(0.5) {
				lm := m.DeepCopy()
				lm.Add(resource.MustParse("64Mi"))
				lim[corev1.ResourceMemory] = lm
			}
		}
	}
	if g.Chance(0.15) {
		set(req, corev1.ResourceEphemeralStorage, Pick(g, ephForms))
	}
	if allowExtended {
		if g.Chance(0.25) {
			// extended resources cannot be overcommitted: limits only, or requests == limits
			q := resource.MustParse(Pick(g, []string{"1", "1", "2", "4"}))
			lim[keyGPU] = q
			if g.Chance(0.4) {
				req[keyGPU] = q.DeepCopy()
			}
		}
		if g.Chance(0.1) {
			q := resource.MustParse(Pick(g, []string{"1", "2"}))
			lim[keyFoo] = q
			req[keyFoo] = q.DeepCopy()
		}
		if g.Chance(0.05) {
			q := resource.MustParse(Pick(g, []string{"2Mi", "32Mi", "128Mi"}))
			lim["hugepages-2Mi"] = q
			req["hugepages-2Mi"] = q.DeepCopy()
			if _, ok := req[corev1.ResourceMemory]; !ok {
				set(req, corev1.ResourceMemory, "64Mi")
			}
			if _, ok := lim[corev1.ResourceMemory]; !ok {
				lim[corev1.ResourceMemory] = req[corev1.ResourceMemory].DeepCopy()
			}
			if lim.Memory().Cmp(*req.Memory()) < 0 {
				lim[corev1.ResourceMemory] = req[corev1.ResourceMemory].DeepCopy()
			}
		}
	}
	if len(req) > 0 {
		rr.Requests = req
	}
	if len(lim) > 0 {
		rr.Limits = lim
	}
	return rr
}

func resourcesPod(g *G, p *corev1.Pod, bound bool) {
	n := 1
	if g.Chance(0.25) {
		n = 2 + g.Intn(2)
	}
	p.Spec.Containers = nil
	for i := 0; i < n; i++ {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{
			Name: fmt.Sprintf("c%d", i), Image: "app", Resources: containerResources(g, true)})
	}
	if g.Chance(0.25) {
		always := corev1.ContainerRestartPolicyAlways
		k := 1 + g.Intn(3)
		for i := 0; i < k; i++ {
			c := corev1.Container{Name: fmt.Sprintf("init%d", i), Image: "init", Resources: containerResources(g, false)}
			if g.Chance(0.4) {
				c.RestartPolicy = &always // a sidecar
				c.Name = fmt.Sprintf("side%d", i)
			}
			p.Spec.InitContainers = append(p.Spec.InitContainers, c)
		}
	}
	if len(g.Runtimes) > 0 && g.Chance(0.06) {
		// spec.overhead as the RuntimeClass admission leaves it
		rc := g.Runtimes[0]
		p.Spec.RuntimeClassName = &rc
		p.Spec.Overhead = g.Case.RuntimeClasses[0].Overhead.PodFixed.DeepCopy()
	}
}

func runtimeclassPod(g *G, p *corev1.Pod, bound bool) {
	if len(g.Runtimes) > 0 && p.Spec.RuntimeClassName == nil && g.Chance(0.04) {
		// as users write it: the API server's RuntimeClass admission adds the overhead
		rc := g.Runtimes[0]
		p.Spec.RuntimeClassName = &rc
	}
}

// ---- selectors and affinity

func labelValue(g *G, key string) string {
	if g.Chance(0.1) || len(g.Labels[key]) == 0 {
		return "none"
	}
	return Pick(g, g.Labels[key])
}

func selectorsPod(g *G, p *corev1.Pod, bound bool) {
	if !g.Chance(0.3) {
		return
	}
	p.Spec.NodeSelector = map[string]string{}
	for i := 0; i < 1+g.Intn(2); i++ {
		k := Pick(g, g.LabelKeys)
		p.Spec.NodeSelector[k] = labelValue(g, k)
	}
}

func requirement(g *G) corev1.NodeSelectorRequirement {
	key := Pick(g, g.LabelKeys)
	if g.Chance(0.05) {
		key = "missing.example.com/key"
	}
	ops := []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn,
		corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt}
	op := Pick(g, ops)
	r := corev1.NodeSelectorRequirement{Key: key, Operator: op}
	switch op {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		for i := 0; i < 1+g.Intn(3); i++ {
			r.Values = append(r.Values, labelValue(g, key))
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if g.Chance(0.7) {
			r.Key = g.NumericKey
		}
		r.Values = []string{Pick(g, []string{"4", "8", "10", "16", "007", "abc", "0", "100"})}
	}
	return r
}

func fieldRequirement(g *G) corev1.NodeSelectorRequirement {
	op := Pick(g, []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn})
	name := "ghost"
	if len(g.Case.Nodes) > 0 && g.Chance(0.9) {
		name = Pick(g, g.Case.Nodes).Name
	}
	return corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: op, Values: []string{name}}
}

func term(g *G) corev1.NodeSelectorTerm {
	var t corev1.NodeSelectorTerm
	if g.Chance(0.03) {
		return t // empty: matches nothing
	}
	for i := 0; i < 1+g.Intn(2); i++ {
		t.MatchExpressions = append(t.MatchExpressions, requirement(g))
	}
	if g.Chance(0.15) {
		t.MatchFields = []corev1.NodeSelectorRequirement{fieldRequirement(g)}
		if g.Chance(0.4) {
			t.MatchExpressions = nil
		}
	}
	return t
}

func affinity(p *corev1.Pod) *corev1.NodeAffinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	if p.Spec.Affinity.NodeAffinity == nil {
		p.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	return p.Spec.Affinity.NodeAffinity
}

func affinityPod(g *G, p *corev1.Pod, bound bool) {
	if !g.Chance(0.3) {
		return
	}
	ns := &corev1.NodeSelector{}
	for i := 0; i < 1+g.Intn(3); i++ {
		ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, term(g))
	}
	affinity(p).RequiredDuringSchedulingIgnoredDuringExecution = ns
}

func preferredPod(g *G, p *corev1.Pod, bound bool) {
	if !g.Chance(0.3) {
		return
	}
	a := affinity(p)
	for i := 0; i < 1+g.Intn(3); i++ {
		t := term(g)
		if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
			t.MatchExpressions = []corev1.NodeSelectorRequirement{requirement(g)}
		}
		w := int32(Pick(g, []int{1, 5, 10, 50, 100, 1 + g.Intn(100)}))
		a.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PreferredDuringSchedulingIgnoredDuringExecution,
			corev1.PreferredSchedulingTerm{Weight: w, Preference: t})
	}
}

// ---- taints and tolerations

func taintsCluster(g *G) {
	g.Taints = []corev1.Taint{
		{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule},
		{Key: "spot", Value: "true", Effect: corev1.TaintEffectPreferNoSchedule},
		{Key: "maintenance", Effect: corev1.TaintEffectNoExecute},
		{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule},
		{Key: string(keyGPU), Value: "present", Effect: corev1.TaintEffectNoSchedule},
		{Key: "example.com/soft", Value: "y", Effect: corev1.TaintEffectPreferNoSchedule},
		{Key: "example.com/soft", Value: "y", Effect: corev1.TaintEffectNoExecute},
	}
}

func taintsNode(g *G, n *corev1.Node) {
	if !g.Chance(0.45) {
		return
	}
	seen := map[string]bool{}
	for i := 0; i < 1+g.Intn(3); i++ {
		t := Pick(g, g.Taints)
		k := t.Key + ":" + string(t.Effect)
		if seen[k] {
			continue
		}
		seen[k] = true
		n.Spec.Taints = append(n.Spec.Taints, t)
	}
}

func taintsPod(g *G, p *corev1.Pod, bound bool) {
	if !g.Chance(0.45) {
		return
	}
	for i := 0; i < 1+g.Intn(3); i++ {
		t := Pick(g, g.Taints)
		var tol corev1.Toleration
		switch g.Intn(7) {
		case 0, 1: // Equal, exact
			tol = corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value, Effect: t.Effect}
		case 2: // empty operator (= Equal), empty effect (= every effect)
			tol = corev1.Toleration{Key: t.Key, Value: t.Value}
		case 3: // Exists
			tol = corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpExists}
			if g.Chance(0.5) {
				tol.Effect = t.Effect
			}
		case 4: // wrong value
			tol = corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: "other", Effect: t.Effect}
		case 5: // wrong effect
			e := Pick(g, []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute})
			tol = corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value, Effect: e}
		case 6:
			if g.Chance(0.3) { // tolerate everything
				tol = corev1.Toleration{Operator: corev1.TolerationOpExists}
			} else { // every key, one effect
				tol = corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: t.Effect}
			}
		}
		if tol.Effect == corev1.TaintEffectNoExecute && g.Chance(0.3) {
			s := int64(Pick(g, []int{0, 30, 300}))
			tol.TolerationSeconds = &s
		}
		p.Spec.Tolerations = append(p.Spec.Tolerations, tol)
	}
}

// ---- host ports

func portsCluster(g *G) { g.Ports = []int32{80, 8080, 9100, 53} }

func portsPod(g *G, p *corev1.Pod, bound bool) {
	if !g.Chance(0.3) {
		return
	}
	hostNet := g.Chance(0.15)
	p.Spec.HostNetwork = hostNet
	used := map[string]bool{}
	add := func(c *corev1.Container) {
		for i := 0; i < 1+g.Intn(2); i++ {
			cp := Pick(g, g.Ports)
			port := corev1.ContainerPort{ContainerPort: cp}
			port.Protocol = Pick(g, []corev1.Protocol{"", corev1.ProtocolTCP, corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP})
			switch {
			case hostNet:
				if g.Chance(0.5) {
					port.HostPort = cp // with hostNetwork the host port is the container port
				}
			case g.Chance(0.8):
				port.HostPort = cp
				if g.Chance(0.2) {
					port.HostPort = Pick(g, g.Ports)
				}
				port.HostIP = Pick(g, []string{"", "", "0.0.0.0", "127.0.0.1", "10.0.0.1"})
			}
			// the API server refuses two host ports of a pod with the same protocol, host IP
			// and port (hostNetwork makes every container port a host port)
			proto := port.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			hp := port.HostPort
			if hostNet {
				hp = cp
			}
			k := fmt.Sprintf("%s/%s/%d", proto, port.HostIP, hp)
			if hp != 0 && used[k] {
				continue
			}
			used[k] = true
			c.Ports = append(c.Ports, port)
		}
	}
	add(&p.Spec.Containers[0])
	for i := range p.Spec.InitContainers {
		if p.Spec.InitContainers[i].RestartPolicy != nil && g.Chance(0.5) {
			add(&p.Spec.InitContainers[i])
		}
	}
}

// ---- priority

func priorityCluster(g *G) {
	never := corev1.PreemptNever
	pcs := []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "low"}, Value: 10},
		{ObjectMeta: metav1.ObjectMeta{Name: "mid"}, Value: 1000},
		{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 100000},
		{ObjectMeta: metav1.ObjectMeta{Name: "high-never"}, Value: 100000, PreemptionPolicy: &never},
	}
	if g.Chance(0.2) {
		pcs = append(pcs, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "default-prio"}, Value: 5, GlobalDefault: true})
	}
	for _, pc := range pcs {
		pc.TypeMeta = metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"}
		g.Case.PriorityClasses = append(g.Case.PriorityClasses, pc)
		g.Classes = append(g.Classes, pc.Name)
	}
}

func priorityPod(g *G, p *corev1.Pod, bound bool) {
	if bound {
		p.Spec.PriorityClassName = Pick(g, []string{"", "low", "low", "mid", "high"})
		return
	}
	p.Spec.PriorityClassName = Pick(g, []string{"", "", "low", "mid", "mid", "high", "high", "high-never", "system-cluster-critical"})
}

// ---- gates, cordon, pods limit

func gatesPod(g *G, p *corev1.Pod, bound bool) {
	if !bound && g.Chance(0.05) {
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/gate"}}
	}
}

func cordonNode(g *G, n *corev1.Node) {
	if g.Chance(0.15) {
		n.Spec.Unschedulable = true
	}
}

func cordonPod(g *G, p *corev1.Pod, bound bool) {
	if g.Chance(0.05) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
}

func podslimitNode(g *G, n *corev1.Node) {
	if g.Chance(0.15) {
		set(n.Status.Allocatable, corev1.ResourcePods, Pick(g, []string{"1", "2", "3"}))
		n.Status.Capacity[corev1.ResourcePods] = n.Status.Allocatable[corev1.ResourcePods]
	}
}
