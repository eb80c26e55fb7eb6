"""gpusched serve against a hostile or stalled API server (docs/security.md): a list
that stalls does not hold SIGTERM back, a list that never ends is cut at its budget and leaves
nothing behind."""
import signal
import time

import util
from fake_apiserver import FakeApiServer
from serve_util import Serve, node, wait_for


def peak_rss(pid):
    """VmHWM of a live process, in bytes."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM for %d" % pid)


def test_sigterm_during_a_stalled_list():
    """The pods list stalls (the server holds its answer for a minute); SIGTERM ends serve at
    once, not when the request's own 30 s timeout would have."""
    with FakeApiServer() as api:
        api.add(node("n1"))
        api.delay("GET", r"^/api/v1/pods$", 60.0, times=None)
        sv = Serve(api, ["-v", "2"])
        try:
            wait_for("the pods list to be in flight",
                     lambda: any(r["path"] == "/api/v1/pods" for r in list(api.requests)))
            t0 = time.monotonic()
            # well under the page's 30 s timeout: the list is stopped, not waited for
            util.check_eq(sv.stop(signal.SIGTERM, timeout=10), 0, "exit status after SIGTERM")
            print("# serve stopped %.2f s after SIGTERM during a stalled list"
                  % (time.monotonic() - t0))
        finally:
            sv.kill()
            api.clear_faults()


def test_endless_list_is_cut_at_its_budget():
    """A pods list whose pages never end (a new continue token each time, 500 fresh pods of
    about 2 KB a page): with --memory-limit 16Mi one answer may have 4 MiB and the list 16 MiB
    in all; the list fails there, the pods it added are taken back, and the next attempt
    starts over, so the process stays bounded instead of holding every page."""
    with FakeApiServer() as api:
        api.add(node("n1"))
        api.endless(r"^/api/v1/pods$", item_bytes=2000)
        sv = Serve(api, ["-v", "2", "--memory-limit", "16Mi"])
        try:
            wait_for("two failed lists", lambda: sv.count(r"the list is larger than 16 MiB in all") >= 2,
                     timeout=120)
            peak = peak_rss(sv.p.pid)
            pages = sum(1 for r in list(api.requests) if r["path"] == "/api/v1/pods"
                        and "watch" not in r["query"])
            print("# endless list: %d pages served, serve's peak RSS %.1f MiB" % (pages, peak / 2**20))
            if peak > 160 << 20 and not util.sanitized(util.binary("gpusched")):
                raise AssertionError("serve's peak RSS %.1f MiB on a list cut at 16 MiB" % (peak / 2**20))
            util.check_eq(sv.stop(signal.SIGTERM, timeout=10), 0, "exit status after SIGTERM")
        finally:
            sv.kill()
            api.clear_faults()


FORGED = 'I0101 00:00:00.000000       1 serve] "Successfully bound pod to node" pod="default/evil"'


def test_api_status_message_cannot_forge_a_log_line():
    """A Status message with a line break and a klog header after it (the API server, or a
    proxy, repeats what it was sent): the line that carries it quotes it as klog does, and no
    line of serve's log is the forged one."""
    with FakeApiServer() as api:
        api.add(node("n1"))
        api.inject("POST", r"/pods/p1/binding$", 500, times=1,
                   message="internal error\n" + FORGED)
        from serve_util import pod
        api.add(pod("p1"))
        sv = Serve(api, ["-v", "2"])
        try:
            wait_for("the failed bind's line", lambda: sv.grep(r'"Failed to bind pod" pod="default/p1"'))
            line = sv.grep(r'("Failed to bind pod" pod="default/p1".*)')[0]
            if 'err=<' not in line:
                raise AssertionError("the message is not in klog's multi-line form: %r" % line)
            with sv._lock:
                lines = list(sv.lines)
            for l in lines:
                if l.startswith("I0101 00:00:00.000000"):
                    raise AssertionError("a forged line: %r" % l)
            i = next(k for k, l in enumerate(lines) if '"Failed to bind pod"' in l)
            util.check_eq(lines[i + 1:i + 4], ["\tinternal error", "\t" + FORGED, " >"],
                          "the value's lines, each after a tab")
        finally:
            sv.kill()


def https_get(port, path, token=None, timeout=20):
    import ssl
    import urllib.error
    import urllib.request
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    req = urllib.request.Request("https://127.0.0.1:%d%s" % (port, path))
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_secure_port_delegates_authentication_and_authorization():
    """The secure port against the double's TokenReview and SubjectAccessReview: probes need
    nothing, /metrics a token the API server says may get it; the token is never in the
    double's request log; a probe is answered while a review is held up; no plain HTTP port
    unless --metrics-addr asks for one."""
    import json
    import socket
    import threading
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with FakeApiServer() as api:
        api.add(node("n1"))
        api.set_reviews(tokens={"t-prom": {"username": "prom", "groups": ["system:authenticated"]},
                                "t-eve": {"username": "eve", "groups": ["system:authenticated"]},
                                "t-admin": {"username": "root", "groups": ["system:masters"]}},
                        allowed={("prom", "get", "/metrics")})
        sv = Serve(api, ["--secure-port", str(port), "--bind-address", "127.0.0.1"])
        try:
            util.check_eq(https_get(port, "/healthz"), (200, "ok"), "/healthz, no token")
            st, body = https_get(port, "/metrics", "t-prom")
            util.check_eq((st, "# TYPE scheduler_" in body), (200, True), "/metrics for prom")
            util.check_eq(https_get(port, "/metrics", "t-admin")[0], 200, "/metrics for system:masters")
            st, body = https_get(port, "/metrics", "t-eve")
            util.check_eq((st, json.loads(body)["message"]),
                          (403, 'forbidden: User "eve" cannot get path "/metrics"'), "/metrics for eve")
            st, body = https_get(port, "/metrics")
            util.check_eq((st, json.loads(body)["message"]),
                          (403, 'forbidden: User "system:anonymous" cannot get path "/metrics"'),
                          "/metrics, no token")
            util.check_eq(https_get(port, "/metrics", "t-nobody")[0], 401, "an unknown token")
            for r in list(api.requests):
                if "t-prom" in json.dumps(r.get("body")):
                    raise AssertionError("a token in the double's log: %r" % r)
            # a review held up for 3 s: the probe beside it is answered meanwhile
            api.delay("POST", r"/tokenreviews$", 3.0)
            slow = threading.Thread(target=https_get, args=(port, "/metrics", "t-eve2"))
            slow.start()
            import time
            time.sleep(0.3)
            t0 = time.monotonic()
            util.check_eq(https_get(port, "/healthz"), (200, "ok"), "/healthz during a slow review")
            waited = time.monotonic() - t0
            slow.join(20)
            if waited >= 3.0:
                raise AssertionError("the probe waited for the review (%.1f s)" % waited)
            util.check_eq(sv.grep(r"securePort=(\d+)")[0], str(port), "securePort logged")
        finally:
            sv.kill()
            api.clear_faults()
    with FakeApiServer() as api:
        sv = Serve(api, ["--secure-port", "0"])
        try:
            util.check_eq(sv.grep(r"securePort=(\d+)")[0], "0", "no secure port with --secure-port 0")
        finally:
            sv.kill()
