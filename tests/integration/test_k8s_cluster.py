"""The local control plane itself (build/k8s/k8s-cluster): up and down, and that nothing is
left running when it is stopped, when its own process is killed, or when the test process
that started it dies. What it does as a kubelet (Nodes Ready, graceful deletions finished) is
used by every other test_k8s_* module."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import k8s_util
import util

BIN = os.path.join(k8s_util.K8S, "k8s-cluster")


def processes_in(d):
    """pids of the processes whose command line names directory d."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                argv = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        if d in argv:
            out.append(int(p))
    return out


def wait_gone(d, what):
    k8s_util.wait_for(what, lambda: not processes_in(d), timeout=30)


def test_up_serves_and_down_leaves_nothing():
    d = tempfile.mkdtemp(prefix="k8s-cluster-up-")
    p = util.run([BIN, "up", "--dir", d, "--controller-manager=false"], timeout=180)
    try:
        util.check_eq(p.returncode, 0, "up (stderr: %s)" % p.stderr)
        kc = os.path.join(d, "admin.kubeconfig")
        util.check_eq(p.stdout, "export KUBECONFIG=%s\n" % kc, "up's output")
        out = util.run([k8s_util.KUBECTL, "--kubeconfig", kc, "get", "--raw", "/readyz"])
        util.check_eq(out.stdout, "ok", "kubectl get --raw /readyz")
        again = util.run([BIN, "up", "--dir", d])
        util.check_eq(again.returncode, 1, "a second up on the same directory")
        if "already runs" not in again.stderr:
            raise AssertionError("second up said %r" % again.stderr)
    finally:
        down = util.run([BIN, "down", "--dir", d], timeout=60)
    util.check_eq(down.returncode, 0, "down (stderr: %s)" % down.stderr)
    util.check_eq(processes_in(d), [], "processes left after down")
    util.check_eq(os.path.exists(os.path.join(d, "ready")), False, "ready file after down")
    shutil.rmtree(d, ignore_errors=True)


def test_killed_harness_takes_its_children_along():
    d = tempfile.mkdtemp(prefix="k8s-cluster-kill-")
    p = util.run([BIN, "up", "--dir", d], timeout=180)
    util.check_eq(p.returncode, 0, "up (stderr: %s)" % p.stderr)
    with open(os.path.join(d, "k8s-cluster.pid")) as f:
        pid = int(f.read())
    children = [q for q in processes_in(d) if q != pid]
    if len(children) < 2:
        raise AssertionError("kube-apiserver and kube-controller-manager not found: %s" % children)
    os.kill(pid, signal.SIGKILL)
    wait_gone(d, "kube-apiserver and kube-controller-manager to die with the harness")
    shutil.rmtree(d, ignore_errors=True)


def test_dead_test_process_takes_the_cluster_along():
    d = tempfile.mkdtemp(prefix="k8s-cluster-orphan-")
    # a test process that starts a cluster and dies without cleaning up
    script = ("import os, sys; sys.path.insert(0, %r); import k8s_util, tempfile; "
              "tempfile.tempdir = %r; c = k8s_util.Cluster('orphan'); print(c.dir, flush=True); "
              "os.kill(os.getpid(), 9)" % (os.path.dirname(os.path.abspath(__file__)), d))
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180)
    util.check_eq(p.returncode, -9, "the test process (stderr: %s)" % p.stderr[-500:])
    cdir = p.stdout.strip()
    if not cdir.startswith(d):
        raise AssertionError("no cluster directory printed: %r" % p.stdout)
    wait_gone(cdir, "the orphaned cluster to stop")
    shutil.rmtree(d, ignore_errors=True)


def test_usage_errors():
    for argv, want in (([], "usage: k8s-cluster"), (["run"], "--dir is required"),
                       (["frob"], 'unknown command "frob"'), (["up", "--dir", "/tmp/x", "extra"], "unexpected argument")):
        p = util.run([BIN] + argv)
        util.check_eq(p.returncode, 2, "exit status of %s" % argv)
        if want not in p.stderr:
            raise AssertionError("%s: stderr %r lacks %r" % (argv, p.stderr, want))
