// cel-difftest is the differential test of the C CEL (build/cel-eval) against the real one
// (k8s.io/dynamic-resource-allocation/cel v0.37.2, in-process): seeded random expressions and
// devices, every answer compared, each class of difference shrunk to a reproducer.
// `make check-k8s` runs it; docs/cel-testing.md describes it. Test tooling only.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"gpulabel.test/k8s/internal/celoracle"
)

const usage = `Differential test of build/cel-eval against the real CEL of kube-scheduler v1.37.2.

Generates --n random expressions and devices from --seed, asks the tool (through its stdin and
stdout, many lines in flight) and the real CEL (in-process) the same requests, and compares
each answer: the result always, the error text of runtime errors and compile errors (of a
syntax error only its first line must match). The first --per-class cases of each class of
difference are shrunk and written to --out as diff-C-K.in (the request line: cel-eval < it)
and diff-C-K.json (both answers). Prints "N compared, N differences" and the mix of answers;
exit 1 if any difference.

Usage:
  cel-difftest --cel-eval PATH [flags]
  cel-difftest --cel-eval PATH --conformance FILE
                      cel-spec's conformance lines (cel-oracle --conformance-gen) through
                      "cel-eval --conformance": passed/failed per file, exit 1 if any failed

Flags:
  --cel-eval PATH     the tool under test (build/cel-eval; build/k8s/cel-oracle tests the
                      driver itself)
  --seed S            the seed (default 1); case I of seed S is the same on every machine
  --n N               how many cases (default 20000)
  --only I            run only case I
  --out DIR           where reproducers go (default build/cel-diff)
  --per-class K       reproducers per class (default 3)
  --shrink-trials N   tool runs spent shrinking one reproducer (default 400)
  --shrink-time D     time spent shrinking one reproducer at most (default 60s)
  --max-classes N     classes whose reproducers are shrunk (default 20; the others are
                      written as generated)
  --timeout D         how long one answer may take (default 20s)
  --syntax-errors R   what a syntax error must match: first-line (default: the first line
                      of the message, as the contract says) or position (the first error's
                      line, column and "Syntax error:"; the rest counts as soft)
  --coverage          list the generator's productions and how many cases used each
  -v                  print every difference and progress
`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cel-difftest", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	celEval := fs.String("cel-eval", "", "")
	seed := fs.Int64("seed", 1, "")
	n := fs.Int("n", 20000, "")
	only := fs.Int("only", -1, "")
	out := fs.String("out", "build/cel-diff", "")
	perClass := fs.Int("per-class", 3, "")
	trials := fs.Int("shrink-trials", 400, "")
	coverage := fs.Bool("coverage", false, "")
	timeout := fs.Duration("timeout", 20*time.Second, "")
	syntaxRule := fs.String("syntax-errors", "first-line", "")
	shrinkTime := fs.Duration("shrink-time", 60*time.Second, "")
	maxClasses := fs.Int("max-classes", 20, "")
	conformance := fs.String("conformance", "", "")
	verbose := fs.Bool("v", false, "")
	help := fs.Bool("help", false, "")
	fs.BoolVar(help, "h", false, "")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "cel-difftest: %v (cel-difftest --help)\n", err)
		return 2
	}
	if *help {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "cel-difftest: unexpected argument %q (cel-difftest --help)\n", fs.Arg(0))
		return 2
	}
	if *celEval == "" {
		fmt.Fprintln(stderr, "cel-difftest: --cel-eval PATH is required (cel-difftest --help)")
		return 2
	}
	if !celoracle.Exists(*celEval) {
		fmt.Fprintf(stderr, "cel-difftest: --cel-eval %q: not an executable file\n", *celEval)
		return 2
	}
	if *n < 1 || *perClass < 1 || *trials < 0 || *maxClasses < 0 || *timeout <= 0 || *shrinkTime <= 0 {
		fmt.Fprintln(stderr, "cel-difftest: --n, --per-class must be at least 1, --shrink-trials, --max-classes at least 0, --timeout, --shrink-time positive")
		return 2
	}
	switch *syntaxRule {
	case "first-line":
	case "position":
		celoracle.SyntaxPositionOnly = true
	default:
		fmt.Fprintf(stderr, "cel-difftest: --syntax-errors %q: first-line or position\n", *syntaxRule)
		return 2
	}
	if *conformance != "" {
		return runConformance(*celEval, *conformance, *verbose, stdout, stderr)
	}
	opts := celoracle.Options{CelEval: *celEval, Seed: *seed, N: *n, Only: *only, Out: *out,
		PerClass: *perClass, ShrinkTrials: *trials, Log: stderr, Verbose: *verbose, Timeout: *timeout,
		ShrinkTime: *shrinkTime, MaxClasses: *maxClasses}
	if *only >= 0 {
		opts.N = *only + 1
	}
	s, err := celoracle.Run(opts)
	if err != nil {
		fmt.Fprintf(stderr, "cel-difftest: %v\n", err)
		return 1
	}
	fmt.Fprint(stdout, s.Report(opts))
	if *coverage {
		var names []string
		for u := range s.Used {
			names = append(names, u)
		}
		sort.Strings(names)
		for _, u := range names {
			fmt.Fprintf(stdout, "  %-20s %d\n", u, s.Used[u])
		}
	}
	if s.Differ > 0 {
		fmt.Fprintf(stdout, "reproducers in %s (summary.txt)\n", *out)
		return 1
	}
	return 0
}

func runConformance(tool, file string, verbose bool, stdout, stderr io.Writer) int {
	s, err := celoracle.RunConformance(tool, []string{"--conformance"}, file)
	if err != nil {
		fmt.Fprintf(stderr, "cel-difftest: %v\n", err)
		return 1
	}
	passed, failed := 0, 0
	for _, f := range s.Files {
		fmt.Fprintf(stdout, "  %-16s %4d passed, %4d failed\n", f.Name, f.Passed, f.Failed)
		passed += f.Passed
		failed += f.Failed
	}
	limit := 20
	if verbose {
		limit = len(s.Failures)
	}
	for i, f := range s.Failures {
		if i == limit {
			fmt.Fprintf(stdout, "... %d more failures (-v lists all)\n", len(s.Failures)-limit)
			break
		}
		fmt.Fprintln(stdout, f)
	}
	fmt.Fprintf(stdout, "conformance (%s): %d passed, %d failed\n", file, passed, failed)
	if failed > 0 {
		return 1
	}
	return 0
}
