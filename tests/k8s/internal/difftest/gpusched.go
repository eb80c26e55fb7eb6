package difftest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"gpulabel.test/k8s/internal/report"
)

// Gpusched runs the gpusched binary. Render, Follow and Trace say which of the commands and
// flags the differential test wants this binary has (docs/testing.md, "What the oracle
// needs from gpusched").
type Gpusched struct {
	Path   string
	Render bool // gpusched render -f FILE... -o json
	Follow bool // gpusched simulate --follow ORACLE.json
	Trace  bool // gpusched simulate --trace FILE
	// KubeVersion: simulate and explain take --kube-version; the harness asks for 1.37
	KubeVersion bool
	// Config: a KubeSchedulerConfiguration both schedulers run with (k8s-difftest --config)
	Config string
}

// Probe finds out what the binary offers from its --help texts.
func Probe(path string) (*Gpusched, error) {
	g := &Gpusched{Path: path}
	out, _, err := g.run(10*time.Second, "simulate", "--help")
	if err != nil {
		return nil, fmt.Errorf("%s simulate --help: %v", path, err)
	}
	g.Follow = strings.Contains(out, "--follow")
	g.Trace = strings.Contains(out, "--trace")
	g.KubeVersion = strings.Contains(out, "--kube-version")
	if _, _, err := g.run(10*time.Second, "render", "--help"); err == nil {
		g.Render = true
	}
	return g, nil
}

// Full says whether the whole-run comparison (render, follow, trace) is possible.
func (g *Gpusched) Full() bool { return g.Follow && g.Trace }

// Missing names what the full comparison lacks, for the skipped: line.
func (g *Gpusched) Missing() []string {
	var m []string
	if !g.Follow {
		m = append(m, "simulate --follow")
	}
	if !g.Trace {
		m = append(m, "simulate --trace")
	}
	return m
}

type runError struct {
	code   int
	stderr string
}

func (e *runError) Error() string {
	return fmt.Sprintf("exit %d: %s", e.code, strings.TrimSpace(e.stderr))
}

func (g *Gpusched) run(timeout time.Duration, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.Path, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		return out.String(), errb.String(), fmt.Errorf("timed out after %v", timeout)
	}
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return out.String(), errb.String(), &runError{code: ee.ExitCode(), stderr: errb.String()}
		}
		return out.String(), errb.String(), err
	}
	return out.String(), errb.String(), nil
}

func fileArgs(files []string) []string {
	var a []string
	for _, f := range files {
		a = append(a, "-f", f)
	}
	return a
}

// Simulate runs `gpusched simulate -o json` (plus extra flags).
func (g *Gpusched) Simulate(files []string, extra ...string) (*report.Simulate, error) {
	args := append([]string{"simulate"}, fileArgs(files)...)
	args = append(args, "-o", "json")
	args = append(args, extra...)
	args = append(args, g.version()...)
	out, _, err := g.run(60*time.Second, args...)
	if err != nil {
		return nil, err
	}
	s, err := report.ReadSimulate([]byte(out))
	if err != nil {
		return nil, fmt.Errorf("simulate -o json: %v in %q", err, out)
	}
	return s, nil
}

// Explain runs `gpusched explain -o json POD`.
func (g *Gpusched) Explain(files []string, pod string) (*report.Explain, error) {
	args := append([]string{"explain"}, fileArgs(files)...)
	args = append(args, "-o", "json")
	args = append(args, g.version()...)
	args = append(args, pod)
	out, _, err := g.run(60*time.Second, args...)
	if err != nil {
		return nil, err
	}
	var x report.Explain
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		return nil, fmt.Errorf("explain -o json: %v", err)
	}
	return &x, nil
}

func (g *Gpusched) version() []string {
	var a []string
	if g.KubeVersion {
		a = append(a, "--kube-version", "1.37")
	}
	if g.Config != "" {
		a = append(a, "--config", g.Config)
	}
	return a
}

// RenderTo runs `gpusched render -o json` and returns the List it prints.
func (g *Gpusched) RenderTo(files []string) ([]byte, error) {
	args := append([]string{"render"}, fileArgs(files)...)
	args = append(args, "-o", "json")
	out, _, err := g.run(60*time.Second, args...)
	if err != nil {
		return nil, err
	}
	return []byte(out), nil
}

// explainAttempt turns `explain -o json` into the trace line it stands for: the first
// attempt's per-node verdicts and the attempt's result.
func explainAttempt(x *report.Explain) *report.Attempt {
	a := &report.Attempt{Pod: x.Pod, Priority: x.Priority}
	for _, n := range x.Nodes {
		v := report.NodeVerdict{Node: n.Node}
		if n.Evaluated != nil && !*n.Evaluated {
			v.Plugin = "(not evaluated)"
			a.Nodes = append(a.Nodes, v)
			continue
		}
		if n.Feasible != nil && *n.Feasible {
			v.Feasible = true
			for _, s := range n.Scores {
				v.Scores = append(v.Scores, report.Score{Plugin: s.Plugin, Raw: s.Raw, Normalized: s.Normalized, Weight: s.Weight})
			}
			if n.Total != nil {
				v.Total = *n.Total
			}
		} else {
			v.Plugin, v.Reasons = n.Plugin, n.Reasons
			v.Unresolvable = n.Unresolvable != nil && *n.Unresolvable
		}
		a.Nodes = append(a.Nodes, v)
	}
	switch x.Result.Status {
	case "Scheduled":
		a.Result = report.Result{Status: report.StatusScheduled, Node: x.Result.Node}
	case "ScheduledAfterPreemption", "Unschedulable":
		a.Result = report.Result{Status: report.StatusUnschedulable, Message: x.Result.Message,
			NominatedNode: x.Result.NominatedNode, Victims: x.Result.Victims}
	default:
		a.Result = report.Result{Status: x.Result.Status}
	}
	return a
}
