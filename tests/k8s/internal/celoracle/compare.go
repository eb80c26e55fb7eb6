package celoracle

// What must be equal between the Go and the C answers (docs/cel-testing.md): the result
// always; the error text of a runtime error; the text of a compile error, except that for a
// syntax error (cel-go's ANTLR parser) only its first line must be equal — the rest (the
// parser's follow-up errors) is a "soft" difference, counted but not failed.

import (
	"regexp"
	"strings"
)

// Verdict of one comparison.
type Verdict int

const (
	Same Verdict = iota
	Soft
	Differ
)

// CompareResult compares two single results.
func CompareResult(g, c Result) Verdict {
	if g.Result != c.Result {
		return Differ
	}
	if g.Result != CompileError && g.Result != RuntimeError {
		return Same
	}
	if g.Error == c.Error {
		return Same
	}
	if g.Result == CompileError && isSyntaxError(g.Error) {
		if firstLine(g.Error) == firstLine(c.Error) {
			return Soft
		}
		if SyntaxPositionOnly && syntaxPos(g.Error) != "" && syntaxPos(g.Error) == syntaxPos(c.Error) {
			return Soft
		}
	}
	return Differ
}

// SyntaxPositionOnly relaxes the rule for syntax errors to the first error's position and kind
// (`ERROR: <input>:L:C: Syntax error:`), for cel-difftest --syntax-errors=position.
var SyntaxPositionOnly bool

var syntaxPosRe = regexp.MustCompile(`^compilation failed: ERROR: <input>:\d+:\d+: Syntax error: `)

func syntaxPos(s string) string { return syntaxPosRe.FindString(s) }

// Compare compares whole responses (single or "results").
func Compare(g, c Response) Verdict {
	if g.MaxCost != nil && c.MaxCost != nil && *g.MaxCost != *c.MaxCost {
		return Differ
	}
	if g.Results != nil || c.Results != nil {
		if g.Results == nil || c.Results == nil || len(g.Results) != len(c.Results) {
			if g.Results == nil && c.Results == nil {
				return Same
			}
			// a compile error answers a "devices" request once, at the top
			return CompareResult(Result{g.Result, g.Error}, Result{c.Result, c.Error})
		}
		v := Same
		for i := range g.Results {
			v = max(v, CompareResult(g.Results[i], c.Results[i]))
		}
		return v
	}
	return CompareResult(Result{g.Result, g.Error}, Result{c.Result, c.Error})
}

// CompareAny: c against every answer Go gave (an order-sensitive expression can have more
// than one); the best verdict wins, with the Go answer it was reached against.
func CompareAny(gs []Response, c Response) (Verdict, Response) {
	best, with := Differ, gs[0]
	for _, g := range gs {
		if v := Compare(g, c); v < best {
			best, with = v, g
		}
	}
	return best, with
}

func isSyntaxError(s string) bool { return strings.Contains(s, ": Syntax error: ") }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

var (
	sigPos    = regexp.MustCompile(`ERROR: <input>:\d+:\d+: `)
	sigQuoted = regexp.MustCompile(`'[^']*'|"[^"]*"|\{[^}]*\}`)
	sigNum    = regexp.MustCompile(`[0-9]+`)
)

// sig is an error text reduced to its kind: the first line without positions, quotes,
// numbers and what follows the message's first ": " (a key, a value: "no such key").
func sig(s string) string {
	s = firstLine(s)
	compile := strings.HasPrefix(s, "compilation failed: ")
	s = strings.TrimPrefix(s, "compilation failed: ")
	s = sigPos.ReplaceAllString(s, "")
	s = sigQuoted.ReplaceAllString(s, "_")
	s = sigNum.ReplaceAllString(s, "N")
	if i := strings.Index(s, ": "); i > 0 {
		s = s[:i]
	}
	if compile {
		s = "compile: " + s
	}
	if len(s) > 70 {
		s = s[:70]
	}
	return s
}

// ClassOf names the kind of difference between g and c (the first differing result of a
// "devices" answer), so one reproducer can stand for many.
func ClassOf(g, c Response) string {
	if g.MaxCost != nil && c.MaxCost != nil && *g.MaxCost != *c.MaxCost {
		return "maxCost differs"
	}
	if g.Results != nil && c.Results != nil && len(g.Results) == len(c.Results) {
		for i := range g.Results {
			if CompareResult(g.Results[i], c.Results[i]) == Differ {
				return classOfResult(g.Results[i], c.Results[i])
			}
		}
	}
	if (g.Results == nil) != (c.Results == nil) {
		gr, cr := g.Result, c.Result
		if gr == "" {
			gr = "results"
		}
		if cr == "" {
			cr = "results"
		}
		return "shape: go " + gr + ", c " + cr
	}
	return classOfResult(Result{g.Result, g.Error}, Result{c.Result, c.Error})
}

func classOfResult(g, c Result) string {
	if g.Result != c.Result {
		s := "go " + g.Result + ", c " + c.Result
		if g.Error != "" {
			s += "; go: " + sig(g.Error)
		}
		if c.Error != "" {
			s += "; c: " + sig(c.Error)
		}
		return s
	}
	what := "message"
	if g.Result == CompileError && isSyntaxError(g.Error) {
		what = "syntax error first line"
	}
	return g.Result + " " + what + "; go: " + sig(g.Error) + "; c: " + sig(c.Error)
}
