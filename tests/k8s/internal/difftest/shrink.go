package difftest

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"gpulabel.test/k8s/internal/gen"
)

// Shrink makes the case as small as it can while keeps(case) holds: greedy, one edit at a
// time (drop a pending pod, a bound pod, a node with its pods, a class nobody uses; then drop
// parts of pods and nodes: affinity, selector, tolerations, ports, init containers, extra
// containers, resources; labels, taints, extended resources), restarting after every edit
// that keeps the difference, within trials runs and the deadline.
func Shrink(c *gen.Case, keeps func(*gen.Case) bool, trials int, deadline time.Time) (*gen.Case, int) {
	used := 0
	for progress := true; progress && used < trials && time.Now().Before(deadline); {
		progress = false
		for _, edit := range edits(c) {
			if used >= trials || time.Now().After(deadline) {
				break
			}
			next := edit()
			if next == nil {
				continue
			}
			used++
			if keeps(next) {
				c = next
				progress = true
				break
			}
		}
	}
	return c, used
}

func clone(c *gen.Case) *gen.Case {
	n := &gen.Case{Seed: c.Seed, CanonicalQuantities: c.CanonicalQuantities}
	for _, o := range c.PriorityClasses {
		n.PriorityClasses = append(n.PriorityClasses, o.DeepCopy())
	}
	for _, o := range c.RuntimeClasses {
		n.RuntimeClasses = append(n.RuntimeClasses, o.DeepCopy())
	}
	for _, o := range c.Nodes {
		n.Nodes = append(n.Nodes, o.DeepCopy())
	}
	for _, o := range c.Pods {
		n.Pods = append(n.Pods, o.DeepCopy())
	}
	for _, o := range c.Others {
		n.Others = append(n.Others, o.DeepCopyObject())
	}
	return n
}

type edit func() *gen.Case

// edits lists the candidate simplifications of c, biggest first.
func edits(c *gen.Case) []edit {
	var es []edit
	// whole pods, the last ones first (they matter least to the ones before)
	for i := len(c.Pods) - 1; i >= 0; i-- {
		i := i
		es = append(es, func() *gen.Case {
			n := clone(c)
			n.Pods = append(n.Pods[:i], n.Pods[i+1:]...)
			return n
		})
	}
	for i := len(c.Nodes) - 1; i >= 0; i-- {
		i := i
		es = append(es, func() *gen.Case {
			n := clone(c)
			name := n.Nodes[i].Name
			n.Nodes = append(n.Nodes[:i], n.Nodes[i+1:]...)
			var pods []*corev1.Pod
			for _, p := range n.Pods {
				if p.Spec.NodeName != name {
					pods = append(pods, p)
				}
			}
			n.Pods = pods
			return n
		})
	}
	for i := range c.PriorityClasses {
		i := i
		es = append(es, func() *gen.Case {
			name := c.PriorityClasses[i].Name
			for _, p := range c.Pods {
				if p.Spec.PriorityClassName == name {
					return nil
				}
			}
			if c.PriorityClasses[i].GlobalDefault {
				return nil // pods without a class take its value
			}
			n := clone(c)
			n.PriorityClasses = append(n.PriorityClasses[:i], n.PriorityClasses[i+1:]...)
			return n
		})
	}
	for i := range c.RuntimeClasses {
		i := i
		es = append(es, func() *gen.Case {
			name := c.RuntimeClasses[i].Name
			for _, p := range c.Pods {
				if p.Spec.RuntimeClassName != nil && *p.Spec.RuntimeClassName == name {
					return nil
				}
			}
			n := clone(c)
			n.RuntimeClasses = append(n.RuntimeClasses[:i], n.RuntimeClasses[i+1:]...)
			return n
		})
	}
	es = append(es, func() *gen.Case {
		if c.CanonicalQuantities {
			return nil
		}
		n := clone(c)
		n.CanonicalQuantities = true
		return n
	})
	for i := range c.Pods {
		es = append(es, podEdits(c, i)...)
	}
	for i := range c.Nodes {
		es = append(es, nodeEdits(c, i)...)
	}
	return es
}

func podEdit(c *gen.Case, i int, applies func(p *corev1.Pod) bool, do func(p *corev1.Pod)) edit {
	return func() *gen.Case {
		if !applies(c.Pods[i]) {
			return nil
		}
		n := clone(c)
		do(n.Pods[i])
		return n
	}
}

func podEdits(c *gen.Case, i int) []edit {
	var es []edit
	p := c.Pods[i]
	es = append(es,
		podEdit(c, i, func(p *corev1.Pod) bool { return p.Spec.Affinity != nil }, func(p *corev1.Pod) { p.Spec.Affinity = nil }),
		podEdit(c, i, func(p *corev1.Pod) bool { return len(p.Spec.NodeSelector) > 0 }, func(p *corev1.Pod) { p.Spec.NodeSelector = nil }),
		podEdit(c, i, func(p *corev1.Pod) bool { return len(p.Spec.InitContainers) > 0 }, func(p *corev1.Pod) { p.Spec.InitContainers = nil }),
		podEdit(c, i, func(p *corev1.Pod) bool { return len(p.Spec.Containers) > 1 }, func(p *corev1.Pod) { p.Spec.Containers = p.Spec.Containers[:1] }),
		podEdit(c, i, func(p *corev1.Pod) bool { return p.Spec.HostNetwork }, func(p *corev1.Pod) { p.Spec.HostNetwork = false }),
		podEdit(c, i, func(p *corev1.Pod) bool { return p.Spec.PriorityClassName != "" }, func(p *corev1.Pod) { p.Spec.PriorityClassName = "" }),
		podEdit(c, i, func(p *corev1.Pod) bool { return p.Spec.RuntimeClassName != nil },
			func(p *corev1.Pod) { p.Spec.RuntimeClassName, p.Spec.Overhead = nil, nil }),
		// the overhead the RuntimeClass admission would add, written out: the difference is
		// then not the admission's
		podEdit(c, i, func(p *corev1.Pod) bool {
			return p.Spec.RuntimeClassName != nil && p.Spec.Overhead == nil && overheadOf(c, p) != nil
		},
			func(p *corev1.Pod) { p.Spec.Overhead = overheadOf(c, p) }),
	)
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		es = append(es,
			podEdit(c, i, func(p *corev1.Pod) bool {
				return p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil
			},
				func(p *corev1.Pod) { p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = nil }),
			podEdit(c, i, func(p *corev1.Pod) bool {
				return len(p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0
			}, func(p *corev1.Pod) {
				p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = nil
			}))
		if r := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			for t := range r.NodeSelectorTerms {
				t := t
				es = append(es, podEdit(c, i, func(p *corev1.Pod) bool {
					return len(p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) > 1
				},
					func(p *corev1.Pod) {
						ts := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
						p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(ts[:t:t], ts[t+1:]...)
					}))
			}
		}
		for t := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			t := t
			es = append(es, podEdit(c, i, func(p *corev1.Pod) bool { return true }, func(p *corev1.Pod) {
				ts := p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
				p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(ts[:t:t], ts[t+1:]...)
			}))
		}
	}
	for t := range p.Spec.Tolerations {
		t := t
		es = append(es, podEdit(c, i, func(p *corev1.Pod) bool { return true }, func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations[:t:t], p.Spec.Tolerations[t+1:]...)
		}))
	}
	for k := range p.Spec.Containers {
		k := k
		es = append(es,
			podEdit(c, i, func(p *corev1.Pod) bool { return len(p.Spec.Containers[k].Ports) > 0 }, func(p *corev1.Pod) { p.Spec.Containers[k].Ports = nil }),
			podEdit(c, i, func(p *corev1.Pod) bool { return len(p.Spec.Containers[k].Resources.Limits) > 0 }, func(p *corev1.Pod) {
				// limits go, the requests they implied stay
				r := &p.Spec.Containers[k].Resources
				if r.Requests == nil {
					r.Requests = corev1.ResourceList{}
				}
				for n, q := range r.Limits {
					if _, ok := r.Requests[n]; !ok {
						r.Requests[n] = q
					}
				}
				r.Limits = nil
			}))
		for name := range p.Spec.Containers[k].Resources.Requests {
			name := name
			es = append(es, podEdit(c, i, func(p *corev1.Pod) bool {
				_, ok := p.Spec.Containers[k].Resources.Requests[name]
				_, lim := p.Spec.Containers[k].Resources.Limits[name]
				return ok && !lim
			}, func(p *corev1.Pod) { delete(p.Spec.Containers[k].Resources.Requests, name) }))
		}
	}
	return es
}

func nodeEdits(c *gen.Case, i int) []edit {
	var es []edit
	n := c.Nodes[i]
	nodeEdit := func(applies func(n *corev1.Node) bool, do func(n *corev1.Node)) edit {
		return func() *gen.Case {
			if !applies(c.Nodes[i]) {
				return nil
			}
			m := clone(c)
			do(m.Nodes[i])
			return m
		}
	}
	es = append(es, nodeEdit(func(n *corev1.Node) bool { return n.Spec.Unschedulable }, func(n *corev1.Node) { n.Spec.Unschedulable = false }))
	for t := range n.Spec.Taints {
		t := t
		es = append(es, nodeEdit(func(n *corev1.Node) bool { return true }, func(n *corev1.Node) {
			n.Spec.Taints = append(n.Spec.Taints[:t:t], n.Spec.Taints[t+1:]...)
		}))
	}
	for k := range n.Labels {
		k := k
		if k == "kubernetes.io/hostname" {
			continue
		}
		es = append(es, nodeEdit(func(n *corev1.Node) bool { _, ok := n.Labels[k]; return ok }, func(n *corev1.Node) { delete(n.Labels, k) }))
	}
	for r := range n.Status.Allocatable {
		r := r
		switch r {
		case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods:
			continue
		}
		es = append(es, nodeEdit(func(n *corev1.Node) bool { _, ok := n.Status.Allocatable[r]; return ok }, func(n *corev1.Node) {
			delete(n.Status.Allocatable, r)
			delete(n.Status.Capacity, r)
		}))
	}
	es = append(es, nodeEdit(func(n *corev1.Node) bool {
		for k, v := range n.Status.Capacity {
			if a, ok := n.Status.Allocatable[k]; !ok || a.Cmp(v) != 0 {
				return true
			}
		}
		return false
	}, func(n *corev1.Node) { n.Status.Capacity = n.Status.Allocatable.DeepCopy() }))
	return es
}

// Size describes a case for messages.
func Size(c *gen.Case) string {
	nb := 0
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" {
			nb++
		}
	}
	return fmt.Sprintf("%d nodes, %d bound and %d pending pods", len(c.Nodes), nb, len(c.Pods)-nb)
}

func overheadOf(c *gen.Case, p *corev1.Pod) corev1.ResourceList {
	for _, rc := range c.RuntimeClasses {
		if rc.Name == *p.Spec.RuntimeClassName && rc.Overhead != nil {
			return rc.Overhead.PodFixed.DeepCopy()
		}
	}
	return nil
}
