// Package dradiff is the differential test of gpusched's structured allocator
// (src/sched/dra_alloc.c, through build/dra-alloc) against the real one,
// k8s.io/dynamic-resource-allocation/structured v0.37.2 with the features kube-scheduler
// v1.37.2 turns on. A problem is one node, the cluster's ResourceSlices and DeviceClasses, some
// claims to allocate and the devices other claims hold; both allocators must give the same
// status, the same message and the same devices for each request.
//
// CEL and node selectors are not what is compared here: the Go side evaluates every selector
// on every device with the real CEL library (and every slice's or device's node selector on
// the node) and hands the answers to the C side as tables, so the allocators' search is judged
// alone. docs/testing.md describes it.
package dradiff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"

	"gpulabel.test/k8s/internal/gen"
)

// Features kube-scheduler v1.37.2 gives the allocator (dynamicresources.AllocatorFeatures of
// the default gates).
var Features = structured.Features{
	AdminAccess:             true,
	PrioritizedList:         true,
	PartitionableDevices:    true,
	DeviceTaints:            true,
	DeviceBindingAndStatus:  true,
	ConsumableCapacity:      true,
	FractionalCapacityRange: true,
}

// Share is a device allocated as a share (AllocatedSharedDeviceIDs), with what it consumes.
type Share struct {
	Device   string                       `json:"device"` // driver/pool/device
	Consumed map[string]resource.Quantity `json:"consumed,omitempty"`
}

// Problem is one Allocate call.
type Problem struct {
	ID        string                       `json:"id"`
	Node      *corev1.Node                 `json:"-"`
	NodeName  string                       `json:"node"`
	Slices    []*resourcev1.ResourceSlice  `json:"slices"`
	Classes   []*resourcev1.DeviceClass    `json:"classes"`
	Claims    []*resourcev1.ResourceClaim  `json:"claims"`
	Allocated []string                     `json:"allocated,omitempty"` // driver/pool/device
	Shares    []Share                      `json:"shares,omitempty"`
	CEL       map[string]map[string]string `json:"cel"`           // expression -> device -> "true" | "false" | "error: ..." ; "compile" -> error
	NodeSel   map[string]bool              `json:"nodeSelectors"` // slice or slice/device -> matches
}

// Answer is what an allocator says.
type Answer struct {
	ID      string        `json:"id"`
	Status  string        `json:"status"` // allocated | unallocated | node-failed | error
	Message string        `json:"message,omitempty"`
	Claims  []ClaimAnswer `json:"claims,omitempty"`
}

type ClaimAnswer struct {
	Results      []Result `json:"results"`
	NodeSelector string   `json:"nodeSelector"` // none | node | selector
}

type Result struct {
	Request     string            `json:"request"`
	Device      string            `json:"device"` // driver/pool/device
	AdminAccess bool              `json:"adminAccess,omitempty"`
	Shared      bool              `json:"shared,omitempty"`
	Consumed    map[string]string `json:"consumed,omitempty"`
}

type classLister map[string]*resourcev1.DeviceClass

func (l classLister) List() ([]*resourcev1.DeviceClass, error) {
	var out []*resourcev1.DeviceClass
	for _, c := range l {
		out = append(out, c)
	}
	return out, nil
}

func (l classLister) Get(name string) (*resourcev1.DeviceClass, error) {
	if c, ok := l[name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(resourcev1.Resource("deviceclasses"), name)
}

// RunGo runs the real allocator.
func (p *Problem) RunGo() *Answer {
	return p.RunGoWith(Features)
}

// RunGoWith runs the real allocator with other features (which select its implementation).
func (p *Problem) RunGoWith(features structured.Features) *Answer {
	ctx := context.Background()
	classes := classLister{}
	for _, c := range p.Classes {
		classes[c.Name] = c
	}
	state := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, d := range p.Allocated {
		state.AllocatedDevices.Insert(deviceID(d))
	}
	for i, s := range p.Shares {
		uid := types.UID(fmt.Sprintf("share-%d", i))
		state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(deviceID(s.Device), &uid))
		if s.Consumed != nil {
			m := map[resourcev1.QualifiedName]resource.Quantity{}
			for k, v := range s.Consumed {
				m[resourcev1.QualifiedName(k)] = v
			}
			state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(deviceID(s.Device), m))
		}
	}
	celCache := cel.NewCache(10, cel.Features{EnableConsumableCapacity: true})
	a := &Answer{ID: p.ID}
	alloc, err := structured.NewAllocator(ctx, features, state, classes, p.Slices, celCache)
	if err != nil {
		a.Status, a.Message = "error", err.Error()
		return a
	}
	results, err := alloc.Allocate(ctx, p.Node, p.Claims)
	switch {
	case errors.Is(err, structured.ErrFailedAllocationOnNode):
		a.Status, a.Message = "node-failed", err.Error()
	case err != nil:
		a.Status, a.Message = "error", err.Error()
	case results == nil:
		a.Status = "unallocated"
	default:
		a.Status = "allocated"
		for _, r := range results {
			ca := ClaimAnswer{NodeSelector: "none"}
			if r.NodeSelector != nil {
				ca.NodeSelector = "selector"
				t := r.NodeSelector.NodeSelectorTerms
				if len(t) == 1 && len(t[0].MatchFields) == 1 && t[0].MatchFields[0].Key == "metadata.name" {
					ca.NodeSelector = "node"
				}
			}
			for _, d := range r.Devices.Results {
				x := Result{Request: d.Request, Device: d.Driver + "/" + d.Pool + "/" + d.Device,
					AdminAccess: ptr.Deref(d.AdminAccess, false), Shared: d.ShareID != nil}
				if len(d.ConsumedCapacity) > 0 {
					x.Consumed = map[string]string{}
					for k, v := range d.ConsumedCapacity {
						x.Consumed[string(k)] = Decimal(v)
					}
				}
				ca.Results = append(ca.Results, x)
			}
			a.Claims = append(a.Claims, ca)
		}
	}
	return a
}

func deviceID(s string) structured.DeviceID {
	parts := strings.SplitN(s, "/", 3)
	for len(parts) < 3 {
		parts = append(parts, "")
	}
	return structured.MakeDeviceID(parts[0], parts[1], parts[2])
}

// Tables fills CEL and NodeSel: every selector of the classes and claims on every device of
// every slice, with the real CEL library as the scheduler's cache compiles it; every node
// selector of a slice or device on the node.
func (p *Problem) Tables() error {
	ctx := context.Background()
	celCache := cel.NewCache(10, cel.Features{EnableConsumableCapacity: true})
	exprs := sets.New[string]()
	for _, c := range p.Classes {
		for _, s := range c.Spec.Selectors {
			if s.CEL != nil {
				exprs.Insert(s.CEL.Expression)
			}
		}
	}
	for _, c := range p.Claims {
		for _, r := range c.Spec.Devices.Requests {
			if r.Exactly != nil {
				for _, s := range r.Exactly.Selectors {
					if s.CEL != nil {
						exprs.Insert(s.CEL.Expression)
					}
				}
			}
			for _, sub := range r.FirstAvailable {
				for _, s := range sub.Selectors {
					if s.CEL != nil {
						exprs.Insert(s.CEL.Expression)
					}
				}
			}
		}
	}
	p.CEL = map[string]map[string]string{}
	for _, e := range sets.List(exprs) {
		res := celCache.GetOrCompile(e)
		m := map[string]string{}
		p.CEL[e] = m
		if res.Error != nil {
			m["compile"] = res.Error.Error()
			continue
		}
		for _, sl := range p.Slices {
			for _, d := range sl.Spec.Devices {
				ok, _, err := res.DeviceMatches(ctx, cel.Device{Driver: sl.Spec.Driver, AllowMultipleAllocations: d.AllowMultipleAllocations,
					Attributes: d.Attributes, Capacity: d.Capacity})
				key := sl.Spec.Driver + "/" + sl.Spec.Pool.Name + "/" + d.Name
				switch {
				case err != nil:
					m[key] = "error: " + err.Error()
				case ok:
					m[key] = "true"
				default:
					m[key] = "false"
				}
			}
		}
	}
	p.NodeSel = map[string]bool{}
	match := func(ns *corev1.NodeSelector) (bool, error) {
		sel, err := nodeaffinity.NewNodeSelector(ns)
		if err != nil {
			return false, err
		}
		return sel.Match(p.Node), nil
	}
	for _, sl := range p.Slices {
		if sl.Spec.NodeSelector != nil {
			ok, err := match(sl.Spec.NodeSelector)
			if err != nil {
				return err
			}
			p.NodeSel[sl.Name] = ok
		}
		for _, d := range sl.Spec.Devices {
			if d.NodeSelector != nil {
				ok, err := match(d.NodeSelector)
				if err != nil {
					return err
				}
				p.NodeSel[sl.Name+"/"+d.Name] = ok
			}
		}
	}
	return nil
}

// JSON is the problem as build/dra-alloc reads it: one line.
func (p *Problem) JSON() ([]byte, error) {
	return json.Marshal(p)
}

// FromCase makes problems of a generated case (the dra feature): for each pending pod with
// claims, one problem on a node drawn at random, its claims those of the pod (a template's
// spec as the claim the controller would make), the devices other claims hold drawn at random
// from the node's devices.
func FromCase(c *gen.Case, seed int64) []*Problem {
	r := rand.New(rand.NewSource(seed))
	var slices []*resourcev1.ResourceSlice
	var classes []*resourcev1.DeviceClass
	templates := map[string]*resourcev1.ResourceClaimTemplate{}
	claims := map[string]*resourcev1.ResourceClaim{}
	for _, o := range c.Others {
		switch x := o.(type) {
		case *resourcev1.ResourceSlice:
			slices = append(slices, x)
		case *resourcev1.DeviceClass:
			classes = append(classes, x)
		case *resourcev1.ResourceClaimTemplate:
			templates[x.Namespace+"/"+x.Name] = x
		case *resourcev1.ResourceClaim:
			claims[x.Namespace+"/"+x.Name] = x
		}
	}
	if len(c.Nodes) == 0 || len(slices) == 0 {
		return nil
	}
	var out []*Problem
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" || len(p.Spec.ResourceClaims) == 0 {
			continue
		}
		ns := p.Namespace
		if ns == "" {
			ns = "default"
		}
		var pc []*resourcev1.ResourceClaim
		for _, rc := range p.Spec.ResourceClaims {
			var spec *resourcev1.ResourceClaimSpec
			switch {
			case rc.ResourceClaimTemplateName != nil:
				if t := templates[ns+"/"+*rc.ResourceClaimTemplateName]; t != nil {
					spec = &t.Spec.Spec
				}
			case rc.ResourceClaimName != nil:
				if cl := claims[ns+"/"+*rc.ResourceClaimName]; cl != nil && cl.Status.Allocation == nil {
					spec = &cl.Spec
				}
			}
			if spec == nil {
				continue
			}
			pc = append(pc, &resourcev1.ResourceClaim{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.Name + "-" + rc.Name},
				Spec:       *spec.DeepCopy()})
		}
		if len(pc) == 0 {
			continue
		}
		// mostly a node with devices of its own
		node := c.Nodes[r.Intn(len(c.Nodes))]
		if r.Float64() < 0.7 {
			var local []*corev1.Node
			for _, n := range c.Nodes {
				for _, sl := range slices {
					if ptr.Deref(sl.Spec.NodeName, "") == n.Name {
						local = append(local, n)
						break
					}
				}
			}
			if len(local) > 0 {
				node = local[r.Intn(len(local))]
			}
		}
		probSlices := slices
		if r.Float64() < 0.15 {
			// devices waiting for binding conditions (their pools go last), some bound to the node
			probSlices = nil
			for _, sl := range slices {
				sl = sl.DeepCopy()
				for i := range sl.Spec.Devices {
					if r.Float64() < 0.3 {
						sl.Spec.Devices[i].BindingConditions = []string{"example.com/ready"}
						sl.Spec.Devices[i].BindingFailureConditions = []string{"example.com/failed"}
						sl.Spec.Devices[i].BindsToNode = ptr.To(r.Float64() < 0.5)
					}
				}
				probSlices = append(probSlices, sl)
			}
		}
		prob := &Problem{ID: fmt.Sprintf("%d/%s/%s", c.Seed, p.Name, node.Name), Node: node, NodeName: node.Name,
			Slices: probSlices, Classes: classes, Claims: pc}
		allocFrac := []float64{0, 0.1, 0.3}[r.Intn(3)]
		// other claims' devices: some of every slice's devices, a few as shares
		for _, sl := range slices {
			for _, d := range sl.Spec.Devices {
				id := sl.Spec.Driver + "/" + sl.Spec.Pool.Name + "/" + d.Name
				switch x := r.Float64(); {
				case ptr.Deref(d.AllowMultipleAllocations, false) && x < 0.4:
					s := Share{Device: id}
					if r.Float64() < 0.8 {
						s.Consumed = map[string]resource.Quantity{}
						var names []string
						for name := range d.Capacity {
							names = append(names, string(name))
						}
						sort.Strings(names)
						for _, name := range names {
							s.Consumed[name] = resource.MustParse([]string{"5Gi", "10Gi", "1Gi"}[r.Intn(3)])
						}
					}
					prob.Shares = append(prob.Shares, s)
				case x < allocFrac:
					prob.Allocated = append(prob.Allocated, id)
				}
			}
		}
		sort.Strings(prob.Allocated)
		out = append(out, prob)
	}
	return out
}

// Decimal is q's exact value as a plain decimal without trailing zeros ("2.5", "10737418240").
func Decimal(q resource.Quantity) string {
	s := q.AsDec().String()
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
