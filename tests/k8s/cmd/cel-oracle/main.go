// cel-oracle answers build/cel-eval's JSON-lines protocol with the real CEL of kube-scheduler
// v1.37.2 (k8s.io/dynamic-resource-allocation/cel), so the C implementation can be judged line
// by line; it also prints the generator's requests (--gen), converts cel-spec's conformance
// files (--conformance) and times cel-go on the benchmark's selectors (--bench).
// docs/cel-testing.md describes each mode. Test tooling only, never shipped.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"gpulabel.test/k8s/internal/celoracle"
)

const usage = `cel-oracle: the real CEL (k8s.io/dynamic-resource-allocation/cel v0.37.2) behind
build/cel-eval's JSON-lines protocol (docs/cel-testing.md).

Usage:
  cel-oracle                       read requests on stdin, one answer line per request line
  cel-oracle --gen N [--seed S]    print N generated requests (the differential test's)
  cel-oracle --conformance-gen [--testdata DIR]
                                   print cel-spec's tests/simple/testdata/*.textproto (DIR;
                                   default cel.dev/expr's copy in the module cache) as
                                   conformance JSON lines, judged by cel-go in the Kubernetes
                                   environment
  cel-oracle --conformance         answer conformance lines (bindings, typed values) on stdin
  cel-oracle --bench-gen DIR       write the benchmark's selectors.jsonl and devices.json
  cel-oracle --bench --selectors FILE --devices FILE [--runs N]
                                   time compile and DeviceMatches per selector (JSON lines)
`

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cel-oracle", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	genN := fs.Int("gen", 0, "")
	seed := fs.Int64("seed", 1, "")
	confGen := fs.Bool("conformance-gen", false, "")
	testdata := fs.String("testdata", "", "")
	conf := fs.Bool("conformance", false, "")
	benchGen := fs.String("bench-gen", "", "")
	bench := fs.Bool("bench", false, "")
	selectors := fs.String("selectors", "", "")
	devices := fs.String("devices", "", "")
	runs := fs.Int("runs", 1, "")
	benchN := fs.Int("bench-devices", 100000, "")
	help := fs.Bool("help", false, "")
	fs.BoolVar(help, "h", false, "")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "cel-oracle: %v (cel-oracle --help)\n", err)
		return 2
	}
	if *help {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "cel-oracle: unexpected argument %q (cel-oracle --help)\n", fs.Arg(0))
		return 2
	}
	switch {
	case *genN > 0:
		return genMode(*genN, *seed, stdout, stderr)
	case *confGen:
		return conformanceGen(*testdata, stdout, stderr)
	case *conf:
		return serve(stdin, stdout, celoracle.AnswerConformanceLine)
	case *benchGen != "":
		return benchGenMode(*benchGen, *benchN, stderr)
	case *bench:
		if *selectors == "" || *devices == "" {
			fmt.Fprintln(stderr, "cel-oracle: --bench needs --selectors FILE and --devices FILE")
			return 2
		}
		return benchMode(*selectors, *devices, *runs, stdout, stderr)
	}
	o := celoracle.Oracle{}
	return serve(stdin, stdout, func(line []byte) []byte { return celoracle.Marshal(o.AnswerLine(line)) })
}

// serve answers stdin line by line, flushing after each answer (a driver streams through a
// pipe). Lines may be long (a device list): up to 64 MiB.
func serve(stdin io.Reader, stdout io.Writer, answer func([]byte) []byte) int {
	in := bufio.NewScanner(stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(stdout)
	for in.Scan() {
		line := in.Bytes()
		if len(line) == 0 {
			continue
		}
		if _, err := out.Write(answer(line)); err != nil {
			return 1
		}
		if err := out.Flush(); err != nil {
			return 1
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "cel-oracle: reading stdin: %v\n", err)
		return 1
	}
	return 0
}
