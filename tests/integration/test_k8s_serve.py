"""gpusched serve against the real kube-apiserver (a local control plane, k8s_util), with a
token of its own ServiceAccount and the RBAC of deploy/gpusched/rbac.yaml as it ships:

- the seed scenario end to end: the seed's six nodes, labelled by gpulabel --oneshot (its own
  ServiceAccount), deploy/gpusched/examples/ created for real (the Deployment's pods come from
  the real controllers), tf-notebook on a Tesla-M40 node and not-in-gpu-node on the GPU-less
  worker; scaled to three replicas, the extra one's FailedScheduling event and PodScheduled
  condition read back with the real `kubectl describe pod` and `kubectl get events`, and its
  message compared with what the real kube-scheduler says on the same cluster;
- 1,000 pods on 100 nodes: none lost, none bound twice (the audit log counts the bindings),
  no node over its allocatable;
- preemption: the victim is deleted gracefully (the harness plays the kubelet), the preemptor
  nominated and bound;
- two replicas with Lease leader election: only the leader binds; killed, the other takes over.
"""
import os
import subprocess

import k8s_util
import util
from k8s_util import wait_for
from serve_util import Serve

NS, SA = "kube-system", "gpusched"
GPU_NODES = ["cn-beijing.i-2ze8o1a45qdv5q8a7luz", "cn-beijing.i-2ze8o1a45qdv5q8a7lv0"]
WORKER = "cn-beijing.i-2zej9s0zijykp9pwf7lu"
ALIYUN = ("aliyun.accelerator/nvidia_count", "aliyun.accelerator/nvidia_mem",
          "aliyun.accelerator/nvidia_name")

_tmp = k8s_util.tmpdir("k8s-serve-tmp-")
_state = {}


def setup():
    if not _state:
        c = k8s_util.cluster("serve")
        c.apply_file("deploy/gpusched/rbac.yaml")
        c.apply_file("deploy/gpulabel/rbac.yaml")
        _state["c"] = c
        _state["kc"] = c.sa_kubeconfig(NS, SA)
    return _state["c"], _state["kc"]


def deployment_args():
    """The serve flags of deploy/gpusched/deployment.yaml, but for the metrics address."""
    c, _ = setup()
    dep = c.objects("deploy/gpusched/deployment.yaml")[0]
    args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
    util.check_eq(args[0], "serve", "the Deployment's first argument")
    return [a for a in args[1:] if not a.startswith("--metrics-addr")]


def serve(args, name):
    _, kc = setup()
    return Serve(None, list(args), _tmp, name=name, kubeconfig=kc, wrap=k8s_util.PDEATHSIG)


def namespace(c, ns):
    c.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    k8s_util.wait_for("the default ServiceAccount of " + ns, lambda: c.get_or_none(
        "/api/v1/namespaces/%s/serviceaccounts/default" % ns))


def bound(pods):
    return {p["metadata"]["name"]: p["spec"]["nodeName"] for p in pods if p["spec"].get("nodeName")}


def pod_scheduled(p):
    for cond in (p.get("status") or {}).get("conditions") or []:
        if cond["type"] == "PodScheduled":
            return cond
    return None


# ---- the seed scenario -----------------------------------------------------------------------

def seed_cluster(c):
    """The seed's six nodes without the GPU labels, then gpulabel --oneshot on the two GPU
    workers with the token of gpulabel's ServiceAccount (the fake NVML is a Tesla M40)."""
    nodes = c.objects("examples/seed/cluster.yaml")
    for n in nodes:
        for k in ALIYUN:
            n["metadata"]["labels"].pop(k, None)
    c.apply(nodes)
    c.wait_nodes_ready([n["metadata"]["name"] for n in nodes])
    kc = c.sa_kubeconfig("kube-system", "gpulabel")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPULABEL_") and k not in ("NODE_NAME", "KUBECONFIG", "FAKE_NVML_CONFIG")}
    for name in GPU_NODES:
        p = subprocess.run([util.binary("gpulabel"), "--oneshot", "--node-name", name, "--kubeconfig", kc,
                            "--nvml-lib", util.fake_nvml()], capture_output=True, text=True,
                           timeout=60, env=env)
        util.check_eq(p.returncode, 0, "gpulabel on %s (stderr: %s)" % (name, p.stderr))
    out = c.kubectl("get", "nodes", "-l", "aliyun.accelerator/nvidia_name=Tesla-M40", "-o", "name")
    util.check_eq(sorted(out.split()), ["node/" + n for n in GPU_NODES], "kubectl get nodes -l ...")


def run_seed(c, ns, manifests, dead):
    """Creates the seed's workloads in ns, waits for the two pods to be placed, scales
    tf-notebook to three replicas and waits for the extra one's FailedScheduling event.
    Returns (placement {pod: node}, the pending pod, its event)."""
    namespace(c, ns)
    for m in manifests:
        c.apply_file(m, "-n", ns)
    wait_for("tf-notebook and not-in-gpu-node placed", lambda: dead() or len(bound(c.pods(ns))) == 2)
    c.kubectl("scale", "-n", ns, "deployment/tf-notebook", "--replicas=3")

    def failed():
        pend = [p for p in c.pods(ns) if not p["spec"].get("nodeName")]
        evs = c.events(ns, "FailedScheduling")
        if len(bound(c.pods(ns))) == 3 and len(pend) == 1:
            evs = [e for e in evs if e["regarding"]["name"] == pend[0]["metadata"]["name"]]
            if evs:
                return pend[0], evs[0]
        return None
    pending, event = wait_for("the extra replica's FailedScheduling event", lambda: dead() or failed())
    return bound(c.pods(ns)), pending, event


def seed():
    """The scenario, once for kube-scheduler and once for gpusched (results kept for the
    tests below)."""
    if "seed" in _state:
        return _state["seed"]
    c, _ = setup()
    seed_cluster(c)
    # the judge: the real kube-scheduler on the seed's own manifests (schedulerName default)
    ks = k8s_util.kube_scheduler(c)
    try:
        ks_place, _, ks_event = run_seed(c, "seed-kube-scheduler",
                                         ["examples/seed/tf-notebook.yaml", "examples/seed/not-in-gpu-node.yaml"],
                                         ks.alive)
    finally:
        ks.stop()
    c.kubectl("delete", "namespace", "seed-kube-scheduler", "--wait=true", timeout=120)
    # gpusched, as deploy/gpusched/deployment.yaml runs it, on deploy/gpusched/examples/
    sv = serve(deployment_args() + ["-v", "2"], "seed")
    try:
        wait_for("gpusched to lead", lambda: sv.grep("became leader"))
        place, pending, event = run_seed(c, "seed", ["deploy/gpusched/examples/tf-notebook.yaml",
                                                     "deploy/gpusched/examples/not-in-gpu-node.yaml"],
                                   sv._dead)
        describe = c.kubectl("describe", "pod", "-n", "seed", pending["metadata"]["name"])
        get_events = c.kubectl("get", "events", "-n", "seed", "--field-selector", "reason=FailedScheduling")
        pending = c.get("/api/v1/namespaces/seed/pods/" + pending["metadata"]["name"])
    finally:
        rc = sv.stop()
    _state["seed"] = dict(ks_place=ks_place, ks_event=ks_event, place=place, pending=pending,
                          event=event, describe=describe, get_events=get_events, rc=rc)
    return _state["seed"]


def seed_scenario_end_to_end():
    s = seed()
    tf = sorted(n for p, n in s["place"].items() if p.startswith("tf-notebook-"))
    util.check_eq(len(tf), 2, "bound tf-notebook replicas")
    util.check_eq(sorted(tf), sorted(GPU_NODES), "nodes of the two tf-notebook replicas")
    util.check_eq(s["place"].get("not-in-gpu-node"), WORKER, "not-in-gpu-node's node")
    util.check_eq(s["rc"], 0, "gpusched's exit status on SIGTERM")
    ev, msg = s["event"], s["event"]["note"]
    util.check_eq((ev["type"], ev["reportingController"], ev["action"]),
                  ("Warning", "gpusched", "Scheduling"), "event type, controller, action")
    cond = pod_scheduled(s["pending"])
    util.check_eq((cond["status"], cond["reason"], cond["message"]), ("False", "Unschedulable", msg),
                  "the pending replica's PodScheduled condition")
    # read back as a user would
    events_block = s["describe"].split("\nEvents:", 1)[1]
    lines = [line for line in events_block.splitlines() if "FailedScheduling" in line]
    if not lines or "gpusched" not in lines[0] or msg not in lines[0] or "Warning" not in lines[0]:
        raise AssertionError("kubectl describe pod shows no FailedScheduling event from gpusched "
                             "with %r:\n%s" % (msg, events_block))
    if "PodScheduled   False" not in s["describe"]:
        raise AssertionError("kubectl describe pod lacks PodScheduled False:\n%s" % s["describe"])
    if msg not in s["get_events"] or s["pending"]["metadata"]["name"] not in s["get_events"]:
        raise AssertionError("kubectl get events lacks the event:\n%s" % s["get_events"])


def seed_failedscheduling_message_is_kube_schedulers():
    s = seed()
    util.check_eq(sorted(s["place"].values()), sorted(s["ks_place"].values()), "nodes, against kube-scheduler's")
    util.check_eq(s["event"]["note"], s["ks_event"]["note"],
                  "FailedScheduling message, against kube-scheduler's")


def cases():
    # the seed scenario first, on the seed's six nodes alone: its message counts the nodes
    yield "seed_scenario_end_to_end", seed_scenario_end_to_end
    yield "seed_failedscheduling_message_is_kube_schedulers", seed_failedscheduling_message_is_kube_schedulers


# ---- 1,000 pods on 100 nodes -----------------------------------------------------------------

def test_thousand_pods_on_hundred_nodes_none_lost_none_bound_twice():
    c, _ = setup()
    ns = "scale"
    namespace(c, ns)
    nodes = ["scale-%03d" % i for i in range(100)]
    for name in nodes:
        c.create("/api/v1/nodes", k8s_util.gpu_node(name, gpus=0, cpu="4", memory="32Gi",
                                                    labels={"pool": "scale"}))
    c.wait_nodes_ready(nodes)

    def pod(i):
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p-%04d" % i, "labels": {"app": "scale"}},
                "spec": {"schedulerName": "gpusched", "nodeSelector": {"pool": "scale"},
                         "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                         "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]}}
    # half before serve starts (its list), half while it runs (its watch)
    for i in range(500):
        c.create("/api/v1/namespaces/%s/pods" % ns, pod(i))
    sv = serve(["--kube-api-qps", "0"], "scale")
    try:
        for i in range(500, 1000):
            c.create("/api/v1/namespaces/%s/pods" % ns, pod(i))
        wait_for("1,000 pods bound", lambda: sv._dead() or len(bound(c.pods(ns))) == 1000, timeout=300,
                 interval=0.5)
        pods = c.pods(ns)
        util.check_eq(len(pods), 1000, "pods")
        placed = bound(pods)
        util.check_eq(len(placed), 1000, "bound pods")
        per_node = {}
        for n in placed.values():
            per_node[n] = per_node.get(n, 0) + 1
        if set(per_node) - set(nodes):
            raise AssertionError("pods outside the pool: %s" % sorted(set(per_node) - set(nodes)))
        over = {n: k for n, k in per_node.items() if k > 40}  # 4 CPU / 100m
        util.check_eq(over, {}, "nodes over their CPU")
        # every binding the scheduler sent, from the API server's audit log: one per pod, all 201
        binds = c.audit(user=k8s_util.sa_user(NS, SA), verb="create", resource="pods", subresource="binding")
        binds = [e for e in binds if e["objectRef"].get("namespace") == ns]
        codes = {}
        per_pod = {}
        for e in binds:
            codes[e["responseStatus"]["code"]] = codes.get(e["responseStatus"]["code"], 0) + 1
            per_pod[e["objectRef"]["name"]] = per_pod.get(e["objectRef"]["name"], 0) + 1
        util.check_eq(codes, {201: 1000}, "binding answers")
        util.check_eq(sorted(k for k, v in per_pod.items() if v != 1), [], "pods bound more than once")
        forbidden = [e for e in c.audit(user=k8s_util.sa_user(NS, SA)) if e["responseStatus"]["code"] == 403]
        util.check_eq([(e["verb"], e["requestURI"]) for e in forbidden], [], "requests RBAC refused")
        wait_for("1,000 Scheduled events", lambda: len(c.events(ns, "Scheduled")) == 1000, timeout=120,
                 interval=0.5)
    finally:
        util.check_eq(sv.stop(), 0, "exit status on SIGTERM")


# ---- preemption ------------------------------------------------------------------------------

def test_preemption_victim_deleted_preemptor_bound():
    c, _ = setup()
    ns = "preempt"
    namespace(c, ns)
    c.apply([{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"},
              "value": 100},
             {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
              "value": 1000}])
    c.create_node(k8s_util.gpu_node("preempt-1", gpus=1, labels={"pool": "preempt"}))

    def pod(name, prio):
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"schedulerName": "gpusched", "priorityClassName": prio,
                         "nodeSelector": {"pool": "preempt"}, "terminationGracePeriodSeconds": 30,
                         "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                         "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}
    sv = serve(["-v", "2"], "preempt")
    try:
        c.create("/api/v1/namespaces/%s/pods" % ns, pod("victim", "low"))
        wait_for("the victim bound", lambda: sv._dead() or bound(c.pods(ns)).get("victim") == "preempt-1")
        c.create("/api/v1/namespaces/%s/pods" % ns, pod("preemptor", "high"))
        wait_for("the preemptor bound", lambda: sv._dead() or bound(c.pods(ns)).get("preemptor") == "preempt-1")
        util.check_eq(c.get_or_none("/api/v1/namespaces/%s/pods/victim" % ns), None, "the victim")
        # One delete of the victim, however the preemptor's retries and the watch interleave:
        # gpusched marks the victim terminating by preemption and the preemptor nominated in its
        # own cache at once, so a retry while the victim terminates is not eligible to preempt.
        deletes = [e for e in c.audit(user=k8s_util.sa_user(NS, SA), verb="delete", resource="pods")
                   if e["objectRef"].get("namespace") == ns]
        util.check_eq({(e["objectRef"]["name"], e["responseStatus"]["code"]) for e in deletes},
                      {("victim", 200)}, "the scheduler's deletes")
        nominated = [e for e in c.audit(user=k8s_util.sa_user(NS, SA), verb="patch", resource="pods",
                                        subresource="status")
                     if e["objectRef"].get("name") == "preemptor"]
        if not nominated:
            raise AssertionError("no status patch of the preemptor (nominatedNodeName)")
        evs = [e for e in c.events(ns, "Preempted") if e["regarding"]["name"] == "victim"]
        if not evs:
            raise AssertionError("no Preempted event of the victim")
    finally:
        util.check_eq(sv.stop(), 0, "exit status on SIGTERM")


def terminating_victim(c, ns, scheduler, user, start):
    """Victim v (low, held by a finalizer, so it stays terminating) on a one-GPU node; a (mid)
    preempts it; while v terminates, b (high) preempts the same node; then v goes. Returns
    what the scheduler did: its bindings and deletes, v's DisruptionTarget condition, a at the
    end and whether b got the node."""
    namespace(c, ns)
    node = ns + "-1"
    c.create_node(k8s_util.gpu_node(node, gpus=1, labels={"pool": ns}))

    def pod(name, prio, finalizer=False):
        p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
             "spec": {"schedulerName": scheduler, "priorityClassName": prio, "nodeSelector": {"pool": ns},
                      "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                      "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}
        if finalizer:
            p["metadata"]["finalizers"] = ["example.com/hold"]
        return p

    def get(name):
        return c.get("/api/v1/namespaces/%s/pods/%s" % (ns, name))
    proc = start()
    dead = proc.alive if hasattr(proc, "alive") else proc._dead
    try:
        c.create("/api/v1/namespaces/%s/pods" % ns, pod("v", "term-low", finalizer=True))
        wait_for("v bound", lambda: dead() or get("v")["spec"].get("nodeName") == node)
        c.create("/api/v1/namespaces/%s/pods" % ns, pod("a", "term-mid"))
        wait_for("a nominated, v terminating", lambda: dead() or (
            get("a")["status"].get("nominatedNodeName") == node and get("v")["metadata"].get("deletionTimestamp")))
        c.create("/api/v1/namespaces/%s/pods" % ns, pod("b", "term-high"))
        wait_for("b nominated", lambda: dead() or get("b")["status"].get("nominatedNodeName") == node)
        v = get("v")
        c.patch("/api/v1/namespaces/%s/pods/v" % ns, {"metadata": {"finalizers": None}}, "merge")
        wait_for("b bound", lambda: dead() or get("b")["spec"].get("nodeName") == node)

        def audited():
            return [e for e in c.audit(user=user, resource="pods") if e["objectRef"].get("namespace") == ns]
        # the API server writes an audit event when the request completes, which can be just
        # after a reader sees its effect: wait for b's binding to be in the log before reading it
        wait_for("b's binding in the audit log", lambda: any(
            e["verb"] == "create" and e["objectRef"].get("subresource") == "binding" and
            e["objectRef"]["name"] == "b" for e in audited()))
        mine = audited()
        cond = [(x["status"], x.get("reason"), x.get("message", "").replace(scheduler, "SCHEDULER"))
                for x in v["status"].get("conditions") or [] if x["type"] == "DisruptionTarget"]
        a = c.get_or_none("/api/v1/namespaces/%s/pods/a" % ns)
        return {"bindings, in order": [e["objectRef"]["name"] for e in mine
                                       if e["verb"] == "create" and e["objectRef"].get("subresource") == "binding"],
                "deletes": [e["objectRef"]["name"] for e in mine if e["verb"] == "delete"],
                "v's DisruptionTarget": cond,
                "a at the end": a and (a["spec"].get("nodeName"), a["status"].get("nominatedNodeName")),
                "b's node": get("b")["spec"]["nodeName"] == node}
    finally:
        proc.stop()


def test_preemption_of_a_terminating_victim_against_kube_scheduler():
    c, _ = setup()
    c.apply([{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n},
              "value": v} for n, v in (("term-low", 100), ("term-mid", 1000), ("term-high", 2000))])
    ks = terminating_victim(c, "term-ks", "default-scheduler", "system:kube-scheduler",
                            lambda: k8s_util.kube_scheduler(c))
    gs = terminating_victim(c, "term-gs", "gpusched", k8s_util.sa_user(NS, SA), lambda: serve(["-v", "2"], "term"))
    util.check_eq(ks["b's node"], True, "kube-scheduler placed b")
    util.check_eq(gs["b's node"], True, "gpusched placed b")
    diff = ["%s: gpusched %r, kube-scheduler %r" % (k, gs[k], ks[k]) for k in ks if gs[k] != ks[k]]
    util.check_eq(diff, [], "differences from kube-scheduler")


# ---- leader election -------------------------------------------------------------------------

LE = ["--leader-elect", "--leader-elect-lease-duration", "4s", "--leader-elect-renew-deadline", "3s",
      "--leader-elect-retry-period", "500ms", "-v", "2"]


def test_leader_election_only_the_leader_binds_and_failover():
    c, _ = setup()
    ns = "leader"
    namespace(c, ns)
    c.create_node(k8s_util.gpu_node("leader-1", gpus=0, labels={"pool": "leader"}))
    lease_path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/gpusched"

    def holder():
        lease = c.get_or_none(lease_path)
        return lease and lease["spec"].get("holderIdentity")

    def identity(sv):
        g = sv.grep(r'identity="([^"]+)"')
        return g and g[0]

    def pod(i):
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p%d" % i},
                "spec": {"schedulerName": "gpusched", "nodeSelector": {"pool": "leader"},
                         "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}
    a = serve(LE, "leader-a")
    b = None
    try:
        wait_for("a to lead", lambda: a._dead() or (identity(a) and holder() == identity(a)))
        b = serve(LE, "leader-b")
        wait_for("b to start and see the lease held", lambda: b._dead() or b.ready())
        for i in range(10):
            c.create("/api/v1/namespaces/%s/pods" % ns, pod(i))
        wait_for("10 pods bound", lambda: len(bound(c.pods(ns))) == 10)
        wait_for("the leader's 10 bind log lines", lambda: a.count("Successfully bound pod") >= 10)
        util.check_eq(b.count("Successfully bound pod"), 0, "binds by the standby")
        transitions = c.get(lease_path)["spec"].get("leaseTransitions", 0)
        a.kill()  # no release: b must wait for the lease to expire
        for i in range(10, 15):
            c.create("/api/v1/namespaces/%s/pods" % ns, pod(i))
        wait_for("b to lead", lambda: b._dead() or holder() == identity(b), timeout=60)
        wait_for("15 pods bound", lambda: len(bound(c.pods(ns))) == 15, timeout=60)
        wait_for("the new leader's 5 bind log lines", lambda: b.count("Successfully bound pod") >= 5)
        util.check_eq(b.count("Successfully bound pod"), 5, "binds by the new leader")
        lease = c.get(lease_path)
        util.check_eq(lease["spec"].get("leaseTransitions", 0), transitions + 1, "lease transitions")
        util.check_eq(lease["spec"]["leaseDurationSeconds"], 4, "lease duration")
    finally:
        a.kill()
        if b:
            util.check_eq(b.stop(), 0, "exit status of b on SIGTERM")
