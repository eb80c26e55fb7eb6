// kubelet.go - the little a kubelet (and the node lifecycle controller) would do in a
// cluster without kubelets, as kwok does it:
//   - a Node without a Ready=True condition gets one (status written by the harness), and a
//     Ready node loses the node.kubernetes.io/not-ready:NoSchedule taint that the
//     TaintNodesByCondition admission plugin puts on every new Node;
//   - a pod bound to a node that is being deleted gracefully is deleted for good (grace 0),
//     so preemption victims and scaled-down replicas go away;
//   - optionally, a pod bound to a node is marked Running and Ready.
//
// It writes nothing else: capacity and allocatable are whatever the Node was created with.
package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
)

const notReadyTaint = "node.kubernetes.io/not-ready"

type kubelet struct {
	cs      kubernetes.Interface
	runPods bool
	logf    func(string, ...any)
	nodes   workqueue.TypedRateLimitingInterface[string]
	pods    workqueue.TypedRateLimitingInterface[string]
	nodeInf cache.SharedIndexInformer
	podInf  cache.SharedIndexInformer
	wg      sync.WaitGroup
}

func startKubelet(ctx context.Context, kubeconfig string, runPods bool, logf func(string, ...any)) (*kubelet, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	// the harness must never be the bottleneck of a benchmark
	cfg.QPS, cfg.Burst = 5000, 10000
	cfg.UserAgent = "k8s-cluster-kubelet"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	k := &kubelet{cs: cs, runPods: runPods, logf: logf,
		nodes: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		pods:  workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
	f := informers.NewSharedInformerFactory(cs, 0)
	k.nodeInf = f.Core().V1().Nodes().Informer()
	k.podInf = f.Core().V1().Pods().Informer()
	enqueue := func(q workqueue.TypedRateLimitingInterface[string]) cache.ResourceEventHandlerFuncs {
		return cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { k.add(q, o) },
			UpdateFunc: func(_, o any) { k.add(q, o) },
		}
	}
	k.nodeInf.AddEventHandler(enqueue(k.nodes))
	k.podInf.AddEventHandler(enqueue(k.pods))
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), k.nodeInf.HasSynced, k.podInf.HasSynced) {
		return nil, fmt.Errorf("informers did not sync")
	}
	for i := 0; i < 4; i++ {
		k.wg.Add(2)
		go k.worker(k.nodes, k.syncNode)
		go k.worker(k.pods, k.syncPod)
	}
	go func() {
		<-ctx.Done()
		k.nodes.ShutDown()
		k.pods.ShutDown()
		f.Shutdown()
	}()
	return k, nil
}

func (k *kubelet) wait() { k.wg.Wait() }

func (k *kubelet) add(q workqueue.TypedRateLimitingInterface[string], o any) {
	if key, err := cache.MetaNamespaceKeyFunc(o); err == nil {
		q.Add(key)
	}
}

func (k *kubelet) worker(q workqueue.TypedRateLimitingInterface[string], sync func(string) error) {
	defer k.wg.Done()
	for {
		key, quit := q.Get()
		if quit {
			return
		}
		if err := sync(key); err != nil {
			if q.NumRequeues(key) < 10 {
				q.AddRateLimited(key)
			} else {
				k.logf("giving up on %s: %v", key, err)
				q.Forget(key)
			}
		} else {
			q.Forget(key)
		}
		q.Done(key)
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (k *kubelet) syncNode(name string) error {
	o, ok, err := k.nodeInf.GetStore().GetByKey(name)
	if err != nil || !ok {
		return err
	}
	n := o.(*corev1.Node)
	ctx := context.Background()
	if !nodeReady(n) {
		now := metav1.Now()
		patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message:           "k8s-cluster: no kubelet runs; the harness reports the node ready",
			LastHeartbeatTime: now, LastTransitionTime: now}}}})
		_, err := k.cs.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch,
			metav1.PatchOptions{FieldManager: "k8s-cluster-kubelet"}, "status")
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err // the status update brings the node back here for the taint
	}
	has := false
	for _, t := range n.Spec.Taints {
		if t.Key == notReadyTaint && t.Effect == corev1.TaintEffectNoSchedule {
			has = true
		}
	}
	if !has {
		return nil
	}
	// as the node lifecycle controller does once the node is Ready
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := k.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var keep []corev1.Taint
		for _, t := range cur.Spec.Taints {
			if !(t.Key == notReadyTaint && t.Effect == corev1.TaintEffectNoSchedule) {
				keep = append(keep, t)
			}
		}
		if len(keep) == len(cur.Spec.Taints) {
			return nil
		}
		cur.Spec.Taints = keep
		_, err = k.cs.CoreV1().Nodes().Update(ctx, cur, metav1.UpdateOptions{FieldManager: "k8s-cluster-kubelet"})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (k *kubelet) syncPod(key string) error {
	o, ok, err := k.podInf.GetStore().GetByKey(key)
	if err != nil || !ok {
		return err
	}
	p := o.(*corev1.Pod)
	if p.Spec.NodeName == "" {
		return nil
	}
	ctx := context.Background()
	if p.DeletionTimestamp != nil {
		// the containers are "stopped" at once: finish the graceful deletion
		zero := int64(0)
		uid := p.UID
		err := k.cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
			GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	if !k.runPods || p.Status.Phase != corev1.PodPending {
		return nil
	}
	now := metav1.Now()
	conds := []corev1.PodCondition{}
	for _, t := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized,
		corev1.ContainersReady, corev1.PodReady} {
		conds = append(conds, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	var statuses []corev1.ContainerStatus
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			continue // a sidecar: reported as running below
		}
		statuses = append(statuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				Reason: "Completed", StartedAt: now, FinishedAt: now}}})
	}
	initStatuses := statuses
	statuses = nil
	for _, c := range p.Spec.Containers {
		started := true
		statuses = append(statuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true,
			Started: &started, State: running})
	}
	st := map[string]any{"phase": corev1.PodRunning, "startTime": now, "conditions": conds,
		"containerStatuses": statuses}
	if len(initStatuses) > 0 {
		st["initContainerStatuses"] = initStatuses
	}
	patch, _ := json.Marshal(map[string]any{"status": st})
	_, err = k.cs.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch,
		metav1.PatchOptions{FieldManager: "k8s-cluster-kubelet"}, "status")
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// waitServiceAccount waits until ns/name exists (the ServiceAccount controller creates
// "default" in every namespace; the ServiceAccount admission plugin refuses pods before).
func (k *kubelet) waitServiceAccount(ctx context.Context, ns, name string, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := k.cs.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, nil
	})
}
