// Command k8s-cluster runs a local Kubernetes control plane for the tests and benchmarks:
// embedded etcd, the real kube-apiserver and kube-controller-manager from build/k8s/, no
// kubelet (the harness marks Nodes Ready and finishes graceful pod deletions).
//
//	k8s-cluster run  --dir D [flags]   in the foreground until SIGTERM/SIGINT (or stdin EOF)
//	k8s-cluster up   --dir D [flags]   the same in the background; returns once it serves
//	k8s-cluster down --dir D           stops what `up` started
//
// D/ready (JSON: server, kubeconfig, ca, admin certificate, audit log, pid) appears once the
// cluster serves; D/admin.kubeconfig is cluster-admin. Test tooling only, never shipped.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gpulabel.test/k8s/internal/cluster"
)

const usage = `usage: k8s-cluster run|up --dir DIR [--bin DIR] [--controller-manager=BOOL] [--audit=BOOL]
                       [--run-pods=BOOL] [--exit-on-stdin-eof] [-v N]
       k8s-cluster down --dir DIR

run   starts embedded etcd, kube-apiserver (TLS, RBAC, ServiceAccount tokens) and
      kube-controller-manager on 127.0.0.1 with free ports, writes DIR/admin.kubeconfig and
      DIR/ready, and runs until SIGTERM or SIGINT (or EOF on stdin with --exit-on-stdin-eof)
up    the same in the background (log: DIR/k8s-cluster.log); returns once it serves
down  stops the cluster that up started in DIR
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "run", "up":
		os.Exit(runOrUp(os.Args[1], os.Args[2:]))
	case "down":
		os.Exit(down(os.Args[2:]))
	case "-h", "--help", "help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "k8s-cluster: unknown command %q\n%s", os.Args[1], usage)
		os.Exit(2)
	}
}

func exeDir() string {
	exe, err := os.Executable()
	if err != nil {
		return "."
	}
	return filepath.Dir(exe)
}

func runOrUp(cmd string, args []string) int {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o cluster.Options
	var stdinEOF bool
	fs.StringVar(&o.Dir, "dir", "", "")
	fs.StringVar(&o.Bin, "bin", exeDir(), "")
	fs.BoolVar(&o.ControllerManager, "controller-manager", true, "")
	fs.BoolVar(&o.Audit, "audit", true, "")
	fs.BoolVar(&o.RunPods, "run-pods", true, "")
	fs.IntVar(&o.Verbosity, "v", 0, "")
	fs.BoolVar(&stdinEOF, "exit-on-stdin-eof", false, "")
	if err := fs.Parse(args); err != nil || o.Dir == "" || fs.NArg() > 0 {
		msg := "--dir is required"
		if err != nil {
			msg = err.Error()
		} else if fs.NArg() > 0 {
			msg = "unexpected argument " + strconv.Quote(fs.Arg(0))
		}
		fmt.Fprintf(os.Stderr, "k8s-cluster %s: %s\n%s", cmd, msg, usage)
		return 2
	}
	if cmd == "up" {
		return up(o.Dir, args)
	}
	o.Log = os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	c, err := cluster.Start(ctx, o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "k8s-cluster: %v\n", err)
		return 1
	}
	eof := make(chan struct{})
	if stdinEOF {
		// the test process holds the other end: when it dies, the cluster goes with it
		go func() {
			io.Copy(io.Discard, bufio.NewReader(os.Stdin))
			close(eof)
		}()
	}
	rc := 0
	select {
	case <-ctx.Done():
	case <-eof:
	case err := <-c.Died():
		fmt.Fprintf(os.Stderr, "k8s-cluster: %v\n", err)
		rc = 1
	}
	c.Stop()
	fmt.Fprintln(os.Stderr, "k8s-cluster: stopped")
	return rc
}

func up(dir string, args []string) int {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		fmt.Fprintf(os.Stderr, "k8s-cluster up: %v\n", err)
		return 1
	}
	if pid := runningPID(dir); pid > 0 {
		fmt.Fprintf(os.Stderr, "k8s-cluster up: a cluster already runs in %s (pid %d); k8s-cluster down --dir %s\n", dir, pid, dir)
		return 1
	}
	logPath := filepath.Join(dir, "k8s-cluster.log")
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		fmt.Fprintf(os.Stderr, "k8s-cluster up: %v\n", err)
		return 1
	}
	exe, _ := os.Executable()
	cmd := exec.Command(exe, append([]string{"run"}, args...)...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "k8s-cluster up: %v\n", err)
		return 1
	}
	lf.Close()
	os.WriteFile(filepath.Join(dir, "k8s-cluster.pid"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600)
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	deadline := time.After(3 * time.Minute)
	for {
		if info, err := readInfo(dir); err == nil && info.PID == cmd.Process.Pid {
			fmt.Printf("export KUBECONFIG=%s\n", info.Kubeconfig)
			return 0
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(logPath)
			fmt.Fprintf(os.Stderr, "k8s-cluster up: the cluster did not start:\n%s", b)
			return 1
		case <-deadline:
			syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
			fmt.Fprintf(os.Stderr, "k8s-cluster up: not ready after 3 minutes; log: %s\n", logPath)
			return 1
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func readInfo(dir string) (*cluster.Info, error) {
	b, err := os.ReadFile(filepath.Join(dir, "ready"))
	if err != nil {
		return nil, err
	}
	var info cluster.Info
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, err
	}
	return &info, nil
}

// runningPID is the pid of the k8s-cluster started by up in dir, if it still runs.
func runningPID(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "k8s-cluster.pid"))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	// the pid may have been reused since: it must still be a k8s-cluster run of this dir
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), "k8s-cluster") {
		return 0
	}
	return pid
}

func down(args []string) int {
	fs := flag.NewFlagSet("down", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", "", "")
	if err := fs.Parse(args); err != nil || *dir == "" {
		fmt.Fprintf(os.Stderr, "k8s-cluster down: --dir is required\n%s", usage)
		return 2
	}
	pid := runningPID(*dir)
	if pid == 0 {
		fmt.Fprintf(os.Stderr, "k8s-cluster down: no cluster runs in %s\n", *dir)
		return 0
	}
	syscall.Kill(pid, syscall.SIGTERM)
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.Remove(filepath.Join(*dir, "k8s-cluster.pid"))
			return 0
		}
	}
	// its children die with it (parent-death signal)
	syscall.Kill(pid, syscall.SIGKILL)
	os.Remove(filepath.Join(*dir, "k8s-cluster.pid"))
	fmt.Fprintf(os.Stderr, "k8s-cluster down: pid %d did not stop in 30s; killed\n", pid)
	return 1
}
