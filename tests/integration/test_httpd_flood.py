"""The probe server (src/base/httpd.c) under a connect flood (docs/security.md):
probes are answered while the flood holds more connections than the server has slots, and a
burst of connects does not overflow the accept queue (whose overflow drops the probes' SYNs,
sent again by the kernel only after a second). Behaviour, not timings: the latencies are
bench/httpd_flood.py's."""
import os
import re
import signal
import socket
import struct
import subprocess
import time

import util


class Gpulabel:
    """gpulabel with only its probe server: --no-sync, no device plugin, the fake NVML."""

    def __enter__(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GPULABEL_", "GFD_"))}
        self.p = subprocess.Popen([util.binary("gpulabel"), "--no-sync", "--device-plugin=false",
                                   "--metrics-addr", "127.0.0.1:0", "--sleep-interval", "1h",
                                   "--nvml-lib", util.fake_nvml()],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        for line in self.p.stderr:
            m = re.search(r"on port (\d+)", line)
            if m:
                self.port = int(m.group(1))
                return self
        raise AssertionError("gpulabel did not start its probe server")

    def __exit__(self, *exc):
        os.kill(self.p.pid, signal.SIGCONT)
        self.p.kill()
        self.p.wait()


def connect_nowait(port):
    s = socket.socket()
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    return s


def get(s, path="/healthz"):
    """Sends GET path on the connected socket s; returns the status line."""
    s.setblocking(True)
    s.settimeout(20)
    s.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n", 1)[0].decode()


def syn_retransmits(s):
    """tcp_info.tcpi_total_retrans of a client socket: counts a SYN sent again."""
    return struct.unpack_from("I", s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104), 100)[0]


def test_probes_answered_while_the_flood_holds_every_slot():
    with Gpulabel() as g:
        flood = [connect_nowait(g.port) for _ in range(500)]  # idle, more than the slots
        try:
            time.sleep(0.3)
            for i in range(20):
                s = socket.create_connection(("127.0.0.1", g.port), timeout=20)
                try:
                    util.check_eq(get(s), "HTTP/1.1 200 OK", "probe %d" % i)
                finally:
                    s.close()
        finally:
            for s in flood:
                s.close()


def test_a_burst_of_connects_does_not_drop_the_probes_syn():
    """300 connects and then 5 probes arrive while the server is stopped (SIGSTOP): all wait in
    the accept queue, none is dropped (a backlog of 64 dropped the probes' SYNs, answered a
    second later), and once it runs again each probe is answered."""
    with Gpulabel() as g:
        os.kill(g.p.pid, signal.SIGSTOP)
        flood = [connect_nowait(g.port) for _ in range(300)]
        probes = [connect_nowait(g.port) for _ in range(5)]
        try:
            time.sleep(0.2)
            os.kill(g.p.pid, signal.SIGCONT)
            with open("/proc/sys/net/core/somaxconn") as f:
                room = int(f.read()) >= 400  # the kernel's cut of the server's backlog
            for i, s in enumerate(probes):
                util.check_eq(get(s), "HTTP/1.1 200 OK", "probe %d" % i)
                if room:
                    util.check_eq(syn_retransmits(s), 0, "probe %d: SYNs sent again" % i)
        finally:
            for s in flood + probes:
                s.close()
