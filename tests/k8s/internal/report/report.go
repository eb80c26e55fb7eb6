// Package report holds the JSON documents the oracle and gpusched exchange: the
// `simulate -o json` result, the per-attempt trace lines and the `explain -o json` document.
// docs/testing.md ("The trace line") is the contract these types implement; the field order
// of the structs is the order the keys are written in.
package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// Simulate is `gpusched simulate -o json`: preempted and gated only when non-empty.
type Simulate struct {
	Scheduled     []Placed    `json:"scheduled"`
	Unschedulable []Unplaced  `json:"unschedulable"`
	Preempted     []Preempted `json:"preempted,omitempty"`
	Gated         []PodRef    `json:"gated,omitempty"`
	NotModelled   []PodRef    `json:"notModelled,omitempty"`
	// Warnings: the pod fields gpusched does not model (gpusched only; never compared)
	Warnings []string `json:"warnings,omitempty"`
}

type Placed struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
	// Claims: the devices allocated to the pod's claims (its spec.resourceClaims in order, then
	// the claim of its extended resources served by DRA), each claim's results in order
	Claims []ClaimDevice `json:"claims,omitempty"`
}

// ClaimDevice is one allocated device: status.allocation.devices.results[] of claim NS/NAME.
type ClaimDevice struct {
	Claim   string `json:"claim"`
	Request string `json:"request"`
	Driver  string `json:"driver"`
	Pool    string `json:"pool"`
	Device  string `json:"device"`
}

type Unplaced struct {
	Pod     string `json:"pod"`
	Message string `json:"message"`
}

type Preempted struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
	By   string `json:"by"`
}

type PodRef struct {
	Pod string `json:"pod"`
}

// Attempt is one trace line: one scheduling attempt of one pod.
type Attempt struct {
	Pod           string        `json:"pod"`
	Attempt       int           `json:"attempt"`
	Priority      int32         `json:"priority"`
	NominatedNode string        `json:"nominatedNode,omitempty"`
	Nodes         []NodeVerdict `json:"nodes"`
	// ScoreError: PreScore or Score failed (the attempt fails with it when it has to score)
	ScoreError string `json:"scoreError,omitempty"`
	Result     Result `json:"result"`
}

// NodeVerdict is one node's answer for the attempt: rejected by a filter (Plugin, Reasons,
// Unresolvable) or feasible with its scores. It is written with exactly the keys of the
// contract: rejected {"node","feasible":false,"plugin","reasons"[,"unresolvable":true]},
// feasible {"node","feasible":true,"scores":[...],"total"}.
type NodeVerdict struct {
	Node         string
	Feasible     bool
	Plugin       string
	Reasons      []string
	Unresolvable bool
	Scores       []Score
	Total        int64
}

type nodeVerdictJSON struct {
	Node         string    `json:"node"`
	Feasible     bool      `json:"feasible"`
	Plugin       string    `json:"plugin,omitempty"`
	Reasons      *[]string `json:"reasons,omitempty"`
	Unresolvable bool      `json:"unresolvable,omitempty"`
	Scores       *[]Score  `json:"scores,omitempty"`
	Total        *int64    `json:"total,omitempty"`
}

func (v NodeVerdict) MarshalJSON() ([]byte, error) {
	j := nodeVerdictJSON{Node: v.Node, Feasible: v.Feasible}
	if v.Feasible {
		scores := v.Scores
		if scores == nil {
			scores = []Score{}
		}
		total := v.Total
		j.Scores, j.Total = &scores, &total
	} else {
		reasons := v.Reasons
		if reasons == nil {
			reasons = []string{}
		}
		j.Plugin, j.Reasons, j.Unresolvable = v.Plugin, &reasons, v.Unresolvable
	}
	return json.Marshal(j)
}

func (v *NodeVerdict) UnmarshalJSON(b []byte) error {
	var j nodeVerdictJSON
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	*v = NodeVerdict{Node: j.Node, Feasible: j.Feasible, Plugin: j.Plugin, Unresolvable: j.Unresolvable}
	if j.Reasons != nil {
		v.Reasons = *j.Reasons
	}
	if j.Scores != nil {
		v.Scores = *j.Scores
	}
	if j.Total != nil {
		v.Total = *j.Total
	}
	return nil
}

type Score struct {
	Plugin     string `json:"plugin"`
	Raw        int64  `json:"raw"`
	Normalized int64  `json:"normalized"`
	Weight     int64  `json:"weight"`
}

// Result is the attempt's outcome. Status is Scheduled, Unschedulable (rejected: filters,
// PreFilter, no nodes) or Error (kube-scheduler's SchedulerError: a plugin failed); Message
// the FailedScheduling text; NominatedNode and Victims when preemption succeeded.
type Result struct {
	Status        string   `json:"status"`
	Node          string   `json:"node,omitempty"`
	Message       string   `json:"message,omitempty"`
	NominatedNode string   `json:"nominatedNode,omitempty"`
	Victims       []string `json:"victims,omitempty"`
}

const (
	StatusScheduled     = "Scheduled"
	StatusUnschedulable = "Unschedulable"
	StatusError         = "Error"
)

// Explain is `gpusched explain -o json` (the oracle writes the same shape).
type Explain struct {
	Pod                      string        `json:"pod"`
	Priority                 int32         `json:"priority"`
	Profile                  string        `json:"profile"`
	PercentageOfNodesToScore *int32        `json:"percentageOfNodesToScore,omitempty"`
	PodsAhead                int           `json:"podsAhead"`
	Warnings                 []string      `json:"warnings,omitempty"`
	Nodes                    []ExplainNode `json:"nodes"`
	Result                   ExplainResult `json:"result"`
}

type ExplainNode struct {
	Node         string         `json:"node"`
	Evaluated    *bool          `json:"evaluated,omitempty"`
	Feasible     *bool          `json:"feasible,omitempty"`
	Plugin       string         `json:"plugin,omitempty"`
	Reasons      []string       `json:"reasons,omitempty"`
	Unresolvable *bool          `json:"unresolvable,omitempty"`
	Scores       []ExplainScore `json:"scores,omitempty"`
	Total        *int64         `json:"total,omitempty"`
	Selected     *bool          `json:"selected,omitempty"`
	Preemption   string         `json:"preemption,omitempty"`
}

type ExplainScore struct {
	Plugin     string `json:"plugin"`
	Raw        int64  `json:"raw"`
	Normalized int64  `json:"normalized"`
	Weight     int64  `json:"weight"`
	Weighted   int64  `json:"weighted"`
}

type ExplainResult struct {
	Status        string   `json:"status"`
	Node          string   `json:"node,omitempty"`
	Message       string   `json:"message,omitempty"`
	NominatedNode string   `json:"nominatedNode,omitempty"`
	Victims       []string `json:"victims,omitempty"`
}

// WriteJSON writes v as one line of compact JSON, with <, > and & as they are (as gpusched
// writes them).
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Compact is v as compact JSON without HTML escaping and without the newline.
func Compact(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// ReadTrace reads a trace file: one Attempt per line; blank lines are skipped.
func ReadTrace(path string) ([]Attempt, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Attempt
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" {
			continue
		}
		var a Attempt
		dec := json.NewDecoder(strings.NewReader(t))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			return nil, fmt.Errorf("%s: line %d: %v", path, line, err)
		}
		out = append(out, a)
	}
	return out, sc.Err()
}

// ReadSimulate parses a `simulate -o json` document.
func ReadSimulate(b []byte) (*Simulate, error) {
	var s Simulate
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	return &s, nil
}
