"""End-to-end tests of the REST client (src/kube/client.c, kubeconfig.c) through
build/kube-request against the API server double: TLS verification, token and certificate
auth, in-cluster token rotation, Status parsing, transport errors, watches, rate limit and the
connection pool."""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile

import util
from fake_apiserver import FakeApiServer

TOKEN = "test-token"
TOOL = util.binary("kube-request")
_api = None
_tmp = tempfile.mkdtemp(prefix="client-test-")


def api():
    global _api
    if _api is None:
        _api = FakeApiServer(tls=True, tokens=[TOKEN]).start()
    _api.reset(tokens=[TOKEN])
    return _api


def kubeconfig(a, name="kc", **kw):
    return a.write_kubeconfig(os.path.join(_tmp, name), **kw)


def clean_env(**extra):
    """An environment without ambient Kubernetes settings."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT",
                        "GPULABEL_SA_DIR")}
    env["HOME"] = _tmp
    env.update(extra)
    return env


def tool(*args, env=None, timeout=60, input=None):
    return subprocess.run([TOOL] + list(args), capture_output=True, text=True, timeout=timeout,
                          env=env or clean_env(), input=input)


def parse_error(out):
    """The ERROR line of kube-request as a dict."""
    m = re.search(r"^ERROR code=(-?\d+) http=(\d+) reason=(\S+) retry_after=(-?\d+) transient=(\d) msg=(.*)$",
                  out, re.M)
    if not m:
        raise AssertionError("no ERROR line in %r" % out)
    return {"code": int(m.group(1)), "http": int(m.group(2)), "reason": m.group(3),
            "retry_after": int(m.group(4)), "transient": m.group(5) == "1", "msg": m.group(6)}


def eq(got, want, what="value"):
    if got != want:
        raise AssertionError("%s: got %r, want %r" % (what, got, want))


def node(name, labels=None):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}}}


def status_and_body(out):
    lines = out.splitlines()
    st = [l for l in lines if l.startswith("STATUS ")]
    body = lines[lines.index(st[0]) + 1] if st and lines.index(st[0]) + 1 < len(lines) else ""
    return int(st[0].split()[1]), (json.loads(body) if body else None)


# ---- TLS and credentials --------------------------------------------------------------------

def test_get_with_token_and_ca_data():
    a = api()
    a.add(node("gpu-1", {"x": "1"}))
    p = tool("--kubeconfig", kubeconfig(a), "GET", "/api/v1/nodes/gpu-1")
    eq(p.returncode, 0, "exit (%s)" % p.stderr)
    st, body = status_and_body(p.stdout)
    eq((st, body["metadata"]["labels"]), (200, {"x": "1"}), "answer")
    r = a.requests[-1]
    eq((r["method"], r["path"], r["authenticated"], r["user_agent"]),
       ("GET", "/api/v1/nodes/gpu-1", True, "kube-request/test"), "request seen by the server")


def test_ca_file_and_client_certificate():
    a = api()
    p = tool("--kubeconfig", kubeconfig(a, ca="file", token=None, client_cert=True), "GET", "/api/v1/nodes")
    eq(p.returncode, 0, "exit (%s)" % p.stdout)
    eq(status_and_body(p.stdout)[0], 200, "status")


def test_tls_verification_fails_with_wrong_ca():
    a = api()
    other = FakeApiServer(tls=True)
    try:
        kc = kubeconfig(a, "kc-wrong-ca")
        text = open(kc).read()
        import base64
        wrong = base64.b64encode(other.ca_pem()).decode()
        text = re.sub(r"certificate-authority-data: \S+", "certificate-authority-data: " + wrong, text)
        open(kc, "w").write(text)
        p = tool("--kubeconfig", kc, "GET", "/api/v1/nodes")
        eq(p.returncode, 1, "exit")
        e = parse_error(p.stdout)
        eq((e["code"], e["http"], e["transient"]), (-129, 0, False), "EKEYREJECTED, not retried")
        if "TLS with API server https://127.0.0.1:%d failed" % a.port not in e["msg"]:
            raise AssertionError(e["msg"])
        if a.requests:
            raise AssertionError("a request got through an unverified connection")
    finally:
        other.close()


def test_tls_system_store_rejects_private_ca():
    a = api()
    p = tool("--kubeconfig", kubeconfig(a, "kc-noca", ca=None), "GET", "/api/v1/nodes")
    eq(parse_error(p.stdout)["code"], -129, "no CA configured: system store does not trust the double")


def test_insecure_skip_tls_verify():
    a = api()
    p = tool("--kubeconfig", kubeconfig(a, "kc-insecure", ca=None, insecure=True), "GET", "/api/v1/nodes")
    eq(status_and_body(p.stdout)[0], 200, "insecure works")


def test_tls_server_name():
    a = api()
    kc = kubeconfig(a, "kc-sni")
    text = open(kc).read()
    good = text.replace("    server:", "    tls-server-name: kubernetes.default.svc\n    server:")
    bad = text.replace("    server:", "    tls-server-name: wrong.example\n    server:")
    open(kc, "w").write(good)
    eq(status_and_body(tool("--kubeconfig", kc, "GET", "/api/v1/nodes").stdout)[0], 200, "SAN name")
    open(kc, "w").write(bad)
    eq(parse_error(tool("--kubeconfig", kc, "GET", "/api/v1/nodes").stdout)["code"], -129, "wrong name")


def test_wrong_token_401_not_retried_and_not_printed():
    a = api()
    p = tool("--kubeconfig", kubeconfig(a, "kc-bad", token="not-the-token-xyz"), "GET", "/api/v1/nodes")
    e = parse_error(p.stdout)
    eq((e["code"], e["http"], e["reason"], e["msg"], e["transient"]),
       (-13, 401, "Unauthorized", "Unauthorized", False), "401")
    eq(len(a.requests), 1, "a static token is not retried")
    if "not-the-token-xyz" in p.stdout + p.stderr:
        raise AssertionError("token printed")


def test_kubeconfig_errors_reach_the_user():
    kc = os.path.join(_tmp, "kc-exec")
    with open(kc, "w") as f:
        f.write("clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
                "users:\n- name: u\n  user:\n    exec: {command: aws}\n"
                "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n")
    p = tool("--kubeconfig", kc, "GET", "/api/v1/nodes")
    eq(p.returncode, 1, "exit")
    eq(parse_error(p.stdout)["msg"], "cannot read kubeconfig '%s': line 5: users[0].user.exec: apiVersion "
       "must be specified" % kc, "message")
    p = tool("--kubeconfig", kc, "--context", "nope", "GET", "/api/v1/nodes")
    eq(parse_error(p.stdout)["msg"], "cannot read kubeconfig '%s': context \"nope\" not found" % kc, "context")


# ---- in-cluster and token rotation ----------------------------------------------------------

def sa_dir(a, token):
    d = tempfile.mkdtemp(dir=_tmp, prefix="sa-")
    shutil.copy(a.ca_file, os.path.join(d, "ca.crt"))
    with open(os.path.join(d, "token"), "w") as f:
        f.write(token + "\n")
    return d


def in_cluster_env(a, d):
    return clean_env(KUBERNETES_SERVICE_HOST="127.0.0.1", KUBERNETES_SERVICE_PORT=str(a.port),
                     GPULABEL_SA_DIR=d)


def run_twice(env, between, *extra):
    """kube-request sending GET /api/v1/nodes twice, calling between() in the middle: the
    first answer's line, then the rest of the output and the standard error."""
    p = subprocess.Popen([TOOL, "--repeat", "2", "--wait-stdin"] + list(extra) + ["GET", "/api/v1/nodes"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env)
    try:
        first = p.stdout.readline()
        between()
        out, err = p.communicate("go\n", timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    return first.strip(), out.strip(), err


def token_rotated_after_401(prefix, *extra):
    """The in-cluster token file rotated between two requests of kube-request (extra: its
    flags): the first answered with the mounted token, the second after a 401 and a re-read,
    the token never printed."""
    a = api()
    a.set_tokens(prefix + "-1")
    d = sa_dir(a, prefix + "-1")

    def rotate():
        # the kubelet rotates the projected token; the old one stops working at once
        with open(os.path.join(d, "token.tmp"), "w") as f:
            f.write(prefix + "-2\n")
        os.rename(os.path.join(d, "token.tmp"), os.path.join(d, "token"))
        a.set_tokens(prefix + "-2")
    first, second, err = run_twice(in_cluster_env(a, d), rotate, *extra)
    eq(first, "STATUS 200", "first request with the mounted token")
    eq(second, "STATUS 200", "second request succeeds after re-reading the token (%s)" % err)
    eq([r["authenticated"] for r in a.requests], [True, False, True], "401 then one retry")
    if prefix in second + err:
        raise AssertionError("token printed")


def test_in_cluster_token_rotation_reread_after_401():
    token_rotated_after_401("sa-token")


def test_token_file_reread_periodically():
    import time
    a = api()
    a.set_tokens("p-1")
    d = sa_dir(a, "p-1")

    def rotate():
        with open(os.path.join(d, "token"), "w") as f:
            f.write("p-2\n")
        a.set_tokens("p-1", "p-2")
        time.sleep(0.4)  # longer than the refresh period below
        a.set_tokens("p-2")
    first, second, _ = run_twice(in_cluster_env(a, d), rotate, "--token-refresh-ms", "200")
    eq((first, second), ("STATUS 200", "STATUS 200"), "both requests")
    eq([r["authenticated"] for r in a.requests], [True, True], "the new token was read before any 401")


def test_ca_file_reread_periodically():
    import time
    a = api()
    other = FakeApiServer(tls=True)
    try:
        d = sa_dir(a, TOKEN)
        shutil.copy(other.ca_file, os.path.join(d, "ca.crt"))  # not (yet) the server's CA

        def rotate():
            shutil.copy(a.ca_file, os.path.join(d, "ca.crt"))
            time.sleep(0.4)
        first, second, _ = run_twice(in_cluster_env(a, d), rotate, "--ca-refresh-ms", "200")
    finally:
        other.close()
    eq(parse_error(first)["code"], -129, "first request: TLS fails with the old CA")
    eq(second, "STATUS 200", "second request trusts the rotated CA")


def test_in_cluster_ipv6_server_and_missing_token():
    a = api()
    d = sa_dir(a, TOKEN)
    os.remove(os.path.join(d, "token"))
    p = tool("GET", "/api/v1/nodes", env=in_cluster_env(a, d))
    e = parse_error(p.stdout)
    if "in-cluster service account: cannot read token file '%s/token'" % d not in e["msg"]:
        raise AssertionError(e["msg"])
    env = in_cluster_env(a, sa_dir(a, TOKEN))
    env["KUBERNETES_SERVICE_HOST"] = "::1"
    p = tool("GET", "/api/v1/nodes", env=env)
    # the double listens on 127.0.0.1 only: the client must have dialled https://[::1]:PORT
    e = parse_error(p.stdout)
    if "https://[::1]:%d" % a.port not in e["msg"]:
        raise AssertionError(e["msg"])


def test_namespace_resolution():
    a = api()
    p = tool("--kubeconfig", kubeconfig(a, "kc-ns", namespace="gpu-jobs"), "--print-config")
    eq(p.stdout.splitlines(), ["SERVER " + a.url, "NAMESPACE gpu-jobs"], "kubeconfig context namespace")
    d = sa_dir(a, TOKEN)
    with open(os.path.join(d, "namespace"), "w") as f:
        f.write("gpu-system\n")
    p = tool("--print-config", env=in_cluster_env(a, d))
    eq(p.stdout.splitlines()[1], "NAMESPACE gpu-system", "service account namespace file")
    env = in_cluster_env(a, d)
    env["POD_NAMESPACE"] = "from-env"
    eq(tool("--print-config", env=env).stdout.splitlines()[1], "NAMESPACE from-env", "POD_NAMESPACE first")


def test_request_without_response_struct_is_fine():
    a = api()
    a.add(node("gpu-1"))
    p = tool("--kubeconfig", kubeconfig(a), "--discard", "--repeat", "2", "GET", "/api/v1/nodes/gpu-1")
    eq(p.stdout.splitlines(), ["DONE", "DONE"], "answers dropped")
    p = tool("--kubeconfig", kubeconfig(a), "--discard", "--repeat", "2", "GET", "/api/v1/nodes/nope")
    eq(parse_error(p.stdout)["http"], 404, "errors still reported")


def test_in_cluster_over_ipv6():
    with FakeApiServer(tls=True, tokens=["v6-token"], host="::1") as a:
        a.add(node("gpu-6"))
        env = in_cluster_env(a, sa_dir(a, "v6-token"))
        env["KUBERNETES_SERVICE_HOST"] = "::1"
        p = tool("GET", "/api/v1/nodes/gpu-6", env=env)
        eq(status_and_body(p.stdout)[0], 200, "GET over https://[::1] (%s)" % p.stdout)


def test_disable_compression():
    a = api()
    for i in range(300):
        a.add(node("node-%04d" % i, {"k%d" % j: "v" * 60 for j in range(8)}))
    kc = kubeconfig(a, "kc-nozip")
    text = open(kc).read().replace("    server:", "    disable-compression: true\n    server:")
    open(kc, "w").write(text)
    eq(status_and_body(tool("--kubeconfig", kc, "GET", "/api/v1/nodes").stdout)[0], 200, "list")
    eq(a.requests[-1]["gzip"], False, "not compressed")


# ---- a list read as it arrives (kube_client_get_stream) --------------------------------------

def stream(kc, batch, path, env=None):
    """(parts, error) of kube-request --stream: the parts' documents, or the ERROR line."""
    p = tool("--kubeconfig", kc, "--stream", str(batch), path, env=env)
    if "ERROR" in p.stdout:
        return None, parse_error(p.stdout)
    lines = p.stdout.splitlines()
    if not lines:
        raise AssertionError("kube-request --stream: rc %d %s" % (p.returncode, p.stderr + p.stdout[-1500:]))
    eq(lines[-1], "END parts=%d" % (len(lines) // 2), "parts announced")
    return [json.loads(l) for l in lines[1:-1:2]], None


def test_stream_splits_a_list_into_parts():
    """Items full of what the splitter must not take for structure (quotes, backslashes,
    brackets, commas inside strings; escapes across read boundaries in a body of a few hundred
    KiB), members after the items, blanks between tokens: the parts hold the same items, a
    batch at most, each with the list's members, and no managedFields."""
    import random
    rnd = random.Random(7)
    alphabet = ['"', '\\', '{', '}', '[', ']', ',', ':', 'a', 'z', ' ', '\n', '\u00e9', '\u2028', '/']
    items = []
    for i in range(301):
        s = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 900)))
        items.append({"metadata": {"name": "x%d" % i, "annotations": {"a\"{": s},
                                   "managedFields": [{"manager": "m", "fieldsV1": {"f:x": {"{": s[:40]}}}]},
                      "spec": {"list": [1, 2.5, None, True, [], {}], "s": s[::-1]}})
    body = {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "9", "continue": "tok"},
            "items": items, "after": {"x": "]}"}}
    a = api()
    kc = kubeconfig(a)
    want = [dict(it, metadata={k: v for k, v in it["metadata"].items() if k != "managedFields"})
            for it in items]
    # compact as kube-apiserver writes, blanks after separators, indented as ?pretty=true
    for sep in ((",", ":"), (", ", ": "), None):
        raw = (json.dumps(body, indent=2) if sep is None else
               json.dumps(body, separators=sep, ensure_ascii=(sep[0] == ", "))).encode()
        for batch in (1, 50, 301, 1000):
            a.inject("GET", "^/api/v1/pods$", 200, raw=raw)
            parts, err = stream(kc, batch, "/api/v1/pods")
            eq(err, None, "error")
            eq(len(parts), -(-301 // batch) + (301 % batch == 0), "parts of %d" % batch)
            got = [it for p in parts for it in p["items"]]
            eq(got == want, True, "items of batches of %d (sep %r)" % (batch, sep))
            eq({p["metadata"]["continue"] for p in parts}, {"tok"}, "metadata in every part")
            eq([p.get("after") for p in parts], [None] * (len(parts) - 1) + [{"x": "]}"}],
               "members after the items in the last part")


def test_stream_answers_that_are_not_lists():
    a = api()
    kc = kubeconfig(a)
    a.add(node("gpu-1"))
    parts, err = stream(kc, 10, "/api/v1/nodes/gpu-1")
    eq((len(parts), parts[0]["metadata"]["name"]), (1, "gpu-1"), "an object is one part")
    parts, err = stream(kc, 10, "/api/v1/nodes")
    eq([len(p["items"]) for p in parts], [1], "a list of one")
    a.reset(tokens=[TOKEN])
    parts, err = stream(kc, 10, "/api/v1/nodes")
    eq([p["items"] for p in parts], [[]], "an empty list")
    for raw, msg in ((b'{"items":[{"a":1},2]}', "GET /api/v1/nodes: a list item is not an object"),
                     (b'{"items":[{"a":1},"x"]}', "GET /api/v1/nodes: a list item is not an object"),
                     (b'{"items":[{"a":1},{"b":', "GET /api/v1/nodes: the answer is not JSON: it ends too soon"),
                     (b'{"items":[{"a":1}],"x":tru}', None)):
        a.inject("GET", "^/api/v1/nodes$", 200, raw=raw)
        parts, err = stream(kc, 1, "/api/v1/nodes")
        if err is None:
            raise AssertionError("%r: no error" % raw)
        eq(err["code"], -71, "EPROTO for %r" % raw)
        if msg:
            eq(err["msg"], msg, "message for %r" % raw)
    a.inject("GET", "^/api/v1/nodes$", 403, message="no")
    parts, err = stream(kc, 1, "/api/v1/nodes")
    eq((err["http"], err["msg"]), (403, "no"), "a Status answer")


def test_stream_compressed():
    a = api()
    for i in range(300):
        a.add(node("node-%04d" % i, {"k%d" % j: "v" * 60 for j in range(8)}))
    parts, err = stream(kubeconfig(a), 120, "/api/v1/nodes")
    eq([len(p["items"]) for p in parts], [120, 120, 60], "parts")
    eq(a.requests[-1]["gzip"], True, "compressed")


# ---- Status and transport errors ------------------------------------------------------------

def test_status_parsing():
    a = api()
    kc = kubeconfig(a)
    e = parse_error(tool("--kubeconfig", kc, "GET", "/api/v1/nodes/gpu-9").stdout)
    eq((e["code"], e["http"], e["reason"], e["msg"], e["transient"]),
       (-2, 404, "NotFound", 'nodes "gpu-9" not found', False), "404")
    a.inject("GET", "nodes", 429, retry_after=3)
    e = parse_error(tool("--kubeconfig", kc, "GET", "/api/v1/nodes").stdout)
    eq((e["http"], e["reason"], e["retry_after"], e["transient"]), (429, "TooManyRequests", 3, True), "429")
    a.inject("GET", "nodes", 503, message="etcd is down")
    e = parse_error(tool("--kubeconfig", kc, "GET", "/api/v1/nodes").stdout)
    eq((e["http"], e["reason"], e["msg"], e["retry_after"], e["transient"]),
       (503, "ServiceUnavailable", "etcd is down", -1, True), "503")
    a.add(node("gpu-1"))
    a.forbid("patch", "nodes")
    e = parse_error(tool("--kubeconfig", kc, "PATCH", "/api/v1/nodes/gpu-1", '{"metadata":{}}').stdout)
    eq((e["code"], e["http"], e["reason"], e["transient"]), (-1, 403, "Forbidden", False), "403")
    eq(e["msg"], 'nodes "gpu-1" is forbidden: User "system:serviceaccount:gpu:labeler" cannot patch '
       'resource "nodes" in API group "" at the cluster scope', "403 message")
    a.allow("patch", "nodes")
    stale = '{"metadata":{"resourceVersion":"1","labels":{"a":"b"}}}'
    e = parse_error(tool("--kubeconfig", kc, "PATCH", "/api/v1/nodes/gpu-1", stale).stdout)
    eq((e["code"], e["http"], e["reason"], e["transient"]), (-16, 409, "Conflict", True), "409")
    e = parse_error(tool("--kubeconfig", kc, "--content-type", "application/json-patch+json", "PATCH",
                         "/api/v1/nodes/gpu-1", '[{"op":"remove","path":"/metadata/labels/zz"}]').stdout)
    eq((e["code"], e["http"], e["reason"]), (-22, 422, "Invalid"), "422")


def test_writes_roundtrip():
    a = api()
    kc = kubeconfig(a)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "job-0"},
           "spec": {"containers": [{"name": "c", "image": "x"}]}}
    p = tool("--kubeconfig", kc, "POST", "/api/v1/namespaces/default/pods", json.dumps(pod))
    eq(status_and_body(p.stdout)[0], 201, "create")
    eq(a.requests[-1]["content_type"], "application/json", "content type")
    b = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "job-0"},
         "target": {"kind": "Node", "name": "gpu-1"}}
    p = tool("--kubeconfig", kc, "POST", "/api/v1/namespaces/default/pods/job-0/binding", json.dumps(b))
    eq(status_and_body(p.stdout), (201, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                         "status": "Success", "code": 201}), "bind")
    e = parse_error(tool("--kubeconfig", kc, "POST", "/api/v1/namespaces/default/pods/job-0/binding",
                         json.dumps(b)).stdout)
    eq((e["http"], e["msg"]), (409, 'Operation cannot be fulfilled on pods/binding "job-0": pod job-0 is '
                               'already assigned to node "gpu-1"'), "bound twice")
    p = tool("--kubeconfig", kc, "DELETE", "/api/v1/namespaces/default/pods/job-0")
    eq(status_and_body(p.stdout)[0], 200, "delete")
    eq(a.get("pods", "job-0"), None, "gone")


def test_connection_refused():
    a = FakeApiServer(tls=False, tokens=None).start()
    kc = a.write_kubeconfig(os.path.join(_tmp, "kc-refused"), token="x")
    port = a.port
    a.close()
    e = parse_error(tool("--kubeconfig", kc, "GET", "/api/v1/nodes").stdout)
    eq((e["code"], e["http"], e["transient"]), (-111, 0, True), "ECONNREFUSED")
    if "cannot connect to API server http://127.0.0.1:%d" % port not in e["msg"]:
        raise AssertionError(e["msg"])
    # kube_async: every request gets the error, none is lost
    p = tool("--kubeconfig", kc, "--repeat", "8", "--async", "4", "POST", "/api/v1/namespaces/default/events", "{}")
    errs = [parse_error(l) for l in p.stdout.splitlines() if l.startswith("ERROR ")]
    eq((p.returncode, len(errs)), (1, 8), "eight failures (%s)" % p.stdout)
    eq({(e["code"], e["transient"]) for e in errs}, {(-111, True)}, "ECONNREFUSED each")
    if any("cannot connect to API server http://127.0.0.1:%d" % port not in e["msg"] for e in errs):
        raise AssertionError(errs)


def test_timeout_and_dropped_connection():
    a = api()
    kc = kubeconfig(a)
    a.delay("GET", "nodes", 3)
    e = parse_error(tool("--kubeconfig", kc, "--timeout-ms", "300", "GET", "/api/v1/nodes").stdout)
    eq((e["code"], e["transient"]), (-110, True), "ETIMEDOUT")
    if "GET /api/v1/nodes on https://127.0.0.1:%d timed out after 300 ms" % a.port not in e["msg"]:
        raise AssertionError(e["msg"])
    a.inject("GET", "nodes", 0)
    e = parse_error(tool("--kubeconfig", kc, "GET", "/api/v1/nodes").stdout)
    eq((e["code"], e["http"], e["transient"]), (-104, 0, True), "ECONNRESET")


# ---- pool and rate limit --------------------------------------------------------------------

def test_threads_share_a_pool_of_kept_alive_connections():
    a = api()
    p = tool("--kubeconfig", kubeconfig(a), "--threads", "4", "--repeat", "120", "GET", "/api/v1/nodes")
    eq(p.returncode, 0, "exit (%s)" % p.stderr)
    eq(p.stdout.count("STATUS 200"), 120, "answers")
    peers = {r["peer"] for r in a.requests}
    if len(peers) > 4:
        raise AssertionError("%d connections for 4 threads: keep-alive not reused" % len(peers))


def test_rate_limit_not_exceeded():
    import time
    a = api()
    qps, burst, n = 20.0, 3, 15
    kc = kubeconfig(a)
    start = time.monotonic()  # the same clock as the double's request log
    p = tool("--kubeconfig", kc, "--qps", str(qps), "--burst", str(burst), "--threads", "3",
             "--repeat", str(n), "GET", "/api/v1/nodes")
    eq(p.stdout.count("STATUS 200"), n, "answers")
    times = sorted(r["time"] for r in a.requests)
    # a token bucket that starts full releases request k (0-based) no earlier than
    # (k - burst + 1) / qps after the first one, which itself comes after `start`
    for k, t in enumerate(times):
        earliest = (k - burst + 1) / qps
        if t - start < earliest - 0.005:
            raise AssertionError("request %d arrived %.3f s after start, limiter allows %.3f s"
                                 % (k, t - start, earliest))


def run_held(a, n, *args):
    """kube-request with args while the double holds every GET of nodes: once n requests are
    held (20 s at the most) and half a second more, p.held is how many are, then the holds
    end. The finished process."""
    import time
    a.hold("GET", "^/api/v1/nodes$")
    p = subprocess.Popen([TOOL] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=clean_env())
    try:
        if not a.wait_held(n):
            raise AssertionError("%d requests held: want %d" % (a.held(), n))
        time.sleep(0.5)  # others, if the client lets them go, come meanwhile
        held = a.held()
    finally:
        a.release()
    p.out, p.err = p.communicate(timeout=60)
    p.held = held
    return p


def test_max_connections_one_request_at_a_time():
    # kube_client_opts.max_connections = 1 (gpulabel's): four threads' requests wait for each
    # other and all complete, on one connection. The double holds the answers: without the
    # limit the four are at the server at once (which shows the test could see it).
    a = api()
    kc = kubeconfig(a)
    p = run_held(a, 4, "--kubeconfig", kc, "--threads", "4", "--repeat", "4", "GET",
                 "/api/v1/nodes")
    eq((p.returncode, p.out.count("STATUS 200"), p.held), (0, 4, 4), "without a limit: " + p.err)
    a.reset(tokens=[TOKEN])
    p = run_held(a, 1, "--kubeconfig", kc, "--max-connections", "1", "--threads", "4",
                 "--repeat", "12", "GET", "/api/v1/nodes")
    eq((p.returncode, p.out.count("STATUS 200"), p.held), (0, 12, 1), "one at a time: " + p.err)
    eq(a.max_in_flight, 1, "requests at the server at once")
    eq(len({r["peer"] for r in a.requests}), 1, "connections")
    eq(len(a.requests), 12, "requests")


def test_max_connections_retry_after_wait_gives_the_connection_up():
    # A 429 with Retry-After: the request that got it waits without holding the one
    # connection (client.h), so the other thread's request is answered meanwhile, on the same
    # connection; then the first is sent again and answered.
    a = api()
    wait = 5
    a.inject("GET", "^/api/v1/nodes$", 429, times=1, retry_after=wait)
    p = tool("--kubeconfig", kubeconfig(a), "--max-connections", "1", "--max-retries", "1",
             "--threads", "2", "--repeat", "2", "GET", "/api/v1/nodes")
    eq((p.returncode, p.stdout.count("STATUS 200")), (0, 2), "answers (%s)" % p.stderr)
    t = [r["time"] for r in a.requests]
    eq(len(t), 3, "requests: the 429, the other thread's, the retry")
    eq(len({r["peer"] for r in a.requests}), 1, "connections")
    eq(a.max_in_flight, 1, "requests at the server at once")
    # held through the wait, the connection would let the other request go only after the
    # retry, wait seconds after the 429 (the other thread is waiting for it from the start)
    if not t[1] - t[0] < wait:
        raise AssertionError("the other request came %.2f s after the 429 (Retry-After: %d): "
                             "the wait held the connection" % (t[1] - t[0], wait))
    if not t[2] - t[0] >= wait - 0.05:
        raise AssertionError("retried %.2f s after a Retry-After: %d" % (t[2] - t[0], wait))


# ---- watch ----------------------------------------------------------------------------------

def start_watch(a, path, *extra, env=None):
    p = subprocess.Popen([TOOL, "--kubeconfig", kubeconfig(a, "kc-watch")] + list(extra) + ["--watch", path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env or clean_env())
    # The first line is read from the pipe itself, one byte at a time: p.stdout.readline()
    # would buffer what follows it (a fast 403's ERROR line comes in the same read when the
    # tool has already exited), and communicate() reads the pipe, not that buffer, so the
    # line would be lost.
    line = b""
    while not line.endswith(b"\n"):
        ch = os.read(p.stdout.fileno(), 1)
        if not ch:
            break
        line += ch
    eq(line.decode().strip(), "WATCHING", "tool started")
    return p


def wait_for_watch(a, n=1):
    import time
    end = time.monotonic() + 20
    while time.monotonic() < end:
        if sum(1 for r in a.requests if r["query"].get("watch") == "1") >= n:
            return
        time.sleep(0.02)
    raise AssertionError("watch request never arrived")


def test_watch_streams_events_and_stops_on_signal():
    a = api()
    a.add(node("a"))
    p = start_watch(a, "/api/v1/nodes?watch=1&resourceVersion=%d&allowWatchBookmarks=true" % a.resource_version)
    try:
        wait_for_watch(a)
        a.add(node("b"))
        a.add(node("a", {"x": "1"}))
        a.delete("nodes", "b")
        got = [p.stdout.readline().split()[:3] for _ in range(3)]
        eq(got, [["EVENT", "ADDED", "b"], ["EVENT", "MODIFIED", "a"], ["EVENT", "DELETED", "b"]], "events")
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=15)
    finally:
        if p.poll() is None:
            p.kill()
    eq(p.returncode, 0, "exit (%s)" % err)
    if "STOPPED rc=0" not in out:
        raise AssertionError("no STOPPED line: %r" % out)


def test_watch_callback_stops_stream():
    a = api()
    for n in ("a", "b", "c"):
        a.add(node(n))
    p = start_watch(a, "/api/v1/nodes?watch=1", "--max-events", "2")
    out, _ = p.communicate(timeout=30)
    eq(out.splitlines()[-1], "STOPPED rc=7 events=2", "callback's value returned")


def test_watch_expired_rv_error_event():
    a = api()
    a.add(node("a"))
    old = a.resource_version
    a.add(node("b"))
    a.compact()
    p = start_watch(a, "/api/v1/nodes?watch=1&resourceVersion=%d" % old)
    out, _ = p.communicate(timeout=30)
    eq(out.splitlines(), ["EVENT ERROR 410 Expired", "ENDED rc=0 events=1"], "410 as an event")


def test_watch_http_error_and_timeout_end():
    a = api()
    a.forbid("watch", "nodes")
    p = start_watch(a, "/api/v1/nodes?watch=1")
    out, err = p.communicate(timeout=30)
    if "ERROR" not in out:
        raise AssertionError("exit %s, stdout %r, stderr %r" % (p.returncode, out, err))
    e = parse_error(out)
    eq((e["http"], e["reason"]), (403, "Forbidden"), "watch denied")
    a.allow("watch", "nodes")
    p = start_watch(a, "/api/v1/nodes?watch=1&timeoutSeconds=1&resourceVersion=%d" % a.resource_version)
    out, _ = p.communicate(timeout=30)
    eq(out.splitlines()[-1], "ENDED rc=0 events=0", "server-side timeout ends the watch cleanly")


def test_watch_survives_restart_as_transport_end():
    a = api()
    p = start_watch(a, "/api/v1/nodes?watch=1&resourceVersion=%d" % a.resource_version)
    try:
        wait_for_watch(a)
        a.restart()
        out, _ = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    # the double closes the stream cleanly (last chunk) or drops it: both end the call
    if not ("ENDED" in out or "ERROR" in out):
        raise AssertionError(out)


def test_watch_401_rereads_token():
    a = api()
    a.set_tokens("w-1")
    d = sa_dir(a, "w-2")  # the file already holds the new token; the server only takes it
    a.set_tokens("w-2")
    env = in_cluster_env(a, d)
    with open(os.path.join(d, "token"), "w") as f:
        f.write("w-2\n")
    p = subprocess.Popen([TOOL, "--watch", "/api/v1/nodes?watch=1&timeoutSeconds=1"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    out, err = p.communicate(timeout=30)
    eq(out.splitlines()[-1], "ENDED rc=0 events=0", "watch ran (%s)" % err)


def test_watch_malformed_event():
    a = api()
    a.inject("GET", "nodes", 200, raw=b'{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{not json\n')
    p = start_watch(a, "/api/v1/nodes?watch=1")
    out, _ = p.communicate(timeout=30)
    eq(out.splitlines()[0], "EVENT ADDED a -", "the good event first")
    e = parse_error(out)
    eq((e["code"], e["http"]), (-71, 0), "EPROTO")
    if not e["msg"].startswith("malformed watch event: "):
        raise AssertionError(e["msg"])


def test_large_list_gzip_and_non_json_error_body():
    a = api()
    for i in range(400):
        a.add(node("node-%04d" % i, {"k%d" % j: "v" * 40 for j in range(8)}))
    p = tool("--kubeconfig", kubeconfig(a), "GET", "/api/v1/nodes")
    st, body = status_and_body(p.stdout)
    eq((st, len(body["items"])), (200, 400), "decoded list")
    eq(a.requests[-1]["gzip"], True, "answer was compressed on the wire")
    a.inject("GET", "nodes", 502, raw=b"<html>bad gateway</html>")
    e = parse_error(tool("--kubeconfig", kubeconfig(a), "GET", "/api/v1/nodes").stdout)
    eq((e["code"], e["http"], e["reason"], e["transient"]), (-5, 502, "-", True), "502 from a proxy")
    eq(e["msg"], "HTTP 502 from the API server: <html>bad gateway</html>", "message")


# ---- asynchronous requests (src/kube/async.c) ----------------------------------------------

def statuses(out):
    return [int(l.split()[1]) for l in out.splitlines() if l.startswith("STATUS ")]


def test_async_requests_share_kept_alive_connections():
    a = api()
    p = tool("--kubeconfig", kubeconfig(a), "--repeat", "120", "--async", "4", "GET", "/api/v1/nodes")
    eq(p.returncode, 0, "exit (%s)" % p.stderr)
    eq(statuses(p.stdout), [200] * 120, "answers")
    peers = {r["peer"] for r in a.requests}
    if len(peers) > 4:
        raise AssertionError("%d connections for 4 requests in flight: keep-alive not reused" % len(peers))
    eq({(r["authenticated"], r["user_agent"]) for r in a.requests}, {(True, "kube-request/test")},
       "token and user agent on every request")


def test_async_methods_and_bodies_on_one_reused_connection():
    a = api()
    kc = kubeconfig(a)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "job-a"},
           "spec": {"containers": [{"name": "c", "image": "x"}]}}
    b = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "job-a"},
         "target": {"kind": "Node", "name": "gpu-1"}}
    patch = '{"metadata":{"labels":{"l":"v"}}}'
    p = tool("--kubeconfig", kc, "--async", "1",
             "POST", "/api/v1/namespaces/default/pods", json.dumps(pod), "--and",
             "GET", "/api/v1/namespaces/default/pods/job-a", "--and",
             "POST", "/api/v1/namespaces/default/pods/job-a/binding", json.dumps(b), "--and",
             "PATCH", "/api/v1/namespaces/default/pods/job-a", patch, "--and",
             "DELETE", "/api/v1/namespaces/default/pods/job-a", "--and",
             "GET", "/api/v1/namespaces/default/pods/job-a")
    eq(statuses(p.stdout), [201, 200, 201, 200, 200], "answers in order (%s)" % p.stderr)
    eq(parse_error(p.stdout)["http"], 404, "gone after the delete")
    eq([(r["method"], r["content_type"], r["body"]) for r in a.requests],
       [("POST", "application/json", pod), ("GET", "", None), ("POST", "application/json", b),
        ("PATCH", "application/merge-patch+json", json.loads(patch)), ("DELETE", "", None),
        ("GET", "", None)], "what the server saw")
    eq(len({r["peer"] for r in a.requests}), 1, "one kept-alive connection")


def test_async_errors_are_reported_like_sync_ones():
    a = api()
    kc = kubeconfig(a)
    e = parse_error(tool("--kubeconfig", kc, "--async", "2", "GET", "/api/v1/nodes/gpu-9").stdout)
    eq((e["code"], e["http"], e["reason"], e["msg"], e["transient"]),
       (-2, 404, "NotFound", 'nodes "gpu-9" not found', False), "404")
    a.inject("GET", "nodes", 429, retry_after=3)
    e = parse_error(tool("--kubeconfig", kc, "--async", "2", "GET", "/api/v1/nodes").stdout)
    eq((e["http"], e["reason"], e["retry_after"], e["transient"]), (429, "TooManyRequests", 3, True), "429")
    eq(len(a.requests), 2, "no retry of its own")
    a.inject("GET", "nodes", 502, raw=b"<html>bad gateway</html>")
    e = parse_error(tool("--kubeconfig", kc, "--async", "2", "GET", "/api/v1/nodes").stdout)
    eq((e["code"], e["http"], e["msg"]), (-5, 502, "HTTP 502 from the API server: <html>bad gateway</html>"),
       "non-JSON error body")
    a.delay("GET", "nodes", 3)
    e = parse_error(tool("--kubeconfig", kc, "--timeout-ms", "300", "--async", "2", "GET", "/api/v1/nodes").stdout)
    eq((e["code"], e["transient"]), (-110, True), "ETIMEDOUT")
    if "GET /api/v1/nodes on https://127.0.0.1:%d timed out after 300 ms" % a.port not in e["msg"]:
        raise AssertionError(e["msg"])


def test_async_tls_verification():
    a = api()
    p = tool("--kubeconfig", kubeconfig(a, "kc-async-noca", ca=None), "--async", "1", "GET", "/api/v1/nodes")
    e = parse_error(p.stdout)
    eq((e["code"], e["http"]), (-129, 0), "the system store does not trust the double")
    if "TLS with API server https://127.0.0.1:%d failed" % a.port not in e["msg"]:
        raise AssertionError(e["msg"])
    eq(a.requests, [], "nothing sent over an unverified connection")
    p = tool("--kubeconfig", kubeconfig(a, "kc-async-cert", ca="file", token=None, client_cert=True),
             "--async", "1", "GET", "/api/v1/nodes")
    eq(statuses(p.stdout), [200], "CA file and client certificate (%s)" % p.stdout)
    kc = kubeconfig(a, "kc-async-sni")
    text = open(kc).read()
    open(kc, "w").write(text.replace("    server:", "    tls-server-name: wrong.example\n    server:"))
    eq(parse_error(tool("--kubeconfig", kc, "--async", "1", "GET", "/api/v1/nodes").stdout)["code"], -129,
       "tls-server-name is checked")


def test_async_token_rotation_reread_after_401():
    token_rotated_after_401("as-token", "--async", "1")


def test_async_ca_file_reread_on_a_kept_handle():
    import time
    a = api()
    other = FakeApiServer(tls=True)
    try:
        d = sa_dir(a, TOKEN)
        shutil.copy(other.ca_file, os.path.join(d, "ca.crt"))

        def rotate():
            shutil.copy(a.ca_file, os.path.join(d, "ca.crt"))
            time.sleep(0.4)
        first, second, _ = run_twice(in_cluster_env(a, d), rotate, "--ca-refresh-ms", "200", "--async", "1")
    finally:
        other.close()
    eq(parse_error(first)["code"], -129, "first request: TLS fails with the old CA")
    eq(second, "STATUS 200", "second request trusts the rotated CA")


def test_async_rate_limit_not_exceeded():
    import time
    a = api()
    qps, burst, n = 20.0, 3, 15
    start = time.monotonic()
    p = tool("--kubeconfig", kubeconfig(a), "--qps", str(qps), "--burst", str(burst), "--repeat", str(n),
             "--async", "8", "GET", "/api/v1/nodes")
    eq(statuses(p.stdout), [200] * n, "answers")
    times = sorted(r["time"] for r in a.requests)
    for k, t in enumerate(times):
        earliest = (k - burst + 1) / qps
        if t - start < earliest - 0.005:
            raise AssertionError("request %d arrived %.3f s after start, limiter allows %.3f s"
                                 % (k, t - start, earliest))


def plain_kubeconfig(name, server):
    """A kubeconfig for a plain-HTTP server URL with the test token."""
    path = os.path.join(_tmp, name)
    with open(path, "w") as f:
        f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: s\n  cluster:\n"
                "    server: %s\nusers:\n- name: u\n  user:\n"
                "    token: %s\ncontexts:\n- name: s\n  context:\n    cluster: s\n"
                "    user: u\ncurrent-context: s\n" % (server, TOKEN))
    return path


def shut_down(sockets, threads):
    """Ends a test helper's threads: no thread may outlive its test blocked on a descriptor
    number that the process hands out again (it would take another socket's connections or
    bytes). shutdown() wakes a thread blocked in accept or recv; then join, then close."""
    import socket
    for s in sockets:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    for t in list(threads):
        t.join(5)
    for s in sockets:
        s.close()


class ScriptedHttp:
    """A plain-HTTP server that answers each request with the next scripted answer, written in
    the pieces given (with a pause between them), then closes the connection when the answer
    says so; an answer of None closes without answering. It stands in for what the API server
    double does not do on the wire: chunked and close-delimited bodies, interim answers,
    answers split anywhere, connections closed under a request."""

    def __init__(self, answers):
        import socket
        import threading
        self.answers = list(answers)
        self.requests = []  # (connection number, head, body)
        self.conns = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        self.live = []  # accepted sockets, so close() can end their threads
        self.threads = [threading.Thread(target=self._accept, daemon=True)]
        self.threads[0].start()

    def _accept(self):
        import threading
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.conns += 1
                n = self.conns
                self.live.append(c)
                t = threading.Thread(target=self._serve, args=(c, n), daemon=True)
                self.threads.append(t)
            t.start()

    def _serve(self, c, n):
        import time
        buf = b""
        with c:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = c.recv(65536)
                    if not data:
                        return
                    buf += data
                head, buf = buf.split(b"\r\n\r\n", 1)
                m = re.search(rb"(?im)^content-length: *(\d+)", head)
                need = int(m.group(1)) if m else 0
                while len(buf) < need:
                    buf += c.recv(65536)
                body, buf = buf[:need], buf[need:]
                with self.lock:
                    self.requests.append((n, head.decode(), body.decode()))
                    answer = self.answers.pop(0) if self.answers else None
                if answer is None:
                    return
                pieces, close = answer
                for i, piece in enumerate(pieces):
                    if i:
                        time.sleep(0.02)
                    c.sendall(piece)
                if close:
                    return

    def kubeconfig(self, name):
        return plain_kubeconfig(name, "http://127.0.0.1:%d/prefix/" % self.port)

    def close(self):
        shut_down([self.sock] + self.live, self.threads)


def test_user_without_credentials_sends_no_authorization():
    """A kubeconfig user of {} (as for `kubectl proxy` or an anonymous plain-HTTP endpoint) is
    accepted, as kubectl accepts it, and no Authorization header goes out, synchronous or
    asynchronous; a context naming no user is the same anonymous user."""
    ok = ([b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"], False)
    s = ScriptedHttp([ok, ok, ok])
    try:
        server = "http://127.0.0.1:%d" % s.port
        kc = os.path.join(_tmp, "kc-anonymous")
        with open(kc, "w") as f:
            f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: s\n  cluster:\n"
                    "    server: %s\nusers:\n- name: proxy\n  user: {}\ncontexts:\n- name: s\n"
                    "  context:\n    cluster: s\n    user: proxy\ncurrent-context: s\n" % server)
        kc_nouser = os.path.join(_tmp, "kc-no-user")
        with open(kc_nouser, "w") as f:
            f.write("clusters: [{name: s, cluster: {server: '%s'}}]\n"
                    "contexts: [{name: s, context: {cluster: s}}]\ncurrent-context: s\n" % server)
        for args in (["--kubeconfig", kc, "GET", "/api/v1/nodes"],
                     ["--kubeconfig", kc, "--async", "1", "GET", "/api/v1/nodes"],
                     ["--kubeconfig", kc_nouser, "GET", "/api/v1/nodes"]):
            p = tool(*args)
            eq((p.returncode, results(p.stdout)), (0, [200]), "%s (%s)" % (args, p.stdout + p.stderr))
        eq(len(s.requests), 3, "requests")
        for _, head, _ in s.requests:
            if re.search(r"(?im)^authorization:", head):
                raise AssertionError("an Authorization header went out: %r" % head)
    finally:
        s.close()


def bytewise(b):
    return [b[i:i + 1] for i in range(len(b))]


def results(out):
    """STATUS n or (http, code, reason, retry_after, msg) per answer, in order."""
    res = []
    for line in out.splitlines():
        if line.startswith("STATUS "):
            res.append(int(line.split()[1]))
        elif line.startswith("ERROR "):
            e = parse_error(line)
            res.append((e["http"], e["code"], e["reason"], e["retry_after"], e["msg"]))
    return res


def test_async_answer_framings_and_split_answers():
    status = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                         "message": 'pods "a" already exists', "reason": "AlreadyExists",
                         "code": 409}).encode()
    too_many = json.dumps({"kind": "Status", "message": "slow down", "reason": "TooManyRequests",
                           "code": 429}).encode()
    s = ScriptedHttp([
        (bytewise(b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}"), False),
        ([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
          b"lo\r\n0\r\n\r\n"], False),
        ([b"HTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\n\r\n",
          b"%x;ext=1\r\n%s\r\n" % (10, status[:10]),
          b"%X\r\n%s\r\n0\r\nX-Trailer: t\r\n\r\n" % (len(status) - 10, status[10:])], False),
        ([b"HTTP/1.1 100 Continue\r\n\r\n", b"HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n"], False),
        ([b"HTTP/1.1 204 No Content\r\n\r\n"], False),
        ([b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: %d\r\n\r\n"
          % len(too_many) + too_many], False),
        ([b"HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\n\r\noo", b"ps"], True),
        ([b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"], False),
    ])
    try:
        body = '{"kind":"Binding"}'
        reqs = ["POST", "/api/v1/namespaces/default/pods/a/binding", body]
        for _ in range(5):
            reqs += ["--and", "GET", "/api/v1/nodes"]
        reqs += ["--and", "DELETE", "/api/v1/namespaces/default/pods/a", "--and", "GET", "/api/v1/nodes"]
        p = tool("--kubeconfig", s.kubeconfig("kc-scripted"), "--async", "1", *reqs)
        eq(results(p.stdout), [201, 200, (409, -17, "AlreadyExists", -1, 'pods "a" already exists'),
                               201, 204, (429, -11, "TooManyRequests", 7, "slow down"),
                               (500, -5, "-", -1, "HTTP 500 from the API server: oops"), 200],
           "answers (%s)" % p.stderr)
        eq([n for n, _, _ in s.requests], [1] * 7 + [2], "one connection until the server closed it")
        head, sent = s.requests[0][1:]
        lines = head.split("\r\n")
        eq(lines[0], "POST /prefix/api/v1/namespaces/default/pods/a/binding HTTP/1.1", "request line")
        want = {"Host: 127.0.0.1:%d" % s.port, "Authorization: Bearer %s" % TOKEN,
                "Content-Type: application/json", "Content-Length: %d" % len(body),
                "Accept: application/json"}
        if not want <= set(lines):
            raise AssertionError("headers %r lack %r" % (lines, want - set(lines)))
        eq(sent, body, "body")
        get_head = s.requests[1][1]
        eq(get_head.split("\r\n")[0], "GET /prefix/api/v1/nodes HTTP/1.1", "GET request line")
        if "content-length" in get_head.lower():
            raise AssertionError("a GET without a body carries a Content-Length: %r" % get_head)
    finally:
        s.close()


def test_async_unanswered_request_sent_once_more():
    ok = ([b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"], False)
    # closed under the request: sent again on a new connection, once
    s = ScriptedHttp([None, ok])
    try:
        p = tool("--kubeconfig", s.kubeconfig("kc-resend"), "--async", "1", "GET", "/api/v1/nodes")
        eq(results(p.stdout), [200], "answered the second time (%s)" % p.stderr)
        eq([n for n, _, _ in s.requests], [1, 2], "two connections")
    finally:
        s.close()
    s = ScriptedHttp([None, None, ok])
    try:
        p = tool("--kubeconfig", s.kubeconfig("kc-resend2"), "--async", "1", "GET", "/api/v1/nodes")
        e = parse_error(p.stdout)
        eq((e["code"], e["http"], e["transient"]), (-104, 0, True), "connection lost twice")
        if "connection lost: connection closed before an answer" not in e["msg"]:
            raise AssertionError(e["msg"])
        eq(len(s.requests), 2, "sent twice, not more")
    finally:
        s.close()
    # half an answer, then the connection closes: the server saw it, no second send
    s = ScriptedHttp([([b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"], True), ok])
    try:
        p = tool("--kubeconfig", s.kubeconfig("kc-partial"), "--async", "1", "GET", "/api/v1/nodes")
        e = parse_error(p.stdout)
        eq(e["code"], -104, "ECONNRESET")
        if "connection closed in the middle of an answer" not in e["msg"]:
            raise AssertionError(e["msg"])
        eq(len(s.requests), 1, "not sent again")
    finally:
        s.close()


def test_async_pipelined_past_the_connection_cap():
    a = api()
    p = tool("--kubeconfig", kubeconfig(a), "--repeat", "40", "--conns", "1", "--async", "8",
             "GET", "/api/v1/nodes", "--and", "GET", "/api/v1/nodes/none")
    eq(p.returncode, 1, "exit: the 404s (%s)" % p.stderr)
    out = [l.split()[0] for l in p.stdout.splitlines() if l.startswith(("STATUS", "ERROR"))]
    eq(out, ["STATUS"] * 40 + ["ERROR"] * 40, "every answer to its own request, in order")
    eq(len({r["peer"] for r in a.requests}), 1, "one connection")
    # a server that closes after an answer: what was queued behind it goes out again
    ok = [b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"]
    s = ScriptedHttp([(ok, False), (ok, True), (ok, False), (ok, False), (ok, False)])
    try:
        p = tool("--kubeconfig", s.kubeconfig("kc-pipe"), "--repeat", "5", "--conns", "1",
                 "--async", "5", "GET", "/api/v1/nodes")
        eq(results(p.stdout), [200] * 5, "all answered (%s)" % p.stderr)
        eq([n for n, _, _ in s.requests], [1, 1, 2, 2, 2], "the last three resent on a new connection")
    finally:
        s.close()


def test_async_server_dropping_connects_does_not_stall_every_request():
    import socket
    # a listener whose accept queue is full: the kernel drops further SYNs, so a connect
    # hangs until libcurl's 10 s connect timeout, as with a server behind a black hole
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    filler = socket.create_connection(srv.getsockname())
    try:
        path = plain_kubeconfig("kc-blackhole", "http://127.0.0.1:%d" % srv.getsockname()[1])
        # one connect waits out the timeout; the other seven fail with its error at once
        # (one connect timeout each would take 80 s, past this tool's 60 s)
        p = tool("--kubeconfig", path, "--repeat", "8", "--async", "4", "GET", "/api/v1/nodes")
        errs = [parse_error(l) for l in p.stdout.splitlines() if l.startswith("ERROR ")]
        eq(len(errs), 8, "every request failed (%s)" % p.stdout)
        eq({(e["code"], e["transient"]) for e in errs}, {(-110, True)}, "ETIMEDOUT each")
        if any("GET /api/v1/nodes on http://127.0.0.1:%d timed out" % srv.getsockname()[1] not in e["msg"]
               for e in errs):
            raise AssertionError(errs)
    finally:
        filler.close()
        srv.close()


def test_async_malformed_answer():
    s = ScriptedHttp([([b"HTTP/2 200\r\n\r\n"], False),
                      ([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"], False),
                      ([b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nextra"], False)])
    try:
        kc = s.kubeconfig("kc-malformed")
        for what in ("status line", "chunk size", "bytes after the answer"):
            p = tool("--kubeconfig", kc, "--async", "1", "GET", "/api/v1/nodes")
            if what == "bytes after the answer":
                # the answer itself is fine; the connection is dropped for the bytes after it
                eq(results(p.stdout), [200], what)
                continue
            e = parse_error(p.stdout)
            eq(e["code"], -71, "EPROTO for a bad %s" % what)
            if "malformed HTTP answer" not in e["msg"]:
                raise AssertionError(e["msg"])
    finally:
        s.close()


def connect_proxy(delay=0.0):
    """A forward proxy that takes only CONNECT (a tunnel) and counts the tunnels it opened;
    with delay, it waits that many seconds before answering each CONNECT (a slow connect)."""
    import socket
    import threading
    import time
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    tunnels = []
    live, threads = [], []

    def spawn(fn, *args):
        t = threading.Thread(target=fn, args=args, daemon=True)
        threads.append(t)
        t.start()

    def pipe(a, b):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                b.sendall(d)
        except OSError:
            pass
        for x in (a, b):
            try:
                x.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def serve(c):
        buf = b""
        while b"\r\n\r\n" not in buf:
            d = c.recv(4096)
            if not d:
                c.close()
                return
            buf += d
        line = buf.split(b"\r\n", 1)[0].decode()
        method, target, _ = line.split(" ", 2)
        if method != "CONNECT":
            c.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            c.close()
            return
        host, port = target.rsplit(":", 1)
        up = socket.create_connection((host, int(port)))
        live.append(up)
        tunnels.append(target)
        if delay:
            time.sleep(delay)
        c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        spawn(pipe, c, up)
        spawn(pipe, up, c)

    def accept():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            live.append(c)
            spawn(serve, c)

    spawn(accept)
    return (lambda: shut_down([srv] + live, threads)), srv.getsockname()[1], tunnels


def test_async_through_a_proxy_tunnel():
    a = api()
    close_proxy, proxy_port, tunnels = connect_proxy()
    try:
        kc = kubeconfig(a, "kc-async-proxy")
        with open(kc) as f:
            text = f.read()
        with open(kc, "w") as f:
            f.write(text.replace("    server: %s\n" % a.url, "    server: %s\n    proxy-url: http://127.0.0.1:%d\n"
                                 % (a.url, proxy_port)))
        p = tool("--kubeconfig", kc, "--repeat", "3", "--async", "1", "GET", "/api/v1/nodes")
        eq(statuses(p.stdout), [200] * 3, "answers through the tunnel (%s)" % p.stderr)
        eq(tunnels, ["127.0.0.1:%d" % a.port], "one TLS tunnel, kept alive")
        eq(len(a.requests), 3, "the server saw them")
    finally:
        close_proxy()


def test_async_rate_limit_holds_when_connects_are_slow():
    """The first request's connect blocks the sending thread 300 ms (a slow CONNECT tunnel)
    while the others wait their turn at the limiter: none may go out before its slot, which
    the limiter counts from its own clock, not from before the connect."""
    import time
    a = api()
    close_proxy, proxy_port, tunnels = connect_proxy(delay=0.3)
    try:
        kc = kubeconfig(a, "kc-async-slow-proxy")
        with open(kc) as f:
            text = f.read()
        with open(kc, "w") as f:
            f.write(text.replace("    server: %s\n" % a.url, "    server: %s\n    proxy-url: http://127.0.0.1:%d\n"
                                 % (a.url, proxy_port)))
        qps, burst, n = 5.0, 3, 9
        start = time.monotonic()
        p = tool("--kubeconfig", kc, "--qps", str(qps), "--burst", str(burst), "--repeat", str(n),
                 "--conns", "1", "--async", "16", "GET", "/api/v1/nodes")
        eq(statuses(p.stdout), [200] * n, "answers (%s)" % p.stderr)
        eq(len(tunnels), 1, "one slow connect")
        times = sorted(r["time"] for r in a.requests)
        for k, t in enumerate(times):
            earliest = (k - burst + 1) / qps
            if t - start < earliest - 0.005:
                raise AssertionError("request %d arrived %.3f s after start, limiter allows %.3f s"
                                     % (k, t - start, earliest))
    finally:
        close_proxy()


def test_help_and_usage():
    p = tool("--help")
    eq(p.returncode, 0, "help")
    eq(tool("GET").returncode, 2, "usage error")
    eq(tool("--async", "2").returncode, 2, "--async without a request")


# ---- exec credential plugins ----------------------------------------------------------------

def exec_kubeconfig(a, name, api_version="client.authentication.k8s.io/v1"):
    """A kubeconfig whose user runs a plugin printing the token in <dir>/token (and the
    expirationTimestamp in <dir>/expiry, when there is one). Returns (path, dir)."""
    d = tempfile.mkdtemp(dir=_tmp)
    plugin = os.path.join(d, "plugin.sh")
    with open(plugin, "w") as f:
        f.write("#!/bin/sh\n"
                "echo run >> \"%s/runs\"\n"
                "exp=$(cat \"%s/expiry\" 2>/dev/null)\n"
                # "+N": N seconds from this run, so the margin does not depend on how long
                # the process took to get here; the time given is kept in expiry.issued
                "case $exp in +*) exp=$(date -u -d \"@$(( $(date +%%s) + ${exp#+} ))\" +%%Y-%%m-%%dT%%H:%%M:%%SZ)\n"
                "  echo \"$exp\" > \"%s/expiry.issued\";; esac\n"
                "[ -n \"$exp\" ] && exp=\",\\\"expirationTimestamp\\\":\\\"$exp\\\"\"\n"
                "printf '{\"kind\":\"ExecCredential\",\"apiVersion\":\"%s\","
                "\"status\":{\"token\":\"%%s\"%%s}}' \"$(cat \"%s/token\")\" \"$exp\"\n"
                % (d, d, d, api_version, d))
    os.chmod(plugin, 0o755)
    path = a.write_kubeconfig(os.path.join(d, "kc"), token=None)
    with open(path) as f:
        text = f.read()
    text = text.replace("  user: {}\n", "  user:\n    exec:\n      apiVersion: %s\n"
                        "      command: ./plugin.sh\n      interactiveMode: Never\n" % api_version)
    with open(path, "w") as f:
        f.write(text)
    return path, d


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def runs(d):
    with open(os.path.join(d, "runs")) as f:
        return len(f.read().split())


def test_exec_plugin_token_and_rerun_after_401():
    a = api()
    a.set_tokens("e-1")
    kc, d = exec_kubeconfig(a, "exec401")
    write(os.path.join(d, "token"), "e-1")

    def rotate():
        write(os.path.join(d, "token"), "e-2")
        a.set_tokens("e-2")
    first, second, _ = run_twice(clean_env(KUBECONFIG=kc), rotate)
    eq((first, second), ("STATUS 200", "STATUS 200"), "both requests")
    eq([r["authenticated"] for r in a.requests], [True, False, True], "401, plugin re-run, retry")
    eq(runs(d), 2, "plugin runs")


def test_exec_plugin_rerun_when_expired():
    import datetime
    import time
    a = api()
    a.set_tokens("x-1")
    kc, d = exec_kubeconfig(a, "execexp", api_version="client.authentication.k8s.io/v1beta1")
    write(os.path.join(d, "token"), "x-1")
    # expires 2-3 s after the plugin's own run (whole seconds): a slow start of the process
    # cannot make the first credential stale before the first request uses it
    write(os.path.join(d, "expiry"), "+3")

    def rotate():
        write(os.path.join(d, "token"), "x-2")
        os.unlink(os.path.join(d, "expiry"))
        with open(os.path.join(d, "expiry.issued")) as f:
            issued = datetime.datetime.strptime(f.read().strip(), "%Y-%m-%dT%H:%M:%SZ")
        issued = issued.replace(tzinfo=datetime.timezone.utc)
        # until the first credential has expired, and right after: the second request
        # comes within milliseconds of the second boundary, where time() still gives the
        # second before (it read the last tick) and the client once took the credential for
        # valid
        while datetime.datetime.now(datetime.timezone.utc) <= issued:
            time.sleep(0.0005)
        a.set_tokens("x-2")
    first, second, _ = run_twice(clean_env(KUBECONFIG=kc), rotate)
    eq((first, second), ("STATUS 200", "STATUS 200"), "both requests")
    eq([r["authenticated"] for r in a.requests], [True, True], "re-run before the request, no 401")
    eq(runs(d), 2, "plugin runs")


def test_exec_plugin_failure_is_one_line():
    a = api()
    kc, d = exec_kubeconfig(a, "execbad")
    # no token file: the plugin prints an empty token
    p = tool("--kubeconfig", kc, "GET", "/api/v1/nodes")
    eq(p.returncode, 1, "exit status")
    if "exec plugin '%s/plugin.sh': didn't return a token or cert/key pair" % d not in p.stderr:
        raise AssertionError(p.stderr)


# ---- deadlines: every answer whole within the timeout, however it trickles ----------

def test_trickled_list_times_out():
    """A list whose body comes one byte a second defeats any low-speed limit: the stream still
    ends at the client's timeout, with a timeout error (it never ended before)."""
    a = api()
    for i in range(20):
        a.add(node("trickle-%02d" % i))
    a.trickle("GET", "^/api/v1/nodes$", interval=0.5)
    kc = kubeconfig(a, "kc-trickle")
    p = tool("--kubeconfig", kc, "--timeout-ms", "2000", "--stream", "5", "/api/v1/nodes?limit=500",
             timeout=30)
    e = parse_error(p.stdout)
    eq((e["code"], e["http"]), (-110, 0), "ETIMEDOUT (%s)" % e["msg"])
    if "timed out after 2000 ms" not in e["msg"]:
        raise AssertionError(e["msg"])


def test_answer_over_the_cap_is_refused():
    """--max-body (kube_client_opts.max_body, what a memory limit gives): an answer larger is
    refused, named with the cap, never held whole."""
    a = api()
    for i in range(100):
        a.add(node("big-%02d" % i, {"k%d" % j: "v" * 60 for j in range(300)}))
    kc = kubeconfig(a, "kc-cap")
    p = tool("--kubeconfig", kc, "--max-body", str(1 << 20), "GET", "/api/v1/nodes")
    if not p.stdout.startswith("ERROR"):
        raise AssertionError("not refused: %r" % p.stdout[:200])
    e = parse_error(p.stdout)
    eq(e["code"], -7, "E2BIG (%s)" % e["msg"])
    eq(e["msg"], "GET /api/v1/nodes: response larger than 1 MiB", "message")


def burst_watch_server(tls, events):
    """A one-shot TLS server whose watch answer is written whole before the client reads it,
    one TLS record per event, as kube-apiserver flushes each watch event: the events of a
    backlog (2,000 pod deletions) wait in the socket together. Returns (port, thread)."""
    import socket
    import ssl
    import threading
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tls["cert"], tls["key"])
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)

    def serve():
        s, _ = ls.accept()
        inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls_obj = ctx.wrap_bio(inc, out, server_side=True)

        def flush_and_read():
            s.sendall(out.read())
            data = s.recv(65536)
            if not data:
                raise EOFError
            inc.write(data)
        try:
            while True:
                try:
                    tls_obj.do_handshake()
                    break
                except ssl.SSLWantReadError:
                    flush_and_read()
            req = b""
            while b"\r\n\r\n" not in req:
                try:
                    req += tls_obj.read(65536)
                except ssl.SSLWantReadError:
                    flush_and_read()
            tls_obj.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                          b"Transfer-Encoding: chunked\r\n\r\n")
            for ev in events:
                line = json.dumps(ev).encode() + b"\n"
                tls_obj.write(b"%x\r\n%s\r\n" % (len(line), line))  # one record each
            tls_obj.write(b"0\r\n\r\n")
            s.sendall(out.read())
            while s.recv(65536):
                pass
        except (EOFError, OSError, ssl.SSLError):
            pass
        finally:
            s.close()
            ls.close()
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return ls.getsockname()[1], t


def test_watch_backlog_is_read_without_waiting():
    """Events already waiting to be read are handled at once: the watch's 2 ms gathering
    window applies to a wakeup, not to each piece libcurl hands over. Over TLS libcurl hands
    a stream over one record, one event, at a time; waiting the window for each held a
    backlog to one event per window (2,000 pod deletions reached gpusched serve's cache 4-8 s
    late, docs/benchmarks.md)."""
    a = api()
    n = 2000
    events = [{"type": "DELETED", "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "p-%04d" % i, "namespace": "default", "resourceVersion": str(100 + i)}}} for i in range(n)]
    port, t = burst_watch_server(a.tls_files, events)
    kc = a.write_kubeconfig(os.path.join(_tmp, "kc-burst"), server="https://127.0.0.1:%d" % port)
    p = tool("--kubeconfig", kc, "--count-waits", "--watch", "/api/v1/pods?watch=1")
    t.join(timeout=30)
    lines = p.stdout.splitlines()
    eq(lines[-2], "ENDED rc=0 events=%d" % n, "every event (%s)" % p.stderr)
    waits = int(lines[-1].split()[1])
    # a handful at most (the thread descheduled mid-backlog on a loaded machine); one per
    # event before
    if waits > n // 20:
        raise AssertionError("the watch waited %d times for %d events already there" % (waits, n))
