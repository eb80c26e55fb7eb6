"""What the tests of gpulabel as a kubelet plugin share (test_deviceplugin.py, test_draplugin.py):
the check that gRPC can be tested, the fake NVML's GPUs, and the node of one case: a temp dir
with the fake NVML's config and event file, the gpulabel processes the case started (stderr
kept in a file each), when asked for, the API server double with the Node, and a subclass's
fake kubelet. close() stops and removes all of it."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import util

A100 = 'name="NVIDIA A100-SXM4-40GB" memory=42949672960 cc=8.0'
WAIT = 20.0
TOKEN = "t0ken"


def grpc_skip(pb2):
    """Why the module cannot run (Debian's python3-grpcio and python3-protobuf, and the
    generated build/gen/python/<pb2>.py), or None; when None, tests/kubelet is importable."""
    try:
        import grpc  # noqa: F401
        import google.protobuf  # noqa: F401
    except ImportError as e:
        return ("needs Debian's python3-grpcio and python3-protobuf under /usr/bin/python3 "
                "(scripts/install-deps): %s" % e)
    if not os.path.exists(os.path.join(util.BUILD, "gen", "python", pb2 + ".py")):
        return "build/gen/python/%s.py is not built (needs protoc: scripts/install-deps)" % pb2
    sys.path.insert(0, os.path.join(util.SRC, "tests", "kubelet"))
    return None


def uuid(i):
    """The UUID the fake NVML gives GPU i."""
    return "GPU-00000000-fa4e-4e00-8000-%012x" % i


def agent_env(**extra):
    """The environment for gpulabel: ours without what would configure it from outside the
    test (GPULABEL_*, NODE_NAME, KUBECONFIG), then extra."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPULABEL_") and k not in ("NODE_NAME", "KUBECONFIG")}
    env.update(extra)
    return env


class Node:
    """A node for one case: self.dir, the fake NVML's config (self.nvml, driver 550.107.02 and
    gpus) and event file (self.events), the processes of spawn()."""

    def __init__(self, prefix, gpus):
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.nvml = os.path.join(self.dir, "nvml.conf")
        with open(self.nvml, "w") as f:
            f.write("driver=550.107.02\ncuda=12040\n" + gpus)
        self.events = os.path.join(self.dir, "events")
        open(self.events, "w").close()
        self.procs = []
        self.api = None
        self.kubelet = None  # a subclass's fake kubelet (start(), stop())

    def spawn(self, argv, env, **popen):
        """Starts argv with stdout discarded and stderr in a file of the node (stderr(p))."""
        err = open(os.path.join(self.dir, "stderr-%d.log" % len(self.procs)), "w+")
        p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=err, **popen)
        p.errfile = err
        self.procs.append(p)
        return p

    def stderr(self, p):
        p.errfile.flush()
        with open(p.errfile.name) as f:
            return f.read()

    def wait_log(self, p, text, timeout=WAIT):
        """Until p's stderr holds text; its stderr then."""
        deadline = time.monotonic() + timeout
        while text not in self.stderr(p):
            if time.monotonic() > deadline:
                raise AssertionError("no %r in the log: %r" % (text, self.stderr(p)[-800:]))
            time.sleep(0.05)
        return self.stderr(p)

    def inject(self, line):
        """A line for the fake NVML's event file (an XID, a GPU lost or back)."""
        with open(self.events, "a") as f:
            f.write(line + "\n")

    def start_api(self, node):
        """The API server double (TLS, token TOKEN) with the Node node, as self.api; the path
        of a kubeconfig for it. close() closes it."""
        from fake_apiserver import FakeApiServer

        self.api = FakeApiServer(tls=True, tokens=[TOKEN]).start()
        self.api.add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}})
        return self.api.write_kubeconfig(os.path.join(self.dir, "kubeconfig"), token=TOKEN)

    def stop(self):
        """SIGTERM to every process still running (SIGKILL after 10 s); may be called again."""
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            p.errfile.close()

    def close(self):
        self.stop()
        if self.kubelet:
            self.kubelet.stop()
        if self.api:
            self.api.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def run(node, fn):
    """fn(node), then node.close() whatever happens."""
    try:
        fn(node)
    finally:
        node.close()
