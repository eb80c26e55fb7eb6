package difftest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"gpulabel.test/k8s/internal/gen"
	"gpulabel.test/k8s/internal/report"
)

// PrettySimulate writes a `simulate -o json` document the way tests/scenarios/ expectations
// are written: one entry per line.
func PrettySimulate(s *report.Simulate) string {
	var b strings.Builder
	section := func(name string, items []any, first bool) {
		if !first {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%q:[", name)
		for i, it := range items {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n  " + report.Compact(it))
		}
		if len(items) > 0 {
			b.WriteString("\n")
		}
		b.WriteString("]")
	}
	var sch, uns, pre, gat []any
	for _, x := range s.Scheduled {
		sch = append(sch, x)
	}
	for _, x := range s.Unschedulable {
		uns = append(uns, x)
	}
	for _, x := range s.Preempted {
		pre = append(pre, x)
	}
	for _, x := range s.Gated {
		gat = append(gat, x)
	}
	b.WriteString("{")
	section("scheduled", sch, true)
	section("unschedulable", uns, false)
	if len(pre) > 0 {
		section("preempted", pre, false)
	}
	if len(gat) > 0 {
		section("gated", gat, false)
	}
	b.WriteString("}\n")
	return b.String()
}

var reSlug = regexp.MustCompile(`[^a-z0-9]+`)

// Slug makes a directory name of a difference class.
func Slug(class string) string {
	s := strings.Trim(reSlug.ReplaceAllString(strings.ToLower(class), "-"), "-")
	if len(s) > 60 {
		s = strings.TrimRight(s[:60], "-")
	}
	if s == "" {
		s = "difference"
	}
	return "k8s-" + s
}

// Interchangeable groups the nodes that are identical in every respect but their name (and
// hostname label) and carry no pods at the start: kube-scheduler's random tie-break may take
// any of them.
func Interchangeable(c *gen.Case) [][]string {
	busy := map[string]bool{}
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" {
			busy[p.Spec.NodeName] = true
		}
	}
	groups := map[string][]string{}
	var order []string
	for _, n := range c.Nodes {
		if busy[n.Name] {
			continue
		}
		m := n.DeepCopy()
		m.Name = ""
		delete(m.Labels, "kubernetes.io/hostname")
		b, _ := json.Marshal(m)
		k := string(b)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], n.Name)
	}
	var out [][]string
	for _, k := range order {
		if len(groups[k]) > 1 {
			out = append(out, groups[k])
		}
	}
	return out
}

// mentioned reports whether a node name appears in any pod (nodeSelector values, affinity
// fields, ...): such nodes are not interchangeable after all.
func mentioned(c *gen.Case, node string) bool {
	for _, p := range c.Pods {
		b, _ := json.Marshal(p.Spec)
		if strings.Contains(string(b), `"`+node+`"`) {
			return true
		}
	}
	return false
}

// WriteRepro writes a tests/scenarios/ case: cluster.yaml, expected.json (the oracle's
// answer), description, and interchangeable when identical nodes exist.
func WriteRepro(dir string, c *gen.Case, expected *report.Simulate, class string, diffs []Diff, origin string, ties bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	y, err := c.YAML()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "cluster.yaml"), y, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "expected.json"), []byte(PrettySimulate(expected)), 0o644); err != nil {
		return err
	}
	var d strings.Builder
	fmt.Fprintf(&d, "Found by the differential test against kube-scheduler v1.37.2 (%s), shrunk to %s.\n", origin, Size(c))
	fmt.Fprintf(&d, "Difference: %s\n", class)
	for i, x := range diffs {
		if i == 5 {
			fmt.Fprintf(&d, "  (%d more)\n", len(diffs)-5)
			break
		}
		fmt.Fprintf(&d, "  %s\n", x)
	}
	d.WriteString("expected.json is kube-scheduler's answer: build/k8s/kube-scheduler-oracle -f cluster.yaml -o json.\n")
	if ties {
		d.WriteString("kube-scheduler met a tie between nodes that are not interchangeable: expected.json holds its random choice.\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "description"), []byte(d.String()), 0o644); err != nil {
		return err
	}
	var lines []string
	for _, g := range Interchangeable(c) {
		var keep []string
		for _, n := range g {
			if !mentioned(c, n) {
				keep = append(keep, n)
			}
		}
		if len(keep) > 1 {
			sort.Strings(keep)
			lines = append(lines, strings.Join(keep, " "))
		}
	}
	p := filepath.Join(dir, "interchangeable")
	if len(lines) > 0 {
		return os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	}
	_ = os.Remove(p)
	return nil
}

var _ = corev1.PodPending
