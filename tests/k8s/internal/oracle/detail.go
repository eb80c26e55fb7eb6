package oracle

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"gpulabel.test/k8s/internal/report"
)

// attemptDetail evaluates the pod on the snapshot of the attempt that is about to run
// (SchedulePod's wrapper calls it first): the framework's own PreFilter, Filter (with
// nominated pods, as findNodesThatPassFilters), PreScore and Score on every node, in a cycle
// state of its own so the real attempt is untouched. Scores are computed for every feasible
// node even where the attempt itself skips scoring (one feasible node, a nominated node that
// passes).
func (r *run) attemptDetail(ctx context.Context, f framework.Framework, pod *corev1.Pod) *report.Attempt {
	a := &report.Attempt{Pod: Key(pod), Priority: prio(pod), NominatedNode: pod.Status.NominatedNodeName}
	nodes, err := f.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return a
	}
	verdict := make([]report.NodeVerdict, len(nodes))
	state := framework.NewCycleState()
	preRes, st, withNodes := f.RunPreFilterPlugins(ctx, state, pod)
	var feasible []fwk.NodeInfo
	var feasibleIdx []int
	for i, ni := range nodes {
		v := &verdict[i]
		v.Node = ni.Node().Name
		switch {
		case !st.IsSuccess():
			// a PreFilter rejection answers for every node
			v.Plugin, v.Reasons = st.Plugin(), st.Reasons()
			v.Unresolvable = st.Code() == fwk.UnschedulableAndUnresolvable
		case !preRes.AllNodes() && !preRes.NodeNames.Has(v.Node):
			v.Plugin = strings.Join(sets.List(withNodes), ",")
			v.Reasons = []string{fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(withNodes))}
			v.Unresolvable = true
		default:
			s := f.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			if s.IsSuccess() {
				v.Feasible = true
				feasible = append(feasible, ni)
				feasibleIdx = append(feasibleIdx, i)
			} else {
				v.Plugin, v.Reasons = s.Plugin(), s.Reasons()
				v.Unresolvable = s.Code() == fwk.UnschedulableAndUnresolvable
				if s.Code() == fwk.Error {
					v.Reasons = []string{"error: " + s.Message()}
				}
			}
		}
	}
	if len(feasible) > 0 && f.HasScorePlugins() {
		if ps := f.RunPreScorePlugins(ctx, state, pod, feasible); !ps.IsSuccess() {
			a.ScoreError = ps.Message()
		} else if scores, ss := f.RunScorePlugins(ctx, state, pod, feasible); !ss.IsSuccess() {
			a.ScoreError = ss.Message()
		} else {
			for k, ns := range scores {
				v := &verdict[feasibleIdx[k]]
				raw := map[string]int64{}
				for _, rs := range ns.RawScores {
					raw[rs.Name] = rs.Score
				}
				for _, ws := range ns.Scores {
					w := r.weights[ws.Name]
					norm := ws.Score
					if w != 0 {
						norm = ws.Score / w
					}
					v.Scores = append(v.Scores, report.Score{Plugin: ws.Name, Raw: raw[ws.Name], Normalized: norm, Weight: w})
				}
				v.Total = ns.TotalScore
			}
		}
	}
	// nodes in input order
	sort.SliceStable(verdict, func(i, j int) bool { return r.nodeIdx[verdict[i].Node] < r.nodeIdx[verdict[j].Node] })
	a.Nodes = verdict
	return a
}

// explainOf builds the `explain -o json` document of a pod: its first attempt's detail and
// its outcome.
func explainOf(res *Result, key string, pending []*corev1.Pod) *report.Explain {
	var out *Outcome
	ahead := 0
	for i, o := range res.Outcomes {
		if Key(o.Pod) == key {
			out, ahead = o, i
			break
		}
	}
	if out == nil {
		return nil
	}
	x := &report.Explain{Pod: key, Priority: prio(out.Pod), Profile: corev1.DefaultSchedulerName, PodsAhead: ahead, Nodes: []report.ExplainNode{}}
	var first *report.Attempt
	for _, a := range res.Attempts {
		if a.Pod == key {
			first = a
			break
		}
	}
	t, f := true, false
	if first != nil {
		for _, v := range first.Nodes {
			n := report.ExplainNode{Node: v.Node}
			if v.Feasible {
				n.Feasible = &t
				for _, s := range v.Scores {
					n.Scores = append(n.Scores, report.ExplainScore{Plugin: s.Plugin, Raw: s.Raw, Normalized: s.Normalized, Weight: s.Weight, Weighted: s.Normalized * s.Weight})
				}
				if n.Scores == nil {
					n.Scores = []report.ExplainScore{}
				}
				total := v.Total
				n.Total = &total
				sel := out.Scheduled && out.Node == v.Node
				n.Selected = &sel
			} else {
				n.Feasible = &f
				n.Plugin = v.Plugin
				n.Reasons = v.Reasons
				u := v.Unresolvable
				n.Unresolvable = &u
			}
			x.Nodes = append(x.Nodes, n)
		}
	}
	switch {
	case out.Gated:
		x.Result.Status = "SchedulingGated"
	case out.Scheduled && len(out.Victims) > 0:
		x.Result.Status = "ScheduledAfterPreemption"
	case out.Scheduled:
		x.Result.Status = "Scheduled"
	default:
		x.Result.Status = "Unschedulable"
	}
	x.Result.Node = out.Node
	x.Result.Message = out.Message
	x.Result.NominatedNode = out.NominatedNode
	x.Result.Victims = keys(out.Victims)
	return x
}
