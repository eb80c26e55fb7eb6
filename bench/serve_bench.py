#!/usr/bin/env python3
"""Benchmark of gpusched serve against the API server double (not a test).

Starts tests/apiserver/fake_apiserver.py standalone (plain HTTP, a bearer token) with N nodes and P
pending pods for gpusched, starts `gpusched serve`, and reads its /metrics until every pod is
bound. Reports end-to-end pods bound per second, the scheduling-latency quantiles from the
scheduler's histograms, the scheduler's CPU time per pod (from /proc/PID/stat) and its peak
RSS (VmHWM), and how busy the double was (if it sat at ~100% of one core, it was the
bottleneck, not the scheduler).

Binds go ahead of the other writes, so when the last pod is bound most `Scheduled` events are
still queued. The run goes on until every bound pod's event has been written (or refused), and
the *_all_writes fields count the CPU up to that point: the whole per-pod cost (bind, event,
watch event, scheduling cycle). The fields without that suffix stop at the last bind.

  python3 bench/serve_bench.py --build build --nodes 5000 --pods 10000 --qps 50 --burst 100
  python3 bench/serve_bench.py --build build --nodes 5000 --pods 10000 --qps 0
  python3 bench/serve_bench.py --build build --qps 0 --percentage-of-nodes-to-score 100  # every node
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICK = os.sysconf("SC_CLK_TCK")


def gen_state(path, nnodes, npods):
    items = []
    for i in range(nnodes):
        alloc = {"cpu": "4", "memory": "32Gi", "pods": "110"}
        items.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": "node-%05d" % i,
                                   "labels": {"kubernetes.io/hostname": "node-%05d" % i,
                                              "topology.kubernetes.io/zone": "zone-%d" % (i % 3)}},
                      "spec": {}, "status": {"capacity": alloc, "allocatable": alloc}})
    for i in range(npods):
        items.append({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": "pod-%05d" % i, "namespace": "default",
                                   "labels": {"app": "bench"}},
                      "spec": {"schedulerName": "gpusched", "containers": [
                          {"name": "c", "image": "registry.k8s.io/pause:3.10",
                           "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]},
                      "status": {"phase": "Pending"}})
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def thread_cpu(pid):
    """CPU seconds per thread name (gpusched names its threads: binder, inf-pods, ...; the
    main thread, which runs the scheduling loop, keeps the program's name)."""
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


def vm_hwm_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def scrape(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        return r.read().decode()


SCHEDULED = 'profile="gpusched",result="scheduled"'
SLI = "scheduler_pod_scheduling_sli_duration_seconds"
ATTEMPT = "scheduler_scheduling_attempt_duration_seconds"
EXT = "scheduler_framework_extension_point_duration_seconds"
BIND_OK = 'extension_point="Bind",profile="gpusched",status="Success"'


def sample(text, name, labels=""):
    key = name + ("{%s}" % labels if labels else "")
    for line in text.splitlines():
        if line.startswith(key + " "):
            return float(line.split()[-1])
    return 0.0


def mean_us(text, name):
    """a histogram's exact mean (NAME_sum / NAME_count, any labels) in microseconds"""
    got = {}
    for line in text.splitlines():
        m = re.match(r'^%s_(sum|count)(?:\{[^}]*\})? (\S+)$' % re.escape(name), line)
        if m:
            got[m.group(1)] = float(m.group(2))
    return round(1e6 * got["sum"] / got["count"], 1) if got.get("count") else 0.0


def quantile(text, name, q, labels=""):
    """histogram_quantile over NAME_bucket lines (cumulative), linear inside a bucket."""
    rx = re.compile(r'^%s_bucket\{(.*)\} (\S+)$' % re.escape(name))
    buckets = []
    for line in text.splitlines():
        m = rx.match(line)
        if not m:
            continue
        lab = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        le = lab.pop("le")
        if labels and lab != dict(re.findall(r'(\w+)="([^"]*)"', labels)):
            continue
        buckets.append((float("inf") if le == "+Inf" else float(le), float(m.group(2))))
    if not buckets or buckets[-1][1] == 0:
        return 0.0
    total = buckets[-1][1]
    want = q * total
    lo, prev = 0.0, 0.0
    for le, cum in buckets:
        if cum >= want:
            if le == float("inf"):
                return lo
            return lo + (le - lo) * (want - prev) / max(cum - prev, 1e-12)
        lo, prev = le, cum
    return lo


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--qps", default="50")
    ap.add_argument("--burst", default="100")
    ap.add_argument("--bind-workers", default="16")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--percentage-of-nodes-to-score", default=None,
                    help="passed to gpusched serve (its default: 0, adaptive)")
    ap.add_argument("--timeout", type=float, default=900)
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="serve-bench-")
    state = os.path.join(tmp, "state.json")
    kc = os.path.join(tmp, "kubeconfig")
    gen_state(state, a.nodes, a.pods)
    api = subprocess.Popen([sys.executable, os.path.join(SRC, "tests", "apiserver", "fake_apiserver.py"),
                            "--port", "0", "--plain-http", "--token", "bench-token", "--state", state,
                            "--print-kubeconfig", kc], stdout=subprocess.PIPE, text=True)
    for _ in range(5):
        line = api.stdout.readline()
        if line.startswith("READY") or not line:
            break
    if not line.startswith("READY"):
        sys.exit("fake API server did not start: %r" % line)
    sched = None
    try:
        t0 = time.monotonic()
        api_cpu0 = cpu_seconds(api.pid)
        log = open(os.path.join(tmp, "serve.log"), "w")
        sched = subprocess.Popen([os.path.join(a.build, "gpusched"), "serve", "--kubeconfig", kc,
                                  "--metrics-addr", "127.0.0.1:0", "--secure-port", "0", "--kube-api-qps", a.qps,
                                  "--kube-api-burst", a.burst, "--bind-workers", a.bind_workers,
                                  "--profile", a.profile] +
                                 (["--percentage-of-nodes-to-score", a.percentage_of_nodes_to_score]
                                  if a.percentage_of_nodes_to_score is not None else []),
                                 stderr=subprocess.PIPE, text=True)
        port = None
        for line in sched.stderr:
            log.write(line)
            m = re.search(r"metricsPort=(\d+)", line)
            if m:
                port = int(m.group(1))
                break
        if not port:
            sys.exit("gpusched serve did not start")
        t_ready = cpu_ready = None
        while True:
            text = scrape(port)
            now = time.monotonic()
            if t_ready is None and sample(text, "gpusched_ready") == 1:
                t_ready, cpu_ready = now, cpu_seconds(sched.pid)
                threads_ready = thread_cpu(sched.pid)
            bound = sample(text, "scheduler_schedule_attempts_total", SCHEDULED)
            if bound >= a.pods:
                t_end = now
                break
            if now - t0 > a.timeout:
                sys.exit("timed out with %d of %d pods bound" % (bound, a.pods))
            time.sleep(0.2)
        cpu_end = cpu_seconds(sched.pid)
        api_cpu = cpu_seconds(api.pid) - api_cpu0
        bind_text = text
        # the Scheduled events queued behind the binds
        while True:
            events = (sample(text, "gpusched_events_total", 'verb="create"') +
                      sample(text, "gpusched_events_total", 'verb="patch"') +
                      sample(text, "gpusched_event_errors_total"))
            now = time.monotonic()
            if events >= a.pods:
                t_writes = now
                break
            if now - t0 > a.timeout:
                sys.exit("timed out with %d of %d events written" % (events, a.pods))
            time.sleep(0.2)
            text = scrape(port)
        cpu_writes = cpu_seconds(sched.pid)
        threads_writes = thread_cpu(sched.pid)
        hwm = vm_hwm_kib(sched.pid)
        text = bind_text
        wall = t_end - t_ready
        res = {
            "nodes": a.nodes, "pods": a.pods, "qps": a.qps, "burst": a.burst,
            "startup_to_ready_s": round(t_ready - t0, 3),
            "schedule_wall_s": round(wall, 3),
            "pods_per_s": round(a.pods / wall, 1),
            # kube-scheduler's histograms and buckets: the SLI (first active to bound, pods bound
            # at their first attempt) starts at 10 ms, the attempt (cycle + binding) and the
            # algorithm at 1 ms, the Bind extension point at 100 us; quantiles are interpolated
            # inside those buckets, the means are exact
            "e2e_p50_ms": round(1000 * quantile(text, SLI, 0.5, 'attempts="1"'), 2),
            "e2e_p99_ms": round(1000 * quantile(text, SLI, 0.99, 'attempts="1"'), 2),
            "attempt_p50_ms": round(1000 * quantile(text, ATTEMPT, 0.5, SCHEDULED), 3),
            "attempt_p99_ms": round(1000 * quantile(text, ATTEMPT, 0.99, SCHEDULED), 3),
            "attempt_mean_us": mean_us(text, ATTEMPT),
            "algorithm_mean_us": mean_us(text, "scheduler_scheduling_algorithm_duration_seconds"),
            "bind_p50_ms": round(1000 * quantile(text, EXT, 0.5, BIND_OK), 2),
            "bind_p99_ms": round(1000 * quantile(text, EXT, 0.99, BIND_OK), 2),
            "sched_cpu_total_s": round(cpu_end, 3),
            "sched_cpu_per_pod_us_total": round(1e6 * cpu_end / a.pods, 1),
            "sched_cpu_per_pod_us_after_sync": round(1e6 * (cpu_end - cpu_ready) / a.pods, 1),
            "writes_wall_s": round(t_writes - t_ready, 3),
            "sched_cpu_per_pod_us_all_writes": round(1e6 * (cpu_writes - cpu_ready) / a.pods, 1),
            # the same, per thread (scheduling loop = "gpusched", writes = "binder", watch events
            # = "inf-pods"/"inf-nodes"); /proc's 10 ms ticks make each ±1 µs per pod here
            "sched_cpu_per_pod_us_all_writes_by_thread": {
                k: round(1e6 * (v - threads_ready.get(k, 0)) / a.pods, 1)
                for k, v in sorted(threads_writes.items()) if v - threads_ready.get(k, 0) > 0},
            "sched_peak_rss_mib": round(hwm / 1024, 1),
            "apiserver_cpu_util": round(api_cpu / (t_end - t0), 2),
        }
        print(json.dumps(res, indent=1))
    finally:
        if sched:
            sched.terminate()
            try:
                sched.wait(30)
            except subprocess.TimeoutExpired:
                sched.kill()
        api.terminate()
        api.wait(10)


if __name__ == "__main__":
    main()
