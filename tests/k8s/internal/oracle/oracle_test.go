package oracle

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

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

// The benchmark mode runs on kube-scheduler's real clock: a pod whose attempt ends in an
// error waits in the error backoff queue until its backoff expires (under a clock that never
// moved it stayed there and the run never ended). A pod naming one claim twice fails every
// attempt (tests/scenarios/dra-claim-named-twice): kube-scheduler retries it after 1 s, 2 s,
// ... for as long as it runs, so the run ends when no pod has been bound for Stall, with an
// error naming those pods, their attempts and last failure.
func TestAllAtOnceRetriesErrorsAndStalls(t *testing.T) {
	c, err := objects.Load([]string{"../../../scenarios/dra-claim-named-twice/cluster.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err = Run(context.Background(), c, Options{AllAtOnce: true, Stall: 8 * time.Second})
	if !errors.Is(err, errTimeout) {
		t.Fatalf("want a timeout, got %v", err)
	}
	if d := time.Since(began); d > time.Minute {
		t.Fatalf("took %v", d)
	}
	msg := err.Error()
	for _, want := range []string{"waiting for the scheduling queue to settle", "2 pods left: ",
		"default/twice (", "default/twice-again (", `the last an error: "running PreBind plugin \"DynamicResources\"`} {
		if !strings.Contains(msg, want) {
			t.Fatalf("%q not in %s", want, msg)
		}
	}
	// retried after 1 s, 2 s, 4 s: 4 attempts in 8 s on a clock that moves; an event of the
	// pod's own claim writes retries it once more at most
	for _, pod := range []string{"twice", "twice-again"} {
		m := append(regexp.MustCompile(`default/`+pod+` \([a-z ]+, (\d+) attempts`).FindStringSubmatch(msg), "", "0")
		if n, _ := strconv.Atoi(m[1]); n < 3 {
			t.Fatalf("%s: no retries after the backoff: %s", pod, msg)
		}
	}
}
