// Package oracle runs the real kube-scheduler (k8s.io/kubernetes/pkg/scheduler, default
// profile) in-process over a fake clientset and its informers, and schedules a cluster's
// pending pods one at a time in gpusched's queue order: each pod is created, its attempt
// awaited (bound, or unschedulable with its FailedScheduling message; after a successful
// preemption the victims' deletion and exactly one retry), then the next pod follows.
//
// The oracle plays the parts of the API server and the kubelet that scheduling depends on:
// bindings set spec.nodeName (and clear status.nominatedNodeName, as the binding registry
// does), a bound pod gets status.startTime in the order pods enter the cluster, deletions
// are immediate. A pod that stays unschedulable is deleted after its turn, so no later event
// retries it: gpusched's simulate makes one pass over the queue. The scheduling queue's clock
// stands still (retries are the driver's).
//
// The benchmark mode (Options.AllAtOnce) creates every pending pod first and lets the
// scheduler run on its real clock, as scheduler_perf, until its queue has nothing left to
// try. Every wait of either mode is bounded and ends with an error naming what it waited for.
package oracle

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/profile"
	clocktesting "k8s.io/utils/clock/testing"

	"gpulabel.test/k8s/internal/objects"
	"gpulabel.test/k8s/internal/report"
)

// Options of one run.
type Options struct {
	// PercentageOfNodesToScore as in KubeSchedulerConfiguration; 0 is the adaptive default.
	PercentageOfNodesToScore int32
	// Trace: compute every attempt's per-node detail (filters and scores).
	Trace bool
	// Explain: also compute the detail of this pod's attempts (NS/NAME), when not tracing.
	Explain string
	// SchedulerName: only pods with this spec.schedulerName are scheduled (others are left
	// out); "" schedules every pending pod, whatever its schedulerName.
	SchedulerName string
	// Parallelism of the scheduler's filter and score loops (kube-scheduler's default 16).
	Parallelism int32
	// Timeout for one step (a pod's attempt, a retry, the cache catching up).
	Timeout time.Duration
	// AllAtOnce: create every pending pod before the scheduler starts and let it schedule
	// them freely, as scheduler_perf does (benchmark mode: no per-pod waits, no trace, no
	// one-pass guarantee).
	AllAtOnce bool
	// Stall (AllAtOnce): how long the run waits without a pod bound or attempted for the
	// first time before it fails, naming the pods left; 0 is max(10 Timeout, 5 minutes).
	// Also the bound on the informers' first sync (both modes).
	Stall time.Duration
	// Config: a KubeSchedulerConfiguration file (kube-scheduler's --config). Its profiles
	// replace the default one, its percentageOfNodesToScore PercentageOfNodesToScore; a pending
	// pod whose schedulerName names no profile is given the first profile's.
	Config string
}

// Outcome of one pending pod.
type Outcome struct {
	Pod           *corev1.Pod
	Gated         bool
	Scheduled     bool
	Node          string
	Message       string // the FailedScheduling text (first attempt, or the failed retry)
	NominatedNode string
	Victims       []*corev1.Pod // most important first
	PreemptedBy   *Outcome      // set when this pod was bound and later preempted
	Attempts      int
	// GatedBy: the PreEnqueue plugin that keeps a gated pod from being attempted
	// (SchedulingGates, or DynamicResources while a claim is missing)
	GatedBy string
	// Claims: the devices of the pod's claims when it was bound
	Claims []report.ClaimDevice
	// BindNode: the node of the last attempt when it failed in the binding cycle (a PreBind
	// error), which may have left claims allocated there
	BindNode string
}

// Result of a run: outcomes in queue order, and the attempts in the order they happened.
type Result struct {
	Outcomes []*Outcome
	Attempts []*report.Attempt
	Explain  *report.Explain
	// nodes in input order
	NodeNames []string
	// Elapsed: from the scheduler's start to the last outcome (AllAtOnce: to the last bind)
	Elapsed time.Duration
	// Errors (AllAtOnce): attempts that ended in an error rather than unschedulable (a
	// PreBind losing a race for a shared claim), each retried after its backoff
	Errors int
}

// Key names a pod NS/NAME.
func Key(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

// QueueOrder returns the pending pods (no spec.nodeName, not Succeeded/Failed, with the
// wanted schedulerName) by priority, highest first, then input order: kube-scheduler's
// PrioritySort for pods created one after the other, and gpusched's queue.
func QueueOrder(c *objects.Cluster, schedulerName string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" || terminal(p) {
			continue
		}
		if schedulerName != "" && p.Spec.SchedulerName != schedulerName {
			continue
		}
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool { return prio(out[i]) > prio(out[j]) })
	return out
}

func prio(p *corev1.Pod) int32 {
	if p.Spec.Priority == nil {
		return 0
	}
	return *p.Spec.Priority
}

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// a happening the scheduler's goroutines report to the driver
type happening struct {
	kind    string // "attempt", "bound", "failed", "deleted", "preempted"
	pod     *corev1.Pod
	node    string
	status  *fwk.Status
	nominee string
	attempt *report.Attempt
	err     error
	claims  []report.ClaimDevice // "bound": the pod's devices
}

type run struct {
	opts     Options
	cfg      *schedconfig.KubeSchedulerConfiguration // Options.Config, loaded
	client   *fake.Clientset
	sched    *scheduler.Scheduler
	factory  informers.SharedInformerFactory
	ch       chan happening
	ctx      context.Context // the run's: done once Run returns
	mu       sync.Mutex
	events   map[types.UID]string // last FailedScheduling note per pod
	detail   func(p *corev1.Pod) bool
	nodeIdx  map[string]int
	names    []string
	weights  map[string]int64
	clock    *clocktesting.FakeClock
	start    time.Time // status.startTime of the next pod entering the cluster
	byUID    map[types.UID]*Outcome
	selfDel  map[types.UID]bool // deletions the driver makes itself
	attempts map[types.UID]int
	back     *happening // a happening awaitRetry took and hands back to the driver
	// preemption: the pods kube-scheduler deleted since the current pod's first attempt, and
	// the number of victims a preemptor's retry waits for
	deleted []*corev1.Pod
	retryOf map[types.UID]retry
	// claims the victims' deletion changed (dra.go), which a retry waits for
	released []string
	claimSeq int
	turn     int // oneByOne: the index of the pending pod whose turn it is
	claimRV  int64
	// claimMu makes a claim's write (its checks, the tracker's update) one step, as the
	// API server's compare-and-swap
	claimMu sync.Mutex
}

// retry: what a preemptor's next attempt waits for
type retry struct {
	victims int    // DefaultPreemption's "preempting N victims"
	node    string // the nominated node
}

const podStartBase = "2026-01-01T00:00:00Z"

// Run schedules the cluster's pending pods with kube-scheduler and returns the outcomes.
func Run(ctx context.Context, c *objects.Cluster, o Options) (*Result, error) {
	if o.Parallelism == 0 {
		o.Parallelism = 16
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &run{opts: o, ch: make(chan happening, 1<<16), events: map[types.UID]string{},
		nodeIdx: map[string]int{}, byUID: map[types.UID]*Outcome{}, selfDel: map[types.UID]bool{},
		attempts: map[types.UID]int{}, retryOf: map[types.UID]retry{}, ctx: ctx}
	if o.Config != "" {
		cfg, err := LoadConfig(o.Config)
		if err != nil {
			cancel()
			return nil, err
		}
		r.cfg = cfg
	}
	r.start, _ = time.Parse(time.RFC3339, podStartBase)
	r.clock = clocktesting.NewFakeClock(r.start)
	for i, n := range c.Nodes {
		r.nodeIdx[n.Name] = i
		r.names = append(r.names, n.Name)
	}
	r.detail = func(p *corev1.Pod) bool { return o.Trace || (o.Explain != "" && Key(p) == o.Explain) }

	pending := QueueOrder(c, o.SchedulerName)
	// stop the scheduler and wait for its informers, so no goroutine outlives the run
	defer func() {
		cancel()
		if r.factory != nil {
			r.factory.Shutdown()
		}
	}()
	if err := r.setup(ctx, c, pending); err != nil {
		return nil, err
	}
	res := &Result{NodeNames: r.names}
	began := time.Now()
	var err error
	if o.AllAtOnce {
		res.Outcomes, res.Errors, err = r.free(ctx, pending)
	} else {
		res.Outcomes, res.Attempts, err = r.oneByOne(ctx, pending)
		if errors.Is(err, errTimeout) {
			err = fmt.Errorf("%w (pod %d of %d in queue order; %d after it not created)", err, r.turn+1, len(pending), len(pending)-r.turn-1)
		}
	}
	res.Elapsed = time.Since(began)
	if err != nil {
		return nil, err
	}
	if o.Explain != "" {
		res.Explain = explainOf(res, o.Explain, pending)
	}
	return res, nil
}

// setup creates the fake API with every object but the pending pods, builds the scheduler
// with the default profile and starts it once its informers have synced.
func (r *run) setup(ctx context.Context, c *objects.Cluster, pending []*corev1.Pod) error {
	// the plain object tracker: NewClientset's field-managed one builds a REST mapper on
	// every write, which made binding cost more than scheduling (kube-scheduler patches
	// with strategic merge, never apply)
	r.client = fake.NewSimpleClientset() //nolint:staticcheck

	tr := r.client.Tracker()
	add := func(o runtime.Object) error {
		if err := tr.Add(o); err != nil {
			return fmt.Errorf("cannot create %T: %v", o, err)
		}
		return nil
	}
	for _, ns := range c.Namespaces {
		if err := add(ns); err != nil {
			return err
		}
	}
	for _, pc := range c.PriorityClasses {
		if err := add(pc); err != nil {
			return err
		}
	}
	for _, n := range c.Nodes {
		if err := add(n.DeepCopy()); err != nil {
			return err
		}
	}
	for _, o := range c.Others {
		if err := add(o.DeepCopyObject()); err != nil {
			return err
		}
	}
	for _, o := range claimController(c) {
		if err := add(o); err != nil {
			return err
		}
	}
	// every claim in the API has a resourceVersion (the assume cache compares them)
	for _, gvk := range []string{"ResourceClaim"} {
		objs, err := tr.List(claimGVR, resourcev1.SchemeGroupVersion.WithKind(gvk), "")
		if err != nil {
			return err
		}
		for _, o := range objs.(*resourcev1.ResourceClaimList).Items {
			o.ResourceVersion = r.nextVersion()
			if err := tr.Update(claimGVR, &o, o.Namespace); err != nil {
				return err
			}
		}
	}
	for _, o := range ephemeralClaims(c) {
		if err := add(o); err != nil {
			return err
		}
	}
	nbound := 0
	for _, p := range c.Pods {
		if p.Spec.NodeName == "" || terminal(p) {
			continue
		}
		b := p.DeepCopy()
		if b.Status.StartTime == nil {
			b.Status.StartTime = r.nextStart()
		}
		if err := add(b); err != nil {
			return err
		}
		nbound++
	}
	if r.opts.AllAtOnce {
		for _, p := range pending {
			if err := add(r.prepare(p)); err != nil {
				return err
			}
		}
	}

	r.client.PrependReactor("create", "pods", r.bindReactor)
	r.client.PrependReactor("delete", "pods", r.deleteReactor)
	r.client.PrependReactor("update", "persistentvolumes", r.pvUpdateReactor)
	r.client.PrependReactor("update", "persistentvolumeclaims", r.pvcUpdateReactor)
	r.client.PrependReactor("*", "resourceclaims", r.claimVersionReactor)
	r.client.PrependReactor("create", "resourceclaims", r.claimCreateReactor)

	factory := scheduler.NewInformerFactory(r.client, 0, nil)
	r.factory = factory
	pct := r.opts.PercentageOfNodesToScore
	recorders := profile.RecorderFactory(func(string) events.EventRecorderLogger { return &recorder{r: r} })
	logger := klog.FromContext(ctx)
	sopts := []scheduler.Option{scheduler.WithParallelism(r.opts.Parallelism)}
	if !r.opts.AllAtOnce {
		// the queue's clock (backoff expiry, the unschedulable pods' flush) stands still
		// between the oracle's steps: one pass, each retry the driver's own (awaitRetry).
		// The benchmark keeps kube-scheduler's real clock: a pod whose attempt ended in an
		// error waits in the error backoff queue, which only the queue's flush empties once
		// the backoff has expired on that clock (the SchedulerPopFromBackoffQ pop takes the
		// unschedulable pods' backoff queue only); under a clock that never moves it stayed
		// there for good and the run never settled.
		sopts = append(sopts, scheduler.WithClock(r.clock))
	}
	if r.cfg != nil {
		sopts = append(sopts, scheduler.WithProfiles(r.cfg.Profiles...),
			scheduler.WithPercentageOfNodesToScore(r.cfg.PercentageOfNodesToScore))
	} else {
		sopts = append(sopts, scheduler.WithPercentageOfNodesToScore(&pct))
	}
	sched, err := scheduler.New(ctx, r.client, factory, nil, recorders, sopts...)
	if err != nil {
		return fmt.Errorf("kube-scheduler: %v", err)
	}
	r.sched = sched
	r.weights = map[string]int64{}
	for _, f := range sched.Profiles {
		for _, p := range f.ListPlugins().Score.Enabled {
			r.weights[p.Name] = int64(p.Weight)
		}
	}
	if r.opts.AllAtOnce {
		r.wrapFailures()
	} else {
		r.wrap()
	}
	factory.Start(ctx.Done())
	// the informers' first lists take a while on a large cluster under load (GOMAXPROCS=1 on
	// a loaded machine: over 30 s for 10,000 objects): the stall bound, not a step's
	syncCtx, cancelSync := context.WithTimeout(ctx, r.stallAfter())
	defer cancelSync()
	var unsynced []string
	for typ, ok := range factory.WaitForCacheSync(syncCtx.Done()) {
		if !ok {
			unsynced = append(unsynced, typ.String())
		}
	}
	if len(unsynced) > 0 {
		sort.Strings(unsynced)
		return fmt.Errorf("kube-scheduler: %w waiting for the informers of %s to sync", errTimeout, strings.Join(unsynced, ", "))
	}
	if err := sched.WaitForHandlersSync(syncCtx); err != nil {
		return fmt.Errorf("kube-scheduler: %w waiting for its event handlers to sync (%v)", errTimeout, err)
	}
	// the cache holds every node and bound pod before the first pod is queued
	if err := r.until(ctx, "the scheduler cache to hold the cluster", func() bool {
		n, _ := sched.Cache.PodCount()
		return sched.Cache.NodeCount() == len(c.Nodes) && n == nbound
	}); err != nil {
		return err
	}
	_ = logger
	go sched.Run(ctx)
	return nil
}

func (r *run) nextStart() *metav1.Time {
	t := metav1.NewTime(r.start)
	r.start = r.start.Add(time.Second)
	return &t
}

// prepare is the pending pod as created: schedulerName mapped to the default profile (the
// oracle schedules every pending pod, as gpusched simulate does).
func (r *run) prepare(p *corev1.Pod) *corev1.Pod {
	q := p.DeepCopy()
	if r.cfg != nil {
		for _, pr := range r.cfg.Profiles {
			if pr.SchedulerName == q.Spec.SchedulerName {
				return r.created(q)
			}
		}
		q.Spec.SchedulerName = r.cfg.Profiles[0].SchedulerName
		return r.created(q)
	}
	q.Spec.SchedulerName = corev1.DefaultSchedulerName
	return r.created(q)
}

func (r *run) created(q *corev1.Pod) *corev1.Pod {
	if q.CreationTimestamp.IsZero() {
		q.CreationTimestamp = metav1.NewTime(r.start)
	}
	return q
}

// bindReactor is the API server's pods/binding: spec.nodeName set, nominatedNodeName
// cleared, and (as the kubelet would) the pod started.
func (r *run) bindReactor(a clienttesting.Action) (bool, runtime.Object, error) {
	ca, ok := a.(clienttesting.CreateAction)
	if !ok || ca.GetSubresource() != "binding" {
		return false, nil, nil
	}
	b, ok := ca.GetObject().(*corev1.Binding)
	if !ok {
		return true, nil, fmt.Errorf("binding: unexpected %T", ca.GetObject())
	}
	gvr := corev1.SchemeGroupVersion.WithResource("pods")
	obj, err := r.client.Tracker().Get(gvr, ca.GetNamespace(), b.Name, metav1.GetOptions{})
	if err != nil {
		return true, nil, err
	}
	p := obj.(*corev1.Pod).DeepCopy()
	if p.Spec.NodeName != "" {
		return true, nil, apierrors.NewConflict(gvr.GroupResource(), p.Name, fmt.Errorf("pod %s is already assigned to node %q", p.Name, p.Spec.NodeName))
	}
	p.Spec.NodeName = b.Target.Name
	p.Status.NominatedNodeName = ""
	r.mu.Lock()
	p.Status.StartTime = r.nextStart()
	r.mu.Unlock()
	p.Status.Phase = corev1.PodRunning
	if err := r.client.Tracker().Update(gvr, p, p.Namespace, metav1.UpdateOptions{}); err != nil {
		return true, nil, err
	}
	r.send(happening{kind: "bound", pod: p, node: b.Target.Name, claims: r.podClaimDevices(p)})
	return true, b, nil
}

// deleteReactor notes the deletions kube-scheduler makes (preemption victims).
func (r *run) deleteReactor(a clienttesting.Action) (bool, runtime.Object, error) {
	da, ok := a.(clienttesting.DeleteAction)
	if !ok {
		return false, nil, nil
	}
	gvr := corev1.SchemeGroupVersion.WithResource("pods")
	obj, err := r.client.Tracker().Get(gvr, da.GetNamespace(), da.GetName(), metav1.GetOptions{})
	if err == nil {
		p := obj.(*corev1.Pod).DeepCopy()
		r.mu.Lock()
		self := r.selfDel[p.UID]
		if !self {
			r.deleted = append(r.deleted, p)
		}
		r.mu.Unlock()
		if !self {
			released := r.releaseClaims(p)
			r.mu.Lock()
			r.released = append(r.released, released...)
			r.mu.Unlock()
			r.send(happening{kind: "deleted", pod: p})
		}
	}
	return false, nil, nil
}

// wrap puts the oracle around the scheduler's SchedulePod (to see each attempt and compute
// its detail on the attempt's snapshot) and FailureHandler (to see each failure).
func (r *run) wrap() {
	schedulePod := r.sched.SchedulePod
	r.sched.SchedulePod = func(ctx context.Context, f framework.Framework, state fwk.CycleState, pi *framework.QueuedPodInfo) (scheduler.ScheduleResult, error) {
		r.mu.Lock()
		rt, isRetry := r.retryOf[pi.Pod.UID]
		delete(r.retryOf, pi.Pod.UID)
		if !isRetry {
			r.deleted = nil
			r.released = nil
		}
		r.mu.Unlock()
		if isRetry {
			r.settle(ctx, f, pi, rt)
		}
		var a *report.Attempt
		if r.detail(pi.Pod) {
			a = r.attemptDetail(ctx, f, pi.Pod)
		} else {
			a = &report.Attempt{Pod: Key(pi.Pod), Priority: prio(pi.Pod), NominatedNode: pi.Pod.Status.NominatedNodeName}
		}
		res, err := schedulePod(ctx, f, state, pi)
		r.send(happening{kind: "attempt", pod: pi.Pod, attempt: a, node: res.SuggestedHost, err: err})
		return res, err
	}
	failure := r.sched.FailureHandler
	r.sched.FailureHandler = func(ctx context.Context, f framework.Framework, pi *framework.QueuedPodInfo, st *fwk.Status, ni *fwk.NominatingInfo, start time.Time) {
		failure(ctx, f, pi, st, ni, start)
		h := happening{kind: "failed", pod: pi.Pod, status: st}
		if ni != nil && ni.Mode() == fwk.ModeOverride {
			h.nominee = ni.NominatedNodeName
		}
		if h.nominee != "" {
			n := 0
			if m := reVictims.FindStringSubmatch(st.Message()); m != nil {
				n, _ = strconv.Atoi(m[1])
			}
			r.mu.Lock()
			r.retryOf[pi.Pod.UID] = retry{victims: n, node: h.nominee}
			r.mu.Unlock()
		}
		r.send(h)
	}
}

// wrapFailures is the benchmark's only hook: failures end a pod's count too.
func (r *run) wrapFailures() {
	failure := r.sched.FailureHandler
	r.sched.FailureHandler = func(ctx context.Context, f framework.Framework, pi *framework.QueuedPodInfo, st *fwk.Status, ni *fwk.NominatingInfo, start time.Time) {
		failure(ctx, f, pi, st, ni, start)
		r.send(happening{kind: "failed", pod: pi.Pod, status: st})
	}
}

// DefaultPreemption's PostFilter message on success
var reVictims = regexp.MustCompile(`preempting (\d+) victims`)

// settle runs before a preemptor's retry and makes it see the cluster as it is once the
// preemption is over, as on a real cluster where the victims take seconds to terminate: it
// waits until the victims kube-scheduler set out to delete are gone from its cache and
// refreshes the attempt's snapshot (taken before), and gives the queued pod the
// status.nominatedNodeName the failure handler has patched (the retry may have been popped
// before that update arrived).
func (r *run) settle(ctx context.Context, f framework.Framework, pi *framework.QueuedPodInfo, rt retry) {
	deadline := time.Now().Add(r.opts.Timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		r.mu.Lock()
		victims := append([]*corev1.Pod(nil), r.deleted...)
		r.mu.Unlock()
		ok := len(victims) >= rt.victims
		for _, v := range victims {
			if r.inCache(v) {
				ok = false
			}
		}
		r.mu.Lock()
		released := append([]string(nil), r.released...)
		r.mu.Unlock()
		for _, c := range released {
			if !r.claimsSeen(c) {
				ok = false
			}
		}
		if len(released) > 0 && !r.allocatedSeen() {
			ok = false
		}
		if ok {
			break
		}
		time.Sleep(200 * time.Microsecond)
	}
	if snap, ok := f.SnapshotSharedLister().(*internalcache.Snapshot); ok {
		_ = r.sched.Cache.UpdateSnapshot(klog.FromContext(ctx), snap)
	}
	if pi.Pod.Status.NominatedNodeName != rt.node {
		p := pi.Pod.DeepCopy()
		p.Status.NominatedNodeName = rt.node
		if info, err := framework.NewPodInfo(p); err == nil {
			pi.PodInfo = info
		}
	}
}

// recorder takes the scheduler's events: FailedScheduling notes are the messages.
type recorder struct{ r *run }

func (e *recorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...interface{}) {
	p, ok := regarding.(*corev1.Pod)
	if !ok {
		return
	}
	msg := fmt.Sprintf(note, args...)
	switch reason {
	case "FailedScheduling":
		e.r.mu.Lock()
		e.r.events[p.UID] = msg
		e.r.mu.Unlock()
	case "Preempted":
		e.r.send(happening{kind: "preempted", pod: p})
	}
}

func (e *recorder) WithLogger(klog.Logger) events.EventRecorderLogger { return e }

func (r *run) failedMessage(p *corev1.Pod, st *fwk.Status) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.events[p.UID]; ok {
		delete(r.events, p.UID)
		return m
	}
	return st.Message()
}

var errTimeout = errors.New("timed out")

// send hands a happening to the driver; once the run is over (the driver gone, the channel
// possibly full) it is dropped, so no scheduler goroutine blocks on it.
func (r *run) send(h happening) {
	select {
	case r.ch <- h:
	case <-r.ctx.Done():
	}
}

func (r *run) next(ctx context.Context, what string) (happening, error) {
	if r.back != nil {
		h := *r.back
		r.back = nil
		return h, nil
	}
	t := time.NewTimer(r.opts.Timeout)
	defer t.Stop()
	select {
	case h := <-r.ch:
		return h, nil
	case <-t.C:
		return happening{}, fmt.Errorf("kube-scheduler: %w waiting for %s", errTimeout, what)
	case <-ctx.Done():
		return happening{}, ctx.Err()
	}
}

func (r *run) until(ctx context.Context, what string, cond func() bool) error {
	deadline := time.Now().Add(r.opts.Timeout)
	for d := 50 * time.Microsecond; !cond(); d = min(2*d, 5*time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-scheduler: %w waiting for %s", errTimeout, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
	return nil
}

func (r *run) inQueue(p *corev1.Pod) bool {
	pods, _ := r.sched.SchedulingQueue.PendingPods()
	for _, q := range pods {
		if q.UID == p.UID {
			return true
		}
	}
	return false
}

func (r *run) inCache(p *corev1.Pod) bool {
	q, err := r.sched.Cache.GetPod(p)
	return err == nil && q != nil
}

func (r *run) confirmed(p *corev1.Pod) bool {
	assumed, err := r.sched.Cache.IsAssumedPod(p)
	return err == nil && !assumed && r.inCache(p)
}

// oneByOne is the oracle proper: each pending pod created, its attempt (and retry) awaited.
func (r *run) oneByOne(ctx context.Context, pending []*corev1.Pod) ([]*Outcome, []*report.Attempt, error) {
	var outs []*Outcome
	var attempts []*report.Attempt
	gvr := corev1.SchemeGroupVersion.WithResource("pods")
	for turn, src := range pending {
		r.turn = turn
		p := r.prepare(src)
		out := &Outcome{Pod: src}
		outs = append(outs, out)
		r.byUID[p.UID] = out
		if _, err := r.client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return nil, nil, fmt.Errorf("create pod %s: %v", Key(p), err)
		}
		// a PreEnqueue plugin (SchedulingGates; DynamicResources while a claim is missing)
		// may keep it out of the active queue: then there is no attempt
		if gated, err := r.awaitQueued(ctx, p); err != nil {
			return nil, nil, err
		} else if gated != "" {
			out.Gated, out.GatedBy = true, gated
			continue
		}
		var cur *report.Attempt
		var victims []*corev1.Pod
		retried, requeues := false, 0
		suggested := "" // the node the current attempt's scheduling cycle chose
		for done := false; !done; {
			h, err := r.next(ctx, "pod "+Key(p))
			if err != nil {
				return nil, nil, err
			}
			if h.pod.UID != p.UID && (h.kind == "attempt" || h.kind == "failed") && r.finished(h.pod) {
				// a pod whose turn is over, already out of the API, requeued by an event
				// of its last attempt (a device freed, a claim changed) and popped before
				// the scheduler saw the deletion: its outcome stays the one recorded
				continue
			}
			if h.pod.UID != p.UID && h.kind != "deleted" && h.kind != "preempted" {
				prev := "not seen before"
				if o, ok := r.byUID[h.pod.UID]; ok {
					prev = fmt.Sprintf("earlier: scheduled=%v node=%s message=%q nominated=%s attempts=%d victims=%d", o.Scheduled, o.Node, o.Message, o.NominatedNode, o.Attempts, len(o.Victims))
				}
				return nil, nil, fmt.Errorf("kube-scheduler: unexpected %s of pod %s while scheduling %s (%s)", h.kind, Key(h.pod), Key(p), prev)
			}
			switch h.kind {
			case "attempt":
				out.Attempts++
				suggested = ""
				if h.err == nil {
					suggested = h.node
				}
				cur = h.attempt
				cur.Attempt = out.Attempts
				attempts = append(attempts, cur)
			case "deleted":
				r.mu.Lock()
				self := r.selfDel[h.pod.UID]
				r.mu.Unlock()
				if !self {
					victims = append(victims, h.pod)
				}
			case "preempted":
			case "bound":
				if cur == nil {
					return nil, nil, fmt.Errorf("kube-scheduler: pod %s bound without an attempt", Key(p))
				}
				out.Scheduled, out.Node, out.Claims = true, h.node, h.claims
				cur.Result = report.Result{Status: report.StatusScheduled, Node: h.node}
				if err := r.until(ctx, "the binding of "+Key(p)+" in the cache", func() bool { return r.confirmed(h.pod) }); err != nil {
					return nil, nil, err
				}
				done = true
			case "failed":
				if cur == nil {
					return nil, nil, fmt.Errorf("kube-scheduler: pod %s failed without an attempt: %v", Key(p), h.status.Message())
				}
				msg := r.failedMessage(h.pod, h.status)
				out.Message = msg
				out.BindNode = suggested
				status := report.StatusUnschedulable
				if !h.status.IsRejected() {
					status = report.StatusError
				}
				cur.Result = report.Result{Status: status, Message: msg, NominatedNode: h.nominee}
				if h.nominee != "" && !retried {
					// preemption: the victims go (asynchronously), then exactly one retry
					out.NominatedNode = h.nominee
					retried = true
					if err := r.awaitRetry(ctx, p, out, &victims); err != nil {
						return nil, nil, err
					}
					cur.Result.Victims = keys(victims)
					r.markVictims(victims, out)
					out.Victims = victims
					continue
				}
				if h.status.IsRejected() && requeues < 64 && (strings.Contains(msg, "deallocation of ResourceClaim completed") ||
					strings.Contains(msg, "deletion of ResourceClaim completed")) {
					// DynamicResources' PostFilter deallocated a claim of the pod (deleted its
					// extended-resource claim): the claim's update requeues it; its next
					// attempt is part of its turn, as the retry after a preemption
					requeues++
					continue
				}
				// unschedulable for good: out of the API, so no later event retries it
				r.mu.Lock()
				r.selfDel[p.UID] = true
				r.mu.Unlock()
				if err := r.client.Tracker().Delete(gvr, p.Namespace, p.Name, metav1.DeleteOptions{}); err != nil {
					return nil, nil, fmt.Errorf("delete pod %s: %v", Key(p), err)
				}
				if err := r.until(ctx, Key(p)+" to leave the queue", func() bool { return !r.inQueue(p) }); err != nil {
					return nil, nil, err
				}
				// a failed PreBind leaves claims written (allocated, then Unreserve's patch):
				// the next pod is attempted once the scheduler has seen them, as on a real
				// cluster where the next pod comes later than a watch event
				if len(p.Spec.ResourceClaims) > 0 {
					var keys []string
					for _, n := range podClaimNames(h.pod) {
						keys = append(keys, p.Namespace+"/"+n)
					}
					r.settleClaims(ctx, keys)
				}
				done = true
			}
		}
	}
	return outs, attempts, nil
}

// finished says whether p's turn is over and the oracle took it out of the API.
func (r *run) finished(p *corev1.Pod) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.selfDel[p.UID]
}

// awaitQueued waits until the new pod is either gated in the queue (it returns the gating
// plugin) or on its way to an attempt (a happening arrived, handed back to the driver, or
// the pod left the queue ungated).
func (r *run) awaitQueued(ctx context.Context, p *corev1.Pod) (string, error) {
	deadline := time.Now().Add(r.opts.Timeout)
	for d := 50 * time.Microsecond; ; d = min(2*d, 2*time.Millisecond) {
		select {
		case h := <-r.ch:
			r.back = &h
			return "", nil
		default:
		}
		qi, ok := r.sched.SchedulingQueue.GetPod(p.Name, p.Namespace, p.Spec.SchedulingGroup)
		if ok && qi.Gated() {
			return qi.QueueingParams.GatingPlugin, nil
		}
		if ok || r.seenByScheduler(p) {
			// queued and not gated: it will be attempted
			return "", nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("kube-scheduler: %w waiting for pod %s to be queued", errTimeout, Key(p))
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(d):
		}
	}
}

// awaitRetry waits for the victims' deletion to reach the scheduler and for the preemptor's
// next attempt to start. kube-scheduler retries it when the victims' deletion events move it
// to the backoff queue, which is popped at once while the active queue is empty
// (SchedulerPopFromBackoffQ). If no event moves it (a deletion event consumed while the pod
// was still in flight and the preemption still running), kube-scheduler would retry it at
// the unschedulable pods' flush, minutes later; the oracle then activates it, after 5 s.
func (r *run) awaitRetry(ctx context.Context, p *corev1.Pod, out *Outcome, victims *[]*corev1.Pod) error {
	flushed := false
	for {
		wait := 5 * time.Second
		if flushed {
			wait = r.opts.Timeout
		}
		t := time.NewTimer(wait)
		select {
		case h := <-r.ch:
			t.Stop()
			switch {
			case h.kind == "deleted":
				*victims = append(*victims, h.pod)
			case h.kind == "preempted":
			case h.kind == "attempt" && h.pod.UID == p.UID:
				// the retry: the driver's loop takes it next
				r.back = &h
				for _, v := range *victims {
					if err := r.until(ctx, "victim "+Key(v)+" to leave the cache", func() bool { return !r.inCache(v) }); err != nil {
						return err
					}
				}
				sortVictims(*victims)
				return nil
			default:
				return fmt.Errorf("kube-scheduler: unexpected %s of pod %s while %s waits for its retry", h.kind, Key(h.pod), Key(p))
			}
		case <-t.C:
			if flushed {
				return fmt.Errorf("kube-scheduler: %w waiting for the retry of %s after preemption", errTimeout, Key(p))
			}
			flushed = true
			r.clock.Step(6 * time.Minute)
			r.sched.SchedulingQueue.Activate(klog.FromContext(ctx), map[string]*corev1.Pod{Key(p): p})
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

func (r *run) markVictims(victims []*corev1.Pod, by *Outcome) {
	for _, v := range victims {
		if o, ok := r.byUID[v.UID]; ok {
			o.PreemptedBy = by
		}
	}
}

// sortVictims: most important first (higher priority, then earlier start), as preemption
// ranks them; kube-scheduler deletes them in parallel, so their order is not its own.
func sortVictims(v []*corev1.Pod) {
	sort.SliceStable(v, func(i, j int) bool {
		pi, pj := prio(v[i]), prio(v[j])
		if pi != pj {
			return pi > pj
		}
		ti, tj := v[i].Status.StartTime, v[j].Status.StartTime
		if ti != nil && tj != nil && !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return Key(v[i]) < Key(v[j])
	})
}

func keys(ps []*corev1.Pod) []string {
	var out []string
	for _, p := range ps {
		out = append(out, Key(p))
	}
	return out
}

// free is the benchmark mode: every pending pod is already in the API; wait until each is
// bound or has failed once, then until the queue has nothing left to try. A pod that keeps
// failing is retried by kube-scheduler for as long as it runs, so the waits are bounded by
// progress: when no pod has been bound (or attempted for the first time) for stallAfter,
// the run ends with an error naming what it waited for and the pods left.
func (r *run) free(ctx context.Context, pending []*corev1.Pod) ([]*Outcome, int, error) {
	outs := make([]*Outcome, len(pending))
	idx := map[types.UID]int{}
	for i, p := range pending {
		outs[i] = &Outcome{Pod: p}
		idx[p.UID] = i
	}
	left := 0
	for _, p := range pending {
		if len(p.Spec.SchedulingGates) > 0 {
			outs[idx[p.UID]].Gated = true
		} else {
			left++
		}
	}
	stall := r.stallAfter()
	progress := time.Now()
	seen := map[types.UID]bool{}
	errored := map[types.UID]bool{} // the last attempt ended in an error, not unschedulable
	nerr := 0
	take := func(h happening) {
		i, ok := idx[h.pod.UID]
		if !ok {
			return
		}
		switch h.kind {
		case "bound":
			outs[i].Scheduled, outs[i].Node, outs[i].Message = true, h.node, ""
			outs[i].Attempts++
			delete(errored, h.pod.UID)
			progress = time.Now()
		case "failed":
			outs[i].Message = h.status.Message()
			outs[i].Attempts++
			errored[h.pod.UID] = !h.status.IsRejected()
			if !h.status.IsRejected() {
				nerr++
			}
		default:
			return
		}
		if !seen[h.pod.UID] {
			seen[h.pod.UID] = true
			progress = time.Now()
			left--
		}
	}
	stalled := func(what string) error {
		return fmt.Errorf("kube-scheduler: %w waiting for %s: no pod bound or attempted for the first time in %v; %s",
			errTimeout, what, stall, r.podsLeft(outs, seen, errored))
	}
	for left > 0 {
		t := time.NewTimer(time.Until(progress.Add(stall)))
		select {
		case h := <-r.ch:
			t.Stop()
			take(h)
		case <-t.C:
			return nil, 0, stalled(fmt.Sprintf("the first outcome of %d more pods", left))
		case <-ctx.Done():
			t.Stop()
			return nil, 0, ctx.Err()
		}
	}
	// A pod that failed may be tried again when an event says it may fit now (a claim it
	// shares, in flight for another pod, got allocated), or after its backoff when its
	// attempt ended in an error (a conflict writing a shared claim): wait until the queue
	// has nothing to try for 50 ms, as scheduler_perf waits for every measured pod to be
	// scheduled.
	quiet := time.Time{}
	for {
		select {
		case h := <-r.ch:
			take(h)
			quiet = time.Time{}
			if time.Since(progress) > stall {
				return nil, 0, stalled("the scheduling queue to settle")
			}
			continue
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-time.After(time.Millisecond):
		}
		busy := len(r.sched.SchedulingQueue.PodsInActiveQ()) > 0 || len(r.sched.SchedulingQueue.PodsInBackoffQ()) > 0 ||
			len(r.sched.SchedulingQueue.InFlightPods()) > 0
		switch {
		case busy && time.Since(progress) > stall:
			return nil, 0, stalled("the scheduling queue to settle")
		case busy:
			quiet = time.Time{}
		case quiet.IsZero():
			quiet = time.Now()
		case time.Since(quiet) > 50*time.Millisecond:
			return outs, nerr, nil
		}
	}
}

// stallAfter: how long the benchmark waits without progress (a pod bound, or attempted for
// the first time) before it gives up, and any run for its informers to sync: kube-scheduler's
// longest backoff (10 s) many times over, and ten steps of the one-by-one mode (5 minutes
// by default).
func (r *run) stallAfter() time.Duration {
	if r.opts.Stall > 0 {
		return r.opts.Stall
	}
	return max(10*r.opts.Timeout, 5*time.Minute)
}

// podsLeft names the pods not bound, where the scheduling queue holds each and the last
// failure of those that failed (at most 10 named).
func (r *run) podsLeft(outs []*Outcome, seen, errored map[types.UID]bool) string {
	where := map[types.UID]string{}
	note := func(pods []*corev1.Pod, place string) {
		for _, p := range pods {
			where[p.UID] = place
		}
	}
	q := r.sched.SchedulingQueue
	note(q.UnschedulablePods(), "unschedulable pods")
	note(q.PodsInBackoffQ(), "backoff queue")
	note(q.PodsInActiveQ(), "active queue")
	note(q.InFlightPods(), "in flight")
	var names []string
	n := 0
	for _, o := range outs {
		if o.Scheduled || o.Gated {
			continue
		}
		n++
		if len(names) == 10 {
			continue
		}
		uid := o.Pod.UID
		s := Key(o.Pod) + " ("
		if place, ok := where[uid]; ok {
			s += place
		} else {
			s += "not queued"
		}
		switch {
		case !seen[uid]:
			s += ", never attempted"
		case errored[uid]:
			s += fmt.Sprintf(", %d attempts, the last an error: %q", o.Attempts, o.Message)
		default:
			s += fmt.Sprintf(", %d attempts, the last unschedulable: %q", o.Attempts, o.Message)
		}
		names = append(names, s+")")
	}
	if n == 0 {
		return "every pod is bound (the queue did not settle)"
	}
	more := ""
	if n > len(names) {
		more = fmt.Sprintf(" and %d more", n-len(names))
	}
	return fmt.Sprintf("%d pods left: %s%s", n, strings.Join(names, ", "), more)
}

// Simulate is the result as `gpusched simulate -o json` writes it: scheduled (without the
// pods preempted later), unschedulable, then preempted and gated when not empty.
// Follow is what gpusched simulate --follow reads to take the oracle's tie choices: the
// Simulate document, and the nodes of attempts that failed in the binding cycle (their
// PreBind may have left claims allocated on that node).
func (res *Result) Follow() any {
	var failed []report.Placed
	for _, o := range res.Outcomes {
		if !o.Scheduled && o.BindNode != "" {
			failed = append(failed, report.Placed{Pod: Key(o.Pod), Node: o.BindNode})
		}
	}
	return struct {
		*report.Simulate
		BindFailed []report.Placed `json:"bindFailed,omitempty"`
	}{res.Simulate(), failed}
}

func (res *Result) Simulate() *report.Simulate {
	s := &report.Simulate{Scheduled: []report.Placed{}, Unschedulable: []report.Unplaced{}}
	for _, o := range res.Outcomes {
		key := Key(o.Pod)
		switch {
		case o.Gated:
			s.Gated = append(s.Gated, report.PodRef{Pod: key})
		case o.Scheduled && o.PreemptedBy == nil:
			s.Scheduled = append(s.Scheduled, report.Placed{Pod: key, Node: o.Node, Claims: o.Claims})
		case !o.Scheduled:
			s.Unschedulable = append(s.Unschedulable, report.Unplaced{Pod: key, Message: o.Message})
		}
		for _, v := range o.Victims {
			s.Preempted = append(s.Preempted, report.Preempted{Pod: Key(v), Node: o.NominatedNode, By: key})
		}
	}
	return s
}
