"""gpusched's offline commands on a live cluster, against the real kube-apiserver (k8s_util):
the state read through paginated lists by a ServiceAccount bound only to the read-only
ClusterRole of deploy/gpusched/readonly-rbac.yaml, credentials from an exec plugin printing that
ServiceAccount's token, `kubectl gpusched` through the real kubectl, explain of a pod and of a
Deployment's pending pods, capacity, and the FailedScheduling message compared with the one
the real kube-scheduler writes for the same pod."""
import json
import os
import subprocess

import k8s_util
import util

NS = "live-ml"
_tmp = k8s_util.tmpdir("k8s-live-")
_state = {}

BIN = util.binary("gpusched")


def gpu_pod(name, gpus, node=None, ns=NS, priority_class=None, labels=None):
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
         "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                  "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}}
    if node:
        p["spec"]["nodeName"] = node
    if priority_class:
        p["spec"]["priorityClassName"] = priority_class
    return p


def c():
    """The cluster, set up once: 3 nodes (4, 2 and 0 GPUs), 3 GPUs in use on gpu-1, a pending
    4-GPU pod and a Deployment of two pending 2-GPU pods, the read-only role bound to a
    ServiceAccount."""
    cl = k8s_util.cluster("live")
    if _state:
        return cl
    for name, gpus in (("gpu-1", 4), ("gpu-2", 2), ("cpu-1", 0)):
        cl.create("/api/v1/nodes", k8s_util.gpu_node(name, gpus=gpus))
    cl.wait_nodes_ready(["gpu-1", "gpu-2", "cpu-1"])
    cl.kubectl("create", "namespace", NS)
    cl.apply({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
              "metadata": {"name": "doomed"}, "value": 10})
    cl.apply(gpu_pod("running-a", 3, node="gpu-1", priority_class="doomed"))
    # the class goes after admission gave the pod its priority: gpusched must not abort on it
    cl.kubectl("delete", "priorityclass", "doomed")
    cl.apply(gpu_pod("want-4", 4))
    cl.apply({"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "web", "namespace": NS},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{
                                        "name": "c", "image": "registry.k8s.io/pause:3.10",
                                        "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}}}})
    k8s_util.wait_for("the Deployment's 2 pods", lambda: len(cl.pods(NS, "app=web")) == 2)
    cl.apply_file("deploy/gpusched/readonly-rbac.yaml")
    cl.kubectl("create", "serviceaccount", "viewer", "-n", "default")
    cl.kubectl("create", "clusterrolebinding", "viewer-gpusched",
               "--clusterrole=gpusched-readonly", "--serviceaccount=default:viewer")
    _state["kc"] = cl.sa_kubeconfig("default", "viewer")
    return cl


def env(**extra):
    e = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    e["HOME"] = _tmp
    e.update(extra)
    return e


def gpusched(*args, kubeconfig=None, **kw):
    kc = kubeconfig or _state["kc"]
    return subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=120,
                          env=env(KUBECONFIG=kc, **kw))


def ok(p, what):
    if p.returncode != 0:
        raise AssertionError("%s: exit %d: %s" % (what, p.returncode, p.stderr))
    return p


def test_simulate_reads_the_cluster_with_the_readonly_role():
    c()
    p = ok(gpusched("simulate", "-n", NS, "-o", "json"), "simulate")
    doc = json.loads(p.stdout)
    placed = {e["pod"]: e["node"] for e in doc["scheduled"]}
    # gpu-1 has 1 GPU free, gpu-2 has 2: one 2-GPU replica fits (on gpu-2), the other and the
    # 4-GPU pod do not
    util.check_eq(sorted(placed.values()), ["gpu-2"], "placements")
    util.check_eq(len(doc["unschedulable"]), 2, "unschedulable")
    util.check_eq(NS + "/want-4" in [e["pod"] for e in doc["unschedulable"]], True, "want-4")
    if "name a PriorityClass that does not exist (first: %s/running-a names doomed)" % NS not in p.stderr:
        raise AssertionError("no warning for the deleted class: %r" % p.stderr)
    # the table ends with the summary line
    p = ok(gpusched("simulate", "-n", NS), "simulate table")
    util.check_eq(p.stdout.splitlines()[-1], "1 scheduled, 2 pending, 0 preempted", "summary")


def test_without_the_role_one_clear_line():
    cl = c()
    kc = cl.sa_kubeconfig("default", "nobody")
    p = gpusched("nodes", kubeconfig=kc)
    util.check_eq(p.returncode, 1, "exit")
    lines = p.stderr.splitlines()
    if len(lines) != 1 or not lines[0].startswith("gpusched: cannot list priority classes: ") \
            or "forbidden" not in lines[0]:
        raise AssertionError(p.stderr)


def test_explain_pod_and_deployment():
    c()
    p = ok(gpusched("explain", "pod/want-4", "-n", NS), "explain")
    first = p.stdout.splitlines()[0]
    if not first.startswith("Pod %s/want-4 cannot be scheduled: 0/3 nodes are available: " % NS):
        raise AssertionError(first)
    if "Insufficient nvidia.com/gpu" not in p.stdout:
        raise AssertionError(p.stdout)
    _state["want4"] = json.loads(ok(gpusched("explain", "want-4", "-n", NS, "-o", "json"),
                                    "explain json").stdout)["result"]["message"]
    p = ok(gpusched("explain", "deployment/web", "-n", NS, "-o", "json"), "explain deployment")
    doc = json.loads(p.stdout)
    util.check_eq(doc["pendingPods"], 2, "pending pods of the Deployment")
    # the replicas are placed together, as simulate places them: the first takes gpu-2's two
    # GPUs, the second finds no room and says why
    util.check_eq([d["result"]["status"] for d in doc["pods"]], ["Scheduled", "Unschedulable"],
                  "replicas")
    util.check_eq(doc["pods"][0]["result"]["node"], "gpu-2", "the first replica's node")
    sim = json.loads(ok(gpusched("simulate", "-n", NS, "-o", "json"), "simulate").stdout)
    util.check_eq(doc["pods"][1]["result"]["message"],
                  {e["pod"]: e["message"] for e in sim["unschedulable"]}[doc["pods"][1]["pod"]],
                  "the second replica's message is simulate's")
    p = ok(gpusched("explain", "deployment/web", "-n", NS), "explain deployment table")
    tail = p.stdout.splitlines()[-4:]
    util.check_eq(tail[0], "Summary: 1 of 2 pod(s) would be scheduled, placed together in queue order:",
                  "summary")
    util.check_eq([l.split()[1:] for l in tail[2:]], [["Scheduled", "gpu-2"], ["Unschedulable", "<none>"]],
                  "summary rows")
    p = ok(gpusched("explain", "deploy/web", "-n", NS, "-l", "kubernetes.io/hostname=gpu-1"),
           "explain -l")
    if "Nodes shown (-l kubernetes.io/hostname=gpu-1): 1 of 3." not in p.stdout:
        raise AssertionError(p.stdout)
    p = gpusched("explain", "pod/running-a", "-n", NS)
    util.check_eq((p.returncode, p.stderr.splitlines()[-1]),
                  (1, "gpusched: pod %s/running-a is already bound to node gpu-1 through "
                      "spec.nodeName; kube-scheduler never schedules it" % NS), "bound pod")
    p = gpusched("explain", "%s/want-4" % NS, "-n", "default")
    util.check_eq((p.returncode, p.stderr.splitlines()[-1]),
                  (1, "gpusched: pod %s/want-4 is pending, but the pending pods read are those of "
                      "namespace default: pass -n %s (or -A)" % (NS, NS)), "another namespace")
    p = gpusched("explain", "statefulset/nope", "-n", NS)
    util.check_eq((p.returncode, p.stderr.splitlines()[-1]),
                  (1, 'gpusched: statefulsets "nope" not found in namespace "%s"' % NS),
                  "missing workload")


def test_explain_says_what_simulate_says_for_every_pending_pod():
    """One question, one answer: for each pending pod of the cluster, explain's result (the
    node, or the FailedScheduling message) is simulate's."""
    c()
    sim = json.loads(ok(gpusched("simulate", "-n", NS, "-o", "json"), "simulate").stdout)
    want = {e["pod"]: ("Scheduled", e["node"]) for e in sim["scheduled"]}
    want.update({e["pod"]: ("Unschedulable", e["message"]) for e in sim["unschedulable"]})
    util.check_eq(len(want), 3, "pending pods")
    for pod, (status, what) in sorted(want.items()):
        r = json.loads(ok(gpusched("explain", pod, "-o", "json"), "explain " + pod).stdout)["result"]
        util.check_eq((r["status"], r.get("node") or r.get("message")), (status, what), pod)


def test_capacity_on_the_cluster():
    c()
    spec = os.path.join(_tmp, "one-gpu.yaml")
    with open(spec, "w") as f:
        json.dump(gpu_pod("one-gpu", 1, ns="default"), f)
    doc = json.loads(ok(gpusched("capacity", "-f", spec, "-o", "json"), "capacity").stdout)
    s = doc["specs"][0]
    util.check_eq((s["copies"], sorted((n["node"], n["copies"]) for n in s["nodes"])),
                  (3, [("gpu-1", 1), ("gpu-2", 2)]), "copies")
    util.check_eq(s["stoppedBy"]["reason"], "Unschedulable", "stop")
    util.check_eq(s["gpus"]["free"], 0, "no GPU left")


def test_exec_plugin_with_a_service_account_token():
    cl = c()
    token = cl.token("default", "viewer")
    tok_file = os.path.join(_tmp, "sa-token")
    with open(tok_file, "w") as f:
        f.write(token)
    plugin = os.path.join(_tmp, "sa-plugin")
    with open(plugin, "w") as f:
        f.write("#!/bin/sh\nprintf '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
                "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%%s\"}}' \"$(cat %s)\"\n"
                % tok_file)
    os.chmod(plugin, 0o755)
    kc = cl.write_kubeconfig(os.path.join(_tmp, "kc-exec"), user={"exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": plugin,
        "interactiveMode": "Never"}})
    p = ok(gpusched("nodes", "-o", "name", kubeconfig=kc), "nodes through the exec plugin")
    util.check_eq(p.stdout, "node/cpu-1\nnode/gpu-1\nnode/gpu-2\n", "nodes")
    if token in p.stdout + p.stderr:
        raise AssertionError("token printed")


def test_kubectl_plugin():
    c()
    bindir = os.path.join(_tmp, "bin")
    os.makedirs(bindir, exist_ok=True)
    link = os.path.join(bindir, "kubectl-gpusched")
    if not os.path.exists(link):
        os.symlink(BIN, link)
    e = env(KUBECONFIG=_state["kc"], PATH=bindir + ":" + os.environ.get("PATH", ""))
    p = subprocess.run([k8s_util.KUBECTL, "gpusched", "explain", "pod/want-4", "-n", NS, "-o",
                        "yaml"], capture_output=True, text=True, timeout=120, env=e)
    ok(p, "kubectl gpusched explain")
    if "\npod: %s/want-4\n" % NS not in p.stdout or not p.stdout.startswith("verdict: "):
        raise AssertionError(p.stdout)
    p = subprocess.run([k8s_util.KUBECTL, "gpusched", "nodes", "--no-headers", "-L",
                        "kubernetes.io/hostname"], capture_output=True, text=True, timeout=120, env=e)
    ok(p, "kubectl gpusched nodes")
    util.check_eq([l.split()[0] for l in p.stdout.splitlines()], ["cpu-1", "gpu-1", "gpu-2"], "rows")
    p = subprocess.run([k8s_util.KUBECTL, "gpusched", "simulate", "--bogus"], capture_output=True,
                       text=True, timeout=120, env=e)
    util.check_eq(p.returncode, 2, "usage error")
    if "See 'kubectl gpusched simulate --help' for usage." not in p.stderr:
        raise AssertionError(p.stderr)


SPREAD_NS = "live-spread"


def small_pod(name, labels, node=None, affinity=None):
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": name, "namespace": SPREAD_NS, "labels": labels},
         "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                  "resources": {"requests": {"cpu": "100m"}}}]}}
    if node:
        p["spec"]["nodeName"] = node
    if affinity:
        p["spec"]["affinity"] = affinity
    return p


def spread_cluster():
    """What the modelled plugins read besides nodes and pods, in namespace live-spread
    (labelled team=x): a Service over app=s with two bound pods on gpu-1 and a pending one; a
    ReplicaSet of app=r (its pod pending, made by the controller manager) that adopts a bound
    app=r pod on gpu-2; a pending pod whose required pod affinity finds app=s through a
    namespaceSelector on team=x; a PodDisruptionBudget."""
    cl = c()
    if "spread" in _state:
        return cl
    cl.apply({"apiVersion": "v1", "kind": "Namespace",
              "metadata": {"name": SPREAD_NS, "labels": {"team": "x"}}})
    cl.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": SPREAD_NS},
              "spec": {"selector": {"app": "s"}, "ports": [{"port": 80}]}})
    for i in (1, 2):
        cl.apply(small_pod("s-old-%d" % i, {"app": "s"}, node="gpu-1"))
    cl.apply(small_pod("s-new", {"app": "s"}))
    cl.apply(small_pod("r-old", {"app": "r"}, node="gpu-2"))
    cl.apply({"apiVersion": "apps/v1", "kind": "ReplicaSet",
              "metadata": {"name": "rs", "namespace": SPREAD_NS},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "r"}},
                       "template": {"metadata": {"labels": {"app": "r", "tier": "t"}},
                                    "spec": small_pod("x", {})["spec"]}}})
    k8s_util.wait_for("the ReplicaSet's pod",
                      lambda: [p for p in cl.pods(SPREAD_NS, "app=r,tier=t")] or None)
    term = {"labelSelector": {"matchLabels": {"app": "s"}},
            "namespaceSelector": {"matchLabels": {"team": "x"}},
            "topologyKey": "kubernetes.io/hostname"}
    cl.apply(small_pod("with-s", {"app": "w"},
                       affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}))
    cl.apply({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
              "metadata": {"name": "s", "namespace": SPREAD_NS},
              "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "s"}}}})
    _state["spread"] = True
    return cl


def spread_scores(doc):
    """node -> PodTopologySpread's normalized score (None: the plugin did not score)"""
    return {n["node"]: ([x["normalized"] for x in n.get("scores", [])
                         if x["plugin"] == "PodTopologySpread"] or [None])[0]
            for n in doc["nodes"] if n["feasible"]}


def test_live_input_reads_services_controllers_namespaces_and_pdbs():
    """The cluster's Services and ReplicaSets give a pod kube-scheduler's default topology
    spreading, its Namespaces' labels reach pod affinity's namespaceSelector, and its
    PodDisruptionBudgets are read, not warned about. (The ReplicaSet of 2 adopts the bound
    app=r pod, an orphan its selector matches, and creates one.)"""
    cl = spread_cluster()
    p = ok(gpusched("explain", "pod/s-new", "-n", SPREAD_NS, "-o", "json"), "explain s-new")
    sc = spread_scores(json.loads(p.stdout))
    # the Service's two pods on gpu-1: the spreading score is lowest there
    if not sc["gpu-1"] < sc["gpu-2"] == sc["cpu-1"]:
        raise AssertionError("PodTopologySpread scores %r" % sc)
    if "PodDisruptionBudget" in p.stderr or "not modelled" in p.stderr:
        raise AssertionError("warnings: %r" % p.stderr)
    rpod = cl.pods(SPREAD_NS, "app=r,tier=t")[0]["metadata"]["name"]
    sc = spread_scores(json.loads(ok(gpusched("explain", "pod/" + rpod, "-n", SPREAD_NS, "-o",
                                              "json"), "explain the ReplicaSet's pod").stdout))
    # the ReplicaSet selects app=r: the bound app=r pod on gpu-2 counts, though not its own
    if not sc["gpu-2"] < sc["gpu-1"] == sc["cpu-1"]:
        raise AssertionError("PodTopologySpread scores %r" % sc)
    # simulate does not expand the cluster's ReplicaSet again: its one pod, no more
    sim = json.loads(ok(gpusched("simulate", "-n", SPREAD_NS, "-o", "json"), "simulate").stdout)
    names = sorted(e["pod"] for e in sim["scheduled"] + sim["unschedulable"])
    util.check_eq(names, sorted(SPREAD_NS + "/" + n for n in ("s-new", rpod, "with-s")), "pods")
    placed = {e["pod"]: e["node"] for e in sim["scheduled"]}
    # with-s comes after s-new in the queue, which simulate (and so explain) places first: the
    # pods of app=s are then on gpu-1 (found through the namespaceSelector) and s-new's node
    doc = json.loads(ok(gpusched("explain", "pod/with-s", "-n", SPREAD_NS, "-o", "json"),
                        "explain with-s").stdout)
    util.check_eq(doc["result"].get("node"), placed[SPREAD_NS + "/with-s"], "with-s's node")
    util.check_eq(sorted(n["node"] for n in doc["nodes"] if n["feasible"]),
                  sorted({"gpu-1", placed[SPREAD_NS + "/s-new"]}), "feasible")


def test_live_input_with_an_older_role_warns_what_it_cannot_read():
    """A read-only role made for an older gpusched (no namespaces, services, controllers,
    PodDisruptionBudgets or resource.k8s.io kinds): each missing list is one warning saying what
    is lost, not a failure (the DRA kinds: one, for the first)."""
    cl = spread_cluster()
    cl.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
              "metadata": {"name": "gpusched-readonly-old"},
              "rules": [{"apiGroups": [""], "resources": ["nodes", "pods"], "verbs": ["get", "list"]},
                        {"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"],
                         "verbs": ["list"]}]})
    cl.kubectl("create", "serviceaccount", "old-viewer", "-n", "default")
    cl.kubectl("create", "clusterrolebinding", "old-viewer-gpusched",
               "--clusterrole=gpusched-readonly-old", "--serviceaccount=default:old-viewer")
    kc = cl.sa_kubeconfig("default", "old-viewer")
    p = ok(gpusched("explain", "pod/s-new", "-n", SPREAD_NS, "-o", "json", kubeconfig=kc),
           "explain with the old role")
    warned = [l for l in p.stderr.splitlines() if l.startswith("gpusched: warning: cannot list ")]
    util.check_eq([l.split(" (")[0] for l in warned],
                  ["gpusched: warning: cannot list " + w for w in (
                      "namespaces", "pod disruption budgets", "services",
                      "replication controllers", "replica sets", "stateful sets",
                      "device classes")], "warnings")
    if "the default topology spreading of their pods is not modelled" not in warned[2]:
        raise AssertionError(warned[2])
    # without the Service the pod has no default constraint: the plugin does not score
    util.check_eq(set(spread_scores(json.loads(p.stdout)).values()), {None}, "spreading")


def test_zz_failed_scheduling_message_is_kube_schedulers():
    """Last (tests run in name order): the real kube-scheduler takes the cluster over and
    writes its own event for want-4, which must be the message explain gave."""
    cl = c()
    if "want4" not in _state:
        test_explain_pod_and_deployment()
    ks = k8s_util.kube_scheduler(cl)
    try:
        def event():
            evs = [e for e in cl.events(NS, "FailedScheduling")
                   if e["regarding"]["name"] == "want-4"]
            return evs[-1]["note"] if evs else None
        note = k8s_util.wait_for("kube-scheduler's FailedScheduling for want-4", event)
    finally:
        ks.stop()
    util.check_eq(note, _state["want4"], "message")


def test_capacity_agrees_with_kube_scheduler():
    """Offline: the real kube-scheduler (the oracle) given capacity's copies plus one more
    schedules exactly that many and fails the next with capacity's message."""
    d = os.path.join(_tmp, "cap")
    os.makedirs(d, exist_ok=True)
    nodes = [k8s_util.gpu_node("g8", gpus=8), k8s_util.gpu_node("g3", gpus=3),
             k8s_util.gpu_node("g1", gpus=1),
             k8s_util.gpu_node("t4", gpus=4, taints=[{"key": "dedicated", "value": "x",
                                                      "effect": "NoSchedule"}])]
    bound = [gpu_pod("busy", 3, node="g8", ns="default")]
    with open(os.path.join(d, "cluster.json"), "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": nodes + bound}, f)
    spec = gpu_pod("two", 2, ns="default")
    with open(os.path.join(d, "spec.json"), "w") as f:
        json.dump(spec, f)
    p = ok(subprocess.run([BIN, "capacity", "-f", os.path.join(d, "cluster.json"), "-f",
                           os.path.join(d, "spec.json"), "-o", "json"], capture_output=True,
                          text=True, timeout=60), "capacity")
    s = json.loads(p.stdout)["specs"][0]
    # g8: 5 free -> 2 copies, g3: 1, g1: none, t4: tainted
    util.check_eq(s["copies"], 3, "copies")
    # 1 GPU left on each of g8, g3, g1 (too few for a copy), 4 on t4 (its taint)
    util.check_eq(s["gpus"], {"perCopy": 2, "free": 7, "stranded": 7, "strandedNodes": 4,
                              "fragmented": 3, "fragmentedNodes": 3}, "GPU figures")
    copies = []
    for i in range(s["copies"] + 1):
        c2 = json.loads(json.dumps(spec))
        c2["metadata"]["name"] = "two-capacity-%d" % (i + 1)
        copies.append(c2)
    with open(os.path.join(d, "copies.json"), "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": copies}, f)
    p = ok(subprocess.run([os.path.join(k8s_util.K8S, "kube-scheduler-oracle"), "-f",
                           os.path.join(d, "cluster.json"), "-f", os.path.join(d, "copies.json"),
                           "-o", "json"], capture_output=True, text=True, timeout=300), "oracle")
    doc = json.loads(p.stdout)
    util.check_eq(len(doc["scheduled"]), s["copies"], "the oracle's scheduled copies")
    util.check_eq(len(doc["unschedulable"]), 1, "the oracle's unschedulable copies")
    util.check_eq([u["message"] for u in doc["unschedulable"]], [s["stoppedBy"]["message"]],
                  "the next copy's message")


def test_volume_limits_and_capacity_with_the_readonly_role():
    """The read-only role lists the storage.k8s.io objects NodeVolumeLimits and VolumeBinding
    read (CSINodes, CSIDrivers, CSIStorageCapacities, VolumeAttachments): an attach limit of 0
    on gpu-1, capacity for 5Gi on gpu-2 only. The pods name a scheduler that does not run, so
    only gpusched places them."""
    cl = c()
    ns = "live-vol"
    if not _state.get("vol"):
        cl.kubectl("create", "namespace", ns)
        for o in (
                {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                 "metadata": {"name": "live-wffc"}, "provisioner": "csi.live.example",
                 "volumeBindingMode": "WaitForFirstConsumer"},
                {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                 "metadata": {"name": "csi.live.example"}, "spec": {"storageCapacity": True}},
                {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "gpu-1"},
                 "spec": {"drivers": [{"name": "csi.live.example", "nodeID": "gpu-1",
                                       "allocatable": {"count": 0}}]}},
                {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                 "metadata": {"name": "gpu-2-wffc", "namespace": ns},
                 "storageClassName": "live-wffc", "capacity": "5Gi",
                 "nodeTopology": {"matchLabels": {"kubernetes.io/hostname": "gpu-2"}}},
                {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                 "metadata": {"name": "va-gpu-1"},
                 "spec": {"attacher": "csi.live.example", "nodeName": "gpu-1",
                          "source": {"persistentVolumeName": "pv-elsewhere"}}}):
            cl.apply(o)
        for claim, size in (("small", "1Gi"), ("big", "10Gi")):
            cl.apply({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                      "metadata": {"name": claim, "namespace": ns},
                      "spec": {"storageClassName": "live-wffc", "accessModes": ["ReadWriteOnce"],
                               "resources": {"requests": {"storage": size}}}})
            cl.apply({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": "want-" + claim, "namespace": ns},
                      "spec": {"schedulerName": "not-running",
                               "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
                               "volumes": [{"name": "d",
                                            "persistentVolumeClaim": {"claimName": claim}}]}})
        _state["vol"] = True
    p = ok(gpusched("simulate", "-n", ns, "-o", "json"), "simulate")
    if "cannot list" in p.stderr or "not modelled" in p.stderr:
        raise AssertionError(p.stderr)
    doc = json.loads(p.stdout)
    util.check_eq({e["pod"]: e["node"] for e in doc["scheduled"]}, {ns + "/want-small": "gpu-2"},
                  "placements")
    util.check_eq([e["message"] for e in doc["unschedulable"]],
                  ["0/3 nodes are available: 1 node(s) exceed max volume count, 2 node(s) did not "
                   "have enough free storage. preemption: 0/3 nodes are available: 1 No "
                   "preemption victims found for incoming pod, 2 Preemption is not helpful for "
                   "scheduling."], "want-big")
