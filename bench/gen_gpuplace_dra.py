#!/usr/bin/env python3
"""Write a GPU cluster whose GPUs are DRA devices, for `--profile gpu` (GPUPlacement over
DRA GPUs) against the default profile (deterministic, no randomness):

  cluster.json  one List: N nodes (cpu 32, memory 128Gi, pods 110, no nvidia.com/gpu), a
                ResourceSlice of G devices per node (driver gpu.nvidia.com), the DeviceClass
                gpu.nvidia.com serving nvidia.com/gpu (extendedResourceName), P pending pods
                (cpu 500m, memory 1Gi; every other one with nvidia.com/gpu: 1)

  python3 bench/gen_gpuplace_dra.py [--nodes 500] [--gpus 8] [--pods 2000] OUTDIR
"""
import argparse
import json
import os


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--pods", type=int, default=2000)
    ap.add_argument("outdir")
    a = ap.parse_args()
    items = []
    for i in range(a.nodes):
        n = "n%d" % i
        items.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
                      "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}}})
        items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                      "metadata": {"name": n + "-gpu"},
                      "spec": {"driver": "gpu.nvidia.com", "nodeName": n,
                               "pool": {"name": n, "generation": 1, "resourceSliceCount": 1},
                               "devices": [{"name": "gpu-%d" % k} for k in range(a.gpus)]}})
    items.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                  "metadata": {"name": "gpu.nvidia.com"},
                  "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.nvidia.com"'}}],
                           "extendedResourceName": "nvidia.com/gpu"}})
    for j in range(a.pods):
        res = {"requests": {"cpu": "500m", "memory": "1Gi"}}
        if j % 2 == 0:
            res["limits"] = {"nvidia.com/gpu": 1}
        items.append({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": "p%d" % j, "namespace": "default"},
                      "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                               "resources": res}]}})
    os.makedirs(a.outdir, exist_ok=True)
    with open(os.path.join(a.outdir, "cluster.json"), "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)


if __name__ == "__main__":
    main()
