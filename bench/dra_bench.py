#!/usr/bin/python3
"""dra_bench.py - gpulabel's DRA mode against its budgets (issue 24 item 8), on the real
kube-apiserver v1.37.2 (tests/integration/k8s_util.py, build/k8s):

- peak RSS (VmHWM) of the daemon in DRA mode (slices published, the kubelet's DRA plugin
  registered, PREPARES claims prepared and unprepared) against the same daemon in device-plugin
  mode (plugin registered, as many Allocate calls), 8 GPUs each, ROUNDS runs each;
- NodePrepareResources latency, one claim a call (the claim is GET from the API server in each:
  that is most of it), measured in the fake kubelet (Python gRPC's client cost included);
- the time from an XID injected into the fake NVML to the taint on the API server's slice
  (polled every 5 ms), for each of the 8 GPUs, ROUNDS times;
- the slice writes (create, update, delete, from the audit log) in STEADY steady cycles.

Writes docs/benchmarks-dra.md.

  /usr/bin/python3 bench/dra_bench.py [BUILD_DIR] [PREPARES] [ROUNDS] [STEADY]  (build 300 3 30)
"""
import datetime
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "build"))
os.environ.setdefault("GPULABEL_BUILD", BUILD)
os.environ.setdefault("GPULABEL_SRCDIR", SRC)
sys.path.insert(0, os.path.join(SRC, "tests", "integration"))
sys.path.insert(0, os.path.join(SRC, "tests", "kubelet"))
import k8s_util  # noqa: E402
import util  # noqa: E402
from fake_dra_kubelet import FakeDraKubelet  # noqa: E402
from fake_kubelet import FakeKubelet  # noqa: E402

OUT = os.path.join(SRC, "docs", "benchmarks-dra.md")
GPUS = 'device name="NVIDIA H100 80GB HBM3" memory=85520809984 cc=9.0 repeat=8\n'
SLICES = "/apis/resource.k8s.io/v1/resourceslices"


def hwm(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


class Node:
    def __init__(self, c, name):
        self.c, self.name = c, name
        c.create_node(k8s_util.gpu_node(name, gpus=0))
        self.dir = tempfile.mkdtemp(prefix="gpulabel-dra-bench-")
        for d in ("reg", "plugins", "cdi", "dp"):
            os.makedirs(os.path.join(self.dir, d))
        self.nvml = os.path.join(self.dir, "nvml.conf")
        with open(self.nvml, "w") as f:
            f.write("driver=550.107.02\ncuda=12040\n" + GPUS)
        self.events = os.path.join(self.dir, "events")
        open(self.events, "w").close()
        self.p = None

    def start(self, mode, *extra, api=True):
        e = {k: v for k, v in os.environ.items() if not k.startswith("GPULABEL_")}
        e.update(FAKE_NVML_CONFIG=self.nvml, FAKE_NVML_EVENTS=self.events)
        self.p = k8s_util.Process(
            [util.binary("gpulabel")] + (["--kubeconfig", self.c.kubeconfig] if api else []) +
            ["--node-name", self.name,
             "--nvml-lib", util.fake_nvml(), "--mode", mode, "--schema", "ack,gfd",
             "--sysfs-root", os.path.join(SRC, "tests", "fixtures", "sysfs"),
             "--kubelet-registrar-dir", os.path.join(self.dir, "reg"),
             "--kubelet-plugins-dir", os.path.join(self.dir, "plugins"),
             "--cdi-root", os.path.join(self.dir, "cdi"),
             "--device-plugin-dir", os.path.join(self.dir, "dp")] + list(extra),
            os.path.join(self.dir, "gpulabel-%d.log" % time.monotonic_ns()), env=e)

    def stop(self):
        if self.p:
            self.p.stop()
            self.p = None

    def devices(self):
        return {d["name"]: d for s in self.c.items(SLICES) if s["spec"].get("nodeName") == self.name
                for d in s["spec"].get("devices", [])}

    def close(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def claim(c, name, node, dev):
    c.create("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}})
    obj = c.get("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/" + name)
    # the allocation as kube-scheduler would write it (status subresource)
    obj["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": node, "device": dev}]}}}
    c.request("PUT", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/%s/status" % name, obj)
    return obj["metadata"]["uid"]


def main():
    prepares = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    steady = int(sys.argv[4]) if len(sys.argv) > 4 else 30
    c = k8s_util.Cluster("dra-bench", run_pods=False, controller_manager=False)
    res = {"dra_hwm": [], "dp_hwm": [], "pod_hwm": [], "labels_hwm": [], "prep": [], "agent": [], "get": [], "again": [], "taint": [],
           "writes": None}
    try:
        c.apply_file("deploy/gpulabel/dra.yaml")
        for r in range(rounds):
            # DRA mode
            n = Node(c, "bench-dra-%d" % r)
            k = FakeDraKubelet(os.path.join(n.dir, "reg"), BUILD)
            k.start()
            n.start("dra", "--sleep-interval", "1s", "--health-recovery-period", "1s", "-v", "1")
            k8s_util.wait_for("slices", lambda: n.p.alive() or len(n.devices()) == 8, timeout=60)
            k.wait_registration()
            uids = [(claim(c, "b%d-%d" % (r, i), n.name, "gpu-%d" % (i % 8)), "b%d-%d" % (r, i))
                    for i in range(prepares)]
            # a node of 8 GPUs runs at most 8 claims at once: each claim is prepared, and the
            # one 8 before it unprepared (its pod ended); at most 50 calls a second, as a
            # kubelet starting pods makes them (a client faster than the servers' rate is
            # slowed: docs/device-plugin.md)
            for i, (uid, name) in enumerate(uids):
                t = time.perf_counter()
                got = k.prepare(("default", name, uid))
                res["prep"].append((time.perf_counter() - t) * 1e6)
                if got[uid].error:
                    raise AssertionError(got[uid].error)
                if i >= 8:
                    k.unprepare(("default", uids[i - 8][1], uids[i - 8][0]))
                time.sleep(max(0.0, 0.02 - (time.perf_counter() - t)))
            for line in n.p.log().splitlines():  # the agent's own time for each
                if "DRA plugin: prepared claim" in line and line.endswith(" ms"):
                    res["agent"].append(float(line.rsplit(" ", 2)[1]) * 1000)
            for uid, name in uids:  # what the API server's GET alone costs, from here
                t = time.perf_counter()
                c.get("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/" + name)
                res["get"].append((time.perf_counter() - t) * 1e6)
            for i in range(prepares):  # prepared already: answered from the checkpoint, no GET
                uid, name = uids[len(uids) - 8 + i % 8]
                t = time.perf_counter()
                k.prepare(("default", name, uid))
                res["again"].append((time.perf_counter() - t) * 1e6)
                time.sleep(max(0.0, 0.02 - (time.perf_counter() - t)))
            for uid, name in uids[-8:]:
                k.unprepare(("default", name, uid))
            for g in range(8):  # XID -> taint on the API, then heal before the next GPU
                with open(n.events, "a") as f:
                    t = time.perf_counter()
                    f.write("xid %d 79\n" % g)
                while not n.devices()["gpu-%d" % g].get("taints"):
                    n.p.alive()
                    time.sleep(0.005)
                res["taint"].append((time.perf_counter() - t) * 1e3)
                k8s_util.wait_for("healed", lambda: not n.devices()["gpu-%d" % g].get("taints"), timeout=30)
            res["dra_hwm"].append(hwm(n.p.p.pid))
            if r == 0:  # steady state: the writes in STEADY cycles of 200 ms
                n.stop()
                n.start("dra", "--sleep-interval", "200ms", "-v", "2")
                k8s_util.wait_for("a quiet cycle", lambda: n.p.alive() or "nothing written" in n.p.log(), timeout=60)
                before = len([e for e in c.audit(resource="resourceslices") if e["verb"] in ("create", "update", "delete")])
                seen = n.p.log().count("nothing written")
                k8s_util.wait_for("steady cycles", lambda: n.p.alive() or n.p.log().count("nothing written") >= seen + steady,
                                  timeout=120)
                after = len([e for e in c.audit(resource="resourceslices") if e["verb"] in ("create", "update", "delete")])
                res["writes"] = after - before
            n.close()
            k.stop()
            # device-plugin mode, the same node shape
            d = Node(c, "bench-dp-%d" % r)
            fk = FakeKubelet(os.path.join(d.dir, "dp"), BUILD)
            fk.start()
            d.start("device-plugin", "--sleep-interval", "1s")
            pl = fk.wait_registration()
            pl.wait_update()
            for i in range(prepares):
                pl.allocate(["GPU-00000000-fa4e-4e00-8000-%012x" % (i % 8)])
            time.sleep(1.5)
            res["dp_hwm"].append(hwm(d.p.p.pid))
            d.close()
            fk.stop()
            # device-plugin mode as deploy/gpulabel/daemonset.yaml runs it: the labels container
            # (the token, the GPU health Events) and the device-plugin container (no API), the
            # pod's peak the sum of the two; the same calls and the 8 XIDs healed
            d = Node(c, "bench-pod-%d" % r)
            fk = FakeKubelet(os.path.join(d.dir, "dp"), BUILD)
            fk.start()
            d.start("device-plugin", "--sleep-interval", "1s", "--device-plugin=false",
                    "--health-recovery-period", "1s", "-v", "1")
            labels = d.p
            d.start("device-plugin", "--sleep-interval", "1s", "--no-sync", "--health-recovery-period", "1s",
                    api=False)
            pl = fk.wait_registration()
            pl.wait_update()
            k8s_util.wait_for("the labels' health watch", lambda: labels.alive() or
                              "watching GPU health for the Node's Events" in labels.log(), timeout=60)
            for i in range(prepares):
                pl.allocate(["GPU-00000000-fa4e-4e00-8000-%012x" % (i % 8)])
            for g in range(8):
                with open(d.events, "a") as f:
                    f.write("xid %d 79\n" % g)
                pl.wait_update(lambda devs: any(x[1] == "Unhealthy" for x in devs), timeout=30)
                pl.wait_update(lambda devs: all(x[1] == "Healthy" for x in devs), timeout=30)
            k8s_util.wait_for("16 Events", lambda: labels.alive() or len(
                [e for e in c.items("/api/v1/namespaces/default/events")
                 if e["involvedObject"].get("name") == d.name]) >= 16, timeout=60)
            res["pod_hwm"].append(hwm(labels.p.pid) + hwm(d.p.p.pid))
            res["labels_hwm"].append(hwm(labels.p.pid))
            labels.stop()
            d.close()
            fk.stop()
    finally:
        c.close()
    med = lambda v: statistics.median(v) / 1024.0  # noqa: E731
    load = os.getloadavg()
    lines = [
        "# DRA mode benchmark",
        "",
        "Generated by `/usr/bin/python3 bench/dra_bench.py %s %d %d %d` on %s (%s, %d CPUs, load "
        "average %.1f %.1f %.1f at the end). The agent: `build/gpulabel` daemon against the real "
        "kube-apiserver v1.37.2 (`build/k8s`, admin credentials, audit log on), the fake NVML with 8 "
        "H100s, `--schema ack,gfd`, the sysfs fixture; the kubelet: `tests/kubelet/fake_dra_kubelet.py` "
        "and `fake_kubelet.py` on Debian's python3-grpcio (latencies are measured there and include "
        "Python gRPC's client cost). %d runs of each mode."
        % (os.path.relpath(BUILD, SRC), prepares, rounds, steady, datetime.date.today().isoformat(),
           platform.machine(), os.cpu_count(), load[0], load[1], load[2], rounds),
        "",
        "| what | budget | measured |",
        "|---|---|---|",
        "| peak RSS (VmHWM), DRA mode: 8 GPUs in a slice, DRA plugin registered, %d claims prepared "
        "and unprepared (8 at a time), 8 XIDs tainted and healed | <= device-plugin mode's | %.1f MiB (median of %d) |"
        % (prepares, med(res["dra_hwm"]), rounds),
        "| peak RSS (VmHWM), device-plugin mode in one process (labels, plugin, Events): 8 GPUs "
        "advertised, %d Allocate calls | - | %.1f MiB (median of %d) |" % (prepares, med(res["dp_hwm"]), rounds),
        "| peak RSS (VmHWM), device-plugin mode as daemonset.yaml runs it: the labels container and "
        "the device-plugin container, summed; %d Allocate calls, 8 XIDs healed with their Events | - | "
        "%.1f MiB (median of %d; the labels container alone %.1f MiB) |"
        % (prepares, med(res["pod_hwm"]), rounds, med(res["labels_hwm"])),
        "| NodePrepareResources latency, one claim a call (50 calls a second), the claim read from the API server (%d calls) "
        "| p99 <= 5 ms | p50 %.0f µs, p99 %.0f µs, max %.0f µs |"
        % (len(res["prep"]), pct(res["prep"], 50), pct(res["prep"], 99), max(res["prep"])),
        "| the same, the agent's own time from the request to the answer (its log at -v 1: GET "
        "of the claim, CDI spec and checkpoint written) | - | p50 %.0f µs, p99 %.0f µs |"
        % (pct(res["agent"], 50), pct(res["agent"], 99)),
        "| the same claims' GET alone, from the benchmark (Python's http.client, admin TLS) | - | "
        "p50 %.0f µs, p99 %.0f µs |" % (pct(res["get"], 50), pct(res["get"], 99)),
        "| NodePrepareResources of a claim prepared already (answered from the checkpoint, no GET) "
        "| - | p50 %.0f µs, p99 %.0f µs |" % (pct(res["again"], 50), pct(res["again"], 99)),
        "| XID injected to the taint on the API server's slice (%d) | <= 1 s | p50 %.0f ms, p99 %.0f "
        "ms, max %.0f ms |" % (len(res["taint"]), pct(res["taint"], 50), pct(res["taint"], 99),
                               max(res["taint"])),
        "| slice writes in %d steady cycles (200 ms apart) | 0 | %d |" % (steady, res["writes"]),
        "",
        "The DRA mode carries what the device-plugin mode does (NVML, gRPC core, the API client) plus "
        "the GPU health monitor's thread, the two gRPC servers of the kubelet plugin (registration and "
        "DRA) and jansson documents of the pool, which it frees after each publish.",
        "",
    ]
    with open(OUT, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
