package oracle

import (
	"context"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"gpulabel.test/k8s/internal/objects"
	"gpulabel.test/k8s/internal/report"
)

// The real kube-scheduler on a small cluster: queue order, preemption with its victim and
// one retry, the FailedScheduling texts of v1.37 (a pod larger than any node is "not
// helpful" to preempt for, since v1.34), a gated pod, and the trace of every attempt.
func TestMain(m *testing.M) {
	klog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

func TestPreemptionGatesAndTrace(t *testing.T) {
	c, err := objects.Load([]string{"testdata/preempt.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), c, Options{PercentageOfNodesToScore: 100, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	got := report.Compact(res.Simulate())
	want := `{"scheduled":[{"pod":"default/critical","node":"n1"}],"unschedulable":[{"pod":"default/huge","message":"0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."}],"preempted":[{"pod":"default/batch","node":"n1","by":"default/critical"}],"gated":[{"pod":"default/gated"}]}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// critical first (priority), then huge; critical twice (preemption, retry)
	var seq []string
	for _, a := range res.Attempts {
		seq = append(seq, a.Pod+"#"+string(rune('0'+a.Attempt)))
	}
	if len(seq) != 3 || seq[0] != "default/critical#1" || seq[1] != "default/critical#2" || seq[2] != "default/huge#1" {
		t.Fatalf("attempts %v", seq)
	}
	first, retry := res.Attempts[0], res.Attempts[1]
	if first.Result.Status != report.StatusUnschedulable || first.Result.NominatedNode != "n1" ||
		len(first.Result.Victims) != 1 || first.Result.Victims[0] != "default/batch" {
		t.Fatalf("first attempt %+v", first.Result)
	}
	if want := "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). preemption: found a potential placement for pod on node n1, preempting 1 victims"; first.Result.Message != want {
		t.Fatalf("first attempt message %q", first.Result.Message)
	}
	if retry.NominatedNode != "n1" || retry.Result.Status != report.StatusScheduled || retry.Result.Node != "n1" {
		t.Fatalf("retry %+v", retry)
	}
	n1, n2 := first.Nodes[0], first.Nodes[1]
	if n1.Node != "n1" || n1.Feasible || n1.Plugin != "NodeResourcesFit" || len(n1.Reasons) != 1 || n1.Reasons[0] != "Insufficient cpu" || n1.Unresolvable {
		t.Fatalf("n1 %+v", n1)
	}
	if n2.Node != "n2" || n2.Plugin != "TaintToleration" || !n2.Unresolvable {
		t.Fatalf("n2 %+v", n2)
	}
	// the retry: n1 now empty and feasible, with every default score plugin that runs
	v := retry.Nodes[0]
	if !v.Feasible || len(v.Scores) == 0 {
		t.Fatalf("retry n1 %+v", v)
	}
	var total int64
	for _, s := range v.Scores {
		total += s.Normalized * s.Weight
	}
	if total != v.Total {
		t.Fatalf("total %d, sum of scores %d", v.Total, total)
	}
}
