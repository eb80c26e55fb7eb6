package gen

// Dynamic Resource Allocation (resource.k8s.io/v1): DeviceClasses (CEL selectors, an explicit
// extendedResourceName, clashes), ResourceSlices (node-local pools split over several slices,
// incomplete and outdated pools, pools for a node selector or all nodes, per-device node
// selection, shared counters with partitions consuming them, devices for several
// allocations with consumable capacity, device taints, random attributes and capacities
// that selectors compare with random bounds), DeviceTaintRules, ResourceClaims
// shared by pods and ResourceClaimTemplates with requests of every kind (counts, All,
// adminAccess in a namespace that allows it, tolerations, capacity requests, firstAvailable
// subrequests), constraints (matchAttribute, distinctAttribute) and CEL selectors, some of
// which fail at run time on some devices; bound pods holding allocated claims (whole devices,
// partitions, shares of a device with the capacity they consume, admin access), some on
// devices with binding conditions whose binding failed, timed out or is done); pods asking for
// nvidia.com/gpu (the resources feature) or deviceclass.resource.kubernetes.io/<class> served
// from devices through the extended-resource mapping, on nodes that may also advertise
// nvidia.com/gpu from a device plugin; pods naming a claim or template that does not exist.
//
// Its own random source (seeded from the case), so switching it on leaves every other
// feature's draws as they were; the binding state of allocations has one more (bindRand), so
// adding it left the rest of this feature's draws as they were.

import (
	"fmt"
	"math/rand"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func init() {
	register(&Feature{Name: "dra", Default: false,
		Doc:     "Dynamic Resource Allocation: DeviceClasses (CEL selectors, extendedResourceName), ResourceSlices (node-local, split, incomplete and outdated pools, nodeSelector/allNodes pools, per-device node selection, shared counters, consumable capacity, taints), DeviceTaintRules, shared ResourceClaims (a pod naming one twice) and ResourceClaimTemplates (counts, All, adminAccess, tolerations, capacity requests, firstAvailable, matchAttribute/distinctAttribute, selectors failing at run time), bound pods holding allocations, extended resources served by devices, missing claims and templates",
		Cluster: draCluster, Node: draNode, Pod: draPod, Finish: draFinish})
}

const (
	drvGPU  = "gpu.nvidia.com"
	drvNIC  = "nic.example.com"
	keyRack = "dra.example.com/rack"
	nsAdmin = "admin"
)

// a device the generator made, for the allocations of bound pods
type draDevice struct {
	driver, pool, name string
	node               string // "" for devices that are not node-local
	shared             bool   // allowMultipleAllocations
	counters           bool   // consumes counters
	taken              bool
}

type draState struct {
	r *rand.Rand
	// per case switches
	partitionable, consumable, taints, network, perDevice, explicitExt, clash, admin, rules, fragile bool
	classes                                                                                          []string                                     // class names requests may use
	devices                                                                                          []*draDevice                                 // node-local devices, in creation order
	templates                                                                                        map[string]*resourcev1.ResourceClaimTemplate // ns/name
	claims                                                                                           map[string]*resourcev1.ResourceClaim         // shared claims, ns/name
	order                                                                                            []string                                     // creation order of templates and claims (ns/name, kind prefixed)
	bound                                                                                            map[string]*corev1.Pod                       // shared claim ns/name -> the bound pod it is reserved for
	uids, shares                                                                                     int
	bindRand                                                                                         *rand.Rand // bindingState's draws
	// what draFinish does to each pending pod's containers (the Pod hooks of the features
	// registered after this one write the containers)
	implicit  map[*corev1.Pod]corev1.ResourceName
	pending   []*corev1.Pod
	boundPods []*corev1.Pod
	plans     map[*corev1.Pod][]podClaimPlan
}

func ds(g *G) *draState {
	if g.dra == nil {
		g.dra = &draState{r: rand.New(rand.NewSource(g.Case.Seed*104723 + 15485863)),
			templates: map[string]*resourcev1.ResourceClaimTemplate{},
			claims:    map[string]*resourcev1.ResourceClaim{}, bound: map[string]*corev1.Pod{},
			implicit: map[*corev1.Pod]corev1.ResourceName{}, plans: map[*corev1.Pod][]podClaimPlan{}}
	}
	return g.dra
}

func (s *draState) chance(p float64) bool { return s.r.Float64() < p }
func (s *draState) intn(n int) int        { return s.r.Intn(n) }
func dpick[T any](s *draState, xs []T) T  { return xs[s.r.Intn(len(xs))] }

func sel(expr string) resourcev1.DeviceSelector {
	return resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: expr}}
}

func draCluster(g *G) {
	s := ds(g)
	s.partitionable = s.chance(0.3)
	s.consumable = s.chance(0.25)
	s.taints = s.chance(0.3)
	s.network = s.chance(0.3)
	s.perDevice = s.chance(0.2)
	s.explicitExt = s.chance(0.6)
	s.clash = s.explicitExt && s.chance(0.15)
	s.admin = s.chance(0.2)
	s.rules = s.chance(0.2)
	s.fragile = s.chance(0.2)

	class := func(name string, ext string, sels ...string) {
		c := &resourcev1.DeviceClass{
			TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceClass"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
		}
		for _, e := range sels {
			c.Spec.Selectors = append(c.Spec.Selectors, sel(e))
		}
		if ext != "" {
			c.Spec.ExtendedResourceName = ptr.To(ext)
		}
		g.Case.Others = append(g.Case.Others, c)
		s.classes = append(s.classes, name)
	}
	ext := ""
	if s.explicitExt {
		ext = string(keyGPU)
	}
	class(drvGPU, ext, `device.driver == "gpu.nvidia.com"`)
	class("nvidia-m40", "", `device.driver == "gpu.nvidia.com"`,
		`device.attributes["gpu.nvidia.com"].productName == "Tesla-M40"`)
	class("big-gpu", "", `device.driver == "gpu.nvidia.com" && device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("16Gi")) >= 0`)
	class(drvNIC, "", `device.driver == "nic.example.com"`)
	if s.chance(0.5) {
		class("any", "")
	}
	if s.fragile {
		// fails at run time on every device without the attribute
		class("fast", "", `device.attributes["example.com"].fast`)
	}
	if s.clash {
		// a second class for nvidia.com/gpu: the lower name wins when neither is newer
		class(dpick(s, []string{"a-t4", "z-t4"}), string(keyGPU), `device.driver == "gpu.nvidia.com"`,
			`device.attributes["gpu.nvidia.com"].productName == "Tesla-T4"`)
	}
	if s.admin {
		g.Case.Others = append(g.Case.Others, &corev1.Namespace{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: nsAdmin,
				Labels: map[string]string{resourcev1.DRAAdminNamespaceLabelKey: "true"}},
		})
	}
}

var (
	gpuProducts = []struct {
		name, arch, cc, mem string
	}{
		{"Tesla-M40", "Maxwell", "5.2.0", "12Gi"},
		{"Tesla-T4", "Turing", "7.5.0", "16Gi"},
		{"NVIDIA-A100-SXM4-40GB", "Ampere", "8.0.0", "40Gi"},
	}
	pcieRoots = []string{"pci0000:00", "pci0000:40"}
)

func strAttr(v string) resourcev1.DeviceAttribute {
	return resourcev1.DeviceAttribute{StringValue: ptr.To(v)}
}
func intAttr(v int64) resourcev1.DeviceAttribute {
	return resourcev1.DeviceAttribute{IntValue: ptr.To(v)}
}
func verAttr(v string) resourcev1.DeviceAttribute {
	return resourcev1.DeviceAttribute{VersionValue: ptr.To(v)}
}
func boolAttr(v bool) resourcev1.DeviceAttribute {
	return resourcev1.DeviceAttribute{BoolValue: ptr.To(v)}
}

func capOf(q string) resourcev1.DeviceCapacity {
	return resourcev1.DeviceCapacity{Value: resource.MustParse(q)}
}

// gpuDevice is one whole GPU with NVIDIA's attributes.
func (s *draState) gpuDevice(name string, index int) resourcev1.Device {
	p := dpick(s, gpuProducts)
	d := resourcev1.Device{Name: name,
		Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"productName":                     strAttr(p.name),
			"architecture":                    strAttr(p.arch),
			"cudaComputeCapability":           verAttr(p.cc),
			"index":                           intAttr(int64(index)),
			"uuid":                            strAttr(fmt.Sprintf("GPU-%08x", s.r.Uint32())),
			"resource.kubernetes.io/pcieRoot": strAttr(dpick(s, pcieRoots)),
		},
		Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": capOf(s.memory(p.mem))},
	}
	if s.chance(0.3) {
		d.Attributes["example.com/fast"] = boolAttr(s.chance(0.5))
	}
	// random values: what selectors compare with random bounds
	if s.chance(0.7) {
		d.Attributes["driverVersion"] = verAttr(fmt.Sprintf("%d.%d.%d", dpick(s, []int{535, 550, 570}), s.intn(200), s.intn(3)))
		d.Attributes["eccErrors"] = intAttr(int64(s.intn(4)))
		d.Capacity["cores"] = capOf(fmt.Sprintf("%d", 1024*(1+s.intn(10))))
		d.Capacity["power"] = capOf(dpick(s, []string{"70", "250", "300", "400"}))
	}
	if s.chance(0.15) {
		delete(d.Attributes, "productName") // an older driver
	}
	s.maybeTaint(&d)
	return d
}

// memory writes the quantity q as drivers might: "16Gi", the same in bytes or in Mi, or a
// little less ("15.5Gi")
func (s *draState) memory(q string) string {
	v := resource.MustParse(q)
	switch s.intn(6) {
	case 0:
		return fmt.Sprintf("%d", v.Value())
	case 1:
		return fmt.Sprintf("%dMi", v.Value()>>20)
	case 2:
		return fmt.Sprintf("%d.5Gi", (v.Value()>>30)-1)
	}
	return q
}

func (s *draState) maybeTaint(d *resourcev1.Device) {
	if !s.taints || !s.chance(0.25) {
		return
	}
	d.Taints = append(d.Taints, resourcev1.DeviceTaint{
		Key:    dpick(s, []string{"example.com/unhealthy", "gpu.nvidia.com/xid"}),
		Value:  dpick(s, []string{"", "48", "true"}),
		Effect: dpick(s, []resourcev1.DeviceTaintEffect{resourcev1.DeviceTaintEffectNoSchedule, resourcev1.DeviceTaintEffectNoExecute, resourcev1.DeviceTaintEffectNone}),
	})
}

func slice(name, driver, pool string, gen, count int64) *resourcev1.ResourceSlice {
	return &resourcev1.ResourceSlice{
		TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceSlice"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceSliceSpec{Driver: driver,
			Pool: resourcev1.ResourcePool{Name: pool, Generation: gen, ResourceSliceCount: count}},
	}
}

func draNode(g *G, n *corev1.Node) {
	s := ds(g)
	if s.network && s.chance(0.6) {
		n.Labels[keyRack] = dpick(s, []string{"r1", "r2"})
	}
	if s.chance(0.65) {
		s.gpuPool(g, n)
	}
	if s.chance(0.3) {
		s.nicPool(g, n)
	}
}

func (s *draState) record(d resourcev1.Device, driver, pool, node string) {
	s.devices = append(s.devices, &draDevice{driver: driver, pool: pool, name: d.Name, node: node,
		shared: ptr.Deref(d.AllowMultipleAllocations, false), counters: len(d.ConsumesCounters) > 0})
}

// gpuPool publishes the node's GPUs: whole GPUs, sometimes partitions consuming shared
// counters, sometimes a device for several allocations, in one or two slices (one of them
// sometimes missing: an incomplete pool), sometimes next to an outdated generation.
func (s *draState) gpuPool(g *G, n *corev1.Node) {
	pool := n.Name
	gen := int64(1 + s.intn(2))
	var devs []resourcev1.Device
	for i := 0; i < 1+s.intn(4); i++ {
		devs = append(devs, s.gpuDevice(fmt.Sprintf("gpu-%d", i), i))
	}
	var counterSlice *resourcev1.ResourceSlice
	if s.partitionable && s.chance(0.7) {
		// a MIG-like GPU: the whole GPU and its partitions share the counters
		cs := "gpu-p-counters"
		counterSlice = slice(n.Name+"-gpu-counters", drvGPU, pool, gen, 0)
		counterSlice.Spec.NodeName = ptr.To(n.Name)
		counterSlice.Spec.SharedCounters = []resourcev1.CounterSet{{Name: cs, Counters: map[string]resourcev1.Counter{
			"memory": {Value: resource.MustParse("40Gi")}, "slices": {Value: resource.MustParse("7")}}}}
		parts := []struct {
			name, mem string
			slices    int
		}{{"gpu-p", "40Gi", 7}, {"gpu-p-3g", "20Gi", 3}, {"gpu-p-2g", "10Gi", 2}, {"gpu-p-1g-a", "5Gi", 1}, {"gpu-p-1g-b", "5Gi", 1}}
		for _, p := range parts {
			if p.name != "gpu-p" && s.chance(0.25) {
				continue
			}
			d := resourcev1.Device{Name: p.name,
				Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
					"productName":                     strAttr("NVIDIA-A100-SXM4-40GB"),
					"architecture":                    strAttr("Ampere"),
					"cudaComputeCapability":           verAttr("8.0.0"),
					"index":                           intAttr(9),
					"profile":                         strAttr(fmt.Sprintf("%dg", p.slices)),
					"resource.kubernetes.io/pcieRoot": strAttr(dpick(s, pcieRoots)),
				},
				Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": capOf(p.mem)},
				ConsumesCounters: []resourcev1.DeviceCounterConsumption{{CounterSet: cs, Counters: map[string]resourcev1.Counter{
					"memory": {Value: resource.MustParse(p.mem)}, "slices": {Value: *resource.NewQuantity(int64(p.slices), resource.DecimalSI)}}}},
			}
			s.maybeTaint(&d)
			devs = append(devs, d)
		}
	}
	if s.consumable && s.chance(0.6) {
		d := s.gpuDevice("gpu-shared", 8)
		d.AllowMultipleAllocations = ptr.To(true)
		c := d.Capacity["memory"]
		c.Value = resource.MustParse("40Gi")
		switch s.intn(3) {
		case 0: // any amount up to the capacity
		case 1:
			c.RequestPolicy = &resourcev1.CapacityRequestPolicy{Default: ptr.To(resource.MustParse("10Gi")),
				ValidRange: &resourcev1.CapacityRequestPolicyRange{Min: ptr.To(resource.MustParse("1Gi")),
					Max: ptr.To(resource.MustParse("20Gi")), Step: ptr.To(resource.MustParse("1Gi"))}}
		case 2:
			c.RequestPolicy = &resourcev1.CapacityRequestPolicy{Default: ptr.To(resource.MustParse("10Gi")),
				ValidValues: []resource.Quantity{resource.MustParse("5Gi"), resource.MustParse("10Gi"), resource.MustParse("20Gi")}}
		}
		d.Capacity["memory"] = c
		devs = append(devs, d)
	}
	// one slice, or the devices split over two (by name, as a driver might)
	nslices := 1
	if len(devs) > 1 && s.chance(0.3) {
		nslices = 2
	}
	count := int64(nslices)
	if counterSlice != nil {
		count++
		counterSlice.Spec.Pool.ResourceSliceCount = count
	}
	var slices []*resourcev1.ResourceSlice
	for k := 0; k < nslices; k++ {
		sl := slice(fmt.Sprintf("%s-gpu-%c", n.Name, 'a'+k), drvGPU, pool, gen, count)
		sl.Spec.NodeName = ptr.To(n.Name)
		for i := k; i < len(devs); i += nslices {
			sl.Spec.Devices = append(sl.Spec.Devices, devs[i])
		}
		slices = append(slices, sl)
	}
	if counterSlice != nil {
		slices = append(slices, counterSlice)
	}
	if nslices == 2 && len(slices[1].Spec.Devices) > 0 && s.chance(0.06) {
		// a driver bug: the same device name in both slices makes the pool invalid
		slices[1].Spec.Devices[0].Name = slices[0].Spec.Devices[0].Name
	}
	if len(slices) > 1 && s.chance(0.1) {
		drop := s.intn(len(slices)) // incomplete: one slice not published yet
		slices = append(slices[:drop], slices[drop+1:]...)
	} else {
		for _, sl := range slices {
			for _, d := range sl.Spec.Devices {
				s.record(d, drvGPU, pool, n.Name)
			}
		}
	}
	if gen > 1 && s.chance(0.3) {
		// the previous generation, still there: ignored
		old := slice(n.Name+"-gpu-old", drvGPU, pool, gen-1, 1)
		old.Spec.NodeName = ptr.To(n.Name)
		old.Spec.Devices = []resourcev1.Device{s.gpuDevice("gpu-old", 7)}
		slices = append(slices, old)
	}
	for _, sl := range slices {
		g.Case.Others = append(g.Case.Others, sl)
	}
}

func (s *draState) nicDevice(name string, i int) resourcev1.Device {
	d := resourcev1.Device{Name: name, Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
		"resource.kubernetes.io/pcieRoot": strAttr(dpick(s, pcieRoots)),
		"numa":                            intAttr(int64(s.intn(2))),
		"speed":                           intAttr(int64(dpick(s, []int{25, 100}))),
	}}
	s.maybeTaint(&d)
	return d
}

func (s *draState) nicPool(g *G, n *corev1.Node) {
	sl := slice(n.Name+"-nic", drvNIC, n.Name+"-nics", 1, 1)
	sl.Spec.NodeName = ptr.To(n.Name)
	for i := 0; i < 1+s.intn(3); i++ {
		d := s.nicDevice(fmt.Sprintf("nic-%d", i), i)
		sl.Spec.Devices = append(sl.Spec.Devices, d)
		s.record(d, drvNIC, sl.Spec.Pool.Name, n.Name)
	}
	g.Case.Others = append(g.Case.Others, sl)
}

// ---- claims

var gpuSelectors = []string{
	`device.attributes["gpu.nvidia.com"].productName == "Tesla-T4"`,
	`device.attributes["gpu.nvidia.com"].productName != "Tesla-M40"`,
	`device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("16Gi")) >= 0`,
	`device.attributes["gpu.nvidia.com"].index < 2`,
	`"productName" in device.attributes["gpu.nvidia.com"]`,
	`device.attributes["gpu.nvidia.com"].cudaComputeCapability.isGreaterThan(semver("7.0.0"))`,
	`device.attributes["gpu.nvidia.com"].architecture in ["Turing", "Ampere"]`,
	`has(device.attributes["gpu.nvidia.com"].profile) && device.attributes["gpu.nvidia.com"].profile == "1g"`,
	`device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA")`,
}

var nicSelectors = []string{
	`device.attributes["nic.example.com"].speed >= 100`,
	`device.attributes["nic.example.com"].numa == 0`,
}

var fragileSelectors = []string{
	`device.attributes["example.com"].fast`,
	`device.attributes["gpu.nvidia.com"].productName == "Tesla-T4"`, // no such key on NICs and old drivers
	`device.attributes["gpu.nvidia.com"].profile == "1g"`,
}

// randomSelector compares a random value of a whole GPU with a random bound; guarded
// (has, "in") or not, when it fails at run time on devices without the value (partitions,
// shared GPUs, NICs).
func (s *draState) randomSelector() string {
	var e, guard string
	switch s.intn(5) {
	case 0:
		e = fmt.Sprintf(`device.attributes["gpu.nvidia.com"].eccErrors <= %d`, s.intn(4))
		guard = `has(device.attributes["gpu.nvidia.com"].eccErrors)`
	case 1:
		e = fmt.Sprintf(`device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("%d.%d.0"))`, dpick(s, []int{535, 550, 570}), s.intn(200))
		guard = `has(device.attributes["gpu.nvidia.com"].driverVersion)`
	case 2:
		e = fmt.Sprintf(`device.capacity["gpu.nvidia.com"].cores.compareTo(quantity("%d")) >= 0`, 1024*(1+s.intn(10)))
		guard = `"cores" in device.capacity["gpu.nvidia.com"]`
	case 3:
		e = fmt.Sprintf(`device.capacity["gpu.nvidia.com"].memory.isLessThan(quantity("%s"))`, dpick(s, []string{"12Gi", "15872Mi", "16Gi", "17179869184", "20Gi"}))
		guard = ""
	default:
		e = fmt.Sprintf(`device.attributes["gpu.nvidia.com"].uuid.startsWith("GPU-%x")`, s.intn(16))
		guard = `has(device.attributes["gpu.nvidia.com"].uuid)`
	}
	if guard != "" && (!s.fragile || s.chance(0.6)) {
		return guard + " && " + e
	}
	return e
}

func (s *draState) tolerations() []resourcev1.DeviceToleration {
	if !s.taints || !s.chance(0.4) {
		return nil
	}
	switch s.intn(4) {
	case 0:
		return []resourcev1.DeviceToleration{{Operator: resourcev1.DeviceTolerationOpExists}}
	case 1:
		return []resourcev1.DeviceToleration{{Key: "example.com/unhealthy", Operator: resourcev1.DeviceTolerationOpExists}}
	case 2:
		return []resourcev1.DeviceToleration{{Key: "gpu.nvidia.com/xid", Operator: resourcev1.DeviceTolerationOpEqual, Value: "48", Effect: resourcev1.DeviceTaintEffectNoSchedule}}
	default:
		return []resourcev1.DeviceToleration{{Key: "example.com/unhealthy", Effect: resourcev1.DeviceTaintEffectNoExecute, Operator: resourcev1.DeviceTolerationOpExists}}
	}
}

// exact draws one request's details; admin says adminAccess may be asked for.
func (s *draState) exact(admin bool) *resourcev1.ExactDeviceRequest {
	class := dpick(s, s.classes)
	if s.chance(0.5) {
		class = drvGPU
	}
	e := &resourcev1.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1}
	pool := gpuSelectors
	if class == drvNIC {
		pool = nicSelectors
	}
	for i, n := 0, dpick(s, []int{0, 0, 1, 1, 2}); i < n; i++ {
		expr := dpick(s, pool)
		if class != drvNIC && s.chance(0.25) {
			expr = s.randomSelector()
		}
		if s.fragile && s.chance(0.2) {
			expr = dpick(s, fragileSelectors)
		}
		e.Selectors = append(e.Selectors, sel(expr))
	}
	switch {
	case s.chance(0.08):
		e.AllocationMode, e.Count = resourcev1.DeviceAllocationModeAll, 0
	default:
		e.Count = int64(dpick(s, []int{1, 1, 1, 2, 2, 3}))
	}
	if admin && s.chance(0.3) {
		e.AdminAccess = ptr.To(true)
	}
	e.Tolerations = s.tolerations()
	if s.consumable && s.chance(0.3) {
		e.Capacity = &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{
			"memory": resource.MustParse(dpick(s, []string{"4Gi", "5Gi", "8Gi", "10Gi", "15Gi", "30Gi"}))}}
	}
	return e
}

func (s *draState) sub(name string) resourcev1.DeviceSubRequest {
	e := s.exact(false)
	return resourcev1.DeviceSubRequest{Name: name, DeviceClassName: e.DeviceClassName, Selectors: e.Selectors,
		AllocationMode: e.AllocationMode, Count: e.Count, Tolerations: e.Tolerations, Capacity: e.Capacity}
}

// claimSpec draws what a claim asks for.
func (s *draState) claimSpec(admin bool) resourcev1.ResourceClaimSpec {
	var spec resourcev1.ResourceClaimSpec
	n := dpick(s, []int{1, 1, 1, 2, 2, 3})
	names := []string{"gpu", "nic", "extra"}
	devicesAsked := 0
	for i := 0; i < n; i++ {
		r := resourcev1.DeviceRequest{Name: names[i]}
		if s.chance(0.25) {
			subs := []string{"big", "small", "any"}
			for j, k := 0, 2+s.intn(2); j < k; j++ {
				r.FirstAvailable = append(r.FirstAvailable, s.sub(subs[j]))
			}
			devicesAsked += 2
		} else {
			r.Exactly = s.exact(admin)
			devicesAsked += int(r.Exactly.Count)
		}
		spec.Devices.Requests = append(spec.Devices.Requests, r)
	}
	if (n > 1 || devicesAsked > 1) && s.chance(0.35) {
		c := resourcev1.DeviceConstraint{}
		attr := resourcev1.FullyQualifiedName(dpick(s, []string{"resource.kubernetes.io/pcieRoot", "gpu.nvidia.com/productName", "gpu.nvidia.com/architecture", "nic.example.com/numa"}))
		if s.chance(0.7) {
			c.MatchAttribute = &attr
		} else {
			d := resourcev1.FullyQualifiedName(dpick(s, []string{"gpu.nvidia.com/index", "resource.kubernetes.io/pcieRoot", "gpu.nvidia.com/uuid"}))
			c.DistinctAttribute = &d
		}
		if n > 1 && s.chance(0.4) {
			c.Requests = []string{names[0], names[1]}
			if r := spec.Devices.Requests[1]; len(r.FirstAvailable) > 0 && s.chance(0.5) {
				c.Requests[1] = r.Name + "/" + r.FirstAvailable[0].Name
			}
		}
		spec.Devices.Constraints = append(spec.Devices.Constraints, c)
	}
	return spec
}

func (s *draState) template(ns string, index int) string {
	name := fmt.Sprintf("tpl-%d", index)
	key := ns + "/" + name
	if _, ok := s.templates[key]; !ok {
		t := &resourcev1.ResourceClaimTemplate{
			TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaimTemplate"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec:       resourcev1.ResourceClaimTemplateSpec{Spec: s.claimSpec(ns == nsAdmin)},
		}
		if s.chance(0.2) {
			t.Spec.ObjectMeta.Labels = map[string]string{"app": "train"}
		}
		s.templates[key] = t
		s.order = append(s.order, "t:"+key)
	}
	return name
}

func (s *draState) sharedClaim(ns string, index int) string {
	name := fmt.Sprintf("shared-%d", index)
	key := ns + "/" + name
	if _, ok := s.claims[key]; !ok {
		s.claims[key] = &resourcev1.ResourceClaim{
			TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaim"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec:       s.claimSpec(ns == nsAdmin),
		}
		s.order = append(s.order, "c:"+key)
	}
	return name
}

func (s *draState) uid() types.UID {
	s.uids++
	return types.UID(fmt.Sprintf("0d7a0000-0000-4000-8000-%012d", s.uids))
}

// a pod claim as draPod decides it; draFinish names the object once the pod's namespace is
// final (features registered after this one may move the pod)
type podClaimPlan struct {
	kind  byte // 't' template, 'c' shared claim, 'T' missing template, 'C' missing claim
	index int  // which template or shared claim of the namespace
}

func draPod(g *G, p *corev1.Pod, bound bool) {
	s := ds(g)
	if bound {
		if s.chance(0.35) && len(g.Case.Nodes) > 0 {
			// a running pod holding a claim: allocated in draFinish once its node is known
			p.UID = s.uid()
			if s.admin && s.chance(0.2) {
				p.Namespace = nsAdmin
			}
			s.plans[p] = []podClaimPlan{{kind: 'c', index: s.intn(3)}}
			s.boundPods = append(s.boundPods, p)
		}
		return
	}
	if s.admin && s.chance(0.2) {
		p.Namespace = nsAdmin
	}
	s.pending = append(s.pending, p)
	if s.chance(0.08) {
		// deviceclass.resource.kubernetes.io/<class>: the implicit extended resource
		s.implicit[p] = corev1.ResourceName(resourcev1.ResourceDeviceClassPrefix + dpick(s, []string{drvGPU, "nvidia-m40", drvNIC}))
	}
	if !s.chance(0.45) {
		return
	}
	for i, n := 0, dpick(s, []int{1, 1, 1, 2}); i < n; i++ {
		var pl podClaimPlan
		switch {
		case i > 0 && s.plans[p][0].kind == 'c' && s.chance(0.3):
			pl = s.plans[p][0] // the same shared claim again
		case s.chance(0.04):
			pl.kind = 'T'
		case s.chance(0.03):
			pl.kind = 'C'
		case s.chance(0.3):
			pl.kind, pl.index = 'c', s.intn(3)
		default:
			pl.kind, pl.index = 't', s.intn(4)
		}
		if pl.kind == 'c' && slices.Contains(s.plans[p], pl) && p.UID == "" {
			// the same ResourceClaim twice: PreBind's second write is refused, and when
			// the claim was allocated before, the message names the pod's uid (a
			// Duplicate value in status.reservedFor), which both sides must know
			p.UID = s.uid()
		}
		s.plans[p] = append(s.plans[p], pl)
	}
}

// resolvePlans names each pod's claims: templates and shared claims of its namespace, made
// on first use (in the order pods appear, so the same seed gives the same objects).
func (s *draState) resolvePlans(g *G) {
	for _, p := range g.Case.Pods {
		for i, pl := range s.plans[p] {
			ns := p.Namespace
			if ns == "" {
				ns = metav1.NamespaceDefault
			}
			pc := corev1.PodResourceClaim{Name: fmt.Sprintf("c%d", i)}
			switch pl.kind {
			case 'T':
				pc.ResourceClaimTemplateName = ptr.To("tpl-missing")
			case 'C':
				pc.ResourceClaimName = ptr.To("claim-missing")
			case 'c':
				pc.ResourceClaimName = ptr.To(s.sharedClaim(ns, pl.index))
			case 't':
				pc.ResourceClaimTemplateName = ptr.To(s.template(ns, pl.index))
			}
			if p.Spec.NodeName != "" {
				pc.Name = "held"
				key := ns + "/" + *pc.ResourceClaimName
				if _, taken := s.bound[key]; !taken {
					s.bound[key] = p
				}
			}
			p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, pc)
		}
	}
}

// draContainers: the containers use the pod's claims; some ask for an implicit extended
// resource.
func (s *draState) draContainers(p *corev1.Pod) {
	for _, pc := range p.Spec.ResourceClaims {
		for j := range p.Spec.Containers {
			if j == 0 || s.chance(0.5) {
				p.Spec.Containers[j].Resources.Claims = append(p.Spec.Containers[j].Resources.Claims, corev1.ResourceClaim{Name: pc.Name})
			}
		}
	}
	if name, ok := s.implicit[p]; ok {
		q := resource.MustParse(dpick(s, []string{"1", "1", "2"}))
		c := &p.Spec.Containers[0]
		if c.Resources.Limits == nil {
			c.Resources.Limits = corev1.ResourceList{}
		}
		c.Resources.Limits[name] = q
		if c.Resources.Requests != nil {
			c.Resources.Requests[name] = q.DeepCopy()
		}
	}
}

// draFinish adds the pools that are not node-local, the DeviceTaintRules, the templates and
// shared claims, and the allocations of the claims bound pods hold.
func draFinish(g *G) {
	s := ds(g)
	s.resolvePlans(g)
	for _, p := range s.pending {
		s.draContainers(p)
	}
	if s.network {
		for _, rack := range []string{"r1", "r2"} {
			if !s.chance(0.6) {
				continue
			}
			sl := slice("rack-"+rack, drvGPU, "rack-"+rack, 1, 1)
			sl.Spec.NodeSelector = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: keyRack, Operator: corev1.NodeSelectorOpIn, Values: []string{rack}}}}}}
			for i := 0; i < 1+s.intn(3); i++ {
				sl.Spec.Devices = append(sl.Spec.Devices, s.gpuDevice(fmt.Sprintf("rgpu-%d", i), i))
			}
			g.Case.Others = append(g.Case.Others, sl)
		}
		if s.chance(0.5) {
			sl := slice("everywhere", drvNIC, "fabric", 1, 1)
			sl.Spec.AllNodes = ptr.To(true)
			for i := 0; i < 1+s.intn(2); i++ {
				sl.Spec.Devices = append(sl.Spec.Devices, s.nicDevice(fmt.Sprintf("vnic-%d", i), i))
			}
			g.Case.Others = append(g.Case.Others, sl)
		}
	}
	if s.perDevice && len(g.Case.Nodes) > 0 {
		sl := slice("mixed", drvGPU, "mixed", 1, 1)
		sl.Spec.PerDeviceNodeSelection = ptr.To(true)
		for i := 0; i < 2+s.intn(3); i++ {
			d := s.gpuDevice(fmt.Sprintf("mgpu-%d", i), i)
			switch s.intn(3) {
			case 0:
				d.NodeName = ptr.To(dpick(s, g.Case.Nodes).Name)
			case 1:
				d.AllNodes = ptr.To(true)
			default:
				d.NodeSelector = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: keyRack, Operator: corev1.NodeSelectorOpExists}}}}}
			}
			sl.Spec.Devices = append(sl.Spec.Devices, d)
		}
		g.Case.Others = append(g.Case.Others, sl)
	}
	if s.rules && len(s.devices) > 0 {
		for i, n := 0, 1+s.intn(2); i < n; i++ {
			d := dpick(s, s.devices)
			r := &resourcev1.DeviceTaintRule{
				TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceTaintRule"},
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("rule-%d", i)},
				Spec: resourcev1.DeviceTaintRuleSpec{
					DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr.To(d.driver)},
					Taint: resourcev1.DeviceTaint{Key: "example.com/maintenance",
						Effect: dpick(s, []resourcev1.DeviceTaintEffect{resourcev1.DeviceTaintEffectNoSchedule, resourcev1.DeviceTaintEffectNoExecute, resourcev1.DeviceTaintEffectNone})},
				},
			}
			switch s.intn(3) {
			case 0:
				r.Spec.DeviceSelector.Pool = ptr.To(d.pool)
			case 1:
				r.Spec.DeviceSelector.Pool = ptr.To(d.pool)
				r.Spec.DeviceSelector.Device = ptr.To(d.name)
			}
			g.Case.Others = append(g.Case.Others, r)
		}
	}
	// the allocations of the claims bound pods hold, on their nodes' free devices
	for _, key := range s.order {
		if key[:2] != "c:" {
			continue
		}
		p := s.bound[key[2:]]
		c := s.claims[key[2:]]
		if p == nil {
			s.leftover(g, c)
			continue
		}
		// the devices it may hold: free ones, a share of a device for several allocations
		// (a ShareID, the capacity it consumes), sometimes a partition (its counters then
		// count as consumed, even past the counter set when two such claims took two)
		var free []*draDevice
		for _, d := range s.devices {
			if d.node == p.Spec.NodeName && !d.taken && (!d.counters || s.chance(0.5)) {
				free = append(free, d)
			}
		}
		if len(free) == 0 {
			continue
		}
		for i, d := range free {
			if d.shared && s.chance(0.7) {
				free[0], free[i] = free[i], free[0] // a share of it, more often
				break
			}
		}
		alloc := &resourcev1.AllocationResult{NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{p.Spec.NodeName}}}}}}}
		r0 := c.Spec.Devices.Requests[0]
		request := r0.Name
		if len(r0.FirstAvailable) > 0 {
			request += "/" + r0.FirstAvailable[0].Name
		}
		admin := r0.Exactly != nil && ptr.Deref(r0.Exactly.AdminAccess, false)
		for i, n := 0, 1+s.intn(min(2, len(free))); i < n; i++ {
			d := free[i]
			res := resourcev1.DeviceRequestAllocationResult{Request: request, Driver: d.driver, Pool: d.pool, Device: d.name}
			switch {
			case admin:
				res.AdminAccess = ptr.To(true) // does not make the device busy
			case d.shared && s.chance(0.8):
				s.shares++
				res.ShareID = ptr.To(types.UID(fmt.Sprintf("5a1e0000-0000-4000-8000-%012d", s.shares)))
				if s.chance(0.8) {
					res.ConsumedCapacity = map[resourcev1.QualifiedName]resource.Quantity{
						"memory": resource.MustParse(dpick(s, []string{"5Gi", "10Gi", "20Gi"}))}
				}
			default:
				d.taken = true
			}
			alloc.Devices.Results = append(alloc.Devices.Results, res)
		}
		c.Status.Allocation = alloc
		if s.binding(g).Float64() < 0.3 {
			s.bindingState(c, s.binding(g).Intn(3))
		}
		c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: p.Name, UID: p.UID}}
		if s.chance(0.7) {
			c.Finalizers = []string{resourcev1.Finalizer}
		}
	}
	for _, key := range s.order {
		switch key[:2] {
		case "t:":
			g.Case.Others = append(g.Case.Others, s.templates[key[2:]])
		case "c:":
			g.Case.Others = append(g.Case.Others, s.claims[key[2:]])
		}
	}
}

// binding is the random source of allocations' binding states and leftover claims (its
// own, so adding them left the other draws of this feature as they were)
func (s *draState) binding(g *G) *rand.Rand {
	if s.bindRand == nil {
		s.bindRand = rand.New(rand.NewSource(g.Case.Seed*7919 + 104729))
	}
	return s.bindRand
}

// leftover sometimes allocates a shared claim no bound pod holds: a claim left allocated on a
// node's free device (no reservedFor), mostly with a binding that failed or timed out, so
// that Filter finds it available on no node and PostFilter deallocates it.
func (s *draState) leftover(g *G, c *resourcev1.ResourceClaim) {
	r := s.binding(g)
	if len(g.Case.Nodes) == 0 || r.Float64() >= 0.25 {
		return
	}
	node := g.Case.Nodes[r.Intn(len(g.Case.Nodes))].Name
	r0 := c.Spec.Devices.Requests[0]
	if r0.Exactly != nil && ptr.Deref(r0.Exactly.AdminAccess, false) {
		return
	}
	var d *draDevice
	for _, x := range s.devices {
		if x.node == node && !x.taken && !x.counters && !x.shared {
			d = x
			break
		}
	}
	if d == nil {
		return
	}
	d.taken = true
	request := r0.Name
	if len(r0.FirstAvailable) > 0 {
		request += "/" + r0.FirstAvailable[0].Name
	}
	c.Status.Allocation = &resourcev1.AllocationResult{
		NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}},
		Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
			{Request: request, Driver: d.driver, Pool: d.pool, Device: d.name}}},
	}
	s.bindingState(c, []int{0, 0, 1, 1, 2}[r.Intn(5)])
}

// bindingState makes an allocation one of devices with binding conditions
// (DRADeviceBindingConditions) whose binding failed (state 0: a bindingFailureConditions
// condition True in status.devices; allocationTimestamp in the past or far ahead), timed out
// (1: allocationTimestamp years ago, long before now minus bindingTimeout; conditions not met)
// or is done (2: every condition True). Never pending: kube-scheduler's PreBind would wait
// for it up to bindingTimeout. Filter finds a failed or timed-out claim available on no node.
func (s *draState) bindingState(c *resourcev1.ResourceClaim, state int) {
	r := s.bindRand
	past := metav1.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	future := metav1.NewTime(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))
	alloc := c.Status.Allocation
	alloc.AllocationTimestamp = &past
	if state == 0 && r.Intn(2) == 0 {
		alloc.AllocationTimestamp = &future
	}
	cond := func(t string, st metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: st, Reason: reason, Message: msg, LastTransitionTime: past}
	}
	for i := range alloc.Devices.Results {
		res := &alloc.Devices.Results[i]
		if i > 0 && r.Intn(2) == 0 {
			continue // a device without binding conditions beside it
		}
		res.BindingConditions = []string{"example.com/attached"}
		res.BindingFailureConditions = []string{"example.com/attach-failed"}
		st := resourcev1.AllocatedDeviceStatus{Driver: res.Driver, Pool: res.Pool, Device: res.Device}
		if res.ShareID != nil {
			st.ShareID = ptr.To(string(*res.ShareID))
		}
		switch state {
		case 0:
			st.Conditions = []metav1.Condition{cond("example.com/attach-failed", metav1.ConditionTrue, "FabricDown",
				[]string{"", "link down", `port "p1" is "down"`}[r.Intn(3)])}
		case 1:
			if r.Intn(2) == 0 {
				continue // no status entry at all
			}
			st.Conditions = []metav1.Condition{cond("example.com/attached", metav1.ConditionFalse, "Attaching", "")}
		default:
			st.Conditions = []metav1.Condition{cond("example.com/attached", metav1.ConditionTrue, "Attached", "")}
		}
		c.Status.Devices = append(c.Status.Devices, st)
	}
}
