# run.py: python /usr/bin/python3
"""The bounds of gpulabel's gRPC servers (src/rpc/, issue 26 item 7), attacked as a hostile
local client would, with raw HTTP/2 frames (tests/kubelet/h2attack.py) on the device plugin's
socket: rapid reset, a CONTINUATION flood, streams opened just under the rate on every
connection, 3,000 connections, a connection that never sends its preface, and the socket's
mode under umask 000. Each case checks the bound (the attacker is slowed to the rate, or its
connection closed; the daemon's peak RSS grows by less than RSS_BOUND_KB) and that a real call
still gets its answer.

Before the bounds, rapid reset took the daemon to 2.6-4.8 GB of RSS in 10 s.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import plugin_util as pu
import util

SKIP = pu.grpc_skip("api_pb2")
if not SKIP:
    import grpc
    sys.path.insert(0, os.path.join(util.BUILD, "gen", "python"))
    import api_pb2  # noqa: E402
    import h2attack as h2  # noqa: E402

RSS_BOUND_KB = 48 * 1024  # what any one attack may add to the daemon's peak RSS
MAX_CONNECTIONS = 16      # src/rpc/rpc.h RPC_MAX_CONNECTIONS
CALL = "/v1beta1.DevicePlugin/Allocate"


class Daemon:
    def __init__(self, umask=None):
        self.dir = tempfile.mkdtemp(prefix="gpulabel-rpc-")
        self.dp = os.path.join(self.dir, "dp")
        os.makedirs(self.dp)
        self.err = open(os.path.join(self.dir, "stderr"), "w+")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("GPULABEL_") and k not in ("NODE_NAME", "KUBECONFIG", "FAKE_NVML_CONFIG")}
        self.p = subprocess.Popen(
            [util.binary("gpulabel"), "--nvml-lib", util.fake_nvml(), "--no-sync",
             "--device-plugin-dir", self.dp, "--sleep-interval", "1s"],
            env=env, stdout=subprocess.DEVNULL, stderr=self.err,
            preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)
        self.sock = os.path.join(self.dp, "gpulabel-gpu.sock")
        deadline = time.monotonic() + 20
        while not os.path.exists(self.sock):
            if time.monotonic() > deadline or self.p.poll() is not None:
                raise AssertionError("no plugin socket: %s" % self.stderr())
            time.sleep(0.05)
        self.call()  # gRPC is loaded and has served once: the baseline
        self.base = self.hwm()

    def hwm(self):
        with open("/proc/%d/status" % self.p.pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        raise AssertionError("no VmHWM")

    def check_bound(self, what):
        grew = self.hwm() - self.base
        # no RSS bound holds under the sanitizers (ASan's quarantine keeps what is freed)
        if grew > RSS_BOUND_KB and not util.sanitized(util.binary("gpulabel")):
            raise AssertionError("%s: the daemon's peak RSS grew by %d KiB (bound %d KiB)"
                                 % (what, grew, RSS_BOUND_KB))
        util.check_eq(self.p.poll(), None, "%s: the daemon still runs" % what)

    def call(self, timeout=10):
        """A real call (GetDevicePluginOptions) through gRPC: the server still serves."""
        with grpc.insecure_channel("unix:" + self.sock) as ch:
            return ch.unary_unary("/v1beta1.DevicePlugin/GetDevicePluginOptions",
                                  request_serializer=lambda m: m.SerializeToString(),
                                  response_deserializer=api_pb2.DevicePluginOptions.FromString)(
                api_pb2.Empty(), timeout=timeout)

    def stderr(self):
        self.err.flush()
        with open(self.err.name) as f:
            return f.read()

    def close(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.err.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def run(fn, **kw):
    d = Daemon(**kw)
    try:
        fn(d)
    finally:
        d.close()


def closed_by_server(conn, timeout=5):
    """True when the server closes conn within timeout (EOF or a reset)."""
    deadline = time.monotonic() + timeout
    conn.s.settimeout(0.2)
    while time.monotonic() < deadline:
        _, closed = conn.read_frames()
        if closed:
            return True
    return False


def flood(conn, make, seconds):
    """Sends make(i) batches until the server closes the connection or seconds pass; returns
    how many batches went out."""
    end, i = time.monotonic() + seconds, 0
    try:
        while time.monotonic() < end:
            conn.send(make(i))
            i += 1
    except (BrokenPipeError, ConnectionResetError, OSError):
        pass
    return i


def test_socket_mode_is_0600_under_umask_000():
    def body(d):
        util.check_eq(oct(os.stat(d.sock).st_mode & 0o777), "0o600", "socket mode")
    run(body, umask=0)


def test_settings_announce_the_limits():
    def body(d):
        c = h2.H2Conn(d.sock, timeout=1)
        try:
            c.handshake()
            frames, _ = c.read_frames()
            st = h2.server_settings(frames)
            util.check_eq((st.get(h2.SETTINGS_MAX_CONCURRENT_STREAMS),
                           st.get(h2.SETTINGS_MAX_HEADER_LIST_SIZE)), (16, 8192), "SETTINGS")
        finally:
            c.close()
    run(body)


def test_rapid_reset_is_slowed():
    # HEADERS then RST_STREAM as fast as the socket takes them: past the burst the guard holds
    # each stream back until its token (200 a second), the socket fills, the attacker blocks
    def body(d):
        c = h2.H2Conn(d.sock, timeout=2)
        c.handshake()
        block = h2.header_block(CALL)

        def batch(i):
            out = b""
            for k in range(100):
                sid = 2 * (i * 100 + k) + 1
                out += h2.frame(h2.HEADERS, h2.END_HEADERS, sid, block) + \
                    h2.frame(h2.RST_STREAM, 0, sid, b"\0\0\0\x08")
            return out
        start = time.monotonic()
        sent = flood(c, batch, 8)
        took = time.monotonic() - start
        c.close()
        # 8 s at the rate is ~2000 streams with the burst; what the socket buffers holds more
        if sent * 100 > 400 + 200 * took + 3000:
            raise AssertionError("%d00 streams went out in %.1f s: not held back" % (sent, took))
        d.check_bound("rapid reset")
        d.call()
        deadline = time.monotonic() + 5
        while "slowed 1 connection that opened streams faster than 200 a second" not in d.stderr():
            if time.monotonic() > deadline:
                raise AssertionError("no log line: %r" % d.stderr()[-800:])
            time.sleep(0.1)
    run(body)


def test_streams_just_under_the_rate_on_every_connection():
    # 15 connections, each opening and cancelling 95 streams a second for 4 s: allowed, and
    # the memory stays bounded because gRPC gets no more calls than it can serve
    def body(d):
        conns = []
        for _ in range(MAX_CONNECTIONS - 1):
            c = h2.H2Conn(d.sock)
            c.handshake()
            conns.append(c)
        block = h2.header_block(CALL)
        start = time.monotonic()
        sid = 1
        while time.monotonic() - start < 4:
            for c in conns:
                c.send(h2.frame(h2.HEADERS, h2.END_HEADERS, sid, block) +
                       h2.frame(h2.RST_STREAM, 0, sid, b"\0\0\0\x08"))
            sid += 2
            time.sleep(1 / 95)
        d.check_bound("streams under the rate")
        d.call()
        for c in conns:
            c.close()
    run(body)


def test_continuation_flood_is_closed():
    def body(d):
        c = h2.H2Conn(d.sock)
        c.handshake()
        c.headers(1, h2.header_block(CALL), end_headers=False)
        pad = h2.literal("x-pad", "a" * 4000)
        sent = flood(c, lambda i: h2.frame(h2.CONTINUATION, 0, 1, pad * 4), 5)
        if not closed_by_server(c):
            raise AssertionError("the server kept a CONTINUATION flood open")
        c.close()
        if sent > 64:
            raise AssertionError("%d CONTINUATION frames of 16 KB went out" % sent)
        d.check_bound("CONTINUATION flood")
        d.call()
    run(body)


def test_three_thousand_connections():
    def body(d):
        conns, refused = [], 0
        for _ in range(3000):
            try:
                c = h2.H2Conn(d.sock, timeout=5)
                c.handshake()
                conns.append(c)
            except OSError:
                refused += 1
        time.sleep(1)
        open_ = 0
        for c in conns:
            if not closed_by_server(c, timeout=0.01):
                open_ += 1
        if open_ > MAX_CONNECTIONS:
            raise AssertionError("%d connections stayed open (limit %d)" % (open_, MAX_CONNECTIONS))
        d.check_bound("3000 connections")
        for c in conns:
            c.close()
        deadline = time.monotonic() + 10
        while True:  # the slots free as the server sees the connections end
            try:
                d.call(timeout=2)
                break
            except grpc.RpcError:
                if time.monotonic() > deadline:
                    raise
    run(body)


def test_connection_without_preface_is_closed():
    def body(d):
        c = h2.H2Conn(d.sock)
        c.send(b"PRI * HTTP/2.0\r\n")  # half a preface, then nothing
        if not closed_by_server(c, timeout=15):
            raise AssertionError("a connection without its preface stayed open over 15 s")
        c.close()
    run(body)
