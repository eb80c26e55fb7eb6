package celoracle

// The differential run: generate cases in batches, send each batch to the tool under test
// while the real CEL answers the same requests in-process, compare, and shrink the first few
// cases of each difference class into reproducers.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Options of a run.
type Options struct {
	CelEval      string   // the tool under test
	Args         []string // its arguments
	Seed         int64
	N            int
	Only         int // run only case Only (-1: all)
	Out          string
	Batch        int
	PerClass     int // reproducers written per class
	ShrinkTrials int
	ShrinkTime   time.Duration // spent shrinking one reproducer at most (default 60 s)
	MaxClasses   int           // classes whose reproducers are shrunk (default 20)
	Timeout      time.Duration // for one answer of the tool (default 20 s)
	Log          io.Writer
	Verbose      bool
}

// Class is one kind of difference.
type Class struct {
	No      int // in order of discovery: the reproducers are diff-No-K.*
	Name    string
	Count   int
	Written []string
}

// Summary of a run.
type Summary struct {
	Compared, Differ, Soft, GoUnstable int
	GoPanics                           []string // expressions the real library panicked on
	Mix                                map[string]int
	Classes                            []*Class
	Used                               map[string]int
	Elapsed                            time.Duration
}

// Run runs the differential test.
func Run(o Options) (*Summary, error) {
	if o.Batch <= 0 {
		o.Batch = 500
	}
	if o.PerClass <= 0 {
		o.PerClass = 3
	}
	if o.ShrinkTrials <= 0 {
		o.ShrinkTrials = 400
	}
	if o.ShrinkTime <= 0 {
		o.ShrinkTime = 60 * time.Second
	}
	if o.MaxClasses <= 0 {
		o.MaxClasses = 20
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if err := prepareOut(o.Out); err != nil {
		return nil, err
	}
	peer := &Peer{Path: o.CelEval, Args: o.Args, Timeout: o.Timeout}
	defer peer.Stop()
	s := &Summary{Mix: map[string]int{}, Used: map[string]int{}}
	classes := map[string]*Class{}
	start := time.Now()
	lo, hi := 0, o.N
	if o.Only >= 0 {
		lo, hi = o.Only, o.Only+1
	}
	lastLog := time.Now()
	for b := lo; b < hi; b += o.Batch {
		e := min(b+o.Batch, hi)
		cases := make([]*Case, 0, e-b)
		lines := make([][]byte, 0, e-b)
		for i := b; i < e; i++ {
			c := NewCase(o.Seed, i)
			id, _ := json.Marshal(fmt.Sprintf("%d-%d", o.Seed, i))
			c.Req.ID = id
			cases = append(cases, c)
			lines = append(lines, Marshal(&c.Req))
		}
		var cAnswers []Response
		done := make(chan struct{})
		go func() { cAnswers = peer.Ask(lines); close(done) }()
		goAnswers := make([][]Response, len(cases))
		for j, c := range cases {
			goAnswers[j] = goAnswer(&c.Req, c.OrderSensitive)
			countMix(s.Mix, goAnswers[j][0])
			for _, u := range c.Used {
				s.Used[u]++
			}
		}
		<-done
		for j, c := range cases {
			if goAnswers[j][0].Result == GoPanic {
				s.GoPanics = append(s.GoPanics, *c.Req.Expr)
				continue
			}
			s.Compared++
			cr := cAnswers[j]
			v, g := CompareAny(goAnswers[j], cr)
			if v == Same && string(cr.ID) != string(c.Req.ID) {
				v = Differ
				cr.Result, cr.Error = ToolError, "answer id "+string(cr.ID)+" for request id "+string(c.Req.ID)
			}
			if v == Soft {
				s.Soft++
				continue
			}
			if v == Same {
				continue
			}
			if c.OrderSensitive {
				// more orders: C's answer may be one Go has not shown yet (5 s at most)
				t := time.Now()
				for k := 0; k < 20 && v != Same && time.Since(t) < 5*time.Second; k++ {
					goAnswers[j] = append(goAnswers[j], goAnswer(&c.Req, true)...)
					v, g = CompareAny(goAnswers[j], cr)
				}
				if v == Soft {
					s.Soft++
				}
				if v == Same || v == Soft {
					continue
				}
			}
			// is Go itself stable on this input? (an order we did not mark)
			if !c.OrderSensitive {
				more := goAnswer(&c.Req, true)
				if v2, _ := CompareAny(more, g); v2 == Differ || len(distinct(more)) > 1 {
					s.GoUnstable++
					fmt.Fprintf(o.Log, "go unstable on case %d (not counted): %s\n", b+j, *c.Req.Expr)
					continue
				}
			}
			s.Differ++
			name := ClassOf(g, cr)
			cl := classes[name]
			if cl == nil {
				cl = &Class{No: len(s.Classes) + 1, Name: name}
				classes[name] = cl
				s.Classes = append(s.Classes, cl)
			}
			cl.Count++
			if len(cl.Written) < o.PerClass && o.Out != "" {
				shrink := cl.No <= o.MaxClasses
				f, err := writeRepro(o, peer, c, b+j, name, cl.No, len(cl.Written), shrink)
				if err != nil {
					return s, err
				}
				cl.Written = append(cl.Written, f)
			}
			if o.Verbose {
				fmt.Fprintf(o.Log, "case %d: %s\n  expr: %s\n", b+j, name, *c.Req.Expr)
			}
		}
		if time.Since(lastLog) > 10*time.Second {
			fmt.Fprintf(o.Log, "... %d compared, %d differences (%s)\n", s.Compared, s.Differ, time.Since(start).Round(time.Second))
			lastLog = time.Now()
		}
	}
	s.Elapsed = time.Since(start)
	sort.SliceStable(s.Classes, func(i, j int) bool { return s.Classes[i].Count > s.Classes[j].Count })
	if o.Out != "" {
		if err := os.WriteFile(filepath.Join(o.Out, "summary.txt"), []byte(s.Report(o)), 0o644); err != nil {
			return s, err
		}
	}
	return s, nil
}

// goAnswer: the real CEL's answer, several times over when the order of a map iteration
// can change it (each distinct answer once).
func goAnswer(req *Request, orderSensitive bool) []Response {
	o := Oracle{}
	start := time.Now()
	first := o.Answer(req)
	if !orderSensitive {
		return []Response{first}
	}
	out := []Response{first}
	// 12 more runs, or fewer when one run is slow (an expression near the cost limit)
	for k := 0; k < 12 && time.Since(start) < time.Second; k++ {
		r := o.Answer(req)
		if !containsResp(out, r) {
			out = append(out, r)
		}
	}
	return out
}

func containsResp(rs []Response, r Response) bool {
	for _, x := range rs {
		if Compare(x, r) == Same && x.Error == r.Error {
			return true
		}
	}
	return false
}

func distinct(rs []Response) []Response {
	var out []Response
	for _, r := range rs {
		if !containsResp(out, r) {
			out = append(out, r)
		}
	}
	return out
}

func countMix(mix map[string]int, r Response) {
	if r.Results != nil {
		for _, x := range r.Results {
			mix[x.Result]++
		}
		return
	}
	mix[r.Result]++
}

var reproName = regexp.MustCompile(`^diff-\d+-\d+\.(json|in)$`)

// prepareOut makes the folder and removes the reproducers of an earlier run (only ours).
func prepareOut(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if reproName.MatchString(e.Name()) || e.Name() == "summary.txt" {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return nil
}

// Repro is a reproducer file: the shrunk request, both answers, where it came from.
type Repro struct {
	Class    string     `json:"class"`
	Seed     int64      `json:"seed"`
	Index    int        `json:"index"`
	Request  Request    `json:"request"`
	Go       []Response `json:"go"`
	C        Response   `json:"c"`
	Original string     `json:"originalExpr"`
}

func writeRepro(o Options, peer *Peer, c *Case, idx int, class string, classNo, k int, shrink bool) (string, error) {
	orig := *c.Req.Expr
	trials := o.ShrinkTrials
	if !shrink {
		trials = 0
	}
	req, gs, cr := Shrink(peer, c, class, trials, o.ShrinkTime)
	r := Repro{Class: class, Seed: o.Seed, Index: idx, Request: req, Go: gs, C: cr, Original: orig}
	base := filepath.Join(o.Out, fmt.Sprintf("diff-%03d-%d", classNo, k))
	doc, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(base+".json", append(doc, '\n'), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(base+".in", Marshal(&req), 0o644); err != nil {
		return "", err
	}
	return base + ".in", nil
}

// Report is the human summary: counts, the mix of Go's answers, the classes.
func (s *Summary) Report(o Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cel-difftest --seed %d --n %d against %s: %d compared, %d differences", o.Seed, o.N, o.CelEval, s.Compared, s.Differ)
	if s.Soft > 0 {
		rule := "first line"
		if SyntaxPositionOnly {
			rule = "first line or position"
		}
		fmt.Fprintf(&b, " (+%d syntax-error texts equal in the %s only)", s.Soft, rule)
	}
	fmt.Fprintf(&b, " in %s\n", s.Elapsed.Round(time.Millisecond))
	b.WriteString("mix of the real CEL's answers: " + s.MixString() + "\n")
	if len(s.GoPanics) > 0 {
		fmt.Fprintf(&b, "the real CEL panicked on %d expressions (not compared), e.g. %s\n", len(s.GoPanics), s.GoPanics[0])
	}
	if s.GoUnstable > 0 {
		fmt.Fprintf(&b, "go unstable (unmarked map order; not compared): %d\n", s.GoUnstable)
	}
	for i, c := range s.Classes {
		fmt.Fprintf(&b, "class %d (%d): %s\n", i+1, c.Count, c.Name)
		for _, f := range c.Written {
			fmt.Fprintf(&b, "    %s\n", f)
		}
	}
	return b.String()
}

// MixString: true / false / compile-error / runtime-error shares.
func (s *Summary) MixString() string {
	total := 0
	for _, n := range s.Mix {
		total += n
	}
	if total == 0 {
		return "none"
	}
	var parts []string
	for _, k := range []string{True, False, CompileError, RuntimeError, ToolError} {
		if n := s.Mix[k]; n > 0 || k != ToolError {
			parts = append(parts, fmt.Sprintf("%s %.1f%%", k, 100*float64(n)/float64(total)))
		}
	}
	return strings.Join(parts, ", ")
}
