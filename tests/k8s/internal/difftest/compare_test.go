package difftest

import (
	"strings"
	"testing"

	"gpulabel.test/k8s/internal/report"
)

func TestMessageClasses(t *testing.T) {
	k := "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s). preemption: found a potential placement for pod on node n1, preempting 1 victims"
	g := "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {a: b}, 1 node(s) had untolerated taint {c: }."
	cs := messageClasses(k, g)
	if len(cs) != 2 {
		t.Fatalf("%d classes: %q", len(cs), cs)
	}
	if !strings.Contains(cs[0], "«node(s) had untolerated taint(s)» gpusched «node(s) had untolerated taint {…}»") {
		t.Errorf("histogram class %q", cs[0])
	}
	if !strings.Contains(cs[1], "preemption: found a potential placement for pod on node N, preempting K victims") {
		t.Errorf("preemption class %q", cs[1])
	}
}

func attempt(nodes ...report.NodeVerdict) *report.Attempt {
	return &report.Attempt{Pod: "default/p", Attempt: 1, Nodes: nodes, Result: report.Result{Status: report.StatusScheduled, Node: "a"}}
}

func TestCompareAttempt(t *testing.T) {
	sc := func(n, w int64) []report.Score {
		return []report.Score{{Plugin: "TaintToleration", Raw: 0, Normalized: 100, Weight: 3}, {Plugin: "NodeResourcesFit", Raw: n, Normalized: n, Weight: w}}
	}
	o := attempt(report.NodeVerdict{Node: "a", Feasible: true, Scores: sc(50, 1), Total: 350},
		report.NodeVerdict{Node: "b", Feasible: true, Scores: sc(50, 1), Total: 350},
		report.NodeVerdict{Node: "c", Plugin: "NodeResourcesFit", Reasons: []string{"Insufficient x", "Insufficient y"}})
	// a tie broken the other way, reasons in another order: no difference
	g := attempt(o.Nodes[0], o.Nodes[1], report.NodeVerdict{Node: "c", Plugin: "NodeResourcesFit", Reasons: []string{"Insufficient y", "Insufficient x"}})
	g.Result.Node = "b"
	if ds := CompareAttempt(o, g, false); len(ds) != 0 {
		t.Fatalf("unexpected %v", ds)
	}
	// with --follow gpusched must take kube-scheduler's node
	if ds := CompareAttempt(o, g, true); len(ds) != 1 || ds[0].Class != "follow" {
		t.Fatalf("follow: %v", ds)
	}
	// a score that differs makes the oracle's node not the best
	g2 := attempt(report.NodeVerdict{Node: "a", Feasible: true, Scores: sc(40, 1), Total: 340}, o.Nodes[1], o.Nodes[2])
	g2.Result.Node = "b"
	ds := CompareAttempt(o, g2, false)
	classes := map[string]bool{}
	for _, d := range ds {
		classes[d.Class] = true
	}
	if !classes["score NodeResourcesFit"] || !classes["node"] || len(ds) != 2 {
		t.Fatalf("got %v", ds)
	}
}

func TestScenarioMatch(t *testing.T) {
	want := map[string]any{"scheduled": []any{map[string]any{"pod": "default/web-*", "node": "n1"}}}
	got := map[string]any{"scheduled": []any{map[string]any{"pod": "default/web-x7k2p", "node": "n2"}}}
	ok := false
	for _, m := range mappings([][]string{{"n1", "n2"}}) {
		ok = ok || matches(got, want, m, "")
	}
	if !ok {
		t.Fatal("wildcard and interchangeable nodes should match")
	}
	if matches(got, want, map[string]string{}, "") {
		t.Fatal("n2 is not n1 without the group")
	}
}

// Two runs that differ only in the devices a pod got are one "devices" difference naming the
// pod; any other difference is the whole document's.
func TestCompareSimulateDevices(t *testing.T) {
	dev := func(d string) []report.ClaimDevice {
		return []report.ClaimDevice{{Claim: "default/c", Request: "gpu", Driver: "gpu.nvidia.com", Pool: "n1", Device: d}}
	}
	o := &report.Simulate{Scheduled: []report.Placed{{Pod: "default/p", Node: "n1", Claims: dev("gpu-0")}}}
	g := &report.Simulate{Scheduled: []report.Placed{{Pod: "default/p", Node: "n1", Claims: dev("gpu-1")}}}
	ds := CompareSimulate(o, g)
	if len(ds) != 1 || ds[0].Class != "devices" || ds[0].Pod != "default/p" || !strings.Contains(ds[0].Text, `"device":"gpu-1"`) {
		t.Fatalf("%+v", ds)
	}
	g.Scheduled[0].Node = "n2"
	if ds := CompareSimulate(o, g); len(ds) != 1 || ds[0].Class != "simulate" {
		t.Fatalf("%+v", ds)
	}
	if ds := CompareSimulate(o, o); len(ds) != 0 {
		t.Fatalf("%+v", ds)
	}
}

// Preemption's dry run may report the Filter errors of several nodes as a list: masked as one.
func TestMaskDRAFilterErrorList(t *testing.T) {
	one := `0/5 nodes are available: 2 Insufficient cpu. preemption: running "DynamicResources" filter plugin: class fast: selector #0 on device a/b/c: CEL runtime error: no such key: fast`
	two := `0/5 nodes are available: 2 Insufficient cpu. preemption: [running "DynamicResources" filter plugin: class fast: selector #0 on device d/e/f: CEL runtime error: no such key: fast, running "DynamicResources" filter plugin: class fast: selector #0 on device a/b/c: CEL runtime error: no such key: fast]`
	if MaskDRAFilterError(one) != MaskDRAFilterError(two) {
		t.Fatalf("%q\n%q", MaskDRAFilterError(one), MaskDRAFilterError(two))
	}
	if MaskDRAFilterError("0/5 nodes are available: 2 Insufficient cpu.") != "0/5 nodes are available: 2 Insufficient cpu." {
		t.Fatal("a message without the error changed")
	}
}
