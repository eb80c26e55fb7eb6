// Package objects reads manifest files (YAML or JSON, one or many documents, v1 Lists) into
// the typed API objects kube-scheduler works on, and makes them what the API server would
// store: defaulted (v1 defaulting functions), validated (Pods and Nodes, as on create),
// priorities resolved (the Priority admission plugin), UIDs and namespaces filled in.
//
// Input order is kept: it is the order in which pods enter the queue and the cluster.
package objects

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/core/validation"

	// the API groups whose v1 defaulting functions the objects get
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
)

// Cluster is what the files hold, in input order.
type Cluster struct {
	Nodes           []*corev1.Node
	Pods            []*corev1.Pod // bound (spec.nodeName) and pending, input order
	PriorityClasses []*schedulingv1.PriorityClass
	RuntimeClasses  []*nodev1.RuntimeClass
	Namespaces      []*corev1.Namespace
	Others          []runtime.Object // other kinds the default plugins read (PVCs, PDBs, ...)
	Warnings        []string
}

// kinds kube-scheduler's default profile reads, besides Nodes, Pods, Namespaces and
// PriorityClasses (the latter only for admission here): they go into the fake API as they are.
var schedulerKinds = map[string]bool{
	"Service": true, "ReplicationController": true, "ReplicaSet": true, "StatefulSet": true,
	"PersistentVolume": true, "PersistentVolumeClaim": true, "StorageClass": true,
	"CSINode": true, "CSIDriver": true, "CSIStorageCapacity": true, "VolumeAttachment": true,
	"PodDisruptionBudget": true, "ResourceClaim": true, "ResourceSlice": true,
	"DeviceClass": true, "DeviceTaintRule": true,
	// not read by kube-scheduler but by the resource-claim controller the oracle plays
	"ResourceClaimTemplate": true,
}

// the cluster-scoped ones among schedulerKinds (the others are namespaced)
var clusterScoped = map[string]bool{
	"PersistentVolume": true, "StorageClass": true, "CSINode": true, "CSIDriver": true,
	"VolumeAttachment": true, "ResourceSlice": true, "DeviceClass": true, "DeviceTaintRule": true,
}

// built-in PriorityClasses every cluster has
var systemClasses = map[string]int32{
	"system-cluster-critical": 2000000000,
	"system-node-critical":    2000001000,
}

type loader struct {
	c        *Cluster
	podNames map[string]string // ns/name -> where it was defined
	nodeSeen map[string]string
	nsSeen   map[string]bool
	uid      int
}

// Load reads the files and directories (their *.yaml, *.yml, *.json files in name order;
// "-" is standard input) and returns the cluster, or the first error naming the file.
func Load(paths []string) (*Cluster, error) {
	l := &loader{c: &Cluster{}, podNames: map[string]string{}, nodeSeen: map[string]string{},
		nsSeen: map[string]bool{}}
	for _, p := range paths {
		files, err := expand(p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if err := l.file(f); err != nil {
				return nil, err
			}
		}
	}
	if err := l.finish(); err != nil {
		return nil, err
	}
	return l.c, nil
}

func expand(p string) ([]string, error) {
	if p == "-" {
		return []string{p}, nil
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read: %w", p, unwrapPath(err))
	}
	if !st.IsDir() {
		return []string{p}, nil
	}
	ents, err := os.ReadDir(p)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read: %w", p, unwrapPath(err))
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || strings.HasPrefix(n, ".") {
			continue
		}
		if strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml") || strings.HasSuffix(n, ".json") {
			out = append(out, filepath.Join(p, n))
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no *.yaml, *.yml or *.json files in the directory", p)
	}
	return out, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (l *loader) file(name string) error {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(os.Stdin)
		name = "STDIN"
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return fmt.Errorf("%s: cannot read: %w", name, unwrapPath(err))
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for doc := 1; ; doc++ {
		var raw runtime.RawExtension
		if err := dec.Decode(&raw); err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("%s: document %d: %v", name, doc, err)
		}
		raw.Raw = bytes.TrimSpace(raw.Raw)
		if len(raw.Raw) == 0 || string(raw.Raw) == "null" {
			continue
		}
		if err := l.object(raw.Raw, fmt.Sprintf("%s: document %d", name, doc), "", ""); err != nil {
			return err
		}
	}
}

// object decodes one object; items of a List (any kind ending in "List" with items) are
// decoded in turn, taking the list's item kind when they name none (PodList items are Pods).
func (l *loader) object(raw []byte, where, defKind, defVersion string) error {
	var head struct {
		APIVersion string          `json:"apiVersion"`
		Kind       string          `json:"kind"`
		Items      []jsonRawObject `json:"items"`
	}
	if err := jsonUnmarshal(raw, &head); err != nil {
		return fmt.Errorf("%s: expected a Kubernetes object: %v", where, err)
	}
	if head.Kind == "" && defKind != "" {
		head.Kind, head.APIVersion = defKind, defVersion
		raw = withKind(raw, defKind, defVersion)
	}
	if head.Kind == "" {
		return fmt.Errorf("%s: kind: Required value: kind not set", where)
	}
	if strings.HasSuffix(head.Kind, "List") {
		item := strings.TrimSuffix(head.Kind, "List")
		if item == "" {
			item = ""
		}
		for i, it := range head.Items {
			if err := l.object(it, fmt.Sprintf("%s: items[%d]", where, i), item, head.APIVersion); err != nil {
				return err
			}
		}
		return nil
	}
	if head.APIVersion == "" {
		return fmt.Errorf("%s: apiVersion: Required value: apiVersion not set", where)
	}
	obj, gvk, err := legacyscheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
	if err != nil {
		if runtime.IsNotRegisteredError(err) {
			l.c.Warnings = append(l.c.Warnings, fmt.Sprintf("%s: skipping kind %s (%s): not a built-in kind", where, head.Kind, head.APIVersion))
			return nil
		}
		return fmt.Errorf("%s: %s: %v", where, head.Kind, err)
	}
	legacyscheme.Scheme.Default(obj)
	switch o := obj.(type) {
	case *corev1.Node:
		return l.node(o, where)
	case *corev1.Pod:
		return l.pod(o, where)
	case *schedulingv1.PriorityClass:
		l.c.PriorityClasses = append(l.c.PriorityClasses, o)
	case *nodev1.RuntimeClass:
		l.c.RuntimeClasses = append(l.c.RuntimeClasses, o)
	case *corev1.Namespace:
		// the API server's defaulting: the name label is always there
		if o.Labels == nil {
			o.Labels = map[string]string{}
		}
		o.Labels["kubernetes.io/metadata.name"] = o.Name
		if !l.nsSeen[o.Name] {
			l.nsSeen[o.Name] = true
			l.c.Namespaces = append(l.c.Namespaces, o)
		}
	default:
		if !schedulerKinds[gvk.Kind] {
			l.c.Warnings = append(l.c.Warnings, fmt.Sprintf("%s: skipping kind %s: kube-scheduler does not read it (expand workloads with `gpusched render` first)", where, gvk.Kind))
			return nil
		}
		acc, err := metaAccessor(obj)
		if err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		if acc.GetNamespace() == "" && !clusterScoped[gvk.Kind] {
			// as kubectl creates it: in the default namespace (listers look there)
			acc.SetNamespace(metav1.NamespaceDefault)
		}
		if acc.GetUID() == "" {
			acc.SetUID(l.newUID(gvk.Kind, acc.GetNamespace(), acc.GetName()))
		}
		if err := validateResource(obj); err != nil {
			return fmt.Errorf("%s: the API server would reject %s %s: %v", where, gvk.Kind, named(acc), err)
		}
		l.c.Others = append(l.c.Others, obj)
	}
	return nil
}

func (l *loader) newUID(kind, ns, name string) types.UID {
	l.uid++
	return types.UID(fmt.Sprintf("%08d-%s-%s-%s", l.uid, strings.ToLower(kind), ns, name))
}

func (l *loader) node(n *corev1.Node, where string) error {
	if n.Name == "" {
		return fmt.Errorf("%s: metadata.name: Required value: name is required", where)
	}
	if prev, ok := l.nodeSeen[n.Name]; ok {
		return fmt.Errorf("%s: metadata.name: nodes %q already exists (defined at %s)", where, n.Name, prev)
	}
	l.nodeSeen[n.Name] = where
	if n.UID == "" {
		n.UID = l.newUID("node", "", n.Name)
	}
	var in core.Node
	if err := legacyscheme.Scheme.Convert(n, &in, nil); err != nil {
		return fmt.Errorf("%s: node %s: %v", where, n.Name, err)
	}
	if errs := validation.ValidateNode(&in); len(errs) > 0 {
		return fmt.Errorf("%s: the API server would reject node %s: %v", where, n.Name, errs.ToAggregate())
	}
	l.c.Nodes = append(l.c.Nodes, n)
	return nil
}

func (l *loader) pod(p *corev1.Pod, where string) error {
	if p.Name == "" {
		return fmt.Errorf("%s: metadata.name: Required value: name is required (generateName is not expanded here: use `gpusched render`)", where)
	}
	if p.Namespace == "" {
		p.Namespace = metav1.NamespaceDefault
	}
	key := p.Namespace + "/" + p.Name
	if prev, ok := l.podNames[key]; ok {
		return fmt.Errorf("%s: metadata.name: pods %q already exists in namespace %q (defined at %s)", where, p.Name, p.Namespace, prev)
	}
	l.podNames[key] = where
	if p.UID == "" {
		p.UID = l.newUID("pod", p.Namespace, p.Name)
	}
	if p.Spec.SchedulerName == "" {
		p.Spec.SchedulerName = corev1.DefaultSchedulerName
	}
	l.c.Pods = append(l.c.Pods, p)
	podWhere[p] = where
	return nil
}

// where each pod was read, for messages after loading
var podWhere = map[*corev1.Pod]string{}

// Where names the file and document a pod came from ("" if unknown).
func Where(p *corev1.Pod) string { return podWhere[p] }

// finish resolves priorities as the Priority admission plugin does, validates the pods as on
// create and adds the namespaces the objects use.
func (l *loader) finish() error {
	classes := map[string]*schedulingv1.PriorityClass{}
	var global *schedulingv1.PriorityClass
	for _, pc := range l.c.PriorityClasses {
		if _, ok := classes[pc.Name]; ok {
			return fmt.Errorf("priorityclasses %q defined twice", pc.Name)
		}
		classes[pc.Name] = pc
		if pc.GlobalDefault {
			if global != nil {
				return fmt.Errorf("PriorityClass %s: globalDefault: Invalid value: true: PriorityClass %s is already marked as default; only one default can exist", pc.Name, global.Name)
			}
			global = pc
		}
	}
	runtimes := map[string]*nodev1.RuntimeClass{}
	for _, rc := range l.c.RuntimeClasses {
		runtimes[rc.Name] = rc
	}
	for _, p := range l.c.Pods {
		where := podWhere[p]
		if err := admitPriority(p, classes, global); err != nil {
			return fmt.Errorf("%s: pod %s/%s: %v", where, p.Namespace, p.Name, err)
		}
		if err := admitRuntimeClass(p, runtimes); err != nil {
			return fmt.Errorf("%s: the API server would reject pod %s/%s: %v", where, p.Namespace, p.Name, err)
		}
		mergeLabelKeys(p)
		var in core.Pod
		if err := legacyscheme.Scheme.Convert(p, &in, nil); err != nil {
			return fmt.Errorf("%s: pod %s/%s: %v", where, p.Namespace, p.Name, err)
		}
		opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&in.Spec, nil, &in.ObjectMeta, nil)
		if errs := validation.ValidatePodCreate(&in, opts); len(errs) > 0 {
			return fmt.Errorf("%s: the API server would reject pod %s/%s: %v", where, p.Namespace, p.Name, errs.ToAggregate())
		}
		l.addNamespace(p.Namespace)
	}
	for _, o := range l.c.Others {
		if acc, err := metaAccessor(o); err == nil && acc.GetNamespace() != "" {
			l.addNamespace(acc.GetNamespace())
		}
	}
	return l.canonical()
}

// canonical writes every object to JSON and reads it back, as the API server stores it and
// a watch delivers it: quantities then hold their canonical form ("2000m" becomes 2), which
// code that looks at a quantity's representation (Quantity.AsInt64 in DynamicResources'
// extended-resource requests) sees on a real cluster.
func (l *loader) canonical() error {
	for _, n := range l.c.Nodes {
		var q corev1.Node
		if err := roundTrip(n, &q); err != nil {
			return err
		}
		*n = q
	}
	for _, p := range l.c.Pods {
		var q corev1.Pod
		if err := roundTrip(p, &q); err != nil {
			return err
		}
		*p = q
	}
	for i, o := range l.c.Others {
		q := reflect.New(reflect.TypeOf(o).Elem()).Interface().(runtime.Object)
		if err := roundTrip(o, q); err != nil {
			return err
		}
		l.c.Others[i] = q
	}
	return nil
}

func roundTrip(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

func (l *loader) addNamespace(ns string) {
	if l.nsSeen[ns] {
		return
	}
	l.nsSeen[ns] = true
	l.c.Namespaces = append(l.c.Namespaces, &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: ns, UID: l.newUID("namespace", "", ns), Labels: map[string]string{"kubernetes.io/metadata.name": ns}},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	})
}

// admitPriority is the Priority admission plugin on pod create: spec.priority from the
// class (or the global default class, or 0), and spec.preemptionPolicy from the class.
func admitPriority(p *corev1.Pod, classes map[string]*schedulingv1.PriorityClass, global *schedulingv1.PriorityClass) error {
	var value int32
	var policy *corev1.PreemptionPolicy
	name := p.Spec.PriorityClassName
	switch {
	case name == "" && global != nil && p.Spec.Priority == nil:
		p.Spec.PriorityClassName = global.Name
		value, policy = global.Value, global.PreemptionPolicy
	case name == "":
		value = 0
	default:
		if pc, ok := classes[name]; ok {
			value, policy = pc.Value, pc.PreemptionPolicy
		} else if v, ok := systemClasses[name]; ok {
			value = v
		} else {
			return fmt.Errorf("spec.priorityClassName: no PriorityClass with name %s was found", name)
		}
	}
	// a stored pod (a dump, render's output) already carries its priority: it must agree
	// with a named class, as admission made it; without a class it is kept as it is
	if p.Spec.Priority != nil && *p.Spec.Priority != value && name != "" {
		return fmt.Errorf("spec.priority: Forbidden: the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *p.Spec.Priority, value)
	}
	if p.Spec.Priority == nil {
		v := value
		p.Spec.Priority = &v
	}
	// the class's policy (PriorityClass defaulting makes it PreemptLowerPriority when
	// unset; no class: PreemptLowerPriority too); a different one in the pod is refused
	pol := corev1.PreemptLowerPriority
	if policy != nil {
		pol = *policy
	}
	if p.Spec.PreemptionPolicy != nil && *p.Spec.PreemptionPolicy != pol {
		return fmt.Errorf("spec.preemptionPolicy: Forbidden: the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *p.Spec.PreemptionPolicy, pol)
	}
	p.Spec.PreemptionPolicy = &pol
	return nil
}

// admitRuntimeClass is the RuntimeClass admission plugin on pod create: the class must
// exist; its overhead becomes the pod's (a different one set in the pod is refused, as is an
// overhead without a class that defines one); its scheduling nodeSelector and tolerations are
// merged into the pod's.
func admitRuntimeClass(p *corev1.Pod, classes map[string]*nodev1.RuntimeClass) error {
	var rc *nodev1.RuntimeClass
	if p.Spec.RuntimeClassName != nil {
		rc = classes[*p.Spec.RuntimeClassName]
		if rc == nil {
			return fmt.Errorf("pod rejected: RuntimeClass %q not found", *p.Spec.RuntimeClassName)
		}
	}
	if rc == nil || rc.Overhead == nil {
		if p.Spec.Overhead != nil {
			return fmt.Errorf("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
		}
	} else {
		if len(p.Spec.Overhead) > 0 && !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, p.Spec.Overhead) {
			return fmt.Errorf("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
		}
		p.Spec.Overhead = rc.Overhead.PodFixed.DeepCopy()
	}
	if rc == nil || rc.Scheduling == nil {
		return nil
	}
	for k, v := range rc.Scheduling.NodeSelector {
		if pv, ok := p.Spec.NodeSelector[k]; ok && pv != v {
			return fmt.Errorf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, v, k, pv)
		}
		if p.Spec.NodeSelector == nil {
			p.Spec.NodeSelector = map[string]string{}
		}
		p.Spec.NodeSelector[k] = v
	}
next:
	for _, t := range rc.Scheduling.Tolerations {
		for _, have := range p.Spec.Tolerations {
			if apiequality.Semantic.DeepEqual(t, have) {
				continue next
			}
		}
		p.Spec.Tolerations = append(p.Spec.Tolerations, t)
	}
	return nil
}

// mergeLabelKeys does what the pod registry does on create (MatchLabelKeysInPodAffinity, on
// by default): each matchLabelKeys / mismatchLabelKeys key the pod has a label for is appended
// to the term's label selector as key In (value) / key NotIn (value). The scheduler reads only
// the selector.
func mergeLabelKeys(p *corev1.Pod) {
	a := p.Spec.Affinity
	if a == nil {
		return
	}
	merge := func(t *corev1.PodAffinityTerm) {
		if t.LabelSelector == nil {
			return
		}
		add := func(keys []string, op metav1.LabelSelectorOperator) {
			for _, k := range keys {
				if v, ok := p.Labels[k]; ok {
					t.LabelSelector.MatchExpressions = append(t.LabelSelector.MatchExpressions,
						metav1.LabelSelectorRequirement{Key: k, Operator: op, Values: []string{v}})
				}
			}
		}
		add(t.MatchLabelKeys, metav1.LabelSelectorOpIn)
		add(t.MismatchLabelKeys, metav1.LabelSelectorOpNotIn)
	}
	for _, pa := range []*corev1.PodAffinity{a.PodAffinity} {
		if pa == nil {
			continue
		}
		for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			merge(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
		}
		for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			merge(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			merge(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
		}
		for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			merge(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
		}
	}
}
