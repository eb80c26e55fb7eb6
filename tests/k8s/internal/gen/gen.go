// Package gen generates random clusters and pods for the differential test of gpusched
// against kube-scheduler: a Case is Nodes, PriorityClasses, RuntimeClasses, bound pods and
// pending pods, the same for the same seed.
//
// Everything a case may contain comes from features (features.go), each behind a switch:
// a feature decorates the cluster, each node and each pod through the hooks of its Feature
// value, drawing from the vocabularies the base feature sets up (label pools, taint pools),
// so selectors and tolerations meet labels and taints that exist. A new scheduling feature
// (inter-pod affinity, topology spread, volumes, ...) is a new Feature in a file of its own,
// registered with register(), off by default until gpusched models it.
package gen

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Case is one generated cluster. Pods holds the bound pods first (spec.nodeName), then the
// pending ones, in the order they are written.
type Case struct {
	Seed            int64
	PriorityClasses []*schedulingv1.PriorityClass
	RuntimeClasses  []*nodev1.RuntimeClass
	Nodes           []*corev1.Node
	Pods            []*corev1.Pod
	Others          []runtime.Object
	// CanonicalQuantities writes every quantity in its canonical form (the shrinker's last
	// simplification) instead of one of its equivalent spellings.
	CanonicalQuantities bool
}

// Feature is one switchable part of the generator.
type Feature struct {
	Name    string
	Doc     string
	Default bool
	// Cluster runs once per case, before the nodes (vocabularies, cluster-wide objects).
	Cluster func(g *G)
	// Node decorates a node; Pod decorates a pod (bound says it will carry spec.nodeName).
	Node func(g *G, n *corev1.Node)
	Pod  func(g *G, p *corev1.Pod, bound bool)
	// Finish runs after every node and pod exists (objects that refer to them).
	Finish func(g *G)
}

var registry []*Feature

func register(f *Feature) { registry = append(registry, f) }

// Features lists every feature in registration order.
func Features() []*Feature { return registry }

// Config selects the features and the sizes.
type Config struct {
	Enabled    map[string]bool // by feature name; missing: the feature's Default
	MinNodes   int
	MaxNodes   int
	MaxBound   int
	MinPending int
	MaxPending int
}

// DefaultConfig: every default feature, 0-10 nodes (rarely 0), 0-8 bound and 6-18 pending
// pods.
func DefaultConfig() Config {
	return Config{Enabled: map[string]bool{}, MinNodes: 1, MaxNodes: 10, MaxBound: 8, MinPending: 6, MaxPending: 18}
}

// ParseFeatures applies a list like "taints,-ports,+interpod" (a bare or +name enables,
// -name disables, "all" every feature, "none" none) to cfg.
func (cfg *Config) ParseFeatures(list string) error {
	known := map[string]bool{}
	for _, f := range registry {
		known[f.Name] = true
	}
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		on := true
		switch item[0] {
		case '-':
			on, item = false, item[1:]
		case '+':
			item = item[1:]
		}
		switch item {
		case "all", "none":
			for _, f := range registry {
				if !f.required() {
					cfg.Enabled[f.Name] = (item == "all") == on
				}
			}
			continue
		}
		if !known[item] {
			return fmt.Errorf("unknown feature %q (known: %s)", item, strings.Join(FeatureNames(), ", "))
		}
		cfg.Enabled[item] = on
	}
	return nil
}

// FeatureNames in registration order.
func FeatureNames() []string {
	var out []string
	for _, f := range registry {
		out = append(out, f.Name)
	}
	return out
}

func (f *Feature) required() bool { return f.Name == "base" }

func (cfg *Config) on(f *Feature) bool {
	if f.required() {
		return true
	}
	if v, ok := cfg.Enabled[f.Name]; ok {
		return v
	}
	return f.Default
}

// On lists the enabled features.
func (cfg *Config) On() []string {
	var out []string
	for _, f := range registry {
		if cfg.on(f) {
			out = append(out, f.Name)
		}
	}
	return out
}

// G is the generator's state while it builds one case: the random source, the case, and the
// vocabularies features share.
type G struct {
	R    *rand.Rand
	Case *Case
	cfg  *Config
	on   map[string]bool

	// Labels: key -> the values nodes may carry (base feature)
	Labels     map[string][]string
	LabelKeys  []string
	NumericKey string // a label whose values are integers (and some that are not), for Gt/Lt
	// Taints nodes may carry (taints feature), so tolerations can name them
	Taints []corev1.Taint
	// Extended resources nodes may offer
	Extended []string
	// Host ports pods may ask for
	Ports []int32
	// PriorityClass names pods may use ("" = none)
	Classes []string
	// RuntimeClass names with overhead
	Runtimes []string
	// the volumelimits feature's pools (volumes.go)
	vol *volumesState
	// the dra feature's state (dra.go)
	dra *draState

	uid int
}

// On says whether a feature is enabled in this case.
func (g *G) On(name string) bool { return g.on[name] }

// Intn, Chance, Pick: shorthands.
func (g *G) Intn(n int) int        { return g.R.Intn(n) }
func (g *G) Chance(p float64) bool { return g.R.Float64() < p }
func Pick[T any](g *G, xs []T) T   { return xs[g.R.Intn(len(xs))] }

// Generate makes the case of one seed.
func Generate(seed int64, cfg Config) *Case {
	g := &G{R: rand.New(rand.NewSource(seed)), Case: &Case{Seed: seed}, cfg: &cfg, on: map[string]bool{},
		Labels: map[string][]string{}}
	var feats []*Feature
	for _, f := range registry {
		if cfg.on(f) {
			feats = append(feats, f)
			g.on[f.Name] = true
		}
	}
	for _, f := range feats {
		if f.Cluster != nil {
			f.Cluster(g)
		}
	}
	sort.Strings(g.LabelKeys)

	nnodes := cfg.MinNodes + g.Intn(cfg.MaxNodes-cfg.MinNodes+1)
	if g.Chance(0.01) {
		nnodes = 0 // "no nodes available to schedule pods"
	}
	for i := 0; i < nnodes; i++ {
		n := &corev1.Node{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i+1), Labels: map[string]string{}},
			Status:     corev1.NodeStatus{Allocatable: corev1.ResourceList{}, Capacity: corev1.ResourceList{}},
		}
		for _, f := range feats {
			if f.Node != nil {
				f.Node(g, n)
			}
		}
		g.Case.Nodes = append(g.Case.Nodes, n)
	}

	nbound := 0
	if nnodes > 0 && cfg.MaxBound > 0 {
		nbound = g.Intn(cfg.MaxBound + 1)
	}
	npending := cfg.MinPending + g.Intn(cfg.MaxPending-cfg.MinPending+1)
	for i := 0; i < nbound+npending; i++ {
		bound := i < nbound
		name := fmt.Sprintf("p%d", i+1)
		if bound {
			name = fmt.Sprintf("b%d", i+1)
		}
		p := &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		}
		for _, f := range feats {
			if f.Pod != nil {
				f.Pod(g, p, bound)
			}
		}
		if bound {
			p.Spec.NodeName = Pick(g, g.Case.Nodes).Name
		}
		g.Case.Pods = append(g.Case.Pods, p)
	}
	for _, f := range feats {
		if f.Finish != nil {
			f.Finish(g)
		}
	}
	return g.Case
}
