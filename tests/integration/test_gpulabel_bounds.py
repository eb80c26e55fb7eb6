"""gpulabel --oneshot against an API server that cannot be reached or answers too much
(docs/security.md): one clear first error, a retry bounded by --timeout as a whole, no retry
of what cannot heal (an untrusted certificate), and an answer cap derived from the memory
limit."""
import os
import re
import socket
import subprocess
import tempfile
import time

import util
from fake_apiserver import FakeApiServer


def gpulabel(args, env=None, timeout=60):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("GPULABEL_", "GFD_")) and k not in ("NODE_NAME", "KUBECONFIG", "FAKE_NVML_CONFIG")}
    e.update(env or {})
    argv = [util.binary("gpulabel"), "--nvml-lib", util.fake_nvml()] + list(args)
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=e)


class Blackhole:
    """A listening port whose accept queue is full: connects to it get no answer (SYNs are
    dropped), as with a server behind a firewall that drops packets."""

    def __enter__(self):
        self.s = socket.socket()
        self.s.bind(("127.0.0.1", 0))
        self.s.listen(0)
        self.port = self.s.getsockname()[1]
        self.fill = []
        for _ in range(3):
            c = socket.socket()
            c.setblocking(False)
            try:
                c.connect(("127.0.0.1", self.port))
            except BlockingIOError:
                pass
            self.fill.append(c)
        time.sleep(0.2)
        return self

    def __exit__(self, *exc):
        for c in self.fill:
            c.close()
        self.s.close()


def kubeconfig(server, path):
    with open(path, "w") as f:
        f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: '%s',"
                " insecure-skip-tls-verify: true}\nusers:\n- name: u\n  user: {token: t}\n"
                "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"
                % server)
    return path


def test_unreachable_api_server_gives_up_within_the_budget():
    with Blackhole() as bh, tempfile.TemporaryDirectory() as d:
        kc = kubeconfig("https://127.0.0.1:%d" % bh.port, os.path.join(d, "kc"))
        p = gpulabel(["--oneshot", "--kubeconfig", kc, "--node-name", "n1", "--timeout", "3s"])
    util.check_eq(p.returncode, 1, "exit status")
    err = [l for l in p.stderr.splitlines() if "simulated NVML" not in l]
    # the connect is cut to the budget: one attempt, then the verdict, in the budget's words
    want = (r'^gpulabel: cannot get node "n1": cannot connect to API server https://127\.0\.0\.1:%d: '
            r'no answer within \d+ ms \(gave up after \d+\.\d s and 1 attempt: --timeout 3s\)$' % bh.port)
    if len(err) != 1 or not re.match(want, err[0]):
        raise AssertionError("stderr: %r" % err)


def test_refused_api_server_says_so_first_then_retries_within_the_budget():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now: connection refused
    with tempfile.TemporaryDirectory() as d:
        kc = kubeconfig("https://127.0.0.1:%d" % port, os.path.join(d, "kc"))
        p = gpulabel(["--oneshot", "--kubeconfig", kc, "--node-name", "n1", "--timeout", "3s"])
    util.check_eq(p.returncode, 1, "exit status")
    err = [l for l in p.stderr.splitlines() if "simulated NVML" not in l]
    first = re.match(r'^gpulabel: cannot get node "n1": cannot connect to API server '
                     r'https://127\.0\.0\.1:%d: .*; retrying in \d+ ms, for up to 3s in all \(--timeout\)$'
                     % port, err[0])
    if not first:
        raise AssertionError("first line: %r" % err[0])
    for l in err[1:-1]:
        if not re.match(r"^gpulabel: attempt \d+: .*; retrying in \d+ ms$", l):
            raise AssertionError("retry line: %r" % l)
    if not re.search(r"\(gave up after \d+\.\d s and \d+ attempts: --timeout 3s\)$", err[-1]):
        raise AssertionError("last line: %r" % err[-1])


def test_untrusted_certificate_is_not_retried():
    with FakeApiServer() as api, tempfile.TemporaryDirectory() as d:
        kc = api.write_kubeconfig(os.path.join(d, "kc"), ca=None)  # the system store
        p = gpulabel(["--oneshot", "--kubeconfig", kc, "--node-name", "n1", "--timeout", "20s"])
        util.check_eq(p.returncode, 1, "exit status")
        err = [l for l in p.stderr.splitlines() if "simulated NVML" not in l]
        util.check_eq(len(err), 1, "one line, no retry (%r)" % err)
        if "TLS with API server %s failed" % api.url not in err[0]:
            raise AssertionError(err[0])
        util.check_eq(api.requests, [], "nothing sent over an unverified connection")


def test_help_states_the_budget():
    p = gpulabel(["--help"])
    util.check_eq(p.returncode, 0, "exit status")
    text = " ".join(p.stdout.split())
    for want in ("--timeout DURATION", "--oneshot's whole budget for the API server", "(default 30s)",
                 "--memory-limit QUANTITY"):
        if want not in text:
            raise AssertionError("--help lacks %r" % want)


def test_answer_cap_follows_the_memory_limit():
    """GPULABEL_MEMORY_LIMIT=8Mi (the DaemonSet passes limits.memory through the Downward
    API): an answer may have 2 MiB; a Node of 3 MiB is refused, named with the cap."""
    with FakeApiServer() as api, tempfile.TemporaryDirectory() as d:
        api.add({"apiVersion": "v1", "kind": "Node",
                 "metadata": {"name": "n1", "annotations": {"big": "x" * (3 << 20)}}})
        kc = api.write_kubeconfig(os.path.join(d, "kc"))
        p = gpulabel(["--oneshot", "--kubeconfig", kc, "--node-name", "n1", "--timeout", "5s"],
                     env={"GPULABEL_MEMORY_LIMIT": "8Mi"})
        util.check_eq(p.returncode, 1, "exit status")
        err = [l for l in p.stderr.splitlines() if "simulated NVML" not in l]
        util.check_eq(err, ['gpulabel: cannot get node "n1": GET /api/v1/nodes/n1: response larger '
                            'than 2 MiB'], "stderr")
        p = gpulabel(["--oneshot", "--kubeconfig", kc, "--node-name", "n1", "--timeout", "5s"],
                     env={"GPULABEL_MEMORY_LIMIT": "64Mi"})
        util.check_eq((p.returncode, p.stderr.count("response larger")), (0, 0),
                      "with 64Mi the node fits (%s)" % p.stderr[-300:])


def test_api_status_message_cannot_forge_a_daemon_log_line():
    """The daemon logs a failed sync with the API's Status message, which here carries a line
    break and a klog header: the text writer escapes the break, the forged header stays
    inside the daemon's own line."""
    forged = 'I0101 00:00:00.000000       1 gpulabel] labelled node "gpu-1": forged'
    with FakeApiServer() as api, tempfile.TemporaryDirectory() as d:
        api.add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-1"}})
        api.inject("GET", r"^/api/v1/nodes/gpu-1$", 403, times=None,
                   message="nodes \"gpu-1\" is forbidden\n" + forged)
        kc = api.write_kubeconfig(os.path.join(d, "kc"))
        e = {k: v for k, v in os.environ.items()
             if not k.startswith(("GPULABEL_", "GFD_")) and k not in ("NODE_NAME", "KUBECONFIG")}
        p = subprocess.Popen([util.binary("gpulabel"), "--nvml-lib", util.fake_nvml(), "--kubeconfig", kc,
                              "--node-name", "gpu-1", "--device-plugin=false", "--sleep-interval", "1h"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=e)
        lines = []
        try:
            for line in p.stderr:
                lines.append(line.rstrip("\n"))
                if "is forbidden" in line:
                    break
        finally:
            p.terminate()
            p.wait(10)
        for l in lines:
            if l.startswith("I0101 00:00:00.000000"):
                raise AssertionError("a forged line: %r" % l)
        bad = [l for l in lines if "is forbidden" in l]
        if len(bad) != 1 or "forbidden\\nI0101 00:00:00.000000" not in bad[0]:
            raise AssertionError("the line with the message: %r" % bad)
