package difftest

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"gpulabel.test/k8s/internal/report"
)

// Diff is one difference between the oracle and gpusched. Class groups differences of one
// cause (the key a reproducer is shrunk for); Text says what differs.
type Diff struct {
	Class   string
	Pod     string
	Attempt int
	Text    string
}

func (d Diff) String() string {
	if d.Pod == "" {
		return d.Text
	}
	return fmt.Sprintf("%s attempt %d: %s", d.Pod, d.Attempt, d.Text)
}

// Best returns the feasible nodes with the highest total of an attempt's verdicts.
func Best(a *report.Attempt) []string {
	var best []string
	var top int64
	for _, v := range a.Nodes {
		if !v.Feasible {
			continue
		}
		switch {
		case best == nil || v.Total > top:
			best, top = []string{v.Node}, v.Total
		case v.Total == top:
			best = append(best, v.Node)
		}
	}
	return best
}

func feasible(a *report.Attempt, node string) bool {
	for _, v := range a.Nodes {
		if v.Node == node {
			return v.Feasible
		}
	}
	return false
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// draFilterError is the text kube-scheduler gives an attempt one of whose nodes' DynamicResources
// Filter failed with an error (a CEL runtime error on a device, an allocator error naming a
// device). kube-scheduler filters the nodes in parallel and reports the first error any
// goroutine meets (its preemption's dry run too), so which node's, and which device's, error
// the message names is a race: messages are compared with the error's text masked, and the
// nodes' verdicts of such an attempt not at all.
const draFilterError = `running "DynamicResources" filter plugin: `

// MaskDRAFilterError replaces the error's text after draFilterError, up to the end of the
// message, with a placeholder. Preemption's dry run may collect the errors of several nodes
// before it stops: kube-scheduler then writes them as a list ("[E1, E2]"), which is masked
// alike.
func MaskDRAFilterError(msg string) string {
	if i := strings.Index(msg, draFilterError); i >= 0 {
		return strings.TrimSuffix(msg[:i], "[") + draFilterError + "<the error of one of the nodes>"
	}
	return msg
}

// CompareAttempt compares gpusched's version of an attempt (g) with the oracle's (o): each
// node's verdict (filter plugin, reasons, unresolvable; or every plugin's score and the
// total), whether the pod fits, the FailedScheduling message, the node (the oracle's must be
// among gpusched's best, or be the nominated node that passes), the nominated node and the
// victims. followed says gpusched was asked to follow the oracle's ties, so its node must
// then be the oracle's.
func CompareAttempt(o, g *report.Attempt, followed bool) []Diff {
	var ds []Diff
	add := func(class, format string, a ...any) {
		ds = append(ds, Diff{Class: class, Pod: o.Pod, Attempt: o.Attempt, Text: fmt.Sprintf(format, a...)})
	}
	gn := map[string]*report.NodeVerdict{}
	for i := range g.Nodes {
		gn[g.Nodes[i].Node] = &g.Nodes[i]
	}
	raced := strings.Contains(o.Result.Message, draFilterError) &&
		strings.Contains(g.Result.Message, draFilterError)
	for i := range o.Nodes {
		if raced {
			break // (see draFilterError)
		}
		ov := &o.Nodes[i]
		gv := gn[ov.Node]
		if gv == nil {
			add("nodes", "node %s: not in gpusched's answer", ov.Node)
			continue
		}
		delete(gn, ov.Node)
		if gv.Plugin == "(not evaluated)" && o.NominatedNode != "" && feasible(o, o.NominatedNode) {
			continue // explain stops at a nominated node that passes, as kube-scheduler does
		}
		if o.ScoreError != "" && ov.Feasible && gv.Feasible {
			continue // kube-scheduler has no scores to compare (see the result)
		}
		if o.NominatedNode != "" && feasible(o, o.NominatedNode) && ov.Feasible && gv.Feasible {
			// the nominated node passes and takes the pod unscored: the oracle's scores
			// (normalised over every feasible node) and gpusched's (that node alone) are
			// both artefacts of the explanation
			oc, gc := *ov, *gv
			oc.Scores, gc.Scores = nil, nil
			oc.Total, gc.Total = 0, 0
			compareNode(&oc, &gc, add)
			continue
		}
		compareNode(ov, gv, add)
	}
	for name := range gn {
		if raced {
			break
		}
		add("nodes", "node %s: only in gpusched's answer", name)
	}

	or, gr := o.Result, g.Result
	if or.Status != gr.Status {
		add("fits", "oracle %s%s, gpusched %s%s", or.Status, where(or), gr.Status, where(gr))
		return ds
	}
	if or.Status == report.StatusScheduled {
		nominated := o.NominatedNode != "" && feasible(o, o.NominatedNode)
		best := Best(g)
		switch {
		case nominated && gr.Node != o.NominatedNode:
			add("node", "the nominated node %s passes the filters and takes the pod; gpusched chose %s", o.NominatedNode, gr.Node)
		case nominated:
		case or.Node != gr.Node && !contains(best, or.Node):
			add("node", "kube-scheduler chose %s, which is not among gpusched's best nodes %v", or.Node, best)
		case or.Node != gr.Node && followed:
			add("follow", "kube-scheduler chose %s, among gpusched's best %v, but gpusched --follow chose %s", or.Node, best, gr.Node)
		}
		return ds
	}
	if MaskDRAFilterError(or.Message) != MaskDRAFilterError(gr.Message) {
		text := fmt.Sprintf("FailedScheduling message:\n      kube-scheduler: %s\n      gpusched:       %s", or.Message, gr.Message)
		for _, class := range messageClasses(or.Message, gr.Message) {
			ds = append(ds, Diff{Class: class, Pod: o.Pod, Attempt: o.Attempt, Text: text})
		}
	}
	if or.NominatedNode != gr.NominatedNode {
		// preemption picks among equally good candidates in an order of its own
		add("nominated", "nominated node: kube-scheduler %q, gpusched %q", or.NominatedNode, gr.NominatedNode)
	}
	ov, gv := sorted(or.Victims), sorted(gr.Victims)
	if strings.Join(ov, ",") != strings.Join(gv, ",") {
		add("victims", "victims: kube-scheduler %v, gpusched %v", ov, gv)
	}
	return ds
}

func where(r report.Result) string {
	if r.Node != "" {
		return " on " + r.Node
	}
	if r.Message != "" {
		return fmt.Sprintf(" (%s)", r.Message)
	}
	return ""
}

func sorted(xs []string) []string {
	out := append([]string(nil), xs...)
	sort.Strings(out)
	return out
}

func compareNode(o, g *report.NodeVerdict, add func(class, format string, a ...any)) {
	if g.Plugin == "(not evaluated)" {
		add("sampling", "node %s: gpusched did not evaluate it", o.Node)
		return
	}
	if o.Feasible != g.Feasible {
		if o.Feasible {
			add("filter "+g.Plugin+": "+pattern(strings.Join(g.Reasons, ", ")), "node %s: kube-scheduler: feasible; gpusched: %s %q", o.Node, g.Plugin, g.Reasons)
		} else {
			add("filter "+o.Plugin+": "+pattern(strings.Join(o.Reasons, ", ")), "node %s: kube-scheduler: %s %q; gpusched: feasible", o.Node, o.Plugin, o.Reasons)
		}
		return
	}
	if !o.Feasible {
		// kube-scheduler lists extended resources in map order: the reasons are a set
		or, gr := strings.Join(sorted(o.Reasons), ", "), strings.Join(sorted(g.Reasons), ", ")
		if o.Plugin != g.Plugin || or != gr {
			class := fmt.Sprintf("filter %s: %s / %s: %s", o.Plugin, pattern(or), g.Plugin, pattern(gr))
			if o.Plugin == g.Plugin {
				ko, gonly := setDiff(o.Reasons, g.Reasons), setDiff(g.Reasons, o.Reasons)
				class = fmt.Sprintf("filter %s: kube-scheduler «%s» gpusched «%s»", o.Plugin, pattern(strings.Join(ko, "; ")), pattern(strings.Join(gonly, "; ")))
			}
			add(class,
				"node %s: kube-scheduler: %s %q; gpusched: %s %q", o.Node, o.Plugin, o.Reasons, g.Plugin, g.Reasons)
		} else if o.Unresolvable != g.Unresolvable {
			add("unresolvable "+o.Plugin, "node %s: %s: unresolvable: kube-scheduler %v, gpusched %v", o.Node, o.Plugin, o.Unresolvable, g.Unresolvable)
		}
		return
	}
	scoreDiffs := 0
	inner := add
	add = func(class, format string, a ...any) {
		scoreDiffs++
		inner(class, format, a...)
	}
	gs := map[string]report.Score{}
	for _, s := range g.Scores {
		gs[s.Plugin] = s
	}
	seen := map[string]bool{}
	for _, s := range o.Scores {
		seen[s.Plugin] = true
		t, ok := gs[s.Plugin]
		switch {
		case !ok && s.Normalized != 0:
			add("score "+s.Plugin, "node %s: %s: kube-scheduler %d (raw %d), gpusched has no such score", o.Node, s.Plugin, s.Normalized, s.Raw)
		case !ok:
		case s.Normalized != t.Normalized || s.Weight != t.Weight:
			add("score "+s.Plugin, "node %s: %s: kube-scheduler %d x %d (raw %d), gpusched %d x %d (raw %d)", o.Node, s.Plugin, s.Normalized, s.Weight, s.Raw, t.Normalized, t.Weight, t.Raw)
		case s.Raw != t.Raw:
			add("raw score "+s.Plugin, "node %s: %s: raw score kube-scheduler %d, gpusched %d (normalized %d both)", o.Node, s.Plugin, s.Raw, t.Raw, s.Normalized)
		}
	}
	for _, t := range g.Scores {
		if !seen[t.Plugin] && t.Normalized != 0 {
			// a plugin kube-scheduler skipped (PreScore Skip) scores 0
			add("score "+t.Plugin, "node %s: %s: gpusched %d x %d, kube-scheduler skips the plugin (0)", o.Node, t.Plugin, t.Normalized, t.Weight)
		}
	}
	if o.Total != g.Total && scoreDiffs == 0 {
		add("total", "node %s: total: kube-scheduler %d, gpusched %d", o.Node, o.Total, g.Total)
	}
}

var (
	reCount = regexp.MustCompile(`(^|: |, )\d+ `)
	reTaint = regexp.MustCompile(`\{[^{}]*\}`)
	reNum   = regexp.MustCompile(`\d+`)
)

// pattern is a reason or message with its variable parts (counts, taints) blanked, so
// differences of one cause fall into one class.
func pattern(s string) string {
	s = reTaint.ReplaceAllString(s, "{…}")
	return s
}

// messageClasses names the causes of a message difference: per part of the message (the
// filter histogram, the preemption text), the entries only one side has, counts, node names
// and taints blanked.
func messageClasses(o, g string) []string {
	oe, ge := entries(o), entries(g)
	var classes []string
	for _, sec := range []string{"", "preemption: "} {
		var ko, gonly []string
		for e := range oe {
			if strings.HasPrefix(e, "preemption: ") == (sec != "") && !ge[e] {
				ko = append(ko, e)
			}
		}
		for e := range ge {
			if strings.HasPrefix(e, "preemption: ") == (sec != "") && !oe[e] {
				gonly = append(gonly, e)
			}
		}
		if len(ko)+len(gonly) == 0 {
			continue
		}
		sort.Strings(ko)
		sort.Strings(gonly)
		classes = append(classes, fmt.Sprintf("message: kube-scheduler «%s» gpusched «%s»", strings.Join(ko, "; "), strings.Join(gonly, "; ")))
	}
	if len(classes) == 0 {
		classes = append(classes, "message: counts or order")
	}
	return classes
}

var (
	reFound = regexp.MustCompile(`found a potential placement for pod on node \S+, preempting \d+ victims`)
)

func entries(msg string) map[string]bool {
	out := map[string]bool{}
	parts := strings.SplitN(msg, " preemption: ", 2)
	add := func(prefix, s string) {
		s = strings.TrimSuffix(strings.TrimSpace(s), ".")
		if reFound.MatchString(s) {
			out[prefix+"found a potential placement for pod on node N, preempting K victims"] = true
			return
		}
		if i := strings.Index(s, "nodes are available: "); i >= 0 {
			s = s[i+len("nodes are available: "):]
		}
		for _, e := range strings.Split(s, ", ") {
			e = reCount.ReplaceAllString(e, "$1")
			e = reTaint.ReplaceAllString(e, "{…}")
			out[prefix+e] = true
		}
	}
	add("", parts[0])
	if len(parts) == 2 {
		add("preemption: ", parts[1])
	} else {
		out["preemption: (none)"] = true
	}
	return out
}

// CompareSimulate compares two `simulate -o json` documents exactly. When they differ only
// in the devices of scheduled pods' claims, each such pod is a "devices" difference.
func CompareSimulate(o, g *report.Simulate) []Diff {
	oc, gc := *o, *g
	oc.Warnings, gc.Warnings = nil, nil
	mask := func(s *report.Simulate) {
		s.Unschedulable = append([]report.Unplaced(nil), s.Unschedulable...)
		for i := range s.Unschedulable {
			s.Unschedulable[i].Message = MaskDRAFilterError(s.Unschedulable[i].Message)
		}
	}
	mask(&oc)
	mask(&gc)
	ob, gb := mustJSON(&oc), mustJSON(&gc)
	if ob == gb {
		return nil
	}
	strip := func(s report.Simulate) string {
		s.Scheduled = append([]report.Placed(nil), s.Scheduled...)
		for i := range s.Scheduled {
			s.Scheduled[i].Claims = nil
		}
		return mustJSON(&s)
	}
	if strip(oc) == strip(gc) {
		var ds []Diff
		for i, op := range oc.Scheduled {
			gp := gc.Scheduled[i]
			if oj, gj := mustJSON(op.Claims), mustJSON(gp.Claims); oj != gj {
				ds = append(ds, Diff{Class: "devices", Pod: op.Pod,
					Text: fmt.Sprintf("devices on %s:\n      kube-scheduler: %s\n      gpusched:       %s", op.Node, oj, gj)})
			}
		}
		return ds
	}
	return []Diff{{Class: "simulate", Text: fmt.Sprintf("simulate -o json:\n      kube-scheduler: %s\n      gpusched:       %s", ob, gb)}}
}

var _ = reNum

// setDiff: the elements of a not in b, sorted.
func setDiff(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}
