// k8s-difftest is the differential test of gpusched against kube-scheduler v1.37.2 (the
// oracle): seeded random clusters, every scheduling attempt compared, each difference class
// shrunk to a reproducer in the tests/scenarios/ format; then the existing scenarios through
// the oracle. `make check-k8s` and `make diff-k8s` run it; docs/testing.md describes it.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"gpulabel.test/k8s/internal/difftest"
	"gpulabel.test/k8s/internal/gen"
	"gpulabel.test/k8s/internal/oracle"
)

const usage = `Differential test of gpusched against kube-scheduler v1.37.2.

Generates --clusters random clusters from --seed, schedules each with the real kube-scheduler
(in-process, one pod at a time) and with gpusched, and compares every attempt: fits or not,
the node, the FailedScheduling message, each node's filter reason, each plugin's score,
victims and nominated node. Each class of difference is shrunk to a small case written as a
tests/scenarios/ directory under --out. Then every tests/scenarios/ case runs through the
oracle. Ends with "N passed, M failed" (clusters and scenarios); exit 1 if any failed.

Usage:
  k8s-difftest [flags]

Flags:
  --gpusched PATH        the gpusched binary (default build/gpusched)
  --seed S               first seed (default 1); cluster i uses case seed S*100000+i
  --clusters N           how many clusters (default 200)
  --only I               run only cluster I of the seed
  --features LIST        generator features: name, +name, -name, all, none (default: the
                         features gpusched models); --list-features shows them
  --scenarios DIR        the scenarios to run through the oracle ("" skips; default
                         tests/scenarios)
  --out DIR              where reproducers go (default build/k8s-diff)
  --shrink-trials N      runs spent shrinking one difference class (default 300)
  --max-classes N        difference classes to shrink and write (default 20)
  --dump DIR             write the generated clusters to DIR and stop
  --config FILE          run both schedulers with this KubeSchedulerConfiguration (one
                         profile; reproducers do not carry it: add "--config FILE" to their
                         args)
  -v                     print every cluster's line, not only failures
`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

type class struct {
	name     string
	clusters int
	count    int
	first    *gen.Case
	firstIdx int
	diffs    []difftest.Diff
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("k8s-difftest", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	gpusched := fs.String("gpusched", "build/gpusched", "")
	seed := fs.Int64("seed", 1, "")
	clusters := fs.Int("clusters", 200, "")
	only := fs.Int("only", -1, "")
	features := fs.String("features", "", "")
	listFeatures := fs.Bool("list-features", false, "")
	scenarios := fs.String("scenarios", "tests/scenarios", "")
	out := fs.String("out", "build/k8s-diff", "")
	trials := fs.Int("shrink-trials", 300, "")
	maxClasses := fs.Int("max-classes", 20, "")
	dump := fs.String("dump", "", "")
	config := fs.String("config", "", "")
	verbose := fs.Bool("v", false, "")
	help := fs.Bool("help", false, "")
	fs.BoolVar(help, "h", false, "")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "k8s-difftest: %v\nSee 'k8s-difftest --help' for usage.\n", err)
		return 2
	}
	if *help {
		fmt.Fprint(stdout, usage)
		return 0
	}
	cfg := gen.DefaultConfig()
	featuresFlag = *features
	if err := cfg.ParseFeatures(*features); err != nil {
		fmt.Fprintf(stderr, "k8s-difftest: --features: %v\n", err)
		return 2
	}
	if *listFeatures {
		for _, f := range gen.Features() {
			state := "off"
			if f.Default || f.Name == "base" {
				state = "on"
			}
			fmt.Fprintf(stdout, "%-11s %-3s %s\n", f.Name, state, f.Doc)
		}
		return 0
	}
	klog.SetLogger(logr.Discard())
	caseSeed := func(i int) int64 { return *seed*100000 + int64(i) }
	first, last := 0, *clusters
	if *only >= 0 {
		first, last = *only, *only+1
	}
	if *dump != "" {
		for i := first; i < last; i++ {
			c := gen.Generate(caseSeed(i), cfg)
			y, err := c.YAML()
			if err == nil {
				d := filepath.Join(*dump, fmt.Sprintf("cluster-%d", i))
				if err = os.MkdirAll(d, 0o755); err == nil {
					err = os.WriteFile(filepath.Join(d, "cluster.yaml"), y, 0o644)
				}
			}
			if err != nil {
				fmt.Fprintf(stderr, "k8s-difftest: %v\n", err)
				return 1
			}
		}
		fmt.Fprintf(stdout, "wrote %d clusters to %s\n", last-first, *dump)
		return 0
	}

	g, err := difftest.Probe(*gpusched)
	if err != nil {
		fmt.Fprintf(stderr, "k8s-difftest: %v\n", err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "k8s-difftest-")
	if err != nil {
		fmt.Fprintf(stderr, "k8s-difftest: %v\n", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	g.Config = *config
	r := &difftest.Runner{G: g, Tmp: tmp}
	began := time.Now()
	fmt.Fprintf(stdout, "k8s-difftest: gpusched %s against kube-scheduler v1.37.2; seed %d, clusters %d..%d; features %s\n",
		*gpusched, *seed, first, last-1, strings.Join(cfg.On(), ","))
	if !g.Full() {
		fmt.Fprintf(stdout, "skipped: whole-run comparison: gpusched lacks %s; each attempt is compared through `gpusched explain -o json` on the oracle's cluster state instead\n",
			strings.Join(g.Missing(), " and "))
	}
	if !g.Render {
		fmt.Fprintf(stdout, "skipped: gpusched render -o json (absent): the oracle reads the generated manifests directly\n")
	}

	passed, failed := 0, 0
	pending, attempts, ties := 0, 0, 0
	classes := map[string]*class{}
	for i := first; i < last; i++ {
		c := gen.Generate(caseSeed(i), cfg)
		o, err := r.RunCase(c, fmt.Sprintf("c%d", i))
		if err != nil {
			fmt.Fprintf(stderr, "k8s-difftest: cluster %d: %v\n", i, err)
			return 1
		}
		pending += o.Pending
		attempts += o.Attempts
		if o.Ties {
			ties++
		}
		if len(o.Diffs) == 0 {
			passed++
			if *verbose {
				fmt.Fprintf(stdout, "ok   cluster %d (%s; %d attempts)\n", i, difftest.Size(c), o.Attempts)
			}
			continue
		}
		failed++
		fmt.Fprintf(stdout, "FAIL cluster %d (%s): %d differences\n", i, difftest.Size(c), len(o.Diffs))
		seen := map[string]bool{}
		for k, d := range o.Diffs {
			if k < 4 || *verbose {
				fmt.Fprintf(stdout, "     %s\n", d)
			}
			cl := classes[d.Class]
			if cl == nil {
				cl = &class{name: d.Class, first: c, firstIdx: i}
				classes[d.Class] = cl
			}
			cl.count++
			if cl.first == c {
				cl.diffs = append(cl.diffs, d)
			}
			if !seen[d.Class] {
				seen[d.Class] = true
				cl.clusters++
			}
		}
		if len(o.Diffs) > 4 && !*verbose {
			fmt.Fprintf(stdout, "     (%d more)\n", len(o.Diffs)-4)
		}
	}
	fmt.Fprintf(stdout, "clusters: %d passed, %d failed; %d pending pods, %d attempts; kube-scheduler met ties in %d clusters (%.1fs)\n",
		passed, failed, pending, attempts, ties, time.Since(began).Seconds())

	if len(classes) > 0 {
		writeClasses(stdout, r, classes, cfg, *seed, *out, *trials, *maxClasses)
	}

	if *scenarios != "" && *only < 0 {
		// the scenarios carry their own arguments (and --config, if any)
		g.Config = ""
		sp, sf := runScenarios(stdout, r, *scenarios, *verbose)
		passed += sp
		failed += sf
	}
	fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return 1
	}
	return 0
}

func writeClasses(stdout io.Writer, r *difftest.Runner, classes map[string]*class, cfg gen.Config, seed int64, out string, trials, maxClasses int) {
	var list []*class
	for _, c := range classes {
		list = append(list, c)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].clusters != list[j].clusters {
			return list[i].clusters > list[j].clusters
		}
		return list[i].name < list[j].name
	})
	fmt.Fprintf(stdout, "\n%d difference classes (most clusters first):\n", len(list))
	for k, cl := range list {
		fmt.Fprintf(stdout, "\n[%d clusters, %d differences] %s\n", cl.clusters, cl.count, cl.name)
		if k >= maxClasses {
			fmt.Fprintf(stdout, "  first in cluster %d (make diff-k8s SEED=%d N=%d%s); not shrunk (--max-classes %d)\n", cl.firstIdx, seed, cl.firstIdx+1, featuresArg(featuresFlag), maxClasses)
			continue
		}
		name := cl.name
		keeps := func(c *gen.Case) bool {
			o, err := r.RunCase(c, "shrink")
			if err != nil {
				return false
			}
			for _, d := range o.Diffs {
				if d.Class == name {
					return true
				}
			}
			return false
		}
		small, used := difftest.Shrink(cl.first, keeps, trials, time.Now().Add(90*time.Second))
		o, err := r.RunCase(small, "repro")
		if err != nil || o.Oracle == nil {
			fmt.Fprintf(stdout, "  cannot rerun the shrunk case: %v\n", err)
			continue
		}
		var diffs []difftest.Diff
		for _, d := range o.Diffs {
			if d.Class == name {
				diffs = append(diffs, d)
			}
		}
		dir := filepath.Join(out, difftest.Slug(name))
		origin := fmt.Sprintf("k8s-difftest --seed %d --only %d", seed, cl.firstIdx)
		if err := difftest.WriteRepro(dir, small, o.Oracle.Simulate(), name, diffs, origin, o.Ties); err != nil {
			fmt.Fprintf(stdout, "  cannot write the reproducer: %v\n", err)
			continue
		}
		fmt.Fprintf(stdout, "  first in cluster %d; shrunk in %d runs to %s: %s/\n", cl.firstIdx, used, difftest.Size(small), dir)
		for _, d := range diffs {
			fmt.Fprintf(stdout, "     %s\n", d)
		}
		for _, f := range []string{"cluster.yaml", "expected.json", "interchangeable"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				continue
			}
			fmt.Fprintf(stdout, "  --- %s/%s\n", filepath.Base(dir), f)
			for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
				fmt.Fprintf(stdout, "  %s\n", l)
			}
		}
	}
	fmt.Fprintln(stdout)
}

func runScenarios(stdout io.Writer, r *difftest.Runner, dir string, verbose bool) (int, int) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		fmt.Fprintf(stdout, "FAIL scenarios: %v\n", err)
		return 0, 1
	}
	passed, failed, skipped := 0, 0, 0
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		res := r.Scenario(filepath.Join(dir, e.Name()))
		switch {
		case res.Skipped != "":
			skipped++
			fmt.Fprintf(stdout, "skipped: scenario %s: %s\n", res.Name, res.Skipped)
		case res.Failed != "":
			failed++
			fmt.Fprintf(stdout, "FAIL scenario %s: kube-scheduler disagrees\n      %s\n", res.Name, res.Failed)
		default:
			passed++
			if verbose {
				fmt.Fprintf(stdout, "ok   scenario %s\n", res.Name)
			}
		}
	}
	fmt.Fprintf(stdout, "scenarios: %d agree with kube-scheduler, %d disagree, %d skipped\n", passed, failed, skipped)
	return passed, failed
}

var _ = oracle.Key

// featuresFlag is --features as given, for the commands the report suggests.
var featuresFlag string

// featuresArg is the FEATURES= part of a diff-k8s command line ("" for the default features).
func featuresArg(features string) string {
	if features == "" {
		return ""
	}
	return fmt.Sprintf(" FEATURES=%q", features)
}
