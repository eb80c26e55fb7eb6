#!/usr/bin/env python3
"""Generate a synthetic cluster for the scheduling benchmark (deterministic for a seed).

Writes three JSON manifests (kind: List) into OUTDIR:
  nodes.json    N nodes: 3 control-plane nodes (control-plane taint), GPU nodes of mixed models
                with the aliyun.accelerator/* labels and nvidia.com/gpu allocatable (some tainted
                nvidia.com/gpu:NoSchedule), CPU nodes of several instance types, zones, a few
                cordoned nodes and PreferNoSchedule taints.
  bound.json    existing pods with spec.nodeName (about 2 per worker node), some with GPUs
                and host ports.
  pending.json  P pending pods: web pods with preferred zone affinity, GPU pods with a model
                nodeSelector and limits-only nvidia.com/gpu, pods kept off GPU nodes with
                DoesNotExist, instance-type In / zone NotIn pods, host-port pods, sidecars,
                and a spread of priorities (preemption happens once the cluster fills).

  python3 bench/gen_cluster.py --nodes 5000 --pods 10000 --seed 1 [--gpu-fraction 0.4] OUTDIR
"""
import argparse
import json
import os
import random

GPU_MODELS = [
    # (nvidia_name label, nvidia_mem label)
    ("Tesla-M40", "12209MiB"),
    ("Tesla-P100-PCIE-16GB", "16280MiB"),
    ("Tesla-V100-SXM2-32GB", "32510MiB"),
    ("Tesla-T4", "15109MiB"),
    ("NVIDIA-A100-SXM4-40GB", "40536MiB"),
]
ZONES = ["cn-hangzhou-a", "cn-hangzhou-b", "cn-hangzhou-c", "cn-hangzhou-d"]
CPU_TYPES = [
    # instance type, cpu cores, memory GiB
    ("ecs.g6.4xlarge", 16, 64),
    ("ecs.g6.8xlarge", 32, 128),
    ("ecs.c6.8xlarge", 32, 64),
    ("ecs.r6.8xlarge", 32, 256),
    ("ecs.g7.16xlarge", 64, 256),
]
GPU_TYPES = [("ecs.gn6i-c16g1.4xlarge", 16, 62), ("ecs.gn6v-c8g1.16xlarge", 64, 256)]


def node(name, labels, cpu, mem_gi, gpus=0, taints=None, unschedulable=False):
    alloc = {"cpu": str(cpu), "memory": "%dGi" % mem_gi, "pods": "110",
             "ephemeral-storage": "200Gi"}
    if gpus:
        alloc["nvidia.com/gpu"] = str(gpus)
    spec = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "spec": spec,
            "status": {"capacity": dict(alloc), "allocatable": alloc}}


def gen_nodes(rng, n, gpu_fraction):
    nodes, gpu_nodes = [], []
    for i in range(min(3, n)):
        name = "master-%d" % i
        nodes.append(node(name, {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                 "node-role.kubernetes.io/control-plane": "",
                                 "topology.kubernetes.io/zone": ZONES[i % len(ZONES)]},
                          8, 32, taints=[{"key": "node-role.kubernetes.io/control-plane",
                                          "effect": "NoSchedule"}]))
    for i in range(n - len(nodes)):
        name = "node-%05d" % i
        zone = rng.choice(ZONES)
        labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                  "kubernetes.io/arch": "amd64", "topology.kubernetes.io/zone": zone}
        taints = []
        if rng.random() < gpu_fraction:
            model, mem = rng.choice(GPU_MODELS)
            count = rng.choice([1, 2, 4, 8])
            itype, cpu, mem_gi = rng.choice(GPU_TYPES)
            labels.update({"aliyun.accelerator/nvidia_count": str(count),
                           "aliyun.accelerator/nvidia_mem": mem,
                           "aliyun.accelerator/nvidia_name": model,
                           "node.kubernetes.io/instance-type": itype,
                           "workload-pool": "gpu"})
            if rng.random() < 0.3:
                taints.append({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
            gpus = count
            gpu_nodes.append(name)
        else:
            itype, cpu, mem_gi = rng.choice(CPU_TYPES)
            labels.update({"node.kubernetes.io/instance-type": itype,
                           "workload-pool": rng.choice(["general", "general", "batch"])})
            gpus = 0
        if rng.random() < 0.05:
            taints.append({"key": "spot", "value": "true", "effect": "PreferNoSchedule"})
        nodes.append(node(name, labels, cpu, mem_gi, gpus, taints, rng.random() < 0.01))
    return nodes, gpu_nodes


def container(name, requests=None, limits=None, ports=None):
    c = {"name": name, "image": "registry.example.com/%s:1" % name}
    res = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    if res:
        c["resources"] = res
    if ports:
        c["ports"] = ports
    return c


def pod(name, ns, spec, labels=None):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels or {"app": name}},
            "spec": spec}


def gen_bound(rng, nodes, gpu_nodes):
    pods = []
    gpu_set = set(gpu_nodes)
    for nd in nodes:
        name = nd["metadata"]["name"]
        if name.startswith("master-"):
            continue
        for k in range(rng.choice([0, 1, 2, 2, 3, 4])):
            req = {"cpu": "%dm" % rng.choice([250, 500, 1000, 2000]),
                   "memory": "%dMi" % rng.choice([256, 512, 1024, 4096])}
            lim = None
            if name in gpu_set and rng.random() < 0.5:
                lim = {"nvidia.com/gpu": "1"}
            ports = [{"containerPort": 9100, "hostPort": 9100}] if k == 0 and rng.random() < 0.2 else None
            spec = {"nodeName": name, "priority": rng.choice([0, 0, 0, -10, 100]),
                    "containers": [container("running", req, lim, ports)]}
            pods.append(pod("run-%s-%d" % (name, k), "prod", spec))
    return pods


def gen_pending(rng, n):
    pods = []
    for i in range(n):
        r = rng.random()
        prio = rng.choice([0] * 6 + [-10, 100, 1000])
        spec = {"priority": prio, "containers": []}
        if r < 0.40:  # web
            spec["containers"].append(container("web", {"cpu": "%dm" % rng.choice([100, 250, 500, 1000]),
                                                        "memory": "%dMi" % rng.choice([128, 256, 512, 2048])}))
            spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": rng.randint(1, 100), "preference": {"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In",
                     "values": [rng.choice(ZONES)]}]}}]}}
            if rng.random() < 0.3:  # a sidecar
                spec["initContainers"] = [dict(container("proxy", {"cpu": "50m", "memory": "64Mi"}),
                                               restartPolicy="Always")]
        elif r < 0.65:  # GPU
            model, _ = rng.choice(GPU_MODELS)
            spec["containers"].append(container("train", {"cpu": "%d" % rng.choice([2, 4, 8]),
                                                          "memory": "%dGi" % rng.choice([8, 16, 32])},
                                                {"nvidia.com/gpu": str(rng.choice([1, 1, 1, 2, 4]))}))
            if rng.random() < 0.7:
                spec["nodeSelector"] = {"aliyun.accelerator/nvidia_name": model}
            spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
        elif r < 0.75:  # kept off GPU nodes (the seed's not-in-gpu-node)
            spec["containers"].append(container("api", {"cpu": "500m", "memory": "1Gi"}))
            spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "aliyun.accelerator/nvidia_name", "operator": "DoesNotExist"}]}]}}}
        elif r < 0.85:  # instance type and zone constraints
            types = rng.sample([t[0] for t in CPU_TYPES], 2)
            spec["containers"].append(container("db", {"cpu": "%d" % rng.choice([1, 2, 4]),
                                                       "memory": "%dGi" % rng.choice([4, 8, 16])}))
            spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": types},
                    {"key": "topology.kubernetes.io/zone", "operator": "NotIn",
                     "values": [rng.choice(ZONES)]}]}]}}}
        elif r < 0.90:  # host ports
            spec["containers"].append(container("ingress", {"cpu": "200m", "memory": "256Mi"},
                                                 ports=[{"containerPort": 8888,
                                                         "hostPort": rng.choice([80, 443, 8888])}]))
        else:  # batch, limits only, low priority
            spec["priority"] = -10
            spec["containers"].append(container("batch", None, {"cpu": "%d" % rng.choice([1, 2]),
                                                                "memory": "2Gi"}))
            spec["nodeSelector"] = {"workload-pool": rng.choice(["batch", "general"])}
        pods.append(pod("pending-%05d" % i, rng.choice(["default", "ml", "web"]), spec))
    return pods


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gpu-fraction", type=float, default=0.4,
                    help="share of worker nodes with GPUs (0.05 makes GPUs scarce: preemption)")
    ap.add_argument("outdir")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    nodes, gpu_nodes = gen_nodes(rng, a.nodes, a.gpu_fraction)
    bound = gen_bound(rng, nodes, gpu_nodes)
    pending = gen_pending(rng, a.pods)
    os.makedirs(a.outdir, exist_ok=True)
    for fname, items in (("nodes.json", nodes), ("bound.json", bound), ("pending.json", pending)):
        with open(os.path.join(a.outdir, fname), "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f, separators=(",", ":"))
            f.write("\n")


if __name__ == "__main__":
    main()
