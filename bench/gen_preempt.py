#!/usr/bin/env python3
"""Generate a full cluster where every pending pod has to preempt (deterministic for a seed).

The preemption benchmark's input (bench/preempt_bench.sh, docs/benchmarks-sched.md). Writes
four JSON manifests (kind: List) into OUTDIR:
  nodes.json    N worker nodes of 16 CPU / 64 Gi / 110 pods (--node-cpu) in four zones; a fifth of them
                with 4 nvidia.com/gpu (the aliyun.accelerator/* labels, half of those tainted
                nvidia.com/gpu=present:NoSchedule).
  bound.json    low-priority pods with spec.nodeName filling every node's CPU exactly (2 or 4
                CPU each; on GPU nodes some hold a GPU, and every GPU is taken), of
                priorities -10, 0 and 100 in namespaces "batch" and "prod", so the dry run
                has victims to choose and reprieve.
  pdbs.json     PodDisruptionBudgets over a share of the "prod" pods (app=critical), some
                with no disruption allowed, so PDB violations rank candidates.
  pending.json  P pods of priority 1000 (namespace "urgent"), each asking for 3, 5 or 7 CPU
                (odd, so what an eviction leaves over never fits the next one), a tenth of
                them also for a GPU (with a toleration of the GPU taint), a fifth with a zone
                nodeSelector: none fits anywhere without evicting, so every one goes through
                DefaultPreemption, is nominated, evicts its victims and is placed on the retry.

  python3 bench/gen_preempt.py --nodes 5000 --pods 2000 --seed 1 OUTDIR
"""
import argparse
import json
import os
import random

ZONES = ["zone-a", "zone-b", "zone-c", "zone-d"]


def node(name, zone, gpus, taint, cpu):
    alloc = {"cpu": str(cpu), "memory": "%dGi" % (cpu * 4), "pods": "110",
             "ephemeral-storage": "200Gi"}
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
              "topology.kubernetes.io/zone": zone}
    spec = {}
    if gpus:
        alloc["nvidia.com/gpu"] = str(gpus)
        labels.update({"aliyun.accelerator/nvidia_count": str(gpus),
                       "aliyun.accelerator/nvidia_mem": "15109MiB",
                       "aliyun.accelerator/nvidia_name": "Tesla-T4"})
        if taint:
            spec["taints"] = [{"key": "nvidia.com/gpu", "value": "present",
                               "effect": "NoSchedule"}]
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "spec": spec, "status": {"capacity": dict(alloc), "allocatable": alloc}}


def pod(name, ns, labels, spec):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels}, "spec": spec}


def container(cpu, gpus=0):
    c = {"name": "c", "image": "registry.example.com/app:1",
         "resources": {"requests": {"cpu": str(cpu), "memory": "%dGi" % (cpu * 2)}}}
    if gpus:
        c["resources"]["limits"] = {"nvidia.com/gpu": str(gpus)}
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--node-cpu", type=int, default=16,
                    help="CPUs per node (16: about 6 pods each; 64: about 22)")
    ap.add_argument("outdir")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    nodes, bound, pdbs, pending = [], [], [], []
    for i in range(a.nodes):
        name = "node-%05d" % i
        gpus = 4 if rng.random() < 0.2 else 0
        nodes.append(node(name, rng.choice(ZONES), gpus, gpus and rng.random() < 0.5, a.node_cpu))
        free, gpus_free, k = a.node_cpu, gpus, 0
        while free:
            cpu = min(free, rng.choice([2, 2, 4]))
            g = 1 if gpus_free and (rng.random() < 0.5 or free <= 4) else 0
            gpus_free -= g
            prio = rng.choice([-10, 0, 0, 0, 100])
            ns = "prod" if prio >= 0 else "batch"
            app = "critical" if ns == "prod" and rng.random() < 0.1 else "app-%d" % rng.randrange(20)
            spec = {"nodeName": name, "priority": prio, "containers": [container(cpu, g)]}
            bound.append(pod("run-%05d-%d" % (i, k), ns, {"app": app}, spec))
            free -= cpu
            k += 1
        # the GPUs still free go to the node's last pod: every GPU is taken too
        if gpus_free:
            lim = bound[-1]["spec"]["containers"][0]["resources"].setdefault("limits", {})
            lim["nvidia.com/gpu"] = str(int(lim.get("nvidia.com/gpu", "0")) + gpus_free)
    for k in range(4):
        pdbs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                     "metadata": {"name": "critical-%d" % k, "namespace": "prod"},
                     "spec": {"minAvailable": 1,
                              "selector": {"matchLabels": {"app": "critical"}}},
                     "status": {"disruptionsAllowed": [0, 0, 2, 5][k], "currentHealthy": 10,
                                "desiredHealthy": 1, "expectedPods": 10}})
    for i in range(a.pods):
        cpu = rng.choice([3, 3, 5, 7])
        g = 1 if rng.random() < 0.1 else 0
        spec = {"priority": 1000, "containers": [container(cpu, g)]}
        if g:
            spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists",
                                    "effect": "NoSchedule"}]
        if rng.random() < 0.2:
            spec["nodeSelector"] = {"topology.kubernetes.io/zone": rng.choice(ZONES)}
        pending.append(pod("urgent-%05d" % i, "urgent", {"app": "urgent"}, spec))
    os.makedirs(a.outdir, exist_ok=True)
    for fname, items in (("nodes.json", nodes), ("bound.json", bound), ("pdbs.json", pdbs),
                         ("pending.json", pending)):
        with open(os.path.join(a.outdir, fname), "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f,
                      separators=(",", ":"))
            f.write("\n")


if __name__ == "__main__":
    main()
