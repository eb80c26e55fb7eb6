"""gpusched reading a cluster through the API double, for what the real API server cannot be
made to do on demand: pages of exactly 500 with continue tokens, an expired continue token,
a kind the server does not serve, a denied optional list, and what is read with -n, -A and the
context's namespace. (test_k8s_live.py runs the same commands on the real kube-apiserver.)"""
import json
import os
import subprocess
import sys
import tempfile

import util

sys.path.insert(0, os.path.join(util.SRC, "tests", "apiserver"))
from fake_apiserver import FakeApiServer  # noqa: E402

_api = None
_tmp = tempfile.mkdtemp(prefix="gpusched-live-")


def node(name, gpus):
    alloc = {"cpu": "8", "memory": "32Gi", "pods": "500", "nvidia.com/gpu": str(gpus)}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": alloc, "capacity": alloc}}


def pod(ns, name, gpus=0, node_name=None, extra_spec=None):
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
         "spec": {"priority": 0, "containers": [{"name": "c", "image": "x", "resources": {
             "requests": {"cpu": "1m", "nvidia.com/gpu": str(gpus)},
             "limits": {"nvidia.com/gpu": str(gpus)}}}]},
         "status": {"phase": "Running" if node_name else "Pending"}}
    if node_name:
        p["spec"]["nodeName"] = node_name
    p["spec"].update(extra_spec or {})
    return p


def api():
    global _api
    if _api is None:
        _api = FakeApiServer(tls=True).start()
    _api.reset()
    for i in range(3):
        _api.add(node("n%d" % i, 2))
    # 1,200 bound pods: three pages of bound pods
    _api.add_many([pod("batch", "b%04d" % i, node_name="n%d" % (i % 3)) for i in range(1200)])
    _api.add(pod("ml", "train", 2))
    _api.add(pod("web", "frontend", 1))
    return _api


def gpusched(a, *args, namespace="ml"):
    kc = a.write_kubeconfig(os.path.join(_tmp, "kc"), namespace=namespace)
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    env["HOME"] = _tmp
    return subprocess.run([util.binary("gpusched")] + list(args) + ["--kubeconfig", kc],
                          capture_output=True, text=True, timeout=60, env=env)


def pod_lists(a):
    return [r for r in a.requests if r["method"] == "GET" and r["path"].endswith("/pods")]


def test_pages_and_the_contexts_namespace():
    a = api()
    p = gpusched(a, "simulate", "-o", "json")
    util.check_eq(p.returncode, 0, "exit (%s)" % p.stderr)
    util.check_eq([e["pod"] for e in json.loads(p.stdout)["scheduled"]], ["ml/train"],
                  "only the context's namespace is pending")
    lists = pod_lists(a)
    # the bound pods from the watch cache (resourceVersion=0), whole: one answer
    bound = [r for r in lists if r["path"] == "/api/v1/pods"]
    util.check_eq([(r["query"].get("limit"), r["query"].get("resourceVersion")) for r in bound],
                  [("500", "0")], "bound pods from the cache")
    util.check_eq(bound[0]["query"]["fieldSelector"],
                  "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed", "selector")
    # the pending pods consistent (no resourceVersion): a pod just created is there
    pending = [r for r in lists if r["path"] == "/api/v1/namespaces/ml/pods"]
    util.check_eq(pending[0]["query"]["fieldSelector"],
                  "spec.nodeName=,status.phase!=Succeeded,status.phase!=Failed", "pending")
    util.check_eq([r["query"].get("resourceVersion") for r in pending], [None], "pending read")
    # without a watch cache the limit pages the list; the continue pages carry no
    # resourceVersion (the token holds it)
    a.requests.clear()
    a.watch_cache = False
    p2 = gpusched(a, "simulate", "-o", "json")
    util.check_eq(p2.stdout, p.stdout, "the same answer from pages")
    bound = [r for r in pod_lists(a) if r["path"] == "/api/v1/pods"]
    util.check_eq([(r["query"].get("limit"), r["query"].get("resourceVersion"), "continue" in r["query"])
                   for r in bound],
                  [("500", "0", False), ("500", None, True), ("500", None, True)], "pages")


def test_a_later_page_fails():
    """A page after the first fails (a server without a watch cache pages the list): its error
    is the list's, and no page is asked for twice."""
    a = api()
    a.watch_cache = False
    a.inject("GET", r"^/api/v1/pods$", 410, times=None, reason="Expired", message="too old",
             query={"continue": None})
    p = gpusched(a, "nodes")
    util.check_eq((p.returncode, p.stderr), (1, "gpusched: cannot list pods: too old\n"), "410")
    bound = [r for r in pod_lists(a) if r["path"] == "/api/v1/pods"]
    util.check_eq(["continue" in r["query"] for r in bound], [False, True], "pages asked for")
    a.clear_faults()
    a.requests.clear()
    a.inject("GET", r"^/api/v1/pods$", 0, times=None, query={"continue": None})
    p = gpusched(a, "nodes")
    util.check_eq(p.returncode, 1, "dropped connection on page 2")
    lines = p.stderr.splitlines()
    if len(lines) != 1 or not lines[0].startswith("gpusched: cannot list pods: "):
        raise AssertionError(p.stderr)


def test_all_namespaces_and_n():
    a = api()
    p = gpusched(a, "simulate", "-A", "-o", "json")
    util.check_eq(sorted(e["pod"] for e in json.loads(p.stdout)["scheduled"]),
                  ["ml/train", "web/frontend"], "-A")
    p = gpusched(a, "simulate", "-n", "web", "-o", "json")
    util.check_eq([e["pod"] for e in json.loads(p.stdout)["scheduled"]], ["web/frontend"], "-n web")


def test_files_on_top_of_the_cluster():
    a = api()
    extra = os.path.join(_tmp, "extra.json")
    with open(extra, "w") as f:
        json.dump(pod("ml", "extra", 2), f)
    p = gpusched(a, "simulate", "-f", extra, "-o", "json")
    util.check_eq(p.returncode, 0, "exit (%s)" % p.stderr)
    sim = {e["pod"]: e["node"] for e in json.loads(p.stdout)["scheduled"]}
    util.check_eq(sorted(sim), ["ml/extra", "ml/train"], "cluster and file")
    # a file pod is explained after the pending pods ahead of it, the cluster's (ml/train,
    # first in input order) as well as the files', as simulate places them
    p = gpusched(a, "explain", "-f", extra, "extra", "-o", "json")
    doc = json.loads(p.stdout)
    util.check_eq(doc["podsAhead"], 1, "the cluster's pending pod is ahead")
    util.check_eq(doc["result"]["node"], sim["ml/extra"], "simulate's node")


def test_unmodelled_kinds_warn():
    """The cluster's claims and storage classes are read for VolumeBinding (a missing claim, an
    unbound Immediate one: kube-scheduler's PreFilter texts); CSINodes are read for
    NodeVolumeLimits (no warning any more); the CSI kinds the double does not serve are
    skipped without a word."""
    a = api()
    a.add(pod("ml", "with-claim", 1, extra_spec={"volumes": [
        {"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}))
    a.add(pod("ml", "immediate", 1, extra_spec={"volumes": [
        {"name": "d", "persistentVolumeClaim": {"claimName": "imm"}}]}))
    a.add({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "std"},
           "provisioner": "disk.csi.example.com", "volumeBindingMode": "Immediate"})
    a.add({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "imm", "namespace": "ml"},
           "spec": {"storageClassName": "std", "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}}}})
    a.add({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n0"},
           "spec": {"drivers": []}})
    a.inject("GET", r"poddisruptionbudgets", 403, times=None, message="forbidden by test")
    p = gpusched(a, "simulate", "-o", "json")
    util.check_eq(p.returncode, 0, "exit (%s)" % p.stderr)
    if "not modelled" in p.stderr or "CSI" in p.stderr:
        raise AssertionError(p.stderr)
    msgs = {u["pod"]: u["message"] for u in json.loads(p.stdout)["unschedulable"]}
    util.check_eq(msgs.get("ml/with-claim"), "0/3 nodes are available: persistentvolumeclaim "
                  "\"data\" not found. not found", "missing claim")
    util.check_eq(msgs.get("ml/immediate"), "0/3 nodes are available: pod has unbound immediate "
                  "PersistentVolumeClaims. not found", "unbound Immediate claim")
    if "gpusched: warning: cannot list pod disruption budgets (forbidden by test): preemption " \
            "may pick victims they protect" not in p.stderr:
        raise AssertionError(p.stderr)


def test_list_errors_are_one_line():
    a = api()
    a.inject("GET", r"^/api/v1/pods$", 410, times=None, reason="Expired", message="too old")
    p = gpusched(a, "nodes")
    util.check_eq((p.returncode, p.stderr), (1, "gpusched: cannot list pods: too old\n"), "410")
    a.clear_faults()
    a.inject("GET", r"^/api/v1/nodes$", 0, times=None)
    p = gpusched(a, "nodes")
    util.check_eq(p.returncode, 1, "dropped connection")
    lines = p.stderr.splitlines()
    if len(lines) != 1 or not lines[0].startswith("gpusched: cannot list nodes: "):
        raise AssertionError(p.stderr)


def test_answers_that_ask_to_be_retried():
    """429 and 5xx with Retry-After (API Priority and Fairness under load) are sent again after
    the wait, up to 10 times, as kubectl's client does; without the header, or past the tenth,
    the list fails with the server's message."""
    import time
    a = api()
    a.inject("GET", r"^/api/v1/pods$", 429, times=2, retry_after=1, message="too many requests, please try again later")
    a.inject("GET", r"^/api/v1/nodes$", 503, times=1, retry_after=0, message="busy")
    t = time.monotonic()
    p = gpusched(a, "nodes", "-o", "name")
    took = time.monotonic() - t
    util.check_eq((p.returncode, p.stderr), (0, ""), "retried")
    util.check_eq(p.stdout.split(), ["node/n0", "node/n1", "node/n2"], "nodes")
    bound = [r for r in pod_lists(a) if r["path"] == "/api/v1/pods"]
    util.check_eq(len(bound), 3, "the pods asked for three times")
    if took < 2:
        raise AssertionError("the waits of Retry-After: 1 were not kept: %.2fs" % took)
    a.clear_faults()
    a.requests.clear()
    a.inject("GET", r"^/api/v1/nodes$", 503, times=1, message="etcd is down")
    p = gpusched(a, "nodes")
    util.check_eq((p.returncode, p.stderr), (1, "gpusched: cannot list nodes: etcd is down\n"),
                  "no Retry-After: no retry")
    a.clear_faults()
    a.requests.clear()
    a.inject("GET", r"^/api/v1/nodes$", 429, times=None, retry_after=0, message="throttled")
    p = gpusched(a, "nodes")
    util.check_eq((p.returncode, p.stderr), (1, "gpusched: cannot list nodes: throttled\n"),
                  "the eleventh answer is the error")
    util.check_eq(len([r for r in a.requests if r["path"] == "/api/v1/nodes"]), 11, "1 + 10 retries")


def test_bad_live_flags():
    a = api()
    p = gpusched(a, "simulate", "--context", "nope")
    util.check_eq(p.returncode, 1, "exit")
    if "context \"nope\" not found" not in p.stderr or len(p.stderr.splitlines()) != 1:
        raise AssertionError(p.stderr)
    p = gpusched(a, "explain", "-l", "a in (", "p")
    util.check_eq(p.returncode, 2, "bad -l")
    if not p.stderr.startswith('gpusched: invalid argument "a in (" for "-l, --selector" flag: '):
        raise AssertionError(p.stderr)
    p = gpusched(a, "capacity", "-f", "x", "--max", "0")
    util.check_eq(p.returncode, 2, "bad --max")
    util.check_eq(p.stderr.splitlines()[0], 'gpusched: invalid argument "0" for "--max" flag: '
                  'must be a positive integer', "--max")


def test_dra_objects_are_read_as_stored():
    """A DeviceClass the API server stored under other rules (its selector compiles in the
    stored-expressions environment, not in a new object's: `dyn(...)` is not a bool) is read
    as kube-scheduler reads it, not refused as a new object from a file would be; the
    resource.k8s.io lists come from the watch cache as the others."""
    a = api()
    sel = 'dyn(device.driver == "gpu.example.com")'
    cls = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
           "metadata": {"name": "stored"},
           "spec": {"selectors": [{"cel": {"expression": sel}}]}}
    a.add(cls)
    a.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
           "metadata": {"name": "n0-gpu"},
           "spec": {"driver": "gpu.example.com", "nodeName": "n0",
                    "pool": {"name": "n0", "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": "gpu-0"}]}})
    p = gpusched(a, "devices", "--class", "stored", "-o", "json")
    util.check_eq((p.returncode, json.loads(p.stdout or "{}")),
                  (0, {"devices": [{"node": "n0", "driver": "gpu.example.com", "pool": "n0",
                                    "device": "gpu-0"}], "errors": []}),
                  "devices of the stored class (%s)" % p.stderr)
    lists = [r for r in a.requests if r["method"] == "GET" and "/resource.k8s.io/" in r["path"]]
    util.check_eq(sorted((r["path"].rsplit("/", 1)[1], r["query"].get("resourceVersion"))
                         for r in lists),
                  [(k, "0") for k in ("deviceclasses", "devicetaintrules", "resourceclaims",
                                      "resourceclaimtemplates", "resourceslices")], "lists")
    f = os.path.join(_tmp, "class.json")
    with open(f, "w") as out:
        json.dump(cls, out)
    p = subprocess.run([util.binary("gpusched"), "devices", "-f", f], capture_output=True,
                       text=True, timeout=60)
    util.check_eq(p.returncode, 1, "the same class as a new object (%s)" % p.stderr)
    if "must evaluate to bool or the unknown type, not dyn" not in p.stderr:
        raise AssertionError(p.stderr)
