#!/usr/bin/env python3
"""Benchmark (not a test): gpusched serve against the real kube-scheduler, both binding
through the same local kube-apiserver (build/k8s/k8s-cluster), on the same nodes and the same
pods, one after the other in one run.

The cluster: N nodes of 4 CPU / 32 Gi / 110 pods (scheduler_perf's SchedulingBasic node),
made Ready by the harness; no controller manager, no audit log, pods not marked Running (the
harness writes nothing while a scheduler runs). kube-scheduler runs as system:kube-scheduler
(its default profile, a KubeSchedulerConfiguration for the client limits), gpusched serve
with the token of its ServiceAccount and deploy/gpusched/rbac.yaml. Pods: 100m / 500 Mi.

For each scheduler in turn, two phases:
- backlog: P pending pods are created, then the scheduler starts; pods/s is (P-1) over its
  first to its last bind (as the watch of the bench sees them), CPU per pod the scheduler's
  utime+stime over the same span (and up to the moment it goes quiet: "all writes", the
  Scheduled events written after the last bind included), and the API server's;
- paced: Q pods created at --rate pods/s while it runs: the latency of each pod, from the
  moment its create was sent to the moment the watch showed it bound (p50, p99, max).
Then its pods are deleted (grace 0) and the next scheduler starts on empty nodes. Both get
the same client limits: --qps/--burst (50/100 is kube-scheduler's default; 0 lifts them:
gpusched --kube-api-qps 0, kube-scheduler clientConnection.qps 100000).

  python3 bench/k8s_serve_bench.py --build build --nodes 1000 --pods 5000 --qps 0
  python3 bench/k8s_serve_bench.py --build build --nodes 1000 --pods 5000 --qps 50 --burst 100

On a shared machine: --cpu-load DUTY puts the same fixed load beside both schedulers (a busy
loop pinned to each CPU, busy DUTY of every 10 ms); --latencies PREFIX writes each paced pod's
create and bind times, so a stall of the scheduler (its pods late, the creates on time) can be
told from the machine's (the creates late too); --keep-logs DIR and --gpusched-arg=-v
--gpusched-arg=4 keep gpusched's log of every watch event.
"""
import argparse
import http.client
import json
import os
import re
import sys
import threading
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "tests", "integration"))
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def thread_cpu(pid):
    """CPU seconds per thread name (gpusched names its threads: binder, inf-pods, ...)."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                name = f.read().strip()
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[name] = out.get(name, 0) + (int(fields[11]) + int(fields[12])) / TICK
    return out


def pid_of(name):
    """The pid of the one process whose command is name (the cluster's kube-apiserver)."""
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open("/proc/%s/cmdline" % p, "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if argv and os.path.basename(argv[0].decode()) == name:
                yield int(p)


BUSY = """
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
duty, period = float(sys.argv[2]), float(sys.argv[3])
t = time.monotonic()
while True:
    while time.monotonic() - t < duty * period:
        pass
    t += period
    d = t - time.monotonic()
    if d > 0:
        time.sleep(d)
    else:
        t = time.monotonic()
"""


def cpu_load(duty, cpus, period=0.01):
    """A fixed synthetic load: on each CPU of cpus a process pinned to it, busy for duty of
    every period and asleep for the rest. Returns the processes (kill them when done)."""
    import subprocess
    return [subprocess.Popen([sys.executable, "-c", BUSY, str(cpu), str(duty), str(period)])
            for cpu in cpus]


def quantile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


class Watch(threading.Thread):
    """Watches the pods of a namespace; records when each was first seen bound. Lines are
    looked at with regular expressions, not decoded: a slow watcher is closed by the API
    server, and then the watch resumes from the last resourceVersion seen."""

    NAME = re.compile(rb'"metadata":\{"name":"([^"]+)"')
    RV = re.compile(rb'"resourceVersion":"(\d+)"')

    def __init__(self, c, ns, rv):
        super().__init__(daemon=True)
        self.c, self.ns, self.rv = c, ns, rv
        self.bound = {}
        self.lock = threading.Lock()
        self.stop = False
        self.error = None
        self.restarts = 0

    def run(self):
        try:
            while not self.stop:
                self.watch()
                self.restarts += 1
        except Exception as e:  # reported by count()
            self.error = e

    def watch(self):
        conn = http.client.HTTPSConnection(self.c._host, self.c._port, context=self.c._ssl, timeout=600)
        conn.request("GET", "/api/v1/namespaces/%s/pods?watch=1&resourceVersion=%s" % (self.ns, self.rv))
        r = conn.getresponse()
        if r.status != 200:
            raise RuntimeError("watch: HTTP %d: %s" % (r.status, r.read()[:300]))
        while not self.stop:
            line = r.readline()
            if not line:
                conn.close()
                return
            t = time.monotonic()
            if b'"type":"ERROR"' in line[:30]:
                raise RuntimeError("watch: %s" % line[:300])
            m = self.RV.search(line)
            if m:
                self.rv = m.group(1).decode()
            if b'"nodeName":"' in line:
                m = self.NAME.search(line)
                with self.lock:
                    self.bound.setdefault(m.group(1).decode(), t)

    def count(self, names):
        if self.error:
            raise self.error
        with self.lock:
            return sum(1 for n in names if n in self.bound)


def pod(name, scheduler):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "bench"}},
            "spec": {"schedulerName": scheduler, "automountServiceAccountToken": False,
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]}}


def create_pods(c, ns, names, scheduler, threads, rate):
    """Creates the pods from `threads` connections, as fast as the API server takes them or
    at `rate` pods/s; returns {name: monotonic time its POST was sent}."""
    sent = {}
    lock = threading.Lock()
    chunks = [list(range(i, len(names), threads)) for i in range(threads)]
    errors = []
    start = time.monotonic()

    def work(chunk):
        conn = http.client.HTTPSConnection(c._host, c._port, context=c._ssl, timeout=60)
        for k in chunk:
            n = names[k]
            body = json.dumps(pod(n, scheduler))
            if rate:
                delay = start + k / rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            t = time.monotonic()
            conn.request("POST", "/api/v1/namespaces/%s/pods" % ns, body=body,
                         headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            r.read()
            if r.status != 201:
                errors.append("%s: %d" % (n, r.status))
            with lock:
                sent[n] = t
        conn.close()
    ts = [threading.Thread(target=work, args=(ch,)) for ch in chunks]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise SystemExit("pod creation failed: %s" % errors[:5])
    return sent


def start_kube_scheduler(c, k8s_util, a, logdir):
    cfg = os.path.join(logdir, "kube-scheduler.yaml")
    qps, burst = (100000, 100000) if a.qps == 0 else (a.qps, a.burst)
    with open(cfg, "w") as f:
        f.write("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                "clientConnection:\n  kubeconfig: %s\n  qps: %s\n  burst: %d\n"
                "leaderElection:\n  leaderElect: false\n" % (c.scheduler_kubeconfig, qps, burst))
        if a.percentage_of_nodes_to_score is not None:
            f.write("percentageOfNodesToScore: %d\n" % a.percentage_of_nodes_to_score)
    return k8s_util.Process([os.path.join(k8s_util.K8S, "kube-scheduler"), "--config", cfg,
                             "--authentication-kubeconfig", c.scheduler_kubeconfig,
                             "--authorization-kubeconfig", c.scheduler_kubeconfig, "--secure-port", "0"],
                            os.path.join(logdir, "kube-scheduler.log"))


def start_gpusched(c, k8s_util, a, logdir):
    # as deploy/gpusched/ runs it: its own ServiceAccount, RBAC-checked like kube-scheduler
    c.apply_file("deploy/gpusched/rbac.yaml")
    kc = c.sa_kubeconfig("kube-system", "gpusched")
    args = [os.path.join(a.build, "gpusched"), "serve", "--kubeconfig", kc,
            "--metrics-addr", "127.0.0.1:0", "--secure-port", "0", "--kube-api-qps", str(a.qps),
            "--kube-api-burst", str(a.burst)]
    if a.percentage_of_nodes_to_score is not None:
        args += ["--percentage-of-nodes-to-score", str(a.percentage_of_nodes_to_score)]
    args += a.gpusched_arg
    # Process runs it through setpriv, which execs it: the pid is gpusched's
    return k8s_util.Process(args, os.path.join(logdir, "gpusched.log"))


class Sampler:
    """CPU seconds of the scheduler (per thread too) and of the API server, now."""

    def __init__(self, pid, apiserver_pid):
        self.pid, self.api = pid, apiserver_pid

    def __call__(self):
        return {"t": time.monotonic(), "cpu": cpu_seconds(self.pid), "api": cpu_seconds(self.api),
                "threads": thread_cpu(self.pid)}


def per_pod(a0, a1, n):
    th = {k: round((v - a0["threads"].get(k, 0)) / n * 1e6) for k, v in a1["threads"].items()
          if v - a0["threads"].get(k, 0) > 0}
    return {"cpu_us_per_pod": round((a1["cpu"] - a0["cpu"]) / n * 1e6),
            "apiserver_cpu_us_per_pod": round((a1["api"] - a0["api"]) / n * 1e6),
            "cpu_us_per_pod_by_thread": th if len(th) > 1 else {}}


def quiet(sample, s1):
    """Waits until the scheduler's CPU time stops growing (its last event writes done)."""
    while True:
        time.sleep(0.5)
        s2 = sample()
        if s2["cpu"] - s1["cpu"] < 0.005:
            return s2
        s1 = s2


def delete_pods(c, k8s_util, ns):
    c.request("DELETE", "/api/v1/namespaces/%s/pods?gracePeriodSeconds=0" % ns, ok=(200,))
    k8s_util.wait_for("the pods of %s gone" % ns, lambda: not c.get(
        "/api/v1/namespaces/%s/pods?limit=1" % ns)["items"], timeout=600, interval=0.5)


def run_one(c, k8s_util, a, name, scheduler, start, apiserver_pid):
    """Both phases for one scheduler; returns its row."""
    ns = "bench-" + name
    c.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    c.create("/api/v1/namespaces/%s/serviceaccounts" % ns,
             {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}})
    row = {"scheduler": name, "nodes": a.nodes, "qps": a.qps, "burst": a.burst}
    # backlog: P pending pods exist before the scheduler starts; from its first bind to its
    # last it runs flat out
    rv = c.get("/api/v1/namespaces/%s/pods?limit=1" % ns)["metadata"]["resourceVersion"]
    w = Watch(c, ns, rv)
    w.start()
    names = ["b-%05d" % i for i in range(a.pods)]
    create_pods(c, ns, names, scheduler, a.client_threads, 0)
    proc = start(c, k8s_util, a, c.dir)
    try:
        sample = Sampler(proc.p.pid, apiserver_pid)
        first = k8s_util.wait_for("%s's first bind" % name, lambda: proc.alive() or (
            w.count(names) and sample()), timeout=300, interval=0.01)
        k8s_util.wait_for("%d pods bound by %s" % (a.pods, name),
                          lambda: proc.alive() or w.count(names) == a.pods, timeout=1800, interval=0.02)
        last = sample()
        done = quiet(sample, last)
        with w.lock:
            t_first = min(w.bound[n] for n in names)
            t_last = max(w.bound[n] for n in names)
        w.stop = True
        row.update({"backlog_pods": a.pods, "pods_per_s": round((a.pods - 1) / (t_last - t_first), 1)})
        row.update({"backlog_" + k: v for k, v in per_pod(first, last, a.pods - 1).items()})
        row["backlog_cpu_us_per_pod_all_writes"] = per_pod(first, done, a.pods - 1)["cpu_us_per_pod"]
        delete_pods(c, k8s_util, ns)
        # paced: pods created at --rate while the scheduler runs: the latency of one pod
        rv = c.get("/api/v1/namespaces/%s/pods?limit=1" % ns)["metadata"]["resourceVersion"]
        w = Watch(c, ns, rv)
        w.start()
        names = ["p-%05d" % i for i in range(a.paced_pods)]
        s0 = sample()
        sent = create_pods(c, ns, names, scheduler, a.client_threads, a.rate)
        k8s_util.wait_for("%d paced pods bound by %s" % (a.paced_pods, name),
                          lambda: proc.alive() or w.count(names) == a.paced_pods, timeout=600, interval=0.02)
        s1 = quiet(sample, sample())
        with w.lock:
            lat = [w.bound[n] - sent[n] for n in names]
            if a.latencies:
                t0 = min(sent.values())
                with open("%s.%s" % (a.latencies, name), "w") as f:
                    for n in names:
                        f.write("%s %.4f %.4f\n" % (n, sent[n] - t0, w.bound[n] - t0))
        w.stop = True
        row.update({"paced_pods": a.paced_pods, "rate": a.rate,
                    "p50_ms": round(quantile(lat, 0.50) * 1000, 1), "p99_ms": round(quantile(lat, 0.99) * 1000, 1),
                    "max_ms": round(max(lat) * 1000, 1)})
        row.update({"paced_" + k: v for k, v in per_pod(s0, s1, a.paced_pods).items()})
        return row
    finally:
        w.stop = True
        proc.stop()
        delete_pods(c, k8s_util, ns)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=5000, help="pods of the backlog phase")
    ap.add_argument("--paced-pods", type=int, default=1000, help="pods of the paced phase")
    ap.add_argument("--qps", type=float, default=0)
    ap.add_argument("--burst", type=int, default=100)
    ap.add_argument("--client-threads", type=int, default=4)
    ap.add_argument("--rate", type=float, default=50, help="pods created per second in the paced phase")
    ap.add_argument("--percentage-of-nodes-to-score", type=int, default=None)
    ap.add_argument("--order", default="kube-scheduler,gpusched")
    ap.add_argument("--latencies", metavar="PREFIX",
                    help="write each paced pod's name, create and bind times (s) to PREFIX.SCHEDULER")
    ap.add_argument("--cpu-load", type=float, default=0, metavar="DUTY",
                    help="a fixed synthetic load during both runs: a busy loop pinned to each CPU, busy DUTY (0-1) of every 10 ms")
    ap.add_argument("--cpu-load-cpus", metavar="LIST", help="the CPUs of --cpu-load (default: every CPU), e.g. 0")
    ap.add_argument("--keep-logs", metavar="DIR", help="copy the schedulers' and the cluster's logs to DIR")
    ap.add_argument("--gpusched-arg", action="append", default=[], help="one more argument of gpusched serve")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    if a.qps == int(a.qps):
        a.qps = int(a.qps)
    os.environ["GPULABEL_BUILD"] = a.build
    import k8s_util
    t = time.monotonic()
    load = []
    c = k8s_util.Cluster("bench", audit=False, run_pods=False, controller_manager=False)
    try:
        apiserver = [p for p in pid_of("kube-apiserver")
                     if str(c._port) in open("/proc/%d/cmdline" % p).read()]
        if len(apiserver) != 1:
            raise SystemExit("cannot find this cluster's kube-apiserver")
        print("# cluster up in %.1fs" % (time.monotonic() - t), flush=True)
        t = time.monotonic()
        names = []
        for i in range(a.nodes):
            n = k8s_util.gpu_node("node-%05d" % i, gpus=0, cpu="4", memory="32Gi",
                                  labels={"topology.kubernetes.io/zone": "zone-%d" % (i % 3)})
            c.create("/api/v1/nodes", n)
            names.append(n["metadata"]["name"])
        c.wait_nodes_ready(names)
        print("# %d nodes Ready in %.1fs" % (a.nodes, time.monotonic() - t), flush=True)
        if a.cpu_load:
            cpus = [int(x) for x in a.cpu_load_cpus.split(",")] if a.cpu_load_cpus else sorted(os.sched_getaffinity(0))
            load = cpu_load(a.cpu_load, cpus)
            print("# synthetic load: %d%% of CPU %s" % (a.cpu_load * 100, ",".join(map(str, cpus))), flush=True)
        starts = {"kube-scheduler": (start_kube_scheduler, "default-scheduler"),
                  "gpusched": (start_gpusched, "gpusched")}
        rows = []
        for name in a.order.split(","):
            start, sched = starts[name]
            r = run_one(c, k8s_util, a, name, sched, start, apiserver[0])
            print(json.dumps(r), flush=True)
            rows.append(r)
        print("\n| scheduler | pods/s (backlog) | CPU µs/pod (backlog, all writes) | kube-apiserver CPU µs/pod "
              "(backlog) | p50 ms (paced) | p99 ms (paced) | CPU µs/pod (paced) |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print("| %s | %s | %s (%s) | %s | %s | %s | %s |" % (
                r["scheduler"], r["pods_per_s"], r["backlog_cpu_us_per_pod"], r["backlog_cpu_us_per_pod_all_writes"],
                r["backlog_apiserver_cpu_us_per_pod"], r["p50_ms"], r["p99_ms"], r["paced_cpu_us_per_pod"]))
    finally:
        for p in load:
            p.kill()
            p.wait()
        if a.keep_logs:
            import glob, shutil
            os.makedirs(a.keep_logs, exist_ok=True)
            for f in glob.glob(os.path.join(c.dir, "*.log")):
                shutil.copy(f, a.keep_logs)
        c.close()


if __name__ == "__main__":
    main()
