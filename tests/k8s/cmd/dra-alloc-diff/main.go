// Command dra-alloc-diff is the differential test of gpusched's structured allocator
// (build/dra-alloc, src/sched/dra_alloc.c) against k8s.io/dynamic-resource-allocation v0.37.2's
// (internal/dradiff): allocation problems drawn from the generator's dra feature, each solved
// by both, compared exactly (status, message, devices per request, node selector kind).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"gpulabel.test/k8s/internal/dradiff"
	"gpulabel.test/k8s/internal/gen"
)

const usage = `Differential test of gpusched's structured allocator against the real one.

Generates --cases random clusters from --seed with the dra generator feature; every pending
pod with claims becomes one allocation problem on a random node; the real allocator of
k8s.io/dynamic-resource-allocation v0.37.2 (kube-scheduler v1.37.2's features) and build/dra-alloc
solve it; status, message and devices must be equal. Differences are printed with the
problem written to --out. Ends with "N problems, N differences"; exit 1 if any.

The C side reads the answers of the real CEL for every selector on every device from the
problem; with --cel it compiles and evaluates the selectors with gpusched's CEL library
instead (dra-alloc --cel), judging the two together.

Usage:
  dra-alloc-diff [--dra-alloc PATH] [--cel] [--seed S] [--cases N] [--out DIR] [-v]
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dra-alloc-diff", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	tool := fs.String("dra-alloc", "build/dra-alloc", "")
	seed := fs.Int64("seed", 1, "")
	cases := fs.Int("cases", 200, "")
	out := fs.String("out", "build/dra-alloc-diff", "")
	verbose := fs.Bool("v", false, "")
	withCEL := fs.Bool("cel", false, "")
	help := fs.Bool("help", false, "")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "dra-alloc-diff: %v\n%s", err, usage)
		return 2
	}
	if *help {
		fmt.Fprint(stdout, usage)
		return 0
	}
	klog.SetLogger(logr.Discard())
	var toolArgs []string
	if *withCEL {
		toolArgs = append(toolArgs, "--cel")
	}
	cmd := exec.Command(*tool, toolArgs...)
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintf(stderr, "dra-alloc-diff: %v\n", err)
		return 1
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "dra-alloc-diff: %v\n", err)
		return 1
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "dra-alloc-diff: %s: %v\n", *tool, err)
		return 1
	}
	defer func() {
		in.Close()
		_ = cmd.Wait()
	}()
	rd := bufio.NewReaderSize(outp, 1<<20)
	cfg := gen.DefaultConfig()
	if err := cfg.ParseFeatures("+dra"); err != nil {
		fmt.Fprintf(stderr, "dra-alloc-diff: %v\n", err)
		return 1
	}
	problems, diffs := 0, 0
	statuses := map[string]int{}
	for i := 0; i < *cases; i++ {
		caseSeed := *seed*100000 + int64(i)
		c := gen.Generate(caseSeed, cfg)
		for _, p := range dradiff.FromCase(c, caseSeed) {
			if err := p.Tables(); err != nil {
				fmt.Fprintf(stderr, "dra-alloc-diff: %s: %v\n", p.ID, err)
				return 1
			}
			want := p.RunGo()
			line, err := p.JSON()
			if err != nil {
				fmt.Fprintf(stderr, "dra-alloc-diff: %v\n", err)
				return 1
			}
			if _, err := in.Write(append(line, '\n')); err != nil {
				fmt.Fprintf(stderr, "dra-alloc-diff: writing to %s: %v\n", *tool, err)
				return 1
			}
			ans, err := rd.ReadBytes('\n')
			if err != nil {
				fmt.Fprintf(stderr, "dra-alloc-diff: reading from %s: %v (problem %s)\n", *tool, err, p.ID)
				return 1
			}
			var got dradiff.Answer
			if err := json.Unmarshal(ans, &got); err != nil {
				fmt.Fprintf(stderr, "dra-alloc-diff: %s: %v in %q\n", *tool, err, ans)
				return 1
			}
			problems++
			statuses[want.Status]++
			if !reflect.DeepEqual(&got, want) {
				diffs++
				wj, _ := json.Marshal(want)
				gj, _ := json.Marshal(&got)
				file := ""
				if diffs <= 20 {
					_ = os.MkdirAll(*out, 0o755)
					file = filepath.Join(*out, fmt.Sprintf("problem-%d.json", diffs))
					_ = os.WriteFile(file, line, 0o644)
				}
				fmt.Fprintf(stdout, "DIFF %s (%s)\n  go:       %s\n  gpusched: %s\n", p.ID, file, wj, gj)
			} else if *verbose {
				fmt.Fprintf(stdout, "ok %s %s\n", p.ID, want.Status)
			}
		}
	}
	fmt.Fprintf(stdout, "dra-alloc-diff: seed %d, %d cases: %d problems (allocated %d, unallocated %d, node-failed %d, error %d), %d differences\n",
		*seed, *cases, problems, statuses["allocated"], statuses["unallocated"], statuses["node-failed"], statuses["error"], diffs)
	if diffs > 0 {
		return 1
	}
	return 0
}
