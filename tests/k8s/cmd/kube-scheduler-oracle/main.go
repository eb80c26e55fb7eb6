// kube-scheduler-oracle runs the real kube-scheduler v1.37.2 (default profile, in-process,
// over a fake clientset) on manifest files and prints what `gpusched simulate` prints: the
// test oracle of gpusched. Test tooling only; see docs/testing.md.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"gpulabel.test/k8s/internal/objects"
	"gpulabel.test/k8s/internal/oracle"
	"gpulabel.test/k8s/internal/report"
)

const usage = `Run the real kube-scheduler v1.37.2 (its default profile, in-process over a fake API)
on manifest files and print where each pending pod lands, or its FailedScheduling message,
exactly as ` + "`gpusched simulate`" + ` prints it.

The manifests are already expanded (` + "`gpusched render -o json`" + `, or plain Nodes, Pods,
PriorityClasses and the other kinds kube-scheduler reads). Pods with spec.nodeName are bound
at start; pending pods are created one at a time by priority, then input order, and each
one's outcome is awaited (after a preemption: the victims' deletion and one retry).

Usage:
  kube-scheduler-oracle -f FILE... [flags]

Flags:
  -f, --filename FILE        manifest file, directory or - (stdin); repeatable, or a,b
  -o, --output FORMAT        table (default) or json
      --explain NS/POD       print that pod's per-node filters and scores at its turn
                             (the shape of ` + "`gpusched explain -o json`" + `) instead
      --trace FILE           write one JSON line per scheduling attempt (docs/testing.md)
      --percentage-of-nodes-to-score N
                             kube-scheduler's percentageOfNodesToScore (default 100;
                             0: its adaptive default)
      --scheduler-name NAME  only schedule pods whose spec.schedulerName is NAME
      --config FILE          a KubeSchedulerConfiguration (kube-scheduler's --config): its profiles
                             replace the default one; a pod whose schedulerName names no
                             profile gets the first
      --kube-version V       the semantics to run: only 1.37 (kube-scheduler v1.37.2)
      --all-at-once          benchmark mode: create every pending pod before the scheduler
                             starts and let it schedule them freely (as scheduler_perf,
                             on kube-scheduler's real clock: backoffs take their time);
                             the time from start to the last outcome goes to stderr; no pod
                             bound for 5 minutes ends the run with an error naming the
                             pods left
      --parallelism N        the scheduler's parallelism (default 16)
  -v N                       kube-scheduler's log verbosity on stderr (default: no logs)
  -h, --help                 this help
`

type multi []string

func (m *multi) String() string { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s != "" {
			*m = append(*m, s)
		}
	}
	return nil
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func usageError(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "kube-scheduler-oracle: "+format+"\nSee 'kube-scheduler-oracle --help' for usage.\n", a...)
	return 2
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kube-scheduler-oracle", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var files multi
	var out, explain, trace, schedName, kubeVersion, config string
	var pct, parallelism int
	var allAtOnce, help bool
	var verbosity int
	fs.Var(&files, "f", "")
	fs.Var(&files, "filename", "")
	fs.StringVar(&out, "o", "table", "")
	fs.StringVar(&out, "output", "table", "")
	fs.StringVar(&explain, "explain", "", "")
	fs.StringVar(&trace, "trace", "", "")
	fs.IntVar(&pct, "percentage-of-nodes-to-score", 100, "")
	fs.StringVar(&schedName, "scheduler-name", "", "")
	fs.StringVar(&config, "config", "", "")
	fs.StringVar(&kubeVersion, "kube-version", "1.37", "")
	fs.BoolVar(&allAtOnce, "all-at-once", false, "")
	fs.IntVar(&parallelism, "parallelism", 16, "")
	fs.IntVar(&verbosity, "v", -1, "")
	fs.BoolVar(&help, "h", false, "")
	fs.BoolVar(&help, "help", false, "")
	if err := fs.Parse(args); err != nil {
		return usageError(stderr, "%v", err)
	}
	if help {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "unexpected argument %q", fs.Arg(0))
	}
	if len(files) == 0 {
		return usageError(stderr, "must specify one of -f and --filename")
	}
	if out != "table" && out != "json" {
		return usageError(stderr, "--output %q: want table or json", out)
	}
	if pct < 0 || pct > 100 {
		return usageError(stderr, "--percentage-of-nodes-to-score %d: want 0 to 100", pct)
	}
	if strings.TrimPrefix(kubeVersion, "v") != "1.37" {
		return usageError(stderr, "--kube-version %s: this oracle is kube-scheduler v1.37.2; only 1.37 is available", kubeVersion)
	}
	if explain != "" && !strings.Contains(explain, "/") {
		explain = "default/" + explain
	}
	if allAtOnce && (explain != "" || trace != "") {
		return usageError(stderr, "--all-at-once does not go with --explain or --trace")
	}
	if parallelism < 1 {
		return usageError(stderr, "--parallelism %d: want at least 1", parallelism)
	}
	if verbosity < 0 {
		klog.SetLogger(logr.Discard())
	} else {
		fl := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fl)
		_ = fl.Set("v", fmt.Sprint(verbosity))
	}

	if prof := os.Getenv("ORACLE_CPUPROFILE"); prof != "" {
		// for the benchmark's own investigation: where the process spends its time
		if f, err := os.Create(prof); err == nil {
			_ = pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	c, err := objects.Load(files)
	if err != nil {
		fmt.Fprintf(stderr, "kube-scheduler-oracle: %v\n", err)
		return 1
	}
	for _, w := range c.Warnings {
		fmt.Fprintf(stderr, "kube-scheduler-oracle: warning: %s\n", w)
	}
	if explain != "" && !hasPending(c, explain, schedName) {
		fmt.Fprintf(stderr, "kube-scheduler-oracle: pod %s is not a pending pod of the input\n", explain)
		return 1
	}
	opts := oracle.Options{PercentageOfNodesToScore: int32(pct), Trace: trace != "", Explain: explain,
		SchedulerName: schedName, AllAtOnce: allAtOnce, Parallelism: int32(parallelism), Config: config}
	res, err := oracle.Run(context.Background(), c, opts)
	if err != nil {
		fmt.Fprintf(stderr, "kube-scheduler-oracle: %v\n", err)
		return 1
	}
	if allAtOnce {
		fmt.Fprintf(stderr, "kube-scheduler-oracle: %d pods in %.3fs: %.0f pods/s\n", len(res.Outcomes),
			res.Elapsed.Seconds(), float64(len(res.Outcomes))/max(res.Elapsed.Seconds(), 1e-9))
		if res.Errors > 0 {
			fmt.Fprintf(stderr, "kube-scheduler-oracle: %d attempts ended in an error, not unschedulable (such as a PreBind that lost the race for a shared claim); kube-scheduler retried them after their backoff, which counts in the time above\n", res.Errors)
		}
	}
	if trace != "" {
		if err := writeTrace(trace, res.Attempts); err != nil {
			fmt.Fprintf(stderr, "kube-scheduler-oracle: cannot write %s: %v\n", trace, err)
			return 1
		}
	}
	switch {
	case explain != "":
		b, _ := json.MarshalIndent(res.Explain, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	case out == "json":
		if err := report.WriteJSON(stdout, res.Simulate()); err != nil {
			fmt.Fprintf(stderr, "kube-scheduler-oracle: cannot write the output: %v\n", err)
			return 1
		}
	default:
		table(stdout, res)
	}
	return 0
}

func hasPending(c *objects.Cluster, key, schedName string) bool {
	for _, p := range oracle.QueueOrder(c, schedName) {
		if oracle.Key(p) == key {
			return true
		}
	}
	return false
}

func writeTrace(path string, attempts []*report.Attempt) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	for _, a := range attempts {
		if err := report.WriteJSON(f, a); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

func table(w io.Writer, res *oracle.Result) {
	if len(res.Outcomes) == 0 {
		fmt.Fprintln(w, "No pending pods.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tSTATUS\tNODE")
	for _, o := range res.Outcomes {
		status := "Pending"
		switch {
		case o.PreemptedBy != nil:
			status = "Preempted"
		case o.Scheduled:
			status = "Scheduled"
		case o.Gated:
			status = "SchedulingGated"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", o.Pod.Namespace, o.Pod.Name, status, o.Node)
	}
	tw.Flush()
	for _, o := range res.Outcomes {
		if o.Message != "" {
			fmt.Fprintf(w, "\nEvents for %s:\n  Warning  FailedScheduling  %s\n", oracle.Key(o.Pod), o.Message)
		}
	}
	_ = time.Second
}
