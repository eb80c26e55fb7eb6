"""Tests of the Kubernetes API server double itself (tests/apiserver/fake_apiserver.py): status
codes and Status bodies, patch semantics, pagination, binding, watch streams, TLS and tokens.
The other suites trust the double, so its wire behaviour is pinned down here."""
import http.client
import json
import socket
import ssl
import threading
import time

import util  # (also puts tests/apiserver on sys.path)
from fake_apiserver import FakeApiServer, strategic_merge_patch, merge_patch, json_patch, ApiError

TOKEN = "test-token"
_api = None


def api():
    """One TLS server for the module; each test starts from a clean store."""
    global _api
    if _api is None:
        _api = FakeApiServer(tls=True, tokens=[TOKEN]).start()
    return _api


def fresh():
    a = api()
    a.reset(tokens=[TOKEN])
    return a


class Conn:
    def __init__(self, a, token=TOKEN, cafile="default"):
        ctx = ssl.create_default_context(cafile=a.ca_file if cafile == "default" else cafile)
        self.c = http.client.HTTPSConnection("127.0.0.1", a.port, context=ctx, timeout=10)
        self.token = token

    def req(self, method, path, body=None, ctype="application/json", headers=None):
        h = dict(headers or {})
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            h["Content-Type"] = ctype
        self.c.request(method, path, body=data, headers=h)
        r = self.c.getresponse()
        raw = r.read()
        try:
            js = json.loads(raw)
        except ValueError:
            js = None
        return r.status, js, r


def node(name, labels=None, **extra):
    o = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}}}
    o.update(extra)
    return o


def pod(name, ns="default", node_name=None, sched=None, labels=None):
    spec = {"containers": [{"name": "c", "image": "x"}]}
    if node_name:
        spec["nodeName"] = node_name
    if sched:
        spec["schedulerName"] = sched
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels or {}}, "spec": spec}


def eq(got, want, what="value"):
    if got != want:
        raise AssertionError("%s: got %r, want %r" % (what, got, want))


# ---- auth and TLS ---------------------------------------------------------------------------

def test_token_required_and_status_body():
    a = fresh()
    a.add(node("gpu-1"))
    st, js, _ = Conn(a, token=None).req("GET", "/api/v1/nodes/gpu-1")
    eq(st, 401, "status")
    eq(js, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Unauthorized", "reason": "Unauthorized", "code": 401}, "body")
    eq(Conn(a, token="wrong").req("GET", "/api/v1/nodes/gpu-1")[0], 401, "wrong token")
    eq(Conn(a).req("GET", "/api/v1/nodes/gpu-1")[0], 200, "good token")


def test_token_rotation():
    a = fresh()
    a.add(node("gpu-1"))
    a.set_tokens("t2")
    eq(Conn(a).req("GET", "/api/v1/nodes/gpu-1")[0], 401, "old token after rotation")
    eq(Conn(a, token="t2").req("GET", "/api/v1/nodes/gpu-1")[0], 200, "new token")


def test_requests_log_never_holds_token():
    a = fresh()
    Conn(a, token="secret-abc").req("GET", "/api/v1/nodes?limit=1")
    r = a.requests[-1]
    eq((r["method"], r["path"], r["query"]), ("GET", "/api/v1/nodes", {"limit": "1"}), "log")
    if "secret-abc" in repr(a.requests):
        raise AssertionError("token leaked into the requests log")


def test_tls_rejects_wrong_ca():
    a = api()
    other = FakeApiServer(tls=True)
    try:
        Conn(a, cafile=other.ca_file).req("GET", "/version")
    except ssl.SSLError:
        pass
    else:
        raise AssertionError("handshake with a foreign CA succeeded")
    finally:
        other.close()


def test_client_certificate_auth():
    a = fresh()
    ctx = ssl.create_default_context(cafile=a.ca_file)
    ctx.load_cert_chain(a.tls_files["client_cert"], a.tls_files["client_key"])
    c = http.client.HTTPSConnection("127.0.0.1", a.port, context=ctx, timeout=10)
    c.request("GET", "/api/v1/nodes")
    eq(c.getresponse().status, 200, "client cert without token")


def test_plain_http_mode():
    with FakeApiServer(tls=False, tokens=None) as a:
        c = http.client.HTTPConnection("127.0.0.1", a.port, timeout=10)
        c.request("GET", "/api/v1/nodes")
        r = c.getresponse()
        eq(r.status, 200, "status")
        eq(json.loads(r.read())["kind"], "NodeList", "kind")
        if not a.url.startswith("http://"):
            raise AssertionError(a.url)


def test_keep_alive_reuses_connection():
    a = fresh()
    c = Conn(a)
    for _ in range(5):
        eq(c.req("GET", "/api/v1/nodes")[0], 200, "status")
    if c.c.sock is None:
        raise AssertionError("connection was closed between requests")


# ---- reads ----------------------------------------------------------------------------------

def test_get_not_found_exact_body():
    a = fresh()
    st, js, _ = Conn(a).req("GET", "/api/v1/nodes/gpu-1")
    eq(st, 404, "status")
    eq(js, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": 'nodes "gpu-1" not found', "reason": "NotFound",
            "details": {"name": "gpu-1", "kind": "nodes"}, "code": 404}, "body")
    st, js, _ = Conn(a).req("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l")
    eq(js["message"], 'leases.coordination.k8s.io "l" not found', "group message")
    eq(js["details"], {"name": "l", "group": "coordination.k8s.io", "kind": "leases"}, "details")


def test_object_metadata_and_global_rv():
    a = fresh()
    n = a.add(node("a"))
    p = a.add(pod("p"))
    if not (n["metadata"]["uid"] and n["metadata"]["creationTimestamp"].endswith("Z")):
        raise AssertionError(n)
    if int(p["metadata"]["resourceVersion"]) <= int(n["metadata"]["resourceVersion"]):
        raise AssertionError("resourceVersion not increasing across kinds")
    st, js, _ = Conn(a).req("GET", "/api/v1/namespaces/default/pods/p")
    eq((st, js["kind"], js["apiVersion"], js["status"]["phase"], js["spec"]["schedulerName"]),
       (200, "Pod", "v1", "Pending", "default-scheduler"), "pod defaults")


def test_list_selectors():
    a = fresh()
    a.add(node("a", {"gpu": "yes", "zone": "z1"}))
    a.add(node("b", {"gpu": "no"}))
    a.add(node("c", {}))
    a.add(pod("p1", node_name="a", sched="gpu-sched"))
    a.add(pod("p2", sched="gpu-sched"))
    a.add(pod("p3", ns="other"))
    c = Conn(a)

    def names(path):
        st, js, _ = c.req("GET", path)
        eq(st, 200, path)
        return [i["metadata"]["name"] for i in js["items"]]
    eq(names("/api/v1/nodes?labelSelector=gpu%3Dyes"), ["a"], "k=v")
    eq(names("/api/v1/nodes?labelSelector=gpu%21%3Dyes"), ["b", "c"], "k!=v")
    eq(names("/api/v1/nodes?labelSelector=gpu"), ["a", "b"], "exists")
    eq(names("/api/v1/nodes?labelSelector=%21gpu"), ["c"], "!k")
    eq(names("/api/v1/nodes?labelSelector=gpu+in+(yes,no),zone%3Dz1"), ["a"], "in + and")
    eq(names("/api/v1/pods?fieldSelector=spec.schedulerName%3Dgpu-sched,spec.nodeName%3D"), ["p2"],
       "pending pods of a scheduler")
    eq(names("/api/v1/pods?fieldSelector=spec.nodeName%3Da"), ["p1"], "pods on a node")
    eq(names("/api/v1/pods?fieldSelector=metadata.name%3Dp3"), ["p3"], "by name")
    eq(names("/api/v1/namespaces/default/pods"), ["p1", "p2"], "namespace")
    st, js, _ = c.req("GET", "/api/v1/pods?fieldSelector=spec.bogus%3Dx")
    eq((st, js["reason"]), (400, "BadRequest"), "unsupported field")


def test_list_pagination_and_expired_continue():
    a = fresh()
    for i in range(7):
        a.add(node("n%d" % i))
    c = Conn(a)
    seen, cont, rvs = [], None, set()
    while True:
        path = "/api/v1/nodes?limit=3" + ("&continue=" + cont if cont else "")
        st, js, _ = c.req("GET", path)
        eq(st, 200, "page")
        seen += [i["metadata"]["name"] for i in js["items"]]
        rvs.add(js["metadata"]["resourceVersion"])
        cont = js["metadata"].get("continue")
        if not cont:
            break
    eq(seen, ["n%d" % i for i in range(7)], "all items once, in order")
    eq(len(rvs), 1, "list RV constant across pages")
    st, js, _ = c.req("GET", "/api/v1/nodes?limit=3")
    tok = js["metadata"]["continue"]
    eq(js["metadata"]["remainingItemCount"], 4, "remainingItemCount")
    a.compact()
    st, js, _ = c.req("GET", "/api/v1/nodes?limit=3&continue=" + tok)
    eq((st, js["reason"], js["code"]), (410, "Expired", 410), "expired continue")


def test_list_options_validation_and_exact_rv():
    a = fresh()
    a.add(node("a"))
    old = a.resource_version
    c = Conn(a)
    st, js, _ = c.req("GET", "/api/v1/nodes?sendInitialEvents=true")
    eq((st, js["reason"]), (422, "Invalid"), "sendInitialEvents on a list")
    if "sendInitialEvents is forbidden for list" not in js["message"]:
        raise AssertionError(js["message"])
    st, js, _ = c.req("GET", "/api/v1/nodes?watch=1&sendInitialEvents=true")
    eq(st, 422, "sendInitialEvents without resourceVersionMatch")
    if "requires setting resourceVersionMatch to NotOlderThan" not in js["message"]:
        raise AssertionError(js["message"])
    eq(c.req("GET", "/api/v1/nodes?resourceVersionMatch=Exact")[0], 422, "match without RV")
    eq(c.req("GET", "/api/v1/nodes?resourceVersion=%d&limit=5" % old)[0], 200, "exact RV within history")
    a.add(node("b"))
    a.compact()
    st, js, _ = c.req("GET", "/api/v1/nodes?resourceVersion=%d&limit=5" % old)
    eq((st, js["reason"]), (410, "Expired"), "exact RV compacted away")
    eq(c.req("GET", "/api/v1/nodes?resourceVersion=%d" % old)[0], 200, "NotOlderThan without limit")


def test_watch_send_initial_events_bookmark():
    a = fresh()
    a.add(node("a"))
    w = Watch(a, "/api/v1/nodes?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                 "&allowWatchBookmarks=true&timeoutSeconds=20")
    w.wait_for(2)
    eq([e["type"] for e in w.events[:2]], ["ADDED", "BOOKMARK"], "initial events then bookmark")
    eq(w.events[1]["object"]["metadata"]["annotations"], {"k8s.io/initial-events-end": "true"}, "annotation")


# ---- writes ---------------------------------------------------------------------------------

def test_create_and_already_exists():
    a = fresh()
    c = Conn(a)
    st, js, _ = c.req("POST", "/api/v1/namespaces/default/pods", pod("p"))
    eq((st, js["metadata"]["namespace"]), (201, "default"), "create")
    st, js, _ = c.req("POST", "/api/v1/namespaces/default/pods", pod("p"))
    eq((st, js["reason"], js["message"]), (409, "AlreadyExists", 'pods "p" already exists'), "again")


def test_merge_patch_null_removes_and_rv_conflict():
    a = fresh()
    n = a.add(node("gpu-1", {"x": "1", "y": "2"}))
    c = Conn(a)
    st, js, _ = c.req("PATCH", "/api/v1/nodes/gpu-1", {"metadata": {"labels": {"x": None, "z": "3"}}},
                      "application/merge-patch+json")
    eq((st, js["metadata"]["labels"]), (200, {"y": "2", "z": "3"}), "merged")
    if int(js["metadata"]["resourceVersion"]) <= int(n["metadata"]["resourceVersion"]):
        raise AssertionError("patch did not bump resourceVersion")
    stale = n["metadata"]["resourceVersion"]
    st, js, _ = c.req("PATCH", "/api/v1/nodes/gpu-1",
                      {"metadata": {"resourceVersion": stale, "labels": {"y": None}}},
                      "application/merge-patch+json")
    eq(st, 409, "stale pinned RV")
    eq(js["message"], 'Operation cannot be fulfilled on nodes "gpu-1": the object has been modified; '
       'please apply your changes to the latest version and try again', "message")
    eq(a.get("nodes", "gpu-1")["metadata"]["labels"], {"y": "2", "z": "3"}, "unchanged after 409")


def test_noop_patch_keeps_rv():
    a = fresh()
    n = a.add(node("gpu-1", {"x": "1"}))
    st, js, _ = Conn(a).req("PATCH", "/api/v1/nodes/gpu-1", {"metadata": {"labels": {"x": "1"}}},
                            "application/merge-patch+json")
    eq(js["metadata"]["resourceVersion"], n["metadata"]["resourceVersion"], "rv")


def test_json_patch_ops_and_422():
    a = fresh()
    a.add(node("gpu-1", {"a/b": "1"}))
    c = Conn(a)
    ops = [{"op": "test", "path": "/metadata/labels/a~1b", "value": "1"},
           {"op": "replace", "path": "/metadata/labels/a~1b", "value": "2"},
           {"op": "add", "path": "/metadata/labels/n", "value": "v"}]
    st, js, _ = c.req("PATCH", "/api/v1/nodes/gpu-1", ops, "application/json-patch+json")
    eq((st, js["metadata"]["labels"]), (200, {"a/b": "2", "n": "v"}), "applied")
    st, js, _ = c.req("PATCH", "/api/v1/nodes/gpu-1", [{"op": "remove", "path": "/metadata/labels/zz"}],
                      "application/json-patch+json")
    eq((st, js["reason"]), (422, "Invalid"), "remove missing")
    st, js, _ = c.req("PATCH", "/api/v1/nodes/gpu-1", [{"op": "test", "path": "/metadata/labels/n",
                                                        "value": "other"}], "application/json-patch+json")
    eq(st, 422, "failed test op")


def test_patch_errors():
    a = fresh()
    a.add(node("gpu-1"))
    c = Conn(a)
    st, js, _ = c.req("PATCH", "/api/v1/nodes/gpu-1", {"metadata": {}}, "text/plain")
    eq((st, js["reason"]), (415, "UnsupportedMediaType"), "unknown type")
    st, js, _ = c.req("PATCH", "/api/v1/nodes/nope", {"metadata": {}}, "application/merge-patch+json")
    eq((st, js["message"]), (404, 'nodes "nope" not found'), "missing object")
    st, js, _ = c.req("PATCH", "/api/v1/nodes/gpu-1", "{not json", "application/merge-patch+json")
    eq(st, 400, "bad body")
    st, _, _ = c.req("PATCH", "/api/v1/nodes/gpu-1", {"metadata": {}},
                     "application/merge-patch+json; charset=utf-8")
    eq(st, 200, "content-type parameters are stripped")


def test_strategic_merge_patch_conditions():
    a = fresh()
    p = pod("p")
    p["status"] = {"phase": "Pending", "conditions": [{"type": "Ready", "status": "False"},
                                                      {"type": "PodScheduled", "status": "True"}]}
    a.add(p)
    body = {"$setElementOrder/conditions": [{"type": "PodScheduled"}],
            "status": {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                       "message": "0/3 nodes are available", "lastProbeTime": None}],
                       "nominatedNodeName": "n1"}}
    st, js, _ = Conn(a).req("PATCH", "/api/v1/namespaces/default/pods/p/status", body,
                            "application/strategic-merge-patch+json")
    eq(st, 200, "status")
    conds = {c["type"]: c for c in js["status"]["conditions"]}
    eq(conds["Ready"]["status"], "False", "other condition kept")
    eq((conds["PodScheduled"]["status"], conds["PodScheduled"]["reason"]), ("False", "Unschedulable"), "merged")
    eq(js["status"]["nominatedNodeName"], "n1", "nominated")
    eq(strategic_merge_patch({"metadata": {"labels": {"a": "1", "b": "2"}}},
                             {"metadata": {"labels": {"a": None}}}), {"metadata": {"labels": {"b": "2"}}}, "null")


def test_status_subresource_isolated():
    a = fresh()
    a.add(pod("p"))
    c = Conn(a)
    st, js, _ = c.req("PATCH", "/api/v1/namespaces/default/pods/p", {"status": {"phase": "Running"}},
                      "application/merge-patch+json")
    eq(js["status"]["phase"], "Pending", "main resource ignores status")
    st, js, _ = c.req("PATCH", "/api/v1/namespaces/default/pods/p/status",
                      {"status": {"phase": "Running"}, "spec": {"nodeName": "x"}}, "application/merge-patch+json")
    eq((js["status"]["phase"], js["spec"].get("nodeName")), ("Running", None), "status ignores spec")


def test_put_stale_rv_and_delete():
    a = fresh()
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": "l", "namespace": "kube-system"}, "spec": {"holderIdentity": "a"}}
    c = Conn(a)
    base = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
    st, created, _ = c.req("POST", base, lease)
    eq(st, 201, "create lease")
    upd = dict(created, spec={"holderIdentity": "b"})
    st, js, _ = c.req("PUT", base + "/l", upd)
    eq((st, js["spec"]["holderIdentity"]), (200, "b"), "put")
    st, js, _ = c.req("PUT", base + "/l", upd)
    eq((st, js["reason"]), (409, "Conflict"), "stale put")
    eq(js["message"].startswith('Operation cannot be fulfilled on leases.coordination.k8s.io "l"'), True, "msg")
    a.add(pod("p"))
    eq(c.req("DELETE", "/api/v1/namespaces/default/pods/p")[0], 200, "delete")
    eq(c.req("DELETE", "/api/v1/namespaces/default/pods/p")[0], 404, "delete again")


def test_events_both_groups():
    a = fresh()
    c = Conn(a)
    ev = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
          "metadata": {"name": "p.17e3c1b2a9d4f000", "namespace": "default"},
          "eventTime": "2026-08-19T12:00:00.123456Z", "reportingController": "gpu-scheduler",
          "reportingInstance": "gpu-scheduler-h", "action": "Scheduling", "reason": "FailedScheduling",
          "type": "Warning", "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}, "note": "x"}
    eq(c.req("POST", "/apis/events.k8s.io/v1/namespaces/default/events", ev)[0], 201, "events.k8s.io")
    bad = dict(ev, metadata={"name": "q"}, type="Bogus")
    del bad["eventTime"]
    st, js, _ = c.req("POST", "/apis/events.k8s.io/v1/namespaces/default/events", bad)
    eq((st, js["reason"]), (422, "Invalid"), "validation")
    if "eventTime: Required value" not in js["message"]:
        raise AssertionError(js["message"])
    core = {"metadata": {"name": "p.1"}, "involvedObject": {"kind": "Pod", "name": "p"}, "reason": "Scheduled",
            "message": "m", "type": "Normal"}
    eq(c.req("POST", "/api/v1/namespaces/default/events", core)[0], 201, "core/v1")
    eq(a.get("events.events.k8s.io", "p.17e3c1b2a9d4f000")["reason"], "FailedScheduling", "stored")


# ---- binding --------------------------------------------------------------------------------

def binding(name, target):
    return {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "namespace": "default"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": target}}


def test_binding_semantics():
    a = fresh()
    a.add(pod("job-0"))
    c = Conn(a)
    url = "/api/v1/namespaces/default/pods/job-0/binding"
    st, js, _ = c.req("POST", url, binding("job-0", "gpu-1"))
    eq((st, js), (201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
       "bound")
    p = a.get("pods", "job-0")
    eq(p["spec"]["nodeName"], "gpu-1", "nodeName")
    eq([(x["type"], x["status"]) for x in p["status"]["conditions"]], [("PodScheduled", "True")], "condition")
    st, js, _ = c.req("POST", url, binding("job-0", "gpu-2"))
    eq((st, js["reason"], js["message"]),
       (409, "Conflict", 'Operation cannot be fulfilled on pods/binding "job-0": pod job-0 is already '
        'assigned to node "gpu-1"'), "already bound")
    st, js, _ = c.req("POST", "/api/v1/namespaces/default/pods/nope/binding", binding("nope", "gpu-1"))
    eq((st, js["message"]), (404, 'pods "nope" not found'), "missing pod")
    st, js, _ = c.req("POST", url, binding("other", "gpu-1"))
    eq((st, js["reason"]), (400, "BadRequest"), "name mismatch")


# ---- RBAC and faults ------------------------------------------------------------------------

def test_forbid_message():
    a = fresh()
    a.add(node("gpu-1"))
    a.forbid("patch", "nodes")
    a.forbid("create", "pods/binding")
    c = Conn(a)
    st, js, _ = c.req("PATCH", "/api/v1/nodes/gpu-1", {}, "application/merge-patch+json")
    eq((st, js["message"]), (403, 'nodes "gpu-1" is forbidden: User "system:serviceaccount:gpu:labeler" '
                             'cannot patch resource "nodes" in API group "" at the cluster scope'), "node")
    a.add(pod("p"))
    st, js, _ = c.req("POST", "/api/v1/namespaces/default/pods/p/binding", binding("p", "n"))
    eq(js["message"], 'pods "p" is forbidden: User "system:serviceaccount:gpu:labeler" cannot create '
       'resource "pods/binding" in API group "" in the namespace "default"', "binding")
    eq(c.req("GET", "/api/v1/nodes/gpu-1")[0], 200, "other verbs allowed")


def test_inject_faults():
    a = fresh()
    a.add(node("gpu-1"))
    c = Conn(a)
    a.inject("GET", r"^/api/v1/nodes/gpu-1$", 429, times=1, retry_after=3)
    st, js, r = c.req("GET", "/api/v1/nodes/gpu-1")
    eq((st, r.getheader("Retry-After"), js["reason"], js["details"]["retryAfterSeconds"]),
       (429, "3", "TooManyRequests", 3), "429")
    eq(c.req("GET", "/api/v1/nodes/gpu-1")[0], 200, "only once")
    a.inject("*", "nodes", 503, times=2)
    eq([Conn(a).req("GET", "/api/v1/nodes")[1]["reason"] for _ in range(2)],
       ["ServiceUnavailable", "ServiceUnavailable"], "twice")
    a.inject("GET", "nodes", 500, message="boom")
    st, js, _ = Conn(a).req("GET", "/api/v1/nodes")
    eq((st, js["reason"], js["message"]), (500, "InternalError", "boom"), "500")
    a.inject("GET", "nodes", 0)
    try:
        Conn(a).req("GET", "/api/v1/nodes")
    except (http.client.HTTPException, OSError):
        pass
    else:
        raise AssertionError("dropped connection answered")


def test_hold_and_requests_in_flight():
    # held requests wait together until release(), which ends the hold; in_flight and
    # max_in_flight count them (not watches, nor requests from before reset())
    a = fresh()
    a.add(node("gpu-1"))
    a.hold("GET", r"^/api/v1/nodes/gpu-1$")
    got = []

    def one():
        got.append(Conn(a).req("GET", "/api/v1/nodes/gpu-1")[0])
    threads = [threading.Thread(target=one) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        eq(a.wait_held(3), True, "three held at once")
        eq((a.held(), a.in_flight, got), (3, 3, []), "held, in flight, answered")
        eq(Conn(a).req("GET", "/api/v1/nodes")[0], 200, "another path is not held")
    finally:
        a.release()
    for t in threads:
        t.join(10)
    # (a handler counts itself out just after its answer went: the client may be quicker)
    util.wait_for("no request in flight", lambda: a.in_flight == 0, timeout=20)
    eq((got, a.held(), a.max_in_flight), ([200] * 3, 0, 4),
       "after release (the most at once: the three and the other path)")
    eq(Conn(a).req("GET", "/api/v1/nodes/gpu-1")[0], 200, "the hold ended")
    eq(a.wait_held(1, timeout=0.1), False, "nothing held")


def test_restart_keeps_state_and_port():
    with FakeApiServer(tls=False, tokens=None) as a:
        a.add(node("gpu-1"))
        port = a.port
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", "/api/v1/nodes/gpu-1")
        eq(c.getresponse().read() != b"", True, "first")
        a.restart()
        eq(a.port, port, "same port")
        c2 = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c2.request("GET", "/api/v1/nodes/gpu-1")
        eq(c2.getresponse().status, 200, "state kept")
        try:
            c.request("GET", "/api/v1/nodes/gpu-1")
            c.getresponse().read()
        except (http.client.HTTPException, OSError):
            pass
        else:
            raise AssertionError("old connection survived restart")


# ---- watch ----------------------------------------------------------------------------------

class Watch:
    """Reads a watch stream in a thread; events land in .events."""

    def __init__(self, a, path):
        self.events = []
        self.done = threading.Event()
        ctx = ssl.create_default_context(cafile=a.ca_file)
        self.c = http.client.HTTPSConnection("127.0.0.1", a.port, context=ctx, timeout=30)
        self.c.request("GET", path, headers={"Authorization": "Bearer " + TOKEN})
        self.r = self.c.getresponse()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        try:
            for line in self.r:
                self.events.append(json.loads(line))
        except (OSError, http.client.HTTPException, ValueError):
            pass
        self.done.set()

    def wait_for(self, n, timeout=10):
        end = time.monotonic() + timeout
        while len(self.events) < n and time.monotonic() < end and not self.done.is_set():
            time.sleep(0.01)
        return [(e["type"], e["object"].get("metadata", {}).get("name")) for e in self.events]


def test_watch_stream_events_and_selectors():
    a = fresh()
    a.add(node("a", {"gpu": "yes"}))
    rv = a.resource_version
    w = Watch(a, "/api/v1/nodes?watch=1&resourceVersion=%d&labelSelector=gpu%%3Dyes&timeoutSeconds=20" % rv)
    eq(w.r.status, 200, "status")
    eq(w.r.getheader("Transfer-Encoding"), "chunked", "chunked")
    a.add(node("b", {"gpu": "no"}))            # not visible
    a.add(node("c", {"gpu": "yes"}))           # ADDED
    a.add(node("a", {"gpu": "yes", "x": "1"}))  # MODIFIED
    a.add(node("a", {"gpu": "no"}))            # leaves the selector: DELETED
    a.add(node("b", {"gpu": "yes"}))           # enters the selector: ADDED
    a.delete("nodes", "c")                     # DELETED
    got = w.wait_for(5)
    eq(got, [("ADDED", "c"), ("MODIFIED", "a"), ("DELETED", "a"), ("ADDED", "b"), ("DELETED", "c")], "events")
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in w.events]
    eq(rvs, sorted(rvs), "RVs increase")


def test_watch_without_rv_sends_synthetic_added_and_bookmarks():
    a = fresh()
    a.add(pod("p1", sched="s", ns="default"))
    a.add(pod("p2", node_name="n", ns="default"))
    w = Watch(a, "/api/v1/pods?watch=1&allowWatchBookmarks=true&fieldSelector=spec.nodeName%3D"
                 "&timeoutSeconds=20")
    eq(w.wait_for(1), [("ADDED", "p1")], "initial")
    a.bookmark()
    w.wait_for(2)
    eq(w.events[1]["type"], "BOOKMARK", "bookmark")
    eq(w.events[1]["object"]["metadata"]["resourceVersion"], str(a.resource_version), "bookmark rv")
    eq(w.events[1]["object"]["kind"], "Pod", "bookmark kind")


def test_watch_binding_removes_pod_from_pending_selector():
    a = fresh()
    a.add(pod("p", sched="s"))
    w = Watch(a, "/api/v1/pods?watch=1&resourceVersion=%d&fieldSelector=spec.nodeName%%3D"
                 "&timeoutSeconds=20" % a.resource_version)
    st, _, _ = Conn(a).req("POST", "/api/v1/namespaces/default/pods/p/binding", binding("p", "n"))
    eq(st, 201, "bind")
    eq(w.wait_for(1), [("DELETED", "p")], "pending watch sees the pod leave")


def test_watch_too_old_rv_error_event():
    a = fresh()
    a.add(node("a"))
    old = a.resource_version
    a.add(node("b"))
    a.compact()
    w = Watch(a, "/api/v1/nodes?watch=1&resourceVersion=%d" % old)
    eq(w.r.status, 200, "HTTP status")
    w.done.wait(10)
    eq(len(w.events), 1, "one event then close")
    ev = w.events[0]
    eq(ev["type"], "ERROR", "type")
    eq((ev["object"]["kind"], ev["object"]["code"], ev["object"]["reason"]), ("Status", 410, "Expired"), "status")
    if not ev["object"]["message"].startswith("too old resource version: %d (" % old):
        raise AssertionError(ev["object"]["message"])


def test_watch_compact_closes_live_watch():
    a = fresh()
    w = Watch(a, "/api/v1/nodes?watch=1&resourceVersion=%d&timeoutSeconds=20" % a.resource_version)
    a.add(node("x"))
    w.wait_for(1)
    a.compact(close_watches=True)
    w.done.wait(10)
    eq([e["type"] for e in w.events], ["ADDED", "ERROR"], "events")


def test_watch_timeout_ends_stream():
    a = fresh()
    w = Watch(a, "/api/v1/nodes?watch=1&resourceVersion=%d&timeoutSeconds=1" % a.resource_version)
    if not w.done.wait(10):
        raise AssertionError("stream did not end after timeoutSeconds")


def test_watch_closed_by_restart():
    a = FakeApiServer(tls=False, tokens=None).start()
    try:
        c = http.client.HTTPConnection("127.0.0.1", a.port, timeout=30)
        c.request("GET", "/api/v1/nodes?watch=1&timeoutSeconds=60")
        r = c.getresponse()
        done = threading.Event()
        threading.Thread(target=lambda: (r.read(), done.set()), daemon=True).start()
        a.restart()
        if not done.wait(10):
            raise AssertionError("watch survived restart")
    finally:
        a.close()


# ---- pure functions -------------------------------------------------------------------------

def test_merge_patch_rfc7386_examples():
    eq(merge_patch({"a": "b", "c": {"d": "e", "f": "g"}}, {"a": "z", "c": {"f": None}}),
       {"a": "z", "c": {"d": "e"}}, "rfc example")
    eq(merge_patch({"a": [1, 2]}, {"a": [3]}), {"a": [3]}, "arrays replaced")


def test_json_patch_remove_missing_raises_422():
    try:
        json_patch({"a": {}}, [{"op": "remove", "path": "/a/b"}])
    except ApiError as e:
        eq(e.code, 422, "code")
    else:
        raise AssertionError("no error")


def test_standalone_cli_help():
    import subprocess
    import sys
    p = subprocess.run([sys.executable, util.os.path.join(util.SRC, "tests", "apiserver", "fake_apiserver.py"),
                        "--help"], capture_output=True, text=True, timeout=30)
    eq(p.returncode, 0, "exit")
    for flag in ("--state", "--print-kubeconfig", "--plain-http", "--port"):
        if flag not in p.stdout:
            raise AssertionError("--help lacks " + flag)


def test_standalone_serves_state(tmp=None):
    import os
    import subprocess
    import sys
    import tempfile
    d = tempfile.mkdtemp()
    state = os.path.join(d, "state.json")
    with open(state, "w") as f:
        json.dump({"items": [node("s1"), pod("sp")]}, f)
    kc = os.path.join(d, "kc")
    p = subprocess.Popen([sys.executable, os.path.join(util.SRC, "tests", "apiserver", "fake_apiserver.py"),
                          "--plain-http", "--state", state, "--print-kubeconfig", kc,
                          "--log-requests", os.path.join(d, "log.jsonl"),
                          "--dump-state", os.path.join(d, "dump.json")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = None
        for line in p.stdout:
            if line.startswith("READY "):
                url = line.split()[1]
                break
        port = int(url.rsplit(":", 1)[1])
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", "/api/v1/pods", headers={"Authorization": "Bearer test-token"})
        js = json.loads(c.getresponse().read())
        eq([i["metadata"]["name"] for i in js["items"]], ["sp"], "loaded")
        if "server: " + url not in open(kc).read():
            raise AssertionError("kubeconfig lacks server")
    finally:
        p.terminate()
        _, err = p.communicate(timeout=60)
    eq(p.returncode, 0, "exit after SIGTERM (stderr: %s)" % err[-1000:])
    log = [json.loads(l) for l in open(os.path.join(d, "log.jsonl"))]
    eq([(r["method"], r["path"]) for r in log], [("GET", "/api/v1/pods")], "request log")
    if "test-token" in open(os.path.join(d, "log.jsonl")).read():
        raise AssertionError("token in the request log")
    dump = json.load(open(os.path.join(d, "dump.json")))
    eq(sorted(i["metadata"]["name"] for i in dump["items"]), ["s1", "sp"], "dumped state")
