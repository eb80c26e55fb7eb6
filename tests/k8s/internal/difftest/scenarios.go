package difftest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gpulabel.test/k8s/internal/objects"
	"gpulabel.test/k8s/internal/oracle"
	"gpulabel.test/k8s/internal/report"
)

// ScenarioResult of one tests/scenarios/ case run through the oracle.
type ScenarioResult struct {
	Name    string
	Skipped string // why it was not run
	Failed  string // how the oracle disagrees with the expectation
}

// gpusched's one line about bad input: "gpusched: FILE: line N: MESSAGE"
var reLineMsg = regexp.MustCompile(`^gpusched: [^:]+: line [0-9]+: (.*)$`)

var reNeedsRender = regexp.MustCompile(`skipping kind (Deployment|ReplicaSet|StatefulSet|Job|CronJob|DaemonSet|ReplicationController)`)

// Scenario runs one scenario directory through the oracle and compares its answer with
// expected.json (wildcards in controller-made pod names, node permutations of the
// interchangeable groups allowed, as tests/integration/test_scenarios.py does), or, for
// scenarios that expect a table (expected.txt), with `gpusched simulate -o json` on the same
// input.
func (r *Runner) Scenario(dir string) ScenarioResult {
	res := ScenarioResult{Name: filepath.Base(dir)}
	ents, err := os.ReadDir(dir)
	if err != nil {
		res.Failed = err.Error()
		return res
	}
	var inputs []string
	for _, e := range ents {
		n := e.Name()
		if n == "expected.json" || e.IsDir() {
			continue
		}
		if strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml") || strings.HasSuffix(n, ".json") {
			inputs = append(inputs, filepath.Join(dir, n))
		}
	}
	sort.Strings(inputs)
	if b, err := os.ReadFile(filepath.Join(dir, "not-modelled")); err == nil {
		// the case shows gpusched refusing what it does not model, not kube-scheduler's answer
		res.Skipped = "gpusched's refusal of what it does not model: " + strings.TrimSpace(string(b))
		return res
	}
	opts := oracle.Options{PercentageOfNodesToScore: 100}
	var gargs []string
	if b, err := os.ReadFile(filepath.Join(dir, "args")); err == nil {
		args := strings.Fields(string(b))
		for i := 0; i < len(args); i++ {
			a, v := args[i], ""
			if i+1 < len(args) {
				v = args[i+1]
			}
			switch a {
			case "--profile":
				if v != "default" {
					res.Skipped = fmt.Sprintf("uses --profile %s, not kube-scheduler's default profile", v)
					return res
				}
				i++
			case "--config":
				// a KubeSchedulerConfiguration in the scenario's directory, for both
				opts.Config = filepath.Join(dir, v)
				gargs = append(gargs, a, opts.Config)
				i++
			case "--scheduler-name":
				opts.SchedulerName = v
				gargs = append(gargs, a, v)
				i++
			case "-o", "--output":
				i++ // the table format: compared as JSON
			case "--seed":
				i++
			case "--kube-version":
				if v != "1.37" {
					res.Skipped = fmt.Sprintf("uses --kube-version %s; the oracle is kube-scheduler v1.37.2", v)
					return res
				}
				gargs = append(gargs, a, v)
				i++
			default:
				res.Skipped = fmt.Sprintf("argument %q has no oracle equivalent", a)
				return res
			}
		}
	}
	if b, rerr := os.ReadFile(filepath.Join(dir, "expected.err")); rerr == nil {
		// input the API server refuses: the oracle's validation must say what gpusched says
		// after "FILE: line N: " (the manifests as they are: render would refuse them too)
		_, err := objects.Load(inputs)
		want := strings.TrimSpace(string(b))
		if m := reLineMsg.FindStringSubmatch(want); m != nil {
			want = m[1]
		}
		switch {
		case err == nil:
			res.Failed = "the oracle accepts the input; expected.err: " + want
		case !strings.HasSuffix(strings.SplitN(err.Error(), "\n", 2)[0], ": "+want):
			res.Failed = fmt.Sprintf("the API server's validation says %q\n      expected.err:                       %q", err.Error(), want)
		}
		return res
	}
	load := inputs
	if r.G != nil && r.G.Render {
		list, err := r.G.RenderTo(inputs)
		if err != nil {
			res.Failed = "gpusched render: " + err.Error()
			return res
		}
		f := filepath.Join(r.Tmp, "scenario-"+res.Name+".json")
		if err := os.WriteFile(f, list, 0o644); err != nil {
			res.Failed = err.Error()
			return res
		}
		defer os.Remove(f)
		load = []string{f}
	}
	c, err := objects.Load(load)
	if err != nil {
		res.Failed = "the oracle refuses the input: " + err.Error()
		return res
	}
	for _, w := range c.Warnings {
		if m := reNeedsRender.FindStringSubmatch(w); m != nil {
			res.Skipped = fmt.Sprintf("needs `gpusched render` (kind %s), which this gpusched lacks", m[1])
			return res
		}
	}
	out, err := oracle.Run(context.Background(), c, opts)
	if err != nil {
		res.Failed = "oracle: " + err.Error()
		return res
	}
	got := out.Simulate()
	var want any
	wantText := ""
	if b, err := os.ReadFile(filepath.Join(dir, "expected.json")); err == nil {
		wantText = string(b)
	} else {
		if r.G == nil {
			res.Skipped = "expects a table (expected.txt) and no gpusched was given to compare with"
			return res
		}
		g, err := r.G.Simulate(inputs, gargs...)
		if err != nil {
			res.Failed = "gpusched simulate: " + err.Error()
			return res
		}
		wantText = report.Compact(g)
	}
	if err := json.Unmarshal([]byte(wantText), &want); err != nil {
		res.Failed = "expected.json: " + err.Error()
		return res
	}
	if m, ok := want.(map[string]any); ok {
		// gpusched's warnings about fields it does not model: kube-scheduler has none
		delete(m, "warnings")
	}
	var gotAny any
	_ = json.Unmarshal([]byte(report.Compact(got)), &gotAny)
	groups := readGroups(filepath.Join(dir, "interchangeable"))
	for _, m := range mappings(groups) {
		if matches(gotAny, want, m, "") {
			return res
		}
	}
	res.Failed = fmt.Sprintf("kube-scheduler: %s\n      expected:       %s", report.Compact(got), report.Compact(want))
	return res
}

func readGroups(p string) [][]string {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	var out [][]string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// mappings lists every renaming that permutes the names of each group.
func mappings(groups [][]string) []map[string]string {
	out := []map[string]string{{}}
	for _, g := range groups {
		var next []map[string]string
		for _, perm := range permutations(g) {
			for _, m := range out {
				n := map[string]string{}
				for k, v := range m {
					n[k] = v
				}
				for i, name := range g {
					n[name] = perm[i]
				}
				next = append(next, n)
				if len(next) > 50000 {
					break
				}
			}
		}
		out = next
	}
	return out
}

func permutations(xs []string) [][]string {
	if len(xs) <= 1 {
		return [][]string{append([]string(nil), xs...)}
	}
	var out [][]string
	for i := range xs {
		rest := append(append([]string(nil), xs[:i]...), xs[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]string{xs[i]}, p...))
		}
	}
	return out
}

func matches(got, want any, rename map[string]string, key string) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !matches(gv, wv, rename, k) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !matches(g[i], w[i], rename, key) {
				return false
			}
		}
		return true
	case string:
		g, ok := got.(string)
		if !ok {
			return false
		}
		if key == "node" {
			if n, ok := rename[w]; ok {
				w = n
			}
		}
		if (key == "pod" || key == "by") && strings.ContainsAny(w, "*?") {
			ok, _ := path.Match(w, g)
			return ok
		}
		return g == w
	}
	return fmt.Sprint(got) == fmt.Sprint(want)
}
