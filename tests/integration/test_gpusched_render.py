"""gpusched render, simulate --follow / --trace and --kube-version: what the kube-scheduler
oracle reads and writes (docs/testing.md, "What the oracle needs from gpusched"), checked on
small inputs written here and on examples/seed/."""
import json
import os

import util

SEED = os.path.join(util.SRC, "examples", "seed")
SEED_FILES = [os.path.join(SEED, f) for f in sorted(os.listdir(SEED)) if f.endswith(".yaml")]


def gpusched(*args, input=None):
    return util.run([util.binary("gpusched")] + list(args), input=input)


def ok(p, what):
    if p.returncode != 0:
        raise AssertionError("%s: exit %d; stderr %r" % (what, p.returncode, p.stderr))
    return p.stdout


def files(paths):
    out = []
    for f in paths:
        out += ["-f", f]
    return out


def TempDir():
    return util.TempDir("gpusched-render-")


NODES = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
"""

WORKLOADS = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {note: kept}}
    spec:
      priorityClassName: high
      containers:
      - name: c
        image: nginx
        resources: {requests: {cpu: 500m}}
---
apiVersion: v1
kind: Pod
metadata: {name: bare}
spec:
  containers: [{name: c, image: busybox}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      tolerations: [{key: dedicated, operator: Exists}]
      containers: [{name: a, image: agent}]
"""


def render(tmp, fmt="json"):
    n = tmp.write("nodes.yaml", NODES)
    w = tmp.write("workloads.yaml", WORKLOADS)
    return [n, w], ok(gpusched("render", "-f", w, "-f", n, "-o", fmt), "render")


def test_render_list_in_input_order():
    with TempDir() as tmp:
        _, out = render(tmp)
        doc = json.loads(out)
        util.check_eq((doc["apiVersion"], doc["kind"]), ("v1", "List"), "list")
        kinds = [(i["kind"], i["metadata"]["name"].split("-")[0]) for i in doc["items"]]
        util.check_eq(kinds, [("PriorityClass", "high"), ("Service", "web"),
                              ("ReplicaSet", "web"), ("Pod", "web"), ("Pod", "web"),
                              ("Pod", "bare"), ("Pod", "agent"), ("Pod", "agent"),
                              ("Node", "n1"), ("Node", "n2")], "kinds in order")
        # every namespaced object has its namespace written
        for i in doc["items"]:
            if i["kind"] in ("Service", "ReplicaSet", "Pod"):
                assert i["metadata"].get("namespace"), i


def test_render_deployment_replicaset_and_pods():
    with TempDir() as tmp:
        _, out = render(tmp)
        items = json.loads(out)["items"]
        rs = items[2]
        h = rs["metadata"]["labels"]["pod-template-hash"]
        util.check_eq(rs["metadata"]["name"], "web-" + h, "ReplicaSet name")
        util.check_eq(rs["spec"]["selector"]["matchLabels"], {"app": "web", "pod-template-hash": h},
                      "ReplicaSet selector")
        util.check_eq(rs["metadata"]["ownerReferences"][0]["kind"], "Deployment", "RS owner")
        for p in items[3:5]:
            md, spec = p["metadata"], p["spec"]
            assert md["name"].startswith("web-%s-" % h), md["name"]
            util.check_eq(md["labels"], {"app": "web", "pod-template-hash": h}, "pod labels")
            util.check_eq(md["annotations"], {"note": "kept"}, "template annotations")
            ref = md["ownerReferences"][0]
            util.check_eq((ref["kind"], ref["name"], ref["controller"]),
                          ("ReplicaSet", rs["metadata"]["name"], True), "pod owner")
            assert len(ref["uid"]) == 36, ref
            util.check_eq((spec["priority"], spec["priorityClassName"], spec["preemptionPolicy"]),
                          (1000, "high", "PreemptLowerPriority"), "resolved priority")
            util.check_eq(spec["containers"][0]["resources"], {"requests": {"cpu": "500m"}},
                          "template spec as written")
        bare = items[5]
        util.check_eq(bare["metadata"], {"name": "bare", "namespace": "default"}, "bare pod")
        assert "priority" not in bare["spec"], "a bare pod is as given"


def test_render_daemonset_pins_and_tolerates():
    with TempDir() as tmp:
        _, out = render(tmp)
        items = json.loads(out)["items"]
        for p, node in zip(items[6:8], ["n1", "n2"]):
            spec = p["spec"]
            util.check_eq(spec["affinity"]["nodeAffinity"]
                          ["requiredDuringSchedulingIgnoredDuringExecution"],
                          {"nodeSelectorTerms": [{"matchFields": [
                              {"key": "metadata.name", "operator": "In", "values": [node]}]}]},
                          "DaemonSet pin")
            keys = [t.get("key") for t in spec["tolerations"]]
            util.check_eq(keys[0], "dedicated", "the template's toleration first")
            assert "node.kubernetes.io/unschedulable" in keys, keys
            util.check_eq(p["metadata"]["ownerReferences"][0]["kind"], "DaemonSet", "owner")


def test_render_names_are_simulates():
    """The pods render prints are the pods simulate schedules, with the same names."""
    out = ok(gpusched("render", "-o", "json", *files(SEED_FILES)), "render seed")
    rendered = sorted("%s/%s" % (i["metadata"]["namespace"], i["metadata"]["name"])
                      for i in json.loads(out)["items"]
                      if i["kind"] == "Pod" and not i["spec"].get("nodeName"))
    sim = json.loads(ok(gpusched("simulate", "-o", "json", *files(SEED_FILES)), "simulate"))
    placed = sorted([e["pod"] for e in sim["scheduled"]] + [e["pod"] for e in sim["unschedulable"]])
    util.check_eq(rendered, placed, "pod names")


def test_render_yaml_reads_back_as_the_same_objects():
    """render -o yaml, read back by render itself, is render -o json: every scalar keeps its
    type (strings that look like numbers, booleans or null are quoted)."""
    tricky = WORKLOADS.split("---\napiVersion: apps/v1\nkind: Deployment")[0] + """---
apiVersion: batch/v1
kind: Job
metadata: {name: train, annotations: {"n": "010", "b": "yes", "e": "", "x": "a: b", "q": "'\\""}}
spec:
  parallelism: 2
  template:
    metadata: {labels: {tier: "1.5", on: "true"}}
    spec:
      restartPolicy: Never
      nodeSelector: {"k8s.io/x": "null", "y": "True"}
      containers:
      - name: c
        image: x
        args: ["- a", "#b", "1e3", "0x1F", "on"]
        resources: {requests: {cpu: 0.5, memory: 1e9}, limits: {"example.com/foo": 2}}
"""
    with TempDir() as tmp:
        n = tmp.write("nodes.yaml", NODES)
        w = tmp.write("w.yaml", tricky)
        j = ok(gpusched("render", "-f", w, "-f", n, "-o", "json"), "render json")
        y = ok(gpusched("render", "-f", w, "-f", n), "render yaml")
        assert y.startswith("apiVersion: v1\nkind: List\nitems:\n- "), y[:60]
        back = tmp.write("back.yaml", y)
        again = ok(gpusched("render", "-f", back, "-o", "json"), "render the YAML")
        util.check_eq(json.loads(again), json.loads(j), "the YAML read back")
        assert any(i["kind"] == "Pod" and i["metadata"]["name"].startswith("train-")
                   for i in json.loads(j)["items"]), j


def test_render_output_reads_back_as_the_same_cluster():
    """render's output holds the workloads' objects (a Deployment's ReplicaSet, ...) and their
    pods: read back, each workload counts its pods as its controller would and creates none,
    so render and simulate give the same answers again (and a dump of a cluster, workloads
    with their pods, loads as it is)."""
    more = WORKLOADS + """---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: rc}
spec:
  replicas: 2
  selector: {app: rc}
  template:
    metadata: {labels: {app: rc}}
    spec: {containers: [{name: c, image: x}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: plain}
spec:
  replicas: 1
  selector: {matchLabels: {app: plain}}
  template:
    metadata: {labels: {app: plain}}
    spec: {containers: [{name: c, image: x}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: idx}
spec:
  completions: 3
  parallelism: 2
  completionMode: Indexed
  template:
    spec: {restartPolicy: Never, containers: [{name: c, image: x}]}
"""
    with TempDir() as tmp:
        n = tmp.write("nodes.yaml", NODES)
        w = tmp.write("w.yaml", more)
        first = ok(gpusched("render", "-f", w, "-f", n, "-o", "json"), "render")
        back = tmp.write("back.json", first)
        again = ok(gpusched("render", "-f", back, "-o", "json"), "render the render")
        util.check_eq(json.loads(again), json.loads(first), "render of render's output")
        pods = [i["metadata"]["name"] for i in json.loads(first)["items"] if i["kind"] == "Pod"]
        # 2 web, bare, 2 agents, 2 db, 2 rc, 1 plain, 2 idx
        util.check_eq(len(pods), 12, "pods in %r" % pods)
        sim = json.loads(ok(gpusched("simulate", "-o", "json", "-f", w, "-f", n), "simulate"))
        sim2 = json.loads(ok(gpusched("simulate", "-o", "json", "-f", back), "simulate back"))
        util.check_eq(sim2, sim, "simulate of render's output")


def test_render_errors():
    p = gpusched("render")
    util.check_eq(p.returncode, 2, "no -f")
    assert "must specify -f FILE" in p.stderr, p.stderr
    p = gpusched("render", "-f", SEED_FILES[0], "-o", "table")
    util.check_eq(p.returncode, 2, "bad -o")
    assert "allowed formats are: json,yaml" in p.stderr, p.stderr
    with TempDir() as tmp:
        bad = tmp.write("bad.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n"
                        "spec: {replicas: -1}\n")
        p = gpusched("render", "-f", bad)
        util.check_eq(p.returncode, 1, "bad input")
        util.check_eq(p.stdout, "", "nothing half-written")
        assert p.stderr.startswith("gpusched: %s: line " % bad), p.stderr


# ---------------------------------------------------------------- --trace and --follow

TIES = """
apiVersion: v1
kind: Node
metadata: {name: a}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: b}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: c}
spec: {taints: [{key: k, value: v, effect: NoSchedule}]}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: low, namespace: default}
spec:
  nodeName: a
  priority: 0
  containers: [{name: c, image: x, resources: {requests: {cpu: 800m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: low2, namespace: default}
spec:
  nodeName: b
  priority: 0
  containers: [{name: c, image: x, resources: {requests: {cpu: 800m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: high, namespace: default}
spec:
  priority: 100
  containers: [{name: c, image: x, resources: {requests: {cpu: 500m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: small, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
"""


def trace_lines(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def test_trace_lines():
    with TempDir() as tmp:
        cl = tmp.write("c.yaml", TIES)
        tr = os.path.join(tmp.path, "t.jsonl")
        sim = json.loads(ok(gpusched("simulate", "-f", cl, "-o", "json", "--trace", tr), "simulate"))
        lines = trace_lines(tr)
        util.check_eq([(l["pod"], l["attempt"]) for l in lines],
                      [("default/high", 1), ("default/high", 2), ("default/small", 1)], "attempts")
        first = lines[0]
        util.check_eq(list(first), ["pod", "attempt", "priority", "nodes", "result"], "keys")
        util.check_eq(first["priority"], 100, "priority")
        util.check_eq(first["nodes"][2], {"node": "c", "feasible": False, "plugin": "TaintToleration",
                                          "reasons": ["node(s) had untolerated taint(s)"],
                                          "unresolvable": True}, "tainted node")
        util.check_eq(first["nodes"][0]["reasons"], ["Insufficient cpu"], "full node")
        res = first["result"]
        util.check_eq(res["status"], "Unschedulable", "first attempt")
        util.check_eq(res["victims"], ["default/" + ("low" if res["nominatedNode"] == "a" else "low2")],
                      "victims")
        retry = lines[1]
        util.check_eq(retry["nominatedNode"], res["nominatedNode"], "the retry is nominated")
        util.check_eq(retry["result"], {"status": "Scheduled", "node": res["nominatedNode"]}, "retry")
        small = lines[2]
        for v in small["nodes"][:2]:
            if v["feasible"]:
                util.check_eq([s["plugin"] for s in v["scores"]],
                              ["TaintToleration", "NodeAffinity", "NodeResourcesFit",
                               "NodeResourcesBalancedAllocation", "InterPodAffinity",
                               "ImageLocality"], "score plugins")
                util.check_eq(v["total"], sum(s["normalized"] * s["weight"] for s in v["scores"]),
                              "total")
        util.check_eq(small["result"]["node"],
                      [e["node"] for e in sim["scheduled"] if e["pod"] == "default/small"][0],
                      "the trace is the run -o json prints")


TWO = """
apiVersion: v1
kind: Node
metadata: {name: a}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: b}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
"""


def test_follow_takes_the_followed_node_among_ties():
    with TempDir() as tmp:
        cl = tmp.write("c.yaml", TWO)
        for want in ("a", "b", "a"):
            for sec in ("scheduled", "preempted"):
                f = tmp.write("follow.json", json.dumps({
                    "scheduled": [], "unschedulable": [],
                    sec: [{"pod": "default/p", "node": want, "by": "default/x"}]}))
                sim = json.loads(ok(gpusched("simulate", "-f", cl, "-o", "json", "--follow", f),
                                    "simulate --follow"))
                util.check_eq(sim["scheduled"], [{"pod": "default/p", "node": want}],
                              "followed via %s" % sec)


def test_follow_never_overrides_a_better_choice():
    """In TIES, preempting on b is strictly better (its victim started later): following
    a changes nothing, and the node high did not take scores better for small."""
    with TempDir() as tmp:
        cl = tmp.write("c.yaml", TIES)
        plain = json.loads(ok(gpusched("simulate", "-f", cl, "-o", "json"), "simulate"))
        util.check_eq(plain["preempted"], [{"pod": "default/low2", "node": "b", "by": "default/high"}],
                      "preemption")
        f = tmp.write("follow.json", json.dumps({
            "scheduled": [{"pod": "default/high", "node": "a"}, {"pod": "default/small", "node": "b"}],
            "unschedulable": [],
            "preempted": [{"pod": "default/low", "node": "a", "by": "default/high"}]}))
        followed = json.loads(ok(gpusched("simulate", "-f", cl, "-o", "json", "--follow", f), "f"))
        util.check_eq(followed, plain, "a node outside the ties keeps gpusched's choice")


def test_follow_errors():
    with TempDir() as tmp:
        cl = tmp.write("c.yaml", TIES)
        missing = os.path.join(tmp.path, "missing.json")
        p = gpusched("simulate", "-f", cl, "--follow", missing)
        util.check_eq(p.returncode, 1, "unreadable --follow")
        util.check_eq(p.stdout, "", "no output")
        assert p.stderr.startswith("gpusched: --follow %s: " % missing), p.stderr
        bad = tmp.write("bad.json", '{"scheduled": [{"pod": 1}]}')
        p = gpusched("simulate", "-f", cl, "--follow", bad)
        util.check_eq(p.returncode, 1, "malformed --follow")
        assert "scheduled[0]" in p.stderr, p.stderr
        p = gpusched("simulate", "-f", cl, "--trace", os.path.join(tmp.path, "no", "dir"))
        util.check_eq(p.returncode, 1, "unwritable --trace")
        util.check_eq(p.stderr, "gpusched: --trace: cannot write '%s': No such file or directory\n"
                      % os.path.join(tmp.path, "no", "dir"), "unwritable --trace")


def test_trace_is_put_in_place_only_on_success():
    """--trace FILE is written beside FILE and renamed over it when the run succeeds: a run
    whose input fails leaves FILE as it was, and nothing that is not a regular file is
    replaced (a FIFO or /dev/null is written in place, a symlink's target is replaced and the
    link kept, a directory is refused)."""
    import stat
    with TempDir() as tmp:
        cl = tmp.write("c.yaml", TIES)
        bad = tmp.write("bad.yaml", TIES + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"
                        "spec: {containers: [{name: c, resources: {requests: {cpu: lots}}}]}\n")
        tr = tmp.write("t.jsonl", "the trace of an earlier run\n")
        os.chmod(tr, 0o640)
        p = gpusched("simulate", "-f", bad, "--trace", tr)
        util.check_eq(p.returncode, 1, "bad input")
        with open(tr) as f:
            util.check_eq(f.read(), "the trace of an earlier run\n", "FILE after a failed run")
        util.check_eq(sorted(os.listdir(tmp.path)), ["bad.yaml", "c.yaml", "t.jsonl"], "no file left behind")
        ok(gpusched("simulate", "-f", cl, "--trace", tr), "simulate")
        util.check_eq(len(trace_lines(tr)), 3, "the new trace")
        util.check_eq(stat.S_IMODE(os.stat(tr).st_mode), 0o640, "FILE's mode kept")
        util.check_eq(sorted(os.listdir(tmp.path)), ["bad.yaml", "c.yaml", "t.jsonl"], "no file left behind")
        # a symlink: its target is replaced, the link stays
        os.symlink("t.jsonl", os.path.join(tmp.path, "link"))
        with open(tr, "w") as f:
            f.write("old\n")
        ok(gpusched("simulate", "-f", cl, "--trace", os.path.join(tmp.path, "link")), "via a symlink")
        util.check_eq(os.path.islink(os.path.join(tmp.path, "link")), True, "still a link")
        util.check_eq(len(trace_lines(tr)), 3, "the target written")
        # a directory is refused and left alone
        d = os.path.join(tmp.path, "d")
        os.mkdir(d)
        p = gpusched("simulate", "-f", cl, "--trace", d)
        util.check_eq(p.returncode, 1, "a directory")
        util.check_eq(p.stderr, "gpusched: --trace: cannot write '%s': is a directory\n" % d, "stderr")
        util.check_eq(os.listdir(d), [], "the directory untouched")
        # a FIFO with a reader is written in place and stays a FIFO; /dev/null stays a device
        fifo = os.path.join(tmp.path, "fifo")
        os.mkfifo(fifo)
        rd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            ok(gpusched("simulate", "-f", cl, "--trace", fifo), "a FIFO")
            got = os.read(rd, 1 << 20).decode()
        finally:
            os.close(rd)
        util.check_eq(stat.S_ISFIFO(os.stat(fifo).st_mode), True, "still a FIFO")
        util.check_eq(len(got.splitlines()), 3, "the reader got the trace")
        ok(gpusched("simulate", "-f", cl, "--trace", "/dev/null"), "/dev/null")
        util.check_eq(stat.S_ISCHR(os.stat("/dev/null").st_mode), True, "/dev/null still a device")


def test_kube_version():
    with TempDir() as tmp:
        cl = tmp.write("c.yaml", TIES + """
---
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
""")
        msgs = {}
        for v in ("1.32", "1.34", "1.35", "1.37", None):
            args = ["simulate", "-f", cl, "-o", "json"] + (["--kube-version", v] if v else [])
            sim = json.loads(ok(gpusched(*args), "simulate %s" % v))
            msgs[v] = [u["message"] for u in sim["unschedulable"] if u["pod"] == "default/huge"][0]
        assert "1 node(s) had untolerated taint {k: v}" in msgs["1.32"], msgs["1.32"]
        util.check_eq(msgs["1.34"], msgs["1.32"], "1.34 as 1.32")
        assert "1 node(s) had untolerated taint(s)" in msgs["1.35"], msgs["1.35"]
        util.check_eq(msgs[None], msgs["1.37"], "the default is 1.37")
        util.check_eq(msgs["1.37"], msgs["1.35"], "1.37 as 1.35")
        p = gpusched("explain", "-f", cl, "--kube-version", "1.34", "-o", "json", "default/huge")
        assert "untolerated taint {k: v}" in p.stdout, p.stdout
        for cmd in (["simulate", "-f", cl], ["explain", "-f", cl, "huge"]):
            p = gpusched(*cmd, "--kube-version", "1.31")
            util.check_eq(p.returncode, 2, "unknown version")
            assert "must be one of 1.32|1.33|1.34|1.35|1.36|1.37" in p.stderr, p.stderr
        p = gpusched("serve", "--kube-version", "2.0")
        util.check_eq(p.returncode, 2, "serve: unknown version")
        assert "--kube-version" in p.stderr, p.stderr


def test_pod_level_resources_are_modelled():
    """spec.resources changes kube-scheduler's answer from 1.34 on; gpusched models it
    (docs/scheduling.md), so there is no "not modelled" warning for it."""
    with TempDir() as tmp:
        cl = tmp.write("c.yaml", TWO.replace("spec:\n  containers:",
                                             "spec:\n  resources: {requests: {cpu: \"2\"}}\n  containers:"))
        p = gpusched("simulate", "-f", cl, "-o", "json")
        util.check_eq(p.returncode, 0, "simulate")
        util.check_eq("spec.resources" in p.stderr, False, "a warning on spec.resources: " + p.stderr)


def test_render_keeps_the_storage_objects():
    """CSINodes, CSIDrivers, CSIStorageCapacities and VolumeAttachments are read (validated) and
    written as they are, a CSIStorageCapacity with its namespace, for the oracle to read."""
    d = os.path.join(util.SRC, "tests", "scenarios")
    items = []
    for case in ("volume-limits-attachments", "volume-capacity"):
        p = ok(gpusched("render", "-o", "json", "-f", os.path.join(d, case, "cluster.yaml")),
               "render " + case)
        items += json.loads(p)["items"]
    kinds = sorted({i["kind"] for i in items})
    for k in ("CSIDriver", "CSINode", "CSIStorageCapacity", "VolumeAttachment"):
        if k not in kinds:
            raise AssertionError("%s missing from %s" % (k, kinds))
    caps = [i for i in items if i["kind"] == "CSIStorageCapacity"]
    util.check_eq({i["metadata"]["namespace"] for i in caps}, {"kube-system"}, "namespace")
    util.check_eq(next(i for i in items if i["kind"] == "CSINode" and
                       i["metadata"]["name"] == "n1")["spec"]["drivers"][0]["allocatable"],
                  {"count": 2}, "the limit as written")
