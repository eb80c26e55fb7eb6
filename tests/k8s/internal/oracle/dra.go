package oracle

// Dynamic Resource Allocation around kube-scheduler: what kube-controller-manager's
// resource-claim controller and the API server do for the DynamicResources plugin, so that
// the real plugin schedules as on a real cluster.
//
//   - Claims from templates: every pod (bound or pending) whose spec.resourceClaims names a
//     ResourceClaimTemplate and whose status.resourceClaimStatuses has no entry for it gets its
//     claim before the scheduler starts, as the controller makes it ("<pod>-<claim>-" plus
//     five characters, the template's spec, labels and annotations, the pod-claim-name
//     annotation, the pod as controller) and the entry in the pod's status. A missing template
//     makes no claim: the pod waits in DynamicResources' PreEnqueue, as on a real cluster.
//   - generateName: the API server's names are random; here the five characters are a hash
//     (GeneratedName, the contract with gpusched in docs/testing.md), so both sides name the
//     claims of templates and of extended resources alike.
//   - A pod kube-scheduler deletes (a preemption victim) leaves its claims as the controller
//     and the garbage collector leave them: its reservation removed; a claim no longer
//     reserved that kube-scheduler allocated (its delete-protection finalizer) deallocated;
//     the claims the pod owns deleted.
//   - Each bound pod's devices are read from its claims when it binds (Outcome.Claims).

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"

	"gpulabel.test/k8s/internal/objects"
	"gpulabel.test/k8s/internal/report"
)

var claimGVR = resourcev1.SchemeGroupVersion.WithResource("resourceclaims")

// the API server's names.SimpleNameGenerator: generateName is cut to 63 - 5 characters
const maxGeneratedBase = 58

// alphabet of Kubernetes' rand.String: no vowels, no look-alike characters
const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// GeneratedName is generateName expanded as the API server would, but deterministically:
// the base (cut to 58 characters) plus five characters of the safe alphabet taken from the
// 64-bit FNV-1a hash of namespace, a zero byte, the base and the attempt (uint32, little
// endian), least significant digit (base 27) first; the first attempt (0, 1, ...) whose name
// taken() says is free wins.
func GeneratedName(ns, generateName string, taken func(name string) bool) string {
	base := generateName
	if len(base) > maxGeneratedBase {
		base = base[:maxGeneratedBase]
	}
	var name string
	for attempt := uint32(0); attempt < 1000; attempt++ {
		h := fnv.New64a()
		h.Write([]byte(ns))
		h.Write([]byte{0})
		h.Write([]byte(base))
		var a [4]byte
		binary.LittleEndian.PutUint32(a[:], attempt)
		h.Write(a[:])
		v := h.Sum64()
		var sfx [5]byte
		for i := range sfx {
			sfx[i] = safeAlphabet[v%27]
			v /= 27
		}
		name = base + string(sfx[:])
		if !taken(name) {
			break
		}
	}
	return name
}

// TemplateClaimGenerateName is the resource-claim controller's generateName for a pod's claim
// from a template: "<pod>-<claim>-", both parts cut in proportion (and without the last
// dash) when that is longer than 57 characters.
func TemplateClaimGenerateName(pod, claim string) string {
	gen := pod + "-" + claim + "-"
	const maxBaseLen = 57
	if len(gen) > maxBaseLen {
		gen = pod[:len(pod)*maxBaseLen/len(gen)] + "-" + claim[:len(claim)*maxBaseLen/len(gen)]
	}
	return gen
}

// claimController makes the claims of the pods' templates (see the package comment) and
// records them in the pods' status; it returns the new claims.
func claimController(c *objects.Cluster) []runtime.Object {
	templates := map[string]*resourcev1.ResourceClaimTemplate{}
	names := map[string]bool{} // ns/name of every claim
	for _, o := range c.Others {
		switch t := o.(type) {
		case *resourcev1.ResourceClaimTemplate:
			templates[t.Namespace+"/"+t.Name] = t
		case *resourcev1.ResourceClaim:
			names[t.Namespace+"/"+t.Name] = true
		}
	}
	var out []runtime.Object
	for _, p := range c.Pods {
		if terminal(p) {
			continue
		}
		for _, pc := range p.Spec.ResourceClaims {
			if pc.ResourceClaimTemplateName == nil || hasClaimStatus(p, pc.Name) {
				continue
			}
			t := templates[p.Namespace+"/"+*pc.ResourceClaimTemplateName]
			if t == nil {
				continue // the controller fails; the pod never gets past PreEnqueue
			}
			name := GeneratedName(p.Namespace, TemplateClaimGenerateName(p.Name, pc.Name),
				func(n string) bool { return names[p.Namespace+"/"+n] })
			names[p.Namespace+"/"+name] = true
			ann := map[string]string{}
			for k, v := range t.Spec.Annotations {
				ann[k] = v
			}
			ann[resourcev1.PodResourceClaimAnnotation] = pc.Name
			claim := &resourcev1.ResourceClaim{
				TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaim"},
				ObjectMeta: metav1.ObjectMeta{
					Name: name, Namespace: p.Namespace,
					UID:         types.UID(fmt.Sprintf("claim-%s-%s", p.Namespace, name)),
					Annotations: ann,
					Labels:      t.Spec.Labels,
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod",
						Name: p.Name, UID: p.UID, Controller: ptr.To(true)}},
				},
				Spec: *t.Spec.Spec.DeepCopy(),
			}
			out = append(out, claim)
			p.Status.ResourceClaimStatuses = append(p.Status.ResourceClaimStatuses,
				corev1.PodResourceClaimStatus{Name: pc.Name, ResourceClaimName: ptr.To(name)})
		}
	}
	return out
}

func hasClaimStatus(p *corev1.Pod, podClaim string) bool {
	for _, s := range p.Status.ResourceClaimStatuses {
		if s.Name == podClaim {
			return true
		}
	}
	return false
}

// claimCreateReactor gives the claims kube-scheduler creates (extended resources served by
// DRA) the name and uid the API server would: GeneratedName, and a unique uid.
func (r *run) claimCreateReactor(a clienttesting.Action) (bool, runtime.Object, error) {
	ca, ok := a.(clienttesting.CreateAction)
	if !ok || ca.GetSubresource() != "" {
		return false, nil, nil
	}
	c, ok := ca.GetObject().(*resourcev1.ResourceClaim)
	if !ok {
		return false, nil, nil
	}
	if c.Name == "" && c.GenerateName != "" {
		ns := ca.GetNamespace()
		c.Name = GeneratedName(ns, c.GenerateName, func(n string) bool {
			_, err := r.client.Tracker().Get(claimGVR, ns, n)
			return err == nil
		})
	}
	if c.UID == "" {
		r.mu.Lock()
		r.claimSeq++
		c.UID = types.UID(fmt.Sprintf("claim-created-%d", r.claimSeq))
		r.mu.Unlock()
	}
	// store it here and return once the scheduler's claim informer has it: PreBind polls its
	// assume cache for the claim it created once a second, and on a real cluster the watch
	// event is there within milliseconds
	c.ResourceVersion = r.nextVersion()
	if err := r.client.Tracker().Create(claimGVR, c, ca.GetNamespace()); err != nil {
		return true, nil, err
	}
	deadline := time.Now().Add(r.opts.Timeout)
	for d := 20 * time.Microsecond; time.Now().Before(deadline); d = min(2*d, time.Millisecond) {
		if r.claimsSeen(c.Namespace + "/" + c.Name) {
			break
		}
		time.Sleep(d)
	}
	return true, c.DeepCopy(), nil
}

// releaseClaims does what the resource-claim controller and the garbage collector do once
// pod p is gone; it returns the claims it changed (ns/name), which the scheduler must see
// before the next attempt.
func (r *run) releaseClaims(p *corev1.Pod) []string {
	objs, err := r.client.Tracker().List(claimGVR, resourcev1.SchemeGroupVersion.WithKind("ResourceClaim"), p.Namespace)
	if err != nil {
		return nil
	}
	list, ok := objs.(*resourcev1.ResourceClaimList)
	if !ok {
		return nil
	}
	var changed []string
	for i := range list.Items {
		c := list.Items[i].DeepCopy()
		owned := false
		for _, or := range c.OwnerReferences {
			if or.UID == p.UID && ptr.Deref(or.Controller, false) {
				owned = true
			}
		}
		if owned {
			if r.client.Tracker().Delete(claimGVR, c.Namespace, c.Name) == nil {
				changed = append(changed, c.Namespace+"/"+c.Name)
			}
			continue
		}
		n := len(c.Status.ReservedFor)
		c.Status.ReservedFor = slices.DeleteFunc(c.Status.ReservedFor, func(ref resourcev1.ResourceClaimConsumerReference) bool {
			return ref.APIGroup == "" && ref.Resource == "pods" && ref.UID == p.UID
		})
		if len(c.Status.ReservedFor) == n {
			continue
		}
		if fin := slices.Index(c.Finalizers, resourcev1.Finalizer); len(c.Status.ReservedFor) == 0 && fin >= 0 {
			c.Status.Allocation = nil
			c.Finalizers = slices.Delete(c.Finalizers, fin, fin+1)
		}
		c.ResourceVersion = r.nextVersion()
		if r.client.Tracker().Update(claimGVR, c, c.Namespace) == nil {
			changed = append(changed, c.Namespace+"/"+c.Name)
		}
	}
	return changed
}

// claimsSeen says whether the scheduler's view of claim ns/name agrees with the API's (both
// gone, or the same allocation and reservations).
func (r *run) claimsSeen(key string) bool {
	ns, name, _ := strings.Cut(key, "/")
	var want *resourcev1.ResourceClaim
	if o, err := r.client.Tracker().Get(claimGVR, ns, name); err == nil {
		want = o.(*resourcev1.ResourceClaim)
	}
	for _, f := range r.sched.Profiles {
		m := f.SharedDRAManager()
		if m == nil {
			continue
		}
		have, err := m.ResourceClaims().Get(ns, name)
		if want == nil {
			return err != nil
		}
		if err != nil {
			return false
		}
		return (have.Status.Allocation == nil) == (want.Status.Allocation == nil) &&
			len(have.Status.ReservedFor) == len(want.Status.ReservedFor)
	}
	return true
}

// allocatedSeen says whether DynamicResources' set of allocated devices is the API's: its
// own claim event handler keeps it, which may lag behind the assume cache claimsSeen reads
// (a device freed by a victim's deallocation still counted, or one a failed PreBind stored
// not yet). Dedicated devices only: results without admin access and without a shareID
// (DRAConsumableCapacity is on in v1.37).
func (r *run) allocatedSeen() bool {
	objs, err := r.client.Tracker().List(claimGVR, resourcev1.SchemeGroupVersion.WithKind("ResourceClaim"), "")
	if err != nil {
		return false
	}
	want := map[structured.DeviceID]bool{}
	for _, c := range objs.(*resourcev1.ResourceClaimList).Items {
		if c.Status.Allocation == nil {
			continue
		}
		for _, res := range c.Status.Allocation.Devices.Results {
			if !ptr.Deref(res.AdminAccess, false) && res.ShareID == nil {
				want[structured.MakeDeviceID(res.Driver, res.Pool, res.Device)] = true
			}
		}
	}
	for _, f := range r.sched.Profiles {
		m := f.SharedDRAManager()
		if m == nil {
			continue
		}
		st, err := m.ResourceClaims().GatherAllocatedState()
		if err != nil || st.AllocatedDevices.Len() != len(want) {
			return false
		}
		for id := range st.AllocatedDevices {
			if !want[id] {
				return false
			}
		}
		return true
	}
	return true
}

// settleClaims waits, up to the step's timeout, until the scheduler's view of the claims
// (keys ns/name) and of the allocated devices is the API's; then it goes on regardless, as
// settle does (a late attempt of another pod may hold an allocation in flight).
func (r *run) settleClaims(ctx context.Context, keys []string) {
	deadline := time.Now().Add(r.opts.Timeout)
	for d := 50 * time.Microsecond; time.Now().Before(deadline) && ctx.Err() == nil; d = min(2*d, 2*time.Millisecond) {
		ok := r.allocatedSeen()
		for _, k := range keys {
			ok = ok && r.claimsSeen(k)
		}
		if ok {
			return
		}
		time.Sleep(d)
	}
}

// podClaimDevices reads the devices of the pod's claims from the API, as they are when it
// binds.
func (r *run) podClaimDevices(p *corev1.Pod) []report.ClaimDevice {
	var out []report.ClaimDevice
	for _, n := range podClaimNames(p) {
		o, err := r.client.Tracker().Get(claimGVR, p.Namespace, n)
		if err != nil {
			continue
		}
		c := o.(*resourcev1.ResourceClaim)
		if c.Status.Allocation == nil {
			continue
		}
		for _, res := range c.Status.Allocation.Devices.Results {
			out = append(out, report.ClaimDevice{Claim: p.Namespace + "/" + n, Request: res.Request,
				Driver: res.Driver, Pool: res.Pool, Device: res.Device})
		}
	}
	return out
}

// podClaimNames: the claims pod p names (spec.resourceClaims in order, then its
// extended-resource claim), as far as its status says.
func podClaimNames(p *corev1.Pod) []string {
	var names []string
	for _, pc := range p.Spec.ResourceClaims {
		switch {
		case pc.ResourceClaimName != nil:
			names = append(names, *pc.ResourceClaimName)
		default:
			for _, s := range p.Status.ResourceClaimStatuses {
				if s.Name == pc.Name && s.ResourceClaimName != nil {
					names = append(names, *s.ResourceClaimName)
				}
			}
		}
	}
	if s := p.Status.ExtendedResourceClaimStatus; s != nil && s.ResourceClaimName != "" {
		names = append(names, s.ResourceClaimName)
	}
	return names
}

// seenByScheduler: the pod has been popped and is being attempted.
func (r *run) seenByScheduler(p *corev1.Pod) bool {
	for _, q := range r.sched.SchedulingQueue.InFlightPods() {
		if q.UID == p.UID {
			return true
		}
	}
	return false
}

// nextVersion is the next resourceVersion the oracle gives a claim.
func (r *run) nextVersion() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.claimRV++
	return strconv.FormatInt(r.claimRV, 10)
}

// claimVersionReactor writes claims as the API server does: every claim written gets a new
// metadata.resourceVersion (the fake tracker gives none, and DynamicResources' assume cache
// orders a claim's versions by it), and an update is checked first (claimUpdateCheck).
func (r *run) claimVersionReactor(a clienttesting.Action) (bool, runtime.Object, error) {
	// by verb: CreateAction and UpdateAction are the same interface
	switch act := a.(type) {
	case clienttesting.CreateAction:
		c, ok := act.GetObject().(*resourcev1.ResourceClaim)
		if !ok {
			return false, nil, nil
		}
		if a.GetVerb() == "create" {
			c.ResourceVersion = r.nextVersion()
			return false, nil, nil
		}
		r.claimMu.Lock()
		defer r.claimMu.Unlock()
		if err := r.claimUpdateCheck(a.GetNamespace(), a.GetSubresource(), c); err != nil {
			return true, nil, err
		}
		c.ResourceVersion = r.nextVersion()
		return clienttesting.ObjectReaction(r.client.Tracker())(a)
	case clienttesting.PatchAction:
		r.claimMu.Lock()
		defer r.claimMu.Unlock()
		handled, obj, err := clienttesting.ObjectReaction(r.client.Tracker())(a)
		if err != nil || !handled {
			return handled, obj, err
		}
		c, ok := obj.(*resourcev1.ResourceClaim)
		if !ok {
			return handled, obj, err
		}
		c = c.DeepCopy()
		c.ResourceVersion = r.nextVersion()
		if err := r.client.Tracker().Update(claimGVR, c, c.Namespace); err != nil {
			return true, nil, err
		}
		return true, c, nil
	}
	return false, nil, nil
}

// claimUpdateCheck refuses what the real API server refuses of the claim updates
// kube-scheduler makes (the fake tracker takes any): a resourceVersion that is not the stored
// one (a conflict: PreBind writing a claim from a stale copy, as for a pod naming one claim
// twice), and a status whose reservedFor names one uid twice (status.reservedFor is a map
// keyed by uid; the declarative validation's Duplicate error, each later entry named).
func (r *run) claimUpdateCheck(ns, subresource string, c *resourcev1.ResourceClaim) error {
	o, err := r.client.Tracker().Get(claimGVR, ns, c.Name)
	if err != nil {
		return nil // the tracker's NotFound
	}
	if old := o.(*resourcev1.ResourceClaim); c.ResourceVersion != "" && c.ResourceVersion != old.ResourceVersion {
		return apierrors.NewConflict(claimGVR.GroupResource(), c.Name,
			errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}
	if subresource != "status" {
		return nil
	}
	var errs field.ErrorList
	path := field.NewPath("status", "reservedFor")
	for j, ref := range c.Status.ReservedFor {
		for _, prev := range c.Status.ReservedFor[:j] {
			if prev.UID == ref.UID {
				errs = append(errs, field.Duplicate(path.Index(j), ref))
				break
			}
		}
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: resourcev1.GroupName, Kind: "ResourceClaim"}, c.Name, errs)
	}
	return nil
}
