"""gpusched serve's secure port against kube-scheduler v1.37.2's, on one real kube-apiserver
(k8s_util; docs/security.md): both serve HTTPS with a self-signed certificate, check a bearer
token with a TokenReview and a path off --authorization-always-allow-paths with a
SubjectAccessReview. Every case is asked of both, and gpusched must answer it as
kube-scheduler does (status, and the Status' reason and message): no token, a token allowed to
get /metrics, a token without that right, a token the API server does not know, on /metrics,
/healthz, /readyz and a path that exists on neither."""
import json
import os
import socket
import ssl
import urllib.error
import urllib.request

import k8s_util
import util
from k8s_util import wait_for
from serve_util import Serve

NS = "kube-system"
_tmp = k8s_util.tmpdir("k8s-secure-tmp-")
_state = {}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def get(port, path, token=None):
    """(status, Status reason, Status message or the body's first 40 bytes) of GET path"""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    req = urllib.request.Request("https://127.0.0.1:%d%s" % (port, path))
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=20) as r:
            return r.status, None, None
    except urllib.error.HTTPError as e:
        body = e.read().decode(errors="replace")
        try:
            st = json.loads(body)
            return e.code, st.get("reason"), st.get("message")
        except ValueError:
            return e.code, None, body[:40]


def setup():
    if not _state:
        c = k8s_util.cluster("secure")
        c.apply_file("deploy/gpusched/rbac.yaml")
        c.apply([{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                  "metadata": {"name": "metrics-reader"},
                  "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]},
                 {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                  "metadata": {"name": "metrics-reader"},
                  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                              "name": "metrics-reader"},
                  "subjects": [{"kind": "ServiceAccount", "name": "prom", "namespace": "default"}]}])
        c.sa_kubeconfig("default", "prom")
        c.sa_kubeconfig("default", "nosy")
        kp, gp = free_port(), free_port()
        ks = k8s_util.kube_scheduler(c, "--secure-port=%d" % kp, "--bind-address=127.0.0.1",
                                     "--cert-dir=" + os.path.join(_tmp, "ks-certs"))
        sv = Serve(None, ["--secure-port", str(gp), "--bind-address", "127.0.0.1"], _tmp, name="secure",
                   kubeconfig=c.sa_kubeconfig(NS, "gpusched"), wrap=k8s_util.PDEATHSIG)
        def up(port):
            try:
                return get(port, "/healthz")[0] == 200
            except (urllib.error.URLError, ConnectionError):
                return False  # not listening yet
        for port in (kp, gp):
            wait_for("the secure port %d" % port, lambda: up(port), timeout=60)
        _state.update(c=c, ks=ks, sv=sv, ports={"kube-scheduler": kp, "gpusched": gp},
                      tokens={"prom": c.token("default", "prom"), "nosy": c.token("default", "nosy"),
                              "unknown": "not-a-token-the-api-server-knows"})
    return _state


CASES = [
    ("/metrics", None), ("/metrics", "prom"), ("/metrics", "nosy"), ("/metrics", "unknown"),
    ("/healthz", None), ("/healthz", "prom"), ("/healthz", "unknown"), ("/readyz", None),
    ("/livez", None), ("/nothing-here", "prom"), ("/nothing-here", None),
]


def test_answers_as_kube_scheduler_answers():
    s = setup()
    want_seen = set()
    for path, who in CASES:
        tok = s["tokens"].get(who) if who else None
        ks = get(s["ports"]["kube-scheduler"], path, tok)
        gs = get(s["ports"]["gpusched"], path, tok)
        util.check_eq(gs, ks, "GET %s with %s: gpusched against kube-scheduler" % (path, who or "no token"))
        want_seen.add(ks[0])
    # the cases cover what the check can say
    for code in (200, 401, 403):
        if code not in want_seen:
            raise AssertionError("no case answered %d: %s" % (code, sorted(want_seen)))


def test_metrics_for_the_allowed_token_only():
    s = setup()
    port = s["ports"]["gpusched"]
    util.check_eq(get(port, "/metrics", s["tokens"]["prom"])[0], 200, "prom")
    util.check_eq(get(port, "/metrics")[:2], (403, "Forbidden"), "no token")
    util.check_eq(get(port, "/metrics", s["tokens"]["unknown"])[:2], (401, "Unauthorized"), "unknown token")
