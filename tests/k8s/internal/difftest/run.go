// Package difftest is the differential test of gpusched against kube-scheduler: generated
// cases (internal/gen) run through the oracle (internal/oracle) and through gpusched, and
// every scheduling attempt is compared; a difference is shrunk to a small case written in
// the tests/scenarios/ format. docs/testing.md describes it.
package difftest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"

	"gpulabel.test/k8s/internal/gen"
	"gpulabel.test/k8s/internal/objects"
	"gpulabel.test/k8s/internal/oracle"
	"gpulabel.test/k8s/internal/report"
)

// Runner runs cases through both schedulers.
type Runner struct {
	G   *Gpusched
	Tmp string // scratch directory
}

func mustJSON(v any) string { return report.Compact(v) }

// Outcome of one case.
type Outcome struct {
	Diffs    []Diff
	Pending  int
	Attempts int
	Ties     bool // the oracle met a tie between nodes somewhere
	Oracle   *oracle.Result
}

// RunCase runs one case and compares. The oracle reads the generated manifests (through
// `gpusched render -o json` when gpusched has it); gpusched reads them as they are.
func (r *Runner) RunCase(c *gen.Case, name string) (*Outcome, error) {
	dir := filepath.Join(r.Tmp, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	input := filepath.Join(dir, "cluster.yaml")
	y, err := c.YAML()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(input, y, 0o644); err != nil {
		return nil, err
	}
	oracleInput := input
	if r.G.Render {
		list, err := r.G.RenderTo([]string{input})
		if err != nil {
			return &Outcome{Diffs: []Diff{{Class: "render error", Text: "gpusched render: " + err.Error()}}}, nil
		}
		oracleInput = filepath.Join(dir, "rendered.json")
		if err := os.WriteFile(oracleInput, list, 0o644); err != nil {
			return nil, err
		}
	}
	cl, err := objects.Load([]string{oracleInput})
	if err != nil {
		// the generator (or render) made something the API server refuses
		return &Outcome{Diffs: []Diff{{Class: "invalid input", Text: "the oracle refuses the input: " + err.Error()}}}, nil
	}
	res, err := oracle.Run(context.Background(), cl, oracle.Options{PercentageOfNodesToScore: 100, Trace: true, Config: r.G.Config})
	if err != nil {
		return &Outcome{Diffs: []Diff{{Class: "oracle error", Text: err.Error()}}}, nil
	}
	out := &Outcome{Oracle: res, Attempts: len(res.Attempts)}
	for _, o := range res.Outcomes {
		if !o.Gated {
			out.Pending++
		}
	}
	for _, a := range res.Attempts {
		if a.Result.Status == report.StatusScheduled && len(Best(a)) > 1 && !(a.NominatedNode != "" && feasible(a, a.NominatedNode)) {
			out.Ties = true
		}
	}
	if r.G.Full() {
		out.Diffs = r.follow(dir, input, res)
	} else {
		out.Diffs = r.replay(dir, c, res)
		if len(out.Diffs) == 0 && !out.Ties {
			// no tie anywhere: the whole run must come out the same
			g, err := r.G.Simulate([]string{input})
			if err != nil {
				out.Diffs = append(out.Diffs, gpuschedError("simulate", err))
			} else {
				out.Diffs = append(out.Diffs, CompareSimulate(res.Simulate(), g)...)
			}
		}
	}
	return out, nil
}

func gpuschedError(what string, err error) Diff {
	return Diff{Class: "gpusched error (" + what + ")", Text: fmt.Sprintf("gpusched %s: %v", what, err)}
}

// follow is the whole-run comparison: gpusched simulate follows the oracle's tie choices and
// writes its own trace; outputs and traces must be equal.
func (r *Runner) follow(dir, input string, res *oracle.Result) []Diff {
	oj := filepath.Join(dir, "oracle-result.out")
	f, err := os.Create(oj)
	if err != nil {
		return []Diff{{Class: "harness", Text: err.Error()}}
	}
	_ = report.WriteJSON(f, res.Follow())
	f.Close()
	tr := filepath.Join(dir, "gpusched.trace")
	g, err := r.G.Simulate([]string{input}, "--follow", oj, "--trace", tr)
	if err != nil {
		return []Diff{gpuschedError("simulate --follow --trace", err)}
	}
	gt, err := report.ReadTrace(tr)
	if err != nil {
		return []Diff{{Class: "trace format", Text: "gpusched --trace: " + err.Error()}}
	}
	var ds []Diff
	n := min(len(gt), len(res.Attempts))
	for i := 0; i < n; i++ {
		o, t := res.Attempts[i], &gt[i]
		if o.Pod != t.Pod || o.Attempt != t.Attempt {
			ds = append(ds, Diff{Class: "attempts", Pod: o.Pod, Attempt: o.Attempt,
				Text: fmt.Sprintf("attempt %d is kube-scheduler's %s #%d, gpusched's %s #%d", i+1, o.Pod, o.Attempt, t.Pod, t.Attempt)})
			break
		}
		ds = append(ds, CompareAttempt(o, t, true)...)
	}
	if len(gt) != len(res.Attempts) && len(ds) == 0 {
		ds = append(ds, Diff{Class: "attempts", Text: fmt.Sprintf("kube-scheduler made %d attempts, gpusched %d", len(res.Attempts), len(gt))})
	}
	return append(ds, CompareSimulate(res.Simulate(), g)...)
}

// replay compares attempt by attempt without the follow and trace flags: for each of the
// oracle's attempts, gpusched explains the pod in the oracle's cluster state of that moment
// (the pods bound so far, the victims gone, the nominated node of a retry).
func (r *Runner) replay(dir string, c *gen.Case, res *oracle.Result) []Diff {
	byKey := map[string]*corev1.Pod{}
	var bound []*corev1.Pod // pods in the cluster, in the order they entered it
	for _, p := range c.Pods {
		byKey[p.Namespace+"/"+p.Name] = p
		if p.Spec.NodeName != "" {
			bound = append(bound, p)
		}
	}
	atts := map[string][]*report.Attempt{}
	for _, a := range res.Attempts {
		atts[a.Pod] = append(atts[a.Pod], a)
	}
	var ds []Diff
	state := filepath.Join(dir, "state.yaml")
	for _, out := range res.Outcomes {
		key := oracle.Key(out.Pod)
		src := byKey[key]
		if src == nil {
			ds = append(ds, Diff{Class: "harness", Text: "pod " + key + " not in the case"})
			continue
		}
		if out.Gated {
			if err := writeState(state, c, bound, src, ""); err != nil {
				return append(ds, Diff{Class: "harness", Text: err.Error()})
			}
			x, err := r.G.Explain([]string{state}, key)
			if err != nil {
				ds = append(ds, gpuschedError("explain", err))
			} else if x.Result.Status != "SchedulingGated" {
				ds = append(ds, Diff{Class: "gates", Pod: key, Text: "kube-scheduler does not attempt the gated pod; gpusched: " + x.Result.Status})
			}
			continue
		}
		for _, a := range atts[key] {
			if err := writeState(state, c, bound, src, a.NominatedNode); err != nil {
				return append(ds, Diff{Class: "harness", Text: err.Error()})
			}
			x, err := r.G.Explain([]string{state}, key)
			if err != nil {
				d := gpuschedError("explain", err)
				d.Pod, d.Attempt = key, a.Attempt
				ds = append(ds, d)
				continue
			}
			g := explainAttempt(x)
			g.Attempt = a.Attempt
			g.NominatedNode = a.NominatedNode
			ds = append(ds, CompareAttempt(a, g, false)...)
			if len(a.Result.Victims) > 0 {
				gone := map[string]bool{}
				for _, v := range a.Result.Victims {
					gone[v] = true
				}
				var keep []*corev1.Pod
				for _, p := range bound {
					if !gone[p.Namespace+"/"+p.Name] {
						keep = append(keep, p)
					}
				}
				bound = keep
			}
		}
		if out.Scheduled {
			p := src.DeepCopy()
			p.Spec.NodeName = out.Node
			bound = append(bound, p)
		}
	}
	return ds
}

// writeState writes the case's cluster with the given bound pods and one pending pod.
func writeState(path string, c *gen.Case, bound []*corev1.Pod, pod *corev1.Pod, nominated string) error {
	s := *c
	s.Pods = nil
	for _, p := range bound {
		s.Pods = append(s.Pods, p)
	}
	p := pod.DeepCopy()
	p.Status.NominatedNodeName = nominated
	s.Pods = append(s.Pods, p)
	y, err := s.YAML()
	if err != nil {
		return err
	}
	return os.WriteFile(path, y, 0o644)
}
