#!/usr/bin/env python3
"""Write one of kube-scheduler's scheduler_perf workloads (v1.37.2) as manifests.

test/integration/scheduler_perf/{affinity,topology_spreading,volumes}/performance-config.yaml
define each workload as a list of operations over templates (templates/*.yaml); this writes
the objects those operations create, at the workload's 5,000-node size, deterministically:

  0-namespaces.json  the Namespaces the workload creates (createNamespaces, and the
                     namespace-<op index> a createPods op without a namespace makes)
  1-nodes.json       the nodes: the op's node template (node-default.yaml, node-with-taint.yaml,
                     or scheduler_perf's makeBaseNode: 4 cpu, 32Gi, 110 pods), named
                     <generateName><index>, with kubernetes.io/hostname = name (as
                     IntegrationTestNodePreparer sets it) and the labelNodePrepareStrategy's
                     label handed out round-robin in node order; allocatable = capacity (the
                     API server's default when a template gives only capacity)
  2-objects.json     Services (createAny), and per pod with a volume the PersistentVolume and
                     the PersistentVolumeClaim bound to each other (CreatePodWithPersistentVolume)
  3-init.json        the init pods (the ops without collectMetrics), already bound: spec.nodeName
                     round-robin over the nodes in node order (scheduler_perf has the scheduler
                     place them first and does not time that; here both schedulers start from
                     the same placement)
  4-measure.json     the measured pods (collectMetrics: true), pending

Pods made from a template file carry the label signature=signature-label-<index within the
op> (podTemplateWithParams, SignatureBatchSize 1); pods of scheduler_perf's makeBasePod (no
template) do not. Fields are written as the API server stores them (the YAML decoder of
scheduler_perf matches field names case-insensitively: NodeAffinityPolicy is
nodeAffinityPolicy).

  python3 bench/gen_schedperf.py WORKLOAD OUTDIR [--nodes N] [--init N] [--measure N]
  python3 bench/gen_schedperf.py --list
  python3 bench/gen_schedperf.py AffinityCurve|SpreadCurve OUTDIR --init N --measure M
                                                         (our own: see curve())
"""
import argparse
import json
import os
import sys

PAUSE = "registry.k8s.io/pause:3.10.2"
RES = {"requests": {"cpu": "100m", "memory": "500Mi"},
       "limits": {"cpu": "100m", "memory": "500Mi"}}


def container(image=PAUSE, ports=True, resources=True):
    c = {"name": "pause", "image": image}
    if ports:
        c["ports"] = [{"containerPort": 80}]
    if resources:
        c["resources"] = json.loads(json.dumps(RES))
    return c


def ns_term(selector, key, namespaces):
    return {"labelSelector": {"matchLabels": selector}, "topologyKey": key,
            "namespaces": namespaces}


# ---- the pod templates (templates/*.yaml), as functions of nothing: (generateName, labels, spec)

def pod_default():  # pod-default.yaml
    return "pod-", {}, {"containers": [container()]}


def pod_base():  # makeBasePod (no template file: no signature label)
    return "pod-", None, {"containers": [container()]}


def pod_with_label():  # pod-with-label.yaml
    return "pod-", {"app": "scheduler-perf"}, {
        "containers": [container("registry.k8s.io/pause:3.10.1", ports=False, resources=False)]}


def pod_with_node_affinity():  # pod-with-node-affinity.yaml
    return "node-affinity-", {}, {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{
                "key": "topology.kubernetes.io/zone", "operator": "In",
                "values": ["zone1", "zone2"]}]}]}}},
        "containers": [container()]}


def pod_with_pod_affinity():  # pod-with-pod-affinity.yaml
    return "affinity-pod-", {"color": "blue"}, {
        "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            ns_term({"color": "blue"}, "topology.kubernetes.io/zone", ["sched-1", "sched-0"])]}},
        "containers": [container()]}


def pod_with_pod_anti_affinity():  # pod-with-pod-anti-affinity.yaml
    return "anti-affinity-pod-", {"color": "green"}, {
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            ns_term({"color": "green"}, "kubernetes.io/hostname", ["sched-1", "sched-0"])]}},
        "containers": [container()]}


def pod_with_preferred_pod_affinity():  # pod-with-preferred-pod-affinity.yaml
    return "preferred-affinity-pod-", {"color": "red"}, {
        "affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "podAffinityTerm": ns_term({"color": "red"}, "kubernetes.io/hostname",
                                       ["sched-1", "sched-0"]),
            "weight": 1}]}},
        "containers": [container()]}


def pod_with_preferred_pod_anti_affinity():  # pod-with-preferred-pod-anti-affinity.yaml
    return "preferred-anti-affinity-pod-", {"color": "yellow"}, {
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "podAffinityTerm": ns_term({"color": "yellow"}, "kubernetes.io/hostname",
                                       ["sched-1", "sched-0"]),
            "weight": 1}]}},
        "containers": [container()]}


def pod_with_topology_spreading(when):  # pod-with-(preferred-)topology-spreading.yaml
    return "spreading-pod-", {"color": "blue"}, {
        "topologySpreadConstraints": [{
            "maxSkew": 5, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"color": "blue"}}}],
        "containers": [container()]}


def pod_with_node_inclusion_policy():  # pod-with-node-inclusion-policy.yaml
    return "spreading-pod-with-node-inclusion-policy-", {"foo": "bar"}, {
        "containers": [container("registry.k8s.io/pause:3.10.1")],
        "topologySpreadConstraints": [{
            "maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "DoNotSchedule",
            "nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": "Honor",
            "labelSelector": {"matchLabels": {"foo": "bar"}}}]}


# ---- node templates: (generateName, taints)
NODE_DEFAULT = ("scheduler-perf-", None)       # node-default.yaml
NODE_TAINT = ("taint-node-", [{"effect": "NoSchedule", "key": "foo"}])  # node-with-taint.yaml


def base_node(op):  # makeBaseNode("node-<op index>-")
    return ("node-%d-" % op, None)


ZONE = "topology.kubernetes.io/zone"
MOONS = ["moon-1", "moon-2", "moon-3"]

# Each workload: its ops in order (the op index names namespace-<i>), and the 5,000-node size
# used here (scheduler_perf's workload name in "size"). Ops:
#   ("nodes", count_param, template, label_strategy)    label_strategy: (key, values) or None
#   ("namespaces", prefix, count)
#   ("service", namespace)
#   ("pods", count_param, pod_template, namespace or None, measured, with_pv)
WORKLOADS = {
    "SchedulingPodAntiAffinity": {
        "size": "5000Nodes_2000Pods", "params": {"initNodes": 5000, "initPods": 1000, "measurePods": 2000},
        "ops": [("nodes", "initNodes", "base", None), ("namespaces", "sched", 2),
                ("pods", "initPods", pod_with_pod_anti_affinity, "sched-0", False, False),
                ("pods", "measurePods", pod_with_pod_anti_affinity, "sched-1", True, False)]},
    "SchedulingPodAffinity": {
        "size": "5000Nodes_5000Pods", "params": {"initNodes": 5000, "initPods": 5000, "measurePods": 5000},
        "ops": [("nodes", "initNodes", NODE_DEFAULT, (ZONE, ["zone1"])), ("namespaces", "sched", 2),
                ("pods", "initPods", pod_with_pod_affinity, "sched-0", False, False),
                ("pods", "measurePods", pod_with_pod_affinity, "sched-1", True, False)]},
    "SchedulingPreferredPodAffinity": {
        "size": "5000Nodes_5000Pods", "params": {"initNodes": 5000, "initPods": 5000, "measurePods": 5000},
        "ops": [("nodes", "initNodes", "base", None), ("namespaces", "sched", 2),
                ("pods", "initPods", pod_with_preferred_pod_affinity, "sched-0", False, False),
                ("pods", "measurePods", pod_with_preferred_pod_affinity, "sched-1", True, False)]},
    "SchedulingPreferredPodAntiAffinity": {
        "size": "5000Nodes_5000Pods", "params": {"initNodes": 5000, "initPods": 5000, "measurePods": 5000},
        "ops": [("nodes", "initNodes", "base", None), ("namespaces", "sched", 2),
                ("pods", "initPods", pod_with_preferred_pod_anti_affinity, "sched-0", False, False),
                ("pods", "measurePods", pod_with_preferred_pod_anti_affinity, "sched-1", True, False)]},
    "TopologySpreading": {
        "size": "5000Nodes_5000Pods", "params": {"initNodes": 5000, "initPods": 5000, "measurePods": 5000},
        "ops": [("nodes", "initNodes", NODE_DEFAULT, (ZONE, MOONS)),
                ("pods", "initPods", pod_default, None, False, False),
                ("pods", "measurePods", lambda: pod_with_topology_spreading("DoNotSchedule"), None, True, False)]},
    "PreferredTopologySpreading": {
        "size": "5000Nodes_5000Pods", "params": {"initNodes": 5000, "initPods": 5000, "measurePods": 5000},
        "ops": [("nodes", "initNodes", NODE_DEFAULT, (ZONE, MOONS)),
                ("pods", "initPods", pod_default, None, False, False),
                ("pods", "measurePods", lambda: pod_with_topology_spreading("ScheduleAnyway"), None, True, False)]},
    "DefaultTopologySpreading": {
        "size": "5000Nodes_10000Pods", "params": {"initNodes": 5000, "initPods": 5000, "measurePods": 10000},
        "ops": [("nodes", "initNodes", NODE_DEFAULT, (ZONE, MOONS)), ("service", "service-ns"),
                ("pods", "initPods", pod_default, None, False, False),
                ("pods", "measurePods", pod_with_label, "service-ns", True, False)]},
    "SchedulingWithNodeInclusionPolicy": {
        "size": "5000Nodes", "params": {"normalNodes": 4000, "taintNodes": 1000, "measurePods": 4000},
        "ops": [("nodes", "normalNodes", "base", None), ("nodes", "taintNodes", NODE_TAINT, None),
                ("pods", "measurePods", pod_with_node_inclusion_policy, None, True, False)]},
    "SchedulingNodeAffinity": {
        "size": "5000Nodes_10000Pods", "params": {"initNodes": 5000, "initPods": 5000, "measurePods": 10000},
        "ops": [("nodes", "initNodes", NODE_DEFAULT, (ZONE, ["zone1"])),
                ("pods", "initPods", pod_with_node_affinity, None, False, False),
                ("pods", "measurePods", pod_with_node_affinity, None, True, False)]},
    "SchedulingInTreePVs": {
        "size": "5000Nodes_2000Pods", "params": {"initNodes": 5000, "initPods": 1000, "measurePods": 2000},
        "ops": [("nodes", "initNodes", "base", None),
                ("pods", "initPods", pod_base, None, False, True),
                ("pods", "measurePods", pod_base, None, True, True)]},
}


# Not scheduler_perf workloads: the curves of docs/benchmarks-sched.md ("InterPodAffinity
# against the pod count"). 5,000 nodes in 10 zones; pods of 100 apps (app=app-<i % 100>) in
# namespace "curve", 100m / 500Mi each. AffinityCurve: every other pod carries its app's
# terms, required anti-affinity to its app on kubernetes.io/hostname and preferred affinity
# (weight 10) to its app on the zone; the others carry only the label (the existing pods'
# anti-affinity applies to them). SpreadCurve: every pod spreads its app over the zones
# (maxSkew 5, DoNotSchedule) and the nodes (maxSkew 1, ScheduleAnyway). The init pods are
# bound so that no two replicas of an app share a node (replica r of app a on node
# (r + 50a) mod 5,000); the measured pods continue the sequence, pending.
CURVE_APPS = 100


def curve(nodes, init, measure, spread=False):
    ns = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "curve"}}]
    nl = [node("node-%05d" % i, None, {ZONE: "zone-%d" % (i % 10)}) for i in range(nodes)]
    init_pods, measured = [], []
    for j in range(init + measure):
        app = "app-%d" % (j % CURVE_APPS)
        spec = {"containers": [container()]}
        if spread:
            spec["topologySpreadConstraints"] = [
                {"maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                 "labelSelector": {"matchLabels": {"app": app}}},
                {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                 "whenUnsatisfiable": "ScheduleAnyway",
                 "labelSelector": {"matchLabels": {"app": app}}}]
        elif j % 2 == 0:
            spec["affinity"] = {
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                    "labelSelector": {"matchLabels": {"app": app}},
                    "topologyKey": "kubernetes.io/hostname"}]},
                "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                    "weight": 10, "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {"app": app}}, "topologyKey": ZONE}}]}}
        if j < init:
            r, a = j // CURVE_APPS, j % CURVE_APPS
            spec["nodeName"] = nl[(r + 50 * a) % nodes]["metadata"]["name"]
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "pod-%06d" % j, "namespace": "curve", "labels": {"app": app}},
               "spec": spec}
        (init_pods if j < init else measured).append(pod)
    return ns, nl, [], init_pods, measured


def lst(items):
    return {"apiVersion": "v1", "kind": "List", "items": items}


def node(name, taints, labels):
    res = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    n = {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": name, "labels": dict(labels, **{"kubernetes.io/hostname": name})},
         "spec": {},
         "status": {"capacity": dict(res), "allocatable": dict(res), "phase": "Running",
                    "conditions": [{"type": "Ready", "status": "True"}]}}
    if taints:
        n["spec"]["taints"] = taints
    return n


def pv_pair(ns, i):
    """CreatePodWithPersistentVolume with pv-aws.yaml and pvc.yaml: PV <ns>-vol-<i> bound to
    PVC pvc-<i>"""
    pvname = "%s-vol-%d" % (ns, i)
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "pvc-%d" % i, "namespace": ns,
                        "annotations": {"pv.kubernetes.io/bind-completed": "true"}},
           "spec": {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "1Gi"}},
                    "volumeName": pvname},
           "status": {"phase": "Bound"}}
    pv = {"apiVersion": "v1", "kind": "PersistentVolume",
          "metadata": {"name": pvname},
          "spec": {"accessModes": ["ReadOnlyMany"], "capacity": {"storage": "1Gi"},
                   "awsElasticBlockStore": {"volumeID": "vol-%d" % i},
                   "persistentVolumeReclaimPolicy": "Retain",
                   "claimRef": {"kind": "PersistentVolumeClaim", "namespace": ns,
                                "name": "pvc-%d" % i, "apiVersion": "v1"}},
          "status": {"phase": "Bound"}}
    return pv, pvc


def generate(name, params):
    w = WORKLOADS[name]
    namespaces, nodes, objects, init, measure = [], [], [], [], []

    def add_ns(ns):
        if ns not in [n["metadata"]["name"] for n in namespaces]:
            namespaces.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})

    for opi, op in enumerate(w["ops"]):
        kind = op[0]
        if kind == "nodes":
            _, cparam, tmpl, strategy = op
            prefix, taints = base_node(opi) if tmpl == "base" else tmpl
            for i in range(params[cparam]):
                labels = {}
                if strategy:
                    labels[strategy[0]] = strategy[1][i % len(strategy[1])]
                nodes.append(node("%s%05d" % (prefix, i), taints, labels))
        elif kind == "namespaces":
            for i in range(op[2]):
                add_ns("%s-%d" % (op[1], i))
        elif kind == "service":
            add_ns(op[1])
            objects.append({"apiVersion": "v1", "kind": "Service",
                            "metadata": {"name": "service-0", "namespace": op[1]},
                            "spec": {"selector": {"app": "scheduler-perf"},
                                     "ports": [{"protocol": "TCP", "port": 80, "targetPort": 8000}]}})
        else:
            _, cparam, tmpl, ns, measured, with_pv = op
            ns = ns or "namespace-%d" % opi
            add_ns(ns)
            gen, labels, spec = tmpl()
            out = measure if measured else init
            for i in range(params[cparam]):
                meta = {"name": "%s%05d" % (gen, i), "namespace": ns}
                if labels is not None:
                    meta["labels"] = dict(labels, signature="signature-label-%d" % i)
                s = json.loads(json.dumps(spec))
                if with_pv:
                    pv, pvc = pv_pair(ns, i)
                    objects += [pvc, pv]
                    s["volumes"] = [{"name": "vol", "persistentVolumeClaim": {"claimName": "pvc-%d" % i}}]
                if not measured:
                    s["nodeName"] = nodes[len(init) % len(nodes)]["metadata"]["name"]
                out.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": s})
    return namespaces, nodes, objects, init, measure


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("workload", nargs="?")
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--list", action="store_true", help="print the workloads and their sizes")
    ap.add_argument("--init", type=int, help="init pods instead of the workload's")
    ap.add_argument("--measure", type=int, help="measured pods instead of the workload's")
    ap.add_argument("--nodes", type=int, help="nodes instead of the workload's (initNodes)")
    a = ap.parse_args()
    if a.list:
        for k, w in WORKLOADS.items():
            print("%-36s %-20s %s" % (k, w["size"], " ".join("%s=%d" % kv for kv in w["params"].items())))
        return 0
    if a.workload in ("AffinityCurve", "SpreadCurve") and a.outdir:
        parts = curve(a.nodes or 5000, 8000 if a.init is None else a.init,
                      2000 if a.measure is None else a.measure, a.workload == "SpreadCurve")
        write(a.outdir, parts)
        return 0
    if a.workload not in WORKLOADS or not a.outdir:
        ap.error("want WORKLOAD OUTDIR; workloads: " + ", ".join(WORKLOADS))
    params = dict(WORKLOADS[a.workload]["params"])
    for flag, key in ((a.init, "initPods"), (a.measure, "measurePods"), (a.nodes, "initNodes")):
        if flag is not None:
            if key not in params:
                ap.error("%s has no %s" % (a.workload, key))
            params[key] = flag
    write(a.outdir, generate(a.workload, params))
    return 0


def write(outdir, parts):
    os.makedirs(outdir, exist_ok=True)
    for f in os.listdir(outdir):
        if f.endswith(".json"):
            os.unlink(os.path.join(outdir, f))
    for fname, items in zip(("0-namespaces.json", "1-nodes.json", "2-objects.json", "3-init.json",
                             "4-measure.json"), parts):
        if items:
            with open(os.path.join(outdir, fname), "w") as f:
                json.dump(lst(items), f)


if __name__ == "__main__":
    sys.exit(main())
