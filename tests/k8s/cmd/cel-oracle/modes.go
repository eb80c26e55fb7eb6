package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	dracel "k8s.io/dynamic-resource-allocation/cel"

	"gpulabel.test/k8s/internal/celoracle"
)

// genMode prints the differential test's requests, one per line (id "SEED-I").
func genMode(n int, seed int64, stdout, stderr io.Writer) int {
	for i := 0; i < n; i++ {
		c := celoracle.NewCase(seed, i)
		c.Req.ID = []byte(fmt.Sprintf(`"%d-%d"`, seed, i))
		if _, err := stdout.Write(celoracle.Marshal(&c.Req)); err != nil {
			fmt.Fprintf(stderr, "cel-oracle: %v\n", err)
			return 1
		}
	}
	return 0
}

// conformanceGen prints cel-spec's tests as conformance lines (stdout) and a per-file table of
// what was included (stderr).
func conformanceGen(dir string, stdout, stderr io.Writer) int {
	if dir == "" {
		fmt.Fprintln(stderr, "cel-oracle: --conformance-gen needs --testdata DIR (cel.dev/expr's tests/simple/testdata: make cel-conformance finds it)")
		return 2
	}
	lines, stats, err := celoracle.ConformanceLines(dir)
	if err != nil {
		fmt.Fprintf(stderr, "cel-oracle: %v\n", err)
		return 1
	}
	for i := range lines {
		if _, err := stdout.Write(celoracle.Marshal(&lines[i])); err != nil {
			fmt.Fprintf(stderr, "cel-oracle: %v\n", err)
			return 1
		}
	}
	for _, st := range stats {
		fmt.Fprintf(stderr, "%-24s %4d tests, %4d included (cel-spec agrees with cel-go on %d)", st.File, st.Tests, st.Included, st.SpecAgrees)
		var why []string
		for k, n := range st.Skipped {
			why = append(why, fmt.Sprintf("%s %d", k, n))
		}
		sort.Strings(why)
		if len(why) > 0 {
			fmt.Fprintf(stderr, "; skipped: %s", strings.Join(why, ", "))
		}
		fmt.Fprintln(stderr)
	}
	return 0
}

// benchGenMode writes the benchmark's input files.
func benchGenMode(dir string, n int, stderr io.Writer) int {
	if n < 1 {
		fmt.Fprintln(stderr, "cel-oracle: --bench-devices must be at least 1")
		return 2
	}
	if err := celoracle.WriteBenchFiles(dir, n); err != nil {
		fmt.Fprintf(stderr, "cel-oracle: %v\n", err)
		return 1
	}
	return 0
}

// benchMode times each selector over the devices, one JSON line per selector.
func benchMode(selPath, devPath string, runs int, stdout, stderr io.Writer) int {
	if runs < 1 {
		fmt.Fprintln(stderr, "cel-oracle: --runs must be at least 1")
		return 2
	}
	sels, devs, err := celoracle.ReadBenchFiles(selPath, devPath)
	if err != nil {
		fmt.Fprintf(stderr, "cel-oracle: %v\n", err)
		return 1
	}
	views := make([]dracel.Device, len(devs))
	for i := range devs {
		views[i] = devs[i].CEL()
	}
	for _, s := range sels {
		r, err := celoracle.Bench(s, views, runs, 200)
		if err != nil {
			fmt.Fprintf(stderr, "cel-oracle: %v\n", err)
			return 1
		}
		stdout.Write(celoracle.Marshal(r))
	}
	return 0
}
