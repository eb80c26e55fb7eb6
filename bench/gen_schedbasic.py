#!/usr/bin/env python3
"""Write scheduler_perf's SchedulingBasic shape as manifests (deterministic, no randomness).

kube-scheduler's own benchmark (test/integration/scheduler_perf, SchedulingBasic
5000Nodes_10000Pods) uses its node-default and pod-default templates; the same shape here:

  1-nodes.json    N nodes with allocatable (= capacity) cpu 4, memory 32Gi, pods 110
  2-bound.json    B pods already bound (spec.nodeName), spread over the nodes round-robin
  3-pending.json  P pending pods

every pod one container requesting (and limited to) cpu 100m, memory 500Mi, with container
port 80 (no host port), priority 0, as the pod-default template.

  python3 bench/gen_schedbasic.py [--nodes 5000] [--bound 1000] [--pods 10000] OUTDIR
"""
import argparse
import json
import os


def pod(name, node=None):
    spec = {"containers": [{
        "name": "pause", "image": "registry.k8s.io/pause:3.10",
        "ports": [{"containerPort": 80}],
        "resources": {"requests": {"cpu": "100m", "memory": "500Mi"},
                      "limits": {"cpu": "100m", "memory": "500Mi"}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--bound", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("outdir")
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    res = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    nodes = [{"apiVersion": "v1", "kind": "Node",
              "metadata": {"name": "scheduler-perf-%05d" % i,
                           "labels": {"kubernetes.io/hostname": "scheduler-perf-%05d" % i}},
              "status": {"capacity": dict(res), "allocatable": dict(res),
                         "conditions": [{"type": "Ready", "status": "True"}]}}
             for i in range(a.nodes)]
    bound = [pod("init-pod-%05d" % i, nodes[i % a.nodes]["metadata"]["name"])
             for i in range(a.bound)]
    pending = [pod("pod-%05d" % i) for i in range(a.pods)]
    for name, items in (("1-nodes.json", nodes), ("2-bound.json", bound), ("3-pending.json", pending)):
        with open(os.path.join(a.outdir, name), "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)


if __name__ == "__main__":
    main()
