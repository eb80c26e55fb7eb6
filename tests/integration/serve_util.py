"""Helpers for the gpusched serve integration suites: objects for the API server double and a
handle on a running `gpusched serve` process (its log lines, its metrics port)."""
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
import urllib.request

import util

WAIT = 60  # upper bound for any wait; tests never assert on how long something took


def node(name, cpu="32", memory="64Gi", pods="110", gpus=0, labels=None, taints=None,
         unschedulable=False):
    alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    if gpus:
        alloc["nvidia.com/gpu"] = str(gpus)
    n = {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": name, "labels": dict({"kubernetes.io/hostname": name,
                                                     "kubernetes.io/os": "linux"}, **(labels or {}))},
         "spec": {}, "status": {"capacity": dict(alloc), "allocatable": dict(alloc)}}
    if taints:
        n["spec"]["taints"] = taints
    if unschedulable:
        n["spec"]["unschedulable"] = True
    return n


def pod(name, ns="default", scheduler="gpusched", cpu="100m", memory=None, gpus=0, node_name=None,
        priority=None, node_selector=None, host_port=None, affinity=None, labels=None):
    res = {"requests": {"cpu": cpu}}
    if memory:
        res["requests"]["memory"] = memory
    if gpus:
        res["limits"] = {"nvidia.com/gpu": str(gpus)}
    c = {"name": "main", "image": "busybox", "resources": res}
    if host_port:
        c["ports"] = [{"containerPort": host_port, "hostPort": host_port, "protocol": "TCP"}]
    spec = {"schedulerName": scheduler, "containers": [c]}
    if node_name:
        spec["nodeName"] = node_name
    if priority is not None:
        spec["priority"] = priority
    if node_selector:
        spec["nodeSelector"] = node_selector
    if affinity:
        spec["affinity"] = affinity
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels or {"app": name}},
            "spec": spec, "status": {"phase": "Pending"}}


wait_for = util.wait_for  # (what, fn, timeout=WAIT): polls fn until it returns something true


def bound(api, ns="default"):
    """{pod name: node name} of the bound pods in ns."""
    return {p["metadata"]["name"]: p["spec"]["nodeName"] for p in api.list("pods", ns)
            if (p.get("spec") or {}).get("nodeName")}


def binding_posts(api):
    """{pod name: number of POST .../binding requests}."""
    out = {}
    for r in list(api.requests):
        m = re.match(r"^/api/v1/namespaces/[^/]+/pods/([^/]+)/binding$", r["path"])
        if r["method"] == "POST" and m:
            out[m.group(1)] = out.get(m.group(1), 0) + 1
    return out


def events(api, reason=None):
    evs = api.list("events.events.k8s.io")
    return [e for e in evs if reason is None or e.get("reason") == reason]


class Serve:
    """A running `gpusched serve` against the double. Log lines are collected from stderr."""

    def __init__(self, api, args=(), tmpdir=None, name="serve", kubeconfig=None, wrap=()):
        """api: the double (it writes the kubeconfig), or None with kubeconfig= a file for
        another server; wrap: a command prefix (e.g. setpriv --pdeathsig KILL)."""
        self.tmp = tmpdir or tempfile.mkdtemp(prefix="gpusched-serve-")
        self.kubeconfig = kubeconfig or api.write_kubeconfig(os.path.join(self.tmp, "kubeconfig-" + name))
        self.lines = []
        self._lock = threading.Lock()
        # the plain port for the tests' probes; the secure port (10259 by default) only when asked
        secure = [] if any(a.startswith("--secure-port") for a in args) else ["--secure-port", "0"]
        argv = list(wrap) + [util.binary("gpusched"), "serve", "--kubeconfig", self.kubeconfig,
                             "--metrics-addr", "127.0.0.1:0"] + secure + list(args)
        env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=env)
        self._t = threading.Thread(target=self._read, daemon=True)
        self._t.start()
        self.port = int(wait_for("gpusched serve to start (log: %s)" % self.log_tail,
                                 lambda: self.grep(r'metricsPort"?[=:](\d+)') or self._dead(),
                                 timeout=20)[0])

    def _dead(self):
        if self.p.poll() is not None:
            time.sleep(0.2)
            raise AssertionError("gpusched serve exited with %s: %s" % (self.p.returncode,
                                                                         self.log_tail()))
        return None

    def _read(self):
        for line in self.p.stderr:
            with self._lock:
                self.lines.append(line.rstrip("\n"))

    def log_tail(self, n=30):
        with self._lock:
            return "\n".join(self.lines[-n:])

    def grep(self, pattern):
        """Groups of the first log line matching pattern, or None."""
        rx = re.compile(pattern)
        with self._lock:
            for line in self.lines:
                m = rx.search(line)
                if m:
                    return m.groups() or (line,)
        return None

    def count(self, pattern):
        rx = re.compile(pattern)
        with self._lock:
            return sum(1 for line in self.lines if rx.search(line))

    def get(self, path):
        """(status, body) of GET path on the metrics/probe port."""
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.port, path), timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def metric(self, name, labels=""):
        """Value of one sample on /metrics (name{labels}), or None."""
        _, body = self.get("/metrics")
        key = name + ("{%s}" % labels if labels else "")
        for line in body.splitlines():
            if line.startswith(key + " "):
                return float(line.split()[-1])
        return None

    def ready(self):
        return self.get("/readyz")[0] == 200

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Sends sig and waits; returns the exit status."""
        if self.p.poll() is None:
            self.p.send_signal(sig)
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
            raise AssertionError("gpusched serve did not stop on %s: %s" % (sig, self.log_tail()))
        self._t.join(5)
        return rc

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        self._t.join(5)
