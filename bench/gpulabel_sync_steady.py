#!/usr/bin/env python3
"""gpulabel_sync_steady.py - the API cost of the gpulabel daemon once its node is labelled.

Runs build/gpulabel as a daemon (fake NVML with 8 GPUs, --sleep-interval 50ms) against the
API server double over TLS, lets it label the node, then counts the requests of CYCLES steady
cycles: the target is zero writes (one GET per cycle, the node's resourceVersion unchanged).
Also reports the daemon's resident memory and CPU time per cycle. Writes the results, with
the command and the machine, to docs/benchmarks-gpulabel-sync.md.

  python3 bench/gpulabel_sync_steady.py [BUILD_DIR] [CYCLES]     (defaults: build 500)
"""
import datetime
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "tests", "apiserver"))
from fake_apiserver import FakeApiServer  # noqa: E402

OUT = os.path.join(SRC, "docs", "benchmarks-gpulabel-sync.md")


def proc_status(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmHWM", "VmRSS"):
                out[k] = int(v.split()[0])
    with open("/proc/%d/stat" % pid) as f:
        st = f.read().rsplit(")", 1)[1].split()
    out["cpu"] = (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")
    return out


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "build"))
    cycles = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    d = tempfile.mkdtemp(prefix="gpulabel-bench-")
    api = FakeApiServer(tls=True, tokens=["bench-token"]).start()
    kc = api.write_kubeconfig(os.path.join(d, "kubeconfig"), token="bench-token")
    api.add({"apiVersion": "v1", "kind": "Node",
             "metadata": {"name": "gpu-1", "labels": {"kubernetes.io/hostname": "gpu-1"}}})
    conf = os.path.join(d, "nvml.conf")
    with open(conf, "w") as f:
        f.write('driver=550.107.02\ncuda=12050\ndevice name="NVIDIA H100 80GB HBM3" '
                'memory=85520809984 cc=9.0 repeat=8\n')
    argv = [os.path.join(build, "gpulabel"), "--kubeconfig", kc, "--node-name", "gpu-1",
            "--nvml-lib", os.path.join(build, "fake-nvml", "libnvidia-ml.so.1"),
            "--sleep-interval", "50ms"]
    p = subprocess.Popen(argv, env=dict(os.environ, FAKE_NVML_CONFIG=conf),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while len(api.requests) < 3 and time.monotonic() < deadline:
            time.sleep(0.005)
        first = list(api.requests[:2])
        n0 = len(api.requests)
        rv0 = api.get("nodes", "gpu-1")["metadata"]["resourceVersion"]
        s0 = proc_status(p.pid)
        deadline = time.monotonic() + 30 + cycles
        while len(api.requests) < n0 + cycles and time.monotonic() < deadline:
            time.sleep(0.01)
        s1 = proc_status(p.pid)
        steady = list(api.requests[n0:n0 + cycles])
        rv1 = api.get("nodes", "gpu-1")["metadata"]["resourceVersion"]
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(10)
        api.close()
    gets = sum(r["method"] == "GET" for r in steady)
    writes = len(steady) - gets
    cpu_ms = 1000.0 * (s1["cpu"] - s0["cpu"]) / max(1, len(steady))
    load = " ".join("%.2f" % x for x in os.getloadavg())
    text = """# gpulabel benchmark: node sync in a steady state

Produced by `python3 bench/gpulabel_sync_steady.py` (do not edit by hand). The daemon
(`gpulabel --sleep-interval 50ms`, fake NVML serving 8 GPUs `NVIDIA H100 80GB HBM3`) runs
against the API server double over TLS with a bearer token. After its first cycle has
labelled the node, the next {cycles} cycles are counted from the double's request log.
The same property is asserted by the test `gpulabel_sync/daemon_steady_state_sends_only_gets`
(`python3 tests/run.py --build build -k steady_state`).

Command: `{cmd}`

| metric | value | target | met |
|---|---|---|---|
| first cycle | {first} | one GET, one PATCH | {first_ok} |
| requests in {n} steady cycles | {gets} GET, {writes} writes | zero writes | {zero_ok} |
| node resourceVersion over those cycles | {rv0} -> {rv1} | unchanged | {rv_ok} |
| daemon resident memory (VmRSS / VmHWM) | {rss:.1f} MiB / {hwm:.1f} MiB | | |
| daemon CPU time (user+sys) per steady cycle | {cpu:.2f} ms | | |

Memory is that of the whole process: libcurl with OpenSSL and the TLS session dominate it.
Load average when the runs started: {load}.

Machine: {machine}, {ncpu} CPUs, Python {py} as the driver; {when} UTC.
""".format(cycles=cycles, cmd="python3 bench/gpulabel_sync_steady.py %s %d"
               % (os.path.relpath(build, SRC), cycles),
               first=" ".join("%s %s" % (r["method"], r["path"]) for r in first),
               first_ok="yes" if [r["method"] for r in first] == ["GET", "PATCH"] else "no",
               n=len(steady), gets=gets, writes=writes,
               zero_ok="yes" if writes == 0 and len(steady) == cycles else "no",
               rv0=rv0, rv1=rv1, rv_ok="yes" if rv0 == rv1 else "no",
               rss=s1["VmRSS"] / 1024.0, hwm=s1["VmHWM"] / 1024.0, cpu=cpu_ms, load=load,
               machine=platform.platform(), ncpu=os.cpu_count(), py=platform.python_version(),
               when=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"))
    with open(OUT, "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0 if writes == 0 and rv0 == rv1 else 1


if __name__ == "__main__":
    sys.exit(main())
