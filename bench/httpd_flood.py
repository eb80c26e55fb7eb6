#!/usr/bin/env python3
"""Benchmark of the probe server (src/base/httpd.c) under a connect flood (not a test).

Starts `gpulabel` as a daemon on the fake NVML with only its probe server (--no-sync,
--device-plugin=false, --metrics-addr 127.0.0.1:0), then floods the port from --flooders
processes, each keeping up to --hold connections open that never send a byte and opening new
ones as fast as it can (the oldest closed first: a steady churn of connects), while one prober
sends GET /healthz every --interval seconds, on a fresh connection each, and times the answer
from the connect. Reports the probes' latency quantiles and how many took over 100 ms and
over 1 s (a SYN the kernel dropped from a full accept queue is sent again after 1 s). The
flooders run at nice 19: on a shared machine they would otherwise measure the CPU they take
from the server, not the server.

  python3 bench/httpd_flood.py --build build --seconds 20
"""
import argparse
import multiprocessing
import os
import re
import socket
import subprocess
import sys
import threading
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start_gpulabel(build):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPULABEL_")}
    p = subprocess.Popen([os.path.join(build, "gpulabel"), "--no-sync", "--device-plugin=false",
                          "--metrics-addr", "127.0.0.1:0", "--sleep-interval", "1h",
                          "--nvml-lib", os.path.join(build, "fake-nvml", "libnvidia-ml.so.1")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    for line in p.stderr:
        m = re.search(r"on port (\d+)", line)
        if m:
            threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
            return p, int(m.group(1))
    raise SystemExit("gpulabel did not start")


def flooder(port, hold, stop, count):
    # the flood comes from elsewhere in real life: here it must not take the CPU the server
    # and the prober need
    os.nice(19)
    open_ = []
    n = 0
    while not stop.is_set():
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            continue
        open_.append(s)
        n += 1
        if len(open_) > hold:
            open_.pop(0).close()
    for s in open_:
        s.close()
    with count.get_lock():
        count.value += n


def probe(port, timeout=10.0):
    t0 = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    if not data.startswith(b"HTTP/1.1 "):
        raise RuntimeError("no answer")
    return time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--flooders", type=int, default=2, help="processes")
    ap.add_argument("--hold", type=int, default=500, help="connections each flooder keeps open")
    ap.add_argument("--interval", type=float, default=0.05)
    a = ap.parse_args()
    p, port = start_gpulabel(a.build)
    stop = multiprocessing.Event()
    connects = multiprocessing.Value("l", 0)
    threads = [multiprocessing.Process(target=flooder, args=(port, a.hold, stop, connects), daemon=True)
               for i in range(a.flooders)]
    lat, failed = [], 0
    try:
        for t in threads:
            t.start()
        time.sleep(1.0)
        end = time.monotonic() + a.seconds
        while time.monotonic() < end:
            try:
                lat.append(probe(port))
            except (OSError, RuntimeError):
                failed += 1
            time.sleep(a.interval)
    finally:
        stop.set()
        for t in threads:
            t.join(10)
        p.terminate()
        p.wait(10)
    lat.sort()
    q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))] * 1000 if lat else float("nan")
    print("probes=%d failed=%d connects=%d p50_ms=%.1f p90_ms=%.1f p99_ms=%.1f max_ms=%.1f "
          "over_100ms=%.1f%% over_1s=%.1f%%"
          % (len(lat), failed, connects.value, q(0.5), q(0.9), q(0.99), q(1.0),
             100.0 * sum(1 for x in lat if x > 0.1) / max(1, len(lat)),
             100.0 * sum(1 for x in lat if x > 1.0) / max(1, len(lat))))


if __name__ == "__main__":
    sys.exit(main())
