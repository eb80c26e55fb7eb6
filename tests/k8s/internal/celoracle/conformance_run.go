package celoracle

// Running the conformance lines against the tool under test (cel-eval --conformance).

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// ConfFile is one file's tally.
type ConfFile struct {
	Name           string
	Passed, Failed int
}

// ConfSummary is the result of a conformance run.
type ConfSummary struct {
	Files    []*ConfFile
	Failures []string // "id: want ..., got ..."
}

// RunConformance sends every line of path (without "expect" and "spec") to the tool and
// compares each answer with the line's "expect".
func RunConformance(tool string, args []string, path string) (*ConfSummary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var reqs []ConfRequest
	var lines [][]byte
	for n, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var r ConfRequest
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n+1, err)
		}
		if r.Expect == nil {
			return nil, fmt.Errorf("%s:%d: no \"expect\" (write the file with cel-oracle --conformance-gen)", path, n+1)
		}
		reqs = append(reqs, r)
		sent := r
		sent.Expect, sent.ExpectAlso, sent.Spec = nil, nil, ""
		lines = append(lines, Marshal(&sent))
	}
	peer := &Peer{Path: tool, Args: args}
	defer peer.Stop()
	answers := peer.AskRaw(lines)
	s := &ConfSummary{}
	files := map[string]*ConfFile{}
	for i, r := range reqs {
		name := r.ID
		if k := strings.IndexByte(name, '/'); k >= 0 {
			name = name[:k]
		}
		f := files[name]
		if f == nil {
			f = &ConfFile{Name: name}
			files[name] = f
			s.Files = append(s.Files, f)
		}
		var got ConfResponse
		if a := answers[i]; a.Failed != nil {
			got = ConfResponse{Result: a.Failed.Result, Error: a.Failed.Error}
		} else if err := json.Unmarshal(a.Line, &got); err != nil {
			got = ConfResponse{Result: ToolError, Error: fmt.Sprintf("not an answer line: %.200q", a.Line)}
		}
		ok := CompareConf(*r.Expect, got) != Differ
		for _, x := range r.ExpectAlso {
			ok = ok || CompareConf(x, got) != Differ
		}
		if !ok || got.ID != r.ID {
			f.Failed++
			s.Failures = append(s.Failures, fmt.Sprintf("%s: %s\n    want %s\n    got  %s", r.ID, r.Expr, confText(*r.Expect), confText(got)))
			continue
		}
		f.Passed++
	}
	sort.Slice(s.Files, func(i, j int) bool { return s.Files[i].Name < s.Files[j].Name })
	return s, nil
}

func confText(r ConfResponse) string {
	if r.Result == ValueResult {
		return "value " + string(r.Value)
	}
	return r.Result + " " + firstLine(r.Error)
}
