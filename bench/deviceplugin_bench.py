#!/usr/bin/python3
"""deviceplugin_bench.py - the device plugin as the kubelet sees it: Allocate latency, the
agent's memory, and the time from an injected XID to the Unhealthy update.

Runs build/gpulabel as a daemon (--no-sync, fake NVML with 8 GPUs, the sysfs fixture) against
tests/kubelet/fake_kubelet.py (Debian's python3-grpcio, so run it with /usr/bin/python3),
then: CALLS sequential Allocate calls of 1 to 4 GPUs (latency measured in the fake kubelet,
so it includes Python gRPC's own client cost), 8 concurrent callers for the same number of
calls, the agent's peak RSS (VmHWM) and RSS afterwards, and for each of the 8 GPUs the time
from appending an XID to the fake NVML's event file to the ListAndWatch message that marks it
Unhealthy, over ROUNDS agent runs. Writes docs/benchmarks-deviceplugin.md.

  /usr/bin/python3 bench/deviceplugin_bench.py [BUILD_DIR] [CALLS] [ROUNDS]   (build 5000 3)
"""
import datetime
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "tests", "kubelet"))
from fake_kubelet import FakeKubelet  # noqa: E402

OUT = os.path.join(SRC, "docs", "benchmarks-deviceplugin.md")
GPUS = 'device name="NVIDIA H100 80GB HBM3" memory=85520809984 cc=9.0 nvlink=%s\n'


def uuid(i):
    return "GPU-00000000-fa4e-4e00-8000-%012x" % i


def status_kib(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


class Agent:
    def __init__(self, build):
        self.dir = tempfile.mkdtemp(prefix="gpulabel-dp-bench-")
        self.dp = os.path.join(self.dir, "dp")
        os.makedirs(self.dp)
        self.nvml = os.path.join(self.dir, "nvml.conf")
        with open(self.nvml, "w") as f:
            f.write("driver=550.107.02\ncuda=12040\n")
            for i in range(8):
                f.write(GPUS % (i ^ 1))  # NVLink pairs (0,1) (2,3) ...
        self.events = os.path.join(self.dir, "events")
        open(self.events, "w").close()
        self.kubelet = FakeKubelet(self.dp, build)
        self.kubelet.start()
        env = dict(os.environ, FAKE_NVML_CONFIG=self.nvml, FAKE_NVML_EVENTS=self.events)
        self.p = subprocess.Popen(
            [os.path.join(build, "gpulabel"), "--no-sync", "--nvml-lib",
             os.path.join(build, "fake-nvml", "libnvidia-ml.so.1"), "--sysfs-root",
             os.path.join(SRC, "tests", "fixtures", "sysfs"), "--device-plugin-dir", self.dp,
             "--schema", "ack,gfd"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.plugin = self.kubelet.wait_registration()
        self.plugin.wait_update()

    def close(self):
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(timeout=10)
        self.kubelet.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def allocate_sequential(pl, calls):
    lat = []
    for i in range(calls):
        ids = [uuid((i + k) % 8) for k in range(1 + i % 4)]
        t = time.perf_counter()
        pl.allocate(ids)
        lat.append(time.perf_counter() - t)
    return lat


def allocate_concurrent(pl, calls, workers=8):
    lat, lock = [], threading.Lock()

    def work(w):
        mine = []
        for i in range(calls // workers):
            ids = [uuid((w + i) % 8)]
            t = time.perf_counter()
            pl.allocate(ids)
            mine.append(time.perf_counter() - t)
        with lock:
            lat.extend(mine)
    ts = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return lat, time.perf_counter() - t0


def xid_round(a):
    out = []
    for g in range(8):
        after = len(a.plugin.updates)
        t = time.perf_counter()
        with open(a.events, "a") as f:
            f.write("xid %d 79\n" % g)
        a.plugin.wait_update(lambda d, g=g: d[g][1] == "Unhealthy", timeout=10, after=after)
        out.append(time.perf_counter() - t)
    return out


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    seq, conc, xid, hwm, rss, conc_wall = [], [], [], [], [], []
    for r in range(rounds):
        a = Agent(build)
        try:
            time.sleep(1.5)  # the first detection cycle is over: labels and plugin both up
            seq += allocate_sequential(a.plugin, calls)
            c, w = allocate_concurrent(a.plugin, calls)
            conc += c
            conc_wall.append(w)
            hwm.append(status_kib(a.p.pid, "VmHWM"))
            rss.append(status_kib(a.p.pid, "VmRSS"))
            xid += xid_round(a)
        finally:
            a.close()
    us = lambda s: "%.0f µs" % (s * 1e6)  # noqa: E731
    ms = lambda s: "%.0f ms" % (s * 1e3)  # noqa: E731
    load = os.getloadavg()
    text = """# Device plugin benchmark

Generated by `/usr/bin/python3 bench/deviceplugin_bench.py %s %d %d` on %s (%s, %d CPUs,
load average %.1f %.1f %.1f at the end). The agent: `build/gpulabel` daemon, `--no-sync`,
`--schema ack,gfd`, the fake NVML with 8 GPUs in NVLink pairs, the sysfs fixture; the peer:
`tests/kubelet/fake_kubelet.py` on Debian's python3-grpcio (latencies are measured there and
include Python gRPC's client cost). %d agent runs.

| what | target | measured |
|---|---|---|
| Allocate latency, one caller, 1-4 GPUs (%d calls) | p99 <= 1 ms | p50 %s, p99 %s, max %s |
| Allocate latency, 8 concurrent callers (%d calls) | - | p50 %s, p99 %s; %.0f calls/s |
| agent peak RSS (VmHWM) serving 8 GPUs, labels and plugin | <= 8 MiB | %.1f MiB (median of %d; RSS afterwards %.1f MiB) |
| injected XID 79 to the Unhealthy ListAndWatch message (%d) | <= 1 s | p50 %s, p99 %s, max %s |

NVIDIA's device plugin and GPU Feature Discovery are Go processes; they cannot run here
(no GPU, no driver), so their memory is not measured side by side: as Go programs with
client-go and gRPC-go they are expected at tens of MiB each, a figure this report does not
verify.
""" % (os.path.relpath(build, SRC), calls, rounds,
       datetime.date.today().isoformat(), platform.machine(), os.cpu_count(),
       load[0], load[1], load[2], rounds,
       len(seq), us(statistics.median(seq)), us(pct(seq, 99)), us(max(seq)),
       len(conc), us(statistics.median(conc)), us(pct(conc, 99)),
       len(conc) / sum(conc_wall),
       statistics.median(hwm) / 1024.0, len(hwm), statistics.median(rss) / 1024.0,
       len(xid), ms(statistics.median(xid)), ms(pct(xid, 99)), ms(max(xid)))
    with open(OUT, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
