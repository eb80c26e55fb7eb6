"""Dynamic Resource Allocation read from a live cluster, against the real kube-apiserver
(k8s_util; the controller manager's resource-claim controller makes the template pods' claims):
simulate on the cluster, read by a ServiceAccount bound only to the read-only ClusterRole of
deploy/gpusched/readonly-rbac.yaml, gives the answer simulate gives on the same objects dumped
to a file (placements, messages, the devices of each claim); `gpusched devices --selector` on
the cluster lists exactly the devices the real CEL (build/k8s/cel-oracle:
k8s.io/dynamic-resource-allocation/cel v0.37.2) matches on the slices as the API server stored
them, and the devices whose evaluation fails with its error text."""
import json
import os
import subprocess

import k8s_util
import util

NS = "dra-live"
DRIVER = "gpu.example.com"
_tmp = k8s_util.tmpdir("k8s-dra-live-")
_state = {}

BIN = util.binary("gpusched")
ORACLE = os.path.join(k8s_util.K8S, "cel-oracle")


def slice_(name, driver, devices, node=None):
    spec = {"driver": driver, "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
            "devices": devices}
    if node:
        spec["nodeName"] = node
    else:
        spec["allNodes"] = True
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name}, "spec": spec}


def gpu(name, product, memory, version="1.2.3"):
    return {"name": name,
            "attributes": {"productName": {"string": product},
                           "driverVersion": {"version": version},
                           DRIVER + "/index": {"int": int(name.rsplit("-", 1)[1])}},
            "capacity": {"memory": {"value": memory}}}


def request(name, selectors, cls=DRIVER):
    return {"name": name, "exactly": {"deviceClassName": cls, "selectors": [
        {"cel": {"expression": e}} for e in selectors]}}


def pod(name, claims=None, gpus=None):
    c = {"name": "c", "image": "registry.k8s.io/pause:3.10"}
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
         "spec": {"containers": [c]}}
    if claims:
        p["spec"]["resourceClaims"] = claims
        c["resources"] = {"claims": [{"name": cl["name"]} for cl in claims]}
    if gpus:
        c["resources"] = {"limits": {"example.com/gpu": str(gpus)}}
    return p


BIG = 'device.capacity["%s"].memory.compareTo(quantity("40Gi")) >= 0' % DRIVER


def c():
    """Three nodes, none advertising a GPU: gpu-a's slice has an A100 (80Gi) and a T4 (16Gi),
    gpu-b's an A100 (40Gi) and an old GPU of 1.5Gi (the server stores 1536Mi), a fabric NIC on
    every node (another driver, no productName); a class that also serves example.com/gpu; a
    claim for the T4, a template for 40Gi or more; pods naming them, one asking for
    example.com/gpu, one whose template matches nothing left."""
    cl = k8s_util.cluster("dra-live")
    if _state:
        return cl
    for name in ("gpu-a", "gpu-b", "cpu-c"):
        cl.create("/api/v1/nodes", k8s_util.gpu_node(name, gpus=0))
    cl.wait_nodes_ready(["gpu-a", "gpu-b", "cpu-c"])
    cl.kubectl("create", "namespace", NS)
    cl.apply([
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "%s"' % DRIVER}}],
                  "extendedResourceName": "example.com/gpu"}},
        slice_("gpu-a", DRIVER, [gpu("gpu-0", "A100-SXM4-80GB", "80Gi"),
                                 gpu("gpu-1", "T4", "16Gi", "0.9.0")], node="gpu-a"),
        slice_("gpu-b", DRIVER, [gpu("gpu-0", "A100-PCIE-40GB", "40Gi", "2.0.0-rc.1"),
                                 gpu("gpu-1", "K80", "1.5Gi")], node="gpu-b"),
        slice_("fabric", "net.example.com", [{"name": "nic-0",
                                               "attributes": {"speed": {"int": 400}}}]),
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "t4", "namespace": NS},
         "spec": {"devices": {"requests": [request(
             "gpu", ['device.attributes["%s"].productName == "T4"' % DRIVER])]}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "big", "namespace": NS},
         "spec": {"spec": {"devices": {"requests": [request("gpu", [BIG])]}}}},
        pod("with-claim", claims=[{"name": "gpu", "resourceClaimName": "t4"}]),
        pod("big-1", claims=[{"name": "gpu", "resourceClaimTemplateName": "big"}]),
        pod("big-2", claims=[{"name": "gpu", "resourceClaimTemplateName": "big"}]),
        pod("big-3", claims=[{"name": "gpu", "resourceClaimTemplateName": "big"}]),
        pod("extended", gpus=1),
    ])

    def claims_made():
        pods = {p["metadata"]["name"]: p for p in cl.pods(NS)}
        return all(pods.get(n, {}).get("status", {}).get("resourceClaimStatuses")
                   for n in ("big-1", "big-2", "big-3"))
    k8s_util.wait_for("the template pods' claims", claims_made)
    cl.apply_file("deploy/gpusched/readonly-rbac.yaml")
    cl.kubectl("create", "serviceaccount", "viewer", "-n", "default")
    cl.kubectl("create", "clusterrolebinding", "viewer-gpusched",
               "--clusterrole=gpusched-readonly", "--serviceaccount=default:viewer")
    _state["kc"] = cl.sa_kubeconfig("default", "viewer")
    return cl


def gpusched(*args, kubeconfig=None):
    e = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    e["HOME"] = _tmp
    if kubeconfig is not False:
        e["KUBECONFIG"] = kubeconfig or _state["kc"]
    return subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=120, env=e)


def ok(p, what):
    if p.returncode != 0:
        raise AssertionError("%s: exit %d: %s" % (what, p.returncode, p.stderr))
    if "cannot list" in p.stderr:
        raise AssertionError("%s: the read-only role is not enough: %s" % (what, p.stderr))
    return p


def dump(cl):
    """The cluster's objects that simulate reads here, as one List in a file."""
    path = os.path.join(_tmp, "dump.json")
    out = cl.kubectl("get", "nodes,deviceclasses,resourceslices,devicetaintrules,resourceclaims,"
                     "resourceclaimtemplates,pods", "-A", "-o", "json")
    with open(path, "w") as f:
        f.write(out if isinstance(out, str) else out.stdout)
    return path


def answer(doc):
    placed = {e["pod"]: (e["node"], sorted((d["request"], d["driver"], d["pool"], d["device"])
                                           for d in e.get("claims", [])))
              for e in doc["scheduled"]}
    pending = {e["pod"]: e["message"] for e in doc["unschedulable"]}
    return placed, pending


def test_live_simulate_of_dra_pods_is_the_answer_from_files():
    cl = c()
    live = json.loads(ok(gpusched("simulate", "-n", NS, "-o", "json"), "live simulate").stdout)
    files = json.loads(ok(gpusched("simulate", "-f", dump(cl), "-o", "json", kubeconfig=False),
                          "simulate on the dump").stdout)
    util.check_eq(answer(live), answer(files), "live and files")
    placed, pending = answer(live)
    # the T4 claim gets gpu-a's T4; two of the three 40Gi-or-more claims find an A100, the
    # third nothing; the extended-resource pod takes a device the class serves
    util.check_eq(placed.get(NS + "/with-claim"),
                  ("gpu-a", [("gpu", DRIVER, "gpu-a", "gpu-1")]), "the T4 claim")
    util.check_eq(sorted(placed.get(NS + "/big-%d" % i, ("-",))[0] for i in (1, 2, 3)),
                  ["-", "gpu-a", "gpu-b"], "the template claims' nodes")
    util.check_eq(sorted(pending), [NS + "/big-%d" % i for i in (1, 2, 3)
                                    if NS + "/big-%d" % i not in placed], "unschedulable")
    util.check_eq(placed.get(NS + "/extended", ("-",))[0] in ("gpu-a", "gpu-b"), True,
                  "the extended-resource pod: %r" % (placed,))


def test_an_older_role_leaves_dra_pods_pending_with_one_warning():
    cl = c()
    cl.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
              "metadata": {"name": "gpusched-readonly-nodra"},
              "rules": [{"apiGroups": [""], "resources": ["nodes", "pods", "namespaces",
                                                          "services", "replicationcontrollers"],
                         "verbs": ["list"]},
                        {"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"],
                         "verbs": ["list"]},
                        {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"],
                         "verbs": ["list"]},
                        {"apiGroups": ["apps"], "resources": ["replicasets", "statefulsets"],
                         "verbs": ["list"]}]})
    cl.kubectl("create", "serviceaccount", "nodra", "-n", "default")
    cl.kubectl("create", "clusterrolebinding", "nodra-gpusched",
               "--clusterrole=gpusched-readonly-nodra", "--serviceaccount=default:nodra")
    p = gpusched("simulate", "-n", NS, "-o", "json",
                 kubeconfig=cl.sa_kubeconfig("default", "nodra"))
    util.check_eq(p.returncode, 0, "exit: %s" % p.stderr)
    cannot = [l for l in p.stderr.splitlines() if "cannot list" in l]
    util.check_eq(len(cannot), 1, "one warning: %r" % cannot)
    if "cannot list device classes" not in cannot[0] or \
            "Dynamic Resource Allocation is not modelled" not in cannot[0]:
        raise AssertionError(cannot[0])
    if "gpusched: warning: pod %s/with-claim: spec.resourceClaims: " % NS not in p.stderr:
        raise AssertionError(p.stderr)


SELECTORS = [
    ['device.driver == "%s"' % DRIVER],
    ['device.attributes["%s"].productName.startsWith("A100")' % DRIVER],
    [BIG],
    ['device.capacity["%s"].memory.asInteger() < 2147483648' % DRIVER],
    ['device.attributes["%s"].driverVersion.isGreaterThan(semver("1.0.0"))' % DRIVER],
    ['"productName" in device.attributes["%s"]' % DRIVER],
    ['device.attributes["%s"].index == 1' % DRIVER],
    ['device.attributes["%s"].?productName.orValue("") == "T4"' % DRIVER],
    ['device.attributes["%s"].productName.lowerAscii().contains("pcie")' % DRIVER],
    ['device.driver == "%s"' % DRIVER, BIG],
    ['"productName" in device.attributes["%s"]' % DRIVER,
     'device.attributes["%s"].productName.size() > 3' % DRIVER],
    ['device.attributes["net.example.com"].speed >= 400'],
]


def oracle(expr, devices):
    """The real CEL's answer for expr on each device: (result, error) in order."""
    line = json.dumps({"id": "1", "expr": expr, "devices": devices})
    p = subprocess.run([ORACLE], input=line + "\n", capture_output=True, text=True, timeout=60)
    util.check_eq(p.returncode, 0, "cel-oracle: %s" % p.stderr)
    a = json.loads(p.stdout)
    if "results" not in a:
        raise AssertionError("cel-oracle on %r: %r" % (expr, a))
    return [(r["result"], r.get("error")) for r in a["results"]]


def test_devices_on_the_cluster_are_what_the_real_cel_matches():
    cl = c()
    ids, devices = [], []
    for s in cl.items("/apis/resource.k8s.io/v1/resourceslices"):
        for d in s["spec"].get("devices", []):
            ids.append("%s/%s/%s" % (s["spec"]["driver"], s["spec"]["pool"]["name"], d["name"]))
            devices.append({"driver": s["spec"]["driver"], "attributes": d.get("attributes", {}),
                            "capacity": d.get("capacity", {})})
    util.check_eq(len(ids), 5, "devices on the server")
    every = json.loads(ok(gpusched("devices", "-o", "json"), "devices").stdout)
    util.check_eq((sorted("%s/%s/%s" % (d["driver"], d["pool"], d["device"])
                          for d in every["devices"]), every["errors"]),
                  (sorted(ids), []), "every device")
    for sels in SELECTORS:
        # as a request: each selector in order, the first that does not hold or fails decides
        want, errors = set(), {}
        verdict = {i: True for i in ids}
        for expr in sels:
            for i, (res, err) in zip(ids, oracle(expr, devices)):
                if verdict[i] is not True:
                    continue
                verdict[i] = True if res == "true" else err if res == "runtime-error" else False
                if res not in ("true", "false", "runtime-error"):
                    raise AssertionError("%s on %s: %s %s" % (expr, i, res, err))
        want = sorted(i for i, v in verdict.items() if v is True)
        errors = {i: v for i, v in verdict.items() if isinstance(v, str)}
        args = ["devices", "-o", "json"]
        for expr in sels:
            args += ["--selector", expr]
        got = json.loads(ok(gpusched(*args), "devices %r" % sels).stdout)
        util.check_eq(sorted("%s/%s/%s" % (d["driver"], d["pool"], d["device"])
                             for d in got["devices"]), want, "devices for %r" % sels)
        util.check_eq(sorted(e["device"] for e in got["errors"]), sorted(errors),
                      "errors for %r" % sels)
        for e in got["errors"]:
            text = e["message"].split("CEL runtime error: ", 1)[-1]
            if not text.startswith(errors[e["device"]]):
                raise AssertionError("%s: %r, the real CEL says %r" % (e["device"], e["message"],
                                                                       errors[e["device"]]))
    # the class's selectors first, as a request of that class
    got = json.loads(ok(gpusched("devices", "--class", DRIVER, "--selector", BIG, "-o", "json"),
                        "devices --class").stdout)
    util.check_eq(sorted("%s/%s/%s" % (d["driver"], d["pool"], d["device"])
                         for d in got["devices"]),
                  [DRIVER + "/gpu-a/gpu-0", DRIVER + "/gpu-b/gpu-0"], "--class and --selector")
    util.check_eq(got["errors"], [], "no error: the class leaves the NIC out first")


def test_explain_and_report_read_the_dra_kinds():
    """explain's answer for each DRA pod is simulate's (both read the claims from the cluster);
    report counts the pods the DRA devices could take."""
    c()
    sim = json.loads(ok(gpusched("simulate", "-n", NS, "-o", "json"), "simulate").stdout)
    want = {e["pod"]: ("Scheduled", e["node"]) for e in sim["scheduled"]}
    want.update({e["pod"]: ("Unschedulable", e["message"]) for e in sim["unschedulable"]})
    util.check_eq(len(want), 5, "pending pods")
    for p, (status, what) in sorted(want.items()):
        r = json.loads(ok(gpusched("explain", p, "-o", "json"), "explain " + p).stdout)["result"]
        util.check_eq((r["status"], r.get("node") or r.get("message")), (status, what), p)
    page = ok(gpusched("report", "-n", NS), "report").stdout
    if "<html" not in page.lower():
        raise AssertionError(page[:200])
